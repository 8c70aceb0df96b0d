/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The area module's shared room (area_internal.h): where an area lives
 * under the state directory, how its paths are opened and checked, rm -rf,
 * the owner and mode of an area's root, and the list of areas.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "area_internal.h"
#include "mount/mountfd.h"
#include "shared/util.h"

bool area_name_is_valid(const char *name)
{
	return name && *name && !strchr(name, '/') && strcmp(name, ".") != 0 &&
	       strcmp(name, "..") != 0 && strlen(name) < NAME_MAX;
}

void area_dirs_done(struct area_dirs *d)
{
	free(d->top);
	free(d->state);
	free(d->area);
	free(d->lower);
	*d = (struct area_dirs){ 0 };
}

int area_dirs_init(struct area_dirs *d, const char *state_dir, const char *name, const char *self)
{
	*d = (struct area_dirs){ .self = self };
	if (!area_name_is_valid(name))
		return -EINVAL;
	if (asprintf(&d->top, "%s/areas/%s", state_dir, name) < 0)
		d->top = NULL;
	if (!d->top || asprintf(&d->state, "%s/state", d->top) < 0 ||
	    asprintf(&d->area, "%s/area", d->top) < 0 || asprintf(&d->lower, "%s/lower", d->top) < 0) {
		area_dirs_done(d);
		return -ENOMEM;
	}
	return 0;
}

int area_open_nofollow(const char *path, int flags)
{
	return mountfd_open_nofollow(AT_FDCWD, path, flags);
}

bool area_is_mount_of(const char *path, const char *ref)
{
	struct statx a, b;

	if (statx(AT_FDCWD, path, AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS, &a) < 0)
		return false;
	if (!(a.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) || !(a.stx_attributes & STATX_ATTR_MOUNT_ROOT))
		return false;
	if (!ref)
		return true;
	if (statx(AT_FDCWD, ref, AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS, &b) < 0)
		return false;
	return a.stx_dev_major == b.stx_dev_major && a.stx_dev_minor == b.stx_dev_minor;
}

int area_rm_rf_at(int parent, const char *name, dev_t dev)
{
	struct stat st;
	struct dirent *de;
	DIR *dir;
	int fd, r = 0;

	if (fstatat(parent, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (st.st_dev != dev)
		return -EBUSY;
	if (!S_ISDIR(st.st_mode))
		return unlinkat(parent, name, 0) < 0 && errno != ENOENT ? -errno : 0;
	fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	dir = fdopendir(fd);
	if (!dir) {
		close(fd);
		return -errno;
	}
	while (r == 0 && (de = readdir(dir)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			r = area_rm_rf_at(dirfd(dir), de->d_name, dev);
	closedir(dir);
	if (r == 0 && unlinkat(parent, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
		r = -errno;
	return r;
}

void area_root_owner(const struct area_config *a, const struct stat *root, uid_t *ret_uid,
		     gid_t *ret_gid, mode_t *ret_mode)
{
	*ret_uid = a->uid_set ? a->uid : root->st_uid;
	*ret_gid = a->gid_set ? a->gid : root->st_gid;
	*ret_mode = a->mode_set ? a->mode : (root->st_mode & 07777);
}

int area_set_root_owner(const char *dir, const struct area_config *a, const struct stat *root)
{
	uid_t uid;
	gid_t gid;
	mode_t mode;

	area_root_owner(a, root, &uid, &gid, &mode);
	if (chown(dir, uid, gid) < 0 || chmod(dir, mode) < 0)
		return -errno;
	return 0;
}

/* whether @fd, locked, is still the record @path names: a stop unlinks
 * the record of the area it tore down before it lets go of the lock */
static int record_still_named(int fd, const char *path)
{
	struct stat a, b;

	if (fstat(fd, &a) < 0)
		return -errno;
	if (fstatat(AT_FDCWD, path, &b, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : -errno;
	return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

int area_record_open_locked(const struct area_dirs *d, struct state_area *st)
{
	for (;;) {
		int fd = open(d->state, O_RDWR | O_CLOEXEC | O_NOFOLLOW), r;

		if (fd < 0)
			return -errno;
		r = flock(fd, LOCK_EX) < 0 ? -errno : record_still_named(fd, d->state);
		if (r == 1 && (r = state_area_read_fd(fd, st)) >= 0)
			return fd;
		close(fd);
		if (r < 0)
			return r;
		/* unlinked while this waited (the next open says so), or
		 * replaced by the record of a start since */
	}
}

int area_list_names(const char *state_dir, char ***ret)
{
	_cleanup_free_ char *dir = NULL;
	struct dirent **v = NULL;
	char **names = NULL;
	int n, r = 0;

	if (asprintf(&dir, "%s/areas", state_dir) < 0)
		return -ENOMEM;
	/* every area directory, with a state file or not: a setup killed
	 * before writing it leaves mounts that stop must find too */
	n = scandir(dir, &v, NULL, alphasort);
	if (n < 0 && errno != ENOENT)
		return -errno;
	for (int i = 0; i < n; i++) {
		if (r == 0 && area_name_is_valid(v[i]->d_name))
			r = strv_extend(&names, v[i]->d_name);
		free(v[i]);
	}
	free(v);
	if (r == 0 && !names && !(names = calloc(1, sizeof(char *))))
		r = -ENOMEM;
	if (r < 0) {
		strv_free(names);
		return r;
	}
	*ret = names;
	return 0;
}

int area_private_mounts(const char *state_dir, const char *name, char **ret_area, char **ret_lower)
{
	struct area_dirs d;
	int r = area_dirs_init(&d, state_dir, name, NULL);

	if (r < 0)
		return r;
	*ret_area = d.area;
	*ret_lower = d.lower;
	d.area = d.lower = NULL;
	area_dirs_done(&d);
	return 0;
}
