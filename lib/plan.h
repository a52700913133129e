/*
 * plan.h - the test plan: which collectives, types, reductions, roots and
 * sizes to run, and how to run them (check passes, per-iteration timing,
 * in place or not, how per-rank times combine, the timeout, the scope).
 *
 * A plan is YAML (see shakedown(1), PLAN FILES): a `defaults` mapping and a
 * `tests` sequence.  The built-in default plan is compiled in, and so are
 * the defaults of every field (plan.c, one place).  Overrides (the command
 * line's options) apply on top, once, in sd_plan_build: `ops` replaces the
 * tests, every other set field overrides every test.  The result is
 * expanded (lists and `all` become one test each) and rendered back as
 * canonical text holding every setting of the run, which is what every
 * rank hashes and what the database records.
 */
#ifndef SD_PLAN_H
#define SD_PLAN_H

#include <stddef.h>
#include <stdint.h>
#include "shakedown/backend.h"
#include "names.h"

/* group_size of a scope whose groups the hosts decide (node, rail). */
#define SD_GROUPS_FROM_HOSTS (-1)

/* The largest plan file read (1 MiB: thousands of tests). */
#define SD_PLAN_MAX_FILE (1 << 20)

/* The largest size a plan may ask for (1T). */
#define SD_PLAN_MAX_BYTES (1ull << 40)

/* Most sizes one test may measure (a plan asking for more is refused). */
#define SD_MAX_SIZES 100000

/* How a test is measured: its sizes, iterations and checks. */
struct sd_test_settings {
	uint64_t min_bytes, max_bytes;
	uint64_t step_bytes;    /* add this per size (when step_factor is 1) */
	double step_factor;     /* or multiply by this (> 1) */
	long iters, warmup;
	long check_passes;      /* check the data this often per size; 0 off */
	int per_iter;           /* also time each iteration (percentiles) */
	int in_place;           /* 1: also measure in place (when the op can) */
	enum sd_combine combine;/* how per-rank times combine (nccl-tests -a) */
	int timeout_ms;         /* give up on one operation after this long */
};

/* What passing means for a test, beyond right data (a plan's `expect`).
 * Zero leaves an expectation out.  Each subject (group) of the test is
 * judged at one size: at_bytes, or the largest size measured. */
struct sd_expectation {
	double busbw_gbs;   /* floor: bus bandwidth at least this (GB/s) */
	double time_us;     /* ceiling: time per iteration at most this */
	uint64_t at_bytes;  /* the size judged; 0: the largest measured */
	double peers;       /* at least this fraction of the median of the
			       test's subjects (0 < peers <= 1) */
	double mad;         /* and not more than this many median absolute
			       deviations below that median */
	double baseline;    /* at least this fraction of a stored baseline */
};

/* A node-pairs scope with ":one" (node-pairs:one, node-pairs:ring:one,
 * node-pairs:random:K:one) pairs one rank per node (its first) instead of
 * all of them: 1 and the scope without the suffix in base; else 0 and
 * base = scope. */
int sd_scope_one_rank(const char *scope, char *base, size_t len);

/* Whether a test has any expectation to judge. */
int sd_expect_any(const struct sd_expectation *e);

struct sd_test_spec {
	enum sd_op op;
	enum sd_dtype dtype;
	enum sd_redop redop;
	int root;               /* -1 for ops without a root */
	struct sd_test_settings cfg;
	char algo[32];          /* "auto" or a backend algorithm name */
	char env[512];          /* "NCCL_X=v NCCL_Y=w": run on a fresh
				   communicator made with these set; "" none */
	char transport[16];     /* the path the test is for (transport.h):
				   "nvlink", "pcie", "shm", "tcp", "ib"; ""
				   any */
	char iface[32];         /* the network interface its processes
				   use; "" the job's */
	char process_env[512];  /* "NAME=v ...": set in its worker
				   processes (worker.h), after what the
				   transport sets; "" none */
	char scope[32];         /* "world"; "split:K": the ranks in blocks of
				   K consecutive ranks; "node": the ranks of
				   each host; "rail": local rank i of every
				   host.  Each group is measured at the same
				   time as the others */
	int group_size;         /* ranks per group: the job's, K, or
				   SD_GROUPS_FROM_HOSTS (node, rail) */
	struct sd_expectation expect;
	int retries;            /* measure a subject that failed an
				   expectation again, up to this often */
	int has_seed;           /* seed: given (else one derived from the
				   test, the same every run) */
	unsigned long long seed;/* of random and adaptive node pairs */
};

/* The most further matchings node-pairs:adaptive:K may ask for. */
#define SD_ADAPTIVE_MAX_MORE 64

/* Most retries a test may ask for. */
#define SD_MAX_RETRIES 10

