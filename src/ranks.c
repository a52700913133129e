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

/* Whether n local Gloo ranks would run out of TCP ports: its full mesh
 * on one host takes a listener and a connection per pair of ranks, and a
 * run leaves as many in TIME_WAIT (about 4 n (n-1) ports, measured), from
 * the ephemeral range.  1 with err naming the limit, else 0. */
int sd_local_ports_short(int n, char *err, size_t errlen)
{
	long lo = 32768, hi = 60999;
	FILE *f = fopen("/proc/sys/net/ipv4/ip_local_port_range", "r");
	if (f) {
		if (fscanf(f, "%ld %ld", &lo, &hi) != 2)
			lo = 32768, hi = 60999;
		fclose(f);
	}
	long range = hi - lo + 1, most = 1;
	while (4 * (most + 1) * most <= range)
		most++;
	if (n <= most)
		return 0;
	snprintf(err, errlen, "--local %d: Gloo's full mesh on one host needs "
		 "about %ld local TCP ports (a listener and a connection per "
		 "pair of ranks, and as many in TIME_WAIT after), and this host "
		 "has %ld (net.ipv4.ip_local_port_range %ld-%ld); at most %ld "
		 "ranks here, or widen the range, or run under srun over "
		 "several hosts", n, 4L * n * (n - 1), range, lo, hi, most);
	return 1;
}

void sd_command_line(int argc, char **argv, char *buf, size_t len)
{
	size_t used = (size_t)snprintf(buf, len, "shakedown");
	for (int i = 0; i < argc && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used,
					 strpbrk(argv[i], " \t'\"") ? " '%s'"
								     : " %s",
					 argv[i]);
}

int sd_job_backend_open(struct sd_bootstrap_impl *boot, const char *name,
			const struct sd_comm_config *cfg,
			struct sd_plugin *plugin, struct sd_comm **comm)
{
	struct sd_bootstrap *bs = &boot->bs;
	char err[1024] = "";
	int status;
	int rc = sd_plugin_load(name, plugin, err, sizeof(err));
	if (!rc) {
		rc = plugin->ops->init(bs, err, sizeof(err));
		if (rc)
			sd_rank_error(bs, "", err);
	} else if (bs->local_rank == 0) {
		sd_rank_error(bs, "", err);
	}
	if ((status = sd_agree(boot, rc ? sd_exit_for_status(rc) : 0)))
		return status;
	rc = plugin->ops->comm_create(bs, cfg, comm, err, sizeof(err));
	if (rc)
		sd_rank_error(bs, "creating the communicator", err);
	return sd_agree(boot, rc ? sd_exit_for_status(rc) : 0);
}

void sd_job_describe(struct sd_bootstrap_impl *boot,
		     const struct sd_plugin *plugin, struct sd_comm *comm,
		     struct sd_rank_info *me)
{
	struct sd_bootstrap *bs = &boot->bs;
	memset(me, 0, sizeof(*me));
	me->rank = bs->rank;
	me->local_rank = bs->local_rank;
	me->pid = (int)getpid();
	sd_strlcpy(me->host, bs->host, sizeof(me->host));
	if (plugin->ops->describe_device)
		plugin->ops->describe_device(comm, &me->dev);
}

struct sd_rank_info *sd_job_exchange(struct sd_bootstrap_impl *boot,
				     const struct sd_rank_info *me)
{
	struct sd_bootstrap *bs = &boot->bs;
	struct sd_rank_info *ranks = calloc((size_t)bs->size, sizeof(*ranks));
	if (!ranks || bs->allgather(bs, me, ranks, sizeof(*me))) {
		sd_rank_error(bs, "bootstrap: exchanging rank information",
			      ranks ? sd_boot_error(boot, "failed")
				    : "out of memory");
		free(ranks);
		return NULL;
	}
	return ranks;
}

void sd_job_close(struct sd_bootstrap_impl **boot, struct sd_plugin *plugin,
		  struct sd_comm **comm)
{
	if (*comm)
		plugin->ops->comm_destroy(*comm);
	*comm = NULL;
	if (plugin->ops && plugin->ops->fini)
		plugin->ops->fini();
	sd_plugin_unload(plugin);
	if (*boot)
		(*boot)->close(*boot);
	*boot = NULL;
}
