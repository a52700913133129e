/*
 * pmi2_probe.c - exercise the PMI2 bootstrap under `srun --mpi=pmi2`.
 *
 * Every task runs the same checks (all-gather of small and of large values
 * that need several KVS keys and contain ';', '=' and NUL, broadcasts from
 * several roots, barriers, hundreds of calls in a row, a second bootstrap
 * open beside the first); each check's verdict is gathered so that rank 0
 * prints one TAP line per check, naming the ranks where it failed.  Rank 0
 * also prints what the bootstrap learnt about the job as "# key=value"
 * lines for test/slurm_pmi2.t to compare with Slurm's view.
 * Exit status: 0 all passed, 1 a check failed, 3 the bootstrap failed.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bootstrap.h"

static int test_no;
static int any_failed;

/* Gather each rank's verdict; rank 0 prints the TAP line. */
static void verdict(struct sd_bootstrap *bs, int ok, const char *name)
{
	unsigned char mine = ok ? 1 : 0, *all = calloc((size_t)bs->size, 1);
	if (!all || bs->allgather(bs, &mine, all, 1)) {
		fprintf(stderr, "rank %d: cannot gather the verdict of '%s'\n",
			bs->rank, name);
		exit(3);
	}
	int all_ok = 1;
	for (int r = 0; r < bs->size; r++)
		all_ok &= all[r];
	any_failed |= !all_ok;
	if (bs->rank == 0) {
		printf("%sok %d - %s", all_ok ? "" : "not ", ++test_no, name);
		if (!all_ok) {
			printf(" # failed on ranks");
			for (int r = 0; r < bs->size; r++)
				if (!all[r])
					printf(" %d", r);
		}
		printf("\n");
		fflush(stdout);
	}
	free(all);
}

static unsigned char pattern(size_t i, int rank, int salt)
{
	return (unsigned char)(i * 7 + (size_t)rank * 13 + (size_t)salt * 31);
}

static int check_allgather_large(struct sd_bootstrap *bs, size_t len,
				 int salt)
{
	unsigned char *send = malloc(len ? len : 1);
	unsigned char *recv = malloc(len * (size_t)bs->size + 1);
	int ok = send && recv;
	for (size_t i = 0; ok && i < len; i++)
		send[i] = pattern(i, bs->rank, salt);
	if (ok && bs->allgather(bs, send, recv, len))
		ok = 0;
	for (int r = 0; ok && r < bs->size; r++)
		for (size_t i = 0; ok && i < len; i++)
			ok = recv[(size_t)r * len + i] == pattern(i, r, salt);
	free(send);
	free(recv);
	return ok;
}

static int check_bcast(struct sd_bootstrap *bs, size_t len, int root)
{
	unsigned char *buf = malloc(len ? len : 1);
	int ok = buf != NULL;
	for (size_t i = 0; ok && i < len; i++)
		buf[i] = bs->rank == root ? pattern(i, root, 5) : 0xee;
	if (ok && bs->bcast(bs, buf, len, root))
		ok = 0;
	for (size_t i = 0; ok && i < len; i++)
		ok = buf[i] == pattern(i, root, 5);
	free(buf);
	return ok;
}

static int env_equals_int(const char *name, int value)
{
	const char *v = getenv(name);
	return v && strtol(v, NULL, 10) == value;
}

