/*
 * ctrl.c - the control plane (see ctrl.h).
 *
 * Wire format: a 20-byte header (type, rank, group, seq, payload length;
 * host byte order: all ranks of a job run the same binary on the same
 * architecture) and the payload.  Rank 0's server thread owns every socket
 * for reading; writes take `wmu`.  Shared state is guarded by `mu`; `cv`
 * wakes whoever waits for results, an answer or the verdict.
 *
 * Scale: the control plane fans in through one leader per node.  The
 * ranks of rank 0's node (and a rank alone on its node) connect to rank 0;
 * on every other node the first rank (local rank 0) is the leader: the
 * node's other ranks connect to it over an abstract Unix socket, its relay
 * thread passes their messages on to rank 0 unchanged (each keeps its
 * sender in the header, so rank 0 still sees every rank), several per
 * write, and its client thread hands rank 0's go, abort and finish down
 * to them.  A rank whose socket to its leader closes is reported by the
 * leader (MSG_LOST) and named by rank 0 as if its own connection had
 * closed; a leader that is lost is named itself.  So rank 0 holds one
 * connection per node (4,096 at 32,768 ranks: under a hard open-file
 * limit of 20,000, where one per rank would not fit) and a step costs it
 * one go per node.  It reads its connections from one thread with epoll,
 * draining each ready socket without blocking into one shared buffer;
 * only a message cut in the middle is kept per connection.  The results
 * of a step are counted as they arrive, so the step waits for a count,
 * not for a scan of every rank.  (bench/ctrl_scale.sh measures it.)
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
#include <sys/un.h>
#include <stddef.h>
#include <unistd.h>

#include "ctrl.h"
#include "topo.h"
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
	MSG_LOST,      /* leader -> 0: the rank in the header left its node's
			  leader without a word; payload, when its memory
			  cgroup counted OOM kills since it said hello:
			  kind(4) + kills(8) (sd_topo_oom_counter's) */
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

/* Something that reads messages off a socket without blocking: what is
 * cut short at the end of a read waits here for the rest. */
struct reader {
	char *in;
	size_t in_len;
};

/* Rank 0: a connection it reads, a rank's own or a node leader's (which
 * carries every rank of its node). */
struct conn {
	int fd;
	int rank;           /* who connected: the first hello on it */
	int closed;
	struct reader rd;
};

/* Where the kernel counts the OOM kills of a rank's memory cgroup, read
 * when the rank said hello (it lives) and again when it left without a
 * word: a rank of the node of whoever reads it (rank 0's own, a leader's
 * locals). */
struct oom_watch {
	int kind;           /* sd_topo_oom_counter's; 0: unknown */
	uint64_t base;
	char file[512];
};

/* A node leader: a rank of its node that reaches it through the leader. */
struct local {
	int fd;
	int rank;
	int closed;
	struct reader rd;
	struct oom_watch oom;
};

struct peer {
	int conn;           /* rank 0: the connection it speaks through */
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
	int failed;         /* reported a failure for fail_seq */
	int fail_status;    /* its sd_status */
	uint32_t fail_seq;
	char fail_msg[256];
	int blamed;         /* rank 0: named by the verdict */
	struct oom_watch oom; /* rank 0: a rank of its own node's */
	int oom_kind;       /* rank 0: lost to the OOM killer (the kind of
			       count that says so), with oom_kills */
	uint64_t oom_kills;
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
	int ep;             /* rank 0: epoll over its connections */
	struct conn *conns; /* rank 0: data.u32 in ep is index + 1 */
	int nconns;
	char *scratch;      /* where ready sockets are drained */
	size_t scratch_cap;
	int nres;           /* rank 0: ranks > 0 with a result for want_seq */
	int nhello;         /* rank 0, at start-up: ranks > 0 that said hello */
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
	char upname[256];   /* who this rank reaches, for messages */
	/* a node leader: its node's other ranks reach rank 0 through it */
	int leader;
	struct local *locals;
	int nlocals;
	pthread_mutex_t lmu; /* the locals' sockets, written and closed */
	int lep;            /* epoll over the locals (relay thread) */
	int lwake[2];
	pthread_t relay;
	int relay_running;
	char *out;          /* what the relay sends on, in one write */
	size_t out_len, out_cap;
};

/* Write the n pieces on fd whole, across partial writes and signals;
 * -1 when the socket fails or (SO_SNDTIMEO) stays full. */
