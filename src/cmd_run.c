/*
 * cmd_run.c - `shakedown run`: parse options, launch or join the ranks, set
 * up bootstrap, backend, control plane and result writers, run the plan,
 * and turn the outcome into an exit status.
 *
 * Start-up is a sequence of phases; after each one that can fail on only
 * some ranks, the ranks agree (bootstrap allgather of a status) so that
 * every rank stops together with the same exit status and no rank is left
 * waiting in a later collective.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bootstrap.h"
#include "shakedown/coll.h"
#include "shakedown/pattern.h"
#include "commands.h"
#include "ctrl.h"
#include "fault.h"
#include "options.h"
#include "plan.h"
#include "plugin.h"
#include "job.h"
#include "ranks.h"
#include "runner.h"
#include "sink.h"
#include "sink_ncclj.h"
#include "sink_text.h"
#include "schedule.h"
#include "tool.h"
#include "topo.h"
#include "util.h"
#include "db/baseline.h"
#include "db/db.h"
#include "drain.h"
#include "hostlist.h"
#include "upload/upload.h"
#include "verdict.h"

/* a usage error of `shakedown run` (src/ranks.h) */
static volatile sig_atomic_t cancel_flag;
/* posted by the handler (sem_post is async-signal-safe): the watchdog
 * below sleeps on it instead of waking 20 times a second on every rank */
static sem_t cancel_sem;

static void on_cancel(int sig)
{
	cancel_flag = sig;
	sem_post(&cancel_sem);
}

void cmd_run_usage(FILE *out)
{
	/* src/help/run.txt, which also gives shakedown(1) its OPTIONS OF RUN */
	fputs(sd_help_run, out);
}

enum long_only {
	OPT_LOCAL = 256, OPT_BACKEND, OPT_IFACE, OPT_PLAN, OPT_OP, OPT_ALGO,
	OPT_PER_ITER, OPT_NO_IN_PLACE, OPT_FORMAT, OPT_NO_PROGRESS, OPT_DB,
	OPT_UPLOAD, OPT_TOKEN_FILE, OPT_CACERT, OPT_SCOPE, OPT_BASELINE,
	OPT_DRAIN, OPT_RAW,
};

static const struct option long_options[] = {
	{ "local", required_argument, NULL, OPT_LOCAL },
	{ "backend", required_argument, NULL, OPT_BACKEND },
	{ "iface", required_argument, NULL, OPT_IFACE },
	{ "plan", required_argument, NULL, OPT_PLAN },
	{ "op", required_argument, NULL, OPT_OP },
	{ "minbytes", required_argument, NULL, 'b' },
	{ "maxbytes", required_argument, NULL, 'e' },
	{ "stepfactor", required_argument, NULL, 'f' },
	{ "stepbytes", required_argument, NULL, 'i' },
	{ "iters", required_argument, NULL, 'n' },
	{ "warmup_iters", required_argument, NULL, 'w' },
	{ "datatype", required_argument, NULL, 'd' },
	{ "redop", required_argument, NULL, 'o' },
	{ "root", required_argument, NULL, 'r' },
	{ "algo", required_argument, NULL, OPT_ALGO },
	{ "scope", required_argument, NULL, OPT_SCOPE },
	{ "check", required_argument, NULL, 'c' },
	{ "average", required_argument, NULL, 'a' },
	{ "per-iter", no_argument, NULL, OPT_PER_ITER },
	{ "no-in-place", no_argument, NULL, OPT_NO_IN_PLACE },
	{ "timeout", required_argument, NULL, 'T' },
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ "raw", no_argument, NULL, OPT_RAW },
	{ "no-progress", no_argument, NULL, OPT_NO_PROGRESS },
	{ "db", required_argument, NULL, OPT_DB },
	{ "output-file", required_argument, NULL, 'J' },
	/* nccl-tests' spelling of it */
	{ "output_file", required_argument, NULL, 'J' },
	{ "upload", required_argument, NULL, OPT_UPLOAD },
	{ "token-file", required_argument, NULL, OPT_TOKEN_FILE },
	{ "cacert", required_argument, NULL, OPT_CACERT },
	{ "baseline", required_argument, NULL, OPT_BASELINE },
	{ "drain", no_argument, NULL, OPT_DRAIN },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 }
};

