/*
 * unit_schedule.c - the schedules and the bisection (lib/schedule.c) for
 * every host count from 1 to 64 and uneven layouts: every pair meets
 * exactly once, nobody plays twice in a round, the round counts are the
 * least possible, and the bisection names exactly the planted culprits
 * within its bound.
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "schedule.h"
#include "tap.h"

#define MAXN 64

/* Check the tournament of n players; returns a reason or NULL. */
static const char *check_rr(int n)
{
	static char met[MAXN][MAXN];
	int seen[MAXN];
	memset(met, 0, sizeof(met));
	for (int r = 0; r < sd_rr_rounds(n); r++) {
		memset(seen, 0, sizeof(seen));
		int idle = 0;
		for (int s = 0; s < sd_rr_slots(n); s++) {
			int a, b;
			if (!sd_rr_pair(n, r, s, &a, &b)) {
				idle++;
				continue;
			}
			if (a < 0 || b >= n || a >= b)
				return "a pair out of range or not ordered";
			if (seen[a]++ || seen[b]++)
				return "a player twice in one round";
			if (met[a][b]++)
				return "a pair met twice";
		}
		if (idle != n % 2)
			return "an odd count has one idle slot, an even none";
	}
	for (int a = 0; a < n; a++)
		for (int b = a + 1; b < n; b++)
			if (!met[a][b])
				return "a pair never met";
	return NULL;
}

/* The oracle of the bisection: a set fails when it holds a culprit, or
 * (for the pair fault) both hosts of the planted pair. */
struct plant {
	int culprit[MAXN];
	int pair_a, pair_b; /* -1: none */
	int calls;
};

static int run_set(void *arg, const int *hosts, int n)
{
	struct plant *p = arg;
	int a = 0, b = 0;
	p->calls++;
	for (int i = 0; i < n; i++) {
		if (p->culprit[hosts[i]])
			return 0;
		a |= hosts[i] == p->pair_a;
		b |= hosts[i] == p->pair_b;
	}
	return !(a && b);
}

static int cmp_int(const void *x, const void *y)
{
	return *(const int *)x - *(const int *)y;
}

/* ---- adaptive node pairs, driven against planted faults ---- */

struct world {
	int n;
	unsigned char *bad_host;
	int link_a, link_b;      /* a bad link, or -1 */
	int noise_a, noise_b;    /* a pair that fails its first measurement */
};

/* What the adaptive driver makes of a world: every round checked (no host
 * twice, pairs of distinct hosts), the outcome of each pair from the
 * world.  Returns how many rounds; found[] the bad hosts; *dup rounds
 * with a host twice. */
static int drive(const struct world *w, const struct sd_adaptive_cfg *cfg,
		 unsigned char *found, int *dup, int *unresolved,
		 struct sd_adaptive **keep)
{
	struct sd_adaptive *a = sd_adaptive_new(cfg);
	int n = w->n;
	int *hg = malloc((size_t)n * sizeof(int));
	int *rp = malloc((size_t)n * sizeof(int));
	unsigned char *failed = NULL;
	unsigned char *seen = calloc((size_t)n, 1);
	int k;
	*dup = 0;
	while (a && hg && rp && seen && (k = sd_adaptive_next(a, hg, rp)) > 0) {
		int np;
		const struct sd_adaptive_pair *p = sd_adaptive_pairs(a, &np);
		memset(seen, 0, (size_t)n);
		for (int i = 0; i < k; i++) {
			const struct sd_adaptive_pair *x = &p[rp[i]];
			if (x->a == x->b || seen[x->a]++ || seen[x->b]++ ||
			    hg[x->a] != i || hg[x->b] != i)
				(*dup)++;
		}
		free(failed);
		failed = calloc((size_t)np, 1);
		for (int i = 0; failed && i < np; i++) {
			const struct sd_adaptive_pair *x = &p[i];
			failed[i] = w->bad_host[x->a] || w->bad_host[x->b] ||
				    (x->a == w->link_a && x->b == w->link_b) ||
				    (x->a == w->noise_a && x->b == w->noise_b &&
				     x->attempts == 1);
		}
		if (failed)
			sd_adaptive_outcome(a, failed);
	}
	int rounds = a ? sd_adaptive_rounds(a) : -1;
	if (a)
		sd_adaptive_bad(a, found, unresolved);
	if (keep)
		*keep = a;
	else
		sd_adaptive_free(a);
	free(hg);
	free(rp);
	free(failed);
	free(seen);
	return rounds;
}

/* The distinct partners of host h, and of them those that passed a pair
 * with another host. */
