/*
 * job.c - the job lifecycle of the commands that start ranks (see job.h).
 */
#include "config.h"

#include <pthread.h>
#include <pwd.h>
#include <semaphore.h>
#include <stdint.h>
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
#include "db/db.h"

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
	if (!rc)
		rc = plugin->ops->init(bs, err, sizeof(err));
	/* a failure every rank meets (no GPU, no plugin) is said once */
	if ((status = sd_agree_say(boot, rc ? sd_exit_for_status(rc) : 0, "",
				   err)))
		return status;
	rc = plugin->ops->comm_create(bs, cfg, comm, err, sizeof(err));
	return sd_agree_say(boot, rc ? sd_exit_for_status(rc) : 0,
			    "creating the communicator", err);
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

/* ------------------------------------------------------------ the guard */

static volatile sig_atomic_t job_signal;
/* posted by the handler (sem_post is async-signal-safe): the watchdog
 * sleeps on it */
static sem_t job_sem;
static int job_sem_ready;

void sd_job_on_signal(int sig)
{
	job_signal = sig;
	if (job_sem_ready)
		sem_post(&job_sem);
}

int sd_job_cancelled(void)
{
	return job_signal != 0;
}

volatile sig_atomic_t *sd_job_cancel_flag(void)
{
	return &job_signal;
}

/* A rank whose main thread is stuck in a library call (a product, a
 * collective) after a verdict ends this long after it, with its status. */
#define GUARD_LAST_RESORT_S 2
/* How long the ranks may take to stop for a signal before a step in
 * flight is abandoned: short of Slurm's KillWait (30 s by default, often
 * a few seconds), after which SIGKILL would leave the run unrecorded. */
#define GUARD_CANCEL_GRACE_S 2
/* Writes a rank 0's record may make, each waiting up to the busy
 * timeout on a locked database: the other ranks wait that long. */
#define GUARD_RECORD_WRITES 16

/* Rank 0: the run's end to the record, once (the control plane's thread,
 * the watchdog and the main thread may all get here). */
static void guard_record(struct sd_job_guard *g, int exit_status,
			 const char *msg, const struct sd_suspect_info *sus,
			 size_t n)
{
	if (!g->boot || g->boot->bs.rank != 0 || !g->record_end || g->closing)
		return;
	if (__atomic_exchange_n(&g->ended, 1, __ATOMIC_SEQ_CST))
		return;
	/* the words of `shakedown run`'s record: a run stopped by a
	 * signal was cancelled, one that lost a rank failed */
	g->record_end(g->arg, exit_status,
		      exit_status == SD_EXIT_CANCELLED ? "cancelled"
		      : exit_status == SD_EXIT_TIMEOUT ? "failed"
						       : "error",
		      msg, sus, n);
}

/* The verdict's exit status and words: while the ranks stop for a
 * signal, one that leaves first is not a lost node, the run was
 * cancelled (as `shakedown run` says it). */
static const char *guard_words(int status, const char *msg, int *exit_status,
			       char *why, size_t len)
{
	*exit_status = sd_exit_for_status(status);
	if (job_signal && *exit_status != SD_EXIT_CANCELLED) {
		snprintf(why, len, "cancelled by a signal (%s, while the ranks "
			 "stopped)", msg);
		*exit_status = SD_EXIT_CANCELLED;
		return why;
	}
	return msg;
}

static void *guard_last_resort(void *arg)
{
	struct sd_job_guard *g = arg;
	sleep(GUARD_LAST_RESORT_S);
	while (g->draining)
		sleep(1); /* each scontrol call is bounded */
	fflush(stdout);
	fflush(stderr);
	_exit(g->abort_exit);
}

/* Rank 0 reached a verdict: said before the others are told (under
 * srun -K the first rank to leave ends the step). */
static void guard_announce(void *arg, int status, const char *msg)
{
	struct sd_job_guard *g = arg;
	char why[1400];
	int ex, blame = 1;
	if (g->reword && g->boot && g->boot->bs.rank == 0)
		msg = g->reword(g->arg, status, msg, &ex, &blame);
	fprintf(stderr, "shakedown: %s\n",
		guard_words(status, msg, &ex, why, sizeof(why)));
	g->announced = 1;
}

