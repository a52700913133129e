/*
 * sink_text.c - the printers (see sink_text.h).
 *
 * table:     nccl-tests' layout: one row per size with out-of-place and
 *            in-place columns, a footer per test (out-of-bounds count and
 *            average bus bandwidth) and a summary of every test at the end.
 * short:     the same table in 80 columns: the rows without count, type,
 *            redop and root (the test's header names them), the comment
 *            lines wrapped.
 * deepspeed: the DeepSpeed communication benchmark's table, one placement
 *            per test, the one DeepSpeed's call has (sd_ds_in_place); its
 *            title, header and rows are src/sink_deepspeed.c's.
 * json:      one JSON object per measurement, one per line.
 */
#include "config.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "shakedown/coll.h"
#include "sink_deepspeed.h"
#include "sink_text.h"
#include "verdict.h"
#include "hostlist.h"
#include "runner.h"
#include "util.h"

struct test_total {
	char label[160];
	const char *status;
	double peak_busbw_gbs;
	double sum_busbw_gbs;
	int nmeas;
	uint64_t wrong;
	int index;           /* sd_test_info.index */
	int number;          /* the test's one number (sd_test_number) */
	int attempt;
	char members[64];
	const char *outcome; /* its subject's, from the verdicts; or
				SD_OUTCOME_RETRIED; NULL: none came */
	int attempts;
};

struct text_sink {
	enum sd_format fmt;
	int ds_raw;               /* deepspeed: --raw */
	FILE *out;
	int nranks;
	int have_oop;             /* a pending out-of-place measurement */
	struct sd_measurement oop;
	/* per test */
	struct sd_buf notes; /* table: what shakedown adds to the rows,
				printed after the footer */
	uint64_t wrong;
	double sum_busbw;
	int nbusbw;
	/* for the summary */
	struct test_total *totals;
	int ntotals, cap;
	char run_uuid[37];
	/* what the run blames, as it is found (the latest of each), printed
	 * before the summary */
	struct suspect_line { char *kind, *subject, *text; } *sus;
	int nsus, capsus;
	/* each rank's host, when the run spans more than one: a group's
	 * label names its hosts */
	char (*host)[64];
};

void sd_text_comment(FILE *out, const char *text, int width)
{
	const char *lead = "# ";
	do {
		size_t n = sd_wrap_len(text, (size_t)width - strlen(lead));
		fprintf(out, "%s%.*s\n", lead, (int)n, text);
		text += n;
		while (*text == ' ')
			text++;
		lead = "#   ";
	} while (*text);
}

/* Lines of text: those of shakedown's comments ("# ...") wrapped at
 * `width` columns when width > 0, the others as they are. */
static void put_lines(FILE *o, const char *text, int width)
{
	while (text && *text) {
		size_t n = strcspn(text, "\n");
		if (width > 0 && n > (size_t)width && strncmp(text, "# ", 2) == 0) {
			char *line = strndup(text + 2, n - 2);
			if (line)
				sd_text_comment(o, line, width);
			free(line);
		} else {
			fprintf(o, "%.*s\n", (int)n, text);
		}
		text += n + (text[n] == '\n');
	}
}

/* A comment line, wrapped in the short table, as it is in the others. */
static void comment_line(const struct text_sink *t, FILE *o, const char *fmt,
			 ...) __attribute__((format(printf, 3, 4)));
static void comment_line(const struct text_sink *t, FILE *o, const char *fmt,
			 ...)
{
	struct sd_buf b = { 0 };
	va_list ap;
	va_start(ap, fmt);
	sd_buf_vprintf(&b, fmt, ap);
	va_end(ap);
	if (b.data)
		put_lines(o, b.data, t->fmt == SD_FORMAT_SHORT ? SD_SHORT_COLS
							       : 0);
	sd_buf_free(&b);
}

