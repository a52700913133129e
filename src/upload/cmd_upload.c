/*
 * cmd_upload.c - `shakedown upload`: send a run's report to a collector,
 * send what waits in the outbox, or list the outbox.
 *
 *   shakedown upload RUN --url URL   one run (again, if it was sent before)
 *   shakedown upload --pending       every report not delivered yet
 *   shakedown upload --list [--all]  what waits, and why
 *
 * Exit statuses: 0 sent (or listed), 2 usage, 3 could not send (the report
 * stays in the outbox) or the database failed.  The token is never an
 * option, and no message of this command shows it.
 */
#include "config.h"

#include <getopt.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "db/db.h"
#include "db/report_html.h"
#include "names.h"
#include "shakedown/backend.h"
#include "upload/upload.h"
#include "tool.h"
#include "util.h"

/* src/help/upload.txt, which also gives shakedown(1) its "Options of
 * shakedown upload" */
static void usage(FILE *out)
{
	sd_help_print(out, sd_help_upload);
}

static void log_line(void *arg, const char *line)
{
	fprintf(stderr, "shakedown: upload: %s\n", line);
}

static void row_line(void *arg, int ok, const char *line)
{
	if (ok)
		printf("%s\n", line);
	else
		fprintf(stderr, "shakedown: upload: %s\n", line);
	fflush(stdout);
}

/* Print the outbox: waiting rows, or all with --all. */
static int list_outbox(sqlite3 *db, int all)
{
	sqlite3_stmt *st = NULL;
	int n = 0, step;
	if (sqlite3_prepare_v2(db,
		"SELECT r.uuid, o.url, o.state, o.attempts, o.http_status, "
		"coalesce(o.last_attempt_at, '-'), o.last_error, "
		"o.created_at, o.sent_at FROM upload_outbox o "
		"JOIN runs r ON r.id = o.run_id "
		"WHERE ?1 OR o.state != 'sent' ORDER BY o.created_at, o.id",
		-1, &st, NULL) != SQLITE_OK) {
		fprintf(stderr, "shakedown: upload: results database: %s\n",
			sqlite3_errmsg(db));
		return SD_EXIT_ENV;
	}
	sqlite3_bind_int(st, 1, all);
	while ((step = sqlite3_step(st)) == SQLITE_ROW) {
		if (n++ == 0)
			printf("%-36s  %-7s  %8s  %4s  %-20s  %s\n", "RUN",
			       "STATE", "ATTEMPTS", "HTTP", "LAST ATTEMPT",
			       "URL / LAST ERROR");
		char http[16] = "-";
		if (sqlite3_column_type(st, 4) != SQLITE_NULL)
			snprintf(http, sizeof(http), "%d",
				 sqlite3_column_int(st, 4));
		const char *err = (const char *)sqlite3_column_text(st, 6);
		const char *state = (const char *)sqlite3_column_text(st, 2);
		printf("%-36s  %-7s  %8d  %4s  %-20s  %s\n",
		       (const char *)sqlite3_column_text(st, 0), state,
		       sqlite3_column_int(st, 3), http,
		       (const char *)sqlite3_column_text(st, 5),
		       (const char *)sqlite3_column_text(st, 1));
		if (err)
			printf("%-36s  %s\n", "", err);
	}
	if (step != SQLITE_DONE) {
		fprintf(stderr, "shakedown: upload: results database: %s\n",
			sqlite3_errmsg(db));
		sqlite3_finalize(st);
		return SD_EXIT_ENV;
	}
	sqlite3_finalize(st);
	if (n == 0)
		printf(all ? "the upload outbox is empty\n"
			   : "no reports waiting: every report was sent\n");
	return sd_finish_stdout();
}

enum {
	OPT_URL = 256, OPT_DB, OPT_TOKEN_FILE, OPT_CACERT, OPT_CONNECT_TIMEOUT,
	OPT_TIMEOUT, OPT_ATTEMPTS, OPT_PENDING, OPT_LIST, OPT_ALL, OPT_HTML,
};

