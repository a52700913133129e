/*
 * llamafactory.c - LLaMA-Factory's trainer_log.jsonl, read with Jansson.
 *
 * Written from hiyouga/LLaMA-Factory, commit ff6d4d12 (2026-08-18),
 * src/llamafactory/train/callbacks.py, class LogCallback:
 *  - _write_log (lines 215-217): one json.dumps(logs) + "\n" per log event,
 *    appended to output_dir/trainer_log.jsonl (TRAINER_LOG,
 *    extras/constants.py:121);
 *  - on_log (lines 272-310): current_steps (state.global_step),
 *    total_steps (state.max_steps), loss / eval_loss / predict_loss /
 *    reward / accuracy, lr, epoch, percentage, elapsed_time,
 *    remaining_time, and, when state.num_input_tokens_seen is non-zero
 *    (include_num_input_tokens_seen), throughput = round(tokens seen /
 *    wall seconds since the start, 2) and total_tokens = tokens seen;
 *    keys whose value is None are left out (line 300);
 *  - _timing (lines 206-213): elapsed_time = str(timedelta(seconds =
 *    int(elapsed))), "H:MM:SS" or "N day(s), H:MM:SS": whole seconds.
 * tokens seen is transformers' state.num_input_tokens_seen, summed over
 * all processes (transformers 5.24.0 trainer.py:2748, gather + sum), so
 * total_tokens is global and throughput the whole job's tokens per
 * second since the start (not per device).  See shakedown-ingest(7).
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/ingest.h"
#include "ingest/pyjson.h"
#include "shakedown/backend.h"

/* "H:MM:SS" or "N day, H:MM:SS" / "N days, H:MM:SS" (Python's
 * timedelta.__str__ without microseconds, since _timing passes int
 * seconds): seconds, or -1. */
static double parse_timedelta(const char *s)
{
	double days = 0;
	char *end;
	const char *p = s;
	if (strstr(s, "day")) {
		long d = strtol(p, &end, 10);
		if (end == p || d < 0)
			return -1;
		p = end;
		while (*p == ' ')
			p++;
		if (!strncmp(p, "days, ", 6))
			p += 6;
		else if (!strncmp(p, "day, ", 5))
			p += 5;
		else
			return -1;
		days = (double)d;
	}
	long h, m, sec;
	int used = 0;
	if (sscanf(p, "%ld:%2ld:%2ld%n", &h, &m, &sec, &used) != 3 ||
	    p[used] != '\0' || h < 0 || m < 0 || m > 59 || sec < 0 || sec > 59)
		return -1;
	return days * 86400 + (double)h * 3600 + (double)m * 60 + (double)sec;
}

struct lf_row {
	long line;
	double elapsed; /* seconds, -1 unknown */
	double tokens;  /* total_tokens, -1 unknown */
};

