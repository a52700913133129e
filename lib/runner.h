/*
 * runner.h - run a plan on a communicator: for each test and size, fill,
 * warm up, time, check, combine across ranks and report to the sinks.
 *
 * The measurement method is nccl-tests': per size and placement (out of
 * place, then in place), `warmup` untimed iterations, a barrier, `iters`
 * timed iterations between two clock reads with one wait at the end; the
 * per-iteration time is the elapsed time divided by iters, then combined
 * across ranks (-a: average by default).  Checks run after timing, on
 * freshly filled buffers, `check_passes` times.
 */
#ifndef SD_RUNNER_H
#define SD_RUNNER_H

#include <signal.h>
#include "shakedown/backend.h"
#include "bootstrap.h"
#include "ctrl.h"
#include "fault.h"
#include "options.h"
#include "plan.h"
#include "sink.h"

struct sd_runner {
	const struct sd_run_options *opt;
	const struct sd_plan *plan;
	struct sd_bootstrap *bs;
	const struct sd_backend_ops *ops;
	struct sd_comm *comm;
	struct sd_ctrl *ctrl;
	struct sd_sink *sinks;     /* rank 0 only */
	int nsinks;
	struct sd_fault fault;
	volatile sig_atomic_t *cancel; /* set by SIGTERM/SIGINT */
	/* filled by the run */
	int wrong_tests;           /* tests with wrong data */
	int cancelled;             /* stopped by a signal */
	char cut_short[256];       /* what a cancel interrupted */
};

/* Index of algorithm `name` for op in the backend, -1 for "auto", or -2
 * when the backend has no such algorithm. */
int sd_runner_algo_index(const struct sd_backend_ops *ops, enum sd_op op,
			 const char *name);

/*
 * Check that the backend supports every test of the plan; returns SD_OK or
 * SD_ERR_INVALID with err naming the test and what the backend offers.
 */
int sd_runner_check_plan(const struct sd_backend_ops *ops,
			 const struct sd_plan *plan, char *err, size_t errlen);

/*
 * Run every test.  Returns the exit status: 0 passed, 1 wrong data, 5
 * cancelled; timeouts and lost ranks end the process through the control
 * plane (exit 4); backend errors return 3 after reporting to the sinks.
 */
int sd_runner_run(struct sd_runner *r);

/* Deliver an event to every sink, reporting (not stopping at) failures. */
void sd_sinks_test_begin(struct sd_sink *s, int n, const struct sd_test_info *t);
void sd_sinks_measurement(struct sd_sink *s, int n,
			  const struct sd_test_info *t,
			  const struct sd_measurement *m);
void sd_sinks_test_end(struct sd_sink *s, int n, const struct sd_test_info *t,
		       const char *status, const char *message);
void sd_sinks_run_end(struct sd_sink *s, int n, const struct sd_run_end *e);

#endif
