/*
 * journal.c - what a run could not write into its database, kept beside
 * it as SQL, and replayed (see db.h).
 *
 * The journal is plain SQL text that sqlite3 itself could read: a header
 * line, then per run a comment and the statements the run could not
 * commit, with their values written out by SQLite (sqlite3_expanded_sql),
 * so the text is what the database would have run.  Replaying runs every
 * statement in one transaction: all of the journal lands, or none.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#include "shakedown/backend.h"
#include "db.h"
#include "util.h"

/* The first line of every journal; a file without it is not replayed.
 * Version 2 names its database on the second line; version 1 (beside the
 * database as DB.pending.sql, blocks of several runs appended) does not,
 * and is still replayed where it was left. */
static const char journal_head[] = "-- shakedown journal 2";
static const char journal_head1[] = "-- shakedown journal 1";
static const char database_line[] = "-- database ";

/* Largest journal read back (a run's whole record is far less). */
#define JOURNAL_MAX_BYTES (256L << 20)

/* Where its name ends: ".pending.sql". */
static const char journal_tail[] = ".pending.sql";

void sd_db_journal_path(const char *db_path, char *out, size_t len)
{
	snprintf(out, len, "%s%s", db_path, journal_tail);
}

void sd_db_journal_name(const char *dir, const char *db_path,
			const char *db_uuid, const char *run_uuid, char *out,
			size_t len)
{
	if (!dir) {
		snprintf(out, len, "%s.%s.run-%s%s", db_path, db_uuid,
			 run_uuid, journal_tail);
		return;
	}
	const char *base = strrchr(db_path, '/');
	base = base ? base + 1 : db_path;
	snprintf(out, len, "%s/%s.%s.run-%s%s", dir, base, db_uuid, run_uuid,
		 journal_tail);
}

/* Write the string s on fd whole; 0, or -1 with errno. */
static int write_all(int fd, const char *s)
{
	size_t n = strlen(s);
	while (n) {
		ssize_t w = write(fd, s, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		s += w;
		n -= (size_t)w;
	}
	return 0;
}

int sd_db_journal_put(const char *path, const char *db_uuid,
		      const char *text, int *lockfd, char *err, size_t errlen)
{
	char tmp[4300];
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		snprintf(err, errlen, "%s: %s", tmp, strerror(errno));
		return SD_ERR_IO;
	}
	/* locked before it has its name, and until the run lets it go: a
	 * replay leaves it alone while its run may still write it */
	if (flock(fd, LOCK_EX) != 0 || write_all(fd, journal_head) ||
	    write_all(fd, "\n") || write_all(fd, database_line) ||
	    write_all(fd, db_uuid) || write_all(fd, "\n") ||
	    write_all(fd, text) || fsync(fd) != 0 || rename(tmp, path) != 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		close(fd);
		unlink(tmp);
		return SD_ERR_IO;
	}
	if (*lockfd >= 0)
		close(*lockfd);
	*lockfd = fd;
	return SD_OK;
}

/* Read the whole file; NULL with err filled (ENOENT: *absent = 1). */
static char *read_journal(const char *path, int *absent, char *err,
			  size_t errlen)
{
	*absent = 0;
	FILE *f = fopen(path, "rb");
	if (!f) {
		*absent = errno == ENOENT;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return NULL;
	}
	struct stat st;
	if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode) ||
	    st.st_size > JOURNAL_MAX_BYTES) {
		snprintf(err, errlen, "%s: not a regular file of at most %ld "
			 "MiB", path, JOURNAL_MAX_BYTES >> 20);
		fclose(f);
		return NULL;
	}
	char *text = malloc((size_t)st.st_size + 1);
	size_t got = text ? fread(text, 1, (size_t)st.st_size, f) : 0;
	fclose(f);
	if (!text || got != (size_t)st.st_size) {
		snprintf(err, errlen, "%s: cannot read it", path);
		free(text);
		return NULL;
	}
	text[got] = '\0';
	if ((strncmp(text, journal_head, sizeof(journal_head) - 1) != 0 &&
	     strncmp(text, journal_head1, sizeof(journal_head1) - 1) != 0) ||
	    memchr(text, '\0', got)) {
		snprintf(err, errlen, "%s: not a shakedown journal (its first "
			 "line is not '%s')", path, journal_head);
		free(text);
		return NULL;
	}
	return text;
}

