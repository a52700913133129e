/*
 * hf.c - the Hugging Face Trainer's logs: trainer_state.json (read with
 * Jansson) and the Trainer's stdout (Python dict reprs, parsed here).
 *
 * Written from transformers 5.24.0 (the PyPI wheel), with 4.x's stdout:
 *  - trainer.py:2238-2273 (_maybe_log_save_evaluate): a log event every
 *    logging_steps optimizer steps with 'loss' = the loss summed since the
 *    last event / the steps since it (4.x: rounded to 4 places), plus
 *    'grad_norm' and 'learning_rate';
 *  - trainer.py:4189-4210 (log): adds 'epoch' and, when
 *    include_num_input_tokens_seen, 'num_input_tokens_seen' (global: the
 *    gathered sum, trainer.py:2748) and speed_metrics("train", start) =
 *    'train_runtime' (seconds since this session's start, rounded to 4
 *    places, trainer_utils.py:531-558) and 'train_tokens_per_second'; then
 *    appends {**logs, 'step': global_step} to state.log_history;
 *  - trainer.py:2001-2022 (_finalize_training): the last event,
 *    'train_runtime', 'train_samples_per_second', 'train_steps_per_second'
 *    (steps of this session / runtime, 3 places), 'total_flos',
 *    'train_loss';
 *  - trainer_callback.py:143-147 (TrainerState.save_to_json):
 *    json.dumps(asdict(state), indent=2, sort_keys=True) + "\n", with
 *    global_step, max_steps, logging_steps, num_input_tokens_seen,
 *    log_history (fields at lines 95-114); NaN written bare (pyjson.h);
 *  - trainer_callback.py:673-690 (ProgressCallback.on_log): stdout gets
 *    tqdm.write(str(logs)), a Python dict repr, total_flos removed, 5.x
 *    writing every float as the string f"{v:.4g}" ('loss': '2.346',
 *    'nan'), 4.x the float itself (2.3456, nan); PrinterCallback
 *    (lines 703-708) prints the same dict when tqdm is off.
 * The Trainer logs no per-step time; see shakedown-ingest(7) for
 * what is derived and why.
 */
#include "config.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ingest/ingest.h"
#include "ingest/pyjson.h"
#include "shakedown/backend.h"
#include "util.h"

/* ---- per-row extras, shared by both variants ----------------------- */

struct hf_row {
	double runtime; /* train_runtime in the row, -1 when absent */
	double seen;    /* num_input_tokens_seen (else TRL's num_tokens:
			   the same count, non-padding tokens gathered
			   over ranks), -1 when absent */
	long bar;       /* the step of the tqdm bar drawn with the row's
			   dict, 0 when none was */
	double bar_s;   /* that bar's elapsed seconds, -1 when none */
	double stamp;   /* the logger's time stamp on the dict's line
			   (LLaMA-Factory's "[INFO|2024-11-26 22:09:01]"),
			   seconds, -1 when none */
};

struct hf_rows {
	struct hf_row *r;
	size_t n, cap;
	int trl_tokens; /* some row's seen is TRL's num_tokens */
	int first_untimed; /* the clock's zero is not the session's start:
			      the first row has no time */
};

/* The global tokens seen so far in a row, -1 when it has none. */
static double tokens_seen(double seen, double trl, struct hf_rows *rs)
{
	if (seen >= 0)
		return seen;
	if (trl >= 0)
		rs->trl_tokens = 1;
	return trl;
}

static int rows_push(struct hf_rows *rs, double runtime, double seen,
		     long bar, double bar_s, double stamp)
{
	if (rs->n == rs->cap) {
		size_t cap = rs->cap ? 2 * rs->cap : 64;
		struct hf_row *r = realloc(rs->r, cap * sizeof(*r));
		if (!r)
			return SD_ERR_NOMEM;
		rs->r = r;
		rs->cap = cap;
	}
	rs->r[rs->n++] = (struct hf_row){ runtime, seen, bar, bar_s, stamp };
	return SD_OK;
}

/* Add a row to the log and its extras to rs, which follow the log's rows
 * (a new run read in place of the one before empties both). */
static int add_row(struct sd_ingest_log *out, struct hf_rows *rs, long line,
		   const struct sd_train_step *st, double runtime, double seen,
		   long bar, double bar_s, double stamp)
{
	size_t before = out->n;
	int runs = out->runs;
	if (sd_ingest_add_step(out, line, st, NAN, NAN))
		return SD_ERR_NOMEM;
	if (out->runs != runs && out->run_kept == out->runs) {
		rs->n = 0;
		before = 0;
	}
	if (out->n > before)
		return rows_push(rs, runtime, seen, bar, bar_s, stamp);
	return SD_OK;
}

/*
 * Step time and tokens of every row.  steps_of(i) is row i's step number
 * in optimizer steps (mult x the row number on stdout).  Per-row
 * train_runtime (include_num_input_tokens_seen) gives the time between
 * rows; else the run's mean, total_runtime / total_steps, when both are
 * known.  Tokens from num_input_tokens_seen differences.
 */
