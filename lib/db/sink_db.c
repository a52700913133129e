/*
 * sink_db.c - the one recorder: every kind of run into the results
 * database (collectives of `run`, `gemm`, the training runs of `train`
 * and `ingest`).
 *
 * Rank 0 opens it before any work (sd_db_sink_open in db.h), so a bad
 * database stops the run before it costs anything.  Everything a run says
 * is kept until it is in the database: its beginning (the runs row with
 * its job, ranks, host environments and, for a training run, its
 * train_runs row), each test with its measurements, each batch of rows
 * (verdicts, suspects, gemm results, training steps), a training run's
 * outcome and the run's end.  A write puts everything kept into the
 * database in one short transaction (BEGIN IMMEDIATE ... COMMIT), in the
 * order it was said, and then no longer keeps it; a write that fails (a
 * lock held past the busy timeout, a full disk, a damaged page) keeps it
 * all for the next write.  So a write lock is never held while a test or
 * a step runs (several jobs may share the file), a crash loses at most
 * what was said since the last write, and what still cannot be written
 * at the run's end is appended to the journal (DB.pending.sql, else a
 * file in $TMPDIR) as the very statements the database would have run,
 * built by the same code on an in-memory copy of the schema; the next
 * run into the database or `shakedown db recover` replays it.  Rows find
 * their run by its UUID, never by runs.id, so that a journal lands
 * whether or not the run's own row made it in before.
 *
 * Incremental mode (the default): the beginning is written at run_begin,
 * each test at its test_end, each batch when it comes; a thread refreshes
 * runs.heartbeat_at every SD_DB_HEARTBEAT_S seconds so that the next
 * process to open the file can tell a dead run (sd_db_open marks it
 * 'aborted').  Atomic mode (sd_db_sink_set_atomic, `shakedown ingest`):
 * nothing is written before run_end, which writes the whole run in one
 * transaction: it is in the database entirely or not at all.
 *
 * run_end may arrive from the watchdog thread or a signal path while the
 * main thread is in another callback: one mutex guards everything, and
 * events after run_end are ignored.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "db/db.h"
#include "db/db_internal.h"
#include "names.h"
#include "train/metrics.h"
#include "util.h"

#define SD_DB_HEARTBEAT_S 10
/* The longest a write before the run's end waits for another process's
 * lock (flush). */
#define SD_DB_MIDRUN_WAIT_MS 1000

/* Every row names its run by UUID (?1). */
#define RUN_BY_UUID "(SELECT id FROM runs WHERE uuid = ?1)"

struct meas {
	struct sd_measurement m;
	char algo[64];
};

/* A test as kept until it is written. */
struct ktest {
	struct sd_test_info test;
	char name[64], scope[128], algo[64], members[64], variant[64];
	char pairing[16];
	char started_at[32], status[16];
	char *message;
	struct meas *meas;
	size_t nmeas, capmeas;
};

/* fill(st, uuid, rows, i) binds row i of a batch. */
typedef void (*fill_fn)(sqlite3_stmt *st, const char *uuid, const void *rows,
			size_t i);

/* A batch of rows as kept: a deep copy of what was given. */
struct pbatch {
	const char *sql;
	fill_fn fill;
	size_t n, size;
	void *rows;
	char **strs;
	size_t nstrs;
	int steps;   /* training steps (said as steps, not as a batch) */
};

/* The run's beginning as kept: a deep copy of sd_run_info. */
struct kbegin {
	char started[32];
	char *command_line, *plan_text, *plan_hash, *tool_version, *backend;
	char *backend_version, *user, *run_kind;
	int nranks, has_job, nhosts;
	struct sd_job_info job;
	struct sd_rank_info *ranks;
	struct sd_host_env *hosts;
	int train;
	char *config, *log_path, *log_format;
	struct sd_train_facts facts;
};

/* A step as kept: the row, the steps it stands for (-1: the first of its
 * rank's series) and whether it is timed. */
struct kstep {
	struct sd_train_step s;
	long span;
	int timed;
};

/* The series of one rank (-1: the job's), to mark steps timed. */
struct rank_state {
	int rank;
	struct sd_train_step first, prev;
};

struct kmetric {
	char name[64], unit[32], host[64];
	int has_host, rank;
	double value;
};

/* A training run's outcome as kept. */
struct ktrain {
	int have_summary, have_cmp;
	struct sd_train_summary summary;
	struct sd_train_comparison cmp;
	char *reference_name;
	long lines_unparsed;
	struct kmetric *metrics;
	size_t nmetrics;
};

/* The run's end as kept. */
struct kend {
	const char *status;      /* one of run_status()'s */
	int exit_status;
	char *message;
	char finished[32];
};

struct db_sink {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	sqlite3 *db;
	char *path;
	char *cmdline;
	char note[512];
	int atomic;              /* write nothing before run_end */
	char hostname[256];
	/* the run */
	int begun, ended, train;
	char uuid[37];
	int64_t run_id;          /* runs.id once its row is in; else 0 */
	/* what is said and not written yet, in the order written */
	struct kbegin *begin;
	struct ktest cur;        /* the test in progress */
	int test_open;
	struct ktest *tests;
	size_t ntests, captests;
	struct pbatch *pb;
	size_t npb, cappb;
	struct ktrain *tend;
	struct kend *end;
	/* a training run's series, to check order and mark timed steps */
	struct rank_state *rs;
	size_t nrs;
	double warmup;
	/* what could not even be kept (out of memory) */
	int lost_begin;
	long lost_tests, lost_batches, lost_steps;
	/* why writing failed: the database's words, once */
	char lost_why[256];
	int lost_code;           /* SQLite's primary code for lost_why */
	int missed;              /* the last write failed: the next ones
				    before the end try without waiting on
				    the lock (a wait for every test made a
				    held lock cost busy_timeout each) */
	/* where what was not written is kept (named by the database's
	 * identity and the run); jn_done: all of what is kept now is in it;
	 * jn_final: written at the end (nothing is written after); jfd holds
	 * its lock while the run may still write it */
	char dbid[37];
	char journal[4200];
	char jn_why[256];
	int jn_done, jn_final;
	int jfd;
	char err[640];           /* why the last event failed */
	/* heartbeat thread */
	pthread_t hb;
	int hb_started, hb_stop;
};

/* Where statements go: stepped on db, or their text (values written
 * out) appended to out. */
struct emit {
	sqlite3 *db;
	sqlite3_str *out;
};

static const char ins_run_sql[] =
	"INSERT INTO runs (uuid, started_at, heartbeat_at, status, "
	" command_line, plan_text, plan_hash, tool_version, backend, "
	" backend_version, user, hostname, pid, nranks, run_kind) "
	"VALUES (?1, ?2, ?3, 'running', ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, "
	" ?12, ?13, ?14)";

static const char ins_job_sql[] =
	"INSERT INTO jobs (run_id, launcher, cluster, job_id, step_id, "
	" nodelist, nnodes, tasks_per_node) "
	"VALUES (" RUN_BY_UUID ", ?2, ?3, ?4, ?5, ?6, ?7, ?8)";

static const char ins_rank_sql[] =
	"INSERT INTO ranks (run_id, rank, host, local_rank, pid, device_name, "
	" pci_bus_id, device_uuid, mem_total_bytes, mem_free_bytes, "
	" transport) "
	"VALUES (" RUN_BY_UUID ", ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)";

/* Keep the row even when a host sent something that is not JSON: wrap
 * it. */
static const char ins_host_env_sql[] =
	"INSERT OR REPLACE INTO host_env (run_id, host, env_json) "
	"VALUES (" RUN_BY_UUID ", ?2, iif(json_valid(?3), json(?3), "
	" json_object('unparsed', ?3)))";

static const char ins_train_run_sql[] =
	"INSERT INTO train_runs (run_id, config, log_path, log_format, "
	" device_name, devices, seq_len, tokens_per_step, params, layers, "
	" width, flops_per_token, warmup_steps, precision, peak_tflops, "
	" fact_origins) "
	"VALUES (" RUN_BY_UUID ", ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, "
	" ?12, ?13, ?14, ?15, json(?16))";

static const char ins_test_sql[] =
	"INSERT INTO tests (run_id, test_index, name, op, dtype, redop, root, "
	" scope, algo, nranks, status, message, started_at, finished_at, "
	" members, plan_test, attempt, variant, round, pairing, seed) "
	"VALUES (" RUN_BY_UUID ", ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, "
	" ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21)";

/* A measurement finds its test by run and index (?1, ?28). */
static const char ins_meas_sql[] =
	"INSERT INTO measurements (test_id, size_bytes, count, in_place, "
	" iters, warmup_iters, time_us, time_us_min, time_us_avg, "
	" time_us_max, iter_us_min, iter_us_p50, iter_us_p99, iter_us_max, "
	" algbw_gbs, busbw_gbs, ds_size_bytes, ds_description, "
	" ds_throughput_gbps, ds_busbw_gbps, checked, wrong, "
	" first_wrong_rank, first_wrong_index, first_wrong_expected, "
	" first_wrong_got, algo) "
	"VALUES ((SELECT id FROM tests WHERE run_id = " RUN_BY_UUID " AND "
	" test_index = ?28), ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, "
	" ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25, "
	" ?26, ?27)";

static const char ins_step_sql[] =
	"INSERT INTO train_steps (run_id, step, rank, span_steps, loss, "
	" loss_nonfinite, step_s, tokens, compute_s, comm_s, optim_s, timed) "
	"VALUES (" RUN_BY_UUID ", ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, "
	" ?12)";

static const char upd_train_run_sql[] =
	"UPDATE train_runs SET flops_per_token = ?2, peak_tflops = ?3, "
	" peak_part = ?4, fact_origins = json_patch(fact_origins, ?5), "
	" reference_name = ?6, reference_id = (SELECT id FROM "
	" train_references WHERE name = ?6), rel_tol = ?7, abs_tol = ?8, "
	" var_tol = ?9, verdict = ?10, verdict_reason = ?11, "
	" nonfinite_step = ?12, lines_unparsed = ?13 "
	"WHERE run_id = " RUN_BY_UUID;

