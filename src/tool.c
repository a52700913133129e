/*
 * tool.c - exit statuses and the end of standard output (see tool.h).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "shakedown/backend.h"
#include "tool.h"

int sd_exit_for_status(int status)
{
	switch (status) {
	case SD_OK: return SD_EXIT_OK;
	case SD_ERR_INVALID: return SD_EXIT_USAGE;
	case SD_ERR_TIMEOUT:
	case SD_ERR_PEER: return SD_EXIT_TIMEOUT;
	case SD_ERR_CANCELLED: return SD_EXIT_CANCELLED;
	default: return SD_EXIT_ENV;
	}
}

int sd_finish_stdout(void)
{
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "shakedown: cannot write standard output: %s\n",
			strerror(errno));
		return SD_EXIT_ENV;
	}
	return SD_EXIT_OK;
}
