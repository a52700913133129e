/*
 * names.h - names and numbers as people write them.
 *
 * Pure functions: parse sizes with binary suffixes, counts and seconds;
 * map names of data types, reduction operators, operations and the other
 * enumerations of a plan to their values (with a "did you mean" hint).
 */
#ifndef SD_NAMES_H
#define SD_NAMES_H

#include <stddef.h>
#include <stdint.h>
#include "shakedown/backend.h"

/*
 * Parse a size: digits with an optional K, M, G or T suffix (binary, any
 * case, optional trailing B: "1K", "256M", "4GiB" is not accepted).
 * Returns 0 and *out, or -1 for anything else (empty, sign, overflow, junk).
 */
int sd_parse_size(const char *s, uint64_t *out);

/* Parse a number above 0 and at most max ("0.5", "8.0e9"); with
 * `decimal_suffix` also K, M, B (or G) and T as powers of 1000 ("8B",
 * "124M", "512K").  Returns 0 and *out, or -1. */
int sd_parse_amount(const char *s, double max, int decimal_suffix,
		    double *out);

/* Parse a positive integer in [min, max]; returns 0 or -1. */
int sd_parse_int(const char *s, long min, long max, long *out);

/* Parse seconds with an optional fraction ("30", "0.5"); returns 0 or -1. */
int sd_parse_seconds(const char *s, double *out);

/* Parse a positive number of seconds with an optional fraction ("30",
 * "0.5", at most 1000000) into milliseconds: the one place where the
 * seconds people write become the milliseconds the core counts in.
 * Returns 0 or -1. */
int sd_parse_duration_ms(const char *s, int *ms);

/*
 * A table of names: rows of { name, value }, ended by { NULL, 0 }.  The
 * first row of a value is its canonical name; later rows with the same
 * value are aliases.  Every enumeration a user spells (types, reductions,
 * operations, output formats, fault kinds, ...) is parsed through one.
 */
struct sd_name_row {
	const char *name;
	int value;
};

/* Find `name` exactly: 0 and *out, or -1 (then *hint, when not NULL, is the
 * canonical spelling of the closest name, or NULL when none is close). */
int sd_name_lookup(const struct sd_name_row *rows, const char *name, int *out,
		   const char **hint);

/* The canonical name of `value`, or "?". */
const char *sd_name_of(const struct sd_name_row *rows, int value);

/* Join the canonical names of the values 0..count-1 whose bit is set in
 * mask, separated by sep; 0, or -1 when buf is too small (then it holds
 * what fitted). */
int sd_name_join(const struct sd_name_row *rows, uint32_t mask, int count,
		 const char *sep, char *buf, size_t len);

/* The tables of data types, reductions and operations (canonical names
 * first, in enum order). */
extern const struct sd_name_row sd_dtype_names[];
extern const struct sd_name_row sd_redop_names[];
extern const struct sd_name_row sd_op_names[];

/* Names.  *_from_name return 0 and set *out, or -1 (then *hint, when not
 * NULL, points to the closest valid name or NULL). */
const char *sd_dtype_name(enum sd_dtype t);
/* The name nccl-tests' table gives the type ("float", "half", ...). */
const char *sd_dtype_nccl_name(enum sd_dtype t);
int sd_dtype_from_name(const char *name, enum sd_dtype *out, const char **hint);
const char *sd_redop_name(enum sd_redop r);
int sd_redop_from_name(const char *name, enum sd_redop *out, const char **hint);
const char *sd_op_name(enum sd_op op);
int sd_op_from_name(const char *name, enum sd_op *out, const char **hint);

/* How per-rank times are combined into one (nccl-tests -a). */
enum sd_combine { SD_COMBINE_RANK0 = 0, SD_COMBINE_AVG, SD_COMBINE_MIN,
		  SD_COMBINE_MAX };
int sd_combine_from_name(const char *name, enum sd_combine *out);

#endif
