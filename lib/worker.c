/*
 * worker.c - a test in processes of its own (worker.h).
 *
 * One stream socket between a rank and its worker.  Every message is a
 * header (type, status, payload length) and its payload.  The rank sends
 * a request and reads until the reply; meanwhile the worker may ask for
 * bootstrap calls (allgather, bcast, barrier), which the rank carries out
 * on its own bootstrap and answers.
 */
#include "config.h"

#include "worker.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

extern char **environ;

enum msg_type {
	/* the rank's requests */
	W_CREATE = 1,
	W_SPLIT,
	W_ALLOC,
	W_FREE,
	W_MEASURE,
	W_DESTROY,
	W_QUIT,
	/* the answer to a request, either way */
	W_REPLY = 100,
	/* the worker's bootstrap calls */
	W_BS_ALLGATHER,
	W_BS_BCAST,
	W_BS_BARRIER
};

struct hdr {
	uint32_t type;
	int32_t status;
	uint64_t len;
};

/* The most one message carries (a measurement's per-iteration times, an
 * allgather of a large job's addresses). */
#define W_MAX_PAYLOAD (256u << 20)

struct sd_worker {
	pid_t pid;
	int fd;
	int rank;
	char host[64];
	char variant[64];
	int timeout_ms;
	volatile sig_atomic_t *cancel;
	struct sd_bootstrap *bs;
	int dead;      /* ended, killed or cut off: every call fails */
	int status;    /* the status every call then returns */
	char why[320]; /* and its message */
};

/* A communicator of the worker, as the rank sees it. */
struct worker_comm {
	struct sd_worker *w;
	int which; /* 0 the world, 1 the test's split */
	int rank, size;
};

#define WC(c) ((struct worker_comm *)(void *)(c))

/* --- bytes on the socket ------------------------------------------------ */

/* Read len bytes; wait at most until `deadline` (sd_now seconds; 0:
 * forever) and stop when *cancel is set.  0, -1 (closed or failed), -2
 * (timed out) or -3 (cancelled). */
