/*
 * unit_ingest_hfl.c - the Hugging Face Trainer and LLaMA-Factory parsers
 * and the config.json reader (lib/ingest/hf.c, llamafactory.c,
 * model_config.c) on the fixtures of test/data/ingest/ (known answers in
 * test/data/ingest/README-hf-llamafactory), and on small texts for the
 * corners: Python reprs, json.dumps' NaN/Infinity, timedelta strings.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ingest/ingest.h"
#include "shakedown/backend.h"
#include "tap.h"

#define DATA SD_SOURCE_DIR "/test/data/ingest/"

/* One fixture's known answers (README-hf-llamafactory). */
struct want {
	const char *file;
	enum sd_ingest_format format;
	const char *variant;
	size_t n;
	long first_step, last_step;
	long lines, steps, facts, unparsed, other;
	double log_every;     /* NaN: unknown */
	int steps_are_rows;
	double loss_sum;      /* NaN: a NaN loss */
	double first_s, rest_s; /* step_s of the first row, of the others;
				   0: unknown */
	double tokens;        /* of every row; 0: unknown */
};

static const struct want wants[] = {
	{ "hf_trainer_state.json", SD_INGEST_HF, "trainer_state.json", 100, 1,
	  100, 743, 100, 1, 0, 642, 1, 0, 250.5, 3.0, 3.0, 0 },
	{ "hf_trainer_state_every10.json", SD_INGEST_HF, "trainer_state.json",
	  10, 10, 100, 153, 10, 1, 0, 142, 10, 0, 25.5, 3.6, 3.0, 49152 },
	{ "hf_stdout.log", SD_INGEST_HF, "stdout", 9, 1, 10, 19, 9, 1, 1, 8,
	  10, 1, 22.8, 3.0, 3.0, 0 },
	{ "hf_stdout_v4.log", SD_INGEST_HF, "stdout", 5, 1, 5, 6, 5, 0, 0, 1,
	  NAN, 1, NAN, 0, 0, 0 },
	{ "llamafactory_trainer_log.jsonl", SD_INGEST_LLAMAFACTORY,
	  "trainer_log.jsonl", 100, 1, 100, 100, 100, 0, 0, 0, NAN, 0, 250.5,
	  3.0, 3.0, 49152 },
	{ "llamafactory_every10.jsonl", SD_INGEST_LLAMAFACTORY,
	  "trainer_log.jsonl", 10, 10, 100, 11, 10, 0, 0, 1, NAN, 0, 25.5,
	  3.5, 3.0, 0 },
	{ "llamafactory_nan.jsonl", SD_INGEST_LLAMAFACTORY,
	  "trainer_log.jsonl", 100, 1, 100, 100, 100, 0, 0, 0, NAN, 0, NAN,
	  3.0, 3.0, 49152 },
	{ "llamafactory_garbled.jsonl", SD_INGEST_LLAMAFACTORY,
	  "trainer_log.jsonl", 18, 1, 19, 21, 18, 0, 3, 0, NAN, 0, 52.39,
	  3.0, 3.0, 49152 },
};

