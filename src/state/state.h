/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What storaged did and found, kept under the state directory
 * (/run/storaged by default) so that `stop` undoes exactly that and `status`
 * can tell what is mounted, waiting or failed, and why.
 *
 *   <dir>/state          one record per step outcome (ini): rewritten
 *                        atomically, or changed records appended
 *   <dir>/ready/<fsid>   one empty file per assembled btrfs filesystem
 *   <dir>/areas/<name>/state   one RAM area's record (struct state_area),
 *                        in the same format, one file per area so that
 *                        setup, sync and stop lock one area with flock()
 *   <dir>/warned         the configuration's warnings the last start
 *                        printed (world_note_warnings())
 */
#ifndef STORAGED_STATE_H
#define STORAGED_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define STATEDIR_WARNED "warned"

#include "parse/config.h"

enum state_kind {
	STATE_MOUNT, /* a deferred fstab entry */
	STATE_AREA, /* a RAM area (its details live with the area module) */
	STATE_BTRFS, /* a multi-device btrfs filesystem */
};

enum state_status {
	STATE_WAITING, /* waiting for devices */
	STATE_MOUNTING, /* written before the mount starts: a crash right after
			   it leaves a record, so the next run adopts the mount */
	STATE_DONE, /* mounted / set up / assembled by storaged */
	STATE_DEGRADED, /* mounted with -o degraded */
	STATE_INCOMPLETE, /* btrfs: members still missing at the deadline */
	STATE_PRESENT, /* was already in place: not storaged's to undo */
	STATE_FAILED, /* failed: see reason */
	STATE_SKIPPED, /* not attempted: a dependency failed (see reason) */
};

/* What storaged decided for a btrfs filesystem once its wait ended. */
enum btrfs_decision {
	DECISION_NONE, /* not decided (yet), or a record of an older storaged */
	DECISION_COMPLETE, /* every member came: mounted as usual */
	DECISION_DEGRADED, /* members missing: mounted -o degraded by policy */
	DECISION_READ_ONLY, /* members missing: mounted -o ro,degraded by policy */
	DECISION_REFUSED, /* members missing and degraded = no: not mounted */
	DECISION_STALE_REFUSED, /* a stale member and stale-member = refuse: not mounted */
};
#define DECISION_LAST DECISION_STALE_REFUSED

struct state_record {
	enum state_kind kind;
	char *id; /* mount point, area name or fsid (owned) */
	char *source; /* fs_spec, area path, or member list (owned, may be NULL) */
	char *fstype; /* may be NULL */
	enum state_status status;
	char *reason; /* owned, may be NULL */
	unsigned seq; /* order of undoable actions (0 when nothing to undo) */
	uint64_t duration_usec; /* how long the step took */
	bool nofail;
	unsigned mount_id; /* STATE_MOUNT done by storaged: the mount table's ID */
	uint64_t mount_unique_id; /* and its never-reused ID, or 0 */
	/* and what statx(2) said of its root when it was made (struct
	 * mount_identity, mount/mountfd.h), which tells it from a later mount
	 * given the same ID where there is no never-reused one; 0: unknown */
	uint64_t mount_root_dev; /* makedev(stx_dev_major, stx_dev_minor) */
	uint64_t mount_root_ino; /* stx_ino */
	uint64_t mount_root_btime_ns; /* stx_btime, 0 when not reported */
	char *mountpoint; /* STATE_MOUNT: mount point with links resolved, or NULL */
	bool recursive; /* STATE_MOUNT: an rbind: its submounts are undone with it */
	/* STATE_BTRFS done or incomplete: what the wait for the members found,
	 * which `status` words (cmd_report.c); members_expected is 0 when not
	 * known, and in the records of an older storaged, whose reason holds
	 * the words */
	uint64_t members_present, members_expected;
	uint64_t waited_usec; /* incomplete: how long the wait was */
	char *members_note; /* owned, may be NULL: done: the stale members
			       (btrfs_format_stale()); incomplete: the missing
			       ones (btrfs_format_missing()) */
	/* STATE_BTRFS: the decision, the wait it followed in words ("up to
	 * 5s") and who arrived when ("devid 1 /dev/loop3 at +0s, …", times
	 * from the start of the wait); strings owned, may be NULL */
	enum btrfs_decision decision;
	char *wait_policy;
	char *arrivals;
	/* STATE_BTRFS mounted degraded: the members that came back after the
	 * mount and what the kernel did with them (exec/late_member.h);
	 * owned, may be NULL */
	char *late;
	uint64_t scrub_started_usec; /* STATE_BTRFS: when storaged started a
					scrub of it (stale-member = scrub),
					wall clock µs; 0: it did not */
	uint64_t stale_usec; /* STATE_BTRFS done with a stale member
				(members_note): when start found it, wall
				clock µs; a scrub finished after it repaired
				it (btrfs_scrub_finished_since()); 0: not
				known (an older storaged's record) */
	bool dirty; /* changed (state_put) since the last state_save/state_append */
};

