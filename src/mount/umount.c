/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Unmounting by recorded identity (umount.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include <libmount.h>

#include "umount.h"
#include "view.h"
#include "shared/util.h"

/* ---------------------------------------------------------------- unmounting */

int umount_at(const struct mountfd_ops *ops, int parent_fd, const char *name,
	      const struct mount_identity *rec, int flags)
{
	struct mount_identity now;
	char p[4096];
	int r;

	if (!*name || strchr(name, '/') || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
		return -EINVAL;
	if ((size_t)snprintf(p, sizeof(p), "/proc/self/fd/%d/%s", parent_fd, name) >= sizeof(p))
		return -ENAMETOOLONG;
	r = mount_identity_at(ops, parent_fd, name, &now);
	if (r < 0)
		return r;
	if (!mount_identity_is(&now, rec))
		return -ESTALE;
	return ops->umount2(ops->userdata, p, flags | UMOUNT_NOFOLLOW);
}

/* Unmounts the mount @rec wherever it is now (a user may have renamed the
 * directory it covers): its mount point is read from the mount table, the
 * parent directory opened without following any link, and umount_at()
 * checks the identity there.  Returns: 0; -ESTALE when no mount has @rec's
 * ID (nothing to do) or the path leads to another mount; -EINVAL for "/";
 * -ELOOP when the path to it now holds a link (refused, nothing
 * unmounted); negative errno of umount2(2). */
static int umount_identity(const struct mountfd_ops *ops, const struct mount_identity *rec, int flags)
{
	_cleanup_free_ char *dir = NULL;
	_cleanup_close_ int parent = -EBADF;
	char *slash;
	int r;

	r = mount_id_target(rec->id, &dir);
	if (r < 0)
		return r; /* -ESTALE: gone already, nothing of ours to unmount */
	slash = strrchr(dir, '/');
	if (!slash || !slash[1])
		return -EINVAL; /* "/": never storaged's */
	*slash = '\0';
	/* the mount table's path, walked without following any link: a link
	 * planted since cannot lead elsewhere, and the identity is checked there */
	parent = mountfd_open_nofollow(AT_FDCWD, dir[0] ? dir : "/", O_PATH | O_DIRECTORY);
	return parent < 0 ? parent : umount_at(ops, parent, slash + 1, rec, flags);
}

int umount_id(uint64_t mnt_id, int flags)
{
	return umount_identity(&mountfd_kernel_ops, &(struct mount_identity){ .id = mnt_id }, flags);
}

int umount_make_private(uint64_t mnt_id)
{
	/* closed on return: it holds the mount, unmounting would fail busy */
	_cleanup_close_ int fd = mountfd_open_id(&mountfd_kernel_ops, mnt_id, O_PATH | O_DIRECTORY);

	return fd < 0 ? fd : mountfd_set_propagation(&mountfd_kernel_ops, fd, MS_PRIVATE, true);
}

int umount_set_readonly(uint64_t mnt_id, bool ro)
{
	_cleanup_close_ int fd = mountfd_open_id(&mountfd_kernel_ops, mnt_id, O_PATH | O_DIRECTORY);
	struct mount_attr a = { .attr_set = ro ? MOUNT_ATTR_RDONLY : 0, .attr_clr = ro ? 0 : MOUNT_ATTR_RDONLY };

	if (fd < 0)
		return fd;
	return mountfd_kernel_ops.mount_setattr(mountfd_kernel_ops.userdata, fd, "", AT_EMPTY_PATH, &a, sizeof(a));
}

int umount_id_private(uint64_t mnt_id, int flags)
{
	int r = umount_make_private(mnt_id);

	return r < 0 ? r : umount_id(mnt_id, flags);
}

void umount_fd_detached(int mnt_fd)
{
	char p[32];

	mountfd_fd_path(mnt_fd, p, sizeof(p));
	umount2(p, MNT_DETACH);
}

int umount_private_path(const char *path, int flags)
{
	return umount2(path, flags | UMOUNT_NOFOLLOW) < 0 ? -errno : 0;
}

/* ---------------------------------------------------------------- stop's unmount */

/* What libmount's umount says for the common errors (its excode messages),
 * so that stop's messages do not change with the way it unmounts. */
static const char *umount_error(int r)
{
	return r == -EBUSY		     ? "target is busy"
	       : r == -EINVAL		     ? "not mounted"
	       : r == -EPERM || r == -EACCES ? "must be superuser to unmount"
	       : r == -ELOOP		     ? "the path to it holds a symbolic link now; refused"
					     : strerror(-r);
}

/* Is a mount with @rec's ID in the table, and not shown to be another
 * mount?  Looked at through its path, for reading only: a path that
 * cannot be read, or leads to another ID (a user exchanging names), does
 * not tell, and counts as present. */
static bool recorded_present(const struct mount_identity *rec)
{
	struct mount_identity now;
	char *target = NULL;
	bool present;

	if (mount_id_target(rec->id, &target) < 0)
		return false;
	present = mount_identity_path(target, &now) < 0 || now.id != rec->id || mount_identity_is(&now, rec);
	free(target);
	return present;
}

/* umount_identity(), tried again while a user exchanging names in the
 * path makes the walk fail (-ELOOP) or find another mount (-ESTALE while
 * ours is still there).  Returns: as umount_identity(); -EBUSY when ours
 * is there but cannot be reached by its path. */
static int umount_retrying(const struct mount_identity *rec)
{
	int r = -ESTALE;

	for (int i = 0; i < 20; i++) {
		r = umount_identity(&mountfd_kernel_ops, rec, 0);
		if (r != -ELOOP && (r != -ESTALE || !recorded_present(rec)))
			break;
		if (r == -ESTALE)
			r = -EBUSY;
	}
	return r;
}

/* An rbind brought the mounts below its source along: they are undone
 * first, deepest first, each by its ID. */
static int umount_submounts(struct libmnt_table *tb, struct libmnt_fs *parent, char *err, size_t len)
{
	struct libmnt_iter *itr = mnt_new_iter(MNT_ITER_BACKWARD);
	struct libmnt_fs *child;
	int r = itr ? 0 : -ENOMEM;

	while (r == 0 && mnt_table_next_child_fs(tb, itr, parent, &child) == 0) {
		struct mount_identity id = { .id = (uint64_t)mnt_fs_get_id(child) };

		r = umount_submounts(tb, child, err, len);
		if (r == 0 && (r = umount_retrying(&id)) == -ESTALE)
			r = 0; /* gone meanwhile */
		if (r < 0)
			snprintf(err, len, "%s (below it): %s", mnt_fs_get_target(child), umount_error(r));
	}
	mnt_free_iter(itr);
	return r;
}

static int umount_below(uint64_t mount_id, char *err, size_t len)
{
	struct libmnt_table *tb = view_read_table(VIEW_MOUNTINFO);
	struct libmnt_fs *top = tb ? view_find_id(tb, mount_id) : NULL;
	int r = -ESTALE;

	if (!tb)
		r = -ENOMEM;
	else if (!top)
		snprintf(err, len, "another mount took its place");
	else
		r = umount_submounts(tb, top, err, len);
	mnt_unref_table(tb);
	return r;
}

/* the ID of the mount on top of @mp, or 0 */
static uint64_t top_id_at(const char *mp)
{
	struct libmnt_table *tb = view_read_table(VIEW_MOUNTINFO);
	struct libmnt_fs *top = tb ? mnt_table_find_target(tb, mp, MNT_ITER_BACKWARD) : NULL;
	int id = top ? mnt_fs_get_id(top) : 0;

	mnt_unref_table(tb);
	return id > 0 ? (uint64_t)id : 0;
}

/* Nothing is mounted on @mp: libmount's message for it. */
static int umount_path(const char *mp, char *err, size_t len)
{
	struct libmnt_context *cxt = mnt_new_context();
	char buf[512] = "";
	int rc, ex;

	if (!cxt)
		return -ENOMEM;
	mnt_context_set_optsmode(cxt, MNT_OMODE_IGNORE | MNT_OMODE_NOTAB);
	mnt_context_set_target(cxt, mp);
	rc = mnt_context_umount(cxt);
	ex = mnt_context_get_excode(cxt, rc, buf, sizeof(buf));
	mnt_free_context(cxt);
	if (ex == 0)
		return 0;
	snprintf(err, len, "%s", buf[0] ? buf : "unknown error");
	return -EBUSY;
}

int umount_recorded(const struct logger *lg, const char *mp, const struct mount_identity *rec,
		    bool recursive, char *err, size_t len)
{
	struct mount_identity id = *rec;
	int r;

	/* a record without an ID (from a storaged before mount IDs were
	 * kept): the mount on top of its path now, as then */
	if (!id.id && !(id.id = top_id_at(mp)))
		return umount_path(mp, err, len);
	if (recursive) {
		/* an rbind of a shared source is in its peer group: unmounting
		 * the copies would unmount the source's own submounts too */
		if ((r = umount_make_private(id.id)) < 0)
			log_warning(lg, "%s: cannot make the rbind private before undoing it: %s",
				    mp, strerror(-r));
		if ((r = umount_below(id.id, err, len)) < 0)
			return r == -ESTALE ? r : -EBUSY;
	}
	r = umount_retrying(&id);
	if (r == 0)
		return 0;
	if (r == -ESTALE) {
		snprintf(err, len, "another mount took its place");
		return r;
	}
	snprintf(err, len, "%s", umount_error(r));
	return -EBUSY;
}