static void check_fixture(const struct want *w)
{
	char path[512], err[512] = "";
	struct sd_ingest_log l;
	snprintf(path, sizeof(path), DATA "%s", w->file);
	int rc = sd_ingest_read(path, SD_INGEST_AUTO, &l, err, sizeof(err));
	is_int(rc, SD_OK, "%s: read (%s)", w->file, err);
	is_int(l.format, w->format, "%s: sniffed as %s", w->file,
	       sd_ingest_format_name(w->format));
	ok(!strcmp(l.variant, w->variant), "%s: variant %s (got %s)",
	   w->file, w->variant, l.variant);
	is_int(l.n, w->n, "%s: rows", w->file);
	if (l.n) {
		is_int(l.steps[0].step, w->first_step, "%s: first step",
		       w->file);
		is_int(l.steps[l.n - 1].step, w->last_step, "%s: last step",
		       w->file);
	}
	is_int(l.lines, w->lines, "%s: lines", w->file);
	is_int(l.lines_steps, w->steps, "%s: step lines", w->file);
	is_int(l.lines_facts, w->facts, "%s: fact lines", w->file);
	is_int(l.lines_unparsed, w->unparsed, "%s: unparsed", w->file);
	is_int(l.lines_other, w->other, "%s: other", w->file);
	is_int(l.lines, l.lines_steps + l.lines_facts + l.lines_unparsed +
			l.lines_other, "%s: every line accounted for",
	       w->file);
	is_int(l.steps_are_rows, w->steps_are_rows, "%s: steps_are_rows",
	       w->file);
	if (isnan(w->log_every))
		ok(isnan(l.log_every), "%s: log_every unknown", w->file);
	else
		is_dbl(l.log_every, w->log_every, 0, "%s: log_every",
		       w->file);
	double sum = 0;
	int all_loss = 1, time_ok = 1, tok_ok = 1;
	for (size_t i = 0; i < l.n; i++) {
		const struct sd_train_step *s = &l.steps[i];
		sum += s->loss;
		all_loss &= !!(s->has & SD_STEP_LOSS);
		double want_s = i ? w->rest_s : w->first_s;
		if (want_s > 0)
			time_ok &= (s->has & SD_STEP_TIME) &&
				   fabs(s->step_s - want_s) < 1e-9;
		else
			time_ok &= !(s->has & SD_STEP_TIME);
		if (w->tokens > 0)
			tok_ok &= (s->has & SD_STEP_TOKENS) &&
				  s->tokens == w->tokens;
		else
			tok_ok &= !(s->has & SD_STEP_TOKENS);
	}
	ok(all_loss, "%s: every row has a loss", w->file);
	if (isnan(w->loss_sum))
		ok(isnan(sum), "%s: a NaN loss comes through", w->file);
	else
		is_dbl(sum, w->loss_sum, 1e-9, "%s: loss sum", w->file);
	ok(time_ok, "%s: step_s %g then %g (0: unknown)", w->file,
	   w->first_s, w->rest_s);
	ok(tok_ok, "%s: tokens per step %g (0: unknown)", w->file, w->tokens);
	ok(l.note[0] != '\0', "%s: a note says what was chosen: %s", w->file,
	   l.note);
	sd_ingest_log_free(&l);
}

static void read_ok(const char *file, struct sd_ingest_log *l)
{
	char path[512], err[512] = "";
	snprintf(path, sizeof(path), DATA "%s", file);
	int rc = sd_ingest_read(path, SD_INGEST_AUTO, l, err, sizeof(err));
	if (rc != SD_OK)
		printf("# %s\n", err);
}

static void specifics(void)
{
	struct sd_ingest_log l;

	read_ok("hf_stdout.log", &l);
	is_int(l.nbad, 1, "hf_stdout: one bad line kept");
	is_int(l.bad[0].line, 8, "hf_stdout: the garbled dict is line 8");
	ok(strstr(l.bad[0].why, "key 'learning_rate' has no value") &&
	   strstr(l.bad[0].why, "cut off"), "hf_stdout: why: %s",
	   l.bad[0].why);
	ok(!strncmp(l.bad[0].text, "{'loss': '2.7'", 14),
	   "hf_stdout: the bad text is the dict, not the tqdm bar: %s",
	   l.bad[0].text);
	is_int(l.steps[3].step, 5, "hf_stdout: the garbled row keeps its "
	       "place: the 4th row kept is row 5");
	is_dbl(l.steps[3].loss, 2.6, 1e-12, "hf_stdout: row 5's loss '2.6'");
	sd_ingest_log_free(&l);

	read_ok("hf_stdout_v4.log", &l);
	ok(isnan(l.steps[2].loss) && l.steps[2].step == 3,
	   "hf_stdout_v4: bare nan at row 3 is a NaN loss");
	sd_ingest_log_free(&l);

	read_ok("llamafactory_nan.jsonl", &l);
	int nan_at = -1, nans = 0;
	for (size_t i = 0; i < l.n; i++)
		if (isnan(l.steps[i].loss)) {
			nans++;
			nan_at = (int)l.steps[i].step;
		}
	is_int(nans, 1, "llamafactory_nan: one NaN loss");
	is_int(nan_at, 37, "llamafactory_nan: at step 37");
	sd_ingest_log_free(&l);

	read_ok("llamafactory_garbled.jsonl", &l);
	static const struct {
		long line;
		const char *why;
	} bad[] = {
		{ 5, "not JSON: '[' or '{' expected near 'Saving' at column 6" },
		{ 12, "not JSON: unexpected token near ',' at column 50" },
		{ 21, "the last line is cut off" },
	};
	is_int(l.nbad, 3, "llamafactory_garbled: three bad lines kept");
	for (size_t i = 0; i < 3 && i < l.nbad; i++) {
		is_int(l.bad[i].line, bad[i].line, "llamafactory_garbled: bad "
		       "line %zu", i + 1);
		ok(strstr(l.bad[i].why, bad[i].why), "llamafactory_garbled: "
		   "line %ld: %s", l.bad[i].line, l.bad[i].why);
	}
	int has11 = 0;
	for (size_t i = 0; i < l.n; i++)
		has11 |= l.steps[i].step == 11;
	ok(!has11, "llamafactory_garbled: step 11 (broken) has no row");
	is_dbl(l.steps[10].step_s, 3.0, 1e-12, "llamafactory_garbled: step "
	       "12's time spans the 2 steps since step 10");
	sd_ingest_log_free(&l);

	char err[512] = "";
	int rc = sd_ingest_read(DATA "hf_truncated.json", SD_INGEST_AUTO, &l,
				err, sizeof(err));
	is_int(rc, SD_ERR_INVALID, "hf_truncated: an error");
	ok(strstr(err, "hf_truncated.json:304:10: not valid JSON: premature "
		      "end of input") != NULL,
	   "hf_truncated: names line 304, column 10: %s", err);
	sd_ingest_log_free(&l);

	rc = sd_ingest_read(DATA "llamafactory_trainer_log.jsonl",
			    SD_INGEST_HF, &l, err, sizeof(err));
	ok(rc == SD_ERR_INVALID && strstr(err, "not a trainer_state.json") &&
	   strstr(err, "--format llamafactory"),
	   "a jsonl read as hf says which format: %s", err);
	sd_ingest_log_free(&l);
	rc = sd_ingest_read(DATA "hf_trainer_state.json",
			    SD_INGEST_LLAMAFACTORY, &l, err, sizeof(err));
	ok(rc == SD_ERR_INVALID && strstr(err, "a trainer_state.json; give "
					  "--format hf"),
	   "trainer_state.json read as llamafactory: %s", err);
	sd_ingest_log_free(&l);
}

/* Parse an inline text with a parser; the log, SD_OK expected. */
static int parse_text(int (*fn)(const char *, const char *, size_t,
				struct sd_ingest_log *, char *, size_t),
		      enum sd_ingest_format f, const char *text,
		      struct sd_ingest_log *l, char *err, size_t errlen)
{
	sd_ingest_log_init(l, f);
	return fn("t", text, strlen(text), l, err, errlen);
}

