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

/* ---- adaptive node pairs ---- */

const char *sd_pairing_name(enum sd_pairing p)
{
	static const char *const w[] = { "disjoint", "random", "re-pair",
					 "fill", "retry" };
	return (unsigned)p < 5 ? w[p] : "?";
}

int sd_adaptive_max_rounds(int more, int retries)
{
	return 1 + more + 2 * (retries + 1) + 4;
}

struct sd_adaptive {
	struct sd_adaptive_cfg c;
	int *switch_of;           /* a copy, or NULL */
	int cover;                /* partners every host is to meet */
	int rounds;
	struct sd_adaptive_pair *p;
	int np, cap;
	int **hp, *hn, *hcap;     /* each host's pairs (indices) */
	/* the state of the last outcome, per host */
	unsigned char *bad, *suspect, *good, *wants, *given_up, *used;
	int *gp;                  /* partners met that pass elsewhere */
	int *perm;
	int done;
};

void sd_adaptive_free(struct sd_adaptive *a)
{
	if (!a)
		return;
	for (int h = 0; a->hp && h < a->c.nhosts; h++)
		free(a->hp[h]);
	free(a->hp);
	free(a->hn);
	free(a->hcap);
	free(a->p);
	free(a->switch_of);
	free(a->bad);
	free(a->suspect);
	free(a->good);
	free(a->wants);
	free(a->given_up);
	free(a->used);
	free(a->gp);
	free(a->perm);
	free(a);
}

struct sd_adaptive *sd_adaptive_new(const struct sd_adaptive_cfg *cfg)
{
	if (cfg->nhosts < 0)
		return NULL;
	struct sd_adaptive *a = calloc(1, sizeof(*a));
	if (!a)
		return NULL;
	a->c = *cfg;
	int n = cfg->nhosts;
	size_t m = (size_t)(n > 0 ? n : 1);
	if (a->c.max_rounds <= 0)
		a->c.max_rounds = sd_adaptive_max_rounds(cfg->more,
							 cfg->retries);
	a->cover = 1 + (cfg->more > 0 ? cfg->more : 0);
	if (a->cover > n - 1)
		a->cover = n - 1;
	a->hp = calloc(m, sizeof(*a->hp));
	a->hn = calloc(m, sizeof(int));
	a->hcap = calloc(m, sizeof(int));
	a->bad = calloc(m, 1);
	a->suspect = calloc(m, 1);
	a->good = calloc(m, 1);
	a->wants = calloc(m, 1);
	a->given_up = calloc(m, 1);
	a->used = calloc(m, 1);
	a->gp = calloc(m, sizeof(int));
	a->perm = calloc(m, sizeof(int));
	if (cfg->switch_of && (a->switch_of = malloc(m * sizeof(int))))
		memcpy(a->switch_of, cfg->switch_of, (size_t)n * sizeof(int));
	a->c.switch_of = NULL;
	if (!a->hp || !a->hn || !a->hcap || !a->bad || !a->suspect ||
	    !a->good || !a->wants || !a->given_up || !a->used || !a->gp ||
	    !a->perm || (cfg->switch_of && !a->switch_of)) {
		sd_adaptive_free(a);
		return NULL;
	}
	return a;
}

const struct sd_adaptive_pair *sd_adaptive_pairs(const struct sd_adaptive *a,
						 int *n)
{
	*n = a->np;
	return a->p;
}

int sd_adaptive_rounds(const struct sd_adaptive *a)
{
	return a->rounds;
}

static int met(const struct sd_adaptive *a, int h, int x)
{
	for (int k = 0; k < a->hn[h]; k++) {
		const struct sd_adaptive_pair *p = &a->p[a->hp[h][k]];
		if (p->a == x || p->b == x)
			return 1;
	}
	return 0;
}

static int sw(const struct sd_adaptive *a, int h)
{
	return a->switch_of ? a->switch_of[h] : -1;
}

/* A new pair of hosts x and y in the round being built: group *ng. */
static int add_pair(struct sd_adaptive *a, int x, int y, enum sd_pairing why,
		    int *host_group, int *round_pairs, int *ng)
{
	if (a->np == a->cap) {
		int cap = a->cap ? a->cap * 2 : 64;
		void *q = realloc(a->p, (size_t)cap * sizeof(*a->p));
		if (!q)
			return -1;
		a->p = q;
		a->cap = cap;
	}
	int ends[2] = { x, y };
	for (int k = 0; k < 2; k++) {
		int h = ends[k];
		if (a->hn[h] == a->hcap[h]) {
			int cap = a->hcap[h] ? a->hcap[h] * 2 : 4;
			void *q = realloc(a->hp[h], (size_t)cap * sizeof(int));
			if (!q)
				return -1;
			a->hp[h] = q;
			a->hcap[h] = cap;
		}
	}
	a->p[a->np] = (struct sd_adaptive_pair){
		.a = x < y ? x : y, .b = x < y ? y : x, .round = a->rounds + 1,
		.slot = *ng, .attempts = 1, .why = why };
	a->hp[x][a->hn[x]++] = a->np;
	a->hp[y][a->hn[y]++] = a->np;
	a->used[x] = a->used[y] = 1;
	host_group[x] = host_group[y] = *ng;
	round_pairs[(*ng)++] = a->np++;
	return 0;
}

