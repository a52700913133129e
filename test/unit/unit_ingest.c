/*
 * unit_ingest.c - what every log parser shares (lib/ingest/ingest.c: the
 * format names, rows, repeated steps, unparsed lines, reading and
 * sniffing a file) and a parsed log merged with the options
 * (lib/ingest/apply.c).  The parsers have their own tests.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ingest/apply.h"
#include "ingest/ingest.h"
#include "shakedown/backend.h"
#include "tap.h"

static struct sd_train_step row(long step, double loss)
{
	struct sd_train_step s = { .step = step, .loss = loss, .rank = -1,
				   .has = SD_STEP_LOSS };
	return s;
}

static void test_names(void)
{
	enum sd_ingest_format f = SD_INGEST_AUTO;
	char err[200];
	const char *names[] = { "auto", "megatron", "deepspeed", "hf",
				"llamafactory" };
	for (int i = 0; i < SD_INGEST_NFORMATS; i++) {
		is_int(sd_ingest_format_parse(names[i], &f, err, sizeof(err)),
		       SD_OK, "format '%s' parses", names[i]);
		is_int(f, i, "to itself");
		ok(strcmp(sd_ingest_format_name(f), names[i]) == 0,
		   "and names itself '%s'", names[i]);
	}
	ok(sd_ingest_format_parse("HuggingFace", &f, err, sizeof(err)) ==
		   SD_OK && f == SD_INGEST_HF, "huggingface is hf");
	ok(sd_ingest_format_parse("llama-factory", &f, err, sizeof(err)) ==
		   SD_OK && f == SD_INGEST_LLAMAFACTORY,
	   "llama-factory is llamafactory");
	ok(sd_ingest_format_parse("nemo", &f, err, sizeof(err)) ==
		   SD_ERR_INVALID && strstr(err, "'nemo'") &&
		   strstr(err, "megatron, deepspeed, hf or llamafactory"),
	   "an unknown format is refused, listing the known ones: %s", err);
}

static void test_rows(void)
{
	struct sd_ingest_log l;
	sd_ingest_log_init(&l, SD_INGEST_MEGATRON);
	ok(isnan(l.log_every) && l.facts.devices.origin == SD_TRAIN_UNKNOWN,
	   "an empty log: no cadence, no facts");
	struct sd_train_step a = row(1, 5.0), b = row(2, 4.5);
	a.rank = 3; /* the caller's rank is not kept: rows are the job's */
	is_int(sd_ingest_add_step(&l, 10, &a, 64, 400.5), SD_OK, "row 1");
	is_int(sd_ingest_add_step(&l, 11, &b, 64, NAN), SD_OK, "row 2");
	is_int(l.n, 2, "two rows");
	is_int(l.steps[0].rank, -1, "a row is the job's (rank -1)");
	ok(l.samples[0] == 64 && l.logged_tflops[0] == 400.5 &&
		   isnan(l.logged_tflops[1]),
	   "samples and the log's TFLOP/s kept beside each row");
	struct sd_train_step copy = row(2, 4.5), restart = row(1, 5.25);
	is_int(sd_ingest_add_step(&l, 12, &copy, 64, NAN), SD_OK,
	       "another rank's copy of step 2");
	is_int(l.n, 2, "is not a row");
	is_int(l.steps_dropped, 1, "it is counted as dropped");
	is_int(l.lines_unparsed, 0, "and, the same loss, not as unparsed");
	is_int(l.lines_other, 1, "a copy is an other line");
	is_int(sd_ingest_add_step(&l, 13, &restart, 64, NAN), SD_OK,
	       "step 1 again with another loss (the job restarted into the "
	       "same log)");
	ok(l.runs == 2 && l.run_kept == 2 && l.n == 1 &&
		   l.steps[0].loss == 5.25 && l.lines_other_runs == 2 &&
		   l.lines_steps == 1 && l.lines_unparsed == 0,
	   "a second run begins: the last is read, the first's 2 rows are "
	   "lines of another run");
	struct sd_train_step resume = row(1, 5.25), r2 = row(3, 4.0),
			     back = row(2, 4.4);
	(void)resume;
	is_int(sd_ingest_add_step(&l, 14, &r2, 64, NAN), SD_OK, "step 3");
	is_int(sd_ingest_add_step(&l, 15, &back, 64, NAN), SD_OK,
	       "step 2 after 3, with another loss (a resume, not a new run)");
	ok(l.runs == 2 && l.n == 2 && l.steps_dropped == 2 &&
		   l.lines_unparsed == 1 && l.nbad == 1 &&
		   l.bad[0].line == 15 &&
		   strstr(l.bad[0].why, "step 2 after step 3"),
	   "a resume is dropped and counted as unparsed, with its line and "
	   "why: %s", l.nbad ? l.bad[0].why : "-");
	/* more than can be kept */
	const char text[] = "garbled\tline\r\nnext";
	for (int i = 0; i < SD_INGEST_MAX_BAD + 3; i++)
		sd_ingest_bad_line(&l, 100 + i, text, sizeof(text) - 1,
				   "bad %d", i);
	is_int(l.lines_unparsed, SD_INGEST_MAX_BAD + 4,
	       "every unparsed line is counted");
	is_int(l.nbad, SD_INGEST_MAX_BAD, "the first %d are kept",
	       SD_INGEST_MAX_BAD);
	ok(strcmp(l.bad[1].text, "garbled?line") == 0 &&
		   strcmp(l.bad[1].why, "bad 0") == 0 && l.bad[1].line == 100,
	   "a kept line stops at its end, control characters shown as ?: "
	   "'%s'", l.bad[1].text);
	sd_ingest_read_fact(&l.facts.devices, 8);
	sd_ingest_read_fact(&l.facts.seq_len, -1);
	sd_ingest_read_fact(&l.facts.params, NAN);
	ok(l.facts.devices.value == 8 &&
		   l.facts.devices.origin == SD_TRAIN_READ,
	   "a fact read from the log is 'read'");
	ok(l.facts.seq_len.origin == SD_TRAIN_UNKNOWN &&
		   l.facts.params.origin == SD_TRAIN_UNKNOWN,
	   "a negative or NaN one is left unknown");
	sd_ingest_log_free(&l);
	ok(l.n == 0 && !l.steps && l.format == SD_INGEST_MEGATRON,
	   "freed: empty again, its format kept");
}

