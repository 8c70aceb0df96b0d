/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Mounts that can hang (a network filesystem, FUSE, a device that may not
 * answer) run in a child of their own, forked for that one mount and
 * killed at its deadline with its process group, as systemd runs a mount
 * unit.  The mounts that cannot hang (a tmpfs, a bind of local
 * directories) run in storaged itself: a fork would be most of what they
 * cost.
 */
#ifndef STORAGED_MOUNT_CHILD_H
#define STORAGED_MOUNT_CHILD_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "mountfd.h"
#include "umount.h"
#include "view.h"

#include "parse/fstab.h"

/* A child running one mount. */
struct mount_child {
	pid_t pid;
	int fd; /* SOCK_SEQPACKET to the child: readable when a reply is there */
};

#define MOUNT_HERE_TYPES 2 /* tmpfs, ramfs */

struct libmnt_context;

/* The mount children of one executor pass; zero-initialised is empty. */
struct mount_children {
	struct mount_child *v;
	size_t n;
	struct libmnt_context *cxt; /* for the mounts run here */
	bool helper_checked[MOUNT_HERE_TYPES], helper_found[MOUNT_HERE_TYPES];
	pid_t *abandoned; /* killed children not reaped yet */
	size_t n_abandoned;
	/* the pass's mount table, local mounts and the directories the mounts
	 * run here walked to (dropped when a mount may cover them) */
	struct view view;
};

/* mount_reply.error of a reply that is not the last: the helper exited 0
 * with nothing mounted yet, and the child watches for the mount */
#define MOUNT_REPLY_PENDING 1

/* What a child says about one mount (sent whole: zero it first). */
struct mount_reply {
	int error; /* 0, a negative errno, or MOUNT_REPLY_PENDING */
	struct mount_identity mount; /* of the new mount; id 0 when unknown */
	char mountpoint[4096]; /* the mount point with links resolved, or "" */
	char message[1024]; /* for the user, or "" */
};

/*
 * @e: the entry (the child inherits it)
 * @options: mount options (NULL for none)
 * @ret_fd: the child's socket, readable when the mount ended (borrowed:
 *          valid until mount_child_finish() or mount_child_abandon())
 * @ret_here: the result when the mount ran here (returns 1)
 *
 * A mount that cannot hang (mount_child.c, runs_here()) runs here, at
 * once; any other runs in a child forked for it.  Either way the mount
 * goes through mountfd_walk_mount().
 *
 * Returns: 0 when a child runs the mount; 1 when it ran here (@ret_here,
 * whose ->error is the mount's result); negative errno from fork(2) or
 * socketpair(2).
 */
int mount_child_start(struct mount_children *mc, const struct fstab_entry *e, const char *options,
		      int *ret_fd, pid_t *ret_pid, struct mount_reply *ret_here);

/*
 * Reads the reply of the child on @fd into @ret and reaps the child (it
 * exits after its reply); a reply with ->error MOUNT_REPLY_PENDING
 * (->message says why) leaves it running: its socket becomes readable
 * again when the mount ends.
 *
 * Returns: 0 when a reply was read (the mount's own result is
 * @ret->error); -EIO when the child died (it is reaped and removed).
 */
int mount_child_finish(struct mount_children *mc, int fd, struct mount_reply *ret);

/*
 * Kills the child on @fd and every process of its process group (the
 * mount helper it runs) with SIGKILL, and removes it from @mc.  A
 * child stuck in the kernel may not die at once: it is reaped when it
 * does, at mount_children_close() or when storaged exits.
 */
void mount_child_abandon(struct mount_children *mc, int fd);

/* Waits for the children still running (a pass ends with each abandoned
 * or finished) and frees @mc. */
void mount_children_close(struct mount_children *mc);

/*
 * Drops the directories the pass's walks kept open: a mount made elsewhere
 * than by mount_child_start() (an area) may cover them.
 */
void mount_children_forget_dirs(struct mount_children *mc);

#endif
