/*
 * ddp.c - DDP-style gradient buckets over the model's contiguous
 * gradient array (see ddp.h).
 */
#include "config.h"

#include <stdio.h>

#include "shakedown/backend.h"
#include "train/ddp.h"

int sd_ddp_buckets(const struct sd_gpt_tensor *t, int nt, size_t elem_bytes,
		   size_t first_cap_bytes, size_t cap_bytes,
		   struct sd_ddp_bucket *out, int max, int *n, char *err,
		   size_t errlen)
{
	*n = 0;
	if (nt < 1 || !elem_bytes || !first_cap_bytes || !cap_bytes) {
		snprintf(err, errlen, "ddp buckets need tensors, an element "
			 "size and caps above 0");
		return SD_ERR_INVALID;
	}
	for (int i = 1; i < nt; i++)
		if (t[i].offset != t[i - 1].offset + t[i - 1].count) {
			snprintf(err, errlen, "tensor %s does not start where "
				 "%s ends; buckets need one contiguous array",
				 t[i].name, t[i - 1].name);
			return SD_ERR_INVALID;
		}
	size_t bytes = 0;
	int hi = nt - 1;
	for (int i = nt - 1; i >= 0; i--) {
		bytes += t[i].count * elem_bytes;
		size_t cap = *n == 0 ? first_cap_bytes : cap_bytes;
		if (bytes < cap && i > 0)
			continue;
		if (*n == max) {
			snprintf(err, errlen, "more than %d buckets; give room "
				 "for one per tensor", max);
			return SD_ERR_INVALID;
		}
		out[*n] = (struct sd_ddp_bucket){
			.first_tensor = i, .last_tensor = hi,
			.offset = t[i].offset,
			.count = t[hi].offset + t[hi].count - t[i].offset };
		(*n)++;
		bytes = 0;
		hi = i - 1;
	}
	return SD_OK;
}
