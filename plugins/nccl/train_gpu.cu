/*
 * train_gpu.cu - the training workload's model on one GPU (train_gpu.h,
 * include/shakedown/train_gpu.h): lib/train/gpt.c's GPT-2-style decoder, forward,
 * backward and AdamW, in mixed precision.
 *
 * Every matmul of gpt.c is one cuBLAS GEMM here (cublasGemmEx, or
 * cublasGemmStridedBatchedEx over the heads of a sample for attention),
 * bf16 A and B, fp32 compute (CUBLAS_COMPUTE_32F), and an fp32 C where
 * the result is accumulated or feeds fp32 math (the residual stream, the
 * qkv projection, the logits, every gradient), bf16 where it only feeds
 * the next GEMM (the attention's output).  Bias and residual are written
 * into C before the GEMM adds to it (beta 1), as gpt.c folds them.  The
 * bf16 weights are a copy of the fp32 master weights that AdamW refreshes
 * after each update.  The rest are simple kernels: one block per row for
 * the row-wise ops (LayerNorm, softmax, cross-entropy), one thread per
 * element otherwise, fp32 accumulation everywhere, their per-element
 * arithmetic in train_math.h (tested on the CPU against gpt.c).
 * Parameter gradients of LayerNorm and the embeddings are summed with
 * fp32 atomics, so the last bits of a run vary from run to run.
 *
 * Row-major throughout, as gpt.c: a row-major C = op(A) op(B) is the
 * column-major C^T = op(B)^T op(A)^T, so gemm() passes cuBLAS the same
 * transpose flags with the operands and M, N swapped.
 */
#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <cublas_v2.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "shakedown/backend.h"
#include "train_gpu.h"
#include "train_math.h"

typedef __nv_bfloat16 bf16;

/* gpt.c's tensors of one block, in forward order */
enum {
	T_LN1_W, T_LN1_B, T_QKV_W, T_QKV_B, T_ATTPROJ_W, T_ATTPROJ_B,
	T_LN2_W, T_LN2_B, T_FC_W, T_FC_B, T_FCPROJ_W, T_FCPROJ_B,
	T_PER_LAYER
};
#define T_WTE 0
#define T_WPE 1
#define T_FIRST_LAYER 2

struct layer_acts {
	float *ln1_mean, *ln1_rstd;
	bf16 *ln1;        /* N x C */
	float *qkv;       /* N x 3C */
	bf16 *qkv_bf;
	float *att;       /* B x NH x T x T probabilities */
	bf16 *att_bf;
	bf16 *atty;       /* N x C */
	float *res2;      /* N x C */
	float *ln2_mean, *ln2_rstd;
	bf16 *ln2;
	float *fch;       /* N x 4C before GELU */
	bf16 *fch_gelu;
	float *res3;
};

struct sd_train_gpu {
	struct sd_gpt_config cfg;
	cudaStream_t s;
	cublasHandle_t h;
	char what[300];
	int nt;
	struct sd_gpt_tensor *t;
	size_t P;
	void *block;
	size_t block_bytes;
	float *params, *grads, *adam_m, *adam_v;
	bf16 *wbf;
	int *inputs, *targets;
	float *encoded;
	struct layer_acts *la;
	float *lnf_mean, *lnf_rstd;
	bf16 *lnf;
	float *logits, *losses;
	bf16 *dlogits;
	float *dres, *dbuf_c, *dqkv, *dbuf_4c, *dS;
	bf16 *dres_bf, *dc_bf, *dqkv_bf, *d4c_bf, *dS_bf;
	float *h_losses;
	int have_forward;
	long adam_t;
	int rc;           /* the first failure, sticky */
	char err[512];
};

/* ---- errors ---------------------------------------------------------- */

static int failf(struct sd_train_gpu *m, int rc, const char *what,
		 const char *detail)
{
	if (!m->rc) {
		m->rc = rc;
		snprintf(m->err, sizeof(m->err), "%s, training: %s: %s",
			 m->what, what, detail);
	}
	return m->rc;
}

static int cu_check(struct sd_train_gpu *m, cudaError_t e, const char *what)
{
	if (e == cudaSuccess)
		return m->rc;
	return failf(m, e == cudaErrorMemoryAllocation ? SD_ERR_NOMEM
						       : SD_ERR_BACKEND,
		     what, cudaGetErrorString(e));
}

static int blas_check(struct sd_train_gpu *m, cublasStatus_t st,
		      const char *what)
{
	if (st == CUBLAS_STATUS_SUCCESS)
		return m->rc;
	return failf(m, SD_ERR_BACKEND, what, cublasGetStatusString(st));
}

static int launched(struct sd_train_gpu *m, const char *what)
{
	return cu_check(m, cudaGetLastError(), what);
}

static int report(struct sd_train_gpu *m, char *err, size_t errlen)
{
	if (m->rc && err && errlen)
		snprintf(err, errlen, "%s", m->err);
	return m->rc;
}

/* ---- kernels --------------------------------------------------------- */

#define TPB 256
static unsigned blocks(size_t n)
{
	return (unsigned)((n + TPB - 1) / TPB);
}

__device__ __forceinline__ float warp_sum(float v)
{
	for (int o = 16; o > 0; o >>= 1)
		v += __shfl_xor_sync(0xffffffffu, v, o);
	return v;
}

