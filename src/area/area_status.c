/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The records of every area under the state directory, in setup order,
 * with what statvfs says of each mounted area (`storaged status`).
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>
#include <fcntl.h>
#include <sys/file.h>

#include <libmount.h>

#include "area_internal.h"
#include "mount/view.h"
#include "shared/units.h"
#include "shared/util.h"

static int area_record_load(const char *state_dir, const char *name, struct state_area *st)
{
	struct area_dirs d;
	_cleanup_close_ int fd = -EBADF;
	int r;

	if ((r = area_dirs_init(&d, state_dir, name, NULL)) < 0)
		return r;
	fd = open(d.state, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	r = fd < 0 ? -errno : state_area_read_fd(fd, st);
	area_dirs_done(&d);
	return r;
}

static int area_record_cmp(const void *x, const void *y)
{
	const struct state_area *a = x, *b = y;

	if (a->started_usec != b->started_usec)
		return a->started_usec < b->started_usec ? -1 : 1;
	return strcmp(a->name, b->name);
}

/* all readable state files under @state_dir/areas, in setup order */
static int area_records_load(const char *state_dir, struct state_area **ret, size_t *ret_n)
{
	_cleanup_free_ char *areas = NULL;
	struct state_area *v = NULL, *nv;
	struct dirent *de;
	size_t n = 0;
	DIR *dir;

	*ret = NULL;
	*ret_n = 0;
	if (asprintf(&areas, "%s/areas", state_dir) < 0)
		return -ENOMEM;
	dir = opendir(areas);
	if (!dir)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(dir))) {
		if (de->d_name[0] == '.' || !(nv = realloc(v, (n + 1) * sizeof(*v))))
			continue;
		v = nv;
		if (area_record_load(state_dir, de->d_name, &v[n]) == 0)
			n++;
	}
	closedir(dir);
	if (n)
		qsort(v, n, sizeof(*v), area_record_cmp);
	*ret = v;
	*ret_n = n;
	return 0;
}

/* Is a stop or sync of the area running now?  Both hold its record's
 * lock (area_record_open_locked()); a killed one has let go of it. */
static bool record_busy(const struct area_dirs *d)
{
	_cleanup_close_ int fd = open(d->state, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);

	if (fd < 0 || flock(fd, LOCK_SH | LOCK_NB) == 0)
		return false;
	return errno == EWOULDBLOCK;
}

/* A stop killed midway leaves its mark in the record (area.c,
 * stop_begins()); a sync back killed midway, its working directory in
 * the covered directory (area_sync.c), which the next sync or stop
 * removes.  Either way the area is still there and a stop run again
 * finishes: @why says so (@name: the area's; @uncovered: its bind over
 * the directory is gone, which a stop does after its sync back).
 * Returns: true when one was interrupted. */
static bool interrupted(const struct area_dirs *d, const struct state_area *st, const char *name,
			bool uncovered, char *why, size_t len)
{
	_cleanup_free_ char *work = NULL;
	bool sync_left;

	if (!st->stop_started_usec && !st->sync_dir)
		return false;
	if (st->sync_dir && asprintf(&work, "%s/%s", d->lower, st->sync_dir) < 0)
		return false;
	sync_left = work && access(work, F_OK) == 0;
	if ((!st->stop_started_usec && !sync_left) || record_busy(d))
		return false;
	if (st->stop_started_usec && uncovered)
		snprintf(why, len,
			 "a `storaged stop` was interrupted while it tore it down: its bind over '%s' is undone%s; run `%s stop` again to finish",
			 st->path,
			 area_is_mount_of(d->area, NULL) ? ", its filesystem still mounted"
			 : area_is_mount_of(d->lower, NULL) ? ", storaged's private view of the directory still mounted"
							    : " and nothing of it is mounted any more: only its record is left",
			 area_self(d));
	else if (st->stop_started_usec)
		snprintf(why, len,
			 "a `storaged stop` was interrupted while it %s: the area is still over '%s'%s; run `%s stop` again to finish",
			 st->persist ? "synced it back and tore it down" : "tore it down", st->path,
			 sync_left ? " and its sync back did not finish (the directory holds the complete old or new version of each file)"
				   : "",
			 area_self(d));
	else
		snprintf(why, len,
			 "a sync back was interrupted: '%s' holds the complete old or new version of each file, the area all its changes; run `%s sync %s` or `%s stop` to finish",
			 st->path, area_self(d), name, area_self(d));
	return true;
}

void area_status_measure(struct area_status *o, const struct statvfs *v)
{
	o->size_bytes = (uint64_t)v->f_blocks * v->f_frsize;
	o->used_bytes = (uint64_t)(v->f_blocks - v->f_bfree) * v->f_frsize;
	o->avail_bytes = (uint64_t)v->f_bavail * v->f_frsize;
	o->inodes_total = v->f_files;
	o->inodes_used = v->f_files - v->f_ffree;
	o->measured = true;
}

