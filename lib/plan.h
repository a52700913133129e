/*
 * plan.h - the test plan: which collectives, types, reductions, roots and
 * sizes to run.
 *
 * A plan is YAML (see shakedown(1), PLAN FILES): a `defaults` mapping and a
 * `tests` sequence.  The built-in default plan is compiled in.  Options of
 * the command line apply on top (`--op` replaces the tests; -b/-e/-f/-i/-n/
 * -w/-d/-o/-r/--algo override every test).  The result is expanded (lists
 * and `all` become one test each) and rendered back as canonical text, which
 * is what every rank hashes and what the database records.
 */
#ifndef SD_PLAN_H
#define SD_PLAN_H

#include <stddef.h>
#include <stdint.h>
#include "shakedown/backend.h"
#include "options.h"

/* Most sizes one test may measure (a plan asking for more is refused). */
#define SD_MAX_SIZES 100000

struct sd_test_spec {
	enum sd_op op;
	enum sd_dtype dtype;
	enum sd_redop redop;
	int root;               /* -1 for ops without a root */
	uint64_t min_bytes, max_bytes, step_bytes;
	double step_factor;
	long iters, warmup;
	char algo[32];          /* "auto" or a backend algorithm name */
	char env[512];          /* "NCCL_X=v NCCL_Y=w": run on a fresh
				   communicator made with these set; "" none */
};

struct sd_plan {
	char name[64];
	struct sd_test_spec *tests;
	size_t ntests;
	char *text;             /* canonical YAML of the expanded plan */
	char hash[17];          /* hex FNV-1a 64 of text */
};

/* The built-in plan, as YAML text. */
extern const char sd_default_plan[];

/*
 * Build the plan: parse `file` (or the built-in plan when NULL), apply the
 * options, expand for `nranks` ranks.  Returns SD_OK, or SD_ERR_INVALID with
 * "FILE:LINE: what is wrong; what to do" in err (exit status 2), or SD_ERR_IO
 * when the file cannot be read.  Free with sd_plan_free().
 */
int sd_plan_build(const char *file, const struct sd_run_options *o, int nranks,
		  struct sd_plan *out, char *err, size_t errlen);

void sd_plan_free(struct sd_plan *p);

#endif