static void test_read(void)
{
	char dir[] = "/tmp/unit_ingest.XXXXXX", path[300], err[600];
	struct sd_ingest_log l;
	if (!mkdtemp(dir)) {
		ok(0, "a temporary folder");
		return;
	}
	snprintf(path, sizeof(path), "%s/missing.log", dir);
	is_int(sd_ingest_read(path, SD_INGEST_AUTO, &l, err, sizeof(err)),
	       SD_ERR_IO, "a log that is not there: an I/O failure");
	ok(strstr(err, "missing.log: cannot open"), "naming it: %s", err);
	sd_ingest_log_free(&l);
	snprintf(path, sizeof(path), "%s/empty.log", dir);
	FILE *fp = fopen(path, "w");
	if (fp)
		fclose(fp);
	is_int(sd_ingest_read(path, SD_INGEST_AUTO, &l, err, sizeof(err)),
	       SD_ERR_INVALID, "an empty log is refused");
	ok(strstr(err, "empty.log: the file is empty"), "saying so: %s", err);
	sd_ingest_log_free(&l);
	snprintf(path, sizeof(path), "%s/notes.txt", dir);
	fp = fopen(path, "w");
	if (fp) {
		fputs("shopping list\n- milk\n- bread\n", fp);
		fclose(fp);
	}
	is_int(sd_ingest_read(path, SD_INGEST_AUTO, &l, err, sizeof(err)),
	       SD_ERR_INVALID, "plain text is no format's");
	ok(strstr(err, "not a log shakedown knows") &&
		   strstr(err, "give --format"),
	   "and says to give --format: %s", err);
	sd_ingest_log_free(&l);
	unlink(path);
	snprintf(path, sizeof(path), "%s/empty.log", dir);
	unlink(path);
	rmdir(dir);
}

static void test_apply(void)
{
	struct sd_ingest_log l;
	struct sd_ingest_given g;
	struct sd_train_facts f;
	char note[600], err[300];
	sd_ingest_log_init(&l, SD_INGEST_HF);
	for (int i = 0; i < 3; i++) {
		struct sd_train_step s = row(i + 1, 3.0 - i);
		s.has |= SD_STEP_TIME;
		s.step_s = 2.0;
		sd_ingest_add_step(&l, i + 1, &s, NAN, NAN);
	}
	l.steps_are_rows = 1;
	sd_ingest_given_init(&g);
	is_int(sd_ingest_apply(&l, &g, &f, note, sizeof(note), err,
			       sizeof(err)), SD_ERR_INVALID,
	       "a log without step numbers and no --log-every is refused");
	ok(strstr(err, "give --log-every N"), "saying what to give: %s", err);
	g.log_every = 10;
	l.steps[2].step = 4; /* row 3 did not parse: the next is row 4 */
	is_int(sd_ingest_apply(&l, &g, &f, note, sizeof(note), err,
			       sizeof(err)), SD_OK, "with --log-every 10");
	ok(l.steps[0].step == 10 && l.steps[1].step == 20 &&
		   l.steps[2].step == 40 && !l.steps_are_rows,
	   "rows 1, 2 and 4 (3 did not parse) are steps 10, 20 and 40");
	sd_ingest_log_free(&l);

	/* Megatron-like: samples per step, facts read */
	sd_ingest_log_init(&l, SD_INGEST_MEGATRON);
	for (int i = 0; i < 4; i++) {
		struct sd_train_step s = row(i + 1, 2.0);
		sd_ingest_add_step(&l, i + 1, &s, 32, NAN);
	}
	struct sd_train_step t = row(5, 2.0);
	t.has |= SD_STEP_TOKENS;
	t.tokens = 1000;
	sd_ingest_add_step(&l, 5, &t, 32, NAN);
	l.log_every = 1;
	sd_ingest_read_fact(&l.facts.devices, 8);
	sd_ingest_read_fact(&l.facts.seq_len, 4096);
	sd_ingest_read_fact(&l.facts.layers, 32);
	snprintf(l.facts.device_name, sizeof(l.facts.device_name), "NVIDIA "
		 "H100 80GB HBM3");
	sd_ingest_given_init(&g);
	g.facts.devices = (struct sd_train_fact){ 16, SD_TRAIN_GIVEN };
	g.facts.params = (struct sd_train_fact){ 8e9, SD_TRAIN_GIVEN };
	g.facts.precision = SD_TRAIN_FP8;
	g.log_every = 5;
	is_int(sd_ingest_apply(&l, &g, &f, note, sizeof(note), err,
			       sizeof(err)), SD_OK, "facts merged");
	ok(f.devices.value == 16 && f.devices.origin == SD_TRAIN_GIVEN,
	   "a given fact wins over the log's");
	ok(strstr(note, "--gpus 16 given; the log says 8"),
	   "and the note says both: %s", note);
	ok(strstr(note, "--log-every 5 ignored"),
	   "--log-every is ignored for a log that numbers its steps: %s",
	   note);
	ok(f.seq_len.value == 4096 && f.seq_len.origin == SD_TRAIN_READ &&
		   f.layers.origin == SD_TRAIN_READ,
	   "what only the log says is read");
	ok(f.params.origin == SD_TRAIN_GIVEN && f.params.value == 8e9,
	   "what only an option says is given");
	ok(f.width.origin == SD_TRAIN_UNKNOWN, "what neither says is unknown");
	ok(strcmp(f.device_name, "NVIDIA H100 80GB HBM3") == 0 &&
		   f.device_name_origin == SD_TRAIN_READ &&
		   f.precision == SD_TRAIN_FP8,
	   "the device read, the precision given");
	ok((l.steps[0].has & SD_STEP_TOKENS) &&
		   l.steps[0].tokens == 32.0 * 4096,
	   "a row's tokens: its samples x seq_len");
	ok(l.steps[4].tokens == 1000, "a row that has tokens keeps them");
	sd_ingest_log_free(&l);

	char cfg[96];
	sd_ingest_config(NULL, cfg, sizeof(cfg));
	ok(strcmp(cfg, "log") == 0, "a log's config is 'log'");
	sd_ingest_config("llama8b-sft", cfg, sizeof(cfg));
	ok(strcmp(cfg, "log llama8b-sft") == 0,
	   "with --workload W, 'log W'");
}