static const char ins_metric_sql[] =
	"INSERT INTO train_metrics (run_id, name, unit, value, host, rank) "
	"VALUES (" RUN_BY_UUID ", ?2, ?3, ?4, ?5, ?6)";

static const char run_end_sql[] =
	"UPDATE runs SET status = ?2, exit_status = ?3, message = ?4, "
	" finished_at = ?5, heartbeat_at = ?6 WHERE uuid = ?1";

static const char heartbeat_sql[] =
	"UPDATE runs SET heartbeat_at = ?2 WHERE uuid = ?1 "
	"AND status = 'running'";

static void now_iso(char out[32])
{
	sd_db_iso_time(sd_wall_now(), out);
}

/* A real for a NOT NULL column. */
static void bind_real0(sqlite3_stmt *st, int i, double v)
{
	sqlite3_bind_double(st, i, isfinite(v) ? v : 0.0);
}

/* Bind a known fact: as an integer when `whole`, else a real. */
static void bind_fact(sqlite3_stmt *st, int i, const struct sd_train_fact *f,
		      int whole)
{
	if (f->origin == SD_TRAIN_UNKNOWN || !isfinite(f->value))
		sqlite3_bind_null(st, i);
	else if (whole)
		sqlite3_bind_int64(st, i, (sqlite3_int64)llround(f->value));
	else
		sqlite3_bind_double(st, i, f->value);
}

/* The database's words for the last failure, kept once. */
static void note_loss(struct db_sink *s)
{
	if (!s->lost_why[0]) {
		snprintf(s->lost_why, sizeof(s->lost_why), "%s",
			 sqlite3_errmsg(s->db));
		s->lost_code = sqlite3_errcode(s->db) & 0xff;
	}
}

/* Run or record one bound statement, then reset it.  SD_OK or
 * SD_ERR_IO. */
static int emit(struct emit *em, sqlite3_stmt *st)
{
	int rc = SD_OK;
	if (em->out) {
		char *sql = sqlite3_expanded_sql(st);
		if (sql)
			sqlite3_str_appendf(em->out, "%s;\n", sql);
		else
			rc = SD_ERR_IO;
		sqlite3_free(sql);
	} else if (sqlite3_step(st) != SQLITE_DONE) {
		rc = SD_ERR_IO;
	}
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return rc;
}

static int prepare(struct emit *em, const char *sql, sqlite3_stmt **st)
{
	*st = NULL;
	return sqlite3_prepare_v2(em->db, sql, -1, st, NULL) == SQLITE_OK
		       ? SD_OK : SD_ERR_IO;
}

static int exec(sqlite3 *db, const char *sql)
{
	return sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK ? SD_OK
								    : SD_ERR_IO;
}

/* ---- the rows, bound by one set of functions for the database and the
 * journal alike ---- */

/* The origins of the known facts as a JSON object. */
static int origins_json(const struct sd_train_facts *f, struct sd_buf *b)
{
	int n = 0, bad = sd_buf_printf(b, "{");
	for (size_t i = 0; i < SD_TRAIN_NFACTS && !bad; i++) {
		const struct sd_train_fact *x = sd_train_fact_get(f, i);
		if (x->origin == SD_TRAIN_UNKNOWN)
			continue;
		bad = sd_buf_printf(b, "%s\"%s\":\"%s\"", n++ ? "," : "",
				    sd_train_fact_fields[i].name,
				    sd_train_origin_name(x->origin));
	}
	enum sd_train_origin dno = f->device_name_origin;
	if (!bad && f->device_name[0] && dno != SD_TRAIN_UNKNOWN)
		bad = sd_buf_printf(b, "%s\"device_name\":\"%s\"",
				    n ? "," : "", sd_train_origin_name(dno));
	return bad || sd_buf_printf(b, "}");
}

static int write_run_row(struct emit *em, const struct db_sink *s,
			 const struct kbegin *b)
{
	sqlite3_stmt *st;
	char now[32];
	now_iso(now);
	if (prepare(em, ins_run_sql, &st) != SD_OK)
		return SD_ERR_IO;
	sd_db_bind_str(st, 1, s->uuid);
	sd_db_bind_str(st, 2, b->started);
	sd_db_bind_str(st, 3, now);
	sd_db_bind_str(st, 4, b->command_line);
	sd_db_bind_str(st, 5, b->plan_text);
	sd_db_bind_str(st, 6, b->plan_hash);
	sd_db_bind_str(st, 7, b->tool_version);
	sd_db_bind_str(st, 8, b->backend);
	sd_db_bind_str(st, 9, b->backend_version);
	sd_db_bind_str(st, 10, b->user);
	sd_db_bind_str(st, 11, s->hostname);
	sqlite3_bind_int(st, 12, (int)getpid());
	sqlite3_bind_int(st, 13, b->nranks);
	sd_db_bind_str(st, 14, b->run_kind ? b->run_kind : "collectives");
	int rc = emit(em, st);
	sqlite3_finalize(st);
	if (rc != SD_OK || !b->has_job)
		return rc;
	const struct sd_job_info *j = &b->job;
	if (prepare(em, ins_job_sql, &st) != SD_OK)
		return SD_ERR_IO;
	sd_db_bind_str(st, 1, s->uuid);
	sd_db_bind_str(st, 2, j->launcher);
	sd_db_bind_str(st, 3, j->cluster);
	sd_db_bind_str(st, 4, j->job_id);
	sd_db_bind_str(st, 5, j->step_id);
	sd_db_bind_str(st, 6, j->nodelist);
	sqlite3_bind_int(st, 7, j->nnodes);
	sqlite3_bind_int(st, 8, j->tasks_per_node);
	rc = emit(em, st);
	sqlite3_finalize(st);
	return rc;
}

static int write_ranks(struct emit *em, const struct db_sink *s,
		       const struct kbegin *b)
{
	sqlite3_stmt *st;
	int rc = SD_OK;
	if (!b->ranks || b->nranks <= 0)
		return SD_OK;
	if (prepare(em, ins_rank_sql, &st) != SD_OK)
		return SD_ERR_IO;
	for (int i = 0; i < b->nranks && rc == SD_OK; i++) {
		const struct sd_rank_info *r = &b->ranks[i];
		const struct sd_device_info *d = &r->dev;
		sd_db_bind_str(st, 1, s->uuid);
		sqlite3_bind_int(st, 2, r->rank);
		sqlite3_bind_text(st, 3, r->host, -1, SQLITE_TRANSIENT);
		sqlite3_bind_int(st, 4, r->local_rank);
		sqlite3_bind_int(st, 5, r->pid);
		sd_db_bind_str(st, 6, d->name);
		sd_db_bind_str(st, 7, d->pci_bus_id);
		sd_db_bind_str(st, 8, d->uuid);
		sqlite3_bind_int64(st, 9, (sqlite3_int64)d->mem_total_bytes);
		sqlite3_bind_int64(st, 10, (sqlite3_int64)d->mem_free_bytes);
		sd_db_bind_str(st, 11, d->transport);
		rc = emit(em, st);
	}
	sqlite3_finalize(st);
	if (rc != SD_OK || !b->hosts || b->nhosts <= 0)
		return rc;
	if (prepare(em, ins_host_env_sql, &st) != SD_OK)
		return SD_ERR_IO;
	for (int i = 0; i < b->nhosts && rc == SD_OK; i++) {
		sd_db_bind_str(st, 1, s->uuid);
		sqlite3_bind_text(st, 2, b->hosts[i].host, -1,
				  SQLITE_TRANSIENT);
		sd_db_bind_str(st, 3, b->hosts[i].json ? b->hosts[i].json
						       : "{}");
		rc = emit(em, st);
	}
	sqlite3_finalize(st);
	return rc;
}

static int write_train_run(struct emit *em, const struct db_sink *s,
			   const struct kbegin *b)
{
	sqlite3_stmt *st = NULL;
	struct sd_buf ob = { 0 };
	const struct sd_train_facts *f = &b->facts;
	int rc = SD_ERR_IO;
	if (!b->train)
		return SD_OK;
	if (origins_json(f, &ob) || prepare(em, ins_train_run_sql, &st))
		goto out;
	sd_db_bind_str(st, 1, s->uuid);
	sd_db_bind_str(st, 2, b->config);
	sd_db_bind_str(st, 3, b->log_path);
	sd_db_bind_str(st, 4, b->log_format);
	sd_db_bind_str(st, 5, f->device_name);
	bind_fact(st, 6, &f->devices, 1);
	bind_fact(st, 7, &f->seq_len, 1);
	bind_fact(st, 8, &f->tokens_per_step, 0);
	bind_fact(st, 9, &f->params, 0);
	bind_fact(st, 10, &f->layers, 1);
	bind_fact(st, 11, &f->width, 1);
	bind_fact(st, 12, &f->flops_per_token, 0);
	bind_fact(st, 13, &f->warmup_steps, 1);
	sd_db_bind_str(st, 14, sd_train_precision_name(f->precision));
	bind_fact(st, 15, &f->peak_tflops, 0);
	sd_db_bind_str(st, 16, ob.data);
	rc = emit(em, st);
out:
	sd_buf_free(&ob);
	sqlite3_finalize(st);
	return rc;
}

static int write_begin(struct emit *em, const struct db_sink *s)
{
	const struct kbegin *b = s->begin;
	if (!b)
		return SD_OK;
	if (write_run_row(em, s, b) != SD_OK || write_ranks(em, s, b) != SD_OK)
		return SD_ERR_IO;
	return write_train_run(em, s, b);
}

/* status when it is one of the n values the schema allows, else "error". */
static const char *allowed_status(const char *status,
				  const char *const *allowed, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (status && strcmp(status, allowed[i]) == 0)
			return allowed[i];
	return "error";
}

static const char *test_status(const char *status)
{
	static const char *const ok[] = { "passed", "failed", "error",
					  "skipped", "cancelled" };
	return allowed_status(status, ok, sizeof(ok) / sizeof(ok[0]));
}

