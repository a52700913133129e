/*
 * backend.h - the ABI between shakedown and its backend plugins.
 *
 * A backend plugin is a shared object that exports one symbol,
 * `shakedown_backend`, of type `const struct sd_backend_ops`, filled with
 * designated initialisers and SD_BACKEND_IDENTITY(name, version).  The
 * loader (lib/plugin.c) checks the identity right after dlopen: the magic,
 * the ABI version, the size of the table and the plugin's own name against
 * the backend asked for.  Rules for changing this file:
 *   - identity fields stay first and never move;
 *   - new slots are only appended at the end of a struct, and are optional
 *     (the loader gives a plugin built with an older, shorter table NULL
 *     for the slots it lacks; a slot the core cannot do without makes the
 *     loader refuse such a plugin, naming the slot);
 *   - any change to an existing slot's meaning bumps SD_BACKEND_ABI_VERSION.
 * A matrix multiply (`shakedown gemm`) is one optional slot of this table
 * (gemm, with struct sd_gemm_args below); larger workloads that are not
 * collectives (a training step) may get a table of their own under
 * another symbol, checked by the same loader with its own list of slots
 * (lib/plugin.c, struct table_kind).
 *
 * Every function returns an `int` status (enum sd_status).  On failure a
 * human-readable message (lower case, no trailing full stop, naming the
 * problem and the fix) is written into the caller's `err` buffer when one is
 * given.  Plugins never print and never exit.
 */
#ifndef SHAKEDOWN_BACKEND_H
#define SHAKEDOWN_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "shakedown/coll.h" /* enum sd_op and the table of collectives */