/* Every fixture of test/data/ingest/ is sniffed as its own format and
 * scores below 50 for every other. */
static void test_sniff(void)
{
	static const struct {
		const char *file;
		enum sd_ingest_format f;
	} rows[] = {
		{ "megatron.log", SD_INGEST_MEGATRON },
		{ "megatron_every10.log", SD_INGEST_MEGATRON },
		{ "megatron_truncated.log", SD_INGEST_MEGATRON },
		{ "deepspeed.log", SD_INGEST_DEEPSPEED },
		{ "deepspeed_every10.log", SD_INGEST_DEEPSPEED },
		{ "hf_trainer_state.json", SD_INGEST_HF },
		{ "hf_stdout.log", SD_INGEST_HF },
		{ "llamafactory_trainer_log.jsonl", SD_INGEST_LLAMAFACTORY },
		{ "llamafactory_garbled.jsonl", SD_INGEST_LLAMAFACTORY },
	};
	int (*sniff[SD_INGEST_NFORMATS])(const char *, size_t) = {
		NULL, sd_ingest_sniff_megatron, sd_ingest_sniff_deepspeed,
		sd_ingest_sniff_hf, sd_ingest_sniff_llamafactory,
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		char path[600], buf[65536];
		snprintf(path, sizeof(path), "%s/test/data/ingest/%s",
			 SD_SOURCE_DIR, rows[i].file);
		FILE *fp = fopen(path, "rb");
		size_t n = fp ? fread(buf, 1, sizeof(buf), fp) : 0;
		if (fp)
			fclose(fp);
		ok(n > 0, "%s read", rows[i].file);
		int own = 0, other = 0;
		for (int f = 1; f < SD_INGEST_NFORMATS; f++) {
			int sc = sniff[f](buf, n);
			if (f == (int)rows[i].f)
				own = sc;
			else if (sc > other)
				other = sc;
		}
		ok(own >= 50 && other < 50, "%s: %s scores %d, the others at "
		   "most %d", rows[i].file, sd_ingest_format_name(rows[i].f),
		   own, other);
	}
}

/* What real logs have: launcher prefixes, long preambles, DeepSpeed's
 * profiler banner and multi-line configuration values, a Trainer dict
 * right after a tqdm bar, step numbers in the dicts, a loss that cannot
 * be read (issue 32). */
