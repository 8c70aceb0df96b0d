/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * stale-member = scrub: the effect of a PLAN_SCRUB step (plan.h), a scrub
 * of a btrfs filesystem that storaged mounted (not degraded) while one of
 * its members was stale.
 */
#ifndef STORAGED_BTRFS_SCRUB_H
#define STORAGED_BTRFS_SCRUB_H

/**
 * btrfs_scrub_start:
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

#endif
