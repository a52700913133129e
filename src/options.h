/*
 * options.h - names, sizes and the options of `shakedown run`.
 *
 * Pure functions: parse sizes with binary suffixes, map names of data
 * types, reduction operators and operations to their enums (with a
 * "did you mean" hint), and hold the run options after parsing.
 */
#ifndef SD_OPTIONS_H
#define SD_OPTIONS_H

#include <stddef.h>
#include <stdint.h>
#include "shakedown/backend.h"

/*
 * Parse a size: digits with an optional K, M, G or T suffix (binary, any
 * case, optional trailing B: "1K", "256M", "4GiB" is not accepted).
 * Returns 0 and *out, or -1 for anything else (empty, sign, overflow, junk).
 */
int sd_parse_size(const char *s, uint64_t *out);

/* Parse a positive integer in [min, max]; returns 0 or -1. */
int sd_parse_int(const char *s, long min, long max, long *out);

/* Parse seconds with an optional fraction ("30", "0.5"); returns 0 or -1. */
int sd_parse_seconds(const char *s, double *out);

/* Names.  *_from_name return 0 and set *out, or -1 (then *hint, when not
 * NULL, points to the closest valid name or NULL). */
const char *sd_dtype_name(enum sd_dtype t);
int sd_dtype_from_name(const char *name, enum sd_dtype *out, const char **hint);
const char *sd_redop_name(enum sd_redop r);
int sd_redop_from_name(const char *name, enum sd_redop *out, const char **hint);
const char *sd_op_name(enum sd_op op);
int sd_op_from_name(const char *name, enum sd_op *out, const char **hint);

/* How per-rank times are combined into one (nccl-tests -a). */
enum sd_combine { SD_COMBINE_RANK0 = 0, SD_COMBINE_AVG, SD_COMBINE_MIN,
		  SD_COMBINE_MAX };
int sd_combine_from_name(const char *name, enum sd_combine *out);

enum sd_format { SD_FORMAT_TABLE = 0, SD_FORMAT_DEEPSPEED, SD_FORMAT_JSON };

/* What the command line of `shakedown run` asked for.  Test-shaping
 * values are applied on top of the plan by plan.c; `set_*` say which were
 * given explicitly. */
struct sd_run_options {
	int local_ranks;          /* --local N; 0: not a local launch */
	const char *backend;      /* --backend; default "gloo" */
	const char *plan_file;    /* --plan FILE; NULL: the built-in plan */
	const char *ops;          /* --op LIST (comma separated) */
	const char *dtypes;       /* -d LIST or "all" */
	const char *redops;       /* -o LIST or "all" */
	const char *roots;        /* -r N or "all" */
	const char *algo;         /* --algo NAME; NULL or "auto" */
	uint64_t min_bytes, max_bytes, step_bytes;
	double step_factor;
	long iters, warmup;
	int set_min, set_max, set_step, set_factor, set_iters, set_warmup;
	long check_passes;        /* -c N; 0: no check */
	enum sd_combine combine;  /* -a */
	int per_iter;             /* --per-iter: percentiles */
	int in_place;             /* 1 both (default), 0 out-of-place only */
	double timeout_s;         /* --timeout */
	enum sd_format format;
	const char *iface;        /* --iface */
	const char *db;           /* --db PATH or "none" */
	const char *upload_url;   /* --upload URL */
	const char *token_file;   /* --token-file */
	const char *cacert;       /* --cacert */
	int progress;             /* 1 on a terminal, --no-progress: 0 */
};

/* Default values for every field. */
void sd_run_options_init(struct sd_run_options *o);

#endif
