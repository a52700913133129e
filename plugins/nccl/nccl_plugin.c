/*
 * nccl_plugin.c - the NCCL backend: collectives on NVIDIA GPUs, one GPU per
 * rank, exported as `shakedown_backend` from backend_nccl.so.
 *
 * init() picks the rank's GPU (nccl_host.c) and makes sure no two ranks of
 * the job share one; comm_create() shares rank 0's ncclUniqueId through the
 * bootstrap and builds a blocking communicator, as nccl-tests does (a
 * non-blocking one starts a thread for every group in NCCL 2.28 and
 * returns ncclInProgress, which would put a poll and its latency into
 * every timed operation); run() enqueues one operation on the rank's
 * stream; wait() polls the stream and ncclCommGetAsyncError under a
 * deadline until done, and on timeout aborts the communicator and names
 * the rank, host and GPU.  Every NCCL call on a communicator is made under
 * its mutex, which abort() takes too: ncclCommAbort frees what another
 * call would be using.  Data is filled and checked
 * on the GPU by kernels.cu with the functions of shakedown/pattern.h.
 * Every run() is bracketed by two CUDA events on the stream, kept in a ring
 * emptied by prepare(); iter_times() turns the last ones into per-iteration
 * device times for --per-iter, so no host wait sits between iterations.
 *
 * The gemm slot (`shakedown gemm`) multiplies on the rank's GPU and
 * stream through cuBLAS (nccl_gemm.c), when the build found it.
 *
 * Test-only fault: SHAKEDOWN_NCCL_FAULT=hang=RANK makes that rank's first
 * run() queue a kernel that never finishes in time, to prove the timeout
 * and abort path on one GPU (test/gpu/check.sh).
 */
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda_runtime_api.h>
#include <nccl.h>

#include "shakedown/backend.h"
#include "shakedown/pattern.h"
#include "shakedown/pattern_host.h"
#include "kernels.h"
#include "links.h"
#include "shakedown/nccl_env.h"
#include "nccl_gemm.h" /* sd_nccl_now_s, sd_nccl_nap_us; the gemm slot */
#ifdef HAVE_CUBLAS
#include "train_gpu.h" /* the training workload's GPU path */
#endif
#include "nccl_host.h"
#include "probe.h"

/* nccl_host.c's numbers are NCCL's. */
_Static_assert(ncclInt8 == 0 && ncclUint8 == 1 && ncclInt32 == 2 &&
		       ncclUint32 == 3 && ncclInt64 == 4 && ncclUint64 == 5 &&
		       ncclFloat16 == 6 && ncclFloat32 == 7 &&
		       ncclFloat64 == 8 && ncclBfloat16 == 9,
	       "ncclDataType_t values changed");
_Static_assert(ncclSum == 0 && ncclProd == 1 && ncclMax == 2 &&
		       ncclMin == 3 && ncclAvg == 4,
	       "ncclRedOp_t values changed");
/* nccl_env.c's unset field and version codes are NCCL's. */
_Static_assert(SD_NCCL_UNDEF == NCCL_CONFIG_UNDEF_INT,
	       "NCCL_CONFIG_UNDEF_INT changed");
_Static_assert(SD_NCCL_VERSION(NCCL_MAJOR, NCCL_MINOR, NCCL_PATCH) ==
		       NCCL_VERSION_CODE,
	       "NCCL's version code changed");
#ifdef HAVE_NCCL_FP8
_Static_assert(ncclFloat8e4m3 == 10 && ncclFloat8e5m2 == 11,
	       "ncclDataType_t fp8 values changed");
#define SD_NCCL_FP8_MASK ((1u << SD_FP8_E4M3) | (1u << SD_FP8_E5M2))
#else
#define SD_NCCL_FP8_MASK 0u
#endif

#define STR2(x) #x
#define STR(x) STR2(x)

struct sd_comm {
	ncclComm_t nccl;
	pthread_mutex_t mu;      /* held around every NCCL call on nccl, and
				    by abort() */
	int rank, size;
	int timeout_ms;
	cudaStream_t stream;
	uint64_t *d_result;      /* verify: wrong count, first index */
	int32_t *d_barrier;      /* one element for barrier() */
	size_t held_bytes;       /* from buf_alloc, not yet freed */
	int nheld;
	struct { void *p; size_t bytes; } bufs[8];
	volatile int aborted;
	int hang_pending;        /* SHAKEDOWN_NCCL_FAULT for this rank */
	volatile int *hang_flag; /* mapped host memory the hang kernel reads */
	/* event pairs around run(): slot i % ev_cap holds run i since the
	 * last reset; the ring grows to SD_NCCL_MAX_TIMED before it wraps */
	cudaEvent_t *ev_start, *ev_stop;
	long ev_cap;             /* pairs created */
	long ev_n;               /* run() calls recorded since the reset */
	struct sd_nccl_config env; /* the test's ncclConfig_t fields (a
				      plan's env), which its splits keep */
};

/* The most iterations whose device times are kept for --per-iter. */
#define SD_NCCL_MAX_TIMED 100000L

static int ev_reserve(struct sd_comm *c, long want, char *err, size_t errlen);

/* The process's GPU, chosen by init(). */
static struct {
	int device;
	int cc_major, cc_minor;
	char host[64];
	char name[96];
	char bus[32];
	char uuid[64];
	char what[200];          /* "GPU 0 (NVIDIA H200, 0000:1b:00.0)" */
	char transport[96];
	int ready;
	int made;                /* a communicator was made: NCCL's threads
				    may read the environment from now on */
	/* NCCL's own all_to_all, gather and scatter, where the library has
	 * them (2.28 and newer), so the numbers compare with nccl-tests on
	 * the same code; else send/recv groups */
	ncclResult_t (*alltoall)(const void *, void *, size_t, ncclDataType_t,
				 ncclComm_t, cudaStream_t);
	ncclResult_t (*gather)(const void *, void *, size_t, ncclDataType_t,
			       int, ncclComm_t, cudaStream_t);
	ncclResult_t (*scatter)(const void *, void *, size_t, ncclDataType_t,
				int, ncclComm_t, cudaStream_t);
} g;

/* The plugin's version string: the NCCL library found at run time, which
 * may differ from the headers it was built with. */
static char g_version[96] = "nccl " STR(NCCL_MAJOR) "." STR(NCCL_MINOR)
			    "." STR(NCCL_PATCH) " (shakedown " PACKAGE_VERSION
			    ")";

__attribute__((constructor)) static void runtime_version(void)
{
	int v = 0;
	if (ncclGetVersion(&v) == ncclSuccess && v > 0)
		snprintf(g_version, sizeof(g_version), "nccl %d.%d.%d "
			 "(shakedown %s, built with nccl %d.%d.%d)",
			 v / 10000, v / 100 % 100, v % 100, PACKAGE_VERSION,
			 NCCL_MAJOR, NCCL_MINOR, NCCL_PATCH);
}

