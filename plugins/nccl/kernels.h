/*
 * kernels.h - the CUDA kernels of the NCCL plugin (kernels.cu, compiled by
 * nvcc), callable from the plugin's C code.
 *
 * The kernels compute the very values of include/shakedown/pattern.h (its
 * SD_HD functions), so the GPU fill and check are bit-exact with the host
 * reference.  Every function enqueues on `stream` (a cudaStream_t) and
 * returns a cudaError_t as int (0: success), without synchronising.
 */
#ifndef SD_NCCL_KERNELS_H
#define SD_NCCL_KERNELS_H

#include <stdint.h>
#include "shakedown/backend.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Poison a->recvbuf and write rank me's pattern into a->sendbuf, exactly
 * as sd_pattern_fill_host() does on the host. */
int sd_cu_fill(const struct sd_op_args *a, int me, int n, void *stream);

/*
 * Compare a->recvbuf with what rank me of n expects.  `result` is device
 * memory of two uint64_t: result[0] receives the count of wrong elements,
 * result[1] the lowest wrong index (UINT64_MAX when none); both are reset
 * first.  The check is bit for bit; avg expects NCCL's own arithmetic
 * (SD_AVG_NCCL in shakedown/pattern.h), not the exact mean.
 */
int sd_cu_verify(const struct sd_op_args *a, int me, int n, uint64_t *result,
		 void *stream);

/*
 * Test-only fault: a kernel that spins until *flag (mapped host memory)
 * becomes non-zero or `max_seconds` pass, so that the operations queued
 * behind it on the stream never complete in time.
 */
int sd_cu_hang(volatile int *flag, int max_seconds, void *stream);

#ifdef __cplusplus
}
#endif
#endif
