/*
 * gpt.h - the built-in training workload's model: a small decoder-only
 * transformer of the GPT-2 family in fp32 on the CPU, with its forward and
 * backward passes and an AdamW optimizer, deterministic bit for bit for a
 * given seed, configuration and OpenBLAS thread count (always one).
 *
 * The model: token and position embeddings; `layers` blocks of
 * (LayerNorm, causal multi-head self-attention with biased qkv and output
 * projections, residual add, LayerNorm, a GELU (tanh approximation) MLP of
 * 4 x width, residual add); a final LayerNorm; an LM head tied to the
 * token embedding; softmax cross-entropy, the mean over the micro-batch's
 * micro_batch x seq_len positions.  Linear weights are stored as PyTorch's
 * nn.Linear stores them, (out, in) row-major: y = x W^T + b.
 *
 * All parameters live in one contiguous float array and all gradients in
 * another of the same layout.  The tensors lie in it in forward order
 * (sd_gpt_tensors()): wte, wpe, then per block h.N.ln_1.weight ...
 * h.N.mlp.c_proj.bias, then ln_f.weight, ln_f.bias; so a run of tensors
 * consecutive in the table is one contiguous range of the gradient array,
 * and a caller can all_reduce a DDP-style bucket (reverse order) in place.
 *
 * Matmuls go through cblas_sgemm (lib/blas.h: OpenBLAS, one thread).  Nothing here
 * allocates after sd_gpt_create(): activations and scratch are reused by
 * every micro-batch.  Like all of lib/, it never prints and never exits.
 */
#ifndef SD_TRAIN_GPT_H
#define SD_TRAIN_GPT_H

#include <stddef.h>
#include <stdint.h>

/* sd_gpt_config, sd_gpt_tensor and sd_adamw are the plugin kit's: the
 * GPU path's table (shakedown/train_gpu.h) takes them */
#include "shakedown/train_gpu.h"

/*
 * The built-in default: 100 steps on 4 data-parallel ranks on a 2-core
 * host take about a minute of compute.  3.26M parameters, 21.1 MFLOP per
 * token (sd_gpt_flops_per_token()), 1024 tokens per rank and step (4 x
 * 128, accumulated twice), 4096 a step on 4 ranks.  Measured with
 * bench/train_raw on the 2-core development host (Xeon, family 6 model
 * 207, AVX-512; OpenBLAS 0.3.21 with Cooperlake kernels, one thread), with
 * other jobs running: a single-rank step takes 0.24 s on one core (4470
 * tokens/s, 86% of it in sgemm at 109 GFLOP/s), so 4 ranks x 100 steps
 * share the 2 cores for 4 x 100 x 0.24 / 2 = 48 s, plus the all_reduce
 * of 13 MB of gradients a step; `train_raw --ranks 4 --steps 100` (the 4
 * ranks' work on one core) used 100 s of CPU.  On the Markov source
 * (order 1, branching 4) the loss falls from ln 256 = 5.55 to 1.56 at
 * step 100, 0.17 above the floor ln 4 = 1.386 (bench/README-train.md).
 */
#define SD_GPT_CONFIG_DEFAULT                                                \
	{ .layers = 4, .width = 256, .heads = 4, .seq_len = 128,             \
	  .vocab = 256, .micro_batch = 4, .accum_steps = 2 }

/*
 * The test configuration for CI: the same structure, 34,688 parameters,
 * 128 tokens a step (2 x 32, accumulated twice); a step takes 0.6-0.9 ms
 * on one core of the development host (bench/train_raw --config test).
 */
#define SD_GPT_CONFIG_TEST                                                   \
	{ .layers = 2, .width = 32, .heads = 2, .seq_len = 32,               \
	  .vocab = 256, .micro_batch = 2, .accum_steps = 2 }

