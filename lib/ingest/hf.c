/* hf.c - placeholder until the hf parser lands (same session); never
 * shipped: the parser's own file replaces this one. */
#include "config.h"

#include <stdio.h>

#include "ingest/ingest.h"
#include "shakedown/backend.h"

int sd_ingest_parse_hf(const char *path, const char *text, size_t len,
		       struct sd_ingest_log *out, char *err, size_t errlen)
{
	(void)text;
	(void)len;
	(void)out;
	snprintf(err, errlen, "%s: the hf parser is not built yet", path);
	return SD_ERR_INVALID;
}

int sd_ingest_sniff_hf(const char *text, size_t len)
{
	(void)text;
	(void)len;
	return 0;
}
