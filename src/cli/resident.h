/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Resident mode: after the first pass `storaged start` stays (with
 * --foreground, --daemon or hotplug = yes) and runs a pass again for
 * devices that appear later and on SIGHUP.  One resident per state
 * directory.  The pass is the caller's: this module does not know what it
 * does.
 */
#ifndef STORAGED_RESIDENT_H
#define STORAGED_RESIDENT_H

#include <stdbool.h>
#include <stdint.h>

#include "shared/log.h"

/**
 * resident_pass_fn:
 * @userdata: as given to resident_stay()
 * @lg: the logger to use (syslog in a detached child)
 * @no_wait: a pass after a device event or SIGHUP: do not wait for devices
 *
 * One plan-and-run pass (re-reading config, fstab, devices and mounts).
 * Returns: 0 or negative errno; the loop goes on either way (the pass has
 * logged what failed).
 */
typedef int (*resident_pass_fn)(void *userdata, const struct logger *lg, bool no_wait);

/**
 * resident_sync_fn:
 * @userdata: as given to resident_stay()
 * @lg: the logger to use
 * @since: CLOCK_MONOTONIC µs when the resident began
 * @on_timer: the timer the last return armed fired (not a call after a
 *            pass, which has just done what a timer call would refresh)
 *
 * Runs the periodic syncs that are due (see sync_due_areas()).
 * Returns: seconds until it is to be called again; 0: only after a pass.
 */
typedef uint64_t (*resident_sync_fn)(void *userdata, const struct logger *lg, uint64_t since,
				     bool on_timer);

/**
 * resident_block_signals:
 *
 * Blocks SIGHUP, SIGTERM and SIGINT, the signals the resident loop takes
 * through its signalfd.  To be called before READY=1 is sent (and before
 * a fork: the mask is inherited): `systemctl reload` may send SIGHUP as
 * soon as READY=1 is out, and SIGHUP's default action (signal(7)) ends
 * the process; blocked, the signal stays pending until the loop reads it.
 *
 * Returns: 0, or negative errno of sigprocmask(2).
 */
int resident_block_signals(void);

/**
 * resident_stay:
 * @state_dir: the state directory: the lock @state_dir/resident is held
 *             for the resident's lifetime and its pid written to
 *             @state_dir/storaged.pid
 * @in_background: fork, setsid, stdio to /dev/null and syslog; the parent
 *                 writes the child's pid file (so that it exists when
 *                 `start` returns) and returns
 * @lg: logger (of the foreground process)
 * @pass: run after block device events (a burst of them, 250 ms apart at
 *        most, makes one pass) and on SIGHUP
 * @sync: run when the time it last returned has passed, and after each
 *        @pass (which may have changed the areas or their intervals)
 * @wake_fd: an eventfd (or -1): when it is readable it is read and @sync
 *           is run as on its timer (the area watch: an area filled or grew,
 *           the metrics want rewriting)
 * @userdata: passed to @pass and @sync
 *
 * Stays resident in one epoll loop over a udev monitor (kernel uevents
 * where no udevd runs), a signalfd and two timerfds (the settle delay, the
 * next periodic sync).  SIGTERM and SIGINT end
 * it; mounts stay.
 *
 * Returns: 0 when this process does not stay (another resident handles
 * @state_dir, logged; or the parent after detaching): the caller's status
 * stands; 1 after the loop ended on SIGTERM/SIGINT; negative errno when it
 * cannot stay (logged): -EWOULDBLOCK is never returned.
 */
int resident_stay(const char *state_dir, bool in_background, const struct logger *lg,
		  resident_pass_fn pass, resident_sync_fn sync, int wake_fd, void *userdata);

#endif
