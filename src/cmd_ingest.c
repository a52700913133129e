/*
 * cmd_ingest.c - `shakedown ingest LOG`: judge a real fine-tuning job by
 * its log.  The log is parsed (lib/ingest/: Megatron-LM, DeepSpeed,
 * Hugging Face Trainer, LLaMA-Factory, sniffed or given by --format),
 * what it lacks is taken from the options (lib/ingest/apply.h: devices,
 * sequence length, tokens per step, parameters or a model config file,
 * the device for the peak table; here: the global batch), and the series
 * goes through the same
 * metrics as the built-in workload's (lib/train/metrics.h): tgs, TFLOPs,
 * MFU, and the loss against a reference with the same tolerances.  The
 * run is recorded whole in one transaction (runs.run_kind 'ingest',
 * lib/db/train_db.h) or not at all, beside the communication runs of the
 * same nodes (--nodes).
 *
 * Exit status: 0 passed (or not judged); 1 the loss became NaN or
 * infinite; 2 a bad option, a log that cannot be read or parsed (naming
 * FILE:LINE), unparsed lines with --strict, a reference of another
 * workload; 3 the database failed; 6 the loss is off the reference; 7 the
 * record is incomplete (kept in the journal: `shakedown db recover`).
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bootstrap.h"
#include "commands.h"
#include "names.h"
#include "job.h"
#include "ranks.h"
#include "tool.h"
#include "train_print.h"
#include "util.h"
#include "db/db.h"
#include "db/named.h"
#include "db/train_db.h"
#include "ingest/apply.h"
#include "ingest/ingest.h"
#include "train/metrics.h"
#include "train/reference.h"

/* The default warm-up: the built-in workload's (cmd_train.c). */
#define INGEST_WARMUP 2

struct ingest_options {
	const char *log, *db, *reference, *workload, *model_config;
	const char *nodes, *cluster, *job_id;
	enum sd_ingest_format format;
	struct sd_ingest_given given;
	int warmup_given;
	int json, strict;
	long run;                /* --run N; 0: the last */
	long global_batch;       /* --global-batch G; 0: not given */
};

enum ingest_option {
	OPT_FORMAT = 256, OPT_GPUS, OPT_SEQ, OPT_TOKENS, OPT_PARAMS,
	OPT_MODEL_CONFIG, OPT_LAYERS, OPT_WIDTH, OPT_FPT, OPT_DEVICE,
	OPT_PRECISION, OPT_PEAK, OPT_LOG_EVERY, OPT_WARMUP, OPT_REFERENCE,
	OPT_WORKLOAD, OPT_NODES, OPT_CLUSTER, OPT_JOB, OPT_DB, OPT_JSON,
	OPT_STRICT, OPT_RUN, OPT_GLOBAL_BATCH,
};

static const struct option long_options[] = {
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ "gpus", required_argument, NULL, OPT_GPUS },
	{ "devices", required_argument, NULL, OPT_GPUS },
	{ "seq-len", required_argument, NULL, OPT_SEQ },
	{ "tokens-per-step", required_argument, NULL, OPT_TOKENS },
	{ "global-batch", required_argument, NULL, OPT_GLOBAL_BATCH },
	{ "params", required_argument, NULL, OPT_PARAMS },
	{ "model-config", required_argument, NULL, OPT_MODEL_CONFIG },
	{ "layers", required_argument, NULL, OPT_LAYERS },
	{ "width", required_argument, NULL, OPT_WIDTH },
	{ "flops-per-token", required_argument, NULL, OPT_FPT },
	{ "device", required_argument, NULL, OPT_DEVICE },
	{ "precision", required_argument, NULL, OPT_PRECISION },
	{ "peak-tflops", required_argument, NULL, OPT_PEAK },
	{ "log-every", required_argument, NULL, OPT_LOG_EVERY },
	{ "run", required_argument, NULL, OPT_RUN },
	{ "warmup", required_argument, NULL, OPT_WARMUP },
	{ "reference", required_argument, NULL, OPT_REFERENCE },
	{ "workload", required_argument, NULL, OPT_WORKLOAD },
	{ "nodes", required_argument, NULL, OPT_NODES },
	{ "cluster", required_argument, NULL, OPT_CLUSTER },
	{ "job-id", required_argument, NULL, OPT_JOB },
	{ "db", required_argument, NULL, OPT_DB },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "strict", no_argument, NULL, OPT_STRICT },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 }
};

