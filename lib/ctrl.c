/*
 * ctrl.c - the control plane (see ctrl.h).
 *
 * Wire format: a 20-byte header (type, rank, group, seq, payload length;
 * host byte order: all ranks of a job run the same binary on the same
 * architecture) and the payload.  Rank 0's server thread owns every socket
 * for reading; writes take `wmu`.  Shared state is guarded by `mu`; `cv`
 * wakes whoever waits for results, an answer or the verdict.
 *
 * Scale: rank 0 keeps one connection per rank (32,768 ranks: 4,096 nodes
 * of 8) and serves them from one thread with epoll, so the cost of a step
 * is the messages that arrive, not the ranks that are quiet.  Each ready
 * socket is drained without blocking into one shared buffer; only a
 * message cut in the middle is kept per rank.  The results of a step are
 * counted as they arrive, so the step waits for a count, not for a scan of
 * every rank.  One leader per node fanning in to rank 0 would cut rank 0's
 * connections by 8, but a leader's death would hide which of its ranks
 * was lost, and the judge would see nodes instead of ranks; with epoll a
 * step at 32,768 ranks costs rank 0 little enough (bench/ctrl_scale.sh)
 * that every rank keeps its own voice.
 */

#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <unistd.h>

#include "ctrl.h"
#include "util.h"

enum msg_type {
	MSG_HELLO = 1, /* client -> 0: payload pid(4) + host */
	MSG_PROGRESS,  /* client -> 0: entering (group, seq) */
	MSG_RESULT,    /* client -> 0: want_stop(1) + result bytes */
	MSG_FAIL,      /* client -> 0: status(4) + message */
	MSG_BYE,       /* client -> 0: finished normally */
	MSG_GO,        /* 0 -> client: stop(1) */
	MSG_ABORT,     /* 0 -> client: status(4) + message */
	MSG_FINISH,    /* 0 -> client: outcome(4) */
};

/* Seconds the judge waits, after a first failure, for the other ranks of
 * the step to report theirs. */
#define JUDGE_DELAY_S 2.0

/* Largest payload accepted; a longer header means a broken peer. */
#define MAX_PAYLOAD (64u << 20)

/* Descriptors rank 0 needs beyond one per rank (database, plugin, log
 * files, the backend's own). */
#define SPARE_FDS 64

struct hdr {
	uint32_t type, rank, group, seq, len;
};

struct peer {
	int fd;
	int bye;
	int lost;
	int pid;
	char host[64];
	int group;          /* the group of the last step it entered */
	uint32_t seq;       /* last step it entered */
	int has_res;
	uint32_t res_seq;
	int res_stop;
	char *res;
	size_t res_len, res_cap;
	char *in;           /* rank 0: a message cut short, kept */
	size_t in_len;
	int failed;         /* reported a failure for fail_seq */
	int fail_status;    /* its sd_status */
	uint32_t fail_seq;
	char fail_msg[256];
	int blamed;         /* rank 0: named by the verdict */
};

struct sd_ctrl {
	int rank, size;
	int timeout_ms;     /* start-up, and the current step's operations' */
	int budget_ms;      /* the whole current step's, for the backstops */
	pthread_mutex_t mu, wmu;
	pthread_cond_t cv;
	sd_ctrl_abort_fn hook;
	void *hook_arg;
	void (*announce)(void *arg, int status, const char *msg);
	void *announce_arg;
	int aborting;       /* a verdict is being reached or was */
	int closed;         /* rank 0: the outcome is decided (quiesce) */
	int verdict;        /* its sd_status once reached; SD_OK before */
	char verdict_msg[2048];
	char (*gnames)[64]; /* names of groups for messages ("" world) */
	int ngnames, capgnames;
	/* rank 0 */
	struct peer *peers;
	char what[256];     /* description of the current step */
	double decide_at;   /* when to judge reported failures; 0: none */
	uint32_t decide_seq;
	int decide_group;
	int finishing;
	pthread_t thread;
	int thread_running;
	int wake[2];
	int ep;             /* rank 0: epoll over the ranks' sockets */
	char *scratch;      /* rank 0: where ready sockets are drained */
	size_t scratch_cap;
	int nres;           /* rank 0: ranks > 0 with a result for want_seq */
	int recheck;        /* rank 0: a failure came; are all in? */
	/* other ranks */
	int fd;
	int got_go, go_stop;
	uint32_t go_seq;
	double self_since;  /* rank 0: when it entered its current step */
	uint32_t self_done; /* rank 0: the last step it finished */
	char *go_data;      /* what rank 0 sent with the go (sd_ctrl_decide) */
	size_t go_len;
	int go_nomem;       /* it could not be kept (out of memory) */
	int got_finish, finish_outcome;
	uint32_t want_seq;  /* the step being waited for */
	char host0[64];
};

static int send_msg(struct sd_ctrl *c, int fd, uint32_t type, int group,
		    uint32_t seq, const void *a, size_t alen, const void *b,
		    size_t blen)
{
	struct hdr h = { type, (uint32_t)c->rank, (uint32_t)group, seq,
			 (uint32_t)(alen + blen) };
	/* one system call per message: at rank 0 a step ends with one go
	 * to every rank */
	struct iovec iov[3] = { { &h, sizeof(h) },
				{ (void *)(uintptr_t)a, alen },
				{ (void *)(uintptr_t)b, blen } };
	struct msghdr mh = { .msg_iov = iov, .msg_iovlen = 3 };
	int rc = 0;
	pthread_mutex_lock(&c->wmu);
	while (mh.msg_iovlen > 0) {
		ssize_t n = sendmsg(fd, &mh, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			rc = -1;
			break;
		}
		/* a partial write: step past what went */
		size_t left = (size_t)n;
		while (mh.msg_iovlen > 0 && left >= mh.msg_iov->iov_len) {
			left -= mh.msg_iov->iov_len;
			mh.msg_iov++;
			mh.msg_iovlen--;
		}
		if (mh.msg_iovlen > 0) {
			mh.msg_iov->iov_base = (char *)mh.msg_iov->iov_base + left;
			mh.msg_iov->iov_len -= left;
		}
	}
	pthread_mutex_unlock(&c->wmu);
	return rc;
}

