/*
 * nccl_transport.h - which transport NCCL picked for each peer connection,
 * read from NCCL's own INFO log (NCCL_DEBUG=INFO, NCCL_DEBUG_SUBSYS
 * including INIT or NET, written to NCCL_DEBUG_FILE or stdout).
 *
 * NCCL decides per channel and per peer whether two ranks talk over
 * peer-to-peer GPU memory (NVLink or PCIe), host shared memory or a
 * network plugin, and says so in one INFO line per connection.  A test
 * that asked for a path ("run this over IB") checks here that NCCL took
 * it, instead of trusting a bandwidth number that a fallback to TCP or
 * shared memory would also produce.
 *
 * The lines read are those of NCCL 2.27.7 to 2.28.9 (the strings are the
 * same in all of them; 2.30 shortened "SHM/%s/%s" to "SHM/direct", which
 * is read too).  In the messages below, "%02d" and the like are NCCL's
 * own printf formats:
 *
 *   "Channel %02d/%01d : %d[%d] -> %d[%d] via P2P/..."      P2P, send side
 *   "Channel %02d : %d[%d] -> %d[%d] via SHM/%s/%s"         SHM, send side
 *   "Channel %02d/%d : %d[%d] -> %d[%d] [send] via NET/%s/%d%s%s%s"
 *   "Channel %02d/%d : %d[%d] -> %d[%d] [receive] via NET/%s/%d%s%s%s"
 *   "CollNet %02d/%1d : %d [send] via COLLNET/%s/%d%s%s"     (and [receive])
 *   "NVLS comm %p headRank %d nHeads %d nvlsRanks %d ..."    NVLS buffers
 *
 * each after NCCL's prefix "%s:%d:%d [%d] NCCL INFO " (host name cut at
 * its first dot, pid, tid, CUDA device), which may itself follow a
 * timestamp (NCCL_DEBUG_TIMESTAMP_FORMAT) or a launcher's label.  The
 * "[%d]" after a rank is its NVML device index.  A "[receive]" line names
 * the peer first: from_rank is the sender, to_rank the rank that logged it.
 *
 * What this cannot say: whether a P2P connection ran over NVLink or over
 * PCIe.  NCCL prints "P2P/CUMEM" or "P2P/IPC" for both; which link carried
 * it is a topology question (plugins/nccl/links.c, lib/topo.c).  So
 * "nvlink" and "pcie" both mean "P2P" at this level.
 *
 * Pure C, no CUDA and no NCCL headers.  Never prints, never exits.
 */
#ifndef SD_NCCL_TRANSPORT_H
#define SD_NCCL_TRANSPORT_H

#include <stddef.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* How a connection moved data, as NCCL's transports name it. */
enum sd_nccl_path {
	SD_NCCL_PATH_UNKNOWN = 0, /* a connection line with a transport
				    * this parser does not know */
	SD_NCCL_PATH_P2P,	  /* GPU to GPU over NVLink or PCIe:
				    * P2P/CUMEM, P2P/IPC, P2P/MNNVL,
				    * P2P/direct pointer, P2P/indirect */
	SD_NCCL_PATH_SHM,	  /* through host shared memory: SHM/... */
	SD_NCCL_PATH_NET_SOCKET,  /* NCCL's TCP sockets: NET/Socket/... */
	SD_NCCL_PATH_NET_IB,	  /* verbs, InfiniBand or RoCE, with or
				    * without GPUDirect RDMA: NET/IB/...,
				    * NET/IBext_v8/... (the RDMA plugin) */
	SD_NCCL_PATH_COLLNET,	  /* in-network reduction: COLLNET/... */
	SD_NCCL_PATH_NVLS,	  /* NVLink SHARP buffers (NVSwitch) */
	SD_NCCL_PATH_OTHER_NET,	  /* another network plugin: NET/<name>/... */
	SD_NCCL_PATH_COUNT	  /* the number of paths, not a path */
};

/* The longest "via" text kept and the longest host name, with the NUL. */
#define SD_NCCL_VIA_MAX 48
#define SD_NCCL_HOST_MAX 64

/* One connection line. */
struct sd_nccl_conn {
	int channel;	/* NCCL's channel; -1 on an NVLS line */
	int conn_index; /* the number after "/" (0 rings and trees, 1 send
			 * and receive); 0 when the line has none (SHM) */
	int from_rank, from_dev; /* sender: rank, NVML device; -1 unknown */
	int to_rank, to_dev;	 /* receiver; -1 unknown (CollNet, NVLS) */
	int send;		 /* 1 logged by the sender, 0 by the receiver */
	enum sd_nccl_path path;
	char via[SD_NCCL_VIA_MAX];   /* NCCL's words: "P2P/CUMEM/read",
				      * "NET/IB/0/GDRDMA"; cut to fit */
	char host[SD_NCCL_HOST_MAX]; /* the host that logged it, from the
				      * prefix; "" when the line has none */
};

