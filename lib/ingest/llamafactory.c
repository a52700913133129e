/*
 * llamafactory.c - JSON-lines logs, read with Jansson: LLaMA-Factory's
 * trainer_log.jsonl and ms-swift's logging.jsonl.
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
 * second since the start (not per device).
 *
 * Also ms-swift's logging.jsonl (format hf, variant "logging.jsonl"; hf.c
 * hands it here), written from modelscope/ms-swift:
 *  - swift/trainers/callback.py, ProgressCallbackNew.on_log: each log
 *    event's dict appended to output_dir/logging.jsonl (json.dumps) after
 *    add_train_message adds "global_step/max_steps" ("12/294"),
 *    percentage, elapsed_time and remaining_time;
 *  - swift/utils/utils.py, format_time: "6s", "1m 42s", "2h 3m 4s",
 *    "1d 2h 3m 4s", each part int() of the seconds;
 *  - swift/trainers/mixin.py, _maybe_log_save_evaluate:
 *    "train_speed(iter/s)" = round(global_step / (time.time() -
 *    start_time), 6): a mean since the session's start, counting a
 *    resumed session's earlier steps too, so never a row's own speed.
 * Both files can hold two processes' rows and resumed sessions; see
 * assign_writers() and shakedown-ingest(7).
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

/* ms-swift's format_time (swift/utils/utils.py): "6s", "1m 42s",
 * "2h 3m 4s", "1d 2h 3m 4s", whole seconds (int() of each part):
 * seconds, or -1. */
static double parse_swift_time(const char *s)
{
	static const char unit[] = "dhms";
	static const double secs[] = { 86400, 3600, 60, 1 };
	double t = 0;
	int next = 0, any = 0;
	const char *p = s;
	while (*p) {
		if (*p < '0' || *p > '9')
			return -1;
		char *end;
		long v = strtol(p, &end, 10);
		p = end;
		int k = next;
		while (k < 4 && unit[k] != *p)
			k++;
		if (k == 4)
			return -1;
		t += (double)v * secs[k];
		next = k + 1;
		any = 1;
		p++;
		if (*p == ' ')
			p++;
		else if (*p)
			return -1;
	}
	return any ? t : -1;
}

/* "N/M" of ms-swift's "global_step/max_steps": 1 with N, else 0. */
static int parse_global_step(const char *s, long *step)
{
	char *end;
	if (*s < '0' || *s > '9')
		return 0;
	long n = strtol(s, &end, 10);
	if (*end != '/' || end[1] < '0' || end[1] > '9')
		return 0;
	strtol(end + 1, &end, 10);
	if (*end)
		return 0;
	*step = n;
	return 1;
}

/* The two JSON-lines logs read here: LLaMA-Factory's trainer_log.jsonl
 * and ms-swift's logging.jsonl (reported as format hf). */
enum jl_kind { JL_LLAMAFACTORY, JL_SWIFT };

/* A line with a step and a loss, before runs and writers are known. */
struct jl_rec {
	long line;
	long step;
	double loss;
	double at;     /* seconds since its session began, -1 unknown */
	double eval_s; /* evaluation seconds logged since the line before */
	double tokens; /* tokens seen so far (global), -1 unknown */
	int writer;    /* 0 the session's first, 1 a second process's, -1
			  neither (left to sd_ingest_add_step) */
	int session;   /* 1.. */
};

/* Seconds a second writer's row may be ahead of the first's at the same
 * step and still be taken for another process writing the same run (two
 * processes started together; a resume instead begins its clock again). */
#define JL_WRITER_SLACK 60.0

/* How far (in records) the two writers' rows of one step may be apart:
 * they interleave, one at most a few logging intervals behind; a bound
 * keeps a hostile file linear. */
#define JL_WRITER_REACH 256

/* The first writer's record at r[i]'s step in r[i]'s session, or NULL;
 * its records rise in step, so the search stops once past it. */
