/*
 * cmd_topo.c - `shakedown topo`: what the job runs on.  Started like
 * `shakedown run` (forked by --local, under srun through PMI2, or alone),
 * every rank bootstraps, loads the backend and builds the world
 * communicator; then every rank says where it is (host, rank, local rank,
 * device, CPU affinity and its NUMA nodes) and one rank per host (local
 * rank 0) says what the host has: its devices' links (the backend's
 * describe_links), NUMA nodes and network interfaces (lib/topo.c).  Rank 0
 * prints a table per host and one of interfaces, or one JSON document.
 *
 * Each host's leader sends its part as "JSON\0ROWS": the JSON object of the
 * host, and the table cells it computed from the same facts (links, NUMA,
 * one line per interface), so that rank 0 prints without parsing JSON.
 */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bootstrap.h"
#include "commands.h"
#include "names.h"
#include "plugin.h"
#include "job.h"
#include "job_options.h"
#include "ranks.h"
#include "tool.h"
#include "topo.h"
#include "util.h"

/* a usage error of `shakedown topo` (src/ranks.h) */
/* The most bytes of links JSON a backend may write for one host. */
#define LINKS_JSON_MAX (256u * 1024u)
/* The default bound of communicator creation and one rendezvous round. */
#define TOPO_TIMEOUT_MS 60000

enum topo_format { TOPO_TABLE = 0, TOPO_JSON };

struct topo_options {
	struct sd_job_options job; /* --local --backend --iface --timeout */
	enum topo_format format;
};

/* What every rank says about itself (allgathered as bytes). */
struct topo_rank {
	int rank, local_rank, pid;
	char host[64];
	struct sd_device_info dev;
	char cpus[256];          /* CPU affinity, a cpulist */
	char numa[64];           /* the NUMA nodes of those CPUs */
};

enum long_only {
	OPT_FORMAT = 256,
};

/* topo's own options, after the shared ones (job_options.h) */
static const struct option own_options[] = {
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 }
};

/* Parse argv into o.  Returns -1 to go on, else an exit status. */
static int parse_options(int argc, char **argv, struct topo_options *o)
{
	static const struct sd_name_row formats[] = {
		{ "table", TOPO_TABLE }, { "json", TOPO_JSON }, { NULL, 0 }
	};
	int ch, f;
	const char *hint;
	opterr = 0;
	optind = 1;
	char oerr[256];
	struct option rows[SD_JOB_OPTION_ROWS + SD_ROWS(own_options)];
	const struct option *opts = SD_JOB_ROWS("topo", own_options, rows);
	while ((ch = sd_job_getopt(argc, argv, ":T:h", opts, &o->job, oerr,
				   sizeof(oerr))) != -1) {
		switch (ch) {
		case SD_OPT_REFUSED:
			return sd_usage_error("topo", "%s", oerr);
		case OPT_FORMAT:
			hint = NULL;
			if (sd_name_lookup(formats, optarg, &f, &hint))
				return sd_usage_error("topo", "--format '%s' must be table or "
					    "json%s%s%s", optarg,
					    hint ? "; did you mean '" : "",
					    hint ? hint : "", hint ? "'?" : "");
			o->format = (enum topo_format)f;
			break;
		case 'h':
			sd_help_print(stdout, sd_help_topo);
			return sd_finish_stdout();
		case ':':
		default:
			return sd_option_error("topo", ch, argv);
		}
	}
	if (optind < argc)
		return sd_usage_error("topo", "unexpected argument '%s'; see 'shakedown help "
			    "topo'", argv[optind]);
	sd_job_options_end(&o->job);
	return -1;
}

struct topo_ctx {
	struct topo_options opt;
	struct sd_bootstrap_impl *boot;
	struct sd_plugin plugin;
	struct sd_comm *comm;
};

/* ------------------------------------------------- a host's own part */

/* Count the "class" values of a links array into a cell such as
 * "nvswitch:28" or "pcie-switch:2,cross-socket:4" ("-" when none). */
