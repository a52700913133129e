/*
 * gloo_unit.c - the Gloo plugin through its C ABI, without the core.
 *
 * The test forks N ranks (N = 2, 3, 4) and lends each a struct sd_bootstrap
 * whose allgather runs through this parent over socketpairs, then
 * dlopens plugins/gloo/.libs/backend_gloo.so in every rank and checks:
 * every op x type x redop x placement x algorithm gives bit-exact data;
 * corrupt() is seen by verify(); comm_split (with a negative color, and a
 * split of a split) gives working communicators ordered by key; a rank
 * that skips an operation makes its neighbour fail with SD_ERR_TIMEOUT,
 * the legacy algorithm classes too when only the operation's own timeout
 * is short, abort() from another thread unblocks a rank stuck in an
 * operation (on the world and on a split) with SD_ERR_CANCELLED, and a
 * rank that closes its communicator makes it fail with SD_ERR_PEER.
 * Rank 0 sends its findings to the parent, which prints TAP.
 */
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "shakedown/backend.h"
#include "shakedown/pattern.h"
#include "shakedown/coll.h"
#include "util.h"
#include "../unit/tap.h"

#define MAXN 8

static const struct sd_backend_ops *ops;
static int result_fd = -1; /* rank 0 writes "0|name\n" / "1|name\n" here */

/* ---- the bootstrap: every collective is an allgather via the parent ---- */

static int bs_allgather(struct sd_bootstrap *bs, const void *send, void *recv,
			size_t len)
{
	int fd = (int)(intptr_t)bs->ctx;
	uint64_t l = len;
	if (sd_send_full(fd, &l, sizeof(l)) || sd_send_full(fd, send, len) ||
	    sd_recv_full(fd, recv, len * (size_t)bs->size))
		return SD_ERR_BOOTSTRAP;
	return SD_OK;
}

static int bs_bcast(struct sd_bootstrap *bs, void *buf, size_t len, int root)
{
	char *all = malloc(len * (size_t)bs->size + 1);
	int rc = all ? bs_allgather(bs, buf, all, len) : SD_ERR_NOMEM;
	if (!rc)
		memcpy(buf, all + (size_t)root * len, len);
	free(all);
	return rc;
}

static int bs_barrier(struct sd_bootstrap *bs)
{
	char c = 0, all[MAXN];
	return bs_allgather(bs, &c, all, 1);
}

/* The parent's side: serve allgather rounds until every rank has left. */
static int hub(const int *fds, int n)
{
	uint64_t lens[MAXN];
	for (;;) {
		int gone = 0;
		for (int r = 0; r < n; r++)
			if (sd_recv_full(fds[r], &lens[r], sizeof(lens[r])))
				gone++;
		if (gone == n)
			return 0;
		if (gone)
			return -1; /* a rank left while others wait */
		char *all = malloc(lens[0] * (size_t)n + 1);
		for (int r = 0; r < n; r++)
			if (lens[r] != lens[0] ||
			    sd_recv_full(fds[r], all + (size_t)r * lens[0], lens[0]))
				return -1;
		for (int r = 0; r < n; r++)
			if (sd_send_full(fds[r], all, lens[0] * (size_t)n))
				return -1;
		free(all);
	}
}

/* ---- checks, reported by rank 0 after combining every rank's verdict ---- */

static struct sd_bootstrap *g_bs;

/* All ranks call it with their own verdict; rank 0 reports the AND. */
static void report(int good, const char *fmt, ...)
{
	char name[300], line[320];
	char all[MAXN];
	char mine = (char)good;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(name, sizeof(name), fmt, ap);
	va_end(ap);
	if (bs_allgather(g_bs, &mine, all, 1))
		exit(3);
	for (int r = 0; r < g_bs->size; r++)
		good = good && all[r];
	if (g_bs->rank != 0)
		return;
	snprintf(line, sizeof(line), "%d|%s\n", good ? 1 : 0, name);
	if (sd_send_full(result_fd, line, strlen(line)))
		exit(3);
}

