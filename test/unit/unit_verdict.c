/*
 * unit_verdict.c - judging subjects against expectations and blaming
 * nodes, links, paths, rails and groups (lib/verdict.c): every expectation
 * kind with its threshold, measured value and reason, the median of the
 * other subjects, the floor on the median absolute deviation, the return
 * value, and the blame rules test by test.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schedule.h"
#include "verdict.h"
#include "tap.h"


#define MB (1024 * 1024)
#define MAXS 16

static struct sd_judgement J[MAXS * SD_EXPECT_KINDS];
#define JD(i, k) (&J[(size_t)(i) * SD_EXPECT_KINDS + (k)])

/* A subject that measured bw GB/s at 1 MiB, its data checked and right. */
static struct sd_subject_result sub(double bw)
{
	struct sd_subject_result r;
	memset(&r, 0, sizeof(r));
	r.have = 1;
	r.size_bytes = MB;
	r.busbw_gbs = bw;
	r.time_us = 10;
	r.checked = 1;
	return r;
}

static int has(const char *s, const char *part)
{
	int yes = s && strstr(s, part) != NULL;
	if (!yes)
		printf("#   \"%s\" lacks \"%s\"\n", s ? s : "(null)", part);
	return yes;
}

static int all_none(int i, int except)
{
	for (int k = SD_EXPECT_BUSBW; k < SD_EXPECT_KINDS; k++)
		if (k != except && JD(i, k)->status != SD_JUDGED_NONE)
			return 0;
	return 1;
}

/* ---- judging ---- */

static void test_median(void)
{
	double v3[] = { 3, 1, 2 };
	is_dbl(sd_median(v3, 3), 2, 0, "median of 3 values: the middle one");
	ok(v3[0] == 1 && v3[1] == 2 && v3[2] == 3, "sorted in place");
	double v4[] = { 4, 1, 3, 2 };
	is_dbl(sd_median(v4, 4), 2.5, 0, "median of 4: the mean of the middle two");
	double v1[] = { 7 };
	is_dbl(sd_median(v1, 1), 7, 0, "median of 1: itself");
	double v2[] = { 10, 8 };
	is_dbl(sd_median(v2, 2), 9, 0, "median of 2: their mean");
	is_dbl(sd_median(NULL, 0), 0, 0, "median of none: 0");
}

static void test_names(void)
{
	ok(strcmp(sd_subject_kind_name(SD_SUBJECT_NODE_PAIR), "node-pair") == 0 &&
	   strcmp(sd_expect_kind_name(SD_EXPECT_BASELINE), "baseline") == 0 &&
	   strcmp(sd_judged_status_name(SD_JUDGED_SKIPPED), "skipped") == 0 &&
	   strcmp(sd_suspect_kind_name(SD_SUSPECT_PATH), "path") == 0 &&
	   strcmp(sd_judged_status_name(SD_JUDGED_NONE), "none") == 0,
	   "kind and status names");
	ok(sd_subject_kind_of("world") == SD_SUBJECT_JOB &&
	   sd_subject_kind_of("split:8") == SD_SUBJECT_GROUP &&
	   sd_subject_kind_of("node") == SD_SUBJECT_NODE &&
	   sd_subject_kind_of("gpu-pairs") == SD_SUBJECT_GPU_PAIR &&
	   sd_subject_kind_of("node-pairs") == SD_SUBJECT_NODE_PAIR &&
	   sd_subject_kind_of("node-pairs-ring") == SD_SUBJECT_NODE_PAIR &&
	   sd_subject_kind_of("rail") == SD_SUBJECT_RAIL,
	   "scopes to subject kinds");
}

static void test_data(void)
{
	struct sd_expectation e = { 0 };
	struct sd_subject_result r[4] = { sub(10), sub(10), sub(10), sub(10) };
	r[0].wrong = 3;
	r[2].checked = 0;
	r[3].have = 0; /* data is judged without a measurement too */
	r[3].wrong = 2;
	int rc = sd_judge(&e, "nodes", r, 4, J);
	is_int(rc, 0, "wrong data alone: not a performance failure (0)");
	is_int(JD(0, SD_EXPECT_DATA)->status, SD_JUDGED_FAILED, "wrong: data failed");
	is_int(JD(0, SD_EXPECT_DATA)->kind, SD_EXPECT_DATA, "its kind is data");
	is_dbl(JD(0, SD_EXPECT_DATA)->measured, 3, 0, "measured: 3 wrong elements");
	is_dbl(JD(0, SD_EXPECT_DATA)->threshold, 0, 0, "threshold: 0 wrong");
	ok(strcmp(JD(0, SD_EXPECT_DATA)->unit, "elements") == 0, "unit elements");
	ok(has(JD(0, SD_EXPECT_DATA)->reason, "3 wrong elements"),
	   "the reason says how many");
	is_int(JD(1, SD_EXPECT_DATA)->status, SD_JUDGED_PASSED, "checked, right: passed");
	is_dbl(JD(1, SD_EXPECT_DATA)->measured, 0, 0, "measured 0 wrong");
	ok(has(JD(1, SD_EXPECT_DATA)->reason, "every element right"), "its reason");
	is_int(JD(2, SD_EXPECT_DATA)->status, SD_JUDGED_SKIPPED, "not checked: skipped");
	ok(isnan(JD(2, SD_EXPECT_DATA)->measured), "nothing measured");
	ok(has(JD(2, SD_EXPECT_DATA)->reason, "not checked"), "its reason");
	is_int(JD(3, SD_EXPECT_DATA)->status, SD_JUDGED_FAILED,
	       "wrong data without a measurement: still failed");
	ok(all_none(0, -1) && all_none(1, -1) && all_none(2, -1) &&
	   all_none(3, -1), "no expectations: every other status none");
	ok(isnan(JD(1, SD_EXPECT_BUSBW)->measured) &&
	   isnan(JD(1, SD_EXPECT_MAD)->threshold),
	   "none: measured and threshold NAN");

	/* wrong data with a passing performance expectation: still 0 */
	e.busbw_gbs = 5;
	rc = sd_judge(&e, "nodes", r, 3, J);
	is_int(rc, 0, "wrong data, busbw met: 0");
	is_int(JD(0, SD_EXPECT_DATA)->status, SD_JUDGED_FAILED, "data failed");
	is_int(JD(0, SD_EXPECT_BUSBW)->status, SD_JUDGED_PASSED, "busbw passed");

	is_int(sd_judge(&e, "nodes", r, 0, J), 0, "no subjects: 0");
}