/* Read one message; *payload is malloc'd (NUL-terminated). */
static int recv_msg(int fd, struct hdr *h, char **payload)
{
	*payload = NULL;
	if (sd_recv_full(fd, h, sizeof(*h)) || h->len > MAX_PAYLOAD)
		return -1;
	*payload = malloc(h->len + 1);
	if (!*payload || sd_recv_full(fd, *payload, h->len)) {
		free(*payload);
		*payload = NULL;
		return -1;
	}
	(*payload)[h->len] = '\0';
	return 0;
}

int sd_pick_address(const char *host, int all_local, const char *override_env,
		    char *out, size_t len)
{
	const char *env = override_env ? getenv(override_env) : NULL;
	if (env && *env) {
		sd_strlcpy(out, env, len);
		return SD_OK;
	}
	if (all_local) {
		sd_strlcpy(out, "127.0.0.1", len);
		return SD_OK;
	}
	struct addrinfo hints = { .ai_family = AF_INET,
				  .ai_socktype = SOCK_STREAM }, *res;
	if (host && getaddrinfo(host, NULL, &hints, &res) == 0) {
		for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
			struct sockaddr_in *sin = (void *)ai->ai_addr;
			if ((ntohl(sin->sin_addr.s_addr) >> 24) == 127)
				continue;
			inet_ntop(AF_INET, &sin->sin_addr, out, (socklen_t)len);
			freeaddrinfo(res);
			return SD_OK;
		}
		freeaddrinfo(res);
	}
	struct ifaddrs *ifs;
	if (getifaddrs(&ifs) == 0) {
		for (struct ifaddrs *i = ifs; i; i = i->ifa_next) {
			if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET ||
			    (i->ifa_flags & IFF_LOOPBACK) ||
			    !(i->ifa_flags & IFF_UP))
				continue;
			struct sockaddr_in *sin = (void *)i->ifa_addr;
			inet_ntop(AF_INET, &sin->sin_addr, out, (socklen_t)len);
			freeifaddrs(ifs);
			return SD_OK;
		}
		freeifaddrs(ifs);
	}
	sd_strlcpy(out, "127.0.0.1", len);
	return SD_OK;
}

/* The name of group g for messages, "" for the world; mu held. */
static const char *group_name(struct sd_ctrl *c, int g)
{
	return g >= 0 && g < c->ngnames ? c->gnames[g] : "";
}

static void peer_name(struct sd_ctrl *c, int r, char *buf, size_t len)
{
	const char *g = group_name(c, c->peers[r].group);
	snprintf(buf, len, "rank %d (%s, pid %d)%s%s", r, c->peers[r].host,
		 c->peers[r].pid, *g ? " in " : "", g);
}

/*
 * A verdict is reached once per process, in two steps: claim it (the first
 * caller wins; any later caller waits until the winner has published it),
 * then publish it: run the hook, then make every waiting and later call
 * return it.  The hook runs before any caller sees the verdict, so the tool
 * has stopped the backend and recorded the end before the main thread
 * unwinds.
 */
static int claim_verdict(struct sd_ctrl *c)
{
	pthread_mutex_lock(&c->mu);
	if (c->closed) {
		pthread_mutex_unlock(&c->mu);
		return 0; /* the run's outcome is decided: no verdict now */
	}
	int mine = !c->aborting;
	c->aborting = 1;
	while (!mine && !c->verdict)
		pthread_cond_wait(&c->cv, &c->mu);
	pthread_mutex_unlock(&c->mu);
	return mine;
}

static void publish_verdict(struct sd_ctrl *c, int status, const char *msg,
			    int decided_here)
{
	pthread_mutex_lock(&c->mu);
	sd_ctrl_abort_fn hook = c->hook;
	void *arg = c->hook_arg;
	pthread_mutex_unlock(&c->mu);
	if (hook)
		hook(arg, status, msg, decided_here);
	pthread_mutex_lock(&c->mu);
	c->verdict = status ? status : SD_ERR_TIMEOUT;
	sd_strlcpy(c->verdict_msg, msg, sizeof(c->verdict_msg));
	pthread_cond_broadcast(&c->cv);
	pthread_mutex_unlock(&c->mu);
}

static void reach_verdict(struct sd_ctrl *c, int status, const char *msg,
			  int decided_here)
{
	if (claim_verdict(c))
		publish_verdict(c, status, msg, decided_here);
}

/* The verdict's status with its message in err; mu held. */
static int verdict_locked(struct sd_ctrl *c, char *err, size_t errlen)
{
	if (err && errlen)
		sd_strlcpy(err, c->verdict_msg, errlen);
	return c->verdict;
}

/* Rank 0: tell everyone, then reach the verdict here. */
static void abort_all(struct sd_ctrl *c, int status, const char *msg);

/* mu held: a wait ran out.  Unless a verdict came meanwhile, `msg` becomes
 * one (rank 0 tells everyone); returns the verdict, mu released. */
static int give_up(struct sd_ctrl *c, const char *msg, char *err,
		   size_t errlen)
{
	if (!c->verdict) {
		pthread_mutex_unlock(&c->mu);
		if (c->rank == 0)
			abort_all(c, SD_ERR_TIMEOUT, msg);
		else
			reach_verdict(c, SD_ERR_TIMEOUT, msg, 1);
		pthread_mutex_lock(&c->mu);
	}
	int v = verdict_locked(c, err, errlen);
	pthread_mutex_unlock(&c->mu);
	return v;
}

static void abort_all(struct sd_ctrl *c, int status, const char *msg)
{
	uint32_t st = (uint32_t)status;
	if (!claim_verdict(c))
		return; /* another thread's verdict stands */
	pthread_mutex_lock(&c->mu);
	void (*announce)(void *, int, const char *) = c->announce;
	void *aarg = c->announce_arg;
	pthread_mutex_unlock(&c->mu);
	if (announce)
		announce(aarg, status, msg);
	for (int r = 1; r < c->size; r++) {
		pthread_mutex_lock(&c->mu);
		int fd = c->peers[r].lost ? -1 : c->peers[r].fd;
		pthread_mutex_unlock(&c->mu);
		if (fd >= 0)
			send_msg(c, fd, MSG_ABORT, 0, 0, &st, sizeof(st), msg,
				 strlen(msg));
	}
	publish_verdict(c, status, msg, 1);
}