__device__ __forceinline__ float warp_max(float v)
{
	for (int o = 16; o > 0; o >>= 1)
		v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
	return v;
}

/* The sum (or max) over the block, in every thread; blockDim.x is a
 * multiple of 32. */
__device__ float block_reduce(float v, int is_max)
{
	__shared__ float sh[32];
	int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
	int nw = blockDim.x >> 5;
	v = is_max ? warp_max(v) : warp_sum(v);
	__syncthreads(); /* sh free from the last call */
	if (!lane)
		sh[w] = v;
	__syncthreads();
	v = (int)threadIdx.x < nw ? sh[threadIdx.x] : (is_max ? -INFINITY : 0.0f);
	if (w == 0)
		v = is_max ? warp_max(v) : warp_sum(v);
	if (threadIdx.x == 0)
		sh[0] = v;
	__syncthreads();
	return sh[0];
}

__global__ void k_encoder_fwd(float *out, const int *tok, const float *wte,
			      const float *wpe, int T, int C, size_t n)
{
	size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n)
		return;
	size_t r = i / C;
	int c = (int)(i % C), t = (int)(r % T);
	out[i] = wte[(size_t)tok[r] * C + c] + wpe[(size_t)t * C + c];
}

__global__ void k_encoder_bwd(float *dwte, float *dwpe, const float *d,
			      const int *tok, int T, int C, size_t n)
{
	size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n)
		return;
	size_t r = i / C;
	int c = (int)(i % C), t = (int)(r % T);
	atomicAdd(&dwte[(size_t)tok[r] * C + c], d[i]);
	atomicAdd(&dwpe[(size_t)t * C + c], d[i]);
}

/* one block per row */
__global__ void k_layernorm_fwd(bf16 *out, float *mean, float *rstd,
				const float *in, const float *w,
				const float *b, int C)
{
	const float *x = in + (size_t)blockIdx.x * C;
	bf16 *y = out + (size_t)blockIdx.x * C;
	float s = 0;
	for (int i = threadIdx.x; i < C; i += blockDim.x)
		s += x[i];
	float mu = block_reduce(s, 0) / C;
	s = 0;
	for (int i = threadIdx.x; i < C; i += blockDim.x)
		s += (x[i] - mu) * (x[i] - mu);
	float rs = sd_tm_ln_rstd(block_reduce(s, 0), C);
	for (int i = threadIdx.x; i < C; i += blockDim.x)
		y[i] = __float2bfloat16_rn(sd_tm_ln_out(x[i], mu, rs, w[i], b[i]));
	if (threadIdx.x == 0) {
		mean[blockIdx.x] = mu;
		rstd[blockIdx.x] = rs;
	}
}

/* ADDS the input gradient to din; dw, db summed over rows by atomics */
__global__ void k_layernorm_bwd(float *din, float *dw, float *db,
				const float *dout, const float *in,
				const float *w, const float *mean,
				const float *rstd, int C)
{
	size_t off = (size_t)blockIdx.x * C;
	const float *x = in + off, *dy = dout + off;
	float *dx = din + off;
	float mu = mean[blockIdx.x], rs = rstd[blockIdx.x];
	float sd = 0, sdn = 0;
	for (int i = threadIdx.x; i < C; i += blockDim.x) {
		float d = dy[i] * w[i];
		sd += d;
		sdn += d * (x[i] - mu) * rs;
	}
	sd = block_reduce(sd, 0) / C;
	sdn = block_reduce(sdn, 0) / C;
	for (int i = threadIdx.x; i < C; i += blockDim.x) {
		float n = (x[i] - mu) * rs;
		atomicAdd(&db[i], dy[i]);
		atomicAdd(&dw[i], dy[i] * n);
		dx[i] += sd_tm_ln_dx(x[i], dy[i], w[i], mu, rs, sd, sdn);
	}
}

/* out = resid + bias (either may be NULL), before a GEMM adds to it */
__global__ void k_prefill(float *out, const float *bias, const float *resid,
			  int OC, size_t n)
{
	size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n)
		return;
	out[i] = (resid ? resid[i] : 0.0f) + (bias ? bias[i % OC] : 0.0f);
}

__global__ void k_cast(bf16 *out, const float *in, size_t n)
{
	size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		out[i] = __float2bfloat16_rn(in[i]);
}

/* one block per row of scores (already scaled); causal: row t keeps
 * columns 0..t */
__global__ void k_softmax_causal(float *att, bf16 *att_bf, int T)
{
	size_t r = blockIdx.x;
	int t = (int)(r % T);
	float *row = att + r * T;
	bf16 *rb = att_bf + r * T;
	float mx = -INFINITY;
	for (int j = threadIdx.x; j <= t; j += blockDim.x)
		mx = fmaxf(mx, row[j]);
	mx = block_reduce(mx, 1);
	float s = 0;
	for (int j = threadIdx.x; j <= t; j += blockDim.x)
		s += expf(row[j] - mx);
	float inv = 1.0f / block_reduce(s, 0);
	for (int j = threadIdx.x; j < T; j += blockDim.x) {
		float p = j <= t ? expf(row[j] - mx) * inv : 0.0f;
		row[j] = p;
		rb[j] = __float2bfloat16_rn(p);
	}
}

