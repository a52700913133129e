/*
 * job_options.h - the options every command that starts ranks shares:
 * --local, --backend, --iface and --timeout, and --db for those that
 * record.  One row and one check each; which a command takes is its
 * flags in the command table (commands.h).
 */
#ifndef SD_JOB_OPTIONS_H
#define SD_JOB_OPTIONS_H

#include <getopt.h>
#include <stddef.h>

/* The shared options' values after parsing. */
struct sd_job_options {
	int local_ranks;     /* --local N; 0: srun started this process */
	const char *backend; /* --backend NAME; "gloo" */
	const char *iface;   /* --iface NAME, else $SHAKEDOWN_IFACE */
	const char *db;	     /* --db PATH or "none"; NULL: the default */
	int timeout_ms;	     /* -T/--timeout SEC; the command's default */
	int timeout_set;     /* whether -T was given */
};

/* The getopt values of the shared long options (above any command's). */
enum sd_job_option_id {
	SD_JOB_OPT_LOCAL = 1000,
	SD_JOB_OPT_BACKEND,
	SD_JOB_OPT_IFACE,
	SD_JOB_OPT_DB,
};

/* The most rows sd_job_getopt_rows() adds before a command's own. */
#define SD_JOB_OPTION_ROWS 5

/* Defaults: backend "gloo", timeout_ms the command's own default. */
void sd_job_options_init(struct sd_job_options *j, int timeout_ms);

/*
 * The getopt_long rows of command CMD: the shared rows its flags name,
 * then its own (own ends with a zero row); rows holds max entries.
 * Returns rows, or NULL when max is too small (a programming error).
 */
struct option *sd_job_getopt_rows(const char *cmd, const struct option *own,
				  struct option *rows, size_t max);

/* The rows of a getopt array (its zero row too) */
#define SD_ROWS(a) (sizeof(a) / sizeof((a)[0]))

/* sd_job_getopt_rows() into an array ROWS of the caller's, of
 * SD_JOB_OPTION_ROWS + SD_ROWS(own) rows */
#define SD_JOB_ROWS(cmd, own, rows)                                            \
	sd_job_getopt_rows((cmd), (own), (rows), SD_ROWS(rows))

/*
 * Take option CH (with value ARG) when it is a shared one: 1 when taken,
 * 0 when CH is not a shared option, -1 when its value is wrong (err says
 * why).
 */
int sd_job_option(int ch, const char *arg, struct sd_job_options *j, char *err,
		  size_t errlen);

/*
 * sd_getopt() over rows (from sd_job_getopt_rows()) that takes the shared
 * options into j itself: the command's next own option, -1 at the end,
 * or SD_OPT_REFUSED with err saying why (a shared option's wrong value
 * among them).
 */
int sd_job_getopt(int argc, char **argv, const char *optstring,
		  const struct option *rows, struct sd_job_options *j,
		  char *err, size_t errlen);

/* After parsing: what the environment gives where no option did
 * ($SHAKEDOWN_IFACE). */
void sd_job_options_end(struct sd_job_options *j);

#endif
