/*
 * path_proof.c - proof that a test's bytes took the path it asked for
 * (path_proof.h).
 */
#include "path_proof.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sink.h"

void sd_path_tally_init(struct sd_path_tally *t)
{
	memset(t, 0, sizeof(*t));
	t->bad_from = t->bad_to = -1;
}

static int failf(struct sd_path_tally *t, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(t->err, sizeof(t->err), fmt, ap);
	va_end(ap);
	return -1;
}

static int host(const int *host_of, int world)
{
	return host_of ? host_of[world] : 0;
}

int sd_path_read_nccl(const char *path, const char *want, int me,
		      const int *members, int n, const int *host_of,
		      struct sd_path_tally *out)
{
	int net = sd_nccl_want_net(want);
	if (net < 0)
		return failf(out, "'%s' is no path NCCL's log can prove",
			     want ? want : "(none)");
	if (me < 0 || me >= n || !members)
		return failf(out, "rank %d is not in its group", me);
	FILE *f = fopen(path, "r");
	if (!f)
		return failf(out, "cannot read NCCL's log %s: %s", path,
			     strerror(errno));
	char *line = NULL;
	size_t cap = 0;
	int mine = host(host_of, members[me]);
	while (getline(&line, &cap, f) > 0) {
		struct sd_nccl_conn c;
		if (!sd_nccl_transport_parse_line(line, &c) || !c.send ||
		    c.from_rank != me || c.to_rank < 0 || c.to_rank >= n ||
		    c.to_rank == me)
			continue;
		int across = host(host_of, members[c.to_rank]) != mine;
		if (across != net)
			continue; /* not the test's kind of connection */
		sd_nccl_paths_add(&out->paths, &c);
		if (sd_nccl_path_accepted(want, c.path) != 1 &&
		    out->bad_from < 0) {
			out->bad_from = members[me];
			out->bad_to = members[c.to_rank];
		}
	}
	int rc = ferror(f) ? failf(out, "reading NCCL's log %s: %s", path,
				   strerror(errno))
			   : 0;
	free(line);
	fclose(f);
	return rc;
}

