/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Sync back: the area copied into the directory it covers, crash-safe
 * (see area_sync_locked()). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "area_internal.h"
#include "copy/copy.h"
#include "copy/copy_spawn.h"
#include "mount/mountfd.h"
#include "shared/util.h"

/* the xattr that marks a sync's working directory, its value the area's
 * name: only root may set trusted.* (xattr(7)), so a user cannot mark a
 * directory of theirs, and the mark outlives a reboot that empties /run */
#define SYNC_XATTR "trusted.storaged.sync"
#define SYNC_DIR_PREFIX ".storaged-sync."
#define SYNC_DIR_HEX 32 /* 128 random bits */

bool area_sync_is_dir_name(const char *s)
{
	size_t n = strlen(SYNC_DIR_PREFIX);

	if (strncmp(s, SYNC_DIR_PREFIX, n) != 0 || strlen(s + n) != SYNC_DIR_HEX)
		return false;
	return strspn(s + n, "0123456789abcdef") == SYNC_DIR_HEX;
}

static int sync_random_name(char name[SYNC_DIR_NAME_MAX])
{
	unsigned char b[SYNC_DIR_HEX / 2];
	size_t got = 0, n = strlen(SYNC_DIR_PREFIX);
	ssize_t k;

	while (got < sizeof(b)) {
		k = getrandom(b + got, sizeof(b) - got, 0);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -errno;
		got += (size_t)k;
	}
	memcpy(name, SYNC_DIR_PREFIX, n);
	for (size_t i = 0; i < sizeof(b); i++)
		snprintf(name + n + 2 * i, 3, "%02x", b[i]);
	return 0;
}

