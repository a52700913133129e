/*
 * nccl_host.c - host-side decisions of the NCCL plugin (see nccl_host.h).
 * Pure C: no CUDA, no NCCL, so the unit tests run everywhere.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nccl_host.h"

int sd_nccl_dtype(enum sd_dtype t)
{
	static const int map[SD_DTYPE_COUNT] = {
		[SD_INT8] = 0,     [SD_UINT8] = 1,    [SD_INT32] = 2,
		[SD_UINT32] = 3,   [SD_INT64] = 4,    [SD_UINT64] = 5,
		[SD_FLOAT16] = 6,  [SD_FLOAT32] = 7,  [SD_FLOAT64] = 8,
		[SD_BFLOAT16] = 9, [SD_FP8_E4M3] = 10, [SD_FP8_E5M2] = 11,
	};
	if ((int)t < 0 || t >= SD_DTYPE_COUNT)
		return -1;
	return map[t];
}

int sd_nccl_redop(enum sd_redop r)
{
	switch (r) {
	case SD_SUM: return 0;
	case SD_PROD: return 1;
	case SD_MAX: return 2;
	case SD_MIN: return 3;
	case SD_AVG: return 4;
	default: return -1;
	}
}

int sd_nccl_check_dtype(enum sd_dtype t, int cc_major, int cc_minor,
			const char *gpu, char *err, size_t errlen)
{
	if (sd_nccl_dtype(t) < 0) {
		snprintf(err, errlen, "data type %d is unknown to the nccl "
			 "backend", (int)t);
		return SD_ERR_INVALID;
	}
	if ((t == SD_FP8_E4M3 || t == SD_FP8_E5M2) && cc_major < 9) {
		snprintf(err, errlen, "%s: fp8 (%s) needs compute capability "
			 "9.0 or newer, this GPU has %d.%d; drop fp8 from -d "
			 "on this node", gpu,
			 t == SD_FP8_E4M3 ? "fp8_e4m3" : "fp8_e5m2", cc_major,
			 cc_minor);
		return SD_ERR_INVALID;
	}
	return SD_OK;
}

uint64_t sd_nccl_max_buffer_bytes(uint64_t avail_bytes, uint64_t reserve_bytes,
				  int nbuffers, size_t type_size, int n)
{
	if (nbuffers < 1 || type_size == 0 || n < 1 ||
	    avail_bytes <= reserve_bytes)
		return 0;
	uint64_t per = (avail_bytes - reserve_bytes) / (uint64_t)nbuffers;
	uint64_t unit = (uint64_t)type_size * (uint64_t)n;
	return per / unit * unit;
}

uint64_t sd_gpu_view_hash(const char *cvd)
{
	if (!cvd)
		return 0;
	uint64_t h = 1469598103934665603ull;
	for (const unsigned char *p = (const unsigned char *)cvd; *p; p++)
		h = (h ^ *p) * 1099511628211ull;
	return h ? h : 1; /* set, even to "", is not unset */
}

void sd_gpu_share(const struct sd_gpu_view *views, int n, int me, int *index,
		  int *count)
{
	*index = 0;
	*count = 0;
	for (int r = 0; r < n; r++) {
		if (strncmp(views[r].host, views[me].host,
			    sizeof(views[r].host)) != 0 ||
		    views[r].cvd_hash != views[me].cvd_hash)
			continue;
		(*count)++;
		if (r < me)
			(*index)++;
	}
}

int sd_nccl_pick_device(int index, int count, int visible,
			const struct sd_gpu_env *env, char *err, size_t errlen)
{
	const char *host = env->host ? env->host : "this host";
	const char *cvd = env->cuda_visible_devices;

	if (visible <= 0) {
		snprintf(err, errlen, "no CUDA device visible on %s%s%s%s; "
			 "check CUDA_VISIBLE_DEVICES or use --backend gloo",
			 host, cvd ? " (CUDA_VISIBLE_DEVICES=" : "",
			 cvd ? cvd : "", cvd ? ")" : "");
		return -1;
	}
	if (index < visible)
		return index;
	snprintf(err, errlen, "%s has %d local ranks seeing the same %d GPU%s"
		 "%s%s%s; the rank that is number %d of them has no GPU of its "
		 "own; start at most %d ranks per node (--local, "
		 "--ntasks-per-node) or bind one GPU per task "
		 "(--gpus-per-task=1)", host, count, visible,
		 visible == 1 ? "" : "s", cvd ? " (CUDA_VISIBLE_DEVICES=" : "",
		 cvd ? cvd : "", cvd ? ")" : "", index, visible);
	return -1;
}

int sd_nccl_check_unique(const struct sd_gpu_id *ids, int n, char *err,
			 size_t errlen)
{
	for (int a = 0; a < n; a++)
		for (int b = a + 1; b < n; b++) {
			if (strcmp(ids[a].host, ids[b].host) != 0 ||
			    strcmp(ids[a].pci_bus_id, ids[b].pci_bus_id) != 0)
				continue;
			snprintf(err, errlen, "ranks %d and %d both use GPU %s "
				 "on %s; NCCL needs one GPU per rank: start "
				 "fewer ranks per node or give each task its "
				 "own GPU (CUDA_VISIBLE_DEVICES, "
				 "--gpus-per-task=1)", (int)ids[a].rank,
				 (int)ids[b].rank, ids[a].pci_bus_id,
				 ids[a].host);
			return SD_ERR_NODEV;
		}
	return SD_OK;
}
