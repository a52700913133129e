/*
 * metrics.c - tgs, TFLOPs, MFU, the step-time breakdown and the loss
 * check, for the built-in workload and ingested logs alike (see
 * metrics.h; the formulas are in shakedown-train(7)).
 *
 * Everything here is arithmetic over a series of rows that the caller
 * already holds, so the printed summary, the recorded metric rows and a
 * recomputation from the recorded step rows all come from the same
 * numbers.  Sums are plain left-to-right double sums over the rows in
 * step order, which SQL's sum() over the same rows reproduces.
 */
#include "config.h"

#include <ctype.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shakedown/backend.h"
#include "train/metrics.h"
#include "train/reference.h"
#include "util.h"
#include "verdict.h"

static const char *const origin_names[] = {
	"unknown", "given", "read", "workload", "derived", "measured", "table",
	"default",
};

const char *sd_train_origin_name(enum sd_train_origin o)
{
	if ((unsigned)o < sizeof(origin_names) / sizeof(origin_names[0]))
		return origin_names[o];
	return "unknown";
}

static const char *const precision_names[SD_TRAIN_NPRECISIONS] = {
	"bf16", "fp16", "tf32", "fp8", "fp32",
};

const char *sd_train_precision_name(enum sd_train_precision p)
{
	if ((unsigned)p < SD_TRAIN_NPRECISIONS)
		return precision_names[p];
	return "unknown";
}

int sd_train_precision_parse(const char *s, enum sd_train_precision *out,
			     char *err, size_t errlen)
{
	for (int i = 0; i < SD_TRAIN_NPRECISIONS; i++)
		if (s && strcasecmp(s, precision_names[i]) == 0) {
			*out = (enum sd_train_precision)i;
			return SD_OK;
		}
	snprintf(err, errlen, "unknown precision '%s'; use bf16, fp16, tf32, "
		 "fp8 or fp32", s ? s : "");
	return SD_ERR_INVALID;
}

#define FACT(name, option) { #name, option, \
		offsetof(struct sd_train_facts, name) }
const struct sd_train_fact_field sd_train_fact_fields[SD_TRAIN_NFACTS] = {
	FACT(devices, "--gpus"),
	FACT(seq_len, "--seq-len"),
	FACT(tokens_per_step, "--tokens-per-step"),
	FACT(params, "--params"),
	FACT(layers, "--layers"),
	FACT(width, "--width"),
	FACT(flops_per_token, "--flops-per-token"),
	FACT(warmup_steps, "--warmup"),
	FACT(peak_tflops, "--peak-tflops"),
};
#undef FACT

struct sd_train_fact *sd_train_fact_at(struct sd_train_facts *f, size_t i)
{
	return (struct sd_train_fact *)((char *)f +
					sd_train_fact_fields[i].offset);
}

const struct sd_train_fact *sd_train_fact_get(const struct sd_train_facts *f,
					      size_t i)
{
	return (const struct sd_train_fact *)((const char *)f +
					      sd_train_fact_fields[i].offset);
}

void sd_train_facts_init(struct sd_train_facts *f)
{
	memset(f, 0, sizeof(*f));
	f->precision = SD_TRAIN_BF16;
}

static int known(const struct sd_train_fact *x)
{
	return x->origin != SD_TRAIN_UNKNOWN && isfinite(x->value);
}

int sd_train_check_steps(const struct sd_train_step *s, size_t n, char *err,
			 size_t errlen)
{
	if (!s || n == 0) {
		snprintf(err, errlen, "no steps: the series is empty");
		return SD_ERR_INVALID;
	}
	for (size_t i = 0; i < n; i++) {
		const struct sd_train_step *x = &s[i];
		if (x->step < 0) {
			snprintf(err, errlen, "step %ld: step numbers start "
				 "at 0", x->step);
			return SD_ERR_INVALID;
		}
		if (i > 0 && x->step <= s[i - 1].step) {
			snprintf(err, errlen, "step %ld follows step %ld: "
				 "steps must increase (a resumed log? keep the "
				 "part after the resume)", x->step,
				 s[i - 1].step);
			return SD_ERR_INVALID;
		}
		if ((x->has & SD_STEP_TIME) &&
		    !(isfinite(x->step_s) && x->step_s > 0)) {
			snprintf(err, errlen, "step %ld: step time %g s is not "
				 "a positive number", x->step, x->step_s);
			return SD_ERR_INVALID;
		}
		if ((x->has & SD_STEP_TOKENS) &&
		    !(isfinite(x->tokens) && x->tokens > 0)) {
			snprintf(err, errlen, "step %ld: %g tokens is not a "
				 "positive number", x->step, x->tokens);
			return SD_ERR_INVALID;
		}
		static const struct {
			unsigned bit;
			size_t off;
			const char *what;
		} parts[] = {
			{ SD_STEP_COMPUTE, offsetof(struct sd_train_step,
						    compute_s), "compute" },
			{ SD_STEP_COMM, offsetof(struct sd_train_step, comm_s),
			  "all_reduce" },
			{ SD_STEP_OPTIM, offsetof(struct sd_train_step,
						  optim_s), "optimizer" },
		};
		for (size_t k = 0; k < sizeof(parts) / sizeof(parts[0]);
		     k++) {
			double v;
			memcpy(&v, (const char *)x + parts[k].off, sizeof(v));
			if ((x->has & parts[k].bit) &&
			    !(isfinite(v) && v >= 0)) {
				snprintf(err, errlen, "step %ld: %s time %g s "
					 "is not a number of seconds", x->step,
					 parts[k].what, v);
				return SD_ERR_INVALID;
			}
		}
	}
	return SD_OK;
}

