/*
 * unit_nccl.c - unit tests of the NCCL plugin's host-side decisions
 * (plugins/nccl/nccl_host.c), runnable without CUDA: type and reduction
 * mapping, fp8 support by compute capability, memory capping, GPU choice
 * from the environment, one GPU per rank, what a test's env may set
 * (lib/nccl_env.c) and into which ncclConfig_t fields, and avg:
 * NCCL's pre-multiplied sum replayed in this machine's float64, float32
 * and float16 arithmetic equals what the pattern expects of NCCL
 * (SD_AVG_NCCL), in any order of the ranks.
 */
#include <stdlib.h>
#include <string.h>

#include "shakedown/pattern.h"
#include "shakedown/nccl_env.h"
#include "nccl_host.h"
#include "tap.h"

#define GiB (1ull << 30)

static void test_mapping(void)
{
	static const struct { enum sd_dtype t; int nccl; } dt[] = {
		{ SD_INT8, 0 },     { SD_UINT8, 1 },    { SD_INT32, 2 },
		{ SD_UINT32, 3 },   { SD_INT64, 4 },    { SD_UINT64, 5 },
		{ SD_FLOAT16, 6 },  { SD_FLOAT32, 7 },  { SD_FLOAT64, 8 },
		{ SD_BFLOAT16, 9 }, { SD_FP8_E4M3, 10 }, { SD_FP8_E5M2, 11 },
		{ SD_DTYPE_COUNT, -1 },
	};
	for (size_t i = 0; i < sizeof(dt) / sizeof(dt[0]); i++)
		is_int(sd_nccl_dtype(dt[i].t), dt[i].nccl, "dtype %d -> nccl %d",
		       (int)dt[i].t, dt[i].nccl);
	static const struct { enum sd_redop r; int nccl; } ro[] = {
		{ SD_SUM, 0 }, { SD_PROD, 1 }, { SD_MIN, 3 }, { SD_MAX, 2 },
		{ SD_AVG, 4 }, { SD_REDOP_COUNT, -1 },
	};
	for (size_t i = 0; i < sizeof(ro) / sizeof(ro[0]); i++)
		is_int(sd_nccl_redop(ro[i].r), ro[i].nccl, "redop %d -> nccl %d",
		       (int)ro[i].r, ro[i].nccl);
}

static void test_fp8(void)
{
	static const struct { enum sd_dtype t; int major, minor, rc; } rows[] = {
		{ SD_FP8_E4M3, 8, 0, SD_ERR_INVALID },
		{ SD_FP8_E5M2, 8, 9, SD_ERR_INVALID },
		{ SD_FP8_E4M3, 9, 0, SD_OK },
		{ SD_FP8_E5M2, 10, 0, SD_OK },
		{ SD_BFLOAT16, 8, 0, SD_OK },
		{ SD_FLOAT16, 7, 0, SD_OK },
	};
	char err[256];
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		err[0] = '\0';
		is_int(sd_nccl_check_dtype(rows[i].t, rows[i].major,
					   rows[i].minor, "GPU 0 (A100)", err,
					   sizeof(err)),
		       rows[i].rc, "dtype %d on cc %d.%d", (int)rows[i].t,
		       rows[i].major, rows[i].minor);
	}
	sd_nccl_check_dtype(SD_FP8_E4M3, 8, 0, "GPU 0 (NVIDIA A100, 0000:07:00.0)",
			    err, sizeof(err));
	ok(strstr(err, "GPU 0 (NVIDIA A100, 0000:07:00.0): fp8 (fp8_e4m3) "
		       "needs compute capability 9.0") != NULL,
	   "fp8 message names the GPU and the need: %s", err);
}