static int write_iov(int fd, struct iovec *iov, int n)
{
	struct msghdr mh = { .msg_iov = iov, .msg_iovlen = (size_t)n };
	int rc = 0;
	while (mh.msg_iovlen > 0) {
		ssize_t w = sendmsg(fd, &mh, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			rc = -1;
			break;
		}
		/* a partial write: step past what went */
		size_t left = (size_t)w;
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
	return rc;
}

/* Whole messages on fd, under wmu: writes from two threads (a leader's
 * own and those it passes on) never interleave. */
static int send_iov(struct sd_ctrl *c, int fd, struct iovec *iov, int n)
{
	pthread_mutex_lock(&c->wmu);
	int rc = write_iov(fd, iov, n);
	pthread_mutex_unlock(&c->wmu);
	return rc;
}

static int send_msg(struct sd_ctrl *c, int fd, uint32_t type, int group,
		    uint32_t seq, const void *a, size_t alen, const void *b,
		    size_t blen)
{
	struct hdr h = { type, (uint32_t)c->rank, (uint32_t)group, seq,
			 (uint32_t)(alen + blen) };
	/* one system call per message: at rank 0 a step ends with one go
	 * to every connection */
	struct iovec iov[3] = { { &h, sizeof(h) },
				{ (void *)(uintptr_t)a, alen },
				{ (void *)(uintptr_t)b, blen } };
	return send_iov(c, fd, iov, 3);
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
	for (int i = 0; c->rank == 0 && i < c->nconns; i++) {
		pthread_mutex_lock(&c->mu);
		int fd = c->conns[i].closed ? -1 : c->conns[i].fd;
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

/*
 * Read what fd holds, without blocking, and call fn(arg, header, payload)
 * for each whole message (the payload NUL-terminated in place; `raw`
 * points at its header, `whole` bytes in all).  A message cut short waits
 * in rd.  Returns 0 when the socket is empty for now, -1 when it closed
 * or broke (or sent a header no peer sends), or what fn returned when
 * that was not 0 (it asks to stop reading).
 */
typedef int (*msg_fn)(void *arg, const struct hdr *h, char *pl,
		      const char *raw, size_t whole);

static int read_msgs(int fd, struct reader *rd, char **scratch, size_t *cap,
		     msg_fn fn, void *arg)
{
	size_t have = rd->in_len;
	if (have)
		memcpy(*scratch, rd->in, have);
	free(rd->in);
	rd->in = NULL;
	rd->in_len = 0;
	int ret = 0;
	for (;;) {
		/* one byte kept free: a payload is handled NUL-terminated */
		size_t room = *cap - have - 1;
		ssize_t n = recv(fd, *scratch + have, room, MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n == 0 || (n < 0 && errno != EAGAIN &&
			       errno != EWOULDBLOCK))
			return -1;
		if (n < 0)
			break; /* nothing more for now */
		have += (size_t)n;
		size_t at = 0;
		while (have - at >= sizeof(struct hdr)) {
			struct hdr h;
			memcpy(&h, *scratch + at, sizeof(h));
			if (h.len > MAX_PAYLOAD)
				return -1;
			size_t whole = sizeof(h) + h.len;
			if (have - at < whole)
				break;
			char *raw = *scratch + at, *pl = raw + sizeof(h);
			char keep = pl[h.len];
			pl[h.len] = '\0';
			ret = fn(arg, &h, pl, raw, whole);
			pl[h.len] = keep;
			at += whole;
			if (ret)
				break;
		}
		memmove(*scratch, *scratch + at, have - at);
		have -= at;
		if (ret)
			return ret; /* mu may be gone with a verdict: stop */
		if (have >= sizeof(struct hdr)) {
			struct hdr h;
			memcpy(&h, *scratch, sizeof(h));
			size_t whole = sizeof(h) + h.len;
			if (whole + 1 > *cap) {
				/* room for a large result */
				char *big = realloc(*scratch, whole + 1);
				if (!big)
					return -1;
				*scratch = big;
				*cap = whole + 1;
				continue;
			}
		}
		if ((size_t)n < room)
			break; /* the socket is empty */
	}
	if (have) {
		rd->in = malloc(have);
		if (!rd->in)
			return -1;
		memcpy(rd->in, *scratch, have);
		rd->in_len = have;
	}
	return ret;
}

/* Start watching the OOM kills of the memory cgroup of process pid (a
 * rank of this node that said hello). */
static void oom_watch_start(struct oom_watch *w, int pid)
{
	w->kind = pid > 0 ? sd_topo_oom_counter("", pid, w->file,
						sizeof(w->file))
			  : 0;
	if (w->kind && !sd_topo_oom_count(w->file, &w->base))
		w->kind = 0;
}

/* The OOM kills counted since the watch started (0: none or unknown);
 * the kernel counts a kill before it sends the SIGKILL, so a rank's
 * socket that closed because of one finds it counted. */
static uint64_t oom_watch_kills(const struct oom_watch *w)
{
	uint64_t now;
	if (!w->kind || !sd_topo_oom_count(w->file, &now) || now <= w->base)
		return 0;
	return now - w->base;
}

/* Rank 0, mu held: rank r's connection closed, or its node's leader said
 * it left (oom_kind, oom_kills: the OOM kills the leader found counted in
 * its memory cgroup since it started, 0 none).  A rank the OOM killer
 * took is named as such and its node is not blamed (SD_ERR_NOMEM: the
 * run's memory, not the node).  Returns 1 when that is a verdict (mu
 * released, the run aborted), 0 when it was expected (the run is
 * finishing). */
static int peer_gone(struct sd_ctrl *c, int r, int relayed, int oom_kind,
		     uint64_t oom_kills)
{
	struct peer *p = &c->peers[r];
	if (c->finishing || p->bye || p->lost) {
		p->bye = 1;
		return 0;
	}
	char msg[1024], nm[160];
	p->lost = 1;
	peer_name(c, r, nm, sizeof(nm));
	if (!relayed && (oom_kills = oom_watch_kills(&p->oom)))
		oom_kind = p->oom.kind;
	if (oom_kills && oom_kind) {
		p->oom_kind = oom_kind;
		p->oom_kills = oom_kills;
		snprintf(msg, sizeof(msg), "%s was killed by the kernel's OOM "
			 "killer on %s during %s (%s %llu OOM kill%s during the "
			 "run): it ran out of memory, and %s is not blamed: give "
			 "the ranks more memory or run fewer ranks per host",
			 nm, p->host, c->what,
			 oom_kind == 1 ? "its memory cgroup counted"
				       : "the host counted",
			 (unsigned long long)oom_kills,
			 oom_kills == 1 ? "" : "s", p->host);
		pthread_mutex_unlock(&c->mu);
		abort_all(c, SD_ERR_NOMEM, msg);
		return 1;
	}
	p->blamed = 1;
	snprintf(msg, sizeof(msg), "%s was lost during %s: %s", nm, c->what,
		 relayed ? "its connection to its node's leader closed (the "
			   "process died)"
			 : "its control connection closed (the process died "
			   "or its host went down)");
	pthread_mutex_unlock(&c->mu);
	abort_all(c, SD_ERR_TIMEOUT, msg);
	return 1;
}

/* Rank 0, mu held: a connection closed or broke: the rank that made it
 * is gone (a leader's node with it). */
static int conn_gone(struct sd_ctrl *c, int ci)
{
	struct conn *k = &c->conns[ci];
	epoll_ctl(c->ep, EPOLL_CTL_DEL, k->fd, NULL);
	k->closed = 1;
	if (k->rank <= 0)
		return 0; /* a stray connection that never said hello */
	return peer_gone(c, k->rank, 0, 0, 0);
}

struct conn_msg {
	struct sd_ctrl *c;
	int ci;
};

/* Rank 0, mu held: one message on connection ci, from the rank in its
 * header (the connection's own, or one its leader relays). */
static int handle_msg(void *arg, const struct hdr *h, char *pl,
		      const char *raw, size_t whole)
{
	struct conn_msg *cm = arg;
	struct sd_ctrl *c = cm->c;
	int r = (int)h->rank;
	(void)raw;
	(void)whole;
	if (r <= 0 || r >= c->size)
		return 0; /* nobody's */
	struct peer *p = &c->peers[r];
	if (h->type == MSG_HELLO) {
		if (p->conn >= 0 || h->len < 4)
			return 0;
		p->conn = cm->ci;
		memcpy(&p->pid, pl, 4);
		sd_strlcpy(p->host, pl + 4, sizeof(p->host));
		/* a rank of rank 0's own node: rank 0 watches its cgroup */
		if (strcmp(p->host, c->peers[0].host) == 0)
			oom_watch_start(&p->oom, p->pid);
		if (c->conns[cm->ci].rank < 0)
			c->conns[cm->ci].rank = r;
		c->nhello++;
		return 0;
	}
	if (p->conn != cm->ci)
		return 0; /* not a rank of this connection */
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
		break;
	case MSG_LOST: {
		uint32_t kind = 0;
		uint64_t kills = 0;
		if (h->len >= 12) {
			memcpy(&kind, pl, 4);
			memcpy(&kills, pl + 4, 8);
		}
		return peer_gone(c, r, 1, (int)kind, kills);
	}
	default:
		break;
	}
	return 0;
}

/* Rank 0, mu held: read connection ci.  Returns 1 when a verdict was
 * reached (mu released), else 0. */
static int drain_conn(struct sd_ctrl *c, int ci)
{
	struct conn_msg cm = { c, ci };
	struct conn *k = &c->conns[ci];
	int rc = read_msgs(k->fd, &k->rd, &c->scratch, &c->scratch_cap,
			   handle_msg, &cm);
	if (rc > 0)
		return 1;
	if (rc < 0)
		return conn_gone(c, ci);
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
			int ci = (int)ev[i].data.u32 - 1;
			if (c->conns[ci].closed)
				continue;
			if (drain_conn(c, ci))
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

/* A leader: pass a message from rank 0 on to every rank of its node
 * (before acting on it: an abort reaches them as fast as the leader). */
static void hand_down(struct sd_ctrl *c, const struct hdr *h, const char *pl)
{
	if (!c->leader)
		return;
	pthread_mutex_lock(&c->lmu);
	for (int i = 0; i < c->nlocals; i++) {
		struct local *l = &c->locals[i];
		if (l->closed)
			continue;
		/* whole, or not at all: a rank that cannot take it (it
		 * stopped reading; the send times out) is cut off, and the
		 * relay reports it lost */
		struct iovec iov[2] = { { (void *)(uintptr_t)h, sizeof(*h) },
					{ (void *)(uintptr_t)pl, h->len } };
		if (write_iov(l->fd, iov, 2))
			shutdown(l->fd, SHUT_RDWR);
	}
	pthread_mutex_unlock(&c->lmu);
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
				 "%s; aborting", c->rank, c->upname);
			reach_verdict(c, SD_ERR_PEER, msg, 1);
			return NULL;
		}
		hand_down(c, &h, pl);
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

/* Rank 0 holds a socket per rank of its own node and one per other node
 * (its leader's): the soft open-file limit is raised to the hard one. */
static void open_files(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

/* The ranks that have not said hello, as "1,5,9" (the first few). */
static void missing_ranks(struct sd_ctrl *c, char *buf, size_t len)
{
	size_t u = 0;
	int n = 0;
	buf[0] = '\0';
	for (int r = 1; r < c->size; r++) {
		if (c->peers[r].conn >= 0)
			continue;
		if (n++ < 16 && u < len)
			u += (size_t)snprintf(buf + u, len - u, "%s%d",
					      u ? "," : "", r);
	}
	if (n > 16 && u < len)
		snprintf(buf + u, len - u, " and %d more", n - 16);
}

#define LISTEN_TAG UINT32_MAX

static int start_server(struct sd_ctrl *c, struct sd_bootstrap *bs,
			char *err, size_t errlen)
{
	char addr[64], endpoint[192] = "";
	int lfd = -1, rc = SD_ERR_BOOTSTRAP;
	open_files();
	c->conns = calloc((size_t)c->size, sizeof(*c->conns));
	c->scratch_cap = 64 << 10;
	c->scratch = malloc(c->scratch_cap);
	c->ep = epoll_create1(EPOLL_CLOEXEC);
	if (!c->conns || !c->scratch || c->ep < 0) {
		snprintf(err, errlen, "control plane: out of memory");
		rc = SD_ERR_NOMEM;
		goto bcast; /* the others must still leave the bcast */
	}
	sd_pick_address(bs->host, bs->local_size == bs->size,
			"SHAKEDOWN_CTRL_ADDR", addr, sizeof(addr));
	lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	struct sockaddr_in sin = { .sin_family = AF_INET };
	socklen_t sl = sizeof(sin);
	int one = 1;
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bs->local_size == bs->size)
		sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	struct epoll_event lev = { .events = EPOLLIN, .data.u32 = LISTEN_TAG };
	if (lfd < 0 || bind(lfd, (void *)&sin, sizeof(sin)) ||
	    listen(lfd, bs->size) || getsockname(lfd, (void *)&sin, &sl) ||
	    epoll_ctl(c->ep, EPOLL_CTL_ADD, lfd, &lev)) {
		snprintf(err, errlen, "control plane: cannot listen: %s",
			 strerror(errno));
		goto bcast;
	}
	/* where to connect, and the host whose ranks connect directly (the
	 * others reach rank 0 through their node's leader) */
	snprintf(endpoint, sizeof(endpoint), "%s:%u %s", addr,
		 (unsigned)ntohs(sin.sin_port), bs->host);
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
	*strchr(endpoint, ' ') = '\0';
	double deadline = sd_now() + c->timeout_ms / 1e3;
	struct epoll_event ev[256];
	pthread_mutex_lock(&c->mu);
	while (c->nhello < c->size - 1) {
		int left = (int)((deadline - sd_now()) * 1e3);
		int ready = left > 0 ? epoll_wait(c->ep, ev, 256, left) : 0;
		if (ready < 0 && errno == EINTR)
			continue;
		if (ready <= 0) {
			char missing[256];
			missing_ranks(c, missing, sizeof(missing));
			snprintf(err, errlen, "control plane: rank %s did not "
				 "connect to %s within %.0f s (a firewall, or "
				 "set SHAKEDOWN_CTRL_ADDR to an address of rank "
				 "0's host that the others reach)", missing,
				 endpoint, c->timeout_ms / 1e3);
			rc = SD_ERR_TIMEOUT;
			break;
		}
		for (int i = 0; i < ready && !rc; i++) {
			if (ev[i].data.u32 != LISTEN_TAG) {
				int ci = (int)ev[i].data.u32 - 1;
				struct conn_msg cm = { c, ci };
				struct conn *k = &c->conns[ci];
				if (!k->closed &&
				    read_msgs(k->fd, &k->rd, &c->scratch,
					      &c->scratch_cap, handle_msg,
					      &cm) < 0) {
					/* a stray connection, or a rank gone
					 * before the start: its ranks are
					 * missing at the end */
					epoll_ctl(c->ep, EPOLL_CTL_DEL, k->fd,
						  NULL);
					close(k->fd);
					k->fd = -1;
					k->closed = 1;
				}
				continue;
			}
			for (;;) {
				int fd = accept4(lfd, NULL, NULL,
						 SOCK_CLOEXEC);
				if (fd < 0 && errno == EINTR)
					continue;
				if (fd < 0 && (errno == EMFILE ||
					       errno == ENFILE)) {
					struct rlimit rl = { 0, 0 };
					getrlimit(RLIMIT_NOFILE, &rl);
					snprintf(err, errlen, "control plane: "
						 "rank 0 ran out of open files "
						 "(its limit is %llu) taking "
						 "the control connections of "
						 "%d ranks (one per node, and "
						 "one per rank of its own); "
						 "raise the hard limit where the "
						 "job starts (ulimit -Hn as "
						 "root, LimitNOFILE= in slurmd's "
						 "systemd unit, or nofile in "
						 "/etc/security/limits.conf)",
						 (unsigned long long)rl.rlim_cur,
						 c->size);
					rc = SD_ERR_BOOTSTRAP;
					break;
				}
				if (fd < 0)
					break; /* none waiting now */
				if (c->nconns >= c->size) {
					close(fd); /* more than ranks: stray */
					continue;
				}
				setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one,
					   sizeof(one));
				struct conn *k = &c->conns[c->nconns];
				memset(k, 0, sizeof(*k));
				k->fd = fd;
				k->rank = -1;
				struct epoll_event cev = {
					.events = EPOLLIN,
					.data.u32 = (uint32_t)c->nconns + 1 };
				if (epoll_ctl(c->ep, EPOLL_CTL_ADD, fd, &cev)) {
					close(fd);
					continue;
				}
				c->nconns++;
			}
		}
		if (rc)
			break;
	}
	pthread_mutex_unlock(&c->mu);
	epoll_ctl(c->ep, EPOLL_CTL_DEL, lfd, NULL);
	close(lfd);
	return rc;
}

/* A leader's relay, mu not held: a message from a rank of its node,
 * kept to go on to rank 0 in one write with the others read with it. */
static int relay_msg(void *arg, const struct hdr *h, char *pl, const char *raw,
		     size_t whole)
{
	struct sd_ctrl *c = arg;
	(void)h;
	(void)pl;
	if (c->out_len + whole > c->out_cap) {
		size_t cap = c->out_cap ? c->out_cap : 4096;
		while (cap < c->out_len + whole)
			cap *= 2;
		char *p = realloc(c->out, cap);
		if (!p)
			return -1;
		c->out = p;
		c->out_cap = cap;
	}
	memcpy(c->out + c->out_len, raw, whole);
	c->out_len += whole;
	return 0;
}

/* A leader: the thread that passes its node's ranks' messages on to rank
 * 0, and tells rank 0 when one of them leaves without a word. */
static void *relay_main(void *arg)
{
	struct sd_ctrl *c = arg;
	struct epoll_event ev[64];
	char *scratch = malloc(64 << 10);
	size_t cap = 64 << 10;
	if (!scratch)
		return NULL;
	for (;;) {
		int ready = epoll_wait(c->lep, ev, 64, -1);
		if (ready < 0 && errno == EINTR)
			continue;
		if (ready < 0)
			break;
		for (int i = 0; i < ready; i++) {
			if (ev[i].data.u32 == 0) {
				free(scratch);
				return NULL; /* sd_ctrl_destroy */
			}
			struct local *l = &c->locals[ev[i].data.u32 - 1];
			if (l->closed)
				continue;
			c->out_len = 0;
			int rc = read_msgs(l->fd, &l->rd, &scratch, &cap,
					   relay_msg, c);
			if (c->out_len) {
				struct iovec iov = { c->out, c->out_len };
				send_iov(c, c->fd, &iov, 1);
			}
			if (rc >= 0)
				continue;
			pthread_mutex_lock(&c->lmu);
			epoll_ctl(c->lep, EPOLL_CTL_DEL, l->fd, NULL);
			close(l->fd);
			l->closed = 1;
			pthread_mutex_unlock(&c->lmu);
			pthread_mutex_lock(&c->mu);
			int expected = c->got_finish || c->aborting;
			pthread_mutex_unlock(&c->mu);
			if (!expected) {
				/* rank 0 names it, as if its own connection
				 * had closed, and what its cgroup counted */
				uint64_t kills = oom_watch_kills(&l->oom);
				uint32_t kind = (uint32_t)l->oom.kind;
				char pl[12];
				memcpy(pl, &kind, 4);
				memcpy(pl + 4, &kills, 8);
				struct hdr h = { MSG_LOST, (uint32_t)l->rank, 0,
						 0, kills ? 12 : 0 };
				struct iovec iov[2] = { { &h, sizeof(h) },
							{ pl, 12 } };
				send_iov(c, c->fd, iov, kills ? 2 : 1);
			}
		}
	}
	free(scratch);
	return NULL;
}

/* A leader: the relay's epoll set (the wake pipe as 0, local i as i+1)
 * and thread. */
static int start_relay(struct sd_ctrl *c)
{
	if (pipe(c->lwake))
		return -1;
	c->lep = epoll_create1(EPOLL_CLOEXEC);
	if (c->lep < 0)
		return -1;
	struct epoll_event ev = { .events = EPOLLIN, .data.u32 = 0 };
	if (epoll_ctl(c->lep, EPOLL_CTL_ADD, c->lwake[0], &ev))
		return -1;
	for (int i = 0; i < c->nlocals; i++) {
		ev.data.u32 = (uint32_t)i + 1;
		if (epoll_ctl(c->lep, EPOLL_CTL_ADD, c->locals[i].fd, &ev))
			return -1;
	}
	if (pthread_create(&c->relay, NULL, relay_main, c))
		return -1;
	c->relay_running = 1;
	return 0;
}

/* The abstract socket (Linux; scoped to the network namespace, which the
 * ranks of a node share) where a node's leader waits for its node's
 * other ranks: named after rank 0's endpoint (one per job) and the host. */
static socklen_t leader_addr(const char *endpoint0, const char *host,
			     struct sockaddr_un *sun)
{
	uint64_t hv = sd_fnv1a(0, endpoint0, strlen(endpoint0));
	hv = sd_fnv1a(hv, "/", 1);
	hv = sd_fnv1a(hv, host, strlen(host));
	memset(sun, 0, sizeof(*sun));
	sun->sun_family = AF_UNIX;
	int n = snprintf(sun->sun_path + 1, sizeof(sun->sun_path) - 1,
			 "shakedown-ctrl-%016llx", (unsigned long long)hv);
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 +
			   (size_t)n);
}

