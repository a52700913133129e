/*
 * db_bench.c - what recording costs, and how fast history is.
 *
 *   db_bench [-r RUNS] [-t TESTS] [-s SIZES] [DIR]
 * Records RUNS (1000) made-up runs of TESTS (5) tests of SIZES (10) sizes,
 * in and out of place (100,000 measurements by default), through the
 * database sink into DIR/db_bench.db (DIR: $TMPDIR or /tmp), exactly as
 * rank 0 of `shakedown run` does, then times the query of
 * `shakedown history` over them.  Prints the figures; the goals are
 * recording under 1% of a run's wall time and history under 50 ms.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db/db.h"
#include "db/db_internal.h"
#include "util.h"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* Median wall time in ms of `reps` runs of the history query. */
static double time_history(sqlite3 *db, int reps, const char *op,
			   long long size, long *rows)
{
	double t[64];
	for (int i = 0; i < reps; i++) {
		sqlite3_stmt *st = NULL;
		double t0 = sd_now();
		sqlite3_prepare_v2(db, sd_db_history_sql, -1, &st, NULL);
		sqlite3_bind_text(st, 1, op, -1, SQLITE_STATIC);
		if (size)
			sqlite3_bind_int64(st, 2, size);
		long n = 0;
		while (sqlite3_step(st) == SQLITE_ROW)
			n++;
		sqlite3_finalize(st);
		t[i] = (sd_now() - t0) * 1e3;
		*rows = n;
	}
	qsort(t, (size_t)reps, sizeof(t[0]), cmp_double);
	return t[reps / 2];
}

