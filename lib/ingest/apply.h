/*
 * apply.h - a parsed log made ready for the metrics: what the command's
 * options give merged with what the log states, step numbers for a log
 * that has none, and each row's global tokens from its samples and the
 * sequence length.  Shared by `shakedown ingest` and `shakedown
 * reference create --from-log`, so that both see one series.  Pure
 * logic: no printing, no exit.
 */
#ifndef SD_INGEST_APPLY_H
#define SD_INGEST_APPLY_H

#include <stddef.h>

#include "ingest/ingest.h"
#include "train/metrics.h"

/* What the options give: facts with origin SD_TRAIN_GIVEN (or
 * SD_TRAIN_DERIVED / SD_TRAIN_READ for those from a model config file),
 * the rest SD_TRAIN_UNKNOWN; log_every 0 when not given. */
struct sd_ingest_given {
	struct sd_train_facts facts;
	long log_every;
};

/* Every fact unknown, precision bf16, no --log-every. */
void sd_ingest_given_init(struct sd_ingest_given *g);

/*
 * Make l's rows and facts ready, in place:
 *  - a log without step numbers (steps_are_rows: its rows numbered 1, 2,
 *    3 ... by the parser, a garbled row keeping its place) has each row's
 *    number multiplied by N, the --log-every given, else the log's own
 *    log_every; with
 *    neither, SD_ERR_INVALID saying to give --log-every;
 *  - each fact is the given one when given, else the log's; out->facts
 *    holds the result.  A given value that differs from what the log
 *    states is used, and `note` (may be NULL) says both ("--gpus 16
 *    given; the log says 8");
 *  - a row without a token count and with samples gets samples x
 *    seq_len tokens when the sequence length is known.
 * Returns SD_OK, or SD_ERR_INVALID with err.
 */
int sd_ingest_apply(struct sd_ingest_log *l, const struct sd_ingest_given *g,
		    struct sd_train_facts *out, char *note, size_t notelen,
		    char *err, size_t errlen);

/*
 * --global-batch G (0: not given): the sequences of one optimizer step
 * over all ranks, made each row's samples; it wins over the log's own,
 * and `note` says what the log said.  Rows with only one sample's time
 * (l->step_s_per_sample: DeepSpeed's ThroughputTimer in a log that never
 * states train_batch_size) are timed G x that; such rows without G are
 * SD_ERR_INVALID, err saying to give it (`path` names the log).
 */
int sd_ingest_apply_global_batch(struct sd_ingest_log *l, long G,
				 const char *path, char *note, size_t notelen,
				 char *err, size_t errlen);

/* The workload identity of a log, what its references carry: "log", or
 * "log NAME" for --workload NAME. */
void sd_ingest_config(const char *workload, char *buf, size_t len);

#endif
