/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A filesystem's own time, as it stamps the ctimes a sync compares. */
#include <errno.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <time.h>

#include "fs_time.h"

static bool ts_after(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec > b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec > b->tv_nsec);
}

/* Sets the ctime of @fd to now, as its filesystem stamps it, into @ret. */
static int fs_touch(int fd, struct timespec *ret)
{
	struct stat st;

	if (futimens(fd, NULL) < 0 || fstat(fd, &st) < 0)
		return -errno;
	*ret = st.st_ctim;
	return 0;
}

int fs_time_past(int fd, struct timespec *ret)
{
	struct timespec first = { 0 }, t = { 0 }, step = { .tv_nsec = 1000000 };
	long long waited = 0;
	int r;

	if ((r = fs_touch(fd, &first)) < 0)
		return r;
	/* a whole second: likely a filesystem of second granularity */
	if (first.tv_nsec == 0)
		step.tv_nsec = 100000000;
	while ((r = fs_touch(fd, &t)) == 0 && !ts_after(&t, &first) && waited < FS_TIME_WAIT_NSEC) {
		nanosleep(&step, NULL);
		waited += step.tv_nsec;
	}
	if (r == 0)
		*ret = t;
	return r;
}