/* Validate a comma list of names with one of the *_from_name functions. */
static int check_list(const char *list, const char *what,
		      int (*check)(const char *, const char **))
{
	char copy[256], *save = NULL;
	if (strcmp(list, "all") == 0)
		return 0;
	sd_strlcpy(copy, list, sizeof(copy));
	for (char *s = strtok_r(copy, ",", &save); s;
	     s = strtok_r(NULL, ",", &save)) {
		const char *hint = NULL;
		if (check(s, &hint)) {
			if (sd_first_task())
				fprintf(stderr, "shakedown run: unknown %s '%s'"
					"%s%s%s\n", what, s,
					hint ? "; did you mean '" : "",
					hint ? hint : "", hint ? "'?" : "");
			return -1;
		}
	}
	return 0;
}

static int chk_op(const char *s, const char **h)
{
	enum sd_op v;
	return sd_op_from_name(s, &v, h);
}

static int chk_dtype(const char *s, const char **h)
{
	enum sd_dtype v;
	return sd_dtype_from_name(s, &v, h);
}

static int chk_redop(const char *s, const char **h)
{
	enum sd_redop v;
	return sd_redop_from_name(s, &v, h);
}

/* Parse argv into o.  Returns -1 to go on, else an exit status. */
static int parse_options(int argc, char **argv, struct sd_run_options *o)
{
	int ch;
	long v;
	opterr = 0;
	optind = 1;
	char oerr[256];
	while ((ch = sd_getopt(argc, argv, ":b:e:f:i:n:w:d:o:r:c:a:T:J:h",
			       long_options, oerr, sizeof(oerr))) != -1) {
		switch (ch) {
		case SD_OPT_REFUSED:
			return sd_usage_error("run", "%s", oerr);
		case OPT_LOCAL:
			if (sd_parse_int(optarg, 1, 1024, &v))
				return sd_usage_error("run", "--local '%s' must be a number of "
					    "ranks from 1 to 1024", optarg);
			o->local_ranks = (int)v;
			break;
		case OPT_BACKEND: o->backend = optarg; break;
		case OPT_IFACE: o->iface = optarg; break;
		case OPT_PLAN: o->plan_file = optarg; break;
		case OPT_OP:
			if (check_list(optarg, "op", chk_op))
				return SD_EXIT_USAGE;
			o->plan.ops = optarg;
			break;
		case 'b':
		case 'e':
		case 'i': {
			uint64_t s;
			if (sd_parse_size(optarg, &s) || s == 0)
				return sd_usage_error("run", "-%c '%s' is not a size; use a number "
					    "with an optional K, M or G suffix",
					    ch, optarg);
			if (s > SD_PLAN_MAX_BYTES)
				return sd_usage_error("run", "-%c '%s' is more than 1T, larger "
					    "than any buffer a rank can hold",
					    ch, optarg);
			if (ch == 'b') {
				o->plan.cfg.min_bytes = s;
				o->plan.set |= SD_SET_MIN_BYTES;
			} else if (ch == 'e') {
				o->plan.cfg.max_bytes = s;
				o->plan.set |= SD_SET_MAX_BYTES;
			} else {
				o->plan.cfg.step_bytes = s;
				o->plan.set |= SD_SET_STEP_BYTES;
			}
			break;
		}
		case 'f': {
			char *end;
			errno = 0;
			o->plan.cfg.step_factor = strtod(optarg, &end);
			if (errno || *end || !(o->plan.cfg.step_factor > 1) ||
			    o->plan.cfg.step_factor > 1024)
				return sd_usage_error("run", "-f '%s' must be a factor above 1",
					    optarg);
			o->plan.set |= SD_SET_STEP_FACTOR;
			break;
		}
		case 'n':
			if (sd_parse_int(optarg, 1, 1000000, &o->plan.cfg.iters))
				return sd_usage_error("run", "-n '%s' must be a number of "
					    "iterations from 1 to 1000000",
					    optarg);
			o->plan.set |= SD_SET_ITERS;
			break;
		case 'w':
			if (sd_parse_int(optarg, 0, 1000000, &o->plan.cfg.warmup))
				return sd_usage_error("run", "-w '%s' must be a number of "
					    "iterations from 0 to 1000000",
					    optarg);
			o->plan.set |= SD_SET_WARMUP;
			break;
		case 'd':
			if (check_list(optarg, "data type", chk_dtype))
				return SD_EXIT_USAGE;
			o->plan.dtypes = optarg;
			break;
		case 'o':
			if (check_list(optarg, "reduction", chk_redop))
				return SD_EXIT_USAGE;
			o->plan.redops = optarg;
			break;
		case 'r':
			if (strcmp(optarg, "all") != 0 &&
			    sd_parse_int(optarg, 0, 1 << 24, &v))
				return sd_usage_error("run", "-r '%s' must be a rank or 'all'",
					    optarg);
			o->plan.roots = optarg;
			break;
		case OPT_ALGO: o->plan.algo = optarg; break;
		case OPT_SCOPE: o->plan.scope = optarg; break;
		case 'c':
			if (sd_parse_int(optarg, 0, 1000,
					 &o->plan.cfg.check_passes))
				return sd_usage_error("run", "-c '%s' must be a number of check "
					    "passes from 0 to 1000", optarg);
			o->plan.set |= SD_SET_CHECK;
			break;
		case 'a':
			if (sd_combine_from_name(optarg, &o->plan.cfg.combine))
				return sd_usage_error("run", "-a '%s' must be avg, min, max or "
					    "rank0", optarg);
			o->plan.set |= SD_SET_COMBINE;
			break;
		case OPT_PER_ITER:
			o->plan.cfg.per_iter = 1;
			o->plan.set |= SD_SET_PER_ITER;
			break;
		case OPT_NO_IN_PLACE:
			o->plan.cfg.in_place = 0;
			o->plan.set |= SD_SET_IN_PLACE;
			break;
		case 'T':
			if (sd_parse_duration_ms(optarg, &o->plan.cfg.timeout_ms))
				return sd_usage_error("run", "--timeout '%s' must be a positive "
					    "number of seconds", optarg);
			o->plan.set |= SD_SET_TIMEOUT;
			break;
		case OPT_FORMAT: {
			/* the output formats of run, by name */
			static const struct sd_name_row formats[] = {
				{ "table", SD_FORMAT_TABLE },
				{ "deepspeed", SD_FORMAT_DEEPSPEED },
				{ "json", SD_FORMAT_JSON },
				{ NULL, 0 }
			};
			const char *hint = NULL;
			int f;
			if (sd_name_lookup(formats, optarg, &f, &hint))
				return sd_usage_error("run", "--format '%s' must be table, "
					    "deepspeed or json%s%s%s", optarg,
					    hint ? "; did you mean '" : "",
					    hint ? hint : "", hint ? "'?" : "");
			o->format = (enum sd_format)f;
			break;
		}
		case OPT_RAW: o->ds_raw = 1; break;
		case OPT_NO_PROGRESS: o->progress = 0; break;
		case OPT_DB: o->db = optarg; break;
		case 'J': o->json_file = optarg; break;
		case OPT_UPLOAD: o->upload_url = optarg; break;
		case OPT_TOKEN_FILE: o->token_file = optarg; break;
		case OPT_CACERT: o->cacert = optarg; break;
		case OPT_BASELINE: o->baseline = optarg; break;
		case OPT_DRAIN: o->drain = 1; break;
		case 'h':
			cmd_run_usage(stdout);
			return sd_finish_stdout();
		case ':':
		default:
			return sd_option_error("run", ch, argv);
		}
	}
	if (optind < argc)
		return sd_usage_error("run", "unexpected argument '%s'; see 'shakedown help run'",
			    argv[optind]);
	unsigned both = SD_SET_MIN_BYTES | SD_SET_MAX_BYTES;
	if ((o->plan.set & both) == both &&
	    o->plan.cfg.min_bytes > o->plan.cfg.max_bytes)
		return sd_usage_error("run", "-b (%llu bytes) is larger than -e (%llu bytes)",
			    (unsigned long long)o->plan.cfg.min_bytes,
			    (unsigned long long)o->plan.cfg.max_bytes);
	both = SD_SET_STEP_BYTES | SD_SET_STEP_FACTOR;
	if ((o->plan.set & both) == both)
		return sd_usage_error("run", "-f and -i exclude each other; pick one");
	/* DeepSpeed's --raw has no meaning in the other tables */
	if (o->ds_raw && o->format != SD_FORMAT_DEEPSPEED)
		return sd_usage_error("run", "--raw is for --format deepspeed, which is not "
			    "given; add --format deepspeed or drop it");
	/* what only an upload uses, given without one, is a slip */
	if (!o->upload_url && (o->token_file || o->cacert) &&
	    !getenv("SHAKEDOWN_UPLOAD_URL"))
		return sd_usage_error("run", "%s is for --upload, which is not given; add "
			    "--upload URL or drop it",
			    o->token_file ? "--token-file" : "--cacert");
	if (!o->upload_url)
		o->upload_url = getenv("SHAKEDOWN_UPLOAD_URL");
	if (!o->token_file)
		o->token_file = getenv("SHAKEDOWN_TOKEN_FILE");
	if (!o->iface)
		o->iface = getenv("SHAKEDOWN_IFACE");
	return -1;
}

