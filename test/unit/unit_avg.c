/*
 * unit_avg.c - the avg the data pattern expects, against an exact model of
 * each backend's arithmetic, for n = 1..512 ranks and every data type:
 *   NCCL 2.28 (SD_AVG_NCCL): floats multiply each input by 1.0/n rounded
 *     to double, then float, then the type, round each product to the
 *     type (fp8: to half, then fp8), then sum; integers sum, then divide
 *     truncating, by a reciprocal and one correction;
 *   Gloo (SD_AVG_SUM_DIVIDE): sum, then one division in the type.
 * The model rounds with integers alone (a value is m x 2^e, m an integer),
 * apart from pattern.h's floating-point code, so that a wrong rounding
 * there cannot hide behind the same wrong rounding here.  It also checks
 * pattern.h's conversion to the narrow float types against the same
 * rounding, and that the rank counts of issue 13 (float32 n = 41 ...),
 * where NCCL's mean is not the exact one, are the ones it now expects.
 */
#include "config.h"

#include <stdint.h>
#include <string.h>

#include "names.h"
#include "shakedown/pattern.h"
#include "shakedown/pattern_host.h"
#include "tap.h"

__extension__ typedef unsigned __int128 u128;

/* A binary format: p significand bits (the hidden one included), normal
 * exponents emin..emax, the largest significand at emax (fp8 e4m3 keeps
 * its top one for NaN), and whether overflow saturates. */
struct fmt {
	int p, emin, emax;
	uint64_t qmax;
	int saturate;
};

static const struct fmt F64 = { 53, -1022, 1023, (1ull << 53) - 1, 0 };
static const struct fmt F32 = { 24, -126, 127, (1ull << 24) - 1, 0 };
static const struct fmt F16 = { 11, -14, 15, (1ull << 11) - 1, 0 };
static const struct fmt BF16 = { 8, -126, 127, (1ull << 8) - 1, 0 };
static const struct fmt E4M3 = { 4, -6, 8, 14, 1 };
static const struct fmt E5M2 = { 3, -14, 15, 7, 1 };

static struct fmt fmt_of(enum sd_dtype t)
{
	switch (t) {
	case SD_FLOAT64: return F64;
	case SD_FLOAT32: return F32;
	case SD_FLOAT16: return F16;
	case SD_BFLOAT16: return BF16;
	case SD_FP8_E4M3: return E4M3;
	default: return E5M2;
	}
}

/* An exact value: (-1)^neg x m x 2^e, or infinity. */
struct exact {
	int neg, inf;
	uint64_t m;
	int e;
};

static int bitlen(u128 v)
{
	int b = 0;
	while (v) {
		b++;
		v >>= 1;
	}
	return b;
}

/* num / den x 2^sh (num >= 0, den > 0) rounded to nearest, ties to even,
 * in format f, subnormals included. */
static struct exact round_ratio(int neg, u128 num, u128 den, int sh,
				struct fmt f)
{
	struct exact r = { neg, 0, 0, 0 };
	if (num == 0)
		return r;
	/* e: floor(log2(num / den)) */
	int e = bitlen(num) - bitlen(den);
	if (e >= 0 ? num < (den << e) : (num << -e) < den)
		e--;
	int E = e + sh;
	if (E < f.emin)
		E = f.emin;
	int qe = E - (f.p - 1); /* the quantum is 2^qe */
	int d = sh - qe;
	u128 n2 = d >= 0 ? num << d : num, d2 = d >= 0 ? den : den << -d;
	u128 q = n2 / d2, rest = n2 % d2;
	if (2 * rest > d2 || (2 * rest == d2 && (q & 1)))
		q++;
	if (q == ((u128)1 << f.p)) {
		q >>= 1;
		qe++;
		E++;
	}
	if (E > f.emax || (E == f.emax && q > f.qmax)) {
		if (!f.saturate) {
			r.inf = 1;
			return r;
		}
		q = f.qmax;
		qe = f.emax - (f.p - 1);
	}
	r.m = (uint64_t)q;
	r.e = qe;
	return r;
}

/* An exact value rounded again, to format f. */
static struct exact round_exact(struct exact v, struct fmt f)
{
	return v.inf ? v : round_ratio(v.neg, v.m, 1, v.e, f);
}

static double to_double(struct exact v)
{
	double a = v.inf ? INFINITY : ldexp((double)v.m, v.e);
	return v.neg ? -a : a;
}

/* Same value and same sign of zero. */
static int same(double a, double b)
{
	return a == b && signbit(a) == signbit(b);
}

