/*
 * ingest.h - reading real training logs (`shakedown ingest`, `shakedown
 * reference create --from-log`): Megatron-LM, DeepSpeed, Hugging Face
 * Trainer and LLaMA-Factory.
 *
 * A parser turns one log into a series of sd_train_step rows (rank -1,
 * the job's; metrics.h) and the facts the log itself states (origin
 * SD_TRAIN_READ).  What the log lacks comes from the command's options;
 * the metrics are computed by metrics.c alone, as for the built-in
 * workload, so the two can never disagree.
 *
 * Every line of the log is accounted for:
 *  - a step line: parsed into a row;
 *  - a line the format defines and that carries facts (an arguments dump,
 *    a flops-profiler summary): read;
 *  - a line that looks like the format's step line (or, in a JSON-lines
 *    file, any non-empty line) but does not parse: *unparsed*, counted in
 *    lines_unparsed, the first SD_INGEST_MAX_BAD of them kept with their
 *    line number and why;
 *  - any other line (the framework's warnings, the user's own prints):
 *    counted in lines_other.
 * lines = step lines + fact lines + unparsed + other + step lines of
 * other runs (blank lines and a rank's copies of a row are other lines).
 *
 * Pure parsing: no printing, no exit.  Functions return an sd_status
 * (shakedown/backend.h) and fill err with one line "FILE:LINE: what is
 * wrong" (or "FILE: ...") naming the problem and the fix.
 */
#ifndef SD_INGEST_H
#define SD_INGEST_H

#include <stddef.h>

#include "train/metrics.h"

/* The hint a reader puts in its note when the log has no token counts;
 * sd_ingest_apply() replaces it when the options give them. */
#define SD_INGEST_TOKENS_HINT                                               \
	"give --tokens-per-step, or --global-batch and --seq-len"

enum sd_ingest_format {
	SD_INGEST_AUTO = 0,     /* "auto": sniffed */
	SD_INGEST_MEGATRON,     /* "megatron": Megatron-LM's stdout */
	SD_INGEST_DEEPSPEED,    /* "deepspeed": DeepSpeed engine's stdout */
	SD_INGEST_HF,           /* "hf": Trainer stdout dicts, or
				   trainer_state.json */
	SD_INGEST_LLAMAFACTORY, /* "llamafactory": trainer_log.jsonl */
	SD_INGEST_NFORMATS
};

/* "auto", "megatron", "deepspeed", "hf", "llamafactory". */
const char *sd_ingest_format_name(enum sd_ingest_format f);

/* Parse one of those names (case-insensitive; also "huggingface",
 * "llama-factory").  SD_OK, or SD_ERR_INVALID with err listing them. */
int sd_ingest_format_parse(const char *s, enum sd_ingest_format *out,
			   char *err, size_t errlen);

/* The variant name of a job's console output (a literal split in two:
 * test/unit/lib_quiet.t keeps the word out of lib/ but here). */
#define SD_INGEST_CONSOLE_VARIANT "std" "out"

/* How far format detection reads (a log whose first step line is past
 * it needs --format). */
#define SD_INGEST_SNIFF_MAX ((size_t)32 << 20)

/* The largest step number read: a line with a larger one is unparsed (no
 * run is that long, and a long holds it exactly). */
#define SD_INGEST_MAX_STEP 1e15

/* The most read from a log that is not a regular file (a pipe, a
 * process substitution, a device), which is read whole. */
#define SD_INGEST_STREAM_MAX ((size_t)64 << 20)

/* How many unparsed lines are kept with their reasons. */
#define SD_INGEST_MAX_BAD 8

struct sd_ingest_bad {
	long line;      /* 1-based */
	char why[160];  /* what is wrong: "no number after 'lm loss:'" */
	char text[96];  /* the start of the line, as read */
};