static const struct jl_rec *first_writer_row(const struct jl_rec *r,
					     size_t n, size_t i)
{
	size_t lo = i > JL_WRITER_REACH ? i - JL_WRITER_REACH : 0;
	size_t hi = n - i > JL_WRITER_REACH ? i + JL_WRITER_REACH : n;
	for (size_t j = i; j-- > lo && r[j].session == r[i].session;)
		if (r[j].writer == 0) {
			if (r[j].step == r[i].step)
				return &r[j];
			if (r[j].step < r[i].step)
				break;
		}
	for (size_t j = i + 1; j < hi && r[j].session == r[i].session; j++)
		if (r[j].writer == 0) {
			if (r[j].step == r[i].step)
				return &r[j];
			if (r[j].step > r[i].step)
				break;
		}
	return NULL;
}

/*
 * Sessions (runs) and writers.  A record goes to the writer whose last
 * step is the nearest below its own: two processes appending to one file
 * (LLaMA-Factory run twice into one output_dir) each keep their steps
 * rising, one a logging interval behind the other at times.  A step no
 * writer can take is a second writer when the first wrote that step with
 * about as much time behind it; else a new session when it goes back to
 * where the session began (a restart) or its clock went back (a resume
 * from a checkpoint, which starts elapsed_time again); else a stray,
 * which sd_ingest_add_step drops as a copy or a misnumbered line.  A
 * "second writer" of fewer than 2 rows is a stray too: a line written
 * twice is no second process.  Returns the number of sessions.
 */
static int assign_writers(struct jl_rec *r, size_t n)
{
	int sess = 0, nw = 0;
	size_t last[2] = { 0, 0 };
	long first = 0, prev = 0;
	for (size_t i = 0; i < n; i++) {
		struct jl_rec *x = &r[i];
		x->session = sess;
		int best = -1;
		for (int k = 0; k < nw; k++)
			if (r[last[k]].step < x->step &&
			    (best < 0 || r[last[k]].step > r[last[best]].step))
				best = k;
		if (best >= 0) {
			x->writer = best;
			last[best] = i;
			prev = x->step;
			continue;
		}
		if (nw == 1 && x->at >= 0) {
			x->writer = -1;
			const struct jl_rec *same = first_writer_row(r, i, i);
			if (same && same->at >= 0 &&
			    x->at + JL_WRITER_SLACK >= same->at) {
				nw = 2;
				x->writer = 1;
				last[1] = i;
				prev = x->step;
				continue;
			}
		}
		int back = x->at >= 0;
		for (int k = 0; k < nw; k++)
			back &= r[last[k]].at >= 0 &&
				x->at + JL_WRITER_SLACK < r[last[k]].at;
		if (nw == 0 || (x->step <= first && x->step != prev) || back) {
			x->session = ++sess;
			x->writer = 0;
			nw = 1;
			last[0] = i;
			first = x->step;
		} else {
			x->writer = -1;
		}
		prev = x->step;
	}
	/* a session's records are contiguous */
	for (size_t b = 0, e; b < n; b = e) {
		long second = 0;
		for (e = b; e < n && r[e].session == r[b].session; e++)
			second += r[e].writer == 1;
		for (size_t i = b; second < 2 && i < e; i++)
			if (r[i].writer == 1)
				r[i].writer = -1;
	}
	return sess;
}

struct jl_row {
	double at, eval_s, tokens;
};

