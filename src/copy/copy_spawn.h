/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Runs the tree copy helper storaged-copy (copy.h): a copy of a user's
 * tree runs in a process of its own, with its threads and buffers, and can
 * be ended at once (SIGINT, SIGTERM) without leaving storaged mid-copy. */
#ifndef STORAGED_COPY_SPAWN_H
#define STORAGED_COPY_SPAWN_H

#include <stddef.h>

#include "copy.h"

#define COPY_HELPER "storaged-copy"

/*
 * copy_spawn_find: the helper's path into @buf (@len bytes): the one
 * beside the running binary (dirname of /proc/self/exe: the build tree,
 * where the tests run storaged uninstalled) when it is a root-owned
 * executable neither group nor others may write, else
 * LIBEXECDIR/storaged/storaged-copy with the same checks.
 * Returns: 0; -ENOENT (not installed), -EPERM (not root's, or writable by
 * group or others), @res's message naming the path and what to do.
 */
int copy_spawn_find(char *buf, size_t len, struct copy_result *res);

/*
 * copy_spawn_run: copy_tree_fd() of @srcfd into @dstfd (either may be O_PATH;
 * neither closed; @src, @dst: their names in messages, never looked up) in
 * storaged-copy, with the threads that suit the machine (spawn_jobs()),
 * run by argv with spawn_start() (spawn_helper.h): clean
 * environment, stdin and stdout on /dev/null, stderr shared (the progress
 * line for @label), the outcome from a status pipe.  The helper gets the
 * two reopened ("." below each: its own descriptors, whose flock() ends
 * with it) as --src-fd, --dst-fd: a directory a user can rename is never
 * reached again by name.  Waits for it.  The copy stamps @dstfd with its
 * end time (COPY_SYNCED_XATTR), the seed's baseline.
 * Returns: 0; negative errno of the copy (-ENOSPC), of copy_spawn_find(),
 * of reopening; -EIO when the helper died without a report.
 */
int copy_spawn_run(int srcfd, int dstfd, const char *src, const char *dst, const char *label,
		   struct copy_result *res);

/*
 * copy_spawn_sync: copy_sync_fd() (copy.h) in storaged-copy, as
 * copy_spawn_run() runs a copy; @lowerfd through the area's private view,
 * nothing closed; @rescue: NULL, or at stop copy_opts.rescue, which also
 * sets copy_opts.verify.  On success
 * everything is on disk and @workfd holds only what is no longer live;
 * @res counts what the sync did (one entry put from a helper that does not
 * say) and its msg names what lost an attribute (a warning).
 * Returns: as copy_spawn_run(); copy_sync_fd()'s errors.
 */
int copy_spawn_sync(int areafd, int lowerfd, int workfd, const char *area, const char *lower,
		    const char *label, const char *rescue, struct copy_result *res);

#endif