static int get_all(int fd, void *buf, size_t len, double deadline,
		   volatile sig_atomic_t *cancel)
{
	char *p = buf;
	while (len) {
		if (deadline > 0 || cancel) {
			double left = deadline > 0 ? deadline - sd_now() : 1;
			if (left <= 0)
				return -2;
			if (cancel && *cancel)
				return -3;
			struct pollfd pf = { .fd = fd, .events = POLLIN };
			int ms = left > 0.2 ? 200 : (int)(left * 1000) + 1;
			int k = poll(&pf, 1, ms);
			if (k < 0 && errno != EINTR)
				return -1;
			if (k <= 0)
				continue;
		}
		ssize_t n = recv(fd, p, len, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int put_msg(int fd, uint32_t type, int32_t status, const void *a,
		   size_t alen, const void *b, size_t blen)
{
	struct hdr h = { .type = type,
			 .status = status,
			 .len = (uint64_t)(alen + blen) };
	if (sd_send_full(fd, &h, sizeof(h)))
		return -1;
	if (alen && sd_send_full(fd, a, alen))
		return -1;
	if (blen && sd_send_full(fd, b, blen))
		return -1;
	return 0;
}

/* A message's payload, read whole (NUL-terminated past its end). */
static int get_payload(int fd, const struct hdr *h, char **out, double deadline,
		       volatile sig_atomic_t *cancel)
{
	*out = NULL;
	if (h->len > W_MAX_PAYLOAD)
		return -1;
	char *p = malloc((size_t)h->len + 1);
	if (!p)
		return -1;
	int rc = get_all(fd, p, (size_t)h->len, deadline, cancel);
	if (rc) {
		free(p);
		return rc;
	}
	p[h->len] = '\0';
	*out = p;
	return 0;
}

/* --- the rank's side ---------------------------------------------------- */

/* Wait up to tries x 10 ms for pid to end, then kill it.  Returns what
 * waitpid returned when it ended on its own (> 0), else 0, with *st its
 * status either way. */
static pid_t reap(pid_t pid, int tries, int *st)
{
	pid_t got = 0;
	for (int i = 0; i < tries && got == 0; i++) {
		got = waitpid(pid, st, WNOHANG);
		if (got == 0)
			usleep(10000);
	}
	if (got == 0) {
		kill(pid, SIGKILL);
		waitpid(pid, st, 0);
	}
	return got;
}

/* The worker is gone or cut off: reap it and say so once; every later
 * call returns the same. */
static int worker_lost(struct sd_worker *w, int how, char *err, size_t errlen)
{
	if (!w->dead) {
		w->dead = 1;
		int st = 0;
		if (how == -2 || how == -3) {
			kill(w->pid, SIGKILL);
			waitpid(w->pid, &st, 0);
			w->status =
				how == -2 ? SD_ERR_TIMEOUT : SD_ERR_CANCELLED;
			snprintf(w->why, sizeof(w->why),
				 how == -2 ? "the %s worker process of rank %d "
					     "(%s) did not answer in %d s and "
					     "was stopped"
					   : "the %s worker process of rank %d "
					     "(%s) was stopped: the run was "
					     "cancelled",
				 w->variant, w->rank, w->host,
				 (w->timeout_ms + 999) / 1000);
		} else {
			/* closed: it ended; give it a moment to be reaped */
			pid_t got = reap(w->pid, 50, &st);
			char how_s[64] = "went away";
			if (got > 0 && WIFSIGNALED(st))
				snprintf(how_s, sizeof(how_s),
					 "was killed by signal %d",
					 WTERMSIG(st));
			else if (got > 0 && WIFEXITED(st))
				snprintf(how_s, sizeof(how_s),
					 "exited with status %d",
					 WEXITSTATUS(st));
			/* its own failure, not a peer's: the control plane
			 * blames this rank (a backend that failed outright) */
			w->status = SD_ERR_BACKEND;
			snprintf(w->why, sizeof(w->why),
				 "the %s worker process of rank %d (%s) %s",
				 w->variant, w->rank, w->host, how_s);
		}
		w->pid = -1;
	}
	snprintf(err, errlen, "%s", w->why);
	return w->status;
}

/* Carry out one bootstrap call the worker asked for, and answer it. */
static int serve_bs(struct sd_worker *w, const struct hdr *h, char *p)
{
	struct sd_bootstrap *bs = w->bs;
	int rc;
	if (h->type == W_BS_BARRIER) {
		rc = bs->barrier(bs);
		return put_msg(w->fd, W_REPLY, rc, NULL, 0, NULL, 0);
	}
	if (h->type == W_BS_ALLGATHER) {
		size_t len = (size_t)h->len;
		char *all = malloc(len * (size_t)bs->size + 1);
		rc = all ? bs->allgather(bs, p, all, len) : SD_ERR_NOMEM;
		int bad = put_msg(w->fd, W_REPLY, rc, all,
				  rc ? 0 : len * (size_t)bs->size, NULL, 0);
		free(all);
		return bad;
	}
	/* bcast: the root, then the bytes */
	int32_t root;
	if (h->len < sizeof(root))
		return -1;
	memcpy(&root, p, sizeof(root));
	size_t len = (size_t)h->len - sizeof(root);
	rc = bs->bcast(bs, p + sizeof(root), len, root);
	return put_msg(w->fd, W_REPLY, rc, p + sizeof(root), rc ? 0 : len, NULL,
		       0);
}

/*
 * One request: send it, serve the worker's bootstrap calls, read the
 * reply (its payload in *out, malloc'd, when out is not NULL).  Returns
 * the reply's status, or the worker's loss.
 */
static int call(struct sd_worker *w, uint32_t type, const void *a, size_t alen,
		const void *b, size_t blen, char **out, size_t *outlen,
		char *err, size_t errlen)
{
	if (out)
		*out = NULL;
	if (w->dead)
		return worker_lost(w, 0, err, errlen);
	if (put_msg(w->fd, type, 0, a, alen, b, blen))
		return worker_lost(w, -1, err, errlen);
	for (;;) {
		/* its silence is measured from its last word */
		double deadline = sd_now() + w->timeout_ms / 1000.0;
		struct hdr h;
		int rc = get_all(w->fd, &h, sizeof(h), deadline, w->cancel);
		char *p = NULL;
		if (!rc)
			rc = get_payload(w->fd, &h, &p, deadline, w->cancel);
		if (rc)
			return worker_lost(w, rc, err, errlen);
		if (h.type == W_REPLY) {
			if (h.status)
				snprintf(err, errlen, "%s", p);
			if (out) {
				*out = p;
				if (outlen)
					*outlen = (size_t)h.len;
			} else {
				free(p);
			}
			return h.status;
		}
		int bad = h.type < W_BS_ALLGATHER || h.type > W_BS_BARRIER ||
			  serve_bs(w, &h, p);
		free(p);
		if (bad)
			return worker_lost(w, -1, err, errlen);
	}
}

static void worker_env_free(char **env)
{
	if (!env)
		return;
	for (size_t i = 0; env[i]; i++) {
		int ours = 1;
		for (size_t j = 0; environ[j] && ours; j++)
			ours = env[i] != environ[j];
		if (ours)
			free(env[i]);
	}
	free(env);
}

/* "NAME=VALUE ..." over the environment: the worker's envp. */
static char **worker_env(const char *pairs)
{
	size_t n = 0, extra = 0;
	while (environ[n])
		n++;
	int bad = 0;
	char *copy = sd_dupstr(pairs ? pairs : "", &bad);
	if (!copy)
		return NULL;
	for (char *s = copy; *s; s++)
		extra += *s == '=';
	char **env = calloc(n + extra + 1, sizeof(*env));
	if (!env) {
		free(copy);
		return NULL;
	}
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		/* left out where the pairs set the same name */
		size_t nl = strcspn(environ[i], "=");
		int set = 0;
		for (const char *q = copy; *q && !set;) {
			q += strspn(q, " ");
			size_t ql = strcspn(q, "=");
			set = ql == nl && strncmp(q, environ[i], nl) == 0;
			q += strcspn(q, " ");
		}
		if (!set)
			env[k++] = environ[i];
	}
	/* the strings not from environ are this call's (worker_env_free);
	 * of two pairs of one name the later wins (a test's process_env
	 * over what its transport and iface set) */
	size_t base = k;
	for (char *save = NULL, *tok = strtok_r(copy, " ", &save); tok;
	     tok = strtok_r(NULL, " ", &save)) {
		size_t tl = strcspn(tok, "="), j = base;
		while (j < k && !(strcspn(env[j], "=") == tl &&
				  !strncmp(env[j], tok, tl)))
			j++;
		char *dup = sd_dupstr(tok, &bad);
		if (!dup)
			continue;
		if (j < k)
			free(env[j]);
		else
			k++;
		env[j] = dup;
	}
	free(copy);
	if (bad) {
		worker_env_free(env);
		return NULL;
	}
	return env;
}

int sd_worker_start(const struct sd_worker_spec *spec, struct sd_bootstrap *bs,
		    struct sd_worker **out, char *err, size_t errlen)
{
	*out = NULL;
	if (!spec->exe || !spec->backend) {
		snprintf(err, errlen,
			 "this program cannot start worker "
			 "processes (it does not know its own path)");
		return SD_ERR_INVALID;
	}
	struct sd_worker *w = calloc(1, sizeof(*w));
	int sv[2] = { -1, -1 };
	if (!w) {
		snprintf(err, errlen, "out of memory");
		return SD_ERR_NOMEM;
	}
	w->pid = -1;
	w->rank = bs->rank;
	w->bs = bs;
	w->cancel = spec->cancel;
	w->timeout_ms = spec->timeout_ms > 0 ? spec->timeout_ms : 60000;
	snprintf(w->host, sizeof(w->host), "%s", bs->host ? bs->host : "");
	snprintf(w->variant, sizeof(w->variant), "%s",
		 spec->variant && *spec->variant ? spec->variant : "test's");
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)) {
		snprintf(err, errlen,
			 "cannot make a socket for the %s worker "
			 "process: %s",
			 w->variant, strerror(errno));
		free(w);
		return SD_ERR_IO;
	}
	/* the worker's end survives the exec */
	int fl = fcntl(sv[1], F_GETFD);
	fcntl(sv[1], F_SETFD, fl & ~FD_CLOEXEC);
	char a_fd[16], a_rank[16], a_size[16], a_lrank[16], a_lsize[16];
	snprintf(a_fd, sizeof(a_fd), "%d", sv[1]);
	snprintf(a_rank, sizeof(a_rank), "%d", bs->rank);
	snprintf(a_size, sizeof(a_size), "%d", bs->size);
	snprintf(a_lrank, sizeof(a_lrank), "%d", bs->local_rank);
	snprintf(a_lsize, sizeof(a_lsize), "%d", bs->local_size);
	char *argv[] = { (char *)"shakedown",
			 (char *)"worker",
			 (char *)"--fd",
			 a_fd,
			 (char *)"--backend",
			 (char *)spec->backend,
			 (char *)"--rank",
			 a_rank,
			 (char *)"--size",
			 a_size,
			 (char *)"--local-rank",
			 a_lrank,
			 (char *)"--local-size",
			 a_lsize,
			 (char *)"--host",
			 w->host,
			 NULL };
	/* the worker gets its end of the socket and nothing else of the
	 * rank's: not the rank's communicator, control-plane and PMI
	 * sockets, which it would otherwise hold open (and which the
	 * proof of its path would count as its connections) */
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_t *fap = NULL;
#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 34)
	if (posix_spawn_file_actions_init(&fa) == 0) {
		fap = &fa;
		if (posix_spawn_file_actions_addclosefrom_np(
			    &fa, sv[1] > 2 ? sv[1] + 1 : 3)) {
			posix_spawn_file_actions_destroy(&fa);
			fap = NULL;
		}
	}
	/* the fds below the worker's end: closed one by one */
	for (int fd = 3; fap && fd < sv[1]; fd++)
		if (fcntl(fd, F_GETFD) >= 0)
			posix_spawn_file_actions_addclose(&fa, fd);
#else
	(void)fa;
#endif
	char **env = worker_env(spec->env);
	int rc = env ? posix_spawn(&w->pid, spec->exe, fap, NULL, argv, env)
		     : ENOMEM;
	if (fap)
		posix_spawn_file_actions_destroy(fap);
	worker_env_free(env);
	close(sv[1]);
	if (rc) {
		snprintf(err, errlen,
			 "cannot start the %s worker process "
			 "(%s): %s",
			 w->variant, spec->exe, strerror(rc));
		close(sv[0]);
		free(w);
		return SD_ERR_IO;
	}
	w->fd = sv[0];
	*out = w;
	return SD_OK;
}

