/*
 * links.h - how the GPUs of one host reach each other, and which network
 * interfaces NCCL's socket transport would use: facts for the topology
 * checks (per-link verdicts).
 *
 * The classification is pure C over a recorded answer (struct
 * sd_nvml_answer) so that the unit tests replay NVML answers of real boxes
 * (an 8-GPU NVSwitch system, a PCIe system) on a machine without GPUs.  The
 * answer is filled at run time by nvml.c (NVML through dlopen) or, without
 * NVML, from cudaDeviceGetP2PAttribute.
 */
#ifndef SD_NCCL_LINKS_H
#define SD_NCCL_LINKS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SD_LINKS_MAX_GPUS 16
#define SD_LINKS_MAX_NVLINKS 32

/* NVML's values (nvml.h), recorded as numbers. */
enum {
	SD_NVML_TOPO_INTERNAL = 0,    /* the same board */
	SD_NVML_TOPO_SINGLE = 10,     /* one PCIe switch */
	SD_NVML_TOPO_MULTIPLE = 20,   /* several PCIe switches, no host bridge */
	SD_NVML_TOPO_HOSTBRIDGE = 30, /* one host bridge */
	SD_NVML_TOPO_NODE = 40,       /* host bridges of one NUMA node */
	SD_NVML_TOPO_SYSTEM = 50,     /* across NUMA nodes (SMP link) */
	SD_NVML_NVLINK_GPU = 0,       /* nvmlIntNvLinkDeviceType_t */
	SD_NVML_NVLINK_IBMNPU = 1,
	SD_NVML_NVLINK_SWITCH = 2,
};

/* The PCI class of an NVSwitch (bridge, other), as NCCL tells one from a
 * GPU (display, 0x03xxxx) at the far end of an NVLink. */
#define SD_PCI_CLASS_NVSWITCH 0x068000

struct sd_nvml_link {
	int active;              /* up and able to carry P2P: on sm_90 and
				    newer NVML's NVLINK_GET_STATE field,
				    before nvmlDeviceGetNvLinkState */
	int remote_type;         /* SD_NVML_NVLINK_*, -1 when NVML did not
				    say */
	int remote_class;        /* the far end's PCI class from sysfs
				    (0x068000: an NVSwitch), 0 unknown */
	char remote_bus_id[32];  /* nvmlDeviceGetNvLinkRemotePciInfo busId;
				    "" when NVML gave none, or none
				    printable (an NVSwitch the host cannot
				    see, as in a VM) */
};

/* What NVML (or CUDA) said about the GPUs of one host. */
struct sd_nvml_answer {
	int ngpus;
	int have_nvml;           /* 0: only p2p[][] is known */
	struct {
		char bus_id[32];
		int nlinks;      /* links probed (NVML_NVLINK_MAX_LINKS) */
		struct sd_nvml_link link[SD_LINKS_MAX_NVLINKS];
	} gpu[SD_LINKS_MAX_GPUS];
	/* nvmlDeviceGetTopologyCommonAncestor, SD_NVML_TOPO_* */
	int ancestor[SD_LINKS_MAX_GPUS][SD_LINKS_MAX_GPUS];
	/* cudaDeviceGetP2PAttribute(AccessSupported): 1, 0, or -1 unknown */
	int p2p[SD_LINKS_MAX_GPUS][SD_LINKS_MAX_GPUS];
};

enum sd_link_kind {
	SD_LINK_UNKNOWN = 0,
	SD_LINK_SELF,
	SD_LINK_NVLINK,       /* direct NVLink, `nvlinks` links */
	SD_LINK_NVSWITCH,     /* NVLink through NVSwitch, `nvlinks` per GPU */
	SD_LINK_PCIE_SWITCH,  /* PCIe, under one or more PCIe switches */
	SD_LINK_HOST_BRIDGE,  /* PCIe through one host bridge */
	SD_LINK_NUMA_NODE,    /* PCIe across host bridges of one CPU */
	SD_LINK_CROSS_SOCKET, /* PCIe across CPUs (QPI/UPI, Infinity Fabric) */
	SD_LINK_P2P,          /* no NVML: CUDA peer access, path unknown */
	SD_LINK_NO_P2P,       /* no NVML: no peer access (through host) */
};

struct sd_link {
	enum sd_link_kind kind;
	int nvlinks;          /* NVLink and NVSwitch: link count */
};

/* How many NVLinks NCCL probes on a GPU of compute capability sm (major x
 * 10 + minor): 0 before 6.0, 4, 6, 12, then 18 from 9.0. */
int sd_nvml_max_links(int sm);

/* Whether link k ends at an NVSwitch: NVML says so, or the far end's PCI
 * class is an NVSwitch's, or NVML gave no bus id for it (an NVSwitch the
 * host cannot see), as NCCL decides it (graph/xml.cc). */
int sd_link_to_switch(const struct sd_nvml_link *k);

/* "nvlink", "nvswitch", "pcie-switch", "host-bridge", "numa-node",
 * "cross-socket", "p2p", "no-p2p", "self", "unknown". */
const char *sd_link_kind_name(enum sd_link_kind k);

/* "0000:1b:00.0" from NVML's "00000000:1B:00.0" or CUDA's form. */
void sd_pci_normalize(const char *in, char *out, size_t len);

/* How GPU i reaches GPU j according to the answer. */
void sd_link_classify(const struct sd_nvml_answer *a, int i, int j,
		      struct sd_link *out);

/*
 * Every pair as text, one pair per line: "0 1 nvswitch 18\n"
 * ("I J KIND NVLINKS").  Returns the length written (truncated to len).
 */
size_t sd_links_format(const struct sd_nvml_answer *a, char *buf, size_t len);

/*
 * Every pair as the JSON array of the describe_links slot
 * (include/shakedown/backend.h), devices named by PCI bus id:
 * [{"a":"0000:18:00.0","b":"0000:2a:00.0","class":"nvswitch","nvlinks":18}].
 * Returns the length the whole array needs, as snprintf does: a result of
 * len or more means buf was too short (and holds a cut, invalid array).
 */
size_t sd_links_json(const struct sd_nvml_answer *a, char *buf, size_t len);

/*
 * NCCL's socket interface choice (ncclFindInterfaces): `names[0..n)` are
 * the host's interfaces that are up and have an address.  `ifname` is
 * NCCL_SOCKET_IFNAME or NULL: a comma-separated list of prefixes, "^" in
 * front excludes them, "=" in front asks for exact names.  Without it NCCL
 * takes ib* interfaces, else any but docker*, lo and virbr*, else docker*,
 * else lo, else virbr*.
 * Writes the chosen names, comma-separated, into out ("" when none) and
 * returns their count.
 */
int sd_socket_ifaces(const char *const *names, int n, const char *ifname,
		     char *out, size_t len);

#ifdef __cplusplus
}
#endif
#endif
