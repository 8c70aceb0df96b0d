/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The status for Prometheus, gathered from the system (the state
 * directory, the areas, the block devices, the mount table) and written to
 * stdout or, atomically, to node_exporter's textfile-collector directory;
 * and the record of each area's last sync.  The formatting is
 * status_prom.c's.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <libmount.h>

#include "state/atomic_file.h"
#include "parse/config.h"
#include "world/load.h"
#include "world/statedir.h"
#include "status_prom.h"
#include "status_live.h"
#include "shared/units.h"
#include "shared/util.h"
#include "world/world.h"
#include "mount/safepath.h"
#include "mount/view.h"

#define LAST_SYNC_DIR "last-sync"

/* Everything status_prom_render() is given, with the storage behind it. */
struct prom_collect {
	struct world w; /* inv and btrfs only */
	struct state st;
	enum live_status *live; /* parallel to st.v */
	struct status_sum sum; /* for the exit status, as `status` sums it */
	struct area_status *areas;
	size_t n_areas;
	struct prom_fs *fs;
	struct prom_sync *syncs;
	char **sync_names; /* strv, owns the names syncs[] borrow */
	size_t n_syncs;
	struct prom_data d;
};

static void collect_done(struct prom_collect *c)
{
	free(c->fs);
	free(c->live);
	free(c->syncs);
	strv_free(c->sync_names);
	area_status_free(c->areas, c->n_areas);
	state_done(&c->st);
	world_done(&c->w);
}

/* Is the mount @fs (btrfs) one of @f's members?  By device number, or by
 * name where the inventory has none (a fixture's image files). */
static bool mount_of(struct libmnt_fs *fs, const struct btrfs_filesystem *f)
{
	const char *src = mnt_fs_get_srcpath(fs);
	struct stat st;
	bool have_rdev;

	if (!src)
		return false;
	have_rdev = stat(src, &st) == 0 && S_ISBLK(st.st_mode);
	for (size_t m = 0; m < f->n_members; m++) {
		const struct block_device *dev = f->members[m].dev;

		if (have_rdev && dev->devno ? dev->devno == st.st_rdev : strcmp(dev->devnode, src) == 0)
			return true;
	}
	return false;
}

/* mounted and degraded from the mount table at @path (libmount reads
 * mountinfo(5)); nothing is known when it cannot be read */
static void fs_mount_state(const char *path, const struct btrfs_filesystem *f, struct prom_fs *p)
{
	struct libmnt_table *tb = view_read_table(path);
	struct libmnt_iter *it = mnt_new_iter(MNT_ITER_FORWARD);
	struct libmnt_fs *fs;

	while (tb && it && mnt_table_next_fs(tb, it, &fs) == 0) {
		const char *opts = mnt_fs_get_fs_options(fs);

		if (!mnt_fs_match_fstype(fs, "btrfs") || !mount_of(fs, f))
			continue;
		p->mounted = true;
		if (opts && mnt_optstr_get_option(opts, "degraded", NULL, NULL) == 0)
			p->degraded = true;
	}
	mnt_free_iter(it);
	mnt_unref_table(tb);
}

/* What the kernel says of the members of a mounted filesystem. */
static void fs_kernel_members(const char *sysfs, const struct btrfs_filesystem *f, struct prom_fs *p)
{
	struct btrfs_live_members lm;

	if (!p->mounted || btrfs_live_members(sysfs, f->fsid, &lm) < 0)
		return;
	p->missing = lm.n_missing;
	p->unused = lm.n_unused;
}

static int collect_btrfs(struct prom_collect *c, const struct sources *src, const struct logger *lg)
{
	const struct btrfs_fs_list *l = &c->w.btrfs;
	int r = world_load_devices(src, INVENTORY_FULL, lg, &c->w);

	if (r < 0)
		return r;
	c->fs = calloc(l->n ?: 1, sizeof(*c->fs));
	if (!c->fs)
		return -ENOMEM;
	for (size_t i = 0; i < l->n; i++) {
		const struct btrfs_filesystem *f = &l->v[i];
		struct prom_fs *p = &c->fs[i];

		*p = (struct prom_fs){
			.fsid = f->fsid, .label = f->label, .present = f->n_members, .expected = f->num_devices
		};
		for (size_t m = 0; m < f->n_members; m++)
			p->stale += btrfs_member_stale(f, &f->members[m]);
		fs_mount_state(src->mountinfo_path, f, p);
		fs_kernel_members(src->sysfs_btrfs, f, p);
	}
	c->d.fs = c->fs;
	c->d.n_fs = l->n;
	return 0;
}

static bool area_name_ok(const char *name)
{
	return name[0] && name[0] != '.' && !strchr(name, '/') && strlen(name) <= NAME_MAX - 16;
}

/* "MONOTONIC_USEC BOOT_ID" after the status word, or nothing.  Returns:
 * 0; -EBADMSG. */
