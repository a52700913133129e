/*
 * reference.c - reference loss curves: made from curves, found by step,
 * written to and read from their text file (see reference.h).
 *
 * The file is meant to travel between sites and to be read by people and
 * by other tools (cut, awk, a spreadsheet): a few header lines, then one
 * tab-separated line per step.  Reading is strict about everything that
 * would change a verdict (numbers, order, the config) and names the line
 * of anything it refuses.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "db/db.h"
#include "shakedown/backend.h"
#include "train/reference.h"
#include "util.h"

static const char file_head[] = "# shakedown-reference ";
static const char column_line[] = "step\tmean\tspread\tn";

void sd_train_ref_free(struct sd_train_reference *r)
{
	if (!r)
		return;
	free(r->description);
	free(r->config);
	free(r->source);
	free(r->steps);
	memset(r, 0, sizeof(*r));
}

int sd_train_ref_check_name(const char *name, char *err, size_t errlen)
{
	size_t len = name ? strlen(name) : 0;
	if (len == 0 || len > SD_TRAIN_REF_NAME_MAX) {
		snprintf(err, errlen, "a reference name has 1 to %d characters",
			 SD_TRAIN_REF_NAME_MAX);
		return SD_ERR_INVALID;
	}
	if (!isalnum((unsigned char)name[0])) {
		snprintf(err, errlen, "reference name '%s' must start with a "
			 "letter or digit", name);
		return SD_ERR_INVALID;
	}
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)name[i];
		if (!isalnum(c) && c != '.' && c != '_' && c != '-') {
			snprintf(err, errlen, "reference name '%s' may "
				 "hold only letters, digits, '.', '_' and '-'",
				 name);
			return SD_ERR_INVALID;
		}
	}
	return SD_OK;
}

/* The next row of curve c at or after position *i with a loss. */
static const struct sd_train_step *next_loss(const struct sd_train_curve *c,
					     size_t *i)
{
	while (*i < c->n && !(c->steps[*i].has & SD_STEP_LOSS))
		(*i)++;
	return *i < c->n ? &c->steps[*i] : NULL;
}

/* The mean and sample spread over the curves' rows at pos[] (all at
 * step `step`) into *st; SD_ERR_INVALID for a loss that is not finite. */
static int step_stats(const struct sd_train_curve *curves, size_t ncurves,
		      const size_t *pos, long step,
		      struct sd_train_ref_step *st, char *err, size_t errlen)
{
	double sum = 0, var = 0;
	for (size_t c = 0; c < ncurves; c++) {
		double loss = curves[c].steps[pos[c]].loss;
		if (!isfinite(loss)) {
			snprintf(err, errlen, "%s has a %s loss at step %ld; a "
				 "reference needs finite losses",
				 curves[c].label ? curves[c].label : "a curve",
				 isnan(loss) ? "NaN" : "infinite", step);
			return SD_ERR_INVALID;
		}
		sum += loss;
	}
	double mean = sum / (double)ncurves;
	for (size_t c = 0; c < ncurves; c++) {
		double d = curves[c].steps[pos[c]].loss - mean;
		var += d * d;
	}
	st->step = step;
	st->mean = ncurves == 1 ? curves[0].steps[pos[0]].loss : mean;
	st->spread = ncurves > 1 ? sqrt(var / (double)(ncurves - 1)) : 0.0;
	st->n = (int)ncurves;
	return SD_OK;
}