/*
 * A parsed log.  Row i of steps has, beside it:
 *  samples[i]       sequences (samples) per global step as the log says
 *                   (Megatron's "global batch size"), NaN when it does not
 *                   say; the command multiplies by the sequence length
 *                   when a row has no token count;
 *  logged_tflops[i] the framework's own per-device TFLOP/s for the row
 *                   (Megatron's "throughput per GPU (TFLOP/s/GPU)",
 *                   DeepSpeed's flops profiler), NaN when absent: shown
 *                   beside shakedown's own figure, never used for it.
 * Rows are in increasing step order (sd_train_check_steps() holds);
 * step_s is the mean time of one step over the steps since the row
 * before, as the frameworks print it.
 */
struct sd_ingest_log {
	enum sd_ingest_format format;  /* never AUTO after a parse */
	char variant[48];              /* "stdout", "trainer_state.json",
					  "trainer_log.jsonl", ... */
	struct sd_train_step *steps;   /* n rows, rank -1 */
	double *samples;               /* n */
	double *logged_tflops;         /* n */
	size_t n, cap;
	struct sd_train_facts facts;   /* what the log states, origin
					  SD_TRAIN_READ; the rest unknown */
	double log_every;              /* steps between logged rows as the
					  log states it (HF logging_steps),
					  NaN when it does not */
	int steps_are_rows;            /* 1: the log has no step numbers
					  (HF Trainer's stdout dicts); rows
					  are numbered 1, 2, 3 ... and the
					  command multiplies them by
					  log_every or --log-every */
	int step_s_per_sample;         /* 1: the rows without SD_STEP_TIME
					  (and samples NaN) hold in step_s
					  the seconds of one sample: the log
					  gives samples/s but never its batch
					  (DeepSpeed's ThroughputTimer
					  without train_batch_size); the
					  command multiplies them by
					  --global-batch */
	long lines;                    /* lines read */
	long lines_steps;              /* step lines parsed into rows */
	long lines_facts;              /* lines read for facts */
	long lines_unparsed;           /* looked like data, did not parse */
	long lines_other;              /* everything else, blank included */
	long steps_dropped;            /* step lines not kept: a step number
					  not above the one before (a rank's
					  duplicate line, a resume); each is
					  an unparsed line when its values
					  differ, else an other line */
	int want_run;                  /* the run to read when the log holds
					  several (each began again at its
					  first step): 1.., 0 the last */
	int runs;                      /* runs seen */
	int run_kept;                  /* the one read (the rows now are
					  its while it is the last seen) */
	long run_first, last_step;     /* the current run's first step;
					  the last step line's */
	long lines_other_runs;         /* step lines of the runs not read */
	long copies;                   /* step lines that repeat a row
					  (another rank's, or another
					  process's, printing the same
					  step and loss): other lines, read
					  once, said in warning */
	size_t nbad;                   /* kept in bad[] */
	struct sd_ingest_bad bad[SD_INGEST_MAX_BAD];
	char note[400];                /* what the reader chose, for the
					  summary ("HF stdout has no step
					  numbers: step = row x 10 from
					  --log-every"); "" when nothing */
	char misnumbered[240];         /* why the rows' step numbers may
					  be wrong (a loss printed where
					  no row could be made of it, in a
					  log numbered by position): the
					  loss is then not judged; "" when
					  they are right */
	char warning[240];             /* what the log itself got wrong
					  that the rows do not show (two
					  processes' rows interleaved in
					  one file: one's read, the
					  other's lines other lines, not
					  steps_dropped), printed as a
					  warning; "" when nothing */
};

/* An empty log: no rows, facts unknown (sd_train_facts_init), NaN
 * log_every. */
void sd_ingest_log_init(struct sd_ingest_log *l, enum sd_ingest_format f);

/* Free what l owns and make it empty again (NULL is fine). */
void sd_ingest_log_free(struct sd_ingest_log *l);