static int parse_mark(const char *s, struct sync_mark *ret)
{
	char num[24];
	const char *sp = strchr(s, ' ');
	uint64_t mono;

	*ret = (struct sync_mark){ 0 };
	if (!*s)
		return 0;
	if (!sp || (size_t)(sp - s) >= sizeof(num) || strlen(sp + 1) != SYNC_BOOT_ID_LEN - 1)
		return -EBADMSG;
	memcpy(num, s, (size_t)(sp - s));
	num[sp - s] = '\0';
	if (units_parse_uint(num, UINT64_MAX, &mono) < 0)
		return -EBADMSG;
	ret->mono_usec = mono;
	memcpy(ret->boot_id, sp + 1, SYNC_BOOT_ID_LEN);
	return 0;
}

int status_prom_read_sync(const char *state_dir, const char *name, struct prom_sync *ret)
{
	_cleanup_free_ char *path = NULL;
	char buf[128] = "", *sp, *word, *rest;
	struct sync_mark mark;
	uint64_t t;
	FILE *f;

	if (!area_name_ok(name))
		return -EINVAL;
	if (asprintf(&path, "%s/" LAST_SYNC_DIR "/%s", state_dir, name) < 0)
		return -ENOMEM;
	f = fopen(path, "re");
	if (!f)
		return -errno;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = '\0';
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	sp = strchr(buf, ' ');
	if (!sp)
		return -EBADMSG;
	*sp = '\0';
	word = sp + 1;
	rest = word + strcspn(word, " ");
	if (*rest)
		*rest++ = '\0';
	if (units_parse_uint(buf, UINT64_MAX, &t) < 0 || (strcmp(word, "ok") != 0 && strcmp(word, "failed") != 0) ||
	    parse_mark(rest, &mark) < 0)
		return -EBADMSG;
	*ret = (struct prom_sync){ .time_sec = t, .ok = strcmp(word, "ok") == 0, .mark = mark };
	return 0;
}

static int collect_syncs(struct prom_collect *c, const char *state_dir)
{
	c->syncs = calloc(c->n_areas ?: 1, sizeof(*c->syncs));
	if (!c->syncs)
		return -ENOMEM;
	for (size_t i = 0; i < c->n_areas; i++) {
		struct prom_sync s;
		char *name;

		if (status_prom_read_sync(state_dir, c->areas[i].name, &s) < 0)
			continue; /* never synced, or a record to ignore */
		name = strdup(c->areas[i].name);
		if (!name || strv_push(&c->sync_names, name) < 0) {
			free(name);
			return -ENOMEM;
		}
		s.area = name;
		c->syncs[c->n_syncs++] = s;
	}
	c->d.syncs = c->syncs;
	c->d.n_syncs = c->n_syncs;
	return 0;
}

/* The live check of every record and area, summed as `status` does
 * (status_live.h).  Returns: 0; -ENOMEM; -EIO (logged) when the mount
 * table cannot be read. */
static int collect_live(struct prom_collect *c, const struct sources *src, const struct logger *lg,
			bool nobody_at_work)
{
	struct live_input in = { .sysfs_btrfs = src->sysfs_btrfs,
				 .areas = c->areas,
				 .n_areas = c->n_areas,
				 .self = log_self(lg),
				 .nobody_at_work = nobody_at_work };
	char why[1536];

	c->live = calloc(c->st.n ?: 1, sizeof(*c->live));
	if (!c->live)
		return -ENOMEM;
	in.mountinfo = view_read_table(src->mountinfo_path);
	if (!in.mountinfo) {
		log_error(lg, "cannot read %s: %s", src->mountinfo_path, strerror(errno));
		return -EIO;
	}
	for (size_t i = 0; i < c->st.n; i++) {
		c->live[i] = live_check(&in, &c->st.v[i], why, sizeof(why));
		status_sum_record(&c->sum, &c->st.v[i], c->live[i]);
	}
	for (size_t i = 0; i < c->n_areas; i++)
		status_sum_area(&c->sum, c->areas[i].state);
	mnt_unref_table(in.mountinfo);
	c->d.live = c->live;
	return 0;
}

/* Returns: 0; -EPERM (logged) when the state cannot be read; other
 * negative errno (logged). */
static int collect(const struct options *o, const struct logger *lg, bool nobody_at_work,
		   struct prom_collect *c)
{
	struct sources src;
	int r;

	*c = (struct prom_collect){ 0 };
	sources_init(&src, o);
	if (statedir_load_state(o->state_dir, lg, &c->st) < 0)
		return -EPERM;
	c->d.state = &c->st;
	c->d.collected_sec = (int64_t)time(NULL);
	/* the areas before the live check, which sums their states too */
	if (area_status_list(o->state_dir, log_self(lg), nobody_at_work, &c->areas, &c->n_areas) < 0)
		c->n_areas = 0; /* as `status` does */
	c->d.areas = c->areas;
	c->d.n_areas = c->n_areas;
	r = collect_live(c, &src, lg, nobody_at_work);
	if (r == 0)
		r = collect_syncs(c, o->state_dir);
	if (r == 0 && (r = collect_btrfs(c, &src, lg)) < 0)
		log_error(lg, "cannot list block devices: %s", strerror(-r));
	return r;
}

