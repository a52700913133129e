/*
 * apply.c - a parsed log merged with the command's options (apply.h).
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ingest/apply.h"
#include "shakedown/backend.h"
#include "util.h"

void sd_ingest_given_init(struct sd_ingest_given *g)
{
	memset(g, 0, sizeof(*g));
	sd_train_facts_init(&g->facts);
}

/* Append to note, "; "-separated, as far as it goes. */
static void add_note(char *note, size_t len, const char *what)
{
	if (!note || !len)
		return;
	size_t u = strlen(note);
	if (u + 1 >= len)
		return;
	snprintf(note + u, len - u, "%s%s", u ? "; " : "", what);
}

/* One fact: the given one wins; say when the log said otherwise. */
static void merge(struct sd_train_fact *out, const struct sd_train_fact *given,
		  const struct sd_train_fact *read, const char *option,
		  char *note, size_t notelen)
{
	if (given->origin != SD_TRAIN_UNKNOWN) {
		*out = *given;
		if (read->origin != SD_TRAIN_UNKNOWN &&
		    fabs(given->value - read->value) >
			    1e-9 * fabs(read->value)) {
			char buf[160];
			snprintf(buf, sizeof(buf), "%s %.6g given; the log "
				 "says %.6g", option, given->value,
				 read->value);
			add_note(note, notelen, buf);
		}
	} else {
		*out = *read;
	}
}

/* The reader's "give --tokens-per-step" hint, said where the options
 * gave the tokens after all: what they gave instead. */
static void tokens_hint(struct sd_ingest_log *l, const struct sd_train_facts *f)
{
	char *at = strstr(l->note, SD_INGEST_TOKENS_HINT);
	const char *instead =
		f->tokens_per_step.origin == SD_TRAIN_GIVEN
			? "taken from --tokens-per-step"
		: f->seq_len.origin != SD_TRAIN_UNKNOWN && l->samples
			? "each row's samples x the sequence length"
			: NULL;
	if (!at || !instead)
		return;
	char rest[sizeof(l->note)];
	sd_strlcpy(rest, at + strlen(SD_INGEST_TOKENS_HINT), sizeof(rest));
	snprintf(at, sizeof(l->note) - (size_t)(at - l->note), "%s%s", instead,
		 rest);
}

int sd_ingest_apply(struct sd_ingest_log *l, const struct sd_ingest_given *g,
		    struct sd_train_facts *out, char *note, size_t notelen,
		    char *err, size_t errlen)
{
	const struct sd_train_facts *gf = &g->facts, *rf = &l->facts;
	if (note && notelen)
		note[0] = '\0';
	if (l->steps_are_rows) {
		long every = g->log_every > 0 ? g->log_every
			     : isfinite(l->log_every) && l->log_every >= 1
				     ? (long)l->log_every : 0;
		if (every <= 0) {
			snprintf(err, errlen, "the log has no step numbers "
				 "(%s %s); give --log-every N, the steps "
				 "between its logged rows (the Trainer's "
				 "logging_steps)",
				 sd_ingest_format_name(l->format),
				 l->variant[0] ? l->variant : "log");
			return SD_ERR_INVALID;
		}
		for (size_t i = 0; i < l->n; i++)
			l->steps[i].step *= every;
		l->steps_are_rows = 0;
		l->log_every = (double)every;
	} else if (g->log_every > 0 && isfinite(l->log_every) &&
		   (long)l->log_every != g->log_every) {
		char buf[160];
		snprintf(buf, sizeof(buf), "--log-every %ld ignored: the log "
			 "numbers its steps (every %.0f)", g->log_every,
			 l->log_every);
		add_note(note, notelen, buf);
	}

	sd_train_facts_init(out);
	for (size_t i = 0; i < SD_TRAIN_NFACTS; i++)
		merge(sd_train_fact_at(out, i), sd_train_fact_get(gf, i),
		      sd_train_fact_get(rf, i), sd_train_fact_fields[i].option,
		      note, notelen);
	if (gf->device_name[0]) {
		sd_strlcpy(out->device_name, gf->device_name,
			   sizeof(out->device_name));
		out->device_name_origin = gf->device_name_origin
						  ? gf->device_name_origin
						  : SD_TRAIN_GIVEN;
	} else if (rf->device_name[0]) {
		sd_strlcpy(out->device_name, rf->device_name,
			   sizeof(out->device_name));
		out->device_name_origin = SD_TRAIN_READ;
	}
	out->precision = gf->precision;

	tokens_hint(l, out);
	/* tokens of each row: its samples x the sequence length */
	if (out->seq_len.origin != SD_TRAIN_UNKNOWN)
		for (size_t i = 0; i < l->n; i++) {
			struct sd_train_step *s = &l->steps[i];
			double sa = l->samples ? l->samples[i] : NAN;
			if ((s->has & SD_STEP_TOKENS) || !(isfinite(sa) &&
							   sa > 0))
				continue;
			s->tokens = sa * out->seq_len.value;
			s->has |= SD_STEP_TOKENS;
		}
	return sd_train_check_steps(l->steps, l->n, err, errlen);
}