static void given(struct sd_train_fact *f, double v)
{
	f->value = v;
	f->origin = SD_TRAIN_GIVEN;
}

/* Parse argv into o.  Returns -1 to go on, else an exit status. */
/* The facts an option gives as a count: the option, where the fact is,
 * its largest value, its name and what it must be. */
static const struct {
	int opt;
	size_t offset;
	double max;
	const char *name, *what;
} counts[] = {
	{ OPT_GPUS, offsetof(struct sd_train_facts, devices), 1e7, "--gpus",
	  "a number of devices above 0" },
	{ OPT_SEQ, offsetof(struct sd_train_facts, seq_len), 1e9, "--seq-len",
	  "a sequence length in tokens" },
	{ OPT_TOKENS, offsetof(struct sd_train_facts, tokens_per_step), 1e15,
	  "--tokens-per-step", "the global tokens of one step (524288, 512K)" },
	{ OPT_PARAMS, offsetof(struct sd_train_facts, params), 1e15, "--params",
	  "a parameter count (8.0e9, 8B, 124M)" },
	{ OPT_LAYERS, offsetof(struct sd_train_facts, layers), 1e6, "--layers",
	  "a number of transformer blocks" },
	{ OPT_WIDTH, offsetof(struct sd_train_facts, width), 1e7, "--width",
	  "a hidden size" },
	{ OPT_FPT, offsetof(struct sd_train_facts, flops_per_token), 1e20,
	  "--flops-per-token", "model FLOPs per token, forward and backward" },
	{ OPT_PEAK, offsetof(struct sd_train_facts, peak_tflops), 1e6,
	  "--peak-tflops", "a number of TFLOPs per device above 0" },
};

static int parse_options(int argc, char **argv, struct ingest_options *o)
{
	struct sd_train_facts *f = &o->given.facts;
	char oerr[256], err[300];
	double v;
	long n;
	int ch;
	opterr = 0;
	optind = 1;
	while ((ch = sd_getopt(argc, argv, "-:h", long_options, oerr,
			       sizeof(oerr))) != -1) {
		switch (ch) {
		case SD_OPT_REFUSED:
			return sd_usage_error("ingest", "%s", oerr);
		case 1:
			if (o->log)
				return sd_usage_error("ingest", "one log at a time: '%s' and '%s'; "
					    "run ingest once per log", o->log,
					    optarg);
			o->log = optarg;
			break;
		case OPT_FORMAT:
			if (sd_ingest_format_parse(optarg, &o->format, err,
						   sizeof(err)))
				return sd_usage_error("ingest", "--format: %s", err);
			break;
		case OPT_GPUS: case OPT_SEQ: case OPT_TOKENS: case OPT_PARAMS:
		case OPT_LAYERS: case OPT_WIDTH: case OPT_FPT: case OPT_PEAK:
			for (size_t k = 0; k < sizeof(counts) / sizeof(counts[0]);
			     k++) {
				if (counts[k].opt != ch)
					continue;
				if (sd_parse_amount(optarg, counts[k].max, 1, &v))
					return sd_usage_error(
						"ingest", "%s '%s' must be %s",
						counts[k].name, optarg,
						counts[k].what);
				given((struct sd_train_fact *)((char *)f +
							       counts[k].offset),
				      v);
			}
			break;
		case OPT_MODEL_CONFIG: o->model_config = optarg; break;
		case OPT_DEVICE:
			if (!*optarg || strlen(optarg) >= sizeof(f->device_name))
				return sd_usage_error("ingest", "--device '%s' must be a device name "
					    "as the runtime prints it (\"NVIDIA "
					    "H100 80GB HBM3\")", optarg);
			sd_strlcpy(f->device_name, optarg,
				   sizeof(f->device_name));
			f->device_name_origin = SD_TRAIN_GIVEN;
			break;
		case OPT_PRECISION:
			if (sd_train_precision_parse(optarg, &f->precision, err,
						     sizeof(err)))
				return sd_usage_error("ingest", "--precision: %s", err);
			break;
		case OPT_RUN:
			if (sd_parse_int(optarg, 1, 1000000, &o->run))
				return sd_usage_error("ingest", "--run '%s' must be a run of "
					    "the log, from 1", optarg);
			break;
		case OPT_GLOBAL_BATCH:
			if (sd_parse_int(optarg, 1, 1000000000, &n))
				return sd_usage_error("ingest", "--global-batch '%s' must be "
					    "the sequences of one optimizer "
					    "step over all ranks (per-device "
					    "batch x data-parallel ranks x "
					    "gradient accumulation), a whole "
					    "number from 1", optarg);
			o->global_batch = n;
			break;
		case OPT_LOG_EVERY:
			if (sd_parse_int(optarg, 1, 100000000, &n))
				return sd_usage_error("ingest", "--log-every '%s' must be the steps "
					    "between logged rows, from 1",
					    optarg);
			o->given.log_every = n;
			break;
		case OPT_WARMUP:
			if (sd_parse_int(optarg, 0, 100000000, &n))
				return sd_usage_error("ingest", "--warmup '%s' must be a number of "
					    "steps from 0", optarg);
			given(&f->warmup_steps, (double)n);
			o->warmup_given = 1;
			break;
		case OPT_REFERENCE: o->reference = optarg; break;
		case OPT_WORKLOAD:
			if (sd_train_ref_check_name(optarg, err, sizeof(err)))
				return sd_usage_error("ingest", "--workload: %s", err);
			o->workload = optarg;
			break;
		case OPT_NODES: o->nodes = optarg; break;
		case OPT_CLUSTER: o->cluster = optarg; break;
		case OPT_JOB: o->job_id = optarg; break;
		case OPT_DB: o->db = optarg; break;
		case OPT_JSON: o->json = 1; break;
		case OPT_STRICT: o->strict = 1; break;
		case 'h':
			sd_help_print(stdout, sd_help_ingest);
			return sd_finish_stdout();
		case ':':
		default:
			return sd_option_error("ingest", ch, argv);
		}
	}
	if (!o->log)
		return sd_usage_error("ingest", "which log?  e.g. 'shakedown ingest train.log "
			    "--gpus 16 --seq-len 4096'; see 'shakedown help "
			    "ingest'");
	if (o->model_config && f->params.origin != SD_TRAIN_UNKNOWN)
		return sd_usage_error("ingest", "--params and --model-config both give the "
			    "parameter count; give one");
	if (o->nodes && (strlen(o->nodes) >= sizeof(((struct sd_job_info *)0)
							   ->nodelist)))
		return sd_usage_error("ingest", "--nodes is too long; give the Slurm hostlist "
			    "(node[001-512])");
	if (!o->warmup_given)
		f->warmup_steps = (struct sd_train_fact){ INGEST_WARMUP,
							  SD_TRAIN_DEFAULT };
	return -1;
}