/* tests.pairing: one of the words its CHECK takes, or NULL (none, or a
 * word it does not take: the test is kept all the same). */
static const char *test_pairing(const char *pairing)
{
	static const char *const ok[] = { "disjoint", "random", "re-pair",
					  "fill", "retry" };
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		if (strcmp(pairing, ok[i]) == 0)
			return ok[i];
	return NULL;
}

static const char *run_status(const char *status)
{
	static const char *const ok[] = { "passed", "failed", "error",
					  "cancelled", "aborted" };
	return allowed_status(status, ok, sizeof(ok) / sizeof(ok[0]));
}

/* Bind a kept test's row (ins_test_sql). */
static void bind_test(sqlite3_stmt *st, const char *uuid,
		      const struct ktest *k, const char *now)
{
	const struct sd_test_info *t = &k->test;
	const char *message = k->message;
	sd_db_bind_str(st, 1, uuid);
	sqlite3_bind_int(st, 2, t->index);
	sd_db_bind_str(st, 3, k->name);
	sd_db_bind_str(st, 4, sd_op_name(t->op));
	sd_db_bind_str(st, 5, sd_dtype_name(t->dtype));
	if (t->has_redop)
		sd_db_bind_str(st, 6, sd_redop_name(t->redop));
	if (t->root >= 0)
		sqlite3_bind_int(st, 7, t->root);
	sd_db_bind_str(st, 8, k->scope[0] ? k->scope : "world");
	sd_db_bind_str(st, 9, k->algo);
	sqlite3_bind_int(st, 10, t->nranks);
	const char *known = test_status(k->status);
	sd_db_bind_str(st, 11, known);
	if (strcmp(known, k->status) != 0 && !message)
		message = k->status; /* keep what the runner said */
	sd_db_bind_str(st, 12, message);
	sd_db_bind_str(st, 13, k->started_at);
	sd_db_bind_str(st, 14, now);
	sd_db_bind_str(st, 15, k->members[0] ? k->members : NULL);
	sqlite3_bind_int(st, 16, sd_test_number(t));
	sqlite3_bind_int(st, 17, t->attempt > 0 ? t->attempt : 1);
	sd_db_bind_str(st, 18, k->variant[0] ? k->variant : NULL);
	if (t->round > 0)
		sqlite3_bind_int(st, 19, t->round);
	sd_db_bind_str(st, 20, test_pairing(k->pairing));
	if (t->has_seed) {
		char seed[24];
		snprintf(seed, sizeof(seed), "0x%016llx", t->seed);
		sd_db_bind_str(st, 21, seed);
	}
}

/* Bind a measurement's row (ins_meas_sql) of the test with index `index`. */
static void bind_meas(sqlite3_stmt *st, const char *uuid, int index,
		      const struct sd_measurement *m)
{
	sd_db_bind_str(st, 1, uuid);
	sqlite3_bind_int(st, 28, index);
	sqlite3_bind_int64(st, 2, (sqlite3_int64)m->size_bytes);
	sqlite3_bind_int64(st, 3, (sqlite3_int64)m->count);
	sqlite3_bind_int(st, 4, m->in_place ? 1 : 0);
	sqlite3_bind_int(st, 5, m->iters);
	sqlite3_bind_int(st, 6, m->warmup_iters);
	bind_real0(st, 7, m->time_us);
	sd_db_bind_real(st, 8, m->time_us_min);
	sd_db_bind_real(st, 9, m->time_us_avg);
	sd_db_bind_real(st, 10, m->time_us_max);
	if (m->have_percentiles) {
		sd_db_bind_real(st, 11, m->iter_us_min);
		sd_db_bind_real(st, 12, m->iter_us_p50);
		sd_db_bind_real(st, 13, m->iter_us_p99);
		sd_db_bind_real(st, 14, m->iter_us_max);
	}
	bind_real0(st, 15, m->algbw_gbs);
	bind_real0(st, 16, m->busbw_gbs);
	sqlite3_bind_int64(st, 17, (sqlite3_int64)m->ds_size_bytes);
	sd_db_bind_str(st, 18, m->ds_description);
	sd_db_bind_real(st, 19, m->ds_throughput_gbps);
	sd_db_bind_real(st, 20, m->ds_busbw_gbps);
	sqlite3_bind_int(st, 21, m->checked ? 1 : 0);
	sqlite3_bind_int64(st, 22, (sqlite3_int64)m->wrong);
	if (m->wrong > 0 && m->first_wrong_rank >= 0) {
		sqlite3_bind_int(st, 23, m->first_wrong_rank);
		sqlite3_bind_int64(st, 24, (sqlite3_int64)m->first_wrong.index);
		sd_db_bind_str(st, 25, m->first_wrong.expected);
		sd_db_bind_str(st, 26, m->first_wrong.got);
	}
	sd_db_bind_str(st, 27, m->algo);
}

static int write_tests(struct emit *em, const struct db_sink *s,
		       const char *now)
{
	sqlite3_stmt *t, *m;
	int rc = SD_OK;
	if (!s->ntests)
		return SD_OK;
	if (prepare(em, ins_test_sql, &t) != SD_OK)
		return SD_ERR_IO;
	if (prepare(em, ins_meas_sql, &m) != SD_OK) {
		sqlite3_finalize(t);
		return SD_ERR_IO;
	}
	for (size_t i = 0; i < s->ntests && rc == SD_OK; i++) {
		const struct ktest *k = &s->tests[i];
		bind_test(t, s->uuid, k, now);
		rc = emit(em, t);
		for (size_t j = 0; j < k->nmeas && rc == SD_OK; j++) {
			bind_meas(m, s->uuid, k->test.index, &k->meas[j].m);
			rc = emit(em, m);
		}
	}
	sqlite3_finalize(t);
	sqlite3_finalize(m);
	return rc;
}

static int write_batches(struct emit *em, const struct db_sink *s)
{
	int rc = SD_OK;
	for (size_t i = 0; i < s->npb && rc == SD_OK; i++) {
		const struct pbatch *b = &s->pb[i];
		sqlite3_stmt *st;
		if (prepare(em, b->sql, &st) != SD_OK)
			return SD_ERR_IO;
		for (size_t k = 0; k < b->n && rc == SD_OK; k++) {
			b->fill(st, s->uuid, b->rows, k);
			rc = emit(em, st);
		}
		sqlite3_finalize(st);
	}
	return rc;
}

/* The facts as used (flops per token, the peak) and the verdict. */
static int write_train_verdict(struct emit *em, const struct db_sink *s)
{
	const struct ktrain *t = s->tend;
	const struct sd_train_summary *sum = t->have_summary ? &t->summary
							     : NULL;
	const struct sd_train_comparison *c = t->have_cmp ? &t->cmp : NULL;
	sqlite3_stmt *st = NULL;
	struct sd_buf ob = { 0 };
	int rc = SD_ERR_IO, n = 0;
	int bad = sd_buf_printf(&ob, "{");
	if (!bad && sum && sum->flops_origin != SD_TRAIN_UNKNOWN)
		bad = sd_buf_printf(&ob, "\"flops_per_token\":\"%s\"",
				    sd_train_origin_name(sum->flops_origin)) ||
		      (n++, 0);
	if (!bad && sum && sum->peak.origin != SD_TRAIN_UNKNOWN)
		bad = sd_buf_printf(&ob, "%s\"peak_tflops\":\"%s\"",
				    n ? "," : "",
				    sd_train_origin_name(sum->peak.origin));
	if (bad || sd_buf_printf(&ob, "}") ||
	    prepare(em, upd_train_run_sql, &st) != SD_OK)
		goto out;
	sd_db_bind_str(st, 1, s->uuid);
	if (sum) {
		sd_db_bind_real(st, 2, sum->flops_per_token);
		sd_db_bind_real(st, 3, sum->peak.tflops);
		sd_db_bind_str(st, 4, sum->peak.part);
	}
	sd_db_bind_str(st, 5, ob.data);
	if (c) {
		sd_db_bind_str(st, 6, t->reference_name);
		sd_db_bind_real(st, 7, c->tol.rel_tol);
		sd_db_bind_real(st, 8, c->tol.abs_tol);
		sd_db_bind_real(st, 9, c->tol.var_tol);
		/* not judged (too few steps): no verdict, the reason why */
		if (c->verdict != SD_TRAIN_NOT_JUDGED)
			sd_db_bind_str(st, 10, sd_train_verdict_name(c->verdict));
		sd_db_bind_str(st, 11, c->reason);
		if (c->nonfinite_step >= 0)
			sqlite3_bind_int64(st, 12, c->nonfinite_step);
	} else if (sum && sum->nonfinite_step >= 0) {
		sqlite3_bind_int64(st, 12, sum->nonfinite_step);
	}
	if (t->lines_unparsed >= 0)
		sqlite3_bind_int64(st, 13, t->lines_unparsed);
	rc = emit(em, st);
out:
	sd_buf_free(&ob);
	sqlite3_finalize(st);
	return rc;
}

/* A training run's outcome: its verdict, then its metric rows. */
static int write_train_end(struct emit *em, const struct db_sink *s)
{
	const struct ktrain *t = s->tend;
	sqlite3_stmt *st;
	int rc = SD_OK;
	if (!t)
		return SD_OK;
	if (write_train_verdict(em, s) != SD_OK)
		return SD_ERR_IO;
	if (!t->nmetrics)
		return SD_OK;
	if (prepare(em, ins_metric_sql, &st) != SD_OK)
		return SD_ERR_IO;
	for (size_t i = 0; i < t->nmetrics && rc == SD_OK; i++) {
		const struct kmetric *m = &t->metrics[i];
		sd_db_bind_str(st, 1, s->uuid);
		sd_db_bind_str(st, 2, m->name);
		sd_db_bind_str(st, 3, m->unit);
		sqlite3_bind_double(st, 4, m->value);
		if (m->has_host)
			sd_db_bind_str(st, 5, m->host);
		if (m->rank >= 0)
			sqlite3_bind_int(st, 6, m->rank);
		rc = emit(em, st);
	}
	sqlite3_finalize(st);
	return rc;
}

