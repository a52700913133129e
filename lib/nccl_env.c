/*
 * nccl_env.c - the per-test NCCL environment (see nccl_env.h): one row per
 * NCCL_* variable a plan may name, with where NCCL 2.28.9 reads it.
 * Pure C: no CUDA, no NCCL; the core and the NCCL plugin both build it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "shakedown/nccl_env.h"
#include "shakedown/backend.h"

/* A variable a test may set: its ncclConfig_t field, the struct
 * sd_nccl_config member that holds it, its range and the NCCL version
 * that has the field. */
#define TAKEN(name_, field_, member, lo_, hi_, since_)                       \
	{ .name = (name_), .field = (field_),                                \
	  .offset = (int)offsetof(struct sd_nccl_config, member),            \
	  .lo = (lo_), .hi = (hi_), .since = (since_) }
/* One a test may not: why, what to do instead (NULL: set it in the job's
 * environment) and another way (or NULL). */
#define REFUSED(name_, why_, fix_, also_)                                    \
	{ .name = (name_), .why = (why_), .fix = (fix_), .also = (also_) }

/* The reasons of the refused rows. */
#define ONCE "is read once per process by NCCL, so a test cannot change it"
#define ENV_ONLY                                                             \
	"is read by NCCL only from the process environment, which shakedown "  \
	"does not change while NCCL's threads run"

