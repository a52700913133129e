/*
 * options.c - defaults of the options of `shakedown run` (see options.h).
 */
#include "config.h"

#include <string.h>
#include <unistd.h>

#include "options.h"

void sd_run_options_init(struct sd_run_options *o)
{
	memset(o, 0, sizeof(*o));
	o->backend = "gloo";
	o->format = SD_FORMAT_TABLE;
	o->progress = isatty(STDERR_FILENO);
}
