/*
 * megatron.c - Megatron-LM's stdout (`shakedown ingest --format megatron`).
 *
 * Written from NVIDIA/Megatron-LM at commit d98e8a64 (also read at
 * 86df799d), megatron/training/training.py training_log() (line 3263):
 * every log_interval iterations the last rank prints one line built of
 * '|'-separated fields (lines 3567-3641), after a
 * ' [%Y-%m-%d %H:%M:%S.%f]' stamp (line 3567; absent in older trees):
 *
 *   ' iteration {:8d}/{:8d} |'                      the step, train_iters
 *   ' consumed samples: {:12d} |'
 *   ' elapsed time per iteration (ms): {:.1f} |'    the interval's mean
 *   ' throughput per GPU (TFLOP/s/GPU): {:.1f} |'   with --log-throughput
 *   ' learning rate: {:.6E} |'
 *   ' global batch size: {:5d} |'
 *   ' {key}: {:.6E} |'                              each loss, "lm loss"
 *                                                   for GPT, averaged
 *                                                   over the interval's
 *                                                   advanced iterations,
 *                                                   printed when >= 0
 *                                                   (> 0 at 86df799d)
 *   ' loss scale: {:.1f} |', ' grad norm: {:.3f} |'
 *   ' number of skipped iterations: {:3d} |'
 *   ' number of nan iterations: {:3d} |'
 *
 * (older trees: megatron/training.py, the same fields; some forks prefix
 * '==> ' or a '[date time]' stamp, and launchers '[rank7]:' or '7: ';
 * the line is found by its fields, wherever it starts).  And once, at
 * the start, megatron/training/arguments.py _print_args() (lines
 * 1990-2001; dots = '.' * (48 - len(name))):
 *
 *   '------------------------ arguments ------------------------'
 *   '  {name} {dots} {value}'                       one per argument
 *   '-------------------- end of arguments ---------------------'
 *
 * Read: a row per iteration line: step = the iteration, loss = "lm loss"
 * (else the first other "... loss" key), step_s = elapsed ms / 1000,
 * samples = global batch size, logged_tflops = the throughput per GPU.
 * An interval with nan iterations has a NaN loss: Megatron leaves those
 * iterations out of the average it prints, shakedown does not hide them.
 * Skipped iterations (fp16 loss-scale overflows) are normal and kept.
 * Facts from the arguments: seq_length, world_size (devices), num_layers
 * and hidden_size; every line of the block is a fact line.  The
 * parameters: get_model()'s "number of parameters on (tensor, pipeline)
 * model parallel rank (T, P): N" lines summed, when all of the
 * tensor x pipeline ranks printed theirs.  The block is
 * read by sd_ingest_megatron_args(), which deepspeed.c calls too: a
 * Megatron-DeepSpeed job prints it above DeepSpeed's own lines.
 * Unparsed: an iteration line whose step, time or a loss does not parse,
 * and one cut off (the file's last line without its newline or closing
 * '|').  Everything else (warnings, memory reports, validation lines) is
 * other.
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

#define ITER_FIELD "elapsed time per iteration (ms):"
#define ARGS_BEGIN "-- arguments --"
#define ARGS_END "-- end of arguments --"

#define find sd_ingest_find

/* The number after " name:" in the line, or NaN; *bad = 1 when the
 * field is there and its number does not parse. */
static double field(const char *s, size_t n, const char *name, int *bad)
{
	char key[96];
	snprintf(key, sizeof(key), " %s:", name);
	return sd_ingest_number_after(s, n, key, bad, NULL);
}

/* "lm loss", else the first other "<key> loss: X" field (a model of
 * another name).  *found = 1 when there is one; NaN and *bad when its
 * number does not parse. */
static double loss_field(const char *s, size_t n, int *bad, int *found)
{
	*found = find(s, n, " lm loss:") != NULL;
	if (*found)
		return field(s, n, "lm loss", bad);
	for (const char *f = s; f < s + n;) {
		const char *bar = memchr(f, '|', (size_t)(s + n - f));
		const char *e = bar ? bar : s + n;
		const char *colon = memchr(f, ':', (size_t)(e - f));
		if (colon && colon - f >= 5 && !memcmp(colon - 5, " loss", 5) &&
		    !find(f, (size_t)(colon - f), "scale")) {
			char key[80];
			const char *b = f;
			while (b < colon && *b == ' ')
				b++;
			size_t k = (size_t)(colon - b);
			if (k && k < sizeof(key)) {
				memcpy(key, b, k);
				key[k] = '\0';
				*found = 1;
				return field(s, n, key, bad);
			}
		}
		f = e + 1;
	}
	return NAN;
}

