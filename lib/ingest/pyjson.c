/*
 * pyjson.c - Python's json.dumps output read with Jansson (pyjson.h): the
 * bare NaN / Infinity / -Infinity that json.dumps writes for non-finite
 * floats (Python Lib/json/encoder.py, floatstr: 'NaN', 'Infinity',
 * '-Infinity') turned into same-length strings before parsing.
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/pyjson.h"

static const struct {
	const char *token, *as;
	double value;
} nonfinite[] = {
	{ "-Infinity", "\"-Infini\"", -INFINITY },
	{ "Infinity", "\"+Infin\"", INFINITY },
	{ "NaN", "\"N\"", NAN },
};

json_t *sd_pyjson_load(const char *text, size_t len, json_error_t *e)
{
	char *copy = malloc(len + 1);
	if (!copy) {
		memset(e, 0, sizeof(*e));
		strncpy(e->text, "out of memory", sizeof(e->text) - 1);
		return NULL;
	}
	memcpy(copy, text, len);
	copy[len] = '\0';
	int in_string = 0;
	for (size_t i = 0; i < len; i++) {
		char c = copy[i];
		if (in_string) {
			if (c == '\\' && i + 1 < len)
				i++;
			else if (c == '"')
				in_string = 0;
			continue;
		}
		if (c == '"') {
			in_string = 1;
			continue;
		}
		for (size_t k = 0; k < sizeof(nonfinite) / sizeof(nonfinite[0]);
		     k++) {
			size_t n = strlen(nonfinite[k].token);
			if (i + n <= len &&
			    !memcmp(copy + i, nonfinite[k].token, n)) {
				memcpy(copy + i, nonfinite[k].as, n);
				i += n - 1;
				break;
			}
		}
	}
	json_t *v = json_loadb(copy, len, 0, e);
	free(copy);
	return v;
}

int sd_pyjson_number(const json_t *v, double *out)
{
	if (json_is_number(v)) {
		*out = json_number_value(v);
		return 1;
	}
	if (json_is_string(v)) {
		const char *s = json_string_value(v);
		for (size_t k = 0; k < sizeof(nonfinite) / sizeof(nonfinite[0]);
		     k++) {
			size_t n = strlen(nonfinite[k].as);
			if (strlen(s) == n - 2 &&
			    !memcmp(s, nonfinite[k].as + 1, n - 2)) {
				*out = nonfinite[k].value;
				return 1;
			}
		}
	}
	return 0;
}