static void test_busbw(void)
{
	struct sd_expectation e = { .busbw_gbs = 10 };
	struct sd_subject_result r[3] = { sub(12), sub(10), sub(9.5) };
	int rc = sd_judge(&e, "nodes", r, 3, J);
	is_int(rc, 1, "busbw below the floor: 1");
	is_int(JD(0, SD_EXPECT_BUSBW)->status, SD_JUDGED_PASSED, "12 >= 10 passed");
	is_int(JD(1, SD_EXPECT_BUSBW)->status, SD_JUDGED_PASSED, "10 >= 10 passed (at the floor)");
	is_int(JD(2, SD_EXPECT_BUSBW)->status, SD_JUDGED_FAILED, "9.5 < 10 failed");
	is_int(JD(2, SD_EXPECT_BUSBW)->kind, SD_EXPECT_BUSBW, "kind busbw");
	is_dbl(JD(2, SD_EXPECT_BUSBW)->measured, 9.5, 0, "measured 9.5");
	is_dbl(JD(2, SD_EXPECT_BUSBW)->threshold, 10, 0, "threshold 10");
	ok(strcmp(JD(2, SD_EXPECT_BUSBW)->unit, "GB/s") == 0, "unit GB/s");
	ok(has(JD(2, SD_EXPECT_BUSBW)->reason, "busbw 9.5 GB/s at 1M is below the floor 10 GB/s"),
	   "reason with the numbers and size");
	ok(has(JD(0, SD_EXPECT_BUSBW)->reason, "busbw 12 GB/s at 1M meets the floor 10 GB/s"),
	   "passing reason");
	ok(all_none(0, SD_EXPECT_BUSBW) && all_none(2, SD_EXPECT_BUSBW),
	   "busbw only: time, peers, mad, baseline none");
	is_int(JD(2, SD_EXPECT_DATA)->status, SD_JUDGED_PASSED, "data always judged");

	struct sd_subject_result p[2] = { sub(12), sub(10) };
	is_int(sd_judge(&e, "nodes", p, 2, J), 0, "all at or above the floor: 0");
}

static void test_time(void)
{
	struct sd_expectation e = { .time_us = 100 };
	struct sd_subject_result r[3] = { sub(1), sub(1), sub(1) };
	r[0].time_us = 50;
	r[1].time_us = 100;
	r[2].time_us = 150;
	int rc = sd_judge(&e, "nodes", r, 3, J);
	is_int(rc, 1, "time above the ceiling: 1");
	is_int(JD(0, SD_EXPECT_TIME)->status, SD_JUDGED_PASSED, "50 <= 100 passed");
	is_int(JD(1, SD_EXPECT_TIME)->status, SD_JUDGED_PASSED, "100 <= 100 passed (at the ceiling)");
	is_int(JD(2, SD_EXPECT_TIME)->status, SD_JUDGED_FAILED, "150 > 100 failed");
	is_int(JD(2, SD_EXPECT_TIME)->kind, SD_EXPECT_TIME, "kind time");
	is_dbl(JD(2, SD_EXPECT_TIME)->measured, 150, 0, "measured 150");
	is_dbl(JD(2, SD_EXPECT_TIME)->threshold, 100, 0, "threshold 100");
	ok(strcmp(JD(2, SD_EXPECT_TIME)->unit, "us") == 0, "unit us");
	ok(has(JD(2, SD_EXPECT_TIME)->reason, "time 150 us at 1M is above the ceiling 100 us"),
	   "reason with the numbers");
	ok(all_none(2, SD_EXPECT_TIME), "time only: the others none");
	r[2].time_us = 99;
	is_int(sd_judge(&e, "nodes", r, 3, J), 0, "all within: 0");
}

static void test_peers(void)
{
	struct sd_expectation e = { .peers = 0.9 };
	/* the median of all is 11 (floor 9.9, 10 would pass); of the others
	 * of 10 it is 12 (floor 10.8: 10 fails) */
	struct sd_subject_result r[4] = { sub(10), sub(12), sub(8), sub(20) };
	int rc = sd_judge(&e, "node pairs", r, 4, J);
	is_int(rc, 1, "peers failed: 1");
	is_int(JD(0, SD_EXPECT_PEERS)->status, SD_JUDGED_FAILED,
	       "10 < 0.9 x 12 (the median of the others, not of all) failed");
	is_dbl(JD(0, SD_EXPECT_PEERS)->threshold, 10.8, 1e-9, "threshold 0.9 x 12");
	is_dbl(JD(0, SD_EXPECT_PEERS)->measured, 10, 0, "measured 10");
	ok(strcmp(JD(0, SD_EXPECT_PEERS)->unit, "GB/s") == 0, "unit GB/s");
	ok(has(JD(0, SD_EXPECT_PEERS)->reason,
	       "busbw 10 GB/s at 1M is 0.83 x the median 12 GB/s of the other "
	       "node pairs (3; at least 0.9)"), "reason with the numbers");
	is_int(JD(1, SD_EXPECT_PEERS)->status, SD_JUDGED_PASSED, "12 >= 0.9 x 10 passed");
	is_dbl(JD(1, SD_EXPECT_PEERS)->threshold, 9, 1e-9, "threshold 0.9 x median(10,8,20)");
	is_int(JD(2, SD_EXPECT_PEERS)->status, SD_JUDGED_FAILED, "8 < 0.9 x 12 failed");
	is_dbl(JD(2, SD_EXPECT_PEERS)->threshold, 10.8, 1e-9, "threshold 0.9 x median(10,12,20)");
	is_int(JD(3, SD_EXPECT_PEERS)->status, SD_JUDGED_PASSED, "20 passed");
	is_dbl(JD(3, SD_EXPECT_PEERS)->threshold, 9, 1e-9, "threshold 0.9 x median(10,12,8)");
	ok(all_none(0, SD_EXPECT_PEERS), "peers only: the others none");

	/* an even count of others: the mean of the middle two */
	struct sd_subject_result q[5] = { sub(10), sub(12), sub(8), sub(20), sub(6) };
	sd_judge(&e, "node pairs", q, 5, J);
	is_dbl(JD(0, SD_EXPECT_PEERS)->threshold, 0.9 * 10, 1e-9,
	       "others 6,8,12,20: median 10");
	is_dbl(JD(3, SD_EXPECT_PEERS)->threshold, 0.9 * 9, 1e-9,
	       "others 6,8,10,12: median 9");
	is_int(JD(4, SD_EXPECT_PEERS)->status, SD_JUDGED_FAILED, "6 < 0.9 x 11 failed");

	/* equal values: only one of them is left out */
	struct sd_subject_result d[3] = { sub(10), sub(10), sub(4) };
	sd_judge(&e, "nodes", d, 3, J);
	is_dbl(JD(0, SD_EXPECT_PEERS)->threshold, 0.9 * 7, 1e-9,
	       "others of a 10 in 10,10,4: 10 and 4, median 7");
	is_dbl(JD(2, SD_EXPECT_PEERS)->threshold, 9, 1e-9, "others of 4: 10,10");

	/* a subject without a measurement does not count */
	struct sd_subject_result h[3] = { sub(10), sub(8), sub(1000) };
	h[2].have = 0;
	e.peers = 0.85;
	rc = sd_judge(&e, "node pairs", h, 3, J);
	is_int(JD(2, SD_EXPECT_PEERS)->status, SD_JUDGED_SKIPPED, "have 0: peers skipped");
	ok(has(JD(2, SD_EXPECT_PEERS)->reason, "no measurement"), "its reason");
	ok(isnan(JD(2, SD_EXPECT_PEERS)->measured) &&
	   isnan(JD(2, SD_EXPECT_PEERS)->threshold), "nothing measured, no threshold");
	is_int(JD(2, SD_EXPECT_BUSBW)->status, SD_JUDGED_NONE, "not expected: none");
	/* two subjects: each with the other, not with their mean (9: 7.65) */
	is_int(JD(1, SD_EXPECT_PEERS)->status, SD_JUDGED_FAILED,
	       "two subjects: 8 < 0.85 x 10 failed");
	is_dbl(JD(1, SD_EXPECT_PEERS)->threshold, 8.5, 1e-9, "threshold 0.85 x the other");
	ok(has(JD(1, SD_EXPECT_PEERS)->reason, "median 10 GB/s of the other node pairs (1; at least 0.85)"),
	   "reason: one other");
	is_int(JD(0, SD_EXPECT_PEERS)->status, SD_JUDGED_PASSED, "10 >= 0.85 x 8 passed");
	is_dbl(JD(0, SD_EXPECT_PEERS)->threshold, 6.8, 1e-9, "threshold 0.85 x 8");
	is_int(rc, 1, "returns 1");

	/* one of its kind */
	struct sd_subject_result one[2] = { sub(10), sub(3) };
	one[1].have = 0;
	rc = sd_judge(&e, "nodes", one, 2, J);
	is_int(rc, 0, "one measured subject: nothing failed");
	is_int(JD(0, SD_EXPECT_PEERS)->status, SD_JUDGED_SKIPPED, "alone: peers skipped");
	ok(isnan(JD(0, SD_EXPECT_PEERS)->threshold), "no threshold");
	is_dbl(JD(0, SD_EXPECT_PEERS)->measured, 10, 0, "but measured 10");
	ok(has(JD(0, SD_EXPECT_PEERS)->reason, "no peers"), "its reason");
	is_int(JD(1, SD_EXPECT_PEERS)->status, SD_JUDGED_SKIPPED, "no measurement: skipped");
}

