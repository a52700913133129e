/*
 * unit_db.c - table-driven checks of the database module's pure parts
 * (TAP): time formatting, network file system names, path resolution,
 * finding runs by UUID prefix, and a test's round, pairing and seed
 * recorded through the sink and read back.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db/db.h"

static int n;
static int failed;

static void ok(int cond, const char *what)
{
	printf("%sok %d - %s\n", cond ? "" : "not ", ++n, what);
	if (!cond)
		failed = 1;
}

/* Remove a database and its WAL files. */
static void remove_db(const char *path)
{
	char side[96];
	unlink(path);
	snprintf(side, sizeof(side), "%s-wal", path);
	unlink(side);
	snprintf(side, sizeof(side), "%s-shm", path);
	unlink(side);
}

/* Record a run of four tests through the sink: round 3, pairing re-pair
 * and seed 0x1234; none of the three; round 1, disjoint and a seed of all
 * 64 bits; a pairing the schema does not take.  Then read back each
 * test's round, pairing and seed, as sqlite3 quotes them. */
static void round_pairing_seed(void)
{
	char path[] = "/tmp/unit_db_sink_XXXXXX";
	int fd = mkstemp(path);
	close(fd);
	unlink(path);
	struct sd_sink sink = { 0 };
	char err[512];
	ok(sd_db_sink_open(path, "unit_db", &sink, err, sizeof(err)) ==
		   SD_OK && sink.ops, "open a recording sink");
	if (!sink.ops) {
		printf("# %s\n", err);
		return;
	}
	struct sd_rank_info rk[2];
	memset(rk, 0, sizeof(rk));
	for (int i = 0; i < 2; i++) {
		rk[i].rank = i;
		snprintf(rk[i].host, sizeof(rk[i].host), "node%d", i + 1);
	}
	struct sd_run_info run = {
		.started_at = 1767225600.0, .plan_text = "", .plan_hash = "0",
		.tool_version = "test", .backend = "gloo",
		.backend_version = "test", .user = "tester", .nranks = 2,
		.ranks = rk,
	};
	snprintf(run.uuid, sizeof(run.uuid),
		 "cccc4444-0000-4000-8000-000000000004");
	struct sd_test_info tests[] = {
		{ .index = 0, .name = "all_reduce", .op = SD_OP_ALL_REDUCE,
		  .dtype = SD_FLOAT32, .redop = SD_SUM, .has_redop = 1,
		  .root = -1, .scope = "node-pairs:adaptive", .algo = "auto",
		  .nranks = 2, .members = "0-1", .plan_test = 1,
		  .attempt = 1, .round = 3, .pairing = "re-pair",
		  .has_seed = 1, .seed = 0x1234 },
		{ .index = 1, .name = "all_reduce", .op = SD_OP_ALL_REDUCE,
		  .dtype = SD_FLOAT32, .redop = SD_SUM, .has_redop = 1,
		  .root = -1, .scope = "world", .algo = "auto", .nranks = 2,
		  .plan_test = 2 },
		{ .index = 2, .name = "all_reduce", .op = SD_OP_ALL_REDUCE,
		  .dtype = SD_FLOAT32, .redop = SD_SUM, .has_redop = 1,
		  .root = -1, .scope = "node-pairs:adaptive", .algo = "auto",
		  .nranks = 2, .members = "0-1", .plan_test = 3,
		  .attempt = 1, .round = 1, .pairing = "disjoint",
		  .has_seed = 1, .seed = 0xfedcba9876543210ull },
		{ .index = 3, .name = "all_reduce", .op = SD_OP_ALL_REDUCE,
		  .dtype = SD_FLOAT32, .redop = SD_SUM, .has_redop = 1,
		  .root = -1, .scope = "world", .algo = "auto", .nranks = 2,
		  .plan_test = 4, .pairing = "nearest" },
	};
	int bad = sink.ops->run_begin(sink.self, &run) != SD_OK;
	for (size_t i = 0; i < sizeof(tests) / sizeof(tests[0]); i++)
		bad |= sink.ops->test_begin(sink.self, &tests[i]) != SD_OK ||
		       sink.ops->test_end(sink.self, &tests[i], "passed",
					  NULL) != SD_OK;
	struct sd_run_end end = { .status = "passed",
				  .finished_at = 1767225601.0 };
	bad |= sink.ops->run_end(sink.self, &end) != SD_OK;
	sink.ops->destroy(sink.self);
	ok(!bad, "a run of four tests recorded");

	static const char *const want[] = {
		"3|'re-pair'|'0x0000000000001234'",
		"NULL|NULL|NULL",
		"1|'disjoint'|'0xfedcba9876543210'",
		"NULL|NULL|NULL",
	};
	static const char *const what[] = {
		"round 3, re-pair, seed 0x1234 read back exactly",
		"a test of none of them stores NULLs",
		"a seed of all 64 bits reads back exactly",
		"a pairing the schema does not take is kept as NULL",
	};
	sqlite3 *db;
	sqlite3_stmt *st = NULL;
	if (sd_db_open(path, 0, &db, err, sizeof(err)) != SD_OK) {
		ok(0, "open the recorded database");
		printf("# %s\n", err);
		remove_db(path);
		return;
	}
	sqlite3_prepare_v2(db, "SELECT quote(round) || '|' || quote(pairing) "
			   "|| '|' || quote(seed) FROM tests "
			   "ORDER BY test_index", -1, &st, NULL);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		const char *got = "";
		if (st && sqlite3_step(st) == SQLITE_ROW)
			got = (const char *)sqlite3_column_text(st, 0);
		ok(got && strcmp(got, want[i]) == 0, what[i]);
		if (!got || strcmp(got, want[i]) != 0)
			printf("# got %s, wanted %s\n", got ? got : "(null)",
			       want[i]);
	}
	sqlite3_finalize(st);
	sd_db_close(db);
	remove_db(path);
}

