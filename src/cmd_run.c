/*
 * cmd_run.c - `shakedown run`: launch or join the ranks (its options are
 * options.c's), set up bootstrap, backend, control plane and result writers, run the plan,
 * and turn the outcome into an exit status.
 *
 * Start-up is a sequence of phases; after each one that can fail on only
 * some ranks, the ranks agree (bootstrap allgather of a status) so that
 * every rank stops together with the same exit status and no rank is left
 * waiting in a later collective.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shakedown/coll.h"
#include "commands.h"
#include "options.h"
#include "progress.h"
#include "run.h"
#include "job.h"
#include "ranks.h"
#include "sink_ncclj.h"
#include "schedule.h"
#include "tool.h"
#include "topo.h"
#include "util.h"
#include "drain.h"
#include "upload/upload.h"

/* A rank lost to the kernel's OOM killer is not a bad node: the control
 * plane found the OOM kills of the rank's memory cgroup up when it left
 * (rank 0 reads them for a rank of its host, a node's leader for one of
 * its node), and the verdict says so with the memory the test needed. */
static const char *oom_words(struct run_ctx *c, int status, const char *msg)
{
	if (c->oom_checked)
		return c->oom_killed ? c->oom_msg : msg;
	c->oom_checked = 1;
	int rank, kind;
	char host[64];
	uint64_t kills;
	struct sd_bootstrap *bs = &c->boot->bs;
	if (status != SD_ERR_NOMEM || !c->ctrl || !c->ranks ||
	    !(kind = sd_ctrl_oom_victim(c->ctrl, &rank, host, &kills)))
		return msg;
	size_t worst = 0;
	char need[600];
	if (c->test_now && c->test_now <= c->plan.ntests)
		worst = c->test_now - 1;
	else
		sd_plan_rank_mem_bytes(&c->plan, bs->size, 1, &worst);
	sd_plan_mem_words(&c->plan, worst, bs->size,
			  !c->ranks[rank].dev.pci_bus_id[0], need,
			  sizeof(need));
	snprintf(c->oom_msg, sizeof(c->oom_msg), "rank %d was killed by the "
		 "kernel's OOM killer on %s (%s %llu OOM kill%s during the run); "
		 "the test needed more memory than the rank had: %s; %s is not "
		 "blamed: give the ranks more memory, lower max_bytes (-e) or "
		 "run fewer ranks per host", rank, host,
		 kind == 1 ? "its memory cgroup counted" : "the host counted",
		 (unsigned long long)kills, kills == 1 ? "" : "s", need, host);
	c->oom_killed = 1;
	return c->oom_msg;
}

/* The guard's verdict in run's words (rank 0): the OOM killer's victim
 * ran out of memory, the environment's error (3, as the memory check's),
 * and no node is blamed. */
static const char *guard_reword(void *arg, int status, const char *msg,
				int *exit_status, int *blame)
{
	struct run_ctx *c = arg;
	msg = oom_words(c, status, msg);
	if (c->oom_killed) {
		*exit_status = SD_EXIT_ENV;
		*blame = 0;
	}
	return msg;
}

/* The guard's end of a stopped run (rank 0: the control plane's verdict,
 * a signal's grace): the ranks the verdict named as suspects (their
 * nodes), and the end of the run as run records it. */
static void guard_record_end(void *arg, int exit_status, const char *st,
			     const char *msg, const struct sd_suspect_info *sus,
			     size_t n)
{
	struct run_ctx *c = arg;
	(void)st; /* sd_run_record_end says it in run's words */
	if (n) {
		struct sd_event ev = { .kind = SD_EVENT_SUSPECTS,
				       .suspects = sus, .n = n };
		sd_sinks_emit(&c->sinks, &ev);
	}
	sd_run_record_end(c, exit_status, msg);
}

/* The guard stops the run: the runner aborts its backend and workers. */
static void guard_stop(void *arg)
{
	struct run_ctx *c = arg;
	if (c->runner)
		sd_runner_abort(c->runner);
	else if (c->plugin.ops && c->plugin.ops->abort && c->comm)
		c->plugin.ops->abort(c->comm);
}

