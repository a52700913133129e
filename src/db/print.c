/*
 * print.c - print a query's rows as a text table, CSV or JSON, for the
 * database commands (see db_internal.h).
 *
 * JSON comes from SQLite itself: the query is wrapped in
 * json_group_array(json_object(...)) over its own column names, so every
 * command's JSON has the same column names as its text and CSV.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "db/db_internal.h"
#include "shakedown/backend.h"
#include "util.h"

static int bind_all(sqlite3_stmt *st, const struct sd_db_param *p, int np)
{
	for (int i = 0; i < np; i++) {
		int rc = SQLITE_OK;
		switch (p[i].type) {
		case SD_DB_P_NULL:
			rc = sqlite3_bind_null(st, i + 1);
			break;
		case SD_DB_P_INT:
			rc = sqlite3_bind_int64(st, i + 1, p[i].i);
			break;
		case SD_DB_P_REAL:
			rc = sqlite3_bind_double(st, i + 1, p[i].d);
			break;
		case SD_DB_P_TEXT:
			rc = p[i].s ? sqlite3_bind_text(st, i + 1, p[i].s, -1,
							SQLITE_STATIC)
				    : sqlite3_bind_null(st, i + 1);
			break;
		}
		if (rc != SQLITE_OK)
			return rc;
	}
	return SQLITE_OK;
}

static int prepare(sqlite3 *db, const char *sql, const struct sd_db_param *p,
		   int np, sqlite3_stmt **st, char *err, size_t errlen)
{
	if (sqlite3_prepare_v2(db, sql, -1, st, NULL) != SQLITE_OK ||
	    bind_all(*st, p, np) != SQLITE_OK) {
		snprintf(err, errlen, "query failed: %s", sqlite3_errmsg(db));
		sqlite3_finalize(*st);
		*st = NULL;
		return SD_ERR_IO;
	}
	return SD_OK;
}

/* A cell as text for the table: NULL "-", REAL with two decimals. */
static char *cell_text(sqlite3_stmt *st, int col)
{
	char buf[64];
	switch (sqlite3_column_type(st, col)) {
	case SQLITE_NULL:
		return strdup("-");
	case SQLITE_FLOAT: {
		/* two decimals, or three significant digits below 1 */
		double v = sqlite3_column_double(st, col);
		if (v == 0.0 || v >= 1.0 || v <= -1.0)
			snprintf(buf, sizeof(buf), "%.2f", v);
		else
			snprintf(buf, sizeof(buf), "%.3g", v);
		return strdup(buf);
	}
	default: {
		const char *t = (const char *)sqlite3_column_text(st, col);
		return strdup(t ? t : "");
	}
	}
}

static void csv_field(FILE *out, const char *s)
{
	if (!strpbrk(s, ",\"\r\n")) {
		fputs(s, out);
		return;
	}
	fputc('"', out);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', out);
		fputc(*s, out);
	}
	fputc('"', out);
}

static int print_json(sqlite3 *db, const char *sql,
		      const struct sd_db_param *p, int np, FILE *out,
		      long *nrows, char *err, size_t errlen)
{
	sqlite3_stmt *st = NULL;
	struct sd_buf b = { 0 };
	int rc = prepare(db, sql, p, np, &st, err, errlen);
	if (rc != SD_OK)
		return rc;
	rc = SD_ERR_IO;
	int ncol = sqlite3_column_count(st);
	if (sd_buf_printf(&b, "SELECT json_group_array(json_object("))
		goto nomem;
	for (int c = 0; c < ncol; c++) {
		const char *name = sqlite3_column_name(st, c);
		char *q = sqlite3_mprintf("%s%Q, \"%w\"", c ? ", " : "", name,
					  name);
		if (!q || sd_buf_printf(&b, "%s", q)) {
			sqlite3_free(q);
			goto nomem;
		}
		sqlite3_free(q);
	}
	if (sd_buf_printf(&b, ")), count(*) FROM (%s)", sql))
		goto nomem;
	sqlite3_finalize(st);
	st = NULL;
	rc = prepare(db, b.data, p, np, &st, err, errlen);
	if (rc != SD_OK)
		goto out;
	rc = SD_ERR_IO;
	if (sqlite3_step(st) != SQLITE_ROW) {
		snprintf(err, errlen, "query failed: %s", sqlite3_errmsg(db));
		goto out;
	}
	fprintf(out, "%s\n", (const char *)sqlite3_column_text(st, 0));
	if (nrows)
		*nrows = (long)sqlite3_column_int64(st, 1);
	rc = SD_OK;
	goto out;
nomem:
	snprintf(err, errlen, "out of memory");
	rc = SD_ERR_NOMEM;
out:
	sqlite3_finalize(st);
	sd_buf_free(&b);
	return rc;
}

