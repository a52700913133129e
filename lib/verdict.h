/*
 * verdict.h - judging a test's subjects against its expectations, and
 * blaming nodes, links and paths for what failed.
 *
 * Pure logic: no network, no database, no output.  The runner hands each
 * test's subjects (the groups its scope made: the job, a block of a split,
 * a node, a GPU pair, a node pair, a rail) with what each measured at the
 * judged size; sd_judge() says, per subject and expectation, passed,
 * failed or skipped, with the measured value, the threshold and a reason
 * in words.  The blame accumulator then takes every subject's outcome, test
 * by test, and names the suspects (see sd_blame_end_test()).
 */
#ifndef SD_VERDICT_H
#define SD_VERDICT_H

#include <stddef.h>
#include <stdint.h>
#include "plan.h"

/* What a subject is: its scope's kind of group. */
enum sd_subject_kind {
	SD_SUBJECT_JOB,       /* world */
	SD_SUBJECT_GROUP,     /* split:K */
	SD_SUBJECT_NODE,      /* node */
	SD_SUBJECT_GPU_PAIR,  /* gpu-pairs */
	SD_SUBJECT_NODE_PAIR, /* node-pairs and its variants */
	SD_SUBJECT_RAIL,      /* rail */
};
const char *sd_subject_kind_name(enum sd_subject_kind k);
/* The kind of subject a scope's groups are. */
enum sd_subject_kind sd_subject_kind_of(const char *scope);

/* The expectations, in the order verdicts are given. */
enum sd_expect_kind {
	SD_EXPECT_DATA, SD_EXPECT_BUSBW, SD_EXPECT_TIME, SD_EXPECT_PEERS,
	SD_EXPECT_MAD, SD_EXPECT_BASELINE,
	SD_EXPECT_LINK,  /* a GPU pair of a faster link class measured at the
			    speed of a slower class (with peers or mad) */
	SD_EXPECT_PATH,  /* a test of a transport or iface: its connections
			    took that path (path_proof.h) */
	SD_EXPECT_KINDS
};
const char *sd_expect_kind_name(enum sd_expect_kind k);

enum sd_judged_status { SD_JUDGED_NONE = 0, SD_JUDGED_PASSED,
			SD_JUDGED_FAILED, SD_JUDGED_SKIPPED };
const char *sd_judged_status_name(enum sd_judged_status s);

/* What one subject measured at the judged size. */
struct sd_subject_result {
	int have;             /* a measurement at or below the judged size */
	uint64_t size_bytes;  /* the size judged */
	double busbw_gbs, time_us;
	const char *bw_name;  /* what busbw_gbs is, as the reasons name it:
				 "busbw", or "algbw" for a group of one rank
				 (it moves nothing between ranks: its bus
				 bandwidth is 0, how fast it runs is judged);
				 NULL: "busbw" */
	int checked;          /* the data was checked (at any size) */
	uint64_t wrong;       /* wrong elements over all sizes */
	int have_base;        /* a baseline value for this size */
	double base_busbw_gbs;
	int base_missing;     /* a baseline was given but lacks this test */
	/* GPU pairs: the class of the link between the two devices (as
	   shakedown topo names it), and its tier: 0 NVLink or NVSwitch, 1
	   PCIe through a switch or one host bridge, 2 across host bridges of
	   one CPU, 3 across CPUs or through the host; -1 unknown.  Peers and
	   mad compare a pair with the pairs of its own class. */
	const char *link_class;  /* NULL: unknown (one class for all) */
	int link_tier;
	/* a test that asked for a path (path_proof.h): path_judged 1 when
	   its connections were read, path_took of path_asked on the path
	   asked (fails unless all, and at least one, were); 2 when there
	   was nothing to prove; 0 not asked.  path_reason says so. */
	int path_judged;
	int path_asked, path_took;
	char path_reason[240];
};

/* The tier of a link class name (see link_tier above); -1 unknown. */
int sd_link_tier(const char *link_class);

/* One expectation's outcome for one subject. */
struct sd_judgement {
	enum sd_expect_kind kind;
	enum sd_judged_status status;
	double measured, threshold; /* NAN when there is none */
	const char *unit;           /* "GB/s", "us", "elements" */
	char reason[240];
};

/*
 * Judge n subjects (`what` names their kind in reasons: "node pairs") by
 * expectation e: out[i * SD_EXPECT_KINDS + k] for subject i and kind k
 * (status SD_JUDGED_NONE where the test does not expect k; data is always
 * judged).  Peers and mad compare each subject's bus bandwidth with the
 * median of the subjects that have one; the median absolute deviation is
 * taken as at least 1% of the median, so that identical subjects do not
 * make noise a failure.  Returns whether any subject failed a performance
 * expectation (busbw, time, peers, mad, baseline): what retries measure
 * again.
 */
int sd_judge(const struct sd_expectation *e, const char *what,
	     const struct sd_subject_result *res, int n,
	     struct sd_judgement *out);

/* The median of n values (sorted in place); 0 when n is 0. */
double sd_median(double *v, int n);