/*
 * Append a row (the caller sets s->rank = -1 and s->has) with its samples
 * and logged TFLOP/s (NaN when unknown).  A step number not above the
 * last row's is not appended: steps_dropped counts it and, when its loss
 * differs from the row it repeats (a restart, not a rank's copy), it is
 * also kept as an unparsed line with `line`.  SD_OK, or SD_ERR_NOMEM.
 */
int sd_ingest_add_step(struct sd_ingest_log *l, long line,
		       const struct sd_train_step *s, double samples,
		       double logged_tflops);

/* Count an unparsed line and keep it (the first SD_INGEST_MAX_BAD):
 * `text` is the line (len bytes, not NUL-terminated), why printf-style. */
void sd_ingest_bad_line(struct sd_ingest_log *l, long line, const char *text,
			size_t len, const char *why, ...)
	__attribute__((format(printf, 5, 6)));

/* The length of a launcher's prefix at the start of a line (n bytes), 0
 * when there is none: "12: " (srun -l), "[rank3]:" (torchrun),
 * "host-1: " or "localhost: " (pdsh under DeepSpeed's multi-node
 * launcher: a host name with a digit or a '-', or localhost). */
size_t sd_ingest_launcher_prefix(const char *s, size_t n);

/* The next line of a log's text (len bytes) from *at: its start after
 * up to two launcher prefixes (sd_ingest_launcher_prefix), and in *n its
 * length without the newline; *cut is 1 for a last line without one (a
 * log still being written, or cut off).  Advances *at past it; NULL at
 * the end of the text. */
const char *sd_ingest_next_line(const char *text, size_t len, size_t *at,
				size_t *n, int *cut);

/* The first needle in the n bytes at s, or NULL. */
const char *sd_ingest_find(const char *s, size_t n, const char *needle);

/* The number right after `key` in the n bytes at s (blanks skipped; it
 * ends at a blank, ',', '/' or '|'): NaN when key is not there; NaN and
 * *bad = 1 when it is and its number does not parse.  *suffix (may be
 * NULL) gets the first character after the number's blanks ('M' in
 * "124.44 M"). */
double sd_ingest_number_after(const char *s, size_t n, const char *key,
			      int *bad, char *suffix);

/* A settings line of a dump, "  name {dots} value" (Megatron-LM's
 * arguments, DeepSpeed's configuration), after a logging prefix that ends
 * in "] " or "]:": 0 with its name and value (NaN when not a number), or
 * -1 when the line is not one. */
int sd_ingest_setting_line(const char *s, size_t n, char *name, size_t nlen,
			   double *value);

/* Set a fact read from the log (origin SD_TRAIN_READ); a value that is
 * not finite or not positive is ignored. */
void sd_ingest_read_fact(struct sd_train_fact *f, double value);

/*
 * Megatron-LM's arguments dump (megatron/training/arguments.py
 * _print_args(): '-- arguments --', '  name {dots} value' lines, '-- end
 * of arguments --'), wherever a log prints it: Megatron-LM's stdout, and
 * a Megatron-DeepSpeed job's under DeepSpeed's lines.  Called with each
 * line and *in_args (0 before the first line): 1 when the line is the
 * block's (a fact line, for the caller to count), seq_length, world_size
 * (devices), num_layers and hidden_size read into l's facts, name and
 * *value the line's setting (name "" and NaN on the title and end
 * lines); 0 when it is not the block's.
 */
int sd_ingest_megatron_args(struct sd_ingest_log *l, const char *s, size_t n,
			    int *in_args, char *name, size_t nlen,
			    double *value);

/*
 * The parsers.  Each reads the whole text (len bytes, not necessarily
 * NUL-terminated; `path` names it in messages) into *out, initialised by
 * the caller with sd_ingest_log_init().  They fail (SD_ERR_INVALID, err
 * naming PATH:LINE) only when the file as a whole is not of their format
 * or cannot be read as one (a JSON document that does not parse, naming
 * line and column); a log with no step row fails too ("PATH: no step
 * lines of FORMAT; N lines read, M unparsed: first at line L: WHY").
 * Single bad lines are counted, not errors.
 */
