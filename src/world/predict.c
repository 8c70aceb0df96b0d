/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Predictions (predict.h): each rule is a check start makes when the step
 * runs, made here on the same facts, so that --dry-run and check show the
 * failure with start's own reason.  The rules are the rows of rules[]
 * below, each citing the kernel, libmount or mkfs code it follows.
 * Only paths not below another step's mount point or area are checked:
 * what lies below those is not there before the step runs.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <libmount.h>

#include "area/area_precheck.h"
#include "mount/mountopt.h"
#include "parse/area_facts.h"
#include "parse/config.h"
#include "parse/fsfacts.h"
#include "plan/area_size.h"
#include "predict.h"
#include "shared/input.h"
#include "shared/optstr.h"
#include "shared/spawn_helper.h"
#include "shared/units.h"
#include "shared/util.h"

/* One pass of predict_plan(): its inputs, and what it read of the system,
 * each list loaded when a rule first needs it. */
struct predictor {
	const struct plan_input *in;
	const struct predict_sources *ps;
	struct plan *p;
	struct predictions *out;
	char **fstypes; /* kernel types, NULL until first needed */
	char **dev_types; /* those of them /proc/filesystems lists without
			     "nodev": they mount a block device */
	bool fstypes_loaded;
	bool aliases_loaded; /* modules.alias added to fstypes */
	char **zram_compressors; /* what a zram device lists, NULL: unknown */
	/* whether the kernel's zram has writeback, as a zram device shows */
	enum { ZRAM_WRITEBACK_UNKNOWN, ZRAM_WRITEBACK_YES, ZRAM_WRITEBACK_NO } zram_writeback;
	bool zram_loaded;
	/* below_pending(): the mount points and area paths of the steps still
	 * to run, sorted (strcmp); n_tops SIZE_MAX until built */
	const char **tops;
	size_t n_tops;
};

/* ------------------------------------------------------------ recording */

/* Step @i fails, because of the printf-formatted text (owned by @pr->out,
 * borrowed by the step).  Returns: 1, or -ENOMEM. */
_printf_(3, 4) static int record(struct predictor *pr, size_t i, const char *fmt, ...)
{
	char *why = NULL, **v;
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = vasprintf(&why, fmt, ap);
	va_end(ap);
	if (r < 0)
		return -ENOMEM;
	v = realloc(pr->out->why, (pr->out->n + 1) * sizeof(*v));
	if (!v) {
		free(why);
		return -ENOMEM;
	}
	pr->out->why = v;
	v[pr->out->n++] = why;
	pr->p->steps[i].predicted = why;
	return 1;
}

/* The fstab's name as diagnostics give it ("fstab:3" names file:line). */
static const char *fstab_file(const struct predictor *pr)
{
	return pr->in->fstab && pr->in->fstab->file ? pr->in->fstab->file : "fstab";
}

/* ------------------------------------------------------------ pure parsers */

int predict_parse_filesystems_buf(const char *buf, char ***types, char ***dev_types)
{
	/* "nodev\tsysfs\n\text4\n": an optional flag, a tab, the name */
	for (const char *l = buf; l && *l;) {
		const char *end = strchr(l, '\n'), *tab = strchr(l, '\t');
		size_t n;
		char *name;

		if (!end)
			end = l + strlen(l);
		if (tab && tab < end) {
			const char *t;

			n = (size_t)(end - tab - 1);
			name = strndup(tab + 1, n);
			if (!name)
				return -ENOMEM;
			/* stripped in place: the list owns and frees @name itself */
			t = strip(name);
			memmove(name, t, strlen(t) + 1);
			if (strv_push(types, name) < 0) {
				free(name);
				return -ENOMEM;
			}
			/* no flag: the type needs a device (FS_REQUIRES_DEV) */
			if (dev_types && tab == l && strv_extend(dev_types, name) < 0)
				return -ENOMEM;
		}
		l = *end ? end + 1 : end;
	}
	return 0;
}

int predict_parse_modules_alias_buf(const char *buf, char ***types)
{
	static const char key[] = "alias fs-";

	for (const char *l = buf; l && *l;) {
		const char *end = strchr(l, '\n');

		if (!end)
			end = l + strlen(l);
		if ((size_t)(end - l) > sizeof(key) - 1 && strncmp(l, key, sizeof(key) - 1) == 0) {
			const char *t = l + sizeof(key) - 1;
			size_t n = strcspn(t, " \t\n");
			char *name = strndup(t, n);

			if (!name || strv_push(types, name) < 0)
				return -ENOMEM;
		}
		l = *end ? end + 1 : end;
	}
	return 0;
}

int predict_parse_zram_compressors_buf(const char *buf, char ***names)
{
	for (const char *t = buf; t && *t;) {
		size_t n;
		char *name;

		t += strspn(t, " \t\n[");
		n = strcspn(t, " \t\n]");
		if (n == 0)
			break;
		name = strndup(t, n);
		if (!name || strv_push(names, name) < 0) {
			free(name);
			return -ENOMEM;
		}
		t += n + (t[n] == ']');
	}
	return 0;
}

/* One type of a list: itself or, for "fuse.sshfs", its main type. */
static bool one_type_in(const char *t, size_t n, char *const *types)
{
	const char *dot = memchr(t, '.', n);

	for (char *const *v = types; v && *v; v++)
		if ((strlen(*v) == n && strncmp(*v, t, n) == 0) ||
		    (dot && strlen(*v) == (size_t)(dot - t) && strncmp(*v, t, (size_t)(dot - t)) == 0))
			return true;
	return false;
}

bool predict_fstype_in(const char *fstype, char *const *types)
{
	for (const char *t = fstype; t && *t;) {
		size_t n = strcspn(t, ",");

		if (n && one_type_in(t, n, types))
			return true;
		t += n + (t[n] == ',');
	}
	return false;
}

/* ------------------------------------------------------------ filesystem types */

/* /proc/filesystems or modules.alias (a few MiB at most), whole: the
 * checks of storaged's own inputs but the owner's, the messages dropped
 * (a missing list is a prediction not made). */
static int read_text(const char *path, char **ret)
{
	struct diag_list dl = { 0 };
	size_t len;
	int r = input_read(path, 64u << 20, false, ret, &len, &dl);

	diag_list_done(&dl);
	return r;
}

/* The kernel's types: /proc/filesystems.  Returns: 0, -ENOENT when the
 * list cannot be read (no prediction then), -ENOMEM. */
