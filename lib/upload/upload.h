/*
 * upload.h - send run reports to a collector over HTTP(S), with an outbox.
 *
 * A report is the JSON document of one run (sd_db_report_json, the same as
 * `shakedown report RUN --format json`).  It is POSTed with
 * `Content-Type: application/json`, `Idempotency-Key: <run uuid>` and, when
 * a token is configured, `Authorization: Bearer <token>`.  Before the first
 * attempt the run is entered in the database's upload_outbox table, so a
 * report that cannot be delivered (network down, server failing, process
 * killed) is never lost: `shakedown upload --pending` sends it later.
 *
 * Secrets: the token is read from a file or the environment, never from the
 * command line; it is never written to the database and never appears in
 * any message these functions produce (they scrub it).
 *
 * Layers: the HTTP sender (http_curl.c, or http_none.c when built without
 * libcurl), the outbox (outbox.c) and the command (cmd_upload.c).  Nothing
 * here prints except through the optional log callback.
 */
#ifndef SD_UPLOAD_H
#define SD_UPLOAD_H

#include <stddef.h>
#include <stdint.h>

struct sqlite3;

/* Defaults; each can be changed by option or environment (shakedown(1)). */
#define SD_UPLOAD_CONNECT_TIMEOUT_S 10.0
#define SD_UPLOAD_TIMEOUT_S 60.0
#define SD_UPLOAD_ATTEMPTS 4
#define SD_UPLOAD_BACKOFF_S 1.0
#define SD_UPLOAD_BACKOFF_MAX_S 30.0

/* How to send.  Fill with sd_upload_config_init, then
 * sd_upload_config_from_env, then apply command-line options. */
struct sd_upload_config {
	const char *cacert;       /* CA bundle for a private CA; NULL: system */
	double connect_timeout_s; /* per attempt, to establish the connection */
	double timeout_s;         /* per attempt, the whole exchange */
	int max_attempts;         /* 1 = no retries */
	double backoff_s;         /* first wait between attempts; doubles */
	double backoff_max_s;     /* cap for any wait, Retry-After included */
	/* Progress lines ("attempt 1 of 4: HTTP 503; retrying in 1 s"),
	 * already scrubbed of the token; NULL: silent. */
	void (*log)(void *arg, const char *line);
	void *log_arg;
};

/* Set every field to its default (no CA file, no log). */
void sd_upload_config_init(struct sd_upload_config *c);

/*
 * Apply SHAKEDOWN_CACERT, SHAKEDOWN_UPLOAD_CONNECT_TIMEOUT,
 * SHAKEDOWN_UPLOAD_TIMEOUT, SHAKEDOWN_UPLOAD_ATTEMPTS,
 * SHAKEDOWN_UPLOAD_BACKOFF and SHAKEDOWN_UPLOAD_BACKOFF_MAX when set.
 * Returns SD_OK, or SD_ERR_INVALID with err naming the variable.
 * c->cacert then points into the environment (do not free).
 */
int sd_upload_config_from_env(struct sd_upload_config *c, char *err,
			      size_t errlen);

/*
 * Find the bearer token: token_file when not NULL, else the file named by
 * $SHAKEDOWN_TOKEN_FILE, else $SHAKEDOWN_TOKEN.  A file holds the token on
 * its first line (surrounding white space is dropped).  *token is NULL when
 * none is configured (requests then carry no Authorization header).
 * Returns SD_OK, SD_ERR_IO (file unreadable) or SD_ERR_INVALID (empty, or
 * characters a header cannot carry).  Free *token with sd_upload_token_free.
 */
int sd_upload_token_load(const char *token_file, char **token, char *err,
			 size_t errlen);

/* Wipe and free a token from sd_upload_token_load (NULL is fine). */
void sd_upload_token_free(char *token);

/*
 * Replace every occurrence of secret in s (NUL-terminated, in place) with
 * "***"; does nothing when secret is NULL or empty.  Used on every message
 * that could echo what was sent (server replies, library errors).
 */
void sd_upload_scrub(char *s, const char *secret);

/*
 * Check that url is an absolute http:// or https:// URL without user
 * credentials (they would end up in the database and in messages: use a
 * token file instead) and without spaces or control characters.
 * Returns SD_OK or SD_ERR_INVALID with err saying what is wrong.
 */
int sd_upload_check_url(const char *url, char *err, size_t errlen);

