/*
 * unit_plan.c - table-driven tests of plan parsing, expansion, option
 * overrides and the canonical text every rank hashes.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "plan.h"
#include "util.h"
#include "tap.h"

static char dir[] = "/tmp/sd_unit_plan_XXXXXX";

static const char *write_plan(const char *text)
{
	static char path[256];
	snprintf(path, sizeof(path), "%s/plan.yaml", dir);
	FILE *f = fopen(path, "w");
	fputs(text, f);
	fclose(f);
	return path;
}

int main(void)
{
	static const struct {
		const char *text;
		int nranks;
		size_t ntests;     /* when it builds */
		const char *error; /* substring of the error, or NULL */
	} rows[] = {
		{ "tests:\n  - op: all_reduce\n", 2, 1, NULL },
		{ "tests:\n  - op: allreduce\n", 2, 0,
		  "plan.yaml:2: unknown op 'allreduce'; did you mean "
		  "'all_reduce'?" },
		{ "name: x\ntests:\n  - op: all_gather\n    sizes: 4\n", 2, 0,
		  "plan.yaml:4: unknown key 'sizes'" },
		{ "tests:\n  - {op: all_reduce, dtype: [float32, int32], "
		  "redop: all}\n", 2, 10, NULL },
		{ "tests:\n  - {op: broadcast, root: all}\n", 3, 3, NULL },
		{ "tests:\n  - {op: broadcast, root: 5}\n", 3, 0,
		  "root '5' is not a rank from 0 to 2" },
		{ "tests:\n  - {op: all_reduce, dtype: float33}\n", 2, 0,
		  "unknown data type 'float33'; did you mean 'float32'?" },
		{ "tests: [\n", 2, 0, "fix the YAML syntax" },
		{ "tests: []\n", 2, 0, "non-empty list" },
		{ "tests:\n  - {dtype: float32}\n", 2, 0, "has no 'op'" },
		{ "tests:\n  - {op: all_reduce, min_bytes: 1M, max_bytes: 1K}\n",
		  2, 0, "min_bytes (-b) is larger than max_bytes (-e)" },
		{ "tests:\n  - {op: all_reduce, iters: -3}\n", 2, 0,
		  "iters '-3' must be a whole number" },
		{ "defaults: {iters: 2}\ntests:\n  - op: [all_reduce, pt2pt]\n",
		  1, 1, NULL }, /* pt2pt needs 2 ranks: skipped in a plan */
		{ "tests:\n  - op: pt2pt\n", 1, 0, "no test of the plan fits" },
		{ "colour: red\ntests:\n  - op: all_reduce\n", 2, 0,
		  "unknown top-level key 'colour'" },
		{ "tests:\n  - {op: all_reduce, min_bytes: 8, max_bytes: 1G, "
		  "step_bytes: 8}\n", 2, 0, "more than 100000 sizes" },
		{ "tests:\n  - {op: all_reduce, min_bytes: 8, max_bytes: 256K, "
		  "step_bytes: 8}\n", 2, 1, NULL }, /* 32768 sizes is fine */
		{ "tests:\n  - {op: all_reduce, env: {NCCL_MIN_CTAS: 4, "
		  "NCCL_NET: Socket}}\n", 2, 1, NULL },
		{ "tests:\n  - {op: all_reduce, env: {PATH: /tmp}}\n", 2, 0,
		  "env: 'PATH' is not an NCCL_* name" },
		{ "tests:\n  - {op: all_reduce, env: {NCCL_NET: 'a b'}}\n", 2,
		  0, "NCCL_NET's value 'a b' must be plain" },
		{ "tests:\n  - {op: all_reduce, env: NCCL_ALGO}\n", 2, 0,
		  "'env' must be a mapping" },
		/* only what NCCL takes per communicator (nccl_env.c) */
		{ "tests:\n  - {op: all_reduce, env: {NCCL_ALGO: Ring}}\n", 2,
		  0, "NCCL_ALGO is read by NCCL only from the process "
		  "environment" },
		{ "tests:\n  - {op: all_reduce, env: {NCCL_P2P_DISABLE: 1}}\n",
		  2, 0, "NCCL_P2P_DISABLE is read once per process by NCCL" },
		{ "defaults: {env: {NCCL_MAX_CTAS: 2}}\ntests:\n  - {op: "
		  "all_reduce, env: {NCCL_MIN_CTAS: 4}}\n", 2, 0,
		  "NCCL_MIN_CTAS 4 is more than NCCL_MAX_CTAS 2" },
		/* the settings of the run live in the plan */
		{ "defaults: {check: 3, per_iter: true, in_place: no, "
		  "combine: max, timeout: 2.5}\ntests:\n  - op: all_reduce\n",
		  2, 1, NULL },
		{ "tests:\n  - {op: all_reduce, check: 1001}\n", 2, 0,
		  "check '1001' must be a whole number from 0 to 1000" },
		{ "tests:\n  - {op: all_reduce, per_iter: maybe}\n", 2, 0,
		  "per_iter 'maybe' must be true or false" },
		{ "tests:\n  - {op: all_reduce, combine: mean}\n", 2, 0,
		  "combine 'mean' must be avg, min, max or rank0" },
		{ "tests:\n  - {op: all_reduce, timeout: 0}\n", 2, 0,
		  "timeout '0' must be a positive number of seconds" },
		{ "tests:\n  - {op: all_reduce, scope: split:2}\n", 4, 1, NULL },
		{ "tests:\n  - {op: all_reduce, scope: split:2}\n", 3, 0,
		  "no test of the plan fits" }, /* skipped: 3 is not 2k */
		{ "tests:\n  - {op: broadcast, scope: split:2, root: all}\n", 4,
		  2, NULL }, /* roots are ranks of the group */
		{ "tests:\n  - {op: broadcast, scope: split:2, root: 2}\n", 4,
		  0, "root '2' is not a rank from 0 to 1" },
		{ "tests:\n  - {op: pt2pt, scope: split:1}\n", 2, 0,
		  "no test of the plan fits" }, /* pt2pt needs 2 per group */
		{ "tests:\n  - {op: all_reduce, scope: galaxy}\n", 2, 0,
		  "plan.yaml:2: unknown scope 'galaxy'; use world, node, rail, "
		  "gpu-pairs, node-pairs (or node-pairs:ring, "
		  "node-pairs:random:K, node-pairs:adaptive[:K] with K from 0 "
		  "to 64; :one for one rank per node), or split:K" },
		{ "tests:\n  - {op: all_reduce, scope: \"node-pairs:adaptive:1\"}\n",
		  4, 1, NULL },
		{ "tests:\n  - {op: all_reduce, scope: \"node-pairs:adaptive:0:one\"}\n",
		  4, 1, NULL },
		{ "tests:\n  - {op: all_reduce, scope: node-pairs:ring}\n", 4, 1,
		  NULL },
		{ "tests:\n  - {op: all_reduce, scope: node-pairs:random:3}\n", 4,
		  1, NULL },
		{ "tests:\n  - {op: all_reduce, scope: node-pairs:random:0}\n", 4,
		  0, "unknown scope 'node-pairs:random:0'" },
	};
	struct sd_plan_overrides o;
	struct sd_plan p;
	char err[512];

	if (!mkdtemp(dir))
		return 1;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		memset(&o, 0, sizeof(o));
		err[0] = '\0';
		int rc = sd_plan_build(write_plan(rows[i].text), &o,
				       rows[i].nranks, &p, err, sizeof(err));
		if (rows[i].error) {
			ok(rc != 0 && strstr(err, rows[i].error),
			   "plan %zu fails: %s", i, rows[i].error);
			if (!strstr(err, rows[i].error))
				printf("#   got '%s'\n", err);
		} else {
			ok(rc == 0 && p.ntests == rows[i].ntests,
			   "plan %zu builds %zu tests", i, rows[i].ntests);
			if (rc)
				printf("#   error '%s'\n", err);
			sd_plan_free(&p);
		}
	}

	/* env is kept per test and shown in the canonical text */
	memset(&o, 0, sizeof(o));
	ok(sd_plan_build(write_plan("defaults: {env: {NCCL_MAX_CTAS: 8}}\n"
				    "tests:\n  - op: all_reduce\n"
				    "  - {op: broadcast, env: {NCCL_NET: IB}}\n"),
			 &o, 2, &p, err, sizeof(err)) == 0 &&
	   strcmp(p.tests[0].env, "NCCL_MAX_CTAS=8") == 0 &&
	   strcmp(p.tests[1].env, "NCCL_MAX_CTAS=8 NCCL_NET=IB") == 0 &&
	   strstr(p.text, "env: {NCCL_MAX_CTAS: 8, NCCL_NET: IB}") != NULL,
	   "env from defaults and tests, rendered in the canonical text");
	sd_plan_free(&p);

	/* a seed and the switches are the plan's and in its text: another
	 * seed, another hash */
	memset(&o, 0, sizeof(o));
	ok(sd_plan_build(write_plan("switches: {s0: \"n[1-2]\", s1: n3}\n"
				    "tests:\n  - {op: all_reduce, scope: "
				    "\"node-pairs:adaptive:1\", seed: 0x2a}\n"),
			 &o, 4, &p, err, sizeof(err)) == 0 &&
	   p.tests[0].has_seed && p.tests[0].seed == 42 &&
	   strcmp(p.switches, "s0=n[1-2] s1=n3") == 0 &&
	   strstr(p.text, "switches: {s0: \"n[1-2]\", s1: \"n3\"}\n") &&
	   strstr(p.text, "scope: node-pairs:adaptive:1, seed: 42}"),
	   "seed and switches: kept, and rendered in the canonical text");
	char seed_hash[17];
	sd_strlcpy(seed_hash, p.hash, sizeof(seed_hash));
	sd_plan_free(&p);
	ok(sd_plan_build(write_plan("switches: {s0: \"n[1-2]\", s1: n3}\n"
				    "tests:\n  - {op: all_reduce, scope: "
				    "\"node-pairs:adaptive:1\", seed: 43}\n"),
			 &o, 4, &p, err, sizeof(err)) == 0 &&
	   strcmp(p.hash, seed_hash) != 0, "another seed, another hash");
	sd_plan_free(&p);

	/* every setting is a field of the test and is in the text: the
	 * plan's, then the overrides' on top, with defaults from one place */
	static const char settings_plan[] =
		"defaults: {check: 3, timeout: 2.5}\n"
		"tests:\n  - {op: all_reduce}\n"
		"  - {op: all_gather, scope: split:2, combine: min}\n";
	memset(&o, 0, sizeof(o));
	ok(sd_plan_build(write_plan(settings_plan),
			 &o, 4, &p, err, sizeof(err)) == 0 && p.ntests == 2 &&
	   p.tests[0].cfg.check_passes == 3 && p.tests[0].cfg.timeout_ms == 2500 &&
	   p.tests[0].cfg.in_place == 1 && p.tests[0].cfg.per_iter == 0 &&
	   p.tests[0].cfg.combine == SD_COMBINE_AVG &&
	   strcmp(p.tests[0].scope, "world") == 0 &&
	   p.tests[0].group_size == 4 && p.tests[1].group_size == 2 &&
	   p.tests[1].cfg.combine == SD_COMBINE_MIN && p.timeout_ms == 2500 &&
	   strstr(p.text, "check: 3, per_iter: false, in_place: true, "
		  "combine: avg, timeout: 2.5, scope: world}") &&
	   strstr(p.text, "combine: min, timeout: 2.5, scope: split:2}"),
	   "run settings are test fields, rendered in the canonical text");
	char settings_hash[17];
	sd_strlcpy(settings_hash, p.hash, sizeof(settings_hash));
	sd_plan_free(&p);
	o.cfg.check_passes = 0;
	o.cfg.timeout_ms = 9000;
	o.cfg.per_iter = 1;
	o.cfg.in_place = 0;
	o.scope = "split:4";
	o.set = SD_SET_CHECK | SD_SET_TIMEOUT | SD_SET_PER_ITER |
		SD_SET_IN_PLACE;
	ok(sd_plan_build(write_plan(settings_plan),
			 &o, 4, &p, err, sizeof(err)) == 0 && p.ntests == 2 &&
	   p.tests[1].cfg.check_passes == 0 && p.tests[1].cfg.timeout_ms == 9000 &&
	   p.tests[1].cfg.per_iter == 1 && p.tests[1].cfg.in_place == 0 &&
	   p.tests[1].group_size == 4 &&
	   strcmp(p.hash, settings_hash) != 0,
	   "overrides apply to every test and change the hash");
	sd_plan_free(&p);
	memset(&o, 0, sizeof(o));

	/* the example plan shipped in plans/ builds */
	char example[512];
	snprintf(example, sizeof(example), "%s/plans/example.yaml",
		 SD_TOP_SRCDIR);
	ok(sd_plan_build(example, &o, 4, &p, err, sizeof(err)) == 0 &&
	   p.ntests == 12, "plans/example.yaml builds 12 tests on 4 ranks");
	sd_plan_free(&p);

	/* the built-in plan: every collective */
	memset(&o, 0, sizeof(o));
	ok(sd_plan_build(NULL, &o, 4, &p, err, sizeof(err)) == 0 &&
	   p.ntests == 10, "built-in plan has all 10 collectives on 4 ranks");
	char hash[17];
	memcpy(hash, p.hash, sizeof(hash));
	sd_plan_free(&p);
	ok(sd_plan_build(NULL, &o, 1, &p, err, sizeof(err)) == 0 &&
	   p.ntests == 9, "built-in plan skips pt2pt on 1 rank");
	sd_plan_free(&p);

	/* options override every test and change the hash */
	o.cfg.max_bytes = 64 << 20;
	o.set |= SD_SET_MAX_BYTES;
	o.dtypes = "float64";
	ok(sd_plan_build(NULL, &o, 4, &p, err, sizeof(err)) == 0 &&
	   p.tests[3].cfg.max_bytes == (64u << 20) && p.tests[3].dtype == SD_FLOAT64,
	   "-e and -d override the plan");
	ok(strcmp(p.hash, hash) != 0, "overrides change the plan hash");
	ok(strstr(p.text, "max_bytes: 67108864") != NULL,
	   "canonical text shows the override");
	sd_plan_free(&p);

	/* --op replaces the tests; unknown ops and too few ranks are errors */
	memset(&o, 0, sizeof(o));
	o.ops = "all_to_all,broadcast";
	ok(sd_plan_build(NULL, &o, 3, &p, err, sizeof(err)) == 0 &&
	   p.ntests == 2 && p.tests[0].op == SD_OP_ALL_TO_ALL,
	   "--op replaces the plan's tests");
	sd_plan_free(&p);
	o.ops = "pt2pt";
	ok(sd_plan_build(NULL, &o, 1, &p, err, sizeof(err)) != 0 &&
	   strstr(err, "pt2pt needs at least 2 ranks"),
	   "--op pt2pt on 1 rank is an error");
	o.ops = "all_reduce";
	o.redops = "all";
	o.dtypes = "all";
	ok(sd_plan_build(NULL, &o, 2, &p, err, sizeof(err)) == 0 &&
	   p.ntests == 60, "-d all -o all: 12 types x 5 reductions");
	sd_plan_free(&p);

	ok(sd_plan_build("/nonexistent/plan.yaml", &o, 2, &p, err,
			 sizeof(err)) != 0 && strstr(err, "cannot read plan"),
	   "a missing plan file is named");

	unlink(write_plan(""));
	rmdir(dir);
	return done_testing();
}
