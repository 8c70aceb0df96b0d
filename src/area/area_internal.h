/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the files of the area module share, and nothing else includes.  The
 * module is split by job:
 *
 *   area.c          setup and teardown, with undo on failure (orchestration)
 *   area_backend.c  tmpfs, zram, brd, mkfs
 *   area_sync.c     crash-safe sync back
 *   area_survey.c   directory survey, open-file scan
 *   area_status.c   the records of every area: status, setup order
 *   area_mounts.c   an area's mounts by their IDs: active, gone, covered;
 *                   the filesystems mounted below its directory
 *   area_carry.c    those filesystems carried onto the area, and back
 *   area_paths.c    areas/<name>/{state,area,lower}, is_mount_of, openat2,
 *                   rm -rf, the root's owner and mode: used by all of them
 *
 * Every file includes this header only (and area.h), never another area
 * file's, so that they do not depend on each other in a loop.  The record
 * of what an area set up (struct state_area) is written and read by
 * state/state_area.c.
 */
#ifndef STORAGED_AREA_INTERNAL_H
#define STORAGED_AREA_INTERNAL_H

#include <stdbool.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "area.h"
#include "copy/copy.h"
#include "state/state.h"

/* room for the name of a sync's working directory, ".storaged-sync."
 * and 32 hex digits, with its NUL (area_sync.c) */
#define SYNC_DIR_NAME_MAX 48

/* The directories of one area under the state directory. */
struct area_dirs {
	char *top, *state, *area, *lower;
	/* the command advice names (log_self()), borrowed; NULL: "storaged" */
	const char *self;
};

/* "storaged" and the options in use, for "run 'SELF stop' again". */
static inline const char *area_self(const struct area_dirs *d)
{
	return d->self ? d->self : "storaged";
}

/* Progress of area_setup(), so that a failure undoes exactly what was done. */
struct setup {
	const struct area_config *a;
	const struct area_sizing *sz;
	struct area_dirs d;
	struct state_area st;
	int path_fd; /* O_PATH of a->path, opened without following symlinks */
	int area_fd; /* the area's mount (its root, mountfd.h), -1 before it is
			mounted: the bind over the directory is made from it */
	bool made_top, area_mounted, lower_bound, path_bound;
};

/* ---------------------------------------------------------------- area_paths.c */

/* a name that is one path component: not empty, no '/', not "." or ".." */
bool area_name_is_valid(const char *name);

/* @state_dir/areas/<name> and its state, area and lower below it.
 * Returns: 0; -EINVAL for an invalid @name; -ENOMEM.  @d is empty then. */
int area_dirs_init(struct area_dirs *d, const char *state_dir, const char *name, const char *self);
void area_dirs_done(struct area_dirs *d);

/* Opens @path with @flags (| O_CLOEXEC | O_NOFOLLOW) without following any
 * symlink in any component (openat2 RESOLVE_NO_SYMLINKS).
 * Returns: the fd, or negative errno. */
int area_open_nofollow(const char *path, int flags);

/* true when @path is the root of a mount, on the same filesystem as @ref
 * when @ref is not NULL (statx STATX_ATTR_MOUNT_ROOT, symlinks not followed) */
bool area_is_mount_of(const char *path, const char *ref);

/* Removes @name below @parent recursively; never follows symlinks.
 * Returns: 0 (also when @name does not exist); -EBUSY when an entry is on
 * another filesystem than @dev (a mount below); negative errno. */
int area_rm_rf_at(int parent, const char *name, dev_t dev);

/* The owner and mode the root of area @a gets: the configured ones, else
 * those of its directory (@root, fstat of a->path). */
void area_root_owner(const struct area_config *a, const struct stat *root, uid_t *ret_uid,
		     gid_t *ret_gid, mode_t *ret_mode);

/* Gives @dir the owner and mode of area_root_owner().  Returns: 0 or
 * negative errno (chown, chmod). */