/* ------------------------------------------------------------ printing */

static void json_num(struct sd_buf *b, double v)
{
	sd_buf_json_num(b, v, 17);
}

/* The mean of the log's own per-device TFLOP/s over its timed rows, NaN
 * when it prints none. */
static double logged_tflops_mean(const struct sd_ingest_log *l,
				 double warmup)
{
	double sum = 0;
	long k = 0;
	for (size_t i = 0; i < l->n; i++)
		if (isfinite(l->logged_tflops[i]) &&
		    sd_train_step_timed(l->steps, i, warmup)) {
			sum += l->logged_tflops[i];
			k++;
		}
	return k ? sum / (double)k : NAN;
}

struct outcome {
	struct sd_train_facts facts;
	struct sd_train_summary sum;
	struct sd_train_comparison cmp;
	int compared;
	char ref_label[700], ref_note[300], apply_note[600];
	char batch_note[300];    /* where the global batch came from */
	int from_config; /* 1: layers, 2: width came from --model-config */
	double logged_tflops;
};

static void print_text(const struct ingest_options *o,
		       const struct sd_ingest_log *l, const struct outcome *g)
{
	const struct sd_train_summary *s = &g->sum;
	printf("# ingest: %s log %s (%s): %ld lines: %ld steps, %ld facts, "
	       "%ld unparsed, %ld other", sd_ingest_format_name(l->format),
	       o->log, l->variant[0] ? l->variant : "-", l->lines,
	       l->lines_steps, l->lines_facts, l->lines_unparsed,
	       l->lines_other);
	if (l->lines_other_runs)
		printf(", %ld of other runs", l->lines_other_runs);
	putchar('\n');
	for (size_t i = 0; i < l->nbad; i++)
		printf("#   unparsed %s:%ld: %s%s%s%s\n", o->log, l->bad[i].line,
		       l->bad[i].why, l->bad[i].text[0] ? " [" : "",
		       l->bad[i].text, l->bad[i].text[0] ? "]" : "");
	if ((long)l->nbad < l->lines_unparsed)
		printf("#   ... and %ld more unparsed lines\n",
		       l->lines_unparsed - (long)l->nbad);
	if (l->runs > 1)
		printf("#   %d runs in this log (each began again at its first "
		       "step, or at a resume that started the clock again): "
		       "run %d is read (%s), %ld step lines of the "
		       "others are not; --run N reads another\n", l->runs,
		       l->run_kept, l->run_kept == l->runs ? "the last" : "asked",
		       l->lines_other_runs);
	if (l->steps_dropped)
		printf("#   %ld step lines repeated a step already read "
		       "(another rank's copy, or a restart) and were not "
		       "used\n", l->steps_dropped);
	if (l->note[0])
		printf("#   note: %s\n", l->note);
	if (l->misnumbered[0])
		printf("#   warning: %s; the loss is not judged\n",
		       l->misnumbered);
	if (l->warning[0])
		printf("#   warning: %s\n", l->warning);
	if (g->apply_note[0])
		printf("#   note: %s\n", g->apply_note);
	if (g->batch_note[0])
		printf("#   note: %s\n", g->batch_note);
	int row_tokens = 0;
	for (size_t i = 0; i < l->n; i++)
		row_tokens |= (l->steps[i].has & SD_STEP_TOKENS) != 0;
	printf("# facts (given by an option, read from the log or the model "
	       "config, derived from others):\n");
	for (size_t i = 0; i < SD_TRAIN_NFACTS; i++) {
		const struct sd_train_fact *f = sd_train_fact_get(&g->facts, i);
		const char *name = sd_train_fact_fields[i].name;
		const char *from = "";
		if (o->model_config && (f == &g->facts.params ||
					(f == &g->facts.layers &&
					 g->from_config & 1) ||
					(f == &g->facts.width &&
					 g->from_config & 2)))
			from = " from --model-config";
		if (f->origin == SD_TRAIN_DEFAULT)
			printf("  %-16s %.10g (the default)\n", name,
			       f->value);
		else if (f->origin != SD_TRAIN_UNKNOWN)
			printf("  %-16s %.10g (%s%s)\n", name, f->value,
			       sd_train_origin_name(f->origin), from);
		else if (f == &g->facts.tokens_per_step && row_tokens)
			printf("  %-16s - (the log's rows have their own "
			       "counts)\n", name);
		else if (f == &g->facts.flops_per_token)
			printf("  %-16s - (the formula: 6 x params + 12 x "
			       "layers x width x seq_len)\n", name);
		else if (f == &g->facts.peak_tflops &&
			 g->sum.peak.origin == SD_TRAIN_TABLE)
			printf("  %-16s - (the peak table's: %.4g for %s)\n",
			       name, g->sum.peak.tflops,
			       g->sum.peak.part);
		else
			printf("  %-16s - (not in the log; %s gives it)\n",
			       name, sd_train_fact_fields[i].option);
	}
	if (g->facts.device_name[0])
		printf("  %-16s %s (%s), %s\n", "device",
		       g->facts.device_name,
		       sd_train_origin_name(g->facts.device_name_origin),
		       sd_train_precision_name(g->facts.precision));
	else
		printf("  %-16s - (not in the log; --device gives it)\n",
		       "device");
	printf("# summary: %zu rows (steps %ld to %ld), %zu timed standing "
	       "for %ld steps (the first row never, then %.0f warm-up "
	       "steps)\n", s->rows, s->first_step, s->last_step,
	       s->timed_rows, s->timed_steps, g->facts.warmup_steps.value);
	struct sd_train_print p = {
		.devices = g->facts.devices.value,
		.peak_part = s->peak.part,
		.logged_tflops = g->logged_tflops,
		.logged_by = l->format == SD_INGEST_MEGATRON
				     ? "Megatron-LM's num_floating_point_"
				       "operations: causal attention halved, "
				       "embeddings left out, the model's own "
				       "shapes"
			     : l->format == SD_INGEST_DEEPSPEED
				     ? "DeepSpeed's flops profiler: the "
				       "operations it saw run"
				     : NULL,
		.megatron_fpt = NAN,
		.floor_loss = NAN,
		.cmp = g->compared ? &g->cmp : NULL,
		.ref_label = g->ref_label,
		.ref_note = g->ref_note,
	};
	sd_train_summary_print(stdout, s, &p);
}

