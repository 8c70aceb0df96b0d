/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A filesystem's own time, as it stamps the ctimes a sync compares. */
#ifndef STORAGED_FS_TIME_H
#define STORAGED_FS_TIME_H

#include <time.h>

/* how long fs_time_past() waits at most for the time to move on */
#define FS_TIME_WAIT_NSEC (2 * 1000000000LL)

/*
 * @fd: a file or directory of storaged's own on the filesystem asked
 *      (its times are set to now)
 * @ret: receives a ctime that filesystem gave
 *
 * A time T such that every entry of that filesystem changed after this
 * call has a ctime >= T, and every one changed before it a ctime < T.
 * T is a ctime the filesystem itself gives, not the clock read here: it
 * cuts its times to its own granularity (1 s for ext2, or ext4 with
 * 128-byte inodes; the clock tick for tmpfs without multigrain
 * timestamps), so a clock reading can be past the ctime of a change made
 * after it.  A ctime it gives later is never before one it gave earlier
 * (the coarse clock, and the floor of multigrain timestamps:
 * Documentation/filesystems/multigrain-ts.rst).  An entry changed in the
 * same granule as T, before the call, could not be told from one changed
 * after it: so T is taken once the filesystem's time has moved past that
 * of a first touch.  The wait is at most one granule (none with
 * multigrain timestamps, where a touch after fstat(2) gets a finer time);
 * past FS_TIME_WAIT_NSEC (a clock stopped or set back), T is the last
 * time read, which misses no later change and may take earlier ones for
 * later.
 *
 * Returns: 0; negative errno of futimens(2) or fstat(2).
 */
int fs_time_past(int fd, struct timespec *ret);

#endif