int area_set_root_owner(const char *dir, const struct area_config *a, const struct stat *root);

/* Opens and locks (LOCK_EX) the record of the area of @d, the one its
 * path still names once locked (a stop that tears the area down unlinks
 * it before it lets go), and reads it into @ret.  Returns: the fd (the
 * lock lives as long as it); negative errno: -ENOENT when there is none
 * (not set up, or torn down while this waited), -EBADMSG for a damaged
 * record. */
int area_record_open_locked(const struct area_dirs *d, struct state_area *ret);

/* ---------------------------------------------------------------- area_mounts.c */

/* An area's mounts found in the mount table by the IDs of its record. */
struct area_mounts {
	bool recorded; /* the record says the bind over the directory was made */
	bool cover_present; /* the mount with that ID exists, on the area's filesystem */
	bool cover_at_path; /* ... mounted on the area's path */
	bool cover_on_top; /* ... and the path leads to it: nothing over it */
	bool area_mounted, lower_mounted; /* the private mounts */
	size_t carried_missing; /* filesystems carried from below, unmounted since */
	char *moved_to; /* owned: where the bind is now, when it was moved */
	char *covered_by; /* owned: "SOURCE (FSTYPE)" of what is over it */
};

/* Fills @ret from /proc/self/mountinfo for the area of @d and @st.
 * Returns: 0; -ENOMEM; negative errno when the table cannot be read.
 * Free with area_mounts_done() in every case. */
int area_mounts_probe(const struct area_dirs *d, const struct state_area *st, struct area_mounts *ret);
void area_mounts_done(struct area_mounts *f);

/* Pure: the state @f amounts to. */
enum area_state area_mounts_state(const struct area_mounts *f);

/* Pure: true when syncing the area back cannot overwrite what was written
 * to the directory itself (it stayed covered) and both private mounts are
 * there. */
bool area_mounts_syncable(const struct area_mounts *f);

/* How a stop brings a persist area's changes back into its directory. */
enum area_sync_how {
	AREA_SYNC_NONE, /* not persist, a stop that does not sync, or its setup did not finish */
	AREA_SYNC_LOCKED, /* area_mounts_syncable(): area_sync_locked() */
	/* both private mounts are there, the bind over the directory is not,
	 * or not at its path: the three-way rule of copy_sync_fd() */
	AREA_SYNC_UNCOVERED,
	AREA_SYNC_UNSYNCABLE, /* a private mount is gone: nothing to sync from */
	/* seed = overlay, both private mounts there: the upper layer is
	 * applied once the overlay over the directory is unmounted (a change
	 * to the lower layer of a mounted overlay is undefined) */
	AREA_SYNC_OVERLAY,
};

/* Pure: how a stop that syncs brings the area of @f back (never
 * AREA_SYNC_NONE for a recorded setup); @overlay: a seed = overlay area.
 * Never sync an area nobody could write to: a setup killed while seeding
 * holds a partial copy, and syncing it would delete files. */
enum area_sync_how area_mounts_sync_how(const struct area_mounts *f, bool overlay);

/* Pure: what is wrong, for a message ("its bind over P was moved to Q by
 * someone else"); "" when active.  @path: the area's directory. */
void area_mounts_describe(const struct area_mounts *f, const char *path, char *buf, size_t len);

/* area_mounts_probe() + _state() + _describe() into @why */
enum area_state area_state_of(const struct area_dirs *d, const struct state_area *st, char *why, size_t len);

/* Pure: of the mount points @targets (NULL-terminated, normalised), those
 * strictly below @path and below no other of them, once each.
 * Returns: 0 with an owned strv in *@ret (NULL when none); -ENOMEM. */
int area_submounts_top(char *const *targets, const char *path, char ***ret);


/* area_submounts_top() of the mount table.  Returns: 0 or -ENOMEM. */
int area_submounts(const char *path, char ***ret);