int sd_train_step_timed(const struct sd_train_step *s, size_t i,
			double warmup_steps)
{
	if (i == 0 || !(s[i].has & SD_STEP_TIME))
		return 0;
	double w = isfinite(warmup_steps) && warmup_steps > 0 ? warmup_steps
							      : 0.0;
	return (double)s[i - 1].step >= (double)s[0].step + w;
}

double sd_train_flops_palm(double params, double layers, double width,
			   double seq_len)
{
	return 6.0 * params + 12.0 * layers * width * seq_len;
}

double sd_train_flops_megatron(double layers, double width, double seq_len,
			       double vocab)
{
	return 72.0 * layers * width * width + 6.0 * layers * seq_len * width +
	       6.0 * width * vocab;
}

int sd_train_flops_per_token(const struct sd_train_facts *f, double *fpt,
			     enum sd_train_origin *origin, char *err,
			     size_t errlen)
{
	*fpt = NAN;
	*origin = SD_TRAIN_UNKNOWN;
	if (known(&f->flops_per_token) && f->flops_per_token.value > 0) {
		*fpt = f->flops_per_token.value;
		*origin = f->flops_per_token.origin;
		return SD_OK;
	}
	const struct {
		const struct sd_train_fact *x;
		const char *name, *option;
	} need[] = {
		{ &f->params, "params", "--params" },
		{ &f->layers, "layers", "--layers" },
		{ &f->width, "width", "--width" },
		{ &f->seq_len, "seq_len", "--seq-len" },
	};
	char missing[96] = "", options[96] = "";
	size_t um = 0, uo = 0;
	for (size_t i = 0; i < sizeof(need) / sizeof(need[0]); i++) {
		if (known(need[i].x) && need[i].x->value > 0)
			continue;
		um += (size_t)snprintf(missing + um, sizeof(missing) - um,
				       "%s%s", um ? ", " : "", need[i].name);
		if (um >= sizeof(missing))
			um = sizeof(missing) - 1;
		uo += (size_t)snprintf(options + uo, sizeof(options) - uo,
				       "%s%s", uo ? ", " : "", need[i].option);
		if (uo >= sizeof(options))
			uo = sizeof(options) - 1;
	}
	if (um) {
		snprintf(err, errlen, "model FLOPs per token need params, "
			 "layers, width and seq_len (missing: %s); give %s or "
			 "--flops-per-token", missing, options);
		return SD_ERR_INVALID;
	}
	*fpt = sd_train_flops_palm(f->params.value, f->layers.value,
				   f->width.value, f->seq_len.value);
	*origin = SD_TRAIN_DERIVED;
	return SD_OK;
}