static int load_fstypes(struct predictor *pr)
{
	char *buf = NULL;
	int r;

	pr->fstypes_loaded = true;
	if (read_text(pr->ps->filesystems_path ?: PREDICT_FILESYSTEMS, &buf) < 0)
		return -ENOENT;
	r = predict_parse_filesystems_buf(buf, &pr->fstypes, &pr->dev_types);
	free(buf);
	return r;
}

/* The types the kernel can load a module for (a mount(2) of an unlisted
 * type makes it run modprobe fs-TYPE), added to the list: read only when
 * a type is not listed, as modules.alias is large.  A test's list
 * (filesystems_path) is the whole list.  Returns: 0 or -ENOMEM. */
static int load_module_types(struct predictor *pr)
{
	char *buf = NULL, alias[512];
	struct utsname u;
	int r = 0;

	pr->aliases_loaded = true;
	if (pr->ps->filesystems_path || uname(&u) < 0)
		return 0;
	/* /usr/lib/modules where /lib is not a link to /usr/lib */
	snprintf(alias, sizeof(alias), "/lib/modules/%s/modules.alias", u.release);
	if (read_text(alias, &buf) == 0 ||
	    (snprintf(alias, sizeof(alias), "/usr/lib/modules/%s/modules.alias", u.release),
	     read_text(alias, &buf) == 0))
		r = predict_parse_modules_alias_buf(buf, &pr->fstypes);
	free(buf);
	return r;
}

/* Whether the kernel can put @a's fs on a device: 1 yes (or it cannot
 * be known: no /proc/filesystems), 0 no, negative errno. */
static int area_fstype_known(struct predictor *pr, const struct area_config *a)
{
	int r;

	if (!pr->fstypes_loaded && load_fstypes(pr) == -ENOMEM)
		return -ENOMEM;
	if (!pr->fstypes || predict_fstype_in(a->fs, pr->dev_types))
		return 1;
	/* listed, but nodev (tmpfs, proc): no device to make it on */
	if (predict_fstype_in(a->fs, pr->fstypes))
		return 0;
	if (!pr->aliases_loaded && (r = load_module_types(pr)) < 0)
		return r;
	/* a module the kernel loads (modules.alias does not say nodev) */
	return predict_fstype_in(a->fs, pr->fstypes);
}

int predict_area_fstypes(const struct config *c, const struct predict_sources *ps, struct diag_list *dl)
{
	struct predictor pr = { .ps = ps };
	int r = 0;

	for (size_t k = 0; r >= 0 && k < c->n_areas; k++) {
		const struct area_config *a = &c->areas[k];
		const char *file = a->file ? a->file : "storaged.conf";

		if (!a->fs_line || !area_is_ramdisk(a))
			continue;
		r = area_fstype_known(&pr, a);
		if (r == 0)
			r = diag_error(dl, file, a->fs_line,
				       "fs: '%s' is not a filesystem type the kernel can put on [area %s]'s %s device: it neither lists it without nodev (/proc/filesystems) nor has a module for it; correct it (e.g. fs = ext4) or install its driver",
				       a->fs, a->name, area_backend_facts(a->backend)->name);
		/* only the fs makes a zram area give the RAM of deleted files
		 * back; said of a type the kernel has, not of a typo */
		else if (r > 0 && a->backend == AREA_ZRAM && !area_discard_option(a))
			r = diag_warning(dl, file, a->fs_line,
					 "[area %s] puts %s on zram, which has no online discard: the memory of deleted files stays in use until the area is stopped; use fs = ext4 (or xfs, btrfs), which storaged mounts with discard",
					 a->name, a->fs);
	}
	strv_free(pr.fstypes);
	strv_free(pr.dev_types);
	return r < 0 ? r : 0;
}

static int rule_fstype(struct predictor *pr, size_t i)
{
	const struct fstab_entry *e = pr->p->steps[i].entry;
	int r;

	if (e->bind || !e->fstype || streq(e->fstype, "auto") || streq(e->fstype, "none"))
		return 0;
	if (!pr->fstypes_loaded && (r = load_fstypes(pr)) < 0)
		return r == -ENOENT ? 0 : r;
	if (!pr->fstypes || predict_fstype_in(e->fstype, pr->fstypes) || mount_helper_exists(pr->ps->helper_dirs, e->fstype))
		return 0;
	if (!pr->aliases_loaded && (r = load_module_types(pr)) < 0)
		return r;
	if (predict_fstype_in(e->fstype, pr->fstypes))
		return 0;
	return record(pr, i, "unknown filesystem type '%s' (%s:%u): the kernel neither lists it (/proc/filesystems) nor has a module for it, and no mount.%s helper is installed; correct the type or install its driver",
		      e->fstype, fstab_file(pr), e->line, e->fstype);
}

/* ------------------------------------------------------------ areas and waits */

/* The rules of an area apply once start knows its size: a seed that does
 * not fit is said first (the plan shows it). */
static bool area_sized(const struct plan_step *s)
{
	return !s->sizing_deferred && !(s->area->seed && !s->sizing.fits);
}

/* start's own checks before it sets an area up, called as they are
 * (area_precheck()), on the same facts; while the size is not known, all
 * but the memory check. */
static int rule_area_precheck(struct predictor *pr, size_t i)
{
	const struct plan_step *s = &pr->p->steps[i];
	char why[512];

	if ((!s->sizing_deferred && s->area->seed && !s->sizing.fits) ||
	    area_precheck(s->area, s->sizing_deferred ? NULL : &s->sizing, &pr->ps->mem, why,
			  sizeof(why)) == 0)
		return 0; /* a seed that does not fit is said first (the plan shows it) */
	return record(pr, i, "%s", why);
}

/* seed = overlay: start mounts an overlay (area_overlay.c), which the
 * kernel must have, listed or as a module; a directory on an overlay is
 * area_precheck()'s (rule_area_precheck()) */
static int rule_area_overlay(struct predictor *pr, size_t i)
{
	const struct area_config *a = pr->p->steps[i].area;
	int r;

	if (!a->overlay)
		return 0;
	if (!pr->fstypes_loaded && (r = load_fstypes(pr)) < 0)
		return r == -ENOENT ? 0 : r;
	if (!pr->fstypes || predict_fstype_in("overlay", pr->fstypes))
		return 0;
	if (!pr->aliases_loaded && (r = load_module_types(pr)) < 0)
		return r;
	if (predict_fstype_in("overlay", pr->fstypes))
		return 0;
	return record(pr, i, "area '%s': seed = overlay, but this kernel has no overlay filesystem (/proc/filesystems lists none, no module for it): set seed = yes, or install the overlay driver",
		      a->name);
}

