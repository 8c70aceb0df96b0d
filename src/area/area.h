/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * RAM build areas (effects): a tmpfs, or a zram/brd ramdisk with a
 * filesystem on it, mounted privately under the state directory, seeded with
 * a copy of the persistent directory, then bind-mounted over it.  Sizing is
 * pure and lives in area_size.c; everything here touches the system.
 *
 * Layout under @state_dir (normally /run/storaged):
 *
 *   areas/<name>/state   the area's record (struct state_area), written
 *                        and read by state.c, replaced atomically
 *   areas/<name>/area    the backend, mounted privately
 *   areas/<name>/lower   private bind of the covered directory (sync target)
 *
 * Every function here returns a negative errno and appends one diag_error()
 * that says what failed, where (area name, path, device) and what to do.
 * None prints, except area_setup()'s progress line on a terminal.
 */
#ifndef STORAGED_AREA_H
#define STORAGED_AREA_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include <sys/types.h>

#include "plan/area_size.h"
#include "parse/config.h"
#include "shared/diag.h"

/*
 * @path: directory to walk (symlinks are not followed, other filesystems
 *        mounted below it are not entered)
 * @ret: filled on success: bytes = sum of st_blocks × 512, inodes = files,
 *       directories, symlinks and others, the root included, hard-linked
 *       inodes counted once; valid = true
 *
 * Returns: 0; negative errno when the walk fails (then @ret->valid is false
 * and @ret->error holds the errno).
 */
int area_survey_path(const char *path, struct area_survey *ret);

/*
 * @path: directory, opened as area_survey_path() opens it
 * @ret: as area_survey_path() fills it, of the directory alone (its
 *       blocks, 1 inode): nothing below it is walked
 *
 * For an area whose sizes are given and that copies nothing at start
 * (seed = overlay): its start must not cost more for a larger tree.
 *
 * Returns: 0; negative errno when it cannot be opened as a directory.
 */
int area_survey_root(const char *path, struct area_survey *ret);

/*
 * @sz: sizes from area_size_resolve() (bytes, inodes, and whether the seed
 *      fits); NULL for an area planned before its directory's filesystem
 *      was mounted: its directory is surveyed and the area sized now
 *      (RAM from /proc/meminfo)
 * @state_dir: storaged's state directory (e.g. "/run/storaged")
 * @self: the command @msgs tell the user to run, before its verb (log_self():
 *        "storaged" and the options in use); NULL for "storaged"
 * @msgs: one diag_error on failure; diag_warning for processes that hold
 *        files open under @a->path
 *
 * Steps: 1. refuse when the seed does not fit (@sz->why) or the size is above
 * RAM + swap (sysinfo_memory_room(), unless @a->force); 2. create the backend (tmpfs
 * mount; zram: hot_add, disksize, mkfs.<fs>, mount) at areas/<name>/area,
 * private; 3. read back the effective limits (statvfs), a mismatch is an
 * error; 4. bind @a->path privately at areas/<name>/lower; 5. seed: libarchive
 * disk-to-disk copy (owner, mode, times, ACLs, xattrs, fflags, hard links,
 * device nodes, sparse files); 6. root owner/mode from @a or from @a->path;
 * 7. warn about open files; 8. bind the area over @a->path (also when
 * @a->path is a mount point itself: the area goes over that filesystem, is
 * seeded from it and synced back into it); 9. carry each filesystem
 * mounted below @a->path onto the area at its path (a recursive bind of
 * it: it stays visible there, is never seeded nor synced, and stays
 * mounted where it was after stop); 10. write the state file, with
 * the mount IDs of 8 and 9.  An interrupted sync back from an earlier run
 * is cleaned up before the seed (see area_sync()).
 *
 * On any failure everything done so far is undone: @a->path stays untouched
 * and uncovered.  An area already set up (its record present, and the bind
 * with the recorded mount ID still on @a->path) is left alone and 1
 * returned; never "something is mounted on @a->path".
 *
 * Returns: 0; 1 when set up already; -EINVAL when @sz is NULL and the area cannot be sized (its
 * directory is missing); -ENOSPC when the seed does not fit (bytes or inodes); -ENOMEM
 * when the size is above memory + swap; -ENODEV when the backend's driver is
 * missing (brd); -EEXIST when a stale state exists, or the record of a
 * finished setup whose bind someone unmounted or moved (run stop first);
 * other negative errno from the failing system call or helper.
 */
int area_setup(const struct area_config *a, const struct area_sizing *sz, const char *state_dir,
	       const char *self, struct diag_list *msgs);

/*
 * @self: as area_setup()
 * @ret_path: owned, on 1: the path the area was set up on (the record's,
 *            which may differ from @a->path when the config changed)
 * @why: on -EEXIST, area_setup()'s refusal, for the user
 *
 * What area_setup() finds first, for check and --dry-run: the record of a
 * finished setup of @a's name, and its bind over the directory.
 *
 * Returns: 1 set up already, the bind still there (active, covered or
 * degraded): start leaves it as it is; -EEXIST set up, but its bind was
 * unmounted or moved: start refuses it; 0 no such record: start sets it
 * up; -ENOMEM.
 */
