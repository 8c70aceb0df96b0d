/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * An area's mounts as the mount table shows them now, told by their IDs
 * (the ones recorded at setup), never by "something is mounted on the
 * path": whether the bind over the directory is still there, was
 * moved or removed by someone else, or has something mounted over it; the
 * filesystems mounted below an area's directory; and what holds a
 * bind that will not unmount.
 *
 * Mount IDs are the ones of /proc/self/mountinfo's first field, which
 * statx(2) STATX_MNT_ID gives too.  The kernel reuses a freed
 * ID, so a mount found by ID is taken for the area's only when it is on
 * the area's filesystem as well.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libmount.h>

#include "area_internal.h"
#include "copy/copy.h"
#include "mount/mountfd.h"
#include "shared/util.h"
#include "mount/view.h"

const char *area_state_name(enum area_state s)
{
	switch (s) {
	case AREA_STATE_ACTIVE:
		return "active";
	case AREA_STATE_GONE:
		return "gone";
	case AREA_STATE_COVERED:
		return "covered";
	case AREA_STATE_DEGRADED:
		return "degraded";
	case AREA_STATE_INTERRUPTED:
		return "interrupted";
	}
	return "unknown";
}

enum area_state area_mounts_state(const struct area_mounts *f)
{
	if (!f->recorded)
		return AREA_STATE_DEGRADED; /* a setup that did not finish */
	if (!f->cover_present || !f->cover_at_path)
		return AREA_STATE_GONE;
	if (!f->cover_on_top)
		return AREA_STATE_COVERED;
	if (!f->area_mounted || !f->lower_mounted || f->carried_missing)
		return AREA_STATE_DEGRADED;
	return AREA_STATE_ACTIVE;
}

bool area_mounts_syncable(const struct area_mounts *f)
{
	/* the directory stayed hidden behind the area all along (a mount over
	 * the area hides both), and both private views are there */
	return f->recorded && f->cover_present && f->cover_at_path && f->area_mounted && f->lower_mounted;
}

enum area_sync_how area_mounts_sync_how(const struct area_mounts *f, bool overlay)
{
	if (!f->recorded)
		return AREA_SYNC_NONE;
	if (!f->area_mounted || !f->lower_mounted)
		return AREA_SYNC_UNSYNCABLE;
	/* an overlay's upper layer is applied the same way whether or not
	 * the overlay is still over the directory: stop unmounts it first */
	if (overlay)
		return AREA_SYNC_OVERLAY;
	return area_mounts_syncable(f) ? AREA_SYNC_LOCKED : AREA_SYNC_UNCOVERED;
}

void area_mounts_describe(const struct area_mounts *f, const char *path, char *buf, size_t len)
{
	buf[0] = '\0';
	if (!f->recorded)
		snprintf(buf, len, "its setup did not finish");
	else if (f->cover_present && !f->cover_at_path)
		snprintf(buf, len, "its bind over %s was moved to %s by someone else", path,
			 f->moved_to ? f->moved_to : "?");
	else if (!f->cover_present)
		snprintf(buf, len, "its bind over %s was unmounted by someone else", path);
	else if (!f->cover_on_top)
		snprintf(buf, len, "%s was mounted over it on %s by someone else",
			 f->covered_by ? f->covered_by : "another filesystem", path);
	else if (!f->area_mounted || !f->lower_mounted)
		snprintf(buf, len, "its private %s was unmounted by someone else",
			 !f->area_mounted ? "mount" : "view of the directory");
	else if (f->carried_missing)
		snprintf(buf, len, "%zu %s carried onto it from below %s %s unmounted", f->carried_missing,
			 f->carried_missing == 1 ? "filesystem or subvolume" : "filesystems or subvolumes", path,
			 f->carried_missing == 1 ? "was" : "were");
}

void area_mounts_done(struct area_mounts *f)
{
	free(f->moved_to);
	free(f->covered_by);
	*f = (struct area_mounts){ 0 };
}

/* the ID of the topmost mount on @path (walked without following links): 0 none */
static uint64_t top_id(const char *path)
{
	uint64_t id = 0;
	int fd = mountfd_open_nofollow(AT_FDCWD, path, O_PATH | O_DIRECTORY);

	if (fd >= 0) {
		if (mountfd_id(&mountfd_kernel_ops, fd, &id, NULL) < 0)
			id = 0;
		close(fd);
	}
	return id;
}

/* seed = overlay: the bind over the directory is an overlay whose upper
 * layer is in the area (@area/upper, area_overlay.c) */
static bool fs_is_overlay_of(struct libmnt_fs *fs, const char *area)
{
	char *v = NULL;
	size_t n = 0, len = strlen(area);

	if (!streq(mnt_fs_get_fstype(fs), "overlay") || mnt_fs_get_option(fs, "upperdir", &v, &n) != 0 || !v)
		return false;
	return n == len + strlen("/upper") && strncmp(v, area, len) == 0 && strncmp(v + len, "/upper", 6) == 0;
}

