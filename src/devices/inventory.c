/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Block device inventory.
 *
 * Scanning: libudev enumerates the "block" subsystem straight from sysfs
 * (no udevd needed; udev properties such as DM_MULTIPATH_DEVICE_PATH are
 * only seen where udevd keeps its database).  Each device is opened once,
 * probed by libblkid, and for btrfs the same descriptor is used to read the
 * superblock and the chunk tree (inventory_btrfs.c).
 *
 * Fixtures standing in for a scan are read by inventory_fixture.c.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <blkid.h>
#include <libudev.h>

#include "inventory.h"
#include "shared/util.h"

/* ------------------------------------------------------------------ memory */

void block_device_done(struct block_device *d)
{
	if (!d)
		return;
	free(d->devnode);
	free(d->type);
	free(d->uuid);
	free(d->uuid_sub);
	free(d->label);
	free(d->partuuid);
	free(d->partlabel);
	strv_free(d->ids);
	memset(d, 0, sizeof(*d));
}

void inventory_done(struct inventory *inv)
{
	if (!inv)
		return;
	for (size_t i = 0; i < inv->n_devs; i++)
		block_device_done(&inv->devs[i]);
	free(inv->devs);
	for (size_t i = 0; inv->skipped && i < inv->n_skipped; i++) {
		free(inv->skipped[i].devnode);
		free(inv->skipped[i].fs_type);
		free(inv->skipped[i].fs_uuid);
		free(inv->skipped[i].mountpoint);
	}
	free(inv->skipped);
	memset(inv, 0, sizeof(*inv));
}

int inventory_add(struct inventory *inv, struct block_device *dev)
{
	struct block_device *nv = realloc(inv->devs, (inv->n_devs + 1) * sizeof(*nv));

	if (!nv)
		return -ENOMEM;
	inv->devs = nv;
	inv->devs[inv->n_devs++] = *dev;
	memset(dev, 0, sizeof(*dev));
	return 0;
}

/* ----------------------------------------------------------------- probing */

/* Copy libblkid value @name into *@dst (NULL when absent). */
static int probe_value(blkid_probe pr, const char *name, char **dst)
{
	const char *v = NULL;

	if (blkid_probe_lookup_value(pr, name, &v, NULL) < 0 || !v)
		return 0;
	*dst = strdup(v);
	return *dst ? 0 : -ENOMEM;
}

/* udev's property @v, copied into *@dst (NULL when absent). */
static int udev_value(const char *v, char **dst)
{
	*dst = v ? strdup(v) : NULL;
	return !v || *dst ? 0 : -ENOMEM;
}

static int probe_values(blkid_probe pr, struct block_device *d)
{
	int r = 0;

	r = r ?: probe_value(pr, "TYPE", &d->type);
	r = r ?: probe_value(pr, "UUID", &d->uuid);
	r = r ?: probe_value(pr, "UUID_SUB", &d->uuid_sub);
	r = r ?: probe_value(pr, "LABEL", &d->label);
	r = r ?: probe_value(pr, "PART_ENTRY_UUID", &d->partuuid);
	r = r ?: probe_value(pr, "PART_ENTRY_NAME", &d->partlabel);
	return r;
}

/* A valid btrfs superblock: the libblkid values from it, no libblkid probe
 * (INVENTORY_BTRFS_ONLY).  Returns: 0; -ENOMEM;
 * 1 when there is no usable one (damaged, or a read error: libblkid is
 * asked, and the scan reports what it says); 2 when there is none at all
 * (no magic, or the device ends before the superblock). */
static int probe_btrfs_first(int fd, struct block_device *d)
{
	char sub[37];
	const uint8_t *u;
	int r = inventory_read_btrfs_sb(fd, &d->btrfs);

	if (r == -ENODATA)
		return 2;
	if (r < 0)
		return 1;
	/* a device whose chunk tree this one does not hold is named by another's */
	(void)inventory_read_btrfs_devs(fd, &d->btrfs);
	u = d->btrfs.dev_uuid;
	snprintf(sub, sizeof(sub), "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12],
		 u[13], u[14], u[15]);
	d->type = strdup("btrfs");
	d->uuid = strdup(d->btrfs.fsid_str);
	d->uuid_sub = strdup(sub);
	d->label = d->btrfs.label[0] ? strdup(d->btrfs.label) : NULL;
	if (!d->type || !d->uuid || !d->uuid_sub || (d->btrfs.label[0] && !d->label))
		return -ENOMEM;
	d->is_btrfs = true;
	return 0;
}

