/*
 * unit_trainmetrics.c - the training metrics (TAP): tgs, TFLOPs and MFU
 * from known series (every step, a 10-step cadence, uneven spans, warm-up,
 * what is missing), the peak table (SXM against PCIe, unknown names, an
 * override, the man page's copy of it), the step-time breakdown, the loss
 * against a reference (an identical curve, a shift, a divergence, noise,
 * fewer than 100 steps, NaN and inf, another config), references made
 * from three curves, their file's round trip and parse errors, and the
 * database: a run recorded, read back and recomputed, references stored
 * and made from runs, a locked database whose run lands through the
 * journal.  Real SQLite files in a temporary folder; fast.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#include "db/db.h"
#include "db/train_db.h"
#include "shakedown/backend.h"
#include "tap.h"
#include "train/metrics.h"
#include "train/reference.h"

#define NSTEPS_MAX 2000

static char tmpdir[256];

/* A series of n rows: steps first, first+every, ...; loss f(step); a
 * step time and tokens when given (> 0). */
static size_t series(struct sd_train_step *s, size_t n, long first, long every,
		     double (*loss)(long), double step_s, double tokens)
{
	for (size_t i = 0; i < n; i++) {
		memset(&s[i], 0, sizeof(s[i]));
		s[i].rank = -1;
		s[i].step = first + (long)i * every;
		if (loss) {
			s[i].has |= SD_STEP_LOSS;
			s[i].loss = loss(s[i].step);
		}
		if (step_s > 0) {
			s[i].has |= SD_STEP_TIME;
			s[i].step_s = step_s;
		}
		if (tokens > 0) {
			s[i].has |= SD_STEP_TOKENS;
			s[i].tokens = tokens;
		}
	}
	return n;
}

static double loss_line(long step) { return 4.0 - 0.01 * (double)step; }
static double loss_flat(long step) { (void)step; return 4.0; }

static void fact(struct sd_train_fact *f, double v, enum sd_train_origin o)
{
	f->value = v;
	f->origin = o;
}

static int rel_eq(double a, double b, double rel)
{
	return fabs(a - b) <= rel * fabs(b) || (a == 0 && b == 0);
}

/* ---------------------------------------------------------------- */

