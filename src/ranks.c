/*
 * ranks.c - what the commands that start ranks share (see ranks.h).
 */
#include "config.h"

#include <getopt.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ranks.h"
#include "tool.h"
#include "util.h"

int sd_first_task(void)
{
	const char *id = getenv("SLURM_PROCID");
	return !id || strcmp(id, "0") == 0;
}

int sd_usage_error(const char *cmd, const char *fmt, ...)
{
	if (sd_first_task()) {
		va_list ap;
		fprintf(stderr, "shakedown %s: ", cmd);
		va_start(ap, fmt);
		vfprintf(stderr, fmt, ap);
		va_end(ap);
		fputc('\n', stderr);
	}
	return SD_EXIT_USAGE;
}

int sd_option_error(const char *cmd, int ch, char **argv)
{
	if (ch == ':')
		return sd_usage_error(cmd, "option '%s' needs a value",
				      argv[optind - 1]);
	return sd_usage_error(cmd, "unknown option '%s'; see 'shakedown help "
			      "%s'", argv[optind - 1], cmd);
}

void sd_rank_error(const struct sd_bootstrap *bs, const char *what,
		   const char *err)
{
	if (!bs || bs->size == 1)
		fprintf(stderr, "shakedown: %s%s%s\n", what, *what ? ": " : "",
			err);
	else
		fprintf(stderr, "shakedown: rank %d (%s): %s%s%s\n", bs->rank,
			bs->host, what, *what ? ": " : "", err);
}

const char *sd_boot_error(struct sd_bootstrap_impl *b, const char *fallback)
{
	const char *e = b && b->last_error ? b->last_error(b) : NULL;
	return e && *e ? e : fallback;
}

int sd_agree(struct sd_bootstrap_impl *boot, int mine)
{
	struct sd_bootstrap *bs = &boot->bs;
	int32_t v = mine, *all = calloc((size_t)bs->size, sizeof(*all));
	int worst = 0;
	if (!all || bs->allgather(bs, &v, all, sizeof(v))) {
		sd_rank_error(bs, "bootstrap",
			      all ? sd_boot_error(boot, "allgather failed")
				  : "out of memory");
		free(all);
		return SD_EXIT_ENV;
	}
	for (int r = 0; r < bs->size; r++)
		if (all[r] > worst)
			worst = all[r];
	free(all);
	return worst;
}
