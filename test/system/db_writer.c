/*
 * db_writer.c - record made-up runs through the database sink, exactly as
 * rank 0 of `shakedown run` would, for the database tests and the bench.
 *
 *   db_writer [options] DB
 *     -r RUNS     runs to record (1)
 *     -t TESTS    tests per run (2: all_reduce float32 sum, then all_gather)
 *     -s SIZES    sizes per test, from 1K doubling (4); each size is
 *                 measured out of place and in place
 *     -b BUSBW    bus bandwidth in GB/s of the first size (10); each
 *                 later size adds 1
 *     -H HOST     host of every rank ("nodeA"); -n NRANKS (2)
 *     -w          make the last test's last measurement wrong (status
 *                 failed)
 *     -S STATUS   run status at the end (passed, or failed with -w)
 *     -T SECS     start time of the first run, seconds since the epoch
 *                 (now); each next run starts a day later
 *     -u PREFIX   UUIDs are PREFIX followed by the run number, zero-padded
 *                 to 36 characters (random UUIDs otherwise)
 *     -W FILE     after opening the database, create FILE.open and wait
 *                 (up to 60 s) for FILE before the run begins, so that
 *                 another process can take the write lock in between
 *     -q          print nothing
 * Prints each run's UUID.  Exits 0, or 3 with the sink's message when the
 * database cannot be opened, or 1 when a callback failed; a record left
 * incomplete is said on stderr ("db_writer: the record in ...").
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db/db.h"
#include "names.h"
#include "util.h"

int main(int argc, char **argv)
{
	long runs = 1, tests = 2, sizes = 4, nranks = 2;
	double busbw = 10.0, t0 = sd_wall_now();
	const char *host = "nodeA", *status = NULL, *prefix = NULL;
	const char *waitf = NULL;
	int wrong = 0, quiet = 0, c;
	while ((c = getopt(argc, argv, "r:t:s:b:H:n:wS:T:u:W:q")) != -1) {
		switch (c) {
		case 'r': runs = strtol(optarg, NULL, 10); break;
		case 't': tests = strtol(optarg, NULL, 10); break;
		case 's': sizes = strtol(optarg, NULL, 10); break;
		case 'b': busbw = strtod(optarg, NULL); break;
		case 'H': host = optarg; break;
		case 'n': nranks = strtol(optarg, NULL, 10); break;
		case 'w': wrong = 1; break;
		case 'S': status = optarg; break;
		case 'T': t0 = strtod(optarg, NULL); break;
		case 'u': prefix = optarg; break;
		case 'W': waitf = optarg; break;
		case 'q': quiet = 1; break;
		default: return 2;
		}
	}
	if (optind != argc - 1 || nranks < 1 || nranks > 64) {
		fprintf(stderr, "usage: db_writer [-r RUNS] [-t TESTS] "
				"[-s SIZES] [-b BUSBW] [-H HOST] [-n NRANKS] "
				"[-w] [-S STATUS] [-T SECS] [-u PREFIX] [-q] "
				"DB\n");
		return 2;
	}
	const char *path = argv[optind];
	int failed = 0;
	for (long r = 0; r < runs; r++) {
		struct sd_sink sink;
		char err[512];
		int rc = sd_db_sink_open(path, "db_writer", &sink, err,
					 sizeof(err));
		if (rc != SD_OK) {
			fprintf(stderr, "db_writer: %s\n", err);
			return 3;
		}
		if (!sink.ops)
			return 0;
		if (waitf) {
			char opened[4200];
			snprintf(opened, sizeof(opened), "%s.open", waitf);
			FILE *f = fopen(opened, "w");
			if (f)
				fclose(f);
			for (int i = 0; i < 6000 && access(waitf, F_OK) != 0;
			     i++)
				usleep(10000);
		}
		struct sd_job_info job = { 0 };
		snprintf(job.launcher, sizeof(job.launcher), "local");
		snprintf(job.nodelist, sizeof(job.nodelist), "%s", host);
		job.nnodes = 1;
		job.tasks_per_node = (int)nranks;
		struct sd_rank_info rk[64];
		memset(rk, 0, sizeof(rk));
		for (int i = 0; i < nranks; i++) {
			rk[i].rank = i;
			rk[i].local_rank = i;
			rk[i].pid = 1000 + i;
			snprintf(rk[i].host, sizeof(rk[i].host), "%s", host);
			snprintf(rk[i].dev.name, sizeof(rk[i].dev.name),
				 "CPU (test)");
			snprintf(rk[i].dev.transport,
				 sizeof(rk[i].dev.transport), "tcp 127.0.0.1");
			rk[i].dev.mem_total_bytes = 1ull << 30;
		}
		char envjson[128];
		snprintf(envjson, sizeof(envjson),
			 "{\"kernel\":\"6.1.0\",\"SHAKEDOWN_TEST\":\"1\"}");
		struct sd_host_env he = { .json = envjson };
		snprintf(he.host, sizeof(he.host), "%s", host);
		struct sd_run_info run = {
			.started_at = t0 + 86400.0 * (double)r,
			.command_line = NULL,
			.plan_text = "ops: [all_reduce, all_gather]\n",
			.plan_hash = "00ff",
			.tool_version = PACKAGE_VERSION,
			.backend = "gloo",
			.backend_version = "test",
			.user = "tester",
			.nranks = (int)nranks,
			.job = &job,
			.ranks = rk,
			.nhosts = 1,
			.hosts = &he,
		};
		if (prefix)
			snprintf(run.uuid, sizeof(run.uuid), "%s%0*ld", prefix,
				 (int)(36 - strlen(prefix)), r);
		else
			sd_uuid4(run.uuid);
		if (sink.ops->run_begin(sink.self, &run) != SD_OK)
			failed = 1;
		int any_wrong = 0;
		for (int t = 0; t < tests; t++) {
			struct sd_test_info ti = {
				.index = t,
				.name = t % 2 ? "all_gather" : "all_reduce",
				.op = t % 2 ? SD_OP_ALL_GATHER
					    : SD_OP_ALL_REDUCE,
				.dtype = SD_FLOAT32,
				.redop = SD_SUM,
				.has_redop = !(t % 2),
				.root = -1,
				.scope = "world",
				.algo = "auto",
				.nranks = (int)nranks,
			};
			if (sink.ops->test_begin(sink.self, &ti) != SD_OK)
				failed = 1;
			int twrong = 0;
			for (int s = 0; s < sizes; s++)
				for (int ip = 0; ip < 2; ip++) {
					struct sd_measurement m = { 0 };
					m.size_bytes = (size_t)1024 << s;
					m.count = m.size_bytes / 4;
					m.in_place = ip;
					m.iters = 20;
					m.warmup_iters = 5;
					m.busbw_gbs = busbw + s;
					m.algbw_gbs = m.busbw_gbs / 2;
					m.time_us = m.size_bytes /
						    (m.algbw_gbs * 1e3);
					m.time_us_min = m.time_us * 0.9;
					m.time_us_avg = m.time_us;
					m.time_us_max = m.time_us * 1.1;
					m.checked = 1;
					m.first_wrong_rank = -1;
					m.algo = "ring";
					if (wrong && t == tests - 1 &&
					    s == sizes - 1 && ip == 1) {
						m.wrong = 3;
						m.first_wrong_rank = 1;
						m.first_wrong.index = 7;
						snprintf(m.first_wrong.expected,
							 sizeof(m.first_wrong
								.expected),
							 "1.5 (0x3fc00000)");
						snprintf(m.first_wrong.got,
							 sizeof(m.first_wrong
								.got),
							 "1.5000001 "
							 "(0x3fc00001)");
						twrong = any_wrong = 1;
					}
					if (sink.ops->measurement(sink.self,
								  &ti, &m))
						failed = 1;
				}
			if (sink.ops->test_end(sink.self, &ti,
					       twrong ? "failed" : "passed",
					       NULL) != SD_OK)
				failed = 1;
		}
		struct sd_run_end end = {
			.status = status ? status
					 : any_wrong ? "failed" : "passed",
			.exit_status = any_wrong ? 1 : 0,
			.message = any_wrong ? "wrong data in 1 test" : NULL,
			.finished_at = run.started_at + 12.5,
		};
		if (sink.ops->run_end(sink.self, &end) != SD_OK)
			failed = 1;
		if (!quiet)
			printf("%s\n", run.uuid);
		char lack[2048];
		if (sd_db_sink_incomplete(&sink, lack, sizeof(lack))) {
			fprintf(stderr, "db_writer: %s\n", lack);
			failed = 1;
		}
		sink.ops->destroy(sink.self);
	}
	return failed ? 1 : 0;
}
