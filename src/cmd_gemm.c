/*
 * cmd_gemm.c - `shakedown gemm`: matrix-multiply TFLOPs of every device,
 * checked, judged and recorded.
 *
 * Started like `shakedown run` (forked by --local, under srun through
 * PMI2, or alone): every rank bootstraps, loads the backend and builds
 * the world communicator, then runs the same sweep (lib/gemm.h) at the
 * same moment: the ranks agree after every entry, so that no device is
 * measured alone while its neighbours idle and none is left waiting when
 * another fails.  A backend with a gemm slot multiplies on its device
 * (the NCCL backend: cuBLAS on the rank's GPU); without one, on the
 * rank's CPU core (float32 through a BLAS, lib/gemm.c).  Rank 0 gathers
 * every rank's rows, judges each device (its peak, when known, and its
 * peers: the devices of the same name), prints, records the run in the
 * results database (a row of runs, the rows of gemm_results and
 * gemm_devices, the failing hosts as suspects) and says the exit status,
 * which every rank then returns.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bootstrap.h"
#include "commands.h"
#include "fault.h"
#include "gemm.h"
#include "hostlist.h"
#include "names.h"
#include "plugin.h"
#include "job.h"
#include "job_options.h"
#include "ranks.h"
#include "sink.h"
#include "tool.h"
#include "util.h"
#include "db/db.h"

/* a usage error of `shakedown gemm` (src/ranks.h) */
/* The default bound of start-up and of one entry's series of calls. */
#define GEMM_TIMEOUT_MS 60000
/* The seed of the inputs (the same on every rank). */
#define GEMM_SEED 0x5d5eedu

enum gemm_format { GEMM_TEXT = 0, GEMM_JSON };

struct gemm_options {
	struct sd_job_options job; /* --local --backend --iface --timeout --db */
	uint64_t sizes[SD_GEMM_MAX_SHAPES];
	int nsizes, sizes_set;
	uint64_t width, tokens;
	int width_set, tokens_set;
	unsigned types;          /* 1u << enum sd_gemm_type; 0: default */
	long iters, warmup;      /* -1: default */
	struct sd_gemm_expect expect;
	enum gemm_format format;
	int verbose;
};

/* What rank 0 knows at the end, for printing and recording. */
struct gemm_outcome {
	const struct sd_rank_info *ranks;
	int nranks;
	struct sd_gemm_row *rows;
	size_t nrows;
	struct sd_gemm_verdict *v;
	size_t nv;
	int failed, wrong_math, measured;
	char *bad_hosts;         /* Slurm hostlist of the failing devices */
};

struct gemm_ctx {
	struct gemm_options opt;
	struct sd_fault fault;
	char cmdline[4096];
	struct sd_bootstrap_impl *boot;
	struct sd_plugin plugin;
	struct sd_comm *comm;
	struct sd_sinks sinks;
	int db_sink;             /* index in sinks, or -1 */
	/* what gemm_main's phases share */
	char uuid[37];
	struct sd_gemm_shape shapes[SD_GEMM_MAX_SHAPES];
	int nshapes;
	struct sd_rank_info *ranks;  /* every rank, in rank order */
	struct sd_gemm_row *mine;    /* this rank's rows */
	size_t nmine;
	char *all_rows;              /* every rank's, gathered */
	size_t *lens, *offs;
	struct gemm_outcome g;       /* rank 0 */
	struct sd_buf text;          /* the sweep as recorded text */
	struct sd_job_guard guard;   /* the control plane, the watchdog */
	int sweep_status;            /* how the sweep ended, for rank 0 */
	const char *why;
	/* rank 0: every rank's rows of the entries agreed so far, for the
	 * record of a run stopped mid-sweep (a rank lost, a product that
	 * outlived a signal's grace); under kept_mu (the guard's thread) */
	struct sd_gemm_row *kept;
	size_t nkept, kept_cap;
	pthread_mutex_t kept_mu;
};

/* What a rank says after each entry: its exit status and the row it
 * measured (measured 0: none). */
struct entry_word {
	int32_t status;
	int32_t measured;
	struct sd_gemm_row row;
};

/* a signal asks the ranks to stop (the job's guard, job.h) */
#define cancel_flag sd_job_cancelled()

enum long_only {
	OPT_SIZES = 256, OPT_WIDTH,
	OPT_TOKENS, OPT_DTYPE, OPT_PEAK, OPT_PEAK_FRACTION, OPT_PEERS,
	OPT_FORMAT,
};

/* gemm's own options, after the shared ones (job_options.h) */
static const struct option own_options[] = {
	{ "sizes", required_argument, NULL, OPT_SIZES },
	{ "width", required_argument, NULL, OPT_WIDTH },
	{ "tokens", required_argument, NULL, OPT_TOKENS },
	{ "dtype", required_argument, NULL, OPT_DTYPE },
	{ "iters", required_argument, NULL, 'n' },
	{ "warmup_iters", required_argument, NULL, 'w' },
	{ "peak-tflops", required_argument, NULL, OPT_PEAK },
	{ "peak-fraction", required_argument, NULL, OPT_PEAK_FRACTION },
	{ "peers", required_argument, NULL, OPT_PEERS },
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 }
};

/* A share in (0, 1]: 0, or -1. */
static int parse_share(const char *s, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || *end || !(v > 0) || v > 1)
		return -1;
	*out = v;
	return 0;
}

/* "256,512,1K" or "256-4096" (doubling) or "none": the square sizes.
 * 0, or -1 with err. */
static int parse_sizes(const char *list, struct gemm_options *o, char *err,
		       size_t errlen)
{
	char copy[512], *save = NULL;
	o->nsizes = 0;
	o->sizes_set = 1;
	if (strcmp(list, "none") == 0)
		return 0;
	if (strlen(list) >= sizeof(copy)) {
		snprintf(err, errlen, "--sizes is too long");
		return -1;
	}
	sd_strlcpy(copy, list, sizeof(copy));
	for (char *s = strtok_r(copy, ",", &save); s;
	     s = strtok_r(NULL, ",", &save)) {
		uint64_t lo, hi;
		char *dash = strchr(s, '-');
		if (dash)
			*dash = '\0';
		if (sd_parse_size(s, &lo) || lo == 0 || lo > SD_GEMM_MAX_SIDE ||
		    (dash && (sd_parse_size(dash + 1, &hi) || hi < lo ||
			      hi > SD_GEMM_MAX_SIDE))) {
			if (dash)
				*dash = '-';
			snprintf(err, errlen, "--sizes: '%s' is not a size from "
				 "1 to %d (N, or A-B for A, 2A, 4A ... up to B), "
				 "nor 'none'", s, SD_GEMM_MAX_SIDE);
			return -1;
		}
		for (uint64_t v = lo; v <= (dash ? hi : lo); v *= 2) {
			if (o->nsizes == SD_GEMM_MAX_SHAPES - 3) {
				snprintf(err, errlen, "--sizes: at most %d "
					 "sizes", SD_GEMM_MAX_SHAPES - 3);
				return -1;
			}
			o->sizes[o->nsizes++] = v;
		}
	}
	return 0;
}

