/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Predictions (plan_predict.h): each check below is one start makes when
 * the step runs, made here on the same facts, so that --dry-run and check
 * show the failure with start's own reason:
 *   1. areas: size against available memory + swap (area.c, check_memory),
 *      ext inode tables against size (mkfs), the copy helper for seed or
 *      persist areas (copy_spawn_find());
 *   2. mounts: the filesystem type against the kernel's list, its module
 *      aliases and the mount.TYPE helpers; the mount point (exists, or
 *      can be made with X-mount.mkdir); a bind or loop source that exists;
 *      the source of a filesystem on a block device that is one (or an
 *      image libmount makes a loop device for);
 *      the lower, upper and work directories of an overlay;
 *   3. btrfs: a filesystem with members missing, whose mounts may not be
 *      degraded (degraded = no), fails at the deadline unless the members
 *      come; a device not present fails at its deadline unless it comes;
 *      "degraded" on a type that is not btrfs is a mount option it refuses.
 * Only paths not below another step's mount point or area are checked:
 * what lies below those is not there before the step runs.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <libmount.h>

#include "plan/area_size.h"
#include "copy/copy.h"
#include "copy/copy_spawn.h"
#include "parse/fsfacts.h"
#include "plan_predict.h"
#include "parse/units.h"
#include "shared/util.h"
#include "shared/optstr.h"

struct predictor {
	const struct plan_input *in;
	const struct predict_sources *ps;
	struct plan *p;
	struct plan_predictions *out;
	char **fstypes; /* kernel types, NULL until first needed */
	char **dev_types; /* those of them /proc/filesystems lists without
			     "nodev": they mount a block device */
	bool fstypes_loaded;
	bool aliases_loaded; /* modules.alias added to fstypes */
	/* below_pending(): the mount points and area paths of the steps still
	 * to run, sorted (strcmp); n_tops SIZE_MAX until built */
	const char **tops;
	size_t n_tops;
};

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

/* ------------------------------------------------------------ recording */

/* Step @i fails, because of the printf-formatted text.  Returns: 1, or
 * -ENOMEM. */
static int _printf_(3, 4) predict(struct predictor *pr, size_t i, const char *fmt, ...)
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

/* ------------------------------------------------------------ areas */

static int predict_area(struct predictor *pr, size_t i)
{
	const struct plan_step *s = &pr->p->steps[i];
	const struct area_config *a = s->area;
	uint64_t avail = pr->ps->mem.available + pr->ps->mem.swap_free;
	bool ext = a->backend != AREA_TMPFS && (!a->fs || has_prefix(a->fs, "ext"));
	char x[24], y[24];
	struct copy_result res = { 0 };
	char prog[4096];

	/* start says first that a seed does not fit (the plan shows it) */
	if (s->sizing_deferred || (a->seed && !s->sizing.fits))
		return 0;
	/* the same test as area.c's check_memory(), on the same meminfo facts */
	if (!a->force && avail && s->sizing.size_bytes > avail)
		return predict(pr, i, "area '%s': size %s is above available memory + swap (%s): lower size= or set force = yes",
			       a->name, units_format_size(s->sizing.size_bytes, x, sizeof(x)),
			       units_format_size(avail, y, sizeof(y)));
	/* mke2fs refuses more inodes than 2^32 - 1, or inode tables that
	 * leave no room for the filesystem */
	if (ext && (s->sizing.nr_inodes > UINT32_MAX ||
		    s->sizing.nr_inodes > s->sizing.size_bytes / AREA_EXT_INODE_SIZE))
		return predict(
			pr, i,
			"area '%s': %" PRIu64
			" inodes need %s of inode tables (%d bytes each), more than the area's size %s: lower inodes= or raise size=",
			a->name, s->sizing.nr_inodes,
			units_format_size(s->sizing.nr_inodes * AREA_EXT_INODE_SIZE, x, sizeof(x)),
			AREA_EXT_INODE_SIZE, units_format_size(s->sizing.size_bytes, y, sizeof(y)));
	if ((a->seed || a->persist) && copy_spawn_find(prog, sizeof(prog), &res) < 0)
		return predict(pr, i, "area '%s': %s", a->name, res.msg);
	return 0;
}

/* ------------------------------------------------------------ filesystem types */

