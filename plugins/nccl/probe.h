/*
 * probe.h - gather the link facts of this host (probe.c): GPU pairs
 * through NVML or CUDA, and the socket interfaces NCCL would use.
 */
#ifndef SD_NCCL_PROBE_H
#define SD_NCCL_PROBE_H

#include <stddef.h>
#include "links.h"

/* Fill *a for every CUDA-visible GPU (at most SD_LINKS_MAX_GPUS).  NVML is
 * loaded with dlopen; without it only a->p2p is filled (have_nvml = 0).
 * Returns 0, or -1 when CUDA sees no GPU. */
int sd_links_probe(struct sd_nvml_answer *a);

/* Fill *a for every GPU of the host: through NVML when it answers (all
 * GPUs, whatever CUDA_VISIBLE_DEVICES says), else as sd_links_probe().
 * note gets what was not known ("" when nothing).  Returns 0, or -1 when
 * neither NVML nor CUDA sees a GPU (note says so). */
int sd_links_probe_host(struct sd_nvml_answer *a, char *note, size_t len);

/* The interfaces NCCL's socket transport would use on this host, honouring
 * NCCL_SOCKET_IFNAME; comma-separated into out.  Returns their count. */
int sd_socket_ifaces_probe(char *out, size_t len);

#endif
