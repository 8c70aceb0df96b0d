/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Block device inventory.
 *
 * Scanning: libudev enumerates the "block" subsystem straight from sysfs
 * (no udevd needed; udev properties such as DM_MULTIPATH_DEVICE_PATH are
 * only seen where udevd keeps its database).  Each device is opened once,
 * probed by libblkid, and for btrfs the same descriptor is used to read the
 * superblock (btrfs_sb_read()).
 *
 * Fixtures: an ini file read through inih.  Lines are counted by our own
 * reader (inih's count depends on how the distribution built it), and the
 * reader itself rejects what inih would treat differently per build
 * (over-long lines, ':' separators, continuation lines), so every error is
 * reported once, with its own line, in one pass.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <blkid.h>
#include <ini.h>
#include <libudev.h>

#include "inventory.h"
#include "units.h"

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
 * (one 4 KiB read instead of ~45 reads and ~1 MiB).  Returns: 0, -ENOMEM, or
 * 1 when this is not a btrfs member. */
static int probe_btrfs_first(int fd, struct block_device *d)
{
	char sub[37];
	const uint8_t *u;

	if (btrfs_sb_read(fd, &d->btrfs) < 0)
		return 1;
	u = d->btrfs.dev_uuid;
	snprintf(sub, sizeof(sub),
		 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1], u[2],
		 u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
	d->type = strdup("btrfs");
	d->uuid = strdup(d->btrfs.fsid_str);
	d->uuid_sub = strdup(sub);
	d->label = d->btrfs.label[0] ? strdup(d->btrfs.label) : NULL;
	if (!d->type || !d->uuid || !d->uuid_sub || (d->btrfs.label[0] && !d->label))
		return -ENOMEM;
	d->is_btrfs = true;
	return 0;
}

int inventory_probe_fd(int fd, struct block_device *d, int *ret_sb_err, bool partition)
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
	pr = blkid_new_probe();
	if (!pr)
		return -ENOMEM;
	r = -EIO;
	if (blkid_probe_set_device(pr, fd, 0, 0) < 0)
		goto out;
	blkid_probe_enable_superblocks(pr, 1);
	blkid_probe_set_superblocks_flags(pr, BLKID_SUBLKS_TYPE | BLKID_SUBLKS_UUID |
						      BLKID_SUBLKS_LABEL);
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
	*ret_sb_err = btrfs_sb_read(fd, &d->btrfs);
	d->is_btrfs = *ret_sb_err == 0;
out:
	blkid_free_probe(pr);
	return r;
}

/* ---------------------------------------------------------------- scanning */