static void test_real_shapes(void)
{
	char err[600];
	struct sd_ingest_log l;
	static const struct {
		const char *line;
		size_t want;
	} pre[] = {
		{ "0: iteration 1", 3 },     { "12: x", 4 },
		{ "[rank3]: x", 8 },         { "[rank3]:x", 8 },
		{ "host-1: x", 8 },          { "localhost: x", 11 },
		{ "node07: x", 8 },          { "steps: 10 loss: 2.0", 0 },
		{ "UserWarning: x", 0 },     { "{'loss': 1}", 0 },
		{ " iteration 1", 0 },       { "[2026-01-01] x", 0 },
		{ " 0: x", 4 },              { "  12: x", 6 },
		{ "[default3]:x", 11 },      { " host-1: x", 0 },
		{ " 12 items: x", 0 },
	};
	int bad = 0;
	for (size_t i = 0; i < sizeof(pre) / sizeof(pre[0]); i++)
		if (sd_ingest_launcher_prefix(pre[i].line,
					      strlen(pre[i].line)) !=
		    pre[i].want) {
			printf("# prefix of '%s': %zu, not %zu\n", pre[i].line,
			       sd_ingest_launcher_prefix(pre[i].line,
							 strlen(pre[i].line)),
			       pre[i].want);
			bad++;
		}
	is_int(bad, 0, "launcher prefixes: srun -l, torchrun's [rankN]:, "
		       "pdsh's host: (with a digit or '-', or localhost); "
		       "'steps:' and 'UserWarning:' are not one");

	/* Megatron's arguments behind "0: " are read */
	static const char mg[] =
		"0: ------------------------ arguments ------------------------\n"
		"0:   seq_length ...................................... 2048\n"
		"0:   world_size ...................................... 8\n"
		"0: -------------------- end of arguments ---------------------\n"
		"0:  iteration        1/     10 | consumed samples:           16 | "
		"elapsed time per iteration (ms): 1000.0 | learning rate: "
		"1.000000E-04 | global batch size:    16 | lm loss: 5.000000E+00 |"
		" loss scale: 1.0 | number of skipped iterations:   0 | number "
		"of nan iterations:   0 |\n";
	sd_ingest_log_init(&l, SD_INGEST_MEGATRON);
	ok(sd_ingest_parse_megatron("m.log", mg, sizeof(mg) - 1, &l, err,
				    sizeof(err)) == SD_OK &&
		   l.n == 1 && l.facts.seq_len.value == 2048 &&
		   l.facts.devices.value == 8,
	   "Megatron behind srun -l: the step and the arguments read");
	sd_ingest_log_free(&l);

	/* DeepSpeed: the start-up banner opens no profiler block, and a
	 * multi-line configuration value does not end the block */
	static const char ds[] =
		"[2024-01-01 00:00:00,000] [INFO] [logging.py:96:log_dist] "
		"DeepSpeed Flops Profiler Enabled: False\n"
		"[2024-01-01 00:00:01,000] [INFO] [config.py:979:print] "
		"DeepSpeedEngine configuration:\n"
		"[2024-01-01 00:00:01,000] [INFO] [config.py:983:print]   "
		"zero_config .................. {\n"
		"    \"stage\": 2, \n"
		"    \"offload\": [1, 2]\n"
		"}\n"
		"[2024-01-01 00:00:01,000] [INFO] [config.py:983:print]   "
		"train_batch_size ............. 64\n"
		"steps: 10 loss: 2.5000 iter time (s): 1.000 samples/sec: 64.000\n"
		"steps: 20 loss: 2.4000 iter time (s): 1.000 samples/sec: 64.000\n";
	sd_ingest_log_init(&l, SD_INGEST_DEEPSPEED);
	ok(sd_ingest_parse_deepspeed("d.log", ds, sizeof(ds) - 1, &l, err,
				     sizeof(err)) == SD_OK &&
		   l.n == 2 && l.steps[1].step == 20 &&
		   l.samples[0] == 64 && l.lines_facts == 6 &&
		   l.lines_other == 1,
	   "DeepSpeed: the profiler banner opens nothing; the configuration "
	   "is read whole (train_batch_size after a multi-line value)");
	sd_ingest_log_free(&l);

	/* the Trainer: a dict right after a tqdm bar; numbered rows */
	static const char hf[] =
		"{'loss': 2.5, 'learning_rate': 1e-05, "
		"'global_step/max_steps': '5/20'}\n"
		" 50%|#####     | 10/20 [00:05<00:05]{'loss': 2.4, "
		"'learning_rate': 1e-05, 'global_step/max_steps': '10/20'}\n"
		"{'loss': 2.3, 'learning_rate': 1e-05}\n"
		"{'loss': 2.2, 'global_step/max_steps': '20/20'}\n";
	sd_ingest_log_init(&l, SD_INGEST_HF);
	ok(sd_ingest_parse_hf("h.log", hf, sizeof(hf) - 1, &l, err,
			      sizeof(err)) == SD_OK &&
		   l.n == 3 && l.steps[0].step == 5 &&
		   l.steps[1].step == 10 && l.steps[1].loss == 2.4 &&
		   l.steps[2].step == 20 && !l.steps_are_rows &&
		   l.lines_unparsed == 1 && !l.misnumbered[0],
	   "the Trainer: the dict after a bar is read, the printed step "
	   "numbers kept, a row without one counted, never numbered");
	sd_ingest_log_free(&l);

	/* by position: a 'loss' that cannot be read keeps its place, and
	 * the log says its loss is not to be judged */
	static const char hp[] =
		"{'loss': 2.5, 'learning_rate': 1e-05}\n"
		"garbled 'loss': 2.4\n"
		"{'loss': 2.3, 'learning_rate': 1e-05}\n";
	sd_ingest_log_init(&l, SD_INGEST_HF);
	ok(sd_ingest_parse_hf("p.log", hp, sizeof(hp) - 1, &l, err,
			      sizeof(err)) == SD_OK &&
		   l.n == 2 && l.steps[1].step == 3 && l.steps[1].loss == 2.3 &&
		   strstr(l.misnumbered, "1 'loss' line could not be read"),
	   "by position: the unreadable row keeps its place; misnumbered: "
	   "%s", l.misnumbered);
	sd_ingest_log_free(&l);

	/* a preamble of 300 KiB before the first step line is sniffed */
	char dir[] = "/tmp/unit_ingest_real.XXXXXX", path[300];
	if (!mkdtemp(dir)) {
		ok(0, "a temporary folder");
		return;
	}
	snprintf(path, sizeof(path), "%s/long.log", dir);
	FILE *fp = fopen(path, "w");
	for (int i = 0; fp && i < 6000; i++)
		fprintf(fp, "loading shard %d of the model: fine, nothing to "
			    "see here\n", i);
	if (fp) {
		fputs(mg, fp);
		fclose(fp);
	}
	ok(sd_ingest_read(path, SD_INGEST_AUTO, &l, err, sizeof(err)) ==
			   SD_OK && l.format == SD_INGEST_MEGATRON && l.n == 1,
	   "a Megatron log whose first step line is 300 KiB in: found (%s)",
	   l.n ? "megatron" : err);
	sd_ingest_log_free(&l);
	unlink(path);
	rmdir(dir);
}

/* The Trainer's stdout with tqdm: tqdm.write clears the bar, writes the
 * dict and draws the bar again; the bar on both sides is its step. */