int sd_db_journal_owner(const char *path, char out[37])
{
	char line[128] = "";
	out[0] = '\0';
	FILE *f = fopen(path, "rb");
	if (!f)
		return -1;
	int v2 = fgets(line, sizeof(line), f) &&
		 strncmp(line, journal_head, sizeof(journal_head) - 1) == 0;
	if (v2 && fgets(line, sizeof(line), f) &&
	    strncmp(line, database_line, sizeof(database_line) - 1) == 0) {
		snprintf(out, 37, "%.36s", line + sizeof(database_line) - 1);
		out[strcspn(out, "\r\n")] = '\0';
	}
	fclose(f);
	return v2 ? 2 : 1;
}

/* A journal holds only what a run writes: rows of its own tables, its
 * run's end, and its beginning (run, job, ranks, host environments),
 * which it may not have written at its start (sink_db.c). */
static int allowed(const char *sql)
{
	static const char *const ok[] = {
		"INSERT INTO tests ", "INSERT INTO measurements ",
		"INSERT INTO verdicts ", "INSERT OR REPLACE INTO suspects ",
		"INSERT INTO gemm_results ", "INSERT INTO gemm_devices ",
		"UPDATE runs SET ",
		"INSERT INTO runs ", "INSERT INTO jobs ", "INSERT INTO ranks ",
		"INSERT OR REPLACE INTO host_env ",
		"INSERT INTO train_runs ", "INSERT INTO train_steps ",
		"INSERT INTO train_metrics ", "UPDATE train_runs SET ",
	};
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		if (strncmp(sql, ok[i], strlen(ok[i])) == 0)
			return 1;
	return 0;
}

/* A claimed journal that was not replayed goes back to its name; when
 * that name was taken meanwhile (a version 1 journal a run started
 * again), it stays claimed, and says so. */
static void give_back(const char *claimed, const char *path, char *err,
		      size_t errlen)
{
	struct stat st;
	if (stat(path, &st) != 0 && rename(claimed, path) == 0)
		return;
	size_t u = strlen(err);
	snprintf(err + u, errlen - u, "; it is kept as %s (%s exists again: "
		 "replay that one with --journal)", claimed, path);
}

static int line_of(const char *text, const char *at)
{
	int line = 1;
	for (const char *p = text; p < at; p++)
		line += *p == '\n';
	return line;
}

