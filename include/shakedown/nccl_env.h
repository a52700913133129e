/*
 * nccl_env.h - which NCCL_* variables a test of a plan may set (its env:
 * key), and how: as fields of ncclConfig_t for the test's own
 * communicator, never by changing the process environment.
 *
 * Why a table and not setenv: NCCL reads most of its variables once per
 * process and caches them (NCCL_PARAM in NCCL's src/include/param.h keeps
 * a static per variable), so a later communicator never sees a new value;
 * and getenv/setenv are not thread-safe, while the world communicator's
 * NCCL threads (proxy, RAS, asynchronous init) run for the whole job.  What
 * NCCL does take per communicator is ncclConfig_t (ncclCommInitRankConfig,
 * ncclCommSplit), and each of its fields has an NCCL_* variable that the
 * job's environment may set instead (NCCL's src/init.cc envConfigOverride).
 * Those, and only those, a test may set.
 *
 * Pure C without CUDA or NCCL: the core compiles it too (lib/plan.c), so
 * `shakedown plan check` refuses what NCCL cannot take per test without
 * a backend, and the NCCL plugin (nccl_plugin.c) fills ncclConfig_t from
 * the same rows.  Messages are lower case, name the variable and the fix.
 */
#ifndef SD_NCCL_ENV_H
#define SD_NCCL_ENV_H

#include <limits.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A field left unset: NCCL_CONFIG_UNDEF_INT (nccl.h), so NCCL chooses. */
#define SD_NCCL_UNDEF INT_MIN

/* NCCL's version code (NCCL_VERSION(2, 27, 0) in nccl.h, from 2.9 on). */
#define SD_NCCL_VERSION(x, y, z) ((x) * 10000 + (y) * 100 + (z))

/* The longest network name NCCL_NET may give, with its NUL. */
#define SD_NCCL_NET_NAME_MAX 64

/*
 * The ncclConfig_t fields a test's env sets, as plain values: the plugin
 * copies each one that is not SD_NCCL_UNDEF (or "") into ncclConfig_t.
 */
struct sd_nccl_config {
	int cga_cluster_size;       /* cgaClusterSize (NCCL_CGA_CLUSTER_SIZE) */
	int min_ctas;               /* minCTAs (NCCL_MIN_CTAS) */
	int max_ctas;               /* maxCTAs (NCCL_MAX_CTAS) */
	int split_share;            /* splitShare */
	int collnet_enable;         /* collnetEnable */
	int cta_policy;             /* CTAPolicy */
	int nvls_ctas;              /* nvlsCTAs (NCCL_NVLS_NCHANNELS) */
	int nchannels_per_net_peer; /* nChannelsPerNetPeer */
	int nvlink_centric_sched;   /* nvlinkCentricSched */
	char net_name[SD_NCCL_NET_NAME_MAX]; /* netName (NCCL_NET); "" unset */
};

/* One NCCL_* variable that a plan may name. */
struct sd_nccl_env_rule {
	const char *name;   /* "NCCL_MIN_CTAS" */
	const char *field;  /* the ncclConfig_t field a test's value goes
			       to ("minCTAs"), or NULL: a test cannot set it */
	int offset;         /* of that int in struct sd_nccl_config, or -1
			       for net_name (text, not a number) */
	int lo, hi;         /* the whole numbers NCCL takes in the field */
	int since;          /* the NCCL version code that has the field */
	const char *why;    /* a test cannot set it: why ("is read once
			       per process by NCCL, ...") */
	const char *fix;    /* what to do instead, or NULL: set it in the
			       job's environment */
	const char *also;   /* another way, after that, or NULL */
};

/* The rows, n of them: every variable a test may set, then the refused
 * ones that get their own reason.  A name in no row is refused too. */
const struct sd_nccl_env_rule *sd_nccl_env_rules(size_t *n);

/* The row of `name`, or NULL for a name in none. */
const struct sd_nccl_env_rule *sd_nccl_env_rule(const char *name);

/*
 * Whether a test may set name=value: a variable with an ncclConfig_t
 * field and a value that field takes.  Returns 0, or SD_ERR_INVALID with
 * err saying why not and what to do, e.g. "NCCL_P2P_DISABLE is read once
 * per process by NCCL, so a test cannot change it; set it in the job's
 * environment instead, e.g. NCCL_P2P_DISABLE=1 srun ... shakedown run".
 */
int sd_nccl_env_check(const char *name, const char *value, char *err,
		      size_t errlen);

/* Every field unset. */
void sd_nccl_config_init(struct sd_nccl_config *c);

/*
 * The fields that `spec`, "NAME=VALUE" pairs separated by spaces (a
 * plan's env; a later pair of a name wins), sets in *out, each checked by
 * sd_nccl_env_check, and the pairs together as NCCL takes them (minCTAs
 * at most maxCTAs).  NULL or "" sets nothing.  Returns 0, or
 * SD_ERR_INVALID with err naming the pair (or pairs) and the fix.
 */
int sd_nccl_env_config(const char *spec, struct sd_nccl_config *out,
		       char *err, size_t errlen);

/* How the job's environment is read: getenv, or a stand-in in tests;
 * NULL for a variable that is not set. */
typedef const char *sd_nccl_lookup_fn(const char *name);

/*
 * Whether this process can apply name=value as sd_nccl_env_check allows
 * it: `nccl_version` (the older of the NCCL built against and the one
 * loaded) has the field, and the job's environment (`lookup`) neither sets
 * the same variable to another value, which NCCL would let override the
 * test's (init.cc envConfigOverride), nor an NCCL_MAX_CTAS below the
 * test's NCCL_MIN_CTAS, which NCCL would lower it to.  Returns 0, or
 * SD_ERR_INVALID with err saying which and what to do.
 */
int sd_nccl_env_runtime(const char *name, const char *value,
			int nccl_version, sd_nccl_lookup_fn *lookup, char *err,
			size_t errlen);

/*
 * sd_nccl_env_runtime for every pair of spec (as sd_nccl_env_config reads
 * it).  Returns 0, or SD_ERR_INVALID with err naming the first pair that
 * fails.
 */
int sd_nccl_env_applies(const char *spec, int nccl_version,
			sd_nccl_lookup_fn *lookup, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif
