/*
 * sink.h - where results go.
 *
 * A run is a stream of events delivered to every open sink: the printers
 * (text table, DeepSpeed table, JSON lines; src/sink_text.c), nccl-tests'
 * JSON document of -J (src/sink_ncclj.c) and the SQLite recorder
 * (lib/db/sink_db.c), the one recorder of every kind of run: `shakedown
 * gemm` and the training runs of `train` and `ingest` (lib/db/train_db.h)
 * use it alone.  Only rank 0 has sinks.  Callbacks return
 * SD_OK or an sd_status; a failing sink is reported through the set's warn
 * callback and the others go on, so a result is never lost because one
 * writer failed.  sd_sinks_emit() is the one fan-out; it serialises calls,
 * since run_end may come from the control plane's thread when a run is
 * aborted.
 */
#ifndef SD_SINK_H
#define SD_SINK_H

#include <stddef.h>
#include <stdint.h>
#include "shakedown/backend.h"
#include "bootstrap.h"

struct sd_rank_info {
	int rank;
	int local_rank;
	int pid;
	char host[64];
	struct sd_device_info dev;
};

/* One per host: what the software there looks like. */
struct sd_host_env {
	char host[64];
	char *json; /* JSON object: kernel, versions, NCCL_*, CUDA_VISIBLE_DEVICES, SHAKEDOWN_* */
};

struct sd_train_facts;
struct sd_train_step;
struct sd_train_summary;
struct sd_train_comparison;
struct sd_train_metric;

/* What a training run is beyond any run (runs.run_kind "train" or
 * "ingest"): its train_runs row. */
struct sd_train_begin {
	const char *config;          /* the workload's identity (required) */
	const char *log_path;        /* ingest: the log; NULL otherwise */
	const char *log_format;      /* ingest: megatron, deepspeed, hf, ... */
	const struct sd_train_facts *facts; /* required */
};

/* What a training run found, once, before its run_end. */
struct sd_train_outcome {
	const struct sd_train_summary *summary; /* NULL: no metrics */
	const struct sd_train_comparison *cmp;  /* NULL: not judged */
	const char *reference_name;  /* the reference of cmp */
	long lines_unparsed;         /* ingest: lines that did not parse;
					-1: not a log */
	const struct sd_train_metric *extra; /* more rows (per rank or
						host), or NULL */
	size_t nextra;
};

struct sd_run_info {
	char uuid[37];
	double started_at;        /* seconds since the epoch */
	const char *command_line; /* argv joined with spaces, quoted as needed */
	const char *plan_text;    /* the effective plan, as text */
	const char *plan_hash;    /* 16 hex digits: FNV-1a 64 of plan_text */
	const char *tool_version;
	const char *backend;
	const char *backend_version;
	const char *user;
	int nranks;
	const struct sd_job_info *job;
	const struct sd_rank_info *ranks; /* nranks entries, by rank */
	int nhosts;
	const struct sd_host_env *hosts;
	const char *plan_name;    /* "default", or the plan file */
	const char *run_kind;     /* runs.run_kind: "gemm", "train",
				     "ingest", or NULL for "collectives" */
	const struct sd_train_begin *train; /* a training run's; else NULL */
};

struct sd_test_info {
	int index;            /* 0, 1, ... in run order */
	const char *name;     /* e.g. "all_reduce" */
	enum sd_op op;
	enum sd_dtype dtype;
	enum sd_redop redop;  /* meaningful when has_redop */
	int has_redop;
	int root;             /* -1 when the op has no root */
	const char *scope;    /* "world", or "split:K" */
	const char *algo;     /* backend algorithm, "auto" when chosen per size */
	int nranks;           /* ranks taking part (the group's) */
	int group;            /* index of the group within its scope, 0.. */
	const char *members;  /* the group's world ranks as ranges: "0-3",
				 "4,6" */
	int in_place;         /* in-place measurements follow each size's
				 out-of-place one */
	int plan_test;        /* the plan's test it measures, 1.. (the one
				 number every view gives a test) */
	int attempt;          /* 1; 2.. when a retry measures the group
				 again */
	const char *variant;  /* the path it ran in processes of its own
				 ("tcp eth1"); NULL or "": the rank's */
	int round;            /* the round of its scope's schedule it ran
				 in, 1..; 0: not said (a record made by
				 hand, a bisection) */
	const char *pairing;  /* how its node pair was chosen (scope
				 node-pairs:adaptive): "disjoint", "random",
				 "re-pair", "fill", "retry"; NULL or "": not
				 chosen that way (the database records
				 another word as not said) */
	int has_seed;         /* the seed its pairs were drawn with
				 (node-pairs:random:K, node-pairs:adaptive);
				 0: none */
	unsigned long long seed; /* that seed, when has_seed */
};

