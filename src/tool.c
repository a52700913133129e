/*
 * tool.c - exit statuses and the end of standard output (see tool.h).
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
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

int sd_option_check(char **argv, const struct option *opts, int li,
		    const char *value, char *err, size_t errlen)
{
	/* the element that named the option: before a separate value */
	const char *text = argv[optind - 1];
	if (value && value == argv[optind - 1] && optind >= 2)
		text = argv[optind - 2];
	if (li >= 0 && strncmp(text, "--", 2) == 0) {
		size_t n = strcspn(text + 2, "=");
		if (n != strlen(opts[li].name) ||
		    strncmp(text + 2, opts[li].name, n) != 0) {
			snprintf(err, errlen, "'--%.*s' is short for '--%s'; "
				 "write options out in full", (int)n, text + 2,
				 opts[li].name);
			return -1;
		}
	}
	if (value && value == argv[optind - 1] && value[0] == '-' &&
	    value[1] == '-' && value[2]) {
		char name[64];
		if (li >= 0)
			snprintf(name, sizeof(name), "--%s", opts[li].name);
		else
			snprintf(name, sizeof(name), "%s", text);
		snprintf(err, errlen, "%s needs a value, not the option '%s' "
			 "(for a value that starts with --, write %s=VALUE)",
			 name, value, li >= 0 ? name : "--OPTION");
		return -1;
	}
	return 0;
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
