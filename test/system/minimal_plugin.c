/*
 * minimal_plugin.c - the smallest complete backend, built by the test
 * suite against the installed plugin kit (include/shakedown/ after `make
 * install`) and nothing else, to prove that kit is enough.  It runs one
 * rank: every collective of one rank leaves each element where the
 * pattern says, so "run this op" is a copy, and the data pattern, the
 * counts and the expected values all come from the kit.
 *
 * A test's env is taken only as NCCL_MIN_CTAS, to prove the env_check
 * slot and the fresh communicator the core makes for such a test; there is
 * no library to give it to, so comm_create() only checks that the core
 * passed nothing else.
 *
 * Built three ways (test/system/plugin_kit.t):
 *   default             backend "minimal", this kit's table;
 *   SD_MINIMAL_OLD=1    backend "minimalold", a table as an older build
 *                       would have it, without the optional iter_times
 *                       and env_check;
 *   SD_MINIMAL_OLD=2    backend "minimalbroken", a table so old that it
 *                       lacks barrier and abort (the loader refuses it).
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "shakedown/backend.h"
#include "shakedown/coll.h"
#include "shakedown/pattern.h"
#include "shakedown/pattern_host.h"

#ifndef SD_MINIMAL_OLD
#define SD_MINIMAL_OLD 0
#endif
#if SD_MINIMAL_OLD == 1
#define NAME "minimalold"
#define TABLE_SIZE offsetof(struct sd_backend_ops, iter_times)
#elif SD_MINIMAL_OLD == 2
#define NAME "minimalbroken"
#define TABLE_SIZE offsetof(struct sd_backend_ops, barrier)
#else
#define NAME "minimal"
#define TABLE_SIZE sizeof(struct sd_backend_ops)
#endif

struct sd_comm {
	int rank, size;
};

static void put(char *err, size_t errlen, const char *msg)
{
	if (err && errlen) {
		strncpy(err, msg, errlen - 1);
		err[errlen - 1] = '\0';
	}
}

static int m_init(struct sd_bootstrap *bs, char *err, size_t errlen)
{
	if (bs->size != 1) {
		put(err, errlen, "the minimal backend runs one rank; run "
			"without --local or with --local 1");
		return SD_ERR_INVALID;
	}
	return SD_OK;
}

static int m_comm_create(struct sd_bootstrap *bs,
			 const struct sd_comm_config *cfg,
			 struct sd_comm **out, char *err, size_t errlen)
{
	/* only pairs env_check took: "NCCL_MIN_CTAS=N ..." */
	for (const char *e = cfg && cfg->env ? cfg->env : ""; *e;) {
		if (strncmp(e, "NCCL_MIN_CTAS=", 14) != 0) {
			put(err, errlen, "minimal: comm_create got an env pair "
				"env_check did not take");
			return SD_ERR_INVALID;
		}
		e += strcspn(e, " ");
		e += *e == ' ';
	}
	struct sd_comm *c = calloc(1, sizeof(*c));
	if (!c)
		return SD_ERR_NOMEM;
	c->rank = bs->rank;
	c->size = bs->size;
	*out = c;
	return SD_OK;
}

static void m_comm_destroy(struct sd_comm *c)
{
	free(c);
}

static int m_buf_alloc(struct sd_comm *c, size_t bytes, void **out,
		       char *err, size_t errlen)
{
	*out = malloc(bytes);
	return *out ? SD_OK : SD_ERR_NOMEM;
}

static void m_buf_free(struct sd_comm *c, void *p)
{
	free(p);
}

static int m_fill(struct sd_comm *c, const struct sd_op_args *a, char *err,
		  size_t errlen)
{
	sd_pattern_fill_host(a, c->rank, c->size);
	return SD_OK;
}

static int m_verify(struct sd_comm *c, const struct sd_op_args *a,
		    uint64_t *wrong, struct sd_mismatch *first, char *err,
		    size_t errlen)
{
	*wrong = sd_pattern_verify_host(a, c->rank, c->size, first);
	return SD_OK;
}

/* One rank: what it receives is what it sends. */
static int m_run(struct sd_comm *c, const struct sd_op_args *a, char *err,
		 size_t errlen)
{
	const struct sd_coll *d = sd_coll_get(a->op);
	if (!d) {
		put(err, errlen, "minimal: unknown operation");
		return SD_ERR_INVALID;
	}
	size_t n = a->send_count < a->recv_count ? a->send_count
						 : a->recv_count;
	if (a->recvbuf != a->sendbuf)
		memmove(a->recvbuf, a->sendbuf, n * sd_dtype_size(a->dtype));
	return SD_OK;
}

static int m_wait(struct sd_comm *c, int timeout_ms, char *err,
		  size_t errlen)
{
	return SD_OK;
}

static int m_barrier(struct sd_comm *c, int timeout_ms, char *err,
		     size_t errlen)
{
	return SD_OK;
}

static int m_iter_times(struct sd_comm *c, double *time_us, long iters,
			char *err, size_t errlen)
{
	put(err, errlen, "minimal: iter_times must not be called when the "
		"loader saw an older table");
	return SD_ERR_BACKEND;
}

static int m_env_check(const char *name, const char *value, char *err,
		       size_t errlen)
{
	(void)value;
	if (strcmp(name, "NCCL_MIN_CTAS") == 0)
		return SD_OK;
	put(err, errlen, "the minimal backend takes only NCCL_MIN_CTAS");
	return SD_ERR_INVALID;
}

const struct sd_backend_ops shakedown_backend = {
	.magic = SD_BACKEND_MAGIC,
	.abi_version = SD_BACKEND_ABI_VERSION,
	.table_size = (uint32_t)TABLE_SIZE,
	.reserved = 0,
	.name = NAME,
	.version = "minimal 1 (test plugin)",
	.dtypes = (1u << SD_DTYPE_COUNT) - 1,
	.redops = (1u << SD_REDOP_COUNT) - 1,
	.ops = (1u << SD_OP_COUNT) - 1,
	.init = m_init,
	.comm_create = m_comm_create,
	.comm_destroy = m_comm_destroy,
	.buf_alloc = m_buf_alloc,
	.buf_free = m_buf_free,
	.fill = m_fill,
	.verify = m_verify,
	.run = m_run,
	.wait = m_wait,
	.barrier = m_barrier,
	/* set in every variant: a loader that honours table_size never
	 * calls it for the older one */
	.iter_times = m_iter_times,
	.env_check = m_env_check,
};
