/*
 * verdict.c - judge subjects against expectations, and blame (verdict.h).
 */
#include "config.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"
#include "verdict.h"

static const char *const subject_kinds[] = { "job", "group", "node",
					     "gpu-pair", "node-pair", "rail" };
static const char *const expect_kinds[] = { "data", "busbw", "time", "peers",
					    "mad", "baseline", "link", "path" };
static const char *const judged[] = { "none", "passed", "failed", "skipped" };
static const char *const suspect_kinds[] = { "node", "link", "path", "rail",
					     "group" };

const char *sd_subject_kind_name(enum sd_subject_kind k)
{
	return (unsigned)k < 6 ? subject_kinds[k] : "?";
}

enum sd_subject_kind sd_subject_kind_of(const char *scope)
{
	if (strcmp(scope, "node") == 0)
		return SD_SUBJECT_NODE;
	if (strcmp(scope, "rail") == 0)
		return SD_SUBJECT_RAIL;
	if (strcmp(scope, "gpu-pairs") == 0)
		return SD_SUBJECT_GPU_PAIR;
	if (strncmp(scope, "node-pairs", 10) == 0)
		return SD_SUBJECT_NODE_PAIR;
	if (strncmp(scope, "split:", 6) == 0)
		return SD_SUBJECT_GROUP;
	return SD_SUBJECT_JOB;
}

const char *sd_expect_kind_name(enum sd_expect_kind k)
{
	return (unsigned)k < SD_EXPECT_KINDS ? expect_kinds[k] : "?";
}

const char *sd_judged_status_name(enum sd_judged_status s)
{
	return (unsigned)s < 4 ? judged[s] : "?";
}

const char *sd_subject_outcome(const struct sd_judgement *j, int attempts)
{
	int passed = 0, skipped = 0;
	for (int k = 0; k < SD_EXPECT_KINDS; k++) {
		if (j[k].status == SD_JUDGED_FAILED)
			return "failed";
		passed |= j[k].status == SD_JUDGED_PASSED;
		skipped |= j[k].status == SD_JUDGED_SKIPPED;
	}
	if (passed)
		return attempts > 1 ? "passed on retry" : "passed";
	return skipped ? "skipped" : "not judged";
}

const char *sd_suspect_kind_name(enum sd_suspect_kind k)
{
	return (unsigned)k < 5 ? suspect_kinds[k] : "?";
}

int sd_link_tier(const char *c)
{
	static const struct { const char *name; int tier; } t[] = {
		{ "nvlink", 0 }, { "nvswitch", 0 }, { "pcie-switch", 1 },
		{ "host-bridge", 1 }, { "numa-node", 2 }, { "cross-socket", 3 },
		{ "no-p2p", 3 },
	};
	for (size_t i = 0; c && i < sizeof(t) / sizeof(t[0]); i++)
		if (strcmp(c, t[i].name) == 0)
			return t[i].tier;
	return -1;
}

