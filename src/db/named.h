/*
 * named.h - what the commands of named database objects (`baseline`,
 * `reference`) share: their --format names, the end of their option
 * parsing, opening the database, and the exit status of a failure.  Each
 * says its messages as "shakedown CMD: ..." on stderr.
 */
#ifndef SD_DB_NAMED_H
#define SD_DB_NAMED_H

#include <sqlite3.h>

#include "db/db_internal.h"
#include "train/reference.h"

/* Parse a --format value into *format (text, json, csv; "table" is text).
 * Returns 0, or 2 with the message said (an unknown name, with the
 * nearest one). */
int sd_named_format(const char *cmd, const char *arg,
		    enum sd_db_format *format);

/* Say getopt's unknown option (argv[at], the argument getopt was on) or
 * the missing value of argv[optind - 1] (missing_value).  Returns 2. */
int sd_named_bad_option(const char *cmd, int argc, char **argv, int at,
			int missing_value);

/* Take the arguments left after the options (argv[optind..]) into pos,
 * at most max of them.  Returns 0, or 2 with the first extra one said. */
int sd_named_positionals(const char *cmd, int argc, char **argv,
			 const char **pos, int *npos, int max);

/* What sd_named_open()'s `writes` may also be: write, creating the file
 * and its schema when missing (what needs no recorded run: a reference
 * from a log or a file). */
#define SD_NAMED_CREATE 2

/* Open the database at path_opt (sd_db_resolve_path()): read-write when
 * the command writes (created when writes is SD_NAMED_CREATE); otherwise
 * read-write when the file allows it (an older schema is migrated), read
 * only when not.  Returns SD_EXIT_OK
 * with *db, SD_EXIT_USAGE for --db none, or SD_EXIT_ENV, said. */
int sd_named_open(const char *cmd, const char *path_opt, int writes,
		  sqlite3 **db);

/* Whether s is a date SQLite reads (YYYY-MM-DD, or an ISO 8601 time):
 * 1 or 0. */
int sd_named_valid_date(sqlite3 *db, const char *s);

/* Say err; the exit status of a failed call's status: SD_EXIT_USAGE for
 * SD_ERR_INVALID, else SD_EXIT_ENV. */
int sd_named_failed(const char *cmd, int status, const char *err);

/* The shipped reference file NAME(.ref): the source tree's when run from
 * the build tree, else the installed one.  Fills buf; 0, or -1. */
int sd_named_shipped_reference(const char *name, char *buf, size_t len);

/* Load the shipped reference NAME into *out with label "NAME (shipped,
 * PATH)": -1 when it is not installed (nothing loaded), else the status
 * of sd_train_ref_load() with err. */
int sd_named_load_shipped(const char *name, struct sd_train_reference *out,
			  char *label, size_t labellen, char *err,
			  size_t errlen);

/*
 * Load the reference `ref` that a training run (`train`, `ingest`) is
 * judged by: a file (a path with '/', or a readable file), else a
 * reference of the database at db_opt (sd_db_resolve_path(); opened read
 * only), else (with `shipped`) a shipped one.  SD_OK with *out,
 * *have = 1 and label ("NAME (file PATH)", "(database PATH)", "(shipped,
 * PATH)"); else a status with err (SD_ERR_INVALID: none of those, naming
 * `shakedown reference list`; a file that does not parse).
 */
int sd_named_find_reference(const char *ref, const char *db_opt, int shipped,
			    struct sd_train_reference *out, char *label,
			    size_t labellen, int *have, char *err,
			    size_t errlen);

#endif
