/*
 * unit_recorder.c - the one recorder (lib/db/sink_db.c) on real SQLite
 * files: a run whose first write meets a held lock is kept, not lost, and
 * lands whole with a later write; a training run goes through the sink
 * interface like a collective run; atomic mode writes nothing before the
 * end and then everything.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "db/db.h"
#include "sink.h"
#include "train/metrics.h"
#include "util.h"
#include "tap.h"

static char tmpdir[512];

static long long count(const char *path, const char *sql)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	long long n = -1;
	if (sqlite3_open(path, &db) == SQLITE_OK &&
	    sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		n = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(db);
	return n;
}

static int emit(struct sd_sink *k, const struct sd_event *ev)
{
	struct sd_sinks set = { .n = 1 };
	set.v[0] = *k;
	return sd_sinks_emit(&set, ev);
}

static void run_info(struct sd_run_info *r, const char *uuid)
{
	memset(r, 0, sizeof(*r));
	snprintf(r->uuid, sizeof(r->uuid), "%s", uuid);
	r->started_at = sd_wall_now();
	r->command_line = "shakedown run --local 2";
	r->tool_version = "test";
	r->backend = "gloo";
	r->user = "tester";
	r->nranks = 2;
}

/* A collective run whose beginning, and first test, meet a held lock:
 * both are kept, and the next write puts them in with what follows. */
static void test_kept_begin(void)
{
	char path[600], err[512], msg[4600];
	snprintf(path, sizeof(path), "%s/kept.db", tmpdir);
	struct sd_sink k;
	int rc = sd_db_sink_open(path, NULL, &k, err, sizeof(err));
	ok(rc == SD_OK && k.ops, "the recorder opens %s", path);
	if (rc != SD_OK)
		return;
	sqlite3 *locker = NULL;
	sqlite3_open(path, &locker);
	sqlite3_exec(locker, "BEGIN IMMEDIATE", NULL, NULL, NULL);
	setenv("SHAKEDOWN_DB_BUSY_TIMEOUT_MS", "50", 1);

	struct sd_run_info run;
	run_info(&run, "11111111-2222-4333-8444-555555555555");
	struct sd_event ev = { .kind = SD_EVENT_RUN_BEGIN, .run = &run };
	rc = emit(&k, &ev);
	ok(rc == SD_ERR_IO && strstr(sd_db_sink_error(&k),
				     "the run could not be written now") &&
	   strstr(sd_db_sink_error(&k), "kept"),
	   "a held lock at the start: said, and kept: %s",
	   sd_db_sink_error(&k));

	struct sd_test_info t = { .index = 0, .name = "all_reduce",
				  .op = SD_OP_ALL_REDUCE, .dtype = SD_FLOAT32,
				  .root = -1, .scope = "world", .nranks = 2 };
	struct sd_measurement m = { .size_bytes = 1024, .count = 256,
				    .iters = 5, .time_us = 10,
				    .first_wrong_rank = -1 };
	ev = (struct sd_event){ .kind = SD_EVENT_TEST_BEGIN, .test = &t };
	emit(&k, &ev);
	ev = (struct sd_event){ .kind = SD_EVENT_MEASUREMENT, .test = &t,
				.m = &m };
	emit(&k, &ev);
	m.size_bytes = 2048;
	emit(&k, &ev);
	ev = (struct sd_event){ .kind = SD_EVENT_TEST_END, .test = &t,
				.status = "passed" };
	rc = emit(&k, &ev);
	ok(rc == SD_ERR_IO && sd_db_sink_incomplete(&k, msg, sizeof(msg)) &&
	   strstr(msg, "the run itself, 1 test, its end could not be "
		       "written yet (database is locked); kept, to be "
		       "written again"),
	   "the test waits behind the run: %s", msg);

	sqlite3_exec(locker, "ROLLBACK", NULL, NULL, NULL);
	sqlite3_close(locker);
	struct sd_verdict_info v = { .test_index = 0, .subject_kind = "job",
				     .subject = "job", .hosts = "h1",
				     .expectation = "data", .measured = 0,
				     .threshold = 0, .status = "passed",
				     .reason = "", .attempts = 1 };
	ev = (struct sd_event){ .kind = SD_EVENT_VERDICTS, .verdicts = &v,
				.n = 1 };
	rc = emit(&k, &ev);
	is_int(rc, SD_OK, "the lock gone, the next write succeeds");
	is_int(count(path, "SELECT count(*) FROM runs WHERE status = "
		     "'running'"), 1, "the run is in, running");
	is_int(count(path, "SELECT count(*) FROM measurements"), 2,
	       "with its test's 2 measurements");
	is_int(count(path, "SELECT count(*) FROM verdicts v JOIN tests t ON "
		     "t.id = v.test_id"), 1,
	       "and the verdict, which finds its test");
	struct sd_run_end e = { .status = "passed", .exit_status = 0 };
	ev = (struct sd_event){ .kind = SD_EVENT_RUN_END, .end = &e };
	rc = emit(&k, &ev);
	ok(rc == SD_OK && !sd_db_sink_incomplete(&k, msg, sizeof(msg)),
	   "the end is written and the record is whole");
	is_int(count(path, "SELECT count(*) FROM runs WHERE status = "
		     "'passed'"), 1, "the run passed");
	k.ops->destroy(k.self);
	unsetenv("SHAKEDOWN_DB_BUSY_TIMEOUT_MS");
}