int sd_ingest_parse_llamafactory(const char *path, const char *text,
				 size_t len, struct sd_ingest_log *out,
				 char *err, size_t errlen)
{
	snprintf(out->variant, sizeof(out->variant), "trainer_log.jsonl");
	struct lf_row *rows = NULL;
	size_t nrows = 0, caprows = 0;
	long lineno = 0;
	int rc = SD_OK;
	size_t pos = 0, n;
	int cut;
	for (const char *line;
	     (line = sd_ingest_next_line(text, len, &pos, &n, &cut));) {
		lineno++;
		out->lines++;
		size_t k = n;
		while (k > 0 && (line[k - 1] == '\r' || line[k - 1] == ' ' ||
				 line[k - 1] == '\t'))
			k--;
		size_t s0 = 0;
		while (s0 < k && (line[s0] == ' ' || line[s0] == '\t'))
			s0++;
		if (s0 == k) {
			out->lines_other++;
			continue;
		}
		json_error_t je;
		json_t *o = sd_pyjson_load(line, n, &je);
		if (!o || !json_is_object(o)) {
			if (cut && line[s0] == '{')
				sd_ingest_bad_line(out, lineno, line, n,
						   "the last line is cut off "
						   "(the job still writing, or "
						   "killed): %s at column %d",
						   o ? "not an object" : je.text,
						   o ? 1 : je.column);
			else if (o)
				sd_ingest_bad_line(out, lineno, line, n,
						   "a JSON value but not an "
						   "object; every line of "
						   "trainer_log.jsonl is one");
			else
				sd_ingest_bad_line(out, lineno, line, n,
						   "not JSON: %s at column %d",
						   je.text, je.column);
			json_decref(o);
			continue;
		}
		json_t *cs = json_object_get(o, "current_steps");
		json_t *lv = json_object_get(o, "loss");
		if (!cs || !lv || json_is_null(lv)) {
			/* "loss": null: on_log's record of a step with no
			 * training loss (the end of training, an eval); a
			 * complete line, not a row */
			/* eval_loss / predict_loss lines, or another
			 * writer's object: not a training step */
			out->lines_other++;
			json_decref(o);
			continue;
		}
		double loss, elapsed = -1, tokens = -1;
		if (!json_is_integer(cs) || json_integer_value(cs) < 0) {
			sd_ingest_bad_line(out, lineno, line, n,
					   "\"current_steps\" is not a whole "
					   "number >= 0");
			json_decref(o);
			continue;
		}
		if (!sd_pyjson_number(lv, &loss)) {
			sd_ingest_bad_line(out, lineno, line, n,
					   "\"loss\" is not a number");
			json_decref(o);
			continue;
		}
		json_t *et = json_object_get(o, "elapsed_time");
		if (json_is_string(et))
			elapsed = parse_timedelta(json_string_value(et));
		json_t *tt = json_object_get(o, "total_tokens");
		double tv;
		if (tt && sd_pyjson_number(tt, &tv) && isfinite(tv) && tv >= 0)
			tokens = tv;
		struct sd_train_step st = { 0 };
		st.step = (long)json_integer_value(cs);
		st.has = SD_STEP_LOSS;
		st.loss = loss;
		size_t before = out->n;
		rc = sd_ingest_add_step(out, lineno, &st, NAN, NAN);
		json_decref(o);
		if (rc != SD_OK) {
			snprintf(err, errlen, "%s: out of memory", path);
			goto done;
		}
		if (out->n == before)
			continue;
		if (nrows == caprows) {
			size_t cap = caprows ? 2 * caprows : 64;
			struct lf_row *r = realloc(rows, cap * sizeof(*r));
			if (!r) {
				rc = SD_ERR_NOMEM;
				snprintf(err, errlen, "%s: out of memory", path);
				goto done;
			}
			rows = r;
			caprows = cap;
		}
		rows[nrows++] = (struct lf_row){ lineno, elapsed, tokens };
	}

	/* step time: elapsed_time differences over the steps between rows;
	 * whole seconds, so a row less than a second after the one before
	 * gets no time */
	int timed = 0, tokened = 0;
	for (size_t i = 0; i < nrows; i++) {
		struct sd_train_step *s = &out->steps[i];
		double prev_e = i ? rows[i - 1].elapsed : 0;
		double prev_t = i ? rows[i - 1].tokens : 0;
		long prev_s = i ? out->steps[i - 1].step : 0;
		long span = s->step - prev_s;
		if (span <= 0)
			continue;
		if (rows[i].elapsed >= 0 && prev_e >= 0 &&
		    rows[i].elapsed - prev_e > 0) {
			s->step_s = (rows[i].elapsed - prev_e) / (double)span;
			s->has |= SD_STEP_TIME;
			timed++;
		}
		if (rows[i].tokens >= 0 && prev_t >= 0 &&
		    rows[i].tokens - prev_t > 0) {
			s->tokens = (rows[i].tokens - prev_t) / (double)span;
			s->has |= SD_STEP_TOKENS;
			tokened++;
		}
	}
	snprintf(out->note, sizeof(out->note),
		 "step time from elapsed_time (whole seconds) over the steps "
		 "between rows%s; tokens %s",
		 timed < (int)nrows ? ", none where under a second passed" : "",
		 tokened ? "from total_tokens differences"
			 : "not logged: give --tokens-per-step or --seq-len");
	if (out->n == 0) {
		if (memmem(text, len, "\"log_history\"", 13))
			snprintf(err, errlen, "%s: a JSON document with "
				 "\"log_history\", not JSON lines: a "
				 "trainer_state.json; give --format hf", path);
		else if (out->nbad)
			snprintf(err, errlen, "%s: no step lines of "
				 "llamafactory; %ld lines read, %ld unparsed: "
				 "first at line %ld: %s", path, out->lines,
				 out->lines_unparsed, out->bad[0].line,
				 out->bad[0].why);
		else
			snprintf(err, errlen, "%s: no step lines of "
				 "llamafactory; %ld lines read, none with "
				 "\"current_steps\" and \"loss\"", path,
				 out->lines);
		rc = SD_ERR_INVALID;
	}
done:
	free(rows);
	return rc;
}

int sd_ingest_sniff_llamafactory(const char *text, size_t len)
{
	size_t i = 0;
	while (i < len && (text[i] == ' ' || text[i] == '\t' ||
			   text[i] == '\n' || text[i] == '\r'))
		i++;
	if (i >= len || text[i] != '{' || i + 1 >= len || text[i + 1] != '"')
		return 0;
	const char *nl = memchr(text + i, '\n', len - i);
	size_t n = nl ? (size_t)(nl - (text + i)) : len - i;
	char first[4096];
	if (n >= sizeof(first))
		n = sizeof(first) - 1;
	memcpy(first, text + i, n);
	first[n] = '\0';
	if (strstr(first, "\"current_steps\""))
		return 100;
	return 10;
}
