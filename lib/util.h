/*
 * util.h - small helpers shared by the core: socket I/O, time, strings,
 * hex, hashing.
 */
#ifndef SD_UTIL_H
#define SD_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* Write or read exactly len bytes on a socket, retrying after signals;
 * 0 on success, -1 when the peer is gone or an error occurred.  Writing
 * never raises SIGPIPE. */
int sd_send_full(int fd, const void *buf, size_t len);
int sd_recv_full(int fd, void *buf, size_t len);

/* Monotonic time in seconds. */
double sd_now(void);
/* Wall-clock time in seconds since the epoch. */
double sd_wall_now(void);

/* Format `bytes` with a binary suffix: 1024 -> "1K", 1536 -> "1536". */
void sd_format_size(uint64_t bytes, char *buf, size_t len);

/* Hex-encode len bytes into out (2*len+1 bytes). */
void sd_hex_encode(const void *data, size_t len, char *out);
/* Decode 2*len hex characters into out; returns 0 or -1 on bad input. */
int sd_hex_decode(const char *hex, void *out, size_t len);

/* 64-bit FNV-1a of len bytes, continuing from h (start: SD_FNV_INIT). */
#define SD_FNV_INIT 0xcbf29ce484222325ull
uint64_t sd_fnv1a(uint64_t h, const void *data, size_t len);

/* A random RFC 4122 version 4 UUID as 36 characters plus NUL. */
void sd_uuid4(char out[37]);

/* Copy src into dst (size len), always NUL-terminated, truncating. */
void sd_strlcpy(char *dst, const char *src, size_t len);

/* strdup of s, NULL for NULL; *bad set when out of memory (so that many
 * copies are checked once). */
char *sd_dupstr(const char *s, int *bad);

/*
 * Copy src into dst (size len) in at most max characters without cutting
 * a word: when it is longer, it ends at the last space, comma or
 * semicolon that leaves room for `more` (e.g. " ..."), which is then
 * appended; a first word longer than that is cut.  Returns 1 when src
 * was shortened, else 0.
 */
int sd_clip_words(char *dst, size_t len, const char *src, size_t max,
		  const char *more);

/*
 * Where to break the first line of s to wrap it at `width` columns: the
 * length of that line.  All of s when it fits; else before the last space
 * that fits, else after the last comma that fits; a word longer than the
 * width is never broken (the line holds it whole and is longer).  The
 * caller skips the spaces after the break.
 */
size_t sd_wrap_len(const char *s, size_t width);

/*
 * Write len bytes as the whole of the file at path: into PATH.tmp,
 * flushed and synced (fsync's EINVAL, a pipe or a special file, is not a
 * failure), then renamed over path, so that a reader never sees half a
 * file; on a failure PATH.tmp is removed and path left as it was.
 * Returns 0; -1 with errno set and `failed` (failedlen bytes) the path
 * that failed (PATH.tmp or path); -2 when PATH.tmp is too long a name.
 */
int sd_write_replace(const char *path, const void *data, size_t len,
		     char *failed, size_t failedlen);

/* Append to a growing malloc'd string; returns 0 or -1 (out of memory). */
struct sd_buf {
	char *data;
	size_t len, cap;
};
int sd_buf_printf(struct sd_buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* The same with a va_list (which it leaves as it was given). */
int sd_buf_vprintf(struct sd_buf *b, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));
int sd_buf_json_string(struct sd_buf *b, const char *s);
/* A JSON number to `digits` significant digits, or null when v is NaN or
 * infinite (JSON has neither). */
int sd_buf_json_num(struct sd_buf *b, double v, int digits);
void sd_buf_free(struct sd_buf *b);

#endif
