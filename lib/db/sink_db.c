/*
 * sink_db.c - the recording sink: every run into the results database.
 *
 * Rank 0 of `shakedown run` (and of `shakedown gemm`) opens it before any
 * test (sd_db_sink_open in db.h), so a bad database stops the run before
 * it costs anything.  The
 * run row is inserted as 'running' at run_begin, together with its job,
 * ranks and host environments.  A test's measurements are kept in memory
 * and written with the test in one short transaction at test_end, so a
 * write lock is never held while a test runs (several jobs may share the
 * file) and a crash loses at most the test in progress.  A thread
 * refreshes runs.heartbeat_at every SD_DB_HEARTBEAT_S seconds so that
 * the next process to open the file can tell a dead run (sd_db_open marks
 * it 'aborted').  run_end may arrive from the watchdog thread or a signal
 * path while the main thread is in another callback: one mutex guards
 * everything, and events after run_end are ignored.
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
#include "util.h"

#define SD_DB_HEARTBEAT_S 10

struct meas {
	struct sd_measurement m;
	char algo[64];
};

struct db_sink {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	sqlite3 *db;
	char *path;
	char *cmdline;
	char note[512];
	int64_t run_id;          /* 0 before run_begin */
	int ended;               /* run_end seen */
	/* the test in progress */
	int test_open;
	struct sd_test_info test;
	char test_name[64], test_scope[128], test_algo[64], test_members[64];
	char test_started_at[32];
	struct meas *meas;
	size_t nmeas, capmeas;
	/* what could not be written (locked, full, damaged): tests kept to
	 * be written again at the run's end; the rest counted, for the
	 * end's word on what the record lacks */
	struct pending {
		struct sd_test_info test;
		char name[64], scope[128], algo[64], members[64];
		char started_at[32], status[16];
		char *message;
		struct meas *meas;
		size_t nmeas;
	} *pending;
	size_t npending, cappending;
	struct pbatch *pbatch;      /* verdicts and suspects, likewise */
	size_t npbatch, cappbatch;
	int lost_begin, lost_end;
	long lost_tests, lost_batches;
	char lost_why[160];
	int lost_code;           /* SQLite's primary code for lost_why */
	/* what was kept in the journal instead (DB.pending.sql, or a file
	 * in $TMPDIR when that cannot be written) */
	char journal[4096];
	long jn_tests, jn_batches;
	int jn_end;
	char jn_why[256];        /* why the journal could not be written */
	long run_number;         /* runs.id, for the journal's name */
	/* statements */
	sqlite3_stmt *ins_test, *ins_meas, *heartbeat;
	/* heartbeat thread */
	pthread_t hb;
	int hb_started, hb_stop;
};

static const char ins_test_sql[] =
	"INSERT INTO tests (run_id, test_index, name, op, dtype, redop, root, "
	" scope, algo, nranks, status, message, started_at, finished_at, "
	" members) "
	"VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, "
	" ?15)";

#define MEAS_INSERT \
	"INSERT INTO measurements (test_id, size_bytes, count, in_place, " \
	" iters, warmup_iters, time_us, time_us_min, time_us_avg, " \
	" time_us_max, iter_us_min, iter_us_p50, iter_us_p99, iter_us_max, " \
	" algbw_gbs, busbw_gbs, ds_size_bytes, ds_description, " \
	" ds_throughput_gbps, ds_busbw_gbps, checked, wrong, " \
	" first_wrong_rank, first_wrong_index, first_wrong_expected, " \
	" first_wrong_got, algo) "
#define MEAS_VALUES \
	", ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, " \
	" ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25, ?26, ?27)"

static const char ins_meas_sql[] = MEAS_INSERT "VALUES (?1" MEAS_VALUES;

/* In the journal a measurement finds its test by run and index (?28,
 * ?29): the test's id is the one the replay gives it. */
static const char journal_meas_sql[] =
	MEAS_INSERT "VALUES ((SELECT id FROM tests WHERE run_id = ?28 AND "
	" test_index = ?29)" MEAS_VALUES;

static const char run_end_sql[] =
	"UPDATE runs SET status = ?2, exit_status = ?3, message = ?4, "
	" finished_at = ?5, heartbeat_at = ?6 WHERE id = ?1";

static const char heartbeat_sql[] =
	"UPDATE runs SET heartbeat_at = ?2 WHERE id = ?1 "
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

static void write_pending_batches(struct db_sink *s);

/* The database's words for the last failure, kept once. */
static void note_loss(struct db_sink *s)
{
	if (!s->lost_why[0]) {
		snprintf(s->lost_why, sizeof(s->lost_why), "%s",
			 sqlite3_errmsg(s->db));
		s->lost_code = sqlite3_errcode(s->db);
	}
}

static int step_done(sqlite3_stmt *st)
{
	int rc = sqlite3_step(st);
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return rc == SQLITE_DONE ? SD_OK : SD_ERR_IO;
}

