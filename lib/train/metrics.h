/*
 * metrics.h - the training metrics: tokens per device per second (tgs),
 * achieved TFLOPs and MFU against a table of peaks, the step-time
 * breakdown, and the loss curve against a reference.
 *
 * One code path for the built-in workload (`shakedown train`) and for
 * ingested logs (`shakedown ingest`): both hand a series of steps and the
 * run's facts to these functions, so the two can never disagree on how a
 * metric is computed.  The formulas are in shakedown-train(7).  Pure
 * computation, no I/O: functions return an sd_status and fill err with
 * one lower-case line naming the problem and the fix.
 */
#ifndef SD_TRAIN_METRICS_H
#define SD_TRAIN_METRICS_H

#include <stddef.h>

struct sd_train_reference; /* reference.h */

/* Where a fact came from; the summary says it for each value. */
enum sd_train_origin {
	SD_TRAIN_UNKNOWN = 0, /* not known */
	SD_TRAIN_GIVEN,       /* given by an option */
	SD_TRAIN_READ,        /* read from the log */
	SD_TRAIN_WORKLOAD,    /* the built-in workload's configuration */
	SD_TRAIN_DERIVED,     /* computed from other facts */
	SD_TRAIN_MEASURED,    /* measured (a CPU's peak by shakedown gemm) */
	SD_TRAIN_TABLE,       /* the peak table of this file */
	SD_TRAIN_DEFAULT,     /* the command's default (no option given) */
};

/* "unknown", "given", "read", "workload", "derived", "measured", "table",
 * "default". */
const char *sd_train_origin_name(enum sd_train_origin o);

/* The precision a peak is for. */
enum sd_train_precision {
	SD_TRAIN_BF16 = 0,
	SD_TRAIN_FP16,
	SD_TRAIN_TF32,
	SD_TRAIN_FP8,
	SD_TRAIN_FP32,
	SD_TRAIN_NPRECISIONS
};

/* "bf16", "fp16", "tf32", "fp8", "fp32". */
const char *sd_train_precision_name(enum sd_train_precision p);

/* Parse one of those names (case-insensitive).  SD_OK, or SD_ERR_INVALID
 * with err listing the names. */
int sd_train_precision_parse(const char *s, enum sd_train_precision *out,
			     char *err, size_t errlen);

/* A number and where it came from; origin SD_TRAIN_UNKNOWN: not known. */
struct sd_train_fact {
	double value;
	enum sd_train_origin origin;
};

/* What is known about a run beyond its steps. */
struct sd_train_facts {
	struct sd_train_fact devices;         /* devices (GPUs, ranks) */
	struct sd_train_fact seq_len;         /* tokens per sequence */
	struct sd_train_fact tokens_per_step; /* global tokens per step, for
						 steps that do not say */
	struct sd_train_fact params;          /* model parameters */
	struct sd_train_fact layers;          /* transformer blocks */
	struct sd_train_fact width;           /* hidden size (d_model) */
	struct sd_train_fact flops_per_token; /* overrides the formula */
	struct sd_train_fact warmup_steps;    /* excluded after the first */
	struct sd_train_fact peak_tflops;     /* overrides the peak table:
						 an option, or a measured
						 `shakedown gemm` peak */
	char device_name[128];                /* as cudaDeviceProp.name */
	enum sd_train_origin device_name_origin;
	enum sd_train_precision precision;    /* of the peak (bf16) */
};

/* The numeric facts by name, in one fixed order: their column (and JSON
 * key) name, the option of `shakedown ingest` that gives each, and where
 * it is in struct sd_train_facts (sd_train_fact_at()). */
struct sd_train_fact_field {
	const char *name;   /* "devices", "seq_len", ... */
	const char *option; /* "--gpus", "--seq-len", ... */
	size_t offset;
};
#define SD_TRAIN_NFACTS 9
extern const struct sd_train_fact_field sd_train_fact_fields[SD_TRAIN_NFACTS];

