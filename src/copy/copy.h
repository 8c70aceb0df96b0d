/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Full-fidelity tree copy, run only in the helper storaged-copy (its
 * threads and buffers stay out of the resident storaged: copy_spawn.h). */
#ifndef STORAGED_COPY_H
#define STORAGED_COPY_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>

struct copy_sys;
struct copy_budget;

/* The outcome: err 0 or negative errno, msg the failed entry's path below
 * the source.  After a committed sync back, what it did to the lower
 * directory, in entries (a directory whose own metadata changed counts as
 * put); all 0 otherwise. */
struct copy_result {
	int err;
	char msg[2048];
	size_t n_put, n_deleted, n_kept;
	/* attrs_optional: entries copied without an attribute the
	 * destination refused, the first one's path and what */
	size_t n_lost;
	char lost_path[512], lost_what[400];
	/* copy_trees_fd(): the @rels root whose tree failed ("": none) */
	char err_root[256];
};

struct copy_opts {
	const char *label; /* for the progress line, e.g. the area's name */
	bool progress; /* a progress line on stderr (a terminal) */
	unsigned jobs; /* worker threads; 0 or 1: the calling thread */
	/* charged for each inode and directory before it is written
	 * (copy_budget.h); NULL: no limit */
	struct copy_budget *budget;
	/* an xattr or file flags the destination refuses are counted in
	 * n_lost, not a failure */
	bool attrs_optional;
	/* copy_sync_fd(): a new directory below COPY_RESCUE_DIR that keeps
	 * the area's version of each entry the sync could not carry; NULL */
	const char *rescue;
	/* copy_sync_fd(): every regular file alike on both sides is compared
	 * by content, not only the mapped ones (at stop, the last chance: a
	 * mapping made and gone between two syncs moves no time and is in no
	 * process's maps, mapped.h) */
	bool verify;
};

/*
 * copy_tree_fd: copies the tree of @srcfd into the existing directory
 * @dstfd (neither closed): owner (numeric), mode, atime and mtime, xattrs
 * (ACLs among them), file flags, hard links, nodes, fifos, symbolic links,
 * holes; not sockets.  A directory on another device than @srcfd (a
 * mount, a btrfs subvolume or snapshot) is copied empty: an area carries
 * those itself (area_carry.c).  The tree may change under the copy by a
 * user who owns it: each entry is looked up once, below its directory's
 * descriptor, and copied from that descriptor (copy_fd.h); nothing
 * outside it is read.  The copy stays root-owned 0700 until the end, when
 * directories get their metadata after their contents, the root last.  A
 * failure leaves a partial copy for the caller to remove.  @o->jobs > 1:
 * that many threads.  @sys: the calls that take a name (copy_sys_libc, or
 * a test's).
 *
 * Returns: 0; negative errno of the first failure (-ENOSPC, -ENOMEM),
 * @ret's message saying where.
 */
int copy_tree_fd(int srcfd, int dstfd, const struct copy_opts *o, const struct copy_sys *sys,
		 struct copy_result *ret);

/* the inodes with several links copied below a destination root, each
 * at the path @rel of its first copy (its users lock it) */
#define COPY_INODE_BUCKETS 4096
struct copy_inode {
	dev_t dev;
	ino_t ino;
	unsigned fflags; /* the tree copy's, set in its step 4 */
	char *rel;
	struct copy_inode *next;
};
struct copy_inodes {
	struct copy_inode *b[COPY_INODE_BUCKETS];
};

/* the copy of @dev, @ino in @t, or NULL */
struct copy_inode *copy_inode_find(const struct copy_inodes *t, dev_t dev, ino_t ino);

/* adds the copy @rel of @dev, @ino to @t.  Returns: 0; -ENOMEM. */
int copy_inode_add(struct copy_inodes *t, dev_t dev, ino_t ino, const char *rel, unsigned fflags);

void copy_inodes_free(struct copy_inodes *t);

/*
 * copy_trees_fd: @n copy_tree_fd() in one run, @srcfds[i] into @rels[i]
 * (an existing directory below @dstroot that the caller made, no link):
 * one set of threads, one hard-link table (a file named in two trees is
 * copied once), every root's metadata last.  A name of one of the @links
 * inodes (NULL: none) becomes a link to that copy.  The sync back's new
 * directories.
 *
 * Returns: as copy_tree_fd().
 */
int copy_trees_fd(int dstroot, const int *srcfds, const char *const *rels, size_t n,
		  const struct copy_inodes *links, const struct copy_opts *o,
		  const struct copy_sys *sys, struct copy_result *ret);

