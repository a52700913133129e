/*
 * pattern.h - the deterministic data every backend sends and checks.
 *
 * Values are small integers (or, for prod, +-1 and 2) chosen per data type so
 * that every partial sum or product is exactly representable: any reduction
 * order gives the same bits.  Avg is the exception that rounds: one rank
 * per element sends n x k (k = +-1 or +-2), the others 0, and the expected
 * mean is what the backend's arithmetic makes of that (enum sd_avg_rule):
 * k exactly where it sums then divides, and NCCL's rounded product with
 * its rounded 1/n, which is not always k, where it is NCCL.  The functions
 * are static inline and marked SD_HD so the host reference (the Gloo
 * plugin, the core's tests) and the CUDA kernels of the NCCL plugin compute
 * the very same values.
 *
 * Layout conventions follow nccl-tests: for each op, send_count and
 * recv_count are the per-rank element counts of struct sd_op_args, and the
 * value a rank sends at send index i is sd_pattern_send(..., rank, i).
 */
#ifndef SHAKEDOWN_PATTERN_H
#define SHAKEDOWN_PATTERN_H

#include <stdint.h>
#include <string.h>
#include <math.h>

#include "shakedown/backend.h"

/* SD_HD (host and device functions) comes with shakedown/coll.h. */

/* Size of one element in bytes. */
static inline SD_HD size_t sd_dtype_size(enum sd_dtype t)
{
	switch (t) {
	case SD_INT8: case SD_UINT8: case SD_FP8_E4M3: case SD_FP8_E5M2:
		return 1;
	case SD_FLOAT16: case SD_BFLOAT16:
		return 2;
	case SD_INT32: case SD_UINT32: case SD_FLOAT32:
		return 4;
	default:
		return 8;
	}
}

static inline SD_HD int sd_dtype_is_signed_int(enum sd_dtype t)
{
	return t == SD_INT8 || t == SD_INT32 || t == SD_INT64;
}

static inline SD_HD int sd_dtype_is_unsigned(enum sd_dtype t)
{
	return t == SD_UINT8 || t == SD_UINT32 || t == SD_UINT64;
}

static inline SD_HD int sd_dtype_is_float(enum sd_dtype t)
{
	return !sd_dtype_is_signed_int(t) && !sd_dtype_is_unsigned(t);
}

/* Largest integer magnitude that every partial result may reach exactly. */
static inline SD_HD uint64_t sd_dtype_exact_limit(enum sd_dtype t)
{
	switch (t) {
	case SD_INT8: return 126;
	case SD_UINT8: return 254;
	case SD_FLOAT16: return 2048;
	case SD_BFLOAT16: return 256;
	case SD_FP8_E4M3: return 16;
	case SD_FP8_E5M2: return 8;
	default: return 1u << 24;
	}
}

/* Bits of a poison value no pattern produces (NaN, or the minimum int). */
static inline SD_HD uint64_t sd_poison_bits(enum sd_dtype t)
{
	switch (t) {
	case SD_INT8: return 0x80u;
	case SD_INT32: return 0x80000000u;
	case SD_INT64: return 0x8000000000000000ull;
	default: {
		size_t bytes = sd_dtype_size(t);
		return bytes == 8 ? ~0ull : ((1ull << (8 * bytes)) - 1);
	}
	}
}

/*
 * A binary floating-point format narrower than float: `ebits` exponent and
 * `mbits` mantissa bits, exponent bias `bias`.  `ieee` formats keep their
 * top exponent for infinity and NaN (float16, bfloat16, fp8 e5m2); fp8 e4m3
 * has no infinity and uses only S.1111.111 for NaN.  `saturate`: a value
 * past the largest finite one becomes that one, as NCCL's and CUDA's fp8
 * conversions do (__NV_SATFINITE), rather than infinity (float16 and
 * bfloat16 conversions).
 */
struct sd_minifloat {
	int ebits, mbits, bias, ieee, saturate;
};