/* The create request: the timeout, then the interface and the env as
 * NUL-terminated strings. */
int sd_worker_comm_create(struct sd_worker *w, const struct sd_comm_config *cfg,
			  struct sd_comm **out, char *err, size_t errlen)
{
	*out = NULL;
	int32_t t = cfg->timeout_ms;
	const char *iface = cfg->iface ? cfg->iface : "";
	const char *env = cfg->env ? cfg->env : "";
	size_t il = strlen(iface) + 1, el = strlen(env) + 1;
	char *q = malloc(sizeof(t) + il + el);
	if (!q) {
		snprintf(err, errlen, "out of memory");
		return SD_ERR_NOMEM;
	}
	memcpy(q, &t, sizeof(t));
	memcpy(q + sizeof(t), iface, il);
	memcpy(q + sizeof(t) + il, env, el);
	char *rep = NULL;
	size_t len = 0;
	int rc = call(w, W_CREATE, q, sizeof(t) + il + el, NULL, 0, &rep, &len,
		      err, errlen);
	free(q);
	int32_t rs[2];
	if (!rc && (len != sizeof(rs) || !rep))
		rc = worker_lost(w, -1, err, errlen);
	struct worker_comm *c = rc ? NULL : calloc(1, sizeof(*c));
	if (!rc && !c) {
		snprintf(err, errlen, "out of memory");
		rc = SD_ERR_NOMEM;
	}
	if (c) {
		memcpy(rs, rep, sizeof(rs));
		*c = (struct worker_comm){
			.w = w, .which = 0, .rank = rs[0], .size = rs[1]
		};
		*out = (struct sd_comm *)(void *)c;
	}
	free(rep);
	return rc;
}

