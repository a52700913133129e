/*
 * ctrl_sim.c - the control plane (lib/ctrl.c) at scale, on one machine.
 *
 * Rank 0 is the real code: this process makes its own struct sd_bootstrap
 * (rank 0 of N, every rank local, so the control plane listens on
 * 127.0.0.1) and calls sd_ctrl_start, then per step sd_ctrl_progress and
 * sd_ctrl_exchange (8 bytes a rank: its rank and the step, checked for
 * every rank), then a few sd_ctrl_decide steps, then sd_ctrl_quiesce,
 * sd_ctrl_finish and sd_ctrl_destroy.  Ranks 1..N-1 are simulated by a few
 * forked processes, each holding its share of the N-1 connections and
 * speaking the wire protocol itself (ctrl.c's: a 20-byte header in host
 * byte order, then the payload) with epoll, one send() a message and a
 * read buffer per connection.  Each simulated rank answers rank 0's go of
 * one step with the progress and result of the next, as a real rank does.
 *
 * Faults: --stall R@S (rank R sends no result in step S, its connection
 * stays open) and --drop R@S (rank R closes its connection at step S):
 * rank 0's verdict must name rank R; the simulated ranks take the abort
 * and leave.
 *
 * Prints one line: ranks, steps, the time of an exchange step (from
 * sd_ctrl_progress to the end of sd_ctrl_exchange) as median, p95 and max,
 * rank 0's CPU time per step (this process: on a small machine the wall
 * time includes the simulated ranks' own work), its peak memory (VmHWM;
 * the simulated ranks are other processes) and the start-up time.
 * Exit 0: every result arrived right; 3: a verdict (its message on
 * stderr); 1: a check failed; 2: usage or set-up (e.g. too few open
 * files allowed).
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ctrl.h"
#include "shakedown/backend.h"
#include "util.h"

#ifndef IP_BIND_ADDRESS_NO_PORT
#define IP_BIND_ADDRESS_NO_PORT 24
#endif

/* The wire format of lib/ctrl.c. */
enum {
	MSG_HELLO = 1, MSG_PROGRESS, MSG_RESULT, MSG_FAIL, MSG_BYE, MSG_GO,
	MSG_ABORT, MSG_FINISH,
};
struct hdr {
	uint32_t type, rank, group, seq, len;
};

#define RESULT_LEN 8
/* Connections a source address takes (127.0.0.1 has ~28,000 ephemeral
 * ports towards one listening address). */
#define PER_ADDR 16384

static struct opts {
	int ranks, procs, steps, decides;
	int timeout_ms, start_timeout_ms;
	int stall_rank, stall_step, drop_rank, drop_step;
	int verbose;
} o = { 1024, 4, 50, 2, 10000, 120000, -1, -1, -1, -1, 0 };

static void usage(FILE *f)
{
	fprintf(f,
		"usage: ctrl_sim [-n RANKS] [-s STEPS] [-d DECIDES] [-p PROCS]\n"
		"                [--timeout MS] [--start-timeout MS]\n"
		"                [--stall R@S] [--drop R@S] [-v]\n"
		"  -n, --ranks N        simulated ranks, rank 0 included (1024)\n"
		"  -s, --steps S        exchange steps (50)\n"
		"  -d, --decide D       sd_ctrl_decide steps after them (2)\n"
		"  -p, --procs P        processes holding ranks 1..N-1 (4)\n"
		"  --timeout MS         a step's timeout and budget (10000)\n"
		"  --start-timeout MS   sd_ctrl_start's (120000)\n"
		"  --stall R@S          rank R sends no result in step S\n"
		"  --drop R@S           rank R closes its connection at step S\n"
		"  -v                   the simulated ranks say what they got\n");
}

static int parse_int(const char *s, int lo, int *out)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > 100000000)
		return -1;
	*out = (int)v;
	return 0;
}

static int parse_at(const char *s, int *rank, int *step)
{
	char buf[64];
	sd_strlcpy(buf, s, sizeof(buf));
	char *at = strchr(buf, '@');
	if (!at)
		return -1;
	*at = '\0';
	return parse_int(buf, 1, rank) || parse_int(at + 1, 1, step) ? -1 : 0;
}

/* ------------------------------------------------------------------ */
/* The simulated ranks: one forked process holds ranks [lo, hi).       */

