/*
 * data.c - the training workload's token sources (data.h): the seeded
 * order-k Markov source and the byte-level file source, and the layout
 * that maps (step, rank, micro-step, row) to a global sample index.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shakedown/backend.h"
#include "util.h"
#include "data.h"
#include "rng.h"

/* Hash domains, so the successor table and the samples draw unrelated
 * streams from one seed. */
#define DOMAIN_TABLE 0x7461626c65ull  /* "table" */
#define DOMAIN_SAMPLE 0x73616d706cull /* "sampl" */
#define DOMAIN_OFFSET 0x6f66667365ull /* "offse" */

#define MARKOV_TABLE_MAX (1u << 24)

enum kind { KIND_MARKOV, KIND_FILE };

struct sd_data {
	enum kind kind;
	int vocab, seq_len;
	uint64_t seed;
	/* Markov */
	int order, branching;
	uint64_t contexts;     /* vocab^order */
	int32_t *successors;   /* contexts x branching */
	/* file */
	const unsigned char *bytes;
	size_t size;
};

static int invalid(char *err, size_t errlen, const char *msg)
{
	if (err && errlen)
		sd_strlcpy(err, msg, errlen);
	return SD_ERR_INVALID;
}

int sd_data_open_markov(struct sd_data **out, int vocab, int order,
			int branching, int seq_len, uint64_t seed, char *err,
			size_t errlen)
{
	char m[256];
	uint64_t contexts = 1;
	struct sd_data *d;
	uint32_t *stamp;

	*out = NULL;
	if (vocab < 2 || vocab > (1 << 24)) {
		snprintf(m, sizeof(m),
			 "vocab %d is out of range for the Markov source; use "
			 "2 to 16777216", vocab);
		return invalid(err, errlen, m);
	}
	if (order < 1) {
		snprintf(m, sizeof(m),
			 "Markov order %d is out of range; use 1 or more", order);
		return invalid(err, errlen, m);
	}
	if (branching < 1 || branching > vocab) {
		snprintf(m, sizeof(m),
			 "Markov branching %d is out of range; use 1 to the "
			 "vocab (%d)", branching, vocab);
		return invalid(err, errlen, m);
	}
	if (seq_len < 1) {
		snprintf(m, sizeof(m),
			 "seq_len %d is out of range; use 1 or more", seq_len);
		return invalid(err, errlen, m);
	}
	for (int i = 0; i < order; i++) {
		contexts *= (uint64_t)vocab;
		if (contexts * (uint64_t)branching > MARKOV_TABLE_MAX) {
			snprintf(m, sizeof(m),
				 "a Markov source of order %d over vocab %d "
				 "with branching %d needs more than %u table "
				 "entries; use a lower order, branching or vocab",
				 order, vocab, branching, MARKOV_TABLE_MAX);
			return invalid(err, errlen, m);
		}
	}

	d = calloc(1, sizeof(*d));
	stamp = calloc((size_t)vocab, sizeof(*stamp));
	if (d)
		d->successors = malloc(contexts * branching * sizeof(int32_t));
	if (!d || !stamp || !d->successors) {
		free(stamp);
		sd_data_close(d);
		if (err && errlen)
			snprintf(err, errlen,
				 "out of memory for the Markov table (%llu "
				 "entries); use a lower order or branching",
				 (unsigned long long)(contexts * branching));
		return SD_ERR_NOMEM;
	}
	d->kind = KIND_MARKOV;
	d->vocab = vocab;
	d->seq_len = seq_len;
	d->seed = seed;
	d->order = order;
	d->branching = branching;
	d->contexts = contexts;
	/* per context, branching distinct tokens: draw until new, marking
	 * with the context's stamp (contexts + 1 never repeats a stamp) */
	for (uint64_t c = 0; c < contexts; c++) {
		struct sd_rng r;
		int32_t *s = d->successors + c * branching;
		uint32_t mark = (uint32_t)c + 1;
		sd_rng_seed(&r, sd_rng_hash(seed, DOMAIN_TABLE, c));
		for (int j = 0; j < branching;) {
			uint32_t tok = sd_rng_below(&r, (uint32_t)vocab);
			if (stamp[tok] == mark)
				continue;
			stamp[tok] = mark;
			s[j++] = (int32_t)tok;
		}
	}
	free(stamp);
	*out = d;
	return SD_OK;
}

int sd_data_open_file(struct sd_data **out, const char *path, int vocab,
		      int seq_len, uint64_t seed, char *err, size_t errlen)
{
	struct stat st;
	struct sd_data *d;
	void *map;
	int fd;

	*out = NULL;
	if (vocab != 256) {
		if (err && errlen)
			snprintf(err, errlen,
				 "vocab %d does not fit byte-level data from "
				 "'%s'; byte-level data needs vocab 256",
				 vocab, path);
		return SD_ERR_INVALID;
	}
	if (seq_len < 1) {
		if (err && errlen)
			snprintf(err, errlen,
				 "seq_len %d is out of range; use 1 or more",
				 seq_len);
		return SD_ERR_INVALID;
	}
	/* not blocking on a FIFO with no writer: it is refused below, as
	 * not a regular file */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0 || fstat(fd, &st) != 0) {
		if (err && errlen)
			snprintf(err, errlen,
				 "cannot read data file '%s': %s; give an "
				 "existing, readable text file", path,
				 strerror(errno));
		if (fd >= 0)
			close(fd);
		return SD_ERR_IO;
	}
	if (!S_ISREG(st.st_mode)) {
		if (err && errlen)
			snprintf(err, errlen,
				 "data file '%s' is not a regular file; give a "
				 "text file", path);
		close(fd);
		return SD_ERR_IO;
	}
	if ((unsigned long long)st.st_size < (unsigned long long)seq_len + 1) {
		if (err && errlen)
			snprintf(err, errlen,
				 "data file '%s' is too short: %lld bytes, and "
				 "a sample needs seq_len + 1 = %d; give a longer "
				 "file or a shorter seq_len", path,
				 (long long)st.st_size, seq_len + 1);
		close(fd);
		return SD_ERR_INVALID;
	}
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED) {
		if (err && errlen)
			snprintf(err, errlen, "cannot map data file '%s': %s",
				 path, strerror(errno));
		return SD_ERR_IO;
	}
	d = calloc(1, sizeof(*d));
	if (!d) {
		munmap(map, (size_t)st.st_size);
		if (err && errlen)
			sd_strlcpy(err, "out of memory opening the data file",
				   errlen);
		return SD_ERR_NOMEM;
	}
	d->kind = KIND_FILE;
	d->vocab = 256;
	d->seq_len = seq_len;
	d->seed = seed;
	d->bytes = map;
	d->size = (size_t)st.st_size;
	*out = d;
	return SD_OK;
}