/* NCCL's scalar for type t: 1.0/n in double, float(), then t. */
static struct exact nccl_scalar(enum sd_dtype t, int n)
{
	struct exact d = round_ratio(0, 1, (u128)n, 0, F64);
	if (t == SD_FLOAT64)
		return d;
	struct exact f = round_exact(d, F32);
	return t == SD_FLOAT32 ? f : round_exact(f, fmt_of(t));
}

/* NCCL's quotient of a sum over n ranks (FuncSumPostDiv): |x| times the
 * reciprocal (2^w - 1) / n in the high half of a w-bit product, one
 * correction, the sign put back.  w is 32 below 8-byte types. */
static int64_t nccl_postdiv(int64_t x, int n, int w)
{
	uint64_t ax = x < 0 ? (uint64_t)-x : (uint64_t)x;
	u128 recip = ((((u128)1) << w) - 1) / (u128)n;
	uint64_t q = (uint64_t)(((u128)ax * recip) >> w);
	if (ax - q * (uint64_t)n >= (uint64_t)n)
		q++;
	return x < 0 ? -(int64_t)q : (int64_t)q;
}

/*
 * The model's avg of the n inputs at element i under `rule`, from the
 * pattern's inputs (exact integers in every type) alone.  *senders: how
 * many ranks sent a non-zero value; *sum: their exact sum.
 */
static double model_avg(const struct sd_op_args *a, enum sd_avg_rule rule,
			int n, uint64_t i, int *senders, int64_t *sum)
{
	enum sd_dtype t = a->dtype;
	double premul = 0;
	int64_t s = 0;
	*senders = 0;
	for (int r = 0; r < n; r++) {
		double v = sd_pattern_send(a, r, n, i);
		if (v == 0)
			continue;
		int64_t x = (int64_t)v;
		(*senders)++;
		s += x;
		if (!sd_dtype_is_float(t) || rule != SD_AVG_NCCL)
			continue;
		int fp8 = t == SD_FP8_E4M3 || t == SD_FP8_E5M2;
		struct exact sc = nccl_scalar(t, n);
		/* fp8 multiplies in half: rounded to half, then to fp8 */
		struct exact p = round_ratio(x < 0,
					     (u128)(x < 0 ? -x : x) * sc.m, 1,
					     sc.e, fp8 ? F16 : fmt_of(t));
		if (fp8)
			p = round_exact(p, fmt_of(t));
		premul = to_double(p); /* one sender: its product is the sum */
	}
	*sum = s;
	if (!sd_dtype_is_float(t)) {
		int64_t q = s / n; /* C truncates towards zero */
		if (rule == SD_AVG_NCCL &&
		    nccl_postdiv(s, n, sd_dtype_size(t) == 8 ? 64 : 32) != q)
			return NAN; /* NCCL's division is not C's: a failure */
		return (double)q;
	}
	if (rule == SD_AVG_NCCL)
		return premul == 0 ? 0.0 : premul; /* -0 + +0 is +0 */
	return to_double(round_ratio(s < 0, (u128)(s < 0 ? -s : s),
				     (u128)n, 0, fmt_of(t)));
}

enum { MAX_RANKS = 512, ELEMS = 24 };

/* What test_model counts over the elements of one type. */
struct tally {
	uint64_t bad[2];  /* expected value is not the model's, per rule */
	int first_bad[2]; /* the n of the first such */
	uint64_t multi;   /* elements where more than one rank sends */
	uint64_t inexact; /* sum then divide misses an exact mean */
	uint64_t differ;  /* the two rules expect different bits */
	uint64_t checked;
};

static void check_element(const struct sd_op_args *a, int n, uint64_t i,
			  struct tally *c)
{
	double want[2];
	for (int rule = 0; rule < 2; rule++) {
		int senders;
		int64_t s;
		double m = model_avg(a, rule, n, i, &senders, &s);
		want[rule] = sd_pattern_reduced_rule(a, rule, n, i);
		if (!same(m, want[rule]) && c->bad[rule]++ == 0)
			c->first_bad[rule] = n;
		c->multi += senders > 1;
		/* Gloo's types keep the exact mean where n x k is exact */
		if (rule == SD_AVG_SUM_DIVIDE && s % n == 0 &&
		    want[rule] * n != (double)s)
			c->inexact++;
	}
	c->differ += !same(want[0], want[1]);
	c->checked++;
}

/* For every type and n = 1..512: the expected avg is the model's under
 * both rules, one rank sends per element, and summing then dividing gives
 * the exact mean wherever n x k is exact in the type. */
