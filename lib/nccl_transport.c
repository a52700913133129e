/*
 * nccl_transport.c - read NCCL's INFO connection lines and say which
 * transport each peer connection used (see nccl_transport.h).
 *
 * The formats are NCCL's, read in NVIDIA/nccl at tag v2.28.9-1 (commit
 * dbc86fd06e8b0c4517b95d8958a09ccacf9520c9; unchanged since v2.27.7-1):
 *   src/transport/p2p.cc  p2pSendSetup: "Channel %02d/%01d : %d[%d] ->
 *       %d[%d] via P2P/direct pointer%s", "... via P2P/%s%s%s" (CUMEM or
 *       MNNVL, "/read", "/CE"), "... via P2P/IPC%s%s",
 *       "... via P2P/indirect/%d[%d]%s"; the receive side logs nothing
 *   src/transport/shm.cc  shmSendSetup: "Channel %02d : %d[%d] -> %d[%d]
 *       via SHM/%s/%s" (no connection index)
 *   src/transport/net.cc  "Channel %02d/%d : %d[%d] -> %d[%d] [send] via
 *       NET/%s/%d%s%s%s" (plugin name, device, "/GDRDMA", "(PCI)",
 *       "/Shared"), the same with "NET/%s/%d(%d)" through a proxy rank,
 *       and "[receive]" with the peer first
 *   src/transport/coll_net.cc  "CollNet %02d/%1d : %d [send] via
 *       COLLNET/%s/%d%s%s" and "[receive]"
 *   src/transport/nvls.cc ncclNvlsBufferSetup: "NVLS comm %p headRank %d
 *       nHeads %d nvlsRanks %d buffSize %zu ..."
 *   src/debug.cc ncclDebugLog: the prefix "%s:%d:%d " (host, pid, tid)
 *       then "[%d] NCCL INFO " (CUDA device), after an optional timestamp
 * The parser is a cursor over one line; nothing is copied from NCCL.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "nccl_transport.h"
#include "shakedown/backend.h"

/* NCCL writes at most 1024 bytes a line (debug.cc); a longer one is not
 * NCCL's and is skipped. */
#define LINE_MAX_BYTES 2048

/* A read position in [p, end). */
struct cur {
	const char *p, *end;
};

/* Match the literal s and step over it; 0 (position kept) if absent. */
static int lit(struct cur *c, const char *s)
{
	size_t n = strlen(s);
	if ((size_t)(c->end - c->p) < n || memcmp(c->p, s, n))
		return 0;
	c->p += n;
	return 1;
}

/* A decimal int, maybe negative, of at most 9 digits (so no overflow). */
static int num(struct cur *c, int *v)
{
	const char *q = c->p;
	int neg = 0, digits = 0, x = 0;
	if (q < c->end && *q == '-') {
		neg = 1;
		q++;
	}
	while (q < c->end && *q >= '0' && *q <= '9') {
		if (++digits > 9)
			return 0;
		x = x * 10 + (*q - '0');
		q++;
	}
	if (digits == 0)
		return 0;
	*v = neg ? -x : x;
	c->p = q;
	return 1;
}

/* "%d[%d]": a rank and its NVML device. */
static int rank_dev(struct cur *c, int *rank, int *dev)
{
	return num(c, rank) && lit(c, "[") && num(c, dev) && lit(c, "]");
}

/* Copy [p, p+n) into dst (size cap), cut to fit. */
static void copy_span(char *dst, size_t cap, const char *p, size_t n)
{
	if (n >= cap)
		n = cap - 1;
	memcpy(dst, p, n);
	dst[n] = '\0';
}

static int starts(const char *p, size_t n, const char *s)
{
	size_t k = strlen(s);
	return n >= k && !memcmp(p, s, k);
}