static inline SD_HD struct sd_minifloat sd_minifloat_of(enum sd_dtype t)
{
	struct sd_minifloat f = { 5, 10, 15, 1, 0 }; /* float16 */
	switch (t) {
	case SD_BFLOAT16: f.ebits = 8; f.mbits = 7; f.bias = 127; break;
	case SD_FP8_E4M3:
		f.ebits = 4; f.mbits = 3; f.bias = 7; f.ieee = 0;
		f.saturate = 1;
		break;
	case SD_FP8_E5M2:
		f.ebits = 5; f.mbits = 2; f.bias = 15; f.saturate = 1;
		break;
	default: break;
	}
	return f;
}

/* The bits of v rounded to the nearest value of format f, ties to even,
 * subnormals included: the rounding of the hardware's conversions, so that
 * expected values that round (avg) come out as the GPU's do. */
static inline SD_HD uint64_t sd_encode_minifloat(double v,
						 struct sd_minifloat f)
{
	uint64_t sign = (signbit(v) ? 1ull : 0ull) << (f.ebits + f.mbits);
	uint64_t one = 1ull << f.mbits;
	uint64_t top = f.ieee ? (1u << f.ebits) - 2 : (1u << f.ebits) - 1;
	uint64_t top_mant = f.ieee ? one - 1 : one - 2; /* largest finite */
	uint64_t field = top + 1, mant = 0; /* infinity, unless it fits */
	double a = fabs(v);
	if (v != v) /* NaN: the quiet one */
		return f.ieee ? sign | (field << f.mbits) | (one >> 1)
			      : sign | (top << f.mbits) | (one - 1);
	if (a == 0)
		return sign;
	if (!isinf(a)) {
		int e;
		frexp(a, &e); /* a in [2^(e-1), 2^e) */
		e -= 1;
		if (e < 1 - f.bias)
			e = 1 - f.bias; /* subnormal: the quantum stops */
		/* a in quanta of 2^(e - mbits): exact, below 2^(mbits+1) */
		double m = ldexp(a, f.mbits - e);
		double q = floor(m), rest = m - q;
		if (rest > 0.5 || (rest == 0.5 && fmod(q, 2.0) != 0))
			q += 1;
		uint64_t qi = (uint64_t)q;
		if (qi == 2 * one) { /* rounded up into the next binade */
			qi = one;
			e++;
		}
		if (qi < one) { /* subnormal, or rounded down to zero */
			field = 0;
			mant = qi;
		} else {
			field = (uint64_t)(e + f.bias);
			mant = qi - one;
		}
	}
	if (field < top || (field == top && mant <= top_mant))
		return sign | (field << f.mbits) | mant;
	if (f.saturate || !f.ieee)
		return sign | (top << f.mbits) | top_mant;
	return sign | ((top + 1) << f.mbits); /* infinity */
}

static inline SD_HD double sd_decode_minifloat(uint64_t bits,
					       struct sd_minifloat f)
{
	uint64_t sign = (bits >> (f.ebits + f.mbits)) & 1;
	int exp = (int)((bits >> f.mbits) & ((1u << f.ebits) - 1));
	uint64_t mbits = bits & ((1u << f.mbits) - 1);
	double mant = (double)mbits;
	double a;
	if (f.ieee && exp == (1 << f.ebits) - 1)
		a = mbits ? NAN : INFINITY;
	else if (!f.ieee && exp == (1 << f.ebits) - 1 &&
		 mbits == (1u << f.mbits) - 1)
		a = NAN;
	else if (exp == 0)
		a = ldexp(mant, 1 - f.bias - f.mbits);
	else
		a = ldexp(1.0 + mant / (double)(1u << f.mbits), exp - f.bias);
	return sign ? -a : a;
}

/* The bit pattern of v in type t: floats rounded to nearest, ties to even
 * (as the GPU converts), integers truncated towards zero and wrapped. */
