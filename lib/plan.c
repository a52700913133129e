/*
 * plan.c - read, override, expand and render test plans (see plan.h).
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

#include "hostlist.h"
#include "plan.h"
#include "plugin.h"
#include "sink.h"
#include "shakedown/coll.h"
#include "shakedown/pattern.h"
#include "util.h"
/* env: is NCCL's: which of its variables a test may set is the table of
 * lib/nccl_env.c, which the NCCL plugin builds in too, so that a plan
 * check needs no backend */
#include "shakedown/nccl_env.h"
#include "transport.h"

const char sd_default_plan[] =
	"# shakedown built-in plan: every collective, float32, sum\n"
	"name: default\n"
	"defaults:\n"
	"  dtype: float32\n"
	"  redop: sum\n"
	"  root: 0\n"
	"  min_bytes: 1K\n"
	"  max_bytes: 16M\n"
	"  step_factor: 4\n"
	"  iters: 10\n"
	"  warmup: 3\n"
	"tests:\n"
	"  - op: all_reduce\n"
	"  - op: all_gather\n"
	"  - op: reduce_scatter\n"
	"  - op: all_to_all\n"
	"  - op: broadcast\n"
	"  - op: reduce\n"
	"  - op: gather\n"
	"  - op: scatter\n"
	"  - op: sendrecv\n"
	"  - op: pt2pt\n";

/* A test before expansion: each list field holds comma-separated names. */
struct raw_test {
	char ops[256];
	char dtypes[256];
	char redops[128];
	char roots[128];
	char algo[32];
	char env[512];
	char scope[32];
	char transport[16];
	char iface[32];
	char process_env[512];
	struct sd_test_settings cfg;
	struct sd_expectation expect;
	int retries;
	int has_seed;
	unsigned long long seed;
	int line;
};

/* The defaults of every field: the one place they are defined. */
static const struct raw_test field_defaults = {
	.dtypes = "float32", .redops = "sum", .roots = "0", .algo = "auto",
	.scope = "world",
	.cfg = { .min_bytes = 1024, .max_bytes = 16u << 20, .step_factor = 4,
		 .iters = 10, .warmup = 3, .check_passes = 1, .per_iter = 0,
		 .in_place = 1, .combine = SD_COMBINE_AVG,
		 .timeout_ms = SD_PLAN_TIMEOUT_MS },
};

static const struct sd_name_row combine_names[] = {
	{ "avg", SD_COMBINE_AVG }, { "min", SD_COMBINE_MIN },
	{ "max", SD_COMBINE_MAX }, { "rank0", SD_COMBINE_RANK0 },
	{ NULL, 0 }
};

static const struct sd_name_row bool_names[] = {
	{ "true", 1 }, { "false", 0 }, { "yes", 1 }, { "no", 0 },
	{ "on", 1 }, { "off", 0 }, { "1", 1 }, { "0", 0 }, { NULL, 0 }
};

struct parse {
	const char *file;
	char switches[SD_PLAN_SWITCHES_LEN];
	yaml_document_t doc;
	char *err;
	size_t errlen;
};

static int fail(struct parse *p, yaml_node_t *n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(struct parse *p, yaml_node_t *n, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(p->err, p->errlen, "%s:%lu: %s", p->file,
		 n ? (unsigned long)n->start_mark.line + 1 : 0ul, msg);
	return SD_ERR_INVALID;
}

static const char *scalar(yaml_node_t *n)
{
	return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value
						 : NULL;
}

/* A scalar or a flow/block sequence of scalars, joined with commas. */
static int list_value(struct parse *p, yaml_node_t *n, char *out, size_t len,
		      const char *key)
{
	if (n->type == YAML_SCALAR_NODE) {
		if (strlen(scalar(n)) >= len)
			return fail(p, n, "'%s' is too long (at most %zu "
				    "characters)", key, len - 1);
		sd_strlcpy(out, scalar(n), len);
		return 0;
	}
	if (n->type != YAML_SEQUENCE_NODE)
		return fail(p, n, "'%s' must be a name or a list of names", key);
	out[0] = '\0';
	for (yaml_node_item_t *it = n->data.sequence.items.start;
	     it < n->data.sequence.items.top; it++) {
		const char *s = scalar(yaml_document_get_node(&p->doc, *it));
		if (!s)
			return fail(p, n, "'%s' must list plain names", key);
		size_t used = strlen(out);
		if (snprintf(out + used, len - used, "%s%s", used ? "," : "",
			     s) >= (int)(len - used))
			return fail(p, n, "the '%s' list is too long (at most "
				    "%zu characters); split it over two tests",
				    key, len - 1);
	}
	return 0;
}

/* Whether name is a variable name: letters, digits and '_', not first a
 * digit; for NCCL's (env), NCCL_ and capitals, digits and '_'. */
static int var_name(const char *name, int nccl)
{
	int good = name && *name && !(*name >= '0' && *name <= '9') &&
		   (!nccl || (strncmp(name, "NCCL_", 5) == 0 && name[5]));
	for (const char *c = name; good && *c; c++)
		good = (*c >= 'A' && *c <= 'Z') ||
		       (!nccl && *c >= 'a' && *c <= 'z') ||
		       (*c >= '0' && *c <= '9') || *c == '_';
	return good;
}

/*
 * env and process_env: a mapping of names to plain values, kept as
 * "N=V N=V" and appended to what the defaults set (a later pair wins).
 * env (nccl) takes only what NCCL takes per communicator, as an
 * ncclConfig_t field: the rest it reads once per process, or from an
 * environment nothing may change while NCCL runs (plugins/nccl/
 * nccl_env.c).  process_env takes any variable: the test runs in worker
 * processes started with them (lib/worker.h).
 */
static int pairs_value(struct parse *p, yaml_node_t *v, char *out, size_t len,
		       int nccl)
{
	const char *key = nccl ? "env" : "process_env";
	if (v->type != YAML_MAPPING_NODE)
		return nccl ? fail(p, v, "'env' must be a mapping of NCCL_* "
				   "names to values, e.g. env: "
				   "{NCCL_MIN_CTAS: 4}")
			    : fail(p, v, "'process_env' must be a mapping of "
				   "variable names to values, e.g. "
				   "process_env: {NCCL_P2P_DISABLE: 1}");
	for (yaml_node_pair_t *pr = v->data.mapping.pairs.start;
	     pr < v->data.mapping.pairs.top; pr++) {
		yaml_node_t *kn = yaml_document_get_node(&p->doc, pr->key);
		yaml_node_t *vn = yaml_document_get_node(&p->doc, pr->value);
		const char *name = scalar(kn), *val = scalar(vn);
		if (!var_name(name, nccl))
			return nccl ? fail(p, kn, "env: '%s' is not an NCCL_* "
					   "name with a plain value (no spaces, "
					   "';' or '=')", name ? name : "?")
				    : fail(p, kn, "process_env: '%s' is not a "
					   "variable name (letters, digits and "
					   "'_', not first a digit)",
					   name ? name : "?");
		if (!val || !*val || val[strcspn(val, " \t;=")])
			return fail(p, vn, "%s: %s's value '%s' must be plain "
				    "(no spaces, ';' or '=')", key, name,
				    val ? val : "?");
		size_t used = strlen(out);
		if (snprintf(out + used, len - used, "%s%s=%s", used ? " " : "",
			     name, val) >= (int)(len - used))
			return fail(p, kn, "%s: too long (at most %zu "
				    "characters)", key, len - 1);
		char why[768];
		const struct sd_nccl_env_rule *r = sd_nccl_env_rule(name);
		if (nccl && sd_nccl_env_check(name, val, why, sizeof(why)))
			return fail(p, r && r->field ? vn : kn, "env: %s", why);
	}
	return 0;
}

/* A key that came before in the same mapping: its node, or NULL. */
static yaml_node_t *earlier_key(struct parse *p, yaml_node_t *map,
				yaml_node_pair_t *upto, const char *key)
{
	for (yaml_node_pair_t *q = map->data.mapping.pairs.start; q < upto;
	     q++) {
		yaml_node_t *k = yaml_document_get_node(&p->doc, q->key);
		if (scalar(k) && strcmp(scalar(k), key) == 0)
			return k;
	}
	return NULL;
}

/* A time per iteration: a number with an optional us, ms or s suffix
 * (plain: microseconds), into microseconds; 0 or -1. */
static int parse_time_us(const char *s, double *us)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	double scale = strcmp(end, "") == 0 || strcmp(end, "us") == 0 ? 1
		       : strcmp(end, "ms") == 0			   ? 1e3
		       : strcmp(end, "s") == 0			   ? 1e6
								   : 0;
	if (errno || end == s || scale == 0 || !(v > 0) || v * scale > 1e12)
		return -1;
	*us = v * scale;
	return 0;
}

