/*
 * nccl_gemm.c - matrix multiplies on the rank's GPU for `shakedown gemm`
 * (see nccl_gemm.h): cuBLAS for fp32, tf32, bf16 and fp16, cuBLASLt for
 * fp8, timed with CUDA events.
 *
 * The core asks for C = A B in logical row-major terms (A m x k, B k x n).
 * cuBLAS is column-major, so the call computes C^T = B^T A^T: a row-major
 * m x n matrix is a column-major n x m one, A stored row-major is A^T
 * (k x m, ld k) untransposed, and B stored transposed (n x k row-major,
 * kernels' fill) is B (k x n, ld k) to be transposed: op(first) = T,
 * op(second) = N, the "TN" layout FP8 requires and every type takes.
 * The product's element (i, j) is then at i*n + j, as the core indexes
 * it.
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include "shakedown/pattern.h"
#include "gemm_kernels.h"
#include "nccl_gemm.h"

/* cuBLASLt's workspace for fp8: what NVIDIA recommends for Hopper. */
#define SD_NCCL_GEMM_WORKSPACE (32u << 20)

/* The handles, made by the first series and kept for the process. */
static cublasHandle_t blas;
static cublasLtHandle_t lt;

void sd_nccl_gemm_fini(void)
{
	if (blas)
		cublasDestroy(blas);
	if (lt)
		cublasLtDestroy(lt);
	blas = NULL;
	lt = NULL;
}

/* Whether type t runs on this GPU; 0, or -1 with err saying why not. */
static int type_here(const struct sd_nccl_gpu *gpu,
		     const struct sd_gemm_args *a, char *err, size_t errlen)
{
	int cc = gpu->cc_major * 10 + gpu->cc_minor;
	const char *tn = a->type == SD_GEMM_TF32 ? "tf32"
			 : a->type == SD_GEMM_BF16 ? "bf16" : "fp8";
	if ((a->type == SD_GEMM_TF32 || a->type == SD_GEMM_BF16) && cc < 80) {
		snprintf(err, errlen, "%s needs compute capability 8.0 or "
			 "newer; %s has %d.%d", tn, gpu->what, gpu->cc_major,
			 gpu->cc_minor);
		return -1;
	}
	if (a->type == SD_GEMM_FP8 && cc < 89) {
		snprintf(err, errlen, "fp8 needs compute capability 8.9 or "
			 "newer; %s has %d.%d", gpu->what, gpu->cc_major,
			 gpu->cc_minor);
		return -1;
	}
	if (a->type == SD_GEMM_FP8 &&
	    (a->m % 16 || a->n % 16 || a->k % 16)) {
		snprintf(err, errlen, "fp8 through cuBLASLt needs m, n and k "
			 "multiples of 16, not %llux%llux%llu",
			 (unsigned long long)a->m, (unsigned long long)a->n,
			 (unsigned long long)a->k);
		return -1;
	}
	if (a->m > INT32_MAX || a->n > INT32_MAX || a->k > INT32_MAX) {
		snprintf(err, errlen, "a side of %llux%llux%llu is larger than "
			 "cuBLAS takes", (unsigned long long)a->m,
			 (unsigned long long)a->n, (unsigned long long)a->k);
		return -1;
	}
	return 0;
}

/* What one series needs on the device, freed together. */
struct series {
	void *a, *b, *c, *ws;
	uint64_t *idx;
	double *out;
	cudaEvent_t *start, *stop;
	int nev;
	cublasLtMatmulDesc_t op;
	cublasLtMatrixLayout_t la, lb, lc;
	cublasLtMatmulPreference_t pref;
	cublasLtMatmulHeuristicResult_t heur;
};

static void series_free(struct series *s)
{
	for (int i = 0; i < s->nev; i++) {
		cudaEventDestroy(s->start[i]);
		cudaEventDestroy(s->stop[i]);
	}
	free(s->start);
	free(s->stop);
	if (s->pref)
		cublasLtMatmulPreferenceDestroy(s->pref);
	if (s->la)
		cublasLtMatrixLayoutDestroy(s->la);
	if (s->lb)
		cublasLtMatrixLayoutDestroy(s->lb);
	if (s->lc)
		cublasLtMatrixLayoutDestroy(s->lc);
	if (s->op)
		cublasLtMatmulDescDestroy(s->op);
	cudaFree(s->a);
	cudaFree(s->b);
	cudaFree(s->c);
	cudaFree(s->ws);
	cudaFree(s->idx);
	cudaFree(s->out);
}