static void test_mad(void)
{
	struct sd_expectation e = { .mad = 3 };
	/* median 10, deviations 0,0,1,1,5: MAD 1, floor 10 - 3 = 7 */
	struct sd_subject_result r[5] = { sub(10), sub(10), sub(11), sub(9), sub(5) };
	int rc = sd_judge(&e, "node pairs", r, 5, J);
	is_int(rc, 1, "mad failed: 1");
	is_int(JD(4, SD_EXPECT_MAD)->status, SD_JUDGED_FAILED, "5 < 10 - 3 x 1 failed");
	is_int(JD(4, SD_EXPECT_MAD)->kind, SD_EXPECT_MAD, "kind mad");
	is_dbl(JD(4, SD_EXPECT_MAD)->threshold, 7, 1e-9, "threshold 7");
	is_dbl(JD(4, SD_EXPECT_MAD)->measured, 5, 0, "measured 5");
	ok(strcmp(JD(4, SD_EXPECT_MAD)->unit, "GB/s") == 0, "unit GB/s");
	ok(has(JD(4, SD_EXPECT_MAD)->reason,
	       "busbw 5 GB/s at 1M is 5.0 median absolute deviations below the "
	       "median 10 GB/s of 5 node pairs (at most 3 below)"), "reason with the numbers");
	int others = 1;
	for (int i = 0; i < 4; i++)
		others &= JD(i, SD_EXPECT_MAD)->status == SD_JUDGED_PASSED &&
			  fabs(JD(i, SD_EXPECT_MAD)->threshold - 7) < 1e-9;
	ok(others, "9, 10, 10, 11 passed, threshold 7");
	ok(all_none(4, SD_EXPECT_MAD), "mad only: the others none");
	r[4].busbw_gbs = 7.5; /* deviations 0,0,1,1,2.5: MAD 1, floor 7 */
	is_int(sd_judge(&e, "node pairs", r, 5, J), 0, "7.5 >= 7: 0");

	/* the MAD at least 1% of the median: 100,100,100,98.5,97.5 have MAD
	 * 0, taken as 1: floor 100 - 2 x 1 = 98 */
	e.mad = 2;
	struct sd_subject_result f[5] = { sub(100), sub(100), sub(100), sub(98.5),
					   sub(97.5) };
	rc = sd_judge(&e, "nodes", f, 5, J);
	is_dbl(JD(0, SD_EXPECT_MAD)->threshold, 98, 1e-9,
	       "MAD 0 taken as 1%% of the median: threshold 98");
	is_int(JD(3, SD_EXPECT_MAD)->status, SD_JUDGED_PASSED, "98.5 passed (not 100 - 0)");
	is_int(JD(4, SD_EXPECT_MAD)->status, SD_JUDGED_FAILED, "97.5 failed");
	ok(has(JD(4, SD_EXPECT_MAD)->reason, "2.5 median absolute deviations"),
	   "deviations counted in the floored MAD");
	is_int(rc, 1, "returns 1");

	/* identical and nearly identical subjects never fail */
	e.mad = 3;
	struct sd_subject_result same[4] = { sub(50), sub(50), sub(50), sub(50) };
	rc = sd_judge(&e, "nodes", same, 4, J);
	int passed = 1;
	for (int i = 0; i < 4; i++)
		passed &= JD(i, SD_EXPECT_MAD)->status == SD_JUDGED_PASSED;
	ok(passed && rc == 0, "identical subjects pass mad");
	is_dbl(JD(0, SD_EXPECT_MAD)->threshold, 48.5, 1e-9, "threshold 50 - 3 x 0.5");
	same[3].busbw_gbs = 49.9;
	rc = sd_judge(&e, "nodes", same, 4, J);
	is_int(JD(3, SD_EXPECT_MAD)->status, SD_JUDGED_PASSED,
	       "49.9 among 50s passed (noise, not a MAD of 0)");
	is_int(rc, 0, "returns 0");

	/* fewer than 3 measured: skipped */
	struct sd_subject_result two[3] = { sub(10), sub(1), sub(10) };
	two[2].have = 0;
	rc = sd_judge(&e, "nodes", two, 3, J);
	is_int(rc, 0, "two measured subjects: mad not judged, 0");
	is_int(JD(1, SD_EXPECT_MAD)->status, SD_JUDGED_SKIPPED, "2 of its kind: skipped");
	ok(isnan(JD(1, SD_EXPECT_MAD)->threshold), "no threshold");
	is_dbl(JD(1, SD_EXPECT_MAD)->measured, 1, 0, "measured 1");
	ok(has(JD(1, SD_EXPECT_MAD)->reason, "fewer than 3"), "its reason");
	is_int(JD(2, SD_EXPECT_MAD)->status, SD_JUDGED_SKIPPED, "no measurement: skipped");
	ok(has(JD(2, SD_EXPECT_MAD)->reason, "no measurement"), "its reason");
	two[2].have = 1;
	two[2].busbw_gbs = 10;
	rc = sd_judge(&e, "nodes", two, 3, J);
	is_int(JD(1, SD_EXPECT_MAD)->status, SD_JUDGED_FAILED,
	       "3 measured: judged, 1 < 10 - 3 x 0.1 failed");
	is_dbl(JD(1, SD_EXPECT_MAD)->threshold, 9.7, 1e-9, "threshold 9.7");
	is_int(rc, 1, "returns 1");
}

