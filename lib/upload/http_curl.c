/*
 * http_curl.c - POST one report with libcurl, retrying what can succeed
 * later (network errors, timeouts, 5xx, 408, 429 with Retry-After) with
 * exponential backoff, and giving up at once on what cannot (other 4xx,
 * redirects, certificate errors).
 *
 * TLS verification is always on (peer and host name); a private CA comes
 * in through --cacert.  Redirects are not followed, so the Authorization
 * header never travels to a host the user did not name.  libcurl's verbose
 * output is never enabled: it would print the Authorization header.
 */
#include "config.h"

#include <curl/curl.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "shakedown/backend.h"
#include "upload/upload.h"
#include "util.h"

#define REPLY_KEEP 256 /* bytes of a server's reply kept for messages */

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_rc;

static void curl_init(void)
{
	curl_init_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

int sd_upload_available(char *err, size_t errlen)
{
	return 1;
}

/* What one attempt saw. */
struct attempt {
	char reply[REPLY_KEEP + 1];
	size_t reply_len;
	double retry_after_s; /* < 0: no Retry-After header */
};

static size_t on_body(char *data, size_t size, size_t n, void *arg)
{
	struct attempt *a = arg;
	size_t len = size * n, room = REPLY_KEEP - a->reply_len;
	size_t take = len < room ? len : room;
	memcpy(a->reply + a->reply_len, data, take);
	a->reply_len += take;
	a->reply[a->reply_len] = '\0';
	return len;
}

static size_t on_header(char *data, size_t size, size_t n, void *arg)
{
	struct attempt *a = arg;
	size_t len = size * n;
	static const char name[] = "retry-after:";
	if (len > sizeof(name) - 1 && len < 200 &&
	    strncasecmp(data, name, sizeof(name) - 1) == 0) {
		char v[200];
		memcpy(v, data + sizeof(name) - 1, len - (sizeof(name) - 1));
		v[len - (sizeof(name) - 1)] = '\0';
		v[strcspn(v, "\r\n")] = '\0';
		char *p = v + strspn(v, " \t"), *end;
		errno = 0;
		long secs = strtol(p, &end, 10);
		if (end != p && !errno && *end == '\0' && secs >= 0) {
			a->retry_after_s = (double)secs;
		} else {
			/* an HTTP date */
			time_t when = curl_getdate(p, NULL);
			if (when != (time_t)-1) {
				double d = difftime(when, time(NULL));
				a->retry_after_s = d > 0 ? d : 0;
			}
		}
	}
	return len;
}

/* Make a server's reply fit on one line of a message. */
static void one_line(char *s)
{
	for (char *p = s; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = ' ';
	size_t n = strlen(s);
	while (n > 0 && s[n - 1] == ' ')
		s[--n] = '\0';
}

static void sleep_s(double s)
{
	struct timespec ts;
	ts.tv_sec = (time_t)s;
	ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
}

static void logf_scrubbed(const struct sd_upload_config *c,
			  const char *token, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void logf_scrubbed(const struct sd_upload_config *c,
			  const char *token, const char *fmt, ...)
{
	if (!c->log)
		return;
	char line[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	sd_upload_scrub(line, token);
	c->log(c->log_arg, line);
}

/* Is a failed transfer (no HTTP answer) worth trying again? */
static int curl_retryable(CURLcode cc)
{
	switch (cc) {
	case CURLE_COULDNT_RESOLVE_PROXY:
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_COULDNT_CONNECT:
	case CURLE_OPERATION_TIMEDOUT:
	case CURLE_SEND_ERROR:
	case CURLE_RECV_ERROR:
	case CURLE_GOT_NOTHING:
	case CURLE_PARTIAL_FILE:
	case CURLE_SSL_CONNECT_ERROR:
	case CURLE_HTTP2:
	case CURLE_HTTP2_STREAM:
	case CURLE_WEIRD_SERVER_REPLY:
		return 1;
	default:
		return 0; /* certificates, bad options, out of memory */
	}
}

/* Explain a transfer error with the fix where there is one. */
static void explain_curl(CURLcode cc, const char *detail,
			 const struct sd_upload_config *c, char *out,
			 size_t len)
{
	const char *what = detail && *detail ? detail : curl_easy_strerror(cc);
	switch (cc) {
	case CURLE_PEER_FAILED_VERIFICATION:
	case CURLE_SSL_CACERT_BADFILE:
	case CURLE_SSL_CERTPROBLEM:
	case CURLE_SSL_ISSUER_ERROR:
		snprintf(out, len, "TLS certificate not accepted (%s); if the "
			 "server uses a private CA, pass --cacert FILE with "
			 "that CA%s", what,
			 c->cacert ? " (the one given did not verify it)" : "");
		break;
	case CURLE_OPERATION_TIMEDOUT:
		snprintf(out, len, "timed out (%s)", what);
		break;
	default:
		snprintf(out, len, "%s", what);
		break;
	}
	/* libcurl's texts start with a capital; ours do not */
	if (out[0] >= 'A' && out[0] <= 'Z' && out[1] >= 'a' && out[1] <= 'z')
		out[0] = (char)(out[0] - 'A' + 'a');
}

int sd_upload_post(const struct sd_upload_config *c, const char *url,
		   const char *token, const char *idempotency_key,
		   const char *body, size_t len, struct sd_upload_result *res,
		   char *err, size_t errlen)
{
	return sd_upload_post_type(c, url, token, idempotency_key,
				   "application/json", body, len, res, err,
				   errlen);
}

int sd_upload_post_type(const struct sd_upload_config *c, const char *url,
			const char *token, const char *idempotency_key,
			const char *content_type, const char *body,
			size_t len, struct sd_upload_result *res, char *err,
			size_t errlen)
{
	char ctype[128];
	int rc = SD_ERR_IO;
	CURL *h = NULL;
	struct curl_slist *headers = NULL;
	char *auth = NULL;
	char line[512];
	char curl_err[CURL_ERROR_SIZE];
	struct attempt a;

	memset(res, 0, sizeof(*res));
	res->outcome = SD_UPLOAD_FAILED;
	if ((rc = sd_upload_check_url(url, err, errlen)))
		goto fail_early;
	if (!idempotency_key || !*idempotency_key ||
	    strpbrk(idempotency_key, "\r\n")) {
		snprintf(err, errlen, "upload: no usable idempotency key");
		rc = SD_ERR_INVALID;
		goto fail_early;
	}
	if (c->cacert && access(c->cacert, R_OK) != 0) {
		/* no attempt can succeed; the report stays queued */
		snprintf(res->error, sizeof(res->error), "CA file %.200s: %s; "
			 "pass --cacert with the PEM file of the server's CA",
			 c->cacert, strerror(errno));
		snprintf(err, errlen, "%s", res->error);
		return SD_ERR_IO;
	}
	pthread_once(&curl_once, curl_init);
	if (curl_init_rc != CURLE_OK) {
		snprintf(err, errlen, "libcurl failed to start: %s",
			 curl_easy_strerror(curl_init_rc));
		rc = SD_ERR_IO;
		goto fail_early;
	}
	h = curl_easy_init();
	if (!h) {
		snprintf(err, errlen, "libcurl failed to start; out of memory?");
		rc = SD_ERR_NOMEM;
		goto fail_early;
	}

	/* headers; the Authorization one lives in memory we wipe */
	snprintf(line, sizeof(line), "Idempotency-Key: %s", idempotency_key);
	struct curl_slist *t;
	snprintf(ctype, sizeof(ctype), "Content-Type: %s", content_type);
	const char *fixed[] = { ctype, "Accept: application/json", "Expect:",
				line };
	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++) {
		t = curl_slist_append(headers, fixed[i]);
		if (!t)
			goto nomem;
		headers = t;
	}
	if (token) {
		size_t n = strlen(token) + sizeof("Authorization: Bearer ");
		auth = malloc(n);
		if (!auth)
			goto nomem;
		snprintf(auth, n, "Authorization: Bearer %s", token);
		t = curl_slist_append(headers, auth);
		if (!t)
			goto nomem;
		headers = t;
	}

	curl_easy_setopt(h, CURLOPT_URL, url);
#if LIBCURL_VERSION_NUM >= 0x075500
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
#else
	curl_easy_setopt(h, CURLOPT_PROTOCOLS,
			 (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 1L);
	curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 2L);
	if (c->cacert)
		curl_easy_setopt(h, CURLOPT_CAINFO, c->cacert);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS,
			 (long)ceil(c->connect_timeout_s * 1000));
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS,
			 (long)ceil(c->timeout_s * 1000));
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
	curl_easy_setopt(h, CURLOPT_USERAGENT, "shakedown/" PACKAGE_VERSION);
	curl_easy_setopt(h, CURLOPT_POST, 1L);
	curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &a);
	curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(h, CURLOPT_HEADERDATA, &a);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, curl_err);

	double wait_s = c->backoff_s;
	int max = c->max_attempts > 0 ? c->max_attempts : 1;
	for (int i = 1; i <= max; i++) {
		memset(&a, 0, sizeof(a));
		a.retry_after_s = -1;
		curl_err[0] = '\0';
		res->attempts = i;
		res->http_status = 0;
		int retry;

		CURLcode cc = curl_easy_perform(h);
		if (cc == CURLE_OK) {
			long code = 0;
			curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
			res->http_status = code;
			if (code >= 200 && code < 300) {
				res->outcome = SD_UPLOAD_SENT;
				res->error[0] = '\0';
				logf_scrubbed(c, token, "attempt %d of %d: "
					      "HTTP %ld", i, max, code);
				rc = SD_OK;
				goto out;
			}
			one_line(a.reply);
			if (code >= 300 && code < 400)
				snprintf(res->error, sizeof(res->error),
					 "HTTP %ld: the server redirects; "
					 "pass the final URL", code);
			else
				snprintf(res->error, sizeof(res->error),
					 "HTTP %ld%s%.*s", code,
					 a.reply[0] ? ": " : "", 200,
					 a.reply);
			retry = code >= 500 || code == 429 || code == 408;
		} else {
			explain_curl(cc, curl_err, c, res->error,
				     sizeof(res->error));
			retry = curl_retryable(cc);
		}
		sd_upload_scrub(res->error, token);
		if (!retry) {
			res->outcome = res->http_status ? SD_UPLOAD_REJECTED
							: SD_UPLOAD_FAILED;
			logf_scrubbed(c, token, "attempt %d of %d: %s; not "
				      "retrying", i, max, res->error);
			break;
		}
		if (i == max) {
			logf_scrubbed(c, token, "attempt %d of %d: %s; giving "
				      "up", i, max, res->error);
			break;
		}
		double w = a.retry_after_s >= 0 ? a.retry_after_s : wait_s;
		if (w > c->backoff_max_s)
			w = c->backoff_max_s;
		logf_scrubbed(c, token, "attempt %d of %d: %s; retrying in "
			      "%.3g s", i, max, res->error, w);
		sleep_s(w);
		wait_s *= 2;
	}
	snprintf(err, errlen, "%s", res->error);
	rc = SD_ERR_IO;
	goto out;

nomem:
	snprintf(err, errlen, "out of memory building the request");
	snprintf(res->error, sizeof(res->error), "out of memory");
	rc = SD_ERR_NOMEM;
out:
	if (h)
		curl_easy_cleanup(h);
	for (struct curl_slist *l = headers; l; l = l->next)
		explicit_bzero(l->data, strlen(l->data)); /* the token */
	curl_slist_free_all(headers);
	if (auth) {
		explicit_bzero(auth, strlen(auth));
		free(auth);
	}
	return rc;

fail_early:
	sd_strlcpy(res->error, err, sizeof(res->error));
	return rc;
}
