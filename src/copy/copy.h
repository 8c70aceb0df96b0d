/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Full-fidelity tree copy, run only inside the helper program
 * storaged-copy (its threads and buffers are no memory of the resident
 * storaged).  storaged reaches this code through copy_spawn.h.
 */
#ifndef STORAGED_COPY_H
#define STORAGED_COPY_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>

struct copy_sys;
struct copy_budget;

/* The outcome of a copy: err is 0 or a negative errno, msg says what
 * failed (the entry's path below the source) when err is set.  After a
 * sync back that committed (copy_sync_fd()), what it did to the lower
 * directory, in entries: put (added or replaced, a directory whose own
 * metadata changed among them), deleted, and newly kept in the
 * directory's version; all 0 after a sync that found nothing changed, and
 * after any other copy. */
struct copy_result {
	int err;
	char msg[2048];
	size_t n_put, n_deleted, n_kept;
	/* copy_trees_fd() with attrs_optional: entries copied without an
	 * attribute the destination refused, the first one's path and what */
	size_t n_lost;
	char lost_path[512], lost_what[400];
	/* copy_trees_fd() failed in the tree of this root (one of its
	 * @rels, "" when none) */
	char err_root[256];
};

struct copy_opts {
	const char *label; /* for the progress line, e.g. the area's name */
	bool progress; /* print a progress line on stderr (a terminal) */
	unsigned jobs; /* worker threads; 0 or 1: copy in the calling thread */
	/* each inode and directory is charged to it before it is written
	 * (copy_budget.h; the sync back's); NULL: no limit */
	struct copy_budget *budget;
	/* an xattr or file flags the destination refuses are left out and
	 * counted in the result (n_lost), not a failure (struct copy_lost) */
	bool attrs_optional;
	/* copy_sync_fd(): the name of the directory, new, below the lower
	 * root's COPY_RESCUE_DIR, where the area's version of each entry the
	 * sync could not carry is kept; NULL: nowhere */
	const char *rescue;
};

/**
 * copy_tree:
 * @src: directory to copy (not followed when it is a symbolic link)
 * @dst: existing directory to copy into (not followed either)
 * @o: options; @o->jobs > 1 copies directories in that many threads
 * @ret: filled on failure with the negative errno and a message
 *
 * Copies owner (numeric), mode, times (atime, mtime), xattrs (POSIX ACLs
 * among them), file flags, hard links, device nodes, fifos, symbolic
 * links (as links), sparse files (holes stay holes); sockets are not
 * copied, directories on another device than @src (mount points, btrfs
 * subvolumes and snapshots, which are not mounts) are not entered but
 * copied empty (an area carries both onto itself: area_carry.c); every
 * name is copied, none is taken for storaged's own (the sync back's
 * working directory is never below a source).  @src may be changed while
 * it is copied by a user who owns it: every entry is looked up once, as
 * one name below its directory's descriptor, following no symbolic link,
 * and copied from that descriptor (copy_fd.h); nothing outside @src is
 * ever read.  The copy in @dst stays
 * root-owned 0700 directories until the end, when directories get their
 * metadata (after their contents), the root last.  A failure leaves a
 * partial copy in @dst for the caller to remove.
 *
 * Returns: 0; negative errno of the first failure (-ENOSPC when @dst is
 * full, -ENOMEM, -ELOOP/-ENOTDIR when @src or @dst is not a directory).
 */
int copy_tree(const char *src, const char *dst, const struct copy_opts *o, struct copy_result *ret);

/**
 * copy_tree_fd:
 * @srcfd: open directory to copy
 * @dstfd: open directory to copy into
 * @o, @ret: as for copy_tree()
 * @sys: the calls that take a name (copy_sys_libc, or a test's)
 *
 * copy_tree() on descriptors; neither is closed.
 *
 * Returns: as copy_tree().
 */
int copy_tree_fd(int srcfd, int dstfd, const struct copy_opts *o, const struct copy_sys *sys,
		 struct copy_result *ret);

/* an inode already copied below the destination root, at @rel */
struct copy_link {
	dev_t dev;
	ino_t ino;
	const char *rel;
};

/**
 * copy_trees_fd:
 * @dstroot: open directory the copies are made below
 * @srcfds: @n open directories to copy
 * @rels: for each, the existing directory below @dstroot (a relative path
 *        of directories this copy's caller made, no symbolic link) to copy
 *        it into
 * @n: how many
 * @links: @nlinks inodes of the source already copied below @dstroot: a
 *         name of one of them in the trees becomes a link to that copy
 * @o, @sys, @ret: as for copy_tree_fd()
 *
 * Several copy_tree_fd() in one: one set of threads, one table of hard
 * links (a file with names in two of the trees is copied once and linked),
 * every root's metadata set last.  Used by the incremental sync back for
 * the directories the lower copy does not have yet (copy_sync.c).
 *
 * Returns: as copy_tree().
 */
