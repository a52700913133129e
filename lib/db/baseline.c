/*
 * baseline.c - named baselines: taken from a recorded run, listed, shown,
 * deleted, and read back for `shakedown run` to judge against (see
 * baseline.h).
 *
 * The medians are computed by SQLite in the one INSERT ... SELECT that
 * fills baseline_values, inside the transaction that also checks the run
 * and the name, so a baseline is either all there or not at all.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db/baseline.h"
#include "db/db.h"
#include "shakedown/backend.h"
#include "util.h"

/* The baseline's values from run ?2 into baseline ?1.  Per test row,
 * size and placement, the last measurement (the bare columns of max(id));
 * then per test kind, size and placement the median of those rows: the
 * middle one, or the mean of the two middle ones, ranked separately for
 * bandwidth and time. */
static const char insert_values_sql[] =
"INSERT INTO baseline_values (baseline_id, op, dtype, redop, scope, "
" size_bytes, in_place, busbw_gbs, time_us, groups) "
"WITH per_test AS ("
" SELECT t.id AS test_id, t.op, t.dtype, coalesce(t.redop, '') AS redop,"
"  t.scope, m.size_bytes, m.in_place, m.busbw_gbs, m.time_us,"
"  max(m.id) AS last_id"
" FROM tests t JOIN measurements m ON m.test_id = t.id"
" WHERE t.run_id = ?2 AND t.status = 'passed'"
" GROUP BY t.id, m.size_bytes, m.in_place), "
"ranked AS ("
" SELECT op, dtype, redop, scope, size_bytes, in_place, busbw_gbs, time_us,"
"  row_number() OVER (PARTITION BY op, dtype, redop, scope, size_bytes,"
"   in_place ORDER BY busbw_gbs) AS bw_rank,"
"  row_number() OVER (PARTITION BY op, dtype, redop, scope, size_bytes,"
"   in_place ORDER BY time_us) AS time_rank,"
"  count(*) OVER (PARTITION BY op, dtype, redop, scope, size_bytes,"
"   in_place) AS n"
" FROM per_test) "
"SELECT ?1, op, dtype, redop, scope, size_bytes, in_place,"
" avg(CASE WHEN bw_rank IN ((n + 1) / 2, (n + 2) / 2) THEN busbw_gbs END),"
" avg(CASE WHEN time_rank IN ((n + 1) / 2, (n + 2) / 2) THEN time_us END),"
" max(n) "
"FROM ranked GROUP BY op, dtype, redop, scope, size_bytes, in_place";

const char sd_db_baseline_list_sql[] =
	"SELECT b.name, b.created_at, b.from_run_uuid, b.backend, "
	" b.nodelist, b.nranks, "
	" (SELECT count(*) FROM baseline_values v "
	"  WHERE v.baseline_id = b.id) AS \"values\", b.description "
	"FROM baselines b ORDER BY b.created_at DESC, b.id DESC";

const char sd_db_baseline_values_sql[] =
	"SELECT op, dtype, nullif(redop, '') AS redop, scope, size_bytes, "
	" in_place, busbw_gbs, time_us, groups "
	"FROM baseline_values WHERE baseline_id = ?1 "
	"ORDER BY op, dtype, redop, scope, size_bytes, in_place";

static const char json_sql[] =
	"SELECT json_object('name', b.name, 'created_at', b.created_at, "
	" 'from_run_uuid', b.from_run_uuid, 'description', b.description, "
	" 'backend', b.backend, 'nodelist', b.nodelist, 'nranks', b.nranks, "
	" 'values', json((SELECT json_group_array(json_object('op', v.op, "
	"  'dtype', v.dtype, 'redop', v.redop, 'scope', v.scope, "
	"  'size_bytes', v.size_bytes, "
	"  'in_place', json(iif(v.in_place, 'true', 'false')), "
	"  'busbw_gbs', v.busbw_gbs, 'time_us', v.time_us, "
	"  'groups', v.groups)) FROM (SELECT * FROM (%s)) v))) "
	"FROM baselines b WHERE b.id = ?1";

static int is_busy(int rc)
{
	rc &= 0xff;
	return rc == SQLITE_BUSY || rc == SQLITE_LOCKED;
}

/* The file of an open handle, for messages. */
static const char *db_file(sqlite3 *db)
{
	const char *f = sqlite3_db_filename(db, "main");
	return f && *f ? f : "the database";
}

