/*
 * upload_hook.c - calls sd_upload_after_run() the way `shakedown run` does
 * after a run, so test/upload_hook.t can check the hook's contract (what
 * it sends, the warning it returns, the outbox) without a backend.
 *
 *   upload_hook DB RUN_UUID URL|- TOKEN_FILE|- CACERT|-
 *
 * "-" passes NULL.  Prints "status N" (the sd_status) on stdout and, when
 * it is not SD_OK, "shakedown: warning: ERR" on stderr, like the core.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "upload/upload.h"

static const char *arg(const char *s)
{
	return strcmp(s, "-") == 0 ? NULL : s;
}

int main(int argc, char **argv)
{
	char err[1024] = "";
	if (argc != 6) {
		fprintf(stderr, "usage: upload_hook DB RUN_UUID URL|- "
			"TOKEN_FILE|- CACERT|-\n");
		return 2;
	}
	int rc = sd_upload_after_run(arg(argv[1]), argv[2], arg(argv[3]),
				     arg(argv[4]), arg(argv[5]), err,
				     sizeof(err));
	printf("status %d\n", rc);
	if (rc)
		fprintf(stderr, "shakedown: warning: %s\n", err);
	return 0;
}