static void print_json(const struct ingest_options *o,
		       const struct sd_ingest_log *l, const struct outcome *g,
		       const char *uuid, const char *status)
{
	const struct sd_train_summary *s = &g->sum;
	struct sd_buf b = { 0 };
	sd_buf_printf(&b, "{\"run\":\"%s\",\"kind\":\"ingest_summary\","
		      "\"log\":", uuid);
	sd_buf_json_string(&b, o->log);
	sd_buf_printf(&b, ",\"format\":\"%s\",\"variant\":",
		      sd_ingest_format_name(l->format));
	sd_buf_json_string(&b, l->variant);
	sd_buf_printf(&b, ",\"lines\":%ld,\"lines_steps\":%ld,"
		      "\"lines_facts\":%ld,\"lines_unparsed\":%ld,"
		      "\"lines_other\":%ld,\"lines_other_runs\":%ld,"
		      "\"runs\":%d,\"run\":%d,\"steps_dropped\":%ld,"
		      "\"unparsed\":[",
		      l->lines, l->lines_steps, l->lines_facts,
		      l->lines_unparsed, l->lines_other, l->lines_other_runs,
		      l->runs, l->run_kept, l->steps_dropped);
	for (size_t i = 0; i < l->nbad; i++) {
		sd_buf_printf(&b, "%s{\"line\":%ld,\"why\":", i ? "," : "",
			      l->bad[i].line);
		sd_buf_json_string(&b, l->bad[i].why);
		sd_buf_printf(&b, "}");
	}
	sd_buf_printf(&b, "],\"notes\":[");
	char w[sizeof(l->warning) + 16];
	snprintf(w, sizeof(w), "warning: %s", l->warning);
	const char *notes[] = { l->note, g->apply_note, g->batch_note,
				l->warning[0] ? w : "" };
	for (size_t i = 0, nn = 0; i < sizeof(notes) / sizeof(notes[0]); i++)
		if (notes[i][0]) {
			if (nn++)
				sd_buf_printf(&b, ",");
			sd_buf_json_string(&b, notes[i]);
		}
	sd_buf_printf(&b, "],\"facts\":{");
	for (size_t i = 0; i < SD_TRAIN_NFACTS; i++) {
		const struct sd_train_fact *f = sd_train_fact_get(&g->facts, i);
		sd_buf_printf(&b, "%s\"%s\":{\"value\":", i ? "," : "",
			      sd_train_fact_fields[i].name);
		if (f->origin == SD_TRAIN_UNKNOWN)
			sd_buf_printf(&b, "null");
		else
			json_num(&b, f->value);
		sd_buf_printf(&b, ",\"origin\":\"%s\"}",
			      sd_train_origin_name(f->origin));
	}
	sd_buf_printf(&b, ",\"device\":{\"value\":");
	if (g->facts.device_name[0])
		sd_buf_json_string(&b, g->facts.device_name);
	else
		sd_buf_printf(&b, "null");
	sd_buf_printf(&b, ",\"origin\":\"%s\"}},\"precision\":\"%s\","
		      "\"rows\":%zu,\"first_step\":%ld,\"last_step\":%ld,"
		      "\"timed_rows\":%zu,\"timed_steps\":%ld,\"tgs\":",
		      sd_train_origin_name(g->facts.device_name_origin),
		      sd_train_precision_name(g->facts.precision), s->rows,
		      s->first_step, s->last_step, s->timed_rows,
		      s->timed_steps);
	json_num(&b, s->tgs);
	sd_buf_printf(&b, ",\"tokens_per_s\":");
	json_num(&b, s->tokens_per_s);
	sd_buf_printf(&b, ",\"flops_per_token\":");
	json_num(&b, s->flops_per_token);
	sd_buf_printf(&b, ",\"tflops\":");
	json_num(&b, s->tflops);
	sd_buf_printf(&b, ",\"logged_tflops\":");
	json_num(&b, g->logged_tflops);
	sd_buf_printf(&b, ",\"peak_tflops\":");
	json_num(&b, s->peak.tflops);
	sd_buf_printf(&b, ",\"mfu\":");
	json_num(&b, s->mfu);
	sd_buf_printf(&b, ",\"step_s_mean\":");
	json_num(&b, s->step_s_mean);
	sd_buf_printf(&b, ",\"loss_first\":");
	json_num(&b, s->loss_first);
	sd_buf_printf(&b, ",\"loss_last\":");
	json_num(&b, s->loss_last);
	sd_buf_printf(&b, ",\"tgs_why\":");
	sd_buf_json_string(&b, s->tgs_why);
	sd_buf_printf(&b, ",\"tflops_why\":");
	sd_buf_json_string(&b, s->tflops_why);
	sd_buf_printf(&b, ",\"mfu_why\":");
	sd_buf_json_string(&b, s->mfu_why);
	if (g->compared) {
		const struct sd_train_comparison *k = &g->cmp;
		sd_buf_printf(&b, ",\"reference\":");
		sd_buf_json_string(&b, g->ref_label);
		sd_buf_printf(&b, ",\"steps_compared\":%d,\"loss_var\":",
			      k->steps_compared);
		json_num(&b, k->diff_var);
		sd_buf_printf(&b, ",\"loss_rmse\":");
		json_num(&b, k->rmse);
		sd_buf_printf(&b, ",\"loss_max_abs_diff\":");
		json_num(&b, k->max_abs_diff);
		sd_buf_printf(&b, ",\"loss_max_diff_step\":%ld,\"loss_check\":"
			      "\"%s\",\"loss_note\":", k->max_diff_step,
			      sd_train_verdict_name(k->verdict));
		sd_buf_json_string(&b, k->note);
	} else {
		sd_buf_printf(&b, ",\"reference\":null,\"loss_check\":null");
	}
	sd_buf_printf(&b, ",\"status\":\"%s\"}\n", status);
	if (b.data)
		fputs(b.data, stdout);
	sd_buf_free(&b);
}