/* The ranks where pick(r) holds: names, or a comma list of numbers. */
static void list_ranks(struct sd_ctrl *c, int (*pick)(struct sd_ctrl *, int),
		       char *buf, size_t len, int names)
{
	buf[0] = '\0';
	for (int r = 0; r < c->size; r++) {
		if (!pick(c, r))
			continue;
		size_t u = strlen(buf);
		if (names) {
			char nm[160];
			peer_name(c, r, nm, sizeof(nm));
			snprintf(buf + u, len - u, "%s%s", u ? ", " : "", nm);
		} else {
			snprintf(buf + u, len - u, "%s%d", u ? "," : "", r);
		}
	}
}

static int is_failed(struct sd_ctrl *c, int r)
{
	return c->peers[r].failed && c->peers[r].fail_seq == c->decide_seq;
}

/* A rank of the failing group that neither reported the failure itself
 * nor finished the step. */
static int is_suspect(struct sd_ctrl *c, int r)
{
	const struct peer *p = &c->peers[r];
	return !is_failed(c, r) && !p->lost && p->group == c->decide_group &&
	       !(p->has_res && p->res_seq == c->decide_seq);
}

/* Rank 0, mu held: ranks reported failures in decide_seq; who is to blame?
 * Unlocks mu and aborts the run. */
static void judge(struct sd_ctrl *c)
{
	char suspects[1024], waiting[256], msg[2048];
	const char *first = "";
	for (int r = 0; r < c->size; r++)
		if (is_failed(c, r)) {
			first = c->peers[r].fail_msg;
			break;
		}
	/* a rank whose backend failed outright (not a timeout) is the cause */
	for (int r = 0; r < c->size; r++) {
		struct peer *p = &c->peers[r];
		if (!is_failed(c, r) || p->fail_status == SD_ERR_TIMEOUT ||
		    p->fail_status == SD_ERR_PEER)
			continue;
		char nm[160];
		peer_name(c, r, nm, sizeof(nm));
		snprintf(msg, sizeof(msg), "%s failed in %s: %s", nm, c->what,
			 p->fail_msg);
		p->blamed = 1;
		int st = p->fail_status;
		pthread_mutex_unlock(&c->mu);
		abort_all(c, st, msg);
		return;
	}
	list_ranks(c, is_suspect, suspects, sizeof(suspects), 1);
	list_ranks(c, is_failed, waiting, sizeof(waiting), 0);
	for (int r = 0; r < c->size; r++)
		c->peers[r].blamed = is_suspect(c, r);
	if (suspects[0])
		snprintf(msg, sizeof(msg), "%s did not complete %s within "
			 "%.0f s; rank %s gave up waiting (%s)", suspects,
			 c->what, c->timeout_ms / 1e3, waiting, first);
	else
		snprintf(msg, sizeof(msg), "every rank failed in %s: no single "
			 "rank is to blame; suspect the network or the backend "
			 "(%s)", c->what, first);
	pthread_mutex_unlock(&c->mu);
	abort_all(c, SD_ERR_TIMEOUT, msg);
}

static void note_failure(struct sd_ctrl *c, int r, int group, uint32_t seq,
			 int status, const char *msg)
{
	struct peer *p = &c->peers[r];
	p->failed = 1;
	p->fail_status = status;
	p->fail_seq = seq;
	p->group = group;
	sd_strlcpy(p->fail_msg, msg, sizeof(p->fail_msg));
	if (!c->decide_at) {
		c->decide_seq = seq;
		c->decide_group = group;
		/* the others waiting in the same step will report shortly */
		c->decide_at = sd_now() + JUDGE_DELAY_S;
	}
	c->recheck = 1; /* once per batch of messages, not per failure */
	pthread_cond_broadcast(&c->cv);
}

/* Rank 0, mu held: when every rank of the failing group has reported,
 * the judge need not wait any longer. */
static void recheck_failures(struct sd_ctrl *c)
{
	c->recheck = 0;
	if (!c->decide_at)
		return;
	for (int k = 0; k < c->size; k++)
		if (!c->peers[k].lost && !is_failed(c, k) &&
		    c->peers[k].group == c->decide_group)
			return;
	c->decide_at = sd_now();
}

/* Rank 0, mu held: the peer's connection closed or broke.  Returns 1 when
 * that is a verdict (mu released, the run aborted), 0 when it was
 * expected (the run is finishing). */
static int peer_gone(struct sd_ctrl *c, int r)
{
	struct peer *p = &c->peers[r];
	epoll_ctl(c->ep, EPOLL_CTL_DEL, p->fd, NULL);
	if (c->finishing) {
		p->bye = 1;
		return 0;
	}
	char msg[1024], nm[160];
	p->lost = 1;
	p->blamed = 1;
	peer_name(c, r, nm, sizeof(nm));
	snprintf(msg, sizeof(msg), "%s was lost during %s: its control "
		 "connection closed (the process died or its host went down)",
		 nm, c->what);
	pthread_mutex_unlock(&c->mu);
	abort_all(c, SD_ERR_TIMEOUT, msg);
	return 1;
}

/* Rank 0, mu held: one message from rank r (pl: h->len bytes, followed
 * by a NUL). */