/* The run's header in the short table: the same facts, wrapped. */
static void short_run_begin(struct text_sink *t, const struct sd_run_info *run)
{
	FILE *o = t->out;
	comment_line(t, o, "# shakedown %s: %s backend (%s), %d rank%s, "
		     "launcher %s, nodes %s\n", run->tool_version, run->backend,
		     run->backend_version, run->nranks,
		     run->nranks == 1 ? "" : "s", run->job->launcher,
		     run->job->nodelist);
	if (run->job->job_id[0])
		comment_line(t, o, "# slurm: cluster %s job %s step %s, %d "
			     "node%s, %d task%s per node\n",
			     run->job->cluster[0] ? run->job->cluster : "-",
			     run->job->job_id, run->job->step_id,
			     run->job->nnodes, run->job->nnodes == 1 ? "" : "s",
			     run->job->tasks_per_node,
			     run->job->tasks_per_node == 1 ? "" : "s");
	comment_line(t, o, "# run %s, plan %s (hash %s)\n#\n", run->uuid,
		     run->plan_name ? run->plan_name : "-", run->plan_hash);
	for (int r = 0; r < run->nranks; r++) {
		const struct sd_rank_info *ri = &run->ranks[r];
		comment_line(t, o, "# rank %d on %s, pid %d, device %d [%s] "
			     "%s%s%s\n", ri->rank, ri->host, ri->pid,
			     ri->local_rank,
			     ri->dev.pci_bus_id[0] ? ri->dev.pci_bus_id : "-",
			     ri->dev.name, ri->dev.transport[0] ? ", " : "",
			     ri->dev.transport);
	}
	fprintf(o, "#\n");
}

static int t_run_begin(void *self, const struct sd_run_info *run)
{
	struct text_sink *t = self;
	t->nranks = run->nranks;
	sd_strlcpy(t->run_uuid, run->uuid, sizeof(t->run_uuid));
	int multi = 0;
	for (int r = 1; r < run->nranks && run->ranks && !multi; r++)
		multi = strcmp(run->ranks[r].host, run->ranks[0].host) != 0;
	free(t->host);
	t->host = NULL;
	if (multi && (t->host = calloc((size_t)run->nranks, sizeof(*t->host))))
		for (int r = 0; r < run->nranks; r++)
			sd_strlcpy(t->host[r], run->ranks[r].host,
				   sizeof(t->host[r]));
	if (t->fmt == SD_FORMAT_JSON)
		return SD_OK;
	FILE *o = t->out;
	if (t->fmt == SD_FORMAT_SHORT) {
		short_run_begin(t, run);
		return ferror(o) ? SD_ERR_IO : SD_OK;
	}
	fprintf(o, "# shakedown %s: %s backend (%s), %d rank%s, launcher %s, "
		"nodes %s\n", run->tool_version, run->backend,
		run->backend_version, run->nranks, run->nranks == 1 ? "" : "s",
		run->job->launcher, run->job->nodelist);
	if (run->job->job_id[0])
		fprintf(o, "# slurm: cluster %s job %s step %s, %d node%s, "
			"%d task%s per node\n",
			run->job->cluster[0] ? run->job->cluster : "-",
			run->job->job_id, run->job->step_id, run->job->nnodes,
			run->job->nnodes == 1 ? "" : "s",
			run->job->tasks_per_node,
			run->job->tasks_per_node == 1 ? "" : "s");
	fprintf(o, "# run %s, plan %s (hash %s)\n#\n", run->uuid,
		run->plan_name ? run->plan_name : "-", run->plan_hash);
	for (int r = 0; r < run->nranks; r++) {
		const struct sd_rank_info *ri = &run->ranks[r];
		/* nccl-tests' rank line (src/util.cu, the "#  Rank %2d Group
		 * %2d Pid %6d on %10s device %2d [%04x:%02x:%02x] %s" of its
		 * device listing): the bus id without its function */
		char bus[32];
		snprintf(bus, sizeof(bus), "%s",
			 ri->dev.pci_bus_id[0] ? ri->dev.pci_bus_id : "-");
		char *dot = strrchr(bus, '.');
		if (dot && strchr(bus, ':'))
			*dot = '\0';
		fprintf(o, "#  Rank %2d Group %2d Pid %6d on %10s device %2d [%s] "
			"%s%s%s\n", ri->rank, 0, ri->pid, ri->host, ri->local_rank,
			bus, ri->dev.name, ri->dev.transport[0] ? ", " : "",
			ri->dev.transport);
	}
	fprintf(o, "#\n");
	return ferror(o) ? SD_ERR_IO : SD_OK;
}

/* The hosts of a group's ranks (members) as a Slurm hostlist, when the
 * run spans more than one host; else NULL (malloc'd). */
