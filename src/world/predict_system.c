/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The predictions that look at the system (predict.c's rules[] names each
 * rule's source): the filesystem types the kernel knows (/proc/filesystems,
 * modules.alias) and the mount helpers installed, and, on this machine's
 * paths, the mount point, a bind or loop source, a block device's source
 * and an overlay's directories.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "area/area_mkfs.h"
#include "parse/area_facts.h"
#include "parse/config.h"
#include "parse/fsfacts.h"
#include "plan/area_size.h"
#include "predict_internal.h"
#include "shared/input.h"
#include "shared/optstr.h"
#include "shared/spawn_helper.h"
#include "shared/util.h"

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

int predict_area_fstypes(const struct config *c, const struct predict_sources *ps, struct diag_list *dl)
{
	struct predictor pr = { .ps = ps };
	int r = 0;

	for (size_t k = 0; r >= 0 && k < c->n_areas; k++) {
		const struct area_config *a = &c->areas[k];

		if (!a->fs_line || !area_is_ramdisk(a))
			continue;
		if (!pr.fstypes_loaded && load_fstypes(&pr) == -ENOMEM)
			r = -ENOMEM;
		if (r < 0 || !pr.fstypes || predict_fstype_in(a->fs, pr.dev_types))
			continue;
		/* listed, but nodev (tmpfs, proc): no device to make it on */
		if (!predict_fstype_in(a->fs, pr.fstypes)) {
			if (!pr.aliases_loaded && (r = load_module_types(&pr)) < 0)
				break;
			if (predict_fstype_in(a->fs, pr.fstypes))
				continue; /* a module the kernel loads (modules.alias does not say nodev) */
		}
		r = diag_error(dl, a->file ? a->file : "storaged.conf", a->fs_line,
			       "fs: '%s' is not a filesystem type the kernel can put on [area %s]'s %s device: it neither lists it without nodev (/proc/filesystems) nor has a module for it; correct it (e.g. fs = ext4) or install its driver",
			       a->fs, a->name, area_backend_facts(a->backend)->name);
	}
	strv_free(pr.fstypes);
	strv_free(pr.dev_types);
	return r < 0 ? r : 0;
}

int predict__fstype(struct predictor *pr, size_t i)
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
	return predict__record(pr, i, "unknown filesystem type '%s' (%s:%u): the kernel neither lists it (/proc/filesystems) nor has a module for it, and no mount.%s helper is installed; correct the type or install its driver",
		       e->fstype, predict__fstab_file(pr), e->line, e->fstype);
}

/* seed = overlay: the kernel has overlayfs (listed, or a module for it),
 * and the directory is not on an overlay itself (area_overlay.c) */
