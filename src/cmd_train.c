/*
 * cmd_train.c - `shakedown train`: the built-in fine-tuning workload, a
 * small GPT-2-style model trained data-parallel on every rank, measured
 * (tgs, TFLOPs, MFU, the step-time breakdown), its loss curve judged
 * against a reference, and recorded.
 *
 * Started like `shakedown gemm` (forked by --local, under srun through
 * PMI2, or alone): every rank bootstraps, loads the backend and builds
 * the world communicator.  Every rank initialises the same parameters
 * from the same seed (lib/train/gpt.h) and trains on its own shard of
 * each step's global batch (lib/train/data.h: R ranks see the samples 1
 * rank would see).  A step is accum micro-steps of forward and backward;
 * on the last one the gradients are all-reduced in DDP-style buckets
 * (lib/train/ddp.h), each started from backward's grad_ready callback as
 * soon as the bucket is complete, then AdamW takes the mean over the
 * global batch.  After each step the ranks exchange their step's loss
 * and times through the bootstrap's allgather (which also stops them all
 * together when one fails or the loss is no longer finite); rank 0 keeps
 * every rank's rows, prints progress, hands the rows to the recorder
 * (lib/db/train_db.h), and at the end summarises (lib/train/metrics.h),
 * judges the loss curve against the reference and each rank's compute
 * time against its peers, prints, records, and says the exit status,
 * which every rank returns.
 *
 * With the nccl backend the model runs on the rank's GPU instead: the
 * plugin's shakedown_train_gpu table (include/shakedown/train_gpu.h, looked up with
 * dlsym) makes it from the same initial weights, and the buckets'
 * all_reduce runs on its device gradients, on the stream its kernels use.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dlfcn.h>
#include <unistd.h>

#include "bootstrap.h"
#include "commands.h"
#include "fault.h"
#include "gemm.h"
#include "hostlist.h"
#include "names.h"
#include "plugin.h"
#include "job.h"
#include "job_options.h"
#include "ranks.h"
#include "sink.h"
#include "tool.h"
#include "train_print.h"
#include "util.h"
#include "verdict.h"
#include "db/db.h"
#include "db/named.h"
#include "db/train_db.h"
#include "train/data.h"
#include "train/ddp.h"
#include "train/loop.h"
#include "train/gpt.h"
#include "shakedown/train_gpu.h"
#include "train/metrics.h"
#include "train/reference.h"

/* a usage error of `shakedown train` (src/ranks.h) */
/* The default bound of start-up and of one all_reduce. */
#define TRAIN_TIMEOUT_MS 60000
/* A rank whose compute time per step is above this many times the
 * median of the other ranks' is a slow rank.  Measured
 * (bench/train_slow_spread.sh, bench/README-train.md): healthy runs of the
 * test config on a 2-core machine under load reach 1.22 (2 ranks) and
 * 1.41 (4 ranks, two to a core), 2 of 80 above 1.25 and none above 1.5. */
#define TRAIN_SLOW_FACTOR 1.5
/* Hand the rows to the recorder at least this often (seconds). */
#define TRAIN_RECORD_EVERY_S 2.0

enum train_format { TRAIN_TEXT = 0, TRAIN_JSON };

struct train_options {
	struct sd_job_options job; /* --local --backend --iface --timeout --db */
	const char *data, *reference, *save_reference;
	const char *config_name;      /* "default" or "test" */
	struct sd_gpt_config cfg;     /* after the overrides; its
					 micro_batch and accum_steps this
					 rank's split (sd_gpt_split) */
	int overridden;               /* an override changed the model
					 or the global batch */
	long global_batch;            /* sequences a step, all ranks */
	long micro_req, accum_req;    /* --micro-batch, --accum; 0: none */
	long steps, warmup, seed;
	int warmup_given;             /* --warmup was given */
	double peak_tflops;           /* 0: measure */
	double slow_factor;
	enum train_format format;
	int progress;
};

/* What rank 0 knows at the end. */
struct train_outcome {
	const struct sd_rank_info *ranks;
	int nranks;
	struct sd_train_step *job;     /* steps done */
	struct sd_train_report *reps;      /* steps x nranks */
	long done;
	struct sd_train_summary sum;
	int summarized;
	struct sd_train_comparison cmp;
	int compared;
	double *compute_mean;          /* per rank, over the timed steps */
	double *compute_ratio;         /* per rank, over the other ranks'
					  median (sd_above_median) */
	double compute_median;
	unsigned char *slow;           /* per rank: compute above the bound */
	int nslow;
	char *slow_hosts;              /* hostlist of the slow ranks */
	char slow_which[400];
};

struct train_ctx {
	struct train_options opt;
	struct sd_fault fault;
	char cmdline[4096];
	char config[512];        /* the workload's identity */
	struct sd_bootstrap_impl *boot;
	struct sd_plugin plugin;
	struct sd_comm *comm;
	struct sd_train_rec *rec;
	struct sd_train_reference ref;
	int have_ref;
	char ref_label[700];     /* "gpt-test-cpu (file PATH)" */
	char ref_note[1024];     /* why there is none, or "" */
	double peak;             /* TFLOPs per device; 0 unknown */
	char peak_how[200];      /* how a measured peak was measured */
	enum sd_train_origin peak_origin;
	/* the GPU path (--backend nccl): the plugin's table and this
	 * rank's model; NULL on the CPU path */
	const struct sd_train_gpu_ops *gpu;
	struct sd_train_gpu *gm;
	struct sd_gpt_tensor *gpu_tensors; /* its table (gpt.c's) */
	int gpu_nt;
	/* what train_main's phases share */
	char uuid[37];
	int lost;                    /* a rank was lost */
	struct sd_rank_info *ranks;  /* every rank, in rank order */
	struct sd_gpt *model;        /* the CPU model */
	struct sd_data *data;
	int *inputs, *targets;       /* one micro-batch */
	struct sd_train_report *all; /* a step's reports, every rank's */
	struct sd_train_rank *ddp;   /* this rank's side of a step */
	struct train_outcome g;      /* rank 0 */
	double floor_loss;
	long recorded;               /* steps handed to the recorder */
	struct sd_job_guard guard;   /* the control plane, the watchdog */
	/* the recorder is used by the main thread and by the guard's
	 * (a verdict's record, from the control plane's thread) */
	pthread_mutex_t rec_mu;
	int loop_status;             /* how the steps ended, for rank 0 */
	const char *why;
};

/* a signal asks the ranks to stop (the job's guard, job.h) */
#define cancel_flag sd_job_cancelled()

enum long_only {
	OPT_STEPS = 256, OPT_CONFIG,
	OPT_LAYERS, OPT_WIDTH, OPT_HEADS, OPT_SEQ, OPT_MICRO, OPT_ACCUM,
	OPT_DATA, OPT_SEED, OPT_WARMUP, OPT_REFERENCE, OPT_SAVE_REF, OPT_PEAK,
	OPT_SLOW, OPT_FORMAT, OPT_NO_PROGRESS, OPT_GLOBAL,
};

/* train's own options, after the shared ones (job_options.h) */
static const struct option own_options[] = {
	{ "steps", required_argument, NULL, OPT_STEPS },
	{ "config", required_argument, NULL, OPT_CONFIG },
	{ "layers", required_argument, NULL, OPT_LAYERS },
	{ "width", required_argument, NULL, OPT_WIDTH },
	{ "heads", required_argument, NULL, OPT_HEADS },
	{ "seq-len", required_argument, NULL, OPT_SEQ },
	{ "micro-batch", required_argument, NULL, OPT_MICRO },
	{ "accum", required_argument, NULL, OPT_ACCUM },
	{ "global-batch", required_argument, NULL, OPT_GLOBAL },
	{ "data", required_argument, NULL, OPT_DATA },
	{ "seed", required_argument, NULL, OPT_SEED },
	{ "warmup", required_argument, NULL, OPT_WARMUP },
	{ "reference", required_argument, NULL, OPT_REFERENCE },
	{ "save-ref", required_argument, NULL, OPT_SAVE_REF },
	{ "peak-tflops", required_argument, NULL, OPT_PEAK },
	{ "slow-factor", required_argument, NULL, OPT_SLOW },
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ "no-progress", no_argument, NULL, OPT_NO_PROGRESS },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 }
};

