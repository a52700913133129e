/*
 * hostlist.c - compress host names into a Slurm hostlist, and expand one
 * into its names (see hostlist.h).
 *
 * With libslurm the compression is Slurm's (slurm_hostlist_*), so the
 * string is the one squeue prints.  The built-in compressor handles what
 * real clusters name their nodes: a prefix and a decimal suffix,
 * zero-padded or not.  The expander is always built in: it reads a list
 * twice, once to check it and count its names (so that a list too long is
 * refused before anything is allocated), once to write them.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#ifdef HAVE_SLURM
#include <slurm/slurm.h>
#endif

#include "hostlist.h"
#include "shakedown/backend.h"

/* One host name split into prefix and numeric suffix. */
struct host {
	const char *name;
	size_t prefix_len;   /* characters before the trailing digits */
	int has_num;         /* 0: no trailing digits */
	unsigned long num;   /* value of the trailing digits */
	int width;           /* number of trailing digits */
	int padded;          /* the digits start with 0 and there are > 1 */
};

/* A growing output string. */
struct out {
	char *buf;
	size_t len, cap;
	int failed;
};

static void out_add(struct out *o, const char *s, size_t n)
{
	if (o->failed)
		return;
	if (o->len + n + 1 > o->cap) {
		size_t cap = o->cap ? o->cap * 2 : 64;
		while (cap < o->len + n + 1)
			cap *= 2;
		char *p = realloc(o->buf, cap);
		if (!p) {
			o->failed = 1;
			return;
		}
		o->buf = p;
		o->cap = cap;
	}
	memcpy(o->buf + o->len, s, n);
	o->len += n;
	o->buf[o->len] = '\0';
}

static void host_parse(struct host *h, const char *name)
{
	size_t len = strlen(name), p = len;
	while (p > 0 && name[p - 1] >= '0' && name[p - 1] <= '9')
		p--;
	/* Very long digit runs would overflow: treat them as plain names. */
	if (len - p > 18)
		p = len;
	h->name = name;
	h->prefix_len = p;
	h->has_num = p < len;
	h->width = (int)(len - p);
	h->padded = h->width > 1 && name[p] == '0';
	h->num = h->has_num ? strtoul(name + p, NULL, 10) : 0;
}

static int prefix_cmp(const struct host *a, const struct host *b)
{
	size_t n = a->prefix_len < b->prefix_len ? a->prefix_len : b->prefix_len;
	int c = memcmp(a->name, b->name, n);
	if (c)
		return c;
	return (a->prefix_len > b->prefix_len) - (a->prefix_len < b->prefix_len);
}

static int host_cmp(const void *pa, const void *pb)
{
	const struct host *a = pa, *b = pb;
	int c = prefix_cmp(a, b);
	if (c)
		return c;
	if (a->has_num != b->has_num)
		return a->has_num - b->has_num;
	if (a->num != b->num)
		return a->num < b->num ? -1 : 1;
	return a->width - b->width;
}

/* Can a and b sit in one bracket group (same prefix, compatible digits)? */
static int compatible(const struct host *a, const struct host *b)
{
	if (!a->has_num || !b->has_num || prefix_cmp(a, b))
		return 0;
	if (!a->padded && !b->padded)
		return 1;
	return a->width == b->width;
}

static void out_digits(struct out *o, const struct host *h)
{
	out_add(o, h->name + h->prefix_len, (size_t)h->width);
}