int predict__area_overlay(struct predictor *pr, size_t i)
{
	const struct area_config *a = pr->p->steps[i].area;
	struct statfs f;
	int r;

	if (!a->overlay)
		return 0;
	if (!pr->fstypes_loaded && (r = load_fstypes(pr)) < 0 && r != -ENOENT)
		return r;
	if (pr->fstypes && !predict_fstype_in("overlay", pr->fstypes) && !pr->aliases_loaded &&
	    (r = load_module_types(pr)) < 0)
		return r;
	if (pr->fstypes && !predict_fstype_in("overlay", pr->fstypes))
		return predict__record(pr, i, "area '%s': seed = overlay, but this kernel has no overlay filesystem (/proc/filesystems lists none, no module for it): set seed = yes, or install the overlay driver",
				       a->name);
	if (statfs(a->path, &f) == 0 && f.f_type == OVERLAYFS_SUPER_MAGIC)
		return predict__record(pr, i, "area '%s': seed = overlay, but '%s' is itself on an overlay filesystem, which storaged does not take as the lower layer of another: set seed = yes",
				       a->name, a->path);
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

int predict__mount_point(struct predictor *pr, size_t i)
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
			       : predict__record(pr, i, "mount point '%s' is not a directory; correct the fstab entry (%s:%u)",
					 e->target, predict__fstab_file(pr), e->line);
	if (errno != ENOENT)
		return predict__record(pr, i, "mount point '%s': %s", e->target, strerror(errno));
	if (!e->mkdir)
		return predict__record(pr, i, "mount point '%s' does not exist: create it, or add X-mount.mkdir to the options of %s:%u",
			       e->target, predict__fstab_file(pr), e->line);
	r = nearest_existing(t, up, sizeof(up));
	if (r < 0)
		return predict__record(pr, i, "cannot create mount point '%s' (X-mount.mkdir): '%s': %s",
			       e->target, up, strerror(-r));
	if (statvfs(up, &sv) == 0 && (sv.f_flag & ST_RDONLY))
		return predict__record(pr, i, "cannot create mount point '%s' (X-mount.mkdir): '%s' is on a read-only filesystem",
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
int predict__source(struct predictor *pr, size_t i)
{
	const struct fstab_entry *e = pr->p->steps[i].entry;
	struct stat st;

	if (!(e->bind || e->loop) || e->source[0] != '/' || below_pending(pr, e->source) ||
	    waits_on_pending_mount(pr->p, i))
		return 0;
	if (stat(e->source, &st) == 0)
		return 0;
	return predict__record(pr, i, "%s '%s' (%s:%u): %s", e->bind ? "bind source" : "loop image",
		       e->source, predict__fstab_file(pr), e->line, strerror(errno));
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
int predict__block_source(struct predictor *pr, size_t i)
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
		return predict__record(pr, i, "'%s' is a directory, not a block device: %s mounts a device; for a directory use bind, else correct the source (%s:%u)",
			       e->source, e->fstype, predict__fstab_file(pr), e->line);
	if (S_ISREG(st.st_mode))
		return predict__record(pr, i, "'%s' is a %lld-byte file, not a block device (mount makes a loop device only for an image over 1 KiB): correct the source, or add loop for an image (%s:%u)",
			       e->source, (long long)st.st_size, predict__fstab_file(pr), e->line);
	return predict__record(pr, i, "'%s' is not a block device: %s mounts a device; correct the source (%s:%u)",
		       e->source, e->fstype, predict__fstab_file(pr), e->line);
}

/* The directories of an overlay (fstab_entry_collect_paths()): the kernel
 * refuses the mount when one is missing, and mount(8) says only "special
 * device overlay does not exist".  What lies below a mount still to be
 * made is not known before it. */
int predict__overlay_dirs(struct predictor *pr, size_t i)
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
			return predict__record(pr, i, "%s=%s does not exist: create it (%s:%u)", fp->option,
				       fp->path, predict__fstab_file(pr), e->line);
		return predict__record(pr, i, "%s=%s: %s (%s:%u)", fp->option, fp->path, strerror(errno),
			       predict__fstab_file(pr), e->line);
	}
	return 0;
}

/* ------------------------------------------------------------ zram */

/* The compressors of the first zram device there is: every device lists
 * the same (the kernel's built-in ones).  None there: unknown, and check
 * does not make one to find out (it changes nothing). */
static void load_zram_compressors(struct predictor *pr)
{
	_cleanup_free_ char *buf = NULL;
	DIR *d = opendir("/sys/block");
	struct dirent *de;

	pr->zram_loaded = true;
	while (d && !buf && (de = readdir(d))) {
		char path[PATH_MAX];

		if (strncmp(de->d_name, "zram", 4) != 0)
			continue;
		snprintf(path, sizeof(path), "/sys/block/%s/comp_algorithm", de->d_name);
		if (read_text(path, &buf) < 0)
			buf = NULL;
	}
	if (d)
		closedir(d);
	if (buf && predict_parse_zram_compressors_buf(buf, &pr->zram_compressors) < 0) {
		strv_free(pr->zram_compressors);
		pr->zram_compressors = NULL;
	}
}