/* Parse argv into o.  Returns -1 to go on, else an exit status. */
static int parse_options(int argc, char **argv, struct train_options *o)
{
	static const struct sd_name_row formats[] = {
		{ "text", TRAIN_TEXT }, { "json", TRAIN_JSON }, { NULL, 0 }
	};
	int ch, f;
	const char *hint;
	char oerr[256];
	/* the overrides, applied after --config whatever the order */
	long layers = -1, width = -1, heads = -1, seq = -1, micro = -1,
	     accum = -1;
	const struct {
		int opt;
		long *var, lo, hi;
		const char *what;
	} overrides[] = {
		{ OPT_LAYERS, &layers, 1, 64, "a number of blocks" },
		{ OPT_WIDTH, &width, 1, 8192, "a model width" },
		{ OPT_HEADS, &heads, 1, 256, "a number of heads" },
		{ OPT_SEQ, &seq, 1, 8192, "a sequence length" },
		{ OPT_MICRO, &micro, 1, 4096,
		  "a number of samples per micro-batch" },
		{ OPT_ACCUM, &accum, 1, 4096,
		  "a number of micro-batches per step" },
	};
	opterr = 0;
	optind = 1;
	struct option rows[SD_JOB_OPTION_ROWS + SD_ROWS(own_options)];
	const struct option *opts = SD_JOB_ROWS("train", own_options, rows);
	while ((ch = sd_job_getopt(argc, argv, ":T:h", opts, &o->job, oerr,
				   sizeof(oerr))) != -1) {
		switch (ch) {
		case SD_OPT_REFUSED:
			return sd_usage_error("train", "%s", oerr);
		case OPT_STEPS:
			if (sd_parse_int(optarg, 1, 1000000, &o->steps))
				return sd_usage_error("train", "--steps '%s' must be a number of "
					    "optimizer steps from 1 to 1000000",
					    optarg);
			break;
		case OPT_CONFIG:
		{
			struct sd_gpt_config named;
			char why[200];
			if (sd_gpt_config_named(optarg, &named, why,
						sizeof(why)))
				return sd_usage_error("train", "--%s", why);
			o->config_name = optarg;
			break;
		}
		case OPT_LAYERS: case OPT_WIDTH: case OPT_HEADS: case OPT_SEQ:
		case OPT_MICRO: case OPT_ACCUM:
			for (size_t k = 0;
			     k < sizeof(overrides) / sizeof(overrides[0]); k++) {
				if (overrides[k].opt != ch)
					continue;
				if (sd_parse_int(optarg, overrides[k].lo,
						 overrides[k].hi,
						 overrides[k].var))
					return sd_usage_error(
						"train",
						"%s '%s' must be %s from %ld "
						"to %ld",
						argv[optind - 1][1] == '-'
							? argv[optind - 1]
							: "option",
						optarg, overrides[k].what,
						overrides[k].lo,
						overrides[k].hi);
			}
			break;
		case OPT_GLOBAL:
			if (sd_parse_int(optarg, 1, SD_GPT_GLOBAL_BATCH_MAX,
					 &o->global_batch))
				return sd_usage_error("train", "--global-batch '%s' must be "
					    "a number of sequences a step from "
					    "1 to %ld", optarg,
					    SD_GPT_GLOBAL_BATCH_MAX);
			break;
		case OPT_DATA: o->data = optarg; break;
		case OPT_SEED:
			if (sd_parse_int(optarg, 0, 1L << 62, &o->seed))
				return sd_usage_error("train", "--seed '%s' must be a number from 0",
					    optarg);
			break;
		case OPT_WARMUP:
			if (sd_parse_int(optarg, 0, 1000000, &o->warmup))
				return sd_usage_error("train", "--warmup '%s' must be a number of "
					    "steps from 0", optarg);
			o->warmup_given = 1;
			break;
		case OPT_REFERENCE: o->reference = optarg; break;
		case OPT_SAVE_REF: o->save_reference = optarg; break;
		case OPT_PEAK:
			if (sd_parse_amount(optarg, 1e6, 0, &o->peak_tflops))
				return sd_usage_error("train", "--peak-tflops '%s' must be a number "
					    "of TFLOPs per device above 0",
					    optarg);
			break;
		case OPT_SLOW:
			if (sd_parse_amount(optarg, 1e6, 0, &o->slow_factor) ||
			    o->slow_factor <= 1)
				return sd_usage_error("train", "--slow-factor '%s' must be a ratio "
					    "above 1 (1.5: a rank 50%% slower "
					    "than the others' median fails)",
					    optarg);
			break;
		case OPT_FORMAT:
			hint = NULL;
			if (sd_name_lookup(formats, optarg, &f, &hint))
				return sd_usage_error("train", "--format '%s' must be text or "
					    "json%s%s%s", optarg,
					    hint ? "; did you mean '" : "",
					    hint ? hint : "", hint ? "'?" : "");
			o->format = (enum train_format)f;
			break;
		case OPT_NO_PROGRESS: o->progress = 0; break;
		case 'h':
			sd_help_print(stdout, sd_help_train);
			return sd_finish_stdout();
		case ':':
		default:
			return sd_option_error("train", ch, argv);
		}
	}
	if (optind < argc)
		return sd_usage_error("train", "unexpected argument '%s'; see 'shakedown help "
			    "train'", argv[optind]);
	sd_gpt_config_named(o->config_name, &o->cfg, NULL, 0);
	struct sd_gpt_config base = o->cfg;
	if (layers > 0) o->cfg.layers = (int)layers;
	if (width > 0) o->cfg.width = (int)width;
	if (heads > 0) o->cfg.heads = (int)heads;
	if (seq > 0) o->cfg.seq_len = (int)seq;
	/* how the global batch is split changes no sum but their order:
	 * not the workload */
	o->micro_req = micro > 0 ? micro : 0;
	o->accum_req = accum > 0 ? accum : 0;
	long named = sd_gpt_global_batch_named(o->config_name);
	o->overridden = memcmp(&base, &o->cfg, sizeof(base)) != 0 ||
			(o->global_batch && o->global_batch != named);
	if (!o->global_batch)
		o->global_batch = named;
	char err[300];
	if (sd_gpt_config_check(&o->cfg, err, sizeof(err)) != SD_OK)
		return sd_usage_error("train", "%s", err);
	if (o->save_reference && o->reference &&
	    strcmp(o->reference, "none") != 0)
		return sd_usage_error("train", "--save-ref makes a reference from this run; "
			    "drop --reference (or give --reference none)");
	sd_job_options_end(&o->job);
	return -1;
}

/* The run's arithmetic, a word of its identity: bf16 GEMMs on a GPU
 * (the nccl backend), else fp32 on a CPU. */
static const char *run_arith(const struct train_options *o)
{
	return o->job.backend && strcmp(o->job.backend, "nccl") == 0
		       ? "bf16-gpu"
		       : "fp32-cpu";
}

/* The workload's identity, what a reference must match: the model, the
 * global batch (not how it is split over ranks), the data source, the
 * optimizer and the seed; then the arithmetic (fp32 on a CPU, bf16 GEMMs
 * on a GPU), which decides how closely the curve must follow
 * (sd_train_ref_identity). */
static void config_string(const struct train_options *o, char *buf,
			  size_t len)
{
	const struct sd_gpt_config *g = &o->cfg;
	const char *base = o->data ? strrchr(o->data, '/') : NULL;
	char data[300];
	if (o->data)
		snprintf(data, sizeof(data), "file:%.200s",
			 base ? base + 1 : o->data);
	else
		snprintf(data, sizeof(data), "markov-%d-%d",
			 SD_MARKOV_ORDER_DEFAULT, SD_MARKOV_BRANCHING_DEFAULT);
	struct sd_adamw a = SD_ADAMW_DEFAULT;
	snprintf(buf, len, "gpt2 layers=%d width=%d heads=%d seq=%d vocab=%d "
		 "batch=%ld data=%s adamw=%g,%g,%g,%g seed=%ld arith=%s",
		 g->layers, g->width, g->heads, g->seq_len, g->vocab,
		 o->global_batch, data, (double)a.lr, (double)a.beta1,
		 (double)a.beta2, (double)a.weight_decay, o->seed,
		 run_arith(o));
}

