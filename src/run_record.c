/*
 * run_record.c - the record of `shakedown run` (see run.h): the writers
 * and the run's first record, and how the run ended, told once to every
 * writer, drained and uploaded.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "drain.h"
#include "hostlist.h"
#include "job.h"
#include "ranks.h"
#include "run.h"
#include "sink_ncclj.h"
#include "progress.h"
#include "sink_text.h"
#include "tool.h"
#include "util.h"
#include "db/db.h"
#include "upload/upload.h"

/* Rank 0, after the run's end: whether -J's document was written, said
 * once, and "written" only when it is at its path. */
static void say_json(struct run_ctx *c)
{
	const char *why;
	if (c->json_sink < 0 || c->json_said)
		return;
	c->json_said = 1;
	const struct sd_sink *s = &c->sinks.v[c->json_sink];
	if (sd_ncclj_sink_result(s, &why))
		fprintf(c->opt.format == SD_FORMAT_JSON ? stderr : stdout,
			"# nccl-tests JSON written to %s\n",
			sd_ncclj_sink_path(s));
	else
		fprintf(stderr, "shakedown: warning: -J %s was not written: "
			"%s\n", sd_ncclj_sink_path(s),
			why ? why : "the run did not end");
}

void sd_run_record_end(struct run_ctx *c, int exit_status, const char *msg)
{
	struct sd_run_end e = {
		.status = exit_status == SD_EXIT_CANCELLED ? "cancelled"
							   : "failed",
		.exit_status = exit_status,
		.message = msg,
		.finished_at = sd_wall_now() };
	struct sd_event ev = { .kind = SD_EVENT_RUN_END, .end = &e };
	sd_sinks_emit(&c->sinks, &ev);
	say_json(c);
}

int sd_run_drain_limit_s(const struct sd_plan *p)
{
	int s = p->timeout_ms / 1000;
	return s < 1 ? 1 : s > 10 ? 10 : s;
}

/* Rank 0: every host's environment, each its own copy (the pieces lie
 * back to back: a NUL written in place would cut the next).  SD_OK or
 * SD_ERR_NOMEM. */
static int host_envs(struct run_ctx *c)
{
	int size = c->boot->bs.size;
	c->hosts = calloc((size_t)size, sizeof(*c->hosts));
	if (!c->hosts)
		return SD_ERR_NOMEM;
	for (int r = 0; r < size; r++) {
		struct sd_host_env *h = &c->hosts[c->nhost_env];
		if (!c->lens[r])
			continue;
		sd_strlcpy(h->host, c->ranks[r].host, sizeof(h->host));
		h->json = strndup(c->envs + c->offs[r], c->lens[r]);
		if (!h->json)
			return SD_ERR_NOMEM;
		c->nhost_env++;
	}
	return SD_OK;
}

/* Rank 0: the writers (the printer, the database, -J's document) and the
 * baseline, before any test runs.  SD_OK, or a status said on stderr. */