static void test_baseline(void)
{
	struct sd_expectation e = { .baseline = 0.9 };
	struct sd_subject_result r[4] = { sub(9), sub(8.5), sub(1), sub(1) };
	r[0].have_base = r[1].have_base = 1;
	r[0].base_busbw_gbs = r[1].base_busbw_gbs = 10;
	r[2].base_missing = 1;
	int rc = sd_judge(&e, "nodes", r, 4, J);
	is_int(rc, 1, "below the baseline: 1");
	is_int(JD(0, SD_EXPECT_BASELINE)->status, SD_JUDGED_PASSED, "9 >= 0.9 x 10 passed");
	is_dbl(JD(0, SD_EXPECT_BASELINE)->threshold, 9, 1e-9, "threshold 9");
	is_int(JD(1, SD_EXPECT_BASELINE)->status, SD_JUDGED_FAILED, "8.5 < 9 failed");
	is_int(JD(1, SD_EXPECT_BASELINE)->kind, SD_EXPECT_BASELINE, "kind baseline");
	is_dbl(JD(1, SD_EXPECT_BASELINE)->measured, 8.5, 0, "measured 8.5");
	is_dbl(JD(1, SD_EXPECT_BASELINE)->threshold, 9, 1e-9, "threshold 9");
	ok(strcmp(JD(1, SD_EXPECT_BASELINE)->unit, "GB/s") == 0, "unit GB/s");
	ok(has(JD(1, SD_EXPECT_BASELINE)->reason,
	       "busbw 8.5 GB/s at 1M is 0.85 x the baseline's 10 GB/s (at least 0.9)"),
	   "reason with the numbers");
	is_int(JD(2, SD_EXPECT_BASELINE)->status, SD_JUDGED_SKIPPED,
	       "baseline lacks the test: skipped");
	ok(has(JD(2, SD_EXPECT_BASELINE)->reason, "no value for this test"), "its reason");
	ok(isnan(JD(2, SD_EXPECT_BASELINE)->threshold), "no threshold");
	is_int(JD(3, SD_EXPECT_BASELINE)->status, SD_JUDGED_SKIPPED, "no baseline: skipped");
	ok(has(JD(3, SD_EXPECT_BASELINE)->reason, "no baseline given"), "its reason");
	ok(all_none(1, SD_EXPECT_BASELINE), "baseline only: the others none");
	is_int(sd_judge(&e, "nodes", r + 2, 2, J), 0, "only skipped baselines: 0");
}

static void test_all_kinds(void)
{
	/* every expectation at once; one subject without a measurement */
	struct sd_expectation e = { .busbw_gbs = 5, .time_us = 100, .peers = 0.5,
				    .mad = 10, .baseline = 0.5 };
	struct sd_subject_result r[4] = { sub(10), sub(10), sub(10), sub(0) };
	for (int i = 0; i < 4; i++) {
		r[i].have_base = 1;
		r[i].base_busbw_gbs = 10;
	}
	r[3].have = 0;
	int rc = sd_judge(&e, "nodes", r, 4, J);
	is_int(rc, 0, "all met, one without a measurement: 0");
	int good = 1;
	for (int i = 0; i < 3; i++)
		for (int k = 0; k < SD_EXPECT_KINDS; k++)
			good &= k == SD_EXPECT_LINK || k == SD_EXPECT_PATH
					? JD(i, k)->status == SD_JUDGED_NONE
					: JD(i, k)->status == SD_JUDGED_PASSED &&
						  JD(i, k)->kind ==
							  (enum sd_expect_kind)k;
	ok(good, "every kind passed, each with its kind (link: not GPU "
		 "pairs; path: no transport asked)");
	int skipped = JD(3, SD_EXPECT_DATA)->status == SD_JUDGED_PASSED;
	for (int k = SD_EXPECT_BUSBW; k <= SD_EXPECT_BASELINE; k++)
		skipped &= JD(3, k)->status == SD_JUDGED_SKIPPED &&
			   JD(3, k)->kind == (enum sd_expect_kind)k &&
			   strstr(JD(3, k)->reason, "no measurement") != NULL;
	ok(skipped, "no measurement: every performance kind skipped, data judged");
	ok(strcmp(JD(3, SD_EXPECT_TIME)->unit, "us") == 0,
	   "a skipped time keeps the unit us");

	/* each kind alone makes the return 1 */
	struct sd_subject_result f[3] = { sub(10), sub(10), sub(10) };
	f[2].time_us = 101;
	ok(sd_judge(&e, "nodes", f, 3, J) == 1 &&
	   JD(2, SD_EXPECT_TIME)->status == SD_JUDGED_FAILED &&
	   JD(2, SD_EXPECT_BUSBW)->status == SD_JUDGED_PASSED,
	   "time alone failed: 1");
	f[2].time_us = 10;
	f[2].base_busbw_gbs = 30;
	f[2].have_base = 1;
	ok(sd_judge(&e, "nodes", f, 3, J) == 1 &&
	   JD(2, SD_EXPECT_BASELINE)->status == SD_JUDGED_FAILED &&
	   JD(2, SD_EXPECT_PEERS)->status == SD_JUDGED_PASSED,
	   "baseline alone failed: 1");
}

/* ---- blame ---- */

static const char *const names[] = { "node00", "node01", "node02", "node03",
				      "node04" };

static void pair(struct sd_blame *b, int x, int y, int failed)
{
	char s[64], why[64];
	int h[2] = { x, y };
	snprintf(s, sizeof(s), "%s,%s", names[x], names[y]);
	snprintf(why, sizeof(why), "pair %d-%d slow", x, y);
	if (sd_blame_add(b, SD_SUBJECT_NODE_PAIR, s, s, h, 2, failed,
			 failed ? why : NULL))
		printf("# sd_blame_add failed\n");
}

static int count(const struct sd_blame *b, enum sd_suspect_kind k)
{
	int n, c = 0;
	const struct sd_suspect *s = sd_blame_suspects(b, &n);
	for (int i = 0; i < n; i++)
		c += s[i].kind == k;
	return c;
}

static const struct sd_suspect *find(const struct sd_blame *b,
				     enum sd_suspect_kind k, const char *subject)
{
	int n;
	const struct sd_suspect *s = sd_blame_suspects(b, &n);
	for (int i = 0; i < n; i++)
		if (s[i].kind == k && strcmp(s[i].subject, subject) == 0)
			return &s[i];
	return NULL;
}

static int total(const struct sd_blame *b)
{
	int n;
	sd_blame_suspects(b, &n);
	return n;
}