/* Fact i of sd_train_fact_fields in f. */
struct sd_train_fact *sd_train_fact_at(struct sd_train_facts *f, size_t i);
const struct sd_train_fact *sd_train_fact_get(const struct sd_train_facts *f,
					      size_t i);

/* Every fact unknown, no device name, precision bf16. */
void sd_train_facts_init(struct sd_train_facts *f);

/* What a step row holds (sd_train_step.has). */
enum {
	SD_STEP_LOSS = 1u << 0,
	SD_STEP_TIME = 1u << 1,    /* step_s */
	SD_STEP_TOKENS = 1u << 2,
	SD_STEP_COMPUTE = 1u << 3, /* compute_s */
	SD_STEP_COMM = 1u << 4,    /* comm_s */
	SD_STEP_OPTIM = 1u << 5,   /* optim_s */
};

/*
 * One row of a series: a training step, or a logged step that stands for
 * the steps since the row before it (a log that prints every 10 steps).
 * step_s is the mean time of one step over those steps (what Megatron's
 * "elapsed time per iteration" and DeepSpeed's timers print), tokens the
 * global tokens of one step.  The loss may be NaN or infinite: that is a
 * verdict (SD_TRAIN_NONFINITE), not an input error.
 */
struct sd_train_step {
	long step;        /* the step number, >= 0; rows in increasing order */
	unsigned has;     /* SD_STEP_* bits: which fields are known */
	double loss;
	double step_s;    /* seconds per step */
	double tokens;    /* global tokens per step */
	double compute_s; /* forward and backward, without waiting for the
			     gradient all_reduce */
	double comm_s;    /* waiting for the gradient all_reduce */
	double optim_s;   /* the optimizer step */
	int rank;         /* -1: the job's row; else a rank's own.  A series
			     is one or the other: the functions here use
			     every row they are given */
};

/*
 * Check a series: at least one row, step numbers >= 0 and strictly
 * increasing, a known step time or token count finite and positive,
 * known compute/comm/optimizer times finite and not negative.  SD_OK,
 * or SD_ERR_INVALID with err naming the step.
 */
int sd_train_check_steps(const struct sd_train_step *s, size_t n, char *err,
			 size_t errlen);

/*
 * Whether row i of a checked series is timed, i.e. counts in tgs: not
 * the first row (never timed: its steps since the start are unknown and
 * hold the start-up), with a step time, and with all its steps after the
 * warm-up: the row before it is at step >= s[0].step + warmup_steps.
 * Its weight is its span, s[i].step - s[i-1].step steps.
 */
int sd_train_step_timed(const struct sd_train_step *s, size_t i,
			double warmup_steps);

/*
 * Model FLOPs per token, forward and backward, two ways:
 *   PaLM's (Chowdhery et al. 2022, appendix B; Kaplan et al. 2020):
 *     6 x params + 12 x layers x width x seq_len, every parameter counted
 *     (embeddings too) and attention as if unmasked;
 *   Megatron-LM's (num_floating_point_operations in
 *     megatron/training/training.py, for a GPT block of 4 x width MLP and
 *     as many key/value heads as query heads): 72 x layers x width^2
 *     (the block's GEMMs, 3 passes of 2 FLOPs a multiply-add) + 6 x layers
 *     x seq_len x width (causal attention: half of the 12) + 6 x width x
 *     vocab (the logits), embeddings left out.
 * On the built-in default config Megatron's is 5% below PaLM's (2.005e7
 * against 2.112e7); the gap grows with the sequence (a GPT block of width
 * 4096, 32 layers, 8k tokens, vocabulary 128,256: 14%).  shakedown
 * reports PaLM's and gives Megatron's beside it where the model is
 * known (`shakedown train`).
 */
double sd_train_flops_palm(double params, double layers, double width,
			   double seq_len);
double sd_train_flops_megatron(double layers, double width, double seq_len,
			       double vocab);