static int rule_area_ext_inodes(struct predictor *pr, size_t i)
{
	const struct plan_step *s = &pr->p->steps[i];
	const struct area_config *a = s->area;
	bool ext = area_fstype_is_ext(area_fstype(a));
	char x[24], y[24];

	if (!area_sized(s) || !ext ||
	    (s->sizing.nr_inodes <= UINT32_MAX && s->sizing.nr_inodes <= s->sizing.size_bytes / AREA_EXT_INODE_SIZE))
		return 0;
	return record(pr, i,
		      "area '%s': %" PRIu64
		      " inodes need %s of inode tables (%d bytes each), more than the area's size %s: lower inodes= or raise size=",
		      a->name, s->sizing.nr_inodes,
		      units_format_size(s->sizing.nr_inodes * AREA_EXT_INODE_SIZE, x, sizeof(x)),
		      AREA_EXT_INODE_SIZE, units_format_size(s->sizing.size_bytes, y, sizeof(y)));
}

static int rule_wait_device(struct predictor *pr, size_t i)
{
	const struct plan_step *s = &pr->p->steps[i];
	char w[32];

	if (s->timeout_usec == USEC_INFINITY)
		return 0; /* waits as long as it takes: does not fail */
	return record(pr, i, "%s is not present: fails unless it appears within %s", s->spec,
		      units_format_duration(s->timeout_usec, w, sizeof(w)));
}

/* What the first zram device there is shows of the kernel's zram: its
 * compressors (every device lists the same, the kernel's built-in ones)
 * and whether it has writeback (backing_dev, CONFIG_ZRAM_WRITEBACK).
 * None there: unknown, and check does not make one to find out (it
 * changes nothing). */
static void load_zram(struct predictor *pr)
{
	_cleanup_free_ char *buf = NULL;
	DIR *d = opendir("/sys/block");
	struct dirent *de;
	bool found = false;

	pr->zram_loaded = true;
	while (d && !found && (de = readdir(d))) {
		char path[PATH_MAX];

		if (strncmp(de->d_name, "zram", 4) != 0)
			continue;
		snprintf(path, sizeof(path), "/sys/block/%s/comp_algorithm", de->d_name);
		if (read_text(path, &buf) < 0) {
			buf = NULL;
			continue;
		}
		found = true;
		snprintf(path, sizeof(path), "/sys/block/%s/backing_dev", de->d_name);
		pr->zram_writeback = access(path, F_OK) == 0 ? ZRAM_WRITEBACK_YES : ZRAM_WRITEBACK_NO;
	}
	if (d)
		closedir(d);
	if (buf && predict_parse_zram_compressors_buf(buf, &pr->zram_compressors) < 0) {
		strv_free(pr->zram_compressors);
		pr->zram_compressors = NULL;
	}
}

static int rule_zram_compression(struct predictor *pr, size_t i)
{
	const struct area_config *a = pr->p->steps[i].area;
	char list[256] = "";

	if (a->backend != AREA_ZRAM || !a->compression)
		return 0;
	if (!pr->zram_loaded)
		load_zram(pr);
	if (!pr->zram_compressors || strv_contains(pr->zram_compressors, a->compression))
		return 0;
	for (char **v = pr->zram_compressors; *v; v++)
		snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s", v == pr->zram_compressors ? "" : " ", *v);
	return record(pr, i, "area '%s': compression-algorithm = %s: this kernel's zram has %s; choose one of them (%s:%u)",
		      a->name, a->compression, list, a->file ? a->file : "storaged.conf",
		      a->compression_line ? a->compression_line : a->line);
}

static const char *writeback_where(const struct area_config *a, char *buf, size_t len)
{
	snprintf(buf, len, "%s:%u", a->file ? a->file : "storaged.conf", a->writeback_line ? a->writeback_line : a->line);
	return buf;
}

/* area_backend.c zram_configure() writes the device to backing_dev, which
 * only a kernel with CONFIG_ZRAM_WRITEBACK has */
static int rule_zram_writeback(struct predictor *pr, size_t i)
{
	const struct area_config *a = pr->p->steps[i].area;
	char where[PATH_MAX + 16];

	if (a->backend != AREA_ZRAM || !a->writeback_device)
		return 0;
	if (!pr->zram_loaded)
		load_zram(pr);
	if (pr->zram_writeback != ZRAM_WRITEBACK_NO)
		return 0;
	return record(pr, i, "area '%s': writeback-device = %s: this kernel's zram has no writeback (CONFIG_ZRAM_WRITEBACK is off: its zram devices have no backing_dev); remove writeback-device, or boot a kernel built with CONFIG_ZRAM_WRITEBACK=y (%s)",
		      a->name, a->writeback_device, writeback_where(a, where, sizeof(where)));
}

/* The kernel opens the writeback device (drivers/block/zram/zram_drv.c
 * backing_dev_store(): filp_open(), then a block device only, ENOTBLK) */
static int rule_zram_writeback_device(struct predictor *pr, size_t i)
{
	const struct area_config *a = pr->p->steps[i].area;
	char where[PATH_MAX + 16];
	struct stat st;

	if (a->backend != AREA_ZRAM || !a->writeback_device)
		return 0;
	if (stat(a->writeback_device, &st) < 0)
		return record(pr, i, "area '%s': writeback-device = %s: %s; correct the device's name, or remove writeback-device (%s)",
			      a->name, a->writeback_device, strerror(errno), writeback_where(a, where, sizeof(where)));
	if (!S_ISBLK(st.st_mode))
		return record(pr, i, "area '%s': writeback-device = %s is not a block device (the kernel's zram writes back to a block device only); name a partition or a loop device (%s)",
			      a->name, a->writeback_device, writeback_where(a, where, sizeof(where)));
	return 0;
}

/* The mkfs start runs for a zram or brd area: installed, and for an ext
 * filesystem of a zram device (whose size is the area's), the layout
 * mke2fs -n computes: it refuses inode tables that leave no room. */
