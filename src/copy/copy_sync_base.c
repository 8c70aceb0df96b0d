/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The sync baselines on an area's root (copy.h: COPY_SYNCED_XATTR and
 * the records beside it): read and written by the storaged-copy helper,
 * and by storaged itself around the helper's sync (area_sync.c).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/xattr.h>
#include <time.h>

#include "copy.h"
#include "shared/units.h"

/* the baseline kept on the area's root: "SEC.NSEC" of the coarse clock */
int copy_sync_base_read(int fd, const char *xattr, struct timespec *ts)
{
	char v[48], *dot;
	uint64_t s, ns;
	ssize_t n = fgetxattr(fd, xattr, v, sizeof(v) - 1);

	if (n < 0)
		return -errno;
	v[n] = '\0';
	if (!(dot = strchr(v, '.')))
		return -EINVAL;
	*dot = '\0';
	if (units_parse_uint(v, INT64_MAX, &s) < 0 || units_parse_uint(dot + 1, 999999999, &ns) < 0)
		return -EINVAL;
	*ts = (struct timespec){ .tv_sec = (time_t)s, .tv_nsec = (long)ns };
	return 0;
}

static bool ts_after(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec > b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec > b->tv_nsec);
}

int copy_sync_base_past_writes(struct timespec *ts)
{
	/* A file's ctime can be finer than the coarse clock (multigrain
	 * timestamps, Linux 6.13: a change after its ctime was read gets the
	 * fine clock), so the last files of a copy may carry times past a
	 * coarse reading taken at its end, and count as changed at the first
	 * sync.  Every ctime of the copy is at most the fine clock now: the
	 * first coarse reading past it is later than all of them.  The coarse
	 * clock moves every tick (1-10 ms); a bounded wait, then the plain
	 * reading (ties count as changed: safe, only slower). */
	const struct timespec step = { .tv_nsec = 1000000 };
	struct timespec end;

	if (clock_gettime(CLOCK_REALTIME, &end) < 0)
		return -errno;
	for (int i = 0; i < 100; i++) {
		/* file times come from the coarse clock (current_time(), and
		 * the floor of multigrain timestamps) */
		if (clock_gettime(CLOCK_REALTIME_COARSE, ts) < 0)
			return -errno;
		if (ts_after(ts, &end))
			return 0;
		nanosleep(&step, NULL);
	}
	return 0;
}

int copy_sync_base_write(int fd, const char *xattr, const struct timespec *ts)
{
	char v[48];
	int n = snprintf(v, sizeof(v), "%lld.%09ld", (long long)ts->tv_sec, ts->tv_nsec);

	return fsetxattr(fd, xattr, v, (size_t)n, 0) < 0 ? -errno : 0;
}
