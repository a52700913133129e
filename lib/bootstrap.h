/*
 * bootstrap.h - how ranks find each other before any backend exists.
 *
 * A bootstrap gives every process its rank, the job size, its place on the
 * host and three collectives over bytes (struct sd_bootstrap in
 * include/shakedown/backend.h).  Implementations:
 *   local  (bootstrap_local.c)  `--local N`: the launcher forks N ranks that
 *                               rendezvous through the launcher process;
 *   pmi2   (bootstrap_pmi2.c)   under `srun --mpi=pmi2`, Slurm's PMI2 KVS;
 *   single (bootstrap_local.c)  one process, no launcher.
 * sd_bootstrap_open() picks one from the environment.
 */
#ifndef SD_BOOTSTRAP_H
#define SD_BOOTSTRAP_H

#include <stddef.h>
#include <stdint.h>
#include "shakedown/backend.h"

/* Facts about the job that launched us, for headers and the database.
 * Strings are empty when unknown. */
struct sd_job_info {
	char launcher[16];   /* "local", "srun", "single" */
	char cluster[64];    /* SLURM_CLUSTER_NAME */
	char job_id[32];     /* SLURM_JOB_ID */
	char step_id[32];    /* SLURM_STEP_ID */
	char nodelist[1024]; /* Slurm hostlist of the step, e.g. node[01-04] */
	int nnodes;          /* distinct hosts */
	int tasks_per_node;  /* max tasks on one host */
};

/* An open bootstrap: the ABI struct plus what only the core needs. */
struct sd_bootstrap_impl {
	struct sd_bootstrap bs; /* first: lent to plugins as is */
	struct sd_job_info job;
	/* Tear down; safe to call after a failure. */
	void (*close)(struct sd_bootstrap_impl *impl);
	/* Text of the last failure ("" when none); owned by the bootstrap. */
	const char *(*last_error)(struct sd_bootstrap_impl *impl);
};

/*
 * Open the bootstrap that fits the environment: the local launcher's (when
 * SHAKEDOWN_LOCAL_FD is set by `--local`), PMI2 (under srun with PMI_FD), or
 * single.  Returns SD_OK and *out (owned by the caller, freed by close()),
 * or an sd_status with a message in err: SD_ERR_BOOTSTRAP for srun without
 * PMI2, naming the fix.
 */
int sd_bootstrap_open(struct sd_bootstrap_impl **out, char *err, size_t errlen);

/* The first word of a local launcher's reply that carries an error (a
 * length and the message follow) instead of the ranks' contributions. */
#define SD_LOCAL_REPLY_ERROR UINT64_MAX

/* Implementations, used by sd_bootstrap_open(). */
int sd_bootstrap_local_open(int fd, struct sd_bootstrap_impl **out, char *err,
			    size_t errlen);
int sd_bootstrap_single_open(struct sd_bootstrap_impl **out, char *err,
			     size_t errlen);
#ifdef HAVE_PMI2
int sd_bootstrap_pmi2_open(struct sd_bootstrap_impl **out, char *err,
			   size_t errlen);
#endif

/*
 * Gather variable-length byte strings from all ranks.  *out receives one
 * malloc'd block holding size strings back to back; lens[r] and offs[r] (each
 * an array of bs->size entries, malloc'd) locate rank r's.  The caller frees
 * all three.
 */
int sd_bootstrap_allgatherv(struct sd_bootstrap *bs, const void *mine,
			    size_t len, char **out, size_t **lens,
			    size_t **offs);

#endif
