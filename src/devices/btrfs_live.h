/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the kernel says of a btrfs filesystem it has open, from
 * /sys/fs/btrfs (Documentation/ABI/testing/sysfs-fs-btrfs): which members
 * it marks missing or does not use, and which filesystem holds a device.
 * Reads sysfs only; the superblocks' view is btrfs.h's.
 */
#ifndef STORAGED_BTRFS_LIVE_H
#define STORAGED_BTRFS_LIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "btrfs.h"

#define SYSFS_BTRFS "/sys/fs/btrfs"

/* What the kernel says of one member of a mounted btrfs filesystem. */
struct btrfs_live_devid {
	uint64_t devid;
	bool missing; /* devinfo/<devid>/missing: not found at mount */
	/* registered (not missing) but not opened: a member scanned after a
	 * degraded mount, which the kernel takes into its list of devices
	 * (fs/btrfs/volumes.c device_list_add() clears its MISSING bit) and
	 * leaves without a block device, unused, until the next mount */
	bool unused;
};

#define BTRFS_LIVE_DEVIDS_MAX 64
struct btrfs_live_members {
	struct btrfs_live_devid v[BTRFS_LIVE_DEVIDS_MAX]; /* by devid, as sysfs lists them */
	size_t n;
	unsigned n_missing, n_unused;
};

/*
 * @sysfs: SYSFS_BTRFS, or a test's copy
 * @fsid: a mounted btrfs filesystem's UUID
 * @ret: its members as the kernel sees them: devinfo/<devid>/missing and
 *       writeable, and the opened devices linked in devices/.  A member not missing
 *       and not writeable is unused when fewer devices are open than are
 *       not missing (a write-protected disk is writeable 0 too, but open).
 *
 * Returns: 0; -ENOENT when @fsid is not mounted (no sysfs directory).
 */
int btrfs_live_members(const char *sysfs, const char *fsid, struct btrfs_live_members *ret);

/*
 * @source: a device path ("/dev/loop3"; links are resolved)
 * @buf: the fsid, text, set only on success
 *
 * The fsid whose <sysfs>/<fsid>/devices/ holds @source: the filesystem
 * the kernel has it open for (fs/btrfs/sysfs.c btrfs_sysfs_add_device()).
 *
 * Returns: false when none does.
 */
bool btrfs_live_fsid_of_device(const char *sysfs, const char *source, char *buf, size_t len);

/*
 * @mounted_ro: the topmost mount of @fs is read-only (view_mounted_ro())
 * @fs: a mounted btrfs filesystem of the devices now, with a stale member
 *
 * How the mount stands for a scrub of @fs: read-only, or a stale member
 * the kernel does not use (missing, or back after a degraded mount:
 * btrfs_live_members()).
 *
 * Returns: enum btrfs_stale_mount flags for btrfs_stale_advice().
 */
unsigned btrfs_live_stale_how(const char *sysfs, bool mounted_ro, const struct btrfs_filesystem *fs);

#endif