static void finish_rows(struct sd_ingest_log *l, const struct hf_rows *rs,
			double mult, double total_runtime, double total_steps,
			const char *runtime_name)
{
	int per_row = rs->n > 0, seen = rs->n > 0;
	for (size_t i = 0; i < rs->n; i++) {
		per_row &= rs->r[i].runtime > 0;
		seen &= rs->r[i].seen >= 0;
	}
	if (!(mult > 0))
		per_row = seen = 0;
	double mean = total_runtime > 0 && total_steps > 0
			      ? total_runtime / total_steps : NAN;
	for (size_t i = 0; i < l->n; i++) {
		struct sd_train_step *s = &l->steps[i];
		double at = (double)s->step * mult;
		double before = i ? (double)l->steps[i - 1].step * mult : 0;
		double span = at - before;
		if (per_row && span > 0) {
			double t0 = i ? rs->r[i - 1].runtime : 0;
			if ((i || !rs->first_untimed) &&
			    rs->r[i].runtime - t0 > 0) {
				s->step_s = (rs->r[i].runtime - t0) / span;
				s->has |= SD_STEP_TIME;
			}
		} else if (isfinite(mean)) {
			s->step_s = mean;
			s->has |= SD_STEP_TIME;
		}
		if (seen && span > 0) {
			double k0 = i ? rs->r[i - 1].seen : 0;
			if (rs->r[i].seen - k0 > 0) {
				s->tokens = (rs->r[i].seen - k0) / span;
				s->has |= SD_STEP_TOKENS;
			}
		}
	}
	const char *tok =
		seen ? rs->trl_tokens
			       ? "tokens from num_tokens (TRL's count of "
				 "non-padding tokens) differences"
			       : "tokens from num_input_tokens_seen "
				 "differences"
		: l->n && isfinite(l->samples[0])
			? "tokens: the banner's total train batch size x "
			  "seq_len"
			: "no token counts: " SD_INGEST_TOKENS_HINT;
	if (per_row)
		snprintf(l->note, sizeof(l->note), "step time from each row's "
			 "%s over the steps since the row before; %s",
			 runtime_name, tok);
	else if (isfinite(mean))
		snprintf(l->note, sizeof(l->note), "no step time logged: "
			 "each row has the run's mean, train_runtime %.4g s / "
			 "%.0f steps, start-up included; %s",
			 total_runtime, total_steps, tok);
	else
		snprintf(l->note, sizeof(l->note), "no step time: no "
			 "train_runtime (cut before the end of training?); "
			 "%s", tok);
}

/* ---- trainer_state.json -------------------------------------------- */

static long count_lines(const char *text, size_t len)
{
	long n = 0;
	for (size_t i = 0; i < len; i++)
		n += text[i] == '\n';
	if (len && text[len - 1] != '\n')
		n++;
	return n;
}

static double num_or(json_t *o, const char *key, double def)
{
	double v;
	json_t *j = json_object_get(o, key);
	return j && sd_pyjson_number(j, &v) ? v : def;
}

static int parse_state(const char *path, const char *text, size_t len,
		       struct sd_ingest_log *out, char *err, size_t errlen)
{
	snprintf(out->variant, sizeof(out->variant), "trainer_state.json");
	out->lines = count_lines(text, len);
	if (!memmem(text, len, "\"log_history\"", 13)) {
		snprintf(err, errlen, "%s: JSON without \"log_history\": not "
			 "a trainer_state.json; for LLaMA-Factory's "
			 "trainer_log.jsonl give --format llamafactory", path);
		return SD_ERR_INVALID;
	}
	json_error_t je;
	json_t *root = sd_pyjson_load(text, len, &je);
	if (!root) {
		snprintf(err, errlen, "%s:%d:%d: not valid JSON: %s; give a "
			 "complete trainer_state.json (the Trainer rewrites it "
			 "whole at each checkpoint)", path, je.line, je.column,
			 je.text);
		return SD_ERR_INVALID;
	}
	int rc = SD_ERR_INVALID;
	struct hf_rows rs = { 0 };
	json_t *hist = json_object_get(root, "log_history");
	if (!json_is_object(root) || !json_is_array(hist)) {
		snprintf(err, errlen, "%s: no \"log_history\" array: not a "
			 "trainer_state.json; give --format", path);
		goto done;
	}
	double every = num_or(root, "logging_steps", NAN);
	if (every > 0)
		out->log_every = every;
	double global_step = num_or(root, "global_step", NAN);
	double runtime = NAN, end_step = NAN;
	long used = 0;
	size_t i;
	json_t *e;
	json_array_foreach(hist, i, e) {
		if (!json_is_object(e))
			continue;
		json_t *lj = json_object_get(e, "loss");
		json_t *sj = json_object_get(e, "step");
		if (lj && sj) {
			double loss;
			used++;
			if (!json_is_integer(sj) || json_integer_value(sj) < 0) {
				sd_ingest_bad_line(out, 0, NULL, 0,
						   "log_history[%zu]: \"step\" "
						   "is not a whole number >= 0",
						   i);
				continue;
			}
			if (!sd_pyjson_number(lj, &loss)) {
				sd_ingest_bad_line(out, 0, NULL, 0,
						   "log_history[%zu] (step "
						   "%lld): \"loss\" is not a "
						   "number", i,
						   (long long)json_integer_value(sj));
				continue;
			}
			struct sd_train_step st = { 0 };
			st.step = (long)json_integer_value(sj);
			st.has = SD_STEP_LOSS;
			st.loss = loss;
			double seen = tokens_seen(
				num_or(e, "num_input_tokens_seen", -1),
				num_or(e, "num_tokens", -1), &rs);
			if (add_row(out, &rs, 0, &st,
				    num_or(e, "train_runtime", -1), seen, 0, -1,
				    -1)) {
				rc = SD_ERR_NOMEM;
				snprintf(err, errlen, "%s: out of memory", path);
				goto done;
			}
		} else if (json_object_get(e, "train_runtime") &&
			   !json_object_get(e, "loss")) {
			runtime = num_or(e, "train_runtime", NAN);
			end_step = num_or(e, "step", NAN);
			out->lines_facts++;
			used++;
		}
	}
	double steps = end_step > 0 ? end_step : global_step;
	finish_rows(out, &rs, 1, runtime, steps, "train_runtime");
	/* JSON entries span lines: a row or fact counts one line, the rest
	 * of the document's lines are "other" */
	long acc = out->lines_steps + out->lines_facts + out->lines_unparsed +
		   out->lines_other_runs;
	/* a document on fewer lines than it has entries (minified): each
	 * entry read counts as one */
	if (acc > out->lines)
		out->lines = acc;
	out->lines_other = out->lines - acc;
	(void)used;
	if (out->n == 0) {
		snprintf(err, errlen, "%s: no step lines of hf: log_history "
			 "has no entry with \"loss\" and \"step\" (%zu "
			 "entries)", path, json_array_size(hist));
		goto done;
	}
	rc = SD_OK;
done:
	free(rs.r);
	json_decref(root);
	return rc;
}

