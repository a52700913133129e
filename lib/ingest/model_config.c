/* model_config.c - placeholder until the config reader lands (same
 * session); never shipped. */
#include "config.h"

#include <stdio.h>

#include "ingest/ingest.h"
#include "shakedown/backend.h"

int sd_ingest_model_config(const char *path, struct sd_train_fact *params,
			   struct sd_train_fact *layers,
			   struct sd_train_fact *width, char *err,
			   size_t errlen)
{
	(void)params;
	(void)layers;
	(void)width;
	snprintf(err, errlen, "%s: model config files are not read yet",
		 path);
	return SD_ERR_INVALID;
}
