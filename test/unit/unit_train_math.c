/*
 * unit_train_math.c - the per-element arithmetic of the training
 * workload's GPU kernels (plugins/nccl/train_math.h), built here with the
 * host compiler, against lib/train/gpt.c's CPU kernels: GELU forward and
 * backward, LayerNorm forward and backward composed from the element
 * bodies (rows of 37 and 64, so the CPU's vector and tail paths both
 * count), the cross-entropy gradient, the softmax gradient against
 * central finite differences, two AdamW steps over a whole model, the
 * bf16 rounding (nearest even, NaN kept), and sd_gpt_init_params() (the
 * GPU path's initial weights) against sd_gpt_init() bit for bit.  What
 * the kernels do around these bodies (the reductions, the GEMMs, the
 * launch shapes) runs only on a GPU: test/gpu/check.sh.
 *
 * Tolerances: the CPU kernels take e^x from their own polynomial (within
 * 2 ulp of expf) and sum in a different order, so the element bodies
 * match them to a relative 1e-5 (stated per check), not bit for bit.
 */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shakedown/backend.h"
#include "tap.h"
#include "train/gpt.h"
#include "train_math.h"

static uint64_t rs = 0x2545f4914f6cdd1dull;

static float frand(float lo, float hi)
{
	uint64_t z = (rs += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	z ^= z >> 31;
	return (float)(lo + (hi - lo) * ((double)(z >> 11) / 9007199254740992.0));
}

/* the largest |a - b| / max(|b|, floor) */
static double max_rel(const float *a, const float *b, size_t n, double floor)
{
	double w = 0;
	for (size_t i = 0; i < n; i++) {
		double d = fabs((double)a[i] - b[i]);
		double s = fabs((double)b[i]) > floor ? fabs((double)b[i]) : floor;
		if (!(d / s <= w))
			w = d / s;
	}
	return w;
}

static void test_gelu(void)
{
	enum { n = 4001 };
	static float x[n], d[n], cpu[n], gpu[n];
	for (int i = 0; i < n; i++) {
		x[i] = -8.0f + 16.0f * i / (n - 1);
		d[i] = frand(-2, 2);
	}
	sd_gpt_gelu_forward(cpu, x, n);
	for (int i = 0; i < n; i++)
		gpu[i] = sd_tm_gelu(x[i]);
	double e = max_rel(gpu, cpu, n, 1e-3);
	ok(e <= 1e-5, "gelu forward against gpt.c on [-8, 8] (rel %.2g <= 1e-5)",
	   e);
	sd_gpt_gelu_backward(cpu, x, d, n);
	for (int i = 0; i < n; i++)
		gpu[i] = sd_tm_gelu_grad(x[i], d[i]);
	e = max_rel(gpu, cpu, n, 1e-3);
	ok(e <= 1e-5, "gelu backward against gpt.c (rel %.2g <= 1e-5)", e);
}

/* one row as k_layernorm_fwd / _bwd compose it, in double-free fp32 */
static void ln_row_fwd(float *y, float *mean, float *rstd, const float *x,
		       const float *w, const float *b, int C)
{
	float s = 0, q = 0;
	for (int i = 0; i < C; i++)
		s += x[i];
	float mu = s / C;
	for (int i = 0; i < C; i++)
		q += (x[i] - mu) * (x[i] - mu);
	float r = sd_tm_ln_rstd(q, C);
	for (int i = 0; i < C; i++)
		y[i] = sd_tm_ln_out(x[i], mu, r, w[i], b[i]);
	*mean = mu;
	*rstd = r;
}

static void ln_row_bwd(float *dx, float *dw, float *db, const float *dy,
		       const float *x, const float *w, float mu, float r, int C)
{
	float sd = 0, sdn = 0;
	for (int i = 0; i < C; i++) {
		float d = dy[i] * w[i];
		sd += d;
		sdn += d * (x[i] - mu) * r;
	}
	sd /= C;
	sdn /= C;
	for (int i = 0; i < C; i++) {
		db[i] += dy[i];
		dw[i] += dy[i] * (x[i] - mu) * r;
		dx[i] += sd_tm_ln_dx(x[i], dy[i], w[i], mu, r, sd, sdn);
	}
}

static void test_layernorm(int C)
{
	enum { N = 5, CMAX = 64 };
	float x[N * CMAX], w[CMAX], b[CMAX], dy[N * CMAX];
	float y1[N * CMAX], y2[N * CMAX], m1[N], m2[N], r1[N], r2[N];
	float dx1[N * CMAX] = { 0 }, dx2[N * CMAX] = { 0 };
	float dw1[CMAX] = { 0 }, dw2[CMAX] = { 0 }, db1[CMAX] = { 0 },
	      db2[CMAX] = { 0 };
	for (int i = 0; i < N * C; i++) {
		x[i] = frand(-3, 3) + 0.5f;
		dy[i] = frand(-1, 1);
	}
	for (int i = 0; i < C; i++) {
		w[i] = frand(0.5f, 1.5f);
		b[i] = frand(-0.2f, 0.2f);
	}
	sd_gpt_layernorm_forward(y1, m1, r1, x, w, b, N, C);
	for (int r = 0; r < N; r++)
		ln_row_fwd(y2 + r * C, &m2[r], &r2[r], x + r * C, w, b, C);
	double e = max_rel(y2, y1, (size_t)N * C, 1e-2);
	double em = fmax(max_rel(m2, m1, N, 1e-2), max_rel(r2, r1, N, 1e-2));
	ok(e <= 1e-5 && em <= 1e-5, "layernorm forward, C %d, against gpt.c "
	   "(out rel %.2g, mean/rstd rel %.2g <= 1e-5)", C, e, em);
	sd_gpt_layernorm_backward(dx1, dw1, db1, dy, x, w, m1, r1, N, C);
	for (int r = 0; r < N; r++)
		ln_row_bwd(dx2 + r * C, dw2, db2, dy + r * C, x + r * C, w,
			   m1[r], r1[r], C);
	e = max_rel(dx2, dx1, (size_t)N * C, 1e-2);
	double ew = fmax(max_rel(dw2, dw1, C, 1e-2), max_rel(db2, db1, C, 1e-2));
	ok(e <= 1e-5 && ew <= 1e-5, "layernorm backward, C %d, against gpt.c "
	   "(dx rel %.2g, dw/db rel %.2g <= 1e-5)", C, e, ew);
}

static void test_crossentropy(void)
{
	enum { N = 3, V = 40 };
	float z[N * V], p[N * V], d1[N * V], d2[N * V];
	int tg[N] = { 0, 17, 39 };
	for (int i = 0; i < N * V; i++)
		z[i] = frand(-4, 4);
	sd_gpt_crossentropy_forward(p, z, tg, N, V);
	sd_gpt_crossentropy_backward(d1, p, tg, N, V, 0.25f);
	for (int r = 0; r < N; r++)
		for (int j = 0; j < V; j++)
			d2[r * V + j] = sd_tm_ce_grad(p[r * V + j], j == tg[r],
						      0.25f);
	ok(memcmp(d1, d2, sizeof(d1)) == 0,
	   "cross-entropy gradient: the same floats as gpt.c");
}

/* softmax gradient: d/dz of sum_j c_j softmax(z)_j, against central
 * differences in double */
static void test_softmax_grad(void)
{
	enum { n = 9 };
	double z[n], c[n];
	float p[n], g[n];
	for (int j = 0; j < n; j++) {
		z[j] = frand(-2, 2);
		c[j] = frand(-1, 1);
	}
#define SOFTF(out, zz)                                                       \
	do {                                                                 \
		double mx = zz[0], s = 0;                                    \
		for (int k = 1; k < n; k++)                                  \
			mx = zz[k] > mx ? zz[k] : mx;                        \
		for (int k = 0; k < n; k++)                                  \
			s += exp(zz[k] - mx);                                \
		out = 0;                                                     \
		for (int k = 0; k < n; k++)                                  \
			out += c[k] * exp(zz[k] - mx) / s;                   \
	} while (0)
	double mx = z[0], s = 0, dot = 0;
	for (int k = 1; k < n; k++)
		mx = z[k] > mx ? z[k] : mx;
	for (int k = 0; k < n; k++)
		s += exp(z[k] - mx);
	for (int k = 0; k < n; k++) {
		p[k] = (float)(exp(z[k] - mx) / s);
		dot += p[k] * (float)c[k];
	}
	for (int k = 0; k < n; k++)
		g[k] = sd_tm_softmax_grad(p[k], (float)c[k], (float)dot);
	double worst = 0;
	for (int k = 0; k < n; k++) {
		double zp[n], zm[n], fp, fm, h = 1e-5;
		memcpy(zp, z, sizeof(zp));
		memcpy(zm, z, sizeof(zm));
		zp[k] += h;
		zm[k] -= h;
		SOFTF(fp, zp);
		SOFTF(fm, zm);
		double fd = (fp - fm) / (2 * h), e = fabs(fd - g[k]);
		if (e > worst)
			worst = e;
	}
#undef SOFTF
	ok(worst <= 1e-6, "softmax gradient against finite differences "
	   "(abs %.2g <= 1e-6)", worst);
}

static void test_adamw(void)
{
	struct sd_gpt_config cfg = SD_GPT_CONFIG_TEST;
	struct sd_adamw o = SD_ADAMW_DEFAULT;
	struct sd_gpt *m = NULL;
	char err[256];
	if (sd_gpt_create(&cfg, &m, err, sizeof(err)) != SD_OK) {
		ok(0, "adamw: a model (%s)", err);
		return;
	}
	sd_gpt_init(m, 7);
	size_t n = sd_gpt_n_params(m);
	int nt;
	const struct sd_gpt_tensor *t = sd_gpt_tensors(m, &nt);
	float *p = malloc(n * sizeof(float)), *mo = calloc(n, sizeof(float));
	float *v = calloc(n, sizeof(float));
	memcpy(p, sd_gpt_params(m), n * sizeof(float));
	for (int step = 1; step <= 2; step++) {
		float *g = sd_gpt_grads(m);
		for (size_t i = 0; i < n; i++)
			g[i] = frand(-0.5f, 0.5f);
		float step_size = (float)(o.lr / (1.0 - pow(o.beta1, step)));
		float inv = (float)(1.0 / sqrt(1.0 - pow(o.beta2, step)));
		for (int k = 0; k < nt; k++) {
			float decay = t[k].decay ? 1.0f - o.lr * o.weight_decay
						 : 1.0f;
			for (size_t j = t[k].offset;
			     j < t[k].offset + t[k].count; j++)
				sd_tm_adamw(&p[j], &mo[j], &v[j], g[j], o.beta1,
					    o.beta2, o.eps, decay, step_size,
					    inv, 0.5f);
		}
		sd_gpt_adamw_step(m, &o, 0.5f);
	}
	double e = max_rel(p, sd_gpt_params(m), n, 1e-3);
	ok(e <= 1e-6, "adamw: two steps over the test model against gpt.c "
	   "(rel %.2g <= 1e-6)", e);
	free(p);
	free(mo);
	free(v);
	sd_gpt_destroy(m);
}

static void test_bf16(void)
{
	is_int(sd_tm_bf16_bits(1.0f), 0x3f80, "bf16: 1.0");
	is_int(sd_tm_bf16_bits(1.0f + 0x1p-8f), 0x3f80,
	       "bf16: a tie rounds to the even 1.0");
	is_int(sd_tm_bf16_bits(1.0f + 3 * 0x1p-8f), 0x3f82,
	       "bf16: the tie above rounds up to even");
	is_int(sd_tm_bf16_bits(1.0f + 0x1p-8f + 0x1p-20f), 0x3f81,
	       "bf16: above the tie rounds up");
	is_int(sd_tm_bf16_bits(-INFINITY), 0xff80, "bf16: -inf");
	ok(isnan(sd_tm_bf16_float(sd_tm_bf16_bits(NAN))), "bf16: NaN stays NaN");
	double worst = 0;
	for (int i = 0; i < 10000; i++) {
		float f = frand(-1000, 1000);
		float r = sd_tm_bf16_float(sd_tm_bf16_bits(f));
		double e = fabs((double)r - f) / fabs((double)f);
		if (e > worst)
			worst = e;
	}
	ok(worst <= 0x1p-8, "bf16: relative rounding error %.3g <= 2^-8 (8 significant bits)",
	   worst);
}

static void test_init_params(void)
{
	struct sd_gpt_config cfgs[2] = { SD_GPT_CONFIG_TEST, SD_GPT_CONFIG_TEST };
	cfgs[1].layers = 3;
	cfgs[1].width = 48;
	cfgs[1].heads = 3;
	for (int c = 0; c < 2; c++) {
		struct sd_gpt *m = NULL;
		char err[256];
		if (sd_gpt_create(&cfgs[c], &m, err, sizeof(err)) != SD_OK) {
			ok(0, "init: a model (%s)", err);
			continue;
		}
		sd_gpt_init(m, 42);
		int nt, want = sd_gpt_tensor_count(&cfgs[c]);
		const struct sd_gpt_tensor *t = sd_gpt_tensors(m, &nt);
		size_t n = sd_gpt_param_count(&cfgs[c]);
		struct sd_gpt_tensor *t2 = calloc(want, sizeof(*t2));
		float *p = malloc(n * sizeof(float));
		sd_gpt_init_params(&cfgs[c], 42, t2, p);
		ok(nt == want && memcmp(t, t2, nt * sizeof(*t)) == 0 &&
			   memcmp(p, sd_gpt_params(m), n * sizeof(float)) == 0,
		   "sd_gpt_init_params: the table and weights of sd_gpt_init, "
		   "bit for bit (%d layers)", cfgs[c].layers);
		free(t2);
		free(p);
		sd_gpt_destroy(m);
	}
}

int main(void)
{
	test_gelu();
	test_layernorm(37);
	test_layernorm(64);
	test_crossentropy();
	test_softmax_grad();
	test_adamw();
	test_bf16();
	test_init_params();
	return done_testing();
}