char *sd_hostlist_compress_builtin(const char *const *hosts, int n)
{
	struct host *v = calloc(n > 0 ? (size_t)n : 1, sizeof(*v));
	struct out o = {0};
	int m = 0;
	if (!v)
		return NULL;
	for (int i = 0; i < n; i++)
		if (hosts[i] && hosts[i][0])
			host_parse(&v[m++], hosts[i]);
	qsort(v, (size_t)m, sizeof(*v), host_cmp);
	/* Drop duplicates: equal names are neighbours once sorted. */
	int u = 0;
	for (int k = 0; k < m; k++)
		if (!u || strcmp(v[u - 1].name, v[k].name))
			v[u++] = v[k];
	m = u;
	out_add(&o, "", 0);
	int i = 0;
	while (i < m) {
		/* A group: hosts i..j-1 that can share brackets. */
		int j = i + 1;
		while (j < m && compatible(&v[i], &v[j]))
			j++;
		if (o.len)
			out_add(&o, ",", 1);
		out_add(&o, v[i].name, v[i].prefix_len);
		if (j == i + 1) {
			if (v[i].has_num)
				out_digits(&o, &v[i]);
			i = j;
			continue;
		}
		out_add(&o, "[", 1);
		int k = i, first = 1;
		while (k < j) {
			int hi = k;
			while (hi + 1 < j && v[hi + 1].num == v[hi].num + 1)
				hi++;
			if (!first)
				out_add(&o, ",", 1);
			first = 0;
			out_digits(&o, &v[k]);
			if (v[hi].num != v[k].num) {
				out_add(&o, "-", 1);
				out_digits(&o, &v[hi]);
			}
			k = hi + 1;
		}
		out_add(&o, "]", 1);
		i = j;
	}
	free(v);
	if (o.failed) {
		free(o.buf);
		return NULL;
	}
	return o.buf;
}

char *sd_hostlist_compress(const char *const *hosts, int n)
{
#ifdef HAVE_SLURM
	hostlist_t hl = slurm_hostlist_create(NULL);
	char *s, *copy;
	if (!hl)
		return sd_hostlist_compress_builtin(hosts, n);
	for (int i = 0; i < n; i++)
		if (hosts[i] && hosts[i][0])
			slurm_hostlist_push_host(hl, hosts[i]);
	slurm_hostlist_uniq(hl);
	s = slurm_hostlist_ranged_string_malloc(hl);
	slurm_hostlist_destroy(hl);
	if (!s)
		return NULL;
	/* Slurm's string comes from its own allocator: hand back ours. */
	copy = strdup(s);
	free(s);
	return copy;
#else
	return sd_hostlist_compress_builtin(hosts, n);
#endif
}

/*
 * Expansion.  A list is items apart by commas or whitespace outside
 * brackets; an item is literal text and bracket groups; a group is ranges
 * apart by commas, a range N or N-M (N <= M, at most 9 digits each).
 */

/* At most this many bracket groups in one item: the writer recurses once
 * per group. */
#define GROUPS_MAX 16
#define DIGITS_MAX 9

