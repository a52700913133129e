/*
 * topo.c - this host's interfaces, NUMA nodes and CPUs from sysfs, /proc,
 * getifaddrs and, where /sys belongs to another network namespace, ioctl
 * (see topo.h).
 */
#include "config.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <ifaddrs.h>
#include <limits.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <net/if_arp.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "shakedown/backend.h"
#include "sink.h"
#include "topo.h"
#include "util.h"

/* ------------------------------------------------------------ cpulists */

/* Each range of a cpulist in turn: *lo..*hi; returns the rest of the list
 * after it, NULL at the end, or (const char *)-1 when it does not parse. */
#define CPULIST_BAD ((const char *)-1)
static const char *cpulist_next(const char *p, long *lo, long *hi)
{
	char *end;
	while (*p == ' ' || *p == '\n' || *p == '\t')
		p++;
	if (!*p)
		return NULL;
	if (!isdigit((unsigned char)*p))
		return CPULIST_BAD;
	errno = 0;
	*lo = strtol(p, &end, 10);
	*hi = *lo;
	if (*end == '-') {
		if (!isdigit((unsigned char)end[1]))
			return CPULIST_BAD;
		*hi = strtol(end + 1, &end, 10);
	}
	if (errno || *hi < *lo || *lo > INT_MAX || *hi > INT_MAX)
		return CPULIST_BAD;
	if (*end == ',')
		return end + 1;
	while (*end == '\n' || *end == ' ')
		end++;
	return *end ? CPULIST_BAD : end;
}

int sd_topo_cpulist_count(const char *list)
{
	long lo, hi, n = 0;
	const char *p = list;
	if (!list)
		return -1;
	while ((p = cpulist_next(p, &lo, &hi)) != NULL) {
		if (p == CPULIST_BAD)
			return -1;
		n += hi - lo + 1;
		if (n > INT_MAX)
			return -1;
	}
	return (int)n;
}

int sd_topo_cpulist_has(const char *list, int cpu)
{
	long lo, hi;
	const char *p = list;
	int found = 0;
	if (!list)
		return -1;
	while ((p = cpulist_next(p, &lo, &hi)) != NULL) {
		if (p == CPULIST_BAD)
			return -1;
		found |= cpu >= lo && cpu <= hi;
	}
	return found;
}

/* Append the range lo..hi to a cpulist being built in out. */
static void cpulist_add(char *out, size_t len, int lo, int hi)
{
	size_t used = strlen(out);
	if (used >= len)
		return;
	if (lo == hi)
		snprintf(out + used, len - used, "%s%d", used ? "," : "", lo);
	else
		snprintf(out + used, len - used, "%s%d-%d", used ? "," : "", lo,
			 hi);
}

int sd_topo_affinity(const struct sd_topo_host *t, char *cpus,
		     size_t cpus_len, char *nodes, size_t nodes_len)
{
	int max = 8192, rc = SD_ERR_IO;
	cpu_set_t *set = CPU_ALLOC(max);
	size_t size = CPU_ALLOC_SIZE(max);
	cpus[0] = nodes[0] = '\0';
	if (!set)
		return SD_ERR_NOMEM;
	CPU_ZERO_S(size, set);
	if (sched_getaffinity(0, size, set) != 0)
		goto out;
	for (int c = 0; c < max;) {
		if (!CPU_ISSET_S(c, size, set)) {
			c++;
			continue;
		}
		int lo = c;
		while (c + 1 < max && CPU_ISSET_S(c + 1, size, set))
			c++;
		cpulist_add(cpus, cpus_len, lo, c);
		c++;
	}
	for (int i = 0; t && i < t->nnuma; i++) {
		int on = 0;
		for (int c = 0; c < max && !on; c++)
			on = CPU_ISSET_S(c, size, set) &&
			     sd_topo_cpulist_has(t->numa[i].cpus, c) == 1;
		if (on)
			cpulist_add(nodes, nodes_len, t->numa[i].node,
				    t->numa[i].node);
	}
	rc = SD_OK;
out:
	CPU_FREE(set);
	return rc;
}

/* ------------------------------------------------------------- files */

/* Read root/path (at most len-1 bytes) without its trailing white space;
 * 0, or -1 when it cannot be read. */
