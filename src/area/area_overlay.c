/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * seed = overlay: the directory is not copied; it stays where it is as
 * overlayfs's lower layer (the private bind areas/<name>/lower), the upper
 * and work directories live in the area (areas/<name>/area/{upper,work}),
 * and the overlay is what is bound over the directory.  Start costs the
 * same for 10 files or 10 million; the area holds only what was written.
 *
 * The overlay is mounted with redirect_dir=off (a directory that was in
 * the lower layer is renamed by copying it up whole, as a new opaque or
 * pure-upper directory, and a whiteout where it was), metacopy=off (a
 * chmod copies the whole file up), index=off and xino=off: the upper layer
 * then says everything in plain entries, which is what the sync back
 * reads (Linux Documentation/filesystems/overlayfs.rst, 6.1-6.18).
 *
 * Sync back applies the upper layer to the directory (area_overlay_sync()).
 * overlayfs.rst calls changes to a layer of a mounted overlay "undefined";
 * what goes wrong in practice is overlayfs's cached view of the lower
 * layer disagreeing with it.  A sync while the overlay is mounted changes
 * only lower names the upper layer hides already (a file or whiteout of
 * the same name, or a directory that is marked opaque first), so that
 * what the overlay shows is the same whether it looked at the lower layer
 * before or after: a directory the upper layer has and the lower one has
 * not is marked opaque (trusted.overlay.opaque=y) in the upper layer
 * before it is created in the lower one.  The upper layer is never
 * cleared while mounted: a sync applies again what changed since the last
 * one that succeeded (by ctime, and by content for a file mapped shared),
 * and stop, with the overlay unmounted, applies all of it that differs
 * from the directory, by content: ctimes need not tell (a clock stepped
 * back and forth between two syncs), and a stop after a sync that left
 * nothing to do writes nothing.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "area_internal.h"
#include "mount/mountfd.h"
#include "mount/umount.h"
#include "shared/fs_time.h"
#include "shared/mapped.h"
#include "shared/util.h"

#define OVL_XATTR_PREFIX "trusted.overlay."
#define OVL_OPAQUE_XATTR "trusted.overlay.opaque"
/* the time from which the next sync applies entries changed, written in
 * the area once a sync is on the disk: "SECONDS NANOSECONDS" */
#define OVL_STAMP "synced"
/* an empty file in the area whose ctime a sync sets, to read the time as
 * the area's filesystem stamps it (stamp_take()) */
#define OVL_CLOCK "clock"
#define OVL_BUF_SIZE (128 * 1024)
/* the upper files with several links whose first copy a sync remembers
 * (a descriptor each): past it, the others are copied as files apart */
#define OVL_LINKS_MAX 256

/* where a sync put the copy of an upper file with several links: its
 * other names in the directory are links to it */
struct ovl_link {
	dev_t dev;
	ino_t ino; /* the upper inode */
	int dirfd; /* the lower directory */
	char *name;
};

/* One application of the upper layer onto the directory. */
struct ovl_apply {
	int workfd; /* the sync's working directory in the lower layer */
	dev_t dev; /* the lower layer's filesystem */
	struct timespec since; /* entries changed before: applied already */
	struct timespec now; /* mounted: this sync's stamp (stamp_take()) */
	bool mounted; /* the overlay is mounted: mark new directories opaque */
	bool verify; /* compare every entry by content, whatever its ctime (stop) */
	unsigned long seq; /* names in workfd */
	size_t changes;
	char *buf;
	char rel[PATH_MAX]; /* the entry at work, for the message */
	const char *step; /* what failed on it */
	struct ovl_link *links;
	size_t nlinks;
	/* mounted: the upper files mapped shared at this sync or the last
	 * one, and those of now alone (the next sync's) */
	struct mapped_set mapped, mapped_now;
	/* mounted: the overlay's root, and the overlay inodes mapped shared
	 * now (from Linux 6.8 /proc/PID/maps names a mapping of an overlay
	 * file by the overlay's own inode, fs/proc/task_mmu.c
	 * file_user_inode(); 6.1 by the upper layer's), those of them mapped
	 * writable, and those an upper file's stat matched */
	int ovlfd;
	struct mapped_set ovl_mapped, ovl_written, ovl_matched;
};

