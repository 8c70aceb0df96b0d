/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Members that come back after their btrfs filesystem was mounted
 * degraded: registered, and what the kernel then does with them said.
 */
#ifndef STORAGED_LATE_MEMBER_H
#define STORAGED_LATE_MEMBER_H

#include "devices/btrfs.h"
#include "devices/inventory.h"
#include "ops.h"
#include "shared/log.h"
#include "state/state.h"

/**
 * exec_late_members:
 * @st: the state: the btrfs records decided degraded-by-policy or
 *      read-only-by-policy, and the mounts made so
 * @inv: the block devices now; @l: their btrfs filesystems
 * @sysfs: SYSFS_BTRFS, or a test's copy
 * @ops, @ud: the operations (register_device)
 * @lg: each member taken back is one warning, with the command that
 *      completes the repair
 *
 * A member present in @inv whose devid the kernel reports missing in a
 * mounted filesystem (devices/btrfs_live.h) is registered
 * (BTRFS_IOC_SCAN_DEV).
 * Linux (fs/btrfs/volumes.c device_list_add(), the branch "When FS is
 * already mounted": a device found by devid and uuid with no name, the
 * one the degraded mount added as missing) gives it its path and clears
 * BTRFS_DEV_STATE_MISSING, but opens no block device for it (device->bdev
 * stays NULL, devinfo/<devid>/writeable 0, no link in devices/): nothing
 * is read from or written to it, and `btrfs replace` refuses it as
 * mounted, until the filesystem is unmounted and mounted again.  What the
 * kernel shows after the registration is read back, not assumed, and
 * kept in the record's late field.
 *
 * Returns: how many members were registered.
 */
unsigned exec_late_members(struct state *st, const struct inventory *inv, const struct btrfs_fs_list *l,
			   const char *sysfs, const struct ops *ops, void *ud, const struct logger *lg);

#endif