/* dS = P (dP - sum(P dP)), bf16 for the GEMMs that follow */
__global__ void k_softmax_bwd(bf16 *ds, const float *dp, const float *att,
			      int T)
{
	size_t r = blockIdx.x;
	int t = (int)(r % T);
	const float *p = att + r * T, *d = dp + r * T;
	float dot = 0;
	for (int j = threadIdx.x; j <= t; j += blockDim.x)
		dot += p[j] * d[j];
	dot = block_reduce(dot, 0);
	for (int j = threadIdx.x; j < T; j += blockDim.x)
		ds[r * T + j] = __float2bfloat16_rn(
			j <= t ? sd_tm_softmax_grad(p[j], d[j], dot) : 0.0f);
}

__global__ void k_gelu_fwd(bf16 *out, const float *in, size_t n)
{
	size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		out[i] = __float2bfloat16_rn(sd_tm_gelu(in[i]));
}

/* d = d * gelu'(x) in place, and its bf16 copy */
__global__ void k_gelu_bwd(float *d, bf16 *d_bf, const float *x, size_t n)
{
	size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n)
		return;
	float g = sd_tm_gelu_grad(x[i], d[i]);
	d[i] = g;
	d_bf[i] = __float2bfloat16_rn(g);
}

/* db[j] += sum over rows of d[r][j]: one thread per column, coalesced */
__global__ void k_colsum_add(float *db, const float *d, int N, int OC)
{
	int j = blockIdx.x * blockDim.x + threadIdx.x;
	if (j >= OC)
		return;
	float s = 0;
	for (int r = 0; r < N; r++)
		s += d[(size_t)r * OC + j];
	db[j] += s;
}

/* one block per row: logits become probabilities; losses[r] the row's
 * cross-entropy */
__global__ void k_ce_fwd(float *logits, float *losses, const int *targets,
			 int V)
{
	float *z = logits + (size_t)blockIdx.x * V;
	float mx = -INFINITY;
	for (int j = threadIdx.x; j < V; j += blockDim.x)
		mx = fmaxf(mx, z[j]);
	mx = block_reduce(mx, 1);
	float zt = z[targets[blockIdx.x]] - mx;
	float s = 0;
	for (int j = threadIdx.x; j < V; j += blockDim.x)
		s += expf(z[j] - mx);
	s = block_reduce(s, 0); /* every zt read before any z is written */
	float inv = 1.0f / s;
	for (int j = threadIdx.x; j < V; j += blockDim.x)
		z[j] = expf(z[j] - mx) * inv;
	if (threadIdx.x == 0)
		losses[blockIdx.x] = logf(s) - zt;
}

__global__ void k_ce_bwd(bf16 *dlogits, const float *probs,
			 const int *targets, int V, float scale, size_t n)
{
	size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n)
		return;
	int j = (int)(i % V);
	dlogits[i] = __float2bfloat16_rn(
		sd_tm_ce_grad(probs[i], targets[i / V] == j, scale));
}

__global__ void k_adamw(float *p, const float *g, float *mo, float *v,
			bf16 *wbf, size_t n, float b1, float b2, float eps,
			float decay, float step_size, float inv_sqrt_bc2,
			float grad_scale)
{
	size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n)
		return;
	float pi = p[i], mi = mo[i], vi = v[i];
	sd_tm_adamw(&pi, &mi, &vi, g[i], b1, b2, eps, decay, step_size,
		    inv_sqrt_bc2, grad_scale);
	p[i] = pi;
	mo[i] = mi;
	v[i] = vi;
	wbf[i] = __float2bfloat16_rn(pi);
}

/* ---- GEMMs ----------------------------------------------------------- */

/* Row-major C (M x N) = alpha op(A) op(B) + beta C; A, B bf16, C fp32 or
 * bf16 (ct), fp32 compute; batched over count heads with the strides
 * given (count 1: one GEMM). */
