/*
 * plugin.c - the backend plugin loader (see plugin.h).
 */
#include "config.h"

#include <ctype.h>
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "plugin.h"
#include "util.h"

int sd_plugin_check(const struct sd_backend_ops *ops, const char *path,
		    char *err, size_t errlen)
{
	if (ops->magic != SD_BACKEND_MAGIC) {
		snprintf(err, errlen, "%s: not a shakedown backend plugin (bad "
			 "magic 0x%08x); remove it from the plugin directory",
			 path, ops->magic);
		return SD_ERR_BACKEND;
	}
	if (ops->abi_version != SD_BACKEND_ABI_VERSION) {
		snprintf(err, errlen, "%s: plugin ABI version %u, but this "
			 "shakedown needs ABI version %u; rebuild the plugin "
			 "with this shakedown", path, ops->abi_version,
			 SD_BACKEND_ABI_VERSION);
		return SD_ERR_BACKEND;
	}
	if (!ops->name || !ops->init || !ops->comm_create || !ops->run ||
	    !ops->wait || !ops->fill || !ops->verify || !ops->buf_alloc ||
	    !ops->barrier || !ops->comm_destroy) {
		snprintf(err, errlen, "%s: plugin lacks required functions; "
			 "rebuild it", path);
		return SD_ERR_BACKEND;
	}
	return SD_OK;
}

/* Try one candidate file; 1 when it does not exist (keep looking). */
static int try_load(const char *path, struct sd_plugin *out, char *err,
		    size_t errlen)
{
	if (access(path, F_OK) != 0)
		return 1;
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		snprintf(err, errlen, "%s: cannot load plugin: %s", path,
			 dlerror());
		return SD_ERR_BACKEND;
	}
	const struct sd_backend_ops *ops = dlsym(h, SD_BACKEND_SYMBOL);
	if (!ops) {
		snprintf(err, errlen, "%s: no symbol '%s': not a shakedown "
			 "plugin", path, SD_BACKEND_SYMBOL);
		dlclose(h);
		return SD_ERR_BACKEND;
	}
	int rc = sd_plugin_check(ops, path, err, errlen);
	if (rc) {
		dlclose(h);
		return rc;
	}
	out->handle = h;
	out->ops = ops;
	sd_strlcpy(out->path, path, sizeof(out->path));
	return SD_OK;
}

/* Whether this executable lives in the build tree it was built in. */
static int in_build_tree(void)
{
	char exe[PATH_MAX], want[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return 0;
	exe[n] = '\0';
	snprintf(want, sizeof(want), "%s/src/", SD_BUILD_DIR);
	return strncmp(exe, want, strlen(want)) == 0;
}

int sd_plugin_load(const char *name, struct sd_plugin *out, char *err,
		   size_t errlen)
{
	char path[4096], dirs[8192] = "";
	int rc;

	memset(out, 0, sizeof(*out));
	for (const char *c = name; *c; c++)
		if (!isalnum((unsigned char)*c) && *c != '_') {
			snprintf(err, errlen, "backend name '%s' may only "
				 "hold letters, digits and '_'", name);
			return SD_ERR_INVALID;
		}
	const char *env = getenv("SHAKEDOWN_PLUGIN_DIR");
	if (env && *env)
		snprintf(dirs, sizeof(dirs), "%s:", env);
	if (in_build_tree()) {
		size_t used = strlen(dirs);
		snprintf(dirs + used, sizeof(dirs) - used, "%s/plugins/%s/.libs:",
			 SD_BUILD_DIR, name);
	}
	size_t used = strlen(dirs);
	snprintf(dirs + used, sizeof(dirs) - used, "%s", SD_PLUGIN_DIR);

	char *save = NULL, copy[8192];
	sd_strlcpy(copy, dirs, sizeof(copy));
	for (char *d = strtok_r(copy, ":", &save); d;
	     d = strtok_r(NULL, ":", &save)) {
		snprintf(path, sizeof(path), "%s/backend_%s.so", d, name);
		rc = try_load(path, out, err, errlen);
		if (rc != 1)
			return rc;
	}
	snprintf(err, errlen, "backend '%s' not found (looked for "
		 "backend_%s.so in %s); check --backend, or set "
		 "SHAKEDOWN_PLUGIN_DIR, or rebuild with its library installed",
		 name, name, dirs);
	return SD_ERR_BACKEND;
}

void sd_plugin_unload(struct sd_plugin *p)
{
	if (p->handle)
		dlclose(p->handle);
	p->handle = NULL;
	p->ops = NULL;
}
