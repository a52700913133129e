/*
 * unit_trainloop.c - one rank's training step (lib/train/loop.c) on the
 * CPU model with a stand-in backend whose run() records each bucket's
 * all_reduce (a real backend's all_reduce is the system tests'): the
 * buckets cover every gradient once, in place, on the last micro-step
 * only; a rank alone reduces nothing; the step equals the model driven by
 * hand; planted gradient faults land where and when they are planted, on
 * their rank only; a failing all_reduce is said and returned.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fault.h"
#include "tap.h"
#include "train/loop.h"

/* The stand-in backend: records what run() was asked. */
static struct {
	int calls;
	size_t elements;
	int not_in_place;
	int fail_at; /* the call that fails (1-based), 0: none */
} seen;

static int fake_run(struct sd_comm *c, const struct sd_op_args *a, char *err,
		    size_t errlen)
{
	(void)c;
	seen.calls++;
	seen.elements += a->send_count;
	if (!a->in_place || a->sendbuf != a->recvbuf ||
	    a->op != SD_OP_ALL_REDUCE || a->redop != SD_SUM)
		seen.not_in_place++;
	if (seen.fail_at && seen.calls == seen.fail_at) {
		snprintf(err, errlen, "peer 1 is gone");
		return SD_ERR_TIMEOUT;
	}
	return SD_OK;
}

static int fake_wait(struct sd_comm *c, int timeout_ms, char *err,
		     size_t errlen)
{
	(void)c, (void)timeout_ms, (void)err, (void)errlen;
	return SD_OK;
}

static struct sd_backend_ops fake_ops;

/* A rank of `nranks` over a fresh test-config model and Markov data. */
static int make_rank(struct sd_train_rank *t, struct sd_gpt_config *cfg,
		     int rank, int nranks, struct sd_fault *f)
{
	char err[256];
	struct sd_gpt *m;
	struct sd_data *d;
	if (sd_gpt_create(cfg, &m, err, sizeof(err)) != SD_OK ||
	    sd_data_open_markov(&d, cfg->vocab, 1, 4, cfg->seq_len, 1, err,
				sizeof(err)) != SD_OK) {
		printf("# %s\n", err);
		return -1;
	}
	sd_gpt_init(m, 1);
	*t = (struct sd_train_rank){ .cfg = cfg, .rank = rank,
				     .nranks = nranks, .cpu = m,
				     .ops = &fake_ops, .data = d, .fault = f,
				     .timeout_ms = 1000 };
	return sd_train_rank_buckets(t, err, sizeof(err));
}

static void free_rank(struct sd_train_rank *t)
{
	sd_gpt_destroy(t->cpu);
	sd_data_close(t->data);
}

