/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Block device change events, both ways: telling udev, and through it
 * systemd, that a btrfs filesystem it holds "not ready" is usable (the
 * same "change" events `udevadm trigger` makes), and listening for the
 * events of block devices that appear or change (the start executor's
 * wait for members, the resident loop).
 */
#ifndef STORAGED_UDEV_CHANGE_H
#define STORAGED_UDEV_CHANGE_H

#include <libudev.h>

/*
 * @fsid: the filesystem's UUID as libblkid and udev spell it
 *        (lower-case, with dashes)
 *
 * What `udevadm trigger --action=change --subsystem-match=block
 * --property-match=ID_FS_UUID=@fsid` does: "change" is written to the
 * uevent file (Documentation/ABI/testing/sysfs-uevent) of every block
 * device whose udev database entry has ID_FS_UUID=@fsid, and udevd runs
 * its rules for each again.  systemd's 64-btrfs.rules then asks the kernel
 * once more (the "btrfs ready" builtin, src/udev/udev-builtin-btrfs.c:
 * BTRFS_IOC_DEVICES_READY, ID_BTRFS_READY=1 when the ioctl returns 0).  On
 * a filesystem mounted -o degraded the kernel answers "ready": the mount
 * added the missing member as a placeholder (fs/btrfs/volumes.c
 * add_missing_dev() raises num_devices to total_devices, which
 * fs/btrfs/super.c btrfs_control_ioctl() compares).  So SYSTEMD_READY=0 is
 * no longer set, and systemd's .device units of the members and of
 * /dev/disk/by-uuid/@fsid become plugged: what waits on them (a subvolume
 * mounted from fstab by UUID=) goes on.
 *
 * Where no udevd runs (/run/udev/control missing) nothing is done: there
 * is no database to match and nobody who held the devices back.
 *
 * Returns: the number of devices told (0 when none, or without udevd);
 * negative errno when the enumeration fails or no uevent file could be
 * written (the first such error).
 */
int udev_change_btrfs_members(const char *fsid);

/*
 * @ret_udev: the udev context (release with udev_change_monitor_close())
 * @ret_monitor: a monitor of the "block" subsystem, receiving: udev's own
 *               events where udevd runs (its rules have created the node
 *               then), the kernel's uevents where it does not
 *
 * Returns: 0; negative errno (nothing to release then).
 */
int udev_change_monitor_open(struct udev **ret_udev, struct udev_monitor **ret_monitor);

/* Reads and drops every pending event of @mon (a burst is one "a device
 * may have appeared"). */
void udev_change_monitor_drain(struct udev_monitor *mon);

/* Releases both; either may be NULL. */
void udev_change_monitor_close(struct udev *udev, struct udev_monitor *mon);

#endif
