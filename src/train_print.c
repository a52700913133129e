/*
 * train_print.c - the one text printer of a training summary (see
 * train_print.h), for `shakedown train` and `shakedown ingest`.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>

#include "train_print.h"

static void print_check(FILE *out, const struct sd_train_comparison *k)
{
	if (k->verdict == SD_TRAIN_NONFINITE) {
		fprintf(out, "  loss check     nonfinite: loss became %s at step "
			"%ld\n", isnan(k->nonfinite_loss) ? "NaN" : "infinite",
			k->nonfinite_step);
	} else if (k->verdict == SD_TRAIN_NOT_JUDGED) {
		fprintf(out, "  loss check     %s\n", k->reason);
	} else {
		fprintf(out, "  loss check     %d steps compared: variance %.3g, "
			"RMSE %.3g, max |diff| %.3g at step %ld: %s",
			k->steps_compared, k->diff_var, k->rmse,
			k->max_abs_diff, k->max_diff_step,
			sd_train_verdict_name(k->verdict));
		/* a log that starts elsewhere says where its steps were */
		if (k->steps_compared > 0 && k->first_step != 1)
			fprintf(out, " (steps %ld to %ld)", k->first_step,
				k->last_step);
		fputc('\n', out);
	}
	if (k->tol.says[0] && k->verdict != SD_TRAIN_NOT_JUDGED &&
	    k->verdict != SD_TRAIN_NONFINITE)
		fprintf(out, "  band           %s\n", k->tol.says);
	if (k->verdict == SD_TRAIN_FAILED)
		fprintf(out, "  why            %s\n", k->reason);
	if (k->note[0])
		fprintf(out, "  note           %s\n", k->note);
}

void sd_train_summary_print(FILE *out, const struct sd_train_summary *s,
			    const struct sd_train_print *p)
{
	if (isfinite(s->tgs))
		fprintf(out, "  tgs            %.1f tokens/s/device\n"
			"  tokens/s       %.1f (the job's, %.0f devices)\n",
			s->tgs, s->tokens_per_s, p->devices);
	else
		fprintf(out, "  tgs            - (%s)\n", s->tgs_why);
	if (isfinite(s->tflops))
		fprintf(out, "  TFLOPs/device  %.4f (%.4g FLOPs/token, %s%s)\n",
			s->tflops, s->flops_per_token,
			sd_train_origin_name(s->flops_origin),
			s->flops_origin == SD_TRAIN_DERIVED
				? ": PaLM's formula, shakedown-train(7)"
				: "");
	else
		fprintf(out, "  TFLOPs/device  - (%s)\n", s->tflops_why);
	if (isfinite(s->tflops) && isfinite(p->megatron_fpt) &&
	    s->flops_origin == SD_TRAIN_DERIVED)
		fprintf(out, "  Megatron-LM's  %.4f TFLOPs/device (%.4g FLOPs/token: "
			"causal attention halved, embeddings left out; the "
			"line above is PaLM's)\n",
			s->tflops * p->megatron_fpt / s->flops_per_token,
			p->megatron_fpt);
	if (isfinite(p->logged_tflops))
		fprintf(out, "  the log's own  %.4g TFLOP/s/device (mean over the "
			"timed rows, by %s; shown, not used)\n",
			p->logged_tflops,
			p->logged_by ? p->logged_by : "the framework's formula");
	if (isfinite(s->mfu))
		fprintf(out, "  MFU            %.2f%% of %.4g TFLOPs (%s%s%s)\n",
			100 * s->mfu, s->peak.tflops,
			sd_train_origin_name(s->peak.origin),
			p->peak_part && *p->peak_part ? ": " : "",
			p->peak_part ? p->peak_part : "");
	else
		fprintf(out, "  MFU            - (%s)\n", s->mfu_why);
	if (isfinite(s->step_s_mean)) {
		fprintf(out, "  step time      mean %.4f s, median %.4f s",
			s->step_s_mean, s->step_s_median);
		if (s->breakdown_rows)
			fprintf(out, ": compute %.1f%%, all_reduce %.1f%%, "
				"optimizer %.1f%%, other %.1f%%",
				100 * s->compute_share, 100 * s->comm_share,
				100 * s->optim_share, 100 * s->other_share);
		fputc('\n', out);
	}
	if (isfinite(s->loss_first)) {
		fprintf(out, "  loss           first %.4f, last %.4f",
			s->loss_first, s->loss_last);
		if (isfinite(p->floor_loss))
			fprintf(out, "; floor %.4f (the Markov source's "
				"entropy)", p->floor_loss);
		fputc('\n', out);
	}
	if (p->cmp) {
		fprintf(out, "  reference      %s\n", p->ref_label);
		print_check(out, p->cmp);
	} else {
		fprintf(out, "  reference      %s\n", p->ref_note);
	}
}
