/*
 * tool.h - what the `shakedown` command decides and the core does not:
 * exit statuses, and the end of standard output.
 */
#ifndef SD_TOOL_H
#define SD_TOOL_H

#include <stdio.h>

/* Exit statuses of the command: what each means is src/help/exit.txt,
 * the one text of help, shakedown(1) and the README (exit_status.t checks
 * the values here against it). */
enum sd_exit {
	SD_EXIT_OK = 0,        /* every check passed */
	SD_EXIT_CHECK = 1,     /* a check failed: wrong data, below threshold */
	SD_EXIT_USAGE = 2,     /* bad option or plan */
	SD_EXIT_ENV = 3,       /* environment or runtime error */
	SD_EXIT_TIMEOUT = 4,   /* an operation timed out or a rank was lost */
	SD_EXIT_CANCELLED = 5, /* stopped by SIGTERM or SIGINT */
	SD_EXIT_VERDICT = 6,   /* the data was right, but a node, link or path
				  failed an expectation of the plan */
	SD_EXIT_RECORD = 7,    /* the run ended, but its record in the
				  database is incomplete (said what lacks) */
};

/*
 * The command as the user typed it (argv[0]: "src/shakedown" in the build
 * tree, "shakedown" from PATH), so that a hint naming another command
 * ("'src/shakedown report' shows them") works as typed.  Set by main;
 * "shakedown" until then.
 */
extern const char *sd_invoked_as;

/* The exit status for an sd_status from the core. */
int sd_exit_for_status(int status);

struct option;

/*
 * getopt_long, refusing what it lets through but a tool of record must
 * not: an abbreviated long option ("--tok" for --token-file: a secret
 * typed after it would be stored with the command line), and a value that
 * is itself an option ("--db --no-progress" would make a file of that
 * name).  Returns what getopt_long returns, or SD_OPT_REFUSED with err
 * saying what to write instead.  Every command's options go through it.
 */
#define SD_OPT_REFUSED (-2)
int sd_getopt(int argc, char **argv, const char *optstring,
	      const struct option *opts, char *err, size_t errlen);

/* A command's --help text (sd_help_CMD) and, after it, the exit
 * statuses every command shares (src/help/exit.txt, sd_help_exit). */
void sd_help_print(FILE *out, const char *text);

/* Flush stdout and return SD_EXIT_OK, or SD_EXIT_ENV (with a message) when
 * the output could not be written. */
int sd_finish_stdout(void);

#endif
