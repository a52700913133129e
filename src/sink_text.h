/*
 * sink_text.h - printers: the nccl-tests table, the DeepSpeed benchmark's
 * table, and JSON lines.  All write to one stream (stdout on rank 0).
 */
#ifndef SD_SINK_TEXT_H
#define SD_SINK_TEXT_H

#include <stdio.h>
#include "options.h"
#include "sink.h"

/* Open a printer of format fmt writing to out; ds_raw (only for
 * SD_FORMAT_DEEPSPEED) is DeepSpeed's --raw: bare bytes and
 * microseconds.  Returns SD_OK or SD_ERR_NOMEM.  The sink's destroy()
 * frees it (not out). */
int sd_text_sink_open(enum sd_format fmt, int ds_raw, FILE *out,
		      struct sd_sink *s);

#endif