static const struct sd_name_row expect_keys[] = {
	{ "busbw", 0 }, { "time", 1 }, { "at", 2 }, { "peers", 3 },
	{ "mad", 4 }, { "baseline", 5 }, { NULL, 0 }
};

/* expect: a mapping of expectations, merged key by key over what the
 * defaults expect. */
static int expect_value(struct parse *p, yaml_node_t *v, struct sd_expectation *x)
{
	if (v->type != YAML_MAPPING_NODE)
		return fail(p, v, "'expect' must be a mapping, e.g. expect: "
			    "{busbw: 20, at: 64M, peers: 0.8}");
	for (yaml_node_pair_t *pr = v->data.mapping.pairs.start;
	     pr < v->data.mapping.pairs.top; pr++) {
		yaml_node_t *kn = yaml_document_get_node(&p->doc, pr->key);
		yaml_node_t *vn = yaml_document_get_node(&p->doc, pr->value);
		const char *key = scalar(kn), *s = scalar(vn), *hint = NULL;
		int which;
		yaml_node_t *first = key ? earlier_key(p, v, pr, key) : NULL;
		if (first)
			return fail(p, kn, "expect: '%s' is given twice (first "
				    "on line %lu); keep one", key,
				    (unsigned long)first->start_mark.line + 1);
		if (!key || sd_name_lookup(expect_keys, key, &which, &hint)) {
			if (hint)
				return fail(p, kn, "unknown expectation '%s'; "
					    "did you mean '%s'?", key, hint);
			return fail(p, kn, "unknown expectation '%s'; expect "
				    "knows busbw, time, at, peers, mad and "
				    "baseline", key ? key : "?");
		}
		if (!s)
			return fail(p, vn, "expect: '%s' must be a single value",
				    key);
		char *end;
		errno = 0;
		double d = strtod(s, &end);
		int num = !errno && end != s && !*end;
		switch (which) {
		case 0:
			if (!num || !(d > 0) || d > 1e6)
				return fail(p, vn, "expect: busbw '%s' must be "
					    "a bus bandwidth in GB/s above 0, "
					    "e.g. busbw: 20", s);
			x->busbw_gbs = d;
			break;
		case 1:
			if (parse_time_us(s, &x->time_us))
				return fail(p, vn, "expect: time '%s' must be "
					    "a time per iteration above 0 with "
					    "us, ms or s, e.g. time: 250us", s);
			break;
		case 2:
			if (sd_parse_size(s, &x->at_bytes) || !x->at_bytes)
				return fail(p, vn, "expect: at '%s' is not a "
					    "size; use a number with an "
					    "optional K, M or G suffix", s);
			break;
		case 3:
			if (!num || !(d > 0) || d > 1)
				return fail(p, vn, "expect: peers '%s' must be "
					    "a fraction of the median above 0 "
					    "and at most 1, e.g. peers: 0.8", s);
			x->peers = d;
			break;
		case 4:
			if (!num || !(d > 0) || d > 1000)
				return fail(p, vn, "expect: mad '%s' must be a "
					    "number of median absolute "
					    "deviations above 0, e.g. mad: 5", s);
			x->mad = d;
			break;
		default:
			if (!num || !(d > 0) || d > 10)
				return fail(p, vn, "expect: baseline '%s' must "
					    "be a fraction of the baseline "
					    "above 0, e.g. baseline: 0.9", s);
			x->baseline = d;
			break;
		}
	}
	return 0;
}

int sd_scope_one_rank(const char *scope, char *base, size_t len)
{
	size_t n = strlen(scope);
	int one = n > 4 && strcmp(scope + n - 4, ":one") == 0 &&
		  strncmp(scope, "node-pairs", 10) == 0;
	snprintf(base, len, "%.*s", (int)(one ? n - 4 : n), scope);
	return one;
}

int sd_expect_any(const struct sd_expectation *e)
{
	return e->busbw_gbs > 0 || e->time_us > 0 || e->peers > 0 ||
	       e->mad > 0 || e->baseline > 0;
}

/* The keys of a test (the values only tell them apart, for hints). */
static const struct sd_name_row test_keys[] = {
	{ "op", 0 }, { "ops", 1 }, { "dtype", 2 }, { "redop", 3 },
	{ "root", 4 }, { "algo", 5 }, { "min_bytes", 6 }, { "max_bytes", 7 },
	{ "step_factor", 8 }, { "step_bytes", 9 }, { "iters", 10 },
	{ "warmup", 11 }, { "check", 12 }, { "per_iter", 13 },
	{ "in_place", 14 }, { "combine", 15 }, { "timeout", 16 },
	{ "scope", 17 }, { "env", 18 }, { "expect", 19 }, { "retries", 20 },
	{ "transport", 21 }, { "iface", 22 }, { "process_env", 23 },
	{ "seed", 24 }, { NULL, 0 }
};

