/*
 * cmd_reference.c - `shakedown reference create|list|show|export|import|
 * delete`: named reference loss curves in the results database, which
 * training runs (`shakedown train`, `shakedown ingest`) are judged
 * against.
 *
 * The work is lib/db/train_db.c's and lib/train/reference.c's; this file
 * parses the options, opens the database (--db, else SHAKEDOWN_DB, else
 * ./shakedown.db), prints and chooses the exit status: 0; 2 a bad option,
 * an unknown run or reference, runs that cannot make a reference (not
 * training runs, of different configs), a name that is taken, a file that
 * cannot be read or does not parse (FILE:LINE); 3 the database failed or
 * an exported file could not be written.  `create --from-log` reads
 * training logs through lib/ingest/, as `shakedown ingest` does.
 */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "db/db.h"
#include "db/db_internal.h"
#include "db/named.h"
#include "db/train_db.h"
#include "ingest/apply.h"
#include "ingest/ingest.h"
#include "names.h"
#include "tool.h"
#include "train/reference.h"
#include "util.h"

enum reference_subcommand {
	REF_CREATE, REF_LIST, REF_SHOW, REF_EXPORT, REF_IMPORT, REF_DELETE
};

static const struct sd_name_row subcommands[] = {
	{ "create", REF_CREATE }, { "list", REF_LIST }, { "show", REF_SHOW },
	{ "export", REF_EXPORT }, { "import", REF_IMPORT },
	{ "delete", REF_DELETE }, { NULL, 0 }
};

enum reference_option {
	OPT_DB = 256, OPT_FORMAT, OPT_NAME, OPT_FROM, OPT_DESCRIPTION,
	OPT_REPLACE, OPT_STEPS, OPT_FROM_LOG, OPT_LOG_FORMAT, OPT_LOG_EVERY,
	OPT_WORKLOAD,
};

static const struct option options[] = {
	{ "name", required_argument, NULL, OPT_NAME },
	{ "from", required_argument, NULL, OPT_FROM },
	{ "from-log", required_argument, NULL, OPT_FROM_LOG },
	{ "log-format", required_argument, NULL, OPT_LOG_FORMAT },
	{ "log-every", required_argument, NULL, OPT_LOG_EVERY },
	{ "workload", required_argument, NULL, OPT_WORKLOAD },
	{ "description", required_argument, NULL, OPT_DESCRIPTION },
	{ "replace", no_argument, NULL, OPT_REPLACE },
	{ "steps", no_argument, NULL, OPT_STEPS },
	{ "output", required_argument, NULL, 'o' },
	{ "db", required_argument, NULL, OPT_DB },
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 }
};

struct reference_opts {
	const char *db, *name, *description, *output;
	const char **from; /* nfrom runs, in the order given */
	int nfrom;
	const char **logs; /* nlogs logs (--from-log), in the order given */
	int nlogs;
	enum sd_ingest_format log_format;
	long log_every;
	const char *workload;
	int log_opts;      /* --log-format, --log-every or --workload given */
	int replace, steps, format_given;
	enum sd_db_format format;
	const char *pos[2]; /* the subcommand and NAME (FILE for import) */
	int npos;
};

#define ERR(...) fprintf(stderr, "shakedown reference: " __VA_ARGS__)

/* Parse argv in order (optstring "-"); 0, 1 for --help (printed), or 2
 * (error printed).  o->from has room for argc entries (the caller's). */
