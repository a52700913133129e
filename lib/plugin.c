/*
 * plugin.c - the backend plugin loader (see plugin.h).
 *
 * Every kind of table a plugin can export is described by a struct
 * table_kind: its symbol, identity and slots (which the core needs).  A
 * table is copied into the loader's own, full-size one, so that slots an
 * older plugin lacks read as NULL and the core never reads past it.
 */
#include "config.h"

#include <ctype.h>
#include <stddef.h>
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "plugin.h"
#include "util.h"

/* A slot of a table: where it is and whether the core needs it. */
struct slot {
	const char *name;
	size_t offset;
	int required;
};

/* A kind of table a plugin may export (today: backends; later, workloads
 * that are not collectives get a kind of their own). */
struct table_kind {
	const char *what;       /* "backend" */
	const char *symbol;     /* SD_BACKEND_SYMBOL */
	uint32_t magic, abi;
	size_t size;            /* this build's sizeof the table */
	const struct slot *slots;
	size_t nslots;
};

#define SLOT(f, req) { #f, offsetof(struct sd_backend_ops, f), req }
static const struct slot backend_slots[] = {
	SLOT(init, 1), SLOT(fini, 0), SLOT(comm_create, 1),
	SLOT(comm_split, 0), SLOT(comm_rank, 0), SLOT(comm_size, 0),
	SLOT(comm_destroy, 1), SLOT(describe_device, 0), SLOT(buf_alloc, 1),
	SLOT(buf_free, 0), SLOT(fill, 1), SLOT(verify, 1), SLOT(corrupt, 0),
	SLOT(algo_name, 0), SLOT(prepare, 0), SLOT(run, 1), SLOT(wait, 1),
	SLOT(barrier, 1), SLOT(abort, 0), SLOT(iter_times, 0),
	SLOT(describe_links, 0), SLOT(algo_auto, 0), SLOT(env_check, 0),
	SLOT(gemm, 0),
};
#undef SLOT

static const struct table_kind backend_kind = {
	"backend", SD_BACKEND_SYMBOL, SD_BACKEND_MAGIC, SD_BACKEND_ABI_VERSION,
	sizeof(struct sd_backend_ops), backend_slots,
	sizeof(backend_slots) / sizeof(backend_slots[0]),
};

/* The name of the last slot a table of `size` bytes holds. */
static const char *last_slot(const struct table_kind *k, size_t size)
{
	const char *last = "none";
	for (size_t i = 0; i < k->nslots; i++)
		if (k->slots[i].offset + sizeof(void *) <= size)
			last = k->slots[i].name;
	return last;
}

int sd_plugin_check(const struct sd_backend_ops *ops, const char *want,
		    const char *path, struct sd_backend_ops *out, char *err,
		    size_t errlen)
{
	const struct table_kind *k = &backend_kind;
	if (ops->magic != k->magic) {
		snprintf(err, errlen, "%s: not a shakedown %s plugin (bad "
			 "magic 0x%08x); remove it from the plugin directory",
			 path, k->what, ops->magic);
		return SD_ERR_BACKEND;
	}
	if (ops->abi_version != k->abi) {
		snprintf(err, errlen, "%s: plugin ABI version %u, but this "
			 "shakedown needs ABI version %u; rebuild the plugin "
			 "with this shakedown", path, ops->abi_version, k->abi);
		return SD_ERR_BACKEND;
	}
	size_t size = ops->table_size;
	if (size < k->slots[0].offset) {
		snprintf(err, errlen, "%s: plugin table of %zu bytes is too short "
			 "to be one; rebuild the plugin with this shakedown",
			 path, size);
		return SD_ERR_BACKEND;
	}
	for (size_t i = 0; i < k->nslots; i++) {
		const struct slot *s = &k->slots[i];
		if (!s->required || s->offset + sizeof(void *) <= size)
			continue;
		snprintf(err, errlen, "%s: plugin built with an older ABI %u "
			 "table (%zu bytes, up to '%s') that lacks the required "
			 "slot '%s'; this shakedown's ABI %u table has %zu bytes; "
			 "rebuild the plugin with this shakedown", path,
			 ops->abi_version, size, last_slot(k, size), s->name,
			 k->abi, k->size);
		return SD_ERR_BACKEND;
	}
	/* a table from a newer build has slots this one does not know:
	 * they are ignored, and so is an older table's missing tail */
	/* copy the identity, the masks and every slot that is whole in the
	 * plugin's table; a slot cut by its end stays NULL */
	size_t copy = k->slots[0].offset;
	for (size_t i = 0; i < k->nslots; i++)
		if (k->slots[i].offset + sizeof(void *) <= size)
			copy = k->slots[i].offset + sizeof(void *);
	memset(out, 0, sizeof(*out));
	memcpy(out, ops, copy < k->size ? copy : k->size);
	out->table_size = (uint32_t)k->size;
	for (size_t i = 0; i < k->nslots; i++) {
		const struct slot *s = &k->slots[i];
		void *fn;
		memcpy(&fn, (const char *)out + s->offset, sizeof(fn));
		if (s->required && !fn) {
			snprintf(err, errlen, "%s: plugin lacks the required "
				 "function '%s'; rebuild it", path, s->name);
			return SD_ERR_BACKEND;
		}
	}
	if (!out->name || !want || strcmp(out->name, want) != 0) {
		snprintf(err, errlen, "%s: the plugin says it is backend '%s', "
			 "not '%s'; rename the file or rebuild the plugin", path,
			 out->name ? out->name : "?", want ? want : "?");
		return SD_ERR_BACKEND;
	}
	return SD_OK;
}

