/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * "Changed since the last sync" where times cannot tell (unchanged() in
 * copy_sync.c): a file mapped shared (shared/mapped.h) is written with no
 * time moved.  The area's mapped files are read at each sync and kept on
 * its root (COPY_SYNC_MAPPED_XATTR): a file mapped at one sync is compared
 * by content (data, link target, xattrs) at that one and the next, which
 * sees the writes of a mapping gone by then.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "copy_sync_internal.h"

int sync_mapped_setup(struct shared *sh, int areafd)
{
	struct stat st;
	int r;

	if (fstat(areafd, &st) < 0)
		return -errno;
	if ((r = mapped_scan(&sh->mapped_now, st.st_dev, NULL, 0)) < 0 ||
	    (r = mapped_load(&sh->mapped, areafd, COPY_SYNC_MAPPED_XATTR)) < 0 ||
	    (r = mapped_merge(&sh->mapped, &sh->mapped_now)) < 0)
		return r;
	mapped_sort(&sh->mapped_now);
	mapped_sort(&sh->mapped);
	return 0;
}

/* whether @a and @b hold the same xattrs, in whatever order each
 * filesystem lists them */
static bool same_xattrs(const struct copy_xattrs *a, const struct copy_xattrs *b)
{
	struct copy_xattr_iter it = copy_xattr_iter_of(a);
	const char *name, *val, *other;
	uint32_t n, k;

	if (a->len != b->len)
		return false;
	while (copy_xattrs_next(&it, &name, &val, &n))
		if (!(other = copy_xattrs_find(b, name, &k)) || k != n || memcmp(val, other, n))
			return false;
	return true;
}

/* the regular file @name of @dirfd, opened to be read (the atime stays),
 * checked to be @st's inode */
static int open_same(int dirfd, const char *name, const struct stat *st)
{
	struct stat now;
	int fd = openat(dirfd, name, O_RDONLY | O_NOATIME | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);

	if (fd < 0)
		return -errno;
	if (fstat(fd, &now) < 0 || now.st_ino != st->st_ino || now.st_dev != st->st_dev) {
		close(fd);
		return -ESTALE; /* replaced since it was looked at */
	}
	return fd;
}

int sync_same_content(int afd, int lfd, const char *name, const struct stat *ast, const struct stat *lst,
		      bool xattrs)
{
	struct copy_xattrs ax = { 0 }, lx = { 0 };
	int a, l, r;

	if ((a = open_same(afd, name, ast)) < 0)
		return a;
	r = l = open_same(lfd, name, lst);
	if (r >= 0 && !xattrs)
		r = 1;
	else if (r >= 0 && (r = copy_xattrs_read(a, false, &ax)) == 0 && (r = copy_xattrs_read(l, false, &lx)) == 0)
		r = same_xattrs(&ax, &lx);
	if (r == 1)
		r = same_file_data(a, l, ast->st_size);
	free(ax.buf);
	free(lx.buf);
	if (l >= 0)
		close(l);
	close(a);
	return r;
}