#ifdef __cplusplus
extern "C" {
#endif

#define SD_BACKEND_MAGIC 0x5344424bu /* "SDBK" */
#define SD_BACKEND_ABI_VERSION 2u
#define SD_BACKEND_SYMBOL "shakedown_backend"

/* The identity of a plugin's table, first in its initialiser. */
#define SD_BACKEND_IDENTITY(name_, version_)                                 \
	.magic = SD_BACKEND_MAGIC, .abi_version = SD_BACKEND_ABI_VERSION,    \
	.table_size = (uint32_t)sizeof(struct sd_backend_ops),              \
	.reserved = 0, .name = (name_), .version = (version_)

/* Status codes shared by the core and plugins. */
enum sd_status {
	SD_OK = 0,
	SD_ERR_INVALID = 1,     /* bad argument or unsupported type/op/algo */
	SD_ERR_NOMEM = 2,       /* host or device memory exhausted */
	SD_ERR_BACKEND = 3,     /* the library (Gloo, NCCL, CUDA) failed */
	SD_ERR_TIMEOUT = 4,     /* an operation did not complete in time */
	SD_ERR_PEER = 5,        /* a peer failed or went away */
	SD_ERR_NODEV = 6,       /* no usable device or driver on this host */
	SD_ERR_BOOTSTRAP = 7,   /* the bootstrap (local, PMI2) failed */
	SD_ERR_IO = 8,          /* a file, socket or database failed */
	SD_ERR_CANCELLED = 9,   /* stopped by a signal (SIGTERM, SIGINT) */
};

/* Data types.  The order is part of the ABI. */
enum sd_dtype {
	SD_INT8 = 0,
	SD_UINT8,
	SD_INT32,
	SD_UINT32,
	SD_INT64,
	SD_UINT64,
	SD_FLOAT16,
	SD_BFLOAT16,
	SD_FLOAT32,
	SD_FLOAT64,
	SD_FP8_E4M3,
	SD_FP8_E5M2,
	SD_DTYPE_COUNT
};

/* Reduction operators.  The order is part of the ABI. */
enum sd_redop {
	SD_SUM = 0,
	SD_PROD,
	SD_MIN,
	SD_MAX,
	SD_AVG,
	SD_REDOP_COUNT
};

/*
 * Bootstrap services lent to a plugin to build its communicators.  All
 * collective calls must be made by every rank of the bootstrap, in the same
 * order.  They return SD_OK or an sd_status.
 */
struct sd_bootstrap {
	int rank;         /* this process, 0..size-1 */
	int size;         /* processes in the job */
	int local_rank;   /* index among the processes on this host */
	int local_size;   /* processes on this host */
	const char *host; /* host identity (Slurm node name or hostname) */
	void *ctx;        /* owned by the bootstrap implementation */
	/* Gather `len` bytes from every rank; `recv` holds size*len bytes. */
	int (*allgather)(struct sd_bootstrap *bs, const void *send, void *recv,
			 size_t len);
	/* Copy `len` bytes from `root` to every rank. */
	int (*bcast)(struct sd_bootstrap *bs, void *buf, size_t len, int root);
	/* Return when every rank has called it. */
	int (*barrier)(struct sd_bootstrap *bs);
};

/* What a plugin knows about the device a rank uses. */
struct sd_device_info {
	char name[96];        /* "CPU (Gloo TCP)", "NVIDIA H200" */
	char pci_bus_id[32];  /* "0000:1b:00.0" or "" */
	char uuid[64];        /* "GPU-..." or "" */
	uint64_t mem_total_bytes;
	uint64_t mem_free_bytes;
	char transport[96];   /* e.g. "tcp 127.0.0.1" or "nccl 2.28.9" */
};

/* The first element found wrong by verify(). */
struct sd_mismatch {
	uint64_t index;      /* element index in the checked buffer */
	char expected[48];   /* value as text, with its bit pattern */
	char got[48];
};

/* One operation, fully described.  Filled by the core (src/coll.c). */
struct sd_op_args {
	enum sd_op op;
	enum sd_dtype dtype;
	enum sd_redop redop;
	int root;            /* rooted ops; ignored otherwise */
	int in_place;        /* 1: sendbuf aliases part of recvbuf */
	size_t send_count;   /* elements this rank sends (per nccl-tests) */
	size_t recv_count;   /* elements this rank receives */
	void *sendbuf;       /* device or host pointer from buf_alloc() */
	void *recvbuf;
	int algo;            /* index from algo_name(), or -1: best for size */
	int timeout_ms;      /* give up on one operation after this long */
	uint32_t seed;       /* varies the pattern between sizes */
	int want_iter_times; /* the core will ask iter_times() after this
				series of run() calls: record device times */
	long timed_iters;    /* at prepare(): how many run() calls with
				want_iter_times the timed series will make
				(0: none), so that what records their times
				is made before the timing starts */
	int fill_part;       /* at fill(): what to write, enum sd_fill_part */
};

/* What fill() writes.  A plugin that ignores fill_part writes both, which
 * is always correct, only slower. */
enum sd_fill_part {
	SD_FILL_ALL = 0, /* the send data and the receive poison */
	SD_FILL_SEND = 1, /* the send data only: the receive buffer is not
			     checked before the next fill (timed runs) */
	SD_FILL_RECV = 2 /* the receive poison only: the send data of the
			    last fill is still in place (out of place, a
			    check after the timed runs) */
};

/* Options for a communicator.  Append only. */
struct sd_comm_config {
	int timeout_ms;      /* default per-operation timeout */
	const char *iface;   /* network interface to bind, or NULL: choose */
	/* NAME=VALUE pairs separated by spaces (a plan's per-test NCCL_*
	 * settings, a later pair of a name winning), each accepted by
	 * env_check, that this communicator is made with, or NULL; the
	 * backend applies them to it alone and leaves the process
	 * environment as it is */
	const char *env;
};

struct sd_comm; /* opaque, defined by each plugin */

/*
 * The types of a matrix multiply (`shakedown gemm`): what its inputs are
 * and how it computes.  The order is part of the ABI.
 *   FP32  float32 inputs, float32 math, float32 product
 *   TF32  float32 inputs that hold TF32 values (10 mantissa bits), TF32
 *         tensor-core math with float32 accumulation, float32 product
 *   BF16  bfloat16 inputs, float32 accumulation, bfloat16 product
 *   FP16  float16 inputs, float32 accumulation, float16 product
 *   FP8   fp8 e4m3 inputs (scale 1), float32 accumulation, bfloat16
 *         product
 * sd_gemm_out_dtype() in shakedown/pattern.h says a product's element type.
 */
enum sd_gemm_type {
	SD_GEMM_FP32 = 0,
	SD_GEMM_TF32,
	SD_GEMM_BF16,
	SD_GEMM_FP16,
	SD_GEMM_FP8,
	SD_GEMM_TYPE_COUNT
};

/*
 * One matrix multiply to time, C = A B, in logical row-major terms: A is
 * m x k, B is k x n, C is m x n, C[i][j] = sum over l of A[i][l] B[l][j].
 * The backend lays the matrices out as its library wants them; their
 * values are the pattern's: A[i][l] = sd_gemm_input(seed, 0, i*k + l,
 * type), B[l][j] = sd_gemm_input(seed, 1, l*n + j, type)
 * (shakedown/pattern.h), so the core checks the product against its own
 * reference without moving the inputs.  Filled by the core (lib/gemm.c).
 */
struct sd_gemm_args {
	enum sd_gemm_type type;
	uint64_t m, n, k;
	uint32_t seed;
	int warmup_iters;      /* untimed calls first */
	int iters;             /* timed calls, back to back, each timed */
	long delay_us;         /* fault injection (kind slow): wait this long
				  before each timed call, inside its time;
				  0 normally */
	int timeout_ms;        /* give up on the whole series after this */
	size_t nsample;        /* elements of the last product to return */
	const uint64_t *sample_index; /* their row-major indices i*n + j */
};

/* What one series of matrix multiplies measured; the arrays are the
 * caller's. */
struct sd_gemm_result {
	double *time_us;       /* iters entries: each timed call, oldest
				  first (device time where the backend has
				  one) */
	double *sample_value;  /* nsample entries: the product's elements at
				  sample_index, as double */
	char impl[64];         /* what computed it, for the record:
				  "cublasLtMatmul", "cublasGemmEx" */
};

/*
 * The table of a backend.  Slots the core needs: init, comm_create,
 * comm_destroy, buf_alloc, fill, verify, run, wait, barrier.  Every other
 * slot may be NULL (the core does without, or refuses only what needs it:
 * a split scope needs comm_split).
 */
struct sd_backend_ops {
	/* identity: never moves */
	uint32_t magic;        /* SD_BACKEND_MAGIC */
	uint32_t abi_version;  /* SD_BACKEND_ABI_VERSION */
	uint32_t table_size;   /* sizeof(struct sd_backend_ops) where the
				  plugin was built: slots past it are absent */
	uint32_t reserved;     /* 0 */
	const char *name;      /* "gloo", "nccl": the NAME of backend_NAME.so */
	const char *version;   /* plugin and library versions, for reports */

	/* Bit masks of supported (1u << enum value). */
	uint32_t dtypes;
	uint32_t redops;
	uint32_t ops;

	/* Process-wide set-up, after the bootstrap is known (device choice). */
	int (*init)(struct sd_bootstrap *bs, char *err, size_t errlen);
	/* Process-wide tear-down. */
	void (*fini)(void);

	/* Build the world communicator (collective over bs). */
	int (*comm_create)(struct sd_bootstrap *bs,
			   const struct sd_comm_config *cfg,
			   struct sd_comm **out, char *err, size_t errlen);
	/*
	 * Split `parent` (collective over every rank of parent): ranks with the
	 * same `color` form a new communicator ordered by `key`.  A negative
	 * color returns *out == NULL (the rank takes no part).
	 */
	int (*comm_split)(struct sd_comm *parent, int color, int key,
			  struct sd_comm **out, char *err, size_t errlen);
	int (*comm_rank)(const struct sd_comm *comm);
	int (*comm_size)(const struct sd_comm *comm);
	/* Free a communicator; after abort() it must not block. */
	void (*comm_destroy)(struct sd_comm *comm);

	int (*describe_device)(struct sd_comm *comm,
			       struct sd_device_info *info);

	/* Buffers in the memory the backend moves (host or device). */
	int (*buf_alloc)(struct sd_comm *comm, size_t bytes, void **out,
			 char *err, size_t errlen);
	void (*buf_free)(struct sd_comm *comm, void *ptr);

	/*
	 * Write the deterministic pattern (include/shakedown/pattern.h) into
	 * args->sendbuf and a poison value into the rest of args->recvbuf;
	 * args->fill_part may ask for one of the two only.
	 */
	int (*fill)(struct sd_comm *comm, const struct sd_op_args *args,
		    char *err, size_t errlen);
	/*
	 * Compare args->recvbuf with the expected result, bit for bit.  Stores
	 * the count of wrong elements and, when there is one, the first.
	 */
	int (*verify)(struct sd_comm *comm, const struct sd_op_args *args,
		      uint64_t *wrong, struct sd_mismatch *first, char *err,
		      size_t errlen);
	/* Fault injection: flip the lowest bit of recvbuf[index]. */
	int (*corrupt)(struct sd_comm *comm, const struct sd_op_args *args,
		       uint64_t index);

	/* Name of algorithm `idx` for `op`, or NULL past the last. */
	const char *(*algo_name)(enum sd_op op, int idx);
	/* Called once before a series of run() calls with the same args. */
	int (*prepare)(struct sd_comm *comm, const struct sd_op_args *args,
		       char *err, size_t errlen);
	/* Start one operation (may complete before it returns). */
	int (*run)(struct sd_comm *comm, const struct sd_op_args *args,
		   char *err, size_t errlen);
	/* Wait until every started operation is complete, or timeout_ms. */
	int (*wait)(struct sd_comm *comm, int timeout_ms, char *err,
		    size_t errlen);
	/* Synchronise the ranks of comm (outside timed regions). */
	int (*barrier)(struct sd_comm *comm, int timeout_ms, char *err,
		       size_t errlen);
	/*
	 * Stop everything in flight.  Callable from another thread while the
	 * rank's own thread is blocked in run(), wait() or barrier() on comm,
	 * which then returns promptly with an error, not at its timeout (the
	 * Gloo backend: SD_ERR_CANCELLED; peers left waiting on this rank
	 * see SD_ERR_PEER); callable more than once.  Afterwards calls on
	 * comm fail, and comm_destroy() must not block.
	 */
	void (*abort)(struct sd_comm *comm);

	/*
	 * Optional: device-side times (us) of the last `iters` run() calls,
	 * read after wait(); NULL when the backend has none.  Fills
	 * time_us[0..iters) oldest first.  Returns SD_OK or a status.
	 */
	int (*iter_times)(struct sd_comm *comm, double *time_us, long iters,
			  char *err, size_t errlen);

	/*
	 * Optional (`shakedown topo`): how the devices of this host reach each
	 * other, every device the host has, not only this rank's.  Writes a
	 * NUL-terminated JSON array into json (len bytes), one object per
	 * pair of devices:
	 *   {"a":"0000:18:00.0","b":"0000:2a:00.0","class":"nvswitch",
	 *    "nvlinks":18}
	 * a and b are PCI bus ids in describe_device's form, class one of
	 * "nvlink", "nvswitch", "pcie-switch", "host-bridge", "numa-node",
	 * "cross-socket", "p2p", "no-p2p" or "unknown", nvlinks the NVLink
	 * count (0 without NVLink).  Called on one rank per host, outside
	 * any collective.  Returns SD_OK (err may then hold a note on what
	 * was not known), or a status with json "[]" and err saying why the
	 * links are unknown (SD_ERR_NODEV: no device, driver or library;
	 * SD_ERR_NOMEM: len too short).  NULL: the backend's devices have
	 * no links of their own (the Gloo backend: the NUMA layout is the
	 * topology).
	 */
	int (*describe_links)(struct sd_comm *comm, char *json, size_t len,
			      char *err, size_t errlen);

	/*
	 * Optional: which of its algorithms (an index for algo_name) run()
	 * uses for `a` on a communicator of `nranks` ranks when a->algo is
	 * -1 (auto), or -1 when it does not pick one by name (NCCL chooses
	 * inside).  Pure: no communicator, no side effects.  The core
	 * records the answer as the measurement's algorithm.  NULL: the
	 * measurements say "auto".
	 */
	int (*algo_auto)(const struct sd_op_args *a, int nranks);

	/*
	 * Optional: whether this process applies a test's own setting
	 * NAME=VALUE (a pair of a plan's env: an NCCL_* name and a plain
	 * value) to the communicators it makes for that test, through
	 * sd_comm_config.env, exactly as given.  Called on every rank for
	 * every pair before init(), while the backend's library runs no
	 * thread; nothing may be changed.  Returns SD_OK, or
	 * SD_ERR_INVALID with err saying why not and what to do instead
	 * (the run then stops with exit status 2 before anything starts).
	 * NULL: the backend applies no such setting, and the core refuses
	 * a plan whose tests have an env.
	 */
	int (*env_check)(const char *name, const char *value, char *err,
			 size_t errlen);

	/*
	 * Optional (`shakedown gemm`): time a series of matrix multiplies on
	 * this rank's device.  Fills the device's A and B with the pattern
	 * (struct sd_gemm_args), makes a->warmup_iters untimed calls and
	 * a->iters timed ones back to back, each timed on the device, then
	 * returns the times and the sampled elements of the last product.
	 * Called by every rank at once, outside any collective, after
	 * comm_create.  Returns SD_OK; SD_ERR_INVALID when the type does not
	 * run on this device, with err saying why ("fp8 needs compute
	 * capability 8.9 or newer; this GPU has 8.0": the core reports the
	 * type as not on this device and goes on); SD_ERR_NOMEM when the
	 * matrices do not fit; SD_ERR_TIMEOUT past a->timeout_ms;
	 * SD_ERR_BACKEND when the library fails.  NULL: the backend's
	 * devices are the host's CPUs, and the core multiplies there (float32
	 * only, through a BLAS; lib/gemm.c).
	 */
	int (*gemm)(struct sd_comm *comm, const struct sd_gemm_args *a,
		    struct sd_gemm_result *r, char *err, size_t errlen);
};

#ifdef __cplusplus
}
#endif
#endif