/*
 * A real model's shape for one GPU (no CPU runs it: a step is about 3e14
 * FLOPs): GPT-2 blocks at Llama-3.2-1B's width (2048), heads (32 of 64)
 * and MLP width (8192 = 4 x 2048), with 20 layers so that the blocks hold
 * about Llama-3.2-1B's 0.97B non-embedding parameters (a GPT-2 block has
 * 12 C^2 = 50.3M, a Llama one with grouped-query attention and SwiGLU
 * 60.8M); sequence 2048, 2 x 2048 tokens a micro-batch, accumulated 4
 * times: 16,384 tokens a step and rank.  1.011B parameters (the byte
 * vocabulary's embedding is 0.5M of them), 7.08 GFLOP per token.  On the
 * GPU path its allocations add up to about 60 GB (counted, not measured):
 * fp32 weights, gradients and both AdamW moments (16 GB), a bf16 copy
 * (2 GB), and per layer 0.5 GB of activations and the materialised
 * 2 x 32 x 2048 x 2048 attention (fp32 and bf16, 1.6 GB).
 * Synthetic weights and data, as every config: tgs and MFU are measured
 * where an operator's model would be measured; its loss has no shipped
 * reference.
 */
#define SD_GPT_CONFIG_1B                                                     \
	{ .layers = 20, .width = 2048, .heads = 32, .seq_len = 2048,         \
	  .vocab = 256, .micro_batch = 2, .accum_steps = 4 }

/* The built-in configs by name ("default", "test", "1b"): SD_OK with *out
 * set, or SD_ERR_INVALID with err listing the names. */
int sd_gpt_config_named(const char *name, struct sd_gpt_config *out,
			char *err, size_t errlen);

/*
 * The global batch: the sequences of one optimizer step over all ranks,
 * part of the workload's identity, so that a loss curve holds for any
 * number of ranks that divides it.  A built-in config's is its micro-batch
 * x accumulation on the ranks its shipped reference was made with:
 * default 32 (4 ranks x 2 x 4), test 8 (2 ranks x 2 x 2), 1b 64 (8 GPUs x
 * 4 x 2).
 */
#define SD_GPT_GLOBAL_BATCH_DEFAULT 32
#define SD_GPT_GLOBAL_BATCH_TEST 8
#define SD_GPT_GLOBAL_BATCH_1B 64
#define SD_GPT_GLOBAL_BATCH_MAX (1L << 20)

/* A built-in config's global batch, 0 for another name. */
long sd_gpt_global_batch_named(const char *name);

/*
 * Split a global batch of `global` sequences over nranks ranks: each rank
 * takes global / nranks of them, as *accum micro-batches of *micro (set in
 * cfg->micro_batch and cfg->accum_steps).  micro_req and accum_req (0: not
 * asked) fix either or both; with neither, the micro-batch is the largest
 * divisor of the rank's share not above cfg->micro_batch (the config's).
 * The sequences a step takes are the same for every split (sd_data_index),
 * so only the order of the sums changes.  SD_OK, or SD_ERR_INVALID with
 * err saying what cannot hold and what would: nranks not dividing
 * global, or a micro-batch and accumulation that do not make the share.
 */
int sd_gpt_split(long global, int nranks, int micro_req, int accum_req,
		 struct sd_gpt_config *cfg, char *err, size_t errlen);

/* GPT-2-like defaults for the built-in workload. */
#define SD_ADAMW_DEFAULT                                                     \
	{ .lr = 1e-3f, .beta1 = 0.9f, .beta2 = 0.95f, .eps = 1e-8f,          \
	  .weight_decay = 0.1f }

struct sd_gpt;

/* Check cfg.  Returns SD_OK, or SD_ERR_INVALID with err naming the field,
 * its value and what to use instead. */
int sd_gpt_config_check(const struct sd_gpt_config *cfg, char *err,
			size_t errlen);

/* The number of parameters of cfg (which must pass the check). */
size_t sd_gpt_param_count(const struct sd_gpt_config *cfg);

/* The number of parameter tensors: 2 + 12 * layers + 2. */
int sd_gpt_tensor_count(const struct sd_gpt_config *cfg);

/* Model FLOPs per token, forward and backward, by PaLM's formula
 * (sd_train_flops_palm(): every parameter, embeddings included, and
 * attention as if unmasked); Megatron-LM's is sd_gpt_flops_megatron(). */
double sd_gpt_flops_per_token(const struct sd_gpt_config *cfg);
double sd_gpt_flops_megatron(const struct sd_gpt_config *cfg);