/* Read a short sysfs attribute relative to @dirfd, without the newline. */
static int read_attr_at(int dirfd, const char *rel, char *buf, size_t size)
{
	ssize_t n;
	int fd = openat(dirfd, rel, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	if (n < 0)
		n = -errno;
	close(fd);
	if (n < 0)
		return (int)n;
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

/* Open @devnode and probe it into @d.  Returns: 0; -ENOMEM; 1 skipped. */
static int scan_probe(const char *devnode, struct block_device *d, struct diag_list *diags, bool partition)
{
	int fd, r, sb_err;

	fd = open(devnode, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		r = diag_warning(diags, NULL, 0, "skipping '%s': cannot open: %s", devnode, strerror(errno));
		return r < 0 ? r : 1;
	}
	r = inventory_probe_fd(fd, d, &sb_err, partition);
	close(fd);
	if (r == -ENOMEM)
		return r;
	if (r < 0) {
		r = diag_warning(diags, NULL, 0, "skipping '%s': libblkid cannot probe it: %s", devnode,
				 strerror(-r));
		return r < 0 ? r : 1;
	}
	if (sb_err < 0)
		r = diag_warning(diags, NULL, 0,
				 "'%s': libblkid reports btrfs but its superblock is unusable (%s); not treating it as a btrfs member",
				 devnode, strerror(-sb_err));
	return r;
}

/* Decode udev's \xNN escapes of /dev/disk/by-* names into @out. */
static bool udev_unescape(const char *s, char *out, size_t size)
{
	size_t n = 0;

	for (; *s; n++) {
		if (n + 1 >= size)
			return false;
		if (s[0] == '\\' && s[1] == 'x' && isxdigit((unsigned char)s[2]) &&
		    isxdigit((unsigned char)s[3])) {
			char hex[3] = { s[2], s[3], '\0' };

			out[n] = (char)strtoul(hex, NULL, 16);
			s += 4;
		} else {
			out[n] = *s++;
		}
	}
	out[n] = '\0';
	return true;
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

	udev_list_entry_foreach(e, udev_device_get_devlinks_list_entry(ud)) {
		if (fsfacts_tag_from_path(udev_list_entry_get_name(e), &v) != FSFACTS_TAG_ID ||
		    !udev_unescape(v, buf, sizeof(buf)))
			continue;
		r = strv_extend(&d->ids, buf);
		if (r < 0)
			return r;
	}
	return 0;
}

static int scan_one(struct udev_device *ud, struct inventory *inv, struct diag_list *diags)
{
	const char *devnode = udev_device_get_devnode(ud);
	const char *size = udev_device_get_sysattr_value(ud, "size");
	struct block_device d = { 0 };
	int r;

	if (!devnode || (size && strcmp(size, "0") == 0) || is_multipath_path(ud))
		return 0;
	d.devno = udev_device_get_devnum(ud);
	d.devnode = strdup(devnode);
	if (!d.devnode)
		return -ENOMEM;
	r = scan_probe(devnode, &d, diags, strcmp(udev_device_get_devtype(ud) ?: "", "partition") == 0);
	if (r == 1)
		inv->n_skipped++;
	if (r == 0)
		r = scan_ids(ud, &d);
	if (r == 0)
		r = inventory_add(inv, &d);
	block_device_done(&d);
	return r < 0 ? r : 0;
}

int inventory_scan(struct inventory *ret, struct diag_list *diags)
{
	struct inventory inv = { 0 };
	struct udev_enumerate *en = NULL;
	struct udev_list_entry *e;
	struct udev *udev;
	int r;

	udev = udev_new();
	if (!udev)
		return -ENOMEM;
	r = -ENOMEM;
	en = udev_enumerate_new(udev);
	if (!en)
		goto out;
	r = udev_enumerate_add_match_subsystem(en, "block");
	r = r ?: udev_enumerate_scan_devices(en);
	if (r < 0)
		goto out;
	udev_list_entry_foreach(e, udev_enumerate_get_list_entry(en)) {
		struct udev_device *ud =
			udev_device_new_from_syspath(udev, udev_list_entry_get_name(e));

		if (!ud)
			continue; /* removed meanwhile */
		r = scan_one(ud, &inv, diags);
		udev_device_unref(ud);
		if (r < 0)
			goto out;
	}
	*ret = inv;
	memset(&inv, 0, sizeof(inv));
	r = 0;
out:
	inventory_done(&inv);
	udev_enumerate_unref(en);
	udev_unref(udev);
	return r;
}

/* ----------------------------------------------------------------- finding */

static bool str_eq(const char *a, const char *b, bool icase)
{
	if (!a || !b)
		return false;
	return icase ? strcasecmp(a, b) == 0 : strcmp(a, b) == 0;
}

static bool device_matches(const struct block_device *d, enum fsfacts_tag by, const char *v)
{
	switch (by) {
	case FSFACTS_TAG_NONE:
		return str_eq(d->devnode, v, false);
	case FSFACTS_TAG_UUID:
		return str_eq(d->uuid, v, true);
	case FSFACTS_TAG_LABEL:
		return str_eq(d->label, v, false);
	case FSFACTS_TAG_PARTUUID:
		return str_eq(d->partuuid, v, true);
	case FSFACTS_TAG_PARTLABEL:
		return str_eq(d->partlabel, v, false);
	case FSFACTS_TAG_ID:
		return strv_contains(d->ids, v);
	}
	return false;
}

/*
 * Strings only, no I/O: "/dev/disk/by-{uuid,label,partuuid,partlabel,id}/X"
 * are read as the matching tag (udev's \xNN escapes decoded); any other
 * path must equal a devnode exactly.
 */
const struct block_device *inventory_find(const struct inventory *inv, const char *spec)
{
	enum fsfacts_tag by;
	const char *v = spec;
	char buf[1024];

	if (!inv || !spec)
		return NULL;
	by = fsfacts_tag_parse(spec, &v);
	if (by == FSFACTS_TAG_NONE) {
		by = fsfacts_tag_from_path(spec, &v);
		if (by != FSFACTS_TAG_NONE) {
			if (!udev_unescape(v, buf, sizeof(buf)))
				return NULL;
			v = buf;
		} else {
			v = spec;
		}
	}
	for (size_t i = 0; i < inv->n_devs; i++)
		if (device_matches(&inv->devs[i], by, v))
			return &inv->devs[i];
	return NULL;
}

/* ---------------------------------------------------------------- fixtures */

struct fixture_ctx {
	const char *path;
	FILE *f;
	char *buf; /* getline buffer */
	size_t buf_size;
	unsigned lineno; /* physical line last handed to inih */
	unsigned last_error_line;
	int io_error; /* -errno from reading */
	int fatal; /* -ENOMEM */
	struct diag_list *diags;
	struct inventory inv;
	char **devnodes; /* of every section, valid or not: duplicates */
	/* the section being read */
	bool in_section; /* a [device ...] section, keys go to cur */
	bool bad_section; /* a rejected section: its keys are ignored */
	unsigned section_line;
	unsigned seen; /* bit per key of fixture_keys */
	struct block_device cur;
};

_printf_(3, 4) static void fixture_error(struct fixture_ctx *c, unsigned line, const char *fmt, ...);

static void fixture_error(struct fixture_ctx *c, unsigned line, const char *fmt, ...)
{
	_cleanup_free_ char *msg = NULL;
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = vasprintf(&msg, fmt, ap);
	va_end(ap);
	c->last_error_line = line;
	if (r < 0 || diag_error(c->diags, c->path, line, "%s", msg) < 0)
		c->fatal = -ENOMEM;
}

static int set_string(struct fixture_ctx *c, const char *v, char **dst)
{
	free(*dst);
	*dst = strdup(v);
	return *dst ? 0 : -ENOMEM;
}

static int set_type(struct fixture_ctx *c, const char *v)
{
	return set_string(c, v, &c->cur.type);
}

static int set_uuid(struct fixture_ctx *c, const char *v)
{
	return set_string(c, v, &c->cur.uuid);
}

static int set_uuid_sub(struct fixture_ctx *c, const char *v)
{
	return set_string(c, v, &c->cur.uuid_sub);
}

static int set_label(struct fixture_ctx *c, const char *v)
{
	if (strlen(v) >= sizeof(c->cur.btrfs.label))
		return -ERANGE;
	snprintf(c->cur.btrfs.label, sizeof(c->cur.btrfs.label), "%s", v);
	return set_string(c, v, &c->cur.label);
}

static int set_partuuid(struct fixture_ctx *c, const char *v)
{
	return set_string(c, v, &c->cur.partuuid);
}

static int set_partlabel(struct fixture_ctx *c, const char *v)
{
	return set_string(c, v, &c->cur.partlabel);
}

static int set_devno(struct fixture_ctx *c, const char *v)
{
	char major_s[16], minor_s[16];
	uint64_t ma, mi;
	const char *colon = strchr(v, ':');
	int r;

	if (!colon || (size_t)(colon - v) >= sizeof(major_s) || strlen(colon + 1) >= sizeof(minor_s))
		return -EINVAL;
	memcpy(major_s, v, (size_t)(colon - v));
	major_s[colon - v] = '\0';
	strcpy(minor_s, colon + 1);
	r = units_parse_uint(major_s, 4095, &ma);
	r = r ?: units_parse_uint(minor_s, (1u << 20) - 1, &mi);
	if (r < 0)
		return r;
	c->cur.devno = makedev((unsigned)ma, (unsigned)mi);
	return 0;
}

static int set_devid(struct fixture_ctx *c, const char *v)
{
	int r = units_parse_uint(v, UINT64_MAX, &c->cur.btrfs.devid);

	return r ?: (c->cur.btrfs.devid ? 0 : -ERANGE);
}

static int set_num_devices(struct fixture_ctx *c, const char *v)
{
	int r = units_parse_uint(v, UINT64_MAX, &c->cur.btrfs.num_devices);

	return r ?: (c->cur.btrfs.num_devices ? 0 : -ERANGE);
}

static int set_generation(struct fixture_ctx *c, const char *v)
{
	return units_parse_uint(v, UINT64_MAX, &c->cur.btrfs.generation);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int set_sys_devids(struct fixture_ctx *c, const char *v)
{
	struct btrfs_sb_info *b = &c->cur.btrfs;
	char tok[32];
	size_t n = 0;

	while (*(v += strspn(v, " \t"))) {
		size_t len = strcspn(v, " \t");
		uint64_t id;

		if (len >= sizeof(tok) || n == BTRFS_SB_MAX_SYS_DEVIDS)
			return -ERANGE;
		memcpy(tok, v, len);
		tok[len] = '\0';
		if (units_parse_uint(tok, UINT64_MAX, &id) < 0 || id == 0)
			return -EINVAL;
		b->sys_devids[n++] = id;
		v += len;
	}
	qsort(b->sys_devids, n, sizeof(b->sys_devids[0]), cmp_u64);
	b->n_sys_devids = 0;
	for (size_t i = 0; i < n; i++)
		if (i == 0 || b->sys_devids[i] != b->sys_devids[i - 1])
			b->sys_devids[b->n_sys_devids++] = b->sys_devids[i];
	return 0;
}

enum {
	KEY_DEVID = 1u << 7,
	KEY_NUM_DEVICES = 1u << 8,
	KEY_GENERATION = 1u << 9,
	KEY_SYS_DEVIDS = 1u << 10,
	KEYS_BTRFS = KEY_DEVID | KEY_NUM_DEVICES | KEY_GENERATION | KEY_SYS_DEVIDS,
};

static const struct fixture_key {
	const char *name;
	int (*set)(struct fixture_ctx *c, const char *v);
	const char *expect; /* what a valid value looks like */
} fixture_keys[] = {
	{ "type", set_type, "a filesystem type" },
	{ "uuid", set_uuid, "a uuid" },
	{ "uuid_sub", set_uuid_sub, "a uuid" },
	{ "label", set_label, "a label of at most 255 bytes" },
	{ "partuuid", set_partuuid, "a uuid" },
	{ "partlabel", set_partlabel, "a label" },
	{ "devno", set_devno, "MAJOR:MINOR" },
	{ "devid", set_devid, "a devid >= 1" },
	{ "num_devices", set_num_devices, "a count >= 1" },
	{ "generation", set_generation, "a number" },
	{ "sys_devids", set_sys_devids, "space-separated devids >= 1 (at most 64)" },
};

_Static_assert(ARRAY_SIZE(fixture_keys) == 11, "KEY_* bits follow fixture_keys order");

/* Parse a 36-character uuid string into 16 bytes. */
static bool uuid_parse(const char *s, uint8_t out[16])
{
	static const int dash[] = { 8, 13, 18, 23 };
	size_t n = 0;

	if (strlen(s) != 36)
		return false;
	for (size_t i = 0; i < 4; i++)
		if (s[dash[i]] != '-')
			return false;
	for (size_t i = 0; i < 36; i++) {
		char hex[3];

		if (s[i] == '-' && (i == 8 || i == 13 || i == 18 || i == 23))
			continue;
		if (n == 16 || !isxdigit((unsigned char)s[i]) ||
		    !isxdigit((unsigned char)s[i + 1]))
			return false;
		hex[0] = s[i];
		hex[1] = s[i + 1];
		hex[2] = '\0';
		out[n++] = (uint8_t)strtoul(hex, NULL, 16);
		i++;
	}
	return n == 16;
}

/* Fill cur.btrfs from the keys of a btrfs section.  Returns: false on errors. */
static bool fixture_finish_btrfs(struct fixture_ctx *c)
{
	struct btrfs_sb_info *b = &c->cur.btrfs;
	unsigned line = c->section_line;
	bool ok = true;

	if (!c->cur.uuid || !uuid_parse(c->cur.uuid, b->fsid)) {
		fixture_error(c, line, "btrfs device '%s' needs 'uuid' (the fsid) as a 36-character uuid",
			      c->cur.devnode);
		ok = false;
	}
	if (c->cur.uuid_sub && !uuid_parse(c->cur.uuid_sub, b->dev_uuid)) {
		fixture_error(c, line, "btrfs device '%s': 'uuid_sub' '%s' is not a uuid",
			      c->cur.devnode, c->cur.uuid_sub);
		ok = false;
	}
	if (!(c->seen & KEY_DEVID) || !(c->seen & KEY_NUM_DEVICES)) {
		fixture_error(c, line, "btrfs device '%s' needs 'devid' and 'num_devices'",
			      c->cur.devnode);
		ok = false;
	}
	if (ok) {
		for (size_t i = 0; i < 36; i++)
			b->fsid_str[i] = (char)tolower((unsigned char)c->cur.uuid[i]);
		b->fsid_str[36] = '\0';
		c->cur.is_btrfs = true;
	}
	return ok;
}

/* Validate the finished section and move its device into the inventory. */
static void fixture_section_end(struct fixture_ctx *c)
{
	bool btrfs = c->cur.type && strcmp(c->cur.type, "btrfs") == 0;
	bool ok = true;

	if (!c->in_section)
		return;
	if (btrfs) {
		ok = fixture_finish_btrfs(c);
	} else if (c->seen & KEYS_BTRFS) {
		fixture_error(c, c->section_line,
			      "device '%s': devid, num_devices, generation and sys_devids need 'type = btrfs'",
			      c->cur.devnode);
		ok = false;
	}
	if (ok && inventory_add(&c->inv, &c->cur) < 0)
		c->fatal = -ENOMEM;
	block_device_done(&c->cur);
	c->in_section = false;
}

/* A "[...]" line: @name is the text between the brackets. */
static void fixture_section_begin(struct fixture_ctx *c, const char *name)
{
	const char *node;

	fixture_section_end(c);
	c->bad_section = true;
	c->section_line = c->lineno;
	c->seen = 0;
	if (strncmp(name, "device ", 7) != 0 || (node = name + 7 + strspn(name + 7, " \t"))[0] != '/') {
		fixture_error(c, c->lineno, "unknown section '[%s]': expected '[device /dev/NAME]'", name);
		return;
	}
	if (strv_contains(c->devnodes, node)) {
		fixture_error(c, c->lineno, "device '%s' is listed twice", node);
		return;
	}
	c->cur.devnode = strdup(node);
	if (!c->cur.devnode || strv_extend(&c->devnodes, node) < 0) {
		c->fatal = -ENOMEM;
		return;
	}
	c->bad_section = false;
	c->in_section = true;
}

static int fixture_handler(void *user, const char *section, const char *name, const char *value)
{
	struct fixture_ctx *c = user;
	size_t i;
	int r;

	if (c->bad_section || c->fatal)
		return 1;
	if (!c->in_section) {
		fixture_error(c, c->lineno, "key '%s' outside a '[device /dev/NAME]' section", name);
		return 1;
	}
	for (i = 0; i < ARRAY_SIZE(fixture_keys); i++)
		if (strcmp(fixture_keys[i].name, name) == 0)
			break;
	if (i == ARRAY_SIZE(fixture_keys)) {
		fixture_error(c, c->lineno, "unknown key '%s'", name);
		return 1;
	}
	if (c->seen & (1u << i)) {
		fixture_error(c, c->lineno, "key '%s' given twice in this section", name);
		return 1;
	}
	c->seen |= 1u << i;
	r = fixture_keys[i].set(c, value);
	if (r == -ENOMEM)
		c->fatal = r;
	else if (r < 0)
		fixture_error(c, c->lineno, "%s = '%s': expected %s", name, value,
			      fixture_keys[i].expect);
	return 1;
}

/* Cut a ';' or '#' comment that starts a line or follows a blank. */
static void strip_comment(char *s)
{
	for (char *p = s; *p; p++)
		if ((*p == ';' || *p == '#') && (p == s || isblank((unsigned char)p[-1]))) {
			*p = '\0';
			return;
		}
}

static char *strip_space(char *s)
{
	size_t n;

	s += strspn(s, " \t");
	n = strlen(s);
	while (n && isspace((unsigned char)s[n - 1]))
		s[--n] = '\0';
	return s;
}

/*
 * Check one physical line; returns what inih should see: the line as
 * "key=value", or "" when we dealt with it ourselves (blank, comment,
 * section header, error).
 */
static const char *fixture_line(struct fixture_ctx *c, char *line, size_t max)
{
	char *s, *eq;

	strip_comment(line);
	if (isblank((unsigned char)line[0]) && strip_space(line)[0]) {
		fixture_error(c, c->lineno, "line starts with a blank: continuation lines are not supported");
		return "";
	}
	s = strip_space(line);
	if (!*s)
		return "";
	if (*s == '[') {
		size_t n = strlen(s);

		if (s[n - 1] != ']') {
			fixture_error(c, c->lineno, "section header without ']'");
			return "";
		}
		s[n - 1] = '\0';
		fixture_section_begin(c, strip_space(s + 1));
		return "";
	}
	eq = strchr(s, '=');
	if (!eq || strcspn(s, ":") < (size_t)(eq - s) || eq == s) {
		fixture_error(c, c->lineno, "expected 'key = value'");
		return "";
	}
	if (strlen(s) + 2 > max) {
		fixture_error(c, c->lineno, "line too long (at most %zu characters)", max - 2);
		return "";
	}
	return s;
}

/* ini_reader: hands inih exactly one physical line per call. */
static char *fixture_reader(char *str, int num, void *stream)
{
	struct fixture_ctx *c = stream;
	const char *out;

	if (c->fatal || num < 3)
		return NULL;
	errno = 0;
	if (getline(&c->buf, &c->buf_size, c->f) < 0) {
		if (errno)
			c->io_error = -errno;
		return NULL;
	}
	c->lineno++;
	out = fixture_line(c, c->buf, (size_t)num);
	snprintf(str, (size_t)num, "%s\n", out);
	return str;
}

int inventory_load_fixture(struct inventory *ret, const char *path, struct diag_list *diags)
{
	struct fixture_ctx c = { .path = path, .diags = diags };
	size_t errors = diag_count(diags, DIAG_ERROR);
	int r;

	c.f = fopen(path, "re");
	if (!c.f)
		return -errno;
	r = ini_parse_stream(fixture_reader, &c, fixture_handler, &c);
	if (r > 0 && (unsigned)r != c.last_error_line)
		fixture_error(&c, (unsigned)r, "syntax error");
	else if (r < 0 && !c.io_error)
		c.fatal = -ENOMEM;
	fixture_section_end(&c);
	block_device_done(&c.cur);
	r = c.fatal ?: c.io_error;
	if (!r && diag_count(diags, DIAG_ERROR) > errors)
		r = -EINVAL;
	if (!r) {
		*ret = c.inv;
		memset(&c.inv, 0, sizeof(c.inv));
	}
	inventory_done(&c.inv);
	strv_free(c.devnodes);
	free(c.buf);
	fclose(c.f);
	return r;
}
