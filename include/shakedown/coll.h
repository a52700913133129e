/*
 * coll.h - one descriptor per collective, for the core, the printers, the
 * plan expander and every backend plugin.
 *
 * SD_COLLECTIVES below is the table: one row per collective, in the order
 * of enum sd_op (which it defines; the order is part of the plugin ABI, so
 * a new collective is appended).  A row says what a collective is: its
 * name; whether it takes a root and a reduction; whether it has an in-place
 * variant; the fewest ranks it makes sense with; how the per-rank element
 * counts follow from a size (nccl-tests' conventions); where the send
 * buffer sits inside the receive buffer in place; which ranks send and
 * which receive; what a receiving rank expects (shakedown/pattern.h
 * computes the value); and the bandwidth factors of nccl-tests (busbw =
 * algbw x factor, doc/PERFORMANCE.md there) and of the DeepSpeed
 * communication benchmark (utils.get_bw there).
 *
 * Adding a collective (say alltoallv) means one row here, a case in each
 * enum below that the row needs and does not have yet, and one case in each
 * backend's "run this op" switch.  Everything is static inline and usable
 * from CUDA device code (SD_HD), so a plugin builds against the installed
 * headers alone.
 */
#ifndef SHAKEDOWN_COLL_H
#define SHAKEDOWN_COLL_H

#include <stddef.h>
#include <stdint.h>

#ifndef SD_HD
#if defined(__CUDACC__)
#define SD_HD __host__ __device__
#else
#define SD_HD
#endif
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Per-rank element counts for a size of `count` elements on n ranks. */
enum sd_counts {
	SD_COUNTS_SAME,     /* send = recv = count */
	SD_COUNTS_GATHER,   /* send = count/n, recv = send*n */
	SD_COUNTS_SCATTER,  /* recv = count/n, send = recv*n */
	SD_COUNTS_ALLTOALL, /* send = recv = (count/n)*n */
};

/* Where the buffers sit in place (out of place they are separate). */
enum sd_place {
	SD_PLACE_SAME,         /* send and receive are one buffer */
	SD_PLACE_SEND_IN_RECV, /* send is this rank's block of recv (gather) */
	SD_PLACE_RECV_IN_SEND, /* recv is this rank's block of send (scatter) */
};

/* Which ranks send, or receive something to check. */
enum sd_role {
	SD_ROLE_ALL,   /* every rank */
	SD_ROLE_ROOT,  /* the root only */
	SD_ROLE_RANK0, /* rank 0 only (DeepSpeed's pt2pt sender) */
	SD_ROLE_RANK1, /* rank 1 only (DeepSpeed's pt2pt receiver) */
};

/* What a receiving rank expects at receive index j. */
enum sd_expect {
	SD_EXPECT_REDUCED,       /* the reduction of every rank's input at j */
	SD_EXPECT_REDUCED_BLOCK, /* the same, at this rank's block: me*recv+j */
	SD_EXPECT_CONCAT,        /* rank j/send's data at j%send */
	SD_EXPECT_ROOT,          /* the root's data at j */
	SD_EXPECT_ROOT_BLOCK,    /* the root's data at me*recv+j */
	SD_EXPECT_TRANSPOSE,     /* peer j/c's data at me*c+j%c, c=recv/n */
	SD_EXPECT_PREV,          /* rank (me-1)'s data at j (a ring) */
	SD_EXPECT_RANK0,         /* rank 0's data at j */
};

/* A bandwidth factor as a function of the rank count n. */
enum sd_factor {
	SD_F_ONE,       /* 1 */
	SD_F_TWO,       /* 2 */
	SD_F_N,         /* n */
	SD_F_N_MINUS_1, /* n-1 */
	SD_F_RING,      /* (n-1)/n */
	SD_F_ALLREDUCE, /* 2(n-1)/n */
};

