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
#include "shared/util.h"

#define MAX_LINKS 40 /* include/linux/namei.h MAXSYMLINKS */

/* ------------------------------------------------------------ kept directories */

const struct view_dir *view_dirs_find(const struct view_dirs *d, const char *path, size_t n, bool or_below,
				      bool walked)
{
	const struct view_dir *best = NULL;
	size_t best_len = 0;

	for (size_t i = 0; i < VIEW_DIRS_MAX; i++) {
		const struct view_dir *c = &d->v[i];
		size_t cn;

		if (!c->path || c->walked != walked)
			continue;
		cn = strlen(c->path);
		if (cn == n && strncmp(c->path, path, n) == 0)
			return c;
		/* an ancestor: "/" of everything, else a prefix ending at a '/' */
		if (or_below && cn < n && strncmp(c->path, path, cn) == 0 &&
		    (path[cn] == '/' || cn == 1) && cn > best_len) {
			best = c;
			best_len = cn;
		}
	}
	return best;
}

static void dir_drop(struct view_dir *c)
{
	if (c->path) {
		free(c->path);
		safe_close(c->fd);
	}
	*c = (struct view_dir){ .fd = -1 };
}

const struct view_dir *view_dirs_keep(struct view_dirs *d, const char *dir, size_t n, int fd,
				      const struct view_dir *proto)
{
	struct view_dir *c = &d->v[d->next];
	char *copy = strndup(dir, n);

	if (!copy) {
		safe_close(fd);
		return NULL;
	}
	dir_drop(c);
	*c = *proto;
	c->path = copy;
	c->fd = fd;
	d->next = (d->next + 1) % VIEW_DIRS_MAX;
	return c;
}

void view_dirs_forget(struct view_dirs *d, const char *path)
{
	for (size_t i = 0; d && i < VIEW_DIRS_MAX; i++)
		if (d->v[i].path &&
		    (!path || strcmp(d->v[i].path, path) == 0 || path_is_below(d->v[i].path, path)))
			dir_drop(&d->v[i]);
}

/* ------------------------------------------------------------ the walk */

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
	snprintf(why, len, "'%s' is a symbolic link owned by uid %u in a directory owned by uid %u with mode %04o; a user other than root could point it elsewhere: use the link's target in the configuration",
		 shown, (unsigned)lst->st_uid, (unsigned)dst.st_uid, (unsigned)(dst.st_mode & 07777));
	return -EPERM;
}

/*
 * The walker's two modes (safepath.h): WALK_OPEN follows a link only when
 * root's (check_link()); WALK_LOOKUP follows any (@follow): whether the
 * mount may go through one is WALK_OPEN's question.
 */
enum walk_how { WALK_OPEN, WALK_LOOKUP };

struct walk {
	enum walk_how how;
	const struct safepath_local *local; /* WALK_LOOKUP */
	bool follow; /* WALK_LOOKUP: follow links; else one stops the walk */
	bool dir_local; /* WALK_LOOKUP: @dirfd's mount was found local */
	int dirfd;
	bool borrowed; /* dirfd is the caller's (a kept directory): not closed */
	unsigned links; /* links followed */
	struct safepath_trust trust; /* WALK_OPEN: of the path walked so far */
	enum safepath_end end;
	mode_t type; /* WALK_LOOKUP: the type of what @done names */
	char *rest; /* owned: what is left to walk, as written */
	char done[PATH_MAX]; /* the path of @dirfd, links resolved ("" for "/") */
};

/* The walk enters a directory (or ends at a name) with the status @st. */
static void trust_enter(struct safepath_trust *t, const struct stat *st)
{
	t->fixed = t->fixed && (t->trusted || (t->sticky && st->st_uid == 0));
	t->trusted = dir_is_trusted(st);
	t->sticky = st->st_uid == 0 && (st->st_mode & S_ISVTX);
}

/* The walk moves on to @fd (taken), reached by @name ("..": up); the
 * directory it leaves is closed unless it is borrowed.  Returns: 1. */
static int walk_enter(struct walk *w, int fd, const char *name)
{
	size_t n = strlen(w->done);

	if (!w->borrowed)
		safe_close(w->dirfd);
	w->borrowed = false;
	w->dirfd = fd;
	if (streq(name, "..")) {
		char *slash = strrchr(w->done, '/');

		if (slash)
			*slash = '\0'; /* the kernel stops at "/", and so does this */
	} else if (name[0]) {
		snprintf(w->done + n, sizeof(w->done) - n, "/%s", name);
	}
	return 1;
}

