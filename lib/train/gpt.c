/*
 * gpt.c - the built-in training workload's model (gpt.h): a GPT-2-style
 * decoder in fp32 on the CPU, forward, backward and AdamW.
 *
 * Every matmul is one cblas_sgemm (attention: two per head forward, four
 * backward; per head beats plain loops over the causal half 4x on the
 * default shapes), bias and residual folded into the output it adds to;
 * the rest are loops over rows, 16 floats at a time.  One allocation per
 * array at sd_gpt_create(), none per step.  The loss is summed in double.
 * No threads of our own and OpenBLAS on one thread, so a run is
 * reproducible bit for bit on one machine (the same OpenBLAS kernels and
 * the same vector clone; another CPU may differ in the last bits).
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shakedown/backend.h"
#include "util.h"
#include "blas.h"
#include "gpt.h"
#include "metrics.h"
#include "rng.h"

/* Per block, the tensors in forward order (the table repeats this). */
enum {
	T_LN1_W, T_LN1_B, T_QKV_W, T_QKV_B, T_ATTPROJ_W, T_ATTPROJ_B,
	T_LN2_W, T_LN2_B, T_FC_W, T_FC_B, T_FCPROJ_W, T_FCPROJ_B,
	T_PER_LAYER
};
static const char *const layer_tensor_names[T_PER_LAYER] = {
	"ln_1.weight", "ln_1.bias", "attn.c_attn.weight", "attn.c_attn.bias",
	"attn.c_proj.weight", "attn.c_proj.bias", "ln_2.weight", "ln_2.bias",
	"mlp.c_fc.weight", "mlp.c_fc.bias", "mlp.c_proj.weight",
	"mlp.c_proj.bias"
};
#define T_WTE 0
#define T_WPE 1
#define T_FIRST_LAYER 2

/* What one block keeps from forward for backward. */
struct layer_acts {
	float *ln1, *ln1_mean, *ln1_rstd; /* N x C, N, N */
	float *qkv;                       /* N x 3C */
	float *att;                       /* B x NH x T x T */
	float *atty;                      /* N x C: attention before c_proj */
	float *res2;                      /* N x C: after the attention add */
	float *ln2, *ln2_mean, *ln2_rstd;
	float *fch, *fch_gelu;            /* N x 4C: before and after GELU */
	float *res3;                      /* N x C: the block's output */
};

struct mm_stats {
	double seconds, flops;
};

struct sd_gpt {
	struct sd_gpt_config cfg;
	size_t n_params;
	int n_tensors;
	struct sd_gpt_tensor *tensors;
	float *params, *grads, *adam_m, *adam_v;
	long adam_t;

	/* activations, one allocation */
	float *act_block;
	float *encoded;                   /* N x C */
	struct layer_acts *la;
	float *lnf, *lnf_mean, *lnf_rstd;
	float *probs;                     /* N x V: logits, then probs */
	/* backward scratch */
	float *dres, *dbuf_c, *dqkv, *dbuf_4c, *datt, *ones;
	int *inputs, *targets;            /* copies of the last forward's */
	int have_forward;

	struct mm_stats mm;
};


/* ---- configuration -------------------------------------------------- */

static int fail(char *err, size_t errlen, const char *msg)
{
	if (err && errlen)
		sd_strlcpy(err, msg, errlen);
	return SD_ERR_INVALID;
}

int sd_gpt_config_check(const struct sd_gpt_config *c, char *err,
			size_t errlen)
{
	char m[256];

	if (c->layers < 1 || c->layers > 1000) {
		snprintf(m, sizeof(m), "layers %d is out of range; use 1 to 1000",
			 c->layers);
		return fail(err, errlen, m);
	}
	if (c->heads < 1 || c->heads > 1024) {
		snprintf(m, sizeof(m), "heads %d is out of range; use 1 to 1024",
			 c->heads);
		return fail(err, errlen, m);
	}
	if (c->width < 1 || c->width > 65536) {
		snprintf(m, sizeof(m), "width %d is out of range; use 1 to 65536",
			 c->width);
		return fail(err, errlen, m);
	}
	if (c->width % c->heads != 0) {
		int lo = c->width / c->heads * c->heads;
		int hi = lo + c->heads;
		if (lo < c->heads)
			lo = c->heads;
		snprintf(m, sizeof(m),
			 "width %d is not a multiple of heads %d; use a width "
			 "divisible by heads (e.g. %d or %d) or other heads",
			 c->width, c->heads, lo, hi);
		return fail(err, errlen, m);
	}
	if (c->seq_len < 1 || c->seq_len > 65536) {
		snprintf(m, sizeof(m), "seq_len %d is out of range; use 1 to "
			 "65536", c->seq_len);
		return fail(err, errlen, m);
	}
	if (c->vocab < 2 || c->vocab > (1 << 24)) {
		snprintf(m, sizeof(m),
			 "vocab %d is out of range; use 2 to 16777216 (256 for "
			 "byte-level data)", c->vocab);
		return fail(err, errlen, m);
	}
	if (c->micro_batch < 1 ||
	    (long long)c->micro_batch * c->seq_len > (1 << 24)) {
		snprintf(m, sizeof(m),
			 "micro_batch %d is out of range; use 1 to %d (at most "
			 "16777216 tokens with seq_len %d)", c->micro_batch,
			 (1 << 24) / c->seq_len, c->seq_len);
		return fail(err, errlen, m);
	}
	if (c->accum_steps < 1 || c->accum_steps > 1000000) {
		snprintf(m, sizeof(m),
			 "accum_steps %d is out of range; use 1 to 1000000",
			 c->accum_steps);
		return fail(err, errlen, m);
	}
	return SD_OK;
}

int sd_gpt_tensor_count(const struct sd_gpt_config *c)
{
	return 2 + T_PER_LAYER * c->layers + 2;
}