/* Hosts in a random order of the round (seeded), stably by switch when
 * by_switch. */
static void order_hosts(struct sd_adaptive *a, int by_switch)
{
	int n = a->c.nhosts;
	sd_random_matching(n, a->rounds, a->c.seed, a->perm);
	if (!by_switch || !a->switch_of)
		return;
	/* insertion by switch keeps the random order inside a switch;
	 * a counting pass would need the switch count: n is small enough
	 * per round for a merge of buckets */
	int most = -1;
	for (int h = 0; h < n; h++)
		if (a->switch_of[h] > most)
			most = a->switch_of[h];
	int *start = calloc((size_t)most + 3, sizeof(int));
	int *tmp = malloc((size_t)(n > 0 ? n : 1) * sizeof(int));
	if (!start || !tmp) {
		free(start);
		free(tmp);
		return; /* the random order does */
	}
	for (int i = 0; i < n; i++)
		start[a->switch_of[a->perm[i]] + 2]++;
	for (int s = 1; s < most + 3; s++)
		start[s] += start[s - 1];
	for (int i = 0; i < n; i++)
		tmp[start[a->switch_of[a->perm[i]] + 1]++] = a->perm[i];
	memcpy(a->perm, tmp, (size_t)n * sizeof(int));
	free(start);
	free(tmp);
}

/* The first round: every host with the next in a random order, inside
 * its switch first, then what is left across switches. */
static int first_round(struct sd_adaptive *a, int *host_group,
		       int *round_pairs, int *ng)
{
	int n = a->c.nhosts, left = -1;
	order_hosts(a, 1);
	for (int i = 0; i < n; i++) {
		int h = a->perm[i];
		if (i + 1 < n && sw(a, a->perm[i + 1]) == sw(a, h)) {
			if (add_pair(a, h, a->perm[i + 1], SD_PAIRING_DISJOINT,
				     host_group, round_pairs, ng))
				return -1;
			i++;
		} else if (left < 0) {
			left = h;
		} else {
			if (add_pair(a, left, h, SD_PAIRING_DISJOINT,
				     host_group, round_pairs, ng))
				return -1;
			left = -1;
		}
	}
	return 0;
}

/* A further matching: each host with the next host in a random order it
 * has not met, of another switch where one is left (the first of these
 * rounds) . */
static int more_round(struct sd_adaptive *a, int *host_group,
		      int *round_pairs, int *ng)
{
	int n = a->c.nhosts;
	int across = a->switch_of && a->rounds == 1;
	if (across) {
		/* by switch, each host with the one half the list away:
		 * another switch unless one holds more than half the hosts */
		order_hosts(a, 1);
		for (int i = 0, m = n / 2; i < m; i++) {
			int x = a->perm[i], y = a->perm[i + m];
			if (sw(a, x) != sw(a, y) && !met(a, x, y) &&
			    add_pair(a, x, y, SD_PAIRING_RANDOM, host_group,
				     round_pairs, ng))
				return -1;
		}
	}
	order_hosts(a, 0);
	for (int i = 0; i < n; i++) {
		int h = a->perm[i], pick = -1;
		if (a->used[h])
			continue;
		for (int pass = across ? 0 : 1; pass < 2 && pick < 0; pass++)
			for (int j = i + 1; j < n && pick < 0; j++) {
				int x = a->perm[j];
				if (a->used[x] || met(a, h, x) ||
				    (pass == 0 && sw(a, x) == sw(a, h)))
					continue;
				pick = x;
			}
		if (pick >= 0 && add_pair(a, h, pick, SD_PAIRING_RANDOM,
					  host_group, round_pairs, ng))
			return -1;
	}
	return 0;
}

/* Whether x passed a pair with a host other than h. */
static int passes_elsewhere(const struct sd_adaptive *a, int x, int h)
{
	for (int k = 0; k < a->hn[x]; k++) {
		const struct sd_adaptive_pair *p = &a->p[a->hp[x][k]];
		if (!p->failed && p->a != h && p->b != h)
			return 1;
	}
	return 0;
}

