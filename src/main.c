/*
 * main.c - the `shakedown` command: one table of subcommands, git-style.
 *
 * Each row names a command, the function that runs it and a one-line
 * summary; `shakedown help` prints the table and `shakedown help CMD` the
 * command's own usage.  Everything else lives in the cmd_*.c files.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "tool.h"
#include "util.h"

struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
};

static int cmd_version(int argc, char **argv)
{
	printf("shakedown %s\n", PACKAGE_VERSION);
	return sd_finish_stdout();
}

static const struct command commands[] = {
	{ "run", cmd_run, "run a test plan and check every result" },
	{ "plan", cmd_plan, "check a plan file, or show what it expands to" },
	{ "topo", cmd_topo, "the job's hosts, devices, links and interfaces" },
	{ "gemm", cmd_gemm, "matrix-multiply TFLOPs of every device, judged" },
	{ "train", cmd_train, "fine-tuning workload: tgs, TFLOPs, loss vs reference" },
	{ "ingest", cmd_ingest, "judge a training log: tgs, TFLOPs, loss vs reference" },
	{ "runs", cmd_runs, "list the recorded runs: plan, nodes, outcome" },
	{ "report", cmd_report, "show a recorded run and its verdicts" },
	{ "history", cmd_history, "bus bandwidth of one operation over time" },
	{ "compare", cmd_compare, "compare two runs and flag regressions" },
	{ "db", cmd_db, "results database: info, migrate, check" },
	{ "baseline", cmd_baseline, "named baselines to judge runs against" },
	{ "reference", cmd_reference, "reference loss curves to judge training "
				      "runs against" },
	{ "upload", cmd_upload, "send run reports to a collector; the outbox" },
	{ "help", cmd_help, "show help for shakedown or one command" },
	{ "version", cmd_version, "print the version" },
};

static const struct command *find_command(const char *name)
{
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (strcmp(commands[i].name, name) == 0)
			return &commands[i];
	return NULL;
}

static int unknown_command(const char *name)
{
	fprintf(stderr, "shakedown: unknown command '%s'; run 'shakedown help' "
			"for the list\n", name);
	return SD_EXIT_USAGE;
}

static void usage(FILE *out)
{
	fprintf(out, "usage: shakedown <command> [options]\n"
		     "       shakedown help [command]\n"
		     "       shakedown --version\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(out, "  %-10s %s\n", commands[i].name,
			commands[i].summary);
	fprintf(out, "\nSee shakedown(1) for options, output columns, formulas "
		     "and exit statuses.\n");
}

int cmd_help(int argc, char **argv)
{
	if (argc < 2) {
		usage(stdout);
		return sd_finish_stdout();
	}
	const struct command *c = find_command(argv[1]);
	if (!c)
		return unknown_command(argv[1]);
	char *help_argv[] = { argv[1], "--help", NULL };
	return c->fn(2, help_argv);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return SD_EXIT_USAGE;
	}
	if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-V") == 0)
		return cmd_version(argc - 1, argv + 1);
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		usage(stdout);
		return sd_finish_stdout();
	}
	const struct command *c = find_command(argv[1]);
	if (!c)
		return unknown_command(argv[1]);
	return c->fn(argc - 1, argv + 1);
}
