/*
 * train_db.c - training runs and reference curves in the results
 * database: the recorder, the reads that reports and references need,
 * and the reference store (see train_db.h for the guarantees).
 *
 * Every row goes through one set of statements, bound by one set of
 * functions, whether it is written into the database or, when that
 * cannot be done, into the journal: for the journal the statements are
 * prepared on an empty in-memory copy of the schema and their text with
 * the values written out is kept (as sink_db.c does for collective runs).
 * Rows find their run by its UUID, not by runs.id, so that a journal
 * replayed into the database later lands whether or not the run's own
 * row made it in before.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db/db.h"
#include "db/db_internal.h"
#include "db/train_db.h"
#include "shakedown/backend.h"
#include "util.h"

/* A step as kept: the row, the steps it stands for (-1: the first of its
 * rank's series) and whether it is timed. */
struct rec_step {
	struct sd_train_step s;
	long span;
	int timed;
};

/* The series of one rank (-1: the job's), to mark steps timed. */
struct rank_state {
	int rank;
	struct sd_train_step first, prev;
};

struct rec_metric {
	char name[64], unit[32], host[64];
	int has_host, rank;
	double value;
};

struct rec_suspect {
	char *kind, *subject, *hosts, *reason;
	int bad_node;
};

struct sd_train_rec {
	sqlite3 *db; /* NULL: "none", nothing is recorded */
	char *path;
	int atomic;
	/* the beginning */
	int begun, begin_written;
	char uuid[37];
	char *kind, *command_line, *tool_version, *backend, *backend_version;
	char *user, *config, *log_path, *log_format;
	double started_at;
	int nranks, has_job;
	struct sd_job_info job;
	struct sd_rank_info *ranks;
	struct sd_train_facts facts;
	char hostname[256];
	/* the steps not in the database yet (those written are dropped) */
	struct rec_step *steps;
	size_t nsteps, capsteps;
	struct rank_state *rs;
	size_t nrs;
	/* the end */
	int ended, end_written;
	char *status, *message, *reference_name;
	int exit_status;
	double finished_at;
	int have_summary, have_cmp;
	struct sd_train_summary summary;
	struct sd_train_comparison cmp;
	long lines_unparsed;
	struct rec_metric *metrics;
	size_t nmetrics;
	struct rec_suspect *sus;
	size_t nsus;
	/* what could not be written, and where it was kept */
	char lost_why[256];
	int lost_code;
	char journal[4200], jn_why[256];
	int jn_done; /* what is not written is in the journal */
};

/* Where statements go: stepped on db, or their text appended to out. */
struct emit {
	sqlite3 *db;
	sqlite3_str *out;
};

static const char ins_run_sql[] =
	"INSERT INTO runs (uuid, run_kind, started_at, heartbeat_at, status, "
	" command_line, tool_version, backend, backend_version, user, "
	" hostname, pid, nranks) "
	"VALUES (?1, ?2, ?3, ?4, 'running', ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)";

#define RUN_BY_UUID "(SELECT id FROM runs WHERE uuid = ?1)"

static const char ins_job_sql[] =
	"INSERT INTO jobs (run_id, launcher, cluster, job_id, step_id, "
	" nodelist, nnodes, tasks_per_node) "
	"VALUES (" RUN_BY_UUID ", ?2, ?3, ?4, ?5, ?6, ?7, ?8)";

static const char ins_rank_sql[] =
	"INSERT INTO ranks (run_id, rank, host, local_rank, pid, device_name, "
	" pci_bus_id, device_uuid, mem_total_bytes, mem_free_bytes, "
	" transport) "
	"VALUES (" RUN_BY_UUID ", ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)";

static const char ins_train_run_sql[] =
	"INSERT INTO train_runs (run_id, config, log_path, log_format, "
	" device_name, devices, seq_len, tokens_per_step, params, layers, "
	" width, flops_per_token, warmup_steps, precision, peak_tflops, "
	" fact_origins) "
	"VALUES (" RUN_BY_UUID ", ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, "
	" ?12, ?13, ?14, ?15, json(?16))";

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

static const char ins_suspect_sql[] =
	"INSERT OR REPLACE INTO suspects (run_id, kind, subject, hosts, "
	" bad_node, reason) VALUES (" RUN_BY_UUID ", ?2, ?3, ?4, ?5, ?6)";

static const char upd_run_end_sql[] =
	"UPDATE runs SET status = ?2, exit_status = ?3, message = ?4, "
	" finished_at = ?5, heartbeat_at = ?6 WHERE uuid = ?1";

static const char heartbeat_sql[] =
	"UPDATE runs SET heartbeat_at = ?2 WHERE uuid = ?1 "
	"AND status = 'running'";

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

static char *dup_str(const char *s, int *bad)
{
	if (!s)
		return NULL;
	char *c = strdup(s);
	if (!c)
		*bad = 1;
	return c;
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
	return sqlite3_prepare_v2(em->db, sql, -1, st, NULL) == SQLITE_OK
		       ? SD_OK : SD_ERR_IO;
}

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

static int write_begin(struct emit *em, const struct sd_train_rec *r)
{
	sqlite3_stmt *st = NULL;
	char started[32], now[32];
	struct sd_buf ob = { 0 };
	int rc = SD_ERR_IO;
	sd_db_iso_time(r->started_at, started);
	sd_db_iso_time(sd_wall_now(), now);
	if (prepare(em, ins_run_sql, &st) != SD_OK)
		goto out;
	sd_db_bind_str(st, 1, r->uuid);
	sd_db_bind_str(st, 2, r->kind);
	sd_db_bind_str(st, 3, started);
	sd_db_bind_str(st, 4, now);
	sd_db_bind_str(st, 5, r->command_line);
	sd_db_bind_str(st, 6, r->tool_version);
	sd_db_bind_str(st, 7, r->backend);
	sd_db_bind_str(st, 8, r->backend_version);
	sd_db_bind_str(st, 9, r->user);
	sd_db_bind_str(st, 10, r->hostname);
	sqlite3_bind_int(st, 11, (int)getpid());
	sqlite3_bind_int(st, 12, r->nranks);
	if (emit(em, st) != SD_OK)
		goto out;
	sqlite3_finalize(st);
	st = NULL;
	if (r->has_job) {
		const struct sd_job_info *j = &r->job;
		if (prepare(em, ins_job_sql, &st) != SD_OK)
			goto out;
		sd_db_bind_str(st, 1, r->uuid);
		sd_db_bind_str(st, 2, j->launcher);
		sd_db_bind_str(st, 3, j->cluster);
		sd_db_bind_str(st, 4, j->job_id);
		sd_db_bind_str(st, 5, j->step_id);
		sd_db_bind_str(st, 6, j->nodelist);
		sqlite3_bind_int(st, 7, j->nnodes);
		sqlite3_bind_int(st, 8, j->tasks_per_node);
		if (emit(em, st) != SD_OK)
			goto out;
		sqlite3_finalize(st);
		st = NULL;
	}
	if (r->ranks && r->nranks > 0) {
		if (prepare(em, ins_rank_sql, &st) != SD_OK)
			goto out;
		for (int i = 0; i < r->nranks; i++) {
			const struct sd_rank_info *k = &r->ranks[i];
			sd_db_bind_str(st, 1, r->uuid);
			sqlite3_bind_int(st, 2, k->rank);
			sqlite3_bind_text(st, 3, k->host, -1, SQLITE_TRANSIENT);
			sqlite3_bind_int(st, 4, k->local_rank);
			sqlite3_bind_int(st, 5, k->pid);
			sd_db_bind_str(st, 6, k->dev.name);
			sd_db_bind_str(st, 7, k->dev.pci_bus_id);
			sd_db_bind_str(st, 8, k->dev.uuid);
			const struct sd_device_info *d = &k->dev;
			sqlite3_bind_int64(st, 9,
					   (sqlite3_int64)d->mem_total_bytes);
			sqlite3_bind_int64(st, 10,
					   (sqlite3_int64)d->mem_free_bytes);
			sd_db_bind_str(st, 11, k->dev.transport);
			if (emit(em, st) != SD_OK)
				goto out;
		}
		sqlite3_finalize(st);
		st = NULL;
	}
	const struct sd_train_facts *f = &r->facts;
	if (origins_json(f, &ob) || prepare(em, ins_train_run_sql, &st) !=
					   SD_OK)
		goto out;
	sd_db_bind_str(st, 1, r->uuid);
	sd_db_bind_str(st, 2, r->config);
	sd_db_bind_str(st, 3, r->log_path);
	sd_db_bind_str(st, 4, r->log_format);
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
	if (emit(em, st) != SD_OK)
		goto out;
	rc = SD_OK;
out:
	sd_buf_free(&ob);
	sqlite3_finalize(st);
	return rc;
}