/*
 *   X(op, name, rooted, reduces, has_in_place, min_ranks,
 *     counts, place, sends, receives, expect,
 *     busbw (nccl-tests), ds_tput, ds_busbw (DeepSpeed),
 *     host_mem (the most host memory one rank holds during the op, in
 *     units of its buffer, sd_coll_buffer_bytes: measured with the Gloo
 *     backend by bench/op_memory.sh, bench/README-memory.md, as the
 *     largest rank's peak RSS over 32M and 128M on 2 and 4 ranks, minus a
 *     1K run's; the gathers measured 1 + 1/n and hold 2 for one rank))
 */
#define SD_COLLECTIVES(X)                                                    \
	X(SD_OP_ALL_REDUCE, "all_reduce", 0, 1, 1, 1, SD_COUNTS_SAME,        \
	  SD_PLACE_SAME, SD_ROLE_ALL, SD_ROLE_ALL, SD_EXPECT_REDUCED,        \
	  SD_F_ALLREDUCE, SD_F_TWO, SD_F_ALLREDUCE, 2.0)                     \
	X(SD_OP_ALL_GATHER, "all_gather", 0, 0, 1, 1, SD_COUNTS_GATHER,      \
	  SD_PLACE_SEND_IN_RECV, SD_ROLE_ALL, SD_ROLE_ALL, SD_EXPECT_CONCAT, \
	  SD_F_RING, SD_F_N, SD_F_N_MINUS_1, 2.0)                            \
	X(SD_OP_REDUCE_SCATTER, "reduce_scatter", 0, 1, 1, 1,                \
	  SD_COUNTS_SCATTER, SD_PLACE_RECV_IN_SEND, SD_ROLE_ALL, SD_ROLE_ALL,\
	  SD_EXPECT_REDUCED_BLOCK, SD_F_RING, SD_F_ONE, SD_F_RING, 4.0)      \
	X(SD_OP_ALL_TO_ALL, "all_to_all", 0, 0, 1, 1, SD_COUNTS_ALLTOALL,    \
	  SD_PLACE_SAME, SD_ROLE_ALL, SD_ROLE_ALL, SD_EXPECT_TRANSPOSE,      \
	  SD_F_RING, SD_F_ONE, SD_F_RING, 3.0)                               \
	X(SD_OP_BROADCAST, "broadcast", 1, 0, 1, 1, SD_COUNTS_SAME,          \
	  SD_PLACE_SAME, SD_ROLE_ROOT, SD_ROLE_ALL, SD_EXPECT_ROOT,          \
	  SD_F_ONE, SD_F_ONE, SD_F_ONE, 2.0)                                 \
	X(SD_OP_REDUCE, "reduce", 1, 1, 1, 1, SD_COUNTS_SAME, SD_PLACE_SAME, \
	  SD_ROLE_ALL, SD_ROLE_ROOT, SD_EXPECT_REDUCED, SD_F_ONE, SD_F_ONE,  \
	  SD_F_ONE, 2.0)                                                     \
	X(SD_OP_GATHER, "gather", 1, 0, 1, 1, SD_COUNTS_GATHER,              \
	  SD_PLACE_SEND_IN_RECV, SD_ROLE_ALL, SD_ROLE_ROOT, SD_EXPECT_CONCAT,\
	  SD_F_RING, SD_F_N, SD_F_N_MINUS_1, 2.0)                            \
	X(SD_OP_SCATTER, "scatter", 1, 0, 1, 1, SD_COUNTS_SCATTER,           \
	  SD_PLACE_RECV_IN_SEND, SD_ROLE_ROOT, SD_ROLE_ALL,                  \
	  SD_EXPECT_ROOT_BLOCK, SD_F_RING, SD_F_ONE, SD_F_RING, 2.0)         \
	X(SD_OP_SENDRECV, "sendrecv", 0, 0, 1, 1, SD_COUNTS_SAME,            \
	  SD_PLACE_SAME, SD_ROLE_ALL, SD_ROLE_ALL, SD_EXPECT_PREV, SD_F_ONE, \
	  SD_F_ONE, SD_F_ONE, 3.0)                                           \
	X(SD_OP_PT2PT, "pt2pt", 0, 0, 1, 2, SD_COUNTS_SAME, SD_PLACE_SAME,   \
	  SD_ROLE_RANK0, SD_ROLE_RANK1, SD_EXPECT_RANK0, SD_F_ONE, SD_F_ONE, \
	  SD_F_ONE, 2.0)