static int read_text(const char *root, const char *path, char *buf,
		     size_t len)
{
	char full[PATH_MAX];
	snprintf(full, sizeof(full), "%s%s", root, path);
	FILE *f = fopen(full, "r");
	buf[0] = '\0';
	if (!f)
		return -1;
	size_t n = fread(buf, 1, len - 1, f);
	int bad = ferror(f);
	fclose(f);
	if (bad)
		return -1;
	buf[n] = '\0';
	while (n && isspace((unsigned char)buf[n - 1]))
		buf[--n] = '\0';
	return 0;
}

/* A number from root/path; 0, or -1 when missing or not a number. */
static int read_long(const char *root, const char *path, long *out)
{
	char buf[64], *end;
	if (read_text(root, path, buf, sizeof(buf)) || !buf[0])
		return -1;
	errno = 0;
	long v = strtol(buf, &end, 10);
	if (errno || *end)
		return -1;
	*out = v;
	return 0;
}

static int exists(const char *root, const char *path)
{
	char full[PATH_MAX];
	snprintf(full, sizeof(full), "%s%s", root, path);
	return access(full, F_OK) == 0;
}

/* ----------------------------------------------------------- interfaces */

static struct sd_topo_iface *add_iface(struct sd_topo_host *t,
				       const char *name)
{
	if (strcmp(name, "lo") == 0)
		return NULL;
	for (int i = 0; i < t->nifaces; i++)
		if (strcmp(t->iface[i].name, name) == 0)
			return &t->iface[i];
	if (t->nifaces == SD_TOPO_MAX_IFACES) {
		t->ifaces_truncated = 1;
		return NULL;
	}
	struct sd_topo_iface *f = &t->iface[t->nifaces++];
	memset(f, 0, sizeof(*f));
	sd_strlcpy(f->name, name, sizeof(f->name));
	f->speed_mbps = -1;
	f->mtu = -1;
	f->numa_node = -1;
	return f;
}

static void iface_from_sysfs(const char *root, struct sd_topo_iface *f)
{
	char path[256];
	long v;
	f->source = "sysfs";
	snprintf(path, sizeof(path), "/sys/class/net/%s/operstate", f->name);
	if (read_text(root, path, f->state, sizeof(f->state)) || !f->state[0])
		sd_strlcpy(f->state, "unknown", sizeof(f->state));
	/* reading speed fails (EINVAL) on a link that is down; -1 is the
	 * kernel's SPEED_UNKNOWN */
	snprintf(path, sizeof(path), "/sys/class/net/%s/speed", f->name);
	if (read_long(root, path, &v) == 0 && v > 0)
		f->speed_mbps = v;
	snprintf(path, sizeof(path), "/sys/class/net/%s/mtu", f->name);
	if (read_long(root, path, &v) == 0 && v > 0)
		f->mtu = v;
	snprintf(path, sizeof(path), "/sys/class/net/%s/address", f->name);
	read_text(root, path, f->address, sizeof(f->address));
	snprintf(path, sizeof(path), "/sys/class/net/%s/device", f->name);
	f->has_device = exists(root, path);
	snprintf(path, sizeof(path), "/sys/class/net/%s/device/numa_node",
		 f->name);
	if (f->has_device && read_long(root, path, &v) == 0 && v >= 0)
		f->numa_node = (int)v;
}

static void iface_from_ioctl(int sock, struct sd_topo_iface *f)
{
	struct ifreq r;
	f->source = "ioctl";
	sd_strlcpy(f->state, "unknown", sizeof(f->state));
	if (sock < 0)
		return;
	memset(&r, 0, sizeof(r));
	sd_strlcpy(r.ifr_name, f->name, sizeof(r.ifr_name));
	if (ioctl(sock, SIOCGIFFLAGS, &r) == 0) {
		/* RUNNING: the carrier is up, as operstate "up" says */
		int running = (r.ifr_flags & IFF_RUNNING) != 0;
		sd_strlcpy(f->state,
			   !(r.ifr_flags & IFF_UP) ? "down"
			   : running		  ? "up"
						  : "lowerlayerdown",
			   sizeof(f->state));
	}
	if (ioctl(sock, SIOCGIFMTU, &r) == 0 && r.ifr_mtu > 0)
		f->mtu = r.ifr_mtu;
	if (ioctl(sock, SIOCGIFHWADDR, &r) == 0 &&
	    r.ifr_hwaddr.sa_family == ARPHRD_ETHER) {
		const unsigned char *m =
			(const unsigned char *)r.ifr_hwaddr.sa_data;
		snprintf(f->address, sizeof(f->address),
			 "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2],
			 m[3], m[4], m[5]);
	}
	struct ethtool_cmd cmd;
	memset(&cmd, 0, sizeof(cmd));
	cmd.cmd = ETHTOOL_GSET;
	r.ifr_data = (char *)&cmd;
	if (ioctl(sock, SIOCETHTOOL, &r) == 0) {
		uint32_t s = ethtool_cmd_speed(&cmd);
		if (s != (uint32_t)SPEED_UNKNOWN && s > 0 && s < 100000000u)
			f->speed_mbps = (long)s;
	}
}