static inline SD_HD uint64_t sd_encode(enum sd_dtype t, double v)
{
	switch (t) {
	case SD_INT8: return (uint64_t)(int64_t)v & 0xffu;
	case SD_UINT8: return (uint64_t)v & 0xffu;
	case SD_INT32: return (uint64_t)(int64_t)v & 0xffffffffu;
	case SD_UINT32: return (uint64_t)v & 0xffffffffu;
	case SD_INT64: return (uint64_t)(int64_t)v;
	case SD_UINT64: return (uint64_t)v;
	case SD_FLOAT16: case SD_BFLOAT16: case SD_FP8_E4M3: case SD_FP8_E5M2:
		return sd_encode_minifloat(v, sd_minifloat_of(t));
	case SD_FLOAT32: {
		float f = (float)v;
		uint32_t u;
		memcpy(&u, &f, 4);
		return u;
	}
	default: {
		uint64_t u;
		memcpy(&u, &v, 8);
		return u;
	}
	}
}

/* The value of bit pattern `bits` in type t (for messages and reductions). */
static inline SD_HD double sd_decode(enum sd_dtype t, uint64_t bits)
{
	switch (t) {
	case SD_INT8: return (double)(int8_t)bits;
	case SD_UINT8: return (double)(uint8_t)bits;
	case SD_INT32: return (double)(int32_t)bits;
	case SD_UINT32: return (double)(uint32_t)bits;
	case SD_INT64: return (double)(int64_t)bits;
	case SD_UINT64: return (double)bits;
	case SD_FLOAT16: case SD_BFLOAT16: case SD_FP8_E4M3: case SD_FP8_E5M2:
		return sd_decode_minifloat(bits, sd_minifloat_of(t));
	case SD_FLOAT32: {
		uint32_t u = (uint32_t)bits;
		float f;
		memcpy(&f, &u, 4);
		return f;
	}
	default: {
		double d;
		memcpy(&d, &bits, 8);
		return d;
	}
	}
}

/* v rounded to a float type t as the hardware converts (integer types:
 * v itself, which the pattern keeps integral). */
static inline SD_HD double sd_round(enum sd_dtype t, double v)
{
	if (!sd_dtype_is_float(t) || t == SD_FLOAT64)
		return v;
	return sd_decode(t, sd_encode(t, v));
}

static inline SD_HD uint64_t sd_load_bits(enum sd_dtype t, const void *buf,
					  uint64_t idx)
{
	switch (sd_dtype_size(t)) {
	case 1: return ((const uint8_t *)buf)[idx];
	case 2: return ((const uint16_t *)buf)[idx];
	case 4: return ((const uint32_t *)buf)[idx];
	default: return ((const uint64_t *)buf)[idx];
	}
}

static inline SD_HD void sd_store_bits(enum sd_dtype t, void *buf, uint64_t idx,
				       uint64_t bits)
{
	switch (sd_dtype_size(t)) {
	case 1: ((uint8_t *)buf)[idx] = (uint8_t)bits; break;
	case 2: ((uint16_t *)buf)[idx] = (uint16_t)bits; break;
	case 4: ((uint32_t *)buf)[idx] = (uint32_t)bits; break;
	default: ((uint64_t *)buf)[idx] = bits; break;
	}
}

/* Whether op reduces (its inputs are built for a reduction). */
static inline SD_HD int sd_op_is_reduction(enum sd_op op)
{
	return sd_coll_desc(op).reduces;
}

static inline SD_HD uint64_t sd_min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/* A value in [-m, m] (signed or float types) or [0, m] (unsigned). */
static inline SD_HD double sd_spread(enum sd_dtype t, uint64_t h, uint64_t m)
{
	if (sd_dtype_is_unsigned(t))
		return (double)(h % (m + 1));
	return (double)(h % (2 * m + 1)) - (double)m;
}