struct sock {
	int fd;
	int rank;
	uint32_t step;  /* the step it is in */
	int state;
	char *buf;
	uint32_t have, cap;
};
enum { S_WAIT_GO, S_STALLED, S_WAIT_FINISH, S_DONE };

struct child {
	int lo, hi, index;
	struct sock *s;
	int left;        /* connections not closed yet */
	int aborted;     /* connections that got rank 0's abort */
	int finished;    /* ... its finish */
	int errors;
};

static int cerr(struct child *ch, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static int cerr(struct child *ch, const char *fmt, ...)
{
	va_list ap;
	char msg[512];
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (ch->errors++ < 5)
		fprintf(stderr, "ctrl_sim: simulated ranks %d-%d: %s\n", ch->lo,
			ch->hi - 1, msg);
	return -1;
}

/* One message, one send(); waits (briefly) when the socket is full. */
static int send_msg(int fd, uint32_t type, int rank, uint32_t seq,
		    const void *pl, uint32_t len)
{
	char buf[sizeof(struct hdr) + 256];
	struct hdr h = { type, (uint32_t)rank, 0, seq, len };
	if (len > 256)
		return -1;
	memcpy(buf, &h, sizeof(h));
	if (len)
		memcpy(buf + sizeof(h), pl, len);
	size_t n = sizeof(h) + len, off = 0;
	while (off < n) {
		ssize_t w = send(fd, buf + off, n - off, MSG_NOSIGNAL);
		if (w > 0) {
			off += (size_t)w;
			continue;
		}
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			struct pollfd pf = { fd, POLLOUT, 0 };
			if (poll(&pf, 1, 10000) <= 0)
				return -1;
			continue;
		}
		return -1;
	}
	return 0;
}

static int is_decide(uint32_t seq)
{
	return seq > (uint32_t)o.steps;
}

static void close_sock(struct child *ch, int ep, struct sock *k)
{
	epoll_ctl(ep, EPOLL_CTL_DEL, k->fd, NULL);
	close(k->fd);
	k->fd = -1;
	k->state = S_DONE;
	free(k->buf);
	k->buf = NULL;
	ch->left--;
}

/* Enter step k->step: progress, then the result (or the planted fault). */
static int begin_step(struct child *ch, int ep, struct sock *k)
{
	uint32_t seq = k->step;
	if (send_msg(k->fd, MSG_PROGRESS, k->rank, seq, NULL, 0))
		return cerr(ch, "rank %d: cannot send its progress in step %u: "
			    "%s", k->rank, seq, strerror(errno));
	if (k->rank == o.drop_rank && seq == (uint32_t)o.drop_step) {
		if (o.verbose)
			fprintf(stderr, "ctrl_sim: rank %d drops its connection "
				"in step %u\n", k->rank, seq);
		close_sock(ch, ep, k);
		return 0;
	}
	if (k->rank == o.stall_rank && seq == (uint32_t)o.stall_step) {
		if (o.verbose)
			fprintf(stderr, "ctrl_sim: rank %d stalls in step %u\n",
				k->rank, seq);
		k->state = S_STALLED;
		return 0;
	}
	char pl[1 + RESULT_LEN] = { 0 }; /* want_stop 0, then the result */
	uint32_t mine[2] = { (uint32_t)k->rank, seq };
	memcpy(pl + 1, mine, RESULT_LEN);
	if (send_msg(k->fd, MSG_RESULT, k->rank, seq, pl,
		     is_decide(seq) ? 1 : 1 + RESULT_LEN))
		return cerr(ch, "rank %d: cannot send its result in step %u: %s",
			    k->rank, seq, strerror(errno));
	k->state = S_WAIT_GO;
	return 0;
}

static void decide_word(uint32_t seq, char *buf, size_t len)
{
	snprintf(buf, len, "decide %u", seq);
}