int sd_ingest_parse_megatron(const char *path, const char *text, size_t len,
			     struct sd_ingest_log *out, char *err,
			     size_t errlen);
int sd_ingest_parse_deepspeed(const char *path, const char *text, size_t len,
			      struct sd_ingest_log *out, char *err,
			      size_t errlen);
int sd_ingest_parse_hf(const char *path, const char *text, size_t len,
		       struct sd_ingest_log *out, char *err, size_t errlen);
int sd_ingest_parse_llamafactory(const char *path, const char *text,
				 size_t len, struct sd_ingest_log *out,
				 char *err, size_t errlen);

/* ms-swift's logging.jsonl (JSON lines with "global_step/max_steps",
 * its ProgressCallbackNew's record of each log event): a Trainer log,
 * format hf, variant "logging.jsonl"; sd_ingest_parse_hf hands it here.
 * Read in llamafactory.c, beside trainer_log.jsonl. */
int sd_ingest_parse_swift_jsonl(const char *path, const char *text,
				size_t len, struct sd_ingest_log *out,
				char *err, size_t errlen);

/* 1 when text's first line is a JSON object on one line with
 * "global_step/max_steps" (ms-swift's logging.jsonl), else 0. */
int sd_ingest_is_swift_jsonl(const char *text, size_t len);

/*
 * The sniffers: how sure each format is that `text` (the file's first
 * len bytes: 64 KiB, then twice as much until one is at least 90 sure,
 * the whole file or SD_INGEST_SNIFF_MAX is read) is its own, 0 (not at all) to 100 (its
 * unmistakable marker: Megatron's "elapsed time per iteration (ms)", a
 * "log_history" key, a JSON line with "current_steps" ...).
 */
int sd_ingest_sniff_megatron(const char *text, size_t len);
int sd_ingest_sniff_deepspeed(const char *text, size_t len);
int sd_ingest_sniff_hf(const char *text, size_t len);
int sd_ingest_sniff_llamafactory(const char *text, size_t len);

/*
 * Read the file at `path` in format fmt (SD_INGEST_AUTO: the format whose
 * sniffer scores highest, at least 50; else SD_ERR_INVALID naming the
 * formats and --format) into *out (sd_ingest_log_free() it, also after a
 * failure).  A regular file is mapped, not read whole, and the lines
 * behind the parser are given back as it goes (sd_ingest_next_line): the
 * memory is a window of a few MiB plus the rows; a FIFO is read whole.  SD_ERR_IO when the file cannot be read, SD_ERR_INVALID as
 * the parsers, SD_ERR_NOMEM.
 */
int sd_ingest_read(const char *path, enum sd_ingest_format fmt,
		   struct sd_ingest_log *out, char *err, size_t errlen);

/* The same, reading run `run` (1..) of a log that holds several (a run
 * begins where the step numbers go back to where the run before began,
 * as a job restarted into the same file does), 0 the last; a run past
 * the last is SD_ERR_INVALID saying how many there are. */
int sd_ingest_read_run(const char *path, enum sd_ingest_format fmt, int run,
		       struct sd_ingest_log *out, char *err, size_t errlen);

/*
 * A model's size from its configuration file (a Hugging Face
 * config.json: hidden_size, num_hidden_layers, intermediate_size,
 * vocab_size, num_attention_heads, num_key_value_heads,
 * tie_word_embeddings, max_position_embeddings; model_type llama,
 * mistral, qwen2, gpt2 ...): the parameter count, layers and width,
 * origin SD_TRAIN_DERIVED (params) and SD_TRAIN_READ (layers, width).
 * SD_OK, SD_ERR_IO, or SD_ERR_INVALID naming the file and the key.
 */
int sd_ingest_model_config(const char *path, struct sd_train_fact *params,
			   struct sd_train_fact *layers,
			   struct sd_train_fact *width, char *err,
			   size_t errlen);

#endif