/*
 * The peak table.  Dense figures: NVIDIA's datasheets print the tensor
 * core numbers "with sparsity" (2:4 structured), twice the dense rate,
 * so those are halved here; FP32 is the non-tensor rate, which is dense.
 * AMD's data sheets print dense figures (sparsity is a separate line).
 *
 *  - H100 SXM5 / PCIe / NVL: NVIDIA H100 Tensor Core GPU datasheet
 *    (nvidia.com/en-us/data-center/h100): SXM BF16/FP16 1,979*, TF32 989*,
 *    FP8 3,958*, FP32 67; PCIe 1,513*, 756*, 3,026*, 51; NVL 1,671*,
 *    835*, 3,341*, 60 (* with sparsity).
 *  - H200 SXM / NVL: NVIDIA H200 Tensor Core GPU datasheet
 *    (nvidia.com/en-us/data-center/h200): the same compute as H100 SXM
 *    and H100 NVL respectively.
 *  - GH200: NVIDIA GH200 Grace Hopper Superchip datasheet: the H100 SXM
 *    figures (FP32 67, TF32 494 dense / 989 sparse).
 *  - H800 SXM / PCIe: NVIDIA H800 datasheet: the tensor and FP32 figures
 *    of H100 SXM / PCIe (FP64 is what differs).
 *  - A100 SXM4 / PCIe (40 and 80 GB), A800: NVIDIA A100 Tensor Core GPU
 *    datasheet: BF16/FP16 312 (624*), TF32 156 (312*), FP32 19.5, no FP8,
 *    the same for both form factors.
 *  - B200 (HGX B200) and the GB200's GPU: NVIDIA HGX and GB200 NVL72
 *    specifications, per GPU: B200 FP16/BF16 4.5 PF*, TF32 2.2 PF*,
 *    FP8 9 PF*, FP32 75 TF; GB200 5 PF*, 2.5 PF*, 10 PF*, 80 TF.
 *  - AMD Instinct MI300X and MI325X: AMD data sheets, BF16/FP16 1307.4,
 *    TF32 653.7, FP8 2614.9, FP32 163.4 (vector); MI250X: BF16/FP16 383,
 *    FP32 95.7 (matrix), no TF32 or FP8.
 */
#define NV_H100_DS "NVIDIA H100 Tensor Core GPU datasheet"
#define NV_H200_DS "NVIDIA H200 Tensor Core GPU datasheet"
#define NV_A100_DS "NVIDIA A100 Tensor Core GPU datasheet"
#define NV_B200_DS "NVIDIA HGX B200 specifications, per GPU"
#define NV_GB200_DS "NVIDIA GB200 NVL72 specifications, per GPU"
#define AMD_MI300_DS "AMD Instinct MI300X/MI325X data sheet"

/*                            bf16    fp16    tf32    fp8     fp32 */
#define PEAK_H100_SXM  { 989.5, 989.5, 494.5, 1979.0, 67.0 }
#define PEAK_H100_PCIE { 756.5, 756.5, 378.0, 1513.0, 51.0 }
#define PEAK_H100_NVL  { 835.5, 835.5, 417.5, 1670.5, 60.0 }
#define PEAK_A100      { 312.0, 312.0, 156.0, 0.0, 19.5 }
#define PEAK_MI300     { 1307.4, 1307.4, 653.7, 2614.9, 163.4 }

static const struct sd_train_peak_row peak_table[] = {
	{ "NVIDIA H100 SXM5", { "H100" }, { "PCIE", "NVL" }, PEAK_H100_SXM,
	  NV_H100_DS },
	{ "NVIDIA H100 PCIe", { "H100", "PCIE" }, { "NVL" }, PEAK_H100_PCIE,
	  NV_H100_DS },
	{ "NVIDIA H100 NVL", { "H100", "NVL" }, { "PCIE" }, PEAK_H100_NVL,
	  NV_H100_DS },
	{ "NVIDIA H200 SXM", { "H200" }, { "NVL", "GH200" }, PEAK_H100_SXM,
	  NV_H200_DS },
	{ "NVIDIA H200 NVL", { "H200", "NVL" }, { "GH200" }, PEAK_H100_NVL,
	  NV_H200_DS },
	{ "NVIDIA GH200", { "GH200" }, { NULL }, PEAK_H100_SXM,
	  "NVIDIA GH200 Grace Hopper Superchip datasheet" },
	{ "NVIDIA H800 SXM5", { "H800" }, { "PCIE" }, PEAK_H100_SXM,
	  "NVIDIA H800 Tensor Core GPU datasheet" },
	{ "NVIDIA H800 PCIe", { "H800", "PCIE" }, { NULL }, PEAK_H100_PCIE,
	  "NVIDIA H800 Tensor Core GPU datasheet" },
	{ "NVIDIA A100 SXM4", { "A100" }, { "PCIE" }, PEAK_A100, NV_A100_DS },
	{ "NVIDIA A100 PCIe", { "A100", "PCIE" }, { NULL }, PEAK_A100,
	  NV_A100_DS },
	{ "NVIDIA A800 SXM4", { "A800" }, { "PCIE" }, PEAK_A100,
	  "NVIDIA A800 Tensor Core GPU datasheet" },
	{ "NVIDIA A800 PCIe", { "A800", "PCIE" }, { NULL }, PEAK_A100,
	  "NVIDIA A800 Tensor Core GPU datasheet" },
	{ "NVIDIA B200", { "B200" }, { "GB200" },
	  { 2250.0, 2250.0, 1100.0, 4500.0, 75.0 }, NV_B200_DS },
	{ "NVIDIA GB200 (its B200)", { "GB200" }, { NULL },
	  { 2500.0, 2500.0, 1250.0, 5000.0, 80.0 }, NV_GB200_DS },
	{ "AMD Instinct MI300X", { "MI300X" }, { NULL }, PEAK_MI300,
	  AMD_MI300_DS },
	{ "AMD Instinct MI325X", { "MI325X" }, { NULL }, PEAK_MI300,
	  AMD_MI300_DS },
	{ "AMD Instinct MI250X", { "MI250X" }, { NULL },
	  { 383.0, 383.0, 0.0, 0.0, 95.7 }, "AMD Instinct MI250X data sheet" },
};