static int write_end(struct emit *em, const struct db_sink *s,
		     const char *now)
{
	const struct kend *e = s->end;
	sqlite3_stmt *st;
	if (!e)
		return SD_OK;
	if (prepare(em, run_end_sql, &st) != SD_OK)
		return SD_ERR_IO;
	sd_db_bind_str(st, 1, s->uuid);
	sd_db_bind_str(st, 2, e->status);
	sqlite3_bind_int(st, 3, e->exit_status);
	sd_db_bind_str(st, 4, e->message);
	sd_db_bind_str(st, 5, e->finished);
	sd_db_bind_str(st, 6, now);
	int rc = emit(em, st);
	sqlite3_finalize(st);
	return rc;
}

static int write_heartbeat(struct emit *em, const struct db_sink *s,
			   const char *now)
{
	sqlite3_stmt *st;
	if (prepare(em, heartbeat_sql, &st) != SD_OK)
		return SD_ERR_IO;
	sd_db_bind_str(st, 1, s->uuid);
	sd_db_bind_str(st, 2, now);
	int rc = emit(em, st);
	sqlite3_finalize(st);
	return rc;
}

/* Everything kept, in the order it is written. */
static int write_kept(struct emit *em, const struct db_sink *s,
		      const char *now)
{
	if (write_begin(em, s) != SD_OK || write_tests(em, s, now) != SD_OK ||
	    write_batches(em, s) != SD_OK || write_train_end(em, s) != SD_OK)
		return SD_ERR_IO;
	return write_end(em, s, now);
}

/* ---- what is kept ---- */

static void begin_free(struct kbegin *b)
{
	if (!b)
		return;
	free(b->command_line);
	free(b->plan_text);
	free(b->plan_hash);
	free(b->tool_version);
	free(b->backend);
	free(b->backend_version);
	free(b->user);
	free(b->run_kind);
	free(b->ranks);
	for (int i = 0; b->hosts && i < b->nhosts; i++)
		free(b->hosts[i].json);
	free(b->hosts);
	free(b->config);
	free(b->log_path);
	free(b->log_format);
	free(b);
}

/* A deep copy of the run's beginning; NULL when out of memory. */
static struct kbegin *begin_copy(const struct db_sink *s,
				 const struct sd_run_info *run)
{
	struct kbegin *b = calloc(1, sizeof(*b));
	int bad = !b;
	if (bad)
		return NULL;
	sd_db_iso_time(run->started_at > 0 ? run->started_at : sd_wall_now(),
		       b->started);
	b->command_line = sd_dupstr(run->command_line ? run->command_line
						      : s->cmdline, &bad);
	b->plan_text = sd_dupstr(run->plan_text, &bad);
	b->plan_hash = sd_dupstr(run->plan_hash, &bad);
	b->tool_version = sd_dupstr(run->tool_version, &bad);
	b->backend = sd_dupstr(run->backend, &bad);
	b->backend_version = sd_dupstr(run->backend_version, &bad);
	b->user = sd_dupstr(run->user, &bad);
	b->run_kind = sd_dupstr(run->run_kind, &bad);
	b->nranks = run->nranks;
	if (run->job) {
		b->has_job = 1;
		b->job = *run->job;
	}
	if (run->ranks && run->nranks > 0) {
		size_t sz = (size_t)run->nranks * sizeof(*b->ranks);
		if ((b->ranks = malloc(sz)))
			memcpy(b->ranks, run->ranks, sz);
		else
			bad = 1;
	}
	if (run->hosts && run->nhosts > 0) {
		b->hosts = calloc((size_t)run->nhosts, sizeof(*b->hosts));
		bad |= !b->hosts;
		for (int i = 0; b->hosts && i < run->nhosts; i++) {
			b->hosts[i] = run->hosts[i];
			b->hosts[i].json = sd_dupstr(run->hosts[i].json, &bad);
			b->nhosts = i + 1;
		}
	}
	if (run->train) {
		b->train = 1;
		b->config = sd_dupstr(run->train->config, &bad);
		b->log_path = sd_dupstr(run->train->log_path, &bad);
		b->log_format = sd_dupstr(run->train->log_format, &bad);
		b->facts = *run->train->facts;
	}
	if (bad) {
		begin_free(b);
		return NULL;
	}
	return b;
}

static void test_free(struct ktest *k)
{
	free(k->message);
	free(k->meas);
	memset(k, 0, sizeof(*k));
}

static void pbatch_free(struct pbatch *b)
{
	for (size_t i = 0; i < b->nstrs; i++)
		free(b->strs[i]);
	free(b->strs);
	free(b->rows);
}

static char *keep_str(struct pbatch *b, const char *s)
{
	if (!s)
		return NULL;
	char *c = strdup(s);
	if (c)
		b->strs[b->nstrs++] = c;
	return c;
}

static void train_free(struct ktrain *t)
{
	if (!t)
		return;
	free(t->reference_name);
	free(t->metrics);
	free(t);
}

static void end_free(struct kend *e)
{
	if (e)
		free(e->message);
	free(e);
}

/* Forget what is now in the database. */
static void forget_written(struct db_sink *s)
{
	begin_free(s->begin);
	s->begin = NULL;
	for (size_t i = 0; i < s->ntests; i++)
		test_free(&s->tests[i]);
	s->ntests = 0;
	for (size_t i = 0; i < s->npb; i++)
		pbatch_free(&s->pb[i]);
	s->npb = 0;
	train_free(s->tend);
	s->tend = NULL;
	end_free(s->end);
	s->end = NULL;
}

static int kept_any(const struct db_sink *s)
{
	return s->begin || s->ntests || s->npb || s->tend || s->end;
}

/* runs.id of the run, once its row is in (the journal's name in $TMPDIR
 * says it). */
static void find_run_id(struct db_sink *s)
{
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(s->db, "SELECT id FROM runs WHERE uuid = ?1",
			       -1, &st, NULL) == SQLITE_OK) {
		sd_db_bind_str(st, 1, s->uuid);
		if (sqlite3_step(st) == SQLITE_ROW)
			s->run_id = sqlite3_column_int64(st, 0);
	}
	sqlite3_finalize(st);
}

/* One transaction of what write() emits; SD_OK, or SD_ERR_IO with
 * nothing written.  The caller holds mu. */
static int transaction(struct db_sink *s,
		       int (*write)(struct emit *em, const struct db_sink *s,
				    const char *now))
{
	struct emit em = { s->db, NULL };
	char now[32];
	now_iso(now);
	if (exec(s->db, "BEGIN IMMEDIATE") != SD_OK) {
		note_loss(s);
		return SD_ERR_IO;
	}
	if (write(&em, s, now) != SD_OK || exec(s->db, "COMMIT") != SD_OK) {
		note_loss(s); /* the database's words, before the rollback's */
		exec(s->db, "ROLLBACK");
		return SD_ERR_IO;
	}
	return SD_OK;
}

/* Everything kept and, before the end, the heartbeat. */
static int write_now(struct emit *em, const struct db_sink *s,
		     const char *now)
{
	if (write_kept(em, s, now) != SD_OK)
		return SD_ERR_IO;
	return s->end ? SD_OK : write_heartbeat(em, s, now);
}

/* Write everything kept in one transaction (in atomic mode only at the
 * end); what is written is no longer kept, what fails stays kept.  The
 * caller holds mu. */
static int flush(struct db_sink *s, int at_end)
{
	if (!s->begun || s->jn_final || (s->atomic && !at_end) || !kept_any(s))
		return SD_OK;
	int had_begin = s->begin != NULL;
	/* before the end, a write waits at most SD_DB_MIDRUN_WAIT_MS (rank
	 * 0's main thread makes it between tests and steps: a longer wait
	 * would hold the other ranks past -T, and a lock would read as a
	 * lost rank), and once one has missed, the rest of the run does not
	 * wait at all; what is not written is kept, and the end waits the
	 * whole busy timeout once */
	int full = sd_db_busy_timeout_ms();
	int wait = at_end ? full
		   : s->missed ? 0
		   : full < SD_DB_MIDRUN_WAIT_MS ? full
						 : SD_DB_MIDRUN_WAIT_MS;
	if (wait != full)
		sqlite3_busy_timeout(s->db, wait);
	int rc = transaction(s, write_now);
	if (wait != full)
		sqlite3_busy_timeout(s->db, full);
	s->missed = rc != SD_OK;
	if (rc != SD_OK)
		return SD_ERR_IO;
	forget_written(s);
	if (had_begin)
		find_run_id(s);
	return SD_OK;
}

/* ---- the journal ---- */

/* What is kept, as the journal's SQL text (sqlite3_free), built by the
 * same code on an empty in-memory copy of the schema (the database
 * itself may be locked, full or damaged); NULL with jn_why. */
static char *journal_text(struct db_sink *s)
{
	sqlite3 *mem = NULL;
	struct emit em = { NULL, NULL };
	char now[32];
	char *text = NULL;
	now_iso(now);
	if (sqlite3_open(":memory:", &mem) != SQLITE_OK ||
	    sqlite3_exec(mem, sd_db_schema_sql, NULL, NULL, NULL) !=
		    SQLITE_OK) {
		snprintf(s->jn_why, sizeof(s->jn_why), "cannot build it: %s",
			 mem ? sqlite3_errmsg(mem) : "out of memory");
		goto out;
	}
	em.db = mem;
	em.out = sqlite3_str_new(mem);
	sqlite3_str_appendf(em.out, "-- run %s, ended %s: what its database "
			    "did not take (%s)\n", s->uuid, now,
			    s->lost_why[0] ? s->lost_why : "write failed");
	if (write_kept(&em, s, now) != SD_OK ||
	    sqlite3_str_errcode(em.out) != SQLITE_OK) {
		snprintf(s->jn_why, sizeof(s->jn_why), "cannot build it: %s",
			 sqlite3_errmsg(mem));
		goto out;
	}
	text = sqlite3_str_finish(em.out);
	em.out = NULL;
out:
	sqlite3_free(sqlite3_str_finish(em.out));
	sqlite3_close(mem);
	return text;
}