/* "fp32,bf16" or "all": the types; 0, or -1 with err. */
static int parse_types(const char *list, unsigned *mask, char *err,
		       size_t errlen)
{
	char copy[256], *save = NULL;
	*mask = 0;
	if (strcmp(list, "all") == 0) {
		*mask = (1u << SD_GEMM_TYPE_COUNT) - 1;
		return 0;
	}
	sd_strlcpy(copy, list, sizeof(copy));
	for (char *s = strtok_r(copy, ",", &save); s;
	     s = strtok_r(NULL, ",", &save)) {
		enum sd_gemm_type t;
		const char *hint = NULL;
		if (sd_gemm_type_from_name(s, &t, &hint)) {
			snprintf(err, errlen, "--dtype: unknown type '%s'%s%s%s; "
				 "use fp32, tf32, bf16, fp16, fp8 or all", s,
				 hint ? " (did you mean '" : "",
				 hint ? hint : "", hint ? "'?)" : "");
			return -1;
		}
		*mask |= 1u << t;
	}
	if (!*mask) {
		snprintf(err, errlen, "--dtype: name at least one type");
		return -1;
	}
	return 0;
}

/* "989" (every type) or "bf16=989,fp8=1979"; 0, or -1 with err. */
static int parse_peaks(const char *list, double *peak, char *err,
		       size_t errlen)
{
	char copy[256], *save = NULL;
	sd_strlcpy(copy, list, sizeof(copy));
	for (char *s = strtok_r(copy, ",", &save); s;
	     s = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(s, '=');
		enum sd_gemm_type t = SD_GEMM_TYPE_COUNT;
		const char *num = s;
		if (eq) {
			*eq = '\0';
			num = eq + 1;
			if (sd_gemm_type_from_name(s, &t, NULL)) {
				snprintf(err, errlen, "--peak-tflops: unknown "
					 "type '%s'; write TFLOPS or TYPE=TFLOPS "
					 "(fp32, tf32, bf16, fp16, fp8)", s);
				return -1;
			}
		}
		char *end;
		errno = 0;
		double v = strtod(num, &end);
		if (errno || end == num || *end || !(v > 0) || v > 1e6) {
			snprintf(err, errlen, "--peak-tflops: '%s' is not a "
				 "number of TFLOPs above 0", num);
			return -1;
		}
		for (int i = 0; i < SD_GEMM_TYPE_COUNT; i++)
			if (t == SD_GEMM_TYPE_COUNT || (int)t == i)
				peak[i] = v;
	}
	return 0;
}

/* Parse argv into o.  Returns -1 to go on, else an exit status. */
static int parse_options(int argc, char **argv, struct gemm_options *o)
{
	static const struct sd_name_row formats[] = {
		{ "text", GEMM_TEXT }, { "table", GEMM_TEXT },
		{ "json", GEMM_JSON }, { NULL, 0 }
	};
	int ch, f;
	long v;
	const char *hint;
	char oerr[256], perr[512];
	opterr = 0;
	optind = 1;
	struct option rows[SD_JOB_OPTION_ROWS + SD_ROWS(own_options)];
	const struct option *opts = SD_JOB_ROWS("gemm", own_options, rows);
	while ((ch = sd_job_getopt(argc, argv, ":n:w:T:vh", opts, &o->job, oerr,
				   sizeof(oerr))) != -1) {
		switch (ch) {
		case SD_OPT_REFUSED:
			return sd_usage_error("gemm", "%s", oerr);
		case OPT_SIZES:
			if (parse_sizes(optarg, o, perr, sizeof(perr)))
				return sd_usage_error("gemm", "%s", perr);
			break;
		case OPT_WIDTH:
			if (sd_parse_int(optarg, 0, SD_GEMM_MAX_SIDE / 4, &v))
				return sd_usage_error("gemm", "--width '%s' must be a model width "
					    "from 0 (no training shapes) to %d",
					    optarg, SD_GEMM_MAX_SIDE / 4);
			o->width = (uint64_t)v;
			o->width_set = 1;
			break;
		case OPT_TOKENS:
			if (sd_parse_int(optarg, 1, SD_GEMM_MAX_SIDE, &v))
				return sd_usage_error("gemm", "--tokens '%s' must be a number of "
					    "tokens (batch x sequence) from 1 to "
					    "%d", optarg, SD_GEMM_MAX_SIDE);
			o->tokens = (uint64_t)v;
			o->tokens_set = 1;
			break;
		case OPT_DTYPE:
			if (parse_types(optarg, &o->types, perr, sizeof(perr)))
				return sd_usage_error("gemm", "%s", perr);
			break;
		case 'n':
			if (sd_parse_int(optarg, 1, 100000, &o->iters))
				return sd_usage_error("gemm", "-n '%s' must be a number of timed "
					    "calls from 1 to 100000", optarg);
			break;
		case 'w':
			if (sd_parse_int(optarg, 0, 100000, &o->warmup))
				return sd_usage_error("gemm", "-w '%s' must be a number of warm-up "
					    "calls from 0 to 100000", optarg);
			break;
		case OPT_PEAK:
			if (parse_peaks(optarg, o->expect.peak_tflops, perr,
					sizeof(perr)))
				return sd_usage_error("gemm", "%s", perr);
			break;
		case OPT_PEAK_FRACTION:
			if (parse_share(optarg, &o->expect.peak_fraction))
				return sd_usage_error("gemm", "--peak-fraction '%s' must be a share "
					    "of the peak above 0 and at most 1 "
					    "(0.5: half of it)", optarg);
			break;
		case OPT_PEERS:
			if (parse_share(optarg, &o->expect.peers))
				return sd_usage_error("gemm", "--peers '%s' must be a share of the "
					    "peer median above 0 and at most 1 "
					    "(0.8: a fifth below it fails)",
					    optarg);
			break;
		case OPT_FORMAT:
			hint = NULL;
			if (sd_name_lookup(formats, optarg, &f, &hint))
				return sd_usage_error("gemm", "--format '%s' must be text or "
					    "json%s%s%s", optarg,
					    hint ? "; did you mean '" : "",
					    hint ? hint : "", hint ? "'?" : "");
			o->format = (enum gemm_format)f;
			break;
		case 'v': o->verbose = 1; break;
		case 'h':
			sd_help_print(stdout, sd_help_gemm);
			return sd_finish_stdout();
		case ':':
		default:
			return sd_option_error("gemm", ch, argv);
		}
	}
	if (optind < argc)
		return sd_usage_error("gemm", "unexpected argument '%s'; see 'shakedown help "
			    "gemm'", argv[optind]);
	if (o->tokens_set && o->width_set && o->width == 0)
		return sd_usage_error("gemm", "--tokens is for the training shapes, which "
			    "--width 0 leaves out; drop one");
	if (o->sizes_set && o->nsizes == 0 && o->width_set && o->width == 0)
		return sd_usage_error("gemm", "--sizes none and --width 0 leave nothing to "
			    "measure; keep one");
	sd_job_options_end(&o->job);
	return -1;
}

/* The defaults that depend on where the matrices are multiplied: a GPU
 * (the backend has a gemm slot) or the host's CPU cores. */