/* The bytes sd_gpt_create() allocates for cfg: parameters, gradients,
 * both AdamW moments, activations and scratch. */
size_t sd_gpt_memory_bytes(const struct sd_gpt_config *cfg);

/*
 * Allocate a model for cfg (checked here) with everything a step needs,
 * parameters zero until sd_gpt_init().  Loads the BLAS (lib/blas.h: one
 * thread, kernels for this CPU).  Returns SD_OK with *out owned by the
 * caller (free with sd_gpt_destroy()), SD_ERR_INVALID for a bad cfg,
 * SD_ERR_NODEV without a BLAS or SD_ERR_NOMEM, err saying which.
 */
int sd_gpt_create(const struct sd_gpt_config *cfg, struct sd_gpt **out,
		  char *err, size_t errlen);

/* Free m and everything it holds; NULL is fine. */
void sd_gpt_destroy(struct sd_gpt *m);

/* The configuration m was made with. */
const struct sd_gpt_config *sd_gpt_config(const struct sd_gpt *m);

/*
 * Initialise the parameters from seed, the same on every machine (own
 * xoshiro256** seeded by splitmix64, normals by Marsaglia's polar method
 * in double, rounded to float), GPT-2 style: weights and embeddings
 * normal(0, 0.02), the two residual projections of each block (attention
 * and MLP c_proj) normal(0, 0.02 / sqrt(2 * layers)), LayerNorm weights
 * 1, biases 0.  Zeroes the gradients and resets the optimizer (moments
 * and step count).
 */
void sd_gpt_init(struct sd_gpt *m, uint64_t seed);

/*
 * Without a model (no BLAS, no activations): the tensor table of cfg (a
 * checked one) into t (sd_gpt_tensor_count() entries) and the parameters
 * sd_gpt_init() gives for seed into params (sd_gpt_param_count()
 * floats), bit for bit.  The GPU path (include/shakedown/train_gpu.h) starts from
 * them, so both paths start from the same weights.
 */
void sd_gpt_init_params(const struct sd_gpt_config *cfg, uint64_t seed,
			struct sd_gpt_tensor *t, float *params);

/* The parameter and gradient arrays (sd_gpt_param_count() floats each),
 * owned by m; the caller may read and write them (all_reduce in place). */
float *sd_gpt_params(struct sd_gpt *m);
float *sd_gpt_grads(struct sd_gpt *m);
size_t sd_gpt_n_params(const struct sd_gpt *m);

/* The tensor table in forward order, owned by m; *n gets its length. */
const struct sd_gpt_tensor *sd_gpt_tensors(const struct sd_gpt *m, int *n);

/*
 * Forward one micro-batch: inputs and targets are micro_batch x seq_len
 * tokens each (row b is sample b; target t is the token after input t).
 * Stores the activations for sd_gpt_backward() and puts the mean
 * cross-entropy (nats) in *loss.  Returns SD_OK, or SD_ERR_INVALID (err
 * names the first token outside the vocabulary; nothing is stored).  A
 * loss that is NaN or infinite is returned as it is, with SD_OK: the
 * caller decides.
 */
int sd_gpt_forward(struct sd_gpt *m, const int *inputs, const int *targets,
		   double *loss, char *err, size_t errlen);

/*
 * Backward the last forward: ADDS the gradient of that micro-batch's mean
 * loss to the gradient array (so micro-batches accumulate; see
 * sd_gpt_zero_grad()).  grad_ready, when not NULL, is called with ctx and
 * a tensor's index in the table as soon as that tensor's gradient for
 * this micro-batch is final, from this thread, in reverse table order
 * (ln_f.bias first, wte, which the tied LM head also feeds, last); the
 * caller may start an all_reduce of a finished bucket then, as long as it
 * leaves the tensors backward has not reported yet alone.  Returns SD_OK,
 * or SD_ERR_INVALID (err says so) when no forward preceded it.
 */
int sd_gpt_backward(struct sd_gpt *m,
		    void (*grad_ready)(void *ctx, int tensor_index),
		    void *ctx, char *err, size_t errlen);

/* Set every gradient to zero. */
void sd_gpt_zero_grad(struct sd_gpt *m);

