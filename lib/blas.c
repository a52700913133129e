/*
 * blas.c - loads the CBLAS of the CPU paths at run time (see blas.h for
 * which library, and why it is not linked).
 */
#include "config.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blas.h"

static pthread_once_t once = PTHREAD_ONCE_INIT;
static struct sd_blas blas;

/* The OpenBLAS kernels this CPU's instructions allow, or NULL. */
static const char *cpu_coretype(void)
{
#if defined(__x86_64__) && defined(__GNUC__)
	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx512f") &&
	    __builtin_cpu_supports("avx512dq") &&
	    __builtin_cpu_supports("avx512bw") &&
	    __builtin_cpu_supports("avx512vl"))
		return "SkylakeX";
	if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
		return "Haswell";
#endif
	return NULL;
}

static void load(void)
{
	static const char *const names[] = {
#ifdef SD_BLAS_SONAME
		SD_BLAS_SONAME,
#endif
		"libopenblas.so.0", "libopenblas.so", "libblas.so.3",
	};
	const char *want = getenv("SHAKEDOWN_BLAS");
	void *h = NULL;
	const char *from = NULL;
	char why[96] = "none found";
	if (want && strcmp(want, "none") == 0) {
		snprintf(blas.why, sizeof(blas.why), "SHAKEDOWN_BLAS=none");
		snprintf(blas.impl, sizeof(blas.impl), "none (%s)", blas.why);
		return;
	}
	/* before the library starts: one thread, and kernels for this CPU
	 * where the library would fall back to generic ones */
	setenv("OPENBLAS_NUM_THREADS", "1", 1);
	const char *core = cpu_coretype();
	int set_core = core && !getenv("OPENBLAS_CORETYPE");
	if (set_core)
		setenv("OPENBLAS_CORETYPE", core, 1);
	if (want && *want) {
		h = dlopen(want, RTLD_NOW | RTLD_LOCAL);
		from = want;
		if (!h)
			snprintf(why, sizeof(why), "SHAKEDOWN_BLAS=%.60s does not "
				 "load", want);
	} else {
		for (size_t i = 0; !h && i < sizeof(names) / sizeof(names[0]);
		     i++) {
			h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
			from = names[i];
		}
	}
	if (h) {
		*(void **)&blas.sgemm = dlsym(h, "cblas_sgemm");
		*(void **)&blas.sgemv = dlsym(h, "cblas_sgemv");
	}
	if (!blas.sgemm || !blas.sgemv) {
		if (h)
			snprintf(why, sizeof(why), "%.60s has no cblas_sgemm "
				 "and cblas_sgemv", from);
		snprintf(blas.why, sizeof(blas.why), "no BLAS: %s; apt-get "
			 "install libopenblas0", why);
		snprintf(blas.impl, sizeof(blas.impl), "none (%s)", blas.why);
		blas.sgemm = NULL;
		blas.sgemv = NULL;
		if (h)
			dlclose(h);
		return;
	}
	void (*threads)(int);
	char *(*config)(void), *(*corename)(void);
	*(void **)&threads = dlsym(h, "openblas_set_num_threads");
	*(void **)&config = dlsym(h, "openblas_get_config");
	*(void **)&corename = dlsym(h, "openblas_get_corename");
	if (threads)
		threads(1);
	if (config && corename) {
		/* "OpenBLAS 0.3.21 NO_LAPACKE DYNAMIC_ARCH ...": its name and
		 * version */
		const char *c = config();
		const char *sp = c ? strchr(c, ' ') : NULL;
		const char *sp2 = sp ? strchr(sp + 1, ' ') : NULL;
		int len = sp2 ? (int)(sp2 - c) : c ? (int)strlen(c) : 0;
		snprintf(blas.impl, sizeof(blas.impl), "%.*s (core %s%s), "
			 "1 thread", len > 40 ? 40 : len, c ? c : "OpenBLAS",
			 corename(), set_core ? ", chosen by shakedown" : "");
	} else {
		snprintf(blas.impl, sizeof(blas.impl), "cblas_sgemm of %.100s, "
			 "1 thread", from);
	}
}

const struct sd_blas *sd_blas(void)
{
	pthread_once(&once, load);
	return &blas;
}