/* Says what keeps the bind over the directory of @st busy: one diag_error
 * for each mount made on top of it after start (and how to free it, with
 * @d's command), else, when @procs, a warning for each process with files
 * open under it.  Returns: the number of such mounts. */
size_t area_explain_busy(const struct area_dirs *d, const struct state_area *st, bool procs, struct diag_list *m);

/* Whether the directory of @st is still where its path leads, told by the
 * private view d->lower (which holds it whatever becomes of its name) and
 * the mount table @f: 0 (also when the view is gone: nothing to tell by);
 * -ENOENT: deleted (rmdir(2): no link is left), the view alone holds it;
 * -ESTALE: its path leads elsewhere or nowhere (moved, a directory above
 * renamed).  A sync into it would fail or miss where the user looks. */
int area_dir_at_path(const struct area_dirs *d, const struct state_area *st, const struct area_mounts *f);

/* Pure: what area_dir_at_path()'s @gone (< 0) means, for a message
 * ("its directory P was moved ... to Q"); @path: the area's path. */
void area_dir_describe(const struct area_mounts *f, const char *path, int gone, char *buf, size_t len);

/* A stop's way out for an area whose directory is not at its path
 * (area_dir_at_path() @gone < 0): the area's whole tree (an overlay's
 * merged view while the bind over the directory is there, else its upper
 * layer) is copied, on the disk before this returns, into a new
 * .storaged-rescue/AREA-TIME (copy.h) of the nearest existing directory
 * above its path on the directory's filesystem, made its owner's 0700.
 * Returns: 0, said in one diag_error naming where; negative errno, said,
 * nothing kept (the area is to stay as it is). */
int area_rescue_whole(const struct area_dirs *d, const struct state_area *st,
		      const struct area_mounts *f, int gone, struct diag_list *m);

/* Before a sync: 0 when the area can be synced back (a warning when
 * something is mounted over it); -ESTALE with one diag_error naming what
 * someone else unmounted or moved; negative errno. */
int area_check_syncable(const struct area_dirs *d, const struct state_area *st, struct diag_list *m);

/* ---------------------------------------------------------------- area_carry.c */

/* Opens each of @targets (area_submounts() of the directory) before the
 * area covers them: @ret_fds[i] for @targets[i] (the caller fills it with
 * -1 first and closes what is >= 0).  Returns: 0 or negative errno, with
 * one diag_error naming the submount. */
int area_carry_open(const struct setup *s, char **targets, int *ret_fds, struct diag_list *m);

/* Binds each @fds[i] (AT_RECURSIVE) at @targets[i] on the bind over the
 * directory (s->st.cover_id), making the directory in the area where it
 * has none; the new mounts' IDs go to s->st.carried.  Returns: 0 or
 * negative errno, with one diag_error naming the submount. */
int area_carry(struct setup *s, char **targets, const int *fds, struct diag_list *m);

/* Binds each btrfs subvolume below the directory (area_subvolumes() of its
 * private view s->d.lower) at its place on the bind over the directory,
 * making the directory in the area where it has none; called after the
 * seed and before area_carry().  The new mounts' IDs go to s->st.carried.
 * Returns: 0 or negative errno, with one diag_error naming the subvolume. */
int area_carry_subvolumes(struct setup *s, struct diag_list *m);

/* Detaches the carried clones of @st by their IDs and empties the list. */
void area_carried_release(struct state_area *st);

/* A detached copy (open_tree(2) OPEN_TREE_CLONE|AT_RECURSIVE, made private)
 * of a carried clone, and where it was: put back when the bind over the directory turns
 * out busy after the clones were detached, so that the filesystems below
 * stay visible as long as the area does. */
struct area_carried_keep {
	int fd; /* negative: none */
	char *target; /* owned */
};

/* One per st->carried[] (the array is owned; area_carried_keep_free()).
 * Returns: NULL on -ENOMEM (then nothing can be put back). */
struct area_carried_keep *area_carried_keep(const struct state_area *st);