/* Connect to rank 0's endpoint "ip:port" over TCP, retrying until the
 * deadline.  Returns the socket, or -1 with err. */
static int connect_rank0(const char *endpoint, double deadline, char *err,
			 size_t errlen)
{
	char ip[96];
	sd_strlcpy(ip, endpoint, sizeof(ip));
	char *colon = strrchr(ip, ':');
	if (!colon) {
		snprintf(err, errlen, "control plane: bad address '%s' from "
			 "rank 0", endpoint);
		return -1;
	}
	*colon = '\0';
	struct sockaddr_in sin = { .sin_family = AF_INET,
				   .sin_port = htons((uint16_t)strtol(
					   colon + 1, NULL, 10)) };
	if (inet_pton(AF_INET, ip, &sin.sin_addr) != 1) {
		snprintf(err, errlen, "control plane: bad address '%s' from "
			 "rank 0", endpoint);
		return -1;
	}
	for (;;) {
		int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd >= 0 && connect(fd, (void *)&sin, sizeof(sin)) == 0) {
			int one = 1;
			setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one,
				   sizeof(one));
			return fd;
		}
		int e = errno;
		if (fd >= 0)
			close(fd);
		if (sd_now() > deadline) {
			snprintf(err, errlen, "control plane: cannot reach "
				 "rank 0 at %s: %s (set SHAKEDOWN_CTRL_ADDR "
				 "to an address of rank 0's host that this host "
				 "reaches)", endpoint, strerror(e));
			return -1;
		}
		usleep(50000);
	}
}

