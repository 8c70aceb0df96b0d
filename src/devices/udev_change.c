/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <libudev.h>

#include "shared/util.h"
#include "udev_change.h"

/* "change" into @syspath/uevent.  Returns: 0 or negative errno. */
static int write_change(const char *syspath)
{
	_cleanup_free_ char *path = NULL;
	_cleanup_close_ int fd = -EBADF;

	if (asprintf(&path, "%s/uevent", syspath) < 0)
		return -ENOMEM;
	fd = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	if (write(fd, "change", 6) != 6)
		return errno ? -errno : -EIO;
	return 0;
}

int udev_change_btrfs_members(const char *fsid)
{
	struct udev *udev;
	struct udev_enumerate *en = NULL;
	struct udev_list_entry *item;
	int told = 0, first_error = 0, r = 0;

	if (!fsid || !fsid[0])
		return -EINVAL;
	if (access("/run/udev/control", F_OK) < 0)
		return 0;
	udev = udev_new();
	en = udev ? udev_enumerate_new(udev) : NULL;
	if (!en)
		r = -ENOMEM;
	else if (udev_enumerate_add_match_subsystem(en, "block") < 0 ||
		 udev_enumerate_add_match_property(en, "ID_FS_UUID", fsid) < 0 ||
		 udev_enumerate_scan_devices(en) < 0)
		r = errno ? -errno : -EIO;
	if (r == 0)
		udev_list_entry_foreach (item, udev_enumerate_get_list_entry(en)) {
			int w = write_change(udev_list_entry_get_name(item));

			if (w == 0)
				told++;
			else if (!first_error)
				first_error = w;
		}
	udev_enumerate_unref(en);
	udev_unref(udev);
	if (r < 0)
		return r;
	return told == 0 && first_error ? first_error : told;
}

int udev_change_monitor_open(struct udev **ret_udev, struct udev_monitor **ret_monitor)
{
	const char *source = access("/run/udev/control", F_OK) == 0 ? "udev" : "kernel";
	struct udev *udev = udev_new();
	struct udev_monitor *mon = udev ? udev_monitor_new_from_netlink(udev, source) : NULL;
	int r = 0;

	if (!mon)
		r = errno ? -errno : -ENOMEM;
	else if (udev_monitor_filter_add_match_subsystem_devtype(mon, "block", NULL) < 0 ||
		 udev_monitor_enable_receiving(mon) < 0)
		r = errno ? -errno : -EIO;
	if (r < 0) {
		udev_change_monitor_close(udev, mon);
		return r;
	}
	*ret_udev = udev;
	*ret_monitor = mon;
	return 0;
}

void udev_change_monitor_drain(struct udev_monitor *mon)
{
	for (struct udev_device *d; mon && (d = udev_monitor_receive_device(mon));)
		udev_device_unref(d);
}

void udev_change_monitor_close(struct udev *udev, struct udev_monitor *mon)
{
	udev_monitor_unref(mon);
	udev_unref(udev);
}