static const struct sd_nccl_env_rule rules[] = {
	/*
	 * Taken per communicator: each is an ncclConfig_t field, which
	 * ncclCommInitRankConfig and ncclCommSplit read for the new
	 * communicator alone (init.cc parseCommConfig, since the version
	 * in `since`, when the field came to nccl.h).  The ranges are what
	 * parseCommConfig accepts, or where envConfigOverride caps (CGA at
	 * NCCL_MAX_CGA_CLUSTER_SIZE, 8; CTAs and channels at MAXCHANNELS,
	 * 64 in device.h since 2.27, 32 before, where larger values are
	 * capped).
	 */
	TAKEN("NCCL_CGA_CLUSTER_SIZE", "cgaClusterSize", cga_cluster_size, 0,
	      8, SD_NCCL_VERSION(2, 17, 0)),
	TAKEN("NCCL_MIN_CTAS", "minCTAs", min_ctas, 1, 64,
	      SD_NCCL_VERSION(2, 17, 0)),
	TAKEN("NCCL_MAX_CTAS", "maxCTAs", max_ctas, 1, 64,
	      SD_NCCL_VERSION(2, 17, 0)),
	/* the network by name ("IB", "Socket", a plugin's): NCCL matches
	 * it without case among the nets it loaded (plugin/net.cc); text,
	 * so offset -1 */
	{ .name = "NCCL_NET", .field = "netName", .offset = -1,
	  .since = SD_NCCL_VERSION(2, 17, 0) },
	TAKEN("NCCL_COMM_SPLIT_SHARE_RESOURCES", "splitShare", split_share, 0,
	      1, SD_NCCL_VERSION(2, 18, 0)),
	TAKEN("NCCL_COLLNET_ENABLE", "collnetEnable", collnet_enable, 0, 1,
	      SD_NCCL_VERSION(2, 27, 0)),
	/* 0 default, 1 efficiency, 2 zero (NCCL_CTA_POLICY_ZERO: 2.28) */
	TAKEN("NCCL_CTA_POLICY", "CTAPolicy", cta_policy, 0, 2,
	      SD_NCCL_VERSION(2, 27, 0)),
	TAKEN("NCCL_NVLS_NCHANNELS", "nvlsCTAs", nvls_ctas, 1, 64,
	      SD_NCCL_VERSION(2, 27, 0)),
	TAKEN("NCCL_NCHANNELS_PER_NET_PEER", "nChannelsPerNetPeer",
	      nchannels_per_net_peer, 1, 64, SD_NCCL_VERSION(2, 28, 0)),
	TAKEN("NCCL_NVLINK_UTIL_CENTRIC_SCHED_ENABLE", "nvlinkCentricSched",
	      nvlink_centric_sched, 0, 1, SD_NCCL_VERSION(2, 28, 0)),

	/* ncclConfig_t fields that shakedown sets itself or never uses */
	REFUSED("NCCL_COMM_BLOCKING",
		"is shakedown's to set: its communicators are blocking, as "
		"nccl-tests makes them, and --timeout is kept by polling the "
		"stream",
		"drop it", NULL),
	REFUSED("NCCL_COMM_SHRINK_SHARE_RESOURCES",
		"changes nothing: shakedown shrinks no communicator", "drop it",
		NULL),

	/*
	 * Read from the environment when each communicator is set up
	 * (graph/tuning.cc ncclTopoTuneModel) and again at collectives
	 * (enqueue.cc, the CTA policy and the no-algorithm error): only
	 * setenv would reach NCCL, and that races with the getenv of the
	 * threads NCCL runs for the world communicator.
	 */
	REFUSED("NCCL_ALGO", ENV_ONLY, NULL, "one run per value"),
	REFUSED("NCCL_PROTO", ENV_ONLY, NULL, "one run per value"),

	/*
	 * Read once per process, cached by NCCL_PARAM (include/param.h: a
	 * static per variable) or behind a once-only set-up.
	 */
	/* graph/paths.cc ncclGetUserP2pLevel: static ncclTopoUserP2pLevel */
	REFUSED("NCCL_P2P_DISABLE", ONCE, NULL, NULL),
	REFUSED("NCCL_P2P_LEVEL", ONCE, NULL, NULL),
	/* transport/shm.cc NCCL_PARAM(ShmDisable) */
	REFUSED("NCCL_SHM_DISABLE", ONCE, NULL, NULL),
	/* transport/nvls.cc NCCL_PARAM(NvlsEnable) */
	REFUSED("NCCL_NVLS_ENABLE", ONCE, NULL, NULL),
	/* transport/net_ib.cc NCCL_PARAM(IbDisable), and the IB devices
	 * that NCCL_IB_HCA picks, found once (ncclIbInitDevices,
	 * ncclNIbDevs) */
	REFUSED("NCCL_IB_DISABLE", ONCE, NULL, NULL),
	REFUSED("NCCL_IB_HCA", ONCE, NULL, NULL),
	/* transport/net_ib.cc NCCL_PARAM(IbTc); ncclConfig_t's trafficClass
	 * is not the same: without NCCL_IB_SL it sets the service level
	 * too (net_ib.cc, meta.sl) */
	REFUSED("NCCL_IB_TC", ONCE, NULL, NULL),
	/* init.cc NCCL_PARAM(BuffSize), (LlBuffSize), (Ll128BuffSize) */
	REFUSED("NCCL_BUFFSIZE", ONCE, NULL, NULL),
	REFUSED("NCCL_LL_BUFFSIZE", ONCE, NULL, NULL),
	REFUSED("NCCL_LL128_BUFFSIZE", ONCE, NULL, NULL),
	/* graph/connect.cc NCCL_PARAM(MinNchannels), (MaxNchannels); the
	 * CTA bounds do per communicator what these do per process */
	REFUSED("NCCL_MIN_NCHANNELS", ONCE, NULL, "or NCCL_MIN_CTAS in the test"),
	REFUSED("NCCL_MAX_NCHANNELS", ONCE, NULL, "or NCCL_MAX_CTAS in the test"),
	/* misc/socket.cc ncclFindInterfaces, called once by bootstrapNetInit
	 * (bootstrap.cc, bootstrapNetInitDone) and ncclNetSocketInit
	 * (net_socket.cc, ncclNetIfs) */
	REFUSED("NCCL_SOCKET_IFNAME", ONCE, NULL, "or --iface NAME"),
	/* debug.cc ncclDebugInit, once (ncclDebugLevel) */
	REFUSED("NCCL_DEBUG", ONCE, NULL, NULL),
	REFUSED("NCCL_DEBUG_SUBSYS", ONCE, NULL, NULL),
	REFUSED("NCCL_DEBUG_FILE", ONCE, NULL, NULL),
};

#define NRULES (sizeof(rules) / sizeof(rules[0]))

const struct sd_nccl_env_rule *sd_nccl_env_rules(size_t *n)
{
	*n = NRULES;
	return rules;
}

const struct sd_nccl_env_rule *sd_nccl_env_rule(const char *name)
{
	for (size_t i = 0; name && i < NRULES; i++)
		if (strcmp(rules[i].name, name) == 0)
			return &rules[i];
	return NULL;
}