/* ------------------------------------------------------- the reference */

/* Rank 0: find the reference the run is judged by.  SD_OK (c->have_ref,
 * or c->ref_note saying why there is none), or a status with err. */
static int find_reference(struct train_ctx *c, char *err, size_t errlen)
{
	const struct train_options *o = &c->opt;
	int rc;
	if (o->save_reference || (o->reference &&
				  strcmp(o->reference, "none") == 0)) {
		snprintf(c->ref_note, sizeof(c->ref_note), "not judged: %s",
			 o->save_reference ? "this run makes the reference"
					   : "--reference none");
		return SD_OK;
	}
	if (!o->reference) {
		/* the shipped one of the built-in config, when it fits */
		char name[64];
		snprintf(name, sizeof(name), "gpt-%s-cpu", o->config_name);
		if (o->overridden || o->data) {
			snprintf(c->ref_note, sizeof(c->ref_note), "not judged: "
				 "no shipped reference for a changed config or "
				 "--data; give --reference");
			return SD_OK;
		}
		if (strcmp(o->config_name, "1b") == 0) {
			snprintf(c->ref_note, sizeof(c->ref_note), "not judged: "
				 "the 1b config has no shipped reference (no CPU "
				 "can make one); make one with --save-ref on a "
				 "healthy GPU and give it with --reference");
			return SD_OK;
		}
		rc = sd_named_load_shipped(name, &c->ref, c->ref_label,
					   sizeof(c->ref_label), err, errlen);
		if (rc < 0) {
			snprintf(c->ref_note, sizeof(c->ref_note), "not judged: "
				 "the shipped reference %s.ref is not installed "
				 "in " SD_DATA_DIR "/plans/reference", name);
			return SD_OK;
		}
		if (rc)
			return rc;
		char why[300];
		enum sd_train_ref_match m =
			sd_train_ref_identity(c->ref.config, c->config, why,
					      sizeof(why));
		if (m == SD_REF_OTHER_WORKLOAD || m == SD_REF_OTHER_SEED) {
			snprintf(c->ref_note, sizeof(c->ref_note), "not judged: "
				 "the shipped reference %s is for '%.250s', "
				 "this run is '%.250s' (%s); make a reference "
				 "of this run's config with --save-ref and give "
				 "it with --reference", name, c->ref.config,
				 c->config, why);
			sd_train_ref_free(&c->ref);
			return SD_OK;
		}
		c->have_ref = 1;
		return SD_OK;
	}
	/* a file, a reference of the database, or a shipped one */
	return sd_named_find_reference(o->reference, o->job.db, 1, &c->ref,
				       c->ref_label, sizeof(c->ref_label),
				       &c->have_ref, err, errlen);
}

/* -------------------------------------------------- rank 0: the rows */

/* The job's row of a step from every rank's report. */
static struct sd_train_step job_row(const struct train_options *o,
				    const struct sd_train_report *all, int nranks,
				    long step)
{
	const struct sd_gpt_config *g = &o->cfg;
	struct sd_train_step s = {
		.step = step, .rank = -1,
		.has = SD_STEP_LOSS | SD_STEP_TIME | SD_STEP_TOKENS |
		       SD_STEP_COMPUTE | SD_STEP_COMM | SD_STEP_OPTIM,
		.tokens = (double)nranks * g->accum_steps * g->micro_batch *
			  g->seq_len };
	double loss = 0;
	for (int r = 0; r < nranks; r++) {
		loss += all[r].loss_sum;
		if (all[r].step_s > s.step_s)
			s.step_s = all[r].step_s;
		s.compute_s += all[r].compute_s / nranks;
		s.comm_s += all[r].comm_s / nranks;
		s.optim_s += all[r].optim_s / nranks;
	}
	s.loss = loss / ((double)nranks * g->accum_steps);
	if (!(s.step_s > 0))
		s.step_s = 1e-9;
	return s;
}

/* Rank r's own row of a step. */
static struct sd_train_step rank_row(const struct train_options *o,
				     const struct sd_train_report *rep, int r,
				     long step)
{
	const struct sd_gpt_config *g = &o->cfg;
	struct sd_train_step s = {
		.step = step, .rank = r,
		.has = SD_STEP_LOSS | SD_STEP_TIME | SD_STEP_TOKENS |
		       SD_STEP_COMPUTE | SD_STEP_COMM | SD_STEP_OPTIM,
		.loss = rep->loss_sum / g->accum_steps,
		.step_s = rep->step_s > 0 ? rep->step_s : 1e-9,
		.tokens = (double)g->accum_steps * g->micro_batch * g->seq_len,
		.compute_s = rep->compute_s, .comm_s = rep->comm_s,
		.optim_s = rep->optim_s };
	return s;
}

static void json_num(struct sd_buf *b, double v)
{
	sd_buf_json_num(b, v, 9);
}

static void print_step(const struct train_options *o, const char *uuid,
		       const struct sd_train_step *s)
{
	if (o->format == TRAIN_JSON) {
		struct sd_buf b = { 0 };
		sd_buf_printf(&b, "{\"run\":\"%s\",\"kind\":\"train_step\","
			      "\"step\":%ld,\"loss\":", uuid, s->step);
		json_num(&b, s->loss);
		sd_buf_printf(&b, ",\"step_s\":");
		json_num(&b, s->step_s);
		sd_buf_printf(&b, ",\"tokens\":%.0f,\"compute_s\":", s->tokens);
		json_num(&b, s->compute_s);
		sd_buf_printf(&b, ",\"comm_s\":");
		json_num(&b, s->comm_s);
		sd_buf_printf(&b, ",\"optim_s\":");
		json_num(&b, s->optim_s);
		sd_buf_printf(&b, "}\n");
		if (b.data)
			fputs(b.data, stdout);
		sd_buf_free(&b);
	} else {
		printf("step %5ld/%ld  loss %.4f  step %.4f s  %.0f tokens/s\n",
		       s->step, o->steps, s->loss, s->step_s,
		       s->tokens / s->step_s);
	}
	fflush(stdout);
}


/* Each rank's compute time per timed step against the median: the slow
 * ones (more than slow_factor times it, sd_above_median), flagged once in
 * g->slow for every view. */
static void judge_ranks(const struct train_options *o, struct train_outcome *g)
{
	int R = g->nranks;
	g->compute_mean = calloc((size_t)R, sizeof(double));
	g->slow = calloc((size_t)R, 1);
	g->compute_ratio = calloc((size_t)R, sizeof(double));
	const char **bad = calloc((size_t)R + 1, sizeof(*bad));
	if (!g->compute_mean || !g->slow || !g->compute_ratio || !bad)
		goto out;
	long first = 1 + o->warmup; /* the first timed step - 1 */
	long n = 0;
	for (long s = first; s < g->done; s++) {
		n++;
		for (int r = 0; r < R; r++)
			g->compute_mean[r] += g->reps[s * R + r].compute_s;
	}
	if (n == 0 || R < 2)
		goto out;
	for (int r = 0; r < R; r++)
		g->compute_mean[r] /= (double)n;
	if (sd_above_median(g->compute_mean, R, o->slow_factor,
			    g->compute_ratio, &g->compute_median, g->slow) <= 0)
		goto out;
	size_t wl = 0;
	for (int r = 0; r < R; r++) {
		if (!g->slow[r])
			continue;
		bad[g->nslow++] = g->ranks[r].host;
		if (wl < sizeof(g->slow_which))
			wl += (size_t)snprintf(g->slow_which + wl,
					       sizeof(g->slow_which) - wl,
					       "%srank %d (%s) compute %.2fx "
					       "the other ranks' median",
					       wl ? ", " : "", r,
					       g->ranks[r].host,
					       g->compute_ratio[r]);
	}
	if (g->nslow)
		g->slow_hosts = sd_hostlist_compress(bad, g->nslow);
out:
	free(bad);
}