static int write_steps(struct emit *em, const struct sd_train_rec *r,
		       size_t from, size_t to)
{
	sqlite3_stmt *st = NULL;
	if (from >= to)
		return SD_OK;
	if (prepare(em, ins_step_sql, &st) != SD_OK)
		return SD_ERR_IO;
	int rc = SD_OK;
	for (size_t i = from; i < to && rc == SD_OK; i++) {
		const struct rec_step *x = &r->steps[i];
		const struct sd_train_step *s = &x->s;
		sd_db_bind_str(st, 1, r->uuid);
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
		rc = emit(em, st);
	}
	sqlite3_finalize(st);
	return rc;
}

static int write_end(struct emit *em, const struct sd_train_rec *r)
{
	sqlite3_stmt *st = NULL;
	struct sd_buf ob = { 0 };
	char finished[32], now[32];
	int rc = SD_ERR_IO;
	const struct sd_train_summary *s = r->have_summary ? &r->summary : NULL;
	const struct sd_train_comparison *c = r->have_cmp ? &r->cmp : NULL;
	int n = 0;
	int bad = sd_buf_printf(&ob, "{");
	if (!bad && s && s->flops_origin != SD_TRAIN_UNKNOWN)
		bad = sd_buf_printf(&ob, "\"flops_per_token\":\"%s\"",
				    sd_train_origin_name(s->flops_origin)) ||
		      (n++, 0);
	if (!bad && s && s->peak.origin != SD_TRAIN_UNKNOWN)
		bad = sd_buf_printf(&ob, "%s\"peak_tflops\":\"%s\"",
				    n ? "," : "",
				    sd_train_origin_name(s->peak.origin));
	if (bad || sd_buf_printf(&ob, "}") ||
	    prepare(em, upd_train_run_sql, &st) != SD_OK)
		goto out;
	sd_db_bind_str(st, 1, r->uuid);
	if (s) {
		sd_db_bind_real(st, 2, s->flops_per_token);
		sd_db_bind_real(st, 3, s->peak.tflops);
		sd_db_bind_str(st, 4, s->peak.part);
	}
	sd_db_bind_str(st, 5, ob.data);
	if (c) {
		sd_db_bind_str(st, 6, r->reference_name);
		sd_db_bind_real(st, 7, c->tol.rel_tol);
		sd_db_bind_real(st, 8, c->tol.abs_tol);
		sd_db_bind_real(st, 9, c->tol.var_tol);
		sd_db_bind_str(st, 10, sd_train_verdict_name(c->verdict));
		sd_db_bind_str(st, 11, c->reason);
		if (c->nonfinite_step >= 0)
			sqlite3_bind_int64(st, 12, c->nonfinite_step);
	} else if (s && s->nonfinite_step >= 0) {
		sqlite3_bind_int64(st, 12, s->nonfinite_step);
	}
	if (r->lines_unparsed >= 0)
		sqlite3_bind_int64(st, 13, r->lines_unparsed);
	if (emit(em, st) != SD_OK)
		goto out;
	sqlite3_finalize(st);
	st = NULL;
	if (r->nmetrics) {
		if (prepare(em, ins_metric_sql, &st) != SD_OK)
			goto out;
		for (size_t i = 0; i < r->nmetrics; i++) {
			const struct rec_metric *m = &r->metrics[i];
			sd_db_bind_str(st, 1, r->uuid);
			sd_db_bind_str(st, 2, m->name);
			sd_db_bind_str(st, 3, m->unit);
			sqlite3_bind_double(st, 4, m->value);
			if (m->has_host)
				sd_db_bind_str(st, 5, m->host);
			if (m->rank >= 0)
				sqlite3_bind_int(st, 6, m->rank);
			if (emit(em, st) != SD_OK)
				goto out;
		}
		sqlite3_finalize(st);
		st = NULL;
	}
	if (r->nsus) {
		if (prepare(em, ins_suspect_sql, &st) != SD_OK)
			goto out;
		for (size_t i = 0; i < r->nsus; i++) {
			const struct rec_suspect *x = &r->sus[i];
			sd_db_bind_str(st, 1, r->uuid);
			/* NOT NULL columns: "" stays "" */
			sqlite3_bind_text(st, 2, x->kind, -1, SQLITE_TRANSIENT);
			sqlite3_bind_text(st, 3, x->subject, -1,
					  SQLITE_TRANSIENT);
			sqlite3_bind_text(st, 4, x->hosts, -1, SQLITE_TRANSIENT);
			sqlite3_bind_int(st, 5, x->bad_node != 0);
			sqlite3_bind_text(st, 6, x->reason, -1,
					  SQLITE_TRANSIENT);
			if (emit(em, st) != SD_OK)
				goto out;
		}
		sqlite3_finalize(st);
		st = NULL;
	}
	sd_db_iso_time(r->finished_at, finished);
	sd_db_iso_time(sd_wall_now(), now);
	if (prepare(em, upd_run_end_sql, &st) != SD_OK)
		goto out;
	sd_db_bind_str(st, 1, r->uuid);
	sd_db_bind_str(st, 2, r->status);
	sqlite3_bind_int(st, 3, r->exit_status);
	sd_db_bind_str(st, 4, r->message);
	sd_db_bind_str(st, 5, finished);
	sd_db_bind_str(st, 6, now);
	if (emit(em, st) != SD_OK)
		goto out;
	rc = SD_OK;
out:
	sd_buf_free(&ob);
	sqlite3_finalize(st);
	return rc;
}

/* The database's words for the last failure, kept once. */
static void note_loss(struct sd_train_rec *r)
{
	if (!r->lost_why[0]) {
		snprintf(r->lost_why, sizeof(r->lost_why), "%s",
			 sqlite3_errmsg(r->db));
		r->lost_code = sqlite3_errcode(r->db) & 0xff;
	}
}

static int pending(const struct sd_train_rec *r)
{
	return (r->begun && !r->begin_written) || r->nsteps > 0 ||
	       (r->ended && !r->end_written);
}

/* Write everything not yet written in one transaction.  SD_OK, or
 * SD_ERR_IO with nothing written (the rows stay kept). */