/* The baseline's bus bandwidth for a test at a size (out of place). */
static int baseline_of(void *arg, const struct sd_test_spec *t,
		       uint64_t size_bytes, double *busbw)
{
	const struct sd_baseline *b = arg;
	const struct sd_coll *c = sd_coll_get(t->op);
	const struct sd_baseline_value *v = sd_baseline_find(
		b, sd_op_name(t->op), sd_dtype_name(t->dtype),
		c->reduces ? sd_redop_name(t->redop) : "", t->scope, size_bytes,
		0);
	if (!v)
		return 0;
	*busbw = v->busbw_gbs;
	return 1;
}

/* Rank 0: a test starts (the one an OOM kill is set against), and its
 * progress line (progress.h) when there is one. */
static void on_test(void *arg, size_t index, size_t count,
		    const struct sd_test_info *t)
{
	struct run_ctx *c = arg;
	c->test_now = index + 1;
	if (c->progress) {
		const struct sd_coll *co = sd_coll_get(t->op);
		char label[160];
		snprintf(label, sizeof(label), "%s %s%s%s", t->name,
			 sd_dtype_name(t->dtype), co->reduces ? " " : "",
			 co->reduces ? sd_redop_name(t->redop) : "");
		sd_progress_test(c->progress, index, count, label);
	}
}

/* Rank 0: a measurement starts (between measurements: nothing is timed
 * here), on the progress line. */
static void on_measure(void *arg, size_t ti, const uint64_t *sizes,
		       size_t nsizes, size_t si, int in_place)
{
	struct run_ctx *c = arg;
	const struct sd_test_spec *t = &c->plan.tests[ti];
	int pl = sd_coll_get(t->op)->has_in_place && t->cfg.in_place ? 2 : 1;
	sd_progress_measure(c->progress, sizes, nsizes, si, in_place, pl,
			    t->cfg.iters, t->cfg.warmup);
}

/* The link class between two ranks' devices (the runner's link_class
 * hook), from their host's links (sd_topo_link_class). */
struct link_lookup {
	const struct sd_rank_info *ranks;
	const struct sd_host_env *hosts;
	int nhosts;
};

static const char *link_class(void *arg, int a, int b)
{
	const struct link_lookup *l = arg;
	return sd_topo_link_class(l->ranks, l->hosts, l->nhosts, a, b);
}

/* The backend can run every test of the plan (sd_job_check_fn). */
static int check_plan(const struct sd_backend_ops *ops, void *plan,
		      char *err, size_t errlen)
{
	return sd_runner_check_plan(ops, plan, err, errlen);
}

/* Signals, the cancellation watchdog, the writers' defaults and the
 * bootstrap; a planted start-up fault.  0, or the exit status (nothing to
 * tear down yet). */
static int start_rank(struct run_ctx *c)
{
	/* the cancellation watchdog (job.c's guard): a measurement of
	 * 100,000 iterations would not reach the next boundary before
	 * Slurm's KillWait, so after the grace it is cut short */
	c->guard = (struct sd_job_guard){
		.record_end = guard_record_end, .stop = guard_stop, .arg = c,
		.reword = guard_reword,
		.cut_short = "a measurement was cut short mid-way",
		.kept = "; completed measurements are kept" };
	sd_job_guard_watch(&c->guard);
	c->db_sink = -1;
	c->json_sink = -1;
	c->sinks.warn = sd_job_warn;
	int status = sd_job_rank_open(&c->boot, sd_job_on_signal, &c->fault);
	c->guard.boot = c->boot;
	return status;
}

/* The plan built from the file and options, -J's path and the planted
 * fault checked, and every rank agreeing on all of it (by hash).  0, or
 * the exit status every rank stops with. */