/* Whether /sys/class/net shows this process's network namespace: every
 * link getifaddrs lists is there with the ifindex this namespace gives
 * it, and nothing else is. */
static int sysfs_is_ours(struct ifaddrs *all)
{
	char path[256];
	int links = 0, entries = 0;
	for (struct ifaddrs *i = all; i; i = i->ifa_next) {
		if (!i->ifa_addr || i->ifa_addr->sa_family != AF_PACKET)
			continue;
		long idx;
		links++;
		snprintf(path, sizeof(path), "/sys/class/net/%s/ifindex",
			 i->ifa_name);
		if (read_long("", path, &idx) ||
		    idx != (long)if_nametoindex(i->ifa_name))
			return 0;
	}
	DIR *d = opendir("/sys/class/net");
	if (!d)
		return 0;
	for (struct dirent *e; (e = readdir(d)) != NULL;)
		entries += e->d_name[0] != '.';
	closedir(d);
	return links > 0 && links == entries;
}

static void read_ifaces_live(struct sd_topo_host *t)
{
	struct ifaddrs *all = NULL;
	if (getifaddrs(&all) != 0)
		return;
	int ours = sysfs_is_ours(all);
	int sock = ours ? -1 : socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	for (struct ifaddrs *i = all; i; i = i->ifa_next) {
		if (!i->ifa_addr || i->ifa_addr->sa_family != AF_PACKET)
			continue;
		struct sd_topo_iface *f = add_iface(t, i->ifa_name);
		if (!f)
			continue;
		if (ours)
			iface_from_sysfs("", f);
		else
			iface_from_ioctl(sock, f);
	}
	for (struct ifaddrs *i = all; i; i = i->ifa_next) {
		if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET)
			continue;
		struct sd_topo_iface *f = NULL;
		for (int k = 0; k < t->nifaces && !f; k++)
			if (strcmp(t->iface[k].name, i->ifa_name) == 0)
				f = &t->iface[k];
		if (!f || f->nipv4 == SD_TOPO_MAX_IPV4)
			continue;
		const struct sockaddr_in *a =
			(const struct sockaddr_in *)i->ifa_addr;
		inet_ntop(AF_INET, &a->sin_addr, f->ipv4[f->nipv4],
			  sizeof(f->ipv4[0]));
		f->nipv4++;
	}
	if (sock >= 0)
		close(sock);
	freeifaddrs(all);
}

static void read_ifaces_fake(const char *root, struct sd_topo_host *t)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/sys/class/net", root);
	DIR *d = opendir(path);
	if (!d)
		return;
	for (struct dirent *e; (e = readdir(d)) != NULL;) {
		if (e->d_name[0] == '.')
			continue;
		struct sd_topo_iface *f = add_iface(t, e->d_name);
		if (f)
			iface_from_sysfs(root, f);
	}
	closedir(d);
}

static int by_iface_name(const void *a, const void *b)
{
	return strcmp(((const struct sd_topo_iface *)a)->name,
		      ((const struct sd_topo_iface *)b)->name);
}

/* ------------------------------------------------------------ NUMA, CPUs */

/* "Node 0 MemTotal:  24576000 kB" in a node's meminfo, in bytes. */
static uint64_t node_mem_total(const char *root, int node)
{
	char path[128], buf[4096];
	snprintf(path, sizeof(path), "/sys/devices/system/node/node%d/meminfo",
		 node);
	if (read_text(root, path, buf, sizeof(buf)))
		return 0;
	const char *p = strstr(buf, "MemTotal:");
	if (!p)
		return 0;
	unsigned long long kb = 0;
	if (sscanf(p, "MemTotal: %llu", &kb) != 1)
		return 0;
	return (uint64_t)kb * 1024u;
}

