/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * stale-member = scrub: after a start, a scrub of each btrfs filesystem
 * that storaged mounted (not degraded) while one of its members was stale.
 */
#ifndef STORAGED_BTRFS_SCRUB_H
#define STORAGED_BTRFS_SCRUB_H

#include "shared/log.h"
#include "state/state.h"
#include "world/world.h"

/**
 * btrfs_scrub_targets:
 * @w: the world the run was planned from (plan, inventory, btrfs list)
 * @st: the state after the run
 * @ret: strv of mount points to scrub (caller frees), NULL for none
 *
 * Pure.  A MOUNT step of a btrfs entry that was not already mounted,
 * whose state record says done in this run (STATE_DONE: not degraded),
 * and whose filesystem has a stale member (btrfs_member_stale()).  The
 * mount point is the record's resolved one, else the entry's target.
 *
 * Returns: 0 or -ENOMEM.
 */
int btrfs_scrub_targets(const struct world *w, struct state *st, char ***ret);

/**
 * btrfs_scrub_start:
 * @mountpoints: strv from btrfs_scrub_targets()
 * @lg: where each start (or failure) is logged
 *
 * Runs "btrfs scrub start MOUNTPOINT" (btrfs-progs, found by
 * spawn_find_program()) for each: without -B it starts the scrub in the
 * background and returns; the scrub reads every copy and rewrites the
 * stale member's blocks from the good copies.
 *
 * Returns: 0, or the first negative errno (-ENOENT: no btrfs program).
 */
int btrfs_scrub_start(char **mountpoints, const struct logger *lg);

#endif
