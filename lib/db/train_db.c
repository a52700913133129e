/*
 * train_db.c - training runs and reference curves in the results
 * database: a training run's recorder, the reads that reports and
 * references need, and the reference store (see train_db.h).
 *
 * The recorder is a typed front on the one recorder of every run
 * (sink_db.c): a training run's beginning, steps, outcome, suspects and
 * end go to it as the events of the sink interface, so what is kept,
 * written again, journaled or lost is decided there, as for every other
 * kind of run.
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db/db.h"
#include "db/db_internal.h"
#include "db/train_db.h"
#include "shakedown/backend.h"
#include "util.h"

struct sd_train_rec {
	struct sd_sinks sinks;   /* the database's sink, or none */
	char *path;
	int begun, ended;
	char uuid[37];
};

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
	struct sd_sink db;
	int rc = sd_db_sink_open(path, NULL, &db, err, errlen);
	if (rc != SD_OK) {
		sd_train_rec_close(r);
		return rc;
	}
	if (db.ops) {
		if (flags & SD_TRAIN_REC_ATOMIC)
			sd_db_sink_set_atomic(&db);
		r->sinks.v[r->sinks.n++] = db;
		const char *n = sd_db_sink_note(&db);
		if (n && note && notelen)
			snprintf(note, notelen, "%s", n);
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

/* The event to the database's sink; its words for a failure in err. */
static int deliver(struct sd_train_rec *r, const struct sd_event *ev,
		   char *err, size_t errlen)
{
	int rc = sd_sinks_emit(&r->sinks, ev);
	if (rc != SD_OK)
		snprintf(err, errlen, "%s", sd_db_sink_error(&r->sinks.v[0]));
	return rc;
}

int sd_train_rec_begin(struct sd_train_rec *r,
		       const struct sd_train_run_info *info, char *err,
		       size_t errlen)
{
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
	r->begun = 1;
	struct sd_train_begin tb = {
		.config = info->config, .log_path = info->log_path,
		.log_format = info->log_format, .facts = info->facts,
	};
	struct sd_run_info run = {
		.started_at = info->started_at > 0 ? info->started_at
						   : sd_wall_now(),
		.command_line = info->command_line,
		.tool_version = info->tool_version, .backend = info->backend,
		.backend_version = info->backend_version, .user = info->user,
		.nranks = info->nranks, .job = info->job,
		.ranks = info->ranks, .run_kind = info->kind, .train = &tb,
	};
	sd_strlcpy(run.uuid, r->uuid, sizeof(run.uuid));
	struct sd_event ev = { .kind = SD_EVENT_RUN_BEGIN, .run = &run };
	return deliver(r, &ev, err, errlen);
}

int sd_train_rec_steps(struct sd_train_rec *r, const struct sd_train_step *s,
		       size_t n, char *err, size_t errlen)
{
	if (!r->begun || r->ended) {
		snprintf(err, errlen, "steps of a training run %s",
			 r->begun ? "after its end" : "before its beginning");
		return SD_ERR_INVALID;
	}
	struct sd_event ev = { .kind = SD_EVENT_TRAIN_STEPS, .steps = s,
			       .n = n };
	return deliver(r, &ev, err, errlen);
}

/* The suspects as the suspects table holds them: its NOT NULL columns
 * get "" (and the kind "node") where nothing was said. */
static struct sd_suspect_info *suspects_rows(const struct sd_train_end *end)
{
	struct sd_suspect_info *v = calloc(end->nsuspects + 1, sizeof(*v));
	for (size_t i = 0; v && i < end->nsuspects; i++) {
		const struct sd_suspect_info *x = &end->suspects[i];
		v[i].kind = x->kind ? x->kind : "node";
		v[i].subject = x->subject ? x->subject : "";
		v[i].hosts = x->hosts ? x->hosts : "";
		v[i].reason = x->reason ? x->reason : "";
		v[i].bad_node = x->bad_node != 0;
	}
	return v;
}

int sd_train_rec_finish(struct sd_train_rec *r, const struct sd_train_end *end,
			char *err, size_t errlen)
{
	if (!r->begun || r->ended) {
		snprintf(err, errlen, "the end of a training run %s",
			 r->begun ? "given twice" : "before its beginning");
		return SD_ERR_INVALID;
	}
	struct sd_suspect_info *sus = suspects_rows(end);
	if (!sus) {
		snprintf(err, errlen, "out of memory ending the training run");
		return SD_ERR_NOMEM;
	}
	r->ended = 1;
	struct sd_train_outcome o = {
		.summary = end->summary, .cmp = end->cmp,
		.reference_name = end->reference_name,
		.lines_unparsed = end->lines_unparsed,
		.extra = end->extra, .nextra = end->nextra,
	};
	struct sd_run_end e = { .status = end->status,
				.exit_status = end->exit_status,
				.message = end->message,
				.finished_at = end->finished_at };
	struct sd_event ev[] = {
		{ .kind = SD_EVENT_TRAIN_END, .train = &o },
		{ .kind = SD_EVENT_SUSPECTS, .suspects = sus,
		  .n = end->nsuspects },
		{ .kind = SD_EVENT_RUN_END, .end = &e },
	};
	int rc = SD_OK;
	for (size_t i = 0; i < sizeof(ev) / sizeof(ev[0]); i++)
		if (sd_sinks_emit(&r->sinks, &ev[i]) != SD_OK && rc == SD_OK)
			rc = SD_ERR_IO;
	free(sus);
	if (sd_train_rec_incomplete(r, err, errlen))
		return SD_ERR_IO;
	if (rc != SD_OK)
		snprintf(err, errlen, "%s", sd_db_sink_error(&r->sinks.v[0]));
	return rc;
}

int sd_train_rec_incomplete(const struct sd_train_rec *r, char *msg,
			    size_t len)
{
	if (!r || !r->sinks.n)
		return 0;
	return sd_db_sink_incomplete(&r->sinks.v[0], msg, len);
}

void sd_train_rec_close(struct sd_train_rec *r)
{
	if (!r)
		return;
	sd_sinks_close(&r->sinks);
	free(r->path);
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
	out->description = sd_dupstr((const char *)sqlite3_column_text(st, 3),
				     &bad);
	out->config = sd_dupstr((const char *)sqlite3_column_text(st, 4), &bad);
	out->source = sd_dupstr((const char *)sqlite3_column_text(st, 5), &bad);
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
