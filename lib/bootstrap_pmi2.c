/*
 * bootstrap_pmi2.c - the bootstrap under `srun --mpi=pmi2` (see bootstrap.h).
 *
 * Slurm's PMI2 gives each task its rank and the job size, and a key-value
 * space (KVS) shared by the whole step with three calls: put, fence (a
 * collective that publishes every put) and get.  The collectives of struct
 * sd_bootstrap are built on them:
 *   allgather  every rank puts its bytes, fence, every rank gets all;
 *   bcast      the root puts, fence, every other rank gets;
 *   barrier    a fence with nothing put.
 * Values are hex (PMI2 values may not hold ';' and are at most
 * PMI2_MAX_VALLEN characters), split over several keys when long.  Keys are
 * "sd<gen>.<seq>.<rank>.<chunk>": <gen> counts bootstrap opens in this
 * process and <seq> counts collective calls, so no two calls ever share a
 * key; both advance identically on every rank because every rank makes the
 * same calls in the same order.
 *
 * Host identity comes from Slurm (SLURMD_NODENAME, else gethostname()), the
 * place on the host from SLURM_LOCALID and PMI_process_mapping (else
 * SLURM_TASKS_PER_NODE), and all of it is checked against the host names
 * the ranks report through the KVS, so a broken mapping fails at start-up
 * rather than pinning two ranks to one GPU.
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <slurm/pmi2.h>

#include "bootstrap.h"
#include "hostlist.h"
#include "util.h"

/* Hex characters stored under one key: below PMI2_MAX_VALLEN, even. */
#define CHUNK_HEX 1000
#define CHUNK_BYTES (CHUNK_HEX / 2)
#define HOST_MAX 128

struct pmi2_ctx {
	unsigned gen;           /* which open of this process */
	unsigned long seq;      /* collective calls so far */
	char host[HOST_MAX];
	char error[512];
	char value[PMI2_MAX_VALLEN + 1]; /* scratch for one get */
};

/* What every rank tells the others at open time. */
struct pmi2_rank_rec {
	char host[HOST_MAX];
	int32_t local_id;   /* SLURM_LOCALID, -1 when unset */
	int32_t node_id;    /* SLURM_NODEID, -1 when unset */
};

static int pmi2_opens;     /* open bootstraps: Finalize with the last one */
static unsigned pmi2_gen;  /* opens so far, for key namespaces */

