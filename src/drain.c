/*
 * drain.c - drain the bad nodes (see drain.h).
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "drain.h"
#include "hostlist.h"
#include "shakedown/backend.h"
#include "util.h"

/* Run argv with a time limit, its stdout and stderr into out (the tail
 * that fits); the exit status, or -1 when it could not run or was stopped
 * at the limit (out says why). */
static int run_capture(char *const argv[], int limit_s, char *out,
		       size_t len)
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
		alarm((unsigned)limit_s); /* SIGALRM ends a hung scontrol */
		execvp(argv[0], argv);
		static const char msg[] = "cannot run it";
		ssize_t w = write(STDERR_FILENO, msg, sizeof(msg) - 1);
		(void)w;
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
	int st = 0;
	pid_t w;
	while ((w = waitpid(pid, &st, 0)) < 0 && errno == EINTR)
		;
	if (w < 0) {
		snprintf(out, len, "waitpid: %s", strerror(errno));
		return -1;
	}
	if (WIFSIGNALED(st) && WTERMSIG(st) == SIGALRM) {
		snprintf(out, len, "no answer within %d s", limit_s);
		return -1;
	}
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

const char *sd_drain_allocation(const char *nodelist, const char **from)
{
	const char *env = getenv("SLURM_JOB_NODELIST");
	if (env && *env) {
		*from = "SLURM_JOB_NODELIST";
		return env;
	}
	*from = "the run's node list";
	return nodelist ? nodelist : "";
}

/* Check every host against the allocation, each refused one said on its
 * own line; 0 when all may go to Slurm, else the number refused (every
 * host when the allocation itself cannot be read). */
static int check_hosts(const char *const *hosts, int n, const char *alloc,
		       const char *from)
{
	char **names = NULL, err[256], q[400], qa[400];
	int nn = 0, refused = 0;
	int rc = sd_hostlist_parse(alloc, &names, &nn, err, sizeof(err));
	sd_host_quote(alloc, qa, sizeof(qa));
	if (rc != SD_OK) {
		fprintf(stderr, "shakedown: --drain: refusing every host: the "
			"job's allocation (%s %s) is not a hostlist: %s\n",
			from, qa, err);
		return n > 0 ? n : 1;
	}
	for (int h = 0; h < n; h++) {
		if (sd_hostlist_check_host(hosts[h], names, nn, err,
					   sizeof(err)) == SD_OK)
			continue;
		refused++;
		sd_host_quote(hosts[h], q, sizeof(q));
		if (strstr(err, "allocation"))
			fprintf(stderr, "shakedown: --drain: refusing host %s: "
				"%s (%s %s)\n", q, err, from, qa);
		else
			fprintf(stderr, "shakedown: --drain: refusing host %s: "
				"%s\n", q, err);
	}
	sd_hostlist_free(names, nn);
	return refused;
}

int sd_drain_hosts(const char *const *hosts, const char *const *reasons,
		   int n, const char *uuid, int limit_s, const char *alloc,
		   const char *alloc_from)
{
	const char *scontrol = getenv("SHAKEDOWN_SCONTROL");
	int failed = 0;
	if (!scontrol || !*scontrol)
		scontrol = "scontrol";
	if (n <= 0)
		return 0;
	/* a record that names a host list, or a host of another job, was
	 * edited or is wrong: drain none of it, not the half that looks
	 * right */
	int refused = check_hosts(hosts, n, alloc, alloc_from);
	if (refused) {
		fprintf(stderr, "shakedown: --drain: nothing drained: %d of %d "
			"host name%s refused (above); Slurm is handed single "
			"hosts of the job's allocation only\n", refused < n ?
			refused : n, n, n == 1 ? "" : "s");
		return SD_DRAIN_REFUSED;
	}
	for (int h = 0; h < n; h++) {
		char node[300], reason[300], why[210], out[1024];
		snprintf(node, sizeof(node), "NodeName=%s", hosts[h]);
		/* Slurm keeps a reason short: the run names the rest
		 * (shakedown report), and no word is cut */
		sd_clip_words(why, sizeof(why), reasons[h] ? reasons[h]
			      : "failed its checks", 200, " (more: shakedown "
			      "report)");
		snprintf(reason, sizeof(reason), "Reason=shakedown %s: %s",
			 uuid, why);
		for (char *c = reason; *c; c++)
			if (*c == '"' || *c == '\n')
				*c = '\'';
		char *argv[] = { (char *)scontrol, "update", node,
				 "State=DRAIN", reason, NULL };
		int st = run_capture(argv, limit_s > 0 ? limit_s : 10, out,
				     sizeof(out));
		if (st == 0) {
			fprintf(stderr, "shakedown: drained %s (%s)\n", hosts[h],
				reason + 7);
			continue;
		}
		failed++;
		fprintf(stderr, "shakedown: could not drain %s: %s said: %s; "
			"the results are recorded; as a Slurm operator run: "
			"scontrol update %s State=DRAIN \"%s\"\n", hosts[h],
			scontrol, out[0] ? out : "no reason given", node,
			reason);
		if (st < 0 && strstr(out, "no answer within") && h + 1 < n) {
			/* the controller is not answering: do not wait on it
			 * once per node */
			fprintf(stderr, "shakedown: not draining the other %d "
				"node%s: scontrol did not answer\n", n - h - 1,
				n - h - 1 == 1 ? "" : "s");
			failed += n - h - 1;
			break;
		}
	}
	return failed;
}

int sd_drain_bad_nodes(const struct sd_blame *b, int nhosts,
		       const char *const *names, const char *uuid, int limit_s,
		       const char *alloc, const char *alloc_from)
{
	unsigned char *bad = calloc((size_t)(nhosts > 0 ? nhosts : 1), 1);
	const char **hosts = calloc((size_t)(nhosts > 0 ? nhosts : 1),
				    sizeof(*hosts));
	const char **why = calloc((size_t)(nhosts > 0 ? nhosts : 1),
				  sizeof(*why));
	int n = 0, ns = 0, failed;
	const struct sd_suspect *sus = sd_blame_suspects(b, &ns);
	if (!bad || !hosts || !why) {
		fprintf(stderr, "shakedown: --drain: out of memory; nothing "
			"drained\n");
		failed = nhosts;
		goto out;
	}
	sd_blame_bad_hosts(b, bad);
	for (int h = 0; h < nhosts; h++) {
		if (!bad[h])
			continue;
		hosts[n] = names[h];
		why[n] = NULL;
		for (int i = 0; i < ns && !why[n]; i++)
			if (sus[i].host == h &&
			    (sus[i].kind == SD_SUSPECT_NODE ||
			     sus[i].kind == SD_SUSPECT_LINK))
				why[n] = sus[i].reason;
		n++;
	}
	failed = sd_drain_hosts(hosts, why, n, uuid, limit_s, alloc,
				alloc_from);
out:
	free(bad);
	free(hosts);
	free(why);
	return failed;
}
