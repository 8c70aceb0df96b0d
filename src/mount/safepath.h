/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Mount points and area paths must not lead through a symbolic link that a
 * user other than root could have planted: a link in a directory others can
 * write would let them redirect a root-owned mount anywhere.
 *
 * One walker resolves a path component by component, never following a
 * link by name, in two modes: it opens each name before examining it
 * (safepath_open(): a mount is made on what the walk opened), or it looks
 * names up on local mounts only (safepath_lookup(), safepath_is_local():
 * no server is asked).  The directories it walks to are kept for the next
 * walks of a pass (struct view_dirs, the view's cache: view.h).
 */
#ifndef STORAGED_SAFEPATH_H
#define STORAGED_SAFEPATH_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * @path: absolute path (need not exist entirely: the walk stops at the
 *        first missing component, which X-mount.mkdir may create)
 * @why: on refusal, a message naming the offending component and its owner
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

/*
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

#define VIEW_DIRS_MAX 16

/*
 * A directory a walk reached without following a link, kept for the next
 * walks of the pass: the entries of an fstab are mostly siblings or
 * nested, and a path below a kept directory costs one lookup where a walk
 * from "/" costs one per component.
 */
struct view_dir {
	char *path; /* absolute, normalised, as walked; NULL: a free slot */
	int fd; /* O_PATH of it */
	/* kept by an opening walk (safepath_open_cached()), examined through
	 * @fd: @trust is what that walk found.  Else kept by a lookup
	 * (safepath_lookup(): found on a local mount), which an opening walk
	 * never takes as checked. */
	bool walked;
	struct safepath_trust trust; /* (@walked only) */
};

struct view_dirs {
	struct view_dir v[VIEW_DIRS_MAX];
	size_t next; /* the slot the next directory takes (the oldest) */
};

/*
 * view_dirs_find: the directory named by the first @n bytes of @path, else
 * (@or_below) its deepest kept ancestor, among those kept by the walk
 * @walked says (struct view_dir); borrowed until the cache changes, or NULL.
 * view_dirs_keep: keeps @fd (taken: closed on failure) as @dir with
 * @proto's facts, the oldest slot making room; returns the entry, or NULL
 * (no memory: nothing kept).
 */
const struct view_dir *view_dirs_find(const struct view_dirs *d, const char *path, size_t n, bool or_below,
				      bool walked);
const struct view_dir *view_dirs_keep(struct view_dirs *d, const char *dir, size_t n, int fd,
				      const struct view_dir *proto);

/*
 * @d: the cache, or NULL
 * @path: a mount point just mounted on; NULL for everything
 *
 * Drops the kept directories that are @path or below it (a mount on @path
 * covers them), closing their descriptors.
 */
void view_dirs_forget(struct view_dirs *d, const char *path);

/*
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
	/* optional: the pass's cache of walked directories, when the caller
	 * keeps there only directories of paths it found local (each was
	 * reached without a link): the statx(2) of each ancestor starts below
	 * the deepest one kept, from its descriptor */
	const struct view_dirs *known;
};

/* How a lookup ended. */
enum safepath_end {
	SAFEPATH_FOUND, /* at the end of the path */
	SAFEPATH_MISSING, /* at a name that does not exist */
	SAFEPATH_STOPPED, /* at a name it may not look up: on a mount that is
			     not local, below a non-directory, a link (for
			     safepath_is_local()), or one statx(2) refused */
};

/*
 * @d: the pass's kept directories (the lookups' own kind), or NULL
 * @local: which mounts are local (->is_local only)
 * @buf: where @path leads: every link met resolved (trusted or not: that
 *       is safepath_check()'s question), what the walk did not reach kept
 *       as written; normalised
 * @ret_mode: the type of what @path names (S_IFDIR, ...) when found; else 0
 *
 * The walk of safepath_open() as a lookup: each name is looked up with
 * statx(2) AT_STATX_DONT_SYNC|AT_NO_AUTOMOUNT (cached attributes, no
 * automount) before it is opened, and only in directories on mounts
 * @local calls local, so that no server is asked.  A normalised path's
 * parent is walked once a pass, as in safepath_open_cached().
 *
 * Returns: enum safepath_end and @buf; negative errno (-ELOOP, -EINVAL for
 * a relative path, ...).
 */
int safepath_lookup(struct view_dirs *d, const char *path, const struct safepath_local *local,
		    char buf[static PATH_MAX], mode_t *ret_mode);

/*
 * @path: absolute, normalised path (need not exist entirely)
 *
 * Tells, without any risk of waiting for a server, whether resolving @path
 * stays on local filesystems and meets no symbolic link: the lookup of
 * safepath_lookup() from the deepest directory @local knows (or "/"),
 * stopping at the first link.  A path without links needs no link check
 * (safepath_check()).
 *
 * Returns: 1 local and link-free (a missing rest counts: it would be made
 * in a local directory); 0 not (a link, a remote or unknown mount, a
 * non-directory on the way); -EINVAL for a path that is not absolute and
 * normalised; negative errno.
 */
int safepath_is_local(const char *path, const struct safepath_local *local);

#endif