static int rule_area_mkfs(struct predictor *pr, size_t i)
{
	const struct plan_step *s = &pr->p->steps[i];
	const struct area_config *a = s->area;
	const char *fs = area_fstype(a);
	struct area_mkfs c;
	char prog[PATH_MAX], err[256];
	int r;

	if (!area_is_ramdisk(a))
		return 0;
	area_mkfs_init(&c, fs, s->sizing.nr_inodes, "/dev/null",
		       s->sizing.size_bytes / AREA_EXT_BLOCK_SIZE);
	if (spawn_find_program(c.prog, prog, sizeof(prog)) < 0)
		return record(pr, i, "area '%s': fs = %s, but %s is not installed (looked in /usr/sbin, /sbin, /usr/bin, /bin): install it or choose another fs = (%s:%u)",
			      a->name, fs, c.prog, a->file ? a->file : "storaged.conf",
			      a->fs_line ? a->fs_line : a->line);
	/* sized, and a seed that fits: else the plan says so first */
	if (a->backend != AREA_ZRAM || !area_fstype_is_ext(fs) || s->sizing_deferred ||
	    (a->seed && !s->sizing.fits) || s->sizing.size_bytes < AREA_EXT_BLOCK_SIZE)
		return 0;
	r = area_run_helper(c.argv, err, sizeof(err));
	if (r != -EIO)
		return 0; /* it ran and agreed, or could not be asked */
	return record(pr, i, "area '%s': %s refuses %" PRIu64 " inodes in %" PRIu64 " bytes (%s): lower inodes= or raise size=",
		      a->name, c.prog, s->sizing.nr_inodes, s->sizing.size_bytes,
		      strncmp(err, "/dev/null: ", 11) == 0 ? err + 11 : err[0] ? err : "mke2fs -n failed");
}

/* A tmpfs (or ramfs) a step mounts is empty: an area whose directory
 * lies below its mount point finds no directory there (area.c refuses a
 * missing path), unless a mount with X-mount.mkdir makes one on the way. */
static int rule_area_in_fresh_ram(struct predictor *pr, size_t i)
{
	const struct plan *p = pr->p;
	const struct area_config *a = p->steps[i].area;
	const char *path = a->path;

	for (size_t k = 0; k < p->n_steps; k++) {
		const struct plan_step *m = &p->steps[k];

		if (m->kind == PLAN_MOUNT && !m->done && m->entry->mkdir &&
		    path_is_below(m->entry->target, path))
			return 0;
	}
	for (size_t k = 0; k < p->n_steps; k++) {
		const struct plan_step *m = &p->steps[k];

		if (m->kind != PLAN_MOUNT || m->done || m->entry->bind ||
		    !predict_fstype_in(m->entry->fstype, (char *[]){ "tmpfs", "ramfs", NULL }) ||
		    !path_is_below(path, m->entry->target) || streq(path, m->entry->target))
			continue;
		return record(pr, i, "area '%s': its directory '%s' will not exist: it lies in the %s step %zu mounts on '%s' (%s:%u), which starts empty; put the area on a directory that exists (path = at %s:%u; an area is in RAM already: it needs no RAM filesystem below it)",
			      a->name, path, m->entry->fstype, k + 1, m->entry->target,
			      fstab_file(pr), m->entry->line, a->file ? a->file : "storaged.conf",
			      a->path_line ? a->path_line : a->line);
	}
	return 0;
}

/* ------------------------------------------------------------ mount options */

/* "degraded" is the administrator's consent to a degraded btrfs mount
 * (plan.c strips it for btrfs); any other type gets it as a mount option
 * it does not know ("tmpfs: Unknown parameter 'degraded'").  It is not
 * dropped: the administrator wrote it, and may have meant another type.
 * Under type auto the type is not known here. */
static int rule_degraded(struct predictor *pr, size_t i)
{
	const struct fstab_entry *e = pr->p->steps[i].entry;

	if (e->bind || !e->fstype || streq(e->fstype, "auto") || streq(e->fstype, "none") ||
	    predict_fstype_in(e->fstype, (char *[]){ "btrfs", NULL }) ||
	    !optstr_get(e->mount_options, "degraded", NULL, NULL))
		return 0;
	return record(pr, i, "'degraded' is a btrfs option; %s does not take it: remove it (%s:%u)",
		       e->fstype, fstab_file(pr), e->line);
}

/* The kernel's memparse() of a tmpfs number: strtoull (base 0: 0x.., 0..)
 * with at least one digit, at most one suffix K M G T P E, and for size=
 * one '%' (a share of RAM); anything else is "Bad value" (EINVAL).
 * @v is @n bytes, not NUL-terminated. */
static bool tmpfs_number_ok(const char *v, size_t n, bool percent)
{
	char buf[64], *end;

	if (n == 0 || n >= sizeof(buf) || v[0] < '0' || v[0] > '9')
		return false;
	memcpy(buf, v, n);
	buf[n] = '\0';
	/* an overflow is no error to memparse(): size= wraps and mounts */
	(void)strtoull(buf, &end, 0);
	if (*end && strchr("kKmMgGtTpPeE", *end))
		end++;
	if (percent && *end == '%')
		end++;
	return *end == '\0';
}

static int rule_tmpfs_numbers(struct predictor *pr, size_t i)
{
	static const char *const names[] = { "size", "nr_blocks", "nr_inodes" };
	const struct fstab_entry *e = pr->p->steps[i].entry;
	char *v;
	size_t n;

	if (!streq(e->fstype, "tmpfs") || !e->options)
		return 0;
	for (size_t k = 0; k < ARRAY_SIZE(names); k++)
		if (optstr_get(e->options, names[k], &v, &n) && !tmpfs_number_ok(v, v ? n : 0, k == 0))
			return record(pr, i,
				       "tmpfs refuses %s=%.*s: write a whole number with at most one "
				       "suffix k, m, g, t, p or e%s (%s:%u)",
				       names[k], v ? (int)n : 0, v ? v : "",
				       k == 0 ? ", or a share of RAM such as 50%" : "",
				       fstab_file(pr), e->line);
	return 0;
}

/* The parameters mm/shmem.c's shmem_fs_parameters[] takes (5.4-6.18; a
 * newer kernel's name is only known to that kernel); "source", which
 * fs/fs_context.c takes for every filesystem; and those a security module
 * takes first (security_fs_context_parse_param(): SELinux's
 * selinux_fs_context_parse_param(), Smack's smack_fs_context_parse_param()). */