/* Is @fs on the area's filesystem?  By device when the area's private mount
 * is there (@dev), else by the source the backend gave it (a tmpfs has
 * none); an overlay by its upper layer.  btrfs gives stat(2) a
 * subvolume's anonymous device, not the one mountinfo shows: there the
 * source tells. */
static bool fs_is_area(struct libmnt_fs *fs, dev_t dev, const struct state_area *st, const char *area)
{
	if (st->overlay)
		return fs_is_overlay_of(fs, area);
	return (dev && mnt_fs_get_devno(fs) == dev) || streq(mnt_fs_get_source(fs), st->device);
}

int area_mounts_probe(const struct area_dirs *d, const struct state_area *st, struct area_mounts *ret)
{
	struct libmnt_table *tb = view_read_table(VIEW_MOUNTINFO);
	struct libmnt_fs *cover = NULL, *top;
	uint64_t cover_id = st->cover_id, path_top;
	struct stat as;
	dev_t dev = 0;
	int r = 0;

	*ret = (struct area_mounts){ 0 };
	if (!tb)
		return -errno ? -errno : -ENOMEM;
	ret->area_mounted = area_is_mount_of(d->area, NULL);
	ret->lower_mounted = area_is_mount_of(d->lower, NULL);
	if (ret->area_mounted && stat(d->area, &as) == 0)
		dev = as.st_dev;
	path_top = top_id(st->path);
	/* a record of an older storaged, or of a setup killed between the
	 * bind and the record of its ID: the mount on the path, if the area's */
	if (!cover_id)
		cover_id = path_top;
	if (cover_id && (cover = view_find_id(tb, cover_id)) && !fs_is_area(cover, dev, st, d->area))
		cover = NULL; /* the ID was freed and given to another mount */
	ret->recorded = st->covered || st->cover_id || cover;
	ret->cover_present = cover != NULL;
	ret->cover_at_path = cover && mnt_fs_streq_target(cover, st->path);
	ret->cover_on_top = ret->cover_at_path && path_top == cover_id;
	if (cover && !ret->cover_at_path && !(ret->moved_to = strdup(mnt_fs_get_target(cover))))
		r = -ENOMEM;
	if (ret->cover_at_path && !ret->cover_on_top && path_top && (top = view_find_id(tb, path_top)) &&
	    !(ret->covered_by = view_fs_text(top)))
		r = -ENOMEM;
	for (size_t i = 0; i < st->n_carried; i++)
		if (!view_find_id(tb, st->carried[i]))
			ret->carried_missing++;
	mnt_unref_table(tb);
	return r;
}

enum area_state area_state_of(const struct area_dirs *d, const struct state_area *st, char *why, size_t len)
{
	struct area_mounts f;
	enum area_state s;

	if (area_mounts_probe(d, st, &f) < 0) {
		snprintf(why, len, "the mount table cannot be read");
		area_mounts_done(&f);
		return AREA_STATE_DEGRADED;
	}
	s = area_mounts_state(&f);
	area_mounts_describe(&f, st->path, why, len);
	area_mounts_done(&f);
	return s;
}

/* ---------------------------------------------------------------- below */

int area_submounts_top(char *const *targets, const char *path, char ***ret)
{
	char **v = NULL;

	for (size_t i = 0; targets && targets[i]; i++) {
		bool inner = !path_is_below(targets[i], path) || strv_contains(v, targets[i]);

		/* one under another below @path comes along with it (AT_RECURSIVE) */
		for (size_t j = 0; targets[j] && !inner; j++)
			inner = path_is_below(targets[i], targets[j]) && path_is_below(targets[j], path);
		if (!inner && strv_extend(&v, targets[i]) < 0) {
			strv_free(v);
			return -ENOMEM;
		}
	}
	*ret = v;
	return 0;
}

/* the device of the filesystem the mount point of @fs lies on: its parent's */
static dev_t parent_dev(struct libmnt_table *tb, struct libmnt_fs *fs)
{
	struct libmnt_fs *p = view_find_id(tb, (uint64_t)mnt_fs_get_parent_id(fs));

	return p ? mnt_fs_get_devno(p) : 0;
}

static int submounts(const char *path, dev_t not_on, char ***ret)
{
	struct libmnt_table *tb = view_read_table(VIEW_MOUNTINFO);
	struct libmnt_iter *itr = mnt_new_iter(MNT_ITER_FORWARD);
	_cleanup_strv_free_ char **all = NULL;
	struct libmnt_fs *fs;
	int r = tb && itr ? 0 : -ENOMEM;

	*ret = NULL;
	while (r == 0 && mnt_table_next_fs(tb, itr, &fs) == 0) {
		const char *t = mnt_fs_get_target(fs);

		if (t && path_is_below(t, path) && (!not_on || parent_dev(tb, fs) != not_on))
			r = strv_extend(&all, t);
	}
	if (r == 0)
		r = area_submounts_top(all, path, ret);
	mnt_free_iter(itr);
	mnt_unref_table(tb);
	return r;
}

int area_submounts(const char *path, char ***ret)
{
	return submounts(path, 0, ret);
}

