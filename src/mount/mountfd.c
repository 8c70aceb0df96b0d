/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Mounts made on descriptors, and a mount's identity (mountfd.h). */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <libmount.h>

#include "kernlog.h"
#include "mountfd.h"
#include "shared/util.h"
#include "view.h"

#ifndef MS_NOSYMFOLLOW
#define MS_NOSYMFOLLOW 256 /* linux/mount.h, Linux 5.10 */
#endif

/* ------------------------------------------------------------ the kernel */

static int sys_ret(long r)
{
	return r < 0 ? -errno : (int)r;
}

static int k_fsopen(void *u, const char *fstype, unsigned int flags)
{
	(void)u;
	return sys_ret(syscall(SYS_fsopen, fstype, flags));
}

static int k_fsconfig(void *u, int fd, unsigned int cmd, const char *key, const char *value, int aux)
{
	(void)u;
	return sys_ret(syscall(SYS_fsconfig, fd, cmd, key, value, aux));
}

static int k_fsmount(void *u, int fd, unsigned int flags, unsigned int attr)
{
	(void)u;
	return sys_ret(syscall(SYS_fsmount, fd, flags, attr));
}

static int k_move_mount(void *u, int from_fd, const char *from, int to_fd, const char *to, unsigned int flags)
{
	(void)u;
	return sys_ret(syscall(SYS_move_mount, from_fd, from, to_fd, to, flags));
}

static int k_open_tree(void *u, int dfd, const char *path, unsigned int flags)
{
	(void)u;
	return sys_ret(syscall(SYS_open_tree, dfd, path, flags));
}

static int k_mount_setattr(void *u, int dfd, const char *path, unsigned int flags,
			   struct mount_attr *attr, size_t size)
{
	(void)u;
	return sys_ret(syscall(SYS_mount_setattr, dfd, path, flags, attr, size));
}

static int k_mount(void *u, const char *source, const char *target, const char *type,
		   unsigned long flags, const void *data)
{
	(void)u;
	return sys_ret(mount(source, target, type, flags, data));
}

static int k_umount2(void *u, const char *target, int flags)
{
	(void)u;
	return sys_ret(umount2(target, flags));
}

/* STORAGED_TEST_OLD_MOUNT_IDS set: statx(2) as a kernel before 6.8
 * answers, without STATX_MNT_ID_UNIQUE (an unknown mask bit is ignored
 * and not set in stx_mask, statx(2)), so that the tests exercise on any
 * kernel what storaged does where mount IDs are only ever reused ones. */
static int k_statx(void *u, int dfd, const char *path, int flags, unsigned int mask, struct statx *stx)
{
	const char *old = secure_getenv("STORAGED_TEST_OLD_MOUNT_IDS");
	int r;

	(void)u;
	if (old && old[0])
		mask &= ~STATX_MNT_ID_UNIQUE;
	r = sys_ret(statx(dfd, path, flags, mask, stx));
	if (r == 0 && old && old[0])
		stx->stx_mask &= ~STATX_MNT_ID_UNIQUE;
	return r;
}

const struct mountfd_ops mountfd_kernel_ops = {
	.fsopen = k_fsopen,
	.fsconfig = k_fsconfig,
	.fsmount = k_fsmount,
	.move_mount = k_move_mount,
	.open_tree = k_open_tree,
	.mount_setattr = k_mount_setattr,
	.mount = k_mount,
	.umount2 = k_umount2,
	.statx = k_statx,
};

void mountfd_fd_path(int fd, char *buf, size_t len)
{
	snprintf(buf, len, "/proc/self/fd/%d", fd);
}

