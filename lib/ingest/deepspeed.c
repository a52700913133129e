/*
 * deepspeed.c - DeepSpeed's stdout (`shakedown ingest --format deepspeed`).
 *
 * Written from microsoft/DeepSpeed at commit 38327e07:
 *  - deepspeed/runtime/pipe/engine.py, PipelineEngine.train_batch() (line
 *    338; the line is built at 401-405): every
 *    steps_per_print steps rank 0 prints
 *      f'steps: {global_steps} loss: {agg_train_loss:0.4f} '
 *      [f'{name}: {value:0.4f} ' for each additional loss]
 *      f'iter time (s): {iter_time:0.3f} samples/sec: {tput:0.3f}'
 *    iter_time being the train_batch timer over steps_per_print steps and
 *    tput = train_batch_size() / iter_time: a step line;
 *  - deepspeed/utils/timer.py, ThroughputTimer.stop() (line 246; the
 *    line at 264-272): every
 *    steps_per_print global steps
 *      'epoch={}/micro_step={}/global_step={}, RunningAvgSamplesPerSec={},
 *       CurrSamplesPerSec={}, MemAllocated={}GB, MaxMemAllocated={}GB'
 *    (one line; CurrSamplesPerSec = train_batch_size / the step's time): a
 *    step line without a loss;
 *  - the same timer before 0.8 (read at commit 026f4453, 0.7.x:
 *    ThroughputTimer.stop(), called by DeepSpeedEngine.step() at every
 *    micro step): every steps_per_print micro steps
 *      '{epoch}/{micro step}, RunningAvgSamplesPerSec={},
 *       CurrSamplesPerSec={}, MemAllocated={}GB, MaxMemAllocated={}GB'
 *    with CurrSamplesPerSec = micro batch x data-parallel ranks / that
 *    micro step's time, so that train_batch_size / CurrSamplesPerSec is
 *    again one optimizer step's (gradient_accumulation_steps micro
 *    steps).  The micro step counts from 0 again in every epoch when the
 *    script calls update_epoch_count(): the step is the micro steps of
 *    the epochs before (each counted to its last printed micro step:
 *    fewer than steps_per_print at its end are never printed) plus this
 *    one, over gradient_accumulation_steps, so that a new epoch goes on
 *    counting and is no new run; the epoch going back (a restarted job)
 *    starts the count again, and is one;
 *  - a timer line in a log that never states train_batch_size (no
 *    configuration block) is a row whose step_s is the seconds of one
 *    sample, 1 / CurrSamplesPerSec, for the command's --global-batch
 *    (step_s_per_sample);
 *  - deepspeed/runtime/config.py, DeepSpeedConfig.print() (lines
 *    1000-1005): at start-up,
 *    'DeepSpeedEngine configuration:' then '  {name} {dots} {value}' for
 *    each setting: train_batch_size, gradient_accumulation_steps and
 *    steps_per_print are read, the
 *    block's lines are fact lines, a value printed over several lines
 *    (a JSON object or list) to the line that closes its brackets;
 *  - deepspeed/profiling/flops_profiler/profiler.py,
 *    FlopsProfiler.print_model_profile() (line 286; the summary at
 *    327-360): the block from its title, dashes around 'DeepSpeed
 *    Flops Profiler' (the start-up banner 'DeepSpeed Flops Profiler
 *    Enabled: False' is no title), to its closing dashes, '{:<70}  {:<8}' rows:
 *    'world size:' (devices), 'data parallel size:', 'model parallel
 *    size:', 'params of model = params per GPU *
 *    mp_size:' (the model's parameters; else 'params per GPU:' when the
 *    model parallel size is 1); every line a fact line.
 * The launcher's 'dist_world_size=N' line (deepspeed/launcher/launch.py,
 * main()) gives the devices, where no profiler summary does.  A
 * Megatron-DeepSpeed job prints Megatron-LM's arguments block too
 * (megatron.c, sd_ingest_megatron_args()): seq_length, world_size,
 * num_layers and hidden_size are read from it, its lines fact lines.
 * The engine's own _report_progress() line ('step=N, skipped=S, lr=[...],
 * mom=[...]', deepspeed/runtime/engine.py lines 2486-2489) carries no loss nor time: a fact
 * line.  DeepSpeedEngine itself (no pipeline) prints no loss: its rows
 * come from the ThroughputTimer, with no loss to compare.  Launcher
 * prefixes ('[2026-01-02 03:04:05,123] [INFO] [engine.py:123:...]', '0: ',
 * '[rank0]:') are skipped: the fields are found wherever they start.
 * Unparsed: a 'steps: ... loss:' or timer line whose numbers do not
 * parse, or cut off.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/ingest.h"
#include "shakedown/backend.h"
#include "util.h"

#define PIPE_FIELD "iter time (s):"
#define TPUT_FIELD "CurrSamplesPerSec="
#define AVG_FIELD "RunningAvgSamplesPerSec="
#define PROF_BEGIN "DeepSpeed Flops Profiler"
#define CONF_BEGIN "DeepSpeedEngine configuration:"

#define find sd_ingest_find

/* Opening minus closing brackets ('{', '[') in a line, outside quoted
 * strings: how deep a multi-line value is still open after it. */
