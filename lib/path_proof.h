/*
 * path_proof.h - proof that a test's bytes took the path it asked for.
 *
 * A test with a transport (or, under Gloo, an iface) runs in worker
 * processes set up to force that path (transport.h, worker.h); whether the
 * library really took it is read afterwards from the library's own
 * account, rank by rank, and judged per subject on rank 0:
 *
 *   NCCL  each worker writes NCCL's INFO log (NCCL_DEBUG=INFO,
 *         NCCL_DEBUG_SUBSYS=INIT,NET) to a file of its own; its rank reads
 *         the connection lines this worker's rank sent on
 *         (nccl_transport.h) and keeps those of the test's kind: between
 *         ranks of one host for nvlink, pcie, p2p and shm, between hosts
 *         for tcp and ib.  A connection of the other kind is not the
 *         test's to prove (a node-pairs test of 8 GPUs per node has P2P
 *         connections inside each node too).
 *   Gloo  moves bytes over TCP only; what can go astray is the network.
 *         The rank reads the kernel's socket table for the worker's
 *         established TCP connections (/proc/PID/fd, /proc/PID/net/tcp)
 *         and the interface each one's local address belongs to.
 *
 * Reads files, never prints, never exits.
 */
#ifndef SD_PATH_PROOF_H
#define SD_PATH_PROOF_H

#include <stddef.h>
#include <sys/types.h>

#include "nccl_transport.h"

struct sd_rank_info;

/* One rank's account: fixed size, exchanged between ranks as bytes. */
struct sd_path_tally {
	/* NCCL: the test's kind of connections this rank sent on, by path */
	struct sd_nccl_paths paths;
	/* Gloo: established TCP connections, and how many are on the
	   interface asked for; the first that is not: "eth0 10.77.0.3" */
	int sockets, on_iface;
	char off_iface[SD_NCCL_VIA_MAX];
	/* the first connection that did not take the path: world ranks
	   (to: -1 when unknown, as for a socket) */
	int bad_from, bad_to;
	/* why the account could not be read ("" when it was) */
	char err[160];
};

/* An empty tally (bad_from and bad_to -1). */
void sd_path_tally_init(struct sd_path_tally *t);

/*
 * NCCL: read the log at path, written by the worker of group rank `me`
 * of a group whose world ranks are members[0..n-1], into *out (which
 * sd_path_tally_init made): the send-side connection lines from `me` to
 * another member of the test's kind for want ("nvlink", "pcie", "p2p",
 * "shm", "tcp", "ib"), host_of[world rank] saying which ranks share a host
 * (NULL: all on one).  Returns 0, or -1 with out->err saying why (an
 * unknown want, a log that cannot be read).
 */
int sd_path_read_nccl(const char *path, const char *want, int me,
		      const int *members, int n, const int *host_of,
		      struct sd_path_tally *out);

/*
 * Gloo: the established TCP connections of process pid, and how many have
 * a local address on interface iface, into *out.  Returns 0, or -1 with
 * out->err saying why (a /proc file that cannot be read).  root names
 * /proc (NULL: "/proc"), for tests.
 */
int sd_path_read_sockets(const char *root, pid_t pid, const char *iface,
			 struct sd_path_tally *out);

/* What a subject's connections could hold: 1 when some pair of its ranks
 * is of want's kind (two ranks on one host for a path inside a host, two
 * hosts for the network), else 0. */
int sd_path_possible(const char *want, const int *members, int n,
		     const int *host_of);

/*
 * Rank 0: judge one subject from its members' tallies (tallies[i] of
 * world rank members[i]).  backend "nccl" judges want's paths; another
 * judges the interface iface (nothing when iface is empty: returns 0).
 * ranks (may be NULL) name hosts in the reason.  Returns 0 (nothing to
 * judge), 1 judged: *asked connections of the test's kind, *took of them
 * on the path, reason says so ("asked for ib, NCCL used NET/Socket for 3
 * of 8 connections ... (first: rank 5 on node3 to rank 9 on node7)"),
 * failed when *took < *asked or *asked is 0; or 2: nothing to prove (one
 * rank; ranks that share no host for a path inside one), reason says why.
 */
int sd_path_judge(const char *backend, const char *want, const char *iface,
		  const struct sd_path_tally *tallies, const int *members,
		  int n, const int *host_of, const struct sd_rank_info *ranks,
		  int *asked, int *took, char *reason, size_t len);

#endif
