/*
 * hostlist.c - compress host names into a Slurm hostlist (see hostlist.h).
 *
 * With libslurm the work is Slurm's (slurm_hostlist_*), so the string is the
 * one squeue prints.  The built-in compressor handles what real clusters
 * name their nodes: a prefix and a decimal suffix, zero-padded or not.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#ifdef HAVE_SLURM
#include <slurm/slurm.h>
#endif

#include "hostlist.h"

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
