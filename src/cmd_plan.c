/*
 * cmd_plan.c - `shakedown plan check|expand`: read plan files without a
 * cluster, through the same lib/plan.c a run uses, and say what is wrong
 * (FILE:LINE, exit status 2) or what they expand to.
 */
#include "config.h"

#include <getopt.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "names.h"
#include "plan.h"
#include "runner.h"
#include "schedule.h"
#include "transport.h"
#include "shakedown/coll.h"
#include "shakedown/pattern.h"
#include "ranks.h"
#include "tool.h"

enum { PLAN_CHECK, PLAN_EXPAND };

static const struct sd_name_row subcommands[] = {
	{ "check", PLAN_CHECK }, { "expand", PLAN_EXPAND }, { NULL, 0 }
};

static const struct option plan_options[] = {
	{ "ranks", required_argument, NULL, 'n' },
	{ "nodes", required_argument, NULL, 'N' },
	{ "ranks-per-node", required_argument, NULL, 'R' },
	{ "busbw", required_argument, NULL, 'B' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 }
};

/* The job a plan is expanded for: hosts of ranks_per_host ranks each. */
struct job {
	int hosts, ranks_per_host;
	double busbw_gbs, latency_us; /* the assumptions of the estimate */
};

/* Seconds one test takes on `k`-rank groups, `rounds` rounds after one
 * another (the groups of a round side by side): every size and placement,
 * warm-up, timed and check operations, each the latency plus its bytes
 * over the bus bandwidth (nccl-tests' busbw = bytes x factor / time). */
static double estimate_s(const struct sd_test_spec *t, int k, int rounds,
			 const struct job *j, size_t *nsizes_out, int *pl_out)
{
	const struct sd_coll *c = sd_coll_get(t->op);
	size_t ts = sd_dtype_size(t->dtype), n = 0;
	int pl = c->has_in_place && t->cfg.in_place ? 2 : 1;
	double per_size_ops = (double)t->cfg.warmup + (double)t->cfg.iters +
			      (double)t->cfg.check_passes;
	double total = 0;
	size_t count = sd_size_series(t->cfg.min_bytes, t->cfg.max_bytes,
				      t->cfg.step_factor, t->cfg.step_bytes,
				      NULL, SD_MAX_SIZES);
	uint64_t *sizes = malloc((count ? count : 1) * sizeof(*sizes));
	if (sizes)
		sd_size_series(t->cfg.min_bytes, t->cfg.max_bytes,
			       t->cfg.step_factor, t->cfg.step_bytes, sizes,
			       count);
	for (size_t i = 0; sizes && k > 0 && i < count; i++) {
		size_t sc, rc;
		sd_coll_counts(c, (size_t)(sizes[i] / ts), ts, k, &sc, &rc);
		if (!sc && !rc)
			continue; /* as a run: too small to split */
		double bytes = (double)sd_coll_size_bytes(sc, rc, ts);
		double op_s = j->latency_us * 1e-6 +
			      bytes * sd_factor_value(c->busbw, k) /
				      (j->busbw_gbs * 1e9);
		total += pl * per_size_ops * op_s;
		n++;
	}
	free(sizes);
	*nsizes_out = n;
	*pl_out = pl;
	return total * rounds;
}

/* Seconds as "about N s", with " (h:mm)" rounded up to the minute from a
 * minute on: "about 12 s", "about 7080 s (1:58)". */
static const char *about(double s, char *buf, size_t len)
{
	long m = (long)((s + 59.999) / 60);
	if (s < 60)
		snprintf(buf, len, "about %.0f s", s);
	else
		snprintf(buf, len, "about %.0f s (%ld:%02ld)", s, m / 60,
			 m % 60);
	return buf;
}

/* One line per test: its scope's shape on the job, what it measures and
 * about how long it takes; then the whole plan's estimate. */
static int print_shapes(const struct sd_plan *p, const struct job *j)
{
	int nranks = j->hosts * j->ranks_per_host;
	int *host_of = malloc((size_t)nranks * sizeof(int));
	struct sd_hosts hs;
	if (!host_of)
		return -1;
	for (int q = 0; q < nranks; q++)
		host_of[q] = q / j->ranks_per_host;
	struct sd_layout l = { nranks, j->hosts, host_of };
	if (sd_hosts_build(&l, &hs)) {
		free(host_of);
		return -1;
	}
	double all_s = 0;
	char hm[64];
	for (size_t i = 0; i < p->ntests; i++) {
		const struct sd_test_spec *t = &p->tests[i];
		const struct sd_coll *c = sd_coll_get(t->op);
		struct sd_scope_shape sh;
		size_t nsizes;
		int pl;
		sd_scope_shape(t, &hs, nranks, &sh);
		/* adaptive pairs: planned as if some pair fails, as one
		 * will in a cluster of hundreds of nodes */
		int timed = sh.rounds + sh.isolate;
		double s = estimate_s(t, sh.group_size, timed, j, &nsizes,
				      &pl);
		char variant[64];
		sd_transport_variant(t, variant, sizeof(variant));
		/* a test of its own path starts worker processes each round:
		 * a second or two (a CUDA context and a communicator) */
		if (variant[0])
			s += SD_WORKER_START_S * timed;
		all_s += s;
		printf("# test %zu: %s %s", i + 1, c->name,
		       sd_dtype_name(t->dtype));
		if (c->reduces)
			printf(" %s", sd_redop_name(t->redop));
		if (t->root >= 0)
			printf(" root %d", t->root);
		if (variant[0])
			printf(" via %s", variant);
		if (!sh.rounds) {
			printf(", scope %s: nothing to pair (skipped)\n",
			       t->scope);
			continue;
		}
		printf(", scope %s: %d round%s of %d group%s of %d", t->scope,
		       sh.rounds, sh.rounds == 1 ? "" : "s", sh.groups,
		       sh.groups == 1 ? "" : "s", sh.group_size);
		if (sh.isolate)
			printf(" (+%d to isolate a failed pair, %d in all at "
			       "most)", sh.isolate, sh.most);
		if (sh.pairs) {
			long long all = (long long)j->hosts * (j->hosts - 1) / 2;
			int random = strncmp(t->scope, "node-pairs:random", 17) ==
				     0;
			printf(", %s%lld of %lld node pairs (%.3g%%), %s%d "
			       "partner%s a node", random ? "up to " : "",
			       sh.pairs, all, 100.0 * (double)sh.pairs /
						      (double)all,
			       random ? "up to " : "", sh.partners,
			       sh.partners == 1 ? "" : "s");
		}
		printf(", %zu size%s x %d placement%s, %s\n",
		       nsizes, nsizes == 1 ? "" : "s", pl, pl == 1 ? "" : "s",
		       about(s, hm, sizeof(hm)));
	}
	printf("# %s in all, at %g GB/s bus bandwidth and %g us "
	       "per operation\n", about(all_s, hm, sizeof(hm)),
	       j->busbw_gbs, j->latency_us);
	sd_hosts_free(&hs);
	free(host_of);
	return 0;
}