static bool carried_has(const struct state_area *st, uint64_t id)
{
	for (size_t i = 0; i < st->n_carried; i++)
		if (st->carried[i] == id)
			return true;
	return false;
}

size_t area_explain_busy(const struct area_dirs *d, const struct state_area *st, bool procs, struct diag_list *m)
{
	struct libmnt_table *tb = view_read_table(VIEW_MOUNTINFO);
	struct libmnt_iter *itr = mnt_new_iter(MNT_ITER_FORWARD);
	struct libmnt_fs *fs;
	size_t n = 0;

	while (st->cover_id && tb && itr && mnt_table_next_fs(tb, itr, &fs) == 0) {
		_cleanup_free_ char *what = NULL;
		uint64_t id = (uint64_t)mnt_fs_get_id(fs);

		if ((uint64_t)mnt_fs_get_parent_id(fs) != st->cover_id || id == st->cover_id ||
		    carried_has(st, id) || !(what = view_fs_text(fs)))
			continue;
		n++;
		diag_error(m, NULL, 0,
			   "area '%s': %s was mounted on %s after start, on top of the area: unmount it ('umount %s'), run `%s stop` again, then mount it again if it is still wanted",
			   st->name, what, mnt_fs_get_target(fs), mnt_fs_get_target(fs), area_self(d));
	}
	mnt_free_iter(itr);
	mnt_unref_table(tb);
	if (n == 0 && procs) /* no mount on it: processes hold it */
		area_warn_open_files(st->name, st->path, AREA_OPEN_BUSY, m);
	return n;
}

int area_dir_at_path(const struct area_dirs *d, const struct state_area *st, const struct area_mounts *f)
{
	_cleanup_close_ int lowerfd = -EBADF, pathfd = -EBADF;
	struct stat l, p;

	if (!f->lower_mounted)
		return 0;
	lowerfd = open(d->lower, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (lowerfd < 0 || fstat(lowerfd, &l) < 0)
		return 0;
	/* rmdir(2) leaves no link: a sync into it would fail, or write
	 * into what is freed once the view lets go of it */
	if (l.st_nlink == 0)
		return -ENOENT;
	/* the bind over it is mounted on the directory itself: where the
	 * mount table says it is, the directory is */
	if (f->cover_at_path)
		return 0;
	/* the bind gone or moved by someone else: the path shows what is
	 * there now */
	pathfd = area_open_nofollow(st->path, O_PATH | O_DIRECTORY);
	if (pathfd >= 0 && fstat(pathfd, &p) == 0 && p.st_dev == l.st_dev && p.st_ino == l.st_ino)
		return 0;
	return -ESTALE;
}

void area_dir_describe(const struct area_mounts *f, const char *path, int gone, char *buf, size_t len)
{
	if (gone == -ENOENT)
		snprintf(buf, len, "its directory '%s' was deleted while the area was active", path);
	else if (f->cover_present && f->moved_to)
		snprintf(buf, len, "its directory '%s' was moved (or a directory above it renamed) to '%s'",
			 path, f->moved_to);
	else
		snprintf(buf, len, "its directory '%s' is not there any more: it was moved, or a directory above it renamed",
			 path);
}

int area_check_syncable(const struct area_dirs *d, const struct state_area *st, struct diag_list *m)
{
	struct area_mounts f;
	char why[PATH_MAX + 128];
	int r = area_mounts_probe(d, st, &f), gone = r < 0 ? 0 : area_dir_at_path(d, st, &f);

	area_mounts_describe(&f, st->path, why, sizeof(why));
	if (r < 0)
		diag_error(m, NULL, 0, "area '%s': reading the mount table: %s", st->name, strerror(-r));
	else if (gone < 0) {
		r = -ESTALE;
		area_dir_describe(&f, st->path, gone, why, sizeof(why));
		if (gone == -ENOENT)
			diag_error(m, NULL, 0,
				   "area '%s': %s: not synced back, its content is only in the area's RAM now: run `%s stop`, which keeps the area's whole tree in %s/ of the nearest directory above '%s' on its filesystem",
				   st->name, why, area_self(d), COPY_RESCUE_DIR, st->path);
		else
			diag_error(m, NULL, 0,
				   "area '%s': %s: not synced back, its content is only in the area's RAM now: move the directory back to '%s' and run `%s sync %s`, or run `%s stop`, which keeps the area's whole tree in %s/ of the nearest directory above '%s' on its filesystem",
				   st->name, why, st->path, area_self(d), st->name, area_self(d),
				   COPY_RESCUE_DIR, st->path);
	} else if (!area_mounts_syncable(&f)) {
		r = -ESTALE;
		diag_error(m, NULL, 0,
			   "area '%s': %s: not synced back into '%s'%s; `%s stop` says what becomes of its content",
			   st->name, why, st->path,
			   f.area_mounted && f.lower_mounted
				   ? ", which may hold files written to it while it was uncovered"
				   : "",
			   area_self(d));
	} else if (!f.cover_on_top)
		diag_warning(m, NULL, 0,
			     "area '%s': %s: programs opening files under it reach that, not the area",
			     st->name, why);
	area_mounts_done(&f);
	return r;
}