int sd_db_journal_replay(sqlite3 *db, const char *path, const char *db_uuid,
			 const char *db_path, int *statements, int *tests,
			 int *skipped, char *err, size_t errlen)
{
	int absent;
	struct stat jst;
	char claimed[4200], owner[37];
	*statements = *tests = *skipped = 0;
	err[0] = '\0';
	snprintf(claimed, sizeof(claimed), "%s.replaying", path);
	if (stat(claimed, &jst) == 0) {
		snprintf(err, errlen, "%s: left by a replay that did not end; "
			 "rename it to %s and recover again", claimed, path);
		return SD_ERR_IO;
	}
	if (stat(path, &jst) != 0)
		return SD_OK; /* nothing to replay */
	/* a journal of another database is never mixed into this one */
	int version = sd_db_journal_owner(path, owner);
	if (version == 2 && strcmp(owner, db_uuid ? db_uuid : "") != 0) {
		*skipped = 1;
		if (db_uuid && db_uuid[0])
			snprintf(err, errlen, "skipped %s: it is the journal of "
				 "database %s, not of %s (database %s); left "
				 "alone, for that database's 'shakedown db "
				 "recover'", path, owner[0] ? owner : "(none "
				 "named)", db_path, db_uuid);
		else
			snprintf(err, errlen, "skipped %s: it is the journal of "
				 "database %s, and %s has no identity (schema "
				 "version before 13: run 'shakedown db migrate' "
				 "first); left alone", path,
				 owner[0] ? owner : "(none named)", db_path);
		return SD_OK;
	}
	/* its run may still be writing it (it holds the lock until it
	 * ends): left for later */
	int lfd = open(path, O_RDONLY | O_CLOEXEC);
	if (lfd >= 0 && flock(lfd, LOCK_EX | LOCK_NB) != 0) {
		close(lfd);
		*skipped = 1;
		snprintf(err, errlen, "skipped %s: its run is still writing "
			 "it; left for the next recovery", path);
		return SD_OK;
	}
	/* one replay at a time (the database's write lock), and the journal
	 * claimed by a rename */
	if (sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL) !=
	    SQLITE_OK) {
		snprintf(err, errlen, "%s: cannot start writing (%s)", path,
			 sqlite3_errmsg(db));
		if (lfd >= 0)
			close(lfd);
		return SD_ERR_IO;
	}
	if (rename(path, claimed) != 0) {
		int e = errno;
		sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
		if (lfd >= 0)
			close(lfd);
		if (e == ENOENT)
			return SD_OK; /* another run replayed it just now */
		snprintf(err, errlen, "%s: cannot claim it: %s", path,
			 strerror(e));
		return SD_ERR_IO;
	}
	char *text = read_journal(claimed, &absent, err, errlen);
	if (!text) {
		sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
		if (lfd >= 0)
			close(lfd);
		give_back(claimed, path, err, errlen);
		return SD_ERR_IO;
	}
	const char *at = text;
	int rc = SD_OK;
	while (*at) {
		sqlite3_stmt *st = NULL;
		const char *tail = NULL;
		while (*at == ' ' || *at == '\n' || *at == '\t')
			at++;
		if (sqlite3_prepare_v2(db, at, -1, &st, &tail) != SQLITE_OK) {
			snprintf(err, errlen, "%s, line %d: %s", path,
				 line_of(text, at), sqlite3_errmsg(db));
			rc = SD_ERR_IO;
			break;
		}
		if (!st) /* only comments were left */
			break;
		const char *sql = sqlite3_sql(st);
		/* the comment lines before it are part of its text */
		while (sql && strncmp(sql, "--", 2) == 0) {
			sql = strchr(sql, '\n');
			sql = sql ? sql + 1 : "";
		}
		/* where the statement proper starts, for messages */
		const char *here = at;
		while (strncmp(here, "--", 2) == 0) {
			const char *nl = strchr(here, '\n');
			here = nl ? nl + 1 : here + strlen(here);
		}
		if (!allowed(sql)) {
			snprintf(err, errlen, "%s, line %d: not a statement a "
				 "run writes; the journal is not replayed",
				 path, line_of(text, here));
			sqlite3_finalize(st);
			rc = SD_ERR_INVALID;
			break;
		}
		int is_test = strncmp(sql, "INSERT INTO tests ", 18) == 0;
		int src = sqlite3_step(st);
		if (src != SQLITE_DONE) {
			int unique = sqlite3_extended_errcode(db) ==
					     SQLITE_CONSTRAINT_UNIQUE ||
				     sqlite3_extended_errcode(db) ==
					     SQLITE_CONSTRAINT_PRIMARYKEY;
			/* never advise removing it: what is in the database
			 * may be only part of what it holds */
			snprintf(err, errlen, "%s, line %d: %s%s", path,
				 line_of(text, here), sqlite3_errmsg(db),
				 unique ? " (rows of its run are in the "
					  "database already: replayed "
					  "before?); nothing of it went in "
					  "and it is kept: compare its run "
					  "with the database's ('shakedown "
					  "runs') before setting it aside"
					: "");
			sqlite3_finalize(st);
			rc = SD_ERR_IO;
			break;
		}
		sqlite3_finalize(st);
		(*statements)++;
		*tests += is_test;
		at = tail;
	}
	if (rc == SD_OK &&
	    sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "%s: cannot commit (%s)", path,
			 sqlite3_errmsg(db));
		rc = SD_ERR_IO;
	}
	if (rc != SD_OK) {
		sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
		*statements = *tests = 0;
		give_back(claimed, path, err, errlen);
	} else if (unlink(claimed) != 0) {
		/* in the database now: a second replay would be refused by
		 * the tests' unique index, so say it rather than fail */
		snprintf(err, errlen, "%s: replayed, but cannot remove it (%s); "
			 "everything in it is in the database", claimed,
			 strerror(errno));
	} else {
		err[0] = '\0';
	}
	if (lfd >= 0)
		close(lfd);
	free(text);
	return rc;
}

/* Whether name is BASE.UUID.run-UUID.pending.sql; the database's UUID is
 * copied to id. */
static int journal_name_of(const char *name, const char *base, char id[37])
{
	size_t bl = strlen(base), nl = strlen(name), tl = strlen(journal_tail);
	if (nl != bl + 1 + 36 + 5 + 36 + tl || strncmp(name, base, bl) != 0 ||
	    name[bl] != '.' || strncmp(name + bl + 37, ".run-", 5) != 0 ||
	    strcmp(name + nl - tl, journal_tail) != 0)
		return 0;
	memcpy(id, name + bl + 1, 36);
	id[36] = '\0';
	return 1;
}