static int w_split(struct sd_comm *parent, int color, int key,
		   struct sd_comm **out, char *err, size_t errlen)
{
	*out = NULL;
	struct sd_worker *w = WC(parent)->w;
	int32_t q[2] = { color, key };
	char *rep = NULL;
	size_t len = 0;
	int rc = call(w, W_SPLIT, q, sizeof(q), NULL, 0, &rep, &len, err,
		      errlen);
	int32_t rs[2];
	if (!rc && len != sizeof(rs))
		rc = worker_lost(w, -1, err, errlen);
	if (!rc)
		memcpy(rs, rep, sizeof(rs));
	free(rep);
	if (rc || color < 0)
		return rc;
	struct worker_comm *c = calloc(1, sizeof(*c));
	if (!c) {
		snprintf(err, errlen, "out of memory");
		return SD_ERR_NOMEM;
	}
	*c = (struct worker_comm){
		.w = w, .which = 1, .rank = rs[0], .size = rs[1]
	};
	*out = (struct sd_comm *)(void *)c;
	return SD_OK;
}

static int w_rank(const struct sd_comm *c)
{
	return ((const struct worker_comm *)(const void *)c)->rank;
}

static int w_size(const struct sd_comm *c)
{
	return ((const struct worker_comm *)(const void *)c)->size;
}

