/*
 * unit_transport.c - what each transport of a plan sets in a worker
 * process's environment (lib/transport.c), per backend, with an iface
 * and a process_env; what each backend refuses; the variant's name.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "plan.h"
#include "tap.h"
#include "transport.h"

static struct sd_test_spec spec(const char *transport, const char *iface,
				const char *penv)
{
	struct sd_test_spec t;
	memset(&t, 0, sizeof(t));
	snprintf(t.transport, sizeof(t.transport), "%s", transport);
	snprintf(t.iface, sizeof(t.iface), "%s", iface);
	snprintf(t.process_env, sizeof(t.process_env), "%s", penv);
	return t;
}

struct row {
	const char *backend, *transport, *iface, *penv;
	int rc;
	const char *want; /* the environment, or a piece of the message */
	const char *variant;
};

static const struct row rows[] = {
	{ "nccl", "nvlink", "", "", 0,
	  "NCCL_P2P_LEVEL=NVL NCCL_SHM_DISABLE=1 NCCL_NVLS_ENABLE=0", "nvlink" },
	{ "nccl", "pcie", "", "", 0,
	  "NCCL_P2P_LEVEL=SYS NCCL_SHM_DISABLE=1 NCCL_NVLS_ENABLE=0", "pcie" },
	{ "nccl", "p2p", "", "", 0,
	  "NCCL_P2P_LEVEL=SYS NCCL_SHM_DISABLE=1 NCCL_NVLS_ENABLE=0", "p2p" },
	{ "nccl", "shm", "", "", 0,
	  "NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=0 NCCL_NVLS_ENABLE=0", "shm" },
	{ "nccl", "tcp", "eth1", "", 0,
	  "NCCL_NET=Socket NCCL_IB_DISABLE=1 NCCL_COLLNET_ENABLE=0 "
	  "NCCL_SOCKET_IFNAME==eth1", "tcp eth1" },
	{ "nccl", "ib", "mlx5_1", "", 0,
	  "NCCL_NET=IB NCCL_IB_DISABLE=0 NCCL_COLLNET_ENABLE=0 "
	  "NCCL_IB_HCA==mlx5_1", "ib mlx5_1" },
	{ "nccl", "", "eth2", "", 0, "NCCL_SOCKET_IFNAME==eth2", "iface eth2" },
	/* process_env comes last, so it wins */
	{ "nccl", "tcp", "", "NCCL_IB_DISABLE=0 NCCL_BUFFSIZE=8388608", 0,
	  "NCCL_NET=Socket NCCL_IB_DISABLE=1 NCCL_COLLNET_ENABLE=0 "
	  "NCCL_IB_DISABLE=0 NCCL_BUFFSIZE=8388608", "tcp" },
	{ "nccl", "", "", "NCCL_P2P_DISABLE=1", 0, "NCCL_P2P_DISABLE=1",
	  "process_env" },
	/* the proof's settings are shakedown's in a test with a transport */
	{ "nccl", "ib", "", "NCCL_BUFFSIZE=1 NCCL_DEBUG_FILE=/x", SD_ERR_INVALID,
	  "process_env sets NCCL_DEBUG_FILE, which a test with a transport "
	  "leaves to shakedown",
	  "ib" },
	{ "nccl", "shm", "", "NCCL_DEBUG=WARN", SD_ERR_INVALID,
	  "sets NCCL_DEBUG, which", "shm" },
	{ "nccl", "", "", "NCCL_DEBUG=WARN NCCL_DEBUG_SUBSYS=ALL", 0,
	  "NCCL_DEBUG=WARN NCCL_DEBUG_SUBSYS=ALL", "process_env" },
	{ "nccl", "shm", "eth1", "", SD_ERR_INVALID,
	  "transport shm stays inside a node and has no interface", "shm eth1" },
	{ "gloo", "tcp", "eth1", "", 0, "SHAKEDOWN_GLOO_IFACE=eth1",
	  "tcp eth1" },
	{ "gloo", "", "eth1", "FOO=1", 0, "SHAKEDOWN_GLOO_IFACE=eth1 FOO=1",
	  "iface eth1" },
	{ "gloo", "tcp", "", "", 0, "", "tcp" },
	{ "gloo", "nvlink", "", "", SD_ERR_INVALID,
	  "gloo moves bytes over tcp only; transport nvlink is for nccl",
	  "nvlink" },
	{ "gloo", "ib", "", "", SD_ERR_INVALID, "transport ib is for nccl",
	  "ib" },
	{ "gloo", "", "", "", 0, "", "" },
};