/* What is left to walk becomes "@front/@back".  Returns: 0 or -ENOMEM. */
static int rest_set(struct walk *w, const char *front, const char *back)
{
	char *joined;

	if (asprintf(&joined, "%s/%s", front, back) < 0)
		return -ENOMEM; /* never "safe" for want of memory */
	free(w->rest);
	w->rest = joined;
	return 0;
}

/* Follows the link opened as @linkfd (O_PATH|O_NOFOLLOW): its target goes
 * in front of what is left.  readlinkat(2) with an empty name reads the
 * link the descriptor refers to (Linux 2.6.39).  Returns: 1, or negative
 * errno. */
static int walk_link(struct walk *w, int linkfd)
{
	char target[PATH_MAX];
	ssize_t n = readlinkat(linkfd, "", target, sizeof(target) - 1);
	int root, r;

	if (n < 0)
		return -errno;
	if ((size_t)n >= sizeof(target) - 1)
		return -ENAMETOOLONG; /* maybe cut short: not the real target */
	target[n] = '\0';
	if (++w->links > MAX_LINKS)
		return -ELOOP;
	r = rest_set(w, target, w->rest);
	if (r < 0)
		return r;
	w->trust.fixed = false; /* a walk through a link is never kept */
	if (target[0] != '/')
		return 1;
	root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root < 0)
		return -errno;
	w->done[0] = '\0';
	w->dir_local = false;
	return walk_enter(w, root, "");
}

/* The walk stops before the name it was given.  Returns: 0. */
static int walk_stop(struct walk *w, enum safepath_end end)
{
	w->end = end;
	return 0;
}

/*
 * WALK_OPEN: one component @name below w->dirfd, opened (O_PATH|O_NOFOLLOW)
 * before it is examined, as safepath_open() says why.  ".." comes only from
 * a link's target (the path given is normalised).  Returns: 1 walked, 0
 * missing, negative errno.
 */