const struct sd_train_peak_row *sd_train_peak_table(size_t *n)
{
	*n = sizeof(peak_table) / sizeof(peak_table[0]);
	return peak_table;
}

/* Whether hay contains needle, ignoring case (ASCII). */
static int contains_ci(const char *hay, const char *needle)
{
	size_t nl = strlen(needle);
	for (const char *p = hay; *p; p++)
		if (strncasecmp(p, needle, nl) == 0)
			return 1;
	return nl == 0;
}

static int row_matches(const struct sd_train_peak_row *r, const char *name)
{
	for (size_t i = 0; i < 3 && r->has[i]; i++)
		if (!contains_ci(name, r->has[i]))
			return 0;
	for (size_t i = 0; i < 3 && r->lacks[i]; i++)
		if (contains_ci(name, r->lacks[i]))
			return 0;
	return 1;
}

const struct sd_train_peak_row *sd_train_peak_find(const char *device_name)
{
	if (!device_name || !*device_name)
		return NULL;
	for (size_t i = 0; i < sizeof(peak_table) / sizeof(peak_table[0]); i++)
		if (row_matches(&peak_table[i], device_name))
			return &peak_table[i];
	return NULL;
}

int sd_train_peak(const char *device_name, enum sd_train_precision p,
		  const struct sd_train_fact *override,
		  struct sd_train_peak *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	out->tflops = NAN;
	if (override && known(override) && override->value > 0) {
		out->tflops = override->value;
		out->origin = override->origin;
		return SD_OK;
	}
	if ((unsigned)p >= SD_TRAIN_NPRECISIONS) {
		snprintf(err, errlen, "unknown precision for the peak table");
		return SD_ERR_INVALID;
	}
	if (!device_name || !*device_name) {
		snprintf(err, errlen, "no device name for the peak table; give "
			 "--peak-tflops");
		return SD_ERR_INVALID;
	}
	const struct sd_train_peak_row *r = sd_train_peak_find(device_name);
	if (!r) {
		snprintf(err, errlen, "no peak for %s; give --peak-tflops",
			 device_name);
		return SD_ERR_INVALID;
	}
	if (!(r->tflops[p] > 0)) {
		snprintf(err, errlen, "no %s peak for %s (%s has none); give "
			 "--peak-tflops or another precision",
			 precision_names[p], device_name, r->part);
		return SD_ERR_INVALID;
	}
	out->tflops = r->tflops[p];
	out->origin = SD_TRAIN_TABLE;
	snprintf(out->part, sizeof(out->part), "%s", r->part);
	return SD_OK;
}

int sd_train_summarize(const struct sd_train_step *s, size_t n,
		       const struct sd_train_facts *f,
		       struct sd_train_summary *out, char *err, size_t errlen)
{
	double *times = NULL;
	int rc = sd_train_check_steps(s, n, err, errlen);
	memset(out, 0, sizeof(*out));
	out->step_s_mean = out->step_s_median = out->tokens_per_s = NAN;
	out->tgs = out->flops_per_token = out->tflops = out->mfu = NAN;
	out->peak.tflops = NAN;
	out->compute_share = out->comm_share = out->optim_share = NAN;
	out->other_share = NAN;
	out->compute_s_mean = out->comm_s_mean = out->optim_s_mean = NAN;
	out->nonfinite_step = -1;
	out->nonfinite_loss = NAN;
	out->loss_first = out->loss_last = NAN;
	if (rc != SD_OK)
		return rc;
	out->rows = n;
	out->first_step = s[0].step;
	out->last_step = s[n - 1].step;

	int any_loss = 0;
	for (size_t i = 0; i < n; i++) {
		if (!(s[i].has & SD_STEP_LOSS))
			continue;
		if (!any_loss++)
			out->loss_first = s[i].loss;
		out->loss_last = s[i].loss;
		if (!isfinite(s[i].loss) && out->nonfinite_step < 0) {
			out->nonfinite_step = s[i].step;
			out->nonfinite_loss = s[i].loss;
		}
	}

