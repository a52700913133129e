/*
 * http_none.c - the sender in a build without libcurl: every attempt to
 * send says how to get a build that can (configure found no libcurl or was
 * given --without-curl).  The outbox and `shakedown upload --list` still
 * work.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "shakedown/backend.h"
#include "upload/upload.h"

#define NO_CURL "built without libcurl; install libcurl4-openssl-dev and " \
		"rebuild"

int sd_upload_available(char *err, size_t errlen)
{
	snprintf(err, errlen, NO_CURL);
	return 0;
}

int sd_upload_post(const struct sd_upload_config *c, const char *url,
		   const char *token, const char *idempotency_key,
		   const char *body, size_t len, struct sd_upload_result *res,
		   char *err, size_t errlen)
{
	memset(res, 0, sizeof(*res));
	res->outcome = SD_UPLOAD_FAILED;
	snprintf(res->error, sizeof(res->error), NO_CURL);
	snprintf(err, errlen, NO_CURL);
	return SD_ERR_INVALID;
}

int sd_upload_post_type(const struct sd_upload_config *c, const char *url,
			const char *token, const char *idempotency_key,
			const char *content_type, const char *body,
			size_t len, struct sd_upload_result *res, char *err,
			size_t errlen)
{
	(void)content_type;
	return sd_upload_post(c, url, token, idempotency_key, body, len, res,
			      err, errlen);
}
