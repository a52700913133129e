/*
 * job.h - the one job lifecycle of the commands that start ranks (run,
 * gemm, train, topo): before any rank, the planted fault and the command
 * line for the record; the launch (--local forks the ranks, else this
 * process is the rank srun started); in each rank the backend opened over
 * the bootstrap, the ranks described and exchanged, the record's user,
 * and everything closed again.  The commands differ only in what their
 * ranks do between open and close.
 */
#ifndef SD_JOB_H
#define SD_JOB_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "bootstrap.h"
#include "ctrl.h"
#include "fault.h"
#include "plugin.h"
#include "sink.h"

/* SHAKEDOWN_FAULT parsed into f, its exit fault ending the process at
 * once (sd_job_fault_exit); 0, or SD_EXIT_USAGE with the error said once
 * per job. */
int sd_job_fault(struct sd_fault *f);

/* A planted `exit` fault: flush and end the process with code. */
void sd_job_fault_exit(int code);

/*
 * A rank's start: on_signal handles SIGTERM and SIGINT (restarting
 * interrupted calls), the bootstrap opens (its failure said,
 * SD_EXIT_ENV), and start_fault acts if it is a start-up fault (at=start)
 * of this rank (a command that has none passes NULL; sd_job_fault() gave
 * the fault its exit).  0, or the exit status (nothing to tear down).
 */
int sd_job_rank_open(struct sd_bootstrap_impl **boot, void (*on_signal)(int),
		     struct sd_fault *start_fault);

/* The sinks' warning writer: "shakedown: warning: MSG" on stderr. */
void sd_job_warn(void *arg, const char *msg);

/* Who runs the job, for the record: $USER, else the password entry's
 * name, else "". */
const char *sd_job_user(void);

/*
 * Start command CMD's ranks: with local_ranks > 0, after refusing --local
 * under srun and a Gloo mesh this host has too few ports for, fork them
 * with the local launcher (round_ms: its rendezvous bound) and return its
 * exit status; else run rank_main(arg) in this process (srun started it).
 * Either way the soft open-file limit is raised to the hard one first (a
 * socket per peer).  Returns the exit status.
 */
int sd_job_launch(const char *cmd, int local_ranks, const char *backend,
		  int round_ms, int (*rank_main)(void *), void *arg);

/* Whether n ranks of the Gloo backend on this host would run out of
 * local TCP ports (its full mesh); 1 with err naming the limit. */
int sd_local_ports_short(int n, char *err, size_t errlen);

/* What a command checks of the loaded backend before it is initialised
 * (run: that it can run every test of the plan); SD_OK, or a status with
 * err. */
typedef int (*sd_job_check_fn)(const struct sd_backend_ops *ops, void *arg,
			       char *err, size_t errlen);

/*
 * Load backend `name`, check it (check, when not NULL), initialise it and
 * build the world communicator over boot (cfg: its timeout and
 * interface), every rank agreeing after each phase: what every command
 * that starts ranks does.  Each failure is said by the rank that has it (a
 * plugin that will not load or a failed check, once per host).  Returns 0
 * with *plugin loaded and *comm built, or the exit status every rank stops
 * with (then close with sd_job_close()).
 */
int sd_job_backend_open(struct sd_bootstrap_impl *boot, const char *name,
			const struct sd_comm_config *cfg, sd_job_check_fn check,
			void *check_arg, struct sd_plugin *plugin,
			struct sd_comm **comm);

/* This rank as the record knows it: rank, local rank, pid, host and the
 * backend's description of its device. */
void sd_job_describe(struct sd_bootstrap_impl *boot,
		     const struct sd_plugin *plugin, struct sd_comm *comm,
		     struct sd_rank_info *me);

/* Every rank's `me`, in rank order: an array of boot->bs.size (the
 * caller frees), or NULL when out of memory or the bootstrap failed
 * (said). */
struct sd_rank_info *sd_job_exchange(struct sd_bootstrap_impl *boot,
				     const struct sd_rank_info *me);

/* The run's first record as every command that starts ranks fills it:
 * info cleared, then its start (now), the command line, shakedown's
 * version, the backend's name and version, the user, the job and its
 * ranks (boot->bs.size of them).  The command adds its plan and kind. */
void sd_job_run_info(struct sd_run_info *info, const char *cmdline,
		     struct sd_bootstrap_impl *boot,
		     const struct sd_plugin *plugin,
		     const struct sd_rank_info *ranks);

/* The hosts of n ranks as a Slurm hostlist ("node[1-4]"), for a
 * header; malloc'd, NULL when out of memory. */
char *sd_job_hostlist(const struct sd_rank_info *ranks, int n);