static int parse(int argc, char **argv, struct reference_opts *o)
{
	int ch;
	opterr = 0;
	optind = 1;
	for (;;) {
		int at = optind;
		char oerr[256];
		ch = sd_getopt(argc, argv, "-:ho:", options, oerr,
			       sizeof(oerr));
		if (ch == -1)
			break;
		if (ch == SD_OPT_REFUSED) {
			ERR("%s\n", oerr);
			return SD_EXIT_USAGE;
		}
		switch (ch) {
		case 1:
			if (o->npos >= 2) {
				ERR("unexpected argument '%s'; see 'shakedown "
				    "reference --help'\n", optarg);
				return 2;
			}
			o->pos[o->npos++] = optarg;
			break;
		case OPT_DB: o->db = optarg; break;
		case OPT_NAME: o->name = optarg; break;
		case OPT_FROM: o->from[o->nfrom++] = optarg; break;
		case OPT_FROM_LOG: o->logs[o->nlogs++] = optarg; break;
		case OPT_LOG_FORMAT: {
			char e[200];
			if (sd_ingest_format_parse(optarg, &o->log_format, e,
						   sizeof(e))) {
				ERR("--log-format: %s\n", e);
				return SD_EXIT_USAGE;
			}
			o->log_opts = 1;
			break;
		}
		case OPT_LOG_EVERY:
			if (sd_parse_int(optarg, 1, 100000000, &o->log_every)) {
				ERR("--log-every '%s' must be the steps between "
				    "logged rows, from 1\n", optarg);
				return SD_EXIT_USAGE;
			}
			o->log_opts = 1;
			break;
		case OPT_WORKLOAD: {
			char e[200];
			if (sd_train_ref_check_name(optarg, e, sizeof(e))) {
				ERR("--workload: %s\n", e);
				return SD_EXIT_USAGE;
			}
			o->workload = optarg;
			o->log_opts = 1;
			break;
		}
		case OPT_DESCRIPTION: o->description = optarg; break;
		case OPT_REPLACE: o->replace = 1; break;
		case OPT_STEPS: o->steps = 1; break;
		case 'o': o->output = optarg; break;
		case OPT_FORMAT:
			if (sd_named_format("reference", optarg, &o->format))
				return 2;
			o->format_given = 1;
			break;
		case 'h':
			sd_help_print(stdout, sd_help_reference);
			return 1;
		case ':':
			return sd_named_bad_option("reference", argc, argv, at, 1);
		default:
			return sd_named_bad_option("reference", argc, argv, at, 0);
		}
	}
	return sd_named_positionals("reference", argc, argv, o->pos, &o->npos,
				    2);
}

/* One reference as a JSON object, its steps with the column names of
 * `show --format csv` (?1 = the name). */
static const char show_json_sql[] =
	"SELECT json_object('name', r.name, 'created_at', r.created_at, "
	" 'description', r.description, 'config', r.config, "
	" 'source', r.source, 'curves', r.curves, "
	" 'steps', json((SELECT json_group_array(json_object('step', s.step, "
	"  'loss_mean', s.loss_mean, 'loss_spread', s.loss_spread, "
	"  'curves', s.curves)) FROM (SELECT * FROM train_reference_steps "
	"  WHERE reference_id = r.id ORDER BY step) s))) "
	"FROM train_references r WHERE r.name = ?1";

/* The text form of show: a summary, and with --steps every step (to 10
 * significant digits; `export` writes them exactly). */
static int show_text(const struct sd_train_reference *r, int steps)
{
	int curves = 0;
	for (size_t i = 0; i < r->n; i++)
		if (r->steps[i].n > curves)
			curves = r->steps[i].n;
	printf("reference    %s\n", r->name);
	printf("created      %s\n", r->created_at[0] ? r->created_at : "-");
	printf("config       %s\n", r->config ? r->config : "-");
	printf("source       %s\n", r->source ? r->source : "-");
	printf("curves       %d\n", curves);
	if (r->n)
		printf("steps        %zu (%ld to %ld)\n", r->n,
		       r->steps[0].step, r->steps[r->n - 1].step);
	else
		printf("steps        0\n");
	if (r->description && *r->description)
		printf("description  %s\n", r->description);
	if (!steps)
		return SD_OK;
	printf("\n%8s  %-18s %-18s %s\n", "step", "loss_mean", "loss_spread",
	       "curves");
	for (size_t i = 0; i < r->n; i++)
		printf("%8ld  %-18.10g %-18.10g %d\n", r->steps[i].step,
		       r->steps[i].mean, r->steps[i].spread, r->steps[i].n);
	return SD_OK;
}

static int show(sqlite3 *db, const char *name, const struct reference_opts *o,
		char *err, size_t errlen)
{
	struct sd_train_reference ref;
	int st = sd_train_db_ref_load(db, name, &ref, err, errlen);
	if (st != SD_OK)
		return st;
	if (o->format == SD_DB_TEXT) {
		st = show_text(&ref, o->steps);
	} else if (o->format == SD_DB_CSV) {
		struct sd_db_param p = { .type = SD_DB_P_TEXT, .s = name };
		st = sd_db_print_query(db, sd_train_db_ref_steps_sql, &p, 1,
				       SD_DB_CSV, stdout, NULL, err, errlen);
	} else {
		sqlite3_stmt *q = NULL;
		st = SD_ERR_IO;
		if (sqlite3_prepare_v2(db, show_json_sql, -1, &q, NULL) ==
		    SQLITE_OK) {
			sqlite3_bind_text(q, 1, name, -1, SQLITE_STATIC);
			if (sqlite3_step(q) == SQLITE_ROW &&
			    sqlite3_column_text(q, 0)) {
				printf("%s\n", sqlite3_column_text(q, 0));
				st = SD_OK;
			}
		}
		if (st != SD_OK)
			snprintf(err, errlen, "reading reference '%s': %s",
				 name, sqlite3_errmsg(db));
		sqlite3_finalize(q);
	}
	sd_train_ref_free(&ref);
	return st;
}

