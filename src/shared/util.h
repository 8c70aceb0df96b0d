/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Small helpers shared by every module: cleanup attributes, string and path
 * tests, and NULL-terminated string vectors (strv).  Nothing here has side
 * effects beyond memory and closing the descriptors and streams it is given.
 */
#ifndef STORAGED_UTIL_H
#define STORAGED_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define _cleanup_(f) __attribute__((cleanup(f)))
#define _printf_(a, b) __attribute__((format(printf, a, b)))
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* A duration in microseconds that never ends ("infinity"). */
#define USEC_INFINITY UINT64_MAX
/* An unset per-entry duration: the configured default applies. */
#define USEC_UNSET (UINT64_MAX - 1)
#define USEC_PER_SEC UINT64_C(1000000)
#define USEC_PER_MSEC UINT64_C(1000)

/* CLOCK_MONOTONIC (clock_gettime(2)) in µs, the clock of every deadline
 * and of systemd's own timeouts. */
uint64_t now_monotonic_usec(void);

static inline void freep(void *p)
{
	free(*(void **)p);
}
#define _cleanup_free_ _cleanup_(freep)

/*
 * Closes @fd when it is one (negative values are ignored) and keeps errno as
 * it was, so a cleanup path can close after the failure it reports with %m.
 * close(2)'s own error is dropped: Linux frees the descriptor even when it
 * reports EINTR or EIO, so there is nothing to retry (close(2), "Dealing with
 * error returns from close()"); systemd's src/basic/fd-util.h does the same.
 *
 * Returns: -EBADF, for `fd = safe_close(fd);`.
 */
static inline int safe_close(int fd)
{
	if (fd >= 0) {
		int saved = errno;

		(void)close(fd);
		errno = saved;
	}
	return -EBADF;
}

static inline void closep(int *fd)
{
	*fd = safe_close(*fd);
}
/* An int variable holding an owned descriptor (or -1), closed at scope exit. */
#define _cleanup_close_ _cleanup_(closep)

/*
 * @fd: an lvalue holding an owned descriptor
 *
 * Moves ownership out of a _cleanup_close_ variable: evaluates to the
 * descriptor and leaves -EBADF behind, so the cleanup closes nothing.
 */
#define TAKE_FD(fd)                      \
	({                               \
		int take_fd_ = (fd);     \
		(fd) = -EBADF;           \
		take_fd_;                \
	})

static inline void fclosep(FILE **f)
{
	if (*f) {
		int saved = errno;

		(void)fclose(*f);
		errno = saved;
	}
}
/*
 * A FILE * opened for reading, closed at scope exit.  Not for streams that
 * were written: their fclose() reports the write error and must be checked.
 */
#define _cleanup_fclose_ _cleanup_(fclosep)

/*
 * Returns: true when @s starts with @prefix.
 */