/* Operations, in table order.  SD_OP_SENDRECV is a ring (rank r sends to
 * r+1 and receives from r-1); SD_OP_PT2PT is DeepSpeed's (rank 0 sends to
 * rank 1, the others idle). */
#define SD_COLL_ENUM_(op, ...) op,
enum sd_op { SD_COLLECTIVES(SD_COLL_ENUM_) SD_OP_COUNT };
#undef SD_COLL_ENUM_

struct sd_coll {
	enum sd_op op;
	const char *name;
	int rooted;       /* takes -r ROOT */
	int reduces;      /* takes -o REDOP */
	int has_in_place; /* has an in-place variant */
	int min_ranks;    /* fewest ranks the op makes sense with */
	enum sd_counts counts;
	enum sd_place place;
	enum sd_role sends, receives;
	enum sd_expect expect;
	enum sd_factor busbw, ds_tput, ds_busbw;
	double host_mem;  /* peak host memory per rank / buffer bytes */
};

/* The table, for host code: sd_coll_table[op]. */
#define SD_COLL_ROW_(...) { __VA_ARGS__ },
static const struct sd_coll sd_coll_table[SD_OP_COUNT] = {
	SD_COLLECTIVES(SD_COLL_ROW_)
};
#undef SD_COLL_ROW_

/* The row of op, or NULL for a value that is not an op (host code). */
static inline const struct sd_coll *sd_coll_get(enum sd_op op)
{
	return (int)op >= 0 && op < SD_OP_COUNT ? &sd_coll_table[op] : NULL;
}

/* The row of op by value, for host and device code alike (device code
 * cannot read the host table).  An unknown op gives op == SD_OP_COUNT. */
static inline SD_HD struct sd_coll sd_coll_desc(enum sd_op op)
{
	switch (op) {
#define SD_COLL_CASE_(op_, ...)                                              \
	case op_: {                                                          \
		struct sd_coll row = { op_, __VA_ARGS__ };                   \
		return row;                                                  \
	}
	SD_COLLECTIVES(SD_COLL_CASE_)
#undef SD_COLL_CASE_
	default: {
		struct sd_coll none = { SD_OP_COUNT, "?", 0, 0, 0, 0,
					SD_COUNTS_SAME, SD_PLACE_SAME,
					SD_ROLE_ALL, SD_ROLE_ALL,
					SD_EXPECT_REDUCED, SD_F_ONE, SD_F_ONE,
					SD_F_ONE, 2.0 };
		return none;
	}
	}
}

/* The value of factor f for n ranks. */
static inline SD_HD double sd_factor_value(enum sd_factor f, int n)
{
	switch (f) {
	case SD_F_TWO: return 2.0;
	case SD_F_N: return (double)n;
	case SD_F_N_MINUS_1: return (double)(n - 1);
	case SD_F_RING: return (double)(n - 1) / n;
	case SD_F_ALLREDUCE: return 2.0 * (n - 1) / n;
	default: return 1.0;
	}
}

/* Whether role `role` includes rank `me` (root: the op's root). */
static inline SD_HD int sd_role_has(enum sd_role role, int me, int root)
{
	switch (role) {
	case SD_ROLE_ROOT: return me == root;
	case SD_ROLE_RANK0: return me == 0;
	case SD_ROLE_RANK1: return me == 1;
	default: return 1;
	}
}

/* nccl-tests (each collective's GetCollByteCount): per-rank send and
 * receive element counts for a size holding `count` elements of
 * `type_size` bytes on n ranks.  A per-rank block is rounded down to a
 * multiple of 16 bytes, as nccl-tests rounds it ("& ~(16/eltSize - 1)"),
 * so that the sizes of a run match nccl-tests' at any rank count. */
