/*
 * ctrl_sim.c - the control plane (lib/ctrl.c) at scale, on one machine.
 *
 * Rank 0 is the real code: this process makes its own struct sd_bootstrap
 * (rank 0 of N, every rank local, so the control plane listens on
 * 127.0.0.1) and calls sd_ctrl_start, then per step sd_ctrl_progress and
 * sd_ctrl_exchange (8 bytes a rank: its rank and the step, checked for
 * every rank), then a few sd_ctrl_decide steps, then sd_ctrl_quiesce,
 * sd_ctrl_finish and sd_ctrl_destroy.  Ranks 1..N-1 are simulated by a few
 * forked processes, each holding its share of them in nodes of --per-node
 * K consecutive ranks (8; the last node of a process may be smaller, and
 * no node spans two processes).  A node is its leader's one TCP
 * connection to rank 0, carrying every rank of the node as lib/ctrl.c's
 * leader relays them: the hellos of all its ranks (the leader's first:
 * the first hello says whose connection it is; host "simnodeX") in one
 * write, then in each step the progress and result of every rank in one
 * write; rank 0's one go a connection advances the whole node, its one
 * finish has every rank say bye before the leader closes, and its one
 * abort is taken by every rank of the node.  With K = 1 every rank has a
 * connection of its own and sends each message in a write of its own, as
 * a rank that reaches rank 0 directly does.  The simulated ranks speak
 * the wire protocol themselves (ctrl.c's: a 20-byte header in host byte
 * order, then the payload) with epoll and a read buffer per connection.
 * Each simulated node answers rank 0's go of one step with the progress
 * and results of the next, as real ranks do.
 *
 * With --adaptive K the decision steps are the rounds of an adaptive
 * pairing (lib/schedule.h, scope node-pairs:adaptive:K) of the simulated
 * nodes (the hosts: ranks / per-node, rounded up), one host planted bad
 * (host 1: every pair it is in fails), worked out by rank 0's real driver
 * before the ranks start: each round's word is its host_group, an int32
 * a host, as lib/runner.c decides it, and the simulated nodes check it
 * byte for byte.  The line then says the hosts, the rounds, the bytes a
 * decision carries to each connection and the driver's time per round
 * (sd_adaptive_next with the previous round's sd_adaptive_outcome).
 *
 * Faults: --stall R@S (rank R sends no result in step S; the rest of its
 * node does, and the connection stays open) and --drop R@S (rank R leaves
 * at step S: when R is its node's leader, the node's connection closes;
 * otherwise the leader sends LOST for R, and nothing of R after): rank
 * 0's verdict must name rank R; the simulated ranks take the abort and
 * leave.  Each planted fault is said on stderr when it happens.
 *
 * Prints one line: ranks, steps, ranks a node (per_node), connections
 * to rank 0 (conns), the time of an exchange step (from
 * sd_ctrl_progress to the end of sd_ctrl_exchange) as median, p95 and max,
 * rank 0's CPU time per step (this process: on a small machine the wall
 * time includes the simulated ranks' own work), its peak memory (VmHWM;
 * the simulated ranks are other processes) and the start-up time.
 * Exit 0: every result arrived right; 3: a verdict (its message on
 * stderr); 1: a check failed, or sd_ctrl_start did (e.g. rank 0 ran out
 * of open files: a limit too low to raise is said, and the run goes on
 * for rank 0 to tell); 2: usage or set-up.
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
#include "plan.h"
#include "schedule.h"
#include "shakedown/backend.h"
#include "util.h"

#ifndef IP_BIND_ADDRESS_NO_PORT
#define IP_BIND_ADDRESS_NO_PORT 24
#endif

/* The wire format of lib/ctrl.c. */
enum {
	MSG_HELLO = 1, MSG_PROGRESS, MSG_RESULT, MSG_FAIL, MSG_BYE, MSG_GO,
	MSG_ABORT, MSG_FINISH, MSG_LOST,
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
	int per_node;
	int verbose;
	int adaptive;             /* K of node-pairs:adaptive:K; -1: none */
} o = { 1024, 4, 50, 2, 10000, 120000, -1, -1, -1, -1, 8, 0, -1 };

