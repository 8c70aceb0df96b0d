/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Signals taken through a descriptor, for an event loop (signalfd(2)). */
#ifndef STORAGED_SIGFD_H
#define STORAGED_SIGFD_H

#include <errno.h>
#include <signal.h>
#include <sys/signalfd.h>

/*
 * @mask: the signals to take through the descriptor; they are blocked
 * @ret_old: the signal mask before (for sigprocmask(SIG_SETMASK)), or NULL
 *
 * Returns: a non-blocking, close-on-exec signalfd, or negative errno.
 */
static inline int sigfd_open(const sigset_t *mask, sigset_t *ret_old)
{
	int fd;

	if (sigprocmask(SIG_BLOCK, mask, ret_old) < 0)
		return -errno;
	fd = signalfd(-1, mask, SFD_CLOEXEC | SFD_NONBLOCK);
	return fd < 0 ? -errno : fd;
}

#endif
