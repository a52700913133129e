/*
 * ranks.h - how the tool speaks for a job: who speaks (the first task),
 * usage errors said once, how a rank's error is said, agreeing on a
 * start-up phase.  The job's lifecycle itself is job.h's.
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

/* As sd_agree, and when any rank failed, its message said once: rank 0
 * prints each distinct message (WHAT, then ERR, of the failed ranks)
 * once, with the ranks and hosts that met it ("ranks 0-7 (vm): no CUDA
 * device ..."), instead of every rank printing its own.  Every rank must
 * call it; ERR is this rank's message (ignored when mine is 0). */
int sd_agree_say(struct sd_bootstrap_impl *boot, int mine, const char *what,
		 const char *err);

#endif