/* The one number every view gives a test: its plan test (1..); a record
 * without one (made by hand) counts its tests from 1. */
static inline int sd_test_number(const struct sd_test_info *t)
{
	return t->plan_test > 0 ? t->plan_test : t->index + 1;
}

struct sd_measurement {
	size_t size_bytes;    /* nccl-tests' size */
	size_t count;         /* nccl-tests' count (sd_coll_param_count) */
	int in_place;
	int iters;
	int warmup_iters;
	double time_us;       /* per iteration, combined across ranks (-a) */
	double time_us_min;   /* per-rank averages: min, avg, max */
	double time_us_avg;
	double time_us_max;
	int have_percentiles; /* --per-iter: over iterations (max over ranks) */
	double iter_us_min, iter_us_p50, iter_us_p99, iter_us_max;
	double algbw_gbs;
	double busbw_gbs;
	/* DeepSpeed benchmark's view: its size is the rank's input tensor */
	size_t ds_size_bytes;
	char ds_description[48]; /* its elements x element size: "256x4" */
	double ds_throughput_gbps;
	double ds_busbw_gbps;
	int checked;          /* 0 with -c 0 or when the op has no check */
	uint64_t wrong;       /* summed over ranks */
	int first_wrong_rank; /* -1 when none */
	struct sd_mismatch first_wrong;
	const char *algo;     /* the algorithm actually used for this size */
};

struct sd_run_end {
	const char *status;   /* passed, failed, error, cancelled, aborted */
	int exit_status;
	const char *message;  /* why, for anything but passed; may be NULL */
	double finished_at;
};

/* What one expectation found for one subject of a test (lib/verdict.h). */
struct sd_verdict_info {
	int test_index;          /* the test (sd_test_info.index) of the
				    subject's last attempt */
	const char *subject_kind;/* job, group, node, gpu-pair, node-pair,
				    rail */
	const char *subject;     /* "node03", "node01,node03", "rail 2" */
	const char *hosts;       /* its hosts as a Slurm hostlist */
	const char *expectation; /* data, busbw, time, peers, mad, baseline */
	uint64_t size_bytes;     /* the size judged; 0 for none */
	double measured, threshold; /* NAN when there is none */
	const char *unit;
	const char *status;      /* passed, failed, skipped */
	const char *reason;
	int attempts;
	const char *outcome;     /* the subject's (sd_subject_outcome), the
				    same on each of its rows */
};

/* What the run blames. */
struct sd_suspect_info {
	const char *kind;        /* node, link, path, rail, group */
	const char *subject;
	const char *hosts;       /* Slurm hostlist */
	int bad_node;            /* its host is in the bad-nodes hostlist */
	const char *reason;
};

/* One measured matrix multiply of `shakedown gemm` (lib/gemm.h). */
struct sd_gemm_result_info {
	int rank;
	const char *host, *device;
	const char *dtype;       /* fp32, tf32, bf16, fp16, fp8 */
	const char *shape;       /* square, qkv, fc, proj */
	uint64_t m, n, k;
	int iters, warmup_iters;
	double time_us;          /* median of the timed calls */
	double time_us_min, time_us_max;
	double tflops;           /* 2 m n k / time_us */
	uint64_t checked, wrong; /* elements compared, and beyond tolerance */
	double max_error, tolerance; /* as shares of an element's scale */
	int best;                /* the device's best of its dtype */
	const char *impl;        /* what computed it */
};