static int handle(struct child *ch, int ep, struct sock *k,
		  const struct hdr *h, const char *pl)
{
	switch (h->type) {
	case MSG_GO: {
		if (k->state != S_WAIT_GO || h->seq != k->step)
			return cerr(ch, "rank %d: a go for step %u in step %u "
				    "(state %d)", k->rank, h->seq, k->step,
				    k->state);
		if (h->len < 1 || pl[0])
			return cerr(ch, "rank %d: step %u: the go says stop",
				    k->rank, h->seq);
		if (is_decide(h->seq)) {
			char want[32];
			decide_word(h->seq, want, sizeof(want));
			if (h->len != strlen(want) + 2 ||
			    memcmp(pl + 1, want, strlen(want) + 1))
				return cerr(ch, "rank %d: step %u: rank 0 decided "
					    "%u bytes, not '%s'", k->rank,
					    h->seq, h->len - 1, want);
		} else if (h->len != 1) {
			return cerr(ch, "rank %d: step %u: a go of %u bytes",
				    k->rank, h->seq, h->len);
		}
		k->step++;
		if (k->step > (uint32_t)(o.steps + o.decides)) {
			k->state = S_WAIT_FINISH;
			return 0;
		}
		return begin_step(ch, ep, k);
	}
	case MSG_FINISH: {
		uint32_t outcome = 1;
		if (k->state != S_WAIT_FINISH || h->len != 4)
			return cerr(ch, "rank %d: finish in step %u (state %d)",
				    k->rank, k->step, k->state);
		memcpy(&outcome, pl, 4);
		if (outcome != 0)
			return cerr(ch, "rank %d: outcome %u, not 0", k->rank,
				    outcome);
		send_msg(k->fd, MSG_BYE, k->rank, 0, NULL, 0);
		ch->finished++;
		close_sock(ch, ep, k);
		return 0;
	}
	case MSG_ABORT: {
		uint32_t st = 0;
		if (h->len >= 4)
			memcpy(&st, pl, 4);
		if (o.verbose && !ch->aborted)
			fprintf(stderr, "ctrl_sim: rank %d got rank 0's abort "
				"(status %u): %.*s\n", k->rank, st,
				h->len > 4 ? (int)(h->len - 4) : 0,
				h->len > 4 ? pl + 4 : "");
		ch->aborted++;
		close_sock(ch, ep, k);
		return 0;
	}
	default:
		return cerr(ch, "rank %d: unexpected message type %u", k->rank,
			    h->type);
	}
}

