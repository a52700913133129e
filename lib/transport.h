/*
 * transport.h - the paths a plan's test may ask for (its transport and
 * iface keys), and the process settings that force each: a test that asks
 * runs in worker processes started with them (worker.h), because the
 * libraries read them once per process.
 *
 * NCCL (from NCCL's environment variable documentation):
 *   nvlink  NCCL_P2P_LEVEL=NVL NCCL_SHM_DISABLE=1 NCCL_NVLS_ENABLE=0:
 *           peer to peer only between GPUs NVLink joins, no shared-memory
 *           fallback, no NVLink SHARP
 *   pcie    NCCL_P2P_LEVEL=SYS NCCL_SHM_DISABLE=1 NCCL_NVLS_ENABLE=0:
 *           peer to peer over any PCIe path (where NVLink joins two GPUs
 *           NCCL still takes it: no setting turns NVLink off for P2P)
 *   p2p     the same settings as pcie, named for what they test on any
 *           node: GPU to GPU over what joins them, NVLink where it does,
 *           else PCIe (the shipped acceptance plan's node test)
 *   shm     NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=0 NCCL_NVLS_ENABLE=0:
 *           through host shared memory
 *   tcp     NCCL_NET=Socket NCCL_IB_DISABLE=1 NCCL_COLLNET_ENABLE=0, with
 *           iface NCCL_SOCKET_IFNAME==IFACE (that interface exactly)
 *   ib      NCCL_NET=IB NCCL_IB_DISABLE=0 NCCL_COLLNET_ENABLE=0, with iface
 *           NCCL_IB_HCA==IFACE (that HCA exactly)
 * Gloo moves bytes over TCP only: tcp (or no transport) with iface sets
 * SHAKEDOWN_GLOO_IFACE=IFACE (and the worker's communicator binds it).
 * A test's process_env pairs follow, so they win, except over the
 * settings of the proof (sd_transport_proof_env), which it may not set.
 */
#ifndef SD_TRANSPORT_H
#define SD_TRANSPORT_H

#include <stddef.h>

struct sd_test_spec;

/* 0 when name is a transport plans know, else -1 with *hint a close one
 * (or NULL). */
int sd_transport_lookup(const char *name, const char **hint);

/* What plan expand allows for starting a test's worker processes, per
 * round: a process and, with NCCL, a CUDA context and a communicator. */
#define SD_WORKER_START_S 2.0

/* The transports as messages list them: "nvlink, pcie, p2p, shm, tcp or
 * ib" (static storage). */
const char *sd_transport_list(void);

/* Whether test t runs in worker processes (a transport, iface or
 * process_env). */
int sd_transport_in_worker(const struct sd_test_spec *t);

/*
 * The environment of t's worker processes under `backend` ("gloo",
 * "nccl"): "NAME=VALUE ..." into out.  Returns 0, or SD_ERR_INVALID with
 * err saying why the backend cannot take it (gloo has only tcp), or
 * SD_ERR_NOMEM when out is too small.
 */
int sd_transport_env(const char *backend, const struct sd_test_spec *t,
		     char *out, size_t len, char *err, size_t errlen);

/*
 * Whether a test of t's path is proved (path_proof.h) under backend:
 * nccl, a test with a transport; gloo, one with an iface.
 */
int sd_transport_proof(const char *backend, const struct sd_test_spec *t);

/*
 * What a proved NCCL test's workers get after sd_transport_env's pairs:
 * NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET NCCL_RUNTIME_CONNECT=1
 * NCCL_DEBUG_FILE=file (file without spaces), so that NCCL writes the
 * connections it made, and makes only those its test uses.  "" when
 * there is no such proof.  Returns 0 or SD_ERR_NOMEM.
 */
int sd_transport_proof_env(const char *backend, const struct sd_test_spec *t,
			   const char *file, char *out, size_t len);

/* t's variant as messages and the record name it: "tcp eth1", "nvlink",
 * "iface eth1", "process_env"; "" for a test in the rank's own process. */
void sd_transport_variant(const struct sd_test_spec *t, char *out, size_t len);

#endif