static void test_throughput(void)
{
	static struct sd_train_step s[NSTEPS_MAX];
	struct sd_train_facts f;
	struct sd_train_summary sum;
	char err[256];

	/* the known answers: rows, facts, what comes out */
	static const struct {
		const char *what;
		long first, every;
		size_t n;
		double step_s, row_tokens;   /* per row; 0: none */
		double fact_tokens, devices, warmup;
		size_t timed_rows;
		long timed_steps;
		double tokens_per_s, tgs, step_s_median;
	} rows[] = {
		{ "every step, warm-up 2", 1, 1, 10, 0.5, 0, 4096, 2, 2, 7, 7,
		  8192.0, 4096.0, 0.5 },
		{ "a 10-step cadence", 10, 10, 10, 0.2, 1000, 0, 4, 0, 9, 90,
		  5000.0, 1250.0, 0.2 },
		{ "a 10-step cadence, warm-up 15", 10, 10, 10, 0.2, 1000, 0, 4,
		  15, 7, 70, 5000.0, 1250.0, 0.2 },
		{ "row tokens win over the fact", 0, 1, 5, 0.25, 512, 99, 1, 0,
		  4, 4, 2048.0, 2048.0, 0.25 },
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		size_t n = series(s, rows[i].n, rows[i].first, rows[i].every,
				  loss_line, rows[i].step_s, rows[i].row_tokens);
		sd_train_facts_init(&f);
		if (rows[i].fact_tokens > 0)
			fact(&f.tokens_per_step, rows[i].fact_tokens,
			     SD_TRAIN_GIVEN);
		fact(&f.devices, rows[i].devices, SD_TRAIN_GIVEN);
		fact(&f.warmup_steps, rows[i].warmup, SD_TRAIN_GIVEN);
		int rc = sd_train_summarize(s, n, &f, &sum, err, sizeof(err));
		is_int(rc, SD_OK, "%s: summarised", rows[i].what);
		is_int(sum.timed_rows, rows[i].timed_rows, "%s: timed rows",
		       rows[i].what);
		is_int(sum.timed_steps, rows[i].timed_steps,
		       "%s: timed steps", rows[i].what);
		is_dbl(sum.tokens_per_s, rows[i].tokens_per_s, 1e-9,
		       "%s: tokens/s", rows[i].what);
		is_dbl(sum.tgs, rows[i].tgs, 1e-9, "%s: tgs", rows[i].what);
		is_dbl(sum.step_s_median, rows[i].step_s_median, 1e-12,
		       "%s: median step time", rows[i].what);
	}

	/* uneven step times: total tokens / total time, not the mean rate */
	series(s, 5, 1, 1, loss_line, 1.0, 100);
	s[2].step_s = 2.0;
	s[4].step_s = 3.0;
	sd_train_facts_init(&f);
	fact(&f.devices, 1, SD_TRAIN_GIVEN);
	sd_train_summarize(s, 5, &f, &sum, err, sizeof(err));
	is_dbl(sum.tgs, 400.0 / 7.0, 1e-12, "uneven times: 400 tokens / 7 s");
	is_dbl(sum.step_s_mean, 1.75, 1e-12, "uneven times: mean step 1.75 s");
	is_dbl(sum.step_s_median, 1.5, 1e-12,
	       "uneven times: median of 1, 2, 1, 3 is 1.5 s");

	/* uneven spans: each row weighs the steps it stands for */
	series(s, 3, 0, 5, loss_line, 1.0, 10);
	s[2].step = 15;
	s[1].step_s = 2.0;
	s[2].step_s = 4.0;
	sd_train_summarize(s, 3, &f, &sum, err, sizeof(err));
	is_dbl(sum.tgs, 150.0 / 50.0, 1e-12,
	       "spans 5 and 10: (10x5 + 10x10) tokens / (2x5 + 4x10) s");
	is_int(sum.timed_steps, 15, "spans 5 and 10: 15 timed steps");

	/* FLOPs, TFLOPs and MFU: 6N + 12 L h s */
	series(s, 10, 1, 1, loss_line, 0.5, 0);
	sd_train_facts_init(&f);
	fact(&f.tokens_per_step, 4096, SD_TRAIN_GIVEN);
	fact(&f.devices, 2, SD_TRAIN_READ);
	fact(&f.warmup_steps, 2, SD_TRAIN_WORKLOAD);
	fact(&f.params, 1e6, SD_TRAIN_WORKLOAD);
	fact(&f.layers, 2, SD_TRAIN_WORKLOAD);
	fact(&f.width, 64, SD_TRAIN_WORKLOAD);
	fact(&f.seq_len, 128, SD_TRAIN_WORKLOAD);
	fact(&f.peak_tflops, 0.1, SD_TRAIN_MEASURED);
	sd_train_summarize(s, 10, &f, &sum, err, sizeof(err));
	double fpt = 6e6 + 12.0 * 2 * 64 * 128;
	is_dbl(sum.flops_per_token, fpt, 0, "flops/token = 6N + 12 L h s");
	is_int(sum.flops_origin, SD_TRAIN_DERIVED, "the formula's FLOPs are "
	       "derived");
	is_dbl(sum.tflops, fpt * 4096.0 / 1e12, 1e-15,
	       "TFLOPs = flops/token x tgs / 1e12");
	is_dbl(sum.mfu, fpt * 4096.0 / 1e12 / 0.1, 1e-12,
	       "MFU = TFLOPs / the measured peak");
	is_int(sum.peak.origin, SD_TRAIN_MEASURED, "the peak is the measured one");
	fact(&f.flops_per_token, 1e9, SD_TRAIN_GIVEN);
	sd_train_summarize(s, 10, &f, &sum, err, sizeof(err));
	is_dbl(sum.tflops, 1e9 * 4096.0 / 1e12, 1e-12,
	       "a given flops/token wins over the formula");
	is_int(sum.flops_origin, SD_TRAIN_GIVEN, "and is marked given");

	/* what is missing is NaN, and says what to give */
	static const struct {
		const char *what;
		int tokens, devices, params, device;
		const char *tgs_why, *tflops_why, *mfu_why;
	} missing[] = {
		{ "no tokens", 0, 1, 1, 1, "give --tokens-per-step", NULL, NULL },
		{ "no devices", 1, 0, 1, 1, "give --gpus", NULL, NULL },
		{ "no params", 1, 1, 0, 1, NULL, "missing: params", NULL },
		{ "unknown device", 1, 1, 1, 2, NULL, NULL,
		  "no peak for CPU (Gloo TCP); give --peak-tflops" },
		{ "no device name", 1, 1, 1, 0, NULL, NULL,
		  "no device name for the peak table; give --peak-tflops" },
	};
	for (size_t i = 0; i < sizeof(missing) / sizeof(missing[0]); i++) {
		series(s, 10, 1, 1, loss_line, 0.5, 0);
		sd_train_facts_init(&f);
		if (missing[i].tokens)
			fact(&f.tokens_per_step, 4096, SD_TRAIN_GIVEN);
		if (missing[i].devices)
			fact(&f.devices, 8, SD_TRAIN_GIVEN);
		if (missing[i].params)
			fact(&f.params, 1e6, SD_TRAIN_GIVEN);
		fact(&f.layers, 2, SD_TRAIN_GIVEN);
		fact(&f.width, 64, SD_TRAIN_GIVEN);
		fact(&f.seq_len, 128, SD_TRAIN_GIVEN);
		snprintf(f.device_name, sizeof(f.device_name), "%s",
			 missing[i].device == 1 ? "NVIDIA H100 80GB HBM3"
			 : missing[i].device == 2 ? "CPU (Gloo TCP)" : "");
		f.device_name_origin = SD_TRAIN_READ;
		is_int(sd_train_summarize(s, 10, &f, &sum, err, sizeof(err)),
		       SD_OK, "%s: summarised", missing[i].what);
		if (missing[i].tgs_why)
			ok(isnan(sum.tgs) && strstr(sum.tgs_why,
						    missing[i].tgs_why) &&
			   isnan(sum.tflops) && isnan(sum.mfu),
			   "%s: tgs, TFLOPs, MFU unknown: %s", missing[i].what,
			   sum.tgs_why);
		if (missing[i].tflops_why)
			ok(!isnan(sum.tgs) && isnan(sum.tflops) &&
			   strstr(sum.tflops_why, missing[i].tflops_why) &&
			   strstr(sum.tflops_why, "--params"),
			   "%s: TFLOPs unknown: %s", missing[i].what,
			   sum.tflops_why);
		if (missing[i].mfu_why)
			ok(!isnan(sum.tflops) && isnan(sum.mfu) &&
			   strcmp(sum.mfu_why, missing[i].mfu_why) == 0,
			   "%s: MFU unknown: %s", missing[i].what, sum.mfu_why);
	}
	/* with the device known: the table's peak */
	series(s, 10, 1, 1, loss_line, 0.5, 0);
	sd_train_facts_init(&f);
	fact(&f.tokens_per_step, 4096, SD_TRAIN_GIVEN);
	fact(&f.devices, 8, SD_TRAIN_GIVEN);
	fact(&f.flops_per_token, 1e11, SD_TRAIN_GIVEN);
	snprintf(f.device_name, sizeof(f.device_name), "NVIDIA H100 PCIe");
	sd_train_summarize(s, 10, &f, &sum, err, sizeof(err));
	is_dbl(sum.mfu, (819.2 / 8) / 756.5, 1e-12,
	       "MFU against the H100 PCIe's bf16 peak from the table");
	/* ten times the FLOPs: above the peak, so the peak is what is wrong */
	fact(&f.flops_per_token, 1e12, SD_TRAIN_GIVEN);
	sd_train_summarize(s, 10, &f, &sum, err, sizeof(err));
	ok(isnan(sum.mfu) && isfinite(sum.tflops) &&
	   strstr(sum.mfu_why, "not a figure: 1024 TFLOPs/device is above "
			       "the peak of 756.5 (table), so that peak is "
			       "wrong (MFU would be 135%)"),
	   "an MFU above 100%% is not a figure: %s", sum.mfu_why);
	/* PaLM's and Megatron-LM's formulas, on the built-in default config
	 * (4 layers, width 256, seq 128, vocab 256, 3,257,856 parameters) */
	is_dbl(sd_train_flops_palm(3257856, 4, 256, 128),
	       6.0 * 3257856 + 12.0 * 4 * 256 * 128, 0,
	       "PaLM's: 6N + 12 L H Q T");
	is_dbl(sd_train_flops_megatron(4, 256, 128, 256),
	       72.0 * 4 * 256 * 256 + 6.0 * 4 * 128 * 256 + 6.0 * 256 * 256, 0,
	       "Megatron-LM's: 72 L h^2 + 6 L s h (causal) + 6 h V");
	ok(fabs(sd_train_flops_palm(3257856, 4, 256, 128) /
		sd_train_flops_megatron(4, 256, 128, 256) - 1.053) < 0.001,
	   "on the default config PaLM's is 5.3%% above Megatron-LM's");
	ok(strcmp(sum.peak.part, "NVIDIA H100 PCIe") == 0 &&
	   sum.peak.origin == SD_TRAIN_TABLE, "the part is named");

	/* no timed step at all */
	series(s, 3, 1, 1, loss_line, 0.5, 100);
	sd_train_facts_init(&f);
	fact(&f.devices, 1, SD_TRAIN_GIVEN);
	fact(&f.warmup_steps, 5, SD_TRAIN_GIVEN);
	sd_train_summarize(s, 3, &f, &sum, err, sizeof(err));
	ok(isnan(sum.tgs) && strstr(sum.tgs_why, "no timed steps"),
	   "a warm-up longer than the series: %s", sum.tgs_why);

	/* the series is checked */
	static const struct {
		const char *what;
		long step1;
		double step_s1;
		const char *err;
	} bad[] = {
		{ "steps that go back", 0, 0.5, "step 0 follows step 1" },
		{ "a step repeated", 1, 0.5, "step 1 follows step 1" },
		{ "a zero step time", 2, 0.0, "step 2: step time 0 s" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		series(s, 3, 1, 1, loss_line, 0.5, 100);
		s[1].step = bad[i].step1;
		s[1].step_s = bad[i].step_s1;
		int rc = sd_train_summarize(s, 3, &f, &sum, err, sizeof(err));
		ok(rc == SD_ERR_INVALID && strstr(err, bad[i].err),
		   "%s is refused: %s", bad[i].what, err);
	}
	ok(sd_train_summarize(s, 0, &f, &sum, err, sizeof(err)) ==
		   SD_ERR_INVALID, "an empty series is refused: %s", err);
}

static void test_breakdown(void)
{
	struct sd_train_step s[6];
	struct sd_train_facts f;
	struct sd_train_summary sum;
	char err[256];
	series(s, 6, 1, 1, loss_line, 1.0, 100);
	for (size_t i = 0; i < 6; i++) {
		s[i].has |= SD_STEP_COMPUTE | SD_STEP_COMM | SD_STEP_OPTIM;
		s[i].compute_s = 0.6;
		s[i].comm_s = 0.3;
		s[i].optim_s = 0.05;
	}
	s[5].step_s = 2.0; /* a slow step: 1.2 compute, 0.6 comm, 0.1 optim */
	s[5].compute_s = 1.2;
	s[5].comm_s = 0.6;
	s[5].optim_s = 0.1;
	sd_train_facts_init(&f);
	fact(&f.devices, 1, SD_TRAIN_GIVEN);
	sd_train_summarize(s, 6, &f, &sum, err, sizeof(err));
	is_int(sum.breakdown_rows, 5, "breakdown over the 5 timed rows");
	is_dbl(sum.compute_share, 3.6 / 6.0, 1e-12, "compute share 60%%");
	is_dbl(sum.comm_share, 1.8 / 6.0, 1e-12, "all_reduce share 30%%");
	is_dbl(sum.optim_share, 0.3 / 6.0, 1e-12, "optimizer share 5%%");
	is_dbl(sum.other_share, 0.05, 1e-12, "the rest 5%%");
	is_dbl(sum.comm_s_mean, 1.8 / 5.0, 1e-12, "all_reduce 0.36 s a step");
	s[3].has &= ~SD_STEP_COMM;
	sd_train_summarize(s, 6, &f, &sum, err, sizeof(err));
	is_int(sum.breakdown_rows, 4, "a row without its all_reduce time is "
	       "left out of the breakdown");
	series(s, 6, 1, 1, loss_line, 1.0, 100);
	sd_train_summarize(s, 6, &f, &sum, err, sizeof(err));
	ok(isnan(sum.compute_share) && sum.breakdown_why[0],
	   "no breakdown without the times: %s", sum.breakdown_why);
}

/* How many rows of the table match `name` (the rules, read here). */
static size_t count_matches(const struct sd_train_peak_row *table, size_t nt,
			    const char *name)
{
	size_t m = 0;
	for (size_t j = 0; j < nt; j++) {
		int all = 1;
		for (size_t h = 0; h < 3 && table[j].has[h]; h++)
			all &= strcasestr(name, table[j].has[h]) != NULL;
		for (size_t h = 0; h < 3 && table[j].lacks[h]; h++)
			all &= strcasestr(name, table[j].lacks[h]) == NULL;
		m += all;
	}
	return m;
}

static void test_peaks(void)
{
	static const struct {
		const char *name;
		const char *part;        /* NULL: unknown */
		enum sd_train_precision p;
		double tflops;           /* 0: the part has none */
	} rows[] = {
		{ "NVIDIA H100 80GB HBM3", "NVIDIA H100 SXM5", SD_TRAIN_BF16,
		  989.5 },
		{ "NVIDIA H100 80GB HBM3", "NVIDIA H100 SXM5", SD_TRAIN_TF32,
		  494.5 },
		{ "NVIDIA H100 80GB HBM3", "NVIDIA H100 SXM5", SD_TRAIN_FP8,
		  1979.0 },
		{ "NVIDIA H100 PCIe", "NVIDIA H100 PCIe", SD_TRAIN_BF16, 756.5 },
		{ "NVIDIA H100 PCIe", "NVIDIA H100 PCIe", SD_TRAIN_FP32, 51.0 },
		{ "NVIDIA H100 NVL", "NVIDIA H100 NVL", SD_TRAIN_BF16, 835.5 },
		{ "NVIDIA H200", "NVIDIA H200 SXM", SD_TRAIN_BF16, 989.5 },
		{ "NVIDIA H200 NVL", "NVIDIA H200 NVL", SD_TRAIN_TF32, 417.5 },
		{ "NVIDIA GH200 480GB", "NVIDIA GH200", SD_TRAIN_BF16, 989.5 },
		{ "NVIDIA A100-SXM4-80GB", "NVIDIA A100 SXM4", SD_TRAIN_BF16,
		  312.0 },
		{ "NVIDIA A100-SXM4-40GB", "NVIDIA A100 SXM4", SD_TRAIN_TF32,
		  156.0 },
		{ "NVIDIA A100-PCIE-40GB", "NVIDIA A100 PCIe", SD_TRAIN_FP32,
		  19.5 },
		{ "NVIDIA A100 80GB PCIe", "NVIDIA A100 PCIe", SD_TRAIN_BF16,
		  312.0 },
		{ "NVIDIA A100-SXM4-80GB", "NVIDIA A100 SXM4", SD_TRAIN_FP8, 0 },
		{ "NVIDIA B200", "NVIDIA B200", SD_TRAIN_BF16, 2250.0 },
		{ "NVIDIA GB200", "NVIDIA GB200 (its B200)", SD_TRAIN_BF16,
		  2500.0 },
		{ "AMD Instinct MI300X", "AMD Instinct MI300X", SD_TRAIN_BF16,
		  1307.4 },
		{ "nvidia h100 pcie", "NVIDIA H100 PCIe", SD_TRAIN_BF16, 756.5 },
		{ "CPU (Gloo TCP)", NULL, SD_TRAIN_FP32, 0 },
		{ "NVIDIA GeForce RTX 4090", NULL, SD_TRAIN_BF16, 0 },
	};
	size_t nt;
	const struct sd_train_peak_row *table = sd_train_peak_table(&nt);
	char err[256];
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct sd_train_peak pk;
		size_t matches = count_matches(table, nt, rows[i].name);
		const struct sd_train_peak_row *r = sd_train_peak_find(rows[i].name);
		int rc = sd_train_peak(rows[i].name, rows[i].p, NULL, &pk, err,
				       sizeof(err));
		if (!rows[i].part) {
			char want[160];
			snprintf(want, sizeof(want), "no peak for %s; give "
				 "--peak-tflops", rows[i].name);
			ok(!r && rc == SD_ERR_INVALID && strcmp(err, want) == 0,
			   "'%s' is not in the table: %s", rows[i].name, err);
			continue;
		}
		ok(r && strcmp(r->part, rows[i].part) == 0 && matches == 1,
		   "'%s' is the %s", rows[i].name, rows[i].part);
		if (rows[i].tflops > 0)
			ok(rc == SD_OK && pk.tflops == rows[i].tflops &&
			   pk.origin == SD_TRAIN_TABLE,
			   "'%s' %s peak %g TFLOP/s", rows[i].name,
			   sd_train_precision_name(rows[i].p), rows[i].tflops);
		else
			ok(rc == SD_ERR_INVALID && strstr(err, "no fp8 peak"),
			   "'%s' has no %s: %s", rows[i].name,
			   sd_train_precision_name(rows[i].p), err);
	}
	/* the rules are exclusive: each part's own name matches one row */
	int exclusive = 1;
	for (size_t k = 0; k < nt; k++) {
		size_t m = count_matches(table, nt, table[k].part);
		if (m != 1) {
			exclusive = 0;
			printf("# %s matches %zu rows\n", table[k].part, m);
		}
	}
	ok(exclusive, "each part's own name matches one row of the table");
	/* an override always wins */
	struct sd_train_fact o = { 123.0, SD_TRAIN_GIVEN };
	struct sd_train_peak pk;
	ok(sd_train_peak("NVIDIA H100 80GB HBM3", SD_TRAIN_BF16, &o, &pk, err,
			 sizeof(err)) == SD_OK && pk.tflops == 123.0 &&
	   pk.origin == SD_TRAIN_GIVEN, "an override wins over the table");
	ok(sd_train_peak("CPU (Gloo TCP)", SD_TRAIN_FP32, &o, &pk, err,
			 sizeof(err)) == SD_OK && pk.tflops == 123.0,
	   "an override gives a peak to a device the table lacks");
	enum sd_train_precision p;
	ok(sd_train_precision_parse("TF32", &p, err, sizeof(err)) == SD_OK &&
	   p == SD_TRAIN_TF32, "precision names parse");
	ok(sd_train_precision_parse("int4", &p, err, sizeof(err)) ==
		   SD_ERR_INVALID && strstr(err, "bf16, fp16, tf32, fp8 or fp32"),
	   "an unknown precision lists the names");

	/* shakedown-train(7) shows the same table, row for row */
	char path[512];
	snprintf(path, sizeof(path), "%s/man/shakedown-train.7.in",
		 SD_SOURCE_DIR);
	FILE *fm = fopen(path, "r");
	static char man[65536];
	size_t got = fm ? fread(man, 1, sizeof(man) - 1, fm) : 0;
	if (fm)
		fclose(fm);
	man[got] = '\0';
	int all = got > 0;
	for (size_t k = 0; k < nt; k++) {
		char line[160], num[5][16];
		for (int q = 0; q < SD_TRAIN_NPRECISIONS; q++) {
			if (table[k].tflops[q] > 0)
				snprintf(num[q], sizeof(num[q]), "%g",
					 table[k].tflops[q]);
			else
				snprintf(num[q], sizeof(num[q]), "-");
		}
		snprintf(line, sizeof(line), "\n%-24s%8s%8s%8s%8s%8s\n",
			 table[k].part, num[0], num[1], num[2], num[3], num[4]);
		if (!strstr(man, line)) {
			all = 0;
			printf("# not in %s:%s", path, line);
		}
	}
	ok(all, "shakedown-train(7) lists every row of the peak table");
}