/*
 * What a log says, summed over its connection lines.  Each connection is
 * counted once, on its sending side, so the send lines of every rank's
 * log add up to the communicator's connections; receive lines are counted
 * apart.  Zero the struct before the first read; reads add to it, so one
 * summary may gather one log per process (NCCL_DEBUG_FILE=nccl.%h.%p).
 */
struct sd_nccl_paths {
	int connections[SD_NCCL_PATH_COUNT]; /* send-side lines per path */
	int total;			     /* their sum */
	int received[SD_NCCL_PATH_COUNT];    /* receive-side lines per path */
	int received_total;
	char example[SD_NCCL_PATH_COUNT][SD_NCCL_VIA_MAX]; /* first "via"
				      * seen per path, for messages */
};

/*
 * The path's short name: "p2p", "shm", "net/socket", "net/ib", "collnet",
 * "nvls", "net" or "unknown" (also for a value out of range).  Static
 * storage.
 */
const char *sd_nccl_path_name(enum sd_nccl_path path);

/*
 * The path of NCCL's "via" text ("P2P/CUMEM/read" -> SD_NCCL_PATH_P2P,
 * "NET/IB/0/GDRDMA" -> SD_NCCL_PATH_NET_IB).  SD_NCCL_PATH_UNKNOWN for a
 * text it does not know or NULL.
 */
enum sd_nccl_path sd_nccl_path_of_via(const char *via);

/*
 * Parse one log line (its trailing newline optional).  Returns 1 and fills
 * *out when the line is one of NCCL's connection lines above; returns 0
 * and leaves *out alone for anything else (other INFO lines, WARN and
 * TRACE lines, the ring lists "Channel 00/02 : 0 1", malformed or cut
 * lines, NULL).  Never negative.
 */
int sd_nccl_transport_parse_line(const char *line, struct sd_nccl_conn *out);

/* Count one parsed connection into *paths (see struct sd_nccl_paths). */
void sd_nccl_paths_add(struct sd_nccl_paths *paths,
		       const struct sd_nccl_conn *conn);

/* Add one summary to another (one process's log to the job's): counts
 * summed, the first example of each path kept. */
void sd_nccl_paths_merge(struct sd_nccl_paths *into,
			 const struct sd_nccl_paths *from);

/*
 * Read a log from f to its end and add its connection lines to *out;
 * other lines are skipped.  Returns SD_OK, SD_ERR_INVALID (f or out NULL)
 * or SD_ERR_IO (a read error), with a message in err (errlen bytes, may
 * be NULL).  The caller opens and closes f.
 */
int sd_nccl_transport_read(FILE *f, struct sd_nccl_paths *out, char *err,
			   size_t errlen);

/*
 * The same over a log held in memory: NUL-terminated text, lines split at
 * '\n'.  Returns SD_OK or SD_ERR_INVALID (text or out NULL).
 */
int sd_nccl_transport_read_text(const char *text, struct sd_nccl_paths *out,
				char *err, size_t errlen);

/*
 * Check that every connection took the path a test asked for.
 * want: "nvlink" or "p2p" (P2P, or NVLS, which is NVLink too), "pcie"
 * (P2P only; which link carried it is not in the log, see above), "shm",
 * "tcp" (NET/Socket) or "ib" (NET/IB, RoCE included).  Send-side counts
 * are checked; a log that has only receive lines is checked on those.
 * Returns 0 when all matched; 1 when some did not, or when there were no
 * connections at all, with msg saying which path NCCL took instead, for
 * how many connections, and what to change ("asked for ib, NCCL used
 * NET/Socket for 3 of 8 connections; ..."); -1 for an unknown want or a
 * NULL paths, with msg naming the accepted words.  msg (len bytes) may
 * be NULL; the text is cut to fit.
 */
int sd_nccl_paths_expect(const struct sd_nccl_paths *paths, const char *want,
			 char *msg, size_t len);

/*
 * Whether path is one that want (as sd_nccl_paths_expect takes it)
 * accepts: 1 or 0; -1 for an unknown want.
 */
int sd_nccl_path_accepted(const char *want, enum sd_nccl_path path);

/*
 * Whether want is a path between hosts (tcp, ib: 1) or inside one (nvlink,
 * pcie, p2p, shm: 0); -1 for an unknown want.  A test's connections of the
 * other kind are not its to prove.
 */
int sd_nccl_want_net(const char *want);

#ifdef __cplusplus
}
#endif

#endif