/*
 * copy_sync_fd: the incremental sync back (copy_sync.c): makes the tree
 * of @lowerfd (the area's directory) what the tree of @areafd is, with
 * copy_tree_fd()'s fidelity, copying only what changed since the area's
 * baseline (COPY_SYNCED_XATTR; without one, what differs in type, size,
 * mtime, mode or owner).  Each entry, a deletion too, is one atomic
 * rename; directories' metadata last; the lower root gets the area root's.
 * Directories on another device are neither entered nor deleted (btrfs
 * subvolumes the area carries: area_carry.c).  Crash-consistent: see
 * copy_sync.c.  @workfd: W, an empty directory of storaged's just below
 * @lowerfd that no user reaches; left holding the replaced and deleted
 * versions for the caller to remove.  Everything written into W is first
 * charged to its owner's room (copy_budget.h).
 *
 * One entry's failure is that entry's: what the area cannot give (a
 * permission, a lease) or the directory's filesystem cannot take (a name,
 * a size, EPERM over an immutable file) is left out, old version in the
 * directory, area version in the area, all else committed; an xattr or
 * flags refused are left out alone.  With @o->rescue, each left-out area
 * version is kept in COPY_RESCUE_DIR/@o->rescue (0700, @lowerfd's owner's)
 * as 1, 2, ... and "index" lines "N<tab>PATH" (escaped as messages are).
 *
 * Returns: 0 once everything is on disk (@ret->msg names what lost an
 * attribute, or is empty); -COPY_SYNC_KEPT_BOTH; -COPY_SYNC_RESCUED; the
 * first left-out entry's negative errno (all else committed; with rescue,
 * keeping them failed and is undone); another negative errno (the lower
 * copy then holds a complete old or new version of every entry; -ENOSPC,
 * -EDQUOT: the owners' room, the message says by how much).
 */
int copy_sync_fd(int areafd, int lowerfd, int workfd, const struct copy_opts *o,
		 const struct copy_sys *sys, struct copy_result *ret);

/* the area's baseline: "SEC.NSEC" of CLOCK_REALTIME_COARSE past every
 * file time set before the last sync began or the seed ended */
#define COPY_SYNCED_XATTR "trusted.storaged.synced"

/* the lower directory's baseline, on the area root: the seed's start or
 * past the last sync's commit.  A lower entry with a newer ctime was
 * changed there by someone else (uncovered) and is kept: the three-way
 * rule of copy_sync.c. */
#define COPY_LOWER_SYNCED_XATTR "trusted.storaged.lower-synced"

/* a digest of the lower root's names at the lower baseline
 * (copy_sync_root_record()): each sync's W moves the root's mtime, so
 * only the names tell whether someone else changed them */
#define COPY_LOWER_ROOT_XATTR "trusted.storaged.lower-root"

/* lower entries a sync kept in the directory's version, paths below the
 * root, each '\0'-ended: kept so until the area is torn down */
#define COPY_SYNC_KEPT_XATTR "trusted.storaged.kept"

/* the intent record, on the area root: the sync's start ("SEC.NSEC"), set
 * after the kept list and before the first rename into the directory,
 * removed once both baselines are past the commit.  Found by the next
 * sync: the last one was cut mid-commit, and this one completes it
 * (copy_sync.c, intent_complete()). */
#define COPY_SYNC_INTENT_XATTR "trusted.storaged.committing"

/* entries the last sync left out (one entry's failure, with the rest
 * committed and the area's baseline past them), paths below the root,
 * each '\0'-ended: taken as changed in the area at the next sync */
#define COPY_SYNC_RETRY_XATTR "trusted.storaged.retry"

/* inode numbers (decimal, space-separated) of area files mapped shared at
 * the last sync: compared by content at the next (copy_sync_changed.c) */
#define COPY_SYNC_MAPPED_XATTR "trusted.storaged.mapped"

/* all committed, but entries changed on both sides: the lower one's in
 * place, the area's beside it (or a deletion not carried) */
#define COPY_SYNC_KEPT_BOTH ENOTUNIQ

/* how the message of a sync the owners' room stopped begins */
#define COPY_NO_ROOM "no room for the changed files"

/* all committed but the skipped entries, each kept in the rescue directory */
#define COPY_SYNC_RESCUED ENOTNAM

#define COPY_RESCUE_DIR ".storaged-rescue"
#define COPY_SYNC_AREA_SUFFIX ".storaged-area"

/* Records the names of @lowerfd but @work (W; NULL: none) on @areafd as
 * COPY_LOWER_ROOT_XATTR, or removes the record.  Returns: 0; negative
 * errno (of fremovexattr(): a stale record left). */
int copy_sync_root_record(int areafd, int lowerfd, const struct stat *work);

/* copy_sync_base_read: the baseline @xattr of the area root @fd.
 * Returns: 0; -ENODATA (none: never synced, or no trusted xattrs),
 * -EINVAL (malformed), another negative errno of fgetxattr(). */
int copy_sync_base_read(int fd, const char *xattr, struct timespec *ts);

/* copy_sync_base_past_writes: waits (normally one tick; at most ~100 ms)
 * until every ctime set before the call is older than @ts and every later
 * one at least @ts (how: copy_fd.c).  After a seed: its files are not
 * copied back; before it, as the lower baseline: writes just before the
 * seed are not taken for later changes.
 * Returns: 0; negative errno of clock_gettime(). */
int copy_sync_base_past_writes(struct timespec *ts);

/* copy_sync_base_write: records @ts as the baseline @xattr of the area
 * root @fd: an older ctime is in the lower copy (the area's baseline) or
 * what the area holds (the lower one's).  Returns: 0; negative errno
 * (-EOPNOTSUPP: the next sync compares everything). */
int copy_sync_base_write(int fd, const char *xattr, const struct timespec *ts);

/* RLIMIT_NOFILE's soft limit to the hard one: descriptors per level and thread */
void copy_raise_nofile(void);

#endif
