/*
 * cmd_worker.c - `shakedown worker`: a test's worker process, which a
 * rank starts for a test of another path (a plan's transport, iface or
 * process_env) with that path's settings in its environment; it loads the
 * backend and serves the rank (lib/worker.h).  Not for people: it is in
 * the command table so that one program is all a job needs, and left out
 * of the help.
 *
 *   shakedown worker --fd N --backend NAME --rank R --size S
 *                    --local-rank L --local-size M --host HOST
 *
 * Exit statuses: 0 the rank asked it to end; 3 it could not start or the
 * rank went away (the rank names it either way).
 */
#include "config.h"

#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "commands.h"
#include "names.h"
#include "plugin.h"
#include "tool.h"
#include "util.h"
#include "worker.h"

/* A planted exit fault ends the worker at once, as it would the rank. */
static void exit_now(int status)
{
	_exit(status);
}

int cmd_worker(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "fd", required_argument, NULL, 'f' },
		{ "backend", required_argument, NULL, 'b' },
		{ "rank", required_argument, NULL, 'r' },
		{ "size", required_argument, NULL, 's' },
		{ "local-rank", required_argument, NULL, 'l' },
		{ "local-size", required_argument, NULL, 'm' },
		{ "host", required_argument, NULL, 'H' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	long fd = -1, rank = -1, size = 0, lrank = 0, lsize = 1;
	const char *backend = NULL, *host = "";
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		long *num = c == 'f'   ? &fd
			    : c == 'r' ? &rank
			    : c == 's' ? &size
			    : c == 'l' ? &lrank
			    : c == 'm' ? &lsize
				       : NULL;
		if (num && sd_parse_int(optarg, 0, 1 << 30, num) == 0)
			continue;
		if (c == 'b') {
			backend = optarg;
			continue;
		}
		if (c == 'H') {
			host = optarg;
			continue;
		}
		if (c == 'h') {
			printf("usage: shakedown worker --fd N --backend NAME "
			       "--rank R --size S --local-rank L --local-size "
			       "M --host HOST\n\nA test's worker process: a "
			       "rank starts it for a test of another path (a "
			       "plan's transport, iface or process_env); not "
			       "run by hand.  See shakedown-plan(5).\n");
			return sd_finish_stdout();
		}
		fprintf(stderr,
			"shakedown worker: bad arguments; it is "
			"started by shakedown run for a test of another path, "
			"not by hand\n");
		return SD_EXIT_USAGE;
	}
	if (fd < 0 || !backend || rank < 0 || rank >= size) {
		fprintf(stderr,
			"shakedown worker: --fd, --backend, --rank and "
			"--size are needed; it is started by shakedown run, not "
			"by hand\n");
		return SD_EXIT_USAGE;
	}
	/* the rank ends it; a terminal's ^C reaches the rank, which stops
	 * it, and not the worker on its own */
	signal(SIGINT, SIG_IGN);
	/* a rank killed outright takes its worker with it */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() == 1)
		return SD_EXIT_ENV;
	struct sd_plugin plugin;
	char err[1024] = "";
	int rc = sd_plugin_load(backend, &plugin, err, sizeof(err));
	if (!rc) {
		rc = sd_worker_serve((int)fd, plugin.ops, (int)rank, (int)size,
				     (int)lrank, (int)lsize, host, exit_now,
				     err, sizeof(err));
		sd_plugin_unload(&plugin);
	}
	if (rc) {
		fprintf(stderr, "shakedown worker (rank %ld, %s): %s\n", rank,
			host, err);
		return SD_EXIT_ENV;
	}
	return SD_EXIT_OK;
}