/* Fill the table (n = sd_gpt_tensor_count()); returns the total count. */
static size_t build_table(const struct sd_gpt_config *c,
			  struct sd_gpt_tensor *t)
{
	size_t off = 0;
	int C = c->width, i = 0;
	struct {
		int rows, cols;
	} shape[T_PER_LAYER] = {
		{ C, 1 }, { C, 1 }, { 3 * C, C }, { 3 * C, 1 }, { C, C },
		{ C, 1 }, { C, 1 }, { C, 1 }, { 4 * C, C }, { 4 * C, 1 },
		{ C, 4 * C }, { C, 1 }
	};

#define ADD(nm, r, cl)                                                       \
	do {                                                                 \
		if (t) {                                                     \
			sd_strlcpy(t[i].name, (nm), sizeof(t[i].name));      \
			t[i].offset = off;                                   \
			t[i].rows = (r);                                     \
			t[i].cols = (cl);                                    \
			t[i].count = (size_t)(r) * (size_t)(cl);             \
			t[i].decay = (cl) > 1;                               \
		}                                                            \
		off += (size_t)(r) * (size_t)(cl);                           \
		i++;                                                         \
	} while (0)

	ADD("wte", c->vocab, C);
	ADD("wpe", c->seq_len, C);
	for (int l = 0; l < c->layers; l++)
		for (int k = 0; k < T_PER_LAYER; k++) {
			char nm[32];
			snprintf(nm, sizeof(nm), "h.%d.%s", l,
				 layer_tensor_names[k]);
			ADD(nm, shape[k].rows, shape[k].cols);
		}
	ADD("ln_f.weight", C, 1);
	ADD("ln_f.bias", C, 1);
#undef ADD
	return off;
}

int sd_gpt_config_named(const char *name, struct sd_gpt_config *out,
			char *err, size_t errlen)
{
	static const struct {
		const char *name;
		struct sd_gpt_config cfg;
	} named[] = {
		{ "default", SD_GPT_CONFIG_DEFAULT },
		{ "test", SD_GPT_CONFIG_TEST },
		{ "1b", SD_GPT_CONFIG_1B },
	};
	for (size_t i = 0; i < sizeof(named) / sizeof(named[0]); i++)
		if (name && strcmp(name, named[i].name) == 0) {
			*out = named[i].cfg;
			return SD_OK;
		}
	snprintf(err, errlen, "config '%s' is not built in: default (the "
		 "built-in workload), test (a tiny one for CI) or 1b (a "
		 "1B-parameter shape for one GPU)", name ? name : "");
	return SD_ERR_INVALID;
}

long sd_gpt_global_batch_named(const char *name)
{
	return !name			      ? 0
	       : strcmp(name, "default") == 0 ? SD_GPT_GLOBAL_BATCH_DEFAULT
	       : strcmp(name, "test") == 0    ? SD_GPT_GLOBAL_BATCH_TEST
	       : strcmp(name, "1b") == 0      ? SD_GPT_GLOBAL_BATCH_1B
					      : 0;
}

/* The rank counts that divide g, as "1, 2, 4 or 8" (at most 12 of them,
 * "..." before the largest when there are more). */
static void divisors(long g, char *buf, size_t len)
{
	long d[64];
	int n = 0;
	for (long k = 1; k * k <= g && n < 62; k++)
		if (g % k == 0) {
			d[n++] = k;
			if (k != g / k)
				d[n++] = g / k;
		}
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && d[j] < d[j - 1]; j--) {
			long t = d[j];
			d[j] = d[j - 1];
			d[j - 1] = t;
		}
	size_t used = 0;
	buf[0] = '\0';
	for (int i = 0; i < n && used < len; i++) {
		if (n > 12 && i >= 11 && i < n - 1)
			continue;
		int w = snprintf(buf + used, len - used, "%s%s%ld",
				 i == 0		 ? ""
				 : i == n - 1	 ? " or "
						 : ", ",
				 n > 12 && i == n - 1 ? "... " : "", d[i]);
		if (w < 0)
			break;
		used += (size_t)w;
	}
}

int sd_gpt_split(long global, int nranks, int micro_req, int accum_req,
		 struct sd_gpt_config *cfg, char *err, size_t errlen)
{
	char ok[200];
	if (global < 1 || nranks < 1) {
		snprintf(err, errlen, "a global batch of %ld over %d ranks "
			 "cannot be split", global, nranks);
		return SD_ERR_INVALID;
	}
	if (global % nranks) {
		divisors(global, ok, sizeof(ok));
		snprintf(err, errlen, "the global batch of %ld sequences does "
			 "not split over %d ranks: run on %s ranks, or give "
			 "--global-batch a multiple of %d (a reference is for "
			 "one global batch: make one with --save-ref)", global,
			 nranks, ok, nranks);
		return SD_ERR_INVALID;
	}
	long share = global / nranks;
	long micro, accum;
	if (micro_req > 0 && accum_req > 0) {
		micro = micro_req;
		accum = accum_req;
	} else if (micro_req > 0) {
		micro = micro_req;
		accum = share / micro;
	} else if (accum_req > 0) {
		accum = accum_req;
		micro = share / accum;
	} else {
		micro = cfg->micro_batch < share ? cfg->micro_batch : share;
		while (micro > 1 && share % micro)
			micro--;
		accum = share / micro;
	}
	if (micro < 1 || accum < 1 || micro * accum != share) {
		divisors(share, ok, sizeof(ok));
		snprintf(err, errlen, "each of %d ranks takes %ld of the "
			 "global batch's %ld sequences a step, which %s; give "
			 "--micro-batch %s (or --accum the share over it)",
			 nranks, share, global,
			 micro_req > 0 && accum_req > 0
				 ? "--micro-batch x --accum must make"
			 : micro_req > 0 ? "--micro-batch must divide"
					 : "--accum must divide",
			 ok);
		return SD_ERR_INVALID;
	}
	cfg->micro_batch = (int)micro;
	cfg->accum_steps = (int)accum;
	return SD_OK;
}

size_t sd_gpt_param_count(const struct sd_gpt_config *c)
{
	return build_table(c, NULL);
}

double sd_gpt_flops_per_token(const struct sd_gpt_config *c)
{
	return sd_train_flops_palm((double)sd_gpt_param_count(c), c->layers,
				   c->width, c->seq_len);
}

double sd_gpt_flops_megatron(const struct sd_gpt_config *c)
{
	return sd_train_flops_megatron(c->layers, c->width, c->seq_len,
				       c->vocab);
}

