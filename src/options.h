/*
 * options.h - the options of `shakedown run` after parsing.
 */
#ifndef SD_OPTIONS_H
#define SD_OPTIONS_H

#include <stddef.h>
#include <stdint.h>
#include "shakedown/backend.h"
#include "names.h"
#include "plan.h"

enum sd_format { SD_FORMAT_TABLE = 0, SD_FORMAT_DEEPSPEED, SD_FORMAT_JSON };

/* What the command line of `shakedown run` asked for.  What shapes the
 * tests (sizes, types, check passes, timeout, scope, ...) is in `plan`:
 * the overrides sd_plan_build applies on top of the plan, with `plan.set`
 * saying which numbers were given; their defaults live in lib/plan.c. */
struct sd_run_options {
	int local_ranks;          /* --local N; 0: not a local launch */
	const char *backend;      /* --backend; default "gloo" */
	const char *plan_file;    /* --plan FILE; NULL: the built-in plan */
	struct sd_plan_overrides plan;
	enum sd_format format;
	int ds_raw;               /* --raw: DeepSpeed's bare bytes and us */
	const char *iface;        /* --iface */
	const char *db;           /* --db PATH or "none" */
	const char *json_file;    /* -J FILE: nccl-tests' JSON document */
	const char *upload_url;   /* --upload URL */
	const char *token_file;   /* --token-file */
	const char *cacert;       /* --cacert */
	int progress;             /* 1 on a terminal, --no-progress: 0 */
	const char *baseline;     /* --baseline NAME: judge against it */
	int drain;                /* --drain: drain the bad nodes */
};

/* Default values for every field. */
void sd_run_options_init(struct sd_run_options *o);

#endif
