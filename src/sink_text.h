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

/* The width of --format short's lines, and of the run's summary in every
 * format. */
#define SD_SHORT_COLS 80

/* The width of the nccl-tests table's rows: a terminal narrower than
 * this gets --format short when no format was asked for. */
#define SD_TABLE_COLS 118

/* Print text as comment lines of at most width columns: "# " and the
 * text, broken between words (sd_wrap_len), the continuation lines
 * indented ("#   "). */
void sd_text_comment(FILE *out, const char *text, int width);

#endif