/* Activation and scratch floats for c (see sd_gpt_create()). */
static size_t act_floats(const struct sd_gpt_config *c)
{
	size_t N = (size_t)c->micro_batch * c->seq_len, C = c->width;
	size_t T = c->seq_len, NH = c->heads, B = c->micro_batch;
	size_t per_layer = N * (C + 3 * C + C + C + C + 4 * C + 4 * C + C) +
			   4 * N + B * NH * T * T;
	size_t acts = N * C + c->layers * per_layer + N * C + 2 * N +
		      N * (size_t)c->vocab;
	size_t scratch = N * C + N * C + N * 3 * C + N * 4 * C + T * T + N;
	return acts + scratch;
}

size_t sd_gpt_memory_bytes(const struct sd_gpt_config *c)
{
	size_t N = (size_t)c->micro_batch * c->seq_len;
	return 4 * sd_gpt_param_count(c) * sizeof(float) +
	       act_floats(c) * sizeof(float) + 2 * N * sizeof(int) +
	       sd_gpt_tensor_count(c) * sizeof(struct sd_gpt_tensor) +
	       c->layers * sizeof(struct layer_acts);
}

/* ---- create, destroy, accessors ------------------------------------- */

static float *alloc_floats(size_t n)
{
	void *p = NULL;
	if (posix_memalign(&p, 64, (n ? n : 1) * sizeof(float)) != 0)
		return NULL;
	memset(p, 0, (n ? n : 1) * sizeof(float));
	return p;
}

int sd_gpt_create(const struct sd_gpt_config *cfg, struct sd_gpt **out,
		  char *err, size_t errlen)
{
	struct sd_gpt *m;
	int rc = sd_gpt_config_check(cfg, err, errlen);
	size_t N, C, T, NH, B, P;

	*out = NULL;
	if (rc != SD_OK)
		return rc;
	if (!sd_blas()->sgemm) {
		snprintf(err, errlen, "the training workload multiplies with a "
			 "BLAS, and there is %s", sd_blas()->impl);
		return SD_ERR_NODEV;
	}
	m = calloc(1, sizeof(*m));
	if (!m)
		goto nomem;
	m->cfg = *cfg;
	N = (size_t)cfg->micro_batch * cfg->seq_len;
	C = cfg->width;
	T = cfg->seq_len;
	NH = cfg->heads;
	B = cfg->micro_batch;
	m->n_tensors = sd_gpt_tensor_count(cfg);
	m->tensors = calloc(m->n_tensors, sizeof(*m->tensors));
	m->la = calloc(cfg->layers, sizeof(*m->la));
	if (!m->tensors || !m->la)
		goto nomem;
	P = m->n_params = build_table(cfg, m->tensors);
	m->params = alloc_floats(P);
	m->grads = alloc_floats(P);
	m->adam_m = alloc_floats(P);
	m->adam_v = alloc_floats(P);
	m->act_block = alloc_floats(act_floats(cfg));
	m->inputs = calloc(N, sizeof(int));
	m->targets = calloc(N, sizeof(int));
	if (!m->params || !m->grads || !m->adam_m || !m->adam_v ||
	    !m->act_block || !m->inputs || !m->targets)
		goto nomem;

	float *p = m->act_block;
#define TAKE(ptr, n)                                                         \
	do {                                                                 \
		(ptr) = p;                                                   \
		p += (n);                                                    \
	} while (0)
	TAKE(m->encoded, N * C);
	for (int l = 0; l < cfg->layers; l++) {
		struct layer_acts *a = &m->la[l];
		TAKE(a->ln1, N * C);
		TAKE(a->ln1_mean, N);
		TAKE(a->ln1_rstd, N);
		TAKE(a->qkv, N * 3 * C);
		TAKE(a->att, B * NH * T * T);
		TAKE(a->atty, N * C);
		TAKE(a->res2, N * C);
		TAKE(a->ln2, N * C);
		TAKE(a->ln2_mean, N);
		TAKE(a->ln2_rstd, N);
		TAKE(a->fch, N * 4 * C);
		TAKE(a->fch_gelu, N * 4 * C);
		TAKE(a->res3, N * C);
	}
	TAKE(m->lnf, N * C);
	TAKE(m->lnf_mean, N);
	TAKE(m->lnf_rstd, N);
	TAKE(m->probs, N * (size_t)cfg->vocab);
	TAKE(m->dres, N * C);
	TAKE(m->dbuf_c, N * C);
	TAKE(m->dqkv, N * 3 * C);
	TAKE(m->dbuf_4c, N * 4 * C);
	TAKE(m->datt, T * T);
	TAKE(m->ones, N);
#undef TAKE
	for (size_t i = 0; i < N; i++)
		m->ones[i] = 1.0f;
	*out = m;
	return SD_OK;

nomem:
	if (err && errlen)
		snprintf(err, errlen,
			 "out of memory allocating the model (%zu MiB for "
			 "parameters, optimizer state and activations); use a "
			 "smaller width, layers, seq_len or micro_batch",
			 sd_gpt_memory_bytes(cfg) >> 20);
	sd_gpt_destroy(m);
	return SD_ERR_NOMEM;
}

void sd_gpt_destroy(struct sd_gpt *m)
{
	if (!m)
		return;
	free(m->tensors);
	free(m->la);
	free(m->params);
	free(m->grads);
	free(m->adam_m);
	free(m->adam_v);
	free(m->act_block);
	free(m->inputs);
	free(m->targets);
	free(m);
}

const struct sd_gpt_config *sd_gpt_config(const struct sd_gpt *m)
{
	return &m->cfg;
}

float *sd_gpt_params(struct sd_gpt *m)
{
	return m->params;
}

float *sd_gpt_grads(struct sd_gpt *m)
{
	return m->grads;
}

size_t sd_gpt_n_params(const struct sd_gpt *m)
{
	return m->n_params;
}

const struct sd_gpt_tensor *sd_gpt_tensors(const struct sd_gpt *m, int *n)
{
	if (n)
		*n = m->n_tensors;
	return m->tensors;
}

long sd_gpt_steps(const struct sd_gpt *m)
{
	return m->adam_t;
}

void sd_gpt_matmul_stats(const struct sd_gpt *m, double *seconds,
			 double *flops)
{
	if (seconds)
		*seconds = m->mm.seconds;
	if (flops)
		*flops = m->mm.flops;
}

void sd_gpt_matmul_stats_reset(struct sd_gpt *m)
{
	m->mm.seconds = m->mm.flops = 0;
}

/* ---- initialisation ------------------------------------------------- */

