/*
 * nccl_links.c - print how this host's GPUs reach each other and which
 * interfaces NCCL's socket transport would use: the link facts of the NCCL
 * plugin (links.h, probe.c) without running shakedown.  Used by
 * test/gpu/check.sh; exits 3 when CUDA sees no GPU.
 *
 * Output, one fact per line:
 *   nvml yes|no
 *   gpu INDEX PCI_BUS_ID
 *   pair I J KIND NVLINKS
 *   socket IFACES
 */
#include "config.h"

#include <stdio.h>

#include "links.h"
#include "probe.h"

int main(void)
{
	static struct sd_nvml_answer a;
	static char pairs[16384];
	char net[256];

	if (sd_links_probe(&a) != 0) {
		fprintf(stderr, "nccl_links: no CUDA device or driver found; "
			"run it on a GPU node\n");
		return 3;
	}
	printf("nvml %s\n", a.have_nvml ? "yes" : "no");
	for (int i = 0; i < a.ngpus; i++)
		printf("gpu %d %s\n", i, a.gpu[i].bus_id);
	sd_links_format(&a, pairs, sizeof(pairs));
	for (char *p = pairs; *p;) {
		char *nl = p;
		while (*nl && *nl != '\n')
			nl++;
		printf("pair %.*s\n", (int)(nl - p), p);
		p = *nl ? nl + 1 : nl;
	}
	sd_socket_ifaces_probe(net, sizeof(net));
	printf("socket %s\n", net[0] ? net : "none");
	return fflush(stdout) == 0 && !ferror(stdout) ? 0 : 3;
}