int sd_ingest_megatron_args(struct sd_ingest_log *l, const char *s, size_t n,
			    int *in_args, char *name, size_t nlen,
			    double *value)
{
	if (!*in_args && !find(s, n, ARGS_BEGIN))
		return 0;
	*in_args = !find(s, n, ARGS_END);
	if (sd_ingest_setting_line(s, n, name, nlen, value) != 0) {
		/* the block's title and end */
		if (nlen)
			name[0] = '\0';
		*value = NAN;
		return 1;
	}
	if (!strcmp(name, "seq_length"))
		sd_ingest_read_fact(&l->facts.seq_len, *value);
	else if (!strcmp(name, "world_size"))
		sd_ingest_read_fact(&l->facts.devices, *value);
	else if (!strcmp(name, "num_layers"))
		sd_ingest_read_fact(&l->facts.layers, *value);
	else if (!strcmp(name, "hidden_size"))
		sd_ingest_read_fact(&l->facts.width, *value);
	return 1;
}

/* get_model()'s " > number of parameters on (tensor, pipeline) model
 * parallel rank (T, P): N" (megatron/training/training.py, printed by
 * each model-parallel rank of data-parallel rank 0): 1 with T, P and N,
 * else 0. */
static int shard_params(const char *s, size_t n, long *t, long *p, double *v)
{
	static const char key[] = "number of parameters on (tensor, pipeline) "
				  "model parallel rank (";
	const char *k = find(s, n, key);
	if (!k)
		return 0;
	char buf[96];
	size_t len = (size_t)(s + n - (k + sizeof(key) - 1));
	if (len >= sizeof(buf))
		len = sizeof(buf) - 1;
	memcpy(buf, k + sizeof(key) - 1, len);
	buf[len] = '\0';
	char tail;
	return sscanf(buf, "%ld, %ld): %lf%c", t, p, v, &tail) == 3;
}