/*
 * --global-batch G (0: not given), the sequences of one optimizer step
 * over all ranks, made each row's samples (the tokens are samples x
 * seq_len, sd_ingest_apply()).  The given value wins over the log's own,
 * as every option's does, and the note says what the log said.  A row
 * that has only one sample's time (DeepSpeed's ThroughputTimer in a log
 * that never states train_batch_size: step_s_per_sample) is timed G x
 * that: DeepSpeed's samples/s is its batch over the step's time, so tgs
 * comes out the same whatever G is, and G is there for the tokens.
 * Such rows without G: SD_ERR_INVALID, saying to give it.
 */
int sd_ingest_apply_global_batch(struct sd_ingest_log *l, long G,
				 const char *path, char *note, size_t notelen,
				 char *err, size_t errlen)
{
	size_t per_sample = 0;
	double lo = INFINITY, hi = -INFINITY;
	for (size_t i = 0; i < l->n; i++) {
		if (l->step_s_per_sample && !(l->steps[i].has & SD_STEP_TIME))
			per_sample++;
		if (isfinite(l->samples[i]) && l->samples[i] > 0) {
			lo = fmin(lo, l->samples[i]);
			hi = fmax(hi, l->samples[i]);
		}
	}
	if (G <= 0) {
		if (!per_sample)
			return SD_OK;
		snprintf(err, errlen, "%s: DeepSpeed's ThroughputTimer gives "
			 "samples per second, but the log never states "
			 "train_batch_size to time a step by; give "
			 "--global-batch N, the sequences of one optimizer "
			 "step over all ranks (per-device batch x "
			 "data-parallel ranks x gradient accumulation)", path);
		return SD_ERR_INVALID;
	}
	for (size_t i = 0; i < l->n; i++) {
		struct sd_train_step *s = &l->steps[i];
		if (l->step_s_per_sample && !(s->has & SD_STEP_TIME)) {
			s->step_s *= (double)G;
			s->has |= SD_STEP_TIME;
		}
		l->samples[i] = (double)G;
	}
	l->step_s_per_sample = 0;
	if (lo > hi)
		snprintf(note, notelen, "global batch %ld from --global-batch "
			 "(the log states none)", G);
	else if (lo == hi && lo == (double)G)
		snprintf(note, notelen, "--global-batch %ld given; the log "
			 "says the same", G);
	else if (lo == hi)
		snprintf(note, notelen, "--global-batch %ld given; the log "
			 "says %.6g", G, lo);
	else
		snprintf(note, notelen, "--global-batch %ld given; the log "
			 "says %.6g to %.6g", G, lo, hi);
	return SD_OK;
}
void sd_ingest_config(const char *workload, char *buf, size_t len)
{
	if (workload && *workload)
		snprintf(buf, len, "log %s", workload);
	else
		snprintf(buf, len, "log");
}