static char *group_hosts(const struct text_sink *t, const char *members)
{
	if (!t->host || t->nranks <= 0)
		return NULL;
	int *r = malloc((size_t)t->nranks * sizeof(int));
	const char **names = malloc((size_t)t->nranks * sizeof(*names));
	int n = r && names ? sd_rank_list_parse(members, r, t->nranks) : -1;
	int k = 0;
	for (int i = 0; i < n; i++) {
		if (r[i] >= t->nranks) {
			k = 0;
			break;
		}
		int seen = 0;
		for (int j = 0; j < k && !seen; j++)
			seen = strcmp(names[j], t->host[r[i]]) == 0;
		if (!seen)
			names[k++] = t->host[r[i]];
	}
	char *list = k ? sd_hostlist_compress(names, k) : NULL;
	free(r);
	free(names);
	return list;
}

static int t_test_begin(void *self, const struct sd_test_info *ti)
{
	struct text_sink *t = self;
	FILE *o = t->out;
	t->wrong = 0;
	t->sum_busbw = 0;
	t->nbusbw = 0;
	t->have_oop = 0;
	if (t->ntotals == t->cap) {
		int cap = t->cap ? t->cap * 2 : 16;
		void *p = realloc(t->totals, (size_t)cap * sizeof(*t->totals));
		if (!p)
			return SD_ERR_NOMEM;
		t->totals = p;
		t->cap = cap;
	}
	struct test_total *tt = &t->totals[t->ntotals++];
	memset(tt, 0, sizeof(*tt));
	tt->index = ti->index;
	tt->number = sd_test_number(ti);
	tt->attempt = ti->attempt;
	snprintf(tt->members, sizeof(tt->members), "%s",
		 ti->members ? ti->members : "");
	char again[32] = "";
	if (ti->attempt > 1)
		snprintf(again, sizeof(again), " (attempt %d)", ti->attempt);
	snprintf(tt->label, sizeof(tt->label), "%s %s%s%s", ti->name,
		 sd_dtype_name(ti->dtype), ti->has_redop ? " " : "",
		 ti->has_redop ? sd_redop_name(ti->redop) : "");
	if (ti->root >= 0) {
		size_t u = strlen(tt->label);
		snprintf(tt->label + u, sizeof(tt->label) - u, " root %d",
			 ti->root);
	}
	if (ti->scope && strcmp(ti->scope, "world") != 0 && ti->members &&
	    *ti->members) {
		/* a group of a split: which one, in the header and summary;
		 * across hosts, by its hosts first ("node node3 (ranks 2)") */
		size_t u = strlen(tt->label);
		char *hosts = group_hosts(t, ti->members);
		if (hosts)
			snprintf(tt->label + u, sizeof(tt->label) - u,
				 " %s %s (ranks %s)", ti->scope, hosts,
				 ti->members);
		else
			snprintf(tt->label + u, sizeof(tt->label) - u,
				 " %s ranks %s", ti->scope, ti->members);
		free(hosts);
	}
	if (ti->variant && *ti->variant) {
		/* a test of its own path (a worker process per rank) */
		size_t u = strlen(tt->label);
		snprintf(tt->label + u, sizeof(tt->label) - u, " via %s",
			 ti->variant);
	}
	if (t->fmt == SD_FORMAT_TABLE) {
		fprintf(o, "# Test %d%s: %s, %d ranks, algorithm %s\n",
			tt->number, again, tt->label, ti->nranks, ti->algo);
		/* nccl-tests' header (src/util.cu, writeResultHeader, without
		 * per-iteration columns or timestamps) */
		fprintf(o, "#\n");
		fprintf(o, "# %10s  %12s  %8s  %6s  %6s           out-of-place     "
			"                  in-place          \n", "", "", "", "",
			"");
		fprintf(o, "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  "
			"%6s  %6s  %6s %s\n", "size", "count", "type", "redop",
			"root", "time", "algbw", "busbw", "#wrong", "time",
			"algbw", "busbw", "#wrong", "");
		fprintf(o, "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  "
			"%6s  %6s  %6s %s\n", "(B)", "(elements)", "", "", "",
			"(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)",
			"(GB/s)", "", "");
	} else if (t->fmt == SD_FORMAT_SHORT) {
		comment_line(t, o, "# Test %d%s: %s, %d ranks, algorithm %s\n",
			     tt->number, again, tt->label, ti->nranks, ti->algo);
		/* the size, then the columns of each placement as above */
		fprintf(o, "#\n# %10s           out-of-place                   "
			"    in-place\n", "");
		fprintf(o, "# %10s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s\n",
			"size", "time", "algbw", "busbw", "#wrong", "time",
			"algbw", "busbw", "#wrong");
		fprintf(o, "# %10s  %7s  %6s  %6s  %6s  %7s  %6s  %6s\n", "(B)",
			"(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)",
			"(GB/s)");
	} else if (t->fmt == SD_FORMAT_DEEPSPEED) {
		/* DeepSpeed's title names the op alone: what else tells the
		 * tests apart is a comment line of shakedown's before it */
		fprintf(o, "# Test %d%s: %s, %d ranks, algorithm %s; rows %s\n",
			tt->number, again, tt->label, ti->nranks, ti->algo,
			sd_ds_in_place(ti) ? "in place" : "out of place");
		sd_ds_print_header(o, ti->name, sd_ds_devices(ti), t->ds_raw);
	}
	return ferror(o) ? SD_ERR_IO : SD_OK;
}

