/*
 * baseline_probe.c - read a baseline the way `shakedown run` does
 * (sd_db_baseline_load, sd_baseline_find), for baseline.t.
 *
 *   baseline_probe DB NAME [OP DTYPE REDOP SCOPE SIZE_BYTES IN_PLACE]...
 *
 * Prints "NAME FROM_RUN_UUID N" (N values), then for each key of six
 * arguments (REDOP "-" for none) one line "BUSBW_GBS TIME_US GROUPS" with
 * %.9g, or "none".  Exits 0; 2 with the message for SD_ERR_INVALID; 3 for
 * any other failure; 64 for bad arguments.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/baseline.h"
#include "shakedown/backend.h"

int main(int argc, char **argv)
{
	struct sd_baseline b;
	char err[768];
	if (argc < 3 || (argc - 3) % 6 != 0) {
		fprintf(stderr, "usage: baseline_probe DB NAME [OP DTYPE REDOP "
			"SCOPE SIZE_BYTES IN_PLACE]...\n");
		return 64;
	}
	int rc = sd_db_baseline_load(argv[1], argv[2], &b, err, sizeof(err));
	if (rc != SD_OK) {
		fprintf(stderr, "baseline_probe: %s\n", err);
		sd_baseline_free(&b);
		return rc == SD_ERR_INVALID ? 2 : 3;
	}
	printf("%s %s %zu\n", b.name, b.from_run_uuid, b.n);
	for (int i = 3; i + 6 <= argc; i += 6) {
		const char *redop = strcmp(argv[i + 2], "-") == 0 ? NULL
								  : argv[i + 2];
		uint64_t size = strtoull(argv[i + 4], NULL, 10);
		const struct sd_baseline_value *v = sd_baseline_find(
			&b, argv[i], argv[i + 1], redop, argv[i + 3], size,
			(int)strtol(argv[i + 5], NULL, 10));
		if (v)
			printf("%.9g %.9g %d\n", v->busbw_gbs, v->time_us,
			       v->groups);
		else
			printf("none\n");
	}
	sd_baseline_free(&b);
	return fflush(stdout) == 0 ? 0 : 3;
}