/* mu held: keep in the journal what still could not be written (all of
 * it, replacing what the journal held before), beside the database or,
 * when that fails too (the disk is full), in $TMPDIR; the journal's name
 * is the database's identity and the run's, so it is never another
 * database's nor another run's.  Called before the run's end (so that
 * the end's message names a journal that exists) and at the end.  A row
 * the database refused on its own terms (a constraint) is not kept:
 * replayed, it would be refused again and hold back the whole journal. */
static void put_journal(struct db_sink *s)
{
	s->jn_done = 0;
	if (!kept_any(s)) {
		/* everything is in the database after all */
		if (s->journal[0])
			unlink(s->journal);
		s->journal[0] = '\0';
		return;
	}
	if (s->lost_code == SQLITE_CONSTRAINT) {
		snprintf(s->jn_why, sizeof(s->jn_why), "the database refused "
			 "the rows themselves");
		return;
	}
	if (!s->dbid[0]) {
		snprintf(s->jn_why, sizeof(s->jn_why), "the database has no "
			 "identity to name it by");
		return;
	}
	char *text = journal_text(s);
	if (!text)
		return;
	char err[4400];
	const char *tmp = getenv("TMPDIR");
	tmp = tmp && *tmp ? tmp : "/tmp";
	char beside[4200], intmp[4200];
	sd_db_journal_name(NULL, s->path, s->dbid, s->uuid, beside,
			   sizeof(beside));
	sd_db_journal_name(tmp, s->path, s->dbid, s->uuid, intmp,
			   sizeof(intmp));
	/* where it was put before, else beside the database, else $TMPDIR */
	const char *first = strcmp(s->journal, intmp) == 0 ? intmp : beside;
	int rc = sd_db_journal_put(first, s->dbid, text, &s->jfd, err,
				   sizeof(err));
	if (rc != SD_OK && first == beside) {
		sd_strlcpy(s->jn_why, err, sizeof(s->jn_why));
		first = intmp;
		rc = sd_db_journal_put(intmp, s->dbid, text, &s->jfd, err,
				       sizeof(err));
	}
	sqlite3_free(text);
	if (rc != SD_OK) {
		/* an earlier journal stays as it was, with what it holds */
		if (!s->journal[0])
			sd_strlcpy(s->jn_why, err, sizeof(s->jn_why));
		return;
	}
	if (s->journal[0] && strcmp(s->journal, first) != 0)
		unlink(s->journal); /* moved to $TMPDIR, whole */
	sd_strlcpy(s->journal, first, sizeof(s->journal));
	s->jn_done = 1;
}

/* ---- the events ---- */

static void *heartbeat_main(void *arg)
{
	struct db_sink *s = arg;
	pthread_mutex_lock(&s->mu);
	while (!s->hb_stop && !s->ended) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += SD_DB_HEARTBEAT_S;
		int rc = 0;
		while (!s->hb_stop && !s->ended && rc != ETIMEDOUT)
			rc = pthread_cond_timedwait(&s->cv, &s->mu, &ts);
		if (s->hb_stop || s->ended || s->begin)
			continue;
		struct emit em = { s->db, NULL };
		char now[32];
		now_iso(now);
		write_heartbeat(&em, s, now); /* a missed beat is harmless */
	}
	pthread_mutex_unlock(&s->mu);
	return NULL;
}

/* A write that failed: kept, and said so. */
static int kept_for_later(struct db_sink *s, const char *what)
{
	snprintf(s->err, sizeof(s->err), "%s: %s could not be written now "
		 "(%s); kept and written again later", s->path, what,
		 s->lost_why[0] ? s->lost_why : "write failed");
	return SD_ERR_IO;
}

static int db_run_begin(void *self, const struct sd_run_info *run)
{
	struct db_sink *s = self;
	int rc = SD_OK;
	pthread_mutex_lock(&s->mu);
	if (s->begun || s->ended)
		goto out;
	s->begun = 1;
	if (run->uuid[0])
		sd_strlcpy(s->uuid, run->uuid, sizeof(s->uuid));
	else
		sd_uuid4(s->uuid);
	s->train = run->train != NULL;
	if (run->train && run->train->facts &&
	    run->train->facts->warmup_steps.origin != SD_TRAIN_UNKNOWN)
		s->warmup = run->train->facts->warmup_steps.value;
	s->begin = begin_copy(s, run);
	if (!s->begin) {
		s->lost_begin = 1;
		snprintf(s->err, sizeof(s->err), "out of memory recording "
			 "the run");
		rc = SD_ERR_NOMEM;
		goto out;
	}
	if (!s->atomic && pthread_create(&s->hb, NULL, heartbeat_main, s) == 0)
		s->hb_started = 1;
	if (flush(s, 0) != SD_OK)
		rc = kept_for_later(s, "the run");
out:
	pthread_mutex_unlock(&s->mu);
	return rc;
}

static int db_test_begin(void *self, const struct sd_test_info *test)
{
	struct db_sink *s = self;
	pthread_mutex_lock(&s->mu);
	struct ktest *k = &s->cur;
	s->test_open = 1;
	k->test = *test;
	sd_strlcpy(k->name, test->name ? test->name : "", sizeof(k->name));
	sd_strlcpy(k->scope, test->scope ? test->scope : "world",
		   sizeof(k->scope));
	sd_strlcpy(k->algo, test->algo ? test->algo : "", sizeof(k->algo));
	sd_strlcpy(k->members, test->members ? test->members : "",
		   sizeof(k->members));
	sd_strlcpy(k->variant, test->variant ? test->variant : "",
		   sizeof(k->variant));
	sd_strlcpy(k->pairing, test->pairing ? test->pairing : "",
		   sizeof(k->pairing));
	k->test.name = k->name;
	k->test.scope = k->scope;
	k->test.algo = k->algo;
	k->test.members = k->members;
	k->test.variant = k->variant;
	k->test.pairing = k->pairing;
	sd_db_iso_time(sd_wall_now(), k->started_at);
	k->nmeas = 0;
	pthread_mutex_unlock(&s->mu);
	return SD_OK;
}

static int db_measurement(void *self, const struct sd_test_info *test,
			  const struct sd_measurement *m)
{
	struct db_sink *s = self;
	int rc = SD_OK;
	pthread_mutex_lock(&s->mu);
	if (!s->test_open) {
		pthread_mutex_unlock(&s->mu);
		db_test_begin(self, test);
		pthread_mutex_lock(&s->mu);
	}
	struct ktest *k = &s->cur;
	if (s->ended)
		goto out;
	if (k->nmeas == k->capmeas) {
		size_t ncap = k->capmeas ? k->capmeas * 2 : 64;
		struct meas *n = realloc(k->meas, ncap * sizeof(*n));
		if (!n) {
			rc = SD_ERR_NOMEM;
			goto out;
		}
		k->meas = n;
		k->capmeas = ncap;
	}
	struct meas *x = &k->meas[k->nmeas++];
	x->m = *m;
	sd_strlcpy(x->algo, m->algo ? m->algo : "", sizeof(x->algo));
	x->m.algo = x->algo;
out:
	pthread_mutex_unlock(&s->mu);
	return rc;
}

/* The open test, ended: kept (its measurements move with it) to be
 * written with the next write; the caller holds mu. */
static void end_test(struct db_sink *s, const char *status,
		     const char *message)
{
	struct ktest *k = &s->cur;
	s->test_open = 0;
	sd_strlcpy(k->status, status ? status : "error", sizeof(k->status));
	if (s->ntests == s->captests) {
		size_t cap = s->captests ? s->captests * 2 : 8;
		void *p = realloc(s->tests, cap * sizeof(*s->tests));
		if (!p) {
			s->lost_tests++;
			k->nmeas = 0;
			return;
		}
		s->tests = p;
		s->captests = cap;
	}
	int bad = 0;
	k->message = sd_dupstr(message, &bad);
	struct ktest *x = &s->tests[s->ntests++];
	*x = *k;
	x->test.name = x->name;
	x->test.scope = x->scope;
	x->test.algo = x->algo;
	x->test.members = x->members;
	x->test.variant = x->variant;
	x->test.pairing = x->pairing;
	for (size_t i = 0; i < x->nmeas; i++)
		x->meas[i].m.algo = x->meas[i].algo;
	memset(k, 0, sizeof(*k)); /* the next test gets its own buffer */
}

static int db_test_end(void *self, const struct sd_test_info *test,
		       const char *status, const char *message)
{
	struct db_sink *s = self;
	int rc = SD_OK;
	pthread_mutex_lock(&s->mu);
	if (!s->test_open) {
		pthread_mutex_unlock(&s->mu);
		db_test_begin(self, test);
		pthread_mutex_lock(&s->mu);
	}
	if (!s->ended && s->begun) {
		end_test(s, status, message);
		if (flush(s, 0) != SD_OK)
			rc = kept_for_later(s, "a test");
	} else if (!s->ended) {
		s->lost_tests++; /* no run to put it in */
		s->test_open = 0;
		rc = SD_ERR_IO;
	}
	pthread_mutex_unlock(&s->mu);
	return rc;
}

/* Keep a batch of n rows of `size` bytes with `nstr` strings per row
 * (copied by copy(), NULL when none); 0, or -1 when out of memory. */
static int keep_batch(struct db_sink *s, const char *sql, fill_fn fill,
		      const void *rows, size_t n, size_t size, int nstr,
		      void (*copy)(struct pbatch *b, void *row))
{
	struct pbatch b = { sql, fill, n, size, NULL, NULL, 0, 0 };
	b.rows = malloc(n * size);
	b.strs = calloc(n * (size_t)nstr + 1, sizeof(char *));
	if (s->npb == s->cappb) {
		size_t cap = s->cappb ? s->cappb * 2 : 8;
		void *p = realloc(s->pb, cap * sizeof(*s->pb));
		if (p) {
			s->pb = p;
			s->cappb = cap;
		}
	}
	if (!b.rows || !b.strs || s->npb == s->cappb) {
		pbatch_free(&b);
		return -1;
	}
	memcpy(b.rows, rows, n * size);
	for (size_t i = 0; copy && i < n; i++)
		copy(&b, (char *)b.rows + i * size);
	s->pb[s->npb++] = b;
	return 0;
}