static enum sd_nccl_path path_of_span(const char *p, size_t n)
{
	if (starts(p, n, "P2P/"))
		return SD_NCCL_PATH_P2P;
	if (starts(p, n, "SHM/") || (n == 3 && starts(p, n, "SHM")))
		return SD_NCCL_PATH_SHM;
	if (starts(p, n, "COLLNET/"))
		return SD_NCCL_PATH_COLLNET;
	if (starts(p, n, "NVLS/") || (n == 4 && starts(p, n, "NVLS")))
		return SD_NCCL_PATH_NVLS;
	if (!starts(p, n, "NET/"))
		return SD_NCCL_PATH_UNKNOWN;
	/* NET/<plugin name>/<device>...: the name decides */
	const char *name = p + 4, *stop = name;
	while (stop < p + n && *stop != '/')
		stop++;
	size_t k = (size_t)(stop - name);
	if (k == 0)
		return SD_NCCL_PATH_UNKNOWN;
	if ((k == 2 && starts(name, k, "IB")) || starts(name, k, "IBext"))
		return SD_NCCL_PATH_NET_IB;
	if (k == 6 && starts(name, k, "Socket"))
		return SD_NCCL_PATH_NET_SOCKET;
	return SD_NCCL_PATH_OTHER_NET;
}

enum sd_nccl_path sd_nccl_path_of_via(const char *via)
{
	return via ? path_of_span(via, strlen(via)) : SD_NCCL_PATH_UNKNOWN;
}

const char *sd_nccl_path_name(enum sd_nccl_path path)
{
	switch (path) {
	case SD_NCCL_PATH_P2P: return "p2p";
	case SD_NCCL_PATH_SHM: return "shm";
	case SD_NCCL_PATH_NET_SOCKET: return "net/socket";
	case SD_NCCL_PATH_NET_IB: return "net/ib";
	case SD_NCCL_PATH_COLLNET: return "collnet";
	case SD_NCCL_PATH_NVLS: return "nvls";
	case SD_NCCL_PATH_OTHER_NET: return "net";
	default: return "unknown";
	}
}

/* "[send] " (1) or "[receive] " (0); -1 when neither. */
static int direction(struct cur *c)
{
	if (lit(c, "[send] "))
		return 1;
	if (lit(c, "[receive] "))
		return 0;
	return -1;
}

/* The rest of the line after "via ": NCCL's words, trailing blanks cut. */
static int via_rest(struct cur *c, struct sd_nccl_conn *conn)
{
	const char *e = c->end;
	while (e > c->p && (e[-1] == ' ' || e[-1] == '\t'))
		e--;
	if (e == c->p || *c->p == ' ')
		return 0;
	conn->path = path_of_span(c->p, (size_t)(e - c->p));
	copy_span(conn->via, sizeof(conn->via), c->p, (size_t)(e - c->p));
	return 1;
}

/* "Channel %02d[/%d] : %d[%d] -> %d[%d] [[send]|[receive] ]via ..." */
static int parse_channel(struct cur *c, struct sd_nccl_conn *conn)
{
	if (!lit(c, "Channel ") || !num(c, &conn->channel) || conn->channel < 0)
		return 0;
	if (lit(c, "/") && !num(c, &conn->conn_index))
		return 0;
	if (!lit(c, " : ") || !rank_dev(c, &conn->from_rank, &conn->from_dev) ||
	    !lit(c, " -> ") || !rank_dev(c, &conn->to_rank, &conn->to_dev) ||
	    !lit(c, " "))
		return 0;
	/* NET tags its lines; P2P and SHM log on the send side only */
	conn->send = direction(c);
	if (conn->send < 0)
		conn->send = 1;
	return lit(c, "via ") && via_rest(c, conn);
}

/* "CollNet %02d/%1d : %d [send] via COLLNET/..." (and [receive]): one
 * rank and the network, so the other end stays -1. */
static int parse_collnet(struct cur *c, struct sd_nccl_conn *conn)
{
	int rank;
	if (!lit(c, "CollNet ") || !num(c, &conn->channel) ||
	    conn->channel < 0 || !lit(c, "/") || !num(c, &conn->conn_index) ||
	    !lit(c, " : ") || !num(c, &rank) || !lit(c, " "))
		return 0;
	conn->send = direction(c);
	if (conn->send < 0)
		return 0;
	if (conn->send)
		conn->from_rank = rank;
	else
		conn->to_rank = rank;
	return lit(c, "via ") && via_rest(c, conn);
}