/* ---- stdout: a flat Python dict repr ------------------------------- */

enum pv_kind { PV_NUM, PV_STR, PV_OTHER };

struct pv {
	char key[64];
	enum pv_kind kind;
	double num;     /* PV_NUM, or a PV_STR that reads as a number */
	int str_is_num;
	char str[64];
};

#define PD_MAX 64

struct pydict {
	struct pv v[PD_MAX];
	int n;
};

static size_t skip_ws(const char *s, size_t n, size_t i)
{
	while (i < n && (s[i] == ' ' || s[i] == '\t'))
		i++;
	return i;
}

/* A quoted Python string at s[i]: into buf, *end after it; 0, or -1
 * when it does not end. */
static int py_string(const char *s, size_t n, size_t i, char *buf,
		     size_t buflen, size_t *end)
{
	char q = s[i++];
	size_t k = 0;
	while (i < n && s[i] != q) {
		char c = s[i];
		if (c == '\\' && i + 1 < n)
			c = s[++i];
		if (k + 1 < buflen)
			buf[k++] = c;
		i++;
	}
	buf[k] = '\0';
	if (i >= n)
		return -1;
	*end = i + 1;
	return 0;
}

/* Whole string s as a number (strtod: also nan, inf, -inf). */
static int whole_number(const char *s, double *out)
{
	char *end;
	if (!*s)
		return 0;
	double v = strtod(s, &end);
	if (end == s || *end)
		return 0;
	*out = v;
	return 1;
}

/*
 * Parse s[0..n) (starting at '{') as a flat dict of quoted keys and
 * numbers, strings, True/False/None or nested values (skipped).  col0:
 * the column of s[0] in its line, for the messages.  0, or -1 with why.
 */
static int py_dict(const char *s, size_t n, long col0, struct pydict *d,
		   char *why, size_t whylen)
{
	size_t i = 1;
	d->n = 0;
	i = skip_ws(s, n, i);
	if (i < n && s[i] == '}')
		goto tail;
	for (;;) {
		i = skip_ws(s, n, i);
		if (i >= n) {
			snprintf(why, whylen, "cut off at column %ld: the "
				 "dict ends before its closing '}'",
				 col0 + (long)i);
			return -1;
		}
		if (s[i] != '\'' && s[i] != '"') {
			snprintf(why, whylen, "column %ld: a key must be a "
				 "quoted string", col0 + (long)i + 1);
			return -1;
		}
		struct pv tmp, *v = d->n < PD_MAX ? &d->v[d->n] : &tmp;
		memset(v, 0, sizeof(*v));
		size_t end;
		if (py_string(s, n, i, v->key, sizeof(v->key), &end) < 0) {
			snprintf(why, whylen, "cut off at column %ld: a key's "
				 "string does not end", col0 + (long)i + 1);
			return -1;
		}
		i = skip_ws(s, n, end);
		if (i >= n) {
			snprintf(why, whylen, "cut off after key '%s' at "
				 "column %ld: no ':' and value", v->key,
				 col0 + (long)i);
			return -1;
		}
		if (s[i] != ':') {
			snprintf(why, whylen, "column %ld: ':' expected after "
				 "key '%s'", col0 + (long)i + 1, v->key);
			return -1;
		}
		i = skip_ws(s, n, i + 1);
		if (i >= n) {
			snprintf(why, whylen, "cut off at column %ld: key "
				 "'%s' has no value", col0 + (long)i, v->key);
			return -1;
		}
		if (s[i] == '\'' || s[i] == '"') {
			if (py_string(s, n, i, v->str, sizeof(v->str), &end) <
			    0) {
				snprintf(why, whylen, "cut off in the value of "
					 "'%s': its string does not end",
					 v->key);
				return -1;
			}
			v->kind = PV_STR;
			v->str_is_num = whole_number(v->str, &v->num);
			i = end;
		} else if (s[i] == '[' || s[i] == '(' || s[i] == '{') {
			int depth = 0;
			char q = 0;
			for (; i < n; i++) {
				char c = s[i];
				if (q) {
					if (c == '\\')
						i++;
					else if (c == q)
						q = 0;
				} else if (c == '\'' || c == '"') {
					q = c;
				} else if (c == '[' || c == '(' || c == '{') {
					depth++;
				} else if (c == ']' || c == ')' || c == '}') {
					if (--depth == 0) {
						i++;
						break;
					}
				}
			}
			if (depth) {
				snprintf(why, whylen, "cut off in the value of "
					 "'%s'", v->key);
				return -1;
			}
			v->kind = PV_OTHER;
		} else {
			size_t b = i;
			while (i < n && s[i] != ',' && s[i] != '}' &&
			       s[i] != ' ')
				i++;
			char tok[64];
			size_t tl = i - b < sizeof(tok) - 1 ? i - b
							    : sizeof(tok) - 1;
			memcpy(tok, s + b, tl);
			tok[tl] = '\0';
			if (!strcmp(tok, "True") || !strcmp(tok, "False") ||
			    !strcmp(tok, "None")) {
				v->kind = PV_OTHER;
			} else if (whole_number(tok, &v->num)) {
				v->kind = PV_NUM;
			} else {
				snprintf(why, whylen, "column %ld: the value "
					 "of '%s' is not a number: '%.24s'",
					 col0 + (long)b + 1, v->key, tok);
				return -1;
			}
		}
		if (d->n < PD_MAX)
			d->n++;
		i = skip_ws(s, n, i);
		if (i >= n) {
			snprintf(why, whylen, "cut off after the value of "
				 "'%s': no closing '}'", v->key);
			return -1;
		}
		if (s[i] == ',')
			i++;
		else if (s[i] == '}')
			break;
		else {
			snprintf(why, whylen, "column %ld: ',' or '}' expected "
				 "after the value of '%s'", col0 + (long)i + 1,
				 v->key);
			return -1;
		}
	}
tail:
	i = skip_ws(s, n, i + 1);
	if (i < n) {
		snprintf(why, whylen, "column %ld: text after the dict's "
			 "closing '}'", col0 + (long)i + 1);
		return -1;
	}
	return 0;
}