/*
 * How a backend averages, which decides the mean a check expects: the same
 * inputs give different bits under different arithmetic.
 *   SD_AVG_SUM_DIVIDE  sum, then one division by n in the element type,
 *                      rounded to nearest (integers: truncated towards
 *                      zero).  Gloo, and the default of every backend.
 *   SD_AVG_NCCL        ncclAvg of NCCL 2.28 (src/enqueue.cc, the ncclAvg
 *                      case of the reduction-op translation; the device
 *                      side in src/device/reduce_kernel.h): integers
 *                      FuncSumPostDiv, a sum then a division truncating
 *                      towards zero; floats FuncPreMulSum, each input
 *                      times a scalar s, then a sum in the type, where s
 *                      is 1.0/n computed in double, converted to float
 *                      and then to the type (fp8 saturating), and each
 *                      product is rounded to the type once (__hmul for
 *                      half and bfloat16; fp8 multiplies in half, rounded
 *                      to half, then to fp8).  n x k x s rounds to k for
 *                      most n, but to the value next to k towards zero
 *                      for float32 at n = 41, 47, 55, 61, 82, ..., float64
 *                      at 49, 98, 103, ..., float16 at 11, 22, 41, 44, 88,
 *                      ..., bfloat16 at 61, 75, 83, ... (test/unit/unit_avg.c
 *                      checks n = 1..512 against an exact model).
 */
enum sd_avg_rule {
	SD_AVG_SUM_DIVIDE = 0,
	SD_AVG_NCCL = 1,
};

/* The one rank that sends a non-zero avg input at send index i: one per
 * element, so that no sum of rounded products depends on the order, and
 * each rank in turn, so that every rank's data is checked. */
static inline SD_HD int sd_pattern_avg_sender(int n, uint64_t i)
{
	return (int)(((uint64_t)n - i % (uint64_t)n) % (uint64_t)n);
}

/* The largest avg input magnitude of type t: in range for integers, at
 * most the largest finite value for float16 and fp8 (past it, and past
 * what is exact in t, the input is n x k rounded), 2^24 for the others. */
static inline SD_HD double sd_avg_input_cap(enum sd_dtype t)
{
	switch (t) {
	case SD_FLOAT16: return 65504;
	case SD_FP8_E4M3: return 448;
	case SD_FP8_E5M2: return 57344;
	case SD_INT8: case SD_UINT8: return (double)sd_dtype_exact_limit(t);
	default: return 16777216.0;
	}
}

/* 1/n as NCCL rounds it for type t (enqueue.cc: float(1.0/nRanks), then
 * __float2half, __float2bfloat16 or __nv_cvt_float_to_fp8 with
 * __NV_SATFINITE): double, then float, then t, each to nearest even. */
static inline SD_HD double sd_avg_nccl_scalar(enum sd_dtype t, int n)
{
	double d = 1.0 / (double)n;
	if (t == SD_FLOAT64)
		return d;
	float f = (float)d;
	return sd_round(t, (double)f);
}

/*
 * The avg of x (the one non-zero input, or 0) over n ranks under `rule`,
 * as a value of type t.  Integers: the sum, then a division truncating
 * towards zero, under both rules.  No product here meets an addition, so
 * no compiler may fuse the two into one rounding.
 */
static inline SD_HD double sd_pattern_avg(enum sd_dtype t,
					  enum sd_avg_rule rule, double x,
					  int n)
{
	if (!sd_dtype_is_float(t)) {
		double q = trunc(x / (double)n);
		return q == 0 ? 0.0 : q; /* not -0: the bits are an integer's */
	}
	if (rule != SD_AVG_NCCL)
		/* x / n in double, then t: a second rounding that never
		 * changes a quotient, as double carries more than twice
		 * the bits of float and of every narrower type */
		return sd_round(t, x / (double)n);
	double s = sd_avg_nccl_scalar(t, n);
	/* the product of two values of t: exact in double but for float64,
	 * which rounds it once, as NCCL's does */
	double p = x * s;
	if (t == SD_FP8_E4M3 || t == SD_FP8_E5M2)
		p = sd_round(SD_FLOAT16, p); /* NCCL multiplies fp8 in half */
	p = sd_round(t, p);
	/* the other ranks add +0, which turns a product that rounded to -0
	 * into +0 */
	return n > 1 && p == 0 ? 0.0 : p;
}