static const struct ovl_link *link_find(const struct ovl_apply *c, const struct stat *st)
{
	for (size_t i = 0; S_ISREG(st->st_mode) && st->st_nlink > 1 && i < c->nlinks; i++)
		if (c->links[i].ino == st->st_ino && c->links[i].dev == st->st_dev)
			return &c->links[i];
	return NULL;
}

/* remembers @name of @ldir as the copy of the upper file @st; without
 * room or memory its other names are copied apart, as before */
static void link_note(struct ovl_apply *c, const struct stat *st, int ldir, const char *name)
{
	struct ovl_link *l;

	if (!S_ISREG(st->st_mode) || st->st_nlink < 2 || c->nlinks >= OVL_LINKS_MAX)
		return;
	if (!c->links && !(c->links = calloc(OVL_LINKS_MAX, sizeof(*c->links))))
		return;
	l = &c->links[c->nlinks];
	*l = (struct ovl_link){ .dev = st->st_dev, .ino = st->st_ino, .name = strdup(name) };
	l->dirfd = fcntl(ldir, F_DUPFD_CLOEXEC, 3);
	if (l->name && l->dirfd >= 0)
		c->nlinks++;
	else {
		free(l->name);
		safe_close(l->dirfd);
	}
}

static void links_free(struct ovl_apply *c)
{
	for (size_t i = 0; i < c->nlinks; i++) {
		safe_close(c->links[i].dirfd);
		free(c->links[i].name);
	}
	free(c->links);
}

static bool is_whiteout(const struct stat *st)
{
	return S_ISCHR(st->st_mode) && st->st_rdev == makedev(0, 0);
}

static bool changed_since(const struct stat *st, const struct ovl_apply *c)
{
	return st->st_ctim.tv_sec > c->since.tv_sec ||
	       (st->st_ctim.tv_sec == c->since.tv_sec && st->st_ctim.tv_nsec >= c->since.tv_nsec);
}

static bool is_opaque(int dirfd)
{
	char v[4];
	ssize_t n = fgetxattr(dirfd, OVL_OPAQUE_XATTR, v, sizeof(v));

	return n == 1 && v[0] == 'y';
}

/* "/proc/self/fd/FD/NAME": the xattr calls have no *at() form */
static void proc_path(char *buf, size_t len, int dirfd, const char *name)
{
	snprintf(buf, len, "/proc/self/fd/%d/%s", dirfd, name);
}

/* Copies the xattrs of @src (a path, links not followed) to @dst but
 * overlayfs's own; removes from @dst those @src has not (a directory that
 * existed).  Returns: 0 or negative errno. */
static int copy_xattrs(const char *src, const char *dst)
{
	char names[8192], dnames[8192], val[65536];
	ssize_t n = llistxattr(src, names, sizeof(names)), dn, v;

	if (n < 0)
		return errno == ENOTSUP ? 0 : -errno;
	dn = llistxattr(dst, dnames, sizeof(dnames));
	for (ssize_t i = 0; dn > 0 && i < dn; i += (ssize_t)strlen(dnames + i) + 1)
		if (strncmp(dnames + i, OVL_XATTR_PREFIX, strlen(OVL_XATTR_PREFIX)) != 0 &&
		    lgetxattr(src, dnames + i, NULL, 0) < 0 && errno == ENODATA &&
		    lremovexattr(dst, dnames + i) < 0 && errno != ENODATA)
			return -errno;
	for (ssize_t i = 0; i < n; i += (ssize_t)strlen(names + i) + 1) {
		if (strncmp(names + i, OVL_XATTR_PREFIX, strlen(OVL_XATTR_PREFIX)) == 0)
			continue;
		v = lgetxattr(src, names + i, val, sizeof(val));
		if (v < 0 && errno == ENODATA)
			continue;
		if (v < 0 || lsetxattr(dst, names + i, val, (size_t)v, 0) < 0)
			return errno == ENOTSUP ? 0 : -errno;
	}
	return 0;
}

static size_t count_own_xattrs(const char *names, ssize_t n)
{
	size_t k = 0;

	for (ssize_t i = 0; i < n; i += (ssize_t)strlen(names + i) + 1)
		k += strncmp(names + i, OVL_XATTR_PREFIX, strlen(OVL_XATTR_PREFIX)) != 0;
	return k;
}

/* Whether @dst has exactly the xattrs of @src (paths, links not
 * followed), overlayfs's own aside; false where it cannot tell (a list or
 * value too long here): copying again is never wrong. */