void sd_data_close(struct sd_data *d)
{
	if (!d)
		return;
	free(d->successors);
	if (d->bytes)
		munmap((void *)d->bytes, d->size);
	free(d);
}

int sd_data_seq_len(const struct sd_data *d)
{
	return d->seq_len;
}

int sd_data_vocab(const struct sd_data *d)
{
	return d->vocab;
}

double sd_markov_loss_floor(int vocab, int order, int branching,
			    int seq_len)
{
	int uniform = order - 1 < seq_len ? order - 1 : seq_len;
	int markov = seq_len - uniform;
	return (uniform * log((double)vocab) + markov * log((double)branching)) /
	       seq_len;
}

double sd_data_loss_floor(const struct sd_data *d)
{
	if (d->kind != KIND_MARKOV)
		return NAN;
	return sd_markov_loss_floor(d->vocab, d->order, d->branching,
				    d->seq_len);
}

const int32_t *sd_data_markov_successors(const struct sd_data *d,
					 uint64_t context)
{
	if (d->kind != KIND_MARKOV || context >= d->contexts)
		return NULL;
	return d->successors + context * d->branching;
}

/* A sample's tokens one at a time: the Markov chain from its uniform
 * start, or the file's window at the sample's offset. */
struct gen {
	const struct sd_data *d;
	struct sd_rng r;
	uint64_t ctx;              /* Markov: the last `order` tokens */
	const unsigned char *w;    /* file: the window */
	int t;
};

static void gen_start(struct gen *g, const struct sd_data *d,
		      uint64_t index)
{
	g->d = d;
	g->t = 0;
	g->ctx = 0;
	g->w = NULL;
	if (d->kind == KIND_MARKOV) {
		sd_rng_seed(&g->r, sd_rng_hash(d->seed, DOMAIN_SAMPLE, index));
	} else {
		uint64_t span = d->size - (size_t)d->seq_len;
		g->w = d->bytes +
		       sd_rng_hash(d->seed, DOMAIN_OFFSET, index) % span;
	}
}

static inline int gen_next(struct gen *g)
{
	const struct sd_data *d = g->d;
	int tok;

	if (g->w)
		return g->w[g->t++];
	if (g->t++ < d->order)
		tok = (int)sd_rng_below(&g->r, (uint32_t)d->vocab);
	else
		tok = d->successors[g->ctx * d->branching +
				    sd_rng_below(&g->r, (uint32_t)d->branching)];
	g->ctx = (g->ctx * (uint64_t)d->vocab + (uint64_t)tok) % d->contexts;
	return tok;
}

void sd_data_sample(const struct sd_data *d, uint64_t index, int *tokens)
{
	struct gen g;
	gen_start(&g, d, index);
	for (int t = 0; t <= d->seq_len; t++)
		tokens[t] = gen_next(&g);
}

uint64_t sd_data_index(long step, int rank, int ranks, int accum_steps,
		       int micro_step, int micro_batch, int row)
{
	uint64_t G = (uint64_t)ranks * accum_steps * micro_batch;
	return (uint64_t)step * G +
	       ((uint64_t)rank * accum_steps + micro_step) * micro_batch + row;
}

int sd_data_micro_batch(const struct sd_data *d, long step, int rank,
			int ranks, int accum_steps, int micro_step,
			int micro_batch, int *inputs, int *targets,
			char *err, size_t errlen)
{
	char m[200];
	int T = d->seq_len;

	if (step < 0 || ranks < 1 || rank < 0 || rank >= ranks ||
	    accum_steps < 1 || micro_step < 0 || micro_step >= accum_steps ||
	    micro_batch < 1) {
		snprintf(m, sizeof(m),
			 "no micro-batch at step %ld, rank %d of %d, micro-step "
			 "%d of %d, micro_batch %d; each must be in range",
			 step, rank, ranks, micro_step, accum_steps,
			 micro_batch);
		return invalid(err, errlen, m);
	}
	for (int b = 0; b < micro_batch; b++) {
		uint64_t idx = sd_data_index(step, rank, ranks, accum_steps,
					     micro_step, micro_batch, b);
		int *in = inputs + (size_t)b * T, *tg = targets + (size_t)b * T;
		struct gen g;
		gen_start(&g, d, idx);
		in[0] = gen_next(&g);
		for (int t = 1; t < T; t++)
			in[t] = tg[t - 1] = gen_next(&g);
		tg[T - 1] = gen_next(&g);
	}
	return SD_OK;
}
