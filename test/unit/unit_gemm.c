/*
 * unit_gemm.c - the matrix-multiply workload's pure parts (lib/gemm.h,
 * the inputs of shakedown/pattern.h): type names, the sweep's shapes, the
 * tolerance, the inputs of every type, the check of a product (right,
 * summed in another order, off by one element, a type not on the
 * device), the CPU path without a BLAS, and the verdict, from tables.
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "shakedown/pattern.h"
#include "fault.h"
#include "gemm.h"
#include "train/metrics.h"
#include "tap.h"

/* A product computed here: row-major float32, l summed backwards (an
 * order no BLAS uses), with `bump` added to one element. */
struct fake {
	int invalid;             /* answer "not on this device" */
	int reverse;
	uint64_t bump_at;
	double bump;
};

static int fake_gemm(void *ctx, const struct sd_gemm_args *a,
		     struct sd_gemm_result *r, char *err, size_t errlen)
{
	struct fake *f = ctx;
	if (f->invalid) {
		snprintf(err, errlen, "fp8 needs compute capability 8.9");
		return SD_ERR_INVALID;
	}
	for (int i = 0; i < a->iters; i++)
		r->time_us[i] = 100.0 + i; /* median 100 + iters/2 */
	for (size_t s = 0; s < a->nsample; s++) {
		uint64_t i = a->sample_index[s] / a->n,
			 j = a->sample_index[s] % a->n;
		float sum = 0;
		for (uint64_t q = 0; q < a->k; q++) {
			uint64_t l = f->reverse ? a->k - 1 - q : q;
			sum += (float)sd_gemm_input(a->seed, 0, i * a->k + l,
						    a->type) *
			       (float)sd_gemm_input(a->seed, 1, l * a->n + j,
						    a->type);
		}
		/* the product type's rounding */
		double v = sd_round(sd_gemm_out_dtype(a->type), sum);
		r->sample_value[s] = v + (a->sample_index[s] == f->bump_at
						  ? f->bump : 0);
	}
	snprintf(r->impl, sizeof(r->impl), "fake");
	return SD_OK;
}

static void test_names(void)
{
	static const struct { const char *name; int type; } rows[] = {
		{ "fp32", SD_GEMM_FP32 }, { "float32", SD_GEMM_FP32 },
		{ "tf32", SD_GEMM_TF32 }, { "bf16", SD_GEMM_BF16 },
		{ "bfloat16", SD_GEMM_BF16 }, { "fp16", SD_GEMM_FP16 },
		{ "half", SD_GEMM_FP16 }, { "fp8", SD_GEMM_FP8 },
		{ "fp8_e4m3", SD_GEMM_FP8 }, { "int8", -1 }, { "bf61", -1 },
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		enum sd_gemm_type t;
		const char *hint = NULL;
		int rc = sd_gemm_type_from_name(rows[i].name, &t, &hint);
		if (rows[i].type < 0)
			ok(rc == -1, "type '%s' is refused", rows[i].name);
		else
			ok(rc == 0 && (int)t == rows[i].type &&
				   strcmp(sd_gemm_type_name(t),
					  sd_gemm_type_name(
						  (enum sd_gemm_type)rows[i].type)) == 0,
			   "type '%s' is %s", rows[i].name,
			   sd_gemm_type_name((enum sd_gemm_type)rows[i].type));
	}
	enum sd_gemm_type t;
	const char *hint = NULL;
	sd_gemm_type_from_name("bf61", &t, &hint);
	ok(hint && strcmp(hint, "bf16") == 0, "'bf61' hints at bf16");
}

static void test_shapes(void)
{
	struct sd_gemm_shape s[8];
	uint64_t sq[] = { 256, 512 };
	int n = sd_gemm_shapes(sq, 2, 768, 1024, s, 8);
	is_int(n, 5, "two squares and three layers");
	ok(strcmp(s[0].name, "square") == 0 && s[0].m == 256 && s[0].n == 256 &&
		   s[0].k == 256, "square 256x256x256");
	ok(strcmp(s[2].name, "qkv") == 0 && s[2].m == 1024 && s[2].n == 2304 &&
		   s[2].k == 768, "qkv: T x 3C x C");
	ok(strcmp(s[3].name, "fc") == 0 && s[3].n == 3072 && s[3].k == 768,
	   "fc: T x 4C x C");
	ok(strcmp(s[4].name, "proj") == 0 && s[4].n == 768 && s[4].k == 3072,
	   "proj: T x C x 4C");
	is_int(sd_gemm_shapes(sq, 2, 0, 1024, s, 8), 2, "width 0: squares only");
	is_int(sd_gemm_shapes(sq, 2, 768, 1024, s, 4), -1, "more than max: -1");
	uint64_t huge[] = { 1u << 20 };
	is_int(sd_gemm_shapes(huge, 1, 0, 0, s, 8), -1, "a side too large: -1");
	is_int(sd_gemm_shapes(sq, 2, 32768, 1024, s, 8), -1,
	       "4C too large: -1");
}

