/*
 * job.c - the job lifecycle of the commands that start ranks (see job.h).
 */
#include "config.h"

#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "hostlist.h"
#include "job.h"
#include "launcher.h"
#include "ranks.h"
#include "tool.h"
#include "util.h"

int sd_job_fault(struct sd_fault *f)
{
	char err[512];
	if (sd_fault_parse(getenv("SHAKEDOWN_FAULT"), f, err, sizeof(err))) {
		if (sd_first_task())
			fprintf(stderr, "shakedown: %s\n", err);
		return SD_EXIT_USAGE;
	}
	f->exit_fn = sd_job_fault_exit;
	return 0;
}

void sd_job_fault_exit(int code)
{
	fflush(stdout);
	fflush(stderr);
	_exit(code);
}

int sd_job_rank_open(struct sd_bootstrap_impl **boot, void (*on_signal)(int),
		     struct sd_fault *start_fault)
{
	char err[1024] = "";
	struct sigaction sa = { .sa_handler = on_signal,
				.sa_flags = SA_RESTART };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	if (sd_bootstrap_open(boot, err, sizeof(err))) {
		sd_rank_error(NULL, "bootstrap", err);
		return SD_EXIT_ENV;
	}
	if (start_fault && sd_fault_at_start(start_fault, (*boot)->bs.rank))
		sd_fault_act(start_fault);
	return 0;
}

void sd_job_warn(void *arg, const char *msg)
{
	(void)arg;
	fprintf(stderr, "shakedown: warning: %s\n", msg);
}

const char *sd_job_user(void)
{
	const char *user = getenv("USER");
	if (user && *user)
		return user;
	struct passwd *pw = getpwuid(getuid());
	return pw ? pw->pw_name : "";
}

void sd_job_run_info(struct sd_run_info *info, const char *cmdline,
		     struct sd_bootstrap_impl *boot,
		     const struct sd_plugin *plugin,
		     const struct sd_rank_info *ranks)
{
	const struct sd_backend_ops *ops = plugin->ops;
	*info = (struct sd_run_info){
		.started_at = sd_wall_now(),
		.command_line = cmdline,
		.tool_version = PACKAGE_VERSION,
		.backend = ops->name,
		.backend_version = ops->version ? ops->version : "",
		.user = sd_job_user(),
		.nranks = boot->bs.size,
		.job = &boot->job,
		.ranks = ranks,
	};
}

int sd_job_launch(const char *cmd, int local_ranks, const char *backend,
		  int round_ms, int (*rank_main)(void *), void *arg)
{
	char err[512];
	/* a socket per peer (Gloo's mesh, rank 0's control plane): the soft
	 * open-file limit is no reason to fail where the hard one allows */
	struct rlimit nofile;
	if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 &&
	    nofile.rlim_cur < nofile.rlim_max) {
		nofile.rlim_cur = nofile.rlim_max;
		setrlimit(RLIMIT_NOFILE, &nofile);
	}
	if (local_ranks <= 0)
		return rank_main(arg);
	if ((!backend || strcmp(backend, "gloo") == 0) &&
	    sd_local_ports_short(local_ranks, err, sizeof(err))) {
		fprintf(stderr, "shakedown %s: %s\n", cmd, err);
		return SD_EXIT_USAGE;
	}
	if (getenv("SLURM_PROCID") && getenv("SLURM_STEP_ID")) {
		fprintf(stderr, "shakedown %s: --local starts its own ranks; "
			"under srun, drop --local\n", cmd);
		return SD_EXIT_USAGE;
	}
	return sd_local_launch(local_ranks, round_ms, rank_main, arg);
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
	for (int i = 0; i < argc && used < len; i++) {
		/* a token never reaches the record: the value of any
		 * --token* but the token file's path is left out */
		const char *a = argv[i];
		int secret_next = 0;
		if (strncmp(a, "--token", 7) == 0 &&
		    strncmp(a, "--token-file", 12) != 0) {
			secret_next = !strchr(a, '=');
			a = strchr(a, '=') ? "--token=(redacted)" : a;
		}
		used += (size_t)snprintf(buf + used, len - used,
					 strpbrk(a, " \t'\"") ? " '%s'" : " %s",
					 a);
		if (secret_next && i + 1 < argc && used < len) {
			used += (size_t)snprintf(buf + used, len - used,
						 " (redacted)");
			i++;
		}
	}
}

int sd_job_backend_open(struct sd_bootstrap_impl *boot, const char *name,
			const struct sd_comm_config *cfg, sd_job_check_fn check,
			void *check_arg, struct sd_plugin *plugin,
			struct sd_comm **comm)
{
	struct sd_bootstrap *bs = &boot->bs;
	char err[1024] = "";
	int status;
	int rc = sd_plugin_load(name, plugin, err, sizeof(err));
	if (!rc && check)
		rc = check(plugin->ops, check_arg, err, sizeof(err));
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

char *sd_job_hostlist(const struct sd_rank_info *ranks, int n)
{
	const char **names = calloc((size_t)n + 1, sizeof(*names));
	if (!names)
		return NULL;
	for (int r = 0; r < n; r++)
		names[r] = ranks[r].host;
	char *list = sd_hostlist_compress(names, n);
	free(names);
	return list;
}

void sd_job_close(struct sd_bootstrap_impl **boot, struct sd_plugin *plugin,
		  struct sd_comm **comm)
{
	if (*comm)
		plugin->ops->comm_destroy(*comm);
	*comm = NULL;
	if (plugin->ops && plugin->ops->fini)
		plugin->ops->fini();
	/* a plugin whose table was cleared is left loaded for the exit */
	if (plugin->ops)
		sd_plugin_unload(plugin);
	if (*boot)
		(*boot)->close(*boot);
	*boot = NULL;
}
