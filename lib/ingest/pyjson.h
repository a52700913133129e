/*
 * pyjson.h - reading the JSON that Python's json.dumps writes, with
 * Jansson: json.dumps writes a NaN or infinite float as the bare tokens
 * NaN, Infinity and -Infinity (Python's json module, allow_nan=True by
 * default), which JSON and Jansson reject.  A diverged loss is exactly
 * such a value and must come through as a NaN loss (a verdict later), not
 * a parse error.  Internal to lib/ingest (hf.c, llamafactory.c).
 */
#ifndef SD_INGEST_PYJSON_H
#define SD_INGEST_PYJSON_H

#include <stddef.h>

#include <jansson.h>

/*
 * Parse len bytes as one JSON value (JSON_DECODE_ANY off: an object or an
 * array), after rewriting the bare NaN, Infinity and -Infinity outside
 * strings into strings of the same length ("N", "+Infin", "-Infini"), so
 * that Jansson's line and column in *e stay those of the file.  A new
 * reference (json_decref it), or NULL with *e filled.
 */
json_t *sd_pyjson_load(const char *text, size_t len, json_error_t *e);

/* A JSON number, or one of the strings above: 1 and *out, else 0. */
int sd_pyjson_number(const json_t *v, double *out);

#endif
