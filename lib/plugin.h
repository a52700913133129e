/*
 * plugin.h - find and load backend plugins.
 *
 * A backend named NAME is the shared object `backend_NAME.so`, searched in
 * the directories of $SHAKEDOWN_PLUGIN_DIR (colon separated), then, when the
 * command runs from its build tree, in plugins/NAME/.libs there, then in
 * the installed plugin directory.  The loader checks the ABI identity right
 * after dlopen and refuses a mismatch naming the file and both versions.
 * A plugin reads only what it is given (struct sd_bootstrap, the op
 * arguments); the core reads its table through sd_plugin.ops.
 */
#ifndef SD_PLUGIN_H
#define SD_PLUGIN_H

#include <stddef.h>
#include "shakedown/backend.h"

struct sd_plugin {
	void *handle;
	const struct sd_backend_ops *ops; /* &table once loaded */
	struct sd_backend_ops table;      /* the plugin's, full size */
	char path[4096];
};

/*
 * Load backend `name`.  Returns SD_OK and fills *out, or SD_ERR_INVALID for
 * a name with odd characters, SD_ERR_BACKEND when no file is found, it does
 * not load, or its ABI does not match; err says which file and why.
 */
int sd_plugin_load(const char *name, struct sd_plugin *out, char *err,
		   size_t errlen);

/*
 * Check the table `ops` of a plugin at `path` (for messages) that was
 * loaded as backend `want`, and copy it into *out (absent slots NULL).
 * Returns SD_OK, or SD_ERR_BACKEND with err naming the file and what is
 * wrong: not a plugin, another ABI version (both named), an older table
 * that lacks a slot the core needs (both sizes and the slot named), or a
 * plugin whose own name is not the backend asked for.
 */
int sd_plugin_check(const struct sd_backend_ops *ops, const char *want,
		    const char *path, struct sd_backend_ops *out, char *err,
		    size_t errlen);

void sd_plugin_unload(struct sd_plugin *p);

/* Whether this executable lives in the build tree it was built in (then
 * plugins and plans are found there first). */
int sd_in_build_tree(void);

/*
 * Where INSTALLED (a folder the build put under its prefix: SD_PLUGIN_DIR,
 * SD_DATA_DIR) is for an installed tree that was moved or unpacked
 * elsewhere (a bundle carried to another machine): the same path relative
 * to this executable's folder as INSTALLED is to SD_BIN_DIR, the bindir
 * it was built for.  Writes it into BUF and returns 0; returns -1 when the
 * executable is in its bindir (nothing was moved), in the build tree, or
 * the paths have no common parent.  Pure path arithmetic on EXE_DIR in
 * sd_relocate_path(); sd_relocated_dir() uses /proc/self/exe.
 */
int sd_relocate_path(const char *exe_dir, const char *bindir,
		     const char *installed, char *buf, size_t len);
int sd_relocated_dir(const char *installed, char *buf, size_t len);

#endif