static void w_destroy(struct sd_comm *comm)
{
	struct worker_comm *c = WC(comm);
	char err[64];
	int32_t which = c->which;
	if (!c->w->dead)
		call(c->w, W_DESTROY, &which, sizeof(which), NULL, 0, NULL,
		     NULL, err, sizeof(err));
	free(c);
}

static int w_alloc(struct sd_comm *comm, size_t bytes, void **out, char *err,
		   size_t errlen)
{
	struct worker_comm *c = WC(comm);
	uint64_t q[2] = { (uint64_t)c->which, (uint64_t)bytes };
	char *rep = NULL;
	size_t len = 0;
	*out = NULL;
	int rc = call(c->w, W_ALLOC, q, sizeof(q), NULL, 0, &rep, &len, err,
		      errlen);
	uint64_t h;
	if (!rc && len != sizeof(h))
		rc = worker_lost(c->w, -1, err, errlen);
	if (!rc) {
		memcpy(&h, rep, sizeof(h));
		*out = (void *)(uintptr_t)h;
	}
	free(rep);
	return rc;
}

static void w_free(struct sd_comm *comm, void *ptr)
{
	struct worker_comm *c = WC(comm);
	uint64_t q[2] = { (uint64_t)c->which, (uint64_t)(uintptr_t)ptr };
	char err[64];
	if (!c->w->dead)
		call(c->w, W_FREE, q, sizeof(q), NULL, 0, NULL, NULL, err,
		     sizeof(err));
}

/* From another thread too: the pid is read, the worker killed; the rank's
 * wait then ends on the closed socket. */
static void w_abort(struct sd_comm *comm)
{
	pid_t pid = WC(comm)->w->pid;
	if (pid > 0)
		kill(pid, SIGKILL);
}

const struct sd_backend_ops sd_worker_ops = {
	SD_BACKEND_IDENTITY("worker", "1"),
	.comm_split = w_split,
	.comm_rank = w_rank,
	.comm_size = w_size,
	.comm_destroy = w_destroy,
	.buf_alloc = w_alloc,
	.buf_free = w_free,
	.abort = w_abort,
};

/* A measurement request: the op (its buffers the worker's own), how it
 * repeats and the fault, as this executable lays them out. */
struct measure_req {
	int32_t which;
	int32_t has_fault, slow, here;
	struct sd_op_args a;
	struct sd_measure_spec m;
	struct sd_fault f;
};

struct measure_rep {
	struct sd_rank_result res;
	char step[32];
};