struct run_ctx {
	struct sd_run_options opt;
	struct sd_fault fault;
	char cmdline[4096];
	/* set up by rank_main */
	struct sd_bootstrap_impl *boot;
	struct sd_plugin plugin;
	struct sd_comm *comm;
	struct sd_ctrl *ctrl;
	struct sd_sinks sinks;
	int db_sink;            /* index of the database in sinks, or -1 */
	int json_sink;          /* index of -J's writer in sinks, or -1 */
	volatile int json_said; /* say_json spoke */
	struct sd_runner *runner; /* while the plan runs */
	int abort_exit;         /* exit status of the verdict, once reached */
	volatile int announced; /* rank 0 said the verdict (announce hook) */
	volatile sig_atomic_t closing;  /* the writers are being closed */
	volatile sig_atomic_t draining; /* rank 0 runs scontrol: the last
				   resort waits (each call is bounded) */
	/* what rank_main's phases share */
	struct sd_plan plan;
	struct sd_runner run;
	struct sd_rank_info *ranks;   /* every rank, in rank order */
	struct sd_host_env *hosts;    /* rank 0: each host's environment */
	int nhost_env;
	int *host_of;                 /* each rank's host index */
	const char **host_names;      /* by host index */
	int nh;                       /* hosts */
	char uuid[37];
	struct sd_blame *blame;       /* rank 0 */
	struct sd_baseline baseline;  /* rank 0, --baseline */
	char *envs, *envjson;
	size_t *lens, *offs;
	int finished;                 /* finish_run ran */
	int agreed;                   /* every rank said it was done */
};

