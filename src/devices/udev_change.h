/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Telling udev, and through it systemd, that a btrfs filesystem it holds
 * "not ready" is usable: the same "change" events `udevadm trigger` makes.
 */
#ifndef STORAGED_UDEV_CHANGE_H
#define STORAGED_UDEV_CHANGE_H

/**
 * udev_change_btrfs_members:
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

#endif