/*
 * One AdamW step (see struct sd_adamw) with bias correction, on the
 * gradients multiplied by grad_scale first (the caller passes 1 / (world
 * * accum_steps) after a sum all_reduce, so the step uses the mean over
 * the global batch).  Does not zero the gradients.
 */
void sd_gpt_adamw_step(struct sd_gpt *m, const struct sd_adamw *opt,
		       float grad_scale);

/* Optimizer steps taken since sd_gpt_init(). */
long sd_gpt_steps(const struct sd_gpt *m);

/*
 * Time and FLOPs spent in cblas_sgemm since the last reset (forward and
 * backward, attention included), for the bench's matmul share: seconds
 * and flops (2 * M * N * K per call).  Either pointer may be NULL.
 */
void sd_gpt_matmul_stats(const struct sd_gpt *m, double *seconds,
			 double *flops);
void sd_gpt_matmul_stats_reset(struct sd_gpt *m);

/*
 * The layer kernels that forward and backward are made of, exported so
 * that the unit tests check each backward against finite differences.
 * N is the number of rows (micro_batch * seq_len); arrays are row-major;
 * in every backward, parameter gradients (dw, db, dwte, dwpe) are ADDED
 * to, and input gradients are written or added as each one says.
 */

/* out[b,t,:] = wte[tokens[b,t],:] + wpe[t,:]. */
void sd_gpt_encoder_forward(float *out, const int *tokens, const float *wte,
			    const float *wpe, int B, int T, int C);
/* Adds dout into the rows of dwte and dwpe that forward read. */
void sd_gpt_encoder_backward(float *dwte, float *dwpe, const float *dout,
			     const int *tokens, int B, int T, int C);

/* LayerNorm over C (eps 1e-5, biased variance); mean and rstd (N each)
 * are kept for backward. */
void sd_gpt_layernorm_forward(float *out, float *mean, float *rstd,
			      const float *in, const float *w,
			      const float *b, int N, int C);
/* ADDS the input gradient to din (the residual stream's gradient). */
void sd_gpt_layernorm_backward(float *din, float *dw, float *db,
			       const float *dout, const float *in,
			       const float *w, const float *mean,
			       const float *rstd, int N, int C);

/* out (N x OC) = in (N x IC) w^T + bias; w is OC x IC; bias may be NULL. */
void sd_gpt_matmul_forward(float *out, const float *in, const float *w,
			   const float *bias, int N, int IC, int OC);
/* WRITES din (N x IC; may be NULL to skip it); adds dw and dbias (NULL:
 * no bias).  ones is N floats of 1 (the bias gradient is a gemv). */
void sd_gpt_matmul_backward(float *din, float *dw, float *dbias,
			    const float *dout, const float *in,
			    const float *w, const float *ones, int N, int IC,
			    int OC);

/* Causal self-attention: qkv is N x 3C (q, k, v, each heads x head
 * size); out is N x C; att (B x NH x T x T) keeps the softmax
 * probabilities (zero above the diagonal) for backward. */
void sd_gpt_attention_forward(float *out, float *att, const float *qkv,
			      int B, int T, int C, int NH);
/* WRITES dqkv (N x 3C); scratch is T x T floats. */
void sd_gpt_attention_backward(float *dqkv, float *scratch,
			       const float *dout, const float *qkv,
			       const float *att, int B, int T, int C, int NH);

/* GELU, tanh approximation, over n elements. */
void sd_gpt_gelu_forward(float *out, const float *in, size_t n);
/* WRITES din = dout * gelu'(in); din may be dout. */
void sd_gpt_gelu_backward(float *din, const float *in, const float *dout,
			  size_t n);

/* Softmax of logits (N x V) into probs (may be logits) and the mean
 * cross-entropy against targets, summed in double. */
double sd_gpt_crossentropy_forward(float *probs, const float *logits,
				   const int *targets, int N, int V);
/* WRITES dlogits = (probs - onehot(targets)) * scale, the gradient of
 * scale * the summed loss; dlogits may be probs. */
void sd_gpt_crossentropy_backward(float *dlogits, const float *probs,
				  const int *targets, int N, int V,
				  float scale);

#endif