/* ------------------------------------------------------------ the work */

/* The reference, when one is asked for.  SD_OK, or a status with err. */
static int load_reference(const struct ingest_options *o,
			  struct sd_train_reference *ref, int *have,
			  struct outcome *g, char *err, size_t errlen)
{
	*have = 0;
	if (!o->reference || strcmp(o->reference, "none") == 0) {
		snprintf(g->ref_note, sizeof(g->ref_note), "not judged: %s",
			 o->reference ? "--reference none"
				      : "no --reference given");
		return SD_OK;
	}
	return sd_named_find_reference(o->reference, o->db, 0, ref,
				       g->ref_label, sizeof(g->ref_label),
				       have, err, errlen);
}

/* One ingest: the log, what it is judged against, and its record. */
struct ingest_run {
	struct ingest_options o;
	struct sd_ingest_log log;
	struct sd_train_reference ref;
	struct outcome *g;
	struct sd_train_rec *rec;
	int have_ref;
	char err[1200], msg[1400], config[96], cmdline[4096], uuid[37];
};

/* --model-config: the model's parameters, and its layers and width
 * where no option gave them.  An exit status. */
static int apply_model_config(struct ingest_run *x)
{
	struct sd_train_facts *f = &x->o.given.facts;
	struct sd_train_fact p = { 0 }, L = { 0 }, w = { 0 };
	if (sd_ingest_model_config(x->o.model_config, &p, &L, &w, x->err,
				   sizeof(x->err))) {
		fprintf(stderr, "shakedown ingest: --model-config: %s\n",
			x->err);
		return SD_EXIT_USAGE;
	}
	f->params = p;
	if (f->layers.origin == SD_TRAIN_UNKNOWN) {
		f->layers = L;
		x->g->from_config |= 1;
	}
	if (f->width.origin == SD_TRAIN_UNKNOWN) {
		f->width = w;
		x->g->from_config |= 2;
	}
	return SD_EXIT_OK;
}