static void test_hf_bars(void)
{
	struct sd_ingest_log l;
	char err[512];
	/* as transformers 4.55 + TRL print it: the bar, '\r', blanks,
	 * '\r', the dict; the next line starts with the same bar */
#define BAR(n, t) "  " #n "/" #t " [00:" #n "<00:10,  1.00s/it]"
	static const char ok2[] =
		BAR(9, 20) "\r" BAR(10, 20) "\r          \r"
		"{'loss': 2.5, 'learning_rate': 1e-05, 'num_tokens': 1000.0, "
		"'epoch': 0.5}\n"
		BAR(10, 20) "\r" BAR(11, 20) "\r" BAR(20, 20) "\r     \r"
		"{'loss': 2.4, 'learning_rate': 1e-05, 'num_tokens': 3000.0, "
		"'epoch': 1.0}\n"
		"\r" BAR(20, 20) "\n"
		"Generation config {'bos_token_id': None, 'pad': 1}.\n";
	sd_ingest_log_init(&l, SD_INGEST_HF);
	ok(sd_ingest_parse_hf("b.log", ok2, sizeof(ok2) - 1, &l, err,
			      sizeof(err)) == SD_OK &&
		   l.n == 2 && l.steps[0].step == 10 && l.steps[1].step == 20 &&
		   !l.steps_are_rows && l.lines_unparsed == 0 &&
		   l.lines_other == 2 && (l.steps[1].has & SD_STEP_TIME) &&
		   l.steps[1].step_s == 1.0 && l.steps[1].tokens == 200.0 &&
		   strstr(l.note, "tqdm bar") && strstr(l.note, "num_tokens"),
	   "the Trainer under tqdm: steps 10 and 20 from the bars, 1 s a "
	   "step from their clocks, 200 tokens a step from TRL's num_tokens; "
	   "a message's dict is another line (%s)", l.note);
	sd_ingest_log_free(&l);

	/* the bar after the second dict says another step: no bar is
	 * trusted, the rows are numbered by position as before */
	static const char off[] =
		BAR(10, 20) "\r     \r{'loss': 2.5, 'learning_rate': 1e-05}\n"
		BAR(10, 20) "\r" BAR(20, 20) "\r     \r"
		"{'loss': 2.4, 'learning_rate': 1e-05}\n"
		BAR(19, 20) "\n";
	sd_ingest_log_init(&l, SD_INGEST_HF);
	ok(sd_ingest_parse_hf("o.log", off, sizeof(off) - 1, &l, err,
			      sizeof(err)) == SD_OK &&
		   l.n == 2 && l.steps[1].step == 2 && l.steps_are_rows,
	   "a bar after a dict that disagrees with the one before it: no "
	   "step taken from the bars (rows %zu, last %ld)", l.n,
	   l.n ? l.steps[l.n - 1].step : -1L);
	sd_ingest_log_free(&l);

	/* a dict that looks like the Trainer's but does not parse is
	 * still unparsed */
	static const char bad[] =
		"{'loss': 2.5, 'learning_rate': 1e-05}\n"
		"{'learning_rate': oops}\n";
	sd_ingest_log_init(&l, SD_INGEST_HF);
	ok(sd_ingest_parse_hf("u.log", bad, sizeof(bad) - 1, &l, err,
			      sizeof(err)) == SD_OK &&
		   l.lines_unparsed == 1 && l.lines_other == 0,
	   "a broken dict with the Trainer's keys is unparsed");
	sd_ingest_log_free(&l);
#undef BAR

	/* LLaMA-Factory's running_log.txt: the logger's prefix and clock,
	 * the banner, and the checkpoints that pin the cadence */
#define ROW(t, loss) "[INFO|2024-11-26 22:" t "] logging.py:157 >> " \
	"{'loss': " loss ", 'learning_rate': 1e-05, 'epoch': 0.5}\n"
#define SAVE(n) "[INFO|2024-11-26 23:00:00] trainer.py:3801 >> Saving " \
	"model checkpoint to saves/x/checkpoint-" #n "\n"
	static const char lf[] =
		"[INFO|2024-11-26 22:07:15] trainer.py:2316 >>   Instantaneous "
		"batch size per device = 2\n"
		"[INFO|2024-11-26 22:07:15] trainer.py:2319 >>   Total train "
		"batch size (w. parallel, distributed & accumulation) = 1,024\n"
		"[INFO|2024-11-26 22:07:15] trainer.py:2320 >>   Gradient "
		"Accumulation steps = 64\n"
		ROW("09:00", "2.5") ROW("10:00", "2.4") SAVE(6)
		ROW("11:00", "2.3") ROW("12:30", "2.2") SAVE(12);
	sd_ingest_log_init(&l, SD_INGEST_HF);
	ok(sd_ingest_parse_hf("lf.log", lf, sizeof(lf) - 1, &l, err,
			      sizeof(err)) == SD_OK &&
		   l.n == 4 && l.log_every == 3 && l.steps[3].step == 4 &&
		   l.samples[0] == 1024 && l.facts.devices.value == 8 &&
		   l.steps[1].step_s == 20.0 && l.steps[3].step_s == 30.0 &&
		   !(l.steps[0].has & SD_STEP_TIME) && l.lines_facts == 5,
	   "running_log.txt: every 3 from the checkpoints of steps 6 and 12, "
	   "20 s and 30 s a step from the logger's clock, 1024 sequences a "
	   "step on 1024 / (2 x 64) = 8 devices (%s)", l.note);
	sd_ingest_log_free(&l);

	/* checkpoints that no one cadence fits (a resumed run's): not
	 * used, the log asks for --log-every */
	static const char lf2[] = ROW("09:00", "2.5") SAVE(6) ROW("10:00", "2.4")
		ROW("11:00", "2.3") SAVE(7);
	sd_ingest_log_init(&l, SD_INGEST_HF);
	ok(sd_ingest_parse_hf("lf2.log", lf2, sizeof(lf2) - 1, &l, err,
			      sizeof(err)) == SD_OK &&
		   l.n == 3 && l.steps_are_rows && isnan(l.log_every),
	   "checkpoints of steps 6 and 7 after 1 and 3 rows fit no cadence: "
	   "none is chosen");
	sd_ingest_log_free(&l);
#undef ROW
#undef SAVE

	/* two processes printing the same Trainer rows, interleaved: the
	 * repeats are read once, and the numbers by position are said to
	 * be a guess */
	static const char two[] =
		"{'loss': 2.5, 'learning_rate': 1e-05, 'epoch': 0.1}\n"
		"{'loss': 2.5, 'learning_rate': 1e-05, 'epoch': 0.1}\n"
		"{'loss': 2.4, 'learning_rate': 1e-05, 'epoch': 0.2}\n"
		"{'loss': 2.4, 'learning_rate': 1e-05, 'epoch': 0.2}\n"
		"{'loss': 2.3, 'learning_rate': 1e-05, 'epoch': 0.3}\n";
	sd_ingest_log_init(&l, SD_INGEST_HF);
	ok(sd_ingest_parse_hf("two.log", two, sizeof(two) - 1, &l, err,
			      sizeof(err)) == SD_OK &&
		   l.n == 3 && l.steps[2].step == 3 && l.copies == 2 &&
		   l.lines_other == 2 &&
		   strstr(l.misnumbered, "2 repeat the one before"),
	   "two processes' Trainer dicts interleaved: 3 rows, 2 copies, and "
	   "the loss not judged (%s)", l.misnumbered);
	sd_ingest_log_free(&l);

	/* a second run read in place of the first: each row's time and
	 * tokens are its own run's */
	static const char rerun[] =
		"{'loss': 2.0, 'global_step/max_steps': '10/100', "
		"'num_input_tokens_seen': 100, 'train_runtime': 10.0}\n"
		"{'loss': 1.9, 'global_step/max_steps': '20/100', "
		"'num_input_tokens_seen': 200, 'train_runtime': 20.0}\n"
		"{'loss': 1.8, 'global_step/max_steps': '30/100', "
		"'num_input_tokens_seen': 300, 'train_runtime': 30.0}\n"
		"{'loss': 2.0, 'global_step/max_steps': '10/100', "
		"'num_input_tokens_seen': 10000, 'train_runtime': 100.0}\n"
		"{'loss': 1.7, 'global_step/max_steps': '20/100', "
		"'num_input_tokens_seen': 50000, 'train_runtime': 500.0}\n";
	sd_ingest_log_init(&l, SD_INGEST_HF);
	ok(sd_ingest_parse_hf("rerun.log", rerun, sizeof(rerun) - 1, &l, err,
			      sizeof(err)) == SD_OK &&
		   l.runs == 2 && l.n == 2 && l.steps[1].step_s == 40.0 &&
		   l.steps[1].tokens == 4000.0,
	   "a restarted Trainer run: its rows timed by its own train_runtime "
	   "(40 s a step) and tokens (4000 a step), not the first run's "
	   "(%g s, %g)", l.n > 1 ? l.steps[1].step_s : -1.0,
	   l.n > 1 ? l.steps[1].tokens : -1.0);
	sd_ingest_log_free(&l);

	/* the same with Megatron's numbered lines: copies read once, and
	 * the warning says so */
	char dir[] = "/tmp/unit_ingest_two.XXXXXX", path[300];
	if (!mkdtemp(dir)) {
		ok(0, "a temporary folder");
		return;
	}
	snprintf(path, sizeof(path), "%s/two.log", dir);
	FILE *fp = fopen(path, "w");
	for (int i = 1; fp && i <= 3; i++)
		for (int rank = 0; rank < 2; rank++)
			fprintf(fp, "%d: [2024-01-01 00:00:00] iteration %8d/"
				"      10 | consumed samples: %12d | elapsed "
				"time per iteration (ms): 1000.0 | learning "
				"rate: 1.000000E-04 | global batch size:    16 "
				"| lm loss: %.6E | loss scale: 1.0 |\n",
				rank, i, 16 * i, 5.0 - i);
	if (fp)
		fclose(fp);
	ok(sd_ingest_read(path, SD_INGEST_AUTO, &l, err, sizeof(err)) ==
			   SD_OK && l.n == 3 && l.copies == 3 &&
			   strstr(l.warning, "3 step lines repeat a row"),
	   "two ranks' Megatron lines: 3 rows, 3 copies, warned: %s",
	   l.n ? l.warning : err);
	sd_ingest_log_free(&l);
	unlink(path);
	rmdir(dir);
}

