/*
 * cmd_plan.c - `shakedown plan check|expand`: read plan files without a
 * cluster, through the same lib/plan.c a run uses, and say what is wrong
 * (FILE:LINE, exit status 2) or what they expand to.
 */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "names.h"
#include "plan.h"
#include "runner.h"
#include "shakedown/coll.h"
#include "shakedown/pattern.h"
#include "tool.h"

enum { PLAN_CHECK, PLAN_EXPAND };

static const struct sd_name_row subcommands[] = {
	{ "check", PLAN_CHECK }, { "expand", PLAN_EXPAND }, { NULL, 0 }
};

static const struct option plan_options[] = {
	{ "ranks", required_argument, NULL, 'n' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 }
};

#define PLAN_ERROR(...)                                                      \
	do {                                                                 \
		fprintf(stderr, "shakedown plan: " __VA_ARGS__);             \
		fputc('\n', stderr);                                         \
		return SD_EXIT_USAGE;                                        \
	} while (0)

/* One line per test: its scope's groups and what it measures. */
static void print_groups(const struct sd_plan *p, int nranks)
{
	for (size_t i = 0; i < p->ntests; i++) {
		const struct sd_test_spec *t = &p->tests[i];
		const struct sd_coll *c = sd_coll_get(t->op);
		int k = t->group_size;
		if (k <= 0) {
			const char *how =
				strcmp(t->scope, "node") == 0
					? "a group per host"
				: strcmp(t->scope, "rail") == 0
					? "a group per local rank"
				: strcmp(t->scope, "gpu-pairs") == 0
					? "every pair of ranks inside each "
					  "host, in rounds"
					: "every pair of hosts, in rounds";
			printf("# test %zu: %s %s, scope %s: %s, from the "
			       "hosts at run time\n", i + 1, c->name,
			       sd_dtype_name(t->dtype), t->scope, how);
			continue;
		}
		int ng = nranks / k;
		size_t nsizes = sd_size_series(t->cfg.min_bytes,
					       t->cfg.max_bytes,
					       t->cfg.step_factor,
					       t->cfg.step_bytes, NULL,
					       SD_MAX_SIZES);
		int placements = c->has_in_place && t->cfg.in_place ? 2 : 1;
		printf("# test %zu: %s %s", i + 1, c->name,
		       sd_dtype_name(t->dtype));
		if (c->reduces)
			printf(" %s", sd_redop_name(t->redop));
		if (t->root >= 0)
			printf(" root %d", t->root);
		printf(", scope %s: %d group%s of %d (ranks", t->scope, ng,
		       ng == 1 ? "" : "s", k);
		for (int g = 0; g < ng && g < 8; g++) {
			char range[32];
			sd_rank_range(g * k, k, range, sizeof(range));
			printf("%s %s", g ? "," : "", range);
		}
		printf("%s), %zu size%s x %d placement%s\n",
		       ng > 8 ? ", ..." : "", nsizes, nsizes == 1 ? "" : "s",
		       placements, placements == 1 ? "" : "s");
	}
}

int cmd_plan(int argc, char **argv)
{
	long nranks = 8;
	int ch, sub, nargs = 0;
	const char *hint = NULL, *args[258];
	opterr = 0;
	optind = 1;
	/* options anywhere; the words are the subcommand and the files */
	for (;;) {
		int at = optind;
		ch = getopt_long(argc, argv, "+:h", plan_options, NULL);
		if (ch == -1) {
			if (optind >= argc)
				break;
			if (nargs == 258)
				PLAN_ERROR("too many plan files; at most 256");
			args[nargs++] = argv[optind++];
			continue;
		}
		switch (ch) {
		case 'n':
			if (sd_parse_int(optarg, 1, 1 << 20, &nranks))
				PLAN_ERROR("--ranks '%s' must be a number of "
					   "ranks from 1 to 1048576", optarg);
			break;
		case 'h':
			fputs(sd_help_plan, stdout);
			return sd_finish_stdout();
		case ':':
			PLAN_ERROR("option '%s' needs a value", argv[at]);
		default:
			PLAN_ERROR("unknown option '%s'; see 'shakedown help "
				   "plan'", argv[at]);
		}
	}
	if (nargs == 0)
		PLAN_ERROR("say check or expand, and a plan file; see "
			   "'shakedown help plan'");
	if (sd_name_lookup(subcommands, args[0], &sub, &hint))
		PLAN_ERROR("unknown subcommand '%s'%s%s%s; use check or expand",
			   args[0], hint ? "; did you mean '" : "",
			   hint ? hint : "", hint ? "'?" : "");
	if (nargs == 1)
		PLAN_ERROR("%s needs a plan file", args[0]);
	if (sub == PLAN_EXPAND && nargs > 2)
		PLAN_ERROR("expand takes one plan file, not %d", nargs - 1);
	for (int i = 1; i < nargs; i++) {
		struct sd_plan plan;
		char err[1024];
		if (sd_plan_build(args[i], NULL, (int)nranks, &plan, err,
				  sizeof(err))) {
			fprintf(stderr, "shakedown plan: %s\n", err);
			return SD_EXIT_USAGE;
		}
		if (sub == PLAN_CHECK) {
			printf("%s: ok: %zu test%s on %ld rank%s\n", args[i],
			       plan.ntests, plan.ntests == 1 ? "" : "s", nranks,
			       nranks == 1 ? "" : "s");
		} else {
			printf("# %s on %ld rank%s (hash %s)\n%s", args[i],
			       nranks, nranks == 1 ? "" : "s", plan.hash,
			       plan.text);
			print_groups(&plan, (int)nranks);
		}
		sd_plan_free(&plan);
	}
	return sd_finish_stdout();
}
