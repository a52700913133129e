/*
 * launcher.c - `--local N`: fork N ranks of this command on this host and
 * supervise them.
 *
 * Each child holds one end of a socketpair (lib/bootstrap_local.c is its
 * side).  The launcher relays every collective: when all N contributions
 * have arrived it sends every rank all of them.  It also supervises: when a
 * child dies, or a round waits longer than the timeout, it answers the
 * waiting ranks with an error naming the rank, stops the rest (SIGTERM,
 * then SIGKILL after a grace period) and returns the exit status for the
 * run.  SIGTERM and SIGINT sent to the launcher are forwarded to the ranks.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bootstrap.h"
#include "launcher.h"
#include "tool.h"
#include "topo.h"
#include "util.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
/* LeakSanitizer runs at exit(), which a rank's _exit() skips. */
static void leak_check(void)
{
	__lsan_do_leak_check();
}
#else
static void leak_check(void)
{
}
#endif

static volatile sig_atomic_t launcher_signal;

/* A child's exit or a signal wakes the launcher's poll at once (the
 * self-pipe trick), so that the poll waits for an event or the nearest
 * deadline and nothing else: a periodic tick woke the machine ten times a
 * second through every run, and the end of a run waited up to a tick. */
static int chld_pipe[2] = { -1, -1 };

static void wake_launcher(void)
{
	int saved = errno;
	if (chld_pipe[1] >= 0 && write(chld_pipe[1], "c", 1) < 0) {
		/* full: a wake-up is already pending */
	}
	errno = saved;
}

static void on_child(int sig)
{
	(void)sig;
	wake_launcher();
}

static void on_launcher_signal(int sig)
{
	launcher_signal = sig;
	wake_launcher();
}

struct child {
	pid_t pid;
	int fd;
	int done;         /* reaped */
	int status;       /* wait status */
	int contributed;  /* in this round */
	uint64_t len;
	char *data;
};

static void reply_error(struct child *kids, int n, const char *msg)
{
	uint64_t marker = SD_LOCAL_REPLY_ERROR, len = strlen(msg);
	for (int r = 0; r < n; r++) {
		if (kids[r].fd < 0 || !kids[r].contributed)
			continue;
		if (sd_send_full(kids[r].fd, &marker, sizeof(marker)) == 0 &&
		    sd_send_full(kids[r].fd, &len, sizeof(len)) == 0)
			(void)sd_send_full(kids[r].fd, msg, len);
		kids[r].contributed = 0;
		free(kids[r].data);
		kids[r].data = NULL;
	}
}

static void reply_all(struct child *kids, int n)
{
	uint64_t lens[n];
	for (int r = 0; r < n; r++)
		lens[r] = kids[r].len;
	for (int r = 0; r < n; r++) {
		if (kids[r].fd < 0)
			continue;
		int bad = sd_send_full(kids[r].fd, lens, sizeof(lens));
		for (int s = 0; s < n && !bad; s++)
			bad = sd_send_full(kids[r].fd, kids[s].data, kids[s].len);
		(void)bad; /* a rank that went away is noticed by waitpid */
	}
	for (int r = 0; r < n; r++) {
		free(kids[r].data);
		kids[r].data = NULL;
		kids[r].contributed = 0;
	}
}

/* The OOM killer's count (sd_topo_oom_kills) when the ranks started. */
static uint64_t oom_base;
static int oom_kind;

/* Whether a rank's SIGKILL was the kernel's OOM killer: the count of this
 * process's memory cgroup (which the ranks inherit) went up; *kills: by
 * how much. */
static int oom_killed(int status, uint64_t *kills)
{
	uint64_t now;
	if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL || !oom_kind ||
	    sd_topo_oom_kills("", &now) != oom_kind || now <= oom_base)
		return 0;
	*kills = now - oom_base;
	return 1;
}

static void describe_exit(int rank, pid_t pid, int status, char *buf,
			  size_t len)
{
	uint64_t kills;
	char host[256] = "this host";
	if (oom_killed(status, &kills)) {
		if (gethostname(host, sizeof(host) - 1) != 0)
			snprintf(host, sizeof(host), "this host");
		snprintf(buf, len, "rank %d (pid %ld) was killed by the "
			 "kernel's OOM killer on %s (%s %llu OOM kill%s during "
			 "the run): it ran out of memory, and %s is not blamed",
			 rank, (long)pid, host,
			 oom_kind == 1 ? "its memory cgroup counted"
				       : "the host counted",
			 (unsigned long long)kills, kills == 1 ? "" : "s",
			 host);
	} else if (WIFSIGNALED(status))
		snprintf(buf, len, "rank %d (pid %ld) was killed by signal %d "
			 "(%s)", rank, (long)pid, WTERMSIG(status),
			 strsignal(WTERMSIG(status)));
	else
		snprintf(buf, len, "rank %d (pid %ld) exited with status %d",
			 rank, (long)pid, WEXITSTATUS(status));
}

