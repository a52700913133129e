/*
 * options.h - the options of `shakedown run` after parsing.
 */
#ifndef SD_OPTIONS_H
#define SD_OPTIONS_H

#include <stddef.h>
#include <stdint.h>
#include "shakedown/backend.h"
#include "names.h"

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