static void test_blame_node_link(void)
{
	struct sd_blame *b = sd_blame_new(4, names);
	unsigned char bad[5];
	int h1 = 1, h3 = 3;
	sd_blame_add(b, SD_SUBJECT_NODE, "node00", "node00", (int[]){ 0 }, 1, 0, NULL);
	sd_blame_add(b, SD_SUBJECT_NODE, "node01", "node01", &h1, 1, 1,
		     "busbw 1 GB/s is below the floor 10 GB/s");
	is_int(sd_blame_end_test(b, "test 1 (all_reduce)"), 0, "end of test 1");
	is_int(total(b), 1, "one suspect");
	const struct sd_suspect *s = find(b, SD_SUSPECT_NODE, "node01");
	ok(s != NULL, "the failed node test names its node");
	if (s) {
		is_int(s->host, 1, "host 1");
		is_int(s->host_b, -1, "no other end");
		ok(strcmp(s->hosts, "node01") == 0, "hosts node01");
		ok(strcmp(s->detail, "test 1 (all_reduce): busbw 1 GB/s is "
			  "below the floor 10 GB/s") == 0, "detail: test and why");
		/* a bad node's reason leads with its count and worst figure */
		ok(strcmp(s->reason, "1 failed subject; worst: test 1 "
			  "(all_reduce): node node01: busbw 1 GB/s is below the "
			  "floor 10 GB/s; test 1 (all_reduce): busbw 1 GB/s is "
			  "below the floor 10 GB/s") == 0,
		   "reason: 1 failed subject, the worst, then the detail: %s",
		   s->reason);
	}
	sd_blame_add(b, SD_SUBJECT_GPU_PAIR, "node03 local 0,1", "node03", &h3, 1,
		     1, "busbw 2 GB/s low");
	sd_blame_add(b, SD_SUBJECT_GPU_PAIR, "node03 local 2,3", "node03", &h3, 1,
		     0, NULL);
	sd_blame_end_test(b, "test 2 (sendrecv)");
	s = find(b, SD_SUSPECT_LINK, "node03 local 0,1");
	ok(s != NULL, "the failed GPU pair names a link");
	if (s) {
		is_int(s->host, 3, "its host 3");
		ok(strcmp(s->hosts, "node03") == 0, "hosts node03");
		ok(has(s->reason, "test 2 (sendrecv): GPU pair node03 local 0,1: "
			   "busbw 2 GB/s low"), "reason names the pair");
	}
	is_int(count(b, SD_SUSPECT_LINK), 1, "the passing GPU pair is no suspect");
	is_int(sd_blame_bad_hosts(b, bad), 2, "bad hosts: 2");
	ok(!bad[0] && bad[1] && !bad[2] && bad[3], "hosts 1 (node) and 3 (link)");

	/* a link's node explains a rail over it */
	sd_blame_add(b, SD_SUBJECT_RAIL, "rail 0", "node[00-03]",
		     (int[]){ 0, 1, 2, 3 }, 4, 1, "rail slow");
	sd_blame_end_test(b, "test 3");
	is_int(count(b, SD_SUSPECT_RAIL), 0,
	       "a rail with a bad node (from earlier tests) is no suspect");
	/* the same node failing again: one suspect, both tests named */
	sd_blame_add(b, SD_SUBJECT_NODE, "node01", "node01", &h1, 1, 1, "3 wrong elements");
	sd_blame_end_test(b, "test 4 (broadcast)");
	is_int(count(b, SD_SUSPECT_NODE), 1, "node01 still one suspect");
	s = find(b, SD_SUSPECT_NODE, "node01");
	ok(s && has(s->reason, "test 1 (all_reduce): busbw 1 GB/s") &&
	   has(s->reason, "; test 4 (broadcast): 3 wrong elements"),
	   "reasons accumulate across tests");
	is_int(sd_blame_bad_hosts(b, bad), 2, "bad hosts still 2");
	sd_blame_free(b);
}

static void test_blame_pairs(void)
{
	unsigned char bad[5];
	/* 4 hosts, every pair: all through host 2 fail */
	struct sd_blame *b = sd_blame_new(4, names);
	for (int x = 0; x < 4; x++)
		for (int y = x + 1; y < 4; y++)
			pair(b, x, y, x == 2 || y == 2);
	sd_blame_end_test(b, "test 1");
	const struct sd_suspect *s = find(b, SD_SUSPECT_NODE, "node02");
	ok(s != NULL, "every pair through host 2 failed: node02 a suspect");
	if (s) {
		is_int(s->host, 2, "host 2");
		ok(has(s->reason, "test 1: every node pair it was in failed (3 of 3)") &&
		   has(s->reason, "e.g. pair 0-2 slow"), "reason with the counts");
	}
	is_int(count(b, SD_SUSPECT_PATH), 0, "no path blamed");
	is_int(total(b), 1, "only node02");
	is_int(sd_blame_bad_hosts(b, bad), 1, "one bad host");
	ok(bad[2], "host 2");
	sd_blame_free(b);

	/* the same with figures: the bad node's reason counts its failed
	 * subjects over the tests and leads with the farthest from its
	 * reference (pair 1-2 at 0.1 of it, not 0-2 at 0.5 or 2-3 at 0.3) */
	b = sd_blame_new(4, names);
	for (int x = 0; x < 4; x++)
		for (int y = x + 1; y < 4; y++) {
			pair(b, x, y, x == 2 || y == 2);
			if (x == 2 || y == 2) {
				char fig[64];
				double q = x == 1 ? 0.1 : x == 0 ? 0.5 : 0.3;
				snprintf(fig, sizeof(fig), "at %.1f x the median", q);
				is_int(sd_blame_figure(b, q, fig), 0,
				       "the figure of pair %d-%d", x, y);
			}
		}
	sd_blame_end_test(b, "test 1");
	s = find(b, SD_SUSPECT_NODE, "node02");
	ok(s && strncmp(s->reason, "3 failed subjects; worst: test 1: "
			"node-pair node01,node02: at 0.1 x the median; test 1: "
			"every node pair", 80) == 0,
	   "a bad node's reason: how many failed, the worst first: %s",
	   s ? s->reason : "(none)");
	sd_blame_free(b);
	ok(isnan(sd_judgement_ratio(&(struct sd_judgement){
		   .status = SD_JUDGED_PASSED, .measured = 1, .threshold = 2 })),
	   "a passed judgement has no ratio");
	is_dbl(sd_judgement_ratio(&(struct sd_judgement){
		       .kind = SD_EXPECT_BUSBW, .status = SD_JUDGED_FAILED,
		       .measured = 1, .threshold = 4 }), 0.25, 1e-12,
	       "a floor: measured / threshold");
	is_dbl(sd_judgement_ratio(&(struct sd_judgement){
		       .kind = SD_EXPECT_TIME, .status = SD_JUDGED_FAILED,
		       .measured = 400, .threshold = 100 }), 0.25, 1e-12,
	       "a ceiling: threshold / measured");

	/* one pair failing alone, both ends pass elsewhere: a path */
	b = sd_blame_new(4, names);
	for (int x = 0; x < 4; x++)
		for (int y = x + 1; y < 4; y++)
			pair(b, x, y, x == 0 && y == 2);
	sd_blame_end_test(b, "test 1");
	s = find(b, SD_SUSPECT_PATH, "node00,node02");
	ok(s != NULL, "pair 0-2 alone failed: a path");
	if (s) {
		is_int(s->host, 0, "one end 0");
		is_int(s->host_b, 2, "the other 2");
		ok(strcmp(s->hosts, "node00,node02") == 0, "its hosts");
		ok(has(s->reason, "pair 0-2 slow; both nodes pass with others"),
		   "reason: the path between them");
	}
	is_int(total(b), 1, "nothing else");
	is_int(sd_blame_bad_hosts(b, bad), 0, "no bad node");
	sd_blame_free(b);

	/* two hosts, their only pair failed */
	b = sd_blame_new(2, names);
	pair(b, 0, 1, 1);
	sd_blame_end_test(b, "test 1");
	s = find(b, SD_SUSPECT_PATH, "node00,node01");
	ok(s && has(s->reason, "cannot be placed"), "two nodes: a path that cannot be placed");
	is_int(count(b, SD_SUSPECT_NODE), 0, "no node");
	is_int(sd_blame_bad_hosts(b, bad), 0, "no bad node");
	sd_blame_free(b);

	/* host 0 failed both its pairs, but partner 1 never passed */
	b = sd_blame_new(4, names);
	pair(b, 0, 1, 1);
	pair(b, 0, 2, 1);
	pair(b, 1, 3, 1);
	pair(b, 2, 3, 0);
	sd_blame_end_test(b, "test 1");
	is_int(count(b, SD_SUSPECT_NODE), 0,
	       "a partner that never passed: nobody blamed by the every-pair rule");
	is_int(count(b, SD_SUSPECT_PATH), 3, "three paths instead");
	s = find(b, SD_SUSPECT_PATH, "node00,node02");
	ok(s && !strstr(s->reason, "both nodes pass with others"),
	   "path 0-2: node00 passed nowhere, the reason does not say it did");
	sd_blame_free(b);

	/* 3 hosts, all pairs fail (the fabric, not a node) */
	b = sd_blame_new(3, names);
	pair(b, 0, 1, 1);
	pair(b, 0, 2, 1);
	pair(b, 1, 2, 1);
	sd_blame_end_test(b, "test 1");
	is_int(count(b, SD_SUSPECT_NODE), 0, "all pairs failed: no node blamed");
	is_int(count(b, SD_SUSPECT_PATH), 3, "three paths");
	s = find(b, SD_SUSPECT_PATH, "node01,node02");
	ok(s && !strstr(s->reason, "both nodes pass with others"),
	   "all pairs failed: no path claims both ends pass with others");
	sd_blame_free(b);

	/* 3 hosts, host 2 bad: pairs with it fail, 0-1 passes */
	b = sd_blame_new(3, names);
	pair(b, 0, 1, 0);
	pair(b, 0, 2, 1);
	pair(b, 1, 2, 1);
	sd_blame_end_test(b, "test 1");
	ok(find(b, SD_SUSPECT_NODE, "node02") && total(b) == 1,
	   "3 hosts: host 2 failing both its pairs is the one suspect");
	sd_blame_free(b);

	/* host 2 in one pair only, failed; its partner passed elsewhere: one
	 * failure is not "every pair" (at least two) */
	b = sd_blame_new(3, names);
	pair(b, 0, 1, 0);
	pair(b, 1, 2, 1);
	sd_blame_end_test(b, "test 1");
	is_int(count(b, SD_SUSPECT_NODE), 0, "a single failed pair blames no node");
	ok(find(b, SD_SUSPECT_PATH, "node01,node02") && total(b) == 1,
	   "but a path");
	sd_blame_free(b);
}

