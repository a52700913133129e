/*
 * cmd_baseline.c - `shakedown baseline create|list|show|delete`: named
 * baselines in the results database, which later runs are judged against.
 *
 * The work is lib/db/baseline.c's; this file parses the options, opens the
 * database (--db, else SHAKEDOWN_DB, else ./shakedown.db), prints and
 * chooses the exit status: 0; 2 a bad option, an unknown run or baseline,
 * a run that cannot give a baseline, a name that is taken; 3 the database
 * failed.
 */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "db/baseline.h"
#include "db/db.h"
#include "db/db_internal.h"
#include "db/named.h"
#include "names.h"
#include "tool.h"

enum baseline_subcommand { BL_CREATE, BL_LIST, BL_SHOW, BL_DELETE };

static const struct sd_name_row subcommands[] = {
	{ "create", BL_CREATE }, { "list", BL_LIST }, { "show", BL_SHOW },
	{ "delete", BL_DELETE }, { NULL, 0 }
};

enum baseline_option {
	OPT_DB = 256, OPT_FORMAT, OPT_NAME, OPT_FROM, OPT_DESCRIPTION,
};

static const struct option options[] = {
	{ "name", required_argument, NULL, OPT_NAME },
	{ "from", required_argument, NULL, OPT_FROM },
	{ "description", required_argument, NULL, OPT_DESCRIPTION },
	{ "db", required_argument, NULL, OPT_DB },
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 }
};

struct baseline_opts {
	const char *db, *name, *from, *description;
	int format_given;
	enum sd_db_format format;
	const char *pos[2]; /* the subcommand and NAME */
	int npos;
};

#define ERR(...) fprintf(stderr, "shakedown baseline: " __VA_ARGS__)

/* Parse argv in order (optstring "-"); 0, 1 for --help (printed), or 2
 * (error printed). */
static int parse(int argc, char **argv, struct baseline_opts *o)
{
	int ch;
	memset(o, 0, sizeof(*o));
	opterr = 0;
	optind = 1;
	for (;;) {
		int at = optind;
		char oerr[256];
		ch = sd_getopt(argc, argv, "-:h", options, oerr, sizeof(oerr));
		if (ch == -1)
			break;
		if (ch == SD_OPT_REFUSED) {
			fprintf(stderr, "shakedown baseline: %s\n", oerr);
			return SD_EXIT_USAGE;
		}
		switch (ch) {
		case 1:
			if (o->npos >= 2) {
				ERR("unexpected argument '%s'; see 'shakedown "
				    "baseline --help'\n", optarg);
				return 2;
			}
			o->pos[o->npos++] = optarg;
			break;
		case OPT_DB: o->db = optarg; break;
		case OPT_NAME: o->name = optarg; break;
		case OPT_FROM: o->from = optarg; break;
		case OPT_DESCRIPTION: o->description = optarg; break;
		case OPT_FORMAT:
			if (sd_named_format("baseline", optarg, &o->format))
				return 2;
			o->format_given = 1;
			break;
		case 'h':
			sd_help_print(stdout, sd_help_baseline);
			return 1;
		case ':':
			return sd_named_bad_option("baseline", argc, argv, at, 1);
		default:
			return sd_named_bad_option("baseline", argc, argv, at, 0);
		}
	}
	return sd_named_positionals("baseline", argc, argv, o->pos, &o->npos,
				    2);
}

/* The text form of show: the header, then the values. */
static int show_text(sqlite3 *db, const char *name, char *err,
		     size_t errlen)
{
	sqlite3_stmt *st = NULL;
	int64_t id;
	int rc = sd_db_baseline_id(db, name, &id, err, errlen);
	if (rc != SD_OK)
		return rc;
	if (sqlite3_prepare_v2(db,
		"SELECT name, created_at, from_run_uuid, coalesce(backend, "
		" '-'), coalesce(nodelist, '-'), coalesce(nranks, '-'), "
		" description, (SELECT count(*) FROM baseline_values "
		"  WHERE baseline_id = b.id) FROM baselines b WHERE id = ?1",
		-1, &st, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "query failed: %s", sqlite3_errmsg(db));
		return SD_ERR_IO;
	}
	sqlite3_bind_int64(st, 1, id);
	if (sqlite3_step(st) == SQLITE_ROW) {
		const char *c[8];
		for (int i = 0; i < 8; i++) {
			c[i] = (const char *)sqlite3_column_text(st, i);
			if (!c[i])
				c[i] = "";
		}
		printf("baseline     %s\n", c[0]);
		printf("created      %s\n", c[1]);
		printf("from run     %s\n", c[2]);
		printf("backend      %s\n", c[3]);
		printf("ranks        %s on %s\n", c[5], c[4]);
		if (*c[6])
			printf("description  %s\n", c[6]);
		printf("values       %s\n\n", c[7]);
	}
	sqlite3_finalize(st);
	struct sd_db_param p = { .type = SD_DB_P_INT, .i = id };
	return sd_db_print_query(db, sd_db_baseline_values_sql, &p, 1,
				 SD_DB_TEXT, stdout, NULL, err, errlen);
}