static void handle_msg(struct sd_ctrl *c, int r, const struct hdr *h,
		       const char *pl)
{
	struct peer *p = &c->peers[r];
	switch (h->type) {
	case MSG_PROGRESS:
		p->seq = h->seq;
		p->group = (int)h->group;
		break;
	case MSG_RESULT: {
		int counted = p->has_res && p->res_seq == c->want_seq;
		size_t n = h->len ? h->len - 1 : 0;
		p->res_stop = h->len > 0 && pl[0];
		if (n > p->res_cap || !p->res) {
			/* kept from step to step: the same size every time */
			free(p->res);
			p->res_cap = n;
			p->res = malloc(n + 1);
		}
		p->res_len = n;
		if (p->res)
			memcpy(p->res, pl + 1, n);
		p->res_seq = h->seq;
		p->group = (int)h->group;
		p->has_res = 1;
		if (!counted && h->seq == c->want_seq &&
		    ++c->nres >= c->size - 1)
			pthread_cond_broadcast(&c->cv);
		break;
	}
	case MSG_FAIL: {
		uint32_t st = SD_ERR_TIMEOUT;
		if (h->len >= 4)
			memcpy(&st, pl, 4);
		note_failure(c, r, (int)h->group, h->seq, (int)st,
			     h->len > 4 ? pl + 4 : "failed");
		break;
	}
	case MSG_BYE:
		p->bye = 1;
		epoll_ctl(c->ep, EPOLL_CTL_DEL, p->fd, NULL);
		break;
	default:
		break;
	}
}

/* Rank 0, mu held: read what rank r sent, without blocking, and handle
 * every whole message.  Returns 1 when a verdict was reached (mu
 * released), else 0. */
static int drain_peer(struct sd_ctrl *c, int r)
{
	struct peer *p = &c->peers[r];
	size_t have = p->in_len;
	if (have)
		memcpy(c->scratch, p->in, have);
	free(p->in);
	p->in = NULL;
	p->in_len = 0;
	int eof = 0;
	for (;;) {
		/* one byte kept free: a payload is handled NUL-terminated */
		size_t room = c->scratch_cap - have - 1;
		ssize_t n = recv(p->fd, c->scratch + have, room, MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n == 0 || (n < 0 && errno != EAGAIN &&
			       errno != EWOULDBLOCK)) {
			eof = 1;
			break;
		}
		if (n < 0)
			break; /* nothing more for now */
		have += (size_t)n;
		/* handle whole messages; keep a cut one at the front */
		size_t at = 0;
		while (have - at >= sizeof(struct hdr)) {
			struct hdr h;
			memcpy(&h, c->scratch + at, sizeof(h));
			if (h.len > MAX_PAYLOAD)
				return peer_gone(c, r);
			size_t whole = sizeof(h) + h.len;
			if (have - at < whole)
				break;
			char *pl = c->scratch + at + sizeof(h);
			char keep = pl[h.len];
			pl[h.len] = '\0';
			handle_msg(c, r, &h, pl);
			pl[h.len] = keep;
			at += whole;
			if (p->bye)
				return 0;
		}
		memmove(c->scratch, c->scratch + at, have - at);
		have -= at;
		if (have >= sizeof(struct hdr)) {
			struct hdr h;
			memcpy(&h, c->scratch, sizeof(h));
			size_t whole = sizeof(h) + h.len;
			if (whole + 1 > c->scratch_cap) {
				/* room for a large result */
				char *big = realloc(c->scratch, whole + 1);
				if (!big)
					return peer_gone(c, r);
				c->scratch = big;
				c->scratch_cap = whole + 1;
				continue;
			}
		}
		if ((size_t)n < room)
			break; /* the socket is empty */
	}
	if (have && !eof) {
		p->in = malloc(have);
		if (!p->in)
			return peer_gone(c, r);
		memcpy(p->in, c->scratch, have);
		p->in_len = have;
	}
	if (eof)
		return peer_gone(c, r);
	return 0;
}

static void *server_main(void *arg)
{
	struct sd_ctrl *c = arg;
	struct epoll_event ev[512];
	for (;;) {
		int ready = epoll_wait(c->ep, ev, (int)(sizeof(ev) / sizeof(ev[0])),
				       100);
		if (ready < 0 && errno != EINTR)
			break;
		for (int i = 0; i < ready; i++)
			if (ev[i].data.u32 == 0)
				return NULL; /* sd_ctrl_destroy */
		pthread_mutex_lock(&c->mu);
		if (c->aborting || c->closed) {
			pthread_mutex_unlock(&c->mu);
			return NULL; /* nothing left to judge */
		}
		for (int i = 0; i < ready; i++) {
			int r = (int)ev[i].data.u32;
			struct peer *p = &c->peers[r];
			if (p->lost || p->bye)
				continue;
			if (drain_peer(c, r))
				return NULL; /* a verdict; mu released */
		}
		if (c->recheck)
			recheck_failures(c);
		if (c->decide_at && sd_now() >= c->decide_at) {
			judge(c); /* unlocks */
			return NULL;
		}
		/* alone, rank 0 has nobody to notice that it hangs: it
		 * watches its own step */
		if (c->size == 1 && c->self_since > 0 &&
		    c->peers[0].seq != c->self_done &&
		    sd_now() > c->self_since + c->budget_ms / 1e3 +
				       JUDGE_DELAY_S) {
			char msg[1024], nm[160];
			peer_name(c, 0, nm, sizeof(nm));
			snprintf(msg, sizeof(msg), "%s did not complete %s within "
				 "%.0f s", nm, c->what, c->budget_ms / 1e3);
			c->peers[0].blamed = 1;
			pthread_mutex_unlock(&c->mu);
			abort_all(c, SD_ERR_TIMEOUT, msg);
			return NULL;
		}
		pthread_mutex_unlock(&c->mu);
	}
	return NULL;
}

