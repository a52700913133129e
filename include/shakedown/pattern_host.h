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
#include "shakedown/backend.h"
#include "shakedown/pattern.h"

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

static inline void sd_pattern_fill_host(const struct sd_op_args *a, int me, int n)
{
	uint64_t poison = sd_poison_bits(a->dtype);
	int sends = sd_pattern_sends(a, me);
	if (sd_pattern_poisons_recv(a, me)) {
		for (uint64_t j = 0; j < a->recv_count; j++)
			sd_store_bits(a->dtype, a->recvbuf, j, poison);
	}
	if (!sends) {
		/* keep the (unused) send buffer defined but out of the way */
		if (!a->in_place)
			for (uint64_t i = 0; i < a->send_count; i++)
				sd_store_bits(a->dtype, a->sendbuf, i, poison);
		return;
	}
	for (uint64_t i = 0; i < a->send_count; i++)
		sd_store_bits(a->dtype, a->sendbuf, i,
			      sd_encode(a->dtype, sd_pattern_send(a, me, n, i)));
}

static inline uint64_t sd_pattern_verify_host_rule(const struct sd_op_args *a,
						   enum sd_avg_rule rule,
						   int me, int n,
						   struct sd_mismatch *first)
{
	uint64_t wrong = 0;
	double want;
	for (uint64_t j = 0; j < a->recv_count; j++) {
		if (!sd_pattern_expect_rule(a, rule, me, n, j, &want))
			return 0; /* this rank receives nothing */
		uint64_t exp_bits = sd_encode(a->dtype, want);
		uint64_t got_bits = sd_load_bits(a->dtype, a->recvbuf, j);
		if (exp_bits == got_bits)
			continue;
		if (wrong++ == 0 && first) {
			first->index = j;
			sd_pattern_format(a->dtype, exp_bits, first->expected,
					  sizeof(first->expected));
			sd_pattern_format(a->dtype, got_bits, first->got,
					  sizeof(first->got));
		}
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
