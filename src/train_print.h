/*
 * train_print.h - the one text printer of a training summary: tgs, the
 * job's tokens/s, TFLOPs per device, the log's own figure, MFU, the step
 * time and its breakdown, the loss, and the reference with its loss
 * check, as `shakedown train` and `shakedown ingest` print them (their
 * "# summary:" line before it and their own lines after it are theirs).
 */
#ifndef SD_TRAIN_PRINT_H
#define SD_TRAIN_PRINT_H

#include <stdio.h>

#include "train/metrics.h"

struct sd_train_print {
	double devices;        /* the job's devices (tokens/s line) */
	const char *peak_part; /* what the peak is of, after its origin in
				  MFU's parentheses ("NVIDIA H100 SXM5"),
				  or NULL or "" */
	double logged_tflops;  /* the log's own TFLOP/s, NaN: none */
	const char *logged_by; /* how the log counts them ("Megatron-LM's
				  num_floating_point_operations ..."),
				  NULL: the framework's formula */
	double megatron_fpt;   /* Megatron-LM's FLOPs per token where the
				  model is known (sd_train_flops_megatron),
				  NaN: none */
	double floor_loss;     /* the data's loss floor, NaN: none */
	const struct sd_train_comparison *cmp; /* NULL: not compared */
	const char *ref_label; /* compared: the reference's label */
	const char *ref_note;  /* not compared: why */
};

void sd_train_summary_print(FILE *out, const struct sd_train_summary *s,
			    const struct sd_train_print *p);

#endif
