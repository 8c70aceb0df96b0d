/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The backends of an area: a tmpfs, or a zram or brd ramdisk with a
 * filesystem made by mkfs; and the checks that what the kernel made is
 * what was asked for.  What a backend does is its row of backend_ops[]
 * below, in the manner of libmount's hooksets (hooks.c); what the planner
 * knows of it, its row in parse/area_facts.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "area_internal.h"
#include "area_precheck.h"
#include "parse/area_facts.h"
#include "mount/mountfd.h"
#include "shared/spawn_helper.h"
#include "shared/units.h"
#include "shared/util.h"

#define ZRAM_CONTROL "/sys/class/zram-control"

static int sysfs_write(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
	ssize_t n;
	int r = 0;

	if (fd < 0)
		return -errno;
	n = write(fd, s, strlen(s));
	if (n < 0)
		r = -errno;
	else if ((size_t)n != strlen(s))
		r = -EIO;
	close(fd);
	return r;
}

static int sysfs_read(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

unsigned int area_mount_attr(const struct area_config *a)
{
	return (a->allow_suid ? 0 : MOUNT_ATTR_NOSUID) | (a->allow_dev ? 0 : MOUNT_ATTR_NODEV);
}

/* Mounts the area's filesystem on the private directory d.area, opened
 * without following any link, by descriptor (mountfd.h) and with the
 * area's attributes; keeps the new mount's root in s->area_fd for the
 * propagation and the bind over the directory.  d.area lies in the state
 * directory, root's alone, but is mounted on the same way as the rest. */
static int area_fs_mount(struct setup *s, const char *fstype, const char *opts)
{
	struct mountfd_opts o;
	int dfd, r;

	dfd = mountfd_open_nofollow(AT_FDCWD, s->d.area, O_PATH | O_DIRECTORY);
	if (dfd < 0)
		return dfd;
	r = mountfd_parse_options(opts, &o);
	if (r == 0)
		r = mountfd_fs(&mountfd_kernel_ops, fstype, s->st.device, &o, area_mount_attr(s->a),
			       dfd, &s->area_fd, NULL, 0);
	mountfd_opts_done(&o);
	close(dfd);
	if (r == 0)
		s->area_mounted = true;
	return r;
}

static int tmpfs_create(struct setup *s, const struct stat *root, struct diag_list *m)
{
	char opts[160];
	int r;
	uid_t uid;
	gid_t gid;
	mode_t mode;

	if (asprintf(&s->st.device, "storaged-%s", s->a->name) < 0) {
		s->st.device = NULL;
		return -ENOMEM;
	}

	area_root_owner(s->a, root, &uid, &gid, &mode);
	snprintf(opts, sizeof(opts), "size=%" PRIu64 ",nr_inodes=%" PRIu64 ",mode=%04o,uid=%u,gid=%u",
		 s->sz->size_bytes, s->sz->nr_inodes, (unsigned)mode, uid, gid);
	if ((r = area_fs_mount(s, "tmpfs", opts)) < 0) {
		diag_error(m, NULL, 0, "area '%s': mounting tmpfs (%s) on '%s': %s", s->a->name,
			   opts, s->d.area, strerror(-r));
		return r;
	}
	return 0;
}

static int zram_sysfs(int id, const char *attr, const char *val, struct diag_list *m)
{
	char p[96];
	int r;

	snprintf(p, sizeof(p), "/sys/block/zram%d/%s", id, attr);
	r = sysfs_write(p, val);
	if (r < 0)
		diag_error(m, NULL, 0, "zram%d: %s: %s", id, attr, strerror(-r));
	return r;
}

/* asks the kernel for a new zram device; its number is what hot_add returns */
static int zram_hot_add(struct diag_list *m, const char *name)
{
	uint64_t id;
	char buf[32];
	int r = sysfs_read(ZRAM_CONTROL "/hot_add", buf, sizeof(buf));

	if (r < 0) {
		diag_error(m, NULL, 0, "area '%s': %s/hot_add: %s: is the zram driver built in or loaded?",
			   name, ZRAM_CONTROL, strerror(-r));
		return r;
	}
	buf[strcspn(buf, "\n")] = '\0';
	if (units_parse_uint(buf, INT32_MAX, &id) < 0) {
		diag_error(m, NULL, 0, "area '%s': %s/hot_add returned '%s'", name, ZRAM_CONTROL, buf);
		return -EIO;
	}
	return (int)id;
}

/* resets and removes zram device @id: 0 also when it is gone already */
static int zram_release(int id, struct diag_list *m)
{
	char n[16];
	int r;

	snprintf(n, sizeof(n), "%d", id);
	if ((r = zram_sysfs(id, "reset", "1", m)) < 0)
		return r;
	r = sysfs_write(ZRAM_CONTROL "/hot_remove", n);
	if (r < 0 && r != -ENODEV) {
		diag_error(m, NULL, 0, "zram%d: hot_remove: %s", id, strerror(-r));
		return r;
	}
	return 0;
}

/* checks that /dev/zramN is the block device the kernel says zramN is */
static int check_devnode(const char *dev, const char *sysname, struct diag_list *m)
{
	char p[96], buf[32];
	struct stat st;
	unsigned maj, min;

	snprintf(p, sizeof(p), "/sys/block/%s/dev", sysname);
	if (sysfs_read(p, buf, sizeof(buf)) < 0 || sscanf(buf, "%u:%u", &maj, &min) != 2 ||
	    stat(dev, &st) < 0 || !S_ISBLK(st.st_mode) || st.st_rdev != makedev(maj, min)) {
		diag_error(m, NULL, 0, "%s: device node '%s' is missing or is not %s (%s)", sysname,
			   dev, sysname, buf);
		return -ENODEV;
	}
	return 0;
}

static int make_fs(struct setup *s, struct diag_list *m)
{
	struct area_mkfs c;
	char err[256];
	int r;

	area_mkfs_init(&c, s->st.fs, s->sz->nr_inodes, s->st.device, 0);
	r = area_run_helper(c.argv, err, sizeof(err));
	if (r < 0)
		diag_error(m, NULL, 0, "%s: %s failed: %s", s->st.device + 5, c.prog,
			   r == -ENOENT ? "program not found: install it or choose another fs ="
			   : err[0]	? err
					: strerror(-r));
	return r;
}

static int blockdev_mount(struct setup *s, const struct stat *root, struct diag_list *m)
{
	/* a zram device gives a deleted file's memory back when told */
	const char *opts = area_discard_option(s->a);
	char lf[PATH_MAX];
	int r;

	if ((r = area_fs_mount(s, s->st.fs, opts)) < 0) {
		diag_error(m, NULL, 0, "%s: mounting %s%s%s on '%s': %s", s->st.device + 5, s->st.fs,
			   opts ? " -o " : "", opts ? opts : "", s->d.area, strerror(-r));
		return r;
	}
	/* lost+found would be synced back into the directory */
	snprintf(lf, sizeof(lf), "%s/lost+found", s->d.area);
	rmdir(lf);
	r = area_set_root_owner(s->d.area, s->a, root);
	if (r < 0)
		diag_error(m, NULL, 0, "area '%s': setting owner and mode of '%s': %s", s->a->name,
			   s->d.area, strerror(-r));
	return r;
}

/* The compressor and the writeback device, which the kernel takes only
 * before disksize (Documentation/admin-guide/blockdev/zram.rst: "Select
 * compression algorithm", "writeback"; drivers/block/zram/zram_drv.c
 * comp_algorithm_store() and backing_dev_store() refuse an initialised
 * device with EBUSY).  backing_dev exists only with CONFIG_ZRAM_WRITEBACK. */
static int zram_configure(int id, const struct area_config *a, struct diag_list *m)
{
	char p[96], list[256] = "";
	int r;

	if (a->compression) {
		snprintf(p, sizeof(p), "/sys/block/zram%d/comp_algorithm", id);
		r = sysfs_write(p, a->compression);
		if (r < 0) {
			sysfs_read(p, list, sizeof(list));
			diag_error(m, NULL, 0, "area '%s': zram%d: compression-algorithm = %s: %s; this kernel's zram has: %s",
				   a->name, id, a->compression, r == -EINVAL ? "not a compressor it has" : strerror(-r),
				   list[0] ? list : "(cannot read comp_algorithm)");
			return r;
		}
	}
	if (a->writeback_device) {
		snprintf(p, sizeof(p), "/sys/block/zram%d/backing_dev", id);
		r = sysfs_write(p, a->writeback_device);
		if (r < 0) {
			diag_error(m, NULL, 0, "area '%s': zram%d: writeback-device = %s: %s", a->name, id,
				   a->writeback_device,
				   r == -ENOENT && access(p, F_OK) < 0
					   ? "this kernel's zram has no writeback (CONFIG_ZRAM_WRITEBACK); remove writeback-device"
					   : strerror(-r));
			return r;
		}
	}
	return 0;
}

static int zram_create(struct setup *s, const struct stat *root, struct diag_list *m)
{
	char size[24], sysname[24];
	int id = zram_hot_add(m, s->a->name), r;

	if (id < 0)
		return id;
	s->st.resource_id = id;
	snprintf(sysname, sizeof(sysname), "zram%d", id);
	if (asprintf(&s->st.device, "/dev/%s", sysname) < 0) {
		s->st.device = NULL;
		return -ENOMEM;
	}
	/* written ahead: a setup killed from here on leaves the device's
	 * number for recover_interrupted() to release */
	r = state_area_write(s->d.state, &s->st);
	if (r < 0)
		return r;
	r = zram_configure(id, s->a, m);
	if (r < 0)
		return r;
	snprintf(size, sizeof(size), "%" PRIu64, s->sz->size_bytes);
	r = zram_sysfs(id, "disksize", size, m);
	if (r == 0)
		r = check_devnode(s->st.device, sysname, m);
	if (r == 0)
		r = make_fs(s, m);
	if (r == 0)
		r = blockdev_mount(s, root, m);
	return r;
}

/* the first /dev/ramN nobody holds open, at least @size bytes (the
 * driver is there: area_precheck()) */
static int brd_pick(struct setup *s, struct diag_list *m)
{
	uint64_t kib = (s->sz->size_bytes + 1023) / 1024, bytes = 0;
	char dev[32], hint[256];

	for (int i = 0; i < 256; i++) {
		int fd;

		snprintf(dev, sizeof(dev), "/dev/ram%d", i);
		fd = open(dev, O_RDONLY | O_EXCL | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (ioctl(fd, BLKGETSIZE64, &bytes) < 0)
			bytes = 0;
		close(fd);
		if (bytes >= s->sz->size_bytes)
			return (s->st.device = strdup(dev)) ? 0 : -ENOMEM;
	}
	diag_error(m, NULL, 0, "area '%s': no free /dev/ramN of at least %" PRIu64 " KiB: %s", s->a->name,
		   kib, area_brd_hint(hint, sizeof(hint), s->sz->size_bytes));
	return -ENOSPC;
}

static int brd_create(struct setup *s, const struct stat *root, struct diag_list *m)
{
	int r = brd_pick(s, m);

	if (r == 0)
		r = make_fs(s, m);
	if (r == 0)
		r = blockdev_mount(s, root, m);
	return r;
}

static int check_limits(struct setup *s, struct diag_list *m)
{
	long page = sysconf(_SC_PAGESIZE);
	uint64_t want = (s->sz->size_bytes + page - 1) / page * page, got_b, got_i;
	struct statvfs v;
	bool ok;

	if (statvfs(s->d.area, &v) < 0)
		return -errno;
	got_b = (uint64_t)v.f_blocks * v.f_frsize;
	got_i = v.f_files;
	if (!area_is_ramdisk(s->a))
		ok = got_b == want && got_i == s->sz->nr_inodes;
	else
		ok = got_b <= want && (!area_fstype_is_ext(s->st.fs) || got_i >= s->sz->nr_inodes);
	if (!ok) {
		diag_error(m, NULL, 0,
			   "area '%s' (%s): effective limits %" PRIu64 " bytes, %" PRIu64
			   " inodes differ from the requested size=%" PRIu64 ", nr_inodes=%" PRIu64,
			   s->a->name, s->st.device, got_b, got_i, s->sz->size_bytes, s->sz->nr_inodes);
		return -EIO;
	}
	return 0;
}

int area_backend_check_room(struct setup *s, const struct area_survey *sv, struct diag_list *m)
{
	struct statvfs v;
	uint64_t free_b, free_i;
	char a[24], b[24];

	if (!s->a->seed || !area_is_ramdisk(s->a))
		return 0;
	if (statvfs(s->d.area, &v) < 0)
		return -errno;
	free_b = (uint64_t)v.f_bavail * v.f_frsize;
	free_i = v.f_favail;
	/* f_files 0: inodes are made as needed (btrfs), none to count */
	if (sv->bytes <= free_b && (!v.f_files || sv->inodes <= free_i + 1))
		return 0;
	if (!v.f_files)
		diag_error(m, NULL, 0, "area '%s' (%s): seed needs %s but %s has %s free after mkfs: raise size=",
			   s->a->name, s->st.device, units_format_size(sv->bytes, a, sizeof(a)), s->st.fs,
			   units_format_size(free_b, b, sizeof(b)));
	else
		diag_error(m, NULL, 0,
			   "area '%s' (%s): seed needs %s and %" PRIu64 " inodes but %s has %s and %" PRIu64
			   " inodes free after mkfs: raise size= or inodes=",
			   s->a->name, s->st.device, units_format_size(sv->bytes, a, sizeof(a)), sv->inodes,
			   s->st.fs, units_format_size(free_b, b, sizeof(b)), free_i + 1);
	return -ENOSPC;
}

/*
 * What each backend does, one row per backend of enum area_backend.
 * create: makes the filesystem at s->d.area (s->st.device and, for a
 *   kernel resource made for the area, s->st.resource_id set first, and
 *   the record written, so that a setup killed midway is undone), mounted
 *   with s->area_fd its root; 0 or negative errno with one diag_error.
 * release: frees s->st.resource_id (NULL: the backend makes none);
 *   0 also when it is gone already, or negative errno with one diag_error.
 */
struct area_backend_ops {
	int (*create)(struct setup *s, const struct stat *root, struct diag_list *m);
	int (*release)(int resource_id, struct diag_list *m);
};

static const struct area_backend_ops backend_ops[] = {
	[AREA_TMPFS] = { .create = tmpfs_create },
	[AREA_ZRAM] = { .create = zram_create, .release = zram_release },
	[AREA_BRD] = { .create = brd_create },
};

static const struct area_backend_ops *ops_of(enum area_backend b)
{
	return (size_t)b < ARRAY_SIZE(backend_ops) ? &backend_ops[b] : NULL;
}

int area_backend_release(const struct state_area *st, struct diag_list *m)
{
	const struct area_backend_ops *o = ops_of(st->backend);
	struct diag_list quiet = { 0 };
	int r;

	if (st->resource_id < 0 || !o || !o->release)
		return 0;
	r = o->release(st->resource_id, m ? m : &quiet);
	diag_list_done(&quiet);
	return r;
}

int area_backend_create(struct setup *s, const struct stat *root, struct diag_list *m)
{
	const struct area_backend_ops *o = ops_of(s->a->backend);
	int r;

	if (!o)
		return -EINVAL;
	r = o->create(s, root, m);
	if (r == 0)
		r = mountfd_set_propagation(&mountfd_kernel_ops, s->area_fd, MS_PRIVATE, false);
	if (r == 0)
		r = check_limits(s, m);
	return r;
}
