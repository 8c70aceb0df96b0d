/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * One view of the live system per pass: the mount table, which mounts are
 * local, the directories walked, and the walks that read them.
 *
 * A pass (the loader's, or the executor's) asks the same questions many
 * times, so it keeps one mount table, one set of local mount IDs and one
 * cache of walked directories, over which safepath's walker (safepath.h)
 * answers three questions:
 *   view_resolve()  where a path leads, looking names up only on local
 *                   mounts (for the plan: no server is asked);
 *   view_open()     the safe walk of safepath_open(), each name opened
 *                   before it is examined, for the mount to be made on the
 *                   descriptor (mountfd.h);
 *   view_is_local() whether resolving a path stays on local mounts and
 *                   meets no link (a mount that cannot hang).
 * The mount table is read once, and again only when a walk meets a mount
 * ID it does not hold: a mount was made since.  A mount storaged makes
 * itself is added with view_mounted() and covers the directories kept at
 * and below its mount point (dropped then).
 */
#ifndef STORAGED_VIEW_H
#define STORAGED_VIEW_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <libmount.h>

#include "safepath.h"

#define VIEW_MOUNTINFO "/proc/self/mountinfo"

/* One mount of the table: its ID (statx STATX_MNT_ID, mountinfo(5)'s
 * first field) and whether lookups on it are local (fsfacts_is_local()). */
struct view_mount {
	uint64_t id;
	bool local;
};

/* The view of one pass; zero-initialised is empty (nothing read yet). */
struct view {
	struct libmnt_table *tb; /* the snapshot, owned; NULL: not read yet */
	struct view_mount *mounts; /* owned, sorted by ID */
	size_t n_mounts, cap_mounts;
	struct view_dirs dirs;
};

/*
 * @path: a mountinfo(5) file: VIEW_MOUNTINFO, or a test's fixture
 *
 * The one reader of the mount table (libmount mnt_new_table_from_file()).
 *
 * Returns: a new table (mnt_unref_table() it), or NULL with errno set.
 */
struct libmnt_table *view_read_table(const char *path);

/* The mount with the ID @id (mountinfo(5)'s first field) in @tb, borrowed
 * from it, or NULL (libmount has no lookup by ID). */
struct libmnt_fs *view_find_id(struct libmnt_table *tb, uint64_t id);

/* A mount of @tb mounted on mount @id below @target (its parent is @id,
 * its mount point is not @target itself), borrowed, or NULL: what makes
 * umount(2) of @id fail EBUSY (fs/namespace.c propagate_mount_busy()). */
struct libmnt_fs *view_find_child(struct libmnt_table *tb, uint64_t id, const char *target);

/* The topmost mount on @target (the last one in @tb), borrowed, or NULL;
 * @ret_ours: the one with the ID @id (0: none asked), on @target, if any. */
struct libmnt_fs *view_find_top(struct libmnt_table *tb, const char *target, unsigned id,
				struct libmnt_fs **ret_ours);

/*
 * @mp: a mount point, or NULL
 *
 * Returns: whether the topmost mount on @mp is read-only (its VFS "ro");
 * false when nothing is mounted there or @mp is NULL.
 */
bool view_mounted_ro(struct libmnt_table *tb, const char *mp);

/* "SOURCE (FSTYPE)" of @fs as the mount table shows it ("none", "?" for
 * what it lacks), owned; NULL on -ENOMEM. */
char *view_fs_text(struct libmnt_fs *fs);

/* A descriptor that poll(2) reports POLLPRI on at every change of the
 * mount table (fs/proc_namespace.c mounts_poll()), owned; -1 with errno. */
int view_watch_open(void);

/*
 * The snapshot of /proc/self/mountinfo, read at the first question.
 *
 * Returns: borrowed until the view is refreshed (a walk meets an unknown
 * mount ID) or done: mnt_ref_table() it to keep it; NULL with errno set
 * when it cannot be read.
 */
struct libmnt_table *view_table(struct view *v);

/*
 * @id: the mount table ID of a mount the pass just made, 0 when unknown
 * @local: whether it is local (a tmpfs, a bind of a local directory)
 * @mountpoint: where it was made (as walked, or as the kernel gives it);
 *              NULL: anywhere (a mount made out of sight, by a child)
 *
 * Records the mount and drops the kept directories it covers (@mountpoint
 * and below).
 */
void view_mounted(struct view *v, uint64_t id, bool local, const char *mountpoint);

/*
 * @path: absolute path as the fstab writes it
 * @buf: where @path leads: every link that exists now resolved; the part
 *       that does not exist yet kept as written
 * @ret_mode: the type of what @path names (S_IFDIR, ...); 0 when it does not
 *            exist or is not known
 *
 * For planning: safepath_lookup() with the view's local mounts and kept
 * directories (names looked up only on local mounts, no server asked).
 * With @kernel, a path that lookup stops short of (a mount that is not
 * local on the way) is then looked up whole (open(2) O_PATH, which
 * follows links the kernel's way: on a remote mount, a server may be
 * asked).
 *
 * Returns: 0 and @buf (*@ret_mode known when the lookup reached the end);
 * negative errno when nothing is known (@buf is @path then).
 */
int view_resolve(struct view *v, const char *path, bool kernel, char buf[static PATH_MAX], mode_t *ret_mode);

/* safepath_open_cached() on the view's directories. */
int view_open(struct view *v, const char *path, mode_t mkdir_mode, int *ret_fd,
	      const struct view_dir **ret_parent, char *why, size_t len);

/*
 * @path: absolute, normalised path (need not exist entirely)
 *
 * safepath_is_local() with the view's local mounts and the directories
 * the view's opening walks kept.
 *
 * Returns: 1 local and link-free; 0 not, or "/" is not local; negative
 * errno as safepath_is_local().
 */
int view_is_local(struct view *v, const char *path);

void view_done(struct view *v);

#endif
