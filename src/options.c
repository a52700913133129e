/*
 * options.c - defaults of the options of `shakedown run` (see options.h).
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "options.h"

void sd_run_options_init(struct sd_run_options *o)
{
	memset(o, 0, sizeof(*o));
	o->backend = "gloo";
	o->min_bytes = 1024;
	o->max_bytes = 16u << 20;
	o->step_factor = 4;
	o->iters = 10;
	o->warmup = 3;
	o->check_passes = 1;
	o->combine = SD_COMBINE_AVG;
	o->in_place = 1;
	o->timeout_s = 60;
	o->format = SD_FORMAT_TABLE;
	o->progress = isatty(STDERR_FILENO);
}
