/*
 * tool.c - exit statuses and the end of standard output (see tool.h).
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "shakedown/backend.h"
#include "commands.h"
#include "tool.h"

const char *sd_invoked_as = "shakedown";

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

void sd_help_print(FILE *out, const char *text)
{
	fputs(text, out);
	fputc('\n', out);
	fputs(sd_help_exit, out);
}

static int option_check(char **argv, const struct option *opts, int li,
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

int sd_getopt(int argc, char **argv, const char *optstring,
	      const struct option *opts, char *err, size_t errlen)
{
	int li = -1;
	int ch = getopt_long(argc, argv, optstring, opts, &li);
	if (ch != -1 && ch != 1 && ch != ':' && ch != '?' &&
	    option_check(argv, opts, li, optarg, err, errlen))
		return SD_OPT_REFUSED;
	return ch;
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