int main(void)
{
	fake_ops.run = fake_run;
	fake_ops.wait = fake_wait;
	struct sd_gpt_config cfg = SD_GPT_CONFIG_TEST;
	size_t N = (size_t)cfg.micro_batch * cfg.seq_len;
	int *in = malloc(N * sizeof(int)), *tg = malloc(N * sizeof(int));
	struct sd_fault none = { .kind = SD_FAULT_NONE };
	struct sd_train_rank t;
	struct sd_train_report rep;
	char err[512];
	size_t P = sd_gpt_param_count(&cfg);

	/* two ranks: every gradient once, in place, once a step */
	if (make_rank(&t, &cfg, 0, 2, &none) != 0)
		return 1;
	ok(t.nb >= 1, "the test model has %d bucket%s", t.nb,
	   t.nb == 1 ? "" : "s");
	memset(&seen, 0, sizeof(seen));
	int rc = sd_train_step(&t, 1, in, tg, &rep, err, sizeof(err));
	ok(rc == SD_OK, "a step on rank 0 of 2: SD_OK");
	is_int(seen.calls, t.nb, "one all_reduce per bucket, on the last "
				  "micro-step only (accum %d)", cfg.accum_steps);
	is_int(seen.elements, P, "the buckets cover all %zu gradients once", P);
	is_int(seen.not_in_place, 0, "each a float sum in place");
	ok(isfinite(rep.loss_sum) && !rep.nonfinite && rep.loss_sum > 0,
	   "the loss of its micro-batches is summed (%g)", rep.loss_sum);
	ok(rep.step_s >= rep.compute_s && rep.compute_s >= 0 &&
		   rep.comm_s >= 0 && rep.optim_s >= 0 &&
		   fabs(rep.step_s - rep.compute_s - rep.comm_s - rep.optim_s) <
			   1e-6,
	   "compute, all_reduce and optimizer add up to the step");
	free_rank(&t);

	/* one rank: nothing to reduce, and the step is the model driven by
	 * hand (as unit_train drives it) */
	if (make_rank(&t, &cfg, 0, 1, &none) != 0)
		return 1;
	memset(&seen, 0, sizeof(seen));
	struct sd_train_rank h;
	if (make_rank(&h, &cfg, 0, 1, &none) != 0)
		return 1;
	for (long s = 1; s <= 3; s++)
		rc |= sd_train_step(&t, s, in, tg, &rep, err, sizeof(err));
	struct sd_adamw o = SD_ADAMW_DEFAULT;
	for (long s = 0; s < 3; s++) {
		double loss;
		for (int a = 0; a < cfg.accum_steps; a++) {
			sd_data_micro_batch(h.data, s, 0, 1, cfg.accum_steps, a,
					    cfg.micro_batch, in, tg, err,
					    sizeof(err));
			sd_gpt_forward(h.cpu, in, tg, &loss, err, sizeof(err));
			sd_gpt_backward(h.cpu, NULL, NULL, err, sizeof(err));
		}
		sd_gpt_adamw_step(h.cpu, &o, 1.0f / cfg.accum_steps);
		sd_gpt_zero_grad(h.cpu);
	}
	ok(rc == SD_OK && seen.calls == 0, "one rank alone: no all_reduce");
	ok(memcmp(sd_gpt_params(t.cpu), sd_gpt_params(h.cpu),
		  P * sizeof(float)) == 0,
	   "3 steps: the parameters equal the model driven by hand, bit for "
	   "bit");
	free_rank(&t);
	free_rank(&h);

	/* grad_nan on rank 0 at step 2, element 5: its step 1 is clean, step
	 * 2 sends a NaN there; rank 1 of the same job is untouched */
	struct sd_fault nan;
	sd_fault_parse("rank=0,kind=grad_nan,iter=2,index=5", &nan, err,
		       sizeof(err));
	if (make_rank(&t, &cfg, 0, 2, &nan) != 0 ||
	    make_rank(&h, &cfg, 1, 2, &nan) != 0)
		return 1;
	sd_train_step(&t, 1, in, tg, &rep, err, sizeof(err));
	sd_train_step(&h, 1, in, tg, &rep, err, sizeof(err));
	ok(isfinite(sd_gpt_params(t.cpu)[5]), "grad_nan: step 1 is clean");
	sd_train_step(&t, 2, in, tg, &rep, err, sizeof(err));
	sd_train_step(&h, 2, in, tg, &rep, err, sizeof(err));
	ok(isnan(sd_gpt_params(t.cpu)[5]) && isfinite(sd_gpt_params(t.cpu)[4]),
	   "grad_nan at step 2: element 5 alone became NaN on rank 0");
	ok(isfinite(sd_gpt_params(h.cpu)[5]), "rank 1 is untouched");
	free_rank(&t);
	free_rank(&h);

	/* grad_corrupt on rank 0 from step 1: its parameters part from an
	 * unplanted twin's */
	struct sd_fault bias;
	sd_fault_parse("rank=0,kind=grad_corrupt,iter=1,scale=0.001", &bias,
		       err, sizeof(err));
	if (make_rank(&t, &cfg, 0, 2, &bias) != 0 ||
	    make_rank(&h, &cfg, 0, 2, &none) != 0)
		return 1;
	sd_train_step(&t, 1, in, tg, &rep, err, sizeof(err));
	sd_train_step(&h, 1, in, tg, &rep, err, sizeof(err));
	size_t differ = 0;
	for (size_t i = 0; i < P; i++)
		differ += sd_gpt_params(t.cpu)[i] != sd_gpt_params(h.cpu)[i];
	ok(differ > P / 2, "grad_corrupt: %zu of %zu parameters part from the "
			   "clean twin's after one step", differ, P);
	free_rank(&t);
	free_rank(&h);

	/* a failing all_reduce is said and returned */
	if (make_rank(&t, &cfg, 0, 2, &none) != 0)
		return 1;
	memset(&seen, 0, sizeof(seen));
	seen.fail_at = 1;
	err[0] = '\0';
	rc = sd_train_step(&t, 1, in, tg, &rep, err, sizeof(err));
	ok(rc == SD_ERR_TIMEOUT &&
		   strcmp(err, "all_reduce of the gradients: peer 1 is gone") ==
			   0,
	   "a failing all_reduce: its status and '%s'", err);
	free_rank(&t);
	free(in);
	free(tg);
	return done_testing();
}
