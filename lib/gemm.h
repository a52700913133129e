/*
 * gemm.h - the matrix-multiply workload of `shakedown gemm`: the sweep
 * of shapes, one timed and checked series per shape and type, the CPU
 * path, and the verdict on each device.
 *
 * A rank measures each entry of its sweep (sd_gemm_measure) through a
 * function with the backend's gemm slot's contract: the backend's own
 * (a GPU's, through cuBLAS) or the core's CPU path (sd_gemm_cpu: float32
 * through a BLAS, one thread per rank).  The product is checked against a
 * reference the core computes in double from the same pattern
 * (shakedown/pattern.h, sd_gemm_input): the whole product up to
 * SD_GEMM_FULL_CHECK_MACS multiply-adds, else a grid of rows and columns,
 * each element within a tolerance stated per type (sd_gemm_tolerance).
 * Rank 0 then judges every device (sd_gemm_judge): wrong elements, its
 * best TFLOPs against a fraction of its peak when one is known, and
 * against a fraction of the median of its peers (the devices of the same
 * name).  Pure logic and the CPU path: no printing, no exiting.
 */
#ifndef SD_GEMM_H
#define SD_GEMM_H

#include <stddef.h>
#include <stdint.h>

#include "fault.h"
#include "shakedown/backend.h"

/* A product of at most this many multiply-adds (512^3) and elements
 * (1024^2) is checked whole. */
#define SD_GEMM_FULL_CHECK_MACS (1ull << 27)
#define SD_GEMM_FULL_CHECK_ELEMENTS (1ull << 20)
/* A larger one: every element of this many rows by as many columns,
 * spread evenly from the first to the last. */
#define SD_GEMM_SAMPLE_SIDE 32
/* The largest side of a matrix the sweep takes (one side, any type). */
#define SD_GEMM_MAX_SIDE 65536
/* The most entries of one sweep (shapes per type). */
#define SD_GEMM_MAX_SHAPES 32

/* Names of the types: "fp32", "tf32", "bf16", "fp16", "fp8" (and the
 * aliases float32, bfloat16, float16, fp8_e4m3).  0, or -1 with *hint the
 * closest name (or NULL). */
int sd_gemm_type_from_name(const char *name, enum sd_gemm_type *out,
			   const char **hint);
const char *sd_gemm_type_name(enum sd_gemm_type t);

/* One entry of a sweep: "square" (n x n x n) or a layer of a transformer
 * of width C over T tokens: "qkv" (T x 3C x C), "fc" (T x 4C x C),
 * "proj" (T x C x 4C), as m x n x k. */
struct sd_gemm_shape {
	char name[16];
	uint64_t m, n, k;
};

/*
 * The sweep: each square size, then, when width > 0, the three layers of
 * a transformer of that width over `tokens` tokens.  Writes at most max
 * shapes into out; returns how many, or -1 when there would be more than
 * max or a side is 0 or above SD_GEMM_MAX_SIDE.
 */
int sd_gemm_shapes(const uint64_t *squares, int nsquares, uint64_t width,
		   uint64_t tokens, struct sd_gemm_shape *out, int max);

/*
 * The largest error a right product of type t with inner dimension k may
 * have, as a share of the element's scale sum_l |A[i][l] B[l][j]|: one
 * unit in the last place of its product type (2^-23 float32, 2^-7
 * bfloat16, 2^-10 float16: its final rounding, and one more where the
 * library sums split parts in that type) plus 8 sqrt(k) units of its
 * accumulation (2^-24 float32; 2^-14 for fp8, whose tensor cores keep
 * fewer bits).  Products of two inputs are exact in float32 for every
 * type but FP32, whose products round by 2^-24 too.  A float16 product
 * may also be off by 2^-25 absolute (its subnormals).
 */
double sd_gemm_tolerance(enum sd_gemm_type t, uint64_t k);

/* How many elements of an m x n x k product are checked. */
size_t sd_gemm_check_count(uint64_t m, uint64_t n, uint64_t k);

