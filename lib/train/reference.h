/*
 * reference.h - reference loss curves: what a healthy run of one
 * workload's configuration looks like, step by step, to judge later runs
 * against (sd_train_compare() in metrics.h).
 *
 * A reference has a name, a description, the config string of the
 * workload it belongs to (a comparison refuses a run of another config),
 * where it came from (runs, logs, a file) and per step the mean loss
 * over the curves it was made from, their spread (the sample standard
 * deviation; 0 for one curve) and how many there were.  It is made from
 * one or more curves, stored in the results database (lib/db/train_db.h)
 * and exported and imported as a portable text file:
 *
 *   # shakedown-reference 1
 *   # name: gpt-small-cpu
 *   # config: gpt2 layers=2 width=64 ...
 *   # description: 3 runs on node01
 *   # source: runs 0bdc7ee1-..., 5f3a...
 *   # created_at: 2026-01-31T12:00:00.000Z
 *   step	mean	spread	n
 *   1	5.5451774444795623	0	3
 *
 * Header values are one line: a backslash, newline, carriage return or
 * tab in them is written \\, \n, \r, \t.  Unknown header keys are
 * ignored (later versions may add some); the column line ends the
 * header; data lines are step, mean, spread and n separated by tabs (or
 * blanks), steps increasing, numbers written to 17 significant digits so
 * that a round trip is exact.  Functions return an sd_status and fill
 * err; parse errors name FILE:LINE.
 */
#ifndef SD_TRAIN_REFERENCE_H
#define SD_TRAIN_REFERENCE_H

#include <stddef.h>

#include "train/metrics.h"

/* The longest reference name, without its NUL. */
#define SD_TRAIN_REF_NAME_MAX 63
/* The format version this shakedown writes and reads. */
#define SD_TRAIN_REF_FORMAT 1

/* One step of a reference. */
struct sd_train_ref_step {
	long step;
	double mean;   /* mean loss over the curves */
	double spread; /* their sample standard deviation; 0 for one */
	int n;         /* how many curves */
};

/* A reference; strings and steps owned (sd_train_ref_free()). */
struct sd_train_reference {
	char name[SD_TRAIN_REF_NAME_MAX + 1];
	char *description; /* NULL: none */
	char *config;      /* never NULL in a valid reference */
	char *source;      /* "runs UUID, ...", "logs FILE, ...", "file F" */
	char created_at[32]; /* ISO 8601 UTC, or "" */
	double healthy;    /* the largest |loss - mean| of any step of the
			      healthy runs measured against it (header
			      "healthy:", bench/train_calibrate.sh); 0: not
			      measured */
	size_t n;
	struct sd_train_ref_step *steps; /* n, steps increasing */
};

/* One curve to make a reference from. */
struct sd_train_curve {
	const char *label;                 /* "run 0bdc7ee1", "golden.log" */
	const struct sd_train_step *steps; /* rows with SD_STEP_LOSS count */
	size_t n;
};

/*
 * Whether `name` may name a reference: 1 to SD_TRAIN_REF_NAME_MAX
 * characters, letters, digits, '.', '_' and '-', starting with a letter
 * or digit.  SD_OK, or SD_ERR_INVALID with err.
 */
int sd_train_ref_check_name(const char *name, char *err, size_t errlen);

/*
 * Make a reference from ncurves >= 1 curves of the same config: per step
 * present (with a loss) in every curve, the mean, the sample standard
 * deviation and n = ncurves.  Steps in only some curves are left out and
 * `note` (may be NULL) says how many ("" when the curves agree).
 * `description` and `source` may be NULL; created_at is now.  Returns
 * SD_OK and *out (free with sd_train_ref_free(), also after a failure),
 * SD_ERR_INVALID (bad name, empty config, no curve, steps out of order,
 * a NaN or infinite loss at a step used, no step in all curves: err
 * names the curve and the step) or SD_ERR_NOMEM.
 */
int sd_train_ref_create(const char *name, const char *description,
			const char *config, const char *source,
			const struct sd_train_curve *curves, size_t ncurves,
			struct sd_train_reference *out, char *note,
			size_t notelen, char *err, size_t errlen);

/*
 * How a reference's config stands to a run's.  A config is words
 * separated by spaces ("gpt2 layers=2 ... seed=1 arith=fp32-cpu"): seed=
 * is the seed of the weights and data, arith= the arithmetic (fp32-cpu,
 * bf16-gpu); every other word is the workload.
 *   SD_REF_SAME_ARITH   the same workload, seed and arithmetic: the curve
 *                       is reproduced to rounding, and judged tightly
 *   SD_REF_OTHER_ARITH  the same workload and seed, another arithmetic
 *                       (or a reference that does not say its seed or
 *                       arithmetic): judged within the band measured
 *                       between the two
 *   SD_REF_OTHER_SEED   the same workload, another seed: another curve,
 *                       not to be judged by this one
 *   SD_REF_OTHER_WORKLOAD  another model, batch, data or optimizer
 * why (may be NULL) says the difference in words ("seed 2, the
 * reference's 1").
 */
enum sd_train_ref_match {
	SD_REF_SAME_ARITH,
	SD_REF_OTHER_ARITH,
	SD_REF_OTHER_SEED,
	SD_REF_OTHER_WORKLOAD,
};
enum sd_train_ref_match sd_train_ref_identity(const char *ref_config,
					      const char *run_config,
					      char *why, size_t whylen);

/* The reference's step `step`, or NULL (binary search). */
const struct sd_train_ref_step *
sd_train_ref_find(const struct sd_train_reference *r, long step);

/*
 * The reference as the text of its file.  SD_OK and *text (malloc'd,
 * NUL-terminated; the caller frees), or SD_ERR_INVALID (no name or
 * config) or SD_ERR_NOMEM.
 */
int sd_train_ref_format(const struct sd_train_reference *r, char **text,
			char *err, size_t errlen);

/*
 * Parse the text of a reference file (len bytes; `path` names it in
 * messages).  SD_OK and *out (free with sd_train_ref_free(), also after a
 * failure), or SD_ERR_INVALID with err "PATH:LINE: what is wrong" (not a
 * reference file, a newer format, a bad escape, a missing name or
 * config, a line without 4 fields, a number that does not parse, steps
 * out of order, no steps), or SD_ERR_NOMEM.
 */
int sd_train_ref_parse(const char *text, size_t len, const char *path,
		       struct sd_train_reference *out, char *err,
		       size_t errlen);

/* Write the reference to `path` (through PATH.tmp, renamed when whole).
 * SD_OK, or SD_ERR_IO / SD_ERR_INVALID with err naming the file. */
int sd_train_ref_save(const struct sd_train_reference *r, const char *path,
		      char *err, size_t errlen);

/* Read and parse the file at `path`: as sd_train_ref_parse(), and
 * SD_ERR_IO when it cannot be read.  The source becomes "file PATH"
 * when the file has none. */
int sd_train_ref_load(const char *path, struct sd_train_reference *out,
		      char *err, size_t errlen);

/* Free what *r owns and zero it (NULL is fine). */
void sd_train_ref_free(struct sd_train_reference *r);

#endif
