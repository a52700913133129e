/*
 * unit_deepspeed.c - table-driven unit tests of the DeepSpeed table's
 * strings (src/sink_deepspeed.c): convert_size and get_metric_strings at
 * the places a size or a duration changes unit or rounds.  The expected
 * strings are what DeepSpeed's own utils.py (DeepSpeedExamples
 * benchmarks/communication) printed for the same numbers under Python 3.
 */
#include "config.h"

#include <stdint.h>
#include <string.h>

#include "sink_deepspeed.h"
#include "tap.h"

static void test_sizes(void)
{
	static const struct { uint64_t bytes; const char *want; } rows[] = {
		{ 0, "0B" }, { 1, "1.0 B" }, { 340, "340.0 B" },
		{ 1023, "1023.0 B" }, { 1024, "1.0 KB" },
		/* 1.125 and 1.375 are exact ties: both round half to even */
		{ 1152, "1.12 KB" }, { 1408, "1.38 KB" }, { 1536, "1.5 KB" },
		{ 8184, "7.99 KB" }, { 65532, "64.0 KB" },
		/* the unit from floor(log), the number rounded after it */
		{ 1048575, "1024.0 KB" }, { 1048576, "1.0 MB" },
		{ 1395864, "1.33 MB" }, { 1000000000, "953.67 MB" },
		{ 3ull << 30, "3.0 GB" }, { 1ull << 40, "1.0 TB" },
		{ 1ull << 50, "1.0 PB" }, { (1ull << 60) + 1, "1.0 EB" },
		{ UINT64_MAX, "16.0 EB" },
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		char buf[32];
		sd_ds_format_size((size_t)rows[i].bytes, buf, sizeof(buf));
		ok(strcmp(buf, rows[i].want) == 0, "convert_size(%llu) = '%s'",
		   (unsigned long long)rows[i].bytes, rows[i].want);
		if (strcmp(buf, rows[i].want) != 0)
			printf("#   got '%s'\n", buf);
	}
}

static void test_durations(void)
{
	static const struct {
		double us;
		int raw;
		const char *want;
	} rows[] = {
		{ 0.0, 0, "0.000 us" }, { 480.2244, 0, "480.224 us" },
		{ 999.9994, 0, "999.999 us" },
		/* below 1e3 before rounding: DeepSpeed's 1000.000 us */
		{ 999.9996, 0, "1000.000 us" }, { 1000.0, 0, "1.000 ms" },
		{ 3094.1234, 0, "3.094 ms" }, { 1e7, 0, "10000.000 ms" },
		{ 480.2244, 1, "480.224" }, { 3094.1234, 1, "3094.123" },
		{ 1e7, 1, "10000000.000" },
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		char buf[32];
		sd_ds_format_duration(rows[i].us, rows[i].raw, buf, sizeof(buf));
		ok(strcmp(buf, rows[i].want) == 0, "duration %g us%s = '%s'",
		   rows[i].us, rows[i].raw ? " (raw)" : "", rows[i].want);
		if (strcmp(buf, rows[i].want) != 0)
			printf("#   got '%s'\n", buf);
	}
}

int main(void)
{
	test_sizes();
	test_durations();
	return done_testing();
}
