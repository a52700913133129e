/*
 * report_html.h - one run of the results database as one self-contained
 * HTML page (`shakedown report --format html`, `upload --html`).
 *
 * The page puts the verdict first and the evidence after it: the run's
 * identity, a busbw-vs-size plot and table per test, each subject's
 * result against its peers' median (bars, and a node-pair heatmap), the
 * same operation's history on the same nodes, a training or gemm run's
 * results, and the failures in words.  Plots are inline SVG written here:
 * no script, no style sheet, no font or image is fetched, so the file
 * opens offline, prints, and works with JavaScript disabled.  Every plot
 * is followed by a table with its numbers.  Colours are the Okabe-Ito
 * palette, and pass/fail is always said in text or shape as well.
 *
 * Elements a test can count: each plot is <svg class="plot" data-op=OP
 * data-test=N data-sizes=S>; each measured point <circle|rect class="pt"
 * data-size=BYTES data-placement=out-of-place|in-place data-busbw=GBS>
 * (S distinct sizes give S points per placement); the verdict line is
 * <p id="verdict" data-status=passed|failed>.
 */
#ifndef SD_REPORT_HTML_H
#define SD_REPORT_HTML_H

#include <stddef.h>
#include <sqlite3.h>

/* At most this many subjects are drawn as bars, and this many hosts as
 * heatmap rows; beyond that only the outliers are (the rest is summed up
 * in a line and every number stays in the tables of failures). */
#define SD_REPORT_HTML_MAX_BARS 40
#define SD_REPORT_HTML_MAX_HEAT 48

/*
 * The HTML report of one run.  run_ref as for sd_db_find_run() (a UUID,
 * a unique prefix, job:ID, "latest" or NULL).  Reads the database only
 * (through the views of shakedown-db(5)); every string from it is
 * escaped for HTML.  Returns SD_OK with *html (malloc'd, NUL-terminated;
 * the caller frees) and *len its length, or SD_ERR_INVALID (no such run)
 * or SD_ERR_IO (a query failed, out of memory) with one line in err.
 */
int sd_report_html(sqlite3 *db, const char *run_ref, char **html,
		   size_t *len, char *err, size_t errlen);

#endif