int mountfd_open_nofollow(int dirfd, const char *path, int flags)
{
	struct open_how how = {
		.flags = (uint64_t)(flags | O_NOFOLLOW | O_CLOEXEC),
		.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	return sys_ret(syscall(SYS_openat2, dirfd, path, &how, sizeof(how)));
}

/* ------------------------------------------------------------ options */

/* MS_* of the VFS map and what the new API makes of them. */
static const struct {
	unsigned long ms;
	unsigned int attr;
} attr_map[] = {
	{ MS_NOSUID, MOUNT_ATTR_NOSUID },	    { MS_NODEV, MOUNT_ATTR_NODEV },
	{ MS_NOEXEC, MOUNT_ATTR_NOEXEC },	    { MS_NOATIME, MOUNT_ATTR_NOATIME },
	{ MS_NODIRATIME, MOUNT_ATTR_NODIRATIME },   { MS_STRICTATIME, MOUNT_ATTR_STRICTATIME },
	{ MS_NOSYMFOLLOW, MOUNT_ATTR_NOSYMFOLLOW }, { MS_RDONLY, MOUNT_ATTR_RDONLY },
};

/* Superblock flags, given to fsconfig(2) by name (fs/fs_context.c,
 * common_set_sb_flag). */
static const struct {
	unsigned long ms;
	const char *name;
} sb_map[] = {
	{ MS_RDONLY, "ro" },	     { MS_SYNCHRONOUS, "sync" }, { MS_DIRSYNC, "dirsync" },
	{ MS_LAZYTIME, "lazytime" }, { MS_MANDLOCK, "mand" },
};

/* The atime modes: one value of a mount, set as a whole. */
#define ATIME_ATTR (MOUNT_ATTR_NOATIME | MOUNT_ATTR_STRICTATIME)

#define PROPAGATION (MS_PRIVATE | MS_SHARED | MS_SLAVE | MS_UNBINDABLE)

int mountfd_parse_options(const char *options, struct mountfd_opts *ret)
{
	char *user = NULL, *vfs = NULL;
	unsigned long fl = 0, known = MS_BIND | MS_REC | MS_SILENT | MS_RELATIME | PROPAGATION;
	int r;

	*ret = (struct mountfd_opts){ 0 };
	if (!options || !*options)
		return 0;
	r = mnt_split_optstr(options, &user, &vfs, &ret->fs, 0, 0);
	if (r == 0 && vfs)
		r = mnt_optstr_get_flags(vfs, &fl, mnt_get_builtin_optmap(MNT_LINUX_MAP));
	free(user);
	free(vfs);
	if (r < 0) {
		mountfd_opts_done(ret);
		return r == -ENOMEM ? r : -EINVAL;
	}
	for (size_t i = 0; i < sizeof(attr_map) / sizeof(attr_map[0]); i++)
		if (fl & attr_map[i].ms)
			ret->attr |= attr_map[i].attr;
	for (size_t i = 0; i < sizeof(attr_map) / sizeof(attr_map[0]); i++)
		known |= attr_map[i].ms;
	for (size_t i = 0; i < sizeof(sb_map) / sizeof(sb_map[0]); i++) {
		ret->sb_flags |= fl & sb_map[i].ms;
		known |= sb_map[i].ms;
	}
	ret->bind = fl & MS_BIND;
	ret->rbind = (fl & MS_BIND) && (fl & MS_REC);
	ret->propagation = fl & PROPAGATION;
	ret->propagation_rec = ret->propagation && (fl & MS_REC);
	/* remount, move and the like make no new mount: not an fstab entry's */
	if (fl & ~known) {
		mountfd_opts_done(ret);
		return -EINVAL;
	}
	/* `bg` is mount.nfs's (and mount_libmount() drops it too): a tmpfs or
	 * a bind given it by fsconfig(2) or mount(2) fails with EINVAL */
	if (ret->fs)
		mnt_optstr_remove_option(&ret->fs, "bg");
	if (ret->fs && !*ret->fs) {
		free(ret->fs);
		ret->fs = NULL;
	}
	return 0;
}

void mountfd_opts_done(struct mountfd_opts *o)
{
	free(o->fs);
	*o = (struct mountfd_opts){ 0 };
}

/* ------------------------------------------------------------ mounts */

/* Each filesystem option to fsconfig(2) on its own: "key=value" as a
 * string, "key" as a flag.  libmount's parser splits the string (a value
 * in quotes may hold a comma). */
static int config_fs_options(const struct mountfd_ops *ops, int fsfd, const char *fs)
{
	char *str = (char *)fs, *name, *value;
	size_t nsz, vsz;
	int r = 0;

	while (str && r >= 0 && mnt_optstr_next_option(&str, &name, &nsz, &value, &vsz) == 0) {
		char *k = strndup(name, nsz), *v = value ? strndup(value, vsz) : NULL;

		if (!k || (value && !v))
			r = -ENOMEM;
		else if (v)
			r = ops->fsconfig(ops->userdata, fsfd, FSCONFIG_SET_STRING, k, v, 0);
		else
			r = ops->fsconfig(ops->userdata, fsfd, FSCONFIG_SET_FLAG, k, NULL, 0);
		free(k);
		free(v);
	}
	return r < 0 ? r : 0;
}

/* The old API's flags, for the one mount(2) of mountfd_fs_at(). */
static unsigned long ms_flags(const struct mountfd_opts *o, unsigned int extra_attr)
{
	unsigned int attr = o->attr | extra_attr;
	unsigned long fl = o->sb_flags;

	for (size_t i = 0; i < sizeof(attr_map) / sizeof(attr_map[0]); i++)
		if (attr & attr_map[i].attr)
			fl |= attr_map[i].ms;
	return fl;
}

int mountfd_fs_at(const struct mountfd_ops *ops, const char *fstype, const char *source,
		  const struct mountfd_opts *o, int parent_fd, const char *name, int target_fd,
		  struct mount_identity *ret)
{
	char target[32];
	int r;

	*ret = (struct mount_identity){ 0 };
	/* a propagation flag is a second mount(2) call, and libmount keeps a
	 * value's quotes, which fsconfig(2) is given without */
	if (o->propagation || (o->fs && strchr(o->fs, '"')) || strchr(name, '/'))
		return -EAGAIN;
	mountfd_fd_path(target_fd, target, sizeof(target));
	r = ops->mount(ops->userdata, source, target, fstype, ms_flags(o, 0), o->fs);
	if (r < 0)
		return r;
	mount_identity_at(ops, parent_fd, name, ret); /* not a mount's root: zeroed */
	return 0;
}

/* Attaches the detached mount @mfd on @target_fd, then the propagation. */
static int attach(const struct mountfd_ops *ops, int mfd, int target_fd, unsigned long propagation, bool rec)
{
	int r = ops->move_mount(ops->userdata, mfd, "", target_fd, "",
				MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH);

	if (r == 0 && propagation)
		r = mountfd_set_propagation(ops, mfd, propagation, rec);
	return r;
}

int mountfd_fs(const struct mountfd_ops *ops, const char *fstype, const char *source,
	       const struct mountfd_opts *o, unsigned int extra_attr, int target_fd,
	       int *ret_mnt_fd, char *why, size_t whylen)
{
	/* a mount never attached dies with its last descriptor */
	_cleanup_close_ int fsfd = -EBADF, mfd = -EBADF;
	int r;

	if (ret_mnt_fd)
		*ret_mnt_fd = -1;
	fsfd = ops->fsopen(ops->userdata, fstype, FSOPEN_CLOEXEC);
	if (fsfd < 0)
		return fsfd;
	r = ops->fsconfig(ops->userdata, fsfd, FSCONFIG_SET_STRING, "source", source, 0);
	for (size_t i = 0; r >= 0 && i < sizeof(sb_map) / sizeof(sb_map[0]); i++)
		if (o->sb_flags & sb_map[i].ms)
			r = ops->fsconfig(ops->userdata, fsfd, FSCONFIG_SET_FLAG, sb_map[i].name, NULL, 0);
	if (r >= 0)
		r = config_fs_options(ops, fsfd, o->fs);
	if (r >= 0)
		r = ops->fsconfig(ops->userdata, fsfd, FSCONFIG_CMD_CREATE, NULL, NULL, 0);
	if (r >= 0)
		r = mfd = ops->fsmount(ops->userdata, fsfd, FSMOUNT_CLOEXEC, o->attr | extra_attr);
	if (r >= 0)
		r = attach(ops, mfd, target_fd, o->propagation, o->propagation_rec);
	/* the filesystem's own words, logged on the context */
	if (r < 0 && why && whylen)
		kernlog_fs_context(fsfd, why, whylen);
	if (r >= 0 && ret_mnt_fd)
		*ret_mnt_fd = TAKE_FD(mfd);
	return r < 0 ? r : 0;
}

int mountfd_bind(const struct mountfd_ops *ops, int source_fd, int target_fd, bool recursive,
		 unsigned int attr, unsigned long propagation, int *ret_mnt_fd)
{
	unsigned int rec = recursive ? AT_RECURSIVE : 0;
	_cleanup_close_ int tfd = -EBADF;
	int r = 0;

	if (ret_mnt_fd)
		*ret_mnt_fd = -1;
	/* the clone has the source mount's flags (fs/namespace.c clone_mnt):
	 * what @attr asks for is only ever added to them */
	tfd = ops->open_tree(ops->userdata, source_fd, "",
			     OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | rec);
	if (tfd < 0)
		return tfd;
	if (attr) {
		/* an atime mode is one value: it must be cleared as a whole
		 * to be set (EINVAL otherwise, fs/namespace.c build_mount_kattr) */
		struct mount_attr a = { .attr_set = attr,
					.attr_clr = attr & ATIME_ATTR ? MOUNT_ATTR__ATIME : 0 };

		r = ops->mount_setattr(ops->userdata, tfd, "", AT_EMPTY_PATH | rec, &a, sizeof(a));
	}
	if (r >= 0)
		r = ops->move_mount(ops->userdata, tfd, "", target_fd, "",
				    MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH);
	if (r >= 0 && propagation)
		r = mountfd_set_propagation(ops, tfd, propagation, false);
	if (r >= 0 && ret_mnt_fd)
		*ret_mnt_fd = TAKE_FD(tfd);
	return r < 0 ? r : 0;
}

int mountfd_set_propagation(const struct mountfd_ops *ops, int mnt_fd, unsigned long propagation, bool recursive)
{
	struct mount_attr a = { .propagation = propagation };

	return ops->mount_setattr(ops->userdata, mnt_fd, "", AT_EMPTY_PATH | (recursive ? AT_RECURSIVE : 0),
				  &a, sizeof(a));
}

int mountfd_id(const struct mountfd_ops *ops, int fd, uint64_t *ret_id, uint64_t *ret_unique_id)
{
	struct statx stx;
	int r;

	*ret_id = 0;
	if (ret_unique_id)
		*ret_unique_id = 0;
	r = ops->statx(ops->userdata, fd, "", AT_EMPTY_PATH | AT_NO_AUTOMOUNT, STATX_MNT_ID, &stx);
	if (r < 0)
		return r;
	*ret_id = stx.stx_mnt_id;
	if (ret_unique_id &&
	    ops->statx(ops->userdata, fd, "", AT_EMPTY_PATH | AT_NO_AUTOMOUNT, STATX_MNT_ID_UNIQUE,
		       &stx) == 0 &&
	    (stx.stx_mask & STATX_MNT_ID_UNIQUE))
		*ret_unique_id = stx.stx_mnt_id;
	return 0;
}

/*
 * The table, and the directory's path as it was while the table was read:
 * the path read before and after, the pair retried while the two differ.
 * A user renaming a directory on the way between the two reads would make
 * the table's mount point and the path disagree, and a mount that is there
 * would not be found.  Returns the table (the caller's), NULL with errno.
 */
static struct libmnt_table *table_and_path(int target_fd, char *mp, size_t len)
{
	char fdpath[32], again[4096];
	struct libmnt_table *tb = NULL;
	ssize_t n, m;

	mountfd_fd_path(target_fd, fdpath, sizeof(fdpath));
	for (int tries = 0; tries < 64; tries++) {
		mnt_unref_table(tb);
		n = readlink(fdpath, mp, len - 1);
		tb = n > 0 ? view_read_table(VIEW_MOUNTINFO) : NULL;
		m = tb ? readlink(fdpath, again, sizeof(again) - 1) : -1;
		if (!tb || m <= 0) {
			mnt_unref_table(tb);
			return NULL;
		}
		mp[n] = again[m] = '\0';
		if (strcmp(mp, again) == 0)
			break;
	}
	return tb;
}

int mountfd_top_id(const struct mountfd_ops *ops, int target_fd, uint64_t *ret_id)
{
	char mp[4096];
	struct libmnt_table *tb = table_and_path(target_fd, mp, sizeof(mp));
	struct libmnt_iter *it = mnt_new_iter(MNT_ITER_FORWARD);
	struct libmnt_fs *fs;
	uint64_t cur = 0;
	bool found = true;
	int r;

	*ret_id = 0;
	r = !tb ? -errno ?: -ENOMEM : !it ? -ENOMEM : mountfd_id(ops, target_fd, &cur, NULL);
	if (r < 0 || !cur)
		goto out;
	/* each mount stacked on that directory has the one below as parent */
	while (found) {
		found = false;
		mnt_reset_iter(it, MNT_ITER_FORWARD);
		while (mnt_table_next_fs(tb, it, &fs) == 0)
			if ((uint64_t)mnt_fs_get_parent_id(fs) == cur && mnt_fs_get_id(fs) > 0 &&
			    (uint64_t)mnt_fs_get_id(fs) != cur && mnt_fs_get_target(fs) &&
			    strcmp(mnt_fs_get_target(fs), mp) == 0) {
				cur = *ret_id = (uint64_t)mnt_fs_get_id(fs);
				found = true;
				break;
			}
	}
out:
	mnt_free_iter(it);
	mnt_unref_table(tb);
	if (r < 0)
		return r;
	return *ret_id ? 0 : -ENOENT;
}

int mountfd_open_id(const struct mountfd_ops *ops, uint64_t mnt_id, int flags)
{
	_cleanup_free_ char *dir = NULL;
	_cleanup_close_ int fd = -EBADF;
	struct statx stx;
	int r;

	r = mount_id_target(mnt_id, &dir);
	if (r < 0)
		return r;
	fd = mountfd_open_nofollow(AT_FDCWD, dir, flags);
	if (fd < 0)
		return fd;
	r = ops->statx(ops->userdata, fd, "", AT_EMPTY_PATH | AT_NO_AUTOMOUNT, STATX_MNT_ID, &stx);
	if (r == 0 && (stx.stx_mnt_id != mnt_id || !(stx.stx_attributes & STATX_ATTR_MOUNT_ROOT)))
		r = -ESTALE;
	return r < 0 ? r : TAKE_FD(fd);
}

/* ---------------------------------------------------------------- identity */

int mount_id_target(uint64_t id, char **ret)
{
	struct libmnt_table *tb = view_read_table(VIEW_MOUNTINFO);
	struct libmnt_fs *fs = tb ? view_find_id(tb, id) : NULL;
	int r = !tb ? -ENOMEM : !fs || !mnt_fs_get_target(fs) ? -ESTALE : 0;

	*ret = NULL;
	if (r == 0 && !(*ret = strdup(mnt_fs_get_target(fs))))
		r = -ENOMEM;
	mnt_unref_table(tb);
	return r;
}

int mount_identity_at(const struct mountfd_ops *ops, int dirfd, const char *name,
		      struct mount_identity *ret)
{
	const int at = AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT | (name[0] ? 0 : AT_EMPTY_PATH);
	struct statx stx;
	int r;

	*ret = (struct mount_identity){ 0 };
	r = ops->statx(ops->userdata, dirfd, name, at, STATX_MNT_ID | STATX_INO | STATX_BTIME, &stx);
	if (r < 0)
		return r;
	if (!stx.stx_mnt_id || !(stx.stx_attributes & STATX_ATTR_MOUNT_ROOT))
		return -ESTALE;
	ret->id = stx.stx_mnt_id;
	ret->root_dev = makedev(stx.stx_dev_major, stx.stx_dev_minor);
	ret->root_ino = stx.stx_ino;
	if (stx.stx_mask & STATX_BTIME)
		ret->root_btime_ns = (uint64_t)stx.stx_btime.tv_sec * 1000000000u + stx.stx_btime.tv_nsec;
	if (ops->statx(ops->userdata, dirfd, name, at, STATX_MNT_ID_UNIQUE, &stx) == 0 &&
	    (stx.stx_mask & STATX_MNT_ID_UNIQUE))
		ret->unique_id = stx.stx_mnt_id;
	return 0;
}

int mount_identity_path(const char *path, struct mount_identity *ret)
{
	return mount_identity_at(&mountfd_kernel_ops, AT_FDCWD, path, ret);
}

bool mount_identity_is(const struct mount_identity *now, const struct mount_identity *rec)
{
	if (now->id != rec->id)
		return false;
	if (now->unique_id && rec->unique_id)
		return now->unique_id == rec->unique_id;
	if (rec->root_ino)
		return now->root_dev == rec->root_dev && now->root_ino == rec->root_ino &&
		       now->root_btime_ns == rec->root_btime_ns;
	return true;
}
