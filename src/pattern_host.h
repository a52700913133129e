/*
 * pattern_host.h - fill and check host buffers with the reference pattern.
 *
 * The host-memory reference of include/shakedown/pattern.h, used by backends
 * whose buffers live in host memory (Gloo) and by the unit tests.  Part of
 * libsdcommon, which the core and host plugins both link.
 */
#ifndef SD_PATTERN_HOST_H
#define SD_PATTERN_HOST_H

#include <stdint.h>
#include "shakedown/backend.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Poison a->recvbuf (recv_count elements), then write rank `me`'s pattern
 * into a->sendbuf (send_count elements); ranks that send nothing for this op
 * only poison. */
void sd_pattern_fill_host(const struct sd_op_args *a, int me, int n);

/* Count elements of a->recvbuf that differ from the expected bits; the first
 * is described in *first (when first != NULL).  Returns the count. */
uint64_t sd_pattern_verify_host(const struct sd_op_args *a, int me, int n,
				struct sd_mismatch *first);

/* Describe the value with bits `bits` of type t: "3 (0x4200)". */
void sd_pattern_format(enum sd_dtype t, uint64_t bits, char *buf, size_t len);

/* Flip the lowest bit of recvbuf[index] (fault injection). */
void sd_pattern_corrupt_host(const struct sd_op_args *a, uint64_t index);

#ifdef __cplusplus
}
#endif
#endif