static int gemm(struct sd_train_gpu *m, int ta, int tb, int M, int N, int K,
		float alpha, const bf16 *A, int lda, long long sa,
		const bf16 *B, int ldb, long long sb, float beta, void *C,
		cudaDataType_t ct, int ldc, long long sc, int count)
{
	cublasOperation_t oa = ta ? CUBLAS_OP_T : CUBLAS_OP_N;
	cublasOperation_t ob = tb ? CUBLAS_OP_T : CUBLAS_OP_N;
	if (m->rc)
		return m->rc;
	if (count == 1)
		return blas_check(m, cublasGemmEx(m->h, ob, oa, N, M, K, &alpha,
						  B, CUDA_R_16BF, ldb, A,
						  CUDA_R_16BF, lda, &beta, C,
						  ct, ldc, CUBLAS_COMPUTE_32F,
						  CUBLAS_GEMM_DEFAULT),
				  "cublasGemmEx");
	return blas_check(m, cublasGemmStridedBatchedEx(
				     m->h, ob, oa, N, M, K, &alpha, B,
				     CUDA_R_16BF, ldb, sb, A, CUDA_R_16BF, lda,
				     sa, &beta, C, ct, ldc, sc, count,
				     CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
			  "cublasGemmStridedBatchedEx");
}

/* out (N x OC, fp32) = in (N x IC) w^T + bias + resid */
static int matmul_fwd(struct sd_train_gpu *m, float *out, const bf16 *in,
		      const bf16 *w, const float *bias, const float *resid,
		      int N, int IC, int OC)
{
	size_t n = (size_t)N * OC;
	k_prefill<<<blocks(n), TPB, 0, m->s>>>(out, bias, resid, OC, n);
	if (launched(m, "prefill kernel"))
		return m->rc;
	return gemm(m, 0, 1, N, OC, IC, 1.0f, in, IC, 0, w, IC, 0, 1.0f, out,
		    CUDA_R_32F, OC, 0, 1);
}

/* din (N x IC) = dout w (written); dw += dout^T in; dbias += colsum of
 * dout32 (the fp32 of dout_bf) */
static int matmul_bwd(struct sd_train_gpu *m, float *din, float *dw,
		      float *dbias, const bf16 *dout_bf, const float *dout32,
		      const bf16 *in, const bf16 *w, int N, int IC, int OC)
{
	gemm(m, 0, 0, N, IC, OC, 1.0f, dout_bf, OC, 0, w, IC, 0, 0.0f, din,
	     CUDA_R_32F, IC, 0, 1);
	gemm(m, 1, 0, OC, IC, N, 1.0f, dout_bf, OC, 0, in, IC, 0, 1.0f, dw,
	     CUDA_R_32F, IC, 0, 1);
	if (m->rc)
		return m->rc;
	k_colsum_add<<<blocks(OC), TPB, 0, m->s>>>(dbias, dout32, N, OC);
	return launched(m, "bias gradient kernel");
}

static int cast(struct sd_train_gpu *m, bf16 *out, const float *in, size_t n)
{
	if (m->rc)
		return m->rc;
	k_cast<<<blocks(n), TPB, 0, m->s>>>(out, in, n);
	return launched(m, "bf16 cast kernel");
}

/* ---- create, destroy ------------------------------------------------- */

/* Lay the arrays out from base (NULL: just count); returns the bytes. */
static size_t layout(struct sd_train_gpu *m, char *base)
{
	const struct sd_gpt_config *c = &m->cfg;
	size_t N = (size_t)c->micro_batch * c->seq_len, C = c->width;
	size_t T = c->seq_len, NH = c->heads, B = c->micro_batch, V = c->vocab;
	size_t off = 0;
#define TAKE(ptr, n, type)                                                   \
	do {                                                                 \
		if (base)                                                    \
			(ptr) = (type *)(base + off);                        \
		off += ((n) * sizeof(type) + 255) & ~(size_t)255;            \
	} while (0)
	TAKE(m->params, m->P, float);
	TAKE(m->grads, m->P, float);
	TAKE(m->adam_m, m->P, float);
	TAKE(m->adam_v, m->P, float);
	TAKE(m->wbf, m->P, bf16);
	TAKE(m->inputs, N, int);
	TAKE(m->targets, N, int);
	TAKE(m->encoded, N * C, float);
	for (int l = 0; l < c->layers; l++) {
		struct layer_acts *a = &m->la[l];
		TAKE(a->ln1_mean, N, float);
		TAKE(a->ln1_rstd, N, float);
		TAKE(a->ln1, N * C, bf16);
		TAKE(a->qkv, N * 3 * C, float);
		TAKE(a->qkv_bf, N * 3 * C, bf16);
		TAKE(a->att, B * NH * T * T, float);
		TAKE(a->att_bf, B * NH * T * T, bf16);
		TAKE(a->atty, N * C, bf16);
		TAKE(a->res2, N * C, float);
		TAKE(a->ln2_mean, N, float);
		TAKE(a->ln2_rstd, N, float);
		TAKE(a->ln2, N * C, bf16);
		TAKE(a->fch, N * 4 * C, float);
		TAKE(a->fch_gelu, N * 4 * C, bf16);
		TAKE(a->res3, N * C, float);
	}
	TAKE(m->lnf_mean, N, float);
	TAKE(m->lnf_rstd, N, float);
	TAKE(m->lnf, N * C, bf16);
	TAKE(m->logits, N * V, float);
	TAKE(m->losses, N, float);
	TAKE(m->dlogits, N * V, bf16);
	TAKE(m->dres, N * C, float);
	TAKE(m->dbuf_c, N * C, float);
	TAKE(m->dqkv, N * 3 * C, float);
	TAKE(m->dbuf_4c, N * 4 * C, float);
	TAKE(m->dS, B * NH * T * T, float);
	TAKE(m->dres_bf, N * C, bf16);
	TAKE(m->dc_bf, N * C, bf16);
	TAKE(m->dqkv_bf, N * 3 * C, bf16);
	TAKE(m->d4c_bf, N * 4 * C, bf16);
	TAKE(m->dS_bf, B * NH * T * T, bf16);
#undef TAKE
	return off;
}

/* The table must be gpt.c's: its count, contiguous, the shapes this
 * file's indices assume. */
static int check_table(const struct sd_gpt_config *c,
		       const struct sd_gpt_tensor *t, int nt, char *err,
		       size_t errlen)
{
	int want = 2 + T_PER_LAYER * c->layers + 2;
	size_t C = c->width;
	if (nt != want) {
		snprintf(err, errlen, "the GPU model needs %d tensors for %d "
			 "layers, the table has %d; this is a bug of shakedown",
			 want, c->layers, nt);
		return SD_ERR_INVALID;
	}
	for (int i = 0; i < nt; i++) {
		size_t expect = 0;
		if (i == T_WTE)
			expect = (size_t)c->vocab * C;
		else if (i == T_WPE)
			expect = (size_t)c->seq_len * C;
		else if (i >= nt - 2)
			expect = C;
		else {
			static const size_t per[T_PER_LAYER] = { 1, 1, 3, 3, 1,
				1, 1, 1, 4, 4, 4, 1 };
			int k = (i - T_FIRST_LAYER) % T_PER_LAYER;
			int mat = k == T_QKV_W || k == T_ATTPROJ_W ||
				  k == T_FC_W || k == T_FCPROJ_W;
			expect = per[k] * C * (mat ? C : 1);
		}
		if (t[i].count != expect ||
		    (i && t[i].offset != t[i - 1].offset + t[i - 1].count) ||
		    (!i && t[i].offset != 0)) {
			snprintf(err, errlen, "tensor %d (%s) is not where or "
				 "what the GPU model expects; this is a bug of "
				 "shakedown", i, t[i].name);
			return SD_ERR_INVALID;
		}
	}
	return SD_OK;
}

extern "C" int sd_nccl_train_create(cudaStream_t stream, const char *what,
				    const struct sd_gpt_config *cfg,
				    const struct sd_gpt_tensor *t, int nt,
				    const float *params,
				    struct sd_train_gpu **out, char *err,
				    size_t errlen)
{
	*out = NULL;
	int rc = check_table(cfg, t, nt, err, errlen);
	if (rc)
		return rc;
	struct sd_train_gpu *m =
		(struct sd_train_gpu *)calloc(1, sizeof(*m));
	if (!m) {
		snprintf(err, errlen, "out of host memory");
		return SD_ERR_NOMEM;
	}
	m->cfg = *cfg;
	m->s = stream;
	snprintf(m->what, sizeof(m->what), "%s", what);
	m->nt = nt;
	m->P = t[nt - 1].offset + t[nt - 1].count;
	size_t N = (size_t)cfg->micro_batch * cfg->seq_len;
	m->t = (struct sd_gpt_tensor *)calloc(nt, sizeof(*m->t));
	m->la = (struct layer_acts *)calloc(cfg->layers, sizeof(*m->la));
	m->h_losses = (float *)calloc(N, sizeof(float));
	if (!m->t || !m->la || !m->h_losses) {
		sd_nccl_train_destroy(m);
		snprintf(err, errlen, "out of host memory");
		return SD_ERR_NOMEM;
	}
	memcpy(m->t, t, nt * sizeof(*t));
	m->block_bytes = layout(m, NULL);
	cudaError_t e = cudaMalloc(&m->block, m->block_bytes);
	if (e != cudaSuccess) {
		cudaGetLastError();
		m->block = NULL;
		snprintf(err, errlen, "%s: cannot allocate %.1f MiB of GPU "
			 "memory for the model (%s); use a smaller width, "
			 "layers, seq_len or micro_batch", what,
			 m->block_bytes / 1048576.0, cudaGetErrorString(e));
		sd_nccl_train_destroy(m);
		return SD_ERR_NOMEM;
	}
	layout(m, (char *)m->block);
	cublasStatus_t st = cublasCreate(&m->h);
	if (st != CUBLAS_STATUS_SUCCESS) {
		m->h = NULL;
		blas_check(m, st, "cublasCreate");
	} else {
		blas_check(m, cublasSetStream(m->h, m->s), "cublasSetStream");
	}
	cu_check(m, cudaMemcpyAsync(m->params, params, m->P * sizeof(float),
				    cudaMemcpyHostToDevice, m->s),
		 "copying the initial weights");
	/* each of its own: nothing assumes how layout() placed them */
	float *const zero[] = { m->grads, m->adam_m, m->adam_v };
	for (int i = 0; i < 3; i++)
		cu_check(m, cudaMemsetAsync(zero[i], 0, m->P * sizeof(float),
					    m->s),
			 "zeroing gradients and moments");
	cast(m, m->wbf, m->params, m->P);
	sd_nccl_train_sync(m, 0, NULL, 0);
	if (m->rc) {
		rc = report(m, err, errlen);
		sd_nccl_train_destroy(m);
		return rc;
	}
	*out = m;
	return SD_OK;
}

extern "C" void sd_nccl_train_destroy(struct sd_train_gpu *m)
{
	if (!m)
		return;
	if (m->s)
		cudaStreamSynchronize(m->s);
	if (m->h)
		cublasDestroy(m->h);
	if (m->block)
		cudaFree(m->block);
	free(m->t);
	free(m->la);
	free(m->h_losses);
	free(m);
}

extern "C" float *sd_nccl_train_grads(struct sd_train_gpu *m)
{
	return m->grads;
}

extern "C" int sd_nccl_train_sync(struct sd_train_gpu *m, int timeout_ms,
				  char *err, size_t errlen)
{
	struct timespec t0, now, nap = { 0, 50000 };
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		cudaError_t e = cudaStreamQuery(m->s);
		if (e == cudaSuccess)
			break;
		if (e != cudaErrorNotReady) {
			cu_check(m, e, "the stream");
			break;
		}
		clock_gettime(CLOCK_MONOTONIC, &now);
		double ms = (now.tv_sec - t0.tv_sec) * 1e3 +
			    (now.tv_nsec - t0.tv_nsec) / 1e6;
		if (timeout_ms > 0 && ms > timeout_ms) {
			char d[100];
			snprintf(d, sizeof(d), "not done after %d ms; the GPU "
				 "is hung or far too slow", timeout_ms);
			failf(m, SD_ERR_TIMEOUT, "waiting for the step", d);
			break;
		}
		nanosleep(&nap, NULL);
	}
	return report(m, err, errlen);
}

