/*
 * drain.h - `shakedown run --drain`: take the bad nodes out of Slurm's
 * scheduling with scontrol, each with the run and the reason.
 */
#ifndef SD_DRAIN_H
#define SD_DRAIN_H

#include "verdict.h"

/* sd_drain_hosts() refused a host: nothing was drained. */
#define SD_DRAIN_REFUSED (-1)

/*
 * Drain hosts[0..n) with `scontrol update NodeName=H State=DRAIN
 * Reason="shakedown UUID: REASON"` (scontrol is $SHAKEDOWN_SCONTROL or
 * scontrol on PATH; each call bounded to limit_s seconds, and after one
 * that does not answer the others are not tried).  Says on stderr what it
 * drained and what it could not, with scontrol's words and the command to
 * run by hand.  Returns the number of hosts that could not be drained.
 *
 * First every host is checked to be one host of the job's allocation
 * `alloc` (a Slurm hostlist, expanded by lib/hostlist.c; alloc_from names
 * where it comes from in messages: "SLURM_JOB_NODELIST", "the run's
 * recorded node list"): Slurm reads NodeName= as a hostlist, so
 * "node[1-3]", "a,b", "a b" or "ALL" would drain several nodes.  When any
 * host is refused (a line for each: the host and why) none is drained, and
 * SD_DRAIN_REFUSED is returned: a record that names one was edited or is
 * wrong, and should not half-act.
 */
int sd_drain_hosts(const char *const *hosts, const char *const *reasons,
		   int n, const char *uuid, int limit_s, const char *alloc,
		   const char *alloc_from);

/* Drain every bad node of `b` (host names by host index in names[]), each
 * with the reason of its first suspect; as sd_drain_hosts. */
int sd_drain_bad_nodes(const struct sd_blame *b, int nhosts,
		       const char *const *names, const char *uuid, int limit_s,
		       const char *alloc, const char *alloc_from);

/* The allocation a run drains within: $SLURM_JOB_NODELIST when set, else
 * the run's own node list `nodelist` (a run outside Slurm: --local);
 * *from names which. */
const char *sd_drain_allocation(const char *nodelist, const char **from);

#endif
