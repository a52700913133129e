/*
 * ingest.c - what every log parser shares: the log's rows and counts,
 * the format names, and reading a file in a given or sniffed format.
 * The parsers themselves are in megatron.c, deepspeed.c, hf.c and
 * llamafactory.c; a model's size from its config file in model_config.c.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ingest/ingest.h"
#include "shakedown/backend.h"
#include "util.h"

static const char *const format_names[SD_INGEST_NFORMATS] = {
	"auto", "megatron", "deepspeed", "hf", "llamafactory",
};

const char *sd_ingest_format_name(enum sd_ingest_format f)
{
	return (unsigned)f < SD_INGEST_NFORMATS ? format_names[f] : "?";
}

int sd_ingest_format_parse(const char *s, enum sd_ingest_format *out,
			   char *err, size_t errlen)
{
	for (int i = 0; i < SD_INGEST_NFORMATS; i++)
		if (!strcasecmp(s, format_names[i])) {
			*out = (enum sd_ingest_format)i;
			return SD_OK;
		}
	if (!strcasecmp(s, "huggingface") || !strcasecmp(s, "transformers")) {
		*out = SD_INGEST_HF;
		return SD_OK;
	}
	if (!strcasecmp(s, "llama-factory") || !strcasecmp(s, "llama_factory")) {
		*out = SD_INGEST_LLAMAFACTORY;
		return SD_OK;
	}
	snprintf(err, errlen, "unknown log format '%s'; use auto, megatron, "
		 "deepspeed, hf or llamafactory", s);
	return SD_ERR_INVALID;
}

void sd_ingest_log_init(struct sd_ingest_log *l, enum sd_ingest_format f)
{
	memset(l, 0, sizeof(*l));
	l->format = f;
	sd_train_facts_init(&l->facts);
	l->log_every = NAN;
}

void sd_ingest_log_free(struct sd_ingest_log *l)
{
	if (!l)
		return;
	enum sd_ingest_format f = l->format;
	free(l->steps);
	free(l->samples);
	free(l->logged_tflops);
	sd_ingest_log_init(l, f);
}

static void keep_bad(struct sd_ingest_log *l, long line, const char *text,
		     size_t len, const char *why)
{
	if (l->nbad >= SD_INGEST_MAX_BAD)
		return;
	struct sd_ingest_bad *b = &l->bad[l->nbad++];
	b->line = line;
	sd_strlcpy(b->why, why, sizeof(b->why));
	size_t k = 0;
	for (size_t i = 0; i < len && k + 1 < sizeof(b->text); i++) {
		unsigned char c = (unsigned char)text[i];
		if (c == '\n' || c == '\r')
			break;
		b->text[k++] = (c < 0x20 || c == 0x7f) ? '?' : (char)c;
	}
	b->text[k] = '\0';
}

void sd_ingest_bad_line(struct sd_ingest_log *l, long line, const char *text,
			size_t len, const char *why, ...)
{
	char buf[160];
	va_list ap;
	va_start(ap, why);
	vsnprintf(buf, sizeof(buf), why, ap);
	va_end(ap);
	l->lines_unparsed++;
	keep_bad(l, line, text ? text : "", text ? len : 0, buf);
}

/* A run begins (the first row, or steps back to where the run before
 * began): keep it, or not, as want_run says; the rows of a run left
 * behind become lines of other runs. */
static void begin_run(struct sd_ingest_log *l, long first)
{
	l->runs++;
	int keep = l->want_run == 0 || l->want_run == l->runs;
	if (keep && l->n) {
		l->lines_steps -= (long)l->n;
		l->lines_other_runs += (long)l->n;
		l->n = 0;
	}
	l->run_first = first;
	if (keep)
		l->run_kept = l->runs;
}

