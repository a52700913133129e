/*
 * pattern_host.h - fill and check host buffers with the reference pattern.
 *
 * The host-memory reference of shakedown/pattern.h, for backends whose
 * buffers live in host memory (Gloo), for the core and for the unit tests.
 * Header only, so that a plugin builds against the installed headers alone:
 *   sd_pattern_fill_host     poison a->recvbuf (recv_count elements), then
 *                            write rank `me`'s pattern into a->sendbuf
 *                            (send_count elements); ranks that send nothing
 *                            for this op only poison;
 *   sd_pattern_verify_host   count elements of a->recvbuf that differ from
 *                            the expected bits; the first is described in
 *                            *first (when first != NULL); avg expects a
 *                            sum then a division (Gloo);
 *   sd_pattern_verify_host_rule  the same for a backend that averages by
 *                            another enum sd_avg_rule (NCCL's);
 *   sd_pattern_format        describe the value with bits `bits` of type t:
 *                            "3 (0x4200)";
 *   sd_pattern_corrupt_host  flip the lowest bit of recvbuf[index] (fault
 *                            injection).
 */
#ifndef SHAKEDOWN_PATTERN_HOST_H
#define SHAKEDOWN_PATTERN_HOST_H

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "shakedown/backend.h"
#include "shakedown/pattern.h"
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

static inline void sd_pattern_format(enum sd_dtype t, uint64_t bits, char *buf, size_t len)
{
	int hex = (int)sd_dtype_size(t) * 2;
	if (sd_dtype_is_float(t))
		snprintf(buf, len, "%.9g (0x%0*" PRIx64 ")", sd_decode(t, bits),
			 hex, bits);
	else if (sd_dtype_is_unsigned(t))
		snprintf(buf, len, "%" PRIu64 " (0x%0*" PRIx64 ")", bits, hex,
			 bits);
	else
		snprintf(buf, len, "%.0f (0x%0*" PRIx64 ")",
			 sd_decode(t, bits), hex, bits);
}

/*
 * Periods.  Every value of the pattern depends on its index only through
 * a few residues (shakedown/pattern.h): a reduction input through
 * (i + r) % n and residues modulo the spread of its values (2m+1, or m+1
 * unsigned, m = min(4, the type's exact limit)), 5 (prod's signs) and 2
 * and 3 (avg's k); data through its spread (2m+1 or m+1, m = min(100,
 * limit)).  So the fill and the check compute one period of values with
 * pattern.h's own functions and repeat it: a few nanoseconds an element
 * instead of a reduction over n ranks for each, with every element still
 * compared bit for bit.  unit_core checks these periods against the
 * element-by-element functions for every op, type, reduction and rank
 * count it tries; a change to pattern.h's residues must change them too.
 */
static inline uint64_t sd_gcd_u64(uint64_t a, uint64_t b)
{
	while (b) {
		uint64_t t = a % b;
		a = b;
		b = t;
	}
	return a;
}

static inline uint64_t sd_lcm_u64(uint64_t a, uint64_t b)
{
	return a && b ? a / sd_gcd_u64(a, b) * b : 0;
}

static inline uint64_t sd_spread_modulus(enum sd_dtype t, uint64_t m)
{
	return sd_dtype_is_unsigned(t) ? m + 1 : 2 * m + 1;
}

/* The period, in the element index, of what a rank sends and of what a
 * rank expects (a reduction of all, or one rank's data). */
static inline uint64_t sd_pattern_period(const struct sd_op_args *a, int n)
{
	uint64_t lim = sd_dtype_exact_limit(a->dtype);
	if (!sd_op_is_reduction(a->op))
		return sd_spread_modulus(a->dtype, sd_min_u64(100, lim));
	uint64_t m = sd_spread_modulus(a->dtype, sd_min_u64(4, lim));
	return sd_lcm_u64(sd_lcm_u64((uint64_t)(n > 0 ? n : 1), m), 30);
}

/* One period of encoded values (table[0..len)), as elements of t in
 * memory, repeated to a chunk of a whole number of periods (so the phase
 * carries from chunk to chunk): at least 4096 elements, or as many as the
 * `count` to cover, for memcpy and memcmp; a whole number of 16 bytes
 * when `count` spans more than 4096 elements, with its first 16 bytes
 * repeated after it (sd_stream_periodic reads up to 15 bytes past the
 * chunk).  NULL when out of memory.  *chunk: its elements. */
static inline unsigned char *sd_periodic_chunk(enum sd_dtype t,
					       const uint64_t *table,
					       uint64_t len, uint64_t count,
					       uint64_t *chunk)
{
	size_t ts = sd_dtype_size(t);
	uint64_t want = count < 4096 ? count : 4096;
	uint64_t reps = want > len ? (want + len - 1) / len : 1;
	if (count > 4096) /* a whole number of 16 bytes: reps x len x ts */
		while ((reps * len * ts) % 16)
			reps++;
	*chunk = len * reps;
	size_t cb = (size_t)(*chunk * ts);
	unsigned char *rep = (unsigned char *)malloc(cb + 16);
	if (!rep)
		return NULL;
	for (uint64_t x = 0; x < *chunk; x++)
		sd_store_bits(t, rep, x, table[x % len]);
	memcpy(rep + cb, rep, cb < 16 ? cb : 16);
	return rep;
}

