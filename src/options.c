/*
 * options.c - the options of `shakedown run`: their defaults, parsing and
 * checks (see options.h).
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "commands.h"
#include "job_options.h"
#include "names.h"
#include "options.h"
#include "sink_text.h"
#include "ranks.h"
#include "tool.h"
#include "util.h"

void sd_run_options_init(struct sd_run_options *o)
{
	memset(o, 0, sizeof(*o));
	sd_job_options_init(&o->job, 0);
	o->format = SD_FORMAT_TABLE;
	o->progress = -1; /* check_options: whether stderr is a terminal */
}

/* The width of the terminal on stdout; 0 when stdout is no terminal or
 * its width is unknown. */
static int stdout_columns(void)
{
	struct winsize ws;
	long cols = 0;
	if (!isatty(STDOUT_FILENO))
		return 0;
	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		return ws.ws_col;
	const char *env = getenv("COLUMNS");
	if (env && sd_parse_int(env, 1, 100000, &cols) == 0)
		return (int)cols;
	return 0;
}

void cmd_run_usage(FILE *out)
{
	/* src/help/run.txt, which also gives shakedown(1) its OPTIONS OF RUN */
	sd_help_print(out, sd_help_run);
}

enum long_only {
	OPT_PLAN = 256, OPT_OP, OPT_ALGO,
	OPT_PER_ITER, OPT_NO_IN_PLACE, OPT_FORMAT, OPT_PROGRESS,
	OPT_NO_PROGRESS,
	OPT_UPLOAD, OPT_TOKEN_FILE, OPT_CACERT, OPT_SCOPE, OPT_BASELINE,
	OPT_DRAIN, OPT_RAW,
};

/* run's own options, after the shared ones (job_options.h) */
static const struct option own_options[] = {
	{ "plan", required_argument, NULL, OPT_PLAN },
	{ "op", required_argument, NULL, OPT_OP },
	{ "minbytes", required_argument, NULL, 'b' },
	{ "maxbytes", required_argument, NULL, 'e' },
	{ "stepfactor", required_argument, NULL, 'f' },
	{ "stepbytes", required_argument, NULL, 'i' },
	{ "iters", required_argument, NULL, 'n' },
	{ "warmup_iters", required_argument, NULL, 'w' },
	{ "datatype", required_argument, NULL, 'd' },
	{ "redop", required_argument, NULL, 'o' },
	{ "root", required_argument, NULL, 'r' },
	{ "algo", required_argument, NULL, OPT_ALGO },
	{ "scope", required_argument, NULL, OPT_SCOPE },
	{ "check", required_argument, NULL, 'c' },
	{ "average", required_argument, NULL, 'a' },
	{ "per-iter", no_argument, NULL, OPT_PER_ITER },
	{ "no-in-place", no_argument, NULL, OPT_NO_IN_PLACE },
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ "raw", no_argument, NULL, OPT_RAW },
	{ "progress", no_argument, NULL, OPT_PROGRESS },
	{ "no-progress", no_argument, NULL, OPT_NO_PROGRESS },
	{ "output-file", required_argument, NULL, 'J' },
	/* nccl-tests' spelling of it */
	{ "output_file", required_argument, NULL, 'J' },
	{ "upload", required_argument, NULL, OPT_UPLOAD },
	{ "token-file", required_argument, NULL, OPT_TOKEN_FILE },
	{ "cacert", required_argument, NULL, OPT_CACERT },
	{ "baseline", required_argument, NULL, OPT_BASELINE },
	{ "drain", no_argument, NULL, OPT_DRAIN },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 }
};

/* Validate a comma list of names with one of the *_from_name functions. */
static int check_list(const char *list, const char *what,
		      int (*check)(const char *, const char **))
{
	char copy[256], *save = NULL;
	if (strcmp(list, "all") == 0)
		return 0;
	sd_strlcpy(copy, list, sizeof(copy));
	for (char *s = strtok_r(copy, ",", &save); s;
	     s = strtok_r(NULL, ",", &save)) {
		const char *hint = NULL;
		if (check(s, &hint)) {
			if (sd_first_task())
				fprintf(stderr, "shakedown run: unknown %s '%s'"
					"%s%s%s\n", what, s,
					hint ? "; did you mean '" : "",
					hint ? hint : "", hint ? "'?" : "");
			return -1;
		}
	}
	return 0;
}

static int chk_op(const char *s, const char **h)
{
	enum sd_op v;
	return sd_op_from_name(s, &v, h);
}

static int chk_dtype(const char *s, const char **h)
{
	enum sd_dtype v;
	return sd_dtype_from_name(s, &v, h);
}

static int chk_redop(const char *s, const char **h)
{
	enum sd_redop v;
	return sd_redop_from_name(s, &v, h);
}