static void status_fill(const char *state_dir, const char *self, struct state_area *st, struct area_status *o)
{
	struct area_dirs d;
	struct statvfs v;
	char why[PATH_MAX * 2];

	*o = (struct area_status){ .persist = st->persist, .seeded = st->seeded,
				  .sync_interval_usec = st->sync_interval_usec, .overlay = st->overlay };
	o->name = st->name;
	o->path = st->path;
	o->device = st->device;
	o->fs = st->fs;
	o->backend = strdup(config_backend_name(st->backend));
	st->name = st->path = st->device = st->fs = NULL;
	o->size_bytes = o->start_size_bytes = st->size_bytes;
	o->inodes_total = o->start_inodes = st->nr_inodes;
	o->cover_id = st->cover_id;
	if (area_dirs_init(&d, state_dir, o->name, self) < 0) {
		o->state = AREA_STATE_DEGRADED;
		return;
	}
	if (area_is_mount_of(d.area, NULL) && statvfs(d.area, &v) == 0)
		area_status_measure(o, &v);
	/* the path and device are the record's, read before they moved to @o */
	st->path = o->path;
	st->device = o->device;
	o->state = area_state_of(&d, st, why, sizeof(why));
	/* gone while a stop was under way: that stop's own doing */
	if ((o->state != AREA_STATE_GONE || st->stop_started_usec) &&
	    interrupted(&d, st, o->name, o->state == AREA_STATE_GONE, why, sizeof(why)))
		o->state = AREA_STATE_INTERRUPTED;
	else if (o->state == AREA_STATE_GONE && st->stop_started_usec && record_busy(&d))
		snprintf(why, sizeof(why), "a `storaged stop` is tearing it down now");
	else if (o->state == AREA_STATE_ACTIVE && st->sync_failed)
		/* a sync that failed, and removed what it wrote (area_sync.c) */
		snprintf(why, sizeof(why),
			 "its last sync back into '%s' failed %s; the area holds every change: run `%s sync %s` once that is fixed",
			 o->path, st->sync_failed, area_self(&d), o->name);
	else if (o->state == AREA_STATE_ACTIVE && st->sync_kept_both)
		snprintf(why, sizeof(why),
			 "a sync back into '%s' found %s: compare the two and keep what you need (`%s stop`, which tears down every area, names them again)",
			 o->path, st->sync_kept_both, area_self(&d));
	o->kept_both = st->sync_kept_both != NULL;
	st->path = st->device = NULL;
	if (why[0])
		o->state_why = strdup(why);
	area_dirs_done(&d);
}

/* @part of @whole in percent, rounded up as df(1) does */
static unsigned percent_of(uint64_t part, uint64_t whole)
{
	double d;
	unsigned p;

	if (!whole)
		return 0;
	if (part >= whole)
		return 100;
	d = (double)part * 100.0 / (double)whole;
	p = (unsigned)d;
	return (double)p < d ? p + 1 : p;
}

bool area_status_use(const struct area_status *a, unsigned *ret_bytes_pct, unsigned *ret_inodes_pct)
{
	*ret_bytes_pct = a->measured ? percent_of(a->used_bytes, a->used_bytes + a->avail_bytes) : 0;
	*ret_inodes_pct = a->measured ? percent_of(a->inodes_used, a->inodes_total) : 0;
	return *ret_bytes_pct >= AREA_NEARLY_FULL_PERCENT || *ret_inodes_pct >= AREA_NEARLY_FULL_PERCENT;
}

bool area_status_full(const struct area_status *a)
{
	return a->measured && ((a->size_bytes && !a->avail_bytes) ||
			       (a->inodes_total && a->inodes_used >= a->inodes_total));
}

const char *area_status_full_words(const struct area_status *a, char *buf, size_t len, const char **ret_limit)
{
	bool bytes = a->measured && a->size_bytes && !a->avail_bytes;
	bool inodes = a->measured && a->inodes_total && a->inodes_used >= a->inodes_total;
	char used[16], size[16];

	if (ret_limit)
		*ret_limit = bytes && inodes ? "bytes,inodes" : bytes ? "bytes" : inodes ? "inodes" : NULL;
	if (!bytes && !inodes)
		return NULL;
	units_format_size_human(a->used_bytes, used, sizeof(used));
	units_format_size_human(a->used_bytes + a->avail_bytes, size, sizeof(size));
	if (bytes && inodes)
		snprintf(buf, len, "out of bytes (%s of %s) and of inodes (%llu of %llu)", used, size,
			 (unsigned long long)a->inodes_used, (unsigned long long)a->inodes_total);
	else if (bytes)
		snprintf(buf, len, "out of bytes (%s of %s)", used, size);
	else
		snprintf(buf, len, "out of inodes (%llu of %llu)", (unsigned long long)a->inodes_used,
			 (unsigned long long)a->inodes_total);
	return buf;
}

/* The directory @lower (a setup's private bind of an area's directory)
 * is a bind of, by its name in the mount table now: the mount of its
 * filesystem whose root holds it, its mount point and the rest of the
 * bind's root, checked by stat(2) (same device and inode).  Returns: an
 * owned path, or NULL when no name leads there. */
