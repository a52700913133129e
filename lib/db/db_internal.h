/*
 * db_internal.h - what the files of src/db/ share and nothing else uses:
 * the compiled-in SQL (generated from sql/ into schema_sql.c by src/db.am)
 * and the table printer of the database commands.
 */
#ifndef SD_DB_INTERNAL_H
#define SD_DB_INTERNAL_H

#include <stddef.h>
#include <stdio.h>
#include <sqlite3.h>

/* Bind a string to parameter i of st: NULL for NULL or "". */
void sd_db_bind_str(sqlite3_stmt *st, int i, const char *s);
/* Bind a real to parameter i of st: NULL when not finite (SQLite would
 * store NaN as NULL anyway). */
void sd_db_bind_real(sqlite3_stmt *st, int i, double v);

/* sql/schema.sql: creates a database at SD_DB_SCHEMA_VERSION. */
extern const char sd_db_schema_sql[];
/* sql/migrations/0002_history.sql: version 1 -> 2. */
extern const char sd_db_migration_0002_sql[];
extern const char sd_db_migration_0003_sql[];
extern const char sd_db_migration_0004_sql[];
extern const char sd_db_migration_0005_sql[];
/* sql/migrations/0006_training.sql: version 5 -> 6, the training tables. */
extern const char sd_db_migration_0006_sql[];
/* sql/migrations/0007_gemm.sql: version 6 -> 7, the gemm tables. */
extern const char sd_db_migration_0007_sql[];
/* sql/migrations/0008_test_hosts.sql: version 7 -> 8, test_hosts_v, the
 * test's number and attempt, the subject's outcome. */
extern const char sd_db_migration_0008_sql[];
/* sql/migrations/0009_attempt_index.sql: version 8 -> 9, tests_v's
 * outcome through an index. */
extern const char sd_db_migration_0009_sql[];
/* sql/migrations/0010_variant.sql: version 9 -> 10, tests.variant. */
extern const char sd_db_migration_0010_sql[];
/* sql/migrations/0011_path.sql: version 10 -> 11, the path expectation. */
extern const char sd_db_migration_0011_sql[];
/* sql/migrations/0012_pairs.sql: version 11 -> 12, tests.round, pairing
 * and seed. */
extern const char sd_db_migration_0012_sql[];
/* sql/migrations/0013_identity.sql: version 12 -> 13, meta and the
 * database's identity. */
extern const char sd_db_migration_0013_sql[];

/*
 * sd_db_open() that also fills `note` (when not NULL) with a line for the
 * user when the journal is not WAL ("" otherwise).
 */
int sd_db_open_note(const char *path, int flags, sqlite3 **out, char *note,
		    size_t notelen, char *err, size_t errlen);

/*
 * The query of `shakedown history` (queries.c): ?1 op, ?2 size_bytes or
 * NULL, ?3 dtype or NULL, ?4 since or NULL, ?5 until or NULL, ?6 host or
 * NULL.  Shared with bench/db_bench.c, which times it.
 */
extern const char sd_db_history_sql[];

/* The run list of `shakedown runs` (queries.c): ?1 since, ?2 until, ?3
 * plan, ?4 status, ?5 kind (NULL: any), ?6 limit, ?7 short ids. */
extern const char sd_db_runs_sql[];

/* Output formats of the database commands. */
enum sd_db_format { SD_DB_TEXT = 0, SD_DB_JSON, SD_DB_CSV };

/* A parameter of sd_db_print_query(). */
struct sd_db_param {
	enum { SD_DB_P_NULL = 0, SD_DB_P_INT, SD_DB_P_REAL, SD_DB_P_TEXT } type;
	long long i;
	double d;
	const char *s;
};

/*
 * Run the query `sql` with parameters p[0..np-1] bound to ?1..?np and
 * print its rows to `out`: an aligned text table with a header line (NULL
 * as "-", REAL with two decimals or three significant digits below 1), CSV with a header line (RFC 4180
 * quoting, full precision), or a JSON array of objects built by SQLite
 * (json_group_array over the query, in its order).  *nrows (may be NULL)
 * receives the number of rows.  Returns SD_OK or SD_ERR_IO with err.
 */
int sd_db_print_query(sqlite3 *db, const char *sql,
		      const struct sd_db_param *p, int np,
		      enum sd_db_format fmt, FILE *out, long *nrows,
		      char *err, size_t errlen);

#endif
