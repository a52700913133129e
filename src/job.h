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

#include <stddef.h>

#include "bootstrap.h"
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

/* The command line for the record: "shakedown" and argv, an argument
 * with a blank or a quote in single quotes, the value of any --token*
 * option but --token-file's left out ("(redacted)"); cut to len. */
void sd_command_line(int argc, char **argv, char *buf, size_t len);

#endif