int predict__zram_compression(struct predictor *pr, size_t i)
{
	const struct area_config *a = pr->p->steps[i].area;
	char list[256] = "";

	if (a->backend != AREA_ZRAM || !a->compression)
		return 0;
	if (!pr->zram_loaded)
		load_zram_compressors(pr);
	if (!pr->zram_compressors || strv_contains(pr->zram_compressors, a->compression))
		return 0;
	for (char **v = pr->zram_compressors; *v; v++)
		snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s", v == pr->zram_compressors ? "" : " ", *v);
	return predict__record(pr, i, "area '%s': compression-algorithm = %s: this kernel's zram has %s; choose one of them (%s:%u)",
			       a->name, a->compression, list, a->file ? a->file : "storaged.conf",
			       a->compression_line ? a->compression_line : a->line);
}

/* ------------------------------------------------------------ area backends */

/* start loads no module: area_backend.c's brd_pick() fails without brd */
int predict__brd_driver(struct predictor *pr, size_t i)
{
	const struct plan_step *s = &pr->p->steps[i];
	char hint[256];

	if (s->area->backend != AREA_BRD || area_brd_present())
		return 0;
	if (s->sizing_deferred)
		return predict__record(pr, i, "area '%s': brd driver not present: load it (modprobe brd) or use backend = tmpfs or backend = zram",
				       s->area->name);
	return predict__record(pr, i, "area '%s': brd driver not present: %s", s->area->name,
			       area_brd_hint(hint, sizeof(hint), s->sizing.size_bytes));
}

/* The mkfs start runs for a zram or brd area: installed, and for an ext
 * filesystem of a zram device (whose size is the area's), the layout
 * mke2fs -n computes: it refuses inode tables that leave no room. */
int predict__mkfs(struct predictor *pr, size_t i)
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
		return predict__record(pr, i, "area '%s': fs = %s, but %s is not installed (looked in /usr/sbin, /sbin, /usr/bin, /bin): install it or choose another fs = (%s:%u)",
				       a->name, fs, c.prog, a->file ? a->file : "storaged.conf",
				       a->fs_line ? a->fs_line : a->line);
	/* sized, and a seed that fits: else the plan says so first */
	if (a->backend != AREA_ZRAM || !area_fstype_is_ext(fs) || s->sizing_deferred ||
	    (a->seed && !s->sizing.fits) || s->sizing.size_bytes < AREA_EXT_BLOCK_SIZE)
		return 0;
	r = area_run_helper(c.argv, err, sizeof(err));
	if (r != -EIO)
		return 0; /* it ran and agreed, or could not be asked */
	return predict__record(pr, i, "area '%s': %s refuses %" PRIu64 " inodes in %" PRIu64 " bytes (%s): lower inodes= or raise size=",
			       a->name, c.prog, s->sizing.nr_inodes, s->sizing.size_bytes,
			       strncmp(err, "/dev/null: ", 11) == 0 ? err + 11 : err[0] ? err : "mke2fs -n failed");
}

/* A tmpfs (or ramfs) a step mounts is empty: an area whose directory
 * lies below its mount point finds no directory there (area.c refuses a
 * missing path), unless a mount with X-mount.mkdir makes one on the way. */
int predict__area_in_fresh_ram(struct predictor *pr, size_t i)
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
		return predict__record(pr, i, "area '%s': its directory '%s' will not exist: it lies in the %s step %zu mounts on '%s' (%s:%u), which starts empty; put the area on a directory that exists (path = at %s:%u; an area is in RAM already: it needs no RAM filesystem below it)",
				       a->name, path, m->entry->fstype, k + 1, m->entry->target,
				       predict__fstab_file(pr), m->entry->line, a->file ? a->file : "storaged.conf",
				       a->path_line ? a->path_line : a->line);
	}
	return 0;
}