/* The transport column: NCCL's runtime version, the compute capability
 * and the socket interfaces NCCL will choose. */
static void set_transport(void)
{
	int ver = 0;
	ncclGetVersion(&ver);
	char net[64] = "";
	sd_socket_ifaces_probe(net, sizeof(net));
	snprintf(g.transport, sizeof(g.transport), "nccl %d.%d.%d cc %d.%d "
		 "socket %.48s", ver / 10000, ver / 100 % 100, ver % 100,
		 g.cc_major, g.cc_minor, net[0] ? net : "none");
}

static const char *cuerr(cudaError_t e)
{
	return cudaGetErrorString(e);
}

double sd_nccl_now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

void sd_nccl_nap_us(long us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

static void format_bytes(uint64_t b, char *buf, size_t len)
{
	const char *unit[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	int u = 0;
	double v = (double)b;
	while (v >= 1024 && u < 4) {
		v /= 1024;
		u++;
	}
	snprintf(buf, len, u ? "%.1f %s" : "%.0f %s", v, unit[u]);
}

/* Short size for the -e hint: whole MiB or GiB ("59G", "512M"). */
static void format_e(uint64_t b, char *buf, size_t len)
{
	if (b >= (1ull << 30))
		snprintf(buf, len, "%lluG", (unsigned long long)(b >> 30));
	else
		snprintf(buf, len, "%lluM", (unsigned long long)(b >> 20));
}

/* ------------------------------------------------------------ devices */

/* Every rank's `len` bytes of `mine` through the bootstrap, in a new
 * array by rank; NULL with *rc and err set (exchanging `what`). */
static void *gather_all(struct sd_bootstrap *bs, const void *mine, size_t len,
			const char *what, int *rc, char *err, size_t errlen)
{
	void *all = calloc((size_t)bs->size, len);
	if (!all) {
		snprintf(err, errlen, "out of memory");
		*rc = SD_ERR_NOMEM;
		return NULL;
	}
	if (bs->allgather(bs, mine, all, len) != SD_OK) {
		snprintf(err, errlen, "bootstrap allgather failed while "
			 "exchanging %s", what);
		free(all);
		*rc = SD_ERR_BOOTSTRAP;
		return NULL;
	}
	return all;
}

static int nccl_init(struct sd_bootstrap *bs, char *err, size_t errlen)
{
	int n = 0, rc = SD_OK;
	char mine_err[512] = "";
	struct {
		struct sd_gpu_id id;
		int32_t status;
		int32_t pad;
	} mine, *all = NULL;

	memset(&g, 0, sizeof(g));
	memset(&mine, 0, sizeof(mine));
	snprintf(g.host, sizeof(g.host), "%s", bs->host ? bs->host : "?");
	g.device = -1;

	cudaError_t e = cudaGetDeviceCount(&n);
	int drv = 0, rt = 0;
	cudaDriverGetVersion(&drv); /* 0: no driver at all */
	cudaRuntimeGetVersion(&rt);
	if (e == cudaErrorInsufficientDriver && drv > 0) {
		snprintf(mine_err, sizeof(mine_err), "the NVIDIA driver on %s "
			 "is too old for CUDA %d.%d, which this plugin was "
			 "built with (the driver supports CUDA %d.%d); update "
			 "the driver", g.host, rt / 1000, rt % 1000 / 10,
			 drv / 1000, drv % 1000 / 10);
		rc = SD_ERR_NODEV;
	} else if (e != cudaSuccess || n == 0) {
		snprintf(mine_err, sizeof(mine_err), "no CUDA device or driver "
			 "found on %s (cudaGetDeviceCount: %s); use --backend "
			 "gloo on CPU-only nodes", g.host,
			 e != cudaSuccess ? cuerr(e) : "0 devices");
		rc = SD_ERR_NODEV;
	}
	/* which ranks on this host see the same device list: they take its
	 * GPUs in turn (every rank takes part, so nobody waits forever) */
	const char *cvd = getenv("CUDA_VISIBLE_DEVICES");
	struct sd_gpu_view view, *views;
	memset(&view, 0, sizeof(view));
	snprintf(view.host, sizeof(view.host), "%s", g.host);
	view.cvd_hash = sd_gpu_view_hash(cvd);
	if (!(views = gather_all(bs, &view, sizeof(view), "the GPUs each rank "
				 "sees", &rc, err, errlen)))
		return rc;
	int share_index, share_count;
	sd_gpu_share(views, bs->size, bs->rank, &share_index, &share_count);
	free(views);
	if (!rc) {
		struct sd_gpu_env env = { .cuda_visible_devices = cvd,
					  .host = g.host };
		g.device = sd_nccl_pick_device(share_index, share_count, n,
					       &env, mine_err,
					       sizeof(mine_err));
		if (g.device < 0)
			rc = SD_ERR_NODEV;
	}
	if (!rc) {
		struct cudaDeviceProp p;
		if ((e = cudaSetDevice(g.device)) != cudaSuccess ||
		    (e = cudaGetDeviceProperties(&p, g.device)) != cudaSuccess ||
		    (e = cudaDeviceGetPCIBusId(g.bus, sizeof(g.bus),
					       g.device)) != cudaSuccess) {
			snprintf(mine_err, sizeof(mine_err), "GPU %d on %s "
				 "cannot be used: %s; check the driver and "
				 "nvidia-smi", g.device, g.host, cuerr(e));
			rc = SD_ERR_NODEV;
		} else {
			char b[32];
			sd_pci_normalize(g.bus, b, sizeof(b));
			snprintf(g.bus, sizeof(g.bus), "%s", b);
			snprintf(g.name, sizeof(g.name), "%.95s", p.name);
			g.cc_major = p.major;
			g.cc_minor = p.minor;
			const unsigned char *u =
				(const unsigned char *)p.uuid.bytes;
			snprintf(g.uuid, sizeof(g.uuid),
				 "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-"
				 "%02x%02x-%02x%02x%02x%02x%02x%02x",
				 u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7],
				 u[8], u[9], u[10], u[11], u[12], u[13], u[14],
				 u[15]);
			snprintf(g.what, sizeof(g.what), "GPU %d (%s, %s)",
				 g.device, g.name, g.bus);
		}
	}

	/* every rank takes part, failed or not, so nobody waits forever */
	snprintf(mine.id.host, sizeof(mine.id.host), "%s", g.host);
	snprintf(mine.id.pci_bus_id, sizeof(mine.id.pci_bus_id), "%s", g.bus);
	mine.id.rank = bs->rank;
	mine.id.device = g.device;
	mine.status = rc;
	int xrc;
	if (!(all = gather_all(bs, &mine, sizeof(mine), "GPU identities", &xrc,
			       err, errlen)))
		return xrc;
	if (rc) {
		snprintf(err, errlen, "%s", mine_err);
		free(all);
		return rc;
	}
	struct sd_gpu_id ids[bs->size];
	int failed = -1;
	for (int r = 0; r < bs->size; r++) {
		ids[r] = all[r].id;
		if (all[r].status && failed < 0)
			failed = r;
	}
	free(all);
	if (failed >= 0) {
		snprintf(err, errlen, "rank %d (%s) has no usable GPU; see its "
			 "message", failed, ids[failed].host);
		return SD_ERR_NODEV;
	}
	if ((rc = sd_nccl_check_unique(ids, bs->size, err, errlen)))
		return rc;

	*(void **)&g.alltoall = dlsym(RTLD_DEFAULT, "ncclAlltoAll");
	*(void **)&g.gather = dlsym(RTLD_DEFAULT, "ncclGather");
	*(void **)&g.scatter = dlsym(RTLD_DEFAULT, "ncclScatter");
	set_transport();
	g.ready = 1;
	return SD_OK;
}

static void nccl_fini(void)
{
#ifdef HAVE_CUBLAS
	sd_nccl_gemm_fini();
#endif
	g.ready = 0;
}

/* ------------------------------------------------------ communicators */

static const char *nccl_what(ncclResult_t r)
{
	return ncclGetErrorString(r);
}

/*
 * Wait until an NCCL call has finished: `r` is what the call returned
 * (only a non-blocking call returns ncclInProgress; on the blocking
 * communicators this returns at once).  Returns SD_OK, SD_ERR_TIMEOUT, or
 * SD_ERR_BACKEND/SD_ERR_PEER with err naming `what`.
 */
static int settle(ncclComm_t comm, ncclResult_t r, const char *what,
		  int timeout_ms, char *err, size_t errlen)
{
	double end = sd_nccl_now_s() + (timeout_ms > 0 ? timeout_ms : 600000) / 1e3;
	while (r == ncclInProgress) {
		if (sd_nccl_now_s() > end) {
			snprintf(err, errlen, "%s on %s, %s did not finish "
				 "within %.1f s", what, g.host, g.what,
				 timeout_ms / 1e3);
			return SD_ERR_TIMEOUT;
		}
		sd_nccl_nap_us(100);
		if (ncclCommGetAsyncError(comm, &r) != ncclSuccess)
			break;
	}
	if (r == ncclSuccess)
		return SD_OK;
	snprintf(err, errlen, "%s on %s, %s: %s (%s)", what, g.host, g.what,
		 nccl_what(r), ncclGetLastError(comm));
	return r == ncclRemoteError ? SD_ERR_PEER : SD_ERR_BACKEND;
}

static void comm_free(struct sd_comm *c)
{
	if (!c)
		return;
	if (!c->aborted) {
		/* after an abort the GPU may still be busy: leak, never block */
		if (c->d_result)
			cudaFree(c->d_result);
		if (c->d_barrier)
			cudaFree(c->d_barrier);
		if (c->stream)
			cudaStreamDestroy(c->stream);
		if (c->hang_flag)
			cudaFreeHost((void *)c->hang_flag);
		for (long i = 0; i < c->ev_cap; i++) {
			cudaEventDestroy(c->ev_start[i]);
			cudaEventDestroy(c->ev_stop[i]);
		}
	}
	free(c->ev_start);
	free(c->ev_stop);
	pthread_mutex_destroy(&c->mu);
	free(c);
}

/* Stream, scratch memory and the fault flag of a new communicator. */
static int comm_setup(struct sd_comm *c, char *err, size_t errlen)
{
	cudaError_t e;
	int nrank = 0, nsize = 0;
	ncclCommUserRank(c->nccl, &nrank);
	ncclCommCount(c->nccl, &nsize);
	c->rank = nrank;
	c->size = nsize;
	if ((e = cudaStreamCreateWithFlags(&c->stream,
					   cudaStreamNonBlocking)) ||
	    (e = cudaMalloc((void **)&c->d_result, 2 * sizeof(uint64_t))) ||
	    (e = cudaMalloc((void **)&c->d_barrier, sizeof(int32_t))) ||
	    (e = cudaHostAlloc((void **)&c->hang_flag, sizeof(int),
			       cudaHostAllocMapped))) {
		snprintf(err, errlen, "%s on %s: %s", g.what, g.host, cuerr(e));
		return e == cudaErrorMemoryAllocation ? SD_ERR_NOMEM
						      : SD_ERR_BACKEND;
	}
	*c->hang_flag = 0;
	const char *f = getenv("SHAKEDOWN_NCCL_FAULT");
	if (f && strncmp(f, "hang=", 5) == 0) {
		char *end = NULL;
		long r = strtol(f + 5, &end, 10);
		c->hang_pending = end != f + 5 && r == c->rank;
	}
	return SD_OK;
}

static struct sd_comm *comm_new(int timeout_ms)
{
	struct sd_comm *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	pthread_mutex_init(&c->mu, NULL);
	c->timeout_ms = timeout_ms > 0 ? timeout_ms : 60000;
	return c;
}

/* The NCCL this plugin can apply a test's settings with: the older of
 * the nccl.h it was built with (the fields it can set) and the library
 * loaded (the fields NCCL reads). */
static int nccl_env_version(void)
{
	int loaded = 0;
	ncclGetVersion(&loaded);
	return loaded < NCCL_VERSION_CODE ? loaded : NCCL_VERSION_CODE;
}

/* The job's environment as NCCL reads it.  Only read: NCCL itself sets
 * nothing there after its first call (misc/param.cc initEnv). */
static const char *job_env(const char *name)
{
	return getenv(name);
}

/*
 * A test's settings go into ncclConfig_t, the one thing NCCL reads per
 * communicator; the process environment is never changed, since NCCL's
 * threads read it (nccl_env.h).  nccl_env_check() refused what this
 * nccl.h has no field for, and configure asks for NCCL 2.18 or newer.
 */
static void config_from_env(ncclConfig_t *config,
			    const struct sd_nccl_config *e)
{
#define SET(field, v)                                                        \
	do {                                                                 \
		if ((v) != SD_NCCL_UNDEF)                                    \
			config->field = (v);                                 \
	} while (0)
	SET(cgaClusterSize, e->cga_cluster_size);
	SET(minCTAs, e->min_ctas);
	SET(maxCTAs, e->max_ctas);
	if (e->net_name[0])
		config->netName = e->net_name;
	SET(splitShare, e->split_share);
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 27, 0)
	SET(collnetEnable, e->collnet_enable);
	SET(CTAPolicy, e->cta_policy);
	SET(nvlsCTAs, e->nvls_ctas);
#endif
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 28, 0)
	SET(nChannelsPerNetPeer, e->nchannels_per_net_peer);
	SET(nvlinkCentricSched, e->nvlink_centric_sched);
