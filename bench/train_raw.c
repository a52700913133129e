/*
 * train_raw.c - the training workload's model alone (lib/train/), no
 * backend, no command: N optimizer steps on one process, printing the
 * loss of every step, tokens per second and the share of the time spent
 * in cblas_sgemm.  bench/train_bench.sh runs it beside bench/torch_gpt.py
 * (the same model and configuration in PyTorch eager); it is also how the
 * built-in default configuration in lib/train/gpt.h was sized.
 *
 *   bench/train_raw [--config default|test] [--steps N] [--warmup W]
 *                   [--ranks R] [--seed S] [--lr X] [--data FILE]
 *                   [--layers N] [--width N] [--heads N] [--seq-len N]
 *                   [--vocab N] [--micro-batch N] [--accum-steps N]
 *                   [--order K] [--branching M]
 *                   [--dump-init FILE] [--dump-tokens FILE] [--no-replay]
 *
 * --ranks R does the work of R data-parallel ranks in this one process
 * (every step runs R x accum_steps micro-batches, the global batch of R
 * ranks, and scales the gradient by 1 / (R x accum_steps)), so the
 * compute of a multi-rank run can be timed without a backend.  Timing:
 * each step's wall time (CLOCK_MONOTONIC) from its first forward to the
 * end of its optimizer step; the first `warmup` steps (at least one) are
 * not timed; tokens/s = tokens per step x timed steps / their total time
 * (and, steadier on a loaded host, tokens per step / the median step).
 * The sgemm replay at the end runs cblas_sgemm alone on the shapes of one
 * micro-batch's forward and backward, the same calls in the same order on
 * buffers of their own, so the model's in-step sgemm rate can be set
 * against OpenBLAS's on the same shapes (--no-replay skips it).
 * --dump-init writes the initial parameters (float32, table order) and
 * --dump-tokens every step's inputs and targets (int32), so that
 * torch_gpt.py can start from the same point on the same data.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shakedown/backend.h"
#include "blas.h"
#include "util.h"
#include "train/data.h"
#include "train/gpt.h"

static int parse_long(const char *s, long lo, long hi, long *out)
{
	char *end;
	long v;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}


/* One micro-batch's sgemm calls, as lib/train/gpt.c makes them. */
struct shape {
	char ta, tb;
	int M, N, K, count;
};

static int step_shapes(const struct sd_gpt_config *c, struct shape *s)
{
	int N = c->micro_batch * c->seq_len, C = c->width, T = c->seq_len;
	int hs = C / c->heads, L = c->layers, BH = c->micro_batch * c->heads;
	int n = 0;
#define S(a, b, m, nn, k, cnt)                                               \
	s[n++] = (struct shape){ a, b, m, nn, k, cnt }
	/* forward */
	S('N', 'T', N, 3 * C, C, L);
	S('N', 'T', T, T, hs, L * BH);
	S('N', 'N', T, hs, T, L * BH);
	S('N', 'T', N, C, C, L);
	S('N', 'T', N, 4 * C, C, L);
	S('N', 'T', N, C, 4 * C, L);
	S('N', 'T', N, c->vocab, C, 1);
	/* backward */
	S('N', 'N', N, C, c->vocab, 1);
	S('T', 'N', c->vocab, C, N, 1);
	S('N', 'N', N, 4 * C, C, L);
	S('T', 'N', C, 4 * C, N, L);
	S('N', 'N', N, C, 4 * C, L);
	S('T', 'N', 4 * C, C, N, L);
	S('N', 'N', N, C, C, L);
	S('T', 'N', C, C, N, L);
	S('N', 'T', T, T, hs, L * BH);
	S('T', 'N', T, hs, T, L * BH);
	S('N', 'N', T, hs, T, L * BH);
	S('T', 'N', T, hs, T, L * BH);
	S('N', 'N', N, C, 3 * C, L);
	S('T', 'N', 3 * C, C, N, L);
#undef S
	return n;
}

