/*
 * unit_nccl_transport.c - TAP test of lib/nccl_transport.c: which transport
 * NCCL used per connection, read from its INFO lines.  The rows are lines
 * as NCCL 2.28.9 prints them (the formats of src/transport/p2p.cc, shm.cc,
 * net.cc, coll_net.cc and nvls.cc after debug.cc's prefix), lines that are
 * not connections, malformed lines, then whole logs and the messages of
 * sd_nccl_paths_expect().
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "nccl_transport.h"
#include "shakedown/backend.h"
#include "tap.h"

#define PFX "node3:12345:12399 [0] NCCL INFO "

/* A connection line and what parse_line makes of it. */
struct row {
	const char *line;
	int channel, conn_index, from_rank, from_dev, to_rank, to_dev, send;
	enum sd_nccl_path path;
	const char *via, *host;
};

#define P2P SD_NCCL_PATH_P2P
#define SHM SD_NCCL_PATH_SHM
#define SOCK SD_NCCL_PATH_NET_SOCKET
#define IB SD_NCCL_PATH_NET_IB

static const struct row rows[] = {
	/* p2p.cc: send side only, no tag */
	{ PFX "Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM/read",
	  0, 0, 0, 0, 1, 1, 1, P2P, "P2P/CUMEM/read", "node3" },
	{ PFX "Channel 01/1 : 1[1] -> 0[0] via P2P/IPC",
	  1, 1, 1, 1, 0, 0, 1, P2P, "P2P/IPC", "node3" },
	{ PFX "Channel 02/0 : 0[0] -> 1[1] via P2P/direct pointer/read",
	  2, 0, 0, 0, 1, 1, 1, P2P, "P2P/direct pointer/read", "node3" },
	{ PFX "Channel 07/0 : 4[4] -> 5[5] via P2P/MNNVL/read",
	  7, 0, 4, 4, 5, 5, 1, P2P, "P2P/MNNVL/read", "node3" },
	{ PFX "Channel 03/0 : 2[2] -> 3[3] via P2P/indirect/1[1]/read",
	  3, 0, 2, 2, 3, 3, 1, P2P, "P2P/indirect/1[1]/read", "node3" },
	{ PFX "Channel 04/0 : 2[2] -> 3[3] via P2P/CUMEM/CE",
	  4, 0, 2, 2, 3, 3, 1, P2P, "P2P/CUMEM/CE", "node3" },
	/* shm.cc: no connection index; 2.30 prints "SHM/direct" */
	{ "gpu-a07:811:902 [2] NCCL INFO Channel 00 : 2[2] -> 3[3] via "
	  "SHM/direct/direct",
	  0, 0, 2, 2, 3, 3, 1, SHM, "SHM/direct/direct", "gpu-a07" },
	{ PFX "Channel 05 : 3[3] -> 0[0] via SHM/direct",
	  5, 0, 3, 3, 0, 0, 1, SHM, "SHM/direct", "node3" },
	/* net.cc: tagged, the sender first on a [receive] line too */
	{ "node1:2001:2050 [0] NCCL INFO Channel 00/0 : 0[0] -> 8[0] [send] "
	  "via NET/Socket/0",
	  0, 0, 0, 0, 8, 0, 1, SOCK, "NET/Socket/0", "node1" },
	{ "node2:3001:3044 [0] NCCL INFO Channel 00/0 : 0[0] -> 8[0] "
	  "[receive] via NET/IB/0/GDRDMA",
	  0, 0, 0, 0, 8, 0, 0, IB, "NET/IB/0/GDRDMA", "node2" },
	{ PFX "Channel 01/0 : 3[3] -> 11[3] [send] via "
	      "NET/IB/3(2)/GDRDMA(PCI)/Shared",
	  1, 0, 3, 3, 11, 3, 1, IB, "NET/IB/3(2)/GDRDMA(PCI)/Shared",
	  "node3" },
	{ PFX "Channel 02/1 : 8[0] -> 0[0] [send] via NET/IBext_v8/1/GDRDMA",
	  2, 1, 8, 0, 0, 0, 1, IB, "NET/IBext_v8/1/GDRDMA", "node3" },
	{ PFX "Channel 00/0 : 0[0] -> 2[0] [send] via NET/Libfabric/0/GDRDMA",
	  0, 0, 0, 0, 2, 0, 1, SD_NCCL_PATH_OTHER_NET,
	  "NET/Libfabric/0/GDRDMA", "node3" },
	/* coll_net.cc: one rank and the network */
	{ "node1:2001:2050 [0] NCCL INFO CollNet 00/0 : 0 [send] via "
	  "COLLNET/SHARP/0/GDRDMA",
	  0, 0, 0, -1, -1, -1, 1, SD_NCCL_PATH_COLLNET,
	  "COLLNET/SHARP/0/GDRDMA", "node1" },
	{ PFX "CollNet 01/1 : 4 [receive] via COLLNET/SHARP/1",
	  1, 1, -1, -1, 4, -1, 0, SD_NCCL_PATH_COLLNET, "COLLNET/SHARP/1",
	  "node3" },
	/* nvls.cc ncclNvlsBufferSetup */
	{ PFX "NVLS comm 0x55d0c8a3e2b0 headRank 0 nHeads 4 nvlsRanks 8 "
	      "buffSize 1048576 nvlsPerRankSize 50331648 nvlsTotalSize "
	      "201326592",
	  -1, 0, -1, -1, -1, -1, 1, SD_NCCL_PATH_NVLS, "NVLS", "node3" },
	/* prefixes: timestamp, launcher label, none, CRLF, blanks */
	{ "[2025-06-01 12:00:00] node3:12345:12399 [0] NCCL INFO Channel "
	  "00/0 : 0[0] -> 1[1] via P2P/CUMEM",
	  0, 0, 0, 0, 1, 1, 1, P2P, "P2P/CUMEM", "node3" },
	{ "3: gpu12:7:8 [3] NCCL INFO Channel 09/0 : 3[3] -> 0[0] via P2P/IPC",
	  9, 0, 3, 3, 0, 0, 1, P2P, "P2P/IPC", "gpu12" },
	{ "Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM/read",
	  0, 0, 0, 0, 1, 1, 1, P2P, "P2P/CUMEM/read", "" },
	{ "[0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM",
	  0, 0, 0, 0, 1, 1, 1, P2P, "P2P/CUMEM", "" },
	{ PFX "Channel 10/0 : 0[0] -> 8[0] [send] via NET/Socket/1  \r\n",
	  10, 0, 0, 0, 8, 0, 1, SOCK, "NET/Socket/1", "node3" },
	/* a transport this parser does not know is still a connection */
	{ PFX "Channel 00/0 : 0[0] -> 1[1] via XYZ/0",
	  0, 0, 0, 0, 1, 1, 1, SD_NCCL_PATH_UNKNOWN, "XYZ/0", "node3" },
	/* a long via is cut to 47 characters */
	{ PFX "Channel 00/0 : 0[0] -> 1[1] [send] via NET/"
	      "AVeryLongNetworkPluginName_v11/12/GDRDMA(PCI)/Shared",
	  0, 0, 0, 0, 1, 1, 1, SD_NCCL_PATH_OTHER_NET,
	  "NET/AVeryLongNetworkPluginName_v11/12/GDRDMA(PC", "node3" },
};

