/*
 * unit_topo.c - the host facts of lib/topo.c read from a fake sysfs and
 * /proc planted in a temporary folder (interfaces up, down, with unknown
 * and unreadable speeds, a device on NUMA node 1, lo that must be left
 * out; three NUMA nodes numbered past 9; a cpuinfo), cpulists from a
 * table, the affinity-to-NUMA mapping, and the NCCL plugin's links JSON
 * (plugins/nccl/links.c) from a recorded NVML answer.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shakedown/backend.h"
#include "links.h"
#include "sink.h"
#include "tap.h"
#include "topo.h"
#include "util.h"

static char root[256];

/* Write root/path (making its folders) with text. */
static void plant(const char *path, const char *text)
{
	char full[512];
	snprintf(full, sizeof(full), "%s/%s", root, path);
	for (char *p = full + strlen(root) + 1; *p; p++)
		if (*p == '/') {
			*p = '\0';
			mkdir(full, 0755);
			*p = '/';
		}
	FILE *f = fopen(full, "w");
	if (!f) {
		printf("Bail out! cannot write %s\n", full);
		exit(1);
	}
	fputs(text, f);
	fclose(f);
}

static void plant_dir(const char *path)
{
	char full[512];
	snprintf(full, sizeof(full), "%s/%s", root, path);
	mkdir(full, 0755);
}

static void plant_iface(const char *name, const char *state,
			const char *speed, const char *mtu, const char *mac)
{
	char p[256];
	snprintf(p, sizeof(p), "sys/class/net/%s/operstate", name);
	plant(p, state);
	if (speed) {
		snprintf(p, sizeof(p), "sys/class/net/%s/speed", name);
		plant(p, speed);
	}
	snprintf(p, sizeof(p), "sys/class/net/%s/mtu", name);
	plant(p, mtu);
	snprintf(p, sizeof(p), "sys/class/net/%s/address", name);
	plant(p, mac);
}

static void plant_host(void)
{
	plant_iface("lo", "unknown\n", NULL, "65536\n", "00:00:00:00:00:00\n");
	/* a 25G NIC with its device on NUMA node 1, jumbo frames */
	plant_iface("eth0", "up\n", "25000\n", "9000\n", "0c:42:a1:00:00:01\n");
	plant("sys/class/net/eth0/device/numa_node", "1\n");
	/* an InfiniBand port whose speed the kernel does not know */
	plant_iface("ib0", "up\n", "-1\n", "2044\n",
		    "80:00:02:08:fe:80:00:00:00:00:00:00:0c:42:a1:03:00:4c:3d:5e\n");
	plant("sys/class/net/ib0/device/numa_node", "-1\n");
	/* a link that is down: reading its speed fails (EINVAL in the
	 * kernel; here a folder, which cannot be read as a file) */
	plant_iface("eth1", "down\n", NULL, "1500\n", "0c:42:a1:00:00:02\n");
	plant_dir("sys/class/net/eth1/speed");
	/* a virtual interface: no speed file, no device */
	plant_iface("veth7", "lowerlayerdown\n", NULL, "1500\n",
		    "aa:bb:cc:dd:ee:ff\n");
	plant("sys/devices/system/cpu/online", "0-15\n");
	plant("sys/devices/system/node/node0/cpulist", "0-3,8-11\n");
	plant("sys/devices/system/node/node0/meminfo",
	      "Node 0 MemTotal:       16384 kB\nNode 0 MemFree:  1 kB\n");
	plant("sys/devices/system/node/node1/cpulist", "4-7,12-15\n");
	plant("sys/devices/system/node/node1/meminfo",
	      "Node 1 MemTotal:       32768 kB\n");
	plant("sys/devices/system/node/node10/cpulist", "\n");
	plant("sys/devices/system/node/online", "0-1,10\n");
	plant("proc/cpuinfo", "processor\t: 0\nvendor_id\t: AuthenticAMD\n"
	      "model name\t: AMD EPYC 9654 96-Core Processor\n\n"
	      "processor\t: 1\nmodel name\t: other\n");
}