/* A rank of a node other than rank 0's that is not its leader: connect
 * to the leader's socket, which may not be there yet. */
static int connect_leader(const struct sockaddr_un *sun, socklen_t sl,
			  const char *host, double deadline, char *err,
			  size_t errlen)
{
	for (;;) {
		int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd >= 0 && connect(fd, (const void *)sun, sl) == 0)
			return fd;
		int e = errno;
		if (fd >= 0)
			close(fd);
		if (sd_now() > deadline) {
			snprintf(err, errlen, "control plane: cannot reach the "
				 "leader of %s (its first rank), through which "
				 "this node's ranks reach rank 0: %s", host,
				 strerror(e));
			return -1;
		}
		usleep(20000);
	}
}

/* A leader: take the connections of its node's other ranks and pass
 * their hellos on, until all local_size - 1 have come. */
static int take_locals(struct sd_ctrl *c, struct sd_bootstrap *bs, int lfd,
		       double deadline, char *err, size_t errlen)
{
	int want = bs->local_size - 1;
	c->locals = calloc((size_t)(want > 0 ? want : 1), sizeof(*c->locals));
	if (!c->locals) {
		snprintf(err, errlen, "control plane: out of memory");
		return SD_ERR_NOMEM;
	}
	while (c->nlocals < want) {
		struct pollfd pf = { lfd, POLLIN, 0 };
		int left = (int)((deadline - sd_now()) * 1e3);
		if (left <= 0 || poll(&pf, 1, left) <= 0) {
			snprintf(err, errlen, "control plane: %d of the other "
				 "%d ranks on %s did not reach their node's "
				 "leader (rank %d) within %.0f s",
				 want - c->nlocals, want, bs->host, c->rank,
				 c->timeout_ms / 1e3);
			return SD_ERR_TIMEOUT;
		}
		int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0)
			continue;
		struct timeval tv = { c->timeout_ms / 1000,
				      (c->timeout_ms % 1000) * 1000 };
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		/* what is handed down never waits long on a rank that
		 * stopped reading */
		setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
		struct hdr h;
		char *pl;
		if (recv_msg(fd, &h, &pl) || h.type != MSG_HELLO ||
		    h.rank == 0 || h.rank >= (uint32_t)c->size || h.len < 4) {
			free(pl);
			close(fd);
			continue;
		}
		/* the hello goes on as it came: rank 0 learns who is behind */
		int32_t pid;
		memcpy(&pid, pl, 4);
		struct iovec iov[2] = { { &h, sizeof(h) }, { pl, h.len } };
		int sent = send_iov(c, c->fd, iov, 2);
		free(pl);
		if (sent) {
			close(fd);
			snprintf(err, errlen, "control plane: lost rank 0 at "
				 "start");
			return SD_ERR_PEER;
		}
		struct local *l = &c->locals[c->nlocals++];
		l->fd = fd;
		l->rank = (int)h.rank;
		oom_watch_start(&l->oom, pid);
	}
	return SD_OK;
}