static int agree_on_plan(struct run_ctx *c)
{
	struct sd_run_options *o = &c->opt;
	struct sd_bootstrap *bs = &c->boot->bs;
	char err[1024] = "";
	int rc, status = SD_EXIT_ENV;

	/* the plan, and every rank agreeing on it */
	char plan_path[4096];
	rc = sd_plan_build(sd_plan_resolve(o->plan_file, plan_path,
					   sizeof(plan_path)),
			   &o->plan, bs->size, &c->plan, err,
			   sizeof(err));
	if (rc && bs->rank == 0)
		fprintf(stderr, "shakedown: %s\n", err);
	/* -J's path is known to be writable before anything starts: a
	 * document that cannot be written is a usage error, not a finding
	 * after the whole run */
	if (!rc && bs->rank == 0 && o->json_file &&
	    sd_ncclj_check_path(o->json_file, err, sizeof(err))) {
		rc = SD_ERR_INVALID;
		fprintf(stderr, "shakedown run: %s\n", err);
	}
	if (!rc && sd_fault_fits(&c->fault, SD_FAULT_IN_RUN, bs->size,
				 sd_plan_most_elements(&c->plan), err, sizeof(err))) {
		rc = SD_ERR_INVALID;
		if (bs->rank == 0)
			fprintf(stderr, "shakedown: SHAKEDOWN_FAULT: %s\n", err);
	}
	if ((status = sd_agree(c->boot, rc ? sd_exit_for_status(rc) : 0)))
		return status;
	{
		/* the plan text holds every setting of the tests; the backend
		 * and a planted fault complete what the ranks must share */
		char mine[17], all[bs->size][17];
		char extra[128];
		snprintf(extra, sizeof(extra), "|%s|%d", o->job.backend,
			 (int)c->fault.kind);
		uint64_t h = sd_fnv1a(SD_FNV_INIT, c->plan.text, strlen(c->plan.text));
		h = sd_fnv1a(h, extra, strlen(extra));
		snprintf(mine, sizeof(mine), "%016llx", (unsigned long long)h);
		if (bs->allgather(bs, mine, all, sizeof(mine))) {
			sd_rank_error(bs, "bootstrap",
				   sd_boot_error(c->boot, "allgather failed"));
			return SD_EXIT_ENV;
		}
		for (int r = 1; r < bs->size; r++)
			if (strcmp(all[r], all[0]) != 0) {
				if (bs->rank == 0)
					fprintf(stderr, "shakedown: ranks "
						"disagree on the plan or options: "
						"rank 0 has %s, rank %d has %s; "
						"start every rank with the same "
						"command line and plan file\n",
						all[0], r, all[r]);
				return SD_EXIT_USAGE;
			}
	}
	return 0;
}

/* The backend (which must run every test of the plan) and the control
 * plane, every rank agreeing.  0, or the exit status. */
static int open_backend(struct run_ctx *c)
{
	struct sd_run_options *o = &c->opt;
	int status;

	/* the backend, which must run every test of the plan */
	struct sd_comm_config cfg = { .timeout_ms = c->plan.timeout_ms,
				      .iface = o->job.iface };
	if ((status = sd_job_backend_open(c->boot, o->job.backend, &cfg,
					  check_plan, &c->plan, &c->plugin,
					  &c->comm)))
		return status;
	/* the control plane, watched by the job's guard */
	status = sd_job_guard_start(&c->guard, c->plan.timeout_ms);
	c->ctrl = c->guard.ctrl;
	return status;
}

/* Who is who: every rank's device and host environment exchanged, the
 * hosts numbered, the buffers held against the memory the devices have.
 * 0, or the exit status. */
static int exchange_ranks(struct run_ctx *c)
{
	struct sd_bootstrap *bs = &c->boot->bs;
	char err[1024] = "";

	/* who is who */
	struct sd_rank_info me = { .rank = bs->rank, .local_rank = bs->local_rank,
				   .pid = (int)getpid() };
	sd_strlcpy(me.host, bs->host, sizeof(me.host));
	if (c->plugin.ops->describe_device)
		c->plugin.ops->describe_device(c->comm, &me.dev);
	/* host memory is what the rank's cgroup leaves, when that is less
	 * (a Slurm step's ConstrainRAMSpace, a container's limit) */
	uint64_t cg_left;
	if (!me.dev.pci_bus_id[0] && me.dev.mem_free_bytes &&
	    sd_topo_cgroup_mem_left("", &cg_left) && cg_left < me.dev.mem_free_bytes)
		me.dev.mem_free_bytes = cg_left;
	c->ranks = calloc((size_t)bs->size, sizeof(*c->ranks));
	c->envjson = bs->local_rank == 0 ? sd_topo_host_env_json(c->plugin.ops,
								 c->comm, NULL)
				      : NULL;
	if (!c->ranks || bs->allgather(bs, &me, c->ranks, sizeof(me)) ||
	    sd_bootstrap_allgatherv(bs, c->envjson ? c->envjson : "",
				    c->envjson ? strlen(c->envjson) : 0, &c->envs, &c->lens,
				    &c->offs)) {
		sd_rank_error(bs, "bootstrap: exchanging rank information",
			   sd_boot_error(c->boot, "failed"));
		return SD_EXIT_ENV;
	}

	c->host_of = sd_number_hosts(c->ranks, bs->size);
	if (!c->host_of) {
		sd_rank_error(bs, "", "out of memory");
		return SD_EXIT_ENV;
	}
	/* memory is named as memory before a rank runs out of it (the OOM
	 * killer's victim would look like a lost node) */
	if (sd_plan_buffers_fit(&c->plan, c->ranks, c->host_of, bs->size, err,
				sizeof(err))) {
		if (bs->rank == 0)
			fprintf(stderr, "shakedown: %s\n", err);
		return SD_EXIT_ENV;
	}
	return 0;
}