/* --adaptive: the rounds' words, worked out before the ranks fork
 * (rounds x hosts int32), and the driver's slowest round */
static struct {
	int hosts, rounds;
	int32_t *words;
	double drive_ms_max, drive_ms_sum;
} ad;

static void usage(FILE *f)
{
	fprintf(f,
		"usage: ctrl_sim [-n RANKS] [-s STEPS] [-d DECIDES] [-p PROCS]\n"
		"                [--per-node K] [--timeout MS] [--start-timeout MS]\n"
		"                [--stall R@S] [--drop R@S] [--adaptive K] [-v]\n"
		"  -n, --ranks N        simulated ranks, rank 0 included (1024)\n"
		"  -s, --steps S        exchange steps (50)\n"
		"  -d, --decide D       sd_ctrl_decide steps after them (2)\n"
		"  -p, --procs P        processes holding ranks 1..N-1 (4)\n"
		"  -k, --per-node K     ranks a simulated node: its leader's one\n"
		"                       connection carries them all (8; 1: one\n"
		"                       connection a rank)\n"
		"  --timeout MS         a step's timeout and budget (10000)\n"
		"  --start-timeout MS   sd_ctrl_start's (120000)\n"
		"  --stall R@S          rank R sends no result in step S\n"
		"  --drop R@S           rank R leaves at step S: a leader closes\n"
		"                       its node's connection, another rank's\n"
		"                       leader sends LOST for it\n"
		"  --adaptive K         the decisions are node-pairs:adaptive:K's\n"
		"                       rounds over the simulated nodes, host 1\n"
		"                       planted bad (-d is then their count)\n"
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
/* The simulated ranks: one forked process holds ranks [lo, hi), in    */
/* nodes of --per-node consecutive ranks, a connection to rank 0 each. */

/* A simulated node: its leader's one connection to rank 0, which carries
 * the messages of every rank of the node (the leader's own first), as
 * lib/ctrl.c's relay passes them on: each with its sending rank in the
 * header, several in one write.  Rank 0 answers with one go, abort or
 * finish per connection, which the leader would hand down to every rank
 * of its node: they all advance together. */
struct node {
	int fd;
	int lo, hi;     /* its ranks; lo is the leader */
	int id;         /* simnode<id> */
	uint32_t step;  /* the step its ranks are in */
	int state;
	int stalled;    /* a rank sent no result in this step */
	int gone;       /* a rank (not the leader) that left: LOST sent */
	char *buf;
	uint32_t have, cap;
};
enum { S_WAIT_GO, S_WAIT_FINISH, S_DONE };

struct child {
	int lo, hi, index;
	int node_base;   /* the id of its first node */
	struct node *s;
	int nnodes;
	int left;        /* connections not closed yet */
	int aborted;     /* ranks that took rank 0's abort */
	int finished;    /* ... its finish */
	int errors;
	char *out;       /* messages of one node, to go in one write */
	size_t out_len, out_cap;
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

/* All of buf on fd; waits (briefly) when the socket is full. */
static int send_all(int fd, const char *buf, size_t n)
{
	size_t off = 0;
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

/* What is queued goes to the node's connection, in one write. */
static int flush_out(struct child *ch, struct node *nd)
{
	int rc = ch->out_len ? send_all(nd->fd, ch->out, ch->out_len) : 0;
	ch->out_len = 0;
	return rc;
}

/* Queue one message of rank `rank` for the node's connection.  With one
 * rank a node (a rank that reaches rank 0 itself) every message goes at
 * once, in a write of its own, as a real rank sends it. */
static int put_msg(struct child *ch, struct node *nd, uint32_t type, int rank,
		   uint32_t seq, const void *pl, uint32_t len)
{
	struct hdr h = { type, (uint32_t)rank, 0, seq, len };
	size_t need = ch->out_len + sizeof(h) + len;
	if (need > ch->out_cap) {
		size_t cap = ch->out_cap ? ch->out_cap : 1024;
		while (cap < need)
			cap *= 2;
		char *p = realloc(ch->out, cap);
		if (!p)
			return -1;
		ch->out = p;
		ch->out_cap = cap;
	}
	memcpy(ch->out + ch->out_len, &h, sizeof(h));
	if (len)
		memcpy(ch->out + ch->out_len + sizeof(h), pl, len);
	ch->out_len = need;
	return o.per_node == 1 ? flush_out(ch, nd) : 0;
}

static int is_decide(uint32_t seq)
{
	return seq > (uint32_t)o.steps;
}

/* The ranks of the node still there. */
static int live_ranks(const struct node *nd)
{
	return nd->hi - nd->lo - (nd->gone ? 1 : 0);
}

static void close_node(struct child *ch, int ep, struct node *nd)
{
	epoll_ctl(ep, EPOLL_CTL_DEL, nd->fd, NULL);
	close(nd->fd);
	nd->fd = -1;
	nd->state = S_DONE;
	free(nd->buf);
	nd->buf = NULL;
	ch->left--;
}

/* Every rank of the node enters step nd->step: progress, then its result
 * (or the planted fault), all in one write. */
static int begin_step(struct child *ch, int ep, struct node *nd)
{
	uint32_t seq = nd->step;
	nd->stalled = 0;
	ch->out_len = 0;
	for (int r = nd->lo; r < nd->hi; r++) {
		if (r == nd->gone)
			continue;
		if (put_msg(ch, nd, MSG_PROGRESS, r, seq, NULL, 0))
			goto lost;
		if (r == o.drop_rank && seq == (uint32_t)o.drop_step) {
			if (r == nd->lo) {
				/* the leader dies: its node's connection
				 * closes, with what it had not sent yet */
				if (nd->hi - nd->lo > 1)
					fprintf(stderr, "ctrl_sim: rank %d, the "
						"leader of simnode%d (ranks "
						"%d-%d), drops its connection "
						"in step %u\n", r, nd->id,
						nd->lo, nd->hi - 1, seq);
				else
					fprintf(stderr, "ctrl_sim: rank %d "
						"(simnode%d, alone) drops its "
						"connection in step %u\n", r,
						nd->id, seq);
				ch->out_len = 0;
				close_node(ch, ep, nd);
				return 0;
			}
			/* a rank of the node leaves its leader: the leader
			 * says so, and passes nothing of it on after */
			fprintf(stderr, "ctrl_sim: rank %d leaves the leader of "
				"simnode%d (rank %d) in step %u: LOST\n", r,
				nd->id, nd->lo, seq);
			nd->gone = r;
			if (put_msg(ch, nd, MSG_LOST, r, 0, NULL, 0))
				goto lost;
			continue;
		}
		if (r == o.stall_rank && seq == (uint32_t)o.stall_step) {
			fprintf(stderr, "ctrl_sim: rank %d (simnode%d) sends no "
				"result in step %u\n", r, nd->id, seq);
			nd->stalled = 1;
			continue;
		}
		char pl[1 + RESULT_LEN] = { 0 }; /* want_stop 0, the result */
		uint32_t mine[2] = { (uint32_t)r, seq };
		memcpy(pl + 1, mine, RESULT_LEN);
		if (put_msg(ch, nd, MSG_RESULT, r, seq, pl,
			    is_decide(seq) ? 1 : 1 + RESULT_LEN))
			goto lost;
	}
	if (flush_out(ch, nd))
		goto lost;
	nd->state = S_WAIT_GO;
	return 0;
lost:
	ch->out_len = 0;
	return cerr(ch, "simnode%d (ranks %d-%d): cannot send step %u: %s",
		    nd->id, nd->lo, nd->hi - 1, seq, strerror(errno));
}

/* Rank 0's decision in step seq, *len its bytes: a text, or with
 * --adaptive that round's host_group (buf: room for the text). */
static const void *decide_word(uint32_t seq, char *buf, size_t buflen,
			       size_t *len)
{
	if (o.adaptive >= 0) {
		*len = (size_t)ad.hosts * sizeof(int32_t);
		return ad.words +
		       (size_t)(seq - (uint32_t)o.steps - 1) * (size_t)ad.hosts;
	}
	snprintf(buf, buflen, "decide %u", seq);
	*len = strlen(buf) + 1;
	return buf;
}

/* --adaptive: drive the pairing to its end, keeping each round's word
 * and timing the driver.  0, or -1 out of memory. */
static int adaptive_rounds(void)
{
	ad.hosts = (o.ranks + o.per_node - 1) / o.per_node;
	struct sd_adaptive_cfg cfg = { .nhosts = ad.hosts, .more = o.adaptive,
				       .seed = 42, .retries = 2 };
	int most = sd_adaptive_max_rounds(o.adaptive, 2);
	struct sd_adaptive *a = sd_adaptive_new(&cfg);
	int *group = malloc((size_t)ad.hosts * sizeof(int));
	int *rp = malloc((size_t)ad.hosts * sizeof(int));
	unsigned char *failed = NULL;
	ad.words = malloc((size_t)most * (size_t)ad.hosts * sizeof(int32_t));
	if (!a || !group || !rp || !ad.words)
		goto oom;
	for (;;) {
		double t = sd_now();
		int n = sd_adaptive_next(a, group, rp);
		if (n < 0)
			goto oom;
		if (n == 0)
			break;
		int np;
		const struct sd_adaptive_pair *p = sd_adaptive_pairs(a, &np);
		unsigned char *f = realloc(failed, (size_t)np);
		if (!f)
			goto oom;
		failed = f;
		for (int i = 0; i < np; i++)
			failed[i] = p[i].a == 1 || p[i].b == 1;
		sd_adaptive_outcome(a, failed);
		double ms = (sd_now() - t) * 1e3;
		ad.drive_ms_sum += ms;
		if (ms > ad.drive_ms_max)
			ad.drive_ms_max = ms;
		for (int h = 0; h < ad.hosts; h++)
			ad.words[(size_t)ad.rounds * (size_t)ad.hosts +
				 (size_t)h] = group[h];
		ad.rounds++;
	}
	o.decides = ad.rounds;
	sd_adaptive_free(a);
	free(group);
	free(rp);
	free(failed);
	return 0;
oom:
	sd_adaptive_free(a);
	free(group);
	free(rp);
	free(failed);
	return -1;
}

/* One message from rank 0 on the node's connection: what every rank of
 * the node gets (its leader hands it down). */
static int handle(struct child *ch, int ep, struct node *nd,
		  const struct hdr *h, const char *pl)
{
	switch (h->type) {
	case MSG_GO: {
		if (nd->state != S_WAIT_GO || h->seq != nd->step ||
		    nd->stalled)
			return cerr(ch, "simnode%d: a go for step %u in step %u "
				    "(state %d%s)", nd->id, h->seq, nd->step,
				    nd->state, nd->stalled ? ", a rank of it "
				    "sent no result" : "");
		if (h->len < 1 || pl[0])
			return cerr(ch, "simnode%d: step %u: the go says stop",
				    nd->id, h->seq);
		if (is_decide(h->seq)) {
			char buf[32];
			size_t wl;
			const void *want = decide_word(h->seq, buf, sizeof(buf),
						       &wl);
			if (h->len != wl + 1 || memcmp(pl + 1, want, wl))
				return cerr(ch, "simnode%d: step %u: rank 0 "
					    "decided %u bytes, not the %zu of "
					    "its word", nd->id, h->seq,
					    h->len - 1, wl);
		} else if (h->len != 1) {
			return cerr(ch, "simnode%d: step %u: a go of %u bytes",
				    nd->id, h->seq, h->len);
		}
		nd->step++;
		if (nd->step > (uint32_t)(o.steps + o.decides)) {
			nd->state = S_WAIT_FINISH;
			return 0;
		}
		return begin_step(ch, ep, nd);
	}
	case MSG_FINISH: {
		uint32_t outcome = 1;
		if (nd->state != S_WAIT_FINISH || h->len != 4)
			return cerr(ch, "simnode%d: finish in step %u (state %d)",
				    nd->id, nd->step, nd->state);
		memcpy(&outcome, pl, 4);
		if (outcome != 0)
			return cerr(ch, "simnode%d: outcome %u, not 0", nd->id,
				    outcome);
		/* every rank says bye, then the leader closes */
		ch->out_len = 0;
		for (int r = nd->lo; r < nd->hi; r++)
			if (r != nd->gone)
				put_msg(ch, nd, MSG_BYE, r, 0, NULL, 0);
		flush_out(ch, nd);
		ch->finished += live_ranks(nd);
		close_node(ch, ep, nd);
		return 0;
	}
	case MSG_ABORT: {
		uint32_t st = 0;
		if (h->len >= 4)
			memcpy(&st, pl, 4);
		if (o.verbose && !ch->aborted)
			fprintf(stderr, "ctrl_sim: simnode%d (ranks %d-%d) got "
				"rank 0's abort (status %u): %.*s\n", nd->id,
				nd->lo, nd->hi - 1, st,
				h->len > 4 ? (int)(h->len - 4) : 0,
				h->len > 4 ? pl + 4 : "");
		ch->aborted += live_ranks(nd); /* every rank of it took it */
		close_node(ch, ep, nd);
		return 0;
	}
	default:
		return cerr(ch, "simnode%d: unexpected message type %u", nd->id,
			    h->type);
	}
}

/* Read what is there; handle every whole message. */
static int on_readable(struct child *ch, int ep, struct node *nd)
{
	for (;;) {
		if (nd->cap - nd->have < 64) {
			uint32_t cap = nd->cap ? nd->cap * 2 : 128;
			char *p = realloc(nd->buf, cap);
			if (!p)
				return cerr(ch, "out of memory");
			nd->buf = p;
			nd->cap = cap;
		}
		ssize_t n = recv(nd->fd, nd->buf + nd->have, nd->cap - nd->have,
				 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		if (n <= 0) {
			int id = nd->id;
			uint32_t step = nd->step;
			close_node(ch, ep, nd);
			return cerr(ch, "simnode%d: rank 0 closed the connection "
				    "in step %u, without a finish or an abort",
				    id, step);
		}
		nd->have += (uint32_t)n;
		uint32_t off = 0;
		while (nd->have - off >= sizeof(struct hdr)) {
			struct hdr h;
			memcpy(&h, nd->buf + off, sizeof(h));
			if (h.len > (1u << 20))
				return cerr(ch, "simnode%d: a message of %u "
					    "bytes", nd->id, h.len);
			uint32_t total = (uint32_t)sizeof(h) + h.len;
			if (nd->have - off < total) {
				if (total + 1 > nd->cap) {
					char *p = realloc(nd->buf, total + 64);
					if (!p)
						return cerr(ch, "out of memory");
					nd->buf = p;
					nd->cap = total + 64;
				}
				break;
			}
			if (handle(ch, ep, nd, &h, nd->buf + off + sizeof(h)))
				return -1;
			if (nd->state == S_DONE)
				return 0; /* closed, buffer gone */
			off += total;
		}
		if (off) {
			memmove(nd->buf, nd->buf + off, nd->have - off);
			nd->have -= off;
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

/* The nodes of ranks [lo, hi): K consecutive ranks each, the last one
 * smaller when K does not divide them. */
static int nodes_of(int lo, int hi)
{
	return (hi - lo + o.per_node - 1) / o.per_node;
}

/*
 * The body of a simulated-ranks process.  Exit status: 0 every
 * connection ended with rank 0's finish (or a planted drop), 3 some with
 * its abort (and no error), 1 an error, 2 no start.
 */
static int child_main(struct child *ch, int endpoint_fd, int ready_fd)
{
	/* rank 0's broadcast: "IP:PORT HOST", HOST being rank 0's host,
	 * whose ranks reach it directly (no simulated rank is there) */
	uint32_t elen;
	char *endpoint;
	if (read_full(endpoint_fd, &elen, 4) || elen > (1u << 16) ||
	    !(endpoint = malloc(elen + 1)) ||
	    read_full(endpoint_fd, endpoint, elen))
		return 2; /* rank 0 gave up before its broadcast */
	endpoint[elen] = '\0'; /* it is NUL-terminated within, too */
	char *sp = strchr(endpoint, ' ');
	if (sp)
		*sp = '\0';
	char *colon = strrchr(endpoint, ':');
	if (!endpoint[0] || !colon) {
		cerr(ch, "no endpoint from rank 0 ('%s')", endpoint);
		(void)!write(ready_fd, "E", 1);
		return 2;
	}
	*colon = '\0';
	char *end;
	long port = strtol(colon + 1, &end, 10);
	struct sockaddr_in to = { .sin_family = AF_INET,
				  .sin_port = htons((uint16_t)port) };
	if (*end || port <= 0 || port > 65535 ||
	    inet_pton(AF_INET, endpoint, &to.sin_addr) != 1) {
		cerr(ch, "bad endpoint '%s:%s'", endpoint, colon + 1);
		(void)!write(ready_fd, "E", 1);
		return 2;
	}
	int n = nodes_of(ch->lo, ch->hi);
	ch->nnodes = n;
	ch->s = calloc((size_t)n, sizeof(*ch->s));
	int ep = epoll_create1(EPOLL_CLOEXEC);
	if (!ch->s || ep < 0) {
		cerr(ch, "cannot start: %s", strerror(errno));
		(void)!write(ready_fd, "E", 1);
		return 2;
	}
	uint32_t pid = (uint32_t)getpid();
	int one = 1;
	for (int j = 0; j < n; j++) {
		struct node *nd = &ch->s[j];
		nd->lo = ch->lo + j * o.per_node;
		nd->hi = nd->lo + o.per_node < ch->hi ? nd->lo + o.per_node
						      : ch->hi;
		nd->id = ch->node_base + j;
		nd->step = 1;
		nd->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		/* a source address of its own: 127.0.<j/PER_ADDR+1>.<index+2> */
		struct sockaddr_in from = { .sin_family = AF_INET };
		from.sin_addr.s_addr = htonl((127u << 24) |
					     ((uint32_t)(j / PER_ADDR + 1) << 8) |
					     (uint32_t)(ch->index + 2));
		if (nd->fd < 0 ||
		    setsockopt(nd->fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one,
			       sizeof(one)) ||
		    bind(nd->fd, (void *)&from, sizeof(from)) ||
		    connect(nd->fd, (void *)&to, sizeof(to))) {
			int e = errno;
			struct rlimit rl = { 0, 0 };
			getrlimit(RLIMIT_NOFILE, &rl);
			cerr(ch, "simnode%d (rank %d): cannot connect to rank 0 "
			     "at %s:%u: %s%s (connection %d of %d; this "
			     "process may open %llu files)", nd->id, nd->lo,
			     endpoint, ntohs(to.sin_port), strerror(e),
			     e == EMFILE ? " here, not at rank 0" : "", j + 1,
			     n, (unsigned long long)rl.rlim_cur);
			(void)!write(ready_fd, "E", 1);
			return 2;
		}
		setsockopt(nd->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		/* the hellos of every rank of the node, the leader's first,
		 * in one write: the first says whose connection it is */
		char hello[4 + 64];
		int hlen = 4 + snprintf(hello + 4, sizeof(hello) - 4,
					"simnode%d", nd->id) + 1;
		memcpy(hello, &pid, 4);
		ch->out_len = 0;
		int bad = 0;
		for (int r = nd->lo; r < nd->hi && !bad; r++)
			bad = put_msg(ch, nd, MSG_HELLO, r, 0, hello,
				      (uint32_t)hlen);
		if (bad || flush_out(ch, nd)) {
			cerr(ch, "simnode%d (rank %d): cannot say hello: %s",
			     nd->id, nd->lo, strerror(errno));
			(void)!write(ready_fd, "E", 1);
			return 2;
		}
	}
	ch->left = n;
	for (int j = 0; j < n; j++) {
		struct node *nd = &ch->s[j];
		int fl = fcntl(nd->fd, F_GETFL);
		struct epoll_event ev = { .events = EPOLLIN, .data.u32 =
						  (uint32_t)j };
		if (fl < 0 || fcntl(nd->fd, F_SETFL, fl | O_NONBLOCK) ||
		    epoll_ctl(ep, EPOLL_CTL_ADD, nd->fd, &ev)) {
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
			struct node *nd = &ch->s[evs[e].data.u32];
			if (nd->state == S_DONE)
				continue;
			/* a connection that went wrong is closed: rank 0
			 * names its leader lost, and the run ends */
			if (on_readable(ch, ep, nd) && nd->state != S_DONE)
				close_node(ch, ep, nd);
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
	int conns;         /* connections to rank 0 (nodes) */
} sim;

/* rank 0's `len` bytes (its endpoint, "IP:PORT HOST" in 192 bytes) go
 * whole to every process, as a real bcast copies them to every rank */
static int sim_bcast(struct sd_bootstrap *bs, void *buf, size_t len,
		     int root)
{
	(void)bs;
	if (root != 0 || len > (1u << 16))
		return SD_ERR_BOOTSTRAP;
	uint32_t l = (uint32_t)len;
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

/* Rank 0 holds a descriptor a connection (a node's, or a rank's with
 * --per-node 1), each process its share: raise the limit, the hard one
 * too when allowed (root with CAP_SYS_RESOURCE).  When it cannot be
 * raised far enough, say so and go on with what there is (the soft limit
 * at the hard one): rank 0 is the one to find out, and what it says when
 * it runs out is what a real job would see. */
static void raise_nofile(rlim_t need)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur >= need)
		return;
	struct rlimit want = { need, rl.rlim_max > need ? rl.rlim_max : need };
	if (setrlimit(RLIMIT_NOFILE, &want) == 0)
		return;
	int e = errno;
	struct rlimit most = { rl.rlim_max, rl.rlim_max };
	if (setrlimit(RLIMIT_NOFILE, &most) == 0)
		rl.rlim_cur = rl.rlim_max;
	long nr_open = 0;
	FILE *f = fopen("/proc/sys/fs/nr_open", "r");
	if (f) {
		if (fscanf(f, "%ld", &nr_open) != 1)
			nr_open = 0;
		fclose(f);
	}
	fprintf(stderr, "ctrl_sim: %d ranks, %d a node, need %lu open files "
		"at rank 0; the limit is %lu (hard %lu) and cannot be raised "
		"(%s%s): going on, for rank 0 to tell; ",
		o.ranks, o.per_node, (unsigned long)need,
		(unsigned long)rl.rlim_cur, (unsigned long)rl.rlim_max,
		strerror(e), e == EPERM && !has_sys_resource()
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
			"nofile), or with more ranks a node (--per-node)\n",
			(unsigned long)need, (unsigned long)need);
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

/* The first rank process i holds (i = sim.n: one past the last). */
static int proc_lo(int i)
{
	return 1 + (int)((int64_t)(o.ranks - 1) * i / sim.n);
}

/* The connections to rank 0: the nodes of every process (a node never
 * spans two). */
static int count_conns(void)
{
	int n = 0;
	for (int i = 0; i < sim.n; i++)
		n += nodes_of(proc_lo(i), proc_lo(i + 1));
	return n;
}

static void fork_sim(void)
{
	pid_t parent = getpid();
	int lo = 1, node_base = 1; /* simnode0 is rank 0's */
	for (int i = 0; i < sim.n; i++) {
		int hi = proc_lo(i + 1);
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
			struct child ch = { .lo = lo, .hi = hi, .index = i,
					    .node_base = node_base };
			_exit(child_main(&ch, a[0], b[1]));
		}
		close(a[0]);
		close(b[1]);
		sim.pid[i] = p;
		sim.to[i] = a[1];
		sim.ready[i] = b[0];
		sim.status[i] = -1;
		node_base += nodes_of(lo, hi);
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
	printf("ranks=%d procs=%d steps=%d per_node=%d conns=%d result=verdict "
	       "status=%s at_step=%u verdict_s=%.2f steps_done=%d blamed=%s "
	       "sim_aborted=%d sim_failed=%d rank0_peak_mib=%.1f\n", o.ranks,
	       sim.n, o.steps, o.per_node, sim.conns, status_name(rc), seq,
	       secs, steps_done, nb ? blamed : "none", aborted, bad,
	       peak_mib());
	if (bad) {
		fprintf(stderr, "ctrl_sim: %d simulated-ranks processes did not "
			"take the abort cleanly\n", bad);
		return 1;
	}
	return 3;
}

/* after_verdict's answer, with the buffers of main() let go first */
#define RETURN_AFTER_VERDICT(...) \
	do { \
		free(all); \
		free(ms); \
		return after_verdict(__VA_ARGS__); \
	} while (0)

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "ranks", required_argument, NULL, 'n' },
		{ "steps", required_argument, NULL, 's' },
		{ "decide", required_argument, NULL, 'd' },
		{ "procs", required_argument, NULL, 'p' },
		{ "per-node", required_argument, NULL, 'k' },
		{ "timeout", required_argument, NULL, 't' },
		{ "start-timeout", required_argument, NULL, 'T' },
		{ "stall", required_argument, NULL, 'S' },
		{ "drop", required_argument, NULL, 'D' },
		{ "adaptive", required_argument, NULL, 'A' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int opt;
	while ((opt = getopt_long(argc, argv, "n:s:d:p:k:vh", lo, NULL)) != -1) {
		int bad = 0;
		switch (opt) {
		case 'n': bad = parse_int(optarg, 2, &o.ranks); break;
		case 's': bad = parse_int(optarg, 1, &o.steps); break;
		case 'd': bad = parse_int(optarg, 0, &o.decides); break;
		case 'p': bad = parse_int(optarg, 1, &o.procs); break;
		case 'k': bad = parse_int(optarg, 1, &o.per_node); break;
		case 't': bad = parse_int(optarg, 1, &o.timeout_ms); break;
		case 'T': bad = parse_int(optarg, 1, &o.start_timeout_ms); break;
		case 'S': bad = parse_at(optarg, &o.stall_rank, &o.stall_step);
			  break;
		case 'D': bad = parse_at(optarg, &o.drop_rank, &o.drop_step);
			  break;
		case 'A': bad = parse_int(optarg, 0, &o.adaptive) ||
				o.adaptive > SD_ADAPTIVE_MAX_MORE;
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
	if (o.adaptive >= 0 && adaptive_rounds()) {
		fprintf(stderr, "ctrl_sim: out of memory\n");
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
	sim.conns = count_conns();
	signal(SIGPIPE, SIG_IGN);
	/* rank 0's descriptors: a connection a node, and its spare ones */
	raise_nofile((rlim_t)sim.conns + 64);

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
		.local_size = o.ranks, .host = "simnode0", .ctx = &sim,
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
			RETURN_AFTER_VERDICT(c, (uint32_t)seq, rc, err,
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
		char what[32], buf[32];
		void *got = NULL;
		size_t gotlen = 0, wl;
		snprintf(what, sizeof(what), "decision %d", seq);
		const void *word = decide_word((uint32_t)seq, buf, sizeof(buf),
					       &wl);
		t = sd_now();
		rc = sd_ctrl_progress(c, 0, (uint32_t)seq, o.timeout_ms,
				      o.timeout_ms, what, err, sizeof(err));
		if (!rc)
			rc = sd_ctrl_decide(c, 0, (uint32_t)seq, word, wl, &got,
					    &gotlen, err, sizeof(err));
		ms[seq - 1] = (sd_now() - t) * 1e3;
		if (rc)
			RETURN_AFTER_VERDICT(c, (uint32_t)seq, rc, err,
					     sd_now() - t, seq - 1);
		if (gotlen != wl || memcmp(got, word, gotlen)) {
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
		RETURN_AFTER_VERDICT(c, (uint32_t)last, rc, vm ? vm : "", 0,
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
	printf("ranks=%d procs=%d steps=%d per_node=%d conns=%d start_s=%.2f "
	       "step1_ms=%.2f step_ms_median=%.2f step_ms_p95=%.2f "
	       "step_ms_max=%.2f decide_ms_max=%.2f rank0_cpu_ms_per_step=%.2f "
	       "rank0_peak_mib=%.1f finish_s=%.2f ", o.ranks, sim.n,
	       o.steps, o.per_node, sim.conns, start_s, step1,
	       quantile(v, n, 0.5),
	       quantile(v, n, 0.95), v[n - 1], dmax, cpu_ms, peak_mib(),
	       finish_s);
	if (o.adaptive >= 0)
		printf("adaptive=%d hosts=%d rounds=%d decide_bytes=%zu "
		       "drive_ms_max=%.2f drive_ms_mean=%.2f ", o.adaptive,
		       ad.hosts, ad.rounds, (size_t)ad.hosts * sizeof(int32_t),
		       ad.drive_ms_max, ad.drive_ms_sum / ad.rounds);
	printf("result=%s\n", failed ? "wrong" : "ok");
	free(all);
	free(ms);
	return failed ? 1 : 0;
}