static int start_client(struct sd_ctrl *c, struct sd_bootstrap *bs,
			char *err, size_t errlen)
{
	char endpoint[192];
	int rc = bs->bcast(bs, endpoint, sizeof(endpoint), 0);
	if (rc) {
		snprintf(err, errlen, "control plane: bootstrap broadcast "
			 "failed");
		return rc;
	}
	endpoint[sizeof(endpoint) - 1] = '\0';
	if (!endpoint[0]) {
		snprintf(err, errlen, "control plane: rank 0 could not listen");
		return SD_ERR_BOOTSTRAP;
	}
	char *sp = strchr(endpoint, ' ');
	const char *host0 = sp ? sp + 1 : "";
	if (sp)
		*sp = '\0';
	double deadline = sd_now() + c->timeout_ms / 1e3;
	/* the ranks of rank 0's node, and a rank alone on its node, reach
	 * rank 0 themselves; on every other node the first rank is the
	 * leader, through which the others reach rank 0 */
	int direct = bs->local_size == bs->size || bs->local_size <= 1 ||
		     strcmp(bs->host, host0) == 0;
	struct sockaddr_un sun;
	socklen_t sl = leader_addr(endpoint, bs->host, &sun);
	int lfd = -1;
	sd_strlcpy(c->host0, endpoint, sizeof(c->host0));
	snprintf(c->upname, sizeof(c->upname), "rank 0 (%s)", endpoint);
	if (!direct && bs->local_rank != 0) {
		c->fd = connect_leader(&sun, sl, bs->host, deadline, err,
				       errlen);
		if (c->fd < 0)
			return SD_ERR_PEER;
		snprintf(c->upname, sizeof(c->upname), "its node's leader (the "
			 "first rank on %s), through which it reaches rank 0",
			 bs->host);
	} else {
		if (!direct) {
			/* listen first, so that the others find it */
			c->leader = 1;
			lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
			if (lfd < 0 || bind(lfd, (void *)&sun, sl) ||
			    listen(lfd, bs->local_size)) {
				snprintf(err, errlen, "control plane: the "
					 "leader of %s cannot listen: %s",
					 bs->host, strerror(errno));
				if (lfd >= 0)
					close(lfd);
				return SD_ERR_BOOTSTRAP;
			}
		}
		c->fd = connect_rank0(endpoint, deadline, err, errlen);
		if (c->fd < 0) {
			if (lfd >= 0)
				close(lfd);
			return SD_ERR_PEER;
		}
	}
	uint32_t pid = (uint32_t)getpid();
	if (send_msg(c, c->fd, MSG_HELLO, 0, 0, &pid, 4, bs->host,
		     strlen(bs->host) + 1)) {
		snprintf(err, errlen, "control plane: lost rank 0 at start");
		if (lfd >= 0)
			close(lfd);
		return SD_ERR_PEER;
	}
	if (c->leader) {
		rc = take_locals(c, bs, lfd, deadline, err, errlen);
		close(lfd);
		if (rc)
			return rc;
	}
	return SD_OK;
}