int sd_ingest_parse_megatron(const char *path, const char *text, size_t len,
			     struct sd_ingest_log *out, char *err,
			     size_t errlen)
{
	long line = 0;
	int in_args = 0;
	/* the model-parallel ranks' parameters, and how many there are */
	enum { MAX_SHARDS = 256 };
	long shard_t[MAX_SHARDS], shard_p[MAX_SHARDS];
	double shard_n[MAX_SHARDS], tp = 1, pp = 1;
	int nshards = 0, shards_lost = 0;
	snprintf(out->variant, sizeof(out->variant), "%s",
		 SD_INGEST_CONSOLE_VARIANT);
	size_t at = 0, n;
	int last_cut;
	const char *s;
	while ((s = sd_ingest_next_line(text, len, &at, &n, &last_cut))) {
		line++;
		out->lines++;
		if (n && s[n - 1] == '\r')
			n--;
		char name[64];
		double v;
		if (sd_ingest_megatron_args(out, s, n, &in_args, name,
					    sizeof(name), &v)) {
			/* _print_args: the block, every line a fact line */
			out->lines_facts++;
			if (!strcmp(name, "log_interval"))
				out->log_every = v;
			else if (!strcmp(name, "tensor_model_parallel_size") &&
				 v >= 1)
				tp = v;
			else if (!strcmp(name, "pipeline_model_parallel_size") &&
				 v >= 1)
				pp = v;
			continue;
		}
		long st, sp;
		double sv;
		if (shard_params(s, n, &st, &sp, &sv)) {
			int k = 0;
			while (k < nshards &&
			       (shard_t[k] != st || shard_p[k] != sp))
				k++;
			if (k == nshards && nshards < MAX_SHARDS) {
				shard_t[k] = st;
				shard_p[k] = sp;
				nshards++;
			} else if (k == nshards) {
				shards_lost = 1;
			}
			if (k < nshards)
				shard_n[k] = sv; /* a later run's wins */
			out->lines_facts++;
			continue;
		}
		/* the number after "iteration ": at the line's start (no
		 * stamp before it), else the first " iteration " (the
		 * field comes before "elapsed time per iteration (ms)") */
		const char *it = NULL;
		if (n >= 10 && !memcmp(s, "iteration ", 10))
			it = s + 10;
		else if ((it = find(s, n, " iteration ")))
			it += strlen(" iteration ");
		if (!it || !find(s, n, ITER_FIELD)) {
			/* a cut-off step line may have lost its time field */
			if (it && last_cut && find(s, n, "consumed samples"))
				sd_ingest_bad_line(out, line, s, n, "the last "
						   "line is cut off (the job "
						   "still writing, or killed)");
			else
				out->lines_other++;
			continue;
		}
		/* training_log(): ' iteration {:8d}/{:8d} |' */
		const char *p = it;
		while (p < s + n && *p == ' ')
			p++;
		char *end;
		errno = 0;
		long step = strtol(p, &end, 10);
		if (end == p || *end != '/' || errno || step < 0) {
			sd_ingest_bad_line(out, line, s, n, "no iteration "
					   "number after 'iteration'");
			continue;
		}
		size_t tail = n;
		while (tail && s[tail - 1] == ' ')
			tail--;
		if (last_cut || !tail || s[tail - 1] != '|') {
			sd_ingest_bad_line(out, line, s, n, "%s",
					   last_cut ? "the last line is cut off "
						      "(the job still "
						      "writing, or killed)"
						    : "the line is cut off "
						      "(no closing '|')");
			continue;
		}
		int bad = 0, found = 0;
		double ms = field(s, n, "elapsed time per iteration (ms)", &bad);
		if (bad || !(ms > 0)) {
			sd_ingest_bad_line(out, line, s, n, "no time after '"
					   ITER_FIELD "'");
			continue;
		}
		double loss = loss_field(s, n, &bad, &found);
		if (bad) {
			sd_ingest_bad_line(out, line, s, n, "the loss does not "
					   "parse as a number");
			continue;
		}
		double gbs = field(s, n, "global batch size", &bad);
		double tflops = field(s, n, "throughput per GPU (TFLOP/s/GPU)",
				      &bad);
		double nans = field(s, n, "number of nan iterations", &bad);
		if (bad) {
			sd_ingest_bad_line(out, line, s, n, "a field's number "
					   "does not parse (global batch size, "
					   "throughput or nan iterations)");
			continue;
		}
		struct sd_train_step r = { .step = step, .rank = -1 };
		r.has = SD_STEP_TIME;
		r.step_s = ms / 1000.0;
		if (isfinite(nans) && nans > 0) {
			/* Megatron averages only the iterations that were
			 * not NaN; the interval had some */
			r.loss = NAN;
			r.has |= SD_STEP_LOSS;
		} else if (found) {
			r.loss = loss;
			r.has |= SD_STEP_LOSS;
		}
		if (sd_ingest_add_step(out, line, &r, gbs, tflops) != SD_OK) {
			snprintf(err, errlen, "%s: out of memory at line %ld",
				 path, line);
			return SD_ERR_NOMEM;
		}
	}
	if (out->n == 0) {
		snprintf(err, errlen, "%s: no iteration lines of Megatron-LM "
			 "(' iteration N/ M | ... | " ITER_FIELD " ... |'); "
			 "%ld lines read, %ld unparsed%s%.160s; give the "
			 "output of the job's last rank, or another --format",
			 path, out->lines, out->lines_unparsed,
			 out->nbad ? ": first: " : "",
			 out->nbad ? out->bad[0].why : "");
		return SD_ERR_INVALID;
	}
	/* the whole model: every model-parallel rank's share summed, when
	 * all tensor x pipeline of them printed theirs (what tensor
	 * parallelism copies, layer norms, is counted on each: a few per
	 * million) */
	if (nshards && !shards_lost && (double)nshards == tp * pp) {
		double sum = 0;
		for (int k = 0; k < nshards; k++)
			sum += shard_n[k];
		sd_ingest_read_fact(&out->facts.params, sum);
	}
	if (isfinite(out->log_every) && out->log_every > 1)
		snprintf(out->note, sizeof(out->note), "a row every %.0f "
			 "iterations (log_interval): each row is the mean of "
			 "its interval", out->log_every);
	return SD_OK;
}

int sd_ingest_sniff_megatron(const char *text, size_t len)
{
	if (find(text, len, ITER_FIELD) && find(text, len, " iteration "))
		return 100;
	if (find(text, len, "------------------------ arguments ---------"
				"---------------"))
		return 60;
	return 0;
}
