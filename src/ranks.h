/*
 * ranks.h - what the commands that start ranks (run, topo, gemm) share: who
 * speaks for the job, how a rank's error is said, and agreeing on a
 * start-up phase.
 */
#ifndef SD_RANKS_H
#define SD_RANKS_H

#include "bootstrap.h"

/* Whether this process says what every task of a job would say alike:
 * only the first task (and any process outside Slurm). */
int sd_first_task(void);

/* A usage error of command CMD ("run"), said once per job; returns
 * SD_EXIT_USAGE from the function it is used in. */
#define SD_USAGE_ERROR(cmd, ...)                                             \
	do {                                                                 \
		if (sd_first_task()) {                                       \
			fprintf(stderr, "shakedown " cmd ": " __VA_ARGS__);  \
			fputc('\n', stderr);                                 \
		}                                                            \
		return SD_EXIT_USAGE;                                        \
	} while (0)

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

/* The command line for the record: "shakedown" and argv, an argument
 * with a blank or a quote in single quotes; cut to len. */
void sd_command_line(int argc, char **argv, char *buf, size_t len);

#endif