/* Add dir's journals of databases named base to the list. */
static void scan_dir(const char *dir, const char *base_path,
		     const char *base, const char *db_uuid,
		     struct sd_db_journals *j)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	if (!d)
		return;
	while ((e = readdir(d)) != NULL) {
		char id[37];
		if (!journal_name_of(e->d_name, base, id))
			continue;
		int own = db_uuid && strcmp(id, db_uuid) == 0;
		char ***v = own ? &j->own : &j->other;
		size_t *n = own ? &j->nown : &j->nother;
		char **nv = realloc(*v, (*n + 1) * sizeof(**v));
		if (!nv)
			break;
		*v = nv;
		/* named as the database is: "x.db" has its journals in "." */
		int bare = !strchr(base_path, '/') && strcmp(dir, ".") == 0;
		size_t len = strlen(dir) + strlen(e->d_name) + 2;
		if (!(nv[*n] = malloc(len)))
			break;
		snprintf(nv[*n], len, "%s%s%s", bare ? "" : dir,
			 bare ? "" : "/", e->d_name);
		(*n)++;
	}
	closedir(d);
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void sd_db_journals_find(const char *db_path, const char *db_uuid,
			 struct sd_db_journals *j)
{
	memset(j, 0, sizeof(*j));
	char dir[4096], legacy[4200];
	const char *slash = strrchr(db_path, '/');
	const char *base = slash ? slash + 1 : db_path;
	if (slash)
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - db_path) + (slash == db_path),
			 db_path);
	else
		snprintf(dir, sizeof(dir), ".");
	/* a version 1 journal left beside it, first: it is older */
	sd_db_journal_path(db_path, legacy, sizeof(legacy));
	struct stat st;
	if (stat(legacy, &st) == 0 && (j->own = malloc(sizeof(*j->own))) &&
	    (j->own[0] = strdup(legacy)))
		j->nown = 1;
	size_t first = j->nown;
	scan_dir(dir, db_path, base, db_uuid, j);
	const char *tmp = getenv("TMPDIR");
	tmp = tmp && *tmp ? tmp : "/tmp";
	struct stat a, b;
	if (!(stat(tmp, &a) == 0 && stat(dir, &b) == 0 && a.st_dev == b.st_dev &&
	      a.st_ino == b.st_ino))
		scan_dir(tmp, db_path, base, db_uuid, j);
	if (j->nown > first)
		qsort(j->own + first, j->nown - first, sizeof(*j->own), by_name);
	if (j->nother)
		qsort(j->other, j->nother, sizeof(*j->other), by_name);
}

void sd_db_journals_free(struct sd_db_journals *j)
{
	for (size_t i = 0; i < j->nown; i++)
		free(j->own[i]);
	for (size_t i = 0; i < j->nother; i++)
		free(j->other[i]);
	free(j->own);
	free(j->other);
	memset(j, 0, sizeof(*j));
}

/* Rows read before they are written: a damaged page seen inside a
 * write transaction would take the transaction with it, so each chunk is
 * read first and written after, in a transaction of its own. */
#define SALVAGE_CHUNK 4096

/* Copy the readable rows of table `t` from old to main in rowid order: a
 * damaged page ends the table's copy, not the salvage.  Returns rows
 * copied; *cut is set when the table could not be read to its end. */