static int read_text(const char *path, char **ret)
{
	FILE *f = fopen(path, "re");
	char *buf = NULL;
	size_t sz = 0;
	FILE *m;
	char chunk[8192];
	size_t n;

	if (!f)
		return -errno;
	m = open_memstream(&buf, &sz);
	if (!m) {
		fclose(f);
		return -ENOMEM;
	}
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		fwrite(chunk, 1, n, m);
	fclose(f);
	if (fclose(m) != 0) {
		free(buf);
		return -ENOMEM;
	}
	*ret = buf;
	return 0;
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

/* libmount runs mount.TYPE (or, for "fuse.sshfs", mount.fuse.sshfs or
 * mount.fuse) when one of its directories has it. */
static bool has_helper(const struct predictor *pr, const char *fstype)
{
	const char *dirs = pr->ps->helper_dirs ?: PREDICT_HELPER_DIRS;

	for (const char *d = dirs; *d;) {
		size_t n = strcspn(d, ":");

		for (const char *t = fstype; n && *t;) {
			size_t k = strcspn(t, ","), main = strcspn(t, ".,");
			char path[4096];

			snprintf(path, sizeof(path), "%.*s/mount.%.*s", (int)n, d, (int)k, t);
			if (access(path, X_OK) == 0)
				return true;
			snprintf(path, sizeof(path), "%.*s/mount.%.*s", (int)n, d, (int)main, t);
			if (main < k && access(path, X_OK) == 0)
				return true;
			t += k + (t[k] == ',');
		}
		d += n + (d[n] == ':');
	}
	return false;
}

static int predict_fstype(struct predictor *pr, size_t i)
{
	const struct fstab_entry *e = pr->p->steps[i].entry;
	int r;

	if (e->bind || !e->fstype || streq(e->fstype, "auto") || streq(e->fstype, "none"))
		return 0;
	if (!pr->fstypes_loaded && (r = load_fstypes(pr)) < 0)
		return r == -ENOENT ? 0 : r;
	if (!pr->fstypes || predict_fstype_in(e->fstype, pr->fstypes) || has_helper(pr, e->fstype))
		return 0;
	if (!pr->aliases_loaded && (r = load_module_types(pr)) < 0)
		return r;
	if (predict_fstype_in(e->fstype, pr->fstypes))
		return 0;
	return predict(pr, i, "unknown filesystem type '%s' (%s:%u): the kernel neither lists it (/proc/filesystems) nor has a module for it, and no mount.%s helper is installed; correct the type or install its driver",
		       e->fstype, fstab_file(pr), e->line, e->fstype);
}

/* "degraded" is the administrator's consent to a degraded btrfs mount
 * (plan.c strips it for btrfs); any other type gets it as a mount option
 * it does not know ("tmpfs: Unknown parameter 'degraded'").  It is not
 * dropped: the administrator wrote it, and may have meant another type.
 * Under type auto the type is not known here. */
static int predict_degraded(struct predictor *pr, size_t i)
{
	const struct fstab_entry *e = pr->p->steps[i].entry;

	if (e->bind || !e->fstype || streq(e->fstype, "auto") || streq(e->fstype, "none") ||
	    predict_fstype_in(e->fstype, (char *[]){ "btrfs", NULL }) ||
	    !optstr_get(e->mount_options, "degraded", NULL, NULL))
		return 0;
	return predict(pr, i, "'degraded' is a btrfs option; %s does not take it: remove it (%s:%u)",
		       e->fstype, fstab_file(pr), e->line);
}

/* ------------------------------------------------------------ paths */

static const char *pending_top(const struct plan_step *s)
{
	if (s->done)
		return NULL;
	if (s->kind == PLAN_MOUNT)
		return s->entry->target_real ?: s->entry->target;
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

static int predict_mount_point(struct predictor *pr, size_t i)
{
	const struct fstab_entry *e = pr->p->steps[i].entry;
	const char *t = e->target_real ?: e->target;
	char up[4096];
	struct statvfs sv;
	struct stat st;
	int r;

	if (below_pending(pr, t))
		return 0;
	/* what the fstab's loading found there, else a look now */
	if (e->target_mode)
		st.st_mode = e->target_mode;
	if (e->target_mode || stat(t, &st) == 0)
		return e->bind || S_ISDIR(st.st_mode)
			       ? 0
			       : predict(pr, i, "mount point '%s' is not a directory; correct the fstab entry (%s:%u)",
					 e->target, fstab_file(pr), e->line);
	if (errno != ENOENT)
		return predict(pr, i, "mount point '%s': %s", e->target, strerror(errno));
	if (!e->mkdir)
		return predict(pr, i, "mount point '%s' does not exist: create it, or add X-mount.mkdir to the options of %s:%u",
			       e->target, fstab_file(pr), e->line);
	r = nearest_existing(t, up, sizeof(up));
	if (r < 0)
		return predict(pr, i, "cannot create mount point '%s' (X-mount.mkdir): '%s': %s",
			       e->target, up, strerror(-r));
	if (statvfs(up, &sv) == 0 && (sv.f_flag & ST_RDONLY))
		return predict(pr, i, "cannot create mount point '%s' (X-mount.mkdir): '%s' is on a read-only filesystem",
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
static int predict_source(struct predictor *pr, size_t i)
{
	const struct fstab_entry *e = pr->p->steps[i].entry;
	struct stat st;

	if (!(e->bind || e->loop) || e->source[0] != '/' || below_pending(pr, e->source) ||
	    waits_on_pending_mount(pr->p, i))
		return 0;
	if (stat(e->source, &st) == 0)
		return 0;
	return predict(pr, i, "%s '%s' (%s:%u): %s", e->bind ? "bind source" : "loop image",
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
static int predict_block_source(struct predictor *pr, size_t i)
{
	const struct fstab_entry *e = pr->p->steps[i].entry;
	struct stat st;

	if (e->bind || e->loop || e->source[0] != '/' || !e->fstype ||
	    optstr_get(e->options, "offset", NULL, NULL) ||
	    optstr_get(e->options, "sizelimit", NULL, NULL) || !needs_block_device(pr, e->fstype) ||
	    has_helper(pr, e->fstype) || below_pending(pr, e->source) ||
	    waits_on_pending_mount(pr->p, i) || stat(e->source, &st) < 0 || S_ISBLK(st.st_mode) ||
	    (S_ISREG(st.st_mode) && st.st_size > 1024))
		return 0;
	if (S_ISDIR(st.st_mode))
		return predict(pr, i, "'%s' is a directory, not a block device: %s mounts a device; for a directory use bind, else correct the source (%s:%u)",
			       e->source, e->fstype, fstab_file(pr), e->line);
	if (S_ISREG(st.st_mode))
		return predict(pr, i, "'%s' is a %lld-byte file, not a block device (mount makes a loop device only for an image over 1 KiB): correct the source, or add loop for an image (%s:%u)",
			       e->source, (long long)st.st_size, fstab_file(pr), e->line);
	return predict(pr, i, "'%s' is not a block device: %s mounts a device; correct the source (%s:%u)",
		       e->source, e->fstype, fstab_file(pr), e->line);
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

/* tmpfs's size=, nr_blocks= and nr_inodes= as the kernel reads them
 * (mm/shmem.c, shmem_parse_one()): a value it refuses fails the mount. */
static int predict_tmpfs_numbers(struct predictor *pr, size_t i)
{
	static const char *const names[] = { "size", "nr_blocks", "nr_inodes" };
	const struct fstab_entry *e = pr->p->steps[i].entry;
	char *v;
	size_t n;

	if (!streq(e->fstype, "tmpfs") || !e->options)
		return 0;
	for (size_t k = 0; k < ARRAY_SIZE(names); k++)
		if (optstr_get(e->options, names[k], &v, &n) && !tmpfs_number_ok(v, v ? n : 0, k == 0))
			return predict(pr, i,
				       "tmpfs refuses %s=%.*s: write a whole number with at most one "
				       "suffix k, m, g, t, p or e%s (%s:%u)",
				       names[k], v ? (int)n : 0, v ? v : "",
				       k == 0 ? ", or a share of RAM such as 50%" : "",
				       fstab_file(pr), e->line);
	return 0;
}

static bool has_layer(const struct fstab_entry *e, const char *option)
{
	for (size_t k = 0; k < e->n_paths; k++)
		if (streq(e->paths[k].option, option))
			return true;
	return false;
}

/* Layers the kernel requires, known from the options alone: overlayfs
 * refuses a mount without a lower layer ("missing 'lowerdir'") and an upper
 * layer without a work directory ("missing 'workdir'"), with EINVAL
 * (fs/overlayfs/params.c, ovl_fs_params_verify()). */
static int predict_overlay_layers(struct predictor *pr, size_t i)
{
	const struct fstab_entry *e = pr->p->steps[i].entry;

	if (!streq(e->fstype, "overlay"))
		return 0;
	if (!has_layer(e, "lowerdir") && !has_layer(e, "lowerdir+"))
		return predict(pr, i, "an overlay needs a lower layer: add lowerdir=DIR (%s:%u)",
			       fstab_file(pr), e->line);
	if (has_layer(e, "upperdir") && !has_layer(e, "workdir"))
		return predict(pr, i,
			       "upperdir= needs a work directory: add workdir=DIR, an empty directory on "
			       "the filesystem of the upper one (%s:%u)",
			       fstab_file(pr), e->line);
	return 0;
}

/* The directories of an overlay (fstab_entry_collect_paths()): the kernel
 * refuses the mount when one is missing, and mount(8) says only "special
 * device overlay does not exist".  What lies below a mount still to be
 * made is not known before it. */
static int predict_overlay(struct predictor *pr, size_t i)
{
	const struct fstab_entry *e = pr->p->steps[i].entry;
	struct stat st;

	if (waits_on_pending_mount(pr->p, i))
		return 0;
	for (size_t k = 0; k < e->n_paths; k++) {
		const struct fstab_path *fp = &e->paths[k];
		const char *path = fp->real ?: fp->path;

		if (!(streq(fp->option, "lowerdir") || streq(fp->option, "lowerdir+") ||
		      streq(fp->option, "datadir+") || streq(fp->option, "upperdir") ||
		      streq(fp->option, "workdir")) ||
		    below_pending(pr, path) || stat(path, &st) == 0)
			continue;
		if (errno == ENOENT)
			return predict(pr, i, "%s=%s does not exist: create it (%s:%u)", fp->option,
				       fp->path, fstab_file(pr), e->line);
		return predict(pr, i, "%s=%s: %s (%s:%u)", fp->option, fp->path, strerror(errno),
			       fstab_file(pr), e->line);
	}
	return 0;
}

/* ------------------------------------------------------------ devices */

/* Mount step @i waits on an ASSEMBLE step with members missing and may
 * not mount degraded: start fails it at the deadline, unless they come. */
static int predict_btrfs(struct predictor *pr, size_t i)
{
	const struct plan_step *s = &pr->p->steps[i];
	char w[32];

	if (!s->is_btrfs || s->degraded_allowed)
		return 0;
	for (size_t d = 0; d < s->n_deps; d++) {
		const struct plan_step *a = &pr->p->steps[s->deps[d].step];

		if (a->kind != PLAN_ASSEMBLE || !a->missing || a->done)
			continue;
		return predict(pr, i,
			       "btrfs %s: %s (%" PRIu64 "/%" PRIu64
			       " members present) and degraded = no: the mount fails unless the members appear within %s; attach them, or allow x-storaged.degraded",
			       a->fsid, a->missing, a->n_present, a->num_devices,
			       units_format_duration(a->timeout_usec, w, sizeof(w)));
	}
	return 0;
}

static int predict_wait(struct predictor *pr, size_t i)
{
	const struct plan_step *s = &pr->p->steps[i];
	char w[32];

	if (s->timeout_usec == USEC_INFINITY)
		return 0; /* waits as long as it takes: does not fail */
	return predict(pr, i, "%s is not present: fails unless it appears within %s", s->spec,
		       units_format_duration(s->timeout_usec, w, sizeof(w)));
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
 * (exec.c, try_start()): it skips it, and says so.  Steps come in
 * execution order, so a dependency's prediction is already made. */
static int predict_skip(struct predictor *pr, size_t i)
{
	const struct plan_step *s = &pr->p->steps[i];

	for (size_t d = 0; d < s->n_deps; d++)
		if (fails(&pr->p->steps[s->deps[d].step]))
			return predict(pr, i, PREDICT_SKIPPED "waits on step %zu, which will fail",
				       s->deps[d].step + 1);
	return 0;
}

/* ------------------------------------------------------------ the pass */

static int predict_step(struct predictor *pr, size_t i)
{
	const struct plan_step *s = &pr->p->steps[i];
	int r = 0;

	if (s->done || s->later || s->conflict || s->predicted)
		return 0;
	r = predict_skip(pr, i);
	if (r != 0)
		return r;
	switch (s->kind) {
	case PLAN_AREA:
		return predict_area(pr, i);
	case PLAN_WAIT_DEVICE:
		return predict_wait(pr, i);
	case PLAN_MOUNT:
		r = predict_fstype(pr, i);
		if (r == 0)
			r = predict_overlay_layers(pr, i);
		if (r == 0)
			r = predict_tmpfs_numbers(pr, i);
		if (r == 0)
			r = predict_degraded(pr, i);
		if (r == 0)
			r = predict_btrfs(pr, i);
		if (r == 0 && pr->ps->system_paths)
			r = predict_mount_point(pr, i);
		if (r == 0 && pr->ps->system_paths)
			r = predict_source(pr, i);
		if (r == 0 && pr->ps->system_paths)
			r = predict_block_source(pr, i);
		if (r == 0 && pr->ps->system_paths)
			r = predict_overlay(pr, i);
		return r;
	case PLAN_REGISTER:
	case PLAN_ASSEMBLE:
	default:
		return 0;
	}
}

int plan_predict(const struct plan_input *in, const struct predict_sources *ps, struct plan *p,
		 struct plan_predictions *ret)
{
	struct predictor pr = { .in = in, .ps = ps, .p = p, .out = ret, .n_tops = SIZE_MAX };
	int r = 0, n = 0;

	*ret = (struct plan_predictions){ 0 };
	for (size_t i = 0; r >= 0 && i < p->n_steps; i++) {
		r = predict_step(&pr, i);
		n += r > 0 && !predict_is_skip(&p->steps[i]);
	}
	strv_free(pr.fstypes);
	strv_free(pr.dev_types);
	free(pr.tops);
	return r < 0 ? r : n;
}

void plan_predictions_done(struct plan_predictions *pp)
{
	for (size_t i = 0; i < pp->n; i++)
		free(pp->why[i]);
	free(pp->why);
	*pp = (struct plan_predictions){ 0 };
}