/* "NVLS comm %p headRank %d nHeads %d ...": this rank's NVLS buffers. */
static int parse_nvls(struct cur *c, struct sd_nccl_conn *conn)
{
	int head, heads;
	if (!lit(c, "NVLS comm "))
		return 0;
	while (c->p < c->end && *c->p != ' ')
		c->p++;
	if (!lit(c, " headRank ") || !num(c, &head) || !lit(c, " nHeads ") ||
	    !num(c, &heads))
		return 0;
	conn->send = 1;
	conn->path = SD_NCCL_PATH_NVLS;
	copy_span(conn->via, sizeof(conn->via), "NVLS", 4);
	return 1;
}

/*
 * Find the message of an INFO line in [line, end): after "NCCL INFO ",
 * with the host from the "host:pid:tid [dev] " before it; without that
 * mark, the line itself (leading blanks skipped), so that a bare message
 * is read too while WARN and TRACE lines, which start with their own
 * prefix, match no connection format.
 */
static const char *message(const char *line, const char *end, char *host,
			   size_t hostcap)
{
	static const char mark[] = "NCCL INFO ";
	size_t k = sizeof(mark) - 1;
	const char *m = NULL;
	for (const char *q = line; q + k <= end; q++)
		if (*q == 'N' && !memcmp(q, mark, k)) {
			m = q;
			break;
		}
	host[0] = '\0';
	if (!m) {
		while (line < end && (*line == ' ' || *line == '\t'))
			line++;
		return line;
	}
	/* back over " [dev] " to the token "host:pid:tid" */
	const char *q = m;
	while (q > line && q[-1] == ' ')
		q--;
	if (q > line && q[-1] == ']') {
		q--;
		while (q > line && q[-1] != '[')
			q--;
		if (q > line)
			q--;
		while (q > line && q[-1] == ' ')
			q--;
		const char *tok_end = q;
		while (q > line && q[-1] != ' ' && q[-1] != '\t')
			q--;
		const char *colon = memchr(q, ':', (size_t)(tok_end - q));
		if (colon && colon > q)
			copy_span(host, hostcap, q, (size_t)(colon - q));
	}
	return m + k;
}

static int parse_span(const char *line, const char *end,
		      struct sd_nccl_conn *out)
{
	struct sd_nccl_conn conn;
	memset(&conn, 0, sizeof(conn));
	conn.channel = -1;
	conn.from_rank = conn.from_dev = conn.to_rank = conn.to_dev = -1;
	while (end > line && (end[-1] == '\n' || end[-1] == '\r'))
		end--;
	struct cur c = { message(line, end, conn.host, sizeof(conn.host)),
			 end };
	size_t n = (size_t)(end - c.p);
	int ok = 0;
	if (starts(c.p, n, "Channel "))
		ok = parse_channel(&c, &conn);
	else if (starts(c.p, n, "CollNet "))
		ok = parse_collnet(&c, &conn);
	else if (starts(c.p, n, "NVLS comm "))
		ok = parse_nvls(&c, &conn);
	if (!ok)
		return 0;
	*out = conn;
	return 1;
}

int sd_nccl_transport_parse_line(const char *line, struct sd_nccl_conn *out)
{
	if (!line || !out)
		return 0;
	return parse_span(line, line + strlen(line), out);
}

void sd_nccl_paths_add(struct sd_nccl_paths *paths,
		       const struct sd_nccl_conn *conn)
{
	if (!paths || !conn)
		return;
	int i = (unsigned)conn->path < SD_NCCL_PATH_COUNT ? (int)conn->path : 0;
	if (conn->send) {
		paths->connections[i]++;
		paths->total++;
	} else {
		paths->received[i]++;
		paths->received_total++;
	}
	if (!paths->example[i][0])
		copy_span(paths->example[i], sizeof(paths->example[i]),
			  conn->via, strlen(conn->via));
}

void sd_nccl_paths_merge(struct sd_nccl_paths *into,
			 const struct sd_nccl_paths *from)
{
	for (int p = 0; p < SD_NCCL_PATH_COUNT; p++) {
		into->connections[p] += from->connections[p];
		into->received[p] += from->received[p];
		if (!into->example[p][0])
			memcpy(into->example[p], from->example[p],
			       sizeof(into->example[p]));
	}
	into->total += from->total;
	into->received_total += from->received_total;
}

/* Write a message into err when there is one; returns rc. */
static int fail(int rc, char *err, size_t errlen, const char *fmt, ...)
{
	if (err && errlen) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return rc;
}