/* A failed statement as one line: the lock in the words of sd_db_open(),
 * anything else with SQLite's message. */
static int db_failed(sqlite3 *db, int rc, const char *what, char *err,
		     size_t errlen)
{
	if (is_busy(rc))
		snprintf(err, errlen, "%s: database is locked by another "
			 "process for more than %d ms; retry later, raise "
			 "SHAKEDOWN_DB_BUSY_TIMEOUT_MS or pass --db with "
			 "another path", db_file(db), sd_db_busy_timeout_ms());
	else
		snprintf(err, errlen, "%s: %s: %s", db_file(db), what,
			 sqlite3_errmsg(db));
	return SD_ERR_IO;
}

int sd_db_baseline_check_name(const char *name, char *err, size_t errlen)
{
	size_t len = name ? strlen(name) : 0;
	int ok = len > 0 && len <= SD_BASELINE_NAME_MAX;
	for (size_t i = 0; ok && i < len; i++) {
		char c = name[i];
		int alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			    (c >= '0' && c <= '9');
		ok = alnum || (i > 0 && (c == '.' || c == '_' || c == '-'));
	}
	if (ok)
		return SD_OK;
	snprintf(err, errlen, "bad baseline name '%.*s'; use 1 to %d letters, "
		 "digits, '.', '_' or '-', starting with a letter or digit, "
		 "e.g. h200-2026q4", 80, name ? name : "",
		 SD_BASELINE_NAME_MAX);
	return SD_ERR_INVALID;
}

static void unknown_baseline(const char *name, char *err, size_t errlen)
{
	snprintf(err, errlen, "no baseline '%s'; list the baselines with "
		 "'shakedown baseline list'", name);
}

int sd_db_baseline_id(sqlite3 *db, const char *name, int64_t *id, char *err,
		      size_t errlen)
{
	sqlite3_stmt *st = NULL;
	int rc = SD_ERR_INVALID;
	int step = sqlite3_prepare_v2(db, "SELECT id FROM baselines "
				      "WHERE name = ?1", -1, &st, NULL);
	if (step != SQLITE_OK) {
		int version = 0;
		char e2[128];
		if (sd_db_schema_version(db, &version, e2, sizeof(e2)) ==
			    SD_OK && version < 4) {
			snprintf(err, errlen, "no baseline '%s': %s has schema "
				 "version %d, which holds no baselines; run "
				 "'shakedown db migrate'", name, db_file(db),
				 version);
			goto out;
		}
		rc = db_failed(db, step, "finding the baseline", err, errlen);
		goto out;
	}
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	step = sqlite3_step(st);
	if (step == SQLITE_ROW) {
		*id = sqlite3_column_int64(st, 0);
		rc = SD_OK;
	} else if (step == SQLITE_DONE) {
		unknown_baseline(name, err, errlen);
	} else {
		rc = db_failed(db, step, "finding the baseline", err, errlen);
	}
out:
	sqlite3_finalize(st);
	return rc;
}

/* Text of column i, never NULL. */
static const char *text(sqlite3_stmt *st, int i)
{
	const char *t = (const char *)sqlite3_column_text(st, i);
	return t ? t : "";
}