/* The initial parameters for seed into params, over the table t. */
static void init_params(const struct sd_gpt_config *c,
			const struct sd_gpt_tensor *tensors, int n_tensors,
			uint64_t seed, float *params)
{
	struct sd_rng r;
	double resid_std = 0.02 / sqrt(2.0 * c->layers);

	sd_rng_seed(&r, seed);
	for (int i = 0; i < n_tensors; i++) {
		const struct sd_gpt_tensor *t = &tensors[i];
		float *p = params + t->offset;
		int k = (i - T_FIRST_LAYER) % T_PER_LAYER;
		int in_layer = i >= T_FIRST_LAYER &&
			       i < T_FIRST_LAYER + T_PER_LAYER * c->layers;
		double std = 0.02;

		if (t->cols > 1) {
			if (in_layer && (k == T_ATTPROJ_W || k == T_FCPROJ_W))
				std = resid_std;
			for (size_t j = 0; j < t->count; j++)
				p[j] = (float)(std * sd_rng_normal(&r));
		} else {
			/* LayerNorm weights 1; every bias and LN bias 0 */
			float v = (in_layer && (k == T_LN1_W || k == T_LN2_W)) ||
						  i == n_tensors - 2
					  ? 1.0f
					  : 0.0f;
			for (size_t j = 0; j < t->count; j++)
				p[j] = v;
		}
	}
}

void sd_gpt_init_params(const struct sd_gpt_config *cfg, uint64_t seed,
			struct sd_gpt_tensor *t, float *params)
{
	build_table(cfg, t);
	init_params(cfg, t, sd_gpt_tensor_count(cfg), seed, params);
}

void sd_gpt_init(struct sd_gpt *m, uint64_t seed)
{
	init_params(&m->cfg, m->tensors, m->n_tensors, seed, m->params);
	memset(m->grads, 0, m->n_params * sizeof(float));
	memset(m->adam_m, 0, m->n_params * sizeof(float));
	memset(m->adam_v, 0, m->n_params * sizeof(float));
	m->adam_t = 0;
	m->have_forward = 0;
}

void sd_gpt_zero_grad(struct sd_gpt *m)
{
	memset(m->grads, 0, m->n_params * sizeof(float));
}

/* ---- vector helpers ------------------------------------------------- */

/* The elementwise kernels work on 16 floats at a time with GCC's vector
 * extensions: one AVX-512 register, two AVX2 or four SSE ones.
 * target_clones builds each hot kernel for those three and picks one at
 * load, so the build stays for any x86-64 (and other targets get the
 * plain build).  A machine always runs the same clone, so results stay
 * reproducible there. */
#if defined(__GNUC__) && !defined(__clang__)
/* the helpers pass vf16 by value only when inlined; no ABI is crossed */
#pragma GCC diagnostic ignored "-Wpsabi"
#endif
typedef float vf16 __attribute__((vector_size(64)));
typedef int32_t vi16 __attribute__((vector_size(64)));

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) &&       \
	defined(__has_attribute)
#if __has_attribute(target_clones)
#define SD_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#endif
#endif
#ifndef SD_CLONES
#define SD_CLONES
#endif

/*
 * e^x for 16 floats, within 2 ulp of expf: x = n ln2 + r with |r| <=
 * ln2 / 2, a degree-6 polynomial for e^r (Cephes' expf coefficients), and
 * 2^n from the exponent bits.  x is clamped to [-87.3, 88.7] (so the
 * result is never 0 or infinite) and a NaN stays NaN.
 */
static inline __attribute__((always_inline)) vf16 vexp(vf16 x)
{
	const float log2e = 1.44269504088896341f;
	const float ln2_hi = 0.693359375f, ln2_lo = -2.12194440e-4f;
	const float round = 12582912.0f; /* 1.5 * 2^23: adding it rounds */
	vi16 lo = x < -87.3f, hi = x > 88.7f;
	vf16 n, r, p;
	vi16 e;

	x = (vf16)(((vi16)x & ~lo) | ((vi16)((vf16){ 0 } - 87.3f) & lo));
	x = (vf16)(((vi16)x & ~hi) | ((vi16)((vf16){ 0 } + 88.7f) & hi));
	n = (x * log2e + round) - round;
	r = x - n * ln2_hi - n * ln2_lo;
	p = 1.9875691500e-4f * r + 1.3981999507e-3f;
	p = p * r + 8.3334519073e-3f;
	p = p * r + 4.1665795894e-2f;
	p = p * r + 1.6666665459e-1f;
	p = p * r + 5.0000001201e-1f;
	p = p * r * r + r + 1.0f;
	e = (__builtin_convertvector(n, vi16) + 127) << 23;
	return p * (vf16)e;
}

/* row[j] = e^(row[j] - mx) for j < n; returns their sum (in a fixed
 * order: 16 lanes, then the lanes added pairwise in order, then the
 * tail). */
SD_CLONES static float exp_shift_sum(float *row, int n, float mx)
{
	vf16 acc = { 0 }, v;
	float tail[16], sum = 0;
	int j = 0;

	for (; j + 16 <= n; j += 16) {
		memcpy(&v, row + j, sizeof(v));
		v = vexp(v - mx);
		acc += v;
		memcpy(row + j, &v, sizeof(v));
	}
	for (int k = 0; k < 16; k++)
		sum += acc[k];
	if (j < n) {
		for (int k = 0; k < 16; k++)
			tail[k] = j + k < n ? row[j + k] : mx;
		memcpy(&v, tail, sizeof(v));
		v = vexp(v - mx);
		for (int k = 0; j + k < n; k++) {
			row[j + k] = v[k];
			sum += v[k];
		}
	}
	return sum;
}

/* ---- kernels -------------------------------------------------------- */

static void gemm(struct mm_stats *st, int ta, int tb, int M, int N, int K, float alpha,
		 const float *A, int lda, const float *B, int ldb, float beta,
		 float *Cm, int ldc)
{
	double t0 = st ? sd_now() : 0;
	sd_blas()->sgemm(SD_CBLAS_ROW_MAJOR, ta, tb, M, N, K, alpha, A, lda, B, ldb,
		    beta, Cm, ldc);
	if (st) {
		st->seconds += sd_now() - t0;
		st->flops += 2.0 * M * N * K;
	}
}