int sd_train_ref_create(const char *name, const char *description,
			const char *config, const char *source,
			const struct sd_train_curve *curves, size_t ncurves,
			struct sd_train_reference *out, char *note,
			size_t notelen, char *err, size_t errlen)
{
	size_t *pos = NULL;
	int rc, bad = 0;
	memset(out, 0, sizeof(*out));
	if (note && notelen)
		note[0] = '\0';
	rc = sd_train_ref_check_name(name, err, errlen);
	if (rc != SD_OK)
		return rc;
	if (!config || !*config) {
		snprintf(err, errlen, "reference '%s' needs the config of its "
			 "workload", name);
		return SD_ERR_INVALID;
	}
	if (!curves || ncurves == 0) {
		snprintf(err, errlen, "reference '%s' needs at least one curve",
			 name);
		return SD_ERR_INVALID;
	}
	/* every curve in order; a curve with no loss at all is named */
	for (size_t c = 0; c < ncurves; c++) {
		const struct sd_train_curve *cv = &curves[c];
		const char *label = cv->label ? cv->label : "a curve";
		long prev = -1;
		size_t nl = 0;
		for (size_t i = 0; i < cv->n; i++) {
			long step = cv->steps[i].step;
			if (step < 0 || step <= prev) {
				snprintf(err, errlen, "%s: step %ld follows "
					 "step %ld; steps must increase", label,
					 step, prev);
				return SD_ERR_INVALID;
			}
			prev = step;
			nl += (cv->steps[i].has & SD_STEP_LOSS) != 0;
		}
		if (nl == 0) {
			snprintf(err, errlen, "%s has no loss at any step",
				 label);
			return SD_ERR_INVALID;
		}
	}
	sd_strlcpy(out->name, name, sizeof(out->name));
	out->config = sd_dupstr(config, &bad);
	out->description = sd_dupstr(description, &bad);
	out->source = sd_dupstr(source, &bad);
	sd_db_iso_time(sd_wall_now(), out->created_at);
	pos = calloc(ncurves, sizeof(*pos));
	out->steps = malloc(curves[0].n * sizeof(*out->steps) + 1);
	if (bad || !pos || !out->steps) {
		snprintf(err, errlen, "out of memory making reference '%s'",
			 name);
		rc = SD_ERR_NOMEM;
		goto fail;
	}
	/* the steps of the first curve that every other has too */
	size_t in_all = 0, union_n = 0;
	for (;;) {
		/* the smallest step at the heads: one step of the union */
		const struct sd_train_step *head = NULL;
		for (size_t c = 0; c < ncurves; c++) {
			const struct sd_train_step *h = next_loss(&curves[c],
								  &pos[c]);
			if (h && (!head || h->step < head->step))
				head = h;
		}
		if (!head)
			break;
		long lo = head->step;
		union_n++;
		size_t have = 0;
		for (size_t c = 0; c < ncurves; c++) {
			const struct sd_train_step *h = next_loss(&curves[c],
								  &pos[c]);
			have += h && h->step == lo;
		}
		if (have == ncurves) {
			rc = step_stats(curves, ncurves, pos, lo,
					&out->steps[in_all++], err, errlen);
			if (rc != SD_OK)
				goto fail;
		}
		for (size_t c = 0; c < ncurves; c++) {
			const struct sd_train_step *h = next_loss(&curves[c],
								  &pos[c]);
			if (h && h->step == lo)
				pos[c]++;
		}
	}
	out->n = in_all;
	if (in_all == 0) {
		snprintf(err, errlen, "the %zu curves of reference '%s' have "
			 "no step in common", ncurves, name);
		rc = SD_ERR_INVALID;
		goto fail;
	}
	if (note && notelen && union_n > in_all)
		snprintf(note, notelen, "the curves differ in their steps: "
			 "%zu step%s in all %zu are used, %zu in only some are "
			 "left out", in_all, in_all == 1 ? "" : "s", ncurves,
			 union_n - in_all);
	free(pos);
	return SD_OK;
fail:
	free(pos);
	sd_train_ref_free(out);
	return rc;
}

/* The value of word `key` ("seed=") in config c, into buf ("" when
 * absent); and c without the seed= and arith= words, into rest. */
static void config_words(const char *c, char *seed, char *arith, char *rest,
			 size_t len)
{
	size_t used = 0;
	seed[0] = arith[0] = rest[0] = '\0';
	while (c && *c) {
		while (*c == ' ')
			c++;
		size_t n = strcspn(c, " ");
		if (!n)
			break;
		if (n > 5 && strncmp(c, "seed=", 5) == 0)
			snprintf(seed, len, "%.*s", (int)(n - 5), c + 5);
		else if (n > 6 && strncmp(c, "arith=", 6) == 0)
			snprintf(arith, len, "%.*s", (int)(n - 6), c + 6);
		else if (used + n + 2 < len) {
			if (used)
				rest[used++] = ' ';
			memcpy(rest + used, c, n);
			used += n;
			rest[used] = '\0';
		}
		c += n;
	}
}