#endif
#undef SET
}

/* Whether this process applies a test's name=value: the core asks
 * before init, and refuses the plan otherwise (exit 2). */
static int nccl_env_check(const char *name, const char *value, char *err,
			  size_t errlen)
{
	return sd_nccl_env_runtime(name, value, nccl_env_version(), job_env,
				   err, errlen);
}

/* Take c->mu for an NCCL call on c (see nccl_abort): SD_OK with the lock
 * held, or SD_ERR_CANCELLED, unlocked, with err set when c was aborted. */
static int lock_live(struct sd_comm *c, char *err, size_t errlen)
{
	pthread_mutex_lock(&c->mu);
	if (!c->aborted && c->nccl)
		return SD_OK;
	pthread_mutex_unlock(&c->mu);
	snprintf(err, errlen, "rank %d on %s: the NCCL communicator was "
		 "aborted", c->rank, g.host);
	return SD_ERR_CANCELLED;
}

static int nccl_comm_create(struct sd_bootstrap *bs,
			    const struct sd_comm_config *cfg,
			    struct sd_comm **out, char *err, size_t errlen)
{
	struct {
		int32_t status;
		char reason[124];
		ncclUniqueId id;
	} u;
	int rc = SD_OK;
	ncclResult_t r;

	*out = NULL;
	if (!g.ready) {
		snprintf(err, errlen, "the nccl backend was not initialised");
		return SD_ERR_INVALID;
	}
	struct sd_comm *c = comm_new(cfg ? cfg->timeout_ms : 0);
	if (!c) {
		snprintf(err, errlen, "out of memory");
		return SD_ERR_NOMEM;
	}
	/* --iface is NCCL's socket interface too, unless NCCL_SOCKET_IFNAME
	 * says otherwise: set before the first ncclGetUniqueId, while no
	 * NCCL thread can read the environment ("=" asks NCCL for that
	 * exact name, not a prefix) */
	if (!g.made && cfg && cfg->iface && *cfg->iface &&
	    !getenv("NCCL_SOCKET_IFNAME")) {
		char v[80];
		snprintf(v, sizeof(v), "=%s", cfg->iface);
		setenv("NCCL_SOCKET_IFNAME", v, 1);
		set_transport();
	}
	g.made = 1;
	/* a test's own settings (the core passes only what env_check
	 * took) as ncclConfig_t fields of its own communicator; checked
	 * again against the environment, which NCCL's first init may have
	 * filled from its config files (misc/param.cc initEnv), and which
	 * it lets override them.  Reading it is safe: NCCL sets nothing
	 * there after that first init. */
	sd_nccl_config_init(&c->env);
	if (cfg && cfg->env && *cfg->env &&
	    ((rc = sd_nccl_env_config(cfg->env, &c->env, err, errlen)) ||
	     (rc = sd_nccl_env_applies(cfg->env, nccl_env_version(), job_env,
				       err, errlen)))) {
		comm_free(c);
		return rc;
	}
	memset(&u, 0, sizeof(u));
	if (bs->rank == 0 && (r = ncclGetUniqueId(&u.id)) != ncclSuccess) {
		u.status = SD_ERR_BACKEND;
		snprintf(u.reason, sizeof(u.reason), "ncclGetUniqueId: %s",
			 nccl_what(r));
	}
	if (bs->bcast(bs, &u, sizeof(u), 0) != SD_OK) {
		snprintf(err, errlen, "bootstrap broadcast of the NCCL unique "
			 "id failed");
		rc = SD_ERR_BOOTSTRAP;
		goto out;
	}
	if (u.status) {
		snprintf(err, errlen, "rank 0 could not start NCCL: %s",
			 u.reason);
		rc = u.status;
		goto out;
	}
	ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
	config_from_env(&config, &c->env);
	config.blocking = 1;
	r = ncclCommInitRankConfig(&c->nccl, bs->size, u.id, bs->rank,
				   &config);
	if (r != ncclSuccess && r != ncclInProgress) {
		snprintf(err, errlen, "ncclCommInitRankConfig on %s, %s: %s "
			 "(%s)", g.host, g.what, nccl_what(r),
			 ncclGetLastError(NULL));
		c->nccl = NULL;
		rc = SD_ERR_BACKEND;
		goto out;
	}
	rc = settle(c->nccl, r, "creating the NCCL communicator",
		    c->timeout_ms, err, errlen);
	if (rc) {
		ncclCommAbort(c->nccl);
		c->nccl = NULL;
		c->aborted = 1;
		goto out;
	}
	rc = comm_setup(c, err, errlen);
out:
	if (rc) {
		if (c->nccl && !c->aborted)
			ncclCommAbort(c->nccl);
		c->nccl = NULL;
		comm_free(c);
		return rc;
	}
	*out = c;
	return SD_OK;
}