/* The median of n sorted values without one that equals v (the last
 * such, or the last value when none does): what peers compares a subject
 * with, the median of the others; sorted[0] when n is 1. */
double sd_median_without(const double *sorted, int n, double v);

/*
 * A subject's outcome, the one word every view says of it: "failed" when
 * any of its SD_EXPECT_KINDS judgements j failed; "passed on retry" when
 * none failed, one passed and it took more than one attempt; "passed"
 * when one passed at the first; "skipped" when none passed and one was
 * skipped; "not judged" when nothing was judged.
 */
const char *sd_subject_outcome(const struct sd_judgement *j, int attempts);

/* The outcome of a measured test (one attempt of one group) that a later
 * attempt of the same subject replaced. */
#define SD_OUTCOME_RETRIED "retried"

/*
 * Each of n subjects' value (a time: larger is slower) against the median
 * of the others' (leave one out: with two subjects, the other one's, so
 * a rank 1.5x slower than its peer reads 1.5, not 1.2 as against a median
 * that holds itself): ratio[i] (may be NULL) that quotient, above[i] = 1
 * where it is above factor (a slow rank), else 0; *median is the median of
 * all (sd_median over a copy; 0 when n < 2).  Returns how many are
 * above, or -1 when out of memory (then none is).
 */
int sd_above_median(const double *value, int n, double factor, double *ratio,
		    double *median, unsigned char *above);

/* A suspect: what the run blames, and why. */
enum sd_suspect_kind { SD_SUSPECT_NODE, SD_SUSPECT_LINK, SD_SUSPECT_PATH,
		       SD_SUSPECT_RAIL, SD_SUSPECT_GROUP };
const char *sd_suspect_kind_name(enum sd_suspect_kind k);

struct sd_suspect {
	enum sd_suspect_kind kind;
	char *subject;   /* host name, "node03 local 0,1", "node01,node03" */
	char *hosts;     /* its hosts, as a Slurm hostlist */
	int host;        /* the host to repair (bad node), or -1 */
	int host_b;      /* the other end of a path, or -1 */
	char *reason;    /* a bad node's (node or link): first how many
			    subjects it failed and the worst figure against
			    its reference ("3 failed subjects; worst: ..."),
			    then detail; else detail */
	char *detail;    /* why, test by test */
};

struct sd_blame;

/* A blame accumulator over hosts 0..nhosts-1 named names[h] (kept, not
 * copied).  NULL when out of memory. */
struct sd_blame *sd_blame_new(int nhosts, const char *const *names);

/*
 * One subject's outcome in the current test: its kind, its text, its
 * hosts as a hostlist (kept for suspects), its hosts (one for a node or GPU pair, two for a node pair, any number
 * otherwise; only the first two are kept), whether it failed, and why.
 * Returns 0 or -1 (out of memory).
 */
int sd_blame_add(struct sd_blame *b, enum sd_subject_kind kind,
		 const char *subject, const char *hostlist, const int *hosts,
		 int nh, int failed, const char *reason);

/*
 * The figure of the subject sd_blame_add() last added as failed: ratio is
 * how far it is from its reference (measured / threshold for a floor,
 * threshold / measured for a ceiling: below 1 fails; NAN when there is
 * none, as for wrong data) and figure says it ("busbw 0.017 GB/s at 1M
 * is 0.03 x the median ...").  The worst figure of each host's failed
 * subjects leads its bad-node reason.  Returns 0 or -1.
 */
int sd_blame_figure(struct sd_blame *b, double ratio, const char *figure);

/* How far judgement j is from its reference, as sd_blame_figure() takes
 * it; NAN when it did not fail or has no numbers. */
double sd_judgement_ratio(const struct sd_judgement *j);

/*
 * The test is over: decide its suspects and merge them into the run's.
 *   node   a node that failed its node test; or a node whose every node
 *          pair failed (at least two) while each of its partners passed a
 *          pair with another node
 *   link   a GPU pair that failed (its node is a bad node)
 *   path   a node pair that failed while neither end is blamed: both pass
 *          elsewhere, or there is no elsewhere (two nodes)
 *   rail   a rail, and group a job or block, that failed with no blamed
 *          node among its hosts (a fault no single node explains)
 * Test names ("test 3 (all_reduce)") go into the reasons.  Returns 0 or -1.
 */
int sd_blame_end_test(struct sd_blame *b, const char *test_name);

/* Name a suspect found another way (the bisection of a failed job): a
 * node (host >= 0: a bad node) or a group of hosts that fail only
 * together.  Its reason is merged as sd_blame_end_test's are.  Returns 0
 * or -1. */
int sd_blame_name(struct sd_blame *b, enum sd_suspect_kind kind,
		  const char *subject, const char *hostlist, int host,
		  const char *test, const char *reason);

/* The suspects so far (owned by b), in the order found. */
const struct sd_suspect *sd_blame_suspects(const struct sd_blame *b, int *n);

/* The hosts of node suspects, and of links (the bad nodes): bad[h] = 1;
 * returns how many. */
int sd_blame_bad_hosts(const struct sd_blame *b, unsigned char *bad);

void sd_blame_free(struct sd_blame *b);

#endif
