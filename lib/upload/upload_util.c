/*
 * upload_util.c - the parts of report upload that need no libcurl: the
 * configuration and its environment variables, the bearer token (found,
 * checked, wiped) and scrubbing it from messages, URL checks.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "shakedown/backend.h"
#include "envvars.h"
#include "names.h"
#include "upload/upload.h"
#include "util.h"

#define TOKEN_MAX 4096

void sd_upload_config_init(struct sd_upload_config *c)
{
	memset(c, 0, sizeof(*c));
	c->connect_timeout_s = SD_UPLOAD_CONNECT_TIMEOUT_S;
	c->timeout_s = SD_UPLOAD_TIMEOUT_S;
	c->max_attempts = SD_UPLOAD_ATTEMPTS;
	c->backoff_s = SD_UPLOAD_BACKOFF_S;
	c->backoff_max_s = SD_UPLOAD_BACKOFF_MAX_S;
}

int sd_upload_config_from_env(struct sd_upload_config *c, char *err,
			      size_t errlen)
{
	int rc;
	long attempts = c->max_attempts;
	const char *v = getenv("SHAKEDOWN_CACERT");
	if (v && *v)
		c->cacert = v;
	if ((rc = sd_env_seconds("SHAKEDOWN_UPLOAD_CONNECT_TIMEOUT",
				 &c->connect_timeout_s, err, errlen)) ||
	    (rc = sd_env_seconds("SHAKEDOWN_UPLOAD_TIMEOUT", &c->timeout_s,
				 err, errlen)) ||
	    (rc = sd_env_seconds("SHAKEDOWN_UPLOAD_BACKOFF", &c->backoff_s,
				 err, errlen)) ||
	    (rc = sd_env_seconds("SHAKEDOWN_UPLOAD_BACKOFF_MAX",
				 &c->backoff_max_s, err, errlen)) ||
	    (rc = sd_env_long("SHAKEDOWN_UPLOAD_ATTEMPTS", &attempts, err,
			      errlen)))
		return rc;
	c->max_attempts = (int)attempts;
	return SD_OK;
}

/* Read the first line of path into a new string (at most TOKEN_MAX). */
static int read_token_file(const char *path, char **out, char *err,
			   size_t errlen)
{
	int rc = SD_OK;
	char *buf = NULL;
	FILE *f = fopen(path, "re");
	if (!f) {
		snprintf(err, errlen, "token file %s: %s; pass --token-file "
			 "with a readable file", path, strerror(errno));
		return SD_ERR_IO;
	}
	struct stat st;
	if (fstat(fileno(f), &st) == 0 && !S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "token file %s: not a regular file; "
			 "pass --token-file with a file holding the token", path);
		rc = SD_ERR_IO;
		goto out;
	}
	buf = calloc(1, TOKEN_MAX + 2);
	if (!buf) {
		rc = SD_ERR_NOMEM;
		snprintf(err, errlen, "out of memory reading token file");
		goto out;
	}
	size_t n = fread(buf, 1, TOKEN_MAX + 1, f);
	if (ferror(f)) {
		snprintf(err, errlen, "token file %s: %s", path,
			 strerror(errno));
		rc = SD_ERR_IO;
		goto out;
	}
	if (n > TOKEN_MAX) {
		snprintf(err, errlen, "token file %s: longer than %d bytes; "
			 "it should hold only the token", path, TOKEN_MAX);
		rc = SD_ERR_INVALID;
		goto out;
	}
	buf[n] = '\0';
	*out = buf;
	buf = NULL;
out:
	if (buf) {
		explicit_bzero(buf, TOKEN_MAX + 2);
		free(buf);
	}
	fclose(f);
	return rc;
}