static void *client_main(void *arg)
{
	struct sd_ctrl *c = arg;
	char msg[1024];
	for (;;) {
		struct hdr h;
		char *pl;
		if (recv_msg(c->fd, &h, &pl)) {
			pthread_mutex_lock(&c->mu);
			int done = c->got_finish || c->aborting;
			pthread_mutex_unlock(&c->mu);
			if (done)
				return NULL;
			snprintf(msg, sizeof(msg), "rank %d: lost contact with "
				 "rank 0 (%s); aborting", c->rank, c->host0);
			reach_verdict(c, SD_ERR_PEER, msg, 1);
			return NULL;
		}
		if (h.type == MSG_ABORT) {
			uint32_t st = SD_ERR_TIMEOUT;
			if (h.len >= 4)
				memcpy(&st, pl, 4);
			reach_verdict(c, (int)st, h.len > 4 ? pl + 4 : "aborted",
				      0);
			free(pl);
			return NULL;
		}
		pthread_mutex_lock(&c->mu);
		switch (h.type) {
		case MSG_GO:
			c->got_go = 1;
			c->go_seq = h.seq;
			c->go_stop = h.len > 0 && pl[0];
			free(c->go_data);
			c->go_data = NULL;
			c->go_len = h.len > 1 ? h.len - 1 : 0;
			c->go_nomem = 0;
			if (c->go_len && (c->go_data = malloc(c->go_len))) {
				memcpy(c->go_data, pl + 1, c->go_len);
			} else {
				c->go_nomem = c->go_len > 0;
				c->go_len = 0;
			}
			break;
		case MSG_FINISH:
			c->got_finish = 1;
			if (h.len >= 4)
				memcpy(&c->finish_outcome, pl, 4);
			break;
		default:
			break;
		}
		pthread_cond_broadcast(&c->cv);
		pthread_mutex_unlock(&c->mu);
		free(pl);
	}
}

/* Rank 0 holds a socket per rank: raise the open-file limit to the hard
 * limit when it is short of that, and say what to change when even the
 * hard limit is. */
static int open_files(int size, char *err, size_t errlen)
{
	struct rlimit rl;
	rlim_t need = (rlim_t)size + SPARE_FDS;
	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur >= need)
		return 0;
	if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < need) {
		snprintf(err, errlen, "control plane: rank 0 keeps a connection "
			 "to each of the %d ranks and needs about %llu open "
			 "files, but its hard limit is %llu; raise it where the "
			 "job starts (ulimit -Hn as root, LimitNOFILE= in "
			 "slurmd's systemd unit, or nofile in "
			 "/etc/security/limits.conf)", size,
			 (unsigned long long)need,
			 (unsigned long long)rl.rlim_max);
		return -1;
	}
	rl.rlim_cur = rl.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &rl)) {
		snprintf(err, errlen, "control plane: cannot raise the open-file "
			 "limit to %llu for %d ranks: %s",
			 (unsigned long long)rl.rlim_max, size, strerror(errno));
		return -1;
	}
	return 0;
}

static int start_server(struct sd_ctrl *c, struct sd_bootstrap *bs,
			char *err, size_t errlen)
{
	char addr[64], endpoint[96] = "";
	int lfd = -1, rc = SD_ERR_BOOTSTRAP;
	if (open_files(c->size, err, errlen))
		goto bcast; /* the others must still leave the bcast */
	sd_pick_address(bs->host, bs->local_size == bs->size,
			"SHAKEDOWN_CTRL_ADDR", addr, sizeof(addr));
	lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in sin = { .sin_family = AF_INET };
	socklen_t sl = sizeof(sin);
	int one = 1;
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bs->local_size == bs->size)
		sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (lfd < 0 || bind(lfd, (void *)&sin, sizeof(sin)) ||
	    listen(lfd, bs->size) || getsockname(lfd, (void *)&sin, &sl)) {
		snprintf(err, errlen, "control plane: cannot listen: %s",
			 strerror(errno));
		goto bcast; /* the others must still leave the bcast */
	}
	snprintf(endpoint, sizeof(endpoint), "%s:%u", addr,
		 (unsigned)ntohs(sin.sin_port));
	rc = SD_OK;
bcast:;
	int brc = bs->bcast(bs, endpoint, sizeof(endpoint), 0);
	if (rc || brc) {
		if (lfd >= 0)
			close(lfd);
		if (!rc)
			snprintf(err, errlen, "control plane: bootstrap "
				 "broadcast failed");
		return rc ? rc : brc;
	}
	double deadline = sd_now() + c->timeout_ms / 1e3;
	for (int got = 1; got < c->size;) {
		struct pollfd pf = { lfd, POLLIN, 0 };
		int left = (int)((deadline - sd_now()) * 1e3);
		if (left <= 0 || poll(&pf, 1, left) <= 0) {
			char missing[256] = "";
			for (int r = 1; r < c->size; r++)
				if (c->peers[r].fd < 0) {
					size_t u = strlen(missing);
					snprintf(missing + u, sizeof(missing) - u,
						 "%s%d", u ? "," : "", r);
				}
			snprintf(err, errlen, "control plane: rank %s did not "
				 "connect to %s within %.0f s (a firewall, or "
				 "set SHAKEDOWN_CTRL_ADDR to an address of rank "
				 "0's host that the others reach)", missing,
				 endpoint, c->timeout_ms / 1e3);
			close(lfd);
			return SD_ERR_TIMEOUT;
		}
		int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0)
			continue;
		/* a peer that stops in the middle of a message (or a stray
		 * connection that says nothing) cannot hold rank 0 forever */
		struct timeval tv = { c->timeout_ms / 1000,
				      (c->timeout_ms % 1000) * 1000 };
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		struct hdr h;
		char *pl;
		if (recv_msg(fd, &h, &pl) || h.type != MSG_HELLO ||
		    h.rank == 0 || h.rank >= (uint32_t)c->size ||
		    c->peers[h.rank].fd >= 0 || h.len < 4) {
			free(pl);
			close(fd);
			continue;
		}
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		struct peer *p = &c->peers[h.rank];
		p->fd = fd;
		memcpy(&p->pid, pl, 4);
		sd_strlcpy(p->host, pl + 4, sizeof(p->host));
		free(pl);
		got++;
	}
	close(lfd);
	return SD_OK;
}

