/*
 * fault.h - fault injection, so the test suite can prove that wrong data,
 * hangs and dead ranks are caught.
 *
 * SHAKEDOWN_FAULT holds comma-separated key=value pairs:
 *   rank=R        the rank that misbehaves (required)
 *   kind=K        corrupt: flip one bit of one received element before the
 *                          check (index=I, default 0)
 *                 stall:   stop answering (sleep) before timed iteration
 *                          iter=N (default 0)
 *                 exit:    end the process with status code=C (default
 *                          9) before iteration N, through the exit
 *                          function the tool gives (struct sd_fault)
 *                 kill:    SIGKILL itself before iteration N
 *                 slow:    wait delay_us=N microseconds (default 1000)
 *                          before every operation it starts, in every
 *                          measurement (a slow node; never "fires");
 *                          in `shakedown train`, before every step
 *                 grad_corrupt: (`shakedown train`) add +-scale=X
 *                          (default 1) to every element of this rank's
 *                          gradient before its all_reduce, at every step
 *                          from step iter=N on (default 0: all); with
 *                          rel=1, +-X times the element's own size (a
 *                          relative error, as a marginal multiplier's)
 *                 grad_nan: (`shakedown train`) put a NaN in element
 *                          index=I of this rank's gradient before its
 *                          all_reduce, at step iter=N (default 3)
 *   op=NAME       only in this operation (default: the first one)
 *   size=BYTES    only at this size (K/M/G suffixes; default: the first)
 *   in_place=0|1  only out of place / in place (default: either)
 *   at=start      exit or kill at start-up instead, right after the
 *                 bootstrap is open (the others are then in a start-up
 *                 rendezvous)
 * The fault fires once.
 */
#ifndef SD_FAULT_H
#define SD_FAULT_H

#include <stddef.h>
#include <stdint.h>
#include "shakedown/backend.h"

enum sd_fault_kind { SD_FAULT_NONE = 0, SD_FAULT_CORRUPT, SD_FAULT_STALL,
		     SD_FAULT_EXIT, SD_FAULT_KILL, SD_FAULT_SLOW,
		     SD_FAULT_GRAD_CORRUPT, SD_FAULT_GRAD_NAN };

struct sd_fault {
	enum sd_fault_kind kind;
	int rank;
	int op;           /* enum sd_op or -1 */
	uint64_t size;    /* 0: any */
	int in_place;     /* -1: any */
	long iter;
	int code;
	uint64_t index;
	long delay_us;    /* slow: before every operation */
	double scale;     /* grad_corrupt: what is added (1) */
	int rel;          /* grad_corrupt: scale x |element| (rel=1) */
	int iter_set;     /* iter= was given */
	int at_start;     /* at=start */
	int fired;
	/* ends the process at once with a status (the tool's _exit); kind
	 * exit does nothing without it */
	void (*exit_fn)(int status);
};

/* Parse spec (NULL or "" gives kind NONE).  Returns SD_OK or
 * SD_ERR_INVALID with err naming the bad part. */
int sd_fault_parse(const char *spec, struct sd_fault *f, char *err,
		   size_t errlen);

/*
 * Whether f, planted in `shakedown train`, fires within its steps 1 ..
 * steps where the run sees it: grad_nan at step iter (1 .. steps - 1)
 * and grad_corrupt from step iter on (0 .. steps - 1), the loss showing
 * them a step later; stall, exit and kill before step iter + 1 (0 ..
 * steps - 1); slow at every step.  0, or 1 with err saying which iter= to
 * give.
 */
/* Whether a planted stall, exit or kill with iter= fits a gemm sweep of
 * `entries` entries (it acts before entry iter + 1): 0, or 1 with err
 * naming the entries it could take. */
int sd_fault_fits_entries(const struct sd_fault *f, long entries, char *err,
			  size_t errlen);

int sd_fault_fits_steps(const struct sd_fault *f, long steps, char *err,
			size_t errlen);

/* The workloads a fault is planted in: what each lets it do. */
enum sd_fault_workload { SD_FAULT_IN_RUN, SD_FAULT_IN_GEMM, SD_FAULT_IN_TRAIN };

/*
 * Whether f could fire in a job of nranks running workload w: a kind the
 * workload has, a rank of the job, and an index below `elements` (run:
 * the largest buffer's elements; gemm: the elements checked of the first
 * product; train: the model's gradients; 0: no bound).  0, or 1 with err
 * saying what to plant instead.
 */
int sd_fault_fits(const struct sd_fault *f, enum sd_fault_workload w,
		  int nranks, uint64_t elements, char *err, size_t errlen);

/* Whether a start-up fault applies to this rank now. */
int sd_fault_at_start(const struct sd_fault *f, int rank);

/* Whether the fault applies to this rank and measurement now. */
int sd_fault_here(const struct sd_fault *f, int rank, enum sd_op op,
		  uint64_t size, int in_place);

/* A slow rank: wait its delay (before an operation it starts). */
void sd_fault_delay(const struct sd_fault *f);

/* Carry out a stall, exit or kill (returns only for corrupt, none, or an
 * exit without exit_fn). */
void sd_fault_act(struct sd_fault *f);

#endif