static void print_summary_text(struct train_ctx *c, struct train_outcome *g,
			       double floor_loss)
{
	const struct train_options *o = &c->opt;
	const struct sd_train_summary *s = &g->sum;
	printf("# summary: %ld steps, %zu timed (the first never, then %ld "
	       "warm-up)\n", g->done, s->timed_rows, o->warmup);
	struct sd_train_print p = {
		.devices = g->nranks,
		.peak_part = c->peak_origin == SD_TRAIN_MEASURED
				     ? c->peak_how
				     : NULL,
		.logged_tflops = NAN,
		.megatron_fpt = sd_gpt_flops_megatron(&o->cfg),
		.floor_loss = floor_loss,
		.cmp = g->compared ? &g->cmp : NULL,
		.ref_label = c->ref_label,
		.ref_note = c->ref_note,
	};
	sd_train_summary_print(stdout, s, &p);
	if (g->compute_median > 0) {
		printf("  ranks          compute per step vs the other ranks' "
		       "median (all: %.4f s):", g->compute_median);
		for (int r = 0; r < g->nranks; r++)
			printf("%s %d %.2fx", r ? "," : "", r,
			       g->compute_ratio[r]);
		printf("\n");
	}
	if (g->nslow)
		printf("# FAILED slow rank: %s (> %.2fx); bad nodes: %s\n",
		       g->slow_which, o->slow_factor, g->slow_hosts);
}

static void print_summary_json(struct train_ctx *c, struct train_outcome *g,
			       const char *uuid, const char *status,
			       double floor_loss)
{
	const struct sd_train_summary *s = &g->sum;
	struct sd_buf b = { 0 };
	sd_buf_printf(&b, "{\"run\":\"%s\",\"kind\":\"train_summary\","
		      "\"config\":", uuid);
	sd_buf_json_string(&b, c->config);
	sd_buf_printf(&b, ",\"ranks\":%d,\"steps\":%ld,\"timed_steps\":%zu,"
		      "\"tgs\":", g->nranks, g->done, s->timed_rows);
	json_num(&b, s->tgs);
	sd_buf_printf(&b, ",\"tokens_per_s\":");
	json_num(&b, s->tokens_per_s);
	sd_buf_printf(&b, ",\"tflops\":");
	json_num(&b, s->tflops);
	sd_buf_printf(&b, ",\"flops_formula\":\"palm\",\"tflops_megatron\":");
	json_num(&b, s->flops_origin == SD_TRAIN_DERIVED
			     ? s->tflops * sd_gpt_flops_megatron(&c->opt.cfg) /
				       s->flops_per_token
			     : NAN);
	sd_buf_printf(&b, ",\"peak_tflops\":");
	json_num(&b, s->peak.tflops);
	sd_buf_printf(&b, ",\"peak_origin\":\"%s\",\"mfu\":",
		      sd_train_origin_name(s->peak.origin));
	json_num(&b, s->mfu);
	sd_buf_printf(&b, ",\"step_s_mean\":");
	json_num(&b, s->step_s_mean);
	sd_buf_printf(&b, ",\"compute_share\":");
	json_num(&b, s->compute_share);
	sd_buf_printf(&b, ",\"comm_share\":");
	json_num(&b, s->comm_share);
	sd_buf_printf(&b, ",\"optim_share\":");
	json_num(&b, s->optim_share);
	sd_buf_printf(&b, ",\"loss_first\":");
	json_num(&b, s->loss_first);
	sd_buf_printf(&b, ",\"loss_last\":");
	json_num(&b, s->loss_last);
	sd_buf_printf(&b, ",\"loss_floor\":");
	json_num(&b, floor_loss);
	if (g->compared) {
		sd_buf_printf(&b, ",\"reference\":");
		sd_buf_json_string(&b, c->ref.name);
		sd_buf_printf(&b, ",\"loss_var\":");
		json_num(&b, g->cmp.diff_var);
		sd_buf_printf(&b, ",\"loss_rmse\":");
		json_num(&b, g->cmp.rmse);
		sd_buf_printf(&b, ",\"loss_max_abs_diff\":");
		json_num(&b, g->cmp.max_abs_diff);
		sd_buf_printf(&b, ",\"loss_max_diff_step\":%ld,\"loss_check\":"
			      "\"%s\",\"loss_band\":", g->cmp.max_diff_step,
			      sd_train_verdict_name(g->cmp.verdict));
		sd_buf_json_string(&b, g->cmp.tol.says);
		sd_buf_printf(&b, ",\"loss_why\":");
		sd_buf_json_string(&b, g->cmp.reason);
	} else {
		sd_buf_printf(&b, ",\"reference\":null,\"loss_check\":null,"
			      "\"loss_why\":");
		sd_buf_json_string(&b, c->ref_note);
	}
	sd_buf_printf(&b, ",\"slow_ranks\":[");
	for (int r = 0, n = 0; g->slow && r < g->nranks; r++)
		if (g->slow[r])
			sd_buf_printf(&b, "%s%d", n++ ? "," : "", r);
	sd_buf_printf(&b, "],\"status\":\"%s\"}\n", status);
	if (b.data)
		fputs(b.data, stdout);
	sd_buf_free(&b);
}

/* Hand the rows of steps [from, to) to the recorder: the job's and each
 * rank's.  A failure is kept by the recorder and said at the end. */
static void record_rows(struct train_ctx *c, struct train_outcome *g,
			long from, long to)
{
	int R = g->nranks;
	size_t n = (size_t)(to - from) * (size_t)(R + 1);
	if (!c->rec || to <= from)
		return;
	struct sd_train_step *rows = calloc(n, sizeof(*rows));
	char err[512];
	if (!rows)
		return;
	size_t k = 0;
	for (long s = from; s < to; s++)
		rows[k++] = g->job[s];
	for (int r = 0; R > 1 && r < R; r++)
		for (long s = from; s < to; s++)
			rows[k++] = rank_row(&c->opt, &g->reps[s * R + r], r,
					     s + 1);
	/* SD_ERR_IO keeps them for the next write: finish says the rest */
	pthread_mutex_lock(&c->rec_mu);
	sd_train_rec_steps(c->rec, rows, k, err, sizeof(err));
	pthread_mutex_unlock(&c->rec_mu);
	free(rows);
}

/* What the summary and the record know of the run beyond its steps. */
static void run_facts(const struct train_ctx *c, int nranks,
		      const struct sd_rank_info *ranks,
		      struct sd_train_facts *f)
{
	const struct sd_gpt_config *g = &c->opt.cfg;
	sd_train_facts_init(f);
	f->devices = (struct sd_train_fact){ nranks, SD_TRAIN_WORKLOAD };
	f->seq_len = (struct sd_train_fact){ g->seq_len, SD_TRAIN_WORKLOAD };
	f->tokens_per_step = (struct sd_train_fact){
		(double)nranks * g->accum_steps * g->micro_batch * g->seq_len,
		SD_TRAIN_WORKLOAD };
	f->params = (struct sd_train_fact){ (double)sd_gpt_param_count(g),
					    SD_TRAIN_WORKLOAD };
	f->layers = (struct sd_train_fact){ g->layers, SD_TRAIN_WORKLOAD };
	f->width = (struct sd_train_fact){ g->width, SD_TRAIN_WORKLOAD };
	f->warmup_steps = (struct sd_train_fact){
		(double)c->opt.warmup,
		c->opt.warmup_given ? SD_TRAIN_GIVEN : SD_TRAIN_DEFAULT };
	if (c->peak > 0)
		f->peak_tflops = (struct sd_train_fact){ c->peak,
							 c->peak_origin };
	snprintf(f->device_name, sizeof(f->device_name), "%s",
		 ranks[0].dev.name[0] ? ranks[0].dev.name : "CPU");
	f->device_name_origin = SD_TRAIN_READ;
	f->precision = c->gm ? SD_TRAIN_BF16 : SD_TRAIN_FP32;
}

/* Rank 0 at the end: summarise, judge, print, record, and say how the
 * run ended (loop_status: how the loop stopped; why: its words).
 * Returns the exit status. */
/* The run's status from what the loop ended with and what was found:
 * summary, loss against the reference, slow ranks; msg says why. */