extern "C" int sd_nccl_train_read_params(struct sd_train_gpu *m, float *host,
					 char *err, size_t errlen)
{
	cu_check(m, cudaMemcpyAsync(host, m->params, m->P * sizeof(float),
				    cudaMemcpyDeviceToHost, m->s),
		 "reading the weights");
	return sd_nccl_train_sync(m, 0, err, errlen);
}

extern "C" int sd_nccl_train_zero_grad(struct sd_train_gpu *m, char *err,
				       size_t errlen)
{
	cu_check(m, cudaMemsetAsync(m->grads, 0, m->P * sizeof(float), m->s),
		 "zeroing the gradients");
	return report(m, err, errlen);
}

/* ---- forward, backward, optimizer ------------------------------------ */

static float *tp(struct sd_train_gpu *m, float *base, int idx)
{
	return base + m->t[idx].offset;
}

static bf16 *tw(struct sd_train_gpu *m, int idx)
{
	return m->wbf + m->t[idx].offset;
}

static int lt(int l, int k)
{
	return T_FIRST_LAYER + l * T_PER_LAYER + k;
}

extern "C" int sd_nccl_train_forward(struct sd_train_gpu *m,
				     const int *inputs, const int *targets,
				     double *loss, char *err, size_t errlen)
{
	const struct sd_gpt_config *c = &m->cfg;
	int B = c->micro_batch, T = c->seq_len, C = c->width, V = c->vocab;
	int NH = c->heads, N = B * T, hs = C / NH, C3 = 3 * C;
	float scale = 1.0f / sqrtf((float)hs);
	long long TT = (long long)T * T;
	float *P = m->params;
	const float *x;

	m->have_forward = 0;
	for (int i = 0; i < N; i++)
		if (inputs[i] < 0 || inputs[i] >= V || targets[i] < 0 ||
		    targets[i] >= V) {
			int in = inputs[i] < 0 || inputs[i] >= V;
			snprintf(err, errlen, "%s token %d at sample %d position "
				 "%d is outside the vocabulary 0..%d; use a "
				 "vocab that covers the data",
				 in ? "input" : "target",
				 in ? inputs[i] : targets[i], i / T, i % T,
				 V - 1);
			return SD_ERR_INVALID;
		}
	cu_check(m, cudaMemcpyAsync(m->inputs, inputs, N * sizeof(int),
				    cudaMemcpyHostToDevice, m->s),
		 "copying the inputs");
	cu_check(m, cudaMemcpyAsync(m->targets, targets, N * sizeof(int),
				    cudaMemcpyHostToDevice, m->s),
		 "copying the targets");
	if (m->rc)
		return report(m, err, errlen);
	size_t nc = (size_t)N * C;
	k_encoder_fwd<<<blocks(nc), TPB, 0, m->s>>>(
		m->encoded, m->inputs, tp(m, P, T_WTE), tp(m, P, T_WPE), T, C,
		nc);
	launched(m, "embedding kernel");
	x = m->encoded;
	for (int l = 0; l < c->layers && !m->rc; l++) {
		struct layer_acts *a = &m->la[l];
#define W(k) tp(m, P, lt(l, (k)))
#define WB(k) tw(m, lt(l, (k)))
		k_layernorm_fwd<<<N, TPB, 0, m->s>>>(a->ln1, a->ln1_mean,
						     a->ln1_rstd, x, W(T_LN1_W),
						     W(T_LN1_B), C);
		launched(m, "layernorm kernel");
		matmul_fwd(m, a->qkv, a->ln1, WB(T_QKV_W), W(T_QKV_B), NULL, N,
			   C, C3);
		cast(m, a->qkv_bf, a->qkv, (size_t)N * C3);
		/* S = scale Q K^T per sample, batched over the heads */
		for (int b = 0; b < B; b++) {
			const bf16 *q = a->qkv_bf + (size_t)b * T * C3;
			gemm(m, 0, 1, T, T, hs, scale, q, C3, hs, q + C, C3, hs,
			     0.0f, a->att + (size_t)b * NH * TT, CUDA_R_32F, T,
			     TT, NH);
		}
		if (m->rc)
			break;
		k_softmax_causal<<<B * NH * T, 128, 0, m->s>>>(a->att,
							       a->att_bf, T);
		launched(m, "softmax kernel");
		/* Y = P V */
		for (int b = 0; b < B; b++) {
			const bf16 *v = a->qkv_bf + (size_t)b * T * C3 + 2 * C;
			gemm(m, 0, 0, T, hs, T, 1.0f,
			     a->att_bf + (size_t)b * NH * TT, T, TT, v, C3, hs,
			     0.0f, a->atty + (size_t)b * T * C, CUDA_R_16BF, C,
			     hs, NH);
		}
		matmul_fwd(m, a->res2, a->atty, WB(T_ATTPROJ_W),
			   W(T_ATTPROJ_B), x, N, C, C);
		if (m->rc)
			break;
		k_layernorm_fwd<<<N, TPB, 0, m->s>>>(a->ln2, a->ln2_mean,
						     a->ln2_rstd, a->res2,
						     W(T_LN2_W), W(T_LN2_B), C);
		launched(m, "layernorm kernel");
		matmul_fwd(m, a->fch, a->ln2, WB(T_FC_W), W(T_FC_B), NULL, N, C,
			   4 * C);
		if (m->rc)
			break;
		size_t n4 = (size_t)N * 4 * C;
		k_gelu_fwd<<<blocks(n4), TPB, 0, m->s>>>(a->fch_gelu, a->fch,
							 n4);
		launched(m, "gelu kernel");
		matmul_fwd(m, a->res3, a->fch_gelu, WB(T_FCPROJ_W),
			   W(T_FCPROJ_B), a->res2, N, 4 * C, C);
#undef W
#undef WB
		x = a->res3;
	}
	if (m->rc)
		return report(m, err, errlen);
	k_layernorm_fwd<<<N, TPB, 0, m->s>>>(m->lnf, m->lnf_mean, m->lnf_rstd,
					     x, tp(m, P, m->nt - 2),
					     tp(m, P, m->nt - 1), C);
	launched(m, "layernorm kernel");
	gemm(m, 0, 1, N, V, C, 1.0f, m->lnf, C, 0, tw(m, T_WTE), C, 0, 0.0f,
	     m->logits, CUDA_R_32F, V, 0, 1);
	if (m->rc)
		return report(m, err, errlen);
	k_ce_fwd<<<N, TPB, 0, m->s>>>(m->logits, m->losses, m->targets, V);
	launched(m, "cross-entropy kernel");
	cu_check(m, cudaMemcpyAsync(m->h_losses, m->losses, N * sizeof(float),
				    cudaMemcpyDeviceToHost, m->s),
		 "reading the loss");
	if (sd_nccl_train_sync(m, 0, err, errlen))
		return m->rc;
	double total = 0;
	for (int i = 0; i < N; i++)
		total += m->h_losses[i];
	*loss = total / N;
	m->have_forward = 1;
	return SD_OK;
}

