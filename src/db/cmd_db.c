/*
 * cmd_db.c - the commands that read the results database: report (with
 * a training run's part), history, compare and db (info, migrate, check).
 *
 * They need no bootstrap and no backend: they open the file (--db, else
 * SHAKEDOWN_DB, else ./shakedown.db), run queries over the views of
 * sql/schema.sql and print text tables, CSV or JSON built by SQLite;
 * report also writes one self-contained HTML page (lib/db/report_html.c).
 * Exit statuses: 0; 1 compare found a regression or db check found a
 * problem; 2 bad options or an unknown run; 3 the database failed (or
 * report -o could not write its file).
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commands.h"
#include "db/db.h"
#include "db/db_internal.h"
#include "db/report_html.h"
#include "db/named.h"
#include "drain.h"
#include "hostlist.h"
#include "names.h"
#include "tool.h"
#include "util.h"
#include "train/metrics.h"

/* Options every database command shares. */
struct db_opts {
	const char *db;
	enum sd_db_format format;
	const char *pos[3];  /* positional arguments */
	int npos;
	/* history */
	const char *op, *size, *dtype, *since, *until, *host;
	/* compare */
	const char *tolerance;
	int subjects;         /* compare --subjects */
	const char *journal;  /* db recover --journal */
	const char *into;     /* db recover --into */
	/* report */
	int bad_nodes, drain, steps;
	int html;            /* report --format html */
	const char *output;  /* report -o FILE */
};

/* The output formats of the database commands, by name. */
static const struct sd_name_row db_format_names[] = {
	{ "text", SD_DB_TEXT }, { "json", SD_DB_JSON }, { "csv", SD_DB_CSV },
	{ NULL, 0 }
};

/* The options: one getopt_long table per command, one switch in parse().
 * Their --help texts are src/help/CMD.txt (sd_help_CMD). */
enum db_option {
	OPT_DB = 256, OPT_FORMAT, OPT_OP, OPT_SIZE, OPT_DTYPE, OPT_SINCE,
	OPT_UNTIL, OPT_HOST, OPT_TOLERANCE, OPT_BAD_NODES, OPT_DRAIN, OPT_JOURNAL, OPT_INTO,
	OPT_STEPS, OPT_SUBJECTS,
};

/* report's own format, beside db_format_names: one HTML page. */
#define REPORT_FORMAT_HTML 100

static const struct option report_options[] = {
	{ "bad-nodes", no_argument, NULL, OPT_BAD_NODES },
	{ "drain", no_argument, NULL, OPT_DRAIN },
	{ "steps", no_argument, NULL, OPT_STEPS },
	{ "db", required_argument, NULL, OPT_DB },
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ "output", required_argument, NULL, 'o' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 }
};

static const struct option history_options[] = {
	{ "op", required_argument, NULL, OPT_OP },
	{ "size", required_argument, NULL, OPT_SIZE },
	{ "dtype", required_argument, NULL, OPT_DTYPE },
	{ "since", required_argument, NULL, OPT_SINCE },
	{ "until", required_argument, NULL, OPT_UNTIL },
	{ "host", required_argument, NULL, OPT_HOST },
	{ "db", required_argument, NULL, OPT_DB },
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 }
};

static const struct option compare_options[] = {
	{ "tolerance", required_argument, NULL, OPT_TOLERANCE },
	{ "subjects", no_argument, NULL, OPT_SUBJECTS },
	{ "host", required_argument, NULL, OPT_HOST },
	{ "db", required_argument, NULL, OPT_DB },
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 }
};

static const struct option db_options[] = {
	{ "db", required_argument, NULL, OPT_DB },
	{ "journal", required_argument, NULL, OPT_JOURNAL },
	{ "into", required_argument, NULL, OPT_INTO },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 }
};

/* One positional argument; 0, or 2 (error printed) past maxpos. */
static int add_positional(struct db_opts *o, int maxpos, const char *argv0,
			  const char *arg)
{
	if (o->npos >= maxpos) {
		fprintf(stderr, "shakedown %s: unexpected argument '%s'; see "
			"'shakedown %s --help'\n", argv0, arg, argv0);
		return 2;
	}
	o->pos[o->npos++] = arg;
	return 0;
}

/* Parse argv with the command's option table; returns 0, 1 for --help
 * (usage printed), or 2 (error printed).  Arguments are taken in order
 * (optstring "-"), so the first positional argument too many is the one
 * named, as is the first bad option; everything after "--" is
 * positional. */
static int parse(int argc, char **argv, struct db_opts *o, int maxpos,
		 const struct option *options, const char *usage)
{
	const char *hint;
	int ch, v;
	memset(o, 0, sizeof(*o));
	opterr = 0;
	optind = 1;
	for (;;) {
		int at = optind; /* the argument getopt_long looks at */
		char oerr[256];
		ch = sd_getopt(argc, argv, options == report_options ? "-:ho:"
							       : "-:h",
			       options, oerr, sizeof(oerr));
		if (ch == -1)
			break;
		if (ch == SD_OPT_REFUSED) {
			fprintf(stderr, "shakedown %s: %s\n", argv[0], oerr);
			return 2;
		}
		switch (ch) {
		case 1:
			if (add_positional(o, maxpos, argv[0], optarg))
				return 2;
			break;
		case OPT_DB: o->db = optarg; break;
		case OPT_FORMAT:
			hint = NULL;
			if (options == report_options &&
			    strcmp(optarg, "html") == 0) {
				o->html = 1;
				o->format = SD_DB_TEXT;
				break;
			}
			o->html = 0;
			if (sd_name_lookup(db_format_names, optarg, &v,
					   &hint) == 0) {
				o->format = (enum sd_db_format)v;
				break;
			}
			if (hint)
				fprintf(stderr, "shakedown %s: unknown format "
					"'%s'; did you mean '%s'?\n", argv[0],
					optarg, hint);
			else
				fprintf(stderr, "shakedown %s: unknown format "
					"'%s'; use %s\n", argv[0], optarg,
					options == report_options
						? "text, json, csv or html"
						: "text, json or csv");
			return 2;
		case OPT_OP: o->op = optarg; break;
		case OPT_SIZE: o->size = optarg; break;
		case OPT_DTYPE: o->dtype = optarg; break;
		case OPT_SINCE: o->since = optarg; break;
		case OPT_UNTIL: o->until = optarg; break;
		case OPT_HOST: o->host = optarg; break;
		case OPT_TOLERANCE: o->tolerance = optarg; break;
		case OPT_BAD_NODES: o->bad_nodes = 1; break;
		case OPT_DRAIN: o->drain = 1; break;
		case OPT_STEPS: o->steps = 1; break;
		case OPT_SUBJECTS: o->subjects = 1; break;
		case OPT_JOURNAL: o->journal = optarg; break;
		case OPT_INTO: o->into = optarg; break;
		case 'o': o->output = optarg; break;
		case 'h':
			sd_help_print(stdout, usage);
			return 1;
		case ':':
			fprintf(stderr, "shakedown %s: option '%s' needs a "
				"value\n", argv[0], argv[optind - 1]);
			return 2;
		default: {
			/* a long option without its "=value", which may be a
			 * secret typed in the wrong place */
			const char *a = argv[at < argc ? at : argc - 1];
			if (strncmp(a, "--", 2) == 0)
				fprintf(stderr, "shakedown %s: unknown option "
					"'%.*s'; see 'shakedown %s --help'\n",
					argv[0], (int)strcspn(a, "="), a,
					argv[0]);
			else
				fprintf(stderr, "shakedown %s: unknown option "
					"'-%c'; see 'shakedown %s --help'\n",
					argv[0], optopt, argv[0]);
			return 2;
		}
		}
	}
	for (; optind < argc; optind++)
		if (add_positional(o, maxpos, argv[0], argv[optind]))
			return 2;
	return 0;
}

/* Open for reading: read-write when the file allows it (so an older
 * schema is migrated and dead runs are marked), read only otherwise. */
static int open_db(const char *argv0, const char *path_opt, int flags,
		   sqlite3 **db)
{
	char err[768];
	const char *path = sd_db_resolve_path(path_opt);
	if (strcmp(path, "none") == 0) {
		fprintf(stderr, "shakedown %s: no database (--db none); pass "
			"--db PATH or set SHAKEDOWN_DB\n", argv0);
		return SD_EXIT_USAGE;
	}
	if (access(path, F_OK) == 0 && access(path, W_OK) != 0)
		flags |= SD_DB_READONLY;
	if (sd_db_open(path, flags, db, err, sizeof(err)) != SD_OK) {
		fprintf(stderr, "shakedown %s: %s\n", argv0, err);
		return SD_EXIT_ENV;
	}
	return SD_EXIT_OK;
}

static int query_failed(const char *argv0, int status, const char *err)
{
	fprintf(stderr, "shakedown %s: %s\n", argv0, err);
	return status == SD_ERR_INVALID ? SD_EXIT_USAGE : SD_EXIT_ENV;
}

/* --- report ------------------------------------------------------------ */