static int parse_jsonl(const char *path, const char *text, size_t len,
		       struct sd_ingest_log *out, char *err, size_t errlen,
		       enum jl_kind kind)
{
	const char *fmt = kind == JL_SWIFT ? "hf" : "llamafactory";
	snprintf(out->variant, sizeof(out->variant), "%s",
		 kind == JL_SWIFT ? "logging.jsonl" : "trainer_log.jsonl");
	struct jl_rec *recs = NULL;
	struct jl_row *rows = NULL;
	size_t nrec = 0, caprec = 0, nrows = 0;
	long lineno = 0;
	int rc = SD_OK, speed_timed = 0;
	double eval_pending = 0;
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
						   "%s is one", out->variant);
			else
				sd_ingest_bad_line(out, lineno, line, n,
						   "not JSON: %s at column %d",
						   je.text, je.column);
			json_decref(o);
			continue;
		}
		json_t *lv = json_object_get(o, "loss");
		json_t *cs = json_object_get(o, kind == JL_SWIFT
							? "global_step/max_steps"
							: "current_steps");
		double v;
		if (kind == JL_SWIFT && (!lv || json_is_null(lv))) {
			/* not a step: an evaluation (its time is taken out
			 * of the step after it), the train_runtime line, the
			 * run's summary (the model's size) or another
			 * object */
			json_t *mp = json_object_get(o, "model_parameter_info");
			const char *mps = json_string_value(mp);
			const char *at = mps ? strstr(mps, ": ") : NULL;
			char *end = NULL;
			double mparams = at ? strtod(at + 2, &end) : NAN;
			if (json_object_get(o, "eval_loss")) {
				if (sd_pyjson_number(json_object_get(
							     o, "eval_runtime"),
						     &v) &&
				    isfinite(v) && v > 0)
					eval_pending += v;
				out->lines_other++;
			} else if (json_object_get(o, "train_runtime")) {
				out->lines_facts++;
			} else if (end && !strncmp(end, "M Params", 8) &&
				   isfinite(mparams) && mparams > 0) {
				/* get_model_parameter_info: "Name: {n:.4f}M
				 * Params (...M Trainable ...)" */
				sd_ingest_read_fact(&out->facts.params,
						    mparams * 1e6);
				out->lines_facts++;
			} else {
				out->lines_other++;
			}
			json_decref(o);
			continue;
		}
		if (!cs || !lv || json_is_null(lv)) {
			/* LLaMA-Factory's "loss": null: on_log's record of
			 * a step with no training loss (the end of training,
			 * an eval); eval_loss / predict_loss lines, or
			 * another writer's object: not a training step.
			 * ms-swift: a loss without its step */
			if (kind == JL_SWIFT)
				sd_ingest_bad_line(out, lineno, line, n,
						   "a \"loss\" with no "
						   "\"global_step/max_steps\": "
						   "its step is not known");
			else
				out->lines_other++;
			json_decref(o);
			continue;
		}
		struct jl_rec x = { .line = lineno, .at = -1, .tokens = -1 };
		if (kind == JL_SWIFT) {
			const char *gs = json_string_value(cs);
			if (!gs || !parse_global_step(gs, &x.step)) {
				sd_ingest_bad_line(out, lineno, line, n,
						   "\"global_step/max_steps\" is "
						   "not \"N/M\" in whole "
						   "numbers");
				json_decref(o);
				continue;
			}
		} else if (!json_is_integer(cs) || json_integer_value(cs) < 0) {
			sd_ingest_bad_line(out, lineno, line, n,
					   "\"current_steps\" is not a whole "
					   "number >= 0");
			json_decref(o);
			continue;
		} else {
			x.step = (long)json_integer_value(cs);
		}
		if (!sd_pyjson_number(lv, &x.loss)) {
			sd_ingest_bad_line(out, lineno, line, n,
					   "\"loss\" is not a number");
			json_decref(o);
			continue;
		}
		json_t *et = json_object_get(o, "elapsed_time");
		if (json_is_string(et))
			x.at = kind == JL_SWIFT
				       ? parse_swift_time(json_string_value(et))
				       : parse_timedelta(json_string_value(et));
		if (kind == JL_SWIFT &&
		    sd_pyjson_number(json_object_get(o, "train_speed(iter/s)"),
				     &v) &&
		    isfinite(v) && v > 0) {
			/* train_speed = round(global_step / seconds since
			 * the session began, 6) (swift/trainers/mixin.py,
			 * _maybe_log_save_evaluate): step / speed is that
			 * time again, finer than elapsed_time's whole
			 * seconds while its rounding, step x 5e-7 / speed^2,
			 * stays under half a second */
			double t = (double)x.step / v;
			if ((double)x.step * 5e-7 / (v * v) < 0.5) {
				x.at = t;
				speed_timed++;
			}
		}
		json_t *tt = json_object_get(o, kind == JL_SWIFT
							? "num_input_tokens_seen"
							: "total_tokens");
		if (tt && sd_pyjson_number(tt, &v) && isfinite(v) && v >= 0)
			x.tokens = v;
		x.eval_s = eval_pending;
		eval_pending = 0;
		json_decref(o);
		if (nrec == caprec) {
			size_t cap = caprec ? 2 * caprec : 64;
			struct jl_rec *nr = realloc(recs, cap * sizeof(*nr));
			if (!nr) {
				rc = SD_ERR_NOMEM;
				snprintf(err, errlen, "%s: out of memory", path);
				goto done;
			}
			recs = nr;
			caprec = cap;
		}
		recs[nrec++] = x;
	}

	int sessions = assign_writers(recs, nrec);
	int want = out->want_run;
	int chosen = want > 0 ? want : sessions;
	rows = malloc((nrec ? nrec : 1) * sizeof(*rows));
	if (!rows) {
		rc = SD_ERR_NOMEM;
		snprintf(err, errlen, "%s: out of memory", path);
		goto done;
	}
	/* sd_ingest_add_step sees the chosen session alone, as the whole
	 * log: the sessions are this reader's runs */
	out->want_run = 0;
	long copies = 0, differ = 0;
	double dmax = 0, eval_carry = 0;
	for (size_t i = 0; i < nrec; i++) {
		const struct jl_rec *x = &recs[i];
		if (x->session != chosen) {
			out->lines_other_runs++;
			continue;
		}
		eval_carry += x->eval_s;
		if (x->writer == 1) {
			/* the second process's row: not read; the same
			 * loss as the first's at its step is a copy */
			const struct jl_rec *same =
				first_writer_row(recs, nrec, i);
			out->lines_other++;
			if (same && memcmp(&same->loss, &x->loss,
					   sizeof(x->loss)) == 0) {
				copies++;
			} else {
				differ++;
				if (same && fabs(same->loss - x->loss) > dmax)
					dmax = fabs(same->loss - x->loss);
			}
			continue;
		}
		struct sd_train_step st = { 0 };
		st.step = x->step;
		st.has = SD_STEP_LOSS;
		st.loss = x->loss;
		int runs_before = out->runs;
		rc = sd_ingest_add_step(out, x->line, &st, NAN, NAN);
		if (rc != SD_OK) {
			snprintf(err, errlen, "%s: out of memory", path);
			out->want_run = want;
			goto done;
		}
		/* rows[] stays beside out->steps: a run begun within the
		 * session (it went back to its first step) has its rows
		 * alone */
		if (out->runs != runs_before && out->run_kept == out->runs)
			nrows = 0;
		if (out->n == nrows)
			continue;
		rows[nrows++] = (struct jl_row){ x->at, eval_carry, x->tokens };
		eval_carry = 0;
	}
	out->want_run = want;
	/* the lines dropped above were kept after the ones that did not
	 * parse: in the file's order again */
	for (size_t i = 1; i < out->nbad; i++)
		for (size_t j = i; j > 0 && out->bad[j - 1].line >
						    out->bad[j].line; j--) {
			struct sd_ingest_bad t = out->bad[j];
			out->bad[j] = out->bad[j - 1];
			out->bad[j - 1] = t;
		}
	if (out->runs > 0) {
		out->run_kept += chosen - 1;
		out->runs += sessions - 1;
	} else {
		out->runs = sessions;
	}
	if (copies + differ)
		snprintf(out->warning, sizeof(out->warning),
			 "two writers' rows interleaved (two processes "
			 "appended to one file): the first one's read; the "
			 "other's %ld not used, %ld copies of the first's and "
			 "%ld with another loss (by up to %.4g)",
			 copies + differ, copies, differ, dmax);

	/* step time: elapsed time differences over the steps between rows,
	 * evaluations between them taken out; a session's first row from
	 * where the session began (a resumed one a logging interval before
	 * its first row: its checkpoint) */
	int timed = 0, tokened = 0;
	long every = out->n > 1 ? out->steps[1].step - out->steps[0].step : 0;
	long began = out->n && every > 0 && out->steps[0].step >= every
			     ? out->steps[0].step - every
			     : 0;
	for (size_t i = 0; i < out->n && i < nrows; i++) {
		struct sd_train_step *s = &out->steps[i];
		double prev_e = i ? rows[i - 1].at : 0;
		double prev_t = i ? rows[i - 1].tokens : 0;
		long prev_s = i ? out->steps[i - 1].step : began;
		long span = s->step - prev_s;
		if (span <= 0)
			continue;
		double dt = rows[i].at - prev_e - rows[i].eval_s;
		if (rows[i].at >= 0 && prev_e >= 0 && dt > 0) {
			s->step_s = dt / (double)span;
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
	const char *tok = tokened ? kind == JL_SWIFT
					    ? "from num_input_tokens_seen "
					      "differences"
					    : "from total_tokens differences"
				  : "not logged: " SD_INGEST_TOKENS_HINT;
	if (kind == JL_SWIFT)
		snprintf(out->note, sizeof(out->note),
			 "step time from %s over the steps between rows, "
			 "evaluations (eval_runtime) taken out; tokens %s",
			 speed_timed ? "train_speed(iter/s) (global_step / "
				       "seconds since the start)"
				     : "elapsed_time (whole seconds)",
			 tok);
	else
		snprintf(out->note, sizeof(out->note),
			 "step time from elapsed_time (whole seconds) over "
			 "the steps between rows%s; tokens %s",
			 timed < (int)out->n
				 ? ", none where under a second passed"
				 : "",
			 tok);
	if (chosen > sessions && sessions > 0) {
		/* sd_ingest_read_run says how many there are */
		snprintf(err, errlen, "%s: --run %d: %d runs", path, want,
			 sessions);
		rc = SD_ERR_INVALID;
	} else if (out->n == 0) {
		if (kind == JL_LLAMAFACTORY && sd_ingest_is_swift_jsonl(text, len))
			snprintf(err, errlen, "%s: JSON lines with "
				 "\"global_step/max_steps\": ms-swift's "
				 "logging.jsonl, not LLaMA-Factory's; give "
				 "--format hf", path);
		else if (memmem(text, len, "\"log_history\"", 13) &&
			 !sd_ingest_is_swift_jsonl(text, len))
			snprintf(err, errlen, "%s: a JSON document with "
				 "\"log_history\", not JSON lines: a "
				 "trainer_state.json; give --format hf", path);
		else if (out->nbad)
			snprintf(err, errlen, "%s: no step lines of %s; %ld "
				 "lines read, %ld unparsed: first at line %ld: "
				 "%s", path, fmt, out->lines,
				 out->lines_unparsed, out->bad[0].line,
				 out->bad[0].why);
		else
			snprintf(err, errlen, "%s: no step lines of %s; %ld "
				 "lines read, none with \"%s\" and \"loss\"",
				 path, fmt, out->lines,
				 kind == JL_SWIFT ? "global_step/max_steps"
						  : "current_steps");
		rc = SD_ERR_INVALID;
	}
done:
	free(recs);
	free(rows);
	return rc;
}

int sd_ingest_parse_llamafactory(const char *path, const char *text,
				 size_t len, struct sd_ingest_log *out,
				 char *err, size_t errlen)
{
	return parse_jsonl(path, text, len, out, err, errlen,
			   JL_LLAMAFACTORY);
}

int sd_ingest_parse_swift_jsonl(const char *path, const char *text,
				size_t len, struct sd_ingest_log *out,
				char *err, size_t errlen)
{
	return parse_jsonl(path, text, len, out, err, errlen, JL_SWIFT);
}

int sd_ingest_is_swift_jsonl(const char *text, size_t len)
{
	/* the first line a whole object ('{"' ... '}' on one line, unlike
	 * trainer_state.json's indented document) with the key */
	size_t i = 0;
	while (i < len && (text[i] == ' ' || text[i] == '\t' ||
			   text[i] == '\n' || text[i] == '\r'))
		i++;
	if (i + 1 >= len || text[i] != '{' || text[i + 1] != '"')
		return 0;
	const char *nl = memchr(text + i, '\n', len - i);
	size_t n = nl ? (size_t)(nl - (text + i)) : len - i;
	return memmem(text + i, n, "\"global_step/max_steps\"", 23) != NULL;
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