int cmd_baseline(int argc, char **argv)
{
	struct baseline_opts o;
	sqlite3 *db = NULL;
	char err[768];
	const char *hint = NULL;
	int sub, st;
	int rc = parse(argc, argv, &o);
	if (rc)
		return rc == 1 ? sd_finish_stdout() : SD_EXIT_USAGE;
	if (!o.npos) {
		ERR("missing subcommand; use create, list, show or delete\n");
		return SD_EXIT_USAGE;
	}
	if (sd_name_lookup(subcommands, o.pos[0], &sub, &hint) != 0) {
		if (hint)
			ERR("unknown subcommand '%s'; did you mean '%s'?\n",
			    o.pos[0], hint);
		else
			ERR("unknown subcommand '%s'; use create, list, show "
			    "or delete\n", o.pos[0]);
		return SD_EXIT_USAGE;
	}
	const char *name = o.name;
	if (o.npos > 1) {
		if (sub == BL_LIST) {
			ERR("unexpected argument '%s'; 'baseline list' takes "
			    "no name\n", o.pos[1]);
			return SD_EXIT_USAGE;
		}
		if (name && strcmp(name, o.pos[1]) != 0) {
			ERR("two names, '%s' and --name '%s'; give one\n",
			    o.pos[1], name);
			return SD_EXIT_USAGE;
		}
		name = o.pos[1];
	}
	if (sub != BL_LIST && !name) {
		ERR("%s needs a name, e.g. 'shakedown baseline %s%s'\n",
		    o.pos[0], o.pos[0],
		    sub == BL_CREATE ? " --name h200-2026q4 --from RUN"
				     : " h200-2026q4");
		return SD_EXIT_USAGE;
	}
	if (sub != BL_CREATE && (o.from || o.description)) {
		ERR("--%s is for 'baseline create' only\n",
		    o.from ? "from" : "description");
		return SD_EXIT_USAGE;
	}
	if ((sub == BL_CREATE || sub == BL_DELETE) && o.format_given) {
		ERR("--format is for 'baseline list' and 'show' only\n");
		return SD_EXIT_USAGE;
	}
	if (sub == BL_CREATE &&
	    sd_db_baseline_check_name(name, err, sizeof(err)) != SD_OK)
		return sd_named_failed("baseline", SD_ERR_INVALID, err);

	rc = sd_named_open("baseline", o.db, sub == BL_CREATE || sub == BL_DELETE, &db);
	if (rc)
		return rc;
	switch (sub) {
	case BL_CREATE: {
		struct sd_baseline_created made;
		st = sd_db_baseline_create(db, name, o.from, o.description,
					   &made, err, sizeof(err));
		if (st == SD_OK)
			printf("baseline '%s' created from run %s: %ld values "
			       "from %ld passed tests\n", name,
			       made.from_run_uuid, made.values, made.tests);
		break;
	}
	case BL_LIST:
		st = sd_db_print_query(db, sd_db_baseline_list_sql, NULL, 0,
				       o.format, stdout, NULL, err,
				       sizeof(err));
		break;
	case BL_SHOW:
		if (o.format == SD_DB_JSON) {
			char *json = NULL;
			st = sd_db_baseline_json(db, name, &json, err,
						 sizeof(err));
			if (st == SD_OK)
				printf("%s\n", json);
			free(json);
		} else if (o.format == SD_DB_CSV) {
			int64_t id;
			st = sd_db_baseline_id(db, name, &id, err, sizeof(err));
			struct sd_db_param p = { .type = SD_DB_P_INT, .i = id };
			if (st == SD_OK)
				st = sd_db_print_query(db,
					sd_db_baseline_values_sql, &p, 1,
					SD_DB_CSV, stdout, NULL, err,
					sizeof(err));
		} else {
			st = show_text(db, name, err, sizeof(err));
		}
		break;
	default:
		st = sd_db_baseline_delete(db, name, err, sizeof(err));
		if (st == SD_OK)
			printf("baseline '%s' deleted\n", name);
		break;
	}
	if (st != SD_OK)
		rc = sd_named_failed("baseline", st, err);
	else
		rc = sd_finish_stdout();
	sd_db_close(db);
	return rc;
}