/* Trim white space around the first line of s; check what is left. */
static int clean_token(char *s, const char *where, char *err, size_t errlen)
{
	char *p = s;
	while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
		p++;
	size_t n = strcspn(p, "\r\n");
	while (n > 0 && (p[n - 1] == ' ' || p[n - 1] == '\t'))
		n--;
	memmove(s, p, n);
	memset(s + n, 0, strlen(s + n));
	if (n == 0) {
		snprintf(err, errlen, "%s: the token is empty; put the token "
			 "on the first line", where);
		return SD_ERR_INVALID;
	}
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s[i];
		if (ch < 0x21 || ch > 0x7e) {
			snprintf(err, errlen, "%s: the token contains a space "
				 "or a character an HTTP header cannot carry; "
				 "put only the token on the first line", where);
			return SD_ERR_INVALID;
		}
	}
	return SD_OK;
}

int sd_upload_token_load(const char *token_file, char **token, char *err,
			 size_t errlen)
{
	int rc;
	char *t = NULL;
	char where[512];
	*token = NULL;
	if (!token_file || !*token_file) {
		const char *f = getenv("SHAKEDOWN_TOKEN_FILE");
		if (f && *f)
			token_file = f;
	}
	if (token_file) {
		rc = read_token_file(token_file, &t, err, errlen);
		if (rc)
			return rc;
		snprintf(where, sizeof(where), "token file %s", token_file);
	} else {
		const char *v = getenv("SHAKEDOWN_TOKEN");
		if (!v)
			return SD_OK;
		t = strdup(v);
		if (!t) {
			snprintf(err, errlen, "out of memory");
			return SD_ERR_NOMEM;
		}
		snprintf(where, sizeof(where), "SHAKEDOWN_TOKEN");
	}
	rc = clean_token(t, where, err, errlen);
	if (rc) {
		sd_upload_token_free(t);
		return rc;
	}
	*token = t;
	return SD_OK;
}

void sd_upload_token_free(char *token)
{
	if (!token)
		return;
	explicit_bzero(token, strlen(token));
	free(token);
}

void sd_upload_scrub(char *s, const char *secret)
{
	if (!s || !secret || !*secret)
		return;
	static const char mask[] = "***";
	size_t sl = strlen(secret), ml = sizeof(mask) - 1;
	char *p;
	while ((p = strstr(s, secret)) != NULL) {
		/* the mask is never longer than a secret worth masking */
		if (sl >= ml) {
			memcpy(p, mask, ml);
			memmove(p + ml, p + sl, strlen(p + sl) + 1);
		} else {
			memset(p, '*', sl);
		}
	}
}

int sd_upload_check_url(const char *url, char *err, size_t errlen)
{
	const char *rest;
	if (!url || !*url) {
		snprintf(err, errlen, "no upload URL; pass --url URL or set "
			 "SHAKEDOWN_UPLOAD_URL");
		return SD_ERR_INVALID;
	}
	if (strncmp(url, "https://", 8) == 0)
		rest = url + 8;
	else if (strncmp(url, "http://", 7) == 0)
		rest = url + 7;
	else {
		snprintf(err, errlen, "upload URL '%.200s': not an http:// or "
			 "https:// URL; pass the collector's full URL", url);
		return SD_ERR_INVALID;
	}
	for (const unsigned char *p = (const unsigned char *)url; *p; p++)
		if (*p <= 0x20 || *p == 0x7f) {
			snprintf(err, errlen, "upload URL: contains a space or "
				 "control character; percent-encode it");
			return SD_ERR_INVALID;
		}
	size_t host_len = strcspn(rest, "/?#");
	if (host_len == 0) {
		snprintf(err, errlen, "upload URL '%.200s': no host name", url);
		return SD_ERR_INVALID;
	}
	if (memchr(rest, '@', host_len)) {
		/* do not echo it: the part before '@' is a password */
		snprintf(err, errlen, "upload URL: contains user credentials "
			 "(user:password@); remove them and put a bearer token "
			 "in --token-file instead");
		return SD_ERR_INVALID;
	}
	return SD_OK;
}