/* export: to FILE (through FILE.tmp), or to standard output for none or
 * "-". */
static int export_ref(sqlite3 *db, const char *name, const char *path,
		      char *err, size_t errlen)
{
	if (path && strcmp(path, "-") != 0) {
		int st = sd_train_db_ref_export(db, name, path, err, errlen);
		if (st == SD_OK)
			fprintf(stderr, "shakedown reference: '%s' written to "
				"%s\n", name, path);
		return st;
	}
	struct sd_train_reference ref;
	char *text = NULL;
	int st = sd_train_db_ref_load(db, name, &ref, err, errlen);
	if (st == SD_OK)
		st = sd_train_ref_format(&ref, &text, err, errlen);
	if (st == SD_OK)
		fputs(text, stdout);
	free(text);
	sd_train_ref_free(&ref);
	return st;
}

/* The line that says what was stored: "reference 'NAME' HOW: N steps
 * (A to B), config 'C'", and the note when there is one. */
static void print_made(const struct sd_train_reference *r, const char *how,
		       const char *note)
{
	printf("reference '%s' %s: %zu steps (%ld to %ld), config '%s'\n",
	       r->name, how, r->n, r->steps[0].step, r->steps[r->n - 1].step,
	       r->config);
	if (note && note[0])
		printf("note: %s\n", note);
}

/* import: parse FILE, rename it when --name, store it. */
static int import_ref(sqlite3 *db, const char *path, const char *name,
		      int replace, char *err, size_t errlen)
{
	struct sd_train_reference ref;
	int st = sd_train_ref_load(path, &ref, err, errlen);
	/* a file that is not there or does not parse is the user's to fix */
	if (st == SD_ERR_IO)
		st = SD_ERR_INVALID;
	if (st == SD_OK && name)
		sd_strlcpy(ref.name, name, sizeof(ref.name));
	if (st == SD_OK)
		st = sd_train_db_ref_store(db, &ref, replace, err, errlen);
	if (st == SD_OK) {
		char how[4200];
		snprintf(how, sizeof(how), "imported from %s", path);
		print_made(&ref, how, NULL);
	}
	sd_train_ref_free(&ref);
	return st;
}

static int create(sqlite3 *db, const char *name,
		  const struct reference_opts *o, char *err, size_t errlen)
{
	char note[512];
	int st = sd_train_db_ref_from_runs(db, name, o->description, o->from,
					   (size_t)o->nfrom, o->replace, note,
					   sizeof(note), err, errlen);
	if (st != SD_OK)
		return st;
	struct sd_train_reference ref;
	st = sd_train_db_ref_load(db, name, &ref, err, errlen);
	if (st != SD_OK)
		return st;
	char how[64];
	snprintf(how, sizeof(how), "created from %d run%s", o->nfrom,
		 o->nfrom == 1 ? "" : "s");
	print_made(&ref, how, note);
	sd_train_ref_free(&ref);
	return SD_OK;
}

/* create --from-log: each log read as `shakedown ingest` reads it
 * (lib/ingest/), its loss curve one curve of the reference. */
