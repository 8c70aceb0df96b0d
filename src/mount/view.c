/* SPDX-License-Identifier: GPL-2.0-or-later */
/* One view of the live system per pass (view.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "parse/fsfacts.h"
#include "shared/util.h"
#include "view.h"

/* ------------------------------------------------------------ the mount table */

struct libmnt_table *view_read_table(const char *path)
{
	return mnt_new_table_from_file(path);
}

struct libmnt_fs *view_find_id(struct libmnt_table *tb, uint64_t id)
{
	struct libmnt_iter *itr = mnt_new_iter(MNT_ITER_FORWARD);
	struct libmnt_fs *fs, *found = NULL;

	while (itr && !found && mnt_table_next_fs(tb, itr, &fs) == 0)
		if (mnt_fs_get_id(fs) > 0 && (uint64_t)mnt_fs_get_id(fs) == id)
			found = fs;
	mnt_free_iter(itr);
	return found;
}

struct libmnt_fs *view_find_child(struct libmnt_table *tb, uint64_t id, const char *target)
{
	struct libmnt_iter *itr = mnt_new_iter(MNT_ITER_FORWARD);
	struct libmnt_fs *fs, *found = NULL;

	while (itr && !found && mnt_table_next_fs(tb, itr, &fs) == 0)
		if ((uint64_t)mnt_fs_get_parent_id(fs) == id && !streq(mnt_fs_get_target(fs), target))
			found = fs;
	mnt_free_iter(itr);
	return found;
}

struct libmnt_fs *view_find_top(struct libmnt_table *tb, const char *target, unsigned id,
				struct libmnt_fs **ret_ours)
{
	struct libmnt_iter *it = mnt_new_iter(MNT_ITER_FORWARD);
	struct libmnt_fs *fs, *top = NULL;

	*ret_ours = NULL;
	while (it && mnt_table_next_fs(tb, it, &fs) == 0) {
		if (!streq(mnt_fs_get_target(fs), target))
			continue;
		top = fs;
		if (id && (unsigned)mnt_fs_get_id(fs) == id)
			*ret_ours = fs;
	}
	mnt_free_iter(it);
	return top;
}

bool view_mounted_ro(struct libmnt_table *tb, const char *mp)
{
	struct libmnt_fs *ours, *top = mp ? view_find_top(tb, mp, 0, &ours) : NULL;

	return top && mnt_optstr_get_option(mnt_fs_get_vfs_options(top), "ro", NULL, NULL) == 0;
}

char *view_fs_text(struct libmnt_fs *fs)
{
	const char *src = mnt_fs_get_source(fs), *type = mnt_fs_get_fstype(fs);
	char *s;

	if (asprintf(&s, "%s (%s)", src ? src : "none", type ? type : "?") < 0)
		return NULL;
	return s;
}

int view_watch_open(void)
{
	return open(VIEW_MOUNTINFO, O_RDONLY | O_CLOEXEC);
}