static int nccl_comm_split(struct sd_comm *parent, int color, int key,
			   struct sd_comm **out, char *err, size_t errlen)
{
	ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
	ncclComm_t nc = NULL;
	/* a config given to ncclCommSplit replaces the parent's, field by
	 * field (init.cc ncclCommInitChildComm): pass the test's again */
	config_from_env(&config, &parent->env);
	config.blocking = 1;
	*out = NULL;
	int rc = lock_live(parent, err, errlen);
	if (rc)
		return rc;
	ncclResult_t r = ncclCommSplit(parent->nccl,
				       color < 0 ? NCCL_SPLIT_NOCOLOR : color,
				       key, &nc, &config);
	rc = settle(parent->nccl, r, "ncclCommSplit", parent->timeout_ms, err,
		    errlen);
	pthread_mutex_unlock(&parent->mu);
	if (rc) {
		if (nc)
			ncclCommAbort(nc);
		return rc;
	}
	if (!nc)
		return SD_OK; /* color < 0: not a member */
	struct sd_comm *c = comm_new(parent->timeout_ms);
	if (!c) {
		ncclCommAbort(nc);
		snprintf(err, errlen, "out of memory");
		return SD_ERR_NOMEM;
	}
	c->nccl = nc;
	c->env = parent->env;
	if ((rc = comm_setup(c, err, errlen))) {
		ncclCommAbort(nc);
		c->nccl = NULL;
		comm_free(c);
		return rc;
	}
	*out = c;
	return SD_OK;
}

static int nccl_comm_rank(const struct sd_comm *c)
{
	return c->rank;
}

static int nccl_comm_size(const struct sd_comm *c)
{
	return c->size;
}

static void nccl_comm_destroy(struct sd_comm *c)
{
	if (!c)
		return;
	pthread_mutex_lock(&c->mu);
	if (c->nccl && !c->aborted) {
		char err[256];
		ncclResult_t r = ncclCommFinalize(c->nccl);
		if (settle(c->nccl, r, "ncclCommFinalize", c->timeout_ms, err,
			   sizeof(err)) == SD_OK)
			ncclCommDestroy(c->nccl);
		else {
			ncclCommAbort(c->nccl);
			c->aborted = 1;
		}
	}
	c->nccl = NULL;
	pthread_mutex_unlock(&c->mu);
	comm_free(c);
}