/* Puts each kept copy back onto the area's directory at its mount point
 * (only where the bind over the directory, st->cover_id, is on top), records
 * the new IDs in @st and in the record @recfd, and frees @k. */
void area_carried_restore(struct state_area *st, struct area_carried_keep *k, size_t n, int recfd);
void area_carried_keep_free(struct area_carried_keep *k, size_t n);

/* ---------------------------------------------------------------- area_backend.c */

/* Creates the backend of @s by its row of the backend table (tmpfs mount;
 * zram: hot_add, disksize, mkfs, mount; brd: pick a free /dev/ramN, mkfs,
 * mount) at s->d.area, private,
 * and checks that its effective limits are the requested ones.  Records in
 * @s what it did, for setup_undo().  Returns: 0 or negative errno, with one
 * diag_error. */
int area_backend_create(struct setup *s, const struct stat *root, struct diag_list *m);

/* MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV unless @a allows set-user-ID
 * files or device nodes ("nosuid = no", "nodev = no"): the attributes of
 * the area's mount and of its bind over the directory. */
unsigned int area_mount_attr(const struct area_config *a);

/* After mkfs the real free space is known: refuses (-ENOSPC) a seed that
 * does not fit; 0 for tmpfs and unseeded areas. */
int area_backend_check_room(struct setup *s, const struct area_survey *sv, struct diag_list *m);

/* Frees the kernel resource the backend of @st made (st->resource_id: a
 * zram device is reset and removed); nothing for none.  @m: where the
 * error goes, or NULL to ignore it (undo of a setup).  Returns: 0 (also
 * when the resource is gone already); negative errno with one diag_error
 * in @m. */
int area_backend_release(const struct state_area *st, struct diag_list *m);

/* ---------------------------------------------------------------- area_survey.c */

/* diag_warning, with its pid, for every process that holds a file open or
 * has its working directory under @path, and what that does (@effect:
 * AREA_OPEN_COVERED, AREA_OPEN_BUSY) */
void area_warn_open_files(const char *name, const char *path, const char *effect, struct diag_list *m);
/* at setup: it stays in the covered directory once the area is bound over it */
#define AREA_OPEN_COVERED "its writes go to the hidden copy"
/* at stop, before it refuses: a busy mount is not unmounted lazily */
#define AREA_OPEN_BUSY "it keeps the area from being stopped"

/* Called with each subvolume found (an O_PATH descriptor, borrowed, and
 * its path relative to the walk's root); returns 0 or negative errno,
 * which ends the walk. */
typedef int (*area_subvol_fn)(void *userdata, int fd, const char *rel);

/* The directories below @rootfd that are in its mount (STATX_MNT_ID) but
 * on another device: btrfs subvolumes and snapshots, which are not mounts
 * but have a device number of their own.  Each is handed to @found and not
 * entered (what is below it comes along with it); another mount is neither
 * handed nor entered (the mount table lists it); only directories are
 * looked at (dirstack_list_dirs()).
 * Returns: 0, negative errno of the walk or of @found. */
int area_subvolumes(int rootfd, area_subvol_fn found, void *userdata);

/* ---------------------------------------------------------------- area_sync.c */

/* Whether @entry below @dirfd is a working directory a sync of area @area
 * left: opened without following a link, a directory, root's, mode 0700,
 * and marked with the xattr trusted.storaged.sync = @area; or, when
 * @recorded (the area's record names @entry), without any mark (a sync
 * killed before it marked it; a filesystem without trusted xattrs).  A
 * user can give none of that to a directory of theirs.
 * Returns: 1 with the directory open in *@ret_fd (the caller closes it);
 * 0 (also when @entry does not exist or is no directory), *@ret_fd -1;
 * negative errno. */
int area_sync_dir_check(int dirfd, const char *entry, const char *area, bool recorded, int *ret_fd);