static int brackets(const char *s, size_t n)
{
	int d = 0, q = 0;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (q) {
			if (c == '\\')
				i++;
			else if (c == q)
				q = 0;
		} else if (c == '"' || c == '\'') {
			q = c;
		} else if (c == '{' || c == '[') {
			d++;
		} else if (c == '}' || c == ']') {
			d--;
		}
	}
	return d;
}

/* The number whose digits (at most 18, none before s) end right before
 * *e, and *e moved back to its first digit; -1 when there are none. */
static long digits_before(const char *s, const char **e)
{
	const char *b = *e;
	long v = 0, m = 1;
	while (b > s && b[-1] >= '0' && b[-1] <= '9' && *e - b < 18) {
		b--;
		v += (long)(*b - '0') * m;
		m *= 10;
	}
	if (b == *e)
		return -1;
	*e = b;
	return v;
}

/* The pre-0.8 ThroughputTimer's '{epoch}/{micro step}, RunningAvg...':
 * 0 with both, -1 when the line has not that form (the fields after the
 * logging prefix's "] ", or at the start). */
static int old_timer(const char *s, size_t n, long *epoch, long *micro)
{
	const char *e = find(s, n, ", " AVG_FIELD);
	if (!e)
		return -1;
	*micro = digits_before(s, &e);
	if (*micro < 0 || e == s || e[-1] != '/')
		return -1;
	e--;
	*epoch = digits_before(s, &e);
	if (*epoch < 0 || (e > s && e[-1] != ' '))
		return -1;
	return 0;
}

static int add(struct sd_ingest_log *out, long line, struct sd_train_step *r,
	       double samples, double tflops, const char *path, char *err,
	       size_t errlen)
{
	if (sd_ingest_add_step(out, line, r, samples, tflops) == SD_OK)
		return SD_OK;
	snprintf(err, errlen, "%s: out of memory at line %ld", path, line);
	return SD_ERR_NOMEM;
}

