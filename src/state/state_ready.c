/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The readiness flags <dir>/ready/<fsid>: one empty file per assembled
 * btrfs filesystem, for other services to wait on (state.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "state.h"
#include "state_internal.h"
#include "shared/util.h"

static int ready_path(const char *dir, const char *fsid, char **ret)
{
	if (strchr(fsid, '/') || fsid[0] == '.')
		return -EINVAL;
	return asprintf(ret, "%s/ready/%s", dir, fsid) < 0 ? -ENOMEM : 0;
}

int state_mark_ready(const char *dir, const char *fsid)
{
	_cleanup_free_ char *sub = NULL, *path = NULL;
	int fd, r;

	r = state_mkdir(dir);
	if (r < 0)
		return r;
	if (asprintf(&sub, "%s/ready", dir) < 0)
		return -ENOMEM;
	r = state_mkdir(sub);
	if (r < 0)
		return r;
	r = ready_path(dir, fsid, &path);
	if (r < 0)
		return r;
	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

int state_clear_ready(const char *dir, const char *fsid)
{
	_cleanup_free_ char *path = NULL;
	int r = ready_path(dir, fsid, &path);

	if (r < 0)
		return r;
	if (unlink(path) < 0 && errno != ENOENT)
		return -errno;
	return 0;
}
