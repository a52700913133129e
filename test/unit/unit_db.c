/*
 * unit_db.c - table-driven checks of the database module's pure parts
 * (TAP): time formatting, network file system names, path resolution,
 * and finding runs by UUID prefix.
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
	unlink(path);
	char wal[64];
	snprintf(wal, sizeof(wal), "%s-wal", path);
	unlink(wal);
	snprintf(wal, sizeof(wal), "%s-shm", path);
	unlink(wal);
	printf("1..%d\n", n);
	return failed;
}
