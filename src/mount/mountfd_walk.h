/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Walk, then mount on what the walk opened: an fstab entry's mount point
 * (and a bind source, a loop image) is opened by safepath_open(), and the
 * mount goes onto that descriptor (mountfd.h), never onto the name looked
 * up again.
 */
#ifndef STORAGED_MOUNTFD_WALK_H
#define STORAGED_MOUNTFD_WALK_H

#include <stdbool.h>

#include "mount_child.h"
#include "view.h"
#include "mountfd.h"

struct libmnt_context;

/* One mount, as the executor asks for it. */
struct mountfd_request {
	bool bind; /* a bind or rbind entry: @source is a path */
	const char *source, *target;
	const char *fstype; /* "" for auto */
	const char *options; /* "" for none */
	/* x-systemd.rw-only (mount -w): a write-protected device fails the
	 * mount with the kernel's EROFS/EACCES, never retried read-only */
	bool rw_only;
	bool no_helper; /* no /sbin/mount.TYPE: a tmpfs or ramfs goes by the new API */
	/* the mount helper libmount runs for the type (mount_helper_find()),
	 * or NULL: it is given the entry's own names */
	const char *helper;
	/* A helper that exited 0 with nothing mounted yet (one that went on
	 * in the background): @pending, when set, is told so (a message for
	 * the user) and the mount table is then watched until the mount
	 * comes (the caller's deadline ends the wait by killing the process);
	 * when NULL, that is a failure at once. */
	void (*pending)(void *userdata, const char *msg);
	void *userdata;
	/* the pass's view (view_open(): its kept directories), or NULL; the
	 * caller tells it of the mount after (view_mounted()) */
	struct view *view;
};

/*
 * @ops: the system calls (&mountfd_kernel_ops; a recording fake in tests)
 * @cxt: a libmount context ready for a mount (fresh or reset by the
 *       caller, helpers disabled or not), or NULL for a new one
 * @out: the result: ->error, ->message, and on success ->mountpoint (the
 *       mount point's path as the walked descriptor names it now) and the
 *       mount's IDs
 *
 * The mount point (and a bind source) is opened with safepath_open(),
 * X-mount.mkdir making what is missing: a link the walk does not trust
 * refuses the mount ("refusing to mount: mount point '...': ...").  Then
 * tmpfs, ramfs and binds whose options the new mount API takes are
 * mounted onto the descriptors (mountfd.h); a mount helper (@rq->helper)
 * is run by libmount with the entry's own names, and a mount of its that
 * went elsewhere is undone (mountfd_walk.c, helper_went_elsewhere());
 * anything else (a block device, a loop image) goes through libmount with
 * "/proc/self/fd/N" as the target.  A loop image is checked by the walk
 * but opened by libmount by its name.
 *
 * A mount by libmount counts only when a new mount is on the walked
 * directory afterwards (mountfd_top_id()).  A helper that exits 0 with
 * nothing mounted fails at once unless @rq->pending is set.  `bg` is
 * dropped from the options, so that a helper mounts in the foreground (as
 * systemd does).
 *
 * Returns: @out->error (0 or negative errno).
 */
int mountfd_walk_mount(const struct mountfd_ops *ops, struct libmnt_context *cxt,
		       const struct mountfd_request *rq, struct mount_reply *out);

#endif
