/*
 * ctrl.c - the control plane (see ctrl.h).
 *
 * Wire format: a 16-byte header (type, rank, seq, payload length; host byte
 * order: all ranks of a job run the same binary on the same architecture)
 * and the payload.  Rank 0's server thread owns every socket for reading;
 * writes take `wmu`.  Shared state is guarded by `mu`.
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
#include <sys/socket.h>
#include <unistd.h>

#include "ctrl.h"
#include "tool.h"
#include "util.h"

enum msg_type {
	MSG_HELLO = 1, /* client -> 0: payload pid(4) + host */
	MSG_PROGRESS,  /* client -> 0: entering seq */
	MSG_RESULT,    /* client -> 0: want_stop(1) + result bytes */
	MSG_FAIL,      /* client -> 0: status(4) + message */
	MSG_BYE,       /* client -> 0: finished normally */
	MSG_GO,        /* 0 -> client: stop(1) */
	MSG_ABORT,     /* 0 -> client: exit status(4) + message */
	MSG_FINISH,    /* 0 -> client: exit status(4) */
};

struct hdr {
	uint32_t type, rank, seq, len;
};

struct peer {
	int fd;
	int bye;
	int lost;
	int pid;
	char host[64];
	uint32_t seq;       /* last step it entered */
	int has_res;
	uint32_t res_seq;
	int res_stop;
	char *res;
	size_t res_len;
	int failed;         /* reported a failure for fail_seq */
	int fail_status;    /* its sd_status */
	uint32_t fail_seq;
	char fail_msg[256];
};

struct sd_ctrl {
	int rank, size, timeout_ms;
	pthread_mutex_t mu, wmu;
	pthread_cond_t cv;
	sd_ctrl_abort_fn hook;
	void *hook_arg;
	int aborting;
	/* rank 0 */
	struct peer *peers;
	char what[256];     /* description of the current step */
	uint32_t cur_seq;
	double decide_at;   /* when to judge reported failures; 0: none */
	uint32_t decide_seq;
	int finishing;
	pthread_t thread;
	int thread_running;
	int wake[2];
	/* other ranks */
	int fd;
	int got_go, go_stop;
	uint32_t go_seq;
	int got_finish, finish_status;
	char host0[64];
};

static int send_msg(struct sd_ctrl *c, int fd, uint32_t type, uint32_t seq,
		    const void *a, size_t alen, const void *b, size_t blen)
{
	struct hdr h = { type, (uint32_t)c->rank, seq, (uint32_t)(alen + blen) };
	pthread_mutex_lock(&c->wmu);
	int rc = sd_send_full(fd, &h, sizeof(h));
	if (!rc && alen)
		rc = sd_send_full(fd, a, alen);
	if (!rc && blen)
		rc = sd_send_full(fd, b, blen);
	pthread_mutex_unlock(&c->wmu);
	return rc;
}