/*
 * The value rank `r` of `n` contributes at index i of its send buffer for a
 * reduction with `redop`.
 */
static inline SD_HD double sd_pattern_reduce_input(enum sd_dtype t,
						   enum sd_redop redop, int r,
						   int n, uint64_t i,
						   uint32_t seed)
{
	uint64_t lim = sd_dtype_exact_limit(t);
	uint64_t h = i * 3 + (uint64_t)r * 5 + seed;
	switch (redop) {
	case SD_PROD: {
		double v = ((i + (uint64_t)r) % (uint64_t)n) == 0 ? 2.0 : 1.0;
		if (!sd_dtype_is_unsigned(t) && (i * 7 + (uint64_t)r * 3 + seed) % 5 == 0)
			v = -v;
		return v;
	}
	case SD_MIN:
	case SD_MAX:
		return sd_spread(t, h, sd_min_u64(4, lim));
	case SD_AVG: {
		/* n x k on one rank, 0 on the others: summing then dividing
		 * gives k exactly while n x k is exact in t; NCCL's
		 * premultiplied sum rounds (sd_pattern_avg) */
		if (r != sd_pattern_avg_sender(n, i))
			return 0;
		double cap = sd_avg_input_cap(t);
		double k = ((i * 3 + (uint64_t)r * 5 + seed) % 2) ? 2.0 : 1.0;
		if ((double)n * k > cap)
			k = 1;
		double v = (double)n * k > cap ? cap : (double)n * k;
		if (!sd_dtype_is_unsigned(t) &&
		    (i * 7 + (uint64_t)r * 3 + seed) % 3 == 0)
			v = -v;
		return sd_round(t, v);
	}
	default: { /* SD_SUM: at most k ranks are non-zero per element */
		uint64_t m = sd_min_u64(4, lim);
		uint64_t k = sd_min_u64((uint64_t)n, lim / m);
		if ((i + (uint64_t)r) % (uint64_t)n >= k)
			return 0;
		return sd_spread(t, h, m);
	}
	}
}

/* The value rank r holds at index i for non-reduction operations. */
static inline SD_HD double sd_pattern_data(enum sd_dtype t, int r, uint64_t i,
					   uint32_t seed)
{
	uint64_t m = sd_min_u64(100, sd_dtype_exact_limit(t));
	return sd_spread(t, (uint64_t)r * 131 + i * 7 + (uint64_t)seed * 17, m);
}

/* What rank r sends at send index i. */
static inline SD_HD double sd_pattern_send(const struct sd_op_args *a, int r,
					   int n, uint64_t i)
{
	if (sd_op_is_reduction(a->op))
		return sd_pattern_reduce_input(a->dtype, a->redop, r, n, i,
					       a->seed);
	return sd_pattern_data(a->dtype, r, i, a->seed);
}

/* Reduce the inputs of all ranks at send index i, averaging by `rule`. */
static inline SD_HD double sd_pattern_reduced_rule(const struct sd_op_args *a,
						   enum sd_avg_rule rule,
						   int n, uint64_t i)
{
	if (a->redop == SD_AVG)
		return sd_pattern_avg(
			a->dtype, rule,
			sd_pattern_send(a, sd_pattern_avg_sender(n, i), n, i),
			n);
	double acc = sd_pattern_send(a, 0, n, i);
	for (int r = 1; r < n; r++) {
		double v = sd_pattern_send(a, r, n, i);
		switch (a->redop) {
		case SD_PROD: acc *= v; break;
		case SD_MIN: acc = v < acc ? v : acc; break;
		case SD_MAX: acc = v > acc ? v : acc; break;
		default: acc += v; break;
		}
	}
	return acc;
}

