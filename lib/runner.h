/*
 * runner.h - run a plan: for each test, its groups (the world, or the
 * blocks of a split, measured at the same time), and for each size: fill,
 * warm up, time, check, combine across the group's ranks and report to the
 * sinks.
 *
 * The measurement method is nccl-tests': per size and placement (out of
 * place, then in place), `warmup` untimed iterations, a barrier, `iters`
 * timed iterations between two clock reads with one wait at the end; the
 * per-iteration time is the elapsed time divided by iters, then combined
 * across the group's ranks (the test's `combine`: average by default).
 * Checks run after timing, on freshly filled buffers, `check_passes` times.
 * Everything a test needs is in its plan entry (struct sd_test_spec).
 */
#ifndef SD_RUNNER_H
#define SD_RUNNER_H

#include <signal.h>
#include "shakedown/backend.h"
#include "bootstrap.h"
#include "ctrl.h"
#include "fault.h"
#include "plan.h"
#include "sink.h"

/* A set of ranks measured together on one communicator. */
struct sd_group {
	int id;              /* its index within the test's scope, 0.. */
	struct sd_comm *comm;/* this rank's communicator for the group */
	int rank;            /* this rank's index in the group */
	int size;            /* ranks in the group */
	const int *members;  /* its world ranks, by group rank */
};

struct sd_runner {
	const struct sd_plan *plan;
	struct sd_bootstrap *bs;
	const struct sd_backend_ops *ops;
	struct sd_comm *comm;      /* the world */
	const int *host_of;        /* host index (0..) of each world rank, for
				      the node and rail scopes; NULL: one
				      host */
	const char *iface;         /* for communicators made per test */
	const char *exe;           /* this program (/proc/self/exe), which a
				      test of another path starts as its
				      worker (worker.h); NULL: such tests
				      cannot run */
	struct sd_ctrl *ctrl;
	struct sd_sinks *sinks;    /* rank 0 only; NULL on the others */
	struct sd_fault *fault;
	volatile sig_atomic_t *cancel; /* set by SIGTERM/SIGINT */
	/* told when a test starts on rank 0 (a progress line); may be NULL */
	void (*on_test)(void *arg, size_t index, size_t count,
			const struct sd_test_info *t);
	void *on_test_arg;
	/* told on rank 0 before each measurement, outside its timed
	   iterations (a progress line): test ti's sizes[0..nsizes), this one
	   sizes[si], in place or not; on_test_arg is its arg; may be NULL */
	void (*on_measure)(void *arg, size_t ti, const uint64_t *sizes,
			   size_t nsizes, size_t si, int in_place);
	/* every rank's host and local rank, by world rank (names of the
	   subjects that verdicts judge); NULL: ranks are "rank N" */
	const struct sd_rank_info *ranks;
	/* rank 0: the stored baseline's bus bandwidth for test t at a size
	   (out of place): 1 and *busbw_gbs, or 0 when the baseline lacks it;
	   NULL when no baseline was given */
	int (*baseline_of)(void *arg, const struct sd_test_spec *t,
			   uint64_t size_bytes, double *busbw_gbs);
	void *baseline_arg;
	/* rank 0: the class of the link between the devices of two ranks of
	   one host ("nvswitch", "pcie-switch", ...; see shakedown topo), or
	   NULL when unknown; may be NULL */
	const char *(*link_class)(void *arg, int rank_a, int rank_b);
	void *link_arg;
	/* rank 0: every test's subjects and outcomes go in (sd_blame_add);
	   may be NULL */
	struct sd_blame *blame;
	/* filled by the run */
	int wrong_tests;           /* tests with wrong data */
	int failed_subjects;       /* rank 0: subjects that failed an
				      expectation after their retries */
	int retried;               /* rank 0: subjects measured again */
	char cut_short[256];       /* what a cancel interrupted */
	char err[2048];            /* why sd_runner_run failed */
};

/* Index of algorithm `name` for op in the backend, -1 for "auto", or -2
 * when the backend has no such algorithm. */
int sd_runner_algo_index(const struct sd_backend_ops *ops, enum sd_op op,
			 const char *name);

/*
 * Check that the backend supports every test of the plan, its env pairs
 * included (the backend's env_check, on this rank: call it before init);
 * returns SD_OK or SD_ERR_INVALID with err naming the test and what the
 * backend offers.
 */
int sd_runner_check_plan(const struct sd_backend_ops *ops,
			 const struct sd_plan *plan, char *err, size_t errlen);

/*
 * Run every test.  Returns SD_OK when the plan ran to its end (then
 * r->wrong_tests counts the tests with wrong data), SD_ERR_CANCELLED when
 * the ranks stopped for a signal (r->cut_short says during what), or the
 * status of the failure with r->err saying why: the control plane's
 * verdict when a rank failed, timed out or was lost (every rank returns
 * the same), or a local failure before any step.
 */
int sd_runner_run(struct sd_runner *r);

/* The shape of a test's scope over hosts: rounds, the most groups in a
 * round and the largest group (0 groups when there is nothing to pair).
 * O(hosts); no cluster needed (`shakedown plan expand`). */
struct sd_scope_shape {
	int rounds;
	int groups;
	int group_size;
	/* node-pairs scopes: the pairs of nodes measured on a healthy
	 * cluster (an upper bound for random), the partners each node meets
	 * (at least; at most for random), and for adaptive the rounds that
	 * isolate what fails, as many as a failed pair usually takes
	 * (isolate) and at most (most, with rounds) */
	long long pairs;
	int partners;
	int isolate, most;
};
struct sd_hosts;
void sd_scope_shape(const struct sd_test_spec *t, const struct sd_hosts *hs,
		    int nranks, struct sd_scope_shape *out);

/* Abort every communicator of the run (the world's and those a test made
 * for itself), from any thread: the control plane's verdict hook. */
void sd_runner_abort(struct sd_runner *r);

/* Ranks (ascending) as text with runs folded: "0-3", "0,2,4", "0-1,4-5";
 * malloc'd (the caller frees), NULL when out of memory. */
char *sd_rank_list(const int *ranks, int n);

/* The ranks of a list sd_rank_list() wrote ("0-3", "4,6", "0,2-3") into
 * out[0..max): how many, or -1 when s is not such a list or holds more
 * than max. */
int sd_rank_list_parse(const char *s, int *out, int max);

#endif