int sd_worker_measure(struct sd_comm *comm, struct sd_op_args *a,
		      const struct sd_measure_spec *m,
		      const struct sd_measure_fault *f,
		      struct sd_rank_result *res, double *iter_us,
		      const char **step, char *err, size_t errlen)
{
	struct worker_comm *c = WC(comm);
	struct measure_req q;
	memset(&q, 0, sizeof(q));
	q.which = c->which;
	q.a = *a;
	q.m = *m;
	if (f && f->fault) {
		q.has_fault = 1;
		q.f = *f->fault;
		q.f.exit_fn = NULL;
		q.slow = f->slow;
		q.here = f->here;
	}
	char *rep = NULL;
	size_t len = 0;
	*step = "run";
	int rc = call(c->w, W_MEASURE, &q, sizeof(q), NULL, 0, &rep, &len, err,
		      errlen);
	size_t want = sizeof(struct measure_rep) +
		      (m->per_iter ? (size_t)m->iters * sizeof(double) : 0);
	if (rc && rep && len >= sizeof(struct measure_rep)) {
		/* the worker's own failure: its step, then its message */
		static const char *const steps[] = {
			"fill",	   "prepare", "warm-up",
			"barrier", "run",     "per-iteration times",
			"check",   "verify"
		};
		const struct measure_rep *r = (const void *)rep;
		for (size_t i = 0; i < sizeof(steps) / sizeof(*steps); i++)
			if (strncmp(r->step, steps[i], sizeof(r->step)) == 0)
				*step = steps[i];
		snprintf(err, errlen, "%s", rep + sizeof(struct measure_rep));
	} else if (!rc && len != want) {
		rc = worker_lost(c->w, -1, err, errlen);
	} else if (!rc) {
		const struct measure_rep *r = (const void *)rep;
		*res = r->res;
		if (m->per_iter && m->iters > 0)
			memcpy(iter_us, rep + sizeof(*r),
			       (size_t)m->iters * sizeof(double));
		if (f && f->fault && f->here &&
		    f->fault->kind == SD_FAULT_CORRUPT)
			f->fault->fired = 1;
	}
	free(rep);
	return rc;
}

pid_t sd_worker_pid(const struct sd_worker *w)
{
	return w && !w->dead ? w->pid : -1;
}

void sd_worker_stop(struct sd_worker *w)
{
	if (!w)
		return;
	if (!w->dead && w->pid > 0) {
		put_msg(w->fd, W_QUIT, 0, NULL, 0, NULL, 0);
		int st;
		reap(w->pid, 300, &st);
	}
	close(w->fd);
	free(w);
}

/* --- the worker's side -------------------------------------------------- */

struct serve {
	int fd;
	struct sd_bootstrap bs;
	const struct sd_backend_ops *ops;
	struct sd_comm *comm[2]; /* the world, the split */
	int inited;
	void (*exit_fn)(int status); /* a planted exit fault's */
};

/* A bootstrap call: ask the rank, wait for its answer (the rank's
 * bootstrap has its own timeouts). */
static int bs_call(struct serve *s, uint32_t type, const void *a, size_t alen,
		   const void *b, size_t blen, void *out, size_t outlen)
{
	struct hdr h;
	char *p = NULL;
	if (put_msg(s->fd, type, 0, a, alen, b, blen) ||
	    get_all(s->fd, &h, sizeof(h), 0, NULL) ||
	    get_payload(s->fd, &h, &p, 0, NULL) || h.type != W_REPLY)
		return SD_ERR_PEER;
	int rc = h.status;
	if (!rc && h.len != outlen)
		rc = SD_ERR_BOOTSTRAP;
	if (!rc && outlen)
		memcpy(out, p, outlen);
	free(p);
	return rc;
}

#define SERVE(bs) ((struct serve *)(bs)->ctx)

static int s_allgather(struct sd_bootstrap *bs, const void *send, void *recv,
		       size_t len)
{
	return bs_call(SERVE(bs), W_BS_ALLGATHER, send, len, NULL, 0, recv,
		       len * (size_t)bs->size);
}

