/*
 * measure.h - one rank's part of one measurement: fill, warm up, time the
 * iterations, check the result bit for bit.  The runner calls it in the
 * rank's own process, and a worker process (lib/worker.c, a test of a
 * transport variant) calls it in its own, so that the timing is the same
 * code in both: nothing but the backend between the two clock readings.
 */
#ifndef SD_MEASURE_H
#define SD_MEASURE_H

#include <stddef.h>
#include <stdint.h>

#include "shakedown/backend.h"
#include "fault.h"

/* What one rank measured at one size and placement (exchanged between
 * ranks as bytes: plain fields, no pointers). */
struct sd_rank_result {
	double time_us;
	uint64_t wrong;
	uint64_t first_index;
	int32_t checked;
	int32_t pad;
	char expected[48];
	char got[48];
};

/* How a measurement repeats (the test's settings). */
struct sd_measure_spec {
	long iters;	   /* timed */
	long warmup;	   /* untimed first */
	long check_passes; /* checked runs after the timed ones */
	int per_iter;	   /* time each iteration too */
};

/* The fault planted in this measurement (SHAKEDOWN_FAULT), as the runner
 * decided it for this rank: `slow` waits before each operation,
 * `here` lets a stall, exit, kill or corrupt act. */
struct sd_measure_fault {
	struct sd_fault *fault; /* NULL: none */
	int slow;
	int here;
};

/*
 * Measure a (its counts, buffers and placement set) on comm: fill the
 * send data, warm up, time m->iters runs (res->time_us the mean; with
 * per_iter, iter_us[0..iters) each), then check m->check_passes runs on
 * fresh data (res->wrong, the first wrong element).  Returns SD_OK or a
 * status with *step naming what failed ("fill", "run", "verify"...) and
 * err the backend's message.
 */
int sd_measure_local(const struct sd_backend_ops *ops, struct sd_comm *comm,
		     struct sd_op_args *a, const struct sd_measure_spec *m,
		     const struct sd_measure_fault *f,
		     struct sd_rank_result *res, double *iter_us,
		     const char **step, char *err, size_t errlen);

#endif