/* Which fields of struct sd_plan_overrides' cfg are set. */
enum sd_plan_set {
	SD_SET_MIN_BYTES = 1 << 0,
	SD_SET_MAX_BYTES = 1 << 1,
	SD_SET_STEP_BYTES = 1 << 2,
	SD_SET_STEP_FACTOR = 1 << 3,
	SD_SET_ITERS = 1 << 4,
	SD_SET_WARMUP = 1 << 5,
	SD_SET_CHECK = 1 << 6,
	SD_SET_PER_ITER = 1 << 7,
	SD_SET_IN_PLACE = 1 << 8,
	SD_SET_COMBINE = 1 << 9,
	SD_SET_TIMEOUT = 1 << 10,
};

/* What a caller (the command line) sets on top of a plan.  Lists are
 * comma separated names, or "all"; NULL leaves the plan's value.  Numbers
 * count only when their bit is in `set`. */
struct sd_plan_overrides {
	const char *ops;        /* replaces the plan's tests (keeping defaults) */
	const char *dtypes, *redops, *roots, *algo, *scope;
	struct sd_test_settings cfg;
	unsigned set;           /* enum sd_plan_set bits: which of cfg count */
};

#define SD_PLAN_SWITCHES_LEN 4096
struct sd_plan {
	char name[64];
	struct sd_test_spec *tests;
	size_t ntests;
	int timeout_ms;         /* the longest of the tests': bounds start-up */
	char *text;             /* canonical YAML of the expanded plan */
	char hash[17];          /* hex FNV-1a 64 of text */
	char switches[SD_PLAN_SWITCHES_LEN]; /* switches: as "NAME=HOSTLIST
				   ..." (lib/switches.h), "" none */
};

/*
 * The sizes from min to max (inclusive): multiplied by factor when factor
 * > 1, else increased by step.  Returns the count written (at most cap);
 * with out == NULL only counts.
 */
size_t sd_size_series(uint64_t min, uint64_t max, double factor,
		      uint64_t step, uint64_t *out, size_t cap);

/* The built-in plan, as YAML text. */
extern const char sd_default_plan[];

/* The default timeout of one operation, when neither plan nor caller sets
 * one. */
#define SD_PLAN_TIMEOUT_MS 60000

/*
 * Build the plan: parse `file` (or the built-in plan when NULL), apply the
 * overrides `ov` (NULL: none), expand for `nranks` ranks.  Returns SD_OK,
 * or SD_ERR_INVALID with "FILE:LINE: what is wrong; what to do" in err (a
 * usage error), also when the file cannot be read.  Free with
 * sd_plan_free().
 */
int sd_plan_build(const char *file, const struct sd_plan_overrides *ov,
		  int nranks, struct sd_plan *out, char *err, size_t errlen);

void sd_plan_free(struct sd_plan *p);

/*
 * Where plan `arg` is: arg itself when it is a file (or names a path that
 * is not there: the error names it); else a shipped plan by name,
 * "acceptance" or "profiles/ddp" (".yaml" may be left out), looked for in
 * $SHAKEDOWN_PLAN_DIR (colon separated), the source tree's plans/ when
 * run from the build tree, and the installed plans (pkgdatadir/plans).
 * Returns arg or buf.
 */
const char *sd_plan_resolve(const char *arg, char *buf, size_t len);

/* The largest buffer of the plan's tests, in elements of its type (a
 * planted corruption's index must stay below it). */
uint64_t sd_plan_most_elements(const struct sd_plan *p);

struct sd_rank_info;

/*
 * The memory one rank needs for the plan's most demanding test on n ranks
 * (for its group, at most the job): host != 0, host memory with the
 * buffers in it (the Gloo backend: each op's measured factor, the margin
 * and the fixed part, sd_coll_host_mem_bytes in shakedown/coll.h); 0,
 * device memory (a send and a receive buffer).  *worst (when not NULL):
 * that test's index.
 */
uint64_t sd_plan_rank_mem_bytes(const struct sd_plan *p, int n, int host,
				size_t *worst);

/* Test `test`'s need in words, for messages: "test 3 (reduce_scatter up
 * to 1048576 bytes) needs ~20.4M of memory per rank (4 x its 1M
 * buffer, as measured with Gloo, +10% and 16M)". */
void sd_plan_mem_words(const struct sd_plan *p, size_t test, int n, int host,
		       char *buf, size_t len);

/*
 * Whether the plan's memory fits what the ranks' devices report free:
 * each rank needs sd_plan_rank_mem_bytes() (host memory for a rank
 * without a device of its own, pci_bus_id "": the Gloo backend; else
 * device memory); ranks on one host (host_of: each rank's host index)
 * without a device share its memory; a device that reports no free
 * memory is not judged.  0, or 1 with err naming the test, the sizes,
 * the host and the fix.
 */
int sd_plan_buffers_fit(const struct sd_plan *p,
			const struct sd_rank_info *ranks, const int *host_of,
			int n, char *err, size_t errlen);

#endif