static int s_bcast(struct sd_bootstrap *bs, void *buf, size_t len, int root)
{
	int32_t r = root;
	return bs_call(SERVE(bs), W_BS_BCAST, &r, sizeof(r), buf, len, buf,
		       len);
}

static int s_barrier(struct sd_bootstrap *bs)
{
	return bs_call(SERVE(bs), W_BS_BARRIER, NULL, 0, NULL, 0, NULL, 0);
}

static int reply(struct serve *s, int rc, const void *a, size_t alen,
		 const void *b, size_t blen)
{
	return put_msg(s->fd, W_REPLY, rc, a, alen, b, blen);
}

/* A failure's answer: its message. */
static int reply_err(struct serve *s, int rc, const char *err)
{
	return reply(s, rc, err, strlen(err) + 1, NULL, 0);
}

static int s_create(struct serve *s, const char *p, size_t len)
{
	char err[1024] = "";
	int32_t t;
	if (len < sizeof(t) + 2)
		return reply_err(s, SD_ERR_INVALID, "bad create request");
	memcpy(&t, p, sizeof(t));
	const char *iface = p + sizeof(t);
	const char *env = iface + strlen(iface) + 1;
	struct sd_comm_config cfg = { .timeout_ms = t,
				      .iface = *iface ? iface : NULL,
				      .env = *env ? env : NULL };
	int rc = SD_OK;
	if (!s->inited) {
		rc = s->ops->init(&s->bs, err, sizeof(err));
		s->inited = !rc;
	}
	if (!rc && s->comm[0])
		rc = SD_ERR_INVALID;
	if (!rc)
		rc = s->ops->comm_create(&s->bs, &cfg, &s->comm[0], err,
					 sizeof(err));
	if (rc)
		return reply_err(s, rc, err[0] ? err : "cannot create");
	int32_t rs[2] = { s->ops->comm_rank(s->comm[0]),
			  s->ops->comm_size(s->comm[0]) };
	return reply(s, SD_OK, rs, sizeof(rs), NULL, 0);
}

static int s_split(struct serve *s, const char *p, size_t len)
{
	char err[1024] = "";
	int32_t q[2];
	if (len != sizeof(q) || !s->comm[0])
		return reply_err(s, SD_ERR_INVALID, "bad split request");
	memcpy(q, p, sizeof(q));
	if (s->comm[1]) {
		s->ops->comm_destroy(s->comm[1]);
		s->comm[1] = NULL;
	}
	int rc = s->ops->comm_split(s->comm[0], q[0], q[1], &s->comm[1], err,
				    sizeof(err));
	if (rc)
		return reply_err(s, rc, err);
	int32_t rs[2] = { -1, 0 };
	if (s->comm[1]) {
		rs[0] = s->ops->comm_rank(s->comm[1]);
		rs[1] = s->ops->comm_size(s->comm[1]);
	}
	return reply(s, SD_OK, rs, sizeof(rs), NULL, 0);
}

static struct sd_comm *which_comm(struct serve *s, uint64_t which)
{
	return which < 2 ? s->comm[which] : NULL;
}

static int s_alloc(struct serve *s, const char *p, size_t len)
{
	char err[1024] = "";
	uint64_t q[2];
	if (len != sizeof(q))
		return reply_err(s, SD_ERR_INVALID, "bad alloc request");
	memcpy(q, p, sizeof(q));
	struct sd_comm *c = which_comm(s, q[0]);
	void *ptr = NULL;
	int rc = c ? s->ops->buf_alloc(c, (size_t)q[1], &ptr, err, sizeof(err))
		   : SD_ERR_INVALID;
	if (rc)
		return reply_err(s, rc, err[0] ? err : "no communicator");
	uint64_t h = (uint64_t)(uintptr_t)ptr;
	return reply(s, SD_OK, &h, sizeof(h), NULL, 0);
}

static int s_free(struct serve *s, const char *p, size_t len)
{
	uint64_t q[2];
	if (len != sizeof(q))
		return reply_err(s, SD_ERR_INVALID, "bad free request");
	memcpy(q, p, sizeof(q));
	struct sd_comm *c = which_comm(s, q[0]);
	if (c && s->ops->buf_free)
		s->ops->buf_free(c, (void *)(uintptr_t)q[1]);
	return reply(s, SD_OK, NULL, 0, NULL, 0);
}

