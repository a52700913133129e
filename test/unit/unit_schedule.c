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

int main(void)
{
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
