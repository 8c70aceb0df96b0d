/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Readiness notification to the service manager.
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

#endif