static int exec(sqlite3 *db, const char *sql)
{
	return sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK ? SD_OK
								    : SD_ERR_IO;
}

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
		if (s->hb_stop || s->ended)
			break;
		char now[32];
		now_iso(now);
		sqlite3_bind_int64(s->heartbeat, 1, s->run_id);
		sqlite3_bind_text(s->heartbeat, 2, now, -1, SQLITE_TRANSIENT);
		step_done(s->heartbeat); /* a missed beat is harmless */
	}
	pthread_mutex_unlock(&s->mu);
	return NULL;
}

static int db_run_begin(void *self, const struct sd_run_info *run)
{
	struct db_sink *s = self;
	sqlite3_stmt *st = NULL;
	char started[32], now[32], host[256] = "";
	int rc = SD_ERR_IO;

	pthread_mutex_lock(&s->mu);
	if (s->run_id || s->ended) {
		rc = SD_OK;
		goto unlock;
	}
	sd_db_iso_time(run->started_at > 0 ? run->started_at : sd_wall_now(),
		       started);
	now_iso(now);
	gethostname(host, sizeof(host) - 1);
	if (exec(s->db, "BEGIN IMMEDIATE") != SD_OK)
		goto unlock;
	if (sqlite3_prepare_v2(s->db,
		"INSERT INTO runs (uuid, started_at, heartbeat_at, status, "
		" command_line, plan_text, plan_hash, tool_version, backend, "
		" backend_version, user, hostname, pid, nranks, run_kind) "
		"VALUES (?1, ?2, ?3, 'running', ?4, ?5, ?6, ?7, ?8, ?9, ?10, "
		" ?11, ?12, ?13, ?14)", -1, &st, NULL) != SQLITE_OK)
		goto rollback;
	sd_db_bind_str(st, 1, run->uuid);
	sd_db_bind_str(st, 2, started);
	sd_db_bind_str(st, 3, now);
	sd_db_bind_str(st, 4, run->command_line ? run->command_line : s->cmdline);
	sd_db_bind_str(st, 5, run->plan_text);
	sd_db_bind_str(st, 6, run->plan_hash);
	sd_db_bind_str(st, 7, run->tool_version);
	sd_db_bind_str(st, 8, run->backend);
	sd_db_bind_str(st, 9, run->backend_version);
	sd_db_bind_str(st, 10, run->user);
	sd_db_bind_str(st, 11, host);
	sqlite3_bind_int(st, 12, (int)getpid());
	sqlite3_bind_int(st, 13, run->nranks);
	sd_db_bind_str(st, 14, run->run_kind ? run->run_kind : "collectives");
	if (step_done(st) != SD_OK)
		goto rollback;
	sqlite3_finalize(st);
	st = NULL;
	s->run_id = sqlite3_last_insert_rowid(s->db);

	if (run->job) {
		const struct sd_job_info *j = run->job;
		if (sqlite3_prepare_v2(s->db,
			"INSERT INTO jobs (run_id, launcher, cluster, job_id, "
			" step_id, nodelist, nnodes, tasks_per_node) "
			"VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)", -1, &st,
			NULL) != SQLITE_OK)
			goto rollback;
		sqlite3_bind_int64(st, 1, s->run_id);
		sd_db_bind_str(st, 2, j->launcher);
		sd_db_bind_str(st, 3, j->cluster);
		sd_db_bind_str(st, 4, j->job_id);
		sd_db_bind_str(st, 5, j->step_id);
		sd_db_bind_str(st, 6, j->nodelist);
		sqlite3_bind_int(st, 7, j->nnodes);
		sqlite3_bind_int(st, 8, j->tasks_per_node);
		if (step_done(st) != SD_OK)
			goto rollback;
		sqlite3_finalize(st);
		st = NULL;
	}
	if (run->ranks && run->nranks > 0) {
		if (sqlite3_prepare_v2(s->db,
			"INSERT INTO ranks (run_id, rank, host, local_rank, pid, "
			" device_name, pci_bus_id, device_uuid, "
			" mem_total_bytes, mem_free_bytes, transport) "
			"VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
			-1, &st, NULL) != SQLITE_OK)
			goto rollback;
		for (int i = 0; i < run->nranks; i++) {
			const struct sd_rank_info *r = &run->ranks[i];
			sqlite3_bind_int64(st, 1, s->run_id);
			sqlite3_bind_int(st, 2, r->rank);
			sqlite3_bind_text(st, 3, r->host, -1,
					  SQLITE_TRANSIENT);
			sqlite3_bind_int(st, 4, r->local_rank);
			sqlite3_bind_int(st, 5, r->pid);
			sd_db_bind_str(st, 6, r->dev.name);
			sd_db_bind_str(st, 7, r->dev.pci_bus_id);
			sd_db_bind_str(st, 8, r->dev.uuid);
			sqlite3_bind_int64(st, 9,
					   (sqlite3_int64)r->dev.mem_total_bytes);
			sqlite3_bind_int64(st, 10,
					   (sqlite3_int64)r->dev.mem_free_bytes);
			sd_db_bind_str(st, 11, r->dev.transport);
			if (step_done(st) != SD_OK)
				goto rollback;
		}
		sqlite3_finalize(st);
		st = NULL;
	}
	if (run->hosts && run->nhosts > 0) {
		/* Keep the row even when a host sent something that is not
		 * JSON: wrap it. */
		if (sqlite3_prepare_v2(s->db,
			"INSERT OR REPLACE INTO host_env (run_id, host, env_json) "
			"VALUES (?1, ?2, iif(json_valid(?3), json(?3), "
			" json_object('unparsed', ?3)))", -1, &st, NULL) !=
		    SQLITE_OK)
			goto rollback;
		for (int i = 0; i < run->nhosts; i++) {
			sqlite3_bind_int64(st, 1, s->run_id);
			sqlite3_bind_text(st, 2, run->hosts[i].host, -1,
					  SQLITE_TRANSIENT);
			sd_db_bind_str(st, 3, run->hosts[i].json ? run->hosts[i].json
							   : "{}");
			if (step_done(st) != SD_OK)
				goto rollback;
		}
		sqlite3_finalize(st);
		st = NULL;
	}
	if (exec(s->db, "COMMIT") != SD_OK)
		goto rollback;
	if (pthread_create(&s->hb, NULL, heartbeat_main, s) == 0)
		s->hb_started = 1;
	rc = SD_OK;
	goto unlock;
rollback:
	note_loss(s);
	sqlite3_finalize(st);
	exec(s->db, "ROLLBACK");
	s->run_id = 0;
unlock:
	if (rc != SD_OK) {
		note_loss(s);
		s->lost_begin = 1;
	}
	pthread_mutex_unlock(&s->mu);
	return rc;
}

