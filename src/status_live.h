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

#include "state.h"

#define SYSFS_BTRFS "/sys/fs/btrfs"

enum live_status {
	LIVE_AS_RECORDED, /* the record still describes the system */
	LIVE_GONE, /* storaged's mount is no longer in the mount table */
	LIVE_REPLACED, /* another mount is on its mount point */
	LIVE_DEGRADED, /* the btrfs has a member the kernel marks missing */
};

struct live_input {
	struct libmnt_table *mountinfo; /* the mount table now */
	const char *sysfs_btrfs; /* SYSFS_BTRFS, or a test's copy */
};

/**
 * live_check:
 * @in: the system now
 * @rec: a state record
 * @detail: what was found, e.g. "unmounted since storaged mounted it"
 *          (empty when as recorded)
 *
 * Only records of something storaged set up or found in place (done,
 * degraded, present) are checked; the others are as recorded.
 *
 * Returns: the live status.
 */
enum live_status live_check(const struct live_input *in, const struct state_record *rec,
			    char *detail, size_t len);

/** live_status_name: "gone", "replaced", "degraded"; NULL when as recorded. */
const char *live_status_name(enum live_status st);

#endif
