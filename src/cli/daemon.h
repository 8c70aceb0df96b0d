/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What a running storaged listens to and tells: block device events,
 * signals through a signalfd, readiness for the service manager.  The start
 * executor's operations (sysops.c) and the resident loop (resident.c) open
 * their event sources here, the same way.
 */
#ifndef STORAGED_DAEMON_H
#define STORAGED_DAEMON_H

#include <signal.h>
#include <stdbool.h>

#include <libudev.h>

#include "shared/log.h"
#include "shared/notify.h"
#include "shared/util.h"

/**
 * daemon_monitor_open:
 * @ret_udev: the udev context (release with daemon_monitor_close())
 * @ret_monitor: a monitor of the "block" subsystem, receiving: udev's own
 *               events where udevd runs (its rules have created the node
 *               then), the kernel's uevents where it does not
 *
 * Returns: 0; negative errno (nothing to release then).
 */
int daemon_monitor_open(struct udev **ret_udev, struct udev_monitor **ret_monitor);

/** daemon_monitor_drain: reads and drops every pending event of @mon (a
 * burst is one "a device may have appeared"). */
void daemon_monitor_drain(struct udev_monitor *mon);

/** daemon_monitor_close: releases both; either may be NULL. */
void daemon_monitor_close(struct udev *udev, struct udev_monitor *mon);

/**
 * daemon_signal_fd:
 * @mask: the signals to take through the descriptor; they are blocked
 * @ret_old: the signal mask before (for sigprocmask(SIG_SETMASK)), or NULL
 *
 * Returns: a non-blocking, close-on-exec signalfd, or negative errno.
 */
int daemon_signal_fd(const sigset_t *mask, sigset_t *ret_old);

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