/* A batch: kept, then written with everything before it. */
static int write_batch(struct db_sink *s, const char *sql, size_t n,
		       fill_fn fill, const void *rows, size_t size, int nstr,
		       void (*copy)(struct pbatch *b, void *row))
{
	int rc = SD_OK;
	pthread_mutex_lock(&s->mu);
	if (s->ended || !n) {
		/* after the end: dropped, as every sink drops it */
	} else if (!s->begun ||
		   keep_batch(s, sql, fill, rows, n, size, nstr, copy)) {
		s->lost_batches++;
		snprintf(s->err, sizeof(s->err), "%s: a batch of rows could "
			 "not be kept (%s)", s->path, s->begun ? "out of memory"
			 : "before the run's beginning");
		rc = SD_ERR_IO;
	} else if (flush(s, 0) != SD_OK) {
		rc = kept_for_later(s, "a batch of rows");
	}
	pthread_mutex_unlock(&s->mu);
	return rc;
}
static void fill_verdict(sqlite3_stmt *st, const char *uuid, const void *rows,
			 size_t i)
{
	const struct sd_verdict_info *v = (const struct sd_verdict_info *)rows + i;
	sd_db_bind_str(st, 1, uuid);
	sqlite3_bind_int(st, 2, v->test_index);
	sd_db_bind_str(st, 3, v->subject_kind);
	sd_db_bind_str(st, 4, v->subject);
	sqlite3_bind_text(st, 5, v->hosts ? v->hosts : "", -1,
			  SQLITE_TRANSIENT);
	sd_db_bind_str(st, 6, v->expectation);
	if (v->size_bytes)
		sqlite3_bind_int64(st, 7, (sqlite3_int64)v->size_bytes);
	sd_db_bind_real(st, 8, v->measured);
	sd_db_bind_real(st, 9, v->threshold);
	sd_db_bind_str(st, 10, v->unit);
	sd_db_bind_str(st, 11, v->status);
	sd_db_bind_str(st, 12, v->reason);
	sqlite3_bind_int(st, 13, v->attempts > 0 ? v->attempts : 1);
	sd_db_bind_str(st, 14, v->outcome);
}

static void copy_verdict(struct pbatch *b, void *row)
{
	struct sd_verdict_info *v = row;
	v->subject_kind = keep_str(b, v->subject_kind);
	v->subject = keep_str(b, v->subject);
	v->hosts = keep_str(b, v->hosts);
	v->expectation = keep_str(b, v->expectation);
	v->unit = keep_str(b, v->unit);
	v->status = keep_str(b, v->status);
	v->reason = keep_str(b, v->reason);
	v->outcome = keep_str(b, v->outcome);
}

static int db_verdicts(void *self, const struct sd_verdict_info *v, size_t n)
{
	return write_batch(self,
		"INSERT INTO verdicts (run_id, test_id, subject_kind, subject, "
		" hosts, expectation, size_bytes, measured, threshold, unit, "
		" status, reason, attempts, outcome) VALUES (" RUN_BY_UUID ", "
		" (SELECT id FROM tests WHERE run_id = " RUN_BY_UUID " AND "
		" test_index = ?2), ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, "
		" ?13, ?14)", n, fill_verdict, v, sizeof(*v), 8, copy_verdict);
}

static void fill_suspect(sqlite3_stmt *st, const char *uuid, const void *rows,
			 size_t i)
{
	const struct sd_suspect_info *v = (const struct sd_suspect_info *)rows + i;
	sd_db_bind_str(st, 1, uuid);
	sd_db_bind_str(st, 2, v->kind);
	sd_db_bind_str(st, 3, v->subject);
	sqlite3_bind_text(st, 4, v->hosts ? v->hosts : "", -1,
			  SQLITE_TRANSIENT);
	sqlite3_bind_int(st, 5, v->bad_node ? 1 : 0);
	sqlite3_bind_text(st, 6, v->reason ? v->reason : "", -1,
			  SQLITE_TRANSIENT);
}

static void copy_suspect(struct pbatch *b, void *row)
{
	struct sd_suspect_info *v = row;
	v->kind = keep_str(b, v->kind);
	v->subject = keep_str(b, v->subject);
	v->hosts = keep_str(b, v->hosts);
	v->reason = keep_str(b, v->reason);
}

static int db_suspects(void *self, const struct sd_suspect_info *v, size_t n)
{
	return write_batch(self,
		"INSERT OR REPLACE INTO suspects (run_id, kind, subject, hosts, "
		" bad_node, reason) VALUES (" RUN_BY_UUID ", ?2, ?3, ?4, ?5, ?6)", n,
		fill_suspect, v, sizeof(*v), 4, copy_suspect);
}

static void fill_gemm_result(sqlite3_stmt *st, const char *uuid,
			     const void *rows, size_t i)
{
	const struct sd_gemm_result_info *v =
		(const struct sd_gemm_result_info *)rows + i;
	sd_db_bind_str(st, 1, uuid);
	sqlite3_bind_int(st, 2, v->rank);
	sqlite3_bind_text(st, 3, v->host ? v->host : "", -1, SQLITE_TRANSIENT);
	sd_db_bind_str(st, 4, v->device);
	sd_db_bind_str(st, 5, v->dtype);
	sd_db_bind_str(st, 6, v->shape);
	sqlite3_bind_int64(st, 7, (sqlite3_int64)v->m);
	sqlite3_bind_int64(st, 8, (sqlite3_int64)v->n);
	sqlite3_bind_int64(st, 9, (sqlite3_int64)v->k);
	sqlite3_bind_int(st, 10, v->iters);
	sqlite3_bind_int(st, 11, v->warmup_iters);
	bind_real0(st, 12, v->time_us);
	sd_db_bind_real(st, 13, v->time_us_min);
	sd_db_bind_real(st, 14, v->time_us_max);
	bind_real0(st, 15, v->tflops);
	sqlite3_bind_int64(st, 16, (sqlite3_int64)v->checked);
	sqlite3_bind_int64(st, 17, (sqlite3_int64)v->wrong);
	sd_db_bind_real(st, 18, v->max_error);
	sd_db_bind_real(st, 19, v->tolerance);
	sqlite3_bind_int(st, 20, v->best ? 1 : 0);
	sd_db_bind_str(st, 21, v->impl);
}

static void copy_gemm_result(struct pbatch *b, void *row)
{
	struct sd_gemm_result_info *v = row;
	v->host = keep_str(b, v->host);
	v->device = keep_str(b, v->device);
	v->dtype = keep_str(b, v->dtype);
	v->shape = keep_str(b, v->shape);
	v->impl = keep_str(b, v->impl);
}

static int db_gemm_results(void *self, const struct sd_gemm_result_info *v,
			   size_t n)
{
	return write_batch(self,
		"INSERT INTO gemm_results (run_id, rank, host, device, dtype, "
		" shape, m, n, k, iters, warmup_iters, time_us, time_us_min, "
		" time_us_max, tflops, checked, wrong, max_error, tolerance, "
		" best, impl) VALUES (" RUN_BY_UUID ", ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, "
		" ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21)", n,
		fill_gemm_result, v, sizeof(*v), 5, copy_gemm_result);
}

static void fill_gemm_device(sqlite3_stmt *st, const char *uuid,
			     const void *rows, size_t i)
{
	const struct sd_gemm_device_info *v =
		(const struct sd_gemm_device_info *)rows + i;
	sd_db_bind_str(st, 1, uuid);
	sqlite3_bind_int(st, 2, v->rank);
	sqlite3_bind_text(st, 3, v->host ? v->host : "", -1, SQLITE_TRANSIENT);
	sd_db_bind_str(st, 4, v->device);
	sd_db_bind_str(st, 5, v->dtype);
	sd_db_bind_str(st, 6, v->status);
	sd_db_bind_real(st, 7, v->best_tflops);
	sd_db_bind_str(st, 8, v->best_shape);
	sd_db_bind_real(st, 9, v->peer_median_tflops);
	sqlite3_bind_int(st, 10, v->peers);
	sd_db_bind_real(st, 11, v->peak_tflops);
	sd_db_bind_str(st, 12, v->reason);
}

static void copy_gemm_device(struct pbatch *b, void *row)
{
	struct sd_gemm_device_info *v = row;
	v->host = keep_str(b, v->host);
	v->device = keep_str(b, v->device);
	v->dtype = keep_str(b, v->dtype);
	v->status = keep_str(b, v->status);
	v->best_shape = keep_str(b, v->best_shape);
	v->reason = keep_str(b, v->reason);
}

static int db_gemm_devices(void *self, const struct sd_gemm_device_info *v,
			   size_t n)
{
	return write_batch(self,
		"INSERT INTO gemm_devices (run_id, rank, host, device, dtype, "
		" status, best_tflops, best_shape, peer_median_tflops, peers, "
		" peak_tflops, reason) VALUES (" RUN_BY_UUID ", ?2, ?3, ?4, ?5, ?6, ?7, ?8, "
		" ?9, ?10, ?11, ?12)", n, fill_gemm_device, v, sizeof(*v), 6,
		copy_gemm_device);
}