static long copy_table(sqlite3 *db, const char *t, int *cut, char *why,
		       size_t whylen)
{
	sqlite3_stmt *rd = NULL, *wr = NULL;
	sqlite3_value **vals = NULL;
	long n = 0;
	*cut = 0;
	char *sel = sqlite3_mprintf("SELECT rowid, * FROM old.\"%w\" WHERE "
				    "rowid > ?1 ORDER BY rowid LIMIT %d", t,
				    SALVAGE_CHUNK);
	if (!sel || sqlite3_prepare_v2(db, sel, -1, &rd, NULL) != SQLITE_OK) {
		*cut = 1;
		snprintf(why, whylen, "%s", sqlite3_errmsg(db));
		goto out;
	}
	int ncol = sqlite3_column_count(rd) - 1;
	sqlite3_str *ins = sqlite3_str_new(db);
	sqlite3_str_appendf(ins, "INSERT INTO main.\"%w\" VALUES (", t);
	for (int i = 0; i < ncol; i++)
		sqlite3_str_appendf(ins, "%s?", i ? ", " : "");
	sqlite3_str_appendall(ins, ")");
	char *insql = sqlite3_str_finish(ins);
	if (!insql || sqlite3_prepare_v2(db, insql, -1, &wr, NULL) != SQLITE_OK) {
		*cut = 1;
		snprintf(why, whylen, "%s", sqlite3_errmsg(db));
		sqlite3_free(insql);
		goto out;
	}
	sqlite3_free(insql);
	vals = calloc((size_t)SALVAGE_CHUNK * (size_t)ncol, sizeof(*vals));
	if (!vals) {
		*cut = 1;
		snprintf(why, whylen, "out of memory");
		goto out;
	}
	sqlite3_int64 last = INT64_MIN;
	for (;;) {
		int got = 0, rc;
		sqlite3_bind_int64(rd, 1, last);
		while (got < SALVAGE_CHUNK &&
		       (rc = sqlite3_step(rd)) == SQLITE_ROW) {
			last = sqlite3_column_int64(rd, 0);
			for (int i = 0; i < ncol; i++)
				vals[(size_t)got * ncol + i] =
					sqlite3_value_dup(
						sqlite3_column_value(rd, i + 1));
			got++;
		}
		if (got < SALVAGE_CHUNK && rc != SQLITE_DONE) {
			*cut = 1;
			snprintf(why, whylen, "%s", sqlite3_errmsg(db));
		}
		sqlite3_reset(rd);
		sqlite3_exec(db, "BEGIN", NULL, NULL, NULL);
		for (int k = 0; k < got; k++) {
			for (int i = 0; i < ncol; i++)
				sqlite3_bind_value(wr, i + 1,
						   vals[(size_t)k * ncol + i]);
			if (sqlite3_step(wr) == SQLITE_DONE)
				n++;
			sqlite3_reset(wr);
		}
		sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
		for (size_t k = 0; k < (size_t)got * ncol; k++) {
			sqlite3_value_free(vals[k]);
			vals[k] = NULL;
		}
		if (*cut || got < SALVAGE_CHUNK)
			break;
	}
out:
	free(vals);
	sqlite3_free(sel);
	sqlite3_finalize(rd);
	sqlite3_finalize(wr);
	return n;
}

/* After the copy: rows whose parent could not be read would be taken by
 * the parent's id when it is used again (a replayed test), so none may
 * point at a missing row.  A nullable reference is cleared (a verdict
 * keeps its run); a row that cannot be without its parent (a
 * measurement of a lost test) is left out and counted.  Returns the rows
 * left out. */
static long settle_orphans(sqlite3 *db, long *cleared)
{
	sqlite3_stmt *chk = NULL;
	long dropped = 0;
	*cleared = 0;
	sqlite3_exec(db, "BEGIN", NULL, NULL, NULL);
	if (sqlite3_prepare_v2(db, "PRAGMA main.foreign_key_check", -1, &chk,
			       NULL) != SQLITE_OK)
		goto out;
	while (sqlite3_step(chk) == SQLITE_ROW) {
		const char *t = (const char *)sqlite3_column_text(chk, 0);
		sqlite3_int64 rowid = sqlite3_column_int64(chk, 1);
		int fkid = sqlite3_column_int(chk, 3);
		char col[128] = "";
		int notnull = 1;
		sqlite3_stmt *q = NULL;
		char *sql = sqlite3_mprintf(
			"SELECT f.\"from\", i.\"notnull\" FROM "
			"pragma_foreign_key_list(%Q) f JOIN pragma_table_info(%Q) "
			"i ON i.name = f.\"from\" WHERE f.id = %d", t, t, fkid);
		if (sql && sqlite3_prepare_v2(db, sql, -1, &q, NULL) == SQLITE_OK &&
		    sqlite3_step(q) == SQLITE_ROW) {
			snprintf(col, sizeof(col), "%s", sqlite3_column_text(q, 0));
			notnull = sqlite3_column_int(q, 1);
		}
		sqlite3_finalize(q);
		sqlite3_free(sql);
		if (col[0] && !notnull)
			sql = sqlite3_mprintf("UPDATE main.\"%w\" SET \"%w\" = NULL "
					      "WHERE rowid = %lld", t, col,
					      (long long)rowid);
		else
			sql = sqlite3_mprintf("DELETE FROM main.\"%w\" WHERE "
					      "rowid = %lld", t, (long long)rowid);
		if (sql && sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK &&
		    sqlite3_changes(db) > 0) {
			if (col[0] && !notnull)
				(*cleared)++;
			else
				dropped++;
		}
		sqlite3_free(sql);
	}
out:
	sqlite3_finalize(chk);
	sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
	return dropped;
}

