/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Runs the tree copy helper storaged-copy (copy.h) from storaged: a copy of
 * a user's tree runs in a process of its own, with its threads and buffers,
 * and can be ended at once (SIGINT, SIGTERM) without leaving storaged in
 * the middle of it.
 */
#ifndef STORAGED_COPY_SPAWN_H
#define STORAGED_COPY_SPAWN_H

#include <stddef.h>

#include "copy.h"

#define COPY_HELPER "storaged-copy"

/**
 * copy_spawn_find:
 * @buf: receives the helper's path
 * @len: size of @buf in bytes
 * @res: on failure, the errno and a message that names the path and says
 *       what to do
 *
 * The helper beside the running binary (dirname of /proc/self/exe) wins
 * when it is a root-owned executable that neither group nor others may
 * write: that is the build tree, where the tests run storaged uninstalled.
 * Otherwise LIBEXECDIR/storaged/storaged-copy, with the same checks.
 *
 * Returns: 0; -ENOENT when the installed helper is missing, -EPERM when it
 * is not root-owned or is writable by group or others.
 */
int copy_spawn_find(char *buf, size_t len, struct copy_result *res);

/**
 * copy_spawn_jobs:
 *
 * Returns: the number of worker processes a copy uses on this machine
 * (from the CPUs online; see the measurement in copy_spawn.c), at least 1.
 */
unsigned copy_spawn_jobs(void);

/**
 * copy_spawn_run:
 * @srcfd: directory to copy (see copy_tree() for what is kept); may be
 *         O_PATH; not closed
 * @dstfd: existing directory to copy into; may be O_PATH; not closed
 * @src: the name of @srcfd in messages (never looked up)
 * @dst: the name of @dstfd in messages (never looked up)
 * @label: the area's name, for the progress line on a terminal
 * @jobs: worker processes, e.g. copy_spawn_jobs(); 1: one process
 * @res: on failure, the negative errno and the helper's message
 *
 * Runs storaged-copy by argv with spawn_start() (spawn_helper.h): a clean
 * environment, stdin and stdout on /dev/null, stderr shared (the progress
 * line), the outcome read from a status pipe.  The helper gets @srcfd and
 * @dstfd reopened ("." below each: descriptors of its own, whose flock()
 * ends with it) as --src-fd and --dst-fd: a directory a user can rename
 * is never reached again by a name.  Waits for it to end.  The copy
 * stamps @dstfd with its end time (COPY_SYNCED_XATTR): the seed's baseline
 * for the incremental sync back.
 *
 * Returns: 0; negative errno: the copy's (-ENOSPC: @dstfd is full), the
 * lookup's (copy_spawn_find()), reopening the directories, or -EIO when
 * the helper died without a report.
 */
int copy_spawn_run(int srcfd, int dstfd, const char *src, const char *dst, const char *label,
		   unsigned jobs, struct copy_result *res);

/**
 * copy_spawn_sync:
 * @areafd: the area's root; not closed
 * @lowerfd: the root of the area's directory, through the private view of
 *           it; not closed
 * @workfd: the sync's working directory on @lowerfd's filesystem (see
 *          copy_sync_fd() in copy.h); not closed
 * @area, @lower: their names in messages (never looked up)
 * @label, @jobs, @res: as for copy_spawn_run()
 * @rescue: NULL, or the rescue directory's name (copy_opts.rescue): at
 *          stop, where the area's version of each entry the sync could
 *          not carry is kept
 *
 * Runs the incremental, crash-consistent sync back copy_sync_fd() in
 * storaged-copy, as copy_spawn_run() runs a copy.  On success everything
 * is on disk (syncfs); @workfd then holds only what is no longer live,
 * and @res counts what the sync did (struct copy_result; from a helper
 * that does not say, one entry put) and, in res->msg, names what was
 * synced without an attribute (a warning; empty when none).
 *
 * Returns: as copy_spawn_run(); the errors of copy_sync_fd()
 * (-COPY_SYNC_KEPT_BOTH, -COPY_SYNC_RESCUED, one entry's).
 */
int copy_spawn_sync(int areafd, int lowerfd, int workfd, const char *area, const char *lower,
		    const char *label, unsigned jobs, const char *rescue, struct copy_result *res);

#endif