static void test_blame_odd(void)
{
	/* 5 hosts in round-robin rounds, host 4 bad */
	struct sd_blame *b = sd_blame_new(5, names);
	unsigned char bad[5];
	int npairs = 0;
	for (int r = 0; r < sd_rr_rounds(5); r++)
		for (int sl = 0; sl < sd_rr_slots(5); sl++) {
			int x, y;
			if (!sd_rr_pair(5, r, sl, &x, &y))
				continue;
			pair(b, x, y, x == 4 || y == 4);
			npairs++;
		}
	is_int(npairs, 10, "5 hosts: 10 pairs");
	sd_blame_end_test(b, "test 1");
	const struct sd_suspect *s = find(b, SD_SUSPECT_NODE, "node04");
	ok(s && s->host == 4 && has(s->reason, "(4 of 4)"), "host 4 named, 4 of 4");
	is_int(total(b), 1, "nothing else");
	is_int(sd_blame_bad_hosts(b, bad), 1, "one bad host");
	ok(bad[4], "host 4");
	sd_blame_free(b);

	/* 5 hosts in a ring, host 4 bad: its two pairs fail */
	b = sd_blame_new(5, names);
	for (int x = 0; x < 5; x++) {
		int y = (x + 1) % 5;
		pair(b, x < y ? x : y, x < y ? y : x, x == 4 || y == 4);
	}
	sd_blame_end_test(b, "test 1");
	ok(find(b, SD_SUSPECT_NODE, "node04") && total(b) == 1,
	   "ring of 5: host 4 named, alone");
	sd_blame_free(b);
}

static void test_blame_rail_group(void)
{
	struct sd_blame *b = sd_blame_new(4, names);
	int all[4] = { 0, 1, 2, 3 };
	/* a rail and a node failing in one test: the node explains it */
	sd_blame_add(b, SD_SUBJECT_RAIL, "rail 1", "node[00-03]", all, 4, 1, "rail slow");
	sd_blame_add(b, SD_SUBJECT_NODE, "node02", "node02", (int[]){ 2 }, 1, 1, "node slow");
	sd_blame_end_test(b, "test 1");
	is_int(count(b, SD_SUSPECT_RAIL), 0, "rail with a bad node among its hosts: no suspect");
	is_int(total(b), 1, "just the node");
	sd_blame_free(b);

	b = sd_blame_new(4, names);
	sd_blame_add(b, SD_SUBJECT_RAIL, "rail 1", "node[00-03]", all, 4, 1, "rail slow");
	sd_blame_add(b, SD_SUBJECT_NODE, "node02", "node02", (int[]){ 2 }, 1, 0, NULL);
	sd_blame_end_test(b, "test 1");
	const struct sd_suspect *s = find(b, SD_SUSPECT_RAIL, "rail 1");
	ok(s != NULL, "rail without a bad node: a rail suspect");
	if (s) {
		is_int(s->host, -1, "no host to repair");
		is_int(s->host_b, -1, "no other end");
		ok(strcmp(s->hosts, "node[00-03]") == 0, "its hostlist");
		ok(strcmp(s->reason, "test 1: rail slow") == 0, "its reason");
	}
	/* a job failing: a group; a split block too */
	sd_blame_add(b, SD_SUBJECT_JOB, "job", "node[00-03]", all, 4, 1, "job slow");
	sd_blame_add(b, SD_SUBJECT_GROUP, "block 1", "node[02-03]", all + 2, 2, 1,
		     "block slow");
	sd_blame_add(b, SD_SUBJECT_GROUP, "block 0", "node[00-01]", all, 2, 0, NULL);
	sd_blame_end_test(b, "test 2");
	ok(find(b, SD_SUSPECT_GROUP, "job") != NULL, "failed job: a group suspect");
	s = find(b, SD_SUSPECT_GROUP, "block 1");
	ok(s && s->host == -1 && strcmp(s->hosts, "node[02-03]") == 0,
	   "failed split block of two hosts: a group suspect");
	is_int(count(b, SD_SUSPECT_GROUP), 2, "the passing block is none");
	/* the same rail again: one suspect, two tests */
	sd_blame_add(b, SD_SUBJECT_RAIL, "rail 1", "node[00-03]", all, 4, 1, "rail slower");
	sd_blame_end_test(b, "test 3");
	is_int(count(b, SD_SUSPECT_RAIL), 1, "one rail suspect");
	s = find(b, SD_SUSPECT_RAIL, "rail 1");
	ok(s && strcmp(s->reason, "test 1: rail slow; test 3: rail slower") == 0,
	   "its reason names both tests");
	unsigned char bad[4];
	is_int(sd_blame_bad_hosts(b, bad), 0, "rails and groups are no bad hosts");
	ok(!bad[0] && !bad[1] && !bad[2] && !bad[3], "bad all 0");
	sd_blame_free(b);
}

