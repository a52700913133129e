/*
 * switches.c - each host's leaf switch from Slurm's topology.conf or a
 * plan's map (switches.h).
 *
 * The job's hosts are sorted once by name, so that every name a hostlist
 * expands to is looked up by binary search: a topology.conf lists the
 * whole cluster, and most of its names are not the job's.
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hostlist.h"
#include "shakedown/backend.h"
#include "switches.h"

/* A topology.conf larger than this is refused: it is not one. */
#define CONF_MAX (64 << 20)

/* One host of the job, to look up by name. */
struct entry {
	const char *name;
	int host;
};

/* The reading of one text. */
struct reader {
	const char *where;     /* the text's name in messages */
	struct entry *by_name; /* the job's hosts sorted by name */
	int nentries;
	struct sd_switches *out;
	int cap; /* room in out->names */
	char *err;
	size_t errlen;
};

static int failf(struct reader *r, int rc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int failf(struct reader *r, int rc, const char *fmt, ...)
{
	va_list ap;
	if (r->err && r->errlen) {
		va_start(ap, fmt);
		vsnprintf(r->err, r->errlen, fmt, ap);
		va_end(ap);
	}
	return rc;
}

static int nomem(struct reader *r)
{
	return failf(r, SD_ERR_NOMEM, "out of memory reading %s", r->where);
}

static int entry_cmp(const void *pa, const void *pb)
{
	const struct entry *a = pa, *b = pb;
	int c = strcmp(a->name, b->name);
	return c ? c : (a->host > b->host) - (a->host < b->host);
}

/* The first of the job's hosts called name, or nentries when none is. */
static int first_named(const struct reader *r, const char *name)
{
	int lo = 0, hi = r->nentries;
	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;
		if (strcmp(r->by_name[mid].name, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* " (line N)" of a topology.conf, "" for a plan's map (line 0). */
static const char *at_line(int line, char *buf, size_t len)
{
	if (line <= 0)
		return "";
	snprintf(buf, len, " (line %d)", line);
	return buf;
}

/* The index of switch name in out->names, added when it is not there;
 * -1 when memory runs out. */
static int switch_index(struct reader *r, const char *name)
{
	struct sd_switches *s = r->out;
	for (int i = 0; i < s->nswitches; i++)
		if (!strcmp(s->names[i], name))
			return i;
	if (s->nswitches == r->cap) {
		int cap = r->cap ? 2 * r->cap : 8;
		char **v = realloc(s->names, (size_t)cap * sizeof(*v));
		if (!v)
			return -1;
		s->names = v;
		r->cap = cap;
	}
	if (!(s->names[s->nswitches] = strdup(name)))
		return -1;
	return s->nswitches++;
}

/* Switch name holds the hosts of list (on line `line` of a topology.conf,
 * 0 in a plan's map): each of them that is the job's hangs from it. */
static int add_switch(struct reader *r, const char *name, const char *list,
		      int line)
{
	char why[256], lb[32];
	char **v;
	int n, idx = -1;
	const char *at = at_line(line, lb, sizeof(lb));
	int rc = sd_hostlist_parse(list, &v, &n, why, sizeof(why));

	if (rc == SD_ERR_NOMEM)
		return nomem(r);
	if (rc)
		return failf(r, rc,
			     "switch %s in %s%s: %s (a hostlist is names "
			     "and ranges, e.g. node[01-04,07])",
			     name, r->where, at, why);
	for (int i = 0; i < n && !rc; i++) {
		for (int k = first_named(r, v[i]);
		     k < r->nentries && !strcmp(r->by_name[k].name, v[i]);
		     k++) {
			int h = r->by_name[k].host, was = r->out->switch_of[h];
			if (idx < 0 && (idx = switch_index(r, name)) < 0) {
				rc = nomem(r);
				break;
			}
			if (was < 0) {
				r->out->switch_of[h] = idx;
			} else if (was != idx) {
				rc = failf(r, SD_ERR_INVALID,
					   "%s is under switch %s and %s in "
					   "%s%s: a host hangs from one leaf "
					   "switch; list it under one of them",
					   v[i], r->out->names[was], name,
					   r->where, at);
				break;
			}
		}
	}
	sd_hostlist_free(v, n);
	return rc;
}

/* A value without the double quotes around it, if it has them. */
static char *unquote(char *v)
{
	size_t n = strlen(v);
	if (n >= 2 && v[0] == '"' && v[n - 1] == '"') {
		v[n - 1] = '\0';
		return v + 1;
	}
	return v;
}

/* One line of a topology.conf, continuations joined and comment cut
 * (changed in place): KEY=VALUE words apart by whitespace. */
static int conf_line(struct reader *r, char *s, int line)
{
	char *name = NULL, *nodes = NULL, *save = NULL, lb[32];
	const char *at = at_line(line, lb, sizeof(lb));

	for (char *w = strtok_r(s, " \t\r\v\f", &save); w;
	     w = strtok_r(NULL, " \t\r\v\f", &save)) {
		char *eq = strchr(w, '=');
		char **slot = NULL;
		if (!eq || eq == w)
			return failf(r, SD_ERR_INVALID,
				     "'%.80s' in %s%s is not KEY=VALUE; a "
				     "switch is SwitchName=NAME Nodes=HOSTLIST",
				     w, r->where, at);
		*eq = '\0';
		if (!strcasecmp(w, "SwitchName"))
			slot = &name;
		else if (!strcasecmp(w, "Nodes"))
			slot = &nodes;
		if (!slot)
			continue; /* Switches=, LinkSpeed=, ... */
		if (*slot)
			return failf(r, SD_ERR_INVALID,
				     "%s= is given twice in %s%s; keep one", w,
				     r->where, at);
		*slot = unquote(eq + 1);
	}
	if (!name)
		return SD_OK; /* not a switch (topology/block's lines) */
	if (!name[0])
		return failf(r, SD_ERR_INVALID,
			     "SwitchName= has no name in %s%s; write "
			     "SwitchName=NAME",
			     r->where, at);
	if (!nodes || !nodes[0])
		return SD_OK; /* a switch above the leaves */
	return add_switch(r, name, nodes, line);
}

/* A growing line. */
struct line {
	char *s;
	size_t len, cap;
};

static int line_add(struct line *l, const char *s, size_t n)
{
	if (l->len + n + 2 > l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 256;
		while (cap < l->len + n + 2)
			cap *= 2;
		char *p = realloc(l->s, cap);
		if (!p)
			return -1;
		l->s = p;
		l->cap = cap;
	}
	memcpy(l->s + l->len, s, n);
	l->len += n;
	l->s[l->len] = '\0';
	return 0;
}

/* A topology.conf: '#' starts a comment, a backslash at the end of a
 * line joins the next to it. */
static int read_conf(struct reader *r, const char *text)
{
	struct line l = { 0 };
	int rc = SD_OK, lineno = 0, first = 0;
	const char *p = text;

	while (!rc && *p) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		const char *hash = memchr(p, '#', n);
		size_t keep = hash ? (size_t)(hash - p) : n;
		int more;

		lineno++;
		while (keep > 0 && strchr(" \t\r\v\f", p[keep - 1]))
			keep--;
		more = keep > 0 && p[keep - 1] == '\\';
		if (more)
			keep--;
		if (!l.len)
			first = lineno;
		if (line_add(&l, p, keep) || (more && line_add(&l, " ", 1))) {
			rc = nomem(r);
			break;
		}
		p += nl ? n + 1 : n;
		if (more && *p)
			continue;
		rc = conf_line(r, l.s, first);
		l.len = 0;
	}
	free(l.s);
	return rc;
}

/* One NAME=HOSTLIST item of a plan's map (changed in place). */
static int map_item(struct reader *r, char *item)
{
	char *eq = strchr(item, '=');
	if (eq == item || !eq[1] || strchr(eq + 1, '='))
		return failf(r, SD_ERR_INVALID,
			     "item '%.80s' of %s is not NAME=HOSTLIST; write "
			     "switches as s0=node[01-04] s1=node[05-08]",
			     item, r->where);
	*eq = '\0';
	return add_switch(r, item, eq + 1, 0);
}

/* A plan's map: NAME=HOSTLIST items apart by whitespace or by commas
 * outside brackets; a piece with no '=' after a comma goes on the
 * hostlist of the item before it. */
static int read_map(struct reader *r, char *text)
{
	char *save = NULL;
	int rc = SD_OK;

	for (char *w = strtok_r(text, " \t\r\n\v\f", &save); w && !rc;
	     w = strtok_r(NULL, " \t\r\n\v\f", &save)) {
		char *item = NULL, *piece = w;
		int inside = 0;
		for (char *c = w;; c++) {
			if (*c == '[')
				inside = 1;
			else if (*c == ']')
				inside = 0;
			if (*c && (inside || *c != ','))
				continue;
			if (c == piece) { /* an empty piece: ",," */
				if (!*c)
					break;
				piece = c + 1;
				continue;
			}
			/* a piece ends at c: does it start an item? */
			char *eq = memchr(piece, '=', (size_t)(c - piece));
			if (!item && !eq)
				return failf(r, SD_ERR_INVALID,
					     "'%.*s' in %s is not "
					     "NAME=HOSTLIST; write switches "
					     "as s0=node[01-04] s1=node[05-08]",
					     (int)(c - piece > 80 ? 80
								  : c - piece),
					     piece, r->where);
			if (eq && item) {
				piece[-1] = '\0'; /* the comma before it */
				if ((rc = map_item(r, item)))
					return rc;
			}
			if (eq)
				item = piece;
			if (!*c)
				break;
			piece = c + 1;
		}
		if (item)
			rc = map_item(r, item);
	}
	return rc;
}

void sd_switches_free(struct sd_switches *s)
{
	if (!s)
		return;
	for (int i = 0; i < s->nswitches; i++)
		free(s->names[i]);
	free(s->names);
	free(s->switch_of);
	memset(s, 0, sizeof(*s));
}

int sd_switches_parse(const char *text, int conf, const char *where,
		      const char *const *hosts, int nhosts,
		      struct sd_switches *out, char *err, size_t errlen)
{
	struct reader r = { 0 };
	char *copy = NULL;
	int rc;

	memset(out, 0, sizeof(*out));
	r.where = conf ? "topology.conf" : "the plan's switches";
	if (where && where[0])
		r.where = where;
	r.out = out;
	r.err = err;
	r.errlen = errlen;
	if (err && errlen)
		err[0] = '\0';
	if (nhosts < 0 || (nhosts > 0 && !hosts))
		return failf(&r, SD_ERR_INVALID,
			     "no hosts given to place under the switches of "
			     "%s",
			     r.where);
	out->nhosts = nhosts;
	out->switch_of = malloc((size_t)(nhosts ? nhosts : 1) * sizeof(int));
	r.by_name = malloc((size_t)(nhosts ? nhosts : 1) * sizeof(*r.by_name));
	copy = text ? strdup(text) : calloc(1, 1);
	if (!out->switch_of || !r.by_name || !copy) {
		rc = nomem(&r);
		goto done;
	}
	for (int h = 0; h < nhosts; h++) {
		out->switch_of[h] = -1;
		if (hosts[h] && hosts[h][0])
			r.by_name[r.nentries++] =
				(struct entry){ .name = hosts[h], .host = h };
	}
	qsort(r.by_name, (size_t)r.nentries, sizeof(*r.by_name), entry_cmp);
	rc = conf ? read_conf(&r, copy) : read_map(&r, copy);
done:
	free(copy);
	free(r.by_name);
	if (rc)
		sd_switches_free(out);
	return rc;
}

int sd_switches_conf_path(char *path, size_t len)
{
	const char *conf = getenv("SLURM_CONF");
	const char *slash;
	struct stat st;
	int n;

	if (!path || !len)
		return 0;
	if (!conf || !conf[0])
		conf = "/etc/slurm/slurm.conf";
	slash = strrchr(conf, '/');
	n = snprintf(path, len, "%.*stopology.conf",
		     slash ? (int)(slash - conf + 1) : 0, conf);
	if (n < 0 || (size_t)n >= len) {
		path[0] = '\0';
		return 0;
	}
	return stat(path, &st) == 0 && !S_ISDIR(st.st_mode) &&
	       access(path, R_OK) == 0;
}

int sd_switches_read_conf(const char *path, const char *const *hosts,
			  int nhosts, struct sd_switches *out, char *err,
			  size_t errlen)
{
	struct reader r = { .where = path, .err = err, .errlen = errlen };
	size_t len = 0, cap = 0;
	char *text = NULL;
	FILE *f;
	int rc;

	memset(out, 0, sizeof(*out));
	if (!(f = fopen(path, "r")))
		return failf(&r, SD_ERR_IO,
			     "cannot read Slurm's topology %s: %s", path,
			     strerror(errno));
	for (;;) {
		if (len > CONF_MAX) {
			rc = failf(&r, SD_ERR_INVALID,
				   "%s is larger than %d MiB: not a "
				   "topology.conf",
				   path, CONF_MAX >> 20);
			free(text);
			fclose(f);
			return rc;
		}
		if (len + 4096 + 1 > cap) {
			size_t c = cap ? 2 * cap : 8192;
			char *t = realloc(text, c);
			if (!t) {
				free(text);
				fclose(f);
				return nomem(&r);
			}
			text = t;
			cap = c;
		}
		size_t k = fread(text + len, 1, 4096, f);
		len += k;
		if (k < 4096)
			break;
	}
	text[len] = '\0';
	if (ferror(f)) {
		rc = failf(&r, SD_ERR_IO, "reading Slurm's topology %s: %s",
			   path, strerror(errno));
		free(text);
		fclose(f);
		return rc;
	}
	fclose(f);
	rc = sd_switches_parse(text, 1, path, hosts, nhosts, out, err, errlen);
	free(text);
	return rc;
}