static void read_numa(const char *root, struct sd_topo_host *t)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/sys/devices/system/node", root);
	DIR *d = opendir(path);
	if (!d)
		return;
	for (struct dirent *e; (e = readdir(d)) != NULL;) {
		char *end;
		if (strncmp(e->d_name, "node", 4) != 0 ||
		    !isdigit((unsigned char)e->d_name[4]))
			continue;
		long n = strtol(e->d_name + 4, &end, 10);
		if (*end || n < 0 || n > INT_MAX ||
		    t->nnuma == SD_TOPO_MAX_NUMA)
			continue;
		struct sd_topo_numa *m = &t->numa[t->nnuma++];
		m->node = (int)n;
		snprintf(path, sizeof(path),
			 "/sys/devices/system/node/node%ld/cpulist", n);
		read_text(root, path, m->cpus, sizeof(m->cpus));
		m->ncpus = sd_topo_cpulist_count(m->cpus);
		m->mem_total_bytes = node_mem_total(root, m->node);
	}
	closedir(d);
}

static int by_node(const void *a, const void *b)
{
	return ((const struct sd_topo_numa *)a)->node -
	       ((const struct sd_topo_numa *)b)->node;
}

/* The first "model name" (x86) or "Model"/"CPU part" (Arm) of cpuinfo. */
static void read_cpu_model(const char *root, char *out, size_t len)
{
	static const char *keys[] = { "model name", "Model", "cpu model",
				      "CPU part" };
	char path[PATH_MAX], line[512];
	out[0] = '\0';
	snprintf(path, sizeof(path), "%s/proc/cpuinfo", root);
	FILE *f = fopen(path, "r");
	if (!f)
		return;
	for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]) && !out[0]; k++) {
		rewind(f);
		for (int n = 0; n < 4096 && fgets(line, sizeof(line), f); n++) {
			size_t kl = strlen(keys[k]);
			char *colon = strchr(line, ':');
			if (!colon || strncmp(line, keys[k], kl) != 0)
				continue;
			const char *p = line + kl;
			while (*p == ' ' || *p == '\t')
				p++;
			if (p != colon)
				continue;
			p = colon + 1;
			while (*p == ' ' || *p == '\t')
				p++;
			sd_strlcpy(out, p, len);
			size_t l = strlen(out);
			while (l && isspace((unsigned char)out[l - 1]))
				out[--l] = '\0';
			break;
		}
	}
	fclose(f);
}

int sd_topo_host_read(const char *root, struct sd_topo_host *t)
{
	if (!t)
		return SD_ERR_INVALID;
	int live = !root || !*root || strcmp(root, "/") == 0;
	if (live)
		root = "";
	memset(t, 0, sizeof(*t));
	t->ncpus = -1;
	char buf[1024];
	if (read_text(root, "/sys/devices/system/cpu/online", buf,
		      sizeof(buf)) == 0)
		t->ncpus = sd_topo_cpulist_count(buf);
	if (t->ncpus <= 0 && live) {
		long n = sysconf(_SC_NPROCESSORS_ONLN);
		t->ncpus = n > 0 ? (int)n : -1;
	}
	read_cpu_model(root, t->cpu_model, sizeof(t->cpu_model));
	if (live)
		read_ifaces_live(t);
	else
		read_ifaces_fake(root, t);
	qsort(t->iface, (size_t)t->nifaces, sizeof(t->iface[0]),
	      by_iface_name);
	read_numa(root, t);
	qsort(t->numa, (size_t)t->nnuma, sizeof(t->numa[0]), by_node);
	return SD_OK;
}

/* ------------------------------------------------------------------ JSON */

static int json_long(struct sd_buf *b, long v)
{
	return v < 0 ? sd_buf_printf(b, "null") : sd_buf_printf(b, "%ld", v);
}

