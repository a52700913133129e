/*
 * coll.h - one descriptor per collective: how many bytes move, where the
 * buffers sit in place, and the bandwidth factors of nccl-tests and of the
 * DeepSpeed communication benchmark.
 *
 * Adding a collective adds one row to the table in coll.c (and the backend
 * support); the runner, printers and database read everything from here.
 */
#ifndef SD_COLL_H
#define SD_COLL_H

#include <stddef.h>
#include <stdint.h>
#include "shakedown/backend.h"

struct sd_coll {
	enum sd_op op;
	const char *name;
	int rooted;       /* takes -r ROOT */
	int reduces;      /* takes -o REDOP */
	int has_in_place; /* has an in-place variant */
	int min_ranks;    /* fewest ranks the op makes sense with */
	/* nccl-tests: per-rank send and receive element counts for a size
	 * holding `count` elements on `n` ranks */
	void (*counts)(size_t count, int n, size_t *send, size_t *recv);
	/* nccl-tests: busbw = algbw * factor */
	double (*busbw_factor)(int n);
	/* DeepSpeed: throughput = ds_size / duration * tput_factor, and
	 * busbw = ds_size / duration * busbw_factor; ds_size is the bytes of
	 * the rank's input tensor (send_count elements) */
	double (*ds_tput_factor)(int n);
	double (*ds_busbw_factor)(int n);
};

/* The row for op (never NULL for a valid op). */
const struct sd_coll *sd_coll_get(enum sd_op op);

/* nccl-tests' size in bytes of one measurement: max(send, recv) elements. */
size_t sd_coll_size_bytes(size_t send_count, size_t recv_count,
			  size_t type_size);

/*
 * Point args->sendbuf and args->recvbuf into the two buffers of a rank:
 * out of place they are `sendbase` and `recvbase`; in place both are inside
 * `recvbase` at nccl-tests' offsets.  Counts, dtype, op and root must be set.
 */
void sd_coll_place(struct sd_op_args *args, int me, void *sendbase,
		   void *recvbase);

/* Bytes each of the two buffers needs for a size of `max_bytes`. */
size_t sd_coll_buffer_bytes(const struct sd_coll *c, uint64_t max_bytes,
			    size_t type_size, int n);

/* algbw in GB/s (1e9 bytes per second) of size_bytes moved in time_us. */
double sd_algbw_gbs(size_t size_bytes, double time_us);

/* DeepSpeed's throughput and busbw in Gbps (1e9 bits per second). */
void sd_ds_bandwidth(const struct sd_coll *c, int n, size_t ds_size_bytes,
		     double time_us, double *tput_gbps, double *busbw_gbps);

/*
 * The sizes from min to max (inclusive): multiplied by factor when factor
 * > 1, else increased by step.  Returns the count written (at most cap);
 * with out == NULL only counts.
 */
size_t sd_size_series(uint64_t min, uint64_t max, double factor,
		      uint64_t step, uint64_t *out, size_t cap);

#endif