static int db_test_begin(void *self, const struct sd_test_info *test)
{
	struct db_sink *s = self;
	pthread_mutex_lock(&s->mu);
	s->test_open = 1;
	s->test = *test;
	sd_strlcpy(s->test_name, test->name ? test->name : "",
		   sizeof(s->test_name));
	sd_strlcpy(s->test_scope, test->scope ? test->scope : "world",
		   sizeof(s->test_scope));
	sd_strlcpy(s->test_algo, test->algo ? test->algo : "",
		   sizeof(s->test_algo));
	s->test.name = s->test_name;
	s->test.scope = s->test_scope;
	s->test.algo = s->test_algo;
	sd_strlcpy(s->test_members, test->members ? test->members : "",
		   sizeof(s->test_members));
	s->test.members = s->test_members;
	now_iso(s->test_started_at);
	s->nmeas = 0;
	pthread_mutex_unlock(&s->mu);
	return SD_OK;
}

static int db_measurement(void *self, const struct sd_test_info *test,
			  const struct sd_measurement *m)
{
	struct db_sink *s = self;
	int rc = SD_OK;
	pthread_mutex_lock(&s->mu);
	if (s->ended)
		goto out;
	if (!s->test_open) {
		pthread_mutex_unlock(&s->mu);
		db_test_begin(self, test);
		pthread_mutex_lock(&s->mu);
	}
	if (s->nmeas == s->capmeas) {
		size_t ncap = s->capmeas ? s->capmeas * 2 : 64;
		struct meas *n = realloc(s->meas, ncap * sizeof(*n));
		if (!n) {
			rc = SD_ERR_NOMEM;
			goto out;
		}
		s->meas = n;
		s->capmeas = ncap;
	}
	struct meas *x = &s->meas[s->nmeas++];
	x->m = *m;
	sd_strlcpy(x->algo, m->algo ? m->algo : "", sizeof(x->algo));
	x->m.algo = x->algo;
out:
	pthread_mutex_unlock(&s->mu);
	return rc;
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

/* Bind the open test's row (ins_test_sql). */
static void bind_test(sqlite3_stmt *st, struct db_sink *s, const char *status,
		      const char *message, const char *now)
{
	const struct sd_test_info *t = &s->test;
	sqlite3_bind_int64(st, 1, s->run_id);
	sqlite3_bind_int(st, 2, t->index);
	sd_db_bind_str(st, 3, t->name);
	sd_db_bind_str(st, 4, sd_op_name(t->op));
	sd_db_bind_str(st, 5, sd_dtype_name(t->dtype));
	if (t->has_redop)
		sd_db_bind_str(st, 6, sd_redop_name(t->redop));
	if (t->root >= 0)
		sqlite3_bind_int(st, 7, t->root);
	sd_db_bind_str(st, 8, t->scope && *t->scope ? t->scope : "world");
	sd_db_bind_str(st, 9, t->algo);
	sqlite3_bind_int(st, 10, t->nranks);
	const char *known = test_status(status);
	sd_db_bind_str(st, 11, known);
	if (status && strcmp(known, status) != 0 && !message)
		message = status; /* keep what the runner said */
	sd_db_bind_str(st, 12, message);
	sd_db_bind_str(st, 13, s->test_started_at);
	sd_db_bind_str(st, 14, now);
	sd_db_bind_str(st, 15, t->members && *t->members ? t->members : NULL);
}

/* Bind a measurement's row (ins_meas_sql, journal_meas_sql). */
static void bind_meas(sqlite3_stmt *st, int64_t test_id,
		      const struct sd_measurement *m)
{
	sqlite3_bind_int64(st, 1, test_id);
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

/* Write the open test and its measurements; the caller holds mu. */
static int write_test_once(struct db_sink *s, const char *status,
			   const char *message)
{
	char now[32];
	int rc = SD_ERR_IO;

	if (!s->run_id || !s->test_open)
		return SD_OK;
	now_iso(now);
	if (exec(s->db, "BEGIN IMMEDIATE") != SD_OK) {
		note_loss(s);
		return SD_ERR_IO;
	}
	sqlite3_stmt *st = s->ins_test;
	bind_test(st, s, status, message, now);
	if (step_done(st) != SD_OK)
		goto rollback;
	int64_t test_id = sqlite3_last_insert_rowid(s->db);
	st = s->ins_meas;
	for (size_t i = 0; i < s->nmeas; i++) {
		bind_meas(st, test_id, &s->meas[i].m);
		if (step_done(st) != SD_OK)
			goto rollback;
	}
	sqlite3_bind_int64(s->heartbeat, 1, s->run_id);
	sqlite3_bind_text(s->heartbeat, 2, now, -1, SQLITE_TRANSIENT);
	if (step_done(s->heartbeat) != SD_OK)
		goto rollback;
	if (exec(s->db, "COMMIT") != SD_OK)
		goto rollback;
	rc = SD_OK;
	goto out;
rollback:
	note_loss(s); /* the database's words, before the rollback's */
	exec(s->db, "ROLLBACK");
out:
	s->test_open = 0;
	s->nmeas = 0;
	return rc;
}

/* Keep the open test to be written again at the run's end. */
static void keep_pending(struct db_sink *s, const char *status,
			 const char *message)
{
	if (s->npending == s->cappending) {
		size_t cap = s->cappending ? s->cappending * 2 : 8;
		void *p = realloc(s->pending, cap * sizeof(*s->pending));
		if (!p) {
			s->lost_tests++;
			return;
		}
		s->pending = p;
		s->cappending = cap;
	}
	struct pending *x = &s->pending[s->npending];
	memset(x, 0, sizeof(*x));
	x->test = s->test;
	sd_strlcpy(x->name, s->test_name, sizeof(x->name));
	sd_strlcpy(x->scope, s->test_scope, sizeof(x->scope));
	sd_strlcpy(x->algo, s->test_algo, sizeof(x->algo));
	sd_strlcpy(x->members, s->test_members, sizeof(x->members));
	sd_strlcpy(x->started_at, s->test_started_at, sizeof(x->started_at));
	sd_strlcpy(x->status, status ? status : "error", sizeof(x->status));
	x->message = message ? strdup(message) : NULL;
	x->meas = malloc((s->nmeas ? s->nmeas : 1) * sizeof(*x->meas));
	if (!x->meas) {
		free(x->message);
		s->lost_tests++;
		return;
	}
	memcpy(x->meas, s->meas, s->nmeas * sizeof(*x->meas));
	for (size_t i = 0; i < s->nmeas; i++)
		x->meas[i].m.algo = x->meas[i].algo;
	x->nmeas = s->nmeas;
	s->npending++;
}

/* Write the open test; what fails is kept for the run's end. */
static int write_test(struct db_sink *s, const char *status,
		      const char *message)
{
	if (!s->test_open)
		return SD_OK;
	if (!s->run_id) {
		/* the run's own row could not be written */
		s->lost_tests++;
		s->test_open = 0;
		s->nmeas = 0;
		return SD_ERR_IO;
	}
	size_t n = s->nmeas; /* write_test_once empties it */
	int rc = write_test_once(s, status, message);
	if (rc != SD_OK) {
		note_loss(s);
		s->nmeas = n;
		keep_pending(s, status, message);
		s->test_open = 0;
		s->nmeas = 0;
	}
	return rc;
}

/* Make the kept test x the open one (the caller puts s->meas back). */
static void load_pending(struct db_sink *s, const struct pending *x)
{
	s->test = x->test;
	sd_strlcpy(s->test_name, x->name, sizeof(s->test_name));
	sd_strlcpy(s->test_scope, x->scope, sizeof(s->test_scope));
	sd_strlcpy(s->test_algo, x->algo, sizeof(s->test_algo));
	sd_strlcpy(s->test_members, x->members, sizeof(s->test_members));
	sd_strlcpy(s->test_started_at, x->started_at,
		   sizeof(s->test_started_at));
	s->test.name = s->test_name;
	s->test.scope = s->test_scope;
	s->test.algo = s->test_algo;
	s->test.members = s->test_members;
	s->meas = x->meas;
	s->nmeas = x->nmeas;
	s->test_open = 1;
}

/* At the run's end: the tests that could not be written, again. */
static void write_pending(struct db_sink *s)
{
	size_t kept = 0;
	for (size_t i = 0; i < s->npending; i++) {
		struct pending *x = &s->pending[i];
		struct meas *cur = s->meas;
		size_t ncur = s->nmeas;
		load_pending(s, x);
		int rc = write_test_once(s, x->status, x->message);
		s->meas = cur;
		s->nmeas = ncur;
		s->test_open = 0;
		if (rc == SD_OK) {
			free(x->meas);
			free(x->message);
		} else {
			s->pending[kept++] = *x;
		}
	}
	s->npending = kept;
}

static int db_test_end(void *self, const struct sd_test_info *test,
		       const char *status, const char *message)
{
	struct db_sink *s = self;
	int rc = SD_OK;
	pthread_mutex_lock(&s->mu);
	if (!s->ended) {
		if (!s->test_open) {
			pthread_mutex_unlock(&s->mu);
			db_test_begin(self, test);
			pthread_mutex_lock(&s->mu);
		}
		rc = write_test(s, status, message);
	}
	pthread_mutex_unlock(&s->mu);
	return rc;
}

static const char *run_status(const char *status)
{
	static const char *const ok[] = { "passed", "failed", "error",
					  "cancelled", "aborted" };
	return allowed_status(status, ok, sizeof(ok) / sizeof(ok[0]));
}

static void bind_run_end(sqlite3_stmt *st, int64_t run_id, const char *status,
			 const struct sd_run_end *end, const char *finished,
			 const char *now)
{
	sqlite3_bind_int64(st, 1, run_id);
	sd_db_bind_str(st, 2, status);
	sqlite3_bind_int(st, 3, end->exit_status);
	sd_db_bind_str(st, 4, end->message);
	sd_db_bind_str(st, 5, finished);
	sd_db_bind_str(st, 6, now);
}

static void write_journal(struct db_sink *s, const char *status,
			  const struct sd_run_end *end, const char *finished,
			  const char *now);

static int db_run_end(void *self, const struct sd_run_end *end)
{
	struct db_sink *s = self;
	sqlite3_stmt *st = NULL;
	char finished[32], now[32];
	int rc = SD_ERR_IO;

	pthread_mutex_lock(&s->mu);
	if (s->ended || !s->run_id) {
		s->ended = 1;
		rc = SD_OK;
		goto out;
	}
	const char *status = run_status(end->status);
	/* what could not be written before, now that a lock may be gone */
	write_pending(s);
	write_pending_batches(s);
	if (s->test_open) {
		char why[128];
		snprintf(why, sizeof(why), "interrupted: the run %s",
			 strcmp(status, "cancelled") == 0 ? "was cancelled"
							  : "ended early");
		write_test(s, strcmp(status, "cancelled") == 0 ? "cancelled"
							       : "error",
			   why);
	}
	now_iso(now);
	sd_db_iso_time(end->finished_at > 0 ? end->finished_at : sd_wall_now(),
		       finished);
	if (sqlite3_prepare_v2(s->db, run_end_sql, -1, &st, NULL) !=
	    SQLITE_OK) {
		note_loss(s);
		s->lost_end = 1;
	} else {
		bind_run_end(st, s->run_id, status, end, finished, now);
		rc = step_done(st);
		if (rc != SD_OK) {
			note_loss(s);
			s->lost_end = 1;
		}
	}
	s->ended = 1;
	/* what still could not be written is kept beside the database */
	if (s->npending || s->npbatch || s->lost_end)
		write_journal(s, status, end, finished, now);
	pthread_cond_broadcast(&s->cv);
out:
	sqlite3_finalize(st);
	pthread_mutex_unlock(&s->mu);
	return rc;
}

typedef void (*fill_fn)(sqlite3_stmt *st, int64_t run_id, const void *rows,
			size_t i);

/* Run a batch of inserts in one transaction: fill(st, i) binds row i;
 * the caller holds mu.  SD_OK, or SD_ERR_IO (nothing written). */
static int write_batch_locked(struct db_sink *s, const char *sql, size_t n,
			      fill_fn fill, const void *rows)
{
	sqlite3_stmt *st = NULL;
	int rc = SD_ERR_IO;
	if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK ||
	    exec(s->db, "BEGIN IMMEDIATE") != SD_OK) {
		note_loss(s);
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		fill(st, s->run_id, rows, i);
		if (step_done(st) != SD_OK) {
			note_loss(s);
			exec(s->db, "ROLLBACK");
			goto out;
		}
	}
	if (exec(s->db, "COMMIT") != SD_OK) {
		note_loss(s);
		exec(s->db, "ROLLBACK");
		goto out;
	}
	rc = SD_OK;
out:
	sqlite3_finalize(st);
	return rc;
}

/* A batch that could not be written, kept (a deep copy) for the end. */
struct pbatch {
	const char *sql;
	fill_fn fill;
	size_t n, size;
	void *rows;
	char **strs;
	size_t nstrs;
};

static char *keep_str(struct pbatch *b, const char *s)
{
	if (!s)
		return NULL;
	char *c = strdup(s);
	if (c)
		b->strs[b->nstrs++] = c;
	return c;
}

static void pbatch_free(struct pbatch *b)
{
	for (size_t i = 0; i < b->nstrs; i++)
		free(b->strs[i]);
	free(b->strs);
	free(b->rows);
}

/* Keep a failed batch of n rows of `size` bytes with `nstr` strings per
 * row (copied by copy()). */
static void keep_batch(struct db_sink *s, const char *sql, fill_fn fill,
		       const void *rows, size_t n, size_t size, int nstr,
		       void (*copy)(struct pbatch *b, void *row))
{
	struct pbatch b = { sql, fill, n, size, NULL, NULL, 0 };
	b.rows = malloc((n ? n : 1) * size);
	b.strs = calloc((n ? n : 1) * (size_t)nstr, sizeof(char *));
	void *p = s->npbatch == s->cappbatch
			  ? realloc(s->pbatch, (s->cappbatch ? s->cappbatch * 2
							     : 8) *
						     sizeof(*s->pbatch))
			  : s->pbatch;
	if (!b.rows || !b.strs || !p) {
		pbatch_free(&b);
		s->lost_batches++;
		return;
	}
	if (s->npbatch == s->cappbatch)
		s->cappbatch = s->cappbatch ? s->cappbatch * 2 : 8;
	s->pbatch = p;
	memcpy(b.rows, rows, n * size);
	for (size_t i = 0; i < n; i++)
		copy(&b, (char *)b.rows + i * size);
	s->pbatch[s->npbatch++] = b;
}

/* At the end: the batches that could not be written, again (after the
 * tests they refer to); the caller holds mu. */
static void write_pending_batches(struct db_sink *s)
{
	if (s->npending)
		return; /* their tests are not in yet */
	size_t kept = 0;
	for (size_t i = 0; i < s->npbatch; i++) {
		struct pbatch *b = &s->pbatch[i];
		if (write_batch_locked(s, b->sql, b->n, b->fill, b->rows) ==
		    SD_OK)
			pbatch_free(b);
		else
			s->pbatch[kept++] = *b;
	}
	s->npbatch = kept;
}

/* A batch now, or kept for the end when it cannot be written. */
static int write_batch(struct db_sink *s, const char *sql, size_t n,
		       fill_fn fill, const void *rows, size_t size, int nstr,
		       void (*copy)(struct pbatch *b, void *row))
{
	int rc = SD_OK;
	pthread_mutex_lock(&s->mu);
	if (s->ended || !n) {
		/* after the end: dropped, as every sink drops it */
	} else if (!s->run_id) {
		s->lost_batches++; /* the run's row is not there */
		rc = SD_ERR_IO;
	} else if (s->npending || s->npbatch) {
		/* after the tests it refers to, which wait too; in order */
		keep_batch(s, sql, fill, rows, n, size, nstr, copy);
		rc = SD_ERR_IO;
	} else if ((rc = write_batch_locked(s, sql, n, fill, rows)) != SD_OK) {
		keep_batch(s, sql, fill, rows, n, size, nstr, copy);
	}
	pthread_mutex_unlock(&s->mu);
	return rc;
}

static void fill_verdict(sqlite3_stmt *st, int64_t run_id, const void *rows,
			 size_t i)
{
	const struct sd_verdict_info *v = (const struct sd_verdict_info *)rows + i;
	sqlite3_bind_int64(st, 1, run_id);
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
}

static int db_verdicts(void *self, const struct sd_verdict_info *v, size_t n)
{
	return write_batch(self,
		"INSERT INTO verdicts (run_id, test_id, subject_kind, subject, "
		" hosts, expectation, size_bytes, measured, threshold, unit, "
		" status, reason, attempts) VALUES (?1, (SELECT id FROM tests "
		" WHERE run_id = ?1 AND test_index = ?2), ?3, ?4, ?5, ?6, ?7, "
		" ?8, ?9, ?10, ?11, ?12, ?13)", n, fill_verdict, v, sizeof(*v), 7,
		copy_verdict);
}

static void fill_suspect(sqlite3_stmt *st, int64_t run_id, const void *rows,
			 size_t i)
{
	const struct sd_suspect_info *v = (const struct sd_suspect_info *)rows + i;
	sqlite3_bind_int64(st, 1, run_id);
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
		" bad_node, reason) VALUES (?1, ?2, ?3, ?4, ?5, ?6)", n,
		fill_suspect, v, sizeof(*v), 4, copy_suspect);
}

