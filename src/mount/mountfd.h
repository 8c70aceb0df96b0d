/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Mounts made on descriptors, never on names looked up again.
 *
 * A root daemon that checks a path ("no link a user could have planted")
 * and then mounts on the path's name mounts wherever the name leads at
 * that moment: a user who owns a directory in the path can swap it for a
 * link between the check and the mount.  Here every mount goes onto (or
 * from) a descriptor that the safe walk opened (view_open(), or
 * openat2(2) RESOLVE_NO_SYMLINKS, Linux 5.6): the new mount API
 * (fsopen/fsconfig/fsmount, open_tree, move_mount with
 * MOVE_MOUNT_T_EMPTY_PATH: Linux 5.2; mount_setattr: Linux 5.12, the
 * minimum storaged needs, README.md).  One fast path takes mount(2) with
 * "/proc/self/fd/N" as its target, as container runtimes do (the magic
 * link jumps to the descriptor's directory without a lookup): a tmpfs in a
 * root-only directory, in one system call instead of seven
 * (mountfd_fs_at()).
 *
 * Each system call goes through struct mountfd_ops, so that a unit test
 * can check that a descriptor, and no path, reaches it.
 */
#ifndef STORAGED_MOUNTFD_H
#define STORAGED_MOUNTFD_H

#include <fcntl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/mount.h>
#include <sys/stat.h>

/* The system calls, each returning a descriptor or 0, or a negative errno
 * (never -1 and errno).  Path arguments are always "" (with an EMPTY_PATH
 * flag) or "/proc/self/fd/N[/NAME]" built here. */
struct mountfd_ops {
	int (*fsopen)(void *u, const char *fstype, unsigned int flags);
	int (*fsconfig)(void *u, int fd, unsigned int cmd, const char *key, const char *value, int aux);
	int (*fsmount)(void *u, int fd, unsigned int flags, unsigned int attr);
	int (*move_mount)(void *u, int from_fd, const char *from, int to_fd, const char *to,
			  unsigned int flags);
	int (*open_tree)(void *u, int dfd, const char *path, unsigned int flags);
	int (*mount_setattr)(void *u, int dfd, const char *path, unsigned int flags,
			     struct mount_attr *attr, size_t size);
	int (*mount)(void *u, const char *source, const char *target, const char *type,
		     unsigned long flags, const void *data);
	int (*umount2)(void *u, const char *target, int flags);
	int (*statx)(void *u, int dfd, const char *path, int flags, unsigned int mask, struct statx *stx);
	void *userdata;
};

/* The kernel's calls (syscall(2)); read-only. */
extern const struct mountfd_ops mountfd_kernel_ops;

/*
 * A mount's identity.  The mount table's ID (STATX_MNT_ID, Linux 5.8;
 * field 1 of /proc/PID/mountinfo, Documentation/filesystems/proc.rst) is
 * freed on unmount and handed out again lowest first (fs/namespace.c,
 * mnt_alloc_id(): ida_alloc()), so a mount made at the same place just
 * after often has it.  Linux 6.8 adds an ID that is never reused
 * (STATX_MNT_ID_UNIQUE, include/uapi/linux/stat.h).  Without it (Debian
 * 12 runs 6.1) the reused ID is told apart by what statx(2) says of the
 * mount's root directory (include/uapi/linux/stat.h, struct statx):
 *   - stx_dev_major/minor, the filesystem's device: a tmpfs or ramfs gets
 *     an anonymous one (fs/super.c, get_anon_bdev(): ida_alloc_range()),
 *     which is reused as the ID is, so it never counts alone;
 *   - stx_ino, the directory mounted (for a bind, its source);
 *   - stx_btime (STATX_BTIME), when that directory was made: for a new
 *     tmpfs its superblock's birth, in nanoseconds (mm/shmem.c,
 *     shmem_getattr(), since Linux 5.18); 0 where the filesystem does not
 *     report it (ramfs: its root's stx_ino comes from get_next_ino(), a
 *     counter that is not reused).
 * A later mount that agrees on all of them shows the same directory of
 * the same filesystem at the same place under the same ID.
 */
struct mount_identity {
	uint64_t id; /* STATX_MNT_ID: the mount table's, reused once freed */
	uint64_t unique_id; /* STATX_MNT_ID_UNIQUE, 0 when unknown */
	uint64_t root_dev; /* makedev(stx_dev_major, stx_dev_minor) of its root */
	uint64_t root_ino; /* stx_ino of its root; 0: no root facts (an older record) */
	uint64_t root_btime_ns; /* stx_btime of its root in ns, 0 when not reported */
};

/*
 * @id: a mount ID (STATX_MNT_ID)
 * @ret: the mount point of the mount with @id, as the mount table
 *       (/proc/self/mountinfo) names it now (caller frees)
 *
 * Returns: 0; -ESTALE when no mount has @id; -ENOMEM.
 */
int mount_id_target(uint64_t id, char **ret);

/*
 * @dirfd: a directory, or the mount itself with @name ""
 * @name: one component in @dirfd, not followed if a link; "" for @dirfd
 * @ret: the identity of the mount whose root @name is (zeroed on error)
 *
 * statx(2) through @ops, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT.
 *
 * Returns: 0; -ESTALE when it is not the root of a mount
 * (STATX_ATTR_MOUNT_ROOT); negative errno from statx(2).
 */
int mount_identity_at(const struct mountfd_ops *ops, int dirfd, const char *name,
		      struct mount_identity *ret);

/*
 * @path: an absolute path, its last component not followed if a link
 *
 * mount_identity_at() of the topmost mount on @path, for reading only
 * (`status`, and stop's look before it unmounts).
 */
int mount_identity_path(const char *path, struct mount_identity *ret);

/*
 * @now: a mount found now
 * @rec: what was recorded of storaged's mount
 *
 * Same ID, and: the never-reused IDs equal when both are known; else the
 * root facts equal when @rec has them; else (a record of a storaged that
 * kept only the ID) the ID alone.
 */
bool mount_identity_is(const struct mount_identity *now, const struct mount_identity *rec);


/* Mount options split for the new mount API (mountfd_parse_options()). */
struct mountfd_opts {
	unsigned int attr; /* MOUNT_ATTR_* for fsmount(2) / mount_setattr(2) */
	unsigned long sb_flags; /* MS_RDONLY, MS_SYNCHRONOUS, MS_DIRSYNC, MS_LAZYTIME, MS_MANDLOCK */
	unsigned long propagation; /* MS_PRIVATE, MS_SHARED, MS_SLAVE, MS_UNBINDABLE, or 0 */
	bool propagation_rec; /* rprivate, rshared, ...: AT_RECURSIVE */
	bool bind, rbind;
	char *fs; /* the filesystem's own options, "a=1,b" (owned; NULL for none) */
};

/*
 * @options: an fstab options string (NULL for none)
 * @ret: filled; free with mountfd_opts_done()
 *
 * Splits @options with libmount's option maps (mnt_split_optstr()): the
 * VFS ones become MOUNT_ATTR_* (nosuid, nodev, noexec, ro, noatime,
 * nodiratime, strictatime, nosymfollow), superblock flags, propagation and
 * bind/rbind; userspace ones (noauto, nofail, x-*, X-mount.mkdir, ...)
 * are for libmount and dropped; the rest are the filesystem's.
 *
 * Returns: 0; -EINVAL for a flag that has no meaning here (remount, move);
 * -ENOMEM.
 */
int mountfd_parse_options(const char *options, struct mountfd_opts *ret);
void mountfd_opts_done(struct mountfd_opts *o);

/*
 * @ops: the system calls (&mountfd_kernel_ops)
 * @fstype: "tmpfs", "ramfs", ...
 * @source: the source shown in the mount table ("tmpfs", "storaged-NAME")
 * @o: the options (mountfd_parse_options()); each filesystem option is
 *     given to fsconfig(2) on its own (a value that holds a comma stays whole)
 * @extra_attr: MOUNT_ATTR_* added to @o's (an area's nosuid,nodev)
 * @target_fd: the mount point, opened by the safe walk (O_PATH is enough)
 * @ret_mnt_fd: the new mount's root, O_PATH|O_CLOEXEC (caller closes);
 *              NULL when not wanted.
 * @why, @whylen: on failure, the messages the filesystem logged on the
 *                fsopen(2) context (kernlog_fs_context()), "" when none;
 *                NULL: not wanted
 *
 * fsopen, fsconfig (source, then each option, then FSCONFIG_CMD_CREATE),
 * fsmount with the attributes, move_mount(MOVE_MOUNT_F_EMPTY_PATH |
 * MOVE_MOUNT_T_EMPTY_PATH) onto @target_fd, and the propagation asked for
 * with mount_setattr(2).
 *
 * Returns: 0; negative errno of the first call that failed (then nothing
 * is left mounted: the detached mount is freed with its descriptor).
 */
int mountfd_fs(const struct mountfd_ops *ops, const char *fstype, const char *source,
	       const struct mountfd_opts *o, unsigned int extra_attr, int target_fd,
	       int *ret_mnt_fd, char *why, size_t whylen);

/*
 * @ops, @fstype, @source, @o: as mountfd_fs() (a tmpfs or a ramfs)
 * @parent_fd: the directory that holds the mount point, opened by the safe
 *             walk, where only root can rename or replace the mount point
 *             (safepath_open_cached()'s parent: struct safepath_trust)
 * @name: the mount point's name in @parent_fd: one component
 * @target_fd: the mount point, opened by the walk as @name in @parent_fd
 * @ret: the new mount's identity (mount_identity_at()); zeroed when not found
 *
 * The mount in one system call: mount(2) onto "/proc/self/fd/@target_fd"
 * with the options as one string, as mount(8) gives them, where
 * mountfd_fs() takes seven (fsopen, fsconfig per option, fsmount,
 * move_mount).  mount(2) gives no descriptor of the new mount, so its
 * identity is read by statx(2) of @name in @parent_fd (AT_SYMLINK_NOFOLLOW), a
 * lookup that ends in the topmost mount on the directory: ours, since no
 * one but root can have put another directory under @name; what is found
 * there must be the root of a mount.
 *
 * Returns: 0, @ret zeroed when what @name leads to is not a mount's root;
 * -EAGAIN when these options need mountfd_fs() (a propagation flag, a
 * quoted value); negative errno of mount(2) (nothing is mounted: the
 * caller may ask mountfd_fs() for the kernel's reason).
 */
int mountfd_fs_at(const struct mountfd_ops *ops, const char *fstype, const char *source,
		  const struct mountfd_opts *o, int parent_fd, const char *name, int target_fd,
		  struct mount_identity *ret);

/*
 * @source_fd: the directory (or file) to bind, opened by the safe walk
 * @target_fd: the mount point, opened by the safe walk
 * @recursive: rbind: the mounts below @source_fd come along (AT_RECURSIVE)
 * @attr: MOUNT_ATTR_* of the new mount (mount_setattr(2) before it is
 *        attached: it is never visible without them)
 * @propagation: MS_PRIVATE, ... for the new mount, or 0 to leave it as the
 *               kernel makes it
 * @ret_mnt_fd: as mountfd_fs()
 *
 * open_tree(@source_fd, "", OPEN_TREE_CLONE|AT_EMPTY_PATH[|AT_RECURSIVE])
 * and move_mount() onto @target_fd.  The clone keeps the source mount's
 * flags (nosuid, nodev, noexec, ro, ...): @attr is only added to them,
 * never put in their place, so a bind never gains a right its source
 * lacks; they are set with mount_setattr(2) before the clone is
 * attached.
 *
 * Returns: 0, or negative errno.
 */
int mountfd_bind(const struct mountfd_ops *ops, int source_fd, int target_fd, bool recursive,
		 unsigned int attr, unsigned long propagation, int *ret_mnt_fd);

/*
 * @mnt_fd: the root of a mount (its descriptor from mountfd_fs()/_bind(),
 *          or the mount point opened after the mount)
 * @propagation: MS_PRIVATE, MS_SHARED, MS_SLAVE or MS_UNBINDABLE
 *
 * mount_setattr(2) with AT_EMPTY_PATH.
 */
int mountfd_set_propagation(const struct mountfd_ops *ops, int mnt_fd, unsigned long propagation,
			    bool recursive);

/*
 * @ret_id: statx(2) STATX_MNT_ID of the mount @fd is on; 0 on error
 * @ret_unique_id: STATX_MNT_ID_UNIQUE (struct mount_identity), or 0
 *
 * Returns: 0; negative errno from statx(2).
 */
int mountfd_id(const struct mountfd_ops *ops, int fd, uint64_t *ret_id, uint64_t *ret_unique_id);

/*
 * @target_fd: a directory (a mount point), opened by the safe walk
 * @ret_id: the ID of the topmost mount stacked on that directory, or 0
 *
 * Follows /proc/self/mountinfo from the mount @target_fd is on (statx(2)
 * STATX_MNT_ID) through the mounts whose parent is the one before and
 * whose mount point is the directory's path (readlink of its magic link,
 * the same before and after the table was read: a rename meanwhile is
 * retried): paths are compared only along that one chain.
 *
 * Returns: 0; -ENOENT when nothing is mounted on the directory; negative
 * errno when the table or the descriptor cannot be read.
 */
int mountfd_top_id(const struct mountfd_ops *ops, int target_fd, uint64_t *ret_id);

/*
 * @mnt_id: a mount's ID as recorded when it was made
 * @flags: open flags (O_PATH | O_DIRECTORY); O_NOFOLLOW and O_CLOEXEC are added
 *
 * Opens the root of the mount with ID @mnt_id: its mount point from
 * /proc/self/mountinfo, walked without following any link, and checked to
 * be that mount's root (statx(2) STATX_MNT_ID, STATX_ATTR_MOUNT_ROOT).  For
 * mount_setattr(2) on a recorded mount; the descriptor holds the mount:
 * close it before unmounting (else -EBUSY).
 *
 * Returns: a descriptor (caller closes); -ESTALE when no mount has @mnt_id
 * or the path leads to another mount now; -ELOOP when the path holds a
 * link now; negative errno.
 */
int mountfd_open_id(const struct mountfd_ops *ops, uint64_t mnt_id, int flags);

/*
 * @path: resolved below @dirfd without following any link, magic links
 *        included (openat2(2) RESOLVE_NO_SYMLINKS|RESOLVE_NO_MAGICLINKS,
 *        Linux 5.6)
 * @flags: open flags; O_NOFOLLOW and O_CLOEXEC are added
 *
 * For paths that must hold no link at all (storaged's state directory,
 * an area's path once checked).  Returns: a descriptor or negative errno.
 */
int mountfd_open_nofollow(int dirfd, const char *path, int flags);

/** mountfd_fd_path: "/proc/self/fd/@fd" into @buf (at least 32 bytes). */
void mountfd_fd_path(int fd, char *buf, size_t len);

#endif
