/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The service manager's notification socket (sd_notify(3)): readiness,
 * status lines, and the start/stop timeout kept ahead of long waits.
 */
#ifndef STORAGED_NOTIFY_H
#define STORAGED_NOTIFY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util.h"

/*
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
int notify_send(const char *fmt, ...) _printf_(1, 2);

/* $NOTIFY_SOCKET names a socket (a service manager listens). */
bool notify_socket_set(void);

/* How far ahead of storaged's next look up from a wait the manager's
 * timeout is kept (µs): the time a mount, a registration or a state write
 * may take after a wait ends before the next extension. */
#define NOTIFY_EXTEND_MARGIN_USEC (30 * USEC_PER_SEC)
/* The longest a wait blocks under a service manager before it extends the
 * timeout again (µs): a deadline of "infinity" is extended step by step. */
#define NOTIFY_EXTEND_STEP_USEC (60 * USEC_PER_SEC)

/* What has been asked of the manager so far (one per process). */
struct notify_extender {
	uint64_t covered_until; /* CLOCK_MONOTONIC µs the last extension reaches; 0: none */
};

/*
 * @x: the extensions sent so far (updated when one is due)
 * @now: CLOCK_MONOTONIC µs
 * @until: CLOCK_MONOTONIC µs when storaged looks up next at the latest (a
 *         wait's deadline; USEC_INFINITY is taken as @now plus
 *         NOTIFY_EXTEND_STEP_USEC)
 * @ret_usec: the EXTEND_TIMEOUT_USEC= value to send (µs from @now)
 *
 * Pure.  An extension is due when the last one would end less than half a
 * margin after @until; it then reaches a whole margin past @until, so that
 * frequent wake-ups (device events) send one every margin/2 at most.
 * systemd takes EXTEND_TIMEOUT_USEC= as "the current state's timeout is at
 * least this far from now" (sd_notify(3)); it never shortens a timeout.
 *
 * Returns: true when one is due (and @x records it).
 */
bool notify_extend_due(struct notify_extender *x, uint64_t now, uint64_t until, uint64_t *ret_usec);

/*
 * @buf, @len: receives "EXTEND_TIMEOUT_USEC=N"
 * @usec: N (µs)
 *
 * Returns: the length written, or -ENOBUFS when @len is too small.
 */
int notify_format_extend(char *buf, size_t len, uint64_t usec);

/*
 * @x: as notify_extend_due()
 * @until: as notify_extend_due(); the clock is read here
 *
 * Sends EXTEND_TIMEOUT_USEC= when notify_extend_due() says so and a
 * service manager listens.  Errors are ignored: a manager that did not
 * get the message only applies its own timeout.
 */
void notify_keep_ahead(struct notify_extender *x, uint64_t until);

#endif
