/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `storaged status` shows the live system: each record of the state is
 * checked against the mount table (by the mount ID storaged recorded) and
 * the kernel's btrfs state (/sys/fs/btrfs/<fsid>/devinfo/<devid>/missing,
 * Documentation/ABI/testing/sysfs-fs-btrfs), so that a mount unmounted by
 * hand shows as gone, one mounted over or in its place as replaced, and a
 * btrfs that lost a member as degraded.
 */
#ifndef STORAGED_STATUS_LIVE_H
#define STORAGED_STATUS_LIVE_H

#include <libmount.h>

#include "area/area.h"
#include "devices/btrfs_live.h"
#include "mount/umount.h"
#include "state/state.h"

enum live_status {
	LIVE_AS_RECORDED, /* the record still describes the system */
	LIVE_GONE, /* storaged's mount is no longer in the mount table */
	LIVE_REPLACED, /* another mount is on its mount point */
	LIVE_DEGRADED, /* the btrfs has a member the kernel marks missing */
	/* a step recorded under way (a btrfs or a mount waiting for its
	 * devices, a mount begun) while no storaged is at work: the run at it
	 * was killed (live_left_by_a_killed_run()) */
	LIVE_INTERRUPTED,
};

struct btrfs_fs_list;

struct live_input {
	struct libmnt_table *mountinfo; /* the mount table now */
	const char *sysfs_btrfs; /* SYSFS_BTRFS, or a test's copy */
	const char *scrub_status_dir; /* BTRFS_SCRUB_STATUS_DIR, or a test's copy */
	const struct btrfs_fs_list *btrfs; /* the devices' btrfs filesystems
					      now (status_report.c); NULL:
					      not read */
	const struct area_status *areas; /* storaged's areas (area_status_list()) */
	size_t n_areas;
	/* the command advice names, as log_self() gives it; NULL: "storaged" */
	const char *self;
	/* no storaged process is at work on the state directory (none holds
	 * its lock or the resident's: cli/liveness.h): a btrfs still
	 * "waiting" or a mount "mounting" was left by a run that was killed */
	bool nobody_at_work;
};

/*
 * @in: the system now (in->nobody_at_work)
 * @why: what was found, with the commands that complete or undo it
 *
 * Is @rec a step under way with no storaged at it?  A btrfs waiting for
 * its members, a mount waiting for its devices or begun ("mounting"), are
 * under way only while a run is; a mount `start --local` left for the
 * start after the network (plan_is_later_reason()) waits at rest.
 *
 * Returns: true when the run at it was killed (@why set); false, @why
 * untouched, otherwise.
 */
bool live_left_by_a_killed_run(const struct live_input *in, const struct state_record *rec, char *why,
			       size_t len);

/*
 * @detail: what was found, e.g. "unmounted since storaged mounted it"
 *          (empty when as recorded)
 *
 * Records of something storaged set up or found in place (done,
 * degraded, present) are checked against the mount table and sysfs;
 * records of a step under way, against the liveness of storaged
 * (live_left_by_a_killed_run()); the others are as recorded.
 */
enum live_status live_check(const struct live_input *in, const struct state_record *rec,
			    char *detail, size_t len);

/*
 * The recorded mount when it is no longer on its recorded mount point: a
 * mount with its ID elsewhere whose identity (mount_identity_is(): the
 * never-reused ID, or what statx(2) says of its root) is the recorded
 * one (an ID alone may have been freed and given to another mount).
 * `stop` unmounts it there; `status` says so.
 *
 * Returns: its mount point (borrowed from @tb), or NULL (also when the
 * record has only the ID).
 */
const char *live_mount_moved(struct libmnt_table *tb, const struct state_record *rec);

/* The identity (mount/umount.h) @rec recorded of storaged's mount. */
struct mount_identity live_recorded_identity(const struct state_record *rec);

/*
 * @table_id: the mount table's ID of the topmost mount on @mp
 *
 * Did another mount take over storaged's freed mount ID on @mp?  True
 * when the mount @mp leads to has the recorded ID but another identity
 * (mount_identity_is()).  False when it cannot tell: a record with the
 * ID alone, or statx(2) saw another mount than the table's.
 */
bool live_id_taken_over(const struct state_record *rec, const char *mp, unsigned table_id);

/*
 * @fsid: a btrfs filesystem UUID, text
 *
 * Where it is mounted: the first btrfs mount whose source device is in
 * <sysfs_btrfs>/<fsid>/devices/ (the devices the kernel has open for it).
 *
 * Returns: its mount point (borrowed from @in->mountinfo), or NULL.
 */
const char *live_btrfs_mountpoint(const struct live_input *in, const char *fsid);

/*
 * @mountpoint: where the filesystem is mounted degraded, or NULL
 * @fsid: its UUID, text, or NULL: named for findmnt(8), to find every
 *        mount of it (a bind left mounted keeps the filesystem as it is,
 *        degraded, and the next mount reuses it)
 * @devid: the first member missing or unused; 0 when not known ("DEVID")
 * @read_only: mounted read-only (degraded = read-only)
 * @self: as log_self() gives it; NULL for "storaged"
 * @buf: what takes a member back once it is there, or replaces it, e.g.
 *       "unmount /srv/data and mount it again, or put a new disk in its
 *       place (btrfs replace start 2 NEWDEV /srv/data)"; on a read-only
 *       mount, the replace after the remount read-write it needs (a replace
 *       on a read-only mount fails with EROFS).  Mount point quoted for the
 *       shell (shell_quote()).
 * Returns: @buf.
 */
char *live_degraded_advice(const char *mountpoint, const char *fsid, uint64_t devid, bool read_only,
			   const char *self, char *buf, size_t len);

/* "gone", "replaced", "degraded", "interrupted"; NULL when as recorded. */
const char *live_status_name(enum live_status st);

/* What `status` adds up to, for its exit status (invocation.h); the same
 * sum for every output format. */
struct status_sum {
	unsigned bad; /* failed (not nofail), gone, replaced, interrupted;
			 areas gone or interrupted */
	unsigned degraded;
};

/*
 * @live: what live_check() found for it
 *
 * A record gone or replaced is bad; one degraded (recorded, or by the
 * live check) counts as degraded; a failed or skipped one (not nofail) is
 * bad.  An incomplete btrfs counts through its mounts.
 */
void status_sum_record(struct status_sum *sum, const struct state_record *rec, enum live_status live);

/* An area gone is bad, one degraded counts as degraded. */
void status_sum_area(struct status_sum *sum, enum area_state st);

/*
 * Returns: EXIT_STEP_FAILED when something is bad, else EXIT_DEGRADED when
 * something is degraded, else 0 (invocation.h, storaged(8) EXIT STATUS).
 */
int status_sum_exit(const struct status_sum *sum);

/*
 * @buf: the DETAIL of a record in `status`, NUL-terminated
 * @live_why: what live_check() found ("" when as recorded)
 * @reason: why the record is as it is, worded (NULL: none)
 * @took: how long its step took, formatted; NULL when unknown
 *
 * The parts that are there, joined by "; ", e.g. "unmounted since ...;
 * no such device (nofail); took 1.2s"; "" when there is none.
 *
 * Returns: @buf.
 */
char *status_detail(char *buf, size_t len, const char *live_why, const char *reason, bool nofail,
		    const char *took);

#endif