/* Megatron-DeepSpeed: Megatron-LM's arguments block, behind pdsh's
 * prefix, read by the DeepSpeed parser through megatron.c's reader */
static void test_megads_args(void)
{
	char err[600];
	struct sd_ingest_log l;
	static const char md[] =
		"node-1: ------------------------ arguments ------------------------\n"
		"node-1:   hidden_size ..................................... 3584\n"
		"node-1:   log_interval .................................... 10\n"
		"node-1:   num_layers ...................................... 28\n"
		"node-1:   seq_length ...................................... 2048\n"
		"node-1:   world_size ...................................... 16\n"
		"node-1: -------------------- end of arguments ---------------------\n"
		"node-1: steps: 1 loss: 12.6418 iter time (s): 20.245 samples/sec: 0.790\n"
		"node-1: steps: 2 loss: 12.6457 iter time (s): 20.421 samples/sec: 0.784\n";
	sd_ingest_log_init(&l, SD_INGEST_DEEPSPEED);
	ok(sd_ingest_parse_deepspeed("md.log", md, sizeof(md) - 1, &l, err,
				     sizeof(err)) == SD_OK &&
		   l.n == 2 && l.lines_facts == 7 && l.lines_other == 0 &&
		   l.facts.devices.value == 16 &&
		   l.facts.devices.origin == SD_TRAIN_READ &&
		   l.facts.seq_len.value == 2048 && l.facts.layers.value == 28 &&
		   l.facts.width.value == 3584 && isnan(l.log_every) &&
		   l.samples[0] == 16,
	   "Megatron-DeepSpeed: the DeepSpeed parser reads Megatron's "
	   "arguments (devices, seq_len, layers, width; not log_interval, "
	   "which is Megatron's own line's)");
	sd_ingest_log_free(&l);
}

/* DeepSpeed before 0.8: the ThroughputTimer's 'E/M, ...' counts micro
 * steps, from 0 again in each epoch the script closes with
 * update_epoch_count(): the step goes on over a new epoch (no new run),
 * a restarted job (the epoch back to 0) is a new run */
static void test_old_timer(void)
{
	char err[600];
	struct sd_ingest_log l;
#define OT(em, c) "[2022-11-24 00:52:01,509] [INFO] [timer.py:198:stop] " \
	em ", RunningAvgSamplesPerSec=16.2, CurrSamplesPerSec=" c \
	", MemAllocated=1.87GB, MaxMemAllocated=6.26GB\n"
	static const char conf[] =
		"[2022-11-24 00:51:45,966] [INFO] [config.py:995:print] "
		"DeepSpeedEngine configuration:\n"
		"[2022-11-24 00:51:45,966] [INFO] [config.py:999:print]   "
		"gradient_accumulation_steps .. 2\n"
		"[2022-11-24 00:51:45,966] [INFO] [config.py:999:print]   "
		"train_batch_size ............. 8\n";
	static const char wrap[] =
		OT("0/4", "16.0") OT("0/6", "16.0") OT("0/8", "16.0")
		"***** Evaluating perplexity, Epoch 1/2 *****\n"
		OT("1/2", "16.0") OT("1/4", "8.0") OT("1/6", "x");
	char text[4096];
	snprintf(text, sizeof(text), "%s%s", conf, wrap);
	sd_ingest_log_init(&l, SD_INGEST_DEEPSPEED);
	int rc = sd_ingest_parse_deepspeed("ot.log", text, strlen(text), &l,
					   err, sizeof(err));
	ok(rc == SD_OK && l.n == 5 && l.steps[0].step == 2 &&
		   l.steps[2].step == 4 && l.steps[3].step == 5 &&
		   l.steps[4].step == 6 && l.runs == 1 &&
		   fabs(l.steps[0].step_s - 0.5) < 1e-12 &&
		   fabs(l.steps[4].step_s - 1.0) < 1e-12 &&
		   l.samples[4] == 8 && l.lines_unparsed == 1 &&
		   l.lines_facts == 3 && l.lines_other == 1 &&
		   strstr(l.note, "gradient_accumulation_steps 2") &&
		   strstr(l.note, "epochs joined"),
	   "DeepSpeed 0.7's timer 'E/M': step = micro steps / accumulation "
	   "(4/2 = 2), epoch 1 goes on from epoch 0's last micro step (1/2 "
	   "is step 5, one run), time = train_batch_size / CurrSamplesPerSec; "
	   "a rate that does not parse is unparsed (%s)", rc ? err : l.note);
	sd_ingest_log_free(&l);

	/* the job restarted into the file: the epoch back to 0 */
	snprintf(text, sizeof(text), "%s%s%s", conf, wrap,
		 OT("0/4", "16.0") OT("0/6", "16.0"));
	sd_ingest_log_init(&l, SD_INGEST_DEEPSPEED);
	rc = sd_ingest_parse_deepspeed("ot.log", text, strlen(text), &l, err,
				       sizeof(err));
	ok(rc == SD_OK && l.runs == 2 && l.run_kept == 2 && l.n == 2 &&
		   l.steps[0].step == 2 && l.steps[1].step == 3 &&
		   l.lines_other_runs == 5,
	   "DeepSpeed 0.7's timer: the epoch back to 0 is a restarted job, "
	   "a new run (%d runs)", l.runs);
	sd_ingest_log_free(&l);

	/* sniffed as DeepSpeed's without a configuration block */
	is_int(sd_ingest_sniff_deepspeed(wrap, sizeof(wrap) - 1), 90,
	       "the old timer line alone is DeepSpeed's (90)");
#undef OT
}

