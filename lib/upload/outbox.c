/*
 * outbox.c - the upload outbox: every report to be sent is a row of
 * upload_outbox (run, url, state, attempts, http_status, last_error),
 * committed before the first attempt, so a report is never lost to a
 * network that is down or a process that is killed.
 *
 * States: 'pending' (not delivered yet; `shakedown upload --pending` tries
 * again), 'sent' (delivered; never sent again unless the user asks for
 * that run explicitly), 'failed' (the server refused it with an answer
 * that retrying cannot change, such as HTTP 400).  The report itself is
 * not stored: it is built from the run's rows at each attempt.  Tokens are
 * never stored; error texts are scrubbed before they are written.
 */
#include "config.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/db.h"
#include "shakedown/backend.h"
#include "upload/upload.h"
#include "util.h"

/* Now, in the database's timestamp format. */
static void now_iso(char out[32])
{
	sd_db_iso_time(sd_wall_now(), out);
}

static int db_fail(sqlite3 *db, const char *what, char *err, size_t errlen)
{
	snprintf(err, errlen, "results database: %s: %s", what,
		 sqlite3_errmsg(db));
	return SD_ERR_IO;
}

/* Create the row for (run, url), or set it back to 'pending'. */
static int enqueue(sqlite3 *db, int64_t run_id, const char *url,
		   sqlite3_int64 *row_id, char *err, size_t errlen)
{
	int rc = SD_OK;
	sqlite3_stmt *st = NULL;
	char now[32];
	now_iso(now);
	if (sqlite3_prepare_v2(db,
		"INSERT INTO upload_outbox (run_id, url, state, attempts, "
		"created_at) VALUES (?1, ?2, 'pending', 0, ?3) "
		"ON CONFLICT (run_id, url) DO UPDATE SET state = 'pending' "
		"RETURNING id", -1, &st, NULL) != SQLITE_OK)
		return db_fail(db, "adding to the upload outbox", err, errlen);
	sqlite3_bind_int64(st, 1, run_id);
	sqlite3_bind_text(st, 2, url, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, now, -1, SQLITE_STATIC);
	if (sqlite3_step(st) != SQLITE_ROW)
		rc = db_fail(db, "adding to the upload outbox", err, errlen);
	else
		*row_id = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return rc;
}

