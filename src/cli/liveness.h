/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Whether a storaged process is alive, from the kernel: a live process
 * holds a flock(2) on a file of the state directory for as long as it
 * lives (DIR/resident for a resident storaged, DIR/waiting for a start
 * waiting for nofail entries' devices, DIR/lock for any start or stop at
 * work), and the kernel drops it when the process dies, by SIGKILL too.
 * A pid file beside it is for messages and signals only: it is believed
 * only when the process it names has the lock file open, so a pid file
 * left by a killed process, whose pid the kernel gave to another, names
 * nobody.
 */
#ifndef STORAGED_LIVENESS_H
#define STORAGED_LIVENESS_H

#include <stdbool.h>
#include <sys/types.h>

/**
 * liveness_held:
 * @lock_path: a lock file in the state directory
 *
 * Tries a shared flock(2) without blocking and drops it at once.
 *
 * Returns: 1 when another open file holds an exclusive lock on it (the
 * try fails with EWOULDBLOCK); 0 when none does or the file does not
 * exist; negative errno of open(2) or flock(2).
 */
int liveness_held(const char *lock_path);

/**
 * liveness_pid:
 * @lock_path: the lock file the process holds
 * @pid_path: the pid file it wrote ("PID\n")
 *
 * Returns: the pid @pid_path names when that process has @lock_path open
 * (one of /proc/PID/fd is that file, by device and inode); 0 when the
 * file is missing, names no process, or one that does not have it open.
 */
pid_t liveness_pid(const char *lock_path, const char *pid_path);

/**
 * liveness_at_work:
 * @state_dir: the state directory
 *
 * Is a storaged process at work on @state_dir: a start, stop or sync (its
 * lock, DIR/lock), or a resident between two passes (DIR/resident)?  A
 * lock this process holds counts too: ask once it is dropped.
 *
 * Returns: true when one holds either, or when it cannot be known (claim
 * nothing); false when none does.
 */
bool liveness_at_work(const char *state_dir);

/**
 * liveness_take:
 * @lock_path: the lock file (made 0600 when missing)
 *
 * Takes the exclusive lock a live process holds for its lifetime.
 *
 * Returns: the open, locked, close-on-exec descriptor; -EWOULDBLOCK when
 * another holds it; other negative errno.
 */
int liveness_take(const char *lock_path);

#endif