static inline bool has_prefix(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

/*
 * Returns: true for a space or a tab, the blanks of fstab(5) and ini lines.
 */
static inline bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

/*
 * @s: string to edit in place
 *
 * Cuts trailing blanks (space, tab) by writing NULs.
 *
 * Returns: @s past its leading blanks.
 */
char *strip(char *s);

/*
 * Returns: number of strings before the terminating NULL (0 for NULL).
 */
size_t strv_length(char *const *v);

/*
 * @v: NULL-terminated vector of owned strings, or NULL
 *
 * Frees each string and the vector.  Returns NULL for convenient assignment.
 */
char **strv_free(char **v);
void strv_freep(char ***v);
#define _cleanup_strv_free_ _cleanup_(strv_freep)

/*
 * @v: pointer to a NULL-terminated vector (may point to NULL)
 * @s: owned string; ownership passes to the vector on success only
 *
 * Returns: 0, or -ENOMEM (then @s is still the caller's).
 */
int strv_push(char ***v, char *s);

/*
 * @s: copied
 *
 * Returns: 0, or -ENOMEM.
 */
int strv_extend(char ***v, const char *s);

/*
 * @v: address of the array pointer (may point to NULL); realloc(3)ed
 * @cap: its capacity in elements, updated
 * @n: an index the array must hold (usually its element count)
 * @size: bytes per element
 *
 * Doubles the capacity (64 the first time) until it exceeds @n, so that
 * appending one element at a time costs amortised O(1).
 *
 * Returns: 0, or -ENOMEM (then *@v and *@cap are as they were).
 */
int grow_array(void *v, size_t *cap, size_t n, size_t size);

/*
 * @s: text with "\xNN" escapes, as udev writes /dev/disk/by-* names
 *     and systemd unit names (systemd.unit(5))
 * @n: bytes of @s to read
 * @dash: what an unescaped '-' stands for ('-' itself for udev; '/' in a
 *        unit name, where "\x2d" is the dash)
 * @out: the decoded text, NUL-terminated
 *
 * Returns: false when the text does not fit in @out.
 */
bool unescape_hex(const char *s, size_t n, char dash, char *out, size_t size);

/*
 * Returns: true when @s is a UUID as `btrfs filesystem show` and blkid
 * print one: "5e81a1b2-7d2b-4b8e-9c1f-0a1b2c3d4e5f", 8-4-4-4-12 hex
 * digits of either case.
 */
bool uuid_is_text(const char *s);

/*
 * Returns: true when @v holds a string equal to @s.
 */
bool strv_contains(char *const *v, const char *s);

/*
 * @path as it is when absolute, else after the working directory and a
 * "/" (no link resolved, nothing normalised).
 *
 * Returns: a new string (caller frees); NULL with errno set (ENOMEM, or
 * getcwd(3)'s).
 */
char *path_absolute(const char *path);

/* Both strings present and equal. */
static inline bool streq(const char *a, const char *b)
{
	return a && b && strcmp(a, b) == 0;
}

/*
 * @path: absolute, normalised path
 * @dir: absolute, normalised directory
 *
 * Compares by path components, not by prefix: "/srv/data2" is not below
 * "/srv/data", and a path is not below itself.  "/" is above every other
 * absolute path.
 *
 * Returns: true when @path lies strictly below @dir.
 */
bool path_is_below(const char *path, const char *dir);

/*
 * Returns: true for an absolute path without "//", "." or ".." components
 * and without a trailing slash ("/" itself is normalised).
 */
bool path_is_normalized(const char *path);

/*
 * @path: a path, rewritten in place
 *
 * The spellings mount(8) accepts for one path, made one: "//" becomes "/",
 * "/./" and a trailing "/." or "/" are dropped.  ".." is kept (only a
 * lookup can tell what it means behind a link).
 *
 * One normaliser for fstab paths and the config's area paths alike.
 *
 * Returns: 0; -EINVAL when @path is not absolute (left as it was).
 */
int path_normalize(char *path);

#ifndef STATX_MNT_ID
#define STATX_MNT_ID 0x1000U /* linux/stat.h, Linux 5.8 */
#endif
#ifndef STATX_MNT_ID_UNIQUE
#define STATX_MNT_ID_UNIQUE 0x4000U /* linux/stat.h, Linux 6.8 */
#endif

/* The wall clock (CLOCK_REALTIME) in µs, as records keep it. */
uint64_t realtime_usec(void);

/*
 * @s: a word for a command line a user is told to run (a path)
 * @buf: receives @s as sh(1) reads it back: as it is when it has only
 *       letters, digits and / . _ - + : @ % , =; else in single quotes,
 *       each ' written as '\''
 * @len: size of @buf; a @s too long for it is cut (still quoted)
 *
 * Returns: @buf.
 */
char *shell_quote(const char *s, char *buf, size_t len);

/*
 * Pure.  RFC 3629 UTF-8: no overlong forms, no surrogates, nothing above
 * U+10FFFF.
 *
 * Returns: the length in bytes (1..4) of the UTF-8 sequence @s starts
 * with, or 0 when it does not start with one (a NUL byte ends any
 * sequence, so @s is never read past its end).
 */
size_t utf8_char_len(const unsigned char *s);

/*
 * @out: @in with each control character (a newline in a mount point or
 *   a file name) and each byte that is not part of a UTF-8 sequence
 *   written \ooo, as mountinfo writes them: one message, one line;
 *   journald keeps a message that is not UTF-8 as a blob journalctl does
 *   not show (systemd.journal-fields(7), MESSAGE=).  The one escaping of
 *   storaged's messages: every log line (log.c), the copy helper's report.
 * @len: size of @out; @in is cut at a whole character or escape
 *
 * Pure.  Returns: @out.
 */
char *text_escape_controls(const char *in, char *out, size_t len);

struct stat;

/*
 * mkdir_owned_at: a new directory @name below @dirfd, mode 0700, owned
 * by @owner's st_uid and st_gid (a rescue of a user's files: theirs, no
 * one else's to read); with @reuse the one there too when it is a
 * directory of @owner's (never one of another user's, nor a link).
 * Returns: the open directory (O_RDONLY), or negative errno (-EEXIST: there,
 * and not to be reused).
 */
int mkdir_owned_at(int dirfd, const char *name, const struct stat *owner, bool reuse);

#endif