void sd_gpt_encoder_forward(float *out, const int *tokens, const float *wte,
			    const float *wpe, int B, int T, int C)
{
	for (int b = 0; b < B; b++)
		for (int t = 0; t < T; t++) {
			float *o = out + ((size_t)b * T + t) * C;
			const float *e = wte + (size_t)tokens[b * T + t] * C;
			const float *pe = wpe + (size_t)t * C;
			for (int i = 0; i < C; i++)
				o[i] = e[i] + pe[i];
		}
}

void sd_gpt_encoder_backward(float *dwte, float *dwpe, const float *dout,
			     const int *tokens, int B, int T, int C)
{
	for (int b = 0; b < B; b++)
		for (int t = 0; t < T; t++) {
			const float *d = dout + ((size_t)b * T + t) * C;
			float *de = dwte + (size_t)tokens[b * T + t] * C;
			float *dp = dwpe + (size_t)t * C;
			for (int i = 0; i < C; i++) {
				de[i] += d[i];
				dp[i] += d[i];
			}
		}
}

static inline float hsum16(vf16 v)
{
	float s = 0;
	for (int k = 0; k < 16; k++)
		s += v[k];
	return s;
}

#define LOAD16(v, p) memcpy(&(v), (p), sizeof(vf16))
#define STORE16(p, v) memcpy((p), &(v), sizeof(vf16))

/* Rows of C: whole vectors of 16, then a scalar tail, the same arithmetic
 * in both. */
SD_CLONES void sd_gpt_layernorm_forward(float *out, float *mean, float *rstd,
					const float *in, const float *w,
					const float *b, int N, int C)
{
	int C16 = C & ~15;
	for (int r = 0; r < N; r++) {
		const float *x = in + (size_t)r * C;
		float *y = out + (size_t)r * C;
		vf16 acc = { 0 }, v, wv, bv;
		float s, var, mu, rs;
		int i;
		for (i = 0; i < C16; i += 16) {
			LOAD16(v, x + i);
			acc += v;
		}
		s = hsum16(acc);
		for (; i < C; i++)
			s += x[i];
		mu = s / C;
		acc = (vf16){ 0 };
		for (i = 0; i < C16; i += 16) {
			LOAD16(v, x + i);
			v -= mu;
			acc += v * v;
		}
		var = hsum16(acc);
		for (; i < C; i++)
			var += (x[i] - mu) * (x[i] - mu);
		rs = 1.0f / sqrtf(var / C + 1e-5f);
		for (i = 0; i < C16; i += 16) {
			LOAD16(v, x + i);
			LOAD16(wv, w + i);
			LOAD16(bv, b + i);
			v = (v - mu) * rs * wv + bv;
			STORE16(y + i, v);
		}
		for (; i < C; i++)
			y[i] = (x[i] - mu) * rs * w[i] + b[i];
		mean[r] = mu;
		rstd[r] = rs;
	}
}

SD_CLONES void sd_gpt_layernorm_backward(float *din, float *dw, float *db,
					 const float *dout, const float *in,
					 const float *w, const float *mean,
					 const float *rstd, int N, int C)
{
	int C16 = C & ~15;
	for (int r = 0; r < N; r++) {
		const float *x = in + (size_t)r * C;
		const float *dy = dout + (size_t)r * C;
		float *dx = din + (size_t)r * C;
		float mu = mean[r], rs = rstd[r], sum_d, sum_dn;
		vf16 ad = { 0 }, adn = { 0 }, xv, dyv, wv, nv, dv, t;
		int i;
		for (i = 0; i < C16; i += 16) {
			LOAD16(xv, x + i);
			LOAD16(dyv, dy + i);
			LOAD16(wv, w + i);
			nv = (xv - mu) * rs;
			dv = dyv * wv;
			ad += dv;
			adn += dv * nv;
		}
		sum_d = hsum16(ad);
		sum_dn = hsum16(adn);
		for (; i < C; i++) {
			float n = (x[i] - mu) * rs, d = dy[i] * w[i];
			sum_d += d;
			sum_dn += d * n;
		}
		sum_d /= C;
		sum_dn /= C;
		for (i = 0; i < C16; i += 16) {
			LOAD16(xv, x + i);
			LOAD16(dyv, dy + i);
			LOAD16(wv, w + i);
			nv = (xv - mu) * rs;
			dv = dyv * wv;
			LOAD16(t, db + i);
			t += dyv;
			STORE16(db + i, t);
			LOAD16(t, dw + i);
			t += dyv * nv;
			STORE16(dw + i, t);
			LOAD16(t, dx + i);
			t += rs * (dv - sum_d - nv * sum_dn);
			STORE16(dx + i, t);
		}
		for (; i < C; i++) {
			float n = (x[i] - mu) * rs, d = dy[i] * w[i];
			db[i] += dy[i];
			dw[i] += dy[i] * n;
			dx[i] += rs * (d - sum_d - n * sum_dn);
		}
	}
}

static void matmul_forward(struct mm_stats *st, float *out, const float *in,
			   const float *w, const float *bias,
			   const float *resid, int N, int IC, int OC)
{
	float beta = 0.0f;
	if (bias || resid) {
		for (int r = 0; r < N; r++) {
			float *o = out + (size_t)r * OC;
			const float *x = resid ? resid + (size_t)r * OC : NULL;
			if (bias && x)
				for (int j = 0; j < OC; j++)
					o[j] = x[j] + bias[j];
			else if (bias)
				memcpy(o, bias, OC * sizeof(float));
			else
				memcpy(o, x, OC * sizeof(float));
		}
		beta = 1.0f;
	}
	gemm(st, SD_CBLAS_NO_TRANS, SD_CBLAS_TRANS, N, OC, IC, 1.0f, in, IC, w, IC, beta,
	     out, OC);
}

void sd_gpt_matmul_forward(float *out, const float *in, const float *w,
			   const float *bias, int N, int IC, int OC)
{
	matmul_forward(NULL, out, in, w, bias, NULL, N, IC, OC);
}

static void matmul_backward(struct mm_stats *st, float *din, float *dw,
			    float *dbias, const float *dout, const float *in,
			    const float *w, const float *ones, int N, int IC,
			    int OC)
{
	if (din)
		gemm(st, SD_CBLAS_NO_TRANS, SD_CBLAS_NO_TRANS, N, IC, OC, 1.0f, dout, OC,
		     w, IC, 0.0f, din, IC);
	gemm(st, SD_CBLAS_TRANS, SD_CBLAS_NO_TRANS, OC, IC, N, 1.0f, dout, OC, in, IC,
	     1.0f, dw, IC);
	if (dbias)
		sd_blas()->sgemv(SD_CBLAS_ROW_MAJOR, SD_CBLAS_TRANS, N, OC, 1.0f, dout, OC,
			    ones, 1, 1.0f, dbias, 1);
}

