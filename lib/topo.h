/*
 * topo.h - what this host looks like to a qualification run: its network
 * interfaces (state, link speed, MTU, MAC, IPv4 addresses), its NUMA nodes
 * (CPUs and memory of each), its online CPUs and CPU model.  Read from
 * sysfs and /proc (and getifaddrs), for `shakedown topo` and the host
 * record of a run.  Nothing here prints or exits.
 *
 * The loopback interface "lo" is left out: it is never a path between
 * hosts, and every host has the same one.
 *
 * Under a network namespace entered without remounting /sys (nsenter
 * --net, as the Slurm test cluster does), /sys/class/net still shows the
 * namespace that mounted /sys.  On the live host (root NULL or "/") the
 * interfaces are therefore taken from getifaddrs (this process's
 * namespace); each one's attributes come from sysfs when its ifindex there
 * is the one this namespace gives it, and from ioctl (SIOCGIFMTU,
 * SIOCGIFHWADDR, SIOCGIFFLAGS, SIOCETHTOOL) otherwise ("source" says
 * which).  Under a fake root (tests) only the files under it are read.
 */
#ifndef SD_TOPO_H
#define SD_TOPO_H

#include <stddef.h>
#include <stdint.h>

#define SD_TOPO_MAX_IFACES 256
#define SD_TOPO_MAX_IPV4 8
#define SD_TOPO_MAX_NUMA 64

struct sd_topo_iface {
	char name[32];
	char state[24];          /* operstate: "up", "down", "unknown", ... */
	long speed_mbps;         /* -1: unknown (down, virtual, unreadable) */
	long mtu;                /* -1: unknown */
	char address[64];        /* MAC, "" when unknown */
	int numa_node;           /* of its PCI device; -1 none or unknown */
	int has_device;          /* 1: backed by a device (/device exists) */
	const char *source;      /* "sysfs" or "ioctl" */
	int nipv4;
	char ipv4[SD_TOPO_MAX_IPV4][16];
};

struct sd_topo_numa {
	int node;
	char cpus[512];          /* cpulist, e.g. "0-15,32-47" */
	int ncpus;               /* CPUs in cpus, -1 when it did not parse */
	uint64_t mem_total_bytes; /* MemTotal of its meminfo, 0 unknown */
};

struct sd_topo_host {
	int ncpus;               /* online CPUs, -1 unknown */
	char cpu_model[128];     /* "model name" of /proc/cpuinfo, or "" */
	int nifaces;
	int ifaces_truncated;    /* more than SD_TOPO_MAX_IFACES */
	struct sd_topo_iface iface[SD_TOPO_MAX_IFACES];
	int nnuma;               /* 0 when the kernel shows no NUMA nodes */
	struct sd_topo_numa numa[SD_TOPO_MAX_NUMA];
};

/*
 * Read this host into *t.  root: NULL (or "/") for the live host, else a
 * directory holding a fake sys/ and proc/ (tests).  What cannot be read is
 * left unknown (-1, "", no entry); interfaces and NUMA nodes are sorted by
 * name and number.  Returns SD_OK, or SD_ERR_INVALID for a NULL t.
 */
int sd_topo_host_read(const char *root, struct sd_topo_host *t);

/*
 * *t as one JSON object:
 *   {"cpus":N,"cpu_model":"...",
 *    "interfaces":[{"name","state","speed_mbps","mtu","address",
 *                   "numa_node","device","source","ipv4":[...]}],
 *    "numa":[{"node","cpus","ncpus","mem_total_bytes"}]}
 * Unknown numbers are null.  Returns a malloc'd string the caller frees,
 * or NULL when memory runs out.
 */
char *sd_topo_json(const struct sd_topo_host *t);

/*
 * sd_topo_host_read() then sd_topo_json(): the JSON object of this host
 * (the "topology" of a run's host record).  Returns a malloc'd string the
 * caller frees, or NULL when memory runs out.
 */
char *sd_topo_host_json(const char *root);

/* The number of CPUs in a cpulist ("0-3,8,10-11" -> 7; "" -> 0), or -1
 * when it is not one. */
int sd_topo_cpulist_count(const char *list);

/* Whether cpulist `list` holds cpu: 1, 0, or -1 when it is not one. */
int sd_topo_cpulist_has(const char *list, int cpu);

/*
 * This process's CPU affinity as a cpulist into cpus (sched_getaffinity),
 * and the NUMA nodes of t those CPUs are on as a list into nodes ("0",
 * "0,1"; "" when t has none).  Returns SD_OK or SD_ERR_IO.
 */
int sd_topo_affinity(const struct sd_topo_host *t, char *cpus,
		     size_t cpus_len, char *nodes, size_t nodes_len);

/* What the memory cgroup of this process (v2 memory.max, v1
 * memory.limit_in_bytes; the tightest of it and its parents up to the
 * mount) leaves unused, the page cache the kernel gives back (inactive
 * file pages) counted as free as MemAvailable counts it: 1 with *left, 0
 * when nothing limits it.  root: "" for this machine, else a folder that
 * holds proc/self/cgroup and sys/fs/cgroup/... (the tests' fake). */
int sd_topo_cgroup_mem_left(const char *root, uint64_t *left);

/* How many processes the kernel's OOM killer has killed in this
 * process's memory cgroup and below (v2 memory.events, v1
 * memory.oom_control: "oom_kill N"; the kernel counts a kill there before
 * it sends the SIGKILL), else on the whole host (/proc/vmstat's oom_kill,
 * for a process in the root cgroup).  Returns 1 (the cgroup's count) or 2
 * (the host's) with *kills, 0 when neither can be read.  A count that
 * went up while a rank of this cgroup died of SIGKILL names the OOM
 * killer.  root: as for sd_topo_cgroup_mem_left(). */
int sd_topo_oom_kills(const char *root, uint64_t *kills);

/* The file that counts the OOM kills of process pid's memory cgroup (0:
 * this process), as sd_topo_oom_kills() reads it, to path: 1 (its
 * cgroup's), 2 (the host's /proc/vmstat, for a process in the root
 * cgroup) or 0 (neither; a pid that is gone).  Taken while the process
 * lives, the file is read after it died (a node leader names the OOM
 * killer's victim among its node's ranks so). */
int sd_topo_oom_counter(const char *root, long pid, char *path, size_t len);

/* The count in a file sd_topo_oom_counter() named: 1 with *kills, else 0. */
int sd_topo_oom_count(const char *path, uint64_t *kills);

struct sd_backend_ops;
struct sd_comm;
struct sd_rank_info;
struct sd_host_env;

/* What a host's software looks like, for the record (a JSON object):
 * kernel and machine, shakedown's and the backend's versions, the
 * NCCL_*, GLOO_*, SHAKEDOWN_* and CUDA_VISIBLE_DEVICES variables of env
 * (NULL: this process's environment) but any whose name holds TOKEN, the
 * host's topology (sd_topo_host_json) and the backend's links of its
 * devices.  malloc'd; NULL when out of memory. */
char *sd_topo_host_env_json(const struct sd_backend_ops *ops,
			    struct sd_comm *comm, char **env);

/* The link class between the devices of ranks a and b of one host, from
 * that host's "links" in hosts[] (describe_links' array, in its env
 * JSON), in either order: "nvlink", "nvswitch", "pcie-switch",
 * "host-bridge", "numa-node", "cross-socket", "p2p" or "no-p2p"; NULL
 * when unknown (no links, a device without a bus id, another class). */
const char *sd_topo_link_class(const struct sd_rank_info *ranks,
			       const struct sd_host_env *hosts, int nhosts,
			       int a, int b);

#endif