/* The control plane reached a verdict (a rank lost, hung, or rank 0
 * gone): say it, rank 0 records it with the named ranks' nodes as
 * suspects, the backend is stopped and the last resort armed. */
static void guard_abort(void *arg, int status, const char *msg,
			int decided_here)
{
	struct sd_job_guard *g = arg;
	char why[1400];
	pthread_t th;
	int reworded = 0, blame = 1;
	if (g->reword && g->boot->bs.rank == 0)
		msg = g->reword(g->arg, status, msg, &reworded, &blame);
	msg = guard_words(status, msg, &g->abort_exit, why, sizeof(why));
	/* the command's own status for what it reworded (not for a run
	 * the signal stopped) */
	if (reworded && g->abort_exit != SD_EXIT_CANCELLED)
		g->abort_exit = reworded;
	if (decided_here && !g->announced)
		fprintf(stderr, "shakedown: %s\n", msg);
	struct sd_suspect_info sus[64];
	char hosts[64][64];
	int ranks[64], ns = 0;
	if (g->boot->bs.rank == 0 && blame &&
	    g->abort_exit != SD_EXIT_CANCELLED) {
		int n = sd_ctrl_blamed(g->ctrl, ranks, hosts, 64);
		for (int i = 0; i < n; i++) {
			int seen = 0;
			for (int k = 0; k < ns && !seen; k++)
				seen = strcmp(sus[k].subject, hosts[i]) == 0;
			if (!seen)
				sus[ns++] = (struct sd_suspect_info){
					.kind = "node", .subject = hosts[i],
					.hosts = hosts[i], .bad_node = 1,
					.reason = msg };
		}
	}
	guard_record(g, g->abort_exit, msg, sus, (size_t)ns);
	/* the backstop first: stopping the backend may itself stall */
	if (pthread_create(&th, NULL, guard_last_resort, g) == 0)
		pthread_detach(th);
	if (g->stop)
		g->stop(g->arg);
}

/* The cancellation watchdog: a signal asks the ranks to stop at the next
 * step; one in flight (a large product, a training step) would not get
 * there in time.  After the grace, rank 0 records the run as cancelled,
 * every rank stops its backend and leaves with 5; the others a moment
 * later, so that rank 0's record comes first. */
static void *guard_watch(void *arg)
{
	struct sd_job_guard *g = arg;
	while (!job_signal)
		sem_wait(&job_sem); /* EINTR or a post: look again */
	int rank = g->boot ? g->boot->bs.rank : 0;
	sleep(GUARD_CANCEL_GRACE_S);
	if (rank != 0)
		usleep(750000); /* rank 0's record first (srun -K) */
	if (rank == 0 && !g->ended && !g->closing) {
		char msg[300];
		snprintf(msg, sizeof(msg), "cancelled by a signal; %s after %d s%s",
			 g->cut_short ? g->cut_short
				      : "what was in flight was abandoned",
			 GUARD_CANCEL_GRACE_S, g->kept ? g->kept : "");
		fprintf(stderr, "shakedown: %s\n", msg);
		guard_record(g, SD_EXIT_CANCELLED, msg, NULL, 0);
	}
	if (g->stop)
		g->stop(g->arg);
	fflush(stdout);
	fflush(stderr);
	_exit(SD_EXIT_CANCELLED);
	return NULL;
}

void sd_job_guard_watch(struct sd_job_guard *g)
{
	pthread_t th;
	if (!job_sem_ready) {
		sem_init(&job_sem, 0, 0);
		job_sem_ready = 1;
	}
	if (pthread_create(&th, NULL, guard_watch, g) == 0)
		pthread_detach(th);
	if (job_signal)
		sem_post(&job_sem);
}

int sd_job_guard_start(struct sd_job_guard *g, int timeout_ms)
{
	struct sd_bootstrap *bs = &g->boot->bs;
	char err[1024] = "";
	int rc = sd_ctrl_start(bs, timeout_ms, &g->ctrl, err, sizeof(err));
	if (rc)
		sd_rank_error(bs, "", err);
	else {
		sd_ctrl_set_abort_hook(g->ctrl, guard_abort, g);
		sd_ctrl_set_announce_hook(g->ctrl, guard_announce, g);
	}
	return sd_agree(g->boot, rc ? sd_exit_for_status(rc) : 0);
}