static int create_from_logs(sqlite3 *db, const char *name,
			    const struct reference_opts *o, char *err,
			    size_t errlen)
{
	struct sd_ingest_log *logs = calloc((size_t)o->nlogs, sizeof(*logs));
	struct sd_train_curve *cv = calloc((size_t)o->nlogs, sizeof(*cv));
	struct sd_train_reference ref = { 0 };
	struct sd_buf src = { 0 };
	char config[96], note[512] = "", e[1000];
	int st = SD_OK;
	if (!logs || !cv) {
		free(logs);
		free(cv);
		snprintf(err, errlen, "out of memory");
		return SD_ERR_NOMEM;
	}
	sd_ingest_config(o->workload, config, sizeof(config));
	sd_buf_printf(&src, "logs ");
	for (int i = 0; i < o->nlogs && st == SD_OK; i++) {
		struct sd_ingest_given g;
		struct sd_train_facts f;
		sd_ingest_given_init(&g);
		g.log_every = o->log_every;
		st = sd_ingest_read(o->logs[i], o->log_format, &logs[i], e,
				    sizeof(e));
		if (st == SD_OK)
			st = sd_ingest_apply(&logs[i], &g, &f, NULL, 0, e,
					     sizeof(e));
		if (st != SD_OK) {
			/* a log that cannot be read is the user's to fix */
			if (st == SD_ERR_IO)
				st = SD_ERR_INVALID;
			snprintf(err, errlen, "--from-log: %s", e);
			break;
		}
		cv[i] = (struct sd_train_curve){ o->logs[i], logs[i].steps,
						 logs[i].n };
		sd_buf_printf(&src, "%s%s", i ? ", " : "", o->logs[i]);
		if (logs[i].lines_unparsed)
			fprintf(stderr, "shakedown reference: note: %ld lines "
				"of %s did not parse (the first %s:%ld: %s)\n",
				logs[i].lines_unparsed, o->logs[i], o->logs[i],
				logs[i].nbad ? logs[i].bad[0].line : 0L,
				logs[i].nbad ? logs[i].bad[0].why : "?");
	}
	if (st == SD_OK) {
		char desc[300];
		snprintf(desc, sizeof(desc), "%d %s log%s", o->nlogs,
			 sd_ingest_format_name(logs[0].format),
			 o->nlogs == 1 ? "" : "s");
		st = sd_train_ref_create(name, o->description ? o->description
							       : desc,
					 config, src.data, cv, (size_t)o->nlogs,
					 &ref, note, sizeof(note), err, errlen);
	}
	if (st == SD_OK)
		st = sd_train_db_ref_store(db, &ref, o->replace, err, errlen);
	if (st == SD_OK) {
		char how[64];
		snprintf(how, sizeof(how), "created from %d log%s", o->nlogs,
			 o->nlogs == 1 ? "" : "s");
		print_made(&ref, how, note);
	}
	sd_train_ref_free(&ref);
	for (int i = 0; i < o->nlogs; i++)
		sd_ingest_log_free(&logs[i]);
	free(logs);
	free(cv);
	sd_buf_free(&src);
	return st;
}

/* Which options each subcommand takes, checked before the database is
 * opened (o->pos[0] is its name, as sd_name_lookup() matched it exactly);
 * 0, or 2 (error printed). */
static int check_options(int sub, const struct reference_opts *o)
{
	const char *bad = NULL, *for_ = NULL;
	if (sub != REF_CREATE && o->nfrom)
		bad = "--from", for_ = "create";
	else if (sub != REF_CREATE && o->nlogs)
		bad = "--from-log", for_ = "create";
	else if (sub != REF_CREATE && o->log_opts)
		bad = "--log-format, --log-every and --workload",
		for_ = "create";
	else if (sub != REF_CREATE && o->description)
		bad = "--description", for_ = "create";
	else if (sub != REF_CREATE && sub != REF_IMPORT && o->replace)
		bad = "--replace", for_ = "create' and 'import";
	else if (sub != REF_SHOW && o->steps)
		bad = "--steps", for_ = "show";
	else if (sub != REF_EXPORT && o->output)
		bad = "-o", for_ = "export";
	else if (sub != REF_LIST && sub != REF_SHOW && o->format_given)
		bad = "--format", for_ = "list' and 'show";
	if (!bad && o->nfrom && o->nlogs) {
		ERR("give the runs (--from) or the logs (--from-log) to make "
		    "the reference from, not both: a recorded ingest run is a "
		    "run\n");
		return SD_EXIT_USAGE;
	}
	if (!bad && o->nfrom && o->log_opts) {
		ERR("--log-format, --log-every and --workload are for "
		    "--from-log\n");
		return SD_EXIT_USAGE;
	}
	if (bad) {
		ERR("%s is for 'reference %s' only, not '%s'\n", bad, for_,
		    o->pos[0]);
		return SD_EXIT_USAGE;
	}
	if (o->steps && o->format_given && o->format != SD_DB_TEXT) {
		ERR("--steps is for the text form; --format %s has the steps "
		    "already\n", o->format == SD_DB_JSON ? "json" : "csv");
		return SD_EXIT_USAGE;
	}
	return 0;
}

