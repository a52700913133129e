/*
 * gemm.c - the matrix-multiply workload of `shakedown gemm`: shapes, the
 * timed and checked series, the CPU path through a BLAS, the verdict
 * (see gemm.h).
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "shakedown/pattern.h"
#include "blas.h"
#include "gemm.h"
#include "train/metrics.h"
#include "names.h"
#include "util.h"
#include "verdict.h"

static const struct sd_name_row type_names[] = {
	{ "fp32", SD_GEMM_FP32 }, { "tf32", SD_GEMM_TF32 },
	{ "bf16", SD_GEMM_BF16 }, { "fp16", SD_GEMM_FP16 },
	{ "fp8", SD_GEMM_FP8 },
	{ "float32", SD_GEMM_FP32 }, { "float", SD_GEMM_FP32 },
	{ "bfloat16", SD_GEMM_BF16 }, { "float16", SD_GEMM_FP16 },
	{ "half", SD_GEMM_FP16 }, { "fp8_e4m3", SD_GEMM_FP8 },
	{ NULL, 0 }
};

int sd_gemm_type_from_name(const char *name, enum sd_gemm_type *out,
			   const char **hint)
{
	int v;
	if (sd_name_lookup(type_names, name, &v, hint))
		return -1;
	*out = (enum sd_gemm_type)v;
	return 0;
}

const char *sd_gemm_type_name(enum sd_gemm_type t)
{
	return sd_name_of(type_names, (int)t);
}

int sd_gemm_shapes(const uint64_t *squares, int nsquares, uint64_t width,
		   uint64_t tokens, struct sd_gemm_shape *out, int max)
{
	int n = 0;
	for (int i = 0; i < nsquares; i++) {
		uint64_t s = squares[i];
		if (n == max || s == 0 || s > SD_GEMM_MAX_SIDE)
			return -1;
		out[n] = (struct sd_gemm_shape){ "square", s, s, s };
		n++;
	}
	if (!width)
		return n;
	/* the layers of a GPT-2 block: the attention's q, k and v in one
	 * matrix, the MLP's up and down projections */
	const struct { const char *name; uint64_t n, k; } layer[] = {
		{ "qkv", 3 * width, width },
		{ "fc", 4 * width, width },
		{ "proj", width, 4 * width },
	};
	for (size_t i = 0; i < sizeof(layer) / sizeof(layer[0]); i++) {
		if (n == max || tokens == 0 || tokens > SD_GEMM_MAX_SIDE ||
		    layer[i].n > SD_GEMM_MAX_SIDE ||
		    layer[i].k > SD_GEMM_MAX_SIDE)
			return -1;
		out[n].m = tokens;
		out[n].n = layer[i].n;
		out[n].k = layer[i].k;
		sd_strlcpy(out[n].name, layer[i].name, sizeof(out[n].name));
		n++;
	}
	return n;
}

double sd_gemm_tolerance(enum sd_gemm_type t, uint64_t k)
{
	double out_ulp, acc_unit = ldexp(1.0, -24);
	switch (sd_gemm_out_dtype(t)) {
	case SD_BFLOAT16: out_ulp = ldexp(1.0, -7); break;
	case SD_FLOAT16: out_ulp = ldexp(1.0, -10); break;
	default: out_ulp = ldexp(1.0, -23); break;
	}
	if (t == SD_GEMM_FP8)
		acc_unit = ldexp(1.0, -14);
	return out_ulp + 8.0 * sqrt((double)(k ? k : 1)) * acc_unit;
}

/* ------------------------------------------------------- the CPU path */

static char builtin_impl[200];
static pthread_once_t builtin_once = PTHREAD_ONCE_INIT;

static void make_builtin_impl(void)
{
	snprintf(builtin_impl, sizeof(builtin_impl),
		 "builtin loop (%s), 1 thread", sd_blas()->why);
}

