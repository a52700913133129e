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

/* One rank's failure, as sd_agree_say gathers it. */
struct said {
	int32_t status;
	char host[64];
	char msg[1024];
};

/* "0-7", "0,2,5-6": the ranks of all[] whose message is msg. */
static void rank_list(const struct said *all, int n, const char *msg,
		      char *out, size_t len, int *count, int *hosts)
{
	size_t u = 0;
	*count = 0;
	*hosts = 0;
	out[0] = '\0';
	for (int r = 0; r < n; r++) {
		if (!all[r].status || strcmp(all[r].msg, msg))
			continue;
		int seen = 0;
		for (int q = 0; q < r && !seen; q++)
			seen = all[q].status && !strcmp(all[q].msg, msg) &&
			       !strcmp(all[q].host, all[r].host);
		*hosts += !seen;
		int e = r;
		while (e + 1 < n && all[e + 1].status &&
		       !strcmp(all[e + 1].msg, msg))
			e++;
		*count += e - r + 1;
		if (u < len)
			u += (size_t)snprintf(out + u, len - u,
					      e > r ? "%s%d-%d" : "%s%d", u ? ","
					      : "", r, e);
		r = e;
	}
}

int sd_agree_say(struct sd_bootstrap_impl *boot, int mine, const char *what,
		 const char *err)
{
	struct sd_bootstrap *bs = &boot->bs;
	int worst = sd_agree(boot, mine);
	if (!worst || bs->size == 1) {
		if (mine && bs->size == 1)
			sd_rank_error(bs, what, err);
		return worst;
	}
	struct said me = { .status = mine }, *all = calloc((size_t)bs->size,
							   sizeof(*all));
	sd_strlcpy(me.host, bs->host, sizeof(me.host));
	if (mine)
		snprintf(me.msg, sizeof(me.msg), "%s%s%s", what,
			 *what ? ": " : "", err);
	if (!all || bs->allgather(bs, &me, all, sizeof(me))) {
		if (mine) /* cannot gather: each says its own */
			sd_rank_error(bs, what, err);
		free(all);
		return worst;
	}
	for (int r = 0; bs->rank == 0 && r < bs->size; r++) {
		int first = all[r].status != 0;
		for (int q = 0; q < r && first; q++)
			first = !(all[q].status && !strcmp(all[q].msg,
							   all[r].msg));
		if (!first)
			continue;
		char ranks[256];
		int count, hosts;
		rank_list(all, bs->size, all[r].msg, ranks, sizeof(ranks),
			  &count, &hosts);
		if (hosts == 1)
			fprintf(stderr, "shakedown: rank%s %s (%s): %s\n",
				count > 1 ? "s" : "", ranks, all[r].host,
				all[r].msg);
		else
			fprintf(stderr, "shakedown: ranks %s (%d hosts): %s\n",
				ranks, hosts, all[r].msg);
	}
	free(all);
	return worst;
}
