/*
 * envvars.c - the table of shakedown's environment variables and the
 * checks it drives (see envvars.h).  A value that is refused is refused
 * before any rank starts (src/main.c), never found bad half-way through
 * a run, when all that is left is a warning.
 */
#include "config.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "envvars.h"
#include "fault.h"
#include "names.h"
#include "upload/upload.h"
#include "util.h"

#define SECS(name, max, ex)                                                  \
	{ name, SD_ENV_SECONDS, 0, max, "seconds, a number above 0 and at "   \
	  "most " #max, ex, 0 }

/* name, kind, min, max, range (as the man page says it), example, flags */
const struct sd_env_var sd_env_vars[] = {
	{ "SHAKEDOWN_PLUGIN_DIR", SD_ENV_ANY, 0, 0,
	  "colon-separated directories (missing ones are skipped)", "", 0 },
	{ "SHAKEDOWN_PLAN_DIR", SD_ENV_ANY, 0, 0,
	  "colon-separated directories (missing ones are skipped)", "", 0 },
	{ "SHAKEDOWN_IFACE", SD_ENV_IFACE, 0, 0,
	  "a network interface name, 1 to 15 characters", "eth0", 0 },
	{ "SHAKEDOWN_GLOO_IFACE", SD_ENV_IFACE, 0, 0,
	  "a network interface name, 1 to 15 characters", "eth0", 0 },
	{ "SHAKEDOWN_CTRL_ADDR", SD_ENV_IPV4, 0, 0,
	  "a dotted IPv4 address", "10.0.0.1", 0 },
	{ "SHAKEDOWN_FAULT", SD_ENV_FAULT, 0, 0,
	  "a fault specification (see FAULT INJECTION)", "rank=1,kind=exit",
	  0 },
	{ "SHAKEDOWN_NCCL_FAULT", SD_ENV_NCCL_HANG, 0, 0, "hang=RANK",
	  "hang=0", 0 },
	{ "SHAKEDOWN_BLAS", SD_ENV_ANY, 0, 0,
	  "a library name or path for dlopen, or none", "none", 0 },
	{ "SHAKEDOWN_SCONTROL", SD_ENV_PROGRAM, 0, 0,
	  "a program on PATH, or the path of an executable",
	  "/usr/bin/scontrol", 0 },
	{ "SHAKEDOWN_LOCAL_FD", SD_ENV_INT, 0, 1 << 20,
	  "set by --local only", "", SD_ENV_INTERNAL },
	{ "SHAKEDOWN_LOCAL_RANK", SD_ENV_INT, 0, 1 << 20,
	  "set by --local only", "", SD_ENV_INTERNAL },
	{ "SHAKEDOWN_LOCAL_SIZE", SD_ENV_INT, 1, 1 << 20,
	  "set by --local only", "", SD_ENV_INTERNAL },
	{ "SHAKEDOWN_UPLOAD_URL", SD_ENV_URL, 0, 0,
	  "an http:// or https:// URL", "https://collector.example/reports",
	  0 },
	{ "SHAKEDOWN_TOKEN_FILE", SD_ENV_FILE, 0, 0, "a readable file", "",
	  0 },
	{ "SHAKEDOWN_TOKEN", SD_ENV_ANY, 0, 0, "the token itself", "",
	  SD_ENV_SECRET },
	{ "SHAKEDOWN_CACERT", SD_ENV_FILE, 0, 0, "a readable PEM file", "",
	  0 },
	SECS("SHAKEDOWN_UPLOAD_CONNECT_TIMEOUT", 3600, "10"),
	SECS("SHAKEDOWN_UPLOAD_TIMEOUT", 86400, "60"),
	{ "SHAKEDOWN_UPLOAD_ATTEMPTS", SD_ENV_INT, 1, 100,
	  "a whole number from 1 to 100", "4", 0 },
	SECS("SHAKEDOWN_UPLOAD_BACKOFF", 3600, "1"),
	SECS("SHAKEDOWN_UPLOAD_BACKOFF_MAX", 3600, "30"),
	{ "SHAKEDOWN_DB", SD_ENV_ANY, 0, 0, "a file path, or none",
	  "shakedown.db", 0 },
	{ "SHAKEDOWN_DB_BUSY_TIMEOUT_MS", SD_ENV_INT, 0, 3600000,
	  "milliseconds, a whole number from 0 to 3600000", "15000", 0 },
	{ "SHAKEDOWN_DB_JOURNAL", SD_ENV_CHOICE, 0, 0, "delete", "delete",
	  0 },
	/* read by the sbatch scripts, not by shakedown */
	{ "SHAKEDOWN", SD_ENV_ANY, 0, 0, "the shakedown binary", "", 0 },
	{ "SHAKEDOWN_PLAN", SD_ENV_ANY, 0, 0, "a plan file or name", "", 0 },
	{ "SHAKEDOWN_BACKEND", SD_ENV_ANY, 0, 0, "a backend name", "", 0 },
	{ NULL, SD_ENV_ANY, 0, 0, NULL, NULL, 0 }
};

const struct sd_env_var *sd_env_find(const char *name)
{
	for (const struct sd_env_var *v = sd_env_vars; v->name; v++)
		if (strcmp(v->name, name) == 0)
			return v;
	return NULL;
}

static int is_choice(const char *choices, const char *value)
{
	size_t n = strlen(value);
	for (const char *p = choices; *p;) {
		size_t w = strcspn(p, "|");
		if (w == n && strncmp(p, value, n) == 0)
			return 1;
		p += w + (p[w] == '|');
	}
	return 0;
}

static int is_program(const char *value)
{
	if (strchr(value, '/'))
		return access(value, X_OK) == 0;
	const char *path = getenv("PATH");
	char buf[4096];
	for (const char *p = path ? path : ""; *p;) {
		size_t w = strcspn(p, ":");
		snprintf(buf, sizeof(buf), "%.*s/%s", (int)w, p, value);
		if (w && access(buf, X_OK) == 0)
			return 1;
		p += w + (p[w] == ':');
	}
	return 0;
}

static int is_iface(const char *value)
{
	size_t n = strlen(value);
	if (n < 1 || n >= IF_NAMESIZE)
		return 0;
	for (const char *c = value; *c; c++)
		if (*c == '/' || *c == ':' || isspace((unsigned char)*c) ||
		    !isprint((unsigned char)*c))
			return 0;
	return 1;
}

static int is_file(const char *value, const char **why)
{
	struct stat st;
	if (stat(value, &st) || access(value, R_OK)) {
		*why = errno == ENOENT ? "no such file" : "cannot be read";
		return 0;
	}
	*why = "not a regular file";
	return S_ISREG(st.st_mode);
}

/* Whether value fits v; *why may say more (a parser's own words). */
static int fits(const struct sd_env_var *v, const char *value, char *why,
		size_t whylen)
{
	long n;
	double s;
	const char *w = NULL;
	struct in_addr a;
	struct sd_fault f;
	int ok = 1;
	switch (v->kind) {
	case SD_ENV_ANY: break;
	case SD_ENV_INT:
		ok = !sd_parse_int(value, (long)v->min, (long)v->max, &n);
		break;
	case SD_ENV_SECONDS:
		ok = !sd_parse_seconds(value, &s) && s > v->min && s <= v->max;
		break;
	case SD_ENV_CHOICE: ok = is_choice(v->range, value); break;
	case SD_ENV_FILE:
		ok = is_file(value, &w);
		break;
	case SD_ENV_PROGRAM: ok = is_program(value); break;
	case SD_ENV_IFACE: ok = is_iface(value); break;
	case SD_ENV_IPV4: ok = inet_pton(AF_INET, value, &a) == 1; break;
	case SD_ENV_URL: ok = !sd_upload_check_url(value, why, whylen); break;
	case SD_ENV_FAULT: ok = !sd_fault_parse(value, &f, why, whylen); break;
	case SD_ENV_NCCL_HANG:
		ok = strncmp(value, "hang=", 5) == 0 &&
		     !sd_parse_int(value + 5, 0, 1 << 20, &n);
		break;
	}
	if (!ok && w)
		snprintf(why, whylen, "%s", w);
	return ok;
}

int sd_env_check(const struct sd_env_var *v, const char *value, char *err,
		 size_t errlen)
{
	char why[512] = "";
	if (!value || !*value || fits(v, value, why, sizeof(why)))
		return SD_OK;
	if (v->kind == SD_ENV_FAULT || v->kind == SD_ENV_URL) {
		/* the parser's words name the value and the fix */
		snprintf(err, errlen, "%s%s%s; or unset %s",
			 v->kind == SD_ENV_URL ? v->name : "",
			 v->kind == SD_ENV_URL ? ": " : "", why, v->name);
		return SD_ERR_INVALID;
	}
	char shown[160];
	snprintf(shown, sizeof(shown), "%s", value);
	if (v->flags & SD_ENV_SECRET)
		snprintf(shown, sizeof(shown), "(not shown)");
	if (v->flags & SD_ENV_INTERNAL) {
		snprintf(err, errlen, "%s='%s': not a number from %.0f to %.0f; "
			 "it is %s: unset it", v->name, shown, v->min, v->max,
			 v->range);
		return SD_ERR_INVALID;
	}
	snprintf(err, errlen, "%s='%s': %s; it takes %s: set it to such a "
		 "value%s%s%s, or unset it for the default", v->name, shown,
		 *why ? why : "not accepted", v->range,
		 *v->example ? " (" : "", v->example, *v->example ? ")" : "");
	return SD_ERR_INVALID;
}

int sd_env_check_all(char *err, size_t errlen)
{
	for (const struct sd_env_var *v = sd_env_vars; v->name; v++)
		if (sd_env_check(v, getenv(v->name), err, errlen))
			return SD_ERR_INVALID;
	return SD_OK;
}

static const struct sd_env_var *read_var(const char *name,
					 enum sd_env_kind kind,
					 const char **value, char *err,
					 size_t errlen)
{
	const struct sd_env_var *v = sd_env_find(name);
	if (!v || v->kind != kind) {
		snprintf(err, errlen, "%s: not a variable of this kind in the "
			 "table (lib/envvars.c)", name);
		return NULL;
	}
	*value = getenv(name);
	return v;
}

int sd_env_seconds(const char *name, double *out, char *err, size_t errlen)
{
	const char *value;
	const struct sd_env_var *v = read_var(name, SD_ENV_SECONDS, &value,
					      err, errlen);
	if (!v)
		return SD_ERR_INVALID;
	if (!value || !*value)
		return SD_OK;
	if (sd_env_check(v, value, err, errlen))
		return SD_ERR_INVALID;
	sd_parse_seconds(value, out);
	return SD_OK;
}

int sd_env_long(const char *name, long *out, char *err, size_t errlen)
{
	const char *value;
	const struct sd_env_var *v = read_var(name, SD_ENV_INT, &value, err,
					      errlen);
	if (!v)
		return SD_ERR_INVALID;
	if (!value || !*value)
		return SD_OK;
	if (sd_env_check(v, value, err, errlen))
		return SD_ERR_INVALID;
	sd_parse_int(value, (long)v->min, (long)v->max, out);
	return SD_OK;
}