static void test_flops(void)
{
	struct sd_train_facts f;
	double fpt;
	enum sd_train_origin o;
	char err[256];
	sd_train_facts_init(&f);
	fact(&f.params, 124e6, SD_TRAIN_GIVEN);
	fact(&f.layers, 12, SD_TRAIN_READ);
	fact(&f.width, 768, SD_TRAIN_READ);
	fact(&f.seq_len, 1024, SD_TRAIN_GIVEN);
	ok(sd_train_flops_per_token(&f, &fpt, &o, err, sizeof(err)) == SD_OK &&
	   fpt == 6 * 124e6 + 12.0 * 12 * 768 * 1024 && o == SD_TRAIN_DERIVED,
	   "GPT-2 small at 1024 tokens: %.0f FLOPs per token", fpt);
	f.layers.origin = SD_TRAIN_UNKNOWN;
	f.seq_len.origin = SD_TRAIN_UNKNOWN;
	ok(sd_train_flops_per_token(&f, &fpt, &o, err, sizeof(err)) ==
		   SD_ERR_INVALID && isnan(fpt) &&
	   strstr(err, "missing: layers, seq_len") &&
	   strstr(err, "give --layers, --seq-len or --flops-per-token"),
	   "missing facts are named: %s", err);
}

/* ---------------------------------------------------------------- */

/* A reference from one series. */
static void ref_of(struct sd_train_reference *ref, const char *config,
		   const struct sd_train_step *s, size_t n)
{
	struct sd_train_curve c = { "the curve", s, n };
	char err[256];
	if (sd_train_ref_create("ref", NULL, config, "test", &c, 1, ref, NULL, 0,
				err, sizeof(err)) != SD_OK)
		printf("# ref_of: %s\n", err);
}

