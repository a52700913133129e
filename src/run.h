/*
 * run.h - what the parts of `shakedown run` share: the run's context (its
 * options, the rank's bootstrap, backend, control plane and writers, and
 * what the phases of rank_main hand on), and the run's record
 * (run_record.c: the writers and the first record; the end, the drain and
 * the upload).  cmd_run.c is the command and the rank's lifecycle.
 */
#ifndef SD_RUN_H
#define SD_RUN_H

#include <signal.h>
#include <stddef.h>

#include "bootstrap.h"
#include "ctrl.h"
#include "fault.h"
#include "job.h"
#include "options.h"
#include "plan.h"
#include "plugin.h"
#include "runner.h"
#include "sink.h"
#include "verdict.h"
#include "db/baseline.h"

struct run_ctx {
	struct sd_run_options opt;
	struct sd_fault fault;
	char cmdline[4096];
	/* set up by rank_main */
	struct sd_bootstrap_impl *boot;
	struct sd_plugin plugin;
	struct sd_comm *comm;
	struct sd_ctrl *ctrl;
	struct sd_sinks sinks;
	struct sd_progress *progress; /* rank 0: the progress line, or NULL */
	int db_sink;		  /* index of the database in sinks, or -1 */
	int json_sink;		  /* index of -J's writer in sinks, or -1 */
	volatile int json_said;	  /* say_json spoke */
	struct sd_runner *runner; /* while the plan runs */
	/* the control plane's verdict (abort_exit), the cancellation
	 * watchdog, the writers being closed, scontrol running (job.h) */
	struct sd_job_guard guard;
	/* what rank_main's phases share */
	struct sd_plan plan;
	struct sd_runner run;
	struct sd_rank_info *ranks; /* every rank, in rank order */
	struct sd_host_env *hosts;  /* rank 0: each host's environment */
	int nhost_env;
	int *host_of;		 /* each rank's host index */
	const char **host_names; /* by host index */
	int nh;			 /* hosts */
	char uuid[37];
	struct sd_blame *blame;	     /* rank 0 */
	struct sd_baseline baseline; /* rank 0, --baseline */
	char *envs, *envjson;
	size_t *lens, *offs;
	int finished; /* finish_run ran */
	int agreed;   /* every rank said it was done */
	/* the kernel's OOM killer: the test rank 0 runs (index + 1), and a
	 * verdict that named an OOM kill (oom_words) */
	volatile size_t test_now;
	int oom_checked, oom_killed;
	char oom_msg[1200];
};

/* Rank 0: record the end of a run the main thread does not finish (a
 * verdict, or a cancellation past its grace), from another thread. */
void sd_run_record_end(struct run_ctx *c, int exit_status, const char *msg);

/* How long one scontrol call of --drain may take: the plan's timeout, 1
 * to 10 s (the other ranks wait about twice the timeout for rank 0). */
int sd_run_drain_limit_s(const struct sd_plan *p);

/* The writers (rank 0: the table, the database, -J, the baseline), every
 * rank agreeing, then the run's first record.  0, or the exit status. */
int sd_run_begin_record(struct run_ctx *c);

/* How the run ended, told once: rank 0 says it, records its end (or says
 * what could not be recorded: exit status 7), drains the bad nodes with
 * --drain; every rank takes rank 0's word; rank 0 uploads the report with
 * --upload.  Returns the exit status. */
int sd_run_finish(struct run_ctx *c, int status);

#endif