/* Whether `v` holds on at least one rank (every rank calls it). */
static int on_any_rank(int v)
{
	char all[MAXN];
	char mine = (char)v;
	if (bs_allgather(g_bs, &mine, all, 1))
		exit(3);
	for (int r = 0; r < g_bs->size; r++)
		if (all[r])
			return 1;
	return 0;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Fill, prepare, run twice (warm-up and check), verify; returns wrong
 * elements, or UINT64_MAX when a call failed (message in err). */
static uint64_t one_op(struct sd_comm *c, struct sd_op_args *a, void *sb,
		       void *rb, char *err, size_t errlen)
{
	uint64_t wrong = 0;
	struct sd_mismatch mm;
	sd_coll_place(a, ops->comm_rank(c), sb, rb);
	if (ops->fill(c, a, err, errlen) || ops->prepare(c, a, err, errlen) ||
	    ops->run(c, a, err, errlen) || ops->fill(c, a, err, errlen) ||
	    ops->run(c, a, err, errlen) || ops->wait(c, 1000, err, errlen) ||
	    ops->verify(c, a, &wrong, &mm, err, errlen))
		return UINT64_MAX;
	if (wrong)
		snprintf(err, errlen, "index %llu: expected %s, got %s",
			 (unsigned long long)mm.index, mm.expected, mm.got);
	return wrong;
}

/* Counts without nccl-tests' 16-byte rounding of a rank's block (a
 * "type size" of 16 rounds to 1 element): odd counts on purpose, to reach
 * the algorithms' remainders. */
static void set_counts(struct sd_op_args *a, size_t count, int n)
{
	sd_coll_counts(sd_coll_get(a->op), count, 16, n, &a->send_count,
		       &a->recv_count);
}

static int is_pow2(int n)
{
	return (n & (n - 1)) == 0;
}

/* Every op x type x redop x placement x algorithm, 7 elements per rank. */
static void check_matrix(struct sd_comm *c, int n)
{
	size_t bytes = 64 * 8 * MAXN;
	void *sb, *rb;
	char err[512];
	if (ops->buf_alloc(c, bytes, &sb, err, sizeof(err)) ||
	    ops->buf_alloc(c, bytes, &rb, err, sizeof(err)))
		exit(3);
	for (int op = 0; op < SD_OP_COUNT; op++) {
		const struct sd_coll *coll = sd_coll_get((enum sd_op)op);
		long cases = 0;
		uint64_t wrong = 0;
		char first[600] = "";
		for (int t = 0; t < SD_DTYPE_COUNT; t++) {
			if (!(ops->dtypes & (1u << t)))
				continue;
			for (int rd = 0; rd < SD_REDOP_COUNT; rd++) {
				if (rd && !coll->reduces)
					break;
				for (int ip = 0; ip <= coll->has_in_place; ip++)
				for (int al = -1; al < 0 ||
						  ops->algo_name((enum sd_op)op, al);
				     al++) {
					const char *an = al < 0 ? "auto"
						: ops->algo_name((enum sd_op)op, al);
					if (strcmp(an, "bcube") == 0 &&
					    !is_pow2(n))
						continue;
					struct sd_op_args a = { 0 };
					a.op = (enum sd_op)op;
					a.dtype = (enum sd_dtype)t;
					a.redop = (enum sd_redop)rd;
					a.root = n - 1;
					a.in_place = ip;
					a.algo = al;
					a.timeout_ms = 10000;
					a.seed = (uint32_t)(cases * 7 + 1);
					set_counts(&a, (size_t)(7 * n), n);
					uint64_t w = one_op(c, &a, sb, rb, err,
							    sizeof(err));
					cases++;
					if (w && !first[0])
						snprintf(first, sizeof(first),
							 "%s dtype %d redop %d %s "
							 "algo %s: %s",
							 coll->name, t, rd, ip ? "in-place"
								: "out-of-place",
							 an, err);
					if (w == UINT64_MAX) {
						report(0, "n=%d %s: %s", n,
						       coll->name, first);
						exit(3);
					}
					wrong += w;
				}
			}
		}
		if (first[0] && ops->comm_rank(c) >= 0)
			fprintf(stderr, "rank %d: %s\n", ops->comm_rank(c),
				first);
		report(wrong == 0, "n=%d %s: %ld cases (every type, redop, "
		       "placement and algorithm), 0 wrong", n, coll->name,
		       cases);
	}

	/* corrupt() flips one element that verify() then finds */
	struct sd_op_args a = { 0 };
	uint64_t w = 0;
	struct sd_mismatch mm;
	a.op = SD_OP_ALL_REDUCE;
	a.dtype = SD_FLOAT32;
	a.algo = -1;
	a.timeout_ms = 10000;
	set_counts(&a, 64, n);
	int good = one_op(c, &a, sb, rb, err, sizeof(err)) == 0;
	ops->corrupt(c, &a, 5);
	good = good && ops->verify(c, &a, &w, &mm, err, sizeof(err)) == 0 &&
	       w == 1 && mm.index == 5;
	report(good, "n=%d corrupt(5) is found by verify: 1 wrong at index 5",
	       n);
	ops->buf_free(c, sb);
	ops->buf_free(c, rb);
}

/* all_reduce sum on comm c (NULL: nothing to do); 1 when bit-exact. */
static int allreduce_ok(struct sd_comm *c)
{
	void *sb, *rb;
	char err[512];
	if (!c)
		return 1;
	if (ops->buf_alloc(c, 4096, &sb, err, sizeof(err)) ||
	    ops->buf_alloc(c, 4096, &rb, err, sizeof(err)))
		return 0;
	struct sd_op_args a = { 0 };
	a.op = SD_OP_ALL_REDUCE;
	a.dtype = SD_INT32;
	a.algo = -1;
	a.timeout_ms = 10000;
	set_counts(&a, 100, ops->comm_size(c));
	uint64_t w = one_op(c, &a, sb, rb, err, sizeof(err));
	if (w)
		fprintf(stderr, "split all_reduce: %s\n", err);
	ops->buf_free(c, sb);
	ops->buf_free(c, rb);
	return w == 0;
}

static void check_split(struct sd_comm *world, int me, int n)
{
	char err[512] = "";
	/* the last rank sits out; the others pair up by parity, reversed */
	int color = me == n - 1 ? -1 : me % 2;
	struct sd_comm *sub = NULL, *sub2 = NULL, *one = NULL;
	int rc = ops->comm_split(world, color, -me, &sub, err, sizeof(err));
	int want_size = 0, want_rank = 0;
	for (int q = 0; q < n - 1; q++)
		if (q % 2 == color) {
			want_size++;
			if (q > me)
				want_rank++;
		}
	int good = rc == SD_OK &&
		   (color < 0 ? sub == NULL
			      : sub && ops->comm_size(sub) == want_size &&
					ops->comm_rank(sub) == want_rank);
	if (rc)
		fprintf(stderr, "rank %d: split: %s\n", me, err);
	report(good, "n=%d comm_split by parity, key -rank, last rank out: "
	       "sizes, ranks by key, NULL for color -1", n);
	report(allreduce_ok(sub), "n=%d all_reduce on each split is bit-exact",
	       n);
	/* splits of the split: the whole group again, then rank 0 alone */
	if (sub) {
		rc = ops->comm_split(sub, 7, ops->comm_rank(sub), &sub2, err,
				     sizeof(err));
		if (!rc)
			rc = ops->comm_split(sub, ops->comm_rank(sub) == 0
							   ? 0 : -1,
					     0, &one, err, sizeof(err));
	}
	good = rc == SD_OK &&
	       (!sub || (sub2 && ops->comm_size(sub2) == ops->comm_size(sub) &&
			 ops->comm_rank(sub2) == ops->comm_rank(sub) &&
			 (ops->comm_rank(sub) == 0
				  ? one && ops->comm_size(one) == 1
				  : one == NULL)));
	report(good && allreduce_ok(sub2) && allreduce_ok(one),
	       "n=%d splits of a split work (same group; one rank alone)", n);
	ops->comm_destroy(one);
	ops->comm_destroy(sub2);
	ops->comm_destroy(sub);
}

/* Rank n-1 skips one all_reduce: some rank must time out (in a ring, rank
 * 0, whose left it is; halving-doubling, auto's choice at 4 ranks, may
 * have rank 0 wait on a peer whose own timeout closed their connection
 * first), the others time out or lose a peer; no rank may hang. */
static void check_timeout(struct sd_bootstrap *bs, int algo, const char *an)
{
	int me = bs->rank, n = bs->size;
	struct sd_comm_config cfg = { .timeout_ms = 1500, .iface = NULL };
	struct sd_comm *c = NULL;
	char err[512] = "";
	void *sb, *rb;
	int rc = ops->comm_create(bs, &cfg, &c, err, sizeof(err));
	if (rc || ops->buf_alloc(c, 4096, &sb, err, sizeof(err)) ||
	    ops->buf_alloc(c, 4096, &rb, err, sizeof(err))) {
		fprintf(stderr, "rank %d: %s\n", me, err);
		exit(3);
	}
	struct sd_op_args a = { 0 };
	a.op = SD_OP_ALL_REDUCE;
	a.dtype = SD_FLOAT32;
	a.algo = algo;
	a.timeout_ms = 1500;
	set_counts(&a, 256, n);
	sd_coll_place(&a, me, sb, rb);
	int good = 1, timed_out = 0;
	double t0 = now_s();
	if (me != n - 1) {
		ops->fill(c, &a, err, sizeof(err));
		ops->prepare(c, &a, err, sizeof(err));
		rc = ops->run(c, &a, err, sizeof(err));
		timed_out = rc == SD_ERR_TIMEOUT;
		good = timed_out || rc == SD_ERR_PEER;
		if (me == 0 || !good)
			printf("# rank %d of %d (%s): status %d after %.1f s: "
			       "%s\n", me, n, an, rc, now_s() - t0, err);
	}
	report(on_any_rank(timed_out) && good, "n=%d %s all_reduce with a "
	       "silent rank: SD_ERR_TIMEOUT on some rank, the others a "
	       "timeout or a lost peer", n, an);
	ops->abort(c);
	ops->comm_destroy(c); /* after abort: must not block */
	ops->buf_free(NULL, sb);
	ops->buf_free(NULL, rb);
}

/* One legacy all_reduce of check_legacy_timeouts, in a thread of its own. */
struct legacy_run {
	struct sd_comm *c;
	struct sd_op_args a;
	void *sb, *rb;
	int rc;
	double dt;
	char err[512];
};

static void *legacy_thread(void *arg)
{
	struct legacy_run *l = arg;
	double t0 = now_s();
	l->err[0] = '\0';
	ops->fill(l->c, &l->a, l->err, sizeof(l->err));
	l->rc = ops->prepare(l->c, &l->a, l->err, sizeof(l->err));
	if (!l->rc)
		l->rc = ops->run(l->c, &l->a, l->err, sizeof(l->err));
	l->dt = now_s() - t0;
	return NULL;
}

/* The legacy classes with only the operation's timeout short: rank n-1
 * skips an all_reduce whose own timeout is 1.5 s on communicators whose
 * timeout (their connections') is 60 s, one per legacy algorithm, all at
 * once in threads of their own (1.5 s in all, not 1.5 s each).  Every
 * rank must end within 10 s with SD_ERR_TIMEOUT, or SD_ERR_PEER where a
 * neighbour timed out first and closed its connections, and at least one
 * rank with SD_ERR_TIMEOUT.  Without a watch of their own the legacy
 * classes would wait the connections' 60 s. */
static void check_legacy_timeouts(struct sd_bootstrap *bs)
{
	int me = bs->rank, n = bs->size, nl = 0;
	struct sd_comm_config cfg = { .timeout_ms = 60000, .iface = NULL };
	struct legacy_run l[4];
	pthread_t th[4];
	const char *names[4];
	char err[512] = "";
	for (int al = 0; al < 4; al++) {
		const char *an = ops->algo_name(SD_OP_ALL_REDUCE, al);
		if (strcmp(an, "bcube") == 0 && !is_pow2(n))
			continue;
		struct legacy_run *x = &l[nl];
		memset(x, 0, sizeof(*x));
		if (ops->comm_create(bs, &cfg, &x->c, err, sizeof(err)) ||
		    ops->buf_alloc(x->c, 4096, &x->sb, err, sizeof(err)) ||
		    ops->buf_alloc(x->c, 4096, &x->rb, err, sizeof(err))) {
			fprintf(stderr, "rank %d: %s\n", me, err);
			exit(3);
		}
		x->a.op = SD_OP_ALL_REDUCE;
		x->a.dtype = SD_FLOAT32;
		x->a.algo = al;
		x->a.timeout_ms = 1500;
		set_counts(&x->a, 256, n);
		sd_coll_place(&x->a, me, x->sb, x->rb);
		names[nl++] = an;
	}
	/* the silent rank prepares, so that its buffers exist, and never
	 * runs: data for a legacy buffer not made yet makes Gloo's device
	 * loop spin (a core per communicator while the others wait) */
	for (int i = 0; i < nl && me == n - 1; i++) {
		ops->fill(l[i].c, &l[i].a, err, sizeof(err));
		ops->prepare(l[i].c, &l[i].a, err, sizeof(err));
	}
	if (me != n - 1) {
		for (int i = 0; i < nl; i++)
			if (pthread_create(&th[i], NULL, legacy_thread, &l[i]))
				exit(3);
		for (int i = 0; i < nl; i++)
			pthread_join(th[i], NULL);
	}
	for (int i = 0; i < nl; i++) {
		int timed_out = 0, good = 1;
		if (me != n - 1) {
			timed_out = l[i].rc == SD_ERR_TIMEOUT;
			good = (timed_out || l[i].rc == SD_ERR_PEER) &&
			       l[i].dt < 10.0;
			if (me == 0 || !good)
				printf("# rank %d of %d (%s): status %d after "
				       "%.1f s: %s\n", me, n, names[i],
				       l[i].rc, l[i].dt, l[i].err);
		}
		report(on_any_rank(timed_out) && good,
		       "n=%d %s all_reduce with a silent rank, a 1.5 s "
		       "timeout on connections of 60 s: SD_ERR_TIMEOUT (or a "
		       "lost peer) within 10 s", n, names[i]);
	}
	for (int i = 0; i < nl; i++) {
		ops->abort(l[i].c);
		ops->comm_destroy(l[i].c);
		ops->buf_free(NULL, l[i].sb);
		ops->buf_free(NULL, l[i].rb);
	}
}

struct aborter {
	struct sd_comm *c;
	int after_ms;
};

static void *abort_later(void *arg)
{
	const struct aborter *ab = arg;
	struct timespec ts = { ab->after_ms / 1000,
			       (ab->after_ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
	ops->abort(ab->c);
	return NULL;
}

/* Rank n-1 never joins an all_reduce whose timeout is 60 s; a thread of
 * every other rank calls abort() 300 ms in.  run() must return within 5 s
 * with SD_ERR_CANCELLED (or SD_ERR_PEER where a peer's abort closed the
 * connection first; at least one rank cancelled), a later run() must fail
 * at once, and comm_destroy() must not block.  With split, the operation
 * runs on a communicator split from the world (every rank, reversed),
 * whose connections are its own. */
static void check_abort(struct sd_bootstrap *bs, int algo, const char *an,
			int split)
{
	int me = bs->rank, n = bs->size;
	struct sd_comm_config cfg = { .timeout_ms = 60000, .iface = NULL };
	struct sd_comm *world = NULL, *c = NULL;
	char err[512] = "";
	void *sb, *rb;
	int rc = ops->comm_create(bs, &cfg, &world, err, sizeof(err));
	c = world;
	if (!rc && split)
		rc = ops->comm_split(world, 0, -me, &c, err, sizeof(err));
	if (rc || ops->buf_alloc(c, 4096, &sb, err, sizeof(err)) ||
	    ops->buf_alloc(c, 4096, &rb, err, sizeof(err))) {
		fprintf(stderr, "rank %d: %s\n", me, err);
		exit(3);
	}
	struct sd_op_args a = { 0 };
	a.op = SD_OP_ALL_REDUCE;
	a.dtype = SD_FLOAT32;
	a.algo = algo;
	a.timeout_ms = 60000;
	set_counts(&a, 256, n);
	sd_coll_place(&a, ops->comm_rank(c), sb, rb);
	int good = 1, cancelled = 0;
	/* every rank prepares (the silent one too: see
	 * check_legacy_timeouts); the silent one never runs */
	ops->fill(c, &a, err, sizeof(err));
	ops->prepare(c, &a, err, sizeof(err));
	if (me != n - 1) {
		struct aborter ab = { c, 300 };
		pthread_t th;
		if (pthread_create(&th, NULL, abort_later, &ab))
			exit(3);
		double t0 = now_s();
		rc = ops->run(c, &a, err, sizeof(err));
		double dt = now_s() - t0;
		pthread_join(th, NULL);
		cancelled = rc == SD_ERR_CANCELLED;
		good = (cancelled || rc == SD_ERR_PEER) && dt < 5.0;
		if (me == 0 || !good)
			printf("# rank %d of %d (%s%s): status %d after "
			       "%.1f s: %s\n", me, n, an,
			       split ? ", split" : "", rc, dt, err);
		t0 = now_s();
		rc = ops->run(c, &a, err, sizeof(err));
		good = good && rc == SD_ERR_CANCELLED && now_s() - t0 < 1.0;
	}
	report(on_any_rank(cancelled) && good,
	       "n=%d abort() from another thread unblocks an all_reduce "
	       "(%s%s) waiting for a silent rank: SD_ERR_CANCELLED (or a "
	       "lost peer) within 5 s of a 60 s timeout", n, an,
	       split ? ", on a split" : "");
	ops->abort(c);
	double t0 = now_s();
	if (split) {
		ops->comm_destroy(c);
		ops->abort(world);
	}
	ops->comm_destroy(world);
	report(now_s() - t0 < 5.0, "n=%d comm_destroy after abort() returns "
	       "at once (%s%s)", n, an, split ? ", split" : "");
	ops->buf_free(NULL, sb);
	ops->buf_free(NULL, rb);
}

/* Rank n-1 closes its communicator: rank 0 must see SD_ERR_PEER. */
static void check_peer(struct sd_bootstrap *bs)
{
	int me = bs->rank, n = bs->size;
	struct sd_comm_config cfg = { .timeout_ms = 3000, .iface = NULL };
	struct sd_comm *c = NULL;
	char err[512] = "";
	void *sb, *rb;
	if (ops->comm_create(bs, &cfg, &c, err, sizeof(err)) ||
	    ops->buf_alloc(c, 4096, &sb, err, sizeof(err)) ||
	    ops->buf_alloc(c, 4096, &rb, err, sizeof(err)))
		exit(3);
	if (me == n - 1) {
		ops->buf_free(c, sb);
		ops->buf_free(c, rb);
		ops->comm_destroy(c);
		c = NULL;
	}
	bs_barrier(bs);
	int good = 1;
	if (c) {
		struct sd_op_args a = { 0 };
		a.op = SD_OP_ALL_REDUCE;
		a.dtype = SD_FLOAT32;
		a.algo = -1;
		a.timeout_ms = 3000;
		set_counts(&a, 256, n);
		sd_coll_place(&a, me, sb, rb);
		ops->fill(c, &a, err, sizeof(err));
		int rc = ops->prepare(c, &a, err, sizeof(err));
		if (!rc)
			rc = ops->run(c, &a, err, sizeof(err));
		good = me == 0 ? rc == SD_ERR_PEER
			       : rc == SD_ERR_PEER || rc == SD_ERR_TIMEOUT;
		if (me == 0)
			printf("# rank 0 of %d: status %d: %s\n", n, rc, err);
		ops->abort(c);
		ops->comm_destroy(c);
		free(sb);
		free(rb);
	}
	report(good, "n=%d a rank that closed its communicator: SD_ERR_PEER",
	       n);
}

static int rank_main(int me, int n, int fd)
{
	char path[4096], err[512] = "";
	const char *top = getenv("top_builddir");
	snprintf(path, sizeof(path), "%s/plugins/gloo/.libs/backend_gloo.so",
		 top ? top : ".");
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "%s\n", dlerror());
		return 3;
	}
	ops = dlsym(h, SD_BACKEND_SYMBOL);
	if (!ops || ops->magic != SD_BACKEND_MAGIC)
		return 3;
	struct sd_bootstrap bs = {
		.rank = me, .size = n, .local_rank = me, .local_size = n,
		.host = "localhost", .ctx = (void *)(intptr_t)fd,
		.allgather = bs_allgather, .bcast = bs_bcast,
		.barrier = bs_barrier,
	};
	g_bs = &bs;
	struct sd_comm_config cfg = { .timeout_ms = 10000, .iface = NULL };
	struct sd_comm *world = NULL;
	int rc = ops->init(&bs, err, sizeof(err));
	if (!rc)
		rc = ops->comm_create(&bs, &cfg, &world, err, sizeof(err));
	report(rc == SD_OK && ops->comm_rank(world) == me &&
		       ops->comm_size(world) == n,
	       "n=%d comm_create over the bootstrap store", n);
	if (rc) {
		fprintf(stderr, "rank %d: %s\n", me, err);
		return 3;
	}
	check_matrix(world, n);
	check_split(world, me, n);
	ops->comm_destroy(world);
	check_timeout(&bs, -1, "auto");
	check_timeout(&bs, 4, "opts_ring");
	check_legacy_timeouts(&bs);
	check_abort(&bs, -1, "auto", 0);
	check_abort(&bs, 4, "opts_ring", 0);
	check_abort(&bs, -1, "auto", 1);
	check_peer(&bs);
	ops->fini();
	return 0;
}

/* Run n ranks; returns 0 when every rank exited 0. */
static int run_ranks(int n)
{
	int fds[MAXN], res[2];
	pid_t pids[MAXN];
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, res))
		return -1;
	for (int r = 0; r < n; r++) {
		int sv[2];
		if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
			return -1;
		fflush(stdout);
		pids[r] = fork();
		if (pids[r] == 0) {
			close(sv[0]);
			close(res[0]);
			for (int q = 0; q < r; q++)
				close(fds[q]);
			result_fd = res[1];
			alarm(120);
			int code = rank_main(r, n, sv[1]);
			fflush(stdout);
			_exit(code);
		}
		close(sv[1]);
		fds[r] = sv[0];
	}
	close(res[1]);
	int hub_rc = hub(fds, n);
	if (hub_rc)
		for (int r = 0; r < n; r++)
			kill(pids[r], SIGKILL);
	for (int r = 0; r < n; r++)
		close(fds[r]);
	/* rank 0's findings */
	FILE *f = fdopen(res[0], "r");
	char line[400];
	while (f && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		ok(line[0] == '1', "%s", line + 2);
	}
	if (f)
		fclose(f);
	int all = 0;
	for (int r = 0; r < n; r++) {
		int st = 0;
		waitpid(pids[r], &st, 0);
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
			all = -1;
	}
	return hub_rc ? -1 : all;
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (int n = 2; n <= 4; n++)
		ok(run_ranks(n) == 0, "n=%d every rank exited 0, none hung",
		   n);
	return done_testing();
}