/* The last resort: a rank whose main thread is stuck inside a library
 * call (or a planted stall) after a verdict ends here, a moment later. */
#define LAST_RESORT_S 2

static void *last_resort(void *arg)
{
	struct run_ctx *c = arg;
	sleep(LAST_RESORT_S);
	while (c->draining)
		sleep(1);
	fflush(stdout);
	fflush(stderr);
	_exit(c->abort_exit);
}

/* Rank 0, after the run's end: whether -J's document was written, said
 * once, and "written" only when it is at its path. */
static void say_json(struct run_ctx *c)
{
	const char *why;
	if (c->json_sink < 0 || c->json_said)
		return;
	c->json_said = 1;
	const struct sd_sink *s = &c->sinks.v[c->json_sink];
	if (sd_ncclj_sink_result(s, &why))
		fprintf(c->opt.format == SD_FORMAT_JSON ? stderr : stdout,
			"# nccl-tests JSON written to %s\n",
			sd_ncclj_sink_path(s));
	else
		fprintf(stderr, "shakedown: warning: -J %s was not written: "
			"%s\n", sd_ncclj_sink_path(s),
			why ? why : "the run did not end");
}

/* Rank 0: record the end of a run the main thread does not finish
 * (a verdict, or a cancellation past its grace), from another thread. */
static void record_end(struct run_ctx *c, int exit_status, const char *msg)
{
	struct sd_run_end e = {
		.status = exit_status == SD_EXIT_CANCELLED ? "cancelled"
							   : "failed",
		.exit_status = exit_status,
		.message = msg,
		.finished_at = sd_wall_now() };
	struct sd_event ev = { .kind = SD_EVENT_RUN_END, .end = &e };
	sd_sinks_emit(&c->sinks, &ev);
	say_json(c);
}

/* The control plane reached a verdict: say why (where it was decided),
 * record the end of the run, stop the backend, and arm the last resort.
 * The main thread then unwinds and exits with the same status. */
/* The verdict's exit status and words: while the ranks stop for a
 * signal, one that leaves first is not a lost node, the run was
 * cancelled. */
