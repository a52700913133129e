/*
 * transport.c - the paths a plan's test may ask for (transport.h).
 */
#include "transport.h"

#include <stdio.h>
#include <string.h>

#include "names.h"
#include "plan.h"
#include "shakedown/backend.h"

/* Each transport, and what it sets for NCCL; the variable its iface
 * names (NULL: none). */
static const struct transport {
	const char *name;
	const char *nccl;
	const char *nccl_iface;
} transports[] = {
	{ "nvlink", "NCCL_P2P_LEVEL=NVL NCCL_SHM_DISABLE=1 NCCL_NVLS_ENABLE=0",
	  NULL },
	{ "pcie", "NCCL_P2P_LEVEL=SYS NCCL_SHM_DISABLE=1 NCCL_NVLS_ENABLE=0",
	  NULL },
	{ "p2p", "NCCL_P2P_LEVEL=SYS NCCL_SHM_DISABLE=1 NCCL_NVLS_ENABLE=0",
	  NULL },
	{ "shm", "NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=0 NCCL_NVLS_ENABLE=0",
	  NULL },
	{ "tcp", "NCCL_NET=Socket NCCL_IB_DISABLE=1 NCCL_COLLNET_ENABLE=0",
	  "NCCL_SOCKET_IFNAME" },
	{ "ib", "NCCL_NET=IB NCCL_IB_DISABLE=0 NCCL_COLLNET_ENABLE=0",
	  "NCCL_IB_HCA" },
};
#define NTRANSPORTS (sizeof(transports) / sizeof(transports[0]))

static const struct sd_name_row transport_names[] = {
	{ "nvlink", 0 }, { "pcie", 1 }, { "p2p", 2 }, { "shm", 3 },
	{ "tcp", 4 },	 { "ib", 5 },	{ NULL, 0 }
};

int sd_transport_lookup(const char *name, const char **hint)
{
	int which;
	*hint = NULL;
	return sd_name_lookup(transport_names, name, &which, hint) ? -1 : 0;
}

const char *sd_transport_list(void)
{
	static char text[96];
	if (!text[0]) {
		size_t used = 0;
		for (size_t i = 0; i < NTRANSPORTS; i++)
			used += (size_t)snprintf(text + used,
						 sizeof(text) - used, "%s%s",
						 i == 0			? ""
						 : i + 1 == NTRANSPORTS ? " or "
									: ", ",
						 transports[i].name);
	}
	return text;
}

static const struct transport *find(const char *name)
{
	for (size_t i = 0; i < NTRANSPORTS; i++)
		if (strcmp(transports[i].name, name) == 0)
			return &transports[i];
	return NULL;
}

int sd_transport_in_worker(const struct sd_test_spec *t)
{
	return t->transport[0] || t->iface[0] || t->process_env[0];
}

int sd_transport_env(const char *backend, const struct sd_test_spec *t,
		     char *out, size_t len, char *err, size_t errlen)
{
	const struct transport *tr =
		t->transport[0] ? find(t->transport) : NULL;
	int nccl = strcmp(backend, "nccl") == 0;
	size_t used = 0;
	out[0] = '\0';
#define ADD(...)                                                               \
	do {                                                                   \
		int k_ = snprintf(out + used, len - used, __VA_ARGS__);        \
		if (k_ < 0 || (size_t)k_ >= len - used) {                      \
			snprintf(err, errlen,                                  \
				 "the test's process settings "                \
				 "are too long");                              \
			return SD_ERR_NOMEM;                                   \
		}                                                              \
		used += (size_t)k_;                                            \
	} while (0)
	if (t->transport[0] && !tr) {
		snprintf(err, errlen, "transport '%s' is not one plans know",
			 t->transport);
		return SD_ERR_INVALID;
	}
	if (nccl) {
		if (tr)
			ADD("%s", tr->nccl);
		if (t->iface[0]) {
			const char *var = tr && tr->nccl_iface
						  ? tr->nccl_iface
						  : "NCCL_SOCKET_IFNAME";
			if (tr && !tr->nccl_iface) {
				snprintf(err, errlen,
					 "transport %s stays "
					 "inside a node and has no interface; "
					 "drop iface: %s or use tcp or ib",
					 tr->name, t->iface);
				return SD_ERR_INVALID;
			}
			ADD("%s%s==%s", used ? " " : "", var, t->iface);
		}
	} else {
		if (tr && strcmp(tr->name, "tcp") != 0) {
			snprintf(err, errlen,
				 "%s moves bytes over tcp only; "
				 "transport %s is for nccl: use transport: tcp "
				 "(with iface: to pick the network) or "
				 "--backend nccl",
				 backend, tr->name);
			return SD_ERR_INVALID;
		}
		if (t->iface[0])
			ADD("SHAKEDOWN_GLOO_IFACE=%s", t->iface);
	}
	if (nccl && tr && t->process_env[0]) {
		/* the proof's settings are shakedown's (path_proof.h) */
		static const char *const ours[] = { "NCCL_DEBUG",
						    "NCCL_DEBUG_SUBSYS",
						    "NCCL_DEBUG_FILE",
						    "NCCL_RUNTIME_CONNECT" };
		for (size_t i = 0; i < sizeof(ours) / sizeof(ours[0]); i++) {
			size_t k = strlen(ours[i]);
			for (const char *p = t->process_env; *p;) {
				if (!strncmp(p, ours[i], k) && p[k] == '=') {
					snprintf(
						err, errlen,
						"process_env sets %s, which a "
						"test with a transport leaves "
						"to shakedown: it reads NCCL's "
						"log to prove the path; drop "
						"it, or drop transport: %s",
						ours[i], tr->name);
					return SD_ERR_INVALID;
				}
				p += strcspn(p, " ");
				p += strspn(p, " ");
			}
		}
	}
	if (t->process_env[0])
		ADD("%s%s", used ? " " : "", t->process_env);
#undef ADD
	return 0;
}

void sd_transport_variant(const struct sd_test_spec *t, char *out, size_t len)
{
	if (t->transport[0] && t->iface[0])
		snprintf(out, len, "%s %s", t->transport, t->iface);
	else if (t->transport[0])
		snprintf(out, len, "%s", t->transport);
	else if (t->iface[0])
		snprintf(out, len, "iface %s", t->iface);
	else if (t->process_env[0])
		snprintf(out, len, "process_env");
	else
		out[0] = '\0';
}

int sd_transport_proof(const char *backend, const struct sd_test_spec *t)
{
	if (!strcmp(backend, "nccl"))
		return t->transport[0] && find(t->transport) != NULL;
	return t->iface[0] != 0;
}

int sd_transport_proof_env(const char *backend, const struct sd_test_spec *t,
			   const char *file, char *out, size_t len)
{
	out[0] = '\0';
	if (strcmp(backend, "nccl") != 0 || !sd_transport_proof(backend, t))
		return 0;
	int k = snprintf(out, len,
			 "NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET "
			 "NCCL_RUNTIME_CONNECT=1 NCCL_DEBUG_FILE=%s",
			 file);
	return k > 0 && (size_t)k < len ? 0 : SD_ERR_NOMEM;
}
