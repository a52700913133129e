/*
 * drain.c - drain the bad nodes (see drain.h).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "drain.h"
#include "util.h"

/* Run argv, its stdout and stderr into out (the tail that fits); the exit
 * status, or -1 when it could not run (out says why). */
static int run_capture(char *const argv[], char *out, size_t len)
{
	int fd[2];
	out[0] = '\0';
	if (pipe(fd)) {
		snprintf(out, len, "pipe: %s", strerror(errno));
		return -1;
	}
	pid_t pid = fork();
	if (pid < 0) {
		snprintf(out, len, "fork: %s", strerror(errno));
		close(fd[0]);
		close(fd[1]);
		return -1;
	}
	if (pid == 0) {
		dup2(fd[1], STDOUT_FILENO);
		dup2(fd[1], STDERR_FILENO);
		close(fd[0]);
		close(fd[1]);
		execvp(argv[0], argv);
		fprintf(stderr, "cannot run %s: %s", argv[0], strerror(errno));
		_exit(127);
	}
	close(fd[1]);
	size_t used = 0;
	char buf[512];
	ssize_t n;
	while ((n = read(fd[0], buf, sizeof(buf))) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		for (ssize_t i = 0; i < n && used + 1 < len; i++)
			out[used++] = buf[i] == '\n' ? ' ' : buf[i];
	}
	out[used] = '\0';
	close(fd[0]);
	int st;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int sd_drain_bad_nodes(const struct sd_blame *b, int nhosts,
		       const char *const *names, const char *uuid)
{
	const char *scontrol = getenv("SHAKEDOWN_SCONTROL");
	unsigned char *bad = calloc((size_t)(nhosts > 0 ? nhosts : 1), 1);
	int n = 0, failed = 0;
	const struct sd_suspect *sus = sd_blame_suspects(b, &n);
	if (!bad) {
		fprintf(stderr, "shakedown: --drain: out of memory; nothing "
			"drained\n");
		return nhosts;
	}
	if (!scontrol || !*scontrol)
		scontrol = "scontrol";
	sd_blame_bad_hosts(b, bad);
	for (int h = 0; h < nhosts; h++) {
		if (!bad[h])
			continue;
		const char *why = "failed its checks";
		for (int i = 0; i < n; i++)
			if (sus[i].host == h &&
			    (sus[i].kind == SD_SUSPECT_NODE ||
			     sus[i].kind == SD_SUSPECT_LINK)) {
				why = sus[i].reason;
				break;
			}
		char node[300], reason[300], out[1024];
		snprintf(node, sizeof(node), "NodeName=%s", names[h]);
		/* Slurm keeps a reason short: the run names the rest */
		snprintf(reason, sizeof(reason), "Reason=shakedown %s: %.200s",
			 uuid, why);
		for (char *c = reason; *c; c++)
			if (*c == '"' || *c == '\n')
				*c = '\'';
		char *argv[] = { (char *)scontrol, "update", node,
				 "State=DRAIN", reason, NULL };
		int st = run_capture(argv, out, sizeof(out));
		if (st == 0) {
			fprintf(stderr, "shakedown: drained %s (%s)\n",
				names[h], reason + 7);
			continue;
		}
		failed++;
		fprintf(stderr, "shakedown: could not drain %s: %s%s%s; the "
			"results are recorded; as a Slurm operator run: "
			"scontrol update %s State=DRAIN \"%s\"\n", names[h],
			st < 0 ? "" : scontrol, st < 0 ? "" : " said: ",
			out[0] ? out : "no reason given", node, reason);
	}
	free(bad);
	return failed;
}