static bool same_xattrs(const char *src, const char *dst)
{
	char names[8192], dnames[8192], v[2][4096];
	ssize_t n = llistxattr(src, names, sizeof(names)), dn = llistxattr(dst, dnames, sizeof(dnames)), a, b;

	if (n < 0 || dn < 0)
		return n < 0 && dn < 0 && errno == ENOTSUP;
	if (count_own_xattrs(names, n) != count_own_xattrs(dnames, dn))
		return false;
	for (ssize_t i = 0; i < n; i += (ssize_t)strlen(names + i) + 1) {
		if (strncmp(names + i, OVL_XATTR_PREFIX, strlen(OVL_XATTR_PREFIX)) == 0)
			continue;
		a = lgetxattr(src, names + i, v[0], sizeof(v[0]));
		b = lgetxattr(dst, names + i, v[1], sizeof(v[1]));
		if (a < 0 || a != b || memcmp(v[0], v[1], (size_t)a) != 0)
			return false;
	}
	return true;
}

/* Whether the lower entry @ls has what copy_meta() would give it of the
 * upper one @us: owner, mode, mtime, xattrs.  A directory's ctime also
 * moves when the sync itself marks it opaque (apply_subdir()), after the
 * stamp: the next sync finds nothing to do there. */
static bool same_meta(int udir, int ldir, const char *name, const struct stat *us, const struct stat *ls)
{
	char s[64 + NAME_MAX], d[64 + NAME_MAX];

	if (us->st_uid != ls->st_uid || us->st_gid != ls->st_gid || us->st_mode != ls->st_mode ||
	    us->st_mtim.tv_sec != ls->st_mtim.tv_sec || us->st_mtim.tv_nsec != ls->st_mtim.tv_nsec)
		return false;
	proc_path(s, sizeof(s), udir, name);
	proc_path(d, sizeof(d), ldir, name);
	return same_xattrs(s, d);
}

/* Owner, xattrs, mode (after chown, which drops set-user-ID bits and
 * security.capability), times of @st onto @name in @dirfd. */