/* A number in `width` columns as nccl-tests' getFloatStr (src/util.cu)
 * writes it: two decimals, else one, else none, else an exponent. */
static void float_str(double v, int width, char *buf, size_t len)
{
	static const char *const fmt[] = { "%*.2f", "%*.1f", "%*.0f" };
	for (int i = 0; i < 3; i++)
		if (snprintf(buf, len, fmt[i], width, v) <= width)
			return;
	snprintf(buf, len, width >= 7 ? "%*.1e" : "%*.0e", width, v);
}

/* One placement's columns, as nccl-tests' writeBenchmarkLineBody prints
 * them: "  %7s  %6s  %6s  %6g", or "    N/A" for an unchecked #wrong. */
static void print_body(FILE *o, const struct sd_measurement *m)
{
	char tm[32], alg[32], bus[32];
	float_str(m->time_us, 7, tm, sizeof(tm));
	float_str(m->algbw_gbs, 6, alg, sizeof(alg));
	float_str(m->busbw_gbs, 6, bus, sizeof(bus));
	if (m->checked)
		fprintf(o, "  %7s  %6s  %6s  %6g", tm, alg, bus, (double)m->wrong);
	else
		fprintf(o, "  %7s  %6s  %6s    N/A", tm, alg, bus);
}

/* The first wrong element of m, as a comment line (no "out-of-place" or
 * "in-place" in it: readers of nccl-tests' table find its header by those
 * words). */
static void first_wrong(struct sd_buf *b, const struct sd_measurement *m)
{
	if (!m->wrong)
		return;
	sd_buf_printf(b, "# WRONG: %s, %zu bytes: rank %d: first wrong "
		      "element at index %" PRIu64 ": expected %s, got %s\n",
		      m->in_place ? "in place" : "out of place", m->size_bytes,
		      m->first_wrong_rank, m->first_wrong.index,
		      m->first_wrong.expected, m->first_wrong.got);
}

static void print_first_wrong(FILE *o, const struct sd_measurement *m)
{
	struct sd_buf b = { 0 };
	first_wrong(&b, m);
	if (b.data)
		fputs(b.data, o);
	sd_buf_free(&b);
}

static void iter_line(struct sd_buf *b, const struct sd_measurement *m)
{
	if (m->have_percentiles)
		sd_buf_printf(b, "# %zu B %s per iteration (us): min %.2f p50 "
			      "%.2f p99 %.2f max %.2f\n", m->size_bytes,
			      m->in_place ? "in place" : "out of place",
			      m->iter_us_min, m->iter_us_p50, m->iter_us_p99,
			      m->iter_us_max);
}

static void table_row(struct text_sink *t, const struct sd_test_info *ti,
		      const struct sd_measurement *oop,
		      const struct sd_measurement *ip)
{
	FILE *o = t->out;
	/* nccl-tests' writeBenchmarkLinePreamble: "%12li  %12li  %8s  %6s
	 * %6s", the root as "%6i"; the short table keeps the size alone */
	if (t->fmt == SD_FORMAT_SHORT)
		fprintf(o, "%12zu", oop->size_bytes);
	else
		fprintf(o, "%12zu  %12zu  %8s  %6s  %6d", oop->size_bytes,
			oop->count, sd_dtype_nccl_name(ti->dtype),
			ti->has_redop ? sd_redop_name(ti->redop) : "none",
			ti->root);
	print_body(o, oop);
	if (ip)
		print_body(o, ip);
	else /* not measured in place (in_place: false): the columns say so */
		fprintf(o, "  %7s  %6s  %6s  %6s", "N/A", "N/A", "N/A", "N/A");
	fprintf(o, "\n");
	/* nothing but rows between the header and the footer: parsers of
	 * nccl-tests' table (SuperBench's takes every line in between as a
	 * row) read shakedown's additions after the footer */
	iter_line(&t->notes, oop);
	if (ip)
		iter_line(&t->notes, ip);
	first_wrong(&t->notes, oop);
	if (ip)
		first_wrong(&t->notes, ip);
}