	times = malloc(n * sizeof(*times));
	if (!times) {
		snprintf(err, errlen, "out of memory summarising %zu steps", n);
		return SD_ERR_NOMEM;
	}
	double warmup = known(&f->warmup_steps) ? f->warmup_steps.value : 0.0;
	int tokens_known = known(&f->tokens_per_step) &&
			   f->tokens_per_step.value > 0;
	long no_tokens_step = -1, in_warmup = 0, no_time = 0;
	double bd_step_s = 0, bd_compute = 0, bd_comm = 0, bd_optim = 0;
	long bd_steps = 0;
	const unsigned bd_bits = SD_STEP_COMPUTE | SD_STEP_COMM | SD_STEP_OPTIM;
	for (size_t i = 1; i < n; i++) {
		if (!sd_train_step_timed(s, i, warmup)) {
			if (s[i].has & SD_STEP_TIME)
				in_warmup++;
			else
				no_time++;
			continue;
		}
		double span = (double)(s[i].step - s[i - 1].step);
		double tok = (s[i].has & SD_STEP_TOKENS) ? s[i].tokens
			     : tokens_known ? f->tokens_per_step.value : NAN;
		if (isnan(tok) && no_tokens_step < 0)
			no_tokens_step = s[i].step;
		times[out->timed_rows++] = s[i].step_s;
		out->timed_steps += s[i].step - s[i - 1].step;
		out->timed_s += s[i].step_s * span;
		out->timed_tokens += tok * span;
		if ((s[i].has & bd_bits) == bd_bits) {
			out->breakdown_rows++;
			bd_steps += s[i].step - s[i - 1].step;
			bd_step_s += s[i].step_s * span;
			bd_compute += s[i].compute_s * span;
			bd_comm += s[i].comm_s * span;
			bd_optim += s[i].optim_s * span;
		}
	}

	if (out->timed_rows == 0) {
		snprintf(out->tgs_why, sizeof(out->tgs_why), "no timed steps: "
			 "of %zu rows the first is never timed, %ld are in "
			 "the %g warm-up steps and %ld have no step time; "
			 "record more steps or lower the warm-up", n, in_warmup,
			 warmup, no_time);
	} else {
		out->step_s_median = sd_median(times, (int)out->timed_rows);
		out->step_s_mean = out->timed_s / (double)out->timed_steps;
		if (no_tokens_step >= 0) {
			out->timed_tokens = NAN;
			snprintf(out->tgs_why, sizeof(out->tgs_why),
				 "tgs needs the tokens of a step: step %ld has "
				 "none; give --tokens-per-step",
				 no_tokens_step);
		} else {
			out->tokens_per_s = out->timed_tokens / out->timed_s;
			if (known(&f->devices) && f->devices.value >= 1)
				out->tgs = out->tokens_per_s / f->devices.value;
			else
				snprintf(out->tgs_why, sizeof(out->tgs_why),
					 "tgs needs the number of devices; "
					 "give --gpus");
		}
	}
	free(times);

	char why[200];
	if (sd_train_flops_per_token(f, &out->flops_per_token,
				     &out->flops_origin, why, sizeof(why)) !=
	    SD_OK)
		snprintf(out->tflops_why, sizeof(out->tflops_why), "%s", why);
	else if (isnan(out->tgs))
		sd_strlcpy(out->tflops_why, out->tgs_why,
			   sizeof(out->tflops_why)); /* the same cause */
	else
		out->tflops = out->flops_per_token * out->tgs / 1e12;

	if (sd_train_peak(f->device_name, f->precision, &f->peak_tflops,
			  &out->peak, why, sizeof(why)) != SD_OK)
		snprintf(out->mfu_why, sizeof(out->mfu_why), "%s", why);
	else if (isnan(out->tflops))
		sd_strlcpy(out->mfu_why, out->tflops_why,
			   sizeof(out->mfu_why));
	else if (out->tflops > out->peak.tflops)
		/* more than the peak: the peak is what is wrong (measured
		 * on a busy core, or given too low) */
		snprintf(out->mfu_why, sizeof(out->mfu_why), "not a figure: "
			 "%.4g TFLOPs/device is above the peak of %.4g (%s), "
			 "so that peak is wrong (MFU would be %.0f%%); give "
			 "--peak-tflops", out->tflops, out->peak.tflops,
			 sd_train_origin_name(out->peak.origin),
			 100 * out->tflops / out->peak.tflops);
	else
		out->mfu = out->tflops / out->peak.tflops;