static int start_client(struct sd_ctrl *c, struct sd_bootstrap *bs,
			char *err, size_t errlen)
{
	char endpoint[96];
	int rc = bs->bcast(bs, endpoint, sizeof(endpoint), 0);
	if (rc) {
		snprintf(err, errlen, "control plane: bootstrap broadcast "
			 "failed");
		return rc;
	}
	if (!endpoint[0]) {
		snprintf(err, errlen, "control plane: rank 0 could not listen");
		return SD_ERR_BOOTSTRAP;
	}
	char *colon = strrchr(endpoint, ':');
	if (!colon)
		return SD_ERR_BOOTSTRAP;
	*colon = '\0';
	sd_strlcpy(c->host0, endpoint, sizeof(c->host0));
	struct sockaddr_in sin = { .sin_family = AF_INET,
				   .sin_port = htons((uint16_t)strtol(
					   colon + 1, NULL, 10)) };
	if (inet_pton(AF_INET, endpoint, &sin.sin_addr) != 1) {
		snprintf(err, errlen, "control plane: bad address '%s' from "
			 "rank 0", endpoint);
		return SD_ERR_BOOTSTRAP;
	}
	double deadline = sd_now() + c->timeout_ms / 1e3;
	for (;;) {
		c->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (c->fd >= 0 && connect(c->fd, (void *)&sin, sizeof(sin)) == 0)
			break;
		int e = errno;
		if (c->fd >= 0)
			close(c->fd);
		c->fd = -1;
		if (sd_now() > deadline) {
			snprintf(err, errlen, "control plane: cannot reach "
				 "rank 0 at %s:%s: %s (set SHAKEDOWN_CTRL_ADDR "
				 "to an address of rank 0's host that this host "
				 "reaches)", endpoint, colon + 1, strerror(e));
			return SD_ERR_PEER;
		}
		usleep(50000);
	}
	int one = 1;
	setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	uint32_t pid = (uint32_t)getpid();
	if (send_msg(c, c->fd, MSG_HELLO, 0, 0, &pid, 4, bs->host,
		     strlen(bs->host) + 1)) {
		snprintf(err, errlen, "control plane: lost rank 0 at start");
		return SD_ERR_PEER;
	}
	return SD_OK;
}

/* Rank 0: the epoll set (the wake pipe as 0, rank r's socket as r) and
 * the buffer sockets are drained into. */
static int serve_setup(struct sd_ctrl *c)
{
	c->ep = epoll_create1(EPOLL_CLOEXEC);
	c->scratch_cap = 64 << 10;
	c->scratch = malloc(c->scratch_cap);
	if (c->ep < 0 || !c->scratch)
		return -1;
	struct epoll_event ev = { .events = EPOLLIN, .data.u32 = 0 };
	if (epoll_ctl(c->ep, EPOLL_CTL_ADD, c->wake[0], &ev))
		return -1;
	for (int r = 1; r < c->size; r++) {
		ev.data.u32 = (uint32_t)r;
		if (epoll_ctl(c->ep, EPOLL_CTL_ADD, c->peers[r].fd, &ev))
			return -1;
	}
	return 0;
}

int sd_ctrl_start(struct sd_bootstrap *bs, int timeout_ms,
		  struct sd_ctrl **out, char *err, size_t errlen)
{
	struct sd_ctrl *c = calloc(1, sizeof(*c));
	int rc;
	if (!c)
		return SD_ERR_NOMEM;
	c->rank = bs->rank;
	c->size = bs->size;
	c->timeout_ms = timeout_ms;
	c->fd = -1;
	c->ep = -1;
	c->wake[0] = c->wake[1] = -1;
	pthread_mutex_init(&c->mu, NULL);
	pthread_mutex_init(&c->wmu, NULL);
	pthread_cond_init(&c->cv, NULL);
	snprintf(c->what, sizeof(c->what), "start-up");
	if (c->rank == 0) {
		c->peers = calloc((size_t)c->size, sizeof(*c->peers));
		if (!c->peers) {
			free(c);
			return SD_ERR_NOMEM;
		}
		for (int r = 0; r < c->size; r++)
			c->peers[r].fd = -1;
		c->peers[0].pid = (int)getpid();
		sd_strlcpy(c->peers[0].host, bs->host, sizeof(c->peers[0].host));
		rc = start_server(c, bs, err, errlen);
	} else {
		rc = start_client(c, bs, err, errlen);
	}
	/* everyone connected (or the failure is known) before going on */
	int brc = bs->barrier(bs);
	if (!rc && brc) {
		snprintf(err, errlen, "control plane: bootstrap barrier failed");
		rc = brc;
	}
	if (!rc && c->rank == 0) {
		if (pipe(c->wake) || serve_setup(c) ||
		    pthread_create(&c->thread, NULL, server_main, c))
			rc = SD_ERR_NOMEM;
		else
			c->thread_running = 1;
	} else if (!rc) {
		if (pthread_create(&c->thread, NULL, client_main, c))
			rc = SD_ERR_NOMEM;
		else
			c->thread_running = 1;
	}
	if (rc) {
		sd_ctrl_destroy(c);
		return rc;
	}
	*out = c;
	return SD_OK;
}

void sd_ctrl_set_abort_hook(struct sd_ctrl *c, sd_ctrl_abort_fn fn, void *arg)
{
	pthread_mutex_lock(&c->mu);
	c->hook = fn;
	c->hook_arg = arg;
	pthread_mutex_unlock(&c->mu);
}

void sd_ctrl_set_announce_hook(struct sd_ctrl *c,
			       void (*fn)(void *arg, int status, const char *msg),
			       void *arg)
{
	pthread_mutex_lock(&c->mu);
	c->announce = fn;
	c->announce_arg = arg;
	pthread_mutex_unlock(&c->mu);
}

void sd_ctrl_name_group(struct sd_ctrl *c, int group, const char *name)
{
	pthread_mutex_lock(&c->mu);
	if (group >= c->capgnames) {
		/* grows by doubling: thousands of groups are named per round */
		int cap = c->capgnames ? c->capgnames : 16;
		while (cap <= group)
			cap *= 2;
		void *p = realloc(c->gnames, (size_t)cap * sizeof(*c->gnames));
		if (p) {
			c->gnames = p;
			c->capgnames = cap;
		}
	}
	if (group >= c->ngnames && group < c->capgnames) {
		for (int g = c->ngnames; g <= group; g++)
			c->gnames[g][0] = '\0';
		c->ngnames = group + 1;
	}
	if (group >= 0 && group < c->ngnames)
		sd_strlcpy(c->gnames[group], name, sizeof(c->gnames[group]));
	pthread_mutex_unlock(&c->mu);
}