static int open_writers(struct run_ctx *c)
{
	struct sd_run_options *o = &c->opt;
	char err[1024] = "";
	struct sd_sink *next = &c->sinks.v[c->sinks.n];
	/* the progress line first: it is erased before the printers print */
	if (o->progress && (c->progress = sd_progress_start(STDERR_FILENO)))
		sd_progress_sink(c->progress, &c->sinks.v[c->sinks.n++]);
	next = &c->sinks.v[c->sinks.n];
	int rc = sd_text_sink_open(o->format, o->ds_raw, stdout, next);
	if (rc)
		return rc;
	c->sinks.n++;
	next = &c->sinks.v[c->sinks.n];
	if ((rc = sd_db_sink_open(o->job.db, c->cmdline, next, err,
				  sizeof(err)))) {
		fprintf(stderr, "shakedown: %s\n", err);
		return rc;
	}
	if (next->ops) {
		const char *note = sd_db_sink_note(next);
		if (note)
			fprintf(stderr, "shakedown: note: %s\n", note);
		c->db_sink = c->sinks.n++;
	}
	next = &c->sinks.v[c->sinks.n];
	if (o->json_file) {
		if ((rc = sd_ncclj_sink_open(o->json_file, &c->plan, next, err,
					     sizeof(err)))) {
			fprintf(stderr, "shakedown: %s\n", err);
			return rc;
		}
		c->json_sink = c->sinks.n++;
	}
	if (!o->baseline)
		return SD_OK;
	if ((rc = sd_db_baseline_load(o->job.db, o->baseline, &c->baseline,
				      err, sizeof(err)))) {
		fprintf(stderr, "shakedown: --baseline %s: %s\n", o->baseline,
			err);
		return rc;
	}
	int expects = 0;
	for (size_t i = 0; i < c->plan.ntests; i++)
		expects |= c->plan.tests[i].expect.baseline > 0;
	if (!expects)
		fprintf(stderr, "shakedown: note: --baseline %s: no test of the "
			"plan expects a baseline (expect: {baseline: 0.9}); "
			"nothing is judged by it\n", o->baseline);
	return SD_OK;
}

int sd_run_begin_record(struct run_ctx *c)
{
	struct sd_bootstrap *bs = &c->boot->bs;
	int rc = SD_OK, status;

	sd_uuid4(c->uuid);
	if (bs->rank == 0 && !(rc = host_envs(c)))
		rc = open_writers(c);
	if ((status = sd_agree(c->boot, rc ? sd_exit_for_status(rc) : 0)))
		return status;
	if (bs->rank != 0)
		return 0;
	struct sd_run_info info;
	sd_job_run_info(&info, c->cmdline, c->boot, &c->plugin, c->ranks);
	info.plan_text = c->plan.text;
	info.plan_hash = c->plan.hash;
	info.nhosts = c->nhost_env;
	info.hosts = c->hosts;
	info.plan_name = c->plan.name;
	sd_strlcpy(info.uuid, c->uuid, sizeof(info.uuid));
	struct sd_event ev = { .kind = SD_EVENT_RUN_BEGIN, .run = &info };
	sd_sinks_emit(&c->sinks, &ev);
	return 0;
}

/* The bad nodes of a failed verdict as a Slurm hostlist (malloc'd), or
 * NULL when none or out of memory; *nbad says how many. */
static char *bad_node_list(const struct run_ctx *c, int *nbad)
{
	unsigned char *bad = calloc((size_t)c->nh + 1, 1);
	const char **names = calloc((size_t)c->nh + 1, sizeof(*names));
	int k = 0;
	*nbad = bad ? sd_blame_bad_hosts(c->blame, bad) : 0;
	for (int h = 0; names && bad && h < c->nh; h++)
		if (bad[h])
			names[k++] = c->host_names[h];
	char *list = names && *nbad ? sd_hostlist_compress(names, k) : NULL;
	free(names);
	free(bad);
	return list;
}

/* Rank 0: runs.status for the exit status, with msg saying why the run
 * did not pass (also on stderr). */
static const char *end_words(const struct run_ctx *c, int status, char *msg,
			     size_t len)
{
	const char *st = "passed";
	if (status == SD_EXIT_CANCELLED) {
		st = "cancelled";
		snprintf(msg, len, "cancelled by a signal; cut short during %s; "
			 "completed measurements are kept", c->run.cut_short);
	} else if (status == SD_EXIT_CHECK) {
		st = "failed";
		snprintf(msg, len, "%d test%s had wrong data",
			 c->run.wrong_tests,
			 c->run.wrong_tests == 1 ? "" : "s");
	} else if (status == SD_EXIT_VERDICT) {
		int nbad;
		char *list = bad_node_list(c, &nbad);
		int n = c->run.failed_subjects;
		st = "failed";
		snprintf(msg, len, "%d subject%s failed %s expectations; bad "
			 "nodes: %s", n, n == 1 ? "" : "s", n == 1 ? "its"
			 : "their", nbad ? (list ? list : "?")
			 : "none (see the suspects)");
		free(list);
	}
	if (msg[0])
		fprintf(stderr, "shakedown: %s\n", msg);
	return st;
}

