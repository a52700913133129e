/*
 * db.h - the SQLite results database: open, create, migrate, recover, read.
 *
 * One file holds every run (schema in sql/schema.sql, documented in
 * shakedown-db(5)).  This module opens it safely for several writers (WAL
 * and a busy timeout; a rollback journal on NFS, Lustre and other network
 * file systems), creates the schema on first use, brings older files
 * forward one version at a time (PRAGMA user_version), marks runs whose
 * writer died as 'aborted', records runs through a result sink
 * (sink_db.c) and builds the one JSON report document per run that
 * `shakedown report --format json` prints and the upload sends.
 * Functions return an sd_status and fill err; they never print.
 */
#ifndef SD_DB_H
#define SD_DB_H

#include <stddef.h>
#include <stdint.h>
#include <sqlite3.h>

#include "sink.h"

/* The schema version this binary creates and understands. */
#define SD_DB_SCHEMA_VERSION 13
/* The version of the JSON report document (its "schema_version"). */
#define SD_DB_REPORT_VERSION 1
/* PRAGMA application_id of a shakedown database ("SDBB"). */
#define SD_DB_APPLICATION_ID 0x53444242
/* A 'running' run whose heartbeat is older than this is aborted. */
#define SD_DB_STALE_S 600
/* Busy timeout unless SHAKEDOWN_DB_BUSY_TIMEOUT_MS says otherwise. */
#define SD_DB_BUSY_TIMEOUT_MS 15000

/* Flags of sd_db_open(). */
enum sd_db_flags {
	SD_DB_CREATE = 1,     /* create the file and schema when missing */
	SD_DB_READONLY = 2,   /* open read only: no migration, no recovery */
	SD_DB_NO_MIGRATE = 4, /* leave an older schema as it is (db info) */
};

/*
 * Open the database at `path` (a file name, not "none").  With flags 0 the
 * file must exist; it is opened read-write, an older schema is migrated to
 * SD_DB_SCHEMA_VERSION and stale 'running' runs are marked 'aborted'.
 * Checks, each giving SD_ERR_IO and one line in err naming the file and
 * the fix: missing file (without SD_DB_CREATE), missing or read-only
 * directory, a directory, not a SQLite file, a SQLite file of another
 * program, a newer schema than this binary knows, a lock held longer than
 * the busy timeout.  Foreign keys are on.  The handle is in serialized
 * mode (safe to share between threads).  Returns SD_OK and *out (close
 * with sd_db_close()).
 */
int sd_db_open(const char *path, int flags, sqlite3 **out, char *err,
	       size_t errlen);

/* Close a handle from sd_db_open() (NULL is fine). */
void sd_db_close(sqlite3 *db);

/*
 * The database path to use: `path_or_null` when given, else
 * $SHAKEDOWN_DB when set and not empty, else "shakedown.db" in the
 * current directory.  The result may be "none" (no recording).  Returns a
 * pointer to the argument, the environment or a constant string.
 */
const char *sd_db_resolve_path(const char *path_or_null);

/* The busy timeout in milliseconds: $SHAKEDOWN_DB_BUSY_TIMEOUT_MS or
 * SD_DB_BUSY_TIMEOUT_MS. */
int sd_db_busy_timeout_ms(void);

/* PRAGMA user_version of an open database; returns SD_OK or SD_ERR_IO. */
int sd_db_schema_version(sqlite3 *db, int *version, char *err,
			 size_t errlen);

/*
 * Bring the schema forward to SD_DB_SCHEMA_VERSION in one transaction.
 * *from and *to (either may be NULL) receive the versions before and
 * after.  Returns SD_OK, or SD_ERR_IO (newer schema, failed step).
 */
int sd_db_migrate(sqlite3 *db, int *from, int *to, char *err,
		  size_t errlen);

/*
 * Mark 'running' runs as 'aborted' when their writer is gone: same host
 * and its process no longer exists, or no heartbeat for SD_DB_STALE_S
 * seconds.  *marked (may be NULL) receives how many.  Must be called
 * inside a write transaction or on its own (it uses plain statements).
 */
int sd_db_mark_stale_runs(sqlite3 *db, int *marked, char *err,
			  size_t errlen);

/*
 * Find a run: `run_ref` is a full UUID, a unique prefix of one, or
 * "latest" (or NULL: the latest).  Returns SD_OK with *run_id and
 * uuid (37 bytes), or SD_ERR_INVALID (no such run, ambiguous prefix) or
 * SD_ERR_IO, with err.
 */
int sd_db_find_run(sqlite3 *db, const char *run_ref, int64_t *run_id,
		   char uuid[37], char *err, size_t errlen);

/*
 * The JSON report of one run (document in shakedown-db(5)): schema_version,
 * run, job, hosts (with their environment), ranks (with devices), tests
 * with their measurements and verdicts, and the run's verdict.  Built with
 * SQLite's JSON functions.  run_ref as for sd_db_find_run().  Returns
 * SD_OK and *json (malloc'd, NUL-terminated, no trailing newline; the
 * caller frees), or an sd_status with err.
 */
int sd_db_report_json(sqlite3 *db, const char *run_ref, char **json,
		      char *err, size_t errlen);

/* Seconds since the epoch as ISO 8601 UTC with milliseconds
 * ("2026-01-31T12:00:00.000Z"). */
void sd_db_iso_time(double t, char out[32]);

/*
 * The name of a network file system for a statfs() f_type ("nfs",
 * "lustre", ...), or NULL for a local one.  SQLite's WAL needs shared
 * memory that these do not provide across hosts.
 */
const char *sd_db_network_fs_name(long f_type);