int sd_ctrl_blamed(struct sd_ctrl *c, int *ranks, char (*hosts)[64], int max)
{
	int n = 0;
	if (c->rank != 0)
		return 0;
	pthread_mutex_lock(&c->mu);
	for (int r = 0; r < c->size && n < max; r++)
		if (c->peers[r].blamed) {
			ranks[n] = r;
			sd_strlcpy(hosts[n], c->peers[r].host,
				   64);
			n++;
		}
	pthread_mutex_unlock(&c->mu);
	return n;
}

int sd_ctrl_verdict(struct sd_ctrl *c, const char **msg)
{
	pthread_mutex_lock(&c->mu);
	int v = c->verdict;
	pthread_mutex_unlock(&c->mu);
	if (msg)
		*msg = v ? c->verdict_msg : NULL;
	return v;
}

int sd_ctrl_progress(struct sd_ctrl *c, int group, uint32_t seq,
		     int timeout_ms, int budget_ms, const char *what,
		     char *err, size_t errlen)
{
	pthread_mutex_lock(&c->mu);
	if (c->verdict) {
		int v = verdict_locked(c, err, errlen);
		pthread_mutex_unlock(&c->mu);
		return v;
	}
	c->timeout_ms = timeout_ms;
	c->budget_ms = budget_ms > timeout_ms ? budget_ms : timeout_ms;
	if (c->rank == 0) {
		c->peers[0].seq = seq;
		c->peers[0].group = group;
		c->self_since = sd_now();
		sd_strlcpy(c->what, what, sizeof(c->what));
		pthread_mutex_unlock(&c->mu);
		return SD_OK;
	}
	pthread_mutex_unlock(&c->mu);
	send_msg(c, c->fd, MSG_PROGRESS, group, seq, NULL, 0, NULL, 0);
	return SD_OK;
}

static void deadline_ts(struct timespec *ts, double seconds)
{
	clock_gettime(CLOCK_REALTIME, ts);
	double s = (double)ts->tv_sec + ts->tv_nsec * 1e-9 + seconds;
	ts->tv_sec = (time_t)s;
	ts->tv_nsec = (long)((s - (double)ts->tv_sec) * 1e9);
}

/* Wait on cv until pred(c) holds, a verdict is reached, or `seconds`
 * pass; mu held.  Returns 0 when pred holds, else -1 (verdict or time). */
static int wait_for(struct sd_ctrl *c, int (*pred)(struct sd_ctrl *),
		    double seconds)
{
	struct timespec ts;
	deadline_ts(&ts, seconds);
	while (!pred(c)) {
		if (c->verdict)
			return -1;
		if (pthread_cond_timedwait(&c->cv, &c->mu, &ts) == ETIMEDOUT)
			return pred(c) ? 0 : -1;
	}
	return 0;
}

static int go_arrived(struct sd_ctrl *c)
{
	return c->got_go && c->go_seq == c->want_seq;
}

static int lacks_result(struct sd_ctrl *c, int r)
{
	return r > 0 && !(c->peers[r].has_res && c->peers[r].res_seq == c->want_seq);
}

static int all_results(struct sd_ctrl *c)
{
	return c->nres >= c->size - 1; /* counted as they arrive */
}

/* Rank 0, mu held: the step waited for is now `seq`; count what is in. */
static void want_step(struct sd_ctrl *c, uint32_t seq)
{
	c->want_seq = seq;
	c->nres = 0;
	for (int r = 1; r < c->size; r++)
		c->nres += !lacks_result(c, r);
}

/* Backstop of a rank other than 0 for a rank 0 that stopped answering. */
static double backstop_s(struct sd_ctrl *c)
{
	return 2.0 * c->budget_ms / 1e3 + 5;
}

/* The end of a step: results to rank 0, and its go (with `bc`, rank 0's
 * word to every rank, when bclen > 0) back; other ranks get a malloc'd
 * copy of that word in *got. */
static int exchange(struct sd_ctrl *c, int group, uint32_t seq,
		    const void *mine, size_t len, void *all, int want_stop,
		    int *stop, const void *bc, size_t bclen, void **got,
		    size_t *gotlen, char *err, size_t errlen)
{
	char flag = (char)(want_stop != 0), msg[1400];
	if (c->rank != 0) {
		if (send_msg(c, c->fd, MSG_RESULT, group, seq, &flag, 1, mine,
			     len))
			return sd_ctrl_fail(c, group, seq, SD_ERR_PEER,
					    "lost the connection to rank 0",
					    err, errlen);
		pthread_mutex_lock(&c->mu);
		c->want_seq = seq;
		if (wait_for(c, go_arrived, backstop_s(c))) {
			snprintf(msg, sizeof(msg), "rank %d: rank 0 (%s) did not "
				 "answer within %.0f s; aborting", c->rank,
				 c->host0, backstop_s(c));
			return give_up(c, msg, err, errlen);
		}
		c->got_go = 0;
		*stop = c->go_stop;
		if (got) {
			*got = c->go_data;
			*gotlen = c->go_len;
			c->go_data = NULL;
			c->go_len = 0;
		}
		pthread_mutex_unlock(&c->mu);
		return SD_OK;
	}

	/* ranks whose operation times out report it at about the timeout:
	 * wait a little longer, so that the judge can tell the rank that
	 * hangs from those that waited for it */
	pthread_mutex_lock(&c->mu);
	want_step(c, seq);
	c->peers[0].has_res = 1; /* rank 0 is done with the step */
	c->peers[0].res_seq = seq;
	c->self_done = seq;
	if (wait_for(c, all_results, c->budget_ms / 1e3 + JUDGE_DELAY_S + 1)) {
		char names[1024];
		list_ranks(c, lacks_result, names, sizeof(names), 1);
		/* the ranks that did not answer, not those that reported a
		 * failure (waiting for them); and not over the judge's word */
		for (int r = 0; !c->aborting && !c->decide_at && r < c->size;
		     r++)
			c->peers[r].blamed = lacks_result(c, r) &&
					     !(c->peers[r].failed &&
					       c->peers[r].fail_seq == seq);
		snprintf(msg, sizeof(msg), "%s did not finish %s within %.0f s "
			 "(the others did)", names, c->what,
			 c->budget_ms / 1e3);
		return give_up(c, msg, err, errlen);
	}
	int any_stop = want_stop;
	if (all)
		memcpy(all, mine, len);
	for (int r = 1; r < c->size; r++) {
		struct peer *p = &c->peers[r];
		if (all && p->res && p->res_len == len)
			memcpy((char *)all + (size_t)r * len, p->res, len);
		any_stop |= p->res_stop;
		p->has_res = 0;
	}
	c->nres = 0;
	pthread_mutex_unlock(&c->mu);
	flag = (char)(any_stop != 0);
	for (int r = 1; r < c->size; r++)
		send_msg(c, c->peers[r].fd, MSG_GO, 0, seq, &flag, 1, bc, bclen);
	*stop = any_stop;
	return SD_OK;
}