static void links_cell(const char *json, char *out, size_t len)
{
	struct { char name[32]; int n; } seen[16];
	int nseen = 0;
	const char *key = "\"class\":\"";
	for (const char *p = json; (p = strstr(p, key)) != NULL;) {
		p += strlen(key);
		const char *q = strchr(p, '"');
		if (!q)
			break;
		char name[32];
		snprintf(name, sizeof(name), "%.*s", (int)(q - p), p);
		int k = 0;
		while (k < nseen && strcmp(seen[k].name, name) != 0)
			k++;
		if (k == nseen && nseen < 16) {
			sd_strlcpy(seen[k].name, name, sizeof(seen[k].name));
			seen[k].n = 0;
			nseen++;
		}
		if (k < nseen)
			seen[k].n++;
		p = q;
	}
	out[0] = '\0';
	for (int k = 0; k < nseen; k++) {
		char piece[64];
		size_t u = strlen(out);
		snprintf(piece, sizeof(piece), "%s%.31s:%d", k ? "," : "",
			 seen[k].name, seen[k].n);
		if (u + 1 < len)
			sd_strlcpy(out + u, piece, len - u);
	}
	if (!out[0])
		sd_strlcpy(out, "-", len);
}

/*
 * The leader's part: the host's JSON object (links, note, then the fields
 * of sd_topo_json), a NUL, and its table cells: "LINKS\tNUMA\tNOTE\n" and one
 * "NAME\tSTATE\tSPEED\tMTU\tADDRESS\tIPV4\n" per interface.  Returns a
 * malloc'd buffer of *len bytes, or NULL when memory runs out.
 */
static char *host_part(struct topo_ctx *c, const struct sd_topo_host *t,
		       size_t *len)
{
	const struct sd_backend_ops *ops = c->plugin.ops;
	char *links = malloc(LINKS_JSON_MAX), note[512] = "", cell[256];
	char *topo = sd_topo_json(t);
	struct sd_buf b = { 0 };
	int bad = !links || !topo;
	if (bad)
		goto out;
	if (ops->describe_links) {
		int rc = ops->describe_links(c->comm, links, LINKS_JSON_MAX,
					     note, sizeof(note));
		if (rc || links[0] != '[')
			sd_strlcpy(links, "[]", LINKS_JSON_MAX);
	} else {
		sd_strlcpy(links, "[]", LINKS_JSON_MAX);
		snprintf(note, sizeof(note), "the %s backend reports no device "
			 "links; on CPUs the NUMA layout is the topology",
			 ops->name);
	}
	bad |= sd_buf_printf(&b, "{\"links\":%s,\"links_note\":", links);
	if (note[0])
		bad |= sd_buf_json_string(&b, note);
	else
		bad |= sd_buf_printf(&b, "null");
	bad |= sd_buf_printf(&b, ",%s", topo + 1); /* topo's fields */
	bad |= sd_buf_printf(&b, "%c", '\0');
	links_cell(links, cell, sizeof(cell));
	bad |= sd_buf_printf(&b, "%s\t", cell);
	for (int i = 0; i < t->nnuma; i++)
		bad |= sd_buf_printf(&b, "%s%d:%s", i ? "," : "",
				     t->numa[i].node, t->numa[i].cpus);
	for (char *p = note; *p; p++)
		if (*p == '\t' || *p == '\n')
			*p = ' ';
	bad |= sd_buf_printf(&b, "%s\t%s\n", t->nnuma ? "" : "-", note);
	for (int i = 0; i < t->nifaces; i++) {
		const struct sd_topo_iface *f = &t->iface[i];
		char speed[24] = "-", mtu[24] = "-";
		if (f->speed_mbps > 0)
			snprintf(speed, sizeof(speed), "%ld", f->speed_mbps);
		if (f->mtu > 0)
			snprintf(mtu, sizeof(mtu), "%ld", f->mtu);
		bad |= sd_buf_printf(&b, "%s\t%s\t%s\t%s\t%s\t", f->name,
				     f->state, speed, mtu,
				     f->address[0] ? f->address : "-");
		for (int k = 0; k < f->nipv4; k++)
			bad |= sd_buf_printf(&b, "%s%s", k ? "," : "",
					     f->ipv4[k]);
		bad |= sd_buf_printf(&b, "%s\n", f->nipv4 ? "" : "-");
	}
out:
	free(links);
	free(topo);
	if (bad) {
		sd_buf_free(&b);
		return NULL;
	}
	*len = b.len;
	return b.data;
}

/* ------------------------------------------------------ rank 0 prints */

/* The ranks of one host, and its leader's part. */
struct host_view {
	const char *host;
	int *ranks;              /* sorted */
	int nranks;
	const char *json;        /* the host's object, or NULL */
	const char *rows;        /* its cells, or "" */
	char note_buf[512];      /* the links note of its cells */
};

struct by_host_key {
	const char *host;
	int rank;
};

static int by_host_rank(const void *a, const void *b)
{
	const struct by_host_key *x = a, *y = b;
	int c = strcmp(x->host, y->host);
	return c ? c : x->rank - y->rank;
}