/* Write what the attempts of one call came to. */
static int record(sqlite3 *db, sqlite3_int64 row_id,
		  const struct sd_upload_result *res, char *err, size_t errlen)
{
	int rc = SD_OK;
	sqlite3_stmt *st = NULL;
	char now[32];
	const char *state = res->outcome == SD_UPLOAD_SENT ? "sent"
			  : res->outcome == SD_UPLOAD_REJECTED ? "failed"
							       : "pending";
	now_iso(now);
	if (sqlite3_prepare_v2(db,
		"UPDATE upload_outbox SET state = ?1, "
		"attempts = attempts + ?2, http_status = ?3, last_error = ?4, "
		"last_attempt_at = CASE WHEN ?2 > 0 THEN ?5 "
		"ELSE last_attempt_at END, "
		"sent_at = CASE WHEN ?1 = 'sent' THEN ?5 ELSE sent_at END "
		"WHERE id = ?6", -1, &st, NULL) != SQLITE_OK)
		return db_fail(db, "updating the upload outbox", err, errlen);
	sqlite3_bind_text(st, 1, state, -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 2, res->attempts);
	if (res->http_status)
		sqlite3_bind_int64(st, 3, res->http_status);
	else
		sqlite3_bind_null(st, 3);
	if (res->error[0])
		sqlite3_bind_text(st, 4, res->error, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(st, 4);
	sqlite3_bind_text(st, 5, now, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 6, row_id);
	if (sqlite3_step(st) != SQLITE_DONE)
		rc = db_fail(db, "updating the upload outbox", err, errlen);
	sqlite3_finalize(st);
	return rc;
}

/* The warning for a report that was not delivered. */
static void not_sent_message(const char *url, const char *uuid,
			     const struct sd_upload_result *res, char *err,
			     size_t errlen)
{
	char why[400];
	if (res->http_status)
		snprintf(why, sizeof(why), "HTTP %ld", res->http_status);
	else
		snprintf(why, sizeof(why), "%s", res->error);
	if (res->outcome == SD_UPLOAD_REJECTED)
		snprintf(err, errlen, "upload to %s refused (%s); the report "
			 "is in the outbox as failed ('shakedown upload "
			 "--list' shows the answer): fix the cause, then run "
			 "'shakedown upload %.8s --url %s'", url, res->error,
			 uuid, url);
	else if (res->attempts == 0)
		snprintf(err, errlen, "upload to %s failed (%s); the report is "
			 "in the outbox: run 'shakedown upload --pending'",
			 url, why);
	else
		snprintf(err, errlen, "upload to %s failed after %d attempt%s "
			 "(%s); the report is in the outbox: run 'shakedown "
			 "upload --pending'", url, res->attempts,
			 res->attempts == 1 ? "" : "s", why);
}

/* Build the report of one queued row, send it, record the outcome. */
static int send_row(sqlite3 *db, sqlite3_int64 row_id, const char *uuid,
		    const char *url, const char *token,
		    const struct sd_upload_config *c,
		    struct sd_upload_result *res, char *err, size_t errlen)
{
	int rc;
	char *json = NULL;
	char derr[512];

	memset(res, 0, sizeof(*res));
	res->outcome = SD_UPLOAD_FAILED;
	rc = sd_db_report_json(db, uuid, &json, derr, sizeof(derr));
	if (rc) {
		snprintf(res->error, sizeof(res->error),
			 "cannot build the report: %.300s", derr);
		sd_upload_scrub(res->error, token);
		record(db, row_id, res, derr, sizeof(derr));
		snprintf(err, errlen, "%s", res->error);
		return rc;
	}
	rc = sd_upload_post(c, url, token, uuid, json, strlen(json), res,
			    err, errlen);
	free(json);
	int rrc = record(db, row_id, res, derr, sizeof(derr));
	if (rc == SD_OK && rrc) {
		/* delivered, but the outbox could not say so: a later
		 * --pending sends it again, which the key makes harmless */
		snprintf(err, errlen, "report sent, but %s", derr);
		return rrc;
	}
	if (rc)
		not_sent_message(url, uuid, res, err, errlen);
	return rc;
}

int sd_upload_run(sqlite3 *db, const char *run_ref, const char *url,
		  const char *token, const struct sd_upload_config *c,
		  char run_uuid_out[37], struct sd_upload_result *res,
		  char *err, size_t errlen)
{
	int rc;
	int64_t run_id;
	sqlite3_int64 row_id;
	char uuid[37];

	memset(res, 0, sizeof(*res));
	res->outcome = SD_UPLOAD_FAILED;
	if ((rc = sd_upload_check_url(url, err, errlen)))
		return rc;
	if ((rc = sd_db_find_run(db, run_ref, &run_id, uuid, err, errlen)))
		return rc;
	if (run_uuid_out)
		sd_strlcpy(run_uuid_out, uuid, 37);
	if ((rc = enqueue(db, run_id, url, &row_id, err, errlen)))
		return rc;
	return send_row(db, row_id, uuid, url, token, c, res, err, errlen);
}

struct row {
	sqlite3_int64 id;
	char uuid[37];
	char *url;
};

int sd_upload_pending(sqlite3 *db, const char *url, const char *token,
		      const struct sd_upload_config *c, sd_upload_row_fn fn,
		      void *arg, int *nsent, int *nleft, char *err,
		      size_t errlen)
{
	int rc = SD_OK, sent = 0, left = 0;
	sqlite3_stmt *st = NULL;
	struct row *rows = NULL;
	size_t n = 0, cap = 0;

	/* collect first: no statement stays open while rows change */
	if (sqlite3_prepare_v2(db,
		"SELECT o.id, r.uuid, o.url FROM upload_outbox o "
		"JOIN runs r ON r.id = o.run_id WHERE o.state = 'pending' "
		"AND (?1 IS NULL OR o.url = ?1) ORDER BY o.created_at, o.id",
		-1, &st, NULL) != SQLITE_OK) {
		rc = db_fail(db, "reading the upload outbox", err, errlen);
		goto out;
	}
	if (url)
		sqlite3_bind_text(st, 1, url, -1, SQLITE_STATIC);
	int step;
	while ((step = sqlite3_step(st)) == SQLITE_ROW) {
		if (n == cap) {
			size_t ncap = cap ? cap * 2 : 16;
			struct row *p = realloc(rows, ncap * sizeof(*p));
			if (!p) {
				snprintf(err, errlen, "out of memory");
				rc = SD_ERR_NOMEM;
				goto out;
			}
			rows = p;
			cap = ncap;
		}
		const char *u = (const char *)sqlite3_column_text(st, 1);
		const char *l = (const char *)sqlite3_column_text(st, 2);
		rows[n].id = sqlite3_column_int64(st, 0);
		sd_strlcpy(rows[n].uuid, u ? u : "", sizeof(rows[n].uuid));
		rows[n].url = strdup(l ? l : "");
		if (!rows[n].url) {
			snprintf(err, errlen, "out of memory");
			rc = SD_ERR_NOMEM;
			goto out;
		}
		n++;
	}
	if (step != SQLITE_DONE) {
		rc = db_fail(db, "reading the upload outbox", err, errlen);
		goto out;
	}
	sqlite3_finalize(st);
	st = NULL;

	for (size_t i = 0; i < n; i++) {
		char line[1024], rerr[1024];
		struct sd_upload_result res = { .attempts = 0 };
		int still_pending = 0;

		/* another `upload --pending` may have sent it meanwhile */
		if (sqlite3_prepare_v2(db, "SELECT 1 FROM upload_outbox WHERE "
				       "id = ?1 AND state = 'pending'", -1,
				       &st, NULL) != SQLITE_OK) {
			rc = db_fail(db, "reading the upload outbox", err,
				     errlen);
			goto out;
		}
		sqlite3_bind_int64(st, 1, rows[i].id);
		still_pending = sqlite3_step(st) == SQLITE_ROW;
		sqlite3_finalize(st);
		st = NULL;
		if (!still_pending)
			continue;

		int src = sd_upload_check_url(rows[i].url, rerr, sizeof(rerr));
		if (!src)
			src = send_row(db, rows[i].id, rows[i].uuid,
				       rows[i].url, token, c, &res, rerr,
				       sizeof(rerr));
		if (src == SD_OK) {
			sent++;
			snprintf(line, sizeof(line), "sent %s to %s (HTTP %ld)",
				 rows[i].uuid, rows[i].url, res.http_status);
		} else if (res.attempts > 0) {
			left++;
			snprintf(line, sizeof(line), "not sent %s to %s after "
				 "%d attempt%s: %s", rows[i].uuid, rows[i].url,
				 res.attempts, res.attempts == 1 ? "" : "s",
				 res.error);
		} else {
			left++;
			snprintf(line, sizeof(line), "not sent %s: %.900s",
				 rows[i].uuid, rerr);
		}
		sd_upload_scrub(line, token);
		if (fn)
			fn(arg, src == SD_OK, line);
		/* without libcurl nothing can be sent: stop at the first */
		if (src == SD_ERR_INVALID && !sd_upload_available(rerr,
								  sizeof(rerr))) {
			snprintf(err, errlen, "%s", rerr);
			rc = SD_ERR_INVALID;
			left += (int)(n - i - 1);
			goto out;
		}
	}
	if (left) {
		snprintf(err, errlen, "%d report%s not sent; they stay in the "
			 "outbox ('shakedown upload --list' says why)", left,
			 left == 1 ? "" : "s");
		rc = SD_ERR_IO;
	}
out:
	sqlite3_finalize(st);
	for (size_t i = 0; i < n; i++)
		free(rows[i].url);
	free(rows);
	if (nsent)
		*nsent = sent;
	if (nleft)
		*nleft = left;
	return rc;
}

int sd_upload_after_run(const char *db_path, const char *run_uuid,
			const char *url, const char *token_file,
			const char *cacert, char *err, size_t errlen)
{
	int rc;
	sqlite3 *db = NULL;
	char *token = NULL;
	int64_t run_id;
	sqlite3_int64 row_id;
	char uuid[37], terr[512];
	struct sd_upload_config c;
	struct sd_upload_result res;

	if (!url || !*url)
		url = getenv("SHAKEDOWN_UPLOAD_URL");
	if (!url || !*url)
		return SD_OK;
	if (!sd_upload_available(terr, sizeof(terr))) {
		snprintf(err, errlen, "--upload: %s", terr);
		return SD_ERR_INVALID;
	}
	if ((rc = sd_upload_check_url(url, err, errlen)))
		return rc;
	if (!db_path || strcmp(db_path, "none") == 0) {
		snprintf(err, errlen, "upload to %s not attempted: the run was "
			 "not recorded (--db none), and the upload sends the "
			 "recorded report; drop --db none", url);
		return SD_ERR_INVALID;
	}
	if (!run_uuid || !*run_uuid) {
		snprintf(err, errlen, "upload to %s not attempted: no run "
			 "was recorded", url);
		return SD_ERR_INVALID;
	}
	if ((rc = sd_db_open(db_path, 0, &db, terr,
			     sizeof(terr)))) {
		snprintf(err, errlen, "upload to %s not attempted: %s", url,
			 terr);
		goto out;
	}
	if ((rc = sd_db_find_run(db, run_uuid, &run_id, uuid, terr, sizeof(terr))) ||
	    (rc = enqueue(db, run_id, url, &row_id, terr, sizeof(terr)))) {
		snprintf(err, errlen, "upload to %s not attempted: %s", url,
			 terr);
		goto out;
	}
	/* queued: from here on a failure leaves the report in the outbox
	 * (the settings were checked before the run: src/main.c) */
	sd_upload_config_init(&c);
	rc = sd_upload_config_from_env(&c, terr, sizeof(terr));
	if (cacert && *cacert)
		c.cacert = cacert;
	if (!rc)
		rc = sd_upload_token_load(token_file, &token, terr,
					  sizeof(terr));
	if (rc) {
		memset(&res, 0, sizeof(res));
		res.outcome = SD_UPLOAD_FAILED;
		sd_strlcpy(res.error, terr, sizeof(res.error));
		record(db, row_id, &res, terr, sizeof(terr));
		not_sent_message(url, uuid, &res, err, errlen);
		goto out;
	}
	rc = send_row(db, row_id, uuid, url, token, &c, &res, err, errlen);
out:
	sd_upload_token_free(token);
	sd_db_close(db);
	return rc;
}