static const struct option long_options[] = {
	{ "url", required_argument, NULL, OPT_URL },
	{ "db", required_argument, NULL, OPT_DB },
	{ "token-file", required_argument, NULL, OPT_TOKEN_FILE },
	{ "cacert", required_argument, NULL, OPT_CACERT },
	{ "connect-timeout", required_argument, NULL, OPT_CONNECT_TIMEOUT },
	{ "timeout", required_argument, NULL, OPT_TIMEOUT },
	{ "attempts", required_argument, NULL, OPT_ATTEMPTS },
	{ "pending", no_argument, NULL, OPT_PENDING },
	{ "list", no_argument, NULL, OPT_LIST },
	{ "all", no_argument, NULL, OPT_ALL },
	{ "html", no_argument, NULL, OPT_HTML },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* Name an argument in a message without its value: "--x=VALUE" may be a
 * secret someone typed in the wrong place. */
static void print_bad_option(const char *arg)
{
	size_t n = strcspn(arg, "=");
	fprintf(stderr, "shakedown: upload: unknown option '%.*s'; run "
		"'shakedown upload --help'\n", (int)(n > 64 ? 64 : n), arg);
}

/* upload --html: after the JSON report, the run's HTML report (the page of
 * `report --format html`) to the same URL, as text/html with the
 * Idempotency-Key "<uuid>.html", so that the collector can tell the two
 * apart and keep each once.  Not queued in the outbox: the JSON is the
 * record, and the page can be made again from it at any time. */
static int send_html(sqlite3 *db, const char *uuid, const char *url,
		     const char *token, const struct sd_upload_config *c)
{
	char err[768], key[64];
	char *page = NULL;
	size_t len = 0;
	struct sd_upload_result res;
	int st = sd_report_html(db, uuid, &page, &len, err, sizeof(err));
	if (st == SD_OK) {
		snprintf(key, sizeof(key), "%s.html", uuid);
		st = sd_upload_post_type(c, url, token, key,
					 "text/html; charset=utf-8", page,
					 len, &res, err, sizeof(err));
		if (st != SD_OK && res.error[0])
			snprintf(err, sizeof(err), "%s", res.error);
	}
	free(page);
	if (st != SD_OK) {
		sd_upload_scrub(err, token);
		fprintf(stderr, "shakedown: upload: the JSON report of %s was "
			"sent, its HTML report was not: %s; send both again "
			"with 'shakedown upload %s --html'\n", uuid, err, uuid);
		return SD_EXIT_ENV;
	}
	printf("sent the HTML report of %s to %s (HTTP %ld)\n", uuid, url,
	       res.http_status);
	return SD_EXIT_OK;
}

/* What the command line of `shakedown upload` asked for. */
struct upload_args {
	const char *url, *db_path, *token_file;
	const char *run_ref;     /* RUN; NULL: --pending or --list */
	int pending, list, all, verbose, html;
	struct sd_upload_config c;
};

/* --token in any spelling is refused before anything else: a token on the
 * command line is readable by every user.  0, or SD_EXIT_USAGE (said). */
static int refuse_token_option(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0)
			break;
		if (strncmp(argv[i], "--token", 7) == 0 &&
		    (argv[i][7] == '\0' || argv[i][7] == '=')) {
			fprintf(stderr, "shakedown: upload: --token: a token is "
				"never taken on the command line, where other "
				"users can read it; put it in a file and pass "
				"--token-file FILE, or set SHAKEDOWN_TOKEN_FILE\n");
			return SD_EXIT_USAGE;
		}
	}
	return 0;
}

/* --timeout and --connect-timeout (opt says which): 0, or SD_EXIT_USAGE
 * (said). */