int cmd_status_prometheus(const struct options *o, const struct logger *lg, bool nobody_at_work)
{
	struct prom_collect c;
	int r = collect(o, lg, nobody_at_work, &c);

	int ret;

	if (r == 0 && (r = status_prom_render(&c.d, stdout)) < 0)
		log_error(lg, "writing the metrics: %s", strerror(-r));
	ret = r == -EPERM ? EXIT_STATE : r < 0 ? EXIT_STEP_FAILED : status_sum_exit(&c.sum);
	collect_done(&c);
	return ret;
}

static int write_exposition(FILE *f, const void *ud)
{
	return status_prom_render(ud, f);
}

/* Writes the exposition @d into @path's directory, opened by the walk of
 * safepath_open() (mount/safepath.h): no link a user could plant is
 * followed on the way, and the file is made and renamed in the directory
 * the walk opened (file_write_atomic_at()), so that whoever owns that
 * directory or one above it cannot have root write it elsewhere, by a
 * link or by renaming directories while it is written. */
static void write_textfile(const char *path, const struct prom_data *d, const struct logger *lg)
{
	_cleanup_free_ char *dir = strndup(path, (size_t)(strrchr(path, '/') - path));
	_cleanup_close_ int dfd = -EBADF;
	char why[512] = "";
	struct stat st;
	int r;

	if (!dir)
		return;
	r = safepath_open(*dir ? dir : "/", 0, &dfd, why, sizeof(why));
	if (r == -EPERM) {
		log_warning(lg, "metrics-textfile '%s': not written: %s", path, why);
		return;
	}
	if (r == 0 && (fstat(dfd, &st) < 0 || !S_ISDIR(st.st_mode)))
		r = -ENOTDIR;
	if (r == 0)
		r = file_write_atomic_at(dfd, strrchr(path, '/') + 1, 0644, write_exposition, d);
	if (r < 0)
		log_warning(lg, "metrics-textfile '%s': cannot write the metrics: %s%s", path, strerror(-r),
			    r == -ENOENT || r == -ENOTDIR ? " (its directory must exist: storaged does not make it)" : "");
}

/* The textfile that the configuration at @o names, or NULL (owned). */
static char *configured_textfile(const struct options *o)
{
	struct config cfg;
	struct diag_list dl = { 0 };
	char *path = NULL;

	if (config_init(&cfg) < 0)
		return NULL;
	/* problems with the configuration were reported by the pass */
	if (config_load(&cfg, o->config_path, true, &dl) == 0 && cfg.metrics_textfile)
		path = strdup(cfg.metrics_textfile);
	diag_list_done(&dl);
	config_done(&cfg);
	return path;
}

void status_prom_after_pass(const struct options *o, const struct logger *lg)
{
	_cleanup_free_ char *path = configured_textfile(o);
	/* what the pass itself logged (a device that cannot be probed, a
	 * cloned member) is not said again for the metrics */
	struct logger quiet = *lg;
	struct prom_collect c;
	int r;

	if (!path)
		return;
	quiet.max_level = LOG_ERR;
	/* written by the run that just recorded its steps: none was left
	 * under way by a killed one */
	r = collect(o, &quiet, false, &c);
	if (r == 0)
		write_textfile(path, &c.d, lg);
	else
		log_warning(lg, "metrics-textfile '%s': cannot write the metrics: %s", path, strerror(-r));
	collect_done(&c);
}

static int write_sync(FILE *f, const void *ud)
{
	const bool *ok = ud;

	char boot_id[SYNC_BOOT_ID_LEN];

	fprintf(f, "%lld %s", (long long)time(NULL), *ok ? "ok" : "failed");
	if (sync_read_boot_id(SYNC_BOOT_ID_PATH, boot_id) == 0)
		fprintf(f, " %llu %s", (unsigned long long)now_monotonic_usec(), boot_id);
	fputc('\n', f);
	return ferror(f) ? -EIO : 0;
}

int status_prom_forget_sync(const char *state_dir, const char *area)
{
	_cleanup_free_ char *path = NULL;

	if (!area_name_ok(area))
		return -EINVAL;
	if (asprintf(&path, "%s/" LAST_SYNC_DIR "/%s", state_dir, area) < 0)
		return -ENOMEM;
	return unlink(path) < 0 && errno != ENOENT ? -errno : 0;
}

int status_prom_note_sync(const char *state_dir, const char *area, bool ok)
{
	_cleanup_free_ char *dir = NULL, *path = NULL;

	if (!area_name_ok(area))
		return -EINVAL;
	if (asprintf(&dir, "%s/" LAST_SYNC_DIR, state_dir) < 0 || asprintf(&path, "%s/%s", dir, area) < 0)
		return -ENOMEM;
	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		return -errno;
	return file_write_atomic(path, 0644, write_sync, &ok);
}