int sd_nccl_transport_read(FILE *f, struct sd_nccl_paths *out, char *err,
			   size_t errlen)
{
	char buf[LINE_MAX_BYTES];
	int in_long_line = 0;
	if (!f || !out)
		return fail(SD_ERR_INVALID, err, errlen,
			    "no NCCL log to read; pass an open file and a "
			    "summary to fill");
	while (fgets(buf, sizeof(buf), f)) {
		size_t n = strlen(buf);
		int whole = n > 0 && buf[n - 1] == '\n';
		if (!in_long_line && (whole || feof(f))) {
			struct sd_nccl_conn conn;
			if (parse_span(buf, buf + n, &conn))
				sd_nccl_paths_add(out, &conn);
		}
		in_long_line = !whole;
	}
	if (ferror(f))
		return fail(SD_ERR_IO, err, errlen,
			    "reading the NCCL log failed; check the file that "
			    "NCCL_DEBUG_FILE names");
	return SD_OK;
}

int sd_nccl_transport_read_text(const char *text, struct sd_nccl_paths *out,
				char *err, size_t errlen)
{
	if (!text || !out)
		return fail(SD_ERR_INVALID, err, errlen,
			    "no NCCL log to read; pass the log's text and a "
			    "summary to fill");
	while (*text) {
		const char *nl = strchr(text, '\n');
		const char *end = nl ? nl : text + strlen(text);
		struct sd_nccl_conn conn;
		if (parse_span(text, end, &conn))
			sd_nccl_paths_add(out, &conn);
		text = nl ? nl + 1 : end;
	}
	return SD_OK;
}

/* What each word of a test accepts, as a bit per path. */
#define BIT(p) (1u << (p))
static const struct {
	const char *want;
	unsigned accept;
	int net; /* asks for the network */
} wants[] = {
	{ "nvlink", BIT(SD_NCCL_PATH_P2P) | BIT(SD_NCCL_PATH_NVLS), 0 },
	{ "pcie", BIT(SD_NCCL_PATH_P2P), 0 },
	{ "p2p", BIT(SD_NCCL_PATH_P2P) | BIT(SD_NCCL_PATH_NVLS), 0 },
	{ "shm", BIT(SD_NCCL_PATH_SHM), 0 },
	{ "tcp", BIT(SD_NCCL_PATH_NET_SOCKET), 1 },
	{ "ib", BIT(SD_NCCL_PATH_NET_IB), 1 },
};

int sd_nccl_path_accepted(const char *want, enum sd_nccl_path path)
{
	for (size_t i = 0; want && i < sizeof(wants) / sizeof(wants[0]); i++)
		if (!strcmp(want, wants[i].want))
			return (unsigned)path < SD_NCCL_PATH_COUNT &&
			       (wants[i].accept & BIT(path)) != 0;
	return -1;
}

int sd_nccl_want_net(const char *want)
{
	for (size_t i = 0; want && i < sizeof(wants) / sizeof(wants[0]); i++)
		if (!strcmp(want, wants[i].want))
			return wants[i].net;
	return -1;
}

/* What to change when a test asked for `want` and NCCL took `got`. */
static const char *hint(const char *want, int want_net, enum sd_nccl_path got)
{
	switch (got) {
	case SD_NCCL_PATH_P2P:
	case SD_NCCL_PATH_SHM:
	case SD_NCCL_PATH_NVLS:
		if (want_net)
			return "ranks on one host talk without the network: "
			       "place one rank per host, or set "
			       "NCCL_P2P_DISABLE=1, NCCL_SHM_DISABLE=1 and "
			       "NCCL_NVLS_ENABLE=0 in the job's environment";
		if (got == SD_NCCL_PATH_SHM)
			return "NCCL found no P2P path between these GPUs: "
			       "check NCCL_P2P_DISABLE, NCCL_P2P_LEVEL and "
			       "`nvidia-smi topo -p2p r`";
		if (!strcmp(want, "shm"))
			return "set NCCL_P2P_DISABLE=1 and NCCL_NVLS_ENABLE=0 "
			       "in the job's environment to test shared "
			       "memory";
		return "NVLS runs over NVLink: set NCCL_NVLS_ENABLE=0 in the "
		       "job's environment to test P2P alone";
	case SD_NCCL_PATH_NET_SOCKET:
	case SD_NCCL_PATH_NET_IB:
	case SD_NCCL_PATH_OTHER_NET:
	case SD_NCCL_PATH_COLLNET:
		if (!want_net)
			return "ranks on different hosts need the network: "
			       "run the test's ranks on one host";
		if (got == SD_NCCL_PATH_COLLNET)
			return "set NCCL_COLLNET_ENABLE=0 in the test's "
			       "process_env to test the point-to-point "
			       "network";
		if (!strcmp(want, "ib"))
			return "NCCL found no usable IB device: check the "
			       "ports (ibstat), NCCL_IB_HCA and "
			       "NCCL_IB_DISABLE, and that no process_env "
			       "overrides NCCL_NET=IB";
		return "transport: tcp sets NCCL_NET=Socket: check that "
		       "no process_env overrides it";
	default:
		return "this NCCL names a transport that shakedown does not "
		       "know: read the log's \"via\" words";
	}
}