enum sd_train_ref_match sd_train_ref_identity(const char *ref_config,
					      const char *run_config,
					      char *why, size_t whylen)
{
	char rs[64], ra[64], rr[512], ns[64], na[64], nr[512];
	char w[300];
	enum sd_train_ref_match m;
	config_words(ref_config, rs, ra, rr, sizeof(rr));
	config_words(run_config, ns, na, nr, sizeof(nr));
	/* the small buffers above hold words of up to 63 characters */
	if (strcmp(rr, nr) != 0) {
		m = SD_REF_OTHER_WORKLOAD;
		snprintf(w, sizeof(w), "another workload");
	} else if (rs[0] && ns[0] && strcmp(rs, ns) != 0) {
		m = SD_REF_OTHER_SEED;
		snprintf(w, sizeof(w), "seed %s, the reference's %s", ns, rs);
	} else if (!rs[0] || !ra[0]) {
		m = SD_REF_OTHER_ARITH;
		snprintf(w, sizeof(w), "the reference does not say its %s",
			 !rs[0] && !ra[0] ? "seed or arithmetic"
			 : !rs[0]	  ? "seed"
					  : "arithmetic");
	} else if (!na[0] || strcmp(ra, na) != 0) {
		m = SD_REF_OTHER_ARITH;
		snprintf(w, sizeof(w), "%s, the reference's %s",
			 na[0] ? na : "an arithmetic not said", ra);
	} else {
		m = SD_REF_SAME_ARITH;
		snprintf(w, sizeof(w), "the same workload, seed %s and %s", rs,
			 ra);
	}
	if (why && whylen)
		snprintf(why, whylen, "%s", w);
	return m;
}

const struct sd_train_ref_step *
sd_train_ref_find(const struct sd_train_reference *r, long step)
{
	size_t lo = 0, hi = r ? r->n : 0;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (r->steps[mid].step < step)
			lo = mid + 1;
		else
			hi = mid;
	}
	return r && lo < r->n && r->steps[lo].step == step ? &r->steps[lo]
							   : NULL;
}

/* Append "# key: value" with value escaped; 0 or -1 (out of memory). */
static int put_header(struct sd_buf *b, const char *key, const char *value)
{
	if (!value)
		return 0;
	if (sd_buf_printf(b, "# %s: ", key))
		return -1;
	for (const char *p = value; *p; p++) {
		int rc;
		switch (*p) {
		case '\\':
			rc = sd_buf_printf(b, "\\\\");
			break;
		case '\n':
			rc = sd_buf_printf(b, "\\n");
			break;
		case '\r':
			rc = sd_buf_printf(b, "\\r");
			break;
		case '\t':
			rc = sd_buf_printf(b, "\\t");
			break;
		default:
			rc = sd_buf_printf(b, "%c", *p);
		}
		if (rc)
			return -1;
	}
	return sd_buf_printf(b, "\n");
}

int sd_train_ref_format(const struct sd_train_reference *r, char **text,
			char *err, size_t errlen)
{
	struct sd_buf b = { 0 };
	*text = NULL;
	if (!r->name[0] || !r->config) {
		snprintf(err, errlen, "a reference needs a name and a config "
			 "to be written");
		return SD_ERR_INVALID;
	}
	int bad = sd_buf_printf(&b, "%s%d\n", file_head, SD_TRAIN_REF_FORMAT) ||
		  put_header(&b, "name", r->name) ||
		  put_header(&b, "config", r->config) ||
		  put_header(&b, "description", r->description) ||
		  put_header(&b, "source", r->source) ||
		  put_header(&b, "created_at",
			     r->created_at[0] ? r->created_at : NULL) ||
		  (r->healthy > 0 &&
		   sd_buf_printf(&b, "# healthy: %.3g\n", r->healthy)) ||
		  sd_buf_printf(&b, "%s\n", column_line);
	for (size_t i = 0; i < r->n && !bad; i++)
		bad = sd_buf_printf(&b, "%ld\t%.17g\t%.17g\t%d\n",
				    r->steps[i].step, r->steps[i].mean,
				    r->steps[i].spread, r->steps[i].n);
	if (bad) {
		sd_buf_free(&b);
		snprintf(err, errlen, "out of memory writing reference '%s'",
			 r->name);
		return SD_ERR_NOMEM;
	}
	*text = b.data;
	return SD_OK;
}

/* Undo put_header's escapes of [s, s+len) into a new string; NULL with
 * err on a bad escape or no memory (*nomem set). */
