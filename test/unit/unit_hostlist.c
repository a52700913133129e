/*
 * unit_hostlist.c - table-driven TAP test of sd_hostlist_compress(): each
 * row is a list of host names and the hostlist Slurm prints for them.  The
 * built-in compressor is checked against every row; with libslurm the
 * function the command uses (Slurm's) is checked against the same rows.
 *
 * Then sd_hostlist_parse() and sd_hostlist_expand(): each row a hostlist
 * and its names in order, or the reason it is refused (malformed, or more
 * names than SD_HOSTLIST_MAX); with libslurm its expansion of the
 * well-formed rows it reads is checked to be the same.
 *
 * Then sd_hostlist_check_host(), what --drain asks before it hands a name
 * to Slurm: each row a name and the allocation, and whether it is one host
 * of it, or the reason it is refused (a hostlist, a list, whitespace, a
 * character a host name does not have, ALL, a host of another job).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef HAVE_SLURM
#include <slurm/slurm.h>
#endif

#include "hostlist.h"
#include "shakedown/backend.h"

struct row {
	const char *hosts[12]; /* NULL-terminated */
	const char *expected;
};

static const struct row rows[] = {
	{ { NULL }, "" },
	{ { "node1", NULL }, "node1" },
	{ { "node1", "node2", "node3", NULL }, "node[1-3]" },
	{ { "node3", "node1", "node2", "node1", NULL }, "node[1-3]" },
	{ { "node01", "node02", "node03", "node04", NULL }, "node[01-04]" },
	{ { "node1", "node2", "node4", "node7", "node8", NULL },
	  "node[1-2,4,7-8]" },
	{ { "node9", "node10", "node11", NULL }, "node[9-11]" },
	{ { "gpu099", "gpu100", "gpu101", NULL }, "gpu[099-101]" },
	{ { "a1", "b1", "a2", "b2", NULL }, "a[1-2],b[1-2]" },
	{ { "login", NULL }, "login" },
	{ { "login", "node1", "node2", NULL }, "login,node[1-2]" },
	{ { "localhost", "localhost", "localhost", NULL }, "localhost" },
	{ { "rack1-n01", "rack1-n02", NULL }, "rack1-n[01-02]" },
	{ { "node1", "node1", NULL }, "node1" },
	{ { "node005", "node006", "node010", NULL }, "node[005-006,010]" },
};

static int check(int *t, const char *what,
		 char *(*fn)(const char *const *, int))
{
	int failed = 0;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct row *r = &rows[i];
		int n = 0;
		while (r->hosts[n])
			n++;
		char *got = fn(r->hosts, n);
		int ok = got && !strcmp(got, r->expected);
		printf("%sok %d - %s: row %zu -> '%s'\n", ok ? "" : "not ",
		       ++*t, what, i, r->expected);
		if (!ok) {
			printf("# got '%s'\n", got ? got : "(null)");
			failed = 1;
		}
		free(got);
	}
	return failed;
}

/* A hostlist and its names apart by spaces, or NULL and a part of the
 * reason it is refused. */
struct xrow {
	const char *list;
	const char *names; /* NULL: refused */
	const char *why;   /* refused: in the message */
	int slurm;         /* libslurm 22.05 expands it the same */
};