/* The socket inodes among pid's open files; malloc'd, *n of them. */
static unsigned long *socket_inodes(const char *root, pid_t pid, size_t *n,
				    struct sd_path_tally *out)
{
	char dir[128];
	snprintf(dir, sizeof(dir), "%s/%d/fd", root, (int)pid);
	DIR *d = opendir(dir);
	*n = 0;
	if (!d) {
		failf(out, "cannot list %s: %s", dir, strerror(errno));
		return NULL;
	}
	size_t cap = 64;
	unsigned long *v = malloc(cap * sizeof(*v));
	struct dirent *e;
	while (v && (e = readdir(d))) {
		char p[400], link[64];
		if (e->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
		ssize_t k = readlink(p, link, sizeof(link) - 1);
		unsigned long ino;
		if (k <= 0)
			continue;
		link[k] = '\0';
		if (sscanf(link, "socket:[%lu]", &ino) != 1)
			continue;
		if (*n == cap) {
			unsigned long *w = realloc(v, 2 * cap * sizeof(*v));
			if (!w) {
				free(v);
				v = NULL;
				break;
			}
			v = w;
			cap *= 2;
		}
		v[(*n)++] = ino;
	}
	closedir(d);
	if (!v)
		failf(out, "out of memory");
	return v;
}

/* The interface holding local address a (family af, 4 or 16 bytes), or
 * "" when none does. */
static void iface_of(const struct ifaddrs *ifs, int af, const void *a,
		     char *name, size_t len)
{
	name[0] = '\0';
	for (const struct ifaddrs *i = ifs; i; i = i->ifa_next) {
		if (!i->ifa_addr || i->ifa_addr->sa_family != af)
			continue;
		const void *b =
			af == AF_INET
				? (const void *)&((const struct sockaddr_in *)
							  i->ifa_addr)
					  ->sin_addr
				: (const void *)&((const struct sockaddr_in6 *)
							  i->ifa_addr)
					  ->sin6_addr;
		if (!memcmp(a, b, af == AF_INET ? 4 : 16)) {
			snprintf(name, len, "%s", i->ifa_name);
			return;
		}
	}
}

/* Read one of /proc/PID/net/tcp and tcp6 into out. */
static int read_table(const char *file, int af, const unsigned long *inodes,
		      size_t ninodes, const struct ifaddrs *ifs,
		      const char *iface, struct sd_path_tally *out)
{
	FILE *f = fopen(file, "r");
	if (!f) {
		if (af == AF_INET6 && errno == ENOENT)
			return 0; /* a kernel without IPv6 */
		return failf(out, "cannot read %s: %s", file, strerror(errno));
	}
	char *line = NULL;
	size_t cap = 0;
	while (getline(&line, &cap, f) > 0) {
		char local[40], remote[40];
		unsigned lport, rport, st;
		unsigned long ino;
		/* "sl local rem st tx:rx tr:when retrnsmt uid timeout inode" */
		if (sscanf(line,
			   " %*d: %39[0-9A-Fa-f]:%x %39[0-9A-Fa-f]:%x %x %*x:%*x "
			   "%*x:%*x %*x %*u %*u %lu",
			   local, &lport, remote, &rport, &st, &ino) != 6 ||
		    st != 1 /* TCP_ESTABLISHED */)
			continue;
		size_t k = 0;
		while (k < ninodes && inodes[k] != ino)
			k++;
		if (k == ninodes)
			continue;
		/* the kernel prints the address as 32-bit words in the
		 * host's byte order */
		unsigned char addr[16];
		size_t words = af == AF_INET ? 1 : 4;
		if (strlen(local) != words * 8)
			continue;
		for (size_t w = 0; w < words; w++) {
			char hex[9];
			memcpy(hex, local + 8 * w, 8);
			hex[8] = '\0';
			uint32_t v = (uint32_t)strtoul(hex, NULL, 16);
			memcpy(addr + 4 * w, &v, 4);
		}
		int faf = af;
		const unsigned char *a = addr;
		static const unsigned char mapped[12] = {
			0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff
		};
		if (af == AF_INET6 && !memcmp(addr, mapped, 12)) {
			faf = AF_INET; /* ::ffff:a.b.c.d */
			a = addr + 12;
		}
		char name[IF_NAMESIZE + 1];
		iface_of(ifs, faf, a, name, sizeof(name));
		out->sockets++;
		if (iface && iface[0] && !strcmp(name, iface)) {
			out->on_iface++;
		} else if (!out->off_iface[0]) {
			char text[INET6_ADDRSTRLEN];
			inet_ntop(faf, a, text, sizeof(text));
			snprintf(out->off_iface, sizeof(out->off_iface),
				 "%.15s %.31s", name[0] ? name : "no interface",
				 text);
		}
	}
	free(line);
	fclose(f);
	return 0;
}

int sd_path_read_sockets(const char *root, pid_t pid, const char *iface,
			 struct sd_path_tally *out)
{
	if (!root)
		root = "/proc";
	size_t n = 0;
	unsigned long *inodes = socket_inodes(root, pid, &n, out);
	if (!inodes)
		return -1;
	struct ifaddrs *ifs = NULL;
	if (getifaddrs(&ifs)) {
		free(inodes);
		return failf(out, "listing the interfaces: %s",
			     strerror(errno));
	}
	char file[128];
	snprintf(file, sizeof(file), "%s/%d/net/tcp", root, (int)pid);
	int rc = read_table(file, AF_INET, inodes, n, ifs, iface, out);
	snprintf(file, sizeof(file), "%s/%d/net/tcp6", root, (int)pid);
	if (!rc)
		rc = read_table(file, AF_INET6, inodes, n, ifs, iface, out);
	freeifaddrs(ifs);
	free(inodes);
	return rc;
}

int sd_path_possible(const char *want, const int *members, int n,
		     const int *host_of)
{
	int net = sd_nccl_want_net(want);
	for (int i = 0; i < n; i++)
		for (int j = i + 1; j < n; j++) {
			int across = host(host_of, members[i]) !=
				     host(host_of, members[j]);
			if (net < 0 || across == net)
				return 1;
		}
	return 0;
}

/* "rank 5 on node3", or "rank 5" without names. */
static void rank_name(const struct sd_rank_info *ranks, int q, char *buf,
		      size_t len)
{
	if (ranks && ranks[q].host[0])
		snprintf(buf, len, "rank %d on %s", q, ranks[q].host);
	else
		snprintf(buf, len, "rank %d", q);
}

int sd_path_judge(const char *backend, const char *want, const char *iface,
		  const struct sd_path_tally *tallies, const int *members,
		  int n, const int *host_of, const struct sd_rank_info *ranks,
		  int *asked, int *took, char *reason, size_t len)
{
	int nccl = backend && !strcmp(backend, "nccl");
	*asked = *took = 0;
	reason[0] = '\0';
	if (nccl ? !want || !want[0] : !iface || !iface[0])
		return 0;
	if (n < 2) {
		snprintf(reason, len, "one rank: no connection to prove");
		return 2;
	}
	if (nccl && !sd_path_possible(want, members, n, host_of)) {
		snprintf(reason, len,
			 sd_nccl_want_net(want)
				 ? "its ranks share one host: no connection "
				   "over the network to prove"
				 : "no two of its ranks share a host: no "
				   "connection inside a node to prove");
		return 2;
	}
	struct sd_nccl_paths sum = { 0 };
	int sockets = 0, on = 0, bad_from = -1, bad_to = -1, failed = -1;
	const char *off = NULL;
	for (int i = 0; i < n; i++) {
		const struct sd_path_tally *t = &tallies[i];
		if (t->err[0] && failed < 0)
			failed = i;
		sd_nccl_paths_merge(&sum, &t->paths);
		sockets += t->sockets;
		on += t->on_iface;
		if (!off && t->off_iface[0]) {
			off = t->off_iface;
			bad_from = members[i];
		}
		if (bad_from < 0 && t->bad_from >= 0) {
			bad_from = t->bad_from;
			bad_to = t->bad_to;
		}
	}
	char a[96] = "", b[96] = "", first[240] = "";
	if (bad_from >= 0) {
		rank_name(ranks, bad_from, a, sizeof(a));
		if (bad_to >= 0)
			rank_name(ranks, bad_to, b, sizeof(b));
		snprintf(first, sizeof(first), " (first: %s%s%s)", a,
			 bad_to >= 0 ? " to " : "", b);
	}
	if (failed >= 0) {
		rank_name(ranks, members[failed], a, sizeof(a));
		*asked = nccl ? sum.total : sockets;
		snprintf(reason, len, "the path could not be proved: %s: %s", a,
			 tallies[failed].err);
		return 1;
	}
	if (nccl) {
		char msg[400];
		*asked = sum.total;
		for (int p = 0; p < SD_NCCL_PATH_COUNT; p++)
			if (sd_nccl_path_accepted(want, (enum sd_nccl_path)p) ==
			    1)
				*took += sum.connections[p];
		if (sd_nccl_paths_expect(&sum, want, msg, sizeof(msg)) == 0) {
			/* "NCCL used P2P/CUMEM for 24 of 24 connections":
			 * each path's word cut at its second slash
			 * ("NET/IB/0/GDRDMA": "NET/IB") */
			size_t used =
				(size_t)snprintf(reason, len, "NCCL used ");
			for (int p = 0, k = 0; p < SD_NCCL_PATH_COUNT; p++) {
				if (!sum.connections[p] || used >= len)
					continue;
				char word[SD_NCCL_VIA_MAX];
				snprintf(
					word, sizeof(word), "%s",
					sum.example[p][0]
						? sum.example[p]
						: sd_nccl_path_name((
							  enum sd_nccl_path)p));
				char *sl = strchr(word, '/');
				if (sl && (sl = strchr(sl + 1, '/')))
					*sl = '\0';
				used += (size_t)snprintf(reason + used,
							 len - used,
							 "%s%s for %d",
							 k++ ? ", " : "", word,
							 sum.connections[p]);
			}
			if (used < len)
				snprintf(reason + used, len - used,
					 " of %d connection%s", *asked,
					 *asked == 1 ? "" : "s");
			return 1;
		}
		snprintf(reason, len, "%s%s", msg, first);
		return 1;
	}
	*asked = sockets;
	*took = on;
	if (sockets == 0)
		snprintf(reason, len,
			 "asked for tcp %s, found no TCP connection of the "
			 "test's processes in the kernel's socket table",
			 iface);
	else if (on == sockets)
		snprintf(reason, len, "%d of %d TCP connection%s over %s", on,
			 sockets, sockets == 1 ? "" : "s", iface);
	else
		snprintf(reason, len,
			 "asked for tcp %s, %d of %d TCP connections went over "
			 "%s instead%s",
			 iface, sockets - on, sockets, off ? off : "another",
			 first);
	return 1;
}
