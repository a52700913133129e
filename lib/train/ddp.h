/*
 * ddp.h - gradient buckets as PyTorch's DistributedDataParallel makes
 * them, for the built-in training workload's data-parallel all_reduce.
 *
 * DDP walks the parameters in reverse order (the order backward finishes
 * them) and closes a bucket as soon as it holds at least its cap: the
 * first bucket's cap is _DEFAULT_FIRST_BUCKET_BYTES (1 MiB), so that the
 * first all_reduce starts early in backward, every later one
 * bucket_cap_mb (25 MiB).  Here the tensors lie in one contiguous array
 * in forward order (lib/train/gpt.h), so a bucket is one contiguous slice
 * of the gradient array that can be all-reduced in place.  Pure logic:
 * no I/O, nothing printed.
 */
#ifndef SD_TRAIN_DDP_H
#define SD_TRAIN_DDP_H

#include <stddef.h>

#include "train/gpt.h"

/* PyTorch's caps (torch/nn/parallel/distributed.py). */
#define SD_DDP_FIRST_BUCKET_BYTES ((size_t)1 << 20)
#define SD_DDP_BUCKET_CAP_BYTES ((size_t)25 << 20)

/* One bucket: tensors first_tensor .. last_tensor of the table (forward
 * order, so first_tensor is the one backward finishes last), elements
 * offset .. offset + count of the array. */
struct sd_ddp_bucket {
	int first_tensor, last_tensor;
	size_t offset, count;
};

/*
 * Split the nt tensors of t (forward order, contiguous: each starts
 * where the one before it ends) into buckets of elements of elem_bytes
 * bytes, in the order they become ready (bucket 0 holds the last
 * tensors): a bucket takes tensors until it holds at least its cap
 * (first_cap_bytes for bucket 0, cap_bytes after), as DDP's
 * compute_bucket_assignment_by_size does.  Writes at most max buckets
 * into out (nt is always enough) and *n how many.  Returns SD_OK, or
 * SD_ERR_INVALID with err when the tensors are not contiguous, a cap or
 * elem_bytes is 0, or max is too small.
 */
int sd_ddp_buckets(const struct sd_gpt_tensor *t, int nt, size_t elem_bytes,
		   size_t first_cap_bytes, size_t cap_bytes,
		   struct sd_ddp_bucket *out, int max, int *n, char *err,
		   size_t errlen);

#endif