/*
 * Model FLOPs per token, forward and backward: the override when
 * f->flops_per_token is known (its origin), else PaLM's formula
 * (sd_train_flops_palm), origin SD_TRAIN_DERIVED.  SD_OK, or SD_ERR_INVALID
 * with err naming the missing facts and the options that give them.
 */
int sd_train_flops_per_token(const struct sd_train_facts *f, double *fpt,
			     enum sd_train_origin *origin, char *err,
			     size_t errlen);

/*
 * The peak table: dense (no 2:4 sparsity) TFLOP/s per device from the
 * vendors' datasheets, keyed by the device name the runtime prints
 * (cudaDeviceProp.name, hipDeviceProp_t.name).  A row matches a name
 * that contains every string of `has` and none of `lacks`
 * (case-insensitive); the rules are exclusive: a name matches at most
 * one row (SXM and PCIe parts are told apart).
 */
struct sd_train_peak_row {
	const char *part;                      /* "NVIDIA H100 SXM5" */
	const char *has[3];                    /* NULL-terminated */
	const char *lacks[3];
	double tflops[SD_TRAIN_NPRECISIONS];   /* 0: the part has none */
	const char *source;                    /* the datasheet */
};

/* The table, *n rows (static storage). */
const struct sd_train_peak_row *sd_train_peak_table(size_t *n);

/* The row for a device name, or NULL when the table has none. */
const struct sd_train_peak_row *sd_train_peak_find(const char *device_name);

/* A peak, and where it came from. */
struct sd_train_peak {
	double tflops;
	enum sd_train_origin origin; /* the override's, or SD_TRAIN_TABLE */
	char part[64];               /* the table's part; "" for an override */
};

/*
 * The peak of one device in precision p: the override when
 * override->origin is known and its value positive (an override always
 * wins; may be NULL), else the table's.  SD_OK and *out, or
 * SD_ERR_INVALID: no device name ("no device name for the peak table;
 * give --peak-tflops"), no peak for DEVICE ("no peak for DEVICE; give
 * --peak-tflops"), or a part without that precision.
 */
int sd_train_peak(const char *device_name, enum sd_train_precision p,
		  const struct sd_train_fact *override,
		  struct sd_train_peak *out, char *err, size_t errlen);

/*
 * What a series of steps says about throughput.  A value that cannot be
 * computed is NaN and its *_why says why and what to give; "" otherwise.
 * tgs is total tokens / total time / devices over the timed rows, each
 * weighted by its span: sum(tokens x span) / sum(step_s x span) /
 * devices, the robust mean (a slow step weighs what it cost); the median
 * step time is given beside it.
 */
struct sd_train_summary {
	size_t rows;
	long first_step, last_step;
	size_t timed_rows;        /* rows counted in tgs */
	long timed_steps;         /* the steps they stand for (sum of spans) */
	double timed_tokens;      /* sum(tokens x span) */
	double timed_s;           /* sum(step_s x span) */
	double step_s_mean;       /* timed_s / timed_steps */
	double step_s_median;     /* median of the timed rows' step_s */
	double tokens_per_s;      /* the job's: timed_tokens / timed_s */
	double tgs;               /* tokens per second per device */
	double flops_per_token;
	enum sd_train_origin flops_origin;
	double tflops;            /* achieved, per device */
	struct sd_train_peak peak;
	double mfu;               /* tflops / peak.tflops */
	size_t breakdown_rows;    /* timed rows with compute, comm and optim */
	double compute_share, comm_share, optim_share; /* of their step time */
	double other_share;       /* 1 - the three: negative when the
				     all_reduce overlaps the backward pass */
	double compute_s_mean, comm_s_mean, optim_s_mean; /* per step */
	long nonfinite_step;      /* first step with a NaN or infinite loss,
				     -1 when none */
	double nonfinite_loss;
	double loss_first, loss_last; /* NaN without losses */
	char tgs_why[200], tflops_why[200], mfu_why[200], breakdown_why[120];
};

