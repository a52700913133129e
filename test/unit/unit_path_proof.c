/*
 * unit_path_proof.c - the proof of a test's path (lib/path_proof.c): an
 * NCCL log of NCCL 2.28's connection lines read for one rank of a group,
 * keeping the test's kind of connections; the kernel's socket table of a
 * real loopback connection; and the judgement of a subject from its
 * ranks' tallies.
 */
#include "config.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "path_proof.h"
#include "sink.h"
#include "tap.h"

static char dir[] = "/tmp/unit_path_proof.XXXXXX";

static const char *write_log(const char *name, const char *text)
{
	static char path[256];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	if (!f)
		return NULL;
	fputs(text, f);
	fclose(f);
	return path;
}

/*
 * Group of 4 world ranks 4..7: 4 and 5 on host 1, 6 and 7 on host 2 (a
 * node-pairs test of 2 GPUs per node).  Group rank 0's (world 4's) log:
 * P2P inside its node, NET/IB and one NET/Socket to the other node, a
 * receive line, another rank's line, a ring list.
 */
static const char *LOG0 =
	"node1:100:101 [0] NCCL INFO NCCL_DEBUG_SUBSYS set by environment to INIT,NET\n"
	"node1:100:101 [0] NCCL INFO Channel 00/02 : 0 1 2 3\n"
	"node1:100:101 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM/read\n"
	"node1:100:101 [0] NCCL INFO Channel 01/0 : 0[0] -> 1[1] via P2P/CUMEM/read\n"
	"node1:100:101 [0] NCCL INFO Channel 00/0 : 0[0] -> 2[0] [send] via NET/IB/0/GDRDMA\n"
	"node1:100:101 [0] NCCL INFO Channel 01/0 : 0[0] -> 2[0] [send] via NET/IB/0/GDRDMA\n"
	"node1:100:101 [0] NCCL INFO Channel 02/0 : 0[0] -> 3[1] [send] via NET/Socket/0\n"
	"node1:100:101 [0] NCCL INFO Channel 00/0 : 3[1] -> 0[0] [receive] via NET/IB/0/GDRDMA\n"
	"node1:100:101 [0] NCCL INFO Channel 00/0 : 1[1] -> 0[0] via P2P/CUMEM/read\n"
	"node1:100:101 [0] NCCL INFO Connected all rings, use ring PXN 0 GDR 1\n";

static void test_read_nccl(void)
{
	int members[4] = { 4, 5, 6, 7 };
	int host_of[8] = { 0, 0, 0, 0, 1, 1, 2, 2 };
	const char *path = write_log("nccl0.log", LOG0);
	struct sd_path_tally t;

	sd_path_tally_init(&t);
	is_int(sd_path_read_nccl(path, "ib", 0, members, 4, host_of, &t), 0,
	       "read rank 0's log for ib");
	is_int(t.paths.total, 3, "3 send lines to the other node (P2P inside "
	       "the node, the receive line and rank 1's line left out)");
	is_int(t.paths.connections[SD_NCCL_PATH_NET_IB], 2, "2 over IB");
	is_int(t.paths.connections[SD_NCCL_PATH_NET_SOCKET], 1,
	       "1 over sockets");
	is_int(t.bad_from, 4, "the first astray: from world rank 4");
	is_int(t.bad_to, 7, "to world rank 7 (group rank 3)");
	ok(!t.err[0], "no error");

	sd_path_tally_init(&t);
	is_int(sd_path_read_nccl(path, "nvlink", 0, members, 4, host_of, &t),
	       0, "the same log for nvlink");
	is_int(t.paths.total, 2, "the 2 P2P lines inside the node");
	is_int(t.paths.connections[SD_NCCL_PATH_P2P], 2, "both P2P");
	is_int(t.bad_from, -1, "none astray");

	sd_path_tally_init(&t);
	is_int(sd_path_read_nccl(path, "shm", 0, members, 4, host_of, &t), 0,
	       "for shm");
	is_int(t.bad_to, 5, "P2P where shm was asked: astray, to rank 5");

	sd_path_tally_init(&t);
	ok(sd_path_read_nccl(path, "ib", 0, members, 4, NULL, &t) == 0 &&
		   t.paths.total == 0,
	   "no host map (one host): nothing is between hosts");

	sd_path_tally_init(&t);
	is_int(sd_path_read_nccl("/nonexistent/nccl.log", "ib", 0, members, 4,
				 host_of, &t),
	       -1, "a log that is not there: -1");
	ok(strstr(t.err, "cannot read NCCL's log /nonexistent/nccl.log") !=
		   NULL,
	   "saying which: %s", t.err);
	sd_path_tally_init(&t);
	is_int(sd_path_read_nccl(path, "nvswitch", 0, members, 4, host_of,
				 &t),
	       -1, "an unknown want: -1");
	ok(strstr(t.err, "'nvswitch'") != NULL, "named: %s", t.err);
	sd_path_tally_init(&t);
	is_int(sd_path_read_nccl(path, "ib", 4, members, 4, host_of, &t), -1,
	       "a rank outside its group: -1");
}