static int flush(struct sd_train_rec *r)
{
	if (!r->db || !r->begun || r->jn_done)
		return SD_OK;
	if (!pending(r))
		return SD_OK;
	struct emit em = { r->db, NULL };
	int rc = SD_ERR_IO;
	sqlite3_stmt *hb = NULL;
	if (sqlite3_exec(r->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) !=
	    SQLITE_OK) {
		note_loss(r);
		return SD_ERR_IO;
	}
	if (!r->begin_written && write_begin(&em, r) != SD_OK)
		goto fail;
	if (write_steps(&em, r, 0, r->nsteps) != SD_OK)
		goto fail;
	if (r->ended && !r->end_written) {
		if (write_end(&em, r) != SD_OK)
			goto fail;
	} else {
		char now[32];
		sd_db_iso_time(sd_wall_now(), now);
		if (prepare(&em, heartbeat_sql, &hb) != SD_OK)
			goto fail;
		sd_db_bind_str(hb, 1, r->uuid);
		sd_db_bind_str(hb, 2, now);
		if (emit(&em, hb) != SD_OK)
			goto fail;
	}
	if (sqlite3_exec(r->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
		goto fail;
	r->begin_written = 1;
	r->nsteps = 0; /* in the database: no longer kept */
	if (r->ended)
		r->end_written = 1;
	rc = SD_OK;
	goto out;
fail:
	note_loss(r);
	sqlite3_exec(r->db, "ROLLBACK", NULL, NULL, NULL);
out:
	sqlite3_finalize(hb);
	return rc;
}

/* What is not written, as the journal's SQL text (sqlite3_free), built on
 * an in-memory copy of the schema; NULL with jn_why. */
static char *journal_text(struct sd_train_rec *r)
{
	sqlite3 *mem = NULL;
	struct emit em = { NULL, NULL };
	char now[32];
	char *text = NULL;
	sd_db_iso_time(sd_wall_now(), now);
	if (sqlite3_open(":memory:", &mem) != SQLITE_OK ||
	    sqlite3_exec(mem, sd_db_schema_sql, NULL, NULL, NULL) !=
		    SQLITE_OK) {
		snprintf(r->jn_why, sizeof(r->jn_why), "cannot build it: %s",
			 mem ? sqlite3_errmsg(mem) : "out of memory");
		goto out;
	}
	em.db = mem;
	em.out = sqlite3_str_new(mem);
	sqlite3_str_appendf(em.out, "-- training run %s, ended %s: what its "
			    "database did not take (%s)\n", r->uuid, now,
			    r->lost_why[0] ? r->lost_why : "write failed");
	if ((!r->begin_written && write_begin(&em, r) != SD_OK) ||
	    write_steps(&em, r, 0, r->nsteps) != SD_OK ||
	    (r->ended && !r->end_written && write_end(&em, r) != SD_OK) ||
	    sqlite3_str_errcode(em.out) != SQLITE_OK) {
		snprintf(r->jn_why, sizeof(r->jn_why), "cannot build it: %s",
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

/* At the end: keep in the journal what still could not be written,
 * beside the database or, when that fails too, in $TMPDIR.  A row the
 * database refused on its own terms (a constraint) is not kept: replayed,
 * it would be refused again and hold back the whole journal. */
static void write_journal(struct sd_train_rec *r)
{
	if (!pending(r) || r->jn_done)
		return;
	if (r->lost_code == SQLITE_CONSTRAINT) {
		snprintf(r->jn_why, sizeof(r->jn_why), "the database refused "
			 "the rows themselves");
		return;
	}
	char *text = journal_text(r);
	if (!text)
		return;
	char err[4400];
	sd_db_journal_path(r->path, r->journal, sizeof(r->journal));
	if (sd_db_journal_append(r->journal, text, err, sizeof(err)) != SD_OK) {
		sd_strlcpy(r->jn_why, err, sizeof(r->jn_why));
		const char *tmp = getenv("TMPDIR");
		const char *base = strrchr(r->path, '/');
		base = base ? base + 1 : r->path;
		snprintf(r->journal, sizeof(r->journal),
			 "%s/%s.run-%.8s.pending.sql",
			 tmp && *tmp ? tmp : "/tmp", base, r->uuid);
		if (sd_db_journal_append(r->journal, text, err, sizeof(err)) !=
		    SD_OK) {
			r->journal[0] = '\0';
			sqlite3_free(text);
			return;
		}
	}
	sqlite3_free(text);
	r->jn_done = 1;
}

int sd_train_rec_open(const char *db_path_or_null, int flags,
		      struct sd_train_rec **out, char *note, size_t notelen,
		      char *err, size_t errlen)
{
	const char *path = sd_db_resolve_path(db_path_or_null);
	struct sd_train_rec *r = calloc(1, sizeof(*r));
	*out = NULL;
	if (note && notelen)
		note[0] = '\0';
	if (!r || !(r->path = strdup(path))) {
		free(r);
		snprintf(err, errlen, "out of memory opening the database");
		return SD_ERR_NOMEM;
	}
	r->atomic = (flags & SD_TRAIN_REC_ATOMIC) != 0;
	r->lines_unparsed = -1;
	if (strcmp(path, "none") == 0) {
		*out = r;
		return SD_OK;
	}
	char n1[512] = "";
	int rc = sd_db_open_note(path, SD_DB_CREATE, &r->db, n1, sizeof(n1),
				 err, errlen);
	if (rc != SD_OK) {
		sd_train_rec_close(r);
		return rc;
	}
	/* what an earlier run could not write, first */
	char jpath[4200], jerr[4600];
	int nst = 0, ntests = 0;
	sd_db_journal_path(path, jpath, sizeof(jpath));
	if (sd_db_journal_replay(r->db, jpath, &nst, &ntests, jerr,
				 sizeof(jerr)) != SD_OK) {
		if (note && notelen)
			snprintf(note, notelen, "%s%s%s; it is kept (shakedown "
				 "db recover)", n1, n1[0] ? "; " : "", jerr);
	} else if (nst && note && notelen) {
		snprintf(note, notelen, "%s%sreplayed %s into %s: what an "
			 "earlier run could not write (%d statements)%s%s", n1,
			 n1[0] ? "; " : "", jpath, path, nst,
			 jerr[0] ? "; " : "", jerr);
	} else if (note && notelen) {
		snprintf(note, notelen, "%s", n1);
	}
	*out = r;
	return SD_OK;
}

const char *sd_train_rec_uuid(const struct sd_train_rec *r)
{
	return r && r->begun ? r->uuid : "";
}

const char *sd_train_rec_path(const struct sd_train_rec *r)
{
	return r ? r->path : "none";
}

int sd_train_rec_begin(struct sd_train_rec *r,
		       const struct sd_train_run_info *info, char *err,
		       size_t errlen)
{
	int bad = 0;
	if (r->begun) {
		snprintf(err, errlen, "the training run is begun already");
		return SD_ERR_INVALID;
	}
	if (!info || !info->config || !*info->config || !info->facts) {
		snprintf(err, errlen, "a training run needs its config and "
			 "facts to be recorded");
		return SD_ERR_INVALID;
	}
	if (!info->kind || (strcmp(info->kind, "train") != 0 &&
			    strcmp(info->kind, "ingest") != 0)) {
		snprintf(err, errlen, "a training run's kind is train or "
			 "ingest, not '%s'", info->kind ? info->kind : "");
		return SD_ERR_INVALID;
	}
	if (info->uuid && *info->uuid)
		sd_strlcpy(r->uuid, info->uuid, sizeof(r->uuid));
	else
		sd_uuid4(r->uuid);
	r->kind = dup_str(info->kind, &bad);
	r->command_line = dup_str(info->command_line, &bad);
	r->tool_version = dup_str(info->tool_version, &bad);
	r->backend = dup_str(info->backend, &bad);
	r->backend_version = dup_str(info->backend_version, &bad);
	r->user = dup_str(info->user, &bad);
	r->config = dup_str(info->config, &bad);
	r->log_path = dup_str(info->log_path, &bad);
	r->log_format = dup_str(info->log_format, &bad);
	r->started_at = info->started_at > 0 ? info->started_at : sd_wall_now();
	r->nranks = info->nranks;
	if (info->job) {
		r->has_job = 1;
		r->job = *info->job;
	}
	if (info->ranks && info->nranks > 0) {
		r->ranks = malloc((size_t)info->nranks * sizeof(*r->ranks));
		if (r->ranks)
			memcpy(r->ranks, info->ranks,
			       (size_t)info->nranks * sizeof(*r->ranks));
		else
			bad = 1;
	}
	r->facts = *info->facts;
	gethostname(r->hostname, sizeof(r->hostname) - 1);
	if (bad) {
		snprintf(err, errlen, "out of memory recording the training "
			 "run");
		return SD_ERR_NOMEM;
	}
	r->begun = 1;
	if (r->atomic || !r->db)
		return SD_OK;
	if (flush(r) != SD_OK) {
		snprintf(err, errlen, "%s: the training run could not be "
			 "written now (%s); it is kept and written again later",
			 r->path, r->lost_why);
		return SD_ERR_IO;
	}
	return SD_OK;
}

/* The series state of `rank`, made when new; NULL when out of memory. */
static struct rank_state *rank_state(struct sd_train_rec *r, int rank,
				     int *fresh)
{
	*fresh = 0;
	for (size_t i = 0; i < r->nrs; i++)
		if (r->rs[i].rank == rank)
			return &r->rs[i];
	void *p = realloc(r->rs, (r->nrs + 1) * sizeof(*r->rs));
	if (!p)
		return NULL;
	r->rs = p;
	*fresh = 1;
	struct rank_state *x = &r->rs[r->nrs++];
	memset(x, 0, sizeof(*x));
	x->rank = rank;
	return x;
}

int sd_train_rec_steps(struct sd_train_rec *r, const struct sd_train_step *s,
		       size_t n, char *err, size_t errlen)
{
	if (!r->begun || r->ended) {
		snprintf(err, errlen, "steps of a training run %s",
			 r->begun ? "after its end" : "before its beginning");
		return SD_ERR_INVALID;
	}
	if (n == 0)
		return SD_OK;
	/* all or nothing: the order first (against what came before),
	 * then the room */
	for (size_t i = 0; i < n; i++) {
		int rank = s[i].rank < 0 ? -1 : s[i].rank;
		long prev = -1;
		for (size_t k = i; k-- > 0;)
			if ((s[k].rank < 0 ? -1 : s[k].rank) == rank) {
				prev = s[k].step;
				break;
			}
		if (prev < 0)
			for (size_t k = 0; k < r->nrs; k++)
				if (r->rs[k].rank == rank)
					prev = r->rs[k].prev.step;
		if (s[i].step < 0 || s[i].step <= prev) {
			snprintf(err, errlen, "step %ld%s follows step %ld: "
				 "steps must increase", s[i].step,
				 rank >= 0 ? " of a rank" : "", prev);
			return SD_ERR_INVALID;
		}
	}
	if (r->nsteps + n > r->capsteps) {
		size_t cap = r->capsteps ? r->capsteps : 256;
		while (cap < r->nsteps + n)
			cap *= 2;
		void *p = realloc(r->steps, cap * sizeof(*r->steps));
		if (!p) {
			snprintf(err, errlen, "out of memory keeping %zu steps",
				 r->nsteps + n);
			return SD_ERR_NOMEM;
		}
		r->steps = p;
		r->capsteps = cap;
	}
	double warmup = r->facts.warmup_steps.origin != SD_TRAIN_UNKNOWN
				? r->facts.warmup_steps.value : 0.0;
	for (size_t i = 0; i < n; i++) {
		int fresh;
		struct sd_train_step x = s[i];
		if (x.rank < 0)
			x.rank = -1;
		struct rank_state *rs = rank_state(r, x.rank, &fresh);
		if (!rs) {
			snprintf(err, errlen, "out of memory keeping steps");
			return SD_ERR_NOMEM;
		}
		struct rec_step *k = &r->steps[r->nsteps++];
		k->s = x;
		if (fresh) {
			rs->first = x;
			k->span = -1;
			k->timed = 0;
		} else {
			/* the rule of sd_train_step_timed() on the series
			 * (first, ..., previous, this) */
			struct sd_train_step three[3] = { rs->first, rs->prev,
							  x };
			k->span = x.step - rs->prev.step;
			k->timed = sd_train_step_timed(three, 2, warmup);
		}
		rs->prev = x;
	}
	if (r->atomic || !r->db)
		return SD_OK;
	if (flush(r) != SD_OK) {
		snprintf(err, errlen, "%s: %zu steps could not be written now "
			 "(%s); they are kept and written again later", r->path,
			 r->nsteps, r->lost_why);
		return SD_ERR_IO;
	}
	return SD_OK;
}

static const char *run_status(const char *status)
{
	static const char *const ok[] = { "passed", "failed", "error",
					  "cancelled" };
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		if (status && strcmp(status, ok[i]) == 0)
			return ok[i];
	return "error";
}

static void copy_metric(struct rec_metric *d, const struct sd_train_metric *m)
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

int sd_train_rec_finish(struct sd_train_rec *r, const struct sd_train_end *end,
			char *err, size_t errlen)
{
	int bad = 0;
	if (!r->begun || r->ended) {
		snprintf(err, errlen, "the end of a training run %s",
			 r->begun ? "given twice" : "before its beginning");
		return SD_ERR_INVALID;
	}
	const char *st = run_status(end->status);
	r->status = dup_str(st, &bad);
	if (end->status && strcmp(st, end->status) != 0 && !end->message)
		r->message = dup_str(end->status, &bad);
	else
		r->message = dup_str(end->message, &bad);
	r->exit_status = end->exit_status;
	r->finished_at = end->finished_at > 0 ? end->finished_at
					      : sd_wall_now();
	if (end->summary) {
		r->have_summary = 1;
		r->summary = *end->summary;
	}
	if (end->cmp) {
		r->have_cmp = 1;
		r->cmp = *end->cmp;
		r->reference_name = dup_str(end->reference_name, &bad);
	}
	r->lines_unparsed = end->lines_unparsed;
	struct sd_train_metric rows[SD_TRAIN_MAX_METRICS];
	size_t nr = sd_train_metric_rows(end->summary, end->cmp, rows,
					 SD_TRAIN_MAX_METRICS);
	size_t nextra = 0;
	for (size_t i = 0; end->extra && i < end->nextra; i++)
		nextra += isfinite(end->extra[i].value) && end->extra[i].name;
	r->metrics = calloc(nr + nextra + 1, sizeof(*r->metrics));
	if (!r->metrics)
		bad = 1;
	else {
		for (size_t i = 0; i < nr; i++)
			copy_metric(&r->metrics[r->nmetrics++], &rows[i]);
		for (size_t i = 0; end->extra && i < end->nextra; i++)
			if (isfinite(end->extra[i].value) && end->extra[i].name)
				copy_metric(&r->metrics[r->nmetrics++],
					    &end->extra[i]);
	}
	if (end->nsuspects && !(r->sus = calloc(end->nsuspects,
						 sizeof(*r->sus))))
		bad = 1;
	for (size_t i = 0; r->sus && i < end->nsuspects; i++) {
		const struct sd_suspect_info *x = &end->suspects[i];
		struct rec_suspect *y = &r->sus[r->nsus++];
		y->kind = dup_str(x->kind ? x->kind : "node", &bad);
		y->subject = dup_str(x->subject ? x->subject : "", &bad);
		y->hosts = dup_str(x->hosts ? x->hosts : "", &bad);
		y->reason = dup_str(x->reason ? x->reason : "", &bad);
		y->bad_node = x->bad_node;
	}
	if (bad) {
		snprintf(err, errlen, "out of memory ending the training run");
		return SD_ERR_NOMEM;
	}
	r->ended = 1;
	if (!r->db)
		return SD_OK;
	if (flush(r) == SD_OK)
		return SD_OK;
	write_journal(r);
	sd_train_rec_incomplete(r, err, errlen);
	return SD_ERR_IO;
}

/* What to do about the cause, by SQLite's code; NULL: the file is
 * damaged. */
static const char *loss_fix(int code)
{
	switch (code) {
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

int sd_train_rec_incomplete(const struct sd_train_rec *r, char *msg,
			    size_t len)
{
	if (!r || !r->db)
		return 0;
	int lbegin = r->begun && !r->begin_written;
	size_t lsteps = r->nsteps;
	int lend = r->ended && !r->end_written;
	if (!lbegin && !lsteps && !lend)
		return 0;
	char what[160], nsteps[32] = "";
	if (lsteps)
		snprintf(nsteps, sizeof(nsteps), "%zu step%s", lsteps,
			 lsteps == 1 ? "" : "s");
	snprintf(what, sizeof(what), "%s%s%s%s%s",
		 lbegin ? "the run itself" : "", lbegin && lsteps ? ", " : "",
		 nsteps, (lbegin || lsteps) && lend ? ", " : "",
		 lend ? "its end and metrics" : "");
	const char *why = r->lost_why[0] ? r->lost_why : "write failed";
	const char *fix = loss_fix(r->lost_code);
	char own[4200], jarg[4300] = "";
	sd_db_journal_path(r->path, own, sizeof(own));
	if (r->jn_done && strcmp(r->journal, own) != 0)
		snprintf(jarg, sizeof(jarg), " --journal %s", r->journal);
	int u = snprintf(msg, len, "the record in %s is incomplete: %s could "
			 "not be written (%s)", r->path, what, why);
	size_t at = u < 0 ? 0 : (size_t)u < len ? (size_t)u : len;
	if (r->jn_done && fix)
		snprintf(msg + at, len - at, "; all of it is kept in %s: %s, "
			 "then run 'shakedown db recover --db %s%s'%s",
			 r->journal, fix, r->path, jarg,
			 jarg[0] ? "" : " (the next run into it replays it "
					"too)");
	else if (r->jn_done)
		snprintf(msg + at, len - at, "; all of it is kept in %s; the "
			 "file is damaged: run 'shakedown db recover --db %s "
			 "--into NEW.db%s' to copy what it still holds into "
			 "NEW.db with what this run kept", r->journal, r->path,
			 jarg);
	else
		snprintf(msg + at, len - at, ", nor kept in a journal (%s); "
			 "the printed results are the ones to keep%s%s",
			 r->jn_why[0] ? r->jn_why
			 : r->ended   ? "nothing to keep"
				      : "the run has not ended",
			 fix ? "; " : "", fix ? fix : "");
	return 1;
}

void sd_train_rec_close(struct sd_train_rec *r)
{
	if (!r)
		return;
	sd_db_close(r->db);
	free(r->path);
	free(r->kind);
	free(r->command_line);
	free(r->tool_version);
	free(r->backend);
	free(r->backend_version);
	free(r->user);
	free(r->config);
	free(r->log_path);
	free(r->log_format);
	free(r->ranks);
	free(r->steps);
	free(r->rs);
	free(r->status);
	free(r->message);
	free(r->reference_name);
	free(r->metrics);
	for (size_t i = 0; i < r->nsus; i++) {
		free(r->sus[i].kind);
		free(r->sus[i].subject);
		free(r->sus[i].hosts);
		free(r->sus[i].reason);
	}
	free(r->sus);
	free(r);
}

/* Find a training run: runs.id, uuid, and its train_runs row. */
static int find_train_run(sqlite3 *db, const char *run_ref, int64_t *id,
			  char uuid[37], char *err, size_t errlen)
{
	int rc = sd_db_find_run(db, run_ref, id, uuid, err, errlen);
	if (rc != SD_OK)
		return rc;
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(db, "SELECT 1 FROM train_runs WHERE run_id = ?1",
			       -1, &st, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "reading run %s: %s", uuid,
			 sqlite3_errmsg(db));
		return SD_ERR_IO;
	}
	sqlite3_bind_int64(st, 1, *id);
	int step = sqlite3_step(st);
	sqlite3_finalize(st);
	if (step == SQLITE_ROW)
		return SD_OK;
	if (step != SQLITE_DONE) {
		snprintf(err, errlen, "reading run %s: %s", uuid,
			 sqlite3_errmsg(db));
		return SD_ERR_IO;
	}
	snprintf(err, errlen, "run %s is not a training run (no train_runs "
		 "row); list them with: sqlite3 DB 'SELECT uuid, started_at "
		 "FROM train_summary_v'", uuid);
	return SD_ERR_INVALID;
}

int sd_train_db_load_steps(sqlite3 *db, const char *run_ref,
			   struct sd_train_step **steps, size_t *n,
			   char **config, char uuid[37], char *err,
			   size_t errlen)
{
	sqlite3_stmt *st = NULL;
	int64_t id;
	char u[37];
	struct sd_train_step *v = NULL;
	size_t nv = 0, cap = 0;
	*steps = NULL;
	*n = 0;
	if (config)
		*config = NULL;
	int rc = find_train_run(db, run_ref, &id, u, err, errlen);
	if (rc != SD_OK)
		return rc;
	if (uuid)
		memcpy(uuid, u, 37);
	rc = SD_ERR_IO;
	if (sqlite3_prepare_v2(db,
		"SELECT step, loss, loss_nonfinite, step_s, tokens, compute_s, "
		" comm_s, optim_s FROM train_steps WHERE run_id = ?1 AND "
		" rank IS NULL ORDER BY step", -1, &st, NULL) != SQLITE_OK)
		goto dberr;
	sqlite3_bind_int64(st, 1, id);
	int step;
	while ((step = sqlite3_step(st)) == SQLITE_ROW) {
		if (nv == cap) {
			size_t nc = cap ? cap * 2 : 256;
			void *p = realloc(v, nc * sizeof(*v));
			if (!p) {
				rc = SD_ERR_NOMEM;
				snprintf(err, errlen, "out of memory reading "
					 "the steps of run %s", u);
				goto out;
			}
			v = p;
			cap = nc;
		}
		struct sd_train_step *x = &v[nv++];
		memset(x, 0, sizeof(*x));
		x->rank = -1;
		x->step = (long)sqlite3_column_int64(st, 0);
		const char *nf = (const char *)sqlite3_column_text(st, 2);
		if (nf) {
			x->has |= SD_STEP_LOSS;
			x->loss = strcmp(nf, "nan") == 0 ? NAN
				  : strcmp(nf, "-inf") == 0 ? -INFINITY
							    : INFINITY;
		} else if (sqlite3_column_type(st, 1) != SQLITE_NULL) {
			x->has |= SD_STEP_LOSS;
			x->loss = sqlite3_column_double(st, 1);
		}
		static const struct {
			int col;
			unsigned bit;
			size_t off;
		} cols[] = {
			{ 3, SD_STEP_TIME, offsetof(struct sd_train_step,
						    step_s) },
			{ 4, SD_STEP_TOKENS, offsetof(struct sd_train_step,
						      tokens) },
			{ 5, SD_STEP_COMPUTE, offsetof(struct sd_train_step,
						       compute_s) },
			{ 6, SD_STEP_COMM, offsetof(struct sd_train_step,
						    comm_s) },
			{ 7, SD_STEP_OPTIM, offsetof(struct sd_train_step,
						     optim_s) },
		};
		for (size_t k = 0; k < sizeof(cols) / sizeof(cols[0]); k++) {
			if (sqlite3_column_type(st, cols[k].col) == SQLITE_NULL)
				continue;
			double d = sqlite3_column_double(st, cols[k].col);
			memcpy((char *)x + cols[k].off, &d, sizeof(d));
			x->has |= cols[k].bit;
		}
	}
	if (step != SQLITE_DONE)
		goto dberr;
	sqlite3_finalize(st);
	st = NULL;
	if (config) {
		if (sqlite3_prepare_v2(db, "SELECT config FROM train_runs "
				       "WHERE run_id = ?1", -1, &st, NULL) !=
		    SQLITE_OK)
			goto dberr;
		sqlite3_bind_int64(st, 1, id);
		if (sqlite3_step(st) != SQLITE_ROW)
			goto dberr;
		*config = strdup((const char *)sqlite3_column_text(st, 0));
		if (!*config) {
			rc = SD_ERR_NOMEM;
			snprintf(err, errlen, "out of memory reading run %s",
				 u);
			goto out;
		}
	}
	*steps = v;
	*n = nv;
	v = NULL;
	rc = SD_OK;
	goto out;
dberr:
	snprintf(err, errlen, "reading the steps of run %s: %s", u,
		 sqlite3_errmsg(db));
out:
	sqlite3_finalize(st);
	free(v);
	return rc;
}

/* The recomputation: aggregates of the job's timed rows and the facts. */
static const char recompute_sql[] =
"SELECT (SELECT count(*) FROM train_steps s WHERE s.run_id = t.run_id"
"   AND s.rank IS NULL AND s.timed = 1),"
" (SELECT sum(s.span_steps) FROM train_steps s WHERE s.run_id = t.run_id"
"   AND s.rank IS NULL AND s.timed = 1),"
" (SELECT sum(coalesce(s.tokens, t.tokens_per_step) * s.span_steps)"
"   FROM train_steps s WHERE s.run_id = t.run_id AND s.rank IS NULL"
"   AND s.timed = 1),"
" (SELECT sum(s.step_s * s.span_steps) FROM train_steps s"
"   WHERE s.run_id = t.run_id AND s.rank IS NULL AND s.timed = 1),"
" (SELECT count(*) FROM train_steps s WHERE s.run_id = t.run_id"
"   AND s.rank IS NULL AND s.timed = 1"
"   AND coalesce(s.tokens, t.tokens_per_step) IS NULL),"
" t.devices, t.flops_per_token, t.peak_tflops,"
" (SELECT value FROM train_metrics m WHERE m.run_id = t.run_id"
"   AND m.name = 'tgs' AND m.host IS NULL AND m.rank IS NULL),"
" (SELECT value FROM train_metrics m WHERE m.run_id = t.run_id"
"   AND m.name = 'tflops' AND m.host IS NULL AND m.rank IS NULL),"
" (SELECT value FROM train_metrics m WHERE m.run_id = t.run_id"
"   AND m.name = 'mfu' AND m.host IS NULL AND m.rank IS NULL) "
"FROM train_runs t WHERE t.run_id = ?1";

static double col_real(sqlite3_stmt *st, int i)
{
	return sqlite3_column_type(st, i) == SQLITE_NULL
		       ? NAN : sqlite3_column_double(st, i);
}

int sd_train_db_recompute(sqlite3 *db, const char *run_ref,
			  struct sd_train_recomputed *out, char *err,
			  size_t errlen)
{
	int64_t id;
	memset(out, 0, sizeof(*out));
	out->tgs = out->tflops = out->mfu = NAN;
	out->recorded_tgs = out->recorded_tflops = out->recorded_mfu = NAN;
	int rc = find_train_run(db, run_ref, &id, out->uuid, err, errlen);
	if (rc != SD_OK)
		return rc;
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(db, recompute_sql, -1, &st, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "recomputing run %s: %s", out->uuid,
			 sqlite3_errmsg(db));
		return SD_ERR_IO;
	}
	sqlite3_bind_int64(st, 1, id);
	if (sqlite3_step(st) != SQLITE_ROW) {
		snprintf(err, errlen, "recomputing run %s: %s", out->uuid,
			 sqlite3_errmsg(db));
		sqlite3_finalize(st);
		return SD_ERR_IO;
	}
	out->timed_rows = (long)sqlite3_column_int64(st, 0);
	out->timed_steps = (long)sqlite3_column_int64(st, 1);
	out->timed_tokens = col_real(st, 2);
	out->timed_s = col_real(st, 3);
	long no_tokens = (long)sqlite3_column_int64(st, 4);
	double devices = col_real(st, 5), fpt = col_real(st, 6),
	       peak = col_real(st, 7);
	out->recorded_tgs = col_real(st, 8);
	out->recorded_tflops = col_real(st, 9);
	out->recorded_mfu = col_real(st, 10);
	sqlite3_finalize(st);
	if (out->timed_rows > 0 && no_tokens == 0 && devices >= 1 &&
	    out->timed_s > 0)
		out->tgs = out->timed_tokens / out->timed_s / devices;
	out->tflops = fpt * out->tgs / 1e12;
	out->mfu = out->tflops / peak;
	return SD_OK;
}

/* The training part of a report, built by SQLite (?1 = runs.id). */
static const char run_json_sql[] =
"SELECT json_object("
" 'kind', r.run_kind, 'config', t.config,"
" 'log', iif(t.log_path IS NULL, NULL, json_object('path', t.log_path,"
"  'format', t.log_format, 'lines_unparsed', t.lines_unparsed)),"
" 'device_name', t.device_name, 'precision', t.precision,"
" 'facts', json_object("
"  'devices', json_object('value', t.devices, 'origin',"
"   json_extract(t.fact_origins, '$.devices')),"
"  'seq_len', json_object('value', t.seq_len, 'origin',"
"   json_extract(t.fact_origins, '$.seq_len')),"
"  'tokens_per_step', json_object('value', t.tokens_per_step, 'origin',"
"   json_extract(t.fact_origins, '$.tokens_per_step')),"
"  'params', json_object('value', t.params, 'origin',"
"   json_extract(t.fact_origins, '$.params')),"
"  'layers', json_object('value', t.layers, 'origin',"
"   json_extract(t.fact_origins, '$.layers')),"
"  'width', json_object('value', t.width, 'origin',"
"   json_extract(t.fact_origins, '$.width')),"
"  'flops_per_token', json_object('value', t.flops_per_token, 'origin',"
"   json_extract(t.fact_origins, '$.flops_per_token')),"
"  'warmup_steps', json_object('value', t.warmup_steps, 'origin',"
"   json_extract(t.fact_origins, '$.warmup_steps')),"
"  'peak_tflops', json_object('value', t.peak_tflops, 'origin',"
"   json_extract(t.fact_origins, '$.peak_tflops'), 'part', t.peak_part),"
"  'device_name', json_object('value', t.device_name, 'origin',"
"   json_extract(t.fact_origins, '$.device_name'))),"
" 'reference', iif(t.reference_name IS NULL, NULL, json_object("
"  'name', t.reference_name, 'rel_tol', t.rel_tol, 'abs_tol', t.abs_tol,"
"  'var_tol', t.var_tol)),"
" 'verdict', iif(t.verdict IS NULL, NULL, json_object('result', t.verdict,"
"  'reason', t.verdict_reason, 'nonfinite_step', t.nonfinite_step)),"
" 'metrics', json((SELECT json_group_array(json_object('name', m.name,"
"  'unit', m.unit, 'value', m.value, 'host', m.host, 'rank', m.rank))"
"  FROM (SELECT * FROM train_metrics WHERE run_id = r.id"
"   ORDER BY rank IS NOT NULL, host IS NOT NULL, rank, host, id) m)),"
" 'steps', json((SELECT json_group_array(json_object('step', s.step,"
"  'span_steps', s.span_steps, 'loss', s.loss,"
"  'loss_nonfinite', s.loss_nonfinite, 'step_s', s.step_s,"
"  'tokens', s.tokens, 'compute_s', s.compute_s, 'comm_s', s.comm_s,"
"  'optim_s', s.optim_s, 'timed', json(iif(s.timed, 'true', 'false'))))"
"  FROM (SELECT * FROM train_steps WHERE run_id = r.id AND rank IS NULL"
"   ORDER BY step) s))) "
"FROM runs r JOIN train_runs t ON t.run_id = r.id WHERE r.id = ?1";

int sd_train_db_run_json(sqlite3 *db, int64_t run_id, char **json, char *err,
			 size_t errlen)
{
	sqlite3_stmt *st = NULL;
	*json = NULL;
	if (sqlite3_prepare_v2(db, run_json_sql, -1, &st, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "building the training report: %s",
			 sqlite3_errmsg(db));
		return SD_ERR_IO;
	}
	sqlite3_bind_int64(st, 1, run_id);
	int step = sqlite3_step(st);
	int rc = SD_OK;
	if (step == SQLITE_ROW) {
		const char *t = (const char *)sqlite3_column_text(st, 0);
		*json = strdup(t ? t : "null");
		if (!*json) {
			snprintf(err, errlen, "out of memory building the "
				 "training report");
			rc = SD_ERR_NOMEM;
		}
	} else if (step != SQLITE_DONE) {
		snprintf(err, errlen, "building the training report: %s",
			 sqlite3_errmsg(db));
		rc = SD_ERR_IO;
	}
	sqlite3_finalize(st);
	return rc;
}

/* BEGIN IMMEDIATE with the database's words on failure. */
static int begin_tx(sqlite3 *db, const char *what, char *err, size_t errlen)
{
	if (sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL) == SQLITE_OK)
		return SD_OK;
	snprintf(err, errlen, "%s: cannot write the database (%s)", what,
		 sqlite3_errmsg(db));
	return SD_ERR_IO;
}

static int commit_tx(sqlite3 *db, const char *what, char *err, size_t errlen)
{
	if (sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) == SQLITE_OK)
		return SD_OK;
	snprintf(err, errlen, "%s: cannot commit (%s)", what,
		 sqlite3_errmsg(db));
	sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
	return SD_ERR_IO;
}

/* The id of reference `name` inside a transaction: 1 found, 0 not, -1
 * error (err filled). */
static int ref_id(sqlite3 *db, const char *name, int64_t *id, char *err,
		  size_t errlen)
{
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(db, "SELECT id FROM train_references WHERE "
			       "name = ?1", -1, &st, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "reading reference '%s': %s", name,
			 sqlite3_errmsg(db));
		return -1;
	}
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	int step = sqlite3_step(st), found = 0;
	if (step == SQLITE_ROW) {
		*id = sqlite3_column_int64(st, 0);
		found = 1;
	} else if (step != SQLITE_DONE) {
		snprintf(err, errlen, "reading reference '%s': %s", name,
			 sqlite3_errmsg(db));
		found = -1;
	}
	sqlite3_finalize(st);
	return found;
}

/* Insert ref (the name free), in the caller's transaction. */
static int insert_ref(sqlite3 *db, const struct sd_train_reference *ref,
		      char *err, size_t errlen)
{
	sqlite3_stmt *st = NULL;
	char now[32];
	int curves = 0;
	for (size_t i = 0; i < ref->n; i++)
		if (ref->steps[i].n > curves)
			curves = ref->steps[i].n;
	sd_db_iso_time(sd_wall_now(), now);
	if (sqlite3_prepare_v2(db, "INSERT INTO train_references (name, "
			       "created_at, description, config, source, "
			       "curves) VALUES (?1, ?2, ?3, ?4, ?5, ?6)", -1,
			       &st, NULL) != SQLITE_OK)
		goto fail;
	sqlite3_bind_text(st, 1, ref->name, -1, SQLITE_STATIC);
	sd_db_bind_str(st, 2, ref->created_at[0] ? ref->created_at : now);
	sd_db_bind_str(st, 3, ref->description);
	sqlite3_bind_text(st, 4, ref->config, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 5, ref->source && *ref->source ? ref->source
							      : "unknown",
			  -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 6, curves);
	if (sqlite3_step(st) != SQLITE_DONE)
		goto fail;
	sqlite3_finalize(st);
	st = NULL;
	int64_t id = sqlite3_last_insert_rowid(db);
	if (sqlite3_prepare_v2(db, "INSERT INTO train_reference_steps "
			       "(reference_id, step, loss_mean, loss_spread, "
			       "curves) VALUES (?1, ?2, ?3, ?4, ?5)", -1, &st,
			       NULL) != SQLITE_OK)
		goto fail;
	for (size_t i = 0; i < ref->n; i++) {
		sqlite3_bind_int64(st, 1, id);
		sqlite3_bind_int64(st, 2, ref->steps[i].step);
		sqlite3_bind_double(st, 3, ref->steps[i].mean);
		sqlite3_bind_double(st, 4, ref->steps[i].spread);
		sqlite3_bind_int(st, 5, ref->steps[i].n);
		if (sqlite3_step(st) != SQLITE_DONE)
			goto fail;
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	return SD_OK;
fail:
	snprintf(err, errlen, "storing reference '%s': %s", ref->name,
		 sqlite3_errmsg(db));
	sqlite3_finalize(st);
	return SD_ERR_IO;
}

int sd_train_db_ref_store(sqlite3 *db, const struct sd_train_reference *ref,
			  int replace, char *err, size_t errlen)
{
	int rc = sd_train_ref_check_name(ref->name, err, errlen);
	if (rc != SD_OK)
		return rc;
	if (!ref->config || !*ref->config || ref->n == 0) {
		snprintf(err, errlen, "reference '%s' needs a config and steps "
			 "to be stored", ref->name);
		return SD_ERR_INVALID;
	}
	for (size_t i = 0; i < ref->n; i++)
		if (!isfinite(ref->steps[i].mean) ||
		    !isfinite(ref->steps[i].spread) || ref->steps[i].n < 1 ||
		    (i && ref->steps[i].step <= ref->steps[i - 1].step)) {
			snprintf(err, errlen, "reference '%s': step %ld is out "
				 "of order or not a finite mean, spread and "
				 "count", ref->name, ref->steps[i].step);
			return SD_ERR_INVALID;
		}
	rc = begin_tx(db, "storing the reference", err, errlen);
	if (rc != SD_OK)
		return rc;
	int64_t id;
	int found = ref_id(db, ref->name, &id, err, errlen);
	if (found < 0) {
		rc = SD_ERR_IO;
		goto fail;
	}
	if (found && !replace) {
		snprintf(err, errlen, "reference '%s' exists; delete it first "
			 "(shakedown reference delete %s) or choose another "
			 "name", ref->name, ref->name);
		rc = SD_ERR_INVALID;
		goto fail;
	}
	if (found) {
		sqlite3_stmt *st = NULL;
		if (sqlite3_prepare_v2(db, "DELETE FROM train_references WHERE "
				       "id = ?1", -1, &st, NULL) != SQLITE_OK ||
		    (sqlite3_bind_int64(st, 1, id), sqlite3_step(st)) !=
			    SQLITE_DONE) {
			snprintf(err, errlen, "replacing reference '%s': %s",
				 ref->name, sqlite3_errmsg(db));
			sqlite3_finalize(st);
			rc = SD_ERR_IO;
			goto fail;
		}
		sqlite3_finalize(st);
	}
	rc = insert_ref(db, ref, err, errlen);
	if (rc != SD_OK)
		goto fail;
	return commit_tx(db, "storing the reference", err, errlen);
fail:
	sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
	return rc;
}

static void no_such_ref(const char *name, char *err, size_t errlen)
{
	snprintf(err, errlen, "no reference '%s' in the database; list them "
		 "with 'shakedown reference list'", name);
}

int sd_train_db_ref_load(sqlite3 *db, const char *name,
			 struct sd_train_reference *out, char *err,
			 size_t errlen)
{
	sqlite3_stmt *st = NULL;
	size_t cap = 0;
	int rc = SD_ERR_IO, bad = 0;
	memset(out, 0, sizeof(*out));
	if (!name || !*name) {
		snprintf(err, errlen, "no reference name given");
		return SD_ERR_INVALID;
	}
	if (sqlite3_prepare_v2(db, "SELECT id, name, created_at, description, "
			       "config, source FROM train_references WHERE "
			       "name = ?1", -1, &st, NULL) != SQLITE_OK)
		goto dberr;
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	int step = sqlite3_step(st);
	if (step == SQLITE_DONE) {
		no_such_ref(name, err, errlen);
		rc = SD_ERR_INVALID;
		goto out;
	}
	if (step != SQLITE_ROW)
		goto dberr;
	int64_t id = sqlite3_column_int64(st, 0);
	sd_strlcpy(out->name, (const char *)sqlite3_column_text(st, 1),
		   sizeof(out->name));
	sd_strlcpy(out->created_at, (const char *)sqlite3_column_text(st, 2),
		   sizeof(out->created_at));
	out->description = dup_str((const char *)sqlite3_column_text(st, 3),
				   &bad);
	out->config = dup_str((const char *)sqlite3_column_text(st, 4), &bad);
	out->source = dup_str((const char *)sqlite3_column_text(st, 5), &bad);
	sqlite3_finalize(st);
	st = NULL;
	if (bad)
		goto nomem;
	if (sqlite3_prepare_v2(db, "SELECT step, loss_mean, loss_spread, "
			       "curves FROM train_reference_steps WHERE "
			       "reference_id = ?1 ORDER BY step", -1, &st,
			       NULL) != SQLITE_OK)
		goto dberr;
	sqlite3_bind_int64(st, 1, id);
	while ((step = sqlite3_step(st)) == SQLITE_ROW) {
		if (out->n == cap) {
			size_t nc = cap ? cap * 2 : 256;
			void *p = realloc(out->steps, nc * sizeof(*out->steps));
			if (!p)
				goto nomem;
			out->steps = p;
			cap = nc;
		}
		struct sd_train_ref_step *x = &out->steps[out->n++];
		x->step = (long)sqlite3_column_int64(st, 0);
		x->mean = sqlite3_column_double(st, 1);
		x->spread = sqlite3_column_double(st, 2);
		x->n = sqlite3_column_int(st, 3);
	}
	if (step != SQLITE_DONE)
		goto dberr;
	rc = SD_OK;
	goto out;
nomem:
	snprintf(err, errlen, "out of memory reading reference '%s'", name);
	rc = SD_ERR_NOMEM;
	goto out;
dberr:
	snprintf(err, errlen, "reading reference '%s': %s", name,
		 sqlite3_errmsg(db));
	rc = SD_ERR_IO;
out:
	sqlite3_finalize(st);
	if (rc != SD_OK)
		sd_train_ref_free(out);
	return rc;
}

int sd_train_db_ref_delete(sqlite3 *db, const char *name, char *err,
			   size_t errlen)
{
	int rc = begin_tx(db, "deleting the reference", err, errlen);
	if (rc != SD_OK)
		return rc;
	int64_t id;
	int found = ref_id(db, name ? name : "", &id, err, errlen);
	if (found <= 0) {
		if (found == 0)
			no_such_ref(name ? name : "", err, errlen);
		sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
		return found == 0 ? SD_ERR_INVALID : SD_ERR_IO;
	}
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(db, "DELETE FROM train_references WHERE id = ?1",
			       -1, &st, NULL) != SQLITE_OK ||
	    (sqlite3_bind_int64(st, 1, id), sqlite3_step(st)) != SQLITE_DONE) {
		snprintf(err, errlen, "deleting reference '%s': %s", name,
			 sqlite3_errmsg(db));
		sqlite3_finalize(st);
		sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
		return SD_ERR_IO;
	}
	sqlite3_finalize(st);
	return commit_tx(db, "deleting the reference", err, errlen);
}

int sd_train_db_ref_export(sqlite3 *db, const char *name, const char *path,
			   char *err, size_t errlen)
{
	struct sd_train_reference ref;
	int rc = sd_train_db_ref_load(db, name, &ref, err, errlen);
	if (rc == SD_OK)
		rc = sd_train_ref_save(&ref, path, err, errlen);
	sd_train_ref_free(&ref);
	return rc;
}

int sd_train_db_ref_from_runs(sqlite3 *db, const char *name,
			      const char *description,
			      const char *const *run_refs, size_t nruns,
			      int replace, char *note, size_t notelen,
			      char *err, size_t errlen)
{
	struct sd_train_curve *curves = NULL;
	struct sd_train_step **steps = NULL;
	char **configs = NULL, (*uuids)[37] = NULL, (*labels)[48] = NULL;
	struct sd_buf src = { 0 };
	struct sd_train_reference ref;
	int rc;
	memset(&ref, 0, sizeof(ref));
	if (note && notelen)
		note[0] = '\0';
	rc = sd_train_ref_check_name(name, err, errlen);
	if (rc != SD_OK)
		return rc;
	if (!run_refs || nruns == 0) {
		snprintf(err, errlen, "reference '%s' needs at least one run",
			 name);
		return SD_ERR_INVALID;
	}
	curves = calloc(nruns, sizeof(*curves));
	steps = calloc(nruns, sizeof(*steps));
	configs = calloc(nruns, sizeof(*configs));
	uuids = calloc(nruns, sizeof(*uuids));
	labels = calloc(nruns, sizeof(*labels));
	if (!curves || !steps || !configs || !uuids || !labels) {
		snprintf(err, errlen, "out of memory making reference '%s'",
			 name);
		rc = SD_ERR_NOMEM;
		goto out;
	}
	rc = sd_buf_printf(&src, "runs ") ? SD_ERR_NOMEM : SD_OK;
	for (size_t i = 0; i < nruns && rc == SD_OK; i++) {
		rc = sd_train_db_load_steps(db, run_refs[i], &steps[i],
					    &curves[i].n, &configs[i], uuids[i],
					    err, errlen);
		if (rc != SD_OK)
			break;
		snprintf(labels[i], sizeof(labels[i]), "run %s", uuids[i]);
		curves[i].label = labels[i];
		curves[i].steps = steps[i];
		for (size_t k = 0; k < i; k++)
			if (strcmp(uuids[k], uuids[i]) == 0) {
				snprintf(err, errlen, "run %s is given twice",
					 uuids[i]);
				rc = SD_ERR_INVALID;
			}
		if (rc == SD_OK && strcmp(configs[i], configs[0]) != 0) {
			snprintf(err, errlen, "runs %s and %s are of different "
				 "configs ('%s' and '%s'); a reference is made "
				 "from runs of one config", uuids[0], uuids[i],
				 configs[0], configs[i]);
			rc = SD_ERR_INVALID;
		}
		if (rc == SD_OK && sd_buf_printf(&src, "%s%s", i ? ", " : "",
						 uuids[i]))
			rc = SD_ERR_NOMEM;
	}
	if (rc == SD_OK)
		rc = sd_train_ref_create(name, description, configs[0],
					 src.data, curves, nruns, &ref, note,
					 notelen, err, errlen);
	if (rc == SD_OK)
		rc = sd_train_db_ref_store(db, &ref, replace, err, errlen);
out:
	for (size_t i = 0; i < nruns && steps; i++)
		free(steps[i]);
	for (size_t i = 0; i < nruns && configs; i++)
		free(configs[i]);
	free(curves);
	free(steps);
	free(configs);
	free(uuids);
	free(labels);
	sd_buf_free(&src);
	sd_train_ref_free(&ref);
	return rc;
}

const char sd_train_db_ref_list_sql[] =
	"SELECT r.name, r.created_at, r.curves, "
	" (SELECT count(*) FROM train_reference_steps s "
	"  WHERE s.reference_id = r.id) AS steps, "
	" (SELECT min(step) FROM train_reference_steps s "
	"  WHERE s.reference_id = r.id) AS first_step, "
	" (SELECT max(step) FROM train_reference_steps s "
	"  WHERE s.reference_id = r.id) AS last_step, "
	" r.config, r.source, r.description "
	"FROM train_references r ORDER BY r.created_at DESC, r.id DESC";

const char sd_train_db_ref_steps_sql[] =
	"SELECT s.step, s.loss_mean, s.loss_spread, s.curves "
	"FROM train_reference_steps s JOIN train_references r "
	" ON r.id = s.reference_id WHERE r.name = ?1 ORDER BY s.step";
