/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The operations table: every effect storaged has on the system goes
 * through it, for `start` (exec.c) and for `stop` (undo.c) alike.  The real
 * table is sysops.c's; the unit tests replace it with a recording fake, so
 * that the executors' logic runs without root and without a kernel.
 *
 * Each member returns 0 (or a count, where said) or a negative errno, and
 * never logs what it returns as an error: the executor decides what the
 * user is told.  @ud is the table's own context (struct sysops, or a fake).
 */
#ifndef STORAGED_OPS_H
#define STORAGED_OPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "shared/diag.h"
#include "mount/umount.h"
#include "devices/inventory.h"

struct fstab_entry;
struct plan_step;
struct state;
struct state_record;

/* A mount in progress: on the real system, in a child process, or already
 * ended when storaged ran it itself (see mount_child.h). */
struct exec_job {
	bool finished; /* set by ops->wait(), or by ops->mount_start() for a mount it ran itself */
	uint64_t deadline; /* CLOCK_MONOTONIC µs, USEC_INFINITY for none */
	/* Set by ops->mount_finish() on success, when it can tell: the mount
	 * table's ID of the new mount and its mount point with links resolved,
	 * so that `stop` undoes this mount and no other. */
	struct mount_identity mount; /* id 0 when unknown */
	char *mountpoint; /* owned (malloc), NULL when unknown */
	void *priv; /* the operations' own (a child's descriptor, a result): set by
		       mount_start, released by mount_finish or mount_abandon */
};

/*
 * What is mounted on a recorded mount point now, as `stop` needs to know
 * before it unmounts anything (ops->mount_inspect()).  Strings are owned
 * by the view; release with mount_view_done().
 */
struct mount_view {
	bool recorded_present; /* a mount with the record's ID is on that mount point,
				  or at @location */
	char *location; /* where the recorded mount is now, when it is not on the
			   recorded mount point (a directory above it was renamed;
			   known by its never-reused ID); NULL otherwise */
	bool has_top; /* something is mounted there (or at @location) at all */
	int top_id; /* the topmost mount on that mount point (or at @location) */
	bool top_id_reused; /* it has the record's ID, but its identity
			       (mount/umount.h) says it is another mount */
	char *top_source; /* as the mount table shows it, may be NULL */
	char *top_fstype; /* may be NULL */
	/* a mount on the topmost one, below its mount point, which makes
	 * its umount fail busy (view_find_child()): "SOURCE (FSTYPE)" and
	 * its mount point; both NULL when there is none */
	char *child_text, *child_target;
};

static inline void mount_view_done(struct mount_view *v)
{
	free(v->location);
	free(v->top_source);
	free(v->top_fstype);
	free(v->child_text);
	free(v->child_target);
	*v = (struct mount_view){ 0 };
}

struct ops {
	/* ---- devices: start */

	/* BTRFS_IOC_SCAN_DEV on @devnode (linux/btrfs.h). */
	int (*register_device)(void *ud, const char *devnode);
	/* BTRFS_IOC_DEVICES_READY: 1 ready, 0 not, negative errno. */
	int (*devices_ready)(void *ud, const char *devnode);
	/* BTRFS_IOC_FORGET_DEV on @devnode: the kernel drops an unmounted
	 * device it was told of; NULL where there is none to drop. */
	int (*forget_device)(void *ud, const char *devnode);
	/* A fresh inventory of block devices (caller frees @ret). */
	int (*rescan)(void *ud, struct inventory *ret, struct diag_list *diags);

	/* ---- mounts: start */

	/* Start mounting @e with @options (NULL for none); @job->deadline is
	 * set by the caller.  A mount that cannot hang may be run to its end
	 * at once: @job->finished is then set.  On error nothing runs. */
	int (*mount_start)(void *ud, const struct fstab_entry *e, const char *options,
			   struct exec_job *job);
	/* Collect a finished job: 0, or negative errno with a message for
	 * the user in @err (@errlen bytes); 1 when the job goes on and
	 * @err says why ("not yet mounted": a helper exited 0 with nothing
	 * mounted): ->finished is to be cleared and the job waited for
	 * again, up to the same deadline. */
	int (*mount_finish)(void *ud, struct exec_job *job, char *err, size_t errlen);
	/* Give up on a job whose deadline passed (kill it). */
	void (*mount_abandon)(void *ud, struct exec_job *job);

	/* ---- mounts: stop */

	/* What is mounted on @rec's mount point (its recorded mount ID and
	 * never-reused ID decide "still storaged's"); fills @ret (owned
	 * strings).  0, or negative errno when the mount table cannot be read. */
	int (*mount_inspect)(void *ud, const struct state_record *rec, struct mount_view *ret);
	/* Unmount the mount of @rec, found at @mountpoint, which must still
	 * be the one recorded (its identity, mount/umount.h); an rbind
	 * (rec->recursive) is made private and the mounts below it are
	 * unmounted first, deepest first.  -EBUSY (in use) or -ESTALE (not
	 * that mount any more), with a message for the user in @err. */
	int (*umount)(void *ud, const char *mountpoint, const struct state_record *rec, char *err,
		      size_t errlen);

	/* ---- RAM areas */

	/* Set up the area of @s; problems appended to @msgs.  Returns 1 when
	 * it is set up already (area_setup()). */
	int (*area_setup)(void *ud, const struct plan_step *s, struct diag_list *msgs);
	/* Undo the area @name as area_teardown() (area.h), syncing it back
	 * first when it persists; problems appended to @msgs. */
	int (*area_teardown)(void *ud, const char *name, struct diag_list *msgs);
	/* Copy the area @name back into the directory it covers, as
	 * area_sync() (area.h); problems appended to @msgs. */
	int (*area_sync)(void *ud, const char *name, struct diag_list *msgs);
	/* The names of the areas that have records of their own under the
	 * state directory (set up, or left by a setup killed midway), as an
	 * owned strv in @ret (NULL for none). */
	int (*area_list)(void *ud, char ***ret);

	/* ---- state and readiness */

	/* Write @st: @compact rewrites the whole file (end of a run), else the
	 * records changed since the last write are appended. */
	int (*state_save)(void *ud, struct state *st, bool compact);
	/* Create (@ready) or remove the readiness flag of btrfs @fsid
	 * (/run/storaged/ready/<fsid>). */
	int (*mark_ready)(void *ud, const char *fsid, bool ready);

	/* Optional: tell udev, and through it systemd, that btrfs @fsid, just
	 * mounted degraded, is usable (udev_change_btrfs_members()): the
	 * number of devices told, or negative errno. */
	int (*announce_usable)(void *ud, const char *fsid);

	/* ---- btrfs upkeep */

	/* Start a scrub of the btrfs filesystem mounted on @mountpoint in the
	 * background ("btrfs scrub start", btrfs-scrub(8)) and return once it
	 * runs: 0; -ENOENT no btrfs program; -EIO it refused. */
	int (*scrub_start)(void *ud, const char *mountpoint);

	/* ---- waiting and time */

	/* Block until one of @jobs finishes (its ->finished is set), a block
	 * device may have appeared (*@ret_event), or @deadline (µs) passes.
	 * -EINTR when the user interrupted (SIGINT, SIGTERM). */
	int (*wait)(void *ud, struct exec_job *const *jobs, size_t n_jobs, uint64_t deadline,
		    bool *ret_event);
	/* CLOCK_MONOTONIC in µs. */
	uint64_t (*now)(void *ud);
	/* Optional: a one-line status for the service manager (sd_notify STATUS=). */
	void (*status)(void *ud, const char *text);
};

#endif
