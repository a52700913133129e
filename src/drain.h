/*
 * drain.h - `shakedown run --drain`: take the bad nodes out of Slurm's
 * scheduling with scontrol, each with the run and the reason.
 */
#ifndef SD_DRAIN_H
#define SD_DRAIN_H

#include "verdict.h"

/*
 * Drain hosts[0..n) with `scontrol update NodeName=H State=DRAIN
 * Reason="shakedown UUID: REASON"` (scontrol is $SHAKEDOWN_SCONTROL or
 * scontrol on PATH; each call bounded to limit_s seconds, and after one
 * that does not answer the others are not tried).  Says on stderr what it
 * drained and what it could not, with scontrol's words and the command to
 * run by hand.  Returns the number of hosts that could not be drained.
 */
int sd_drain_hosts(const char *const *hosts, const char *const *reasons,
		   int n, const char *uuid, int limit_s);

/* Drain every bad node of `b` (host names by host index in names[]), each
 * with the reason of its first suspect. */
int sd_drain_bad_nodes(const struct sd_blame *b, int nhosts,
		       const char *const *names, const char *uuid, int limit_s);

#endif