/*
 * Summarise a series (checked first: SD_ERR_INVALID as
 * sd_train_check_steps()) with the run's facts.  Returns SD_OK with every
 * value that can be computed; what cannot is NaN with its reason.
 */
int sd_train_summarize(const struct sd_train_step *s, size_t n,
		       const struct sd_train_facts *f,
		       struct sd_train_summary *out, char *err, size_t errlen);

/*
 * Default tolerances of the loss check.  SD_TRAIN_REL_TOL is the per-step
 * relative tolerance of Megatron-LM's functional (regression) tests for
 * "lm loss": ApproximateTest(atol=0, rtol=0.05) in
 * tests/functional_tests/python_test_utils/
 * test_pretraining_regular_pipeline.py, and margin_loss = 0.05 with
 * pytest.approx(rel=...) in the older test_ci_pipeline.py; its absolute
 * tolerance is 0 there too.
 * SD_TRAIN_VAR_TOL (nat^2): a standard deviation of the difference of
 * 0.1 nat, half the per-step band (5%) of a loss of 4, the order of a
 * small model's loss over its first 100 steps: a curve that wanders
 * inside the band fails while one merely shifted passes on variance and
 * is held by the per-step check.
 */
#define SD_TRAIN_REL_TOL 0.05
#define SD_TRAIN_ABS_TOL 0.0
#define SD_TRAIN_VAR_TOL 0.01
#define SD_TRAIN_COMPARE_STEPS 100

/*
 * The same-arithmetic band (a reference of the same workload, seed and
 * arithmetic, fp32 on a CPU): healthy runs reproduce a reference's 100
 * steps to rounding, whatever the rank count, micro-batch split or
 * OpenBLAS kernels.  How closely is measured per reference
 * (bench/train_calibrate.sh) and kept in it ("healthy:", the largest
 * |loss - reference| of any step of those runs); the band is
 * SD_TRAIN_SAME_FACTOR times that, a step.  A reference that has not been
 * measured (made with --save-ref, or from runs) gets SD_TRAIN_SAME_ABS_TOL,
 * 24 times every measurement made so far (the largest: 2.06e-6 nat, the
 * default config on 2 ranks with OpenBLAS's Haswell kernels), still
 * below a loss moved by 1e-4.  The variance bound
 * is the band squared.  bf16 on a GPU has no measured spread yet: it is
 * judged with the band of another arithmetic, saying so.  The figures
 * and what each band catches: shakedown-train(7).
 */
#define SD_TRAIN_SAME_FACTOR 10.0
#define SD_TRAIN_SAME_ABS_TOL 5e-5

/* The loss check's tolerances. */
struct sd_train_tolerance {
	double rel_tol;  /* per step: |measured - ref| <= abs_tol +
			    rel_tol x |ref| (numpy.isclose with the
			    reference as b, as Megatron compares) */
	double abs_tol;
	double var_tol;  /* variance of (measured - ref), nat^2 */
	int steps;       /* the first `steps` steps present in both */
	long last_step;  /* and only steps <= last_step (0: no limit) */
	int failing_steps_allowed; /* steps outside the band that still
				      pass (0; Megatron's approximate tests
				      allow 1 in 100, at most 50) */
	int require_steps; /* 1: a series without every step of the window
			      that the reference has is not judged */
	int same_arith;    /* the band is the same-arithmetic one */
	char says[200];    /* the band in words, for the verdict ("" none) */
};

/* The defaults above, no last_step, no failing step allowed. */
void sd_train_tolerance_default(struct sd_train_tolerance *t);

/*
 * The band `shakedown train` judges by, from how its reference stands to
 * the run (sd_train_ref_identity(): SD_REF_SAME_ARITH or
 * SD_REF_OTHER_ARITH), the run's arithmetic ("fp32-cpu"; NULL when not
 * said) and the reference's measured healthy difference (0: none): the
 * same arithmetic on a CPU, SD_TRAIN_SAME_FACTOR x healthy (else
 * SD_TRAIN_SAME_ABS_TOL) a step and its square for the variance;
 * anything else, the defaults above.  Both require every step of the
 * first SD_TRAIN_COMPARE_STEPS; t->says names the band and where it
 * comes from.
 */