/* The plan run by the runner, rank 0 judging (the blame over the hosts),
 * and the run's exit status decided into *status.  0: the run ended and
 * is to be finished; 1: it stopped (a verdict of the control plane, a
 * failure), *status the exit status. */
static int run_plan(struct run_ctx *c, int *status_out)
{
	struct sd_run_options *o = &c->opt;
	struct sd_bootstrap *bs = &c->boot->bs;
	int rc, status = SD_EXIT_ENV;
	struct link_lookup links = { c->ranks, c->hosts, c->nhost_env };
	/* rank 0 judges: the hosts' names (by host index) for the blame */
	c->nh = 0;
	for (int q = 0; q < bs->size; q++)
		if (c->host_of[q] + 1 > c->nh)
			c->nh = c->host_of[q] + 1;
	c->host_names = calloc((size_t)c->nh + 1, sizeof(*c->host_names));
	for (int q = 0; c->host_names && q < bs->size; q++)
		if (!c->host_names[c->host_of[q]])
			c->host_names[c->host_of[q]] = c->ranks[q].host;
	if (bs->rank == 0 && c->host_names)
		c->blame = sd_blame_new(c->nh, c->host_names);
	if (bs->rank == 0 && !c->blame) {
		sd_rank_error(bs, "", "out of memory");
		status = SD_EXIT_ENV;
		*status_out = status;
		return 1;
	}
	/* a test of another path starts this program as its worker */
	static char exe[4096];
	ssize_t exelen = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[exelen > 0 ? exelen : 0] = '\0';
	c->run = (struct sd_runner){
		.plan = &c->plan, .bs = bs, .ops = c->plugin.ops, .comm = c->comm,
		.exe = exelen > 0 ? exe : NULL,
		.host_of = c->host_of,
		.iface = o->job.iface, .ctrl = c->ctrl,
		.sinks = bs->rank == 0 ? &c->sinks : NULL, .fault = &c->fault,
		.cancel = sd_job_cancel_flag(),
		.on_test = bs->rank == 0 ? on_test : NULL,
		.on_measure = bs->rank == 0 && c->progress ? on_measure : NULL,
		.on_test_arg = c,
		.ranks = c->ranks,
		.baseline_of = c->baseline.n ? baseline_of : NULL,
		.baseline_arg = &c->baseline,
		.blame = c->blame,
		.link_class = link_class,
		.link_arg = &links,
	};
	c->runner = &c->run;
	rc = sd_runner_run(&c->run);
	c->run.link_arg = NULL; /* links is this function's */
	sd_progress_clear(c->progress);
	/* every result is in: from here no rank is blamed any more */
	if (sd_ctrl_quiesce(c->ctrl)) {
		/* the verdict: said and recorded by on_abort */
		status = c->guard.abort_exit;
		*status_out = status;
		return 1;
	}
	if (rc && rc != SD_ERR_CANCELLED) {
		sd_rank_error(bs, "",
			      c->run.err[0] ? c->run.err : "the run failed");
		status = sd_exit_for_status(rc);
		*status_out = status;
		return 1;
	}
	/* rank 0 judged: every rank exits with its word (sd_ctrl_finish) */
	status = rc == SD_ERR_CANCELLED	   ? SD_EXIT_CANCELLED
		 : c->run.wrong_tests	   ? SD_EXIT_CHECK
		 : c->run.failed_subjects ? SD_EXIT_VERDICT
					   : SD_EXIT_OK;
	*status_out = status;
	return 0;
}

/* Leave together and tear everything down (the writers closed, the
 * control plane, the backend; a stopped run's blamed nodes drained with
 * --drain).  Returns the exit status, or stdout's failure. */