static const char report_head_sql[] =
	"SELECT r.uuid, r.status, r.exit_status, r.message, r.started_at, "
	" s.duration_s, r.command_line, r.backend, r.backend_version, "
	" r.nranks, s.nnodes, s.nodelist, s.launcher, s.cluster, s.job_id, "
	" s.tests_total, s.tests_passed, s.tests_not_passed, s.wrong_total, "
	" r.user, r.hostname, r.tool_version "
	"FROM runs r JOIN run_summary s ON s.run_id = r.id WHERE r.id = ?1";

static const char report_tests_sql[] =
	"SELECT number AS test, attempt, name, dtype, redop, root, scope, "
	" members, nranks, measurements, peak_busbw_gbs, wrong, outcome, "
	" verdict_reason AS why, variant AS path "
	"FROM tests_v WHERE run_id = ?1 ORDER BY test_index";

static const char report_meas_sql[] =
	"SELECT coalesce(t.plan_test, t.test_index + 1) AS test, t.name, "
	" t.dtype, m.size_bytes, m.count,"
	" m.in_place, m.iters, m.time_us, m.time_us_min, m.time_us_max, "
	" m.algbw_gbs, m.busbw_gbs, m.wrong, m.algo, "
	" coalesce(t.attempt, 1) AS attempt, t.members "
	"FROM tests t JOIN measurements m ON m.test_id = t.id "
	"WHERE t.run_id = ?1 ORDER BY t.test_index, m.size_bytes, m.in_place";

static const char report_failed_sql[] =
	"SELECT coalesce(t.plan_test, t.test_index + 1) AS test, "
	" v.subject_kind AS kind, v.subject, "
	" v.expectation, v.size_bytes, round(v.measured, 4) AS measured, "
	" round(v.threshold, 4) AS threshold, v.unit, v.attempts, v.reason "
	"FROM verdicts v LEFT JOIN tests t ON t.id = v.test_id "
	"WHERE v.run_id = ?1 AND v.status = 'failed' ORDER BY v.id";

static const char report_suspects_sql[] =
	"SELECT kind, subject, hosts, iif(bad_node, 'yes', 'no') AS bad_node, "
	" reason FROM suspects WHERE run_id = ?1 "
	"ORDER BY bad_node DESC, kind, subject";

static const char report_gemm_sql[] =
	"SELECT rank, host, device, dtype, status, "
	" round(best_tflops, 4) AS best_tflops, best_shape, "
	" round(peer_median_tflops, 4) AS peer_median_tflops, "
	" round(peak_tflops, 4) AS peak_tflops, reason "
	"FROM gemm_devices WHERE run_id = ?1 ORDER BY dtype, rank";

static const char *col(sqlite3_stmt *st, int i)
{
	const char *t = (const char *)sqlite3_column_text(st, i);
	return t && *t ? t : "-";
}

/* --- report: the training part ------------------------------------------
 * A run of kind train or ingest has a train_runs row: its facts with where
 * each came from, the metric rows (shakedown-db(5)), its steps and its
 * verdict against a reference.  Printed from those rows alone, as the
 * JSON document's "training" member is built from them. */

static const char report_train_sql[] =
	"SELECT r.run_kind, t.config, t.log_path, t.log_format, "
	" t.lines_unparsed, t.device_name, "
	" json_extract(t.fact_origins, '$.device_name'), t.precision, "
	" t.peak_part, t.reference_name, t.reference_id IS NOT NULL, "
	" t.rel_tol, t.abs_tol, t.var_tol, t.verdict, t.verdict_reason, "
	" t.nonfinite_step, "
	" (SELECT count(*) FROM train_steps s WHERE s.run_id = r.id "
	"  AND s.rank IS NULL), "
	" (SELECT min(step) FROM train_steps s WHERE s.run_id = r.id "
	"  AND s.rank IS NULL), "
	" (SELECT max(step) FROM train_steps s WHERE s.run_id = r.id "
	"  AND s.rank IS NULL) "
	"FROM runs r JOIN train_runs t ON t.run_id = r.id WHERE r.id = ?1";


/* A step's loss: first, last (?2 = 0, 1 by step) or min (2). */
static const char report_train_loss_sql[] =
	"SELECT step, coalesce(loss_nonfinite, loss) FROM train_steps "
	"WHERE run_id = ?1 AND rank IS NULL AND "
	" (loss IS NOT NULL OR loss_nonfinite IS NOT NULL) "
	"ORDER BY CASE ?2 WHEN 0 THEN step WHEN 1 THEN -step "
	" ELSE iif(loss_nonfinite IS NULL, loss, NULL) END NULLS LAST, step "
	"LIMIT 1";

/* The steps (text: losses to 6 decimals; csv: the stored values). */
static const char report_train_steps_text_sql[] =
	"SELECT s.step, s.span_steps AS span, "
	" coalesce(s.loss_nonfinite, printf('%.6f', s.loss)) AS loss, "
	" iif(p.loss_mean IS NULL, NULL, printf('%.6f', p.loss_mean)) "
	"  AS ref_mean, "
	" iif(p.loss_mean IS NULL OR s.loss IS NULL, NULL, "
	"  printf('%+.6f', s.loss - p.loss_mean)) AS diff, "
	" iif(s.step_s IS NULL, NULL, printf('%.4g', s.step_s)) AS step_s, "
	" iif(coalesce(s.tokens, t.tokens_per_step) IS NULL, NULL, "
	"  printf('%.10g', coalesce(s.tokens, t.tokens_per_step))) AS tokens, "
	" iif(s.compute_s IS NULL, NULL, printf('%.4g', s.compute_s)) "
	"  AS compute_s, "
	" iif(s.comm_s IS NULL, NULL, printf('%.4g', s.comm_s)) AS comm_s, "
	" iif(s.optim_s IS NULL, NULL, printf('%.4g', s.optim_s)) AS optim_s, "
	" iif(s.timed, 'yes', 'no') AS timed "
	"FROM train_steps s JOIN train_runs t ON t.run_id = s.run_id "
	" LEFT JOIN train_reference_steps p ON p.reference_id = t.reference_id "
	"  AND p.step = s.step "
	"WHERE s.run_id = ?1 AND s.rank IS NULL ORDER BY s.step";

static const char report_train_steps_sql[] =
	"SELECT s.step, s.span_steps, s.loss, s.loss_nonfinite, s.step_s, "
	" s.tokens, s.compute_s, s.comm_s, s.optim_s, s.timed, "
	" p.loss_mean AS ref_loss_mean, p.loss_spread AS ref_loss_spread, "
	" s.loss - p.loss_mean AS loss_diff "
	"FROM train_steps s JOIN train_runs t ON t.run_id = s.run_id "
	" LEFT JOIN train_reference_steps p ON p.reference_id = t.reference_id "
	"  AND p.step = s.step "
	"WHERE s.run_id = ?1 AND s.rank IS NULL ORDER BY s.step";

/* Whether run_id is a training run: 1, 0, or -1 (err filled).  A file
 * of a schema before version 6, opened read-only, has no training run. */
