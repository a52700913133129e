/*
 * gpu_libs.c - which CUDA driver, CUDA runtime, cuBLAS and NCCL a process
 * started here loads, from where, and their versions: the GPU kit's first
 * word on a machine (test/gpu/run.sh), before anything needs a GPU.
 *
 * Each library is opened by the soname the NCCL plugin links
 * (libcudart.so.13, libcublas.so.13, libnccl.so.2; the driver's
 * libcuda.so.1), so what it finds is what the plugin will find under the
 * same LD_LIBRARY_PATH.  Only calls that need no GPU: cuDriverGetVersion,
 * cudaRuntimeGetVersion, cublasGetProperty, ncclGetVersion.
 *
 * Prints one line per library, "NAME VERSION PATH" or "NAME missing
 * (why)"; exit 0 when the runtime, cuBLAS and NCCL were all found (the
 * driver may be missing: no GPU), 1 otherwise.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <string.h>

static void *open_lib(const char *name, const char *soname, char *path,
		      size_t len)
{
	void *h = dlopen(soname, RTLD_NOW | RTLD_GLOBAL);
	struct link_map *m = NULL;
	if (!h) {
		printf("%-13s missing (%s)\n", name, dlerror());
		return NULL;
	}
	snprintf(path, len, "%s", soname);
	if (dlinfo(h, RTLD_DI_LINKMAP, &m) == 0 && m && m->l_name[0])
		snprintf(path, len, "%s", m->l_name);
	return h;
}

static void *sym(void *h, const char *name)
{
	return h ? dlsym(h, name) : NULL;
}

int main(void)
{
	char path[4096];
	int missing = 0, v = 0;

	void *drv = open_lib("cuda-driver", "libcuda.so.1", path, sizeof(path));
	int (*drv_version)(int *) = (int (*)(int *))sym(drv, "cuDriverGetVersion");
	if (drv_version && drv_version(&v) == 0)
		printf("%-13s %d.%d %s\n", "cuda-driver", v / 1000,
		       v % 1000 / 10, path);
	else if (drv)
		printf("%-13s ? %s (cuDriverGetVersion failed)\n",
		       "cuda-driver", path);

	void *rt = open_lib("cuda-runtime", "libcudart.so.13", path,
			    sizeof(path));
	int (*rt_version)(int *) = (int (*)(int *))sym(rt, "cudaRuntimeGetVersion");
	if (rt_version && rt_version(&v) == 0)
		printf("%-13s %d.%d %s\n", "cuda-runtime", v / 1000,
		       v % 1000 / 10, path);
	else
		missing++;

	void *bl = open_lib("cublas", "libcublas.so.13", path, sizeof(path));
	/* libraryPropertyType: MAJOR_VERSION 0, MINOR_VERSION 1, PATCH_LEVEL 2 */
	int (*bl_prop)(int, int *) = (int (*)(int, int *))sym(bl, "cublasGetProperty");
	int maj = 0, min = 0, pat = 0;
	if (bl_prop && bl_prop(0, &maj) == 0 && bl_prop(1, &min) == 0 &&
	    bl_prop(2, &pat) == 0)
		printf("%-13s %d.%d.%d %s\n", "cublas", maj, min, pat, path);
	else
		missing++;

	void *nc = open_lib("nccl", "libnccl.so.2", path, sizeof(path));
	int (*nc_version)(int *) = (int (*)(int *))sym(nc, "ncclGetVersion");
	if (nc_version && nc_version(&v) == 0) {
		/* NCCL_VERSION_CODE: major*10000 + minor*100 + patch since 2.9 */
		if (v >= 10000)
			printf("%-13s %d.%d.%d %s\n", "nccl", v / 10000,
			       v % 10000 / 100, v % 100, path);
		else
			printf("%-13s %d.%d.%d %s\n", "nccl", v / 1000,
			       v % 1000 / 100, v % 100, path);
	} else {
		missing++;
	}
	return missing ? 1 : 0;
}