/* Lines that parse_line must refuse (0, out left alone). */
static const char *const refused[] = {
	/* NCCL lines that are not connections */
	PFX "Channel 00/02 : 0 1 2 3",
	PFX "Channel 00/24 :    0   1   2   3",
	PFX "Connected all rings, use ring PXN 0 GDR 1",
	PFX "Connected all trees",
	PFX "Ring 00 : 3 -> 0 -> 1",
	PFX "Trees [0] 1/-1/-1->0->-1 [1] 1/-1/-1->0->-1",
	PFX "NVLS multicast support is available on dev 0 (NVLS_NCHANNELS "
	    "16)",
	PFX "Connected NVLS tree",
	PFX "NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB ; OOB "
	    "ib0:10.0.0.1<0>",
	PFX "NCCL_P2P_LEVEL set by environment to NVL",
	"node3:12345:12399 [0] transport.cc:39 NCCL WARN No transport found "
	"for rank 0[1000] -> rank 1[2000]",
	"node3:1:2 [0] 12.345000 p2p.cc:501 NCCL TRACE Ring 00 : 1[1] <- "
	"0[0] via P2P/CUMEM",
	"# nccl-tests: Rank  0 Group  0 Pid  12345 on node3 device  0",
	/* malformed or cut */
	"",
	PFX,
	PFX "Channel 00/0 : 0[0] -> 1[1]",
	PFX "Channel 00/0 : 0[0] -> 1[1] via ",
	PFX "Channel 00/0 : 0[0] -> 1[1] via  P2P/CUMEM",
	PFX "Channel xx/0 : 0[0] -> 1[1] via P2P/CUMEM",
	PFX "Channel 00/ : 0[0] -> 1[1] via P2P/CUMEM",
	PFX "Channel -1/0 : 0[0] -> 1[1] via P2P/CUMEM",
	PFX "Channel 00/0 : 0[0] -> 1 via P2P/CUMEM",
	PFX "Channel 00/0 : 0[0] => 1[1] via P2P/CUMEM",
	PFX "Channel 00/0 : 0[0 -> 1[1] via P2P/CUMEM",
	PFX "Channel 00/0 : 12345678901[0] -> 1[1] via P2P/CUMEM",
	PFX "Channel 00/0 : 0[0] -> 1[1] [sent] via NET/IB/0",
	PFX "Channel 00/0 : 0[0] -> 1[1] via",
	PFX "CollNet 00/0 : 0 via COLLNET/SHARP/0",
	PFX "CollNet 00 : 0 [send] via COLLNET/SHARP/0",
	PFX "CollNet 00/0 : 0 [send] via ",
	PFX "NVLS comm 0x1 headRank x nHeads 4",
	PFX "NVLS comm 0x1",
};