/* Buffers from this size up are written with streaming stores, which
 * bypass the cache: 2-3x memcpy's write bandwidth on the 2-core build
 * machine (64 MiB: 15-20 against 4-7 GB/s), and a bench plan's time
 * outside the operations 0.72 against 0.82 s on 2 ranks (5 interleaved
 * pairs).  Smaller ones stay in the cache for the operation that reads
 * them next. */
#define SD_STREAM_MIN_BYTES ((size_t)4 << 20)

/* Write `bytes` of p (a whole number of elements) as rep repeated:
 * p[k] = rep[k % cb] for a chunk of cb bytes (a multiple of 16, rep
 * readable to cb + 16).  Returns 0 where it cannot (no SSE2, or the
 * chunk is not a whole number of 16 bytes), having written nothing. */
static inline int sd_stream_periodic(unsigned char *p, size_t bytes,
				     const unsigned char *rep, size_t cb)
{
#if defined(__SSE2__)
	if (cb % 16 || cb < 16)
		return 0;
	/* the head up to 16-byte alignment, then aligned 16-byte stores
	 * whose source phase runs through the chunk */
	size_t head = (size_t)((16 - ((uintptr_t)p & 15)) & 15);
	if (head > bytes)
		head = bytes;
	memcpy(p, rep, head);
	size_t ph = head, k = head; /* head < 16 <= cb */
	for (; k + 16 <= bytes; k += 16) {
		_mm_stream_si128((__m128i *)(void *)(p + k),
				 _mm_loadu_si128((const __m128i *)(const void *)(
					 rep + ph)));
		ph += 16;
		if (ph >= cb)
			ph -= cb;
	}
	_mm_sfence();
	/* the tail: ph + (bytes - k) < cb + 16 */
	memcpy(p + k, rep + ph, bytes - k);
	return 1;
#else
	(void)p;
	(void)bytes;
	(void)rep;
	(void)cb;
	return 0;
#endif
}

/* Store `count` elements of t into buf: table[j % len] at j, one period of
 * encoded values repeated. */
static inline void sd_store_periodic(enum sd_dtype t, void *buf,
				     uint64_t count, const uint64_t *table,
				     uint64_t len)
{
	size_t ts = sd_dtype_size(t);
	uint64_t chunk;
	unsigned char *rep = sd_periodic_chunk(t, table, len, count, &chunk);
	unsigned char *p = (unsigned char *)buf;
	if (!rep) { /* out of memory: element by element */
		for (uint64_t j = 0; j < count; j++)
			sd_store_bits(t, p, j, table[j % len]);
		return;
	}
	if (count * ts < SD_STREAM_MIN_BYTES ||
	    !sd_stream_periodic(p, (size_t)(count * ts), rep,
				(size_t)(chunk * ts)))
		for (uint64_t done = 0; done < count; done += chunk) {
			uint64_t m = count - done < chunk ? count - done
							  : chunk;
			memcpy(p + done * ts, rep, (size_t)(m * ts));
		}
	free(rep);
}

/* Count the elements of buf[j0, j0+count) that differ from
 * table[(j - j0) % len]; the first wrong index goes into *first_j (when
 * still UINT64_MAX).  Chunks are compared with memcmp, and only a chunk
 * that differs element by element. */
static inline uint64_t sd_compare_periodic(enum sd_dtype t, const void *buf,
					   uint64_t j0, uint64_t count,
					   const uint64_t *table, uint64_t len,
					   uint64_t *first_j)
{
	size_t ts = sd_dtype_size(t);
	uint64_t wrong = 0, chunk;
	const unsigned char *p = (const unsigned char *)buf + j0 * ts;
	unsigned char *rep = sd_periodic_chunk(t, table, len, count, &chunk);
	/* out of memory: one period at a time, element by element */
	uint64_t step = rep ? chunk : len;
	for (uint64_t done = 0; done < count; done += step) {
		uint64_t m = count - done < step ? count - done : step;
		const unsigned char *q = p + done * ts;
		if (rep && memcmp(q, rep, (size_t)(m * ts)) == 0)
			continue;
		for (uint64_t x = 0; x < m; x++)
			if (sd_load_bits(t, q, x) != table[x % len]) {
				if (*first_j == UINT64_MAX)
					*first_j = j0 + done + x;
				wrong++;
			}
	}
	free(rep);
	return wrong;
}