static int judge_run(struct train_ctx *c, struct train_outcome *g,
		     int loop_status, const char *why, char *msg, size_t len)
{
	const struct train_options *o = &c->opt;
	struct sd_train_facts f;
	char err[700] = "";
	int status = loop_status;
	run_facts(c, g->nranks, g->ranks, &f);

	if (g->done > 0 && sd_train_summarize(g->job, (size_t)g->done, &f,
					      &g->sum, err, sizeof(err)) == SD_OK)
		g->summarized = 1;
	else if (!status) {
		status = SD_EXIT_ENV;
		snprintf(msg, len, "no step to summarise: %s", err);
	}
	if (g->summarized && c->have_ref) {
		/* the band: how the reference stands to this run */
		struct sd_train_tolerance tol;
		sd_train_tolerance_for(sd_train_ref_identity(c->ref.config,
							     c->config, NULL,
							     0) ==
					       SD_REF_SAME_ARITH,
				       run_arith(o), c->ref.healthy, &tol);
		if (sd_train_compare(g->job, (size_t)g->done, c->config, &c->ref,
				     &tol, &g->cmp, err, sizeof(err)) == SD_OK)
			g->compared = 1;
		else if (!status) {
			status = SD_EXIT_USAGE;
			snprintf(msg, len, "the loss cannot be judged: %s", err);
		}
	}
	judge_ranks(o, g);

	long nan_step = g->summarized ? g->sum.nonfinite_step : -1;
	if (status) {
		snprintf(msg + strlen(msg), len - strlen(msg), "%s%s",
			 msg[0] ? "; " : "", why ? why : "the run failed");
	} else if (nan_step >= 0) {
		status = SD_EXIT_CHECK;
		snprintf(msg, len, "loss became %s at step %ld; the run "
			 "stopped there", isnan(g->sum.nonfinite_loss) ? "NaN"
			 : "infinite", nan_step);
	} else {
		if (g->compared && g->cmp.verdict != SD_TRAIN_PASSED &&
		    g->cmp.verdict != SD_TRAIN_NOT_JUDGED) {
			status = SD_EXIT_VERDICT;
			snprintf(msg, len, "the loss is off the reference %s: %s",
				 c->ref.name, g->cmp.reason);
		}
		if (g->nslow) {
			status = SD_EXIT_VERDICT;
			size_t u = strlen(msg);
			snprintf(msg + u, len - u, "%sslow rank: %s (> %.2fx); "
				 "bad nodes: %s", u ? "; " : "", g->slow_which,
				 o->slow_factor, g->slow_hosts);
		}
	}
	return status;
}

/* runs.status for an exit status. */
static const char *run_status_word(int status)
{
	if (status == SD_EXIT_OK)
		return "passed";
	if (status == SD_EXIT_CANCELLED)
		return "cancelled";
	if (status == SD_EXIT_CHECK || status == SD_EXIT_VERDICT ||
	    status == SD_EXIT_USAGE)
		return "failed";
	return "error";
}

/* --save-ref: the reference this run makes, written to its file.
 * SD_OK, or a status with msg saying why. */
static int save_reference(struct train_ctx *c, const struct train_outcome *g,
			  const char *uuid, char *msg, size_t len)
{
	const struct train_options *o = &c->opt;
	struct sd_train_reference ref = { 0 };
	struct sd_train_curve cv = { "this run", g->job, (size_t)g->done };
	const char *b = strrchr(o->save_reference, '/');
	char name[SD_TRAIN_REF_NAME_MAX + 1], desc[300], src[80], err[700];
	snprintf(name, sizeof(name), "%s", b ? b + 1 : o->save_reference);
	char *dot = strrchr(name, '.');
	if (dot && strcmp(dot, ".ref") == 0)
		*dot = '\0';
	snprintf(desc, sizeof(desc), "shakedown train: %d ranks on %s, "
		 "%ld steps, seed %ld, %s", g->nranks, g->ranks[0].host,
		 g->done, o->seed, g->ranks[0].dev.transport[0]
					   ? g->ranks[0].dev.transport : "");
	/* never name a run the database does not hold */
	if (c->rec && strcmp(sd_train_rec_path(c->rec), "none") != 0)
		snprintf(src, sizeof(src), "runs %s", uuid);
	else
		snprintf(src, sizeof(src), "a run not recorded (--db none)");
	int rc = sd_train_ref_create(name, desc, c->config, src, &cv, 1, &ref,
				     NULL, 0, err, sizeof(err));
	if (!rc)
		rc = sd_train_ref_save(&ref, o->save_reference, err,
				       sizeof(err));
	sd_train_ref_free(&ref);
	if (rc) {
		snprintf(msg, len, "--save-ref: %s", err);
		return SD_EXIT_ENV;
	}
	if (o->format == TRAIN_TEXT)
		printf("# reference %s written to %s\n", name,
		       o->save_reference);
	return SD_EXIT_OK;
}

/* A slow rank's node is a suspect, as a collectives run's is: one row
 * per host (into sus, with its reason in why), every slow rank of it
 * named.  Returns the rows filled. */
static size_t slow_suspects(const struct train_outcome *g,
			    struct sd_suspect_info *sus, char (*why)[160])
{
	size_t ns = 0;
	for (int r = 0; sus && why && g->slow && r < g->nranks; r++) {
		if (!g->slow[r])
			continue;
		size_t k = 0;
		while (k < ns && strcmp(sus[k].subject, g->ranks[r].host) != 0)
			k++;
		size_t u = k < ns ? strlen(why[k]) : 0;
		snprintf(why[k] + u, sizeof(why[k]) - u,
			 "%strain: rank %d compute %.2fx the other ranks' "
			 "median", u ? "; " : "", r, g->compute_ratio[r]);
		if (k == ns)
			sus[ns++] = (struct sd_suspect_info){
				.kind = "node", .subject = g->ranks[r].host,
				.hosts = g->ranks[r].host, .bad_node = 1,
				.reason = why[k] };
	}
	return ns;
}

/* The record's end: every rank's metric rows beside the job's, the slow
 * ranks' nodes as suspects.  1 when the record is incomplete (lack says
 * what it lacks), else 0. */
static int record_end(struct train_ctx *c, const struct train_outcome *g,
		      const char *st, int status, const char *msg,
		      char *lack, size_t lacklen)
{
	char err[700];
	struct sd_train_metric *extra =
		calloc((size_t)g->nranks * 2 + 1, sizeof(*extra));
	size_t ne = 0;
	for (int r = 0; extra && g->compute_mean && g->compute_median > 0 &&
			r < g->nranks; r++) {
		extra[ne++] = (struct sd_train_metric){
			"compute_s_mean", "s", g->compute_mean[r],
			g->ranks[r].host, r };
		extra[ne++] = (struct sd_train_metric){
			"compute_vs_median", "ratio", g->compute_ratio[r],
			g->ranks[r].host, r };
	}
	struct sd_suspect_info *sus =
		g->nslow ? calloc((size_t)g->nslow, sizeof(*sus)) : NULL;
	char (*why)[160] = g->nslow ? calloc((size_t)g->nslow, sizeof(*why))
				    : NULL;
	size_t ns = slow_suspects(g, sus, why);
	struct sd_train_end e = {
		.status = st, .exit_status = status,
		.message = msg[0] ? msg : NULL,
		.summary = g->summarized ? &g->sum : NULL,
		.cmp = g->compared ? &g->cmp : NULL,
		.reference_name = g->compared ? c->ref.name : NULL,
		.lines_unparsed = -1, .extra = extra, .nextra = ne,
		.suspects = sus, .nsuspects = ns };
	sd_train_rec_finish(c->rec, &e, err, sizeof(err));
	free(extra);
	free(sus);
	free(why);
	return sd_train_rec_incomplete(c->rec, lack, lacklen);
}

static int finish(struct train_ctx *c, struct train_outcome *g,
		  int loop_status, const char *why, const char *uuid,
		  double floor_loss)
{
	const struct train_options *o = &c->opt;
	char msg[900] = "";
	int status = judge_run(c, g, loop_status, why, msg, sizeof(msg));
	const char *st = run_status_word(status);

	if (o->save_reference && status == SD_EXIT_OK &&
	    (status = save_reference(c, g, uuid, msg, sizeof(msg))))
		st = "error";
	if (g->summarized) {
		if (o->format == TRAIN_TEXT)
			print_summary_text(c, g, floor_loss);
		else
			print_summary_json(c, g, uuid, st, floor_loss);
	}
	if (msg[0])
		fprintf(stderr, "shakedown train: %s\n", msg);

	char lack[1400] = "";
	int incomplete = c->rec && record_end(c, g, st, status, msg, lack,
					      sizeof(lack));
	if (incomplete && (status == SD_EXIT_OK || status == SD_EXIT_VERDICT))
		status = SD_EXIT_RECORD;
	FILE *out = o->format == TRAIN_JSON ? stderr : stdout;
	/* the verdict, and with an incomplete record the same sentence as
	 * stderr's, so that no channel says less than another */
	if (o->format == TRAIN_TEXT && incomplete)
		printf("# run %s; exit status %d: %s\n", st, status, lack);
	else if (o->format == TRAIN_TEXT)
		printf("# run %s\n", st);
	if (incomplete)
		fprintf(stderr, "shakedown: %s\n", lack);
	else if (c->rec && strcmp(sd_train_rec_path(c->rec), "none") != 0)
		fprintf(out, "# results recorded in %s (run %s); '%s "
			"report' shows them\n", sd_train_rec_path(c->rec),
			uuid, sd_invoked_as);
	return status;
}