/* A DeepSpeed timer in a log that never states its batch: rows of one
 * sample's time, for the command's --global-batch */
static void test_timer_no_batch(void)
{
	char err[600];
	struct sd_ingest_log l;
	static const char nb[] =
		"[2023-04-18 01:46:59,171] [INFO] [timer.py:199:stop] "
		"epoch=0/micro_step=10/global_step=10, RunningAvgSamplesPerSec="
		"173.4, CurrSamplesPerSec=160.0, MemAllocated=3.96GB, "
		"MaxMemAllocated=22.95GB\n"
		"[2023-04-18 01:47:06,619] [INFO] [timer.py:199:stop] "
		"epoch=1/micro_step=5/global_step=20, RunningAvgSamplesPerSec="
		"172.6, CurrSamplesPerSec=128.0, MemAllocated=3.96GB, "
		"MaxMemAllocated=22.95GB\n";
	sd_ingest_log_init(&l, SD_INGEST_DEEPSPEED);
	ok(sd_ingest_parse_deepspeed("nb.log", nb, sizeof(nb) - 1, &l, err,
				     sizeof(err)) == SD_OK &&
		   l.n == 2 && l.step_s_per_sample &&
		   l.steps[1].step == 20 &&
		   !(l.steps[1].has & SD_STEP_TIME) &&
		   l.steps[1].step_s == 1.0 / 128 && isnan(l.samples[1]) &&
		   strstr(l.note, "--global-batch"),
	   "DeepSpeed's timer without train_batch_size: rows of one sample's "
	   "time (1 / CurrSamplesPerSec), no step time yet, the note says "
	   "--global-batch gives it");
	sd_ingest_log_free(&l);

	/* the old line without a configuration: no accumulation steps to
	 * make optimizer steps of micro steps, and the note says so */
	static const char ob[] =
		"[2022-11-24 00:52:01,509] [INFO] [timer.py:198:stop] 0/4, "
		"RunningAvgSamplesPerSec=16.1, CurrSamplesPerSec=16.0, "
		"MemAllocated=1.87GB, MaxMemAllocated=6.26GB\n"
		"[2022-11-24 00:52:07,206] [INFO] [timer.py:198:stop] 0/6, "
		"RunningAvgSamplesPerSec=16.9, CurrSamplesPerSec=8.0, "
		"MemAllocated=1.87GB, MaxMemAllocated=6.27GB\n";
	sd_ingest_log_init(&l, SD_INGEST_DEEPSPEED);
	ok(sd_ingest_parse_deepspeed("ob.log", ob, sizeof(ob) - 1, &l, err,
				     sizeof(err)) == SD_OK &&
		   l.n == 2 && l.steps[0].step == 4 && l.steps[1].step == 6 &&
		   l.step_s_per_sample && l.steps[1].step_s == 1.0 / 8 &&
		   strstr(l.note, "the micro step (no "
				  "gradient_accumulation_steps"),
	   "DeepSpeed 0.7's timer without a configuration: rows by micro "
	   "step, said in the note (%s)", l.note);
	sd_ingest_log_free(&l);
}

/* Megatron-LM's model-parallel ranks' parameters: summed when all of
 * tensor x pipeline printed theirs, unknown when one is missing */
static void test_megatron_params(void)
{
	struct sd_ingest_log l;
	char err[512];
#define ARG(k, v) "  " k " " "........................ " #v "\n"
#define SHARD(t, p, n) " > number of parameters on (tensor, pipeline) " \
	"model parallel rank (" #t ", " #p "): " #n "\n"
#define STEP " iteration        1/      10 | consumed samples: 16 | " \
	"elapsed time per iteration (ms): 1000.0 | global batch size:    16 " \
	"| lm loss: 5.000000E+00 |\n"
	static const char all[] =
		"------------------------ arguments ------------------------\n"
		ARG("tensor_model_parallel_size", 2)
		ARG("pipeline_model_parallel_size", 2)
		"-------------------- end of arguments ---------------------\n"
		SHARD(0, 0, 100) SHARD(1, 0, 100) SHARD(0, 1, 50)
		SHARD(1, 1, 50) SHARD(0, 0, 100) STEP;
	sd_ingest_log_init(&l, SD_INGEST_MEGATRON);
	ok(sd_ingest_parse_megatron("m.log", all, sizeof(all) - 1, &l, err,
				    sizeof(err)) == SD_OK &&
		   l.facts.params.value == 300 &&
		   l.facts.params.origin == SD_TRAIN_READ &&
		   l.lines_facts == 9,
	   "Megatron: 4 shards of a 2 x 2 model summed to 300 parameters, a "
	   "shard printed again counted once (%g)", l.facts.params.value);
	sd_ingest_log_free(&l);
	static const char some[] =
		"------------------------ arguments ------------------------\n"
		ARG("tensor_model_parallel_size", 2)
		"-------------------- end of arguments ---------------------\n"
		SHARD(0, 0, 100) STEP;
	sd_ingest_log_init(&l, SD_INGEST_MEGATRON);
	ok(sd_ingest_parse_megatron("s.log", some, sizeof(some) - 1, &l, err,
				    sizeof(err)) == SD_OK &&
		   l.facts.params.origin == SD_TRAIN_UNKNOWN,
	   "Megatron: 1 shard of 2 printed (one node's output): the "
	   "parameters are not known");
	sd_ingest_log_free(&l);
#undef ARG
#undef SHARD
#undef STEP
}

