/*
 * plugin.h - find and load backend plugins.
 *
 * A backend named NAME is the shared object `backend_NAME.so`, searched in
 * the directories of $SHAKEDOWN_PLUGIN_DIR (colon separated), then, when the
 * command runs from its build tree, in plugins/NAME/.libs there, then in
 * the installed plugin directory.  The loader checks the ABI identity right
 * after dlopen and refuses a mismatch naming the file and both versions.
 */
#ifndef SD_PLUGIN_H
#define SD_PLUGIN_H

#include <stddef.h>
#include "shakedown/backend.h"

struct sd_plugin {
	void *handle;
	const struct sd_backend_ops *ops;
	char path[4096];
};

/*
 * Load backend `name`.  Returns SD_OK and fills *out, or SD_ERR_INVALID for
 * a name with odd characters, SD_ERR_BACKEND when no file is found, it does
 * not load, or its ABI does not match; err says which file and why.
 */
int sd_plugin_load(const char *name, struct sd_plugin *out, char *err,
		   size_t errlen);

/* Check an ops table (exposed for the unit tests); path is for messages. */
int sd_plugin_check(const struct sd_backend_ops *ops, const char *path,
		    char *err, size_t errlen);

void sd_plugin_unload(struct sd_plugin *p);

#endif