static void check_rows(void)
{
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct row *r = &rows[i];
		struct sd_nccl_conn c;
		memset(&c, 0x5a, sizeof(c));
		is_int(sd_nccl_transport_parse_line(r->line, &c), 1,
		       "row %zu is a connection: '%.*s'", i,
		       (int)strcspn(r->line, "\r\n"), r->line);
		int fields = c.channel == r->channel &&
			     c.conn_index == r->conn_index &&
			     c.from_rank == r->from_rank &&
			     c.from_dev == r->from_dev &&
			     c.to_rank == r->to_rank && c.to_dev == r->to_dev &&
			     c.send == r->send && c.path == r->path;
		ok(fields, "row %zu: channel %d/%d %d[%d] -> %d[%d] send %d %s",
		   i, r->channel, r->conn_index, r->from_rank, r->from_dev,
		   r->to_rank, r->to_dev, r->send, sd_nccl_path_name(r->path));
		if (!fields)
			printf("#   got %d/%d %d[%d] -> %d[%d] send %d %s\n",
			       c.channel, c.conn_index, c.from_rank,
			       c.from_dev, c.to_rank, c.to_dev, c.send,
			       sd_nccl_path_name(c.path));
		int words = !strcmp(c.via, r->via) && !strcmp(c.host, r->host);
		ok(words, "row %zu: via '%s' host '%s'", i, r->via, r->host);
		if (!words)
			printf("#   got via '%s' host '%s'\n", c.via, c.host);
	}
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		struct sd_nccl_conn c;
		memset(&c, 0x5a, sizeof(c));
		int ret = sd_nccl_transport_parse_line(refused[i], &c);
		ok(ret == 0 && c.channel == 0x5a5a5a5a,
		   "not a connection, out left alone: '%s'", refused[i]);
	}
	struct sd_nccl_conn c;
	is_int(sd_nccl_transport_parse_line(NULL, &c), 0, "NULL line: 0");
	is_int(sd_nccl_transport_parse_line(PFX "Channel 00/0 : 0[0] -> 1[1] "
					    "via P2P/IPC",
					    NULL),
	       0, "NULL out: 0");
}