/* Read the log, merge it with the options and summarise it.  An exit
 * status. */
static int read_log(struct ingest_run *x)
{
	struct ingest_options *o = &x->o;
	struct outcome *g = x->g;
	int rc = sd_ingest_read_run(o->log, o->format, (int)o->run, &x->log,
				    x->err,
				sizeof(x->err));
	if (rc == SD_OK)
		rc = sd_ingest_apply_global_batch(
			&x->log, o->global_batch, o->log, g->batch_note,
			sizeof(g->batch_note), x->err, sizeof(x->err));
	if (rc == SD_OK)
		rc = sd_ingest_apply(&x->log, &o->given, &g->facts,
				     g->apply_note, sizeof(g->apply_note),
				     x->err, sizeof(x->err));
	if (rc) {
		fprintf(stderr, "shakedown ingest: %s\n", x->err);
		return rc == SD_ERR_NOMEM ? SD_EXIT_ENV : SD_EXIT_USAGE;
	}
	if (o->strict && x->log.lines_unparsed) {
		fprintf(stderr, "shakedown ingest: --strict: %ld lines of %s "
			"did not parse, the first %s:%ld: %s; fix the log or "
			"drop --strict\n", x->log.lines_unparsed, o->log, o->log,
			x->log.nbad ? x->log.bad[0].line : 0L,
			x->log.nbad ? x->log.bad[0].why : "?");
		return SD_EXIT_USAGE;
	}
	if (sd_train_summarize(x->log.steps, x->log.n, &g->facts, &g->sum,
			       x->err, sizeof(x->err))) {
		fprintf(stderr, "shakedown ingest: %s: %s\n", o->log, x->err);
		return SD_EXIT_USAGE;
	}
	g->logged_tflops = logged_tflops_mean(&x->log,
					      g->facts.warmup_steps.value);
	return SD_EXIT_OK;
}