static void apply_defaults(struct gemm_options *o, int on_device)
{
	static const uint64_t cpu_sizes[] = { 256, 512, 1024, 2048 };
	static const uint64_t gpu_sizes[] = { 512, 1024, 2048, 4096, 8192,
					      16384 };
	if (!o->sizes_set) {
		const uint64_t *s = on_device ? gpu_sizes : cpu_sizes;
		o->nsizes = on_device ? 6 : 4;
		memcpy(o->sizes, s, (size_t)o->nsizes * sizeof(*s));
	}
	if (!o->width_set)
		o->width = on_device ? 4096 : 768;
	if (!o->tokens_set)
		o->tokens = on_device ? 16384 : 1024;
	if (!o->types)
		o->types = on_device ? (1u << SD_GEMM_BF16) |
					       (1u << SD_GEMM_FP16) |
					       (1u << SD_GEMM_TF32) |
					       (1u << SD_GEMM_FP8)
				     : 1u << SD_GEMM_FP32;
	if (o->iters < 0)
		o->iters = on_device ? 20 : 5;
	if (o->warmup < 0)
		o->warmup = on_device ? 5 : 1;
}

/* The backend's gemm slot as a sd_gemm_fn. */
static int backend_gemm(void *arg, const struct sd_gemm_args *a,
			struct sd_gemm_result *r, char *err, size_t errlen)
{
	struct gemm_ctx *c = arg;
	return c->plugin.ops->gemm(c->comm, a, r, err, errlen);
}

/* ------------------------------------------------------ rank 0 prints */

/* The device's name, as the backend described it. */
static const char *device_name(const struct sd_rank_info *ranks, int r)
{
	return ranks[r].dev.name[0] ? ranks[r].dev.name : "(no device)";
}

static void json_num(struct sd_buf *b, double v)
{
	sd_buf_json_num(b, v, 6);
}

static void print_row_json(const char *uuid, const struct sd_rank_info *ranks,
			   const struct sd_gemm_row *r)
{
	struct sd_buf b = { 0 };
	sd_buf_printf(&b, "{\"run\":\"%s\",\"kind\":\"gemm\",\"rank\":%d,"
		      "\"host\":", uuid, r->rank);
	sd_buf_json_string(&b, ranks[r->rank].host);
	sd_buf_printf(&b, ",\"device\":");
	sd_buf_json_string(&b, device_name(ranks, r->rank));
	sd_buf_printf(&b, ",\"dtype\":\"%s\",\"shape\":\"%s\",\"m\":%llu,"
		      "\"n\":%llu,\"k\":%llu",
		      sd_gemm_type_name((enum sd_gemm_type)r->type), r->shape,
		      (unsigned long long)r->m, (unsigned long long)r->n,
		      (unsigned long long)r->k);
	if (r->status == SD_GEMM_NOT_HERE) {
		sd_buf_printf(&b, ",\"not_here\":");
		sd_buf_json_string(&b, r->note);
		sd_buf_printf(&b, "}\n");
	} else {
		sd_buf_printf(&b, ",\"iters\":%d,\"warmup_iters\":%d,"
			      "\"time_us\":%.3f,\"time_us_min\":%.3f,"
			      "\"time_us_max\":%.3f,\"tflops\":%.6f,"
			      "\"best\":%s,\"checked\":%llu,\"wrong\":%llu,"
			      "\"max_error\":", r->iters, r->warmup_iters,
			      r->time_us, r->time_us_min, r->time_us_max,
			      r->tflops, r->best ? "true" : "false",
			      (unsigned long long)r->checked,
			      (unsigned long long)r->wrong);
		json_num(&b, r->max_error);
		sd_buf_printf(&b, ",\"tolerance\":");
		json_num(&b, r->tolerance);
		sd_buf_printf(&b, ",\"impl\":");
		sd_buf_json_string(&b, r->impl);
		sd_buf_printf(&b, "}\n");
	}
	if (b.data)
		fputs(b.data, stdout);
	sd_buf_free(&b);
}

static void print_verdict_json(const char *uuid,
			       const struct sd_rank_info *ranks,
			       const struct sd_gemm_row *rows,
			       const struct sd_gemm_verdict *v)
{
	struct sd_buf b = { 0 };
	sd_buf_printf(&b, "{\"run\":\"%s\",\"kind\":\"gemm_device\","
		      "\"rank\":%d,\"host\":", uuid, v->rank);
	sd_buf_json_string(&b, ranks[v->rank].host);
	sd_buf_printf(&b, ",\"device\":");
	sd_buf_json_string(&b, device_name(ranks, v->rank));
	sd_buf_printf(&b, ",\"dtype\":\"%s\",\"status\":\"%s\","
		      "\"best_tflops\":", sd_gemm_type_name(v->type),
		      v->status);
	if (v->best_row >= 0) {
		const struct sd_gemm_row *r = &rows[v->best_row];
		sd_buf_printf(&b, "%.6f,\"best_shape\":\"%s %llux%llux%llu\"",
			      v->best_tflops, r->shape, (unsigned long long)r->m,
			      (unsigned long long)r->n,
			      (unsigned long long)r->k);
	} else {
		sd_buf_printf(&b, "null,\"best_shape\":null");
	}
	sd_buf_printf(&b, ",\"peer_median_tflops\":");
	if (v->peers > 1)
		sd_buf_printf(&b, "%.6f", v->peer_median_tflops);
	else
		sd_buf_printf(&b, "null");
	sd_buf_printf(&b, ",\"peers\":%d,\"peak_tflops\":", v->peers);
	if (v->peak_tflops > 0)
		sd_buf_printf(&b, "%.6g", v->peak_tflops);
	else
		sd_buf_printf(&b, "null");
	sd_buf_printf(&b, ",\"reason\":");
	sd_buf_json_string(&b, v->reason);
	sd_buf_printf(&b, "}\n");
	if (b.data)
		fputs(b.data, stdout);
	sd_buf_free(&b);
}


static void print_text(struct gemm_ctx *c, const struct gemm_outcome *g)
{
	size_t wh = 4, wd = 6;
	for (int r = 0; r < g->nranks; r++) {
		size_t h = strlen(g->ranks[r].host), d =
			strlen(device_name(g->ranks, r));
		wh = h > wh ? h : wh;
		wd = d > wd ? d : wd;
	}
	if (c->opt.verbose) {
		printf("#\n# %4s  %-5s  %-6s  %-17s %5s %10s %10s %10s %10s "
		       "%9s %6s %9s %9s\n", "rank", "dtype", "shape",
		       "m x n x k", "iters", "time_us", "min_us", "max_us",
		       "tflops", "checked", "wrong", "max_error",
		       "tolerance");
		for (size_t i = 0; i < g->nrows; i++) {
			const struct sd_gemm_row *r = &g->rows[i];
			char mnk[64];
			snprintf(mnk, sizeof(mnk), "%llux%llux%llu",
				 (unsigned long long)r->m,
				 (unsigned long long)r->n,
				 (unsigned long long)r->k);
			const char *tn =
				sd_gemm_type_name((enum sd_gemm_type)r->type);
			if (r->status == SD_GEMM_NOT_HERE) {
				printf("  %4d  %-5s  %-6s  %-17s not on this "
				       "device: %s\n", r->rank, tn, r->shape,
				       mnk, r->note);
				continue;
			}
			printf("  %4d  %-5s  %-6s  %-17s %5d %10.1f %10.1f "
			       "%10.1f %10.4f %9llu %6llu %9.2e %9.2e%s\n",
			       r->rank, tn, r->shape, mnk, r->iters, r->time_us,
			       r->time_us_min, r->time_us_max, r->tflops,
			       (unsigned long long)r->checked,
			       (unsigned long long)r->wrong, r->max_error,
			       r->tolerance, r->best ? "  best" : "");
		}
	}
	printf("#\n# %4s  %-*s  %-*s  %-5s %12s  %-24s %9s %6s  %s\n", "rank",
	       (int)wh, "host", (int)wd, "device", "dtype", "best_tflops",
	       "best_shape", "checked", "wrong", "verdict");
	for (size_t i = 0; i < g->nv; i++) {
		const struct sd_gemm_verdict *v = &g->v[i];
		uint64_t checked = 0, wrong = 0;
		for (size_t k = 0; k < g->nrows; k++)
			if (g->rows[k].rank == v->rank &&
			    g->rows[k].type == (int)v->type) {
				checked += g->rows[k].checked;
				wrong += g->rows[k].wrong;
			}
		char shape[64] = "-", tf[32] = "-";
		if (v->best_row >= 0) {
			const struct sd_gemm_row *r = &g->rows[v->best_row];
			snprintf(shape, sizeof(shape), "%s %llux%llux%llu",
				 r->shape, (unsigned long long)r->m,
				 (unsigned long long)r->n,
				 (unsigned long long)r->k);
			snprintf(tf, sizeof(tf), "%.4f", v->best_tflops);
		}
		char nc[24] = "-", nw[24] = "-";
		if (v->best_row >= 0) {
			snprintf(nc, sizeof(nc), "%llu",
				 (unsigned long long)checked);
			snprintf(nw, sizeof(nw), "%llu",
				 (unsigned long long)wrong);
		}
		printf("  %4d  %-*s  %-*s  %-5s %12s  %-24s %9s %6s  %s\n",
		       v->rank, (int)wh, g->ranks[v->rank].host, (int)wd,
		       device_name(g->ranks, v->rank),
		       sd_gemm_type_name(v->type), tf, shape, nc, nw,
		       v->status);
	}
	/* per type: the peers' median and the peak it was judged by */
	for (int t = 0; t < SD_GEMM_TYPE_COUNT; t++) {
		const struct sd_gemm_verdict *first = NULL;
		int ran = 0;
		for (size_t i = 0; i < g->nv; i++)
			if (g->v[i].type == (enum sd_gemm_type)t) {
				if (!first)
					first = &g->v[i];
				ran += g->v[i].best_row >= 0;
			}
		if (!first)
			continue;
		const char *tn = sd_gemm_type_name((enum sd_gemm_type)t);
		if (!ran) {
			printf("# %s\n", first->reason);
			continue;
		}
		const struct sd_gemm_verdict *pm = NULL;
		for (size_t i = 0; i < g->nv && !pm; i++)
			if (g->v[i].type == (enum sd_gemm_type)t &&
			    g->v[i].peers > 1)
				pm = &g->v[i];
		printf("# %s: ", tn);
		if (pm && c->opt.expect.peers > 0)
			printf("peer median %.4f TFLOPs (%d devices of its "
			       "name), each judged at %.2f of it", 
			       pm->peer_median_tflops, pm->peers,
			       c->opt.expect.peers);
		else
			printf("no peers to compare with");
		double peak = first->peak_tflops;
		if (peak > 0)
			printf("; peak %.4g TFLOPs, judged at %.2f of it", peak,
			       c->opt.expect.peak_fraction);
		else
			printf("; peak unknown (give it with --peak-tflops)");
		printf("\n");
	}
	for (size_t i = 0; i < g->nv; i++)
		if (strcmp(g->v[i].status, "failed") == 0)
			printf("# FAILED rank %d (%s) %s: %s\n", g->v[i].rank,
			       g->ranks[g->v[i].rank].host,
			       device_name(g->ranks, g->v[i].rank),
			       g->v[i].reason);
}

/* --------------------------------------------------------- recording */

/* The measured rows among rows[0..n) to the record. */
static void record_rows(struct gemm_ctx *c, const struct sd_rank_info *ranks,
			const struct sd_gemm_row *rows, size_t n)
{
	struct sd_gemm_result_info *ri = calloc(n + 1, sizeof(*ri));
	size_t nri = 0;
	if (!ri) {
		fprintf(stderr, "shakedown: warning: out of memory: the gemm "
			"rows were not recorded\n");
		return;
	}
	for (size_t i = 0; i < n; i++) {
		const struct sd_gemm_row *r = &rows[i];
		if (r->status != SD_GEMM_MEASURED)
			continue;
		ri[nri++] = (struct sd_gemm_result_info){
			.rank = r->rank, .host = ranks[r->rank].host,
			.device = device_name(ranks, r->rank),
			.dtype = sd_gemm_type_name((enum sd_gemm_type)r->type),
			.shape = r->shape, .m = r->m, .n = r->n, .k = r->k,
			.iters = r->iters, .warmup_iters = r->warmup_iters,
			.time_us = r->time_us, .time_us_min = r->time_us_min,
			.time_us_max = r->time_us_max, .tflops = r->tflops,
			.checked = r->checked, .wrong = r->wrong,
			.max_error = r->max_error, .tolerance = r->tolerance,
			.best = r->best, .impl = r->impl };
	}
	struct sd_event ev = { .kind = SD_EVENT_GEMM_RESULTS,
			       .gemm_results = ri, .n = nri };
	sd_sinks_emit(&c->sinks, &ev);
	free(ri);
}