static const struct xrow xrows[] = {
	{ "", "", NULL, 1 },
	{ "node1", "node1", NULL, 1 },
	{ "node[01-04]", "node01 node02 node03 node04", NULL, 1 },
	{ "node[1-3,5]", "node1 node2 node3 node5", NULL, 1 },
	{ "node[9-11]", "node9 node10 node11", NULL, 1 },
	{ "gpu[099-101]", "gpu099 gpu100 gpu101", NULL, 1 },
	{ "node[0-1]", "node0 node1", NULL, 1 },
	{ "a1,b[1-2] c3", "a1 b1 b2 c3", NULL, 1 },
	{ "node[7,1-2]", "node7 node1 node2", NULL, 1 },
	{ "rack[1-2]-node[01-02]",
	  "rack1-node01 rack1-node02 rack2-node01 rack2-node02", NULL, 1 },
	{ "n[1-2][3-4]", "n13 n14 n23 n24", NULL, 1 },
	{ ",,node1,,node1,", "node1 node1", NULL, 1 },
	{ "[1-2]", "1 2", NULL, 1 },
	{ "node[1-2].ib", "node1.ib node2.ib", NULL, 0 },
	{ "node[1-", NULL, "no ']' closes the '['", 0 },
	{ "node[a-b]", NULL, "N or N-M", 0 },
	{ "node[3-1]", NULL, "M below N", 0 },
	{ "node]1[", NULL, "']' with no '['", 0 },
	{ "node[[1]]", NULL, "'[' inside brackets", 0 },
	{ "n[1--2]", NULL, "N or N-M", 0 },
	{ "n[-2]", NULL, "N or N-M", 0 },
	{ "n[1,]", NULL, "empty range", 0 },
	{ "n[]", NULL, "empty range", 0 },
	{ "n[1 -2]", NULL, "whitespace", 0 },
	{ "n[1234567890]", NULL, "9 digits", 0 },
	{ "node[1-1000000]", NULL, "more than 262144 names", 0 },
	{ "n[1-1000]-[1-1000]", NULL, "more than 262144 names", 0 },
	{ "a[1-200000],b[1-200000]", NULL, "more than 262144 names", 0 },
	{ "n[1][1][1][1][1][1][1][1][1][1][1][1][1][1][1][1][1]", NULL,
	  "more than 16 bracket groups", 0 },
};

/* names joined by spaces into buf */
static void join(char **v, int n, char *buf, size_t len)
{
	size_t used = 0;
	buf[0] = '\0';
	for (int i = 0; i < n && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%s",
					 i ? " " : "", v[i]);
}

static int check_expand(int *t)
{
	int failed = 0;
	for (size_t i = 0; i < sizeof(xrows) / sizeof(xrows[0]); i++) {
		const struct xrow *r = &xrows[i];
		char **v = NULL, got[512], err[256] = "";
		int n = -1;
		int rc = sd_hostlist_parse(r->list, &v, &n, err, sizeof(err));
		int ok;
		if (r->names) {
			join(v, n, got, sizeof(got));
			ok = rc == SD_OK && v && !strcmp(got, r->names);
		} else {
			snprintf(got, sizeof(got), "rc %d, n %d: %s", rc, n,
				 err);
			ok = rc == SD_ERR_INVALID && !v && n == 0 &&
			     strstr(err, r->why);
		}
		printf("%sok %d - expand '%s' -> %s%s\n", ok ? "" : "not ",
		       ++*t, r->list, r->names ? "" : "refused: ",
		       r->names ? r->names : r->why);
		if (!ok) {
			printf("# got '%s'\n", got);
			failed = 1;
		}
		sd_hostlist_free(v, n);

		/* the same through sd_hostlist_expand: NULL when refused */
		v = sd_hostlist_expand(r->list, &n);
		ok = r->names ? v && (join(v, n, got, sizeof(got)),
				      !strcmp(got, r->names))
			      : !v;
		printf("%sok %d - sd_hostlist_expand '%s'\n", ok ? "" : "not ",
		       ++*t, r->list);
		failed |= !ok;
		if (v)
			sd_hostlist_free(v, n);
	}
	return failed;
}

#ifdef HAVE_SLURM
/* libslurm's expansion of the rows it reads alike */
static int check_slurm(int *t)
{
	int failed = 0;
	for (size_t i = 0; i < sizeof(xrows) / sizeof(xrows[0]); i++) {
		const struct xrow *r = &xrows[i];
		char got[512] = "", *h;
		size_t used = 0;
		if (!r->slurm)
			continue;
		hostlist_t hl = slurm_hostlist_create(r->list);
		while (hl && (h = slurm_hostlist_shift(hl))) {
			if (used < sizeof(got))
				used += (size_t)snprintf(got + used,
							 sizeof(got) - used,
							 "%s%s",
							 used ? " " : "", h);
			free(h);
		}
		if (hl)
			slurm_hostlist_destroy(hl);
		int ok = hl && !strcmp(got, r->names);
		printf("%sok %d - libslurm expands '%s' alike\n",
		       ok ? "" : "not ", ++*t, r->list);
		if (!ok) {
			printf("# got '%s'\n", got);
			failed = 1;
		}
	}
	return failed;
}
#endif

/* A name, an allocation (a hostlist), and the reason it is refused (NULL:
 * taken). */
struct crow {
	const char *host;
	const char *alloc;
	const char *why;
};