static int is_train_run(sqlite3 *db, int64_t run_id, char *err,
			size_t errlen)
{
	sqlite3_stmt *st = NULL;
	int rc = -1;
	if (sqlite3_prepare_v2(db, "SELECT count(*) FROM sqlite_schema WHERE "
			       "type = 'table' AND name = 'train_runs'", -1,
			       &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int(st, 0) == 0)
		rc = 0;
	sqlite3_finalize(st);
	st = NULL;
	if (rc == 0)
		return 0;
	if (sqlite3_prepare_v2(db, "SELECT count(*) FROM train_runs WHERE "
			       "run_id = ?1", -1, &st, NULL) == SQLITE_OK) {
		sqlite3_bind_int64(st, 1, run_id);
		if (sqlite3_step(st) == SQLITE_ROW)
			rc = sqlite3_column_int(st, 0) > 0;
	}
	if (rc < 0)
		snprintf(err, errlen, "query failed: %s", sqlite3_errmsg(db));
	sqlite3_finalize(st);
	return rc;
}

/* One number as the report prints it: "-" for NULL. */
static const char *num(sqlite3_stmt *st, int i, char *buf, size_t len)
{
	if (sqlite3_column_type(st, i) == SQLITE_NULL)
		return "-";
	if (sqlite3_column_type(st, i) == SQLITE_TEXT)
		return (const char *)sqlite3_column_text(st, i);
	snprintf(buf, len, "%.10g", sqlite3_column_double(st, i));
	return buf;
}

/* The job's metric `name`; NaN when the run has none. */
static double train_metric(sqlite3 *db, int64_t run_id, const char *name)
{
	sqlite3_stmt *st = NULL;
	double v = NAN;
	if (sqlite3_prepare_v2(db, "SELECT value FROM train_metrics WHERE "
			       "run_id = ?1 AND name = ?2 AND host IS NULL AND "
			       "rank IS NULL", -1, &st, NULL) == SQLITE_OK) {
		sqlite3_bind_int64(st, 1, run_id);
		sqlite3_bind_text(st, 2, name, -1, SQLITE_STATIC);
		if (sqlite3_step(st) == SQLITE_ROW &&
		    sqlite3_column_type(st, 0) != SQLITE_NULL)
			v = sqlite3_column_double(st, 0);
	}
	sqlite3_finalize(st);
	return v;
}

/* "%.6g" of v, or "-" for NaN. */
static const char *g6(double v, char *buf, size_t len)
{
	if (isnan(v))
		return "-";
	snprintf(buf, len, "%.6g", v);
	return buf;
}

/* A share as a percentage to one decimal ("-0.0" printed as "0.0"). */
static const char *pct1(double v, char *buf, size_t len)
{
	if (isnan(v))
		return "-";
	v *= 100.0;
	snprintf(buf, len, "%.1f", fabs(v) < 0.05 ? 0.0 : v);
	return buf;
}

/* The facts block: each with its value and where it came from. */
static int report_train_facts(sqlite3 *db, int64_t run_id, char *err,
			      size_t errlen)
{
	struct sd_buf q = { 0 };
	sqlite3_stmt *st = NULL;
	/* each fact is a train_runs column and a key of fact_origins */
	size_t nf = SD_TRAIN_NFACTS;
	int bad = sd_buf_printf(&q, "SELECT ");
	for (size_t i = 0; i < nf && !bad; i++)
		bad = sd_buf_printf(&q, "%st.%s, json_extract(t.fact_origins, "
				    "'$.%s')", i ? ", " : "",
				    sd_train_fact_fields[i].name,
				    sd_train_fact_fields[i].name);
	if (bad || sd_buf_printf(&q, " FROM train_runs t WHERE t.run_id = "
				 "?1")) {
		sd_buf_free(&q);
		snprintf(err, errlen, "out of memory");
		return SD_ERR_NOMEM;
	}
	int rc = SD_ERR_IO;
	if (sqlite3_prepare_v2(db, q.data, -1, &st, NULL) == SQLITE_OK) {
		sqlite3_bind_int64(st, 1, run_id);
		if (sqlite3_step(st) == SQLITE_ROW) {
			printf("facts\n");
			for (size_t i = 0; i < nf; i++) {
				char b[64];
				const char *o = (const char *)
					sqlite3_column_text(st, 2 * (int)i + 1);
				printf("  %-18s %-14s %s\n",
				       sd_train_fact_fields[i].name,
				       num(st, 2 * (int)i, b, sizeof(b)),
				       o ? o : "unknown");
			}
			rc = SD_OK;
		}
	}
	if (rc != SD_OK)
		snprintf(err, errlen, "reading the facts: %s",
			 sqlite3_errmsg(db));
	sqlite3_finalize(st);
	sd_buf_free(&q);
	return rc;
}

/* A loss of the run (which: 0 first, 1 last, 2 min) as "V at step S". */
static void report_train_loss(sqlite3 *db, int64_t run_id, int which,
			      const char *label)
{
	sqlite3_stmt *st = NULL;
	char b[64];
	if (sqlite3_prepare_v2(db, report_train_loss_sql, -1, &st, NULL) ==
	    SQLITE_OK) {
		sqlite3_bind_int64(st, 1, run_id);
		sqlite3_bind_int(st, 2, which);
		if (sqlite3_step(st) == SQLITE_ROW) {
			const char *v = sqlite3_column_type(st, 1) ==
						SQLITE_TEXT
					? (const char *)sqlite3_column_text(st, 1)
					: g6(sqlite3_column_double(st, 1), b,
					     sizeof(b));
			printf("  %-18s %s at step %lld\n", label, v,
			       (long long)sqlite3_column_int64(st, 0));
		} else {
			printf("  %-18s -\n", label);
		}
	}
	sqlite3_finalize(st);
}

/* The training part of the text report, after the run's header. */
static int report_train_text(sqlite3 *db, int64_t run_id, int steps,
			     char *err, size_t errlen)
{
	sqlite3_stmt *st = NULL;
	char b[8][64];
	if (sqlite3_prepare_v2(db, report_train_sql, -1, &st, NULL) !=
	    SQLITE_OK) {
		snprintf(err, errlen, "query failed: %s", sqlite3_errmsg(db));
		return SD_ERR_IO;
	}
	sqlite3_bind_int64(st, 1, run_id);
	if (sqlite3_step(st) != SQLITE_ROW) {
		snprintf(err, errlen, "reading the training run: %s",
			 sqlite3_errmsg(db));
		sqlite3_finalize(st);
		return SD_ERR_IO;
	}
	printf("training  %s, config '%s'\n", col(st, 0), col(st, 1));
	if (sqlite3_column_type(st, 2) != SQLITE_NULL)
		printf("log       %s (%s; %s line(s) did not parse)\n",
		       col(st, 2), col(st, 3), col(st, 4));
	printf("device    %s (%s), peak for %s%s%s\n\n", col(st, 5),
	       col(st, 6), col(st, 7),
	       sqlite3_column_type(st, 8) != SQLITE_NULL ? " from the table: "
							 : "",
	       sqlite3_column_type(st, 8) != SQLITE_NULL ? col(st, 8) : "");
	int rc = report_train_facts(db, run_id, err, errlen);
	if (rc != SD_OK)
		goto out;

	/* throughput, from the metric rows */
	double timed = train_metric(db, run_id, "timed_steps");
	printf("\nthroughput (%s timed step(s) of %s)\n", g6(timed, b[0], 64),
	       col(st, 17));
	printf("  %-18s %s tokens/s/device\n", "tgs",
	       g6(train_metric(db, run_id, "tgs"), b[0], 64));
	printf("  %-18s %s tokens/s\n", "tokens/s",
	       g6(train_metric(db, run_id, "tokens_per_s"), b[0], 64));
	printf("  %-18s %s TFLOP/s/device\n", "TFLOPs",
	       g6(train_metric(db, run_id, "tflops"), b[0], 64));
	double mfu = train_metric(db, run_id, "mfu");
	printf("  %-18s %s%% of %s TFLOP/s/device\n", "MFU",
	       g6(mfu * 100.0, b[0], 64),
	       g6(train_metric(db, run_id, "peak_tflops"), b[1], 64));
	printf("  %-18s %s s mean, %s s median\n", "step time",
	       g6(train_metric(db, run_id, "step_s_mean"), b[0], 64),
	       g6(train_metric(db, run_id, "step_s_median"), b[1], 64));
	static const char *const shares[] = { "compute_share", "comm_share",
					      "optim_share", "other_share" };
	double sh[4];
	for (int i = 0; i < 4; i++)
		sh[i] = train_metric(db, run_id, shares[i]);
	if (isnan(sh[0]))
		printf("  %-18s -\n", "breakdown");
	else
		printf("  %-18s compute %s%%, gradient all_reduce %s%%, "
		       "optimizer %s%%, other %s%%\n", "breakdown",
		       pct1(sh[0], b[0], 64), pct1(sh[1], b[1], 64),
		       pct1(sh[2], b[2], 64), pct1(sh[3], b[3], 64));

	/* the loss, from the steps */
	printf("\nloss (%s step(s), %s to %s)\n", col(st, 17), col(st, 18),
	       col(st, 19));
	report_train_loss(db, run_id, 0, "first");
	report_train_loss(db, run_id, 1, "last");
	report_train_loss(db, run_id, 2, "min");
	if (sqlite3_column_type(st, 16) != SQLITE_NULL)
		printf("  %-18s at step %s\n", "not finite", col(st, 16));

	/* against its reference */
	if (sqlite3_column_type(st, 9) == SQLITE_NULL) {
		printf("\nreference none: the run was not judged\n");
	} else {
		double n = train_metric(db, run_id, "loss_steps_compared");
		printf("\nagainst reference '%s'%s (%s step(s) compared)\n",
		       col(st, 9),
		       sqlite3_column_int(st, 10)
			       ? ""
			       : " (not in this database: a reference file, "
				 "or deleted since)",
		       g6(n, b[0], 64));
		printf("  %-18s %s nat^2 (at most %s)\n", "variance",
		       g6(train_metric(db, run_id, "loss_var"), b[0], 64),
		       col(st, 13));
		printf("  %-18s %s nat\n", "RMSE",
		       g6(train_metric(db, run_id, "loss_rmse"), b[0], 64));
		printf("  %-18s %s nat at step %s\n", "max |diff|",
		       g6(train_metric(db, run_id, "loss_max_abs_diff"), b[0],
			  64),
		       g6(train_metric(db, run_id, "loss_max_diff_step"), b[1],
			  64));
		printf("  %-18s per step |diff| <= %s + %s x |reference|; "
		       "variance <= %s nat^2\n", "tolerance", col(st, 12),
		       col(st, 11), col(st, 13));
		printf("  %-18s %s%s%s\n", "verdict", col(st, 14),
		       sqlite3_column_type(st, 15) != SQLITE_NULL ? ": " : "",
		       sqlite3_column_type(st, 15) != SQLITE_NULL ? col(st, 15)
								  : "");
	}
	if (steps) {
		struct sd_db_param p = { .type = SD_DB_P_INT, .i = run_id };
		printf("\n");
		rc = sd_db_print_query(db, report_train_steps_text_sql, &p, 1,
				       SD_DB_TEXT, stdout, NULL, err, errlen);
	}
out:
	sqlite3_finalize(st);
	return rc;
}

static int report_text(sqlite3 *db, int64_t run_id, int steps, char *err,
		       size_t errlen)
{
	sqlite3_stmt *st = NULL;
	struct sd_db_param p = { .type = SD_DB_P_INT, .i = run_id };
	int train = is_train_run(db, run_id, err, errlen);
	if (train < 0)
		return SD_ERR_IO;
	if (sqlite3_prepare_v2(db, report_head_sql, -1, &st, NULL) !=
	    SQLITE_OK) {
		snprintf(err, errlen, "query failed: %s", sqlite3_errmsg(db));
		return SD_ERR_IO;
	}
	sqlite3_bind_int64(st, 1, run_id);
	if (sqlite3_step(st) == SQLITE_ROW) {
		printf("run       %s\n", col(st, 0));
		printf("status    %s (exit %s)%s%s\n", col(st, 1), col(st, 2),
		       sqlite3_column_type(st, 3) != SQLITE_NULL ? ": " : "",
		       sqlite3_column_type(st, 3) != SQLITE_NULL ? col(st, 3)
								 : "");
		printf("started   %s (%s s)\n", col(st, 4), col(st, 5));
		printf("command   %s\n", col(st, 6));
		printf("backend   %s %s\n", col(st, 7), col(st, 8));
		printf("ranks     %s on %s host(s): %s (%s%s%s%s%s)\n",
		       col(st, 9), col(st, 10), col(st, 11), col(st, 12),
		       sqlite3_column_type(st, 13) != SQLITE_NULL ? ", cluster "
								  : "",
		       sqlite3_column_type(st, 13) != SQLITE_NULL ? col(st, 13)
								  : "",
		       sqlite3_column_type(st, 14) != SQLITE_NULL ? ", job "
								  : "",
		       sqlite3_column_type(st, 14) != SQLITE_NULL ? col(st, 14)
								  : "");
		printf("by        %s on %s, shakedown %s\n", col(st, 19),
		       col(st, 20), col(st, 21));
		if (!train)
			printf("subjects  %s: %s passed, %s not passed; %s "
			       "wrong elements\n\n", col(st, 15), col(st, 16),
			       col(st, 17), col(st, 18));
	}
	sqlite3_finalize(st);
	if (train)
		return report_train_text(db, run_id, steps, err, errlen);
	/* the evidence first: whom the run blames (the bad nodes first,
	 * each with how many subjects it failed and its worst figure), what
	 * failed its expectations; then the tests and what was measured */
	static const char *const extra[][2] = {
		{ "SELECT count(*) FROM suspects WHERE run_id = ?1",
		  report_suspects_sql },
		{ "SELECT count(*) FROM verdicts WHERE run_id = ?1 AND "
		  "status = 'failed'", report_failed_sql },
		{ NULL, report_tests_sql },
		/* shakedown gemm: each device's verdict per type */
		{ "SELECT count(*) FROM gemm_devices WHERE run_id = ?1",
		  report_gemm_sql },
	};
	static const char *const titles[] = { "suspects", "failed expectations",
					      NULL, "gemm devices" };
	int rc;
	for (int i = 0; i < 4; i++) {
		sqlite3_stmt *cnt = NULL;
		long n = 1;
		if (extra[i][0] &&
		    sqlite3_prepare_v2(db, extra[i][0], -1, &cnt, NULL) ==
			    SQLITE_OK) {
			sqlite3_bind_int64(cnt, 1, run_id);
			n = sqlite3_step(cnt) == SQLITE_ROW
				    ? sqlite3_column_int64(cnt, 0) : 0;
		}
		sqlite3_finalize(cnt);
		if (!n)
			continue;
		if (titles[i])
			printf("%s\n", titles[i]);
		rc = sd_db_print_query(db, extra[i][1], &p, 1, SD_DB_TEXT,
				       stdout, NULL, err, errlen);
		if (rc != SD_OK)
			return rc;
		printf("\n");
	}
	return sd_db_print_query(db, report_meas_sql, &p, 1, SD_DB_TEXT,
				 stdout, NULL, err, errlen);
}

/* A run's bad nodes: each host with its suspects' reasons. */
struct bad_nodes {
	const char **hosts;
	char **reasons;
	int n, cap;
};

static void bad_nodes_free(struct bad_nodes *bn)
{
	for (int i = 0; i < bn->n; i++) {
		free((char *)bn->hosts[i]);
		free(bn->reasons[i]);
	}
	free(bn->hosts);
	free(bn->reasons);
}

/* One more host and its reasons.  SD_OK or SD_ERR_NOMEM. */
static int bad_nodes_add(struct bad_nodes *bn, const char *host,
			 const char *reasons)
{
	if (bn->n == bn->cap) {
		int cap = bn->cap ? bn->cap * 2 : 16;
		void *a = realloc(bn->hosts, (size_t)cap * sizeof(*bn->hosts));
		if (a)
			bn->hosts = a;
		void *b = realloc(bn->reasons,
				  (size_t)cap * sizeof(*bn->reasons));
		if (b)
			bn->reasons = b;
		if (!a || !b)
			return SD_ERR_NOMEM;
		bn->cap = cap;
	}
	bn->hosts[bn->n] = strdup(host);
	bn->reasons[bn->n] = strdup(reasons);
	bn->n++;
	return bn->hosts[bn->n - 1] && bn->reasons[bn->n - 1] ? SD_OK
							      : SD_ERR_NOMEM;
}

/* The run's bad nodes from its suspects, by host.  SD_OK, SD_ERR_IO or
 * SD_ERR_NOMEM. */
static int read_bad_nodes(sqlite3 *db, int64_t run_id, struct bad_nodes *bn)
{
	sqlite3_stmt *st = NULL;
	int rc = SD_ERR_IO, step;
	if (sqlite3_prepare_v2(db,
		"SELECT hosts, group_concat(kind || ' ' || subject || ': ' || "
		" reason, '; ') FROM suspects WHERE run_id = ?1 AND bad_node = 1 "
		"GROUP BY hosts ORDER BY hosts", -1, &st, NULL) != SQLITE_OK)
		return SD_ERR_IO;
	sqlite3_bind_int64(st, 1, run_id);
	while ((step = sqlite3_step(st)) == SQLITE_ROW)
		if ((rc = bad_nodes_add(bn,
				(const char *)sqlite3_column_text(st, 0),
				(const char *)sqlite3_column_text(st, 1))))
			break;
	if (step == SQLITE_DONE)
		rc = SD_OK;
	sqlite3_finalize(st);
	return rc;
}

/* The bad nodes' part of the report: their hostlist, then each with its
 * reasons (JSON: "bad_nodes" and "nodes", and "other" opened). */
static int put_bad_nodes(struct sd_buf *out, const struct bad_nodes *bn,
			 const char *uuid, int json)
{
	char *list = sd_hostlist_compress(bn->hosts, bn->n);
	if (!list)
		return SD_ERR_NOMEM;
	if (json) {
		sd_buf_printf(out, "{\"run\":\"%s\",\"bad_nodes\":", uuid);
		sd_buf_json_string(out, list);
		sd_buf_printf(out, ",\"nodes\":[");
		for (int i = 0; i < bn->n; i++) {
			sd_buf_printf(out, "%s{\"host\":", i ? "," : "");
			sd_buf_json_string(out, bn->hosts[i]);
			sd_buf_printf(out, ",\"reason\":");
			sd_buf_json_string(out, bn->reasons[i]);
			sd_buf_printf(out, "}");
		}
		sd_buf_printf(out, "],\"other\":[");
	} else {
		sd_buf_printf(out, "%s\n", list);
		for (int i = 0; i < bn->n; i++)
			sd_buf_printf(out, "%s: %s\n", bn->hosts[i],
				      bn->reasons[i]);
	}
	free(list);
	return SD_OK;
}

/* What no node explains (paths, rails, groups): # lines, or the JSON
 * array's objects; *k says how many.  SD_OK or SD_ERR_IO. */
static int put_other_suspects(sqlite3 *db, int64_t run_id, int json,
			      struct sd_buf *out, int *k)
{
	static const char *const keys[] = { "kind", "subject", "hosts",
					    "reason" };
	sqlite3_stmt *st = NULL;
	int step;
	if (sqlite3_prepare_v2(db,
		"SELECT kind, subject, hosts, reason FROM suspects "
		"WHERE run_id = ?1 AND bad_node = 0 ORDER BY kind, subject", -1,
		&st, NULL) != SQLITE_OK)
		return SD_ERR_IO;
	sqlite3_bind_int64(st, 1, run_id);
	*k = 0;
	while ((step = sqlite3_step(st)) == SQLITE_ROW) {
		const char *c[4];
		for (int i = 0; i < 4; i++)
			c[i] = (const char *)sqlite3_column_text(st, i);
		if (!json) {
			sd_buf_printf(out, "# %s %s (%s): %s\n", c[0], c[1],
				      c[2], c[3]);
		} else {
			sd_buf_printf(out, "%s{", *k ? "," : "");
			for (int i = 0; i < 4; i++) {
				sd_buf_printf(out, "%s\"%s\":", i ? "," : "",
					      keys[i]);
				sd_buf_json_string(out, c[i] ? c[i] : "");
			}
			sd_buf_printf(out, "}");
		}
		(*k)++;
	}
	sqlite3_finalize(st);
	return step == SQLITE_DONE ? SD_OK : SD_ERR_IO;
}

/* The run's end: JSON's run_status and run_message; in text, a run that
 * failed with nobody to blame says so.  SD_OK or SD_ERR_IO. */
static int put_run_end(sqlite3 *db, int64_t run_id, const char *uuid,
		       int json, int blamed, struct sd_buf *out)
{
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(db, "SELECT status, message FROM runs WHERE id = ?1",
			       -1, &st, NULL) != SQLITE_OK)
		return SD_ERR_IO;
	sqlite3_bind_int64(st, 1, run_id);
	const char *status = "", *message = NULL;
	if (sqlite3_step(st) == SQLITE_ROW) {
		status = (const char *)sqlite3_column_text(st, 0);
		message = (const char *)sqlite3_column_text(st, 1);
	}
	if (json) {
		sd_buf_printf(out, "],\"run_status\":");
		sd_buf_json_string(out, status ? status : "");
		sd_buf_printf(out, ",\"run_message\":");
		if (message)
			sd_buf_json_string(out, message);
		else
			sd_buf_printf(out, "null");
		sd_buf_printf(out, "}\n");
	} else if (!blamed && status && strcmp(status, "passed") != 0) {
		sd_buf_printf(out, "# run %s %s with no suspect%s%s\n", uuid,
			      status, message ? ": " : "",
			      message ? message : "");
	}
	sqlite3_finalize(st);
	return SD_OK;
}