static void corners(void)
{
	struct sd_ingest_log l;
	char err[512] = "";

	/* 5.x strings 'nan', '-inf'; a nested value; True/None; 4.x inf */
	int rc = parse_text(sd_ingest_parse_hf, SD_INGEST_HF,
			    "{'loss': '2.5', 'grad_norm': 'nan', "
			    "'learning_rate': '1e-05', 'epoch': '0.1'}\n"
			    "{'loss': 'nan', 'x': [1, {'a': 2}], 'y': True, "
			    "'z': None, 'epoch': 0.2}\n"
			    "{'loss': '-inf', 'epoch': '0.3'}\n"
			    "{'loss': inf, \"name\": \"it's\"}\n"
			    "{'loss': 2.0, 'lr': 1e-05} trailing\n"
			    "{'loss': abc}\n"
			    "{'loss' 2.0}\n"
			    "{'eval_loss': '2.5', 'epoch': '1'}\n"
			    "{'train_runtime': '12', 'train_loss': '2.4'}\n",
			    &l, err, sizeof(err));
	is_int(rc, SD_OK, "repr corners: parsed (%s)", err);
	is_int(l.n, 4, "repr corners: 4 rows");
	if (l.n == 4) {
		ok(l.steps[0].loss == 2.5 && isnan(l.steps[1].loss) &&
		   l.steps[2].loss == -INFINITY && l.steps[3].loss == INFINITY,
		   "repr corners: '2.5', 'nan', '-inf', inf");
		is_int(l.steps[3].step, 4, "repr corners: rows numbered 1..4");
	}
	is_int(l.lines_unparsed, 3, "repr corners: 3 unparsed");
	is_int(l.lines_facts, 1, "repr corners: the train_runtime dict is "
	       "a fact line");
	is_int(l.lines_other, 1, "repr corners: the eval dict is other");
	ok(l.nbad == 3 && strstr(l.bad[0].why, "text after the dict's "
				 "closing '}'") &&
	   strstr(l.bad[1].why, "the value of 'loss' is not a number: 'abc'") &&
	   strstr(l.bad[2].why, "':' expected after key 'loss'"),
	   "repr corners: whys: %s / %s / %s", l.nbad > 0 ? l.bad[0].why : "",
	   l.nbad > 1 ? l.bad[1].why : "", l.nbad > 2 ? l.bad[2].why : "");
	ok(!(l.steps[0].has & SD_STEP_TIME), "repr corners: no steps/s, no "
	   "step time");
	sd_ingest_log_free(&l);

	/* json.dumps' Infinity / -Infinity; a day in elapsed_time; a
	 * JSON array line; a row with no loss is other */
	rc = parse_text(sd_ingest_parse_llamafactory, SD_INGEST_LLAMAFACTORY,
			"{\"current_steps\": 1, \"loss\": Infinity, "
			"\"elapsed_time\": \"23:59:58\"}\n"
			"\n"
			"{\"current_steps\": 3, \"loss\": -Infinity, "
			"\"elapsed_time\": \"1 day, 0:00:02\", "
			"\"note\": \"NaN inside a string\"}\n"
			"[1, 2]\n"
			"{\"current_steps\": 4, \"eval_loss\": 2.0}\n"
			"{\"current_steps\": 5, \"loss\": \"x\"}\n"
			"{\"current_steps\": 6, \"loss\": 1.5, "
			"\"elapsed_time\": \"2 days, 0:00:00\"}\n",
			&l, err, sizeof(err));
	is_int(rc, SD_OK, "jsonl corners: parsed (%s)", err);
	is_int(l.n, 3, "jsonl corners: 3 rows");
	if (l.n == 3) {
		ok(l.steps[0].loss == INFINITY && l.steps[1].loss == -INFINITY,
		   "jsonl corners: Infinity, -Infinity");
		is_dbl(l.steps[1].step_s, 2.0, 1e-12, "jsonl corners: 1 day, "
		       "0:00:02 - 23:59:58 over 2 steps");
		is_dbl(l.steps[2].step_s, 86398.0 / 3, 1e-6, "jsonl corners: "
		       "2 days, 0:00:00");
	}
	is_int(l.lines_unparsed, 2, "jsonl corners: the array and the string "
	       "loss are unparsed");
	is_int(l.lines_other, 2, "jsonl corners: blank and eval lines are "
	       "other");
	sd_ingest_log_free(&l);

	rc = parse_text(sd_ingest_parse_llamafactory, SD_INGEST_LLAMAFACTORY,
			"hello\n{\"a\": 1}\n", &l, err, sizeof(err));
	ok(rc == SD_ERR_INVALID && strstr(err, "no step lines of "
					  "llamafactory") &&
	   strstr(err, "first at line 1"), "jsonl: no rows is an error: %s",
	   err);
	sd_ingest_log_free(&l);
}