/* Read what is there; handle every whole message. */
static int on_readable(struct child *ch, int ep, struct sock *k)
{
	for (;;) {
		if (k->cap - k->have < 64) {
			uint32_t cap = k->cap ? k->cap * 2 : 128;
			char *p = realloc(k->buf, cap);
			if (!p)
				return cerr(ch, "out of memory");
			k->buf = p;
			k->cap = cap;
		}
		ssize_t n = recv(k->fd, k->buf + k->have, k->cap - k->have, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		if (n <= 0) {
			int rank = k->rank;
			uint32_t step = k->step;
			close_sock(ch, ep, k);
			return cerr(ch, "rank %d: rank 0 closed the connection "
				    "in step %u, without a finish or an abort",
				    rank, step);
		}
		k->have += (uint32_t)n;
		uint32_t off = 0;
		while (k->have - off >= sizeof(struct hdr)) {
			struct hdr h;
			memcpy(&h, k->buf + off, sizeof(h));
			if (h.len > (1u << 20))
				return cerr(ch, "rank %d: a message of %u bytes",
					    k->rank, h.len);
			uint32_t total = (uint32_t)sizeof(h) + h.len;
			if (k->have - off < total) {
				if (total + 1 > k->cap) {
					char *p = realloc(k->buf, total + 64);
					if (!p)
						return cerr(ch, "out of memory");
					k->buf = p;
					k->cap = total + 64;
				}
				break;
			}
			if (handle(ch, ep, k, &h, k->buf + off + sizeof(h)))
				return -1;
			if (k->state == S_DONE)
				return 0; /* closed, buffer gone */
			off += total;
		}
		if (off) {
			memmove(k->buf, k->buf + off, k->have - off);
			k->have -= off;
		}
	}
}

static int read_full(int fd, void *buf, size_t len)
{
	char *p = buf;
	while (len) {
		ssize_t n = read(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/*
 * The body of a simulated-ranks process.  Exit status: 0 every
 * connection ended with rank 0's finish (or a planted drop), 3 some with
 * its abort (and no error), 1 an error, 2 no start.
 */
static int child_main(struct child *ch, int endpoint_fd, int ready_fd)
{
	char endpoint[128];
	uint32_t elen;
	if (read_full(endpoint_fd, &elen, 4) || elen >= sizeof(endpoint) ||
	    read_full(endpoint_fd, endpoint, elen))
		return 2; /* rank 0 gave up before its broadcast */
	endpoint[elen] = '\0';
	char *colon = strrchr(endpoint, ':');
	if (!endpoint[0] || !colon) {
		cerr(ch, "no endpoint from rank 0 ('%s')", endpoint);
		return 2;
	}
	*colon = '\0';
	struct sockaddr_in to = { .sin_family = AF_INET,
				  .sin_port = htons((uint16_t)atoi(colon + 1)) };
	if (inet_pton(AF_INET, endpoint, &to.sin_addr) != 1) {
		cerr(ch, "bad endpoint '%s'", endpoint);
		return 2;
	}
	int n = ch->hi - ch->lo;
	ch->s = calloc((size_t)n, sizeof(*ch->s));
	int ep = epoll_create1(EPOLL_CLOEXEC);
	if (!ch->s || ep < 0) {
		cerr(ch, "cannot start: %s", strerror(errno));
		(void)!write(ready_fd, "E", 1);
		return 2;
	}
	char hello[4 + 64];
	uint32_t pid = (uint32_t)getpid();
	int hlen = 4 + snprintf(hello + 4, sizeof(hello) - 4, "simhost%d",
				ch->index + 1) + 1;
	memcpy(hello, &pid, 4);
	int one = 1;
	for (int j = 0; j < n; j++) {
		struct sock *k = &ch->s[j];
		k->rank = ch->lo + j;
		k->step = 1;
		k->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		/* a source address of its own: 127.0.<j/PER_ADDR+1>.<index+2> */
		struct sockaddr_in from = { .sin_family = AF_INET };
		from.sin_addr.s_addr = htonl((127u << 24) |
					     ((uint32_t)(j / PER_ADDR + 1) << 8) |
					     (uint32_t)(ch->index + 2));
		if (k->fd < 0 ||
		    setsockopt(k->fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one,
			       sizeof(one)) ||
		    bind(k->fd, (void *)&from, sizeof(from)) ||
		    connect(k->fd, (void *)&to, sizeof(to))) {
			cerr(ch, "rank %d: cannot connect to rank 0 at %s:%u: "
			     "%s", k->rank, endpoint, ntohs(to.sin_port),
			     strerror(errno));
			(void)!write(ready_fd, "E", 1);
			return 2;
		}
		setsockopt(k->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		if (send_msg(k->fd, MSG_HELLO, k->rank, 0, hello,
			     (uint32_t)hlen)) {
			cerr(ch, "rank %d: cannot say hello: %s", k->rank,
			     strerror(errno));
			(void)!write(ready_fd, "E", 1);
			return 2;
		}
	}
	ch->left = n;
	for (int j = 0; j < n; j++) {
		struct sock *k = &ch->s[j];
		int fl = fcntl(k->fd, F_GETFL);
		struct epoll_event ev = { .events = EPOLLIN, .data.u32 =
						  (uint32_t)j };
		if (fl < 0 || fcntl(k->fd, F_SETFL, fl | O_NONBLOCK) ||
		    epoll_ctl(ep, EPOLL_CTL_ADD, k->fd, &ev)) {
			cerr(ch, "epoll: %s", strerror(errno));
			(void)!write(ready_fd, "E", 1);
			return 2;
		}
	}
	(void)!write(ready_fd, "R", 1);
	close(ready_fd);
	/* every simulated rank enters step 1 */
	for (int j = 0; j < n; j++)
		if (begin_step(ch, ep, &ch->s[j]))
			return 1;
	/* long past any timeout of rank 0's, nobody said anything */
	double idle_limit = 3.0 * o.timeout_ms / 1e3 + 60;
	double last = sd_now();
	struct epoll_event evs[512];
	while (ch->left > 0) {
		int got = epoll_wait(ep, evs, 512, 1000);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			cerr(ch, "epoll_wait: %s", strerror(errno));
			return 1;
		}
		if (got == 0) {
			if (sd_now() - last > idle_limit) {
				cerr(ch, "no word from rank 0 in %.0f s; %d "
				     "connections open", idle_limit, ch->left);
				return 1;
			}
			continue;
		}
		last = sd_now();
		for (int e = 0; e < got; e++) {
			struct sock *k = &ch->s[evs[e].data.u32];
			if (k->state == S_DONE)
				continue;
			/* a connection that went wrong is closed: rank 0
			 * names its rank lost, and the run ends */
			if (on_readable(ch, ep, k) && k->state != S_DONE)
				close_sock(ch, ep, k);
		}
	}
	if (ch->errors)
		return 1;
	return ch->aborted ? 3 : 0;
}

/* ------------------------------------------------------------------ */
/* Rank 0: the real control plane, over a bootstrap of our own.        */

static struct sim {
	int n;             /* processes */
	pid_t *pid;
	int *to;           /* write end: rank 0's broadcast */
	int *ready;        /* read end: 'R' connected, 'E' failed */
	int *status;       /* exit statuses, -1 before */
} sim;

static int sim_bcast(struct sd_bootstrap *bs, void *buf, size_t len,
		     int root)
{
	(void)bs;
	if (root != 0)
		return SD_ERR_BOOTSTRAP;
	uint32_t l = (uint32_t)strnlen(buf, len);
	int rc = SD_OK;
	for (int i = 0; i < sim.n; i++)
		if (write(sim.to[i], &l, 4) != 4 ||
		    write(sim.to[i], buf, l) != (ssize_t)l)
			rc = SD_ERR_BOOTSTRAP;
	return rc;
}

/* Every process has connected its ranks (rank 0 has accepted them all
 * before it calls this). */
static int sim_barrier(struct sd_bootstrap *bs)
{
	(void)bs;
	double deadline = sd_now() + o.start_timeout_ms / 1e3;
	int rc = SD_OK;
	for (int i = 0; i < sim.n; i++) {
		char c = 0;
		struct pollfd pf = { sim.ready[i], POLLIN, 0 };
		int left = (int)((deadline - sd_now()) * 1e3);
		if (left < 0 || poll(&pf, 1, left) <= 0 ||
		    read(sim.ready[i], &c, 1) != 1 || c != 'R')
			rc = SD_ERR_BOOTSTRAP;
	}
	return rc;
}

static int sim_allgather(struct sd_bootstrap *bs, const void *send,
			 void *recv, size_t len)
{
	(void)bs; (void)send; (void)recv; (void)len;
	return SD_ERR_BOOTSTRAP; /* the control plane does not use it */
}

/* Reap the processes within `secs`; kill those still there after.
 * Returns how many did not exit by themselves. */
static int reap(double secs)
{
	double deadline = sd_now() + secs;
	int left;
	do {
		left = 0;
		for (int i = 0; i < sim.n; i++) {
			if (sim.status[i] != -1)
				continue;
			int st;
			pid_t p = waitpid(sim.pid[i], &st, WNOHANG);
			if (p == sim.pid[i])
				sim.status[i] = WIFEXITED(st) ? WEXITSTATUS(st)
							      : 128 + WTERMSIG(st);
			else
				left++;
		}
		if (left)
			usleep(10000);
	} while (left && sd_now() < deadline);
	for (int i = 0; i < sim.n; i++) {
		if (sim.status[i] != -1)
			continue;
		kill(sim.pid[i], SIGKILL);
		waitpid(sim.pid[i], NULL, 0);
		sim.status[i] = 200;
		fprintf(stderr, "ctrl_sim: simulated-ranks process %d (pid %d) "
			"did not leave within %.0f s: killed\n", i,
			(int)sim.pid[i], secs);
	}
	return left;
}

static const char *status_name(int st)
{
	static const char *names[] = {
		"SD_OK", "SD_ERR_INVALID", "SD_ERR_NOMEM", "SD_ERR_BACKEND",
		"SD_ERR_TIMEOUT", "SD_ERR_PEER", "SD_ERR_NODEV",
		"SD_ERR_BOOTSTRAP", "SD_ERR_IO", "SD_ERR_CANCELLED",
	};
	return st >= 0 && st < (int)(sizeof(names) / sizeof(*names))
		       ? names[st] : "SD_ERR_?";
}

/* CAP_SYS_RESOURCE in the effective set (a container's root may lack it). */
static int has_sys_resource(void)
{
	char line[256];
	unsigned long long caps = 0;
	FILE *f = fopen("/proc/self/status", "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &caps) == 1)
			break;
	fclose(f);
	return (int)((caps >> 24) & 1); /* CAP_SYS_RESOURCE is 24 */
}

/* Rank 0 holds a descriptor a rank, each process its share: raise the
 * limit, the hard one too when allowed (root). */
static int raise_nofile(rlim_t need)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl))
		return -1;
	if (rl.rlim_cur >= need)
		return 0;
	struct rlimit want = { need, rl.rlim_max > need ? rl.rlim_max : need };
	if (setrlimit(RLIMIT_NOFILE, &want) == 0)
		return 0;
	int e = errno;
	long nr_open = 0;
	FILE *f = fopen("/proc/sys/fs/nr_open", "r");
	if (f) {
		if (fscanf(f, "%ld", &nr_open) != 1)
			nr_open = 0;
		fclose(f);
	}
	fprintf(stderr, "ctrl_sim: %d ranks need %lu open files at rank 0; the "
		"limit is %lu (hard %lu) and cannot be raised (%s%s): ",
		o.ranks, (unsigned long)need, (unsigned long)rl.rlim_cur,
		(unsigned long)rl.rlim_max, strerror(e),
		e == EPERM && !has_sys_resource()
			? "; raising the hard limit needs CAP_SYS_RESOURCE, "
			  "which this process lacks, even as root" : "");
	if (nr_open && (rlim_t)nr_open < need)
		fprintf(stderr, "fs.nr_open is %ld: raise it (sysctl -w "
			"fs.nr_open=%lu) and the hard limit\n", nr_open,
			(unsigned long)need);
	else
		fprintf(stderr, "run it where `ulimit -Hn` is at least %lu "
			"(ulimit -Hn %lu as a root with CAP_SYS_RESOURCE, nofile "
			"in /etc/security/limits.conf, a container's --ulimit "
			"nofile)\n", (unsigned long)need, (unsigned long)need);
	return -1;
}

static double peak_mib(void)
{
	char line[256];
	double kb = -1;
	FILE *f = fopen("/proc/self/status", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmHWM: %lf", &kb) == 1)
			break;
	fclose(f);
	return kb / 1024;
}

static double cpu_s(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* The q-quantile (nearest rank) of n sorted values. */
static double quantile(const double *v, int n, double q)
{
	int i = (int)(q * n + 0.999999) - 1;
	if (i < 0)
		i = 0;
	if (i >= n)
		i = n - 1;
	return v[i];
}

static void fork_sim(void)
{
	pid_t parent = getpid();
	int lo = 1;
	for (int i = 0; i < sim.n; i++) {
		int hi = 1 + (int)((int64_t)(o.ranks - 1) * (i + 1) / sim.n);
		int a[2], b[2];
		if (pipe2(a, O_CLOEXEC) || pipe2(b, O_CLOEXEC)) {
			perror("ctrl_sim: pipe");
			exit(2);
		}
		fflush(NULL);
		pid_t p = fork();
		if (p < 0) {
			perror("ctrl_sim: fork");
			exit(2);
		}
		if (p == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			if (getppid() != parent)
				_exit(2);
			for (int j = 0; j < i; j++) {
				close(sim.to[j]);
				close(sim.ready[j]);
			}
			close(a[1]);
			close(b[0]);
			struct child ch = { .lo = lo, .hi = hi, .index = i };
			_exit(child_main(&ch, a[0], b[1]));
		}
		close(a[0]);
		close(b[1]);
		sim.pid[i] = p;
		sim.to[i] = a[1];
		sim.ready[i] = b[0];
		sim.status[i] = -1;
		lo = hi;
	}
}

/* The end after a verdict in step seq: who was named, and whether every
 * simulated rank took the abort and left. */
static int after_verdict(struct sd_ctrl *c, uint32_t seq, int rc,
			 const char *err, double secs, int steps_done)
{
	int ranks[16];
	char hosts[16][64], blamed[256] = "";
	int nb = sd_ctrl_blamed(c, ranks, hosts, 16);
	for (int i = 0; i < nb; i++) {
		size_t u = strlen(blamed);
		snprintf(blamed + u, sizeof(blamed) - u, "%s%d", i ? "," : "",
			 ranks[i]);
	}
	fprintf(stderr, "ctrl_sim: verdict in step %u (%s): %s\n", seq,
		status_name(rc), err);
	int outcome = 1;
	sd_ctrl_finish(c, &outcome); /* nothing to send after a verdict */
	reap(3.0 * o.timeout_ms / 1e3 + 30);
	int bad = 0, aborted = 0;
	for (int i = 0; i < sim.n; i++) {
		if (sim.status[i] == 3)
			aborted++;
		else if (sim.status[i] != 0)
			bad++;
	}
	sd_ctrl_destroy(c);
	printf("ranks=%d procs=%d steps=%d result=verdict status=%s at_step=%u "
	       "verdict_s=%.2f steps_done=%d blamed=%s sim_aborted=%d "
	       "sim_failed=%d rank0_peak_mib=%.1f\n", o.ranks, sim.n, o.steps,
	       status_name(rc), seq, secs, steps_done, nb ? blamed : "none",
	       aborted, bad, peak_mib());
	if (bad) {
		fprintf(stderr, "ctrl_sim: %d simulated-ranks processes did not "
			"take the abort cleanly\n", bad);
		return 1;
	}
	return 3;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "ranks", required_argument, NULL, 'n' },
		{ "steps", required_argument, NULL, 's' },
		{ "decide", required_argument, NULL, 'd' },
		{ "procs", required_argument, NULL, 'p' },
		{ "timeout", required_argument, NULL, 't' },
		{ "start-timeout", required_argument, NULL, 'T' },
		{ "stall", required_argument, NULL, 'S' },
		{ "drop", required_argument, NULL, 'D' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int opt;
	while ((opt = getopt_long(argc, argv, "n:s:d:p:vh", lo, NULL)) != -1) {
		int bad = 0;
		switch (opt) {
		case 'n': bad = parse_int(optarg, 2, &o.ranks); break;
		case 's': bad = parse_int(optarg, 1, &o.steps); break;
		case 'd': bad = parse_int(optarg, 0, &o.decides); break;
		case 'p': bad = parse_int(optarg, 1, &o.procs); break;
		case 't': bad = parse_int(optarg, 1, &o.timeout_ms); break;
		case 'T': bad = parse_int(optarg, 1, &o.start_timeout_ms); break;
		case 'S': bad = parse_at(optarg, &o.stall_rank, &o.stall_step);
			  break;
		case 'D': bad = parse_at(optarg, &o.drop_rank, &o.drop_step);
			  break;
		case 'v': o.verbose = 1; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
		if (bad) {
			fprintf(stderr, "ctrl_sim: bad value '%s'\n", optarg);
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		usage(stderr);
		return 2;
	}
	int last = o.steps + o.decides;
	if ((o.stall_rank >= o.ranks || o.drop_rank >= o.ranks) ||
	    o.stall_step > last || o.drop_step > last) {
		fprintf(stderr, "ctrl_sim: a fault's rank must be in 1..%d and "
			"its step in 1..%d\n", o.ranks - 1, last);
		return 2;
	}
	sim.n = o.procs < o.ranks - 1 ? o.procs : o.ranks - 1;
	signal(SIGPIPE, SIG_IGN);
	rlim_t need = (rlim_t)o.ranks + 64;
	if (raise_nofile(need))
		return 2;

	sim.pid = calloc((size_t)sim.n, sizeof(*sim.pid));
	sim.to = calloc((size_t)sim.n, sizeof(int));
	sim.ready = calloc((size_t)sim.n, sizeof(int));
	sim.status = calloc((size_t)sim.n, sizeof(int));
	uint32_t *all = malloc((size_t)o.ranks * RESULT_LEN);
	double *ms = malloc((size_t)(o.steps + o.decides) * sizeof(double));
	if (!sim.pid || !sim.to || !sim.ready || !sim.status || !all || !ms) {
		fprintf(stderr, "ctrl_sim: out of memory\n");
		return 2;
	}
	fork_sim();

	struct sd_bootstrap bs = {
		.rank = 0, .size = o.ranks, .local_rank = 0,
		.local_size = o.ranks, .host = "simhost0", .ctx = &sim,
		.allgather = sim_allgather, .bcast = sim_bcast,
		.barrier = sim_barrier,
	};
	struct sd_ctrl *c = NULL;
	char err[2048];
	double t = sd_now();
	int rc = sd_ctrl_start(&bs, o.start_timeout_ms, &c, err, sizeof(err));
	double start_s = sd_now() - t;
	if (rc) {
		fprintf(stderr, "ctrl_sim: sd_ctrl_start (%d ranks): %s: %s\n",
			o.ranks, status_name(rc), err);
		for (int i = 0; i < sim.n; i++)
			if (sim.status[i] == -1)
				kill(sim.pid[i], SIGKILL);
		reap(10);
		return 1;
	}

	int failed = 0;
	double cpu0 = cpu_s();
	for (int seq = 1; seq <= o.steps; seq++) {
		char what[32];
		int stop = 1;
		uint32_t mine[2] = { 0, (uint32_t)seq };
		snprintf(what, sizeof(what), "step %d", seq);
		memset(all, 0xff, (size_t)o.ranks * RESULT_LEN);
		t = sd_now();
		rc = sd_ctrl_progress(c, 0, (uint32_t)seq, o.timeout_ms,
				      o.timeout_ms, what, err, sizeof(err));
		if (!rc)
			rc = sd_ctrl_exchange(c, 0, (uint32_t)seq, mine,
					      RESULT_LEN, all, 0, &stop, err,
					      sizeof(err));
		ms[seq - 1] = (sd_now() - t) * 1e3;
		if (rc)
			return after_verdict(c, (uint32_t)seq, rc, err,
					     sd_now() - t, seq - 1);
		if (stop && !failed++)
			fprintf(stderr, "ctrl_sim: step %d: the ranks stop, "
				"though none asked to\n", seq);
		int wrong = 0, first = -1;
		for (int r = 0; r < o.ranks; r++)
			if (all[2 * r] != (uint32_t)r ||
			    all[2 * r + 1] != (uint32_t)seq) {
				if (first < 0)
					first = r;
				wrong++;
			}
		if (wrong && failed++ < 5)
			fprintf(stderr, "ctrl_sim: step %d: %d ranks' results "
				"wrong; rank %d's is %u/%u, not %d/%d\n", seq,
				wrong, first, all[2 * first],
				all[2 * first + 1], first, seq);
	}
	double cpu_ms = (cpu_s() - cpu0) * 1e3 / o.steps;
	for (int seq = o.steps + 1; seq <= last; seq++) {
		char what[32], word[32];
		void *got = NULL;
		size_t gotlen = 0;
		snprintf(what, sizeof(what), "decision %d", seq);
		decide_word((uint32_t)seq, word, sizeof(word));
		t = sd_now();
		rc = sd_ctrl_progress(c, 0, (uint32_t)seq, o.timeout_ms,
				      o.timeout_ms, what, err, sizeof(err));
		if (!rc)
			rc = sd_ctrl_decide(c, 0, (uint32_t)seq, word,
					    strlen(word) + 1, &got, &gotlen, err,
					    sizeof(err));
		ms[seq - 1] = (sd_now() - t) * 1e3;
		if (rc)
			return after_verdict(c, (uint32_t)seq, rc, err,
					     sd_now() - t, seq - 1);
		if (gotlen != strlen(word) + 1 || memcmp(got, word, gotlen)) {
			if (failed++ < 5)
				fprintf(stderr, "ctrl_sim: step %d: rank 0's "
					"decision came back wrong\n", seq);
		}
		free(got);
	}
	rc = sd_ctrl_quiesce(c);
	if (rc) {
		const char *vm = NULL;
		sd_ctrl_verdict(c, &vm);
		return after_verdict(c, (uint32_t)last, rc, vm ? vm : "", 0,
				     last);
	}
	int outcome = 0;
	t = sd_now();
	rc = sd_ctrl_finish(c, &outcome);
	if (rc && failed++ < 5)
		fprintf(stderr, "ctrl_sim: sd_ctrl_finish: %s\n",
			status_name(rc));
	reap(3.0 * o.timeout_ms / 1e3 + 30);
	double finish_s = sd_now() - t;
	for (int i = 0; i < sim.n; i++)
		if (sim.status[i] != 0 && failed++ < 5)
			fprintf(stderr, "ctrl_sim: simulated-ranks process %d "
				"exited with status %d\n", i, sim.status[i]);
	sd_ctrl_destroy(c);

	/* step 1 follows the start-up (every rank's first result at once):
	 * on its own; the figures are of the steps after */
	int n = o.steps > 1 ? o.steps - 1 : 1;
	double *v = o.steps > 1 ? ms + 1 : ms;
	double dmax = 0;
	for (int seq = o.steps + 1; seq <= last; seq++)
		if (ms[seq - 1] > dmax)
			dmax = ms[seq - 1];
	double step1 = ms[0];
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	printf("ranks=%d procs=%d steps=%d start_s=%.2f step1_ms=%.2f "
	       "step_ms_median=%.2f step_ms_p95=%.2f step_ms_max=%.2f "
	       "decide_ms_max=%.2f rank0_cpu_ms_per_step=%.2f "
	       "rank0_peak_mib=%.1f finish_s=%.2f result=%s\n", o.ranks, sim.n,
	       o.steps, start_s, step1, quantile(v, n, 0.5),
	       quantile(v, n, 0.95), v[n - 1], dmax, cpu_ms, peak_mib(),
	       finish_s, failed ? "wrong" : "ok");
	free(all);
	free(ms);
	return failed ? 1 : 0;
}