static inline SD_HD void sd_coll_counts(const struct sd_coll *c, size_t count,
					size_t type_size, int n, size_t *send,
					size_t *recv)
{
	size_t un = (size_t)n;
	size_t align = type_size && type_size < 16 ? 16 / type_size : 1;
	size_t block = count / un / align * align;
	switch (c->counts) {
	case SD_COUNTS_GATHER:
		*send = block;
		*recv = block * un;
		break;
	case SD_COUNTS_SCATTER:
		*recv = block;
		*send = block * un;
		break;
	case SD_COUNTS_ALLTOALL:
		*send = *recv = block * un;
		break;
	default:
		*send = *recv = count;
		break;
	}
}

/* nccl-tests' count column (its paramcount): the count the operation is
 * called with - a rank's block for the gathers and scatters, the block
 * sent to each peer for all_to_all, else the whole buffer. */
static inline SD_HD size_t sd_coll_param_count(const struct sd_coll *c,
					       size_t send, size_t recv, int n)
{
	switch (c->counts) {
	case SD_COUNTS_GATHER: return send;
	case SD_COUNTS_SCATTER: return recv;
	case SD_COUNTS_ALLTOALL: return n > 0 ? send / (size_t)n : 0;
	default: return send;
	}
}

/* nccl-tests' size in bytes of one measurement: max(send, recv) elements. */
static inline SD_HD size_t sd_coll_size_bytes(size_t send_count,
					      size_t recv_count,
					      size_t type_size)
{
	return (send_count > recv_count ? send_count : recv_count) * type_size;
}

/* Bytes each of a rank's two buffers needs for sizes up to max_bytes. */
static inline SD_HD size_t sd_coll_buffer_bytes(const struct sd_coll *c,
						uint64_t max_bytes,
						size_t type_size, int n)
{
	size_t s, r;
	sd_coll_counts(c, (size_t)(max_bytes / type_size), type_size, n, &s,
		       &r);
	return sd_coll_size_bytes(s, r, type_size);
}

/* The memory check's margin over a host rank's measured peak: x1.10 on
 * the op's factor, plus 16 MiB a rank for the program and the backend (a
 * 1K run's largest rank peaks at about 10 MiB, and Gloo's reductions hold
 * about 4 MiB more at any size).  bench/README-memory.md: the factors'
 * spread over sizes, rank counts and rounds was under 1% past that fixed
 * part; the 10% covers the allocator, the algorithms and Gloo versions
 * not measured there. */
#define SD_COLL_MEM_MARGIN 1.10
#define SD_COLL_MEM_FIXED_BYTES ((uint64_t)16 << 20)

/* Host memory one rank needs for sizes up to max_bytes on n ranks (the
 * Gloo backend's: buffers in host memory), the margin included. */
static inline SD_HD uint64_t sd_coll_host_mem_bytes(const struct sd_coll *c,
						    uint64_t max_bytes,
						    size_t type_size, int n)
{
	double b = (double)sd_coll_buffer_bytes(c, max_bytes, type_size, n);
	return (uint64_t)(b * c->host_mem * SD_COLL_MEM_MARGIN) +
	       SD_COLL_MEM_FIXED_BYTES;
}

/* algbw in GB/s (1e9 bytes per second) of size_bytes moved in time_us. */
static inline SD_HD double sd_algbw_gbs(size_t size_bytes, double time_us)
{
	if (!(time_us > 0))
		return 0;
	return (double)size_bytes / (time_us * 1e-6) / 1e9;
}

/* DeepSpeed's throughput and busbw in Gbps (1e9 bits per second):
 * ds_size_bytes (the rank's input tensor) / duration x the factors. */
static inline SD_HD void sd_ds_bandwidth(const struct sd_coll *c, int n,
					 size_t ds_size_bytes, double time_us,
					 double *tput_gbps, double *busbw_gbps)
{
	double per_s = time_us > 0 ? (double)ds_size_bytes / (time_us * 1e-6)
				   : 0;
	*tput_gbps = per_s * sd_factor_value(c->ds_tput, n) * 8 / 1e9;
	*busbw_gbps = per_s * sd_factor_value(c->ds_busbw, n) * 8 / 1e9;
}

#ifdef __cplusplus
}
#endif
#endif
