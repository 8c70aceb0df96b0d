/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Unmounting, in one place: a mount storaged made is unmounted by the
 * identity recorded when it was made (struct mount_identity, mountfd.h),
 * never by whatever the name of its mount point leads to now.
 */
#ifndef STORAGED_UMOUNT_H
#define STORAGED_UMOUNT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mountfd.h"
#include "shared/log.h"

/*
 * @parent_fd: the directory that holds the mount point, opened by the safe
 *             walk (it is never looked up again)
 * @name: the mount point's name in it: one component, no '/'
 * @rec: the mount's identity as recorded when it was made
 * @flags: umount2(2) flags (MNT_DETACH); UMOUNT_NOFOLLOW is always added
 *
 * umount2(2) has no descriptor form, and a descriptor of the mount itself
 * makes it busy (EBUSY: the descriptor holds a reference).  So the mount
 * is reached as "/proc/self/fd/@parent_fd/@name": the magic link jumps to
 * the walked directory, and only @name is looked up, without following a
 * link (UMOUNT_NOFOLLOW).  It is unmounted only when the mount found there
 * is @rec (mount_identity_is()).  Between that check and umount2(2) the
 * name cannot change: a mount point cannot be renamed or replaced
 * (rename(2) fails with EBUSY), and @parent_fd is pinned.
 *
 * Returns: 0 unmounted; -ESTALE when what is there is not the recorded
 * mount (another mount, or none: nothing was unmounted); -EINVAL for a
 * @name that is not one component; negative errno from umount2(2).
 */
int umount_at(const struct mountfd_ops *ops, int parent_fd, const char *name,
	      const struct mount_identity *rec, int flags);

/*
 * @mnt_id: a mount's ID as recorded when it was made
 * @flags: as umount_at()
 *
 * Unmounts the mount @mnt_id wherever it is now: its mount point read from
 * the mount table, the parent opened without following any link
 * (mountfd_open_nofollow()), umount_at() there.  Returns: 0; -ESTALE when
 * no mount has @mnt_id; -ELOOP when the path to it holds a link now;
 * negative errno of umount2(2).
 */
int umount_id(uint64_t mnt_id, int flags);

/*
 * Makes the mount @mnt_id and every mount below it private
 * (mount_setattr(2), MS_PRIVATE, AT_RECURSIVE): each leaves the peer
 * group it was in, so that unmounting it no longer propagates.  A clone
 * of a shared mount (open_tree(2) OPEN_TREE_CLONE, an rbind) is a peer of
 * its source (fs/namespace.c clone_mnt()); unmounting a mount propagates
 * to the mounts at the same place on the peers of its parent
 * (Documentation/filesystems/sharedsubtree.rst, "umount semantics";
 * fs/pnode.c propagate_umount()), so that detaching the clone of a shared
 * tree unmounts the source's own submounts too.  Every mount below "/" is
 * shared where systemd is PID 1 (it makes "/" rshared at boot).
 *
 * Returns: 0; -ESTALE when no mount has @mnt_id (mountfd_open_id());
 * negative errno of mount_setattr(2).
 */
int umount_make_private(uint64_t mnt_id);

/*
 * Makes the mount @mnt_id read-only (@ro) or writable again
 * (mount_setattr(2) MOUNT_ATTR_RDONLY on that mount alone: its filesystem
 * and other mounts of it stay as they are).  The kernel refuses to make a
 * mount read-only while a file is open for writing through it (fs/namespace.c
 * mnt_make_readonly(): -EBUSY), so that once it succeeds no write through
 * the mount can land after it.  Returns: 0; -ESTALE when no mount has
 * @mnt_id; -EBUSY; negative errno of mount_setattr(2).
 */
int umount_set_readonly(uint64_t mnt_id, bool ro);

/*
 * @flags: as umount_at()
 *
 * umount_id() of a mount made private first (umount_make_private()): for
 * storaged's own clones of a tree mounted elsewhere, whose unmounting
 * must leave the source's submounts alone.
 *
 * Returns: 0; negative errno of umount_make_private() (nothing unmounted)
 * or umount_id().
 */
int umount_id_private(uint64_t mnt_id, int flags);

/*
 * @mnt_fd: a descriptor of a mount just made (the new mount API)
 *
 * Detaches (MNT_DETACH: the descriptor holds it) the mount @mnt_fd is
 * the root of, through "/proc/self/fd/N", for a mount made whose ID could
 * not be learnt, which stop could never find.
 */
void umount_fd_detached(int mnt_fd);

/*
 * @path: a mount point in storaged's own state directory, root's alone,
 *        whose name no one else can make lead elsewhere
 * @flags: umount2(2) flags (MNT_DETACH); UMOUNT_NOFOLLOW is always added
 *
 * Returns: 0; negative errno from umount2(2) (-EINVAL: not mounted,
 * -EBUSY: in use).
 */
int umount_private_path(const char *path, int flags);

/*
 * @lg: where a warning goes (the rbind that could not be made private)
 * @mp: where the mount was made, for a record without an ID and messages
 * @rec: its recorded identity; rec->id 0 for a record of a storaged
 *       before mount IDs were kept: the mount on top of @mp now
 * @recursive: an rbind: made private, then the mounts below it are
 *             unmounted first, deepest first, each by its ID
 * @err: on failure, what for the user: libmount's words for the errors
 *       ("target is busy", "not mounted"), "another mount took its place"
 *
 * stop's unmount (the ops table's ->umount()).  A user exchanging names
 * in the path meanwhile makes the walk fail or find another mount: tried
 * again, a few times.
 *
 * Returns: 0; -ESTALE when the recorded mount is gone; -EBUSY otherwise.
 */
int umount_recorded(const struct logger *lg, const char *mp, const struct mount_identity *rec,
		    bool recursive, char *err, size_t len);

#endif