/* 1 when this build can send (libcurl), else 0 with err saying how to get
 * it ("built without libcurl; install libcurl4-openssl-dev and rebuild"). */
int sd_upload_available(char *err, size_t errlen);

/* What became of one report after all attempts. */
enum sd_upload_outcome {
	SD_UPLOAD_SENT = 0,     /* a 2xx answer */
	SD_UPLOAD_REJECTED = 1, /* an answer that retrying cannot change
				 * (4xx other than 408 and 429, 3xx) */
	SD_UPLOAD_FAILED = 2,   /* network, TLS, timeout, 5xx or 429 until
				 * the attempts ran out: try again later */
};

struct sd_upload_result {
	enum sd_upload_outcome outcome;
	int attempts;      /* made by this call */
	long http_status;  /* of the last answer; 0 when none came */
	char error[384];   /* last error, scrubbed; "" when sent */
};

/*
 * POST body (len bytes of JSON) to url, retrying with exponential backoff
 * on network errors, timeouts, 5xx, 408 and 429 (waiting as Retry-After
 * says, capped at c->backoff_max_s), at most c->max_attempts times.  TLS
 * peers are always verified.  token may be NULL.
 * Returns SD_OK when sent; SD_ERR_IO when not (res says why: it is always
 * filled); SD_ERR_INVALID for bad arguments or a build without libcurl
 * (err says which).
 */
int sd_upload_post(const struct sd_upload_config *c, const char *url,
		   const char *token, const char *idempotency_key,
		   const char *body, size_t len, struct sd_upload_result *res,
		   char *err, size_t errlen);

/*
 * sd_upload_post with another Content-Type (content_type, e.g.
 * "text/html; charset=utf-8"; no CR or LF): `upload --html` sends the
 * HTML report with it.  Same returns.
 */
int sd_upload_post_type(const struct sd_upload_config *c, const char *url,
			const char *token, const char *idempotency_key,
			const char *content_type, const char *body,
			size_t len, struct sd_upload_result *res, char *err,
			size_t errlen);

/* ---- the outbox (outbox.c) -------------------------------------------- */

/*
 * Send one run's report to url and record the outcome in upload_outbox:
 * the row (run, url) is created or reset to 'pending' and committed before
 * the first attempt, then set to 'sent', 'failed' (rejected: not retried by
 * --pending) or left 'pending' with attempts, http_status and last_error.
 * run_ref: a uuid, a unique uuid prefix or "latest".  run_uuid_out (37
 * bytes, may be NULL) receives the run's uuid.
 * Returns SD_OK when sent; SD_ERR_IO when the report was not delivered
 * (err: "upload to URL failed (...); the report is in the outbox: run
 * 'shakedown upload --pending'"), or a database status with err.
 */
int sd_upload_run(struct sqlite3 *db, const char *run_ref, const char *url,
		  const char *token, const struct sd_upload_config *c,
		  char run_uuid_out[37], struct sd_upload_result *res,
		  char *err, size_t errlen);

/* Called by sd_upload_pending after each row; line is a one-line summary
 * ("sent 1b2c3d4e... to URL (HTTP 201)"). */
typedef void (*sd_upload_row_fn)(void *arg, int ok, const char *line);

/*
 * Send every 'pending' row of the outbox (only those for url when url is
 * not NULL), oldest first; rows already 'sent' are never sent again.
 * *nsent and *nleft (may be NULL) count rows sent and rows still not sent.
 * Returns SD_OK when every row was sent (or none waited), SD_ERR_IO when
 * some were not, or a database status with err.
 */
int sd_upload_pending(struct sqlite3 *db, const char *url, const char *token,
		      const struct sd_upload_config *c, sd_upload_row_fn fn,
		      void *arg, int *nsent, int *nleft, char *err,
		      size_t errlen);

/*
 * The hook `shakedown run` calls on rank 0 after a run was recorded.
 * url: --upload URL, or NULL for $SHAKEDOWN_UPLOAD_URL; when neither is
 * set this does nothing and returns SD_OK.  token_file, cacert: the
 * options or NULL (then the environment decides).  db_path: the resolved
 * database path (NULL or "none": nothing recorded, so nothing to send;
 * that is an error when a URL is set).
 * Returns SD_OK when sent; otherwise a status with err holding a one-line
 * warning for the caller to print.  The run's exit status must not change.
 */
int sd_upload_after_run(const char *db_path, const char *run_uuid,
			const char *url, const char *token_file,
			const char *cacert, char *err, size_t errlen);

#endif