int copy_trees_fd(int dstroot, const int *srcfds, const char *const *rels, size_t n,
		  const struct copy_link *links, size_t nlinks, const struct copy_opts *o,
		  const struct copy_sys *sys, struct copy_result *ret);

/**
 * copy_sync_fd:
 * @areafd: open root directory of the area (the source)
 * @lowerfd: open root of the area's directory (the lower copy) to bring up
 *           to date
 * @workfd: an empty directory of storaged's on @lowerfd's filesystem, just
 *          below it, that no user can reach (the sync's working directory
 *          W); left holding the replaced and deleted versions, for the
 *          caller to remove
 * @o, @sys, @ret: as for copy_tree_fd()
 *
 * The incremental sync back (copy_sync.c): makes the tree below @lowerfd
 * what the tree below @areafd is (with copy_tree()'s fidelity, hard links
 * kept among what is copied in one run), copying only what changed since
 * the area's baseline (COPY_SYNCED_XATTR on @areafd, set by the seed and by
 * every successful sync; without one, whatever differs in type, size,
 * mtime, mode or owner).  Each entry is replaced in one atomic rename,
 * deleted entries too; directories' metadata last.  The lower root gets
 * the area root's owner, mode and times.  Directories on another device
 * than their root are not entered (nor deleted): below an area's private
 * views, btrfs subvolumes, which the area carries (area_carry.c).
 * Crash-consistent on power loss: see copy_sync.c.  The area is reached
 * by descriptor only.
 *
 * Everything written into @workfd is first charged against what its
 * owner could write on that filesystem (copy_budget.h: not root's
 * reserve, not past a quota).
 *
 * One entry's failure is that entry's: one the area cannot give (a
 * permission, a lease not broken in time) or the directory's filesystem
 * cannot take (a name, a size, a permission: EPERM renaming over an
 * immutable file) is left out, its old version stays in the directory,
 * its area version in the area, and every other change is committed; an
 * xattr or the file flags that filesystem refuses are left out alone (the
 * entry is synced).  With @o->rescue, the area's version of each entry
 * left out is then kept in that directory, made below @lowerfd (and
 * below its ".storaged-rescue", both 0700 and @lowerfd's owner's): 1, 2,
 * ..., and "index", a line "N<tab>PATH" each (PATH below the roots,
 * escaped as messages are), regular files with their data whatever
 * metadata the filesystem refuses.
 *
 * Returns: 0 once everything is on disk (ret->msg then names what was
 * synced without an attribute, or is empty); -COPY_SYNC_KEPT_BOTH;
 * -COPY_SYNC_RESCUED (entries left out, every one kept in @o->rescue);
 * the first left-out entry's negative errno (all else committed, the
 * message names each; with @o->rescue, keeping them failed and what it
 * wrote is gone); negative errno of the first failure that is not one
 * entry's (-ENOSPC), the lower copy then holding complete old or new
 * versions of every entry (-ENOSPC, -EDQUOT: the changes do not fit in
 * the owners' room, and @ret's message says by how much).
 */
int copy_sync_fd(int areafd, int lowerfd, int workfd, const struct copy_opts *o,
		 const struct copy_sys *sys, struct copy_result *ret);

/* the area's sync baseline: "SEC.NSEC" of CLOCK_REALTIME_COARSE past
 * every file time set before the last successful sync back began, or
 * before the seed ended (copy_sync_base_past_writes()) */
#define COPY_SYNCED_XATTR "trusted.storaged.synced"

/* the lower directory's baseline, also on the area's root: "SEC.NSEC" of
 * the coarse realtime clock at the start of the seed or past the commit
 * point of the last successful sync back.  An entry of the lower directory
 * with a newer ctime was changed there by someone else (it was uncovered):
 * the sync keeps it (copy_sync.c, the three-way rule); one newer than the
 * area's baseline only, where it differs from what the sync put there. */
#define COPY_LOWER_SYNCED_XATTR "trusted.storaged.lower-synced"

/* the names in the lower root at the lower baseline (the seed's start,
 * a sync's commit), as a decimal digest (copy_sync_root_record()).  Each
 * sync makes and deletes its working directory in the lower root, which
 * moves the root's mtime past the lower baseline every time: whether
 * someone else added or removed a name there since is told by the names
 * themselves (copy_sync_kept.c). */
#define COPY_LOWER_ROOT_XATTR "trusted.storaged.lower-root"