/* -b, -e or -i (ch): a size in bytes.  0, or SD_EXIT_USAGE (said). */
static int size_option(int ch, const char *arg, struct sd_run_options *o)
{
	uint64_t s;
	if (sd_parse_size(arg, &s) || s == 0)
		return sd_usage_error("run", "-%c '%s' is not a size; use a number "
			    "with an optional K, M or G suffix", ch, arg);
	if (s > SD_PLAN_MAX_BYTES)
		return sd_usage_error("run", "-%c '%s' is more than 1T, larger "
			    "than any buffer a rank can hold", ch, arg);
	if (ch == 'b') {
		o->plan.cfg.min_bytes = s;
		o->plan.set |= SD_SET_MIN_BYTES;
	} else if (ch == 'e') {
		o->plan.cfg.max_bytes = s;
		o->plan.set |= SD_SET_MAX_BYTES;
	} else {
		o->plan.cfg.step_bytes = s;
		o->plan.set |= SD_SET_STEP_BYTES;
	}
	return 0;
}

/* -f: the factor between sizes.  0, or SD_EXIT_USAGE (said). */
static int factor_option(const char *arg, struct sd_run_options *o)
{
	char *end;
	errno = 0;
	o->plan.cfg.step_factor = strtod(arg, &end);
	if (errno || *end || !(o->plan.cfg.step_factor > 1) ||
	    o->plan.cfg.step_factor > 1024)
		return sd_usage_error("run", "-f '%s' must be a factor above 1",
				      arg);
	o->plan.set |= SD_SET_STEP_FACTOR;
	return 0;
}

/* -n, -w or -c (ch): a count of iterations or check passes.  0, or
 * SD_EXIT_USAGE (said). */
static int count_option(int ch, const char *arg, struct sd_run_options *o)
{
	if (ch == 'n') {
		if (sd_parse_int(arg, 1, 1000000, &o->plan.cfg.iters))
			return sd_usage_error("run", "-n '%s' must be a number of "
				    "iterations from 1 to 1000000", arg);
		o->plan.set |= SD_SET_ITERS;
	} else if (ch == 'w') {
		if (sd_parse_int(arg, 0, 1000000, &o->plan.cfg.warmup))
			return sd_usage_error("run", "-w '%s' must be a number of "
				    "iterations from 0 to 1000000", arg);
		o->plan.set |= SD_SET_WARMUP;
	} else {
		if (sd_parse_int(arg, 0, 1000, &o->plan.cfg.check_passes))
			return sd_usage_error("run", "-c '%s' must be a number of check "
				    "passes from 0 to 1000", arg);
		o->plan.set |= SD_SET_CHECK;
	}
	return 0;
}

/* --format NAME.  0, or SD_EXIT_USAGE (said). */
static int format_option(const char *arg, struct sd_run_options *o)
{
	/* the output formats of run, by name */
	static const struct sd_name_row formats[] = {
		{ "table", SD_FORMAT_TABLE },
		{ "short", SD_FORMAT_SHORT },
		{ "deepspeed", SD_FORMAT_DEEPSPEED },
		{ "json", SD_FORMAT_JSON },
		{ NULL, 0 }
	};
	const char *hint = NULL;
	int f;
	if (sd_name_lookup(formats, arg, &f, &hint))
		return sd_usage_error("run", "--format '%s' must be table, "
			    "short, deepspeed or json%s%s%s", arg,
			    hint ? "; did you mean '" : "",
			    hint ? hint : "", hint ? "'?" : "");
	o->format = (enum sd_format)f;
	o->format_set = 1;
	return 0;
}

/* What the options say together, and what the environment gives where
 * no option did.  Returns -1 to go on, else SD_EXIT_USAGE (said). */
