/*
 * sink_ncclj.c - nccl-tests' JSON document (see sink_ncclj.h).
 *
 * The document is nccl-tests 2.19's (src/util.cu: jsonOutputInit,
 * writeDeviceReport, writeResultHeader, writeBenchmarkLinePreamble,
 * writeBenchmarkLineBody, writeBenchmarkLineTerminator, writeResultFooter,
 * writeErrors, jsonOutputFinalize), key for key and in its order:
 *
 *   { version, start_time, args, env, nccl_version,
 *     config { nthreads, ngpus, minimum_bytes, maximum_bytes,
 *              step_factor | step_bytes, warmup_iters, iterations,
 *              aggregated_iterations, validation, graph,
 *              blocking_collectives, per_iter_timing, per_iter_skip,
 *              parallel_init,
 *              devices [ { rank, group, pid, hostname, device,
 *                          device_hex, device_info } ] },
 *     results [ { size, count, type, redop, root,
 *                 out_of_place { time, alg_bw, bus_bw, nwrong },
 *                 in_place { ... }, actual_iterations,
 *                 experiment_name } ],
 *     out_of_bounds { count, okay },
 *     average_bus_bandwidth { bandwidth, okay },
 *     errors [ ], end_time }
 *
 * with its value types: integers as %d and %zu, doubles as %lf (six
 * decimals) and NaN as the string "nan" (jsonDouble), booleans as the
 * strings "true" and "false" (jsonBool), a placement not measured as null
 * (writeBenchMarkLineNullBody), nwrong null when the data was not checked.
 * It is compact, as nccl-tests writes it, with a newline at the end.
 *
 * nccl-tests writes one document per process and collective; its results
 * list already holds several types, reductions and roots (-d all, -o all,
 * -r all), each row saying its own.  A shakedown run is many tests, so
 * every test's rows go into the one list, in run order, and the
 * collective, with the group of a split scope, is the row's
 * experiment_name (nccl-tests writes "" there): "all_reduce", "all_gather
 * split:2 ranks 0-1".
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "names.h"
#include "sink_ncclj.h"
#include "util.h"

/* nccl-tests' JSON_FILE_VERSION (src/util.cu, 2.19) */
#define NCCLJ_VERSION 3

struct ncclj_sink {
	char *path, *tmp;
	FILE *f;
	int begun;              /* run_begin wrote the head */
	int ended;              /* run_end came */
	int written;            /* the document is at path */
	char why[600];          /* why it is not, once it is not */
	/* config: from the plan */
	uint64_t min_bytes, max_bytes, step_bytes;
	double step_factor;
	long iters, warmup, check;
	/* the current test's row labels */
	char type[16], redop[16], root[16], name[192];
	/* an out-of-place measurement waiting for its in-place one */
	struct sd_measurement oop;
	int have_oop;
	size_t nresults;
	/* for the footer */
	int nwrong;             /* measurements with wrong data */
	double sum_busbw;
	size_t nbusbw;
};

/* ------------------------------------------------------------ the path */

/* The directory part of path: "." or "/" or everything before the last
 * slash. */
static void dir_of(const char *path, char *dir, size_t len)
{
	const char *slash = strrchr(path, '/');
	if (!slash)
		sd_strlcpy(dir, ".", len);
	else if (slash == path)
		sd_strlcpy(dir, "/", len);
	else
		snprintf(dir, len, "%.*s", (int)(slash - path), path);
}

