/*
 * probe.c - fill the link answer of links.h on a live host: GPU bus ids
 * from the CUDA runtime, NVLink and PCIe facts from NVML loaded with
 * dlopen("libnvidia-ml.so.1") (no nvml.h is needed: the few prototypes and
 * the one structure used are declared here), cudaDeviceGetP2PAttribute when
 * NVML is missing, and the interfaces NCCL's socket transport would use.
 */
#include "config.h"

#include <dlfcn.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "links.h"
#include "probe.h"

/* From nvml.h (NVML API version 12), as far as used here. */
typedef void *sd_nvmlDevice_t;
typedef struct {
	char busIdLegacy[16];
	unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
	char busId[32];
} sd_nvmlPciInfo_t;
#define SD_NVML_NVLINK_MAX_LINKS 18
typedef struct {                 /* nvmlFieldValue_t */
	unsigned int fieldId;
	unsigned int scopeId;
	long long timestamp;
	long long latencyUsec;
	int valueType;
	int nvmlReturn;
	union {
		double dVal;
		unsigned int uiVal;
		unsigned long ulVal;
		unsigned long long ullVal;
		long long sllVal;
	} value;
} sd_nvmlFieldValue_t;
#define SD_NVML_FI_DEV_NVLINK_GET_STATE 165
#define SD_NVML_NVLINK_CAP_P2P_SUPPORTED 0
#define SD_NVML_FEATURE_ENABLED 1

struct nvml {
	void *lib;
	int (*init)(void);
	int (*shutdown)(void);
	int (*by_bus_id)(const char *, sd_nvmlDevice_t *);
	int (*link_state)(sd_nvmlDevice_t, unsigned int, int *);
	int (*link_remote_pci)(sd_nvmlDevice_t, unsigned int,
			       sd_nvmlPciInfo_t *);
	int (*link_remote_type)(sd_nvmlDevice_t, unsigned int, int *);
	int (*ancestor)(sd_nvmlDevice_t, sd_nvmlDevice_t, int *);
	/* optional: every GPU of the host, whatever CUDA_VISIBLE_DEVICES */
	int (*count)(unsigned int *);
	int (*by_index)(unsigned int, sd_nvmlDevice_t *);
	int (*pci_info)(sd_nvmlDevice_t, sd_nvmlPciInfo_t *);
	/* optional: what NCCL asks on sm_90 and newer */
	int (*cc)(sd_nvmlDevice_t, int *, int *);
	int (*capability)(sd_nvmlDevice_t, unsigned int, int, unsigned int *);
	int (*field_values)(sd_nvmlDevice_t, int, sd_nvmlFieldValue_t *);
};

static int nvml_open(struct nvml *m)
{
	memset(m, 0, sizeof(*m));
	m->lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!m->lib)
		return -1;
	*(void **)&m->init = dlsym(m->lib, "nvmlInit_v2");
	*(void **)&m->shutdown = dlsym(m->lib, "nvmlShutdown");
	*(void **)&m->by_bus_id = dlsym(m->lib,
					"nvmlDeviceGetHandleByPciBusId_v2");
	*(void **)&m->link_state = dlsym(m->lib, "nvmlDeviceGetNvLinkState");
	*(void **)&m->link_remote_pci =
		dlsym(m->lib, "nvmlDeviceGetNvLinkRemotePciInfo_v2");
	*(void **)&m->link_remote_type =
		dlsym(m->lib, "nvmlDeviceGetNvLinkRemoteDeviceType");
	*(void **)&m->ancestor =
		dlsym(m->lib, "nvmlDeviceGetTopologyCommonAncestor");
	*(void **)&m->count = dlsym(m->lib, "nvmlDeviceGetCount_v2");
	*(void **)&m->by_index = dlsym(m->lib, "nvmlDeviceGetHandleByIndex_v2");
	*(void **)&m->pci_info = dlsym(m->lib, "nvmlDeviceGetPciInfo_v3");
	*(void **)&m->cc = dlsym(m->lib, "nvmlDeviceGetCudaComputeCapability");
	*(void **)&m->capability = dlsym(m->lib,
					 "nvmlDeviceGetNvLinkCapability");
	*(void **)&m->field_values = dlsym(m->lib, "nvmlDeviceGetFieldValues");
	if (!m->init || !m->shutdown || !m->by_bus_id || !m->link_state ||
	    !m->link_remote_pci || !m->ancestor || m->init() != 0) {
		dlclose(m->lib);
		m->lib = NULL;
		return -1;
	}
	return 0;
}

