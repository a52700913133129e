/*
 * nccl_host.h - the host-side decisions of the NCCL plugin, as pure C
 * functions without CUDA or NCCL, so the unit tests (test/unit_nccl.c) run
 * them on any machine: type and reduction mapping, the support rules for fp8
 * and avg, memory capping, GPU choice from the environment, and the
 * per-communicator NCCL_* environment hook.
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
	const char *slurm_step_gpus;      /* SLURM_STEP_GPUS or NULL */
	const char *slurm_job_gpus;       /* SLURM_JOB_GPUS or NULL */
	const char *host;                 /* for messages */
};

/* Count the entries of a comma-separated list ("0,1,3" -> 3; NULL or ""
 * -> 0). */
int sd_list_count(const char *list);

/*
 * The device ordinal (among the `visible` devices CUDA reports) for local
 * rank `local_rank` of `local_size`:
 *   - Slurm per-task binding (CUDA_VISIBLE_DEVICES lists fewer GPUs than
 *     SLURM_STEP_GPUS or SLURM_JOB_GPUS), or exactly one visible device:
 *     device 0, the task's own;
 *   - otherwise device `local_rank`, which must exist.
 * Returns the ordinal, or -1 with err naming the host, the ranks, the
 * devices and the fix (the caller returns SD_ERR_NODEV).
 */
int sd_nccl_pick_device(int local_rank, int local_size, int visible,
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

/*
 * Per-communicator NCCL environment.  `spec` holds "NAME=VALUE" pairs
 * separated by spaces or semicolons (e.g. "NCCL_ALGO=Ring NCCL_PROTO=LL");
 * only NCCL_* names are accepted.  sd_nccl_env_apply() sets them in the
 * process environment and records the previous values in *saved (freed and
 * restored by sd_nccl_env_restore()).  Returns SD_OK or SD_ERR_INVALID
 * naming the bad pair (nothing is changed then).
 */
struct sd_env_saved {
	int n;
	char *name[32];
	char *old[32]; /* NULL: was unset */
};
int sd_nccl_env_apply(const char *spec, struct sd_env_saved *saved, char *err,
		      size_t errlen);
void sd_nccl_env_restore(struct sd_env_saved *saved);

#ifdef __cplusplus
}
#endif
#endif