static int set_field(struct parse *p, struct raw_test *t, const char *key,
		     yaml_node_t *kn, yaml_node_t *v)
{
	if (strcmp(key, "env") == 0)
		return pairs_value(p, v, t->env, sizeof(t->env), 1);
	if (strcmp(key, "process_env") == 0)
		return pairs_value(p, v, t->process_env,
				   sizeof(t->process_env), 0);
	if (strcmp(key, "expect") == 0)
		return expect_value(p, v, &t->expect);
	const char *s = scalar(v), *hint = NULL;
	int known;
	if (sd_name_lookup(test_keys, key, &known, &hint)) {
		if (hint)
			return fail(p, kn, "unknown key '%s'; did you mean "
				    "'%s'?", key, hint);
		return fail(p, kn, "unknown key '%s'; plans know op, dtype, "
			    "redop, root, algo, min_bytes, max_bytes, "
			    "step_factor, step_bytes, iters, warmup, check, "
			    "per_iter, in_place, combine, timeout, scope, env, "
			    "expect, retries, transport, iface, process_env, "
			    "seed",
			    key);
	}
	if (strcmp(key, "op") == 0 || strcmp(key, "ops") == 0)
		return list_value(p, v, t->ops, sizeof(t->ops), key);
	if (strcmp(key, "dtype") == 0)
		return list_value(p, v, t->dtypes, sizeof(t->dtypes), key);
	if (strcmp(key, "redop") == 0)
		return list_value(p, v, t->redops, sizeof(t->redops), key);
	if (strcmp(key, "root") == 0)
		return list_value(p, v, t->roots, sizeof(t->roots), key);
	if (!s)
		return fail(p, v, "'%s' must be a single value", key);
	if (strcmp(key, "algo") == 0) {
		sd_strlcpy(t->algo, s, sizeof(t->algo));
		return 0;
	}
	if (strcmp(key, "scope") == 0) {
		sd_strlcpy(t->scope, s, sizeof(t->scope));
		return 0;
	}
	if (strcmp(key, "transport") == 0) {
		const char *thint = NULL;
		if (sd_transport_lookup(s, &thint))
			return fail(p, v, "transport '%s' is not one plans "
				    "know%s%s%s; use %s", s,
				    thint ? "; did you mean '" : "",
				    thint ? thint : "", thint ? "'?" : "",
				    sd_transport_list());
		sd_strlcpy(t->transport, s, sizeof(t->transport));
		return 0;
	}
	if (strcmp(key, "iface") == 0) {
		if (strlen(s) >= sizeof(t->iface) || s[strcspn(s, " \t;=/")])
			return fail(p, v, "iface '%s' must be a network "
				    "interface name such as eth1 (at most "
				    "%zu characters, no spaces)", s,
				    sizeof(t->iface) - 1);
		sd_strlcpy(t->iface, s, sizeof(t->iface));
		return 0;
	}
	int *flag = strcmp(key, "per_iter") == 0   ? &t->cfg.per_iter
		    : strcmp(key, "in_place") == 0 ? &t->cfg.in_place
						   : NULL;
	if (flag) {
		if (sd_name_lookup(bool_names, s, flag, NULL))
			return fail(p, v, "%s '%s' must be true or false", key,
				    s);
		return 0;
	}
	if (strcmp(key, "combine") == 0) {
		int c;
		if (sd_name_lookup(combine_names, s, &c, NULL))
			return fail(p, v, "combine '%s' must be avg, min, max "
				    "or rank0", s);
		t->cfg.combine = (enum sd_combine)c;
		return 0;
	}
	if (strcmp(key, "timeout") == 0) {
		if (sd_parse_duration_ms(s, &t->cfg.timeout_ms))
			return fail(p, v, "timeout '%s' must be a positive "
				    "number of seconds", s);
		return 0;
	}
	uint64_t *size = strcmp(key, "min_bytes") == 0   ? &t->cfg.min_bytes
			 : strcmp(key, "max_bytes") == 0 ? &t->cfg.max_bytes
			 : strcmp(key, "step_bytes") == 0 ? &t->cfg.step_bytes
							  : NULL;
	if (size) {
		if (sd_parse_size(s, size) || *size == 0)
			return fail(p, v, "%s '%s' must be a size above 0: a "
				    "number with an optional K, M or G suffix",
				    key, s);
		if (*size > SD_PLAN_MAX_BYTES)
			return fail(p, v, "%s '%s' is more than 1T, larger "
				    "than any buffer a rank can hold; use a "
				    "smaller size", key, s);
		if (size == &t->cfg.step_bytes)
			t->cfg.step_factor = 1; /* a step replaces the factor */
		return 0;
	}
	if (strcmp(key, "step_factor") == 0) {
		char *end;
		errno = 0;
		t->cfg.step_factor = strtod(s, &end);
		if (errno || *end || !(t->cfg.step_factor > 1) ||
		    t->cfg.step_factor > 1e6 || s[strspn(s, "0123456789.")])
			return fail(p, v, "step_factor '%s' must be a number "
				    "above 1 (for even steps use step_bytes)",
				    s);
		t->cfg.step_bytes = 0;
		return 0;
	}
	if (strcmp(key, "seed") == 0) {
		char *end;
		errno = 0;
		t->seed = strtoull(s, &end, 0);
		if (errno || end == s || *end || s[0] == '-')
			return fail(p, v, "seed '%s' must be a whole number "
				    "from 0 to 2^64-1 (decimal or 0x hex)", s);
		t->has_seed = 1;
		return 0;
	}
	if (strcmp(key, "retries") == 0) {
		long n;
		if (sd_parse_int(s, 0, SD_MAX_RETRIES, &n))
			return fail(p, v, "retries '%s' must be a whole number "
				    "from 0 to %d", s, SD_MAX_RETRIES);
		t->retries = (int)n;
		return 0;
	}
	long *num = strcmp(key, "iters") == 0    ? &t->cfg.iters
		    : strcmp(key, "warmup") == 0 ? &t->cfg.warmup
		    : strcmp(key, "check") == 0  ? &t->cfg.check_passes
						 : NULL;
	if (num) {
		long most = num == &t->cfg.check_passes ? 1000 : 1000000;
		long least = num == &t->cfg.iters ? 1 : 0;
		if (sd_parse_int(s, least, most, num))
			return fail(p, v, "%s '%s' must be a whole number "
				    "from %ld to %ld", key, s, least, most);
		return 0;
	}
	return fail(p, v, "'%s' is not a setting plans have", key);
}

static int read_mapping(struct parse *p, yaml_node_t *map, struct raw_test *t)
{
	if (map->type != YAML_MAPPING_NODE)
		return fail(p, map, "expected a mapping of key: value");
	for (yaml_node_pair_t *pr = map->data.mapping.pairs.start;
	     pr < map->data.mapping.pairs.top; pr++) {
		yaml_node_t *k = yaml_document_get_node(&p->doc, pr->key);
		yaml_node_t *v = yaml_document_get_node(&p->doc, pr->value);
		const char *key = scalar(k);
		if (!key)
			return fail(p, k, "keys must be plain names");
		yaml_node_t *first = earlier_key(p, map, pr, key);
		if (first)
			return fail(p, k, "'%s' is given twice (first on line "
				    "%lu); keep one", key,
				    (unsigned long)first->start_mark.line + 1);
		int rc = set_field(p, t, key, k, v);
		if (rc)
			return rc;
	}
	return 0;
}

/* switches: {NAME: HOSTLIST, ...}: the leaf switch (or rack) of each
 * node, for node-pairs:adaptive (lib/switches.h reads it at run time);
 * kept as "NAME=HOSTLIST ..." in p->switches. */
