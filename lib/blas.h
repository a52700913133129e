/*
 * blas.h - the CBLAS that the CPU paths multiply with (shakedown gemm's
 * sweep, the training workload's model), loaded with dlopen when first
 * asked for, never linked: a linked OpenBLAS starts a thread per core in
 * every process at load, `shakedown run` too, and reads its settings
 * (OPENBLAS_NUM_THREADS, OPENBLAS_CORETYPE) only then.
 *
 * Which library: $SHAKEDOWN_BLAS (a library name or path; "none" for no
 * BLAS), else the one configure found (SD_BLAS_SONAME), else
 * libopenblas.so.0, libblas.so.3.  Before loading, OPENBLAS_NUM_THREADS is
 * set to 1 (each rank is one process, and a fixed thread count keeps
 * results bit-reproducible) and OPENBLAS_CORETYPE, when unset, to the
 * kernels the CPU's instructions allow (SkylakeX with AVX-512, Haswell
 * with AVX2 and FMA): Debian's OpenBLAS 0.3.21 falls back to its slowest
 * kernels on CPU models it does not know (measured: 26 GFLOP/s a core
 * instead of 105-110 on a Xeon of model 207).
 */
#ifndef SD_BLAS_H
#define SD_BLAS_H

/* The CBLAS enums, as the ints the standard gives them. */
enum { SD_CBLAS_ROW_MAJOR = 101, SD_CBLAS_NO_TRANS = 111,
       SD_CBLAS_TRANS = 112 };

/* cblas_sgemm and cblas_sgemv, with their enums as ints. */
typedef void (*sd_sgemm_fn)(int order, int ta, int tb, int m, int n, int k,
			    float alpha, const float *a, int lda,
			    const float *b, int ldb, float beta, float *c,
			    int ldc);
typedef void (*sd_sgemv_fn)(int order, int trans, int m, int n, float alpha,
			    const float *a, int lda, const float *x, int incx,
			    float beta, float *y, int incy);

struct sd_blas {
	sd_sgemm_fn sgemm; /* NULL: no BLAS (impl says why) */
	sd_sgemv_fn sgemv; /* NULL when sgemm is */
	/* "OpenBLAS 0.3.21 (core SkylakeX, chosen by shakedown), 1 thread",
	 * or "none (no BLAS: ...; apt-get install libopenblas0)" */
	char impl[200];
	char why[140];     /* without a BLAS: why ("SHAKEDOWN_BLAS=none",
			      "no BLAS: ...; apt-get install ..."); "" */
};

/*
 * The BLAS, loaded on the first call (thread-safe; call it before other
 * threads use setenv or getenv, as it sets the two variables above).
 * Never NULL; the result is static and lives until the process ends.
 */
const struct sd_blas *sd_blas(void);

#endif