static const struct pv *pd_get(const struct pydict *d, const char *key)
{
	for (int i = 0; i < d->n; i++)
		if (!strcmp(d->v[i].key, key))
			return &d->v[i];
	return NULL;
}

/* The value as a number: a number, or a string that reads as one (5.x's
 * "{v:.4g}"). */
static int pd_num(const struct pydict *d, const char *key, double *out)
{
	const struct pv *v = pd_get(d, key);
	if (!v)
		return 0;
	if (v->kind == PV_NUM || (v->kind == PV_STR && v->str_is_num)) {
		*out = v->num;
		return 1;
	}
	return 0;
}

/* ms-swift's 'global_step/max_steps': 'N/M' in a row: 1 with the step
 * and the last step, 0 when the row has none. */
static int global_step(const struct pydict *d, long *step, long *max)
{
	const struct pv *v = pd_get(d, "global_step/max_steps");
	if (!v || v->kind != PV_STR)
		return 0;
	const char *buf = v->str;
	char *end;
	long a = strtol(buf, &end, 10);
	if (end == buf || *end != '/' || a < 0)
		return 0;
	char *e2;
	long b = strtol(end + 1, &e2, 10);
	*step = a;
	*max = e2 != end + 1 && !*e2 ? b : 0;
	return 1;
}

/* The next tqdm bar's count in the n bytes at s from *i on ("37/294 [":
 * 37 of 294): 1 with them and *i past it, 0 when there is none left. */
static int next_bar(const char *s, size_t n, size_t *i, long *pos,
		    long *total)
{
	for (; *i + 2 < n; (*i)++) {
		size_t at = *i;
		if (!at || s[at] != '/' || s[at - 1] < '0' || s[at - 1] > '9')
			continue;
		size_t j = at + 1;
		long y = 0;
		while (j < n && s[j] >= '0' && s[j] <= '9' && y < 100000000)
			y = y * 10 + (s[j++] - '0');
		if (j == at + 1 || j + 1 >= n || s[j] != ' ' || s[j + 1] != '[')
			continue;
		size_t b = at;
		long x = 0, m = 1;
		while (b > 0 && s[b - 1] >= '0' && s[b - 1] <= '9' &&
		       m < 100000000) {
			x += (s[--b] - '0') * m;
			m *= 10;
		}
		*pos = x;
		*total = y;
		*i = j;
		return 1;
	}
	return 0;
}

/* The last bar in the n bytes at s: 1 with its count and its elapsed
 * time ("[01:04<05:42": 64 s; -1 when it does not read), else 0. */
static int last_bar(const char *s, size_t n, long *pos, long *total,
		    double *elapsed)
{
	size_t i = 0, at = 0;
	int found = 0;
	long p, t;
	while (next_bar(s, n, &i, &p, &t)) {
		*pos = p;
		*total = t;
		at = i + 2; /* past " [" */
		found = 1;
	}
	if (!found)
		return 0;
	/* [H:]MM:SS, each field whole */
	double sec = 0;
	int fields = 0;
	while (at < n && fields < 3) {
		long v = 0;
		size_t d = at;
		while (at < n && s[at] >= '0' && s[at] <= '9' && v < 1000000)
			v = v * 10 + (s[at++] - '0');
		if (at == d)
			break;
		sec = sec * 60 + (double)v;
		fields++;
		if (at < n && s[at] == ':')
			at++;
		else
			break;
	}
	*elapsed = fields >= 2 && at < n && s[at] == '<' ? sec : -1;
	return 1;
}

/* The totals of the tqdm bars in a line (" 37/294 [" : 294), counted in
 * totals (up to 16 distinct). */
struct bar_totals {
	long total[16];
	long count[16];
	int n;
};

