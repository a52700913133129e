/*
 * util.c - small helpers shared by the core (see util.h).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/socket.h>
#include <unistd.h>

#include "shakedown/backend.h"
#include "util.h"

/* Move exactly len bytes through fd, retrying after signals. */
static int full(int fd, char *p, size_t len, int sending)
{
	while (len) {
		ssize_t n = sending ? send(fd, p, len, MSG_NOSIGNAL)
				    : recv(fd, p, len, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int sd_send_full(int fd, const void *buf, size_t len)
{
	return full(fd, (char *)(uintptr_t)buf, len, 1);
}

int sd_recv_full(int fd, void *buf, size_t len)
{
	return full(fd, buf, len, 0);
}

double sd_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double sd_wall_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void sd_format_size(uint64_t bytes, char *buf, size_t len)
{
	static const char suffix[] = "KMGT";
	int i = -1;
	while (bytes >= 1024 && bytes % 1024 == 0 && i < 3) {
		bytes /= 1024;
		i++;
	}
	if (i < 0)
		snprintf(buf, len, "%llu", (unsigned long long)bytes);
	else
		snprintf(buf, len, "%llu%c", (unsigned long long)bytes,
			 suffix[i]);
}

void sd_hex_encode(const void *data, size_t len, char *out)
{
	static const char digits[] = "0123456789abcdef";
	const unsigned char *p = data;
	for (size_t i = 0; i < len; i++) {
		out[2 * i] = digits[p[i] >> 4];
		out[2 * i + 1] = digits[p[i] & 15];
	}
	out[2 * len] = '\0';
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int sd_hex_decode(const char *hex, void *out, size_t len)
{
	unsigned char *p = out;
	for (size_t i = 0; i < len; i++) {
		int hi = hexval(hex[2 * i]), lo;
		if (hi < 0)
			return -1;
		lo = hexval(hex[2 * i + 1]);
		if (lo < 0)
			return -1;
		p[i] = (unsigned char)(hi << 4 | lo);
	}
	return 0;
}

uint64_t sd_fnv1a(uint64_t h, const void *data, size_t len)
{
	const unsigned char *p = data;
	for (size_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

void sd_uuid4(char out[37])
{
	unsigned char b[16];
	int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
	ssize_t got = fd >= 0 ? read(fd, b, sizeof(b)) : -1;
	if (fd >= 0)
		close(fd);
	if (got != (ssize_t)sizeof(b)) {
		/* no urandom: time, pid and a counter are unique enough */
		uint64_t h = sd_fnv1a(SD_FNV_INIT, &(double){ sd_wall_now() },
				      sizeof(double));
		h = sd_fnv1a(h, &(pid_t){ getpid() }, sizeof(pid_t));
		memcpy(b, &h, 8);
		h = sd_fnv1a(h, b, 8);
		memcpy(b + 8, &h, 8);
	}
	b[6] = (b[6] & 0x0f) | 0x40;
	b[8] = (b[8] & 0x3f) | 0x80;
	char hex[33];
	sd_hex_encode(b, 16, hex);
	snprintf(out, 37, "%.8s-%.4s-%.4s-%.4s-%.12s", hex, hex + 8, hex + 12,
		 hex + 16, hex + 20);
}

void sd_strlcpy(char *dst, const char *src, size_t len)
{
	if (!len)
		return;
	size_t n = strnlen(src, len - 1);
	memcpy(dst, src, n);
	dst[n] = '\0';
}

char *sd_dupstr(const char *s, int *bad)
{
	if (!s)
		return NULL;
	char *c = strdup(s);
	if (!c)
		*bad = 1;
	return c;
}

int sd_clip_words(char *dst, size_t len, const char *src, size_t max,
		  const char *more)
{
	size_t n = strlen(src), m = strlen(more);
	if (!len)
		return 0;
	if (max > len - 1)
		max = len - 1;
	if (n <= max) {
		memcpy(dst, src, n + 1);
		return 0;
	}
	size_t room = max > m ? max - m : 0, cut = room;
	while (cut > 0 && !strchr(" ,;", src[cut]))
		cut--;
	/* no break: the first word is cut */
	if (cut == 0)
		cut = room;
	/* the separators before the break go too */
	while (cut > 0 && strchr(" ,;", src[cut - 1]))
		cut--;
	memcpy(dst, src, cut);
	snprintf(dst + cut, len - cut, "%.*s", (int)(max - cut), more);
	return 1;
}

size_t sd_wrap_len(const char *s, size_t width)
{
	size_t n = strlen(s);
	if (n <= width)
		return n;
	for (size_t k = width; k > 0; k--)
		if (s[k] == ' ')
			return k;
	for (size_t k = width; k > 0; k--)
		if (s[k - 1] == ',')
			return k;
	/* one word longer than the width: whole, up to its end */
	size_t w = strcspn(s, " ,");
	return s[w] == ',' ? w + 1 : w;
}

int sd_write_replace(const char *path, const void *data, size_t len,
		     char *failed, size_t failedlen)
{
	char tmp[4200];
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= sizeof(tmp))
		return -2;
	FILE *f = fopen(tmp, "w");
	int bad = !f;
	if (f) {
		bad = fwrite(data, 1, len, f) != len;
		bad |= fflush(f) != 0 || ferror(f);
		bad |= fsync(fileno(f)) != 0 && errno != EINVAL;
		bad |= fclose(f) != 0;
	}
	int e = errno;
	if (!bad && rename(tmp, path) == 0)
		return 0;
	if (!bad)
		e = errno;
	sd_strlcpy(failed, bad ? tmp : path, failedlen);
	if (f || !bad)
		unlink(tmp);
	errno = e;
	return -1;
}

int sd_buf_vprintf(struct sd_buf *b, const char *fmt, va_list ap)
{
	for (;;) {
		size_t room = b->cap - b->len;
		va_list aq;
		va_copy(aq, ap);
		int n = vsnprintf(b->data ? b->data + b->len : NULL, room, fmt,
				  aq);
		va_end(aq);
		if (n < 0)
			return -1;
		if ((size_t)n < room) {
			b->len += (size_t)n;
			return 0;
		}
		size_t cap = b->cap ? b->cap * 2 : 256;
		while (cap - b->len <= (size_t)n)
			cap *= 2;
		char *p = realloc(b->data, cap);
		if (!p)
			return -1;
		b->data = p;
		b->cap = cap;
	}
}

int sd_buf_printf(struct sd_buf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int rc = sd_buf_vprintf(b, fmt, ap);
	va_end(ap);
	return rc;
}

int sd_buf_json_num(struct sd_buf *b, double v, int digits)
{
	if (!isfinite(v))
		return sd_buf_printf(b, "null");
	return sd_buf_printf(b, "%.*g", digits, v);
}

int sd_buf_json_string(struct sd_buf *b, const char *s)
{
	if (sd_buf_printf(b, "\""))
		return -1;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		int rc;
		if (*p == '"' || *p == '\\')
			rc = sd_buf_printf(b, "\\%c", *p);
		else if (*p < 0x20)
			rc = sd_buf_printf(b, "\\u%04x", *p);
		else
			rc = sd_buf_printf(b, "%c", *p);
		if (rc)
			return -1;
	}
	return sd_buf_printf(b, "\"");
}

void sd_buf_free(struct sd_buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
}