char *sd_topo_json(const struct sd_topo_host *t)
{
	struct sd_buf b = { 0 };
	int bad = sd_buf_printf(&b, "{\"cpus\":");
	bad |= json_long(&b, t->ncpus);
	bad |= sd_buf_printf(&b, ",\"cpu_model\":");
	bad |= sd_buf_json_string(&b, t->cpu_model);
	bad |= sd_buf_printf(&b, ",\"interfaces\":[");
	for (int i = 0; i < t->nifaces; i++) {
		const struct sd_topo_iface *f = &t->iface[i];
		bad |= sd_buf_printf(&b, "%s{\"name\":", i ? "," : "");
		bad |= sd_buf_json_string(&b, f->name);
		bad |= sd_buf_printf(&b, ",\"state\":");
		bad |= sd_buf_json_string(&b, f->state);
		bad |= sd_buf_printf(&b, ",\"speed_mbps\":");
		bad |= json_long(&b, f->speed_mbps);
		bad |= sd_buf_printf(&b, ",\"mtu\":");
		bad |= json_long(&b, f->mtu);
		bad |= sd_buf_printf(&b, ",\"address\":");
		if (f->address[0])
			bad |= sd_buf_json_string(&b, f->address);
		else
			bad |= sd_buf_printf(&b, "null");
		bad |= sd_buf_printf(&b, ",\"numa_node\":");
		bad |= json_long(&b, f->numa_node);
		bad |= sd_buf_printf(&b, ",\"device\":%s,\"source\":\"%s\","
				     "\"ipv4\":[", f->has_device ? "true"
								 : "false",
				     f->source ? f->source : "sysfs");
		for (int k = 0; k < f->nipv4; k++) {
			bad |= sd_buf_printf(&b, "%s", k ? "," : "");
			bad |= sd_buf_json_string(&b, f->ipv4[k]);
		}
		bad |= sd_buf_printf(&b, "]}");
	}
	bad |= sd_buf_printf(&b, "]%s,\"numa\":[", t->ifaces_truncated
				     ? ",\"interfaces_truncated\":true" : "");
	for (int i = 0; i < t->nnuma; i++) {
		const struct sd_topo_numa *m = &t->numa[i];
		bad |= sd_buf_printf(&b, "%s{\"node\":%d,\"cpus\":",
				     i ? "," : "", m->node);
		bad |= sd_buf_json_string(&b, m->cpus);
		bad |= sd_buf_printf(&b, ",\"ncpus\":");
		bad |= json_long(&b, m->ncpus);
		bad |= sd_buf_printf(&b, ",\"mem_total_bytes\":");
		if (m->mem_total_bytes)
			bad |= sd_buf_printf(&b, "%llu", (unsigned long long)
					     m->mem_total_bytes);
		else
			bad |= sd_buf_printf(&b, "null");
		bad |= sd_buf_printf(&b, "}");
	}
	bad |= sd_buf_printf(&b, "]}");
	if (bad) {
		sd_buf_free(&b);
		return NULL;
	}
	return b.data;
}

char *sd_topo_host_json(const char *root)
{
	struct sd_topo_host *t = malloc(sizeof(*t));
	if (!t)
		return NULL;
	sd_topo_host_read(root, t);
	char *json = sd_topo_json(t);
	free(t);
	return json;
}

/* Read one number from a cgroup file; "max" (v2) is no limit. */
static int cg_read(const char *dir, const char *file, uint64_t *v)
{
	char path[8500], buf[64];
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	int ok = fgets(buf, sizeof(buf), f) != NULL;
	fclose(f);
	if (!ok || strncmp(buf, "max", 3) == 0)
		return 0;
	char *end;
	unsigned long long x = strtoull(buf, &end, 10);
	if (end == buf)
		return 0;
	*v = x;
	return 1;
}

/* A key's value in a cgroup's memory.stat (0 when absent). */
static uint64_t cg_stat(const char *dir, const char *key)
{
	char path[8500], line[256];
	snprintf(path, sizeof(path), "%s/memory.stat", dir);
	FILE *f = fopen(path, "r");
	uint64_t v = 0;
	size_t kl = strlen(key);
	while (f && fgets(line, sizeof(line), f))
		if (strncmp(line, key, kl) == 0 && line[kl] == ' ') {
			v = strtoull(line + kl + 1, NULL, 10);
			break;
		}
	if (f)
		fclose(f);
	return v;
}

/* What the memory cgroup of this process (v2 memory.max, v1
 * memory.limit_in_bytes, the tightest of it and its parents) leaves
 * unused: 1 with *left, 0 when nothing limits it. */
