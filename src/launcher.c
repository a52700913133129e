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

static void describe_exit(int rank, pid_t pid, int status, char *buf,
			  size_t len)
{
	if (WIFSIGNALED(status))
		snprintf(buf, len, "rank %d (pid %ld) was killed by signal %d "
			 "(%s)", rank, (long)pid, WTERMSIG(status),
			 strsignal(WTERMSIG(status)));
	else
		snprintf(buf, len, "rank %d (pid %ld) exited with status %d",
			 rank, (long)pid, WEXITSTATUS(status));
}

int sd_local_launch(int n, int timeout_ms, int (*child_main)(void *arg),
		    void *arg)
{
	struct child *kids = calloc((size_t)n, sizeof(*kids));
	if (!kids) {
		fprintf(stderr, "shakedown: out of memory\n");
		return SD_EXIT_ENV;
	}
	fflush(stdout);
	fflush(stderr);
	pid_t launcher = getpid();
	if (pipe2(chld_pipe, O_CLOEXEC | O_NONBLOCK) != 0) {
		fprintf(stderr, "shakedown: pipe: %s\n", strerror(errno));
		free(kids);
		return SD_EXIT_ENV;
	}
	struct sigaction sc = { .sa_handler = on_child,
				.sa_flags = SA_RESTART | SA_NOCLDSTOP };
	sigemptyset(&sc.sa_mask);
	sigaction(SIGCHLD, &sc, NULL);
	for (int r = 0; r < n; r++) {
		int sv[2];
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)) {
			fprintf(stderr, "shakedown: socketpair: %s\n",
				strerror(errno));
			n = r;
			launcher_signal = SIGTERM;
			break;
		}
		pid_t pid = fork();
		if (pid == 0) {
			/* child: keep only our end; die with the launcher */
			prctl(PR_SET_PDEATHSIG, SIGTERM);
			if (getppid() != launcher)
				_exit(SD_EXIT_CANCELLED);
			signal(SIGCHLD, SIG_DFL);
			close(chld_pipe[0]);
			close(chld_pipe[1]);
			chld_pipe[0] = chld_pipe[1] = -1;
			for (int s = 0; s < r; s++)
				close(kids[s].fd);
			close(sv[0]);
			int fd = dup(sv[1]); /* without CLOEXEC */
			char v[32];
			snprintf(v, sizeof(v), "%d", fd);
			setenv("SHAKEDOWN_LOCAL_FD", v, 1);
			snprintf(v, sizeof(v), "%d", r);
			setenv("SHAKEDOWN_LOCAL_RANK", v, 1);
			snprintf(v, sizeof(v), "%d", n);
			setenv("SHAKEDOWN_LOCAL_SIZE", v, 1);
			close(sv[1]);
			int status = child_main(arg);
			fflush(stdout);
			fflush(stderr);
			/* a rank leaves through _exit() (not the launcher's
			 * atexit work): under ASan, check its leaks first */
			leak_check();
			_exit(status);
		}
		close(sv[1]);
		if (pid < 0) {
			fprintf(stderr, "shakedown: fork: %s\n", strerror(errno));
			close(sv[0]);
			n = r;
			launcher_signal = SIGTERM;
			break;
		}
		kids[r].pid = pid;
		kids[r].fd = sv[0];
	}

	struct sigaction sa = { .sa_handler = on_launcher_signal };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);

	int alive = n, lost = 0, forwarded = 0, contributed = 0;
	double round_start = 0, kill_at = 0;
	char why[300] = "";
	while (alive > 0) {
		struct pollfd pfd[n + 1];
		for (int r = 0; r < n; r++) {
			pfd[r].fd = kids[r].contributed ? -1 : kids[r].fd;
			pfd[r].events = POLLIN;
			pfd[r].revents = 0;
		}
		pfd[n] = (struct pollfd){ .fd = chld_pipe[0], .events = POLLIN };
		/* woken by a rank's data, a rank's exit or a signal; else
		 * at the nearest deadline below (the rendezvous round's
		 * timeout, the kill after a grace), or never */
		double next = 0;
		if (contributed > 0 && timeout_ms > 0)
			next = round_start + timeout_ms / 1e3;
		if (kill_at && (!next || kill_at < next))
			next = kill_at;
		int wait_ms = -1;
		if (launcher_signal && !forwarded)
			wait_ms = 0; /* set before the loop: act on it now */
		else if (next) {
			double ms = (next - sd_now()) * 1e3 + 1;
			wait_ms = ms < 0 ? 0 : ms > 3600e3 ? 3600000 : (int)ms;
		}
		int ready = poll(pfd, (nfds_t)n + 1, wait_ms);
		if (ready > 0 && (pfd[n].revents & POLLIN)) {
			char drain[64];
			while (read(chld_pipe[0], drain, sizeof(drain)) > 0)
				;
			ready--;
		}
		for (int r = 0; ready > 0 && r < n; r++) {
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
			if (contributed++ == 0)
				round_start = sd_now();
		}
		if (contributed == n) {
			reply_all(kids, n);
			contributed = 0;
		}

		/* children that ended */
		pid_t pid;
		int status;
		while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
			for (int r = 0; r < n; r++) {
				if (kids[r].pid != pid)
					continue;
				kids[r].done = 1;
				kids[r].status = status;
				alive--;
				if (kids[r].fd >= 0 && !kids[r].contributed) {
					close(kids[r].fd);
					kids[r].fd = -1;
				}
				int clean = WIFEXITED(status) &&
					    (WEXITSTATUS(status) == 0 ||
					     forwarded);
				if (!clean && !lost) {
					lost = WIFSIGNALED(status);
					describe_exit(r, pid, status, why,
						      sizeof(why));
					if (lost)
						fprintf(stderr, "shakedown: %s\n",
							why);
					/* let the others notice and report */
					kill_at = sd_now() + 3;
				}
			}
		}
		/* a round that can no longer complete, or waits too long */
		if (contributed > 0) {
			int missing = -1;
			for (int r = 0; r < n; r++)
				if (!kids[r].contributed && kids[r].done)
					missing = r;
			if (missing >= 0) {
				char msg[400];
				snprintf(msg, sizeof(msg), "%s before the "
					 "rendezvous completed", why[0] ? why :
					 "a rank ended");
				reply_error(kids, n, msg);
				contributed = 0;
			} else if (timeout_ms > 0 &&
				   sd_now() - round_start > timeout_ms / 1e3) {
				char msg[400], list[200] = "";
				for (int r = 0; r < n; r++)
					if (!kids[r].contributed) {
						size_t u = strlen(list);
						snprintf(list + u,
							 sizeof(list) - u,
							 "%s%d", u ? "," : "",
							 r);
					}
				snprintf(msg, sizeof(msg), "rank %s did not "
					 "reach the rendezvous within %.0f s",
					 list, timeout_ms / 1e3);
				reply_error(kids, n, msg);
				contributed = 0;
				if (!kill_at)
					kill_at = sd_now() + 3;
			}
		}
		if (launcher_signal && !forwarded) {
			for (int r = 0; r < n; r++)
				if (!kids[r].done)
					kill(kids[r].pid, launcher_signal);
			forwarded = 1;
			kill_at = sd_now() + 10;
		}
		if (kill_at && sd_now() > kill_at) {
			for (int r = 0; r < n; r++)
				if (!kids[r].done)
					kill(kids[r].pid, SIGKILL);
			kill_at = sd_now() + 3600;
		}
	}

	/* The ranks agree on their exit status (the control plane hands
	 * rank 0's to all).  When they do not, a rank was lost: the run ends
	 * with 4, and the ranks that left with another status than the 4 of
	 * the survivors are named (those killed by a signal already were). */
	int rc = n > 0 && WIFEXITED(kids[0].status) ? WEXITSTATUS(kids[0].status)
						    : SD_EXIT_TIMEOUT;
	int agreed = 1;
	for (int r = 0; r < n; r++)
		if (!WIFEXITED(kids[r].status) ||
		    (int)WEXITSTATUS(kids[r].status) != rc)
			agreed = 0;
	if (!agreed) {
		for (int r = 0; r < n; r++) {
			int st = kids[r].status;
			if (WIFSIGNALED(st) || WEXITSTATUS(st) == SD_EXIT_TIMEOUT)
				continue;
			describe_exit(r, kids[r].pid, st, why, sizeof(why));
			fprintf(stderr, "shakedown: %s\n", why);
		}
		if (rc != SD_EXIT_CANCELLED)
			rc = SD_EXIT_TIMEOUT;
	}
	for (int r = 0; r < n; r++) {
		if (kids[r].fd >= 0)
			close(kids[r].fd);
		free(kids[r].data);
	}
	free(kids);
	signal(SIGCHLD, SIG_DFL);
	close(chld_pipe[0]);
	close(chld_pipe[1]);
	chld_pipe[0] = chld_pipe[1] = -1;
	return rc;
}