static int check_options(struct sd_run_options *o)
{
	unsigned both = SD_SET_MIN_BYTES | SD_SET_MAX_BYTES;
	if ((o->plan.set & both) == both &&
	    o->plan.cfg.min_bytes > o->plan.cfg.max_bytes)
		return sd_usage_error("run", "-b (%llu bytes) is larger than -e (%llu bytes)",
			    (unsigned long long)o->plan.cfg.min_bytes,
			    (unsigned long long)o->plan.cfg.max_bytes);
	both = SD_SET_STEP_BYTES | SD_SET_STEP_FACTOR;
	if ((o->plan.set & both) == both)
		return sd_usage_error("run", "-f and -i exclude each other; pick one");
	/* DeepSpeed's --raw has no meaning in the other tables */
	if (o->ds_raw && o->format != SD_FORMAT_DEEPSPEED)
		return sd_usage_error("run", "--raw is for --format deepspeed, which is not "
			    "given; add --format deepspeed or drop it");
	/* what only an upload uses, given without one, is a slip */
	if (!o->upload_url && (o->token_file || o->cacert) &&
	    !getenv("SHAKEDOWN_UPLOAD_URL"))
		return sd_usage_error("run", "%s is for --upload, which is not given; add "
			    "--upload URL or drop it",
			    o->token_file ? "--token-file" : "--cacert");
	if (!o->upload_url)
		o->upload_url = getenv("SHAKEDOWN_UPLOAD_URL");
	if (!o->token_file)
		o->token_file = getenv("SHAKEDOWN_TOKEN_FILE");
	/* a terminal narrower than the table gets its short form; a pipe or
	 * a file always the format asked for (the table by default) */
	int cols = o->format_set ? 0 : stdout_columns();
	if (cols > 0 && cols < SD_TABLE_COLS)
		o->format = SD_FORMAT_SHORT;
	if (o->progress < 0)
		o->progress = isatty(STDERR_FILENO);
	if (o->job.timeout_set) {
		o->plan.cfg.timeout_ms = o->job.timeout_ms;
		o->plan.set |= SD_SET_TIMEOUT;
	}
	sd_job_options_end(&o->job);
	return -1;
}

int sd_run_parse_options(int argc, char **argv, struct sd_run_options *o)
{
	int ch;
	long v;
	opterr = 0;
	optind = 1;
	char oerr[256];
	struct option rows[SD_JOB_OPTION_ROWS + SD_ROWS(own_options)];
	const struct option *opts = SD_JOB_ROWS("run", own_options, rows);
	while ((ch = sd_job_getopt(argc, argv, ":b:e:f:i:n:w:d:o:r:c:a:T:J:h",
				   opts, &o->job, oerr, sizeof(oerr))) != -1) {
		int rc = 0;
		switch (ch) {
		case SD_OPT_REFUSED:
			return sd_usage_error("run", "%s", oerr);
		case OPT_PLAN: o->plan_file = optarg; break;
		case OPT_OP:
			if (check_list(optarg, "op", chk_op))
				return SD_EXIT_USAGE;
			o->plan.ops = optarg;
			break;
		case 'b':
		case 'e':
		case 'i': rc = size_option(ch, optarg, o); break;
		case 'f': rc = factor_option(optarg, o); break;
		case 'n':
		case 'w':
		case 'c': rc = count_option(ch, optarg, o); break;
		case 'd':
			if (check_list(optarg, "data type", chk_dtype))
				return SD_EXIT_USAGE;
			o->plan.dtypes = optarg;
			break;
		case 'o':
			if (check_list(optarg, "reduction", chk_redop))
				return SD_EXIT_USAGE;
			o->plan.redops = optarg;
			break;
		case 'r':
			if (strcmp(optarg, "all") != 0 &&
			    sd_parse_int(optarg, 0, 1 << 24, &v))
				return sd_usage_error("run", "-r '%s' must be a rank or 'all'",
					    optarg);
			o->plan.roots = optarg;
			break;
		case OPT_ALGO: o->plan.algo = optarg; break;
		case OPT_SCOPE: o->plan.scope = optarg; break;
		case 'a':
			if (sd_combine_from_name(optarg, &o->plan.cfg.combine))
				return sd_usage_error("run", "-a '%s' must be avg, min, max or "
					    "rank0", optarg);
			o->plan.set |= SD_SET_COMBINE;
			break;
		case OPT_PER_ITER:
			o->plan.cfg.per_iter = 1;
			o->plan.set |= SD_SET_PER_ITER;
			break;
		case OPT_NO_IN_PLACE:
			o->plan.cfg.in_place = 0;
			o->plan.set |= SD_SET_IN_PLACE;
			break;
		case OPT_FORMAT: rc = format_option(optarg, o); break;
		case OPT_RAW: o->ds_raw = 1; break;
		case OPT_PROGRESS: o->progress = 1; break;
		case OPT_NO_PROGRESS: o->progress = 0; break;
		case 'J': o->json_file = optarg; break;
		case OPT_UPLOAD: o->upload_url = optarg; break;
		case OPT_TOKEN_FILE: o->token_file = optarg; break;
		case OPT_CACERT: o->cacert = optarg; break;
		case OPT_BASELINE: o->baseline = optarg; break;
		case OPT_DRAIN: o->drain = 1; break;
		case 'h':
			cmd_run_usage(stdout);
			return sd_finish_stdout();
		case ':':
		default:
			return sd_option_error("run", ch, argv);
		}
		if (rc)
			return rc;
	}
	if (optind < argc)
		return sd_usage_error("run", "unexpected argument '%s'; see 'shakedown help run'",
			    argv[optind]);
	return check_options(o);
}