/* The rows and verdicts of the run, the failing hosts as suspects. */
static void record(struct gemm_ctx *c, const struct gemm_outcome *g)
{
	struct sd_gemm_device_info *di = calloc(g->nv + 1, sizeof(*di));
	char (*shapes)[64] = calloc(g->nv + 1, sizeof(*shapes));
	struct sd_suspect_info *sus = calloc(g->nv + 1, sizeof(*sus));
	struct sd_buf *why = calloc(g->nv + 1, sizeof(*why));
	size_t ns = 0;
	if (!di || !shapes || !sus || !why) {
		fprintf(stderr, "shakedown: warning: out of memory: the gemm "
			"rows were not recorded\n");
		goto out;
	}
	for (size_t i = 0; i < g->nv; i++) {
		const struct sd_gemm_verdict *v = &g->v[i];
		int has = v->best_row >= 0;
		if (has) {
			const struct sd_gemm_row *r = &g->rows[v->best_row];
			snprintf(shapes[i], sizeof(shapes[i]),
				 "%s %llux%llux%llu", r->shape,
				 (unsigned long long)r->m,
				 (unsigned long long)r->n,
				 (unsigned long long)r->k);
		}
		di[i] = (struct sd_gemm_device_info){
			.rank = v->rank, .host = g->ranks[v->rank].host,
			.device = device_name(g->ranks, v->rank),
			.dtype = sd_gemm_type_name(v->type),
			.status = v->status,
			.best_tflops = has ? v->best_tflops : NAN,
			.best_shape = has ? shapes[i] : NULL,
			.peer_median_tflops = v->peers > 1
						      ? v->peer_median_tflops
						      : NAN,
			.peers = v->peers,
			.peak_tflops = v->peak_tflops > 0 ? v->peak_tflops : NAN,
			.reason = v->reason };
		if (strcmp(v->status, "failed") != 0)
			continue;
		/* one suspect per host, every failing device of it named */
		size_t k = 0;
		while (k < ns && strcmp(sus[k].subject,
					g->ranks[v->rank].host) != 0)
			k++;
		if (k == ns) {
			sus[ns++] = (struct sd_suspect_info){
				.kind = "node", .subject = g->ranks[v->rank].host,
				.hosts = g->ranks[v->rank].host, .bad_node = 1 };
		}
		sd_buf_printf(&why[k], "%sgemm rank %d %s: %s",
			      why[k].len ? "; " : "", v->rank,
			      device_name(g->ranks, v->rank), v->reason);
	}
	for (size_t k = 0; k < ns; k++)
		sus[k].reason = why[k].data ? why[k].data : "gemm";
	record_rows(c, g->ranks, g->rows, g->nrows);
	struct sd_event ev = { .kind = SD_EVENT_GEMM_DEVICES,
			       .gemm_devices = di, .n = g->nv };
	sd_sinks_emit(&c->sinks, &ev);
	if (ns) {
		ev = (struct sd_event){ .kind = SD_EVENT_SUSPECTS,
					.suspects = sus, .n = ns };
		sd_sinks_emit(&c->sinks, &ev);
	}
out:
	for (size_t k = 0; why && k < g->nv + 1; k++)
		sd_buf_free(&why[k]);
	free(why);
	free(sus);
	free(shapes);
	free(di);
}

/* The sweep as recorded text: what every rank ran, so that runs with
 * the same settings have the same plan hash. */
static void sweep_text(const struct gemm_options *o,
		       const struct sd_gemm_shape *shapes, int nshapes,
		       const char *backend, struct sd_buf *b)
{
	sd_buf_printf(b, "# shakedown gemm\nbackend: %s\ndtypes: [", backend);
	for (int t = 0, n = 0; t < SD_GEMM_TYPE_COUNT; t++)
		if (o->types & (1u << t))
			sd_buf_printf(b, "%s%s", n++ ? ", " : "",
				      sd_gemm_type_name((enum sd_gemm_type)t));
	sd_buf_printf(b, "]\nshapes:\n");
	for (int i = 0; i < nshapes; i++)
		sd_buf_printf(b, "  - {name: %s, m: %llu, n: %llu, k: %llu}\n",
			      shapes[i].name, (unsigned long long)shapes[i].m,
			      (unsigned long long)shapes[i].n,
			      (unsigned long long)shapes[i].k);
	sd_buf_printf(b, "iters: %ld\nwarmup_iters: %ld\nseed: %u\n"
		      "expect: {peers: %g, peak_fraction: %g}\n", o->iters,
		      o->warmup, GEMM_SEED, o->expect.peers,
		      o->expect.peak_fraction);
}

/* Rank 0: judge every device; the failing ones' hosts as a hostlist.
 * 0, or -1 when out of memory. */
static int judge_all(struct gemm_ctx *c, struct gemm_outcome *g)
{
	const char **devs = calloc((size_t)g->nranks + 1, sizeof(*devs));
	if (!devs)
		return -1;
	for (int r = 0; r < g->nranks; r++)
		devs[r] = device_name(g->ranks, r);
	int rc = sd_gemm_judge(g->rows, g->nrows, devs, g->nranks,
			       &c->opt.expect, &g->v, &g->nv);
	free(devs);
	if (rc)
		return -1;
	const char **bad = calloc(g->nv + 1, sizeof(*bad));
	if (!bad)
		return -1;
	int nbad = 0;
	for (size_t i = 0; i < g->nv; i++) {
		const struct sd_gemm_verdict *v = &g->v[i];
		g->measured += v->best_row >= 0;
		if (strcmp(v->status, "failed") == 0) {
			g->failed++;
			g->wrong_math += v->wrong_math;
			bad[nbad++] = g->ranks[v->rank].host;
		}
	}
	g->bad_hosts = sd_hostlist_compress(bad, nbad);
	free(bad);
	return g->bad_hosts ? 0 : -1;
}

/* Rank 0 at the end: judge what was measured (all of the sweep, or what
 * it completed before it stopped with sweep_status and why), print,
 * record, and say how the run ended.  Returns the exit status. */
static int finish(struct gemm_ctx *c, struct gemm_outcome *g,
		  int sweep_status, const char *why, const char *uuid)
{
	const struct gemm_options *o = &c->opt;
	char msg[2048] = ""; /* with the journal's sentence whole */
	int status = sweep_status, judged = 0;
	if (g->rows && judge_all(c, g) == 0)
		judged = 1;
	else if (!status) {
		status = SD_EXIT_ENV;
		why = "out of memory judging the results";
	}
	if (judged) {
		if (o->format == GEMM_JSON) {
			for (size_t i = 0; i < g->nrows; i++)
				print_row_json(uuid, g->ranks, &g->rows[i]);
			for (size_t i = 0; i < g->nv; i++)
				print_verdict_json(uuid, g->ranks, g->rows,
						   &g->v[i]);
		} else {
			print_text(c, g);
		}
	}
	/* the failing devices by name: "rank 1 (node03) fp32, ..." */
	char which[300] = "";
	size_t wl = 0;
	for (size_t i = 0; g->v && i < g->nv && wl < sizeof(which); i++) {
		const struct sd_gemm_verdict *v = &g->v[i];
		if (strcmp(v->status, "failed") != 0 ||
		    (g->wrong_math && !v->wrong_math))
			continue;
		wl += (size_t)snprintf(which + wl, sizeof(which) - wl,
				       "%srank %d (%s) %s", wl ? ", " : "",
				       v->rank, g->ranks[v->rank].host,
				       sd_gemm_type_name(v->type));
	}
	if (status) {
		snprintf(msg, sizeof(msg), "%s", why ? why : "the sweep failed");
	} else if (g->wrong_math) {
		status = SD_EXIT_CHECK;
		snprintf(msg, sizeof(msg), "wrong math: %s; bad nodes: %s",
			 which, g->bad_hosts);
	} else if (!g->measured) {
		status = SD_EXIT_USAGE;
		snprintf(msg, sizeof(msg), "nothing was measured (%s); ask "
			 "--dtype for a type these devices have",
			 g->nv ? g->v[0].reason : "no rows");
	} else if (g->failed) {
		status = SD_EXIT_VERDICT;
		snprintf(msg, sizeof(msg), "below %s expectations: %s; bad "
			 "nodes: %s", g->failed == 1 ? "its" : "their", which,
			 g->bad_hosts);
	}
	if (msg[0] && !sweep_status)
		fprintf(stderr, "shakedown: %s\n", msg);
	const char *st = status == SD_EXIT_OK ? "passed"
			 : status == SD_EXIT_CANCELLED ? "cancelled"
			 : status == SD_EXIT_CHECK || status == SD_EXIT_VERDICT ||
				   status == SD_EXIT_USAGE
			     ? "failed" : "error";
	struct sd_sink *db = c->db_sink >= 0 ? &c->sinks.v[c->db_sink] : NULL;
	char lack[1400] = "";
	if (db) {
		if (judged)
			record(c, g);
		/* never say recorded what was not (as `shakedown run`) */
		sd_db_sink_flush(db);
		if (sd_db_sink_incomplete(db, lack, sizeof(lack)) &&
		    (status == SD_EXIT_OK || status == SD_EXIT_VERDICT)) {
			status = SD_EXIT_RECORD;
			st = "error";
			size_t u = strlen(msg);
			snprintf(msg + u, sizeof(msg) - u, "%s%s",
				 u ? "; " : "", lack);
		}
		struct sd_run_end e = { .status = st, .exit_status = status,
					.message = msg[0] ? msg : NULL,
					.finished_at = sd_wall_now() };
		struct sd_event ev = { .kind = SD_EVENT_RUN_END, .end = &e };
		sd_sinks_emit(&c->sinks, &ev);
	}
	FILE *out = o->format == GEMM_JSON ? stderr : stdout;
	if (o->format == GEMM_TEXT && judged) {
		int passed = 0, skipped = 0;
		for (size_t i = 0; i < g->nv; i++) {
			passed += strcmp(g->v[i].status, "passed") == 0;
			skipped += strcmp(g->v[i].status, "skipped") == 0;
		}
		printf("# devices by type: %d passed, %d failed, %d not on "
		       "their device; run %s\n", passed, g->failed, skipped,
		       st);
	}
	if (db && sd_db_sink_incomplete(db, lack, sizeof(lack)))
		fprintf(stderr, "shakedown: %s\n", lack);
	else if (db)
		fprintf(out, "# results recorded in %s (run %s); '%s "
			"report' shows them\n", sd_db_sink_path(db), uuid,
			sd_invoked_as);
	return status;
}

