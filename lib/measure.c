/*
 * measure.c - one rank's part of one measurement (measure.h).
 */
#include "measure.h"

#include <string.h>

#include "util.h"

int sd_measure_local(const struct sd_backend_ops *ops, struct sd_comm *comm,
		     struct sd_op_args *a, const struct sd_measure_spec *m,
		     const struct sd_measure_fault *f,
		     struct sd_rank_result *res, double *iter_us,
		     const char **step, char *err, size_t errlen)
{
	int rc;
	struct sd_fault *fault = f ? f->fault : NULL;
	int slow = fault && f->slow, here = fault && f->here && !f->slow;
#define STEP(call, name)                                                       \
	do {                                                                   \
		if ((rc = (call))) {                                           \
			*step = (name);                                        \
			return rc;                                             \
		}                                                              \
	} while (0)
	/* a planted slow rank waits before every operation it starts */
#define RUN(name)                                                              \
	do {                                                                   \
		if (slow)                                                      \
			sd_fault_delay(fault);                                 \
		STEP(ops->run(comm, a, err, errlen), name);                    \
	} while (0)

	/* the timed runs need the send data; their results are not checked */
	a->fill_part = SD_FILL_SEND;
	STEP(ops->fill(comm, a, err, errlen), "fill");
	a->timed_iters = m->per_iter && ops->iter_times ? m->iters : 0;
	if (ops->prepare)
		STEP(ops->prepare(comm, a, err, errlen), "prepare");
	for (long w = 0; w < m->warmup; w++)
		RUN("warm-up");
	STEP(ops->wait(comm, a->timeout_ms, err, errlen), "warm-up");
	STEP(ops->barrier(comm, a->timeout_ms, err, errlen), "barrier");

	/* a backend with device-side times (CUDA events) times each
	 * iteration itself: no host wait between iterations */
	int host_per_iter = m->per_iter && !ops->iter_times;
	a->want_iter_times = m->per_iter && ops->iter_times;
	double t0 = sd_now(), prev = t0;
	for (long i = 0; i < m->iters; i++) {
		if (here && fault->kind != SD_FAULT_CORRUPT && i == fault->iter)
			sd_fault_act(fault);
		RUN("run");
		if (host_per_iter) {
			STEP(ops->wait(comm, a->timeout_ms, err, errlen),
			     "run");
			double now = sd_now();
			iter_us[i] = (now - prev) * 1e6;
			prev = now;
		}
	}
	STEP(ops->wait(comm, a->timeout_ms, err, errlen), "run");
	double t1 = sd_now();
	a->want_iter_times = 0;
	res->time_us = m->iters > 0 ? (t1 - t0) * 1e6 / (double)m->iters : 0;
	if (m->per_iter && !host_per_iter && m->iters > 0)
		STEP(ops->iter_times(comm, iter_us, m->iters, err, errlen),
		     "per-iteration times");

	/* check on fresh data, after timing */
	for (long pass = 0; pass < m->check_passes; pass++) {
		struct sd_mismatch mm = { 0 };
		uint64_t wrong = 0;
		/* out of place the send data is still the last fill's (a
		 * backend that wrote into it makes this pass's result
		 * wrong, which the check sees): poison the receive buffer;
		 * in place the timed runs replaced the input */
		a->fill_part = a->in_place ? SD_FILL_ALL : SD_FILL_RECV;
		STEP(ops->fill(comm, a, err, errlen), "check");
		RUN("check");
		STEP(ops->wait(comm, a->timeout_ms, err, errlen), "check");
		if (here && fault->kind == SD_FAULT_CORRUPT && pass == 0) {
			fault->fired = 1;
			if (ops->corrupt)
				ops->corrupt(comm, a, fault->index);
		}
		STEP(ops->verify(comm, a, &wrong, &mm, err, errlen), "verify");
		res->checked = 1;
		if (wrong && !res->wrong) {
			res->first_index = mm.index;
			memcpy(res->expected, mm.expected,
			       sizeof(res->expected));
			memcpy(res->got, mm.got, sizeof(res->got));
		}
		res->wrong += wrong;
	}
#undef RUN
#undef STEP
	return SD_OK;
}