/* NCCL's word for a path, from the first "via" seen: the transport and,
 * for a network, its plugin ("NET/Socket", "COLLNET/SHARP"). */
static int word_len(const char *via, enum sd_nccl_path path)
{
	int slashes = path == SD_NCCL_PATH_NET_SOCKET ||
				      path == SD_NCCL_PATH_NET_IB ||
				      path == SD_NCCL_PATH_OTHER_NET ||
				      path == SD_NCCL_PATH_COLLNET
			      ? 2
			      : 1;
	if (path == SD_NCCL_PATH_UNKNOWN)
		return (int)strlen(via);
	int n = 0;
	while (via[n] && !(via[n] == '/' && --slashes == 0))
		n++;
	return n;
}

/* Append to msg at *used, cut to len. */
static void add(char *msg, size_t len, size_t *used, const char *fmt, ...)
{
	if (!msg || *used + 1 >= len)
		return;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(msg + *used, len - *used, fmt, ap);
	va_end(ap);
	if (n > 0)
		*used += (size_t)n < len - *used ? (size_t)n : len - *used - 1;
}

int sd_nccl_paths_expect(const struct sd_nccl_paths *paths, const char *want,
			 char *msg, size_t len)
{
	size_t w = sizeof(wants) / sizeof(wants[0]), used = 0;
	for (size_t i = 0; want && i < sizeof(wants) / sizeof(wants[0]); i++)
		if (!strcmp(want, wants[i].want))
			w = i;
	if (msg && len)
		msg[0] = '\0';
	if (!paths) {
		add(msg, len, &used,
		    "no summary of an NCCL log to check; "
		    "read the log first");
		return -1;
	}
	if (w == sizeof(wants) / sizeof(wants[0])) {
		add(msg, len, &used,
		    "unknown path '%s' to expect; use nvlink, pcie, p2p, shm, "
		    "tcp or ib",
		    want ? want : "(none)");
		return -1;
	}
	const int *count = paths->total ? paths->connections : paths->received;
	int total = paths->total ? paths->total : paths->received_total;
	if (total == 0) {
		add(msg, len, &used,
		    "NCCL set up no peer connections (a one-rank communicator "
		    "uses none); with more ranks, check that NCCL ran with "
		    "NCCL_DEBUG=INFO and INIT in NCCL_DEBUG_SUBSYS");
		return 1;
	}
	int wrong = 0, worst = -1;
	for (int p = 0; p < SD_NCCL_PATH_COUNT; p++)
		if (!(wants[w].accept & BIT(p)) && count[p] > 0) {
			wrong += count[p];
			if (worst < 0 || count[p] > count[worst])
				worst = p;
		}
	if (!wrong)
		return 0;
	add(msg, len, &used, "asked for %s, NCCL used ", want);
	for (int p = 0, first = 1; p < SD_NCCL_PATH_COUNT; p++) {
		if ((wants[w].accept & BIT(p)) || count[p] == 0)
			continue;
		const char *via = paths->example[p][0] ? paths->example[p]
						       : "an unknown transport";
		add(msg, len, &used, "%s%.*s for %d", first ? "" : ", ",
		    word_len(via, (enum sd_nccl_path)p), via, count[p]);
		first = 0;
	}
	add(msg, len, &used, " of %d connection%s; %s", total,
	    total == 1 ? "" : "s",
	    hint(want, wants[w].net, (enum sd_nccl_path)worst));
	return 1;
}