static const char *const tmpfs_params[] = {
	"size", "nr_blocks", "nr_inodes", "mode", "uid", "gid", "huge", "mpol", "inode32", "inode64",
	"noswap", "quota", "usrquota", "grpquota", "usrquota_block_hardlimit",
	"usrquota_inode_hardlimit", "grpquota_block_hardlimit", "grpquota_inode_hardlimit",
	"casefold", "strict_encoding", "source", "context", "fscontext", "defcontext",
	"rootcontext", "seclabel", "smackfsdef", "smackfsfloor", "smackfshat", "smackfsroot",
	"smackfstransmute",
};

static bool tmpfs_knows(const char *name, size_t n)
{
	for (size_t k = 0; k < ARRAY_SIZE(tmpfs_params); k++)
		if (strlen(tmpfs_params[k]) == n && strncmp(tmpfs_params[k], name, n) == 0)
			return true;
	return false;
}

static int rule_tmpfs_options(struct predictor *pr, size_t i)
{
	const struct fstab_entry *e = pr->p->steps[i].entry;
	_cleanup_free_ char *fs = NULL;
	char *it, *n, *v;
	size_t nsz, vsz;

	if (!streq(e->fstype, "tmpfs") || !e->mount_options ||
	    mnt_split_optstr(e->mount_options, NULL, NULL, &fs, 0, 0) < 0)
		return 0;
	for (it = fs; it && mnt_optstr_next_option(&it, &n, &nsz, &v, &vsz) == 0;)
		if (!tmpfs_knows(n, nsz))
			return record(pr, i, "tmpfs does not take the option '%.*s' (the kernel refuses it: \"Unknown parameter\"): remove it or correct its spelling (%s:%u)",
				      (int)nsz, n, fstab_file(pr), e->line);
	return 0;
}

/* libmount turns a uid= or gid= name into its number (of any filesystem,
 * context_mount.c fix_optstr()), as storaged does (mountopt.h): a name in
 * no database fails the mount before the kernel sees it. */
static int rule_id_names(struct predictor *pr, size_t i)
{
	const struct fstab_entry *e = pr->p->steps[i].entry;
	char why[512];

	if (!mountopt_unknown_id(e->mount_options, why, sizeof(why)))
		return 0;
	return record(pr, i, "%s (%s:%u)", why, fstab_file(pr), e->line);
}

static bool has_layer(const struct fstab_entry *e, const char *option)
{
	for (size_t k = 0; k < e->n_paths; k++)
		if (streq(e->paths[k].option, option))
			return true;
	return false;
}

static int rule_overlay_layers(struct predictor *pr, size_t i)
{
	const struct fstab_entry *e = pr->p->steps[i].entry;

	if (!streq(e->fstype, "overlay"))
		return 0;
	if (!has_layer(e, "lowerdir") && !has_layer(e, "lowerdir+"))
		return record(pr, i, "an overlay needs a lower layer: add lowerdir=DIR (%s:%u)",
			       fstab_file(pr), e->line);
	if (has_layer(e, "upperdir") && !has_layer(e, "workdir"))
		return record(pr, i,
			       "upperdir= needs a work directory: add workdir=DIR, an empty directory on "
			       "the filesystem of the upper one (%s:%u)",
			       fstab_file(pr), e->line);
	return 0;
}

/* Mount step @i waits on an ASSEMBLE step with members missing and may
 * not mount degraded: start fails it at the deadline, unless they come. */
static int rule_btrfs_members(struct predictor *pr, size_t i)
{
	const struct plan_step *s = &pr->p->steps[i];
	char w[32];

	if (!s->is_btrfs || s->degraded_allowed)
		return 0;
	for (size_t d = 0; d < s->n_deps; d++) {
		const struct plan_step *a = &pr->p->steps[s->deps[d].step];

		if (a->kind != PLAN_ASSEMBLE || !a->missing || a->done)
			continue;
		return record(pr, i,
			       "btrfs %s: %s (%" PRIu64 "/%" PRIu64
			       " members present) and degraded = no: the mount fails unless the members appear within %s; attach them, or allow a degraded mount: " PLAN_DEGRADED_CONSENT,
			       a->fsid, a->missing, a->n_present, a->num_devices,
			       units_format_duration(a->timeout_usec, w, sizeof(w)), a->fsid, s->policy_file);
	}
	return 0;
}

/* ------------------------------------------------------------ paths */

static const char *pending_top(const struct plan_step *s)
{
	if (s->done)
		return NULL;
	if (s->kind == PLAN_MOUNT)
		return s->facts->target_real ?: s->entry->target;
	return s->kind == PLAN_AREA ? s->area->path : NULL;
}

static int by_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static bool is_top(const struct predictor *pr, const char *prefix)
{
	return bsearch(&prefix, pr->tops, pr->n_tops, sizeof(*pr->tops), by_str) != NULL;
}

/*
 * @path lies below the mount point or area of a step that is still to
 * run: it is not there before that step.  path_is_below(@path, TOP) for
 * some TOP, found by looking up each prefix of @path that ends before a
 * '/' in the sorted tops: a plan of N mounts asks this of every one, N^2
 * string compares with a scan (2000 entries: 4 M).  Without memory for
 * the index: the scan.
 */
static bool below_pending(struct predictor *pr, const char *path)
{
	const struct plan *p = pr->p;
	char prefix[PATH_MAX];

	if (pr->n_tops == SIZE_MAX && (pr->tops = calloc(p->n_steps ? p->n_steps : 1, sizeof(*pr->tops)))) {
		pr->n_tops = 0;
		for (size_t k = 0; k < p->n_steps; k++)
			if (pending_top(&p->steps[k]))
				pr->tops[pr->n_tops++] = pending_top(&p->steps[k]);
		qsort(pr->tops, pr->n_tops, sizeof(*pr->tops), by_str);
	}
	if (!pr->tops || strlen(path) >= sizeof(prefix)) {
		for (size_t k = 0; k < p->n_steps; k++)
			if (pending_top(&p->steps[k]) && path_is_below(path, pending_top(&p->steps[k])))
				return true;
		return false;
	}
	if (path[0] == '/' && path[1] && (is_top(pr, "/") || is_top(pr, "")))
		return true;
	for (size_t n = 1; path[n]; n++)
		if (path[n] == '/' && path[n + 1]) {
			memcpy(prefix, path, n);
			prefix[n] = '\0';
			if (is_top(pr, prefix))
				return true;
		}
	return false;
}

/* The nearest existing directory above @path (a copy in @buf).  Returns:
 * 0, or negative errno of the first component that exists but cannot
 * hold a directory. */
