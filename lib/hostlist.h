/*
 * hostlist.h - Slurm-style compressed host lists ("node[01-04],gpu7").
 *
 * Used to record the nodes of a job in one short string for headers and the
 * results database.  With libslurm (HAVE_SLURM) the compression is Slurm's
 * own, so the text matches what squeue and sacct print; without it a
 * built-in compressor produces the same form for the common cases.
 *
 * The other way, a hostlist expanded into its names (a topology.conf's
 * Nodes=, a plan's map of switches), is always the built-in expander's:
 * libslurm's writes its complaints about a bad list on stderr, which the
 * core never does, and takes some malformed lists ("node[1-") for names.
 */
#ifndef SD_HOSTLIST_H
#define SD_HOSTLIST_H

#include <stddef.h>

/*
 * Compress `n` host names into a Slurm hostlist: duplicates are dropped,
 * names are sorted by prefix and number, and runs of numbered names that
 * share a prefix and digit width become ranges ("node[1-3,7]").
 * hosts: array of n NUL-terminated names (NULL or empty entries skipped).
 * Returns a malloc'd string the caller frees ("" when n is 0), or NULL when
 * memory runs out.
 */
char *sd_hostlist_compress(const char *const *hosts, int n);

/*
 * The built-in compressor that sd_hostlist_compress() uses without
 * libslurm; exported so that the unit test checks both against one table.
 * Same contract as sd_hostlist_compress().
 */
char *sd_hostlist_compress_builtin(const char *const *hosts, int n);

/* The most names one hostlist may expand to (262144, well above the
 * largest clusters); a longer one is refused rather than allocated:
 * node[1-1000000] is a typo, not a cluster. */
#define SD_HOSTLIST_MAX (1 << 18)

/*
 * Expand a Slurm hostlist into its names, in the order written: items
 * separated by commas or whitespace (a comma inside brackets separates
 * ranges), each item literal text and bracket groups of ranges, "01-04,7"
 * keeping the zero padding of each range's first number.  Several groups
 * in one item multiply, the last varying fastest: rack[1-2]-n[1-2] is
 * rack1-n1, rack1-n2, rack2-n1, rack2-n2.  Empty items are skipped and
 * duplicates kept.
 *
 * Sets *names to a malloc'd array of *n malloc'd strings (free it with
 * sd_hostlist_free; an empty list gives 0 names and a non-NULL array) and
 * returns SD_OK; or returns SD_ERR_INVALID for a malformed list or one of
 * more than SD_HOSTLIST_MAX names, SD_ERR_NOMEM when memory runs out, with
 * err (errlen bytes, may be NULL) saying what is wrong with the list.
 */
int sd_hostlist_parse(const char *list, char ***names, int *n, char *err,
		      size_t errlen);

/* The same without the reason: the names, or NULL for a malformed list or
 * when memory runs out. */
char **sd_hostlist_expand(const char *list, int *n);

/* Free n names and their array (NULL is fine). */
void sd_hostlist_free(char **names, int n);

/* The longest host name sd_hostlist_check_host() takes (a DNS name's). */
#define SD_HOST_NAME_MAX 255

/*
 * Check that `host` is one host of an allocation, before it is handed to
 * Slurm (scontrol update NodeName=HOST): Slurm reads a node name as a
 * hostlist, so "node[1-3]" is three nodes, "a,b" or "a b" two, and "ALL"
 * every node of the cluster.  A host is refused when it is empty or longer
 * than SD_HOST_NAME_MAX; when it holds '[', ']', ',' or whitespace (the
 * expander's own reading: it would not expand to itself alone); when it
 * holds a character outside letters, digits, '.', '-' and '_' or starts
 * with '-' or '.'; when it is "ALL" in any case; and when it is not one of
 * alloc[0..nalloc) (the allocation's names, expanded by
 * sd_hostlist_parse).  Returns SD_OK, or SD_ERR_INVALID with err (errlen
 * bytes, may be NULL) saying why, without the host's name (the caller
 * names it; a name that is not printable is shown escaped by
 * sd_host_quote).
 */
int sd_hostlist_check_host(const char *host, char *const *alloc, int nalloc,
			   char *err, size_t errlen);

/* `host` quoted for a message: in single quotes, a byte outside printable
 * ASCII written \xNN, cut at 80 bytes with "..."; into buf (len bytes). */
void sd_host_quote(const char *host, char *buf, size_t len);

#endif