static void test_tolerance(void)
{
	static const struct { int type; uint64_t k; double want; } rows[] = {
		{ SD_GEMM_FP32, 1, 0x1p-23 + 8 * 0x1p-24 },
		{ SD_GEMM_FP32, 4096, 0x1p-23 + 8 * 64 * 0x1p-24 },
		{ SD_GEMM_TF32, 256, 0x1p-23 + 8 * 16 * 0x1p-24 },
		{ SD_GEMM_BF16, 1024, 0x1p-7 + 8 * 32 * 0x1p-24 },
		{ SD_GEMM_FP16, 1024, 0x1p-10 + 8 * 32 * 0x1p-24 },
		{ SD_GEMM_FP8, 4096, 0x1p-7 + 8 * 64 * 0x1p-14 },
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		is_dbl(sd_gemm_tolerance((enum sd_gemm_type)rows[i].type,
					 rows[i].k), rows[i].want,
		       rows[i].want * 1e-12, "tolerance of %s at k %llu",
		       sd_gemm_type_name((enum sd_gemm_type)rows[i].type),
		       (unsigned long long)rows[i].k);
}

/* Every input is in [-1, 1) and exactly a value of its type. */
static void test_inputs(void)
{
	for (int t = 0; t < SD_GEMM_TYPE_COUNT; t++) {
		int in_range = 1, exact = 1, varied = 0;
		double first = sd_gemm_input(7, 0, 0, (enum sd_gemm_type)t);
		for (uint64_t i = 0; i < 20000; i++) {
			double v = sd_gemm_input(7, (int)(i & 1), i,
						 (enum sd_gemm_type)t);
			in_range &= v >= -1.0 && v <= 1.0;
			varied |= v != first;
			if (t == SD_GEMM_TF32) {
				/* 11 significant bits */
				int e;
				double m = frexp(fabs(v), &e);
				exact &= ldexp(m, 11) == floor(ldexp(m, 11));
			} else if (t != SD_GEMM_FP32) {
				enum sd_dtype d = sd_gemm_in_dtype(
					(enum sd_gemm_type)t);
				exact &= sd_round(d, v) == v;
			} else {
				exact &= (double)(float)v == v;
			}
		}
		const char *tn = sd_gemm_type_name((enum sd_gemm_type)t);
		ok(in_range, "%s inputs are in [-1, 1]", tn);
		ok(exact, "%s inputs are exact in its format", tn);
		ok(varied, "%s inputs vary", tn);
	}
	ok(sd_gemm_input(1, 0, 5, SD_GEMM_FP32) !=
		   sd_gemm_input(2, 0, 5, SD_GEMM_FP32),
	   "the seed changes the inputs");
	ok(sd_gemm_input(1, 0, 5, SD_GEMM_FP32) !=
		   sd_gemm_input(1, 1, 5, SD_GEMM_FP32),
	   "A and B differ");
}

static void test_measure(void)
{
	static const struct {
		const char *what;
		int type;
		uint64_t m, n, k;
		struct fake f;
		uint64_t checked, wrong;
		int status;
	} rows[] = {
		{ "fp32 summed backwards: right", SD_GEMM_FP32, 64, 48, 96,
		  { 0, 1, 0, 0 }, 64 * 48, 0, SD_GEMM_MEASURED },
		{ "bf16 rounded product: right", SD_GEMM_BF16, 32, 32, 256,
		  { 0, 0, 0, 0 }, 32 * 32, 0, SD_GEMM_MEASURED },
		{ "fp16 rounded product: right", SD_GEMM_FP16, 32, 32, 256,
		  { 0, 0, 0, 0 }, 32 * 32, 0, SD_GEMM_MEASURED },
		{ "tf32: right", SD_GEMM_TF32, 16, 16, 512,
		  { 0, 0, 0, 0 }, 16 * 16, 0, SD_GEMM_MEASURED },
		{ "fp32 one element off by 1e-3: wrong", SD_GEMM_FP32, 64, 48,
		  96, { 0, 0, 7, 1e-3 }, 64 * 48, 1, SD_GEMM_MEASURED },
		{ "bf16 one element off by 1: wrong", SD_GEMM_BF16, 32, 32, 256,
		  { 0, 0, 31, 1.0 }, 32 * 32, 1, SD_GEMM_MEASURED },
		{ "a large product: a 32 x 32 grid", SD_GEMM_FP32, 2048, 1024,
		  128, { 0, 0, 0, 0 }, 32 * 32, 0, SD_GEMM_MEASURED },
		{ "not on this device", SD_GEMM_FP8, 64, 64, 64,
		  { 1, 0, 0, 0 }, 0, 0, SD_GEMM_NOT_HERE },
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct fake f = rows[i].f;
		struct sd_gemm_args a = { .type = (enum sd_gemm_type)rows[i].type,
					  .m = rows[i].m, .n = rows[i].n,
					  .k = rows[i].k, .seed = 3,
					  .warmup_iters = 0, .iters = 5 };
		struct sd_gemm_row row;
		char err[256] = "";
		int rc = sd_gemm_measure(fake_gemm, &f, &a, "square", NULL, &row,
					 err, sizeof(err));
		ok(rc == SD_OK && row.status == rows[i].status &&
			   row.checked == rows[i].checked &&
			   row.wrong == rows[i].wrong,
		   "%s: %llu checked, %llu wrong", rows[i].what,
		   (unsigned long long)row.checked,
		   (unsigned long long)row.wrong);
		if (rows[i].status == SD_GEMM_MEASURED)
			ok(row.time_us == 102.0 && row.time_us_min == 100.0 &&
				   row.time_us_max == 104.0 &&
				   fabs(row.tflops - 2.0 * a.m * a.n * a.k /
							      102e-6 / 1e12) <
					   1e-12,
			   "%s: median time and TFLOPs", rows[i].what);
		else
			ok(strstr(row.note, "8.9") != NULL,
			   "%s: the backend's reason is kept", rows[i].what);
	}
	is_int(sd_gemm_check_count(512, 512, 512), 512 * 512,
	       "512^3 is checked whole");
	is_int(sd_gemm_check_count(1024, 1024, 1024), 32 * 32,
	       "1024^3 is checked on a grid");
	is_int(sd_gemm_check_count(4096, 4096, 4), 32 * 32,
	       "more than 1024^2 elements: a grid");

	/* a planted wrong element, and a slow device, through the fault */
	struct fake f = { 0 };
	struct sd_gemm_args a = { .type = SD_GEMM_FP32, .m = 16, .n = 16,
				  .k = 16, .seed = 3, .iters = 3 };
	struct sd_gemm_fault fault = { .corrupt = 1, .index = 5 };
	struct sd_gemm_row row;
	char err[256];
	sd_gemm_measure(fake_gemm, &f, &a, "square", &fault, &row, err,
			sizeof(err));
	ok(row.wrong == 1 && row.first_wrong_index == 5 && !fault.corrupt,
	   "a planted corrupt element is caught, once");
	sd_gemm_measure(fake_gemm, &f, &a, "square", &fault, &row, err,
			sizeof(err));
	is_int(row.wrong, 0, "and the next product is right");
}

/* The CPU path without a BLAS (SHAKEDOWN_BLAS=none): right products. */
static void test_cpu(void)
{
	setenv("SHAKEDOWN_BLAS", "none", 1);
	ok(strstr(sd_gemm_cpu_impl(), "builtin") != NULL,
	   "SHAKEDOWN_BLAS=none: the builtin loop (%s)", sd_gemm_cpu_impl());
	static const uint64_t dims[][3] = { { 1, 1, 1 }, { 7, 5, 3 },
					    { 130, 70, 600 } };
	for (size_t i = 0; i < sizeof(dims) / sizeof(dims[0]); i++) {
		struct sd_gemm_args a = { .type = SD_GEMM_FP32, .m = dims[i][0],
					  .n = dims[i][1], .k = dims[i][2],
					  .seed = 11, .warmup_iters = 1,
					  .iters = 3, .timeout_ms = 60000 };
		struct sd_gemm_row row;
		char err[256] = "";
		int rc = sd_gemm_measure(sd_gemm_cpu, NULL, &a, "square", NULL,
					 &row, err, sizeof(err));
		ok(rc == SD_OK && row.wrong == 0 &&
			   row.checked == dims[i][0] * dims[i][1] &&
			   row.tflops > 0 && row.max_error < row.tolerance,
		   "CPU %llux%llux%llu: right (max error %.2g, tolerance %.2g)",
		   (unsigned long long)dims[i][0],
		   (unsigned long long)dims[i][1],
		   (unsigned long long)dims[i][2], row.max_error,
		   row.tolerance);
	}
	struct sd_gemm_args a = { .type = SD_GEMM_BF16, .m = 8, .n = 8, .k = 8,
				  .iters = 1 };
	struct sd_gemm_row row;
	char err[256] = "";
	int rc = sd_gemm_measure(sd_gemm_cpu, NULL, &a, "square", NULL, &row,
				 err, sizeof(err));
	ok(rc == SD_OK && row.status == SD_GEMM_NOT_HERE &&
		   strstr(row.note, "fp32 only"),
	   "CPU bf16: not on this device (%s)", row.note);
}

static struct sd_gemm_row mkrow(int rank, int type, double tflops,
				uint64_t wrong, int status)
{
	struct sd_gemm_row r;
	memset(&r, 0, sizeof(r));
	r.rank = rank;
	r.type = type;
	r.tflops = tflops;
	r.wrong = wrong;
	r.status = status;
	r.m = r.n = r.k = 1024;
	r.tolerance = 1e-5;
	snprintf(r.shape, sizeof(r.shape), "square");
	return r;
}

static void test_judge(void)
{
	/* ranks 0-3: GPUs "H"; rank 4: a GPU "A" alone */
	const char *dev[] = { "H", "H", "H", "H", "A" };
	struct sd_gemm_row rows[] = {
		mkrow(0, SD_GEMM_BF16, 700, 0, SD_GEMM_MEASURED),
		mkrow(0, SD_GEMM_BF16, 650, 0, SD_GEMM_MEASURED),
		mkrow(1, SD_GEMM_BF16, 690, 0, SD_GEMM_MEASURED),
		mkrow(2, SD_GEMM_BF16, 400, 0, SD_GEMM_MEASURED), /* slow */
		mkrow(3, SD_GEMM_BF16, 710, 2, SD_GEMM_MEASURED), /* wrong */
		mkrow(4, SD_GEMM_BF16, 300, 0, SD_GEMM_MEASURED), /* alone */
		mkrow(0, SD_GEMM_FP8, 0, 0, SD_GEMM_NOT_HERE),
	};
	struct sd_gemm_expect e = { .peers = 0.8, .peak_fraction = 0.5 };
	struct sd_gemm_verdict *v;
	size_t n;
	int rc = sd_gemm_judge(rows, sizeof(rows) / sizeof(rows[0]), dev, 5,
			       &e, &v, &n);
	is_int(rc, SD_OK, "judged");
	is_int(n, 6, "a verdict per rank and type that ran there");
	static const struct { int rank, type; const char *status; int wm;
			      const char *why; } want[] = {
		{ 0, SD_GEMM_BF16, "passed", 0, "best 700" },
		{ 1, SD_GEMM_BF16, "passed", 0, "best 690" },
		{ 2, SD_GEMM_BF16, "failed", 0, "below 0.80 of the peer median" },
		{ 3, SD_GEMM_BF16, "failed", 1, "wrong math: 2 elements" },
		{ 4, SD_GEMM_BF16, "passed", 0, "best 300" },
		{ 0, SD_GEMM_FP8, "skipped", 0, "not on this device" },
	};
	for (size_t i = 0; i < n && i < sizeof(want) / sizeof(want[0]); i++)
		ok(v[i].rank == want[i].rank && (int)v[i].type == want[i].type &&
			   strcmp(v[i].status, want[i].status) == 0 &&
			   v[i].wrong_math == want[i].wm &&
			   strstr(v[i].reason, want[i].why),
		   "rank %d %s: %s (%s)", want[i].rank,
		   sd_gemm_type_name((enum sd_gemm_type)want[i].type),
		   want[i].status, v[i].reason);
	ok(rows[0].best && !rows[1].best, "rank 0's best row is marked");
	is_dbl(v[0].peer_median_tflops, 695, 1e-9,
	       "the median of the four H devices");
	is_int(v[4].peers, 1, "the A device has no peers");
	free(v);

	/* a peak: given for bf16, 0.5 of it is the floor */
	e.peak_tflops[SD_GEMM_BF16] = 989;
	e.peers = 0;
	rc = sd_gemm_judge(rows, 6, dev, 5, &e, &v, &n);
	ok(rc == SD_OK && strcmp(v[2].status, "failed") == 0 &&
		   strstr(v[2].reason, "below 0.50 of its peak 989") &&
		   strcmp(v[4].status, "failed") == 0 &&
		   strcmp(v[0].status, "passed") == 0,
	   "below half the peak fails, above passes (%s)", v[2].reason);
	free(v);
	/* the peak table of the training metrics, one for both */
	const struct sd_train_peak_row *h200 =
		sd_train_peak_find("NVIDIA H200");
	ok(h200 && h200->tflops[SD_TRAIN_BF16] > 0,
	   "the metrics' table has the H200's bf16 peak");
	is_dbl(sd_gemm_peak_tflops("NVIDIA H200", SD_GEMM_BF16),
	       h200 ? h200->tflops[SD_TRAIN_BF16] : -1, 0,
	       "and the gemm verdict asks that table");
	is_dbl(sd_gemm_peak_tflops("NVIDIA H200", SD_GEMM_FP8),
	       h200 ? h200->tflops[SD_TRAIN_FP8] : -1, 0,
	       "for each type (fp8)");
	is_dbl(sd_gemm_peak_tflops("CPU Intel(R) Xeon(R) Platinum",
				   SD_GEMM_FP32), 0, 0,
	       "a CPU has no row: unknown unless --peak-tflops says it");
	is_dbl(sd_gemm_peak_tflops(NULL, SD_GEMM_FP32), 0, 0,
	       "nor has a device without a name");
}

/* fn answers "not on this device" for one type: counted here, asked once */
static int asked[SD_GEMM_TYPE_COUNT];

static int counting_gemm(void *ctx, const struct sd_gemm_args *a,
			 struct sd_gemm_result *r, char *err, size_t errlen)
{
	struct fake f = { .invalid = a->type == SD_GEMM_FP8 };
	(void)ctx;
	asked[a->type]++;
	return fake_gemm(&f, a, r, err, errlen);
}

/* The sweep entry by entry: every type of the mask over every shape, in
 * order; a type not here asked once; a planted corruption in the first
 * product of its rank only. */
static void test_sweep(void)
{
	struct sd_gemm_shape sh[3] = { { "square", 16, 16, 16 },
				       { "square", 32, 32, 32 },
				       { "qkv", 16, 48, 16 } };
	struct sd_fault f;
	char err[256];
	sd_fault_parse("rank=1,kind=corrupt,index=0", &f, err, sizeof(err));
	for (int rank = 0; rank < 2; rank++) {
		struct sd_gemm_sweep sw = {
			.shapes = sh, .nshapes = 3,
			.types = (1u << SD_GEMM_FP32) | (1u << SD_GEMM_FP8),
			.base = { .seed = 3, .warmup_iters = 0, .iters = 3,
				  .timeout_ms = 1000 },
			.fn = counting_gemm, .fault = &f, .rank = rank };
		struct sd_gemm_row rows[8];
		int n = 0, rc, bad = 0;
		memset(asked, 0, sizeof(asked));
		while (n < 8 && sd_gemm_sweep_next(&sw, &rows[n], &rc, err,
						   sizeof(err)))
			bad |= rc != SD_OK || rows[n++].rank != rank;
		is_int(n, 6, "rank %d: 2 types x 3 shapes, entry by entry",
		       rank);
		ok(!bad, "rank %d: every entry SD_OK, its rank set", rank);
		ok(rows[0].type == SD_GEMM_FP32 && rows[3].type == SD_GEMM_FP8 &&
			   strcmp(rows[2].shape, "qkv") == 0 &&
			   strcmp(rows[5].shape, "qkv") == 0 &&
			   rows[5].n == 48,
		   "rank %d: the types in order, each over the shapes in order",
		   rank);
		ok(asked[SD_GEMM_FP32] == 3 && asked[SD_GEMM_FP8] == 1 &&
			   rows[4].status == SD_GEMM_NOT_HERE &&
			   rows[5].status == SD_GEMM_NOT_HERE,
		   "rank %d: fp8 not here is asked once, its later shapes copy "
		   "the answer", rank);
		if (rank == 1)
			ok(rows[0].wrong >= 1 && rows[1].wrong == 0,
			   "rank 1: the planted corruption in the first product "
			   "only (%llu, %llu wrong)",
			   (unsigned long long)rows[0].wrong,
			   (unsigned long long)rows[1].wrong);
		else
			ok(rows[0].wrong == 0,
			   "rank 0: the fault planted on rank 1 is not here");
	}
}

int main(void)
{
	test_sweep();
	test_names();
	test_shapes();
	test_tolerance();
	test_inputs();
	test_measure();
	test_cpu();
	test_judge();
	return done_testing();
}