struct state {
	struct state_record *v;
	size_t n;
	unsigned last_seq;
	void *journal; /* FILE * open for state_append() on <dir>/state, or NULL */
	size_t torn_bytes; /* state_load(): bytes of a record cut short at the
			      end (storaged killed while appending), ignored */
	void *index; /* state.c's lookup index and dirty list of v[] (owned), or NULL */
};

/*
 * @ret: records from <dir>/state; empty when the file does not exist
 * @ret_line: on -EBADMSG, the first line that could not be read
 *
 * The state says what `stop` unmounts, so it is trusted only when @dir and
 * the file are owned by root and not writable by group or others.
 *
 * Text after the last whole record (one that ends in "complete = yes") is
 * what a crash left of an append, and is ignored; so is everything after the
 * header comment of a file with no such line.
 *
 * Returns: 0; -EPERM for an untrusted owner or mode, or not a regular
 * file; -EBADMSG for a corrupt file; -ENODATA for an empty one (storaged
 * writes a header first, so it was cut short); -EFBIG over 64 MiB;
 * negative errno from reading.
 */
int state_load(const char *dir, struct state *ret, unsigned *ret_line);

/*
 * @buf: the text of a state file, NUL-terminated at @len (not changed)
 * @ret, @ret_line: as for state_load()
 *
 * The parser of state_load(), without the file and its trust checks.
 *
 * Returns: 0; -EBADMSG for a corrupt text; -ENOMEM.
 */
int state_parse(char *buf, size_t len, struct state *ret, unsigned *ret_line);

/*
 * Writes <dir>/state atomically (temporary file, fsync, rename), mode 0644,
 * creating @dir (0755) when missing; every record counts as saved after.
 *
 * Returns: 0 or negative errno.
 */
int state_save(const char *dir, struct state *s);

/*
 * Appends the records changed since the last save (->dirty) to <dir>/state,
 * on a file kept open until state_save() or state_done(): a
 * cost per changed record, not per record, for the saves the executor makes
 * around every step.  The loader keeps the last copy of a record and drops a
 * final record that a crash cut short (each record ends with "complete =
 * yes"), so the file always reads as the old or the new state.  No fsync:
 * the state describes mounts, which do not outlive the running kernel, and
 * the page cache keeps what storaged wrote when storaged is killed.  The
 * first call for @s rewrites the file with state_save(), so appends always
 * follow whole records.  Compact with state_save() when a run ends.
 *
 * Returns: 0; -EPERM when the file is not root's or is group/other-writable;
 * negative errno.
 */
int state_append(const char *dir, struct state *s);

/*
 * Returns: the record of @kind and @id, or NULL (borrowed).
 */
struct state_record *state_find(struct state *s, enum state_kind kind, const char *id);

/*
 * Creates or updates the record of @kind/@id.  Strings are copied; a NULL
 * @reason clears the reason, and the members fields are cleared (the
 * caller sets them after).  When @undoable, the record gets the next seq.
 *
 * Returns: the record (borrowed), or NULL on -ENOMEM.
 */
struct state_record *state_put(struct state *s, enum state_kind kind, const char *id,
			       const char *source, const char *fstype, enum state_status status,
			       const char *reason, bool undoable);

/*
 * @r: a record of @s changed in place (a field state_put() does not set)
 * Marks it changed, so that the next state_append() writes it.
 */
void state_touch(struct state *s, struct state_record *r);

/*
 * Returns: "complete", "degraded-by-policy", "read-only-by-policy",
 * "refused", "stale-refused", or NULL for DECISION_NONE (static).
 */
const char *state_decision_name(enum btrfs_decision d);

/** state_remove: drops the record of @kind/@id if present. */
void state_remove(struct state *s, enum state_kind kind, const char *id);

void state_done(struct state *s);

const char *state_status_name(enum state_status st);
const char *state_kind_name(enum state_kind k);

/**
 * state_mark_ready / state_clear_ready:
 * Create or remove <dir>/ready/<fsid> (an empty file other services can
 * wait for).  Returns: 0 or negative errno.
 */