static void json_line(struct text_sink *t, const struct sd_test_info *ti,
		      const struct sd_measurement *m)
{
	struct sd_buf b = { 0 };
	sd_buf_printf(&b, "{\"run\":\"%s\",\"test\":%d,\"attempt\":%d,"
		      "\"op\":\"%s\",\"dtype\":\"%s\",\"redop\":", t->run_uuid,
		      sd_test_number(ti), ti->attempt > 0 ? ti->attempt : 1,
		      ti->name, sd_dtype_name(ti->dtype));
	if (ti->has_redop)
		sd_buf_printf(&b, "\"%s\"", sd_redop_name(ti->redop));
	else
		sd_buf_printf(&b, "null");
	if (ti->root >= 0)
		sd_buf_printf(&b, ",\"root\":%d", ti->root);
	else
		sd_buf_printf(&b, ",\"root\":null");
	sd_buf_printf(&b, ",\"scope\":\"%s\",\"members\":\"%s\","
		      "\"nranks\":%d,"
		      "\"algo\":\"%s\",\"size_bytes\":%zu,\"count\":%zu,"
		      "\"in_place\":%s,\"iters\":%d,\"warmup_iters\":%d,"
		      "\"time_us\":%.3f,\"time_us_min\":%.3f,"
		      "\"time_us_avg\":%.3f,\"time_us_max\":%.3f,"
		      "\"algbw_gbs\":%.6f,\"busbw_gbs\":%.6f,"
		      "\"ds_size_bytes\":%zu,\"ds_description\":\"%s\","
		      "\"ds_duration_us\":%.3f,\"ds_throughput_gbps\":%.6f,"
		      "\"ds_busbw_gbps\":%.6f,\"checked\":%s",
		      ti->scope, ti->members ? ti->members : "",
		      ti->nranks, m->algo && *m->algo ? m->algo : ti->algo,
		      m->size_bytes,
		      m->count, m->in_place ? "true" : "false", m->iters,
		      m->warmup_iters, m->time_us, m->time_us_min,
		      m->time_us_avg, m->time_us_max, m->algbw_gbs,
		      m->busbw_gbs, m->ds_size_bytes, m->ds_description,
		      m->time_us, m->ds_throughput_gbps, m->ds_busbw_gbps,
		      m->checked ? "true" : "false");
	/* an unchecked measurement has no count of wrong elements (0 would
	 * claim they were all right) */
	if (m->checked)
		sd_buf_printf(&b, ",\"wrong\":%" PRIu64, m->wrong);
	else
		sd_buf_printf(&b, ",\"wrong\":null");
	if (m->have_percentiles)
		sd_buf_printf(&b, ",\"iter_us\":{\"min\":%.3f,\"p50\":%.3f,"
			      "\"p99\":%.3f,\"max\":%.3f}", m->iter_us_min,
			      m->iter_us_p50, m->iter_us_p99, m->iter_us_max);
	if (m->wrong) {
		sd_buf_printf(&b, ",\"first_wrong\":{\"rank\":%d,\"index\":%"
			      PRIu64 ",\"expected\":", m->first_wrong_rank,
			      m->first_wrong.index);
		sd_buf_json_string(&b, m->first_wrong.expected);
		sd_buf_printf(&b, ",\"got\":");
		sd_buf_json_string(&b, m->first_wrong.got);
		sd_buf_printf(&b, "}");
	}
	sd_buf_printf(&b, "}\n");
	if (b.data)
		fputs(b.data, t->out);
	sd_buf_free(&b);
}