static char *bound_from(const char *lower)
{
	struct libmnt_table *tb = view_read_table(VIEW_MOUNTINFO);
	struct libmnt_iter *itr = mnt_new_iter(MNT_ITER_FORWARD);
	struct libmnt_fs *fs, *bind = tb ? mnt_table_find_target(tb, lower, MNT_ITER_BACKWARD) : NULL;
	const char *root = bind ? mnt_fs_get_root(bind) : NULL;
	struct stat want, got;
	char *found = NULL;

	if (!itr || !root || stat(lower, &want) < 0)
		goto out;
	while (!found && mnt_table_next_fs(tb, itr, &fs) == 0) {
		const char *r = mnt_fs_get_root(fs), *t = mnt_fs_get_target(fs), *rest;
		size_t n = r && !streq(r, "/") ? strlen(r) : 0;

		if (fs == bind || !t || !r || mnt_fs_get_devno(fs) != mnt_fs_get_devno(bind) ||
		    strncmp(root, r, n) != 0 || (root[n] != '/' && root[n] != '\0'))
			continue;
		rest = root + n;
		if (asprintf(&found, "%s%s", streq(t, "/") ? "" : t, rest) < 0)
			found = NULL;
		else if (stat(found, &got) < 0 || got.st_dev != want.st_dev || got.st_ino != want.st_ino) {
			free(found);
			found = NULL;
		}
	}
out:
	mnt_free_iter(itr);
	mnt_unref_table(tb);
	return found;
}

/*
 * The area directory @name without a record: a setup killed before it
 * wrote one (area.c, setup_cover()) leaves the area mounted, maybe seeded
 * in part, and the directory's private bind; the directory is not covered
 * yet.  Returns: 1 and @o filled when something of it is mounted; 0 when
 * nothing is (nothing to say); negative errno.
 */
static int status_unrecorded(const char *state_dir, const char *self, const char *name,
			     struct area_status *o)
{
	struct area_dirs d;
	struct statvfs v;
	char why[PATH_MAX * 3 + 512], used[16];
	bool area = false, lower = false;
	int r;

	if ((r = area_dirs_init(&d, state_dir, name, self)) < 0)
		return r;
	if (access(d.state, F_OK) == 0 || !((area = area_is_mount_of(d.area, NULL)) | (lower = area_is_mount_of(d.lower, NULL)))) {
		area_dirs_done(&d);
		return 0;
	}
	*o = (struct area_status){ .state = AREA_STATE_INTERRUPTED };
	o->name = strdup(name);
	o->path = lower ? bound_from(d.lower) : NULL;
	o->backend = strdup("unknown");
	if (area && statvfs(d.area, &v) == 0)
		area_status_measure(o, &v);
	snprintf(why, sizeof(why),
		 "a `start` was killed while it set the area up: %s%s%s%s%s%s%s%s%s, and nothing covers its directory yet; `%s start` sets it up again, `%s stop` undoes it",
		 area ? "its filesystem is mounted on '" : "", area ? d.area : "", area ? "' (" : "",
		 area ? units_format_size_human(o->used_bytes, used, sizeof(used)) : "", area ? " used)" : "",
		 area && lower ? " and " : "", lower ? "its directory is bound on '" : "", lower ? d.lower : "",
		 lower ? "'" : "", area_self(&d), area_self(&d));
	area_dirs_done(&d);
	if (!o->name || !o->backend || !(o->state_why = strdup(why)))
		return -ENOMEM;
	if (!o->path)
		o->path = strdup("?");
	return o->path ? 1 : -ENOMEM;
}

/* Appends the areas left by killed setups (status_unrecorded()) to @o. */
static int list_unrecorded(const char *state_dir, const char *self, struct area_status **o, size_t *n)
{
	_cleanup_strv_free_ char **names = NULL;
	int r = area_list_names(state_dir, &names);

	for (size_t i = 0; r == 0 && names[i]; i++) {
		struct area_status *nv = realloc(*o, (*n + 1) * sizeof(**o));

		if (!nv)
			return -ENOMEM;
		*o = nv;
		r = status_unrecorded(state_dir, self, names[i], &nv[*n]);
		if (r > 0)
			(*n)++;
		r = r > 0 ? 0 : r;
	}
	return r;
}

int area_status_list(const char *state_dir, const char *self, bool killed, struct area_status **ret,
		     size_t *ret_n)
{
	struct state_area *v;
	struct area_status *o;
	size_t n;
	int r = area_records_load(state_dir, &v, &n);

	if (r < 0)
		return r;
	o = calloc(n ? n : 1, sizeof(*o));
	for (size_t i = 0; o && i < n; i++)
		status_fill(state_dir, self, &v[i], &o[i]);
	for (size_t i = 0; i < n; i++)
		state_area_done(&v[i]);
	free(v);
	if (!o)
		return -ENOMEM;
	if (killed && (r = list_unrecorded(state_dir, self, &o, &n)) < 0) {
		area_status_free(o, n);
		return r;
	}
	*ret = o;
	*ret_n = n;
	return 0;
}

void area_status_free(struct area_status *v, size_t n)
{
	for (size_t i = 0; v && i < n; i++) {
		free(v[i].state_why);
		free(v[i].name);
		free(v[i].path);
		free(v[i].backend);
		free(v[i].device);
		free(v[i].fs);
	}
	free(v);
}
