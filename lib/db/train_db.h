/*
 * train_db.h - training runs and reference curves in the results
 * database (tables train_runs, train_steps, train_metrics,
 * train_references, train_reference_steps; runs.run_kind 'train' or
 * 'ingest'; documented in shakedown-db(5)).
 *
 * Recording.  The functions sd_train_rec_*() are a typed front on the
 * one recorder of every kind of run (sink_db.c): they hand a training
 * run's beginning, steps, outcome, suspects and end to it as the events
 * of the sink interface (lib/sink.h), so it keeps, writes again and
 * journals them as it does a collective run's tests:
 *  - Nothing is reported as recorded that is not: every write is one
 *    transaction (BEGIN IMMEDIATE ... COMMIT) that lands whole or not at
 *    all, and sd_train_rec_incomplete() says afterwards whether the
 *    record in the database is whole.
 *  - Nothing is lost: the recorder keeps every row it was given until
 *    its transaction has committed.  A write that fails (a lock held
 *    past the busy timeout, which SQLite's busy handler waits out as for
 *    every other write of shakedown, SHAKEDOWN_DB_BUSY_TIMEOUT_MS; a full
 *    disk; a damaged page) is made again with the next write and at the
 *    end; what still fails at the end is appended to the database's
 *    journal (DB.pending.sql, else $TMPDIR/NAME.runN.pending.sql) as the
 *    statements the database would have run, which the next run into the
 *    database or `shakedown db recover` replays (db.h).
 *  - Incremental mode (`shakedown train`): the run's row is written at
 *    begin with status 'running', each sd_train_rec_steps() writes the
 *    new steps in one transaction and refreshes runs.heartbeat_at, as the
 *    recorder's thread does every 10 seconds (hand steps over in batches
 *    on a fast loop, every few seconds), and
 *    sd_train_rec_finish() writes the metrics, the verdict and the run's
 *    end.  A crash loses at most the steps since the last call, and the
 *    run is then marked 'aborted'.  Rows written are no longer kept, so
 *    memory holds only what is waiting.
 *  - Atomic mode (SD_TRAIN_REC_ATOMIC, `shakedown ingest`): nothing is
 *    written before sd_train_rec_finish(), which writes the whole run in
 *    one transaction: it is in the database entirely or not at all.
 * Step rows and metric rows hold exactly the doubles given (bound, not
 * printed); only a journal holds reals as text, to 15 significant digits
 * (sqlite3_expanded_sql).
 *
 * A recorder is not thread-safe: one thread at a time (the caller's lock
 * when the end may come from another thread).
 *
 * References are stored, read, listed, deleted and exported here, each
 * in one transaction.  Functions return an sd_status and fill err with
 * one line; they never print.
 */
#ifndef SD_DB_TRAIN_DB_H
#define SD_DB_TRAIN_DB_H

#include <stddef.h>
#include <stdint.h>
#include <sqlite3.h>

#include "sink.h"
#include "train/metrics.h"
#include "train/reference.h"

/* What a training run is, at its beginning. */
struct sd_train_run_info {
	const char *uuid;            /* NULL or "": a new random one */
	const char *kind;            /* "train" or "ingest" */
	double started_at;           /* seconds since the epoch; 0: now */
	const char *command_line;
	const char *tool_version;
	const char *backend;         /* "gloo", "nccl"; NULL for a log */
	const char *backend_version;
	const char *user;
	int nranks;                  /* ranks of the run (0 for a log) */
	const struct sd_job_info *job;     /* NULL: none */
	const struct sd_rank_info *ranks;  /* nranks entries, or NULL */
	const char *config;          /* the workload's identity (required) */
	const char *log_path;        /* ingest: the log; NULL otherwise */
	const char *log_format;      /* ingest: megatron, deepspeed, hf, ... */
	const struct sd_train_facts *facts; /* required */
};

/* What a training run ended with. */
struct sd_train_end {
	const char *status;          /* runs.status: passed, failed, error,
					cancelled (anything else: error) */
	int exit_status;
	const char *message;         /* why it did not pass; may be NULL */
	double finished_at;          /* 0: now */
	const struct sd_train_summary *summary; /* NULL: no metrics */
	const struct sd_train_comparison *cmp;  /* NULL: not judged */
	const char *reference_name;  /* the reference of cmp */
	long lines_unparsed;         /* ingest: lines that did not parse;
					-1: not a log */
	const struct sd_train_metric *extra; /* more rows (per rank or
						host), or NULL */
	size_t nextra;
	/* rows of suspects (a slow rank's node), so that `report
	 * --bad-nodes` names them as for any run; copied */
	const struct sd_suspect_info *suspects;
	size_t nsuspects;
};