/* Whether two subjects are of one link class (both unknown counts). */
static int same_class(const struct sd_subject_result *a,
		      const struct sd_subject_result *b)
{
	if (!a->link_class || !b->link_class)
		return !a->link_class && !b->link_class;
	return strcmp(a->link_class, b->link_class) == 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

double sd_median(double *v, int n)
{
	if (n <= 0)
		return 0;
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int sd_above_median(const double *value, int n, double factor, double *ratio,
		    double *median, unsigned char *above)
{
	*median = 0;
	memset(above, 0, n > 0 ? (size_t)n : 0);
	if (n < 2)
		return 0;
	double *v = malloc((size_t)n * sizeof(*v));
	if (!v)
		return -1;
	memcpy(v, value, (size_t)n * sizeof(*v));
	*median = sd_median(v, n); /* v is sorted now */
	int k = 0, m = n - 1;
	for (int i = 0; i < n; i++) {
		/* value[i]'s place in the sorted copy; the others' element
		 * j is v[j] below it, v[j + 1] from it on */
		int lo = 0, hi = n - 1;
		while (lo < hi) {
			int mid = lo + (hi - lo) / 2;
			if (v[mid] < value[i])
				lo = mid + 1;
			else
				hi = mid;
		}
#define OTHER(j) ((j) < lo ? v[(j)] : v[(j) + 1])
		double others = m % 2 ? OTHER(m / 2)
				      : (OTHER(m / 2 - 1) + OTHER(m / 2)) / 2;
#undef OTHER
		double r = others > 0 ? value[i] / others : 1;
		if (ratio)
			ratio[i] = r;
		if (r > factor)
			k += above[i] = 1;
	}
	free(v);
	return k;
}

static void set(struct sd_judgement *j, enum sd_expect_kind k,
		enum sd_judged_status st, double measured, double threshold,
		const char *unit, const char *fmt, ...)
	__attribute__((format(printf, 7, 8)));

static void set(struct sd_judgement *j, enum sd_expect_kind k,
		enum sd_judged_status st, double measured, double threshold,
		const char *unit, const char *fmt, ...)
{
	va_list ap;
	j->kind = k;
	j->status = st;
	j->measured = measured;
	j->threshold = threshold;
	j->unit = unit;
	va_start(ap, fmt);
	vsnprintf(j->reason, sizeof(j->reason), fmt, ap);
	va_end(ap);
}

double sd_median_without(const double *sorted, int n, double v)
{
	if (n < 2)
		return n == 1 ? sorted[0] : 0;
	int p = 0;
	while (p < n - 1 && sorted[p] != v)
		p++;
	int m = n - 1;
#define AT(k) sorted[(k) < p ? (k) : (k) + 1]
	double med = m % 2 ? AT(m / 2) : (AT(m / 2 - 1) + AT(m / 2)) / 2;
#undef AT
	return med;
}

/* Which bandwidth a subject's figure is (sd_subject_result.bw_name). */
#define BW(r) ((r)->bw_name ? (r)->bw_name : "busbw")

int sd_judge(const struct sd_expectation *e, const char *what,
	     const struct sd_subject_result *res, int n,
	     struct sd_judgement *out)
{
	int failed = 0;
	double *bw = malloc((size_t)(n > 0 ? n : 1) * sizeof(double));
	double *dev = malloc((size_t)(n > 0 ? n : 1) * sizeof(double));
	for (int i = 0; i < n; i++) {
		const struct sd_subject_result *r = &res[i];
		/* its peers: the subjects of its link class that measured */
		int nb = 0;
		double median = 0, mad = 0;
		for (int k = 0; bw && k < n; k++)
			if (res[k].have && same_class(&res[k], r))
				bw[nb++] = res[k].busbw_gbs;
		if (bw && dev && nb > 0) {
			median = sd_median(bw, nb);
			for (int k = 0; k < nb; k++)
				dev[k] = fabs(bw[k] - median);
			mad = sd_median(dev, nb);
			if (mad < 0.01 * median)
				mad = 0.01 * median;
		}
		struct sd_judgement *o = out + (size_t)i * SD_EXPECT_KINDS;
		char sz[32];
		sd_format_size(r->size_bytes, sz, sizeof(sz));
		memset(o, 0, SD_EXPECT_KINDS * sizeof(*o));
		for (int k = 0; k < SD_EXPECT_KINDS; k++)
			o[k].measured = o[k].threshold = NAN;
		if (r->wrong)
			set(&o[SD_EXPECT_DATA], SD_EXPECT_DATA, SD_JUDGED_FAILED,
			    (double)r->wrong, 0, "elements",
			    "%llu wrong elements", (unsigned long long)r->wrong);
		else if (r->checked)
			set(&o[SD_EXPECT_DATA], SD_EXPECT_DATA, SD_JUDGED_PASSED,
			    0, 0, "elements", "every element right");
		else
			set(&o[SD_EXPECT_DATA], SD_EXPECT_DATA, SD_JUDGED_SKIPPED,
			    NAN, 0, "elements", "the data was not checked");
		if (r->path_judged == 1)
			set(&o[SD_EXPECT_PATH], SD_EXPECT_PATH,
			    r->path_asked > 0 && r->path_took == r->path_asked
				    ? SD_JUDGED_PASSED
				    : SD_JUDGED_FAILED,
			    r->path_took, r->path_asked, "connections", "%s",
			    r->path_reason);
		else if (r->path_judged == 2)
			set(&o[SD_EXPECT_PATH], SD_EXPECT_PATH,
			    SD_JUDGED_SKIPPED, NAN, NAN, "connections", "%s",
			    r->path_reason);
		int any = e->busbw_gbs > 0 || e->time_us > 0 || e->peers > 0 ||
			  e->mad > 0 || e->baseline > 0;
		if (any && !r->have) {
			for (int k = SD_EXPECT_BUSBW; k < SD_EXPECT_KINDS; k++) {
				int wanted = (k == SD_EXPECT_BUSBW && e->busbw_gbs > 0) ||
					     (k == SD_EXPECT_TIME && e->time_us > 0) ||
					     (k == SD_EXPECT_PEERS && e->peers > 0) ||
					     (k == SD_EXPECT_MAD && e->mad > 0) ||
					     (k == SD_EXPECT_BASELINE && e->baseline > 0);
				if (wanted)
					set(&o[k], (enum sd_expect_kind)k,
					    SD_JUDGED_SKIPPED, NAN, NAN,
					    k == SD_EXPECT_TIME ? "us" : "GB/s",
					    "no measurement at the judged size");
			}
			continue;
		}
		if (e->busbw_gbs > 0) {
			int ok = r->busbw_gbs >= e->busbw_gbs;
			failed |= !ok;
			set(&o[SD_EXPECT_BUSBW], SD_EXPECT_BUSBW,
			    ok ? SD_JUDGED_PASSED : SD_JUDGED_FAILED,
			    r->busbw_gbs, e->busbw_gbs, "GB/s",
			    "%s %.3g GB/s at %s %s the floor %g GB/s",
			    BW(r), r->busbw_gbs, sz, ok ? "meets" : "is below",
			    e->busbw_gbs);
		}
		if (e->time_us > 0) {
			int ok = r->time_us <= e->time_us;
			failed |= !ok;
			set(&o[SD_EXPECT_TIME], SD_EXPECT_TIME,
			    ok ? SD_JUDGED_PASSED : SD_JUDGED_FAILED, r->time_us,
			    e->time_us, "us",
			    "time %.4g us at %s %s the ceiling %g us", r->time_us,
			    sz, ok ? "is within" : "is above", e->time_us);
		}
		if (e->peers > 0) {
			/* the median of the others: with two subjects each is
			 * compared with the other, not with their mean */
			double others = median;
			if (r->have && nb >= 2)
				others = sd_median_without(bw, nb,
							   r->busbw_gbs);
			double floor = e->peers * others;
			if (nb < 2) {
				set(&o[SD_EXPECT_PEERS], SD_EXPECT_PEERS,
				    SD_JUDGED_SKIPPED, r->busbw_gbs, NAN, "GB/s",
				    "one of its kind: no peers to compare with");
			} else {
				int ok = r->busbw_gbs >= floor;
				failed |= !ok;
				set(&o[SD_EXPECT_PEERS], SD_EXPECT_PEERS,
				    ok ? SD_JUDGED_PASSED : SD_JUDGED_FAILED,
				    r->busbw_gbs, floor, "GB/s",
				    "%s %.3g GB/s at %s is %.2f x the median "
				    "%.3g GB/s of the other %s (%d; at least %g)",
				    BW(r), r->busbw_gbs, sz,
				    others > 0 ? r->busbw_gbs / others : 0, others,
				    what, nb - 1, e->peers);
			}
		}
		if (e->mad > 0) {
			double floor = median - e->mad * mad;
			if (nb < 3) {
				set(&o[SD_EXPECT_MAD], SD_EXPECT_MAD,
				    SD_JUDGED_SKIPPED, r->busbw_gbs, NAN, "GB/s",
				    "fewer than 3 of its kind: no spread to "
				    "judge by");
			} else {
				int ok = r->busbw_gbs >= floor;
				failed |= !ok;
				set(&o[SD_EXPECT_MAD], SD_EXPECT_MAD,
				    ok ? SD_JUDGED_PASSED : SD_JUDGED_FAILED,
				    r->busbw_gbs, floor, "GB/s",
				    "%s %.3g GB/s at %s is %.1f median absolute "
				    "deviations %s the median %.3g GB/s of %d "
				    "%s (at most %g below)", BW(r), r->busbw_gbs,
				    sz,
				    mad > 0 ? fabs(median - r->busbw_gbs) / mad
					    : 0,
				    r->busbw_gbs < median ? "below" : "above",
				    median, nb, what, e->mad);
			}
		}
		if (e->baseline > 0) {
			if (!r->have_base) {
				set(&o[SD_EXPECT_BASELINE], SD_EXPECT_BASELINE,
				    SD_JUDGED_SKIPPED, r->busbw_gbs, NAN, "GB/s",
				    "%s", r->base_missing
						  ? "the baseline has no value for "
						    "this test and size"
						  : "no baseline given (run "
						    "--baseline NAME)");
			} else {
				double floor = e->baseline * r->base_busbw_gbs;
				int ok = r->busbw_gbs >= floor;
				failed |= !ok;
				set(&o[SD_EXPECT_BASELINE], SD_EXPECT_BASELINE,
				    ok ? SD_JUDGED_PASSED : SD_JUDGED_FAILED,
				    r->busbw_gbs, floor, "GB/s",
				    "%s %.3g GB/s at %s is %.2f x the "
				    "baseline's %.3g GB/s (at least %g)",
				    BW(r), r->busbw_gbs, sz,
				    r->base_busbw_gbs > 0
					    ? r->busbw_gbs / r->base_busbw_gbs
					    : 0,
				    r->base_busbw_gbs, e->baseline);
			}
		}
		/* a faster link at the speed of a slower class: only where the
		 * classes are distinct here (the faster class's median at
		 * least 1.25 times the slower's), so that link classes that
		 * measure alike (PCIe through one host bridge or across two)
		 * fail nobody */
		int tier = sd_link_tier(r->link_class);
		double own = median;
		if ((e->peers > 0 || e->mad > 0) && tier >= 0 && bw) {
			double worst = 0;
			const char *slow = NULL;
			int nslow = 0;
			for (int k = 0; k < n; k++) {
				const struct sd_subject_result *x = &res[k];
				if (!x->have || sd_link_tier(x->link_class) <= tier)
					continue;
				int m = 0;
				for (int q = 0; q < n; q++)
					if (res[q].have && same_class(&res[q], x))
						bw[m++] = res[q].busbw_gbs;
				double med = sd_median(bw, m);
				if (med > worst && own >= 1.25 * med) {
					worst = med;
					slow = x->link_class;
					nslow = m;
				}
			}
			if (slow) {
				int ok = r->busbw_gbs > worst;
				failed |= !ok;
				set(&o[SD_EXPECT_LINK], SD_EXPECT_LINK,
				    ok ? SD_JUDGED_PASSED : SD_JUDGED_FAILED,
				    r->busbw_gbs, worst, "GB/s",
				    "a %s pair at %.3g GB/s at %s is %s the "
				    "median %.3g GB/s of %d %s pairs", r->link_class,
				    r->busbw_gbs, sz,
				    ok ? "faster than" : "no faster than", worst,
				    nslow, slow);
			}
		}
	}
	free(bw);
	free(dev);
	return failed;
}

/* ---- blame ---- */

struct failed_item {
	double ratio;    /* sd_blame_figure's; NAN: none */
	char *figure;
	enum sd_subject_kind kind;
	char *subject;
	int a, b;        /* hosts; -1 when none */
	char *hostlist;  /* all its hosts, as a Slurm hostlist */
	char *reason;
	int hosts_many;  /* rail or group over more than two hosts */
	int *hosts;      /* all of them, for rails and groups */
	int nh;
};

struct sd_blame {
	int nhosts;
	const char *const *names;
	/* this test */
	int *pairs, *pair_fails; /* node pairs each host was in, and failed */
	unsigned char *passed_pair; /* a host passed some node pair */
	struct failed_item *failed;
	size_t nfailed, capfailed;
	/* the run */
	struct sd_suspect *sus;
	int nsus, capsus;
	int *host_failed;        /* failed subjects each host was in */
	double *host_worst;      /* the worst ratio among them; NAN: none */
	char **host_why;         /* its test, subject and figure */
};

struct sd_blame *sd_blame_new(int nhosts, const char *const *names)
{
	struct sd_blame *b = calloc(1, sizeof(*b));
	if (!b)
		return NULL;
	b->nhosts = nhosts;
	b->names = names;
	size_t n = (size_t)(nhosts > 0 ? nhosts : 1);
	b->pairs = calloc(n, sizeof(int));
	b->pair_fails = calloc(n, sizeof(int));
	b->passed_pair = calloc(n, 1);
	b->host_failed = calloc(n, sizeof(int));
	b->host_worst = malloc(n * sizeof(double));
	b->host_why = calloc(n, sizeof(char *));
	for (size_t h = 0; b->host_worst && h < n; h++)
		b->host_worst[h] = NAN;
	if (!b->pairs || !b->pair_fails || !b->passed_pair ||
	    !b->host_failed || !b->host_worst || !b->host_why) {
		sd_blame_free(b);
		return NULL;
	}
	return b;
}

int sd_blame_add(struct sd_blame *b, enum sd_subject_kind kind,
		 const char *subject, const char *hostlist, const int *hosts,
		 int nh, int failed, const char *reason)
{
	int a = nh > 0 ? hosts[0] : -1, c = nh > 1 ? hosts[1] : -1;
	if (kind == SD_SUBJECT_NODE_PAIR && a >= 0 && c >= 0) {
		b->pairs[a]++;
		b->pairs[c]++;
		if (failed) {
			b->pair_fails[a]++;
			b->pair_fails[c]++;
		} else {
			b->passed_pair[a] = b->passed_pair[c] = 1;
		}
	}
	if (!failed)
		return 0;
	if (b->nfailed == b->capfailed) {
		size_t cap = b->capfailed ? b->capfailed * 2 : 16;
		void *p = realloc(b->failed, cap * sizeof(*b->failed));
		if (!p)
			return -1;
		b->failed = p;
		b->capfailed = cap;
	}
	struct failed_item *f = &b->failed[b->nfailed];
	memset(f, 0, sizeof(*f));
	f->ratio = NAN;
	f->kind = kind;
	f->a = a;
	f->b = c;
	f->subject = strdup(subject ? subject : "");
	f->hostlist = strdup(hostlist ? hostlist : "");
	f->reason = strdup(reason ? reason : "");
	if (nh > 2 || kind == SD_SUBJECT_RAIL || kind == SD_SUBJECT_GROUP ||
	    kind == SD_SUBJECT_JOB) {
		f->hosts = malloc((size_t)(nh > 0 ? nh : 1) * sizeof(int));
		if (f->hosts) {
			memcpy(f->hosts, hosts, (size_t)nh * sizeof(int));
			f->nh = nh;
		}
		f->hosts_many = 1;
	}
	if (!f->subject || !f->reason || !f->hostlist ||
	    (f->hosts_many && !f->hosts)) {
		free(f->subject);
		free(f->hostlist);
		free(f->reason);
		free(f->hosts);
		return -1;
	}
	b->nfailed++;
	return 0;
}

int sd_blame_figure(struct sd_blame *b, double ratio, const char *figure)
{
	if (b->nfailed == 0)
		return 0;
	struct failed_item *f = &b->failed[b->nfailed - 1];
	free(f->figure);
	f->ratio = ratio;
	f->figure = strdup(figure ? figure : "");
	return f->figure ? 0 : -1;
}

double sd_judgement_ratio(const struct sd_judgement *j)
{
	if (j->status != SD_JUDGED_FAILED || !isfinite(j->measured) ||
	    !isfinite(j->threshold) || j->measured <= 0 || j->threshold <= 0)
		return NAN;
	return j->kind == SD_EXPECT_TIME ? j->threshold / j->measured
					 : j->measured / j->threshold;
}

/* "A: B" or "A; T: B" as a malloc'd string; NULL when out of memory. */
static char *join3(const char *a, const char *sep, const char *t,
		   const char *c)
{
	struct sd_buf x = { 0 };
	if (sd_buf_printf(&x, "%s%s%s: %s", a, sep, t, c)) {
		sd_buf_free(&x);
		return NULL;
	}
	return x.data;
}

/* Add a suspect, or add the reason to the one already named. */
static int suspect(struct sd_blame *b, enum sd_suspect_kind kind,
		   const char *subject, const char *hostlist, int host,
		   int host_b, const char *test, const char *reason)
{
	char *why = NULL;
	for (int i = 0; i < b->nsus; i++) {
		struct sd_suspect *s = &b->sus[i];
		if (s->kind != kind || strcmp(s->subject, subject) != 0)
			continue;
		if (strlen(s->detail) > 600)
			return 0; /* enough said */
		if (!(why = join3(s->detail, "; ", test, reason)))
			return -1;
		free(s->detail);
		s->detail = why;
		return 0;
	}
	if (b->nsus == b->capsus) {
		int cap = b->capsus ? b->capsus * 2 : 8;
		void *p = realloc(b->sus, (size_t)cap * sizeof(*b->sus));
		if (!p)
			return -1;
		b->sus = p;
		b->capsus = cap;
	}
	struct sd_suspect *s = &b->sus[b->nsus];
	s->kind = kind;
	s->host = host;
	s->host_b = host_b;
	s->subject = strdup(subject);
	s->hosts = strdup(hostlist);
	s->detail = join3("", "", test, reason);
	s->reason = NULL;
	if (!s->subject || !s->detail || !s->hosts) {
		free(s->subject);
		free(s->hosts);
		free(s->detail);
		return -1;
	}
	b->nsus++;
	return 0;
}

/* Each failed subject of the test counts for its hosts; the worst figure
 * of each host is kept with its test and subject. */
static int count_hosts(struct sd_blame *b, const char *test)
{
	for (size_t i = 0; i < b->nfailed; i++) {
		const struct failed_item *f = &b->failed[i];
		int two[2] = { f->a, f->b };
		const int *hs = f->hosts_many ? f->hosts : two;
		int n = f->hosts_many ? f->nh : 2;
		for (int k = 0; k < n; k++) {
			int h = hs[k];
			if (h < 0 || h >= b->nhosts ||
			    (!f->hosts_many && k == 1 && h == f->a))
				continue;
			b->host_failed[h]++;
			int worse = isnan(b->host_worst[h])
					    ? !isnan(f->ratio) || !b->host_why[h]
					    : !isnan(f->ratio) &&
						      f->ratio < b->host_worst[h];
			if (!worse)
				continue;
			struct sd_buf w = { 0 };
			if (sd_buf_printf(&w, "%s: %s %s: %s", test,
					  sd_subject_kind_name(f->kind),
					  f->subject, f->figure ? f->figure
							       : f->reason)) {
				sd_buf_free(&w);
				return -1;
			}
			free(b->host_why[h]);
			b->host_why[h] = w.data;
			b->host_worst[h] = f->ratio;
		}
	}
	return 0;
}

/* Every suspect's reason from its detail: a bad node's led by how many
 * subjects it failed and its worst figure. */
static int compose_reasons(struct sd_blame *b)
{
	for (int i = 0; i < b->nsus; i++) {
		struct sd_suspect *s = &b->sus[i];
		struct sd_buf r = { 0 };
		int h = s->host;
		int bad = (s->kind == SD_SUSPECT_NODE ||
			   s->kind == SD_SUSPECT_LINK) && h >= 0 &&
			  h < b->nhosts && b->host_failed[h] > 0;
		int e = bad ? sd_buf_printf(&r, "%d failed subject%s; worst: "
					    "%s; %s", b->host_failed[h],
					    b->host_failed[h] == 1 ? "" : "s",
					    b->host_why[h] ? b->host_why[h]
							   : "-", s->detail)
			    : sd_buf_printf(&r, "%s", s->detail);
		if (e) {
			sd_buf_free(&r);
			return -1;
		}
		free(s->reason);
		s->reason = r.data;
	}
	return 0;
}

/* Whether host h is a bad node in the run so far. */
static int is_bad(const struct sd_blame *b, int h)
{
	for (int i = 0; i < b->nsus; i++)
		if ((b->sus[i].kind == SD_SUSPECT_NODE ||
		     b->sus[i].kind == SD_SUSPECT_LINK) && b->sus[i].host == h)
			return 1;
	return 0;
}

/* A node whose every node pair (two or more) failed in this test while
 * each partner passed a pair elsewhere. */
static int fails_every_pair(const struct sd_blame *b, int h)
{
	if (h < 0 || b->pairs[h] < 2 || b->pair_fails[h] != b->pairs[h])
		return 0;
	for (size_t i = 0; i < b->nfailed; i++) {
		const struct failed_item *f = &b->failed[i];
		if (f->kind != SD_SUBJECT_NODE_PAIR || (f->a != h && f->b != h))
			continue;
		int partner = f->a == h ? f->b : f->a;
		if (partner >= 0 && !b->passed_pair[partner])
			return 0;
	}
	return 1;
}

int sd_blame_end_test(struct sd_blame *b, const char *test)
{
	int rc = count_hosts(b, test);
	char why[800];
	/* nodes first: what they explain is not blamed on paths or rails */
	for (size_t i = 0; i < b->nfailed && !rc; i++) {
		struct failed_item *f = &b->failed[i];
		if (f->kind == SD_SUBJECT_NODE && f->a >= 0)
			rc = suspect(b, SD_SUSPECT_NODE, b->names[f->a],
				     b->names[f->a], f->a, -1, test, f->reason);
		else if (f->kind == SD_SUBJECT_GPU_PAIR && f->a >= 0) {
			snprintf(why, sizeof(why), "GPU pair %s: %s", f->subject,
				 f->reason);
			rc = suspect(b, SD_SUSPECT_LINK, f->subject,
				     b->names[f->a], f->a, -1, test, why);
		}
	}
	for (int h = 0; h < b->nhosts && !rc; h++) {
		if (!fails_every_pair(b, h))
			continue;
		const char *first = "";
		for (size_t i = 0; i < b->nfailed; i++)
			if (b->failed[i].kind == SD_SUBJECT_NODE_PAIR &&
			    (b->failed[i].a == h || b->failed[i].b == h)) {
				first = b->failed[i].reason;
				break;
			}
		snprintf(why, sizeof(why), "every node pair it was in failed "
			 "(%d of %d) while its partners passed with other nodes; "
			 "e.g. %s", b->pair_fails[h], b->pairs[h], first);
		rc = suspect(b, SD_SUSPECT_NODE, b->names[h], b->names[h], h,
			     -1, test, why);
	}
	for (size_t i = 0; i < b->nfailed && !rc; i++) {
		struct failed_item *f = &b->failed[i];
		if (f->kind == SD_SUBJECT_NODE_PAIR) {
			if (is_bad(b, f->a) || is_bad(b, f->b))
				continue;
			int alone = f->a >= 0 && f->b >= 0 &&
				    b->pairs[f->a] == 1 && b->pairs[f->b] == 1;
			int both_pass = f->a >= 0 && f->b >= 0 &&
					b->passed_pair[f->a] &&
					b->passed_pair[f->b];
			snprintf(why, sizeof(why), "%s; %s", f->reason,
				 alone ? "with two nodes the fault cannot be "
					 "placed on either"
				 : both_pass ? "both nodes pass with others: the "
					       "network path between them"
					     : "an end passes with no other node: "
					       "the fault cannot be placed");
			rc = suspect(b, SD_SUSPECT_PATH, f->subject, f->hostlist,
				     f->a, f->b, test, why);
		} else if (f->hosts_many) {
			int explained = 0;
			for (int k = 0; k < f->nh && !explained; k++)
				explained = is_bad(b, f->hosts[k]);
			if (explained)
				continue;
			rc = suspect(b, f->kind == SD_SUBJECT_RAIL
						? SD_SUSPECT_RAIL
						: SD_SUSPECT_GROUP,
				     f->subject, f->hostlist, -1, -1, test,
				     f->reason);
		}
	}
	if (!rc)
		rc = compose_reasons(b);
	/* the next test starts afresh */
	for (size_t i = 0; i < b->nfailed; i++) {
		free(b->failed[i].subject);
		free(b->failed[i].hostlist);
		free(b->failed[i].reason);
		free(b->failed[i].hosts);
		free(b->failed[i].figure);
	}
	b->nfailed = 0;
	memset(b->pairs, 0, (size_t)b->nhosts * sizeof(int));
	memset(b->pair_fails, 0, (size_t)b->nhosts * sizeof(int));
	memset(b->passed_pair, 0, (size_t)b->nhosts);
	return rc ? -1 : 0;
}

int sd_blame_name(struct sd_blame *b, enum sd_suspect_kind kind,
		  const char *subject, const char *hostlist, int host,
		  const char *test, const char *reason)
{
	return suspect(b, kind, subject, hostlist ? hostlist : subject, host,
		       -1, test, reason) || compose_reasons(b) ? -1 : 0;
}

const struct sd_suspect *sd_blame_suspects(const struct sd_blame *b, int *n)
{
	*n = b->nsus;
	return b->sus;
}

int sd_blame_bad_hosts(const struct sd_blame *b, unsigned char *bad)
{
	int n = 0;
	memset(bad, 0, (size_t)b->nhosts);
	for (int i = 0; i < b->nsus; i++) {
		const struct sd_suspect *s = &b->sus[i];
		if ((s->kind == SD_SUSPECT_NODE || s->kind == SD_SUSPECT_LINK) &&
		    s->host >= 0 && !bad[s->host]) {
			bad[s->host] = 1;
			n++;
		}
	}
	return n;
}

void sd_blame_free(struct sd_blame *b)
{
	if (!b)
		return;
	for (size_t i = 0; i < b->nfailed; i++) {
		free(b->failed[i].subject);
		free(b->failed[i].hostlist);
		free(b->failed[i].reason);
		free(b->failed[i].hosts);
		free(b->failed[i].figure);
	}
	for (int i = 0; i < b->nsus; i++) {
		free(b->sus[i].subject);
		free(b->sus[i].hosts);
		free(b->sus[i].reason);
		free(b->sus[i].detail);
	}
	for (int h = 0; b->host_why && h < b->nhosts; h++)
		free(b->host_why[h]);
	free(b->host_failed);
	free(b->host_worst);
	free(b->host_why);
	free(b->failed);
	free(b->sus);
	free(b->pairs);
	free(b->pair_fails);
	free(b->passed_pair);
	free(b);
}