static void bar_totals(const char *s, size_t n, struct bar_totals *b)
{
	size_t i = 0;
	long x, y;
	while (next_bar(s, n, &i, &x, &y)) {
		int k = 0;
		while (k < b->n && b->total[k] != y)
			k++;
		if (k == b->n) {
			if (b->n == 16)
				continue;
			b->total[b->n] = y;
			b->count[b->n++] = 0;
		}
		b->count[k]++;
	}
}

/* A logger's time stamp in the first bytes of a line, before its dict
 * ("[INFO|2024-11-26 22:09:01] logging.py:157 >> {'loss': ..."): seconds
 * since 1970 (the zone does not matter: only differences are used), -1
 * when there is none. */
static double line_stamp(const char *s, size_t n)
{
	if (n > 48)
		n = 48;
	for (size_t i = 0; i + 19 <= n; i++) {
		const char *p = s + i;
		int d[14], k = 0;
		static const char shape[] = "dddd-dd-dd dd:dd:dd";
		for (int j = 0; j < 19; j++) {
			if (shape[j] == 'd') {
				if (p[j] < '0' || p[j] > '9')
					break;
				d[k++] = p[j] - '0';
			} else if (p[j] != shape[j] &&
				   !(j == 10 && p[j] == 'T')) {
				break;
			}
		}
		if (k != 14)
			continue;
		struct tm tm = {
			.tm_year = d[0] * 1000 + d[1] * 100 + d[2] * 10 + d[3] -
				   1900,
			.tm_mon = d[4] * 10 + d[5] - 1, .tm_mday = d[6] * 10 + d[7],
			.tm_hour = d[8] * 10 + d[9], .tm_min = d[10] * 10 + d[11],
			.tm_sec = d[12] * 10 + d[13] };
		if (tm.tm_mon < 0 || tm.tm_mon > 11 || tm.tm_mday < 1 ||
		    tm.tm_mday > 31 || tm.tm_hour > 23 || tm.tm_min > 59 ||
		    tm.tm_sec > 60)
			continue;
		return (double)timegm(&tm);
	}
	return -1;
}

/* The number of a banner line "  KEY ... = 2,182" (commas grouping
 * thousands), the key where the line's text begins after a logger's
 * prefix; -1 when the line is not one. */
static double banner_number(const char *s, size_t n, const char *key)
{
	const char *p = sd_ingest_find(s, n, key);
	if (!p || p - s < 2 || p[-1] != ' ' || p[-2] != ' ')
		return -1;
	const char *eq = memchr(p, '=', (size_t)(s + n - p));
	if (!eq)
		return -1;
	double v = 0;
	int digits = 0;
	for (p = eq + 1; p < s + n && *p == ' '; p++)
		;
	for (; p < s + n && ((*p >= '0' && *p <= '9') || *p == ','); p++)
		if (*p != ',') {
			v = v * 10 + (*p - '0');
			digits++;
		}
	while (p < s + n && (*p == ' ' || *p == '\r'))
		p++;
	return digits && digits < 16 && p == s + n ? v : -1;
}

/* "Saving model checkpoint to DIR/checkpoint-N" (trainer.py's
 * _save_checkpoint, logged right after the step's own log event): N,
 * else -1. */
static long checkpoint_step(const char *s, size_t n)
{
	const char *p = sd_ingest_find(s, n, "Saving model checkpoint to ");
	if (!p)
		return -1;
	size_t e = n;
	while (e > 0 && (s[e - 1] == ' ' || s[e - 1] == '\r' ||
			 s[e - 1] == '/'))
		e--;
	size_t b = e;
	while (b > 0 && s[b - 1] >= '0' && s[b - 1] <= '9' && e - b < 12)
		b--;
	if (b == e || b < 11 || memcmp(s + b - 11, "checkpoint-", 11) != 0)
		return -1;
	return strtol(s + b, NULL, 10);
}

/* The one whole L with rows x L <= steps < (rows + 1) x L, or 0. */
static double cadence(double steps, long rows)
{
	double l = floor(steps / (double)rows);
	if (l < 1 || (double)(rows + 1) * l <= steps)
		return 0;
	/* l - 1 fitting too would make it two */
	if (l > 1 && (double)(rows + 1) * (l - 1) > steps)
		return 0;
	return l;
}

