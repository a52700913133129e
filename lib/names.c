/*
 * names.c - parsing of sizes and names (see names.h).
 */
#include "config.h"

#include <ctype.h>
#include <stdio.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "names.h"
#include "shakedown/coll.h"

int sd_parse_size(const char *s, uint64_t *out)
{
	if (!s || !isdigit((unsigned char)s[0]))
		return -1;
	errno = 0;
	char *end;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno)
		return -1;
	int shift = 0;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	case 't': case 'T': shift = 40; end++; break;
	default: break;
	}
	if (*end == 'B' || *end == 'b')
		end++;
	if (*end != '\0')
		return -1;
	if (shift && v > (UINT64_MAX >> shift))
		return -1;
	*out = (uint64_t)v << shift;
	return 0;
}

int sd_parse_int(const char *s, long min, long max, long *out)
{
	if (!s || !*s)
		return -1;
	errno = 0;
	char *end;
	long v = strtol(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

int sd_parse_seconds(const char *s, double *out)
{
	if (!s || !*s || !(isdigit((unsigned char)*s) || *s == '.'))
		return -1;
	errno = 0;
	char *end;
	double v = strtod(s, &end);
	if (errno || *end || !(v > 0) || v > 1e7)
		return -1;
	*out = v;
	return 0;
}

int sd_parse_duration_ms(const char *s, int *ms)
{
	double v;
	if (sd_parse_seconds(s, &v) || v > 1e6)
		return -1;
	*ms = v * 1000 < 1 ? 1 : (int)(v * 1000 + 0.5);
	return 0;
}

const struct sd_name_row sd_dtype_names[] = {
	{ "int8", SD_INT8 }, { "uint8", SD_UINT8 }, { "int32", SD_INT32 },
	{ "uint32", SD_UINT32 }, { "int64", SD_INT64 },
	{ "uint64", SD_UINT64 }, { "float16", SD_FLOAT16 },
	{ "bfloat16", SD_BFLOAT16 }, { "float32", SD_FLOAT32 },
	{ "float64", SD_FLOAT64 }, { "fp8_e4m3", SD_FP8_E4M3 },
	{ "fp8_e5m2", SD_FP8_E5M2 },
	/* aliases, as nccl-tests and PyTorch spell them */
	{ "char", SD_INT8 }, { "int", SD_INT32 }, { "half", SD_FLOAT16 },
	{ "fp16", SD_FLOAT16 }, { "bf16", SD_BFLOAT16 }, { "float", SD_FLOAT32 },
	{ "fp32", SD_FLOAT32 }, { "double", SD_FLOAT64 }, { "fp64", SD_FLOAT64 },
	{ "e4m3", SD_FP8_E4M3 }, { "e5m2", SD_FP8_E5M2 },
	{ "f8e4m3", SD_FP8_E4M3 }, { "f8e5m2", SD_FP8_E5M2 },
	{ NULL, 0 }
};

const struct sd_name_row sd_redop_names[] = {
	{ "sum", SD_SUM }, { "prod", SD_PROD }, { "min", SD_MIN },
	{ "max", SD_MAX }, { "avg", SD_AVG }, { "product", SD_PROD },
	{ "mean", SD_AVG }, { NULL, 0 }
};

/* The names of the operations are their rows' in shakedown/coll.h. */
#define OP_NAME_ROW(op, name, ...) { name, op },
const struct sd_name_row sd_op_names[] = {
	SD_COLLECTIVES(OP_NAME_ROW) { NULL, 0 }
};
#undef OP_NAME_ROW

/* How close two names are: 1000 when they differ only in case, '_' and
 * '-'; else minus the edit distance (insertions, deletions, substitutions
 * and swaps of neighbours: "bsubw" is one from "busbw"), or a very low
 * score when they are too far apart to be a slip of the fingers. */
static int closeness(const char *a, const char *b)
{
	char x[32] = "", y[32] = "";
	size_t i = 0, j = 0;
	for (; *a && i < sizeof(x) - 1; a++)
		if (*a != '_' && *a != '-')
			x[i++] = (char)tolower((unsigned char)*a);
	for (; *b && j < sizeof(y) - 1; b++)
		if (*b != '_' && *b != '-')
			y[j++] = (char)tolower((unsigned char)*b);
	x[i] = y[j] = '\0';
	if (strcmp(x, y) == 0)
		return 1000;
	int d[33][33];
	for (size_t p = 0; p <= i; p++)
		d[p][0] = (int)p;
	for (size_t q = 0; q <= j; q++)
		d[0][q] = (int)q;
	for (size_t p = 1; p <= i; p++)
		for (size_t q = 1; q <= j; q++) {
			int best = d[p - 1][q - 1] + (x[p - 1] != y[q - 1]);
			if (d[p - 1][q] + 1 < best)
				best = d[p - 1][q] + 1;
			if (d[p][q - 1] + 1 < best)
				best = d[p][q - 1] + 1;
			if (p > 1 && q > 1 && x[p - 1] == y[q - 2] &&
			    x[p - 2] == y[q - 1] && d[p - 2][q - 2] + 1 < best)
				best = d[p - 2][q - 2] + 1;
			d[p][q] = best;
		}
	/* a slip: at most a third of the longer name, and at most 3 */
	int most = (int)((i > j ? i : j) / 3);
	most = most < 1 ? 1 : most > 3 ? 3 : most;
	return d[i][j] <= most ? -d[i][j] : -1000;
}

int sd_name_lookup(const struct sd_name_row *rows, const char *name, int *out,
		   const char **hint)
{
	const char *best = NULL;
	int best_score = -100;
	if (hint)
		*hint = NULL;
	for (const struct sd_name_row *r = rows; r->name; r++) {
		if (strcmp(r->name, name) == 0) {
			*out = r->value;
			return 0;
		}
		int s = closeness(name, r->name);
		if (s > best_score) {
			best_score = s;
			best = r->name;
		}
	}
	/* suggest the canonical spelling of the closest alias */
	if (best && hint) {
		int v = -1;
		for (const struct sd_name_row *r = rows; r->name; r++)
			if (strcmp(r->name, best) == 0)
				v = r->value;
		for (const struct sd_name_row *r = rows; r->name; r++)
			if (r->value == v) {
				*hint = r->name;
				break;
			}
	}
	return -1;
}

const char *sd_name_of(const struct sd_name_row *rows, int value)
{
	for (const struct sd_name_row *r = rows; r->name; r++)
		if (r->value == value)
			return r->name;
	return "?";
}

const char *sd_dtype_name(enum sd_dtype t)
{
	return sd_name_of(sd_dtype_names, t);
}

/* nccl-tests' test_typenames (src/common.cu, nccl-tests 2.19): what its
 * table's type column says, which readers of that table match. */
static const struct sd_name_row nccl_type_names[] = {
	{ "int8", SD_INT8 }, { "uint8", SD_UINT8 }, { "int32", SD_INT32 },
	{ "uint32", SD_UINT32 }, { "int64", SD_INT64 },
	{ "uint64", SD_UINT64 }, { "half", SD_FLOAT16 },
	{ "float", SD_FLOAT32 }, { "double", SD_FLOAT64 },
	{ "bfloat16", SD_BFLOAT16 }, { "f8e4m3", SD_FP8_E4M3 },
	{ "f8e5m2", SD_FP8_E5M2 }, { NULL, 0 }
};

const char *sd_dtype_nccl_name(enum sd_dtype t)
{
	return sd_name_of(nccl_type_names, t);
}

const char *sd_redop_name(enum sd_redop r)
{
	return sd_name_of(sd_redop_names, r);
}

const char *sd_op_name(enum sd_op op)
{
	return sd_name_of(sd_op_names, op);
}

int sd_name_join(const struct sd_name_row *rows, uint32_t mask, int count,
		 const char *sep, char *buf, size_t len)
{
	size_t used = 0;
	buf[0] = '\0';
	for (int v = 0; v < count; v++) {
		if (!(mask & (1u << v)))
			continue;
		int n = snprintf(buf + used, len - used, "%s%s",
				 used ? sep : "", sd_name_of(rows, v));
		if (n < 0 || (size_t)n >= len - used)
			return -1;
		used += (size_t)n;
	}
	return 0;
}

/* The parsers of the enumerations whose tables are above. */
#define FROM_NAME(fn, type, rows)                                            \
	int fn(const char *name, type *out, const char **hint)               \
	{                                                                    \
		int v;                                                       \
		if (sd_name_lookup(rows, name, &v, hint))                    \
			return -1;                                           \
		*out = (type)v;                                              \
		return 0;                                                    \
	}
FROM_NAME(sd_dtype_from_name, enum sd_dtype, sd_dtype_names)
FROM_NAME(sd_redop_from_name, enum sd_redop, sd_redop_names)
FROM_NAME(sd_op_from_name, enum sd_op, sd_op_names)
#undef FROM_NAME

int sd_combine_from_name(const char *name, enum sd_combine *out)
{
	static const struct sd_name_row rows[] = {
		{ "rank0", SD_COMBINE_RANK0 }, { "avg", SD_COMBINE_AVG },
		{ "min", SD_COMBINE_MIN }, { "max", SD_COMBINE_MAX },
		{ "0", SD_COMBINE_RANK0 }, { "1", SD_COMBINE_AVG },
		{ "2", SD_COMBINE_MIN }, { "3", SD_COMBINE_MAX }, { NULL, 0 }
	};
	int v;
	if (sd_name_lookup(rows, name, &v, NULL))
		return -1;
	*out = (enum sd_combine)v;
	return 0;
}

int sd_parse_amount(const char *s, double max, int decimal_suffix,
		    double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s)
		return -1;
	if (decimal_suffix)
		switch (*end) {
		case 'k': case 'K': v *= 1e3; end++; break;
		case 'm': case 'M': v *= 1e6; end++; break;
		case 'b': case 'B': case 'g': case 'G': v *= 1e9; end++; break;
		case 't': case 'T': v *= 1e12; end++; break;
		default: break;
		}
	if (*end || !isfinite(v) || !(v > 0) || v > max)
		return -1;
	*out = v;
	return 0;
}