/* Where @id is, or would go, in v->mounts (sorted by ID). */
static size_t mount_pos(const struct view *v, uint64_t id)
{
	size_t lo = 0, hi = v->n_mounts;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v->mounts[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static struct view_mount *mount_find(const struct view *v, uint64_t id)
{
	size_t i = mount_pos(v, id);

	return i < v->n_mounts && v->mounts[i].id == id ? &v->mounts[i] : NULL;
}

static int mount_set(struct view *v, uint64_t id, bool local)
{
	struct view_mount *m = mount_find(v, id), *nv;

	if (m) {
		m->local = local;
		return 0;
	}
	if (v->n_mounts == v->cap_mounts) {
		size_t cap = v->cap_mounts ? 2 * v->cap_mounts : 64;

		nv = realloc(v->mounts, cap * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		v->mounts = nv;
		v->cap_mounts = cap;
	}
	m = &v->mounts[mount_pos(v, id)];
	memmove(m + 1, m, (size_t)(v->mounts + v->n_mounts - m) * sizeof(*m));
	*m = (struct view_mount){ .id = id, .local = local };
	v->n_mounts++;
	return 0;
}

/* (Re)reads the snapshot and learns the type of every mount in it. */
static struct libmnt_table *table_read(struct view *v)
{
	struct libmnt_table *tb = view_read_table(VIEW_MOUNTINFO);
	struct libmnt_iter *it = tb ? mnt_new_iter(MNT_ITER_FORWARD) : NULL;
	struct libmnt_fs *fs;

	if (!tb)
		return NULL;
	mnt_unref_table(v->tb);
	v->tb = tb;
	while (it && mnt_table_next_fs(tb, it, &fs) == 0)
		if (mount_set(v, (uint64_t)mnt_fs_get_id(fs), fsfacts_is_local(mnt_fs_get_fstype(fs))) < 0)
			break;
	mnt_free_iter(it);
	return tb;
}

struct libmnt_table *view_table(struct view *v)
{
	return v->tb ? v->tb : table_read(v);
}

/* Is the mount with @id (STATX_MNT_ID) one where a lookup never waits for
 * a server or an automount?  An ID the snapshot does not hold (a mount
 * made since it was read) refreshes it once; one still unknown is taken
 * as not local.  A binary search: a pass asks for every ancestor of every
 * entry. */
static bool view_mount_is_local(struct view *v, uint64_t id)
{
	struct view_mount *m;

	if (!v->tb)
		table_read(v);
	m = mount_find(v, id);
	if (!m && table_read(v))
		m = mount_find(v, id);
	if (!m && mount_set(v, id, false) == 0) /* asked once: not read again for it */
		m = mount_find(v, id);
	return m && m->local;
}

void view_mounted(struct view *v, uint64_t id, bool local, const char *mountpoint)
{
	if (id)
		mount_set(v, id, local);
	view_dirs_forget(&v->dirs, mountpoint);
}

/* ------------------------------------------------------------ walks for mounting */

int view_open(struct view *v, const char *path, mode_t mkdir_mode, int *ret_fd,
	      const struct view_dir **ret_parent, char *why, size_t len)
{
	return safepath_open_cached(v ? &v->dirs : NULL, path, mkdir_mode, ret_fd, ret_parent, why, len);
}

static bool is_local_cb(void *userdata, uint64_t id)
{
	return view_mount_is_local(userdata, id);
}

int view_is_local(struct view *v, const char *path)
{
	/* the directories kept by view_open() are all of paths found local */
	const struct safepath_local local = { .is_local = is_local_cb, .userdata = v, .known = &v->dirs };

	return safepath_is_local(path, &local);
}

/* ------------------------------------------------------------ walks for planning */
/* @path with every link resolved, as realpath(3), but by the kernel in one
 * lookup (realpath reads each component as a link): false when @path does
 * not exist (yet). */
static bool resolve_path(const char *path, char buf[static PATH_MAX])
{
	char proc[64];
	_cleanup_close_ int fd = open(path, O_PATH | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return false;
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	n = readlink(proc, buf, PATH_MAX - 1);
	if (n <= 0 || n >= PATH_MAX - 1 || buf[0] != '/') /* no /proc */
		return realpath(path, buf) != NULL;
	buf[n] = '\0';
	return true;
}

int view_resolve(struct view *v, const char *path, bool kernel, char buf[static PATH_MAX], mode_t *ret_mode)
{
	const struct safepath_local local = { .is_local = is_local_cb, .userdata = v };
	char whole[PATH_MAX];
	int r;

	*ret_mode = 0;
	if (strlen(path) >= PATH_MAX)
		return -ENAMETOOLONG;
	r = safepath_lookup(&v->dirs, path, &local, buf, ret_mode);
	if (r == SAFEPATH_STOPPED && kernel && resolve_path(path, whole)) {
		strcpy(buf, whole);
		return 0;
	}
	if (r < 0)
		strcpy(buf, path);
	return r < 0 ? r : 0;
}

void view_done(struct view *v)
{
	view_dirs_forget(&v->dirs, NULL);
	mnt_unref_table(v->tb);
	free(v->mounts);
	*v = (struct view){ 0 };
}
