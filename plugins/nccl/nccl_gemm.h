/*
 * nccl_gemm.h - the NCCL plugin's matrix multiply (`shakedown gemm`, the
 * gemm slot of include/shakedown/backend.h) on the rank's GPU, through
 * cuBLAS and cuBLASLt (nccl_gemm.c).  nccl_plugin.c's slot checks its
 * communicator and calls sd_nccl_gemm with the rank's stream and GPU.
 */
#ifndef SD_NCCL_GEMM_H
#define SD_NCCL_GEMM_H

#include <stddef.h>
#include <cuda_runtime_api.h>
#include "shakedown/backend.h"

/* The GPU the series runs on: its compute capability and how messages
 * name it ("GPU 0 (NVIDIA H200, 0000:1b:00.0) on node03"). */
struct sd_nccl_gpu {
	int cc_major, cc_minor;
	const char *what;
};

/*
 * One series of matrix multiplies on the current device (the rank's,
 * chosen by init) and `stream`, with the slot's contract: A and B filled
 * from the pattern (B stored transposed: the "TN" layout every type takes
 * and FP8 requires), a->warmup_iters untimed calls, a->iters calls each
 * between two CUDA events, the wait polled up to a->timeout_ms, then the
 * times and the sampled elements.  fp32, tf32, bf16, fp16 through
 * cublasGemmEx; fp8 through cublasLtMatmul.  Returns SD_OK, SD_ERR_INVALID
 * (the type does not run on this GPU: bf16 and tf32 below compute
 * capability 8.0, fp8 below 8.9 or with a side not a multiple of 16, each
 * said in err), SD_ERR_NOMEM, SD_ERR_TIMEOUT (the device memory is then
 * left, not freed while the GPU may still use it) or SD_ERR_BACKEND.
 */
int sd_nccl_gemm(cudaStream_t stream, const struct sd_nccl_gpu *gpu,
		 const struct sd_gemm_args *a, struct sd_gemm_result *r,
		 char *err, size_t errlen);

/* Seconds on the monotonic clock, and a nap of us microseconds that
 * signals do not cut short (nccl_plugin.c's, shared). */
double sd_nccl_now_s(void);
void sd_nccl_nap_us(long us);

/* Free the cuBLAS handles made by the first series (process tear-down). */
void sd_nccl_gemm_fini(void);

#endif