/* Rank 0: the run's end to every writer.  Never say recorded what was
 * not: what failed is written again first, and what still lacks is
 * said, with status 7.  Returns the exit status. */
static int record_run_end(struct run_ctx *c, int status)
{
	struct sd_run_options *o = &c->opt;
	/* the whole sentence about the journal, as on stderr */
	char msg[2048] = "", lack[1400] = "";
	const char *st = end_words(c, status, msg, sizeof(msg));
	struct sd_sink *db = c->db_sink >= 0 ? &c->sinks.v[c->db_sink] : NULL;
	if (db) {
		sd_db_sink_flush(db);
		if (sd_db_sink_incomplete(db, lack, sizeof(lack)) &&
		    (status == SD_EXIT_OK || status == SD_EXIT_VERDICT)) {
			status = SD_EXIT_RECORD;
			st = "error";
			snprintf(msg + strlen(msg), sizeof(msg) - strlen(msg),
				 "%s%s", msg[0] ? "; " : "", lack);
		}
	}
	struct sd_run_end e = { .status = st, .exit_status = status,
				.message = msg[0] ? msg : NULL,
				.finished_at = sd_wall_now() };
	struct sd_event ev = { .kind = SD_EVENT_RUN_END, .end = &e };
	sd_sinks_emit(&c->sinks, &ev);
	if (db && sd_db_sink_incomplete(db, lack, sizeof(lack)))
		fprintf(stderr, "shakedown: %s\n", lack);
	else if (db) {
		/* the summary's last line, in its width, with the command as
		 * it was typed */
		char said[4400];
		snprintf(said, sizeof(said), "results recorded in %s (run %s); "
			 "'%s report' shows them", sd_db_sink_path(db),
			 c->uuid, sd_invoked_as);
		sd_text_comment(o->format == SD_FORMAT_JSON ? stderr : stdout,
				said, SD_SHORT_COLS);
	}
	say_json(c);
	return status;
}

/* Rank 0, --upload: the run's report to the collector. */
static void upload(struct run_ctx *c)
{
	struct sd_run_options *o = &c->opt;
	char err[1024] = "";
	const char *db = c->db_sink >= 0
				 ? sd_db_sink_path(&c->sinks.v[c->db_sink])
				 : NULL;
	if (!db)
		fprintf(stderr, "shakedown: warning: --upload needs the results "
			"database (not --db none); the report was not sent\n");
	else if (sd_upload_after_run(db, c->uuid, o->upload_url, o->token_file,
				     o->cacert, err, sizeof(err)))
		fprintf(stderr, "shakedown: warning: %s\n", err);
}

int sd_run_finish(struct run_ctx *c, int status)
{
	struct sd_run_options *o = &c->opt;
	struct sd_bootstrap *bs = &c->boot->bs;
	int rc;
	if (bs->rank == 0)
		status = record_run_end(c, status);
	/* drain while the other ranks wait for rank 0's word (a rank that
	 * leaves first makes srun -K or the launcher stop rank 0): each
	 * scontrol call is bounded by the plan's timeout, well inside their
	 * patience */
	if (bs->rank == 0 && o->drain && c->blame) {
		const char *from;
		const char *alloc = sd_drain_allocation(c->boot->job.nodelist,
							&from);
		sd_drain_bad_nodes(c->blame, c->nh, c->host_names, c->uuid,
				   sd_run_drain_limit_s(&c->plan), alloc, from);
	}
	if ((rc = sd_ctrl_finish(c->ctrl, &status)))
		/* rank 0 went away before it said how the run ended */
		status = c->guard.abort_exit ? c->guard.abort_exit
					     : sd_exit_for_status(rc);
	else
		c->agreed = 1;
	c->finished = 1;
	if (bs->rank == 0 && o->upload_url)
		upload(c);
	return status;
}

