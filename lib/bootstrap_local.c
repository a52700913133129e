/*
 * bootstrap_local.c - `--local N`: N ranks on this host, no external
 * service; and the one-process `single` bootstrap.
 *
 * The launcher forks N children, each holding one end of a socketpair.  The
 * launcher relays every collective: each rank sends its contribution (a
 * length and bytes), and when all N have arrived the launcher sends every
 * rank all contributions.  allgather, bcast and barrier are all this one
 * exchange.  The launcher also supervises: when a child dies, or a round
 * waits longer than the timeout, it answers the waiting ranks with an error
 * naming the rank, stops the rest (SIGTERM, then SIGKILL after a grace
 * period) and returns the exit status for the run.  SIGTERM and SIGINT sent
 * to the launcher are forwarded to the ranks.
 */
#include "config.h"

#include <errno.h>
#include "names.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bootstrap.h"
#include "util.h"

struct local_ctx {
	int fd;
	char host[64];
	char error[256];
};

/* One exchange: send `len` bytes, receive every rank's contribution. */
static int exchange(struct sd_bootstrap *bs, const void *mine, size_t len,
		    uint64_t *lens, char **data)
{
	struct local_ctx *c = bs->ctx;
	uint64_t l = len;
	*data = NULL;
	if (sd_send_full(c->fd, &l, sizeof(l)) || sd_send_full(c->fd, mine, len))
		goto lost;
	if (sd_recv_full(c->fd, lens, sizeof(uint64_t)))
		goto lost;
	if (lens[0] == SD_LOCAL_REPLY_ERROR) {
		uint64_t mlen;
		if (sd_recv_full(c->fd, &mlen, sizeof(mlen)) ||
		    mlen >= sizeof(c->error) ||
		    sd_recv_full(c->fd, c->error, mlen))
			goto lost;
		c->error[mlen] = '\0';
		return SD_ERR_PEER;
	}
	if (bs->size > 1 &&
	    sd_recv_full(c->fd, lens + 1, sizeof(uint64_t) * (size_t)(bs->size - 1)))
		goto lost;
	uint64_t total = 0;
	for (int r = 0; r < bs->size; r++)
		total += lens[r];
	*data = malloc(total + 1);
	if (!*data)
		return SD_ERR_NOMEM;
	if (sd_recv_full(c->fd, *data, total)) {
		free(*data);
		*data = NULL;
		goto lost;
	}
	return SD_OK;
lost:
	snprintf(c->error, sizeof(c->error), "lost the local launcher "
		 "(rendezvous socket closed)");
	return SD_ERR_PEER;
}

static int local_allgather(struct sd_bootstrap *bs, const void *send,
			   void *recv, size_t len)
{
	uint64_t lens[bs->size];
	char *data;
	int rc = exchange(bs, send, len, lens, &data);
	if (rc)
		return rc;
	for (int r = 0; r < bs->size; r++)
		if (lens[r] != len) {
			free(data);
			snprintf(((struct local_ctx *)bs->ctx)->error, 256,
				 "ranks disagree on the size of an allgather");
			return SD_ERR_BOOTSTRAP;
		}
	memcpy(recv, data, len * (size_t)bs->size);
	free(data);
	return SD_OK;
}

static int local_bcast(struct sd_bootstrap *bs, void *buf, size_t len,
		       int root)
{
	uint64_t lens[bs->size];
	char *data;
	int rc = exchange(bs, buf, bs->rank == root ? len : 0, lens, &data);
	if (rc)
		return rc;
	size_t off = 0;
	for (int r = 0; r < root; r++)
		off += lens[r];
	if (lens[root] != len) {
		free(data);
		return SD_ERR_BOOTSTRAP;
	}
	memcpy(buf, data + off, len);
	free(data);
	return SD_OK;
}

static int local_barrier(struct sd_bootstrap *bs)
{
	uint64_t lens[bs->size];
	char *data;
	int rc = exchange(bs, "", 0, lens, &data);
	free(data);
	return rc;
}

static void local_close(struct sd_bootstrap_impl *impl)
{
	struct local_ctx *c = impl->bs.ctx;
	if (c && c->fd >= 0)
		close(c->fd);
	free(c);
	free(impl);
}

static const char *local_last_error(struct sd_bootstrap_impl *impl)
{
	struct local_ctx *c = impl->bs.ctx;
	return c->error;
}

/* Open a bootstrap of `size` ranks on this host whose collectives are
 * those of `fns`; fd is the launcher's socket, or -1. */
static int open_here(int fd, int rank, int size, const char *launcher,
		     const struct sd_bootstrap *fns,
		     struct sd_bootstrap_impl **out)
{
	struct sd_bootstrap_impl *impl = calloc(1, sizeof(*impl));
	struct local_ctx *c = calloc(1, sizeof(*c));
	if (!impl || !c) {
		free(impl);
		free(c);
		return SD_ERR_NOMEM;
	}
	c->fd = fd;
	if (gethostname(c->host, sizeof(c->host) - 1) != 0)
		sd_strlcpy(c->host, "localhost", sizeof(c->host));
	impl->bs = *fns;
	impl->bs.rank = rank;
	impl->bs.size = size;
	impl->bs.local_rank = rank;
	impl->bs.local_size = size;
	impl->bs.host = c->host;
	impl->bs.ctx = c;
	impl->close = local_close;
	impl->last_error = local_last_error;
	sd_strlcpy(impl->job.launcher, launcher, sizeof(impl->job.launcher));
	sd_strlcpy(impl->job.nodelist, c->host, sizeof(impl->job.nodelist));
	impl->job.nnodes = 1;
	impl->job.tasks_per_node = size;
	*out = impl;
	return SD_OK;
}

int sd_bootstrap_local_open(int fd, struct sd_bootstrap_impl **out, char *err,
			    size_t errlen)
{
	long rank, size;
	if (sd_parse_int(getenv("SHAKEDOWN_LOCAL_RANK"), 0, 1 << 20, &rank) ||
	    sd_parse_int(getenv("SHAKEDOWN_LOCAL_SIZE"), 1, 1 << 20, &size) ||
	    rank >= size) {
		snprintf(err, errlen, "SHAKEDOWN_LOCAL_RANK/SIZE are missing or "
			 "wrong; they are set by --local, do not set them by "
			 "hand");
		return SD_ERR_BOOTSTRAP;
	}
	static const struct sd_bootstrap fns = { .allgather = local_allgather,
						 .bcast = local_bcast,
						 .barrier = local_barrier };
	return open_here(fd, (int)rank, (int)size, "local", &fns, out);
}

/* single: one process, every collective is a copy */
static int single_allgather(struct sd_bootstrap *bs, const void *send,
			    void *recv, size_t len)
{
	memmove(recv, send, len);
	return SD_OK;
}

static int single_bcast(struct sd_bootstrap *bs, void *buf, size_t len,
			int root)
{
	return SD_OK;
}

static int single_barrier(struct sd_bootstrap *bs)
{
	return SD_OK;
}

int sd_bootstrap_single_open(struct sd_bootstrap_impl **out, char *err,
			     size_t errlen)
{
	static const struct sd_bootstrap fns = { .allgather = single_allgather,
						 .bcast = single_bcast,
						 .barrier = single_barrier };
	return open_here(-1, 0, 1, "single", &fns, out);
}