int sd_ctrl_exchange(struct sd_ctrl *c, int group, uint32_t seq,
		     const void *mine, size_t len, void *all, int want_stop,
		     int *stop, char *err, size_t errlen)
{
	return exchange(c, group, seq, mine, len, all, want_stop, stop, NULL, 0,
			NULL, NULL, err, errlen);
}

int sd_ctrl_decide(struct sd_ctrl *c, int group, uint32_t seq,
		   const void *word, size_t len, void **got, size_t *gotlen,
		   char *err, size_t errlen)
{
	int stop = 0, rc;
	*got = NULL;
	*gotlen = 0;
	if (c->rank == 0) {
		/* the copy first: running out of memory after the word went
		 * out would leave the others ahead of rank 0 */
		void *copy = len ? malloc(len) : NULL;
		if (len && !copy)
			return sd_ctrl_fail(c, group, seq, SD_ERR_NOMEM,
					    "out of memory for the decision",
					    err, errlen);
		rc = exchange(c, group, seq, NULL, 0, NULL, 0, &stop, word, len,
			      NULL, NULL, err, errlen);
		if (rc) {
			free(copy);
			return rc;
		}
		if (len)
			memcpy(copy, word, len);
		*got = copy;
		*gotlen = len;
		return SD_OK;
	}
	rc = exchange(c, group, seq, NULL, 0, NULL, 0, &stop, NULL, 0, got,
		      gotlen, err, errlen);
	if (!rc && c->go_nomem) {
		/* rank 0 said something this rank could not keep */
		c->go_nomem = 0;
		return sd_ctrl_fail(c, group, seq, SD_ERR_NOMEM,
				    "out of memory for rank 0's decision", err,
				    errlen);
	}
	return rc;
}



static int has_verdict(struct sd_ctrl *c)
{
	return c->verdict != SD_OK;
}

int sd_ctrl_fail(struct sd_ctrl *c, int group, uint32_t seq, int status,
		 const char *msg, char *err, size_t errlen)
{
	if (c->rank == 0) {
		pthread_mutex_lock(&c->mu);
		if (!c->aborting)
			note_failure(c, 0, group, seq, status, msg);
		pthread_mutex_unlock(&c->mu);
	} else {
		uint32_t st = (uint32_t)status;
		send_msg(c, c->fd, MSG_FAIL, group, seq, &st, 4, msg,
			 strlen(msg) + 1);
	}
	/* rank 0's judge decides; if no word comes, give up on our own */
	char text[512];
	snprintf(text, sizeof(text), "rank %d: %s (no verdict from rank 0)",
		 c->rank, msg);
	pthread_mutex_lock(&c->mu);
	wait_for(c, has_verdict, c->timeout_ms / 1e3 + 10);
	return give_up(c, text, err, errlen);
}

int sd_ctrl_quiesce(struct sd_ctrl *c)
{
	pthread_mutex_lock(&c->mu);
	/* a verdict being reached is waited for; none can start after */
	while (c->aborting && !c->verdict)
		pthread_cond_wait(&c->cv, &c->mu);
	if (c->rank == 0)
		c->closed = c->finishing = 1;
	int v = c->verdict;
	pthread_mutex_unlock(&c->mu);
	return v;
}

static int finish_arrived(struct sd_ctrl *c)
{
	return c->got_finish;
}

int sd_ctrl_finish(struct sd_ctrl *c, int *outcome)
{
	pthread_mutex_lock(&c->mu);
	if (c->verdict) {
		int v = c->verdict;
		pthread_mutex_unlock(&c->mu);
		return v;
	}
	if (c->rank == 0) {
		uint32_t st = (uint32_t)*outcome;
		c->finishing = 1;
		pthread_mutex_unlock(&c->mu);
		for (int r = 1; r < c->size; r++)
			send_msg(c, c->peers[r].fd, MSG_FINISH, 0, 0, &st, 4,
				 NULL, 0);
		return SD_OK;
	}
	int rc = wait_for(c, finish_arrived, backstop_s(c));
	if (!rc)
		*outcome = c->finish_outcome;
	int v = c->verdict;
	pthread_mutex_unlock(&c->mu);
	send_msg(c, c->fd, MSG_BYE, 0, 0, NULL, 0, NULL, 0);
	return v ? v : rc ? SD_ERR_TIMEOUT : SD_OK;
}

void sd_ctrl_destroy(struct sd_ctrl *c)
{
	if (!c)
		return;
	if (c->thread_running) {
		if (c->rank == 0) {
			(void)!write(c->wake[1], "x", 1);
			pthread_join(c->thread, NULL);
		} else {
			pthread_mutex_lock(&c->mu);
			c->got_finish = 1; /* EOF now is expected */
			pthread_mutex_unlock(&c->mu);
			shutdown(c->fd, SHUT_RDWR);
			pthread_join(c->thread, NULL);
		}
	}
	if (c->peers) {
		for (int r = 0; r < c->size; r++) {
			if (c->peers[r].fd >= 0)
				close(c->peers[r].fd);
			free(c->peers[r].res);
			free(c->peers[r].in);
		}
		free(c->peers);
	}
	free(c->go_data);
	if (c->fd >= 0)
		close(c->fd);
	if (c->wake[0] >= 0) {
		close(c->wake[0]);
		close(c->wake[1]);
	}
	if (c->ep >= 0)
		close(c->ep);
	free(c->scratch);
	free(c->gnames);
	free(c);
}
