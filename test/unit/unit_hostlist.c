/*
 * unit_hostlist.c - table-driven TAP test of sd_hostlist_compress(): each
 * row is a list of host names and the hostlist Slurm prints for them.  The
 * built-in compressor is checked against every row; with libslurm the
 * function the command uses (Slurm's) is checked against the same rows.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hostlist.h"

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

int main(void)
{
	int t = 0, failed = 0;
	size_t nrows = sizeof(rows) / sizeof(rows[0]);
#ifdef HAVE_SLURM
	printf("1..%zu\n", 2 * nrows);
	failed |= check(&t, "libslurm", sd_hostlist_compress);
#else
	printf("1..%zu\n", nrows);
#endif
	failed |= check(&t, "built-in", sd_hostlist_compress_builtin);
	return failed;
}