/* The sustained peak of rank 0's CPU core (sd_gemm_cpu_peak), and how it
 * was measured into c->peak_how.  0 when it cannot be measured. */
static double measure_cpu_peak(struct train_ctx *c)
{
	double tf, med;
	int calls;
	char err[256];
	if (sd_gemm_cpu_peak(SD_GEMM_PEAK_N, SD_GEMM_PEAK_REPEATS,
			     SD_GEMM_PEAK_ITERS, &tf, &med, &calls, err,
			     sizeof(err)) != SD_OK)
		return 0;
	snprintf(c->peak_how, sizeof(c->peak_how), "fp32 sgemm %dx%dx%d on "
		 "rank 0's CPU core: the 90th percentile of %d calls, median "
		 "%.4g", SD_GEMM_PEAK_N, SD_GEMM_PEAK_N, SD_GEMM_PEAK_N, calls,
		 med);
	return tf;
}

/* The GPU path: the plugin's `shakedown_train_gpu` table and this rank's
 * model on its GPU, from the initial weights the CPU model takes (the
 * same seed, the same weights on both paths; no BLAS needed).  Returns
 * SD_OK or a status, err set. */
static int open_gpu_model(struct train_ctx *c, char *err, size_t errlen)
{
	const struct sd_train_gpu_ops *ops =
		c->plugin.handle ? dlsym(c->plugin.handle, SD_TRAIN_GPU_SYMBOL)
				 : NULL;
	if (!ops) {
		snprintf(err, errlen, "the nccl plugin %.300s has no training "
			 "workload (it was built without cuBLAS); rebuild "
			 "shakedown where configure finds cuBLAS, or use "
			 "--backend gloo (the CPU path)", c->plugin.path);
		return SD_ERR_NODEV;
	}
	if (ops->abi != SD_TRAIN_GPU_ABI ||
	    ops->table_size < sizeof(struct sd_train_gpu_ops)) {
		snprintf(err, errlen, "the nccl plugin %.300s has a training "
			 "table of another version (ABI %u, %u bytes; this "
			 "shakedown wants ABI %u, %zu bytes); install the "
			 "plugin built with this shakedown", c->plugin.path,
			 ops->abi, ops->table_size, SD_TRAIN_GPU_ABI,
			 sizeof(struct sd_train_gpu_ops));
		return SD_ERR_BACKEND;
	}
	int rc = sd_gpt_config_check(&c->opt.cfg, err, errlen);
	if (rc)
		return rc;
	int nt = sd_gpt_tensor_count(&c->opt.cfg);
	size_t np = sd_gpt_param_count(&c->opt.cfg);
	float *params = malloc(np * sizeof(float));
	c->gpu_tensors = calloc((size_t)nt, sizeof(*c->gpu_tensors));
	if (!params || !c->gpu_tensors) {
		free(params);
		snprintf(err, errlen, "out of memory for the initial weights "
			 "(%zu MiB)", np * sizeof(float) >> 20);
		return SD_ERR_NOMEM;
	}
	c->gpu_nt = nt;
	sd_gpt_init_params(&c->opt.cfg, (uint64_t)c->opt.seed, c->gpu_tensors,
			   params);
	rc = ops->create(c->comm, &c->opt.cfg, c->gpu_tensors, nt, params,
			 &c->gm, err, errlen);
	free(params);
	if (!rc)
		c->gpu = ops;
	return rc;
}

/* The guard's end of a stopped run (rank 0: a verdict, a signal, a run
 * that stopped early): the steps done, the named ranks' nodes as
 * suspects, and the run's end. */
static void guard_record_end(void *arg, int exit_status, const char *st,
			     const char *msg, const struct sd_suspect_info *sus,
			     size_t n)
{
	struct train_ctx *c = arg;
	char err[1024] = "";
	if (!c->rec)
		return;
	if (c->g.job)
		record_rows(c, &c->g, c->recorded, c->g.done);
	struct sd_train_end e = { .status = st, .exit_status = exit_status,
				  .message = msg, .lines_unparsed = -1,
				  .suspects = sus, .nsuspects = n };
	pthread_mutex_lock(&c->rec_mu);
	sd_train_rec_finish(c->rec, &e, err, sizeof(err));
	pthread_mutex_unlock(&c->rec_mu);
	fprintf(stderr, "shakedown train: the run stopped after %ld steps; "
		"they are recorded\n", c->g.done);
}

/* The guard stops the backend: a rank inside a collective returns. */
static void guard_stop(void *arg)
{
	struct train_ctx *c = arg;
	if (c->plugin.ops && c->plugin.ops->abort && c->comm)
		c->plugin.ops->abort(c->comm);
}

/* Signals, the planted fault's exit, the bootstrap and the workload's
 * identity.  0, or the exit status (nothing to tear down yet). */
static int start_rank(struct train_ctx *c)
{
	c->floor_loss = NAN;
	pthread_mutex_init(&c->rec_mu, NULL);
	c->guard = (struct sd_job_guard){ .record_end = guard_record_end,
					  .stop = guard_stop, .arg = c };
	sd_job_guard_watch(&c->guard);
	/* a training run has no start-up fault (sd_fault_fits refuses it) */
	int status = sd_job_rank_open(&c->boot, sd_job_on_signal, NULL);
	c->guard.boot = c->boot;
	if (!status)
		config_string(&c->opt, c->config, sizeof(c->config));
	return status;
}

/* The backend, the model (on the CPU, or the backend's GPU table), the
 * data and the DDP buckets, the same on every rank, and the planted
 * fault's fit, every rank agreeing.  0, or the exit status. */
static int open_workload(struct train_ctx *c)
{
	struct train_options *o = &c->opt;
	struct sd_bootstrap *bs = &c->boot->bs;
	char err[1024] = "";
	int rc, status = SD_EXIT_ENV;
	/* the backend and its world communicator, as `gemm` builds them */
	struct sd_comm_config cfg = { .timeout_ms = o->job.timeout_ms,
				      .iface = o->job.iface };
	if ((status = sd_job_backend_open(c->boot, o->job.backend, &cfg, NULL,
					  NULL, &c->plugin, &c->comm)) ||
	    (status = sd_job_guard_start(&c->guard, o->job.timeout_ms)))
		return status;

	/* the model, the data and the buckets: the same on every rank */
	if (strcmp(c->plugin.ops->name, "nccl") == 0) {
		rc = open_gpu_model(c, err, sizeof(err));
	} else {
		rc = sd_gpt_create(&o->cfg, &c->model, err, sizeof(err));
		if (!rc)
			sd_gpt_init(c->model, (uint64_t)o->seed);
	}
	if (!rc) {
		if (o->data)
			rc = sd_data_open_file(&c->data, o->data, o->cfg.vocab,
					       o->cfg.seq_len,
					       (uint64_t)o->seed, err,
					       sizeof(err));
		else
			rc = sd_data_open_markov(&c->data, o->cfg.vocab,
						 SD_MARKOV_ORDER_DEFAULT,
						 SD_MARKOV_BRANCHING_DEFAULT,
						 o->cfg.seq_len,
						 (uint64_t)o->seed, err,
						 sizeof(err));
	}
	size_t ntok = (size_t)o->cfg.micro_batch * (size_t)o->cfg.seq_len;
	c->inputs = calloc(ntok, sizeof(int));
	c->targets = calloc(ntok, sizeof(int));
	c->ddp = calloc(1, sizeof(*c->ddp));
	c->all = calloc((size_t)bs->size, sizeof(*c->all));
	if (!rc && (!c->inputs || !c->targets || !c->ddp || !c->all)) {
		snprintf(err, sizeof(err), "out of memory");
		rc = SD_ERR_NOMEM;
	}
	if (!rc) {
		*c->ddp = (struct sd_train_rank){
			.cfg = &o->cfg, .rank = bs->rank, .nranks = bs->size,
			.cpu = c->model, .gpu = c->gpu, .gm = c->gm,
			.tensors = c->gpu_tensors, .nt = c->gpu_nt,
			.ops = c->plugin.ops, .comm = c->comm, .data = c->data,
			.fault = &c->fault, .timeout_ms = o->job.timeout_ms };
		rc = sd_train_rank_buckets(c->ddp, err, sizeof(err));
		c->floor_loss = sd_data_loss_floor(c->data);
	}
	if (rc && (bs->rank == 0 || rc != SD_ERR_INVALID))
		sd_rank_error(bs, "train", err);
	if ((status = sd_agree(c->boot, rc ? sd_exit_for_status(rc) : 0)))
		return status;
	rc = SD_OK;
	if ((c->model || c->gm) &&
	    (sd_fault_fits(&c->fault, SD_FAULT_IN_TRAIN, bs->size,
			   sd_gpt_param_count(&o->cfg), err, sizeof(err)) ||
	     sd_fault_fits_steps(&c->fault, o->steps, err, sizeof(err)))) {
		if (bs->rank == 0)
			fprintf(stderr, "shakedown: SHAKEDOWN_FAULT: %s\n", err);
		rc = SD_ERR_INVALID;
	}
	return sd_agree(c->boot, rc ? sd_exit_for_status(rc) : 0);
}