static void test_possible(void)
{
	int host_of[4] = { 0, 0, 1, 1 };
	int pair_same[2] = { 0, 1 }, pair_across[2] = { 1, 2 },
	    all[4] = { 0, 1, 2, 3 };
	is_int(sd_path_possible("shm", pair_same, 2, host_of), 1,
	       "two ranks of one host: shm possible");
	is_int(sd_path_possible("tcp", pair_same, 2, host_of), 0,
	       "two ranks of one host: no tcp between hosts");
	is_int(sd_path_possible("nvlink", pair_across, 2, host_of), 0,
	       "one rank on each of two hosts: no nvlink");
	is_int(sd_path_possible("ib", pair_across, 2, host_of), 1,
	       "one rank on each of two hosts: ib possible");
	is_int(sd_path_possible("p2p", all, 4, host_of), 1,
	       "two hosts of two: p2p inside each");
	is_int(sd_path_possible("ib", all, 1, host_of), 0, "one rank: none");
}

static void test_judge(void)
{
	struct sd_rank_info ranks[8];
	memset(ranks, 0, sizeof(ranks));
	for (int q = 0; q < 8; q++)
		snprintf(ranks[q].host, sizeof(ranks[q].host), "node%d",
			 q / 2 + 1);
	int host_of[8] = { 0, 0, 1, 1, 2, 2, 3, 3 };
	int members[4] = { 0, 1, 2, 3 };
	struct sd_path_tally t[4];
	int asked, took;
	char reason[300];

	/* all four ranks sent 2 IB connections across: passed */
	for (int i = 0; i < 4; i++) {
		sd_path_tally_init(&t[i]);
		t[i].paths.connections[SD_NCCL_PATH_NET_IB] = 2;
		t[i].paths.total = 2;
		snprintf(t[i].paths.example[SD_NCCL_PATH_NET_IB],
			 SD_NCCL_VIA_MAX, "NET/IB/0/GDRDMA");
	}
	is_int(sd_path_judge("nccl", "ib", "", t, members, 4, host_of, ranks,
			     &asked, &took, reason, sizeof(reason)),
	       1, "judged");
	ok(asked == 8 && took == 8, "8 of 8 (%d of %d)", took, asked);
	ok(!strcmp(reason, "NCCL used NET/IB for 8 of 8 connections"),
	   "its reason: %s", reason);

	/* rank 3 fell back to sockets for its two */
	t[3].paths.connections[SD_NCCL_PATH_NET_IB] = 0;
	t[3].paths.connections[SD_NCCL_PATH_NET_SOCKET] = 2;
	snprintf(t[3].paths.example[SD_NCCL_PATH_NET_SOCKET], SD_NCCL_VIA_MAX,
		 "NET/Socket/0");
	t[3].bad_from = 3;
	t[3].bad_to = 1;
	is_int(sd_path_judge("nccl", "ib", "", t, members, 4, host_of, ranks,
			     &asked, &took, reason, sizeof(reason)),
	       1, "judged");
	ok(asked == 8 && took == 6, "6 of 8 (%d of %d)", took, asked);
	ok(strstr(reason, "asked for ib, NCCL used NET/Socket for 2 of 8 "
			  "connections") == reason &&
		   strstr(reason, "(first: rank 3 on node2 to rank 1 on node1)"),
	   "names the path, the count and the ends: %s", reason);

	/* one rank, and ranks that share no host for shm */
	is_int(sd_path_judge("nccl", "ib", "", t, members, 1, host_of, ranks,
			     &asked, &took, reason, sizeof(reason)),
	       2, "one rank: nothing to prove");
	ok(!strcmp(reason, "one rank: no connection to prove"), "%s", reason);
	int across[2] = { 1, 2 };
	is_int(sd_path_judge("nccl", "shm", "", t, across, 2, host_of, ranks,
			     &asked, &took, reason, sizeof(reason)),
	       2, "shm between two hosts: nothing to prove");
	ok(strstr(reason, "no two of its ranks share a host") != NULL, "%s",
	   reason);

	/* no connection read where some were due: failed */
	struct sd_path_tally z[2];
	sd_path_tally_init(&z[0]);
	sd_path_tally_init(&z[1]);
	int same[2] = { 0, 1 };
	is_int(sd_path_judge("nccl", "nvlink", "", z, same, 2, host_of, ranks,
			     &asked, &took, reason, sizeof(reason)),
	       1, "no lines: judged");
	ok(asked == 0 && strstr(reason, "NCCL set up no peer connections"),
	   "0 asked, said: %s", reason);

	/* a rank that could not read its log */
	snprintf(z[1].err, sizeof(z[1].err), "cannot read NCCL's log x");
	sd_path_judge("nccl", "nvlink", "", z, same, 2, host_of, ranks,
		      &asked, &took, reason, sizeof(reason));
	ok(!strcmp(reason, "the path could not be proved: rank 1 on node1: "
			   "cannot read NCCL's log x"),
	   "names the rank: %s", reason);

	/* Gloo: the interface */
	struct sd_path_tally g[2];
	sd_path_tally_init(&g[0]);
	sd_path_tally_init(&g[1]);
	g[0].sockets = g[0].on_iface = 3;
	g[1].sockets = 3;
	g[1].on_iface = 1;
	snprintf(g[1].off_iface, sizeof(g[1].off_iface), "eth0 10.77.0.3");
	is_int(sd_path_judge("gloo", "tcp", "eth1", g, across, 2, host_of,
			     ranks, &asked, &took, reason, sizeof(reason)),
	       1, "gloo with an iface: judged");
	ok(asked == 6 && took == 4, "4 of 6 (%d of %d)", took, asked);
	ok(!strcmp(reason, "asked for tcp eth1, 2 of 6 TCP connections went "
			   "over eth0 10.77.0.3 instead (first: rank 2 on "
			   "node2)"),
	   "its reason: %s", reason);
	g[1].on_iface = 3;
	sd_path_judge("gloo", "", "eth1", g, across, 2, host_of, ranks, &asked,
		      &took, reason, sizeof(reason));
	ok(!strcmp(reason, "6 of 6 TCP connections over eth1"), "%s", reason);
	is_int(sd_path_judge("gloo", "tcp", "", g, across, 2, host_of, ranks,
			     &asked, &took, reason, sizeof(reason)),
	       0, "gloo without an iface: nothing judged");
}