static void test_cpulists(void)
{
	static const struct { const char *list; int count; } rows[] = {
		{ "", 0 },
		{ "0", 1 },
		{ "0-3", 4 },
		{ "0-3,8-11", 8 },
		{ "0-3,8-11\n", 8 },
		{ "5,7,9-10", 4 },
		{ "3-1", -1 },
		{ "a", -1 },
		{ "1,,2", -1 },
		{ "0-", -1 },
		{ "1 2", -1 },
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		char shown[32];
		size_t l = strcspn(rows[i].list, "\n");
		snprintf(shown, sizeof(shown), "%.*s%s", (int)l, rows[i].list,
			 rows[i].list[l] ? "\\n" : "");
		is_int(sd_topo_cpulist_count(rows[i].list), rows[i].count,
		       "cpulist '%s' holds %d CPUs", shown, rows[i].count);
	}
	is_int(sd_topo_cpulist_has("0-3,8-11", 9), 1, "9 is in 0-3,8-11");
	is_int(sd_topo_cpulist_has("0-3,8-11", 4), 0, "4 is not in 0-3,8-11");
	is_int(sd_topo_cpulist_has("0-3,x", 1), -1, "a broken list says so");
}

static void test_host(void)
{
	static struct sd_topo_host t;
	is_int(sd_topo_host_read(root, &t), 0, "the fake host reads");
	is_int(t.ncpus, 16, "16 CPUs online");
	ok(strcmp(t.cpu_model, "AMD EPYC 9654 96-Core Processor") == 0,
	   "the first model name: '%s'", t.cpu_model);
	is_int(t.nifaces, 4, "4 interfaces: lo is left out");
	const char *want[] = { "eth0", "eth1", "ib0", "veth7" };
	for (int i = 0; i < 4 && i < t.nifaces; i++)
		ok(strcmp(t.iface[i].name, want[i]) == 0,
		   "interface %d is %s (sorted): %s", i, want[i],
		   t.iface[i].name);
	if (t.nifaces != 4)
		return;
	const struct sd_topo_iface *eth0 = &t.iface[0], *eth1 = &t.iface[1];
	const struct sd_topo_iface *ib0 = &t.iface[2], *veth = &t.iface[3];
	ok(strcmp(eth0->state, "up") == 0, "eth0 is up");
	is_int(eth0->speed_mbps, 25000, "eth0 runs at 25000 Mb/s");
	is_int(eth0->mtu, 9000, "eth0 has MTU 9000");
	ok(strcmp(eth0->address, "0c:42:a1:00:00:01") == 0, "eth0's MAC");
	is_int(eth0->numa_node, 1, "eth0's device is on NUMA node 1");
	is_int(eth0->has_device, 1, "eth0 has a device");
	is_int(ib0->speed_mbps, -1, "ib0's speed -1 is unknown");
	is_int(ib0->mtu, 2044, "ib0 has MTU 2044");
	is_int(ib0->numa_node, -1, "ib0's numa_node -1 is none");
	ok(strlen(ib0->address) == 59, "ib0's 20-byte address is whole");
	ok(strcmp(eth1->state, "down") == 0, "eth1 is down");
	is_int(eth1->speed_mbps, -1, "eth1's unreadable speed is unknown");
	is_int(veth->speed_mbps, -1, "veth7 without a speed file: unknown");
	is_int(veth->has_device, 0, "veth7 has no device");
	ok(strcmp(veth->state, "lowerlayerdown") == 0, "veth7's operstate");

	is_int(t.nnuma, 3, "3 NUMA nodes");
	if (t.nnuma == 3) {
		is_int(t.numa[0].node, 0, "node 0 first");
		is_int(t.numa[1].node, 1, "node 1 next");
		is_int(t.numa[2].node, 10, "node 10 last (sorted by number)");
		ok(strcmp(t.numa[1].cpus, "4-7,12-15") == 0, "node 1's cpus");
		is_int(t.numa[1].ncpus, 8, "node 1 has 8 CPUs");
		is_int(t.numa[0].mem_total_bytes, 16384ull * 1024,
		       "node 0 has 16 MiB");
		is_int(t.numa[2].ncpus, 0, "node 10 has no CPUs");
		is_int(t.numa[2].mem_total_bytes, 0, "node 10: memory unknown");
	}

	char *json = sd_topo_json(&t);
	ok(json != NULL, "the host as JSON");
	if (!json)
		return;
	ok(strstr(json, "{\"name\":\"eth0\",\"state\":\"up\",\"speed_mbps\":"
			"25000,\"mtu\":9000,\"address\":\"0c:42:a1:00:00:01\","
			"\"numa_node\":1,\"device\":true,\"source\":\"sysfs\","
			"\"ipv4\":[]}") != NULL,
	   "eth0 in JSON with the keys the database view reads");
	ok(strstr(json, "{\"name\":\"eth1\",\"state\":\"down\",\"speed_mbps\":"
			"null,") != NULL, "an unknown speed is null");
	ok(strstr(json, "\"name\":\"lo\"") == NULL, "no lo in JSON");
	ok(strstr(json, "{\"node\":1,\"cpus\":\"4-7,12-15\",\"ncpus\":8,"
			"\"mem_total_bytes\":33554432}") != NULL,
	   "node 1 in JSON");
	ok(strstr(json, "{\"node\":10,\"cpus\":\"\",\"ncpus\":0,"
			"\"mem_total_bytes\":null}") != NULL,
	   "node 10 in JSON, memory null");
	ok(strncmp(json, "{\"cpus\":16,\"cpu_model\":\"AMD EPYC", 31) == 0,
	   "JSON starts with the CPUs");
	free(json);

	char *j2 = sd_topo_host_json(root);
	char *j1 = sd_topo_json(&t);
	ok(j1 && j2 && strcmp(j1, j2) == 0,
	   "sd_topo_host_json is read then JSON");
	free(j1);
	free(j2);
}

