/*
 * report_html.c - the HTML report of one run (see report_html.h): the
 * verdict first, then per test a busbw-vs-size plot and its table, the
 * subjects against their peers, the history on the same nodes, training
 * and gemm results, and the failures in words.  Everything is read with
 * SQL from the views and tables of shakedown-db(5) and written into one
 * growing string; the plots are inline SVG made here.
 */
#include "config.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/db.h"
#include "db/db_internal.h"
#include "db/report_html.h"
#include "hostlist.h"
#include "shakedown/backend.h"
#include "util.h"
#include "verdict.h"

/* Okabe-Ito (Okabe and Ito, "Color Universal Design", 2008): told apart
 * by the common colour vision deficiencies; black for reference lines. */
#define C_BLUE "#0072B2"
#define C_VERMILLION "#D55E00"
#define C_GREEN "#009E73"
#define C_ORANGE "#E69F00"
#define C_SKY "#56B4E9"
#define C_PURPLE "#CC79A7"
#define C_YELLOW "#F0E442"

/* The plot area inside each SVG. */
#define PW 560
#define PH 300
#define ML 64 /* left margin: y tick labels */
#define MR 16
#define MT 16
#define MB 44 /* bottom margin: x tick labels and the axis title */

struct html {
	struct sd_buf b;
	int oom;
	sqlite3 *db;
	int64_t run_id;
	char *err;
	size_t errlen;
	int failed; /* a query failed (err says which) */
};

static void P(struct html *h, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void P(struct html *h, const char *fmt, ...)
{
	va_list ap;
	if (h->oom)
		return;
	va_start(ap, fmt);
	if (sd_buf_vprintf(&h->b, fmt, ap))
		h->oom = 1;
	va_end(ap);
}

/* Text from the database, escaped for element content and attributes. */
static void E(struct html *h, const char *s)
{
	if (!s)
		s = "";
	/* runs of plain characters at once, an entity for each other */
	while (*s && !h->oom) {
		size_t n = strcspn(s, "&<>\"'");
		if (n)
			P(h, "%.*s", (int)n, s);
		s += n;
		switch (*s) {
		case '&': P(h, "&amp;"); break;
		case '<': P(h, "&lt;"); break;
		case '>': P(h, "&gt;"); break;
		case '"': P(h, "&quot;"); break;
		case '\'': P(h, "&#39;"); break;
		default: continue; /* the end of the string */
		}
		s++;
	}
}

static sqlite3_stmt *prep(struct html *h, const char *sql)
{
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(h->db, sql, -1, &st, NULL) != SQLITE_OK) {
		if (!h->failed)
			snprintf(h->err, h->errlen, "report query failed: %s",
				 sqlite3_errmsg(h->db));
		h->failed = 1;
		sqlite3_finalize(st);
		return NULL;
	}
	sqlite3_bind_int64(st, 1, h->run_id);
	return st;
}

static const char *txt(sqlite3_stmt *st, int i)
{
	const char *t = (const char *)sqlite3_column_text(st, i);
	return t ? t : "";
}

static int isnull(sqlite3_stmt *st, int i)
{
	return sqlite3_column_type(st, i) == SQLITE_NULL;
}

/* A count from a query over ?1 = the run. */
static long count(struct html *h, const char *sql)
{
	long n = 0;
	sqlite3_stmt *st = prep(h, sql);
	if (st && sqlite3_step(st) == SQLITE_ROW)
		n = (long)sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return n;
}

static void size_text(double bytes, char *buf, size_t len)
{
	sd_format_size(bytes > 0 ? (uint64_t)bytes : 0, buf, len);
}

/* --- the plot ----------------------------------------------------------- */

enum shape { SH_CIRCLE, SH_SQUARE, SH_NONE };

struct series {
	const char *label;
	const char *color;
	const char *dash;    /* stroke-dasharray or NULL */
	enum shape shape;
	const char *ptclass; /* class of each point ("pt"), NULL: none */
	const char *placement; /* data-placement of the points, or NULL */
	int n;
	const double *x, *y;
};

struct axes {
	int logx;            /* x in bytes on a log2 scale */
	const char *xlabel, *ylabel;
	double xmin, xmax, ymin, ymax;
};

static double sx(const struct axes *a, double x)
{
	double lo = a->logx ? log2(a->xmin) : a->xmin;
	double hi = a->logx ? log2(a->xmax) : a->xmax;
	double v = a->logx ? log2(x) : x;
	if (hi <= lo)
		return ML + PW / 2.0;
	return ML + (v - lo) / (hi - lo) * PW;
}

static double sy(const struct axes *a, double y)
{
	if (a->ymax <= a->ymin)
		return MT + PH / 2.0;
	return MT + PH - (y - a->ymin) / (a->ymax - a->ymin) * PH;
}

/* A round step for about n ticks over span. */
static double nice_step(double span, int n)
{
	if (span <= 0)
		return 1;
	double raw = span / n, p = pow(10, floor(log10(raw)));
	double f = raw / p;
	return (f < 1.5 ? 1 : f < 3 ? 2 : f < 7 ? 5 : 10) * p;
}

/* Fit the axes to the series: y from 0 (or the minimum when it is far
 * from 0) to a round value above the maximum. */
static void fit(struct axes *a, const struct series *s, int ns)
{
	int any = 0;
	double ylo = 0, yhi = 0;
	for (int i = 0; i < ns; i++)
		for (int k = 0; k < s[i].n; k++) {
			double x = s[i].x[k], y = s[i].y[k];
			if (!isfinite(x) || !isfinite(y) || (a->logx && x <= 0))
				continue;
			if (!any) {
				a->xmin = a->xmax = x;
				ylo = yhi = y;
				any = 1;
			}
			a->xmin = fmin(a->xmin, x);
			a->xmax = fmax(a->xmax, x);
			ylo = fmin(ylo, y);
			yhi = fmax(yhi, y);
		}
	if (!any) {
		a->xmin = a->logx ? 1 : 0;
		a->xmax = a->logx ? 2 : 1;
	}
	if (ylo > 0 && ylo > 0.5 * yhi)
		ylo = ylo - 0.1 * (yhi - ylo);
	else if (ylo > 0)
		ylo = 0;
	if (yhi <= ylo)
		yhi = ylo + 1;
	double st = nice_step(yhi - ylo, 5);
	a->ymin = floor(ylo / st) * st;
	a->ymax = ceil(yhi * 1.05 / st) * st;
}

/* One SVG plot (class cls): the axes, the series (a line, and points unless
 * SH_NONE), and a legend that names each series with its shape. */
