/*
 * links.c - classify GPU pairs and pick socket interfaces (see links.h).
 * Pure C over recorded answers; no NVML, CUDA or NCCL here.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "links.h"

const char *sd_link_kind_name(enum sd_link_kind k)
{
	switch (k) {
	case SD_LINK_SELF: return "self";
	case SD_LINK_NVLINK: return "nvlink";
	case SD_LINK_NVSWITCH: return "nvswitch";
	case SD_LINK_PCIE_SWITCH: return "pcie-switch";
	case SD_LINK_HOST_BRIDGE: return "host-bridge";
	case SD_LINK_NUMA_NODE: return "numa-node";
	case SD_LINK_CROSS_SOCKET: return "cross-socket";
	case SD_LINK_P2P: return "p2p";
	case SD_LINK_NO_P2P: return "no-p2p";
	default: return "unknown";
	}
}

void sd_pci_normalize(const char *in, char *out, size_t len)
{
	char low[64];
	size_t k = 0;
	for (; in && in[k] && k < sizeof(low) - 1; k++)
		low[k] = (char)tolower((unsigned char)in[k]);
	low[k] = '\0';
	/* domain:bus:dev.fn with an 8-digit domain: keep its last 4 digits */
	const char *colon = strchr(low, ':');
	const char *rest = low;
	if (colon && strchr(colon + 1, ':') && colon - low > 4)
		rest = colon - 4;
	snprintf(out, len, "%s", rest);
}

static int same_bus(const char *a, const char *b)
{
	char x[64], y[64];
	sd_pci_normalize(a, x, sizeof(x));
	sd_pci_normalize(b, y, sizeof(y));
	return x[0] && strcmp(x, y) == 0;
}

int sd_nvml_max_links(int sm)
{
	return sm < 60 ? 0 : sm < 70 ? 4 : sm < 80 ? 6 : sm < 90 ? 12 : 18;
}

int sd_link_to_switch(const struct sd_nvml_link *k)
{
	if (k->remote_type == SD_NVML_NVLINK_SWITCH)
		return 1;
	if (k->remote_class &&
	    (k->remote_class & 0xffff00) == SD_PCI_CLASS_NVSWITCH)
		return 1;
	return k->remote_bus_id[0] == '\0';
}

void sd_link_classify(const struct sd_nvml_answer *a, int i, int j,
		      struct sd_link *out)
{
	out->kind = SD_LINK_UNKNOWN;
	out->nvlinks = 0;
	if (i < 0 || j < 0 || i >= a->ngpus || j >= a->ngpus)
		return;
	if (i == j) {
		out->kind = SD_LINK_SELF;
		return;
	}
	if (!a->have_nvml) {
		int p = a->p2p[i][j];
		out->kind = p > 0 ? SD_LINK_P2P : p == 0 ? SD_LINK_NO_P2P
							 : SD_LINK_UNKNOWN;
		return;
	}
	int direct = 0, sw_i = 0, sw_j = 0;
	for (int l = 0; l < a->gpu[i].nlinks; l++) {
		const struct sd_nvml_link *k = &a->gpu[i].link[l];
		if (!k->active)
			continue;
		/* a GPU at the far end is known by its bus id, whatever
		 * type NVML gave (or did not give) */
		if (same_bus(k->remote_bus_id, a->gpu[j].bus_id))
			direct++;
		else if (sd_link_to_switch(k))
			sw_i++;
	}
	for (int l = 0; l < a->gpu[j].nlinks; l++)
		if (a->gpu[j].link[l].active &&
		    sd_link_to_switch(&a->gpu[j].link[l]))
			sw_j++;
	if (direct) {
		out->kind = SD_LINK_NVLINK;
		out->nvlinks = direct;
		return;
	}
	if (sw_i && sw_j) {
		out->kind = SD_LINK_NVSWITCH;
		out->nvlinks = sw_i < sw_j ? sw_i : sw_j;
		return;
	}
	int lvl = a->ancestor[i][j];
	if (lvl <= SD_NVML_TOPO_MULTIPLE && lvl >= 0)
		out->kind = SD_LINK_PCIE_SWITCH;
	else if (lvl == SD_NVML_TOPO_HOSTBRIDGE)
		out->kind = SD_LINK_HOST_BRIDGE;
	else if (lvl == SD_NVML_TOPO_NODE)
		out->kind = SD_LINK_NUMA_NODE;
	else if (lvl == SD_NVML_TOPO_SYSTEM)
		out->kind = SD_LINK_CROSS_SOCKET;
}