/* Tear down what sd_bootstrap_open() and sd_job_backend_open() made;
 * each may be missing; the pointers are cleared.  A caller that leaves
 * the communicator and the plugin to the process's exit clears *comm and
 * plugin->ops first. */
void sd_job_close(struct sd_bootstrap_impl **boot, struct sd_plugin *plugin,
		  struct sd_comm **comm);

/*
 * The guard of a command's ranks (gemm, train): the control plane that
 * names a lost or hung rank within the step's bound, records its node as
 * a suspect and ends every rank with the verdict's status; and the
 * cancellation watchdog that ends a rank 2-3 s after SIGTERM or SIGINT
 * (scancel, a time limit, a launcher that died: its ranks get SIGTERM),
 * recorded as cancelled, a product or step in flight abandoned.
 */
struct sd_job_guard {
	/* set by the command before sd_job_guard_start() */
	struct sd_bootstrap_impl *boot;
	/* rank 0: the run's end into the record, with the nodes of the
	 * ranks the verdict named (n may be 0); called once, from the
	 * control plane's or the watchdog's thread */
	void (*record_end)(void *arg, int exit_status, const char *status,
			   const char *msg, const struct sd_suspect_info *sus,
			   size_t n);
	/* rank 0, or NULL: the verdict's words in the command's terms (run:
	 * a rank lost to the kernel's OOM killer), which may set another
	 * exit status and *blame = 0 when no node is at fault */
	const char *(*reword)(void *arg, int status, const char *msg,
			      int *exit_status, int *blame);
	/* stop the backend so that a rank stuck in it returns (or NULL) */
	void (*stop)(void *arg);
	void *arg;
	/* what a signal's grace cuts short, and what is kept, for the
	 * cancelled run's message (NULL: "what was in flight was
	 * abandoned", nothing said kept) */
	const char *cut_short, *kept;
	volatile int draining;   /* rank 0 drains nodes: the last resort waits */
	/* kept by the guard */
	struct sd_ctrl *ctrl;
	int abort_exit;          /* the verdict's exit status; 0: none */
	volatile int announced, ended, closing;
	uint32_t seq;            /* the control plane's next step */
	int entered_timeout, entered_budget; /* the bounds rank 0 knows */
};

/* SIGTERM and SIGINT of a guarded command (sd_job_rank_open's handler):
 * the watchdog is woken; sd_job_cancelled() says it since. */
void sd_job_on_signal(int sig);
int sd_job_cancelled(void);
/* The flag itself, for a runner that looks at it between measurements. */
volatile sig_atomic_t *sd_job_cancel_flag(void);

/* Start the cancellation watchdog (before the bootstrap opens). */
void sd_job_guard_watch(struct sd_job_guard *g);

/* The control plane over every rank (collective), timeout_ms its
 * start-up's bound, every rank agreeing.  0, or the exit status. */
int sd_job_guard_start(struct sd_job_guard *g, int timeout_ms);

/* A step of every rank entered: rank 0 names a rank that does not end
 * it within budget_ms (`what` says what it was doing), and a rank lost
 * meanwhile.  0, or the verdict's exit status (said and recorded by the
 * guard). */
int sd_job_guard_enter(struct sd_job_guard *g, int timeout_ms, int budget_ms,
		       const char *what);

/* The step ended: `len` bytes of this rank (rank 0 gets every rank's in
 * all, by rank) and its wish to stop; *stop: a rank wished it.  0, or
 * the verdict's exit status. */
int sd_job_guard_step(struct sd_job_guard *g, const void *mine, size_t len,
		      void *all, int want_stop, int *stop);

/* This rank's step failed (status, an sd_status, and msg: a collective
 * that timed out or lost a peer): rank 0 names the rank to blame at once
 * (the one that did not take part), instead of waiting out the step's
 * budget.  Returns the verdict's exit status. */
int sd_job_guard_fail(struct sd_job_guard *g, int status, const char *msg);

/* The end: rank 0 records (in record(arg), which returns the exit
 * status every rank then returns) while the others wait for its word,
 * as long as a record under a locked database may take; a rank lost
 * before is the verdict.  Returns the exit status. */
int sd_job_guard_finish(struct sd_job_guard *g, int timeout_ms,
			int (*record)(void *arg), void *arg);

/* Tear the control plane down (after finish or a verdict); a run that
 * stopped (status not 0) before rank 0 recorded its end is recorded so
 * (cancelled when a signal came).  Returns the exit status. */
int sd_job_guard_close(struct sd_job_guard *g, int status);

/* The command line for the record: "shakedown" and argv, an argument
 * with a blank or a quote in single quotes, the value of any --token*
 * option but --token-file's left out ("(redacted)"); cut to len. */
void sd_command_line(int argc, char **argv, char *buf, size_t len);

#endif