int cmd_reference(int argc, char **argv)
{
	struct reference_opts o;
	sqlite3 *db = NULL;
	char err[4600];
	const char *hint = NULL;
	int sub, st;
	memset(&o, 0, sizeof(o));
	o.from = calloc((size_t)argc + 1, sizeof(*o.from));
	o.logs = calloc((size_t)argc + 1, sizeof(*o.logs));
	if (!o.from || !o.logs) {
		ERR("out of memory\n");
		return SD_EXIT_ENV;
	}
	int rc = parse(argc, argv, &o);
	if (rc) {
		rc = rc == 1 ? sd_finish_stdout() : SD_EXIT_USAGE;
		goto out;
	}
	rc = SD_EXIT_USAGE;
	if (!o.npos) {
		ERR("missing subcommand; use create, list, show, export, "
		    "import or delete\n");
		goto out;
	}
	if (sd_name_lookup(subcommands, o.pos[0], &sub, &hint) != 0) {
		if (hint)
			ERR("unknown subcommand '%s'; did you mean '%s'?\n",
			    o.pos[0], hint);
		else
			ERR("unknown subcommand '%s'; use create, list, show, "
			    "export, import or delete\n", o.pos[0]);
		goto out;
	}
	if (check_options(sub, &o))
		goto out;
	const char *name = o.name, *file = NULL;
	if (o.npos > 1) {
		if (sub == REF_LIST) {
			ERR("unexpected argument '%s'; 'reference list' takes "
			    "no name\n", o.pos[1]);
			goto out;
		}
		if (sub == REF_IMPORT) {
			file = o.pos[1];
		} else if (name && strcmp(name, o.pos[1]) != 0) {
			ERR("two names, '%s' and --name '%s'; give one\n",
			    o.pos[1], name);
			goto out;
		} else {
			name = o.pos[1];
		}
	}
	if (sub == REF_IMPORT && !file) {
		ERR("import needs a file, e.g. 'shakedown reference import "
		    "gpt-small-cpu.ref [--name NAME]'\n");
		goto out;
	}
	if (sub != REF_LIST && sub != REF_IMPORT && !name) {
		ERR("%s needs a name, e.g. 'shakedown reference %s%s'\n",
		    o.pos[0], o.pos[0],
		    sub == REF_CREATE ? " --name gpt-small-cpu --from RUN "
					"--from RUN"
				      : " gpt-small-cpu");
		goto out;
	}
	if (sub == REF_CREATE && !o.nfrom && !o.nlogs) {
		ERR("create needs the runs or logs to make the reference "
		    "from: --from RUN, once per run (a UUID, a unique prefix "
		    "or 'latest'), or --from-log FILE, once per log\n");
		goto out;
	}
	if ((sub == REF_CREATE || (sub == REF_IMPORT && name)) &&
	    sd_train_ref_check_name(name, err, sizeof(err)) != SD_OK) {
		rc = sd_named_failed("reference", SD_ERR_INVALID, err);
		goto out;
	}

	/* a reference from logs or a file needs no recorded run: the
	 * database is made when missing */
	rc = sd_named_open("reference", o.db,
			   (sub == REF_CREATE && o.nlogs) || sub == REF_IMPORT
				   ? SD_NAMED_CREATE
				   : sub == REF_CREATE || sub == REF_DELETE,
			   &db);
	if (rc)
		goto out;
	switch (sub) {
	case REF_CREATE:
		st = o.nlogs ? create_from_logs(db, name, &o, err, sizeof(err))
			     : create(db, name, &o, err, sizeof(err));
		break;
	case REF_LIST:
		st = sd_db_print_query(db, sd_train_db_ref_list_sql, NULL, 0,
				       o.format, stdout, NULL, err,
				       sizeof(err));
		break;
	case REF_SHOW:
		st = show(db, name, &o, err, sizeof(err));
		break;
	case REF_EXPORT:
		st = export_ref(db, name, o.output, err, sizeof(err));
		break;
	case REF_IMPORT:
		st = import_ref(db, file, name, o.replace, err, sizeof(err));
		break;
	default:
		st = sd_train_db_ref_delete(db, name, err, sizeof(err));
		if (st == SD_OK)
			printf("reference '%s' deleted\n", name);
		break;
	}
	if (st != SD_OK)
		rc = sd_named_failed("reference", st, err);
	else
		rc = sd_finish_stdout();
out:
	sd_db_close(db);
	free(o.from);
	free(o.logs);
	return rc;
}