/* "NCCL_CGA_CLUSTER_SIZE, NCCL_MIN_CTAS, ..." : what a test may set. */
static void taken_names(char *out, size_t len)
{
	size_t used = 0;
	out[0] = '\0';
	for (size_t i = 0; i < NRULES && used < len; i++) {
		if (!rules[i].field)
			continue;
		int n = snprintf(out + used, len - used, "%s%s",
				 used ? ", " : "", rules[i].name);
		if (n < 0)
			break;
		used += (size_t)n;
	}
}

/* The whole decimal number in s, from lo to hi: 0 and *v, else -1. */
static int whole(const char *s, int lo, int hi, int *v)
{
	char *end;
	errno = 0;
	long x = strtol(s, &end, 10);
	if (!*s || *end || errno || x < lo || x > hi)
		return -1;
	*v = (int)x;
	return 0;
}

int sd_nccl_env_check(const char *name, const char *value, char *err,
		      size_t errlen)
{
	const struct sd_nccl_env_rule *r = sd_nccl_env_rule(name);
	const char *v = value ? value : "";
	if (!r) {
		char taken[512];
		taken_names(taken, sizeof(taken));
		snprintf(err, errlen, "%s is not one NCCL takes per "
			 "communicator (a test can set only %s, which become "
			 "ncclConfig_t fields); set it in the job's environment "
			 "instead, e.g. %s=%s srun ... shakedown run", name,
			 taken, name, v);
		return SD_ERR_INVALID;
	}
	if (!r->field) {
		if (r->fix)
			snprintf(err, errlen, "%s %s; %s", r->name, r->why,
				 r->fix);
		else
			snprintf(err, errlen, "%s %s; set it in the job's "
				 "environment instead, e.g. %s=%s srun ... "
				 "shakedown run%s%s", r->name, r->why, r->name,
				 v, r->also ? ", " : "", r->also ? r->also : "");
		return SD_ERR_INVALID;
	}
	int x;
	if (r->offset < 0) {
		if (!*v || strlen(v) >= SD_NCCL_NET_NAME_MAX) {
			snprintf(err, errlen, "%s '%s' must be the name of a "
				 "network NCCL has (IB, Socket or a plugin's), "
				 "at most %d characters", r->name, v,
				 SD_NCCL_NET_NAME_MAX - 1);
			return SD_ERR_INVALID;
		}
	} else if (whole(v, r->lo, r->hi, &x)) {
		snprintf(err, errlen, "%s '%s' must be a whole number from %d "
			 "to %d (it becomes ncclConfig_t's %s)", r->name, v,
			 r->lo, r->hi, r->field);
		return SD_ERR_INVALID;
	}
	return SD_OK;
}

void sd_nccl_config_init(struct sd_nccl_config *c)
{
	memset(c, 0, sizeof(*c));
	for (size_t i = 0; i < NRULES; i++)
		if (rules[i].field && rules[i].offset >= 0)
			*(int *)((char *)c + rules[i].offset) = SD_NCCL_UNDEF;
	c->net_name[0] = '\0';
}

/* The next "NAME=VALUE" pair of *p, split into name and value in pair
 * (len bytes): 1 and *p past it, 0 at the end, or -1 with err. */
static int next_pair(const char **p, char *pair, size_t len, char **value,
		     char *err, size_t errlen)
{
	while (**p == ' ' || **p == '\t')
		(*p)++;
	size_t n = strcspn(*p, " \t");
	if (!n)
		return 0;
	if (n >= len) {
		snprintf(err, errlen, "'%.40s...' in the NCCL environment is too "
			 "long; keep a pair under %zu characters", *p, len);
		return -1;
	}
	memcpy(pair, *p, n);
	pair[n] = '\0';
	*p += n;
	char *eq = strchr(pair, '=');
	if (!eq || eq == pair) {
		snprintf(err, errlen, "'%s' in the NCCL environment is not "
			 "NAME=VALUE; write e.g. NCCL_MIN_CTAS=4", pair);
		return -1;
	}
	*eq = '\0';
	*value = eq + 1;
	return 1;
}