int main(int argc, char **argv)
{
	long runs = 1000, tests = 5, sizes = 10;
	int c;
	while ((c = getopt(argc, argv, "r:t:s:")) != -1) {
		switch (c) {
		case 'r': runs = strtol(optarg, NULL, 10); break;
		case 't': tests = strtol(optarg, NULL, 10); break;
		case 's': sizes = strtol(optarg, NULL, 10); break;
		default:
			fprintf(stderr, "usage: db_bench [-r RUNS] [-t TESTS] "
					"[-s SIZES] [DIR]\n");
			return 2;
		}
	}
	const char *dir = optind < argc ? argv[optind] : getenv("TMPDIR");
	char path[4096], side[4200];
	snprintf(path, sizeof(path), "%s/db_bench.db", dir ? dir : "/tmp");
	unlink(path);
	snprintf(side, sizeof(side), "%s-wal", path);
	unlink(side);
	snprintf(side, sizeof(side), "%s-shm", path);
	unlink(side);

	double t_open = 0, t_begin = 0, t_meas = 0, t_end = 0, t_run_end = 0;
	struct sd_rank_info rk[8];
	memset(rk, 0, sizeof(rk));
	for (int i = 0; i < 8; i++) {
		rk[i].rank = i;
		snprintf(rk[i].host, sizeof(rk[i].host), "node%02d", i / 4);
		snprintf(rk[i].dev.name, sizeof(rk[i].dev.name), "CPU");
	}
	struct sd_job_info job = { .nnodes = 2, .tasks_per_node = 4 };
	snprintf(job.launcher, sizeof(job.launcher), "srun");
	snprintf(job.nodelist, sizeof(job.nodelist), "node[00-01]");
	struct sd_host_env env[2] = { { .json = "{\"kernel\":\"6.1\"}" },
				      { .json = "{\"kernel\":\"6.1\"}" } };
	snprintf(env[0].host, sizeof(env[0].host), "node00");
	snprintf(env[1].host, sizeof(env[1].host), "node01");
	double t_all = sd_now();
	for (long r = 0; r < runs; r++) {
		struct sd_sink s;
		char err[512];
		double t0 = sd_now();
		if (sd_db_sink_open(path, "db_bench", &s, err, sizeof(err))) {
			fprintf(stderr, "db_bench: %s\n", err);
			return 3;
		}
		t_open += sd_now() - t0;
		struct sd_run_info run = {
			.started_at = 1767225600.0 + 3600.0 * r,
			.plan_text = "bench", .plan_hash = "0",
			.tool_version = PACKAGE_VERSION, .backend = "gloo",
			.backend_version = "bench", .user = "bench",
			.nranks = 8, .job = &job, .ranks = rk, .nhosts = 2,
			.hosts = env,
		};
		sd_uuid4(run.uuid);
		t0 = sd_now();
		s.ops->run_begin(s.self, &run);
		t_begin += sd_now() - t0;
		for (int t = 0; t < tests; t++) {
			static const enum sd_op ops[] = {
				SD_OP_ALL_REDUCE, SD_OP_ALL_GATHER,
				SD_OP_REDUCE_SCATTER, SD_OP_ALL_TO_ALL,
				SD_OP_BROADCAST };
			struct sd_test_info ti = {
				.index = t, .name = "t", .op = ops[t % 5],
				.dtype = SD_FLOAT32, .has_redop = 1,
				.redop = SD_SUM, .root = -1, .scope = "world",
				.algo = "auto", .nranks = 8 };
			s.ops->test_begin(s.self, &ti);
			for (int z = 0; z < sizes; z++)
				for (int ip = 0; ip < 2; ip++) {
					struct sd_measurement m = {
						.size_bytes = (size_t)1024 << z,
						.count = ((size_t)1024 << z) / 4,
						.in_place = ip, .iters = 20,
						.warmup_iters = 5,
						.time_us = 10.0 + z,
						.time_us_min = 9.0 + z,
						.time_us_avg = 10.0 + z,
						.time_us_max = 11.0 + z,
						.algbw_gbs = 1.0 + z,
						.busbw_gbs = 1.75 * (1.0 + z) +
							     0.001 * (r % 50),
						.checked = 1,
						.first_wrong_rank = -1,
						.algo = "ring" };
					t0 = sd_now();
					s.ops->measurement(s.self, &ti, &m);
					t_meas += sd_now() - t0;
				}
			t0 = sd_now();
			if (s.ops->test_end(s.self, &ti, "passed", NULL)) {
				fprintf(stderr, "db_bench: test_end failed\n");
				return 1;
			}
			t_end += sd_now() - t0;
		}
		struct sd_run_end e = { .status = "passed",
					.finished_at = run.started_at + 60 };
		t0 = sd_now();
		s.ops->run_end(s.self, &e);
		s.ops->destroy(s.self);
		t_run_end += sd_now() - t0;
	}
	t_all = sd_now() - t_all;
	long nmeas = runs * tests * sizes * 2;
	printf("recorded %ld runs, %ld tests, %ld measurements in %.2f s "
	       "into %s\n", runs, runs * tests, nmeas, t_all, path);
	printf("  open (checks, recovery)  %8.3f ms per run\n",
	       t_open * 1e3 / runs);
	printf("  run_begin                %8.3f ms per run\n",
	       t_begin * 1e3 / runs);
	printf("  measurement (in memory)  %8.3f us per measurement\n",
	       t_meas * 1e6 / nmeas);
	printf("  test_end (commit)        %8.3f ms per test of %ld "
	       "measurements\n", t_end * 1e3 / (runs * tests), sizes * 2);
	printf("  run_end + close          %8.3f ms per run\n",
	       t_run_end * 1e3 / runs);
	double per_run = t_all / runs;
	printf("  all recording            %8.3f ms per run of %ld tests: "
	       "under 1%% of any run longer than %.2f s\n", per_run * 1e3,
	       tests, per_run * 100);

	sqlite3 *db;
	char err[512];
	if (sd_db_open(path, 0, &db, err, sizeof(err))) {
		fprintf(stderr, "db_bench: %s\n", err);
		return 3;
	}
	long rows;
	double ms = time_history(db, 21, "all_reduce", 256 * 1024, &rows);
	printf("history --op all_reduce --size 256K: %ld rows, %.2f ms "
	       "(median of 21)\n", rows, ms);
	ms = time_history(db, 21, "all_reduce", 0, &rows);
	printf("history --op all_reduce (every size): %ld rows, %.2f ms "
	       "(median of 21)\n", rows, ms);
	sd_db_close(db);
	return 0;
}
