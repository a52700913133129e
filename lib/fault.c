/*
 * fault.c - fault injection for the test suite (see fault.h).
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fault.h"
#include "names.h"
#include "util.h"

static const struct sd_name_row kind_names[] = {
	{ "corrupt", SD_FAULT_CORRUPT }, { "stall", SD_FAULT_STALL },
	{ "exit", SD_FAULT_EXIT }, { "kill", SD_FAULT_KILL },
	{ "slow", SD_FAULT_SLOW }, { "grad_corrupt", SD_FAULT_GRAD_CORRUPT },
	{ "grad_nan", SD_FAULT_GRAD_NAN }, { NULL, 0 }
};

/* A positive finite number: 0, or -1. */
static int parse_scale(const char *s, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || *end || !(v > 0) || v > 1e30)
		return -1;
	*out = v;
	return 0;
}

int sd_fault_parse(const char *spec, struct sd_fault *f, char *err,
		   size_t errlen)
{
	memset(f, 0, sizeof(*f));
	f->op = -1;
	f->in_place = -1;
	f->code = 9;
	f->rank = -1;
	f->delay_us = 1000;
	f->scale = 1.0;
	if (!spec || !*spec)
		return SD_OK;
	char copy[512], *save = NULL;
	sd_strlcpy(copy, spec, sizeof(copy));
	for (char *kv = strtok_r(copy, ",", &save); kv;
	     kv = strtok_r(NULL, ",", &save)) {
		char *v = strchr(kv, '=');
		long n;
		if (!v)
			goto bad;
		*v++ = '\0';
		if (strcmp(kv, "rank") == 0 && !sd_parse_int(v, 0, 1 << 24, &n))
			f->rank = (int)n;
		else if (strcmp(kv, "kind") == 0) {
			int k;
			if (sd_name_lookup(kind_names, v, &k, NULL))
				goto bad;
			f->kind = (enum sd_fault_kind)k;
		} else if (strcmp(kv, "op") == 0) {
			enum sd_op op;
			if (sd_op_from_name(v, &op, NULL))
				goto bad;
			f->op = (int)op;
		} else if (strcmp(kv, "size") == 0) {
			if (sd_parse_size(v, &f->size))
				goto bad;
		} else if (strcmp(kv, "in_place") == 0 &&
			   !sd_parse_int(v, 0, 1, &n))
			f->in_place = (int)n;
		else if (strcmp(kv, "delay_us") == 0 &&
			 !sd_parse_int(v, 1, 60000000, &n))
			f->delay_us = n;
		else if (strcmp(kv, "at") == 0 && strcmp(v, "start") == 0)
			f->at_start = 1;
		else if (strcmp(kv, "iter") == 0 &&
			 !sd_parse_int(v, 0, 1 << 30, &n)) {
			f->iter = n;
			f->iter_set = 1;
		} else if (strcmp(kv, "scale") == 0 &&
			   !parse_scale(v, &f->scale))
			;
		else if (strcmp(kv, "rel") == 0 && !sd_parse_int(v, 0, 1, &n))
			f->rel = (int)n;
		else if (strcmp(kv, "code") == 0 && !sd_parse_int(v, 0, 255, &n))
			f->code = (int)n;
		else if (strcmp(kv, "index") == 0 &&
			 !sd_parse_int(v, 0, 1L << 40, &n))
			f->index = (uint64_t)n;
		else
			goto bad;
		continue;
bad:
		snprintf(err, errlen, "SHAKEDOWN_FAULT: cannot use '%s%s%s'; "
			 "see shakedown(1), FAULT INJECTION", kv, v ? "=" : "",
			 v ? v : "");
		return SD_ERR_INVALID;
	}
	if (f->kind == SD_FAULT_NONE || f->rank < 0) {
		snprintf(err, errlen, "SHAKEDOWN_FAULT needs rank=R and kind="
			 "corrupt|stall|exit|kill|slow|grad_corrupt|grad_nan");
		return SD_ERR_INVALID;
	}
	return SD_OK;
}