/* The loss against the reference, when there is one.  An exit status
 * for what stops the ingest (a reference that cannot be used). */
static int compare_loss(struct ingest_run *x)
{
	struct outcome *g = x->g;
	int rc = load_reference(&x->o, &x->ref, &x->have_ref, g, x->err,
				sizeof(x->err));
	if (rc) {
		fprintf(stderr, "shakedown ingest: %s\n", x->err);
		return rc == SD_ERR_INVALID ? SD_EXIT_USAGE : SD_EXIT_ENV;
	}
	if (!x->have_ref)
		return SD_EXIT_OK;
	if (x->log.misnumbered[0]) {
		/* a loss is never judged against a step it may not be */
		snprintf(g->ref_note, sizeof(g->ref_note), "not judged: %s",
			 x->log.misnumbered);
		sd_train_ref_free(&x->ref);
		x->have_ref = 0;
		return SD_EXIT_OK;
	}
	if (sd_train_compare(x->log.steps, x->log.n, x->config, &x->ref, NULL,
			     &g->cmp, x->err, sizeof(x->err))) {
		fprintf(stderr, "shakedown ingest: the loss cannot be judged "
			"against %s: %s%s\n", g->ref_label, x->err,
			strcmp(x->ref.config, x->config) != 0
				? "; a log's reference is made with 'shakedown "
				  "reference create --from-log' (and the same "
				  "--workload)"
				: "");
		return SD_EXIT_USAGE;
	}
	g->compared = 1;
	return SD_EXIT_OK;
}

/* The verdict: an exit status, with msg saying why it failed. */
static int verdict(struct ingest_run *x)
{
	const struct outcome *g = x->g;
	if (g->sum.nonfinite_step >= 0) {
		snprintf(x->msg, sizeof(x->msg), "loss became %s at step %ld "
			 "of %s", isnan(g->sum.nonfinite_loss) ? "NaN"
			 : "infinite", g->sum.nonfinite_step, x->o.log);
		return SD_EXIT_CHECK;
	}
	if (g->compared && g->cmp.verdict != SD_TRAIN_PASSED) {
		snprintf(x->msg, sizeof(x->msg), "the loss is off the "
			 "reference %s: %s", x->ref.name, g->cmp.reason);
		return SD_EXIT_VERDICT;
	}
	return SD_EXIT_OK;
}

/* The record, whole or not at all: SD_EXIT_OK with *incomplete (and
 * lack saying what it lacks), or SD_EXIT_ENV when it cannot be made. */
