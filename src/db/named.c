/*
 * named.c - the shared parts of the `baseline` and `reference` commands
 * (named.h).
 */
#include "config.h"

#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "db/db.h"
#include "db/named.h"
#include "db/train_db.h"
#include "names.h"
#include "plugin.h"
#include "shakedown/backend.h"
#include "tool.h"
#include "util.h"

static const struct sd_name_row format_names[] = {
	{ "text", SD_DB_TEXT }, { "json", SD_DB_JSON }, { "csv", SD_DB_CSV },
	{ "table", SD_DB_TEXT }, { NULL, 0 }
};

int sd_named_format(const char *cmd, const char *arg,
		    enum sd_db_format *format)
{
	const char *hint = NULL;
	int v;
	if (sd_name_lookup(format_names, arg, &v, &hint) == 0) {
		*format = (enum sd_db_format)v;
		return 0;
	}
	if (hint)
		fprintf(stderr, "shakedown %s: unknown format '%s'; did you "
			"mean '%s'?\n", cmd, arg, hint);
	else
		fprintf(stderr, "shakedown %s: unknown format '%s'; use text, "
			"json or csv\n", cmd, arg);
	return 2;
}

int sd_named_bad_option(const char *cmd, int argc, char **argv, int at,
			int missing_value)
{
	if (missing_value) {
		fprintf(stderr, "shakedown %s: option '%s' needs a value\n",
			cmd, argv[optind - 1]);
		return 2;
	}
	const char *a = argv[at < argc ? at : argc - 1];
	if (strncmp(a, "--", 2) == 0)
		fprintf(stderr, "shakedown %s: unknown option '%.*s'; see "
			"'shakedown %s --help'\n", cmd, (int)strcspn(a, "="), a,
			cmd);
	else
		fprintf(stderr, "shakedown %s: unknown option '-%c'; see "
			"'shakedown %s --help'\n", cmd, optopt, cmd);
	return 2;
}

int sd_named_positionals(const char *cmd, int argc, char **argv,
			 const char **pos, int *npos, int max)
{
	for (; optind < argc; optind++) {
		if (*npos >= max) {
			fprintf(stderr, "shakedown %s: unexpected argument "
				"'%s'; see 'shakedown %s --help'\n", cmd,
				argv[optind], cmd);
			return 2;
		}
		pos[(*npos)++] = argv[optind];
	}
	return 0;
}

int sd_named_open(const char *cmd, const char *path_opt, int writes,
		  sqlite3 **db)
{
	char err[768];
	int flags = 0;
	const char *path = sd_db_resolve_path(path_opt);
	if (strcmp(path, "none") == 0) {
		fprintf(stderr, "shakedown %s: no database (--db none); pass "
			"--db PATH or set SHAKEDOWN_DB\n", cmd);
		return SD_EXIT_USAGE;
	}
	if (!writes && access(path, F_OK) == 0 && access(path, W_OK) != 0)
		flags |= SD_DB_READONLY;
	if (writes == SD_NAMED_CREATE)
		flags |= SD_DB_CREATE;
	if (sd_db_open(path, flags, db, err, sizeof(err)) != SD_OK) {
		fprintf(stderr, "shakedown %s: %s\n", cmd, err);
		return SD_EXIT_ENV;
	}
	return SD_EXIT_OK;
}

int sd_named_valid_date(sqlite3 *db, const char *s)
{
	sqlite3_stmt *st = NULL;
	int ok = 0;
	if (strlen(s) < 10 || s[4] != '-' || s[7] != '-')
		return 0;
	if (sqlite3_prepare_v2(db, "SELECT julianday(?1) IS NOT NULL", -1,
			       &st, NULL) == SQLITE_OK) {
		sqlite3_bind_text(st, 1, s, -1, SQLITE_STATIC);
		if (sqlite3_step(st) == SQLITE_ROW)
			ok = sqlite3_column_int(st, 0);
	}
	sqlite3_finalize(st);
	return ok;
}

int sd_named_failed(const char *cmd, int status, const char *err)
{
	fprintf(stderr, "shakedown %s: %s\n", cmd, err);
	return status == SD_ERR_INVALID ? SD_EXIT_USAGE : SD_EXIT_ENV;
}

int sd_named_shipped_reference(const char *name, char *buf, size_t len)
{
	const char *dirs[3];
	char moved[PATH_MAX + 32];
	int nd = 0;
	if (sd_in_build_tree())
		dirs[nd++] = SD_SOURCE_DIR "/plans/reference";
	/* an installed tree moved elsewhere: its own references first */
	if (sd_relocated_dir(SD_DATA_DIR, moved, PATH_MAX) == 0) {
		strcat(moved, "/plans/reference");
		dirs[nd++] = moved;
	}
	dirs[nd++] = SD_DATA_DIR "/plans/reference";
	for (int d = 0; d < nd; d++)
		for (int k = 0; k < 2; k++) {
			snprintf(buf, len, "%s/%s%s", dirs[d], name,
				 k ? ".ref" : "");
			if (access(buf, R_OK) == 0)
				return 0;
		}
	return -1;
}

int sd_named_load_shipped(const char *name, struct sd_train_reference *out,
			  char *label, size_t labellen, char *err,
			  size_t errlen)
{
	char path[4200];
	if (sd_named_shipped_reference(name, path, sizeof(path)))
		return -1;
	int rc = sd_train_ref_load(path, out, err, errlen);
	if (rc == SD_OK)
		snprintf(label, labellen, "%s (shipped, %.600s)", out->name,
			 path);
	return rc;
}

int sd_named_find_reference(const char *ref, const char *db_opt, int shipped,
			    struct sd_train_reference *out, char *label,
			    size_t labellen, int *have, char *err,
			    size_t errlen)
{
	int rc;
	*have = 0;
	if (strchr(ref, '/') || access(ref, R_OK) == 0) {
		rc = sd_train_ref_load(ref, out, err, errlen);
		if (rc)
			return rc;
		snprintf(label, labellen, "%s (file %.600s)", out->name, ref);
		*have = 1;
		return SD_OK;
	}
	const char *dbp = sd_db_resolve_path(db_opt);
	char dberr[600] = "";
	if (strcmp(dbp, "none") != 0 && access(dbp, F_OK) == 0) {
		sqlite3 *db = NULL;
		rc = sd_db_open(dbp, SD_DB_READONLY, &db, dberr, sizeof(dberr));
		if (!rc) {
			rc = sd_train_db_ref_load(db, ref, out, dberr,
						  sizeof(dberr));
			sd_db_close(db);
			if (!rc) {
				*have = 1;
				snprintf(label, labellen, "%s (database "
					 "%.600s)", out->name, dbp);
				return SD_OK;
			}
			sd_train_ref_free(out);
		}
	}
	if (shipped && (rc = sd_named_load_shipped(ref, out, label, labellen,
						   err, errlen)) >= 0) {
		*have = rc == SD_OK;
		return rc;
	}
	snprintf(err, errlen, "--reference '%s' is neither a file, nor a "
		 "reference of the database %s%s%.300s%s%s; see 'shakedown "
		 "reference list'", ref, dbp, dberr[0] ? " (" : "", dberr,
		 dberr[0] ? ")" : "", shipped ? ", nor shipped" : "");
	return SD_ERR_INVALID;
}