/* A log cut shorter while it is read (logrotate's copytruncate): the
 * read fails, saying so, and the process lives (SIGBUS on the mapped
 * pages past the new end is caught). */
static void test_truncated_while_read(void)
{
	char dir[] = "/tmp/unit_ingest_trunc.XXXXXX", path[300];
	if (!mkdtemp(dir)) {
		ok(0, "a temporary folder");
		return;
	}
	snprintf(path, sizeof(path), "%s/big.log", dir);
	int caught = 0, signalled = 0, tries = 0;
	for (; tries < 4 && !caught && !signalled; tries++) {
		FILE *fp = fopen(path, "w");
		for (long i = 1; fp && i <= 100000L * (tries + 1); i++)
			fprintf(fp, " iteration %8ld/%8ld | consumed samples: "
				"%12ld | elapsed time per iteration (ms): "
				"1000.0 | learning rate: 1.000000E-04 | global "
				"batch size:    16 | lm loss: 5.000000E+00 | "
				"loss scale: 1.0 | number of skipped "
				"iterations:   0 |\n", i, 100000000L, 16 * i);
		if (fp)
			fclose(fp);
		pid_t pid = fork();
		if (pid == 0) {
			struct sd_ingest_log l;
			char err[512];
			int rc = sd_ingest_read(path, SD_INGEST_AUTO, &l, err,
						sizeof(err));
			_exit(rc == SD_OK ? 0
			      : rc == SD_ERR_IO && strstr(err, "got shorter")
				      ? 10
				      : 11);
		}
		/* once the child has mapped the file, cut it */
		char maps[64], buf[4096];
		snprintf(maps, sizeof(maps), "/proc/%d/maps", (int)pid);
		for (int k = 0; k < 20000; k++) {
			FILE *m = fopen(maps, "r");
			int seen = 0;
			while (m && fgets(buf, sizeof(buf), m))
				seen |= strstr(buf, "big.log") != NULL;
			if (m)
				fclose(m);
			if (seen || !m)
				break;
			usleep(100);
		}
		if (truncate(path, 4096) != 0)
			break;
		int st = 0;
		waitpid(pid, &st, 0);
		signalled |= WIFSIGNALED(st);
		caught |= WIFEXITED(st) && WEXITSTATUS(st) == 10;
	}
	ok(caught && !signalled,
	   "a log cut shorter while it is read: the read fails saying so, no "
	   "SIGBUS (%d tr%s)", tries, tries == 1 ? "y" : "ies");
	unlink(path);
	rmdir(dir);
}

/* Step numbers past reason, a loss not lent to another run's row, and
 * Megatron's line with no stamp before "iteration". */
static void test_odd_steps(void)
{
	struct sd_ingest_log l;
	char err[512];
#define TIMER(g) "[2024-01-01 00:00:00,000] [INFO] [timer.py:264:stop] " \
	"epoch=0/micro_step=" #g "/global_step=" #g ", RunningAvgSamplesPer" \
	"Sec=8.0, CurrSamplesPerSec=8.0, MemAllocated=1GB\n"
	static const char ds[] =
		TIMER(10) TIMER(20) TIMER(10)
		"[2024-01-01 00:00:00,000] [INFO] [engine.py:405:train_batch] "
		"steps: 20 loss: 5.0000 iter time (s): 1.000 samples/sec: "
		"8.000\n"
		"steps: 1e19 loss: 1.7 iter time (s): 1.000 samples/sec: 8.000\n";
#undef TIMER
	sd_ingest_log_init(&l, SD_INGEST_DEEPSPEED);
	l.want_run = 1;
	ok(sd_ingest_parse_deepspeed("d.log", ds, sizeof(ds) - 1, &l, err,
				     sizeof(err)) == SD_OK &&
		   l.runs == 2 && l.n == 2 && !(l.steps[1].has & SD_STEP_LOSS) &&
		   l.lines_unparsed == 1,
	   "DeepSpeed: run 1's step 20 keeps no loss that run 2 printed; "
	   "step 1e19 is unparsed (%s)", l.nbad ? l.bad[0].why : "");
	sd_ingest_log_free(&l);

	static const char mg[] =
		"iteration        1/      10 | consumed samples: 16 | elapsed "
		"time per iteration (ms): 1000.0 | global batch size:    16 | "
		"lm loss: 5.000000E+00 |\n"
		"iteration        2/      10 | consumed samples: 32 | elapsed "
		"time per iteration (ms): 1000.0 | global batch size:    16 | "
		"lm loss: 4.000000E+00 |\n";
	sd_ingest_log_init(&l, SD_INGEST_MEGATRON);
	ok(sd_ingest_parse_megatron("m.log", mg, sizeof(mg) - 1, &l, err,
				    sizeof(err)) == SD_OK &&
		   l.n == 2 && l.steps[1].step == 2 && l.lines_unparsed == 0,
	   "Megatron: a line that starts with 'iteration' is read");
	sd_ingest_log_free(&l);
}

int main(void)
{
	test_odd_steps();
	test_truncated_while_read();
	test_megatron_params();
	test_hf_bars();
	test_real_shapes();
	test_sniff();
	test_names();
	test_rows();
	test_read();
	test_apply();
	test_megads_args();
	test_old_timer();
	test_timer_no_batch();
	return done_testing();
}
