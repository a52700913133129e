/*
 * unit_train.c - the training workload's model and data (lib/train/):
 * every layer's backward against central finite differences, the whole
 * model's gradient on a tiny configuration, AdamW against a step worked
 * out by hand, bit-identical loss curves for one seed, data-parallel
 * gradients of 2 and 4 simulated ranks against 1 rank over the same
 * global batch, the Markov source's entropy and loss floor, the data
 * layout, the configuration checker's messages and the data file's
 * errors.
 *
 * Tolerances.  The kernels are fp32; the finite differences perturb an
 * fp32 input by h and difference an objective summed in double, so their
 * error is about fp32 rounding / h.  Each check compares a whole gradient
 * array: rel = |fd - analytic|_2 / |analytic|_2 must be at most the
 * bound stated at each call (1e-3 for the linear layers, 5e-3 for the
 * nonlinear ones and the whole model), with the largest relative error
 * seen printed as a diagnostic.
 */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shakedown/backend.h"
#include "tap.h"
#include "train/data.h"
#include "train/gpt.h"

/* ---- helpers -------------------------------------------------------- */

static uint64_t test_rng = 0x1234567ull;

static double urand(void) /* [0, 1) */
{
	uint64_t z = (test_rng += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	z ^= z >> 31;
	return (double)(z >> 11) / 9007199254740992.0;
}

static float frand(float lo, float hi)
{
	return (float)(lo + (hi - lo) * urand());
}

static void fill(float *x, size_t n, float lo, float hi)
{
	for (size_t i = 0; i < n; i++)
		x[i] = frand(lo, hi);
}

static double dot(const float *a, const float *w, size_t n)
{
	double s = 0;
	for (size_t i = 0; i < n; i++)
		s += (double)a[i] * w[i];
	return s;
}

/* |a - b|_2 / |b|_2 (b the analytic gradient; 0 when both are 0). */
static double rel_err(const double *fd, const float *an, size_t n)
{
	double d = 0, s = 0;
	for (size_t i = 0; i < n; i++) {
		d += (fd[i] - an[i]) * (fd[i] - an[i]);
		s += (double)an[i] * an[i];
	}
	return s > 0 ? sqrt(d / s) : sqrt(d);
}

/*
 * Central differences of obj() with respect to x[0..n): x[i] +- h, the
 * step actually taken in fp32 used as the denominator.
 */
typedef double (*objective_fn)(void *ctx);
static void finite_diff(double *out, float *x, size_t n, float h,
			objective_fn obj, void *ctx)
{
	for (size_t i = 0; i < n; i++) {
		float x0 = x[i], xp = x0 + h, xm = x0 - h;
		double fp, fm;
		x[i] = xp;
		fp = obj(ctx);
		x[i] = xm;
		fm = obj(ctx);
		x[i] = x0;
		out[i] = (fp - fm) / ((double)xp - (double)xm);
	}
}

static int contains(const char *s, const char *sub)
{
	return strstr(s, sub) != NULL;
}

/* ---- layers --------------------------------------------------------- */

struct enc_ctx {
	int B, T, C, V;
	int *tokens;
	float *wte, *wpe, *out, *w;
};

static double enc_obj(void *p)
{
	struct enc_ctx *c = p;
	sd_gpt_encoder_forward(c->out, c->tokens, c->wte, c->wpe, c->B, c->T,
			       c->C);
	return dot(c->out, c->w, (size_t)c->B * c->T * c->C);
}

static void test_encoder(void)
{
	struct enc_ctx c = { .B = 2, .T = 3, .C = 4, .V = 5 };
	int tokens[6] = { 0, 3, 3, 4, 1, 3 };
	size_t n = 2 * 3 * 4;
	float wte[20], wpe[12], out[24], w[24], dwte[20] = { 0 },
					       dwpe[12] = { 0 };
	double fd[20];

	c.tokens = tokens;
	c.wte = wte;
	c.wpe = wpe;
	c.out = out;
	c.w = w;
	fill(wte, 20, -1, 1);
	fill(wpe, 12, -1, 1);
	fill(w, n, -1, 1);
	sd_gpt_encoder_backward(dwte, dwpe, w, tokens, 2, 3, 4);
	finite_diff(fd, wte, 20, 1e-2f, enc_obj, &c);
	ok(rel_err(fd, dwte, 20) <= 1e-3, "encoder: dwte against finite "
	   "differences (rel %.2g <= 1e-3)", rel_err(fd, dwte, 20));
	finite_diff(fd, wpe, 12, 1e-2f, enc_obj, &c);
	ok(rel_err(fd, dwpe, 12) <= 1e-3, "encoder: dwpe against finite "
	   "differences (rel %.2g <= 1e-3)", rel_err(fd, dwpe, 12));
	ok(dwte[2 * 4] == 0 && dwte[2 * 4 + 3] == 0,
	   "encoder: a token absent from the batch gets no gradient");
}

struct ln_ctx {
	int N, C;
	float *in, *w, *b, *out, *mean, *rstd, *dw;
};

static double ln_obj(void *p)
{
	struct ln_ctx *c = p;
	sd_gpt_layernorm_forward(c->out, c->mean, c->rstd, c->in, c->w, c->b,
				 c->N, c->C);
	return dot(c->out, c->dw, (size_t)c->N * c->C);
}

static void test_layernorm(void)
{
	enum { N = 3, C = 24 };
	float in[N * C], w[C], b[C], out[N * C], mean[N], rstd[N], dout[N * C];
	float din[N * C] = { 0 }, dw[C] = { 0 }, db[C] = { 0 };
	double fd[N * C];
	struct ln_ctx c = { N, C, in, w, b, out, mean, rstd, dout };

	fill(in, N * C, -2, 2);
	fill(w, C, 0.5f, 1.5f);
	fill(b, C, -0.5f, 0.5f);
	fill(dout, N * C, -1, 1);
	ln_obj(&c);
	sd_gpt_layernorm_backward(din, dw, db, dout, in, w, mean, rstd, N, C);
	finite_diff(fd, in, N * C, 1e-3f, ln_obj, &c);
	ok(rel_err(fd, din, N * C) <= 5e-3, "layernorm: din against finite "
	   "differences (rel %.2g <= 5e-3)", rel_err(fd, din, N * C));
	finite_diff(fd, w, C, 1e-3f, ln_obj, &c);
	ok(rel_err(fd, dw, C) <= 5e-3, "layernorm: dw (rel %.2g <= 5e-3)",
	   rel_err(fd, dw, C));
	finite_diff(fd, b, C, 1e-3f, ln_obj, &c);
	ok(rel_err(fd, db, C) <= 1e-3, "layernorm: db (rel %.2g <= 1e-3)",
	   rel_err(fd, db, C));
	/* din accumulates: a second backward adds the same again */
	float din2[N * C];
	memcpy(din2, din, sizeof(din));
	sd_gpt_layernorm_backward(din2, dw, db, dout, in, w, mean, rstd, N, C);
	int twice = 1;
	for (int i = 0; i < N * C; i++)
		twice &= din2[i] == 2 * din[i];
	ok(twice, "layernorm: backward adds to din (the residual stream)");
}

struct mm_ctx {
	int N, IC, OC;
	float *in, *w, *bias, *out, *dout;
};

static double mm_obj(void *p)
{
	struct mm_ctx *c = p;
	sd_gpt_matmul_forward(c->out, c->in, c->w, c->bias, c->N, c->IC, c->OC);
	return dot(c->out, c->dout, (size_t)c->N * c->OC);
}

static void test_matmul(void)
{
	enum { N = 5, IC = 7, OC = 6 };
	float in[N * IC], w[OC * IC], bias[OC], out[N * OC], dout[N * OC];
	float din[N * IC], dw[OC * IC] = { 0 }, db[OC] = { 0 }, ones[N];
	double fd[OC * IC];
	struct mm_ctx c = { N, IC, OC, in, w, bias, out, dout };

	for (int i = 0; i < N; i++)
		ones[i] = 1;
	fill(in, N * IC, -1, 1);
	fill(w, OC * IC, -1, 1);
	fill(bias, OC, -1, 1);
	fill(dout, N * OC, -1, 1);
	sd_gpt_matmul_backward(din, dw, db, dout, in, w, ones, N, IC, OC);
	finite_diff(fd, in, N * IC, 1e-2f, mm_obj, &c);
	ok(rel_err(fd, din, N * IC) <= 1e-3,
	   "matmul: din against finite differences (rel %.2g <= 1e-3)",
	   rel_err(fd, din, N * IC));
	finite_diff(fd, w, OC * IC, 1e-2f, mm_obj, &c);
	ok(rel_err(fd, dw, OC * IC) <= 1e-3, "matmul: dw (rel %.2g <= 1e-3)",
	   rel_err(fd, dw, OC * IC));
	finite_diff(fd, bias, OC, 1e-2f, mm_obj, &c);
	ok(rel_err(fd, db, OC) <= 1e-3, "matmul: dbias (rel %.2g <= 1e-3)",
	   rel_err(fd, db, OC));
	/* forward against a plain triple loop */
	double worst = 0;
	sd_gpt_matmul_forward(out, in, w, bias, N, IC, OC);
	for (int r = 0; r < N; r++)
		for (int o = 0; o < OC; o++) {
			double s = bias[o];
			for (int i = 0; i < IC; i++)
				s += (double)in[r * IC + i] * w[o * IC + i];
			worst = fmax(worst, fabs(s - out[r * OC + o]));
		}
	ok(worst <= 1e-5, "matmul: forward is in W^T + b (max |diff| %.2g)",
	   worst);
}

struct att_ctx {
	int B, T, C, NH;
	float *qkv, *out, *att, *dout;
};

static double att_obj(void *p)
{
	struct att_ctx *c = p;
	sd_gpt_attention_forward(c->out, c->att, c->qkv, c->B, c->T, c->C,
				 c->NH);
	return dot(c->out, c->dout, (size_t)c->B * c->T * c->C);
}

static void test_attention(void)
{
	enum { B = 2, T = 5, C = 8, NH = 2, N = B * T };
	float qkv[N * 3 * C], out[N * C], att[B * NH * T * T], dout[N * C];
	float dqkv[N * 3 * C], scratch[T * T];
	double fd[N * 3 * C];
	struct att_ctx c = { B, T, C, NH, qkv, out, att, dout };

	fill(qkv, N * 3 * C, -1.5f, 1.5f);
	fill(dout, N * C, -1, 1);
	att_obj(&c);
	sd_gpt_attention_backward(dqkv, scratch, dout, qkv, att, B, T, C, NH);
	finite_diff(fd, qkv, N * 3 * C, 1e-3f, att_obj, &c);
	ok(rel_err(fd, dqkv, N * 3 * C) <= 5e-3,
	   "attention: dqkv against finite differences (rel %.2g <= 5e-3)",
	   rel_err(fd, dqkv, N * 3 * C));

	/* causal: position t's output does not move with a later key */
	float before[N * C];
	att_obj(&c);
	memcpy(before, out, sizeof(out));
	qkv[(0 * T + 3) * 3 * C + C + 1] += 1.0f; /* key of b0 t3 */
	att_obj(&c);
	int same = 1;
	for (int t = 0; t < 3; t++)
		for (int i = 0; i < C; i++)
			same &= before[t * C + i] == out[t * C + i];
	ok(same, "attention: causal (a later key leaves earlier outputs)");
	int rows = 1;
	for (int r = 0; r < B * NH * T; r++) {
		double s = 0;
		for (int j = 0; j < T; j++)
			s += att[r * T + j];
		rows &= fabs(s - 1) < 1e-6 && (r % T == T - 1 ||
					       att[r * T + T - 1] == 0);
	}
	ok(rows, "attention: probabilities sum to 1, zero above the diagonal");
}

struct gelu_ctx {
	float *in, *out, *dout;
	size_t n;
};

static double gelu_obj(void *p)
{
	struct gelu_ctx *c = p;
	sd_gpt_gelu_forward(c->out, c->in, c->n);
	return dot(c->out, c->dout, c->n);
}

static void test_gelu(void)
{
	enum { n = 37 }; /* two full vectors and a tail */
	float in[n], out[n], dout[n], din[n];
	double fd[n], worst = 0;
	struct gelu_ctx c = { in, out, dout, n };

	fill(in, n, -5, 5);
	in[0] = 0;
	in[1] = -12;
	in[2] = 12;
	fill(dout, n, -1, 1);
	sd_gpt_gelu_forward(out, in, n);
	for (int i = 0; i < n; i++) {
		double x = in[i];
		double want = 0.5 * x *
			      (1 + tanh(sqrt(2 / M_PI) *
					(x + 0.044715 * x * x * x)));
		worst = fmax(worst, fabs(want - out[i]) / (1 + fabs(x)));
	}
	ok(worst <= 1e-6, "gelu: forward is 0.5 x (1 + tanh(...)) (max rel "
	   "%.2g <= 1e-6)", worst);
	sd_gpt_gelu_backward(din, in, dout, n);
	finite_diff(fd, in, n, 1e-3f, gelu_obj, &c);
	ok(rel_err(fd, din, n) <= 5e-3,
	   "gelu: backward against finite differences (rel %.2g <= 5e-3)",
	   rel_err(fd, din, n));
	sd_gpt_gelu_backward(dout, in, dout, n);
	ok(memcmp(dout, din, sizeof(din)) == 0, "gelu: backward in place");
	float nan_in = NAN, nan_out = 0;
	sd_gpt_gelu_forward(&nan_out, &nan_in, 1);
	ok(isnan(nan_out), "gelu: a NaN stays NaN");
}

struct ce_ctx {
	int N, V;
	float *logits, *probs;
	int *targets;
};

static double ce_obj(void *p)
{
	struct ce_ctx *c = p;
	return sd_gpt_crossentropy_forward(c->probs, c->logits, c->targets,
					   c->N, c->V);
}

static void test_crossentropy(void)
{
	enum { N = 4, V = 21 };
	float logits[N * V], probs[N * V], dlogits[N * V];
	int targets[N] = { 0, 20, 7, 7 };
	double fd[N * V], want = 0, loss;
	struct ce_ctx c = { N, V, logits, probs, targets };

	fill(logits, N * V, -4, 4);
	for (int r = 0; r < N; r++) {
		double mx = -1e30, s = 0;
		for (int j = 0; j < V; j++)
			mx = fmax(mx, logits[r * V + j]);
		for (int j = 0; j < V; j++)
			s += exp(logits[r * V + j] - mx);
		want += log(s) + mx - logits[r * V + targets[r]];
	}
	want /= N;
	loss = ce_obj(&c);
	is_dbl(loss, want, 1e-6, "cross-entropy: mean loss against double");
	sd_gpt_crossentropy_backward(dlogits, probs, targets, N, V, 1.0f / N);
	finite_diff(fd, logits, N * V, 1e-3f, ce_obj, &c);
	ok(rel_err(fd, dlogits, N * V) <= 5e-3,
	   "cross-entropy: dlogits against finite differences (rel %.2g <= "
	   "5e-3)", rel_err(fd, dlogits, N * V));
}

/* ---- the model ------------------------------------------------------ */

static const struct sd_gpt_config tiny = { .layers = 2, .width = 8,
					   .heads = 2, .seq_len = 5,
					   .vocab = 11, .micro_batch = 2,
					   .accum_steps = 1 };

struct model_ctx {
	struct sd_gpt *m;
	int *in, *tg;
};

static double model_obj(void *p)
{
	struct model_ctx *c = p;
	double loss = 0;
	sd_gpt_forward(c->m, c->in, c->tg, &loss, NULL, 0);
	return loss;
}

static void test_model_gradient(void)
{
	struct sd_gpt *m;
	char err[256];
	int in[10], tg[10], n;
	double loss;

	if (sd_gpt_create(&tiny, &m, err, sizeof(err)) != SD_OK) {
		ok(0, "create the tiny model: %s", err);
		return;
	}
	sd_gpt_init(m, 7);
	/* larger weights than GPT-2's init, so the gradient is well above
	 * fp32 noise everywhere */
	float *P = sd_gpt_params(m);
	const struct sd_gpt_tensor *t = sd_gpt_tensors(m, &n);
	for (int i = 0; i < n; i++)
		if (t[i].cols > 1)
			fill(P + t[i].offset, t[i].count, -0.5f, 0.5f);
		else
			fill(P + t[i].offset, t[i].count, 0.5f, 1.5f);
	for (int i = 0; i < 10; i++) {
		in[i] = (int)(urand() * 11);
		tg[i] = (int)(urand() * 11);
	}
	sd_gpt_zero_grad(m);
	sd_gpt_forward(m, in, tg, &loss, err, sizeof(err));
	sd_gpt_backward(m, NULL, NULL, err, sizeof(err));

	size_t np = sd_gpt_n_params(m);
	double *fd = malloc(np * sizeof(double)), worst = 0;
	float *g = sd_gpt_grads(m);
	struct model_ctx c = { m, in, tg };
	int bad = -1;
	finite_diff(fd, P, np, 1e-3f, model_obj, &c);
	for (int i = 0; i < n; i++) {
		double e = rel_err(fd + t[i].offset, g + t[i].offset,
				   t[i].count);
		if (e > worst)
			worst = e;
		if (e > 5e-3 && bad < 0)
			bad = i;
	}
	ok(bad < 0, "model: every tensor's gradient against finite "
	   "differences (worst rel %.2g <= 5e-3%s%s)", worst,
	   bad >= 0 ? "; first over: " : "", bad >= 0 ? t[bad].name : "");
	ok(rel_err(fd, g, np) <= 2e-3, "model: the whole gradient (rel %.2g "
	   "<= 2e-3)", rel_err(fd, g, np));
	free(fd);
	sd_gpt_destroy(m);
}

static int ready_log[256], ready_n;
static void on_ready(void *ctx, int idx)
{
	(void)ctx;
	if (ready_n < 256)
		ready_log[ready_n] = idx;
	ready_n++;
}

static void test_model_structure(void)
{
	struct sd_gpt_config def = SD_GPT_CONFIG_DEFAULT;
	struct sd_gpt *m;
	char err[256];
	int n, in[10] = { 0 }, tg[10] = { 1 };
	double loss;
	size_t L = tiny.layers, C = tiny.width;

	if (sd_gpt_create(&tiny, &m, err, sizeof(err)) != SD_OK) {
		ok(0, "create: %s", err);
		return;
	}
	const struct sd_gpt_tensor *t = sd_gpt_tensors(m, &n);
	size_t want = tiny.vocab * C + tiny.seq_len * C +
		      L * (12 * C * C + 13 * C) + 2 * C;
	is_int(sd_gpt_n_params(m), want, "param count V C + T C + L (12 C^2 "
	       "+ 13 C) + 2 C");
	is_int(sd_gpt_param_count(&tiny), want, "param count from the config");
	is_int(n, 2 + 12 * tiny.layers + 2, "tensor count");
	int contiguous = t[0].offset == 0;
	for (int i = 1; i < n; i++)
		contiguous &= t[i].offset == t[i - 1].offset + t[i - 1].count;
	ok(contiguous && t[n - 1].offset + t[n - 1].count == want,
	   "tensors tile the parameter array in table order");
	ok(!strcmp(t[0].name, "wte") && !strcmp(t[1].name, "wpe") &&
	   !strcmp(t[2].name, "h.0.ln_1.weight") &&
	   !strcmp(t[4].name, "h.0.attn.c_attn.weight") &&
	   t[4].rows == 3 * (int)C && t[4].cols == (int)C &&
	   !strcmp(t[25].name, "h.1.mlp.c_proj.bias") &&
	   !strcmp(t[n - 1].name, "ln_f.bias"),
	   "tensor names and shapes in forward order");
	ok(t[0].decay && t[4].decay && !t[2].decay && !t[5].decay,
	   "weight decay on 2-D tensors only");

	double P = (double)sd_gpt_param_count(&def);
	is_dbl(sd_gpt_flops_per_token(&def),
	       6 * P + 12.0 * def.layers * def.width * def.seq_len, 0.5,
	       "flops per token = 6 params + 12 layers width seq_len");

	sd_gpt_init(m, 1);
	ok(sd_gpt_backward(m, NULL, NULL, err, sizeof(err)) ==
		   SD_ERR_INVALID && contains(err, "forward"),
	   "backward without forward is refused: %s", err);
	in[3] = 11;
	ok(sd_gpt_forward(m, in, tg, &loss, err, sizeof(err)) ==
		   SD_ERR_INVALID && contains(err, "input token 11") &&
		   contains(err, "position 3"),
	   "a token outside the vocabulary is named: %s", err);
	in[3] = 0;
	tg[9] = -1;
	ok(sd_gpt_forward(m, in, tg, &loss, err, sizeof(err)) ==
		   SD_ERR_INVALID && contains(err, "target token -1"),
	   "a bad target is named: %s", err);
	tg[9] = 2;

	/* grad_ready: every tensor once, in reverse table order */
	sd_gpt_zero_grad(m);
	sd_gpt_forward(m, in, tg, &loss, err, sizeof(err));
	ready_n = 0;
	sd_gpt_backward(m, on_ready, NULL, err, sizeof(err));
	int order = ready_n == n;
	for (int i = 0; order && i < n; i++)
		order &= ready_log[i] == n - 1 - i;
	ok(order, "grad_ready: %d calls, every tensor once, reverse order",
	   ready_n);

	/* accumulation: a second backward of the same batch doubles */
	size_t np = sd_gpt_n_params(m);
	float *g1 = malloc(np * sizeof(float));
	memcpy(g1, sd_gpt_grads(m), np * sizeof(float));
	sd_gpt_forward(m, in, tg, &loss, err, sizeof(err));
	sd_gpt_backward(m, NULL, NULL, err, sizeof(err));
	/* not bit for bit: sgemm with beta 1 adds its K-blocks into the
	 * gradient one by one */
	double worst = 0, gmax = 0;
	for (size_t i = 0; i < np; i++) {
		worst = fmax(worst, fabs(sd_gpt_grads(m)[i] - 2.0 * g1[i]));
		gmax = fmax(gmax, fabs(g1[i]));
	}
	ok(worst <= 1e-6 * gmax, "backward adds into the gradients (twice = "
	   "2x within 1e-6 x max |g|: %.2g)", worst);
	sd_gpt_zero_grad(m);
	int zero = 1;
	for (size_t i = 0; i < np; i++)
		zero &= sd_gpt_grads(m)[i] == 0;
	ok(zero, "zero_grad zeroes");

	/* init: LN weights 1, biases 0, weights of std about 0.02 and the
	 * residual projections smaller */
	sd_gpt_init(m, 99);
	float *P0 = sd_gpt_params(m);
	int lnw = 1, bias0 = 1;
	for (size_t i = 0; i < C; i++) {
		lnw &= P0[t[2].offset + i] == 1 && P0[t[n - 2].offset + i] == 1;
		bias0 &= P0[t[3].offset + i] == 0 && P0[t[n - 1].offset + i] == 0;
	}
	ok(lnw && bias0, "init: LayerNorm weights 1, biases 0");
	free(g1);
	sd_gpt_destroy(m);

	/* init statistics on a bigger model */
	struct sd_gpt_config big = tiny;
	big.width = 64;
	big.layers = 2;
	big.vocab = 256;
	if (sd_gpt_create(&big, &m, err, sizeof(err)) == SD_OK) {
		sd_gpt_init(m, 5);
		t = sd_gpt_tensors(m, &n);
		const float *p = sd_gpt_params(m);
		double s2 = 0, r2 = 0;
		for (size_t i = 0; i < t[0].count; i++)
			s2 += (double)p[i] * p[i];
		for (size_t i = 0; i < t[6].count; i++) /* h.0.attn.c_proj */
			r2 += (double)p[t[6].offset + i] * p[t[6].offset + i];
		s2 = sqrt(s2 / t[0].count);
		r2 = sqrt(r2 / t[6].count);
		ok(fabs(s2 - 0.02) < 0.001 && fabs(r2 - 0.01) < 0.001,
		   "init: wte std %.4f (0.02), c_proj std %.4f (0.02 / sqrt(4) "
		   "= 0.01)", s2, r2);
		sd_gpt_destroy(m);
	}
}

static void test_nan(void)
{
	struct sd_gpt *m;
	char err[256];
	int in[10] = { 0 }, tg[10] = { 0 };
	double loss;
	if (sd_gpt_create(&tiny, &m, err, sizeof(err)) != SD_OK)
		return;
	sd_gpt_init(m, 3);
	sd_gpt_params(m)[sd_gpt_tensors(m, NULL)[4].offset + 5] = NAN;
	ok(sd_gpt_forward(m, in, tg, &loss, err, sizeof(err)) == SD_OK &&
		   isnan(loss),
	   "a NaN parameter makes the loss NaN (for the caller to stop)");
	sd_gpt_destroy(m);
}

static void test_adamw(void)
{
	struct sd_gpt *m;
	char err[256];
	struct sd_adamw o = { .lr = 0.1f, .beta1 = 0.9f, .beta2 = 0.99f,
			      .eps = 1e-8f, .weight_decay = 0.1f };
	float scale = 0.5f;
	int n;

	if (sd_gpt_create(&tiny, &m, err, sizeof(err)) != SD_OK)
		return;
	sd_gpt_init(m, 1);
	const struct sd_gpt_tensor *t = sd_gpt_tensors(m, &n);
	float *p = sd_gpt_params(m), *g = sd_gpt_grads(m);
	/* element 3 of wte (decayed) and of ln_f.bias (not decayed) */
	size_t idx[2] = { t[0].offset + 3, t[n - 1].offset + 3 };
	double want_p[2], mom[2] = { 0, 0 }, vel[2] = { 0, 0 };
	double g_step[2][2] = { { 0.4, -1.0 }, { 0.002, 0.3 } };
	int decay[2] = { 1, 0 };

	p[idx[0]] = 0.5f;
	p[idx[1]] = -0.25f;
	want_p[0] = 0.5;
	want_p[1] = -0.25;
	for (int s = 0; s < 2; s++) {
		for (int k = 0; k < 2; k++)
			g[idx[k]] = (float)g_step[s][k];
		sd_gpt_adamw_step(m, &o, scale);
		for (int k = 0; k < 2; k++) {
			/* PyTorch's AdamW, by hand, in double */
			double gg = g_step[s][k] * scale, tt = s + 1;
			double b1 = o.beta1, b2 = o.beta2;
			mom[k] = b1 * mom[k] + (1 - b1) * gg;
			vel[k] = b2 * vel[k] + (1 - b2) * gg * gg;
			if (decay[k])
				want_p[k] *= 1 - (double)o.lr * o.weight_decay;
			double mh = mom[k] / (1 - pow(b1, tt));
			double vh = vel[k] / (1 - pow(b2, tt));
			want_p[k] -= o.lr * mh / (sqrt(vh) + o.eps);
		}
	}
	is_dbl(p[idx[0]], want_p[0], 1e-6,
	       "adamw: two steps on a decayed weight as worked by hand");
	is_dbl(p[idx[1]], want_p[1], 1e-6,
	       "adamw: two steps on a bias (no decay) as worked by hand");
	is_int(sd_gpt_steps(m), 2, "adamw: step count");
	sd_gpt_destroy(m);
}

/* Train `steps` steps of cfg from seed on the Markov source; losses[s]
 * is the mean over the step's micro-batches. */
static int train(const struct sd_gpt_config *cfg, uint64_t seed, int steps,
		 double *losses, float **params_out)
{
	struct sd_gpt *m;
	struct sd_data *d;
	struct sd_adamw o = SD_ADAMW_DEFAULT;
	char err[256];
	size_t N = (size_t)cfg->micro_batch * cfg->seq_len;
	int *in = malloc(N * sizeof(int)), *tg = malloc(N * sizeof(int));

	if (sd_gpt_create(cfg, &m, err, sizeof(err)) != SD_OK ||
	    sd_data_open_markov(&d, cfg->vocab, 1, 4, cfg->seq_len, seed, err,
				sizeof(err)) != SD_OK) {
		printf("# %s\n", err);
		return -1;
	}
	sd_gpt_init(m, seed);
	for (int s = 0; s < steps; s++) {
		double sum = 0, loss;
		sd_gpt_zero_grad(m);
		for (int a = 0; a < cfg->accum_steps; a++) {
			sd_data_micro_batch(d, s, 0, 1, cfg->accum_steps, a,
					    cfg->micro_batch, in, tg, err,
					    sizeof(err));
			sd_gpt_forward(m, in, tg, &loss, err, sizeof(err));
			sd_gpt_backward(m, NULL, NULL, err, sizeof(err));
			sum += loss;
		}
		sd_gpt_adamw_step(m, &o, 1.0f / cfg->accum_steps);
		losses[s] = sum / cfg->accum_steps;
	}
	if (params_out) {
		*params_out = malloc(sd_gpt_n_params(m) * sizeof(float));
		memcpy(*params_out, sd_gpt_params(m),
		       sd_gpt_n_params(m) * sizeof(float));
	}
	free(in);
	free(tg);
	sd_data_close(d);
	sd_gpt_destroy(m);
	return 0;
}

static void test_reproducible(void)
{
	struct sd_gpt_config cfg = SD_GPT_CONFIG_TEST;
	enum { S = 12 };
	double a[S], b[S], c[S];
	float *pa = NULL, *pb = NULL;

	if (train(&cfg, 42, S, a, &pa) || train(&cfg, 42, S, b, &pb) ||
	    train(&cfg, 43, S, c, NULL)) {
		ok(0, "train the test config");
		return;
	}
	ok(memcmp(a, b, sizeof(a)) == 0,
	   "two runs with seed 42: loss curves bit for bit (%.6f ... %.6f)",
	   a[0], a[S - 1]);
	ok(memcmp(pa, pb, sd_gpt_param_count(&cfg) * sizeof(float)) == 0,
	   "two runs with seed 42: parameters bit for bit after %d steps", S);
	ok(memcmp(a, c, sizeof(a)) != 0, "seed 43 gives another curve");
	ok(a[S - 1] < a[0] - 0.05, "the loss falls (%.4f -> %.4f)", a[0],
	   a[S - 1]);
	is_dbl(a[0], log(256.0), 0.1, "the first loss is about ln 256");
	free(pa);
	free(pb);
}

/* The gradient of one step (before the optimizer) of R simulated ranks,
 * each over its shard with accum_steps A, summed over ranks. */
static void ddp_grads(const struct sd_gpt_config *base, int R, int A,
		      struct sd_data *d, float *sum, size_t np)
{
	struct sd_gpt_config cfg = *base;
	struct sd_gpt *m;
	char err[256];
	size_t N = (size_t)cfg.micro_batch * cfg.seq_len;
	int *in = malloc(N * sizeof(int)), *tg = malloc(N * sizeof(int));
	double loss;

	cfg.accum_steps = A;
	if (sd_gpt_create(&cfg, &m, err, sizeof(err)) != SD_OK)
		return;
	sd_gpt_init(m, 11);
	memset(sum, 0, np * sizeof(float));
	for (int r = 0; r < R; r++) {
		sd_gpt_zero_grad(m);
		for (int a = 0; a < A; a++) {
			sd_data_micro_batch(d, 3, r, R, A, a, cfg.micro_batch,
					    in, tg, err, sizeof(err));
			sd_gpt_forward(m, in, tg, &loss, err, sizeof(err));
			sd_gpt_backward(m, NULL, NULL, err, sizeof(err));
		}
		for (size_t i = 0; i < np; i++) /* the all_reduce's sum */
			sum[i] += sd_gpt_grads(m)[i];
	}
	free(in);
	free(tg);
	sd_gpt_destroy(m);
}

static void test_data_parallel(void)
{
	struct sd_gpt_config cfg = SD_GPT_CONFIG_TEST;
	struct sd_data *d;
	char err[256];
	size_t np = sd_gpt_param_count(&cfg);
	float *g1 = malloc(np * sizeof(float)), *gr = malloc(np * sizeof(float));

	cfg.micro_batch = 2;
	if (sd_data_open_markov(&d, cfg.vocab, 1, 4, cfg.seq_len, 5, err,
				sizeof(err)) != SD_OK)
		return;
	ddp_grads(&cfg, 1, 4, d, g1, np);
	for (int R = 2; R <= 4; R *= 2) {
		double worst = 0, gmax = 0;
		ddp_grads(&cfg, R, 4 / R, d, gr, np);
		for (size_t i = 0; i < np; i++) {
			worst = fmax(worst, fabs(gr[i] - g1[i]));
			gmax = fmax(gmax, fabs(g1[i]));
		}
		ok(worst <= 1e-5 * gmax,
		   "data-parallel: %d ranks x %d micro-batches sum to 1 rank's "
		   "gradient over the global batch (max |diff| %.2g <= 1e-5 x "
		   "max |g| %.2g)", R, 4 / R, worst, gmax);
	}
	free(g1);
	free(gr);
	sd_data_close(d);
}

/* ---- data ----------------------------------------------------------- */

static void test_markov(void)
{
	struct sd_data *d;
	char err[256];
	enum { V = 16, M = 4, T = 64, SAMPLES = 3000 };
	static long counts[V][V];
	int tok[T + 1], distinct = 1, support = 1;
	long total = 0;

	if (sd_data_open_markov(&d, V, 1, M, T, 77, err, sizeof(err)) !=
	    SD_OK) {
		ok(0, "open markov: %s", err);
		return;
	}
	for (int c = 0; c < V; c++) {
		const int32_t *s = sd_data_markov_successors(d, c);
		for (int i = 0; i < M; i++)
			for (int j = 0; j < i; j++)
				distinct &= s[i] != s[j];
	}
	ok(distinct, "markov: every context has %d distinct successors", M);
	for (int i = 0; i < SAMPLES; i++) {
		sd_data_sample(d, (uint64_t)i, tok);
		for (int t = 0; t < T; t++) {
			const int32_t *s = sd_data_markov_successors(d, tok[t]);
			int in = 0;
			for (int k = 0; k < M; k++)
				in |= s[k] == tok[t + 1];
			support &= in;
			counts[tok[t]][tok[t + 1]]++;
			total++;
		}
	}
	ok(support, "markov: every transition is one of its context's");
	double H = 0;
	for (int c = 0; c < V; c++) {
		long row = 0;
		for (int n = 0; n < V; n++)
			row += counts[c][n];
		for (int n = 0; n < V; n++)
			if (counts[c][n])
				H -= (double)counts[c][n] / total *
				     log((double)counts[c][n] / row);
	}
	is_dbl(H, log(M), 0.005, "markov: empirical entropy %.4f nats close "
	       "to ln %d = %.4f (%ld transitions)", H, M, log(M), total);
	is_dbl(sd_data_loss_floor(d), log(M), 1e-12,
	       "markov order 1: the loss floor is ln m");
	int a[T + 1], b[T + 1];
	sd_data_sample(d, 12345, a);
	sd_data_sample(d, 12345, b);
	ok(memcmp(a, b, sizeof(a)) == 0, "markov: a sample is a function of "
	   "its index");
	sd_data_sample(d, 12346, b);
	ok(memcmp(a, b, sizeof(a)) != 0, "markov: the next index differs");
	sd_data_close(d);

	/* order 2 */
	if (sd_data_open_markov(&d, 8, 2, 3, 10, 1, err, sizeof(err)) == SD_OK) {
		is_dbl(sd_data_loss_floor(d), (log(8) + 9 * log(3)) / 10, 1e-12,
		       "markov order 2: floor (ln V + (T-1) ln m) / T");
		int s[11], ok2 = 1;
		for (int i = 0; i < 200; i++) {
			sd_data_sample(d, i, s);
			for (int t = 2; t <= 10; t++) {
				const int32_t *succ = sd_data_markov_successors(
					d, (uint64_t)s[t - 2] * 8 + s[t - 1]);
				ok2 &= succ[0] == s[t] || succ[1] == s[t] ||
				       succ[2] == s[t];
			}
		}
		ok(ok2, "markov order 2: tokens follow the last two");
		sd_data_close(d);
	}
	is_dbl(sd_markov_loss_floor(256, 3, 4, 2), log(256), 1e-12,
	       "floor with seq_len < order: all uniform");
}

static void test_layout(void)
{
	struct sd_data *d;
	char err[256];
	enum { T = 8, B = 2, G = 8 };
	int ref[G / B][B * T], in[B * T], tg[B * T], tg_ref[G / B][B * T];
	int ok_union = 1, ok_same = 1;

	if (sd_data_open_markov(&d, 32, 1, 4, T, 9, err, sizeof(err)) != SD_OK)
		return;
	for (int a = 0; a < G / B; a++)
		sd_data_micro_batch(d, 5, 0, 1, G / B, a, B, ref[a], tg_ref[a],
				    err, sizeof(err));
	for (int R = 1; R <= 4; R *= 2) {
		int A = G / B / R;
		uint64_t seen[G];
		int n = 0;
		for (int r = 0; r < R; r++)
			for (int a = 0; a < A; a++) {
				for (int b = 0; b < B; b++)
					seen[n++] = sd_data_index(5, r, R, A,
								  a, B, b);
				sd_data_micro_batch(d, 5, r, R, A, a, B, in, tg,
						    err, sizeof(err));
				ok_same &= !memcmp(in, ref[r * A + a],
						   sizeof(in)) &&
					   !memcmp(tg, tg_ref[r * A + a],
						   sizeof(tg));
			}
		for (int i = 0; i < G; i++)
			ok_union &= seen[i] == (uint64_t)(5 * G + i);
	}
	ok(ok_union, "layout: 1, 2 and 4 ranks cover exactly step 5's global "
	   "batch (indices 40..47)");
	ok(ok_same, "layout: rank r micro-step a of R ranks is 1 rank's "
	   "micro-step r A + a, token for token");
	int s[T + 1];
	sd_data_sample(d, sd_data_index(5, 0, 1, 4, 0, B, 1), s);
	ok(!memcmp(s, ref[0] + T, T * sizeof(int)) &&
		   s[T] == tg_ref[0][2 * T - 1],
	   "layout: inputs are a sample's first seq_len tokens, targets the "
	   "next");
	ok(sd_data_micro_batch(d, 0, 2, 2, 1, 0, B, in, tg, err, sizeof(err)) ==
		   SD_ERR_INVALID && contains(err, "rank 2 of 2"),
	   "layout: a rank out of range is refused: %s", err);
	sd_data_close(d);
}

static void test_data_errors(void)
{
	struct sd_data *d = NULL;
	char err[512], path[64], small[64];
	int rc;

	rc = sd_data_open_markov(&d, 256, 3, 4, 8, 1, err, sizeof(err));
	ok(rc == SD_ERR_INVALID && contains(err, "order 3"),
	   "markov: a table too large is refused: %s", err);
	rc = sd_data_open_markov(&d, 16, 1, 17, 8, 1, err, sizeof(err));
	ok(rc == SD_ERR_INVALID && contains(err, "branching 17"),
	   "markov: branching above the vocab is refused: %s", err);

	snprintf(path, sizeof(path), "/nonexistent/shakedown-data-%d",
		 (int)getpid());
	rc = sd_data_open_file(&d, path, 256, 32, 1, err, sizeof(err));
	ok(rc == SD_ERR_IO && contains(err, path) &&
		   contains(err, "No such file"),
	   "file: a missing file is named: %s", err);
	rc = sd_data_open_file(&d, "/", 256, 32, 1, err, sizeof(err));
	ok(rc == SD_ERR_IO && contains(err, "'/'"),
	   "file: a directory is refused: %s", err);

	snprintf(small, sizeof(small), "/tmp/unit_train_%d.txt", (int)getpid());
	FILE *f = fopen(small, "w");
	fputs("0123456789", f);
	fclose(f);
	rc = sd_data_open_file(&d, small, 256, 32, 1, err, sizeof(err));
	ok(rc == SD_ERR_INVALID && contains(err, small) &&
		   contains(err, "10 bytes") && contains(err, "33"),
	   "file: too short for seq_len + 1 is named: %s", err);
	rc = sd_data_open_file(&d, small, 512, 4, 1, err, sizeof(err));
	ok(rc == SD_ERR_INVALID && contains(err, "vocab 512") &&
		   contains(err, "256"),
	   "file: vocab other than 256 is refused: %s", err);

	rc = sd_data_open_file(&d, small, 256, 9, 1, err, sizeof(err));
	ok(rc == SD_OK, "file: exactly seq_len + 1 bytes is enough");
	if (rc == SD_OK) {
		int s[10], ok_w = 1;
		for (int i = 0; i < 5; i++) {
			sd_data_sample(d, i, s);
			for (int t = 0; t < 10; t++)
				ok_w &= s[t] == '0' + t;
		}
		ok(ok_w, "file: the only window is the whole file");
		sd_data_close(d);
	}
	f = fopen(small, "w");
	for (int i = 0; i < 1000; i++)
		fputc('a' + i % 26, f);
	fclose(f);
	if (sd_data_open_file(&d, small, 256, 16, 3, err, sizeof(err)) ==
	    SD_OK) {
		int s[17], ok_w = 1;
		for (int i = 0; i < 50; i++) {
			sd_data_sample(d, i, s);
			for (int t = 1; t <= 16; t++)
				ok_w &= s[t] == 'a' + (s[t - 1] - 'a' + 1) % 26;
		}
		ok(ok_w, "file: samples are contiguous windows of bytes");
		ok(isnan(sd_data_loss_floor(d)), "file: no known loss floor");
		sd_data_close(d);
	}
	unlink(small);
}

static void test_config_check(void)
{
	static const struct {
		const char *what;
		struct sd_gpt_config cfg;
		int rc;
		const char *msg;
	} rows[] = {
		{ "default", SD_GPT_CONFIG_DEFAULT, SD_OK, "" },
		{ "test", SD_GPT_CONFIG_TEST, SD_OK, "" },
		{ "width % heads", { 2, 100, 3, 16, 256, 1, 1 }, SD_ERR_INVALID,
		  "width 100 is not a multiple of heads 3; use a width "
		  "divisible by heads (e.g. 99 or 102)" },
		{ "layers 0", { 0, 64, 2, 16, 256, 1, 1 }, SD_ERR_INVALID,
		  "layers 0 is out of range" },
		{ "heads 0", { 2, 64, 0, 16, 256, 1, 1 }, SD_ERR_INVALID,
		  "heads 0 is out of range" },
		{ "width 0", { 2, 0, 1, 16, 256, 1, 1 }, SD_ERR_INVALID,
		  "width 0 is out of range" },
		{ "seq_len 0", { 2, 64, 2, 0, 256, 1, 1 }, SD_ERR_INVALID,
		  "seq_len 0 is out of range" },
		{ "vocab 1", { 2, 64, 2, 16, 1, 1, 1 }, SD_ERR_INVALID,
		  "vocab 1 is out of range" },
		{ "micro_batch 0", { 2, 64, 2, 16, 256, 0, 1 }, SD_ERR_INVALID,
		  "micro_batch 0 is out of range" },
		{ "accum_steps 0", { 2, 64, 2, 16, 256, 1, 0 }, SD_ERR_INVALID,
		  "accum_steps 0 is out of range" },
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		char err[256] = "";
		int rc = sd_gpt_config_check(&rows[i].cfg, err, sizeof(err));
		ok(rc == rows[i].rc && contains(err, rows[i].msg),
		   "config check, %s: %s", rows[i].what,
		   rc == SD_OK ? "ok" : err);
	}
	struct sd_gpt *m = (void *)1;
	char err[256];
	struct sd_gpt_config bad = { 2, 100, 3, 16, 256, 1, 1 };
	ok(sd_gpt_create(&bad, &m, err, sizeof(err)) == SD_ERR_INVALID &&
		   m == NULL,
	   "create refuses a bad config and leaves no model");

	/* the named configs: the 1b shape holds what its comment says */
	struct sd_gpt_config c, def = SD_GPT_CONFIG_DEFAULT;
	ok(sd_gpt_config_named("default", &c, err, sizeof(err)) == SD_OK &&
		   memcmp(&c, &def, sizeof(c)) == 0,
	   "config by name: default is SD_GPT_CONFIG_DEFAULT");
	ok(sd_gpt_config_named("1b", &c, err, sizeof(err)) == SD_OK &&
		   sd_gpt_config_check(&c, err, sizeof(err)) == SD_OK,
	   "config by name: 1b passes the check");
	size_t p = sd_gpt_param_count(&c);
	printf("# 1b: %zu parameters, %.3f GFLOP per token\n", p,
	       sd_gpt_flops_per_token(&c) / 1e9);
	ok(p > 1000000000u && p < 1020000000u,
	   "1b: 1.00-1.02B parameters (%zu)", p);
	ok(c.micro_batch * c.seq_len * c.accum_steps == 16384,
	   "1b: 16,384 tokens a step and rank");
	ok(sd_gpt_config_named("2b", &c, err, sizeof(err)) == SD_ERR_INVALID &&
		   contains(err, "config '2b' is not built in: default"),
	   "config by name: an unknown name lists the names (%s)", err);
}

/* The global batch over any rank count that divides it. */
static void test_split(void)
{
	struct sd_gpt_config c = SD_GPT_CONFIG_TEST;
	char err[400];
	static const struct {
		long global;
		int ranks, micro_req, accum_req, micro, accum;
	} ok_rows[] = {
		{ 8, 1, 0, 0, 2, 4 }, { 8, 2, 0, 0, 2, 2 }, { 8, 4, 0, 0, 2, 1 },
		{ 8, 8, 0, 0, 1, 1 }, { 8, 1, 0, 4, 2, 4 }, { 8, 1, 8, 0, 8, 1 },
		{ 8, 2, 1, 4, 1, 4 }, { 1024, 1024, 0, 0, 1, 1 },
		{ 1024, 1, 0, 0, 2, 512 }, { 12, 4, 0, 0, 1, 3 },
	};
	int bad = 0;
	for (size_t i = 0; i < sizeof(ok_rows) / sizeof(ok_rows[0]); i++) {
		struct sd_gpt_config k = c;
		if (sd_gpt_split(ok_rows[i].global, ok_rows[i].ranks,
				 ok_rows[i].micro_req, ok_rows[i].accum_req, &k,
				 err, sizeof(err)) != SD_OK ||
		    k.micro_batch != ok_rows[i].micro ||
		    k.accum_steps != ok_rows[i].accum) {
			printf("# row %zu: %d x %d (%s)\n", i, k.micro_batch,
			       k.accum_steps, err);
			bad++;
		}
	}
	is_int(bad, 0, "a global batch splits over 1 to 1,024 ranks: micro-batch x accumulation x ranks is it");
	struct sd_gpt_config k = c;
	ok(sd_gpt_split(8, 3, 0, 0, &k, err, sizeof(err)) == SD_ERR_INVALID &&
	   strcmp(err, "the global batch of 8 sequences does not split over 3 "
		       "ranks: run on 1, 2, 4 or 8 ranks, or give --global-batch "
		       "a multiple of 3 (a reference is for one global batch: "
		       "make one with --save-ref)") == 0,
	   "8 over 3 ranks: refused, with the counts that work");
	ok(sd_gpt_split(8, 16, 0, 0, &k, err, sizeof(err)) == SD_ERR_INVALID,
	   "8 over 16 ranks: refused");
	ok(sd_gpt_split(8, 2, 3, 0, &k, err, sizeof(err)) == SD_ERR_INVALID &&
	   strstr(err, "each of 2 ranks takes 4 of the global batch's 8 "
		       "sequences a step, which --micro-batch must divide; give "
		       "--micro-batch 1, 2 or 4"),
	   "a micro-batch that does not divide the share: %s", err);
	ok(sd_gpt_split(8, 2, 2, 3, &k, err, sizeof(err)) == SD_ERR_INVALID,
	   "micro-batch x accumulation that is not the share: refused");
	is_int((int)sd_gpt_global_batch_named("default"), 32,
	       "the default config's global batch: 32");
	is_int((int)sd_gpt_global_batch_named("test"), 8,
	       "the test config's: 8");
}

int main(void)
{
	test_split();
	test_encoder();
	test_layernorm();
	test_matmul();
	test_attention();
	test_gelu();
	test_crossentropy();
	test_model_structure();
	test_model_gradient();
	test_nan();
	test_adamw();
	test_reproducible();
	test_data_parallel();
	test_markov();
	test_layout();
	test_data_errors();
	test_config_check();
	return done_testing();
}