static int nvml_links(struct nvml *m, sd_nvmlDevice_t *dev,
		      struct sd_nvml_answer *a);

int sd_links_probe(struct sd_nvml_answer *a)
{
	int n = 0;
	memset(a, 0, sizeof(*a));
	if (cudaGetDeviceCount(&n) != cudaSuccess || n <= 0)
		return -1;
	if (n > SD_LINKS_MAX_GPUS)
		n = SD_LINKS_MAX_GPUS;
	a->ngpus = n;
	for (int i = 0; i < n; i++) {
		char bus[32] = "";
		cudaDeviceGetPCIBusId(bus, sizeof(bus), i);
		sd_pci_normalize(bus, a->gpu[i].bus_id,
				 sizeof(a->gpu[i].bus_id));
		for (int j = 0; j < n; j++) {
			int v = -1;
			a->p2p[i][j] = -1;
			if (i != j && cudaDeviceGetP2PAttribute(
					      &v, cudaDevP2PAttrAccessSupported,
					      i, j) == cudaSuccess)
				a->p2p[i][j] = v;
		}
	}
	struct nvml m;
	if (nvml_open(&m) != 0)
		return 0;
	sd_nvmlDevice_t dev[SD_LINKS_MAX_GPUS] = { 0 };
	int ok = 1;
	for (int i = 0; i < n && ok; i++)
		ok = m.by_bus_id(a->gpu[i].bus_id, &dev[i]) == 0;
	a->have_nvml = ok && nvml_links(&m, dev, a);
	m.shutdown();
	dlclose(m.lib);
	return 0;
}

/* The PCI class of bus id `bus` from sysfs (0x068000 for an NVSwitch), or
 * 0 when it cannot be read. */
static int pci_class(const char *bus)
{
	char path[96], line[32] = "";
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/class", bus);
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	int ok = fgets(line, sizeof(line), f) != NULL;
	fclose(f);
	return ok ? (int)strtol(line, NULL, 16) : 0;
}

/* Whether NVML's bus id is one (NVML gives an empty or unprintable one
 * for an NVSwitch the host cannot see). */
static int printable_bus(const char *b)
{
	if (!b[0])
		return 0;
	for (const char *p = b; *p; p++)
		if (*p < 0x21 || *p > 0x7e)
			return 0;
	return 1;
}

/*
 * NVLink states and PCIe common ancestors of the a->ngpus GPUs dev[] into
 * a; 1, or 0 when NVML failed for one.  The links are probed as NCCL
 * probes them (graph/xml.cc, ncclTopoGetXmlFromGpu): as many as the
 * compute capability has, only those able to carry P2P, the state from
 * the NVLINK_GET_STATE field on sm_90 and newer (where
 * nvmlDeviceGetNvLinkState is not what NCCL reads), and the far end told
 * by its PCI class.
 */