static int walk_one(struct walk *w, const char *name, mode_t mkdir_mode, char *why, size_t len)
{
	char shown[PATH_MAX + NAME_MAX + 2];
	struct stat st;
	_cleanup_close_ int fd = -EBADF;
	int r;

	if (streq(name, "..")) {
		if (w->links == 0)
			return -EINVAL;
		fd = openat(w->dirfd, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
		return fd < 0 ? -errno : walk_enter(w, TAKE_FD(fd), "..");
	}
	fd = openat(w->dirfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT && mkdir_mode) {
		if (mkdirat(w->dirfd, name, mkdir_mode) < 0 && errno != EEXIST)
			return -errno;
		fd = openat(w->dirfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	}
	if (fd < 0)
		return errno == ENOENT ? walk_stop(w, SAFEPATH_MISSING) : -errno;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (S_ISLNK(st.st_mode)) {
		/* the link read is the one checked: through its descriptor */
		snprintf(shown, sizeof(shown), "%s/%s", w->done, name);
		r = check_link(w->dirfd, &st, shown, why, len);
		return r < 0 ? r : walk_link(w, fd);
	}
	trust_enter(&w->trust, &st);
	return walk_enter(w, TAKE_FD(fd), name);
}

/* WALK_LOOKUP: is the mount the walk stands on local?  Asked once for the
 * start and after a jump ("/" of an absolute link); a name looked up is
 * checked on its own mount. */
static bool walk_dir_local(struct walk *w)
{
	struct statx stx;

	if (!w->dir_local)
		w->dir_local = statx(w->dirfd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STATX_MNT_ID, &stx) == 0 &&
			       w->local->is_local(w->local->userdata, stx.stx_mnt_id);
	return w->dir_local;
}

/*
 * WALK_LOOKUP: one component @name below w->dirfd, as safepath_lookup()
 * says.  Stops at a missing name (SAFEPATH_MISSING), at one on a mount that
 * is not local, at a non-directory with more to walk, and at a link unless
 * @follow (SAFEPATH_STOPPED).  Returns: 1 walked, 0 stopped, negative errno.
 */
static int look_one(struct walk *w, const char *name)
{
	const int flags = AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT | AT_STATX_DONT_SYNC;
	bool more = w->rest[strspn(w->rest, "/")] != '\0';
	struct statx stx;
	_cleanup_close_ int fd = -EBADF;

	if (!walk_dir_local(w))
		return walk_stop(w, SAFEPATH_STOPPED);
	if (statx(w->dirfd, name, flags, STATX_TYPE | STATX_MNT_ID, &stx) < 0)
		return walk_stop(w, errno == ENOENT ? SAFEPATH_MISSING : SAFEPATH_STOPPED);
	if (!w->local->is_local(w->local->userdata, stx.stx_mnt_id) ||
	    (S_ISLNK(stx.stx_mode) ? !w->follow : !S_ISDIR(stx.stx_mode) && more))
		return walk_stop(w, SAFEPATH_STOPPED);
	fd = openat(w->dirfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return walk_stop(w, SAFEPATH_STOPPED);
	if (S_ISLNK(stx.stx_mode))
		return walk_link(w, fd);
	w->type = stx.stx_mode & S_IFMT;
	return walk_enter(w, TAKE_FD(fd), name);
}

/* Walks what is left, one component a round; a link puts its target in
 * front of what remains, a stop puts back the name it stopped at.
 * Returns: 0 (w->end), negative errno. */
static int walk_rest(struct walk *w, mode_t mkdir_mode, char *why, size_t len)
{
	char name[NAME_MAX + 1];
	int r = 1;

	w->end = SAFEPATH_FOUND;
	while (r > 0) {
		const char *c = w->rest + strspn(w->rest, "/");
		size_t n = strcspn(c, "/");

		if (n == 0)
			return 0;
		if (n > NAME_MAX)
			return -ENAMETOOLONG;
		memcpy(name, c, n);
		name[n] = '\0';
		memmove(w->rest, c + n, strlen(c + n) + 1);
		if (streq(name, "."))
			continue;
		r = w->how == WALK_LOOKUP ? look_one(w, name) : walk_one(w, name, mkdir_mode, why, len);
	}
	return r < 0 ? r : rest_set(w, name, w->rest);
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
 * Walks @rel (relative, as written) from @start, a directory the caller
 * walked to as @path (borrowed: not closed), or from "/" when @start is
 * -1.  The caller sets w->how (and for WALK_LOOKUP ->local, ->follow,
 * ->dir_local), and ->trust when it starts below "/".  The walk stands at
 * the last name it reached after (walk_free() it).
 */
static int walk_from(struct walk *w, int start, const char *path, const char *rel, mode_t mkdir_mode,
		     char *why, size_t len)
{
	w->dirfd = start;
	w->borrowed = start >= 0;
	w->type = S_IFDIR;
	snprintf(w->done, sizeof(w->done), "%s", streq(path, "/") ? "" : path);
	if (start < 0 && (w->dirfd = open_root(w)) < 0)
		return -errno;
	w->rest = strdup(rel);
	if (!w->rest)
		return -ENOMEM;
	return walk_rest(w, mkdir_mode, why, len);
}

static void walk_free(struct walk *w)
{
	free(w->rest);
	if (!w->borrowed)
		safe_close(w->dirfd);
}

/*
 * @path (absolute, normalised, not "/") with its parent directory walked
 * once a pass: from the parent kept in @d (the kept directories of w->how's
 * kind), else from its deepest kept ancestor, or "/".  A parent reached
 * without a link is kept (its path names it); the last name is walked
 * afresh each time.  @ret_kept: the parent kept, or NULL.
 */
static int walk_cached(struct view_dirs *d, struct walk *w, const char *path, mode_t mkdir_mode,
		       const struct view_dir **ret_kept, char *why, size_t len)
{
	const bool walked = w->how == WALK_OPEN;
	const char *last = strrchr(path, '/') + 1;
	size_t pn = (size_t)(last - 1 - path), off;
	const struct view_dir *c = view_dirs_find(d, path, pn, true, walked);
	_cleanup_free_ char *rel = NULL;
	int keep, r;

	*ret_kept = NULL;
	off = c ? strlen(c->path) : 0;
	if (c) {
		w->trust = c->trust;
		w->dir_local = true; /* kept only when found local */
	}
	rel = strndup(path + off, pn - off);
	if (!rel)
		return -ENOMEM;
	r = walk_from(w, c ? c->fd : -1, c ? c->path : "/", rel, mkdir_mode, why, len);
	if (r < 0)
		return r;
	if (w->end != SAFEPATH_FOUND)
		return rest_set(w, w->rest, last);
	if (c && off == pn)
		*ret_kept = c;
	else if (w->links == 0 && (keep = fcntl(w->dirfd, F_DUPFD_CLOEXEC, 3)) >= 0)
		*ret_kept = view_dirs_keep(d, path, pn, keep, &(struct view_dir){ .walked = walked, .trust = w->trust });
	free(w->rest);
	w->rest = strdup(last);
	if (!w->rest)
		return -ENOMEM;
	return walk_rest(w, mkdir_mode, why, len);
}

/* @path walked through the cache @d when it can be (walk_cached()), else
 * from "/". */
static int walk_path(struct view_dirs *d, struct walk *w, const char *path, mode_t mkdir_mode,
		     const struct view_dir **ret_kept, char *why, size_t len)
{
	*ret_kept = NULL;
	if (path[0] != '/')
		return -EINVAL;
	if (d && path_is_normalized(path) && strrchr(path, '/') != path)
		return walk_cached(d, w, path, mkdir_mode, ret_kept, why, len);
	return walk_from(w, -1, "/", path + 1, mkdir_mode, why, len);
}

/* ------------------------------------------------------------ the modes */

int safepath_open_cached(struct view_dirs *d, const char *path, mode_t mkdir_mode, int *ret_fd,
			 const struct view_dir **ret_parent, char *why, size_t len)
{
	struct walk w = { .how = WALK_OPEN, .dirfd = -1 };
	const struct view_dir *kept;
	int r;

	if (ret_fd)
		*ret_fd = -1;
	if (ret_parent)
		*ret_parent = NULL;
	r = walk_path(d, &w, path, mkdir_mode, &kept, why, len);
	if (r == 0 && ret_fd && w.end == SAFEPATH_MISSING)
		r = -ENOENT;
	if (r == 0 && ret_fd && w.borrowed) { /* nothing walked: the start itself */
		*ret_fd = fcntl(w.dirfd, F_DUPFD_CLOEXEC, 3);
		r = *ret_fd < 0 ? -errno : 0;
	} else if (r == 0 && ret_fd) {
		*ret_fd = TAKE_FD(w.dirfd);
	}
	if (r == 0 && ret_parent && kept && w.links == 0 && w.trust.fixed)
		*ret_parent = kept;
	walk_free(&w);
	return r;
}

int safepath_open(const char *path, mode_t mkdir_mode, int *ret_fd, char *why, size_t len)
{
	return safepath_open_cached(NULL, path, mkdir_mode, ret_fd, NULL, why, len);
}

int safepath_check(const char *path, char *why, size_t len)
{
	return safepath_open(path, 0, NULL, why, len);
}

int safepath_lookup(struct view_dirs *d, const char *path, const struct safepath_local *local,
		    char buf[static PATH_MAX], mode_t *ret_mode)
{
	struct walk w = { .how = WALK_LOOKUP, .local = local, .follow = true, .dirfd = -1 };
	const struct view_dir *kept;
	const char *rest;
	int r;

	*ret_mode = 0;
	r = walk_path(d, &w, path, 0, &kept, NULL, 0);
	rest = w.rest ? w.rest + strspn(w.rest, "/") : "";
	if (r == 0 && (size_t)snprintf(buf, PATH_MAX, "%s/%s", w.done, rest) >= PATH_MAX)
		r = -ENAMETOOLONG;
	if (r == 0)
		r = path_normalize(buf);
	if (r == 0 && w.end == SAFEPATH_FOUND)
		*ret_mode = w.type;
	walk_free(&w);
	return r < 0 ? r : (int)w.end;
}

int safepath_is_local(const char *path, const struct safepath_local *local)
{
	const struct view_dir *c = NULL;
	struct walk w = { .how = WALK_LOOKUP, .local = local, .dirfd = -1 };
	int r;

	if (path[0] != '/' || !path_is_normalized(path))
		return -EINVAL;
	/* from the deepest directory kept (all of paths found local), or "/" */
	if (local->known)
		c = view_dirs_find(local->known, path, strlen(path), true, true);
	w.dir_local = c != NULL;
	r = walk_from(&w, c ? c->fd : -1, c ? c->path : "/",
		      path + (c ? strlen(c->path) : 0), 0, NULL, 0);
	walk_free(&w);
	/* a missing rest counts: it would be made in a local directory */
	return r < 0 ? r : w.end != SAFEPATH_STOPPED;
}
