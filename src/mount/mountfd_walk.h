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

#include "mount_pool.h"
#include "view.h"
#include "mountfd.h"

struct libmnt_context;

/* One mount, as the executor asks for it. */
struct mountfd_request {
	bool bind; /* a bind or rbind entry: @source is a path */
	const char *source, *target;
	const char *fstype; /* "" for auto */
	const char *options; /* "" for none */
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

/**
 * mountfd_walk_mount:
 * @ops: the system calls (&mountfd_kernel_ops; a recording fake in tests)
 * @cxt: a libmount context ready for a mount (fresh or reset by the
 *       caller, helpers disabled or not), or NULL for a new one
 * @rq: the mount
 * @out: the result: ->error, ->message, and on success ->mountpoint (the
 *       mount point's path as the walked descriptor names it now) and the
 *       mount's IDs
 *
 * The mount point is opened with safepath_open() (X-mount.mkdir makes the
 * missing directories with mkdirat(2) on the walked descriptors), a bind
 * source too; a link the walk does not trust refuses the mount, with the
 * message of the old check ("refusing to mount: mount point '...': ...").
 * Then:
 *  - tmpfs, ramfs and binds whose options the new mount API takes: mounted
 *    by mountfd_fs() / mountfd_bind() onto the descriptors;
 *  - a mount helper (@rq->helper): libmount runs it as mount(8) does,
 *    "SOURCE MOUNTPOINT -o OPTIONS" with the entry's own names (it checks
 *    them, writes them to utab and prints them), canonicalisation off and
 *    libmount's X-mount.* left out (mount_helper_options()).  The helper
 *    resolves the name itself: when its mount is not on the walked
 *    directory afterwards, a mount of the entry's source that appeared
 *    elsewhere meanwhile is its own and is unmounted (only when it is the
 *    only one: mount_helper_mounted_elsewhere()), and the mount fails;
 *  - any other (a block device, a loop image): libmount, with
 *    "/proc/self/fd/N" as the target (and the bind source),
 *    canonicalisation off: the kernel's mount(2) reaches the walked
 *    directory through the magic link.  A loop image is checked by the
 *    walk but opened by libmount by its name.
 *
 * The mount table is the fact: a mount by libmount counts only when a new
 * mount is on the walked directory afterwards (mountfd_top_id(): its
 * parent is the mount the descriptor is on, its mount point the
 * descriptor's directory).  A helper that exits 0 with nothing mounted
 * fails at once, naming the helper and the mount point, unless @rq->pending
 * is set (see there).  `bg` is dropped from the options, so that a helper
 * mounts in the foreground (as systemd does).
 *
 * Returns: @out->error (0 or negative errno).
 */
int mountfd_walk_mount(const struct mountfd_ops *ops, struct libmnt_context *cxt,
		       const struct mountfd_request *rq, struct mount_reply *out);

#endif