/* GFLOP/s of cblas_sgemm alone over the shapes, repeated for >= 1 s. */
static double sgemm_replay(const struct sd_gpt_config *c)
{
	struct shape s[32];
	int n = step_shapes(c, s);
	size_t most = 1;
	double flops = 0, t0, t = 0;
	float *A, *B, *Cm;
	long reps = 0;

	for (int i = 0; i < n; i++) {
		size_t a = (size_t)s[i].M * s[i].K, b = (size_t)s[i].K * s[i].N,
		       cc = (size_t)s[i].M * s[i].N;
		most = a > most ? a : most;
		most = b > most ? b : most;
		most = cc > most ? cc : most;
	}
	A = calloc(most, sizeof(float));
	B = calloc(most, sizeof(float));
	Cm = calloc(most, sizeof(float));
	if (!A || !B || !Cm)
		return 0;
	for (size_t i = 0; i < most; i++) {
		A[i] = (float)(i % 7) * 0.01f;
		B[i] = (float)(i % 5) * 0.01f;
	}
	t0 = sd_now();
	do {
		for (int i = 0; i < n; i++) {
			const struct shape *x = &s[i];
			int lda = x->ta == 'N' ? x->K : x->M;
			int ldb = x->tb == 'N' ? x->N : x->K;
			for (int k = 0; k < x->count; k++)
				sd_blas()->sgemm(SD_CBLAS_ROW_MAJOR,
						 x->ta == 'N' ? SD_CBLAS_NO_TRANS
							      : SD_CBLAS_TRANS,
						 x->tb == 'N' ? SD_CBLAS_NO_TRANS
							      : SD_CBLAS_TRANS,
						 x->M, x->N, x->K, 1.0f, A, lda,
						 B, ldb, 0.0f, Cm, x->N);
			flops += 2.0 * x->M * x->N * x->K * x->count;
		}
		reps++;
		t = sd_now() - t0;
	} while (t < 1.0);
	free(A);
	free(B);
	free(Cm);
	return flops / t * 1e-9;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: train_raw [--config default|test] [--steps N] "
		"[--warmup W] [--ranks R]\n"
		"                 [--seed S] [--lr X] [--data FILE] "
		"[--layers N] [--width N]\n"
		"                 [--heads N] [--seq-len N] [--vocab N] "
		"[--micro-batch N]\n"
		"                 [--accum-steps N] [--order K] "
		"[--branching M]\n"
		"                 [--dump-init FILE] [--dump-tokens FILE] "
		"[--no-replay]\n");
}