/* Flags of sd_train_rec_open(). */
enum { SD_TRAIN_REC_ATOMIC = 1 };

struct sd_train_rec;

/*
 * Open a recorder on the database at db_path_or_null (resolved by
 * sd_db_resolve_path(); created when missing, an older schema migrated;
 * every check of sd_db_open()), replaying a journal left there first
 * (`note`, may be NULL, says so, or that the database is on a network
 * file system).  For "none" the recorder records nothing and every call
 * succeeds.  Returns SD_OK and *out (close with sd_train_rec_close()),
 * or SD_ERR_IO / SD_ERR_NOMEM with err.
 */
int sd_train_rec_open(const char *db_path_or_null, int flags,
		      struct sd_train_rec **out, char *note, size_t notelen,
		      char *err, size_t errlen);

/*
 * Begin the run: its runs row (status 'running', run_kind from info), its
 * job and ranks, and its train_runs row with the facts.  Everything is
 * copied.  Returns SD_OK; SD_ERR_INVALID (no config or facts, a kind
 * other than train or ingest, begun twice); SD_ERR_IO when it could not
 * be written now (it is kept and written with the next write; err says
 * why); SD_ERR_NOMEM.
 */
int sd_train_rec_begin(struct sd_train_rec *r,
		       const struct sd_train_run_info *info, char *err,
		       size_t errlen);

/* The run's UUID (after begin; "" before). */
const char *sd_train_rec_uuid(const struct sd_train_rec *r);

/* The database path ("none" when nothing is recorded). */
const char *sd_train_rec_path(const struct sd_train_rec *r);

/*
 * Add n step rows of the job (rank -1) or of ranks, in step order per
 * rank, each marked timed as sd_train_step_timed() marks it in its rank's
 * series with the run's warm-up.  Incremental mode writes them now with
 * the heartbeat.  Returns SD_OK; SD_ERR_INVALID (before begin, after
 * finish, steps out of order: nothing is added); SD_ERR_IO when they
 * could not be written now (they are kept; err says why); SD_ERR_NOMEM.
 */
int sd_train_rec_steps(struct sd_train_rec *r, const struct sd_train_step *s,
		       size_t n, char *err, size_t errlen);

/*
 * End the run: the facts as used (flops per token, the peak), the
 * metric rows of end->summary and end->cmp (sd_train_metric_rows()) and
 * end->extra, the verdict (train_runs.verdict: cmp's, NULL when not
 * judged) and the runs row's end.  Writes everything still unwritten in
 * one transaction; what fails goes to the journal.  Returns SD_OK when
 * all of it is in the database; SD_ERR_IO when some is only in the
 * journal or lost (err as sd_train_rec_incomplete()); SD_ERR_INVALID
 * (before begin, twice).
 */
int sd_train_rec_finish(struct sd_train_rec *r, const struct sd_train_end *end,
			char *err, size_t errlen);

/*
 * Whether the record in the database is incomplete: 1 with msg saying
 * what is missing, why, where it was kept and what to run ("shakedown db
 * recover"), else 0.  Call after finish.
 */
int sd_train_rec_incomplete(const struct sd_train_rec *r, char *msg,
			    size_t len);

/* Close the recorder (NULL is fine).  A run begun and not finished is
 * left 'running' (the next writer marks it aborted). */
void sd_train_rec_close(struct sd_train_rec *r);

/*
 * Read the job's step rows of training run `run_ref` (as for
 * sd_db_find_run()) into *steps (malloc'd, *n rows, step order; the
 * caller frees), with its config (*config malloc'd; may be NULL to skip)
 * and uuid (37 bytes; may be NULL).  A loss stored as not finite
 * (loss_nonfinite) comes back as NaN or infinite.  Returns SD_OK;
 * SD_ERR_INVALID (no such run, not a training run); SD_ERR_IO;
 * SD_ERR_NOMEM.
 */
int sd_train_db_load_steps(sqlite3 *db, const char *run_ref,
			   struct sd_train_step **steps, size_t *n,
			   char **config, char uuid[37], char *err,
			   size_t errlen);