int sd_gemm_cpu_peak(int n, int repeats, int iters, double *tflops,
		     double *median, int *calls, char *err, size_t errlen)
{
	int total = repeats * iters;
	*tflops = *median = 0;
	*calls = 0;
	if (n < 1 || repeats < 1 || iters < 1) {
		snprintf(err, errlen, "a peak needs a size, repeats and calls");
		return SD_ERR_INVALID;
	}
	/* each call's time, then in place its rate */
	double *v = malloc((size_t)total * sizeof(double));
	int rc = v ? SD_OK : SD_ERR_NOMEM;
	if (rc)
		snprintf(err, errlen, "out of memory");
	for (int k = 0; !rc && k < repeats; k++) {
		struct sd_gemm_args a = { .type = SD_GEMM_FP32, .m = (uint64_t)n,
					  .n = (uint64_t)n, .k = (uint64_t)n,
					  .seed = 1, .warmup_iters = k ? 0 : 1,
					  .iters = iters, .timeout_ms = 30000 };
		struct sd_gemm_result r = { .time_us = v + k * iters };
		rc = sd_gemm_cpu(NULL, &a, &r, err, errlen);
	}
	if (!rc) {
		for (int i = 0; i < total; i++)
			v[i] = v[i] > 0 ? 2.0 * n * n * (double)n /
						  (v[i] * 1e-6) / 1e12
					: 0;
		*median = sd_median(v, total); /* sorts v */
		*tflops = v[(int)(0.9 * (total - 1) + 0.5)];
		*calls = total;
	}
	free(v);
	return rc;
}

const char *sd_gemm_cpu_impl(void)
{
	const struct sd_blas *b = sd_blas();
	if (b->sgemm)
		return b->impl;
	pthread_once(&builtin_once, make_builtin_impl);
	return builtin_impl;
}

/* C = A B, row-major, without a BLAS: blocked so that a block of B stays
 * in cache while the rows of A pass. */
static void builtin_sgemm(uint64_t m, uint64_t n, uint64_t k, const float *a,
			  const float *b, float *c)
{
	enum { BK = 128, BN = 512 };
	memset(c, 0, (size_t)(m * n) * sizeof(float));
	for (uint64_t l0 = 0; l0 < k; l0 += BK) {
		uint64_t l1 = l0 + BK < k ? l0 + BK : k;
		for (uint64_t j0 = 0; j0 < n; j0 += BN) {
			uint64_t j1 = j0 + BN < n ? j0 + BN : n;
			for (uint64_t i = 0; i < m; i++) {
				float *ci = c + i * n;
				for (uint64_t l = l0; l < l1; l++) {
					float ail = a[i * k + l];
					const float *bl = b + l * n;
					for (uint64_t j = j0; j < j1; j++)
						ci[j] += ail * bl[j];
				}
			}
		}
	}
}

static double mono_us(void)
{
	return sd_now() * 1e6;
}