/* The run's recorded node list (jobs.nodelist): a malloc'd string, "" when
 * none was recorded; NULL when it cannot be read or memory runs out. */
static char *read_nodelist(sqlite3 *db, int64_t run_id)
{
	sqlite3_stmt *st = NULL;
	char *list = NULL;
	if (sqlite3_prepare_v2(db, "SELECT nodelist FROM jobs WHERE "
			       "run_id = ?1", -1, &st, NULL) != SQLITE_OK)
		return NULL;
	sqlite3_bind_int64(st, 1, run_id);
	int step = sqlite3_step(st);
	if (step == SQLITE_ROW || step == SQLITE_DONE) {
		const char *t = step == SQLITE_ROW
			? (const char *)sqlite3_column_text(st, 0) : NULL;
		list = strdup(t ? t : "");
	}
	sqlite3_finalize(st);
	return list;
}

/* --drain: each bad node drained with its first suspect's reason, within
 * the run's recorded node list.  SD_OK, or SD_ERR_BACKEND with err when
 * not every one was (none when a host was refused). */
static int drain_bad_nodes(sqlite3 *db, int64_t run_id, struct bad_nodes *bn,
			   const char *uuid, char *err, size_t errlen)
{
	fflush(stdout);
	char *alloc = read_nodelist(db, run_id);
	if (!alloc) {
		snprintf(err, errlen, "nothing drained: cannot read the run's "
			 "node list: %s", sqlite3_errmsg(db));
		return SD_ERR_BACKEND;
	}
	const char **why = calloc((size_t)bn->n, sizeof(*why));
	for (int i = 0; why && i < bn->n; i++) {
		char *semi = strstr(bn->reasons[i], "; node ");
		why[i] = bn->reasons[i];
		if (semi)
			*semi = '\0';
	}
	int bad = !why ? bn->n
		  : sd_drain_hosts(bn->hosts, why, bn->n, uuid, 10, alloc,
				   "the run's recorded node list");
	free(why);
	free(alloc);
	if (!bad)
		return SD_OK;
	if (bad == SD_DRAIN_REFUSED)
		snprintf(err, errlen, "nothing drained: the record names a "
			 "host that is not one host of the run's node list "
			 "(above); the report is complete");
	else
		snprintf(err, errlen, "not every bad node was drained "
			 "(above); the report is complete");
	return SD_ERR_BACKEND;
}