/* Rank 0: the wake pipe joins the epoll set (as 0). */
static int serve_setup(struct sd_ctrl *c)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u32 = 0 };
	return epoll_ctl(c->ep, EPOLL_CTL_ADD, c->wake[0], &ev);
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
	c->lep = -1;
	c->wake[0] = c->wake[1] = -1;
	c->lwake[0] = c->lwake[1] = -1;
	pthread_mutex_init(&c->mu, NULL);
	pthread_mutex_init(&c->lmu, NULL);
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
			c->peers[r].conn = -1;
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
		if (!rc && c->leader && start_relay(c))
			rc = SD_ERR_NOMEM;
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

int sd_ctrl_oom_victim(struct sd_ctrl *c, int *rank, char host[64],
		       uint64_t *kills)
{
	int kind = 0;
	if (c->rank != 0)
		return 0;
	pthread_mutex_lock(&c->mu);
	for (int r = 0; r < c->size && !kind; r++)
		if (c->peers[r].oom_kind) {
			kind = c->peers[r].oom_kind;
			*rank = r;
			*kills = c->peers[r].oom_kills;
			sd_strlcpy(host, c->peers[r].host, 64);
		}
	pthread_mutex_unlock(&c->mu);
	return kind;
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
			snprintf(msg, sizeof(msg), "rank %d: %s did not answer "
				 "within %.0f s; aborting", c->rank, c->upname,
				 backstop_s(c));
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
	/* one go per connection: a node's leader hands it on */
	for (int i = 0; i < c->nconns; i++)
		if (!c->conns[i].closed)
			send_msg(c, c->conns[i].fd, MSG_GO, 0, seq, &flag, 1, bc,
				 bclen);
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
		for (int i = 0; i < c->nconns; i++)
			if (!c->conns[i].closed)
				send_msg(c, c->conns[i].fd, MSG_FINISH, 0, 0, &st,
					 4, NULL, 0);
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
	if (c->relay_running) {
		(void)!write(c->lwake[1], "x", 1);
		pthread_join(c->relay, NULL);
	}
	for (int i = 0; i < c->nlocals; i++) {
		if (!c->locals[i].closed)
			close(c->locals[i].fd);
		free(c->locals[i].rd.in);
	}
	free(c->locals);
	free(c->out);
	if (c->lep >= 0)
		close(c->lep);
	if (c->lwake[0] >= 0) {
		close(c->lwake[0]);
		close(c->lwake[1]);
	}
	if (c->peers) {
		for (int r = 0; r < c->size; r++)
			free(c->peers[r].res);
		free(c->peers);
	}
	for (int i = 0; i < c->nconns; i++) {
		if (c->conns[i].fd >= 0)
			close(c->conns[i].fd);
		free(c->conns[i].rd.in);
	}
	free(c->conns);
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
	pthread_mutex_destroy(&c->lmu);
	free(c);
}