/*
 * The recording sink (sink_db.c), the one recorder of every kind of run.
 * Resolves the path (sd_db_resolve_path), opens or creates the database
 * with every check of sd_db_open() done before any test runs, replays a
 * journal left there (sd_db_sink_note says so), and fills *out.  For
 * "none" it returns SD_OK with out->ops == NULL: nothing is recorded.
 * `cmdline` is kept as the run's command line when run_begin gives none.
 * Errors: SD_ERR_IO with one line in err (the caller exits 3).
 * run_begin inserts the run as 'running'; each test's rows are committed
 * at its test_end, each batch and each call of train_steps when it comes,
 * a training run's outcome with the run's end; what fails is kept and
 * written with the next write; a thread refreshes runs.heartbeat_at every
 * 10 seconds; run_end may come from any thread.  out->ops->destroy()
 * closes everything.
 */
int sd_db_sink_open(const char *path_or_null, const char *cmdline,
		    struct sd_sink *out, char *err, size_t errlen);

/* Write nothing before run_end, then the whole run in one transaction:
 * in the database entirely or not at all (`shakedown ingest`).  Call
 * before run_begin; a sink of "none" is left as it is. */
void sd_db_sink_set_atomic(const struct sd_sink *s);

/* Why the sink's last event failed (one line; "" when none): what could
 * not be written now and is kept, a step out of order. */
const char *sd_db_sink_error(const struct sd_sink *s);

/* The resolved database path of a sink from sd_db_sink_open() (owned by
 * the sink), for the upload. */
const char *sd_db_sink_path(const struct sd_sink *s);

/*
 * Whether what the run said could not all be written (a lock held past
 * the busy timeout, a full disk, a damaged file; what failed was written
 * again with each later write and at the run's end): 1 with msg naming
 * what is missing, why, where it is kept and what to do, else 0.
 */
int sd_db_sink_incomplete(const struct sd_sink *s, char *msg, size_t len);

/* Write again what could not be written so far (before the run's end,
 * so that the end can say whether the record is whole). */
void sd_db_sink_flush(const struct sd_sink *s);

/* The database's identity (meta.database_uuid, since schema version 13),
 * or "" when it has none (an older file opened without migrating). */
void sd_db_identity(sqlite3 *db, char out[37]);

/*
 * The journal (journal.c): what a run could not write into its database,
 * kept as SQL in a file of its own, named by the database's identity
 * (sd_db_identity) and the run's UUID, beside the database or in $TMPDIR,
 * and replayed into that database, and no other, by its next run or by
 * `shakedown db recover`.  Its first lines are "-- shakedown journal 2"
 * and "-- database UUID".
 */
/* The path of a version 1 journal (DB.pending.sql, no database named). */
void sd_db_journal_path(const char *db_path, char *out, size_t len);
/* The journal's path of run run_uuid of the database db_uuid at db_path:
 * DB.DBUUID.run-RUNUUID.pending.sql beside it (dir NULL), or
 * DIR/NAME.DBUUID.run-RUNUUID.pending.sql. */
void sd_db_journal_name(const char *dir, const char *db_path,
			const char *db_uuid, const char *run_uuid, char *out,
			size_t len);
/* Write the journal at path whole (its header naming db_uuid, then
 * `text`), synced, under a temporary name renamed over path, so that it
 * is never seen in part; it stays locked through *lockfd (closed and
 * replaced; -1 at first) until the caller closes that, and a replay
 * leaves it alone until then.  SD_OK, or SD_ERR_IO with err (path as it
 * was). */
int sd_db_journal_put(const char *path, const char *db_uuid,
		      const char *text, int *lockfd, char *err, size_t errlen);
/* The journal's version (1, 2), or -1 when it cannot be read; out: the
 * database it names ("" for version 1). */
int sd_db_journal_owner(const char *path, char out[37]);
/* Replay the journal at path into db (identity db_uuid, at db_path, for
 * messages), all of it in one transaction, and remove it.  A journal that
 * names another database, or that its run is still writing, is left
 * alone: SD_OK with *skipped and err saying which and why.  Else SD_OK
 * with *statements and *tests (0 when there is no journal; err "" or,
 * when it could not be removed, why); SD_ERR_IO or SD_ERR_INVALID (not a
 * journal, a statement that is not a run's) with err naming the file, the
 * line and the database's words; nothing is written then and the journal
 * stays. */
int sd_db_journal_replay(sqlite3 *db, const char *path, const char *db_uuid,
			 const char *db_path, int *statements, int *tests,
			 int *skipped, char *err, size_t errlen);

/* The journals found for a database: its own (a version 1 DB.pending.sql
 * first, then those named by its identity, beside it and in $TMPDIR) and
 * those of other databases with the same file name (left alone). */
struct sd_db_journals {
	char **own, **other;
	size_t nown, nother;
};
void sd_db_journals_find(const char *db_path, const char *db_uuid,
			 struct sd_db_journals *j);
void sd_db_journals_free(struct sd_db_journals *j);

/* Copy every readable row of the database at `from` (a damaged file)
 * into a new database `into` (which must not exist), table by table, a
 * damaged page ending only its table's copy.  SD_OK with report saying
 * which tables were cut short; else an sd_status with err, and `into`
 * removed. */
int sd_db_salvage(const char *from, const char *into, char *report,
		  size_t replen, char *err, size_t errlen);

/*
 * A note worth printing once on stderr, or NULL: set when the database is
 * on a network file system and a rollback journal is used instead of WAL
 * ("results.db is on nfs: using a rollback journal, not WAL").
 */
const char *sd_db_sink_note(const struct sd_sink *s);

#endif