static void steps(struct sd_train_step *s, size_t n, int rank)
{
	for (size_t i = 0; i < n; i++) {
		memset(&s[i], 0, sizeof(s[i]));
		s[i].step = (long)i + 1;
		s[i].rank = rank;
		s[i].has = SD_STEP_LOSS | SD_STEP_TIME | SD_STEP_TOKENS;
		s[i].loss = 10.0 / (double)(i + 1);
		s[i].step_s = 0.5;
		s[i].tokens = 4096;
	}
}

/* A training run through the sink interface: steps, outcome, end. */
static void test_train_events(int atomic)
{
	char path[600], err[512], msg[4600];
	snprintf(path, sizeof(path), "%s/train%d.db", tmpdir, atomic);
	struct sd_sink k;
	int rc = sd_db_sink_open(path, NULL, &k, err, sizeof(err));
	if (rc != SD_OK) {
		ok(0, "the recorder opens: %s", err);
		return;
	}
	if (atomic)
		sd_db_sink_set_atomic(&k);
	struct sd_train_facts f;
	memset(&f, 0, sizeof(f));
	f.devices.value = 2;
	f.devices.origin = SD_TRAIN_GIVEN;
	struct sd_train_begin tb = { .config = "tiny", .facts = &f };
	struct sd_run_info run;
	run_info(&run, atomic ? "aaaaaaaa-2222-4333-8444-555555555555"
			      : "bbbbbbbb-2222-4333-8444-555555555555");
	run.run_kind = atomic ? "ingest" : "train";
	run.train = &tb;
	struct sd_event ev = { .kind = SD_EVENT_RUN_BEGIN, .run = &run };
	rc = emit(&k, &ev);
	struct sd_train_step s[20];
	steps(s, 20, -1);
	ev = (struct sd_event){ .kind = SD_EVENT_TRAIN_STEPS, .steps = s,
				.n = 10 };
	rc |= emit(&k, &ev);
	is_int(count(path, "SELECT count(*) FROM train_steps"),
	       atomic ? 0 : 10, "%s: %s after 10 steps", atomic ? "atomic"
	       : "incremental", atomic ? "nothing is written"
				 : "they are in the database");
	ev = (struct sd_event){ .kind = SD_EVENT_TRAIN_STEPS, .steps = s + 4,
				.n = 1 };
	ok(emit(&k, &ev) == SD_ERR_INVALID &&
	   strstr(sd_db_sink_error(&k), "step 5 follows step 10"),
	   "a step out of order is refused: %s", sd_db_sink_error(&k));
	ev = (struct sd_event){ .kind = SD_EVENT_TRAIN_STEPS, .steps = s + 10,
				.n = 10 };
	rc |= emit(&k, &ev);
	struct sd_train_summary sum;
	sd_train_summarize(s, 20, &f, &sum, err, sizeof(err));
	struct sd_train_outcome o = { .summary = &sum, .lines_unparsed = -1 };
	ev = (struct sd_event){ .kind = SD_EVENT_TRAIN_END, .train = &o };
	rc |= emit(&k, &ev);
	struct sd_run_end e = { .status = "passed", .exit_status = 0 };
	ev = (struct sd_event){ .kind = SD_EVENT_RUN_END, .end = &e };
	rc |= emit(&k, &ev);
	ok(rc == SD_OK && !sd_db_sink_incomplete(&k, msg, sizeof(msg)),
	   "%s: every event is recorded", atomic ? "atomic" : "incremental");
	is_int(count(path, "SELECT count(*) FROM train_steps WHERE timed"), 19,
	       "20 steps, all but the first timed");
	is_int(count(path, "SELECT count(*) FROM train_metrics WHERE name = "
		     "'tgs'"), 1, "the metrics are in");
	is_int(count(path, "SELECT count(*) FROM runs r JOIN train_runs t ON "
		     "t.run_id = r.id WHERE r.status = 'passed'"), 1,
	       "with the run's end");
	k.ops->destroy(k.self);
}

int main(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "%s/unit_recorder_XXXXXX",
		 getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR")
						       : "/tmp");
	if (!mkdtemp(tmpdir)) {
		printf("Bail out! cannot make a temporary folder\n");
		return 1;
	}
	test_kept_begin();
	test_train_events(0);
	test_train_events(1);
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		printf("# could not remove %s\n", tmpdir);
	return done_testing();
}