/* What a rank measures with: the backend's gemm slot, or sd_gemm_cpu. */
typedef int (*sd_gemm_fn)(void *ctx, const struct sd_gemm_args *a,
			  struct sd_gemm_result *r, char *err, size_t errlen);

/*
 * The core's CPU path, with the slot's contract (ctx unused): float32
 * only (any other type is SD_ERR_INVALID, "not on this device"), through
 * cblas_sgemm of the BLAS that sd_gemm_cpu_impl() names, in one thread;
 * without a BLAS, a blocked loop of its own.  Memory: three matrices of
 * float32, allocated per call.
 */
int sd_gemm_cpu(void *ctx, const struct sd_gemm_args *a,
		struct sd_gemm_result *r, char *err, size_t errlen);

/*
 * The sustained peak of this CPU core for MFU: `repeats` rounds of
 * `iters` fp32 sgemms of n x n x n through the CPU path, after a warm-up
 * call; *tflops the 90th percentile of the calls' rates (a high one, not
 * the luckiest), *median their median, *calls how many.  SD_OK, or a
 * status with err (no memory; a call failed).
 */
#define SD_GEMM_PEAK_N 512
#define SD_GEMM_PEAK_REPEATS 5
#define SD_GEMM_PEAK_ITERS 5
int sd_gemm_cpu_peak(int n, int repeats, int iters, double *tflops,
		     double *median, int *calls, char *err, size_t errlen);

/*
 * What the CPU path multiplies with, loading it on the first call
 * (lib/blas.h: which library, and why it is loaded, not linked):
 * "OpenBLAS 0.3.21 (core SkylakeX), 1 thread" or "builtin loop (none (no
 * BLAS: ...)), 1 thread".  Returns a static string.
 */
const char *sd_gemm_cpu_impl(void);

/* What a planted fault (SHAKEDOWN_FAULT, lib/fault.h) does to this rank's
 * sweep. */
struct sd_gemm_fault {
	long delay_us;       /* slow: before each timed call, inside it */
	int corrupt;         /* corrupt: once, in the first product */
	uint64_t index;      /* the checked element it moves (its order
				among the checked ones, row-major) */
};

/* An entry's outcome on one rank. */
enum sd_gemm_row_status {
	SD_GEMM_MEASURED = 0,
	SD_GEMM_NOT_HERE,    /* the type does not run on this device */
};

/* One entry of one rank's sweep: plain data, gathered as bytes. */
struct sd_gemm_row {
	int32_t rank;
	int32_t type;            /* enum sd_gemm_type */
	int32_t status;          /* enum sd_gemm_row_status */
	int32_t best;            /* set by sd_gemm_judge: this rank's best
				    of the type */
	char shape[16];
	uint64_t m, n, k;
	int32_t iters, warmup_iters;
	double time_us;          /* median of the timed calls */
	double time_us_min, time_us_max;
	double tflops;           /* 2 m n k / time_us */
	uint64_t checked;        /* elements compared with the reference */
	uint64_t wrong;          /* of those, beyond the tolerance */
	double max_error;        /* the largest |C - ref| / scale */
	double tolerance;        /* sd_gemm_tolerance(type, k) */
	uint64_t first_wrong_index; /* row-major; when wrong > 0 */
	double first_wrong_got, first_wrong_want;
	char impl[64];           /* what computed it */
	char note[160];          /* SD_GEMM_NOT_HERE: why */
};

/*
 * Measure one entry: call fn with a->iters timed calls (a's type, m, n,
 * k, seed, warm-up, timeout; the samples are chosen here), then take the
 * median time, the TFLOPs and the check.  fault (may be NULL) plants a
 * slow device or a wrong element.  Returns SD_OK with *row filled
 * (status SD_GEMM_NOT_HERE with its note when fn says the type does not
 * run here), or the status of fn or of memory, with err.
 */
