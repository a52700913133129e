/*
 * runner.c - the measurement loop (see runner.h).
 */
#include "config.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll.h"
#include "runner.h"
#include "shakedown/pattern.h"
#include "tool.h"
#include "util.h"

/* What each rank hands rank 0 after a measurement. */
struct rank_result {
	double time_us;
	uint64_t wrong;
	uint64_t first_index;
	int32_t checked;
	int32_t pad;
	char expected[48];
	char got[48];
};

static pthread_mutex_t sink_mu = PTHREAD_MUTEX_INITIALIZER;

static void sink_failed(struct sd_sink *s, const char *event, int rc)
{
	fprintf(stderr, "shakedown: warning: result writer '%s' failed in %s "
		"(status %d); the other writers go on\n", s->ops->name, event,
		rc);
}

void sd_sinks_test_begin(struct sd_sink *s, int n, const struct sd_test_info *t)
{
	pthread_mutex_lock(&sink_mu);
	for (int i = 0; i < n; i++) {
		int rc = s[i].ops->test_begin ? s[i].ops->test_begin(s[i].self, t)
					      : SD_OK;
		if (rc)
			sink_failed(&s[i], "test_begin", rc);
	}
	pthread_mutex_unlock(&sink_mu);
}

void sd_sinks_measurement(struct sd_sink *s, int n,
			  const struct sd_test_info *t,
			  const struct sd_measurement *m)
{
	pthread_mutex_lock(&sink_mu);
	for (int i = 0; i < n; i++) {
		int rc = s[i].ops->measurement
				 ? s[i].ops->measurement(s[i].self, t, m)
				 : SD_OK;
		if (rc)
			sink_failed(&s[i], "measurement", rc);
	}
	pthread_mutex_unlock(&sink_mu);
}

void sd_sinks_test_end(struct sd_sink *s, int n, const struct sd_test_info *t,
		       const char *status, const char *message)
{
	pthread_mutex_lock(&sink_mu);
	for (int i = 0; i < n; i++) {
		int rc = s[i].ops->test_end
				 ? s[i].ops->test_end(s[i].self, t, status,
						      message)
				 : SD_OK;
		if (rc)
			sink_failed(&s[i], "test_end", rc);
	}
	pthread_mutex_unlock(&sink_mu);
}

void sd_sinks_run_end(struct sd_sink *s, int n, const struct sd_run_end *e)
{
	pthread_mutex_lock(&sink_mu);
	for (int i = 0; i < n; i++) {
		int rc = s[i].ops->run_end ? s[i].ops->run_end(s[i].self, e)
					   : SD_OK;
		if (rc)
			sink_failed(&s[i], "run_end", rc);
	}
	pthread_mutex_unlock(&sink_mu);
}

int sd_runner_algo_index(const struct sd_backend_ops *ops, enum sd_op op,
			 const char *name)
{
	if (!name || !*name || strcmp(name, "auto") == 0)
		return -1;
	for (int i = 0; ops->algo_name && ops->algo_name(op, i); i++)
		if (strcmp(ops->algo_name(op, i), name) == 0)
			return i;
	return -2;
}

static void list_names(char *buf, size_t len, uint32_t mask, int count,
		       const char *(*name)(int))
{
	buf[0] = '\0';
	for (int i = 0; i < count; i++) {
		if (!(mask & (1u << i)))
			continue;
		size_t u = strlen(buf);
		snprintf(buf + u, len - u, "%s%s", u ? ", " : "", name(i));
	}
}

static const char *dname(int i) { return sd_dtype_name((enum sd_dtype)i); }
static const char *rname(int i) { return sd_redop_name((enum sd_redop)i); }
static const char *oname(int i) { return sd_op_name((enum sd_op)i); }