static int close_rank(struct run_ctx *c, int status)
{
	struct sd_run_options *o = &c->opt;
	c->runner = NULL;
	/* leave together: rank 0 closing first would look like a lost rank 0 */
	if (c->ctrl && !c->finished)
		sd_ctrl_finish(c->ctrl, &status);
	if (c->ctrl && c->boot && c->boot->bs.rank == 0 && o->drain &&
	    c->guard.abort_exit && c->uuid[0] && !c->oom_killed) {
		/* the run was stopped: drain the nodes of the ranks it named */
		int br[64];
		char bh[64][64];
		const char *named[64], *why[64], *msg = NULL;
		int nb = sd_ctrl_blamed(c->ctrl, br, bh, 64), k = 0;
		sd_ctrl_verdict(c->ctrl, &msg);
		for (int i = 0; i < nb; i++) {
			int seen = 0;
			for (int q = 0; q < k && !seen; q++)
				seen = strcmp(named[q], bh[i]) == 0;
			if (!seen) {
				named[k] = bh[i];
				why[k++] = msg;
			}
		}
		const char *from;
		const char *alloc = sd_drain_allocation(c->boot->job.nodelist,
							&from);
		c->guard.draining = 1;
		if (sd_drain_hosts(named, why, k, c->uuid,
				   sd_run_drain_limit_s(&c->plan), alloc,
				   from) > 0)
			fprintf(stderr, "shakedown: drain them later with "
				"'shakedown report --bad-nodes --drain %s'\n",
				c->uuid);
		c->guard.draining = 0;
	}
	c->guard.closing = 1;
	sd_sinks_close(&c->sinks);
	sd_progress_stop(c->progress); /* after its sink */
	c->progress = NULL;
	c->db_sink = -1;
	c->json_sink = -1;
	sd_job_guard_close(&c->guard, 0);
	c->ctrl = NULL;
	/* After every rank said it was done, nothing more goes over the world
	 * communicator and the process ends next: leave a Gloo one, and the
	 * plugin, to the exit, which closes the connections at once.  Gloo's
	 * orderly close waits a tick of its device loop (up to 10 ms) per
	 * connection: 30-70 ms of a 4-rank run's wall time, measured.  NCCL
	 * is destroyed in order: its threads use the CUDA context that the
	 * runtime's exit handlers tear down. */
	if (c->agreed && c->comm && c->plugin.ops->name &&
	    strcmp(c->plugin.ops->name, "gloo") == 0) {
		c->comm = NULL;
		c->plugin.ops = NULL;
	}
	sd_job_close(&c->boot, &c->plugin, &c->comm);
	sd_plan_free(&c->plan);
	sd_blame_free(c->blame);
	sd_baseline_free(&c->baseline);
	free(c->host_names);
	free(c->ranks);
	free(c->host_of);
	for (int i = 0; c->hosts && i < c->nhost_env; i++)
		free(c->hosts[i].json);
	free(c->hosts);
	free(c->envs);
	free(c->lens);
	free(c->offs);
	free(c->envjson);
	int out_rc = sd_finish_stdout();
	return status ? status : out_rc;
}

static int rank_main(void *arg)
{
	struct run_ctx *c = arg;
	int status = start_rank(c);
	if (status)
		return status;
	if (!(status = agree_on_plan(c)) && !(status = open_backend(c)) &&
	    !(status = exchange_ranks(c)) && !(status = sd_run_begin_record(c)) &&
	    !run_plan(c, &status))
		status = sd_run_finish(c, status);
	return close_rank(c, status);
}

int cmd_run(int argc, char **argv)
{
	static struct run_ctx ctx;
	memset(&ctx, 0, sizeof(ctx));
	sd_run_options_init(&ctx.opt);
	int rc = sd_run_parse_options(argc, argv, &ctx.opt);
	if (rc >= 0)
		return rc;
	if ((rc = sd_job_fault(&ctx.fault)))
		return rc;
	char err[512];
	if (ctx.opt.upload_url && !sd_upload_available(err, sizeof(err))) {
		if (sd_first_task())
			fprintf(stderr, "shakedown: --upload: %s\n", err);
		return SD_EXIT_ENV;
	}
	/* the command line, for the record (no token reaches it) */
	sd_command_line(argc, argv, ctx.cmdline, sizeof(ctx.cmdline));
	int round_ms = (ctx.opt.plan.set & SD_SET_TIMEOUT)
			       ? ctx.opt.plan.cfg.timeout_ms
			       : SD_PLAN_TIMEOUT_MS;
	return sd_job_launch("run", ctx.opt.job.local_ranks,
			     ctx.opt.job.backend, round_ms + 5000, rank_main,
			     &ctx);
}