int area_found_set_up(const char *state_dir, const char *self, const struct area_config *a, char **ret_path,
		      char *why, size_t len);

/*
 * @self: as area_setup()
 * @msgs: one diag_error on failure; on success, one diag_info "synced
 *        back" only when the sync put, deleted or kept an entry (a sync
 *        that found nothing changed adds nothing: quiet on success)
 *
 * Copies the area back into its directory (through the private lower bind),
 * under an exclusive flock() on the state file, crash-safe (area_sync.c,
 * area_sync_locked()): every file is at every instant either its complete
 * old or its complete new version, and files deleted in the area are
 * deleted.  Works whether or not the area has persist = yes.
 *
 * Mount points below the directory (and the directories that lead to one)
 * are left where they are, never renamed.  An area whose bind over its
 * directory someone unmounted or moved, or whose private mounts are gone,
 * is not synced: the directory may hold newer files (area_check_syncable()).
 *
 * Returns: 0 only when the whole sync reached the disk (syncfs); -ENOENT when
 * the area is not active; -ESTALE when its mounts changed as above; other
 * negative errno.
 */
int area_sync(const char *state_dir, const char *self, const char *name, struct diag_list *msgs);

/*
 * @self: as area_setup()
 * @do_sync: sync back first when the area has persist = yes
 * @msgs: one diag_error on failure
 *
 * Undoes area_setup() in reverse, only what exists, each mount by its
 * recorded ID: sync (when persist and @do_sync; a failed sync stops the
 * teardown so no data is lost), detach the filesystems carried from below,
 * unbind the path, unmount lower and area, release the zram device (reset +
 * hot_remove, only if storaged created it), remove areas/<name>/.  A busy
 * path is not unmounted lazily: the error names each mount made on the area
 * after start (with the umount that frees it), else the processes.  A
 * persist area whose bind someone unmounted or moved is not synced over its
 * directory: the first teardown keeps it and says where its content is
 * (-ESTALE), the next one discards it (-ENODATA).
 *
 * Returns: 0 (also when nothing existed); -EBUSY; -ESTALE; -ENODATA when
 * the area was torn down but its content was not synced back (said in
 * @msgs); -COPY_SYNC_KEPT_BOTH (copy.h) when it was torn down after a sync
 * back that kept entries changed on both sides twice in the directory
 * (said in @msgs: the user has to merge them); other negative errno.
 */
int area_teardown(const char *state_dir, const char *self, const char *name, bool do_sync, struct diag_list *msgs);

/* What the mount table says of an area now (area_status.state). */
enum area_state {
	AREA_STATE_ACTIVE, /* bound over its directory, nothing over it */
	AREA_STATE_GONE, /* its bind over the directory was unmounted or moved
			    by someone else: the directory is uncovered */
	AREA_STATE_COVERED, /* someone mounted something over it */
	AREA_STATE_DEGRADED, /* bound, but a private mount of it or a
				filesystem carried onto it is missing, or
				its setup did not finish */
	AREA_STATE_INTERRUPTED, /* a setup, a stop or a sync back was
				   killed midway (area_status_list() only):
				   a start (setup) or a stop run
				   again finishes it */
};
#define AREA_STATE_LAST AREA_STATE_INTERRUPTED

/* "active", "gone", "covered", "degraded", "interrupted" (static text). */
const char *area_state_name(enum area_state s);

struct area_status {
	enum area_state state;
	char *state_why; /* owned, NULL when active: e.g. "its bind over
			    /var/log was unmounted by someone else" */
	char *name, *path, *backend, *device;
	uint64_t size_bytes, used_bytes; /* statvfs of the area, bytes */
	uint64_t avail_bytes; /* what is left for files (f_bavail), bytes */
	uint64_t inodes_total, inodes_used;
	bool measured; /* the figures are statvfs(3)'s of the mounted area */
	bool persist;
	uint64_t sync_interval_usec; /* the one it was set up with, µs (its record) */
	bool seeded; /* seeded from path */
	bool overlay; /* seed = overlay: the figures are the upper layer's */
	bool kept_both; /* a sync since start kept entries on both sides */
	char *fs; /* filesystem on a ramdisk ("tmpfs" for tmpfs) */
	uint64_t cover_id; /* mount ID of its bind over the directory, 0: unknown */
	/* the limits it was set up with (its record): where a growing area
	 * started */
	uint64_t start_size_bytes, start_inodes;
	/* grow = yes, set by area_grow_fill() (not by area_status_list()):
	 * the most it can grow to now within memory-reserve */
	bool grow;
	uint64_t ceiling_bytes, ceiling_inodes;
};

/* `status` warns, and exits 1, from this use of bytes or inodes on. */
#define AREA_NEARLY_FULL_PERCENT 90

