/*
 * loop.h - one rank's data-parallel training step, the twin of the
 * runner's measurement for `shakedown train`: accum_steps micro-batches
 * of forward and backward on this rank's slice of the global batch
 * (lib/train/data.h), the gradients all-reduced in DDP's buckets
 * (lib/train/ddp.h) as backward finishes them, then AdamW, on the CPU
 * model (lib/train/gpt.h) or a backend's GPU model (the plugin kit's
 * shakedown/train_gpu.h).  A planted fault of this rank (lib/fault.h:
 * slow, stall, exit, kill, grad_corrupt, grad_nan) acts at its step.  The
 * step's times are split as the summary reports them: compute, the
 * all_reduce (time inside run() plus the wait after backward), the
 * optimizer.  Like all of lib/, it never prints and never exits.
 */
#ifndef SD_TRAIN_LOOP_H
#define SD_TRAIN_LOOP_H

#include <stddef.h>
#include <stdint.h>

#include "fault.h"
#include "shakedown/backend.h"
#include "train/data.h"
#include "train/ddp.h"
#include "train/gpt.h"

/* The most DDP buckets of one model. */
#define SD_TRAIN_MAX_BUCKETS 1024

/* What every rank says about one step (the job exchanges it). */
struct sd_train_report {
	int32_t status;    /* the exit status this rank stops with; 0 */
	int32_t nonfinite; /* its loss was NaN or infinite */
	double loss_sum;   /* the sum of its micro-batches' mean losses */
	double step_s, compute_s, comm_s, optim_s;
};

/* One rank of the job: what the caller sets, then the buckets and the
 * state of the step in flight. */
struct sd_train_rank {
	/* set by the caller */
	const struct sd_gpt_config *cfg;
	int rank, nranks;
	struct sd_gpt *cpu;                 /* the CPU model, or NULL */
	const struct sd_train_gpu_ops *gpu; /* with gm: the GPU model, */
	struct sd_train_gpu *gm;
	const struct sd_gpt_tensor *tensors; /* and its tensor table */
	int nt;
	const struct sd_backend_ops *ops;   /* run() and wait() */
	struct sd_comm *comm;
	struct sd_data *data;
	struct sd_fault *fault;             /* the job's planted fault */
	int timeout_ms;
	/* sd_train_rank_buckets() */
	float *grads;
	struct sd_ddp_bucket b[SD_TRAIN_MAX_BUCKETS];
	int nb;
	/* the step in flight */
	int next;                 /* the next bucket to start */
	int active;               /* the last micro-step: reduce */
	double comm_s;            /* time inside run() */
	int rc;                   /* the first failure of a bucket */
	char err[512];
	struct sd_fault *grad_fault; /* a gradient fault of this rank */
	long step;
};

/* The model's DDP buckets over its gradient array (the CPU model's, or
 * the GPU model's in device memory).  SD_OK, or a status with err. */
int sd_train_rank_buckets(struct sd_train_rank *t, char *err, size_t errlen);

/*
 * Step `step` (1-based) of this rank into *rep: inputs and targets hold
 * one micro-batch (micro_batch x seq_len ints each).  Returns SD_OK, or
 * the status of what failed with err (a bucket's all_reduce, the wait,
 * the model, or backward reporting fewer buckets than it has).  rep's
 * status is the caller's to set.
 */
int sd_train_step(struct sd_train_rank *t, long step, int *inputs,
		  int *targets, struct sd_train_report *rep, char *err,
		  size_t errlen);

#endif
