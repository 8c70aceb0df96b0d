/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Sync back: the area copied into the directory it covers, crash-safe (see
 * the comment above area_sync_locked()).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "area_internal.h"
#include "copy_spawn.h"
#include "util.h"

/* removes a sync left half-done by a crash (see area_sync()) */
int area_recover_sync(int dirfd, dev_t dev)
{
	return area_rm_rf_at(dirfd, SYNC_NEW, dev);
}

/* moves every top-level entry of @newfd over the same name in @lowerfd */
static int sync_exchange(int lowerfd, int newfd)
{
	DIR *d = fdopendir(dup(newfd));
	struct dirent *de;
	int r = 0;

	if (!d)
		return -errno;
	while (r == 0 && (de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (renameat2(newfd, de->d_name, lowerfd, de->d_name, RENAME_EXCHANGE) == 0)
			continue;
		if (errno != ENOENT ||
		    renameat2(newfd, de->d_name, lowerfd, de->d_name, RENAME_NOREPLACE) < 0)
			r = -errno;
	}
	closedir(d);
	return r;
}

/* moves top-level entries of @lowerfd that the area no longer has into @newfd */
static int sync_delete(int lowerfd, int areafd, int newfd)
{
	DIR *d = fdopendir(dup(lowerfd));
	struct dirent *de;
	struct stat st;
	int r = 0;

	if (!d)
		return -errno;
	while (r == 0 && (de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
		    !strncmp(de->d_name, SYNC_PREFIX, strlen(SYNC_PREFIX)))
			continue;
		if (fstatat(areafd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 || errno != ENOENT)
			continue;
		if (renameat2(lowerfd, de->d_name, newfd, de->d_name, RENAME_NOREPLACE) < 0)
			r = -errno;
	}
	closedir(d);
	return r;
}

/* the root of the directory takes the area root's owner, mode and times */
static int sync_root(int lowerfd, int areafd)
{
	struct stat st;
	struct timespec ts[2];

	if (fstat(areafd, &st) < 0)
		return -errno;
	ts[0] = st.st_atim;
	ts[1] = st.st_mtim;
	if (fchown(lowerfd, st.st_uid, st.st_gid) < 0 || fchmod(lowerfd, st.st_mode & 07777) < 0 ||
	    futimens(lowerfd, ts) < 0)
		return -errno;
	return 0;
}

/*
 * Sync back, crash-safe.  Everything happens inside the covered directory's
 * own filesystem, reached through the private bind areas/<name>/lower:
 *
 *  0. recover: delete <lower>/.storaged-sync.NEW left by an interrupted run
 *     (always safe, see 5.)
 *  1. copy the area into <lower>/.storaged-sync.NEW with full fidelity
 *  2. syncfs(): every new file is complete on disk before anything moves
 *  3. for each top-level entry E of NEW: renameat2(NEW/E, lower/E,
 *     RENAME_EXCHANGE), or RENAME_NOREPLACE when lower/E does not exist; the
 *     old version ends up in NEW/E.  One atomic step per entry: lower/E is at
 *     every instant its complete old or its complete new subtree.
 *  4. each top-level entry of lower the area no longer has is renamed into
 *     NEW (deleted in one atomic step)
 *  5. root owner/mode/times; syncfs(); delete NEW, which now holds only
 *     versions that are no longer live; syncfs().
 * A crash at any point leaves every file in lower complete, old or new, and
 * NEW holding only copies that are not live: step 0 may delete it.  The sync
 * reports success only after the last syncfs().
 */
int area_sync_locked(const struct area_dirs *d, struct diag_list *m, const char *name)
{
	int lowerfd = -1, areafd = -1, newfd = -1, r;
	struct copy_result c = { 0 };
	_cleanup_free_ char *newdir = NULL;
	const char *step = "opening";
	struct stat st;

	if (asprintf(&newdir, "%s/%s", d->lower, SYNC_NEW) < 0)
		return -ENOMEM;
	lowerfd = open(d->lower, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	areafd = open(d->area, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (lowerfd < 0 || areafd < 0 || fstat(lowerfd, &st) < 0) {
		r = -errno;
		goto out;
	}
	step = "removing an interrupted sync";
	if ((r = area_recover_sync(lowerfd, st.st_dev)) < 0)
		goto out;
	step = "creating " SYNC_NEW;
	if (mkdirat(lowerfd, SYNC_NEW, 0700) < 0 ||
	    (newfd = openat(lowerfd, SYNC_NEW, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
		r = -errno;
		goto out;
	}
	step = "copying";
	if ((r = copy_spawn_run(d->area, newdir, name, copy_spawn_jobs(), &c)) < 0)
		goto out;
	step = "syncing the copy";
	if (syncfs(lowerfd) < 0) {
		r = -errno;
		goto out;
	}
	step = "swapping in the new versions";
	if ((r = sync_exchange(lowerfd, newfd)) < 0)
		goto out;
	step = "removing deleted entries";
	if ((r = sync_delete(lowerfd, areafd, newfd)) < 0 || (r = sync_root(lowerfd, areafd)) < 0)
		goto out;
	step = "syncing";
	if (syncfs(lowerfd) < 0 || (r = area_recover_sync(lowerfd, st.st_dev)) < 0 || syncfs(lowerfd) < 0)
		r = r < 0 ? r : -errno;
out:
	if (r < 0)
		diag_error(m, NULL, 0, "area '%s': sync back into '%s' failed while %s: %s%s; the directory holds complete old or new versions of every file and the area is left in place: fix this and run 'storaged sync %s'",
			   name, d->lower, step, c.msg[0] ? c.msg : strerror(-r),
			   r == -ENOSPC ? " (the directory's filesystem needs room for a full copy)" : "",
			   name);
	if (newfd >= 0)
		close(newfd);
	if (lowerfd >= 0)
		close(lowerfd);
	if (areafd >= 0)
		close(areafd);
	return r;
}

int area_sync(const char *state_dir, const char *name, struct diag_list *msgs)
{
	struct area_dirs d;
	struct state_area st;
	int fd, r;

	if ((r = area_dirs_init(&d, state_dir, name)) < 0) {
		diag_error(msgs, NULL, 0, "area '%s': invalid name", name);
		return r;
	}
	fd = area_record_open_locked(&d, &st);
	if (fd < 0) {
		r = fd;
		diag_error(msgs, NULL, 0, "area '%s' is not active (%s: %s)", name, d.state, strerror(-r));
		goto out;
	}
	if (area_is_mount_of(d.lower, NULL) && area_is_mount_of(d.area, NULL))
		r = area_sync_locked(&d, msgs, name);
	else {
		r = -ENOENT;
		diag_error(msgs, NULL, 0, "area '%s': '%s' or '%s' is not mounted: cannot sync; run 'storaged stop' and start again",
			   name, d.area, d.lower);
	}
	state_area_done(&st);
	close(fd);
out:
	area_dirs_done(&d);
	return r;
}