int sd_fault_fits(const struct sd_fault *f, enum sd_fault_workload w,
		  int nranks, uint64_t elements, char *err, size_t errlen)
{
	/* what each workload takes: the kinds to plant instead of a gradient
	 * fault (train takes those), the selectors it has no use for, and
	 * what an index past `elements` is past */
	static const struct {
		const char *plant, *unused, *past;
	} fit[] = {
		[SD_FAULT_IN_RUN] = { "corrupt, stall, exit, kill or slow", NULL,
				      "past every buffer of the plan (at most "
				      "%llu elements)" },
		[SD_FAULT_IN_GEMM] = { "slow, corrupt, stall, exit or kill",
				       "op, size and in_place do not apply to "
				       "gemm; plant rank=R,kind=slow|corrupt|"
				       "stall|exit|kill",
				       "past the %llu elements checked of the "
				       "first product" },
		[SD_FAULT_IN_TRAIN] = { NULL,
					"op, size, in_place, at=start and kind "
					"corrupt do not apply to train; plant "
					"rank=R,kind=slow|grad_corrupt|grad_nan"
					"|stall|exit|kill",
					"past the %llu gradients of the model" },
	};
	int grad = f->kind == SD_FAULT_GRAD_CORRUPT ||
		   f->kind == SD_FAULT_GRAD_NAN;
	int selects = f->op >= 0 || f->size || f->in_place >= 0;
	if (f->kind == SD_FAULT_NONE)
		return 0;
	if (grad && fit[w].plant) {
		snprintf(err, errlen, "kind grad_corrupt and grad_nan are for "
			 "'shakedown train'; plant %s here", fit[w].plant);
		return 1;
	}
	if (fit[w].unused &&
	    (selects || (w == SD_FAULT_IN_TRAIN &&
			 (f->at_start || f->kind == SD_FAULT_CORRUPT)))) {
		snprintf(err, errlen, "%s", fit[w].unused);
		return 1;
	}
	if (f->rank < 0 || f->rank >= nranks) {
		snprintf(err, errlen, "rank=%d is not a rank of this job (0 to "
			 "%d); plant it on one that runs", f->rank, nranks - 1);
		return 1;
	}
	int indexed = w == SD_FAULT_IN_TRAIN ? f->kind == SD_FAULT_GRAD_NAN
					     : f->kind == SD_FAULT_CORRUPT;
	if (!indexed || !elements || f->index < elements)
		return 0;
	char past[160];
	snprintf(past, sizeof(past), fit[w].past, (unsigned long long)elements);
	snprintf(err, errlen, "index=%llu is %s; use a smaller index",
		 (unsigned long long)f->index, past);
	return 1;
}

int sd_fault_fits_steps(const struct sd_fault *f, long steps, char *err,
			size_t errlen)
{
	long lo, hi;
	const char *when;
	switch (f->kind) {
	/* a gradient planted at step k shows in the loss of step k + 1 */
	case SD_FAULT_GRAD_NAN:
		lo = 1, hi = steps - 1,
		when = "at step iter (the loss shows it a step later)";
		break;
	case SD_FAULT_GRAD_CORRUPT:
		lo = 0, hi = steps - 1,
		when = "from step iter on (the loss shows it a step later)";
		break;
	case SD_FAULT_STALL:
	case SD_FAULT_EXIT:
	case SD_FAULT_KILL:
		lo = 0, hi = steps - 1, when = "before step iter + 1";
		break;
	default:
		return 0;
	}
	long iter = f->iter;
	if (iter >= lo && iter <= hi)
		return 0;
	if (hi < lo)
		snprintf(err, errlen, "kind=%s acts %s, and a run of %ld step%s "
			 "has no such step; run more steps", sd_name_of(kind_names, f->kind),
			 when, steps, steps == 1 ? "" : "s");
	else
		snprintf(err, errlen, "iter=%ld never fires: kind=%s acts %s, "
			 "and this run has steps 1 to %ld; give iter=%ld to "
			 "%ld", iter, sd_name_of(kind_names, f->kind), when, steps,
			 lo, hi);
	return 1;
}

int sd_fault_fits_entries(const struct sd_fault *f, long entries, char *err,
			  size_t errlen)
{
	if (!f->iter_set || (f->kind != SD_FAULT_STALL &&
			     f->kind != SD_FAULT_EXIT && f->kind != SD_FAULT_KILL))
		return 0;
	if (f->iter >= 0 && f->iter < entries)
		return 0;
	snprintf(err, errlen, "iter=%ld never fires: kind=%s acts before gemm "
		 "entry iter + 1, and this sweep has entries 1 to %ld; give "
		 "iter=0 to %ld", f->iter, sd_name_of(kind_names, f->kind),
		 entries, entries - 1);
	return 1;
}

int sd_fault_at_start(const struct sd_fault *f, int rank)
{
	return f->at_start && !f->fired && f->rank == rank &&
	       (f->kind == SD_FAULT_EXIT || f->kind == SD_FAULT_KILL);
}

int sd_fault_here(const struct sd_fault *f, int rank, enum sd_op op,
		  uint64_t size, int in_place)
{
	return f->kind != SD_FAULT_NONE && !f->fired && !f->at_start &&
	       f->rank == rank &&
	       (f->op < 0 || f->op == (int)op) &&
	       (f->size == 0 || f->size == size) &&
	       (f->in_place < 0 || f->in_place == in_place);
}

void sd_fault_delay(const struct sd_fault *f)
{
	struct timespec ts = { f->delay_us / 1000000,
			       (f->delay_us % 1000000) * 1000 };
	while (nanosleep(&ts, &ts) != 0)
		;
}

void sd_fault_act(struct sd_fault *f)
{
	f->fired = 1;
	switch (f->kind) {
	case SD_FAULT_STALL:
		for (;;)
			sleep(3600);
	case SD_FAULT_EXIT:
		if (f->exit_fn)
			f->exit_fn(f->code);
		break;
	case SD_FAULT_KILL:
		raise(SIGKILL);
		for (;;)
			pause();
	default:
		break;
	}
}