int sd_runner_check_plan(const struct sd_backend_ops *ops,
			 const struct sd_plan *plan, char *err, size_t errlen)
{
	char have[512];
	for (size_t i = 0; i < plan->ntests; i++) {
		const struct sd_test_spec *t = &plan->tests[i];
		const struct sd_coll *c = sd_coll_get(t->op);
		if (!(ops->ops & (1u << t->op))) {
			list_names(have, sizeof(have), ops->ops, SD_OP_COUNT,
				   oname);
			snprintf(err, errlen, "the %s backend does not support "
				 "%s; it supports %s", ops->name, c->name, have);
			return SD_ERR_INVALID;
		}
		if (!(ops->dtypes & (1u << t->dtype))) {
			list_names(have, sizeof(have), ops->dtypes,
				   SD_DTYPE_COUNT, dname);
			snprintf(err, errlen, "the %s backend does not support "
				 "data type %s; use one of %s", ops->name,
				 sd_dtype_name(t->dtype), have);
			return SD_ERR_INVALID;
		}
		if (c->reduces && !(ops->redops & (1u << t->redop))) {
			list_names(have, sizeof(have), ops->redops,
				   SD_REDOP_COUNT, rname);
			snprintf(err, errlen, "the %s backend does not support "
				 "reduction %s; use one of %s", ops->name,
				 sd_redop_name(t->redop), have);
			return SD_ERR_INVALID;
		}
		if (sd_runner_algo_index(ops, t->op, t->algo) == -2) {
			have[0] = '\0';
			for (int k = 0; ops->algo_name &&
					ops->algo_name(t->op, k); k++) {
				size_t u = strlen(have);
				snprintf(have + u, sizeof(have) - u, ", %s",
					 ops->algo_name(t->op, k));
			}
			snprintf(err, errlen, "the %s backend has no algorithm "
				 "'%s' for %s; use auto%s", ops->name, t->algo,
				 c->name, have);
			return SD_ERR_INVALID;
		}
	}
	return SD_OK;
}