static int fail(struct pmi2_ctx *c, int status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(struct pmi2_ctx *c, int status, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(c->error, sizeof(c->error), fmt, ap);
	va_end(ap);
	return status;
}

static void make_key(const struct pmi2_ctx *c, int rank, size_t chunk,
		     char *key, size_t keylen)
{
	snprintf(key, keylen, "sd%u.%lu.%d.%zu", c->gen, c->seq, rank, chunk);
}

/* Put `len` bytes under this call's keys for `rank`. */
static int put_bytes(struct pmi2_ctx *c, int rank, const void *data,
		     size_t len)
{
	char key[PMI2_MAX_KEYLEN], hex[CHUNK_HEX + 1];
	const unsigned char *p = data;
	for (size_t chunk = 0; chunk * CHUNK_BYTES < len; chunk++) {
		size_t off = chunk * CHUNK_BYTES;
		size_t n = len - off < CHUNK_BYTES ? len - off : CHUNK_BYTES;
		sd_hex_encode(p + off, n, hex);
		make_key(c, rank, chunk, key, sizeof(key));
		int prc = PMI2_KVS_Put(key, hex);
		if (prc != PMI2_SUCCESS)
			return fail(c, SD_ERR_BOOTSTRAP, "pmi2: KVS put of '%s' "
				    "failed (PMI2 error %d); is the step "
				    "launched with 'srun --mpi=pmi2'?",
				    key, prc);
	}
	return SD_OK;
}

/* Get the `len` bytes `rank` put in this call. */
static int get_bytes(struct pmi2_ctx *c, int rank, void *data, size_t len)
{
	char key[PMI2_MAX_KEYLEN];
	unsigned char *p = data;
	for (size_t chunk = 0; chunk * CHUNK_BYTES < len; chunk++) {
		size_t off = chunk * CHUNK_BYTES;
		size_t n = len - off < CHUNK_BYTES ? len - off : CHUNK_BYTES;
		int vallen = 0;
		make_key(c, rank, chunk, key, sizeof(key));
		int prc = PMI2_KVS_Get(NULL, rank, key, c->value,
				       (int)sizeof(c->value), &vallen);
		if (prc != PMI2_SUCCESS)
			return fail(c, SD_ERR_BOOTSTRAP, "pmi2: KVS get of '%s' "
				    "from rank %d failed (PMI2 error %d); every "
				    "rank must make the same bootstrap calls "
				    "with the same sizes", key, rank, prc);
		if ((size_t)vallen != 2 * n || strlen(c->value) != 2 * n ||
		    sd_hex_decode(c->value, p + off, n))
			return fail(c, SD_ERR_BOOTSTRAP, "pmi2: KVS value '%s' "
				    "from rank %d has %d characters, expected "
				    "%zu hex digits; ranks disagree on the size "
				    "of a bootstrap call", key, rank, vallen,
				    2 * n);
	}
	return SD_OK;
}

static int fence(struct pmi2_ctx *c)
{
	int prc = PMI2_KVS_Fence();
	if (prc != PMI2_SUCCESS)
		return fail(c, SD_ERR_BOOTSTRAP, "pmi2: KVS fence failed "
			    "(PMI2 error %d); a task of the step may have "
			    "exited", prc);
	return SD_OK;
}

static int pmi2_allgather(struct sd_bootstrap *bs, const void *send,
			  void *recv, size_t len)
{
	struct pmi2_ctx *c = bs->ctx;
	int rc = put_bytes(c, bs->rank, send, len);
	if (!rc)
		rc = fence(c);
	for (int r = 0; !rc && r < bs->size; r++) {
		char *dst = (char *)recv + (size_t)r * len;
		if (r == bs->rank)
			memmove(dst, send, len);
		else
			rc = get_bytes(c, r, dst, len);
	}
	c->seq++;
	return rc;
}

static int pmi2_bcast(struct sd_bootstrap *bs, void *buf, size_t len,
		      int root)
{
	struct pmi2_ctx *c = bs->ctx;
	int rc = SD_OK;
	if (root < 0 || root >= bs->size)
		return fail(c, SD_ERR_INVALID, "pmi2: broadcast root %d is not "
			    "a rank of this job of %d", root, bs->size);
	if (bs->rank == root)
		rc = put_bytes(c, root, buf, len);
	if (!rc)
		rc = fence(c);
	if (!rc && bs->rank != root)
		rc = get_bytes(c, root, buf, len);
	c->seq++;
	return rc;
}

static int pmi2_barrier(struct sd_bootstrap *bs)
{
	struct pmi2_ctx *c = bs->ctx;
	int rc = fence(c);
	c->seq++;
	return rc;
}

static void pmi2_close(struct sd_bootstrap_impl *impl)
{
	if (!impl)
		return;
	if (impl->bs.ctx && pmi2_opens > 0 && --pmi2_opens == 0)
		PMI2_Finalize();
	free(impl->bs.ctx);
	free(impl);
}

static const char *pmi2_last_error(struct sd_bootstrap_impl *impl)
{
	struct pmi2_ctx *c = impl->bs.ctx;
	return c ? c->error : "";
}

static void copy_env(char *dst, size_t len, const char *name)
{
	const char *v = getenv(name);
	snprintf(dst, len, "%s", v ? v : "");
}

static int env_int(const char *name, int dflt)
{
	const char *v = getenv(name);
	char *end;
	long n;
	if (!v || !*v)
		return dflt;
	errno = 0;
	n = strtol(v, &end, 10);
	if (errno || *end || n < 0 || n > (1 << 24))
		return dflt;
	return (int)n;
}

/*
 * Expand PMI_process_mapping, "(vector,(start,nodes,per_node),...)", into
 * the node index of every rank; the blocks repeat until all `size` ranks
 * are placed (that is how cyclic distributions are written).  Returns 0, or
 * -1 when the text is not such a mapping.
 */
static int parse_mapping(const char *s, int size, int *node_of)
{
	int blocks[64][3], nb = 0, total = 0;
	const char *p = strstr(s, "vector,");
	if (!p)
		return -1;
	p += strlen("vector,");
	while (*p == '(' && nb < 64) {
		char *end;
		for (int i = 0; i < 3; i++) {
			long v = strtol(p + 1, &end, 10);
			if (end == p + 1 || v < 0 || v > (1 << 24) ||
			    *end != (i < 2 ? ',' : ')'))
				return -1;
			blocks[nb][i] = (int)v;
			p = end;
		}
		total += blocks[nb][1] * blocks[nb][2];
		nb++;
		p++;
		if (*p == ',')
			p++;
	}
	if (*p != ')' || !total)
		return -1;
	for (int r = 0; r < size;)
		for (int b = 0; b < nb && r < size; b++)
			for (int n = 0; n < blocks[b][1] && r < size; n++)
				for (int t = 0; t < blocks[b][2] && r < size;
				     t++)
					node_of[r++] = blocks[b][0] + n;
	return 0;
}

/* Tasks on node `node` from SLURM_TASKS_PER_NODE ("2(x3),1"), or -1. */
static int tasks_on_node(const char *tpn, int node)
{
	const char *p = tpn;
	int idx = 0;
	while (p && *p) {
		char *end;
		long count = strtol(p, &end, 10), rep = 1;
		if (end == p || count < 0)
			return -1;
		p = end;
		if (p[0] == '(' && p[1] == 'x') {
			rep = strtol(p + 2, &end, 10);
			if (end == p + 2 || *end != ')' || rep < 1)
				return -1;
			p = end + 1;
		}
		if (node < idx + rep)
			return (int)count;
		idx += (int)rep;
		if (*p == ',')
			p++;
		else if (*p)
			return -1;
	}
	return -1;
}

/*
 * Work out local rank and size, check them against the gathered host names
 * and fill the job facts.  Every rank sees the same records and the same
 * mapping, so every rank reaches the same verdict.
 */
static int place_ranks(struct sd_bootstrap_impl *impl, struct pmi2_ctx *c,
		       const struct pmi2_rank_rec *recs)
{
	struct sd_bootstrap *bs = &impl->bs;
	int n = bs->size, me = bs->rank, rc = SD_OK, found = 0;
	int *node_of = calloc((size_t)n, sizeof(int));
	const char **hosts = calloc((size_t)n, sizeof(char *));
	char mapping[PMI2_MAX_ATTRVALUE + 1] = "";
	char *list = NULL;
	if (!node_of || !hosts) {
		rc = fail(c, SD_ERR_NOMEM, "pmi2: out of memory placing %d "
			  "ranks", n);
		goto out;
	}
	for (int r = 0; r < n; r++)
		hosts[r] = recs[r].host;

	/* Ranks per host name, as the ranks themselves report it. */
	int same_host = 0, index_on_host = 0, max_per_host = 0, nnodes = 0;
	for (int r = 0; r < n; r++) {
		int count = 0, first = -1;
		for (int q = 0; q < n; q++)
			if (!strcmp(recs[q].host, recs[r].host)) {
				count++;
				if (first < 0)
					first = q;
			}
		if (first == r)
			nnodes++;
		max_per_host = count > max_per_host ? count : max_per_host;
		if (!strcmp(recs[r].host, recs[me].host)) {
			same_host++;
			if (r < me)
				index_on_host++;
		}
	}

	if (PMI2_Info_GetJobAttr("PMI_process_mapping", mapping,
				 (int)sizeof(mapping) - 1, &found) !=
		    PMI2_SUCCESS ||
	    !found)
		mapping[0] = '\0';
	if (mapping[0] && parse_mapping(mapping, n, node_of) == 0) {
		/* Same node in the mapping <=> same host name. */
		for (int r = 0; r < n; r++)
			for (int q = r + 1; q < n; q++) {
				int same_node = node_of[r] == node_of[q];
				int same_name = !strcmp(recs[r].host,
							recs[q].host);
				if (same_node == same_name)
					continue;
				rc = fail(c, SD_ERR_BOOTSTRAP, "pmi2: ranks %d "
					  "and %d report hosts '%s' and '%s' "
					  "but PMI_process_mapping '%s' puts "
					  "them on %s; give every node its own "
					  "name (SLURMD_NODENAME or hostname)",
					  r, q, recs[r].host, recs[q].host,
					  mapping, same_node ?
					  "the same node" : "different nodes");
				goto out;
			}
	} else {
		/* No mapping: the task count of our node must still agree. */
		const char *tpn = getenv("SLURM_TASKS_PER_NODE");
		int want = recs[me].node_id >= 0 && tpn ?
			tasks_on_node(tpn, recs[me].node_id) : -1;
		if (want >= 0 && want != same_host) {
			rc = fail(c, SD_ERR_BOOTSTRAP, "pmi2: "
				  "SLURM_TASKS_PER_NODE='%s' gives node %d %d "
				  "tasks but %d ranks report host '%s'; give "
				  "every node its own name (SLURMD_NODENAME or "
				  "hostname)", tpn, recs[me].node_id, want,
				  same_host, recs[me].host);
			goto out;
		}
	}
	for (int r = 0; r < n; r++) {
		int idx = 0;
		for (int q = 0; q < r; q++)
			idx += !strcmp(recs[q].host, recs[r].host);
		if (recs[r].local_id >= 0 && recs[r].local_id != idx) {
			rc = fail(c, SD_ERR_BOOTSTRAP, "pmi2: rank %d has "
				  "SLURM_LOCALID=%d but is task %d of the "
				  "ranks on host '%s'; tasks on one node must "
				  "be numbered in rank order", r,
				  recs[r].local_id, idx, recs[r].host);
			goto out;
		}
	}
	bs->local_rank = index_on_host;
	bs->local_size = same_host;

	list = sd_hostlist_compress(hosts, n);
	if (!list) {
		rc = fail(c, SD_ERR_NOMEM, "pmi2: out of memory compressing "
			  "the host list");
		goto out;
	}
	snprintf(impl->job.launcher, sizeof(impl->job.launcher), "srun");
	copy_env(impl->job.cluster, sizeof(impl->job.cluster),
		 "SLURM_CLUSTER_NAME");
	copy_env(impl->job.job_id, sizeof(impl->job.job_id), "SLURM_JOB_ID");
	copy_env(impl->job.step_id, sizeof(impl->job.step_id),
		 "SLURM_STEP_ID");
	snprintf(impl->job.nodelist, sizeof(impl->job.nodelist), "%s", list);
	impl->job.nnodes = nnodes;
	impl->job.tasks_per_node = max_per_host;
out:
	free(list);
	free(hosts);
	free(node_of);
	return rc;
}

int sd_bootstrap_pmi2_open(struct sd_bootstrap_impl **out, char *err,
			   size_t errlen)
{
	struct sd_bootstrap_impl *impl = calloc(1, sizeof(*impl));
	struct pmi2_ctx *c = calloc(1, sizeof(*c));
	struct pmi2_rank_rec mine, *recs = NULL;
	int spawned = 0, size = 0, rank = 0, appnum = 0, prc, rc;
	*out = NULL;
	if (!impl || !c) {
		snprintf(err, errlen, "pmi2: out of memory");
		free(impl);
		free(c);
		return SD_ERR_NOMEM;
	}
	impl->bs.ctx = c;
	impl->close = pmi2_close;
	impl->last_error = pmi2_last_error;

	if (PMI2_Initialized()) {
		prc = PMI2_Job_GetRank(&rank);
		if (prc == PMI2_SUCCESS)
			prc = PMI2_Info_GetSize(&size);
	} else {
		prc = PMI2_Init(&spawned, &size, &rank, &appnum);
	}
	if (prc != PMI2_SUCCESS || size < 1 || rank < 0 || rank >= size) {
		snprintf(err, errlen, "pmi2: PMI2_Init failed (PMI2 error %d, "
			 "rank %d of %d); run under 'srun --mpi=pmi2'", prc,
			 rank, size);
		impl->bs.ctx = NULL;
		free(c);
		free(impl);
		return SD_ERR_BOOTSTRAP;
	}
	pmi2_opens++;
	c->gen = ++pmi2_gen;

	const char *node = getenv("SLURMD_NODENAME");
	if (node && *node)
		snprintf(c->host, sizeof(c->host), "%s", node);
	else if (gethostname(c->host, sizeof(c->host) - 1) != 0 || !c->host[0])
		snprintf(c->host, sizeof(c->host), "localhost");

	impl->bs.rank = rank;
	impl->bs.size = size;
	impl->bs.local_rank = 0;
	impl->bs.local_size = 1;
	impl->bs.host = c->host;
	impl->bs.allgather = pmi2_allgather;
	impl->bs.bcast = pmi2_bcast;
	impl->bs.barrier = pmi2_barrier;

	memset(&mine, 0, sizeof(mine));
	snprintf(mine.host, sizeof(mine.host), "%s", c->host);
	mine.local_id = env_int("SLURM_LOCALID", -1);
	mine.node_id = env_int("SLURM_NODEID", -1);
	recs = calloc((size_t)size, sizeof(*recs));
	if (!recs) {
		rc = fail(c, SD_ERR_NOMEM, "pmi2: out of memory for %d ranks",
			  size);
		goto fail;
	}
	rc = pmi2_allgather(&impl->bs, &mine, recs, sizeof(mine));
	if (rc)
		goto fail;
	for (int r = 0; r < size; r++)
		recs[r].host[HOST_MAX - 1] = '\0';
	rc = place_ranks(impl, c, recs);
	if (rc)
		goto fail;
	free(recs);
	*out = impl;
	return SD_OK;
fail:
	snprintf(err, errlen, "%s", c->error);
	free(recs);
	pmi2_close(impl);
	return rc;
}