/*
 * From any thread.  The rank's own thread holds c->mu only inside an NCCL
 * call, which on a blocking communicator returns once the work is queued;
 * one that stays blocked (a group waiting to connect to a peer that is
 * gone) keeps the lock, and then the communicator is only marked aborted:
 * freeing it under that call would be a use after free, and the run's
 * backstop ends the process if the call never returns.
 */
static void nccl_abort(struct sd_comm *c)
{
	if (!c)
		return;
	if (c->hang_flag)
		*c->hang_flag = 1;
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 2;
	if (pthread_mutex_timedlock(&c->mu, &until) != 0) {
		c->aborted = 1;
		return;
	}
	if (c->nccl && !c->aborted) {
		c->aborted = 1;
		ncclCommAbort(c->nccl);
		c->nccl = NULL;
	}
	pthread_mutex_unlock(&c->mu);
}

static int nccl_describe_device(struct sd_comm *c, struct sd_device_info *info)
{
	size_t free_b = 0, total_b = 0;
	memset(info, 0, sizeof(*info));
	snprintf(info->name, sizeof(info->name), "%s", g.name);
	snprintf(info->pci_bus_id, sizeof(info->pci_bus_id), "%s", g.bus);
	snprintf(info->uuid, sizeof(info->uuid), "%s", g.uuid);
	if (cudaMemGetInfo(&free_b, &total_b) == cudaSuccess) {
		info->mem_total_bytes = total_b;
		info->mem_free_bytes = free_b;
	}
	snprintf(info->transport, sizeof(info->transport), "%s", g.transport);
	return SD_OK;
}

/* Every GPU pair of this host and how it is linked (probe.c: NVML through
 * dlopen, else CUDA peer access), as links.c classifies it. */
static int nccl_describe_links(struct sd_comm *c, char *json, size_t len,
			       char *err, size_t errlen)
{
	static struct sd_nvml_answer a;
	char note[256];
	if (len < 3) {
		snprintf(err, errlen, "a buffer of %zu bytes cannot hold the "
			 "links", len);
		return SD_ERR_NOMEM;
	}
	snprintf(json, len, "[]");
	if (sd_links_probe_host(&a, note, sizeof(note)) != 0) {
		snprintf(err, errlen, "%s", note);
		return SD_ERR_NODEV;
	}
	size_t need = sd_links_json(&a, json, len);
	if (need >= len) {
		snprintf(json, len, "[]");
		snprintf(err, errlen, "the links of %d GPUs need %zu bytes, "
			 "more than the %zu given", a.ngpus, need + 1, len);
		return SD_ERR_NOMEM;
	}
	snprintf(err, errlen, "%s", note);
	return SD_OK;
}

/* ------------------------------------------------------------ buffers */

static int nccl_buf_alloc(struct sd_comm *c, size_t bytes, void **out,
			  char *err, size_t errlen)
{
	size_t free_b = 0, total_b = 0;
	char want[32], have[32], tot[32], fit[32], hint[32];
	*out = NULL;
	cudaError_t e = cudaMemGetInfo(&free_b, &total_b);
	if (e != cudaSuccess) {
		snprintf(err, errlen, "%s on %s: cudaMemGetInfo: %s", g.what,
			 g.host, cuerr(e));
		return SD_ERR_BACKEND;
	}
	/* the runner allocates a send and a receive buffer of equal size:
	 * check for both at the first, as nccl-tests caps its sizes */
	uint64_t need = (uint64_t)bytes * (c->nheld % 2 == 0 ? 2 : 1);
	uint64_t avail = (uint64_t)free_b;
	if (need + SD_NCCL_RESERVE_BYTES > avail) {
		uint64_t max = sd_nccl_max_buffer_bytes(
			avail + c->held_bytes, SD_NCCL_RESERVE_BYTES, 2, 1, 1);
		format_bytes(bytes, want, sizeof(want));
		format_bytes(free_b, have, sizeof(have));
		format_bytes(total_b, tot, sizeof(tot));
		format_bytes(max, fit, sizeof(fit));
		format_e(max, hint, sizeof(hint));
		snprintf(err, errlen, "two buffers of %s do not fit on %s on "
			 "%s (%s free of %s, 1 GiB kept for NCCL); the largest "
			 "size that fits is %s: pass -e %s or less", want,
			 g.what, g.host, have, tot, fit, hint);
		return SD_ERR_NOMEM;
	}
	if ((e = cudaMalloc(out, bytes ? bytes : 1)) != cudaSuccess) {
		format_bytes(bytes, want, sizeof(want));
		snprintf(err, errlen, "cudaMalloc of %s on %s on %s: %s; pass "
			 "a smaller -e", want, g.what, g.host, cuerr(e));
		*out = NULL;
		return SD_ERR_NOMEM;
	}
	c->held_bytes += bytes;
	c->nheld++;
	for (int i = 0; i < 8; i++)
		if (!c->bufs[i].p) {
			c->bufs[i].p = *out;
			c->bufs[i].bytes = bytes;
			break;
		}
	return SD_OK;
}

static void nccl_buf_free(struct sd_comm *c, void *p)
{
	if (!p || c->aborted)
		return;
	for (int i = 0; i < 8; i++)
		if (c->bufs[i].p == p) {
			c->held_bytes -= c->bufs[i].bytes;
			c->bufs[i].p = NULL;
			c->nheld--;
			break;
		}
	cudaFree(p);
}

/* ------------------------------------------------- waiting and aborting */

/* Poll the stream and NCCL until the work queued on c is done. */
static int stream_wait(struct sd_comm *c, int timeout_ms, const char *what,
		       char *err, size_t errlen)
{
	if (timeout_ms <= 0)
		timeout_ms = c->timeout_ms;
	double end = sd_nccl_now_s() + timeout_ms / 1e3;
	for (long spins = 0;; spins++) {
		if (c->aborted) {
			snprintf(err, errlen, "rank %d on %s, %s: the NCCL "
				 "communicator was aborted", c->rank, g.host,
				 g.what);
			return SD_ERR_CANCELLED;
		}
		cudaError_t q = cudaStreamQuery(c->stream);
		ncclResult_t ae = ncclSuccess;
		pthread_mutex_lock(&c->mu);
		if (c->nccl)
			ncclCommGetAsyncError(c->nccl, &ae);
		pthread_mutex_unlock(&c->mu);
		if (ae != ncclSuccess && ae != ncclInProgress) {
			snprintf(err, errlen, "rank %d on %s, %s: NCCL failed "
				 "during %s: %s; communicator aborted", c->rank,
				 g.host, g.what, what, nccl_what(ae));
			nccl_abort(c);
			return ae == ncclRemoteError || ae == ncclSystemError
				       ? SD_ERR_PEER : SD_ERR_BACKEND;
		}
		if (q == cudaSuccess)
			return SD_OK;
		if (q != cudaErrorNotReady) {
			snprintf(err, errlen, "rank %d on %s, %s: CUDA failed "
				 "during %s: %s", c->rank, g.host, g.what, what,
				 cuerr(q));
			nccl_abort(c);
			return SD_ERR_BACKEND;
		}
		if (sd_nccl_now_s() > end) {
			snprintf(err, errlen, "rank %d on %s, %s: %s did not "
				 "complete within %.1f s; NCCL communicator "
				 "aborted", c->rank, g.host, g.what, what,
				 timeout_ms / 1e3);
			nccl_abort(c);
			return SD_ERR_TIMEOUT;
		}
		if (spins > 100000)
			sd_nccl_nap_us(50); /* long operations: stop burning a core */
	}
}

