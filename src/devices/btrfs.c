/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Multi-device btrfs: which members of which filesystem are present (pure,
 * from the superblocks in the inventory), and the three control ioctls of
 * /dev/btrfs-control (include/uapi/linux/btrfs.h; kernel fs/btrfs/super.c,
 * btrfs_control_ioctl()).
 *
 * Steps of btrfs_group():
 *   1. collect the btrfs members of the inventory;
 *   2. sort them by (fsid, devid, newest generation first, devnode);
 *   3. for each fsid: keep the device of each devid only one device claims
 *      (a devid two devices claim is a clone: neither is kept), take label
 *      and num_devices from the newest device, note members whose
 *      generation is behind the newest member's (stale), and derive the
 *      missing devids from the members' sys_chunk_array devids.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <linux/btrfs.h>

#include "btrfs.h"
#include "shared/util.h"

/* ---------------------------------------------------------------- grouping */

static int member_cmp(const void *a, const void *b)
{
	const struct block_device *x = *(const struct block_device *const *)a;
	const struct block_device *y = *(const struct block_device *const *)b;
	int r = memcmp(x->btrfs.fsid, y->btrfs.fsid, sizeof(x->btrfs.fsid));

	if (r)
		return r;
	if (x->btrfs.devid != y->btrfs.devid)
		return x->btrfs.devid < y->btrfs.devid ? -1 : 1;
	if (x->btrfs.generation != y->btrfs.generation)
		return x->btrfs.generation > y->btrfs.generation ? -1 : 1;
	return strcmp(x->devnode ?: "", y->devnode ?: "");
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Step 3a: one member per devid; @devs is sorted by member_cmp.  A devid
 * that two devices claim has no member: which copy is the filesystem cannot
 * be told from the superblocks, and the kernel would take whichever it was
 * told about last. */
static int fs_pick_members(struct btrfs_filesystem *fs, const struct block_device **devs, size_t n,
			   struct diag_list *diags)
{
	fs->members = calloc(n, sizeof(*fs->members));
	fs->clones = calloc(n, sizeof(*fs->clones));
	if (!fs->members || !fs->clones)
		return -ENOMEM;
	for (size_t i = 0, j; i < n; i = j) {
		uint64_t devid = devs[i]->btrfs.devid;

		for (j = i + 1; j < n && devs[j]->btrfs.devid == devid; j++)
			fs->clones[fs->n_clones++] = (struct btrfs_clone){ devid, devs[i], devs[j] };
		if (j == i + 1)
			fs->members[fs->n_members++] = (struct btrfs_member){ devid, devs[i] };
	}
	if (fs->n_clones) {
		char msg[1024];

		if (diag_warning(diags, NULL, 0, "%s", btrfs_format_clones(fs, msg, sizeof(msg))) < 0)
			return -ENOMEM;
	}
	return 0;
}

/* A member, or a devid claimed by clones (present, but not usable). */
static bool fs_has_devid(const struct btrfs_filesystem *fs, uint64_t devid)
{
	for (size_t i = 0; i < fs->n_members; i++)
		if (fs->members[i].devid == devid)
			return true;
	for (size_t i = 0; i < fs->n_clones; i++)
		if (fs->clones[i].devid == devid)
			return true;
	return false;
}

/* The distinct devids among the clones (they come sorted by devid). */
static size_t fs_clone_devids(const struct btrfs_filesystem *fs)
{
	size_t n = 0;

	for (size_t i = 0; i < fs->n_clones; i++)
		n += i == 0 || fs->clones[i].devid != fs->clones[i - 1].devid;
	return n;
}

/* Step 3c: devids named by the system chunks of any member, not present. */
static int fs_find_missing(struct btrfs_filesystem *fs)
{
	size_t cap = 0, n = 0;

	for (size_t i = 0; i < fs->n_members; i++)
		cap += fs->members[i].dev->btrfs.n_sys_devids;
	if (cap == 0)
		return 0;
	fs->missing = calloc(cap, sizeof(*fs->missing));
	if (!fs->missing)
		return -ENOMEM;
	for (size_t i = 0; i < fs->n_members; i++) {
		const struct btrfs_sb_info *b = &fs->members[i].dev->btrfs;

		for (size_t k = 0; k < b->n_sys_devids && k < BTRFS_SB_MAX_SYS_DEVIDS; k++)
			if (!fs_has_devid(fs, b->sys_devids[k]))
				fs->missing[n++] = b->sys_devids[k];
	}
	qsort(fs->missing, n, sizeof(*fs->missing), u64_cmp);
	for (size_t i = 0; i < n; i++)
		if (fs->n_missing == 0 || fs->missing[fs->n_missing - 1] != fs->missing[i])
			fs->missing[fs->n_missing++] = fs->missing[i];
	return 0;
}

/* Step 3: build @fs from the @n sorted members @devs of one fsid. */
static int fs_build(struct btrfs_filesystem *fs, const struct block_device **devs, size_t n,
		    struct diag_list *diags)
{
	const struct btrfs_sb_info *newest = &devs[0]->btrfs;
	uint64_t accounted;
	int r;

	memcpy(fs->fsid, devs[0]->btrfs.fsid_str, sizeof(fs->fsid));
	fs->fsid[sizeof(fs->fsid) - 1] = '\0';
	r = fs_pick_members(fs, devs, n, diags);
	if (r < 0)
		return r;
	for (size_t i = 0; i < n; i++)
		if (devs[i]->btrfs.generation > newest->generation)
			newest = &devs[i]->btrfs;
	for (size_t i = 0; i < fs->n_members; i++)
		if (fs->members[i].dev->btrfs.generation > fs->generation)
			fs->generation = fs->members[i].dev->btrfs.generation;
	fs->num_devices = newest->num_devices;
	if (newest->label[0] && !(fs->label = strndup(newest->label, sizeof(newest->label))))
		return -ENOMEM;
	r = fs_find_missing(fs);
	if (r < 0)
		return r;
	accounted = fs->n_members + fs->n_missing + fs_clone_devids(fs);
	fs->n_unknown_missing = fs->num_devices > accounted ? fs->num_devices - accounted : 0;
	return 0;
}

int btrfs_group(const struct inventory *inv, struct btrfs_fs_list *ret, struct diag_list *diags)
{
	struct btrfs_fs_list l = { 0 };
	const struct block_device **devs;
	size_t n = 0;
	int r = -ENOMEM;

	/* Step 1 */
	devs = calloc(inv->n_devs ?: 1, sizeof(*devs));
	if (!devs)
		return -ENOMEM;
	for (size_t i = 0; i < inv->n_devs; i++)
		if (inv->devs[i].is_btrfs)
			devs[n++] = &inv->devs[i];
	/* Step 2 */
	qsort(devs, n, sizeof(*devs), member_cmp);
	/* Step 3: at most n filesystems; runs of equal fsid */
	l.v = calloc(n ?: 1, sizeof(*l.v));
	if (!l.v)
		goto out;
	for (size_t i = 0, j; i < n; i = j) {
		for (j = i + 1; j < n; j++)
			if (memcmp(devs[i]->btrfs.fsid, devs[j]->btrfs.fsid, 16) != 0)
				break;
		r = fs_build(&l.v[l.n++], devs + i, j - i, diags);
		if (r < 0)
			goto out;
	}
	*ret = l;
	memset(&l, 0, sizeof(l));
	r = 0;
out:
	btrfs_fs_list_done(&l);
	free(devs);
	return r;
}

const struct btrfs_filesystem *btrfs_fs_list_find(const struct btrfs_fs_list *l, const char *fsid)
{
	for (size_t i = 0; l && fsid && i < l->n; i++)
		if (strcasecmp(l->v[i].fsid, fsid) == 0)
			return &l->v[i];
	return NULL;
}

bool btrfs_filesystem_complete(const struct btrfs_filesystem *fs)
{
	return fs->n_missing == 0 && fs->n_unknown_missing == 0 && fs->n_clones == 0;
}

/* Append to @buf of @len at *@pos, never past its end. */
_printf_(4, 5) static void buf_append(char *buf, size_t len, size_t *pos, const char *fmt, ...);

static void buf_append(char *buf, size_t len, size_t *pos, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (*pos >= len)
		return;
	va_start(ap, fmt);
	n = vsnprintf(buf + *pos, len - *pos, fmt, ap);
	va_end(ap);
	if (n > 0)
		*pos = *pos + (size_t)n < len ? *pos + (size_t)n : len;
}

/*
 * "devid 2 missing", "devids 2, 3 missing", "1 member missing",
 * "2 members missing", "devid 2 and 1 other member missing",
 * "devids 2, 3 and 2 other members missing".
 */
char *btrfs_format_missing(const struct btrfs_filesystem *fs, char *buf, size_t len)
{
	uint64_t u = fs->n_unknown_missing;
	size_t pos = 0;

	if (!len)
		return buf;
	buf[0] = '\0';
	if (fs->n_missing)
		buf_append(buf, len, &pos, "devid%s ", fs->n_missing > 1 ? "s" : "");
	for (size_t i = 0; i < fs->n_missing; i++)
		buf_append(buf, len, &pos, "%s%" PRIu64, i ? ", " : "", fs->missing[i]);
	if (fs->n_missing && u)
		buf_append(buf, len, &pos, " and %" PRIu64 " other member%s missing", u, u > 1 ? "s" : "");
	else if (u)
		buf_append(buf, len, &pos, "%" PRIu64 " member%s missing", u, u > 1 ? "s" : "");
	else if (fs->n_missing)
		buf_append(buf, len, &pos, " missing");
	return buf;
}

bool btrfs_member_stale(const struct btrfs_filesystem *fs, const struct btrfs_member *m)
{
	return m->dev->btrfs.generation < fs->generation;
}

const struct btrfs_member *btrfs_first_stale(const struct btrfs_filesystem *fs)
{
	for (size_t i = 0; i < fs->n_members; i++)
		if (btrfs_member_stale(fs, &fs->members[i]))
			return &fs->members[i];
	return NULL;
}

unsigned btrfs_fs_problems(const struct btrfs_filesystem *fs)
{
	unsigned p = 0;

	if (fs->n_members < fs->num_devices || fs->n_missing || fs->n_unknown_missing)
		p |= BTRFS_FS_INCOMPLETE;
	if (btrfs_first_stale(fs))
		p |= BTRFS_FS_STALE;
	if (fs->n_clones)
		p |= BTRFS_FS_AMBIGUOUS;
	return p;
}

char *btrfs_format_clones(const struct btrfs_filesystem *fs, char *buf, size_t len)
{
	size_t pos = 0;

	if (!len)
		return buf;
	buf[0] = '\0';
	if (!fs->n_clones)
		return buf;
	buf_append(buf, len, &pos, "btrfs %s: ", fs->fsid);
	for (size_t i = 0; i < fs->n_clones; i++) {
		const struct btrfs_clone *c = &fs->clones[i];

		buf_append(buf, len, &pos,
			   "%s'%s' and '%s' both claim devid %" PRIu64 " (generations %" PRIu64
			   " and %" PRIu64 ")",
			   i ? "; " : "", c->a->devnode, c->b->devnode, c->devid,
			   c->a->btrfs.generation, c->b->btrfs.generation);
	}
	buf_append(buf, len, &pos,
		   ": a cloned disk? storaged registers neither and does not mount this filesystem: detach the copy that does not belong, or give it a new fsid (btrfstune -u)");
	return buf;
}

char *btrfs_format_stale(const struct btrfs_filesystem *fs, char *buf, size_t len)
{
	size_t pos = 0, n = 0;

	if (!len)
		return buf;
	buf[0] = '\0';
	for (size_t i = 0; i < fs->n_members; i++) {
		const struct btrfs_member *m = &fs->members[i];

		if (!btrfs_member_stale(fs, m))
			continue;
		buf_append(buf, len, &pos,
			   "%sdevid %" PRIu64 " ('%s') is stale: generation %" PRIu64
			   " against %" PRIu64 " of the others",
			   n++ ? "; " : "", m->devid, m->dev->devnode, m->dev->btrfs.generation,
			   fs->generation);
	}
	if (n)
		buf_append(buf, len, &pos, "; it was away while the filesystem was written to");
	return buf;
}

char *btrfs_stale_advice(const char *mountpoint, unsigned how, const char *self, char *buf, size_t len)
{
	char q[PATH_MAX * 4 + 3];

	if ((how & STALE_SCRUB_STARTED) && mountpoint)
		snprintf(buf, len, "storaged started a scrub of it (stale-member = scrub): `btrfs scrub status %s` shows how far it got",
			 shell_quote(mountpoint, q, sizeof(q)));
	else if ((how & STALE_MEMBER_UNUSED) && mountpoint)
		snprintf(buf, len, "the mounted filesystem does not use it (it came back while mounted degraded), so no scrub reaches it: run `umount %s && %s start`, then `btrfs scrub start %s`",
			 shell_quote(mountpoint, q, sizeof(q)), self ? self : "storaged", q);
	else if ((how & STALE_MOUNTED_RO) && mountpoint)
		snprintf(buf, len, "only a scrub rewrites what it missed, and none can on a read-only mount: run `mount -o remount,rw %s`, then `btrfs scrub start %s`",
			 shell_quote(mountpoint, q, sizeof(q)), q);
	else if (mountpoint)
		snprintf(buf, len, "only a scrub rewrites what it missed: run `btrfs scrub start %s`",
			 shell_quote(mountpoint, q, sizeof(q)));
	else
		snprintf(buf, len, "only a scrub rewrites what it missed: mount the filesystem, then run `btrfs scrub start` on its mount point");
	return buf;
}

void btrfs_fs_list_done(struct btrfs_fs_list *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i].label);
		free(l->v[i].members);
		free(l->v[i].missing);
		free(l->v[i].clones);
	}
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

/* ------------------------------------------------------------------ ioctls */

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

int btrfs_register_device(const char *devnode)
{
	int r;

	if (!devnode || !*devnode)
		return -EINVAL;
	r = control_ioctl(BTRFS_IOC_SCAN_DEV, devnode);
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
	int r;

	if (!devnode || !*devnode)
		return -EINVAL;
	r = control_ioctl(BTRFS_IOC_DEVICES_READY, devnode);
	if (r < 0)
		return r;
	return r == 0;
}