size_t sd_links_format(const struct sd_nvml_answer *a, char *buf, size_t len)
{
	size_t used = 0;
	if (len)
		buf[0] = '\0';
	for (int i = 0; i < a->ngpus; i++)
		for (int j = i + 1; j < a->ngpus; j++) {
			struct sd_link l;
			sd_link_classify(a, i, j, &l);
			if (used >= len)
				return used;
			int w = snprintf(buf + used, len - used, "%d %d %s %d\n",
					 i, j, sd_link_kind_name(l.kind),
					 l.nvlinks);
			if (w < 0)
				return used;
			used += (size_t)w < len - used ? (size_t)w
						       : len - used - 1;
		}
	return used;
}

size_t sd_links_json(const struct sd_nvml_answer *a, char *buf, size_t len)
{
	size_t used = 0;
	int first = 1;
	char tmp[160];
	for (int pass = 0; pass < 2; pass++) {
		const char *t = pass ? "]" : "[";
		if (used + 1 < len)
			snprintf(buf + used, len - used, "%s", t);
		used++;
		for (int i = 0; !pass && i < a->ngpus; i++)
			for (int j = i + 1; j < a->ngpus; j++) {
				struct sd_link l;
				sd_link_classify(a, i, j, &l);
				int w = snprintf(tmp, sizeof(tmp),
						 "%s{\"a\":\"%s\",\"b\":\"%s\","
						 "\"class\":\"%s\","
						 "\"nvlinks\":%d}",
						 first ? "" : ",",
						 a->gpu[i].bus_id,
						 a->gpu[j].bus_id,
						 sd_link_kind_name(l.kind),
						 l.nvlinks);
				first = 0;
				if (w < 0)
					continue;
				if (used < len)
					snprintf(buf + used, len - used, "%s",
						 tmp);
				used += (size_t)w;
			}
	}
	if (len)
		buf[used < len ? used : len - 1] = '\0';
	return used;
}

/* Whether name matches one entry of the comma-separated list. */
static int match_list(const char *name, const char *list, int exact)
{
	const char *p = list;
	while (p && *p) {
		const char *c = strchr(p, ',');
		size_t l = c ? (size_t)(c - p) : strlen(p);
		if (l > 0 && strncmp(name, p, l) == 0 &&
		    (!exact || name[l] == '\0'))
			return 1;
		p = c ? c + 1 : NULL;
	}
	return 0;
}

/* Select names matching (or, with exclude, not matching) list. */
static int pick(const char *const *names, int n, const char *list, int exclude,
		int exact, char *out, size_t len)
{
	int k = 0;
	out[0] = '\0';
	for (int i = 0; i < n; i++) {
		if (match_list(names[i], list, exact) == exclude)
			continue;
		size_t u = strlen(out);
		snprintf(out + u, len - u, "%s%s", k ? "," : "", names[i]);
		k++;
	}
	return k;
}

int sd_socket_ifaces(const char *const *names, int n, const char *ifname,
		     char *out, size_t len)
{
	if (ifname && *ifname) {
		int exclude = ifname[0] == '^';
		const char *s = ifname + exclude;
		int exact = s[0] == '=';
		return pick(names, n, s + exact, exclude, exact, out, len);
	}
	/* NCCL's own order (misc/socket.cc, ncclFindInterfaces): ib, then
	 * anything but docker, lo and virbr (libvirt's bridges), then
	 * docker, lo, virbr */
	int k = pick(names, n, "ib", 0, 0, out, len);
	if (!k)
		k = pick(names, n, "docker,lo,virbr", 1, 0, out, len);
	if (!k)
		k = pick(names, n, "docker", 0, 0, out, len);
	if (!k)
		k = pick(names, n, "lo", 0, 0, out, len);
	if (!k)
		k = pick(names, n, "virbr", 0, 0, out, len);
	return k;
}
