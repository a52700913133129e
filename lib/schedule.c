/*
 * schedule.c - round-robin schedules and bisection (see schedule.h).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "schedule.h"
#include "sink.h"

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

int sd_bisection_init(struct sd_bisection *b, int nhosts, int max_rounds)
{
	size_t cap = (size_t)(nhosts > 0 ? nhosts : 1) * 2;
	memset(b, 0, sizeof(*b));
	b->nhosts = nhosts;
	b->max_rounds = max_rounds;
	b->sets = malloc(cap * sizeof(*b->sets));
	b->failing = malloc(cap * sizeof(*b->failing));
	b->named = malloc(cap * sizeof(*b->named));
	if (!b->sets || !b->failing || !b->named) {
		sd_bisection_free(b);
		return -1;
	}
	if (nhosts > 0)
		b->failing[b->nfailing++] = (struct sd_bisect_set){ 0, nhosts,
								    -1 };
	return 0;
}

static void name_set(struct sd_bisection *b, int lo, int hi,
		     enum sd_bisect_why why)
{
	b->named[b->nnamed++] = (struct sd_bisect_named){ lo, hi, why };
}

const struct sd_bisect_set *sd_bisection_round(struct sd_bisection *b,
					       int *n)
{
	b->nsets = 0;
	for (int i = 0; i < b->nfailing; i++) {
		int lo = b->failing[i].lo, hi = b->failing[i].hi;
		if (hi - lo == 1) {
			name_set(b, lo, hi, SD_BISECT_ALONE);
		} else if (b->rounds >= b->max_rounds) {
			name_set(b, lo, hi, SD_BISECT_UNRESOLVED);
			b->out_of_rounds = 1;
		} else {
			int mid = lo + (hi - lo) / 2;
			b->sets[b->nsets] = (struct sd_bisect_set){
				lo, mid, b->nsets + 1 };
			b->sets[b->nsets + 1] = (struct sd_bisect_set){
				mid, hi, b->nsets };
			b->nsets += 2;
		}
	}
	b->nfailing = 0;
	if (b->nsets)
		b->rounds++;
	*n = b->nsets;
	return b->sets;
}

void sd_bisection_result(struct sd_bisection *b, const unsigned char *failed)
{
	for (int i = 0; i < b->nsets; i++) {
		int s = b->sets[i].sibling;
		if (s >= 0 && (failed[i] == SD_BISECT_NOT_RUN ||
			       failed[s] == SD_BISECT_NOT_RUN)) {
			/* a half could not run: the parent is as far as it
			 * goes */
			if (s > i)
				name_set(b, b->sets[i].lo, b->sets[s].hi,
					 SD_BISECT_TOO_SMALL);
			continue;
		}
		if (s >= 0 && !failed[i] && !failed[s]) {
			/* the parent failed, both halves pass: a fault that
			 * needs both; name the parent once */
			if (s > i)
				name_set(b, b->sets[i].lo, b->sets[s].hi,
					 SD_BISECT_WHOLE);
			continue;
		}
		if (failed[i])
			b->failing[b->nfailing++] = b->sets[i];
	}
	b->nsets = 0;
}

void sd_bisection_free(struct sd_bisection *b)
{
	free(b->sets);
	free(b->failing);
	free(b->named);
	b->sets = b->failing = NULL;
	b->named = NULL;
}

int sd_bisect(int nhosts, sd_bisect_fn run, void *arg, int max_rounds,
	      int *culprits, int *nculprits, int *rounds)
{
	int *ids = malloc((size_t)(nhosts > 0 ? nhosts : 1) * sizeof(int));
	unsigned char *failed = malloc((size_t)(nhosts > 0 ? nhosts : 1) * 2);
	struct sd_bisection b;
	int rc = 0;
	*nculprits = 0;
	*rounds = 0;
	if (!ids || !failed || sd_bisection_init(&b, nhosts, max_rounds - 1)) {
		free(ids);
		free(failed);
		return -1;
	}
	for (int h = 0; h < nhosts; h++)
		ids[h] = h;
	/* round 1: the whole set */
	if (nhosts > 0 && max_rounds > 0) {
		*rounds = 1;
		int whole = run(arg, ids, nhosts);
		if (whole < 0)
			rc = -1;
		else if (whole)
			b.nfailing = 0; /* it passes: nothing to find */
	}
	if (max_rounds <= 0) {
		/* no round at all: the whole set is what is known */
		for (int h = 0; h < nhosts; h++)
			culprits[(*nculprits)++] = h;
		sd_bisection_free(&b);
		free(ids);
		free(failed);
		return nhosts > 0;
	}
	int n;
	const struct sd_bisect_set *sets;
	while (!rc && (sets = sd_bisection_round(&b, &n), n > 0)) {
		for (int i = 0; i < n && !rc; i++) {
			int res = run(arg, ids + sets[i].lo, sets[i].hi - sets[i].lo);
			if (res < 0)
				rc = -1;
			failed[i] = res == 0;
		}
		if (!rc)
			sd_bisection_result(&b, failed);
	}
	if (!rc) {
		*rounds += b.rounds;
		for (int k = 0; k < b.nnamed; k++)
			for (int h = b.named[k].lo; h < b.named[k].hi; h++)
				culprits[(*nculprits)++] = h;
		rc = b.out_of_rounds;
	}
	sd_bisection_free(&b);
	free(ids);
	free(failed);
	return rc;
}

/* Rank r and the host it is on, for sorting by host. */
struct on_host {
	const char *host;
	int rank;
};

static int by_host(const void *a, const void *b)
{
	const struct on_host *x = a, *y = b;
	int c = strcmp(x->host, y->host);
	return c ? c : x->rank - y->rank;
}

int *sd_number_hosts(const struct sd_rank_info *ranks, int n)
{
	struct on_host *v = malloc((size_t)n * sizeof(*v));
	int *first = malloc((size_t)n * sizeof(int));
	int *host_of = malloc((size_t)n * sizeof(int));
	if (!v || !first || !host_of) {
		free(v);
		free(first);
		free(host_of);
		return NULL;
	}
	for (int q = 0; q < n; q++)
		v[q] = (struct on_host){ ranks[q].host, q };
	qsort(v, (size_t)n, sizeof(*v), by_host);
	for (int i = 0; i < n; i++) /* the lowest rank of each host */
		first[v[i].rank] = i && strcmp(v[i].host, v[i - 1].host) == 0
					   ? first[v[i - 1].rank]
					   : v[i].rank;
	for (int q = 0, next = 0; q < n; q++)
		host_of[q] = first[q] == q ? next++ : host_of[first[q]];
	free(v);
	free(first);
	return host_of;
}
