/*
 * memcpy_bw.c - memcpy bandwidth at given sizes: the memory limit that
 * bench/cpu_bench.sh prints beside every peer, and its drift check (the
 * same figure at the start and the end of a sitting).
 *
 * For each size, two buffers are allocated and touched, one copy warms
 * them, then memcpy runs back to back until at least MIN_SECONDS have
 * passed (and at least three copies).  One line per size:
 *
 *   op=memcpy size_bytes=1048576 iters=812 time_us=61.52 gbs=17.0453
 *
 * gbs is bytes copied per second / 1e9 (each byte is read once and
 * written once).
 *
 * usage: memcpy_bw [-m MIN_SECONDS] SIZE...   (K/M/G suffixes allowed)
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* A size in bytes with an optional K, M or G suffix; 0 when malformed. */
static size_t parse_size(const char *s)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || v <= 0)
		return 0;
	switch (*end) {
	case 'K': case 'k': v *= 1024; end++; break;
	case 'M': case 'm': v *= 1024 * 1024; end++; break;
	case 'G': case 'g': v *= 1024.0 * 1024 * 1024; end++; break;
	default: break;
	}
	return *end ? 0 : (size_t)v;
}

/* Time memcpy of `bytes`; 0 on success. */
static int measure(size_t bytes, double min_s)
{
	char *src = malloc(bytes), *dst = malloc(bytes);
	if (!src || !dst) {
		fprintf(stderr, "memcpy_bw: out of memory for %zu bytes\n",
			bytes);
		free(src);
		free(dst);
		return 1;
	}
	memset(src, 1, bytes);
	memset(dst, 0, bytes);
	memcpy(dst, src, bytes);
	long iters = 0;
	double t0 = now_s(), t;
	do {
		/* alternate the direction so no copy is a no-op */
		if (iters & 1)
			memcpy(src, dst, bytes);
		else
			memcpy(dst, src, bytes);
		iters++;
		t = now_s() - t0;
	} while (iters < 3 || t < min_s);
	/* keep the copies observable */
	volatile char sink = dst[bytes / 2] + src[bytes - 1];
	(void)sink;
	double us = t * 1e6 / (double)iters;
	printf("op=memcpy size_bytes=%zu iters=%ld time_us=%.3f gbs=%.4f\n",
	       bytes, iters, us, (double)bytes / (us * 1e-6) / 1e9);
	free(src);
	free(dst);
	return 0;
}

int main(int argc, char **argv)
{
	double min_s = 0.1;
	int opt;
	while ((opt = getopt(argc, argv, "m:")) != -1) {
		switch (opt) {
		case 'm': {
			char *end;
			min_s = strtod(optarg, &end);
			if (*end || !(min_s >= 0)) {
				fprintf(stderr, "memcpy_bw: bad -m '%s'; give "
						"seconds, e.g. 0.1\n", optarg);
				return 2;
			}
			break;
		}
		default:
			fprintf(stderr, "usage: memcpy_bw [-m MIN_SECONDS] "
					"SIZE...\n");
			return 2;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "usage: memcpy_bw [-m MIN_SECONDS] SIZE...\n");
		return 2;
	}
	for (int i = optind; i < argc; i++) {
		size_t bytes = parse_size(argv[i]);
		if (!bytes) {
			fprintf(stderr, "memcpy_bw: bad size '%s'; give "
				"bytes with an optional K, M or G\n", argv[i]);
			return 2;
		}
		if (measure(bytes, min_s))
			return 3;
	}
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "memcpy_bw: cannot write the results\n");
		return 3;
	}
	return 0;
}
