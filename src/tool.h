/*
 * tool.h - what the `shakedown` command decides and the core does not:
 * exit statuses, and the end of standard output.
 */
#ifndef SD_TOOL_H
#define SD_TOOL_H

/* Exit statuses of the command (documented in shakedown(1)). */
enum sd_exit {
	SD_EXIT_OK = 0,        /* every check passed */
	SD_EXIT_CHECK = 1,     /* a check failed: wrong data, below threshold */
	SD_EXIT_USAGE = 2,     /* bad option or plan */
	SD_EXIT_ENV = 3,       /* environment or runtime error */
	SD_EXIT_TIMEOUT = 4,   /* an operation timed out or a rank was lost */
	SD_EXIT_CANCELLED = 5, /* stopped by SIGTERM or SIGINT */
	SD_EXIT_VERDICT = 6,   /* the data was right, but a node, link or path
				  failed an expectation of the plan */
};

/* The exit status for an sd_status from the core. */
int sd_exit_for_status(int status);

/* Flush stdout and return SD_EXIT_OK, or SD_EXIT_ENV (with a message) when
 * the output could not be written. */
int sd_finish_stdout(void);

#endif