static int nccl_wait(struct sd_comm *c, int timeout_ms, char *err,
		     size_t errlen)
{
	return stream_wait(c, timeout_ms, "the operations started", err,
			   errlen);
}

/* ----------------------------------------------------- data and checks */

static int check_args(struct sd_comm *c, const struct sd_op_args *a,
		      char *err, size_t errlen)
{
	if (c->aborted || !c->nccl) {
		snprintf(err, errlen, "rank %d on %s: the NCCL communicator "
			 "was aborted", c->rank, g.host);
		return SD_ERR_CANCELLED;
	}
	if (!sd_coll_get(a->op) || sd_nccl_redop(a->redop) < 0) {
		snprintf(err, errlen, "operation %d or reduction %d is unknown "
			 "to the nccl backend", (int)a->op, (int)a->redop);
		return SD_ERR_INVALID;
	}
	return sd_nccl_check_dtype(a->dtype, g.cc_major, g.cc_minor, g.what,
				   err, errlen);
}

static int nccl_fill(struct sd_comm *c, const struct sd_op_args *a, char *err,
		     size_t errlen)
{
	int rc = check_args(c, a, err, errlen);
	if (rc)
		return rc;
	cudaError_t e = (cudaError_t)sd_cu_fill(a, c->rank, c->size,
						 c->stream);
	if (e != cudaSuccess) {
		snprintf(err, errlen, "fill kernel on %s, %s: %s", g.host,
			 g.what, cuerr(e));
		return SD_ERR_BACKEND;
	}
	return stream_wait(c, a->timeout_ms, "the fill kernel", err, errlen);
}

static int nccl_verify(struct sd_comm *c, const struct sd_op_args *a,
		       uint64_t *wrong, struct sd_mismatch *first, char *err,
		       size_t errlen)
{
	uint64_t res[2] = { 0, UINT64_MAX };
	double want;
	int rc;
	*wrong = 0;
	if ((rc = check_args(c, a, err, errlen)))
		return rc;
	if (!a->recv_count || !sd_pattern_expect(a, c->rank, c->size, 0, &want))
		return SD_OK; /* this rank receives nothing */
	cudaError_t e = (cudaError_t)sd_cu_verify(
		a, c->rank, c->size, c->d_result,
		c->stream);
	if (!e)
		e = cudaMemcpyAsync(res, c->d_result, sizeof(res),
				    cudaMemcpyDeviceToHost, c->stream);
	if (e != cudaSuccess) {
		snprintf(err, errlen, "check kernel on %s, %s: %s", g.host,
			 g.what, cuerr(e));
		return SD_ERR_BACKEND;
	}
	if ((rc = stream_wait(c, a->timeout_ms, "the check kernel", err,
			      errlen)))
		return rc;
	*wrong = res[0];
	if (res[0] && first && res[1] < a->recv_count) {
		size_t ts = sd_dtype_size(a->dtype);
		uint64_t got = 0;
		cudaMemcpy(&got, (char *)a->recvbuf + res[1] * ts, ts,
			   cudaMemcpyDeviceToHost);
		sd_pattern_expect_rule(a, SD_AVG_NCCL, c->rank, c->size, res[1],
				       &want);
		first->index = res[1];
		sd_pattern_format(a->dtype, sd_encode(a->dtype, want),
				  first->expected, sizeof(first->expected));
		sd_pattern_format(a->dtype, got, first->got, sizeof(first->got));
	}
	return SD_OK;
}

static int nccl_corrupt(struct sd_comm *c, const struct sd_op_args *a,
			uint64_t index)
{
	size_t ts = sd_dtype_size(a->dtype);
	uint64_t bits = 0;
	if (!a->recv_count)
		return SD_OK;
	if (index >= a->recv_count)
		index = a->recv_count - 1;
	char *p = (char *)a->recvbuf + index * ts;
	if (cudaMemcpy(&bits, p, ts, cudaMemcpyDeviceToHost) != cudaSuccess)
		return SD_ERR_BACKEND;
	bits ^= 1u;
	if (cudaMemcpy(p, &bits, ts, cudaMemcpyHostToDevice) != cudaSuccess)
		return SD_ERR_BACKEND;
	return SD_OK;
}

/* ---------------------------------------------------------- operations */

/* NCCL chooses the algorithm (NCCL_ALGO, NCCL_PROTO when the communicator
 * is made); there is no per-call choice to offer. */
static const char *nccl_algo_name(enum sd_op op, int idx)
{
	return NULL;
}

static int nccl_prepare(struct sd_comm *c, const struct sd_op_args *a,
			char *err, size_t errlen)
{
	int rc = check_args(c, a, err, errlen);
	if (rc)
		return rc;
	c->ev_n = 0; /* a new series of run() calls */
	/* the events that will time it, made now rather than in the loop */
	if (a->timed_iters > 0 &&
	    (rc = ev_reserve(c, a->timed_iters, err, errlen)))
		return rc;
	const struct sd_coll *d = sd_coll_get(a->op);
	if (c->size < d->min_ranks) {
		snprintf(err, errlen, "%s needs at least %d ranks", d->name,
			 d->min_ranks);
		return SD_ERR_INVALID;
	}
	return SD_OK;
}