int sd_topo_cgroup_mem_left(const char *root, uint64_t *left)
{
	static const struct {
		const char *ctl, *mnt, *limit, *usage, *inactive;
	} kinds[] = {
		{ "", "/sys/fs/cgroup", "memory.max", "memory.current",
		  "inactive_file" },
		{ "memory", "/sys/fs/cgroup/memory", "memory.limit_in_bytes",
		  "memory.usage_in_bytes", "total_inactive_file" },
	};
	char cgfile[4200];
	snprintf(cgfile, sizeof(cgfile), "%s/proc/self/cgroup", root);
	FILE *f = fopen(cgfile, "r");
	if (!f)
		return 0;
	char line[4096];
	int found = 0;
	uint64_t best = UINT64_MAX;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		char *a = strchr(line, ':'), *b = a ? strchr(a + 1, ':') : NULL;
		if (!b)
			continue;
		/* "ID:CONTROLLERS:PATH": ID and CONTROLLERS each a string */
		*a = '\0';
		*b = '\0';
		const char *ctls = a + 1, *path = b + 1;
		for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
			int v2 = !kinds[k].ctl[0];
			if (v2 ? strcmp(line, "0") != 0 || *ctls
			       : !strstr(ctls, kinds[k].ctl))
				continue;
			char dir[8400];
			snprintf(dir, sizeof(dir), "%s%s%s", root,
				 kinds[k].mnt, path);
			size_t top = strlen(root) + strlen(kinds[k].mnt);
			/* up to the mount's root: the tightest limit counts */
			for (;;) {
				uint64_t lim, use = 0;
				if (cg_read(dir, kinds[k].limit, &lim) &&
				    lim < (UINT64_MAX >> 2)) {
					cg_read(dir, kinds[k].usage, &use);
					/* page cache the kernel gives back
					 * counts as free, as MemAvailable
					 * counts it */
					uint64_t cache = cg_stat(dir,
						kinds[k].inactive);
					use = use > cache ? use - cache : 0;
					uint64_t l = lim > use ? lim - use : 0;
					if (l < best)
						best = l;
					found = 1;
				}
				char *slash = strrchr(dir, '/');
				if (!slash || (size_t)(slash - dir) < top)
					break;
				*slash = '\0';
			}
		}
	}
	fclose(f);
	if (found)
		*left = best;
	return found;
}

/* A "key N" line's N in a file (memory.events, memory.oom_control,
 * /proc/vmstat): 1 with *v, 0 when the file or the key is absent. */
static int key_count(const char *path, const char *key, uint64_t *v)
{
	char line[256];
	size_t kl = strlen(key);
	FILE *f = fopen(path, "r");
	int found = 0;
	while (f && !found && fgets(line, sizeof(line), f))
		if (strncmp(line, key, kl) == 0 && line[kl] == ' ') {
			*v = strtoull(line + kl + 1, NULL, 10);
			found = 1;
		}
	if (f)
		fclose(f);
	return found;
}

int sd_topo_oom_counter(const char *root, long pid, char *path, size_t len)
{
	char cgfile[4200], line[4096];
	if (pid > 0)
		snprintf(cgfile, sizeof(cgfile), "%s/proc/%ld/cgroup", root, pid);
	else
		snprintf(cgfile, sizeof(cgfile), "%s/proc/self/cgroup", root);
	FILE *f = fopen(cgfile, "r");
	int found = 0;
	uint64_t v;
	while (f && !found && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		char *a = strchr(line, ':'), *b = a ? strchr(a + 1, ':') : NULL;
		if (!b)
			continue;
		*a = '\0';
		*b = '\0';
		const char *ctls = a + 1, *cg = b + 1;
		int v2 = strcmp(line, "0") == 0 && !*ctls;
		if (!v2 && !strstr(ctls, "memory"))
			continue;
		if (strcmp(cg, "/") == 0)
			continue; /* the root cgroup counts no events */
		int n = v2 ? snprintf(path, len, "%s/sys/fs/cgroup%s/"
				      "memory.events", root, cg)
			   : snprintf(path, len, "%s/sys/fs/cgroup/memory%s/"
				      "memory.oom_control", root, cg);
		found = n > 0 && (size_t)n < len && key_count(path, "oom_kill", &v);
	}
	if (f)
		fclose(f);
	if (found)
		return 1;
	/* a process that is gone has no cgroup to tell: not the host's */
	if (!f && pid > 0)
		return 0;
	int n = snprintf(path, len, "%s/proc/vmstat", root);
	return n > 0 && (size_t)n < len && key_count(path, "oom_kill", &v) ? 2
									   : 0;
}