static char *unescape(const char *s, size_t len, const char *path, int line,
		      int *nomem, char *err, size_t errlen)
{
	char *out = malloc(len + 1), *o = out;
	if (!out) {
		*nomem = 1;
		snprintf(err, errlen, "out of memory reading %s", path);
		return NULL;
	}
	for (size_t i = 0; i < len; i++) {
		if (s[i] != '\\') {
			*o++ = s[i];
			continue;
		}
		char c = i + 1 < len ? s[++i] : '\0';
		switch (c) {
		case '\\':
			*o++ = '\\';
			break;
		case 'n':
			*o++ = '\n';
			break;
		case 'r':
			*o++ = '\r';
			break;
		case 't':
			*o++ = '\t';
			break;
		default:
			snprintf(err, errlen, "%s:%d: unknown escape '\\%c' "
				 "in a header value; write a backslash as "
				 "'\\\\'", path, line, c ? c : ' ');
			free(out);
			return NULL;
		}
	}
	*o = '\0';
	return out;
}

/* A whole number in [s, s+len); 0 or -1. */
static int parse_long(const char *s, size_t len, long *v)
{
	char buf[32];
	if (len == 0 || len >= sizeof(buf))
		return -1;
	memcpy(buf, s, len);
	buf[len] = '\0';
	char *end;
	errno = 0;
	*v = strtol(buf, &end, 10);
	return errno || *end || !(isdigit((unsigned char)buf[0]) ||
				  buf[0] == '-') ? -1 : 0;
}

/* A finite number in [s, s+len); 0 or -1. */
static int parse_double(const char *s, size_t len, double *v)
{
	char buf[64];
	if (len == 0 || len >= sizeof(buf))
		return -1;
	memcpy(buf, s, len);
	buf[len] = '\0';
	char *end;
	errno = 0;
	*v = strtod(buf, &end);
	return (errno && errno != ERANGE) || *end || !isfinite(*v) ? -1 : 0;
}

/* The keys of a header line. */
enum { K_NAME, K_CONFIG, K_DESCRIPTION, K_SOURCE, K_CREATED_AT, K_HEALTHY,
       K_N };
static const char *const header_keys[K_N] = {
	"name", "config", "description", "source", "created_at", "healthy",
};

/* A header line l (ll bytes, starting with '#') into out: a known
 * "# key: value", or a comment (ignored).  SD_OK, SD_ERR_INVALID or
 * SD_ERR_NOMEM with err. */
static int header_line(const char *l, size_t ll, const char *path, int line,
		       struct sd_train_reference *out, char *err,
		       size_t errlen)
{
	const char *colon = memchr(l, ':', ll), *k = l + 1;
	while (k < l + ll && *k == ' ')
		k++;
	if (!colon || colon < k)
		return SD_OK; /* a comment */
	size_t kl = (size_t)(colon - k), which = K_N;
	for (size_t i = 0; i < K_N; i++)
		if (strlen(header_keys[i]) == kl &&
		    strncmp(k, header_keys[i], kl) == 0)
			which = i;
	if (which == K_N)
		return SD_OK; /* a comment, or a later version's key */
	const char *v = colon + 1;
	if (v < l + ll && *v == ' ')
		v++;
	int nomem = 0;
	char *val = unescape(v, (size_t)(l + ll - v), path, line, &nomem, err,
			     errlen);
	if (!val)
		return nomem ? SD_ERR_NOMEM : SD_ERR_INVALID;
	char **slot = which == K_CONFIG ? &out->config
		      : which == K_DESCRIPTION ? &out->description
		      : which == K_SOURCE ? &out->source : NULL;
	int dup = slot ? *slot != NULL
		  : which == K_NAME    ? out->name[0] != '\0'
		  : which == K_HEALTHY ? out->healthy > 0
				       : out->created_at[0] != '\0';
	int rc = SD_OK;
	char e2[128];
	if (dup) {
		snprintf(err, errlen, "%s:%d: a second '%s' line", path, line,
			 header_keys[which]);
		rc = SD_ERR_INVALID;
	} else if (slot) {
		*slot = val;
		return SD_OK;
	} else if (which == K_CREATED_AT) {
		sd_strlcpy(out->created_at, val, sizeof(out->created_at));
	} else if (which == K_HEALTHY) {
		char *end;
		double h = strtod(val, &end);
		if (end == val || *end || !(h > 0) || !isfinite(h)) {
			snprintf(err, errlen, "%s:%d: healthy '%.40s' must be "
				 "the largest loss difference of healthy runs, "
				 "a number above 0", path, line, val);
			rc = SD_ERR_INVALID;
		} else {
			out->healthy = h;
		}
	} else if (sd_train_ref_check_name(val, e2, sizeof(e2)) != SD_OK) {
		snprintf(err, errlen, "%s:%d: %s", path, line, e2);
		rc = SD_ERR_INVALID;
	} else {
		sd_strlcpy(out->name, val, sizeof(out->name));
	}
	free(val);
	return rc;
}