#define READY(idx)                                                           \
	do {                                                                 \
		if (grad_ready && !m->rc)                                    \
			grad_ready(ctx, (idx));                              \
	} while (0)

extern "C" int sd_nccl_train_backward(struct sd_train_gpu *m,
				      void (*grad_ready)(void *, int),
				      void *ctx, char *err, size_t errlen)
{
	const struct sd_gpt_config *c = &m->cfg;
	int B = c->micro_batch, T = c->seq_len, C = c->width, V = c->vocab;
	int NH = c->heads, N = B * T, L = c->layers, hs = C / NH, C3 = 3 * C;
	float scale = 1.0f / sqrtf((float)hs);
	long long TT = (long long)T * T;
	float *P = m->params, *G = m->grads;
	int lnf_w = m->nt - 2, lnf_b = m->nt - 1;
	size_t nc = (size_t)N * C;

	if (!m->have_forward) {
		snprintf(err, errlen, "backward without a forward before it; "
			 "call forward on the micro-batch first");
		return SD_ERR_INVALID;
	}
	m->have_forward = 0;
	if (m->rc)
		return report(m, err, errlen);

	size_t nv = (size_t)N * V;
	k_ce_bwd<<<blocks(nv), TPB, 0, m->s>>>(m->dlogits, m->logits,
					       m->targets, V, 1.0f / N, nv);
	launched(m, "cross-entropy backward kernel");
	/* the tied head: dlnf = dlogits wte; dwte += dlogits^T lnf */
	gemm(m, 0, 0, N, C, V, 1.0f, m->dlogits, V, 0, tw(m, T_WTE), C, 0,
	     0.0f, m->dbuf_c, CUDA_R_32F, C, 0, 1);
	gemm(m, 1, 0, V, C, N, 1.0f, m->dlogits, V, 0, m->lnf, C, 0, 1.0f,
	     tp(m, G, T_WTE), CUDA_R_32F, C, 0, 1);
	cu_check(m, cudaMemsetAsync(m->dres, 0, nc * sizeof(float), m->s),
		 "zeroing the residual gradient");
	if (m->rc)
		return report(m, err, errlen);
	k_layernorm_bwd<<<N, TPB, 0, m->s>>>(
		m->dres, tp(m, G, lnf_w), tp(m, G, lnf_b), m->dbuf_c,
		L ? m->la[L - 1].res3 : m->encoded, tp(m, P, lnf_w),
		m->lnf_mean, m->lnf_rstd, C);
	launched(m, "layernorm backward kernel");
	READY(lnf_b);
	READY(lnf_w);

	for (int l = L - 1; l >= 0 && !m->rc; l--) {
		struct layer_acts *a = &m->la[l];
		const float *x = l ? m->la[l - 1].res3 : m->encoded;
#define W(k) tp(m, P, lt(l, (k)))
#define WB(k) tw(m, lt(l, (k)))
#define D(k) tp(m, G, lt(l, (k)))
#define READY2(kw, kb)                                                       \
	do {                                                                 \
		READY(lt(l, (kb)));                                          \
		READY(lt(l, (kw)));                                          \
	} while (0)
		size_t n4 = (size_t)N * 4 * C;
		/* MLP */
		cast(m, m->dres_bf, m->dres, nc);
		matmul_bwd(m, m->dbuf_4c, D(T_FCPROJ_W), D(T_FCPROJ_B),
			   m->dres_bf, m->dres, a->fch_gelu, WB(T_FCPROJ_W), N,
			   4 * C, C);
		READY2(T_FCPROJ_W, T_FCPROJ_B);
		if (m->rc)
			break;
		k_gelu_bwd<<<blocks(n4), TPB, 0, m->s>>>(m->dbuf_4c, m->d4c_bf,
							 a->fch, n4);
		launched(m, "gelu backward kernel");
		matmul_bwd(m, m->dbuf_c, D(T_FC_W), D(T_FC_B), m->d4c_bf,
			   m->dbuf_4c, a->ln2, WB(T_FC_W), N, C, 4 * C);
		READY2(T_FC_W, T_FC_B);
		if (m->rc)
			break;
		k_layernorm_bwd<<<N, TPB, 0, m->s>>>(
			m->dres, D(T_LN2_W), D(T_LN2_B), m->dbuf_c, a->res2,
			W(T_LN2_W), a->ln2_mean, a->ln2_rstd, C);
		launched(m, "layernorm backward kernel");
		READY2(T_LN2_W, T_LN2_B);
		/* attention */
		cast(m, m->dres_bf, m->dres, nc);
		matmul_bwd(m, m->dbuf_c, D(T_ATTPROJ_W), D(T_ATTPROJ_B),
			   m->dres_bf, m->dres, a->atty, WB(T_ATTPROJ_W), N, C,
			   C);
		READY2(T_ATTPROJ_W, T_ATTPROJ_B);
		cast(m, m->dc_bf, m->dbuf_c, nc);
		for (int b = 0; b < B; b++) {
			const bf16 *q = a->qkv_bf + (size_t)b * T * C3;
			const bf16 *dy = m->dc_bf + (size_t)b * T * C;
			/* dP = dY V^T; dV = P^T dY */
			gemm(m, 0, 1, T, T, hs, 1.0f, dy, C, hs, q + 2 * C, C3,
			     hs, 0.0f, m->dS + (size_t)b * NH * TT, CUDA_R_32F,
			     T, TT, NH);
			gemm(m, 1, 0, T, hs, T, 1.0f,
			     a->att_bf + (size_t)b * NH * TT, T, TT, dy, C, hs,
			     0.0f, m->dqkv + (size_t)b * T * C3 + 2 * C,
			     CUDA_R_32F, C3, hs, NH);
		}
		if (m->rc)
			break;
		k_softmax_bwd<<<B * NH * T, 128, 0, m->s>>>(m->dS_bf, m->dS,
							    a->att, T);
		launched(m, "softmax backward kernel");
		for (int b = 0; b < B; b++) {
			const bf16 *q = a->qkv_bf + (size_t)b * T * C3;
			const bf16 *ds = m->dS_bf + (size_t)b * NH * TT;
			float *dq = m->dqkv + (size_t)b * T * C3;
			/* dQ = scale dS K; dK = scale dS^T Q */
			gemm(m, 0, 0, T, hs, T, scale, ds, T, TT, q + C, C3, hs,
			     0.0f, dq, CUDA_R_32F, C3, hs, NH);
			gemm(m, 1, 0, T, hs, T, scale, ds, T, TT, q, C3, hs,
			     0.0f, dq + C, CUDA_R_32F, C3, hs, NH);
		}
		cast(m, m->dqkv_bf, m->dqkv, (size_t)N * C3);
		matmul_bwd(m, m->dbuf_c, D(T_QKV_W), D(T_QKV_B), m->dqkv_bf,
			   m->dqkv, a->ln1, WB(T_QKV_W), N, C, C3);
		READY2(T_QKV_W, T_QKV_B);
		if (m->rc)
			break;
		k_layernorm_bwd<<<N, TPB, 0, m->s>>>(
			m->dres, D(T_LN1_W), D(T_LN1_B), m->dbuf_c, x,
			W(T_LN1_W), a->ln1_mean, a->ln1_rstd, C);
		launched(m, "layernorm backward kernel");
		READY2(T_LN1_W, T_LN1_B);
#undef READY2
#undef D
#undef WB
#undef W
	}
	if (m->rc)
		return report(m, err, errlen);
	k_encoder_bwd<<<blocks(nc), TPB, 0, m->s>>>(
		tp(m, G, T_WTE), tp(m, G, T_WPE), m->dres, m->inputs, T, C, nc);
	launched(m, "embedding backward kernel");
	READY(T_WPE);
	READY(T_WTE);
	return report(m, err, errlen);
}
#undef READY

extern "C" int sd_nccl_train_adamw(struct sd_train_gpu *m,
				   const struct sd_adamw *o, float grad_scale,
				   char *err, size_t errlen)
{
	if (m->rc)
		return report(m, err, errlen);
	m->adam_t++;
	float step_size =
		(float)(o->lr / (1.0 - pow(o->beta1, (double)m->adam_t)));
	float inv_sqrt_bc2 =
		(float)(1.0 / sqrt(1.0 - pow(o->beta2, (double)m->adam_t)));
	for (int i = 0; i < m->nt && !m->rc; i++) {
		const struct sd_gpt_tensor *t = &m->t[i];
		float decay = t->decay ? 1.0f - o->lr * o->weight_decay : 1.0f;
		size_t off = t->offset;
		k_adamw<<<blocks(t->count), TPB, 0, m->s>>>(
			m->params + off, m->grads + off, m->adam_m + off,
			m->adam_v + off, m->wbf + off, t->count, o->beta1,
			o->beta2, o->eps, decay, step_size, inv_sqrt_bc2,
			grad_scale);
		launched(m, "adamw kernel");
	}
	return report(m, err, errlen);
}