static void partners(const struct sd_adaptive *a, int h, int *all,
		     int *good)
{
	int np;
	const struct sd_adaptive_pair *p = sd_adaptive_pairs(a, &np);
	*all = *good = 0;
	for (int i = 0; i < np; i++) {
		if (p[i].a != h && p[i].b != h)
			continue;
		int x = p[i].a == h ? p[i].b : p[i].a, elsewhere = 0;
		for (int j = 0; j < np && !elsewhere; j++)
			elsewhere = !p[j].failed && (p[j].a == x ||
						     p[j].b == x) &&
				    p[j].a != h && p[j].b != h;
		(*all)++;
		*good += elsewhere;
	}
}

static void test_adaptive(void)
{
	/* healthy, 4,096 hosts, one more round: two rounds, two partners
	 * each, nothing named */
	int n = 4096, dup, unres;
	struct world w = { n, calloc((size_t)n, 1), -1, -1, -1, -1 };
	unsigned char *found = calloc((size_t)n, 1);
	struct sd_adaptive_cfg cfg = { .nhosts = n, .more = 1, .seed = 7,
				       .retries = 2 };
	struct sd_adaptive *a;
	int rounds = drive(&w, &cfg, found, &dup, &unres, &a);
	int few = 0, named = 0;
	for (int h = 0; h < n; h++) {
		int all, good;
		partners(a, h, &all, &good);
		few += all < 2;
		named += found[h];
	}
	int np;
	sd_adaptive_pairs(a, &np);
	ok(rounds == 2 && np == n && dup == 0 && few == 0 && named == 0,
	   "4,096 healthy hosts, node-pairs:adaptive:1: 2 rounds of 2,048 "
	   "disjoint pairs, every host with 2 partners, none named "
	   "(rounds %d, pairs %d, short %d, named %d)", rounds, np, few,
	   named);
	sd_adaptive_free(a);

	/* one bad host among 4,096: named alone, against good partners */
	w.bad_host[1234] = 1;
	rounds = drive(&w, &cfg, found, &dup, &unres, &a);
	named = 0;
	for (int h = 0; h < n; h++)
		named += found[h];
	int all, good;
	partners(a, 1234, &all, &good);
	ok(found[1234] && named == 1 && dup == 0 && good >= 2 && unres == 0,
	   "one bad host of 4,096: named alone in %d rounds, after %d "
	   "partners that pass elsewhere", rounds, good);
	sd_adaptive_free(a);
	w.bad_host[1234] = 0;

	/* the same with no further round: the suspects meet good partners */
	cfg.more = 0;
	w.bad_host[77] = 1;
	rounds = drive(&w, &cfg, found, &dup, &unres, &a);
	named = 0;
	for (int h = 0; h < n; h++)
		named += found[h];
	partners(a, 77, &all, &good);
	int first_partner = -1;
	for (int i = 0, k; i < (sd_adaptive_pairs(a, &k), k); i++) {
		const struct sd_adaptive_pair *p = &sd_adaptive_pairs(a, &k)[i];
		if (p->round == 1 && (p->a == 77 || p->b == 77))
			first_partner = p->a == 77 ? p->b : p->a;
	}
	int fa, fg;
	partners(a, first_partner, &fa, &fg);
	ok(found[77] && named == 1 && rounds == 2 && good >= 2 && fa >= 2,
	   "node-pairs:adaptive, one bad host: named alone in %d rounds (%d "
	   "good partners); its first partner met %d more", rounds, good,
	   fa - 1);
	sd_adaptive_free(a);
	w.bad_host[77] = 0;
	cfg.more = 1;

	/* a bad link between two healthy hosts: neither named; the pair
	 * measured 1 + retries times */
	w.link_a = 10;
	w.link_b = 2000;
	cfg.seed = 3;
	/* make them meet: a world of 8 hosts, where round one pairs them
	 * or a later round does */
	free(w.bad_host);
	free(found);
	int linked = 0, wrong = 0, total = 0;
	for (unsigned long long seed = 1; seed <= 40; seed++) {
		w.n = 8;
		w.bad_host = calloc(8, 1);
		found = calloc(8, 1);
		w.link_a = 1;
		w.link_b = 5;
		struct sd_adaptive_cfg c8 = { .nhosts = 8, .more = 1,
					      .seed = seed, .retries = 2 };
		rounds = drive(&w, &c8, found, &dup, &unres, &a);
		int k;
		const struct sd_adaptive_pair *p = sd_adaptive_pairs(a, &k);
		for (int i = 0; i < k; i++)
			if (p[i].a == 1 && p[i].b == 5) {
				linked++;
				wrong += !p[i].failed || p[i].attempts != 3;
			}
		for (int h = 0; h < 8; h++)
			wrong += found[h];
		wrong += dup;
		total++;
		sd_adaptive_free(a);
		free(w.bad_host);
		free(found);
	}
	ok(wrong == 0 && linked > 0,
	   "a bad link on 8 hosts, 40 seeds: no host named; where the pair "
	   "was met (%d seeds) it was measured 3 times and still failed",
	   linked);

	/* noise: a pair that fails once is measured again and passes */
	w.n = 16;
	w.bad_host = calloc(16, 1);
	found = calloc(16, 1);
	w.link_a = w.link_b = -1;
	struct sd_adaptive_cfg c16 = { .nhosts = 16, .more = 1, .seed = 9,
				       .retries = 2 };
	rounds = drive(&w, &c16, found, &dup, &unres, &a);
	int k;
	const struct sd_adaptive_pair *p = sd_adaptive_pairs(a, &k);
	w.noise_a = p[0].a;
	w.noise_b = p[0].b;
	sd_adaptive_free(a);
	rounds = drive(&w, &c16, found, &dup, &unres, &a);
	p = sd_adaptive_pairs(a, &k);
	named = 0;
	for (int h = 0; h < 16; h++)
		named += found[h];
	ok(named == 0 && !p[0].failed && p[0].attempts == 2 && k == 16 &&
	   rounds == 3,
	   "a pair that fails once by chance: once its hosts have passed "
	   "with others it is measured again and passes; nobody named (%d rounds, %d "
	   "pairs)", rounds, k);
	sd_adaptive_free(a);
	free(w.bad_host);
	free(found);
	w.noise_a = w.noise_b = -1;

	/* small and odd counts: every host meets min(1 + K, n - 1) partners
	 * when healthy; a bad host is named from 4 hosts up */
	int short_of = 0, missed = 0, blamed = 0, dups = 0;
	for (int nn = 2; nn <= 41; nn++)
		for (int more = 0; more <= 2; more++)
			for (int plant = 0; plant < 2; plant++) {
				w.n = nn;
				w.bad_host = calloc((size_t)nn, 1);
				found = calloc((size_t)nn, 1);
				int b = plant ? (nn * 5 + more) % nn : -1;
				if (b >= 0)
					w.bad_host[b] = 1;
				struct sd_adaptive_cfg c = {
					.nhosts = nn, .more = more,
					.seed = (unsigned)(nn * 31 + more),
					.retries = 2 };
				drive(&w, &c, found, &dup, &unres, &a);
				dups += dup;
				int want = 1 + more < nn - 1 ? 1 + more : nn - 1;
				for (int h = 0; h < nn; h++) {
					partners(a, h, &all, &good);
					if (!plant && all < want) {
						short_of++;
						printf("# n=%d K=%d host %d: %d "
						       "partners\n", nn, more, h,
						       all);
					}
					if (h == b && nn >= 4 && !found[h]) {
						missed++;
						printf("# n=%d K=%d: bad host %d "
						       "not named\n", nn, more,
						       h);
					}
					if (h != b && found[h])
						blamed++;
				}
				sd_adaptive_free(a);
				free(w.bad_host);
				free(found);
			}
	ok(short_of == 0 && dups == 0,
	   "2..41 hosts, K 0..2, healthy: every host meets min(1 + K, n - 1) "
	   "partners, nobody twice in a round");
	is_int(missed, 0, "a bad host among 4..41 is named");
	is_int(blamed, 0, "and no other host ever is");

	/* two hosts failing: no partner to isolate either; measured 1 +
	 * retries times, nobody named */
	w.n = 2;
	w.bad_host = calloc(2, 1);
	found = calloc(2, 1);
	w.link_a = 0;
	w.link_b = 1;
	struct sd_adaptive_cfg c2 = { .nhosts = 2, .more = 1, .seed = 1,
				      .retries = 2 };
	rounds = drive(&w, &c2, found, &dup, &unres, &a);
	p = sd_adaptive_pairs(a, &k);
	ok(rounds == 3 && k == 1 && p[0].attempts == 3 && !found[0] &&
	   !found[1], "2 hosts whose pair fails: 3 rounds of the one pair, "
	   "nobody named (unplaceable)");
	sd_adaptive_free(a);
	free(w.bad_host);
	free(found);

	/* the same seed, the same pairs; another seed, others */
	w.n = 64;
	w.bad_host = calloc(64, 1);
	found = calloc(64, 1);
	w.link_a = w.link_b = -1;
	w.bad_host[5] = 1;
	struct sd_adaptive_cfg cs = { .nhosts = 64, .more = 1, .seed = 11,
				      .retries = 2 };
	struct sd_adaptive *b2;
	drive(&w, &cs, found, &dup, &unres, &a);
	drive(&w, &cs, found, &dup, &unres, &b2);
	int k2;
	const struct sd_adaptive_pair *p2 = sd_adaptive_pairs(b2, &k2);
	p = sd_adaptive_pairs(a, &k);
	int same = k == k2;
	for (int i = 0; same && i < k; i++)
		same = p[i].a == p2[i].a && p[i].b == p2[i].b &&
		       p[i].round == p2[i].round && p[i].why == p2[i].why;
	sd_adaptive_free(b2);
	cs.seed = 12;
	drive(&w, &cs, found, &dup, &unres, &b2);
	p2 = sd_adaptive_pairs(b2, &k2);
	int differ = 0;
	for (int i = 0; i < k && i < k2; i++)
		differ |= p[i].a != p2[i].a || p[i].b != p2[i].b;
	ok(same && differ, "deterministic for a seed; another seed pairs "
	   "otherwise");
	sd_adaptive_free(a);
	sd_adaptive_free(b2);
	free(w.bad_host);
	free(found);

	/* switches: round 1 inside them, round 2 across */
	int sw[32];
	for (int h = 0; h < 32; h++)
		sw[h] = (h * 5) % 4; /* 4 switches of 8, interleaved */
	w.n = 32;
	w.bad_host = calloc(32, 1);
	found = calloc(32, 1);
	struct sd_adaptive_cfg ct = { .nhosts = 32, .more = 1, .seed = 5,
				      .retries = 2, .switch_of = sw };
	drive(&w, &ct, found, &dup, &unres, &a);
	p = sd_adaptive_pairs(a, &k);
	int inside = 0, across = 0;
	for (int i = 0; i < k; i++) {
		inside += p[i].round == 1 && sw[p[i].a] == sw[p[i].b];
		across += p[i].round == 2 && sw[p[i].a] != sw[p[i].b];
	}
	ok(k == 32 && inside == 16 && across == 16,
	   "4 switches of 8: round 1 pairs inside each switch (%d of 16), "
	   "round 2 across (%d of 16)", inside, across);
	ok(!strcmp(sd_pairing_name(p[0].why), "disjoint") &&
	   !strcmp(sd_pairing_name(p[20].why), "random") &&
	   !strcmp(sd_pairing_name(SD_PAIRING_REPAIR), "re-pair"),
	   "each pair says why it was chosen");
	sd_adaptive_free(a);
	free(w.bad_host);
	free(found);
}