int area_sync_dir_check(int dirfd, const char *entry, const char *area, bool recorded, int *ret_fd)
{
	char mark[256];
	struct stat st;
	ssize_t n;
	_cleanup_close_ int fd = -EBADF;
	int r;

	*ret_fd = -1;
	fd = openat(dirfd, entry, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT || errno == ENOTDIR || errno == ELOOP ? 0 : -errno;
	if (fstat(fd, &st) < 0)
		return -errno;
	/* a user cannot give a directory to root, nor set the mark */
	if (!S_ISDIR(st.st_mode) || st.st_uid != 0 || (st.st_mode & 07777) != 0700)
		return 0;
	n = fgetxattr(fd, SYNC_XATTR, mark, sizeof(mark));
	if (n >= 0)
		r = (size_t)n == strlen(area) && memcmp(mark, area, (size_t)n) == 0;
	else
		/* the record names it: killed before it was marked, or a
		 * filesystem without trusted xattrs */
		r = recorded && (errno == ENODATA || errno == EOPNOTSUPP);
	if (r == 1)
		*ret_fd = TAKE_FD(fd);
	return r;
}

/* Empties the working directory @fd (what is in it is storaged's: root's
 * 0700, a user cannot change it) and removes it from @parent when @entry
 * still names it: a user who owns @parent may have renamed it meanwhile,
 * and what has their name then is not removed. */
int area_sync_dir_remove(int parent, const char *entry, int fd, dev_t dev)
{
	struct stat a, b;
	struct dirent *de;
	DIR *d = fdopendir(dup(fd));
	int r = 0;

	if (!d)
		return -errno;
	rewinddir(d); /* the offset is shared with @fd, which the caller may have read */
	while (r == 0 && (de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			r = area_rm_rf_at(dirfd(d), de->d_name, dev);
	closedir(d);
	if (r == 0 && fstat(fd, &a) == 0 && fstatat(parent, entry, &b, AT_SYMLINK_NOFOLLOW) == 0 &&
	    a.st_dev == b.st_dev && a.st_ino == b.st_ino &&
	    unlinkat(parent, entry, AT_REMOVEDIR) < 0 && errno != ENOENT)
		r = -errno;
	return r;
}

/*
 * A working directory whose mark never reached the disk: the power went
 * off between mkdirat() and fsetxattr() (sync_dir_create()), which a
 * journal may commit apart, the record naming it being in /run.  Nothing
 * is written into it before the mark and a journal replays its commits in
 * order, so it is empty: root's, 0700, unmarked and empty is removed
 * (rmdir(2) refuses one that is not).  At worst that is an empty directory
 * a user made and gave to root: nothing lost.  Returns: 0; negative errno.
 */
static int remove_unmarked_empty(int dirfd, const char *entry)
{
	_cleanup_close_ int fd = openat(dirfd, entry, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;

	if (fd < 0 || fstat(fd, &st) < 0 || st.st_uid != 0 || (st.st_mode & 07777) != 0700 ||
	    fgetxattr(fd, SYNC_XATTR, NULL, 0) >= 0 || errno != ENODATA)
		return 0;
	if (unlinkat(dirfd, entry, AT_REMOVEDIR) < 0 && errno != ENOTEMPTY && errno != EEXIST &&
	    errno != ENOENT)
		return -errno;
	return 0;
}

static int recover_one(int dirfd, const char *entry, const char *area, bool recorded, dev_t dev)
{
	_cleanup_close_ int fd = -EBADF;
	int r = area_sync_dir_check(dirfd, entry, area, recorded, &fd);

	if (r == 0)
		return remove_unmarked_empty(dirfd, entry);
	return r < 0 ? r : area_sync_dir_remove(dirfd, entry, fd, dev);
}

int area_recover_sync(int dirfd, dev_t dev, const char *area, const char *recorded)
{
	int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC), r = 0;
	struct dirent *de;
	DIR *d;

	if (fd < 0)
		return -errno;
	if (recorded && area_sync_is_dir_name(recorded))
		r = recover_one(fd, recorded, area, true, dev);
	d = r == 0 ? fdopendir(dup(fd)) : NULL;
	if (r == 0 && !d)
		r = -errno;
	/* the name only picks what to look at: a user's entry of that form
	 * fails area_sync_dir_check() and stays */
	while (r == 0 && (de = readdir(d)))
		if (area_sync_is_dir_name(de->d_name))
			r = recover_one(fd, de->d_name, area, false, dev);
	if (d)
		closedir(d);
	close(fd);
	return r;
}

/* Creates the working directory below @lowerfd under a new random name,
 * recorded in @st (through the locked record @recfd) before it exists and
 * marked with SYNC_XATTR once it does: however the sync ends, the next one
 * knows it as its own.  Nothing of the user's is reused (EEXIST: another
 * name).  Returns: the open directory, or negative errno. */
int area_sync_dir_create(int lowerfd, int recfd, struct state_area *st, char *name, int hidefd)
{
	struct stat s;
	_cleanup_close_ int fd = -EBADF;
	int r;

	for (int i = 0;; i++) {
		if ((r = sync_random_name(name)) < 0)
			return r;
		free(st->sync_dir);
		if (!(st->sync_dir = strdup(name)))
			return -ENOMEM;
		if ((r = state_area_write_fd(recfd, st)) < 0)
			return r;
		if (hidefd >= 0 && mknodat(hidefd, name, S_IFCHR | 0600, makedev(0, 0)) < 0 && errno != EEXIST)
			return -errno;
		if (mkdirat(lowerfd, name, 0700) == 0)
			break;
		if (errno != EEXIST || i == 8)
			return -errno;
	}
	fd = openat(lowerfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* still root's: not swapped for a user's directory since mkdirat() */
	r = fstat(fd, &s) < 0	   ? -errno
	    : s.st_uid != 0	   ? -EEXIST
	    : fchmod(fd, 0700) < 0 ? -errno
				   : 0;
	if (r < 0)
		return r;
	/* without trusted xattrs (EOPNOTSUPP) the record alone names it */
	fsetxattr(fd, SYNC_XATTR, st->name, strlen(st->name), 0);
	return TAKE_FD(fd);
}

/* Keeps why the sync failed (@cause, while @step) in the record @recfd,
 * @st, for `status`; a sync that did not fail (@cause NULL) clears it.
 * Best effort: the sync's own messages say it too. */
static void sync_failed_record(int recfd, struct state_area *st, const char *step, const char *cause)
{
	char *why = NULL;

	if (cause && asprintf(&why, "while %s: %s", step, cause) < 0)
		return;
	if (!why && !st->sync_failed)
		return;
	free(st->sync_failed);
	st->sync_failed = why;
	state_area_write_fd(recfd, st);
}

/* the name of a stop's rescue directory below the directory's
 * COPY_RESCUE_DIR (copy.h) that is not there yet: the area's name (cut
 * at a character to leave room) and the time, UTC; "" when none is free */
static void rescue_name(int lowerfd, const char *area, char name[NAME_MAX + 1])
{
	const unsigned char *a = (const unsigned char *)area;
	char ts[32], path[NAME_MAX + 32];
	struct tm tm;
	time_t now = time(NULL);
	size_t n = 0;
	struct stat s;

	while (a[n] && utf8_char_len(a + n) && n + utf8_char_len(a + n) <= 200)
		n += utf8_char_len(a + n);
	strftime(ts, sizeof(ts), "%Y%m%dT%H%M%SZ", gmtime_r(&now, &tm));
	for (int i = 1; i < 100; i++) {
		snprintf(name, NAME_MAX + 1, i > 1 ? "%.*s-%s-%d" : "%.*s-%s", (int)n, area, ts, i);
		snprintf(path, sizeof(path), "%s/%s", COPY_RESCUE_DIR, name);
		if (fstatat(lowerfd, path, &s, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT)
			return;
	}
	name[0] = '\0';
}

/* The nearest existing directory above @path on the filesystem @dev,
 * opened, its path into @above.  Returns: the fd; -ENOENT when none is
 * left; -EXDEV when the nearest one is on another filesystem (what the
 * directory was on is not reachable by path); negative errno. */
static int nearest_above(const char *path, dev_t dev, char *above, size_t len)
{
	struct stat s;
	char *slash;
	int fd;

	snprintf(above, len, "%s", path);
	while ((slash = strrchr(above, '/'))) {
		slash[slash == above] = '\0'; /* "/x": "/" */
		fd = area_open_nofollow(above, O_RDONLY | O_DIRECTORY);
		if (fd == -ENOENT || fd == -ENOTDIR || fd == -ELOOP) {
			if (slash == above)
				break;
			continue;
		}
		if (fd < 0)
			return fd;
		if (fstat(fd, &s) == 0 && s.st_dev == dev)
			return fd;
		close(fd);
		return -EXDEV;
	}
	return -ENOENT;
}

/* What a rescue copies (area_rescue_whole()), opened; *@upper: an
 * overlay's upper layer, not its merged view (gone with the bind over
 * the directory: rmdir(2) detaches what is mounted on it) */
static int rescue_source(const struct area_dirs *d, const struct state_area *st,
			 const struct area_mounts *f, bool *upper)
{
	_cleanup_free_ char *up = NULL;
	uint64_t id = 0;
	int fd;

	*upper = false;
	if (!st->overlay)
		return area_open_nofollow(d->area, O_RDONLY | O_DIRECTORY);
	fd = f->cover_present && f->moved_to ? area_open_nofollow(f->moved_to, O_RDONLY | O_DIRECTORY)
					     : -ENOENT;
	if (fd >= 0 && mountfd_id(&mountfd_kernel_ops, fd, &id, NULL) == 0 && id == st->cover_id)
		return fd;
	safe_close(fd);
	*upper = true;
	if (asprintf(&up, "%s/upper", d->area) < 0)
		return -ENOMEM;
	return area_open_nofollow(up, O_RDONLY | O_DIRECTORY);
}

/* Copies @srcfd into a new rescue directory below @abovefd (@above) for
 * the directory @dir (its owner's), on the disk once this returns; its
 * path into @kept.  A failed copy is removed: the area still has it all.
 * Returns: 0 or negative errno, *@step saying what failed. */
static int rescue_copy(int srcfd, int abovefd, const char *above, const struct stat *dir,
		       const struct state_area *st, char *kept, size_t len, const char **step,
		       struct copy_result *c)
{
	static const char *const marks[] = { COPY_SYNCED_XATTR, COPY_LOWER_SYNCED_XATTR,
					     COPY_LOWER_ROOT_XATTR };
	_cleanup_close_ int topfd = -EBADF, dstfd = -EBADF;
	char name[NAME_MAX + 1];
	int r;

	*step = "making its directory";
	if ((topfd = r = mkdir_owned_at(abovefd, COPY_RESCUE_DIR, dir, true)) < 0)
		return r;
	rescue_name(abovefd, st->name, name);
	if (!name[0])
		return -EEXIST;
	snprintf(kept, len, "%s%s%s/%s", above, strcmp(above, "/") ? "/" : "", COPY_RESCUE_DIR, name);
	if ((dstfd = r = mkdir_owned_at(topfd, name, dir, false)) < 0)
		return r;
	*step = "copying";
	r = copy_spawn_run(srcfd, dstfd, st->name, kept, st->name, c);
	/* storaged's marks on the root: a user's copy, no area's */
	for (size_t i = 0; r == 0 && i < sizeof(marks) / sizeof(marks[0]); i++)
		fremovexattr(dstfd, marks[i]);
	if (r == 0 && syncfs(dstfd) < 0)
		r = -errno;
	if (r < 0)
		area_rm_rf_at(topfd, name, dir->st_dev);
	return r;
}

int area_rescue_whole(const struct area_dirs *d, const struct state_area *st,
		      const struct area_mounts *f, int gone, struct diag_list *m)
{
	char why[PATH_MAX + 128], above[PATH_MAX], kept[PATH_MAX + NAME_MAX + 32] = "";
	_cleanup_close_ int lowerfd = -EBADF, srcfd = -EBADF, abovefd = -EBADF;
	struct copy_result c = { 0 };
	const char *step = "opening the area";
	struct stat dir;
	bool upper = false;
	int r;

	area_dir_describe(f, st->path, gone, why, sizeof(why));
	lowerfd = open(d->lower, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (lowerfd < 0 || fstat(lowerfd, &dir) < 0) {
		r = -errno;
		goto out;
	}
	if ((srcfd = r = rescue_source(d, st, f, &upper)) < 0)
		goto out;
	step = "finding the nearest directory above it on its filesystem";
	if ((abovefd = r = nearest_above(st->path, dir.st_dev, above, sizeof(above))) < 0)
		goto out;
	r = rescue_copy(srcfd, abovefd, above, &dir, st, kept, sizeof(kept), &step, &c);
out:
	if (r < 0)
		diag_error(m, NULL, 0,
			   "area '%s': %s: not synced back, and keeping the area's whole tree%s%s%s failed while %s: %s; the area is left as it is, its content in '%s': copy what you need from there, or fix this and run `%s stop` again",
			   st->name, why, kept[0] ? " in '" : "", kept, kept[0] ? "'" : "", step,
			   c.msg[0] ? c.msg : strerror(-r), d->area, area_self(d));
	else
		diag_error(m, NULL, 0,
			   "area '%s': %s: not synced back; the area's whole tree is kept in '%s'%s: take what you need from there",
			   st->name, why, kept,
			   upper ? " as its overlay's upper layer holds it (a character device 0,0 marks a name it deleted)"
				 : "");
	return r;
}

/* Adds what a committed sync kept on both sides (@msg) to the record
 * @recfd, @st: one sync reports such entries once, and the baseline moves
 * past them; `status` and `stop` go on saying them until the area is torn
 * down.  Best effort, as sync_failed_record(); at most about 4 KiB kept. */
static void kept_both_record(int recfd, struct state_area *st, const char *msg)
{
	char *all = NULL;

	if (st->sync_kept_both && strstr(st->sync_kept_both, msg))
		return;
	if (st->sync_kept_both && strlen(st->sync_kept_both) > 4096)
		return; /* the first ones stand; the sync said the others */
	if (asprintf(&all, "%s%s%s", st->sync_kept_both ?: "", st->sync_kept_both ? "; " : "", msg) < 0)
		return;
	free(st->sync_kept_both);
	st->sync_kept_both = all;
	state_area_write_fd(recfd, st);
}

/*
 * Sync back, inside the covered directory's own filesystem, reached
 * through the private bind areas/<name>/lower:
 *  0. recover: delete the working directories an interrupted run left
 *     (always safe, see 2.): the one the record names, and each
 *     .storaged-sync.<32 hex> that is root's, 0700 and marked for this area
 *     (area_sync_dir_check(): never a user's entry), or root's, 0700,
 *     unmarked and empty (remove_unmarked_empty());
 *  1. record a new random name W, create <lower>/W (0700, root's; nothing
 *     of the user's is reused) and mark it (SYNC_XATTR);
 *  2. storaged-copy brings lower up to date (copy_sync_fd(): its commit
 *     and crash argument are in copy_sync.c): a crash anywhere leaves every
 *     entry of lower complete, old or new, and W only what is not live;
 *  3. delete W, not synced: a lost deletion is redone by step 0.
 * A failed sync deletes W too: it holds only what is not live (new
 * versions not yet renamed in, which the area still has; old versions
 * replaced) and would take the filesystem's room until the next sync.
 * Only a killed sync leaves W, to the next step 0.  W is bounded by what
 * the owners could write themselves (copy_budget.h).  Success is reported
 * only after the commit point.  @recfd, @st: the area's record, locked;
 * its sync_dir is rewritten in place.
 */
int area_sync_locked(const struct area_dirs *d, int recfd, struct state_area *st,
		     size_t *ret_changes, bool at_stop, struct diag_list *m)
{
	char rescue[NAME_MAX + 1] = "";
	_cleanup_close_ int lowerfd = -EBADF, areafd = -EBADF, workfd = -EBADF;
	int r;
	struct copy_result c = { 0 };
	char work[SYNC_DIR_NAME_MAX] = "";
	const char *step = "opening", *name = st->name;
	char cause[sizeof(c.msg) + 80];
	struct stat lst;
	int kept;

	/* a sync while mounted: stop applies an overlay's after unmounting it */
	if (st->overlay)
		return area_overlay_sync(d, recfd, st, true, ret_changes, m);
	lowerfd = open(d->lower, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	areafd = open(d->area, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (lowerfd < 0 || areafd < 0 || fstat(lowerfd, &lst) < 0) {
		r = -errno;
		goto out;
	}
	step = "removing an interrupted sync";
	if ((r = area_recover_sync(lowerfd, lst.st_dev, name, st->sync_dir)) < 0)
		goto out;
	step = "creating its working directory";
	if ((workfd = r = area_sync_dir_create(lowerfd, recfd, st, work, -1)) < 0)
		goto out;
	step = "copying";
	if (at_stop)
		rescue_name(lowerfd, name, rescue);
	r = copy_spawn_sync(areafd, lowerfd, workfd, d->area, d->lower, name,
			    rescue[0] ? rescue : NULL, &c);
	if (r < 0 && r != -COPY_SYNC_KEPT_BOTH && r != -COPY_SYNC_RESCUED)
		goto out;
	if (ret_changes)
		*ret_changes = c.n_put + c.n_deleted + c.n_kept;
	/* committed, what it did without an attribute: a warning */
	if (r == 0 && c.msg[0])
		diag_warning(m, NULL, 0, "area '%s': synced back into '%s', but %s", name, st->path, c.msg);
	/* committed, entries kept twice or kept apart: that alone is to be said */
	if (r == -COPY_SYNC_KEPT_BOTH)
		kept_both_record(recfd, st, c.msg);
	if ((kept = r) < 0)
		diag_error(m, NULL, 0,
			   "area '%s': synced back into '%s', but %s: compare the two and keep what you need",
			   name, st->path, c.msg);
	if (r == -COPY_SYNC_RESCUED) {
		diag_error(m, NULL, 0,
			   "area '%s': the area's version of each entry not synced is kept in '%s/%s/%s' (its file 'index' names each)",
			   name, st->path, COPY_RESCUE_DIR, rescue);
		kept = -COPY_SYNC_KEPT_BOTH; /* torn down as with entries kept twice */
	}
	step = "removing its working directory";
	if ((r = area_sync_dir_remove(lowerfd, work, workfd, lst.st_dev)) == 0)
		r = kept;
	workfd = safe_close(workfd);
out:
	/* what a failed sync wrote does not outlive it (see above) */
	if (r < 0 && workfd >= 0)
		area_sync_dir_remove(lowerfd, work, workfd, lst.st_dev);
	if (r < 0 && r != -COPY_SYNC_KEPT_BOTH) {
		snprintf(cause, sizeof(cause), "%s%s", c.msg[0] ? c.msg : strerror(-r),
			 (r == -ENOSPC || r == -EDQUOT) && !strstr(c.msg, COPY_NO_ROOM)
				 ? " (the directory's filesystem needs room for the changed files)"
				 : "");
		diag_error(m, NULL, 0,
			   "area '%s': sync back into '%s' failed while %s: %s; the directory holds complete old or new versions of every file and the area, with every file not synced, is left in place over it: fix this and run `%s sync %s`",
			   name, st->path, step, cause, area_self(d), name);
	}
	sync_failed_record(recfd, st, step, r < 0 && r != -COPY_SYNC_KEPT_BOTH ? cause : NULL);
	return r;
}

void area_note_synced(const struct state_area *st, bool both, struct diag_list *m)
{
	diag_info(m, NULL, 0, "area '%s': synced back into '%s'%s", st->name, st->path,
		  both ? " (with entries changed on both sides or kept apart: see above)" : "");
}

int area_sync(const char *state_dir, const char *self, const char *name, struct diag_list *msgs)
{
	struct area_dirs d;
	struct state_area st;
	size_t changes = 0;
	int fd, r;

	if ((r = area_dirs_init(&d, state_dir, name, self)) < 0) {
		diag_error(msgs, NULL, 0, "area '%s': invalid name", name);
		return r;
	}
	fd = area_record_open_locked(&d, &st);
	if (fd < 0) {
		r = fd;
		if (r == -ENOENT)
			diag_error(msgs, NULL, 0, "area '%s' is not active: there is nothing to sync back (`%s start` sets it up)",
				   name, area_self(&d));
		else
			diag_error(msgs, NULL, 0, "area '%s': cannot read its record %s: %s", name, d.state,
				   strerror(-r));
		goto out;
	}
	/* by the mounts' IDs: unmounted, moved or covered by someone else */
	if ((r = area_check_syncable(&d, &st, msgs)) == 0)
		r = area_sync_locked(&d, fd, &st, &changes, false, msgs);
	/* quiet on success: a sync that changed nothing says nothing (the
	 * resident's periodic one, storaged-sync.service's) */
	if (r == 0 && changes > 0)
		area_note_synced(&st, false, msgs);
	state_area_done(&st);
	close(fd);
out:
	area_dirs_done(&d);
	return r;
}