/* Try one candidate file; 1 when it does not exist (keep looking). */
static int try_load(const char *path, const char *name,
		    struct sd_plugin *out, char *err, size_t errlen)
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
	int rc = sd_plugin_check(ops, name, path, &out->table, err, errlen);
	if (rc) {
		dlclose(h);
		return rc;
	}
	out->handle = h;
	out->ops = &out->table;
	sd_strlcpy(out->path, path, sizeof(out->path));
	return SD_OK;
}

int sd_in_build_tree(void)
{
	char exe[PATH_MAX], want[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return 0;
	exe[n] = '\0';
	snprintf(want, sizeof(want), "%s/src/", SD_BUILD_DIR);
	return strncmp(exe, want, strlen(want)) == 0;
}

int sd_relocate_path(const char *exe_dir, const char *bindir,
		     const char *installed, char *buf, size_t len)
{
	/* the longest common parent of bindir and installed, at a '/' */
	size_t common = 0;
	for (size_t i = 0; bindir[i] && bindir[i] == installed[i]; i++)
		if (bindir[i] == '/')
			common = i;
	if (bindir[0] != '/' || installed[0] != '/')
		return -1;
	if (strcmp(exe_dir, bindir) == 0)
		return -1;
	/* up from bindir to that parent, then down to installed */
	int ups = 0;
	for (const char *c = bindir + common; *c; c++)
		if (*c == '/' && c[1])
			ups++;
	size_t used = (size_t)snprintf(buf, len, "%s", exe_dir);
	for (int i = 0; i < ups && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "/..");
	if (used < len)
		used += (size_t)snprintf(buf + used, len - used, "%s",
					 installed + common);
	return used < len ? 0 : -1;
}

int sd_relocated_dir(const char *installed, char *buf, size_t len)
{
	char exe[PATH_MAX];
	if (sd_in_build_tree())
		return -1;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return -1;
	exe[n] = '\0';
	char *slash = strrchr(exe, '/');
	if (!slash || slash == exe)
		return -1;
	*slash = '\0';
	return sd_relocate_path(exe, SD_BIN_DIR, installed, buf, len);
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
	if (sd_in_build_tree()) {
		size_t used = strlen(dirs);
		snprintf(dirs + used, sizeof(dirs) - used, "%s/plugins/%s/.libs:",
			 SD_BUILD_DIR, name);
	}
	/* an installed tree moved elsewhere: its own plugins first */
	char moved[PATH_MAX];
	size_t used = strlen(dirs);
	if (sd_relocated_dir(SD_PLUGIN_DIR, moved, sizeof(moved)) == 0)
		snprintf(dirs + used, sizeof(dirs) - used, "%s:", moved);
	used = strlen(dirs);
	snprintf(dirs + used, sizeof(dirs) - used, "%s", SD_PLUGIN_DIR);

	char *save = NULL, copy[8192];
	sd_strlcpy(copy, dirs, sizeof(copy));
	for (char *d = strtok_r(copy, ":", &save); d;
	     d = strtok_r(NULL, ":", &save)) {
		snprintf(path, sizeof(path), "%s/backend_%s.so", d, name);
		rc = try_load(path, name, out, err, errlen);
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
