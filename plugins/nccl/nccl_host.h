/*
 * nccl_host.h - the host-side decisions of the NCCL plugin, as pure C
 * functions without CUDA or NCCL, so the unit tests (test/unit_nccl.c) run
 * them on any machine: type and reduction mapping, the support rules for fp8
 * and avg, memory capping and GPU choice from the environment.  A test's
 * own NCCL_* settings are nccl_env.h's.
 *
 * Numbers returned by sd_nccl_dtype() and sd_nccl_redop() are the values of
 * ncclDataType_t and ncclRedOp_t; nccl_plugin.c checks them against nccl.h
 * at compile time.
 */
#ifndef SD_NCCL_HOST_H
#define SD_NCCL_HOST_H

#include <stddef.h>
#include <stdint.h>
#include "shakedown/backend.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ncclDataType_t of t (ncclInt8 = 0 ... ncclFloat8e5m2 = 11), or -1. */
int sd_nccl_dtype(enum sd_dtype t);

/* ncclRedOp_t of r (ncclSum = 0, ncclProd, ncclMax, ncclMin, ncclAvg = 4),
 * or -1.  Note NCCL orders max before min. */
int sd_nccl_redop(enum sd_redop r);

/*
 * Whether the GPU with compute capability major.minor can run type t under
 * NCCL (fp8 needs 9.0 or newer).  Returns SD_OK, or SD_ERR_INVALID with a
 * message naming the GPU `gpu` (e.g. "GPU 0 (NVIDIA A100, 0000:1b:00.0)").
 */
int sd_nccl_check_dtype(enum sd_dtype t, int cc_major, int cc_minor,
			const char *gpu, char *err, size_t errlen);

/* Bytes kept free on the GPU for NCCL's own buffers and the CUDA context
 * when sizing test buffers (as nccl-tests does: 1 GiB). */
#define SD_NCCL_RESERVE_BYTES (1ull << 30)

/*
 * The largest per-buffer byte count that fits when `nbuffers` buffers are
 * allocated on a GPU with `avail_bytes` available (free memory plus what
 * this rank already holds for the test), keeping `reserve_bytes` free,
 * rounded down to whole elements of `type_size` bytes for `n` ranks.
 * Returns 0 when nothing fits.
 */
uint64_t sd_nccl_max_buffer_bytes(uint64_t avail_bytes, uint64_t reserve_bytes,
				  int nbuffers, size_t type_size, int n);

/* The environment that decides which GPU a rank uses. */
struct sd_gpu_env {
	const char *cuda_visible_devices; /* CUDA_VISIBLE_DEVICES or NULL */
	const char *host;                 /* for messages */
};

/* What a rank tells the others before it picks its GPU: its host and
 * which CUDA_VISIBLE_DEVICES list it sees (a hash; 0 when unset). */
struct sd_gpu_view {
	char host[64];
	uint64_t cvd_hash;
};

/* The hash of a CUDA_VISIBLE_DEVICES value for sd_gpu_view (FNV-1a;
 * NULL gives 0, so every rank without the variable shares one view). */
uint64_t sd_gpu_view_hash(const char *cvd);

/* Among the n ranks' views, rank me's position among the ranks on its
 * host that see the same device list (*index: how many of lower rank do;
 * *count: how many do in all, me included). */
void sd_gpu_share(const struct sd_gpu_view *views, int n, int me, int *index,
		  int *count);

/*
 * The device ordinal (among the `visible` devices CUDA reports) for a rank
 * that is number `index` of the `count` ranks on its host seeing the same
 * CUDA_VISIBLE_DEVICES list (sd_gpu_share): device `index`, which must
 * exist.  That covers every binding: nothing set or the whole node visible
 * to every task (by local rank), Slurm's --gpus-per-task (a list of one
 * GPU per task: device 0), and --gpu-bind=closest without --gpus-per-task
 * (the tasks of one socket share its list and take its GPUs in turn).
 * Returns the ordinal, or -1 with err naming the host, the ranks, the
 * devices and the fix (the caller returns SD_ERR_NODEV).
 */
int sd_nccl_pick_device(int index, int count, int visible,
			const struct sd_gpu_env *env, char *err, size_t errlen);

/* One rank's device identity, exchanged through the bootstrap to find two
 * ranks of the job on one GPU. */
struct sd_gpu_id {
	char host[64];
	char pci_bus_id[32];
	int32_t rank;
	int32_t device;
};

/*
 * Look for two ranks on the same host and PCI bus id in ids[0..n).
 * Returns SD_OK, or SD_ERR_NODEV with err naming both ranks, the host and
 * the GPU.
 */
int sd_nccl_check_unique(const struct sd_gpu_id *ids, int n, char *err,
			 size_t errlen);

#ifdef __cplusplus
}
#endif
#endif