static int by_first_rank(const void *a, const void *b)
{
	return ((const struct host_view *)a)->ranks[0] -
	       ((const struct host_view *)b)->ranks[0];
}

/* "0-3,8" from sorted ranks. */
static void rank_list(const int *r, int n, struct sd_buf *b)
{
	for (int i = 0; i < n;) {
		int j = i;
		while (j + 1 < n && r[j + 1] == r[j] + 1)
			j++;
		if (j > i)
			sd_buf_printf(b, "%s%d-%d", i ? "," : "", r[i], r[j]);
		else
			sd_buf_printf(b, "%s%d", i ? "," : "", r[i]);
		i = j + 1;
	}
}

/* Whether two ranks use the same device. */
static int same_device(const struct sd_device_info *a,
		       const struct sd_device_info *b)
{
	if (a->pci_bus_id[0] || b->pci_bus_id[0])
		return strcmp(a->pci_bus_id, b->pci_bus_id) == 0 &&
		       strcmp(a->uuid, b->uuid) == 0;
	return strcmp(a->name, b->name) == 0;
}

/* "4 x NVIDIA H200" or "2 x CPU ..., 1 x ...": the kinds of device the
 * ranks of h use, by name (a GPU per rank: each counted once). */
static void devices_cell(const struct topo_rank *all,
			 const struct host_view *h, struct sd_buf *b)
{
	int shown = 0;
	for (int i = 0; i < h->nranks; i++) {
		const struct sd_device_info *d = &all[h->ranks[i]].dev;
		int dup = 0, n = 0;
		for (int k = 0; k < i && !dup; k++)
			dup = strcmp(all[h->ranks[k]].dev.name, d->name) == 0;
		if (dup)
			continue;
		for (int k = i; k < h->nranks; k++) {
			const struct sd_device_info *e = &all[h->ranks[k]].dev;
			int seen = 0;
			if (strcmp(e->name, d->name) != 0)
				continue;
			for (int q = i; q < k && !seen; q++)
				seen = same_device(&all[h->ranks[q]].dev, e);
			n += !seen;
		}
		sd_buf_printf(b, "%s%d x %s", shown++ ? ", " : "", n,
			      d->name[0] ? d->name : "(no device)");
	}
}

/* A table: rows of cells, printed with columns as wide as their widest
 * cell; the last column is not padded. */
struct table {
	int ncols, nrows, cap;
	char **cell;             /* nrows * ncols, malloc'd */
};

static int table_add(struct table *t, const char *const *cells)
{
	if (t->nrows == t->cap) {
		int cap = t->cap ? t->cap * 2 : 16;
		char **p = realloc(t->cell, (size_t)cap * (size_t)t->ncols *
						    sizeof(*p));
		if (!p)
			return -1;
		t->cell = p;
		t->cap = cap;
	}
	for (int k = 0; k < t->ncols; k++) {
		char *s = strdup(cells[k] ? cells[k] : "");
		if (!s)
			return -1;
		t->cell[t->nrows * t->ncols + k] = s;
	}
	t->nrows++;
	return 0;
}

static void table_print(struct table *t, FILE *out)
{
	size_t w[16] = { 0 };
	for (int r = 0; r < t->nrows; r++)
		for (int k = 0; k < t->ncols && k < 16; k++) {
			size_t l = strlen(t->cell[r * t->ncols + k]);
			w[k] = l > w[k] ? l : w[k];
		}
	for (int r = 0; r < t->nrows; r++)
		for (int k = 0; k < t->ncols; k++) {
			const char *s = t->cell[r * t->ncols + k];
			if (k == t->ncols - 1)
				fprintf(out, "%s\n", s);
			else
				fprintf(out, "%-*s  ", (int)w[k], s);
		}
}

static void table_free(struct table *t)
{
	for (int i = 0; i < t->nrows * t->ncols; i++)
		free(t->cell[i]);
	free(t->cell);
	t->cell = NULL;
	t->nrows = t->cap = 0;
}

