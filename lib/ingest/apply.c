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

void sd_ingest_config(const char *workload, char *buf, size_t len)
{
	if (workload && *workload)
		snprintf(buf, len, "log %s", workload);
	else
		snprintf(buf, len, "log");
}