int sd_ncclj_check_path(const char *path, char *err, size_t errlen)
{
	struct stat st;
	char dir[4096], probe[4200];
	size_t n = strlen(path);
	int exists = n && stat(path, &st) == 0;
	if (n == 0) {
		snprintf(err, errlen, "-J needs a file name; give it one, "
			 "such as -J results.json");
		return -1;
	}
	if (n >= sizeof(dir) - 8) {
		snprintf(err, errlen, "-J %.80s...: the path is too long; "
			 "give a shorter one", path);
		return -1;
	}
	if (path[n - 1] == '/' || (exists && S_ISDIR(st.st_mode))) {
		snprintf(err, errlen, "-J %s: is a directory; give a file name "
			 "in it, such as -J %s%sresults.json", path, path,
			 path[n - 1] == '/' ? "" : "/");
		return -1;
	}
	/* rename() would replace a device or a FIFO with a regular file */
	if (exists && !S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "-J %s: is not a regular file; give the "
			 "path of a file to write", path);
		return -1;
	}
	dir_of(path, dir, sizeof(dir));
	int found = stat(dir, &st) == 0;
	if (!found || !S_ISDIR(st.st_mode)) {
		int e = found ? ENOTDIR : errno;
		if (e == ENOTDIR)
			snprintf(err, errlen, "-J %s: %s is not a directory; "
				 "give a path in an existing directory", path,
				 dir);
		else if (e == ENOENT)
			snprintf(err, errlen, "-J %s: directory %s does not "
				 "exist; create it (mkdir -p %s) or give a "
				 "path in an existing directory", path, dir,
				 dir);
		else
			snprintf(err, errlen, "-J %s: cannot reach directory "
				 "%s (%s); give a path in a directory you can "
				 "write to", path, dir, strerror(e));
		return -1;
	}
	/* the run writes path.tmp beside path and renames it: the directory
	 * must take a new file */
	snprintf(probe, sizeof(probe), "%s/.shakedown-J-XXXXXX", dir);
	int fd = mkstemp(probe);
	if (fd < 0) {
		snprintf(err, errlen, "-J %s: cannot create a file in %s (%s); "
			 "give a path in a directory you can write to", path,
			 dir, strerror(errno));
		return -1;
	}
	close(fd);
	unlink(probe);
	return 0;
}

/* ------------------------------------------------------------- writing */

/* A JSON string.  nccl-tests' sanitizeJson gives up on control
 * characters; here they are escaped, so any host or argument is kept. */
static void put_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p;
	     p++) {
		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p == '\n')
			fputs("\\n", f);
		else if (*p == '\t')
			fputs("\\t", f);
		else if (*p < 0x20)
			fprintf(f, "\\u%04x", *p);
		else
			fputc(*p, f);
	}
	fputc('"', f);
}

/* A double as jsonDouble writes it: "%lf", NaN as the string "nan".  An
 * infinity (a time of 0) would be printed bare, which no JSON reader
 * takes: it is a string too. */
static void put_double(FILE *f, double v)
{
	if (isnan(v))
		fputs("\"nan\"", f);
	else if (isinf(v))
		fputs(v > 0 ? "\"inf\"" : "\"-inf\"", f);
	else
		fprintf(f, "%lf", v);
}

