/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Device identity in the plan: storaged mounts only a filesystem whose
 * devices it can tell apart, and the device it resolved is the
 * one the mount is given.
 */
#ifndef STORAGED_PLAN_IDENTITY_H
#define STORAGED_PLAN_IDENTITY_H

#include "plan.h"

/*
 * @in: the planner's inputs (inventory, config's stale-member policy)
 * @e: a deferred entry that needs a device
 * @dev: the device @e's source names in the inventory (inventory_find()),
 *       or NULL
 * @fs: the btrfs filesystem @e mounts, or NULL
 * @s: @e's MOUNT step
 *
 * Pure.  The step becomes a conflict (s->conflict, s->note naming both
 * devices) when @e's tag names two devices that are not members of one
 * btrfs filesystem, when which devices are @fs cannot be told
 * (btrfs_fs_ambiguous(): two devices that are one member, or two sets of
 * devices that are each a whole filesystem of its fsid), or when a member of @fs is stale and the
 * filesystem's stale-member (its [btrfs] section's, else
 * [storaged]'s) is refuse.  Otherwise, for a source given as a
 * tag (LABEL=, UUID=, PARTUUID=, PARTLABEL=, ID= or a /dev/disk/by-* path),
 * s->devnode is set to the device resolved from the inventory (for btrfs,
 * a present member): the executor mounts that device, so that no udev link
 * is needed.
 *
 * Returns: 1 when the step became a conflict (add no device steps for it),
 * 0 otherwise, -ENOMEM.
 */
int plan_identity_check(const struct plan_input *in, const struct fstab_entry *e,
			const struct block_device *dev, const struct btrfs_filesystem *fs,
			struct plan_step *s);

#endif
