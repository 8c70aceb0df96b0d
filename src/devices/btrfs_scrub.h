/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * stale-member = scrub: the effect of a PLAN_SCRUB step (plan.h), a scrub
 * of a btrfs filesystem that storaged mounted (not degraded) while one of
 * its members was stale.
 */
#ifndef STORAGED_BTRFS_SCRUB_H
#define STORAGED_BTRFS_SCRUB_H

#include <stdbool.h>
#include <stdint.h>

/*
 * @mountpoint: where the btrfs filesystem is mounted
 *
 * Runs "btrfs scrub start MOUNTPOINT" (btrfs-progs, found by
 * spawn_find_program()): without -B it starts the scrub in the background
 * and returns (btrfs-scrub(8)); the scrub reads every copy and rewrites the
 * stale member's blocks from the good copies.  Logs nothing.
 *
 * Returns: 0 once started; -ENOENT when there is no btrfs program; -EIO
 * when it exited other than 0; other negative errno from spawning it.
 */
int btrfs_scrub_start(const char *mountpoint);

/* Where btrfs-progs keeps what `btrfs scrub status` shows of finished
 * scrubs (SCRUB_DATA_FILE of its cmds/scrub.c). */
#define BTRFS_SCRUB_STATUS_DIR "/var/lib/btrfs"

/*
 * @dir: BTRFS_SCRUB_STATUS_DIR, or a test's copy
 * @fsid: the filesystem's UUID, as in the file's name
 * @since_usec: wall clock, µs
 *
 * Whether the last scrub of every device of @fsid that btrfs-progs
 * recorded in @dir/scrub.status.FSID (one "FSID:DEVID|key:value|..." line
 * each, whoever ran it, `btrfs scrub start` or storaged) started in the
 * second of @since_usec or later (it records whole seconds) and finished,
 * not cancelled, with no uncorrectable error: then it rewrote every block
 * a stale member missed.  Reads only.
 *
 * Returns: true when so; false when not, or the file cannot be read.
 */
bool btrfs_scrub_finished_since(const char *dir, const char *fsid, uint64_t since_usec);

#endif