/* After an entry: the worst exit status of any rank (on rank 0; another
 * rank learns only that the ranks stop, and returns its own or 3: rank
 * 0's word is what every rank returns).  Through the control plane: a rank
 * lost, or one that does not end the entry within -T, is named and
 * recorded by the guard, *lost set, and its exit status returned. */
static int agree_entry(struct gemm_ctx *c, int mine,
			const struct sd_gemm_row *row, int *lost)
{
	struct sd_bootstrap *bs = &c->boot->bs;
	struct entry_word v = { .status = mine, .measured = row != NULL };
	struct entry_word *all = NULL;
	int worst = 0, stop = 0;
	if (row)
		v.row = *row;
	if (bs->rank == 0 &&
	    !(all = calloc((size_t)bs->size, sizeof(*all)))) {
		sd_rank_error(bs, "gemm", "out of memory");
		return SD_EXIT_ENV;
	}
	int rc = sd_job_guard_step(&c->guard, &v, sizeof(v), all, mine != 0,
				   &stop);
	if (rc) {
		free(all);
		*lost = 1;
		return rc;
	}
	for (int r = 0; bs->rank == 0 && r < bs->size; r++) {
		if (all[r].status > worst)
			worst = all[r].status;
		if (!all[r].measured)
			continue;
		/* kept as it comes: a run stopped later still records it */
		pthread_mutex_lock(&c->kept_mu);
		if (c->nkept == c->kept_cap) {
			size_t cap = c->kept_cap ? 2 * c->kept_cap : 64;
			void *p = realloc(c->kept, cap * sizeof(*c->kept));
			if (p) {
				c->kept = p;
				c->kept_cap = cap;
			}
		}
		if (c->nkept < c->kept_cap)
			c->kept[c->nkept++] = all[r].row;
		pthread_mutex_unlock(&c->kept_mu);
	}
	free(all);
	if (bs->rank != 0 && stop)
		worst = mine ? mine : SD_EXIT_ENV;
	return worst;
}

/* Every rank's sweep, at the same moment; the rows of this rank.  *lost:
 * a rank was lost (the ranks can no longer exchange anything). */
static int sweep(struct gemm_ctx *c, int *lost, char *err, size_t errlen)
{
	const struct gemm_options *o = &c->opt;
	struct sd_bootstrap *bs = &c->boot->bs;
	struct sd_gemm_sweep sw = {
		.shapes = c->shapes, .nshapes = c->nshapes, .types = o->types,
		.base = { .seed = GEMM_SEED, .warmup_iters = (int)o->warmup,
			  .iters = (int)o->iters,
			  .timeout_ms = o->job.timeout_ms },
		.fn = c->plugin.ops->gemm ? backend_gemm : sd_gemm_cpu,
		.ctx = c->plugin.ops->gemm ? (void *)c : NULL,
		.fault = &c->fault, .rank = bs->rank };
	c->nmine = 0;
	if (bs->barrier(bs)) {
		sd_rank_error(bs, "bootstrap", sd_boot_error(c->boot,
							     "barrier failed"));
		*lost = 1;
		return SD_EXIT_TIMEOUT;
	}
	/* every rank walks the same entries, each agreed on, so that a
	 * rank that was cancelled meets the others at the same entry */
	int entries = sd_gemm_sweep_entries(&sw);
	for (int e = 0; e < entries; e++) {
		int rc = SD_OK;
		struct sd_gemm_row *row = &c->mine[c->nmine];
		char what[100];
		snprintf(what, sizeof(what), "gemm entry %d of %d", e + 1,
			 entries);
		/* entered through the control plane: a rank that does not
		 * end it within -T, or is lost, is named */
		int gs = sd_job_guard_enter(&c->guard, o->job.timeout_ms,
					    o->job.timeout_ms, what);
		if (gs) {
			*lost = 1;
			return gs;
		}
		if (cancel_flag)
			rc = SD_ERR_CANCELLED;
		else if (!sd_gemm_sweep_next(&sw, row, &rc, err, errlen))
			break;
		if (!rc)
			c->nmine++;
		else if (rc != SD_ERR_CANCELLED)
			sd_rank_error(bs, "gemm", err);
		int mine_status = rc == SD_ERR_CANCELLED ? SD_EXIT_CANCELLED
				  : rc ? sd_exit_for_status(rc)
				       : SD_EXIT_OK;
		/* the ranks agree after every entry: the next one starts
		 * together, and a failure stops them all */
		int worst = agree_entry(c, mine_status, rc ? NULL : row, lost);
		if (worst)
			return worst;
	}
	return SD_EXIT_OK;
}

/* The guard's end of a stopped run (rank 0: a verdict, a signal): the
 * named ranks' nodes as suspects, and the run's end. */
static void guard_record_end(void *arg, int exit_status, const char *st,
			     const char *msg, const struct sd_suspect_info *sus,
			     size_t n)
{
	struct gemm_ctx *c = arg;
	/* the products every rank finished before the stop: measured, not
	 * judged (a device's verdict needs the whole sweep) */
	pthread_mutex_lock(&c->kept_mu);
	if (c->nkept && c->ranks)
		record_rows(c, c->ranks, c->kept, c->nkept);
	pthread_mutex_unlock(&c->kept_mu);
	if (n) {
		struct sd_event ev = { .kind = SD_EVENT_SUSPECTS,
				       .suspects = sus, .n = n };
		sd_sinks_emit(&c->sinks, &ev);
	}
	struct sd_run_end e = { .status = st, .exit_status = exit_status,
				.message = msg, .finished_at = sd_wall_now() };
	struct sd_event ev = { .kind = SD_EVENT_RUN_END, .end = &e };
	sd_sinks_emit(&c->sinks, &ev);
}