/* The cuBLASLt plan of an fp8 product: descriptors and the heuristic's
 * first algorithm.  SD_OK, or a status with err. */
static int fp8_plan(struct series *s, const struct sd_gemm_args *a,
		    const char *what, char *err, size_t errlen)
{
	cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
	int8_t fast = 0; /* keep promoting the sums to float32 */
	uint64_t ws = SD_NCCL_GEMM_WORKSPACE;
	int found = 0;
	cublasStatus_t st;
	if ((st = cublasLtMatmulDescCreate(&s->op, CUBLAS_COMPUTE_32F,
					   CUDA_R_32F)) ||
	    (st = cublasLtMatmulDescSetAttribute(s->op,
			CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof(ta))) ||
	    (st = cublasLtMatmulDescSetAttribute(s->op,
			CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof(tb))) ||
	    (st = cublasLtMatmulDescSetAttribute(s->op,
			CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast,
			sizeof(fast))) ||
	    /* as stored: B^T (k x n, ld k), A^T (k x m, ld k), C^T
	     * (n x m, ld n) */
	    (st = cublasLtMatrixLayoutCreate(&s->la, CUDA_R_8F_E4M3, a->k,
					     a->n, (int64_t)a->k)) ||
	    (st = cublasLtMatrixLayoutCreate(&s->lb, CUDA_R_8F_E4M3, a->k,
					     a->m, (int64_t)a->k)) ||
	    (st = cublasLtMatrixLayoutCreate(&s->lc, CUDA_R_16BF, a->n, a->m,
					     (int64_t)a->n)) ||
	    (st = cublasLtMatmulPreferenceCreate(&s->pref)) ||
	    (st = cublasLtMatmulPreferenceSetAttribute(s->pref,
			CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws,
			sizeof(ws))) ||
	    (st = cublasLtMatmulAlgoGetHeuristic(lt, s->op, s->la, s->lb,
						 s->lc, s->lc, s->pref, 1,
						 &s->heur, &found))) {
		snprintf(err, errlen, "fp8 on %s: cuBLASLt: %s", what,
			 cublasLtGetStatusString(st));
		return st == CUBLAS_STATUS_NOT_SUPPORTED ? SD_ERR_INVALID
							 : SD_ERR_BACKEND;
	}
	if (!found) {
		snprintf(err, errlen, "fp8 on %s: cuBLASLt has no kernel for "
			 "%llux%llux%llu", what, (unsigned long long)a->m,
			 (unsigned long long)a->n, (unsigned long long)a->k);
		return SD_ERR_INVALID;
	}
	return SD_OK;
}

/* Enqueue one product. */
static cublasStatus_t one_call(struct series *s, const struct sd_gemm_args *a,
			       cudaStream_t stream)
{
	const float one = 1.0f, zero = 0.0f;
	int m = (int)a->m, n = (int)a->n, k = (int)a->k;
	cudaDataType in = CUDA_R_32F, out = CUDA_R_32F;
	cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
	switch (a->type) {
	case SD_GEMM_FP8:
		return cublasLtMatmul(lt, s->op, &one, s->b, s->la, s->a, s->lb,
				      &zero, s->c, s->lc, s->c, s->lc,
				      &s->heur.algo, s->ws,
				      SD_NCCL_GEMM_WORKSPACE, stream);
	case SD_GEMM_TF32: compute = CUBLAS_COMPUTE_32F_FAST_TF32; break;
	case SD_GEMM_BF16: in = out = CUDA_R_16BF; break;
	case SD_GEMM_FP16: in = out = CUDA_R_16F; break;
	default: break;
	}
	/* C^T (n x m) = op(B stored) (n x k) x A^T (k x m) */
	return cublasGemmEx(blas, CUBLAS_OP_T, CUBLAS_OP_N, n, m, k, &one,
			    s->b, in, k, s->a, in, k, &zero, s->c, out, n,
			    compute, CUBLAS_GEMM_DEFAULT);
}