int cmd_plan(int argc, char **argv)
{
	long nranks = 8, nodes = 0, per_node = 0;
	double busbw = 25;
	int ch, sub, nargs = 0;
	const char *hint = NULL, *args[258];
	opterr = 0;
	optind = 1;
	/* options anywhere; the words are the subcommand and the files */
	for (;;) {
		int at = optind;
		char oerr[256];
		ch = sd_getopt(argc, argv, "+:h", plan_options, oerr,
			       sizeof(oerr));
		if (ch == SD_OPT_REFUSED)
			return sd_usage_error("plan", "%s", oerr);
		if (ch == -1) {
			if (optind >= argc)
				break;
			if (nargs == 258)
				return sd_usage_error("plan", "too many plan files; at most 256");
			args[nargs++] = argv[optind++];
			continue;
		}
		switch (ch) {
		case 'n':
			if (sd_parse_int(optarg, 1, 1 << 20, &nranks))
				return sd_usage_error("plan", "--ranks '%s' must be a number of "
					   "ranks from 1 to 1048576", optarg);
			break;
		case 'N':
		case 'R':
			if (sd_parse_int(optarg, 1, 1 << 20,
					 ch == 'N' ? &nodes : &per_node))
				return sd_usage_error("plan", "%s '%s' must be a number from 1 to "
					   "1048576", argv[at], optarg);
			break;
		case 'B':
			if (sd_parse_seconds(optarg, &busbw))
				return sd_usage_error("plan", "--busbw '%s' must be a positive "
					   "number of GB/s", optarg);
			break;
		case 'h':
			sd_help_print(stdout, sd_help_plan);
			return sd_finish_stdout();
		case ':':
			return sd_usage_error("plan", "option '%s' needs a value", argv[at]);
		default:
			return sd_usage_error("plan", "unknown option '%s'; see 'shakedown help "
				   "plan'", argv[at]);
		}
	}
	if (nargs == 0)
		return sd_usage_error("plan", "say check or expand, and a plan file; see "
			   "'shakedown help plan'");
	/* --nodes and --ranks-per-node describe the job; --ranks is one
	 * host of that many */
	if (nodes || per_node) {
		nodes = nodes ? nodes : 1;
		per_node = per_node ? per_node : 1;
		if (nodes * per_node > 1 << 20)
			return sd_usage_error("plan", "--nodes x --ranks-per-node is more than "
				   "1048576 ranks");
		nranks = nodes * per_node;
	} else {
		nodes = 1;
		per_node = nranks;
	}
	struct job job = { (int)nodes, (int)per_node, busbw, 20 };
	if (sd_name_lookup(subcommands, args[0], &sub, &hint))
		return sd_usage_error("plan", "unknown subcommand '%s'; %s%s%s", args[0],
			   hint ? "did you mean '" : "use check or expand",
			   hint ? hint : "", hint ? "'?" : "");
	if (nargs == 1)
		return sd_usage_error("plan", "%s needs a plan file", args[0]);
	if (sub == PLAN_EXPAND && nargs > 2)
		return sd_usage_error("plan", "expand takes one plan file, not %d", nargs - 1);
	for (int i = 1; i < nargs; i++) {
		struct sd_plan plan;
		char err[1024], path[4096];
		if (sd_plan_build(sd_plan_resolve(args[i], path, sizeof(path)),
				  NULL, (int)nranks, &plan, err, sizeof(err))) {
			fprintf(stderr, "shakedown plan: %s\n", err);
			return SD_EXIT_USAGE;
		}
		if (sub == PLAN_CHECK) {
			printf("%s: ok: %zu test%s on %ld rank%s\n", args[i],
			       plan.ntests, plan.ntests == 1 ? "" : "s", nranks,
			       nranks == 1 ? "" : "s");
		} else {
			printf("# %s on %ld rank%s (%ld host%s of %ld) (hash "
			       "%s)\n%s", args[i], nranks, nranks == 1 ? "" : "s",
			       nodes, nodes == 1 ? "" : "s", per_node, plan.hash,
			       plan.text);
			if (print_shapes(&plan, &job)) {
				sd_plan_free(&plan);
				fprintf(stderr, "shakedown plan: out of memory\n");
				return SD_EXIT_ENV;
			}
		}
		sd_plan_free(&plan);
	}
	return sd_finish_stdout();
}