/* A data line l (ll bytes): step, mean, spread, n, after the steps of
 * out.  SD_OK with *st, or SD_ERR_INVALID with err. */
static int data_line(const char *l, size_t ll, const char *path, int line,
		     const struct sd_train_reference *out,
		     struct sd_train_ref_step *st, char *err, size_t errlen)
{
	const char *f[4];
	size_t fl[4], nf = 0;
	for (const char *q = l; q < l + ll;) {
		while (q < l + ll && (*q == '\t' || *q == ' '))
			q++;
		if (q == l + ll)
			break;
		const char *b = q;
		while (q < l + ll && *q != '\t' && *q != ' ')
			q++;
		if (nf < 4) {
			f[nf] = b;
			fl[nf] = (size_t)(q - b);
		}
		nf++;
	}
	long nn;
	if (nf != 4)
		snprintf(err, errlen, "%s:%d: expected 4 fields (step, mean, "
			 "spread, n), found %zu", path, line, nf);
	else if (parse_long(f[0], fl[0], &st->step) || st->step < 0)
		snprintf(err, errlen, "%s:%d: step '%.*s' is not a whole "
			 "number >= 0", path, line, (int)fl[0], f[0]);
	else if (parse_double(f[1], fl[1], &st->mean))
		snprintf(err, errlen, "%s:%d: mean '%.*s' is not a finite "
			 "number", path, line, (int)fl[1], f[1]);
	else if (parse_double(f[2], fl[2], &st->spread) || st->spread < 0)
		snprintf(err, errlen, "%s:%d: spread '%.*s' is not a finite "
			 "number >= 0", path, line, (int)fl[2], f[2]);
	else if (parse_long(f[3], fl[3], &nn) || nn < 1 || nn > 1000000)
		snprintf(err, errlen, "%s:%d: n '%.*s' is not a count of "
			 "curves (a whole number >= 1)", path, line,
			 (int)fl[3], f[3]);
	else if (out->n && st->step <= out->steps[out->n - 1].step)
		snprintf(err, errlen, "%s:%d: step %ld is not after step %ld; "
			 "steps must increase", path, line, st->step,
			 out->steps[out->n - 1].step);
	else {
		st->n = (int)nn;
		return SD_OK;
	}
	return SD_ERR_INVALID;
}

/* The first line: the format's, of the version this shakedown reads. */
static int first_line(const char *l, size_t ll, const char *path, char *err,
		      size_t errlen)
{
	size_t hl = sizeof(file_head) - 1;
	long v;
	if (ll <= hl || strncmp(l, file_head, hl) != 0 ||
	    parse_long(l + hl, ll - hl, &v) != 0) {
		snprintf(err, errlen, "%s:1: not a shakedown reference (the "
			 "first line is not '%s%d')", path, file_head,
			 SD_TRAIN_REF_FORMAT);
		return SD_ERR_INVALID;
	}
	if (v != SD_TRAIN_REF_FORMAT) {
		snprintf(err, errlen, "%s:1: reference format %ld; this "
			 "shakedown reads format %d (use a newer shakedown)",
			 path, v, SD_TRAIN_REF_FORMAT);
		return SD_ERR_INVALID;
	}
	return SD_OK;
}

