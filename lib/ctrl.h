/*
 * ctrl.h - the control plane: rank 0 watches every rank over TCP.
 *
 * Rank 0 runs a small server thread; every other rank keeps one connection
 * to it.  Through it ranks report progress, hand their per-measurement
 * results to rank 0, report operations that timed out, and agree on
 * stopping (SIGTERM).  Rank 0's thread is the judge: when a rank's
 * connection drops, or ranks report a timeout, it names the rank that did
 * not answer (rank, host, pid, and what it was doing), tells every rank to
 * abort, and the run ends with exit status 4.  No rank is left waiting: a
 * rank that loses rank 0 aborts too.
 */
#ifndef SD_CTRL_H
#define SD_CTRL_H

#include <stddef.h>
#include <stdint.h>
#include "shakedown/backend.h"

struct sd_ctrl;

/* Called once, just before the process exits on an abort; exit_status is
 * 4 (or 5), msg says why (rank 0 has printed it). */
typedef void (*sd_ctrl_abort_fn)(void *arg, int exit_status, const char *msg);

/*
 * Connect all ranks (collective over bs).  timeout_ms bounds every wait.
 * Returns SD_OK and *out, or an sd_status with err filled.
 */
int sd_ctrl_start(struct sd_bootstrap *bs, int timeout_ms,
		  struct sd_ctrl **out, char *err, size_t errlen);

/* Register the hook run before an abort exits (e.g. record the run end,
 * abort the backend). */
void sd_ctrl_set_abort_hook(struct sd_ctrl *c, sd_ctrl_abort_fn fn, void *arg);

/* Say this rank is entering step `seq` (what: a description, used by rank 0
 * in messages). */
void sd_ctrl_progress(struct sd_ctrl *c, uint32_t seq, const char *what);

/*
 * End of step `seq`: every rank contributes `len` bytes (the same len on
 * every rank); rank 0 receives all of them in `all` (size*len bytes; NULL on
 * other ranks).  `want_stop` is this rank's wish to stop (a signal); *stop
 * says whether the ranks stop now (any rank wished it).  Returns SD_OK; a
 * rank that does not answer within the timeout aborts the run.
 */
int sd_ctrl_exchange(struct sd_ctrl *c, uint32_t seq, const void *mine,
		     size_t len, void *all, int want_stop, int *stop);

/*
 * This rank's operation in step `seq` failed with `status` (timeout, lost
 * peer) and message `msg`.  Rank 0 decides who is to blame and aborts the
 * run; this call does not return.
 */
void sd_ctrl_fail(struct sd_ctrl *c, uint32_t seq, int status,
		  const char *msg) __attribute__((noreturn));

/*
 * The run is over.  Rank 0 passes the exit status to every rank; other
 * ranks receive it in *status.  Then the connections close.
 */
int sd_ctrl_finish(struct sd_ctrl *c, int *status);

/* Free (after finish). */
void sd_ctrl_destroy(struct sd_ctrl *c);

/* Choose the IPv4 address other hosts reach this one at: "127.0.0.1" when
 * every rank is on this host, else env `override_env`, else what `host`
 * resolves to (not loopback), else the first up non-loopback interface. */
int sd_pick_address(const char *host, int all_local, const char *override_env,
		    char *out, size_t len);

#endif
