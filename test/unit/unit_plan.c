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
		{ "tests:\n  - {op: all_reduce, env: {NCCL_ALGO: Ring, "
		  "NCCL_PROTO: Simple}}\n", 2, 1, NULL },
		{ "tests:\n  - {op: all_reduce, env: {PATH: /tmp}}\n", 2, 0,
		  "env: 'PATH' is not an NCCL_* name" },
		{ "tests:\n  - {op: all_reduce, env: {NCCL_ALGO: 'a b'}}\n", 2,
		  0, "is not an NCCL_* name with a plain value" },
		{ "tests:\n  - {op: all_reduce, env: NCCL_ALGO}\n", 2, 0,
		  "'env' must be a mapping" },
	};
	struct sd_run_options o;
	struct sd_plan p;
	char err[512];

	if (!mkdtemp(dir))
		return 1;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		sd_run_options_init(&o);
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
	sd_run_options_init(&o);
	ok(sd_plan_build(write_plan("defaults: {env: {NCCL_ALGO: Tree}}\n"
				    "tests:\n  - op: all_reduce\n"
				    "  - {op: broadcast, env: {NCCL_PROTO: LL}}\n"),
			 &o, 2, &p, err, sizeof(err)) == 0 &&
	   strcmp(p.tests[0].env, "NCCL_ALGO=Tree") == 0 &&
	   strcmp(p.tests[1].env, "NCCL_ALGO=Tree NCCL_PROTO=LL") == 0 &&
	   strstr(p.text, "env: {NCCL_ALGO: Tree, NCCL_PROTO: LL}") != NULL,
	   "env from defaults and tests, rendered in the canonical text");
	sd_plan_free(&p);

	/* the example plan shipped in plans/ builds */
	char example[512];
	snprintf(example, sizeof(example), "%s/plans/example.yaml",
		 SD_TOP_SRCDIR);
	ok(sd_plan_build(example, &o, 4, &p, err, sizeof(err)) == 0 &&
	   p.ntests == 12, "plans/example.yaml builds 12 tests on 4 ranks");
	sd_plan_free(&p);

	/* the built-in plan: every collective */
	sd_run_options_init(&o);
	ok(sd_plan_build(NULL, &o, 4, &p, err, sizeof(err)) == 0 &&
	   p.ntests == 10, "built-in plan has all 10 collectives on 4 ranks");
	char hash[17];
	memcpy(hash, p.hash, sizeof(hash));
	sd_plan_free(&p);
	ok(sd_plan_build(NULL, &o, 1, &p, err, sizeof(err)) == 0 &&
	   p.ntests == 9, "built-in plan skips pt2pt on 1 rank");
	sd_plan_free(&p);

	/* options override every test and change the hash */
	o.max_bytes = 64 << 20;
	o.set_max = 1;
	o.dtypes = "float64";
	ok(sd_plan_build(NULL, &o, 4, &p, err, sizeof(err)) == 0 &&
	   p.tests[3].max_bytes == (64u << 20) && p.tests[3].dtype == SD_FLOAT64,
	   "-e and -d override the plan");
	ok(strcmp(p.hash, hash) != 0, "overrides change the plan hash");
	ok(strstr(p.text, "max_bytes: 67108864") != NULL,
	   "canonical text shows the override");
	sd_plan_free(&p);

	/* --op replaces the tests; unknown ops and too few ranks are errors */
	sd_run_options_init(&o);
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