int sd_ingest_add_step(struct sd_ingest_log *l, long line,
		       const struct sd_train_step *s, double samples,
		       double logged_tflops)
{
	if (!l->runs) {
		begin_run(l, s->step);
	} else if (s->step <= l->run_first &&
		   (l->run_kept != l->runs || !l->n ||
		    s->step != l->steps[l->n - 1].step) &&
		   s->step != l->last_step) {
		/* back to where this run began, and not a copy of the line
		 * before: the log goes on with another run */
		begin_run(l, s->step);
	}
	l->last_step = s->step;
	if (l->run_kept != l->runs) {
		l->lines_other_runs++;
		return SD_OK;
	}
	if (l->n && s->step <= l->steps[l->n - 1].step) {
		l->steps_dropped++;
		/* the rows are in increasing step order: the row of this
		 * step, if there is one, by bisection (a log of a million
		 * repeated lines stays linear) */
		const struct sd_train_step *same = NULL;
		size_t lo = 0, hi = l->n;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (l->steps[mid].step < s->step)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo < l->n && l->steps[lo].step == s->step)
			same = &l->steps[lo];
		int differs = !same || (s->has & SD_STEP_LOSS) !=
						(same->has & SD_STEP_LOSS) ||
			      ((s->has & SD_STEP_LOSS) &&
			       memcmp(&s->loss, &same->loss,
				      sizeof(s->loss)) != 0);
		if (differs) {
			char why[160];
			snprintf(why, sizeof(why), "step %ld after step %ld "
				 "with another loss (a restart?); kept the "
				 "first", s->step, l->steps[l->n - 1].step);
			l->lines_unparsed++;
			keep_bad(l, line, "", 0, why);
		} else {
			l->lines_other++; /* a rank's copy of a row */
			l->copies++;
		}
		return SD_OK;
	}
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 64;
		struct sd_train_step *st =
			realloc(l->steps, cap * sizeof(*st));
		if (!st)
			return SD_ERR_NOMEM;
		l->steps = st;
		double *sa = realloc(l->samples, cap * sizeof(*sa));
		if (!sa)
			return SD_ERR_NOMEM;
		l->samples = sa;
		double *lt = realloc(l->logged_tflops, cap * sizeof(*lt));
		if (!lt)
			return SD_ERR_NOMEM;
		l->logged_tflops = lt;
		l->cap = cap;
	}
	l->steps[l->n] = *s;
	l->steps[l->n].rank = -1;
	l->samples[l->n] = samples;
	l->logged_tflops[l->n] = logged_tflops;
	l->n++;
	l->lines_steps++;
	return SD_OK;
}

size_t sd_ingest_launcher_prefix(const char *s, size_t n)
{
	size_t k = 0;
	if (n > 6 && s[0] == '[' && (strncmp(s, "[rank", 5) == 0 ||
				     strncmp(s, "[default", 8) == 0)) {
		/* torchrun's --tee / log_line_prefix: "[rank3]:",
		 * "[default3]:" */
		k = s[1] == 'r' ? 5 : 8;
		size_t d0 = k;
		while (k < n && s[k] >= '0' && s[k] <= '9')
			k++;
		if (k == d0 || k + 1 >= n || s[k] != ']' || s[k + 1] != ':')
			return 0;
		/* the line follows the colon as it was printed */
		return k + 2;
	}
	/* " 0: " (srun -l pads the rank to the widest one's width) */
	while (k < n && k < 4 && s[k] == ' ')
		k++;
	if (k && !(k < n && s[k] >= '0' && s[k] <= '9'))
		return 0;
	size_t b0 = k;
	/* "12: " (srun -l) or "host-1: " / "localhost: " (pdsh) */
	int digit = 0, dash = 0;
	while (k < n && k < 64 &&
	       ((s[k] >= '0' && s[k] <= '9') || (s[k] >= 'a' && s[k] <= 'z') ||
		(s[k] >= 'A' && s[k] <= 'Z') || s[k] == '-' || s[k] == '.' ||
		s[k] == '_')) {
		digit |= s[k] >= '0' && s[k] <= '9';
		dash |= s[k] == '-';
		k++;
	}
	if (k == b0 || k + 1 >= n || s[k] != ':' || s[k + 1] != ' ')
		return 0;
	if (!digit && !dash && !(k == 9 && strncmp(s, "localhost", 9) == 0))
		return 0;
	/* padded: only a rank number */
	for (size_t i = b0; b0 && i < k; i++)
		if (s[i] < '0' || s[i] > '9')
			return 0;
	return k + 2;
}

/*
 * The log being read when it is mapped (a regular file): the lines
 * behind the reader are given back to the kernel as it goes (clean
 * pages of a file: MADV_DONTNEED drops them from this process, and a
 * parser that looks back reads them again from the page cache), so a
 * log of any size is read within a window of SD_INGEST_WINDOW bytes.
 */
#define SD_INGEST_WINDOW ((size_t)8 << 20)
static _Thread_local struct {
	const char *base;
	size_t len, dropped;
} mapped;

static void drop_behind(const char *text, size_t at)
{
	if (text != mapped.base || at < mapped.dropped + 2 * SD_INGEST_WINDOW)
		return;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t to = (at - SD_INGEST_WINDOW) & ~(page - 1);
	if (to > mapped.dropped &&
	    madvise((void *)(mapped.base + mapped.dropped), to - mapped.dropped,
		    MADV_DONTNEED) == 0)
		mapped.dropped = to;
}

const char *sd_ingest_next_line(const char *text, size_t len, size_t *at,
				size_t *n, int *cut)
{
	if (*at >= len)
		return NULL;
	drop_behind(text, *at);
	const char *s = text + *at;
	const char *nl = memchr(s, '\n', len - *at);
	*n = nl ? (size_t)(nl - s) : len - *at;
	*cut = nl == NULL;
	*at += *n + (nl ? 1 : 0);
	/* a launcher's prefix, or two ("0: [rank0]: "), is not the log's */
	for (int i = 0; i < 2; i++) {
		size_t p = sd_ingest_launcher_prefix(s, *n);
		s += p;
		*n -= p;
	}
	/* nor another rank's prefix written before this line's newline
	 * ("... |[default3]:", two ranks' output interleaved) */
	size_t e = *n;
	if (e && s[e - 1] == '\r')
		e--;
	if (e > 4 && s[e - 1] == ':' && s[e - 2] == ']') {
		size_t b = e - 2;
		while (b > 0 && s[b - 1] >= '0' && s[b - 1] <= '9')
			b--;
		if (b < e - 2 && ((b >= 5 && !strncmp(s + b - 5, "[rank", 5)) ||
				  (b >= 8 && !strncmp(s + b - 8, "[default", 8))))
			*n = b - (s[b - 1] == 'k' ? 5 : 8);
	}
	return s;
}

const char *sd_ingest_find(const char *s, size_t n, const char *needle)
{
	return memmem(s, n, needle, strlen(needle));
}

/* The number right after key (blanks skipped), to the next blank, ',' or
 * '/'; NaN and *bad when key is there and it does not parse, NaN alone
 * when key is not there.  *suffix (may be NULL) gets the character after
 * the number's blank ('M' in "336.23 M"). */
double sd_ingest_number_after(const char *s, size_t n, const char *key,
			      int *bad, char *suffix)
{
	const char *p = sd_ingest_find(s, n, key);
	if (suffix)
		*suffix = '\0';
	if (!p)
		return NAN;
	p += strlen(key);
	while (p < s + n && *p == ' ')
		p++;
	char buf[64];
	size_t k = 0;
	while (p < s + n && *p != ' ' && *p != ',' && *p != '/' &&
	       *p != '|' && *p != '\r' && k + 1 < sizeof(buf))
		buf[k++] = *p++;
	buf[k] = '\0';
	char *end;
	errno = 0;
	double v = strtod(buf, &end);
	if (!k || *end || errno == ERANGE) {
		*bad = 1;
		return NAN;
	}
	while (suffix && p < s + n && *p == ' ')
		p++;
	if (suffix && p < s + n)
		*suffix = *p;
	return v;
}

/* A configuration line "  name {dots} value" (config.py print():
 * dots = "." * (29 - len(name)), none for a long name), after any
 * logging prefix ("[...] [INFO] [config.py:1004:print] "): 0 and its
 * name and value (NaN when not a number); -1 when the line is not one. */
int sd_ingest_setting_line(const char *s, size_t n, char *name, size_t nlen,
			   double *value)
{
	const char *p = s, *e = s + n;
	*value = NAN;
	for (const char *q = s; q + 1 < e; q++)
		if (q[0] == ']' && (q[1] == ' ' || q[1] == ':'))
			p = q + 1 + (q[1] == ':');
	if (e - p < 3 || p[0] != ' ' || p[1] != ' ')
		return -1;
	while (p < e && *p == ' ')
		p++;
	const char *b = p;
	while (p < e && (*p == '_' || (*p >= 'a' && *p <= 'z') ||
			 (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9')))
		p++;
	if (p == b || p >= e || *p != ' ' || (size_t)(p - b) >= nlen)
		return -1;
	memcpy(name, b, (size_t)(p - b));
	name[p - b] = '\0';
	while (p < e && (*p == ' ' || *p == '.'))
		p++;
	char buf[64];
	size_t k = 0;
	while (p < e && *p != ' ' && *p != '\r' && k + 1 < sizeof(buf))
		buf[k++] = *p++;
	buf[k] = '\0';
	char *end;
	double v = strtod(buf, &end);
	if (end != buf && !*end)
		*value = v;
	return 0;
}

void sd_ingest_read_fact(struct sd_train_fact *f, double value)
{
	if (!isfinite(value) || value <= 0)
		return;
	f->value = value;
	f->origin = SD_TRAIN_READ;
}

typedef int (*parse_fn)(const char *, const char *, size_t,
			struct sd_ingest_log *, char *, size_t);
typedef int (*sniff_fn)(const char *, size_t);

static const parse_fn parsers[SD_INGEST_NFORMATS] = {
	NULL, sd_ingest_parse_megatron, sd_ingest_parse_deepspeed,
	sd_ingest_parse_hf, sd_ingest_parse_llamafactory,
};
static const sniff_fn sniffers[SD_INGEST_NFORMATS] = {
	NULL, sd_ingest_sniff_megatron, sd_ingest_sniff_deepspeed,
	sd_ingest_sniff_hf, sd_ingest_sniff_llamafactory,
};

/* A log's text: mapped (maplen > 0: a regular file, with a page of
 * zeros after its end, so the text is NUL-terminated like a read one),
 * else read whole (a FIFO, a process substitution). */
struct log_text {
	char *p;
	size_t len, maplen;
};

static void text_free(struct log_text *t)
{
	if (t->maplen)
		munmap(t->p, t->maplen);
	else
		free(t->p);
	if (mapped.base == t->p)
		mapped.base = NULL;
	t->p = NULL;
}

/* Map the regular file open at fd, size bytes (> 0): 0, or -1 when it
 * cannot be (the caller reads it instead). */
static int map_text(int fd, size_t size, struct log_text *t)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t span = (size / page + 1) * page;
	/* the span reserved with zeros, the file mapped over its start */
	char *base = mmap(NULL, span, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS,
			  -1, 0);
	if (base == MAP_FAILED)
		return -1;
	if (mmap(base, size, PROT_READ, MAP_PRIVATE | MAP_FIXED, fd, 0) ==
	    MAP_FAILED) {
		munmap(base, span);
		return -1;
	}
	madvise(base, size, MADV_SEQUENTIAL);
	t->p = base;
	t->len = size;
	t->maplen = span;
	mapped.base = base;
	mapped.len = size;
	mapped.dropped = 0;
	return 0;
}

/* The whole file, NUL-terminated: mapped when it is a regular file. */
static int slurp(const char *path, struct log_text *t, char *err,
		 size_t errlen)
{
	/* not blocking on a FIFO with no writer (it reads as empty); one
	 * with a writer, as a process substitution, is read as it comes */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	if (fd < 0) {
		snprintf(err, errlen, "%s: cannot open: %s", path,
			 strerror(errno));
		return SD_ERR_IO;
	}
	int have_st = fstat(fd, &st) == 0;
	if (have_st && S_ISDIR(st.st_mode)) {
		close(fd);
		snprintf(err, errlen, "%s: is a folder; give the training "
			 "job's log file (for the Trainer, the folder's "
			 "trainer_state.json)", path);
		return SD_ERR_INVALID;
	}
	if (have_st && S_ISREG(st.st_mode) && st.st_size > 0 &&
	    (uintmax_t)st.st_size < (uintmax_t)SIZE_MAX / 2 &&
	    map_text(fd, (size_t)st.st_size, t) == 0) {
		close(fd);
		return SD_OK;
	}
	int fl = fcntl(fd, F_GETFL);
	if (fl >= 0)
		fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	FILE *fp = fdopen(fd, "rb");
	if (!fp) {
		snprintf(err, errlen, "%s: cannot open: %s", path,
			 strerror(errno));
		close(fd);
		return SD_ERR_IO;
	}
	struct sd_buf b = { 0 };
	char chunk[65536];
	size_t got;
	int rc = SD_OK;
	while ((got = fread(chunk, 1, sizeof(chunk), fp)) > 0) {
		if (b.len + got > SD_INGEST_STREAM_MAX) {
			/* a stream (a pipe, /dev/zero) cannot be mapped:
			 * read whole, so bounded */
			rc = SD_ERR_INVALID;
			snprintf(err, errlen, "%s: not a file, and longer than "
				 "%zu MiB: a stream is read whole, a file is "
				 "mapped (any size); write the log to a file "
				 "first", path, SD_INGEST_STREAM_MAX >> 20);
			break;
		}
		if (b.len + got + 1 > b.cap) {
			size_t cap = b.cap ? b.cap : 65536;
			while (cap < b.len + got + 1)
				cap *= 2;
			char *d = realloc(b.data, cap);
			if (!d) {
				rc = SD_ERR_NOMEM;
				snprintf(err, errlen, "%s: out of memory "
					 "reading it", path);
				break;
			}
			b.data = d;
			b.cap = cap;
		}
		memcpy(b.data + b.len, chunk, got);
		b.len += got;
	}
	if (rc == SD_OK && ferror(fp)) {
		snprintf(err, errlen, "%s: read failed: %s", path,
			 strerror(errno));
		rc = SD_ERR_IO;
	}
	fclose(fp);
	if (rc != SD_OK) {
		free(b.data);
		return rc;
	}
	if (!b.data) {
		b.data = malloc(1);
		if (!b.data) {
			snprintf(err, errlen, "%s: out of memory", path);
			return SD_ERR_NOMEM;
		}
	}
	b.data[b.len] = '\0';
	t->p = b.data;
	t->len = b.len;
	t->maplen = 0;
	return SD_OK;
}

/* Sniff (fmt SD_INGEST_AUTO) and parse the text of t: the parser's
 * status, the format read in *fmtp. */
static int read_text(const char *path, const struct log_text *t,
		     enum sd_ingest_format fmt, struct sd_ingest_log *out,
		     enum sd_ingest_format *fmtp, char *err, size_t errlen)
{
	const char *text = t->p;
	size_t len = t->len;
	if (fmt == SD_INGEST_AUTO) {
		/* the first 64 KiB, then twice as much until a format is
		 * sure, the whole file is read or SD_INGEST_SNIFF_MAX is:
		 * real logs start their step lines after long preambles
		 * (model loading, argument dumps, warnings) */
		size_t head = 0;
		int best = 0, score[SD_INGEST_NFORMATS] = { 0 };
		do {
			head = head ? 2 * head : 65536;
			if (head > len)
				head = len;
			if (head > SD_INGEST_SNIFF_MAX)
				head = SD_INGEST_SNIFF_MAX;
			best = 0;
			for (int i = 1; i < SD_INGEST_NFORMATS; i++) {
				score[i] = sniffers[i](text, head);
				if (score[i] > score[best])
					best = i;
			}
		} while (score[best] < 90 && head < len &&
			 head < SD_INGEST_SNIFF_MAX);
		/* what was read to sniff is given back before parsing */
		if (t->maplen)
			madvise(t->p, head, MADV_DONTNEED);
		if (best == 0 || score[best] < 50) {
			snprintf(err, errlen, "%s: not a log shakedown knows "
				 "(megatron %d, deepspeed %d, hf %d, "
				 "llamafactory %d out of 100%s); give --format",
				 path, score[1], score[2], score[3],
				 score[4], head < len ? ", in its first 32 MiB"
						      : "");
			return SD_ERR_INVALID;
		}
		fmt = (enum sd_ingest_format)best;
		out->format = fmt;
	}
	int rc = parsers[fmt](path, text, len, out, err, errlen);
	out->format = fmt;
	if (out->copies && !out->warning[0])
		snprintf(out->warning, sizeof(out->warning),
			 "%ld step line%s repeat%s a row already read (the "
			 "same step and loss: more than one rank or process "
			 "printed them): each row read once", out->copies,
			 out->copies == 1 ? "" : "s",
			 out->copies == 1 ? "s" : "");
	*fmtp = fmt;
	return rc;
}

/*
 * A mapped file that gets shorter while it is read (logrotate's
 * copytruncate, a job started again into it) raises SIGBUS where the
 * parser reads past its new end: caught while the text is read, and
 * said; what a parser had allocated then is not freed (a failed read,
 * once).
 */
static _Thread_local sigjmp_buf bus_jump;
static _Thread_local volatile sig_atomic_t bus_armed;
static _Thread_local struct sigaction bus_old;

static void on_bus(int sig, siginfo_t *si, void *ctx)
{
	(void)ctx;
	const char *a = si->si_addr;
	if (bus_armed && mapped.base && a >= mapped.base &&
	    a < mapped.base + mapped.len + 4096) {
		bus_armed = 0;
		siglongjmp(bus_jump, 1);
	}
	/* not ours: as it would have been */
	sigaction(SIGBUS, &bus_old, NULL);
	raise(sig);
}

int sd_ingest_read(const char *path, enum sd_ingest_format fmt,
		   struct sd_ingest_log *out, char *err, size_t errlen)
{
	return sd_ingest_read_run(path, fmt, 0, out, err, errlen);
}

int sd_ingest_read_run(const char *path, enum sd_ingest_format fmt, int run,
		       struct sd_ingest_log *out, char *err, size_t errlen)
{
	struct log_text t = { 0 };
	sd_ingest_log_init(out, fmt);
	out->want_run = run > 0 ? run : 0;
	if ((unsigned)fmt >= SD_INGEST_NFORMATS) {
		snprintf(err, errlen, "%s: unknown log format", path);
		return SD_ERR_INVALID;
	}
	int rc = slurp(path, &t, err, errlen);
	if (rc != SD_OK)
		return rc;
	if (t.len == 0) {
		snprintf(err, errlen, "%s: the file is empty; give the "
			 "training job's log", path);
		text_free(&t);
		return SD_ERR_INVALID;
	}
	enum sd_ingest_format got = fmt;
	if (t.maplen) {
		if (sigsetjmp(bus_jump, 1)) {
			sigaction(SIGBUS, &bus_old, NULL);
			text_free(&t);
			snprintf(err, errlen, "%s: the file got shorter while it "
				 "was read (truncated: logrotate's copytruncate, "
				 "or the job started again into it); read it "
				 "again, or a copy of it", path);
			return SD_ERR_IO;
		}
		struct sigaction sa;
		memset(&sa, 0, sizeof(sa));
		sa.sa_sigaction = on_bus;
		sa.sa_flags = SA_SIGINFO;
		sigemptyset(&sa.sa_mask);
		sigaction(SIGBUS, &sa, &bus_old);
		bus_armed = 1;
	}
	rc = read_text(path, &t, fmt, out, &got, err, errlen);
	if (t.maplen) {
		bus_armed = 0;
		sigaction(SIGBUS, &bus_old, NULL);
	}
	text_free(&t);
	if ((rc == SD_OK || (rc == SD_ERR_INVALID && out->runs > 0)) &&
	    run > 0 && run > out->runs) {
		snprintf(err, errlen, "%s: --run %d: the log holds %d run%s "
			 "(a run begins where the steps go back to its first, "
			 "or a resume starts the clock again); give "
			 "--run 1%s", path, run, out->runs,
			 out->runs == 1 ? "" : "s",
			 out->runs > 1 ? " to the last" : "");
		rc = SD_ERR_INVALID;
	}
	if (rc == SD_OK && out->n == 0) {
		snprintf(err, errlen, "%s: no step lines of %s", path,
			 sd_ingest_format_name(got));
		rc = SD_ERR_INVALID;
	}
	if (rc == SD_OK && sd_train_check_steps(out->steps, out->n, err,
						errlen) != SD_OK) {
		char why[200];
		sd_strlcpy(why, err, sizeof(why));
		snprintf(err, errlen, "%s: %s", path, why);
		rc = SD_ERR_INVALID;
	}
	return rc;
}