int sd_db_baseline_create(sqlite3 *db, const char *name, const char *run_ref,
			  const char *description,
			  struct sd_baseline_created *out, char *err,
			  size_t errlen)
{
	sqlite3_stmt *st = NULL;
	int64_t run_id, baseline_id;
	char uuid[37], now[32];
	long ntests = 0, nvalues;
	int rc, step;

	rc = sd_db_baseline_check_name(name, err, errlen);
	if (rc != SD_OK)
		return rc;
	step = sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
	if (step != SQLITE_OK)
		return db_failed(db, step, "starting the transaction", err,
				 errlen);
	rc = sd_db_find_run(db, run_ref, &run_id, uuid, err, errlen);
	if (rc != SD_OK)
		goto fail;

	/* the name is free */
	rc = SD_ERR_IO;
	step = sqlite3_prepare_v2(db, "SELECT from_run_uuid, created_at FROM "
				  "baselines WHERE name = ?1", -1, &st, NULL);
	if (step != SQLITE_OK)
		goto failed;
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	step = sqlite3_step(st);
	if (step == SQLITE_ROW) {
		snprintf(err, errlen, "baseline '%s' already exists (from run "
			 "%s, created %s); delete it first with 'shakedown "
			 "baseline delete %s' or choose another name", name,
			 text(st, 0), text(st, 1), name);
		rc = SD_ERR_INVALID;
		goto fail;
	}
	if (step != SQLITE_DONE)
		goto failed;
	sqlite3_finalize(st);

	/* the run has ended, and the baseline row */
	step = sqlite3_prepare_v2(db,
		"SELECT r.status, (SELECT count(*) FROM tests t "
		"  WHERE t.run_id = r.id AND t.status = 'passed' AND EXISTS "
		"  (SELECT 1 FROM measurements m WHERE m.test_id = t.id)), "
		" (SELECT count(*) FROM tests t WHERE t.run_id = r.id) "
		"FROM runs r WHERE r.id = ?1", -1, &st, NULL);
	if (step != SQLITE_OK)
		goto failed;
	sqlite3_bind_int64(st, 1, run_id);
	step = sqlite3_step(st);
	if (step != SQLITE_ROW)
		goto failed;
	if (strcmp(text(st, 0), "running") == 0) {
		snprintf(err, errlen, "run %s is still running; wait until it "
			 "ends, or take the baseline from another run", uuid);
		rc = SD_ERR_INVALID;
		goto fail;
	}
	ntests = (long)sqlite3_column_int64(st, 1);
	if (ntests == 0) {
		snprintf(err, errlen, "run %s (%s) has no passed measurements "
			 "(%lld tests, none passed with measurements); take "
			 "the baseline from a run whose tests passed", uuid,
			 text(st, 0), (long long)sqlite3_column_int64(st, 2));
		rc = SD_ERR_INVALID;
		goto fail;
	}
	sqlite3_finalize(st);
	step = sqlite3_prepare_v2(db,
		"INSERT INTO baselines (name, created_at, from_run_uuid, "
		" description, backend, nodelist, nranks) "
		"SELECT ?1, ?2, r.uuid, ?3, r.backend, j.nodelist, r.nranks "
		"FROM runs r LEFT JOIN jobs j ON j.run_id = r.id "
		"WHERE r.id = ?4", -1, &st, NULL);
	if (step != SQLITE_OK)
		goto failed;
	sd_db_iso_time(sd_wall_now(), now);
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, now, -1, SQLITE_STATIC);
	if (description)
		sqlite3_bind_text(st, 3, description, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 4, run_id);
	step = sqlite3_step(st);
	if (step != SQLITE_DONE)
		goto failed;
	baseline_id = sqlite3_last_insert_rowid(db);
	sqlite3_finalize(st);

	/* its values */
	step = sqlite3_prepare_v2(db, insert_values_sql, -1, &st, NULL);
	if (step != SQLITE_OK)
		goto failed;
	sqlite3_bind_int64(st, 1, baseline_id);
	sqlite3_bind_int64(st, 2, run_id);
	step = sqlite3_step(st);
	if (step != SQLITE_DONE)
		goto failed;
	nvalues = (long)sqlite3_changes(db);
	sqlite3_finalize(st);
	st = NULL;

	step = sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
	if (step != SQLITE_OK)
		goto failed;
	if (out) {
		sd_strlcpy(out->from_run_uuid, uuid,
			   sizeof(out->from_run_uuid));
		out->values = nvalues;
		out->tests = ntests;
	}
	return SD_OK;
failed:
	rc = db_failed(db, sqlite3_extended_errcode(db),
		       "creating the baseline", err, errlen);
fail:
	sqlite3_finalize(st);
	sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
	return rc;
}

int sd_db_baseline_delete(sqlite3 *db, const char *name, char *err,
			  size_t errlen)
{
	sqlite3_stmt *st = NULL;
	int64_t id;
	int rc, step = sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
	if (step != SQLITE_OK)
		return db_failed(db, step, "starting the transaction", err,
				 errlen);
	rc = sd_db_baseline_id(db, name, &id, err, errlen);
	if (rc != SD_OK)
		goto fail;
	/* the values go with it (ON DELETE CASCADE) */
	step = sqlite3_prepare_v2(db, "DELETE FROM baselines WHERE id = ?1",
				  -1, &st, NULL);
	if (step == SQLITE_OK) {
		sqlite3_bind_int64(st, 1, id);
		step = sqlite3_step(st);
	}
	if (step != SQLITE_DONE) {
		rc = db_failed(db, step, "deleting the baseline", err, errlen);
		goto fail;
	}
	sqlite3_finalize(st);
	st = NULL;
	step = sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
	if (step != SQLITE_OK) {
		rc = db_failed(db, step, "deleting the baseline", err, errlen);
		goto fail;
	}
	return SD_OK;
fail:
	sqlite3_finalize(st);
	sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
	return rc;
}

