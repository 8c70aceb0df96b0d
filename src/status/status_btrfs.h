/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What `status` says of a btrfs filesystem storaged assembled, from the
 * devices now (their superblocks, btrfs_group()) rather than from what
 * start recorded: members present, stale members, and what to do where it
 * is mounted.  The kernel's view (missing, not in use) is status_live.c's.
 */
#ifndef STORAGED_STATUS_BTRFS_H
#define STORAGED_STATUS_BTRFS_H

#include <stddef.h>

#include "devices/btrfs.h"
#include "state/state.h"
#include "status_live.h"

/**
 * status_btrfs_reason:
 * @in: the system now (its mount table and /sys/fs/btrfs)
 * @l: the btrfs filesystems of the devices now
 * @rec: a STATE_BTRFS record that is done
 * @buf: e.g. "2/2 members; devid 2 ('/dev/loop1') is stale: generation 8
 *       against 11 of the others; it was away while the filesystem was
 *       written to: only a scrub rewrites what it missed: run `btrfs scrub
 *       start /srv/data`"
 *
 * A member stale at start whose generation has caught up since (a
 * read-write mount writes every member's superblock) is still said: only
 * a scrub rewrote what it missed; a scrub storaged started is said
 * instead of advice.
 *
 * Returns: @buf.
 */
char *status_btrfs_reason(const struct live_input *in, const struct btrfs_fs_list *l,
			  const struct state_record *rec, char *buf, size_t len);

#endif
