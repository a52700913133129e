/*
 * runner.c - the measurement loop (see runner.h).
 */
#include "config.h"

#include <dirent.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hostlist.h"
#include "runner.h"
#include "measure.h"
#include "schedule.h"
#include "switches.h"
#include "verdict.h"
#include "path_proof.h"
#include "transport.h"
#include "worker.h"
#include "shakedown/coll.h"
#include "shakedown/pattern.h"
#include "util.h"

/* What each rank hands rank 0 after a measurement is a struct
 * sd_rank_result (measure.h), then, with per_iter, its per-iteration
 * times. */

static pthread_mutex_t sink_mu = PTHREAD_MUTEX_INITIALIZER;

static const char *const event_names[] = {
	"run_begin", "test_begin", "measurement", "test_end", "run_end",
	"verdicts", "suspects", "gemm_results", "gemm_devices", "train_steps",
	"train_end"
};

int sd_sinks_emit(struct sd_sinks *s, const struct sd_event *ev)
{
	int first = SD_OK;
	if (!s)
		return SD_OK;
	pthread_mutex_lock(&sink_mu);
	if (s->ended) {
		/* the run was ended (an abort's record comes first): what the
		 * main thread still says is dropped, not recorded twice */
		pthread_mutex_unlock(&sink_mu);
		return SD_OK;
	}
	s->ended = ev->kind == SD_EVENT_RUN_END;
	for (int i = 0; i < s->n; i++) {
		const struct sd_sink_ops *o = s->v[i].ops;
		void *self = s->v[i].self;
		int rc = SD_OK;
		switch (ev->kind) {
		case SD_EVENT_RUN_BEGIN:
			rc = o->run_begin ? o->run_begin(self, ev->run) : SD_OK;
			break;
		case SD_EVENT_TEST_BEGIN:
			rc = o->test_begin ? o->test_begin(self, ev->test)
					   : SD_OK;
			break;
		case SD_EVENT_MEASUREMENT:
			rc = o->measurement ? o->measurement(self, ev->test,
							     ev->m)
					    : SD_OK;
			break;
		case SD_EVENT_TEST_END:
			rc = o->test_end ? o->test_end(self, ev->test,
						       ev->status, ev->message)
					 : SD_OK;
			break;
		case SD_EVENT_RUN_END:
			rc = o->run_end ? o->run_end(self, ev->end) : SD_OK;
			break;
		case SD_EVENT_VERDICTS:
			rc = o->verdicts ? o->verdicts(self, ev->verdicts, ev->n)
					 : SD_OK;
			break;
		case SD_EVENT_SUSPECTS:
			rc = o->suspects ? o->suspects(self, ev->suspects, ev->n)
					 : SD_OK;
			break;
		case SD_EVENT_GEMM_RESULTS:
			rc = o->gemm_results ? o->gemm_results(self,
							       ev->gemm_results,
							       ev->n)
					     : SD_OK;
			break;
		case SD_EVENT_GEMM_DEVICES:
			rc = o->gemm_devices ? o->gemm_devices(self,
							       ev->gemm_devices,
							       ev->n)
					     : SD_OK;
			break;
		case SD_EVENT_TRAIN_STEPS:
			rc = o->train_steps ? o->train_steps(self, ev->steps,
							     ev->n)
					    : SD_OK;
			break;
		case SD_EVENT_TRAIN_END:
			rc = o->train_end ? o->train_end(self, ev->train)
					  : SD_OK;
			break;
		}
		if (rc && !first)
			first = rc;
		if (rc && s->warn) {
			char msg[256];
			snprintf(msg, sizeof(msg), "result writer '%s' failed in "
				 "%s (status %d); the other writers go on",
				 o->name, event_names[ev->kind], rc);
			s->warn(s->warn_arg, msg);
		}
	}
	pthread_mutex_unlock(&sink_mu);
	return first;
}

void sd_sinks_close(struct sd_sinks *s)
{
	pthread_mutex_lock(&sink_mu);
	for (int i = 0; i < s->n; i++)
		if (s->v[i].ops->destroy)
			s->v[i].ops->destroy(s->v[i].self);
	s->n = 0;
	pthread_mutex_unlock(&sink_mu);
}

/* The communicators a test made for itself, so that an abort from the
 * control plane's thread reaches them too (one runner per process). */
static pthread_mutex_t active_mu = PTHREAD_MUTEX_INITIALIZER;
static struct sd_comm *active[2];
static const struct sd_backend_ops *active_ops[2]; /* whose they are: the
						      backend's or a worker's */
static int aborted;

/* Record `c` (or NULL) in active slot i; a comm made after an abort is
 * aborted at once. */
static void set_active(const struct sd_backend_ops *ops, int i,
		       struct sd_comm *c)
{
	pthread_mutex_lock(&active_mu);
	active[i] = c;
	active_ops[i] = ops;
	if (c && aborted && ops->abort)
		ops->abort(c);
	pthread_mutex_unlock(&active_mu);
}

void sd_runner_abort(struct sd_runner *r)
{
	pthread_mutex_lock(&active_mu);
	aborted = 1;
	for (int i = 0; i < 2; i++)
		if (active[i] && active_ops[i]->abort)
			active_ops[i]->abort(active[i]);
	if (r->comm && r->ops->abort)
		r->ops->abort(r->comm);
	pthread_mutex_unlock(&active_mu);
}

char *sd_rank_list(const int *ranks, int n)
{
	struct sd_buf b = { 0 };
	int bad = sd_buf_printf(&b, "%s", "");
	for (int i = 0; i < n && !bad;) {
		int j = i;
		while (j + 1 < n && ranks[j + 1] == ranks[j] + 1)
			j++;
		bad = j > i ? sd_buf_printf(&b, "%s%d-%d", i ? "," : "",
					    ranks[i], ranks[j])
			    : sd_buf_printf(&b, "%s%d", i ? "," : "", ranks[i]);
		i = j + 1;
	}
	if (bad) {
		sd_buf_free(&b);
		return NULL;
	}
	return b.data;
}