/* What the launcher supervises: the ranks and the rendezvous round. */
struct launch {
	struct child *kids;
	int n;                 /* ranks started */
	int timeout_ms;        /* a round's bound; 0: none */
	int alive, lost, forwarded, contributed;
	int oom;               /* a rank was the OOM killer's victim */
	double round_start;    /* when the round's first rank arrived */
	double kill_at;        /* when the ranks left are killed; 0: never */
	double record_at;      /* after another rank was lost, when rank 0
				* (which records the run) is killed; 0: with
				* the others at kill_at */
	char why[300];         /* the first rank that ended badly */
};

/* In the child of rank r: keep only its end of the socketpair sv, die
 * with the launcher, and run child_main with the rank's environment. */
static void child_start(struct launch *l, int r, int sv[2], pid_t launcher,
			int (*child_main)(void *arg), void *arg)
{
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (getppid() != launcher)
		_exit(SD_EXIT_CANCELLED);
	signal(SIGCHLD, SIG_DFL);
	close(chld_pipe[0]);
	close(chld_pipe[1]);
	chld_pipe[0] = chld_pipe[1] = -1;
	for (int s = 0; s < r; s++)
		close(l->kids[s].fd);
	close(sv[0]);
	int fd = dup(sv[1]); /* without CLOEXEC */
	char v[32];
	snprintf(v, sizeof(v), "%d", fd);
	setenv("SHAKEDOWN_LOCAL_FD", v, 1);
	snprintf(v, sizeof(v), "%d", r);
	setenv("SHAKEDOWN_LOCAL_RANK", v, 1);
	snprintf(v, sizeof(v), "%d", l->n);
	setenv("SHAKEDOWN_LOCAL_SIZE", v, 1);
	close(sv[1]);
	int status = child_main(arg);
	fflush(stdout);
	fflush(stderr);
	/* a rank leaves through _exit() (not the launcher's atexit work):
	 * under ASan, check its leaks first */
	leak_check();
	_exit(status);
}

/* Fork the ranks, each with its socketpair.  One that cannot be started
 * ends the starting: l->n becomes the ranks started, and they are
 * stopped (as if the launcher had been sent SIGTERM). */
static void start_ranks(struct launch *l, int (*child_main)(void *arg),
			void *arg)
{
	pid_t launcher = getpid();
	for (int r = 0; r < l->n; r++) {
		int sv[2];
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)) {
			fprintf(stderr, "shakedown: socketpair: %s\n",
				strerror(errno));
			l->n = r;
			launcher_signal = SIGTERM;
			return;
		}
		pid_t pid = fork();
		if (pid == 0)
			child_start(l, r, sv, launcher, child_main, arg);
		close(sv[1]);
		if (pid < 0) {
			fprintf(stderr, "shakedown: fork: %s\n", strerror(errno));
			close(sv[0]);
			l->n = r;
			launcher_signal = SIGTERM;
			return;
		}
		l->kids[r].pid = pid;
		l->kids[r].fd = sv[0];
	}
}

/* How long the poll may wait: until a rank's data, a rank's exit or a
 * signal wakes it, else the nearest deadline (the rendezvous round's
 * timeout, the kill after a grace), or forever (-1). */
static int wait_ms(const struct launch *l)
{
	double next = 0;
	if (l->contributed > 0 && l->timeout_ms > 0)
		next = l->round_start + l->timeout_ms / 1e3;
	if (l->kill_at && (!next || l->kill_at < next))
		next = l->kill_at;
	if (l->record_at && (!next || l->record_at < next))
		next = l->record_at;
	if (launcher_signal && !l->forwarded)
		return 0; /* set before the loop: act on it now */
	if (!next)
		return -1;
	double ms = (next - sd_now()) * 1e3 + 1;
	return ms < 0 ? 0 : ms > 3600e3 ? 3600000 : (int)ms;
}

