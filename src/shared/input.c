/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "input.h"
#include "shared/units.h"
#include "util.h"

static int too_big(const char *path, size_t max, struct diag_list *diags)
{
	char m[32];

	return diag_errno(diags, -EFBIG, path, 0, "larger than %s, which no such file is: check the path",
			  units_format_size(max, m, sizeof(m)));
}

static int check_file(const char *path, const struct stat *st, size_t max, bool check_owner,
		      struct diag_list *diags)
{
	if (!S_ISREG(st->st_mode))
		return diag_errno(diags, -EINVAL, path, 0, "not a regular file");
	if (check_owner && (st->st_uid != 0 || (st->st_mode & (S_IWGRP | S_IWOTH))))
		return diag_errno(diags, -EPERM, path, 0,
				  "owned by uid %u, mode %04o: storaged reads only root-owned files that group and others cannot write; run 'chown root:root %s; chmod go-w %s'",
				  (unsigned)st->st_uid, (unsigned)(st->st_mode & 07777), path, path);
	if ((uint64_t)st->st_size > max)
		return too_big(path, max, diags);
	return 0;
}

/* Reads to EOF, at most @max bytes (one more tells that the file grew). */
static int read_all(int fd, size_t max, char **ret, size_t *ret_len)
{
	size_t cap = 0, len = 0;
	char *buf = NULL, *nb;
	ssize_t n;

	for (;;) {
		if (len == cap) {
			cap = cap ? cap * 2 : 4096;
			if (cap > max + 1)
				cap = max + 1;
			if (len == cap || !(nb = realloc(buf, cap + 1))) {
				free(buf);
				return len == cap ? -EFBIG : -ENOMEM;
			}
			buf = nb;
		}
		n = read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	if (n < 0) {
		int r = -errno;

		free(buf);
		return r;
	}
	buf[len] = '\0';
	*ret = buf;
	*ret_len = len;
	return 0;
}

int input_read(const char *path, size_t max, bool check_owner, char **ret, size_t *ret_len,
	       struct diag_list *diags)
{
	return input_read_at(AT_FDCWD, path, path, max, check_owner, ret, ret_len, diags);
}

int input_read_at(int dirfd, const char *name, const char *path, size_t max, bool check_owner,
		  char **ret, size_t *ret_len, struct diag_list *diags)
{
	/* in a directory of drop-ins, a link could name a file nobody checked */
	int flags = O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | (dirfd != AT_FDCWD ? O_NOFOLLOW : 0);
	struct stat st;
	_cleanup_close_ int fd = -EBADF;
	int r;

	fd = openat(dirfd, name, flags);
	if (fd < 0) {
		r = -errno;
		if (r == -ENOENT)
			return r;
		if (r == -ELOOP && dirfd != AT_FDCWD)
			return diag_errno(diags, r, path, 0,
					  "a symbolic link: storaged does not follow links to its configuration files; put the file itself there, or name the file the link points to");
		return diag_errno(diags, r, path, 0, "cannot open: %s", strerror(-r));
	}
	if (fstat(fd, &st) < 0) {
		r = -errno;
		diag_error(diags, path, 0, "cannot stat: %s", strerror(-r));
	} else {
		r = check_file(path, &st, max, check_owner, diags);
	}
	if (r == 0) {
		r = read_all(fd, max, ret, ret_len);
		if (r == -EFBIG)
			r = too_big(path, max, diags);
		else if (r < 0 && r != -ENOMEM)
			diag_error(diags, path, 0, "cannot read: %s", strerror(-r));
	}
	return r;
}