int main(void)
{
	static const struct {
		double t;
		const char *iso;
	} times[] = {
		{ 0.0, "1970-01-01T00:00:00.000Z" },
		{ 1767225600.5, "2026-01-01T00:00:00.500Z" },
		{ 1767225600.999, "2026-01-01T00:00:00.999Z" },
	};
	for (size_t i = 0; i < sizeof(times) / sizeof(times[0]); i++) {
		char out[32];
		sd_db_iso_time(times[i].t, out);
		char what[96];
		snprintf(what, sizeof(what), "iso time %s", times[i].iso);
		ok(strcmp(out, times[i].iso) == 0, what);
	}

	static const struct {
		long f_type;
		const char *name;
	} fs[] = {
		{ 0x6969, "nfs" },
		{ 0x0bd00bd0, "lustre" },
		{ (long)0xff534d42, "cifs" },
		{ 0x47504653, "gpfs" },
		{ 0xef53, NULL },      /* ext4 */
		{ 0x01021994, NULL },  /* tmpfs */
		{ 0x58465342, NULL },  /* xfs */
	};
	for (size_t i = 0; i < sizeof(fs) / sizeof(fs[0]); i++) {
		const char *got = sd_db_network_fs_name(fs[i].f_type);
		char what[96];
		snprintf(what, sizeof(what), "f_type 0x%lx is %s", fs[i].f_type,
			 fs[i].name ? fs[i].name : "local");
		ok(fs[i].name ? got && strcmp(got, fs[i].name) == 0 : !got,
		   what);
	}

	unsetenv("SHAKEDOWN_DB");
	ok(strcmp(sd_db_resolve_path(NULL), "shakedown.db") == 0,
	   "default path is ./shakedown.db");
	setenv("SHAKEDOWN_DB", "/x/env.db", 1);
	ok(strcmp(sd_db_resolve_path(NULL), "/x/env.db") == 0,
	   "SHAKEDOWN_DB is used without --db");
	ok(strcmp(sd_db_resolve_path("a.db"), "a.db") == 0,
	   "--db wins over SHAKEDOWN_DB");
	setenv("SHAKEDOWN_DB_BUSY_TIMEOUT_MS", "250", 1);
	ok(sd_db_busy_timeout_ms() == 250, "busy timeout from environment");
	setenv("SHAKEDOWN_DB_BUSY_TIMEOUT_MS", "junk", 1);
	ok(sd_db_busy_timeout_ms() == SD_DB_BUSY_TIMEOUT_MS,
	   "bad busy timeout falls back to the default");

	/* Runs by reference, on a real file. */
	char path[] = "/tmp/unit_db_XXXXXX";
	int fd = mkstemp(path);
	close(fd);
	unlink(path);
	sqlite3 *db;
	char err[512];
	ok(sd_db_open(path, SD_DB_CREATE, &db, err, sizeof(err)) == SD_OK,
	   "create a database");
	sqlite3_exec(db,
		"INSERT INTO runs (uuid, started_at, status) VALUES "
		"('aaaa1111-0000-4000-8000-000000000001', '2026-01-01', "
		" 'passed'),"
		"('aaaa2222-0000-4000-8000-000000000002', '2026-01-02', "
		" 'failed'),"
		"('bbbb3333-0000-4000-8000-000000000003', '2026-01-03', "
		" 'passed')", NULL, NULL, NULL);
	static const struct {
		const char *ref;
		int rc;
		const char *uuid;
	} refs[] = {
		{ "latest", SD_OK, "bbbb3333-0000-4000-8000-000000000003" },
		{ NULL, SD_OK, "bbbb3333-0000-4000-8000-000000000003" },
		{ "aaaa2", SD_OK, "aaaa2222-0000-4000-8000-000000000002" },
		{ "aaaa", SD_ERR_INVALID, NULL },
		{ "cccc", SD_ERR_INVALID, NULL },
		{ "aaaa1111-0000-4000-8000-000000000001", SD_OK,
		  "aaaa1111-0000-4000-8000-000000000001" },
	};
	for (size_t i = 0; i < sizeof(refs) / sizeof(refs[0]); i++) {
		int64_t id;
		char uuid[37] = "";
		int rc = sd_db_find_run(db, refs[i].ref, &id, uuid, err,
					sizeof(err));
		char what[128];
		snprintf(what, sizeof(what), "run ref %s",
			 refs[i].ref ? refs[i].ref : "(null)");
		ok(rc == refs[i].rc &&
		   (!refs[i].uuid || strcmp(uuid, refs[i].uuid) == 0), what);
	}
	char *json = NULL;
	ok(sd_db_report_json(db, "aaaa1", &json, err, sizeof(err)) == SD_OK &&
	   json && strstr(json, "\"schema_version\":1"),
	   "report of a run without tests");
	free(json);
	sd_db_close(db);
	remove_db(path);

	round_pairing_seed();
	printf("1..%d\n", n);
	return failed;
}