static void configs(void)
{
	static const struct {
		const char *file;
		double params, layers, width;
	} rows[] = {
		/* Meta-Llama-3-8B: 8,030,261,248 (its model card) */
		{ "config_llama3_8b.json", 8030261248.0, 32, 4096 },
		/* Qwen2-0.5B: 494,032,768 (its safetensors) */
		{ "config_qwen2_0.5b.json", 494032768.0, 24, 896 },
		/* GPT-2 small: 124,439,808 */
		{ "config_gpt2.json", 124439808.0, 12, 768 },
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct sd_train_fact p = { 0 }, L = { 0 }, h = { 0 };
		char path[512], err[512] = "";
		snprintf(path, sizeof(path), DATA "%s", rows[i].file);
		int rc = sd_ingest_model_config(path, &p, &L, &h, err,
						sizeof(err));
		is_int(rc, SD_OK, "%s: read (%s)", rows[i].file, err);
		is_dbl(p.value, rows[i].params, 0, "%s: %.0f parameters",
		       rows[i].file, rows[i].params);
		is_int(p.origin, SD_TRAIN_DERIVED, "%s: params derived",
		       rows[i].file);
		is_dbl(L.value, rows[i].layers, 0, "%s: layers", rows[i].file);
		is_dbl(h.value, rows[i].width, 0, "%s: width", rows[i].file);
		is_int(L.origin, SD_TRAIN_READ, "%s: layers read",
		       rows[i].file);
	}
	struct sd_train_fact p = { 0 }, L = { 0 }, h = { 0 };
	char err[512] = "";
	int rc = sd_ingest_model_config(DATA "config_mixtral.json", &p, &L,
					&h, err, sizeof(err));
	ok(rc == SD_ERR_INVALID && strstr(err, "\"num_local_experts\"") &&
	   strstr(err, "--params"), "mixtral refused naming the key: %s", err);
	ok(p.origin == SD_TRAIN_UNKNOWN, "mixtral: params left unknown");

	char tmp[512];
	const char *dir = getenv("TMPDIR") && *getenv("TMPDIR")
				  ? getenv("TMPDIR") : "/tmp";
	snprintf(tmp, sizeof(tmp), "%s/unit_ingest_hfl.%ld.json", dir,
		 (long)getpid());
	static const struct {
		const char *text, *want;
	} bad[] = {
		{ "{\"model_type\": \"falcon\", \"hidden_size\": 8}",
		  "\"model_type\": \"falcon\" is not one shakedown counts" },
		{ "{\"model_type\": \"llama\", \"hidden_size\": 8}",
		  "no \"vocab_size\"" },
		{ "{\"model_type\": \"llama\", \"vocab_size\": 8, "
		  "\"hidden_size\": 8.5}", "\"hidden_size\" is not a whole" },
		{ "{\"model_type\": \"llama\",\n  \"vocab_size\": }",
		  ":2:17: not a config.json" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		FILE *fp = fopen(tmp, "w");
		if (!fp)
			break;
		fputs(bad[i].text, fp);
		fclose(fp);
		rc = sd_ingest_model_config(tmp, &p, &L, &h, err, sizeof(err));
		ok(rc == SD_ERR_INVALID && strstr(err, bad[i].want),
		   "bad config %zu: %s", i + 1, err);
	}
	unlink(tmp);
	rc = sd_ingest_model_config(DATA "no_such_config.json", &p, &L, &h,
				    err, sizeof(err));
	is_int(rc, SD_ERR_IO, "a missing config.json is SD_ERR_IO");
}

static void sniffing(void)
{
	static const struct {
		const char *file;
		int hf_min, lf_min; /* -1: below 50 */
	} rows[] = {
		{ "hf_trainer_state.json", 100, -1 },
		{ "hf_trainer_state_every10.json", 100, -1 },
		{ "hf_truncated.json", 100, -1 },
		{ "hf_stdout.log", 90, -1 },
		{ "hf_stdout_v4.log", 90, -1 },
		{ "llamafactory_trainer_log.jsonl", -1, 100 },
		{ "llamafactory_garbled.jsonl", -1, 100 },
		{ "config_llama3_8b.json", -1, -1 },
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		char path[512], buf[65536];
		snprintf(path, sizeof(path), DATA "%s", rows[i].file);
		FILE *fp = fopen(path, "rb");
		size_t n = fp ? fread(buf, 1, sizeof(buf), fp) : 0;
		if (fp)
			fclose(fp);
		int hf = sd_ingest_sniff_hf(buf, n);
		int lf = sd_ingest_sniff_llamafactory(buf, n);
		ok(rows[i].hf_min < 0 ? hf < 50 : hf >= rows[i].hf_min,
		   "%s: hf sniffs %d", rows[i].file, hf);
		ok(rows[i].lf_min < 0 ? lf < 50 : lf >= rows[i].lf_min,
		   "%s: llamafactory sniffs %d", rows[i].file, lf);
	}
	const char *plain = "Epoch 1/3\nloss = 2.5, learning rate 1e-5\n"
			    "{\"loss\": 2.5}\nhello world\n";
	ok(sd_ingest_sniff_hf(plain, strlen(plain)) < 50 &&
	   sd_ingest_sniff_llamafactory(plain, strlen(plain)) < 50,
	   "plain text sniffs below 50");
	unsigned char rnd[4096];
	unsigned x = 12345;
	for (size_t i = 0; i < sizeof(rnd); i++) {
		x = x * 1103515245u + 12345u;
		rnd[i] = (unsigned char)(x >> 16);
	}
	ok(sd_ingest_sniff_hf((const char *)rnd, sizeof(rnd)) < 50 &&
	   sd_ingest_sniff_llamafactory((const char *)rnd, sizeof(rnd)) < 50,
	   "random bytes sniff below 50");
	ok(sd_ingest_sniff_hf("", 0) == 0 &&
	   sd_ingest_sniff_llamafactory("", 0) == 0, "nothing sniffs 0");
}

/* Two processes appending to one trainer_log.jsonl, then a resume from
 * the checkpoint at step 20 (elapsed_time starts again): the second
 * writer's lines (copies, one with another loss, one a logging interval
 * behind) are other lines with a warning; the resume is run 2; a line
 * written twice in run 2 is a copy, not a second writer. */
static void two_writers(void)
{
	static const char text[] =
		"{\"current_steps\": 10, \"loss\": 1.0, \"elapsed_time\": \"0:01:40\"}\n"
		"{\"current_steps\": 10, \"loss\": 1.0, \"elapsed_time\": \"0:01:41\"}\n"
		"{\"current_steps\": 20, \"loss\": 0.9, \"elapsed_time\": \"0:03:20\"}\n"
		"{\"current_steps\": 20, \"loss\": 0.91, \"elapsed_time\": \"0:03:21\"}\n"
		"{\"current_steps\": 30, \"loss\": 0.8, \"elapsed_time\": \"0:05:00\"}\n"
		"{\"current_steps\": 40, \"loss\": 0.7, \"elapsed_time\": \"0:06:40\"}\n"
		"{\"current_steps\": 30, \"loss\": 0.8, \"elapsed_time\": \"0:06:50\"}\n"
		"{\"current_steps\": 40, \"loss\": 0.7, \"elapsed_time\": \"0:08:20\"}\n"
		"{\"current_steps\": 30, \"loss\": 0.75, \"elapsed_time\": \"0:01:50\"}\n"
		"{\"current_steps\": 40, \"loss\": 0.65, \"elapsed_time\": \"0:03:30\"}\n"
		"{\"current_steps\": 50, \"loss\": 0.6, \"elapsed_time\": \"0:05:10\"}\n"
		"{\"current_steps\": 50, \"loss\": 0.6, \"elapsed_time\": \"0:05:10\"}\n";
	struct sd_ingest_log l;
	char err[512] = "";
	sd_ingest_log_init(&l, SD_INGEST_LLAMAFACTORY);
	int rc = sd_ingest_parse_llamafactory("w.jsonl", text, strlen(text),
					      &l, err, sizeof(err));
	ok(rc == SD_OK && l.runs == 2 && l.run_kept == 2 && l.n == 3 &&
	   l.steps[0].step == 30 && l.steps[2].step == 50 &&
	   l.steps[0].loss == 0.75,
	   "two writers, then a resume: run 2 of 2 read, steps 30-50 (%s)",
	   err);
	ok(l.lines == 12 && l.lines_steps == 3 && l.lines_other == 1 &&
	   l.lines_other_runs == 8 && l.lines_unparsed == 0 &&
	   l.steps_dropped == 1,
	   "run 2's copy of step 50 is an other line; run 1's 8 lines are "
	   "another run's");
	ok(l.warning[0] == '\0', "a line written twice is no second writer");
	ok(l.n == 3 && fabs(l.steps[0].step_s - 11.0) < 1e-9 &&
	   fabs(l.steps[1].step_s - 10.0) < 1e-9,
	   "the resumed run's first row is timed from its checkpoint (step "
	   "20): 110 s / 10 steps");
	sd_ingest_log_free(&l);

	sd_ingest_log_init(&l, SD_INGEST_LLAMAFACTORY);
	l.want_run = 1;
	rc = sd_ingest_parse_llamafactory("w.jsonl", text, strlen(text), &l,
					  err, sizeof(err));
	ok(rc == SD_OK && l.runs == 2 && l.run_kept == 1 && l.n == 4 &&
	   l.steps[0].step == 10 && l.steps[3].step == 40 &&
	   l.steps[1].loss == 0.9,
	   "--run 1: the first writer's 4 rows, steps 10-40");
	ok(l.lines_steps == 4 && l.lines_other == 4 &&
	   l.lines_other_runs == 4 && l.lines_unparsed == 0,
	   "the second writer's 4 lines are other lines, none unparsed");
	ok(strstr(l.warning, "two writers' rows interleaved") &&
	   strstr(l.warning, "the other's 4 not used, 3 copies of the "
		  "first's and 1 with another loss (by up to 0.01)"),
	   "a warning says so: %s", l.warning);
	ok(fabs(l.steps[2].step_s - 10.0) < 1e-9 &&
	   fabs(l.steps[3].step_s - 10.0) < 1e-9,
	   "each writer's time is its own: 10 s a step");
	sd_ingest_log_free(&l);
}

/* ms-swift's logging.jsonl: the step from "global_step/max_steps", the
 * clock from train_speed(iter/s) (global_step / seconds since the start)
 * else elapsed_time, an evaluation's eval_runtime out of its interval; a
 * misnumbered line, a non-numeric step and a loss without a step are
 * unparsed; the end lines are facts. */
static void swift_jsonl(void)
{
	static const char text[] =
		"{\"loss\": 2.0, \"global_step/max_steps\": \"1/40\", \"elapsed_time\": \"5s\", \"train_speed(iter/s)\": 0.2}\n"
		"{\"loss\": 1.5, \"global_step/max_steps\": \"10/40\", \"elapsed_time\": \"50s\", \"train_speed(iter/s)\": 0.2}\n"
		"{\"eval_loss\": 1.4, \"eval_runtime\": 30.0, \"global_step/max_steps\": \"10/40\", \"elapsed_time\": \"1m 20s\", \"train_speed(iter/s)\": 0.125}\n"
		"{\"loss\": 1.2, \"global_step/max_steps\": \"20/40\", \"elapsed_time\": \"2m 10s\", \"train_speed(iter/s)\": 0.153846}\n"
		"{\"loss\": 1.3, \"global_step/max_steps\": \"15/40\", \"elapsed_time\": \"2m 20s\", \"train_speed(iter/s)\": 0.107143}\n"
		"{\"loss\": 1.1, \"global_step/max_steps\": \"x/40\", \"elapsed_time\": \"2m 30s\"}\n"
		"{\"loss\": 1.0, \"epoch\": 0.5}\n"
		"{\"loss\": 0.9, \"global_step/max_steps\": \"30/40\", \"elapsed_time\": \"3m 0s\"}\n"
		"{\"train_runtime\": 200.0, \"train_loss\": 1.2, \"global_step/max_steps\": \"40/40\"}\n"
		"{\"model_parameter_info\": \"LlamaForCausalLM: 124.4398M Params (124.4398M Trainable [100.0000%]), 0.0001M Buffers.\", \"global_step\": 40, \"log_history\": [{\"loss\": 2.0, \"step\": 1}]}\n";
	size_t len = strlen(text);
	is_int(sd_ingest_sniff_hf(text, len), 100,
	       "a first JSON line with global_step/max_steps: hf, sure");
	ok(sd_ingest_sniff_llamafactory(text, len) < 50,
	   "and not LLaMA-Factory's");
	struct sd_ingest_log l;
	char err[512] = "";
	sd_ingest_log_init(&l, SD_INGEST_HF);
	int rc = sd_ingest_parse_hf("s.jsonl", text, len, &l, err,
				    sizeof(err));
	ok(rc == SD_OK && !strcmp(l.variant, "logging.jsonl") && l.n == 4 &&
	   l.steps[0].step == 1 && l.steps[1].step == 10 &&
	   l.steps[2].step == 20 && l.steps[3].step == 30 &&
	   l.steps[3].loss == 0.9 && !l.steps_are_rows,
	   "--format hf reads logging.jsonl: steps 1, 10, 20, 30 as printed "
	   "(%s)", err);
	ok(l.lines == 10 && l.lines_steps == 4 && l.lines_facts == 2 &&
	   l.lines_unparsed == 3 && l.lines_other == 1 &&
	   l.steps_dropped == 1,
	   "10 lines: 4 steps, 2 facts, 3 unparsed, 1 other (the eval)");
	ok(l.nbad == 3 && l.bad[0].line == 5 &&
	   strstr(l.bad[0].why, "step 15 after step 20") &&
	   l.bad[1].line == 6 && strstr(l.bad[1].why, "not \"N/M\"") &&
	   l.bad[2].line == 7 &&
	   strstr(l.bad[2].why, "no \"global_step/max_steps\""),
	   "the misnumbered step, the step 'x' and the loss without a step: "
	   "%s; %s; %s", l.nbad > 0 ? l.bad[0].why : "",
	   l.nbad > 1 ? l.bad[1].why : "", l.nbad > 2 ? l.bad[2].why : "");
	ok(l.n == 4 && fabs(l.steps[0].step_s - 5.0) < 1e-9 &&
	   fabs(l.steps[1].step_s - 5.0) < 1e-9,
	   "step / train_speed: 5 s at step 1, 50 s at step 10: 5 s a step");
	ok(l.n == 4 && fabs(l.steps[2].step_s - 5.00005) < 1e-4,
	   "the eval's 30 s left out of steps 11-20: %.5f s a step",
	   l.n == 4 ? l.steps[2].step_s : NAN);
	ok(l.n == 4 && fabs(l.steps[3].step_s - 5.0) < 1e-3,
	   "no train_speed: elapsed_time's 3m 0s: %.5f s a step",
	   l.n == 4 ? l.steps[3].step_s : NAN);
	ok(l.facts.params.origin == SD_TRAIN_READ &&
	   fabs(l.facts.params.value - 124439800.0) < 1,
	   "the model's size read from model_parameter_info: %.0f",
	   l.facts.params.value);
	sd_ingest_log_free(&l);

	sd_ingest_log_init(&l, SD_INGEST_LLAMAFACTORY);
	rc = sd_ingest_parse_llamafactory("s.jsonl", text, len, &l, err,
					  sizeof(err));
	ok(rc == SD_ERR_INVALID && strstr(err, "ms-swift") &&
	   strstr(err, "--format hf"),
	   "--format llamafactory says it is ms-swift's: %s", err);
	sd_ingest_log_free(&l);
}

int main(void)
{
	for (size_t i = 0; i < sizeof(wants) / sizeof(wants[0]); i++)
		check_fixture(&wants[i]);
	specifics();
	corners();
	configs();
	sniffing();
	two_writers();
	swift_jsonl();
	return done_testing();
}