int sd_topo_oom_count(const char *path, uint64_t *kills)
{
	return key_count(path, "oom_kill", kills);
}

int sd_topo_oom_kills(const char *root, uint64_t *kills)
{
	char path[8500];
	int kind = sd_topo_oom_counter(root, 0, path, sizeof(path));
	return kind && sd_topo_oom_count(path, kills) ? kind : 0;
}

char *sd_topo_host_env_json(const struct sd_backend_ops *ops,
			     struct sd_comm *comm, char **env)
{
	struct utsname u;
	struct sd_buf b = { 0 };
	extern char **environ;
	if (!env)
		env = environ;
	uname(&u);
	sd_buf_printf(&b, "{\"kernel\":");
	sd_buf_json_string(&b, u.release);
	sd_buf_printf(&b, ",\"machine\":");
	sd_buf_json_string(&b, u.machine);
	sd_buf_printf(&b, ",\"shakedown\":\"%s\",\"backend\":", PACKAGE_VERSION);
	sd_buf_json_string(&b, ops->version ? ops->version : ops->name);
	sd_buf_printf(&b, ",\"env\":{");
	int first = 1;
	for (char **e = env; *e; e++) {
		if (strncmp(*e, "NCCL_", 5) && strncmp(*e, "SHAKEDOWN_", 10) &&
		    strncmp(*e, "CUDA_VISIBLE_DEVICES=", 21) &&
		    strncmp(*e, "GLOO_", 5))
			continue;
		if (strstr(*e, "TOKEN"))
			continue; /* secrets never leave the process */
		const char *eq = strchr(*e, '=');
		if (!eq)
			continue;
		char name[128];
		snprintf(name, sizeof(name), "%.*s", (int)(eq - *e), *e);
		sd_buf_printf(&b, "%s", first ? "" : ",");
		sd_buf_json_string(&b, name);
		sd_buf_printf(&b, ":");
		sd_buf_json_string(&b, eq + 1);
		first = 0;
	}
	sd_buf_printf(&b, "}");
	/* the host's interfaces and NUMA layout (shakedown topo's view) */
	char *topo = sd_topo_host_json(NULL);
	if (topo)
		sd_buf_printf(&b, ",\"topology\":%s", topo);
	free(topo);
	/* how this host's devices reach each other (the backend's probe):
	 * GPU pairs are judged against the pairs of their own link class */
	if (ops->describe_links) {
		char *links = malloc(65536), err[256] = "";
		if (links && ops->describe_links(comm, links, 65536, err,
						 sizeof(err)) == SD_OK)
			sd_buf_printf(&b, ",\"links\":%s", links);
		free(links);
	}
	sd_buf_printf(&b, "}");
	return b.data;
}

const char *sd_topo_link_class(const struct sd_rank_info *ranks,
			       const struct sd_host_env *hosts, int nhosts,
			       int a, int b)
{
	static const char *const known[] = { "nvlink", "nvswitch",
		"pcie-switch", "host-bridge", "numa-node", "cross-socket",
		"p2p", "no-p2p" };
	const char *json = NULL;
	for (int h = 0; h < nhosts && !json; h++)
		if (strcmp(hosts[h].host, ranks[a].host) == 0)
			json = hosts[h].json;
	const char *links = json ? strstr(json, "\"links\":[") : NULL;
	if (!links || !ranks[a].dev.pci_bus_id[0] ||
	    !ranks[b].dev.pci_bus_id[0])
		return NULL;
	for (int swap = 0; swap < 2; swap++) {
		char key[160];
		snprintf(key, sizeof(key), "{\"a\":\"%s\",\"b\":\"%s\",\"class\":\"",
			 ranks[swap ? b : a].dev.pci_bus_id,
			 ranks[swap ? a : b].dev.pci_bus_id);
		const char *at = strstr(links, key);
		if (!at)
			continue;
		at += strlen(key);
		for (size_t k = 0; k < sizeof(known) / sizeof(known[0]); k++) {
			size_t n = strlen(known[k]);
			if (strncmp(at, known[k], n) == 0 && at[n] == '"')
				return known[k];
		}
		return NULL;
	}
	return NULL;
}
