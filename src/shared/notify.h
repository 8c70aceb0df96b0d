/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The service manager's notification socket, for every folder: the
 * resident loop's READY=1 (cli/daemon.h) and a long copy's timeout
 * extensions (copy/copy_spawn.c).
 */
#ifndef STORAGED_NOTIFY_H
#define STORAGED_NOTIFY_H

/**
 * notify_send:
 * @msg: the message, e.g. "READY=1"; several assignments separated by
 *       newlines
 *
 * Sends @msg to the service manager over $NOTIFY_SOCKET, as sd_notify(3)
 * does (one datagram on an AF_UNIX socket; a leading '@' names an
 * abstract socket: the protocol of systemd's sd_notify documentation).
 * Does nothing when $NOTIFY_SOCKET is unset (SysV init, a terminal).
 *
 * Returns: 1 sent, 0 no socket, negative errno.
 */
int notify_send(const char *msg);

#endif
