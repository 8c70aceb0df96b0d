/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The control ioctls of /dev/btrfs-control (include/uapi/linux/btrfs.h;
 * kernel fs/btrfs/super.c, btrfs_control_ioctl()): register a member, ask
 * whether a filesystem's members are all known, make the kernel forget a
 * device.  Declared in btrfs.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <linux/btrfs.h>

#include "btrfs.h"
#include "shared/util.h"

/*
 * Issue @request with @devnode in btrfs_ioctl_vol_args.name.
 * The kernel NUL-terminates name at BTRFS_PATH_NAME_MAX, so longer names are
 * refused here rather than truncated there.
 * Returns: the ioctl's non-negative result, or negative errno.
 */
static int control_ioctl(unsigned long request, const char *devnode)
{
	struct btrfs_ioctl_vol_args args;
	size_t n = strlen(devnode);
	_cleanup_close_ int fd = -EBADF;
	int r;

	if (n > BTRFS_PATH_NAME_MAX)
		return -ENAMETOOLONG;
	memset(&args, 0, sizeof(args));
	memcpy(args.name, devnode, n);
	fd = open(BTRFS_CONTROL_PATH, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	r = ioctl(fd, request, &args);
	return r < 0 ? -errno : r;
}

/* @request on a device named by a non-empty @devnode.  Returns: its
 * non-negative result, or negative errno (-EINVAL: no name). */
static int control_device(unsigned long request, const char *devnode)
{
	if (!devnode || !*devnode)
		return -EINVAL;
	return control_ioctl(request, devnode);
}

int btrfs_register_device(const char *devnode)
{
	int r = control_device(BTRFS_IOC_SCAN_DEV, devnode);

	return r < 0 ? r : 0;
}

int btrfs_forget_device(const char *devnode)
{
	int r = control_device(BTRFS_IOC_FORGET_DEV, devnode);

	return r < 0 ? r : 0;
}

/*
 * fs/btrfs/super.c btrfs_control_ioctl(): BTRFS_IOC_DEVICES_READY scans
 * (registers) the device, then returns
 * !(fs_devices->num_devices == fs_devices->total_devices): 0 when every
 * member is known, 1 when some are not.  It also returns 0 when the kernel
 * declines to register a single-device filesystem (Linux 6.7+).  systemd's
 * udev builtin "btrfs ready" reads it the same way (ID_BTRFS_READY = r == 0).
 */
int btrfs_devices_ready(const char *devnode)
{
	int r = control_device(BTRFS_IOC_DEVICES_READY, devnode);

	return r < 0 ? r : r == 0;
}