/* the entries of the lower directory a sync back kept in the directory's
 * version (changed there, not in the area; or on both sides), as paths
 * below the root, each '\0'-ended: later syncs keep them so, whatever
 * the baselines say, until the area is torn down (copy_sync_kept.c) */
#define COPY_SYNC_KEPT_XATTR "trusted.storaged.kept"

/* the sync's intent record, on the area's root: "SEC.NSEC", the start of
 * the sync (as COPY_SYNCED_XATTR), set (after the list of kept entries is
 * written) before its first rename into the directory and removed once
 * both baselines moved past its commit.  Found by the next sync, it says
 * that a sync was cut after it began to change the directory: what
 * changed there since the lower baseline may be that sync's own doing, and
 * the next one completes it (copy_sync.c, intent_complete()). */
#define COPY_SYNC_INTENT_XATTR "trusted.storaged.committing"

/* the inode numbers of the area's files that were mapped shared at the
 * last sync, decimal, space-separated: compared by content at the next
 * one (copy_sync_changed.c) */
#define COPY_SYNC_MAPPED_XATTR "trusted.storaged.mapped"

/* the errno of a sync back that committed everything, but found entries
 * changed both in the area and in the lower directory: the lower one's is
 * in place, the area's beside it (or the one side's deletion not carried
 * over); the message names each and what became of it */
#define COPY_SYNC_KEPT_BOTH ENOTUNIQ

/* how the message of a sync back that the owners' room stopped begins
 * (copy_budget.h): the numbers follow */
#define COPY_NO_ROOM "no room for the changed files"

/* the errno of a sync back that committed everything but some entries
 * (skipped: copy_sync_fd()), and kept the area's version of each in the
 * rescue directory (copy_opts.rescue) */
#define COPY_SYNC_RESCUED ENOTNAM

/* where a stop's rescue directories are made (copy_opts.rescue), below
 * the lower root */
#define COPY_RESCUE_DIR ".storaged-rescue"

/* the suffix of the name the area's version of such an entry gets */
#define COPY_SYNC_AREA_SUFFIX ".storaged-area"

/* Records the names of @lowerfd but its entry @work (the sync's working
 * directory; NULL: none) on @areafd as COPY_LOWER_ROOT_XATTR; where that
 * fails, removes the record.  Returns: 0; negative errno of reading
 * @lowerfd or of fsetxattr() (the record then removed), of fremovexattr()
 * (a stale record left). */
int copy_sync_root_record(int areafd, int lowerfd, const struct stat *work);

/**
 * copy_sync_base_read:
 * @fd: open area root
 * @xattr: COPY_SYNCED_XATTR or COPY_LOWER_SYNCED_XATTR
 * @ts: receives that baseline
 *
 * Returns: 0; -ENODATA when the area has none (never synced or seeded by
 * this storaged, or no trusted xattrs), -EINVAL when it is malformed,
 * another negative errno of fgetxattr().
 */
int copy_sync_base_read(int fd, const char *xattr, struct timespec *ts);

/**
 * copy_sync_base_past_writes:
 * @ts: receives a baseline later than every file time set so far
 *
 * Waits (at most about 100 ms, normally one clock tick of 1-10 ms) for the
 * coarse realtime clock to pass the fine one read on entry: every ctime
 * set before the call is older than @ts, every one set after it is at
 * least @ts (file times: inode(7); multigrain timestamps since Linux 6.13
 * can be ahead of the coarse clock, and a plain coarse reading ties with
 * the times set in its own tick).  Taken after a seed, its files are not
 * copied back at the first sync; taken before it, as the directory's
 * baseline, what was written to the directory just before the seed is
 * not taken for a change made since.
 *
 * Returns: 0; negative errno of clock_gettime().
 */
int copy_sync_base_past_writes(struct timespec *ts);

/**
 * copy_sync_base_write:
 * @fd: open area root
 * @xattr: COPY_SYNCED_XATTR or COPY_LOWER_SYNCED_XATTR
 * @ts: from copy_sync_base_past_writes(), taken before the sync began
 *      (the area's baseline), past its renames (the lower directory's),
 *      or after a seed
 *
 * Records @ts as that baseline: everything with an older ctime is in the
 * lower copy (the area's), is what the area holds (the lower one's).
 *
 * Returns: 0; negative errno (-EOPNOTSUPP: no trusted xattrs here; the
 * next sync then compares everything).
 */
int copy_sync_base_write(int fd, const char *xattr, const struct timespec *ts);

/* raises RLIMIT_NOFILE's soft limit to the hard one: a copy holds
 * descriptors per directory level and thread */
void copy_raise_nofile(void);

#endif