static int parse_timeout(int opt, const char *arg, struct sd_upload_config *c)
{
	double s;
	if (sd_parse_seconds(arg, &s)) {
		fprintf(stderr, "shakedown: upload: --%s '%s': not a number of "
			"seconds\n",
			opt == OPT_TIMEOUT ? "timeout" : "connect-timeout", arg);
		return SD_EXIT_USAGE;
	}
	if (opt == OPT_TIMEOUT)
		c->timeout_s = s;
	else
		c->connect_timeout_s = s;
	return 0;
}

/* Parse argv into a.  Returns -1 to go on, else an exit status. */
static int parse_args(int argc, char **argv, struct upload_args *a)
{
	char err[1024];
	long n;
	int opt;
	opterr = 0;
	optind = 1;
	while ((opt = sd_getopt(argc, argv, ":vh", long_options, err,
				sizeof(err))) != -1) {
		switch (opt) {
		case SD_OPT_REFUSED:
			fprintf(stderr, "shakedown upload: %s\n", err);
			return SD_EXIT_USAGE;
		case OPT_URL: a->url = optarg; break;
		case OPT_DB: a->db_path = optarg; break;
		case OPT_TOKEN_FILE: a->token_file = optarg; break;
		case OPT_CACERT: a->c.cacert = optarg; break;
		case OPT_PENDING: a->pending = 1; break;
		case OPT_LIST: a->list = 1; break;
		case OPT_ALL: a->all = 1; break;
		case OPT_HTML: a->html = 1; break;
		case 'v': a->verbose = 1; break;
		case 'h':
			usage(stdout);
			return sd_finish_stdout();
		case OPT_CONNECT_TIMEOUT:
		case OPT_TIMEOUT:
			if (parse_timeout(opt, optarg, &a->c))
				return SD_EXIT_USAGE;
			break;
		case OPT_ATTEMPTS:
			if (sd_parse_int(optarg, 1, 100, &n)) {
				fprintf(stderr, "shakedown: upload: --attempts "
					"'%s': not a number from 1 to 100\n",
					optarg);
				return SD_EXIT_USAGE;
			}
			a->c.max_attempts = (int)n;
			break;
		case ':':
			fprintf(stderr, "shakedown: upload: %s needs a value; "
				"run 'shakedown upload --help'\n",
				argv[optind - 1]);
			return SD_EXIT_USAGE;
		default:
			print_bad_option(argv[optind - 1]);
			return SD_EXIT_USAGE;
		}
	}
	if (optind < argc)
		a->run_ref = argv[optind++];
	if (optind < argc) {
		fprintf(stderr, "shakedown: upload: one run at a time; "
			"unexpected '%.64s'\n", argv[optind]);
		return SD_EXIT_USAGE;
	}
	return -1;
}

/* What the options say together: one thing to do, what goes with what,
 * the URL to send to (else $SHAKEDOWN_UPLOAD_URL), libcurl present.
 * Returns -1 to go on, else an exit status (said). */
static int check_args(struct upload_args *a)
{
	char err[1024];
	if (a->pending + a->list + (a->run_ref != NULL) != 1) {
		fprintf(stderr, "shakedown: upload: say what to send: a RUN, "
			"--pending or --list (one of them); run 'shakedown "
			"upload --help'\n");
		return SD_EXIT_USAGE;
	}
	if (a->html && !a->run_ref) {
		fprintf(stderr, "shakedown: upload: --html sends one run's "
			"HTML report beside its JSON; give a RUN (the outbox "
			"holds the JSON reports only)\n");
		return SD_EXIT_USAGE;
	}
	if (a->all && !a->list) {
		fprintf(stderr, "shakedown: upload: --all goes with --list\n");
		return SD_EXIT_USAGE;
	}
	if (a->run_ref && !a->url)
		a->url = getenv("SHAKEDOWN_UPLOAD_URL");
	if (a->run_ref && (!a->url || !*a->url)) {
		fprintf(stderr, "shakedown: upload: no URL to send to; pass "
			"--url URL or set SHAKEDOWN_UPLOAD_URL\n");
		return SD_EXIT_USAGE;
	}
	if (a->url && sd_upload_check_url(a->url, err, sizeof(err))) {
		fprintf(stderr, "shakedown: upload: %s\n", err);
		return SD_EXIT_USAGE;
	}
	if (!a->list && !sd_upload_available(err, sizeof(err))) {
		fprintf(stderr, "shakedown: upload: %s\n", err);
		return SD_EXIT_ENV;
	}
	if (a->verbose) {
		a->c.log = log_line;
		a->c.log_arg = NULL;
	}
	return -1;
}

