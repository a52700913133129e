/*
 * coll.c - the table of collectives (see coll.h).
 *
 * Byte counts and busbw factors follow nccl-tests (doc/PERFORMANCE.md):
 * all_reduce moves 2(n-1)/n of the data over the busiest link; all_gather,
 * reduce_scatter, all_to_all, gather and scatter (n-1)/n; broadcast,
 * reduce, sendrecv and pt2pt 1.  DeepSpeed's factors follow its
 * benchmarks/communication utils.get_bw: all_reduce throughput is
 * 2 x size / duration, all_gather scales size by n.
 */
#include "config.h"

#include <string.h>

#include "coll.h"
#include "shakedown/pattern.h"

static void counts_same(size_t count, int n, size_t *s, size_t *r)
{
	*s = *r = count;
}

static void counts_gather(size_t count, int n, size_t *s, size_t *r)
{
	*s = count / (size_t)n;
	*r = *s * (size_t)n;
}

static void counts_scatter(size_t count, int n, size_t *s, size_t *r)
{
	*r = count / (size_t)n;
	*s = *r * (size_t)n;
}

static void counts_alltoall(size_t count, int n, size_t *s, size_t *r)
{
	*s = *r = count / (size_t)n * (size_t)n;
}

static double f_one(int n) { return 1.0; }
static double f_n(int n) { return n; }
static double f_ring(int n) { return (double)(n - 1) / n; }
static double f_allreduce(int n) { return 2.0 * (n - 1) / n; }
static double f_two(int n) { return 2.0; }
static double f_nminus1(int n) { return n - 1; }

static const struct sd_coll table[SD_OP_COUNT] = {
	[SD_OP_ALL_REDUCE] = { SD_OP_ALL_REDUCE, "all_reduce", 0, 1, 1, 1,
			       counts_same, f_allreduce, f_two, f_allreduce },
	[SD_OP_ALL_GATHER] = { SD_OP_ALL_GATHER, "all_gather", 0, 0, 1, 1,
			       counts_gather, f_ring, f_n, f_nminus1 },
	[SD_OP_REDUCE_SCATTER] = { SD_OP_REDUCE_SCATTER, "reduce_scatter", 0,
				   1, 1, 1, counts_scatter, f_ring, f_one,
				   f_ring },
	[SD_OP_ALL_TO_ALL] = { SD_OP_ALL_TO_ALL, "all_to_all", 0, 0, 0, 1,
			       counts_alltoall, f_ring, f_one, f_ring },
	[SD_OP_BROADCAST] = { SD_OP_BROADCAST, "broadcast", 1, 0, 1, 1,
			      counts_same, f_one, f_one, f_one },
	[SD_OP_REDUCE] = { SD_OP_REDUCE, "reduce", 1, 1, 1, 1, counts_same,
			   f_one, f_one, f_one },
	[SD_OP_GATHER] = { SD_OP_GATHER, "gather", 1, 0, 1, 1, counts_gather,
			   f_ring, f_n, f_nminus1 },
	[SD_OP_SCATTER] = { SD_OP_SCATTER, "scatter", 1, 0, 1, 1,
			    counts_scatter, f_ring, f_one, f_ring },
	[SD_OP_SENDRECV] = { SD_OP_SENDRECV, "sendrecv", 0, 0, 0, 1,
			     counts_same, f_one, f_one, f_one },
	[SD_OP_PT2PT] = { SD_OP_PT2PT, "pt2pt", 0, 0, 0, 2, counts_same,
			  f_one, f_one, f_one },
};

const struct sd_coll *sd_coll_get(enum sd_op op)
{
	if ((int)op < 0 || op >= SD_OP_COUNT)
		return NULL;
	return &table[op];
}

size_t sd_coll_size_bytes(size_t send_count, size_t recv_count,
			  size_t type_size)
{
	return (send_count > recv_count ? send_count : recv_count) * type_size;
}

void sd_coll_place(struct sd_op_args *a, int me, void *sendbase,
		   void *recvbase)
{
	size_t ts = sd_dtype_size(a->dtype);
	char *r = recvbase;
	if (!a->in_place) {
		a->sendbuf = sendbase;
		a->recvbuf = recvbase;
		return;
	}
	switch (a->op) {
	case SD_OP_ALL_GATHER:
	case SD_OP_GATHER:
		a->recvbuf = r;
		a->sendbuf = r + (size_t)me * a->send_count * ts;
		break;
	case SD_OP_REDUCE_SCATTER:
	case SD_OP_SCATTER:
		a->sendbuf = r;
		a->recvbuf = r + (size_t)me * a->recv_count * ts;
		break;
	default:
		a->sendbuf = a->recvbuf = r;
		break;
	}
}

size_t sd_coll_buffer_bytes(const struct sd_coll *c, uint64_t max_bytes,
			    size_t type_size, int n)
{
	size_t s, r;
	c->counts((size_t)(max_bytes / type_size), n, &s, &r);
	return sd_coll_size_bytes(s, r, type_size);
}

double sd_algbw_gbs(size_t size_bytes, double time_us)
{
	if (!(time_us > 0))
		return 0;
	return (double)size_bytes / (time_us * 1e-6) / 1e9;
}

void sd_ds_bandwidth(const struct sd_coll *c, int n, size_t ds_size_bytes,
		     double time_us, double *tput_gbps, double *busbw_gbps)
{
	double per_s = time_us > 0 ? (double)ds_size_bytes / (time_us * 1e-6)
				   : 0;
	*tput_gbps = per_s * c->ds_tput_factor(n) * 8 / 1e9;
	*busbw_gbps = per_s * c->ds_busbw_factor(n) * 8 / 1e9;
}

size_t sd_size_series(uint64_t min, uint64_t max, double factor,
		      uint64_t step, uint64_t *out, size_t cap)
{
	size_t k = 0;
	if (min == 0 || max < min)
		return 0;
	for (uint64_t s = min; s <= max && k < cap;) {
		if (out)
			out[k] = s;
		k++;
		uint64_t next = factor > 1 ? (uint64_t)((double)s * factor)
					   : s + step;
		if (next <= s)
			break;
		s = next;
	}
	return k;
}