static void fill_step(sqlite3_stmt *st, const char *uuid, const void *rows,
		      size_t i)
{
	const struct kstep *x = (const struct kstep *)rows + i;
	const struct sd_train_step *s = &x->s;
	sd_db_bind_str(st, 1, uuid);
	sqlite3_bind_int64(st, 2, s->step);
	if (s->rank >= 0)
		sqlite3_bind_int(st, 3, s->rank);
	if (x->span >= 0)
		sqlite3_bind_int64(st, 4, x->span);
	if (s->has & SD_STEP_LOSS) {
		if (isfinite(s->loss))
			sqlite3_bind_double(st, 5, s->loss);
		else
			sd_db_bind_str(st, 6, isnan(s->loss) ? "nan"
					      : s->loss > 0 ? "inf" : "-inf");
	}
	if (s->has & SD_STEP_TIME)
		sd_db_bind_real(st, 7, s->step_s);
	if (s->has & SD_STEP_TOKENS)
		sd_db_bind_real(st, 8, s->tokens);
	if (s->has & SD_STEP_COMPUTE)
		sd_db_bind_real(st, 9, s->compute_s);
	if (s->has & SD_STEP_COMM)
		sd_db_bind_real(st, 10, s->comm_s);
	if (s->has & SD_STEP_OPTIM)
		sd_db_bind_real(st, 11, s->optim_s);
	sqlite3_bind_int(st, 12, x->timed);
}

/* The series state of `rank`, made when new; NULL when out of memory. */
static struct rank_state *rank_state(struct db_sink *s, int rank, int *fresh)
{
	*fresh = 0;
	for (size_t i = 0; i < s->nrs; i++)
		if (s->rs[i].rank == rank)
			return &s->rs[i];
	void *p = realloc(s->rs, (s->nrs + 1) * sizeof(*s->rs));
	if (!p)
		return NULL;
	s->rs = p;
	*fresh = 1;
	struct rank_state *x = &s->rs[s->nrs++];
	memset(x, 0, sizeof(*x));
	x->rank = rank;
	return x;
}

/* Whether steps follow each other and what came before, per rank; the
 * first that does not is said in s->err. */
static int steps_in_order(struct db_sink *s, const struct sd_train_step *v,
			  size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int rank = v[i].rank < 0 ? -1 : v[i].rank;
		long prev = -1;
		for (size_t k = i; k-- > 0;)
			if ((v[k].rank < 0 ? -1 : v[k].rank) == rank) {
				prev = v[k].step;
				break;
			}
		for (size_t k = 0; prev < 0 && k < s->nrs; k++)
			if (s->rs[k].rank == rank)
				prev = s->rs[k].prev.step;
		if (v[i].step < 0 || v[i].step <= prev) {
			snprintf(s->err, sizeof(s->err), "step %ld%s follows "
				 "step %ld: steps must increase", v[i].step,
				 rank >= 0 ? " of a rank" : "", prev);
			return 0;
		}
	}
	return 1;
}

/* The steps as kept: each marked timed as sd_train_step_timed() marks it
 * in its rank's series with the run's warm-up; NULL when out of memory. */
static struct kstep *mark_steps(struct db_sink *s,
				const struct sd_train_step *v, size_t n)
{
	struct kstep *out = calloc(n, sizeof(*out));
	for (size_t i = 0; out && i < n; i++) {
		int fresh;
		struct sd_train_step x = v[i];
		if (x.rank < 0)
			x.rank = -1;
		struct rank_state *rs = rank_state(s, x.rank, &fresh);
		if (!rs) {
			free(out);
			return NULL;
		}
		out[i].s = x;
		if (fresh) {
			rs->first = x;
			out[i].span = -1;
		} else {
			/* the rule of sd_train_step_timed() on the series
			 * (first, ..., previous, this) */
			struct sd_train_step three[3] = { rs->first, rs->prev,
							  x };
			out[i].span = x.step - rs->prev.step;
			out[i].timed = sd_train_step_timed(three, 2, s->warmup);
		}
		rs->prev = x;
	}
	return out;
}

static int db_train_steps(void *self, const struct sd_train_step *v,
			  size_t n)
{
	struct db_sink *s = self;
	int rc = SD_OK;
	pthread_mutex_lock(&s->mu);
	if (s->ended || !n)
		goto out;
	if (!s->begun || !s->train) {
		snprintf(s->err, sizeof(s->err), "steps of a training run %s",
			 s->begun ? "in a run that is not one"
				  : "before its beginning");
		rc = SD_ERR_INVALID;
		goto out;
	}
	if (!steps_in_order(s, v, n)) {
		rc = SD_ERR_INVALID;
		goto out;
	}
	struct kstep *k = mark_steps(s, v, n);
	if (!k || keep_batch(s, ins_step_sql, fill_step, k, n, sizeof(*k), 0,
			     NULL)) {
		s->lost_steps += (long)n;
		snprintf(s->err, sizeof(s->err), "out of memory keeping %zu "
			 "steps", n);
		rc = SD_ERR_NOMEM;
	} else {
		s->pb[s->npb - 1].steps = 1;
		if (flush(s, 0) != SD_OK) {
			char what[64];
			size_t kept = 0;
			for (size_t i = 0; i < s->npb; i++)
				kept += s->pb[i].steps ? s->pb[i].n : 0;
			snprintf(what, sizeof(what), "%zu step%s", kept,
				 kept == 1 ? "" : "s");
			rc = kept_for_later(s, what);
		}
	}
	free(k);
out:
	pthread_mutex_unlock(&s->mu);
	return rc;
}

static void copy_metric(struct kmetric *d, const struct sd_train_metric *m)
{
	memset(d, 0, sizeof(*d));
	sd_strlcpy(d->name, m->name ? m->name : "", sizeof(d->name));
	sd_strlcpy(d->unit, m->unit ? m->unit : "", sizeof(d->unit));
	if (m->host) {
		d->has_host = 1;
		sd_strlcpy(d->host, m->host, sizeof(d->host));
	}
	d->rank = m->rank < 0 ? -1 : m->rank;
	d->value = m->value;
}

/* A deep copy of a training run's outcome with its metric rows
 * (sd_train_metric_rows() and the extra ones); NULL when out of memory. */
static struct ktrain *train_copy(const struct sd_train_outcome *o)
{
	struct ktrain *t = calloc(1, sizeof(*t));
	struct sd_train_metric rows[SD_TRAIN_MAX_METRICS];
	int bad = !t;
	if (bad)
		return NULL;
	if (o->summary) {
		t->have_summary = 1;
		t->summary = *o->summary;
	}
	if (o->cmp) {
		t->have_cmp = 1;
		t->cmp = *o->cmp;
		t->reference_name = sd_dupstr(o->reference_name, &bad);
	}
	t->lines_unparsed = o->lines_unparsed;
	size_t nr = sd_train_metric_rows(o->summary, o->cmp, rows,
					 SD_TRAIN_MAX_METRICS);
	t->metrics = calloc(nr + o->nextra + 1, sizeof(*t->metrics));
	bad |= !t->metrics;
	for (size_t i = 0; t->metrics && i < nr; i++)
		copy_metric(&t->metrics[t->nmetrics++], &rows[i]);
	for (size_t i = 0; t->metrics && o->extra && i < o->nextra; i++)
		if (isfinite(o->extra[i].value) && o->extra[i].name)
			copy_metric(&t->metrics[t->nmetrics++], &o->extra[i]);
	if (bad) {
		train_free(t);
		return NULL;
	}
	return t;
}

/* Kept, to be written with the run's end. */
static int db_train_end(void *self, const struct sd_train_outcome *o)
{
	struct db_sink *s = self;
	int rc = SD_OK;
	pthread_mutex_lock(&s->mu);
	if (!s->ended && s->begun && s->train && !s->tend &&
	    !(s->tend = train_copy(o))) {
		snprintf(s->err, sizeof(s->err), "out of memory keeping the "
			 "training run's outcome");
		rc = SD_ERR_NOMEM;
	}
	pthread_mutex_unlock(&s->mu);
	return rc;
}

/* The run's end as kept; NULL when out of memory. */
static struct kend *end_copy(const struct sd_run_end *end)
{
	struct kend *e = calloc(1, sizeof(*e));
	int bad = !e;
	if (bad)
		return NULL;
	e->status = run_status(end->status);
	e->exit_status = end->exit_status;
	/* keep what was said when the schema has no word for it */
	e->message = sd_dupstr(end->message ? end->message
			       : strcmp(e->status, end->status ? end->status
								: "error")
					 ? end->status : NULL, &bad);
	sd_db_iso_time(end->finished_at > 0 ? end->finished_at
					    : sd_wall_now(), e->finished);
	if (bad) {
		end_free(e);
		return NULL;
	}
	return e;
}

static int db_run_end(void *self, const struct sd_run_end *end)
{
	struct db_sink *s = self;
	int rc = SD_OK;
	pthread_mutex_lock(&s->mu);
	if (s->ended || !s->begun) {
		s->ended = 1;
		goto out;
	}
	if (s->test_open) {
		int cancelled = end->status && strcmp(end->status,
						      "cancelled") == 0;
		end_test(s, cancelled ? "cancelled" : "error",
			 cancelled ? "interrupted: the run was cancelled"
				   : "interrupted: the run ended early");
	}
	s->end = end_copy(end);
	s->ended = 1;
	/* when what comes before the end cannot be written but the run's
	 * row is in, the end alone: its status is then not left 'running' */
	if (flush(s, 1) != SD_OK && s->end && !s->begin && !s->atomic) {
		/* the end has just waited out the lock: this try does not
		 * wait again */
		sqlite3_busy_timeout(s->db, 0);
		if (transaction(s, write_end) == SD_OK) {
			end_free(s->end);
			s->end = NULL;
		}
		sqlite3_busy_timeout(s->db, sd_db_busy_timeout_ms());
	}
	rc = s->end ? SD_ERR_IO : SD_OK;
	/* what still could not be written is kept in the journal */
	put_journal(s);
	s->jn_final = s->jn_done;
	pthread_cond_broadcast(&s->cv);
out:
	pthread_mutex_unlock(&s->mu);
	return rc;
}