static int nearest_existing(const char *path, char *buf, size_t len)
{
	struct stat st;
	char *slash;

	snprintf(buf, len, "%s", path);
	while ((slash = strrchr(buf, '/'))) {
		if (slash == buf)
			slash[1] = '\0';
		else
			*slash = '\0';
		if (stat(buf, &st) == 0)
			return S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
		if (errno != ENOENT)
			return -errno;
		if (slash == buf)
			break;
	}
	return -ENOENT;
}

static int rule_mount_point(struct predictor *pr, size_t i)
{
	const struct fstab_entry *e = pr->p->steps[i].entry;
	const struct entry_facts *f = pr->p->steps[i].facts;
	const char *t = f->target_real ?: e->target;
	char up[4096];
	struct statvfs sv;
	struct stat st;
	int r;

	if (below_pending(pr, t))
		return 0;
	/* what the fstab's loading found there, else a look now */
	if (f->target_mode)
		st.st_mode = f->target_mode;
	if (f->target_mode || stat(t, &st) == 0)
		return e->bind || S_ISDIR(st.st_mode)
			       ? 0
			       : record(pr, i, "mount point '%s' is not a directory; correct the fstab entry (%s:%u)",
					 e->target, fstab_file(pr), e->line);
	if (errno != ENOENT)
		return record(pr, i, "mount point '%s': %s", e->target, strerror(errno));
	if (!e->mkdir)
		return record(pr, i, "mount point '%s' does not exist: create it, or add X-mount.mkdir to the options of %s:%u",
			       e->target, fstab_file(pr), e->line);
	r = nearest_existing(t, up, sizeof(up));
	if (r < 0)
		return record(pr, i, "cannot create mount point '%s' (X-mount.mkdir): '%s': %s",
			       e->target, up, strerror(-r));
	if (statvfs(up, &sv) == 0 && (sv.f_flag & ST_RDONLY))
		return record(pr, i, "cannot create mount point '%s' (X-mount.mkdir): '%s' is on a read-only filesystem",
			       e->target, up);
	return 0;
}

/* Step @i waits for a mount still to be made: what it reads may appear
 * only then (a bind source reached through a link into that mount). */
static bool waits_on_pending_mount(const struct plan *p, size_t i)
{
	const struct plan_step *s = &p->steps[i];

	for (size_t d = 0; d < s->n_deps; d++) {
		const struct plan_step *dep = &p->steps[s->deps[d].step];

		if (!dep->done && (dep->kind == PLAN_MOUNT || dep->kind == PLAN_AREA))
			return true;
	}
	return false;
}

/* A bind's source or a loop's image must exist (unless a step makes it). */
static int rule_source(struct predictor *pr, size_t i)
{
	const struct fstab_entry *e = pr->p->steps[i].entry;
	struct stat st;

	if (!(e->bind || e->loop) || e->source[0] != '/' || below_pending(pr, e->source) ||
	    waits_on_pending_mount(pr->p, i))
		return 0;
	if (stat(e->source, &st) == 0)
		return 0;
	return record(pr, i, "%s '%s' (%s:%u): %s", e->bind ? "bind source" : "loop image",
		       e->source, fstab_file(pr), e->line, strerror(errno));
}

/* @fstype mounts a block device: /proc/filesystems lists it without
 * "nodev", or it is one storaged knows (a module the kernel loads at the
 * mount).  A list of types ("ext4,xfs") is left alone. */
static bool needs_block_device(const struct predictor *pr, const char *fstype)
{
	if (strchr(fstype, ','))
		return false;
	return predict_fstype_in(fstype, pr->dev_types) ||
	       (fsfacts_is_local(fstype) && !fsfacts_is_nodev(fstype));
}

/* A filesystem on a block device whose source is a directory or another
 * file: mount(2) fails with ENOTBLK ("is not a block device").  libmount
 * sets up a loop device by itself for the loop, offset= and sizelimit=
 * options, and for a regular file over 1 KiB of a type libblkid knows
 * (mnt_context_is_loopdev()); a mount.TYPE helper may take any source. */
static int rule_block_source(struct predictor *pr, size_t i)
{
	const struct fstab_entry *e = pr->p->steps[i].entry;
	struct stat st;

	if (e->bind || e->loop || e->source[0] != '/' || !e->fstype ||
	    optstr_get(e->options, "offset", NULL, NULL) ||
	    optstr_get(e->options, "sizelimit", NULL, NULL) || !needs_block_device(pr, e->fstype) ||
	    mount_helper_exists(pr->ps->helper_dirs, e->fstype) || below_pending(pr, e->source) ||
	    waits_on_pending_mount(pr->p, i) || stat(e->source, &st) < 0 || S_ISBLK(st.st_mode) ||
	    (S_ISREG(st.st_mode) && st.st_size > 1024))
		return 0;
	if (S_ISDIR(st.st_mode))
		return record(pr, i, "'%s' is a directory, not a block device: %s mounts a device; for a directory use bind, else correct the source (%s:%u)",
			       e->source, e->fstype, fstab_file(pr), e->line);
	if (S_ISREG(st.st_mode))
		return record(pr, i, "'%s' is a %lld-byte file, not a block device (mount makes a loop device only for an image over 1 KiB): correct the source, or add loop for an image (%s:%u)",
			       e->source, (long long)st.st_size, fstab_file(pr), e->line);
	return record(pr, i, "'%s' is not a block device: %s mounts a device; correct the source (%s:%u)",
		       e->source, e->fstype, fstab_file(pr), e->line);
}

/* Whether the block device @dev is write-protected (BLKROGET, as
 * libmount's read-only retry finds it: the kernel refuses the
 * read-write mount with EROFS or EACCES). */