static void test_model(void)
{
	static const uint32_t seeds[] = { 0, 12345 };
	for (int t = 0; t < SD_DTYPE_COUNT; t++) {
		struct tally c = { { 0, 0 }, { 0, 0 }, 0, 0, 0, 0 };
		for (int n = 1; n <= MAX_RANKS; n++)
			for (size_t sd = 0; sd < 2; sd++) {
				struct sd_op_args a = {
					.op = SD_OP_ALL_REDUCE, .dtype = t,
					.redop = SD_AVG, .seed = seeds[sd] };
				for (uint64_t i = 0; i < ELEMS; i++)
					check_element(&a, n, i, &c);
			}
		const char *name = sd_dtype_name(t);
		is_int(c.bad[SD_AVG_NCCL], 0, "%s: NCCL's avg as the exact "
		       "model computes it, n = 1..%d (%llu elements)", name,
		       MAX_RANKS, (unsigned long long)c.checked);
		if (c.bad[SD_AVG_NCCL])
			printf("#   first wrong at n = %d\n",
			       c.first_bad[SD_AVG_NCCL]);
		is_int(c.bad[SD_AVG_SUM_DIVIDE], 0, "%s: sum then divide as "
		       "the exact model computes it", name);
		if (c.bad[SD_AVG_SUM_DIVIDE])
			printf("#   first wrong at n = %d\n",
			       c.first_bad[SD_AVG_SUM_DIVIDE]);
		is_int(c.multi, 0, "%s: one rank sends per element", name);
		is_int(c.inexact, 0, "%s: sum then divide gives the exact mean "
		       "of multiples of n", name);
		if (sd_dtype_is_float(t))
			ok(c.differ > 0, "%s: NCCL's mean differs from the "
			   "exact one at %llu of %llu elements", name,
			   (unsigned long long)c.differ,
			   (unsigned long long)c.checked);
		else
			is_int(c.differ, 0, "%s: both rules truncate alike",
			       name);
	}
}

/* The rank counts of issue 13 where n x k x fl(1/n) is not k: the model
 * (and so the new expectation) differs there from the exact mean k that
 * the pattern expected of NCCL before. */
static void test_issue_examples(void)
{
	static const struct { enum sd_dtype t; int n; } rows[] = {
		{ SD_FLOAT32, 41 }, { SD_FLOAT32, 47 }, { SD_FLOAT32, 55 },
		{ SD_FLOAT32, 61 }, { SD_FLOAT32, 82 },
		{ SD_FLOAT64, 49 }, { SD_FLOAT64, 98 }, { SD_FLOAT64, 103 },
		{ SD_FLOAT16, 11 }, { SD_FLOAT16, 22 }, { SD_FLOAT16, 41 },
		{ SD_FLOAT16, 44 }, { SD_FLOAT16, 88 },
		{ SD_BFLOAT16, 61 }, { SD_BFLOAT16, 75 }, { SD_BFLOAT16, 83 },
	};
	for (size_t k = 0; k < sizeof(rows) / sizeof(rows[0]); k++) {
		int n = rows[k].n;
		enum sd_dtype t = rows[k].t;
		struct sd_op_args a = { .op = SD_OP_ALL_REDUCE, .dtype = t,
					.redop = SD_AVG, .seed = 12345 };
		uint64_t off = 0, count = 4 * (uint64_t)n;
		for (uint64_t i = 0; i < count; i++) {
			int senders;
			int64_t s;
			double m = model_avg(&a, SD_AVG_NCCL, n, i, &senders,
					     &s);
			off += m != (double)s / n;
		}
		ok(off > 0, "%s over %d ranks: NCCL's avg is not the exact "
		   "mean at %llu of %llu elements", sd_dtype_name(t), n,
		   (unsigned long long)off, (unsigned long long)count);
	}
	/* the host check expects NCCL's bits under SD_AVG_NCCL and rejects
	 * the exact mean there, and the other way round */
	enum { N = 41, C = 4 * N };
	float nccl[C], exact[C];
	struct sd_op_args a = { .op = SD_OP_ALL_REDUCE, .dtype = SD_FLOAT32,
				.redop = SD_AVG, .send_count = C,
				.recv_count = C, .seed = 12345 };
	uint64_t off = 0;
	for (uint64_t i = 0; i < C; i++) {
		int senders;
		int64_t s;
		nccl[i] = (float)model_avg(&a, SD_AVG_NCCL, N, i, &senders, &s);
		exact[i] = (float)s / N;
		off += nccl[i] != exact[i];
	}
	ok(off > 0, "float32 over %d ranks: %llu elements tell the two "
	   "rules apart", N, (unsigned long long)off);
	a.recvbuf = nccl;
	is_int(sd_pattern_verify_host_rule(&a, SD_AVG_NCCL, 0, N, NULL), 0,
	       "float32 over %d ranks: NCCL's result verifies as NCCL's", N);
	is_int(sd_pattern_verify_host(&a, 0, N, NULL), off,
	       "and fails %llu elements as a sum then a division",
	       (unsigned long long)off);
	a.recvbuf = exact;
	is_int(sd_pattern_verify_host_rule(&a, SD_AVG_NCCL, 0, N, NULL), off,
	       "the exact mean fails the same %llu elements as NCCL's",
	       (unsigned long long)off);
	is_int(sd_pattern_verify_host(&a, 0, N, NULL), 0,
	       "and verifies as a sum then a division");
}