int sd_nccl_gemm(cudaStream_t stream, const struct sd_nccl_gpu *gpu,
		 const struct sd_gemm_args *a, struct sd_gemm_result *r,
		 char *err, size_t errlen)
{
	struct series s;
	cudaError_t e = cudaSuccess;
	cublasStatus_t st;
	int rc = SD_ERR_BACKEND, leak = 0;
	const char *what = gpu->what;
	memset(&s, 0, sizeof(s));
	if (type_here(gpu, a, err, errlen))
		return SD_ERR_INVALID;
	if (!blas && (st = cublasCreate(&blas)) != CUBLAS_STATUS_SUCCESS) {
		blas = NULL;
		snprintf(err, errlen, "%s: cublasCreate: %s", what,
			 cublasGetStatusString(st));
		return SD_ERR_BACKEND;
	}
	if (!lt && (st = cublasLtCreate(&lt)) != CUBLAS_STATUS_SUCCESS) {
		lt = NULL;
		snprintf(err, errlen, "%s: cublasLtCreate: %s", what,
			 cublasLtGetStatusString(st));
		return SD_ERR_BACKEND;
	}
	if ((st = cublasSetStream(blas, stream)) != CUBLAS_STATUS_SUCCESS) {
		snprintf(err, errlen, "%s: cublasSetStream: %s", what,
			 cublasGetStatusString(st));
		return SD_ERR_BACKEND;
	}

	/* memory: the three matrices, the samples, fp8's workspace */
	enum sd_dtype in = sd_gemm_in_dtype(a->type),
		      out = sd_gemm_out_dtype(a->type);
	size_t bytes_a = (size_t)(a->m * a->k) * sd_dtype_size(in);
	size_t bytes_b = (size_t)(a->k * a->n) * sd_dtype_size(in);
	size_t bytes_c = (size_t)(a->m * a->n) * sd_dtype_size(out);
	size_t bytes_s = a->nsample * (sizeof(uint64_t) + sizeof(double));
	size_t ws = a->type == SD_GEMM_FP8 ? SD_NCCL_GEMM_WORKSPACE : 0;
	size_t free_b = 0, total_b = 0;
	cudaMemGetInfo(&free_b, &total_b);
	size_t need = bytes_a + bytes_b + bytes_c + bytes_s + ws;
	if (free_b && need + (256u << 20) > free_b) {
		snprintf(err, errlen, "%s: %llux%llux%llu %s needs %.1f MiB of "
			 "GPU memory and %.1f MiB are free; use smaller --sizes, "
			 "--width or --tokens", what, (unsigned long long)a->m,
			 (unsigned long long)a->n, (unsigned long long)a->k,
			 a->type == SD_GEMM_FP8 ? "fp8" : "product",
			 need / 1048576.0, free_b / 1048576.0);
		return SD_ERR_NOMEM;
	}
	if ((e = cudaMalloc(&s.a, bytes_a)) || (e = cudaMalloc(&s.b, bytes_b)) ||
	    (e = cudaMalloc(&s.c, bytes_c)) ||
	    (ws && (e = cudaMalloc(&s.ws, ws))) ||
	    (a->nsample &&
	     ((e = cudaMalloc((void **)&s.idx,
			      a->nsample * sizeof(uint64_t))) ||
	      (e = cudaMalloc((void **)&s.out,
			      a->nsample * sizeof(double)))))) {
		snprintf(err, errlen, "%s: cudaMalloc: %s; use smaller --sizes",
			 what, cudaGetErrorString(e));
		rc = SD_ERR_NOMEM;
		goto out;
	}
	int total = a->warmup_iters + a->iters;
	s.start = calloc((size_t)a->iters, sizeof(cudaEvent_t));
	s.stop = calloc((size_t)a->iters, sizeof(cudaEvent_t));
	if (!s.start || !s.stop) {
		snprintf(err, errlen, "%s: out of host memory", what);
		rc = SD_ERR_NOMEM;
		goto out;
	}
	for (; s.nev < a->iters; s.nev++)
		if ((e = cudaEventCreate(&s.start[s.nev])) ||
		    (e = cudaEventCreate(&s.stop[s.nev]))) {
			if (e && s.start[s.nev])
				cudaEventDestroy(s.start[s.nev]);
			snprintf(err, errlen, "%s: cudaEventCreate: %s", what,
				 cudaGetErrorString(e));
			goto out;
		}

	/* the inputs, on the device (A as it is, B transposed) */
	if ((e = (cudaError_t)sd_cu_gemm_fill(s.a, a->type, a->seed, 0, a->m,
					      a->k, 0, stream)) ||
	    (e = (cudaError_t)sd_cu_gemm_fill(s.b, a->type, a->seed, 1, a->k,
					      a->n, 1, stream))) {
		snprintf(err, errlen, "%s: filling the matrices: %s", what,
			 cudaGetErrorString(e));
		goto out;
	}
	if (a->type == SD_GEMM_FP8 && (rc = fp8_plan(&s, a, what, err, errlen)))
		goto out;
	rc = SD_ERR_BACKEND;

	/* the calls, back to back; a planted slow device waits before each
	 * timed one, on an idle GPU so that the wait is inside its time */
	for (int it = 0; it < total; it++) {
		int timed = it - a->warmup_iters;
		if (timed >= 0 && a->delay_us > 0) {
			cudaStreamSynchronize(stream);
			cudaEventRecord(s.start[timed], stream);
			sd_nccl_nap_us(a->delay_us);
		} else if (timed >= 0) {
			cudaEventRecord(s.start[timed], stream);
		}
		if ((st = one_call(&s, a, stream)) != CUBLAS_STATUS_SUCCESS) {
			snprintf(err, errlen, "%s: %s %llux%llux%llu: %s", what,
				 a->type == SD_GEMM_FP8 ? "cublasLtMatmul"
							: "cublasGemmEx",
				 (unsigned long long)a->m,
				 (unsigned long long)a->n,
				 (unsigned long long)a->k,
				 cublasGetStatusString(st));
			rc = st == CUBLAS_STATUS_NOT_SUPPORTED ||
					     st == CUBLAS_STATUS_ARCH_MISMATCH
				     ? SD_ERR_INVALID : SD_ERR_BACKEND;
			/* queued work may still run: leave its memory */
			leak = 1;
			goto out;
		}
		if (timed >= 0)
			cudaEventRecord(s.stop[timed], stream);
	}

	/* the wait, polled up to the timeout */
	double deadline = sd_nccl_now_s() + (a->timeout_ms > 0 ? a->timeout_ms
							: 600000) / 1e3;
	while ((e = cudaEventQuery(s.stop[a->iters - 1])) == cudaErrorNotReady) {
		if (sd_nccl_now_s() > deadline) {
			snprintf(err, errlen, "%s: %d calls of %llux%llux%llu "
				 "did not finish within %.1f s; use smaller "
				 "--sizes, fewer -n, or a longer --timeout", what,
				 total, (unsigned long long)a->m,
				 (unsigned long long)a->n,
				 (unsigned long long)a->k, a->timeout_ms / 1e3);
			rc = SD_ERR_TIMEOUT;
			leak = 1;
			goto out;
		}
		sd_nccl_nap_us(100);
	}
	if (e != cudaSuccess) {
		snprintf(err, errlen, "%s: the matrix multiplies failed: %s", what,
			 cudaGetErrorString(e));
		leak = 1;
		goto out;
	}
	for (int i = 0; i < a->iters; i++) {
		float ms = 0;
		if ((e = cudaEventElapsedTime(&ms, s.start[i], s.stop[i]))) {
			snprintf(err, errlen, "%s: cudaEventElapsedTime: %s",
				 what, cudaGetErrorString(e));
			goto out;
		}
		r->time_us[i] = (double)ms * 1e3;
	}

	/* the elements the core checks, from the last product */
	if (a->nsample &&
	    ((e = cudaMemcpyAsync(s.idx, a->sample_index,
				  a->nsample * sizeof(uint64_t),
				  cudaMemcpyHostToDevice, stream)) ||
	     (e = (cudaError_t)sd_cu_gemm_gather(s.c, out, s.idx, s.out,
						 a->nsample, stream)) ||
	     (e = cudaMemcpyAsync(r->sample_value, s.out,
				  a->nsample * sizeof(double),
				  cudaMemcpyDeviceToHost, stream)) ||
	     (e = cudaStreamSynchronize(stream)))) {
		snprintf(err, errlen, "%s: reading the product back: %s", what,
			 cudaGetErrorString(e));
		goto out;
	}
	snprintf(r->impl, sizeof(r->impl), "%s",
		 a->type == SD_GEMM_FP8 ? "cublasLtMatmul" : "cublasGemmEx");
	rc = SD_OK;
out:
	if (!leak)
		series_free(&s);
	return rc;
}