/* One device's verdict on one dtype of `shakedown gemm`. */
struct sd_gemm_device_info {
	int rank;
	const char *host, *device, *dtype;
	const char *status;      /* passed, failed, skipped */
	double best_tflops;      /* NAN when it did not run */
	const char *best_shape;  /* "square 2048x2048x2048", or NULL */
	double peer_median_tflops; /* NAN without peers */
	int peers;               /* devices of its name that ran the dtype */
	double peak_tflops;      /* NAN when unknown */
	const char *reason;
};

struct sd_sink_ops {
	const char *name;
	int (*run_begin)(void *self, const struct sd_run_info *run);
	int (*test_begin)(void *self, const struct sd_test_info *test);
	int (*measurement)(void *self, const struct sd_test_info *test,
			   const struct sd_measurement *m);
	/* status: passed, failed, error, skipped, cancelled */
	int (*test_end)(void *self, const struct sd_test_info *test,
			const char *status, const char *message);
	int (*run_end)(void *self, const struct sd_run_end *end);
	void (*destroy)(void *self);
	/* a test's verdicts, all at once after its last attempt; may be
	 * NULL */
	int (*verdicts)(void *self, const struct sd_verdict_info *v, size_t n);
	/* the run's suspects, once, before run_end; may be NULL */
	int (*suspects)(void *self, const struct sd_suspect_info *v, size_t n);
	/* `shakedown gemm`: every rank's matrix multiplies, and every
	 * device's verdicts, each all at once before run_end; may be NULL */
	int (*gemm_results)(void *self, const struct sd_gemm_result_info *v,
			    size_t n);
	int (*gemm_devices)(void *self, const struct sd_gemm_device_info *v,
			    size_t n);
	/* a training run: its steps, in step order per rank, as often as
	 * new ones come; then its outcome, once, before run_end; may be
	 * NULL */
	int (*train_steps)(void *self, const struct sd_train_step *s,
			   size_t n);
	int (*train_end)(void *self, const struct sd_train_outcome *o);
};

struct sd_sink {
	const struct sd_sink_ops *ops;
	void *self;
};

/* The events of a run. */
enum sd_event_kind {
	SD_EVENT_RUN_BEGIN,
	SD_EVENT_TEST_BEGIN,
	SD_EVENT_MEASUREMENT,
	SD_EVENT_TEST_END,
	SD_EVENT_RUN_END,
	SD_EVENT_VERDICTS,
	SD_EVENT_SUSPECTS,
	SD_EVENT_GEMM_RESULTS,
	SD_EVENT_GEMM_DEVICES,
	SD_EVENT_TRAIN_STEPS,
	SD_EVENT_TRAIN_END,
};

struct sd_event {
	enum sd_event_kind kind;
	const struct sd_run_info *run;     /* RUN_BEGIN */
	const struct sd_test_info *test;   /* TEST_*, MEASUREMENT */
	const struct sd_measurement *m;    /* MEASUREMENT */
	const char *status, *message;      /* TEST_END */
	const struct sd_run_end *end;      /* RUN_END */
	const struct sd_verdict_info *verdicts; /* VERDICTS */
	const struct sd_suspect_info *suspects; /* SUSPECTS */
	const struct sd_gemm_result_info *gemm_results; /* GEMM_RESULTS */
	const struct sd_gemm_device_info *gemm_devices; /* GEMM_DEVICES */
	const struct sd_train_step *steps; /* TRAIN_STEPS */
	const struct sd_train_outcome *train; /* TRAIN_END */
	size_t n;                          /* VERDICTS, SUSPECTS, GEMM_*,
					      TRAIN_STEPS: how many */
};

/* The open sinks of a run. */
struct sd_sinks {
	struct sd_sink v[4];
	int n;
	int ended;  /* run_end was delivered: later events are dropped */
	/* told about a writer that failed, with a one-line message; may be
	 * NULL */
	void (*warn)(void *arg, const char *msg);
	void *warn_arg;
};

/*
 * Deliver one event to every sink, in order, serialised with other calls
 * (any thread).  A sink that fails is named through s->warn and the others
 * still get the event.  After a run_end every event is dropped (the first
 * end of a run is its record).  Returns SD_OK, or the status of the first sink
 * that failed.  s may be NULL (nothing to do).
 */
int sd_sinks_emit(struct sd_sinks *s, const struct sd_event *ev);

/* Close every sink (destroy) and empty the set. */
void sd_sinks_close(struct sd_sinks *s);

#endif
