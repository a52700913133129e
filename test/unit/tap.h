/*
 * tap.h - the smallest TAP producer for the C unit tests: ok(), is_int(),
 * is_dbl(), done_testing().  Output is read by automake's tap-driver.sh.
 */
#ifndef SD_TAP_H
#define SD_TAP_H

#include <math.h>
#include <stdio.h>

static int tap_n, tap_failed;

#define ok(cond, ...)                                                        \
	do {                                                                 \
		int _ok = !!(cond);                                          \
		printf("%sok %d - ", _ok ? "" : "not ", ++tap_n);            \
		printf(__VA_ARGS__);                                         \
		printf("\n");                                                \
		if (!_ok) {                                                  \
			tap_failed++;                                        \
			printf("#   failed at %s:%d\n", __FILE__, __LINE__);    \
		}                                                            \
	} while (0)

#define is_int(got, want, ...)                                               \
	do {                                                                 \
		long long _g = (long long)(got), _w = (long long)(want);     \
		ok(_g == _w, __VA_ARGS__);                                   \
		if (_g != _w)                                                \
			printf("#   got %lld, want %lld\n", _g, _w);         \
	} while (0)

#define is_dbl(got, want, tol, ...)                                          \
	do {                                                                 \
		double _g = (got), _w = (want);                              \
		ok(fabs(_g - _w) <= (tol), __VA_ARGS__);                     \
		if (!(fabs(_g - _w) <= (tol)))                               \
			printf("#   got %.9g, want %.9g\n", _g, _w);         \
	} while (0)

static int done_testing(void)
{
	printf("1..%d\n", tap_n);
	return tap_failed ? 1 : 0;
}

#endif