	if (out->breakdown_rows == 0 || !(bd_step_s > 0)) {
		snprintf(out->breakdown_why, sizeof(out->breakdown_why),
			 "no timed step has its compute, all_reduce and "
			 "optimizer times");
	} else {
		out->compute_share = bd_compute / bd_step_s;
		out->comm_share = bd_comm / bd_step_s;
		out->optim_share = bd_optim / bd_step_s;
		out->other_share = 1.0 - out->compute_share - out->comm_share -
				   out->optim_share;
		out->compute_s_mean = bd_compute / (double)bd_steps;
		out->comm_s_mean = bd_comm / (double)bd_steps;
		out->optim_s_mean = bd_optim / (double)bd_steps;
	}
	return SD_OK;
}

void sd_train_tolerance_default(struct sd_train_tolerance *t)
{
	memset(t, 0, sizeof(*t));
	t->rel_tol = SD_TRAIN_REL_TOL;
	t->abs_tol = SD_TRAIN_ABS_TOL;
	t->var_tol = SD_TRAIN_VAR_TOL;
	t->steps = SD_TRAIN_COMPARE_STEPS;
}

void sd_train_tolerance_for(int same_arith, const char *arith,
			    double healthy, struct sd_train_tolerance *t)
{
	sd_train_tolerance_default(t);
	t->require_steps = 1;
	if (same_arith && arith && strcmp(arith, "fp32-cpu") == 0) {
		t->rel_tol = 0;
		t->abs_tol = healthy > 0 ? SD_TRAIN_SAME_FACTOR * healthy
					 : SD_TRAIN_SAME_ABS_TOL;
		t->var_tol = t->abs_tol * t->abs_tol;
		t->same_arith = 1;
		if (healthy > 0)
			snprintf(t->says, sizeof(t->says), "same arithmetic "
				 "(fp32 on a CPU): each step within %.3g nat, "
				 "%g x the largest difference of healthy runs "
				 "measured against this reference (%.3g)",
				 t->abs_tol, SD_TRAIN_SAME_FACTOR, healthy);
		else
			snprintf(t->says, sizeof(t->says), "same arithmetic "
				 "(fp32 on a CPU): each step within %g nat "
				 "(this reference's healthy spread is not "
				 "measured: above every one measured)",
				 SD_TRAIN_SAME_ABS_TOL);
	} else if (same_arith) {
		snprintf(t->says, sizeof(t->says), "same arithmetic (%s), whose "
			 "spread is not measured yet: the band of another "
			 "arithmetic, %g x |reference| a step",
			 arith ? arith : "not said", SD_TRAIN_REL_TOL);
	} else {
		snprintf(t->says, sizeof(t->says), "another machine or "
			 "precision: %g x |reference| a step, variance %g",
			 SD_TRAIN_REL_TOL, SD_TRAIN_VAR_TOL);
	}
}

const char *sd_train_verdict_name(enum sd_train_verdict v)
{
	switch (v) {
	case SD_TRAIN_PASSED:
		return "passed";
	case SD_TRAIN_FAILED:
		return "failed";
	case SD_TRAIN_NONFINITE:
		return "nonfinite";
	case SD_TRAIN_NOT_JUDGED:
		return "not judged";
	}
	return "failed";
}

/* "NaN", "inf" or "-inf" for a loss that is not finite. */
static const char *nonfinite_word(double v)
{
	return isnan(v) ? "NaN" : v > 0 ? "inf" : "-inf";
}

int sd_train_compare(const struct sd_train_step *s, size_t n,
		     const char *run_config,
		     const struct sd_train_reference *ref,
		     const struct sd_train_tolerance *tol,
		     struct sd_train_comparison *out, char *err, size_t errlen)
{
	struct sd_train_tolerance def;
	if (!tol) {
		sd_train_tolerance_default(&def);
		tol = &def;
	}
	memset(out, 0, sizeof(*out));
	out->tol = *tol;
	out->steps_wanted = tol->steps;
	out->diff_mean = out->diff_var = out->rmse = out->max_abs_diff = NAN;
	out->worst_loss = out->worst_ref = out->worst_allowed = NAN;
	out->max_diff_step = out->worst_step = out->nonfinite_step = -1;
	out->first_step = out->last_step = -1;
	out->nonfinite_loss = NAN;
	out->verdict = SD_TRAIN_FAILED;