static void plot(struct html *h, const char *cls, const char *attrs, const char *title,
		 struct axes *a, const struct series *s, int ns)
{
	char buf[64];
	int w = ML + PW + MR, ht = MT + PH + MB + 18 * ((ns + 1) / 2);
	fit(a, s, ns);
	P(h, "<svg class=\"%s\" %s width=\"%d\" height=\"%d\" "
	  "viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"", cls, attrs, w, ht,
	  w, ht);
	E(h, title);
	P(h, "\" xmlns=\"http://www.w3.org/2000/svg\">\n<title>");
	E(h, title);
	P(h, "</title>\n<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" "
	  "fill=\"#fff\" stroke=\"#444\"/>\n", ML, MT, PW, PH);
	/* y ticks */
	double st = nice_step(a->ymax - a->ymin, 5);
	for (double y = a->ymin; y <= a->ymax + st / 2; y += st) {
		double py = sy(a, y);
		P(h, "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" "
		  "stroke=\"#ddd\"/><text x=\"%d\" y=\"%.1f\" "
		  "text-anchor=\"end\" font-size=\"11\">%.4g</text>\n", ML,
		  ML + PW, py, py, ML - 4, py + 4, fabs(y) < st / 1e6 ? 0 : y);
	}
	/* x ticks: powers of two for sizes, round steps otherwise */
	if (a->logx) {
		double lo = floor(log2(a->xmin)), hi = ceil(log2(a->xmax));
		int every = (int)ceil((hi - lo + 1) / 10.0);
		if (every < 1)
			every = 1;
		for (double e = lo; e <= hi; e += every) {
			double x = exp2(e);
			if (x < a->xmin * 0.999 || x > a->xmax * 1.001)
				continue;
			size_text(x, buf, sizeof(buf));
			double px = sx(a, x);
			P(h, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\" "
			  "stroke=\"#eee\"/><text x=\"%.1f\" y=\"%d\" "
			  "text-anchor=\"middle\" font-size=\"11\">%s</text>\n",
			  px, px, MT, MT + PH, px, MT + PH + 14, buf);
		}
	} else {
		double xs = nice_step(a->xmax - a->xmin, 6);
		for (double x = ceil(a->xmin / xs) * xs; x <= a->xmax + xs / 1e6;
		     x += xs) {
			double px = sx(a, x);
			P(h, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\" "
			  "font-size=\"11\">%.6g</text>\n", px, MT + PH + 14, x);
		}
	}
	P(h, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" "
	  "font-size=\"12\">", ML + PW / 2, MT + PH + 32);
	E(h, a->xlabel);
	P(h, "</text><text transform=\"translate(14,%d) rotate(-90)\" "
	  "text-anchor=\"middle\" font-size=\"12\">", MT + PH / 2);
	E(h, a->ylabel);
	P(h, "</text>\n");
	for (int i = 0; i < ns; i++) {
		const struct series *r = &s[i];
		if (r->n > 1 || (r->n == 1 && r->shape == SH_NONE)) {
			P(h, "<polyline class=\"line\" fill=\"none\" "
			  "stroke=\"%s\" stroke-width=\"2\"%s%s%s points=\"",
			  r->color, r->dash ? " stroke-dasharray=\"" : "",
			  r->dash ? r->dash : "", r->dash ? "\"" : "");
			for (int k = 0; k < r->n; k++)
				if (isfinite(r->y[k]))
					P(h, "%.1f,%.1f ", sx(a, r->x[k]),
					  sy(a, r->y[k]));
			if (r->n == 1) /* a single threshold: across */
				P(h, "%d,%.1f %d,%.1f", ML, sy(a, r->y[0]),
				  ML + PW, sy(a, r->y[0]));
			P(h, "\"/>\n");
		}
		if (r->shape == SH_NONE)
			continue;
		/* the points: their colour and outline on the group, their
		 * numbers in the table beside the plot (kept small: a 100-test
		 * run's page must fit in an email) */
		P(h, "<g class=\"pts\" fill=\"%s\">\n", r->color);
		for (int k = 0; k < r->n; k++) {
			double px = sx(a, r->x[k]), py = sy(a, r->y[k]);
			if (!isfinite(r->y[k]))
				continue;
			if (r->shape == SH_CIRCLE)
				P(h, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\"",
				  px, py);
			else
				P(h, "<rect x=\"%.1f\" y=\"%.1f\" width=\"7\" "
				  "height=\"7\"", px - 3.5, py - 3.5);
			P(h, " class=\"%s\"", r->ptclass ? r->ptclass : "p");
			if (a->logx)
				P(h, " data-size=\"%.0f\"", r->x[k]);
			else
				P(h, " data-x=\"%.6g\"", r->x[k]);
			if (r->placement)
				P(h, " data-placement=\"%s\" data-busbw=\"%.4g\"/>\n",
				  r->placement, r->y[k]);
			else
				P(h, " data-y=\"%.6g\"/>\n", r->y[k]);
		}
		P(h, "</g>\n");
	}
	/* the legend, under the axis title */
	for (int i = 0; i < ns; i++) {
		int lx = ML + (i % 2) * (PW / 2), ly = MT + PH + 50 + 18 * (i / 2);
		const struct series *r = &s[i];
		P(h, "<line x1=\"%d\" x2=\"%d\" y1=\"%d\" y2=\"%d\" stroke=\"%s\" "
		  "stroke-width=\"2\"%s%s%s/>", lx, lx + 24, ly, ly, r->color,
		  r->dash ? " stroke-dasharray=\"" : "", r->dash ? r->dash : "",
		  r->dash ? "\"" : "");
		if (r->shape == SH_CIRCLE)
			P(h, "<circle cx=\"%d\" cy=\"%d\" r=\"4\" fill=\"%s\" "
			  "stroke=\"#000\" stroke-width=\"0.5\"/>", lx + 12, ly,
			  r->color);
		else if (r->shape == SH_SQUARE)
			P(h, "<rect x=\"%.1f\" y=\"%.1f\" width=\"7\" height=\"7\" "
			  "fill=\"%s\" stroke=\"#000\" stroke-width=\"0.5\"/>",
			  lx + 8.5, ly - 3.5, r->color);
		P(h, "<text x=\"%d\" y=\"%d\" font-size=\"12\">", lx + 30,
		  ly + 4);
		E(h, r->label);
		P(h, "</text>\n");
	}
	P(h, "</svg>\n");
}

/* --- the head of the page and the verdict -------------------------------- */

static const char page_style[] =
	"body{font-family:sans-serif;margin:1.5em;color:#111;max-width:80em}"
	"h1{font-size:1.4em}h2{border-bottom:1px solid #999;margin-top:2em}"
	"table{border-collapse:collapse;font-size:0.85em;margin:0.5em 0}"
	"td,th{border:1px solid #bbb;padding:2px 6px;text-align:left}"
	"td.n{text-align:right;font-variant-numeric:tabular-nums}"
	"th{background:#eee}.op{display:flex;flex-wrap:wrap;gap:1.5em;"
	"align-items:flex-start}.verdict{font-size:1.2em;font-weight:bold;"
	"padding:0.5em;border:3px solid}.verdict.passed{border-color:"
	C_BLUE "}.verdict.failed{border-color:" C_VERMILLION "}"
	".fail{font-weight:bold}dl{display:grid;grid-template-columns:"
	"max-content auto;gap:2px 1em}dt{font-weight:bold}dd{margin:0}"
	"figure{margin:0}g.pts{stroke:#000;stroke-width:.5}"
	"table.numbers td{text-align:right}@media print{.op{display:block}}";