static void fill_gemm_result(sqlite3_stmt *st, int64_t run_id,
			     const void *rows, size_t i)
{
	const struct sd_gemm_result_info *v =
		(const struct sd_gemm_result_info *)rows + i;
	sqlite3_bind_int64(st, 1, run_id);
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
		" best, impl) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, "
		" ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21)", n,
		fill_gemm_result, v, sizeof(*v), 5, copy_gemm_result);
}

static void fill_gemm_device(sqlite3_stmt *st, int64_t run_id,
			     const void *rows, size_t i)
{
	const struct sd_gemm_device_info *v =
		(const struct sd_gemm_device_info *)rows + i;
	sqlite3_bind_int64(st, 1, run_id);
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
		" peak_tflops, reason) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, "
		" ?9, ?10, ?11, ?12)", n, fill_gemm_device, v, sizeof(*v), 6,
		copy_gemm_device);
}

/* Append st's statement, its values written out, then reset it. */
static int add_stmt(sqlite3_str *out, sqlite3_stmt *st)
{
	char *sql = sqlite3_expanded_sql(st);
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	if (!sql)
		return -1;
	sqlite3_str_appendf(out, "%s;\n", sql);
	sqlite3_free(sql);
	return 0;
}

/* Build the journal's block: the same statements, bound by the same
 * code, prepared on an empty in-memory copy of the schema (the database
 * itself may be locked, full or damaged). */