static int t_measurement(void *self, const struct sd_test_info *ti,
			 const struct sd_measurement *m)
{
	struct text_sink *t = self;
	FILE *o = t->out;
	struct test_total *tt = &t->totals[t->ntotals - 1];
	t->wrong += m->wrong;
	tt->wrong += m->wrong;
	t->sum_busbw += m->busbw_gbs;
	t->nbusbw++;
	tt->sum_busbw_gbs += m->busbw_gbs;
	tt->nmeas++;
	if (m->busbw_gbs > tt->peak_busbw_gbs)
		tt->peak_busbw_gbs = m->busbw_gbs;

	switch (t->fmt) {
	case SD_FORMAT_JSON:
		json_line(t, ti, m);
		break;
	case SD_FORMAT_DEEPSPEED: {
		if (m->in_place != sd_ds_in_place(ti))
			break;
		sd_ds_print_row(o, m, t->ds_raw);
		if (m->wrong)
			print_first_wrong(o, m);
		break;
	}
	default:
		if (!m->in_place) {
			if (t->have_oop) /* previous size had no in-place */
				table_row(t, ti, &t->oop, NULL);
			t->oop = *m;
			t->have_oop = 1;
			if (!sd_coll_get(ti->op)->has_in_place) {
				table_row(t, ti, m, NULL);
				t->have_oop = 0;
			}
		} else {
			table_row(t, ti, t->have_oop ? &t->oop : m, m);
			t->have_oop = 0;
		}
		break;
	}
	fflush(o);
	return ferror(o) ? SD_ERR_IO : SD_OK;
}

static int t_test_end(void *self, const struct sd_test_info *ti,
		      const char *status, const char *message)
{
	struct text_sink *t = self;
	FILE *o = t->out;
	if (t->ntotals)
		t->totals[t->ntotals - 1].status = status;
	if (t->fmt == SD_FORMAT_TABLE || t->fmt == SD_FORMAT_SHORT) {
		if (t->have_oop)
			table_row(t, ti, &t->oop, NULL);
		t->have_oop = 0;
		/* nccl-tests' writeResultFooter: "# %-20s : %d %s" and "#
		 * %-20s : %g %s", no unit, the check word empty when no
		 * -G threshold was given */
		fprintf(o, "# %-20s : %" PRIu64 " %s\n", "Out of bounds values",
			t->wrong, t->wrong ? "FAILED" : "OK");
		fprintf(o, "# %-20s : %g %s\n", "Avg bus bandwidth",
			t->nbusbw ? t->sum_busbw / t->nbusbw : 0.0, "");
		comment_line(t, o, "%s", t->notes.data ? t->notes.data : "");
		sd_buf_free(&t->notes);
		if (strcmp(status, "passed") != 0)
			comment_line(t, o, "# Test %d %s%s%s\n",
				     sd_test_number(ti), status,
				     message ? ": " : "", message ? message : "");
		fprintf(o, "#\n");
	}
	fflush(o);
	return ferror(o) ? SD_ERR_IO : SD_OK;
}

/* The summary's columns: test, subject, outcome, peak and average busbw,
 * #wrong, in SD_SHORT_COLS; a subject or outcome longer than its column
 * goes on in the lines below, in that column. */
enum { SUBJECT_COLS = 28, OUTCOME_COLS = 15 };

/* The length of a cell's first line: an outcome breaks before its
 * " (N attempts)" when the whole does not fit. */
static size_t cell_len(const char *s, size_t width)
{
	size_t n = sd_wrap_len(s, width);
	const char *paren = strstr(s, " (");
	if (s[n] && paren && (size_t)(paren - s) < n)
		n = (size_t)(paren - s);
	return n;
}

static void summary_row(FILE *o, const struct test_total *tt,
			const char *shown)
{
	const char *sub = tt->label, *out = shown;
	int first = 1;
	while (first || *sub || *out) {
		size_t ns = cell_len(sub, SUBJECT_COLS);
		size_t no = cell_len(out, OUTCOME_COLS);
		char line[256];
		if (first)
			snprintf(line, sizeof(line), "# %4d %-*.*s %-*.*s "
				 "%10.3f %10.3f %6" PRIu64, tt->number,
				 SUBJECT_COLS, (int)ns, sub, OUTCOME_COLS,
				 (int)no, out, tt->peak_busbw_gbs,
				 tt->nmeas ? tt->sum_busbw_gbs / tt->nmeas
					   : 0.0, tt->wrong);
		else
			snprintf(line, sizeof(line), "# %4s %-*.*s %.*s", "",
				 SUBJECT_COLS, (int)ns, sub, (int)no, out);
		size_t end = strlen(line);
		while (end && line[end - 1] == ' ')
			end--;
		fprintf(o, "%.*s\n", (int)end, line);
		sub += ns;
		out += no;
		while (*sub == ' ')
			sub++;
		while (*out == ' ')
			out++;
		first = 0;
	}
}