static int print_table(struct topo_ctx *c, const struct topo_rank *all,
		       struct host_view *hosts, int nhosts)
{
	const struct sd_bootstrap *bs = &c->boot->bs;
	struct table main_t = { .ncols = 5 }, nic_t = { .ncols = 7 };
	static const char *const head[] = { "HOST", "RANKS", "NUMA", "LINKS",
					     "DEVICES" };
	static const char *const nic_head[] = { "HOST", "INTERFACE", "STATE",
						"SPEED_MBPS", "MTU", "ADDRESS",
						"IPV4" };
	int bad = table_add(&main_t, head) || table_add(&nic_t, nic_head);
	printf("# shakedown topo: %d host%s, %d rank%s, backend %s "
	       "(launcher %s)\n", nhosts, nhosts == 1 ? "" : "s", bs->size,
	       bs->size == 1 ? "" : "s", c->plugin.ops->name,
	       c->boot->job.launcher[0] ? c->boot->job.launcher : "?");
	for (int i = 0; i < nhosts && !bad; i++) {
		struct host_view *h = &hosts[i];
		struct sd_buf rl = { 0 }, dv = { 0 };
		char links[256] = "?", numa[1024] = "?";
		const char *rows = h->rows;
		rank_list(h->ranks, h->nranks, &rl);
		devices_cell(all, h, &dv);
		const char *nl = strchr(rows, '\n');
		if (nl) {
			const char *tab = memchr(rows, '\t',
						 (size_t)(nl - rows));
			const char *tab2 = tab ? memchr(tab + 1, '\t',
						       (size_t)(nl - tab - 1))
					       : NULL;
			if (tab2) {
				snprintf(links, sizeof(links), "%.*s",
					 (int)(tab - rows), rows);
				snprintf(numa, sizeof(numa), "%.*s",
					 (int)(tab2 - tab - 1), tab + 1);
				snprintf(h->note_buf, sizeof(h->note_buf),
					 "%.*s", (int)(nl - tab2 - 1),
					 tab2 + 1);
			}
			rows = nl + 1;
		}
		const char *cells[5] = { h->host, rl.data ? rl.data : "",
					 numa, links, dv.data ? dv.data : "" };
		bad |= table_add(&main_t, cells);
		sd_buf_free(&rl);
		sd_buf_free(&dv);
		/* one row per interface: NAME STATE SPEED MTU ADDRESS IPV4 */
		while (*rows && !bad) {
			char line[1024], *f[6], *save = NULL;
			nl = strchr(rows, '\n');
			size_t l = nl ? (size_t)(nl - rows) : strlen(rows);
			snprintf(line, sizeof(line), "%.*s", (int)l, rows);
			rows += l + (nl ? 1 : 0);
			int n = 0;
			for (char *s = strtok_r(line, "\t", &save); s && n < 6;
			     s = strtok_r(NULL, "\t", &save))
				f[n++] = s;
			if (n != 6)
				continue;
			const char *nic[7] = { h->host, f[0], f[1], f[2], f[3],
					       f[4], f[5] };
			bad |= table_add(&nic_t, nic);
		}
	}
	if (!bad) {
		table_print(&main_t, stdout);
		printf("\n");
		if (nic_t.nrows > 1)
			table_print(&nic_t, stdout);
		else
			printf("# no network interface besides lo\n");
		for (int i = 0; i < nhosts; i++)
			if (hosts[i].note_buf[0])
				printf("# %s: %s\n", hosts[i].host,
				       hosts[i].note_buf);
	}
	table_free(&main_t);
	table_free(&nic_t);
	if (bad) {
		fprintf(stderr, "shakedown: topo: out of memory\n");
		return SD_EXIT_ENV;
	}
	return SD_EXIT_OK;
}

static void json_device(struct sd_buf *b, const struct sd_device_info *d)
{
	sd_buf_printf(b, "{\"name\":");
	sd_buf_json_string(b, d->name);
	sd_buf_printf(b, ",\"pci_bus_id\":");
	sd_buf_json_string(b, d->pci_bus_id);
	sd_buf_printf(b, ",\"uuid\":");
	sd_buf_json_string(b, d->uuid);
	sd_buf_printf(b, ",\"mem_total_bytes\":%llu,\"transport\":",
		      (unsigned long long)d->mem_total_bytes);
	sd_buf_json_string(b, d->transport);
}