static int switches_value(struct parse *p, yaml_node_t *v)
{
	if (v->type != YAML_MAPPING_NODE)
		return fail(p, v, "'switches' must be a mapping of switch "
			    "name: hostlist, e.g. {s0: \"node[01-16]\", s1: "
			    "\"node[17-32]\"}");
	size_t used = 0;
	p->switches[0] = '\0';
	for (yaml_node_pair_t *pr = v->data.mapping.pairs.start;
	     pr < v->data.mapping.pairs.top; pr++) {
		yaml_node_t *k = yaml_document_get_node(&p->doc, pr->key);
		yaml_node_t *x = yaml_document_get_node(&p->doc, pr->value);
		const char *name = scalar(k), *list = scalar(x);
		if (!name || !list || !name[0] || !list[0] ||
		    name[strcspn(name, " =\t")] || list[strcspn(list, " =\t")])
			return fail(p, k, "a switch is 'NAME: HOSTLIST' with "
				    "no spaces or '=' in either, e.g. s0: "
				    "\"node[01-16]\"");
		char why[160], **names = NULL;
		int nn = 0;
		if (sd_hostlist_parse(list, &names, &nn, why, sizeof(why))) {
			sd_hostlist_free(names, nn);
			return fail(p, x, "switch %s: %s", name, why);
		}
		sd_hostlist_free(names, nn);
		int n = snprintf(p->switches + used,
				 sizeof(p->switches) - used, "%s%s=%s",
				 used ? " " : "", name, list);
		if (n < 0 || (size_t)n >= sizeof(p->switches) - used)
			return fail(p, v, "'switches' is longer than %zu "
				    "characters; give compressed hostlists "
				    "(node[001-512]) or use Slurm's "
				    "topology.conf", sizeof(p->switches) - 1);
		used += (size_t)n;
	}
	return 0;
}