static void check_names(void)
{
	static const struct {
		enum sd_nccl_path path;
		const char *name;
	} names[] = {
		{ SD_NCCL_PATH_UNKNOWN, "unknown" },
		{ SD_NCCL_PATH_P2P, "p2p" },
		{ SD_NCCL_PATH_SHM, "shm" },
		{ SD_NCCL_PATH_NET_SOCKET, "net/socket" },
		{ SD_NCCL_PATH_NET_IB, "net/ib" },
		{ SD_NCCL_PATH_COLLNET, "collnet" },
		{ SD_NCCL_PATH_NVLS, "nvls" },
		{ SD_NCCL_PATH_OTHER_NET, "net" },
		{ SD_NCCL_PATH_COUNT, "unknown" },
		{ (enum sd_nccl_path)-1, "unknown" },
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		ok(!strcmp(sd_nccl_path_name(names[i].path), names[i].name),
		   "path %d is '%s'", (int)names[i].path, names[i].name);

	static const struct {
		const char *via;
		enum sd_nccl_path path;
	} vias[] = {
		{ "P2P/CUMEM", SD_NCCL_PATH_P2P },
		{ "SHM", SD_NCCL_PATH_SHM },
		{ "SHM/CE/direct", SD_NCCL_PATH_SHM },
		{ "SHMX/direct", SD_NCCL_PATH_UNKNOWN },
		{ "NET/IB/0", SD_NCCL_PATH_NET_IB },
		{ "NET/IBext/0", SD_NCCL_PATH_NET_IB },
		{ "NET/IBX/0", SD_NCCL_PATH_OTHER_NET },
		{ "NET/Socket/0", SD_NCCL_PATH_NET_SOCKET },
		{ "NET/Sockets/0", SD_NCCL_PATH_OTHER_NET },
		{ "NET/UCX/0", SD_NCCL_PATH_OTHER_NET },
		{ "NET/IB", SD_NCCL_PATH_NET_IB },
		{ "NET//0", SD_NCCL_PATH_UNKNOWN },
		{ "NET", SD_NCCL_PATH_UNKNOWN },
		{ "COLLNET/SHARP/0", SD_NCCL_PATH_COLLNET },
		{ "NVLS", SD_NCCL_PATH_NVLS },
		{ "p2p/cumem", SD_NCCL_PATH_UNKNOWN },
		{ "", SD_NCCL_PATH_UNKNOWN },
		{ NULL, SD_NCCL_PATH_UNKNOWN },
	};
	for (size_t i = 0; i < sizeof(vias) / sizeof(vias[0]); i++)
		is_int(sd_nccl_path_of_via(vias[i].via), vias[i].path,
		       "via '%s' is %s", vias[i].via ? vias[i].via : "(null)",
		       sd_nccl_path_name(vias[i].path));
}

/* Two hosts of four GPUs, ring over P2P inside a host, IB between. */
static const char log_two_hosts[] =
	"node1:100:101 [0] NCCL INFO NCCL version 2.28.9+cuda12.9\n"
	"node1:100:101 [0] NCCL INFO Channel 00/02 : 0 1 2 3 4 5 6 7\n"
	"node1:100:101 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via "
	"P2P/CUMEM/read\n"
	"node1:100:101 [0] NCCL INFO Channel 00/0 : 7[3] -> 0[0] [receive] via "
	"NET/IB/0/GDRDMA\n"
	"node1:200:201 [3] NCCL INFO Channel 00/0 : 3[3] -> 4[0] [send] via "
	"NET/IB/3/GDRDMA\n"
	"node2:300:301 [0] NCCL INFO Channel 00/0 : 3[3] -> 4[0] [receive] via "
	"NET/IB/0/GDRDMA\n"
	"node2:300:301 [0] NCCL INFO Channel 00/0 : 4[0] -> 5[1] via "
	"P2P/CUMEM/read\n"
	"node2:400:401 [3] NCCL INFO Channel 00/0 : 7[3] -> 0[0] [send] via "
	"NET/IB/3/GDRDMA\n"
	"node2:400:401 [3] NCCL INFO Connected all rings, use ring PXN 0 GDR 1\n"
	"\n"
	"node2:400:401 [3] NCCL INFO Channel 01/0 : 7[3] -> 0[0] [send] via "
	"NET/Socket/0"; /* the last line has no newline */

static void check_logs(void)
{
	struct sd_nccl_paths p;
	char err[256] = "", msg[512];
	memset(&p, 0, sizeof(p));
	is_int(sd_nccl_transport_read_text(log_two_hosts, &p, err, sizeof(err)),
	       SD_OK, "read a two-host log");
	is_int(p.total, 5, "5 connections counted on their send side");
	is_int(p.connections[SD_NCCL_PATH_P2P], 2, "2 over P2P");
	is_int(p.connections[SD_NCCL_PATH_NET_IB], 2, "2 over IB");
	is_int(p.connections[SD_NCCL_PATH_NET_SOCKET], 1, "1 over sockets");
	is_int(p.received_total, 2, "2 receive lines apart");
	is_int(p.received[SD_NCCL_PATH_NET_IB], 2, "both over IB");
	ok(!strcmp(p.example[SD_NCCL_PATH_NET_IB], "NET/IB/0/GDRDMA"),
	   "the first IB via is kept: '%s'", p.example[SD_NCCL_PATH_NET_IB]);

	is_int(sd_nccl_paths_expect(&p, "ib", msg, sizeof(msg)), 1,
	       "asked for ib: not all");
	ok(!strcmp(msg, "asked for ib, NCCL used P2P for 2, NET/Socket for 1 "
			"of 5 connections; ranks on one host talk without the "
			"network: place one rank per host, or set "
			"NCCL_P2P_DISABLE=1, NCCL_SHM_DISABLE=1 and "
			"NCCL_NVLS_ENABLE=0 in the job's environment"),
	   "its message: %s", msg);

	/* the same log as a file, with a line too long to be NCCL's */
	FILE *f = tmpfile();
	ok(f != NULL, "a temporary file");
	if (!f)
		return;
	fputs(log_two_hosts, f);
	fputs("\n", f);
	for (int i = 0; i < 300; i++)
		fputs("xxxxxxxxxx", f);
	fputs(PFX "Channel 00/0 : 0[0] -> 1[1] via SHM/direct/direct\n", f);
	rewind(f);
	struct sd_nccl_paths q;
	memset(&q, 0, sizeof(q));
	is_int(sd_nccl_transport_read(f, &q, err, sizeof(err)), SD_OK,
	       "read the log from a file");
	is_int(q.total, 5, "the same 5 connections; the long line skipped");
	is_int(q.connections[SD_NCCL_PATH_SHM], 0, "no SHM from the long line");
	rewind(f);
	is_int(sd_nccl_transport_read(f, &q, err, sizeof(err)), SD_OK,
	       "read it again into the same summary");
	is_int(q.total, 10, "reads add up");
	fclose(f);

	is_int(sd_nccl_transport_read(NULL, &q, err, sizeof(err)),
	       SD_ERR_INVALID, "no file: invalid");
	ok(strstr(err, "no NCCL log to read") != NULL, "its message: %s", err);
	is_int(sd_nccl_transport_read_text(NULL, &q, NULL, 0), SD_ERR_INVALID,
	       "no text: invalid, no message buffer");
	is_int(sd_nccl_transport_read_text("x", NULL, err, sizeof(err)),
	       SD_ERR_INVALID, "no summary: invalid");
}

/* A summary made of lines, through the public calls. */
static struct sd_nccl_paths of(const char *const *lines)
{
	struct sd_nccl_paths p;
	memset(&p, 0, sizeof(p));
	for (; *lines; lines++) {
		struct sd_nccl_conn c;
		if (sd_nccl_transport_parse_line(*lines, &c))
			sd_nccl_paths_add(&p, &c);
	}
	return p;
}

struct expect_row {
	const char *want;
	int ret;
	const char *msg; /* the whole message, or its start with '*' last */
};

static void check_expect(const char *what, const struct sd_nccl_paths *p,
			 const struct expect_row *rows_, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct expect_row *r = &rows_[i];
		char msg[512];
		int ret = sd_nccl_paths_expect(p, r->want, msg, sizeof(msg));
		size_t k = strlen(r->msg);
		int prefix = k && r->msg[k - 1] == '*';
		int same = prefix ? !strncmp(msg, r->msg, k - 1)
				  : !strcmp(msg, r->msg);
		ok(ret == r->ret && same, "%s, want %s: %d '%s'", what,
		   r->want ? r->want : "(null)", r->ret, r->msg);
		if (ret != r->ret || !same)
			printf("#   got %d '%s'\n", ret, msg);
	}
}

