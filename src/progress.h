/*
 * progress.h - run's live progress line on standard error (rank 0): the
 * test, op, size, placement and iteration counts of the measurement under
 * way, how long the test has run and about how long it has left,
 * rewritten in place twice a second by a thread of its own and erased
 * before any line of output is printed, so that nothing is glued to it.
 *
 * The measuring thread only stores what is measured next (a mutex and a
 * few copies, before the measurement starts, outside its timed
 * iterations); the drawing, the only I/O, is the thread's, so the
 * progress line adds nothing to the timed loop but a write of under 200
 * bytes every half second on another thread.
 */
#ifndef SD_PROGRESS_H
#define SD_PROGRESS_H

#include <stddef.h>
#include <stdint.h>
#include "sink.h"

struct sd_progress;

/* Start the line's thread, drawing on fd (a terminal, or wherever
 * --progress asked).  NULL when out of resources (then no line). */
struct sd_progress *sd_progress_start(int fd);

/* Test `index` (0-based) of `count` starts: label names it ("all_reduce
 * float32 sum"); its clock starts now. */
void sd_progress_test(struct sd_progress *p, size_t index, size_t count,
		      const char *label);

/* A measurement starts: sizes[si] of the test's sizes[0..nsizes), in
 * place or not, iters timed after warmup untimed iterations, placements
 * per size (1 or 2).  The estimate of what is left weighs each remaining
 * measurement by its bytes (plus 64 KiB, for the latency of small ones)
 * at the rate measured so far in the test. */
void sd_progress_measure(struct sd_progress *p, const uint64_t *sizes,
			 size_t nsizes, size_t si, int in_place,
			 int placements, long iters, long warmup);

/* Erase the line now; it is drawn again at the next measurement. */
void sd_progress_clear(struct sd_progress *p);

/* A sink that erases the line before every event the printers print
 * (place it first); its destroy() does nothing.  p may be NULL. */
void sd_progress_sink(struct sd_progress *p, struct sd_sink *s);

/* Stop the thread, erase the line and free p (NULL is ignored). */
void sd_progress_stop(struct sd_progress *p);

#endif