/* Parse YAML text into defaults and raw tests. */
static int parse_plan(struct parse *p, const char *text, char *name,
		      size_t namelen, struct raw_test *defaults,
		      struct raw_test **tests, size_t *ntests)
{
	yaml_parser_t parser;
	int rc = SD_OK;
	yaml_parser_initialize(&parser);
	yaml_parser_set_input_string(&parser, (const unsigned char *)text,
				     strlen(text));
	if (!yaml_parser_load(&parser, &p->doc)) {
		snprintf(p->err, p->errlen, "%s:%lu: %s; fix the YAML syntax",
			 p->file, (unsigned long)parser.problem_mark.line + 1,
			 parser.problem ? parser.problem : "cannot parse");
		yaml_parser_delete(&parser);
		return SD_ERR_INVALID;
	}
	/* one document: a second one ("---") would be ignored */
	yaml_document_t more;
	if (yaml_parser_load(&parser, &more)) {
		yaml_node_t *r2 = yaml_document_get_root_node(&more);
		if (r2) {
			snprintf(p->err, p->errlen, "%s:%lu: a second YAML "
				 "document; a plan is one document (remove the "
				 "'---' and what follows, or merge it)", p->file,
				 (unsigned long)r2->start_mark.line + 1);
			yaml_document_delete(&more);
			yaml_parser_delete(&parser);
			rc = SD_ERR_INVALID;
			goto out;
		}
		yaml_document_delete(&more);
	}
	yaml_parser_delete(&parser);
	yaml_node_t *root = yaml_document_get_root_node(&p->doc);
	if (!root) {
		snprintf(p->err, p->errlen, "%s:1: the plan is empty; a plan is "
			 "a mapping with 'tests:' (see shakedown-plan(5))",
			 p->file);
		rc = SD_ERR_INVALID;
		goto out;
	}
	if (root->type != YAML_MAPPING_NODE) {
		rc = fail(p, root, "a plan is a mapping with 'tests:' (and "
			  "optionally 'name:' and 'defaults:')");
		goto out;
	}
	yaml_node_t *tnode = NULL;
	for (yaml_node_pair_t *pr = root->data.mapping.pairs.start;
	     pr < root->data.mapping.pairs.top; pr++) {
		yaml_node_t *k = yaml_document_get_node(&p->doc, pr->key);
		yaml_node_t *v = yaml_document_get_node(&p->doc, pr->value);
		const char *key = scalar(k);
		yaml_node_t *first = key ? earlier_key(p, root, pr, key) : NULL;
		if (first) {
			rc = fail(p, k, "'%s:' is given twice (first on line "
				  "%lu); keep one", key,
				  (unsigned long)first->start_mark.line + 1);
			goto out;
		}
		if (key && strcmp(key, "name") == 0 && scalar(v))
			sd_strlcpy(name, scalar(v), namelen);
		else if (key && strcmp(key, "name") == 0)
			rc = fail(p, v, "'name' must be a single value");
		else if (key && strcmp(key, "defaults") == 0)
			rc = read_mapping(p, v, defaults);
		else if (key && strcmp(key, "tests") == 0)
			tnode = v;
		else if (key && strcmp(key, "switches") == 0)
			rc = switches_value(p, v);
		else {
			static const struct sd_name_row top[] = {
				{ "name", 0 }, { "defaults", 1 }, { "tests", 2 },
				{ "switches", 3 }, { NULL, 0 }
			};
			const char *hint = NULL;
			int which;
			if (key)
				sd_name_lookup(top, key, &which, &hint);
			if (hint)
				rc = fail(p, k, "unknown top-level key '%s'; did "
					  "you mean '%s'?", key, hint);
			else
				rc = fail(p, k, "unknown top-level key '%s'; "
					  "plans have name, defaults, tests and "
					  "switches",
					  key ? key : "?");
		}
		if (rc)
			goto out;
	}
	if (!tnode || tnode->type != YAML_SEQUENCE_NODE ||
	    tnode->data.sequence.items.top == tnode->data.sequence.items.start) {
		rc = fail(p, tnode ? tnode : root,
			  "'tests:' must be a non-empty list of tests");
		goto out;
	}
	size_t n = (size_t)(tnode->data.sequence.items.top -
			    tnode->data.sequence.items.start);
	*tests = calloc(n, sizeof(**tests));
	if (!*tests) {
		rc = SD_ERR_NOMEM;
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		yaml_node_t *tn = yaml_document_get_node(
			&p->doc, tnode->data.sequence.items.start[i]);
		(*tests)[i] = *defaults;
		(*tests)[i].ops[0] = '\0';
		(*tests)[i].line = (int)tn->start_mark.line + 1;
		rc = read_mapping(p, tn, &(*tests)[i]);
		if (rc)
			goto out;
		if (!(*tests)[i].ops[0]) {
			rc = fail(p, tn, "test %zu has no 'op'", i + 1);
			goto out;
		}
	}
	*ntests = n;
out:
	yaml_document_delete(&p->doc);
	return rc;
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

/* Expansion into concrete tests. */
struct expander {
	struct sd_plan *plan;
	size_t cap;
	int nranks;
	const char *where; /* "FILE:LINE" or "--op" for messages */
	int strict;        /* --op: an op the job is too small for is an error;
			      in a plan it is skipped, so one plan fits all */
	char *err;
	size_t errlen;
};

static int push(struct expander *e, const struct sd_test_spec *t)
{
	if (e->plan->ntests == e->cap) {
		size_t cap = e->cap ? e->cap * 2 : 16;
		void *p = realloc(e->plan->tests, cap * sizeof(*t));
		if (!p)
			return SD_ERR_NOMEM;
		e->plan->tests = p;
		e->cap = cap;
	}
	e->plan->tests[e->plan->ntests++] = *t;
	return SD_OK;
}

/* Call fn for each comma-separated item of list. */
#define FOR_EACH_ITEM(list, item)                                            \
	for (char _buf[256], *_save = NULL,                                  \
		      *item = (sd_strlcpy(_buf, (list), sizeof(_buf)),       \
			       strtok_r(_buf, ",", &_save));                 \
	     item; item = strtok_r(NULL, ",", &_save))

/* The ranks per group of `scope` on n ranks: n for world, K for split:K,
 * SD_GROUPS_FROM_HOSTS for node and rail (the hosts decide, at run time);
 * 0 with err for a scope that is not one. */
static int scope_group_size(struct expander *e, const char *full, int n)
{
	long k;
	char scope[32];
	sd_scope_one_rank(full, scope, sizeof(scope));
	if (strcmp(scope, "world") == 0)
		return n;
	if (strcmp(scope, "node") == 0 || strcmp(scope, "rail") == 0 ||
	    strcmp(scope, "gpu-pairs") == 0 || strcmp(scope, "node-pairs") == 0 ||
	    strcmp(scope, "node-pairs:ring") == 0 ||
	    (strncmp(scope, "node-pairs:random:", 18) == 0 &&
	     !sd_parse_int(scope + 18, 1, 1000000, &k)) ||
	    strcmp(scope, "node-pairs:adaptive") == 0 ||
	    (strncmp(scope, "node-pairs:adaptive:", 20) == 0 &&
	     !sd_parse_int(scope + 20, 0, SD_ADAPTIVE_MAX_MORE, &k)))
		return SD_GROUPS_FROM_HOSTS;
	if (strncmp(scope, "split:", 6) == 0 &&
	    !sd_parse_int(scope + 6, 1, 1 << 24, &k))
		return (int)k;
	if (strncmp(scope, "node-pairs:adaptive:", 20) == 0) {
		snprintf(e->err, e->errlen, "%s: scope '%s': the rounds after "
			 "the first must be a whole number from 0 to %d, e.g. "
			 "node-pairs:adaptive:1", e->where, full,
			 SD_ADAPTIVE_MAX_MORE);
		return 0;
	}
	static const struct sd_name_row scopes[] = {
		{ "world", 0 }, { "node", 1 }, { "rail", 2 }, { "gpu-pairs", 3 },
		{ "node-pairs", 4 }, { "node-pairs:ring", 5 },
		{ "node-pairs:one", 6 }, { "node-pairs:ring:one", 7 },
		{ "node-pairs:adaptive", 8 }, { "node-pairs:adaptive:one", 9 },
		{ NULL, 0 }
	};
	const char *hint = NULL;
	int which;
	sd_name_lookup(scopes, scope, &which, &hint);
	if (hint)
		snprintf(e->err, e->errlen, "%s: unknown scope '%s'; did you "
			 "mean '%s'?", e->where, full, hint);
	else
		snprintf(e->err, e->errlen, "%s: unknown scope '%s'; use world, "
			 "node, rail, gpu-pairs, node-pairs (or node-pairs:ring, "
			 "node-pairs:random:K, node-pairs:adaptive[:K] with K "
			 "from 0 to %d; :one for one rank per node), or "
			 "split:K for groups of K consecutive ranks", e->where,
			 full, SD_ADAPTIVE_MAX_MORE);
	return 0;
}

static int expand_one(struct expander *e, const struct raw_test *r)
{
	const char *hint;
	int rc;
	int gsize = scope_group_size(e, r->scope, e->nranks);
	if (!gsize)
		return SD_ERR_INVALID;
	/* groups the hosts decide are checked at run time; their root is
	 * each group's rank 0 */
	int from_hosts = gsize == SD_GROUPS_FROM_HOSTS;
	int ranks = from_hosts ? 1 : gsize;   /* roots there are */
	/* the test's env with its defaults', as NCCL will take it */
	struct sd_nccl_config nc;
	char why[768];
	if (sd_nccl_env_config(r->env, &nc, why, sizeof(why))) {
		snprintf(e->err, e->errlen, "%s: env: %s", e->where, why);
		return SD_ERR_INVALID;
	}
	if (!from_hosts && e->nranks % gsize) {
		if (!e->strict)
			return SD_OK; /* the scope does not fit this job */
		snprintf(e->err, e->errlen, "%s: scope %s needs a multiple of "
			 "%d ranks, the job has %d", e->where, r->scope, gsize,
			 e->nranks);
		return SD_ERR_INVALID;
	}
	FOR_EACH_ITEM(r->ops, opname) {
		enum sd_op op;
		if (sd_op_from_name(opname, &op, &hint)) {
			snprintf(e->err, e->errlen, "%s: unknown op '%s'%s%s%s",
				 e->where, opname, hint ? "; did you mean '" : "",
				 hint ? hint : "", hint ? "'?" : "");
			return SD_ERR_INVALID;
		}
		const struct sd_coll *c = sd_coll_get(op);
		if (!from_hosts && gsize < c->min_ranks && !e->strict)
			continue;
		if (!from_hosts && gsize < c->min_ranks) {
			snprintf(e->err, e->errlen, "%s: %s needs at least %d "
				 "ranks, the %s has %d; run more ranks or drop "
				 "it", e->where, c->name, c->min_ranks,
				 gsize == e->nranks ? "job" : "group", gsize);
			return SD_ERR_INVALID;
		}
		char all_dtypes[256], all_redops[128];
		sd_name_join(sd_dtype_names, ~0u, SD_DTYPE_COUNT, ",",
			     all_dtypes, sizeof(all_dtypes));
		sd_name_join(sd_redop_names, ~0u, SD_REDOP_COUNT, ",",
			     all_redops, sizeof(all_redops));
		const char *dtypes = strcmp(r->dtypes, "all") == 0
			? all_dtypes : r->dtypes;
		FOR_EACH_ITEM(dtypes, dname) {
			struct sd_test_spec t = { 0 };
			t.op = op;
			if (sd_dtype_from_name(dname, &t.dtype, &hint)) {
				snprintf(e->err, e->errlen, "%s: unknown data "
					 "type '%s'%s%s%s", e->where, dname,
					 hint ? "; did you mean '" : "",
					 hint ? hint : "", hint ? "'?" : "");
				return SD_ERR_INVALID;
			}
			t.cfg = r->cfg;
			sd_strlcpy(t.scope, r->scope, sizeof(t.scope));
			t.group_size = gsize;
			sd_strlcpy(t.algo, r->algo[0] ? r->algo : "auto",
				   sizeof(t.algo));
			sd_strlcpy(t.env, r->env, sizeof(t.env));
			sd_strlcpy(t.transport, r->transport,
				   sizeof(t.transport));
			sd_strlcpy(t.iface, r->iface, sizeof(t.iface));
			sd_strlcpy(t.process_env, r->process_env,
				   sizeof(t.process_env));
			t.expect = r->expect;
			t.retries = r->retries;
			t.has_seed = r->has_seed;
			t.seed = r->seed;
			if (t.cfg.min_bytes > t.cfg.max_bytes) {
				snprintf(e->err, e->errlen, "%s: min_bytes "
					 "(-b) is larger than max_bytes (-e)",
					 e->where);
				return SD_ERR_INVALID;
			}
			if (t.expect.at_bytes &&
			    (t.expect.at_bytes < t.cfg.min_bytes ||
			     t.expect.at_bytes > t.cfg.max_bytes)) {
				char at[32], lo[32], hi[32];
				sd_format_size(t.expect.at_bytes, at, sizeof(at));
				sd_format_size(t.cfg.min_bytes, lo, sizeof(lo));
				sd_format_size(t.cfg.max_bytes, hi, sizeof(hi));
				snprintf(e->err, e->errlen, "%s: expect: at %s "
					 "is outside the test's sizes %s to %s; "
					 "judge a size it measures", e->where,
					 at, lo, hi);
				return SD_ERR_INVALID;
			}
			if (sd_size_series(t.cfg.min_bytes, t.cfg.max_bytes,
					   t.cfg.step_factor, t.cfg.step_bytes, NULL,
					   SD_MAX_SIZES + 1) > SD_MAX_SIZES) {
				snprintf(e->err, e->errlen, "%s: more than %d "
					 "sizes from min_bytes to max_bytes; use "
					 "a larger step", e->where, SD_MAX_SIZES);
				return SD_ERR_INVALID;
			}
			const char *redops = !c->reduces ? "sum"
				: strcmp(r->redops, "all") == 0
					? all_redops : r->redops;
			FOR_EACH_ITEM(redops, rname) {
				if (sd_redop_from_name(rname, &t.redop, &hint)) {
					snprintf(e->err, e->errlen, "%s: unknown "
						 "reduction '%s'%s%s%s", e->where,
						 rname, hint ? "; did you mean '"
							     : "",
						 hint ? hint : "",
						 hint ? "'?" : "");
					return SD_ERR_INVALID;
				}
				if (!c->rooted) {
					t.root = -1;
					if ((rc = push(e, &t)))
						return rc;
					continue;
				}
				if (strcmp(r->roots, "all") == 0) {
					for (int k = 0; k < ranks; k++) {
						t.root = k;
						if ((rc = push(e, &t)))
							return rc;
					}
					continue;
				}
				FOR_EACH_ITEM(r->roots, rootname) {
					long v;
					if (sd_parse_int(rootname, 0,
							 ranks - 1, &v)) {
						snprintf(e->err, e->errlen,
							 "%s: root '%s' is not a "
							 "rank from 0 to %d (or "
							 "'all')", e->where,
							 rootname, ranks - 1);
						return SD_ERR_INVALID;
					}
					t.root = (int)v;
					if ((rc = push(e, &t)))
						return rc;
				}
			}
		}
	}
	return SD_OK;
}

/* The settings an override may set: its bit and where it is. */
#define SETTABLE(bit, f)                                                     \
	{ bit, offsetof(struct sd_test_settings, f),                         \
	  sizeof(((struct sd_test_settings *)0)->f) }
static const struct {
	unsigned bit;
	size_t offset, size;
} settable[] = {
	SETTABLE(SD_SET_MIN_BYTES, min_bytes),
	SETTABLE(SD_SET_MAX_BYTES, max_bytes),
	SETTABLE(SD_SET_STEP_BYTES, step_bytes),
	SETTABLE(SD_SET_STEP_FACTOR, step_factor),
	SETTABLE(SD_SET_ITERS, iters),
	SETTABLE(SD_SET_WARMUP, warmup),
	SETTABLE(SD_SET_CHECK, check_passes),
	SETTABLE(SD_SET_PER_ITER, per_iter),
	SETTABLE(SD_SET_IN_PLACE, in_place),
	SETTABLE(SD_SET_COMBINE, combine),
	SETTABLE(SD_SET_TIMEOUT, timeout_ms),
};
#undef SETTABLE

/* Apply what the caller set; the one place overrides meet the plan. */
static void apply_overrides(struct raw_test *t,
			    const struct sd_plan_overrides *o)
{
	if (o->dtypes)
		sd_strlcpy(t->dtypes, o->dtypes, sizeof(t->dtypes));
	if (o->redops)
		sd_strlcpy(t->redops, o->redops, sizeof(t->redops));
	if (o->roots)
		sd_strlcpy(t->roots, o->roots, sizeof(t->roots));
	if (o->algo)
		sd_strlcpy(t->algo, o->algo, sizeof(t->algo));
	if (o->scope)
		sd_strlcpy(t->scope, o->scope, sizeof(t->scope));
	for (size_t i = 0; i < sizeof(settable) / sizeof(settable[0]); i++)
		if (o->set & settable[i].bit)
			memcpy((char *)&t->cfg + settable[i].offset,
			       (const char *)&o->cfg + settable[i].offset,
			       settable[i].size);
	/* a step and a factor exclude each other: the one set wins */
	if (o->set & SD_SET_STEP_FACTOR)
		t->cfg.step_bytes = 0;
	if (o->set & SD_SET_STEP_BYTES)
		t->cfg.step_factor = 1;
}

static int render(struct sd_plan *p)
{
	struct sd_buf b = { 0 };
	int bad = sd_buf_printf(&b, "name: %s\n", p->name);
	if (p->switches[0]) {
		/* "s0=node[1-4] s1=..." as switches: {s0: "node[1-4]", ...} */
		bad |= sd_buf_printf(&b, "switches: {");
		for (const char *e = p->switches; *e && !bad;) {
			size_t n = strcspn(e, " ");
			const char *eq = memchr(e, '=', n);
			bad |= sd_buf_printf(&b, "%s%.*s: \"%.*s\"",
					     e == p->switches ? "" : ", ",
					     (int)(eq - e), e,
					     (int)(n - (size_t)(eq - e) - 1),
					     eq + 1);
			e += n + (e[n] == ' ');
		}
		bad |= sd_buf_printf(&b, "}\n");
	}
	bad |= sd_buf_printf(&b, "tests:\n");
	for (size_t i = 0; i < p->ntests && !bad; i++) {
		const struct sd_test_spec *t = &p->tests[i];
		bad |= sd_buf_printf(&b, "  - {op: %s, dtype: %s",
				     sd_op_name(t->op), sd_dtype_name(t->dtype));
		if (sd_coll_get(t->op)->reduces)
			bad |= sd_buf_printf(&b, ", redop: %s",
					     sd_redop_name(t->redop));
		if (t->root >= 0)
			bad |= sd_buf_printf(&b, ", root: %d", t->root);
		bad |= sd_buf_printf(&b, ", min_bytes: %llu, max_bytes: %llu",
				     (unsigned long long)t->cfg.min_bytes,
				     (unsigned long long)t->cfg.max_bytes);
		if (t->cfg.step_factor > 1)
			bad |= sd_buf_printf(&b, ", step_factor: %g",
					     t->cfg.step_factor);
		else
			bad |= sd_buf_printf(&b, ", step_bytes: %llu",
					     (unsigned long long)t->cfg.step_bytes);
		bad |= sd_buf_printf(&b, ", iters: %ld, warmup: %ld, algo: %s",
				     t->cfg.iters, t->cfg.warmup, t->algo);
		bad |= sd_buf_printf(&b, ", check: %ld, per_iter: %s, "
				     "in_place: %s, combine: %s, timeout: %g, "
				     "scope: %s", t->cfg.check_passes,
				     t->cfg.per_iter ? "true" : "false",
				     t->cfg.in_place ? "true" : "false",
				     sd_name_of(combine_names, t->cfg.combine),
				     t->cfg.timeout_ms / 1e3, t->scope);
		if (t->has_seed)
			bad |= sd_buf_printf(&b, ", seed: %llu", t->seed);
		if (sd_expect_any(&t->expect)) {
			const struct sd_expectation *x = &t->expect;
			const char *sep = "";
			bad |= sd_buf_printf(&b, ", expect: {");
#define EXPECT(cond, ...)                                                    \
	do {                                                                 \
		if (cond) {                                                  \
			bad |= sd_buf_printf(&b, "%s", sep);                 \
			bad |= sd_buf_printf(&b, __VA_ARGS__);               \
			sep = ", ";                                          \
		}                                                            \
	} while (0)
			EXPECT(x->busbw_gbs > 0, "busbw: %g", x->busbw_gbs);
			EXPECT(x->time_us > 0, "time: %gus", x->time_us);
			EXPECT(x->at_bytes, "at: %llu",
			       (unsigned long long)x->at_bytes);
			EXPECT(x->peers > 0, "peers: %g", x->peers);
			EXPECT(x->mad > 0, "mad: %g", x->mad);
			EXPECT(x->baseline > 0, "baseline: %g", x->baseline);
#undef EXPECT
			bad |= sd_buf_printf(&b, "}, retries: %d", t->retries);
		}
		if (t->env[0]) {
			/* "A=1 B=2" as env: {A: 1, B: 2} */
			bad |= sd_buf_printf(&b, ", env: {");
			for (const char *e = t->env; *e && !bad;) {
				size_t n = strcspn(e, " ");
				const char *eq = memchr(e, '=', n);
				bad |= sd_buf_printf(&b, "%s%.*s: %.*s",
						     e == t->env ? "" : ", ",
						     (int)(eq - e), e,
						     (int)(n - (size_t)(eq - e) - 1),
						     eq + 1);
				e += n + (e[n] == ' ');
			}
			bad |= sd_buf_printf(&b, "}");
		}
		if (t->transport[0])
			bad |= sd_buf_printf(&b, ", transport: %s",
					     t->transport);
		if (t->iface[0])
			bad |= sd_buf_printf(&b, ", iface: %s", t->iface);
		if (t->process_env[0]) {
			/* "A=1 B=2" as process_env: {A: 1, B: 2} */
			bad |= sd_buf_printf(&b, ", process_env: {");
			for (const char *e = t->process_env; *e && !bad;) {
				size_t n = strcspn(e, " ");
				const char *eq = memchr(e, '=', n);
				bad |= sd_buf_printf(
					&b, "%s%.*s: %.*s",
					e == t->process_env ? "" : ", ",
					(int)(eq - e), e,
					(int)(n - (size_t)(eq - e) - 1), eq + 1);
				e += n + (e[n] == ' ');
			}
			bad |= sd_buf_printf(&b, "}");
		}
		bad |= sd_buf_printf(&b, "}\n");
	}
	if (bad) {
		sd_buf_free(&b);
		return SD_ERR_NOMEM;
	}
	p->text = b.data;
	snprintf(p->hash, sizeof(p->hash), "%016llx",
		 (unsigned long long)sd_fnv1a(SD_FNV_INIT, b.data, b.len));
	return SD_OK;
}

static char *read_file(const char *path, char *err, size_t errlen)
{
	/* a regular file of a plan's size: /dev/zero, a FIFO or a folder
	 * would be read forever, block, or fail late */
	struct stat sb;
	if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode)) {
		snprintf(err, errlen, "%s: not a plan file (%s); name a regular "
			 "file", path, S_ISDIR(sb.st_mode) ? "a directory"
				       : S_ISFIFO(sb.st_mode) ? "a FIFO"
				       : S_ISCHR(sb.st_mode) ? "a device"
							     : "not a regular file");
		return NULL;
	}
	if (stat(path, &sb) == 0 && sb.st_size > SD_PLAN_MAX_FILE) {
		snprintf(err, errlen, "%s: %lld bytes is more than a plan (at "
			 "most %d); is it the right file?", path,
			 (long long)sb.st_size, SD_PLAN_MAX_FILE);
		return NULL;
	}
	FILE *f = fopen(path, "r");
	if (!f) {
		int missing = errno == ENOENT;
		snprintf(err, errlen, "%s: cannot read plan: %s%s", path,
			 strerror(errno),
			 missing ? "; name a plan file, or a shipped plan "
				   "(acceptance, quick, cpu, example, "
				   "profiles/ddp, fsdp, moe, rllib)"
				 : "");
		return NULL;
	}
	struct sd_buf b = { 0 };
	char chunk[4096];
	size_t n;
	size_t total = 0;
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0) {
		const char *nul = memchr(chunk, '\0', n);
		if (nul) {
			snprintf(err, errlen, "%s: a NUL byte at offset %zu; a "
				 "plan is text", path, total + (size_t)(nul - chunk));
			fclose(f);
			sd_buf_free(&b);
			return NULL;
		}
		total += n;
		if (sd_buf_printf(&b, "%.*s", (int)n, chunk))
			break;
	}
	int bad = ferror(f), why = errno;
	fclose(f);
	if (bad || !b.data) {
		if (bad)
			snprintf(err, errlen, "%s: cannot read the plan file: %s",
				 path, strerror(why));
		else
			snprintf(err, errlen, "%s: the plan file is empty", path);
		sd_buf_free(&b);
		return NULL;
	}
	return b.data;
}

