/*
 * gemm_kernels.h - the CUDA kernels of the NCCL plugin's matrix multiply
 * (gemm_kernels.cu, compiled by nvcc), callable from its C code
 * (nccl_gemm.c).
 *
 * The fill computes the inputs of include/shakedown/pattern.h
 * (sd_gemm_input, an SD_HD function), so the device's matrices are the
 * values the core's reference uses.  Every function enqueues on `stream`
 * (a cudaStream_t) and returns a cudaError_t as int (0: success), without
 * synchronising.
 */
#ifndef SD_NCCL_GEMM_KERNELS_H
#define SD_NCCL_GEMM_KERNELS_H

#include <stdint.h>
#include "shakedown/backend.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Write matrix `which` (0: A, 1: B) of a gemm of type t, logically
 * rows x cols row-major (element r*cols + c has sd_gemm_input(seed,
 * which, r*cols + c, t)), into dst in the type's input format
 * (sd_gemm_in_dtype): as it is, or transposed (stored cols x rows: the
 * logical element (r, c) at c*rows + r).
 */
int sd_cu_gemm_fill(void *dst, enum sd_gemm_type t, uint32_t seed, int which,
		    uint64_t rows, uint64_t cols, int transposed, void *stream);

/* out[s] = element idx[s] of c (n elements of type out_dtype), as double;
 * idx and out are device memory of n entries. */
int sd_cu_gemm_gather(const void *c, enum sd_dtype out_dtype,
		      const uint64_t *idx, double *out, uint64_t n,
		      void *stream);

#ifdef __cplusplus
}
#endif
#endif
