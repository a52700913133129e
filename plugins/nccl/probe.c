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

/* NVLink states and PCIe common ancestors of the a->ngpus GPUs dev[]
 * into a; 1, or 0 when NVML failed for one. */
static int nvml_links(struct nvml *mp, sd_nvmlDevice_t *dev,
		      struct sd_nvml_answer *a)
{
	struct nvml m = *mp;
	int n = a->ngpus, ok = 1;
	for (int i = 0; i < n && ok; i++) {
		a->gpu[i].nlinks = SD_NVML_NVLINK_MAX_LINKS;
		for (unsigned l = 0; l < SD_NVML_NVLINK_MAX_LINKS; l++) {
			struct sd_nvml_link *k = &a->gpu[i].link[l];
			int st = 0, type = SD_NVML_NVLINK_GPU;
			sd_nvmlPciInfo_t pci;
			if (m.link_state(dev[i], l, &st) != 0 || !st)
				continue;
			k->active = 1;
			if (m.link_remote_type &&
			    m.link_remote_type(dev[i], l, &type) == 0)
				k->remote_type = type;
			memset(&pci, 0, sizeof(pci));
			if (m.link_remote_pci(dev[i], l, &pci) == 0)
				sd_pci_normalize(pci.busId, k->remote_bus_id,
						 sizeof(k->remote_bus_id));
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