int sd_train_ref_parse(const char *text, size_t len, const char *path,
		       struct sd_train_reference *out, char *err,
		       size_t errlen)
{
	const char *p = text, *end = text + len;
	int line = 0, in_header = 1, rc = SD_OK;
	size_t cap = 0;
	static const char shown_column_line[] =
		"step<TAB>mean<TAB>spread<TAB>n";
	memset(out, 0, sizeof(*out));
	if (!path)
		path = "(reference)";
	if (memchr(text, '\0', len)) {
		snprintf(err, errlen, "%s: not a text file (it holds a NUL "
			 "byte)", path);
		return SD_ERR_INVALID;
	}
	while (p < end && rc == SD_OK) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *l = p;
		size_t ll = (size_t)((nl ? nl : end) - p);
		if (ll && l[ll - 1] == '\r')
			ll--; /* a file edited on Windows */
		line++;
		p = nl ? nl + 1 : end;
		if (line == 1) {
			rc = first_line(l, ll, path, err, errlen);
		} else if (in_header && ll == sizeof(column_line) - 1 &&
			   strncmp(l, column_line, ll) == 0) {
			in_header = 0;
		} else if (ll == 0) {
			/* a blank line */
		} else if (in_header && l[0] != '#') {
			snprintf(err, errlen, "%s:%d: expected a header line "
				 "('# key: value') or the column line '%s'",
				 path, line, shown_column_line);
			rc = SD_ERR_INVALID;
		} else if (in_header) {
			rc = header_line(l, ll, path, line, out, err, errlen);
		} else if (l[0] != '#') {
			struct sd_train_ref_step st;
			rc = data_line(l, ll, path, line, out, &st, err,
				       errlen);
			if (rc == SD_OK && out->n == cap) {
				size_t nc = cap ? cap * 2 : 128;
				void *np = realloc(out->steps,
						   nc * sizeof(*out->steps));
				if (np) {
					out->steps = np;
					cap = nc;
				} else {
					snprintf(err, errlen, "out of memory "
						 "reading %s", path);
					rc = SD_ERR_NOMEM;
				}
			}
			if (rc == SD_OK)
				out->steps[out->n++] = st;
		}
	}
	if (rc == SD_OK) {
		rc = SD_ERR_INVALID;
		if (line == 0)
			snprintf(err, errlen, "%s: empty file, not a shakedown "
				 "reference", path);
		else if (!out->name[0])
			snprintf(err, errlen, "%s: no '# name:' line", path);
		else if (!out->config || !*out->config)
			snprintf(err, errlen, "%s: no '# config:' line; a "
				 "reference belongs to one workload config",
				 path);
		else if (in_header)
			snprintf(err, errlen, "%s:%d: no column line '%s' "
				 "before the end", path, line,
				 shown_column_line);
		else if (out->n == 0)
			snprintf(err, errlen, "%s:%d: no steps after the "
				 "column line", path, line);
		else
			return SD_OK;
	}
	sd_train_ref_free(out);
	return rc;
}

int sd_train_ref_save(const struct sd_train_reference *r, const char *path,
		      char *err, size_t errlen)
{
	char *text = NULL, failed[4200];
	int rc = sd_train_ref_format(r, &text, err, errlen);
	if (rc != SD_OK)
		return rc;
	rc = sd_write_replace(path, text, strlen(text), failed,
			      sizeof(failed));
	int e = errno;
	free(text);
	if (rc == -2) {
		snprintf(err, errlen, "%s: path too long", path);
		return SD_ERR_INVALID;
	}
	if (rc) {
		snprintf(err, errlen, "%s: cannot write it (%s); choose "
			 "another path", failed, strerror(e));
		return SD_ERR_IO;
	}
	return SD_OK;
}

/* Largest reference file read (a million steps is ~50 MB). */
#define REF_FILE_MAX (256L << 20)

int sd_train_ref_load(const char *path, struct sd_train_reference *out,
		      char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	FILE *f = fopen(path, "rb");
	if (!f) {
		snprintf(err, errlen, "%s: cannot read it (%s)", path,
			 strerror(errno));
		return SD_ERR_IO;
	}
	struct stat st;
	if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode) ||
	    st.st_size > REF_FILE_MAX) {
		snprintf(err, errlen, "%s: not a regular file of at most %ld "
			 "MiB", path, REF_FILE_MAX >> 20);
		fclose(f);
		return SD_ERR_IO;
	}
	char *text = malloc((size_t)st.st_size + 1);
	size_t got = text ? fread(text, 1, (size_t)st.st_size, f) : 0;
	int rerr = ferror(f);
	fclose(f);
	if (!text || rerr || got != (size_t)st.st_size) {
		snprintf(err, errlen, "%s: cannot read it%s", path,
			 text ? "" : " (out of memory)");
		free(text);
		return text ? SD_ERR_IO : SD_ERR_NOMEM;
	}
	text[got] = '\0';
	int rc = sd_train_ref_parse(text, got, path, out, err, errlen);
	free(text);
	if (rc == SD_OK && !out->source) {
		size_t need = strlen(path) + 6;
		out->source = malloc(need);
		if (!out->source) {
			sd_train_ref_free(out);
			snprintf(err, errlen, "out of memory reading %s", path);
			return SD_ERR_NOMEM;
		}
		snprintf(out->source, need, "file %s", path);
	}
	return rc;
}
