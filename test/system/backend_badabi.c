/*
 * backend_badabi.c - a plugin built for another ABI version, so the test
 * suite can prove the loader refuses it naming the file and both versions.
 */
#include "shakedown/backend.h"

const struct sd_backend_ops shakedown_backend = {
	.magic = SD_BACKEND_MAGIC,
	.abi_version = SD_BACKEND_ABI_VERSION + 998,
	.name = "badabi",
	.version = "test",
};