int sd_db_salvage(const char *from, const char *into, char *report,
		  size_t replen, char *err, size_t errlen)
{
	sqlite3 *db = NULL;
	struct stat st;
	report[0] = '\0';
	if (stat(from, &st) != 0 || !S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s: no such database to salvage", from);
		return SD_ERR_INVALID;
	}
	if (stat(into, &st) == 0) {
		snprintf(err, errlen, "%s exists; name a new file to salvage "
			 "into", into);
		return SD_ERR_INVALID;
	}
	int rc = sd_db_open(into, SD_DB_CREATE, &db, err, errlen);
	if (rc != SD_OK)
		return rc;
	rc = SD_ERR_IO;
	char *att = sqlite3_mprintf("ATTACH %Q AS old", from);
	if (!att || sqlite3_exec(db, att, NULL, NULL, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "%s: cannot open it (%s)", from,
			 sqlite3_errmsg(db));
		sqlite3_free(att);
		goto fail;
	}
	sqlite3_free(att);
	sqlite3_stmt *ver = NULL;
	int old_version = -1, new_version = -1;
	if (sqlite3_prepare_v2(db, "PRAGMA old.user_version", -1, &ver,
			       NULL) == SQLITE_OK &&
	    sqlite3_step(ver) == SQLITE_ROW)
		old_version = sqlite3_column_int(ver, 0);
	sqlite3_finalize(ver);
	if (sqlite3_prepare_v2(db, "PRAGMA main.user_version", -1, &ver,
			       NULL) == SQLITE_OK &&
	    sqlite3_step(ver) == SQLITE_ROW)
		new_version = sqlite3_column_int(ver, 0);
	sqlite3_finalize(ver);
	if (old_version != new_version) {
		snprintf(err, errlen, "%s: schema version %d, not %d: it cannot "
			 "be salvaged by this shakedown", from, old_version,
			 new_version);
		goto fail;
	}
	/* the copy is the same database: it keeps the identity that names
	 * its runs' journals, when that can still be read */
	sqlite3_exec(db, "DELETE FROM main.meta WHERE key = 'database_uuid' "
		     "AND EXISTS (SELECT 1 FROM old.meta WHERE key = "
		     "'database_uuid')", NULL, NULL, NULL);
	/* parents may be among the damaged rows: the children are kept */
	sqlite3_exec(db, "PRAGMA foreign_keys = OFF", NULL, NULL, NULL);
	sqlite3_stmt *tabs = NULL;
	if (sqlite3_prepare_v2(db, "SELECT name FROM main.sqlite_schema "
			       "WHERE type = 'table' AND name NOT LIKE "
			       "'sqlite_%' ORDER BY rowid", -1, &tabs,
			       NULL) != SQLITE_OK) {
		snprintf(err, errlen, "%s: %s", into, sqlite3_errmsg(db));
		goto fail;
	}
	size_t u = 0;
	long total = 0;
	int ncut = 0;
	while (sqlite3_step(tabs) == SQLITE_ROW) {
		char t[128], why[160];
		snprintf(t, sizeof(t), "%s", sqlite3_column_text(tabs, 0));
		int cut;
		long n = copy_table(db, t, &cut, why, sizeof(why));
		total += n;
		if (cut && u < replen) {
			ncut++;
			u += (size_t)snprintf(report + u, replen - u,
					      "%s%s cut short after %ld rows "
					      "(%s)", u ? "; " : "", t, n, why);
		}
	}
	sqlite3_finalize(tabs);
	sqlite3_exec(db, "PRAGMA foreign_keys = ON", NULL, NULL, NULL);
	sqlite3_exec(db, "DETACH old", NULL, NULL, NULL);
	long cleared, dropped = settle_orphans(db, &cleared);
	char head[256];
	snprintf(head, sizeof(head), "copied %ld rows", total - dropped);
	if (cleared || dropped) {
		size_t hl = strlen(head);
		snprintf(head + hl, sizeof(head) - hl, " (of rows whose parent "
			 "could not be read: %ld kept without it, %ld left "
			 "out)", cleared, dropped);
	}
	size_t hl0 = strlen(head);
	snprintf(head + hl0, sizeof(head) - hl0, "; ");
	if (!ncut)
		snprintf(report, replen, "every table read to its end");
	size_t hl = strlen(head), rl = strlen(report);
	if (hl + rl < replen) {
		memmove(report + hl, report, rl + 1);
		memcpy(report, head, hl);
	}
	sd_db_close(db);
	return SD_OK;
fail:
	sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
	sd_db_close(db);
	unlink(into);
	return rc;
}
