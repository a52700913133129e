/*
 * main.c - the `shakedown` command: one table of subcommands, git-style.
 *
 * The table is src/commands.c: each row names a command, the function
 * that runs it, a one-line summary and what it needs; `shakedown help`
 * prints it and `shakedown help CMD` the command's own usage.  Everything
 * else lives in the cmd_*.c files.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "envvars.h"
#include "ranks.h"
#include "tool.h"
#include "util.h"

int cmd_version(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	printf("shakedown %s\n", PACKAGE_VERSION);
	return sd_finish_stdout();
}

static int unknown_command(const char *name)
{
	fprintf(stderr,
		"shakedown: unknown command '%s'; run 'shakedown help' "
		"for the list\n",
		name);
	return SD_EXIT_USAGE;
}

static void usage(FILE *out)
{
	fprintf(out, "usage: shakedown <command> [options]\n"
		     "       shakedown help [command | exit-status]\n"
		     "       shakedown --version\n\ncommands:\n");
	for (const struct sd_command *c = sd_commands; c->name; c++)
		if (!(c->flags & SD_CMD_INTERNAL))
			fprintf(out, "  %-10s %s\n", c->name, c->summary);
	fprintf(out, "\nSee 'shakedown help COMMAND' for a command's options, "
		     "'shakedown help exit-status'\nfor the exit statuses, and "
		     "shakedown(1) for output columns and formulas.\n");
}

int cmd_help(int argc, char **argv)
{
	if (argc < 2) {
		usage(stdout);
		return sd_finish_stdout();
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		usage(stdout);
		return sd_finish_stdout();
	}
	if (strcmp(argv[1], "exit-status") == 0) {
		fputs(sd_help_exit, stdout);
		return sd_finish_stdout();
	}
	const struct sd_command *c = sd_command_find(argv[1]);
	if (!c)
		return unknown_command(argv[1]);
	char *help_argv[] = { argv[1], "--help", NULL };
	return c->fn(2, help_argv);
}

int main(int argc, char **argv)
{
	if (argc > 0 && argv[0] && argv[0][0])
		sd_invoked_as = argv[0];
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
	const struct sd_command *c = sd_command_find(argv[1]);
	if (!c)
		return unknown_command(argv[1]);
	/* every SHAKEDOWN_* variable, before any rank does work: a bad one
	 * found later (an upload setting, once the run is over) could only
	 * be warned about */
	char err[1024];
	if (c->fn != cmd_help && c->fn != cmd_version &&
	    sd_env_check_all(err, sizeof(err))) {
		if (sd_first_task())
			fprintf(stderr, "shakedown: %s\n", err);
		return SD_EXIT_USAGE;
	}
	return c->fn(argc - 1, argv + 1);
}
