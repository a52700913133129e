/*
 * ranks.h - what the commands that start ranks (run, topo, gemm, train)
 * share: who speaks for the job, how a rank's error is said, agreeing on
 * a start-up phase, and (gemm, train) starting the backend, describing
 * the ranks and tearing it all down.
 */
#ifndef SD_RANKS_H
#define SD_RANKS_H

#include "bootstrap.h"
#include "plugin.h"
#include "sink.h"

/* Whether this process says what every task of a job would say alike:
 * only the first task (and any process outside Slurm). */
int sd_first_task(void);

/* A usage error of command CMD ("run"), said once per job (a format and
 * its arguments, as printf); returns SD_EXIT_USAGE for the caller to
 * return. */
int sd_usage_error(const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* The usage error for the last two labels of a command's getopt switch
 * (optstring with a leading ':'): CH ':' is an option without its value,
 * anything else one CMD does not know, named from argv[optind - 1].
 * Returns SD_EXIT_USAGE. */
int sd_option_error(const char *cmd, int ch, char **argv);

/* An error of this rank on stderr: plainly for a single process, with
 * rank and host when there are several. */
void sd_rank_error(const struct sd_bootstrap *bs, const char *what,
		   const char *err);

/* The bootstrap's own words for its last failure, or `fallback`. */
const char *sd_boot_error(struct sd_bootstrap_impl *b, const char *fallback);

/* Agree on a start-up phase: the worst exit status of any rank (0 when
 * all are fine).  A failed allgather counts as an environment error, said
 * in the bootstrap's own words. */
int sd_agree(struct sd_bootstrap_impl *boot, int mine);

/* Whether n ranks of the Gloo backend on this host would run out of
 * local TCP ports (its full mesh); 1 with err naming the limit. */
int sd_local_ports_short(int n, char *err, size_t errlen);

/*
 * Load backend `name`, initialise it and build the world communicator
 * over boot (cfg: its timeout and interface), every rank agreeing after
 * each phase, as gemm and train start.  Each failure is said by the rank
 * that has it (a plugin that will not load, once per host).  Returns 0
 * with *plugin loaded and *comm built, or the exit status every rank
 * stops with (then close with sd_job_close()).
 */
int sd_job_backend_open(struct sd_bootstrap_impl *boot, const char *name,
			const struct sd_comm_config *cfg,
			struct sd_plugin *plugin, struct sd_comm **comm);

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

/* Tear down what sd_bootstrap_open() and sd_job_backend_open() made;
 * each may be missing; the pointers are cleared. */
void sd_job_close(struct sd_bootstrap_impl **boot, struct sd_plugin *plugin,
		  struct sd_comm **comm);

/* The command line for the record: "shakedown" and argv, an argument
 * with a blank or a quote in single quotes; cut to len. */
void sd_command_line(int argc, char **argv, char *buf, size_t len);

#endif
