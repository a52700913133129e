/*
 * ctrl.h - the control plane: rank 0 watches every rank over TCP.
 *
 * Rank 0 runs a small server thread; every other rank keeps one connection
 * to it.  Through it ranks report progress (per group and step), hand their
 * per-measurement results to rank 0, report operations that failed, and
 * agree on stopping (SIGTERM).  Rank 0's thread is the judge: when a rank's
 * connection drops, or ranks report a failure, it names the rank to blame
 * (rank, host, pid, its group, and what it was doing), tells every rank to
 * abort, and every rank's pending and later control-plane calls return the
 * verdict: its sd_status and message.  No rank is left waiting: a rank that
 * loses rank 0 reaches a verdict of its own.
 *
 * A group is a set of ranks measured together on one communicator (the
 * world, or one block of a split); groups of one test run at the same time
 * and advance step by step together.  Each rank says which group it is in
 * with every progress and result; a failure in one group names that
 * group's ranks.
 *
 * Nothing here prints or exits.  The abort hook (sd_ctrl_set_abort_hook)
 * is how the tool learns of a verdict the moment it is reached, from the
 * control plane's thread: to stop the backend, record the end of the run,
 * say why, and arm its last-resort exit for a rank stuck inside a library
 * call.
 */
#ifndef SD_CTRL_H
#define SD_CTRL_H

#include <stddef.h>
#include <stdint.h>
#include "shakedown/backend.h"

struct sd_ctrl;

/*
 * Called once per process, from the control plane's thread, when a verdict
 * is reached (before any control-plane call returns it): status is its
 * sd_status (SD_ERR_TIMEOUT for a hang or a lost rank, SD_ERR_PEER for a
 * lost rank 0, or the status of the rank whose backend failed), msg says
 * why.  `decided_here` is 1 when this process reached the verdict (rank
 * 0's judge, or a rank that lost rank 0), 0 when rank 0 sent it.
 */
typedef void (*sd_ctrl_abort_fn)(void *arg, int status, const char *msg,
				 int decided_here);

/*
 * Connect all ranks (collective over bs).  timeout_ms bounds the start-up
 * and is the default for steps.  Returns SD_OK and *out, or an sd_status
 * with err filled.
 */
int sd_ctrl_start(struct sd_bootstrap *bs, int timeout_ms,
		  struct sd_ctrl **out, char *err, size_t errlen);

/* Register the hook run when a verdict is reached. */
void sd_ctrl_set_abort_hook(struct sd_ctrl *c, sd_ctrl_abort_fn fn, void *arg);

/* Rank 0: register a hook run with the verdict rank 0 reached, before
 * the other ranks are told (and leave: under srun -K the first rank to
 * exit ends the step, rank 0 with it), so that what it says is out
 * first.  It must be quick (print, no database).  The abort hook runs
 * after, as always, with decided_here 1. */
void sd_ctrl_set_announce_hook(struct sd_ctrl *c,
			       void (*fn)(void *arg, int status, const char *msg),
			       void *arg);

/* Name the group `group` for messages: "group 1 (ranks 2-3)"; "" (the
 * default) for the world.  Every rank calls it with the same text before
 * the steps of a test with groups. */
void sd_ctrl_name_group(struct sd_ctrl *c, int group, const char *name);

/*
 * Say this rank is entering step `seq` of group `group` (0 for the world),
 * whose operations give up after timeout_ms and which as a whole may take
 * budget_ms (rank 0 waits that long for a group's results before naming
 * the ranks that did not finish); `what` describes the step for messages.  Returns SD_OK, or the verdict's status when the run was
 * aborted (then *err holds its message).
 */
int sd_ctrl_progress(struct sd_ctrl *c, int group, uint32_t seq,
		     int timeout_ms, int budget_ms, const char *what,
		     char *err, size_t errlen);

/*
 * End of step `seq`: every rank contributes `len` bytes (the same len on
 * every rank, in every group); rank 0 receives all of them in `all`
 * (size*len bytes, by world rank; NULL on other ranks).  `want_stop` is
 * this rank's wish to stop (a signal); *stop says whether the ranks stop
 * now (any rank wished it).  Returns SD_OK, or the verdict's status (with
 * its message in err) when a rank did not answer within the step's timeout
 * or the run was aborted.
 */
int sd_ctrl_exchange(struct sd_ctrl *c, int group, uint32_t seq,
		     const void *mine, size_t len, void *all, int want_stop,
		     int *stop, char *err, size_t errlen);

/*
 * A step in which rank 0 decides and every rank learns the decision: rank
 * 0 passes `word` (len bytes; what the others pass is ignored) once every
 * rank has reached the step, and each rank gets a malloc'd copy in *got
 * (*gotlen bytes; NULL when 0), which it frees.  Returns SD_OK, or the
 * verdict's status as sd_ctrl_exchange does.
 */
int sd_ctrl_decide(struct sd_ctrl *c, int group, uint32_t seq,
		   const void *word, size_t len, void **got, size_t *gotlen,
		   char *err, size_t errlen);

/*
 * This rank's operation in step `seq` of `group` failed with `status`
 * (timeout, lost peer, backend error) and message `msg`.  Rank 0 decides
 * who is to blame and aborts the run; this call waits for that verdict and
 * returns its status, with its message in err.  When no verdict comes
 * within the step's timeout plus 10 s, this rank's own failure becomes the
 * verdict.
 */
int sd_ctrl_fail(struct sd_ctrl *c, int group, uint32_t seq, int status,
		 const char *msg, char *err, size_t errlen);

/* Rank 0: the ranks the verdict named (a rank that hung, was lost or
 * whose backend failed), at most max, with their hosts; how many (0 on
 * other ranks, or when no single rank was to blame).  Callable from the
 * abort hook. */
int sd_ctrl_blamed(struct sd_ctrl *c, int *ranks, char (*hosts)[64], int max);

/* Rank 0: when the verdict was a rank the kernel's OOM killer took (the
 * OOM kills its memory cgroup counted, read by rank 0 for a rank of its
 * own node and by the node's leader for another's, went up while it left
 * without a word; the verdict's status is then SD_ERR_NOMEM and its node
 * is not blamed): 1 (its cgroup's count) or 2 (the host's), with the
 * rank, its host and the kills; else 0. */
int sd_ctrl_oom_victim(struct sd_ctrl *c, int *rank, char host[64],
		       uint64_t *kills);

/* The verdict so far: SD_OK when none, else its status and (when msg is
 * not NULL) its message. */
int sd_ctrl_verdict(struct sd_ctrl *c, const char **msg);

/*
 * Rank 0: the run's outcome is decided (every result is in); no verdict can
 * be reached after this (a rank that leaves now is not blamed).  Returns
 * the verdict reached before, if any (SD_OK when none).  On other ranks it
 * only returns the verdict so far.
 */
int sd_ctrl_quiesce(struct sd_ctrl *c);

/*
 * The run is over.  Rank 0 passes `*outcome` (an integer the caller
 * defines, e.g. the exit status) to every rank; other ranks receive it in
 * *outcome.  Then the connections close.  After a verdict it does nothing
 * and returns the verdict's status.
 */
int sd_ctrl_finish(struct sd_ctrl *c, int *outcome);

/* Free (after finish, or after a verdict). */
void sd_ctrl_destroy(struct sd_ctrl *c);

/* Choose the IPv4 address other hosts reach this one at: "127.0.0.1" when
 * every rank is on this host, else env `override_env`, else what `host`
 * resolves to (not loopback), else the first up non-loopback interface. */
int sd_pick_address(const char *host, int all_local, const char *override_env,
		    char *out, size_t len);

#endif