/* A step failed on this rank: let rank 0 judge; does not return. */
static void step_failed(struct sd_runner *r, uint32_t seq, int rc,
			const char *what, const char *err)
{
	char msg[600];
	snprintf(msg, sizeof(msg), "%s: %s", what, err[0] ? err : "failed");
	sd_ctrl_fail(r->ctrl, seq, rc, msg);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* Nearest-rank percentile of sorted v[0..n). */
static double percentile(const double *v, size_t n, double p)
{
	size_t k = (size_t)ceil(p / 100.0 * (double)n);
	return v[k ? k - 1 : 0];
}

/* Rank 0: turn all ranks' results into one measurement. */
static void combine(struct sd_runner *r, const struct sd_coll *c,
		    const struct sd_test_spec *t, const char *all,
		    size_t stride, size_t sc, size_t rc_, int in_place,
		    struct sd_measurement *m)
{
	int n = r->bs->size;
	size_t ts = sd_dtype_size(t->dtype);
	memset(m, 0, sizeof(*m));
	m->size_bytes = sd_coll_size_bytes(sc, rc_, ts);
	m->count = m->size_bytes / ts;
	m->in_place = in_place;
	m->iters = (int)t->iters;
	m->warmup_iters = (int)t->warmup;
	m->first_wrong_rank = -1;
	m->time_us_min = INFINITY;
	double sum = 0;
	for (int k = 0; k < n; k++) {
		const struct rank_result *rr =
			(const void *)(all + (size_t)k * stride);
		sum += rr->time_us;
		m->time_us_min = fmin(m->time_us_min, rr->time_us);
		m->time_us_max = fmax(m->time_us_max, rr->time_us);
		m->checked |= rr->checked;
		m->wrong += rr->wrong;
		if (rr->wrong && m->first_wrong_rank < 0) {
			m->first_wrong_rank = k;
			m->first_wrong.index = rr->first_index;
			memcpy(m->first_wrong.expected, rr->expected,
			       sizeof(rr->expected));
			memcpy(m->first_wrong.got, rr->got, sizeof(rr->got));
		}
	}
	m->time_us_avg = sum / n;
	switch (r->opt->combine) {
	case SD_COMBINE_RANK0:
		m->time_us = ((const struct rank_result *)(const void *)all)->time_us;
		break;
	case SD_COMBINE_MIN: m->time_us = m->time_us_min; break;
	case SD_COMBINE_MAX: m->time_us = m->time_us_max; break;
	default: m->time_us = m->time_us_avg; break;
	}
	if (r->opt->per_iter && t->iters > 0) {
		/* each iteration ends when its slowest rank does */
		double *it = calloc((size_t)t->iters, sizeof(double));
		if (it) {
			for (int k = 0; k < n; k++) {
				const double *v = (const void *)(
					all + (size_t)k * stride +
					sizeof(struct rank_result));
				for (long i = 0; i < t->iters; i++)
					it[i] = fmax(it[i], v[i]);
			}
			qsort(it, (size_t)t->iters, sizeof(double), cmp_double);
			m->have_percentiles = 1;
			m->iter_us_min = it[0];
			m->iter_us_p50 = percentile(it, (size_t)t->iters, 50);
			m->iter_us_p99 = percentile(it, (size_t)t->iters, 99);
			m->iter_us_max = it[t->iters - 1];
			free(it);
		}
	}
	m->algbw_gbs = sd_algbw_gbs(m->size_bytes, m->time_us);
	m->busbw_gbs = m->algbw_gbs * c->busbw_factor(n);
	m->ds_size_bytes = sc * ts;
	snprintf(m->ds_description, sizeof(m->ds_description), "%zux%zu", sc,
		 ts);
	sd_ds_bandwidth(c, n, m->ds_size_bytes, m->time_us,
			&m->ds_throughput_gbps, &m->ds_busbw_gbps);
	m->algo = t->algo;
}

/* One size and placement on every rank; returns 1 to stop (cancel). */
static int measure(struct sd_runner *r, struct sd_comm *comm,
		   const struct sd_test_spec *t, const struct sd_test_info *info,
		   uint32_t *seq, uint64_t size, int in_place, void *sendbase,
		   void *recvbase, uint64_t *wrong_out)
{
	const struct sd_coll *c = sd_coll_get(t->op);
	const struct sd_backend_ops *ops = r->ops;
	int me = r->bs->rank, n = r->bs->size, rc;
	size_t ts = sd_dtype_size(t->dtype), sc, rcount;
	char err[512] = "", what[256], sz[32];
	c->counts((size_t)(size / ts), n, &sc, &rcount);

	struct sd_op_args a = { 0 };
	a.op = t->op;
	a.dtype = t->dtype;
	a.redop = t->redop;
	a.root = t->root < 0 ? 0 : t->root;
	a.in_place = in_place;
	a.send_count = sc;
	a.recv_count = rcount;
	a.algo = sd_runner_algo_index(ops, t->op, t->algo);
	a.timeout_ms = (int)(r->opt->timeout_s * 1000);
	a.seed = *seq * 2654435761u;
	sd_coll_place(&a, me, sendbase, recvbase);

	(*seq)++;
	sd_format_size(sd_coll_size_bytes(sc, rcount, ts), sz, sizeof(sz));
	snprintf(what, sizeof(what), "%s %s%s%s %s %s (test %d)", c->name,
		 sd_dtype_name(t->dtype), c->reduces ? " " : "",
		 c->reduces ? sd_redop_name(t->redop) : "", sz,
		 in_place ? "in-place" : "out-of-place", info->index + 1);
	sd_ctrl_progress(r->ctrl, *seq, what);

	if ((rc = ops->fill(comm, &a, err, sizeof(err))))
		step_failed(r, *seq, rc, "fill", err);
	if (ops->prepare && (rc = ops->prepare(comm, &a, err, sizeof(err))))
		step_failed(r, *seq, rc, "prepare", err);
	for (long w = 0; w < t->warmup; w++)
		if ((rc = ops->run(comm, &a, err, sizeof(err))))
			step_failed(r, *seq, rc, "warm-up", err);
	if ((rc = ops->wait(comm, a.timeout_ms, err, sizeof(err))))
		step_failed(r, *seq, rc, "warm-up", err);
	if ((rc = ops->barrier(comm, a.timeout_ms, err, sizeof(err))))
		step_failed(r, *seq, rc, "barrier", err);

	int fault_here = sd_fault_here(&r->fault, me, t->op, size, in_place);
	size_t stride = sizeof(struct rank_result) +
			(r->opt->per_iter ? (size_t)t->iters * sizeof(double)
					  : 0);
	char *mine = calloc(1, stride);
	if (!mine)
		step_failed(r, *seq, SD_ERR_NOMEM, "results", "out of memory");
	struct rank_result *res = (void *)mine;
	double *iter_us = (void *)(mine + sizeof(struct rank_result));

	/* a backend with device-side times (CUDA events) times each
	 * iteration itself: no host wait between iterations */
	int host_per_iter = r->opt->per_iter && !ops->iter_times;
	a.want_iter_times = r->opt->per_iter && ops->iter_times;
	double t0 = sd_now(), prev = t0;
	for (long i = 0; i < t->iters; i++) {
		if (fault_here && r->fault.kind != SD_FAULT_CORRUPT &&
		    i == r->fault.iter)
			sd_fault_act(&r->fault);
		if ((rc = ops->run(comm, &a, err, sizeof(err))))
			step_failed(r, *seq, rc, "run", err);
		if (host_per_iter) {
			if ((rc = ops->wait(comm, a.timeout_ms, err,
					    sizeof(err))))
				step_failed(r, *seq, rc, "run", err);
			double now = sd_now();
			iter_us[i] = (now - prev) * 1e6;
			prev = now;
		}
	}
	if ((rc = ops->wait(comm, a.timeout_ms, err, sizeof(err))))
		step_failed(r, *seq, rc, "run", err);
	double t1 = sd_now();
	a.want_iter_times = 0;
	res->time_us = t->iters > 0 ? (t1 - t0) * 1e6 / (double)t->iters : 0;
	if (r->opt->per_iter && !host_per_iter && t->iters > 0 &&
	    (rc = ops->iter_times(comm, iter_us, t->iters, err, sizeof(err))))
		step_failed(r, *seq, rc, "per-iteration times", err);

	/* check on fresh data, after timing */
	for (long pass = 0; pass < r->opt->check_passes; pass++) {
		struct sd_mismatch mm = { 0 };
		uint64_t wrong = 0;
		if ((rc = ops->fill(comm, &a, err, sizeof(err))) ||
		    (rc = ops->run(comm, &a, err, sizeof(err))) ||
		    (rc = ops->wait(comm, a.timeout_ms, err, sizeof(err))))
			step_failed(r, *seq, rc, "check", err);
		if (fault_here && r->fault.kind == SD_FAULT_CORRUPT &&
		    pass == 0) {
			r->fault.fired = 1;
			if (ops->corrupt)
				ops->corrupt(comm, &a, r->fault.index);
		}
		if ((rc = ops->verify(comm, &a, &wrong, &mm, err,
				      sizeof(err))))
			step_failed(r, *seq, rc, "verify", err);
		res->checked = 1;
		if (wrong && !res->wrong) {
			res->first_index = mm.index;
			memcpy(res->expected, mm.expected, sizeof(res->expected));
			memcpy(res->got, mm.got, sizeof(res->got));
		}
		res->wrong += wrong;
	}

	char *all = me == 0 ? malloc(stride * (size_t)n) : NULL;
	if (me == 0 && !all)
		step_failed(r, *seq, SD_ERR_NOMEM, "results", "out of memory");
	int stop = 0;
	sd_ctrl_exchange(r->ctrl, *seq, mine, stride, all,
			 r->cancel && *r->cancel, &stop);
	if (me == 0) {
		struct sd_measurement m;
		combine(r, c, t, all, stride, sc, rcount, in_place, &m);
		sd_sinks_measurement(r->sinks, r->nsinks, info, &m);
		*wrong_out += m.wrong;
	}
	if (stop)
		snprintf(r->cut_short, sizeof(r->cut_short), "%s", what);
	free(all);
	free(mine);
	return stop;
}

int sd_runner_run(struct sd_runner *r)
{
	const struct sd_backend_ops *ops = r->ops;
	int n = r->bs->size, me = r->bs->rank;
	uint32_t seq = 0;
	int stop = 0;
	char err[512] = "";

	for (size_t ti = 0; ti < r->plan->ntests && !stop; ti++) {
		const struct sd_test_spec *t = &r->plan->tests[ti];
		const struct sd_coll *c = sd_coll_get(t->op);
		size_t ts = sd_dtype_size(t->dtype);
		struct sd_test_info info = {
			.index = (int)ti, .name = c->name, .op = t->op,
			.dtype = t->dtype, .redop = t->redop,
			.has_redop = c->reduces, .root = t->root,
			.scope = "world", .algo = t->algo, .nranks = n,
		};
		size_t nsizes = sd_size_series(t->min_bytes, t->max_bytes,
					       t->step_factor, t->step_bytes,
					       NULL, SD_MAX_SIZES);
		uint64_t *sizes = calloc(nsizes ? nsizes : 1, sizeof(*sizes));
		if (!sizes)
			step_failed(r, seq + 1, SD_ERR_NOMEM, "sizes",
				    "out of memory");
		sd_size_series(t->min_bytes, t->max_bytes, t->step_factor,
			       t->step_bytes, sizes, nsizes);
		/* a test with its own library environment (NCCL_*) runs on a
		 * fresh communicator made with it (collective over all ranks) */
		struct sd_comm *comm = r->comm;
		if (t->env[0]) {
			struct sd_comm_config cfg = {
				.timeout_ms = (int)(r->opt->timeout_s * 1000),
				.iface = r->opt->iface, .env = t->env };
			int crc = ops->comm_create(r->bs, &cfg, &comm, err,
						   sizeof(err));
			if (crc)
				step_failed(r, seq + 1, crc, "creating the "
					    "communicator for the test's env",
					    err);
		}
		size_t bytes = sd_coll_buffer_bytes(c, t->max_bytes, ts, n);
		void *sendbase = NULL, *recvbase = NULL;
		int rc = ops->buf_alloc(comm, bytes ? bytes : ts, &sendbase,
					err, sizeof(err));
		if (!rc)
			rc = ops->buf_alloc(comm, bytes ? bytes : ts,
					    &recvbase, err, sizeof(err));
		if (rc)
			step_failed(r, seq + 1, rc, "allocating buffers", err);
		if (me == 0) {
			sd_sinks_test_begin(r->sinks, r->nsinks, &info);
			if (r->opt->progress)
				fprintf(stderr, "\r\033[K[%zu/%zu] %s %s ",
					ti + 1, r->plan->ntests, c->name,
					sd_dtype_name(t->dtype));
		}
		uint64_t wrong = 0;
		for (size_t si = 0; si < nsizes && !stop; si++) {
			size_t s, rcount;
			c->counts((size_t)(sizes[si] / ts), n, &s, &rcount);
			if (s == 0 && rcount == 0)
				continue; /* too small to split over n ranks */
			stop = measure(r, comm, t, &info, &seq, sizes[si], 0,
				       sendbase, recvbase, &wrong);
			if (!stop && c->has_in_place && r->opt->in_place)
				stop = measure(r, comm, t, &info, &seq,
					       sizes[si], 1, sendbase, recvbase,
					       &wrong);
		}
		free(sizes);
		if (ops->buf_free) {
			ops->buf_free(comm, sendbase);
			ops->buf_free(comm, recvbase);
		}
		if (comm != r->comm)
			ops->comm_destroy(comm);
		if (me == 0) {
			char msg[400] = "";
			const char *status = "passed";
			if (stop) {
				status = "cancelled";
				snprintf(msg, sizeof(msg), "cut short by a "
					 "signal during %s", r->cut_short);
			} else if (wrong) {
				status = "failed";
				snprintf(msg, sizeof(msg), "%llu wrong "
					 "elements", (unsigned long long)wrong);
			}
			sd_sinks_test_end(r->sinks, r->nsinks, &info, status,
					  msg[0] ? msg : NULL);
		}
		if (wrong)
			r->wrong_tests++;
	}
	if (me == 0 && r->opt->progress)
		fprintf(stderr, "\r\033[K");
	r->cancelled = stop;
	if (stop)
		return SD_EXIT_CANCELLED;
	return r->wrong_tests ? SD_EXIT_CHECK : SD_EXIT_OK;
}
