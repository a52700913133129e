/*
 * job_options.c - the options the commands that start ranks share (see
 * job_options.h).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "job_options.h"
#include "tool.h"
#include "names.h"

void sd_job_options_init(struct sd_job_options *j, int timeout_ms)
{
	memset(j, 0, sizeof(*j));
	j->backend = "gloo";
	j->timeout_ms = timeout_ms;
}

/* Each shared row and the command flag that brings it. */
static const struct {
	struct option row;
	unsigned flag;
} shared_rows[SD_JOB_OPTION_ROWS] = {
	{ { "local", required_argument, NULL, SD_JOB_OPT_LOCAL },
	  SD_CMD_RANKS },
	{ { "backend", required_argument, NULL, SD_JOB_OPT_BACKEND },
	  SD_CMD_RANKS },
	{ { "iface", required_argument, NULL, SD_JOB_OPT_IFACE },
	  SD_CMD_RANKS },
	{ { "timeout", required_argument, NULL, 'T' }, SD_CMD_RANKS },
	{ { "db", required_argument, NULL, SD_JOB_OPT_DB }, SD_CMD_DB },
};

struct option *sd_job_getopt_rows(const char *cmd, const struct option *own,
				  struct option *rows, size_t max)
{
	unsigned flags = sd_command_flags(cmd);
	size_t n = 0;
	for (size_t i = 0; i < SD_JOB_OPTION_ROWS; i++)
		if (flags & shared_rows[i].flag) {
			if (n >= max)
				return NULL;
			rows[n++] = shared_rows[i].row;
		}
	for (size_t i = 0;; i++) {
		if (n >= max)
			return NULL;
		rows[n++] = own[i];
		if (!own[i].name)
			return rows;
	}
}

int sd_job_option(int ch, const char *arg, struct sd_job_options *j, char *err,
		  size_t errlen)
{
	long v;
	switch (ch) {
	case SD_JOB_OPT_LOCAL:
		if (sd_parse_int(arg, 1, 1024, &v)) {
			snprintf(err, errlen,
				 "--local '%s' must be a number of "
				 "ranks from 1 to 1024",
				 arg);
			return -1;
		}
		j->local_ranks = (int)v;
		return 1;
	case SD_JOB_OPT_BACKEND: j->backend = arg; return 1;
	case SD_JOB_OPT_IFACE: j->iface = arg; return 1;
	case SD_JOB_OPT_DB: j->db = arg; return 1;
	case 'T':
		if (sd_parse_duration_ms(arg, &j->timeout_ms)) {
			snprintf(err, errlen,
				 "--timeout '%s' must be a positive "
				 "number of seconds",
				 arg);
			return -1;
		}
		j->timeout_set = 1;
		return 1;
	default: return 0;
	}
}

int sd_job_getopt(int argc, char **argv, const char *optstring,
		  const struct option *rows, struct sd_job_options *j,
		  char *err, size_t errlen)
{
	for (;;) {
		int ch = sd_getopt(argc, argv, optstring, rows, err, errlen);
		if (ch < 0 || ch == ':' || ch == '?')
			return ch;
		int r = sd_job_option(ch, optarg, j, err, errlen);
		if (r < 0)
			return SD_OPT_REFUSED;
		if (r == 0)
			return ch;
	}
}

void sd_job_options_end(struct sd_job_options *j)
{
	if (!j->iface)
		j->iface = getenv("SHAKEDOWN_IFACE");
}
