/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The state directory as the commands use it: its lock, and its run state
 * read with every reason it cannot be trusted spelled out.  Shared by
 * start, stop, status and sync, none of which calls another.
 */
#ifndef STORAGED_STATEDIR_H
#define STORAGED_STATEDIR_H

#include <stdint.h>

#include "shared/log.h"
#include "state/state.h"

/*
 * Every function here logs what is wrong with the remedy, and returns
 * -EPERM for any problem of the state directory or its state file
 * (untrusted, a symbolic link, damaged, unreadable, unwritable), which
 * every command reports with one exit status (EXIT_STATE,
 * shared/invocation.h).
 */

/*
 * @lg: why it cannot be used, with the remedy
 *
 * @dir must be a directory, not a symbolic link, owned by root, that
 * group and others cannot write, since stop later trusts what is recorded
 * in it; and only root may replace it: every directory above it is root's
 * and closed to group and others, or root's and sticky (/tmp) with the
 * entry below it root's, and every link on the way is root's where only
 * root can replace it (as it is written: its target is checked resolved) (as sshd's StrictModes and systemd's
 * chase(CHASE_SAFE) judge a path).
 *
 * Returns: 0 (also when @dir does not exist, if it would be made where
 * only root can replace it); -EPERM; -ENOMEM.
 */
int statedir_check(const char *dir, const struct logger *lg);

/* How long start and stop wait for another storaged's lock: systemd's
 * default start timeout (DefaultTimeoutStartSec=90s). */
#define STATEDIR_LOCK_WAIT_SEC 90U

/*
 * Returns: STATEDIR_LOCK_WAIT_SEC, or the seconds STORAGED_TEST_LOCK_WAIT
 * says (0..3600, read with secure_getenv(3): tests only).
 */
unsigned statedir_lock_wait_sec(void);

/*
 * @dir: the state directory (absolute), created (0755) when missing
 * @wait_sec: how long to wait for another storaged that holds the lock
 * @lg: why it failed, with the remedy; after a second of waiting, whom it
 *      waits for (info)
 *
 * One storaged at a time changes the system: takes an exclusive flock(2)
 * on @dir/lock, once statedir_check() passed, waiting up to @wait_sec for
 * the one that holds it (named by its pid from /proc/locks).  Under a
 * service manager the wait first extends its timeout past @wait_sec
 * (EXTEND_TIMEOUT_USEC=, with a STATUS= line naming the wait).
 *
 * Returns: the locked fd (caller closes); -EPERM when @dir cannot be
 * used; -EWOULDBLOCK when another storaged still held the lock after
 * @wait_sec; -EINTR when SIGINT or SIGTERM, blocked, came meanwhile (a
 * resident's loop reads it); -ENOMEM.
 */
int statedir_lock(const char *dir, unsigned wait_sec, const struct logger *lg);

/*
 * @lg: why the state cannot be used and what to do about it; a warning
 *      for a torn last record
 *
 * Returns: 0; -EPERM (statedir_check(), or any error of state_load());
 * -ENOMEM.
 */
int statedir_load_state(const char *dir, const struct logger *lg, struct state *st);

/*
 * @lg: why the state could not be written
 *
 * Returns: 0; -EPERM when it could not be written.
 */
int statedir_save_state(const char *dir, const struct logger *lg, struct state *st);

/*
 * A pass of `start` (or of the resident) under way: DIR/unfinished holds
 * "start SECONDS\n" (when it began, seconds since the epoch) from before
 * its first step until it ran to its end, and a `stop` that went through
 * the state removes it.  Left behind, it is the one trace of a start
 * killed before it recorded anything, or between two of its records (the
 * steps it had not reached have none): `status` says so while no storaged
 * holds the state directory's lock.
 */
#define STATEDIR_UNFINISHED "unfinished"

/*
 * statedir_run_begin: writes DIR/unfinished (atomically, synced).
 * Returns: 0; negative errno of writing it.
 */
int statedir_run_begin(const char *dir);

/*
 * statedir_run_end: removes DIR/unfinished.
 * Returns: 0 (also when there is none); negative errno.
 */
int statedir_run_end(const char *dir);

/*
 * statedir_run_unfinished:
 * @ret_began: when the pass began, seconds since the epoch (0: not said)
 *
 * Returns: 1 when DIR/unfinished is there (@ret_began set), 0 when not;
 * negative errno of reading it.
 */
int statedir_run_unfinished(const char *dir, int64_t *ret_began);

#endif