static void test_empty_host(void)
{
	static struct sd_topo_host t;
	char empty[300];
	snprintf(empty, sizeof(empty), "%s/empty", root);
	mkdir(empty, 0755);
	is_int(sd_topo_host_read(empty, &t), 0, "a root with nothing reads");
	is_int(t.nifaces, 0, "no interfaces");
	is_int(t.nnuma, 0, "no NUMA nodes");
	is_int(t.ncpus, -1, "CPUs unknown");
	char *json = sd_topo_json(&t);
	ok(json && strcmp(json, "{\"cpus\":null,\"cpu_model\":\"\","
				"\"interfaces\":[],\"numa\":[]}") == 0,
	   "empty arrays and null: %s", json ? json : "(null)");
	free(json);
	is_int(sd_topo_host_read(root, NULL), SD_ERR_INVALID,
	       "a NULL host is refused");
}

static void test_affinity(void)
{
	static struct sd_topo_host t;
	char cpus[256], nodes[64];
	memset(&t, 0, sizeof(t));
	t.nnuma = 2;
	t.numa[0].node = 3;
	sd_strlcpy(t.numa[0].cpus, "0-8191", sizeof(t.numa[0].cpus));
	t.numa[1].node = 7;
	sd_strlcpy(t.numa[1].cpus, "8191", sizeof(t.numa[1].cpus));
	is_int(sd_topo_affinity(&t, cpus, sizeof(cpus), nodes, sizeof(nodes)),
	       0, "this process's affinity reads");
	ok(sd_topo_cpulist_count(cpus) >= 1 &&
	   sd_topo_cpulist_count(cpus) <= sysconf(_SC_NPROCESSORS_CONF),
	   "its cpulist '%s' holds between 1 and all CPUs", cpus);
	ok(strcmp(nodes, "3") == 0,
	   "its CPUs are on node 3, not on node 7 (CPU 8191): '%s'", nodes);
}

static void test_links_json(void)
{
	static struct sd_nvml_answer a;
	char buf[512];
	memset(&a, 0, sizeof(a));
	a.ngpus = 3;
	a.have_nvml = 1;
	snprintf(a.gpu[0].bus_id, 32, "0000:18:00.0");
	snprintf(a.gpu[1].bus_id, 32, "0000:2a:00.0");
	snprintf(a.gpu[2].bus_id, 32, "0000:9a:00.0");
	/* GPUs 0 and 1 joined by 4 direct NVLinks; 2 across the socket */
	a.gpu[0].nlinks = a.gpu[1].nlinks = 4;
	for (int l = 0; l < 4; l++) {
		a.gpu[0].link[l].active = a.gpu[1].link[l].active = 1;
		snprintf(a.gpu[0].link[l].remote_bus_id, 32,
			 "00000000:2A:00.0");
		snprintf(a.gpu[1].link[l].remote_bus_id, 32,
			 "00000000:18:00.0");
	}
	a.ancestor[0][2] = a.ancestor[2][0] = SD_NVML_TOPO_SYSTEM;
	a.ancestor[1][2] = a.ancestor[2][1] = SD_NVML_TOPO_SYSTEM;
	const char *want =
		"[{\"a\":\"0000:18:00.0\",\"b\":\"0000:2a:00.0\","
		"\"class\":\"nvlink\",\"nvlinks\":4},"
		"{\"a\":\"0000:18:00.0\",\"b\":\"0000:9a:00.0\","
		"\"class\":\"cross-socket\",\"nvlinks\":0},"
		"{\"a\":\"0000:2a:00.0\",\"b\":\"0000:9a:00.0\","
		"\"class\":\"cross-socket\",\"nvlinks\":0}]";
	size_t n = sd_links_json(&a, buf, sizeof(buf));
	ok(strcmp(buf, want) == 0, "three GPUs as the links JSON: %s", buf);
	is_int(n, strlen(want), "the length it needs");
	char small[40];
	n = sd_links_json(&a, small, sizeof(small));
	ok(n >= sizeof(small) && strlen(small) == sizeof(small) - 1,
	   "a short buffer says how much is needed (%zu)", n);
	a.ngpus = 1;
	sd_links_json(&a, buf, sizeof(buf));
	ok(strcmp(buf, "[]") == 0, "one GPU has no pairs: %s", buf);
}