/* The guard stops the backend: a rank inside a collective returns. */
static void guard_stop(void *arg)
{
	struct gemm_ctx *c = arg;
	if (c->plugin.ops && c->plugin.ops->abort && c->comm)
		c->plugin.ops->abort(c->comm);
}

/* Signals, the writers' defaults, the bootstrap and a planted start-up
 * fault.  0, or the exit status (nothing to tear down yet). */
static int start_rank(struct gemm_ctx *c)
{
	c->db_sink = -1;
	c->sinks.warn = sd_job_warn;
	pthread_mutex_init(&c->kept_mu, NULL);
	c->guard = (struct sd_job_guard){
		.record_end = guard_record_end, .stop = guard_stop, .arg = c,
		.cut_short = "a product was cut short mid-way",
		.kept = "; the products every rank finished before it are "
			"kept" };
	sd_job_guard_watch(&c->guard);
	int status = sd_job_rank_open(&c->boot, sd_job_on_signal, &c->fault);
	c->guard.boot = c->boot;
	return status;
}

/* The backend, the sweep (the same on every rank; the backend says
 * where it runs) with the planted fault's fit, and who is who: a device
 * without a gemm slot refused.  0, or the exit status every rank stops
 * with. */
static int open_sweep(struct gemm_ctx *c)
{
	struct gemm_options *o = &c->opt;
	struct sd_bootstrap *bs = &c->boot->bs;
	char err[1024] = "";
	int rc, status = SD_EXIT_ENV;
	struct sd_rank_info me;
	/* the backend and its world communicator, as `run` builds them */
	struct sd_comm_config cfg = { .timeout_ms = o->job.timeout_ms,
				      .iface = o->job.iface };
	if ((status = sd_job_backend_open(c->boot, o->job.backend, &cfg, NULL,
					  NULL, &c->plugin, &c->comm)) ||
	    (status = sd_job_guard_start(&c->guard, o->job.timeout_ms)))
		return status;

	/* the sweep: the same on every rank (the backend says where) */
	apply_defaults(o, c->plugin.ops->gemm != NULL);
	c->nshapes = sd_gemm_shapes(o->sizes, o->nsizes, o->width, o->tokens,
				 c->shapes, SD_GEMM_MAX_SHAPES);
	rc = SD_OK;
	if (c->nshapes <= 0) {
		if (bs->rank == 0)
			fprintf(stderr, "shakedown gemm: %s\n", c->nshapes < 0
				? "a shape is too large: keep every side of "
				  "--sizes, --width x 4 and --tokens at most "
				  "65536"
				: "nothing to measure: give --sizes or --width");
		rc = SD_ERR_INVALID;
	} else if (sd_fault_fits(&c->fault, SD_FAULT_IN_GEMM, bs->size,
				 sd_gemm_check_count(c->shapes[0].m, c->shapes[0].n,
						     c->shapes[0].k),
				 err, sizeof(err)) ||
		   sd_fault_fits_entries(&c->fault,
					 sd_gemm_sweep_entries(&(struct sd_gemm_sweep){
						 .nshapes = c->nshapes,
						 .types = c->opt.types }),
					 err, sizeof(err))) {
		if (bs->rank == 0)
			fprintf(stderr, "shakedown: SHAKEDOWN_FAULT: %s\n", err);
		rc = SD_ERR_INVALID;
	}
	if ((status = sd_agree(c->boot, rc ? sd_exit_for_status(rc) : 0)))
		return status;

	/* who is who */
	sd_job_describe(c->boot, &c->plugin, c->comm, &me);
	rc = SD_OK;
	if (!c->plugin.ops->gemm && me.dev.pci_bus_id[0]) {
		/* a device of its own but no slot: the CPU's numbers would
		 * pass for the device's */
		snprintf(err, sizeof(err), "the %s backend (%.600s) has no gemm slot "
			 "for its device %s; rebuild it with cuBLAS (configure "
			 "says whether it found it)", c->plugin.ops->name,
			 c->plugin.path, me.dev.name);
		if (bs->local_rank == 0)
			sd_rank_error(bs, "", err);
		rc = SD_ERR_BACKEND;
	} else if (!c->plugin.ops->gemm) {
		/* the CPU path: what multiplies, in the record */
		snprintf(me.dev.transport, sizeof(me.dev.transport), "%.95s",
			 sd_gemm_cpu_impl());
	}
	if ((status = sd_agree(c->boot, rc ? sd_exit_for_status(rc) : 0)))
		return status;
	if (!(c->ranks = sd_job_exchange(c->boot, &me))) {
		return SD_EXIT_ENV;
	}
	return 0;
}

/* Rank 0's header of a text run: where, what multiplies, the sweep. */
static void print_header(struct gemm_ctx *c)
{
	const struct gemm_options *o = &c->opt;
	struct sd_bootstrap *bs = &c->boot->bs;
	char *hl = sd_job_hostlist(c->ranks, bs->size);
	printf("# shakedown gemm: %d rank%s on %s, backend %s: "
	       "%s\n", bs->size, bs->size == 1 ? "" : "s",
	       hl ? hl : "?", c->plugin.ops->name,
	       c->plugin.ops->gemm
		       ? "each rank's device, through the "
			 "backend's gemm slot"
		       : c->ranks[0].dev.transport);
	printf("# sweep:");
	for (int t = 0, n = 0; t < SD_GEMM_TYPE_COUNT; t++)
		if (o->types & (1u << t))
			printf("%s%s", n++ ? "," : " ",
			       sd_gemm_type_name(
				       (enum sd_gemm_type)t));
	int sq = 0;
	for (int i = 0; i < c->nshapes; i++)
		if (strcmp(c->shapes[i].name, "square") == 0)
			printf("%s %llu", sq++ ? "" : "; square",
			       (unsigned long long)c->shapes[i].m);
	if (o->width)
		printf("; width %llu over %llu tokens:",
		       (unsigned long long)o->width,
		       (unsigned long long)o->tokens);
	for (int i = 0, n = 0; i < c->nshapes; i++)
		if (strcmp(c->shapes[i].name, "square") != 0)
			printf("%s %s %llux%llux%llu",
			       n++ ? "," : "", c->shapes[i].name,
			       (unsigned long long)c->shapes[i].m,
			       (unsigned long long)c->shapes[i].n,
			       (unsigned long long)c->shapes[i].k);
	printf("\n# each product (m x n x k): %ld warm-up and "
	       "%ld timed calls, their median; checked against "
	       "a reference in double\n", o->warmup, o->iters);
	fflush(stdout);
	free(hl);
}

/* Rank 0's writer and the run's first record, every rank agreeing, and
 * the header of a text run.  0, or the exit status. */
