/*
 * data.h - the training workload's token sources: a synthetic order-k
 * Markov source with a known entropy rate, so the loss has a known floor,
 * and a byte-level tokenisation of a text file.
 *
 * A sample is seq_len + 1 tokens (inputs are the first seq_len, targets
 * the last seq_len) and is identified by its GLOBAL index alone: it is
 * generated from hash(seed, index), never from a stream that depends on
 * what came before.  The layout (sd_data_index()) puts the global batch
 * of a step at the same indices whatever the number of ranks, so R ranks
 * at (accum_steps A, micro_batch B) see exactly the samples that 1 rank
 * sees at (accum_steps R * A, micro_batch B), micro-batch for
 * micro-batch.
 *
 * The Markov source over a vocabulary of V tokens, order k, branching m:
 * every context (the last k tokens, V^k of them) has m distinct
 * successors chosen by hash(seed, context), each followed with
 * probability 1/m, so the entropy rate is exactly ln(m) nats per token.
 * A sample's first k tokens are drawn uniformly and independently from
 * the vocabulary; every later token follows its context.
 *
 * A source is read-only after it is opened: one can serve any number of
 * threads.  Like all of lib/, nothing here prints or exits.
 */
#ifndef SD_TRAIN_DATA_H
#define SD_TRAIN_DATA_H

#include <stddef.h>
#include <stdint.h>

struct sd_data;

/* The built-in synthetic source: order 1, branching 4 (floor ln 4 =
 * 1.386 nats per token against ln 256 = 5.545 for a uniform guess). */
#define SD_MARKOV_ORDER_DEFAULT 1
#define SD_MARKOV_BRANCHING_DEFAULT 4

/*
 * Open the Markov source.  vocab 2 .. 16777216, order >= 1, branching 1 ..
 * vocab, and its successor table (vocab^order * branching entries) at
 * most 16777216 entries; seq_len >= 1.  Returns SD_OK with *out owned by
 * the caller (sd_data_close()), SD_ERR_INVALID with err naming the bad
 * parameter and what to use, or SD_ERR_NOMEM.
 */
int sd_data_open_markov(struct sd_data **out, int vocab, int order,
			int branching, int seq_len, uint64_t seed, char *err,
			size_t errlen);

/*
 * Open a byte-level source over the file at path: token = byte, so vocab
 * must be 256.  Sample i is the seq_len + 1 bytes at offset
 * hash(seed, i) mod (size - seq_len).  The file is mapped read-only for
 * the life of the source.  Returns SD_OK with *out owned by the caller,
 * SD_ERR_INVALID (vocab not 256, or the file shorter than seq_len + 1
 * bytes: err names the file, its size and the size needed) or SD_ERR_IO
 * (err names the file and why it cannot be read).
 */
int sd_data_open_file(struct sd_data **out, const char *path, int vocab,
		      int seq_len, uint64_t seed, char *err, size_t errlen);

/* Close d; NULL is fine. */
void sd_data_close(struct sd_data *d);

/* The seq_len and vocab the source was opened with. */
int sd_data_seq_len(const struct sd_data *d);
int sd_data_vocab(const struct sd_data *d);

/*
 * The expected mean cross-entropy (nats per target) of the best possible
 * predictor on a sample, the loss floor: for the Markov source, of the
 * seq_len targets the first min(order - 1, seq_len) are uniform over the
 * vocabulary and the rest follow their context, so
 *     floor = (min(k-1, T) ln V + max(0, T-k+1) ln m) / T,
 * which is ln(m) for order 1.  For a file source it is unknown: NAN.
 */
double sd_data_loss_floor(const struct sd_data *d);
/* The same formula for given parameters (no source needed). */
double sd_markov_loss_floor(int vocab, int order, int branching,
			    int seq_len);

/* The Markov source's successors of context (the last `order` tokens as a
 * base-vocab number, oldest first): branching tokens, owned by d; NULL
 * for a file source or a context out of range. */
const int32_t *sd_data_markov_successors(const struct sd_data *d,
					 uint64_t context);

/* Sample `index`: seq_len + 1 tokens into tokens. */
void sd_data_sample(const struct sd_data *d, uint64_t index, int *tokens);

/*
 * The global index of row `row` of micro-batch `micro_step` that rank
 * `rank` of `ranks` trains on at optimizer step `step`:
 *     step * G + (rank * accum_steps + micro_step) * micro_batch + row,
 * with G = ranks * accum_steps * micro_batch the global batch: each step
 * takes the next G samples, and each rank a contiguous block of them.
 */
uint64_t sd_data_index(long step, int rank, int ranks, int accum_steps,
		       int micro_step, int micro_batch, int row);

/*
 * Fill inputs and targets (micro_batch x seq_len each, row-major) with
 * the micro-batch sd_data_index() names for (step, rank, ranks,
 * accum_steps, micro_step, row = 0 .. micro_batch - 1).  Returns SD_OK,
 * or SD_ERR_INVALID with err saying which argument is out of range.
 */
int sd_data_micro_batch(const struct sd_data *d, long step, int rank,
			int ranks, int accum_steps, int micro_step,
			int micro_batch, int *inputs, int *targets,
			char *err, size_t errlen);

#endif
