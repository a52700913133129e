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

/* The first line of every journal; a file without it is not replayed. */
static const char journal_head[] = "-- shakedown journal 1";

/* Largest journal read back (a run's whole record is far less). */
#define JOURNAL_MAX_BYTES (256L << 20)

void sd_db_journal_path(const char *db_path, char *out, size_t len)
{
	snprintf(out, len, "%s.pending.sql", db_path);
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

int sd_db_journal_append(const char *path, const char *text, char *err,
			 size_t errlen)
{
	/* locked while written; a replay renames the journal away and then
	 * takes the lock, so a block is either read by it or goes to a
	 * journal of its own: open again when the file was renamed */
	int fd = -1;
	struct stat st;
	for (int tries = 0; tries < 8; tries++) {
		fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
		if (fd < 0) {
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
			return SD_ERR_IO;
		}
		struct stat now;
		if (flock(fd, LOCK_EX) == 0 && fstat(fd, &st) == 0 &&
		    stat(path, &now) == 0 && now.st_ino == st.st_ino &&
		    now.st_dev == st.st_dev)
			break;
		close(fd);
		fd = -1;
	}
	if (fd < 0) {
		snprintf(err, errlen, "%s: cannot lock it", path);
		return SD_ERR_IO;
	}
	off_t before = st.st_size;
	/* the first block starts the file with the journal's header */
	int rc = (before == 0 && (write_all(fd, journal_head) ||
				  write_all(fd, "\n"))) ||
			 write_all(fd, text)
		 ? SD_ERR_IO : SD_OK;
	if (rc == SD_OK && fsync(fd) != 0)
		rc = SD_ERR_IO;
	if (rc != SD_OK) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		/* half a block would not replay: take it back */
		if (before == 0)
			unlink(path);
		else if (ftruncate(fd, before) != 0) {
			/* the earlier blocks stay; this one is cut */
		}
	}
	close(fd);
	return rc;
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
	if (strncmp(text, journal_head, sizeof(journal_head) - 1) != 0 ||
	    memchr(text, '\0', got)) {
		snprintf(err, errlen, "%s: not a shakedown journal (its first "
			 "line is not '%s')", path, journal_head);
		free(text);
		return NULL;
	}
	return text;
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

/* A claimed journal that was not replayed goes back: renamed, or, when
 * a run started a new journal meanwhile, its blocks appended to that. */
static void give_back(const char *claimed, const char *path)
{
	struct stat st;
	if (stat(path, &st) != 0 && rename(claimed, path) == 0)
		return;
	int absent;
	char err[256];
	char *text = read_journal(claimed, &absent, err, sizeof(err));
	if (!text)
		return;
	const char *blocks = strchr(text, '\n'); /* past the header line */
	if (blocks && sd_db_journal_append(path, blocks + 1, err,
					   sizeof(err)) == SD_OK)
		unlink(claimed);
	free(text);
}

static int line_of(const char *text, const char *at)
{
	int line = 1;
	for (const char *p = text; p < at; p++)
		line += *p == '\n';
	return line;
}

int sd_db_journal_replay(sqlite3 *db, const char *path, int *statements,
			 int *tests, char *err, size_t errlen)
{
	int absent;
	struct stat jst;
	char claimed[4200];
	*statements = *tests = 0;
	err[0] = '\0';
	snprintf(claimed, sizeof(claimed), "%s.replaying", path);
	if (stat(claimed, &jst) == 0) {
		snprintf(err, errlen, "%s: left by a replay that did not end; "
			 "rename it to %s and recover again", claimed, path);
		return SD_ERR_IO;
	}
	if (stat(path, &jst) != 0)
		return SD_OK; /* nothing to replay */
	/* one replay at a time (the database's write lock), and the journal
	 * claimed by a rename: a run appending now starts a new one, and
	 * one that opened it before holds its lock until its block is in */
	if (sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL) !=
	    SQLITE_OK) {
		snprintf(err, errlen, "%s: cannot start writing (%s)", path,
			 sqlite3_errmsg(db));
		return SD_ERR_IO;
	}
	if (rename(path, claimed) != 0) {
		int e = errno;
		sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
		if (e == ENOENT)
			return SD_OK; /* another run replayed it just now */
		snprintf(err, errlen, "%s: cannot claim it: %s", path,
			 strerror(e));
		return SD_ERR_IO;
	}
	int lfd = open(claimed, O_RDONLY | O_CLOEXEC);
	if (lfd >= 0)
		flock(lfd, LOCK_EX);
	char *text = read_journal(claimed, &absent, err, errlen);
	if (!text) {
		sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
		if (lfd >= 0)
			close(lfd);
		give_back(claimed, path);
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
				     SQLITE_CONSTRAINT_UNIQUE;
			snprintf(err, errlen, "%s, line %d: %s%s", path,
				 line_of(text, here), sqlite3_errmsg(db),
				 unique ? " (its tests are in the database "
					  "already: replayed before? then "
					  "remove the journal)"
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
		give_back(claimed, path);
	} else if (unlink(claimed) != 0) {
		/* in the database now: a second replay would be refused by
		 * the tests' unique index, so say it rather than fail */
		snprintf(err, errlen, "%s: replayed, but cannot remove it (%s); "
			 "remove it by hand", claimed, strerror(errno));
	} else {
		err[0] = '\0';
	}
	if (lfd >= 0)
		close(lfd);
	free(text);
	return rc;
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