static char *journal_text(struct db_sink *s, const char *status,
			  const struct sd_run_end *end, const char *finished,
			  const char *now)
{
	sqlite3 *mem = NULL;
	sqlite3_stmt *t = NULL, *m = NULL, *e = NULL;
	sqlite3_str *out = NULL;
	char *text = NULL;
	int bad = 0;
	if (sqlite3_open(":memory:", &mem) != SQLITE_OK ||
	    sqlite3_exec(mem, sd_db_schema_sql, NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(mem, ins_test_sql, -1, &t, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(mem, journal_meas_sql, -1, &m, NULL) !=
		    SQLITE_OK ||
	    sqlite3_prepare_v2(mem, run_end_sql, -1, &e, NULL) != SQLITE_OK) {
		snprintf(s->jn_why, sizeof(s->jn_why), "cannot build it: %s",
			 mem ? sqlite3_errmsg(mem) : "out of memory");
		goto out;
	}
	out = sqlite3_str_new(mem);
	sqlite3_str_appendf(out, "-- run %lld, ended %s: what its database "
			    "did not take (%s)\n", (long long)s->run_id, now,
			    s->lost_why[0] ? s->lost_why : "write failed");
	struct meas *cur = s->meas;
	size_t ncur = s->nmeas;
	for (size_t i = 0; i < s->npending && !bad; i++) {
		const struct pending *x = &s->pending[i];
		load_pending(s, x);
		bind_test(t, s, x->status, x->message, now);
		bad |= add_stmt(out, t);
		for (size_t j = 0; j < x->nmeas && !bad; j++) {
			bind_meas(m, 0, &x->meas[j].m);
			sqlite3_bind_int64(m, 28, s->run_id);
			sqlite3_bind_int(m, 29, x->test.index);
			bad |= add_stmt(out, m);
		}
	}
	s->meas = cur;
	s->nmeas = ncur;
	s->test_open = 0;
	for (size_t i = 0; i < s->npbatch && !bad; i++) {
		const struct pbatch *b = &s->pbatch[i];
		sqlite3_stmt *st = NULL;
		if (sqlite3_prepare_v2(mem, b->sql, -1, &st, NULL) != SQLITE_OK)
			bad = 1;
		for (size_t k = 0; k < b->n && !bad; k++) {
			b->fill(st, s->run_id, b->rows, k);
			bad |= add_stmt(out, st);
		}
		sqlite3_finalize(st);
	}
	if (s->lost_end && !bad) {
		bind_run_end(e, s->run_id, status, end, finished, now);
		bad |= add_stmt(out, e);
	}
	if (bad || sqlite3_str_errcode(out) != SQLITE_OK) {
		snprintf(s->jn_why, sizeof(s->jn_why), "cannot build it: %s",
			 bad ? sqlite3_errmsg(mem) : "out of memory");
		goto out;
	}
	text = sqlite3_str_finish(out);
	out = NULL;
out:
	sqlite3_free(sqlite3_str_finish(out));
	sqlite3_finalize(t);
	sqlite3_finalize(m);
	sqlite3_finalize(e);
	sqlite3_close(mem);
	return text;
}

/* At the end, mu held: keep in the journal what still could not be
 * written, beside the database or, when that fails too (the disk is
 * full), in $TMPDIR; what is kept is no longer pending. */
static void write_journal(struct db_sink *s, const char *status,
			  const struct sd_run_end *end, const char *finished,
			  const char *now)
{
	char *text = journal_text(s, status, end, finished, now);
	if (!text)
		return;
	char err[4200];
	sd_db_journal_path(s->path, s->journal, sizeof(s->journal));
	if (sd_db_journal_append(s->journal, text, err, sizeof(err)) != SD_OK) {
		sd_strlcpy(s->jn_why, err, sizeof(s->jn_why));
		const char *tmp = getenv("TMPDIR");
		const char *base = strrchr(s->path, '/');
		base = base ? base + 1 : s->path;
		snprintf(s->journal, sizeof(s->journal),
			 "%s/%s.run%lld.pending.sql", tmp && *tmp ? tmp : "/tmp",
			 base, (long long)s->run_id);
		if (sd_db_journal_append(s->journal, text, err, sizeof(err)) !=
		    SD_OK) {
			s->journal[0] = '\0';
			sqlite3_free(text);
			return;
		}
	}
	sqlite3_free(text);
	s->jn_tests += (long)s->npending;
	s->jn_batches += (long)s->npbatch;
	s->jn_end = s->lost_end;
	for (size_t i = 0; i < s->npending; i++) {
		free(s->pending[i].meas);
		free(s->pending[i].message);
	}
	s->npending = 0;
	for (size_t i = 0; i < s->npbatch; i++)
		pbatch_free(&s->pbatch[i]);
	s->npbatch = 0;
	s->lost_end = 0;
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
	sqlite3_finalize(s->ins_test);
	sqlite3_finalize(s->ins_meas);
	sqlite3_finalize(s->heartbeat);
	sd_db_close(s->db);
	pthread_cond_destroy(&s->cv);
	pthread_mutex_destroy(&s->mu);
	for (size_t i = 0; i < s->npending; i++) {
		free(s->pending[i].meas);
		free(s->pending[i].message);
	}
	free(s->pending);
	for (size_t i = 0; i < s->npbatch; i++)
		pbatch_free(&s->pbatch[i]);
	free(s->pbatch);
	free(s->meas);
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
	/* what an earlier run could not write, first */
	char jpath[4200], jerr[4600];
	int nst = 0, ntests = 0;
	sd_db_journal_path(path, jpath, sizeof(jpath));
	size_t nl = strlen(s->note);
	if (sd_db_journal_replay(s->db, jpath, &nst, &ntests, jerr,
				 sizeof(jerr)) != SD_OK)
		snprintf(s->note + nl, sizeof(s->note) - nl, "%s%s; it is kept "
			 "(shakedown db recover)", nl ? "; " : "", jerr);
	else if (nst)
		snprintf(s->note + nl, sizeof(s->note) - nl, "%sreplayed %s into "
			 "%s: what an earlier run could not write (%d test%s, %d "
			 "statements)%s%s", nl ? "; " : "", jpath, path, ntests,
			 ntests == 1 ? "" : "s", nst,
			 jerr[0] ? "; " : "", jerr);
	if (sqlite3_prepare_v2(s->db, ins_test_sql, -1, &s->ins_test, NULL) !=
		    SQLITE_OK ||
	    sqlite3_prepare_v2(s->db, ins_meas_sql, -1, &s->ins_meas, NULL) !=
		    SQLITE_OK ||
	    sqlite3_prepare_v2(s->db, heartbeat_sql, -1, &s->heartbeat,
			       NULL) != SQLITE_OK) {
		snprintf(err, errlen, "%s: preparing statements: %s", path,
			 sqlite3_errmsg(s->db));
		db_destroy(s);
		return SD_ERR_IO;
	}
	out->ops = &db_sink_ops;
	out->self = s;
	return SD_OK;
}

const char *sd_db_sink_path(const struct sd_sink *s)
{
	if (!s || s->ops != &db_sink_ops)
		return NULL;
	return ((const struct db_sink *)s->self)->path;
}

void sd_db_sink_flush(const struct sd_sink *sink)
{
	struct db_sink *s = sink->self;
	if (!s)
		return;
	pthread_mutex_lock(&s->mu);
	if (!s->ended && s->run_id) {
		write_pending(s);
		write_pending_batches(s);
	}
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

int sd_db_sink_incomplete(const struct sd_sink *sink, char *msg, size_t len)
{
	struct db_sink *s = sink->self;
	if (!s)
		return 0;
	pthread_mutex_lock(&s->mu);
	long tests = s->lost_tests + (long)s->npending + s->jn_tests;
	long batches = s->lost_batches + (long)s->npbatch + s->jn_batches;
	int lost_end = s->lost_end || s->jn_end;
	int lost = s->lost_begin || lost_end || tests || batches;
	if (lost) {
		char what[256] = "";
		size_t u = 0;
#define ADD(...) (u += (size_t)snprintf(what + u, sizeof(what) - u, __VA_ARGS__))
		if (s->lost_begin)
			ADD("the run itself");
		if (tests)
			ADD("%s%ld test%s", u ? ", " : "", tests,
			    tests == 1 ? "" : "s");
		if (batches)
			ADD("%s%ld batch%s of verdicts or suspects", u ? ", " : "",
			    batches, batches == 1 ? "" : "es");
		if (lost_end && !s->lost_begin)
			ADD("%sits end", u ? ", " : "");
#undef ADD
		int kept_all = s->journal[0] && !s->lost_begin &&
			       !s->lost_tests && !s->lost_batches;
		char jarg[4200] = "", own[4200];
		sd_db_journal_path(s->path, own, sizeof(own));
		if (s->journal[0] && strcmp(s->journal, own) != 0)
			snprintf(jarg, sizeof(jarg), " --journal %s", s->journal);
		const char *why = s->lost_why[0] ? s->lost_why : "write failed";
		const char *fix = loss_fix(s);
		if (s->journal[0] && fix)
			snprintf(msg, len, "the record in %s is incomplete: %s "
				 "could not be written (%s); %s kept in %s: %s, "
				 "then run 'shakedown db recover --db %s%s'%s",
				 s->path, what, why,
				 kept_all ? "all of it is" : "what could be is",
				 s->journal, fix, s->path, jarg,
				 jarg[0] ? "" : " (the next run into it "
						"replays it too)");
		else if (s->journal[0])
			snprintf(msg, len, "the record in %s is incomplete: %s "
				 "could not be written (%s); %s kept in %s; the "
				 "file is damaged: run 'shakedown db recover --db "
				 "%s --into NEW.db%s' to copy what it still holds "
				 "into NEW.db with what this run kept", s->path,
				 what, why,
				 kept_all ? "all of it is" : "what could be is",
				 s->journal, s->path, jarg);
		else
			snprintf(msg, len, "the record in %s is incomplete: %s "
				 "could not be written (%s), nor kept in a "
				 "journal (%s); the printed results above are the "
				 "ones to keep; %s", s->path, what, why,
				 s->jn_why[0] ? s->jn_why : "nothing to keep",
				 fix ? fix : "the file is damaged: salvage it "
					     "(shakedown db recover --into)");
	}
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