/* One host's object: its ranks and devices, then what its leader sent. */
static void json_host(const struct topo_rank *all, const struct host_view *h,
		      struct sd_buf *b)
{
	int *dev_of = calloc((size_t)h->nranks, sizeof(int));
	int ndev = 0;
	sd_buf_printf(b, "{\"host\":");
	sd_buf_json_string(b, h->host);
	sd_buf_printf(b, ",\"devices\":[");
	for (int i = 0; dev_of && i < h->nranks; i++) {
		const struct sd_device_info *d = &all[h->ranks[i]].dev;
		int k = 0;
		while (k < i && !same_device(&all[h->ranks[k]].dev, d))
			k++;
		if (k < i) {
			dev_of[i] = dev_of[k];
			continue;
		}
		dev_of[i] = ndev;
		sd_buf_printf(b, "%s", ndev++ ? "," : "");
		json_device(b, d);
		sd_buf_printf(b, ",\"ranks\":[");
		for (int q = i, n = 0; q < h->nranks; q++)
			if (same_device(&all[h->ranks[q]].dev, d))
				sd_buf_printf(b, "%s%d", n++ ? "," : "",
					      h->ranks[q]);
		sd_buf_printf(b, "]}");
	}
	sd_buf_printf(b, "],\"ranks\":[");
	for (int i = 0; i < h->nranks; i++) {
		const struct topo_rank *r = &all[h->ranks[i]];
		sd_buf_printf(b, "%s{\"rank\":%d,\"local_rank\":%d,\"pid\":%d,"
			      "\"device\":%d,\"cpus\":", i ? "," : "", r->rank,
			      r->local_rank, r->pid, dev_of ? dev_of[i] : -1);
		sd_buf_json_string(b, r->cpus);
		sd_buf_printf(b, ",\"numa\":");
		sd_buf_json_string(b, r->numa);
		sd_buf_printf(b, "}");
	}
	sd_buf_printf(b, "],");
	if (h->json)
		sd_buf_printf(b, "%s", h->json + 1);
	else
		sd_buf_printf(b, "\"links\":[],\"links_note\":\"no rank of "
			      "this host is its local rank 0\"}");
	free(dev_of);
}

static int print_json(struct topo_ctx *c, const struct topo_rank *all,
		      struct host_view *hosts, int nhosts)
{
	const struct sd_backend_ops *ops = c->plugin.ops;
	const struct sd_job_info *job = &c->boot->job;
	struct sd_buf b = { 0 };
	sd_buf_printf(&b, "{\"backend\":");
	sd_buf_json_string(&b, ops->name);
	sd_buf_printf(&b, ",\"backend_version\":");
	sd_buf_json_string(&b, ops->version ? ops->version : "");
	sd_buf_printf(&b, ",\"launcher\":");
	sd_buf_json_string(&b, job->launcher);
	sd_buf_printf(&b, ",\"job_id\":");
	sd_buf_json_string(&b, job->job_id);
	sd_buf_printf(&b, ",\"nodelist\":");
	sd_buf_json_string(&b, job->nodelist);
	sd_buf_printf(&b, ",\"nranks\":%d,\"nhosts\":%d,\"hosts\":[",
		      c->boot->bs.size, nhosts);
	for (int i = 0; i < nhosts; i++) {
		sd_buf_printf(&b, "%s", i ? "," : "");
		json_host(all, &hosts[i], &b);
	}
	if (sd_buf_printf(&b, "]}\n")) {
		sd_buf_free(&b);
		fprintf(stderr, "shakedown: topo: out of memory\n");
		return SD_EXIT_ENV;
	}
	fputs(b.data, stdout);
	sd_buf_free(&b);
	return SD_EXIT_OK;
}

/* Rank 0: group the ranks by host, in the order of each host's first
 * rank, with the part its leader sent; then print. */
static int report(struct topo_ctx *c, const struct topo_rank *all,
		  const char *parts, const size_t *lens, const size_t *offs)
{
	int n = c->boot->bs.size, nhosts = 0, status = SD_EXIT_ENV;
	struct by_host_key *keys = malloc((size_t)n * sizeof(*keys));
	int *ids = malloc((size_t)n * sizeof(int));
	struct host_view *hosts = calloc((size_t)n, sizeof(*hosts));
	char **copies = calloc((size_t)n, sizeof(char *));
	if (!keys || !ids || !hosts || !copies)
		goto out;
	for (int r = 0; r < n; r++)
		keys[r] = (struct by_host_key){ all[r].host, r };
	qsort(keys, (size_t)n, sizeof(*keys), by_host_rank);
	for (int i = 0; i < n; i++) {
		ids[i] = keys[i].rank;
		if (i == 0 || strcmp(keys[i].host, keys[i - 1].host) != 0) {
			hosts[nhosts].host = keys[i].host;
			hosts[nhosts].ranks = &ids[i];
			hosts[nhosts].rows = "";
			nhosts++;
		}
		struct host_view *h = &hosts[nhosts - 1];
		h->nranks++;
		int r = keys[i].rank;
		if (all[r].local_rank != 0 || h->json || !lens[r])
			continue;
		char *p = malloc(lens[r] + 1);
		if (!p)
			goto out;
		memcpy(p, parts + offs[r], lens[r]);
		p[lens[r]] = '\0';
		copies[nhosts - 1] = p;
		h->json = p;
		size_t jl = strlen(p);
		h->rows = jl < lens[r] ? p + jl + 1 : "";
	}
	qsort(hosts, (size_t)nhosts, sizeof(*hosts), by_first_rank);
	if (c->opt.format == TOPO_JSON)
		status = print_json(c, all, hosts, nhosts);
	else
		status = print_table(c, all, hosts, nhosts);
out:
	if (status == SD_EXIT_ENV && !(keys && ids && hosts && copies))
		fprintf(stderr, "shakedown: topo: out of memory\n");
	for (int i = 0; copies && i < n; i++)
		free(copies[i]);
	free(copies);
	free(keys);
	free(ids);
	free(hosts);
	return status;
}