static const struct crow crows[] = {
	{ "node1", "node[1-4]", NULL },
	{ "node4", "node[1-4]", NULL },
	{ "gpu007", "gpu[001-512]", NULL },
	{ "rack2-n01.ib", "rack[1-2]-n[01-02].ib", NULL },
	{ "login_1", "login_1,node1", NULL },
	{ "node[1-3]", "node[1-4]", "it holds '[': Slurm reads it as a "
	  "hostlist of ranges, not one host" },
	{ "gpu[001-512]", "gpu[001-512]", "it holds '['" },
	{ "node1]", "node[1-4]", "it holds ']'" },
	{ "a,b", "a,b", "it holds ',': Slurm reads it as a list of hosts" },
	{ "x y", "x,y", "it holds whitespace" },
	{ "node1\t", "node1", "it holds whitespace" },
	{ "node1\n", "node1", "it holds whitespace" },
	{ "", "node1", "an empty host name" },
	{ NULL, "node1", "an empty host name" },
	{ "node1=2", "node1", "it holds '=': a host name is letters" },
	{ "node\"1", "node1", "it holds '\"'" },
	{ "n\x01", "node1", "the byte 0x01" },
	{ "n\xc3\xa9", "node1", "the byte 0xc3" },
	{ "-node1", "node1", "does not start with '-'" },
	{ "ALL", "ALL,node1", "NodeName=ALL as every node" },
	{ "all", "node1", "NodeName=ALL" },
	{ "node9", "node[1-4]", "not a host of the job's allocation" },
	{ "node01", "node[1-4]", "not a host of the job's allocation" },
	{ "node", "node[1-4]", "not a host of the job's allocation" },
	{ "node1", "", "not a host of the job's allocation" },
};

static int check_host(int *t)
{
	int failed = 0;
	char longname[SD_HOST_NAME_MAX + 2];
	memset(longname, 'a', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	for (size_t i = 0; i <= sizeof(crows) / sizeof(crows[0]); i++) {
		struct crow r = { longname, longname, "characters (at most" };
		if (i < sizeof(crows) / sizeof(crows[0]))
			r = crows[i];
		char **v = NULL, err[256] = "x", q[400];
		int n = 0;
		/* the long name's allocation is not a hostlist of it: only
		 * the name is judged */
		if (r.alloc != longname &&
		    sd_hostlist_parse(r.alloc, &v, &n, NULL, 0) != SD_OK) {
			printf("not ok %d - allocation '%s' parses\n", ++*t,
			       r.alloc);
			failed = 1;
			continue;
		}
		int rc = sd_hostlist_check_host(r.host, v, n, err,
						sizeof(err));
		int ok = r.why ? rc == SD_ERR_INVALID && strstr(err, r.why)
			       : rc == SD_OK && err[0] == '\0';
		sd_host_quote(r.host, q, sizeof(q));
		printf("%sok %d - host %s in '%.40s': %s\n", ok ? "" : "not ",
		       ++*t, q, r.alloc, r.why ? r.why : "taken");
		if (!ok) {
			printf("# got rc %d: '%s'\n", rc, err);
			failed = 1;
		}
		sd_hostlist_free(v, n);
	}
	/* a message shows a name as it is, control bytes escaped, cut */
	char q[64];
	sd_host_quote("n\x01[1-3]\\", q, sizeof(q));
	int ok = !strcmp(q, "'n\\x01[1-3]\\x5c'");
	printf("%sok %d - a name quoted for a message: %s\n", ok ? "" : "not ",
	       ++*t, q);
	failed |= !ok;
	sd_host_quote(longname, q, sizeof(q));
	ok = strlen(q) < sizeof(q) && q[0] == '\'' && strstr(q, "'...");
	printf("%sok %d - a long name quoted is cut: %s\n", ok ? "" : "not ",
	       ++*t, q);
	failed |= !ok;
	return failed;
}

int main(void)
{
	int t = 0, failed = 0;
#ifdef HAVE_SLURM
	failed |= check(&t, "libslurm", sd_hostlist_compress);
#endif
	failed |= check(&t, "built-in", sd_hostlist_compress_builtin);
	failed |= check_expand(&t);
	failed |= check_host(&t);
#ifdef HAVE_SLURM
	failed |= check_slurm(&t);
#endif
	printf("1..%d\n", t);
	return failed;
}