int sd_plan_build(const char *file, const struct sd_plan_overrides *ov,
		  int nranks, struct sd_plan *out, char *err, size_t errlen)
{
	static const struct sd_plan_overrides none = { 0 };
	const struct sd_plan_overrides *o = ov ? ov : &none;
	struct parse p = { .file = file ? file : "<built-in plan>", .err = err,
			   .errlen = errlen };
	struct raw_test defaults = field_defaults;
	struct raw_test *raw = NULL;
	size_t nraw = 0;
	char *text = NULL;
	int rc;

	memset(out, 0, sizeof(*out));
	sd_strlcpy(out->name, file ? file : "default", sizeof(out->name));
	if (file) {
		text = read_file(file, err, errlen);
		if (!text)
			return SD_ERR_INVALID;
	}
	rc = parse_plan(&p, text ? text : sd_default_plan, out->name,
			sizeof(out->name), &defaults, &raw, &nraw);
	free(text);
	sd_strlcpy(out->switches, p.switches, sizeof(out->switches));
	if (rc)
		goto fail;

	struct expander e = { .plan = out, .nranks = nranks, .err = err,
			      .errlen = errlen };
	char where[300];
	if (o->ops) {
		/* --op replaces the plan's tests, keeping its defaults */
		struct raw_test t = defaults;
		sd_strlcpy(t.ops, o->ops, sizeof(t.ops));
		apply_overrides(&t, o);
		e.where = "--op";
		e.strict = 1;
		rc = expand_one(&e, &t);
	} else {
		for (size_t i = 0; i < nraw && !rc; i++) {
			apply_overrides(&raw[i], o);
			snprintf(where, sizeof(where), "%s:%d", p.file,
				 raw[i].line);
			e.where = where;
			rc = expand_one(&e, &raw[i]);
		}
	}
	if (!rc && out->ntests == 0) {
		snprintf(err, errlen, "%s: no test of the plan fits a job of %d "
			 "rank%s; run more ranks", p.file, nranks,
			 nranks == 1 ? "" : "s");
		rc = SD_ERR_INVALID;
	}
	for (size_t i = 0; !rc && i < out->ntests; i++)
		if (out->tests[i].cfg.timeout_ms > out->timeout_ms)
			out->timeout_ms = out->tests[i].cfg.timeout_ms;
	if (!rc)
		rc = render(out);
fail:
	free(raw);
	if (rc)
		sd_plan_free(out);
	return rc;
}