/* The bad nodes of a run: line 1 their Slurm hostlist (empty when
 * none), then one line per node with its reasons; what no single node
 * explains (paths, rails, groups) follows as # lines.  JSON: one object. */
static int report_bad_nodes(sqlite3 *db, int64_t run_id, const char *uuid,
			    int json, int drain, char *err, size_t errlen)
{
	struct bad_nodes bn = { 0 };
	struct sd_buf out = { 0 };
	int k = 0;
	int rc = read_bad_nodes(db, run_id, &bn);
	if (!rc)
		rc = put_bad_nodes(&out, &bn, uuid, json);
	if (!rc)
		rc = put_other_suspects(db, run_id, json, &out, &k);
	if (!rc)
		rc = put_run_end(db, run_id, uuid, json, bn.n || k, &out);
	if (!rc && !out.data)
		sd_buf_printf(&out, "%s", "");
	if (!rc && !out.data)
		rc = SD_ERR_NOMEM;
	if (!rc) {
		fputs(out.data, stdout);
		if (drain && bn.n)
			rc = drain_bad_nodes(db, run_id, &bn, uuid, err,
					     errlen);
	}
	if (rc == SD_ERR_IO)
		snprintf(err, errlen, "reading the suspects: %s",
			 sqlite3_errmsg(db));
	else if (rc == SD_ERR_NOMEM)
		snprintf(err, errlen, "out of memory");
	bad_nodes_free(&bn);
	sd_buf_free(&out);
	return rc;
}

/* report --format html: the page to stdout, or to FILE through FILE.tmp,
 * renamed when whole (a reader never sees half a page; a failure leaves
 * FILE as it was).  Returns an exit status, its message printed. */
static int report_html(sqlite3 *db, const char *uuid, const char *path)
{
	char err[768];
	char *html = NULL;
	size_t len = 0;
	int st = sd_report_html(db, uuid, &html, &len, err, sizeof(err));
	if (st != SD_OK)
		return query_failed("report", st, err);
	if (!path || strcmp(path, "-") == 0) {
		fwrite(html, 1, len, stdout);
		free(html);
		return sd_finish_stdout();
	}
	char failed[4200];
	int rc = sd_write_replace(path, html, len, failed, sizeof(failed));
	int e = errno;
	free(html);
	if (rc == -2) {
		fprintf(stderr, "shakedown report: -o %s: the name is too "
			"long\n", path);
		return SD_EXIT_USAGE;
	}
	if (rc) {
		fprintf(stderr, "shakedown report: cannot write %s: %s; "
			"check the folder exists and is writable\n", failed,
			strerror(e));
		return SD_EXIT_ENV;
	}
	return SD_EXIT_OK;
}

int cmd_report(int argc, char **argv)
{
	struct db_opts o;
	sqlite3 *db = NULL;
	char err[768];
	int64_t run_id;
	char uuid[37];
	int rc = parse(argc, argv, &o, 1, report_options, sd_help_report);
	if (rc)
		return rc == 1 ? sd_finish_stdout() : SD_EXIT_USAGE;
	rc = open_db(argv[0], o.db, 0, &db);
	if (rc)
		return rc;
	int st = sd_db_find_run(db, o.npos ? o.pos[0] : NULL, &run_id, uuid,
				err, sizeof(err));
	if (st != SD_OK) {
		rc = query_failed(argv[0], st, err);
		goto out;
	}
	if (o.drain && !o.bad_nodes) {
		fprintf(stderr, "shakedown report: --drain drains the bad nodes "
			"that --bad-nodes lists; give both\n");
		rc = SD_EXIT_USAGE;
		goto out;
	}
	if (o.steps && (o.bad_nodes || o.format != SD_DB_TEXT)) {
		fprintf(stderr, "shakedown report: --steps adds a training "
			"run's steps to the text report; --format json and csv "
			"have them already\n");
		rc = SD_EXIT_USAGE;
		goto out;
	}
	if (o.output && !o.html) {
		fprintf(stderr, "shakedown report: -o writes the HTML report; "
			"give --format html (the other formats go to "
			"standard output)\n");
		rc = SD_EXIT_USAGE;
		goto out;
	}
	if (o.html && (o.bad_nodes || o.steps)) {
		fprintf(stderr, "shakedown report: --format html is the whole "
			"run's report; it has the bad nodes and the steps "
			"already: drop --bad-nodes and --steps\n");
		rc = SD_EXIT_USAGE;
		goto out;
	}
	if (o.html) {
		rc = report_html(db, uuid, o.output);
		goto out;
	}
	if (o.bad_nodes && o.format == SD_DB_CSV) {
		fprintf(stderr, "shakedown report: --bad-nodes prints text or "
			"json, not csv\n");
		rc = SD_EXIT_USAGE;
		goto out;
	}
	if (o.bad_nodes) {
		st = report_bad_nodes(db, run_id, uuid, o.format == SD_DB_JSON,
				      o.drain, err, sizeof(err));
	} else if (o.format == SD_DB_JSON) {
		char *json = NULL;
		st = sd_db_report_json(db, uuid, &json, err, sizeof(err));
		if (st == SD_OK)
			printf("%s\n", json);
		free(json);
	} else if (o.format == SD_DB_CSV) {
		/* a training run's rows are its steps */
		struct sd_db_param p = { .type = SD_DB_P_INT, .i = run_id };
		int train = is_train_run(db, run_id, err, sizeof(err));
		st = train < 0 ? SD_ERR_IO
		     : sd_db_print_query(db, train ? report_train_steps_sql
						   : report_meas_sql, &p, 1,
					 SD_DB_CSV, stdout, NULL, err,
					 sizeof(err));
	} else {
		st = report_text(db, run_id, o.steps, err, sizeof(err));
	}
	if (st != SD_OK) {
		rc = query_failed(argv[0], st, err);
		goto out;
	}
	rc = sd_finish_stdout();
out:
	sd_db_close(db);
	return rc;
}

