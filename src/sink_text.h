/*
 * sink_text.h - printers: the nccl-tests table, the DeepSpeed benchmark's
 * table, and JSON lines.  All write to one stream (stdout on rank 0).
 */
#ifndef SD_SINK_TEXT_H
#define SD_SINK_TEXT_H

#include <stdio.h>
#include "options.h"
#include "sink.h"

/* Open a printer of format fmt writing to out.  Returns SD_OK or
 * SD_ERR_NOMEM.  The sink's destroy() frees it (not out). */
int sd_text_sink_open(enum sd_format fmt, FILE *out, struct sd_sink *s);

/* Format a duration the way the DeepSpeed benchmark does: "12.34 us",
 * "1.50 ms", "2.00 s". */
void sd_format_duration(double us, char *buf, size_t len);

#endif