/* Send run a->run_ref (and its HTML page with --html). */
static int send_run(sqlite3 *db, struct upload_args *a, const char *token)
{
	struct sd_upload_result res;
	char uuid[37] = "", err[1024];
	int src = sd_upload_run(db, a->run_ref, a->url, token, &a->c, uuid,
				&res, err, sizeof(err));
	sd_upload_scrub(err, token);
	if (src != SD_OK) {
		fprintf(stderr, "shakedown: upload: %s\n", err);
		return src == SD_ERR_INVALID ? SD_EXIT_USAGE : SD_EXIT_ENV;
	}
	printf("sent %s to %s (HTTP %ld)\n", uuid, a->url, res.http_status);
	int rc = a->html ? send_html(db, uuid, a->url, token, &a->c)
			 : SD_EXIT_OK;
	int frc = sd_finish_stdout();
	return rc == SD_EXIT_OK ? frc : rc;
}

/* --pending: send what the outbox holds. */
static int send_pending(sqlite3 *db, struct upload_args *a,
			const char *token)
{
	char err[1024];
	int nsent = 0, nleft = 0;
	int src = sd_upload_pending(db, a->url, token, &a->c, row_line, NULL,
				    &nsent, &nleft, err, sizeof(err));
	sd_upload_scrub(err, token);
	if (src != SD_OK) {
		fprintf(stderr, "shakedown: upload: %s\n", err);
		return SD_EXIT_ENV;
	}
	if (nsent == 0)
		printf("no reports waiting: every report was sent\n");
	return sd_finish_stdout();
}

int cmd_upload(int argc, char **argv)
{
	struct upload_args a = { 0 };
	sqlite3 *db = NULL;
	char *token = NULL;
	char err[1024];
	int rc, src;

	sd_upload_config_init(&a.c);
	if ((rc = refuse_token_option(argc, argv)))
		return rc;
	if ((src = sd_upload_config_from_env(&a.c, err, sizeof(err)))) {
		fprintf(stderr, "shakedown: upload: %s\n", err);
		return SD_EXIT_USAGE;
	}
	if ((rc = parse_args(argc, argv, &a)) >= 0 ||
	    (rc = check_args(&a)) >= 0)
		return rc;

	const char *db_path = sd_db_resolve_path(a.db_path);
	if (strcmp(db_path, "none") == 0) {
		fprintf(stderr, "shakedown: upload: --db none: the upload "
			"needs the results database; pass --db PATH\n");
		return SD_EXIT_USAGE;
	}
	if (sd_db_open(db_path, 0, &db, err, sizeof(err))) {
		fprintf(stderr, "shakedown: upload: %s\n", err);
		return SD_EXIT_ENV;
	}
	if (a.list)
		rc = list_outbox(db, a.all);
	else if ((src = sd_upload_token_load(a.token_file, &token, err,
					     sizeof(err)))) {
		fprintf(stderr, "shakedown: upload: %s\n", err);
		rc = src == SD_ERR_INVALID ? SD_EXIT_USAGE : SD_EXIT_ENV;
	} else if (a.run_ref)
		rc = send_run(db, &a, token);
	else
		rc = send_pending(db, &a, token);
	sd_upload_token_free(token);
	sd_db_close(db);
	return rc;
}