/*
 * @ret_bytes_pct: bytes used, percent, as df(1) counts them: used against
 *                 used + available (an ext4's reserved blocks are not
 *                 available)
 * @ret_inodes_pct: inodes used, percent of all
 *
 * Pure.  Returns: true when either reaches AREA_NEARLY_FULL_PERCENT;
 * false (and 0 %) when @a was not measured.
 */
bool area_status_use(const struct area_status *a, unsigned *ret_bytes_pct, unsigned *ret_inodes_pct);

/*
 * Pure.  Returns: true when @a was measured with no byte available (as
 * df(1) counts them) or every inode used: a write that needs one fails
 * with ENOSPC now (df's 100 %, rounded up, may still leave one).
 */
bool area_status_full(const struct area_status *a);

/*
 * @v: statvfs(3) of the mounted area
 *
 * Pure.  Sets the figures of @o (size, used, available bytes; inodes and
 * inodes used) from @v, and @o->measured.
 */
struct statvfs;
void area_status_measure(struct area_status *o, const struct statvfs *v);

/*
 * @buf: receives which limit @a hit, in the words `status` and the
 *       resident's log use: "out of inodes (300000 of 300000)", "out of
 *       bytes (32M of 32M)", or both joined by "and"
 * @ret_limit: NULL, or set to "bytes", "inodes" or "bytes,inodes" (static),
 *             as `status --json` and the metrics name it
 *
 * Pure.  Returns: @buf; NULL (and *@ret_limit NULL) when @a is not full
 * (area_status_full()).
 */
const char *area_status_full_words(const struct area_status *a, char *buf, size_t len, const char **ret_limit);

/*
 * @v: the areas (area_status_list()), @n of them
 * @c: the configuration: which areas have grow = yes, the memory-reserve
 * @available: MemAvailable, bytes
 * @total: MemTotal, bytes (what memory-reserve = N% is a share of)
 *
 * Pure.  Sets grow, ceiling_bytes and ceiling_inodes of each active,
 * measured tmpfs area whose [area] section says grow = yes: how far it can
 * grow now (area_grow_decide() with the others' unfilled parts).
 */
void area_grow_fill(struct area_status *v, size_t n, const struct config *c, uint64_t available, uint64_t total);

/*
 * @v: the areas, with grow set (area_grow_fill())
 * @i: the one growing
 * @available, @reserve: MemAvailable and memory-reserve, bytes
 * @ret: the budget of @v[@i]: the other growing areas' unfilled parts
 *       counted (plan/area_grow.h)
 *
 * Pure.
 */
struct grow_budget;
void area_grow_budget(const struct area_status *v, size_t n, size_t i, uint64_t available, uint64_t reserve,
		      struct grow_budget *ret);

/*
 * @area_dir: where the area is mounted privately (area_private_mounts())
 * @dev: its st_dev as last seen (0: not checked): a directory that is no
 *       longer that mount is left alone
 * @size: the new size=, bytes; @inodes: the new nr_inodes=
 *
 * Raises the limits of the tmpfs mounted on @area_dir: fspick(2) of its
 * superblock, fsconfig(2) size= and nr_inodes=, FSCONFIG_CMD_RECONFIGURE.
 * Every mount of it (the bind over the directory as well) has the new
 * limits at once; its content and the mounts' flags stay as they are.
 *
 * Returns: 0; -ESTALE when @area_dir is no longer a tmpfs mount root of
 * @dev; negative errno of the system calls (-EINVAL: the kernel refused
 * the values).
 */
int area_grow_remount(const char *area_dir, dev_t dev, uint64_t size, uint64_t inodes);

/*
 * @self: the command the areas' state_why tell the user to run (as
 *        area_setup())
 * @killed: no storaged is at work on @state_dir (cli/liveness.h): an
 *          area directory without a record but with the area or the
 *          directory's private bind mounted was left by a setup that was
 *          killed, and is listed after the others, "interrupted", with what
 *          is mounted and the commands that finish or undo it; false: such
 *          directories are a setup under way, and not listed
 * @ret: owned array, in setup order; free with area_status_free()
 *
 * Returns: 0 (an empty list when no area is active); -ENOMEM; other
 * negative errno when the state directory cannot be read.
 */
int area_status_list(const char *state_dir, const char *self, bool killed, struct area_status **ret,
		     size_t *ret_n);
void area_status_free(struct area_status *v, size_t n);

/*
 * @ret: owned strv of the names of every area directory under
 *       @state_dir/areas, complete or left by an interrupted setup, in
 *       name order; free with strv_free()
 *
 * Returns: 0 (an empty list when there is none); -ENOMEM; other negative
 * errno when the directory cannot be read.
 */
int area_list_names(const char *state_dir, char ***ret);

/*
 * @ret_area: where the area itself is mounted (owned by the caller)
 * @ret_lower: where the covered directory stays reachable (owned)
 *
 * Returns: 0; -EINVAL for an invalid name; -ENOMEM.
 */
int area_private_mounts(const char *state_dir, const char *name, char **ret_area, char **ret_lower);

#endif