static void test_compare(void)
{
	static struct sd_train_step r[NSTEPS_MAX], s[NSTEPS_MAX];
	struct sd_train_reference ref;
	struct sd_train_comparison c;
	char err[512];
	const char *cfg = "gpt2 layers=2 width=64";

	/* the reference: every step 1..200 on a line from 4.0 down */
	series(r, 200, 1, 1, loss_line, 0, 0);
	ref_of(&ref, cfg, r, 200);

	series(s, 150, 1, 1, loss_line, 0, 0);
	is_int(sd_train_compare(s, 150, cfg, &ref, NULL, &c, err, sizeof(err)),
	       SD_OK, "identical curve: compared");
	ok(c.verdict == SD_TRAIN_PASSED && c.diff_var == 0 && c.rmse == 0 &&
	   c.max_abs_diff == 0 && c.steps_compared == 100 && !c.note[0] &&
	   c.first_step == 1 && c.last_step == 100,
	   "identical curve: passes with variance 0 over the first 100 steps");

	for (size_t i = 0; i < 150; i++)
		s[i].loss += 0.05;
	sd_train_compare(s, 150, cfg, &ref, NULL, &c, err, sizeof(err));
	ok(c.verdict == SD_TRAIN_PASSED && c.diff_var < 1e-20 &&
	   fabs(c.rmse - 0.05) < 1e-12 && fabs(c.diff_mean - 0.05) < 1e-12,
	   "a curve shifted by 0.05: variance ~0 (%g), RMSE 0.05, passes",
	   c.diff_var);

	/* diverging from step 81: 0.3 above, more than 5% of ~3.1 */
	series(s, 150, 1, 1, loss_line, 0, 0);
	for (size_t i = 80; i < 150; i++)
		s[i].loss += 0.3;
	sd_train_compare(s, 150, cfg, &ref, NULL, &c, err, sizeof(err));
	ok(c.verdict == SD_TRAIN_FAILED && c.failing_steps == 20 &&
	   c.worst_step == 100 &&
	   strstr(c.reason, "loss at step 100 is 3.3, reference 3") &&
	   strstr(c.reason, "20 of 100 steps"),
	   "a diverging curve fails naming the step: %s", c.reason);
	is_dbl(c.diff_var, 0.2 * 0.09 - 0.06 * 0.06, 1e-12,
	       "its variance: 20 steps of 0.3 in 100");
	is_dbl(c.max_abs_diff, 0.3, 1e-12, "its largest |diff| 0.3");
	is_int(c.max_diff_step, 81, "first reached at step 81");

	/* noise inside the per-step band, too much variance */
	series(r, 100, 1, 1, loss_flat, 0, 0);
	sd_train_ref_free(&ref);
	ref_of(&ref, cfg, r, 100);
	series(s, 100, 1, 1, loss_flat, 0, 0);
	for (size_t i = 0; i < 100; i++)
		s[i].loss += i % 2 ? 0.12 : -0.12;
	sd_train_compare(s, 100, cfg, &ref, NULL, &c, err, sizeof(err));
	ok(c.verdict == SD_TRAIN_FAILED && c.failing_steps == 0 &&
	   fabs(c.diff_var - 0.0144) < 1e-12 &&
	   strstr(c.reason, "variance of the loss difference over 100 steps "
			    "is 0.0144, above 0.01"),
	   "noise of +-0.12 inside the band fails on variance: %s", c.reason);
	struct sd_train_tolerance tol;
	sd_train_tolerance_default(&tol);
	tol.var_tol = 0.02;
	sd_train_compare(s, 100, cfg, &ref, &tol, &c, err, sizeof(err));
	ok(c.verdict == SD_TRAIN_PASSED, "and passes with var_tol 0.02");

	/* fewer than 100 steps */
	series(s, 37, 1, 1, loss_flat, 0, 0);
	sd_train_compare(s, 37, cfg, &ref, NULL, &c, err, sizeof(err));
	ok(c.verdict == SD_TRAIN_PASSED && c.steps_compared == 37 &&
	   strstr(c.note, "compared 37 steps (steps 1-37), fewer than 100"),
	   "37 steps: says how many were compared: %s", c.note);

	/* a log every 10 steps against a reference of every step */
	series(r, 1000, 1, 1, loss_line, 0, 0);
	sd_train_ref_free(&ref);
	ref_of(&ref, cfg, r, 1000);
	series(s, 100, 10, 10, loss_line, 0, 0);
	sd_train_compare(s, 100, cfg, &ref, NULL, &c, err, sizeof(err));
	ok(c.verdict == SD_TRAIN_PASSED && c.steps_compared == 100 &&
	   c.first_step == 10 && c.last_step == 1000 && c.diff_var == 0,
	   "a 10-step cadence: steps 10..1000 matched by number");
	tol.var_tol = SD_TRAIN_VAR_TOL;
	tol.last_step = 100;
	sd_train_compare(s, 100, cfg, &ref, &tol, &c, err, sizeof(err));
	ok(c.steps_compared == 10 && c.last_step == 100 &&
	   strstr(c.note, "compared 10 steps"),
	   "and with last_step 100 only steps 10..100: %s", c.note);

	/* NaN and inf */
	series(s, 50, 1, 1, loss_line, 0, 0);
	s[11].loss = NAN;
	sd_train_compare(s, 50, cfg, &ref, NULL, &c, err, sizeof(err));
	ok(c.verdict == SD_TRAIN_NONFINITE && c.nonfinite_step == 12 &&
	   strcmp(c.reason, "loss became NaN at step 12") == 0,
	   "a NaN: %s", c.reason);
	s[11].loss = 1.0;
	s[40].loss = INFINITY;
	sd_train_compare(s, 50, cfg, &ref, NULL, &c, err, sizeof(err));
	ok(c.verdict == SD_TRAIN_NONFINITE &&
	   strcmp(c.reason, "loss became inf at step 41") == 0,
	   "an infinite loss: %s", c.reason);
	is_int(strcmp(sd_train_verdict_name(c.verdict), "nonfinite"), 0,
	       "its verdict's name is nonfinite");

	/* refusals */
	series(s, 50, 1, 1, loss_line, 0, 0);
	ok(sd_train_compare(s, 50, "gpt2 layers=4 width=64", &ref, NULL, &c,
			    err, sizeof(err)) == SD_ERR_INVALID &&
	   strstr(err, "reference 'ref' is for config 'gpt2 layers=2 "
		       "width=64', this run is 'gpt2 layers=4 width=64'"),
	   "another config is refused, naming both: %s", err);
	series(s, 10, 5000, 1, loss_line, 0, 0);
	ok(sd_train_compare(s, 10, cfg, &ref, NULL, &c, err, sizeof(err)) ==
		   SD_ERR_INVALID &&
	   strstr(err, "steps 5000-5009) is in reference 'ref' (steps 1-1000)"),
	   "no step in common: %s", err);
	sd_train_ref_free(&ref);
}

static double loss_a(long k) { return (double)k; }
static double loss_b(long k) { return (double)k + 1.0; }
static double loss_c(long k) { return (double)k + 2.0; }

