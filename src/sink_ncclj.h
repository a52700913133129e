/*
 * sink_ncclj.h - `shakedown run -J FILE`: the JSON document nccl-tests 2.19
 * writes with its -J option (src/util.cu, JSON_FILE_VERSION 3), so that
 * its readers (tools/analyze_perf_json.py) read shakedown's runs.  One
 * document per run; every test's rows go into its one results list, each
 * carrying its type, redop and root as nccl-tests' do, and the collective
 * (and the group, for a split scope) in experiment_name.
 */
#ifndef SD_SINK_NCCLJ_H
#define SD_SINK_NCCLJ_H

#include <stddef.h>
#include "plan.h"
#include "sink.h"

/*
 * Whether a document can be written at path: not a directory or another
 * kind of file that is not a regular one, in a directory that exists and
 * takes a new file (tried with a probe file, created and removed: access()
 * is wrong for root, ACLs and read-only mounts).  Returns 0, or -1 with
 * one line in err naming the path, what is wrong and what to do.
 */
int sd_ncclj_check_path(const char *path, char *err, size_t errlen);

/*
 * Open the writer of the document at path.  It is written while the run
 * goes to "path.tmp" and renamed to path at run_end, so path only ever
 * holds a whole document; a write that fails removes the temporary file
 * and the document is not written (sd_ncclj_sink_result says why).  The
 * config block comes from plan (copied: plan may go before the sink).
 * Returns SD_OK, SD_ERR_NOMEM, or SD_ERR_IO with one line in err.  The
 * sink's destroy() frees it; without a run_end it removes "path.tmp".
 */
int sd_ncclj_sink_open(const char *path, const struct sd_plan *plan,
		       struct sd_sink *s, char *err, size_t errlen);

/*
 * After run_end: 1 when the document is at its path; 0 when it is not,
 * with why in *why (owned by the sink), or NULL before run_end.
 */
int sd_ncclj_sink_result(const struct sd_sink *s, const char **why);

/* The path the document goes to (owned by the sink). */
const char *sd_ncclj_sink_path(const struct sd_sink *s);

#endif
