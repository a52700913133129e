/*
 * schedule.h - which ranks run together, round by round: the schedules the
 * topology scopes are built from, and the bisection that names the hosts
 * behind a failure of the whole job.
 *
 * Pure logic over a layout (which host each rank is on); nothing here
 * talks to a network.  Schedules are computed, not stored: a round's groups
 * come from O(1) formulas, so 4,096 hosts cost no memory beyond the layout.
 *   node        one round; a group per host (its ranks)
 *   rail        one round; group i = local rank i of every host
 *   gpu-pairs   every pair of ranks inside each host; in each round a rank
 *               takes part at most once (a round-robin per host, the hosts'
 *               rounds side by side)
 *   node-pairs  every pair of hosts exactly once, as a round-robin
 *               tournament: n-1 rounds of n/2 pairs (n even), n rounds
 *               with one host idle in each (n odd)
 *   node-pairs:adaptive
 *               rounds decided one at a time from the last one's outcome
 *               (sd_adaptive: disjoint pairs, K more, then re-pairing to
 *               isolate what failed); rank 0 drives it and decides each
 *               round's pairs for every rank (lib/runner.c)
 */
#ifndef SD_SCHEDULE_H
#define SD_SCHEDULE_H

#include <stddef.h>

/* Where the ranks are: host_of[r] in 0..nhosts-1 for each rank r. */
struct sd_layout {
	int nranks;
	int nhosts;
	const int *host_of;
};

/* The ranks of each host in rank order (their local index), from a
 * layout; free with sd_hosts_free(). */
struct sd_hosts {
	int nhosts;
	int *count;      /* ranks on host h */
	int **ranks;     /* world ranks of host h, by local index */
	int max_count;   /* the most ranks on one host */
};

/* Returns 0, or -1 (out of memory, or a rank on a host out of range). */
int sd_hosts_build(const struct sd_layout *l, struct sd_hosts *out);
void sd_hosts_free(struct sd_hosts *h);

struct sd_rank_info;

/* Host indices 0.. of every rank, numbered in order of each host's first
 * rank (for the node and rail scopes); malloc'd, NULL when out of memory.
 * Sorting keeps it O(n log n) for tens of thousands of ranks. */
int *sd_number_hosts(const struct sd_rank_info *ranks, int n);

/*
 * A round-robin tournament of n players (the circle method): the number of
 * rounds (n-1 for even n, n for odd n, 0 for n < 2), the slots of a round
 * (n/2, and (n+1)/2 for odd n, where one slot is the idle player's), and
 * the pair in slot `slot` of round `round`: returns 1 and *a < *b, or 0
 * for the idle slot of an odd n.  Every pair meets in exactly one round;
 * no player is in two slots of one round.
 */
int sd_rr_rounds(int n);
int sd_rr_slots(int n);
int sd_rr_pair(int n, int round, int slot, int *a, int *b);

/*
 * Partners for clusters too large for every pair (node-pairs:ring and
 * node-pairs:random:K).  ring: host i with host i+1 (and the last with the
 * first), in 2 rounds for even n, 3 for odd n, 1 for n = 2.  random: K
 * rounds, each a random matching of the hosts (one idle when n is odd),
 * the same on every rank for the same seed: sd_random_matching fills
 * perm[0..n) for a round, and slot s pairs perm[2s] with perm[2s+1].
 */
int sd_ring_rounds(int n);
int sd_ring_pair(int n, int round, int slot, int *a, int *b);
void sd_random_matching(int n, int round, unsigned long long seed,
			int *perm);

/* gpu-pairs: rounds needed (the longest host's tournament), and pair
 * `slot` of host h in round `round` as world ranks (0 when that host has
 * no pair in that slot). */
int sd_gpu_pairs_rounds(const struct sd_hosts *h);
int sd_gpu_pairs_pair(const struct sd_hosts *h, int host, int round,
		      int slot, int *a, int *b);

/*
 * Bisection: find the hosts that make a set of hosts fail.  `run` tests
 * sets of hosts (1: the set passes, 0: it fails, -1: it could not run);
 * every set of one round could run at the same time.  A failing set is
 * halved and both halves tested in the next round, until single hosts are
 * named; a failing set whose halves both pass (a fault that needs both) is
 * named whole.  At most `max_rounds` rounds.  The named hosts go to
 * culprits (room for nhosts), their count to *nculprits, the rounds used to
 * *rounds.  Returns 0, 1 when max_rounds ran out before every failing set
 * was resolved (the unresolved sets are named whole), or -1 (run failed or
 * out of memory).
 */
typedef int (*sd_bisect_fn)(void *arg, const int *hosts, int n);

/*
 * The same bisection, a round at a time, for a caller that runs a round's
 * sets itself (side by side: they are disjoint) and starts from a set it
 * already saw fail: hosts 0..nhosts-1.  sd_bisection_round() gives the
 * next round's sets (the halves of what failed; *n 0 when done), naming
 * first the failing sets of one host (alone) and, once max_rounds rounds
 * are used, what still fails (unresolved); sd_bisection_result() takes
 * whether each set of that round failed, and names a parent whose halves
 * both pass (whole: a fault that needs both).  The named sets are in
 * named[0..nnamed).  init returns 0 or -1 (out of memory).
 */
