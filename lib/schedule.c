/*
 * schedule.c - round-robin schedules and bisection (see schedule.h).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "schedule.h"

int sd_hosts_build(const struct sd_layout *l, struct sd_hosts *out)
{
	memset(out, 0, sizeof(*out));
	out->nhosts = l->nhosts;
	out->count = calloc((size_t)(l->nhosts > 0 ? l->nhosts : 1),
			    sizeof(*out->count));
	out->ranks = calloc((size_t)(l->nhosts > 0 ? l->nhosts : 1),
			    sizeof(*out->ranks));
	if (!out->count || !out->ranks)
		goto fail;
	for (int r = 0; r < l->nranks; r++) {
		int h = l->host_of[r];
		if (h < 0 || h >= l->nhosts)
			goto fail;
		out->count[h]++;
	}
	for (int h = 0; h < l->nhosts; h++) {
		out->ranks[h] = calloc((size_t)(out->count[h] ? out->count[h] : 1),
				       sizeof(int));
		if (!out->ranks[h])
			goto fail;
		if (out->count[h] > out->max_count)
			out->max_count = out->count[h];
		out->count[h] = 0;
	}
	for (int r = 0; r < l->nranks; r++) {
		int h = l->host_of[r];
		out->ranks[h][out->count[h]++] = r;
	}
	return 0;
fail:
	sd_hosts_free(out);
	return -1;
}

void sd_hosts_free(struct sd_hosts *h)
{
	for (int i = 0; h->ranks && i < h->nhosts; i++)
		free(h->ranks[i]);
	free(h->ranks);
	free(h->count);
	memset(h, 0, sizeof(*h));
}

int sd_rr_rounds(int n)
{
	return n < 2 ? 0 : n % 2 ? n : n - 1;
}

int sd_rr_slots(int n)
{
	return n < 2 ? 0 : (n + 1) / 2;
}

int sd_rr_pair(int n, int round, int slot, int *a, int *b)
{
	/* an odd n plays as n+1 with a phantom: its partner is idle */
	int m = n % 2 ? n + 1 : n;
	if (n < 2 || round < 0 || round >= m - 1 || slot < 0 ||
	    slot >= m / 2)
		return 0;
	int x, y;
	if (slot == 0) {
		x = round;
		y = m - 1; /* the fixed player of the circle */
	} else {
		x = (round + slot) % (m - 1);
		y = (round - slot + (m - 1)) % (m - 1);
	}
	if (x >= n || y >= n)
		return 0; /* the phantom's game: one player sits out */
	*a = x < y ? x : y;
	*b = x < y ? y : x;
	return 1;
}

int sd_ring_rounds(int n)
{
	return n < 2 ? 0 : n == 2 ? 1 : n % 2 ? 3 : 2;
}

int sd_ring_pair(int n, int round, int slot, int *a, int *b)
{
	/* edge i joins i and i+1 (mod n); even n: the even edges, then the
	 * odd ones; odd n: the even edges but the last, the odd ones, then
	 * the last (n-1 and 0) on its own */
	int i;
	if (n < 2 || slot < 0)
		return 0;
	if (n == 2) {
		if (round != 0 || slot != 0)
			return 0;
		i = 0;
	} else if (round == 0 || round == 1) {
		i = 2 * slot + round;
		if (i >= n - (n % 2))
			return 0;
	} else if (round == 2 && n % 2 && slot == 0) {
		i = n - 1;
	} else {
		return 0;
	}
	int x = i, y = (i + 1) % n;
	*a = x < y ? x : y;
	*b = x < y ? y : x;
	return 1;
}