int main(void)
{
	struct sd_bootstrap_impl *impl = NULL, *second = NULL;
	char err[512];
	int rc = sd_bootstrap_pmi2_open(&impl, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "pmi2_probe: %s\n", err);
		return 3;
	}
	struct sd_bootstrap *bs = &impl->bs;
	if (bs->rank == 0)
		printf("1..12\n");

	int ranks[4096] = {0}, ok = bs->size <= 4096;
	if (ok && bs->allgather(bs, &bs->rank, ranks, sizeof(int)))
		ok = 0;
	for (int r = 0; ok && r < bs->size; r++)
		ok = ranks[r] == r;
	verdict(bs, ok, "allgather of ranks");

	ok = check_allgather_large(bs, 3000, 1) &&
	     check_allgather_large(bs, 500, 2) &&
	     check_allgather_large(bs, 501, 3) &&
	     check_allgather_large(bs, 1, 4);
	verdict(bs, ok, "allgather of values over several keys "
		"(3000, 500, 501, 1 bytes)");

	ok = check_allgather_large(bs, 0, 0) && check_bcast(bs, 0, 0) &&
	     bs->barrier(bs) == SD_OK;
	verdict(bs, ok, "empty allgather, bcast and barrier");

	ok = 1;
	for (int root = 0; root < bs->size && root < 8; root++)
		ok &= check_bcast(bs, 2500, root);
	ok &= check_bcast(bs, 4, bs->size - 1);
	verdict(bs, ok, "bcast of 2500 bytes from each root");

	ok = 1;
	for (int i = 0; i < 5; i++)
		ok &= bs->barrier(bs) == SD_OK;
	verdict(bs, ok, "barriers");

	ok = 1;
	for (uint64_t i = 0; ok && i < 200; i++) {
		uint64_t mine[2] = {i, (uint64_t)bs->rank}, all[2 * 4096];
		if (bs->allgather(bs, mine, all, sizeof(mine)))
			ok = 0;
		for (int r = 0; ok && r < bs->size; r++)
			ok = all[2 * r] == i && all[2 * r + 1] == (uint64_t)r;
	}
	verdict(bs, ok, "200 allgathers in a row");

	rc = sd_bootstrap_pmi2_open(&second, err, sizeof(err));
	ok = rc == SD_OK;
	if (!ok)
		fprintf(stderr, "rank %d: second open: %s\n", bs->rank, err);
	/* Interleave calls on both: their keys must never collide. */
	for (int i = 0; ok && i < 3; i++)
		ok = check_allgather_large(bs, 700, 10 + i) &&
		     check_allgather_large(&second->bs, 700, 20 + i);
	if (second)
		second->close(second);
	verdict(bs, ok, "two bootstraps open at once");

	ok = check_allgather_large(bs, 64, 30);
	verdict(bs, ok, "first bootstrap works after the second closed");

	verdict(bs, env_equals_int("SLURM_LOCALID", bs->local_rank),
		"local rank is SLURM_LOCALID");
	verdict(bs, env_equals_int("SLURM_NTASKS", bs->size) ||
		    env_equals_int("SLURM_NPROCS", bs->size),
		"size is SLURM_NTASKS");
	verdict(bs, !strcmp(impl->job.launcher, "srun") &&
		    getenv("SLURM_JOB_ID") &&
		    !strcmp(impl->job.job_id, getenv("SLURM_JOB_ID")),
		"job facts come from Slurm");

	/* Every rank's placement, for the script to compare. */
	struct {
		char host[64];
		int32_t local_rank, local_size;
	} me, all[4096];
	memset(&me, 0, sizeof(me));
	snprintf(me.host, sizeof(me.host), "%s", bs->host);
	me.local_rank = bs->local_rank;
	me.local_size = bs->local_size;
	ok = bs->allgather(bs, &me, all, sizeof(me)) == SD_OK;
	verdict(bs, ok, "placement gathered");
	if (bs->rank == 0) {
		for (int r = 0; ok && r < bs->size; r++)
			printf("# rank=%d host=%s local_rank=%d local_size=%d\n",
			       r, all[r].host, all[r].local_rank,
			       all[r].local_size);
		printf("# size=%d nodelist=%s nnodes=%d tasks_per_node=%d "
		       "launcher=%s cluster=%s\n", bs->size,
		       impl->job.nodelist, impl->job.nnodes,
		       impl->job.tasks_per_node, impl->job.launcher,
		       impl->job.cluster);
		fflush(stdout);
	}
	impl->close(impl);
	return any_failed ? 1 : 0;
}
