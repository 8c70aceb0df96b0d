/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Resident mode and readiness notification.
 */
#ifndef STORAGED_DAEMON_H
#define STORAGED_DAEMON_H

#include "log.h"
#include "util.h"

/**
 * daemon_notify:
 * @fmt: printf format of the message, e.g. "READY=1" or "STATUS=…";
 *       several assignments are separated by newlines
 *
 * Sends the message to the service manager over $NOTIFY_SOCKET, as
 * sd_notify(3) does (the protocol of systemd's sd_notify documentation: one
 * datagram on an AF_UNIX socket; a leading '@' names an abstract socket).
 * Does nothing when $NOTIFY_SOCKET is unset (SysV init, a terminal).
 *
 * Returns: 1 sent, 0 no socket, negative errno.
 */
int daemon_notify(const char *fmt, ...) _printf_(1, 2);

/**
 * daemon_pass_fn:
 * @no_wait: a pass after a device event or SIGHUP: do not wait for devices
 *
 * One plan-and-run pass (re-reading config, fstab, devices and mounts).
 * Returns: an exit status (0, 1 or 2).
 */
typedef int (*daemon_pass_fn)(void *userdata, bool no_wait);

/**
 * daemon_loop:
 * @lg: logger
 * @pass: called after block device events (debounced by @settle_usec µs)
 *        and on SIGHUP
 * @userdata: passed to @pass
 *
 * Stays resident in one epoll loop over a udev monitor (kernel uevents
 * where no udevd runs), a signalfd and a timerfd.  SIGTERM and SIGINT end
 * it; mounts stay.
 *
 * Returns: 0 after SIGTERM/SIGINT; 1 when the loop cannot be set up.
 */
int daemon_loop(const struct logger *lg, daemon_pass_fn pass, void *userdata, uint64_t settle_usec);

#endif