/* splitmix64: a small, good generator, the same everywhere */
static unsigned long long mix(unsigned long long *s)
{
	unsigned long long z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

void sd_random_matching(int n, int round, unsigned long long seed,
			int *perm)
{
	unsigned long long st = seed ^ (0x5d0f00d5ull * (unsigned)(round + 1));
	for (int i = 0; i < n; i++)
		perm[i] = i;
	for (int i = n - 1; i > 0; i--) {
		int j = (int)(mix(&st) % (unsigned long long)(i + 1));
		int t = perm[i];
		perm[i] = perm[j];
		perm[j] = t;
	}
}

int sd_gpu_pairs_rounds(const struct sd_hosts *h)
{
	int most = 0;
	for (int i = 0; i < h->nhosts; i++)
		if (sd_rr_rounds(h->count[i]) > most)
			most = sd_rr_rounds(h->count[i]);
	return most;
}

int sd_gpu_pairs_pair(const struct sd_hosts *h, int host, int round,
		      int slot, int *a, int *b)
{
	int x, y;
	if (host < 0 || host >= h->nhosts ||
	    !sd_rr_pair(h->count[host], round, slot, &x, &y))
		return 0;
	*a = h->ranks[host][x];
	*b = h->ranks[host][y];
	return 1;
}

/* A set of the bisection: hosts lo..hi-1; `sibling` is the index of the
 * other half of the same parent in the same round, or -1. */
struct bset {
	int lo, hi;
	int sibling;
};

static void name_range(int lo, int hi, int *culprits, int *n)
{
	for (int h = lo; h < hi; h++)
		culprits[(*n)++] = h;
}

int sd_bisect(int nhosts, sd_bisect_fn run, void *arg, int max_rounds,
	      int *culprits, int *nculprits, int *rounds)
{
	int *ids = malloc((size_t)(nhosts > 0 ? nhosts : 1) * sizeof(int));
	struct bset *cur = malloc((size_t)(nhosts > 0 ? nhosts : 1) *
				  2 * sizeof(*cur));
	struct bset *next = malloc((size_t)(nhosts > 0 ? nhosts : 1) *
				   2 * sizeof(*next));
	int *res = malloc((size_t)(nhosts > 0 ? nhosts : 1) * 2 * sizeof(int));
	int ncur = 0, rc = 0;
	*nculprits = 0;
	*rounds = 0;
	if (!ids || !cur || !next || !res) {
		rc = -1;
		goto out;
	}
	for (int h = 0; h < nhosts; h++)
		ids[h] = h;
	if (nhosts > 0)
		cur[ncur++] = (struct bset){ 0, nhosts, -1 };
	while (ncur > 0) {
		if (*rounds >= max_rounds) {
			/* out of rounds: what still fails is named whole; a
			 * pair of halves came from one failing parent */
			for (int i = 0; i < ncur; i++) {
				int s = cur[i].sibling;
				if (s >= 0 && s < i)
					continue;
				int hi = s > i ? cur[s].hi : cur[i].hi;
				name_range(cur[i].lo, hi, culprits, nculprits);
			}
			rc = 1;
			break;
		}
		(*rounds)++;
		for (int i = 0; i < ncur; i++) {
			res[i] = run(arg, ids + cur[i].lo, cur[i].hi - cur[i].lo);
			if (res[i] < 0) {
				rc = -1;
				goto out;
			}
		}
		int nnext = 0;
		for (int i = 0; i < ncur; i++) {
			int s = cur[i].sibling;
			if (s >= 0 && res[i] && res[s]) {
				/* the parent failed, both halves pass: a fault
				 * that needs both; name the parent once */
				if (s > i)
					name_range(cur[i].lo, cur[s].hi, culprits,
						   nculprits);
				continue;
			}
			if (res[i])
				continue;
			int lo = cur[i].lo, hi = cur[i].hi;
			if (hi - lo == 1) {
				culprits[(*nculprits)++] = lo;
				continue;
			}
			int mid = lo + (hi - lo) / 2;
			next[nnext] = (struct bset){ lo, mid, nnext + 1 };
			next[nnext + 1] = (struct bset){ mid, hi, nnext };
			nnext += 2;
		}
		struct bset *t = cur;
		cur = next;
		next = t;
		ncur = nnext;
	}
out:
	free(ids);
	free(cur);
	free(next);
	free(res);
	return rc;
}