int state_mark_ready(const char *dir, const char *fsid);
int state_clear_ready(const char *dir, const char *fsid);

/*
 * What one RAM area has set up (area.c), as recorded in its own file.  The
 * area code writes it ahead of each step that a crash could leave half done
 * (the zram device's number, then the complete area before it covers its
 * directory), so that the next start or stop finds and undoes it.
 */
struct state_area {
	char *name, *path, *fs, *device; /* owned; all set in a valid record */
	enum area_backend backend;
	int resource_id; /* the kernel resource storaged made for the backend
			    (area_backend.c: a zram device's number), which
			    the backend releases; -1: none */
	bool persist, seeded;
	uint64_t sync_interval_usec; /* the sync-interval it was set up with
					(µs; 0: none): the resident's once
					its section is gone or the
					configuration cannot be used */
	bool overlay; /* seed = overlay: the bind over the directory is an
			 overlayfs whose upper layer is in the area */
	bool covered; /* the area was bound over its directory: users may have
			 written to it, so a persist area is synced back */
	uint64_t size_bytes, nr_inodes;
	uint64_t started_usec; /* CLOCK_REALTIME at setup: orders stop */
	uint64_t cover_id; /* mount ID (STATX_MNT_ID) of the bind over the
			      directory; 0: not bound yet, or a record of an
			      older storaged */
	char *sync_dir; /* owned, may be NULL: the name of the sync back's
			   working directory in the covered directory,
			   written before it is created (area_sync.c), so
			   that a sync killed before the directory carries
			   its mark is still recovered */
	char *sync_failed; /* owned, may be NULL: why the last sync back
			      failed ("while STEP: CAUSE"), for `status`;
			      a sync back that succeeds clears it */
	char *sync_kept_both; /* owned, may be NULL: what the syncs since the
				 area was set up kept on both sides (their
				 messages, "; "-joined): said by status and
				 by stop until the area is torn down */
	uint64_t *carried; /* owned: mount IDs (STATX_MNT_ID) of the clones
			      of the filesystems mounted below the directory,
			      carried onto the area; stop detaches them */
	size_t n_carried;
	bool sync_refused; /* a stop refused to sync back over a directory
			      someone uncovered: the next stop discards */
	uint64_t stop_started_usec; /* a stop began to sync back and tear
				       it down (wall clock, µs); 0 when none
				       did, or one failed and said why: a
				       record that keeps it was left by a
				       stop that was killed */
	bool stop_synced; /* that stop's sync back finished and it goes on
			     to unmount the bind over the directory (an
			     overlay's: has unmounted it, as its sync comes
			     after): a stop run again after a kill that finds
			     the bind gone tears down without syncing
			     (area.c) */
};

/** state_area_init: an empty record (resource_id -1), ready for state_area_done(). */
void state_area_init(struct state_area *a);

/** state_area_done: frees the strings of @a and empties it (state_area_init()). */
void state_area_done(struct state_area *a);

/*
 * @file: path of the record (areas/<name>/state)
 *
 * Writes @file atomically with file_write_atomic() (atomic_file.h), mode
 * 0644: a crash leaves the old or the new record, and maybe a temporary
 * "@file.XXXXXX" beside it.
 *
 * Returns: 0 or negative errno.
 */
int state_area_write(const char *file, const struct state_area *a);

/*
 * @fd: the record, open for writing and locked (flock) by the caller
 *
 * Rewrites the record in place (pwrite at 0, ftruncate, fsync), so that the
 * caller's lock stays on the file others open: a rename would put an
 * unlocked file under the name.  A kill in the middle leaves a complete
 * record only when the new text is not shorter than the old one: use it
 * only to add or change a field of fixed length (sync_dir).
 *
 * Returns: 0 or negative errno.
 */
int state_area_write_fd(int fd, const struct state_area *a);

/*
 * @buf: the text of a record (need not be NUL-terminated)
 * @ret: filled on success; free with state_area_done()
 *
 * Returns: 0; -EBADMSG when a key is missing or a value is invalid (an
 * unknown backend, a number out of range) or the record is not complete;
 * -ENOMEM.  @ret is empty on failure.
 */
int state_area_parse(const char *buf, size_t len, struct state_area *ret);

/*
 * @fd: the record file, open for reading (its offset does not matter and
 *      is not changed for other users of @fd: pread)
 * @ret: as for state_area_parse()
 *
 * Returns: as state_area_parse(); -EFBIG above 64 KiB; negative errno from
 * reading.
 */
int state_area_read_fd(int fd, struct state_area *ret);

#endif