/* --- history ----------------------------------------------------------- */

int cmd_history(int argc, char **argv)
{
	struct db_opts o;
	sqlite3 *db = NULL;
	char err[768];
	uint64_t size = 0;
	enum sd_op op;
	enum sd_dtype dt;
	const char *hint = NULL;
	int rc = parse(argc, argv, &o, 0, history_options, sd_help_history);
	if (rc)
		return rc == 1 ? sd_finish_stdout() : SD_EXIT_USAGE;
	if (!o.op) {
		fprintf(stderr, "shakedown history: --op is required, e.g. "
			"--op all_reduce\n");
		return SD_EXIT_USAGE;
	}
	if (sd_op_from_name(o.op, &op, &hint) != 0) {
		fprintf(stderr, "shakedown history: unknown op '%s'%s%s%s\n",
			o.op, hint ? "; did you mean '" : "", hint ? hint : "",
			hint ? "'?" : "");
		return SD_EXIT_USAGE;
	}
	hint = NULL;
	if (o.dtype && sd_dtype_from_name(o.dtype, &dt, &hint) != 0) {
		fprintf(stderr, "shakedown history: unknown dtype '%s'%s%s%s\n",
			o.dtype, hint ? "; did you mean '" : "",
			hint ? hint : "", hint ? "'?" : "");
		return SD_EXIT_USAGE;
	}
	if (o.size && sd_parse_size(o.size, &size) != 0) {
		fprintf(stderr, "shakedown history: bad size '%s'; use a "
			"number with an optional K, M or G suffix\n", o.size);
		return SD_EXIT_USAGE;
	}
	rc = open_db(argv[0], o.db, 0, &db);
	if (rc)
		return rc;
	const char *dates[2] = { o.since, o.until };
	for (int i = 0; i < 2; i++)
		if (dates[i] && !sd_named_valid_date(db, dates[i])) {
			fprintf(stderr, "shakedown history: bad date '%s' for "
				"--%s; use YYYY-MM-DD or YYYY-MM-DDTHH:MM:SS\n",
				dates[i], i ? "until" : "since");
			rc = SD_EXIT_USAGE;
			goto out;
		}
	struct sd_db_param p[6] = {
		{ .type = SD_DB_P_TEXT, .s = sd_op_name(op) },
		{ .type = o.size ? SD_DB_P_INT : SD_DB_P_NULL,
		  .i = (long long)size },
		{ .type = SD_DB_P_TEXT, .s = o.dtype ? sd_dtype_name(dt)
						     : NULL },
		{ .type = SD_DB_P_TEXT, .s = o.since },
		{ .type = SD_DB_P_TEXT, .s = o.until },
		{ .type = SD_DB_P_TEXT, .s = o.host },
	};
	int st = sd_db_print_query(db, sd_db_history_sql, p, 6, o.format,
				   stdout, NULL, err, sizeof(err));
	if (st != SD_OK) {
		rc = query_failed(argv[0], st, err);
		goto out;
	}
	rc = sd_finish_stdout();
out:
	sd_db_close(db);
	return rc;
}

/* --- compare ----------------------------------------------------------- */

/* ?1 run A, ?2 run B, ?3 tolerance in percent, ?4 a host (NULL: all):
 * with one, only the tests it took part in (test_hosts_v), so that a
 * host's own groups, node pairs and rails are compared.
 *
 * One row per test (name, op, data type, operator, root, scope).  At each
 * size the figure is the best busbw of the test's measurements (in and
 * out of place, every group); r = B's / A's - 1.  A's noise is measured
 * from its own repeats: the measurements of one test at one size should
 * agree, and its noise at a size is the 90th percentile of their relative
 * deviations from their set's median.  The test's change is the median r
 * over the sizes both runs measured, so that one size's hiccup is not a
 * regression and a slower link is; it is a REGRESSION beyond bound =
 * min(95%, max(tolerance, 3 x the median of A's noise over those sizes)).
 * Measured by bench/compare_noise.sh (bench/README-compare.md). */
#define SD_COMPARE_TEST "name, op, dtype, redop, root, scope"
#define SD_COMPARE_SET "run_id, " SD_COMPARE_TEST ", size_bytes"
/* A's noise per size, shared by both comparisons: vals (every
 * measurement of A and B, of the host's tests with ?4) and noise. */
#define SD_COMPARE_NOISE \
	"WITH vals AS (SELECT t.run_id, t.test_index, t.name, t.op, t.dtype, " \
	"  coalesce(t.redop, '-') AS redop, coalesce(t.root, -1) AS root, " \
	"  t.scope, m.size_bytes, m.busbw_gbs AS v " \
	" FROM tests t JOIN measurements m ON m.test_id = t.id " \
	" WHERE t.run_id IN (?1, ?2) AND (?4 IS NULL OR t.id IN " \
	"  (SELECT test_id FROM test_hosts_v WHERE host = ?4))), " \
	/* A's noise per size */ \
	"ranked AS (SELECT *, row_number() OVER (PARTITION BY " SD_COMPARE_SET \
	"  ORDER BY v) AS i, count(*) OVER (PARTITION BY " SD_COMPARE_SET \
	"  ) AS n FROM vals WHERE run_id = ?1), " \
	"med AS (SELECT " SD_COMPARE_SET ", avg(v) AS med FROM ranked " \
	" WHERE n >= 2 AND i IN ((n + 1) / 2, (n + 2) / 2) " \
	" GROUP BY " SD_COMPARE_SET "), " \
	"devs AS (SELECT r.size_bytes, abs(r.v / d.med - 1) AS dev " \
	" FROM ranked r JOIN med d USING (" SD_COMPARE_SET ") WHERE d.med > 0), " \
	"dranked AS (SELECT size_bytes, dev, row_number() OVER (PARTITION BY " \
	"  size_bytes ORDER BY dev) AS i, count(*) OVER (PARTITION BY " \
	"  size_bytes) AS n FROM devs), " \
	"noise AS (SELECT size_bytes, dev AS noise FROM dranked " \
	" WHERE i = (9 * n + 9) / 10), "

static const char compare_sql[] =
	SD_COMPARE_NOISE
	/* each run's best figure per test and size, and the change */
	"best AS (SELECT run_id, min(test_index) AS test_index, "
	SD_COMPARE_TEST ", size_bytes, max(v) AS v FROM vals "
	" GROUP BY " SD_COMPARE_SET "), "
	"j AS (SELECT a.test_index, " SD_COMPARE_TEST ", size_bytes, "
	"  a.v AS va, b.v AS vb, b.v / a.v - 1 AS r, "
	"  coalesce(z.noise, 0) AS z "
	" FROM (SELECT * FROM best WHERE run_id = ?1) a "
	" JOIN (SELECT * FROM best WHERE run_id = ?2) b "
	"  USING (" SD_COMPARE_TEST ", size_bytes) "
	" LEFT JOIN noise z USING (size_bytes) WHERE a.v > 0), "
	"jr AS (SELECT *, row_number() OVER w_r AS ir, row_number() OVER w_z "
	"  AS iz, row_number() OVER w_s AS il, count(*) OVER (PARTITION BY "
	SD_COMPARE_TEST ") AS n FROM j "
	" WINDOW w_r AS (PARTITION BY " SD_COMPARE_TEST " ORDER BY r), "
	"  w_z AS (PARTITION BY " SD_COMPARE_TEST " ORDER BY z), "
	"  w_s AS (PARTITION BY " SD_COMPARE_TEST " ORDER BY size_bytes DESC)), "
	"t AS (SELECT min(test_index) AS ti, " SD_COMPARE_TEST ", "
	"  max(n) AS sizes, "
	"  avg(CASE WHEN ir IN ((n + 1) / 2, (n + 2) / 2) THEN r END) AS mr, "
	"  min(r) AS worst, "
	"  avg(CASE WHEN iz IN ((n + 1) / 2, (n + 2) / 2) THEN z END) AS mz, "
	"  max(CASE WHEN il = 1 THEN size_bytes END) AS top, "
	"  max(CASE WHEN il = 1 THEN va END) AS va, "
	"  max(CASE WHEN il = 1 THEN vb END) AS vb "
	" FROM jr GROUP BY " SD_COMPARE_TEST "), "
	/* the tests of one run only */
	"only AS (SELECT min(test_index) + iif(run_id = ?2, 1000000, 0) AS ti, "
	SD_COMPARE_TEST ", iif(run_id = ?1, 'only in A', 'only in B') AS w "
	" FROM best x WHERE NOT EXISTS (SELECT 1 FROM t WHERE t.name = x.name "
	"  AND t.op = x.op AND t.dtype = x.dtype AND t.redop = x.redop "
	"  AND t.root = x.root AND t.scope = x.scope) "
	" GROUP BY run_id, " SD_COMPARE_TEST "), "
	"rows AS (SELECT ti, " SD_COMPARE_TEST ", sizes, top, va, vb, mr, "
	"  worst, min(95.0, max(?3, 300.0 * mz)) AS bound, NULL AS w FROM t "
	" UNION ALL SELECT ti, " SD_COMPARE_TEST ", NULL, NULL, NULL, NULL, "
	"  NULL, NULL, NULL, w FROM only) "
	"SELECT name AS test, dtype, nullif(redop, '-') AS redop, "
	" nullif(root, -1) AS root, scope, sizes, top AS size_bytes, "
	" va AS busbw_gbs_a, vb AS busbw_gbs_b, "
	" round(100.0 * mr, 2) AS delta_pct, round(100.0 * worst, 2) "
	"  AS worst_pct, round(bound, 2) AS bound_pct, "
	" coalesce(w, CASE WHEN mr < -bound / 100.0 THEN 'REGRESSION' "
	"  WHEN mr > bound / 100.0 THEN 'improved' ELSE 'ok' END) AS verdict "
	"FROM rows ORDER BY ti";

