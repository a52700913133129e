/*
 * unit_avg.c - the avg the data pattern expects, against an exact model of
 * each backend's arithmetic.  First the rounding it rests on: pattern.h's
 * conversions to float16, bfloat16 and fp8 against a model that rounds
 * with integers alone (a value is m x 2^e, m an integer), apart from
 * pattern.h's floating-point code, so that a wrong rounding there cannot
 * hide behind the same wrong rounding here.
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

int main(void)
{
	test_rounding();
	return done_testing();
}
