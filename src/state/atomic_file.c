/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <stdbool.h>
#include <dirent.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomic_file.h"
#include "shared/util.h"

int file_write_atomic(const char *path, mode_t mode, int (*write_fn)(FILE *f, const void *ud),
		      const void *ud)
{
	_cleanup_free_ char *tmp = NULL, *dir = strdup(path);
	_cleanup_close_ int dfd = -EBADF;
	int fd, r;
	FILE *f;

	if (!dir || asprintf(&tmp, "%s.XXXXXX", path) < 0)
		return -ENOMEM;
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return -errno;
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
	if (r == 0 && rename(tmp, path) < 0)
		r = -errno;
	if (r < 0)
		goto fail;
	/* the rename itself on disk: a reader after a crash finds the file */
	dfd = open(dirname(dir), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0)
		fsync(dfd);
	return 0;
fail:
	unlink(tmp);
	return r;
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
