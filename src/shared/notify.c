/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "notify.h"

bool notify_socket_set(void)
{
	const char *path = getenv("NOTIFY_SOCKET");

	return path && path[0];
}

int notify_send(const char *fmt, ...)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	_cleanup_free_ char *msg = NULL;
	size_t len;
	va_list ap;
	_cleanup_close_ int fd = -EBADF;
	int r;

	if (!path || !path[0])
		return 0;
	len = strlen(path);
	if ((path[0] != '/' && path[0] != '@') || len >= sizeof(sa.sun_path))
		return -EINVAL;
	memcpy(sa.sun_path, path, len);
	if (path[0] == '@')
		sa.sun_path[0] = '\0'; /* abstract namespace */
	va_start(ap, fmt);
	r = vasprintf(&msg, fmt, ap);
	va_end(ap);
	if (r < 0)
		return -ENOMEM;
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	return sendto(fd, msg, strlen(msg), MSG_NOSIGNAL, (struct sockaddr *)&sa,
		      offsetof(struct sockaddr_un, sun_path) + len) < 0
		       ? -errno
		       : 1;
}

bool notify_extend_due(struct notify_extender *x, uint64_t now, uint64_t until, uint64_t *ret_usec)
{
	uint64_t reach;

	if (until < now)
		until = now;
	if (until - now > NOTIFY_EXTEND_STEP_USEC) /* USEC_INFINITY too */
		until = now + NOTIFY_EXTEND_STEP_USEC;
	if (x->covered_until >= until + NOTIFY_EXTEND_MARGIN_USEC / 2)
		return false;
	reach = until + NOTIFY_EXTEND_MARGIN_USEC;
	x->covered_until = reach;
	*ret_usec = reach - now;
	return true;
}

int notify_format_extend(char *buf, size_t len, uint64_t usec)
{
	int n = snprintf(buf, len, "EXTEND_TIMEOUT_USEC=%" PRIu64, usec);

	return n < 0 || (size_t)n >= len ? -ENOBUFS : n;
}

void notify_keep_ahead(struct notify_extender *x, uint64_t until)
{
	char msg[64];
	uint64_t usec;

	if (!notify_socket_set() || !notify_extend_due(x, now_monotonic_usec(), until, &usec))
		return;
	if (notify_format_extend(msg, sizeof(msg), usec) > 0)
		(void)notify_send("%s", msg);
}
