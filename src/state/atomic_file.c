/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
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
	int fd, dfd, r;
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
	if (dfd >= 0) {
		fsync(dfd);
		close(dfd);
	}
	return 0;
fail:
	unlink(tmp);
	return r;
}