int main(int argc, char **argv)
{
	struct sd_gpt_config cfg = SD_GPT_CONFIG_DEFAULT;
	struct sd_gpt_config test_cfg = SD_GPT_CONFIG_TEST;
	struct sd_adamw opt = SD_ADAMW_DEFAULT;
	long steps = 20, warmup = 2, ranks = 1, seed = 1234;
	long order = SD_MARKOV_ORDER_DEFAULT;
	long branching = SD_MARKOV_BRANCHING_DEFAULT;
	const char *data_path = NULL, *dump_init = NULL, *dump_tokens = NULL;
	char err[512];
	struct sd_gpt *m = NULL;
	struct sd_data *d = NULL;
	FILE *tok_out = NULL;
	int rc, replay = 1;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		long x;
		int *field = NULL;
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			usage();
			return 0;
		}
		if (!strcmp(a, "--no-replay")) {
			replay = 0;
			continue;
		}
		if (!v) {
			fprintf(stderr, "train_raw: %s needs a value\n", a);
			return 2;
		}
		i++;
		if (!strcmp(a, "--config")) {
			if (!strcmp(v, "test"))
				cfg = test_cfg;
			else if (strcmp(v, "default")) {
				fprintf(stderr,
					"train_raw: unknown config '%s'; use "
					"default or test\n", v);
				return 2;
			}
			continue;
		}
		if (!strcmp(a, "--data")) {
			data_path = v;
			continue;
		}
		if (!strcmp(a, "--dump-init")) {
			dump_init = v;
			continue;
		}
		if (!strcmp(a, "--dump-tokens")) {
			dump_tokens = v;
			continue;
		}
		if (!strcmp(a, "--lr")) {
			char *end;
			opt.lr = strtof(v, &end);
			if (end == v || *end || !(opt.lr > 0)) {
				fprintf(stderr, "train_raw: bad --lr '%s'\n", v);
				return 2;
			}
			continue;
		}
		if (parse_long(v, 0, 1L << 40, &x) != 0) {
			fprintf(stderr, "train_raw: bad value '%s' for %s\n", v,
				a);
			return 2;
		}
		if (!strcmp(a, "--steps"))
			steps = x;
		else if (!strcmp(a, "--warmup"))
			warmup = x;
		else if (!strcmp(a, "--ranks"))
			ranks = x;
		else if (!strcmp(a, "--seed"))
			seed = x;
		else if (!strcmp(a, "--order"))
			order = x;
		else if (!strcmp(a, "--branching"))
			branching = x;
		else if (!strcmp(a, "--layers"))
			field = &cfg.layers;
		else if (!strcmp(a, "--width"))
			field = &cfg.width;
		else if (!strcmp(a, "--heads"))
			field = &cfg.heads;
		else if (!strcmp(a, "--seq-len"))
			field = &cfg.seq_len;
		else if (!strcmp(a, "--vocab"))
			field = &cfg.vocab;
		else if (!strcmp(a, "--micro-batch"))
			field = &cfg.micro_batch;
		else if (!strcmp(a, "--accum-steps"))
			field = &cfg.accum_steps;
		else {
			fprintf(stderr, "train_raw: unknown option '%s'\n", a);
			usage();
			return 2;
		}
		if (field)
			*field = x > 1 << 30 ? 1 << 30 : (int)x;
	}
	if (ranks < 1 || steps < 1) {
		fprintf(stderr, "train_raw: --ranks and --steps must be >= 1\n");
		return 2;
	}
	if (warmup < 1)
		warmup = 1; /* the first step is never timed */

	rc = sd_gpt_create(&cfg, &m, err, sizeof(err));
	if (rc == SD_OK)
		rc = data_path ? sd_data_open_file(&d, data_path, cfg.vocab,
						   cfg.seq_len, (uint64_t)seed,
						   err, sizeof(err))
			       : sd_data_open_markov(&d, cfg.vocab, (int)order,
						     (int)branching,
						     cfg.seq_len,
						     (uint64_t)seed, err,
						     sizeof(err));
	if (rc != SD_OK) {
		fprintf(stderr, "train_raw: %s\n", err);
		sd_gpt_destroy(m);
		return 1;
	}
	sd_gpt_init(m, (uint64_t)seed);
	if (dump_init) {
		FILE *f = fopen(dump_init, "wb");
		if (!f || fwrite(sd_gpt_params(m), sizeof(float),
				 sd_gpt_n_params(m), f) != sd_gpt_n_params(m) ||
		    fclose(f) != 0) {
			fprintf(stderr, "train_raw: cannot write %s\n",
				dump_init);
			return 1;
		}
	}
	if (dump_tokens && !(tok_out = fopen(dump_tokens, "wb"))) {
		fprintf(stderr, "train_raw: cannot write %s: %s\n", dump_tokens,
			strerror(errno));
		return 1;
	}

	size_t N = (size_t)cfg.micro_batch * cfg.seq_len;
	int *inputs = malloc(N * sizeof(int)), *targets = malloc(N * sizeof(int));
	double *times = calloc((size_t)steps, sizeof(double));
	long micro_per_step = ranks * cfg.accum_steps;
	double tokens_per_step = (double)micro_per_step * N;
	double timed_s = 0, mm_s = 0, mm_flops = 0;
	if (!inputs || !targets || !times) {
		fprintf(stderr, "train_raw: out of memory\n");
		return 1;
	}

	printf("# train_raw: layers=%d width=%d heads=%d seq_len=%d vocab=%d "
	       "micro_batch=%d accum_steps=%d ranks=%ld\n",
	       cfg.layers, cfg.width, cfg.heads, cfg.seq_len, cfg.vocab,
	       cfg.micro_batch, cfg.accum_steps, ranks);
	printf("# blas: %s\n", sd_blas()->impl);
	printf("# params=%zu flops_per_token=%.6g tokens_per_step=%.0f "
	       "loss_floor=%.6f data=%s\n",
	       sd_gpt_n_params(m), sd_gpt_flops_per_token(&cfg),
	       tokens_per_step, sd_data_loss_floor(d),
	       data_path ? data_path : "markov");
	for (long s = 0; s < steps; s++) {
		double t0 = sd_now(), loss_sum = 0;
		if (s == warmup)
			sd_gpt_matmul_stats_reset(m);
		sd_gpt_zero_grad(m);
		for (int r = 0; r < ranks; r++)
			for (int a = 0; a < cfg.accum_steps; a++) {
				double loss;
				sd_data_micro_batch(d, s, r, (int)ranks,
						    cfg.accum_steps, a,
						    cfg.micro_batch, inputs,
						    targets, err, sizeof(err));
				if (tok_out) {
					fwrite(inputs, sizeof(int), N, tok_out);
					fwrite(targets, sizeof(int), N, tok_out);
				}
				if (sd_gpt_forward(m, inputs, targets, &loss, err,
						   sizeof(err)) != SD_OK ||
				    sd_gpt_backward(m, NULL, NULL, err,
						    sizeof(err)) != SD_OK) {
					fprintf(stderr, "train_raw: %s\n", err);
					return 1;
				}
				loss_sum += loss;
			}
		sd_gpt_adamw_step(m, &opt, 1.0f / (float)micro_per_step);
		times[s] = sd_now() - t0;
		if (s >= warmup)
			timed_s += times[s];
		printf("step %ld loss %.6f time_ms %.3f\n", s + 1,
		       loss_sum / micro_per_step, times[s] * 1e3);
	}
	sd_gpt_matmul_stats(m, &mm_s, &mm_flops);
	if (tok_out && fclose(tok_out) != 0) {
		fprintf(stderr, "train_raw: cannot write %s\n", dump_tokens);
		return 1;
	}
	if (steps > warmup) {
		long n = steps - warmup;
		qsort(times + warmup, (size_t)n, sizeof(double), cmp_double);
		printf("timed_steps %ld\n", n);
		printf("step_ms_mean %.3f\n", timed_s / n * 1e3);
		printf("step_ms_median %.3f\n", times[warmup + n / 2] * 1e3);
		printf("tokens_per_s %.1f\n", tokens_per_step * n / timed_s);
		printf("tokens_per_s_median_step %.1f\n",
		       tokens_per_step / times[warmup + n / 2]);
		printf("model_gflops %.2f\n", sd_gpt_flops_per_token(&cfg) *
						      tokens_per_step * n /
						      timed_s * 1e-9);
		printf("matmul_share %.3f\n", mm_s / timed_s);
		printf("matmul_gflops %.2f\n", mm_flops / mm_s * 1e-9);
		if (replay)
			printf("sgemm_replay_gflops %.2f\n", sgemm_replay(&cfg));
	}
	printf("total_s %.3f\n", timed_s);
	free(inputs);
	free(targets);
	free(times);
	sd_data_close(d);
	sd_gpt_destroy(m);
	if (fflush(stdout) != 0 || ferror(stdout))
		return 1;
	return 0;
}