static inline void sd_pattern_fill_host(const struct sd_op_args *a, int me, int n)
{
	uint64_t poison = sd_poison_bits(a->dtype);
	int sends = sd_pattern_sends(a, me);
	if (a->fill_part != SD_FILL_SEND && sd_pattern_poisons_recv(a, me) &&
	    a->recv_count)
		sd_store_periodic(a->dtype, a->recvbuf, a->recv_count,
				  &poison, 1);
	if (a->fill_part == SD_FILL_RECV)
		return;
	if (!sends) {
		/* keep the (unused) send buffer defined but out of the way */
		if (!a->in_place && a->send_count)
			sd_store_periodic(a->dtype, a->sendbuf,
					  a->send_count, &poison, 1);
		return;
	}
	uint64_t len = sd_pattern_period(a, n);
	uint64_t *table = len && len < a->send_count
				  ? (uint64_t *)malloc(len * sizeof(uint64_t))
				  : NULL;
	if (!table) { /* short (or no memory): element by element */
		for (uint64_t i = 0; i < a->send_count; i++)
			sd_store_bits(a->dtype, a->sendbuf, i,
				      sd_encode(a->dtype,
						sd_pattern_send(a, me, n, i)));
		return;
	}
	for (uint64_t x = 0; x < len; x++)
		table[x] = sd_encode(a->dtype, sd_pattern_send(a, me, n, x));
	sd_store_periodic(a->dtype, a->sendbuf, a->send_count, table, len);
	free(table);
}

/* Verify recv[j0, j0+count), where the expected values repeat with period
 * len from j0 on (one block of the op's receive buffer): expected values
 * from sd_pattern_expect, one period of them. */
static inline uint64_t sd_verify_block(const struct sd_op_args *a,
				       enum sd_avg_rule rule, int me, int n,
				       uint64_t j0, uint64_t count,
				       uint64_t len, uint64_t *table,
				       uint64_t *first_j)
{
	double want;
	uint64_t k = len < count ? len : count;
	for (uint64_t x = 0; x < k; x++) {
		sd_pattern_expect_rule(a, rule, me, n, j0 + x, &want);
		table[x] = sd_encode(a->dtype, want);
	}
	return sd_compare_periodic(a->dtype, a->recvbuf, j0, count, table, k,
				   first_j);
}

static inline uint64_t sd_pattern_verify_host_rule(const struct sd_op_args *a,
						   enum sd_avg_rule rule,
						   int me, int n,
						   struct sd_mismatch *first)
{
	uint64_t wrong = 0, first_j = UINT64_MAX, rc = a->recv_count;
	double want;
	if (!rc || !sd_pattern_expect_rule(a, rule, me, n, 0, &want))
		return 0; /* this rank receives nothing */
	/* the blocks within which the expected values follow one rank's
	 * pattern (or the reduction's) with a step of one */
	struct sd_coll c = sd_coll_desc(a->op);
	uint64_t block = rc;
	if (c.expect == SD_EXPECT_CONCAT)
		block = a->send_count;
	else if (c.expect == SD_EXPECT_TRANSPOSE)
		block = rc / (uint64_t)n;
	uint64_t len = sd_pattern_period(a, n);
	uint64_t *table = len ? (uint64_t *)malloc(
					(len < block ? len : block) *
					sizeof(uint64_t))
			      : NULL;
	if (!block || !table) { /* element by element */
		free(table);
		for (uint64_t j = 0; j < rc; j++) {
			sd_pattern_expect_rule(a, rule, me, n, j, &want);
			uint64_t e = sd_encode(a->dtype, want);
			if (e != sd_load_bits(a->dtype, a->recvbuf, j) &&
			    wrong++ == 0)
				first_j = j;
		}
	} else {
		for (uint64_t j0 = 0; j0 < rc; j0 += block)
			wrong += sd_verify_block(a, rule, me, n, j0,
						 rc - j0 < block ? rc - j0
								 : block,
						 len, table, &first_j);
		free(table);
	}
	if (wrong && first) {
		sd_pattern_expect_rule(a, rule, me, n, first_j, &want);
		first->index = first_j;
		sd_pattern_format(a->dtype, sd_encode(a->dtype, want),
				  first->expected, sizeof(first->expected));
		sd_pattern_format(a->dtype,
				  sd_load_bits(a->dtype, a->recvbuf, first_j),
				  first->got, sizeof(first->got));
	}
	return wrong;
}

static inline uint64_t sd_pattern_verify_host(const struct sd_op_args *a, int me, int n,
				struct sd_mismatch *first)
{
	return sd_pattern_verify_host_rule(a, SD_AVG_SUM_DIVIDE, me, n, first);
}

static inline void sd_pattern_corrupt_host(const struct sd_op_args *a, uint64_t index)
{
	if (index >= a->recv_count)
		index = a->recv_count ? a->recv_count - 1 : 0;
	if (!a->recv_count)
		return;
	uint64_t bits = sd_load_bits(a->dtype, a->recvbuf, index);
	sd_store_bits(a->dtype, a->recvbuf, index, bits ^ 1u);
}

#ifdef __cplusplus
}
#endif
#endif