/* A real TCP connection on loopback, read back from the kernel's table. */
static void test_sockets(void)
{
	int ls = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = { .sin_family = AF_INET };
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	socklen_t al = sizeof(a);
	int c = -1, s = -1;
	if (ls >= 0 && !bind(ls, (struct sockaddr *)&a, sizeof(a)) &&
	    !listen(ls, 1) && !getsockname(ls, (struct sockaddr *)&a, &al)) {
		c = socket(AF_INET, SOCK_STREAM, 0);
		if (c >= 0 && !connect(c, (struct sockaddr *)&a, sizeof(a)))
			s = accept(ls, NULL, NULL);
	}
	ok(s >= 0, "a loopback connection");
	struct sd_path_tally t;
	sd_path_tally_init(&t);
	is_int(sd_path_read_sockets(NULL, getpid(), "lo", &t), 0,
	       "read this process's sockets");
	is_int(t.sockets, 2, "both ends established (the listener is not)");
	is_int(t.on_iface, 2, "both on lo");
	sd_path_tally_init(&t);
	sd_path_read_sockets(NULL, getpid(), "eth9", &t);
	ok(t.sockets == 2 && t.on_iface == 0 &&
		   !strcmp(t.off_iface, "lo 127.0.0.1"),
	   "asked for eth9: off on %s", t.off_iface);
	sd_path_tally_init(&t);
	is_int(sd_path_read_sockets(dir, 1, "lo", &t), -1,
	       "a /proc without the process: -1");
	ok(strstr(t.err, "cannot list") != NULL, "saying so: %s", t.err);
	close(s);
	close(c);
	close(ls);
}

int main(void)
{
	if (!mkdtemp(dir)) {
		printf("Bail out! no temporary folder\n");
		return 1;
	}
	test_read_nccl();
	test_possible();
	test_judge();
	test_sockets();
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		printf("# could not remove %s\n", dir);
	return done_testing();
}
