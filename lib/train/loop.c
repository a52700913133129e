/*
 * loop.c - one rank's data-parallel training step (see loop.h).
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "shakedown/train_gpu.h"
#include "train/loop.h"
#include "util.h"

int sd_train_rank_buckets(struct sd_train_rank *t, char *err, size_t errlen)
{
	int nt = t->nt;
	const struct sd_gpt_tensor *tensors = t->tensors;
	if (t->gm) {
		t->grads = t->gpu->grads(t->gm);
	} else {
		tensors = sd_gpt_tensors(t->cpu, &nt);
		t->grads = sd_gpt_grads(t->cpu);
	}
	return sd_ddp_buckets(tensors, nt, sizeof(float),
			      SD_DDP_FIRST_BUCKET_BYTES, SD_DDP_BUCKET_CAP_BYTES,
			      t->b, SD_TRAIN_MAX_BUCKETS, &t->nb, err, errlen);
}

/* backward's grad_ready: start every bucket whose tensors are all done,
 * on the last micro-step of the step, after a planted gradient fault. */
static void on_grad_ready(void *arg, int ready)
{
	struct sd_train_rank *t = arg;
	if (!t->active)
		return;
	while (t->next < t->nb && t->b[t->next].first_tensor >= ready) {
		const struct sd_ddp_bucket *b = &t->b[t->next++];
		float *p = t->grads + b->offset;
		if (t->rc)
			continue;
		/* a planted gradient fault, before this rank sends */
		struct sd_fault *f = t->grad_fault;
		if (f && f->kind == SD_FAULT_GRAD_CORRUPT && t->step >= f->iter)
			for (size_t i = 0; i < b->count; i++) {
				/* a sign of its own for each element, the same
				 * at every step: a bias, as a stuck bit is */
				size_t e = b->offset + i;
				uint64_t h = sd_fnv1a(SD_FNV_INIT, &e, sizeof(e));
				double d = f->rel ? f->scale * fabs(p[i])
						  : f->scale;
				p[i] += (float)((h & 1) ? d : -d);
			}
		if (f && f->kind == SD_FAULT_GRAD_NAN && t->step == f->iter &&
		    f->index >= b->offset && f->index < b->offset + b->count)
			t->grads[f->index] = NAN;
		struct sd_op_args a = {
			.op = SD_OP_ALL_REDUCE, .dtype = SD_FLOAT32,
			.redop = SD_SUM, .in_place = 1,
			.send_count = b->count, .recv_count = b->count,
			.sendbuf = p, .recvbuf = p, .algo = -1,
			.timeout_ms = t->timeout_ms };
		if (t->nranks < 2)
			continue; /* alone: the sum is its own gradient */
		double t0 = sd_now();
		t->rc = t->ops->run(t->comm, &a, t->err, sizeof(t->err));
		t->comm_s += sd_now() - t0;
	}
}

int sd_train_step(struct sd_train_rank *t, long step, int *inputs,
		  int *targets, struct sd_train_report *rep, char *err,
		  size_t errlen)
{
	const struct sd_gpt_config *g = t->cfg;
	static const struct sd_adamw adamw = SD_ADAMW_DEFAULT;
	struct sd_fault *f = t->fault;
	int mine = f && f->kind != SD_FAULT_NONE && f->rank == t->rank;
	int rc = SD_OK;
	memset(rep, 0, sizeof(*rep));
	double t0 = sd_now();
	if (mine && f->kind == SD_FAULT_SLOW)
		sd_fault_delay(f);
	if (mine && !f->fired && (f->kind == SD_FAULT_STALL ||
				  f->kind == SD_FAULT_EXIT ||
				  f->kind == SD_FAULT_KILL) &&
	    step - 1 == f->iter)
		sd_fault_act(f);
	t->next = 0;
	t->comm_s = 0;
	t->rc = SD_OK;
	t->active = 0;
	t->step = step;
	t->grad_fault = mine && (f->kind == SD_FAULT_GRAD_CORRUPT ||
				 f->kind == SD_FAULT_GRAD_NAN)
				? f
				: NULL;
	for (int ms = 0; ms < g->accum_steps && !rc; ms++) {
		double loss = 0;
		/* sd_data_index's steps count from 0 */
		rc = sd_data_micro_batch(t->data, step - 1, t->rank, t->nranks,
					 g->accum_steps, ms, g->micro_batch,
					 inputs, targets, err, errlen);
		if (!rc)
			rc = t->gm ? t->gpu->forward(t->gm, inputs, targets,
						     &loss, err, errlen)
				   : sd_gpt_forward(t->cpu, inputs, targets,
						    &loss, err, errlen);
		if (rc)
			break;
		if (!isfinite(loss))
			rep->nonfinite = 1;
		rep->loss_sum += loss;
		t->active = ms == g->accum_steps - 1;
		rc = t->gm ? t->gpu->backward(t->gm, on_grad_ready, t, err,
					      errlen)
			   : sd_gpt_backward(t->cpu, on_grad_ready, t, err,
					     errlen);
	}
	/* the GPU path alone: nothing waits for backward's kernels but this
	 * (with peers, the all_reduce's wait below does, and holds their
	 * tail) */
	if (!rc && t->gm && t->nranks == 1)
		rc = t->gpu->sync(t->gm, t->timeout_ms, err, errlen);
	double t1 = sd_now();
	if (!rc && t->active && t->next < t->nb) {
		snprintf(err, errlen, "backward reported %d of %d gradient "
			 "buckets; this is a bug of shakedown", t->next, t->nb);
		rc = SD_ERR_INVALID;
	}
	if (!rc && t->rc) {
		snprintf(err, errlen, "all_reduce of the gradients: %s", t->err);
		rc = t->rc;
	}
	if (!rc && t->nranks > 1)
		rc = t->ops->wait(t->comm, t->timeout_ms, err, errlen);
	double t2 = sd_now();
	float scale = 1.0f / (float)(t->nranks * g->accum_steps);
	if (!rc && t->gm) {
		/* queued behind the all_reduce; the step ends when the GPU
		 * is done with it */
		rc = t->gpu->adamw_step(t->gm, &adamw, scale, err, errlen);
		if (!rc)
			rc = t->gpu->zero_grad(t->gm, err, errlen);
		if (!rc)
			rc = t->gpu->sync(t->gm, t->timeout_ms, err, errlen);
	} else if (!rc) {
		sd_gpt_adamw_step(t->cpu, &adamw, scale);
		sd_gpt_zero_grad(t->cpu);
	}
	double t3 = sd_now();
	rep->compute_s = (t1 - t0) - t->comm_s;
	rep->comm_s = t->comm_s + (t2 - t1);
	rep->optim_s = t3 - t2;
	rep->step_s = t3 - t0;
	return rc;
}