void sd_plan_free(struct sd_plan *p)
{
	free(p->tests);
	free(p->text);
	p->tests = NULL;
	p->text = NULL;
	p->ntests = 0;
}

const char *sd_plan_resolve(const char *arg, char *buf, size_t len)
{
	char dirs[8192] = "";
	const char *env = getenv("SHAKEDOWN_PLAN_DIR");
	if (!arg || access(arg, F_OK) == 0 || arg[0] == '/' ||
	    strncmp(arg, "./", 2) == 0 || strncmp(arg, "../", 3) == 0)
		return arg;
	if (env && *env)
		snprintf(dirs, sizeof(dirs), "%s:", env);
	if (sd_in_build_tree()) {
		size_t used = strlen(dirs);
		snprintf(dirs + used, sizeof(dirs) - used, "%s/plans:",
			 SD_SOURCE_DIR);
	}
	char moved[PATH_MAX];
	size_t used = strlen(dirs);
	if (sd_relocated_dir(SD_DATA_DIR, moved, sizeof(moved)) == 0)
		snprintf(dirs + used, sizeof(dirs) - used, "%s/plans:", moved);
	used = strlen(dirs);
	snprintf(dirs + used, sizeof(dirs) - used, "%s/plans", SD_DATA_DIR);
	char *save = NULL;
	for (char *d = strtok_r(dirs, ":", &save); d;
	     d = strtok_r(NULL, ":", &save)) {
		static const char *const ext[] = { "", ".yaml" };
		for (int k = 0; k < 2; k++) {
			snprintf(buf, len, "%s/%s%s", d, arg, ext[k]);
			if (access(buf, R_OK) == 0)
				return buf;
		}
	}
	return arg;
}