int sd_nccl_env_config(const char *spec, struct sd_nccl_config *out,
		       char *err, size_t errlen)
{
	char pair[256], *value;
	int more;
	sd_nccl_config_init(out);
	for (const char *p = spec ? spec : "";
	     (more = next_pair(&p, pair, sizeof(pair), &value, err, errlen));) {
		if (more < 0)
			return SD_ERR_INVALID;
		int rc = sd_nccl_env_check(pair, value, err, errlen);
		if (rc)
			return rc;
		const struct sd_nccl_env_rule *r = sd_nccl_env_rule(pair);
		if (r->offset < 0)
			snprintf(out->net_name, sizeof(out->net_name), "%s",
				 value);
		else
			whole(value, r->lo, r->hi,
			      (int *)((char *)out + r->offset));
	}
	if (out->min_ctas != SD_NCCL_UNDEF && out->max_ctas != SD_NCCL_UNDEF &&
	    out->min_ctas > out->max_ctas) {
		snprintf(err, errlen, "NCCL_MIN_CTAS %d is more than "
			 "NCCL_MAX_CTAS %d, which NCCL refuses; make the "
			 "minimum at most the maximum", out->min_ctas,
			 out->max_ctas);
		return SD_ERR_INVALID;
	}
	/* NCCL 2.17 to 2.28 (init.cc parseCommConfig) refuses a minCTAs
	 * without a maxCTAs: the unset maxCTAs is INT_MIN, less than any
	 * minimum.  Give it NCCL's own default, MAXCHANNELS, which
	 * envConfigOverride caps at the library's (32 before 2.27). */
	if (out->min_ctas != SD_NCCL_UNDEF && out->max_ctas == SD_NCCL_UNDEF)
		out->max_ctas = 64;
	return SD_OK;
}

/* Whether the environment's text v is what NCCL reads as the test's
 * value: a number with strtol's base 0 (NCCL_PARAM), a net name without
 * case (plugin/net.cc). */
static int same_value(const struct sd_nccl_env_rule *r, const char *v,
		      const char *value)
{
	if (r->offset < 0)
		return strcasecmp(v, value) == 0;
	char *end;
	errno = 0;
	long j = strtol(v, &end, 0);
	return *v && !*end && !errno && j == strtol(value, NULL, 10);
}

int sd_nccl_env_runtime(const char *name, const char *value,
			int nccl_version, sd_nccl_lookup_fn *lookup, char *err,
			size_t errlen)
{
	int rc = sd_nccl_env_check(name, value, err, errlen);
	if (rc)
		return rc;
	const struct sd_nccl_env_rule *r = sd_nccl_env_rule(name);
	if (nccl_version < r->since) {
		snprintf(err, errlen, "%s becomes ncclConfig_t's %s, which NCCL "
			 "has since %d.%d.%d, and this NCCL is %d.%d.%d; drop "
			 "it or use a newer NCCL", r->name, r->field,
			 r->since / 10000, r->since / 100 % 100, r->since % 100,
			 nccl_version / 10000, nccl_version / 100 % 100,
			 nccl_version % 100);
		return SD_ERR_INVALID;
	}
	const char *job = lookup(name);
	if (job && !same_value(r, job, value)) {
		snprintf(err, errlen, "%s is also set in this process's "
			 "environment (%s), by the job or NCCL's config file "
			 "(NCCL_CONF_FILE, ~/.nccl.conf, /etc/nccl.conf), and "
			 "NCCL lets that override the test's %s; unset it there "
			 "or drop it from the test", r->name, job, value);
		return SD_ERR_INVALID;
	}
	/* envConfigOverride sets both bounds to maxCTAs when the minimum
	 * is above it; the test's own maximum is checked as its pair */
	const char *max = strcmp(name, "NCCL_MIN_CTAS") == 0
				  ? lookup("NCCL_MAX_CTAS") : NULL;
	char *end;
	long m = max ? strtol(max, &end, 0) : 0;
	if (max && *max && !*end && m > 0 && m < strtol(value, NULL, 10)) {
		snprintf(err, errlen, "NCCL_MIN_CTAS %s is more than the "
			 "NCCL_MAX_CTAS %s of this process's environment, and "
			 "NCCL would lower the minimum to that; unset "
			 "NCCL_MAX_CTAS there or take a smaller minimum", value,
			 max);
		return SD_ERR_INVALID;
	}
	return SD_OK;
}

int sd_nccl_env_applies(const char *spec, int nccl_version,
			sd_nccl_lookup_fn *lookup, char *err, size_t errlen)
{
	char pair[256], *value;
	int more;
	for (const char *p = spec ? spec : "";
	     (more = next_pair(&p, pair, sizeof(pair), &value, err, errlen));) {
		if (more < 0)
			return SD_ERR_INVALID;
		int rc = sd_nccl_env_runtime(pair, value, nccl_version, lookup,
					     err, errlen);
		if (rc)
			return rc;
	}
	return SD_OK;
}