int sd_gemm_measure(sd_gemm_fn fn, void *ctx, const struct sd_gemm_args *a,
		    const char *shape, struct sd_gemm_fault *fault,
		    struct sd_gemm_row *row, char *err, size_t errlen);

/*
 * The device peak of a type, in TFLOPs, for a device name as the backend
 * describes it, from the peak table of the training metrics
 * (sd_train_peak() in lib/train/metrics.h: one table for MFU and this
 * verdict); 0 when the table has no row or no figure for it (a CPU: then
 * only --peak-tflops gives one).
 */
double sd_gemm_peak_tflops(const char *device, enum sd_gemm_type t);

/* What the judge compares with. */
struct sd_gemm_expect {
	double peers;            /* a share of the peer median (0: no peer
				    verdict) */
	double peak_fraction;    /* a share of the peak (0: none) */
	double peak_tflops[SD_GEMM_TYPE_COUNT]; /* given peaks; 0: ask
						   sd_gemm_peak_tflops */
};

/* One device's verdict on one type. */
struct sd_gemm_verdict {
	int rank;
	enum sd_gemm_type type;
	const char *status;      /* "passed", "failed", "skipped" */
	int wrong_math;          /* failed on wrong elements */
	int best_row;            /* index into rows, or -1 */
	double best_tflops;      /* 0 when none */
	double peer_median_tflops; /* 0 when no peers */
	int peers;               /* devices of its name with this type */
	double peak_tflops;      /* 0 when unknown */
	char reason[320];
};

/*
 * Judge every rank's device on every type it has rows for.  rows: n
 * entries of any ranks; device[r] (nranks entries) names rank r's
 * device, peers being the ranks of the same name.  Marks each rank's
 * best row of a type (best = 1) and writes one verdict per rank and type
 * into a malloc'd *out (*nout entries; the caller frees), ordered by type
 * then rank.  A device fails on any wrong element, below
 * e->peak_fraction of its peak (given, else sd_gemm_peak_tflops), or
 * below e->peers of the median best of its peers (when it has at least
 * one); a type that did not run on it is skipped.  Returns SD_OK or
 * SD_ERR_NOMEM.
 */
int sd_gemm_judge(struct sd_gemm_row *rows, size_t n,
		  const char *const *device, int nranks,
		  const struct sd_gemm_expect *e, struct sd_gemm_verdict **out,
		  size_t *nout);

/*
 * The sweep of one rank, entry by entry: every type of `types` (1u <<
 * enum sd_gemm_type) over every shape, in that order.  The caller sets
 * the fields above the line and zeroes the rest (a designated
 * initialiser does), then calls sd_gemm_sweep_next() until it
 * returns 0, agreeing with the other ranks after each entry.  A type the
 * device does not have is asked once: its later shapes copy that answer.
 * A planted fault of this rank (lib/fault.h) acts: slow and corrupt in
 * the products (sd_gemm_fault), stall, exit and kill before the first.
 */
struct sd_gemm_sweep {
	const struct sd_gemm_shape *shapes;
	int nshapes;
	unsigned types;
	struct sd_gemm_args base; /* seed, warm-up, iters, timeout */
	sd_gemm_fn fn;
	void *ctx;
	struct sd_fault *fault;   /* the job's planted fault, or NULL */
	int rank;
	/* ---- the sweep's own */
	int t, i;                 /* the next entry */
	const struct sd_gemm_row *not_here;
	struct sd_gemm_fault planted;
	int started;
	int entry;                /* entries begun */
};

/* How many entries the sweep has: its types times its shapes. */
int sd_gemm_sweep_entries(const struct sd_gemm_sweep *s);

/* The next entry into *row (rank and shape set): 1 with *rc its status
 * (SD_OK, or fn's or memory's with err), 0 when the sweep is done. */
int sd_gemm_sweep_next(struct sd_gemm_sweep *s, struct sd_gemm_row *row,
		       int *rc, char *err, size_t errlen);

#endif
