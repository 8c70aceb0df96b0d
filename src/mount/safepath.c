/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "safepath.h"
#include "view.h"
#include "shared/util.h"

#define MAX_LINKS 40 /* include/linux/namei.h MAXSYMLINKS */

static bool dir_is_trusted(const struct stat *st)
{
	return st->st_uid == 0 && !(st->st_mode & (S_IWGRP | S_IWOTH));
}

/* A link found at @name in the directory @dirfd: may it be followed? */
static int check_link(int dirfd, const struct stat *lst, const char *shown, char *why, size_t len)
{
	struct stat dst;

	if (fstat(dirfd, &dst) < 0)
		return -errno;
	/* in a sticky directory of root's (/tmp), only root may remove or
	 * replace root's link */
	if (lst->st_uid == 0 && (dir_is_trusted(&dst) || (dst.st_uid == 0 && (dst.st_mode & S_ISVTX))))
		return 0;
	snprintf(why, len, "'%s' is a symbolic link owned by uid %u in a directory owned by uid %u with mode %04o; a user other than root could redirect the mount: use the link's target in the configuration",
		 shown, (unsigned)lst->st_uid, (unsigned)dst.st_uid, (unsigned)(dst.st_mode & 07777));
	return -EPERM;
}

/*
 * Walk state: @rest is what is left to resolve (owned, modified in place);
 * @dirfd the directory reached so far; @links the links followed.
 */
struct walk {
	int dirfd;
	bool borrowed; /* dirfd is the caller's (a cached directory): not closed */
	unsigned links;
	struct safepath_trust trust; /* of the path walked so far */
	char shown[PATH_MAX]; /* the path as walked so far, for messages */
};

/* How a walk ended, for the cache. */
struct walk_end {
	unsigned links; /* links followed */
	struct safepath_trust trust;
};

/* The walk enters a directory (or ends at a name) with the status @st. */
static void trust_enter(struct safepath_trust *t, const struct stat *st)
{
	t->fixed = t->fixed && (t->trusted || (t->sticky && st->st_uid == 0));
	t->trusted = dir_is_trusted(st);
	t->sticky = st->st_uid == 0 && (st->st_mode & S_ISVTX);
}

/* The walk moves on to @fd; the directory it leaves is closed unless it is
 * borrowed. */
static void walk_enter(struct walk *w, int fd)
{
	if (!w->borrowed)
		safe_close(w->dirfd);
	w->borrowed = false;
	w->dirfd = fd;
}

/* Follows the link opened as @linkfd (O_PATH|O_NOFOLLOW): its target goes
 * in front of @rest.  readlinkat(2) with an empty name reads the link the
 * descriptor refers to (Linux 2.6.39). */
static int walk_link(struct walk *w, int linkfd, char **rest)
{
	char target[PATH_MAX];
	ssize_t n = readlinkat(linkfd, "", target, sizeof(target) - 1);
	char *joined;

	if (n < 0)
		return -errno;
	if ((size_t)n >= sizeof(target) - 1)
		return -ENAMETOOLONG; /* maybe cut short: not the real target */
	target[n] = '\0';
	if (++w->links > MAX_LINKS)
		return -ELOOP;
	if (asprintf(&joined, "%s/%s", target, *rest ? *rest : "") < 0)
		return -ENOMEM;
	free(*rest);
	*rest = joined;
	w->trust.fixed = false; /* a walk through a link is never kept */
	if (target[0] == '/') {
		int root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);

		if (root < 0)
			return -errno;
		walk_enter(w, root);
	}
	return 0;
}

/* ".." in a link's target: the parent of the directory reached so far (the
 * kernel stops at "/", and so does this). */