/* The same for a backend that sums then divides (SD_AVG_SUM_DIVIDE). */
static inline SD_HD double sd_pattern_reduced(const struct sd_op_args *a, int n,
					      uint64_t i)
{
	return sd_pattern_reduced_rule(a, SD_AVG_SUM_DIVIDE, n, i);
}

/*
 * Whether rank `me` checks recv index j at all, and the value expected there
 * (the op's row in shakedown/coll.h says which), for a backend that
 * averages by `rule`.  Returns 0 when the rank receives nothing for this op
 * (non-root of reduce and gather, idle ranks of pt2pt).
 */
static inline SD_HD int sd_pattern_expect_rule(const struct sd_op_args *a,
					       enum sd_avg_rule rule, int me,
					       int n, uint64_t j, double *out)
{
	struct sd_coll c = sd_coll_desc(a->op);
	uint64_t sc = a->send_count, rc = a->recv_count;
	if (c.op == SD_OP_COUNT || !sd_role_has(c.receives, me, a->root))
		return 0;
	switch (c.expect) {
	case SD_EXPECT_REDUCED:
		*out = sd_pattern_reduced_rule(a, rule, n, j);
		return 1;
	case SD_EXPECT_REDUCED_BLOCK:
		*out = sd_pattern_reduced_rule(a, rule, n,
					       (uint64_t)me * rc + j);
		return 1;
	case SD_EXPECT_CONCAT:
		*out = sd_pattern_data(a->dtype, (int)(j / sc), j % sc, a->seed);
		return 1;
	case SD_EXPECT_ROOT:
		*out = sd_pattern_data(a->dtype, a->root, j, a->seed);
		return 1;
	case SD_EXPECT_ROOT_BLOCK:
		*out = sd_pattern_data(a->dtype, a->root, (uint64_t)me * rc + j,
				       a->seed);
		return 1;
	case SD_EXPECT_TRANSPOSE: {
		uint64_t blk = rc / (uint64_t)n;
		int peer = (int)(j / blk);
		*out = sd_pattern_data(a->dtype, peer,
				       (uint64_t)me * blk + j % blk, a->seed);
		return 1;
	}
	case SD_EXPECT_PREV:
		*out = sd_pattern_data(a->dtype, (me + n - 1) % n, j, a->seed);
		return 1;
	case SD_EXPECT_RANK0:
		*out = sd_pattern_data(a->dtype, 0, j, a->seed);
		return 1;
	default:
		return 0;
	}
}

/* The same for a backend that sums then divides (SD_AVG_SUM_DIVIDE). */
static inline SD_HD int sd_pattern_expect(const struct sd_op_args *a, int me,
					  int n, uint64_t j, double *out)
{
	return sd_pattern_expect_rule(a, SD_AVG_SUM_DIVIDE, me, n, j, out);
}

/* Whether rank `me` sends anything (broadcast and scatter: root only;
 * pt2pt: rank 0 only). */
static inline SD_HD int sd_pattern_sends(const struct sd_op_args *a, int me)
{
	return sd_role_has(sd_coll_desc(a->op).sends, me, a->root);
}

/* Whether a fill poisons rank me's receive buffer before it writes the
 * send data: always, but where in place the receive buffer lies inside
 * the send data (same buffer, or scatter's block), which the send data
 * fills.  In-place all_gather and gather put the send block inside a
 * larger receive buffer, at the start on rank 0: the rest is poisoned
 * there too, so that a dropped receive cannot pass on what the previous
 * operation left. */
static inline SD_HD int sd_pattern_poisons_recv(const struct sd_op_args *a,
						int me)
{
	if (!sd_pattern_sends(a, me) || !a->in_place)
		return 1;
	return a->recv_count > a->send_count;
}