/* Read one message; *payload is malloc'd (NUL-terminated). */
static int recv_msg(int fd, struct hdr *h, char **payload)
{
	*payload = NULL;
	if (sd_recv_full(fd, h, sizeof(*h)) || h->len > (64u << 20))
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

static void peer_name(struct sd_ctrl *c, int r, char *buf, size_t len)
{
	snprintf(buf, len, "rank %d (%s, pid %d)", r, c->peers[r].host,
		 c->peers[r].pid);
}

/* End the process for an abort decided here or by rank 0. */
static void die(struct sd_ctrl *c, int code, const char *msg)
	__attribute__((noreturn));
static void die(struct sd_ctrl *c, int code, const char *msg)
{
	pthread_mutex_lock(&c->mu);
	int first = !c->aborting;
	c->aborting = 1;
	pthread_mutex_unlock(&c->mu);
	if (!first)
		for (;;)
			pause(); /* another thread is already exiting */
	if (c->hook)
		c->hook(c->hook_arg, code, msg);
	fflush(stdout);
	fflush(stderr);
	_exit(code);
}

/* Rank 0: tell everyone, say why, and exit. */
static void abort_all(struct sd_ctrl *c, int code, const char *msg)
	__attribute__((noreturn));
static void abort_all(struct sd_ctrl *c, int code, const char *msg)
{
	uint32_t st = (uint32_t)code;
	for (int r = 1; r < c->size; r++)
		if (c->peers[r].fd >= 0 && !c->peers[r].lost)
			send_msg(c, c->peers[r].fd, MSG_ABORT, 0, &st,
				 sizeof(st), msg, strlen(msg));
	fprintf(stderr, "shakedown: %s\n", msg);
	die(c, code, msg);
}

/* Append "rank list" of ranks where pick(r) holds. */
static void list_ranks(struct sd_ctrl *c, int (*pick)(struct sd_ctrl *, int),
		       char *buf, size_t len, int names)
{
	buf[0] = '\0';
	for (int r = 0; r < c->size; r++) {
		if (!pick(c, r))
			continue;
		size_t u = strlen(buf);
		if (names) {
			char nm[128];
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

static int is_suspect(struct sd_ctrl *c, int r)
{
	return !is_failed(c, r) && !c->peers[r].lost;
}

/* Rank 0, mu held: ranks reported failures in decide_seq; who is to blame? */
static void judge(struct sd_ctrl *c) __attribute__((noreturn));
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
		char nm[128];
		peer_name(c, r, nm, sizeof(nm));
		snprintf(msg, sizeof(msg), "%s failed in %s: %s", nm, c->what,
			 p->fail_msg);
		pthread_mutex_unlock(&c->mu);
		abort_all(c, sd_exit_for_status(p->fail_status), msg);
	}
	list_ranks(c, is_suspect, suspects, sizeof(suspects), 1);
	list_ranks(c, is_failed, waiting, sizeof(waiting), 0);
	if (suspects[0])
		snprintf(msg, sizeof(msg), "%s did not complete %s within "
			 "%.0f s; rank %s gave up waiting (%s)", suspects,
			 c->what, c->timeout_ms / 1e3, waiting, first);
	else
		snprintf(msg, sizeof(msg), "every rank failed in %s: no single "
			 "rank is to blame; suspect the network or the backend "
			 "(%s)", c->what, first);
	pthread_mutex_unlock(&c->mu);
	abort_all(c, SD_EXIT_TIMEOUT, msg);
}

static void note_failure(struct sd_ctrl *c, int r, uint32_t seq, int status,
			 const char *msg)
{
	struct peer *p = &c->peers[r];
	p->failed = 1;
	p->fail_status = status;
	p->fail_seq = seq;
	sd_strlcpy(p->fail_msg, msg, sizeof(p->fail_msg));
	if (!c->decide_at) {
		c->decide_seq = seq;
		/* the others waiting in the same step will report shortly */
		c->decide_at = sd_now() + 2.0;
	}
	int all = 1;
	for (int k = 0; k < c->size; k++)
		if (!c->peers[k].lost && !is_failed(c, k))
			all = 0;
	if (all)
		c->decide_at = sd_now();
	pthread_cond_broadcast(&c->cv);
}

static void *server_main(void *arg)
{
	struct sd_ctrl *c = arg;
	int n = c->size;
	for (;;) {
		struct pollfd pfd[n + 1];
		pfd[0].fd = c->wake[0];
		pfd[0].events = POLLIN;
		for (int r = 1; r < n; r++) {
			pfd[r].fd = c->peers[r].lost || c->peers[r].bye
					    ? -1 : c->peers[r].fd;
			pfd[r].events = POLLIN;
		}
		int ready = poll(pfd, (nfds_t)n, 100);
		if (ready < 0 && errno != EINTR)
			break;
		if (ready > 0 && (pfd[0].revents & POLLIN))
			return NULL; /* sd_ctrl_destroy */
		pthread_mutex_lock(&c->mu);
		for (int r = 1; ready > 0 && r < n; r++) {
			if (!(pfd[r].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			struct hdr h;
			char *pl;
			struct peer *p = &c->peers[r];
			if (recv_msg(p->fd, &h, &pl)) {
				if (c->finishing)
					p->bye = 1;
				else if (!c->aborting) {
					char msg[1024], nm[128];
					p->lost = 1;
					peer_name(c, r, nm, sizeof(nm));
					snprintf(msg, sizeof(msg), "%s was lost "
						 "during %s: its control "
						 "connection closed (the process "
						 "died or its host went down)",
						 nm, c->what);
					pthread_mutex_unlock(&c->mu);
					abort_all(c, SD_EXIT_TIMEOUT, msg);
				}
				continue;
			}
			switch (h.type) {
			case MSG_PROGRESS:
				p->seq = h.seq;
				break;
			case MSG_RESULT:
				free(p->res);
				p->res_stop = h.len > 0 && pl[0];
				p->res_len = h.len ? h.len - 1 : 0;
				p->res = malloc(p->res_len + 1);
				if (p->res)
					memcpy(p->res, pl + 1, p->res_len);
				p->res_seq = h.seq;
				p->has_res = 1;
				pthread_cond_broadcast(&c->cv);
				break;
			case MSG_FAIL:
			{
				uint32_t st = SD_ERR_TIMEOUT;
				if (h.len >= 4)
					memcpy(&st, pl, 4);
				note_failure(c, r, h.seq, (int)st,
					     h.len > 4 ? pl + 4 : "failed");
			}
				break;
			case MSG_BYE:
				p->bye = 1;
				break;
			default:
				break;
			}
			free(pl);
		}
		if (c->decide_at && sd_now() >= c->decide_at)
			judge(c); /* unlocks and never returns */
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
			int done = c->got_finish;
			pthread_mutex_unlock(&c->mu);
			if (done)
				return NULL;
			snprintf(msg, sizeof(msg), "rank %d: lost contact with "
				 "rank 0 (%s); aborting", c->rank, c->host0);
			fprintf(stderr, "shakedown: %s\n", msg);
			die(c, SD_EXIT_TIMEOUT, msg);
		}
		pthread_mutex_lock(&c->mu);
		switch (h.type) {
		case MSG_GO:
			c->got_go = 1;
			c->go_seq = h.seq;
			c->go_stop = h.len > 0 && pl[0];
			break;
		case MSG_FINISH:
			c->got_finish = 1;
			if (h.len >= 4)
				memcpy(&c->finish_status, pl, 4);
			break;
		case MSG_ABORT: {
			uint32_t code = SD_EXIT_TIMEOUT;
			if (h.len >= 4)
				memcpy(&code, pl, 4);
			pthread_mutex_unlock(&c->mu);
			die(c, (int)code, h.len > 4 ? pl + 4 : "aborted");
		}
		default:
			break;
		}
		pthread_cond_broadcast(&c->cv);
		pthread_mutex_unlock(&c->mu);
		free(pl);
	}
}

static int start_server(struct sd_ctrl *c, struct sd_bootstrap *bs,
			char *err, size_t errlen)
{
	char addr[64], endpoint[96] = "";
	int lfd = -1, rc = SD_ERR_BOOTSTRAP;
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
		struct hdr h;
		char *pl;
		if (recv_msg(fd, &h, &pl) || h.type != MSG_HELLO ||
		    h.rank == 0 || (int)h.rank >= c->size ||
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
	if (send_msg(c, c->fd, MSG_HELLO, 0, &pid, 4, bs->host,
		     strlen(bs->host) + 1)) {
		snprintf(err, errlen, "control plane: lost rank 0 at start");
		return SD_ERR_PEER;
	}
	return SD_OK;
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
		if (pipe(c->wake) ||
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

void sd_ctrl_progress(struct sd_ctrl *c, uint32_t seq, const char *what)
{
	if (c->rank == 0) {
		pthread_mutex_lock(&c->mu);
		c->cur_seq = seq;
		c->peers[0].seq = seq;
		sd_strlcpy(c->what, what, sizeof(c->what));
		pthread_mutex_unlock(&c->mu);
		return;
	}
	send_msg(c, c->fd, MSG_PROGRESS, seq, NULL, 0, NULL, 0);
}

static void deadline_ts(struct timespec *ts, double seconds)
{
	clock_gettime(CLOCK_REALTIME, ts);
	double s = (double)ts->tv_sec + ts->tv_nsec * 1e-9 + seconds;
	ts->tv_sec = (time_t)s;
	ts->tv_nsec = (long)((s - (double)ts->tv_sec) * 1e9);
}

static int lacks_result(struct sd_ctrl *c, int r)
{
	return r > 0 && !c->peers[r].has_res;
}

int sd_ctrl_exchange(struct sd_ctrl *c, uint32_t seq, const void *mine,
		     size_t len, void *all, int want_stop, int *stop)
{
	char flag = (char)(want_stop != 0);
	struct timespec ts;
	if (c->rank != 0) {
		if (send_msg(c, c->fd, MSG_RESULT, seq, &flag, 1, mine, len))
			sd_ctrl_fail(c, seq, SD_ERR_PEER,
				     "lost the connection to rank 0");
		/* rank 0 enforces the timeout; this is the backstop for a
		 * rank 0 that stopped answering altogether */
		deadline_ts(&ts, 2.0 * c->timeout_ms / 1e3 + 5);
		pthread_mutex_lock(&c->mu);
		while (!(c->got_go && c->go_seq == seq)) {
			if (pthread_cond_timedwait(&c->cv, &c->mu, &ts) ==
			    ETIMEDOUT) {
				char msg[256];
				pthread_mutex_unlock(&c->mu);
				snprintf(msg, sizeof(msg), "rank %d: rank 0 (%s) "
					 "did not answer within %.0f s; aborting",
					 c->rank, c->host0,
					 2.0 * c->timeout_ms / 1e3 + 5);
				fprintf(stderr, "shakedown: %s\n", msg);
				die(c, SD_EXIT_TIMEOUT, msg);
			}
		}
		c->got_go = 0;
		*stop = c->go_stop;
		pthread_mutex_unlock(&c->mu);
		return SD_OK;
	}

	deadline_ts(&ts, c->timeout_ms / 1e3);
	pthread_mutex_lock(&c->mu);
	for (;;) {
		int missing = 0;
		for (int r = 1; r < c->size; r++)
			if (!c->peers[r].has_res || c->peers[r].res_seq != seq)
				missing++;
		if (!missing)
			break;
		if (pthread_cond_timedwait(&c->cv, &c->mu, &ts) == ETIMEDOUT) {
			char names[1024], msg[1400];
			list_ranks(c, lacks_result, names, sizeof(names), 1);
			snprintf(msg, sizeof(msg), "%s did not finish %s within "
				 "%.0f s (the others did)", names, c->what,
				 c->timeout_ms / 1e3);
			pthread_mutex_unlock(&c->mu);
			abort_all(c, SD_EXIT_TIMEOUT, msg);
		}
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
	pthread_mutex_unlock(&c->mu);
	flag = (char)(any_stop != 0);
	for (int r = 1; r < c->size; r++)
		send_msg(c, c->peers[r].fd, MSG_GO, seq, &flag, 1, NULL, 0);
	*stop = any_stop;
	return SD_OK;
}

void sd_ctrl_fail(struct sd_ctrl *c, uint32_t seq, int status, const char *msg)
{
	if (c->rank == 0) {
		pthread_mutex_lock(&c->mu);
		note_failure(c, 0, seq, status, msg);
		pthread_mutex_unlock(&c->mu);
	} else {
		uint32_t st = (uint32_t)status;
		send_msg(c, c->fd, MSG_FAIL, seq, &st, 4, msg, strlen(msg) + 1);
	}
	/* rank 0's judge decides and the abort exits this process; if no
	 * word comes, give up on our own */
	sleep((unsigned)(c->timeout_ms / 1000 + 10));
	char text[512];
	snprintf(text, sizeof(text), "rank %d: %s (no verdict from rank 0)",
		 c->rank, msg);
	fprintf(stderr, "shakedown: %s\n", text);
	die(c, SD_EXIT_TIMEOUT, text);
}

int sd_ctrl_finish(struct sd_ctrl *c, int *status)
{
	if (c->rank == 0) {
		uint32_t st = (uint32_t)*status;
		pthread_mutex_lock(&c->mu);
		c->finishing = 1;
		pthread_mutex_unlock(&c->mu);
		for (int r = 1; r < c->size; r++)
			send_msg(c, c->peers[r].fd, MSG_FINISH, 0, &st, 4, NULL,
				 0);
		return SD_OK;
	}
	struct timespec ts;
	deadline_ts(&ts, 2.0 * c->timeout_ms / 1e3 + 5);
	pthread_mutex_lock(&c->mu);
	while (!c->got_finish)
		if (pthread_cond_timedwait(&c->cv, &c->mu, &ts) == ETIMEDOUT)
			break;
	int got = c->got_finish;
	if (got)
		*status = c->finish_status;
	pthread_mutex_unlock(&c->mu);
	send_msg(c, c->fd, MSG_BYE, 0, NULL, 0, NULL, 0);
	return got ? SD_OK : SD_ERR_TIMEOUT;
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
		}
		free(c->peers);
	}
	if (c->fd >= 0)
		close(c->fd);
	if (c->wake[0] >= 0) {
		close(c->wake[0]);
		close(c->wake[1]);
	}
	free(c);
}