int sd_db_baseline_json(sqlite3 *db, const char *name, char **json,
			char *err, size_t errlen)
{
	sqlite3_stmt *st = NULL;
	struct sd_buf q = { 0 };
	int64_t id;
	int rc, step;

	*json = NULL;
	rc = sd_db_baseline_id(db, name, &id, err, errlen);
	if (rc != SD_OK)
		return rc;
	if (sd_buf_printf(&q, json_sql, sd_db_baseline_values_sql) != 0) {
		snprintf(err, errlen, "out of memory showing the baseline");
		return SD_ERR_NOMEM;
	}
	step = sqlite3_prepare_v2(db, q.data, -1, &st, NULL);
	if (step == SQLITE_OK) {
		sqlite3_bind_int64(st, 1, id);
		step = sqlite3_step(st);
	}
	if (step != SQLITE_ROW) {
		rc = db_failed(db, step, "showing the baseline", err, errlen);
		goto out;
	}
	*json = strdup(text(st, 0));
	if (!*json) {
		snprintf(err, errlen, "out of memory showing the baseline");
		rc = SD_ERR_NOMEM;
		goto out;
	}
	rc = SD_OK;
out:
	sqlite3_finalize(st);
	sd_buf_free(&q);
	return rc;
}

/* The order of sd_baseline_find(): the key's fields in turn. */
static int value_cmp(const struct sd_baseline_value *a,
		     const struct sd_baseline_value *b)
{
	int c;
	if ((c = strcmp(a->op, b->op)) != 0 ||
	    (c = strcmp(a->dtype, b->dtype)) != 0 ||
	    (c = strcmp(a->redop, b->redop)) != 0 ||
	    (c = strcmp(a->scope, b->scope)) != 0)
		return c;
	if (a->size_bytes != b->size_bytes)
		return a->size_bytes < b->size_bytes ? -1 : 1;
	return (a->in_place > b->in_place) - (a->in_place < b->in_place);
}

static int value_qsort_cmp(const void *a, const void *b)
{
	return value_cmp(a, b);
}

/* Copy a text column into a field; -1 when it does not fit. */
static int copy_field(char *dst, size_t len, sqlite3_stmt *st, int i)
{
	const char *s = text(st, i);
	if (strlen(s) >= len)
		return -1;
	memcpy(dst, s, strlen(s) + 1);
	return 0;
}

int sd_db_baseline_read(sqlite3 *db, const char *name,
			struct sd_baseline *out, char *err, size_t errlen)
{
	sqlite3_stmt *st = NULL;
	int64_t id;
	size_t cap = 0;
	int rc, step;