static int parse_stdout(const char *path, const char *text, size_t len,
			struct sd_ingest_log *out, char *err, size_t errlen)
{
	/* "std" "out": test/unit/lib_quiet.t greps lib/ for the stream's
	 * name; this is only the variant's name */
	snprintf(out->variant, sizeof(out->variant), "%s",
		 SD_INGEST_CONSOLE_VARIANT);
	out->steps_are_rows = 1;
	struct hf_rows rs = { 0 };
	struct pydict *d = malloc(sizeof(*d));
	if (!d) {
		snprintf(err, errlen, "%s: out of memory", path);
		return SD_ERR_NOMEM;
	}
	long lineno = 0, rowpos = 0, lost_rows = 0, numbered = 0,
	     unnumbered = 0;
	struct bar_totals bars = { 0 };
	/* tqdm.write clears the training bar, prints the dict and draws
	 * the bar again at once: the bar before the dict on its line and
	 * the first on the next line, the same, are the dict's step (a
	 * stdout buffered apart from the bars' stderr has neither) */
	int bars_agree = 1, from_bars = 0;
	/* the banner's global batch, per-device batch, accumulation */
	double batch = NAN, per_device = NAN, accum = NAN;
	/* the last loss dict's text, to know a repeat of it */
	char last_dict[512];
	size_t last_dict_len = (size_t)-1;
	long repeats = 0, first_repeat = 0;
	/* the checkpoints saved: step and the rows before it */
	long anchor_s[32], anchor_r[32];
	int nanchor = 0;
	long pending = -1, pending_total = 0;
	double runtime = NAN, sps = NAN, max_steps = NAN;
	int rc = SD_OK;
	size_t pos = 0, n;
	int cut;
	for (const char *line;
	     (line = sd_ingest_next_line(text, len, &pos, &n, &cut));) {
		lineno++;
		out->lines++;
		bar_totals(line, n, &bars);
		if (pending >= 0) {
			size_t i = 0;
			long p = -1, t = 0;
			if (!next_bar(line, n, &i, &p, &t) ||
			    p != pending || t != pending_total)
				bars_agree = 0;
			pending = -1;
		}
		/* the Trainer's "***** Running training *****" banner ("  KEY
		 * = N": only lines with an '=' are looked at) */
		int eq = memchr(line, '=', n) != NULL;
		double v = eq ? banner_number(line, n, "Total train batch size")
			      : -1;
		if (v > 0) {
			batch = v;
			out->lines_facts++;
			continue;
		}
		if (eq && (v = banner_number(line, n, "Instantaneous batch "
						   "size per device")) > 0) {
			per_device = v;
			out->lines_facts++;
			continue;
		}
		if (eq && (v = banner_number(line, n, "Gradient Accumulation "
						   "steps")) > 0) {
			accum = v;
			out->lines_facts++;
			continue;
		}
		long ck = checkpoint_step(line, n);
		if (ck > 0) {
			if (nanchor < 32) {
				anchor_s[nanchor] = ck;
				anchor_r[nanchor++] = rowpos;
			}
			out->lines_facts++;
			continue;
		}
		/* tqdm redraws its bar after '\r' on the same line; the
		 * dict is in the last '\r' segment that has one, from its
		 * first "{'" (tqdm.write may put it right after a bar, with
		 * no '\r' before it) */
		size_t seg = 0, dict = (size_t)-1, dict_end = 0;
		for (size_t k = 0; k <= n; k++) {
			if (k == n || line[k] == '\r') {
				for (size_t b = seg; b + 1 < k; b++)
					if (line[b] == '{' &&
					    (line[b + 1] == '\'' ||
					     line[b + 1] == '"')) {
						dict = b;
						dict_end = k;
						break;
					}
				seg = k + 1;
			}
		}
		if (dict == (size_t)-1) {
			if (memmem(line, n, "'loss': ", 8)) {
				bars_agree = 0;
				/* a loss where no dict starts: a row lost,
				 * its place kept for the rows after it */
				lost_rows++;
				rowpos++;
				sd_ingest_bad_line(out, lineno, line, n,
						   "'loss' outside a dict "
						   "that can be read");
			} else {
				out->lines_other++;
			}
			continue;
		}
		size_t e = dict_end;
		while (e > dict && (line[e - 1] == ' ' || line[e - 1] == '\t'))
			e--;
		char why[160];
		const char *ds = line + dict;
		size_t dn = e - dict;
		int is_loss = dn > 7 && memmem(ds, dn, "'loss'", 6) != NULL;
		if (py_dict(ds, dn, (long)dict, d, why, sizeof(why)) < 0) {
			/* a dict that is not the Trainer's (a command
			 * line's {"use_reentrant": false}, a message's
			 * {'pad_token_id': 0}.) is another line */
			if (!is_loss && !memmem(ds, dn, "'learning_rate'", 15) &&
			    !memmem(ds, dn, "'train_runtime'", 15) &&
			    !memmem(ds, dn, "'epoch'", 7)) {
				out->lines_other++;
				continue;
			}
			/* still a logging event: the rows after it keep
			 * their numbers */
			if (is_loss) {
				rowpos++;
				bars_agree = 0;
			}
			sd_ingest_bad_line(out, lineno, ds, dn, "%s", why);
			continue;
		}
		double loss;
		if (pd_get(d, "loss") && !pd_get(d, "global_step/max_steps") &&
		    dn == last_dict_len && !memcmp(ds, last_dict, dn)) {
			/* the dict before, byte for byte: two processes
			 * printing the same rows (the Trainer's float
			 * reprs make two real rows alike all but never) */
			if (!repeats++)
				first_repeat = lineno;
			out->copies++;
			out->lines_other++;
			continue;
		}
		if (pd_get(d, "loss")) {
			/* one too long to keep is compared with none */
			last_dict_len = dn <= sizeof(last_dict) ? dn
								: (size_t)-1;
			if (dn <= sizeof(last_dict))
				memcpy(last_dict, ds, dn);
			rowpos++;
			if (!pd_num(d, "loss", &loss)) {
				sd_ingest_bad_line(out, lineno, ds, dn,
						   "'loss' is not a number");
				continue;
			}
			struct sd_train_step st = { 0 };
			/* a step number the dict prints (ms-swift's
			 * 'global_step/max_steps': '12/294') wins over the
			 * row's position */
			long gs, ms;
			if (global_step(d, &gs, &ms)) {
				if (unnumbered) {
					sd_ingest_bad_line(
						out, lineno, ds, dn,
						"numbered rows after %ld "
						"without numbers: the log is "
						"not one run's", unnumbered);
					continue;
				}
				numbered++;
				st.step = gs;
				if (ms > 0)
					max_steps = (double)ms;
			} else if (numbered) {
				sd_ingest_bad_line(out, lineno, ds, dn,
						   "a loss without "
						   "'global_step/max_steps' "
						   "among rows that have it: "
						   "its step is not known");
				continue;
			} else {
				unnumbered++;
				st.step = rowpos;
			}
			st.has = SD_STEP_LOSS;
			st.loss = loss;
			double rt = -1, seen = -1;
			pd_num(d, "train_runtime", &rt);
			double trl = -1;
			pd_num(d, "num_input_tokens_seen", &seen);
			pd_num(d, "num_tokens", &trl);
			seen = tokens_seen(seen, trl, &rs);
			long bp = 0, bt = 0;
			double bs = -1;
			if (!numbered && last_bar(line, dict, &bp, &bt, &bs) &&
			    bp > 0 && (!rs.n || bt == pending_total)) {
				pending = bp;
				pending_total = bt;
			} else {
				bars_agree = 0;
				bp = 0;
			}
			if (add_row(out, &rs, lineno, &st, rt, seen, bp, bs,
				    line_stamp(line, dict))) {
				rc = SD_ERR_NOMEM;
				snprintf(err, errlen, "%s: out of memory", path);
				goto done;
			}
		} else if (pd_get(d, "train_runtime") &&
			   (pd_get(d, "train_loss") ||
			    pd_get(d, "train_steps_per_second"))) {
			pd_num(d, "train_runtime", &runtime);
			pd_num(d, "train_steps_per_second", &sps);
			out->lines_facts++;
		} else {
			/* eval_* and other dicts: not training steps */
			out->lines_other++;
		}
	}
	if (batch > 0) {
		/* sequences per optimizer step over all ranks; the ranks:
		 * batch / (per device x accumulation) when whole */
		for (size_t i = 0; i < out->n; i++)
			out->samples[i] = batch;
		double w = per_device > 0 && accum > 0
				   ? batch / (per_device * accum) : NAN;
		if (w >= 1 && w == floor(w))
			sd_ingest_read_fact(&out->facts.devices, w);
	}
	if (!numbered && bars_agree && out->n && out->n == rs.n &&
	    (long)out->n == rowpos) {
		/* every dict was written under the bar: its count is the
		 * step (ProgressCallback.on_step_end moves the bar to
		 * global_step before on_log writes the dict) */
		for (size_t i = 0; i < out->n; i++) {
			if (i && rs.r[i].bar <= rs.r[i - 1].bar)
				bars_agree = 0;
		}
		int elapsed = 1;
		for (size_t i = 0; i < out->n; i++)
			elapsed &= rs.r[i].runtime < 0 && rs.r[i].bar_s >= 0;
		if (bars_agree) {
			for (size_t i = 0; i < out->n; i++) {
				out->steps[i].step = rs.r[i].bar;
				/* no train_runtime in the rows: the bar's
				 * own clock, in whole seconds */
				if (elapsed)
					rs.r[i].runtime = rs.r[i].bar_s;
			}
			out->last_step = out->steps[out->n - 1].step;
			max_steps = (double)pending_total;
			numbered = (long)out->n;
			from_bars = 1 + elapsed;
		}
	}
	if (numbered) {
		/* the log's own step numbers: no guessing.  This session's
		 * steps: from where it began (a resumed run's first row is
		 * a cadence after its checkpoint) to max_steps */
		out->steps_are_rows = 0;
		long every = out->n > 1 ? out->steps[1].step - out->steps[0].step
					: 0;
		long began = every > 0 && out->steps[0].step >= every
				     ? out->steps[0].step - every
				     : 0;
		double steps = max_steps > began ? max_steps - (double)began
			       : runtime > 0 && sps > 0
				       ? floor(runtime * sps + 0.5)
				       : NAN;
		finish_rows(out, &rs, 1, runtime, steps,
			    from_bars == 2 ? "tqdm bar's elapsed time (whole "
					     "seconds)" : "train_runtime");
		if (from_bars) {
			char tail[sizeof(out->note)];
			sd_strlcpy(tail, out->note, sizeof(tail));
			snprintf(out->note, sizeof(out->note), "steps from "
				 "the tqdm bar drawn with each dict; %s", tail);
		}
		goto end;
	}
	if (repeats)
		snprintf(out->misnumbered, sizeof(out->misnumbered),
			 "the dicts have no step numbers, and %ld repeat the "
			 "one before byte for byte (first at line %ld): read "
			 "as another process's copies, which a run whose "
			 "rows are alike would not be", repeats, first_repeat);
	else if (lost_rows)
		snprintf(out->misnumbered, sizeof(out->misnumbered),
			 "the dicts have no step numbers, and %ld 'loss' "
			 "line%s could not be read as a row (first at line "
			 "%ld): the rows after it are numbered as if it was "
			 "one, which may not hold",
			 lost_rows, lost_rows == 1 ? "" : "s",
			 out->nbad ? out->bad[0].line : 0L);
	/* steps of the session: a tqdm bar's total (the training bar's:
	 * train_runtime x train_steps_per_second when the run
	 * ended, within the rounding of train_steps_per_second's 3
	 * places; else the bar drawn most often whose total the rows fit),
	 * else that product (both rounded) to the nearest step.  The
	 * cadence: the one whole L with rows x L <= steps < (rows+1) x L
	 * (a row every L steps, the last steps unlogged). */
	double est = runtime > 0 && sps > 0 ? runtime * sps : NAN;
	long bar = 0, bar_count = 0;
	double bar_off = INFINITY;
	for (int k = 0; k < bars.n; k++) {
		double t = (double)bars.total[k];
		if (t < (double)rowpos || cadence(t, rowpos) < 1)
			continue;
		if (isfinite(est)) {
			/* train_steps_per_second is rounded to 3 places */
			double off = fabs(t - est) / est;
			if (t >= runtime * (sps - 0.0005) - 1 &&
			    t <= runtime * (sps + 0.0005) + 1 &&
			    off < bar_off) {
				bar_off = off;
				bar = bars.total[k];
			}
		} else if (bars.count[k] > bar_count) {
			bar_count = bars.count[k];
			bar = bars.total[k];
		}
	}
	double steps = bar > 0	    ? (double)bar
		       : isfinite(est) ? floor(est + 0.5)
				       : NAN;
	double mult = NAN;
	/* the checkpoints: rows r before the save of step S (each logged
	 * after its own step's event) hold floor(S / L) = r; every one
	 * of them must agree on one L */
	long lo = 1, hi = LONG_MAX;
	for (int k = 0; k < nanchor; k++) {
		long S = anchor_s[k], r = anchor_r[k];
		if (S / (r + 1) + 1 > lo)
			lo = S / (r + 1) + 1;
		if (r > 0 && S / r < hi)
			hi = S / r;
	}
	if (nanchor && lo == hi && rowpos > 0) {
		mult = (double)lo;
		out->log_every = mult;
	} else if (steps > 0 && rowpos > 0 && cadence(steps, rowpos) >= 1) {
		mult = cadence(steps, rowpos);
		out->log_every = mult;
	}
	const char *clock = "train_runtime";
	int stamped = isfinite(mult) && rs.n == out->n;
	for (size_t i = 0; stamped && i < rs.n; i++)
		stamped = rs.r[i].runtime < 0 && rs.r[i].stamp >= 0;
	if (stamped) {
		/* the logger's clock: whole seconds, its zero not the
		 * session's start */
		for (size_t i = 0; i < rs.n; i++)
			rs.r[i].runtime = rs.r[i].stamp;
		rs.first_untimed = 1;
		clock = "logger's time stamp (whole seconds)";
	}
	finish_rows(out, &rs, mult, runtime, steps, clock);
	if (out->n) {
		/* what the rows stand for, before finish_rows' note */
		char head[160], tail[sizeof(out->note)];
		if (nanchor && (double)lo == mult)
			snprintf(head, sizeof(head), "the printed dicts have "
				 "no step numbers: every %.0f, from %d "
				 "checkpoint%s (step %ld after %ld rows); ",
				 mult, nanchor, nanchor == 1 ? "" : "s",
				 anchor_s[0], anchor_r[0]);
		else if (isfinite(mult))
			snprintf(head, sizeof(head), "the printed dicts have "
				 "no step numbers: %.0f steps (%s) over %ld "
				 "rows: every %.0f; ", steps,
				 bar > 0 ? "the bar's total" : "runtime x "
				 "steps/s", rowpos, mult);
		else
			snprintf(head, sizeof(head), "the printed dicts have "
				 "no step numbers: rows 1, 2, 3 ...; give "
				 "--log-every; ");
		sd_strlcpy(tail, out->note, sizeof(tail));
		sd_strlcpy(out->note, head, sizeof(out->note));
		size_t hl = strlen(out->note);
		sd_strlcpy(out->note + hl, tail, sizeof(out->note) - hl);
	}
end:
	if (out->n == 0) {
		if (out->nbad)
			snprintf(err, errlen, "%s: no step lines of hf; %ld "
				 "lines read, %ld unparsed: first at line %ld: "
				 "%s", path, out->lines, out->lines_unparsed,
				 out->bad[0].line, out->bad[0].why);
		else
			snprintf(err, errlen, "%s: no step lines of hf; %ld "
				 "lines read, none a dict with 'loss'", path,
				 out->lines);
		rc = SD_ERR_INVALID;
	}
done:
	free(rs.r);
	free(d);
	return rc;
}

