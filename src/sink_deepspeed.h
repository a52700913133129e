/*
 * sink_deepspeed.h - the DeepSpeed communication benchmark's table
 * (DeepSpeedExamples benchmarks/communication, utils.py and the timed_*
 * functions of each op's script), character for character, for
 * `shakedown run --format deepspeed` (src/sink_text.c calls these).
 *
 * raw is DeepSpeed's --raw: sizes as bare bytes, durations as bare
 * microseconds, "Duration (us)" in the header.
 */
#ifndef SD_SINK_DEEPSPEED_H
#define SD_SINK_DEEPSPEED_H

#include <stddef.h>
#include <stdio.h>
#include "sink.h"

/* The device count DeepSpeed's title gives test ti: pt2pt's is always 2
 * (print_header), any other op's the ranks taking part. */
int sd_ds_devices(const struct sd_test_info *ti);

/* Whether the DeepSpeed table shows test ti's in-place rows: where
 * DeepSpeed's (or torch.distributed's) call works in place and ti
 * measures in place.  all_reduce, broadcast, reduce and pt2pt work on one
 * tensor (dist.all_reduce(t), dist.broadcast(t, src), dist.send/recv(t));
 * all_gather, all_to_all and the others write a tensor of their own
 * (all_gather_into_tensor, all_to_all_single, ...). */
int sd_ds_in_place(const struct sd_test_info *ti);

/* Print print_header's block: a blank line, "---- Performance of OP on N
 * devices ---...", the column names and the dash line.  op is the
 * operation's name; ndevices from sd_ds_devices. */
void sd_ds_print_header(FILE *o, const char *op, int ndevices, int raw);

/* Print one measurement's row as timed_<op> does, preceded by get_bw's
 * "Error. Duration is 0." when its time is 0. */
void sd_ds_print_row(FILE *o, const struct sd_measurement *m, int raw);

/* convert_size: "0B", "512.0 B", "1.0 KB", "1.33 MB", ... (len >= 32). */
void sd_ds_format_size(size_t bytes, char *buf, size_t len);

/* get_metric_strings' duration of us microseconds: "480.224 us" below
 * 1000 us, else "3.094 ms"; raw: "3094.123" (len >= 32). */
void sd_ds_format_duration(double us, int raw, char *buf, size_t len);

#endif