static int copy_meta(int udir, const char *uname, int ldir, const char *lname, const struct stat *st)
{
	char s[64 + NAME_MAX], d[64 + NAME_MAX];
	struct timespec ts[2] = { st->st_atim, st->st_mtim };
	int r;

	proc_path(s, sizeof(s), udir, uname);
	proc_path(d, sizeof(d), ldir, lname);
	if (fchownat(ldir, lname, st->st_uid, st->st_gid, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	if ((r = copy_xattrs(s, d)) < 0)
		return r;
	if (!S_ISLNK(st->st_mode) && fchmodat(ldir, lname, st->st_mode & 07777, 0) < 0)
		return -errno;
	if (utimensat(ldir, lname, ts, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	return 0;
}

static int copy_data(int in, int out, char *buf)
{
	ssize_t n, w;

	while ((n = read(in, buf, OVL_BUF_SIZE)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		for (ssize_t off = 0; off < n; off += w) {
			w = write(out, buf + off, (size_t)(n - off));
			if (w < 0 && errno != EINTR)
				return -errno;
			w = w < 0 ? 0 : w;
		}
	}
	return 0; /* on the disk with its metadata: make_copy() */
}

/* The upper entry @name (a file, link, device node or fifo, @st) copied
 * complete, with its metadata and on the disk, as @tmp in the working
 * directory. */
static int make_copy(struct ovl_apply *c, int udir, const char *name, const struct stat *st, const char *tmp)
{
	char target[PATH_MAX];
	_cleanup_close_ int in = -EBADF, out = -EBADF;
	ssize_t n;
	int r = 0;

	if (S_ISREG(st->st_mode)) {
		in = openat(udir, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		out = openat(c->workfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		r = in < 0 || out < 0 ? -errno : copy_data(in, out, c->buf);
	} else if (S_ISLNK(st->st_mode)) {
		n = readlinkat(udir, name, target, sizeof(target) - 1);
		if (n >= 0)
			target[n] = '\0';
		r = n < 0 || symlinkat(target, c->workfd, tmp) < 0 ? -errno : 0;
	} else if (mknodat(c->workfd, tmp, st->st_mode & S_IFMT, st->st_rdev) < 0) {
		r = -errno;
	}
	if (r == 0)
		r = copy_meta(udir, name, c->workfd, tmp, st);
	/* its data and metadata on the disk before the rename makes it the
	 * directory's (one fsync(2) covers both) */
	if (r == 0 && out >= 0 && fsync(out) < 0)
		r = -errno;
	return r;
}

/* Moves the lower entry @name out of the way into the working directory
 * (one rename: it is there or gone, never half deleted); removed with it. */
static int move_out(struct ovl_apply *c, int ldir, const char *name)
{
	char tmp[32];

	snprintf(tmp, sizeof(tmp), "d%lu", c->seq++);
	c->step = "deleting";
	if (renameat(ldir, name, c->workfd, tmp) < 0)
		return errno == ENOENT ? 0 : -errno;
	c->changes++;
	return 0;
}

/* whether the lower entry @ls is what the upper one @us would be copied
 * to: the same type, size and mtime */
static bool same_node(const struct stat *us, const struct stat *ls)
{
	return (us->st_mode & S_IFMT) == (ls->st_mode & S_IFMT) && us->st_size == ls->st_size &&
	       us->st_mtim.tv_sec == ls->st_mtim.tv_sec && us->st_mtim.tv_nsec == ls->st_mtim.tv_nsec;
}

/* Whether the lower entry @ls is what the upper one @us would be copied
 * to (same_node(), same_meta()), with the same data, link target or
 * device number.  Reads both files. */
static bool same_entry(int udir, int ldir, const char *name, const struct stat *us, const struct stat *ls)
{
	char a[PATH_MAX], b[PATH_MAX];
	_cleanup_close_ int u = -EBADF, l = -EBADF;
	ssize_t n, k;

	if (!same_node(us, ls) || !same_meta(udir, ldir, name, us, ls))
		return false;
	if (S_ISCHR(us->st_mode) || S_ISBLK(us->st_mode))
		return us->st_rdev == ls->st_rdev;
	if (S_ISLNK(us->st_mode)) {
		n = readlinkat(udir, name, a, sizeof(a));
		k = readlinkat(ldir, name, b, sizeof(b));
		return n >= 0 && n == k && memcmp(a, b, (size_t)n) == 0;
	}
	if (!S_ISREG(us->st_mode))
		return true; /* a fifo: no content */
	u = openat(udir, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	l = openat(ldir, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	return u >= 0 && l >= 0 && same_file_data(u, l, us->st_size) == 1;
}

/* Whether the upper file @us (at c->rel) is mapped shared through the
 * overlay now, by the inode the overlay gives it; noted for the next
 * sync by its upper inode. */
static bool ovl_mapped_now(struct ovl_apply *c, const struct stat *us)
{
	struct stat os;

	if (!c->ovl_mapped.n || fstatat(c->ovlfd, c->rel, &os, AT_SYMLINK_NOFOLLOW) < 0 ||
	    !mapped_has(&c->ovl_mapped, os.st_ino))
		return false;
	mapped_add(&c->mapped_now, us->st_ino); /* without memory: compared now only */
	mapped_add(&c->ovl_matched, os.st_ino); /* without memory: all compared (apply_unmatched()) */
	return true;
}

/* Whether the upper entry @us is a file mapped shared at this sync or the
 * last one (mapped.h: its times cannot tell).  Asked of every one while
 * mounted, changed or not: the next sync must know it too. */
static bool is_mapped(struct ovl_apply *c, const struct stat *us)
{
	bool now;

	if (!c->mounted || !S_ISREG(us->st_mode))
		return false;
	now = ovl_mapped_now(c, us);
	return now || mapped_has(&c->mapped, us->st_ino);
}

/* Whether the upper file @us holds other data than the lower entry @ls.
 * One that cannot be read to compare is copied. */
static bool data_differs(int udir, int ldir, const char *name, const struct stat *us, const struct stat *ls)
{
	_cleanup_close_ int u = -EBADF, l = -EBADF;

	if (!S_ISREG(ls->st_mode) || us->st_size != ls->st_size)
		return true;
	u = openat(udir, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	l = openat(ldir, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	return u < 0 || l < 0 || same_file_data(u, l, us->st_size) != 1;
}

/* A file, link, device node or fifo of the upper layer into the lower one:
 * copied into the working directory, then renamed over the lower entry in
 * one step (exchanged with a directory of that name, which stays in the
 * working directory).  Its ctime says whether it changed, not where it
 * was: a file keeps its ctime when a directory above it is renamed.  So
 * one the lower directory lacks is copied whatever its ctime, and in a
 * directory whose lower side is replaced whole (@whole: opaque, made or
 * renamed since the last sync) so is one that differs there. */
static int apply_node(struct ovl_apply *c, int udir, int ldir, const char *name, const struct stat *us,
		      const struct stat *ls, bool whole)
{
	const struct ovl_link *l;
	bool mapped = is_mapped(c, us);
	char tmp[32];
	int r;

	if (c->verify ? ls && same_entry(udir, ldir, name, us, ls)
		      : !changed_since(us, c) && ls && (!whole || same_node(us, ls)) &&
				!(mapped && data_differs(udir, ldir, name, us, ls)))
		return 0;
	snprintf(tmp, sizeof(tmp), "n%lu", c->seq++);
	c->step = "copying";
	/* another name of a file this sync copied: a link to that copy, as
	 * the area has it (the copy is on the disk already) */
	if ((l = link_find(c, us)) && linkat(l->dirfd, l->name, c->workfd, tmp, 0) < 0)
		return -errno;
	if (!l && (r = make_copy(c, udir, name, us, tmp)) < 0)
		return r;
	c->step = "renaming into place";
	if (ls && S_ISDIR(ls->st_mode))
		r = renameat2(c->workfd, tmp, ldir, name, RENAME_EXCHANGE);
	else
		r = renameat(c->workfd, tmp, ldir, name);
	if (r < 0)
		return -errno;
	if (!l)
		link_note(c, us, ldir, name);
	c->changes++;
	return 0;
}

static int apply_dir(struct ovl_apply *c, int udir, int ldir, bool root, bool whole);

/* A directory of the upper layer: made in the lower one when it is not
 * there (marked opaque first while mounted, see above), filled, then
 * given its owner, mode, xattrs and times.  @whole: its parent's lower
 * side is replaced whole (apply_node()), and so is its own. */
static int apply_subdir(struct ovl_apply *c, int udir, int ldir, const char *name, const struct stat *us,
			const struct stat *ls, bool whole)
{
	_cleanup_close_ int u = -EBADF, l = -EBADF;
	bool made = false, opaque, meta_same;
	size_t before;
	int r;

	c->step = "opening";
	u = openat(udir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (u < 0)
		return errno == ENOENT ? 0 : -errno;
	if (ls && !S_ISDIR(ls->st_mode) && (r = move_out(c, ldir, name)) < 0)
		return r;
	if (!ls || !S_ISDIR(ls->st_mode)) {
		c->step = "marking it opaque in the upper layer";
		if (c->mounted && !is_opaque(u) && fsetxattr(u, OVL_OPAQUE_XATTR, "y", 1, 0) < 0)
			return -errno;
		c->step = "creating";
		if (mkdirat(ldir, name, 0700) < 0)
			return -errno;
		made = true;
		c->changes++;
	}
	c->step = "opening";
	l = openat(ldir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (l < 0)
		return -errno;
	opaque = is_opaque(u);
	before = c->changes;
	/* before the renames into it change its times */
	meta_same = !made && (c->verify || changed_since(us, c)) && same_meta(udir, ldir, name, us, ls);
	if ((r = apply_dir(c, u, l, false, whole || (opaque && (made || c->verify || changed_since(us, c))))) < 0)
		return r;
	if (!made && c->changes == before && (meta_same || (!c->verify && !changed_since(us, c))))
		return 0;
	c->step = "setting owner, mode and times";
	c->changes += !made && !meta_same && (c->verify || changed_since(us, c));
	return copy_meta(udir, name, ldir, name, us);
}

static int apply_entry(struct ovl_apply *c, int udir, int ldir, const char *name, bool root, bool whole)
{
	struct stat us, ls;
	bool lower;

	if (fstatat(udir, name, &us, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : -errno; /* gone meanwhile: the next sync */
	/* a whiteout that hides the sync's own working directory (root only) */
	if (root && is_whiteout(&us) && area_sync_is_dir_name(name))
		return 0;
	lower = fstatat(ldir, name, &ls, AT_SYMLINK_NOFOLLOW) == 0;
	if (!lower && errno != ENOENT)
		return -errno;
	/* another filesystem below the directory (a btrfs subvolume): carried,
	 * never synced */
	if (lower && ls.st_dev != c->dev)
		return 0;
	if (is_whiteout(&us))
		return lower ? move_out(c, ldir, name) : 0;
	if (S_ISDIR(us.st_mode))
		return apply_subdir(c, udir, ldir, name, &us, lower ? &ls : NULL, whole);
	if (S_ISSOCK(us.st_mode))
		return 0; /* a socket is no data: the copying sync leaves it too */
	return apply_node(c, udir, ldir, name, &us, lower ? &ls : NULL, whole);
}

/* Deletes the entries of the lower directory @ldir that the opaque upper
 * one @udir has not. */
static int prune_lower(struct ovl_apply *c, int udir, int ldir, bool root)
{
	DIR *d = fdopendir(dup(ldir));
	struct dirent *de;
	struct stat s;
	int r = 0;

	if (!d)
		return -errno;
	while (r == 0 && (de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
		    (root && area_sync_is_dir_name(de->d_name)))
			continue;
		if (fstatat(udir, de->d_name, &s, AT_SYMLINK_NOFOLLOW) == 0 || errno != ENOENT)
			continue;
		if (fstatat(ldir, de->d_name, &s, AT_SYMLINK_NOFOLLOW) == 0 && s.st_dev == c->dev)
			r = move_out(c, ldir, de->d_name);
	}
	closedir(d);
	return r;
}

/* @whole: @udir is opaque and its entries changed since the last sync,
 * or is below such a one: what the lower one has beside them goes */
static int apply_dir(struct ovl_apply *c, int udir, int ldir, bool root, bool whole)
{
	size_t len = strlen(c->rel);
	DIR *d = fdopendir(dup(udir));
	struct dirent *de;
	int r = 0;

	if (!d)
		return -errno;
	while (r == 0 && (de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		snprintf(c->rel + len, sizeof(c->rel) - len, "%s%s", len ? "/" : "", de->d_name);
		r = apply_entry(c, dirfd(d), ldir, de->d_name, root, whole);
		if (r == 0)
			c->rel[len] = '\0';
	}
	closedir(d);
	if (r == 0 && whole)
		r = prune_lower(c, udir, ldir, root);
	return r;
}

/* A writable shared mapping through the overlay that no upper file's
 * overlay inode matched: overlayfs numbers an inode by the lower file it
 * was copied up from, and its stat of a file with another name (linked
 * under a new one in the area, or a hard link in the directory) reports
 * the upper file's inode (fs/overlayfs/inode.c, ovl_getattr(),
 * 6.8-6.18).  Opened for writing, the file was copied up: it is one of
 * the upper layer's, but which one nothing here tells.  So every upper
 * file is compared by content, now (applying again only what changed
 * since this sync began) and at the next sync, whose own writes need not
 * move a time either.  A read-only mapping writes nothing: a reader's
 * mmap(2) of a file never copied up matches nothing and costs nothing. */
static int apply_unmatched(struct ovl_apply *c, int upperfd, int lowerfd)
{
	mapped_sort(&c->ovl_matched);
	if (mapped_within(&c->ovl_written, &c->ovl_matched))
		return 0;
	c->mapped_now.all = true;
	if (c->mapped.all)
		return 0; /* the last sync saw one too: compared so already */
	c->mapped.all = true;
	c->since = c->now;
	return apply_dir(c, upperfd, lowerfd, true, false);
}

/* ---------------------------------------------------------------- the stamp */

static void stamp_read(int areafd, struct timespec *ret)
{
	char buf[64] = "";
	long long s = 0, ns = 0;
	int fd = openat(areafd, OVL_STAMP, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);

	*ret = (struct timespec){ 0 };
	if (fd < 0)
		return;
	if (read(fd, buf, sizeof(buf) - 1) > 0 && sscanf(buf, "%lld %lld", &s, &ns) == 2)
		*ret = (struct timespec){ .tv_sec = s, .tv_nsec = ns };
	close(fd);
}

static bool ts_before(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec < b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}

/* The stamp of a sync about to read the upper layer, read off OVL_CLOCK:
 * every entry changed from now on has a ctime at or past it (never missed
 * by the next sync), every one changed before a ctime before it (not
 * applied again). */
static int stamp_take(int areafd, struct timespec *ret)
{
	_cleanup_close_ int fd = openat(areafd, OVL_CLOCK, O_RDONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);

	return fd < 0 ? -errno : fs_time_past(fd, ret);
}

static int stamp_write(int areafd, const struct timespec *t)
{
	char buf[64];
	int fd, n = snprintf(buf, sizeof(buf), "%lld %ld\n", (long long)t->tv_sec, t->tv_nsec);

	fd = openat(areafd, OVL_STAMP ".tmp", O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	if (write(fd, buf, (size_t)n) != n) {
		close(fd);
		return -EIO;
	}
	close(fd);
	return renameat(areafd, OVL_STAMP ".tmp", areafd, OVL_STAMP) < 0 ? -errno : 0;
}

/* ---------------------------------------------------------------- sync */

/* The sync proper, with the directories open.  Returns: 0 or negative
 * errno, c->step and c->rel saying where. */
static int overlay_apply(struct ovl_apply *c, int recfd, struct state_area *st, int upperfd, int lowerfd)
{
	char work[SYNC_DIR_NAME_MAX] = "";
	struct stat lst;
	int r;

	if (fstat(lowerfd, &lst) < 0)
		return -errno;
	c->dev = lst.st_dev;
	c->step = "removing an interrupted sync";
	if ((r = area_recover_sync(lowerfd, lst.st_dev, st->name, st->sync_dir)) < 0)
		return r;
	c->step = "creating its working directory";
	/* hidden from the overlay by a whiteout of its name */
	c->workfd = area_sync_dir_create(lowerfd, recfd, st, work, c->mounted ? upperfd : -1);
	if (c->workfd < 0)
		return c->workfd;
	r = apply_dir(c, upperfd, lowerfd, true, false);
	if (r == 0)
		r = apply_unmatched(c, upperfd, lowerfd);
	c->step = "writing to the disk";
	if (r == 0 && syncfs(lowerfd) < 0)
		r = -errno;
	if (r == 0)
		c->rel[0] = '\0';
	/* committed: what is in the working directory is what was replaced */
	if (area_sync_dir_remove(lowerfd, work, c->workfd, lst.st_dev) == 0 && c->mounted)
		unlinkat(upperfd, work, 0);
	c->workfd = safe_close(c->workfd);
	return r;
}

/* The upper files mapped shared now into c->mapped_now, and with them
 * those the last sync recorded on @areafd into c->mapped; the overlay
 * inodes mapped shared now into c->ovl_mapped, with c->ovlfd the
 * overlay's root (the mount @st recorded). */
static int mapped_setup(struct ovl_apply *c, const struct state_area *st, int areafd, int upperfd)
{
	struct stat ust, ost;
	int r;

	c->ovlfd = st->cover_id ? mountfd_open_id(&mountfd_kernel_ops, st->cover_id, O_RDONLY | O_DIRECTORY) : -ESTALE;
	if (fstat(upperfd, &ust) < 0)
		return -errno;
	/* no overlay to ask (gone, or another mount there): by the upper
	 * layer's inodes alone, as Linux 6.1 names them */
	r = mapped_scan_writable(&c->mapped_now, ust.st_dev, c->ovlfd >= 0 ? &c->ovl_mapped : NULL,
				 c->ovlfd >= 0 && fstat(c->ovlfd, &ost) == 0 ? ost.st_dev : 0, &c->ovl_written);
	if (r == 0)
		r = mapped_load(&c->mapped, areafd, COPY_SYNC_MAPPED_XATTR);
	if (r == 0)
		r = mapped_merge(&c->mapped, &c->mapped_now);
	mapped_sort(&c->mapped);
	mapped_sort(&c->ovl_mapped);
	mapped_sort(&c->ovl_written);
	return r;
}

int area_overlay_sync(const struct area_dirs *d, int recfd, struct state_area *st, bool mounted,
		      size_t *ret_changes, struct diag_list *m)
{
	struct ovl_apply c = { .workfd = -1, .mounted = mounted, .verify = !mounted, .step = "opening",
				.ovlfd = -EBADF };
	_cleanup_close_ int areafd = -EBADF, upperfd = -EBADF, lowerfd = -EBADF;
	int r;

	areafd = open(d->area, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	upperfd = areafd < 0 ? -1 : openat(areafd, "upper", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	lowerfd = open(d->lower, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	c.buf = malloc(OVL_BUF_SIZE);
	if (areafd < 0 || upperfd < 0 || lowerfd < 0 || !c.buf) {
		r = c.buf ? -errno : -ENOMEM;
		goto out;
	}
	/* before the upper layer is read: what changes from now on is newer;
	 * a clock set back (now before the last stamp) makes this sync whole */
	if (mounted && (r = stamp_take(areafd, &c.now)) < 0) {
		c.step = "reading the time of the area's filesystem";
		goto out;
	}
	if (mounted && (r = mapped_setup(&c, st, areafd, upperfd)) < 0) {
		c.step = "reading which files are mapped";
		goto out;
	}
	if (mounted)
		stamp_read(areafd, &c.since);
	if (ts_before(&c.now, &c.since))
		c.since = (struct timespec){ 0 };
	r = overlay_apply(&c, recfd, st, upperfd, lowerfd);
	if (r == 0 && mounted)
		r = stamp_write(areafd, &c.now);
	/* the next sync compares what is mapped now; after a failure, what
	 * this one should have compared as well */
	if (mounted) {
		mapped_sort(&c.mapped_now);
		mapped_save(r == 0 ? &c.mapped_now : &c.mapped, areafd, COPY_SYNC_MAPPED_XATTR);
	}
	if (ret_changes)
		*ret_changes = c.changes;
out:
	free(c.buf);
	links_free(&c);
	mapped_done(&c.mapped);
	mapped_done(&c.mapped_now);
	mapped_done(&c.ovl_mapped);
	mapped_done(&c.ovl_written);
	mapped_done(&c.ovl_matched);
	safe_close(c.ovlfd);
	if (r < 0)
		diag_error(m, NULL, 0,
			   "area '%s': sync back of the overlay's upper layer into '%s' failed while %s%s%s%s: %s; every entry of the directory is its complete old or new version and the area, with every change, is left in place: fix this and run `%s %s%s`",
			   st->name, st->path, c.step, c.rel[0] ? " '" : "", c.rel, c.rel[0] ? "'" : "",
			   strerror(-r), area_self(d), mounted ? "sync " : "stop", mounted ? st->name : "");
	return r;
}

/* ---------------------------------------------------------------- setup */

int area_overlay_prepare(struct setup *s, const struct stat *root, struct diag_list *m)
{
	char upper[PATH_MAX], work[PATH_MAX];
	int r = 0;

	snprintf(upper, sizeof(upper), "%s/upper", s->d.area);
	snprintf(work, sizeof(work), "%s/work", s->d.area);
	if (mkdir(upper, 0700) < 0 || mkdir(work, 0700) < 0)
		r = -errno;
	/* the overlay's root is the upper layer's: the directory's owner and mode */
	if (r == 0)
		r = area_set_root_owner(upper, s->a, root);
	if (r < 0)
		diag_error(m, NULL, 0, "area '%s': creating the overlay's upper and work directories in '%s': %s",
			   s->a->name, s->d.area, strerror(-r));
	return r;
}

int area_overlay_cover(struct setup *s, unsigned int attr, struct diag_list *m)
{
	struct mountfd_opts o;
	_cleanup_free_ char *opts = NULL;
	_cleanup_close_ int mfd = -EBADF;
	char why[512] = "";
	int r;

	/* a ',' or ':' in the state directory would split the options */
	if (strpbrk(s->d.top, ",:\\")) {
		diag_error(m, NULL, 0, "area '%s': seed = overlay needs a state directory without ',' ':' or '\\' ('%s')",
			   s->a->name, s->d.top);
		return -EINVAL;
	}
	if (asprintf(&opts, "lowerdir=%s,upperdir=%s/upper,workdir=%s/work,redirect_dir=off,metacopy=off,index=off,xino=off",
		     s->d.lower, s->d.area, s->d.area) < 0)
		return -ENOMEM;
	r = mountfd_parse_options(opts, &o);
	if (r == 0)
		r = mountfd_fs(&mountfd_kernel_ops, "overlay", s->st.device, &o, attr, s->path_fd,
			       &mfd, why, sizeof(why));
	mountfd_opts_done(&o);
	if (r == 0 && (r = mountfd_id(&mountfd_kernel_ops, mfd, &s->st.cover_id, NULL)) < 0)
		umount_fd_detached(mfd);
	if (r == -ENODEV)
		snprintf(why, sizeof(why), "this kernel has no overlay filesystem: set seed = yes");
	if (r < 0)
		diag_error(m, NULL, 0, "area '%s': mounting the overlay (%s) over '%s': %s%s%s", s->a->name, opts,
			   s->a->path, strerror(-r), why[0] ? ": " : "", why);
	return r;
}