/* Read what the ranks that poll found ready sent for this round; a rank
 * whose socket fails is left to waitpid. */
static void take_contributions(struct launch *l, struct pollfd *pfd,
			       int ready)
{
	struct child *kids = l->kids;
	for (int r = 0; ready > 0 && r < l->n; r++) {
		if (!(pfd[r].revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		uint64_t len;
		if (sd_recv_full(kids[r].fd, &len, sizeof(len)) ||
		    len > (1u << 30) ||
		    !(kids[r].data = malloc(len ? len : 1)) ||
		    sd_recv_full(kids[r].fd, kids[r].data, len)) {
			free(kids[r].data);
			kids[r].data = NULL;
			close(kids[r].fd);
			kids[r].fd = -1; /* its exit is seen below */
			continue;
		}
		kids[r].len = len;
		kids[r].contributed = 1;
		if (l->contributed++ == 0)
			l->round_start = sd_now();
	}
	if (l->contributed == l->n) {
		reply_all(kids, l->n);
		l->contributed = 0;
	}
}

/* The ranks that ended: the first that ended badly is said (at once when
 * a signal killed it) and the others get a grace to notice and report. */
static void reap_ranks(struct launch *l)
{
	pid_t pid;
	int status;
	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		for (int r = 0; r < l->n; r++) {
			struct child *k = &l->kids[r];
			if (k->pid != pid)
				continue;
			k->done = 1;
			k->status = status;
			l->alive--;
			if (k->fd >= 0 && !k->contributed) {
				close(k->fd);
				k->fd = -1;
			}
			int clean = WIFEXITED(status) &&
				    (WEXITSTATUS(status) == 0 || l->forwarded);
			uint64_t kills;
			if (!clean && oom_killed(status, &kills))
				l->oom = 1;
			if (!clean && !l->lost) {
				l->lost = WIFSIGNALED(status);
				describe_exit(r, pid, status, l->why,
					      sizeof(l->why));
				if (l->lost)
					fprintf(stderr, "shakedown: %s\n",
						l->why);
				l->kill_at = sd_now() + 3;
				/* rank 0 names the lost rank and records the
				 * run: on a loaded host that can take longer
				 * than the others' grace, so it has the
				 * round's bound (at least 10 s) */
				if (r != 0 && !l->kids[0].done &&
				    !launcher_signal)
					l->record_at = sd_now() +
						(l->timeout_ms > 10000
							 ? l->timeout_ms / 1e3
							 : 10);
			}
		}
	}
}

/* A round that can no longer complete (a rank in it ended), or that
 * waits too long: its ranks are answered with the error. */
static void check_round(struct launch *l)
{
	struct child *kids = l->kids;
	if (l->contributed == 0)
		return;
	int missing = -1;
	for (int r = 0; r < l->n; r++)
		if (!kids[r].contributed && kids[r].done)
			missing = r;
	char msg[400];
	if (missing >= 0) {
		snprintf(msg, sizeof(msg), "%s before the rendezvous "
			 "completed", l->why[0] ? l->why : "a rank ended");
		reply_error(kids, l->n, msg);
		l->contributed = 0;
	} else if (l->timeout_ms > 0 &&
		   sd_now() - l->round_start > l->timeout_ms / 1e3) {
		char list[200] = "";
		for (int r = 0; r < l->n; r++)
			if (!kids[r].contributed) {
				size_t u = strlen(list);
				snprintf(list + u, sizeof(list) - u, "%s%d",
					 u ? "," : "", r);
			}
		snprintf(msg, sizeof(msg), "rank %s did not reach the "
			 "rendezvous within %.0f s", list, l->timeout_ms / 1e3);
		reply_error(kids, l->n, msg);
		l->contributed = 0;
		if (!l->kill_at)
			l->kill_at = sd_now() + 3;
	}
}

/* A signal the launcher got goes to every rank left (then SIGKILL after
 * 10 s); past kill_at, every rank left is killed but rank 0 while it has
 * until record_at to record a lost rank. */
static void stop_ranks(struct launch *l)
{
	if (launcher_signal && !l->forwarded) {
		for (int r = 0; r < l->n; r++)
			if (!l->kids[r].done)
				kill(l->kids[r].pid, launcher_signal);
		l->forwarded = 1;
		l->kill_at = sd_now() + 10;
		l->record_at = 0;
	}
	double now = sd_now();
	if (l->kill_at && now > l->kill_at) {
		for (int r = 0; r < l->n; r++)
			if (!l->kids[r].done &&
			    (r != 0 || !l->record_at || l->forwarded))
				kill(l->kids[r].pid, SIGKILL);
		l->kill_at = now + 3600;
	}
	if (l->record_at && now > l->record_at) {
		if (!l->kids[0].done)
			kill(l->kids[0].pid, SIGKILL);
		l->record_at = 0;
	}
}

/* Relay rounds and watch the ranks until every one has ended. */
static void supervise(struct launch *l)
{
	int n = l->n;
	while (l->alive > 0) {
		struct pollfd pfd[n + 1];
		for (int r = 0; r < n; r++) {
			pfd[r].fd = l->kids[r].contributed ? -1 : l->kids[r].fd;
			pfd[r].events = POLLIN;
			pfd[r].revents = 0;
		}
		pfd[n] = (struct pollfd){ .fd = chld_pipe[0], .events = POLLIN };
		int ready = poll(pfd, (nfds_t)n + 1, wait_ms(l));
		if (ready > 0 && (pfd[n].revents & POLLIN)) {
			char drain[64];
			while (read(chld_pipe[0], drain, sizeof(drain)) > 0)
				;
			ready--;
		}
		take_contributions(l, pfd, ready);
		reap_ranks(l);
		check_round(l);
		stop_ranks(l);
	}
}

/* The ranks agree on their exit status (the control plane hands rank 0's
 * to all).  When they do not, a rank was lost: the run ends with 4, and
 * the ranks that left with another status than the 4 of the survivors are
 * named (those killed by a signal already were). */
static int end_status(struct launch *l)
{
	struct child *kids = l->kids;
	int n = l->n;
	int rc = n > 0 && WIFEXITED(kids[0].status) ? WEXITSTATUS(kids[0].status)
						    : SD_EXIT_TIMEOUT;
	int agreed = 1;
	for (int r = 0; r < n; r++)
		if (!WIFEXITED(kids[r].status) ||
		    (int)WEXITSTATUS(kids[r].status) != rc)
			agreed = 0;
	if (agreed)
		return rc;
	for (int r = 0; r < n; r++) {
		int st = kids[r].status;
		if (WIFSIGNALED(st) || WEXITSTATUS(st) == SD_EXIT_TIMEOUT)
			continue;
		describe_exit(r, kids[r].pid, st, l->why, sizeof(l->why));
		fprintf(stderr, "shakedown: %s\n", l->why);
	}
	/* the OOM killer's victim ran out of memory: the environment's error,
	 * as the memory check's refusal, not a lost node's */
	if (l->oom && rc != SD_EXIT_CANCELLED)
		return SD_EXIT_ENV;
	return rc != SD_EXIT_CANCELLED ? SD_EXIT_TIMEOUT : rc;
}

int sd_local_launch(int n, int timeout_ms, int (*child_main)(void *arg),
		    void *arg)
{
	struct launch l = { .n = n, .timeout_ms = timeout_ms };
	if (!(l.kids = calloc((size_t)n, sizeof(*l.kids)))) {
		fprintf(stderr, "shakedown: out of memory\n");
		return SD_EXIT_ENV;
	}
	fflush(stdout);
	fflush(stderr);
	if (pipe2(chld_pipe, O_CLOEXEC | O_NONBLOCK) != 0) {
		fprintf(stderr, "shakedown: pipe: %s\n", strerror(errno));
		free(l.kids);
		return SD_EXIT_ENV;
	}
	struct sigaction sc = { .sa_handler = on_child,
				.sa_flags = SA_RESTART | SA_NOCLDSTOP };
	sigemptyset(&sc.sa_mask);
	sigaction(SIGCHLD, &sc, NULL);
	oom_kind = sd_topo_oom_kills("", &oom_base);
	start_ranks(&l, child_main, arg);

	struct sigaction sa = { .sa_handler = on_launcher_signal };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	l.alive = l.n;
	supervise(&l);

	int rc = end_status(&l);
	for (int r = 0; r < l.n; r++) {
		if (l.kids[r].fd >= 0)
			close(l.kids[r].fd);
		free(l.kids[r].data);
	}
	free(l.kids);
	signal(SIGCHLD, SIG_DFL);
	close(chld_pipe[0]);
	close(chld_pipe[1]);
	chld_pipe[0] = chld_pipe[1] = -1;
	return rc;
}