static void db_destroy(void *self)
{
	struct db_sink *s = self;
	if (!s)
		return;
	pthread_mutex_lock(&s->mu);
	s->hb_stop = 1;
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
	if (s->hb_started)
		pthread_join(s->hb, NULL);
	if (s->jfd >= 0)
		close(s->jfd); /* the journal may be replayed from now on */
	/* a lock that held the writes back holds the close's checkpoint
	 * too: it is not waited for (the next opener does it) */
	if (s->missed && s->db)
		sqlite3_busy_timeout(s->db, 0);
	sd_db_close(s->db);
	pthread_cond_destroy(&s->cv);
	pthread_mutex_destroy(&s->mu);
	forget_written(s);
	free(s->tests);
	free(s->pb);
	test_free(&s->cur);
	free(s->rs);
	free(s->path);
	free(s->cmdline);
	free(s);
}

static const struct sd_sink_ops db_sink_ops = {
	.name = "database",
	.run_begin = db_run_begin,
	.test_begin = db_test_begin,
	.measurement = db_measurement,
	.test_end = db_test_end,
	.run_end = db_run_end,
	.destroy = db_destroy,
	.verdicts = db_verdicts,
	.suspects = db_suspects,
	.gemm_results = db_gemm_results,
	.gemm_devices = db_gemm_devices,
	.train_steps = db_train_steps,
	.train_end = db_train_end,
};

int sd_db_sink_open(const char *path_or_null, const char *cmdline,
		    struct sd_sink *out, char *err, size_t errlen)
{
	const char *path = sd_db_resolve_path(path_or_null);
	struct db_sink *s = NULL;

	out->ops = NULL;
	out->self = NULL;
	if (strcmp(path, "none") == 0)
		return SD_OK;
	s = calloc(1, sizeof(*s));
	if (!s) {
		snprintf(err, errlen, "out of memory opening the database");
		return SD_ERR_NOMEM;
	}
	pthread_mutex_init(&s->mu, NULL);
	pthread_cond_init(&s->cv, NULL);
	s->jfd = -1;
	gethostname(s->hostname, sizeof(s->hostname) - 1);
	s->path = strdup(path);
	s->cmdline = cmdline ? strdup(cmdline) : NULL;
	if (!s->path || (cmdline && !s->cmdline)) {
		snprintf(err, errlen, "out of memory opening the database");
		db_destroy(s);
		return SD_ERR_NOMEM;
	}
	int rc = sd_db_open_note(path, SD_DB_CREATE, &s->db, s->note,
				 sizeof(s->note), err, errlen);
	if (rc != SD_OK) {
		db_destroy(s);
		return rc;
	}
	/* what an earlier run could not write, first: the journals of this
	 * database (by its identity), never another's */
	sd_db_identity(s->db, s->dbid);
	struct sd_db_journals js;
	sd_db_journals_find(path, s->dbid, &js);
	for (size_t i = 0; i < js.nown; i++) {
		char jerr[4600];
		int nst = 0, ntests = 0, skipped = 0;
		size_t nl = strlen(s->note);
		if (nl + 1 >= sizeof(s->note))
			break;
		if (sd_db_journal_replay(s->db, js.own[i], s->dbid, path, &nst,
					 &ntests, &skipped, jerr,
					 sizeof(jerr)) != SD_OK)
			snprintf(s->note + nl, sizeof(s->note) - nl, "%s%s; it "
				 "is kept (shakedown db recover)",
				 nl ? "; " : "", jerr);
		else if (nst)
			snprintf(s->note + nl, sizeof(s->note) - nl, "%sreplayed "
				 "%s into %s: what an earlier run could not "
				 "write (%d test%s, %d statements)%s%s",
				 nl ? "; " : "", js.own[i], path, ntests,
				 ntests == 1 ? "" : "s", nst,
				 jerr[0] ? "; " : "", jerr);
	}
	sd_db_journals_free(&js);
	out->ops = &db_sink_ops;
	out->self = s;
	return SD_OK;
}

void sd_db_sink_set_atomic(const struct sd_sink *sink)
{
	struct db_sink *s = sink->ops == &db_sink_ops ? sink->self : NULL;
	if (s)
		s->atomic = 1;
}

const char *sd_db_sink_path(const struct sd_sink *s)
{
	if (!s || s->ops != &db_sink_ops)
		return NULL;
	return ((const struct db_sink *)s->self)->path;
}

const char *sd_db_sink_error(const struct sd_sink *sink)
{
	if (!sink || sink->ops != &db_sink_ops)
		return "";
	return ((const struct db_sink *)sink->self)->err;
}

void sd_db_sink_flush(const struct sd_sink *sink)
{
	struct db_sink *s = sink->self;
	if (!s)
		return;
	pthread_mutex_lock(&s->mu);
	/* what still cannot be written goes to the journal now, so that
	 * what the run says of it before its end is true then too */
	if (!s->ended && flush(s, 0) != SD_OK)
		put_journal(s);
	pthread_mutex_unlock(&s->mu);
}

/* What to do about the cause, by SQLite's code; NULL: the file is
 * damaged. */
static const char *loss_fix(const struct db_sink *s)
{
	switch (s->lost_code) {
	case SQLITE_BUSY:
	case SQLITE_LOCKED:
		return "end what holds the lock";
	case SQLITE_FULL:
		return "free space on its disk";
	case SQLITE_CORRUPT:
	case SQLITE_NOTADB:
		return NULL;
	default:
		return "check the file (shakedown db check)";
	}
}

/* What the record lacks, in words ("the run itself, 3 tests, its end");
 * 0 when nothing.  The caller holds mu. */
static int lacking(const struct db_sink *s, char *what, size_t len)
{
	long tests = s->lost_tests + (long)s->ntests;
	long steps = s->lost_steps, batches = s->lost_batches;
	for (size_t i = 0; i < s->npb; i++) {
		if (s->pb[i].steps)
			steps += (long)s->pb[i].n;
		else
			batches++;
	}
	int begin = s->lost_begin || s->begin;
	/* before the end, what is kept holds the end back too (it is
	 * written after it), so that the run's message says what its stderr
	 * says after the end */
	int end = s->end || s->tend || (!s->ended && s->begun && kept_any(s));
	size_t u = 0;
	what[0] = '\0';
	if (begin)
		u += (size_t)snprintf(what + u, len - u, "the run itself");
	if (tests && u < len)
		u += (size_t)snprintf(what + u, len - u, "%s%ld test%s",
				      u ? ", " : "", tests,
				      tests == 1 ? "" : "s");
	if (steps && u < len)
		u += (size_t)snprintf(what + u, len - u, "%s%ld step%s",
				      u ? ", " : "", steps,
				      steps == 1 ? "" : "s");
	if (batches && u < len)
		u += (size_t)snprintf(what + u, len - u, "%s%ld batch%s of "
				      "verdicts or suspects", u ? ", " : "",
				      batches, batches == 1 ? "" : "es");
	if (end && u < len)
		snprintf(what + u, len - u, "%sits end%s", u ? ", " : "",
			 s->train ? " and metrics" : "");
	return begin || tests || steps || batches || end;
}

/* The one sentence about what the run could not write and its journal,
 * for every channel (stderr, the run's message in the database, stdout):
 * where it is kept and what to do, or why it is not kept.  The caller
 * holds mu. */
static void journal_words(const struct db_sink *s, const char *what,
			  char *msg, size_t len)
{
	int kept_all = s->jn_done && !s->lost_begin && !s->lost_tests &&
		       !s->lost_batches && !s->lost_steps;
	int kept = s->journal[0] != '\0'; /* all, or an earlier part */
	char jarg[4300] = "", beside[4200];
	sd_db_journal_name(NULL, s->path, s->dbid, s->uuid, beside,
			   sizeof(beside));
	if (kept && strcmp(s->journal, beside) != 0)
		snprintf(jarg, sizeof(jarg), " --journal %s", s->journal);
	const char *why = s->lost_why[0] ? s->lost_why : "write failed";
	const char *fix = loss_fix(s);
	if (kept && fix)
		snprintf(msg, len, "the record in %s is incomplete: %s could "
			 "not be written (%s); %s kept in the journal %s: %s, "
			 "then run 'shakedown db recover --db %s%s'%s",
			 s->path, what, why,
			 kept_all ? "all of it is" : "what could be is",
			 s->journal, fix, s->path, jarg,
			 jarg[0] ? "" : " (the next run into it replays it "
					"too)");
	else if (kept)
		snprintf(msg, len, "the record in %s is incomplete: %s could "
			 "not be written (%s); %s kept in the journal %s; the "
			 "file is damaged: run 'shakedown db recover --db %s "
			 "--into NEW.db%s' to copy what it still holds into "
			 "NEW.db with what this run kept", s->path, what, why,
			 kept_all ? "all of it is" : "what could be is",
			 s->journal, s->path, jarg);
	else if (!s->ended && !s->jn_why[0])
		/* mid-run, nothing journaled yet: it is kept in memory,
		 * and the end writes it or journals it */
		snprintf(msg, len, "the record in %s is incomplete so far: %s "
			 "could not be written yet (%s); kept, to be written "
			 "again and journaled at the end if it still cannot "
			 "be", s->path, what, why);
	else
		snprintf(msg, len, "the record in %s is incomplete: %s could "
			 "not be written (%s), nor kept in a journal (%s); the "
			 "printed results above are the ones to keep; %s",
			 s->path, what, why,
			 s->jn_why[0] ? s->jn_why : "it could not be written",
			 fix ? fix : "the file is damaged: salvage it "
				     "(shakedown db recover --into)");
}

int sd_db_sink_incomplete(const struct sd_sink *sink, char *msg, size_t len)
{
	struct db_sink *s = sink->self;
	char what[256];
	if (!s)
		return 0;
	pthread_mutex_lock(&s->mu);
	int lost = lacking(s, what, sizeof(what));
	if (lost)
		journal_words(s, what, msg, len);
	pthread_mutex_unlock(&s->mu);
	return lost;
}

const char *sd_db_sink_note(const struct sd_sink *s)
{
	if (!s || s->ops != &db_sink_ops)
		return NULL;
	const struct db_sink *d = s->self;
	return d->note[0] ? d->note : NULL;
}