int sd_db_print_query(sqlite3 *db, const char *sql,
		      const struct sd_db_param *p, int np,
		      enum sd_db_format fmt, FILE *out, long *nrows,
		      char *err, size_t errlen)
{
	sqlite3_stmt *st = NULL;
	char **cells = NULL;
	size_t *width = NULL;
	long n = 0, cap = 0;
	int rc, step, ncol;

	if (fmt == SD_DB_JSON)
		return print_json(db, sql, p, np, out, nrows, err, errlen);
	rc = prepare(db, sql, p, np, &st, err, errlen);
	if (rc != SD_OK)
		return rc;
	rc = SD_ERR_IO;
	ncol = sqlite3_column_count(st);
	if (fmt == SD_DB_CSV) {
		for (int c = 0; c < ncol; c++) {
			if (c)
				fputc(',', out);
			csv_field(out, sqlite3_column_name(st, c));
		}
		fputc('\n', out);
		while ((step = sqlite3_step(st)) == SQLITE_ROW) {
			for (int c = 0; c < ncol; c++) {
				const char *t = (const char *)
					sqlite3_column_text(st, c);
				if (c)
					fputc(',', out);
				csv_field(out, t ? t : "");
			}
			fputc('\n', out);
			n++;
		}
		if (step != SQLITE_DONE) {
			snprintf(err, errlen, "query failed: %s",
				 sqlite3_errmsg(db));
			goto out;
		}
		rc = SD_OK;
		goto out;
	}

	/* Text: gather every cell to size the columns. */
	width = calloc((size_t)ncol, sizeof(*width));
	if (!width)
		goto nomem;
	for (int c = 0; c < ncol; c++)
		width[c] = strlen(sqlite3_column_name(st, c));
	while ((step = sqlite3_step(st)) == SQLITE_ROW) {
		if (n == cap) {
			long ncap = cap ? cap * 2 : 64;
			char **nc = realloc(cells, (size_t)ncap * ncol *
					    sizeof(*nc));
			if (!nc)
				goto nomem;
			cells = nc;
			cap = ncap;
		}
		for (int c = 0; c < ncol; c++) {
			char *t = cell_text(st, c);
			if (!t) {
				for (int k = 0; k < c; k++)
					free(cells[n * ncol + k]);
				goto nomem;
			}
			cells[n * ncol + c] = t;
			if (strlen(t) > width[c])
				width[c] = strlen(t);
		}
		n++;
	}
	if (step != SQLITE_DONE) {
		snprintf(err, errlen, "query failed: %s", sqlite3_errmsg(db));
		goto out;
	}
	for (int c = 0; c < ncol; c++)
		fprintf(out, "%-*s%s", c + 1 < ncol ? (int)width[c] : 0,
			sqlite3_column_name(st, c), c + 1 < ncol ? "  " : "\n");
	for (long r = 0; r < n; r++)
		for (int c = 0; c < ncol; c++) {
			const char *t = cells[r * ncol + c];
			fprintf(out, "%-*s%s", c + 1 < ncol ? (int)width[c] : 0,
				t, c + 1 < ncol ? "  " : "\n");
		}
	rc = SD_OK;
	goto out;
nomem:
	snprintf(err, errlen, "out of memory");
	rc = SD_ERR_NOMEM;
out:
	if (cells)
		for (long i = 0; i < n * ncol; i++)
			free(cells[i]);
	free(cells);
	free(width);
	sqlite3_finalize(st);
	if (rc == SD_OK && nrows)
		*nrows = n;
	return rc;
}