static int record(struct ingest_run *x, const char *st, int status,
		  int *incomplete, char *lack, size_t lacklen)
{
	const struct ingest_options *o = &x->o;
	const struct outcome *g = x->g;
	char note[600] = "";
	if (sd_train_rec_open(o->db, SD_TRAIN_REC_ATOMIC, &x->rec, note,
			      sizeof(note), x->err, sizeof(x->err))) {
		fprintf(stderr, "shakedown ingest: %s\n", x->err);
		return SD_EXIT_ENV;
	}
	if (note[0])
		fprintf(stderr, "shakedown ingest: note: %s\n", note);
	struct sd_job_info job;
	memset(&job, 0, sizeof(job));
	snprintf(job.launcher, sizeof(job.launcher), "log");
	if (o->cluster)
		sd_strlcpy(job.cluster, o->cluster, sizeof(job.cluster));
	if (o->job_id)
		sd_strlcpy(job.job_id, o->job_id, sizeof(job.job_id));
	if (o->nodes)
		sd_strlcpy(job.nodelist, o->nodes, sizeof(job.nodelist));
	struct sd_train_run_info info = {
		.kind = "ingest", .started_at = sd_wall_now(),
		.command_line = x->cmdline, .tool_version = PACKAGE_VERSION,
		.user = sd_job_user(),
		.job = &job, .config = x->config, .log_path = o->log,
		.log_format = sd_ingest_format_name(x->log.format),
		.facts = &g->facts };
	int rc = sd_train_rec_begin(x->rec, &info, x->err, sizeof(x->err));
	if (rc != SD_OK && rc != SD_ERR_IO) {
		fprintf(stderr, "shakedown ingest: %s\n", x->err);
		return SD_EXIT_ENV;
	}
	sd_strlcpy(x->uuid, sd_train_rec_uuid(x->rec), sizeof(x->uuid));
	sd_train_rec_steps(x->rec, x->log.steps, x->log.n, x->err,
			   sizeof(x->err));
	struct sd_train_end e = {
		.status = st, .exit_status = status,
		.message = x->msg[0] ? x->msg : NULL,
		.summary = &g->sum,
		.cmp = g->compared ? &g->cmp : NULL,
		.reference_name = g->compared ? x->ref.name : NULL,
		.lines_unparsed = x->log.lines_unparsed };
	sd_train_rec_finish(x->rec, &e, x->err, sizeof(x->err));
	*incomplete = sd_train_rec_incomplete(x->rec, lack, lacklen);
	return SD_EXIT_OK;
}

/* Read, judge, record and say it. */
static int ingest(struct ingest_run *x)
{
	const struct ingest_options *o = &x->o;
	int status, incomplete = 0;
	char lack[1400] = "";
	if ((o->model_config && (status = apply_model_config(x))) ||
	    (status = read_log(x)) || (status = compare_loss(x)))
		return status;
	status = verdict(x);
	const char *st = status ? "failed" : "passed";
	int rc = record(x, st, status, &incomplete, lack, sizeof(lack));
	if (rc)
		return rc;
	if (!x->uuid[0])
		sd_uuid4(x->uuid);

	if (o->json)
		print_json(o, &x->log, x->g, x->uuid, st);
	else
		print_text(o, &x->log, x->g);
	if (x->msg[0])
		fprintf(stderr, "shakedown ingest: %s\n", x->msg);
	if (incomplete && (status == SD_EXIT_OK || status == SD_EXIT_VERDICT))
		status = SD_EXIT_RECORD;
	if (!o->json && incomplete)
		printf("# run %s; exit status %d: %s\n", st, status, lack);
	else if (!o->json)
		printf("# run %s\n", st);
	if (incomplete)
		fprintf(stderr, "shakedown: %s\n", lack);
	else if (strcmp(sd_train_rec_path(x->rec), "none") != 0)
		fprintf(o->json ? stderr : stdout, "# results recorded in %s "
			"(run %s); '%s report' shows them\n",
			sd_train_rec_path(x->rec), x->uuid, sd_invoked_as);
	if (fflush(stdout) != 0 && status == SD_EXIT_OK)
		status = SD_EXIT_ENV;
	return status;
}

int cmd_ingest(int argc, char **argv)
{
	struct ingest_run *x = calloc(1, sizeof(*x));
	int rc;
	if (!x || !(x->g = calloc(1, sizeof(*x->g)))) {
		free(x);
		fprintf(stderr, "shakedown ingest: out of memory\n");
		return SD_EXIT_ENV;
	}
	sd_ingest_given_init(&x->o.given);
	sd_ingest_log_init(&x->log, SD_INGEST_AUTO);
	if ((rc = parse_options(argc, argv, &x->o)) < 0) {
		sd_command_line(argc, argv, x->cmdline, sizeof(x->cmdline));
		sd_ingest_config(x->o.workload, x->config, sizeof(x->config));
		rc = ingest(x);
	}
	sd_train_rec_close(x->rec);
	sd_train_ref_free(&x->ref);
	sd_ingest_log_free(&x->log);
	free(x->g);
	free(x);
	return rc;
}