static void check_expects(void)
{
	static const char *const nvlink[] = {
		PFX "Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM/read",
		PFX "Channel 00/0 : 1[1] -> 2[2] via P2P/CUMEM/read",
		PFX "Channel 01/0 : 2[2] -> 3[3] via P2P/CUMEM/read",
		PFX "Channel 01/0 : 3[3] -> 0[0] via P2P/CUMEM/read",
		PFX "Channel 00/02 : 0 1 2 3",
		NULL
	};
	struct sd_nccl_paths p = of(nvlink);
	static const struct expect_row p2p_rows[] = {
		{ "nvlink", 0, "" },
		{ "pcie", 0, "" },
		{ "p2p", 0, "" },
		{ "shm", 1,
		  "asked for shm, NCCL used P2P for 4 of 4 connections; set "
		  "NCCL_P2P_DISABLE=1 and NCCL_NVLS_ENABLE=0 in the job's "
		  "environment to test shared memory" },
		{ "tcp", 1,
		  "asked for tcp, NCCL used P2P for 4 of 4 connections; ranks "
		  "on one host talk without the network*" },
		{ "nvswitch", -1,
		  "unknown path 'nvswitch' to expect; use nvlink, pcie, p2p, "
		  "shm, tcp or ib" },
		{ NULL, -1, "unknown path '(none)'*" },
	};
	check_expect("4 GPUs over P2P", &p, p2p_rows,
		     sizeof(p2p_rows) / sizeof(p2p_rows[0]));

	/* 8 ranks, one per host: 5 channels over IB, 3 fell back to TCP */
	static const char *const ib[] = {
		PFX "Channel 00/0 : 0[0] -> 1[0] [send] via NET/IB/0/GDRDMA",
		PFX "Channel 01/0 : 0[0] -> 1[0] [send] via NET/IB/1/GDRDMA",
		PFX "Channel 02/0 : 0[0] -> 1[0] [send] via NET/IB/2/GDRDMA",
		PFX "Channel 03/0 : 0[0] -> 1[0] [send] via NET/IB/3/GDRDMA",
		PFX "Channel 04/0 : 0[0] -> 1[0] [send] via NET/IB/0/GDRDMA",
		PFX "Channel 05/0 : 1[0] -> 2[0] [send] via NET/Socket/0",
		PFX "Channel 06/0 : 1[0] -> 2[0] [send] via NET/Socket/1",
		PFX "Channel 07/0 : 1[0] -> 2[0] [send] via NET/Socket/0",
		PFX "Channel 00/0 : 7[0] -> 0[0] [receive] via NET/Socket/0",
		NULL
	};
	p = of(ib);
	static const struct expect_row ib_rows[] = {
		{ "ib", 1,
		  "asked for ib, NCCL used NET/Socket for 3 of 8 connections; "
		  "NCCL found no usable IB device: check the ports (ibstat), "
		  "NCCL_IB_HCA and NCCL_IB_DISABLE, and that no process_env "
		  "overrides NCCL_NET=IB" },
		{ "tcp", 1,
		  "asked for tcp, NCCL used NET/IB for 5 of 8 connections; "
		  "transport: tcp sets NCCL_NET=Socket: check that no "
		  "process_env overrides it" },
		{ "nvlink", 1,
		  "asked for nvlink, NCCL used NET/Socket for 3, NET/IB for 5 "
		  "of 8 connections; ranks on different hosts need the "
		  "network: run the test's ranks on one host" },
	};
	check_expect("8 hosts, IB and TCP", &p, ib_rows,
		     sizeof(ib_rows) / sizeof(ib_rows[0]));

	/* NVLS is NVLink: fine for nvlink, not for pcie */
	static const char *const nvls[] = {
		PFX "Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM",
		PFX "NVLS comm 0x7f00 headRank 0 nHeads 2 nvlsRanks 2 buffSize "
		    "1048576 nvlsPerRankSize 4194304 nvlsTotalSize 8388608",
		NULL
	};
	p = of(nvls);
	static const struct expect_row nvls_rows[] = {
		{ "nvlink", 0, "" },
		{ "p2p", 0, "" },
		{ "pcie", 1,
		  "asked for pcie, NCCL used NVLS for 1 of 2 connections; NVLS "
		  "runs over NVLink: set NCCL_NVLS_ENABLE=0 in the job's "
		  "environment to test P2P alone" },
		{ "shm", 1, "asked for shm, NCCL used P2P for 1, NVLS for 1 of 2 "
			    "connections*" },
	};
	check_expect("P2P and NVLS", &p, nvls_rows,
		     sizeof(nvls_rows) / sizeof(nvls_rows[0]));

	/* SHM where P2P was wanted; a CollNet and an unknown transport */
	static const char *const mixed[] = {
		PFX "Channel 00 : 0[0] -> 1[1] via SHM/direct/direct",
		PFX "CollNet 00/0 : 0 [send] via COLLNET/SHARP/0/GDRDMA",
		PFX "Channel 00/0 : 0[0] -> 1[1] [send] via NET/IB/0",
		PFX "Channel 01/0 : 0[0] -> 1[1] via WARP/0",
		NULL
	};
	p = of(mixed);
	static const struct expect_row mixed_rows[] = {
		{ "pcie", 1,
		  "asked for pcie, NCCL used WARP/0 for 1, SHM for 1, NET/IB "
		  "for 1, COLLNET/SHARP for 1 of 4 connections; this NCCL "
		  "names a transport that shakedown does not know: read the "
		  "log's \"via\" words" },
		{ "ib", 1,
		  "asked for ib, NCCL used WARP/0 for 1, SHM for 1, "
		  "COLLNET/SHARP for 1 of 4 connections; this NCCL names*" },
	};
	check_expect("SHM, CollNet, IB, unknown", &p, mixed_rows,
		     sizeof(mixed_rows) / sizeof(mixed_rows[0]));

	static const char *const shm_only[] = {
		PFX "Channel 00 : 0[0] -> 1[1] via SHM/direct/direct",
		PFX "Channel 01 : 1[1] -> 0[0] via SHM/direct/direct", NULL
	};
	p = of(shm_only);
	static const struct expect_row shm_rows[] = {
		{ "shm", 0, "" },
		{ "nvlink", 1,
		  "asked for nvlink, NCCL used SHM for 2 of 2 connections; NCCL "
		  "found no P2P path between these GPUs: check "
		  "NCCL_P2P_DISABLE, NCCL_P2P_LEVEL and `nvidia-smi topo -p2p "
		  "r`" },
	};
	check_expect("SHM only", &p, shm_rows,
		     sizeof(shm_rows) / sizeof(shm_rows[0]));

	/* one receiving rank's log only: judged on its receive lines */
	static const char *const recv_only[] = {
		PFX "Channel 00/0 : 0[0] -> 1[0] [receive] via NET/IB/0/GDRDMA",
		PFX "Channel 01/0 : 0[0] -> 1[0] [receive] via NET/IB/1/GDRDMA",
		NULL
	};
	p = of(recv_only);
	static const struct expect_row recv_rows[] = {
		{ "ib", 0, "" },
		{ "tcp", 1, "asked for tcp, NCCL used NET/IB for 2 of 2 "
			    "connections*" },
	};
	check_expect("receive lines only", &p, recv_rows,
		     sizeof(recv_rows) / sizeof(recv_rows[0]));

	static const char *const none[] = { PFX "Channel 00/01 : 0",
					    PFX "Connected all rings, use ring "
						"PXN 0 GDR 0",
					    NULL };
	p = of(none);
	static const struct expect_row none_rows[] = {
		{ "ib", 1,
		  "NCCL set up no peer connections (a one-rank communicator "
		  "uses none); with more ranks, check that NCCL ran with "
		  "NCCL_DEBUG=INFO and INIT in NCCL_DEBUG_SUBSYS" },
		{ "nvlink", 1, "NCCL set up no peer connections*" },
	};
	check_expect("one rank", &p, none_rows,
		     sizeof(none_rows) / sizeof(none_rows[0]));

	/* a short buffer gets the start of the message, terminated */
	p = of(nvlink);
	char small[16];
	memset(small, 'z', sizeof(small));
	is_int(sd_nccl_paths_expect(&p, "shm", small, sizeof(small)), 1,
	       "a 16-byte buffer: still 1");
	ok(!strcmp(small, "asked for shm, "), "cut to '%s'", small);
	is_int(sd_nccl_paths_expect(&p, "shm", NULL, 0), 1, "no buffer: 1");
	is_int(sd_nccl_paths_expect(NULL, "ib", small, sizeof(small)), -1,
	       "no summary: -1");
}

int main(void)
{
	check_rows();
	check_names();
	check_logs();
	check_expects();
	return done_testing();
}