static int t_run_end(void *self, const struct sd_run_end *e)
{
	struct text_sink *t = self;
	/* JSON keeps stdout machine-readable: the summary goes to stderr */
	FILE *o = t->fmt == SD_FORMAT_JSON ? stderr : t->out;
	if (t->notes.data) /* a test the run stopped in */
		comment_line(t, o, "%s", t->notes.data);
	sd_buf_free(&t->notes);
	/* from here every format keeps to SD_SHORT_COLS */
	if (t->nsus)
		fprintf(o, "\n# Suspects (shakedown report --bad-nodes lists "
			"them again)\n");
	for (int k = 0; k < t->nsus; k++)
		put_lines(o, t->sus[k].text ? t->sus[k].text : "#",
			  SD_SHORT_COLS);
	fprintf(o, "\n# Summary of run %s\n", t->run_uuid);
	fprintf(o, "# %4s %-*s %-*s %10s %10s %6s\n", "test", SUBJECT_COLS,
		"subject", OUTCOME_COLS, "outcome", "peak busbw", "avg busbw",
		"#wrong");
	fprintf(o, "# %4s %-*s %-*s %10s %10s\n", "", SUBJECT_COLS, "",
		OUTCOME_COLS, "", "(GB/s)", "(GB/s)");
	/* the outcomes in the order the footer counts them */
	static const char *const words[] = { "passed", "passed on retry",
		"failed", "skipped", "not judged", "error", "cancelled",
		"incomplete" };
	enum { NW = sizeof(words) / sizeof(words[0]) };
	int count[NW] = { 0 }, retried = 0, subjects = 0;
	for (int i = 0; i < t->ntotals; i++) {
		const struct test_total *tt = &t->totals[i];
		const char *st = tt->status ? tt->status : "incomplete";
		/* a measurement that did not complete says so, else its
		 * subject's outcome */
		int judged = tt->outcome && (strcmp(st, "passed") == 0 ||
					     strcmp(st, "failed") == 0);
		const char *w = judged ? tt->outcome : st;
		char shown[40];
		if (judged && tt->attempts > 1 &&
		    strcmp(w, SD_OUTCOME_RETRIED) != 0)
			snprintf(shown, sizeof(shown), "%s (%d attempts)", w,
				 tt->attempts);
		else
			snprintf(shown, sizeof(shown), "%s", w);
		if (strcmp(w, SD_OUTCOME_RETRIED) == 0) {
			retried++;
		} else {
			subjects++;
			for (int k = 0; k < NW; k++)
				count[k] += strcmp(w, words[k]) == 0;
		}
		summary_row(o, tt, shown);
	}
	struct sd_buf b = { 0 };
	sd_buf_printf(&b, "%d subject%s:", subjects, subjects == 1 ? "" : "s");
	const char *sep = " ";
	for (int k = 0; k < NW; k++)
		if (count[k]) {
			sd_buf_printf(&b, "%s%d %s", sep, count[k], words[k]);
			sep = ", ";
		}
	if (retried)
		sd_buf_printf(&b, " (%d attempt%s retried)", retried,
			      retried == 1 ? "" : "s");
	sd_buf_printf(&b, "; run %s (exit status %d)%s%s", e->status,
		      e->exit_status, e->message ? ": " : "",
		      e->message ? e->message : "");
	if (b.data)
		sd_text_comment(o, b.data, SD_SHORT_COLS);
	sd_buf_free(&b);
	fflush(o);
	return ferror(o) ? SD_ERR_IO : SD_OK;
}

/* Failed expectations, as comment lines after the test's table; JSON
 * output keeps stdout for measurements and says them on stderr. */
/* Each verdict's outcome onto the summary's row of the test it judged;
 * the earlier attempts of the same subject (same test and group) were
 * retried. */
static void mark_outcomes(struct text_sink *t, const struct sd_verdict_info *v,
			  size_t n)
{
	struct test_total *x = NULL, *marked = NULL;
	for (size_t i = 0; i < n; i++) {
		/* A test's rows come together: find its total once, from the
		 * end, where the test just run is. */
		if (!x || x->index != v[i].test_index) {
			x = NULL;
			for (int k = t->ntotals - 1; k >= 0 && !x; k--)
				if (t->totals[k].index == v[i].test_index)
					x = &t->totals[k];
		}
		if (!x || !v[i].outcome)
			continue;
		x->outcome = v[i].outcome;
		x->attempts = v[i].attempts;
		/* Its earlier attempts were retried: looked for once per
		 * test, and never at attempt 1, which has none. */
		for (int k = 0; x != marked && x->attempt > 1 && k < t->ntotals;
		     k++) {
			struct test_total *y = &t->totals[k];
			if (y != x && y->number == x->number &&
			    y->attempt < x->attempt &&
			    strcmp(y->members, x->members) == 0)
				y->outcome = SD_OUTCOME_RETRIED;
		}
		marked = x;
	}
}