static void test_blame_reset(void)
{
	unsigned char bad[3];
	/* pair 0-1 failing in test 1 and passing in test 2 */
	struct sd_blame *b = sd_blame_new(3, names);
	pair(b, 0, 1, 1);
	pair(b, 0, 2, 0);
	pair(b, 1, 2, 0);
	sd_blame_end_test(b, "test 1");
	pair(b, 0, 1, 0);
	pair(b, 0, 2, 1);
	pair(b, 1, 2, 0);
	sd_blame_end_test(b, "test 2");
	is_int(count(b, SD_SUSPECT_NODE), 0, "no node from two single failures");
	ok(find(b, SD_SUSPECT_PATH, "node00,node01") &&
	   find(b, SD_SUSPECT_PATH, "node00,node02") && total(b) == 2,
	   "two paths, one per test");
	const struct sd_suspect *p = find(b, SD_SUSPECT_PATH, "node00,node01");
	ok(p && has(p->reason, "test 1: pair 0-1 slow; both nodes pass with others"),
	   "3 hosts, both ends passed elsewhere: the path between them");
	sd_blame_free(b);

	/* host 0 failed both its pairs in test 1 (nobody passed), then is not
	 * measured in test 2: its old counts are gone */
	b = sd_blame_new(3, names);
	pair(b, 0, 1, 1);
	pair(b, 0, 2, 1);
	pair(b, 1, 2, 1);
	sd_blame_end_test(b, "test 1");
	int before = total(b);
	pair(b, 1, 2, 0);
	sd_blame_end_test(b, "test 2");
	is_int(count(b, SD_SUSPECT_NODE), 0,
	       "counts of test 1 do not make host 0 fail every pair in test 2");
	is_int(total(b), before, "test 2 adds nothing");
	sd_blame_free(b);

	/* passes of test 1 do not clear partners in test 2 */
	b = sd_blame_new(3, names);
	pair(b, 0, 1, 0);
	pair(b, 0, 2, 0);
	pair(b, 1, 2, 0);
	sd_blame_end_test(b, "test 1");
	is_int(total(b), 0, "all passed: no suspects");
	pair(b, 0, 1, 1);
	pair(b, 0, 2, 1);
	pair(b, 1, 2, 1);
	sd_blame_end_test(b, "test 2");
	is_int(count(b, SD_SUSPECT_NODE), 0,
	       "all failed in test 2: test 1's passes clear nobody's partners");
	is_int(sd_blame_bad_hosts(b, bad), 0, "no bad host");
	sd_blame_free(b);

	/* two hosts: a pass in test 1, a failure in test 2 is still "alone" */
	b = sd_blame_new(2, names);
	pair(b, 0, 1, 0);
	sd_blame_end_test(b, "test 1");
	pair(b, 0, 1, 1);
	sd_blame_end_test(b, "test 2");
	const struct sd_suspect *s = find(b, SD_SUSPECT_PATH, "node00,node01");
	ok(s && has(s->reason, "test 2: pair 0-1 slow; with two nodes the fault "
		    "cannot be placed"), "test 2 counts its own pairs only");
	sd_blame_free(b);
}

/* GPU pairs of two link classes: each judged with its own class's peers,
 * and a fast link at a slow class's speed is a finding. */
static void test_link_classes(void)
{
	struct sd_expectation e = { .peers = 0.8 };
	struct sd_subject_result r[7];
	double bw[7] = { 300, 310, 305, 295, 25, 24, 20 };
	const char *cls[7] = { "nvswitch", "nvswitch", "nvswitch", "nvswitch",
			       "pcie-switch", "pcie-switch", "nvswitch" };
	is_int(sd_link_tier("nvlink"), 0, "nvlink is tier 0");
	is_int(sd_link_tier("nvswitch"), 0, "nvswitch is tier 0");
	is_int(sd_link_tier("pcie-switch"), 1, "pcie-switch is tier 1");
	is_int(sd_link_tier("cross-socket"), 3, "cross-socket is tier 3");
	is_int(sd_link_tier("p2p"), -1, "p2p (path unknown) has no tier");
	is_int(sd_link_tier(NULL), -1, "no class, no tier");
	for (int i = 0; i < 7; i++) {
		r[i] = sub(bw[i]);
		r[i].link_class = cls[i];
		r[i].link_tier = sd_link_tier(cls[i]);
	}
	/* without the slow nvswitch pair: every pair passes its own class */
	int rc = sd_judge(&e, "GPU pairs", r, 6, J);
	is_int(rc, 0, "PCIe pairs are not failed by the NVSwitch pairs' speed");
	ok(JD(4, SD_EXPECT_PEERS)->status == SD_JUDGED_PASSED &&
	   fabs(JD(4, SD_EXPECT_PEERS)->threshold - 0.8 * 24) < 1e-9,
	   "a PCIe pair's peers are the other PCIe pair (floor 0.8 x 24)");
	ok(JD(0, SD_EXPECT_LINK)->status == SD_JUDGED_PASSED &&
	   fabs(JD(0, SD_EXPECT_LINK)->threshold - 24.5) < 1e-9,
	   "an NVSwitch pair is judged faster than the PCIe median (24.5)");
	is_int(JD(4, SD_EXPECT_LINK)->status, SD_JUDGED_NONE,
	       "the slowest class has nothing slower to be compared with");
	/* an NVSwitch pair measured at PCIe speed */
	rc = sd_judge(&e, "GPU pairs", r, 7, J);
	is_int(rc, 1, "an NVSwitch pair at PCIe speed fails");
	is_int(JD(6, SD_EXPECT_LINK)->status, SD_JUDGED_FAILED,
	       "as a link finding");
	ok(has(JD(6, SD_EXPECT_LINK)->reason, "a nvswitch pair at 20 GB/s at 1M "
	       "is no faster than the median 24.5 GB/s of 2 pcie-switch pairs"),
	   "its reason names both classes and the numbers");
	is_int(JD(6, SD_EXPECT_PEERS)->status, SD_JUDGED_FAILED,
	       "and below its NVSwitch peers");
	is_int(JD(4, SD_EXPECT_PEERS)->status, SD_JUDGED_PASSED,
	       "the PCIe pairs still pass");
	/* classes that measure alike here fail nobody (PHB vs NODE) */
	struct sd_subject_result q[5];
	double qb[5] = { 20.1, 19.9, 20.0, 20.0, 20.05 };
	const char *qc[5] = { "host-bridge", "host-bridge", "host-bridge",
			      "numa-node", "numa-node" };
	for (int i = 0; i < 5; i++) {
		q[i] = sub(qb[i]);
		q[i].link_class = qc[i];
		q[i].link_tier = sd_link_tier(qc[i]);
	}
	rc = sd_judge(&e, "GPU pairs", q, 5, J);
	ok(rc == 0 && JD(1, SD_EXPECT_LINK)->status == SD_JUDGED_NONE,
	   "link classes that measure alike are not judged against each other");
	/* no expectation that compares: no link finding */
	struct sd_expectation floor = { .busbw_gbs = 1 };
	sd_judge(&floor, "GPU pairs", r, 7, J);
	is_int(JD(6, SD_EXPECT_LINK)->status, SD_JUDGED_NONE,
	       "a floor alone judges no link classes");
}