static int is_sep(char c)
{
	return c == ',' || c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* The length of the item at s: up to a separator outside brackets. */
static size_t item_len(const char *s)
{
	size_t i = 0;
	int inside = 0;
	for (; s[i]; i++) {
		if (s[i] == '[')
			inside = 1;
		else if (s[i] == ']')
			inside = 0;
		else if (!inside && is_sep(s[i]))
			break;
	}
	return i;
}

/* A number at *p (before end): its value and digits, *p moved past it.
 * Returns the number of digits (0: none there). */
static int number(const char **p, const char *end, unsigned long *v)
{
	int w = 0;
	*v = 0;
	while (*p < end && **p >= '0' && **p <= '9') {
		if (w < DIGITS_MAX)
			*v = *v * 10 + (unsigned long)(**p - '0');
		w++;
		(*p)++;
	}
	return w;
}

/* Why a range cannot be read at p (before end). */
static const char *bad_range(const char *p, const char *end)
{
	if (p == end)
		return "no ']' closes the '['";
	if (*p == '[')
		return "a '[' inside brackets";
	if (*p == ' ' || *p == '\t')
		return "whitespace inside brackets";
	if (*p == ']' || *p == ',')
		return "an empty range: brackets hold N or N-M, apart by "
		       "commas";
	return "a range is N or N-M with numbers N and M";
}

/* The range at *p (before end): N or N-M.  Fills lo, hi and width (N's
 * digits, the padding of every name) and moves *p past it; 0, or -1 with
 * *why. */
static int range(const char **p, const char *end, unsigned long *lo,
		 unsigned long *hi, int *width, const char **why)
{
	int w = number(p, end, lo), v = 0;
	if (!w) {
		*why = bad_range(*p, end);
		return -1;
	}
	*hi = *lo;
	if (*p < end && **p == '-') {
		(*p)++;
		v = number(p, end, hi);
		if (!v) {
			*why = *p < end && (**p == ']' || **p == ',')
				       ? "a range N-M with no M"
				       : bad_range(*p, end);
			return -1;
		}
	}
	if (w > DIGITS_MAX || v > DIGITS_MAX) {
		*why = "a number of more than 9 digits";
		return -1;
	}
	if (*hi < *lo) {
		*why = "a range N-M with M below N";
		return -1;
	}
	*width = w;
	return 0;
}

/* The bracket group after the '[' at s (item ends at end): checks it,
 * counts its numbers into *count and sets *close to its ']'.  0, or -1
 * with *why. */
static int group(const char *s, const char *end, const char **close,
		 unsigned long long *count, const char **why)
{
	unsigned long lo, hi;
	int w;
	*count = 0;
	for (;;) {
		if (range(&s, end, &lo, &hi, &w, why))
			return -1;
		*count += hi - lo + 1;
		if (s < end && *s == ',') {
			s++;
			continue;
		}
		if (s < end && *s == ']') {
			*close = s;
			return 0;
		}
		*why = bad_range(s, end);
		return -1;
	}
}

/* Check the item s (len bytes) and count its names into *count (capped
 * just above SD_HOSTLIST_MAX).  0, or -1 with *why. */
static int item_count(const char *s, size_t len, unsigned long long *count,
		      const char **why)
{
	const char *end = s + len;
	unsigned long long c = 1, g;
	int groups = 0;
	for (const char *p = s; p < end; p++) {
		if (*p == ']') {
			*why = "a ']' with no '[' before it";
			return -1;
		}
		if (*p != '[')
			continue;
		if (++groups > GROUPS_MAX) {
			*why = "more than 16 bracket groups in one name";
			return -1;
		}
		if (group(p + 1, end, &p, &g, why))
			return -1;
		if (g > SD_HOSTLIST_MAX)
			g = SD_HOSTLIST_MAX + 1ull;
		c *= g;
		if (c > SD_HOSTLIST_MAX)
			c = (unsigned long long)SD_HOSTLIST_MAX + 1;
	}
	*count = c;
	return 0;
}

/* Names being written: the array and the name being built. */
struct names {
	char **v;
	int n;
	char *buf;
};

/* Write the names of the checked item p..end after the pos characters
 * already in buf; 0, or -1 when memory runs out. */
static int item_write(struct names *o, const char *p, const char *end,
		      size_t pos)
{
	while (p < end && *p != '[')
		o->buf[pos++] = *p++;
	if (p == end) {
		o->buf[pos] = '\0';
		if (!(o->v[o->n] = strdup(o->buf)))
			return -1;
		o->n++;
		return 0;
	}
	const char *close = memchr(p, ']', (size_t)(end - p));
	const char *why;
	unsigned long lo, hi;
	int w;
	p++;
	while (p < close) {
		range(&p, close, &lo, &hi, &w, &why);
		for (unsigned long v = lo; v <= hi; v++) {
			int k = snprintf(o->buf + pos, DIGITS_MAX + 1, "%0*lu",
					 w, v);
			if (item_write(o, close + 1, end, pos + (size_t)k))
				return -1;
		}
		if (*p == ',')
			p++;
	}
	return 0;
}

static int fail(char *err, size_t errlen, int rc, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int fail(char *err, size_t errlen, int rc, const char *fmt, ...)
{
	va_list ap;
	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return rc;
}

void sd_hostlist_free(char **names, int n)
{
	if (!names)
		return;
	for (int i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

int sd_hostlist_parse(const char *list, char ***names, int *n, char *err,
		      size_t errlen)
{
	unsigned long long total = 0, c;
	size_t longest = 0, len;
	const char *p, *why;
	struct names o = { 0 };

	*names = NULL;
	*n = 0;
	if (err && errlen)
		err[0] = '\0';
	if (!list)
		list = "";
	/* First pass: check every item and count the names. */
	for (p = list; *p; p += len) {
		if (is_sep(*p)) {
			len = 1;
			continue;
		}
		len = item_len(p);
		if (item_count(p, len, &c, &why))
			return fail(err, errlen, SD_ERR_INVALID,
				    "malformed hostlist item '%.*s': %s",
				    (int)(len > 80 ? 80 : len), p, why);
		total += c;
		if (total > SD_HOSTLIST_MAX)
			return fail(err, errlen, SD_ERR_INVALID,
				    "hostlist '%.80s%s' expands to more than "
				    "%d names",
				    list, strlen(list) > 80 ? "..." : "",
				    SD_HOSTLIST_MAX);
		if (len > longest)
			longest = len;
	}
	/* Second pass: write them. */
	o.v = calloc(total ? (size_t)total : 1, sizeof(*o.v));
	o.buf = malloc(longest + DIGITS_MAX + 2);
	if (!o.v || !o.buf)
		goto nomem;
	for (p = list; *p; p += len) {
		if (is_sep(*p)) {
			len = 1;
			continue;
		}
		len = item_len(p);
		if (item_write(&o, p, p + len, 0))
			goto nomem;
	}
	free(o.buf);
	*names = o.v;
	*n = o.n;
	return SD_OK;
nomem:
	free(o.buf);
	sd_hostlist_free(o.v, o.n);
	return fail(err, errlen, SD_ERR_NOMEM,
		    "out of memory expanding a hostlist of %llu names", total);
}

char **sd_hostlist_expand(const char *list, int *n)
{
	char **names;
	int rc = sd_hostlist_parse(list, &names, n, NULL, 0);
	return rc == SD_OK ? names : NULL;
}

void sd_host_quote(const char *host, char *buf, size_t len)
{
	size_t used = 0, i;
	if (!len)
		return;
	if (!host)
		host = "";
	buf[0] = '\0';
	if (len < 8)
		return;
	buf[used++] = '\'';
	for (i = 0; host[i] && i < 80; i++) {
		unsigned char c = (unsigned char)host[i];
		if (used + 8 >= len)
			break;
		if (c < 0x20 || c > 0x7e || c == '\\')
			used += (size_t)snprintf(buf + used, len - used,
						 "\\x%02x", c);
		else
			buf[used++] = (char)c;
	}
	buf[used++] = '\'';
	buf[used] = '\0';
	if (host[i] && used + 4 < len)
		snprintf(buf + used, len - used, "...");
}

int sd_hostlist_check_host(const char *host, char *const *alloc, int nalloc,
			   char *err, size_t errlen)
{
	size_t len = host ? strlen(host) : 0;
	if (err && errlen)
		err[0] = '\0';
	if (!len)
		return fail(err, errlen, SD_ERR_INVALID, "an empty host name");
	if (len > SD_HOST_NAME_MAX)
		return fail(err, errlen, SD_ERR_INVALID,
			    "a host name of %zu characters (at most %d)", len,
			    SD_HOST_NAME_MAX);
	/* the expander's reading first: Slurm reads NodeName= the same */
	for (size_t i = 0; i < len; i++) {
		char c = host[i];
		if (c == '[' || c == ']')
			return fail(err, errlen, SD_ERR_INVALID,
				    "it holds '%c': Slurm reads it as a "
				    "hostlist of ranges, not one host", c);
		if (c == ',')
			return fail(err, errlen, SD_ERR_INVALID,
				    "it holds ',': Slurm reads it as a list "
				    "of hosts, not one host");
		if (is_sep(c) || c == '\v' || c == '\f')
			return fail(err, errlen, SD_ERR_INVALID,
				    "it holds whitespace: Slurm reads it as "
				    "a list of hosts, not one host");
	}
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)host[i];
		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '_')
			continue;
		if (c >= 0x20 && c < 0x7f)
			return fail(err, errlen, SD_ERR_INVALID,
				    "it holds '%c': a host name is letters, "
				    "digits, '.', '-' and '_'", c);
		return fail(err, errlen, SD_ERR_INVALID,
			    "it holds the byte 0x%02x: a host name is "
			    "letters, digits, '.', '-' and '_'", c);
	}
	if (host[0] == '-' || host[0] == '.')
		return fail(err, errlen, SD_ERR_INVALID,
			    "a host name does not start with '%c'", host[0]);
	if (!strcasecmp(host, "ALL"))
		return fail(err, errlen, SD_ERR_INVALID,
			    "Slurm reads NodeName=ALL as every node of the "
			    "cluster");
	for (int i = 0; i < nalloc; i++)
		if (alloc[i] && !strcmp(alloc[i], host))
			return SD_OK;
	return fail(err, errlen, SD_ERR_INVALID,
		    "it is not a host of the job's allocation");
}