/* A time as formatNow writes it: TIME_STRING_FORMAT, local time. */
static void put_time(FILE *f, double epoch_s)
{
	char buf[64];
	time_t t = (time_t)epoch_s;
	struct tm tm;
	if (!localtime_r(&t, &tm) ||
	    !strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S", &tm))
		buf[0] = '\0';
	put_str(f, buf);
}

/* The arguments, from the recorded command line: nccl-tests writes argv,
 * but the record is what may leave the process (a --token* value is
 * already left out of it).  It is argv joined with single spaces, an
 * argument with a space, tab or quote in single quotes (cmd_run.c). */
static void put_args(FILE *f, const char *line)
{
	const char *p = line ? line : "";
	int first = 1;
	fputc('[', f);
	while (*p) {
		const char *end;
		char *arg;
		if (*p == ' ') {
			p++;
			continue;
		}
		if (*p == '\'') {
			/* to the quote before a space, or the end's quote */
			size_t left = strlen(p + 1);
			end = strstr(p + 1, "' ");
			if (!end)
				end = p + 1 + left - (left && p[left] == '\'');
			arg = strndup(p + 1, (size_t)(end - p - 1));
			p = *end ? end + 1 : end;
		} else {
			end = strchr(p, ' ');
			if (!end)
				end = p + strlen(p);
			arg = strndup(p, (size_t)(end - p));
			p = end;
		}
		if (!first)
			fputc(',', f);
		put_str(f, arg ? arg : "");
		free(arg);
		first = 0;
	}
	fputc(']', f);
}

/* The environment, as "NAME=value" strings.  nccl-tests writes all of it;
 * here only what the run records of each host (NCCL_*, SHAKEDOWN_*,
 * GLOO_*, CUDA_VISIBLE_DEVICES), never a variable with TOKEN in its name:
 * a document is passed around, and the rest holds credentials. */
static void put_env(FILE *f)
{
	extern char **environ;
	int first = 1;
	fputc('[', f);
	for (char **e = environ; e && *e; e++) {
		if (strncmp(*e, "NCCL_", 5) && strncmp(*e, "SHAKEDOWN_", 10) &&
		    strncmp(*e, "GLOO_", 5) &&
		    strncmp(*e, "CUDA_VISIBLE_DEVICES=", 21))
			continue;
		const char *eq = strchr(*e, '=');
		if (!eq || memmem(*e, (size_t)(eq - *e), "TOKEN", 5))
			continue;
		if (!first)
			fputc(',', f);
		put_str(f, *e);
		first = 0;
	}
	fputc(']', f);
}

/* NCCL's version code (NCCL_VERSION(X,Y,Z) of nccl.h) from the transport
 * the NCCL backend reports ("nccl 2.28.9 cc 9.0 ..."), which is what
 * ncclGetVersion said on rank 0.  0 for another backend: nccl-tests'
 * test_ncclVersion before ncclGetVersion sets it, there being no NCCL. */
static int nccl_version(const struct sd_run_info *run)
{
	int x, y, z;
	if (run->nranks < 1 ||
	    sscanf(run->ranks[0].dev.transport, "nccl %d.%d.%d", &x, &y,
		   &z) != 3)
		return 0;
	return x > 2 || (x == 2 && y >= 9) ? x * 10000 + y * 100 + z
					   : x * 1000 + y * 100 + z;
}

/* Say why the document is not written, drop the temporary file, and
 * return SD_ERR_IO (once: later events have nothing to write to). */
static int fail(struct ncclj_sink *j, int e, const char *what)
{
	snprintf(j->why, sizeof(j->why), "%s %s: %s", what, j->tmp,
		 strerror(e ? e : EIO));
	if (j->f)
		fclose(j->f);
	j->f = NULL;
	unlink(j->tmp);
	return SD_ERR_IO;
}

/* After writing: push it to the file, so that a full disk is said when it
 * happens (and the file holds each test as it ends). */
static int flushed(struct ncclj_sink *j)
{
	if (!j->f)
		return SD_OK;
	int e = fflush(j->f) ? errno : 0;
	if (!e && ferror(j->f))
		e = EIO;
	return e ? fail(j, e, "writing") : SD_OK;
}

/* One placement's object, as writeBenchmarkLineBody writes it ("time",
 * not "cpu_time": shakedown has no -C). */
static void put_placement(FILE *f, const struct sd_measurement *m)
{
	if (!m) {
		fputs("null", f);
		return;
	}
	fputs("{\"time\":", f);
	put_double(f, m->time_us);
	fputs(",\"alg_bw\":", f);
	put_double(f, m->algbw_gbs);
	fputs(",\"bus_bw\":", f);
	put_double(f, m->busbw_gbs);
	fputs(",\"nwrong\":", f);
	if (m->checked)
		put_double(f, (double)m->wrong);
	else
		fputs("null", f);
	fputc('}', f);
}

/* One row of results: a size with its out-of-place and in-place
 * measurements, either of which may be missing (null). */
static void put_result(struct ncclj_sink *j, const struct sd_measurement *oop,
		       const struct sd_measurement *ip)
{
	FILE *f = j->f;
	const struct sd_measurement *m = oop ? oop : ip;
	if (!f)
		return;
	if (j->nresults++)
		fputc(',', f);
	fprintf(f, "{\"size\":%zu,\"count\":%zu,\"type\":", m->size_bytes,
		m->count);
	put_str(f, j->type);
	fputs(",\"redop\":", f);
	put_str(f, j->redop);
	fputs(",\"root\":", f);
	put_str(f, j->root);
	fputs(",\"out_of_place\":", f);
	put_placement(f, oop);
	fputs(",\"in_place\":", f);
	put_placement(f, ip);
	fprintf(f, ",\"actual_iterations\":%d,\"experiment_name\":", m->iters);
	put_str(f, j->name);
	fputc('}', f);
}

/* The waiting out-of-place measurement, alone: its size had no in-place
 * one. */
static void put_pending(struct ncclj_sink *j)
{
	if (j->have_oop)
		put_result(j, &j->oop, NULL);
	j->have_oop = 0;
}

/* ------------------------------------------------------------ the sink */

static int j_run_begin(void *self, const struct sd_run_info *run)
{
	struct ncclj_sink *j = self;
	FILE *f = j->f;
	if (!f)
		return SD_OK;
	j->begun = 1;
	/* jsonOutputInit */
	fprintf(f, "{\"version\":%d,\"start_time\":", NCCLJ_VERSION);
	put_time(f, run->started_at);
	fputs(",\"args\":", f);
	put_args(f, run->command_line);
	fputs(",\"env\":", f);
	put_env(f);
	fprintf(f, ",\"nccl_version\":%d", nccl_version(run));
	/* writeDeviceReport.  Each rank is one process driving one device:
	 * nthreads and ngpus are nccl-tests' defaults (-t 1, -g 1), and so are
	 * what shakedown has no counterpart for: aggregated_iterations 1 (-m),
	 * graph 0 (-G), blocking_collectives false (-z), per_iter_skip 0
	 * (-K), parallel_init false (-p).  per_iter_timing is false as the
	 * rows carry no *_per_iter objects: --per-iter keeps percentiles,
	 * not the iteration times and spreads those objects hold. */
	fprintf(f, ",\"config\":{\"nthreads\":1,\"ngpus\":1,"
		"\"minimum_bytes\":%llu,\"maximum_bytes\":%llu,",
		(unsigned long long)j->min_bytes,
		(unsigned long long)j->max_bytes);
	if (j->step_factor > 1) {
		/* nccl-tests' factor is an integer; -f 1.5 stays 1.5 */
		unsigned long long whole = (unsigned long long)j->step_factor;
		if (j->step_factor == (double)whole)
			fprintf(f, "\"step_factor\":%llu", whole);
		else
			fprintf(f, "\"step_factor\":%lf", j->step_factor);
	} else {
		fprintf(f, "\"step_bytes\":%llu",
			(unsigned long long)j->step_bytes);
	}
	fprintf(f, ",\"warmup_iters\":%ld,\"iterations\":%ld,"
		"\"aggregated_iterations\":1,\"validation\":%ld,\"graph\":0,"
		"\"blocking_collectives\":\"false\","
		"\"per_iter_timing\":\"false\",\"per_iter_skip\":0,"
		"\"parallel_init\":\"false\",\"devices\":[", j->warmup,
		j->iters, j->check);
	for (int r = 0; r < run->nranks; r++) {
		const struct sd_rank_info *ri = &run->ranks[r];
		/* device_hex is "%04x:%02x:%02x" of the PCI domain, bus and
		 * device: the bus id without its function; "-" without one,
		 * as the table's rank lines say */
		char hex[32];
		sd_strlcpy(hex, ri->dev.pci_bus_id[0] ? ri->dev.pci_bus_id
						      : "-", sizeof(hex));
		char *dot = strrchr(hex, '.');
		if (dot && strchr(hex, ':'))
			*dot = '\0';
		/* group is the color of nccl-tests' NCCL_TESTS_SPLIT, 0
		 * without it: a split scope's groups are per test, in the
		 * rows' experiment_name; the device is the rank's index on
		 * its host, as nccl-tests counts CUDA devices */
		fprintf(f, "%s{\"rank\":%d,\"group\":0,\"pid\":%d,"
			"\"hostname\":", r ? "," : "", ri->rank, ri->pid);
		put_str(f, ri->host);
		fprintf(f, ",\"device\":%d,\"device_hex\":", ri->local_rank);
		put_str(f, hex);
		fputs(",\"device_info\":", f);
		put_str(f, ri->dev.name);
		fputc('}', f);
	}
	/* writeResultHeader: the list stays open for the rows */
	fputs("]},\"results\":[", f);
	return flushed(j);
}

static int j_test_begin(void *self, const struct sd_test_info *ti)
{
	struct ncclj_sink *j = self;
	put_pending(j);
	/* writeBenchmarkLinePreamble's labels: nccl-tests' type names, "none"
	 * for no reduction, the root as "%6i" (-1: none) */
	sd_strlcpy(j->type, sd_dtype_nccl_name(ti->dtype), sizeof(j->type));
	sd_strlcpy(j->redop, ti->has_redop ? sd_redop_name(ti->redop) : "none",
		   sizeof(j->redop));
	snprintf(j->root, sizeof(j->root), "%6i", ti->root);
	if (ti->scope && strcmp(ti->scope, "world") != 0 && ti->members &&
	    *ti->members)
		snprintf(j->name, sizeof(j->name), "%s %s ranks %s", ti->name,
			 ti->scope, ti->members);
	else
		sd_strlcpy(j->name, ti->name, sizeof(j->name));
	return flushed(j);
}

static int j_measurement(void *self, const struct sd_test_info *ti,
			 const struct sd_measurement *m)
{
	struct ncclj_sink *j = self;
	(void)ti;
	/* writeResultFooter's numbers: nccl-tests averages the bus bandwidth
	 * of every BenchTime, both placements, and counts the ones with
	 * wrong data */
	j->sum_busbw += m->busbw_gbs;
	j->nbusbw++;
	j->nwrong += m->checked && m->wrong;
	/* out of place comes first, then in place for the same size: a
	 * size without its in-place measurement is written alone */
	if (!m->in_place) {
		put_pending(j);
		j->oop = *m;
		j->have_oop = 1;
		return SD_OK;
	}
	if (j->have_oop && j->oop.size_bytes == m->size_bytes) {
		put_result(j, &j->oop, m);
		j->have_oop = 0;
	} else {
		put_pending(j);
		put_result(j, NULL, m);
	}
	return flushed(j);
}

static int j_test_end(void *self, const struct sd_test_info *ti,
		      const char *status, const char *message)
{
	struct ncclj_sink *j = self;
	(void)ti;
	(void)status;
	(void)message;
	put_pending(j);
	return flushed(j);
}

static int j_run_end(void *self, const struct sd_run_end *e)
{
	struct ncclj_sink *j = self;
	FILE *f = j->f;
	j->ended = 1;
	if (!f)
		return SD_OK; /* said when it failed */
	if (!j->begun) {
		/* stopped between opening the writers and the run's start */
		fclose(f);
		j->f = NULL;
		unlink(j->tmp);
		snprintf(j->why, sizeof(j->why), "the run stopped before it "
			 "began");
		return SD_OK;
	}
	put_pending(j);
	/* writeResultFooter: okay is a string bool, and the bandwidth is
	 * "unchecked" as nccl-tests' without NCCL_TESTS_MIN_BW: shakedown
	 * judges bandwidth per test and subject (expect: busbw), not here */
	fprintf(f, "],\"out_of_bounds\":{\"count\":%d,\"okay\":\"%s\"},"
		"\"average_bus_bandwidth\":{\"bandwidth\":", j->nwrong,
		j->nwrong ? "false" : "true");
	put_double(f, j->nbusbw ? j->sum_busbw / (double)j->nbusbw : NAN);
	fputs(",\"okay\":\"unchecked\"}", f);
	/* writeErrors: NCCL's last error there; here why the run did not
	 * pass, when it did not */
	fputs(",\"errors\":[", f);
	if (e->message && *e->message)
		put_str(f, e->message);
	else if (strcmp(e->status, "passed") != 0)
		put_str(f, e->status);
	/* jsonOutputFinalize */
	fputs("],\"end_time\":", f);
	put_time(f, e->finished_at);
	fputs("}\n", f);
	int rc = flushed(j);
	if (rc)
		return rc;
	/* on disk before it is given its name: a crash after the rename
	 * must not leave an empty file there */
	if (fsync(fileno(j->f)) != 0 && errno != EINVAL)
		return fail(j, errno, "syncing");
	int bad = fclose(j->f);
	j->f = NULL;
	if (bad)
		return fail(j, errno, "closing");
	if (rename(j->tmp, j->path) != 0) {
		int er = errno;
		unlink(j->tmp);
		snprintf(j->why, sizeof(j->why), "renaming %s to %s: %s",
			 j->tmp, j->path, strerror(er));
		return SD_ERR_IO;
	}
	j->written = 1;
	return SD_OK;
}

static void j_destroy(void *self)
{
	struct ncclj_sink *j = self;
	/* no run_end: the run did not reach its end, and the part written
	 * is no document */
	if (j->f) {
		fclose(j->f);
		unlink(j->tmp);
	}
	free(j->path);
	free(j->tmp);
	free(j);
}

static const struct sd_sink_ops ncclj_ops = {
	.name = "nccl-tests JSON (-J)",
	.run_begin = j_run_begin,
	.test_begin = j_test_begin,
	.measurement = j_measurement,
	.test_end = j_test_end,
	.run_end = j_run_end,
	.destroy = j_destroy,
};

int sd_ncclj_sink_open(const char *path, const struct sd_plan *plan,
		       struct sd_sink *s, char *err, size_t errlen)
{
	struct ncclj_sink *j = calloc(1, sizeof(*j));
	if (!j)
		return SD_ERR_NOMEM;
	j->path = strdup(path);
	size_t n = strlen(path) + 5;
	j->tmp = malloc(n);
	if (!j->path || !j->tmp) {
		free(j->path);
		free(j->tmp);
		free(j);
		return SD_ERR_NOMEM;
	}
	snprintf(j->tmp, n, "%s.tmp", path);
	/* nccl-tests has one sweep: it spans every test's sizes; the rest is
	 * the first test's (the same for all, unless a plan file sets them per
	 * test; each row's actual_iterations is its own) */
	for (size_t i = 0; i < plan->ntests; i++) {
		const struct sd_test_settings *c = &plan->tests[i].cfg;
		if (i == 0 || c->min_bytes < j->min_bytes)
			j->min_bytes = c->min_bytes;
		if (i == 0 || c->max_bytes > j->max_bytes)
			j->max_bytes = c->max_bytes;
		if (i == 0) {
			j->step_bytes = c->step_bytes;
			j->step_factor = c->step_factor;
			j->iters = c->iters;
			j->warmup = c->warmup;
			j->check = c->check_passes;
		}
	}
	int fd = open(j->tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	j->f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!j->f) {
		snprintf(err, errlen, "-J %s: cannot create %s: %s", path,
			 j->tmp, strerror(errno));
		if (fd >= 0) {
			close(fd);
			unlink(j->tmp);
		}
		free(j->path);
		free(j->tmp);
		free(j);
		return SD_ERR_IO;
	}
	s->ops = &ncclj_ops;
	s->self = j;
	return SD_OK;
}

int sd_ncclj_sink_result(const struct sd_sink *s, const char **why)
{
	const struct ncclj_sink *j = s->self;
	*why = j->ended && !j->written ? j->why : NULL;
	return j->written;
}

const char *sd_ncclj_sink_path(const struct sd_sink *s)
{
	const struct ncclj_sink *j = s->self;
	return j->path;
}