/* tgs, TFLOPs and MFU recomputed from the stored rows of a run. */
struct sd_train_recomputed {
	char uuid[37];
	long timed_rows;     /* job rows with timed = 1 */
	long timed_steps;    /* sum of their span_steps */
	double timed_tokens; /* sum(coalesce(tokens, tokens_per_step) x span) */
	double timed_s;      /* sum(step_s x span) */
	double tgs;          /* timed_tokens / timed_s / devices; NaN when a
				row has no tokens or devices is unknown */
	double tflops;       /* flops_per_token x tgs / 1e12 */
	double mfu;          /* tflops / peak_tflops */
	double recorded_tgs, recorded_tflops, recorded_mfu; /* the metric
				rows; NaN when absent */
};

/*
 * Recompute tgs, TFLOPs and MFU of run `run_ref` with SQL over its
 * train_steps and train_runs rows alone (not the code that printed the
 * summary), and read the recorded metric rows beside them, so that a
 * test can check the two agree.  Returns SD_OK and *out, SD_ERR_INVALID
 * (no such run, not a training run) or SD_ERR_IO.
 */
int sd_train_db_recompute(sqlite3 *db, const char *run_ref,
			  struct sd_train_recomputed *out, char *err,
			  size_t errlen);

/*
 * The training part of run `run_id` (runs.id) as one JSON object, for
 * `shakedown report`: kind, config, log, facts (each {value, origin}),
 * device, peak, reference, tolerances, verdict {result, reason}, metrics
 * (name, unit, value, host, rank) and steps (the job's: step, span_steps,
 * loss, loss_nonfinite, step_s, tokens, compute_s, comm_s, optim_s, timed;
 * a NaN or infinite loss as null with loss_nonfinite "nan", "inf" or
 * "-inf").  SD_OK and *json (malloc'd; the caller
 * frees), or *json NULL when the run is not a training run; SD_ERR_IO or
 * SD_ERR_NOMEM with err.
 */
int sd_train_db_run_json(sqlite3 *db, int64_t run_id, char **json, char *err,
			 size_t errlen);

/*
 * Store reference `ref` (its name, config, description, source,
 * created_at and steps) in one transaction.  An existing reference of
 * that name is refused unless `replace` (then it is replaced whole; runs
 * judged against the old one keep its name and lose the link).  Returns
 * SD_OK; SD_ERR_INVALID (bad name, no config, no steps, the name exists:
 * err says to delete it or pick another); SD_ERR_IO.
 */
int sd_train_db_ref_store(sqlite3 *db, const struct sd_train_reference *ref,
			  int replace, char *err, size_t errlen);

/* Read reference `name` into *out (free with sd_train_ref_free(), also
 * after a failure).  SD_OK; SD_ERR_INVALID (no such reference: err names
 * `shakedown reference list`); SD_ERR_IO; SD_ERR_NOMEM. */
int sd_train_db_ref_load(sqlite3 *db, const char *name,
			 struct sd_train_reference *out, char *err,
			 size_t errlen);

/* Delete reference `name` and its steps, in one transaction.  SD_OK,
 * SD_ERR_INVALID (no such reference) or SD_ERR_IO. */
int sd_train_db_ref_delete(sqlite3 *db, const char *name, char *err,
			   size_t errlen);

/* Write reference `name` to the file at `path` (sd_train_ref_save()).
 * As sd_train_db_ref_load(), and SD_ERR_IO when the file fails. */
int sd_train_db_ref_export(sqlite3 *db, const char *name, const char *path,
			   char *err, size_t errlen);

/*
 * Make reference `name` from the job series of nruns recorded training
 * runs (UUIDs, prefixes, "latest"), which must share one config, and
 * store it (as sd_train_db_ref_store(), `replace` likewise).  Its source
 * is "runs UUID, ...".  `note` (may be NULL) says when the runs differ in
 * their steps.  Returns as sd_train_ref_create() and
 * sd_train_db_ref_store(); SD_ERR_INVALID also for runs of different
 * configs (naming both).
 */
int sd_train_db_ref_from_runs(sqlite3 *db, const char *name,
			      const char *description,
			      const char *const *run_refs, size_t nruns,
			      int replace, char *note, size_t notelen,
			      char *err, size_t errlen);

/*
 * The queries of `shakedown reference list` and `show` (for
 * sd_db_print_query()): every reference with its number of steps, newest
 * first (no parameters); the steps of one (?1 = the name).
 */
extern const char sd_train_db_ref_list_sql[];
extern const char sd_train_db_ref_steps_sql[];

#endif
