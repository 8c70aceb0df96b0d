/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Mount points and area paths must not lead through a symbolic link that a
 * user other than root could have planted: a link in a directory others can
 * write would let them redirect a root-owned mount anywhere.
 */
#ifndef STORAGED_SAFEPATH_H
#define STORAGED_SAFEPATH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/**
 * safepath_check:
 * @path: absolute path (need not exist entirely: the walk stops at the
 *        first missing component, which X-mount.mkdir may create)
 * @why: on refusal, a message naming the offending component and its owner
 * @len: size of @why in bytes
 *
 * Walks @path from "/" one component at a time with O_PATH|O_NOFOLLOW
 * (openat(2)), and refuses a symbolic link unless it and the directory it
 * sits in are owned by root and that directory is not writable by group or
 * others, or is sticky (as /tmp: only root may replace root's link).  Links that pass are followed, and the walk goes on from their
 * target (at most 40 links, as the kernel's MAXSYMLINKS).
 *
 * Returns: 0 when safe (or the rest is missing); -EPERM for an untrusted
 * link (@why says which); -ELOOP for too many links; -ENOTDIR, -EINVAL or
 * another negative errno from openat(2)/fstatat(2).
 */
int safepath_check(const char *path, char *why, size_t len);

/**
 * safepath_open:
 * @path: absolute path
 * @mkdir_mode: 0, or the mode of the directories to make where @path does
 *              not exist yet (X-mount.mkdir): each is made with mkdirat(2)
 *              in the directory the walk reached, never by name from "/"
 * @ret_fd: where the walk ends: @path opened O_PATH|O_NOFOLLOW|O_CLOEXEC
 *          (the caller closes it); -1 on error.  NULL: only check, as
 *          safepath_check().
 * @why, @len: as safepath_check()
 *
 * The walk of safepath_check(), each component opened before it is
 * examined (fstat(2) on the descriptor), so that the directory checked is
 * the one returned even while a user renames names in the path: a mount
 * made on @ret_fd (mountfd.h) never looks the path up again.  The last
 * component may be of any type but a link that fails the check (a trusted
 * link is followed); the caller checks the type it needs.
 *
 * Returns: 0 and *@ret_fd; -ENOENT when a component is missing (and
 * @mkdir_mode is 0); else as safepath_check().
 */
int safepath_open(const char *path, mode_t mkdir_mode, int *ret_fd, char *why, size_t len);

/* Who can change a path, as the walk found it. */
struct safepath_trust {
	/* only root can change what the path names: each name in it sits in
	 * a trusted directory, or is root's in a sticky one of root's (/tmp) */
	bool fixed;
	/* the directory itself is owned by root and writable by neither group
	 * nor others (nor a named user of an ACL: its mask is the group
	 * bits): only root can rename or replace a name in it */
	bool trusted;
	bool sticky; /* the directory is root's and sticky */
};

struct view_dirs;
struct view_dir;

/**
 * safepath_open_cached:
 * @d: the cache of the pass (view.h), or NULL (then as safepath_open())
 * @path, @mkdir_mode, @ret_fd, @why, @len: as safepath_open()
 * @ret_parent: NULL, or where to say which cached directory the last
 *              component of @path was opened in, when only root can change
 *              what @path names (no link on the way, each name fixed:
 *              struct safepath_trust): borrowed, valid until the next call
 *              on @d; else NULL
 *
 * safepath_open(), with the parent directory of @path walked once a pass:
 * sibling entries share the descriptor the first walk opened, and a parent
 * not cached yet is walked from its deepest cached ancestor.  Each
 * directory kept was opened by the walk (O_PATH|O_NOFOLLOW, examined
 * through its descriptor) and reached without a link, so its path names
 * it; the last component of @path is opened and checked afresh.  A mount
 * made on a cached directory, or above one, hides it: the caller drops it
 * with view_dirs_forget() after every mount it makes.
 *
 * Returns: as safepath_open().
 */
int safepath_open_cached(struct view_dirs *d, const char *path, mode_t mkdir_mode, int *ret_fd,
			 const struct view_dir **ret_parent, char *why, size_t len);

/* Which mounts are local, for safepath_is_local(). */
struct safepath_local {
	/* true when the mount with this ID (statx STATX_MNT_ID) is a local
	 * filesystem: a lookup there never waits for a server */
	bool (*is_local)(void *userdata, uint64_t mnt_id);
	void *userdata;
	/* optional: "/" opened O_PATH by the caller, its mount found local,
	 * so that a pass of many walks opens and checks it once */
	bool have_root;
	int rootfd;
	/* optional: the pass's cache of walked directories, when the caller
	 * keeps there only directories of paths it found local (each was
	 * reached without a link): the statx(2) of each ancestor starts below
	 * the deepest one kept, from its descriptor */
	const struct view_dirs *known;
};

/**
 * safepath_is_local:
 * @path: absolute, normalised path (need not exist entirely)
 * @local: which mounts are local
 *
 * Tells, without any risk of waiting for a server, whether resolving @path
 * stays on local filesystems and meets no symbolic link: "/" and each
 * ancestor of @path, from the top, is looked up relative to "/" with
 * statx(2) AT_STATX_DONT_SYNC|AT_NO_AUTOMOUNT (cached attributes, no
 * automount), so a remote filesystem is never asked, and the walk stops at
 * the first name on a mount @local does not call local.  A path without
 * links needs no link check (safepath_check()).
 *
 * Returns: 1 local and link-free (a missing rest counts: it would be made
 * in a local directory); 0 not (a link, a remote or unknown mount);
 * -EINVAL for a path that is not absolute and normalised; negative errno
 * from statx(2).
 */
int safepath_is_local(const char *path, const struct safepath_local *local);

#endif