static int walk_up(struct walk *w)
{
	int fd = openat(w->dirfd, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
	char *slash = strrchr(w->shown, '/');

	if (fd < 0)
		return -errno;
	walk_enter(w, fd);
	if (slash)
		*slash = '\0';
	return 0;
}

/*
 * Resolve one component @name below w->dirfd.  The name is opened first
 * (O_PATH|O_NOFOLLOW: a link is opened itself, never followed) and what
 * was opened is examined through its descriptor: a user who swaps the name
 * between a look and the open cannot make the walk check one thing and keep
 * another.  With @mkdir_mode set, a missing directory is made (mkdirat(2)
 * in the directory walked to, never by name from "/").
 * Returns: 1 walked, 0 missing.
 */
static int walk_one(struct walk *w, const char *name, char **rest, mode_t mkdir_mode, char *why, size_t len)
{
	struct stat st;
	_cleanup_close_ int fd = -EBADF;
	int r;

	fd = openat(w->dirfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT && mkdir_mode) {
		if (mkdirat(w->dirfd, name, mkdir_mode) < 0 && errno != EEXIST)
			return -errno;
		fd = openat(w->dirfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	}
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	if (fstat(fd, &st) < 0)
		return -errno;
	snprintf(w->shown + strlen(w->shown), sizeof(w->shown) - strlen(w->shown), "/%s", name);
	if (S_ISLNK(st.st_mode)) {
		/* the link read is the one checked: through its descriptor */
		r = check_link(w->dirfd, &st, w->shown, why, len);
		if (r == 0)
			r = walk_link(w, fd, rest);
		return r < 0 ? r : 1;
	}
	trust_enter(&w->trust, &st);
	walk_enter(w, TAKE_FD(fd));
	return 1;
}

/* "/" for a walk from the top: fixed, as nothing is above it. */
static int open_root(struct walk *w)
{
	int fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	struct stat st;

	if (fd >= 0 && fstat(fd, &st) == 0) {
		w->trust = (struct safepath_trust){ .fixed = true, .trusted = true };
		trust_enter(&w->trust, &st);
	}
	return fd;
}

/*
 * The walk of @rel (relative, may be "") from @start, a directory the
 * caller walked to as @shown (borrowed: not closed) with the trust
 * @start_trust (NULL: none), or from "/" when @start is -1.  @end: NULL,
 * or how the walk ended.
 */
static int walk_from(int start, const struct safepath_trust *start_trust, const char *shown,
		     const char *rel, mode_t mkdir_mode, int *ret_fd, struct walk_end *end,
		     char *why, size_t len)
{
	struct walk w = { .dirfd = start, .borrowed = start >= 0 };
	char *rest = NULL, *name, *save = NULL;
	bool missing = false;
	int r = 0;

	if (ret_fd)
		*ret_fd = -1;
	if (start_trust)
		w.trust = *start_trust;
	snprintf(w.shown, sizeof(w.shown), "%s", shown);
	if (start < 0)
		w.dirfd = open_root(&w);
	rest = strdup(rel);
	if (w.dirfd < 0 || !rest) {
		r = w.dirfd < 0 ? -errno : -ENOMEM;
		goto out;
	}
	/* Each round takes the first component off @rest; a link puts its
	 * target in front of what remains. */
	while (r >= 0 && rest && rest[0]) {
		char *tail;

		name = strtok_r(rest, "/", &save);
		if (!name)
			break;
		tail = save && *save ? strdup(save) : NULL;
		if (save && *save && !tail) {
			r = -ENOMEM; /* never "safe" for want of memory */
		} else if (strcmp(name, ".") == 0) {
			r = 0;
		} else if (strcmp(name, "..") == 0) {
			/* only a link's target may go up: the path given is normalised */
			r = w.links > 0 ? walk_up(&w) : -EINVAL;
		} else {
			char *n = strdup(name);

			free(rest);
			rest = tail;
			tail = NULL;
			r = n ? walk_one(&w, n, &rest, mkdir_mode, why, len) : -ENOMEM;
			free(n);
			if (r == 0) {
				missing = true;
				break; /* the rest does not exist yet */
			}
			continue;
		}
		free(rest);
		rest = tail;
	}
	if (r >= 0 && ret_fd) {
		if (missing) {
			r = -ENOENT;
		} else if (w.borrowed) { /* nothing walked: the start itself */
			r = *ret_fd = fcntl(w.dirfd, F_DUPFD_CLOEXEC, 3);
			r = r < 0 ? -errno : 0;
		} else {
			*ret_fd = TAKE_FD(w.dirfd);
		}
	}
	if (end)
		*end = (struct walk_end){ .links = w.links, .trust = w.trust };
out:
	free(rest);
	if (!w.borrowed)
		safe_close(w.dirfd);
	return r < 0 ? r : 0;
}

int safepath_open(const char *path, mode_t mkdir_mode, int *ret_fd, char *why, size_t len)
{
	if (ret_fd)
		*ret_fd = -1;
	if (path[0] != '/')
		return -EINVAL;
	return walk_from(-1, NULL, "", path + 1, mkdir_mode, ret_fd, NULL, why, len);
}

/* ------------------------------------------------------------ the cache */

int safepath_open_cached(struct view_dirs *d, const char *path, mode_t mkdir_mode, int *ret_fd,
			 const struct view_dir **ret_parent, char *why, size_t len)
{
	_cleanup_free_ char *parent = NULL;
	const char *slash = strrchr(path, '/');
	const struct view_dir *c, *kept = NULL;
	struct walk_end up = { 0 }, last = { 0 };
	_cleanup_close_ int pfd = -EBADF;
	int keep, r;

	*ret_fd = -1;
	if (ret_parent)
		*ret_parent = NULL;
	if (!d || path[0] != '/' || !path_is_normalized(path) || slash == path)
		return safepath_open(path, mkdir_mode, ret_fd, why, len);
	parent = strndup(path, (size_t)(slash - path));
	if (!parent)
		return -ENOMEM;
	/* the parent, walked once a pass: from the deepest cached ancestor */
	c = view_dirs_find(d, parent, strlen(parent), true, true);
	if (c && streq(c->path, parent)) {
		kept = c;
	} else {
		r = walk_from(c ? c->fd : -1, c ? &c->trust : NULL, c ? c->path : "",
			      parent + (c ? strlen(c->path) + 1 : 1), mkdir_mode, &pfd, &up, why, len);
		if (r < 0)
			return r;
		/* only a walk without links: its path names the directory */
		if (up.links == 0 && (keep = fcntl(pfd, F_DUPFD_CLOEXEC, 3)) >= 0)
			kept = view_dirs_keep(d, parent, strlen(parent), keep,
					      &(struct view_dir){ .walked = true, .trust = up.trust });
	}
	r = walk_from(kept ? kept->fd : pfd, kept ? &kept->trust : NULL, parent, slash + 1, mkdir_mode,
		      ret_fd, &last, why, len);
	if (r == 0 && ret_parent && last.links == 0 && last.trust.fixed)
		*ret_parent = kept;
	return r;
}

int safepath_check(const char *path, char *why, size_t len)
{
	return safepath_open(path, 0, NULL, why, len);
}

/* statx(2) that cannot make a remote filesystem ask its server: cached
 * attributes, no automount, and a lookup relative to @dirfd (an absolute
 * one would let the last name be revalidated). */
static int stat_local(int dirfd, const char *rel, int flags, const struct safepath_local *local)
{
	struct statx stx;

	if (statx(dirfd, rel, flags | AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT | AT_STATX_DONT_SYNC,
		  STATX_TYPE | STATX_MNT_ID, &stx) < 0)
		return -errno;
	return local->is_local(local->userdata, stx.stx_mnt_id) && !S_ISLNK(stx.stx_mode);
}

int safepath_is_local(const char *path, const struct safepath_local *local)
{
	const struct view_dir *kept = NULL;
	char rel[PATH_MAX];
	int base, r = 1;

	if (path[0] != '/' || !path_is_normalized(path))
		return -EINVAL;
	if (local->known && (kept = view_dirs_find(local->known, path, strlen(path), true, true)) &&
	    streq(kept->path, path))
		return 1;
	/* below the deepest directory kept, or below "/" */
	if ((size_t)snprintf(rel, sizeof(rel), "%s", path + (kept ? strlen(kept->path) + 1 : 1)) >=
	    sizeof(rel))
		return -ENAMETOOLONG;
	base = kept		  ? kept->fd
	       : local->have_root ? local->rootfd
				  : open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (base < 0)
		return -errno;
	if (!kept && !local->have_root)
		r = stat_local(base, "", AT_EMPTY_PATH, local);
	/* Each ancestor in turn, from the top: "a", "a/b", "a/b/c"; the
	 * kernel walks the ones already found local and link-free again. */
	for (char *p = rel; r == 1 && *rel;) {
		char *slash = strchr(p, '/');

		if (slash)
			*slash = '\0';
		r = stat_local(base, rel, 0, local);
		if (slash)
			*slash = '/';
		if (r == -ENOENT) {
			r = 1; /* the rest does not exist yet: made in a local directory */
			break;
		}
		if (!slash)
			break;
		p = slash + 1;
	}
	if (!kept && !local->have_root)
		close(base);
	return r;
}