/* The plan's name: its "name:" line. */
static void plan_name(const char *plan, char *out, size_t len)
{
	out[0] = 0;
	const char *p = plan;
	while (p && *p) {
		if (strncmp(p, "name:", 5) == 0) {
			p += 5;
			while (*p == ' ')
				p++;
			size_t n = strcspn(p, "\r\n");
			snprintf(out, len, "%.*s", (int)n, p);
			return;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
}

static void failures(struct html *h);

static void head(struct html *h, int *is_train)
{
	sqlite3_stmt *st = prep(h,
		"SELECT r.uuid, r.status, r.exit_status, r.message, "
		" r.started_at, s.duration_s, r.backend, r.backend_version, "
		" r.tool_version, r.nranks, s.nnodes, s.nodelist, s.cluster, "
		" s.job_id, r.plan_text, r.plan_hash, s.tests_total, "
		" (SELECT count(*) FROM tests_v v WHERE v.run_id = r.id AND "
		"  v.verdict = 'passed'), s.tests_not_passed, s.wrong_total, "
		" r.run_kind, r.hostname, s.launcher, r.command_line "
		"FROM runs r JOIN run_summary s ON s.run_id = r.id "
		"WHERE r.id = ?1");
	if (!st || sqlite3_step(st) != SQLITE_ROW) {
		sqlite3_finalize(st);
		return;
	}
	char plan[128];
	const char *status = txt(st, 1);
	int passed = strcmp(status, "passed") == 0;
	*is_train = strcmp(txt(st, 20), "collectives") != 0;
	plan_name(txt(st, 14), plan, sizeof(plan));
	P(h, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta "
	  "charset=\"utf-8\">\n<meta http-equiv=\"Content-Security-Policy\" "
	  "content=\"default-src 'none'; style-src 'unsafe-inline'; "
	  "img-src data:\">\n<meta name=\"viewport\" "
	  "content=\"width=device-width\">\n<title>shakedown ");
	E(h, passed ? "PASSED" : "FAILED");
	P(h, " run ");
	E(h, txt(st, 0));
	P(h, "</title>\n<style>%s</style>\n</head>\n<body>\n", page_style);
	P(h, "<h1>shakedown acceptance report: ");
	E(h, isnull(st, 12) ? txt(st, 11) : txt(st, 12));
	P(h, "</h1>\n");

	/* the verdict, in one line, with the bad nodes named */
	sqlite3_stmt *bn = prep(h, "SELECT hosts FROM suspects WHERE "
				   "run_id = ?1 AND bad_node = 1 "
				   "ORDER BY hosts");
	char **names = NULL;
	int nn = 0;
	while (bn && sqlite3_step(bn) == SQLITE_ROW) {
		char **nv = realloc(names, (nn + 1) * sizeof(*names));
		char *c = nv ? strdup(txt(bn, 0)) : NULL;
		if (nv)
			names = nv;
		if (!c) {
			h->oom = 1;
			break;
		}
		names[nn++] = c;
	}
	sqlite3_finalize(bn);
	char *hl = nn ? sd_hostlist_compress((const char *const *)names, nn)
		      : NULL;
	P(h, "<p id=\"verdict\" class=\"verdict %s\" data-status=\"%s\">",
	  passed ? "passed" : "failed", passed ? "passed" : "failed");
	P(h, "%s", passed ? "&#10004; PASSED" : "&#10008; FAILED");
	if (!*is_train)
		P(h, ": %lld of %lld subjects passed their checks",
		  (long long)sqlite3_column_int64(st, 17),
		  (long long)sqlite3_column_int64(st, 16));
	if (sqlite3_column_int64(st, 19) > 0)
		P(h, "; %lld wrong elements",
		  (long long)sqlite3_column_int64(st, 19));
	P(h, "; bad nodes: <span id=\"bad-nodes\">");
	E(h, nn ? (hl ? hl : names[0]) : "none");
	P(h, "</span>");
	if (!isnull(st, 3) && *txt(st, 3)) {
		P(h, "<br><span class=\"msg\">");
		E(h, txt(st, 3));
		P(h, "</span>");
	}
	P(h, "</p>\n");
	free(hl);
	for (int i = 0; i < nn; i++)
		free(names[i]);
	free(names);

	/* the evidence right under the verdict, then the identity */
	failures(h);
	P(h, "<h2 id=\"identity-title\">The run</h2>\n");
	P(h, "<dl id=\"identity\">\n");
	static const struct { const char *label; int col; } rows[] = {
		{ "run", 0 }, { "cluster", 12 }, { "job", 13 },
		{ "nodes", 11 }, { "started", 4 }, { "status", 1 },
		{ "exit status", 2 }, { "backend", 6 },
		{ "backend version", 7 }, { "shakedown", 8 },
		{ "plan hash", 15 }, { "launcher", 22 },
		{ "written by", 21 }, { "command", 23 },
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		if (i == 4) {
			P(h, "<dt>ranks</dt><dd>%lld on %lld node(s)</dd>\n",
			  (long long)sqlite3_column_int64(st, 9),
			  (long long)sqlite3_column_int64(st, 10));
			P(h, "<dt>plan</dt><dd>");
			E(h, *plan ? plan : "-");
			P(h, "</dd>\n");
		}
		P(h, "<dt>%s</dt><dd>", rows[i].label);
		E(h, isnull(st, rows[i].col) ? "-" : txt(st, rows[i].col));
		P(h, "</dd>\n");
		if (i == 4)
			P(h, "<dt>duration</dt><dd>%s%s</dd>\n",
			  isnull(st, 5) ? "-" : txt(st, 5),
			  isnull(st, 5) ? "" : " s");
	}
	P(h, "</dl>\n");
	if (!isnull(st, 14)) {
		P(h, "<details><summary>the plan</summary><pre>");
		E(h, txt(st, 14));
		P(h, "</pre></details>\n");
	}
	sqlite3_finalize(st);
}

/* --- per test: busbw against size ---------------------------------------- */

struct pts {
	double *x, *y;
	int n, cap;
};

static int push(struct pts *p, double x, double y)
{
	if (p->n == p->cap) {
		int cap = p->cap ? 2 * p->cap : 16;
		double *nx = realloc(p->x, cap * sizeof(double));
		if (!nx)
			return -1;
		p->x = nx;
		double *ny = realloc(p->y, cap * sizeof(double));
		if (!ny)
			return -1;
		p->y = ny;
		p->cap = cap;
	}
	p->x[p->n] = x;
	p->y[p->n++] = y;
	return 0;
}

static void pts_free(struct pts *p)
{
	free(p->x);
	free(p->y);
	memset(p, 0, sizeof(*p));
}

static void one_test(struct html *h, sqlite3_stmt *t)
{
	int64_t test_id = sqlite3_column_int64(t, 0);
	int index = sqlite3_column_int(t, 1);
	int number = sqlite3_column_int(t, 13), attempt = sqlite3_column_int(t, 14);
	char attrs[256], title[256], buf[32];
	struct pts outp = { 0 }, inp = { 0 }, thr = { 0 }, base = { 0 };
	char base_name[128] = "";
	const char *op = txt(t, 3), *dtype = txt(t, 4);
	int passed = strcmp(txt(t, 9), "passed") == 0;

	P(h, "<section class=\"test\" id=\"test-%d\">\n<h3>test %d", index,
	  number);
	if (attempt > 1)
		P(h, " (attempt %d)", attempt);
	P(h, ": ");
	E(h, txt(t, 2));
	P(h, " ");
	E(h, dtype);
	if (!isnull(t, 5)) {
		P(h, " ");
		E(h, txt(t, 5));
	}
	P(h, ", scope ");
	E(h, txt(t, 6));
	if (!isnull(t, 16)) {
		P(h, ", via ");
		E(h, txt(t, 16));
	}
	if (!isnull(t, 12)) {
		P(h, ", ranks ");
		E(h, txt(t, 12));
	}
	P(h, " &mdash; <span class=\"%s\">%s</span>", passed ? "pass" : "fail",
	  passed ? "&#10004; passed" : "&#10008; FAILED");
	if (!passed && *txt(t, 10)) {
		P(h, ": ");
		E(h, txt(t, 10));
	}
	P(h, "</h3>\n");

	sqlite3_stmt *m = prep(h,
		"SELECT size_bytes, in_place, busbw_gbs, algbw_gbs, time_us, "
		" wrong FROM measurements WHERE test_id = ?2 "
		"ORDER BY size_bytes, in_place");
	if (!m)
		return;
	sqlite3_bind_int64(m, 2, test_id);
	struct sd_buf tab = { 0 };
	int nsizes = 0;
	double last = -1;
	/* one table row per size: out of place, then in place */
	struct { int have; double bw, alg, us; } row[2] = { { 0 } };
	long long wrong = 0;
	for (int more = 1; more;) {
		more = sqlite3_step(m) == SQLITE_ROW;
		double size = more ? sqlite3_column_double(m, 0) : -2;
		if (size != last && last >= 0) {
			size_text(last, buf, sizeof(buf));
			if (sd_buf_printf(&tab, "<tr><td>%s</td>", buf))
				h->oom = 1;
			for (int k = 0; k < 2; k++)
				if (row[k].have ? sd_buf_printf(&tab,
					"<td>%.3f</td><td>%.3f</td><td>%.2f</td>",
					row[k].bw, row[k].alg, row[k].us)
				    : sd_buf_printf(&tab, "<td>-</td><td>-</td>"
						    "<td>-</td>"))
					h->oom = 1;
			if (sd_buf_printf(&tab, "<td%s>%lld</td></tr>\n",
					  wrong ? " class=\"fail\"" : "", wrong))
				h->oom = 1;
			memset(row, 0, sizeof(row));
			wrong = 0;
		}
		if (!more)
			break;
		if (size != last)
			nsizes++;
		last = size;
		int inpl = sqlite3_column_int(m, 1) != 0;
		double bw = sqlite3_column_double(m, 2);
		if (push(inpl ? &inp : &outp, size, bw))
			h->oom = 1;
		row[inpl].have = 1;
		row[inpl].bw = bw;
		row[inpl].alg = sqlite3_column_double(m, 3);
		row[inpl].us = sqlite3_column_double(m, 4);
		wrong += sqlite3_column_int64(m, 5);
	}
	sqlite3_finalize(m);

	/* the expectation: a busbw floor per size (or one for all) */
	sqlite3_stmt *v = prep(h,
		"SELECT size_bytes, max(threshold) FROM verdicts "
		"WHERE test_id = ?2 AND expectation = 'busbw' "
		" AND threshold IS NOT NULL AND subject_kind = 'job' "
		"GROUP BY size_bytes ORDER BY size_bytes");
	if (v) {
		sqlite3_bind_int64(v, 2, test_id);
		while (sqlite3_step(v) == SQLITE_ROW)
			if (push(&thr, sqlite3_column_double(v, 0),
				 sqlite3_column_double(v, 1)))
				h->oom = 1;
	}
	sqlite3_finalize(v);
	/* the newest stored baseline of the same kind of test */
	sqlite3_stmt *bl = prep(h,
		"SELECT b.name, bv.size_bytes, bv.busbw_gbs "
		"FROM baseline_values bv JOIN baselines b "
		" ON b.id = bv.baseline_id "
		"WHERE b.id = (SELECT b2.id FROM baselines b2 JOIN "
		" baseline_values x ON x.baseline_id = b2.id WHERE x.op = ?2 "
		" AND x.dtype = ?3 AND x.redop = ?4 AND x.scope = ?5 "
		" ORDER BY b2.created_at DESC, b2.id DESC LIMIT 1) "
		" AND bv.op = ?2 AND bv.dtype = ?3 AND bv.redop = ?4 "
		" AND bv.scope = ?5 AND bv.in_place = 0 ORDER BY bv.size_bytes");
	if (bl) {
		sqlite3_bind_text(bl, 2, op, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(bl, 3, dtype, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(bl, 4, txt(t, 5), -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(bl, 5, txt(t, 6), -1, SQLITE_TRANSIENT);
		while (sqlite3_step(bl) == SQLITE_ROW) {
			snprintf(base_name, sizeof(base_name), "baseline %s",
				 txt(bl, 0));
			if (push(&base, sqlite3_column_double(bl, 1),
				 sqlite3_column_double(bl, 2)))
				h->oom = 1;
		}
	}
	sqlite3_finalize(bl);

	struct series s[4];
	int ns = 0;
	s[ns++] = (struct series){ "out-of-place", C_BLUE, NULL, SH_CIRCLE,
				   "pt", "out-of-place", outp.n, outp.x,
				   outp.y };
	if (inp.n)
		s[ns++] = (struct series){ "in-place", C_VERMILLION, "6,3",
					   SH_SQUARE, "pt", "in-place", inp.n,
					   inp.x, inp.y };
	if (thr.n)
		s[ns++] = (struct series){ "expected busbw floor", "#000",
					   "2,3", SH_NONE, NULL, NULL, thr.n,
					   thr.x, thr.y };
	if (base.n)
		s[ns++] = (struct series){ base_name, C_GREEN, "8,3,2,3",
					   SH_NONE, NULL, NULL, base.n, base.x,
					   base.y };
	/* op and dtype are plan names ([a-z0-9_]); escaped all the same */
	struct html tmp = { 0 };
	E(&tmp, op);
	snprintf(attrs, sizeof(attrs), "data-op=\"%s\" data-test=\"%d\" "
		 "data-sizes=\"%d\"", tmp.b.data ? tmp.b.data : "", index,
		 nsizes);
	sd_buf_free(&tmp.b);
	snprintf(title, sizeof(title), "test %d: %s %s bus bandwidth by size",
		 number, op, dtype);
	struct axes a = { .logx = 1, .xlabel = "message size (bytes, log scale)",
			  .ylabel = "bus bandwidth (GB/s)" };
	P(h, "<div class=\"op\">\n<figure>");
	if (outp.n || inp.n)
		plot(h, "plot", attrs, title, &a, s, ns);
	else
		P(h, "<p>no measurements</p>");
	P(h, "</figure>\n<table class=\"numbers\" data-test=\"%d\"><caption>"
	  "test %d measurements</caption><tr><th rowspan=\"2\">size</th>"
	  "<th colspan=\"3\">out of place</th><th colspan=\"3\">in place"
	  "</th><th rowspan=\"2\">wrong</th></tr><tr><th>busbw GB/s</th>"
	  "<th>algbw GB/s</th><th>time &micro;s</th><th>busbw GB/s</th>"
	  "<th>algbw GB/s</th><th>time &micro;s</th></tr>\n", index, number);
	if (tab.data)
		P(h, "%s", tab.data);
	P(h, "</table>\n");
	if (thr.n || base.n) {
		P(h, "<table><caption>references</caption><tr><th>size</th>"
		  "<th>expected floor GB/s</th><th>");
		E(h, base.n ? base_name : "baseline");
		P(h, " GB/s</th></tr>\n");
		for (int i = 0; i < thr.n || i < base.n; i++) {
			double sz = i < thr.n ? thr.x[i] : base.x[i];
			size_text(sz, buf, sizeof(buf));
			P(h, "<tr><td class=\"n\">%s</td><td class=\"n\">", buf);
			if (i < thr.n)
				P(h, "%.3f", thr.y[i]);
			P(h, "</td><td class=\"n\">");
			if (i < base.n)
				P(h, "%.3f", base.y[i]);
			P(h, "</td></tr>\n");
		}
		P(h, "</table>\n");
	}
	P(h, "</div>\n</section>\n");
	sd_buf_free(&tab);
	pts_free(&outp);
	pts_free(&inp);
	pts_free(&thr);
	pts_free(&base);
}

static void tests(struct html *h)
{
	if (!count(h, "SELECT count(*) FROM tests WHERE run_id = ?1"))
		return;
	P(h, "<h2 id=\"operations\">Per operation</h2>\n");
	sqlite3_stmt *t = prep(h,
		"SELECT test_id, test_index, name, op, dtype, redop, scope, "
		" nranks, measurements, verdict, verdict_reason, wrong, members, "
		" number, attempt, outcome, variant "
		"FROM tests_v WHERE run_id = ?1 ORDER BY test_index");
	while (t && sqlite3_step(t) == SQLITE_ROW && !h->oom)
		one_test(h, t);
	sqlite3_finalize(t);
}

/* --- per subject: bars against the peer median, the pair heatmap --------- */

struct subj {
	char *name, *hosts;
	double v;
	double ref; /* the median its verdict judged it by */
	int failed;
};

static int by_ratio(const void *a, const void *b)
{
	const struct subj *x = a, *y = b;
	return (x->v > y->v) - (x->v < y->v);
}

/* The subjects of one plan test (its name, dtype and scope: a block
 * measured again is a test row of its own, its verdict with it), of one
 * expectation and size. */
static void subject_bars(struct html *h, const char *name,
			 const char *dtype, const char *scope, int index,
			 const char *kind, const char *expectation,
			 double size, const char *unit)
{
	sqlite3_stmt *st = prep(h,
		"SELECT v.subject, v.hosts, v.measured, v.status = 'failed' "
		"FROM verdicts v JOIN tests t ON t.id = v.test_id "
		"WHERE v.run_id = ?1 AND t.name = ?2 AND t.dtype = ?6 "
		" AND t.scope = ?7 AND v.subject_kind = ?3 "
		" AND v.expectation = ?4 AND v.size_bytes IS ?5 "
		" AND v.measured IS NOT NULL ORDER BY v.id");
	if (!st)
		return;
	sqlite3_bind_text(st, 2, name, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 6, dtype, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 7, scope, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 3, kind, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 4, expectation, -1, SQLITE_TRANSIENT);
	if (size >= 0)
		sqlite3_bind_double(st, 5, size);
	struct subj *v = NULL;
	int n = 0, cap = 0, nfail = 0;
	while (sqlite3_step(st) == SQLITE_ROW) {
		if (n == cap) {
			cap = cap ? 2 * cap : 32;
			struct subj *nv = realloc(v, cap * sizeof(*v));
			if (!nv) {
				h->oom = 1;
				break;
			}
			v = nv;
		}
		v[n].name = strdup(txt(st, 0));
		v[n].hosts = strdup(txt(st, 1));
		v[n].v = sqlite3_column_double(st, 2);
		v[n].failed = sqlite3_column_int(st, 3);
		nfail += v[n].failed;
		if (!v[n].name || !v[n].hosts)
			h->oom = 1;
		n++;
	}
	sqlite3_finalize(st);
	double *vals = n ? malloc(n * sizeof(double)) : NULL;
	if (n && !vals)
		h->oom = 1;
	if (n < 2 || !vals || h->oom)
		goto out;
	for (int i = 0; i < n; i++)
		vals[i] = v[i].v;
	/* sd_median sorts vals: its ends are the lowest and highest */
	double med = sd_median(vals, n), lo = vals[0], hi = vals[n - 1];
	char sz[32] = "";
	if (size >= 0)
		size_text(size, sz, sizeof(sz));
	/* Shown: all, or (more than MAX_BARS) the failed ones and the
	 * farthest from the median, lowest first. */
	qsort(v, n, sizeof(*v), by_ratio);
	int shown = n;
	unsigned char *show = calloc(n, 1);
	if (!show) {
		h->oom = 1;
		goto out;
	}
	if (n <= SD_REPORT_HTML_MAX_BARS) {
		memset(show, 1, n);
	} else {
		shown = 0;
		for (int i = 0; i < n && shown < SD_REPORT_HTML_MAX_BARS; i++)
			if (v[i].failed) {
				show[i] = 1;
				shown++;
			}
		/* then the extremes, alternating low and high */
		for (int lo_i = 0, hi_i = n - 1;
		     shown < SD_REPORT_HTML_MAX_BARS && lo_i <= hi_i;) {
			if (!show[lo_i]) {
				show[lo_i] = 1;
				shown++;
			}
			lo_i++;
			if (shown < SD_REPORT_HTML_MAX_BARS && !show[hi_i]) {
				show[hi_i] = 1;
				shown++;
			}
			hi_i--;
		}
	}
	/* each against the median its verdict judged it by: peers, the
	 * others' (sd_median_without: the numbers of its reason); else all */
	int peers = strcmp(expectation, "peers") == 0;
	for (int i = 0; i < n; i++)
		if (show[i])
			v[i].ref = peers ? sd_median_without(vals, n, v[i].v)
					 : med;
	P(h, "<h3>test %d: %s %s", index, kind, expectation);
	if (*sz)
		P(h, " at %s", sz);
	P(h, "</h3>\n<p class=\"summary\">%d subjects, %d failed; median "
	  "%.4g, lowest %.4g, highest %.4g ", n, nfail, med, lo, hi);
	E(h, unit);
	if (shown < n)
		P(h, "; %d drawn (every failed one, then the farthest from the "
		  "median)", shown);
	P(h, "</p>\n");
	int bh = 14, lw = 200, bw = 420, w = lw + bw + 80;
	int ht = shown * (bh + 4) + 30;
	double top = fmax(hi, med) * 1.05;
	if (top <= 0)
		top = 1;
	P(h, "<svg class=\"bars\" data-test=\"%d\" data-subjects=\"%d\" "
	  "data-shown=\"%d\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
	  "role=\"img\" aria-label=\"each subject against the median\" "
	  "xmlns=\"http://www.w3.org/2000/svg\">\n<defs><pattern id=\"hatch-%d"
	  "-%s\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" "
	  "patternTransform=\"rotate(45)\"><rect width=\"6\" height=\"6\" "
	  "fill=\"" C_VERMILLION "\"/><line x1=\"0\" y1=\"0\" x2=\"0\" "
	  "y2=\"6\" stroke=\"#fff\" stroke-width=\"2\"/></pattern></defs>\n",
	  index, n, shown, w, ht, w, ht, index, expectation);
	int row = 0;
	for (int i = 0; i < n; i++) {
		if (!show[i])
			continue;
		int y = 4 + row++ * (bh + 4);
		double len = v[i].v / top * bw;
		P(h, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\" "
		  "font-size=\"11\">", lw - 4, y + bh - 3);
		E(h, v[i].name);
		P(h, "</text><rect class=\"bar%s\" x=\"%d\" y=\"%d\" "
		  "width=\"%.1f\" height=\"%d\" fill=\"%s\" data-value=\"%.6g\">"
		  "<title>", v[i].failed ? " failed" : "", lw, y,
		  len > 0 ? len : 0, bh,
		  v[i].failed ? C_VERMILLION : C_SKY, v[i].v);
		E(h, v[i].name);
		double ref = v[i].ref;
		P(h, ": %.4g (%.2f x the median %.4g%s)%s</title></rect>",
		  v[i].v, ref ? v[i].v / ref : 0, ref,
		  peers ? " of the others" : "", v[i].failed ? " FAILED" : "");
		if (v[i].failed)
			P(h, "<rect x=\"%d\" y=\"%d\" width=\"%.1f\" "
			  "height=\"%d\" fill=\"url(#hatch-%d-%s)\"/>", lw, y,
			  len > 0 ? len : 0, bh, index, expectation);
		P(h, "<text x=\"%.1f\" y=\"%d\" font-size=\"11\">%.4g%s</text>\n",
		  lw + (len > 0 ? len : 0) + 4, y + bh - 3, v[i].v,
		  v[i].failed ? " FAIL" : "");
	}
	double mx = lw + med / top * bw;
	P(h, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"0\" y2=\"%d\" stroke=\"#000\" "
	  "stroke-dasharray=\"4,2\"/><text x=\"%.1f\" y=\"%d\" "
	  "font-size=\"11\" text-anchor=\"middle\">median %.4g</text></svg>\n",
	  mx, mx, ht - 18, mx, ht - 6, med);
	/* the numbers of what was drawn */
	P(h, "<table><tr><th>subject</th><th>hosts</th><th>measured</th>"
	  "<th>/ median%s</th><th>verdict</th></tr>\n",
	  peers ? " of the others" : "");
	for (int i = 0; i < n; i++) {
		if (!show[i])
			continue;
		double others = v[i].ref;
		P(h, "<tr><td>");
		E(h, v[i].name);
		P(h, "</td><td>");
		E(h, v[i].hosts);
		P(h, "</td><td class=\"n\">%.4g</td><td class=\"n\">%.2f</td>"
		  "<td%s>%s</td></tr>\n", v[i].v, others ? v[i].v / others : 0,
		  v[i].failed ? " class=\"fail\"" : "",
		  v[i].failed ? "FAILED" : "passed");
	}
	P(h, "</table>\n");

	/* node pairs: a heatmap of each pair against the median */
	if (strcmp(kind, "node-pair") == 0) {
		char **hn = NULL;
		int nh = 0;
		/* hosts of the pairs that failed or are off the median by
		 * 10 %, first; then the others while there is room */
		for (int pass = 0; pass < 2; pass++)
			for (int i = 0; i < n; i++) {
				int odd = v[i].failed ||
					  fabs(v[i].v - med) > 0.1 * med;
				if (pass == 0 ? !odd : odd)
					continue;
				char *c = strchr(v[i].name, ',');
				for (int e = 0; c && e < 2; e++) {
					const char *nm = e ? c + 1 : v[i].name;
					size_t nl = e ? strlen(nm)
						      : (size_t)(c - v[i].name);
					int found = 0;
					for (int k = 0; k < nh && !found; k++)
						found = strlen(hn[k]) == nl &&
							!strncmp(hn[k], nm, nl);
					if (found ||
					    nh >= SD_REPORT_HTML_MAX_HEAT)
						continue;
					char **nv = realloc(hn, (nh + 1) *
							    sizeof(*hn));
					if (!nv) {
						h->oom = 1;
						continue;
					}
					hn = nv;
					hn[nh] = strndup(nm, nl);
					if (!hn[nh])
						h->oom = 1;
					else
						nh++;
				}
			}
		int cell = nh > 24 ? 10 : 18, lab = 120;
		int hw = lab + nh * cell + 10;
		P(h, "<p>node-pair heatmap: %d of the run's hosts (those of "
		  "failed or outlying pairs first); a cell is the pair's result "
		  "over the median, darker is lower; &#10008; marks a failed "
		  "pair, blank: not measured</p>\n", nh);
		P(h, "<svg class=\"heatmap\" data-test=\"%d\" data-hosts=\"%d\" "
		  "width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\" "
		  "aria-label=\"node pairs against the median\" "
		  "xmlns=\"http://www.w3.org/2000/svg\">\n", index, nh, hw,
		  hw, hw, hw);
		for (int r = 0; r < nh; r++) {
			P(h, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\" "
			  "font-size=\"%d\">", lab - 3,
			  lab + r * cell + cell - 2, cell - 2);
			E(h, hn[r]);
			P(h, "</text><text transform=\"translate(%d,%d) "
			  "rotate(-90)\" font-size=\"%d\">",
			  lab + r * cell + cell - 2, lab - 3, cell - 2);
			E(h, hn[r]);
			P(h, "</text>\n");
		}
		/* a sequential ramp from the palette's blue: light = at the
		 * median, dark = far below */
		for (int i = 0; i < n; i++) {
			char *c = strchr(v[i].name, ',');
			if (!c)
				continue;
			int a = -1, b = -1;
			size_t al = (size_t)(c - v[i].name);
			for (int k = 0; k < nh; k++) {
				if (strlen(hn[k]) == al &&
				    !strncmp(hn[k], v[i].name, al))
					a = k;
				if (!strcmp(hn[k], c + 1))
					b = k;
			}
			if (a < 0 || b < 0)
				continue;
			double q = med > 0 ? v[i].v / med : 1;
			double t = q >= 1 ? 0 : q <= 0.5 ? 1 : (1 - q) * 2;
			int rr = (int)(230 - t * 230), gg = (int)(240 - t * 126),
			    bb = (int)(250 - t * 72);
			for (int e = 0; e < 2; e++) {
				int x = e ? b : a, y = e ? a : b;
				P(h, "<rect class=\"cell%s\" x=\"%d\" y=\"%d\" "
				  "width=\"%d\" height=\"%d\" "
				  "fill=\"rgb(%d,%d,%d)\" stroke=\"#fff\">"
				  "<title>", v[i].failed ? " failed" : "",
				  lab + x * cell, lab + y * cell, cell, cell,
				  rr, gg, bb);
				E(h, v[i].name);
				P(h, ": %.4g, %.2f x median%s</title></rect>",
				  v[i].v, q, v[i].failed ? ", FAILED" : "");
				if (v[i].failed)
					P(h, "<text x=\"%d\" y=\"%d\" "
					  "font-size=\"%d\" text-anchor=\"middle\" "
					  "fill=\"" C_VERMILLION "\">&#10008;"
					  "</text>", lab + x * cell + cell / 2,
					  lab + y * cell + cell - 2, cell - 2);
			}
			P(h, "\n");
		}
		P(h, "</svg>\n");
		for (int k = 0; k < nh; k++)
			free(hn[k]);
		free(hn);
	}
	free(show);
out:
	free(vals);
	for (int i = 0; i < n; i++) {
		free(v[i].name);
		free(v[i].hosts);
	}
	free(v);
}

static void subjects(struct html *h)
{
	if (!count(h, "SELECT count(*) FROM verdicts WHERE run_id = ?1 AND "
		      "subject_kind <> 'job' AND measured IS NOT NULL"))
		return;
	P(h, "<h2 id=\"subjects\">Per node and per link</h2>\n<p>Each "
	  "subject's result (a node, a group of ranks, a GPU or node pair, a "
	  "rail) against the median of its peers, for every test and "
	  "expectation with more than one subject.  The bar of a subject "
	  "that failed is hatched and says FAIL.</p>\n");
	/* the largest size of each: that is what the verdict looks at */
	sqlite3_stmt *st = prep(h,
		"SELECT t.name, t.dtype, t.scope, "
		" min(coalesce(t.plan_test, t.test_index + 1)), "
		" v.subject_kind, v.expectation, "
		" coalesce(max(v.size_bytes), -1), max(v.unit) "
		"FROM verdicts v JOIN tests t ON t.id = v.test_id "
		"WHERE v.run_id = ?1 AND v.subject_kind <> 'job' "
		" AND v.measured IS NOT NULL "
		"GROUP BY t.name, t.dtype, t.scope, v.subject_kind, "
		" v.expectation HAVING count(DISTINCT v.subject) > 1 "
		"ORDER BY min(t.test_index)");
	while (st && sqlite3_step(st) == SQLITE_ROW && !h->oom) {
		/* st's texts stay valid until it steps again: subject_bars
		 * runs statements of its own */
		int index = sqlite3_column_int(st, 3);
		double size = sqlite3_column_double(st, 6);
		subject_bars(h, txt(st, 0), txt(st, 1), txt(st, 2), index,
			     txt(st, 4), txt(st, 5), size, txt(st, 7));
	}
	sqlite3_finalize(st);
}

/* --- history: the same operation on the same nodes ----------------------- */

static void history(struct html *h)
{
	sqlite3_stmt *st = prep(h,
		"SELECT t.op, t.dtype, max(m.size_bytes), j.nodelist, "
		" r.started_at FROM tests t JOIN measurements m "
		" ON m.test_id = t.id JOIN runs r ON r.id = t.run_id "
		" LEFT JOIN jobs j ON j.run_id = r.id WHERE t.run_id = ?1 "
		"GROUP BY t.op, t.dtype ORDER BY min(t.test_index)");
	int titled = 0;
	while (st && sqlite3_step(st) == SQLITE_ROW && !h->oom) {
		const char *nodes = txt(st, 3), *until = txt(st, 4);
		sqlite3_stmt *q = NULL;
		if (sqlite3_prepare_v2(h->db, sd_db_history_sql, -1, &q,
				       NULL) != SQLITE_OK) {
			snprintf(h->err, h->errlen, "history query failed: %s",
				 sqlite3_errmsg(h->db));
			h->failed = 1;
			break;
		}
		sqlite3_bind_text(q, 1, txt(st, 0), -1, SQLITE_TRANSIENT);
		sqlite3_bind_int64(q, 2, sqlite3_column_int64(st, 2));
		sqlite3_bind_text(q, 3, txt(st, 1), -1, SQLITE_TRANSIENT);
		struct pts p = { 0 };
		struct sd_buf tab = { 0 };
		/* the history query's columns: started_at, run_uuid,
		 * run_status, nodelist, nranks, dtype, size_bytes, busbw_gbs */
		while (sqlite3_step(q) == SQLITE_ROW) {
			if (strcmp(txt(q, 3), nodes) != 0 ||
			    strcmp(txt(q, 0), until) > 0)
				continue;
			if (push(&p, p.n, sqlite3_column_double(q, 7)))
				h->oom = 1;
			struct html e = { 0 };
			E(&e, txt(q, 1));
			if (sd_buf_printf(&tab, "<tr><td>%d</td><td>%.19s</td>"
					  "<td>%.8s</td><td>%s</td><td "
					  "class=\"n\">%.3f</td></tr>\n", p.n,
					  txt(q, 0), e.b.data ? e.b.data : "",
					  strcmp(txt(q, 2), "passed") ? "failed"
					  : "passed",
					  sqlite3_column_double(q, 7)))
				h->oom = 1;
			sd_buf_free(&e.b);
		}
		sqlite3_finalize(q);
		if (p.n >= 2) {
			char title[160], sz[32], attrs[160];
			size_text(sqlite3_column_double(st, 2), sz, sizeof(sz));
			if (!titled) {
				P(h, "<h2 id=\"history\">History</h2>\n<p>The "
				  "best bus bandwidth at the run's largest size, "
				  "run by run, of every recorded run on the same "
				  "nodes up to this one (the last point).</p>\n");
				titled = 1;
			}
			snprintf(title, sizeof(title), "%s %s at %s: history",
				 txt(st, 0), txt(st, 1), sz);
			struct html e = { 0 };
			E(&e, txt(st, 0));
			snprintf(attrs, sizeof(attrs), "data-history=\"%s\" "
				 "data-runs=\"%d\"", e.b.data ? e.b.data : "",
				 p.n);
			sd_buf_free(&e.b);
			struct series s = { "best busbw per run", C_BLUE, NULL,
					    SH_CIRCLE, "hpt", NULL, p.n, p.x,
					    p.y };
			struct axes a = { .xlabel = "run (oldest first)",
					  .ylabel = "bus bandwidth (GB/s)" };
			P(h, "<div class=\"op\"><figure><figcaption>");
			E(h, title);
			P(h, "</figcaption>");
			/* class history, not plot: plots are per size */
			plot(h, "history", attrs, title, &a, &s, 1);
			P(h, "</figure><table><tr><th>#</th><th>started</th>"
			  "<th>run</th><th>status</th><th>busbw GB/s</th></tr>"
			  "\n%s</table></div>\n", tab.data ? tab.data : "");
		}
		pts_free(&p);
		sd_buf_free(&tab);
	}
	sqlite3_finalize(st);
}

/* --- training and gemm ----------------------------------------------------- */

static void training(struct html *h)
{
	sqlite3_stmt *st = prep(h,
		"SELECT config, reference_name, verdict, verdict_reason, tgs, "
		" tflops, mfu, steps, device_name, devices "
		"FROM train_summary_v WHERE run_id = ?1");
	if (!st || sqlite3_step(st) != SQLITE_ROW) {
		sqlite3_finalize(st);
		return;
	}
	P(h, "<h2 id=\"training\">Training</h2>\n<dl><dt>workload</dt><dd>");
	E(h, txt(st, 0));
	P(h, "</dd><dt>device</dt><dd>");
	E(h, isnull(st, 8) ? "-" : txt(st, 8));
	P(h, " x %s</dd><dt>reference</dt><dd>", isnull(st, 9) ? "?" :
						  txt(st, 9));
	E(h, isnull(st, 1) ? "none" : txt(st, 1));
	/* no verdict: not judged (no reference, another seed's, too few
	 * steps), its reason saying why; neither pass nor fail */
	P(h, "</dd><dt>verdict</dt><dd class=\"%s\">",
	  isnull(st, 2)			       ? "skip"
	  : strcmp(txt(st, 2), "passed") ? "fail"
					       : "pass");
	if (isnull(st, 2)) {
		E(h, isnull(st, 3) ? "not judged" : txt(st, 3));
	} else {
		E(h, txt(st, 2));
		if (!isnull(st, 3)) {
			P(h, ": ");
			E(h, txt(st, 3));
		}
	}
	char num[3][32];
	for (int k = 0; k < 3; k++)
		if (isnull(st, 4 + k))
			snprintf(num[k], sizeof(num[k]), "-");
		else
			snprintf(num[k], sizeof(num[k]), k == 2 ? "%.2f%%" : "%.4g",
				 sqlite3_column_double(st, 4 + k) *
					 (k == 2 ? 100 : 1));
	P(h, "</dd><dt>tokens/s per device (tgs)</dt><dd>%s</dd>"
	  "<dt>TFLOPs per device</dt><dd>%s</dd><dt>MFU</dt><dd>%s</dd>"
	  "</dl>\n", num[0], num[1], num[2]);
	sqlite3_finalize(st);

	/* the loss curve and its reference (every k-th step past 1000) */
	long nsteps = count(h, "SELECT count(*) FROM train_loss_v "
			       "WHERE run_id = ?1");
	long every = nsteps > 1000 ? (nsteps + 999) / 1000 : 1;
	sqlite3_stmt *l = prep(h,
		"SELECT step, loss, ref_loss_mean FROM (SELECT step, loss, "
		" ref_loss_mean, row_number() OVER (ORDER BY step) - 1 AS k "
		" FROM train_loss_v WHERE run_id = ?1) WHERE k % ?2 = 0 "
		"ORDER BY step");
	struct pts loss = { 0 }, ref = { 0 };
	struct sd_buf tab = { 0 };
	if (l)
		sqlite3_bind_int64(l, 2, every);
	while (l && sqlite3_step(l) == SQLITE_ROW) {
		double step = sqlite3_column_double(l, 0);
		if (!isnull(l, 1) && push(&loss, step,
					  sqlite3_column_double(l, 1)))
			h->oom = 1;
		if (!isnull(l, 2) && push(&ref, step,
					  sqlite3_column_double(l, 2)))
			h->oom = 1;
		if (sd_buf_printf(&tab, "<tr><td class=\"n\">%.0f</td><td "
				  "class=\"n\">%s</td><td class=\"n\">%s"
				  "</td></tr>\n", step, txt(l, 1), txt(l, 2)))
			h->oom = 1;
	}
	sqlite3_finalize(l);
	if (loss.n) {
		struct series s[2] = {
			{ "loss", C_BLUE, NULL, SH_CIRCLE, "lpt", NULL, loss.n,
			  loss.x, loss.y },
			{ "reference mean loss", "#000", "4,3", SH_NONE, NULL,
			  NULL, ref.n, ref.x, ref.y },
		};
		struct axes a = { .xlabel = "step", .ylabel = "loss" };
		char attrs[64];
		snprintf(attrs, sizeof(attrs), "data-loss=\"%d\"", loss.n);
		P(h, "<div class=\"op\"><figure>");
		plot(h, "loss", attrs, "loss against the reference", &a, s,
		     ref.n ? 2 : 1);
		P(h, "</figure><details><summary>the loss, step by step%s"
		  "</summary><table><tr><th>step</th><th>loss</th><th>"
		  "reference</th></tr>\n%s</table></details></div>\n",
		  every > 1 ? " (every few steps)" : "",
		  tab.data ? tab.data : "");
	}
	pts_free(&loss);
	pts_free(&ref);
	sd_buf_free(&tab);

	/* per device */
	sqlite3_stmt *d = prep(h,
		"SELECT coalesce(host, '-'), coalesce(rank, -1), name, unit, "
		" value FROM train_metrics WHERE run_id = ?1 AND (host IS NOT "
		" NULL OR rank IS NOT NULL) AND name IN ('tgs', 'tflops', "
		" 'mfu', 'step_s_median') ORDER BY rank, host, name");
	int any = 0;
	while (d && sqlite3_step(d) == SQLITE_ROW) {
		if (!any++)
			P(h, "<table><caption>per device</caption><tr><th>host"
			  "</th><th>rank</th><th>metric</th><th>value</th>"
			  "</tr>\n");
		P(h, "<tr><td>");
		E(h, txt(d, 0));
		P(h, "</td><td class=\"n\">%d</td><td>", sqlite3_column_int(d, 1));
		E(h, txt(d, 2));
		P(h, "</td><td class=\"n\">%.4g ", sqlite3_column_double(d, 4));
		E(h, txt(d, 3));
		P(h, "</td></tr>\n");
	}
	if (any)
		P(h, "</table>\n");
	sqlite3_finalize(d);
}

static void gemm(struct html *h)
{
	if (!count(h, "SELECT count(*) FROM gemm_devices WHERE run_id = ?1"))
		return;
	P(h, "<h2 id=\"gemm\">GEMM per device</h2>\n<table><tr><th>rank</th>"
	  "<th>host</th><th>device</th><th>type</th><th>best TFLOPs</th>"
	  "<th>shape</th><th>peer median</th><th>peak</th><th>verdict</th>"
	  "</tr>\n");
	sqlite3_stmt *st = prep(h,
		"SELECT rank, host, device, dtype, best_tflops, best_shape, "
		" peer_median_tflops, peak_tflops, status, reason "
		"FROM gemm_devices WHERE run_id = ?1 ORDER BY dtype, rank");
	while (st && sqlite3_step(st) == SQLITE_ROW) {
		int bad = strcmp(txt(st, 8), "failed") == 0;
		P(h, "<tr><td class=\"n\">%d</td>", sqlite3_column_int(st, 0));
		for (int c = 1; c <= 7; c++) {
			P(h, "<td%s>", c >= 4 && c != 5 ? " class=\"n\"" : "");
			E(h, isnull(st, c) ? "-" : txt(st, c));
			P(h, "</td>");
		}
		P(h, "<td%s>", bad ? " class=\"fail\"" : "");
		E(h, txt(st, 8));
		if (!isnull(st, 9)) {
			P(h, ": ");
			E(h, txt(st, 9));
		}
		P(h, "</td></tr>\n");
	}
	sqlite3_finalize(st);
	P(h, "</table>\n");
}

/* --- failures, in words ---------------------------------------------------- */

/* The failure list: opened by its first item; closed before the failed
 * expectations' table or at the end. */
enum { LIST_NONE, LIST_OPEN, LIST_CLOSED };

static void list_item(struct html *h, int *list)
{
	if (*list == LIST_NONE)
		P(h, "<ul id=\"failure-list\">\n");
	*list = LIST_OPEN;
}

/* Whom the run blames, the bad nodes first, each with its reason (how
 * many subjects it failed and the worst figure against its reference,
 * then the detail). */
static void blamed(struct html *h)
{
	sqlite3_stmt *st = prep(h,
		"SELECT kind, subject, hosts, bad_node, reason FROM suspects "
		"WHERE run_id = ?1 ORDER BY bad_node DESC, kind, subject");
	int n = 0;
	while (st && sqlite3_step(st) == SQLITE_ROW) {
		if (!n++)
			P(h, "<ul id=\"suspects\">\n");
		int bad = sqlite3_column_int(st, 3);
		P(h, "<li class=\"%s\"><b>", bad ? "bad-node" : "suspect");
		E(h, bad ? txt(st, 2) : txt(st, 1));
		P(h, "</b> (%s%s): ", txt(st, 0), bad ? ", bad node" : "");
		E(h, txt(st, 4));
		P(h, "</li>\n");
	}
	sqlite3_finalize(st);
	if (n)
		P(h, "</ul>\n");
}

static void failures(struct html *h)
{
	int list = LIST_NONE, table = 0;
	P(h, "<h2 id=\"failures\">Evidence: what failed</h2>\n");
	blamed(h);
	sqlite3_stmt *st = prep(h, "SELECT status, exit_status, message FROM "
				   "runs WHERE id = ?1 AND status NOT IN "
				   "('passed', 'running') AND message IS NOT "
				   "NULL");
	if (st && sqlite3_step(st) == SQLITE_ROW) {
		list_item(h, &list);
		P(h, "<li class=\"run-failure\">The run ");
		E(h, txt(st, 0));
		P(h, " (exit status %s): ", txt(st, 1));
		E(h, txt(st, 2));
		P(h, "</li>\n");
	}
	sqlite3_finalize(st);
	st = prep(h,
		"SELECT coalesce(t.plan_test, t.test_index + 1), t.name, t.dtype, "
		" m.size_bytes, m.in_place,"
		" m.wrong, m.first_wrong_rank, m.first_wrong_index, "
		" m.first_wrong_expected, m.first_wrong_got "
		"FROM measurements m JOIN tests t ON t.id = m.test_id "
		"WHERE t.run_id = ?1 AND m.wrong > 0 "
		"ORDER BY t.test_index, m.size_bytes, m.in_place");
	while (st && sqlite3_step(st) == SQLITE_ROW) {
		char sz[32];
		size_text(sqlite3_column_double(st, 3), sz, sizeof(sz));
		list_item(h, &list);
		P(h, "<li class=\"wrong-data\">Wrong data in test %d (",
		  sqlite3_column_int(st, 0));
		E(h, txt(st, 1));
		P(h, " ");
		E(h, txt(st, 2));
		P(h, ") at %s %s: %lld wrong element%s; the first at rank %s, "
		  "index %s: expected ", sz,
		  sqlite3_column_int(st, 4) ? "in-place" : "out-of-place",
		  (long long)sqlite3_column_int64(st, 5),
		  sqlite3_column_int64(st, 5) == 1 ? "" : "s",
		  isnull(st, 6) ? "?" : txt(st, 6),
		  isnull(st, 7) ? "?" : txt(st, 7));
		E(h, txt(st, 8));
		P(h, ", got ");
		E(h, txt(st, 9));
		P(h, ".</li>\n");
	}
	sqlite3_finalize(st);
	st = prep(h, "SELECT coalesce(plan_test, test_index + 1), name, "
		     "status, message FROM tests "
		     "WHERE run_id = ?1 AND status NOT IN ('passed', "
		     "'skipped') AND message IS NOT NULL ORDER BY test_index");
	while (st && sqlite3_step(st) == SQLITE_ROW) {
		list_item(h, &list);
		P(h, "<li class=\"test-error\">Test %d (", sqlite3_column_int(st, 0));
		E(h, txt(st, 1));
		P(h, ") ");
		E(h, txt(st, 2));
		P(h, ": ");
		E(h, txt(st, 3));
		P(h, "</li>\n");
	}
	sqlite3_finalize(st);
	/* hangs and lost ranks are the node suspects' reasons */
	st = prep(h, "SELECT kind, subject, hosts, bad_node, reason FROM "
		     "suspects WHERE run_id = ?1 ORDER BY bad_node DESC, kind, "
		     "subject");
	while (st && sqlite3_step(st) == SQLITE_ROW) {
		const char *r = txt(st, 4);
		const char *cls = strstr(r, "did not complete") ? "hang"
				  : strstr(r, "was lost") ? "lost-rank"
							  : "suspect";
		list_item(h, &list);
		P(h, "<li class=\"%s\">%s ", cls,
		  sqlite3_column_int(st, 3) ? "Bad" : "Suspect");
		E(h, txt(st, 0));
		P(h, " ");
		E(h, txt(st, 1));
		P(h, ": ");
		E(h, r);
		P(h, "</li>\n");
	}
	sqlite3_finalize(st);
	st = prep(h, "SELECT coalesce(t.plan_test, t.test_index + 1), "
		     "v.subject_kind || ' ' || v.subject,"
		     " v.expectation, v.size_bytes, v.measured, v.threshold, "
		     " v.unit, v.attempts, v.reason FROM verdicts v LEFT JOIN "
		     " tests t ON t.id = v.test_id WHERE v.run_id = ?1 AND "
		     " v.status = 'failed' ORDER BY v.id LIMIT 2000");
	while (st && sqlite3_step(st) == SQLITE_ROW) {
		char sz[32] = "-";
		if (!table) {
			list_item(h, &list); /* the list, empty or not, first */
			P(h, "</ul>\n<table id=\"failed-expectations\"><caption>"
			  "failed expectations</caption><tr><th>test</th><th>"
			  "subject</th><th>expectation</th><th>size</th><th>"
			  "measured</th><th>threshold</th><th>attempts</th>"
			  "<th>reason</th></tr>\n");
			list = LIST_CLOSED;
			table = 1;
		}
		if (!isnull(st, 3))
			size_text(sqlite3_column_double(st, 3), sz, sizeof(sz));
		P(h, "<tr><td class=\"n\">%s</td><td>", txt(st, 0));
		E(h, txt(st, 1));
		P(h, "</td><td>");
		E(h, txt(st, 2));
		P(h, "</td><td class=\"n\">%s</td><td class=\"n\">%.4g ", sz,
		  sqlite3_column_double(st, 4));
		E(h, txt(st, 6));
		P(h, "</td><td class=\"n\">%.4g</td><td class=\"n\">%d</td><td>",
		  sqlite3_column_double(st, 5), sqlite3_column_int(st, 7));
		E(h, txt(st, 8));
		P(h, "</td></tr>\n");
	}
	sqlite3_finalize(st);
	if (table)
		P(h, "</table>\n");
	else if (list == LIST_OPEN)
		P(h, "</ul>\n");
	else
		P(h, "<p id=\"no-failures\">None: every element was right, no "
		  "rank hung or was lost, and no expectation failed.</p>\n");
}

int sd_report_html(sqlite3 *db, const char *run_ref, char **html,
		   size_t *len, char *err, size_t errlen)
{
	char uuid[37];
	struct html h = { .db = db, .err = err, .errlen = errlen };
	int is_train = 0;
	*html = NULL;
	*len = 0;
	int rc = sd_db_find_run(db, run_ref, &h.run_id, uuid, err, errlen);
	if (rc != SD_OK)
		return rc;
	/* the verdict and its evidence first, then the run, then the plots */
	head(&h, &is_train);
	if (!is_train)
		tests(&h);
	subjects(&h);
	if (!is_train)
		history(&h);
	training(&h);
	gemm(&h);
	P(&h, "<footer><p>Made by shakedown from the results database; the "
	  "numbers of every plot are in the table beside it.</p></footer>\n"
	  "</body>\n</html>\n");
	if (h.failed || h.oom) {
		if (h.oom)
			snprintf(err, errlen, "out of memory building the HTML "
				 "report");
		sd_buf_free(&h.b);
		return SD_ERR_IO;
	}
	*html = h.b.data;
	*len = h.b.len;
	return SD_OK;
}