void sd_gpt_matmul_backward(float *din, float *dw, float *dbias,
			    const float *dout, const float *in,
			    const float *w, const float *ones, int N, int IC,
			    int OC)
{
	matmul_backward(NULL, din, dw, dbias, dout, in, w, ones, N, IC, OC);
}

static void attention_forward(struct mm_stats *st, float *out, float *att,
			      const float *qkv, int B, int T, int C, int NH)
{
	int hs = C / NH, C3 = 3 * C;
	float scale = 1.0f / sqrtf((float)hs);

	for (int b = 0; b < B; b++)
		for (int h = 0; h < NH; h++) {
			const float *q = qkv + (size_t)b * T * C3 + h * hs;
			const float *k = q + C, *v = q + 2 * C;
			float *S = att + ((size_t)b * NH + h) * T * T;
			float *y = out + (size_t)b * T * C + h * hs;

			gemm(st, SD_CBLAS_NO_TRANS, SD_CBLAS_TRANS, T, T, hs, scale, q,
			     C3, k, C3, 0.0f, S, T);
			for (int t = 0; t < T; t++) {
				float *row = S + (size_t)t * T;
				float mx = row[0], sum = 0, inv;
				for (int j = 1; j <= t; j++)
					if (row[j] > mx)
						mx = row[j];
				sum = exp_shift_sum(row, t + 1, mx);
				inv = 1.0f / sum;
				for (int j = 0; j <= t; j++)
					row[j] *= inv;
				for (int j = t + 1; j < T; j++)
					row[j] = 0.0f;
			}
			gemm(st, SD_CBLAS_NO_TRANS, SD_CBLAS_NO_TRANS, T, hs, T, 1.0f, S,
			     T, v, C3, 0.0f, y, C);
		}
}

void sd_gpt_attention_forward(float *out, float *att, const float *qkv,
			      int B, int T, int C, int NH)
{
	attention_forward(NULL, out, att, qkv, B, T, C, NH);
}

static void attention_backward(struct mm_stats *st, float *dqkv,
			       float *scratch, const float *dout,
			       const float *qkv, const float *att, int B,
			       int T, int C, int NH)
{
	int hs = C / NH, C3 = 3 * C;
	float scale = 1.0f / sqrtf((float)hs);

	for (int b = 0; b < B; b++)
		for (int h = 0; h < NH; h++) {
			const float *q = qkv + (size_t)b * T * C3 + h * hs;
			const float *k = q + C, *v = q + 2 * C;
			const float *P = att + ((size_t)b * NH + h) * T * T;
			const float *dy = dout + (size_t)b * T * C + h * hs;
			float *dq = dqkv + (size_t)b * T * C3 + h * hs;
			float *dk = dq + C, *dv = dq + 2 * C;
			float *dS = scratch;

			/* dP = dY V^T; dV = P^T dY */
			gemm(st, SD_CBLAS_NO_TRANS, SD_CBLAS_TRANS, T, T, hs, 1.0f, dy, C,
			     v, C3, 0.0f, dS, T);
			gemm(st, SD_CBLAS_TRANS, SD_CBLAS_NO_TRANS, T, hs, T, 1.0f, P, T,
			     dy, C, 0.0f, dv, C3);
			/* softmax backward: dS = P * (dP - sum(P * dP)) */
			for (int t = 0; t < T; t++) {
				const float *p = P + (size_t)t * T;
				float *d = dS + (size_t)t * T;
				float dot = 0;
				for (int j = 0; j <= t; j++)
					dot += p[j] * d[j];
				for (int j = 0; j <= t; j++)
					d[j] = p[j] * (d[j] - dot);
				for (int j = t + 1; j < T; j++)
					d[j] = 0.0f;
			}
			/* dQ = scale dS K; dK = scale dS^T Q */
			gemm(st, SD_CBLAS_NO_TRANS, SD_CBLAS_NO_TRANS, T, hs, T, scale, dS,
			     T, k, C3, 0.0f, dq, C3);
			gemm(st, SD_CBLAS_TRANS, SD_CBLAS_NO_TRANS, T, hs, T, scale, dS, T,
			     q, C3, 0.0f, dk, C3);
		}
}

void sd_gpt_attention_backward(float *dqkv, float *scratch,
			       const float *dout, const float *qkv,
			       const float *att, int B, int T, int C, int NH)
{
	attention_backward(NULL, dqkv, scratch, dout, qkv, att, B, T, C, NH);
}

/* GELU with the tanh approximation, written as x * sigmoid(2u) (the same
 * function: 0.5 (1 + tanh u) = sigmoid(2u)), u = sqrt(2/pi) (x +
 * 0.044715 x^3). */
#define GELU_K0 0.7978845608028654f
#define GELU_K1 0.044715f

static inline void gelu_fwd16(float *out, const float *in)
{
	vf16 x, u, y;
	memcpy(&x, in, sizeof(x));
	u = GELU_K0 * (x + GELU_K1 * x * x * x);
	y = x / (1.0f + vexp(-2.0f * u));
	memcpy(out, &y, sizeof(y));
}

SD_CLONES void sd_gpt_gelu_forward(float *out, const float *in, size_t n)
{
	size_t i = 0;
	float tin[16] = { 0 }, tout[16];
	for (; i + 16 <= n; i += 16)
		gelu_fwd16(out + i, in + i);
	if (i < n) {
		memcpy(tin, in + i, (n - i) * sizeof(float));
		gelu_fwd16(tout, tin);
		memcpy(out + i, tout, (n - i) * sizeof(float));
	}
}

static inline void gelu_bwd16(float *din, const float *in, const float *dout)
{
	vf16 x, d, u, du, s, g;
	memcpy(&x, in, sizeof(x));
	memcpy(&d, dout, sizeof(d));
	u = GELU_K0 * (x + GELU_K1 * x * x * x);
	du = GELU_K0 * (1.0f + 3.0f * GELU_K1 * x * x);
	s = 1.0f / (1.0f + vexp(-2.0f * u));
	g = d * (s + 2.0f * x * s * (1.0f - s) * du);
	memcpy(din, &g, sizeof(g));
}