/*
 * Point a->sendbuf and a->recvbuf into the two buffers of rank `me`: out of
 * place they are `sendbase` and `recvbase`; in place both are inside
 * `recvbase` at nccl-tests' offsets (the op's `place`).  Counts, dtype and
 * op must be set.
 */
static inline void sd_coll_place(struct sd_op_args *a, int me, void *sendbase,
				 void *recvbase)
{
	size_t ts = sd_dtype_size(a->dtype);
	char *r = (char *)recvbase;
	if (!a->in_place) {
		a->sendbuf = sendbase;
		a->recvbuf = recvbase;
		return;
	}
	switch (sd_coll_desc(a->op).place) {
	case SD_PLACE_SEND_IN_RECV:
		a->recvbuf = r;
		a->sendbuf = r + (size_t)me * a->send_count * ts;
		break;
	case SD_PLACE_RECV_IN_SEND:
		a->sendbuf = r;
		a->recvbuf = r + (size_t)me * a->recv_count * ts;
		break;
	default:
		a->sendbuf = a->recvbuf = r;
		break;
	}
}

/*
 * The matrix multiply's inputs (`shakedown gemm`, struct sd_gemm_args):
 * element `index` of matrix `which` (0: A, 1: B) is a hash of the seed,
 * the matrix and the index, spread evenly over [-1, 1) in steps of 2^-23,
 * then rounded to the type's input format (ties to even, as the GPU
 * converts): every input is exactly what the device holds, so the
 * core's reference in double differs from a right product only by the
 * device's accumulation and its product's rounding.  Usable in CUDA
 * kernels (SD_HD), so a backend fills its device's matrices itself.
 */

/* The element type of a gemm type's product (and of BF16, FP16 inputs). */
static inline SD_HD enum sd_dtype sd_gemm_out_dtype(enum sd_gemm_type t)
{
	switch (t) {
	case SD_GEMM_BF16: case SD_GEMM_FP8: return SD_BFLOAT16;
	case SD_GEMM_FP16: return SD_FLOAT16;
	default: return SD_FLOAT32;
	}
}

/* The element type of a gemm type's inputs as stored (TF32 values are
 * stored as float32). */
static inline SD_HD enum sd_dtype sd_gemm_in_dtype(enum sd_gemm_type t)
{
	switch (t) {
	case SD_GEMM_BF16: return SD_BFLOAT16;
	case SD_GEMM_FP16: return SD_FLOAT16;
	case SD_GEMM_FP8: return SD_FP8_E4M3;
	default: return SD_FLOAT32;
	}
}

/* v (|v| < 1, a multiple of 2^-23) rounded to type t's input values. */
static inline SD_HD double sd_gemm_round(enum sd_gemm_type t, double v)
{
	if (t == SD_GEMM_TF32) {
		/* float32's exponent, 10 mantissa bits */
		struct sd_minifloat tf32 = { 8, 10, 127, 1, 0 };
		return sd_decode_minifloat(sd_encode_minifloat(v, tf32), tf32);
	}
	if (t == SD_GEMM_FP32)
		return v; /* exact: 24 bits */
	return sd_round(sd_gemm_in_dtype(t), v);
}

/* Input element `index` of matrix `which` (0: A, 1: B). */
static inline SD_HD double sd_gemm_input(uint32_t seed, int which,
					 uint64_t index, enum sd_gemm_type t)
{
	/* splitmix64's finaliser over the index, the matrix and the seed */
	uint64_t x = index * 0x9e3779b97f4a7c15ull ^
		     ((uint64_t)seed << 1 | (uint64_t)(which & 1)) *
			     0xbf58476d1ce4e5b9ull;
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	x ^= x >> 31;
	double v = ((double)(int64_t)(x >> 40) - 8388608.0) / 8388608.0;
	return sd_gemm_round(t, v);
}

#endif