/* compare --subjects: one row per judged subject (test, subject kind and
 * name, expectation, size): the figure its verdict judged (its last
 * attempt's) in A and in B, r = B's / A's - 1 (A's / B's for a time),
 * and the bound at that size from A's noise as above: a slower node pair
 * is a regression of its own even where the test's best group is not. */
#define SD_COMPARE_SUBJECT SD_COMPARE_TEST ", kind, subject, expectation, " \
	"size_bytes, unit"
static const char compare_subjects_sql[] =
	SD_COMPARE_NOISE
	"subj AS (SELECT v.run_id, coalesce(t.plan_test, t.test_index + 1) "
	"  AS num, t.name, t.op, t.dtype, coalesce(t.redop, '-') AS redop, "
	"  coalesce(t.root, -1) AS root, t.scope, v.subject_kind AS kind, "
	"  v.subject, v.expectation, v.size_bytes, v.unit, max(v.id) AS last, "
	"  v.measured AS m "
	" FROM verdicts v JOIN tests t ON t.id = v.test_id "
	" WHERE v.run_id IN (?1, ?2) AND v.measured IS NOT NULL "
	"  AND v.unit IN ('GB/s', 'us') AND (?4 IS NULL OR t.id IN "
	"  (SELECT test_id FROM test_hosts_v WHERE host = ?4)) "
	" GROUP BY v.run_id, " SD_COMPARE_SUBJECT "), "
	"j AS (SELECT a.num, " SD_COMPARE_SUBJECT ", a.m AS va, b.m AS vb, "
	"  iif(unit = 'us', a.m / b.m, b.m / a.m) - 1 AS r, "
	"  min(95.0, max(?3, 300.0 * coalesce(z.noise, 0))) AS bound, "
	"  NULL AS w "
	" FROM (SELECT * FROM subj WHERE run_id = ?1) a "
	" JOIN (SELECT * FROM subj WHERE run_id = ?2) b "
	"  USING (" SD_COMPARE_SUBJECT ") "
	" LEFT JOIN noise z USING (size_bytes) WHERE a.m > 0 AND b.m > 0), "
	"only AS (SELECT num + iif(run_id = ?2, 1000000, 0) AS num, "
	SD_COMPARE_SUBJECT ", NULL, NULL, NULL, NULL, "
	"  iif(run_id = ?1, 'only in A', 'only in B') AS w FROM subj x "
	" WHERE NOT EXISTS (SELECT 1 FROM j WHERE j.name = x.name "
	"  AND j.op = x.op AND j.dtype = x.dtype AND j.redop = x.redop "
	"  AND j.root = x.root AND j.scope = x.scope AND j.kind = x.kind "
	"  AND j.subject = x.subject AND j.expectation = x.expectation "
	"  AND j.size_bytes IS x.size_bytes AND j.unit = x.unit)), "
	"rows AS (SELECT * FROM j UNION ALL SELECT * FROM only) "
	"SELECT num % 1000000 AS test, name, dtype, scope, kind, subject, "
	" expectation, size_bytes, unit, va AS a, vb AS b, "
	" round(100.0 * r, 2) AS delta_pct, round(bound, 2) AS bound_pct, "
	" coalesce(w, CASE WHEN r < -bound / 100.0 THEN 'REGRESSION' "
	"  WHEN r > bound / 100.0 THEN 'improved' ELSE 'ok' END) AS verdict "
	"FROM rows ORDER BY num, kind, subject, expectation";

static int parse_tolerance(const char *s, double *pct)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (end == s || errno)
		return -1;
	if (*end == '%')
		end++;
	if (*end != '\0' || v < 0.0 || v > 100.0)
		return -1;
	*pct = v;
	return 0;
}

int cmd_compare(int argc, char **argv)
{
	struct db_opts o;
	sqlite3 *db = NULL;
	char err[768], uuid[2][37];
	int64_t id[2];
	double tol = 5.0;
	int rc = parse(argc, argv, &o, 2, compare_options, sd_help_compare);
	if (rc)
		return rc == 1 ? sd_finish_stdout() : SD_EXIT_USAGE;
	if (o.npos != 2) {
		fprintf(stderr, "shakedown compare: give two runs, e.g. "
			"'shakedown compare 3f2c 9a1b'\n");
		return SD_EXIT_USAGE;
	}
	if (o.tolerance && parse_tolerance(o.tolerance, &tol) != 0) {
		fprintf(stderr, "shakedown compare: bad tolerance '%s'; use a "
			"percentage from 0 to 100, e.g. 5%%\n", o.tolerance);
		return SD_EXIT_USAGE;
	}
	rc = open_db(argv[0], o.db, 0, &db);
	if (rc)
		return rc;
	for (int i = 0; i < 2; i++) {
		int st = sd_db_find_run(db, o.pos[i], &id[i], uuid[i], err,
					sizeof(err));
		if (st != SD_OK) {
			rc = query_failed(argv[0], st, err);
			goto out;
		}
	}
	struct sd_db_param p[4] = {
		{ .type = SD_DB_P_INT, .i = id[0] },
		{ .type = SD_DB_P_INT, .i = id[1] },
		{ .type = SD_DB_P_REAL, .d = tol },
		{ .type = SD_DB_P_TEXT, .s = o.host },
	};
	const char *sql = o.subjects ? compare_subjects_sql : compare_sql;
	if (o.format == SD_DB_TEXT)
		printf("A  %s\nB  %s\ntolerance %.4g%%%s%s\n\n", uuid[0],
		       uuid[1], tol, o.host ? "\nhost " : "",
		       o.host ? o.host : "");
	int st = sd_db_print_query(db, sql, p, 4, o.format, stdout,
				   NULL, err, sizeof(err));
	if (st != SD_OK) {
		rc = query_failed(argv[0], st, err);
		goto out;
	}
	/* Count the regressions with the same query. */
	struct sd_buf q = { 0 };
	long nreg = 0;
	if (sd_buf_printf(&q, "SELECT count(*) FROM (%s) WHERE verdict = "
			  "'REGRESSION'", sql) == 0) {
		sqlite3_stmt *cs = NULL;
		if (sqlite3_prepare_v2(db, q.data, -1, &cs, NULL) ==
		    SQLITE_OK) {
			sqlite3_bind_int64(cs, 1, id[0]);
			sqlite3_bind_int64(cs, 2, id[1]);
			sqlite3_bind_double(cs, 3, tol);
			sd_db_bind_str(cs, 4, o.host);
			if (sqlite3_step(cs) == SQLITE_ROW)
				nreg = (long)sqlite3_column_int64(cs, 0);
		}
		sqlite3_finalize(cs);
	}
	sd_buf_free(&q);
	if (o.format == SD_DB_TEXT)
		printf("\n%ld regression%s beyond %.4g%% and A's noise "
		       "(bound_pct)\n", nreg, nreg == 1 ? "" : "s", tol);
	rc = sd_finish_stdout();
	if (rc == SD_EXIT_OK && nreg > 0)
		rc = SD_EXIT_CHECK;
out:
	sd_db_close(db);
	return rc;
}

/* --- db info | migrate | check ------------------------------------------ */

static int print_kv(sqlite3 *db, const char *label, const char *sql)
{
	sqlite3_stmt *st = NULL;
	int rc = SD_ERR_IO;
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW) {
		printf("%-16s %s\n", label, col(st, 0));
		rc = SD_OK;
	}
	sqlite3_finalize(st);
	return rc;
}

