/*
 * hostlist.h - Slurm-style compressed host lists ("node[01-04],gpu7").
 *
 * Used to record the nodes of a job in one short string for headers and the
 * results database.  With libslurm (HAVE_SLURM) the compression is Slurm's
 * own, so the text matches what squeue and sacct print; without it a
 * built-in compressor produces the same form for the common cases.
 */
#ifndef SD_HOSTLIST_H
#define SD_HOSTLIST_H

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

#endif
