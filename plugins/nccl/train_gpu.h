/*
 * train_gpu.h - the NCCL plugin's GPU path of the training workload
 * (include/shakedown/train_gpu.h; train_gpu.cu): the functions behind its
 * `shakedown_train_gpu` table.  nccl_plugin.c's create slot checks the
 * communicator and calls sd_nccl_train_create with the rank's stream.
 */
#ifndef SD_NCCL_TRAIN_GPU_H
#define SD_NCCL_TRAIN_GPU_H

#include <stddef.h>
#include <cuda_runtime_api.h>
#include "shakedown/train_gpu.h"

#ifdef __cplusplus
extern "C" {
#endif

/* what: how messages name the GPU ("GPU 0 (NVIDIA H200, ...) on host"). */
int sd_nccl_train_create(cudaStream_t stream, const char *what,
			 const struct sd_gpt_config *cfg,
			 const struct sd_gpt_tensor *t, int nt,
			 const float *params, struct sd_train_gpu **out,
			 char *err, size_t errlen);
void sd_nccl_train_destroy(struct sd_train_gpu *m);
int sd_nccl_train_forward(struct sd_train_gpu *m, const int *inputs,
			  const int *targets, double *loss, char *err,
			  size_t errlen);
int sd_nccl_train_backward(struct sd_train_gpu *m,
			   void (*grad_ready)(void *ctx, int tensor_index),
			   void *ctx, char *err, size_t errlen);
float *sd_nccl_train_grads(struct sd_train_gpu *m);
int sd_nccl_train_adamw(struct sd_train_gpu *m, const struct sd_adamw *o,
			float grad_scale, char *err, size_t errlen);
int sd_nccl_train_zero_grad(struct sd_train_gpu *m, char *err,
			    size_t errlen);
int sd_nccl_train_sync(struct sd_train_gpu *m, int timeout_ms, char *err,
		       size_t errlen);
int sd_nccl_train_read_params(struct sd_train_gpu *m, float *host,
			      char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif
