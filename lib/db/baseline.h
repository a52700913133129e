/*
 * baseline.h - named baselines in the results database: what a run
 * measured, kept under a name so that later runs are judged against it.
 *
 * A baseline is taken from one recorded run (`shakedown baseline create`):
 * for each op, dtype, redop, scope, size and placement of the run's passed
 * tests, the median over the run's test rows (one per group: a `node`
 * scope test has one row per node) of the bus bandwidth and of the time,
 * and how many rows there were.  Tables `baselines` and `baseline_values`
 * (shakedown-db(5)).  Functions return an sd_status and fill err with one
 * line; they never print.
 */
#ifndef SD_DB_BASELINE_H
#define SD_DB_BASELINE_H

#include <stddef.h>
#include <stdint.h>
#include <sqlite3.h>

/* The longest baseline name, without its NUL. */
#define SD_BASELINE_NAME_MAX 63

/* One value of a baseline: a test kind at one size and placement. */
struct sd_baseline_value {
	char op[32];
	char dtype[32];
	char redop[32];  /* "" when the op does not reduce */
	char scope[64];  /* as recorded: "world", "node", "split:2", ... */
	uint64_t size_bytes;
	int in_place;    /* 0 or 1 */
	double busbw_gbs; /* median over the groups */
	double time_us;   /* median over the groups */
	int groups;       /* how many test rows (groups) the medians are of */
};

/* A baseline with its values, sorted by (op, dtype, redop, scope,
 * size_bytes, in_place) for sd_baseline_find(). */
struct sd_baseline {
	char name[SD_BASELINE_NAME_MAX + 1];
	char from_run_uuid[37];
	size_t n;
	struct sd_baseline_value *v; /* n values, owned: sd_baseline_free() */
};

/* What sd_db_baseline_create() made. */
struct sd_baseline_created {
	char from_run_uuid[37];
	long values; /* rows of baseline_values */
	long tests;  /* passed test rows they were taken from */
};

/*
 * Whether `name` may name a baseline: 1 to SD_BASELINE_NAME_MAX
 * characters, letters, digits, '.', '_' and '-', starting with a letter
 * or digit.  Returns SD_OK, or SD_ERR_INVALID with err saying so.
 */
int sd_db_baseline_check_name(const char *name, char *err, size_t errlen);

/*
 * Create baseline `name` from run `run_ref` (as for sd_db_find_run(): a
 * UUID, a unique prefix, "latest" or NULL) on an open read-write handle,
 * in one transaction.  `description` may be NULL.  *out (may be NULL)
 * receives what was made.  Returns SD_OK; SD_ERR_INVALID (bad name, no
 * such run or an ambiguous prefix, a run still running, a run with no
 * passed measurements, an existing name: err says what to do); SD_ERR_IO
 * (the database failed or is locked past the busy timeout).
 */
int sd_db_baseline_create(sqlite3 *db, const char *name, const char *run_ref,
			  const char *description,
			  struct sd_baseline_created *out, char *err,
			  size_t errlen);

/*
 * Delete baseline `name` and its values, in one transaction.  Returns
 * SD_OK, SD_ERR_INVALID (no such baseline: err says how to list them) or
 * SD_ERR_IO.
 */
int sd_db_baseline_delete(sqlite3 *db, const char *name, char *err,
			  size_t errlen);

/*
 * The id of baseline `name`: SD_OK and *id, SD_ERR_INVALID (no such
 * baseline; err names `shakedown baseline list`) or SD_ERR_IO.
 */
int sd_db_baseline_id(sqlite3 *db, const char *name, int64_t *id, char *err,
		      size_t errlen);

/*
 * The queries `shakedown baseline list` and `show` print (through
 * sd_db_print_query()): every baseline with its number of values, newest
 * first (no parameters); the values of one (?1 = baselines.id), redop
 * NULL for an op that does not reduce.
 */
extern const char sd_db_baseline_list_sql[];
extern const char sd_db_baseline_values_sql[];

/*
 * Baseline `name` as one JSON object: name, created_at, from_run_uuid,
 * description, backend, nodelist, nranks and values (an array of objects
 * with the columns of sd_db_baseline_values_sql).  Returns SD_OK and
 * *json (malloc'd, no trailing newline; the caller frees),
 * SD_ERR_INVALID (no such baseline), SD_ERR_NOMEM or SD_ERR_IO.
 */
int sd_db_baseline_json(sqlite3 *db, const char *name, char **json,
			char *err, size_t errlen);

/*
 * Read baseline `name` from an open handle into *out (zeroed first; free
 * with sd_baseline_free(), also after a failure).  Returns SD_OK,
 * SD_ERR_INVALID (no such baseline: err lists how to see the names with
 * `shakedown baseline list`), SD_ERR_NOMEM or SD_ERR_IO.
 */
int sd_db_baseline_read(sqlite3 *db, const char *name,
			struct sd_baseline *out, char *err, size_t errlen);

/*
 * Open the database at `db_path` (resolved by sd_db_resolve_path(): NULL
 * means $SHAKEDOWN_DB, then ./shakedown.db; read-write when the file is
 * writable, so an older schema is migrated, else read only), read
 * baseline `name` into *out and close it.  Returns as
 * sd_db_baseline_read(); also SD_ERR_INVALID for "none" (no database) and
 * SD_ERR_IO when the file cannot be opened (err as for sd_db_open()).
 */
int sd_db_baseline_load(const char *db_path, const char *name,
			struct sd_baseline *out, char *err, size_t errlen);

/*
 * The value of `b` for one test kind, size and placement, or NULL when
 * the baseline has none.  `redop` NULL or "" for an op that does not
 * reduce.  O(log n).  The pointer is into b->v.
 */
const struct sd_baseline_value *
sd_baseline_find(const struct sd_baseline *b, const char *op,
		 const char *dtype, const char *redop, const char *scope,
		 uint64_t size_bytes, int in_place);

/* Free the values of *b and zero it (NULL is fine). */
void sd_baseline_free(struct sd_baseline *b);

#endif