/*
 * Start reading, in the background, where libblkid's probers look most:
 * the first PREFETCH_HEAD bytes (most superblock magics) and the last
 * PREFETCH_TAIL (RAID metadata such as md 1.0 and the fake-RAID formats).
 * libblkid reads ~40 small pieces one after the other with read-ahead off
 * (POSIX_FADV_RANDOM), so on a cold cache each is a round trip through the
 * device; a few larger requests issued up front turn most of them into
 * page cache hits (bench/README.md, "Scan").  A hint only: errors are
 * ignored, and what libblkid reports does not depend on it.
 */
#define PREFETCH_HEAD (128 * 1024)
#define PREFETCH_TAIL (64 * 1024)

static void probe_prefetch(int fd)
{
	off_t end = lseek(fd, 0, SEEK_END);

	(void)posix_fadvise(fd, 0, PREFETCH_HEAD, POSIX_FADV_WILLNEED);
	if (end > PREFETCH_HEAD + PREFETCH_TAIL)
		(void)posix_fadvise(fd, end - PREFETCH_TAIL, PREFETCH_TAIL, POSIX_FADV_WILLNEED);
}

int inventory_probe_fd(int fd, struct block_device *d, int *ret_sb_err, bool partition,
		       enum inventory_depth depth)
{
	static char *no_zfs[] = { "zfs_member", NULL };
	blkid_probe pr;
	int r;

	*ret_sb_err = 0;
	/* a partition keeps the full probe: PARTUUID= and PARTLABEL= tags
	 * come from the partition table */
	r = partition ? 1 : probe_btrfs_first(fd, d);
	if (r <= 0)
		return r;
	memset(&d->btrfs, 0, sizeof(d->btrfs));
	if (r == 2 && depth == INVENTORY_BTRFS_ONLY) {
		d->unprobed = true;
		return 0;
	}
	probe_prefetch(fd);
	pr = blkid_new_probe();
	if (!pr)
		return -ENOMEM;
	r = -EIO;
	if (blkid_probe_set_device(pr, fd, 0, 0) < 0)
		goto out;
	blkid_probe_enable_superblocks(pr, 1);
	blkid_probe_set_superblocks_flags(pr, BLKID_SUBLKS_TYPE | BLKID_SUBLKS_UUID | BLKID_SUBLKS_LABEL);
	/* the ZFS prober reads four 256 KiB labels of every device */
	blkid_probe_filter_superblocks_type(pr, BLKID_FLTR_NOTIN, no_zfs);
	/* PART_ENTRY_* exist for partitions only */
	if (partition) {
		blkid_probe_enable_partitions(pr, 1);
		blkid_probe_set_partitions_flags(pr, BLKID_PARTS_ENTRY_DETAILS);
	}
	/* 0 found, 1 nothing, -2 ambivalent (several signatures: no type) */
	r = blkid_do_safeprobe(pr);
	if (r == -1) {
		r = -EIO;
		goto out;
	}
	r = probe_values(pr, d);
	if (r < 0 || !d->type || strcmp(d->type, "btrfs") != 0)
		goto out;
	*ret_sb_err = inventory_read_btrfs_sb(fd, &d->btrfs);
	d->is_btrfs = *ret_sb_err == 0;
	if (d->is_btrfs)
		(void)inventory_read_btrfs_devs(fd, &d->btrfs);
out:
	blkid_free_probe(pr);
	return r;
}

/* ---------------------------------------------------------------- scanning */