/* The record's host environment: only the variables that shape a run,
 * never one that holds a token. */
static void test_host_env(void)
{
	static const struct sd_backend_ops ops = { .name = "fake",
						   .version = "fake 1.0" };
	char *env[] = { "NCCL_IB_HCA=mlx5_0", "GLOO_SOCKET_IFNAME=eth0",
			"CUDA_VISIBLE_DEVICES=0,1", "SHAKEDOWN_TOKEN=s3cret",
			"SHAKEDOWN_UPLOAD_TOKEN_X=s3cret", "HOME=/root",
			"SHAKEDOWN_DB=/tmp/x.db", "NCCL_NOEQUALS", NULL };
	char *j = sd_topo_host_env_json(&ops, NULL, env);
	ok(j && strstr(j, "\"backend\":\"fake 1.0\"") &&
		   strstr(j, "\"NCCL_IB_HCA\":\"mlx5_0\"") &&
		   strstr(j, "\"GLOO_SOCKET_IFNAME\":\"eth0\"") &&
		   strstr(j, "\"CUDA_VISIBLE_DEVICES\":\"0,1\"") &&
		   strstr(j, "\"SHAKEDOWN_DB\":\"/tmp/x.db\""),
	   "host env: NCCL_, GLOO_, SHAKEDOWN_ and CUDA_VISIBLE_DEVICES kept");
	ok(j && !strstr(j, "s3cret") && !strstr(j, "HOME") &&
		   !strstr(j, "NCCL_NOEQUALS"),
	   "host env: no token, no other variable, nothing without a value");
	free(j);
}

/* The link class of two ranks' devices, from their host's links. */
static void test_link_class(void)
{
	struct sd_rank_info r[3];
	memset(r, 0, sizeof(r));
	for (int q = 0; q < 3; q++)
		snprintf(r[q].host, sizeof(r[q].host), "n1");
	snprintf(r[0].dev.pci_bus_id, sizeof(r[0].dev.pci_bus_id), "0000:1b:00.0");
	snprintf(r[1].dev.pci_bus_id, sizeof(r[1].dev.pci_bus_id), "0000:1c:00.0");
	struct sd_host_env h = {
		.host = "n1",
		.json = "{\"kernel\":\"6\",\"links\":[{\"a\":\"0000:1b:00.0\","
			"\"b\":\"0000:1c:00.0\",\"class\":\"nvlink\",\"count\":18}]}"
	};
	const char *c01 = sd_topo_link_class(r, &h, 1, 0, 1);
	const char *c10 = sd_topo_link_class(r, &h, 1, 1, 0);
	ok(c01 && c10 && strcmp(c01, "nvlink") == 0 && strcmp(c10, "nvlink") == 0,
	   "link class: nvlink in either order");
	ok(sd_topo_link_class(r, &h, 1, 0, 2) == NULL,
	   "link class: a device without a bus id is unknown");
	h.json = "{\"links\":[{\"a\":\"0000:1b:00.0\",\"b\":\"0000:1c:00.0\","
		 "\"class\":\"warp-drive\"}]}";
	ok(sd_topo_link_class(r, &h, 1, 0, 1) == NULL,
	   "link class: a class it does not know is unknown");
	ok(sd_topo_link_class(r, &h, 0, 0, 1) == NULL,
	   "link class: a host without an env is unknown");
}

int main(void)
{
	test_host_env();
	test_link_class();
	snprintf(root, sizeof(root), "%s/sdtopo.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(root)) {
		printf("Bail out! cannot make a temporary folder\n");
		return 1;
	}
	plant_host();
	test_cpulists();
	test_host();
	test_empty_host();
	test_affinity();
	test_links_json();
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	if (system(cmd) != 0)
		printf("# could not remove %s\n", root);
	return done_testing();
}