/* A control-plane call's failure as the exit status: the verdict's. */
static int guard_status(struct sd_job_guard *g, int rc)
{
	return g->abort_exit ? g->abort_exit : sd_exit_for_status(rc);
}

int sd_job_guard_enter(struct sd_job_guard *g, int timeout_ms, int budget_ms,
		       const char *what)
{
	char err[1400];
	/* rank 0 names what a step was from its own progress: another rank
	 * tells it only when its bounds change.  A message from every rank
	 * at every step woke rank 0's control thread while rank 0 computed
	 * (a training step of the test config: 0.3 ms), and on busy cores
	 * its compute came out up to 3x its peers'. */
	if (g->boot->bs.rank != 0 && g->entered_timeout &&
	    timeout_ms == g->entered_timeout && budget_ms == g->entered_budget)
		return 0;
	g->entered_timeout = timeout_ms;
	g->entered_budget = budget_ms;
	int rc = sd_ctrl_progress(g->ctrl, 0, g->seq, timeout_ms, budget_ms,
				  what, err, sizeof(err));
	return rc ? guard_status(g, rc) : 0;
}

int sd_job_guard_step(struct sd_job_guard *g, const void *mine, size_t len,
		      void *all, int want_stop, int *stop)
{
	char err[1400];
	int rc = sd_ctrl_exchange(g->ctrl, 0, g->seq++, mine, len, all,
				  want_stop, stop, err, sizeof(err));
	return rc ? guard_status(g, rc) : 0;
}

int sd_job_guard_fail(struct sd_job_guard *g, int status, const char *msg)
{
	char err[1400];
	int rc = sd_ctrl_fail(g->ctrl, 0, g->seq++, status, msg, err,
			      sizeof(err));
	return guard_status(g, rc ? rc : status);
}

int sd_job_guard_finish(struct sd_job_guard *g, int timeout_ms,
			int (*record)(void *arg), void *arg)
{
	char err[1400];
	int status = SD_EXIT_OK;
	/* rank 0's record may wait on a locked database for each of its
	 * writes: the others wait for its word as long (it is alive: its
	 * connection is up) */
	long budget = (long)timeout_ms +
		      (long)GUARD_RECORD_WRITES * sd_db_busy_timeout_ms();
	if (budget > INT32_MAX / 4)
		budget = INT32_MAX / 4;
	int rc = sd_ctrl_progress(g->ctrl, 0, g->seq++, timeout_ms, (int)budget,
				  "recording the results", err, sizeof(err));
	if (rc)
		return guard_status(g, rc);
	if (g->boot->bs.rank == 0) {
		/* every result is in: no rank is blamed any more */
		if ((rc = sd_ctrl_quiesce(g->ctrl)))
			return guard_status(g, rc);
		g->closing = 1; /* the record is the command's now */
		status = record(arg);
	}
	if ((rc = sd_ctrl_finish(g->ctrl, &status)))
		/* rank 0 went away before it said how the run ended */
		status = guard_status(g, rc);
	return status;
}

int sd_job_guard_close(struct sd_job_guard *g, int status)
{
	sd_ctrl_destroy(g->ctrl); /* joins its thread: no hook runs after */
	g->ctrl = NULL;
	if (status && job_signal)
		status = SD_EXIT_CANCELLED; /* not a lost rank: a signal */
	if (status) {
		/* stopped before rank 0 could record the end (a broken
		 * bootstrap, a launcher gone): the record says so */
		char msg[200];
		snprintf(msg, sizeof(msg), "the run stopped early: %s; see its "
			 "message", status == SD_EXIT_CANCELLED
			 ? "cancelled by a signal" : status == SD_EXIT_TIMEOUT
			 ? "a rank was lost" : "the ranks could not go on");
		guard_record(g, status, msg, NULL, 0);
	}
	g->closing = 1;
	return status;
}
