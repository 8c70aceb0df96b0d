/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What a running storaged tells: its pid, and the hand-over between a
 * waiting `start` and the next command.  What it listens to is opened the
 * same way by the start executor's operations (sysops.c) and the resident
 * loop (resident.c), from below: block device events with
 * udev_change_monitor_open() (devices/udev_change.h), signals with
 * sigfd_open() (shared/sigfd.h).
 */
#ifndef STORAGED_DAEMON_H
#define STORAGED_DAEMON_H

#include <signal.h>
#include <stdbool.h>

#include "shared/log.h"
#include "shared/notify.h"
#include "shared/util.h"

/**
 * daemon_write_pid:
 * @path: a pid file ("storaged.pid", "waiting.pid") in the state directory
 * @pid: the process it names
 *
 * Writes "@pid\n" with file_write_atomic(): a reader never sees half a
 * pid.
 *
 * Returns: 0 or negative errno.
 */
int daemon_write_pid(const char *path, pid_t pid);

/**
 * daemon_mark_waiting:
 * @state_dir: storaged's state directory (trusted: checked by statedir_lock())
 *
 * A `start` whose boot steps are done and that goes on waiting for nofail
 * entries' devices says so, so that the next `start` or `stop` can take
 * over (daemon_take_over()) instead of finding the state directory locked
 * for a device timeout: it takes the lock @state_dir/waiting, held until
 * daemon_unmark_waiting() or its death (liveness.h), and writes its pid to
 * @state_dir/waiting.pid for the signal.
 *
 * Returns: the lock's descriptor, for daemon_unmark_waiting(); negative
 * errno.
 */
int daemon_mark_waiting(const char *state_dir);

/**
 * daemon_unmark_waiting:
 * @fd: as daemon_mark_waiting() returned it, or negative: nothing to do
 *
 * Removes @state_dir/waiting.pid and drops the lock.
 */
void daemon_unmark_waiting(const char *state_dir, int fd);

/**
 * daemon_take_over:
 * Ends a `start` marked by daemon_mark_waiting() that still waits: alive
 * is its lock held, and the pid of waiting.pid is believed only when that
 * process has the lock open (liveness_pid()), so a pid file left by a
 * killed start never sends a signal to a process that took its pid.
 * SIGTERM (it records its nofail entries as interrupted and unlocks the
 * state directory), then waits up to 5 s for its lock to be free.  Call
 * before statedir_lock().
 *
 * Returns: 1 when one was ended, 0 when none waited, negative errno.
 */
int daemon_take_over(const char *state_dir, const struct logger *lg);

#endif