static bool block_read_only(const char *dev)
{
	struct stat st;
	int ro = 0, fd;

	if (stat(dev, &st) < 0 || !S_ISBLK(st.st_mode))
		return false;
	fd = open(dev, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return false;
	if (ioctl(fd, BLKROGET, &ro) < 0)
		ro = 0;
	close(fd);
	return ro != 0;
}

/* x-systemd.rw-only on a write-protected device: no read-only retry
 * (mount -w), so the read-write mount fails.  Without the option the
 * entry is mounted read-only, with mount(8)'s warning: no failure. */
static int rule_rw_only(struct predictor *pr, size_t i)
{
	const struct fstab_entry *e = pr->p->steps[i].entry;
	_cleanup_free_ char *dev = NULL;

	if (!e->rw_only || e->bind || e->loop || waits_on_pending_mount(pr->p, i) ||
	    optstr_get(e->options, "ro", NULL, NULL))
		return 0;
	dev = mnt_tag_is_valid(e->source) ? mnt_resolve_spec(e->source, NULL) : strdup(e->source);
	if (!dev || dev[0] != '/' || below_pending(pr, dev) || !block_read_only(dev))
		return 0;
	return record(pr, i, "'%s' is write-protected and the entry says x-systemd.rw-only, so it is not mounted read-only: make the device writable (blockdev --setrw %s) or drop x-systemd.rw-only to mount it read-only (%s:%u)",
		       dev, dev, fstab_file(pr), e->line);
}

/* The directories of an overlay (fstab_entry_collect_paths()): the kernel
 * refuses the mount when one is missing, and mount(8) says only "special
 * device overlay does not exist".  What lies below a mount still to be
 * made is not known before it. */
static int rule_overlay_dirs(struct predictor *pr, size_t i)
{
	const struct fstab_entry *e = pr->p->steps[i].entry;
	struct stat st;

	if (waits_on_pending_mount(pr->p, i))
		return 0;
	for (size_t k = 0; k < e->n_paths; k++) {
		const struct fstab_path *fp = &e->paths[k];
		const char *path = entry_facts_path_real(pr->p->steps[i].facts, k) ?: fp->path;

		if (!(streq(fp->option, "lowerdir") || streq(fp->option, "lowerdir+") ||
		      streq(fp->option, "datadir+") || streq(fp->option, "upperdir") ||
		      streq(fp->option, "workdir")) ||
		    below_pending(pr, path) || stat(path, &st) == 0)
			continue;
		if (errno == ENOENT)
			return record(pr, i, "%s=%s does not exist: create it (%s:%u)", fp->option,
				       fp->path, fstab_file(pr), e->line);
		return record(pr, i, "%s=%s: %s (%s:%u)", fp->option, fp->path, strerror(errno),
			       fstab_file(pr), e->line);
	}
	return 0;
}

/* ------------------------------------------------------------ skips */

/* Step @s fails as the plan stands: its own prediction, a conflict, or a
 * seed that does not fit (plan_step_will_fail(), without the renderer). */
static bool fails(const struct plan_step *s)
{
	if (s->done || s->later)
		return false;
	return s->conflict || s->predicted ||
	       (s->kind == PLAN_AREA && !s->sizing_deferred && !s->sizing.fits);
}

/* Start does not run a step that waits on one that failed or was skipped
 * (exec.c, try_start()): it skips it, and says so; a mount whose own
 * device's wait failed fails, for the wait's reason.  Steps come in
 * execution order, so a dependency's prediction is already made. */
static int predict_skip(struct predictor *pr, size_t i)
{
	const struct plan_step *s = &pr->p->steps[i];

	for (size_t d = 0; d < s->n_deps; d++) {
		const struct plan_step *w = &pr->p->steps[s->deps[d].step];

		if (!fails(w))
			continue;
		if (s->kind == PLAN_MOUNT && plan_step_waits_for_own_device(s, w))
			return record(pr, i, "%s", w->predicted ? w->predicted : w->note);
		return record(pr, i, PLAN_PREDICTED_SKIP "waits on step %zu, which will fail",
			      s->deps[d].step + 1);
	}
	return 0;
}

/* ------------------------------------------------------------ the pass */

/*
 * The rules, one row each, as libmount's hooksets[] table (hooks.c): a
 * step's rules are tried in this order and the first that predicts a
 * failure gives the step its reason, as start stops at the first failure
 * too.  Each row names the code whose behaviour it copies, and the
 * versions it was checked against: when that code changes, the row is
 * what to re-read.  A rule that looks at this machine's paths runs only
 * when the plan's paths are this machine's (predict_sources.system_paths).
 * tests/integration/t-predict-agrees.sh runs --dry-run and start on the
 * same inputs and fails when they disagree.
 */
struct predict_rule {
	const char *name;
	enum plan_step_kind kind;
	bool system_paths;
	int (*check)(struct predictor *pr, size_t i); /* 1 predicted, 0, -ENOMEM */
	const char *follows;
};

static const struct predict_rule rules[] = {
	{ "area-precheck", PLAN_AREA, false, rule_area_precheck,
	  "storaged area/area_precheck.c area_precheck(), start's own code: MemTotal + SwapTotal of /proc/meminfo (Linux Documentation/filesystems/proc.rst), the copy helper, /sys/module/brd (Linux drivers/block/brd.c, built in or loaded), a seed = overlay directory on an overlay (statfs(2) f_type OVERLAYFS_SUPER_MAGIC), a seed = overlay area's own inodes (Linux fs/overlayfs/super.c: the work/work directory and the O_TMPFILE probe at mount)" },
	{ "area-ext-inodes", PLAN_AREA, false, rule_area_ext_inodes,
	  "e2fsprogs misc/mke2fs.c: at most 2^32-1 inodes, inode tables inside the filesystem (1.46-1.47)" },
	{ "area-mkfs", PLAN_AREA, false, rule_area_mkfs,
	  "storaged area/area_backend.c make_fs(): mkfs.FS by spawn_find_program(); e2fsprogs misc/mke2fs.c -n computes the layout it would make (\"Not enough space to build proposed filesystem\"), 1.46-1.47" },
	{ "area-in-fresh-ram", PLAN_AREA, false, rule_area_in_fresh_ram,
	  "storaged area/area.c: the area's directory must exist; Linux mm/shmem.c: a new tmpfs holds only its root" },
	{ "area-overlay", PLAN_AREA, false, rule_area_overlay,
	  "Linux fs/filesystems.c get_fs_type(\"overlay\"): /proc/filesystems, else request_module(\"fs-overlay\") (modules.alias), as storaged area/area_overlay.c mounts the overlay, 6.1-6.18" },
	{ "zram-compression", PLAN_AREA, false, rule_zram_compression,
	  "Linux drivers/block/zram/zram_drv.c comp_algorithm_show()/comp_algorithm_store(): the compressors built in, the current one in brackets; another name is EINVAL, 6.1-6.18" },
	{ "zram-writeback-device", PLAN_AREA, true, rule_zram_writeback_device,
	  "Linux drivers/block/zram/zram_drv.c backing_dev_store(): filp_open() of the name (ENOENT), a block device only (ENOTBLK), 4.14-6.18" },
	{ "zram-writeback", PLAN_AREA, false, rule_zram_writeback,
	  "Linux drivers/block/zram/zram_drv.c: backing_dev exists only with CONFIG_ZRAM_WRITEBACK (zram_disk_attrs[]), 4.14-6.18" },
	{ "wait-device", PLAN_WAIT_DEVICE, false, rule_wait_device,
	  "storaged exec/exec_wait.c: an absent device fails at its device timeout (x-systemd.device-timeout=, systemd.mount(5))" },
	{ "fstype", PLAN_MOUNT, false, rule_fstype,
	  "Linux fs/filesystems.c get_fs_type(): /proc/filesystems, else request_module(\"fs-TYPE\") (modules.alias), 6.1-6.18; util-linux libmount/src/context_mount.c prepare_helper(): mount.TYPE in FS_SEARCH_PATH, 2.38-2.41" },
	{ "overlay-layers", PLAN_MOUNT, false, rule_overlay_layers,
	  "Linux fs/overlayfs/params.c ovl_fs_params_verify(): \"missing 'lowerdir'\", \"missing 'workdir'\" (EINVAL), 6.5-6.18; fs/overlayfs/super.c ovl_fill_super() before 6.5" },
	{ "tmpfs-numbers", PLAN_MOUNT, false, rule_tmpfs_numbers,
	  "Linux mm/shmem.c shmem_parse_one() with lib/cmdline.c memparse(): size=, nr_blocks=, nr_inodes= (EINVAL \"Bad value\"), 5.4-6.18" },
	{ "degraded-btrfs-only", PLAN_MOUNT, false, rule_degraded,
	  "Linux fs/fs_context.c vfs_parse_fs_param(): a parameter no filesystem takes is EINVAL \"Unknown parameter\"; only fs/btrfs/super.c takes degraded, 5.1-6.18" },
	{ "id-names", PLAN_MOUNT, true, rule_id_names,
	  "util-linux libmount/src/context_mount.c fix_optstr(): uid= and gid= names through getpwnam_r(3)/getgrnam_r(3), a name in neither fails the mount (MNT_ERR_MOUNTOPT), 2.38-2.41" },
	{ "tmpfs-options", PLAN_MOUNT, false, rule_tmpfs_options,
	  "Linux mm/shmem.c shmem_fs_parameters[], fs/fs_context.c vfs_parse_fs_param(): \"Unknown parameter\" (EINVAL), 5.4-6.18; util-linux libmount mnt_split_optstr(), 2.38-2.41" },
	{ "btrfs-members", PLAN_MOUNT, false, rule_btrfs_members,
	  "Linux fs/btrfs/volumes.c read_one_chunk()/read_one_dev(): a missing devid is refused without -o degraded (ENOENT, \"failed to read chunk tree\"), 6.1-6.18" },
	{ "mount-point", PLAN_MOUNT, true, rule_mount_point,
	  "Linux fs/namespace.c do_mount() user_path_at() of a missing mount point (ENOENT), graft_tree() of a directory on a non-directory (ENOTDIR), 6.1-6.18; util-linux libmount/src/hook_mkdir.c (X-mount.mkdir), 2.39-2.41" },
	{ "source-exists", PLAN_MOUNT, true, rule_source,
	  "Linux fs/namespace.c do_loopback(): kern_path() of the bind source (ENOENT); util-linux libmount/src/hook_loopdev.c setup_loopdev() opens the loop image, 2.39-2.41" },
	{ "block-source", PLAN_MOUNT, true, rule_block_source,
	  "Linux fs/super.c get_tree_bdev() -> lookup_bdev(): not a block device (ENOTBLK), 6.1-6.18; util-linux libmount/src/hook_loopdev.c is_loopdev_required() (context_loopdev.c mnt_context_is_loopdev() before 2.39): loop, offset=, sizelimit=, or a regular file over 1 KiB of a type libblkid knows, 2.38-2.41" },
	{ "rw-only", PLAN_MOUNT, true, rule_rw_only,
	  "util-linux libmount/src/context_mount.c mnt_context_mount(): a read-write mount failing with EROFS or EACCES is retried read-only unless ro, remount, bind or mnt_context_is_rwonly_mount() (mount -w; systemd passes -w for x-systemd.rw-only), 2.38-2.41; Linux block/ioctl.c BLKROGET" },
	{ "overlay-dirs", PLAN_MOUNT, true, rule_overlay_dirs,
	  "Linux fs/overlayfs/params.c ovl_parse_layer() -> kern_path() of each layer (ENOENT), 6.5-6.18; fs/overlayfs/super.c ovl_mount_dir() before 6.5" },
};

static int predict_step(struct predictor *pr, size_t i)
{
	const struct plan_step *s = &pr->p->steps[i];
	int r;

	if (s->done || s->later || s->conflict || s->predicted)
		return 0;
	r = predict_skip(pr, i);
	for (size_t k = 0; r == 0 && k < ARRAY_SIZE(rules); k++)
		if (rules[k].kind == s->kind && (!rules[k].system_paths || pr->ps->system_paths))
			r = rules[k].check(pr, i);
	return r;
}

int predict_plan(const struct plan_input *in, const struct predict_sources *ps, struct plan *p,
		 struct predictions *ret)
{
	struct predictor pr = { .in = in, .ps = ps, .p = p, .out = ret, .n_tops = SIZE_MAX };
	int r = 0, n = 0;

	*ret = (struct predictions){ 0 };
	for (size_t i = 0; r >= 0 && i < p->n_steps; i++) {
		r = predict_step(&pr, i);
		n += r > 0 && !plan_step_predicted_skip(&p->steps[i]);
	}
	strv_free(pr.fstypes);
	strv_free(pr.dev_types);
	strv_free(pr.zram_compressors);
	free(pr.tops);
	return r < 0 ? r : n;
}

const char *predict_user_source_lacks(uid_t uid, gid_t gid, mode_t mode, bool nosuid, bool nodev)
{
	bool user_writes = uid != 0 || (mode & S_IWOTH) || (S_ISREG(mode) && (mode & S_IWGRP) && gid != 0);

	if (!user_writes || (nosuid && nodev))
		return NULL;
	return !nosuid && !nodev ? "nosuid,nodev" : !nosuid ? "nosuid" : "nodev";
}

void predictions_done(struct predictions *pp)
{
	for (size_t i = 0; i < pp->n; i++)
		free(pp->why[i]);
	free(pp->why);
	*pp = (struct predictions){ 0 };
}