int main(void)
{
	test_adaptive();
	/* round-robin tournaments */
	int bad = 0, wrong_rounds = 0;
	for (int n = 0; n <= MAXN; n++) {
		const char *why = check_rr(n);
		if (why) {
			bad++;
			printf("# n=%d: %s\n", n, why);
		}
		int want = n < 2 ? 0 : n % 2 ? n : n - 1;
		wrong_rounds += sd_rr_rounds(n) != want;
	}
	is_int(bad, 0, "tournaments of 0..64 players: every pair once, "
	       "nobody twice in a round");
	is_int(wrong_rounds, 0, "n-1 rounds for even n, n for odd n");
	ok(sd_rr_rounds(4096) == 4095 && sd_rr_slots(4096) == 2048,
	   "4,096 hosts: 4,095 rounds of 2,048 pairs, computed, not stored");

	/* ring: each host with its two neighbours, nobody twice in a round;
	 * random: every round a matching, the same for the same seed */
	bad = 0;
	int badr = 0, same = 1;
	for (int n = 2; n <= MAXN; n++) {
		static char met[MAXN][MAXN];
		memset(met, 0, sizeof(met));
		for (int r = 0; r < sd_ring_rounds(n); r++) {
			int seen[MAXN] = { 0 };
			for (int sl = 0; sl < sd_rr_slots(n); sl++) {
				int a, b;
				if (!sd_ring_pair(n, r, sl, &a, &b))
					continue;
				if (seen[a]++ || seen[b]++ || met[a][b]++ ||
				    !(b == a + 1 || (a == 0 && b == n - 1)))
					bad++;
			}
		}
		for (int i = 0; i < n; i++) {
			int a = i, b = (i + 1) % n;
			if (!met[a < b ? a : b][a < b ? b : a])
				bad++;
		}
		for (int r = 0; r < 5; r++) {
			int perm[MAXN], again[MAXN], seen[MAXN] = { 0 };
			sd_random_matching(n, r, 42, perm);
			sd_random_matching(n, r, 42, again);
			same &= memcmp(perm, again, sizeof(int) * n) == 0;
			for (int i = 0; i < n; i++)
				if (perm[i] < 0 || perm[i] >= n ||
				    seen[perm[i]]++)
					badr++;
		}
	}
	is_int(bad, 0, "ring on 2..64 hosts: every neighbour pair once, in "
	       "rounds where nobody plays twice");
	ok(sd_ring_rounds(2) == 1 && sd_ring_rounds(8) == 2 &&
	   sd_ring_rounds(9) == 3, "ring: 1, 2 or 3 rounds");
	is_int(badr, 0, "random: each round is a permutation, so its pairs "
	       "are a matching");
	ok(same, "random: the same seed gives the same partners");

	/* gpu-pairs on uneven layouts: 1..9 ranks per host over 1..12 hosts */
	bad = 0;
	for (int nh = 1; nh <= 12; nh++) {
		int host_of[200], nr = 0;
		for (int h = 0; h < nh; h++)
			for (int k = 0; k < 1 + (h * 7) % 9; k++)
				host_of[nr++] = h;
		struct sd_layout l = { nr, nh, host_of };
		struct sd_hosts hs;
		if (sd_hosts_build(&l, &hs)) {
			bad++;
			continue;
		}
		static char met[200][200];
		memset(met, 0, sizeof(met));
		for (int r = 0; r < sd_gpu_pairs_rounds(&hs); r++) {
			char seen[200] = { 0 };
			for (int h = 0; h < nh; h++)
				for (int s = 0; s < sd_rr_slots(hs.count[h]);
				     s++) {
					int a, b;
					if (!sd_gpu_pairs_pair(&hs, h, r, s, &a,
							       &b))
						continue;
					if (host_of[a] != h || host_of[b] != h ||
					    seen[a]++ || seen[b]++ || met[a][b]++)
						bad++;
				}
		}
		for (int a = 0; a < nr; a++)
			for (int b = a + 1; b < nr; b++)
				if (host_of[a] == host_of[b] && !met[a][b])
					bad++;
		sd_hosts_free(&hs);
	}
	is_int(bad, 0, "gpu-pairs on uneven hosts: every pair inside a host "
	       "once, no rank twice in a round, never across hosts");

	struct sd_layout badl = { 2, 1, (const int[]){ 0, 3 } };
	struct sd_hosts hs;
	ok(sd_hosts_build(&badl, &hs) == -1, "a rank on a host out of range "
	   "is refused");

	/* bisection: 0, 1 and 2 culprits, and a pair fault, for 1..64 hosts */
	int missed = 0, over = 0, cases = 0;
	for (int n = 1; n <= MAXN; n++) {
		int bound = (int)ceil(log2((double)n)) + 1;
		for (int kind = 0; kind < 4; kind++) {
			struct plant p = { .pair_a = -1, .pair_b = -1 };
			int want[MAXN], nwant = 0;
			if (kind == 1 || kind == 2)
				p.culprit[(n * 7 + 3) % n] = 1;
			if (kind == 2)
				p.culprit[(n * 3 + 1) % n] = 1;
			if (kind == 3 && n >= 2) {
				p.pair_a = n / 3;
				p.pair_b = n - 1;
			}
			for (int h = 0; h < n; h++)
				if (p.culprit[h])
					want[nwant++] = h;
			int got[MAXN], ngot, rounds;
			int rc = sd_bisect(n, run_set, &p, bound, got, &ngot,
					   &rounds);
			qsort(got, (size_t)ngot, sizeof(int), cmp_int);
			cases++;
			if (kind == 3 && n >= 2) {
				/* named: a set holding both halves' hosts */
				int has_a = 0, has_b = 0;
				for (int i = 0; i < ngot; i++) {
					has_a |= got[i] == p.pair_a;
					has_b |= got[i] == p.pair_b;
				}
				missed += rc != 0 || !has_a || !has_b;
			} else {
				missed += rc != 0 || ngot != nwant ||
					  memcmp(got, want,
						 (size_t)ngot * sizeof(int));
			}
			over += rounds > bound;
		}
	}
	printf("# %d bisections\n", cases);
	is_int(missed, 0, "bisection names exactly the planted culprits (and a "
	       "fault that needs two hosts as the set holding both)");
	is_int(over, 0, "within ceil(log2 n) + 1 rounds");

	struct plant p = { .pair_a = -1, .pair_b = -1 };
	p.culprit[37] = 1;
	int got[MAXN], ngot, rounds;
	int rc = sd_bisect(64, run_set, &p, 2, got, &ngot, &rounds);
	ok(rc == 1 && rounds == 2 && ngot > 1 && ngot <= 32,
	   "out of rounds: says so and names what still fails, whole");
	return done_testing();
}