/* A slow rank against the median of the other ranks: the one bound
 * every view of a training run reads. */
static void test_above_median(void)
{
	double t[5] = { 1.0, 1.1, 0.9, 1.6, 1.0 }, r[5];
	unsigned char a[5];
	double med = -1;
	is_int(sd_above_median(t, 5, 1.25, r, &med, a), 1,
	       "one of five above 1.25x the others' median");
	is_dbl(med, 1.0, 1e-12, "the median of all five: 1.0");
	ok(a[3] == 1 && a[0] + a[1] + a[2] + a[4] == 0,
	   "the one above is rank 3 (1.6 over the others' 1.0)");
	is_dbl(r[3], 1.6, 1e-12, "its ratio: 1.6");
	is_dbl(r[1], 1.1, 1e-12, "rank 1's: 1.1 over the others' 1.0");
	ok(t[0] == 1.0 && t[3] == 1.6 && t[2] == 0.9,
	   "the values are left in their order");
	double even[4] = { 1.0, 2.0, 3.0, 10.0 };
	is_int(sd_above_median(even, 4, 1.25, r, &med, a), 2,
	       "an even count: 10 over the others' 2, and 3 over 2 (1.5)");
	is_dbl(med, 2.5, 1e-12, "the median of all: 2.5");
	ok(a[3] == 1 && a[2] == 1 && a[0] + a[1] == 0, "10 and 3 above");
	is_dbl(r[0], 1.0 / 3.0, 1e-12, "1 over the others' 3");
	double two[2] = { 1.0, 1.5 };
	is_int(sd_above_median(two, 2, 1.25, r, &med, a), 1,
	       "two ranks, one 1.5x slower: above (against a median that "
	       "held itself it read 1.2)");
	is_dbl(r[1], 1.5, 1e-12, "its ratio is over its peer: 1.5");
	double one[1] = { 5.0 };
	is_int(sd_above_median(one, 1, 1.25, r, &med, a), 0,
	       "one rank has no peers: none above, median 0");
	is_dbl(med, 0.0, 0.0, "median 0 for one rank");
	double equal[3] = { 2.0, 2.0, 2.5 };
	is_int(sd_above_median(equal, 3, 1.25, NULL, &med, a), 0,
	       "2.5 is exactly 1.25x the others' 2.0: not above");
}

/* sd_subject_outcome: one word per subject from its judgements and
 * attempts */
static void test_outcome(void)
{
	struct sd_judgement j[SD_EXPECT_KINDS];
	memset(j, 0, sizeof(j));
	ok(strcmp(sd_subject_outcome(j, 1), "not judged") == 0,
	   "nothing judged");
	j[SD_EXPECT_PEERS].status = SD_JUDGED_SKIPPED;
	ok(strcmp(sd_subject_outcome(j, 1), "skipped") == 0,
	   "only a skipped one");
	j[SD_EXPECT_DATA].status = SD_JUDGED_PASSED;
	ok(strcmp(sd_subject_outcome(j, 1), "passed") == 0,
	   "data passed, peers skipped: passed");
	ok(strcmp(sd_subject_outcome(j, 3), "passed on retry") == 0,
	   "passed at the third attempt");
	j[SD_EXPECT_PEERS].status = SD_JUDGED_FAILED;
	ok(strcmp(sd_subject_outcome(j, 3), "failed") == 0,
	   "a failed one fails it");
	ok(strcmp(sd_subject_outcome(j, 1), "failed") == 0,
	   "at the first attempt too");
}

/* The path a test asked for (path_proof.h): judged from what the runner
 * read, whatever the plan expects; not a performance failure. */
static void test_path(void)
{
	struct sd_expectation none = { 0 };
	struct sd_subject_result r[4] = { sub(10), sub(10), sub(10), sub(10) };
	r[0].path_judged = 1;
	r[0].path_asked = r[0].path_took = 8;
	snprintf(r[0].path_reason, sizeof(r[0].path_reason),
		 "NCCL used NET/IB for 8 of 8 connections");
	r[1].path_judged = 1;
	r[1].path_asked = 8;
	r[1].path_took = 5;
	snprintf(r[1].path_reason, sizeof(r[1].path_reason),
		 "asked for ib, NCCL used NET/Socket for 3 of 8 connections");
	r[2].path_judged = 2;
	snprintf(r[2].path_reason, sizeof(r[2].path_reason),
		 "one rank: no connection to prove");
	r[3].path_judged = 1; /* read, but no connection seen */
	snprintf(r[3].path_reason, sizeof(r[3].path_reason), "none seen");
	is_int(sd_judge(&none, "node pairs", r, 4, J), 0,
	       "a wrong path is no performance failure (no retry): 0");
	is_int(JD(0, SD_EXPECT_PATH)->status, SD_JUDGED_PASSED,
	       "8 of 8 on the path: passed");
	is_int(JD(0, SD_EXPECT_PATH)->kind, SD_EXPECT_PATH, "its kind is path");
	ok(JD(0, SD_EXPECT_PATH)->measured == 8 &&
		   JD(0, SD_EXPECT_PATH)->threshold == 8,
	   "measured 8 connections of 8");
	ok(!strcmp(JD(0, SD_EXPECT_PATH)->unit, "connections"), "unit connections");
	is_int(JD(1, SD_EXPECT_PATH)->status, SD_JUDGED_FAILED,
	       "5 of 8: failed");
	ok(!strcmp(JD(1, SD_EXPECT_PATH)->reason,
		   "asked for ib, NCCL used NET/Socket for 3 of 8 connections"),
	   "its reason is the runner's");
	is_int(JD(2, SD_EXPECT_PATH)->status, SD_JUDGED_SKIPPED,
	       "nothing to prove: skipped");
	ok(isnan(JD(2, SD_EXPECT_PATH)->measured), "skipped: no figure");
	is_int(JD(3, SD_EXPECT_PATH)->status, SD_JUDGED_FAILED,
	       "0 of 0 where connections were due: failed");
	ok(!strcmp(sd_subject_outcome(JD(1, 0), 1), "failed"),
	       "the subject with the wrong path: failed");
	ok(!strcmp(sd_subject_outcome(JD(2, 0), 1), "passed"),
	       "nothing to prove, data right: passed");
	ok(!strcmp(sd_expect_kind_name(SD_EXPECT_PATH), "path"), "named path");
}

int main(void)
{
	test_outcome();
	test_above_median();
	test_median();
	test_names();
	test_data();
	test_busbw();
	test_time();
	test_peers();
	test_mad();
	test_baseline();
	test_all_kinds();
	test_path();
	test_blame_node_link();
	test_blame_pairs();
	test_blame_odd();
	test_blame_rail_group();
	test_blame_reset();
	test_link_classes();
	return done_testing();
}