SD_CLONES void sd_gpt_gelu_backward(float *din, const float *in,
				    const float *dout, size_t n)
{
	size_t i = 0;
	float tin[16] = { 0 }, tdout[16] = { 0 }, tdin[16];
	for (; i + 16 <= n; i += 16)
		gelu_bwd16(din + i, in + i, dout + i);
	if (i < n) {
		memcpy(tin, in + i, (n - i) * sizeof(float));
		memcpy(tdout, dout + i, (n - i) * sizeof(float));
		gelu_bwd16(tdin, tin, tdout);
		memcpy(din + i, tdin, (n - i) * sizeof(float));
	}
}

double sd_gpt_crossentropy_forward(float *probs, const float *logits,
				   const int *targets, int N, int V)
{
	double total = 0;
	for (int r = 0; r < N; r++) {
		const float *z = logits + (size_t)r * V;
		float *p = probs + (size_t)r * V;
		float mx = z[0], sum = 0, inv, zt;
		for (int j = 1; j < V; j++)
			if (z[j] > mx)
				mx = z[j];
		zt = z[targets[r]] - mx; /* before p overwrites z */
		if (p != z)
			memcpy(p, z, (size_t)V * sizeof(float));
		sum = exp_shift_sum(p, V, mx);
		inv = 1.0f / sum;
		for (int j = 0; j < V; j++)
			p[j] *= inv;
		total += log((double)sum) - (double)zt;
	}
	return total / N;
}

void sd_gpt_crossentropy_backward(float *dlogits, const float *probs,
				  const int *targets, int N, int V,
				  float scale)
{
	for (int r = 0; r < N; r++) {
		const float *p = probs + (size_t)r * V;
		float *d = dlogits + (size_t)r * V;
		for (int j = 0; j < V; j++)
			d[j] = p[j] * scale;
		d[targets[r]] -= scale;
	}
}

/* ---- forward, backward, optimizer ---------------------------------- */

static float *tensor(struct sd_gpt *m, float *base, int idx)
{
	return base + m->tensors[idx].offset;
}

static int layer_tensor(int l, int k)
{
	return T_FIRST_LAYER + l * T_PER_LAYER + k;
}

int sd_gpt_forward(struct sd_gpt *m, const int *inputs, const int *targets,
		   double *loss, char *err, size_t errlen)
{
	const struct sd_gpt_config *c = &m->cfg;
	int B = c->micro_batch, T = c->seq_len, C = c->width, V = c->vocab;
	int NH = c->heads, N = B * T;
	float *P = m->params;
	const float *x;

	m->have_forward = 0;
	for (int i = 0; i < N; i++) {
		const char *what = NULL;
		int tok = 0;
		if (inputs[i] < 0 || inputs[i] >= V) {
			what = "input";
			tok = inputs[i];
		} else if (targets[i] < 0 || targets[i] >= V) {
			what = "target";
			tok = targets[i];
		}
		if (what) {
			if (err && errlen)
				snprintf(err, errlen,
					 "%s token %d at sample %d position %d "
					 "is outside the vocabulary 0..%d; use "
					 "a vocab that covers the data",
					 what, tok, i / T, i % T, V - 1);
			return SD_ERR_INVALID;
		}
	}
	memcpy(m->inputs, inputs, N * sizeof(int));
	memcpy(m->targets, targets, N * sizeof(int));

	sd_gpt_encoder_forward(m->encoded, m->inputs, tensor(m, P, T_WTE),
			       tensor(m, P, T_WPE), B, T, C);
	x = m->encoded;
	for (int l = 0; l < c->layers; l++) {
		struct layer_acts *a = &m->la[l];
#define W(k) tensor(m, P, layer_tensor(l, (k)))
		sd_gpt_layernorm_forward(a->ln1, a->ln1_mean, a->ln1_rstd, x,
					 W(T_LN1_W), W(T_LN1_B), N, C);
		matmul_forward(&m->mm, a->qkv, a->ln1, W(T_QKV_W), W(T_QKV_B),
			       NULL, N, C, 3 * C);
		attention_forward(&m->mm, a->atty, a->att, a->qkv, B, T, C, NH);
		matmul_forward(&m->mm, a->res2, a->atty, W(T_ATTPROJ_W),
			       W(T_ATTPROJ_B), x, N, C, C);
		sd_gpt_layernorm_forward(a->ln2, a->ln2_mean, a->ln2_rstd,
					 a->res2, W(T_LN2_W), W(T_LN2_B), N, C);
		matmul_forward(&m->mm, a->fch, a->ln2, W(T_FC_W), W(T_FC_B),
			       NULL, N, C, 4 * C);
		sd_gpt_gelu_forward(a->fch_gelu, a->fch, (size_t)N * 4 * C);
		matmul_forward(&m->mm, a->res3, a->fch_gelu, W(T_FCPROJ_W),
			       W(T_FCPROJ_B), a->res2, N, 4 * C, C);
#undef W
		x = a->res3;
	}
	sd_gpt_layernorm_forward(m->lnf, m->lnf_mean, m->lnf_rstd, x,
				 tensor(m, P, m->n_tensors - 2),
				 tensor(m, P, m->n_tensors - 1), N, C);
	matmul_forward(&m->mm, m->probs, m->lnf, tensor(m, P, T_WTE), NULL,
		       NULL, N, C, V);
	*loss = sd_gpt_crossentropy_forward(m->probs, m->probs, m->targets, N,
					    V);
	m->have_forward = 1;
	return SD_OK;
}

#define READY(idx)                                                           \
	do {                                                                 \
		if (grad_ready)                                              \
			grad_ready(ctx, (idx));                              \
	} while (0)

