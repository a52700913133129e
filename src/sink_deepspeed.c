/*
 * sink_deepspeed.c - the DeepSpeed communication benchmark's table (see
 * sink_deepspeed.h).
 *
 * The shapes are those of deepspeedai/DeepSpeedExamples
 * benchmarks/communication (earlier microsoft/DeepSpeed, same path):
 *
 *   utils.py print_header        a title of "\n---- Performance of {comm_op}
 *                                on {world_size} devices " and 57 dashes
 *                                (world_size 2 for pt2pt), the names as
 *                                "{:20s} {:25s} {:20s} {:20s} {:20s}", then
 *                                100 dashes
 *   utils.py get_metric_strings  '{:.3f}' of tput / 1e9 and busbw / 1e9;
 *                                the duration '{:.3f} us' below 1e3 us,
 *                                else '{:.3f} ms'; --raw: bare us
 *   utils.py convert_size        "%s %s" % (round(bytes / 1024**i, 2),
 *                                unit) with i = floor(log(bytes, 1024))
 *   <op>.py timed_<op>           "{size:<20} {desc:25s} {duration_str:20s}
 *                                {tput_str:20s} {busbw_str:20s}", desc
 *                                "{nelement}x{element_size}" of the input
 *                                tensor, size its bytes (bare with --raw)
 *
 * Every field is padded, the last one too: a DeepSpeed row ends in spaces.
 * shakedown's time is in microseconds where DeepSpeed's is in seconds, so
 * the microseconds are printed as they are and the milliseconds are them
 * over 1e3.
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include "shakedown/coll.h"
#include "sink_deepspeed.h"

/* print_header's rules: 57 dashes end the title, 100 make the line under
 * the column names */
#define DS_TITLE_DASHES 57
#define DS_RULE_DASHES 100
static const char dashes[] =
	"----------------------------------------------------------------------"
	"------------------------------";

int sd_ds_devices(const struct sd_test_info *ti)
{
	return ti->op == SD_OP_PT2PT ? 2 : ti->nranks;
}

int sd_ds_in_place(const struct sd_test_info *ti)
{
	switch (ti->op) {
	case SD_OP_ALL_REDUCE:
	case SD_OP_BROADCAST:
	case SD_OP_REDUCE:
	case SD_OP_PT2PT:
		return ti->in_place;
	default:
		return 0;
	}
}

void sd_ds_print_header(FILE *o, const char *op, int ndevices, int raw)
{
	_Static_assert(sizeof(dashes) - 1 == DS_RULE_DASHES, "100 dashes");
	fprintf(o, "\n---- Performance of %s on %d devices %.*s\n", op,
		ndevices, DS_TITLE_DASHES, dashes);
	fprintf(o, "%-20s %-25s %-20s %-20s %-20s\n", "Size (Bytes)",
		"Description", raw ? "Duration (us)" : "Duration",
		"Throughput (Gbps)", "BusBW (Gbps)");
	fprintf(o, "%.*s\n", DS_RULE_DASHES, dashes);
}

void sd_ds_format_size(size_t bytes, char *buf, size_t len)
{
	static const char *const unit[] = { "B",  "KB", "MB", "GB", "TB",
					    "PB", "EB", "ZB", "YB" };
	if (bytes == 0) {
		snprintf(buf, len, "0B");
		return;
	}
	/* Python's math.log(x, 1024) is log(x) / log(1024) of the same libm,
	 * so the unit flips where DeepSpeed's does (1048575 B is 1024.0 KB) */
	double x = (double)bytes;
	int i = (int)floor(log(x) / log(1024.0));
	if (i < 0)
		i = 0;
	if (i > 8)
		i = 8;
	/* round(v, 2) printed with %s: the correctly rounded two decimals
	 * (ties to even in both) without a trailing zero, keeping one
	 * digit after the point as Python's repr does */
	char num[32];
	int n = snprintf(num, sizeof(num), "%.2f", x / pow(1024.0, i));
	if (n > 3 && n < (int)sizeof(num) && num[n - 1] == '0')
		num[n - 1] = '\0';
	snprintf(buf, len, "%s %s", num, unit[i]);
}

void sd_ds_format_duration(double us, int raw, char *buf, size_t len)
{
	if (raw)
		snprintf(buf, len, "%.3f", us);
	else if (us < 1e3)
		snprintf(buf, len, "%.3f us", us);
	else
		snprintf(buf, len, "%.3f ms", us / 1e3);
}

void sd_ds_print_row(FILE *o, const struct sd_measurement *m, int raw)
{
	char size[32], dur[64], tput[64], busbw[64];
	if (raw)
		snprintf(size, sizeof(size), "%zu", m->ds_size_bytes);
	else
		sd_ds_format_size(m->ds_size_bytes, size, sizeof(size));
	sd_ds_format_duration(m->time_us, raw, dur, sizeof(dur));
	snprintf(tput, sizeof(tput), "%.3f", m->ds_throughput_gbps);
	snprintf(busbw, sizeof(busbw), "%.3f", m->ds_busbw_gbps);
	/* get_bw says so and goes on with zero bandwidths */
	if (m->time_us == 0)
		fprintf(o, "Error. Duration is 0.\n");
	fprintf(o, "%-20s %-25s %-20s %-20s %-20s\n", size, m->ds_description,
		dur, tput, busbw);
}
