/*
 * gemm_kernels.cu - fill and gather kernels of the NCCL plugin's matrix
 * multiply (see gemm_kernels.h).  The inputs come from
 * include/shakedown/pattern.h, compiled here for the device through
 * SD_HD, so the GPU holds exactly the values of the core's reference.
 * Built by nvcc as kernels.cu is (see nccl.am).
 */
#include <cuda_runtime.h>
#include <stdint.h>

#include "shakedown/pattern.h"
#include "gemm_kernels.h"

static const int threads = 256;

/* Enough blocks to cover `count` with grid-stride loops, at most 8192. */
static unsigned int blocks_for(uint64_t count)
{
	uint64_t b = (count + threads - 1) / threads;
	if (b < 1)
		b = 1;
	return b > 8192 ? 8192u : (unsigned int)b;
}

__global__ void k_gemm_fill(void *dst, enum sd_gemm_type t, uint32_t seed,
			    int which, uint64_t rows, uint64_t cols,
			    int transposed)
{
	enum sd_dtype in = sd_gemm_in_dtype(t);
	uint64_t total = rows * cols;
	for (uint64_t p = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;
	     p < total; p += (uint64_t)gridDim.x * blockDim.x) {
		/* p is where it is stored; idx what it logically is */
		uint64_t idx = transposed ? (p % rows) * cols + p / rows : p;
		double v = sd_gemm_input(seed, which, idx, t);
		sd_store_bits(in, dst, p, sd_encode(in, v));
	}
}

__global__ void k_gemm_gather(const void *c, enum sd_dtype t,
			      const uint64_t *idx, double *out, uint64_t n)
{
	for (uint64_t s = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;
	     s < n; s += (uint64_t)gridDim.x * blockDim.x)
		out[s] = sd_decode(t, sd_load_bits(t, c, idx[s]));
}

extern "C" int sd_cu_gemm_fill(void *dst, enum sd_gemm_type t, uint32_t seed,
			       int which, uint64_t rows, uint64_t cols,
			       int transposed, void *stream)
{
	k_gemm_fill<<<blocks_for(rows * cols), threads, 0,
		      (cudaStream_t)stream>>>(dst, t, seed, which, rows, cols,
					      transposed);
	return (int)cudaGetLastError();
}

extern "C" int sd_cu_gemm_gather(const void *c, enum sd_dtype out_dtype,
				 const uint64_t *idx, double *out, uint64_t n,
				 void *stream)
{
	if (!n)
		return 0;
	k_gemm_gather<<<blocks_for(n), threads, 0, (cudaStream_t)stream>>>(
		c, out_dtype, idx, out, n);
	return (int)cudaGetLastError();
}