/* Enqueue op `a` on c's stream; returns the first NCCL error. */
static ncclResult_t enqueue(struct sd_comm *c, const struct sd_op_args *a)
{
	ncclDataType_t dt = (ncclDataType_t)sd_nccl_dtype(a->dtype);
	ncclRedOp_t op = (ncclRedOp_t)sd_nccl_redop(a->redop);
	ncclComm_t nc = c->nccl;
	cudaStream_t s = c->stream;
	size_t ts = sd_dtype_size(a->dtype);
	const char *send = a->sendbuf;
	char *recv = a->recvbuf;
	int me = c->rank, n = c->size, root = a->root;
	ncclResult_t r = ncclSuccess, g_end;

	switch (a->op) {
	case SD_OP_ALL_REDUCE:
		return ncclAllReduce(send, recv, a->send_count, dt, op, nc, s);
	case SD_OP_ALL_GATHER:
		return ncclAllGather(send, recv, a->send_count, dt, nc, s);
	case SD_OP_REDUCE_SCATTER:
		return ncclReduceScatter(send, recv, a->recv_count, dt, op, nc,
					 s);
	case SD_OP_BROADCAST:
		return ncclBroadcast(send, recv, a->send_count, dt, root, nc, s);
	case SD_OP_REDUCE:
		return ncclReduce(send, recv, a->send_count, dt, op, root, nc, s);
	default:
		break;
	}
	if (a->op == SD_OP_ALL_TO_ALL && g.alltoall)
		return g.alltoall(send, recv, a->recv_count / (size_t)n, dt, nc,
				  s);
	if (a->op == SD_OP_GATHER && g.gather)
		return g.gather(send, recv, a->send_count, dt, root, nc, s);
	if (a->op == SD_OP_SCATTER && g.scatter)
		return g.scatter(send, recv, a->recv_count, dt, root, nc, s);
	/* point-to-point patterns, in one group */
	if ((r = ncclGroupStart()) != ncclSuccess)
		return r;
	switch (a->op) {
	case SD_OP_ALL_TO_ALL: {
		size_t chunk = a->recv_count / (size_t)n;
		for (int p = 0; p < n && (r == ncclSuccess || r == ncclInProgress);
		     p++) {
			r = ncclSend(send + (size_t)p * chunk * ts, chunk, dt, p,
				     nc, s);
			if (r == ncclSuccess || r == ncclInProgress)
				r = ncclRecv(recv + (size_t)p * chunk * ts,
					     chunk, dt, p, nc, s);
		}
		break;
	}
	case SD_OP_GATHER:
		if (me == root)
			for (int p = 0; p < n && (r == ncclSuccess ||
						  r == ncclInProgress); p++)
				r = ncclRecv(recv + (size_t)p * a->send_count * ts,
					     a->send_count, dt, p, nc, s);
		if (r == ncclSuccess || r == ncclInProgress)
			r = ncclSend(send, a->send_count, dt, root, nc, s);
		break;
	case SD_OP_SCATTER:
		if (me == root)
			for (int p = 0; p < n && (r == ncclSuccess ||
						  r == ncclInProgress); p++)
				r = ncclSend(send + (size_t)p * a->recv_count * ts,
					     a->recv_count, dt, p, nc, s);
		if (r == ncclSuccess || r == ncclInProgress)
			r = ncclRecv(recv, a->recv_count, dt, root, nc, s);
		break;
	case SD_OP_SENDRECV:
		r = ncclSend(send, a->send_count, dt, (me + 1) % n, nc, s);
		if (r == ncclSuccess || r == ncclInProgress)
			r = ncclRecv(recv, a->recv_count, dt, (me + n - 1) % n,
				     nc, s);
		break;
	case SD_OP_PT2PT:
		if (me == 0)
			r = ncclSend(send, a->send_count, dt, 1, nc, s);
		else if (me == 1)
			r = ncclRecv(recv, a->recv_count, dt, 0, nc, s);
		break;
	default:
		r = ncclInvalidArgument;
		break;
	}
	g_end = ncclGroupEnd();
	return r == ncclSuccess || r == ncclInProgress ? g_end : r;
}

/*
 * Make c's event ring hold `want` pairs (at most SD_NCCL_MAX_TIMED).
 * Returns SD_OK, or a status with err set.
 */
static int ev_reserve(struct sd_comm *c, long want, char *err, size_t errlen)
{
	if (want > SD_NCCL_MAX_TIMED)
		want = SD_NCCL_MAX_TIMED;
	if (want <= c->ev_cap)
		return SD_OK;
	cudaEvent_t *s = realloc(c->ev_start, (size_t)want * sizeof(*s));
	if (s)
		c->ev_start = s;
	cudaEvent_t *t = s ? realloc(c->ev_stop, (size_t)want * sizeof(*t))
			   : NULL;
	if (t)
		c->ev_stop = t;
	if (!s || !t) {
		snprintf(err, errlen, "rank %d on %s, %s: out of host memory "
			 "for %ld timing events", c->rank, g.host, g.what,
			 2 * want);
		return SD_ERR_NOMEM;
	}
	for (long i = c->ev_cap; i < want; i++) {
		cudaError_t e = cudaEventCreate(&c->ev_start[i]);
		if (e == cudaSuccess) {
			e = cudaEventCreate(&c->ev_stop[i]);
			if (e != cudaSuccess)
				cudaEventDestroy(c->ev_start[i]);
		}
		if (e != cudaSuccess) {
			snprintf(err, errlen, "rank %d on %s, %s: "
				 "cudaEventCreate: %s", c->rank, g.host,
				 g.what, cuerr(e));
			return SD_ERR_BACKEND;
		}
		c->ev_cap = i + 1;
	}
	return SD_OK;
}

/*
 * The ring slot for one more run().  prepare() made the ring as large as
 * the timed series (timed_iters): this grows it only for a caller that did
 * not say, doubling from 64 pairs up to SD_NCCL_MAX_TIMED; past that the
 * ring wraps and keeps the newest.  Returns the slot, or -1 with err set.
 */
static long ev_slot(struct sd_comm *c, char *err, size_t errlen)
{
	if (c->ev_n == c->ev_cap && c->ev_cap < SD_NCCL_MAX_TIMED &&
	    ev_reserve(c, c->ev_cap ? c->ev_cap * 2 : 64, err, errlen))
		return -1;
	return c->ev_n % c->ev_cap;
}

/* Enqueue a on c under c->mu (see nccl_abort), the stream bracketed by
 * c's next event pair when `timed`. */
static int enqueue_locked(struct sd_comm *c, const struct sd_op_args *a,
			  long slot, char *err, size_t errlen)
{
	cudaError_t e = cudaSuccess;
	int rc = lock_live(c, err, errlen);
	if (rc)
		return rc;
	if (slot >= 0 &&
	    (e = cudaEventRecord(c->ev_start[slot], c->stream)) != cudaSuccess)
		goto cuda_failed;
	/* blocking: the kernels are queued when the call returns, so the
	 * stop event brackets them */
	rc = settle(c->nccl, enqueue(c, a), "enqueueing the NCCL operation",
		    a->timeout_ms, err, errlen);
	if (rc) {
		pthread_mutex_unlock(&c->mu);
		return rc;
	}
	if (slot >= 0) {
		if ((e = cudaEventRecord(c->ev_stop[slot], c->stream)) !=
		    cudaSuccess)
			goto cuda_failed;
		c->ev_n++;
	}
	pthread_mutex_unlock(&c->mu);
	return SD_OK;
cuda_failed:
	pthread_mutex_unlock(&c->mu);
	snprintf(err, errlen, "rank %d on %s, %s: cudaEventRecord: %s", c->rank,
		 g.host, g.what, cuerr(e));
	return SD_ERR_BACKEND;
}

static int nccl_run(struct sd_comm *c, const struct sd_op_args *a, char *err,
		    size_t errlen)
{
	if (c->aborted || !c->nccl) {
		snprintf(err, errlen, "rank %d on %s: the NCCL communicator "
			 "was aborted", c->rank, g.host);
		return SD_ERR_CANCELLED;
	}
	if (c->hang_pending) {
		c->hang_pending = 0;
		sd_cu_hang(c->hang_flag, 600, c->stream);
	}
	/* no events in the ordinary timed loop: nothing extra per op */
	long slot = -1;
	if (a->want_iter_times && (slot = ev_slot(c, err, errlen)) < 0)
		return SD_ERR_BACKEND;
	return enqueue_locked(c, a, slot, err, errlen);
}

