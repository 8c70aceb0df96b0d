/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Mounts made on descriptors (mountfd.h). */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <libmount.h>

#include "kernlog.h"
#include "mountfd.h"
#include "shared/util.h"

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

static int k_statx(void *u, int dfd, const char *path, int flags, unsigned int mask, struct statx *stx)
{
	(void)u;
	return sys_ret(statx(dfd, path, flags, mask, stx));
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

/* openat2(2)'s RESOLVE_NO_SYMLINKS by hand, one component at a time, for
 * where openat2 is missing (ENOSYS: kernels before 5.6, seccomp filters
 * that do not know it, valgrind 3.19). */
static int open_nofollow_walk(int dirfd, const char *path, int flags)
{
	_cleanup_free_ char *copy = strdup(path);
	char *save = NULL, *comp, *next;
	int cur, fd;
	struct stat st;

	if (!copy)
		return -ENOMEM;
	cur = openat(dirfd, path[0] == '/' ? "/" : ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (cur < 0)
		return -errno;
	comp = strtok_r(copy, "/", &save);
	if (!comp) /* "/" or "." itself */
		fd = openat(cur, ".", flags | O_CLOEXEC);
	while (comp) {
		next = strtok_r(NULL, "/", &save);
		fd = openat(cur, comp, (next ? O_PATH | O_DIRECTORY : flags) | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0 && (errno == ENOTDIR || errno == ELOOP) &&
		    fstatat(cur, comp, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
			errno = ELOOP; /* as RESOLVE_NO_SYMLINKS says it */
		if (fd < 0 || !next)
			break;
		close(cur);
		cur = fd;
		comp = next;
	}
	if (fd < 0)
		fd = -errno;
	close(cur);
	return fd;
}

int mountfd_open_nofollow(int dirfd, const char *path, int flags)
{
	struct open_how how = {
		.flags = (uint64_t)(flags | O_NOFOLLOW | O_CLOEXEC),
		.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	int r = sys_ret(syscall(SYS_openat2, dirfd, path, &how, sizeof(how)));

	return r == -ENOSYS ? open_nofollow_walk(dirfd, path, flags) : r;
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

#ifndef ST_NOSYMFOLLOW
#define ST_NOSYMFOLLOW_BIT 0x2000 /* linux/statfs.h, Linux 5.10 */
#else
#define ST_NOSYMFOLLOW_BIT ST_NOSYMFOLLOW
#endif

/* The atime modes: one value of a mount, set as a whole. */
#define ATIME_MS (MS_NOATIME | MS_RELATIME | MS_STRICTATIME)
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

void mountfd_opts_memo_done(struct mountfd_opts_memo *m)
{
	free(m->options);
	mountfd_opts_done(&m->o);
	*m = (struct mountfd_opts_memo){ 0 };
}

int mountfd_parse_options_memo(struct mountfd_opts_memo *m, const char *options, struct mountfd_opts *ret)
{
	if (!m)
		return mountfd_parse_options(options, ret);
	if (!m->options || !streq(m->options, options ? options : "")) {
		mountfd_opts_memo_done(m);
		m->r = mountfd_parse_options(options, &m->o);
		m->options = m->r == -ENOMEM ? NULL : strdup(options ? options : "");
		if (!m->options) {
			mountfd_opts_memo_done(m);
			return mountfd_parse_options(options, ret);
		}
	}
	*ret = m->o;
	ret->fs = NULL;
	if (m->r == 0 && m->o.fs && !(ret->fs = strdup(m->o.fs)))
		return -ENOMEM;
	return m->r;
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

/* The old API's flags for the mount(2) fallback. */
static unsigned long ms_flags(const struct mountfd_opts *o, unsigned int extra_attr)
{
	unsigned int attr = o->attr | extra_attr;
	unsigned long fl = o->sb_flags;

	for (size_t i = 0; i < sizeof(attr_map) / sizeof(attr_map[0]); i++)
		if (attr & attr_map[i].attr)
			fl |= attr_map[i].ms;
	return fl;
}

static int fs_fallback(const struct mountfd_ops *ops, const char *fstype, const char *source,
		       const struct mountfd_opts *o, unsigned int extra_attr, int target_fd)
{
	char target[32];
	int r;

	mountfd_fd_path(target_fd, target, sizeof(target));
	r = ops->mount(ops->userdata, source, target, fstype, ms_flags(o, extra_attr), o->fs);
	if (r == 0 && o->propagation)
		r = ops->mount(ops->userdata, "none", target, "none",
			       o->propagation | (o->propagation_rec ? MS_REC : 0), NULL);
	return r;
}

int mountfd_fs_at(const struct mountfd_ops *ops, const char *fstype, const char *source,
		  const struct mountfd_opts *o, int parent_fd, const char *name, int target_fd,
		  uint64_t *ret_id, uint64_t *ret_unique_id)
{
	const int at = AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT;
	char target[32];
	struct statx stx;
	int r;

	*ret_id = *ret_unique_id = 0;
	/* a propagation flag is a second mount(2) call, and libmount keeps a
	 * value's quotes, which fsconfig(2) is given without */
	if (o->propagation || (o->fs && strchr(o->fs, '"')) || strchr(name, '/'))
		return -EAGAIN;
	mountfd_fd_path(target_fd, target, sizeof(target));
	r = ops->mount(ops->userdata, source, target, fstype, ms_flags(o, 0), o->fs);
	if (r < 0)
		return r;
	if (ops->statx(ops->userdata, parent_fd, name, at, STATX_MNT_ID, &stx) < 0 ||
	    !(stx.stx_mask & STATX_MNT_ID) || !(stx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) ||
	    !(stx.stx_attributes & STATX_ATTR_MOUNT_ROOT))
		return 0;
	*ret_id = stx.stx_mnt_id;
	if (ops->statx(ops->userdata, parent_fd, name, at, STATX_MNT_ID_UNIQUE, &stx) == 0 &&
	    (stx.stx_mask & STATX_MNT_ID_UNIQUE))
		*ret_unique_id = stx.stx_mnt_id;
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
	       const struct mountfd_opts *o, unsigned int extra_attr, int target_fd, int *ret_mnt_fd)
{
	return mountfd_fs_why(ops, fstype, source, o, extra_attr, target_fd, ret_mnt_fd, NULL, 0);
}

int mountfd_fs_why(const struct mountfd_ops *ops, const char *fstype, const char *source,
		   const struct mountfd_opts *o, unsigned int extra_attr, int target_fd,
		   int *ret_mnt_fd, char *why, size_t whylen)
{
	int fsfd, mfd = -1, r;

	if (ret_mnt_fd)
		*ret_mnt_fd = -1;
	fsfd = ops->fsopen(ops->userdata, fstype, FSOPEN_CLOEXEC);
	if (fsfd == -ENOSYS)
		return fs_fallback(ops, fstype, source, o, extra_attr, target_fd);
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
	close(fsfd);
	if (r >= 0 && ret_mnt_fd) {
		*ret_mnt_fd = mfd;
		mfd = -1;
	}
	/* a mount never attached dies with its last descriptor */
	if (mfd >= 0)
		close(mfd);
	return r < 0 ? r : 0;
}

/* Detaches the mount whose root @mnt_fd is (lazily: @mnt_fd holds it). */
static void undo_attached(const struct mountfd_ops *ops, int mnt_fd)
{
	uint64_t id = 0;

	if (mountfd_id(ops, mnt_fd, &id, NULL) == 0 && id)
		mountfd_umount_id(ops, id, MNT_DETACH);
}

/* statvfs(3) f_flag bits and the MS_* of the same per-mount flag (the
 * kernel fills f_flags from the mount's flags, fs/statfs.c). */
static const struct {
	unsigned long st, ms;
} st_map[] = {
	{ ST_RDONLY, MS_RDONLY },     { ST_NOSUID, MS_NOSUID },
	{ ST_NODEV, MS_NODEV },	      { ST_NOEXEC, MS_NOEXEC },
	{ ST_NOATIME, MS_NOATIME },   { ST_NODIRATIME, MS_NODIRATIME },
	{ ST_RELATIME, MS_RELATIME }, { ST_NOSYMFOLLOW_BIT, MS_NOSYMFOLLOW },
};

/* The per-mount flags of the mount @fd is on, as MS_*. */
static int mount_flags_of(const struct mountfd_ops *ops, int fd, unsigned long *ret)
{
	struct statvfs sv;
	int r;

	*ret = 0;
	if (ops->fstatvfs)
		r = ops->fstatvfs(ops->userdata, fd, &sv);
	else
		r = fstatvfs(fd, &sv) < 0 ? -errno : 0;
	for (size_t i = 0; r == 0 && i < sizeof(st_map) / sizeof(st_map[0]); i++)
		if (sv.f_flag & st_map[i].st)
			*ret |= st_map[i].ms;
	return r;
}

/*
 * The flags of a bind remount (MS_REMOUNT|MS_BIND replaces every per-mount
 * flag, fs/namespace.c do_reconfigure_mnt): the source mount's, with @attr
 * added; an atime mode asked for replaces the source's.
 */
static int bind_remount_flags(const struct mountfd_ops *ops, int source_fd, unsigned int attr,
			      unsigned long *ret)
{
	struct mountfd_opts asked = { .attr = attr };
	unsigned long want = ms_flags(&asked, 0), src;
	int r = mount_flags_of(ops, source_fd, &src);

	if (r < 0)
		return r;
	if (want & ATIME_MS)
		src &= ~ATIME_MS;
	*ret = MS_REMOUNT | MS_BIND | src | want;
	return 0;
}

/* MS_REMOUNT|MS_BIND of the mount whose root @mnt_fd is (mount(2) on its
 * magic link: a mount root, as the remount needs). */
static int remount_bind(const struct mountfd_ops *ops, int mnt_fd, unsigned long flags)
{
	char p[32];

	mountfd_fd_path(mnt_fd, p, sizeof(p));
	return ops->mount(ops->userdata, "none", p, NULL, flags, NULL);
}

/*
 * Before Linux 5.2 (no open_tree(2)): mount(2) MS_BIND onto the magic link
 * of @target_fd, then, for attributes, the new mount is found by its ID
 * (mountfd_top_id()), opened as a mount root and remounted with the
 * source's flags and @attr.  A bind that cannot get them is unmounted: it
 * would have rights its source has not.
 */
static int bind_fallback(const struct mountfd_ops *ops, int source_fd, int target_fd,
			 bool recursive, unsigned int attr, unsigned long propagation)
{
	char src[32], dst[32];
	unsigned long flags = 0;
	uint64_t id = 0;
	int mfd = -1, r;

	if (attr && (r = bind_remount_flags(ops, source_fd, attr, &flags)) < 0)
		return r;
	mountfd_fd_path(source_fd, src, sizeof(src));
	mountfd_fd_path(target_fd, dst, sizeof(dst));
	r = ops->mount(ops->userdata, src, dst, "none", MS_BIND | (recursive ? MS_REC : 0), NULL);
	if (r < 0 || (!attr && !propagation))
		return r;
	r = mountfd_top_id(ops, target_fd, &id);
	if (r >= 0)
		r = mfd = mountfd_open_id(ops, id, O_PATH);
	if (r >= 0 && attr)
		r = remount_bind(ops, mfd, flags);
	if (r >= 0 && propagation)
		r = mountfd_set_propagation(ops, mfd, propagation, false);
	if (mfd >= 0)
		close(mfd);
	if (r < 0 && id)
		mountfd_umount_id(ops, id, MNT_DETACH);
	return r < 0 ? r : 0;
}

int mountfd_bind(const struct mountfd_ops *ops, int source_fd, int target_fd, bool recursive,
		 unsigned int attr, unsigned long propagation, int *ret_mnt_fd)
{
	unsigned int rec = recursive ? AT_RECURSIVE : 0;
	unsigned long remount = 0;
	int tfd, r = 0;

	if (ret_mnt_fd)
		*ret_mnt_fd = -1;
	/* the clone has the source mount's flags (fs/namespace.c clone_mnt):
	 * what @attr asks for is only ever added to them */
	tfd = ops->open_tree(ops->userdata, source_fd, "",
			     OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | rec);
	if (tfd == -ENOSYS)
		return bind_fallback(ops, source_fd, target_fd, recursive, attr, propagation);
	if (tfd < 0)
		return tfd;
	if (attr) {
		/* an atime mode is one value: it must be cleared as a whole
		 * to be set (EINVAL otherwise, fs/namespace.c build_mount_kattr) */
		struct mount_attr a = { .attr_set = attr,
					.attr_clr = attr & ATIME_ATTR ? MOUNT_ATTR__ATIME : 0 };

		r = ops->mount_setattr(ops->userdata, tfd, "", AT_EMPTY_PATH | rec, &a, sizeof(a));
		/* Linux 5.2 to 5.11: a remount once attached, with the
		 * source's flags (a remount replaces them all) */
		if (r == -ENOSYS)
			r = bind_remount_flags(ops, source_fd, attr, &remount);
	}
	if (r >= 0)
		r = ops->move_mount(ops->userdata, tfd, "", target_fd, "",
				    MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH);
	if (r >= 0 && remount && (r = remount_bind(ops, tfd, remount)) < 0)
		undo_attached(ops, tfd); /* not left without the flags asked for */
	if (r >= 0 && propagation)
		r = mountfd_set_propagation(ops, tfd, propagation, false);
	if (r >= 0 && ret_mnt_fd) {
		*ret_mnt_fd = tfd;
		tfd = -1;
	}
	if (tfd >= 0)
		close(tfd);
	return r < 0 ? r : 0;
}

int mountfd_set_propagation(const struct mountfd_ops *ops, int mnt_fd, unsigned long propagation, bool recursive)
{
	struct mount_attr a = { .propagation = propagation };
	int r = ops->mount_setattr(ops->userdata, mnt_fd, "",
				   AT_EMPTY_PATH | (recursive ? AT_RECURSIVE : 0), &a, sizeof(a));

	if (r == -ENOSYS) {
		char p[32];

		mountfd_fd_path(mnt_fd, p, sizeof(p));
		r = ops->mount(ops->userdata, "none", p, "none",
			       propagation | (recursive ? MS_REC : 0), NULL);
	}
	return r;
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
	if (stx.stx_mask & STATX_MNT_ID)
		*ret_id = stx.stx_mnt_id;
	if (ret_unique_id &&
	    ops->statx(ops->userdata, fd, "", AT_EMPTY_PATH | AT_NO_AUTOMOUNT, STATX_MNT_ID_UNIQUE,
		       &stx) == 0 &&
	    (stx.stx_mask & STATX_MNT_ID_UNIQUE))
		*ret_unique_id = stx.stx_mnt_id;
	return 0;
}

int mountfd_umount_at(const struct mountfd_ops *ops, int parent_fd, const char *name,
		      uint64_t mnt_id, int flags)
{
	struct statx stx;
	char p[4096];
	int r;

	if (!*name || strchr(name, '/') || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
		return -EINVAL;
	if ((size_t)snprintf(p, sizeof(p), "/proc/self/fd/%d/%s", parent_fd, name) >= sizeof(p))
		return -ENAMETOOLONG;
	r = ops->statx(ops->userdata, parent_fd, name, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT,
		       STATX_MNT_ID, &stx);
	if (r < 0)
		return r;
	if (!(stx.stx_mask & STATX_MNT_ID) || stx.stx_mnt_id != mnt_id ||
	    !(stx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) ||
	    !(stx.stx_attributes & STATX_ATTR_MOUNT_ROOT))
		return -ESTALE;
	return ops->umount2(ops->userdata, p, flags | UMOUNT_NOFOLLOW);
}

/* The mount point of the mount with ID @mnt_id in /proc/self/mountinfo
 * (the path the kernel gives it now), strdup'ed into @ret.  Returns: 0;
 * -ESTALE when no mount has @mnt_id; -ENOMEM. */
static int id_target(uint64_t mnt_id, char **ret)
{
	struct libmnt_table *tb = mnt_new_table_from_file("/proc/self/mountinfo");
	struct libmnt_iter *it = mnt_new_iter(MNT_ITER_FORWARD);
	struct libmnt_fs *fs;
	int r = -ESTALE;

	*ret = NULL;
	if (!tb || !it)
		r = -ENOMEM;
	while (r == -ESTALE && mnt_table_next_fs(tb, it, &fs) == 0)
		if (mnt_fs_get_id(fs) > 0 && (uint64_t)mnt_fs_get_id(fs) == mnt_id && mnt_fs_get_target(fs))
			r = (*ret = strdup(mnt_fs_get_target(fs))) ? 0 : -ENOMEM;
	mnt_free_iter(it);
	mnt_unref_table(tb);
	return r;
}

int mountfd_top_id(const struct mountfd_ops *ops, int target_fd, uint64_t *ret_id)
{
	struct libmnt_table *tb = mnt_new_table_from_file("/proc/self/mountinfo");
	struct libmnt_iter *it = mnt_new_iter(MNT_ITER_FORWARD);
	struct libmnt_fs *fs;
	char fdpath[32], mp[4096];
	uint64_t cur = 0;
	bool found = true;
	ssize_t n;
	int r;

	*ret_id = 0;
	mountfd_fd_path(target_fd, fdpath, sizeof(fdpath));
	n = readlink(fdpath, mp, sizeof(mp) - 1);
	r = n <= 0 ? -errno : !tb || !it ? -ENOMEM : mountfd_id(ops, target_fd, &cur, NULL);
	if (r < 0 || !cur)
		goto out;
	mp[n] = '\0';
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

int mountfd_umount_id(const struct mountfd_ops *ops, uint64_t mnt_id, int flags)
{
	char *dir = NULL, *slash;
	int parent = -1, r;

	r = id_target(mnt_id, &dir);
	if (r < 0)
		goto out; /* -ESTALE: gone already, nothing of ours to unmount */
	slash = strrchr(dir, '/');
	if (!slash || !slash[1]) {
		r = -EINVAL; /* "/": never storaged's */
		goto out;
	}
	*slash = '\0';
	/* the mount table's path, walked without following any link: a link
	 * planted since cannot lead elsewhere, and the ID is checked there */
	parent = mountfd_open_nofollow(AT_FDCWD, dir[0] ? dir : "/", O_PATH | O_DIRECTORY);
	r = parent < 0 ? parent : mountfd_umount_at(ops, parent, slash + 1, mnt_id, flags);
out:
	if (parent >= 0)
		close(parent);
	free(dir);
	return r;
}

int mountfd_open_id(const struct mountfd_ops *ops, uint64_t mnt_id, int flags)
{
	char *dir = NULL;
	struct statx stx;
	int fd, r;

	r = id_target(mnt_id, &dir);
	if (r < 0)
		return r;
	fd = mountfd_open_nofollow(AT_FDCWD, dir, flags);
	free(dir);
	if (fd < 0)
		return fd;
	r = ops->statx(ops->userdata, fd, "", AT_EMPTY_PATH | AT_NO_AUTOMOUNT, STATX_MNT_ID, &stx);
	if (r == 0 && (!(stx.stx_mask & STATX_MNT_ID) || stx.stx_mnt_id != mnt_id ||
		       !(stx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) ||
		       !(stx.stx_attributes & STATX_ATTR_MOUNT_ROOT)))
		r = -ESTALE;
	if (r < 0) {
		close(fd);
		return r;
	}
	return fd;
}