static void wait_us(long us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

int sd_gemm_cpu(void *ctx, const struct sd_gemm_args *a,
		struct sd_gemm_result *r, char *err, size_t errlen)
{
	(void)ctx;
	const struct sd_blas *bl = sd_blas(); /* loaded on the first call */
	if (a->type != SD_GEMM_FP32) {
		snprintf(err, errlen, "the CPU path multiplies fp32 only; %s "
			 "needs a GPU: --backend nccl",
			 sd_gemm_type_name(a->type));
		return SD_ERR_INVALID;
	}
	if (a->m > SD_GEMM_MAX_SIDE || a->n > SD_GEMM_MAX_SIDE ||
	    a->k > SD_GEMM_MAX_SIDE || !a->m || !a->n || !a->k) {
		snprintf(err, errlen, "gemm %llux%llux%llu: each side must be "
			 "1 to %d", (unsigned long long)a->m,
			 (unsigned long long)a->n, (unsigned long long)a->k,
			 SD_GEMM_MAX_SIDE);
		return SD_ERR_INVALID;
	}
	size_t na = (size_t)(a->m * a->k), nb = (size_t)(a->k * a->n),
	       nc = (size_t)(a->m * a->n);
	float *A = malloc(na * sizeof(float)), *B = malloc(nb * sizeof(float));
	float *C = malloc(nc * sizeof(float));
	int rc = SD_OK;
	if (!A || !B || !C) {
		snprintf(err, errlen, "gemm %llux%llux%llu: cannot allocate "
			 "%.1f MiB of host memory for its matrices; use smaller "
			 "--sizes", (unsigned long long)a->m,
			 (unsigned long long)a->n, (unsigned long long)a->k,
			 (double)(na + nb + nc) * 4 / 1048576.0);
		rc = SD_ERR_NOMEM;
		goto out;
	}
	for (size_t i = 0; i < na; i++)
		A[i] = (float)sd_gemm_input(a->seed, 0, i, a->type);
	for (size_t i = 0; i < nb; i++)
		B[i] = (float)sd_gemm_input(a->seed, 1, i, a->type);
	double deadline = mono_us() + (a->timeout_ms > 0 ? a->timeout_ms
							  : 600000) * 1e3;
	for (int it = 0; it < a->warmup_iters + a->iters; it++) {
		int timed = it >= a->warmup_iters;
		double t0 = mono_us();
		if (timed && a->delay_us > 0)
			wait_us(a->delay_us);
		if (bl->sgemm)
			bl->sgemm(SD_CBLAS_ROW_MAJOR, SD_CBLAS_NO_TRANS,
				  SD_CBLAS_NO_TRANS, (int)a->m, (int)a->n,
				  (int)a->k, 1.0f, A, (int)a->k, B, (int)a->n,
				  0.0f, C, (int)a->n);
		else
			builtin_sgemm(a->m, a->n, a->k, A, B, C);
		double t1 = mono_us();
		if (timed)
			r->time_us[it - a->warmup_iters] = t1 - t0;
		if (t1 > deadline && it + 1 < a->warmup_iters + a->iters) {
			snprintf(err, errlen, "gemm %llux%llux%llu: %d calls "
				 "took more than the timeout (%.1f s); use "
				 "smaller --sizes, fewer -n, or a longer "
				 "--timeout", (unsigned long long)a->m,
				 (unsigned long long)a->n,
				 (unsigned long long)a->k, it + 1,
				 a->timeout_ms / 1e3);
			rc = SD_ERR_TIMEOUT;
			goto out;
		}
	}
	for (size_t s = 0; s < a->nsample; s++)
		r->sample_value[s] = a->sample_index[s] < nc
					     ? C[a->sample_index[s]] : NAN;
	snprintf(r->impl, sizeof(r->impl), "%.63s",
		 bl->sgemm ? "cblas_sgemm" : "builtin");
out:
	free(A);
	free(B);
	free(C);
	return rc;
}

/* ------------------------------------------------ one checked series */

/* Whether a product is checked whole. */
static int check_whole(uint64_t m, uint64_t n, uint64_t k)
{
	return (double)m * (double)n * (double)k <=
		       (double)SD_GEMM_FULL_CHECK_MACS &&
	       (double)m * (double)n <= (double)SD_GEMM_FULL_CHECK_ELEMENTS;
}

size_t sd_gemm_check_count(uint64_t m, uint64_t n, uint64_t k)
{
	if (check_whole(m, n, k))
		return (size_t)(m * n);
	return (size_t)((m < SD_GEMM_SAMPLE_SIDE ? m : SD_GEMM_SAMPLE_SIDE) *
			(n < SD_GEMM_SAMPLE_SIDE ? n : SD_GEMM_SAMPLE_SIDE));
}

/* The elements to check: all of them for a small product, else an even
 * grid of rows and columns (the first and last of each included). */
static uint64_t *choose_samples(uint64_t m, uint64_t n, uint64_t k,
				size_t *count)
{
	int whole = check_whole(m, n, k);
	uint64_t rows = whole || m < SD_GEMM_SAMPLE_SIDE ? m
							 : SD_GEMM_SAMPLE_SIDE;
	uint64_t cols = whole || n < SD_GEMM_SAMPLE_SIDE ? n
							 : SD_GEMM_SAMPLE_SIDE;
	uint64_t *idx = malloc((size_t)(rows * cols) * sizeof(*idx));
	if (!idx)
		return NULL;
	size_t c = 0;
	for (uint64_t t = 0; t < rows; t++) {
		uint64_t i = rows == m ? t : rows > 1 ? t * (m - 1) / (rows - 1)
						       : 0;
		for (uint64_t u = 0; u < cols; u++) {
			uint64_t j = cols == n ? u : cols > 1
						 ? u * (n - 1) / (cols - 1)
						 : 0;
			idx[c++] = i * n + j;
		}
	}
	*count = c;
	return idx;
}

/*
 * Compare the sampled elements with the reference in double: rows of A
 * and columns of B are computed once from the pattern, then each
 * element's sum and scale.  Fills the check fields of row.
 */
static int check_samples(const struct sd_gemm_args *a, const uint64_t *idx,
			 const double *got, size_t count,
			 struct sd_gemm_row *row)
{
	uint64_t m = a->m, n = a->n, k = a->k;
	/* which rows and columns the samples use, in order */
	uint64_t *ri = malloc((size_t)m * sizeof(*ri));
	uint64_t *ci = malloc((size_t)n * sizeof(*ci));
	size_t nr = 0, nc = 0;
	double *arow = NULL, *bcol = NULL;
	int rc = SD_ERR_NOMEM;
	if (!ri || !ci)
		goto out;
	for (uint64_t i = 0; i < m; i++)
		ri[i] = UINT64_MAX;
	for (uint64_t j = 0; j < n; j++)
		ci[j] = UINT64_MAX;
	for (size_t s = 0; s < count; s++) {
		uint64_t i = idx[s] / n, j = idx[s] % n;
		if (ri[i] == UINT64_MAX)
			ri[i] = nr++;
		if (ci[j] == UINT64_MAX)
			ci[j] = nc++;
	}
	arow = malloc((size_t)(nr * k) * sizeof(double));
	bcol = malloc((size_t)(nc * k) * sizeof(double));
	if (!arow || !bcol)
		goto out;
	for (uint64_t i = 0; i < m; i++)
		if (ri[i] != UINT64_MAX)
			for (uint64_t l = 0; l < k; l++)
				arow[ri[i] * k + l] = sd_gemm_input(
					a->seed, 0, i * k + l, a->type);
	for (uint64_t j = 0; j < n; j++)
		if (ci[j] != UINT64_MAX)
			for (uint64_t l = 0; l < k; l++)
				bcol[ci[j] * k + l] = sd_gemm_input(
					a->seed, 1, l * n + j, a->type);
	row->tolerance = sd_gemm_tolerance(a->type, k);
	/* float16's subnormals: an absolute quantum more */
	double abs_slack = a->type == SD_GEMM_FP16 ? ldexp(1.0, -25) : 0.0;
	row->checked = count;
	row->wrong = 0;
	row->max_error = 0;
	for (size_t s = 0; s < count; s++) {
		const double *x = arow + ri[idx[s] / n] * k;
		const double *y = bcol + ci[idx[s] % n] * k;
		double sum = 0, scale = 0;
		for (uint64_t l = 0; l < k; l++) {
			double p = x[l] * y[l];
			sum += p;
			scale += fabs(p);
		}
		double diff = fabs(got[s] - sum);
		double e = scale > 0 ? diff / scale : diff > 0 ? INFINITY : 0;
		/* a NaN is never right */
		int bad = !(diff <= row->tolerance * scale + abs_slack);
		if (!(e <= row->max_error))
			row->max_error = e;
		if (bad && row->wrong++ == 0) {
			row->first_wrong_index = idx[s];
			row->first_wrong_got = got[s];
			row->first_wrong_want = sum;
		}
	}
	rc = SD_OK;
out:
	free(ri);
	free(ci);
	free(arow);
	free(bcol);
	return rc;
}

int sd_gemm_measure(sd_gemm_fn fn, void *ctx, const struct sd_gemm_args *a,
		    const char *shape, struct sd_gemm_fault *fault,
		    struct sd_gemm_row *row, char *err, size_t errlen)
{
	struct sd_gemm_args args = *a;
	double *times = NULL, *got = NULL;
	uint64_t *idx = NULL;
	size_t count = 0;
	int rc = SD_ERR_NOMEM;

	memset(row, 0, sizeof(*row));
	row->type = (int32_t)a->type;
	row->m = a->m;
	row->n = a->n;
	row->k = a->k;
	row->iters = a->iters;
	row->warmup_iters = a->warmup_iters;
	sd_strlcpy(row->shape, shape, sizeof(row->shape));
	if (a->iters < 1 || a->warmup_iters < 0) {
		snprintf(err, errlen, "gemm: at least one timed call");
		return SD_ERR_INVALID;
	}
	times = calloc((size_t)a->iters, sizeof(double));
	idx = choose_samples(a->m, a->n, a->k, &count);
	got = idx ? calloc(count ? count : 1, sizeof(double)) : NULL;
	if (!times || !idx || !got) {
		snprintf(err, errlen, "gemm: out of memory for the check of "
			 "%llux%llu", (unsigned long long)a->m,
			 (unsigned long long)a->n);
		goto out;
	}
	args.nsample = count;
	args.sample_index = idx;
	args.delay_us = fault ? fault->delay_us : 0;
	struct sd_gemm_result res = { .time_us = times, .sample_value = got };
	char ferr[512] = "";
	rc = fn(ctx, &args, &res, ferr, sizeof(ferr));
	if (rc == SD_ERR_INVALID) {
		row->status = SD_GEMM_NOT_HERE;
		snprintf(row->note, sizeof(row->note), "%s",
			 ferr[0] ? ferr : "not on this device");
		rc = SD_OK;
		goto out;
	}
	if (rc) {
		snprintf(err, errlen, "%s", ferr[0] ? ferr : "gemm failed");
		goto out;
	}
	sd_strlcpy(row->impl, res.impl, sizeof(row->impl));
	/* a planted wrong element: the first product's, off by k (what no
	 * element of inputs in [-1, 1) can be) */
	if (fault && fault->corrupt && fault->index < count) {
		got[fault->index] += (double)a->k;
		fault->corrupt = 0;
	}
	row->time_us = sd_median(times, (int)a->iters); /* sorts them */
	row->time_us_min = times[0];
	row->time_us_max = times[a->iters - 1];
	double flop = 2.0 * (double)a->m * (double)a->n * (double)a->k;
	row->tflops = row->time_us > 0 ? flop / (row->time_us * 1e-6) / 1e12
				       : 0;
	rc = check_samples(a, idx, got, count, row);
	if (rc)
		snprintf(err, errlen, "gemm: out of memory for the reference of "
			 "%llux%llux%llu", (unsigned long long)a->m,
			 (unsigned long long)a->n, (unsigned long long)a->k);
out:
	free(times);
	free(idx);
	free(got);
	return rc;
}

/* ------------------------------------------------------------ verdict */

double sd_gemm_peak_tflops(const char *device, enum sd_gemm_type t)
{
	/* the one table that serves MFU too (lib/train/metrics.c) */
	static const enum sd_train_precision prec[SD_GEMM_TYPE_COUNT] = {
		[SD_GEMM_FP32] = SD_TRAIN_FP32, [SD_GEMM_TF32] = SD_TRAIN_TF32,
		[SD_GEMM_BF16] = SD_TRAIN_BF16, [SD_GEMM_FP16] = SD_TRAIN_FP16,
		[SD_GEMM_FP8] = SD_TRAIN_FP8,
	};
	struct sd_train_peak pk;
	char err[200];
	if (!device || (unsigned)t >= SD_GEMM_TYPE_COUNT ||
	    sd_train_peak(device, prec[t], NULL, &pk, err, sizeof(err)) !=
		    SD_OK)
		return 0;
	return pk.tflops > 0 ? pk.tflops : 0;
}

int sd_gemm_judge(struct sd_gemm_row *rows, size_t n,
		  const char *const *device, int nranks,
		  const struct sd_gemm_expect *e, struct sd_gemm_verdict **out,
		  size_t *nout)
{
	/* the best row of each rank and type, and what every rank had */
	size_t cells = (size_t)nranks * SD_GEMM_TYPE_COUNT;
	int *best = malloc(cells * sizeof(int));
	int *seen = calloc(cells, sizeof(int));
	double *vals = malloc(((size_t)nranks + 1) * sizeof(double));
	struct sd_gemm_verdict *v = calloc(cells ? cells : 1, sizeof(*v));
	uint64_t *wrong = calloc(cells, sizeof(uint64_t));
	size_t nv = 0;
	*out = NULL;
	*nout = 0;
	if (!best || !seen || !vals || !v || !wrong) {
		free(best);
		free(seen);
		free(vals);
		free(v);
		free(wrong);
		return SD_ERR_NOMEM;
	}
	for (size_t c = 0; c < cells; c++)
		best[c] = -1;
	for (size_t i = 0; i < n; i++) {
		struct sd_gemm_row *r = &rows[i];
		r->best = 0;
		if (r->rank < 0 || r->rank >= nranks || r->type < 0 ||
		    r->type >= SD_GEMM_TYPE_COUNT)
			continue;
		size_t c = (size_t)r->type * (size_t)nranks + (size_t)r->rank;
		seen[c] = 1;
		if (r->status != SD_GEMM_MEASURED)
			continue;
		wrong[c] += r->wrong;
		if (best[c] < 0 || r->tflops > rows[best[c]].tflops)
			best[c] = (int)i;
	}
	for (size_t c = 0; c < cells; c++)
		if (best[c] >= 0)
			rows[best[c]].best = 1;

	for (int t = 0; t < SD_GEMM_TYPE_COUNT; t++) {
		for (int q = 0; q < nranks; q++) {
			size_t c = (size_t)t * (size_t)nranks + (size_t)q;
			if (!seen[c])
				continue;
			struct sd_gemm_verdict *x = &v[nv++];
			x->rank = q;
			x->type = (enum sd_gemm_type)t;
			x->best_row = best[c];
			const char *tn = sd_gemm_type_name(x->type);
			if (best[c] < 0) {
				x->status = "skipped";
				const char *why = "not on this device";
				for (size_t i = 0; i < n; i++)
					if (rows[i].rank == q &&
					    rows[i].type == t &&
					    rows[i].note[0]) {
						why = rows[i].note;
						break;
					}
				snprintf(x->reason, sizeof(x->reason),
					 "%s: not on this device: %s", tn, why);
				continue;
			}
			const struct sd_gemm_row *b = &rows[best[c]];
			x->best_tflops = b->tflops;
			/* the peers: ranks whose device has the same name */
			int np = 0;
			for (int p = 0; p < nranks; p++) {
				size_t pc = (size_t)t * (size_t)nranks +
					    (size_t)p;
				if (best[pc] >= 0 && device[p] && device[q] &&
				    strcmp(device[p], device[q]) == 0)
					vals[np++] = rows[best[pc]].tflops;
			}
			x->peers = np;
			if (np > 1)
				x->peer_median_tflops = sd_median(vals, np);
			x->peak_tflops = e->peak_tflops[t] > 0
						 ? e->peak_tflops[t]
						 : sd_gemm_peak_tflops(device[q],
								       x->type);
			char shape[96];
			snprintf(shape, sizeof(shape), "%s %llux%llux%llu",
				 b->shape, (unsigned long long)b->m,
				 (unsigned long long)b->n,
				 (unsigned long long)b->k);
			x->status = "passed";
			if (wrong[c]) {
				const struct sd_gemm_row *w = NULL;
				for (size_t i = 0; i < n && !w; i++)
					if (rows[i].rank == q &&
					    rows[i].type == t && rows[i].wrong)
						w = &rows[i];
				x->status = "failed";
				x->wrong_math = 1;
				snprintf(x->reason, sizeof(x->reason),
					 "%s: wrong math: %llu element%s beyond "
					 "the tolerance; first in %s %llux%llux"
					 "%llu at row %llu, column %llu: got %.9g, "
					 "expected %.9g (tolerance %.3g of its "
					 "scale)", tn,
					 (unsigned long long)wrong[c],
					 wrong[c] == 1 ? "" : "s", w->shape,
					 (unsigned long long)w->m,
					 (unsigned long long)w->n,
					 (unsigned long long)w->k,
					 (unsigned long long)(w->first_wrong_index /
							      w->n),
					 (unsigned long long)(w->first_wrong_index %
							      w->n),
					 w->first_wrong_got, w->first_wrong_want,
					 w->tolerance);
			} else if (e->peak_fraction > 0 && x->peak_tflops > 0 &&
				   b->tflops < e->peak_fraction * x->peak_tflops) {
				x->status = "failed";
				snprintf(x->reason, sizeof(x->reason),
					 "%s: best %.3f TFLOPs (%s) is below %.2f "
					 "of its peak %.3f TFLOPs (%.3f)", tn,
					 b->tflops, shape, e->peak_fraction,
					 x->peak_tflops,
					 e->peak_fraction * x->peak_tflops);
			} else if (e->peers > 0 && np > 1 &&
				   b->tflops < e->peers * x->peer_median_tflops) {
				x->status = "failed";
				snprintf(x->reason, sizeof(x->reason),
					 "%s: best %.3f TFLOPs (%s) is below %.2f "
					 "of the peer median %.3f TFLOPs (%.3f; %d "
					 "devices of its name)", tn, b->tflops,
					 shape, e->peers, x->peer_median_tflops,
					 e->peers * x->peer_median_tflops, np);
			} else {
				snprintf(x->reason, sizeof(x->reason),
					 "%s: best %.3f TFLOPs (%s)", tn,
					 b->tflops, shape);
			}
		}
	}
	free(best);
	free(seen);
	free(vals);
	free(wrong);
	*out = v;
	*nout = nv;
	return SD_OK;
}

int sd_gemm_sweep_entries(const struct sd_gemm_sweep *s)
{
	int n = 0;
	for (int t = 0; t < SD_GEMM_TYPE_COUNT; t++)
		n += (s->types & (1u << t)) ? s->nshapes : 0;
	return n;
}

int sd_gemm_sweep_next(struct sd_gemm_sweep *s, struct sd_gemm_row *row,
		       int *rc, char *err, size_t errlen)
{
	struct sd_fault *f = s->fault;
	int mine = f && f->kind != SD_FAULT_NONE && f->rank == s->rank &&
		   !f->at_start;
	if (!s->started) {
		s->started = 1;
		if (mine && f->kind == SD_FAULT_SLOW)
			s->planted.delay_us = f->delay_us;
		if (mine && f->kind == SD_FAULT_CORRUPT) {
			s->planted.corrupt = 1;
			s->planted.index = f->index;
		}
	}
	/* the next type with a shape left */
	for (; s->t < SD_GEMM_TYPE_COUNT; s->t++, s->i = 0, s->not_here = NULL)
		if ((s->types & (1u << s->t)) && s->i < s->nshapes)
			break;
	if (s->t >= SD_GEMM_TYPE_COUNT)
		return 0;
	const struct sd_gemm_shape *sh = &s->shapes[s->i++];
	/* a planted stall, exit or kill: before the first product, or
	 * before entry iter + 1 (iter=) */
	if (mine && !f->fired &&
	    (f->kind == SD_FAULT_STALL || f->kind == SD_FAULT_EXIT ||
	     f->kind == SD_FAULT_KILL) &&
	    (!f->iter_set || s->entry == f->iter))
		sd_fault_act(f);
	s->entry++;
	struct sd_gemm_args a = s->base;
	a.type = (enum sd_gemm_type)s->t;
	a.m = sh->m;
	a.n = sh->n;
	a.k = sh->k;
	*rc = SD_OK;
	if (s->not_here) {
		/* once said, not asked again (the ranks still agree on
		 * every entry) */
		*row = *s->not_here;
		sd_strlcpy(row->shape, sh->name, sizeof(row->shape));
		row->m = a.m;
		row->n = a.n;
		row->k = a.k;
	} else {
		*rc = sd_gemm_measure(s->fn, s->ctx, &a, sh->name, &s->planted,
				      row, err, errlen);
		if (!*rc && row->status == SD_GEMM_NOT_HERE)
			s->not_here = row;
	}
	row->rank = s->rank;
	return 1;
}