static void test_reference(void)
{
	static struct sd_train_step a[20], b[20], c[20];
	struct sd_train_reference ref, back;
	char err[512], note[256];

	series(a, 10, 1, 1, loss_a, 0, 0);
	series(b, 10, 1, 1, loss_b, 0, 0);
	series(c, 11, 1, 1, loss_c, 0, 0); /* one more step */
	c[1].has &= ~SD_STEP_LOSS;         /* and step 2 without a loss */
	struct sd_train_curve cv[3] = {
		{ "run a", a, 10 }, { "run b", b, 10 }, { "run c", c, 11 },
	};
	int rc = sd_train_ref_create("gpt-small.cpu_1", "three runs",
				     "gpt2 layers=2", "runs a, b, c", cv, 3,
				     &ref, note, sizeof(note), err, sizeof(err));
	is_int(rc, SD_OK, "a reference from 3 curves");
	is_int(ref.n, 9, "9 steps in all three (step 2 and 11 are not)");
	ok(sd_train_ref_find(&ref, 2) == NULL && sd_train_ref_find(&ref, 11) ==
		   NULL, "steps 2 and 11 are left out");
	const struct sd_train_ref_step *st = sd_train_ref_find(&ref, 5);
	ok(st && st->mean == 6.0 && st->spread == 1.0 && st->n == 3,
	   "step 5: mean of 5, 6, 7 is 6, sample spread 1, n 3");
	ok(strstr(note, "9 steps in all 3 are used, 2 in only some are left out")
	   != NULL, "the note says the curves differ: %s", note);

	/* export, import: the same reference, bit for bit */
	for (size_t i = 0; i < ref.n; i++)
		ref.steps[i].mean += 1.0 / 3.0; /* not short in decimal */
	free(ref.config);
	ref.config = strdup("gpt2 layers=2\nwidth=64\tvocab=256 \\ x");
	char *text = NULL;
	is_int(sd_train_ref_format(&ref, &text, err, sizeof(err)), SD_OK,
	       "formatted");
	ok(text && strncmp(text, "# shakedown-reference 1\n# name: "
		     "gpt-small.cpu_1\n# config: gpt2 layers=2\\nwidth=64\\t"
		     "vocab=256 \\\\ x\n", 84) == 0,
	   "the header, escaped");
	rc = sd_train_ref_parse(text, strlen(text), "r.tsv", &back, err,
				sizeof(err));
	int same = rc == SD_OK && back.n == ref.n &&
		   strcmp(back.name, ref.name) == 0 &&
		   strcmp(back.config, ref.config) == 0 &&
		   strcmp(back.description, ref.description) == 0 &&
		   strcmp(back.source, ref.source) == 0 &&
		   strcmp(back.created_at, ref.created_at) == 0;
	for (size_t i = 0; same && i < ref.n; i++)
		same = back.steps[i].step == ref.steps[i].step &&
		       memcmp(&back.steps[i].mean, &ref.steps[i].mean,
			      sizeof(double)) == 0 &&
		       back.steps[i].spread == ref.steps[i].spread &&
		       back.steps[i].n == ref.steps[i].n;
	ok(same, "export then import gives the same reference, bit for bit%s%s",
	   rc ? ": " : "", rc ? err : "");
	sd_train_ref_free(&back);
	free(text);
	char path[512];
	snprintf(path, sizeof(path), "%s/ref.tsv", tmpdir);
	ok(sd_train_ref_save(&ref, path, err, sizeof(err)) == SD_OK &&
	   sd_train_ref_load(path, &back, err, sizeof(err)) == SD_OK &&
	   back.n == ref.n && back.steps[3].mean == ref.steps[3].mean,
	   "saved to a file and loaded back");
	sd_train_ref_free(&back);
	sd_train_ref_free(&ref);

	/* a curve with a NaN; one curve; no curve */
	series(a, 10, 1, 1, loss_a, 0, 0);
	a[6].loss = NAN;
	rc = sd_train_ref_create("x", NULL, "cfg", NULL, cv, 3, &ref, NULL, 0,
				 err, sizeof(err));
	ok(rc == SD_ERR_INVALID &&
	   strcmp(err, "run a has a NaN loss at step 7; a reference needs "
		       "finite losses") == 0, "a NaN is refused: %s", err);
	series(a, 10, 1, 1, loss_a, 0, 0);
	rc = sd_train_ref_create("x", NULL, "cfg", NULL, cv, 1, &ref, note,
				 sizeof(note), err, sizeof(err));
	ok(rc == SD_OK && ref.n == 10 && ref.steps[4].spread == 0 &&
	   ref.steps[4].n == 1 && ref.steps[4].mean == 5.0 && !note[0],
	   "one curve: spread 0, n 1");
	sd_train_ref_free(&ref);
	ok(sd_train_ref_create("bad name", NULL, "cfg", NULL, cv, 1, &ref, NULL,
			       0, err, sizeof(err)) == SD_ERR_INVALID &&
	   strstr(err, "only letters, digits"), "a bad name: %s", err);
	ok(sd_train_ref_create("x", NULL, "", NULL, cv, 1, &ref, NULL, 0, err,
			       sizeof(err)) == SD_ERR_INVALID &&
	   strstr(err, "needs the config"), "no config: %s", err);

	/* parse errors name FILE:LINE */
#define H "# shakedown-reference 1\n# name: r1\n# config: c\n"
#define C "step\tmean\tspread\tn\n"
	static const struct {
		const char *text, *err;
	} bad[] = {
		{ "hello\n", "r.tsv:1: not a shakedown reference" },
		{ "# shakedown-reference 2\n", "r.tsv:1: reference format 2; "
		  "this shakedown reads format 1" },
		{ H C "1\t2\t0\n", "r.tsv:5: expected 4 fields (step, mean, "
		  "spread, n), found 3" },
		{ H C "1\tx\t0\t1\n", "r.tsv:5: mean 'x' is not a finite number" },
		{ H C "1\tnan\t0\t1\n", "r.tsv:5: mean 'nan' is not a finite" },
		{ H C "1\t2\t-1\t1\n", "r.tsv:5: spread '-1' is not a finite "
		  "number >= 0" },
		{ H C "1\t2\t0\t0\n", "r.tsv:5: n '0' is not a count" },
		{ H C "1.5\t2\t0\t1\n", "r.tsv:5: step '1.5' is not a whole" },
		{ H C "2\t2\t0\t1\n1\t2\t0\t1\n", "r.tsv:6: step 1 is not after "
		  "step 2; steps must increase" },
		{ "# shakedown-reference 1\n# name: r1\n" C "1\t2\t0\t1\n",
		  "r.tsv: no '# config:' line" },
		{ "# shakedown-reference 1\n# config: c\n" C "1\t2\t0\t1\n",
		  "r.tsv: no '# name:' line" },
		{ H "1\t2\t0\t1\n", "r.tsv:4: expected a header line" },
		{ H, "r.tsv:3: no column line" },
		{ H C, "r.tsv:4: no steps after the column line" },
		{ "# shakedown-reference 1\n# name: r1\n# config: a\\qb\n",
		  "r.tsv:3: unknown escape '\\q'" },
		{ H "# name: r2\n", "r.tsv:4: a second 'name' line" },
		{ "# shakedown-reference 1\n# name: my ref\n",
		  "r.tsv:2: reference name 'my ref' may hold only" },
		{ "", "r.tsv: empty file" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		rc = sd_train_ref_parse(bad[i].text, strlen(bad[i].text),
					"r.tsv", &back, err, sizeof(err));
		ok(rc == SD_ERR_INVALID && strncmp(err, bad[i].err,
						   strlen(bad[i].err)) == 0,
		   "parse error: %s", err);
		if (rc != SD_ERR_INVALID ||
		    strncmp(err, bad[i].err, strlen(bad[i].err)) != 0)
			printf("#   want %s\n", bad[i].err);
	}
	/* what it accepts beyond its own output */
	static const char lenient[] =
		"# shakedown-reference 1\r\n# name: r1\r\n# config: c\r\n"
		"# a comment: with a colon\n# later_key: ignored\n\n"
		C "1 4.5   0.1 2\n\n# a comment among the steps\n3\t4\t0\t2\n";
	rc = sd_train_ref_parse(lenient, strlen(lenient), "r.tsv", &back, err,
				sizeof(err));
	ok(rc == SD_OK && back.n == 2 && back.steps[0].spread == 0.1 &&
	   strcmp(back.config, "c") == 0 && !back.description,
	   "CRLF, blanks, comments and unknown keys are accepted%s%s",
	   rc ? ": " : "", rc ? err : "");
	sd_train_ref_free(&back);
	ok(sd_train_ref_load("/nonexistent/r.tsv", &back, err, sizeof(err)) ==
		   SD_ERR_IO && strstr(err, "/nonexistent/r.tsv: cannot read it"),
	   "a missing file: %s", err);
#undef H
#undef C
}

/* ---------------------------------------------------------------- */

static int count_rows(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st = NULL;
	int n = -1;
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		n = sqlite3_column_int(st, 0);
	else
		printf("# %s: %s\n", sql, sqlite3_errmsg(db));
	sqlite3_finalize(st);
	return n;
}

static char *text_of(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st = NULL;
	char *s = NULL;
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
		s = strdup((const char *)sqlite3_column_text(st, 0));
	else
		printf("# %s: %s\n", sql, sqlite3_errmsg(db));
	sqlite3_finalize(st);
	return s;
}

/* The facts of the runs below. */
static void run_facts(struct sd_train_facts *f)
{
	sd_train_facts_init(f);
	fact(&f->devices, 2, SD_TRAIN_WORKLOAD);
	fact(&f->tokens_per_step, 4096, SD_TRAIN_WORKLOAD);
	fact(&f->params, 1e6, SD_TRAIN_WORKLOAD);
	fact(&f->layers, 2, SD_TRAIN_WORKLOAD);
	fact(&f->width, 64, SD_TRAIN_WORKLOAD);
	fact(&f->seq_len, 128, SD_TRAIN_WORKLOAD);
	fact(&f->warmup_steps, 3, SD_TRAIN_GIVEN);
	fact(&f->peak_tflops, 1.5, SD_TRAIN_MEASURED);
	snprintf(f->device_name, sizeof(f->device_name), "CPU (Gloo TCP)");
	f->device_name_origin = SD_TRAIN_WORKLOAD;
	f->precision = SD_TRAIN_FP32;
}

/* Record a run of n steps (loss f + bump, step time varying) through a
 * recorder; its uuid into uuid.  SD_OK or the failing status. */
static int record(const char *path, int flags, const char *kind,
		  const char *config, const struct sd_train_step *s, size_t n,
		  const struct sd_train_reference *ref, char uuid[37],
		  struct sd_train_summary *sum, char *err, size_t errlen)
{
	struct sd_train_rec *r = NULL;
	struct sd_train_facts f;
	struct sd_train_comparison c;
	char note[512];
	run_facts(&f);
	int rc = sd_train_rec_open(path, flags, &r, note, sizeof(note), err,
				   errlen);
	if (rc != SD_OK)
		return rc;
	struct sd_train_run_info info = {
		.kind = kind, .command_line = "shakedown train --local 2",
		.tool_version = "test", .backend = "gloo", .nranks = 2,
		.config = config, .facts = &f,
	};
	rc = sd_train_rec_begin(r, &info, err, errlen);
	/* in three batches, as a training loop would hand them over */
	for (size_t i = 0; i < n && rc == SD_OK; i += (n + 2) / 3) {
		size_t k = n - i < (n + 2) / 3 ? n - i : (n + 2) / 3;
		rc = sd_train_rec_steps(r, s + i, k, err, errlen);
	}
	int rc_steps = rc;
	sd_train_summarize(s, n, &f, sum, err, errlen);
	int judged = ref && sd_train_compare(s, n, config, ref, NULL, &c, err,
					     errlen) == SD_OK;
	struct sd_train_metric extra[1] = {
		{ "tgs", "tokens/s/device", 1234.5, "node02", 1 },
	};
	struct sd_train_end end = {
		.status = judged && c.verdict != SD_TRAIN_PASSED ? "failed"
								 : "passed",
		.exit_status = judged && c.verdict != SD_TRAIN_PASSED ? 1 : 0,
		.summary = sum, .cmp = judged ? &c : NULL,
		.reference_name = ref ? ref->name : NULL,
		.lines_unparsed = strcmp(kind, "ingest") == 0 ? 2 : -1,
		.extra = extra, .nextra = 1,
	};
	rc = sd_train_rec_finish(r, &end, err, errlen);
	if (rc == SD_OK && rc_steps != SD_OK)
		rc = rc_steps;
	snprintf(uuid, 37, "%s", sd_train_rec_uuid(r));
	sd_train_rec_close(r);
	return rc;
}

static double loss_db(long k) { return 5.0 / (1.0 + 0.05 * (double)k); }

static void test_db(void)
{
	static struct sd_train_step s[120], back[1];
	struct sd_train_summary sum;
	struct sd_train_reference ref;
	char path[512], err[4600], uuid[37], uuid2[37], uuid3[37];
	sqlite3 *db = NULL;
	const char *cfg = "gpt2 tiny";

	snprintf(path, sizeof(path), "%s/train.db", tmpdir);
	series(s, 120, 1, 1, loss_db, 0.01, 0);
	for (size_t i = 0; i < 120; i++) {
		s[i].step_s = 0.01 + 0.001 * (double)(i % 7);
		s[i].has |= SD_STEP_COMPUTE | SD_STEP_COMM | SD_STEP_OPTIM;
		s[i].compute_s = s[i].step_s * 0.7;
		s[i].comm_s = s[i].step_s * 0.2;
		s[i].optim_s = s[i].step_s * 0.05;
	}
	s[50].has |= SD_STEP_TOKENS; /* one step with its own count */
	s[50].tokens = 2048;
	int rc = record(path, 0, "train", cfg, s, 120, NULL, uuid, &sum, err,
			sizeof(err));
	is_int(rc, SD_OK, "a training run recorded%s%s", rc ? ": " : "",
	       rc ? err : "");
	ok(sd_db_open(path, 0, &db, err, sizeof(err)) == SD_OK,
	   "the database opens");

	/* the rows read back are the rows given */
	struct sd_train_step *got = NULL;
	size_t ng = 0;
	char *config = NULL, u[37];
	rc = sd_train_db_load_steps(db, uuid, &got, &ng, &config, u, err,
				    sizeof(err));
	int same = rc == SD_OK && ng == 120 && config &&
		   strcmp(config, cfg) == 0 && strcmp(u, uuid) == 0;
	for (size_t i = 0; same && i < ng; i++)
		same = got[i].step == s[i].step && got[i].loss == s[i].loss &&
		       got[i].step_s == s[i].step_s &&
		       got[i].comm_s == s[i].comm_s &&
		       got[i].has == s[i].has &&
		       (!(s[i].has & SD_STEP_TOKENS) ||
			got[i].tokens == s[i].tokens);
	ok(same, "the steps read back are the steps recorded, bit for bit%s%s",
	   rc ? ": " : "", rc ? err : "");
	free(got);
	free(config);

	/* tgs and TFLOPs recomputed from the rows agree with the summary */
	struct sd_train_recomputed rcm;
	rc = sd_train_db_recompute(db, uuid, &rcm, err, sizeof(err));
	is_int(rc, SD_OK, "recomputed from the rows");
	is_int(rcm.timed_rows, (long)sum.timed_rows, "the same timed rows (%ld)",
	       rcm.timed_rows);
	ok(rel_eq(rcm.tgs, sum.tgs, 1e-12) && rel_eq(rcm.tflops, sum.tflops,
						     1e-12) &&
	   rel_eq(rcm.mfu, sum.mfu, 1e-12),
	   "tgs %.9g, TFLOPs %.9g, MFU %.9g from the rows are the summary's",
	   rcm.tgs, rcm.tflops, rcm.mfu);
	ok(rcm.recorded_tgs == sum.tgs && rcm.recorded_tflops == sum.tflops &&
	   rcm.recorded_mfu == sum.mfu, "the recorded metric rows are the "
	   "summary's exactly");
	is_int(count_rows(db, "SELECT count(*) FROM runs WHERE run_kind = 'train' "
			  "AND status = 'passed' AND finished_at IS NOT NULL"),
	       1, "the run is kind train, passed and finished");
	is_int(count_rows(db, "SELECT count(*) FROM train_metrics WHERE "
			  "host = 'node02' AND rank = 1"), 1,
	       "a host's metric row is there");
	char *o = text_of(db, "SELECT fact_origins FROM train_runs");
	ok(o && strstr(o, "\"devices\":\"workload\"") &&
	   strstr(o, "\"warmup_steps\":\"given\"") &&
	   strstr(o, "\"peak_tflops\":\"measured\"") &&
	   strstr(o, "\"flops_per_token\":\"derived\""),
	   "where each fact came from: %s", o ? o : "");
	free(o);

	/* a reference from the run, stored; a second run judged against it */
	const char *refs1[] = { uuid };
	rc = sd_train_db_ref_from_runs(db, "tiny-cpu", "from one run", refs1, 1,
				       0, NULL, 0, err, sizeof(err));
	is_int(rc, SD_OK, "a reference made from the recorded run%s%s",
	       rc ? ": " : "", rc ? err : "");
	ok(sd_train_db_ref_from_runs(db, "tiny-cpu", NULL, refs1, 1, 0, NULL, 0,
				     err, sizeof(err)) == SD_ERR_INVALID &&
	   strstr(err, "reference 'tiny-cpu' exists; delete it first"),
	   "an existing name is refused: %s", err);
	rc = sd_train_db_ref_load(db, "tiny-cpu", &ref, err, sizeof(err));
	ok(rc == SD_OK && ref.n == 120 && ref.steps[7].mean == s[7].loss &&
	   strcmp(ref.config, cfg) == 0 && strncmp(ref.source, "runs ", 5) == 0,
	   "and read back: 120 steps, the run's losses, its config");
	sd_db_close(db);
	db = NULL;

	/* the second run diverges at step 90 */
	for (size_t i = 89; i < 120; i++)
		s[i].loss *= 1.2;
	rc = record(path, SD_TRAIN_REC_ATOMIC, "ingest", cfg, s, 120, &ref,
		    uuid2, &sum, err, sizeof(err));
	is_int(rc, SD_OK, "an ingested run recorded in one transaction");
	sd_db_open(path, 0, &db, err, sizeof(err));
	char q[512];
	snprintf(q, sizeof(q), "SELECT run_kind || ' ' || verdict || ' ' || "
		 "reference_name || ' ' || CAST(loss_max_diff_step AS INTEGER) "
		 "|| ' ' || lines_unparsed FROM train_summary_v WHERE uuid = '%s'",
		 uuid2);
	char *v = text_of(db, q);
	ok(v && strcmp(v, "ingest failed tiny-cpu 90 2") == 0,
	   "train_summary_v: %s", v ? v : "(none)");
	free(v);
	snprintf(q, sizeof(q), "SELECT count(*) FROM train_loss_v WHERE "
		 "run_uuid = '%s' AND ref_loss_mean IS NOT NULL AND "
		 "abs(loss_diff) > 0", uuid2);
	is_int(count_rows(db, q), 31, "train_loss_v: 31 steps differ from the "
	       "reference");

	/* a run of another config cannot join a reference */
	series(s, 120, 1, 1, loss_db, 0.01, 0);
	sd_db_close(db);
	db = NULL;
	rc = record(path, 0, "train", "gpt2 other", s, 120, NULL, uuid3, &sum,
		    err, sizeof(err));
	sd_db_open(path, 0, &db, err, sizeof(err));
	const char *refs2[] = { uuid, uuid3 };
	ok(sd_train_db_ref_from_runs(db, "mixed", NULL, refs2, 2, 0, NULL, 0,
				     err, sizeof(err)) == SD_ERR_INVALID &&
	   strstr(err, "are of different configs ('gpt2 tiny' and 'gpt2 other')"),
	   "runs of two configs are refused: %s", err);
	const char *refs3[] = { uuid, uuid2 };
	char note[256];
	ok(sd_train_db_ref_from_runs(db, "two", NULL, refs3, 2, 0, note,
				     sizeof(note), err, sizeof(err)) == SD_OK,
	   "a reference from two runs");
	struct sd_train_reference two;
	sd_train_db_ref_load(db, "two", &two, err, sizeof(err));
	ok(two.n == 120 && two.steps[100].n == 2 &&
	   rel_eq(two.steps[100].mean, ref.steps[100].mean * 1.1, 1e-12) &&
	   rel_eq(two.steps[100].spread, ref.steps[100].mean * 0.2 /
						 sqrt(2.0), 1e-9),
	   "its mean and sample spread at step 101");
	sd_train_ref_free(&two);

	/* export, import under a new name, replace, delete */
	char file[600];
	snprintf(file, sizeof(file), "%s/tiny.tsv", tmpdir);
	ok(sd_train_db_ref_export(db, "tiny-cpu", file, err, sizeof(err)) ==
		   SD_OK, "exported to a file");
	struct sd_train_reference imp;
	rc = sd_train_ref_load(file, &imp, err, sizeof(err));
	snprintf(imp.name, sizeof(imp.name), "tiny-imported");
	ok(rc == SD_OK && sd_train_db_ref_store(db, &imp, 0, err, sizeof(err)) ==
				  SD_OK, "imported under another name");
	sd_train_ref_free(&imp);
	is_int(count_rows(db, "SELECT count(*) FROM train_reference_steps s "
			  "JOIN train_references r ON r.id = s.reference_id "
			  "WHERE r.name = 'tiny-imported'"), 120,
	       "with its 120 steps");
	ok(sd_train_db_ref_store(db, &ref, 1, err, sizeof(err)) == SD_OK,
	   "replaced");
	ok(sd_train_db_ref_delete(db, "tiny-cpu", err, sizeof(err)) == SD_OK &&
	   count_rows(db, "SELECT count(*) FROM train_references WHERE name = "
			  "'tiny-cpu'") == 0, "deleted");
	ok(sd_train_db_ref_delete(db, "tiny-cpu", err, sizeof(err)) ==
		   SD_ERR_INVALID && strstr(err, "shakedown reference list"),
	   "deleting it again: %s", err);
	snprintf(q, sizeof(q), "SELECT reference_name || ' ' || "
		 "coalesce(reference_id, 'none') FROM train_runs t JOIN runs r "
		 "ON r.id = t.run_id WHERE r.uuid = '%s'", uuid2);
	v = text_of(db, q);
	ok(v && strcmp(v, "tiny-cpu none") == 0,
	   "a run judged against a deleted reference keeps its name: %s",
	   v ? v : "");
	free(v);
	is_int(count_rows(db, "SELECT count(*) FROM (" "SELECT r.name, "
			  "r.created_at FROM train_references r)"), 2,
	       "two references left");
	sqlite3_stmt *lst = NULL;
	ok(sqlite3_prepare_v2(db, sd_train_db_ref_list_sql, -1, &lst, NULL) ==
		   SQLITE_OK && sqlite3_step(lst) == SQLITE_ROW,
	   "the list query runs");
	sqlite3_finalize(lst);

	/* the report's part */
	int64_t id;
	sd_db_find_run(db, uuid2, &id, u, err, sizeof(err));
	char *json = NULL;
	rc = sd_train_db_run_json(db, id, &json, err, sizeof(err));
	sqlite3_stmt *jv = NULL;
	int valid = 0;
	if (json && sqlite3_prepare_v2(db, "SELECT json_valid(?1) AND "
				       "json_array_length(?1, '$.steps') = 120 "
				       "AND json_extract(?1, '$.verdict.result')"
				       " = 'failed' AND json_extract(?1, "
				       "'$.facts.devices.origin') = 'workload'",
				       -1, &jv, NULL) == SQLITE_OK) {
		sqlite3_bind_text(jv, 1, json, -1, SQLITE_STATIC);
		valid = sqlite3_step(jv) == SQLITE_ROW &&
			sqlite3_column_int(jv, 0) == 1;
	}
	sqlite3_finalize(jv);
	ok(rc == SD_OK && valid, "the run's JSON: its steps, verdict, facts");
	free(json);
	json = (char *)1;
	sd_db_find_run(db, "latest", &id, u, err, sizeof(err));
	sqlite3_exec(db, "INSERT INTO runs (uuid, started_at, status) VALUES "
		     "('c0c0c0c0-0000-4000-8000-000000000000', "
		     "'2030-01-01T00:00:00.000Z', 'passed')", NULL, NULL, NULL);
	sd_db_find_run(db, "c0c0", &id, u, err, sizeof(err));
	ok(sd_train_db_run_json(db, id, &json, err, sizeof(err)) == SD_OK &&
	   json == NULL, "a collective run has no training part");
	is_int(count_rows(db, "SELECT count(*) FROM runs WHERE run_kind = "
			  "'collectives'"), 1, "and is of kind collectives");
	struct sd_train_recomputed rc2;
	ok(sd_train_db_recompute(db, "c0c0", &rc2, err, sizeof(err)) ==
		   SD_ERR_INVALID && strstr(err, "is not a training run"),
	   "nor can it be recomputed: %s", err);
	sd_db_close(db);
	db = NULL;
	sd_train_ref_free(&ref);

	/* NaN and inf losses are kept as such */
	series(s, 5, 1, 1, loss_db, 0.01, 0);
	s[2].loss = NAN;
	s[3].loss = -INFINITY;
	rc = record(path, 0, "train", cfg, s, 5, NULL, uuid, &sum, err,
		    sizeof(err));
	sd_db_open(path, 0, &db, err, sizeof(err));
	rc = sd_train_db_load_steps(db, uuid, &got, &ng, NULL, NULL, err,
				    sizeof(err));
	ok(rc == SD_OK && ng == 5 && isnan(got[2].loss) &&
	   (got[2].has & SD_STEP_LOSS) && got[3].loss == -INFINITY,
	   "a NaN and a -inf loss come back as such");
	free(got);
	snprintf(q, sizeof(q), "SELECT nonfinite_step FROM train_runs t JOIN "
		 "runs r ON r.id = t.run_id WHERE r.uuid = '%s'", uuid);
	is_int(count_rows(db, q), 3, "the run's first non-finite step is 3");
	sd_db_close(db);
	db = NULL;

	/* incremental: the run is in the database while it runs */
	{
		struct sd_train_rec *ir = NULL;
		struct sd_train_facts f;
		char note[256], q2[256];
		run_facts(&f);
		struct sd_train_run_info info = { .kind = "train",
						  .config = cfg, .facts = &f };
		series(s, 20, 1, 1, loss_db, 0.01, 0);
		rc = sd_train_rec_open(path, 0, &ir, note, sizeof(note), err,
				       sizeof(err));
		rc |= sd_train_rec_begin(ir, &info, err, sizeof(err));
		rc |= sd_train_rec_steps(ir, s, 10, err, sizeof(err));
		sd_db_open(path, 0, &db, err, sizeof(err));
		snprintf(q2, sizeof(q2), "SELECT count(*) FROM train_steps t "
			 "JOIN runs r ON r.id = t.run_id WHERE r.uuid = '%s' "
			 "AND r.status = 'running'", sd_train_rec_uuid(ir));
		is_int(count_rows(db, q2), 10, "a running run's first 10 steps "
		       "are in the database");
		ok(rc == SD_OK && sd_train_rec_steps(ir, s + 5, 1, err,
						     sizeof(err)) ==
					  SD_ERR_INVALID &&
		   strstr(err, "step 6 follows step 10"),
		   "a step out of order is refused: %s", err);
		rc = sd_train_rec_steps(ir, s + 10, 10, err, sizeof(err));
		struct sd_train_end e = { .status = "cancelled",
					  .exit_status = 130,
					  .message = "interrupted" };
		rc |= sd_train_rec_finish(ir, &e, err, sizeof(err));
		snprintf(q2, sizeof(q2), "SELECT count(*) FROM train_steps t "
			 "JOIN runs r ON r.id = t.run_id WHERE r.uuid = '%s' "
			 "AND r.status = 'cancelled'", sd_train_rec_uuid(ir));
		is_int(count_rows(db, q2), 20, "and all 20 with its end");
		ok(rc == SD_OK && !sd_train_rec_incomplete(ir, note,
							   sizeof(note)),
		   "the record is whole");
		sd_train_rec_close(ir);
		sd_db_close(db);
		db = NULL;
	}

	/* recording into "none" records nothing and succeeds */
	rc = record("none", 0, "train", cfg, s, 5, NULL, uuid, &sum, err,
		    sizeof(err));
	is_int(rc, SD_OK, "recording into 'none' succeeds");

	/* a lock held past the busy timeout: nothing is lost */
	(void)back;
	sqlite3 *locker = NULL;
	sqlite3_open(path, &locker);
	sqlite3_exec(locker, "BEGIN IMMEDIATE", NULL, NULL, NULL);
	setenv("SHAKEDOWN_DB_BUSY_TIMEOUT_MS", "50", 1);
	struct sd_train_rec *r = NULL;
	rc = sd_train_rec_open(path, SD_TRAIN_REC_ATOMIC, &r, note, sizeof(note),
			       err, sizeof(err));
	if (rc != SD_OK) {
		/* opening needs the write lock itself: take it after */
		sqlite3_exec(locker, "ROLLBACK", NULL, NULL, NULL);
		rc = sd_train_rec_open(path, SD_TRAIN_REC_ATOMIC, &r, note,
				       sizeof(note), err, sizeof(err));
		sqlite3_exec(locker, "BEGIN IMMEDIATE", NULL, NULL, NULL);
	}
	struct sd_train_facts f;
	run_facts(&f);
	struct sd_train_run_info info = { .kind = "ingest", .config = cfg,
					  .facts = &f, .log_path = "x.log",
					  .log_format = "megatron" };
	series(s, 40, 10, 10, loss_db, 0.5, 8192);
	sd_train_rec_begin(r, &info, err, sizeof(err));
	sd_train_rec_steps(r, s, 40, err, sizeof(err));
	sd_train_summarize(s, 40, &f, &sum, err, sizeof(err));
	struct sd_train_end end = { .status = "passed", .summary = &sum,
				    .lines_unparsed = 0 };
	char locked_uuid[37];
	snprintf(locked_uuid, sizeof(locked_uuid), "%s", sd_train_rec_uuid(r));
	rc = sd_train_rec_finish(r, &end, err, sizeof(err));
	char msg[4600];
	int inc = sd_train_rec_incomplete(r, msg, sizeof(msg));
	ok(rc == SD_ERR_IO && inc && strstr(msg, "is incomplete: the run "
					    "itself, 40 steps, its end") &&
	   strstr(msg, ".pending.sql") && strstr(msg, "shakedown db recover"),
	   "a locked database: the run is not claimed as recorded: %s", msg);
	sd_train_rec_close(r);
	sqlite3_exec(locker, "ROLLBACK", NULL, NULL, NULL);
	sqlite3_close(locker);
	unsetenv("SHAKEDOWN_DB_BUSY_TIMEOUT_MS");
	/* named by the database's identity and the run, beside it */
	char jpath[700], dbid[37] = "";
	if (sd_db_open(path, 0, &db, err, sizeof(err)) == SD_OK) {
		sd_db_identity(db, dbid);
		sd_db_close(db);
	}
	sd_db_journal_name(NULL, path, dbid, locked_uuid, jpath,
			   sizeof(jpath));
	struct stat stt;
	ok(dbid[0] && stat(jpath, &stt) == 0 && strstr(msg, jpath),
	   "the journal is beside the database, named by it and the run, "
	   "as the message says: %s", jpath);
	/* the next recorder replays it */
	rc = sd_train_rec_open(path, 0, &r, note, sizeof(note), err,
			       sizeof(err));
	ok(rc == SD_OK && strstr(note, "replayed") && stat(jpath, &stt) != 0,
	   "the next recorder replays it: %s", note);
	sd_train_rec_close(r);
	sd_db_open(path, 0, &db, err, sizeof(err));
	rc = sd_train_db_load_steps(db, locked_uuid, &got, &ng, NULL, NULL, err,
				    sizeof(err));
	ok(rc == SD_OK && ng == 40 && got[39].step == 400 &&
	   fabs(got[39].loss - s[39].loss) <= 1e-14 * s[39].loss,
	   "the run and its 40 steps are in the database%s%s", rc ? ": " : "",
	   rc ? err : "");
	free(got);
	rc = sd_train_db_recompute(db, locked_uuid, &rcm, err, sizeof(err));
	ok(rc == SD_OK && rel_eq(rcm.tgs, sum.tgs, 1e-12) &&
	   rel_eq(rcm.recorded_tgs, sum.tgs, 1e-12),
	   "with its metrics: tgs %.6g", rcm.tgs);
	snprintf(q, sizeof(q), "SELECT status || ' ' || run_kind FROM runs WHERE "
		 "uuid = '%s'", locked_uuid);
	v = text_of(db, q);
	ok(v && strcmp(v, "passed ingest") == 0, "and its end: %s", v ? v : "");
	free(v);
	sd_db_close(db);
}

/* A reference's identity against a run's config, the band each kind is
 * judged by, and a series too short to judge. */
static void test_identity(void)
{
	static struct sd_train_step r[NSTEPS_MAX], s[NSTEPS_MAX];
	const char *run = "gpt2 layers=2 batch=8 seed=1 arith=fp32-cpu";
	char why[300];
	static const struct {
		const char *ref;
		enum sd_train_ref_match want;
		const char *why;
	} rows[] = {
		{ "gpt2 layers=2 batch=8 seed=1 arith=fp32-cpu",
		  SD_REF_SAME_ARITH, "the same workload, seed 1 and fp32-cpu" },
		{ "gpt2 layers=2 batch=8 seed=1 arith=bf16-gpu",
		  SD_REF_OTHER_ARITH, "fp32-cpu, the reference's bf16-gpu" },
		{ "gpt2 layers=2 batch=8", SD_REF_OTHER_ARITH,
		  "the reference does not say its seed or arithmetic" },
		{ "gpt2 layers=2 batch=8 seed=2 arith=fp32-cpu",
		  SD_REF_OTHER_SEED, "seed 1, the reference's 2" },
		{ "gpt2 layers=2 batch=16 seed=1 arith=fp32-cpu",
		  SD_REF_OTHER_WORKLOAD, "another workload" },
		{ "arith=fp32-cpu seed=1 gpt2 layers=2 batch=8",
		  SD_REF_SAME_ARITH, "the same workload, seed 1 and fp32-cpu" },
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		enum sd_train_ref_match m =
			sd_train_ref_identity(rows[i].ref, run, why,
					      sizeof(why));
		ok(m == rows[i].want && strcmp(why, rows[i].why) == 0,
		   "identity of '%s': %s", rows[i].ref, why);
	}

	struct sd_train_tolerance t;
	sd_train_tolerance_for(1, "fp32-cpu", 2.6e-8, &t);
	ok(fabs(t.abs_tol - 2.6e-7) < 1e-20 && t.rel_tol == 0 &&
	   fabs(t.var_tol - 2.6e-7 * 2.6e-7) < 1e-25 && t.require_steps &&
	   t.same_arith && strstr(t.says, "same arithmetic (fp32 on a CPU): "
				  "each step within 2.6e-07 nat, 10 x the "
				  "largest difference of healthy runs"),
	   "same arithmetic on a CPU: 10 x the reference's healthy spread, %s",
	   t.says);
	sd_train_tolerance_for(1, "fp32-cpu", 0, &t);
	ok(t.abs_tol == SD_TRAIN_SAME_ABS_TOL && t.same_arith &&
	   strstr(t.says, "not measured"),
	   "a reference not measured: the band above every measurement, said");
	sd_train_tolerance_for(1, "bf16-gpu", 0, &t);
	ok(t.rel_tol == SD_TRAIN_REL_TOL && !t.same_arith &&
	   strstr(t.says, "not measured yet"),
	   "same arithmetic on a GPU: not measured, the other band, said");
	sd_train_tolerance_for(0, "fp32-cpu", 2.6e-8, &t);
	ok(t.rel_tol == SD_TRAIN_REL_TOL && t.var_tol == SD_TRAIN_VAR_TOL &&
	   strstr(t.says, "another machine or precision"),
	   "another arithmetic: the other band");

	/* a corrupted curve 2e-6 off in the same arithmetic fails; 2e-7
	 * passes; 30 of 100 steps is not judged */
	struct sd_train_reference ref;
	struct sd_train_comparison c;
	char err[512];
	series(r, 100, 1, 1, loss_line, 0, 0);
	ref_of(&ref, run, r, 100);
	sd_train_tolerance_for(1, "fp32-cpu", 1e-7, &t);
	series(s, 100, 1, 1, loss_line, 0, 0);
	for (int i = 0; i < 100; i++)
		s[i].loss += 2e-7;
	ok(sd_train_compare(s, 100, run, &ref, &t, &c, err, sizeof(err)) ==
		   SD_OK && c.verdict == SD_TRAIN_PASSED,
	   "2e-7 off, the same arithmetic: passes");
	s[50].loss += 2e-6;
	ok(sd_train_compare(s, 100, run, &ref, &t, &c, err, sizeof(err)) ==
		   SD_OK && c.verdict == SD_TRAIN_FAILED &&
		   c.worst_step == 51,
	   "2e-6 off at one step: fails there (%s)", c.reason);
	ok(sd_train_compare(s, 30, run, &ref, &t, &c, err, sizeof(err)) ==
		   SD_OK && c.verdict == SD_TRAIN_NOT_JUDGED &&
		   strcmp(c.reason, "not judged: 30 of the 100 steps judged "
				    "(steps 1-100 of reference 'ref') ran; run "
				    "at least 100 steps") == 0 &&
		   strcmp(sd_train_verdict_name(c.verdict), "not judged") == 0,
	   "30 of 100 steps: not judged (%s)", c.reason);
	sd_train_tolerance_default(&t);
	ok(sd_train_compare(s, 30, run, &ref, &t, &c, err, sizeof(err)) ==
		   SD_OK && c.verdict == SD_TRAIN_PASSED && c.note[0],
	   "without require_steps (ingest) a short series is still judged");
	const char *seed2 = "gpt2 layers=2 batch=8 seed=2 arith=fp32-cpu";
	ok(sd_train_compare(s, 100, seed2, &ref, &t, &c, err, sizeof(err)) ==
		   SD_ERR_INVALID && strstr(err, "seed=2"),
	   "another seed's curve is refused by the comparison itself");
	sd_train_ref_free(&ref);

	/* the measured healthy spread: read, written back, refused when not
	 * a difference */
	static const char text[] = "# shakedown-reference 1\n# name: h\n"
				   "# config: gpt2 seed=1 arith=fp32-cpu\n"
				   "# healthy: 2.63e-08\nstep\tmean\tspread\tn\n"
				   "1\t5.5\t0\t1\n";
	char *back = NULL;
	ok(sd_train_ref_parse(text, sizeof(text) - 1, "h.ref", &ref, err,
			      sizeof(err)) == SD_OK &&
		   ref.healthy == 2.63e-08 &&
		   sd_train_ref_format(&ref, &back, err, sizeof(err)) == SD_OK &&
		   strstr(back, "# healthy: 2.63e-08\n"),
	   "a reference's healthy spread: read and written back");
	free(back);
	sd_train_ref_free(&ref);
	static const char bad[] = "# shakedown-reference 1\n# name: h\n"
				  "# config: gpt2\n# healthy: -1\n"
				  "step\tmean\tspread\tn\n1\t5.5\t0\t1\n";
	ok(sd_train_ref_parse(bad, sizeof(bad) - 1, "h.ref", &ref, err,
			      sizeof(err)) == SD_ERR_INVALID &&
		   strcmp(err, "h.ref:4: healthy '-1' must be the largest loss "
			       "difference of healthy runs, a number above 0") == 0,
	   "a healthy spread that is not one: refused, naming the line (%s)",
	   err);
	sd_train_ref_free(&ref);
}

int main(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "%s/unit_trainmetrics_XXXXXX",
		 getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR")
						       : "/tmp");
	if (!mkdtemp(tmpdir)) {
		printf("Bail out! cannot make a temporary folder\n");
		return 1;
	}
	test_throughput();
	test_breakdown();
	test_peaks();
	test_flops();
	test_compare();
	test_identity();
	test_reference();
	test_db();
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		printf("# could not remove %s\n", tmpdir);
	return done_testing();
}
