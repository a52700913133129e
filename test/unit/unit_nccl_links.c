/*
 * unit_nccl_links.c - link classification (plugins/nccl/links.c) replayed
 * from recorded NVML answers: an 8-GPU NVSwitch box (HGX H100: 18 links per
 * GPU, all to NVSwitches), a PCIe box (two PCIe switches on two sockets),
 * a pair joined by an NVLink bridge, a host without NVML (CUDA peer access
 * only), and NCCL's socket interface choice.
 */
#include <stdio.h>
#include <string.h>

#include "links.h"
#include "tap.h"

static struct sd_nvml_answer a;

static void set_bus(int i, const char *bus)
{
	snprintf(a.gpu[i].bus_id, sizeof(a.gpu[i].bus_id), "%s", bus);
}

static void nvswitch_box(void)
{
	/* NVML's answer on an HGX H100: every GPU's 18 links reach an
	 * NVSwitch; GPUs 0-3 on NUMA node 0, 4-7 on node 1 */
	static const char *bus[8] = { "0000:18:00.0", "0000:2a:00.0",
				      "0000:3a:00.0", "0000:5d:00.0",
				      "0000:9a:00.0", "0000:ab:00.0",
				      "0000:ba:00.0", "0000:db:00.0" };
	memset(&a, 0, sizeof(a));
	a.ngpus = 8;
	a.have_nvml = 1;
	for (int i = 0; i < 8; i++) {
		set_bus(i, bus[i]);
		a.gpu[i].nlinks = 18;
		for (int l = 0; l < 18; l++) {
			a.gpu[i].link[l].active = 1;
			a.gpu[i].link[l].remote_type = SD_NVML_NVLINK_SWITCH;
			snprintf(a.gpu[i].link[l].remote_bus_id, 32,
				 "00000000:%02X:00.0", 0xc0 + l % 4);
		}
		for (int j = 0; j < 8; j++)
			a.ancestor[i][j] = i / 4 == j / 4 ? SD_NVML_TOPO_NODE
							  : SD_NVML_TOPO_SYSTEM;
	}
}

static void pcie_box(void)
{
	/* 4 GPUs, no NVLink: 0-1 under one PCIe switch, 2-3 under another;
	 * 0-1 on socket 0, 2-3 on socket 1; GPU 1 has one link down */
	memset(&a, 0, sizeof(a));
	a.ngpus = 4;
	a.have_nvml = 1;
	set_bus(0, "0000:04:00.0");
	set_bus(1, "0000:05:00.0");
	set_bus(2, "0000:84:00.0");
	set_bus(3, "0000:85:00.0");
	static const int anc[4][4] = {
		{ 0, SD_NVML_TOPO_SINGLE, SD_NVML_TOPO_SYSTEM, SD_NVML_TOPO_SYSTEM },
		{ SD_NVML_TOPO_SINGLE, 0, SD_NVML_TOPO_SYSTEM, SD_NVML_TOPO_SYSTEM },
		{ SD_NVML_TOPO_SYSTEM, SD_NVML_TOPO_SYSTEM, 0, SD_NVML_TOPO_HOSTBRIDGE },
		{ SD_NVML_TOPO_SYSTEM, SD_NVML_TOPO_SYSTEM, SD_NVML_TOPO_HOSTBRIDGE, 0 },
	};
	for (int i = 0; i < 4; i++) {
		a.gpu[i].nlinks = 18; /* probed, none active */
		for (int j = 0; j < 4; j++)
			a.ancestor[i][j] = anc[i][j];
	}
}

static void check_pairs(const char *box, const int (*want)[4], int n)
{
	for (int k = 0; k < n; k++) {
		struct sd_link l;
		sd_link_classify(&a, want[k][0], want[k][1], &l);
		is_int(l.kind, want[k][2], "%s: GPU %d - GPU %d is %s",
		       box, want[k][0], want[k][1],
		       sd_link_kind_name((enum sd_link_kind)want[k][2]));
		is_int(l.nvlinks, want[k][3], "%s: GPU %d - GPU %d links",
		       box, want[k][0], want[k][1]);
	}
}