static int topo_main(void *arg)
{
	struct topo_ctx *c = arg;
	char err[1024] = "";
	int rc, status = SD_EXIT_ENV;
	struct topo_rank me, *all = NULL;
	struct sd_topo_host *t = NULL;
	char *part = NULL, *parts = NULL;
	size_t plen = 0, *lens = NULL, *offs = NULL;

	rc = sd_bootstrap_open(&c->boot, err, sizeof(err));
	if (rc) {
		sd_rank_error(NULL, "bootstrap", err);
		return SD_EXIT_ENV;
	}
	struct sd_bootstrap *bs = &c->boot->bs;

	/* the backend and its world communicator, as every command builds
	 * them */
	struct sd_comm_config cfg = { .timeout_ms = c->opt.job.timeout_ms,
				      .iface = c->opt.job.iface };
	if ((status = sd_job_backend_open(c->boot, c->opt.job.backend, &cfg, NULL,
					  NULL, &c->plugin, &c->comm)))
		goto out;

	/* where this rank is; what its host has (one rank per host) */
	t = malloc(sizeof(*t));
	rc = t ? SD_OK : SD_ERR_NOMEM;
	memset(&me, 0, sizeof(me));
	me.rank = bs->rank;
	me.local_rank = bs->local_rank;
	me.pid = (int)getpid();
	sd_strlcpy(me.host, bs->host, sizeof(me.host));
	if (t) {
		sd_topo_host_read(NULL, t);
		sd_topo_affinity(t, me.cpus, sizeof(me.cpus), me.numa,
				 sizeof(me.numa));
	}
	if (c->plugin.ops->describe_device)
		c->plugin.ops->describe_device(c->comm, &me.dev);
	if (t && bs->local_rank == 0 && !(part = host_part(c, t, &plen)))
		rc = SD_ERR_NOMEM;
	if (rc)
		sd_rank_error(bs, "topo", "out of memory");
	if ((status = sd_agree(c->boot, rc ? sd_exit_for_status(rc) : 0)))
		goto out;
	all = calloc((size_t)bs->size, sizeof(*all));
	if (!all || bs->allgather(bs, &me, all, sizeof(me)) ||
	    sd_bootstrap_allgatherv(bs, part ? part : "", part ? plen : 0,
				    &parts, &lens, &offs)) {
		sd_rank_error(bs, "bootstrap: exchanging what each rank has",
			   all ? sd_boot_error(c->boot, "allgather failed") : "out of memory");
		status = SD_EXIT_ENV;
		goto out;
	}
	status = bs->rank == 0 ? report(c, all, parts, lens, offs)
			       : SD_EXIT_OK;
out:
	sd_job_close(&c->boot, &c->plugin, &c->comm);
	free(t);
	free(part);
	free(all);
	free(parts);
	free(lens);
	free(offs);
	int out_rc = sd_finish_stdout();
	return status ? status : out_rc;
}

int cmd_topo(int argc, char **argv)
{
	static struct topo_ctx ctx;
	memset(&ctx, 0, sizeof(ctx));
	sd_job_options_init(&ctx.opt.job, TOPO_TIMEOUT_MS);
	ctx.opt.format = TOPO_TABLE;
	int rc = parse_options(argc, argv, &ctx.opt);
	if (rc >= 0)
		return rc;
	return sd_job_launch("topo", ctx.opt.job.local_ranks,
			     ctx.opt.job.backend, ctx.opt.job.timeout_ms + 5000,
			     topo_main, &ctx);
}