static const char *verdict_words(int status, const char *msg, int *exit_status,
				 char *why, size_t len)
{
	*exit_status = sd_exit_for_status(status);
	if (cancel_flag && *exit_status != SD_EXIT_CANCELLED) {
		snprintf(why, len, "cancelled by a signal (%s, while the ranks "
			 "stopped)", msg);
		*exit_status = SD_EXIT_CANCELLED;
		return why;
	}
	return msg;
}

/* Rank 0 reached a verdict: say it before the others are told.  Under
 * srun -K the first rank to leave ends the step, and rank 0's line must
 * be out by then. */
static void on_announce(void *arg, int status, const char *msg)
{
	struct run_ctx *c = arg;
	char why[600];
	int ex;
	fprintf(stderr, "shakedown: %s\n",
		verdict_words(status, msg, &ex, why, sizeof(why)));
	c->announced = 1;
}

static void on_abort(void *arg, int status, const char *msg, int decided_here)
{
	struct run_ctx *c = arg;
	pthread_t th;
	char why[600];
	msg = verdict_words(status, msg, &c->abort_exit, why, sizeof(why));
	if (decided_here && !c->announced)
		fprintf(stderr, "shakedown: %s\n", msg);
	if (c->boot->bs.rank == 0 && c->ctrl &&
	    c->abort_exit != SD_EXIT_CANCELLED) {
		/* the ranks the verdict named: their nodes are suspects */
		int ranks[64];
		char hosts[64][64];
		int n = sd_ctrl_blamed(c->ctrl, ranks, hosts, 64);
		struct sd_suspect_info sus[64];
		int ns = 0;
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
		struct sd_event ev = { .kind = SD_EVENT_SUSPECTS,
				       .suspects = sus, .n = (size_t)ns };
		if (ns)
			sd_sinks_emit(&c->sinks, &ev);
	}
	if (c->boot->bs.rank == 0)
		record_end(c, c->abort_exit, msg);
	/* the backstop first: stopping the backend may itself stall */
	if (pthread_create(&th, NULL, last_resort, c) == 0)
		pthread_detach(th);
	if (c->runner)
		sd_runner_abort(c->runner);
	else if (c->plugin.ops && c->plugin.ops->abort && c->comm)
		c->plugin.ops->abort(c->comm);
}

/* How long one scontrol call of --drain may take: the plan's timeout, 1
 * to 10 s (the other ranks wait about twice the timeout for rank 0). */