int sd_rank_list_parse(const char *s, int *out, int max)
{
	int n = 0;
	while (s && *s) {
		char *end;
		long lo = strtol(s, &end, 10), hi = lo;
		if (end == s || lo < 0)
			return -1;
		if (*end == '-') {
			s = end + 1;
			hi = strtol(s, &end, 10);
			if (end == s || hi < lo)
				return -1;
		}
		for (long r = lo; r <= hi; r++) {
			if (n >= max)
				return -1;
			out[n++] = (int)r;
		}
		if (*end == ',')
			end++;
		else if (*end)
			return -1;
		s = end;
	}
	return n;
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

/* Whether the backend applies each pair of test i's env as given: a
 * backend that applied none, or another value, would run the test
 * otherwise than the plan it records says. */
static int check_env(const struct sd_backend_ops *ops, size_t i,
		     const struct sd_test_spec *t, char *err, size_t errlen)
{
	const char *c = sd_coll_get(t->op)->name;
	for (const char *e = t->env; *e;) {
		size_t n = strcspn(e, " ");
		const char *eq = memchr(e, '=', n);
		char name[128], value[256], why[768] = "";
		if (!eq || (size_t)(eq - e) >= sizeof(name) ||
		    n - (size_t)(eq - e) > sizeof(value)) {
			snprintf(err, errlen, "test %zu (%s): env pair '%.*s' "
				 "is not NAME=VALUE", i + 1, c, (int)n, e);
			return SD_ERR_INVALID;
		}
		snprintf(name, sizeof(name), "%.*s", (int)(eq - e), e);
		snprintf(value, sizeof(value), "%.*s", (int)(n - (eq - e) - 1),
			 eq + 1);
		if (!ops->env_check) {
			snprintf(err, errlen, "test %zu (%s): env sets %s, but "
				 "the %s backend applies no NCCL settings, so the "
				 "test would run without it; drop env from the "
				 "test or run it with --backend nccl", i + 1, c,
				 name, ops->name);
			return SD_ERR_INVALID;
		}
		if (ops->env_check(name, value, why, sizeof(why)) != SD_OK) {
			snprintf(err, errlen, "test %zu (%s): env: %s", i + 1, c,
				 why[0] ? why : "refused by the backend");
			return SD_ERR_INVALID;
		}
		e += n + (e[n] == ' ');
	}
	return SD_OK;
}

int sd_runner_check_plan(const struct sd_backend_ops *ops,
			 const struct sd_plan *plan, char *err, size_t errlen)
{
	char have[512];
	int rc;
	for (size_t i = 0; i < plan->ntests; i++) {
		const struct sd_test_spec *t = &plan->tests[i];
		const struct sd_coll *c = sd_coll_get(t->op);
		/* what the test needs against what the backend has */
		const struct {
			int needed, has;
			const struct sd_name_row *names;
			uint32_t mask;
			int count;
			const char *what, *name, *advice;
		} need[] = {
			{ 1, !!(ops->ops & (1u << t->op)), sd_op_names,
			  ops->ops, SD_OP_COUNT, "", c->name, "it supports" },
			{ 1, !!(ops->dtypes & (1u << t->dtype)), sd_dtype_names,
			  ops->dtypes, SD_DTYPE_COUNT, "data type ",
			  sd_dtype_name(t->dtype), "use one of" },
			{ c->reduces, !!(ops->redops & (1u << t->redop)),
			  sd_redop_names, ops->redops, SD_REDOP_COUNT,
			  "reduction ", sd_redop_name(t->redop), "use one of" },
		};
		for (size_t k = 0; k < sizeof(need) / sizeof(need[0]); k++) {
			if (!need[k].needed || need[k].has)
				continue;
			sd_name_join(need[k].names, need[k].mask, need[k].count,
				     ", ", have, sizeof(have));
			snprintf(err, errlen, "the %s backend does not support "
				 "%s%s; %s %s", ops->name, need[k].what,
				 need[k].name, need[k].advice, have);
			return SD_ERR_INVALID;
		}
		if (strcmp(t->scope, "world") != 0 && !ops->comm_split) {
			snprintf(err, errlen, "the %s backend cannot split its "
				 "communicator, which scope %s needs; use scope "
				 "world", ops->name, t->scope);
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
		if (t->env[0] && (rc = check_env(ops, i, t, err, errlen)))
			return rc;
		char penv[1024], why[512];
		if (sd_transport_in_worker(t) &&
		    sd_transport_env(ops->name, t, penv, sizeof(penv), why,
				     sizeof(why))) {
			snprintf(err, errlen, "test %zu (%s): %s", i + 1,
				 c->name, why);
			return SD_ERR_INVALID;
		}
	}
	return SD_OK;
}

/* A step failed on this rank: let rank 0 judge, and return its verdict. */
static int step_failed(struct sd_runner *r, const struct sd_group *g,
		       uint32_t seq, int rc, const char *what, const char *err)
{
	char msg[600];
	snprintf(msg, sizeof(msg), "%s: %s", what, err[0] ? err : "failed");
	return sd_ctrl_fail(r->ctrl, g->id, seq, rc, msg, r->err,
			    sizeof(r->err));
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

/* Whether group rank k sends or receives in c (pt2pt leaves all but
 * ranks 0 and 1 idle). */
static int takes_part(const struct sd_coll *c, int k, int root)
{
	return sd_role_has(c->sends, k, root) ||
	       sd_role_has(c->receives, k, root);
}

/* Rank 0: turn the results of one group's n ranks (`res`, `stride` bytes
 * apart, by group rank; `members` their world ranks) into one
 * measurement.  Only the ranks that take part are timed: an idle rank's
 * near-zero time would make the operation look faster than it is. */
static void combine(const struct sd_coll *c, const struct sd_test_spec *t,
		    const char *res, int n, const int *members, size_t stride,
		    size_t sc, size_t rc_, int in_place,
		    struct sd_measurement *m)
{
	size_t ts = sd_dtype_size(t->dtype);
	memset(m, 0, sizeof(*m));
	m->size_bytes = sd_coll_size_bytes(sc, rc_, ts);
	m->count = sd_coll_param_count(c, sc, rc_, n);
	m->in_place = in_place;
	m->iters = (int)t->cfg.iters;
	m->warmup_iters = (int)t->cfg.warmup;
	m->first_wrong_rank = -1;
	m->time_us_min = INFINITY;
	double sum = 0;
	int timed = 0;
	for (int k = 0; k < n; k++) {
		const struct sd_rank_result *rr =
			(const void *)(res + (size_t)k * stride);
		if (takes_part(c, k, t->root)) {
			sum += rr->time_us;
			timed++;
			m->time_us_min = fmin(m->time_us_min, rr->time_us);
			m->time_us_max = fmax(m->time_us_max, rr->time_us);
		}
		m->checked |= rr->checked;
		m->wrong += rr->wrong;
		if (rr->wrong && m->first_wrong_rank < 0) {
			m->first_wrong_rank = members[k]; /* a world rank */
			m->first_wrong.index = rr->first_index;
			memcpy(m->first_wrong.expected, rr->expected,
			       sizeof(rr->expected));
			memcpy(m->first_wrong.got, rr->got, sizeof(rr->got));
		}
	}
	m->time_us_avg = timed ? sum / timed : 0;
	if (!timed)
		m->time_us_min = 0;
	switch (t->cfg.combine) {
	case SD_COMBINE_RANK0:
		m->time_us = ((const struct sd_rank_result *)(const void *)res)
				     ->time_us;
		break;
	case SD_COMBINE_MIN: m->time_us = m->time_us_min; break;
	case SD_COMBINE_MAX: m->time_us = m->time_us_max; break;
	default: m->time_us = m->time_us_avg; break;
	}
	if (t->cfg.per_iter && t->cfg.iters > 0) {
		/* each iteration ends when its slowest rank does */
		double *it = calloc((size_t)t->cfg.iters, sizeof(double));
		if (it) {
			for (int k = 0; k < n; k++) {
				if (!takes_part(c, k, t->root))
					continue;
				const double *v = (const void *)(
					res + (size_t)k * stride +
					sizeof(struct sd_rank_result));
				for (long i = 0; i < t->cfg.iters; i++)
					it[i] = fmax(it[i], v[i]);
			}
			qsort(it, (size_t)t->cfg.iters, sizeof(double), cmp_double);
			m->have_percentiles = 1;
			m->iter_us_min = it[0];
			m->iter_us_p50 = percentile(it, (size_t)t->cfg.iters, 50);
			m->iter_us_p99 = percentile(it, (size_t)t->cfg.iters, 99);
			m->iter_us_max = it[t->cfg.iters - 1];
			free(it);
		}
	}
	m->algbw_gbs = sd_algbw_gbs(m->size_bytes, m->time_us);
	m->busbw_gbs = m->algbw_gbs * sd_factor_value(c->busbw, n);
	m->ds_size_bytes = sc * ts;
	snprintf(m->ds_description, sizeof(m->ds_description), "%zux%zu", sc,
		 ts);
	sd_ds_bandwidth(c, n, m->ds_size_bytes, m->time_us,
			&m->ds_throughput_gbps, &m->ds_busbw_gbps);
	m->algo = t->algo;
}

/* How long one step may take as a whole.  In the world every rank is in
 * the same operations, so an operation's timeout is enough; groups run
 * side by side and rank 0 waits for the slowest, so a group's step may
 * take every operation of it (warm-up, timed, checks) each up to the
 * timeout.  Capped at a day. */
static int step_budget_ms(const struct sd_test_spec *t, int ngroups)
{
	if (ngroups <= 1)
		return t->cfg.timeout_ms;
	double ops = (double)t->cfg.warmup + (double)t->cfg.iters +
		     2.0 * (double)t->cfg.check_passes + 3;
	double ms = ops * t->cfg.timeout_ms;
	return ms > 86400e3 ? 86400000 : (int)ms;
}

/* One test as it runs on this rank: its spec, its groups (rank 0 reports
 * for all of them) and this rank's group. */
struct test_run {
	const struct sd_test_spec *t;
	size_t ti;                  /* its index in the plan */
	const struct sd_coll *c;
	struct sd_group *mine;
	int ngroups;
	int *group_of, *index_of;   /* by world rank */
	int *gsize, *gstart;        /* by group: its size, where its members
				       start in members[] */
	int *members;               /* world ranks, group by group */
	int max_size, min_size;     /* of the groups */
	struct sd_test_info *infos; /* rank 0: one per group */
	uint64_t *wrong;            /* rank 0: per group */
	struct sd_subject_result *res; /* rank 0: per group, what verdicts
				       judge */
	int *orig;                  /* a retry's groups: each one's index in
				       the full round; NULL: the same */
	void *sendbase, *recvbase;
	int in_worker;              /* its communicators are a worker's
				       (sd_worker_ops): measure there */
	/* rank 0: measurements of groups after the first, held until the
	 * test ends, since a writer takes one test at a time; group 0's go
	 * out as they come */
	struct held { int group; struct sd_measurement m; } *held;
	size_t nheld, capheld;
};

/* Rank 0: report one group's measurement now (group 0) or at the end. */
static int deliver(struct sd_runner *r, struct test_run *tr, int k,
		   const struct sd_measurement *m)
{
	tr->wrong[k] += m->wrong;
	/* what the verdicts judge: out of place, at the judged size or the
	 * largest below it (sizes come in ascending order) */
	struct sd_subject_result *x = &tr->res[k];
	uint64_t at = tr->t->expect.at_bytes;
	x->checked |= m->checked;
	x->wrong += m->wrong;
	if (!m->in_place && (!at || m->size_bytes <= at)) {
		x->have = 1;
		x->size_bytes = m->size_bytes;
		/* a group of one rank moves nothing between ranks (its bus
		 * bandwidth is 0 by definition): judge how fast it runs */
		x->busbw_gbs = tr->gsize[k] == 1 ? m->algbw_gbs : m->busbw_gbs;
		x->bw_name = tr->gsize[k] == 1 ? "algbw" : "busbw";
		x->time_us = m->time_us;
	}
	if (k == 0) {
		struct sd_event ev = { .kind = SD_EVENT_MEASUREMENT,
				       .test = &tr->infos[0], .m = m };
		sd_sinks_emit(r->sinks, &ev);
		return SD_OK;
	}
	if (tr->nheld == tr->capheld) {
		size_t cap = tr->capheld ? tr->capheld * 2 : 64;
		void *p = realloc(tr->held, cap * sizeof(*tr->held));
		if (!p)
			return SD_ERR_NOMEM;
		tr->held = p;
		tr->capheld = cap;
	}
	tr->held[tr->nheld].group = k;
	tr->held[tr->nheld++].m = *m;
	return SD_OK;
}

/* One size and placement in this rank's group.  Returns SD_OK (with *stop
 * when the ranks agreed to stop) or the status that ends the run. */
static int measure(struct sd_runner *r, struct test_run *tr, uint32_t *seq,
		   uint64_t size, int in_place, int *stop)
{
	const struct sd_test_spec *t = tr->t;
	const struct sd_coll *c = tr->c;
	const struct sd_group *g = tr->mine;
	const struct sd_backend_ops *ops = r->ops;
	struct sd_comm *comm = g->comm;
	int me = g->rank, n = g->size, world_me = r->bs->rank, rc;
	int idle = n == 0; /* in no group this round: only keeps in step */
	size_t ts = sd_dtype_size(t->dtype), sc, rcount;
	char err[512] = "", what[256], sz[32];
	char *mine = NULL, *all = NULL;
	size_t stride = sizeof(struct sd_rank_result) +
			(t->cfg.per_iter ? (size_t)t->cfg.iters * sizeof(double) : 0);
	sd_coll_counts(c, (size_t)(size / ts), ts, idle ? tr->max_size : n, &sc,
		       &rcount);

	struct sd_op_args a = { 0 };
	a.op = t->op;
	a.dtype = t->dtype;
	a.redop = t->redop;
	a.root = t->root < 0 ? 0 : t->root;
	a.in_place = in_place;
	a.send_count = sc;
	a.recv_count = rcount;
	a.algo = sd_runner_algo_index(ops, t->op, t->algo);
	a.timeout_ms = t->cfg.timeout_ms;
	a.seed = *seq * 2654435761u;
	sd_coll_place(&a, me, tr->sendbase, tr->recvbase);

	(*seq)++;
	sd_format_size(sd_coll_size_bytes(sc, rcount, ts), sz, sizeof(sz));
	snprintf(what, sizeof(what), "%s %s%s%s %s %s (test %d)", c->name,
		 sd_dtype_name(t->dtype), c->reduces ? " " : "",
		 c->reduces ? sd_redop_name(t->redop) : "", sz,
		 in_place ? "in-place" : "out-of-place",
		 (int)tr->ti + 1);
	if ((rc = sd_ctrl_progress(r->ctrl, g->id, *seq, t->cfg.timeout_ms,
				   step_budget_ms(t, tr->ngroups), what, r->err,
				   sizeof(r->err))))
		return rc;
	mine = calloc(1, stride);
	if (!mine)
		return step_failed(r, g, *seq, SD_ERR_NOMEM, "results",
				   "out of memory");

#define STEP(call, name)                                                     \
	do {                                                                 \
		if ((rc = (call))) {                                         \
			rc = step_failed(r, g, *seq, rc, name, err);         \
			goto out;                                            \
		}                                                            \
	} while (0)

	/* a rank in no group this round only keeps in step */
	if (!idle) {
		struct sd_rank_result *res = (void *)mine;
		double *iter_us = (void *)(mine + sizeof(*res));
		struct sd_measure_spec ms = {
			.iters = t->cfg.iters, .warmup = t->cfg.warmup,
			.check_passes = t->cfg.check_passes,
			.per_iter = t->cfg.per_iter
		};
		int here = r->fault && sd_fault_here(r->fault, world_me, t->op,
						     size, in_place);
		struct sd_measure_fault mf = {
			.fault = here ? r->fault : NULL,
			.slow = here && r->fault->kind == SD_FAULT_SLOW,
			.here = here
		};
		const char *step = "run";
		STEP(tr->in_worker
			     ? sd_worker_measure(comm, &a, &ms, &mf, res,
						 iter_us, &step, err,
						 sizeof(err))
			     : sd_measure_local(ops, comm, &a, &ms, &mf, res,
						iter_us, &step, err,
						sizeof(err)),
		     step);
	}
	if (world_me == 0 && !(all = malloc(stride * (size_t)r->bs->size)) &&
	    snprintf(err, sizeof(err), "out of memory"))
		STEP(SD_ERR_NOMEM, "results");
#undef STEP
	rc = sd_ctrl_exchange(r->ctrl, g->id, *seq, mine, stride, all,
			      r->cancel && *r->cancel, stop, r->err,
			      sizeof(r->err));
	if (rc)
		goto out;
	if (world_me == 0) {
		char *grp = malloc(stride * (size_t)tr->max_size);
		for (int k = 0; grp && k < tr->ngroups; k++) {
			struct sd_measurement m;
			const int *mem = tr->members + tr->gstart[k];
			int nk = tr->gsize[k];
			size_t sk, rk;
			/* the group's rows, by group rank, and its counts */
			for (int q = 0; q < nk; q++)
				memcpy(grp + (size_t)q * stride,
				       all + (size_t)mem[q] * stride, stride);
			sd_coll_counts(c, (size_t)(size / ts), ts, nk, &sk, &rk);
			combine(c, t, grp, nk, mem, stride, sk, rk, in_place,
				&m);
			if (a.algo < 0 && ops->algo_auto && ops->algo_name) {
				/* the algorithm auto ran, for the record */
				struct sd_op_args ak = a;
				ak.send_count = sk;
				ak.recv_count = rk;
				int idx = ops->algo_auto(&ak, nk);
				const char *nm = idx >= 0
					? ops->algo_name(t->op, idx) : NULL;
				if (nm)
					m.algo = nm;
			}
			if (deliver(r, tr, k, &m)) {
				free(grp);
				grp = NULL;
				break;
			}
		}
		if (!grp && snprintf(err, sizeof(err), "out of memory")) {
			rc = step_failed(r, g, *seq, SD_ERR_NOMEM, "results",
					 err);
			goto out;
		}
		free(grp);
	}
	if (*stop)
		snprintf(r->cut_short, sizeof(r->cut_short), "%s", what);
out:
	free(all);
	free(mine);
	return rc;
}

/* How reasons name a plan test: "plan test 2 (all_reduce float32,
 * node-pairs, tcp eth1)", the path where it ran one of its own. */
static void plan_test_name(const struct sd_test_spec *t, size_t ti, char *buf,
			   size_t len)
{
	char variant[64];
	sd_transport_variant(t, variant, sizeof(variant));
	snprintf(buf, len, "plan test %zu (%s %s, %s%s%s)", ti + 1,
		 sd_op_name(t->op), sd_dtype_name(t->dtype), t->scope,
		 variant[0] ? ", " : "", variant);
}

/* Rank 0: end group k's test (status from its wrong count, or cut short). */
static void end_group(struct sd_runner *r, struct test_run *tr, int k,
		      int stop)
{
	char msg[400] = "";
	struct sd_event ev = { .kind = SD_EVENT_TEST_END,
			       .test = &tr->infos[k], .status = "passed" };
	if (stop) {
		ev.status = "cancelled";
		snprintf(msg, sizeof(msg), "cut short by a signal during %s",
			 r->cut_short);
	} else if (tr->wrong[k]) {
		ev.status = "failed";
		snprintf(msg, sizeof(msg), "%llu wrong elements",
			 (unsigned long long)tr->wrong[k]);
	}
	ev.message = msg[0] ? msg : NULL;
	if (tr->wrong[k])
		r->wrong_tests++;
	sd_sinks_emit(r->sinks, &ev);
}

/* Rank 0: the test is over; group 0 ends, then every other group is
 * reported whole, one after the other. */
static void end_test(struct sd_runner *r, struct test_run *tr, int stop)
{
	end_group(r, tr, 0, stop);
	for (int k = 1; k < tr->ngroups; k++) {
		struct sd_event ev = { .kind = SD_EVENT_TEST_BEGIN,
				       .test = &tr->infos[k] };
		sd_sinks_emit(r->sinks, &ev);
		ev.kind = SD_EVENT_MEASUREMENT;
		for (size_t i = 0; i < tr->nheld; i++) {
			if (tr->held[i].group != k)
				continue;
			ev.m = &tr->held[i].m;
			sd_sinks_emit(r->sinks, &ev);
		}
		end_group(r, tr, k, stop);
	}
}

/* The host-pair scopes: every pair (node-pairs), neighbours
 * (node-pairs:ring), or K random matchings (node-pairs:random:K).
 * Returns 0 for another scope. */
enum { PAIRS_NONE, PAIRS_ALL, PAIRS_RING, PAIRS_RANDOM, PAIRS_ADAPTIVE };
static int host_pairs_kind(const char *full, int *k)
{
	long v;
	char scope[32];
	sd_scope_one_rank(full, scope, sizeof(scope));
	if (strcmp(scope, "node-pairs") == 0)
		return PAIRS_ALL;
	if (strcmp(scope, "node-pairs:ring") == 0)
		return PAIRS_RING;
	if (strncmp(scope, "node-pairs:random:", 18) == 0 &&
	    !sd_parse_int(scope + 18, 1, 1000000, &v)) {
		*k = (int)v;
		return PAIRS_RANDOM;
	}
	if (strcmp(scope, "node-pairs:adaptive") == 0) {
		*k = 0;
		return PAIRS_ADAPTIVE;
	}
	if (strncmp(scope, "node-pairs:adaptive:", 20) == 0 &&
	    !sd_parse_int(scope + 20, 0, SD_ADAPTIVE_MAX_MORE, &v)) {
		*k = (int)v;
		return PAIRS_ADAPTIVE;
	}
	return PAIRS_NONE;
}

/* The seed of random and adaptive partners: the plan's, or one the same
 * on every rank and every run of the same test. */
static unsigned long long pairs_seed(const struct sd_test_spec *t)
{
	if (t->has_seed)
		return t->seed;
	return sd_fnv1a(SD_FNV_INIT, t->scope, strlen(t->scope)) ^
	       (unsigned long long)t->op;
}

/* A round of pairs chosen as it goes (node-pairs:adaptive): every host's
 * group, and each group's pair of the driver (lib/schedule.h). */
struct chosen {
	const int *host_group;
	int round;                        /* 1.. */
	const int *pair;                  /* rank 0: group k's pair */
	const struct sd_adaptive_pair *pairs; /* rank 0 */
	int *subject_of;                  /* rank 0: each pair's subject */
	unsigned long long seed;
};

/* Slot `slot` of round `round` of a host-pair scope over n hosts; perm is
 * the round's matching for random. */
static int host_pair(int kind, int n, int round, int slot, const int *perm,
		     int *a, int *b)
{
	switch (kind) {
	case PAIRS_ALL: return sd_rr_pair(n, round, slot, a, b);
	case PAIRS_RING: return sd_ring_pair(n, round, slot, a, b);
	default:
		if (2 * slot + 1 >= n)
			return 0;
		*a = perm[2 * slot];
		*b = perm[2 * slot + 1];
		return 1;
	}
}

/* Whether a test's partners are drawn with a seed (random and adaptive
 * node pairs). */
static int pk_seeded(const struct sd_test_spec *t)
{
	int k, kind = host_pairs_kind(t->scope, &k);
	return kind == PAIRS_RANDOM || kind == PAIRS_ADAPTIVE;
}

/* The groups' starts in members[], their members, and the largest and
 * smallest group, from group_of, index_of and gsize. */
static void finish_layout(struct test_run *tr, int n)
{
	for (int g = 0; g < tr->ngroups; g++)
		tr->gstart[g + 1] = tr->gstart[g] + tr->gsize[g];
	for (int q = 0; q < n; q++)
		if (tr->group_of[q] >= 0)
			tr->members[tr->gstart[tr->group_of[q]] +
				    tr->index_of[q]] = q;
	tr->max_size = 0;
	tr->min_size = tr->ngroups ? n : 0;
	for (int g = 0; g < tr->ngroups; g++) {
		/* a host index with no rank (never, from cmd_run) is a
		 * group of none; it takes no part */
		if (tr->gsize[g] > tr->max_size)
			tr->max_size = tr->gsize[g];
		if (tr->gsize[g] && tr->gsize[g] < tr->min_size)
			tr->min_size = tr->gsize[g];
	}
}

/* The groups of test t in round `round`: for every world rank its group
 * (-1: none this round) and its index in it; the groups' sizes and members
 * (group by group, in rank order).  The world is one group; split:K blocks
 * of K; node the ranks of each host; rail local rank i of every host;
 * gpu-pairs and node-pairs the round's pairs of ranks inside a host, or of
 * hosts (lib/schedule.h).  Returns 0, or -1 (out of memory). */
static int layout_groups(const struct sd_runner *r,
			 const struct sd_test_spec *t,
			 const struct sd_hosts *hs, int round,
			 const int *host_group, struct test_run *tr)
{
	int n = r->bs->size;
	if (host_group) {
		/* a bisection's sets of hosts: group host_group[h], or none */
		tr->group_of = calloc((size_t)n, sizeof(int));
		tr->index_of = calloc((size_t)n, sizeof(int));
		tr->gsize = calloc((size_t)n + 1, sizeof(int));
		tr->gstart = calloc((size_t)n + 2, sizeof(int));
		tr->members = calloc((size_t)n, sizeof(int));
		if (!tr->group_of || !tr->index_of || !tr->gsize ||
		    !tr->gstart || !tr->members)
			return -1;
		/* adaptive node pairs ":one": the first rank of each host */
		char base[32];
		int first = sd_scope_one_rank(t->scope, base, sizeof(base));
		tr->ngroups = 0;
		for (int q = 0; q < n; q++)
			tr->group_of[q] = -1;
		for (int h = 0; h < hs->nhosts; h++)
			for (int i = 0; i < (first ? 1 : hs->count[h]); i++)
				tr->group_of[hs->ranks[h][i]] = host_group[h];
		for (int q = 0; q < n; q++) {
			int g = tr->group_of[q];
			if (g < 0)
				continue;
			tr->index_of[q] = tr->gsize[g]++;
			if (g + 1 > tr->ngroups)
				tr->ngroups = g + 1;
		}
		finish_layout(tr, n);
		return 0;
	}
	int node = strcmp(t->scope, "node") == 0;
	int rail = strcmp(t->scope, "rail") == 0;
	int gpu_pairs = strcmp(t->scope, "gpu-pairs") == 0;
	int kk = 0, pk = host_pairs_kind(t->scope, &kk);
	int node_pairs = pk != PAIRS_NONE;
	char base[32];
	int one = sd_scope_one_rank(t->scope, base, sizeof(base));
	int *perm = pk == PAIRS_RANDOM ? calloc((size_t)hs->nhosts + 1,
						 sizeof(int))
				       : NULL;
	if (perm)
		sd_random_matching(hs->nhosts, round, pairs_seed(t), perm);
	int *host = calloc((size_t)n, sizeof(int));    /* of each rank */
	int *local = calloc((size_t)n, sizeof(int));   /* index on its host */
	tr->group_of = calloc((size_t)n, sizeof(int));
	tr->index_of = calloc((size_t)n, sizeof(int));
	tr->gsize = calloc((size_t)n, sizeof(int));
	tr->gstart = calloc((size_t)n + 1, sizeof(int));
	tr->members = calloc((size_t)n, sizeof(int));
	int ok = host && local && tr->group_of && tr->index_of && tr->gsize &&
		 tr->gstart && tr->members && (pk != PAIRS_RANDOM || perm);
	for (int h = 0; ok && h < hs->nhosts; h++)
		for (int i = 0; i < hs->count[h]; i++) {
			host[hs->ranks[h][i]] = h;
			local[hs->ranks[h][i]] = i;
		}
	tr->ngroups = 0;
	if (ok && (gpu_pairs || node_pairs)) {
		/* this round's pairs; the ranks of no pair sit it out */
		for (int q = 0; q < n; q++)
			tr->group_of[q] = -1;
		for (int h = 0; gpu_pairs && h < hs->nhosts; h++)
			for (int sl = 0; sl < sd_rr_slots(hs->count[h]); sl++) {
				int a, b;
				if (!sd_gpu_pairs_pair(hs, h, round, sl, &a, &b))
					continue;
				tr->group_of[a] = tr->group_of[b] =
					tr->ngroups++;
			}
		for (int sl = 0; node_pairs && sl < sd_rr_slots(hs->nhosts);
		     sl++) {
			int ha, hb;
			if (!host_pair(pk, hs->nhosts, round, sl, perm, &ha,
				       &hb))
				continue;
			/* all ranks of both hosts, or (":one") the first of
			 * each */
			for (int i = 0; i < (one ? 1 : hs->count[ha]); i++)
				tr->group_of[hs->ranks[ha][i]] = tr->ngroups;
			for (int i = 0; i < (one ? 1 : hs->count[hb]); i++)
				tr->group_of[hs->ranks[hb][i]] = tr->ngroups;
			tr->ngroups++;
		}
		for (int q = 0; q < n; q++)
			if (tr->group_of[q] >= 0)
				tr->index_of[q] = tr->gsize[tr->group_of[q]]++;
	}
	for (int q = 0; ok && !gpu_pairs && !node_pairs && q < n; q++) {
		int k = t->group_size > 0 ? t->group_size : n;
		int g = node ? host[q] : rail ? local[q] : q / k;
		tr->group_of[q] = g;
		tr->index_of[q] = tr->gsize[g]++;
		if (g + 1 > tr->ngroups)
			tr->ngroups = g + 1;
	}
	if (ok)
		finish_layout(tr, n);
	free(host);
	free(local);
	free(perm);
	return ok ? 0 : -1;
}

/* A retry: keep only the groups of the round marked in keep[0..nkeep)
 * (by their index in the full round), renumbered 0.. in order; tr->orig maps back.
 * Returns 0 or -1 (out of memory). */
static int keep_groups(struct test_run *tr, const unsigned char *keep,
		       int nkeep, int n)
{
	int *newid = calloc((size_t)tr->ngroups + 1, sizeof(int));
	tr->orig = calloc((size_t)tr->ngroups + 1, sizeof(int));
	if (!newid || !tr->orig) {
		free(newid);
		return -1;
	}
	int m = 0;
	for (int g = 0; g < tr->ngroups; g++) {
		int kept = g < nkeep && keep[g];
		newid[g] = kept ? m : -1;
		if (kept)
			tr->orig[m++] = g;
	}
	memset(tr->gsize, 0, (size_t)n * sizeof(int));
	for (int q = 0; q < n; q++) {
		int g = tr->group_of[q];
		tr->group_of[q] = g >= 0 ? newid[g] : -1;
		if (tr->group_of[q] >= 0)
			tr->index_of[q] = tr->gsize[tr->group_of[q]]++;
	}
	tr->ngroups = m;
	memset(tr->gstart, 0, ((size_t)n + 1) * sizeof(int));
	finish_layout(tr, n);
	free(newid);
	return 0;
}

/* Rank 0: the test cannot run because a group is too small for its op:
 * record it as skipped in every group, and say why. */
static void skip_test(struct sd_runner *r, struct test_run *tr,
		      const char *why)
{
	char msg[300];
	if (why)
		snprintf(msg, sizeof(msg), "%s", why);
	else
		snprintf(msg, sizeof(msg),
			 "a group of %d rank%s is too small for %s, which "
			 "needs %d",
			 tr->min_size, tr->min_size == 1 ? "" : "s",
			 tr->c->name, tr->c->min_ranks);
	for (int k = 0; k < tr->ngroups; k++) {
		struct sd_event ev = { .kind = SD_EVENT_TEST_BEGIN,
				       .test = &tr->infos[k] };
		sd_sinks_emit(r->sinks, &ev);
		ev.kind = SD_EVENT_TEST_END;
		ev.status = "skipped";
		ev.message = msg;
		sd_sinks_emit(r->sinks, &ev);
	}
}

/* A test's subjects (its groups over every round), on rank 0, with what
 * each measured at its last attempt. */
struct subject {
	int round, group;      /* where it ran: round, index in the round */
	int index;             /* sd_test_info.index of its last attempt */
	int attempts;
	int nmem;
	int *members;          /* world ranks */
	struct sd_subject_result res;
};
struct subjects {
	struct subject *v;
	size_t n, cap;
};

static void subjects_free(struct subjects *a)
{
	for (size_t i = 0; i < a->n; i++)
		free(a->v[i].members);
	free(a->v);
	memset(a, 0, sizeof(*a));
}

/* Rank 0: the round's groups join the test's subjects; a retry's replace
 * the attempt before.  Returns 0 or -1 (out of memory). */
static int push_subjects(struct subjects *a, const struct test_run *tr,
			 int round, const struct chosen *ch)
{
	for (int k = 0; k < tr->ngroups; k++) {
		int g = tr->orig ? tr->orig[k] : k;
		struct subject *x = NULL;
		for (size_t i = 0; tr->orig && i < a->n && !x; i++)
			if (a->v[i].round == round && a->v[i].group == g)
				x = &a->v[i];
		/* a chosen pair measured again: its subject */
		int *at = ch ? &ch->subject_of[ch->pair[k]] : NULL;
		if (at && *at >= 0)
			x = &a->v[*at];
		else if (at)
			*at = (int)a->n;
		if (x) {
			/* the last attempt's measurement; wrong data of any
			 * attempt stays */
			uint64_t wrong = x->res.wrong;
			int checked = x->res.checked;
			x->res = tr->res[k];
			x->res.wrong += wrong;
			x->res.checked |= checked;
			x->index = tr->infos[k].index;
			x->attempts++;
			continue;
		}
		if (a->n == a->cap) {
			size_t cap = a->cap ? a->cap * 2 : 16;
			void *p = realloc(a->v, cap * sizeof(*a->v));
			if (!p)
				return -1;
			a->v = p;
			a->cap = cap;
		}
		x = &a->v[a->n];
		*x = (struct subject){ .round = round, .group = g,
				       .index = tr->infos[k].index,
				       .attempts = 1, .nmem = tr->gsize[k],
				       .res = tr->res[k] };
		x->members = malloc((size_t)(x->nmem ? x->nmem : 1) *
				    sizeof(int));
		if (!x->members)
			return -1;
		memcpy(x->members, tr->members + tr->gstart[k],
		       (size_t)x->nmem * sizeof(int));
		a->n++;
	}
	return 0;
}

/* Rank 0: which attempt a retry of group g of round `round` is: one
 * more than its subject has had. */
static int attempt_of(const struct subjects *a, int round, int g)
{
	for (size_t i = 0; a && i < a->n; i++)
		if (a->v[i].round == round && a->v[i].group == g)
			return a->v[i].attempts + 1;
	return 1;
}

/* Whether this host has the InfiniBand (or RoCE) device a test of
 * transport ib needs: hca (NCCL_IB_HCA's "mlx5_0" or "mlx5_0:1"), or any
 * when empty. */
static int ib_present(const char *hca)
{
	char path[160];
	if (hca && hca[0]) {
		snprintf(path, sizeof(path), "/sys/class/infiniband/%.*s",
			 (int)strcspn(hca, ":"), hca);
		return access(path, F_OK) == 0;
	}
	DIR *d = opendir("/sys/class/infiniband");
	struct dirent *e;
	int n = 0;
	while (d && (e = readdir(d)))
		n += e->d_name[0] != '.';
	if (d)
		closedir(d);
	return n > 0;
}

/* A test of transport ib under NCCL, before its workers start: where no
 * host has an IB device the test is skipped (*skip; a cluster without
 * InfiniBand or RoCE); where some lack one that others have, each such
 * rank fails (a missing or dead HCA: its node is to blame). */
static int ib_check(struct sd_runner *r, struct test_run *tr,
		    struct sd_group *g, uint32_t *seq, int *stop, int *skip)
{
	const struct sd_test_spec *t = tr->t;
	int me = r->bs->rank, n = r->bs->size, rc;
	unsigned char have = (unsigned char)ib_present(t->iface), word = 0;
	unsigned char *all = me == 0 ? calloc((size_t)n, 1) : NULL;
	*skip = 0;
	if (me == 0 && !all)
		return step_failed(r, g, *seq + 1, SD_ERR_NOMEM, "ib",
				   "out of memory");
	(*seq)++;
	rc = sd_ctrl_progress(r->ctrl, g->id, *seq, t->cfg.timeout_ms,
			      t->cfg.timeout_ms,
			      "looking for the InfiniBand device of a test "
			      "of transport ib",
			      r->err, sizeof(r->err));
	if (!rc)
		rc = sd_ctrl_exchange(r->ctrl, g->id, *seq, &have, 1, all,
				      r->cancel && *r->cancel, stop, r->err,
				      sizeof(r->err));
	if (!rc && me == 0) {
		int k = 0;
		for (int q = 0; q < n; q++)
			k += all[q];
		word = k == 0 ? 1 : k < n ? 2 : 0;
	}
	free(all);
	void *got = NULL;
	size_t gotlen = 0;
	if (!rc) {
		(*seq)++;
		rc = sd_ctrl_decide(r->ctrl, g->id, *seq, &word, 1, &got,
				    &gotlen, r->err, sizeof(r->err));
	}
	if (rc)
		return rc;
	word = got && gotlen == 1 ? *(unsigned char *)got : 0;
	free(got);
	if (word == 1)
		*skip = 1;
	else if (word == 2 && !have) {
		char err[300];
		snprintf(err, sizeof(err),
			 "no InfiniBand or RoCE device %s%sin "
			 "/sys/class/infiniband, which other nodes of the job "
			 "have: a missing or dead HCA (check ibstat)",
			 t->iface[0] ? t->iface : "",
			 t->iface[0] ? " " : "");
		return step_failed(r, g, *seq, SD_ERR_NODEV,
				   "test of transport ib", err);
	}
	return SD_OK;
}

/* After a proved test's sizes (path_proof.h): each rank reads its
 * worker's account of the connections it made, and rank 0 judges each
 * group's subject from its members' accounts. */
static int prove_path(struct sd_runner *r, struct test_run *tr,
		      const struct sd_group *g, struct sd_worker *wk,
		      const char *nccl_log, uint32_t *seq, int *stop)
{
	const struct sd_test_spec *t = tr->t;
	int me = r->bs->rank, n = r->bs->size, rc;
	int nccl = strcmp(r->ops->name, "nccl") == 0;
	struct sd_path_tally mine, *all = NULL;
	char what[160];
	sd_path_tally_init(&mine);
	if (me == 0 && !(all = calloc((size_t)n, sizeof(*all))))
		return step_failed(r, g, *seq + 1, SD_ERR_NOMEM, "proof",
				   "out of memory");
	(*seq)++;
	snprintf(what, sizeof(what),
		 "reading which path test %d's connections took",
		 (int)tr->ti + 1);
	rc = sd_ctrl_progress(r->ctrl, g->id, *seq, t->cfg.timeout_ms,
			      t->cfg.timeout_ms, what, r->err,
			      sizeof(r->err));
	if (rc) {
		free(all);
		return rc;
	}
	if (g->size > 0) {
		const int *mem = tr->members + tr->gstart[g->id];
		if (nccl)
			sd_path_read_nccl(nccl_log, t->transport, g->rank, mem,
					  g->size, r->host_of, &mine);
		else
			sd_path_read_sockets(NULL, sd_worker_pid(wk), t->iface,
					     &mine);
	}
	rc = sd_ctrl_exchange(r->ctrl, g->id, *seq, &mine, sizeof(mine), all,
			      r->cancel && *r->cancel, stop, r->err,
			      sizeof(r->err));
	if (!rc && me == 0) {
		struct sd_path_tally *grp =
			malloc((size_t)tr->max_size * sizeof(*grp));
		for (int k = 0; grp && k < tr->ngroups; k++) {
			const int *mem = tr->members + tr->gstart[k];
			struct sd_subject_result *x = &tr->res[k];
			for (int q = 0; q < tr->gsize[k]; q++)
				grp[q] = all[mem[q]];
			x->path_judged = sd_path_judge(
				r->ops->name, t->transport, t->iface, grp,
				mem, tr->gsize[k], r->host_of, r->ranks,
				&x->path_asked, &x->path_took, x->path_reason,
				sizeof(x->path_reason));
		}
		if (!grp)
			rc = step_failed(r, g, *seq, SD_ERR_NOMEM, "proof",
					 "out of memory");
		free(grp);
	}
	free(all);
	return rc;
}

/* Run round `round` of test ti on this rank's group (only the groups
 * marked in `keep` when not NULL: a retry); *stop when the ranks stopped.
 * Rank 0 adds the groups to `acc`. */
static int run_round(struct sd_runner *r, size_t ti,
		     const struct sd_hosts *hs, int round,
		     const unsigned char *keep, int nkeep,
		     const struct sd_test_spec *spec, const int *host_group,
		     const struct chosen *ch, struct subjects *acc,
		     uint32_t *seq, int *index, int *stop)
{
	const struct sd_backend_ops *ops = r->ops;
	const struct sd_test_spec *t = spec ? spec : &r->plan->tests[ti];
	const struct sd_coll *c = sd_coll_get(t->op);
	int me = r->bs->rank, rc = SD_OK;
	size_t ts = sd_dtype_size(t->dtype);
	char err[512] = "";
	struct test_run tr = { .t = t, .ti = ti, .c = c };
	struct sd_group g = { .comm = r->comm };
	struct sd_comm *made = NULL, *split = NULL;
	struct sd_worker *wk = NULL;
	char **mtext = NULL;
	char variant[64]; /* the path, when the test asks for its own */
	char nccl_log[256] = ""; /* where its NCCL workers log (a proof) */
	uint64_t *sizes = NULL;
	size_t nsizes = 0;

	tr.mine = &g;
	sd_transport_variant(t, variant, sizeof(variant));
	if (layout_groups(r, t, hs, round, ch ? ch->host_group : host_group,
			  &tr) ||
	    (keep && keep_groups(&tr, keep, nkeep, r->bs->size))) {
		rc = step_failed(r, &g, *seq + 1, SD_ERR_NOMEM, "groups",
				 "out of memory");
		goto out;
	}
	int idle = tr.group_of[me] < 0;
	/* a rank in no group this round keeps in step as the pseudo-group
	 * after the last */
	g.id = idle ? tr.ngroups : tr.group_of[me];
	g.rank = idle ? 0 : tr.index_of[me];
	g.size = idle ? 0 : tr.gsize[g.id];
	g.members = idle ? NULL : tr.members + tr.gstart[g.id];
	sd_ctrl_name_group(r->ctrl, tr.ngroups, "idle in this round");
	/* every rank names every group alike, for the messages */
	mtext = calloc((size_t)tr.ngroups, sizeof(*mtext));
	for (int gi = 0; mtext && gi < tr.ngroups; gi++) {
		mtext[gi] = sd_rank_list(tr.members + tr.gstart[gi],
					 tr.gsize[gi]);
		char name[96] = "";
		if (tr.ngroups > 1 && mtext[gi])
			snprintf(name, sizeof(name), "group %d (ranks %.60s)",
				 gi, mtext[gi]);
		sd_ctrl_name_group(r->ctrl, gi, name);
	}
	nsizes = sd_size_series(t->cfg.min_bytes, t->cfg.max_bytes,
				t->cfg.step_factor, t->cfg.step_bytes, NULL,
				SD_MAX_SIZES);
	sizes = calloc(nsizes ? nsizes : 1, sizeof(*sizes));
	if (me == 0) {
		size_t ng = (size_t)tr.ngroups + 1;
		tr.infos = calloc(ng, sizeof(*tr.infos));
		tr.wrong = calloc(ng, sizeof(*tr.wrong));
		tr.res = calloc(ng, sizeof(*tr.res));
	}
	int have = sizes && mtext;
	for (int gi = 0; have && gi < tr.ngroups; gi++)
		have = mtext[gi] != NULL;
	if (!have || (me == 0 && (!tr.infos || !tr.wrong || !tr.res))) {
		rc = step_failed(r, &g, *seq + 1, SD_ERR_NOMEM, "sizes",
				 "out of memory");
		goto out;
	}
	sd_size_series(t->cfg.min_bytes, t->cfg.max_bytes, t->cfg.step_factor,
		       t->cfg.step_bytes, sizes, nsizes);
	if (me == 0) {
		for (int gi = 0; gi < tr.ngroups; gi++)
			tr.infos[gi] = (struct sd_test_info){
				.index = (*index)++, .name = c->name,
				.op = t->op, .dtype = t->dtype,
				.redop = t->redop, .has_redop = c->reduces,
				.root = t->root, .scope = t->scope,
				.algo = t->algo, .nranks = tr.gsize[gi],
				.group = gi, .members = mtext[gi],
				.in_place = c->has_in_place && t->cfg.in_place,
				.plan_test = (int)ti + 1,
				.attempt = ch ? ch->pairs[ch->pair[gi]].attempts
					: keep ? attempt_of(acc, round,
							    tr.orig[gi])
					       : 1,
				.variant = variant,
				/* a bisection's sets are no round of the
				 * test's schedule */
				.round = ch ? ch->round : host_group ? 0
								    : round + 1,
				.pairing = !ch ? NULL
					   : ch->pairs[ch->pair[gi]].attempts > 1
						   ? sd_pairing_name(
							     SD_PAIRING_RETRY)
						   : sd_pairing_name(
							     ch->pairs[ch->pair[gi]]
								     .why),
				.has_seed = ch || pk_seeded(t),
				.seed = ch ? ch->seed : pairs_seed(t),
			};
		if (r->on_test)
			r->on_test(r->on_test_arg, ti, r->plan->ntests,
				   &tr.infos[0]);
	}
	if (tr.min_size < c->min_ranks) {
		/* every rank knows every group: all skip alike */
		if (me == 0)
			skip_test(r, &tr, NULL);
		goto out;
	}
	/* a test with its own library settings (env: NCCL_* pairs, each
	 * taken by the backend's env_check) runs on a fresh communicator
	 * made with them, and groups smaller than the job on a split of it
	 * (both collective) */
	char what[160];
	snprintf(what, sizeof(what), "setting up test %zu (%s)", ti + 1,
		 c->name);
	if ((rc = sd_ctrl_progress(r->ctrl, g.id, *seq + 1, t->cfg.timeout_ms,
				   step_budget_ms(t, tr.ngroups), what, r->err,
				   sizeof(r->err))))
		goto out;
	const char *step = NULL;
	if (!strcmp(ops->name, "nccl") && !strcmp(t->transport, "ib")) {
		int skip = 0;
		if ((rc = ib_check(r, &tr, &g, seq, stop, &skip)))
			goto out;
		if (skip) {
			if (me == 0)
				skip_test(r, &tr,
					  "no node of the job has an InfiniBand "
					  "or RoCE device (/sys/class/"
					  "infiniband): no fabric but TCP to "
					  "test");
			goto out;
		}
	}
	if (sd_transport_in_worker(t)) {
		/* a test of another path: in a worker process per rank,
		 * started with the path's settings (worker.h), and for NCCL
		 * those that make it write down the connections it made,
		 * to a file of this worker's (path_proof.h) */
		char penv[1280], proof[512] = "";
		step = "starting the test's worker process";
		rc = sd_transport_env(ops->name, t, penv, sizeof(penv), err,
				      sizeof(err));
		if (!rc && !strcmp(ops->name, "nccl") &&
		    sd_transport_proof(ops->name, t)) {
			static unsigned nlog;
			const char *tmp = getenv("TMPDIR");
			if (!tmp || !tmp[0] || strchr(tmp, ' ') ||
			    strlen(tmp) > sizeof(nccl_log) - 64)
				tmp = "/tmp";
			snprintf(nccl_log, sizeof(nccl_log),
				 "%s/shakedown-nccl-%d-%u.log", tmp,
				 (int)getpid(), nlog++);
			unlink(nccl_log);
			sd_transport_proof_env(ops->name, t, nccl_log, proof,
					       sizeof(proof));
			size_t used = strlen(penv);
			snprintf(penv + used, sizeof(penv) - used, "%s%s",
				 used && proof[0] ? " " : "", proof);
		}
		struct sd_worker_spec ws = {
			.exe = r->exe, .backend = ops->name, .env = penv,
			.variant = variant, .cancel = r->cancel,
			.timeout_ms = step_budget_ms(t, tr.ngroups) +
				      t->cfg.timeout_ms,
		};
		if (!rc)
			rc = sd_worker_start(&ws, r->bs, &wk, err, sizeof(err));
		/* a test's iface reaches its workers through their
		 * environment (SHAKEDOWN_GLOO_IFACE, NCCL_SOCKET_IFNAME, or
		 * for ib NCCL_IB_HCA, which is no socket interface), so that
		 * a process_env may override it; --iface only where the test
		 * names none */
		struct sd_comm_config cfg = {
			.timeout_ms = t->cfg.timeout_ms,
			.iface = t->iface[0] ? NULL : r->iface,
			.env = t->env[0] ? t->env : NULL
		};
		if (!rc) {
			step = "creating the communicator in the test's worker "
			       "process";
			rc = sd_worker_comm_create(wk, &cfg, &made, err,
						   sizeof(err));
		}
		if (!rc) {
			ops = &sd_worker_ops;
			g.comm = made;
			tr.in_worker = 1;
		}
		set_active(ops, 0, made);
	} else if (t->env[0]) {
		struct sd_comm_config cfg = { .timeout_ms = t->cfg.timeout_ms,
					      .iface = r->iface, .env = t->env };
		step = "creating the communicator for the test's env";
		if ((rc = ops->comm_create(r->bs, &cfg, &made, err,
					   sizeof(err))))
			made = NULL;
		else
			g.comm = made;
		set_active(ops, 0, made);
	}
	if (!rc && (tr.ngroups > 1 || tr.gsize[0] < r->bs->size)) {
		step = "splitting the communicator into groups";
		if ((rc = ops->comm_split(g.comm, idle ? -1 : g.id, g.rank,
					  &split, err, sizeof(err))))
			split = NULL;
		else
			g.comm = split; /* NULL for a rank idle this round */
		set_active(ops, 1, split);
	}
	if (rc) {
		rc = step_failed(r, &g, *seq + 1, rc, step, err);
		goto out;
	}
	size_t bytes = idle ? 0 : sd_coll_buffer_bytes(c, t->cfg.max_bytes,
							ts, g.size);
	if (!idle &&
	    ((rc = ops->buf_alloc(g.comm, bytes ? bytes : ts, &tr.sendbase, err,
				  sizeof(err))) ||
	     (rc = ops->buf_alloc(g.comm, bytes ? bytes : ts, &tr.recvbase,
				  err, sizeof(err))))) {
		rc = step_failed(r, &g, *seq + 1, rc, "allocating buffers", err);
		goto out;
	}
	if (me == 0) {
		struct sd_event ev = { .kind = SD_EVENT_TEST_BEGIN,
				       .test = &tr.infos[0] };
		sd_sinks_emit(r->sinks, &ev);
	}
	for (size_t si = 0; si < nsizes && !*stop; si++) {
		/* the same sizes in every group, so that the steps keep
		 * in step: a size too small for the largest group is left
		 * out everywhere */
		size_t s, rcount;
		sd_coll_counts(c, (size_t)(sizes[si] / ts), ts, tr.max_size, &s,
			       &rcount);
		if (s == 0 && rcount == 0)
			continue;
		if (me == 0 && r->on_measure)
			r->on_measure(r->on_test_arg, ti, sizes, nsizes, si, 0);
		if ((rc = measure(r, &tr, seq, sizes[si], 0, stop)))
			goto out;
		if (!*stop && c->has_in_place && t->cfg.in_place && me == 0 &&
		    r->on_measure)
			r->on_measure(r->on_test_arg, ti, sizes, nsizes, si, 1);
		if (!*stop && c->has_in_place && t->cfg.in_place &&
		    (rc = measure(r, &tr, seq, sizes[si], 1, stop)))
			goto out;
	}
	if (!*stop && tr.in_worker && sd_transport_proof(r->ops->name, t) &&
	    (rc = prove_path(r, &tr, &g, wk, nccl_log, seq, stop)))
		goto out;
	if (me == 0) {
		end_test(r, &tr, *stop);
		if (!*stop && acc && push_subjects(acc, &tr, round, ch))
			rc = step_failed(r, &g, *seq, SD_ERR_NOMEM, "verdicts",
					 "out of memory");
	}
out:
	if (ops->buf_free) {
		if (tr.sendbase)
			ops->buf_free(g.comm, tr.sendbase);
		if (tr.recvbase)
			ops->buf_free(g.comm, tr.recvbase);
	}
	set_active(ops, 1, NULL);
	set_active(ops, 0, NULL);
	if (split)
		ops->comm_destroy(split);
	if (made)
		ops->comm_destroy(made);
	sd_worker_stop(wk);
	if (nccl_log[0])
		unlink(nccl_log);
	for (int gi = 0; mtext && gi < tr.ngroups; gi++)
		free(mtext[gi]);
	free(mtext);
	free(sizes);
	free(tr.infos);
	free(tr.wrong);
	free(tr.res);
	free(tr.orig);
	free(tr.held);
	free(tr.group_of);
	free(tr.index_of);
	free(tr.gsize);
	free(tr.gstart);
	free(tr.members);
	return rc;
}

void sd_scope_shape(const struct sd_test_spec *t, const struct sd_hosts *hs,
		    int nranks, struct sd_scope_shape *out)
{
	int pairs_in_hosts = 0, k = 0, kind;
	long long n = hs->nhosts;
	for (int h = 0; h < hs->nhosts; h++)
		pairs_in_hosts += hs->count[h] / 2;
	memset(out, 0, sizeof(*out));
	out->rounds = 1;
	if (strcmp(t->scope, "node") == 0) {
		out->groups = hs->nhosts;
		out->group_size = hs->max_count;
	} else if (strcmp(t->scope, "rail") == 0) {
		out->groups = hs->max_count;
		out->group_size = hs->nhosts;
	} else if (strcmp(t->scope, "gpu-pairs") == 0) {
		out->rounds = sd_gpu_pairs_rounds(hs);
		out->groups = pairs_in_hosts;
		out->group_size = 2;
	} else if ((kind = host_pairs_kind(t->scope, &k)) != PAIRS_NONE) {
		/* adaptive: its matchings; the rounds that isolate what
		 * fails come on top (sd_adaptive_max_rounds at most) */
		out->rounds = kind == PAIRS_ALL    ? sd_rr_rounds(hs->nhosts)
			      : kind == PAIRS_RING ? sd_ring_rounds(hs->nhosts)
			      : hs->nhosts < 2	   ? 0
			      : kind == PAIRS_ADAPTIVE
				      ? 1 + (k < hs->nhosts - 2 ? k
								: hs->nhosts - 2)
				      : k;
		out->pairs = kind == PAIRS_ALL    ? n * (n - 1) / 2
			     : kind == PAIRS_RING ? (n < 3 ? n / 2 : n)
						  : out->rounds * (n / 2);
		out->partners = kind == PAIRS_ALL    ? (int)n - 1
				: kind == PAIRS_RING ? (n < 3 ? 1 : 2)
				: kind == PAIRS_RANDOM
					? (k < n - 1 ? k : (int)n - 1)
					: (1 + k < n - 1 ? 1 + k : (int)n - 1);
		if (kind == PAIRS_RANDOM && out->pairs > n * (n - 1) / 2)
			out->pairs = n * (n - 1) / 2;
		if (kind == PAIRS_ADAPTIVE && n >= 2) {
			/* an odd count's idle nodes meet theirs in one
			 * more round */
			if (n % 2) {
				out->pairs += (out->rounds + 1) / 2;
				out->rounds++;
			}
			/* two nodes have no third to isolate with: their
			 * pair is measured again, retries times */
			out->isolate = n > 2 ? 1 + t->retries : t->retries;
			out->most = n > 2 ? sd_adaptive_max_rounds(k, t->retries)
					  : 1 + t->retries;
		}
		if (n < 2)
			out->pairs = out->partners = 0;
		char base[32];
		out->groups = hs->nhosts / 2;
		out->group_size = sd_scope_one_rank(t->scope, base,
						    sizeof(base))
					  ? 2
					  : 2 * hs->max_count;
	} else {
		k = t->group_size > 0 ? t->group_size : nranks;
		out->groups = nranks / k;
		out->group_size = k;
	}
	if (out->rounds == 0)
		out->groups = out->group_size = 0;
}

/* The host of world rank q (0 without hosts). */
static int host_of(const struct sd_runner *r, int q)
{
	return r->host_of ? r->host_of[q] : 0;
}

static const char *host_name(const struct sd_runner *r, int q, char *buf,
			     size_t len)
{
	if (r->ranks)
		return r->ranks[q].host;
	snprintf(buf, len, "host%d", host_of(r, q));
	return buf;
}

/* Rank 0: a subject's text, its hosts as a hostlist, and its distinct
 * hosts (indices, up to `cap`; *nh how many); strings malloc'd. */
static int name_subject(const struct sd_runner *r, const struct sd_test_spec *t,
			const struct subject *x, char **subject, char **hosts,
			int *hidx, int cap, int *nh)
{
	const char **names = malloc((size_t)(x->nmem ? x->nmem : 1) *
				    sizeof(*names));
	char (*bufs)[24] = malloc((size_t)(x->nmem ? x->nmem : 1) *
				  sizeof(*bufs));
	struct sd_buf b = { 0 };
	int bad = !names || !bufs;
	*nh = 0;
	*subject = *hosts = NULL;
	for (int i = 0; !bad && i < x->nmem; i++) {
		int q = x->members[i], h = host_of(r, q), seen = 0;
		names[i] = host_name(r, q, bufs[i], sizeof(bufs[i]));
		for (int k = 0; k < *nh && k < cap && !seen; k++)
			seen = hidx[k] == h;
		if (!seen && *nh < cap)
			hidx[(*nh)++] = h;
	}
	if (!bad)
		*hosts = sd_hostlist_compress(names, x->nmem);
	bad |= !*hosts;
	const int *m = x->members;
	switch (bad ? -1 : (int)sd_subject_kind_of(t->scope)) {
	case -1:
		break;
	case SD_SUBJECT_NODE:
		bad = sd_buf_printf(&b, "%s", names[0]);
		break;
	case SD_SUBJECT_GPU_PAIR:
		bad = sd_buf_printf(&b, "%s local %d,%d", names[0],
				    r->ranks ? r->ranks[m[0]].local_rank : m[0],
				    x->nmem > 1 && r->ranks
					    ? r->ranks[m[1]].local_rank
					    : x->nmem > 1 ? m[1] : -1);
		break;
	case SD_SUBJECT_NODE_PAIR: {
		const char *other = names[0];
		for (int i = 1; i < x->nmem; i++)
			if (host_of(r, m[i]) != host_of(r, m[0])) {
				other = names[i];
				break;
			}
		bad = sd_buf_printf(&b, "%s,%s", names[0], other);
		break;
	}
	case SD_SUBJECT_RAIL:
		bad = sd_buf_printf(&b, "rail %d",
				    r->ranks ? r->ranks[m[0]].local_rank : 0);
		break;
	case SD_SUBJECT_GROUP: {
		char *ranks = sd_rank_list(m, x->nmem);
		bad = !ranks || sd_buf_printf(&b, "ranks %s", ranks);
		free(ranks);
		break;
	}
	default:
		bad = sd_buf_printf(&b, "%s", *hosts);
		break;
	}
	free(names);
	free(bufs);
	if (bad) {
		free(*hosts);
		sd_buf_free(&b);
		*hosts = NULL;
		return -1;
	}
	*subject = b.data;
	return 0;
}

/* What the test's subjects are called in reasons: "node pairs". */
static const char *subjects_word(enum sd_subject_kind k)
{
	static const char *const w[] = { "jobs", "groups", "nodes",
					 "GPU pairs", "node pairs", "rails" };
	return (unsigned)k < 6 ? w[k] : "subjects";
}

/* Rank 0: judge the test's subjects; *out (malloc'd) holds
 * SD_EXPECT_KINDS judgements per subject.  Returns -1 when out of memory,
 * else whether a subject failed a performance expectation. */
static int judge_test(struct sd_runner *r, const struct sd_test_spec *t,
		      struct subjects *a, struct sd_judgement **out)
{
	int gpu_pairs = sd_subject_kind_of(t->scope) == SD_SUBJECT_GPU_PAIR;
	for (size_t i = 0; i < a->n; i++) {
		struct sd_subject_result *x = &a->v[i].res;
		double bw;
		x->link_class = gpu_pairs && r->link_class && a->v[i].nmem == 2
					? r->link_class(r->link_arg,
							a->v[i].members[0],
							a->v[i].members[1])
					: NULL;
		x->link_tier = sd_link_tier(x->link_class);
		x->have_base = x->base_missing = 0;
		if (!r->baseline_of || t->expect.baseline <= 0 || !x->have)
			continue;
		int got = r->baseline_of(r->baseline_arg, t, x->size_bytes, &bw);
		x->have_base = got == 1;
		x->base_missing = got == 0;
		x->base_busbw_gbs = got == 1 ? bw : 0;
	}
	struct sd_subject_result *res = malloc((a->n ? a->n : 1) * sizeof(*res));
	*out = calloc((a->n ? a->n : 1) * SD_EXPECT_KINDS, sizeof(**out));
	if (!res || !*out) {
		free(res);
		free(*out);
		*out = NULL;
		return -1;
	}
	for (size_t i = 0; i < a->n; i++)
		res[i] = a->v[i].res;
	int failed = sd_judge(&t->expect,
			      subjects_word(sd_subject_kind_of(t->scope)), res,
			      (int)a->n, *out);
	free(res);
	return failed;
}

static int perf_failed(const struct sd_judgement *j)
{
	for (int k = SD_EXPECT_BUSBW; k < SD_EXPECT_KINDS; k++)
		if (j[k].status == SD_JUDGED_FAILED)
			return 1;
	return 0;
}

/* Rank 0: record what the run blames. */
static void emit_suspects(struct sd_runner *r)
{
	int n = 0;
	const struct sd_suspect *sus = sd_blame_suspects(r->blame, &n);
	struct sd_suspect_info *v = calloc((size_t)(n ? n : 1), sizeof(*v));
	for (int i = 0; v && i < n; i++)
		v[i] = (struct sd_suspect_info){
			.kind = sd_suspect_kind_name(sus[i].kind),
			.subject = sus[i].subject,
			.hosts = sus[i].hosts,
			.bad_node = sus[i].kind == SD_SUSPECT_NODE ||
				    sus[i].kind == SD_SUSPECT_LINK,
			.reason = sus[i].reason,
		};
	if (v && n) {
		struct sd_event ev = { .kind = SD_EVENT_SUSPECTS, .suspects = v,
				       .n = (size_t)n };
		sd_sinks_emit(r->sinks, &ev);
	}
	free(v);
}

/* The figure of a failed subject for its hosts' bad-node reasons: its
 * failed judgement farthest from its reference (the first, when none has
 * numbers: wrong data). */
static int blame_figure(struct sd_blame *b, const struct sd_judgement *j)
{
	int worst = -1;
	double wr = NAN;
	for (int k = 0; k < SD_EXPECT_KINDS; k++) {
		if (j[k].status != SD_JUDGED_FAILED)
			continue;
		double q = sd_judgement_ratio(&j[k]);
		if (worst < 0 || (!isnan(q) && (isnan(wr) || q < wr))) {
			worst = k;
			wr = q;
		}
	}
	return worst < 0 ? 0 : sd_blame_figure(b, wr, j[worst].reason);
}

/* Rank 0: record the test's verdicts, one per subject and expectation,
 * and hand each subject's outcome to the blame. */
static int emit_verdicts(struct sd_runner *r, size_t ti,
			 const struct subjects *a, const struct sd_judgement *j,
			 int explained, const char *how)
{
	const struct sd_test_spec *t = &r->plan->tests[ti];
	enum sd_subject_kind kind = sd_subject_kind_of(t->scope);
	size_t cap = a->n * SD_EXPECT_KINDS + 1, nv = 0;
	struct sd_verdict_info *v = calloc(cap, sizeof(*v));
	char **strs = calloc(2 * a->n + 1, sizeof(*strs));
	char test[160];
	/* a host stamp per world rank's host index (indices are below the
	 * job's size): a subject's distinct hosts in one pass */
	int *stamp = calloc((size_t)r->bs->size + 1, sizeof(int));
	int rc = v && strs && stamp ? 0 : -1;
	plan_test_name(t, ti, test, sizeof(test));
	if (how && how[0] && strlen(test) > 1) {
		/* "plan test 5 (sendrecv float32, node-pairs:adaptive, how)" */
		size_t at = strlen(test) - 1;
		snprintf(test + at, sizeof(test) - at, ", %s)", how);
	}
	for (size_t i = 0; !rc && i < a->n; i++) {
		const struct subject *x = &a->v[i];
		const struct sd_judgement *ji = j + i * SD_EXPECT_KINDS;
		int hidx[2], nh;
		char *subject, *hosts, why[600] = "";
		if (name_subject(r, t, x, &subject, &hosts, hidx, 2, &nh)) {
			rc = -1;
			break;
		}
		strs[2 * i] = subject;
		strs[2 * i + 1] = hosts;
		int failed = 0;
		for (int k = 0; k < SD_EXPECT_KINDS; k++) {
			if (ji[k].status == SD_JUDGED_NONE)
				continue;
			if (ji[k].status == SD_JUDGED_FAILED) {
				size_t used = strlen(why);
				snprintf(why + used, sizeof(why) - used, "%s%s",
					 failed ? "; " : "", ji[k].reason);
				failed = 1;
			}
			v[nv++] = (struct sd_verdict_info){
				.test_index = x->index,
				.subject_kind = sd_subject_kind_name(kind),
				.subject = subject, .hosts = hosts,
				.expectation = sd_expect_kind_name(ji[k].kind),
				/* the path is the whole test's, at no size */
				.size_bytes = x->res.have &&
							      ji[k].kind !=
								      SD_EXPECT_PATH
						      ? x->res.size_bytes
						      : 0,
				.measured = ji[k].measured,
				.threshold = ji[k].threshold,
				.unit = ji[k].unit,
				.status = sd_judged_status_name(ji[k].status),
				.reason = ji[k].reason,
				.attempts = x->attempts,
				.outcome = sd_subject_outcome(ji, x->attempts),
			};
		}
		if (perf_failed(ji))
			r->failed_subjects++;
		if (x->attempts > 1)
			r->retried++;
		if (r->blame && failed && explained) {
			/* the bisection named what makes the job fail */
		} else if (r->blame && failed) {
			/* the hosts of a rail or job, all of them */
			int *all = malloc((size_t)(x->nmem ? x->nmem : 1) *
					  sizeof(int));
			int na = 0;
			for (int m = 0; all && m < x->nmem; m++) {
				int h = host_of(r, x->members[m]);
				if (stamp[h] != (int)i + 1) {
					stamp[h] = (int)i + 1;
					all[na++] = h;
				}
			}
			if (!all || sd_blame_add(r->blame, kind, subject, hosts,
						 all, na, 1, why) ||
			    blame_figure(r->blame, ji))
				rc = -1;
			free(all);
		} else if (r->blame && sd_blame_add(r->blame, kind, subject,
						    hosts, hidx, nh, 0, NULL)) {
			rc = -1;
		}
	}
	if (!rc && nv) {
		struct sd_event ev = { .kind = SD_EVENT_VERDICTS, .verdicts = v,
				       .n = nv };
		sd_sinks_emit(r->sinks, &ev);
	}
	if (!rc && r->blame && sd_blame_end_test(r->blame, test))
		rc = -1;
	/* what is blamed so far, recorded as it is found: a run stopped
	 * later keeps it */
	if (!rc && r->blame)
		emit_suspects(r);
	for (size_t i = 0; strs && i < 2 * a->n; i++)
		free(strs[i]);
	free(strs);
	free(stamp);
	free(v);
	return rc;
}

/* ---- bisection of a failed world test ---- */

/* Whether subject j (SD_EXPECT_KINDS judgements) failed: data or a
 * performance expectation. */
static int subject_failed(const struct sd_judgement *j)
{
	return j[SD_EXPECT_DATA].status == SD_JUDGED_FAILED || perf_failed(j);
}

/* The host names of hosts[lo..hi) of rank 0's view as a hostlist;
 * malloc'd. */
static char *set_hostlist(const struct sd_runner *r, const struct sd_hosts *hs,
			  int lo, int hi)
{
	const char **names = malloc((size_t)(hi - lo + 1) * sizeof(*names));
	char (*bufs)[24] = malloc((size_t)(hi - lo + 1) * sizeof(*bufs));
	char *list = NULL;
	for (int h = lo; names && bufs && h < hi; h++)
		names[h - lo] = host_name(r, hs->ranks[h][0], bufs[h - lo],
					  sizeof(bufs[0]));
	if (names && bufs)
		list = sd_hostlist_compress(names, hi - lo);
	free(names);
	free(bufs);
	return list;
}

/* Rank 0: name a culprit of the bisection: one host (a bad node) or a set
 * that fails only whole. */
static int name_culprit(struct sd_runner *r, const struct sd_hosts *hs,
			size_t ti, int lo, int hi, int rounds, const char *how)
{
	const struct sd_test_spec *t = &r->plan->tests[ti];
	char test[160], why[400];
	char *list = set_hostlist(r, hs, lo, hi);
	if (!list)
		return -1;
	plan_test_name(t, ti, test, sizeof(test));
	snprintf(why, sizeof(why), "the job failed it; bisected in %d round%s: "
		 "%s %s", rounds, rounds == 1 ? "" : "s", list, how);
	int rc = r->blame ? sd_blame_name(r->blame,
					  hi - lo == 1 ? SD_SUSPECT_NODE
						       : SD_SUSPECT_GROUP,
					  list, list, hi - lo == 1 ? lo : -1,
					  test, why)
			  : 0;
	free(list);
	return rc;
}

/* Rank 0 decides `word` (wlen bytes; other ranks pass what they like)
 * for every rank, in the next control step of the job as a whole, named
 * `what` while ranks are awaited: *got (malloc'd) and *gotlen what every
 * rank got.  A status, r->err set on failure. */
static int decide_step(struct sd_runner *r, const struct sd_test_spec *t,
		       uint32_t *seq, const char *what, const void *word,
		       size_t wlen, void **got, size_t *gotlen)
{
	int rc;
	*got = NULL;
	*gotlen = 0;
	sd_ctrl_name_group(r->ctrl, 0, "");
	(*seq)++;
	rc = sd_ctrl_progress(r->ctrl, 0, *seq, t->cfg.timeout_ms,
			      t->cfg.timeout_ms, what, r->err, sizeof(r->err));
	if (!rc)
		rc = sd_ctrl_decide(r->ctrl, 0, *seq, word, wlen, got, gotlen,
				    r->err, sizeof(r->err));
	return rc;
}

/*
 * A world test failed (wrong data or an expectation): find the hosts that
 * make it fail.  The failing set of hosts is halved and both halves run
 * the test again at its judged size, side by side, judged by its absolute
 * expectations (busbw, time, baseline) and its data; a failing half is
 * halved again, until single hosts are named.  A set whose halves both
 * pass fails only whole: it is named as a group.  At most
 * log2(hosts) + 2 rounds; what is left then is named whole.  Rank 0
 * decides each round and every rank takes part (sd_ctrl_decide).
 */
static int bisect(struct sd_runner *r, size_t ti, const struct sd_hosts *hs,
		  const struct subjects *acc, const struct sd_judgement *j,
		  uint32_t *seq, int *index, int *stop, int *found)
{
	static const char *const how[] = {
		[SD_BISECT_ALONE] = "fails alone",
		[SD_BISECT_WHOLE] = "fails only whole (each half passes)",
		[SD_BISECT_UNRESOLVED] = "still fails (no rounds left to split "
					 "it)",
		[SD_BISECT_TOO_SMALL] = "fails; its halves are too small for "
					"the operation",
	};
	const struct sd_test_spec *t = &r->plan->tests[ti];
	int me = r->bs->rank, rc = SD_OK, nh = hs->nhosts;
	int failed = 0;
	uint64_t size = 0;
	if (me == 0 && acc->n == 1 && j) {
		failed = subject_failed(j);
		size = acc->v[0].res.have ? acc->v[0].res.size_bytes
					  : t->cfg.max_bytes;
	}
	if (nh < 2) {
		if (me == 0 && failed && name_culprit(r, hs, ti, 0, nh, 0,
						      "is the only node"))
			rc = SD_ERR_NOMEM;
		*found = me == 0 && failed;
		return rc;
	}
	/* the test again, at the judged size only, judged absolutely */
	struct sd_test_spec tb = *t;
	tb.expect.peers = tb.expect.mad = 0;
	tb.retries = 0;
	sd_strlcpy(tb.scope, "bisect", sizeof(tb.scope));
	int max_rounds = 2;
	for (int k = 1; k < nh; k *= 2)
		max_rounds++;
	struct sd_bisection b = { 0 };
	int32_t *word = calloc((size_t)nh + 2, sizeof(int32_t));
	int *group = calloc((size_t)nh + 1, sizeof(int));
	unsigned char *bad = calloc((size_t)nh * 2 + 2, 1);
	if (!word || !group || !bad ||
	    (me == 0 && sd_bisection_init(&b, failed ? nh : 0, max_rounds))) {
		rc = SD_ERR_NOMEM;
		goto out;
	}
	int named = 0;
	*found = 0;
	for (;;) {
		/* rank 0: the next round's sets, the halves of what failed */
		int nsets = 0;
		size_t wlen = 0;
		if (me == 0) {
			const struct sd_bisect_set *sets =
				sd_bisection_round(&b, &nsets);
			for (int h = 0; h < nh; h++)
				group[h] = -1;
			for (int i = 0; i < nsets; i++)
				for (int h = sets[i].lo; h < sets[i].hi; h++)
					group[h] = i;
			if (nsets) {
				word[0] = (int32_t)(size & 0x7fffffff);
				word[1] = (int32_t)(size >> 31);
				for (int h = 0; h < nh; h++)
					word[2 + h] = group[h];
				wlen = ((size_t)nh + 2) * sizeof(int32_t);
			}
		}
		void *got = NULL;
		size_t gotlen = 0;
		char what[160];
		snprintf(what, sizeof(what), "deciding the bisection of test %zu",
			 ti + 1);
		if ((rc = decide_step(r, t, seq, what, word, wlen, &got,
				      &gotlen)))
			break;
		if (gotlen < ((size_t)nh + 2) * sizeof(int32_t)) {
			free(got);
			break; /* nothing (more) to bisect */
		}
		const int32_t *w = got;
		uint64_t at = (uint64_t)(uint32_t)w[0] |
			      ((uint64_t)(uint32_t)w[1] << 31);
		for (int h = 0; h < nh; h++)
			group[h] = w[2 + h];
		free(got);
		tb.cfg.min_bytes = tb.cfg.max_bytes = at ? at : t->cfg.max_bytes;
		tb.expect.at_bytes = 0;
		struct subjects halves = { 0 };
		rc = run_round(r, ti, hs, 0, NULL, 0, &tb, group, NULL, &halves,
			       seq, index, stop);
		if (!rc && !*stop && me == 0) {
			/* judge each half by the world's expectations */
			struct sd_judgement *hj = NULL;
			struct sd_test_spec tj = tb;
			sd_strlcpy(tj.scope, t->scope, sizeof(tj.scope));
			if (judge_test(r, &tj, &halves, &hj) < 0) {
				rc = SD_ERR_NOMEM;
			} else {
				/* a set with no result (too small for the
				 * op) could not run */
				memset(bad, SD_BISECT_NOT_RUN, (size_t)nsets);
				for (size_t i = 0; i < halves.n; i++) {
					int g = halves.v[i].group;
					if (g >= 0 && g < nsets)
						bad[g] = (unsigned char)
							subject_failed(hj + i *
								SD_EXPECT_KINDS);
				}
				sd_bisection_result(&b, bad);
			}
			free(hj);
		}
		subjects_free(&halves);
		/* what this round named */
		for (; !rc && me == 0 && named < b.nnamed; named++)
			if (name_culprit(r, hs, ti, b.named[named].lo,
					 b.named[named].hi, b.rounds,
					 how[b.named[named].why]))
				rc = SD_ERR_NOMEM;
		if (rc || *stop)
			break;
	}
	/* the last round's naming (sets of one host, out of rounds) */
	for (; !rc && me == 0 && named < b.nnamed; named++)
		if (name_culprit(r, hs, ti, b.named[named].lo, b.named[named].hi,
				 b.rounds, how[b.named[named].why]))
			rc = SD_ERR_NOMEM;
	*found = named > 0;
out:
	if (me == 0)
		sd_bisection_free(&b);
	free(word);
	free(group);
	free(bad);
	if (rc == SD_ERR_NOMEM) {
		struct sd_group g = { .comm = r->comm };
		return step_failed(r, &g, *seq + 1, SD_ERR_NOMEM, "bisection",
				   "out of memory");
	}
	return rc;
}

/* Most subjects one retry measures again. */
#define SD_MAX_RETRY_SUBJECTS 65536

/* Measure again the subjects that failed an expectation, up to the test's
 * retries: rank 0 decides which, every rank reruns those groups' rounds
 * with only them taking part.  Then rank 0 records the verdicts. */
static int judge_and_retry(struct sd_runner *r, size_t ti,
			   const struct sd_hosts *hs, struct subjects *acc,
			   int retry, const char *how, uint32_t *seq,
			   int *index, int *stop)
{
	const struct sd_test_spec *t = &r->plan->tests[ti];
	int me = r->bs->rank, rc = SD_OK;
	int judged = retry && sd_expect_any(&t->expect);
	struct sd_judgement *j = NULL;
	for (int attempt = 0; judged && attempt < t->retries && !*stop && !rc;
	     attempt++) {
		int32_t *word = NULL;
		size_t nw = 0;
		if (me == 0) {
			int f = judge_test(r, t, acc, &j);
			word = malloc(2 * sizeof(int32_t) *
				      (f > 0 ? acc->n : 1));
			for (size_t i = 0; word && f > 0 && i < acc->n &&
					   nw < SD_MAX_RETRY_SUBJECTS; i++)
				if (perf_failed(j + i * SD_EXPECT_KINDS)) {
					word[2 * nw] = acc->v[i].round;
					word[2 * nw + 1] = acc->v[i].group;
					nw++;
				}
			free(j);
			j = NULL;
			if (f < 0 || !word) {
				free(word);
				struct sd_group g = { .comm = r->comm };
				return step_failed(r, &g, *seq + 1, SD_ERR_NOMEM,
						   "verdicts", "out of memory");
			}
		}
		void *got = NULL;
		size_t gotlen = 0;
		char what[160];
		snprintf(what, sizeof(what), "deciding what test %zu measures "
			 "again", ti + 1);
		rc = decide_step(r, t, seq, what, word,
				 nw * 2 * sizeof(int32_t), &got, &gotlen);
		free(word);
		if (rc)
			break;
		const int32_t *list = got;
		size_t nl = gotlen / (2 * sizeof(int32_t));
		/* round by round, the groups to measure again */
		int last = -1;
		for (size_t i = 0; i < nl && !rc && !*stop; i++) {
			int round = list[2 * i];
			if (round <= last)
				continue;
			int ngroups = 0;
			for (size_t k = 0; k < nl; k++)
				if (list[2 * k] == round &&
				    list[2 * k + 1] + 1 > ngroups)
					ngroups = list[2 * k + 1] + 1;
			unsigned char *keep = calloc((size_t)ngroups + 1, 1);
			if (!keep) {
				free(got);
				struct sd_group g = { .comm = r->comm };
				return step_failed(r, &g, *seq + 1, SD_ERR_NOMEM,
						   "retries", "out of memory");
			}
			for (size_t k = 0; k < nl; k++)
				if (list[2 * k] == round)
					keep[list[2 * k + 1]] = 1;
			/* groups past the last marked one stay out */
			rc = run_round(r, ti, hs, round, keep, ngroups, NULL,
				       NULL, NULL, acc, seq, index, stop);
			free(keep);
			last = round;
		}
		free(got);
		if (nl == 0)
			break;
	}
	if (!rc && me == 0 && !*stop && judge_test(r, t, acc, &j) < 0) {
		struct sd_group g = { .comm = r->comm };
		return step_failed(r, &g, *seq + 1, SD_ERR_NOMEM, "verdicts",
				   "out of memory");
	}
	/* a failed world test is bisected first: what it names explains the
	 * job's failure, so that the job is not blamed as a group */
	int named = 0;
	if (!rc && !*stop && strcmp(t->scope, "world") == 0)
		rc = bisect(r, ti, hs, acc, j, seq, index, stop, &named);
	if (!rc && me == 0 && !*stop &&
	    emit_verdicts(r, ti, acc, j, named, how)) {
		free(j);
		struct sd_group g = { .comm = r->comm };
		return step_failed(r, &g, *seq + 1, SD_ERR_NOMEM, "verdicts",
				   "out of memory");
	}
	free(j);
	return rc;
}

/* Rank 0: each host's switch (lib/switches.h), from the plan's switches:
 * or Slurm's topology.conf; *sw NULL when neither is there.  Returns
 * SD_OK or an error in err. */
static int host_switches(const struct sd_runner *r, const struct sd_hosts *hs,
			 int **sw, char *err, size_t errlen)
{
	char path[4096];
	int conf = !r->plan->switches[0] &&
		   sd_switches_conf_path(path, sizeof(path));
	*sw = NULL;
	if (!r->plan->switches[0] && !conf)
		return SD_OK;
	const char **names = calloc((size_t)hs->nhosts + 1, sizeof(*names));
	char (*bufs)[24] = calloc((size_t)hs->nhosts + 1, sizeof(*bufs));
	struct sd_switches s = { 0 };
	int rc = names && bufs ? SD_OK : SD_ERR_NOMEM;
	for (int h = 0; !rc && h < hs->nhosts; h++)
		names[h] = host_name(r, hs->ranks[h][0], bufs[h],
				     sizeof(bufs[h]));
	if (!rc && conf)
		rc = sd_switches_read_conf(path, names, hs->nhosts, &s, err,
					   errlen);
	else if (!rc) {
		rc = sd_switches_parse(r->plan->switches, 0,
				       "the plan's switches", names,
				       hs->nhosts, &s, err, errlen);
	}
	if (!rc) {
		*sw = s.switch_of;
		s.switch_of = NULL;
	} else if (rc == SD_ERR_NOMEM) {
		snprintf(err, errlen, "out of memory");
	}
	sd_switches_free(&s);
	free(names);
	free(bufs);
	return rc;
}

/*
 * node-pairs:adaptive[:K]: rank 0 drives lib/schedule.h's adaptive
 * pairing and tells every rank each round's pairs (a group per host,
 * sd_ctrl_decide); after each round it judges every pair so far as the
 * test's verdicts will, and the driver chooses the next round from that.
 * Every measurement is a subject of the test; a pair measured again
 * replaces its subject's figure (its attempts count).  *rounds: how many
 * rounds it took (rank 0).
 */
static int run_adaptive(struct sd_runner *r, size_t ti,
			const struct sd_hosts *hs, int more,
			struct subjects *acc, uint32_t *seq, int *index,
			int *stop, int *rounds)
{
	const struct sd_test_spec *t = &r->plan->tests[ti];
	int me = r->bs->rank, nh = hs->nhosts, rc = SD_OK;
	struct sd_adaptive *a = NULL;
	int *sw = NULL, *subject_of = NULL, capsub = 0;
	int32_t *word = calloc((size_t)nh + 1, sizeof(int32_t));
	int *group = calloc((size_t)nh + 1, sizeof(int));
	int *rp = calloc((size_t)nh + 1, sizeof(int));
	unsigned char *failed = NULL;
	char err[512] = "";
	*rounds = 0;
	if (!word || !group || !rp) {
		rc = SD_ERR_NOMEM;
		goto out;
	}
	if (me == 0) {
		rc = host_switches(r, hs, &sw, err, sizeof(err));
		struct sd_adaptive_cfg cfg = {
			.nhosts = nh, .more = more, .seed = pairs_seed(t),
			.switch_of = sw, .retries = t->retries,
		};
		if (!rc && !(a = sd_adaptive_new(&cfg)))
			rc = SD_ERR_NOMEM;
		if (rc) {
			struct sd_group g = { .comm = r->comm };
			rc = step_failed(r, &g, *seq + 1, rc,
					 "pairing node-pairs:adaptive", err);
			goto out;
		}
	}
	for (;;) {
		size_t wlen = 0;
		int ng = 0;
		if (me == 0) {
			ng = sd_adaptive_next(a, group, rp);
			if (ng < 0) {
				rc = SD_ERR_NOMEM;
				break;
			}
			for (int h = 0; ng > 0 && h < nh; h++)
				word[h] = group[h];
			wlen = ng > 0 ? (size_t)nh * sizeof(int32_t) : 0;
		}
		void *got = NULL;
		size_t gotlen = 0;
		char what[160];
		snprintf(what, sizeof(what), "choosing the node pairs of test "
			 "%zu", ti + 1);
		if ((rc = decide_step(r, t, seq, what, word, wlen, &got,
				      &gotlen)))
			break;
		if (gotlen < (size_t)nh * sizeof(int32_t)) {
			free(got);
			break; /* done */
		}
		const int32_t *w = got;
		for (int h = 0; h < nh; h++)
			group[h] = w[h];
		free(got);
		int np = 0;
		const struct sd_adaptive_pair *pairs =
			me == 0 ? sd_adaptive_pairs(a, &np) : NULL;
		if (me == 0 && np > capsub) {
			int cap = np * 2;
			int *q = realloc(subject_of, (size_t)cap * sizeof(int));
			if (!q) {
				rc = SD_ERR_NOMEM;
				break;
			}
			for (int i = capsub; i < cap; i++)
				q[i] = -1;
			subject_of = q;
			capsub = cap;
		}
		struct chosen ch = {
			.host_group = group,
			.round = me == 0 ? sd_adaptive_rounds(a) : 0,
			.pair = rp, .pairs = pairs, .subject_of = subject_of,
			.seed = pairs_seed(t),
		};
		rc = run_round(r, ti, hs, 0, NULL, 0, NULL, NULL, &ch, acc,
			       seq, index, stop);
		if (rc || *stop)
			break;
		if (me == 0) {
			/* every pair so far, judged as the verdicts will */
			struct sd_judgement *j = NULL;
			unsigned char *f = realloc(failed, (size_t)np + 1);
			if (!f || judge_test(r, t, acc, &j) < 0) {
				free(j);
				if (f)
					failed = f;
				rc = SD_ERR_NOMEM;
				break;
			}
			failed = f;
			for (int i = 0; i < np; i++) {
				int sj = subject_of[i];
				failed[i] = sj >= 0 && (size_t)sj < acc->n &&
					    subject_failed(j + (size_t)sj *
							   SD_EXPECT_KINDS);
			}
			free(j);
			sd_adaptive_outcome(a, failed);
		}
	}
	if (me == 0 && a)
		*rounds = sd_adaptive_rounds(a);
out:
	if (rc == SD_ERR_NOMEM) {
		struct sd_group g = { .comm = r->comm };
		rc = step_failed(r, &g, *seq + 1, SD_ERR_NOMEM,
				 "node-pairs:adaptive", "out of memory");
	}
	sd_adaptive_free(a);
	free(sw);
	free(subject_of);
	free(word);
	free(group);
	free(rp);
	free(failed);
	return rc;
}

/* Run test ti, round by round. */
static int run_test(struct sd_runner *r, size_t ti, uint32_t *seq,
		    int *index, int *stop)
{
	const struct sd_test_spec *t = &r->plan->tests[ti];
	int n = r->bs->size, nhosts = 1, rc = SD_OK;
	struct subjects acc = { 0 };
	/* without hosts (a single process) every rank is on host 0 */
	int *zeros = r->host_of ? NULL : calloc((size_t)n, sizeof(int));
	struct sd_hosts hs;
	for (int q = 0; r->host_of && q < n; q++)
		if (r->host_of[q] + 1 > nhosts)
			nhosts = r->host_of[q] + 1;
	struct sd_layout l = { n, nhosts, r->host_of ? r->host_of : zeros };
	if (!l.host_of || sd_hosts_build(&l, &hs)) {
		free(zeros);
		struct sd_group g = { .comm = r->comm };
		return step_failed(r, &g, *seq + 1, SD_ERR_NOMEM, "hosts",
				   "out of memory");
	}
	struct sd_scope_shape shape;
	sd_scope_shape(t, &hs, n, &shape);
	int rounds = shape.rounds;
	if (rounds == 0 && r->bs->rank == 0) {
		/* nothing to pair: said as a skipped test */
		const struct sd_coll *c = sd_coll_get(t->op);
		struct sd_test_info info = {
			.index = (*index)++, .name = c->name, .op = t->op,
			.dtype = t->dtype, .redop = t->redop,
			.has_redop = c->reduces, .root = t->root,
			.scope = t->scope, .algo = t->algo, .members = "",
			.plan_test = (int)ti + 1, .attempt = 1,
		};
		struct sd_event ev = { .kind = SD_EVENT_TEST_BEGIN,
				       .test = &info };
		sd_sinks_emit(r->sinks, &ev);
		ev.kind = SD_EVENT_TEST_END;
		ev.status = "skipped";
		ev.message = strncmp(t->scope, "node-pairs", 10) == 0
				     ? "one host has no node pairs"
				     : "no host has two ranks to pair";
		sd_sinks_emit(r->sinks, &ev);
	}
	int more = 0, adaptive = host_pairs_kind(t->scope, &more) ==
				       PAIRS_ADAPTIVE;
	char how[96] = "";
	if (adaptive && rounds > 0) {
		int took = 0;
		rc = run_adaptive(r, ti, &hs, more, &acc, seq, index, stop,
				  &took);
		snprintf(how, sizeof(how), "%d round%s of adaptive pairing",
			 took, took == 1 ? "" : "s");
	}
	for (int k = 0; !adaptive && k < rounds && !*stop && !rc; k++)
		rc = run_round(r, ti, &hs, k, NULL, 0, NULL, NULL, NULL, &acc,
			       seq, index, stop);
	/* adaptive pairs were measured again as they went */
	if (!rc && rounds > 0 && !*stop)
		rc = judge_and_retry(r, ti, &hs, &acc, !adaptive, how, seq,
				     index, stop);
	subjects_free(&acc);
	sd_hosts_free(&hs);
	free(zeros);
	return rc;
}

int sd_runner_run(struct sd_runner *r)
{
	uint32_t seq = 0;
	int stop = 0, index = 0, rc = SD_OK;
	r->err[0] = '\0';
	for (size_t ti = 0; ti < r->plan->ntests && !stop && !rc; ti++)
		rc = run_test(r, ti, &seq, &index, &stop);
	if (rc)
		return rc;
	return stop ? SD_ERR_CANCELLED : SD_OK;
}