/* Who is who; rank 0's reference, peak and recorder, and the run's first
 * record, every rank agreeing.  0, or the exit status. */
static int begin_record(struct train_ctx *c)
{
	struct train_options *o = &c->opt;
	struct sd_bootstrap *bs = &c->boot->bs;
	char err[1024] = "";
	int rc;
	struct sd_rank_info me;
	/* who is who */
	sd_job_describe(c->boot, &c->plugin, c->comm, &me);
	if (!(c->ranks = sd_job_exchange(c->boot, &me)))
		return SD_EXIT_ENV;

	/* rank 0: the reference, the peak and the recorder, before the
	 * first step (the others wait in the agreement) */
	rc = SD_OK;
	if (bs->rank == 0) {
		rc = find_reference(c, err, sizeof(err));
		if (rc)
			fprintf(stderr, "shakedown train: %s\n", err);
	}
	if (!rc && bs->rank == 0 && c->have_ref) {
		char why[300];
		enum sd_train_ref_match m = sd_train_ref_identity(
			c->ref.config, c->config, why, sizeof(why));
		if (m == SD_REF_OTHER_SEED) {
			/* another seed's curve: a healthy run is not on it,
			 * and nothing is wrong with asking */
			snprintf(c->ref_note, sizeof(c->ref_note), "not judged: "
				 "reference %s is another seed's curve (%s); "
				 "make one at this seed with --save-ref",
				 c->ref.name, why);
			sd_train_ref_free(&c->ref);
			c->have_ref = 0;
		} else if (m == SD_REF_OTHER_WORKLOAD) {
			/* said now, not after the steps */
			fprintf(stderr, "shakedown train: reference '%s' is for "
				"config '%s', this run is '%s'; run its config "
				"(--global-batch, the model) or give another "
				"--reference\n", c->ref.name, c->ref.config,
				c->config);
			rc = SD_ERR_INVALID;
		}
	}
	if (!rc && bs->rank == 0) {
		if (o->peak_tflops > 0) {
			c->peak = o->peak_tflops;
			c->peak_origin = SD_TRAIN_GIVEN;
		} else if (!c->plugin.ops->gemm) {
			c->peak = measure_cpu_peak(c);
			c->peak_origin = SD_TRAIN_MEASURED;
		}
		char note[512] = "";
		rc = sd_train_rec_open(o->job.db, 0, &c->rec, note, sizeof(note),
				       err, sizeof(err));
		if (rc)
			fprintf(stderr, "shakedown: %s\n", err);
		else if (note[0])
			fprintf(stderr, "shakedown: note: %s\n", note);
	}
	if (!rc && bs->rank == 0) {
		struct sd_train_facts f;
		run_facts(c, bs->size, c->ranks, &f);
		struct sd_train_run_info info = {
			.kind = "train", .started_at = sd_wall_now(),
			.command_line = c->cmdline,
			.tool_version = PACKAGE_VERSION,
			.backend = c->plugin.ops->name,
			.backend_version = c->plugin.ops->version
						   ? c->plugin.ops->version : "",
			.user = sd_job_user(),
			.nranks = bs->size, .job = &c->boot->job,
			.ranks = c->ranks, .config = c->config, .facts = &f };
		int brc = sd_train_rec_begin(c->rec, &info, err, sizeof(err));
		if (brc == SD_ERR_IO)
			fprintf(stderr, "shakedown: warning: %s (kept; written "
				"with the next rows)\n", err);
		else if (brc) {
			fprintf(stderr, "shakedown: %s\n", err);
			rc = brc;
		}
		snprintf(c->uuid, sizeof(c->uuid), "%s", sd_train_rec_uuid(c->rec));
		if (!c->uuid[0])
			sd_uuid4(c->uuid);
	}
	return sd_agree(c->boot, rc ? sd_exit_for_status(rc) : 0);
}

/* Rank 0's header of a text run: where, which model, data and reference. */
static void print_header(struct train_ctx *c)
{
	const struct train_options *o = &c->opt;
	struct sd_bootstrap *bs = &c->boot->bs;
	char *hl = sd_job_hostlist(c->ranks, bs->size);
	const struct sd_gpt_config *k = &o->cfg;
	printf("# shakedown train: %d rank%s on %s, backend %s "
	       "(%s), config %s%s\n", bs->size,
	       bs->size == 1 ? "" : "s", hl ? hl : "?",
	       c->plugin.ops->name,
	       c->ranks[0].dev.name[0] ? c->ranks[0].dev.name : "CPU",
	       o->config_name, o->overridden ? " (changed)"
					     : "");
	printf("# model: %d layers, width %d, %d heads, seq %d, "
	       "vocab %d: %zu parameters, %.4g FLOPs/token (PaLM's; "
	       "Megatron-LM's %.4g); "
	       "%d x %d samples a step on each rank, %d "
	       "gradient bucket%s\n", k->layers, k->width,
	       k->heads, k->seq_len, k->vocab,
	       sd_gpt_param_count(k),
	       sd_gpt_flops_per_token(k), sd_gpt_flops_megatron(k),
	       k->accum_steps,
	       k->micro_batch, c->ddp->nb, c->ddp->nb == 1 ? "" : "s");
	if (c->gm)
		printf("# GPU path: bf16 GEMMs through cuBLAS "
		       "(fp32 compute), fp32 master weights, "
		       "gradients and AdamW\n");
	if (o->data)
		printf("# data: bytes of %s, seed %ld\n", o->data,
		       o->seed);
	else
		printf("# data: Markov source of order %d, "
		       "branching %d (loss floor %.4f), seed "
		       "%ld\n", SD_MARKOV_ORDER_DEFAULT,
		       SD_MARKOV_BRANCHING_DEFAULT, c->floor_loss,
		       o->seed);
	printf("# %ld steps, %ld warm-up; reference: %s\n",
	       o->steps, o->warmup,
	       c->have_ref ? c->ref_label : c->ref_note);
	fflush(stdout);
	free(hl);
}

/* The steps, every rank at once, each reported to all; rank 0 prints,
 * records and judges; every rank returns rank 0's word.  Returns the exit
 * status. */
/* Rank 0: the steps' rows handed on, the run judged, printed and
 * recorded; the exit status every rank returns (sd_job_guard_finish's
 * record). */
static int rank0_finish(void *arg)
{
	struct train_ctx *c = arg;
	if (!c->g.job)
		return SD_EXIT_ENV;
	record_rows(c, &c->g, c->recorded, c->g.done);
	c->recorded = c->g.done;
	return finish(c, &c->g, c->loop_status, c->why, c->uuid,
		      c->floor_loss);
}