static int drain_limit_s(const struct sd_plan *p)
{
	int s = p->timeout_ms / 1000;
	return s < 1 ? 1 : s > 10 ? 10 : s;
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

/* How long the ranks may take to stop for a signal at the next
 * measurement boundary before a measurement is cut short mid-way: short
 * of Slurm's KillWait (30 s by default, often set to a few seconds), after
 * which SIGKILL would leave the run unrecorded. */
#define CANCEL_GRACE_S 2

/* The cancellation watchdog: a signal asks the ranks to stop at the next
 * measurement boundary; a measurement of 100,000 iterations would not get
 * there in time (Slurm's KillWait is 30 s, often less).  After the grace,
 * rank 0 records the run as cancelled (the open test as cut short), every
 * rank stops its backend and leaves with exit status 5; the other ranks
 * a second later, so that rank 0's record comes first. */
static void *cancel_watch(void *arg)
{
	struct run_ctx *c = arg;
	while (!cancel_flag)
		sem_wait(&cancel_sem); /* EINTR or a post: look again */
	int rank = c->boot ? c->boot->bs.rank : 0;
	sleep(CANCEL_GRACE_S + (rank == 0 ? 0 : 1));
	if (rank == 0 && !c->closing) {
		char msg[300];
		snprintf(msg, sizeof(msg), "cancelled by a signal; a measurement "
			 "was cut short mid-way after %d s; completed "
			 "measurements are kept", CANCEL_GRACE_S);
		fprintf(stderr, "shakedown: %s\n", msg);
		record_end(c, SD_EXIT_CANCELLED, msg);
	}
	if (c->runner)
		sd_runner_abort(c->runner);
	fflush(stdout);
	fflush(stderr);
	_exit(SD_EXIT_CANCELLED);
	return NULL;
}

/* A progress line on a terminal, on rank 0. */
static void show_progress(void *arg, size_t index, size_t count,
			  const struct sd_test_info *t)
{
	fprintf(stderr, "\r\033[K[%zu/%zu] %s %s ", index + 1, count, t->name,
		sd_dtype_name(t->dtype));
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
	sem_init(&cancel_sem, 0, 0);
	pthread_t watch;
	if (pthread_create(&watch, NULL, cancel_watch, c) == 0)
		pthread_detach(watch);
	c->db_sink = -1;
	c->json_sink = -1;
	c->sinks.warn = sd_job_warn;
	return sd_job_rank_open(&c->boot, on_cancel, &c->fault);
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
		snprintf(extra, sizeof(extra), "|%s|%d", o->backend,
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
	struct sd_bootstrap *bs = &c->boot->bs;
	char err[1024] = "";
	int rc, status = SD_EXIT_ENV;

	/* the backend, which must run every test of the plan */
	struct sd_comm_config cfg = { .timeout_ms = c->plan.timeout_ms,
				      .iface = o->iface };
	if ((status = sd_job_backend_open(c->boot, o->backend, &cfg,
					  check_plan, &c->plan, &c->plugin,
					  &c->comm)))
		return status;
	rc = sd_ctrl_start(bs, c->plan.timeout_ms, &c->ctrl, err, sizeof(err));
	if (rc)
		sd_rank_error(bs, "", err);
	if (!rc) {
		sd_ctrl_set_abort_hook(c->ctrl, on_abort, c);
		sd_ctrl_set_announce_hook(c->ctrl, on_announce, c);
	}
	return sd_agree(c->boot, rc ? sd_exit_for_status(rc) : 0);
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

/* The writers (rank 0: the table, the database, -J, the baseline), every
 * rank agreeing, then the run's first record.  0, or the exit status. */
/* Rank 0: every host's environment, each its own copy (the pieces lie
 * back to back: a NUL written in place would cut the next).  SD_OK or
 * SD_ERR_NOMEM. */
static int host_envs(struct run_ctx *c)
{
	int size = c->boot->bs.size;
	c->hosts = calloc((size_t)size, sizeof(*c->hosts));
	if (!c->hosts)
		return SD_ERR_NOMEM;
	for (int r = 0; r < size; r++) {
		struct sd_host_env *h = &c->hosts[c->nhost_env];
		if (!c->lens[r])
			continue;
		sd_strlcpy(h->host, c->ranks[r].host, sizeof(h->host));
		h->json = strndup(c->envs + c->offs[r], c->lens[r]);
		if (!h->json)
			return SD_ERR_NOMEM;
		c->nhost_env++;
	}
	return SD_OK;
}

/* Rank 0: the writers (the printer, the database, -J's document) and the
 * baseline, before any test runs.  SD_OK, or a status said on stderr. */
static int open_writers(struct run_ctx *c)
{
	struct sd_run_options *o = &c->opt;
	char err[1024] = "";
	struct sd_sink *next = &c->sinks.v[c->sinks.n];
	int rc = sd_text_sink_open(o->format, o->ds_raw, stdout, next);
	if (rc)
		return rc;
	c->sinks.n++;
	next = &c->sinks.v[c->sinks.n];
	if ((rc = sd_db_sink_open(o->db, c->cmdline, next, err,
				  sizeof(err)))) {
		fprintf(stderr, "shakedown: %s\n", err);
		return rc;
	}
	if (next->ops) {
		const char *note = sd_db_sink_note(next);
		if (note)
			fprintf(stderr, "shakedown: note: %s\n", note);
		c->db_sink = c->sinks.n++;
	}
	next = &c->sinks.v[c->sinks.n];
	if (o->json_file) {
		if ((rc = sd_ncclj_sink_open(o->json_file, &c->plan, next, err,
					     sizeof(err)))) {
			fprintf(stderr, "shakedown: %s\n", err);
			return rc;
		}
		c->json_sink = c->sinks.n++;
	}
	if (!o->baseline)
		return SD_OK;
	if ((rc = sd_db_baseline_load(o->db, o->baseline, &c->baseline, err,
				      sizeof(err)))) {
		fprintf(stderr, "shakedown: --baseline %s: %s\n", o->baseline,
			err);
		return rc;
	}
	int expects = 0;
	for (size_t i = 0; i < c->plan.ntests; i++)
		expects |= c->plan.tests[i].expect.baseline > 0;
	if (!expects)
		fprintf(stderr, "shakedown: note: --baseline %s: no test of the "
			"plan expects a baseline (expect: {baseline: 0.9}); "
			"nothing is judged by it\n", o->baseline);
	return SD_OK;
}

static int begin_record(struct run_ctx *c)
{
	struct sd_bootstrap *bs = &c->boot->bs;
	int rc = SD_OK, status;

	sd_uuid4(c->uuid);
	if (bs->rank == 0 && !(rc = host_envs(c)))
		rc = open_writers(c);
	if ((status = sd_agree(c->boot, rc ? sd_exit_for_status(rc) : 0)))
		return status;
	if (bs->rank != 0)
		return 0;
	struct sd_run_info info = {
		.started_at = sd_wall_now(),
		.command_line = c->cmdline,
		.plan_text = c->plan.text,
		.plan_hash = c->plan.hash,
		.tool_version = PACKAGE_VERSION,
		.backend = c->plugin.ops->name,
		.backend_version = c->plugin.ops->version
					   ? c->plugin.ops->version : "",
		.user = sd_job_user(),
		.nranks = bs->size,
		.job = &c->boot->job,
		.ranks = c->ranks,
		.nhosts = c->nhost_env,
		.hosts = c->hosts,
		.plan_name = c->plan.name,
	};
	sd_strlcpy(info.uuid, c->uuid, sizeof(info.uuid));
	struct sd_event ev = { .kind = SD_EVENT_RUN_BEGIN, .run = &info };
	sd_sinks_emit(&c->sinks, &ev);
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
	c->run = (struct sd_runner){
		.plan = &c->plan, .bs = bs, .ops = c->plugin.ops, .comm = c->comm,
		.host_of = c->host_of,
		.iface = o->iface, .ctrl = c->ctrl,
		.sinks = bs->rank == 0 ? &c->sinks : NULL, .fault = &c->fault,
		.cancel = &cancel_flag,
		.on_test = bs->rank == 0 && o->progress ? show_progress : NULL,
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
	if (bs->rank == 0 && o->progress)
		fprintf(stderr, "\r\033[K");
	/* every result is in: from here no rank is blamed any more */
	if (sd_ctrl_quiesce(c->ctrl)) {
		/* the verdict: said and recorded by on_abort */
		status = c->abort_exit;
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

/* How the run ended, told once: rank 0 says it, records its end (or
 * says what could not be recorded: exit status 7), drains the bad nodes
 * with --drain; every rank takes rank 0's word; rank 0 uploads the
 * report with --upload.  Returns the exit status. */
/* The bad nodes of a failed verdict as a Slurm hostlist (malloc'd), or
 * NULL when none or out of memory; *nbad says how many. */
static char *bad_node_list(const struct run_ctx *c, int *nbad)
{
	unsigned char *bad = calloc((size_t)c->nh + 1, 1);
	const char **names = calloc((size_t)c->nh + 1, sizeof(*names));
	int k = 0;
	*nbad = bad ? sd_blame_bad_hosts(c->blame, bad) : 0;
	for (int h = 0; names && bad && h < c->nh; h++)
		if (bad[h])
			names[k++] = c->host_names[h];
	char *list = names && *nbad ? sd_hostlist_compress(names, k) : NULL;
	free(names);
	free(bad);
	return list;
}

/* Rank 0: runs.status for the exit status, with msg saying why the run
 * did not pass (also on stderr). */
static const char *end_words(const struct run_ctx *c, int status, char *msg,
			     size_t len)
{
	const char *st = "passed";
	if (status == SD_EXIT_CANCELLED) {
		st = "cancelled";
		snprintf(msg, len, "cancelled by a signal; cut short during %s; "
			 "completed measurements are kept", c->run.cut_short);
	} else if (status == SD_EXIT_CHECK) {
		st = "failed";
		snprintf(msg, len, "%d test%s had wrong data",
			 c->run.wrong_tests,
			 c->run.wrong_tests == 1 ? "" : "s");
	} else if (status == SD_EXIT_VERDICT) {
		int nbad;
		char *list = bad_node_list(c, &nbad);
		int n = c->run.failed_subjects;
		st = "failed";
		snprintf(msg, len, "%d subject%s failed %s expectations; bad "
			 "nodes: %s", n, n == 1 ? "" : "s", n == 1 ? "its"
			 : "their", nbad ? (list ? list : "?")
			 : "none (see the suspects)");
		free(list);
	}
	if (msg[0])
		fprintf(stderr, "shakedown: %s\n", msg);
	return st;
}

/* Rank 0: the run's end to every writer.  Never say recorded what was
 * not: what failed is written again first, and what still lacks is
 * said, with status 7.  Returns the exit status. */
static int record_run_end(struct run_ctx *c, int status)
{
	struct sd_run_options *o = &c->opt;
	char msg[400] = "", lack[700] = "";
	const char *st = end_words(c, status, msg, sizeof(msg));
	struct sd_sink *db = c->db_sink >= 0 ? &c->sinks.v[c->db_sink] : NULL;
	if (db) {
		sd_db_sink_flush(db);
		if (sd_db_sink_incomplete(db, lack, sizeof(lack)) &&
		    (status == SD_EXIT_OK || status == SD_EXIT_VERDICT)) {
			status = SD_EXIT_RECORD;
			st = "error";
			snprintf(msg + strlen(msg), sizeof(msg) - strlen(msg),
				 "%s%.300s", msg[0] ? "; " : "", lack);
		}
	}
	struct sd_run_end e = { .status = st, .exit_status = status,
				.message = msg[0] ? msg : NULL,
				.finished_at = sd_wall_now() };
	struct sd_event ev = { .kind = SD_EVENT_RUN_END, .end = &e };
	sd_sinks_emit(&c->sinks, &ev);
	if (db && sd_db_sink_incomplete(db, lack, sizeof(lack)))
		fprintf(stderr, "shakedown: %s\n", lack);
	else if (db)
		fprintf(o->format == SD_FORMAT_JSON ? stderr : stdout,
			"# results recorded in %s (run %s); 'shakedown report' "
			"shows them\n", sd_db_sink_path(db), c->uuid);
	say_json(c);
	return status;
}

/* Rank 0, --upload: the run's report to the collector. */
static void upload(struct run_ctx *c)
{
	struct sd_run_options *o = &c->opt;
	char err[1024] = "";
	const char *db = c->db_sink >= 0
				 ? sd_db_sink_path(&c->sinks.v[c->db_sink])
				 : NULL;
	if (!db)
		fprintf(stderr, "shakedown: warning: --upload needs the results "
			"database (not --db none); the report was not sent\n");
	else if (sd_upload_after_run(db, c->uuid, o->upload_url, o->token_file,
				     o->cacert, err, sizeof(err)))
		fprintf(stderr, "shakedown: warning: %s\n", err);
}

static int finish_run(struct run_ctx *c, int status)
{
	struct sd_run_options *o = &c->opt;
	struct sd_bootstrap *bs = &c->boot->bs;
	int rc;
	if (bs->rank == 0)
		status = record_run_end(c, status);
	/* drain while the other ranks wait for rank 0's word (a rank that
	 * leaves first makes srun -K or the launcher stop rank 0): each
	 * scontrol call is bounded by the plan's timeout, well inside their
	 * patience */
	if (bs->rank == 0 && o->drain && c->blame)
		sd_drain_bad_nodes(c->blame, c->nh, c->host_names, c->uuid,
				   drain_limit_s(&c->plan));
	if ((rc = sd_ctrl_finish(c->ctrl, &status)))
		/* rank 0 went away before it said how the run ended */
		status = c->abort_exit ? c->abort_exit : sd_exit_for_status(rc);
	else
		c->agreed = 1;
	c->finished = 1;
	if (bs->rank == 0 && o->upload_url)
		upload(c);
	return status;
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
	    c->abort_exit && c->uuid[0]) {
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
		c->draining = 1;
		if (sd_drain_hosts(named, why, k, c->uuid, drain_limit_s(&c->plan)))
			fprintf(stderr, "shakedown: drain them later with "
				"'shakedown report --bad-nodes --drain %s'\n",
				c->uuid);
		c->draining = 0;
	}
	c->closing = 1;
	sd_sinks_close(&c->sinks);
	c->db_sink = -1;
	c->json_sink = -1;
	sd_ctrl_destroy(c->ctrl);
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
	    !(status = exchange_ranks(c)) && !(status = begin_record(c)) &&
	    !run_plan(c, &status))
		status = finish_run(c, status);
	return close_rank(c, status);
}

int cmd_run(int argc, char **argv)
{
	static struct run_ctx ctx;
	memset(&ctx, 0, sizeof(ctx));
	sd_run_options_init(&ctx.opt);
	int rc = parse_options(argc, argv, &ctx.opt);
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
	return sd_job_launch("run", ctx.opt.local_ranks, ctx.opt.backend,
			     round_ms + 5000, rank_main, &ctx);
}
