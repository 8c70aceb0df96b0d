/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The state directory as the commands use it: its lock, and its run state
 * read with every reason it cannot be trusted spelled out.  Shared by
 * start, stop and status, none of which calls another.
 */
#ifndef STORAGED_STATEDIR_H
#define STORAGED_STATEDIR_H

#include "shared/log.h"
#include "state/state.h"

/**
 * statedir_lock:
 * @dir: the state directory (absolute), created (0755) when missing
 * @lg: why it failed, with the remedy
 *
 * One storaged at a time changes the system: takes an exclusive,
 * non-blocking flock(2) on @dir/lock.  @dir must be a directory owned by
 * root that group and others cannot write, since stop later trusts what
 * is recorded in it.
 *
 * Returns: the locked fd (caller closes); -EPERM when @dir is not
 * trustworthy (a usage error); -EWOULDBLOCK when another storaged holds
 * the lock; other negative errno from mkdir(2)/open(2).
 */
int statedir_lock(const char *dir, const struct logger *lg);

/**
 * statedir_load_state:
 * @dir: the state directory
 * @lg: why the state cannot be used and what to do about it; a warning
 *      for a torn last record
 * @st: filled by state_load()
 *
 * Returns: 0 or negative errno (see state_load()).
 */
int statedir_load_state(const char *dir, const struct logger *lg, struct state *st);

#endif