static int s_destroy(struct serve *s, const char *p, size_t len)
{
	int32_t which;
	if (len != sizeof(which))
		return reply_err(s, SD_ERR_INVALID, "bad destroy request");
	memcpy(&which, p, sizeof(which));
	struct sd_comm *c = which_comm(s, (uint64_t)which);
	if (c) {
		s->ops->comm_destroy(c);
		s->comm[which] = NULL;
	}
	return reply(s, SD_OK, NULL, 0, NULL, 0);
}

static int s_measure(struct serve *s, const char *p, size_t len)
{
	char err[1024] = "";
	struct measure_req q;
	struct measure_rep r;
	memset(&r, 0, sizeof(r));
	if (len != sizeof(q))
		return reply_err(s, SD_ERR_INVALID, "bad measure request");
	memcpy(&q, p, sizeof(q));
	struct sd_comm *c = which_comm(s, (uint64_t)q.which);
	if (!c || q.m.iters < 0 || q.m.iters > 100000000)
		return reply_err(s, SD_ERR_INVALID, "bad measure request");
	q.f.exit_fn = s->exit_fn;
	struct sd_measure_fault mf = { .fault = q.has_fault ? &q.f : NULL,
				       .slow = q.slow,
				       .here = q.here };
	size_t ni = q.m.per_iter ? (size_t)q.m.iters : 0;
	double *iter_us = calloc(ni ? ni : 1, sizeof(double));
	const char *step = "run";
	int rc = iter_us ? sd_measure_local(s->ops, c, &q.a, &q.m, &mf, &r.res,
					    iter_us, &step, err, sizeof(err))
			 : SD_ERR_NOMEM;
	snprintf(r.step, sizeof(r.step), "%s", step);
	int bad = rc ? reply(s, rc, &r, sizeof(r), err, strlen(err) + 1)
		     : reply(s, SD_OK, &r, sizeof(r), iter_us,
			     ni * sizeof(double));
	free(iter_us);
	return bad;
}

int sd_worker_serve(int fd, const struct sd_backend_ops *ops, int rank,
		    int size, int local_rank, int local_size, const char *host,
		    void (*exit_fn)(int status), char *err, size_t errlen)
{
	struct serve s = { .fd = fd, .ops = ops, .exit_fn = exit_fn };
	s.bs = (struct sd_bootstrap){
		.rank = rank,
		.size = size,
		.local_rank = local_rank,
		.local_size = local_size,
		.host = host,
		.ctx = &s,
		.allgather = s_allgather,
		.bcast = s_bcast,
		.barrier = s_barrier,
	};
	int rc = SD_OK;
	for (;;) {
		struct hdr h;
		char *p = NULL;
		if (get_all(fd, &h, sizeof(h), 0, NULL) ||
		    get_payload(fd, &h, &p, 0, NULL)) {
			snprintf(err, errlen, "the rank went away");
			rc = SD_ERR_PEER;
			break;
		}
		int bad = 0;
		size_t len = (size_t)h.len;
		switch (h.type) {
		case W_CREATE: bad = s_create(&s, p, len); break;
		case W_SPLIT: bad = s_split(&s, p, len); break;
		case W_ALLOC: bad = s_alloc(&s, p, len); break;
		case W_FREE: bad = s_free(&s, p, len); break;
		case W_DESTROY: bad = s_destroy(&s, p, len); break;
		case W_MEASURE: bad = s_measure(&s, p, len); break;
		case W_QUIT: break;
		default: bad = reply_err(&s, SD_ERR_INVALID, "unknown request");
		}
		free(p);
		if (h.type == W_QUIT)
			break;
		if (bad) {
			snprintf(err, errlen, "the rank went away");
			rc = SD_ERR_PEER;
			break;
		}
	}
	for (int i = 1; i >= 0; i--)
		if (s.comm[i])
			ops->comm_destroy(s.comm[i]);
	if (s.inited && ops->fini)
		ops->fini();
	return rc;
}