/* Read a short sysfs attribute relative to @dirfd, without the newline. */
static int read_attr_at(int dirfd, const char *rel, char *buf, size_t size)
{
	ssize_t n;
	_cleanup_close_ int fd = openat(dirfd, rel, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

/* True when a holder of the device at @syspath is a dm-multipath map. */
static bool has_mpath_holder(const char *syspath)
{
	char path[4096], uuid[256], rel[512];
	struct dirent *de;
	bool found = false;
	DIR *dir;

	if (snprintf(path, sizeof(path), "%s/holders", syspath) >= (int)sizeof(path))
		return false;
	dir = opendir(path);
	if (!dir)
		return false;
	while (!found && (de = readdir(dir))) {
		if (de->d_name[0] == '.')
			continue;
		if (snprintf(rel, sizeof(rel), "%s/dm/uuid", de->d_name) >= (int)sizeof(rel))
			continue;
		if (read_attr_at(dirfd(dir), rel, uuid, sizeof(uuid)) == 0)
			found = strncmp(uuid, "mpath-", 6) == 0;
	}
	closedir(dir);
	return found;
}

static bool is_multipath_path(struct udev_device *ud)
{
	const char *v = udev_device_get_property_value(ud, "DM_MULTIPATH_DEVICE_PATH");

	if (v && strcmp(v, "1") == 0)
		return true;
	return has_mpath_holder(udev_device_get_syspath(ud));
}

/* One enumerated device and the outcome of a worker's look at it (sysfs,
 * open, probe), turned into warnings by the thread that owns the
 * diagnostics (scan_report()). */
struct scan_item {
	char *syspath; /* from the enumeration */
	struct block_device d;
	bool partition;
	enum inventory_depth depth;
	int collect; /* scan_collect()'s result: 0 probed, 1 not a device to probe, -errno */
	int open_err; /* errno of open(2), 0 when it opened */
	int r; /* inventory_probe_fd()'s result */
	int sb_err; /* its *ret_sb_err */
	char *udev_fs_type, *udev_fs_uuid; /* udev's database, NULL when it says nothing */
};

/* Open and probe @it; no diagnostics here (this runs in a worker). */
static void scan_probe(struct scan_item *it)
{
	_cleanup_close_ int fd = open(it->d.devnode, O_RDONLY | O_CLOEXEC | O_NOCTTY);

	if (fd < 0) {
		it->open_err = errno;
		return;
	}
	it->r = inventory_probe_fd(fd, &it->d, &it->sb_err, it->partition, it->depth);
}

/* The warnings of @it's probe, in the words of the serial scan.
 * Returns: 0; -ENOMEM; 1 skipped (not in the inventory). */
static int scan_report(const struct scan_item *it, struct diag_list *diags)
{
	const char *devnode = it->d.devnode;
	int r = it->r;

	if (it->open_err) {
		r = diag_warning(diags, NULL, 0, "skipping '%s': cannot open: %s", devnode,
				 strerror(it->open_err));
		return r < 0 ? r : 1;
	}
	if (r == -ENOMEM)
		return r;
	if (r < 0) {
		r = diag_warning(diags, NULL, 0, "skipping '%s': libblkid cannot probe it: %s",
				 devnode, strerror(-r));
		return r < 0 ? r : 1;
	}
	if (it->sb_err < 0)
		r = diag_warning(diags, NULL, 0,
				 "'%s': libblkid reports btrfs but its superblock is unusable (%s); not treating it as a btrfs member",
				 devnode, strerror(-it->sb_err));
	return r;
}

/* Records @it, which scan_report() skipped, in @inv.  Returns: 0, -ENOMEM. */
static int add_unreadable(struct inventory *inv, struct scan_item *it)
{
	struct unreadable_device *nv = realloc(inv->skipped, (inv->n_skipped + 1) * sizeof(*nv));

	if (!nv)
		return -ENOMEM;
	inv->skipped = nv;
	/* the strings move from @it to the record */
	nv[inv->n_skipped++] = (struct unreadable_device){
		.devnode = it->d.devnode,
		.devno = it->d.devno,
		.err = it->open_err ? it->open_err : -it->r,
		.probing = !it->open_err,
		.fs_type = it->udev_fs_type,
		.fs_uuid = it->udev_fs_uuid,
		.source = it->udev_fs_type ? UNREADABLE_BY_UDEV : UNREADABLE_SAYS_NOTHING,
	};
	it->d.devnode = it->udev_fs_type = it->udev_fs_uuid = NULL;
	return 0;
}

/* udev's /dev/disk/by-id/ links of @ud into @d->ids, unescaped: what an
 * fstab ID= names (util-linux reads ID=X as /dev/disk/by-id/X).  Only
 * where udevd keeps its database; otherwise there are none. */
static int scan_ids(struct udev_device *ud, struct block_device *d)
{
	struct udev_list_entry *e;
	const char *v;
	char buf[1024];
	int r;

	udev_list_entry_foreach (e, udev_device_get_devlinks_list_entry(ud)) {
		if (fsfacts_tag_from_path(udev_list_entry_get_name(e), &v) != FSFACTS_TAG_ID ||
		    !unescape_hex(v, strlen(v), '-', buf, sizeof(buf)))
			continue;
		r = strv_extend(&d->ids, buf);
		if (r < 0)
			return r;
	}
	return 0;
}

/* @v with leading and trailing whitespace cut and each inner run turned
 * into one '_' (udev's replace-whitespace), appended to @out of @size. */
static void id_part(const char *v, char *out, size_t size)
{
	size_t n = strlen(out);
	bool space = false;

	for (v += strspn(v, " \t"); *v && n + 1 < size; v++) {
		if (isspace((unsigned char)*v)) {
			space = true;
			continue;
		}
		if (space && n + 2 < size)
			out[n++] = '_';
		space = false;
		out[n++] = *v;
	}
	out[n] = '\0';
}

/* "@prefix@a[_@b]" (+ "-partN") into @ret, when @a is not empty. */
static int add_id(char ***ret, const char *prefix, const char *a, const char *b, const char *part)
{
	char name[512];

	snprintf(name, sizeof(name), "%s", prefix);
	id_part(a, name, sizeof(name));
	if (strlen(name) == strlen(prefix))
		return 0;
	if (b && *b) {
		id_part("_", name, sizeof(name));
		id_part(b, name, sizeof(name));
	}
	if (part) {
		size_t n = strlen(name);

		snprintf(name + n, sizeof(name) - n, "-part%s", part);
	}
	return strv_contains(*ret, name) ? 0 : strv_extend(ret, name);
}

int inventory_sysfs_ids(const char *syspath, bool partition, char ***ret)
{
	char disk[4096], part[16] = "", serial[256] = "", model[256] = "", wwid[256] = "";
	const char *base;
	_cleanup_close_ int dfd = -EBADF;
	int r = 0;

	snprintf(disk, sizeof(disk), "%s", syspath);
	if (partition) { /* the disk is the partition's parent directory */
		char *slash = strrchr(disk, '/');

		dfd = open(syspath, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (!slash || dfd < 0)
			return 0;
		*slash = '\0';
		r = read_attr_at(dfd, "partition", part, sizeof(part));
		dfd = safe_close(dfd);
		if (r < 0)
			return 0;
	}
	base = strrchr(disk, '/');
	base = base ? base + 1 : disk;
	dfd = open(disk, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return 0;
	r = 0;
	if (strncmp(base, "vd", 2) == 0 && read_attr_at(dfd, "serial", serial, sizeof(serial)) == 0) {
		r = add_id(ret, "virtio-", serial, NULL, partition ? part : NULL);
	} else if (strncmp(base, "nvme", 4) == 0) {
		if (read_attr_at(dfd, "device/model", model, sizeof(model)) == 0 &&
		    read_attr_at(dfd, "device/serial", serial, sizeof(serial)) == 0)
			r = add_id(ret, "nvme-", model, serial, partition ? part : NULL);
		if (r == 0 && read_attr_at(dfd, "wwid", wwid, sizeof(wwid)) == 0)
			r = add_id(ret, "nvme-", wwid, NULL, partition ? part : NULL);
	} else if (read_attr_at(dfd, "device/wwid", wwid, sizeof(wwid)) == 0 &&
		   strncmp(wwid, "naa.", 4) == 0) {
		r = add_id(ret, "wwn-0x", wwid + 4, NULL, partition ? part : NULL);
	}
	return r;
}

/* What udev tells of @ud into @it (devnode, devno, partition, ID= names).
 * Devices of size 0 (unbound loop nodes) were left out by the enumeration
 * (scan_enumerate()).  Returns: 0; -ENOMEM; 1 not a device to probe (no
 * devnode, a multipath path device). */
static int scan_collect(struct udev_device *ud, struct scan_item *it)
{
	const char *devnode = udev_device_get_devnode(ud);
	int r;

	if (!devnode || is_multipath_path(ud))
		return 1;
	it->d.devno = udev_device_get_devnum(ud);
	it->d.devnode = strdup(devnode);
	if (!it->d.devnode)
		return -ENOMEM;
	it->partition = strcmp(udev_device_get_devtype(ud) ?: "", "partition") == 0;
	/* kept for a device storaged cannot read itself */
	if (udev_value(udev_device_get_property_value(ud, "ID_FS_TYPE"), &it->udev_fs_type) < 0 ||
	    udev_value(udev_device_get_property_value(ud, "ID_FS_UUID"), &it->udev_fs_uuid) < 0)
		return -ENOMEM;
	r = scan_ids(ud, &it->d);
	/* no udevd database (early boot, a container): udev's names from sysfs */
	if (r == 0 && !it->d.ids)
		r = inventory_sysfs_ids(udev_device_get_syspath(ud), it->partition, &it->d.ids);
	return r;
}

/* The enumerated devices, in enumeration order, taken by the workers. */
struct scan_queue {
	struct scan_item *items;
	size_t n;
	size_t next; /* the next item to take (atomic) */
};

/* Look at @it on @udev, this thread's own context (libudev objects are not
 * shared between threads): udev's facts, then open and probe. */
static void scan_one(struct udev *udev, struct scan_item *it)
{
	struct udev_device *ud;

	if (!udev) {
		it->collect = -ENOMEM;
		return;
	}
	ud = udev_device_new_from_syspath(udev, it->syspath);
	if (!ud) {
		it->collect = 1; /* removed meanwhile */
		return;
	}
	it->collect = scan_collect(ud, it);
	udev_device_unref(ud);
	if (it->collect == 0)
		scan_probe(it);
}

/* Each device's sysfs reads and probe on a worker, so that the ~50 system
 * calls libudev makes for a device overlap with other devices' reads. */
static void *scan_worker(void *arg)
{
	struct scan_queue *q = arg;
	struct udev *udev = udev_new();
	size_t i;

	while ((i = __atomic_fetch_add(&q->next, 1, __ATOMIC_RELAXED)) < q->n)
		scan_one(udev, &q->items[i]);
	udev_unref(udev);
	return NULL;
}

size_t inventory_scan_threads(size_t n_devs)
{
	if (n_devs <= INVENTORY_DEVS_PER_THREAD)
		return 1;
	n_devs = (n_devs + INVENTORY_DEVS_PER_THREAD - 1) / INVENTORY_DEVS_PER_THREAD;
	return n_devs < INVENTORY_SCAN_THREADS_MAX ? n_devs : INVENTORY_SCAN_THREADS_MAX;
}

/* Look at all of @q, on up to inventory_scan_threads() threads (this one
 * included); where a thread cannot be started, the others do its share. */
static void scan_probe_all(struct scan_queue *q)
{
	pthread_t tids[INVENTORY_SCAN_THREADS_MAX];
	size_t want = inventory_scan_threads(q->n), n = 0;

	while (n + 1 < want && pthread_create(&tids[n], NULL, scan_worker, q) == 0)
		n++;
	scan_worker(q);
	while (n > 0)
		pthread_join(tids[--n], NULL);
}

/* Append @syspath to @q.  Returns: 0 or -ENOMEM. */
static int queue_add(struct scan_queue *q, size_t *cap, const char *syspath)
{
	if (q->n == *cap) {
		size_t ncap = *cap ? 2 * *cap : 64;
		struct scan_item *nv = realloc(q->items, ncap * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		q->items = nv;
		*cap = ncap;
	}
	memset(&q->items[q->n], 0, sizeof(q->items[q->n]));
	q->items[q->n].syspath = strdup(syspath);
	if (!q->items[q->n].syspath)
		return -ENOMEM;
	q->n++;
	return 0;
}

/* The syspaths of the block devices into @q; size 0 (an unbound loop node:
 * nothing to probe) is filtered here, from the size libudev reads anyway
 * while it matches, so that such a node costs no further system calls.
 * Returns: 0, -ENOMEM, or libudev's negative errno. */
static int scan_enumerate(struct udev *udev, struct scan_queue *q)
{
	struct udev_enumerate *en = udev_enumerate_new(udev);
	struct udev_list_entry *e;
	size_t cap = 0;
	int r;

	if (!en)
		return -ENOMEM;
	r = udev_enumerate_add_match_subsystem(en, "block");
	r = r ?: udev_enumerate_add_nomatch_sysattr(en, "size", "0");
	r = r ?: udev_enumerate_scan_devices(en);
	udev_list_entry_foreach (e, r < 0 ? NULL : udev_enumerate_get_list_entry(en)) {
		r = queue_add(q, &cap, udev_list_entry_get_name(e));
		if (r < 0)
			break;
	}
	udev_enumerate_unref(en);
	return r;
}

/* A member of @t's filesystem holds the device tree that says which devid
 * the replace target @t replaces, and whether that replace is still to be
 * resumed: read from the first member that can tell.  Only where a
 * devid-0 device is found: no boot reads more than the chunk trees. */
static void read_replace_source(const struct inventory *inv, struct block_device *t)
{
	for (size_t i = 0; i < inv->n_devs && !t->btrfs.replace_known; i++) {
		const struct block_device *m = &inv->devs[i];
		_cleanup_close_ int fd = -EBADF;

		if (!m->is_btrfs || m->btrfs.devid == BTRFS_DEV_REPLACE_DEVID || !m->btrfs.devs_from_tree ||
		    memcmp(m->btrfs.fsid, t->btrfs.fsid, sizeof(t->btrfs.fsid)) != 0 || !m->devnode)
			continue;
		fd = open(m->devnode, O_RDONLY | O_CLOEXEC | O_NOCTTY);
		if (fd >= 0 && inventory_read_btrfs_replace(fd, &m->btrfs, &t->btrfs.replace_src_devid,
							    &t->btrfs.replace_state) == 0)
			t->btrfs.replace_known = true;
	}
}

int inventory_scan(struct inventory *ret, enum inventory_depth depth, struct diag_list *diags)
{
	struct inventory inv = { .depth = depth };
	struct scan_queue q = { 0 };
	struct udev *udev;
	size_t i;
	int r;

	udev = udev_new();
	if (!udev)
		return -ENOMEM;
	r = scan_enumerate(udev, &q);
	if (r < 0)
		goto out;
	for (i = 0; i < q.n; i++)
		q.items[i].depth = depth;
	scan_probe_all(&q);
	/* in enumeration order, as a serial scan would report and list them */
	for (i = 0; i < q.n && r >= 0; i++) {
		r = q.items[i].collect;
		if (r != 0)
			continue;
		r = scan_report(&q.items[i], diags);
		if (r == 1)
			r = add_unreadable(&inv, &q.items[i]);
		else if (r == 0)
			r = inventory_add(&inv, &q.items[i].d);
	}
	if (r < 0)
		goto out;
	for (i = 0; i < inv.n_devs; i++)
		if (inv.devs[i].is_btrfs && inv.devs[i].btrfs.devid == BTRFS_DEV_REPLACE_DEVID)
			read_replace_source(&inv, &inv.devs[i]);
	*ret = inv;
	memset(&inv, 0, sizeof(inv));
	r = 0;
out:
	for (i = 0; i < q.n; i++) {
		block_device_done(&q.items[i].d);
		free(q.items[i].syspath);
		free(q.items[i].udev_fs_type);
		free(q.items[i].udev_fs_uuid);
	}
	free(q.items);
	inventory_done(&inv);
	udev_unref(udev);
	return r;
}