int sd_ingest_parse_deepspeed(const char *path, const char *text, size_t len,
			      struct sd_ingest_log *out, char *err,
			      size_t errlen)
{
	long line = 0;
	int in_prof = 0, in_conf = 0, in_margs = 0, pipe_rows = 0, depth = 0;
	double batch = NAN, mp = NAN, gas = NAN;
	/* the pre-0.8 timer: its last epoch and micro step, the micro
	 * steps of the epochs before, its rows and the epochs it joined */
	long old_epoch = -1, old_last = 0, old_off = 0, old_rows = 0;
	long old_wraps = 0;
	snprintf(out->variant, sizeof(out->variant), "%s",
		 SD_INGEST_CONSOLE_VARIANT);
	size_t at = 0, n;
	int cut;
	const char *s;
	while ((s = sd_ingest_next_line(text, len, &at, &n, &cut))) {
		line++;
		out->lines++;
		if (n && s[n - 1] == '\r')
			n--;
		int bad = 0;
		char sfx;
		/* the summary's title is a line of dashes around the name;
		 * "DeepSpeed Flops Profiler Enabled: False" (the start-up
		 * banner) opens nothing */
		if (in_prof || (find(s, n, PROF_BEGIN) &&
				find(s, n, "-----"))) {
			/* print_model_profile(): the summary block */
			out->lines_facts++;
			if (in_prof && n >= 20 && find(s, n, "-----") &&
			    !find(s, n, "Profile") && !find(s, n, "Aggregated"))
				in_prof = 0;
			else
				in_prof = 1;
			double v = sd_ingest_number_after(s, n, "world size:", &bad, NULL);
			if (isfinite(v))
				sd_ingest_read_fact(&out->facts.devices, v);
			v = sd_ingest_number_after(s, n, "model parallel size:", &bad, NULL);
			if (isfinite(v))
				mp = v;
			/* 'params of model = params per GPU * mp_size:' is
			 * the model's; 'params per GPU:' only when the
			 * model is not split (model parallel size 1) */
			v = sd_ingest_number_after(s, n, "params of model = params per GPU "
				      "* mp_size:", &bad, &sfx);
			if (!isfinite(v) && mp == 1)
				v = sd_ingest_number_after(s, n, "params per GPU:", &bad,
					      &sfx);
			if (isfinite(v)) {
				double m = sfx == 'K' ? 1e3 : sfx == 'M' ? 1e6
					   : sfx == 'B' || sfx == 'G' ? 1e9
					   : sfx == 'T' ? 1e12 : 1;
				sd_ingest_read_fact(&out->facts.params, v * m);
			}
			continue;
		}
		if (in_conf && depth > 0) {
			/* a multi-line value (a JSON object or list the
			 * configuration prints with its newlines) goes on
			 * until its brackets close */
			depth += brackets(s, n);
			out->lines_facts++;
			continue;
		}
		char mname[64];
		double mv;
		if (sd_ingest_megatron_args(out, s, n, &in_margs, mname,
					    sizeof(mname), &mv)) {
			/* Megatron-DeepSpeed: Megatron-LM's arguments */
			out->lines_facts++;
			in_conf = 0;
			continue;
		}
		if (in_conf || find(s, n, CONF_BEGIN)) {
			/* DeepSpeedConfig.print(): '  name ..... value' */
			char name[64] = "";
			double v = NAN;
			if (!find(s, n, CONF_BEGIN) &&
			    sd_ingest_setting_line(s, n, name, sizeof(name), &v) != 0) {
				in_conf = 0; /* the block ended: go on below */
			} else {
				in_conf = 1;
				out->lines_facts++;
				if (!find(s, n, CONF_BEGIN)) {
					int d = brackets(s, n);
					depth = d > 0 ? d : 0;
				}
				if (!find(s, n, CONF_BEGIN) &&
				    !strcmp(name, "train_batch_size") &&
				    isfinite(v))
					batch = v;
				else if (!find(s, n, CONF_BEGIN) &&
					 !strcmp(name, "steps_per_print") &&
					 isfinite(v))
					out->log_every = v;
				else if (!find(s, n, CONF_BEGIN) &&
					 !strcmp(name,
						 "gradient_accumulation_steps") &&
					 v >= 1)
					gas = v;
				continue;
			}
		}
		const char *st = find(s, n, "steps: ");
		if (st && find(s, n, " loss: ")) {
			/* PipelineEngine.train_batch() */
			if (cut || !find(s, n, "samples/sec:")) {
				sd_ingest_bad_line(out, line, s, n, "%s",
						   cut ? "the last line is cut "
							 "off (the job still "
							 "writing, or killed)"
						       : "no 'samples/sec:' at "
							 "the end: cut off");
				continue;
			}
			double step = sd_ingest_number_after(st, (size_t)(s + n - st),
						"steps:", &bad, NULL);
			double loss = sd_ingest_number_after(st, (size_t)(s + n - st),
						" loss:", &bad, NULL);
			double t = sd_ingest_number_after(s, n, PIPE_FIELD, &bad, NULL);
			double tput = sd_ingest_number_after(s, n, "samples/sec:", &bad, NULL);
			if (bad || !isfinite(step) || step < 0 ||
			    step != floor(step) || step > SD_INGEST_MAX_STEP ||
			    !(t > 0)) {
				sd_ingest_bad_line(out, line, s, n, "a number "
						   "of 'steps: N loss: X iter "
						   "time (s): T samples/sec: S' "
						   "does not parse");
				continue;
			}
			struct sd_train_step r = { .step = (long)step,
						   .rank = -1 };
			r.has = SD_STEP_LOSS | SD_STEP_TIME;
			r.loss = loss;
			r.step_s = t;
			/* tput = train_batch_size / iter_time, both rounded
			 * to 3 places: the batch is the nearest whole one */
			double samples = isfinite(batch) ? batch
					 : tput > 0 ? floor(tput * t + 0.5)
						    : NAN;
			pipe_rows++;
			/* the ThroughputTimer's row of this step, printed
			 * first, gives way to this one, which has the loss:
			 * that line becomes a fact line, this one the step's */
			if (out->n && out->run_kept == out->runs &&
			    out->steps[out->n - 1].step == r.step &&
			    !(out->steps[out->n - 1].has & SD_STEP_LOSS)) {
				out->steps[out->n - 1] = r;
				out->samples[out->n - 1] = samples;
				out->lines_facts++;
				continue;
			}
			int rc = add(out, line, &r, samples, NAN, path, err,
				     errlen);
			if (rc)
				return rc;
			continue;
		}
		const char *gs = find(s, n, "global_step=");
		long ep = 0, micro = 0;
		int old = !gs && old_timer(s, n, &ep, &micro) == 0;
		if ((gs && find(s, n, "/micro_step=")) || old) {
			/* ThroughputTimer.stop(): 'global_step=G', or before
			 * 0.8 'E/M' */
			double step = old ? (double)micro
				      : sd_ingest_number_after(s, n, "global_step=",
							       &bad, NULL);
			double curr = sd_ingest_number_after(s, n, TPUT_FIELD, &bad, NULL);
			if (bad || !isfinite(step) || step < 0 ||
			    step != floor(step) || step > SD_INGEST_MAX_STEP ||
			    !isfinite(curr) ||
			    (old && (double)old_off + (double)old_last +
						    (double)micro >
					    SD_INGEST_MAX_STEP)) {
				sd_ingest_bad_line(out, line, s, n, "%s",
						   cut ? "the last line is cut "
							 "off"
						       : old ? "the step or "
							       "CurrSamplesPerSec "
							       "does not parse "
							       "(or is past 1e15)"
						       : "global_step or "
							 "CurrSamplesPerSec "
							 "does not parse "
							 "(or is past 1e15)");
				continue;
			}
			if (old) {
				/* the micro step of this epoch: a later
				 * epoch goes on from the last one printed
				 * (update_epoch_count() restarts the count,
				 * the run goes on); an earlier one is a
				 * restarted job, counted again from 0 */
				if (old_epoch >= 0 && ep > old_epoch) {
					old_off += old_last;
					old_wraps++;
				} else if (ep < old_epoch) {
					old_off = 0;
				}
				old_epoch = ep;
				old_last = micro;
				step = (double)(old_off + micro);
				if (gas >= 1)
					step = floor(step / gas);
				old_rows++;
			}
			if (pipe_rows || !(curr > 0)) {
				/* the pipeline's own line has the loss; or
				 * no rate to time a step by */
				out->lines_facts++;
				continue;
			}
			struct sd_train_step r = { .step = (long)step,
						   .rank = -1 };
			/* the configuration's batch; not the profiler's
			 * "batch size per GPU", a micro batch (a step's is
			 * that x data parallel x the accumulation, which
			 * only the configuration prints, beside
			 * train_batch_size) */
			if (isfinite(batch)) {
				r.has = SD_STEP_TIME;
				r.step_s = batch / curr;
			} else {
				/* no batch in the log: one sample's time,
				 * for --global-batch to make a step's */
				r.step_s = 1.0 / curr;
				out->step_s_per_sample = 1;
			}
			int rc = add(out, line, &r, batch, NAN, path, err, errlen);
			if (rc)
				return rc;
			continue;
		}
		if (find(s, n, "launch.py") && find(s, n, "dist_world_size=")) {
			/* the launcher's world (deepspeed/launcher/launch.py,
			 * main(): logger.info(f"dist_world_size=...")): the
			 * devices, where no profiler says them */
			double v = sd_ingest_number_after(s, n,
							  "dist_world_size=",
							  &bad, NULL);
			if (isfinite(v) &&
			    out->facts.devices.origin == SD_TRAIN_UNKNOWN)
				sd_ingest_read_fact(&out->facts.devices, v);
			out->lines_facts++;
			continue;
		}
		if (find(s, n, "step=") && find(s, n, "skipped=") &&
		    find(s, n, "lr=")) {
			out->lines_facts++; /* engine._report_progress() */
			continue;
		}
		out->lines_other++;
	}
	if (out->n == 0) {
		snprintf(err, errlen, "%s: no step lines of DeepSpeed ('steps: "
			 "N loss: X iter time (s): T samples/sec: S', or "
			 "ThroughputTimer's 'global_step=G, ...' or 'E/M, "
			 "RunningAvgSamplesPerSec=' lines); %ld lines read, "
			 "%ld unparsed; give another --format", path,
			 out->lines, out->lines_unparsed);
		return SD_ERR_INVALID;
	}
	if (!pipe_rows && old_rows) {
		char steps[72];
		if (gas >= 1)
			snprintf(steps, sizeof(steps), "micro steps / "
				 "gradient_accumulation_steps %ld", (long)gas);
		else
			snprintf(steps, sizeof(steps), "the micro step (no "
				 "gradient_accumulation_steps in the log)");
		snprintf(out->note, sizeof(out->note), "no loss lines: rows "
			 "from the pre-0.8 ThroughputTimer ('E/M, ...'), "
			 "step = %s%s, time = %s / "
			 "CurrSamplesPerSec", steps,
			 old_wraps ? " (epochs joined at their last printed "
				     "micro step)" : "",
			 out->step_s_per_sample ? "--global-batch"
						: "train_batch_size");
	} else if (!pipe_rows) {
		snprintf(out->note, sizeof(out->note), "no loss lines (DeepSpeed's "
			 "engine prints the loss only through the pipeline "
			 "engine): rows from the ThroughputTimer, time = %s / "
			 "CurrSamplesPerSec", out->step_s_per_sample
						? "--global-batch (the log "
						  "never states "
						  "train_batch_size)"
						: "train_batch_size");
	}
	return SD_OK;
}

int sd_ingest_sniff_deepspeed(const char *text, size_t len)
{
	if (find(text, len, PIPE_FIELD) && find(text, len, "steps: "))
		return 100;
	/* the ThroughputTimer's line, 'global_step=' or before 0.8 'E/M,
	 * RunningAvgSamplesPerSec=' */
	if (find(text, len, TPUT_FIELD) && (find(text, len, "global_step=") ||
					    find(text, len, AVG_FIELD)))
		return 90;
	if (find(text, len, CONF_BEGIN) || find(text, len, PROF_BEGIN))
		return 60;
	return 0;
}