	memset(out, 0, sizeof(*out));
	if (!name || strlen(name) > SD_BASELINE_NAME_MAX) {
		unknown_baseline(name ? name : "", err, errlen);
		return SD_ERR_INVALID;
	}
	rc = sd_db_baseline_id(db, name, &id, err, errlen);
	if (rc != SD_OK)
		return rc;
	sd_strlcpy(out->name, name, sizeof(out->name));
	step = sqlite3_prepare_v2(db, "SELECT from_run_uuid FROM baselines "
				  "WHERE id = ?1", -1, &st, NULL);
	if (step == SQLITE_OK) {
		sqlite3_bind_int64(st, 1, id);
		step = sqlite3_step(st);
	}
	if (step != SQLITE_ROW) {
		rc = db_failed(db, step, "reading the baseline", err, errlen);
		goto out;
	}
	sd_strlcpy(out->from_run_uuid, text(st, 0),
		   sizeof(out->from_run_uuid));
	sqlite3_finalize(st);
	step = sqlite3_prepare_v2(db,
		"SELECT op, dtype, redop, scope, size_bytes, in_place, "
		" busbw_gbs, time_us, groups FROM baseline_values "
		"WHERE baseline_id = ?1", -1, &st, NULL);
	if (step != SQLITE_OK) {
		rc = db_failed(db, step, "reading the baseline", err, errlen);
		goto out;
	}
	sqlite3_bind_int64(st, 1, id);
	while ((step = sqlite3_step(st)) == SQLITE_ROW) {
		if (out->n == cap) {
			size_t ncap = cap ? 2 * cap : 64;
			void *p = realloc(out->v, ncap * sizeof(*out->v));
			if (!p) {
				snprintf(err, errlen, "out of memory reading "
					 "baseline '%s'", name);
				rc = SD_ERR_NOMEM;
				goto out;
			}
			out->v = p;
			cap = ncap;
		}
		struct sd_baseline_value *v = &out->v[out->n];
		memset(v, 0, sizeof(*v));
		if (copy_field(v->op, sizeof(v->op), st, 0) ||
		    copy_field(v->dtype, sizeof(v->dtype), st, 1) ||
		    copy_field(v->redop, sizeof(v->redop), st, 2) ||
		    copy_field(v->scope, sizeof(v->scope), st, 3)) {
			snprintf(err, errlen, "baseline '%s': a value's op, "
				 "dtype, redop or scope is too long ('%.40s'); "
				 "create the baseline again", name,
				 text(st, 3));
			rc = SD_ERR_IO;
			goto out;
		}
		v->size_bytes = (uint64_t)sqlite3_column_int64(st, 4);
		v->in_place = sqlite3_column_int(st, 5) != 0;
		v->busbw_gbs = sqlite3_column_double(st, 6);
		v->time_us = sqlite3_column_double(st, 7);
		v->groups = sqlite3_column_int(st, 8);
		out->n++;
	}
	if (step != SQLITE_DONE) {
		rc = db_failed(db, step, "reading the baseline", err, errlen);
		goto out;
	}
	if (out->n > 1)
		qsort(out->v, out->n, sizeof(*out->v), value_qsort_cmp);
	rc = SD_OK;
out:
	sqlite3_finalize(st);
	return rc;
}

int sd_db_baseline_load(const char *db_path, const char *name,
			struct sd_baseline *out, char *err, size_t errlen)
{
	sqlite3 *db = NULL;
	int flags = 0, rc;
	const char *path = sd_db_resolve_path(db_path);

	memset(out, 0, sizeof(*out));
	if (strcmp(path, "none") == 0) {
		snprintf(err, errlen, "baseline '%s' needs a results database, "
			 "and --db none gives none; pass --db PATH or set "
			 "SHAKEDOWN_DB", name ? name : "");
		return SD_ERR_INVALID;
	}
	if (access(path, F_OK) == 0 && access(path, W_OK) != 0)
		flags |= SD_DB_READONLY;
	rc = sd_db_open(path, flags, &db, err, errlen);
	if (rc != SD_OK)
		return rc;
	rc = sd_db_baseline_read(db, name, out, err, errlen);
	sd_db_close(db);
	return rc;
}

const struct sd_baseline_value *
sd_baseline_find(const struct sd_baseline *b, const char *op,
		 const char *dtype, const char *redop, const char *scope,
		 uint64_t size_bytes, int in_place)
{
	struct sd_baseline_value key;
	if (!b || !b->n || !op || !dtype || !scope)
		return NULL;
	/* a key longer than its field matches nothing */
	if (strlen(op) >= sizeof(key.op) ||
	    strlen(dtype) >= sizeof(key.dtype) ||
	    (redop && strlen(redop) >= sizeof(key.redop)) ||
	    strlen(scope) >= sizeof(key.scope))
		return NULL;
	memset(&key, 0, sizeof(key));
	memcpy(key.op, op, strlen(op) + 1);
	memcpy(key.dtype, dtype, strlen(dtype) + 1);
	if (redop)
		memcpy(key.redop, redop, strlen(redop) + 1);
	memcpy(key.scope, scope, strlen(scope) + 1);
	key.size_bytes = size_bytes;
	key.in_place = in_place != 0;
	return bsearch(&key, b->v, b->n, sizeof(*b->v), value_qsort_cmp);
}

void sd_baseline_free(struct sd_baseline *b)
{
	if (!b)
		return;
	free(b->v);
	memset(b, 0, sizeof(*b));
}
