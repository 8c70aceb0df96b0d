/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

char *strip(char *s)
{
	char *e;

	while (is_blank(*s))
		s++;
	e = s + strlen(s);
	while (e > s && is_blank(e[-1]))
		*--e = '\0';
	return s;
}

size_t strv_length(char *const *v)
{
	size_t n = 0;

	while (v && v[n])
		n++;
	return n;
}

char **strv_free(char **v)
{
	for (size_t i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
	return NULL;
}

void strv_freep(char ***v)
{
	*v = strv_free(*v);
}

int strv_push(char ***v, char *s)
{
	size_t n = strv_length(*v);
	char **nv = realloc(*v, (n + 2) * sizeof(char *));

	if (!nv)
		return -ENOMEM;
	nv[n] = s;
	nv[n + 1] = NULL;
	*v = nv;
	return 0;
}

int strv_extend(char ***v, const char *s)
{
	char *copy = strdup(s);
	int r;

	if (!copy)
		return -ENOMEM;
	r = strv_push(v, copy);
	if (r < 0)
		free(copy);
	return r;
}

int grow_array(void *v, size_t *cap, size_t n, size_t size)
{
	size_t c = *cap;
	void *p;

	if (n < c)
		return 0;
	while (c <= n)
		c = c ? c * 2 : 64;
	p = reallocarray(*(void **)v, c, size);
	if (!p)
		return -ENOMEM;
	*(void **)v = p;
	*cap = c;
	return 0;
}

bool unescape_hex(const char *s, size_t n, char dash, char *out, size_t size)
{
	const char *end = s + n;
	size_t k = 0;

	for (; s < end; k++) {
		if (k + 1 >= size)
			return false;
		if (s[0] == '\\' && s[1] == 'x' && end - s >= 4 && isxdigit((unsigned char)s[2]) &&
		    isxdigit((unsigned char)s[3])) {
			char hex[3] = { s[2], s[3], '\0' };

			out[k] = (char)strtoul(hex, NULL, 16);
			s += 4;
		} else {
			out[k] = *s == '-' ? dash : *s;
			s++;
		}
	}
	out[k] = '\0';
	return true;
}

bool uuid_is_text(const char *s)
{
	for (size_t i = 0; i < 36; i++) {
		bool dash = i == 8 || i == 13 || i == 18 || i == 23;

		if (dash ? s[i] != '-' : !isxdigit((unsigned char)s[i]))
			return false;
	}
	return s[36] == '\0';
}

bool strv_contains(char *const *v, const char *s)
{
	for (size_t i = 0; v && v[i]; i++)
		if (strcmp(v[i], s) == 0)
			return true;
	return false;
}

bool path_is_below(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	if (strcmp(dir, "/") == 0)
		return path[0] == '/' && path[1] != '\0';
	return strncmp(path, dir, n) == 0 && path[n] == '/' && path[n + 1] != '\0';
}

bool path_is_normalized(const char *path)
{
	const char *p = path;

	if (path[0] != '/')
		return false;
	if (strcmp(path, "/") == 0)
		return true;
	while (*p == '/') {
		const char *c = p + 1;
		size_t len = strcspn(c, "/");

		if (len == 0)
			return false; /* "//" or trailing slash */
		if ((len == 1 && c[0] == '.') || (len == 2 && c[0] == '.' && c[1] == '.'))
			return false;
		p = c + len;
	}
	return true;
}

int path_normalize(char *path)
{
	char *w = path;
	const char *r = path;

	if (!path || path[0] != '/')
		return -EINVAL;
	while (*r) {
		if (r[0] == '/' && (r[1] == '/' || r[1] == '\0')) {
			r++; /* "//" or a trailing "/" */
			continue;
		}
		if (r[0] == '/' && r[1] == '.' && (r[2] == '/' || r[2] == '\0')) {
			r += 2; /* "/./" or a trailing "/." */
			continue;
		}
		*w++ = *r++;
	}
	if (w == path)
		*w++ = '/';
	*w = '\0';
	return 0;
}

uint64_t realtime_usec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

char *shell_quote(const char *s, char *buf, size_t len)
{
	static const char plain[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+:@%,=";
	size_t o = 0;

	if (!len)
		return buf;
	if (*s && strspn(s, plain) == strlen(s)) {
		snprintf(buf, len, "%s", s);
		return buf;
	}
	/* room for the closing quote and the NUL is kept at each step */
	if (len < 3) {
		buf[0] = '\0';
		return buf;
	}
	buf[o++] = '\'';
	for (; *s; s++) {
		size_t need = *s == '\'' ? 4 : 1;

		if (o + need + 2 > len)
			break;
		if (*s == '\'') {
			memcpy(buf + o, "'\\''", 4);
		} else {
			buf[o] = *s;
		}
		o += need;
	}
	buf[o++] = '\'';
	buf[o] = '\0';
	return buf;
}

size_t utf8_char_len(const unsigned char *s)
{
	size_t n;
	unsigned cp;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4, cp = s[0] & 0x07;
	else
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if ((n == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
	    (n == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	return n;
}

uint64_t now_monotonic_usec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * USEC_PER_SEC + (uint64_t)ts.tv_nsec / 1000;
}

char *text_escape_controls(const char *in, char *out, size_t len)
{
	size_t k = 0;

	if (!len)
		return out;
	while (*in && k + 5 < len) {
		const unsigned char *s = (const unsigned char *)in;
		size_t n = utf8_char_len(s);

		if (n == 0 || *s < 0x20 || *s == 0x7f) {
			k += (size_t)snprintf(out + k, len - k, "\\%03o", *s);
			in++;
			continue;
		}
		memcpy(out + k, in, n);
		k += n;
		in += n;
	}
	out[k] = '\0';
	return out;
}

char *path_absolute(const char *path)
{
	_cleanup_free_ char *cwd = NULL;
	char *abs = NULL;

	if (path[0] == '/')
		return strdup(path);
	cwd = getcwd(NULL, 0);
	if (!cwd)
		return NULL;
	if (asprintf(&abs, "%s/%s", streq(cwd, "/") ? "" : cwd, path) < 0) {
		errno = ENOMEM;
		return NULL;
	}
	return abs;
}

int mkdir_owned_at(int dirfd, const char *name, const struct stat *owner, bool reuse)
{
	struct stat st;
	int fd, r;

	if (mkdirat(dirfd, name, 0700) == 0)
		reuse = false;
	else if (errno != EEXIST || !reuse)
		return -errno;
	fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0)
		r = -errno;
	else if (reuse)
		r = st.st_uid == owner->st_uid ? 0 : -EEXIST; /* another user's: not written into */
	else
		r = fchown(fd, owner->st_uid, owner->st_gid) < 0 || fchmod(fd, 0700) < 0 ? -errno : 0;
	if (r < 0) {
		close(fd);
		return r;
	}
	return fd;
}