/* Each host's state from the pairs' outcomes. */
static void assess(struct sd_adaptive *a)
{
	int n = a->c.nhosts;
	for (int h = 0; h < n; h++) {
		int nf = 0, np = a->hn[h], good_partners = 0;
		for (int k = 0; k < np; k++) {
			const struct sd_adaptive_pair *p = &a->p[a->hp[h][k]];
			int x = p->a == h ? p->b : p->a;
			nf += p->failed;
			good_partners += passes_elsewhere(a, x, h);
		}
		a->gp[h] = good_partners;
		a->good[h] = np > 0 && nf == 0;
		/* sd_blame_end_test's bad node: every pair, two or more,
		 * failed, each partner passing with another host */
		a->bad[h] = np >= 2 && nf == np && good_partners == np;
	}
	for (int h = 0; h < n; h++) {
		a->suspect[h] = 0;
		for (int k = 0; k < a->hn[h] && !a->bad[h] && !a->suspect[h];
		     k++) {
			const struct sd_adaptive_pair *p = &a->p[a->hp[h][k]];
			int x = p->a == h ? p->b : p->a;
			a->suspect[h] = p->failed && !a->bad[x];
		}
		a->wants[h] = !a->given_up[h] && !a->bad[h] &&
			      (a->suspect[h] ? a->gp[h] < 2
					     : a->hn[h] < a->cover);
	}
}

/* A partner for host h this round: a good host (of h's switch first),
 * else one not measured yet, that h has not met.  -1 when none is free
 * now; *any 0 when none would be in any round. */
static int partner(struct sd_adaptive *a, int h, int start, int *any)
{
	int n = a->c.nhosts;
	*any = 0;
	for (int pass = 0; pass < 3; pass++) {
		if (pass == 0 && !a->switch_of)
			continue;
		for (int i = 0; i < n; i++) {
			int x = (start + i) % n;
			int fit = x != h && !a->bad[x] && !a->suspect[x] &&
				  (pass < 2 ? a->good[x] : a->hn[x] == 0) &&
				  (pass != 0 || sw(a, x) == sw(a, h)) &&
				  !met(a, h, x);
			if (!fit)
				continue;
			*any = 1;
			if (!a->used[x])
				return x;
		}
	}
	return -1;
}

void sd_adaptive_outcome(struct sd_adaptive *a, const unsigned char *failed)
{
	for (int i = 0; i < a->np; i++)
		a->p[i].failed = failed[i] != 0;
	assess(a);
}

int sd_adaptive_next(struct sd_adaptive *a, int *host_group,
		     int *round_pairs)
{
	int n = a->c.nhosts, ng = 0;
	for (int h = 0; h < n; h++) {
		host_group[h] = -1;
		a->used[h] = 0;
	}
	if (a->done || n < 2 || a->rounds >= a->c.max_rounds) {
		a->done = 1;
		return 0;
	}
	if (a->rounds == 0) {
		if (first_round(a, host_group, round_pairs, &ng))
			return -1;
	} else if (a->rounds <= a->c.more) {
		if (more_round(a, host_group, round_pairs, &ng))
			return -1;
	}
	if (a->rounds > 0 && ng == 0) {
		/* suspects first, then hosts short of partners, each with a
		 * partner from a place of the host list that moves with
		 * the round */
		unsigned long long st = a->c.seed ^ (unsigned)a->rounds;
		for (int pass = 0; pass < 2; pass++)
			for (int h = 0; h < n; h++) {
				if (!a->wants[h] || a->used[h] ||
				    a->suspect[h] != (pass == 0))
					continue;
				int any, x = partner(a, h, (int)(mix(&st) %
							(unsigned)n), &any);
				if (!any)
					a->given_up[h] = 1;
				if (x >= 0 &&
				    add_pair(a, h, x, a->suspect[h]
						    ? SD_PAIRING_REPAIR
						    : SD_PAIRING_FILL,
					     host_group, round_pairs, &ng))
					return -1;
			}
		/* failed pairs that no bad host explains, once both hosts
		 * have met the partners they are to meet */
		for (int i = 0; i < a->np; i++) {
			struct sd_adaptive_pair *p = &a->p[i];
			if (!p->failed || a->bad[p->a] || a->bad[p->b] ||
			    p->attempts > a->c.retries || a->used[p->a] ||
			    a->used[p->b] ||
			    (a->wants[p->a] && !a->given_up[p->a]) ||
			    (a->wants[p->b] && !a->given_up[p->b]))
				continue;
			p->attempts++;
			a->used[p->a] = a->used[p->b] = 1;
			host_group[p->a] = host_group[p->b] = ng;
			round_pairs[ng++] = i;
		}
	}
	if (ng == 0) {
		a->done = 1;
		return 0;
	}
	a->rounds++;
	return ng;
}

int sd_adaptive_bad(const struct sd_adaptive *a, unsigned char *bad,
		    int *unresolved)
{
	int k = 0;
	*unresolved = 0;
	for (int h = 0; h < a->c.nhosts; h++) {
		bad[h] = a->bad[h];
		k += a->bad[h];
		*unresolved += a->suspect[h] && a->gp[h] < 2;
	}
	return k;
}
