/*
 * options.h - the options of `shakedown run`: what they hold after
 * parsing, and the parser.
 */
#ifndef SD_OPTIONS_H
#define SD_OPTIONS_H

#include <stddef.h>
#include <stdint.h>
#include "shakedown/backend.h"
#include "job_options.h"
#include "names.h"
#include "plan.h"

/* run's output formats; SD_FORMAT_SHORT is the table in 80 columns */
enum sd_format {
	SD_FORMAT_TABLE = 0,
	SD_FORMAT_DEEPSPEED,
	SD_FORMAT_JSON,
	SD_FORMAT_SHORT
};

/* What the command line of `shakedown run` asked for.  What shapes the
 * tests (sizes, types, check passes, timeout, scope, ...) is in `plan`:
 * the overrides sd_plan_build applies on top of the plan, with `plan.set`
 * saying which numbers were given; their defaults live in lib/plan.c. */
struct sd_run_options {
	struct sd_job_options job; /* --local --backend --iface --timeout
				      --db (the timeout goes into plan) */
	const char *plan_file;    /* --plan FILE; NULL: the built-in plan */
	struct sd_plan_overrides plan;
	enum sd_format format;
	int format_set;           /* --format was given */
	int ds_raw;               /* --raw: DeepSpeed's bare bytes and us */
	const char *json_file;    /* -J FILE: nccl-tests' JSON document */
	const char *upload_url;   /* --upload URL */
	const char *token_file;   /* --token-file */
	const char *cacert;       /* --cacert */
	int progress;             /* the live line on stderr: 1 on a
				     terminal, --progress: 1, --no-progress:
				     0 */
	const char *baseline;     /* --baseline NAME: judge against it */
	int drain;                /* --drain: drain the bad nodes */
};

/* Default values for every field. */
void sd_run_options_init(struct sd_run_options *o);

/* Parse the command line of `shakedown run` into o (after
 * sd_run_options_init()), each error said once per job.  Returns -1 to
 * go on, else the exit status (0 after --help). */
int sd_run_parse_options(int argc, char **argv, struct sd_run_options *o);

#endif
