/*
 * kernels.cu - fill, check and fault kernels of the NCCL plugin (see
 * kernels.h).  The pattern functions come from include/shakedown/pattern.h,
 * compiled here for the device through SD_HD, so GPU and host agree bit for
 * bit.  Built by nvcc for sm_80 and sm_90 plus PTX (see nccl.am).
 */
#include <cuda_runtime.h>
#include <stdint.h>

#include "shakedown/pattern.h"
#include "kernels.h"

static const int threads = 256;

/* Enough blocks to cover `count` with grid-stride loops, at most 4096. */
static unsigned int blocks_for(uint64_t count)
{
	uint64_t b = (count + threads - 1) / threads;
	if (b < 1)
		b = 1;
	return b > 4096 ? 4096u : (unsigned int)b;
}

__global__ void k_poison(enum sd_dtype t, void *buf, uint64_t count)
{
	uint64_t poison = sd_poison_bits(t);
	for (uint64_t j = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;
	     j < count; j += (uint64_t)gridDim.x * blockDim.x)
		sd_store_bits(t, buf, j, poison);
}

__global__ void k_fill_send(struct sd_op_args a, int me, int n)
{
	for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;
	     i < a.send_count; i += (uint64_t)gridDim.x * blockDim.x)
		sd_store_bits(a.dtype, a.sendbuf, i,
			      sd_encode(a.dtype, sd_pattern_send(&a, me, n, i)));
}

/* avg expects NCCL's arithmetic (SD_AVG_NCCL), not a sum then a division:
 * NCCL premultiplies floats by its rounded 1/n, which is not always exact */
__global__ void k_verify(struct sd_op_args a, int me, int n,
			 unsigned long long *result)
{
	double want;
	for (uint64_t j = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;
	     j < a.recv_count; j += (uint64_t)gridDim.x * blockDim.x) {
		if (!sd_pattern_expect_rule(&a, SD_AVG_NCCL, me, n, j, &want))
			return;
		uint64_t exp_bits = sd_encode(a.dtype, want);
		uint64_t got_bits = sd_load_bits(a.dtype, a.recvbuf, j);
		if (exp_bits == got_bits)
			continue;
		atomicAdd(&result[0], 1ull);
		atomicMin(&result[1], (unsigned long long)j);
	}
}

__global__ void k_hang(volatile int *flag, uint64_t max_ns)
{
	uint64_t start, now;
	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
	do {
		asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
	} while (*flag == 0 && now - start < max_ns);
}

extern "C" int sd_cu_fill(const struct sd_op_args *a, int me, int n,
			  void *stream)
{
	cudaStream_t s = (cudaStream_t)stream;
	int sends = sd_pattern_sends(a, me);
	if (a->fill_part != SD_FILL_SEND && sd_pattern_poisons_recv(a, me))
		if (a->recv_count)
			k_poison<<<blocks_for(a->recv_count), threads, 0, s>>>(
				a->dtype, a->recvbuf, a->recv_count);
	if (a->fill_part == SD_FILL_RECV) {
		/* the send data of the last fill is still in place */
	} else if (!sends) {
		if (!a->in_place && a->send_count)
			k_poison<<<blocks_for(a->send_count), threads, 0, s>>>(
				a->dtype, a->sendbuf, a->send_count);
	} else if (a->send_count) {
		k_fill_send<<<blocks_for(a->send_count), threads, 0, s>>>(*a, me,
									   n);
	}
	return (int)cudaGetLastError();
}

extern "C" int sd_cu_verify(const struct sd_op_args *a, int me, int n,
			    uint64_t *result, void *stream)
{
	cudaStream_t s = (cudaStream_t)stream;
	const uint64_t init[2] = { 0, UINT64_MAX };
	cudaError_t e = cudaMemcpyAsync(result, init, sizeof(init),
					cudaMemcpyHostToDevice, s);
	if (e != cudaSuccess)
		return (int)e;
	if (a->recv_count)
		k_verify<<<blocks_for(a->recv_count), threads, 0, s>>>(
			*a, me, n, (unsigned long long *)result);
	return (int)cudaGetLastError();
}

extern "C" int sd_cu_hang(volatile int *flag, int max_seconds, void *stream)
{
	k_hang<<<1, 1, 0, (cudaStream_t)stream>>>(
		flag, (uint64_t)max_seconds * 1000000000ull);
	return (int)cudaGetLastError();
}
