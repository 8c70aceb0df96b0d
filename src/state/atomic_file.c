/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <stdbool.h>
#include <dirent.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomic_file.h"
#include "shared/util.h"

/* Creates "@name.XXXXXX" in @dirfd as mkostemp(3) would, O_EXCL and
 * O_NOFOLLOW: never a name someone planted.  Returns: the file's fd and
 * its name in @tmp; negative errno. */
static int open_temp_at(int dirfd, const char *name, char *tmp, size_t len)
{
	static const char chars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	unsigned char rnd[6];

	if ((size_t)snprintf(tmp, len, "%s.XXXXXX", name) >= len)
		return -ENAMETOOLONG;
	for (int tries = 0; tries < 100; tries++) {
		char *x = tmp + strlen(tmp) - 6;
		int fd;

		if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
			return -EIO;
		for (size_t i = 0; i < sizeof(rnd); i++)
			x[i] = chars[rnd[i] % (sizeof(chars) - 1)];
		fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0600);
		if (fd >= 0 || errno != EEXIST)
			return fd >= 0 ? fd : -errno;
	}
	return -EEXIST;
}

int file_write_atomic_at(int dirfd, const char *name, mode_t mode, int (*write_fn)(FILE *f, const void *ud),
			 const void *ud)
{
	char tmp[NAME_MAX + 1];
	_cleanup_close_ int dfd = -EBADF;
	int fd, r;
	FILE *f;

	fd = open_temp_at(dirfd, name, tmp, sizeof(tmp));
	if (fd < 0)
		return fd;
	f = fdopen(fd, "w");
	if (!f) {
		r = -errno;
		close(fd);
		goto fail;
	}
	r = write_fn(f, ud);
	if (r == 0 && (fflush(f) != 0 || fchmod(fd, mode) < 0 || fsync(fd) < 0))
		r = -errno;
	if (fclose(f) != 0 && r == 0)
		r = -EIO;
	if (r == 0 && renameat(dirfd, tmp, dirfd, name) < 0)
		r = -errno;
	if (r < 0)
		goto fail;
	/* the rename itself on disk: a reader after a crash finds the file
	 * (@dirfd may be O_PATH, which fsync(2) does not take) */
	dfd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0)
		fsync(dfd);
	return 0;
fail:
	unlinkat(dirfd, tmp, 0);
	return r;
}

int file_write_atomic(const char *path, mode_t mode, int (*write_fn)(FILE *f, const void *ud),
		      const void *ud)
{
	_cleanup_free_ char *dir = strdup(path), *file = strdup(path);
	_cleanup_close_ int dfd = -EBADF;

	if (!dir || !file)
		return -ENOMEM;
	dfd = open(dirname(dir), O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	return file_write_atomic_at(dfd, basename(file), mode, write_fn, ud);
}

/* "@base.XXXXXX": what mkostemp() made of "@base.XXXXXX" */
static bool is_temp_of(const char *name, const char *base)
{
	size_t n = strlen(base);

	return strncmp(name, base, n) == 0 && name[n] == '.' && strlen(name + n + 1) == 6;
}

int file_atomic_remove(const char *path)
{
	_cleanup_free_ char *dir = strdup(path), *file = strdup(path);
	const char *base;
	struct dirent *e;
	DIR *d;
	int r = 0;

	if (!dir || !file)
		return -ENOMEM;
	if (unlink(path) < 0 && errno != ENOENT)
		r = -errno;
	base = basename(file);
	d = opendir(dirname(dir));
	if (!d)
		return errno == ENOENT ? r : -errno;
	while ((e = readdir(d)))
		if (is_temp_of(e->d_name, base) && unlinkat(dirfd(d), e->d_name, 0) < 0 &&
		    errno != ENOENT && r == 0)
			r = -errno;
	closedir(d);
	return r;
}