static int db_info(sqlite3 *db, const char *path)
{
	struct stat stt;
	int version = 0;
	char err[256];
	printf("%-16s %s\n", "path", path);
	if (stat(path, &stt) == 0)
		printf("%-16s %lld\n", "size_bytes", (long long)stt.st_size);
	if (sd_db_schema_version(db, &version, err, sizeof(err)) == SD_OK)
		printf("%-16s %d (this shakedown: %d)\n", "schema_version",
		       version, SD_DB_SCHEMA_VERSION);
	print_kv(db, "journal_mode", "PRAGMA journal_mode");
	int rc = print_kv(db, "runs",
		"SELECT count(*) || coalesce(' (' || (SELECT group_concat("
		" n || ' ' || status, ', ') FROM (SELECT status, count(*) AS n "
		" FROM runs GROUP BY status ORDER BY status)) || ')', '') "
		"FROM runs");
	if (rc != SD_OK)
		return rc;
	print_kv(db, "first_run", "SELECT coalesce(min(started_at), '-') "
		 "FROM runs");
	print_kv(db, "last_run", "SELECT coalesce(max(started_at), '-') "
		 "FROM runs");
	print_kv(db, "tests", "SELECT count(*) FROM tests");
	print_kv(db, "measurements", "SELECT count(*) FROM measurements");
	print_kv(db, "hosts", "SELECT count(DISTINCT host) FROM ranks");
	print_kv(db, "upload_outbox",
		 "SELECT count(*) || coalesce(' (' || (SELECT group_concat("
		 " n || ' ' || state, ', ') FROM (SELECT state, count(*) AS n "
		 " FROM upload_outbox GROUP BY state ORDER BY state)) || ')', "
		 " '') FROM upload_outbox");
	return SD_OK;
}

/* Returns the number of problems found (printed), or -1 on failure. */
static int db_check(sqlite3 *db)
{
	sqlite3_stmt *st = NULL;
	int problems = 0, version = 0;
	char err[256];
	if (sd_db_schema_version(db, &version, err, sizeof(err)) != SD_OK)
		return -1;
	if (version < SD_DB_SCHEMA_VERSION) {
		printf("schema: version %d is older than %d; run 'shakedown "
		       "db migrate'\n", version, SD_DB_SCHEMA_VERSION);
		problems++;
	} else {
		printf("schema: version %d, ok\n", version);
	}
	if (sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &st, NULL) !=
	    SQLITE_OK)
		return -1;
	int nrow = 0, bad = 0;
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *t = col(st, 0);
		if (strcmp(t, "ok") != 0) {
			printf("integrity: %s\n", t);
			bad++;
		}
		nrow++;
	}
	sqlite3_finalize(st);
	if (nrow == 0)
		return -1;
	if (bad)
		problems++;
	else
		printf("integrity: ok\n");
	if (sqlite3_prepare_v2(db, "PRAGMA foreign_key_check", -1, &st,
			       NULL) != SQLITE_OK)
		return -1;
	int fk = 0;
	while (sqlite3_step(st) == SQLITE_ROW) {
		if (fk++ < 10)
			printf("foreign keys: %s row %s refers to a missing "
			       "%s row\n", col(st, 0), col(st, 1), col(st, 2));
	}
	sqlite3_finalize(st);
	if (fk)
		problems++;
	else
		printf("foreign keys: ok\n");
	print_kv(db, "running runs:", "SELECT count(*) FROM runs "
		 "WHERE status = 'running'");
	return problems;
}

enum db_subcommand { DB_INFO, DB_MIGRATE, DB_CHECK, DB_RECOVER };

static const struct sd_name_row db_subcommands[] = {
	{ "info", DB_INFO }, { "migrate", DB_MIGRATE }, { "check", DB_CHECK },
	{ "recover", DB_RECOVER }, { NULL, 0 }
};

/* Replay one journal; 0 when it went in (or was left alone with a
 * reason, said on stdout), else the exit status, said on stderr. */
static int recover_one(sqlite3 *db, const char *path, const char *dbid,
		       const char *journal, int named)
{
	char err[4600];
	int nst, ntests, skipped;
	int rc = sd_db_journal_replay(db, journal, dbid, path, &nst, &ntests,
				      &skipped, err, sizeof(err));
	if (rc != SD_OK) {
		fprintf(stderr, "shakedown db: %s: nothing recovered: %s\n",
			path, err);
		return rc == SD_ERR_INVALID ? SD_EXIT_USAGE : SD_EXIT_RECORD;
	}
	if (skipped) {
		/* named with --journal: it was asked for and not taken */
		if (named) {
			fprintf(stderr, "shakedown db: %s: nothing recovered: "
				"%s\n", path, err);
			return SD_EXIT_USAGE;
		}
		printf("%s: %s\n", path, err);
		return 0;
	}
	printf("%s: recovered %d test%s (%d statements) from %s\n", path,
	       ntests, ntests == 1 ? "" : "s", nst, journal);
	if (err[0])
		fprintf(stderr, "shakedown db: %s\n", err);
	return 0;
}

/* Replay what runs could not write (their journals) into the database:
 * the one named, or every journal of this database (by its identity)
 * beside `from` (path, or the damaged file it was salvaged from) and in
 * $TMPDIR; another database's is named and left
 * alone. */
static int db_recover(sqlite3 *db, const char *path, const char *from,
		      const char *journal)
{
	char dbid[37];
	sd_db_identity(db, dbid);
	if (journal) {
		if (access(journal, F_OK) != 0) {
			printf("%s: nothing to recover (no %s)\n", path,
			       journal);
			return sd_finish_stdout();
		}
		int rc = recover_one(db, path, dbid, journal, 1);
		return rc ? rc : sd_finish_stdout();
	}
	struct sd_db_journals js;
	sd_db_journals_find(from, dbid, &js);
	int status = 0;
	for (size_t i = 0; i < js.nown; i++) {
		int rc = recover_one(db, path, dbid, js.own[i], 0);
		if (rc && (!status || rc == SD_EXIT_RECORD))
			status = rc;
	}
	for (size_t i = 0; i < js.nother; i++)
		recover_one(db, path, dbid, js.other[i], 0);
	if (!js.nown) {
		const char *tmp = getenv("TMPDIR");
		printf("%s: nothing to recover (no journal of database %s "
		       "beside %s or in %s)\n", path, dbid[0] ? dbid : "(none)", from,
		       tmp && *tmp ? tmp : "/tmp");
	}
	sd_db_journals_free(&js);
	return status ? status : sd_finish_stdout();
}

int cmd_db(int argc, char **argv)
{
	struct db_opts o;
	sqlite3 *db = NULL;
	char err[768];
	const char *hint = NULL;
	int sub;
	int rc = parse(argc, argv, &o, 1, db_options, sd_help_db);
	if (rc)
		return rc == 1 ? sd_finish_stdout() : SD_EXIT_USAGE;
	if (!o.npos) {
		fprintf(stderr, "shakedown db: missing subcommand; use info, "
			"migrate, check or recover\n");
		return SD_EXIT_USAGE;
	}
	if (sd_name_lookup(db_subcommands, o.pos[0], &sub, &hint) != 0) {
		if (hint)
			fprintf(stderr, "shakedown db: unknown subcommand '%s'; "
				"did you mean '%s'?\n", o.pos[0], hint);
		else
			fprintf(stderr, "shakedown db: unknown subcommand '%s'; "
				"use info, migrate, check or recover\n", o.pos[0]);
		return SD_EXIT_USAGE;
	}
	if ((o.journal || o.into) && sub != DB_RECOVER) {
		fprintf(stderr, "shakedown db: --%s is for 'db recover'\n",
			o.journal ? "journal" : "into");
		return SD_EXIT_USAGE;
	}
	const char *path = sd_db_resolve_path(o.db);
	if (sub == DB_RECOVER && o.into) {
		/* a damaged file: what it still holds goes to a new one, then
		 * what the run kept */
		char report[1024];
		int src = sd_db_salvage(path, o.into, report, sizeof(report),
					err, sizeof(err));
		if (src != SD_OK) {
			fprintf(stderr, "shakedown db: %s\n", err);
			return src == SD_ERR_INVALID ? SD_EXIT_USAGE
						      : SD_EXIT_RECORD;
		}
		printf("%s: salvaged into %s: %s\n", path, o.into, report);
		rc = open_db(argv[0], o.into, SD_DB_NO_MIGRATE, &db);
		if (rc)
			return rc;
		rc = db_recover(db, o.into, path, o.journal);
		goto out;
	}
	rc = open_db(argv[0], o.db, SD_DB_NO_MIGRATE, &db);
	if (rc)
		return rc;
	if (sub == DB_RECOVER) {
		rc = db_recover(db, path, path, o.journal);
		goto out;
	}
	if (sub == DB_INFO) {
		if (db_info(db, path) != SD_OK) {
			fprintf(stderr, "shakedown db: %s: %s\n", path,
				sqlite3_errmsg(db));
			rc = SD_EXIT_ENV;
			goto out;
		}
	} else if (sub == DB_MIGRATE) {
		int from, to;
		if (sd_db_migrate(db, &from, &to, err, sizeof(err)) != SD_OK) {
			fprintf(stderr, "shakedown db: %s: %s\n", path, err);
			rc = SD_EXIT_ENV;
			goto out;
		}
		if (from == to)
			printf("%s: already at schema version %d\n", path, to);
		else
			printf("%s: migrated from schema version %d to %d\n",
			       path, from, to);
	} else {
		int problems = db_check(db);
		if (problems < 0) {
			fprintf(stderr, "shakedown db: %s: checking failed: "
				"%s\n", path, sqlite3_errmsg(db));
			rc = SD_EXIT_ENV;
			goto out;
		}
		rc = sd_finish_stdout();
		if (rc == SD_EXIT_OK && problems)
			rc = SD_EXIT_CHECK;
		goto out;
	}
	rc = sd_finish_stdout();
out:
	sd_db_close(db);
	return rc;
}