/* pattern.h converts to float16, bfloat16 and fp8 as the model rounds:
 * every finite value, the midpoints between neighbours (ties to even)
 * and a hair either side of them, subnormals and overflow included. */
static void test_rounding(void)
{
	static const enum sd_dtype types[] = { SD_FLOAT16, SD_BFLOAT16,
					       SD_FP8_E4M3, SD_FP8_E5M2 };
	for (size_t k = 0; k < sizeof(types) / sizeof(types[0]); k++) {
		enum sd_dtype t = types[k];
		struct fmt f = fmt_of(t);
		int bits = 8 * (int)sd_dtype_size(t);
		uint64_t bad_trip = 0, bad_round = 0, tried = 0;
		/* the positive finite values in order, then their negatives */
		for (uint64_t b = 0; b < (1ull << (bits - 1)); b++) {
			double v = sd_decode(t, b);
			if (isnan(v) || isinf(v))
				break;
			for (int neg = 0; neg < 2; neg++) {
				uint64_t nb = b | ((uint64_t)neg << (bits - 1));
				bad_trip += sd_encode(t, neg ? -v : v) != nb;
			}
			double next = sd_decode(t, b + 1);
			int top = isnan(next) || isinf(next);
			/* past the largest value: its ulp again */
			if (top)
				next = 2 * v - sd_decode(t, b - 1);
			double mid = v + (next - v) / 2;
			double probes[3] = { mid, mid - (next - v) / 64,
					     mid + (next - v) / 64 };
			for (int j = 0; j < 3; j++) {
				/* probes are dyadic: exact m x 2^e */
				int e;
				double m = frexp(probes[j], &e);
				struct exact want = round_ratio(
					0, (u128)ldexp(m, 60), 1, e - 60, f);
				for (int neg = 0; neg < 2; neg++) {
					double p = neg ? -probes[j] : probes[j];
					double w = neg ? -to_double(want)
						       : to_double(want);
					tried++;
					bad_round += !same(sd_round(t, p), w);
				}
			}
		}
		is_int(bad_trip, 0, "%s: every finite value encodes to its own "
		       "bits", sd_dtype_name(t));
		is_int(bad_round, 0, "%s: %llu midpoints and neighbours round "
		       "to nearest, ties to even", sd_dtype_name(t),
		       (unsigned long long)tried);
	}
	ok(isinf(sd_round(SD_FLOAT16, 65520)) &&
	   sd_round(SD_FLOAT16, 65519) == 65504,
	   "float16: past 65504 + half an ulp is infinity");
	ok(sd_round(SD_FP8_E4M3, 1e6) == 448 &&
	   sd_round(SD_FP8_E5M2, -1e9) == -57344,
	   "fp8: past the largest value saturates (__NV_SATFINITE)");
	ok(sd_round(SD_FLOAT16, ldexp(1, -25)) == 0 &&
	   sd_round(SD_FLOAT16, ldexp(3, -26)) == ldexp(1, -24),
	   "float16: half the smallest subnormal ties to 0, more rounds up");
	ok(isnan(sd_decode(SD_FLOAT16, sd_poison_bits(SD_FLOAT16))) &&
	   isnan(sd_decode(SD_FP8_E4M3, sd_poison_bits(SD_FP8_E4M3))) &&
	   isnan(sd_decode(SD_BFLOAT16, sd_poison_bits(SD_BFLOAT16))),
	   "poison decodes as NaN (messages say nan, not -131008)");
}

/* NCCL's scalar for each type is what its own conversions give; for a
 * power of two n it is exact, so there the mean is k under both rules. */
static void test_scalar(void)
{
	uint64_t bad = 0, pow2 = 0;
	for (int t = 0; t < SD_DTYPE_COUNT; t++) {
		if (!sd_dtype_is_float(t))
			continue;
		for (int n = 1; n <= MAX_RANKS; n++) {
			double s = sd_avg_nccl_scalar(t, n);
			bad += !same(s, to_double(nccl_scalar(t, n)));
			if (!(n & (n - 1)))
				pow2 += s != 1.0 / n;
		}
	}
	is_int(bad, 0, "NCCL's rounded 1/n, every float type, n = 1..%d",
	       MAX_RANKS);
	is_int(pow2, 0, "1/n is exact for powers of two in every float type "
	       "up to %d", MAX_RANKS);
}

int main(void)
{
	test_rounding();
	test_scalar();
	test_model();
	test_issue_examples();
	return done_testing();
}