static int run_steps(struct train_ctx *c)
{
	struct train_options *o = &c->opt;
	struct sd_bootstrap *bs = &c->boot->bs;
	char err[1024] = "";
	if (bs->rank == 0) {
		c->g.ranks = c->ranks;
		c->g.nranks = bs->size;
		c->g.job = calloc((size_t)o->steps, sizeof(*c->g.job));
		c->g.reps = calloc((size_t)o->steps * (size_t)bs->size,
				sizeof(*c->g.reps));
		if (o->format == TRAIN_TEXT)
			print_header(c);
		if (!c->g.job || !c->g.reps) {
			sd_rank_error(bs, "train", "out of memory");
			free(c->g.job); /* rank 0's word: exit status 3 */
			c->g.job = NULL;
		}
	}

	/* the steps, every rank at once */
	int loop_status = SD_EXIT_OK;
	const char *why = NULL;
	long every = o->steps >= 10 ? o->steps / 10 : 1;
	double last_record = sd_now();
	if (bs->barrier(bs)) {
		sd_rank_error(bs, "bootstrap", sd_boot_error(c->boot,
							     "barrier failed"));
		c->lost = 1;
		return SD_EXIT_TIMEOUT;
	}
	for (long step = 1; step <= o->steps; step++) {
		struct sd_train_report rep = { 0 };
		char what[64];
		snprintf(what, sizeof(what), "training step %ld", step);
		/* entered through the control plane: a rank lost during it
		 * is named with the step, and so is one that does not take
		 * part in the all_reduce within -T (the others' fail) */
		int gs = sd_job_guard_enter(&c->guard, o->job.timeout_ms,
					    o->job.timeout_ms, what);
		if (gs) {
			c->lost = 1;
			return gs;
		}
		int src = cancel_flag ? SD_ERR_CANCELLED
				      : sd_train_step(c->ddp, step, c->inputs,
						      c->targets, &rep, err,
						      sizeof(err));
		if (src == SD_ERR_CANCELLED)
			rep.status = SD_EXIT_CANCELLED;
		else if (src) {
			/* a collective that timed out or lost a peer: rank 0
			 * names the rank that did not take part now, rather
			 * than after the step's budget */
			sd_rank_error(bs, "train", err);
			c->lost = 1;
			return sd_job_guard_fail(&c->guard, src, err);
		}
		/* every rank's report to every rank, through the bootstrap
		 * (the launcher's relay, or PMI2), which starts the ranks'
		 * next step together.  Not through the control plane: its
		 * messages at every step woke rank 0's control thread, and on
		 * busy cores rank 0's compute came out 1.4x its peers' (0.3
		 * ms steps of the test config; median of 10 runs of 4 ranks).
		 * A rank lost meanwhile is the guard's verdict. */
		if (bs->allgather(bs, &rep, c->all, sizeof(rep))) {
			c->lost = 1;
			return sd_job_guard_fail(&c->guard, SD_ERR_PEER,
						 sd_boot_error(c->boot, "a rank "
							       "did not report "
							       "its step"));
		}
		int worst = 0, nonfinite = 0;
		for (int r = 0; r < bs->size; r++) {
			if (c->all[r].status > worst)
				worst = c->all[r].status;
			nonfinite |= c->all[r].nonfinite;
		}
		if (worst) {
			loop_status = worst;
			why = worst == SD_EXIT_CANCELLED
				      ? "cancelled by a signal; the steps done "
					"are kept"
				      : "a rank failed (see its message); the "
					"steps done are kept";
			break;
		}
		if (bs->rank == 0 && c->g.job) {
			memcpy(&c->g.reps[(step - 1) * bs->size], c->all,
			       (size_t)bs->size * sizeof(*c->all));
			c->g.job[step - 1] = job_row(o, c->all, bs->size, step);
			c->g.done = step;
			if (o->format == TRAIN_JSON ||
			    (o->progress && (step % every == 0 || step == 1 ||
					     nonfinite)))
				print_step(o, c->uuid, &c->g.job[step - 1]);
			if (step % every == 0 || nonfinite ||
			    sd_now() - last_record > TRAIN_RECORD_EVERY_S) {
				record_rows(c, &c->g, c->recorded, step);
				c->recorded = step;
				last_record = sd_now();
			}
		}
		if (nonfinite)
			break; /* every rank: the loss is no longer a loss */
	}
	/* rank 0 judges, prints and records while the others wait for its
	 * word (as long as a locked database may take) */
	c->loop_status = loop_status;
	c->why = why;
	return sd_job_guard_finish(&c->guard, o->job.timeout_ms, rank0_finish,
				   c);
}

/* The record of a run stopped before rank 0 could finish, and the
 * teardown.  Returns the exit status, or stdout's failure. */
static int close_rank(struct train_ctx *c, int status)
{
	/* the control plane's thread joined, and a run stopped before rank
	 * 0 could finish (a broken bootstrap, a launcher gone) recorded so,
	 * with the steps done; after finish() the run's end is recorded */
	status = sd_job_guard_close(&c->guard, status);
	sd_train_rec_close(c->rec);
	c->rec = NULL;
	if (c->gm)
		c->gpu->destroy(c->gm);
	c->gm = NULL;
	free(c->gpu_tensors);
	c->gpu_tensors = NULL;
	sd_job_close(&c->boot, &c->plugin, &c->comm);
	sd_gpt_destroy(c->model);
	sd_data_close(c->data);
	sd_train_ref_free(&c->ref);
	free(c->inputs);
	free(c->targets);
	free(c->ddp);
	free(c->all);
	free(c->ranks);
	free(c->g.job);
	free(c->g.reps);
	free(c->g.compute_mean);
	free(c->g.compute_ratio);
	free(c->g.slow);
	free(c->g.slow_hosts);
	int out_rc = sd_finish_stdout();
	return status ? status : out_rc;
}

static int train_main(void *arg)
{
	struct train_ctx *c = arg;
	int status = start_rank(c);
	if (status)
		return status;
	/* the global batch over this job's ranks: the same answer on every
	 * rank, said once */
	char err[400];
	if (sd_gpt_split(c->opt.global_batch, c->boot->bs.size,
			 (int)c->opt.micro_req, (int)c->opt.accum_req,
			 &c->opt.cfg, err, sizeof(err))) {
		if (c->boot->bs.rank == 0)
			fprintf(stderr, "shakedown train: %s\n", err);
		return close_rank(c, SD_EXIT_USAGE);
	}
	if (!(status = open_workload(c)) && !(status = begin_record(c)))
		status = run_steps(c);
	return close_rank(c, status);
}

int cmd_train(int argc, char **argv)
{
	static struct train_ctx ctx;
	memset(&ctx, 0, sizeof(ctx));
	sd_job_options_init(&ctx.opt.job, TRAIN_TIMEOUT_MS);
	ctx.opt.config_name = "default";
	ctx.opt.steps = 100;
	ctx.opt.warmup = 2;
	ctx.opt.seed = 1;
	ctx.opt.progress = 1;
	ctx.opt.slow_factor = TRAIN_SLOW_FACTOR;
	int rc = parse_options(argc, argv, &ctx.opt);
	if (rc >= 0)
		return rc;
	if ((rc = sd_job_fault(&ctx.fault)))
		return rc;
	if (strcmp(ctx.opt.job.backend, "nccl") == 0 &&
	    (ctx.fault.kind == SD_FAULT_GRAD_CORRUPT ||
	     ctx.fault.kind == SD_FAULT_GRAD_NAN)) {
		/* they write the gradients from the host */
		if (sd_first_task())
			fprintf(stderr, "shakedown: SHAKEDOWN_FAULT: the "
				"gradient faults are planted on the CPU path "
				"only; use --backend gloo for them\n");
		return SD_EXIT_USAGE;
	}
	if (ctx.fault.kind == SD_FAULT_GRAD_NAN && !ctx.fault.iter_set)
		ctx.fault.iter = 3;
	sd_command_line(argc, argv, ctx.cmdline, sizeof(ctx.cmdline));
	return sd_job_launch("train", ctx.opt.job.local_ranks,
			     ctx.opt.job.backend, ctx.opt.job.timeout_ms + 5000,
			     train_main, &ctx);
}