/* A JSON document ('{' then a '"' key) is trainer_state.json; anything
 * else is stdout. */
static int is_json_doc(const char *text, size_t len)
{
	size_t i = 0;
	while (i < len && strchr(" \t\r\n", text[i]))
		i++;
	if (i >= len || text[i] != '{')
		return 0;
	for (i++; i < len && strchr(" \t\r\n", text[i]); i++)
		;
	return i < len && (text[i] == '"' || text[i] == '}');
}

int sd_ingest_parse_hf(const char *path, const char *text, size_t len,
		       struct sd_ingest_log *out, char *err, size_t errlen)
{
	/* ms-swift's logging.jsonl: the Trainer's log events as JSON lines
	 * (its last line may hold a whole summary with "log_history") */
	if (sd_ingest_is_swift_jsonl(text, len))
		return sd_ingest_parse_swift_jsonl(path, text, len, out, err,
						   errlen);
	if (is_json_doc(text, len))
		return parse_state(path, text, len, out, err, errlen);
	return parse_stdout(path, text, len, out, err, errlen);
}

int sd_ingest_sniff_hf(const char *text, size_t len)
{
	if (sd_ingest_is_swift_jsonl(text, len))
		return 100;
	if (is_json_doc(text, len))
		return memmem(text, len, "\"log_history\"", 13) ? 100 : 0;
	int loss = memmem(text, len, "{'loss': ", 9) != NULL;
	int lr = memmem(text, len, "'learning_rate': ", 17) != NULL;
	if (loss && lr)
		return 90;
	if (memmem(text, len, "{'train_runtime': ", 18))
		return 70;
	return loss ? 60 : 0;
}