void sd_train_tolerance_for(int same_arith, const char *arith,
			    double healthy, struct sd_train_tolerance *t);

enum sd_train_verdict {
	SD_TRAIN_PASSED = 0,
	SD_TRAIN_FAILED,     /* outside the tolerances */
	SD_TRAIN_NONFINITE,  /* the loss became NaN or infinite */
	SD_TRAIN_NOT_JUDGED, /* too few steps to judge (require_steps) */
};

/* "passed", "failed", "nonfinite", "not judged". */
const char *sd_train_verdict_name(enum sd_train_verdict v);

/* The loss curve against a reference. */
struct sd_train_comparison {
	enum sd_train_verdict verdict;
	int steps_compared;       /* steps present in both, in the window */
	int steps_wanted;         /* tol.steps */
	long first_step, last_step; /* of the compared steps */
	double diff_mean;         /* mean of (measured - ref) */
	double diff_var;          /* its variance (population: over the N
				     compared steps, divided by N) */
	double rmse;              /* sqrt(mean((measured - ref)^2)) */
	double max_abs_diff;
	long max_diff_step;       /* where |measured - ref| is largest */
	int failing_steps;        /* outside abs_tol + rel_tol x |ref| */
	long worst_step;          /* the largest |diff| / allowed */
	double worst_loss, worst_ref, worst_allowed;
	long nonfinite_step;      /* -1 when every loss is finite */
	double nonfinite_loss;
	char reason[320];         /* why it failed; "" when passed */
	char note[320];           /* how many steps were used, when fewer
				     than wanted; "" otherwise */
	struct sd_train_tolerance tol; /* as used */
};

/*
 * Judge a series' loss against a reference.  The reference's config must
 * equal run_config (a NULL run_config is refused: a curve is only
 * comparable with its own workload).  Matching is by step number: the
 * first tol->steps step numbers present in both (with a loss; up to
 * tol->last_step when set); a series with fewer says so in out->note.
 * A NaN or infinite loss anywhere in the series is the verdict
 * SD_TRAIN_NONFINITE ("loss became NaN at step N").  Else the verdict
 * passes when diff_var <= var_tol and at most failing_steps_allowed
 * steps are outside abs_tol + rel_tol x |ref|; a failure names the worst
 * step.  tol NULL: the defaults.  Returns SD_OK with *out, or
 * SD_ERR_INVALID (a config that differs, naming both; no step in common,
 * naming both ranges; a series that fails sd_train_check_steps()).
 */
int sd_train_compare(const struct sd_train_step *s, size_t n,
		     const char *run_config,
		     const struct sd_train_reference *ref,
		     const struct sd_train_tolerance *tol,
		     struct sd_train_comparison *out, char *err,
		     size_t errlen);

/* One metric row (the train_metrics table). */
struct sd_train_metric {
	const char *name;  /* "tgs", "tflops", "mfu", "loss_var", ... */
	const char *unit;  /* "tokens/s/device", "TFLOP/s/device", ... */
	double value;
	const char *host;  /* NULL: the job's */
	int rank;          /* -1: the job's */
};

/* The most rows sd_train_metric_rows() fills. */
#define SD_TRAIN_MAX_METRICS 32

/*
 * The metric rows of a summary and (when not NULL) a comparison, in a
 * fixed order, values that could not be computed left out; names and
 * units in shakedown-db(5).  Fills at most cap rows (strings are static)
 * and returns how many.
 */
size_t sd_train_metric_rows(const struct sd_train_summary *s,
			    const struct sd_train_comparison *c,
			    struct sd_train_metric *rows, size_t cap);

#endif