static int t_verdicts(void *self, const struct sd_verdict_info *v, size_t n)
{
	struct text_sink *t = self;
	FILE *o = t->fmt == SD_FORMAT_JSON ? stderr : t->out;
	size_t subjects = 0, failed = 0;
	const char *last = NULL, *last_failed = NULL;
	mark_outcomes(t, v, n);
	for (size_t i = 0; i < n; i++) {
		if (v[i].subject != last)
			subjects++;
		last = v[i].subject;
		if (strcmp(v[i].status, "failed") != 0)
			continue;
		if (v[i].subject != last_failed)
			failed++;
		last_failed = v[i].subject;
		char times[32] = "";
		if (v[i].attempts > 1)
			snprintf(times, sizeof(times), " (measured %d times)",
				 v[i].attempts);
		comment_line(t, o, "# FAILED %s %s: %s: %s%s\n",
			     v[i].subject_kind, v[i].subject, v[i].expectation,
			     v[i].reason, times);
	}
	if (n)
		fprintf(o, "# Verdicts: %zu of %zu %s%s passed\n#\n",
			subjects - failed, subjects, v[0].subject_kind,
			subjects == 1 ? "" : "s");
	fflush(o);
	return ferror(o) ? SD_ERR_IO : SD_OK;
}

/* What the run blames: kept (each kind and subject once, its latest
 * reason) and printed before the summary. */
static int t_suspects(void *self, const struct sd_suspect_info *v, size_t n)
{
	struct text_sink *t = self;
	for (size_t i = 0; i < n; i++) {
		struct suspect_line *x = NULL;
		for (int k = 0; k < t->nsus && !x; k++)
			if (strcmp(t->sus[k].kind, v[i].kind) == 0 &&
			    strcmp(t->sus[k].subject, v[i].subject) == 0)
				x = &t->sus[k];
		if (!x) {
			if (t->nsus == t->capsus) {
				int cap = t->capsus ? t->capsus * 2 : 8;
				void *p = realloc(t->sus, (size_t)cap *
							     sizeof(*t->sus));
				if (!p)
					return SD_ERR_NOMEM;
				t->sus = p;
				t->capsus = cap;
			}
			x = &t->sus[t->nsus++];
			x->kind = strdup(v[i].kind);
			x->subject = strdup(v[i].subject);
			x->text = NULL;
		}
		struct sd_buf b = { 0 };
		sd_buf_printf(&b, "# %-5s %s%s: %s", v[i].kind, v[i].subject,
			      v[i].bad_node ? " (bad node)" : "", v[i].reason);
		free(x->text);
		x->text = b.data;
		if (!x->kind || !x->subject || !x->text)
			return SD_ERR_NOMEM;
	}
	return SD_OK;
}

static void t_destroy(void *self)
{
	struct text_sink *t = self;
	for (int k = 0; k < t->nsus; k++) {
		free(t->sus[k].kind);
		free(t->sus[k].subject);
		free(t->sus[k].text);
	}
	free(t->sus);
	sd_buf_free(&t->notes);
	free(t->totals);
	free(t->host);
	free(t);
}

static const struct sd_sink_ops text_ops = {
	.name = "printer",
	.run_begin = t_run_begin,
	.test_begin = t_test_begin,
	.measurement = t_measurement,
	.test_end = t_test_end,
	.run_end = t_run_end,
	.destroy = t_destroy,
	.verdicts = t_verdicts,
	.suspects = t_suspects,
};

int sd_text_sink_open(enum sd_format fmt, int ds_raw, FILE *out,
		      struct sd_sink *s)
{
	struct text_sink *t = calloc(1, sizeof(*t));
	if (!t)
		return SD_ERR_NOMEM;
	t->fmt = fmt;
	t->ds_raw = ds_raw;
	t->out = out;
	s->ops = &text_ops;
	s->self = t;
	return SD_OK;
}