	if (!ref || !ref->config || ref->n == 0) {
		snprintf(err, errlen, "the reference is empty");
		return SD_ERR_INVALID;
	}
	enum sd_train_ref_match m =
		run_config ? sd_train_ref_identity(ref->config, run_config,
						   NULL, 0)
			   : SD_REF_OTHER_WORKLOAD;
	if (m == SD_REF_OTHER_WORKLOAD || m == SD_REF_OTHER_SEED) {
		snprintf(err, errlen, "reference '%s' is for config '%s', this "
			 "run is '%s': make a reference from runs of this "
			 "config (shakedown reference create) or run the "
			 "reference's config", ref->name, ref->config,
			 run_config ? run_config : "(none)");
		return SD_ERR_INVALID;
	}
	if (!(tol->rel_tol >= 0) || !(tol->abs_tol >= 0) ||
	    !(tol->var_tol >= 0) || tol->steps < 1 ||
	    tol->failing_steps_allowed < 0) {
		snprintf(err, errlen, "tolerances must not be negative and the "
			 "steps compared at least 1");
		return SD_ERR_INVALID;
	}
	int rc = sd_train_check_steps(s, n, err, errlen);
	if (rc != SD_OK)
		return rc;

	/* the window: the first tol->steps step numbers in both */
	size_t most = n < (size_t)tol->steps ? n : (size_t)tol->steps;
	double *diffs = malloc(most * sizeof(*diffs));
	if (!diffs) {
		snprintf(err, errlen, "out of memory comparing %zu steps", n);
		return SD_ERR_NOMEM;
	}
	size_t j = 0, nb = 0;
	double worst_ratio = -1.0;
	long first_loss_step = -1, last_loss_step = -1;
	for (size_t i = 0; i < n; i++) {
		if (!(s[i].has & SD_STEP_LOSS))
			continue;
		if (first_loss_step < 0)
			first_loss_step = s[i].step;
		last_loss_step = s[i].step;
		if (!isfinite(s[i].loss) && out->nonfinite_step < 0) {
			out->nonfinite_step = s[i].step;
			out->nonfinite_loss = s[i].loss;
		}
		if (nb >= (size_t)tol->steps ||
		    (tol->last_step > 0 && s[i].step > tol->last_step))
			continue;
		while (j < ref->n && ref->steps[j].step < s[i].step)
			j++;
		if (j == ref->n || ref->steps[j].step != s[i].step)
			continue;
		if (!isfinite(s[i].loss))
			continue; /* the non-finite verdict below */
		const struct sd_train_ref_step *r = &ref->steps[j];
		double d = s[i].loss - r->mean;
		double ad = fabs(d);
		double allowed = tol->abs_tol + tol->rel_tol * fabs(r->mean);
		if (nb == 0)
			out->first_step = s[i].step;
		out->last_step = s[i].step;
		diffs[nb++] = d;
		if (!(ad <= out->max_abs_diff)) { /* NaN at first */
			out->max_abs_diff = ad;
			out->max_diff_step = s[i].step;
		}
		if (ad > allowed)
			out->failing_steps++;
		/* the worst step: the largest share of its allowance used */
		double ratio = allowed > 0 ? ad / allowed
			       : ad > 0 ? INFINITY : 0.0;
		if (ratio > worst_ratio) {
			worst_ratio = ratio;
			out->worst_step = s[i].step;
			out->worst_loss = s[i].loss;
			out->worst_ref = r->mean;
			out->worst_allowed = allowed;
		}
	}
	out->steps_compared = (int)nb;

	if (out->nonfinite_step >= 0 || nb == 0)
		free(diffs);
	if (out->nonfinite_step >= 0) {
		out->verdict = SD_TRAIN_NONFINITE;
		snprintf(out->reason, sizeof(out->reason), "loss became %s at "
			 "step %ld", nonfinite_word(out->nonfinite_loss),
			 out->nonfinite_step);
		return SD_OK;
	}
	if (nb == 0) {
		if (first_loss_step < 0)
			snprintf(err, errlen, "no step of this run has a loss "
				 "to compare with reference '%s'", ref->name);
		else
			snprintf(err, errlen, "no step of this run (steps "
				 "%ld-%ld) is in reference '%s' (steps "
				 "%ld-%ld)%s", first_loss_step, last_loss_step,
				 ref->name, ref->steps[0].step,
				 ref->steps[ref->n - 1].step,
				 tol->last_step > 0 ? " up to the last step "
						      "compared" : "");
		return SD_ERR_INVALID;
	}
	/* two passes over the differences: the mean, then the variance
	 * about it (exactly 0 for an identical curve) */
	double sum = 0, sumsq = 0, var = 0;
	for (size_t i = 0; i < nb; i++) {
		sum += diffs[i];
		sumsq += diffs[i] * diffs[i];
	}
	out->diff_mean = sum / (double)nb;
	for (size_t i = 0; i < nb; i++)
		var += (diffs[i] - out->diff_mean) *
		       (diffs[i] - out->diff_mean);
	free(diffs);
	out->diff_var = var / (double)nb;
	out->rmse = sqrt(sumsq / (double)nb);
	/* the window's steps the reference has: a run without one of
	 * them was not judged over what is judged */
	size_t want = 0;
	for (size_t k = 0; k < ref->n && want < (size_t)tol->steps; k++)
		if (tol->last_step <= 0 || ref->steps[k].step <= tol->last_step)
			want++;
	if (tol->require_steps && nb < want) {
		out->verdict = SD_TRAIN_NOT_JUDGED;
		snprintf(out->reason, sizeof(out->reason), "not judged: %zu of "
			 "the %zu steps judged (steps %ld-%ld of reference "
			 "'%.64s') ran; run at least %ld steps",
			 nb, want, ref->steps[0].step,
			 ref->steps[want - 1].step, ref->name,
			 ref->steps[want - 1].step);
		return SD_OK;
	}
	if (nb < (size_t)tol->steps)
		snprintf(out->note, sizeof(out->note), "compared %zu step%s "
			 "(steps %ld-%ld), fewer than %d: that is all this run "
			 "and reference '%.64s' have in common%s", nb,
			 nb == 1 ? "" : "s", out->first_step, out->last_step,
			 tol->steps, ref->name,
			 tol->last_step > 0 ? " up to the last step compared"
					    : "");