int main(void)
{
	char buf[4096];

	nvswitch_box();
	static const int sw[][4] = {
		{ 0, 1, SD_LINK_NVSWITCH, 18 }, { 0, 7, SD_LINK_NVSWITCH, 18 },
		{ 3, 4, SD_LINK_NVSWITCH, 18 }, { 5, 5, SD_LINK_SELF, 0 },
	};
	check_pairs("nvswitch box", sw, 4);
	a.gpu[6].link[17].active = 0; /* a link down shows as 17 */
	check_pairs("nvswitch box, one link down",
		    (const int[][4]){ { 6, 2, SD_LINK_NVSWITCH, 17 },
				      { 2, 6, SD_LINK_NVSWITCH, 17 } }, 2);
	sd_links_format(&a, buf, sizeof(buf));
	ok(strncmp(buf, "0 1 nvswitch 18\n0 2 nvswitch 18\n", 32) == 0,
	   "pairs as text");

	/* the same box as NVML answers on sm_90 where it does not give the
	 * far end's type: the NVSwitches are told by their PCI class, or by
	 * having no bus id NVML can print (invisible, as in a VM), as NCCL
	 * tells them; every pair is still NVSwitch */
	nvswitch_box();
	for (int i = 0; i < 8; i++)
		for (int l = 0; l < 18; l++) {
			struct sd_nvml_link *k = &a.gpu[i].link[l];
			k->remote_type = -1;
			k->remote_class = i < 4 ? SD_PCI_CLASS_NVSWITCH : 0;
			if (i >= 4)
				k->remote_bus_id[0] = '\0';
		}
	int all = 0;
	for (int i = 0; i < 8; i++)
		for (int j = i + 1; j < 8; j++) {
			struct sd_link l;
			sd_link_classify(&a, i, j, &l);
			all += l.kind == SD_LINK_NVSWITCH && l.nvlinks == 18;
		}
	is_int(all, 28, "sm_90 NVSwitch box without NVML's remote type: all "
	       "28 pairs are nvswitch with 18 links");
	/* a far end with a GPU's class and no GPU of the answer at that bus
	 * is not a switch */
	a.gpu[0].link[0].remote_class = 0x030200;
	snprintf(a.gpu[0].link[0].remote_bus_id, 32, "0000:c0:00.0");
	ok(!sd_link_to_switch(&a.gpu[0].link[0]),
	   "a far end of class 0x0302 (a 3D controller) is not an NVSwitch");
	static const int sms[][2] = { { 52, 0 }, { 60, 4 }, { 70, 6 },
				      { 80, 12 }, { 86, 12 }, { 90, 18 },
				      { 100, 18 } };
	for (size_t i = 0; i < sizeof(sms) / sizeof(sms[0]); i++)
		is_int(sd_nvml_max_links(sms[i][0]), sms[i][1],
		       "sm %d: NCCL probes %d NVLinks", sms[i][0], sms[i][1]);
	int lines = 0;
	for (char *p = buf; *p; p++)
		lines += *p == '\n';
	is_int(lines, 28, "8 GPUs give 28 pairs");

	pcie_box();
	static const int pc[][4] = {
		{ 0, 1, SD_LINK_PCIE_SWITCH, 0 }, { 2, 3, SD_LINK_HOST_BRIDGE, 0 },
		{ 1, 2, SD_LINK_CROSS_SOCKET, 0 }, { 3, 0, SD_LINK_CROSS_SOCKET, 0 },
	};
	check_pairs("pcie box", pc, 4);
	a.ancestor[2][3] = a.ancestor[3][2] = SD_NVML_TOPO_NODE;
	check_pairs("pcie box", (const int[][4]){ { 2, 3, SD_LINK_NUMA_NODE, 0 } },
		    1);

	/* an NVLink bridge between GPUs 0 and 1 (4 links, NVML's bus id
	 * spelling with an 8-digit domain and capitals) */
	for (int l = 0; l < 4; l++) {
		a.gpu[0].link[l] = (struct sd_nvml_link){
			.active = 1, .remote_type = SD_NVML_NVLINK_GPU,
			.remote_bus_id = "00000000:05:00.0" };
		a.gpu[1].link[l] = (struct sd_nvml_link){
			.active = 1, .remote_type = SD_NVML_NVLINK_GPU,
			.remote_bus_id = "00000000:04:00.0" };
	}
	check_pairs("bridged pair", (const int[][4]){
			    { 0, 1, SD_LINK_NVLINK, 4 }, { 1, 0, SD_LINK_NVLINK, 4 },
			    { 0, 2, SD_LINK_CROSS_SOCKET, 0 } }, 3);

	/* no NVML: CUDA peer access only */
	a.have_nvml = 0;
	a.p2p[0][1] = 1;
	a.p2p[0][2] = 0;
	a.p2p[0][3] = -1;
	check_pairs("no nvml", (const int[][4]){ { 0, 1, SD_LINK_P2P, 0 },
						  { 0, 2, SD_LINK_NO_P2P, 0 },
						  { 0, 3, SD_LINK_UNKNOWN, 0 } },
		    3);

	char out[64];
	sd_pci_normalize("00000000:1B:00.0", out, sizeof(out));
	is_int(strcmp(out, "0000:1b:00.0"), 0, "NVML bus id normalised");
	sd_pci_normalize("0000:1b:00.0", out, sizeof(out));
	is_int(strcmp(out, "0000:1b:00.0"), 0, "CUDA bus id unchanged");

	/* NCCL's socket interface choice */
	static const char *const ifs[] = { "lo", "docker0", "eth0", "ib0",
					   "ib1", "enp1s0" };
	static const struct { const char *env, *want; int n; } rows[] = {
		{ NULL, "ib0,ib1", 2 },
		{ "eth", "eth0", 1 },
		{ "^ib,lo", "docker0,eth0,enp1s0", 3 },
		{ "=ib", "", 0 },
		{ "=ib1,eth0", "eth0,ib1", 2 }, /* host order */
		{ "en,eth", "eth0,enp1s0", 2 },
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		int k = sd_socket_ifaces(ifs, 6, rows[i].env, out, sizeof(out));
		is_int(k, rows[i].n, "NCCL_SOCKET_IFNAME=%s picks %d",
		       rows[i].env ? rows[i].env : "(unset)", rows[i].n);
		ok(strcmp(out, rows[i].want) == 0, "... namely '%s' (got '%s')",
		   rows[i].want, out);
	}
	static const char *const noib[] = { "virbr0", "lo", "docker0", "eth0" };
	sd_socket_ifaces(noib, 4, NULL, out, sizeof(out));
	ok(strcmp(out, "eth0") == 0, "no ib: any but docker, lo and virbr (%s)",
	   out);
	sd_socket_ifaces(noib, 3, NULL, out, sizeof(out));
	ok(strcmp(out, "docker0") == 0, "then docker (%s)", out);
	sd_socket_ifaces(noib, 2, NULL, out, sizeof(out));
	ok(strcmp(out, "lo") == 0, "then lo (%s)", out);
	sd_socket_ifaces(noib, 1, NULL, out, sizeof(out));
	ok(strcmp(out, "virbr0") == 0, "then virbr (%s)", out);
	return done_testing();
}
