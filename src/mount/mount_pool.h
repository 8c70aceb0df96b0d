/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Mount workers: child processes that run mounts for the executor, one at a
 * time each, and stay for the next mount.  A mount runs outside storaged so
 * that one that hangs (a dead server, a helper that never returns) can be
 * killed at its deadline; keeping the worker saves a fork per mount, which
 * is most of the cost of mounting hundreds of tmpfs and bind entries.
 */
#ifndef STORAGED_MOUNT_POOL_H
#define STORAGED_MOUNT_POOL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "mountfd.h"
#include "umount.h"
#include "view.h"

#include "parse/fstab.h"

struct mount_worker {
	pid_t pid;
	int fd; /* SOCK_SEQPACKET to the worker: readable when a reply is there */
	bool busy;
};

#define MOUNT_HERE_TYPES 2 /* tmpfs, ramfs */

struct libmnt_context;

/* The workers of one executor pass; zero-initialised is an empty pool. */
struct mount_pool {
	struct mount_worker *v;
	size_t n;
	struct libmnt_context *cxt; /* for the mounts run here */
	bool helper_checked[MOUNT_HERE_TYPES], helper_found[MOUNT_HERE_TYPES];
	pid_t *abandoned; /* killed workers not reaped yet */
	size_t n_abandoned;
	/* the pass's mount table, local mounts and the directories the mounts
	 * run here walked to (dropped when a mount may cover them) */
	struct view view;
};

/* mount_reply.error of a reply that is not the last: the helper exited 0
 * with nothing mounted yet, and the worker watches for the mount */
#define MOUNT_REPLY_PENDING 1

/* What a worker says about one mount. */
struct mount_reply {
	int error; /* 0, a negative errno, or MOUNT_REPLY_PENDING */
	struct mount_identity mount; /* of the new mount; id 0 when unknown */
	char mountpoint[4096]; /* the mount point with links resolved, or "" */
	char message[1024]; /* for the user, or "" */
};

/**
 * mount_pool_start:
 * @pool: the pool (an idle worker is reused, else one is forked)
 * @e: the entry; its source, target and type are sent to the worker
 * @options: mount options (NULL for none)
 * @ret_fd: the worker's socket, readable when the mount ended (borrowed:
 *          valid until mount_pool_finish() or mount_pool_abandon())
 * @ret_pid: the worker's pid
 * @ret_here: the result when the mount ran here (returns 1)
 *
 * A mount that cannot hang (a tmpfs, ramfs or bind mount with no mount
 * helper whose paths lead only through local filesystems, checked with
 * view_is_local() without asking any remote filesystem) runs here,
 * at once; any other goes to a worker, where the mount point and a bind
 * source must pass safepath_check().  Either way the mount runs through
 * libmount with /etc/fstab ignored.
 *
 * Returns: 0 when a worker runs the mount; 1 when it ran here (@ret_here,
 * whose ->error is the mount's result); -E2BIG when the request does not
 * fit one message; negative errno from fork(2) or socketpair(2).
 */
int mount_pool_start(struct mount_pool *pool, const struct fstab_entry *e, const char *options,
		     int *ret_fd, pid_t *ret_pid, struct mount_reply *ret_here);

/**
 * mount_pool_finish:
 * Reads the reply of the worker on @fd into @ret and makes the worker idle;
 * a reply with ->error MOUNT_REPLY_PENDING (->message says why) leaves it
 * busy: its socket becomes readable again when the mount ends.
 *
 * Returns: 0 when a reply was read (the mount's own result is
 * @ret->error); -EIO when the worker died (it is reaped and removed).
 */
int mount_pool_finish(struct mount_pool *pool, int fd, struct mount_reply *ret);

/**
 * mount_pool_abandon:
 * Kills the worker on @fd and every process of its process group (the
 * mount helper it runs) with SIGKILL, and removes it from the pool.  A
 * worker stuck in the kernel may not die at once: it is reaped when it
 * does, at mount_pool_close() or when storaged exits.
 */
void mount_pool_abandon(struct mount_pool *pool, int fd);

/** mount_pool_close: ends the idle workers (they exit when their socket
 * closes), reaps them and frees the pool. */
void mount_pool_close(struct mount_pool *pool);

/**
 * mount_pool_forget_dirs:
 * Drops the directories the pass's walks kept open: a mount made elsewhere
 * than by mount_pool_start() (an area) may cover them.
 */
void mount_pool_forget_dirs(struct mount_pool *pool);

#endif