	int band_ok = out->failing_steps <= tol->failing_steps_allowed;
	int var_ok = out->diff_var <= tol->var_tol;
	if (band_ok && var_ok) {
		out->verdict = SD_TRAIN_PASSED;
		return SD_OK;
	}
	out->verdict = SD_TRAIN_FAILED;
	if (!band_ok)
		snprintf(out->reason, sizeof(out->reason), "loss at step %ld "
			 "is %.9g, reference %.9g: |diff| %.3g is above the "
			 "%.3g allowed (%g + %g x |reference|); %d of %zu "
			 "steps compared are outside the tolerance",
			 out->worst_step,
			 out->worst_loss, out->worst_ref,
			 fabs(out->worst_loss - out->worst_ref),
			 out->worst_allowed, tol->abs_tol, tol->rel_tol,
			 out->failing_steps, nb);
	else
		snprintf(out->reason, sizeof(out->reason), "variance of the "
			 "loss difference over %zu steps is %.3g, above %.3g; "
			 "the largest |diff| is %.3g at step %ld", nb,
			 out->diff_var, tol->var_tol, out->max_abs_diff,
			 out->max_diff_step);
	return SD_OK;
}

size_t sd_train_metric_rows(const struct sd_train_summary *s,
			    const struct sd_train_comparison *c,
			    struct sd_train_metric *rows, size_t cap)
{
	size_t k = 0;
#define ROW(n_, u_, v_)                                                  \
	do {                                                             \
		double v__ = (v_);                                       \
		if (k < cap && isfinite(v__))                            \
			rows[k++] = (struct sd_train_metric){            \
				(n_), (u_), v__, NULL, -1 };             \
	} while (0)
	if (s) {
		ROW("tgs", "tokens/s/device", s->tgs);
		ROW("tokens_per_s", "tokens/s", s->tokens_per_s);
		ROW("tflops", "TFLOP/s/device", s->tflops);
		ROW("mfu", "fraction", s->mfu);
		ROW("peak_tflops", "TFLOP/s/device", s->peak.tflops);
		ROW("flops_per_token", "FLOP/token", s->flops_per_token);
		ROW("step_s_mean", "s", s->step_s_mean);
		ROW("step_s_median", "s", s->step_s_median);
		ROW("timed_steps", "steps",
		    s->timed_rows ? (double)s->timed_steps : NAN);
		ROW("compute_share", "fraction", s->compute_share);
		ROW("comm_share", "fraction", s->comm_share);
		ROW("optim_share", "fraction", s->optim_share);
		ROW("other_share", "fraction", s->other_share);
		ROW("compute_s_mean", "s", s->compute_s_mean);
		ROW("comm_s_mean", "s", s->comm_s_mean);
		ROW("optim_s_mean", "s", s->optim_s_mean);
		ROW("loss_first", "nat", s->loss_first);
		ROW("loss_last", "nat", s->loss_last);
	}
	if (c && c->steps_compared > 0) {
		ROW("loss_var", "nat^2", c->diff_var);
		ROW("loss_rmse", "nat", c->rmse);
		ROW("loss_diff_mean", "nat", c->diff_mean);
		ROW("loss_max_abs_diff", "nat", c->max_abs_diff);
		ROW("loss_max_diff_step", "step", (double)c->max_diff_step);
		ROW("loss_steps_compared", "steps", (double)c->steps_compared);
		ROW("loss_failing_steps", "steps", (double)c->failing_steps);
	}
#undef ROW
	return k;
}