enum sd_bisect_why { SD_BISECT_ALONE, SD_BISECT_WHOLE, SD_BISECT_UNRESOLVED,
		     SD_BISECT_TOO_SMALL };
/* A set of the round that could not run (failed[i] in
 * sd_bisection_result): its parent is named (too small to split). */
#define SD_BISECT_NOT_RUN 2
struct sd_bisect_set {
	int lo, hi;    /* hosts lo..hi-1 */
	int sibling;   /* the other half of its parent in the round, or -1 */
};
struct sd_bisect_named {
	int lo, hi;
	enum sd_bisect_why why;
};
struct sd_bisection {
	int nhosts, max_rounds, rounds, out_of_rounds;
	struct sd_bisect_set *sets, *failing;
	int nsets, nfailing;
	struct sd_bisect_named *named;
	int nnamed;
};
int sd_bisection_init(struct sd_bisection *b, int nhosts, int max_rounds);
const struct sd_bisect_set *sd_bisection_round(struct sd_bisection *b,
					       int *n);
void sd_bisection_result(struct sd_bisection *b, const unsigned char *failed);
void sd_bisection_free(struct sd_bisection *b);
int sd_bisect(int nhosts, sd_bisect_fn run, void *arg, int max_rounds,
	      int *culprits, int *nculprits, int *rounds);


/*
 * Adaptive node pairs (node-pairs:adaptive[:K]): pairs enough to find a
 * bad node or a bad link without every pair of hosts, for clusters of
 * thousands of nodes.  Round 1 pairs every host with one other, all pairs
 * at once (within each switch first when the switches are known); K more
 * rounds pair each host with hosts it has not met (across switches first),
 * so that every host meets 1 + K partners.  Then, round after round, what
 * failed is isolated:
 *   - a suspect (a host in a failed pair not explained by a bad partner)
 *     meets good partners (hosts whose every pair passed) until it has met
 *     two partners that pass with other hosts;
 *   - a host that failed every pair, two or more, with partners that each
 *     pass with another host is bad (the rule of sd_blame_end_test);
 *   - a failed pair whose two hosts are neither bad nor still meeting
 *     partners is measured again, up to `retries` times: if it still fails
 *     it is the link between them;
 *   - a host that met fewer than min(1 + K, n - 1) partners (the idle host
 *     of an odd round) meets more.
 * Within a round no host is in two pairs.  It stops when nothing is left
 * to do, or after max_rounds rounds.  Pure logic and deterministic for a
 * given seed: rank 0 drives it and tells every rank each round's pairs.
 */
enum sd_pairing { SD_PAIRING_DISJOINT, SD_PAIRING_RANDOM, SD_PAIRING_REPAIR,
		  SD_PAIRING_FILL, SD_PAIRING_RETRY };
/* "disjoint", "random", "re-pair", "fill", "retry" */
const char *sd_pairing_name(enum sd_pairing p);

struct sd_adaptive_cfg {
	int nhosts;
	int more;                 /* K: matchings after the first */
	unsigned long long seed;
	const int *switch_of;     /* each host's switch (0..), -1 unknown;
				     NULL: no topology */
	int retries;              /* a failed pair's measurements again */
	int max_rounds;           /* 0: sd_adaptive_max_rounds() */
};

/* The most rounds an adaptive test takes unless told: its 1 + K matchings
 * and 2 x (retries + 1) + 4 more to isolate what fails. */
int sd_adaptive_max_rounds(int more, int retries);

struct sd_adaptive_pair {
	int a, b;                 /* hosts, a < b */
	int round;                /* the round it was first measured in, 1.. */
	int slot;                 /* its group in that round, 0.. */
	int attempts;             /* measurements so far */
	int failed;               /* the last one failed (sd_adaptive_outcome) */
	enum sd_pairing why;      /* why it was first measured */
};

struct sd_adaptive;

/* NULL when out of memory or nhosts < 0. */
struct sd_adaptive *sd_adaptive_new(const struct sd_adaptive_cfg *cfg);
void sd_adaptive_free(struct sd_adaptive *a);

/*
 * The next round: host_group[h] = the group (0..) host h is in, or -1
 * (room for nhosts); the round's groups are pairs round_pairs[0..n) of
 * sd_adaptive_pairs() (indices into it: a retry names a pair measured
 * before).  Returns n, 0 when done, or -1 (out of memory).  Call
 * sd_adaptive_outcome() after each round before asking for the next.
 */
int sd_adaptive_next(struct sd_adaptive *a, int *host_group,
		     int *round_pairs);

/* Every pair measured so far, in the order first measured; *n how many. */
const struct sd_adaptive_pair *sd_adaptive_pairs(const struct sd_adaptive *a,
						 int *n);

/* Whether each pair so far failed, failed[i] for pair i (all of them: a
 * judgement against the peers moves as pairs are added). */
void sd_adaptive_outcome(struct sd_adaptive *a, const unsigned char *failed);

/* Rounds run so far; and what the last outcome makes of the hosts: bad[h]
 * = 1 for a bad host (room for nhosts); returns how many, and in
 * *unresolved the suspects left unresolved (out of rounds or partners). */
int sd_adaptive_rounds(const struct sd_adaptive *a);
int sd_adaptive_bad(const struct sd_adaptive *a, unsigned char *bad,
		    int *unresolved);

#endif
