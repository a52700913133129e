/*
 * bootstrap.c - choose a bootstrap from the environment, and helpers built
 * on any bootstrap (see bootstrap.h).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bootstrap.h"
#include "util.h"

int sd_bootstrap_open(struct sd_bootstrap_impl **out, char *err, size_t errlen)
{
	const char *fd = getenv("SHAKEDOWN_LOCAL_FD");
	if (fd && *fd) {
		char *end;
		long v = strtol(fd, &end, 10);
		if (*end || v < 0) {
			snprintf(err, errlen, "SHAKEDOWN_LOCAL_FD='%s' is not a "
				 "file descriptor; it is set by --local, do not "
				 "set it by hand", fd);
			return SD_ERR_BOOTSTRAP;
		}
		return sd_bootstrap_local_open((int)v, out, err, errlen);
	}
	if (getenv("SLURM_PROCID") && getenv("SLURM_STEP_ID")) {
		if (!getenv("PMI_FD")) {
			snprintf(err, errlen, "launched by srun without PMI2 "
				 "(SLURM_PROCID is set, PMI_FD is not); use "
				 "'srun --mpi=pmi2' or set MpiDefault=pmi2 in "
				 "slurm.conf");
			return SD_ERR_BOOTSTRAP;
		}
#ifdef HAVE_PMI2
		return sd_bootstrap_pmi2_open(out, err, errlen);
#else
		snprintf(err, errlen, "launched by srun, but this shakedown "
			 "was built without PMI2; install libpmi2-0-dev and "
			 "rebuild");
		return SD_ERR_BOOTSTRAP;
#endif
	}
	return sd_bootstrap_single_open(out, err, errlen);
}

int sd_bootstrap_allgatherv(struct sd_bootstrap *bs, const void *mine,
			    size_t len, char **out, size_t **lens,
			    size_t **offs)
{
	int n = bs->size, rc;
	uint64_t my_len = len, *all_len = calloc((size_t)n, sizeof(uint64_t));
	char *padded = NULL, *all = NULL;
	*out = NULL;
	*lens = calloc((size_t)n, sizeof(size_t));
	*offs = calloc((size_t)n, sizeof(size_t));
	if (!all_len || !*lens || !*offs) {
		rc = SD_ERR_NOMEM;
		goto fail;
	}
	rc = bs->allgather(bs, &my_len, all_len, sizeof(uint64_t));
	if (rc)
		goto fail;
	size_t max = 0, total = 0;
	for (int r = 0; r < n; r++) {
		max = all_len[r] > max ? all_len[r] : max;
		total += all_len[r];
	}
	padded = calloc(1, max ? max : 1);
	all = malloc(max * (size_t)n + 1);
	*out = malloc(total + 1);
	if (!padded || !all || !*out) {
		rc = SD_ERR_NOMEM;
		goto fail;
	}
	memcpy(padded, mine, len);
	if (max) {
		rc = bs->allgather(bs, padded, all, max);
		if (rc)
			goto fail;
	}
	size_t off = 0;
	for (int r = 0; r < n; r++) {
		(*lens)[r] = all_len[r];
		(*offs)[r] = off;
		memcpy(*out + off, all + (size_t)r * max, all_len[r]);
		off += all_len[r];
	}
	(*out)[total] = '\0';
	free(all_len);
	free(padded);
	free(all);
	return SD_OK;
fail:
	free(all_len);
	free(padded);
	free(all);
	free(*out);
	free(*lens);
	free(*offs);
	*out = NULL;
	*lens = *offs = NULL;
	return rc;
}