int sd_gpt_backward(struct sd_gpt *m,
		    void (*grad_ready)(void *ctx, int tensor_index),
		    void *ctx, char *err, size_t errlen)
{
	const struct sd_gpt_config *c = &m->cfg;
	int B = c->micro_batch, T = c->seq_len, C = c->width, V = c->vocab;
	int NH = c->heads, N = B * T, L = c->layers;
	float *P = m->params, *G = m->grads;
	int lnf_w = m->n_tensors - 2, lnf_b = m->n_tensors - 1;

	if (!m->have_forward) {
		if (err && errlen)
			sd_strlcpy(err,
				   "backward without a forward before it; call "
				   "sd_gpt_forward() on the micro-batch first",
				   errlen);
		return SD_ERR_INVALID;
	}
	m->have_forward = 0;

	/* loss and the tied LM head */
	sd_gpt_crossentropy_backward(m->probs, m->probs, m->targets, N, V,
				     1.0f / N);
	matmul_backward(&m->mm, m->dbuf_c, tensor(m, G, T_WTE), NULL,
			m->probs, m->lnf, tensor(m, P, T_WTE), m->ones, N, C,
			V);
	memset(m->dres, 0, (size_t)N * C * sizeof(float));
	sd_gpt_layernorm_backward(m->dres, tensor(m, G, lnf_w),
				  tensor(m, G, lnf_b), m->dbuf_c,
				  L ? m->la[L - 1].res3 : m->encoded,
				  tensor(m, P, lnf_w), m->lnf_mean,
				  m->lnf_rstd, N, C);
	READY(lnf_b);
	READY(lnf_w);

	for (int l = L - 1; l >= 0; l--) {
		struct layer_acts *a = &m->la[l];
		const float *x = l ? m->la[l - 1].res3 : m->encoded;
#define W(k) tensor(m, P, layer_tensor(l, (k)))
#define D(k) tensor(m, G, layer_tensor(l, (k)))
#define READY2(kw, kb)                                                       \
	do {                                                                 \
		READY(layer_tensor(l, (kb)));                                \
		READY(layer_tensor(l, (kw)));                                \
	} while (0)
		/* MLP */
		matmul_backward(&m->mm, m->dbuf_4c, D(T_FCPROJ_W),
				D(T_FCPROJ_B), m->dres, a->fch_gelu,
				W(T_FCPROJ_W), m->ones, N, 4 * C, C);
		READY2(T_FCPROJ_W, T_FCPROJ_B);
		sd_gpt_gelu_backward(m->dbuf_4c, a->fch, m->dbuf_4c,
				     (size_t)N * 4 * C);
		matmul_backward(&m->mm, m->dbuf_c, D(T_FC_W), D(T_FC_B),
				m->dbuf_4c, a->ln2, W(T_FC_W), m->ones, N, C,
				4 * C);
		READY2(T_FC_W, T_FC_B);
		sd_gpt_layernorm_backward(m->dres, D(T_LN2_W), D(T_LN2_B),
					  m->dbuf_c, a->res2, W(T_LN2_W),
					  a->ln2_mean, a->ln2_rstd, N, C);
		READY2(T_LN2_W, T_LN2_B);
		/* attention */
		matmul_backward(&m->mm, m->dbuf_c, D(T_ATTPROJ_W),
				D(T_ATTPROJ_B), m->dres, a->atty,
				W(T_ATTPROJ_W), m->ones, N, C, C);
		READY2(T_ATTPROJ_W, T_ATTPROJ_B);
		attention_backward(&m->mm, m->dqkv, m->datt, m->dbuf_c, a->qkv,
				   a->att, B, T, C, NH);
		matmul_backward(&m->mm, m->dbuf_c, D(T_QKV_W), D(T_QKV_B),
				m->dqkv, a->ln1, W(T_QKV_W), m->ones, N, C,
				3 * C);
		READY2(T_QKV_W, T_QKV_B);
		sd_gpt_layernorm_backward(m->dres, D(T_LN1_W), D(T_LN1_B),
					  m->dbuf_c, x, W(T_LN1_W), a->ln1_mean,
					  a->ln1_rstd, N, C);
		READY2(T_LN1_W, T_LN1_B);
#undef READY2
#undef D
#undef W
	}
	sd_gpt_encoder_backward(tensor(m, G, T_WTE), tensor(m, G, T_WPE),
				m->dres, m->inputs, B, T, C);
	READY(T_WPE);
	READY(T_WTE);
	return SD_OK;
}
#undef READY

/* AdamW over n elements, 16 at a time where it can (sqrt lane by lane:
 * C's vector extensions have none), the same arithmetic in the tail. */
SD_CLONES static void adamw_range(float *p, const float *g, float *mo,
				  float *v, size_t n, float b1, float b2,
				  float eps, float decay, float step_size,
				  float inv_sqrt_bc2, float grad_scale)
{
	size_t j = 0;
	for (; j + 16 <= n; j += 16) {
		vf16 pv, gv, mv, vv, den;
		LOAD16(pv, p + j);
		LOAD16(gv, g + j);
		LOAD16(mv, mo + j);
		LOAD16(vv, v + j);
		gv *= grad_scale;
		mv = b1 * mv + (1.0f - b1) * gv;
		vv = b2 * vv + (1.0f - b2) * gv * gv;
		for (int k = 0; k < 16; k++)
			den[k] = sqrtf(vv[k]);
		pv = pv * decay - step_size * mv / (den * inv_sqrt_bc2 + eps);
		STORE16(p + j, pv);
		STORE16(mo + j, mv);
		STORE16(v + j, vv);
	}
	for (; j < n; j++) {
		float gj = g[j] * grad_scale;
		mo[j] = b1 * mo[j] + (1.0f - b1) * gj;
		v[j] = b2 * v[j] + (1.0f - b2) * gj * gj;
		p[j] = p[j] * decay -
		       step_size * mo[j] / (sqrtf(v[j]) * inv_sqrt_bc2 + eps);
	}
}

void sd_gpt_adamw_step(struct sd_gpt *m, const struct sd_adamw *o,
		       float grad_scale)
{
	float step_size, inv_sqrt_bc2;

	m->adam_t++;
	step_size = (float)(o->lr / (1.0 - pow(o->beta1, (double)m->adam_t)));
	inv_sqrt_bc2 =
		(float)(1.0 / sqrt(1.0 - pow(o->beta2, (double)m->adam_t)));
	for (int i = 0; i < m->n_tensors; i++) {
		const struct sd_gpt_tensor *t = &m->tensors[i];
		float decay = t->decay ? 1.0f - o->lr * o->weight_decay : 1.0f;
		adamw_range(m->params + t->offset, m->grads + t->offset,
			    m->adam_m + t->offset, m->adam_v + t->offset,
			    t->count, o->beta1, o->beta2, o->eps, decay,
			    step_size, inv_sqrt_bc2, grad_scale);
	}
}