uint64_t sd_plan_most_elements(const struct sd_plan *p)
{
	uint64_t most = 0;
	for (size_t i = 0; i < p->ntests; i++) {
		uint64_t n = p->tests[i].cfg.max_bytes /
			     sd_dtype_size(p->tests[i].dtype);
		if (n > most)
			most = n;
	}
	return most;
}

/* A size in words: "2M", "1.5G", "640K" (to a tenth, binary units). */
static void approx_size(uint64_t bytes, char *buf, size_t len)
{
	static const char suffix[] = "KMGT";
	double v = (double)bytes;
	int i = -1;
	while (v >= 1024 && i < 3) {
		v /= 1024;
		i++;
	}
	if (i < 0)
		snprintf(buf, len, "%llu", (unsigned long long)bytes);
	else if ((uint64_t)(v * 10 + 0.5) % 10 == 0)
		snprintf(buf, len, "%.0f%c", v, suffix[i]);
	else
		snprintf(buf, len, "%.1f%c", v, suffix[i]);
}

uint64_t sd_plan_rank_mem_bytes(const struct sd_plan *p, int n, int host,
				size_t *worst)
{
	uint64_t need = 0;
	for (size_t i = 0; i < p->ntests; i++) {
		const struct sd_test_spec *t = &p->tests[i];
		const struct sd_coll *c = sd_coll_get(t->op);
		int g = t->group_size > 0 ? t->group_size : n;
		size_t ts = sd_dtype_size(t->dtype);
		uint64_t b = host ? sd_coll_host_mem_bytes(c, t->cfg.max_bytes,
							   ts, g)
				  : 2 * (uint64_t)sd_coll_buffer_bytes(
					    c, t->cfg.max_bytes, ts, g);
		if (b > need) {
			need = b;
			if (worst)
				*worst = i;
		}
	}
	return need;
}

void sd_plan_mem_words(const struct sd_plan *p, size_t test, int n, int host,
		       char *buf, size_t len)
{
	const struct sd_test_spec *t = &p->tests[test];
	const struct sd_coll *c = sd_coll_get(t->op);
	int g = t->group_size > 0 ? t->group_size : n;
	size_t ts = sd_dtype_size(t->dtype);
	char need[32], one[32];
	approx_size(sd_plan_rank_mem_bytes(&(struct sd_plan){
			    .tests = (struct sd_test_spec *)t, .ntests = 1 },
					   n, host, NULL),
		    need, sizeof(need));
	approx_size(sd_coll_buffer_bytes(c, t->cfg.max_bytes, ts, g), one,
		    sizeof(one));
	if (host)
		snprintf(buf, len, "test %zu (%s up to %llu bytes) needs ~%s "
			 "of memory per rank (%g x its %s buffer, as measured "
			 "with Gloo, +%.0f%% and %lluM)", test + 1,
			 sd_op_name(t->op), (unsigned long long)t->cfg.max_bytes,
			 need, c->host_mem, one,
			 (SD_COLL_MEM_MARGIN - 1) * 100,
			 (unsigned long long)(SD_COLL_MEM_FIXED_BYTES >> 20));
	else
		snprintf(buf, len, "test %zu (%s up to %llu bytes) needs %s "
			 "of device memory per rank (a send and a receive buffer "
			 "of %s)", test + 1, sd_op_name(t->op),
			 (unsigned long long)t->cfg.max_bytes, need, one);
}

int sd_plan_buffers_fit(const struct sd_plan *p,
			const struct sd_rank_info *ranks, const int *host_of,
			int n, char *err, size_t errlen)
{
	size_t worst_host = 0, worst_dev = 0;
	uint64_t need_host = sd_plan_rank_mem_bytes(p, n, 1, &worst_host);
	uint64_t need_dev = sd_plan_rank_mem_bytes(p, n, 0, &worst_dev);
	int *on_host = calloc((size_t)n, sizeof(int)); /* ranks per host */
	for (int q = 0; on_host && q < n; q++)
		on_host[host_of[q]]++;
	for (int q = 0; q < n; q++) {
		const struct sd_device_info *d = &ranks[q].dev;
		if (!d->mem_free_bytes)
			continue; /* the backend does not say */
		int host = !d->pci_bus_id[0];
		uint64_t here = host ? need_host : need_dev;
		int sharing = 1;
		if (host && on_host) {
			sharing = on_host[host_of[q]];
			here = need_host * (uint64_t)sharing;
		}
		if (here <= d->mem_free_bytes)
			continue;
		char words[400], b[32], f[32];
		sd_plan_mem_words(p, host ? worst_host : worst_dev, n, host,
				  words, sizeof(words));
		approx_size(here, b, sizeof(b));
		approx_size(d->mem_free_bytes, f, sizeof(f));
		snprintf(err, errlen, "%s, ~%s for the %d rank%s on %s, which "
			 "has %s available; lower max_bytes (-e) or run fewer "
			 "ranks per host", words, b, sharing,
			 sharing == 1 ? "" : "s", ranks[q].host, f);
		free(on_host);
		return 1;
	}
	free(on_host);
	return 0;
}