/* Removes the working directories a sync of @area left below @dirfd (may
 * be O_PATH) when a crash stopped it: @recorded (the record's sync_dir, or
 * NULL) and every other that area_sync_dir_check() finds to be one, and
 * one that is root's, 0700, unmarked and empty (its mark was not on the
 * disk yet at a power cut); never a user's entry with data, whatever its
 * name.  @dev: the filesystem of @dirfd.
 * Returns: 0 or negative errno. */
int area_recover_sync(int dirfd, dev_t dev, const char *area, const char *recorded);

/* area_sync() with the record locked already: @recfd, read into @st, whose
 * sync_dir it records in place (state_area_write_fd()).  *@ret_changes
 * (may be NULL): the entries the committed sync put, deleted or kept into
 * the directory (struct copy_result), 0 when it found nothing changed.
 * @at_stop: the area is unmounted next: the area's version of each entry
 * the sync could not carry is kept in the directory's
 * .storaged-rescue/AREA-TIME (copy.h), said in one line.
 * Returns: 0 or negative errno, with one diag_error; -COPY_SYNC_KEPT_BOTH:
 * committed, with entries kept beside or rescued (said). */
int area_sync_locked(const struct area_dirs *d, int recfd, struct state_area *st, size_t *ret_changes,
		     bool at_stop, struct diag_list *m);

/* Whether @s has the form of a sync's working directory's name
 * (".storaged-sync." and 32 hex digits). */
bool area_sync_is_dir_name(const char *s);

/* Creates the working directory of a sync below @lowerfd under a new
 * random name (into @name, SYNC_DIR_NAME_MAX bytes), recorded in @st
 * through the locked record @recfd before it exists and marked once it
 * does; @hidefd >= 0: a whiteout of that name is made there first (an
 * overlay's upper layer root: the overlay does not show it).
 * Returns: the open directory, or negative errno. */
int area_sync_dir_create(int lowerfd, int recfd, struct state_area *st, char *name, int hidefd);

/* Empties the working directory @fd and removes it from @parent when
 * @entry still names it.  Returns: 0 or negative errno. */
int area_sync_dir_remove(int parent, const char *entry, int fd, dev_t dev);

/* The diag_info of a sync back of @st that ran: the one wording of `sync`
 * and `stop`; @both: entries changed on both sides were kept twice (said
 * before, in an error). */
void area_note_synced(const struct state_area *st, bool both, struct diag_list *m);

/* ---------------------------------------------------------------- area_overlay.c */

/* seed = overlay: the upper and work directories in the mounted area
 * (s->d.area), the upper one with the owner and mode of the area's root.
 * Returns: 0 or negative errno, with one diag_error. */
int area_overlay_prepare(struct setup *s, const struct stat *root, struct diag_list *m);

/* Mounts the overlay (lower: s->d.lower; upper and work in s->d.area;
 * redirect_dir, metacopy, index and xino off) over the directory
 * (s->path_fd), source s->st.device, with @attr (MOUNT_ATTR_*); its
 * mount ID into s->st.cover_id.  Returns: 0 or negative errno, with one
 * diag_error (the kernel's reason when it logged one). */
int area_overlay_cover(struct setup *s, unsigned int attr, struct diag_list *m);

/* Applies the upper layer of the overlay area @st to its directory
 * (d->lower), crash-safe: each entry is copied complete (data on the
 * disk) into the sync's working directory, then renamed into place; what
 * is deleted is renamed into the working directory; syncfs; then the
 * working directory is removed.  @mounted: the overlay is mounted (a
 * `sync`): directories new to the lower layer are marked opaque in the
 * upper one first, and only what changed since the last sync that
 * succeeded is applied; false (stop, the overlay unmounted): all of it.
 * *@ret_changes: entries put or deleted.  Returns: 0 or negative errno,
 * with one diag_error naming the entry. */
int area_overlay_sync(const struct area_dirs *d, int recfd, struct state_area *st, bool mounted,
		      size_t *ret_changes, struct diag_list *m);

#endif