static int begin_record(struct gemm_ctx *c)
{
	struct gemm_options *o = &c->opt;
	struct sd_bootstrap *bs = &c->boot->bs;
	char err[1024] = "";
	int rc, status = SD_EXIT_ENV;
	/* rank 0's writer, before anything is measured */
	rc = SD_OK;
	sd_uuid4(c->uuid);
	sweep_text(o, c->shapes, c->nshapes, c->plugin.ops->name, &c->text);
	if (bs->rank == 0) {
		struct sd_sink *next = &c->sinks.v[c->sinks.n];
		rc = sd_db_sink_open(o->job.db, c->cmdline, next, err,
				     sizeof(err));
		if (rc)
			fprintf(stderr, "shakedown: %s\n", err);
		else if (next->ops) {
			const char *note = sd_db_sink_note(next);
			if (note)
				fprintf(stderr, "shakedown: note: %s\n", note);
			c->db_sink = c->sinks.n++;
		}
		if (!c->text.data)
			rc = SD_ERR_NOMEM;
	}
	if ((status = sd_agree(c->boot, rc ? sd_exit_for_status(rc) : 0)))
		return status;
	if (bs->rank == 0) {
		char hash[17];
		snprintf(hash, sizeof(hash), "%016llx", (unsigned long long)
			 sd_fnv1a(SD_FNV_INIT, c->text.data, c->text.len));
		struct sd_run_info info;
		sd_job_run_info(&info, c->cmdline, c->boot, &c->plugin,
				c->ranks);
		info.plan_text = c->text.data;
		info.plan_hash = hash;
		info.plan_name = "gemm";
		info.run_kind = "gemm";
		sd_strlcpy(info.uuid, c->uuid, sizeof(info.uuid));
		struct sd_event ev = { .kind = SD_EVENT_RUN_BEGIN, .run = &info };
		sd_sinks_emit(&c->sinks, &ev);
		if (o->format == GEMM_TEXT)
			print_header(c);
	}
	return 0;
}

/* Rank 0: every rank's rows judged, printed and recorded; the exit
 * status every rank returns (sd_job_guard_finish's record). */
static int rank0_finish(void *arg)
{
	struct gemm_ctx *c = arg;
	struct sd_bootstrap *bs = &c->boot->bs;
	int sweep_status = c->sweep_status;
	const char *why = c->why;
	size_t total = 0;
	for (int r = 0; r < bs->size; r++)
		total += c->lens[r] / sizeof(struct sd_gemm_row);
	c->g.ranks = c->ranks;
	c->g.nranks = bs->size;
	c->g.rows = calloc(total + 1, sizeof(*c->g.rows));
	for (int r = 0; c->g.rows && r < bs->size; r++) {
		memcpy(c->g.rows + c->g.nrows, c->all_rows + c->offs[r],
		       c->lens[r]);
		c->g.nrows += c->lens[r] / sizeof(struct sd_gemm_row);
	}
	if (!c->g.rows) {
		sweep_status = SD_EXIT_ENV;
		why = "out of memory gathering the results";
	}
	if (cancel_flag && !sweep_status) {
		sweep_status = SD_EXIT_CANCELLED;
		why = "cancelled by a signal; completed measurements are kept";
	}
	return finish(c, &c->g, sweep_status, why, c->uuid);
}

/* The sweep, every rank at once; rank 0 gathers every rank's rows,
 * judges, prints and records; every rank returns rank 0's word.  Returns
 * the exit status. */
static int run_sweep(struct gemm_ctx *c)
{
	struct sd_bootstrap *bs = &c->boot->bs;
	char err[1024] = "";
	const char *why = NULL;
	/* the sweep, every rank at once */
	size_t cap = (size_t)c->nshapes * SD_GEMM_TYPE_COUNT;
	c->mine = calloc(cap ? cap : 1, sizeof(*c->mine));
	int lost = 0;
	int sweep_status = c->mine ? sweep(c, &lost, err, sizeof(err))
				   : SD_EXIT_ENV;
	if (!c->mine)
		sd_rank_error(bs, "gemm", "out of memory");
	if (lost) {
		return sweep_status;
	}
	if (sweep_status == SD_EXIT_CANCELLED)
		why = "cancelled by a signal; completed measurements are kept";
	else if (sweep_status)
		why = "a rank could not measure (see its message); completed "
		      "measurements are kept";

	/* rank 0 gathers every rank's rows, whatever the sweep's end */
	if (sd_bootstrap_allgatherv(bs, c->mine ? (const void *)c->mine : "",
				    c->nmine * sizeof(*c->mine), &c->all_rows, &c->lens,
				    &c->offs)) {
		sd_rank_error(bs, "bootstrap: gathering the results",
			      sd_boot_error(c->boot, "failed"));
		return SD_EXIT_ENV;
	}
	/* rank 0 judges, prints and records while the others wait for its
	 * word (as long as a locked database may take) */
	c->sweep_status = sweep_status;
	c->why = why;
	return sd_job_guard_finish(&c->guard, c->opt.job.timeout_ms,
				   rank0_finish, c);
}

/* The record of a run stopped before rank 0 could finish, and the
 * teardown.  Returns the exit status, or stdout's failure. */
static int close_rank(struct gemm_ctx *c, int status)
{
	/* the control plane's thread joined, and a run stopped before rank
	 * 0 could finish (a broken bootstrap, a launcher gone) recorded so;
	 * after finish() the first end of a run is its record */
	status = sd_job_guard_close(&c->guard, status);
	sd_sinks_close(&c->sinks);
	c->db_sink = -1;
	sd_job_close(&c->boot, &c->plugin, &c->comm);
	free(c->ranks);
	free(c->mine);
	pthread_mutex_lock(&c->kept_mu);
	free(c->kept);
	c->kept = NULL;
	c->nkept = c->kept_cap = 0;
	pthread_mutex_unlock(&c->kept_mu);
	free(c->all_rows);
	free(c->lens);
	free(c->offs);
	free(c->g.rows);
	free(c->g.v);
	free(c->g.bad_hosts);
	sd_buf_free(&c->text);
	int out_rc = sd_finish_stdout();
	return status ? status : out_rc;
}

static int gemm_main(void *arg)
{
	struct gemm_ctx *c = arg;
	int status = start_rank(c);
	if (status)
		return status;
	if (!(status = open_sweep(c)) && !(status = begin_record(c)))
		status = run_sweep(c);
	return close_rank(c, status);
}

int cmd_gemm(int argc, char **argv)
{
	static struct gemm_ctx ctx;
	memset(&ctx, 0, sizeof(ctx));
	sd_job_options_init(&ctx.opt.job, GEMM_TIMEOUT_MS);
	ctx.opt.iters = -1;
	ctx.opt.warmup = -1;
	ctx.opt.expect.peers = 0.8;
	ctx.opt.expect.peak_fraction = 0.5;
	int rc = parse_options(argc, argv, &ctx.opt);
	if (rc >= 0)
		return rc;
	if ((rc = sd_job_fault(&ctx.fault)))
		return rc;
	sd_command_line(argc, argv, ctx.cmdline, sizeof(ctx.cmdline));
	return sd_job_launch("gemm", ctx.opt.job.local_ranks,
			     ctx.opt.job.backend, ctx.opt.job.timeout_ms + 5000,
			     gemm_main, &ctx);
}
