/*
 * cmd_runs.c - `shakedown runs`: the runs of a results database, newest
 * first, with their plan, nodes, outcome and counts (the query is
 * sd_db_runs_sql in lib/db/queries.c), filtered by time, plan, status
 * and kind.  Every "no run" message of the tool points here.
 */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "db/db.h"
#include "db/db_internal.h"
#include "db/named.h"
#include "names.h"
#include "tool.h"
#include "util.h"

enum runs_option {
	OPT_DB = 256, OPT_FORMAT, OPT_SINCE, OPT_UNTIL, OPT_PLAN, OPT_STATUS,
	OPT_KIND, OPT_LIMIT, OPT_LONG,
};

static const struct option options[] = {
	{ "since", required_argument, NULL, OPT_SINCE },
	{ "until", required_argument, NULL, OPT_UNTIL },
	{ "plan", required_argument, NULL, OPT_PLAN },
	{ "status", required_argument, NULL, OPT_STATUS },
	{ "kind", required_argument, NULL, OPT_KIND },
	{ "limit", required_argument, NULL, OPT_LIMIT },
	{ "long", no_argument, NULL, OPT_LONG },
	{ "db", required_argument, NULL, OPT_DB },
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 }
};

/* The values the schema allows (runs.status, runs.run_kind). */
static const struct sd_name_row statuses[] = {
	{ "passed", 0 }, { "failed", 1 }, { "error", 2 }, { "cancelled", 3 },
	{ "aborted", 4 }, { "running", 5 }, { NULL, 0 }
};
static const struct sd_name_row kinds[] = {
	{ "collectives", 0 }, { "gemm", 1 }, { "train", 2 }, { "ingest", 3 },
	{ NULL, 0 }
};

struct runs_opts {
	const char *db, *since, *until, *plan, *status, *kind;
	long limit;
	int long_ids;
	enum sd_db_format format;
};

/* A value of one of the lists, or 2 with the message said. */
static int pick(const char *option, const char *arg,
		const struct sd_name_row *rows, const char *list,
		const char **out)
{
	const char *hint = NULL;
	int v;
	if (sd_name_lookup(rows, arg, &v, &hint)) {
		fprintf(stderr, "shakedown runs: --%s '%s' must be %s%s%s%s\n",
			option, arg, list, hint ? "; did you mean '" : "",
			hint ? hint : "", hint ? "'?" : "");
		return SD_EXIT_USAGE;
	}
	*out = rows[v].name;
	return 0;
}

/* 0, 1 for --help (printed), or 2 (said). */
static int parse(int argc, char **argv, struct runs_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->limit = 20;
	opterr = 0;
	optind = 1;
	for (;;) {
		int at = optind, ch;
		char oerr[256];
		ch = sd_getopt(argc, argv, ":h", options, oerr, sizeof(oerr));
		if (ch == -1)
			break;
		switch (ch) {
		case SD_OPT_REFUSED:
			fprintf(stderr, "shakedown runs: %s\n", oerr);
			return SD_EXIT_USAGE;
		case OPT_DB: o->db = optarg; break;
		case OPT_SINCE: o->since = optarg; break;
		case OPT_UNTIL: o->until = optarg; break;
		case OPT_PLAN: o->plan = optarg; break;
		case OPT_LONG: o->long_ids = 1; break;
		case OPT_STATUS:
			if (pick("status", optarg, statuses, "passed, failed, "
				 "error, cancelled, aborted or running",
				 &o->status))
				return SD_EXIT_USAGE;
			break;
		case OPT_KIND:
			if (pick("kind", optarg, kinds, "collectives, gemm, "
				 "train or ingest", &o->kind))
				return SD_EXIT_USAGE;
			break;
		case OPT_LIMIT:
			if (sd_parse_int(optarg, 0, 1000000000, &o->limit)) {
				fprintf(stderr, "shakedown runs: --limit '%s' must "
					"be a number of runs (0: all)\n", optarg);
				return SD_EXIT_USAGE;
			}
			break;
		case OPT_FORMAT:
			if (sd_named_format("runs", optarg, &o->format))
				return SD_EXIT_USAGE;
			break;
		case 'h':
			sd_help_print(stdout, sd_help_runs);
			return 1;
		case ':':
			return sd_named_bad_option("runs", argc, argv, at, 1);
		default:
			return sd_named_bad_option("runs", argc, argv, at, 0);
		}
	}
	const char *pos[1];
	int npos = 0;
	return sd_named_positionals("runs", argc, argv, pos, &npos, 0);
}

int cmd_runs(int argc, char **argv)
{
	struct runs_opts o;
	sqlite3 *db = NULL;
	char err[768];
	int rc = parse(argc, argv, &o);
	if (rc)
		return rc == 1 ? sd_finish_stdout() : SD_EXIT_USAGE;
	if ((rc = sd_named_open("runs", o.db, 0, &db)))
		return rc;
	const char *dates[2] = { o.since, o.until };
	for (int i = 0; i < 2; i++)
		if (dates[i] && !sd_named_valid_date(db, dates[i])) {
			fprintf(stderr, "shakedown runs: bad date '%s' for --%s; "
				"use YYYY-MM-DD or YYYY-MM-DDTHH:MM:SS\n",
				dates[i], i ? "until" : "since");
			sd_db_close(db);
			return SD_EXIT_USAGE;
		}
	struct sd_db_param p[7] = {
		{ .type = SD_DB_P_TEXT, .s = o.since },
		{ .type = SD_DB_P_TEXT, .s = o.until },
		{ .type = SD_DB_P_TEXT, .s = o.plan },
		{ .type = SD_DB_P_TEXT, .s = o.status },
		{ .type = SD_DB_P_TEXT, .s = o.kind },
		{ .type = SD_DB_P_INT, .i = o.limit ? o.limit : -1 },
		{ .type = SD_DB_P_INT,
		  .i = o.format == SD_DB_TEXT && !o.long_ids },
	};
	long n = 0;
	int st = sd_db_print_query(db, sd_db_runs_sql, p, 7, o.format, stdout,
				   &n, err, sizeof(err));
	sd_db_close(db);
	if (st != SD_OK)
		return sd_named_failed("runs", st, err);
	if (n == 0 && o.format == SD_DB_TEXT)
		fprintf(stderr, "shakedown runs: no run%s in %s\n",
			o.since || o.until || o.plan || o.status || o.kind
				? " matches" : "", sd_db_resolve_path(o.db));
	return sd_finish_stdout();
}