static void test_capping(void)
{
	static const struct {
		uint64_t avail, reserve;
		int nbuf;
		size_t ts;
		int n;
		uint64_t want;
	} rows[] = {
		/* an H200: 140 GiB free, two buffers -> 69.5 GiB each */
		{ 140 * GiB, GiB, 2, 4, 8, 139 * GiB / 2 / 32 * 32 },
		{ 80 * GiB, GiB, 2, 2, 1, 79 * GiB / 2 / 2 * 2 },
		{ 3 * GiB, GiB, 2, 8, 3, GiB / 24 * 24 },
		{ GiB, GiB, 2, 4, 1, 0 },         /* nothing beyond the reserve */
		{ GiB / 2, GiB, 2, 4, 1, 0 },
		{ 10 * GiB + 7, 0, 1, 1, 1, 10 * GiB + 7 },
		{ 100, 0, 2, 8, 4, 32 },          /* whole elements for n ranks */
		{ 100, 0, 0, 8, 4, 0 },
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		is_int(sd_nccl_max_buffer_bytes(rows[i].avail, rows[i].reserve,
						rows[i].nbuf, rows[i].ts,
						rows[i].n),
		       rows[i].want, "max buffer row %zu", i);
}

/* A node's ranks, each with the CUDA_VISIBLE_DEVICES it sees and the
 * number of devices that makes visible; every rank picks its device as
 * the plugin does (the view exchange, then the pick). */
struct layout {
	const char *name;
	int n;
	const char *host[8];
	const char *cvd[8];
	int visible[8];
	int want[8]; /* -1: refused */
	const char *msg;
};

static void pick_layout(const struct layout *l)
{
	struct sd_gpu_view v[8];
	memset(v, 0, sizeof(v));
	for (int r = 0; r < l->n; r++) {
		snprintf(v[r].host, sizeof(v[r].host), "%s", l->host[r]);
		v[r].cvd_hash = sd_gpu_view_hash(l->cvd[r]);
	}
	char got[64] = "", want[64] = "", err[512] = "", first[512] = "";
	for (int r = 0; r < l->n; r++) {
		int index, count;
		sd_gpu_share(v, l->n, r, &index, &count);
		struct sd_gpu_env env = { l->cvd[r], l->host[r] };
		err[0] = '\0';
		int d = sd_nccl_pick_device(index, count, l->visible[r], &env,
					    err, sizeof(err));
		if (d < 0 && !first[0])
			snprintf(first, sizeof(first), "%s", err);
		size_t u = strlen(got), w = strlen(want);
		snprintf(got + u, sizeof(got) - u, "%s%d", r ? " " : "", d);
		snprintf(want + w, sizeof(want) - w, "%s%d", r ? " " : "",
			 l->want[r]);
	}
	ok(strcmp(got, want) == 0, "%s: devices by rank %s (want %s)",
	   l->name, got, want);
	if (l->msg)
		ok(strstr(first, l->msg) != NULL, "%s: says why: %s", l->name,
		   first);
}

static void test_pick(void)
{
	static const struct layout rows[] = {
		{ "nothing set, 4 ranks, 4 GPUs", 4,
		  { "n1", "n1", "n1", "n1" }, { 0 }, { 4, 4, 4, 4 },
		  { 0, 1, 2, 3 }, NULL },
		{ "the whole node in every task's list", 4,
		  { "n1", "n1", "n1", "n1" },
		  { "0,1,2,3", "0,1,2,3", "0,1,2,3", "0,1,2,3" },
		  { 4, 4, 4, 4 }, { 0, 1, 2, 3 }, NULL },
		{ "--gpus-per-task=1: a GPU of its own each", 4,
		  { "n1", "n1", "n1", "n1" }, { "0", "1", "2", "3" },
		  { 1, 1, 1, 1 }, { 0, 0, 0, 0 }, NULL },
		{ "two GPUs per task: each its first", 2, { "n1", "n1" },
		  { "0,1", "2,3" }, { 2, 2 }, { 0, 0 }, NULL },
		{ "--gpu-bind=closest: a socket's tasks share its list", 8,
		  { "n1", "n1", "n1", "n1", "n1", "n1", "n1", "n1" },
		  { "0,1,2,3", "0,1,2,3", "0,1,2,3", "0,1,2,3", "4,5,6,7",
		    "4,5,6,7", "4,5,6,7", "4,5,6,7" },
		  { 4, 4, 4, 4, 4, 4, 4, 4 }, { 0, 1, 2, 3, 0, 1, 2, 3 },
		  NULL },
		{ "closest, tasks interleaved over the sockets", 4,
		  { "n1", "n1", "n1", "n1" },
		  { "0,1", "2,3", "0,1", "2,3" }, { 2, 2, 2, 2 },
		  { 0, 0, 1, 1 }, NULL },
		{ "two nodes: counted per host", 4, { "n1", "n1", "n2", "n2" },
		  { 0 }, { 2, 2, 2, 2 }, { 0, 1, 0, 1 }, NULL },
		{ "5 ranks on 4 GPUs", 5, { "n1", "n1", "n1", "n1", "n1" },
		  { 0 }, { 4, 4, 4, 4, 4 }, { 0, 1, 2, 3, -1 },
		  "n1 has 5 local ranks seeing the same 4 GPUs; the rank "
		  "that is number 4 of them has no GPU" },
		{ "3 tasks sharing a socket's 2 GPUs", 3, { "n1", "n1", "n1" },
		  { "0,1", "0,1", "0,1" }, { 2, 2, 2 }, { 0, 1, -1 },
		  "(CUDA_VISIBLE_DEVICES=0,1); the rank that is number 2" },
		{ "no device visible", 1, { "n1" }, { "" }, { 0 }, { -1 },
		  "no CUDA device visible on n1" },
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		pick_layout(&rows[i]);
	ok(sd_gpu_view_hash(NULL) == 0 && sd_gpu_view_hash("") != 0,
	   "an empty CUDA_VISIBLE_DEVICES is not an unset one");
}

static void test_unique(void)
{
	struct sd_gpu_id ids[3] = {
		{ "node1", "0000:1b:00.0", 0, 0 },
		{ "node1", "0000:29:00.0", 1, 1 },
		{ "node2", "0000:1b:00.0", 2, 0 },
	};
	char err[512] = "";
	is_int(sd_nccl_check_unique(ids, 3, err, sizeof(err)), SD_OK,
	       "same bus id on two hosts is fine");
	strcpy(ids[1].pci_bus_id, "0000:1b:00.0");
	is_int(sd_nccl_check_unique(ids, 3, err, sizeof(err)), SD_ERR_NODEV,
	       "two ranks on one GPU is an error (exit 3)");
	ok(strstr(err, "ranks 0 and 1 both use GPU 0000:1b:00.0 on node1") !=
		   NULL, "message names ranks, GPU and host: %s", err);
}

/* What NCCL reads once per process (all a plan is likely to try), and
 * the rest with a reason of their own: refused, saying why and what to
 * do instead. */
static void test_env_refused(void)
{
	static const struct {
		const char *name, *value, *why, *fix;
	} rows[] = {
		{ "NCCL_P2P_DISABLE", "1", "is read once per process by NCCL",
		  "set it in the job's environment instead, e.g. "
		  "NCCL_P2P_DISABLE=1 srun ... shakedown run" },
		{ "NCCL_P2P_LEVEL", "NVL", "is read once per process by NCCL",
		  "e.g. NCCL_P2P_LEVEL=NVL srun" },
		{ "NCCL_SHM_DISABLE", "1", "is read once per process by NCCL",
		  "e.g. NCCL_SHM_DISABLE=1 srun" },
		{ "NCCL_NVLS_ENABLE", "0", "is read once per process by NCCL",
		  "e.g. NCCL_NVLS_ENABLE=0 srun" },
		{ "NCCL_IB_DISABLE", "1", "is read once per process by NCCL",
		  "e.g. NCCL_IB_DISABLE=1 srun" },
		{ "NCCL_BUFFSIZE", "8388608", "is read once per process by NCCL",
		  "e.g. NCCL_BUFFSIZE=8388608 srun" },
		{ "NCCL_MIN_NCHANNELS", "8", "is read once per process by NCCL",
		  "shakedown run, or NCCL_MIN_CTAS in the test" },
		{ "NCCL_SOCKET_IFNAME", "eth0", "is read once per process by NCCL",
		  "shakedown run, or --iface NAME" },
		{ "NCCL_IB_HCA", "mlx5_0", "is read once per process by NCCL",
		  "e.g. NCCL_IB_HCA=mlx5_0 srun" },
		{ "NCCL_DEBUG", "INFO", "is read once per process by NCCL",
		  "e.g. NCCL_DEBUG=INFO srun" },
		{ "NCCL_IB_TC", "106", "is read once per process by NCCL",
		  "e.g. NCCL_IB_TC=106 srun" },
		{ "NCCL_ALGO", "Ring", "only from the process environment, which "
		  "shakedown does not change while NCCL's threads run",
		  "e.g. NCCL_ALGO=Ring srun ... shakedown run, one run per value" },
		{ "NCCL_PROTO", "Simple", "only from the process environment",
		  "e.g. NCCL_PROTO=Simple srun" },
		{ "NCCL_COMM_BLOCKING", "1", "is shakedown's to set: its "
		  "communicators are blocking", "; drop it" },
		{ "NCCL_COMM_SHRINK_SHARE_RESOURCES", "1", "shrinks no "
		  "communicator", "; drop it" },
		{ "NCCL_WORK_FIFO_DEPTH", "1024", "is not one NCCL takes per "
		  "communicator (a test can set only NCCL_CGA_CLUSTER_SIZE, "
		  "NCCL_MIN_CTAS, NCCL_MAX_CTAS, NCCL_NET,",
		  "e.g. NCCL_WORK_FIFO_DEPTH=1024 srun" },
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		char err[1024] = "";
		is_int(sd_nccl_env_check(rows[i].name, rows[i].value, err,
					 sizeof(err)), SD_ERR_INVALID,
		       "%s is refused", rows[i].name);
		ok(strncmp(err, rows[i].name, strlen(rows[i].name)) == 0 &&
			   strstr(err, rows[i].why) && strstr(err, rows[i].fix),
		   "with the reason and the fix: %s", err);
	}
}

/* What a test may set: every ncclConfig_t-backed row, at both ends of
 * its range, and nothing out of it. */
static void test_env_taken(void)
{
	size_t n, taken = 0;
	const struct sd_nccl_env_rule *rules = sd_nccl_env_rules(&n);
	for (size_t i = 0; i < n; i++) {
		const struct sd_nccl_env_rule *r = &rules[i];
		char err[1024] = "", v[32];
		if (!r->field) {
			ok(r->why && *r->why, "%s: refused with a reason",
			   r->name);
			continue;
		}
		taken++;
		ok(r->since >= SD_NCCL_VERSION(2, 17, 0) &&
			   r->since <= SD_NCCL_VERSION(2, 28, 9),
		   "%s: the field came with NCCL %d", r->name, r->since);
		if (r->offset < 0) {
			is_int(sd_nccl_env_check(r->name, "IB", err,
						 sizeof(err)), SD_OK,
			       "%s=IB is taken", r->name);
			continue;
		}
		snprintf(v, sizeof(v), "%d", r->lo);
		is_int(sd_nccl_env_check(r->name, v, err, sizeof(err)), SD_OK,
		       "%s=%s is taken", r->name, v);
		snprintf(v, sizeof(v), "%d", r->hi);
		is_int(sd_nccl_env_check(r->name, v, err, sizeof(err)), SD_OK,
		       "%s=%s is taken", r->name, v);
		snprintf(v, sizeof(v), "%d", r->hi + 1);
		is_int(sd_nccl_env_check(r->name, v, err, sizeof(err)),
		       SD_ERR_INVALID, "%s=%s is out of range", r->name, v);
		ok(strstr(err, "must be a whole number from") &&
			   strstr(err, r->field),
		   "naming the range and the field: %s", err);
		is_int(sd_nccl_env_check(r->name, "lots", err, sizeof(err)),
		       SD_ERR_INVALID, "%s=lots is not a number", r->name);
	}
	is_int(taken, 10, "ten variables a test may set");
	char err[1024] = "", longname[80];
	memset(longname, 'x', 64);
	longname[64] = '\0';
	is_int(sd_nccl_env_check("NCCL_NET", longname, err, sizeof(err)),
	       SD_ERR_INVALID, "a 64-character net name is too long");
	ok(strstr(err, "at most 63 characters") != NULL, "%s", err);
}

/* A plan's env string into the fields NCCL gets, as a plain struct. */
static void test_env_config(void)
{
	struct sd_nccl_config c;
	char err[1024] = "";
	is_int(sd_nccl_env_config("NCCL_CGA_CLUSTER_SIZE=2 NCCL_MIN_CTAS=4 "
				  "NCCL_MAX_CTAS=16 NCCL_NET=Socket "
				  "NCCL_COMM_SPLIT_SHARE_RESOURCES=1 "
				  "NCCL_COLLNET_ENABLE=0 NCCL_CTA_POLICY=1 "
				  "NCCL_NVLS_NCHANNELS=8 "
				  "NCCL_NCHANNELS_PER_NET_PEER=2 "
				  "NCCL_NVLINK_UTIL_CENTRIC_SCHED_ENABLE=1",
				  &c, err, sizeof(err)), SD_OK,
	       "every taken variable at once: %s", err);
	is_int(c.cga_cluster_size, 2, "cgaClusterSize 2");
	is_int(c.min_ctas, 4, "minCTAs 4");
	is_int(c.max_ctas, 16, "maxCTAs 16");
	ok(strcmp(c.net_name, "Socket") == 0, "netName Socket");
	is_int(c.split_share, 1, "splitShare 1");
	is_int(c.collnet_enable, 0, "collnetEnable 0");
	is_int(c.cta_policy, 1, "CTAPolicy 1");
	is_int(c.nvls_ctas, 8, "nvlsCTAs 8");
	is_int(c.nchannels_per_net_peer, 2, "nChannelsPerNetPeer 2");
	is_int(c.nvlink_centric_sched, 1, "nvlinkCentricSched 1");

	is_int(sd_nccl_env_config("NCCL_MIN_CTAS=2  NCCL_MIN_CTAS=8", &c, err,
				  sizeof(err)), SD_OK, "a name twice");
	is_int(c.min_ctas, 8, "the later pair wins");
	is_int(c.max_ctas, 64, "a minimum alone gets NCCL's default maximum, "
	       "which NCCL 2.28 needs to take it");
	is_int(c.cga_cluster_size, SD_NCCL_UNDEF, "the rest stays unset");
	is_int(c.nvls_ctas, SD_NCCL_UNDEF, "nvlsCTAs unset");
	ok(c.net_name[0] == '\0', "netName unset");
	is_int(sd_nccl_env_config("NCCL_MAX_CTAS=4", &c, err, sizeof(err)),
	       SD_OK, "a maximum alone");
	is_int(c.min_ctas, SD_NCCL_UNDEF, "leaves the minimum to NCCL");
	is_int(sd_nccl_env_config(NULL, &c, err, sizeof(err)), SD_OK,
	       "no env sets nothing");
	is_int(c.min_ctas, SD_NCCL_UNDEF, "minCTAs unset");

	is_int(sd_nccl_env_config("NCCL_MIN_CTAS=8 NCCL_MAX_CTAS=4", &c, err,
				  sizeof(err)), SD_ERR_INVALID,
	       "a minimum above the maximum is refused, as NCCL refuses it");
	ok(strstr(err, "NCCL_MIN_CTAS 8 is more than NCCL_MAX_CTAS 4"), "%s",
	   err);
	is_int(sd_nccl_env_config("NCCL_MIN_CTAS=4 NCCL_P2P_DISABLE=1", &c,
				  err, sizeof(err)), SD_ERR_INVALID,
	       "one refused pair refuses the env");
	ok(strstr(err, "NCCL_P2P_DISABLE is read once per process"), "%s",
	   err);
	is_int(sd_nccl_env_config("NCCL_MIN_CTAS", &c, err, sizeof(err)),
	       SD_ERR_INVALID, "a pair without a value");
	ok(strstr(err, "'NCCL_MIN_CTAS' in the NCCL environment is not "
		       "NAME=VALUE"), "%s", err);
}

/* A job's environment for sd_nccl_env_runtime: job[] as NAME=VALUE. */
static const char *job[4];
static const char *fake_env(const char *name)
{
	size_t n = strlen(name);
	for (size_t i = 0; i < sizeof(job) / sizeof(job[0]) && job[i]; i++)
		if (strncmp(job[i], name, n) == 0 && job[i][n] == '=')
			return job[i] + n + 1;
	return NULL;
}

/* In this process: the NCCL has the field, and the job's environment
 * does not override the test's value. */
static void test_env_runtime(void)
{
	char err[1024] = "";
	memset(job, 0, sizeof(job));
	is_int(sd_nccl_env_runtime("NCCL_NVLS_NCHANNELS", "8",
				   SD_NCCL_VERSION(2, 28, 9), fake_env, err,
				   sizeof(err)), SD_OK,
	       "nvlsCTAs on NCCL 2.28.9");
	is_int(sd_nccl_env_runtime("NCCL_NVLS_NCHANNELS", "8",
				   SD_NCCL_VERSION(2, 26, 2), fake_env, err,
				   sizeof(err)), SD_ERR_INVALID,
	       "not on 2.26.2, which has no nvlsCTAs");
	ok(strstr(err, "since 2.27.0, and this NCCL is 2.26.2"), "%s", err);
	is_int(sd_nccl_env_runtime("NCCL_P2P_DISABLE", "1",
				   SD_NCCL_VERSION(2, 28, 9), fake_env, err,
				   sizeof(err)), SD_ERR_INVALID,
	       "a refused variable stays refused");
	static const struct {
		const char *name, *value, *job;
		int rc;
	} rows[] = {
		{ "NCCL_MIN_CTAS", "8", NULL, SD_OK },
		{ "NCCL_MIN_CTAS", "8", "NCCL_MIN_CTAS=8", SD_OK },
		{ "NCCL_MIN_CTAS", "8", "NCCL_MIN_CTAS=0x8", SD_OK },
		{ "NCCL_MIN_CTAS", "8", "NCCL_MIN_CTAS=4", SD_ERR_INVALID },
		{ "NCCL_MIN_CTAS", "8", "NCCL_MIN_CTAS=", SD_ERR_INVALID },
		{ "NCCL_MIN_CTAS", "8", "NCCL_MAX_CTAS=16", SD_OK },
		{ "NCCL_MIN_CTAS", "8", "NCCL_MAX_CTAS=4", SD_ERR_INVALID },
		{ "NCCL_MAX_CTAS", "4", "NCCL_MIN_CTAS=8", SD_OK },
		{ "NCCL_NET", "IB", "NCCL_NET=ib", SD_OK },
		{ "NCCL_NET", "IB", "NCCL_NET=Socket", SD_ERR_INVALID },
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		job[0] = rows[i].job;
		is_int(sd_nccl_env_runtime(rows[i].name, rows[i].value,
					   SD_NCCL_VERSION(2, 28, 9), fake_env,
					   err, sizeof(err)),
		       rows[i].rc, "%s=%s in a job with %s", rows[i].name,
		       rows[i].value, rows[i].job ? rows[i].job : "nothing");
		if (i == 6)
			ok(strstr(err, "NCCL_MIN_CTAS 8 is more than the "
				       "NCCL_MAX_CTAS 4 of this process's "
				       "environment"), "%s", err);
	}
	ok(strstr(err, "NCCL_NET is also set in this process's environment "
		       "(Socket)") && strstr(err, "override the test's IB"),
	   "names both values: %s", err);

	job[0] = NULL;
	is_int(sd_nccl_env_applies("NCCL_MIN_CTAS=4 NCCL_MAX_CTAS=8",
				   SD_NCCL_VERSION(2, 28, 9), fake_env, err,
				   sizeof(err)), SD_OK,
	       "every pair applies in a job that sets neither");
	job[0] = "NCCL_MIN_CTAS=2";
	is_int(sd_nccl_env_applies("NCCL_MAX_CTAS=8 NCCL_MIN_CTAS=4",
				   SD_NCCL_VERSION(2, 28, 9), fake_env, err,
				   sizeof(err)), SD_ERR_INVALID,
	       "not where the job sets NCCL_MIN_CTAS to another value");
	ok(strstr(err, "NCCL_MIN_CTAS is also set"), "%s", err);
}

/*
 * NCCL's avg of floats (FuncPreMulSum): each input times its rounded 1/n,
 * rounded to the type, then summed.  Replay it over n ranks in this
 * machine's arithmetic of type T, forwards and backwards, and count the
 * elements whose bits differ from what the pattern expects of NCCL.
 * volatile keeps each product and sum rounded to T on its own.
 */
#define PREMUL_REPLAY(T, DT, N, COUNT, BAD)                                  \
	do {                                                                 \
		struct sd_op_args a_ = { .op = SD_OP_ALL_REDUCE,             \
					 .dtype = (DT), .redop = SD_AVG,     \
					 .send_count = (COUNT),              \
					 .recv_count = (COUNT),              \
					 .seed = 12345 };                    \
		volatile T c_ = (T)(float)(1.0 / (N));                       \
		if ((DT) == SD_FLOAT64)                                      \
			c_ = (T)(1.0 / (N));                                 \
		for (uint64_t i_ = 0; i_ < (COUNT); i_++) {                  \
			double want_ = sd_pattern_reduced_rule(              \
				&a_, SD_AVG_NCCL, (N), i_);                  \
			for (int dir_ = 0; dir_ < 2; dir_++) {               \
				volatile T acc_ = 0;                         \
				for (int k_ = 0; k_ < (N); k_++) {           \
					int r_ = dir_ ? (N) - 1 - k_ : k_;   \
					volatile T x_ = (T)sd_pattern_send(  \
						&a_, r_, (N), i_);           \
					volatile T p_ = x_ * c_;             \
					acc_ = acc_ + p_;                    \
				}                                            \
				double got_ = (double)acc_;                  \
				(BAD) += !(got_ == want_ &&                  \
					   signbit(got_) == signbit(want_)); \
			}                                                    \
		}                                                            \
	} while (0)

static void test_avg(void)
{
	uint64_t bad64 = 0, bad32 = 0, bad16 = 0;
	for (int n = 1; n <= 512; n++) {
		PREMUL_REPLAY(double, SD_FLOAT64, n, 16, bad64);
		PREMUL_REPLAY(float, SD_FLOAT32, n, 16, bad32);
#ifdef __FLT16_MANT_DIG__
		PREMUL_REPLAY(_Float16, SD_FLOAT16, n, 16, bad16);
#endif
	}
	is_int(bad64, 0, "float64 avg over 1..512 ranks: NCCL's pre-multiplied "
	       "sum in this machine's arithmetic is what the pattern expects "
	       "of NCCL, either order");
	is_int(bad32, 0, "float32: the same");
#ifdef __FLT16_MANT_DIG__
	is_int(bad16, 0, "float16 (_Float16): the same");
#else
	printf("ok %d - # SKIP float16: this compiler has no _Float16\n",
	       ++tap_n);
#endif
	/* n = 41: the premultiplied sum is not the exact mean, and the
	 * pattern no longer expects it to be */
	struct sd_op_args a = { .op = SD_OP_ALL_REDUCE, .dtype = SD_FLOAT32,
				.redop = SD_AVG, .seed = 12345 };
	uint64_t off = 0;
	for (uint64_t i = 0; i < 41; i++)
		off += sd_pattern_reduced_rule(&a, SD_AVG_NCCL, 41, i) !=
		       sd_pattern_reduced(&a, 41, i);
	is_int(off, 41, "float32 over 41 ranks: every element's NCCL mean "
	       "differs from the exact one (issue 13)");
}

int main(void)
{
	test_mapping();
	test_fp8();
	test_capping();
	test_pick();
	test_unique();
	test_env_refused();
	test_env_taken();
	test_env_config();
	test_env_runtime();
	test_avg();
	return done_testing();
}