/*
 * Device times of the last `iters` run() calls, oldest first, from their
 * event pairs; waits for the stream first.  Empties the record.
 */
static int nccl_iter_times(struct sd_comm *c, double *time_us, long iters,
			   char *err, size_t errlen)
{
	int rc;
	if (iters <= 0)
		return SD_OK;
	if (c->aborted || !c->nccl) {
		snprintf(err, errlen, "rank %d on %s: the NCCL communicator "
			 "was aborted", c->rank, g.host);
		return SD_ERR_CANCELLED;
	}
	if (iters > SD_NCCL_MAX_TIMED) {
		snprintf(err, errlen, "rank %d on %s, %s: --per-iter keeps the "
			 "device times of at most %ld iterations; pass -n %ld "
			 "or less", c->rank, g.host, g.what, SD_NCCL_MAX_TIMED,
			 SD_NCCL_MAX_TIMED);
		return SD_ERR_INVALID;
	}
	if (iters > c->ev_n) {
		snprintf(err, errlen, "rank %d on %s, %s: %ld iterations timed "
			 "on the GPU, %ld asked for", c->rank, g.host, g.what,
			 c->ev_n, iters);
		return SD_ERR_BACKEND;
	}
	if ((rc = stream_wait(c, c->timeout_ms, "the timed operations", err,
			      errlen)))
		return rc;
	for (long i = 0; i < iters; i++) {
		long slot = (c->ev_n - iters + i) % c->ev_cap;
		float ms = 0;
		cudaError_t e = cudaEventElapsedTime(&ms, c->ev_start[slot],
						     c->ev_stop[slot]);
		if (e != cudaSuccess) {
			snprintf(err, errlen, "rank %d on %s, %s: "
				 "cudaEventElapsedTime: %s", c->rank, g.host,
				 g.what, cuerr(e));
			return SD_ERR_BACKEND;
		}
		time_us[i] = (double)ms * 1e3;
	}
	c->ev_n = 0;
	return SD_OK;
}

static int nccl_barrier(struct sd_comm *c, int timeout_ms, char *err,
			size_t errlen)
{
	if (c->aborted || !c->nccl) {
		snprintf(err, errlen, "rank %d on %s: the NCCL communicator "
			 "was aborted", c->rank, g.host);
		return SD_ERR_CANCELLED;
	}
	int rc = lock_live(c, err, errlen);
	if (rc)
		return rc;
	ncclResult_t r = ncclAllReduce(c->d_barrier, c->d_barrier, 1, ncclInt32,
				       ncclSum, c->nccl, c->stream);
	rc = settle(c->nccl, r, "the barrier", timeout_ms, err, errlen);
	pthread_mutex_unlock(&c->mu);
	if (rc)
		return rc;
	return stream_wait(c, timeout_ms, "the barrier", err, errlen);
}

#ifdef HAVE_CUBLAS
/* `shakedown gemm`: a series of matrix multiplies on this rank's GPU and
 * stream, outside any collective (nccl_gemm.c). */
static int nccl_gemm(struct sd_comm *c, const struct sd_gemm_args *a,
		     struct sd_gemm_result *r, char *err, size_t errlen)
{
	if (c->aborted || !c->nccl) {
		snprintf(err, errlen, "rank %d on %s: the NCCL communicator "
			 "was aborted", c->rank, g.host);
		return SD_ERR_CANCELLED;
	}
	char what[300];
	snprintf(what, sizeof(what), "%s on %s", g.what, g.host);
	struct sd_nccl_gpu gpu = { g.cc_major, g.cc_minor, what };
	return sd_nccl_gemm(c->stream, &gpu, a, r, err, errlen);
}

/* `shakedown train --backend nccl`: the model on this rank's GPU and
 * stream (train_gpu.cu), so the gradient buckets' all_reduce (run())
 * queues behind the kernels that made them. */
static int nccl_train_create(struct sd_comm *c, const struct sd_gpt_config *cfg,
			     const struct sd_gpt_tensor *t, int nt,
			     const float *params, struct sd_train_gpu **out,
			     char *err, size_t errlen)
{
	*out = NULL;
	if (!c || c->aborted || !c->nccl) {
		snprintf(err, errlen, "rank %d on %s: the NCCL communicator "
			 "was aborted", c ? c->rank : -1, g.host);
		return SD_ERR_CANCELLED;
	}
	char what[300];
	snprintf(what, sizeof(what), "%s on %s", g.what, g.host);
	return sd_nccl_train_create(c->stream, what, cfg, t, nt, params, out,
				    err, errlen);
}

const struct sd_train_gpu_ops shakedown_train_gpu = {
	.abi = SD_TRAIN_GPU_ABI,
	.table_size = (uint32_t)sizeof(struct sd_train_gpu_ops),
	.create = nccl_train_create,
	.destroy = sd_nccl_train_destroy,
	.forward = sd_nccl_train_forward,
	.backward = sd_nccl_train_backward,
	.grads = sd_nccl_train_grads,
	.adamw_step = sd_nccl_train_adamw,
	.zero_grad = sd_nccl_train_zero_grad,
	.sync = sd_nccl_train_sync,
	.read_params = sd_nccl_train_read_params,
};
#endif

const struct sd_backend_ops shakedown_backend = {
	SD_BACKEND_IDENTITY("nccl", g_version),
	.dtypes = (((1u << SD_DTYPE_COUNT) - 1) &
		   ~((1u << SD_FP8_E4M3) | (1u << SD_FP8_E5M2))) |
		  SD_NCCL_FP8_MASK,
	.redops = (1u << SD_REDOP_COUNT) - 1,
	.ops = (1u << SD_OP_COUNT) - 1,
	.init = nccl_init,
	.fini = nccl_fini,
	.comm_create = nccl_comm_create,
	.comm_split = nccl_comm_split,
	.comm_rank = nccl_comm_rank,
	.comm_size = nccl_comm_size,
	.comm_destroy = nccl_comm_destroy,
	.describe_device = nccl_describe_device,
	.buf_alloc = nccl_buf_alloc,
	.buf_free = nccl_buf_free,
	.fill = nccl_fill,
	.verify = nccl_verify,
	.corrupt = nccl_corrupt,
	.algo_name = nccl_algo_name,
	.prepare = nccl_prepare,
	.run = nccl_run,
	.wait = nccl_wait,
	.barrier = nccl_barrier,
	.abort = nccl_abort,
	.iter_times = nccl_iter_times,
	.describe_links = nccl_describe_links,
	.env_check = nccl_env_check,
#ifdef HAVE_CUBLAS
	.gemm = nccl_gemm,
#endif
};
