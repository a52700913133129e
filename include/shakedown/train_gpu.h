/*
 * train_gpu.h - the training workload's GPU path, in the plugin kit: the
 * model's shape, tensor table and AdamW settings, and the table of functions a
 * backend plugin that can train on a GPU exports as `shakedown_train_gpu`
 * (the NCCL plugin does, plugins/nccl/train_gpu.cu, when the build found
 * cuBLAS), which `shakedown train --backend nccl` looks up with dlsym in
 * the plugin it loaded.  The core never links CUDA: this header has no
 * CUDA types, and every pointer the table hands out that points into GPU
 * memory is said so.
 *
 * The model is the core's (lib/train/gpt.c), the same tensors in the same order and
 * the same arithmetic, with the precision of mixed-precision training:
 * fp32 master weights, fp32 AdamW moments and fp32 gradients (the ones
 * the DDP buckets all-reduce), bf16 copies of the weights and of the
 * activations that feed the GEMMs (cuBLAS, bf16 inputs, fp32 compute),
 * fp32 for the residual stream, LayerNorm, softmax, GELU's input and the
 * loss.  Every kernel and GEMM runs on the stream of the communicator the
 * model is made for, so an all_reduce that the command starts on a
 * gradient bucket from grad_ready (the backend's run()) is ordered after
 * the kernels that made it, with no synchronisation in between.
 */
#ifndef SHAKEDOWN_TRAIN_GPU_H
#define SHAKEDOWN_TRAIN_GPU_H

#include <stddef.h>
#include <stdint.h>

/* The shape of the model and of a step.  Field names are those a plan's
 * train section uses. */
struct sd_gpt_config {
	int layers;      /* transformer blocks */
	int width;       /* embedding width C, a multiple of heads */
	int heads;       /* attention heads; head size width / heads */
	int seq_len;     /* tokens per sample T (and position embeddings) */
	int vocab;       /* vocabulary V (256 for the byte-level source) */
	int micro_batch; /* samples per forward/backward B */
	int accum_steps; /* micro-batches accumulated per optimizer step */
};

/* One parameter tensor: its place in the parameter (and gradient) array,
 * in floats, and its shape (cols 1 for a vector). */
struct sd_gpt_tensor {
	char name[32];  /* "wte", "h.0.attn.c_attn.weight", "ln_f.bias" */
	size_t offset;  /* first element, from the start of the array */
	size_t count;   /* elements: rows * cols */
	int rows, cols;
	int decay;      /* AdamW applies weight decay (2-D tensors) */
};

/* The AdamW hyper-parameters.  Weight decay is decoupled (PyTorch's
 * AdamW: p -= lr * weight_decay * p before the Adam update) and applies
 * to the 2-D tensors only (matmul weights and both embeddings), as
 * nanoGPT configures it; LayerNorm weights and biases are not decayed. */
struct sd_adamw {
	float lr, beta1, beta2, eps, weight_decay;
};

struct sd_comm;
struct sd_train_gpu;

#define SD_TRAIN_GPU_ABI 1u
#define SD_TRAIN_GPU_SYMBOL "shakedown_train_gpu"

struct sd_train_gpu_ops {
	uint32_t abi;        /* SD_TRAIN_GPU_ABI */
	uint32_t table_size; /* sizeof(struct sd_train_gpu_ops) */

	/*
	 * Make the model for cfg on the GPU and stream of comm (a
	 * communicator of the plugin that exports this table): the tensor
	 * table t (nt entries, the core's, forward order) and the
	 * initial fp32 parameters params (sd_gpt_params() of a CPU model
	 * initialised from the seed, so both paths start from the same
	 * weights) are copied.  Returns SD_OK with *out, SD_ERR_INVALID (a
	 * table that is not gpt.c's layout), SD_ERR_NOMEM (GPU memory;
	 * err says how much) or SD_ERR_BACKEND (CUDA or cuBLAS failed).
	 */
	int (*create)(struct sd_comm *comm, const struct sd_gpt_config *cfg,
		      const struct sd_gpt_tensor *t, int nt,
		      const float *params, struct sd_train_gpu **out,
		      char *err, size_t errlen);
	/* Free everything (after waiting for the stream); NULL is fine. */
	void (*destroy)(struct sd_train_gpu *m);
	/* sd_gpt_forward() on the GPU: queues the forward, then waits for
	 * the micro-batch's mean loss (summed over rows in double here). */
	int (*forward)(struct sd_train_gpu *m, const int *inputs,
		       const int *targets, double *loss, char *err,
		       size_t errlen);
	/* sd_gpt_backward() on the GPU: queues it, calling grad_ready as
	 * each tensor's gradient kernels are queued, in the same order;
	 * returns without waiting. */
	int (*backward)(struct sd_train_gpu *m,
			void (*grad_ready)(void *ctx, int tensor_index),
			void *ctx, char *err, size_t errlen);
	/* The fp32 gradient array, in GPU memory (sd_gpt_n_params() floats,
	 * the table's layout): what the buckets all-reduce in place. */
	float *(*grads)(struct sd_train_gpu *m);
	/* sd_gpt_adamw_step() and sd_gpt_zero_grad(), queued; the step
	 * also refreshes the bf16 copies of the weights. */
	int (*adamw_step)(struct sd_train_gpu *m, const struct sd_adamw *o,
			  float grad_scale, char *err, size_t errlen);
	int (*zero_grad)(struct sd_train_gpu *m, char *err, size_t errlen);
	/* Wait for everything queued (up to timeout_ms; 0: no bound). */
	int (*sync)(struct sd_train_gpu *m, int timeout_ms, char *err,
		    size_t errlen);
	/* Copy the fp32 master parameters into host (n_params floats). */
	int (*read_params)(struct sd_train_gpu *m, float *host, char *err,
			   size_t errlen);
};

#endif
