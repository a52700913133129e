/*
 * progress.c - run's live progress line (see progress.h).
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "progress.h"
#include "util.h"

/* how often the line is drawn while a measurement runs */
#define DRAW_EVERY_MS 500

struct sd_progress {
	int fd;
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t wake;
	int stop;
	int shown;      /* the line is on the screen */
	int live;       /* a measurement is under way: draw it */
	/* what is measured */
	char test[200]; /* "[2/5] all_reduce float32 sum" */
	char what[96];  /* "16M in place, 10 iters (+3 warm-up)" */
	double test_start_s;
	double done_w, left_w; /* weights done before this measurement, and
				  left after it */
	double this_w;
};

/* The terminal's width on fd, else 80. */
static int columns(int fd)
{
	struct winsize ws;
	if (ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		return ws.ws_col;
	return 80;
}

static void put(int fd, const char *s, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, s, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		s += w;
		n -= (size_t)w;
	}
}

/* With p->mu held: the line, fitted to the terminal (one row, so that
 * \r returns to its start; a transient line may lose its end). */
static void draw(struct sd_progress *p)
{
	double now = sd_now(), el = now - p->test_start_s;
	char left[48] = "";
	if (p->done_w > 0 && el > 0) {
		/* the measurement under way is half done, on average */
		double rate = el / (p->done_w + p->this_w / 2);
		snprintf(left, sizeof(left), ", ~%.0f s left",
			 rate * (p->left_w + p->this_w / 2));
	}
	char line[400];
	int n = snprintf(line, sizeof(line), "\r\033[K%s %s, %.0f s%s", p->test,
			 p->what, el, left);
	int room = columns(p->fd) - 1 + 4; /* the \r and \033[K take none */
	if (n > room)
		n = room;
	if (n > 0 && (size_t)n < sizeof(line))
		put(p->fd, line, (size_t)n);
	p->shown = 1;
}

static void erase(struct sd_progress *p)
{
	if (p->shown)
		put(p->fd, "\r\033[K", 4);
	p->shown = 0;
}

static void *loop(void *arg)
{
	struct sd_progress *p = arg;
	pthread_mutex_lock(&p->mu);
	while (!p->stop) {
		if (p->live)
			draw(p);
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += DRAW_EVERY_MS * 1000000L;
		ts.tv_sec += ts.tv_nsec / 1000000000L;
		ts.tv_nsec %= 1000000000L;
		pthread_cond_timedwait(&p->wake, &p->mu, &ts);
	}
	erase(p);
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

struct sd_progress *sd_progress_start(int fd)
{
	struct sd_progress *p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->fd = fd;
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->wake, NULL);
	p->test_start_s = sd_now();
	if (pthread_create(&p->thread, NULL, loop, p)) {
		pthread_cond_destroy(&p->wake);
		pthread_mutex_destroy(&p->mu);
		free(p);
		return NULL;
	}
	return p;
}

void sd_progress_test(struct sd_progress *p, size_t index, size_t count,
		      const char *label)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->mu);
	snprintf(p->test, sizeof(p->test), "[%zu/%zu] %s", index + 1, count,
		 label);
	p->test_start_s = sd_now();
	p->live = 0; /* drawn from its first measurement */
	pthread_mutex_unlock(&p->mu);
}

void sd_progress_measure(struct sd_progress *p, const uint64_t *sizes,
			 size_t nsizes, size_t si, int in_place,
			 int placements, long iters, long warmup)
{
	if (!p || si >= nsizes)
		return;
	double done = 0, left = 0, w = (double)sizes[si] + 65536.0;
	for (size_t k = 0; k < nsizes; k++) {
		double wk = ((double)sizes[k] + 65536.0) * placements;
		if (k < si)
			done += wk;
		else if (k > si)
			left += wk;
	}
	/* the other placement of this size: before or after this one */
	if (placements == 2 && in_place)
		done += w;
	else if (placements == 2)
		left += w;
	char sz[32];
	sd_format_size(sizes[si], sz, sizeof(sz));
	pthread_mutex_lock(&p->mu);
	snprintf(p->what, sizeof(p->what), "%s %s, %ld iters (+%ld warm-up)",
		 sz, in_place ? "in place" : "out of place", iters, warmup);
	p->done_w = done;
	p->left_w = left;
	p->this_w = w;
	p->live = 1;
	pthread_cond_signal(&p->wake); /* drawn at once */
	pthread_mutex_unlock(&p->mu);
}

void sd_progress_clear(struct sd_progress *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->mu);
	erase(p);
	p->live = 0;
	pthread_mutex_unlock(&p->mu);
}

void sd_progress_stop(struct sd_progress *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->mu);
	p->stop = 1;
	pthread_cond_signal(&p->wake);
	pthread_mutex_unlock(&p->mu);
	pthread_join(p->thread, NULL);
	pthread_cond_destroy(&p->wake);
	pthread_mutex_destroy(&p->mu);
	free(p);
}

/* --- the sink that erases the line before the printers print ---------- */

static int c_run_begin(void *self, const struct sd_run_info *run)
{
	(void)run;
	sd_progress_clear(self);
	return SD_OK;
}

static int c_test_begin(void *self, const struct sd_test_info *t)
{
	(void)t;
	sd_progress_clear(self);
	return SD_OK;
}

static int c_measurement(void *self, const struct sd_test_info *t,
			 const struct sd_measurement *m)
{
	(void)t;
	(void)m;
	sd_progress_clear(self);
	return SD_OK;
}

static int c_test_end(void *self, const struct sd_test_info *t,
		      const char *status, const char *message)
{
	(void)t;
	(void)status;
	(void)message;
	sd_progress_clear(self);
	return SD_OK;
}

static int c_run_end(void *self, const struct sd_run_end *e)
{
	(void)e;
	sd_progress_clear(self);
	return SD_OK;
}

static int c_verdicts(void *self, const struct sd_verdict_info *v, size_t n)
{
	(void)v;
	(void)n;
	sd_progress_clear(self);
	return SD_OK;
}

static void c_destroy(void *self)
{
	(void)self; /* sd_progress_stop frees it */
}

static const struct sd_sink_ops clear_ops = {
	.name = "progress line",
	.run_begin = c_run_begin,
	.test_begin = c_test_begin,
	.measurement = c_measurement,
	.test_end = c_test_end,
	.run_end = c_run_end,
	.destroy = c_destroy,
	.verdicts = c_verdicts,
};

void sd_progress_sink(struct sd_progress *p, struct sd_sink *s)
{
	s->ops = &clear_ops;
	s->self = p;
}