int main(void)
{
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct row *r = &rows[i];
		struct sd_test_spec t = spec(r->transport, r->iface, r->penv);
		char env[1024] = "?", err[512] = "", variant[64];
		int rc = sd_transport_env(r->backend, &t, env, sizeof(env), err,
					  sizeof(err));
		is_int(rc, r->rc, "%s transport '%s' iface '%s': status",
		       r->backend, r->transport, r->iface);
		if (r->rc == 0)
			ok(strcmp(env, r->want) == 0, "%s %s: sets '%s' (got '%s')",
			   r->backend, r->transport, r->want, env);
		else
			ok(strstr(err, r->want) != NULL, "%s %s: says '%s' (got "
			   "'%s')", r->backend, r->transport, r->want, err);
		sd_transport_variant(&t, variant, sizeof(variant));
		ok(strcmp(variant, r->variant) == 0, "named '%s' (got '%s')",
		   r->variant, variant);
		is_int(sd_transport_in_worker(&t),
		       r->transport[0] || r->iface[0] || r->penv[0],
		       "in a worker exactly when it asks for a path");
	}
	const char *hint = NULL;
	is_int(sd_transport_lookup("tcp", &hint), 0, "tcp is known");
	is_int(sd_transport_lookup("nvlnk", &hint), -1, "nvlnk is not");
	ok(hint && strcmp(hint, "nvlink") == 0, "and the hint is nvlink");
	/* a too small buffer is said, not cut */
	struct sd_test_spec t = spec("ib", "mlx5_0", "");
	char small[16], err[256] = "";
	is_int(sd_transport_env("nccl", &t, small, sizeof(small), err,
				sizeof(err)),
	       SD_ERR_NOMEM, "too long for the buffer: SD_ERR_NOMEM");
	ok(strstr(err, "too long") != NULL, "saying so");

	/* the proof: NCCL's log of a test with a transport, Gloo's iface */
	char proof[512];
	t = spec("ib", "", "");
	is_int(sd_transport_proof("nccl", &t), 1, "nccl ib: proved");
	is_int(sd_transport_proof_env("nccl", &t, "/tmp/l.log", proof,
				      sizeof(proof)),
	       0, "its settings");
	ok(!strcmp(proof, "NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET "
			  "NCCL_RUNTIME_CONNECT=1 NCCL_DEBUG_FILE=/tmp/l.log"),
	   "NCCL writes its connections to the file: '%s'", proof);
	t = spec("", "eth1", "");
	is_int(sd_transport_proof("nccl", &t), 0,
	       "nccl with only an iface: no transport to prove");
	sd_transport_proof_env("nccl", &t, "/tmp/l.log", proof, sizeof(proof));
	ok(!proof[0], "and no settings");
	is_int(sd_transport_proof("gloo", &t), 1, "gloo with an iface: proved");
	sd_transport_proof_env("gloo", &t, "/tmp/l.log", proof, sizeof(proof));
	ok(!proof[0], "from the socket table: no settings");
	t = spec("tcp", "", "");
	is_int(sd_transport_proof("gloo", &t), 0,
	       "gloo tcp without an iface: nothing to prove (TCP only)");
	ok(!strcmp(sd_transport_list(), "nvlink, pcie, p2p, shm, tcp or ib"),
	   "the list messages give: %s", sd_transport_list());
	return done_testing();
}