static int nvml_links(struct nvml *mp, sd_nvmlDevice_t *dev,
		      struct sd_nvml_answer *a)
{
	struct nvml m = *mp;
	int n = a->ngpus, ok = 1;
	for (int i = 0; i < n && ok; i++) {
		int major = 0, minor = 0, sm = 0;
		if (m.cc && m.cc(dev[i], &major, &minor) == 0)
			sm = major * 10 + minor;
		int nl = sm ? sd_nvml_max_links(sm) : SD_NVML_NVLINK_MAX_LINKS;
		if (nl > SD_LINKS_MAX_NVLINKS)
			nl = SD_LINKS_MAX_NVLINKS;
		a->gpu[i].nlinks = nl;
		for (int l = 0; l < nl; l++) {
			struct sd_nvml_link *k = &a->gpu[i].link[l];
			int st = 0, type = SD_NVML_NVLINK_GPU;
			unsigned int can = 0;
			sd_nvmlPciInfo_t pci;
			if (m.capability &&
			    (m.capability(dev[i], (unsigned)l,
					  SD_NVML_NVLINK_CAP_P2P_SUPPORTED,
					  &can) != 0 || !can))
				continue;
			if (sm >= 90 && m.field_values) {
				sd_nvmlFieldValue_t fv;
				memset(&fv, 0, sizeof(fv));
				fv.fieldId = SD_NVML_FI_DEV_NVLINK_GET_STATE;
				fv.scopeId = (unsigned)l;
				st = m.field_values(dev[i], 1, &fv) == 0 &&
				     fv.nvmlReturn == 0 &&
				     fv.value.uiVal == SD_NVML_FEATURE_ENABLED;
			} else if (m.link_state(dev[i], (unsigned)l, &st) != 0) {
				st = 0;
			}
			/* a link whose far end NVML cannot name is one NCCL
			 * does not use either */
			memset(&pci, 0, sizeof(pci));
			if (!st ||
			    m.link_remote_pci(dev[i], (unsigned)l, &pci) != 0)
				continue;
			k->active = 1;
			k->remote_type = -1;
			if (m.link_remote_type &&
			    m.link_remote_type(dev[i], (unsigned)l, &type) == 0)
				k->remote_type = type;
			if (printable_bus(pci.busId)) {
				sd_pci_normalize(pci.busId, k->remote_bus_id,
						 sizeof(k->remote_bus_id));
				k->remote_class = pci_class(k->remote_bus_id);
			}
		}
		for (int j = 0; j < n; j++) {
			int lvl = -1;
			if (i != j && m.ancestor(dev[i], dev[j], &lvl) == 0)
				a->ancestor[i][j] = lvl;
			else
				a->ancestor[i][j] = -1;
		}
	}
	return ok;
}

int sd_links_probe_host(struct sd_nvml_answer *a, char *note, size_t len)
{
	struct nvml m;
	unsigned int n = 0;
	note[0] = '\0';
	memset(a, 0, sizeof(*a));
	if (nvml_open(&m) == 0) {
		sd_nvmlDevice_t dev[SD_LINKS_MAX_GPUS] = { 0 };
		int ok = m.count && m.by_index && m.pci_info &&
			 m.count(&n) == 0 && n > 0;
		if (ok && n > SD_LINKS_MAX_GPUS) {
			snprintf(note, len, "the host has %u GPUs; the links "
				 "of the first %d are shown", n,
				 SD_LINKS_MAX_GPUS);
			n = SD_LINKS_MAX_GPUS;
		}
		for (unsigned int i = 0; ok && i < n; i++) {
			sd_nvmlPciInfo_t pci;
			memset(&pci, 0, sizeof(pci));
			ok = m.by_index(i, &dev[i]) == 0 &&
			     m.pci_info(dev[i], &pci) == 0;
			sd_pci_normalize(pci.busId, a->gpu[i].bus_id,
					 sizeof(a->gpu[i].bus_id));
			for (unsigned int j = 0; j < n; j++)
				a->p2p[i][j] = -1;
		}
		a->ngpus = ok ? (int)n : 0;
		ok = ok && nvml_links(&m, dev, a);
		m.shutdown();
		dlclose(m.lib);
		if (ok) {
			a->have_nvml = 1;
			return 0;
		}
		memset(a, 0, sizeof(*a));
	}
	if (sd_links_probe(a) != 0) {
		snprintf(note, len, "no GPU found: NVML (libnvidia-ml.so.1) "
			 "and CUDA see none on this host");
		return -1;
	}
	if (!a->have_nvml)
		snprintf(note, len, "NVML (libnvidia-ml.so.1) did not answer: "
			 "classes from CUDA peer access, among the GPUs this "
			 "rank sees");
	return 0;
}

int sd_socket_ifaces_probe(char *out, size_t len)
{
	struct ifaddrs *all = NULL;
	const char *names[64];
	int n = 0;
	out[0] = '\0';
	if (getifaddrs(&all) != 0)
		return 0;
	for (struct ifaddrs *i = all; i && n < 64; i = i->ifa_next) {
		if (!i->ifa_addr || !(i->ifa_flags & IFF_UP))
			continue;
		if (i->ifa_addr->sa_family != AF_INET &&
		    i->ifa_addr->sa_family != AF_INET6)
			continue;
		int dup = 0;
		for (int k = 0; k < n; k++)
			dup |= strcmp(names[k], i->ifa_name) == 0;
		if (!dup)
			names[n++] = i->ifa_name;
	}
	int k = sd_socket_ifaces(names, n, getenv("NCCL_SOCKET_IFNAME"), out,
				 len);
	freeifaddrs(all);
	return k;
}
