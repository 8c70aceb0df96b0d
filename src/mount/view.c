/* SPDX-License-Identifier: GPL-2.0-or-later */
/* One view of the live system per pass (view.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "parse/fsfacts.h"
#include "shared/util.h"
#include "view.h"

/* ------------------------------------------------------------ the mount table */

struct libmnt_table *view_read_table(const char *path)
{
	return mnt_new_table_from_file(path);
}

struct libmnt_fs *view_find_id(struct libmnt_table *tb, uint64_t id)
{
	struct libmnt_iter *itr = mnt_new_iter(MNT_ITER_FORWARD);
	struct libmnt_fs *fs, *found = NULL;

	while (itr && !found && mnt_table_next_fs(tb, itr, &fs) == 0)
		if (mnt_fs_get_id(fs) > 0 && (uint64_t)mnt_fs_get_id(fs) == id)
			found = fs;
	mnt_free_iter(itr);
	return found;
}

struct libmnt_fs *view_find_child(struct libmnt_table *tb, uint64_t id, const char *target)
{
	struct libmnt_iter *itr = mnt_new_iter(MNT_ITER_FORWARD);
	struct libmnt_fs *fs, *found = NULL;

	while (itr && !found && mnt_table_next_fs(tb, itr, &fs) == 0)
		if ((uint64_t)mnt_fs_get_parent_id(fs) == id && !streq(mnt_fs_get_target(fs), target))
			found = fs;
	mnt_free_iter(itr);
	return found;
}

struct libmnt_fs *view_find_top(struct libmnt_table *tb, const char *target, unsigned id,
				struct libmnt_fs **ret_ours)
{
	struct libmnt_iter *it = mnt_new_iter(MNT_ITER_FORWARD);
	struct libmnt_fs *fs, *top = NULL;

	*ret_ours = NULL;
	while (it && mnt_table_next_fs(tb, it, &fs) == 0) {
		if (!streq(mnt_fs_get_target(fs), target))
			continue;
		top = fs;
		if (id && (unsigned)mnt_fs_get_id(fs) == id)
			*ret_ours = fs;
	}
	mnt_free_iter(it);
	return top;
}

bool view_mounted_ro(struct libmnt_table *tb, const char *mp)
{
	struct libmnt_fs *ours, *top = mp ? view_find_top(tb, mp, 0, &ours) : NULL;

	return top && mnt_optstr_get_option(mnt_fs_get_vfs_options(top), "ro", NULL, NULL) == 0;
}

char *view_fs_text(struct libmnt_fs *fs)
{
	const char *src = mnt_fs_get_source(fs), *type = mnt_fs_get_fstype(fs);
	char *s;

	if (asprintf(&s, "%s (%s)", src ? src : "none", type ? type : "?") < 0)
		return NULL;
	return s;
}

int view_watch_open(void)
{
	return open(VIEW_MOUNTINFO, O_RDONLY | O_CLOEXEC);
}

/* Where @id is, or would go, in v->mounts (sorted by ID). */
static size_t mount_pos(const struct view *v, uint64_t id)
{
	size_t lo = 0, hi = v->n_mounts;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v->mounts[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static struct view_mount *mount_find(const struct view *v, uint64_t id)
{
	size_t i = mount_pos(v, id);

	return i < v->n_mounts && v->mounts[i].id == id ? &v->mounts[i] : NULL;
}

static int mount_set(struct view *v, uint64_t id, bool local)
{
	struct view_mount *m = mount_find(v, id), *nv;

	if (m) {
		m->local = local;
		return 0;
	}
	if (v->n_mounts == v->cap_mounts) {
		size_t cap = v->cap_mounts ? 2 * v->cap_mounts : 64;

		nv = realloc(v->mounts, cap * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		v->mounts = nv;
		v->cap_mounts = cap;
	}
	m = &v->mounts[mount_pos(v, id)];
	memmove(m + 1, m, (size_t)(v->mounts + v->n_mounts - m) * sizeof(*m));
	*m = (struct view_mount){ .id = id, .local = local };
	v->n_mounts++;
	return 0;
}

/* (Re)reads the snapshot and learns the type of every mount in it. */
static struct libmnt_table *table_read(struct view *v)
{
	struct libmnt_table *tb = view_read_table(VIEW_MOUNTINFO);
	struct libmnt_iter *it = tb ? mnt_new_iter(MNT_ITER_FORWARD) : NULL;
	struct libmnt_fs *fs;

	if (!tb)
		return NULL;
	mnt_unref_table(v->tb);
	v->tb = tb;
	while (it && mnt_table_next_fs(tb, it, &fs) == 0)
		if (mount_set(v, (uint64_t)mnt_fs_get_id(fs), fsfacts_is_local(mnt_fs_get_fstype(fs))) < 0)
			break;
	mnt_free_iter(it);
	return tb;
}

struct libmnt_table *view_table(struct view *v)
{
	return v->tb ? v->tb : table_read(v);
}

/* Is the mount with @id (STATX_MNT_ID) one where a lookup never waits for
 * a server or an automount?  An ID the snapshot does not hold (a mount
 * made since it was read) refreshes it once; one still unknown is taken
 * as not local.  A binary search: a pass asks for every ancestor of every
 * entry. */
static bool view_mount_is_local(struct view *v, uint64_t id)
{
	struct view_mount *m;

	if (!v->tb)
		table_read(v);
	m = mount_find(v, id);
	if (!m && table_read(v))
		m = mount_find(v, id);
	if (!m && mount_set(v, id, false) == 0) /* asked once: not read again for it */
		m = mount_find(v, id);
	return m && m->local;
}

void view_mounted(struct view *v, uint64_t id, bool local, const char *mountpoint)
{
	if (id)
		mount_set(v, id, local);
	view_dirs_forget(&v->dirs, mountpoint);
}

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

/* ------------------------------------------------------------ walks for mounting */

int view_open(struct view *v, const char *path, mode_t mkdir_mode, int *ret_fd,
	      const struct view_dir **ret_parent, char *why, size_t len)
{
	return safepath_open_cached(v ? &v->dirs : NULL, path, mkdir_mode, ret_fd, ret_parent, why, len);
}

static bool is_local_cb(void *userdata, uint64_t id)
{
	return view_mount_is_local(userdata, id);
}

/* "/" for the pass's walks, opened and found local once: 0, or -EREMOTE
 * (a root filesystem that is not local). */
static int view_root(struct view *v)
{
	struct statx stx;

	if (v->root_checked)
		return v->rootfd >= 0 ? 0 : -EREMOTE;
	v->root_checked = true;
	v->rootfd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (v->rootfd < 0 ||
	    statx(v->rootfd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STATX_MNT_ID, &stx) < 0 ||
	    !view_mount_is_local(v, stx.stx_mnt_id)) {
		v->rootfd = safe_close(v->rootfd);
		return -EREMOTE;
	}
	return 0;
}

int view_is_local(struct view *v, const char *path)
{
	/* the directories kept by view_open() are all of paths found local */
	struct safepath_local local = { .is_local = is_local_cb, .userdata = v, .have_root = true,
					.known = &v->dirs };

	if (view_root(v) < 0)
		return 0;
	local.rootfd = v->rootfd;
	return safepath_is_local(path, &local);
}

/* ------------------------------------------------------------ walks for planning */
/* @path with every link resolved, as realpath(3), but by the kernel in one
 * lookup (realpath reads each component as a link): false when @path does
 * not exist (yet). */
static bool resolve_path(const char *path, char buf[static PATH_MAX])
{
	char proc[64];
	_cleanup_close_ int fd = open(path, O_PATH | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return false;
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	n = readlink(proc, buf, PATH_MAX - 1);
	if (n <= 0 || n >= PATH_MAX - 1 || buf[0] != '/') /* no /proc */
		return realpath(path, buf) != NULL;
	buf[n] = '\0';
	return true;
}

/* Appends "/@name" (@n bytes) to the path @buf of length *@len. */
static bool path_push(char *buf, size_t *len, const char *name, size_t n)
{
	if (*len + n + 2 > PATH_MAX)
		return false;
	if (*len > 1)
		buf[(*len)++] = '/';
	memcpy(buf + *len, name, n);
	*len += n;
	buf[*len] = '\0';
	return true;
}

struct walk {
	struct view *v; /* for view_mount_is_local() */
	int dirfd; /* O_PATH: the directory @done names */
	char done[PATH_MAX]; /* resolved so far: no link in it */
	size_t len;
	char rest[PATH_MAX]; /* still to walk */
	unsigned links;
};

/* One step of resolve_local() on the component @name: 1 walked on, 0 stop
 * here (missing, not local, not a directory), negative errno. */
static int walk_component(struct walk *w, const char *name, size_t n, const char *after)
{
	char nm[NAME_MAX + 1], tgt[PATH_MAX], rest[PATH_MAX];
	struct statx stx;
	ssize_t k;
	int fd;

	if (n > NAME_MAX)
		return 0;
	memcpy(nm, name, n);
	nm[n] = '\0';
	/* the directory's mount, then the name's: cached attributes only,
	 * no automount, so that no server is ever asked */
	if (statx(w->dirfd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STATX_MNT_ID, &stx) < 0 ||
	    !view_mount_is_local(w->v, stx.stx_mnt_id))
		return 0;
	if (statx(w->dirfd, nm, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT | AT_STATX_DONT_SYNC,
		  STATX_TYPE | STATX_MNT_ID, &stx) < 0 ||
	    !view_mount_is_local(w->v, stx.stx_mnt_id))
		return 0;
	if (S_ISLNK(stx.stx_mode)) {
		k = readlinkat(w->dirfd, nm, tgt, sizeof(tgt) - 1);
		if (k <= 0 || ++w->links > 40 || (size_t)k + strlen(after) + 2 > sizeof(w->rest))
			return k <= 0 ? 0 : -ELOOP;
		tgt[k] = '\0';
		strcpy(rest, after);
		strcpy(w->rest, tgt);
		strcat(w->rest, "/");
		strcat(w->rest, rest);
		if (tgt[0] == '/') {
			fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
			if (fd < 0)
				return -errno;
			close(w->dirfd);
			w->dirfd = fd;
			strcpy(w->done, "/");
			w->len = 1;
		}
		return 1;
	}
	if (!S_ISDIR(stx.stx_mode) && *after)
		return 0;
	fd = openat(w->dirfd, nm, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return 0;
	close(w->dirfd);
	w->dirfd = fd;
	memmove(w->rest, after, strlen(after) + 1);
	if (strcmp(nm, "..") == 0) {
		while (w->len > 1 && w->done[w->len - 1] != '/')
			w->len--;
		w->len = w->len > 1 ? w->len - 1 : 1;
		w->done[w->len] = '\0';
		return 1;
	}
	return path_push(w->done, &w->len, nm, n) ? 1 : -ENAMETOOLONG;
}

/*
 * @path with the symbolic links that exist now resolved, one component at
 * a time from "/", looking names up only in directories on local
 * filesystems (a dead server or an automount never holds the pass): the
 * walk stops at the first missing name or non-local directory and the rest
 * is kept as written.  Unlike resolve_path() it also tells where a path
 * leads whose end does not exist yet (a mkdir below a link, a directory on
 * a filesystem not mounted yet).
 * Returns: 0 and the result in @out; negative errno.
 */
static int resolve_local(struct view *v, const char *path, char out[static PATH_MAX])
{
	struct walk w = { .v = v, .done = "/", .len = 1 };
	int r = 0;

	if (path[0] != '/' || strlen(path) >= sizeof(w.rest))
		return -EINVAL;
	strcpy(w.rest, path);
	w.dirfd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (w.dirfd < 0)
		return -errno;
	for (;;) {
		char *c = w.rest + strspn(w.rest, "/");
		size_t n = strcspn(c, "/");
		const char *after = c + n + strspn(c + n, "/");

		if (n == 0 || (n == 1 && c[0] == '.')) {
			if (n == 0)
				break;
			memmove(w.rest, after, strlen(after) + 1);
			continue;
		}
		r = walk_component(&w, c, n, after);
		if (r <= 0)
			break;
	}
	close(w.dirfd);
	if (r < 0)
		return r;
	snprintf(out, PATH_MAX, "%s%s%s", w.done,
		 w.len > 1 && w.rest[strspn(w.rest, "/")] ? "/" : "", w.rest + strspn(w.rest, "/"));
	return path_normalize(out);
}

/*
 * The first @n bytes of @path, a directory, looked up once a pass: kept,
 * or looked up as a name in its own (kept) parent.  Only directories
 * reached without a link are kept, so each leads where its path says;
 * NULL: the long way (a link, a directory that is not local, no memory,
 * too deep), with the same result.
 */
static const struct view_dir *resolve_dir(struct view *v, const char *path, size_t n, unsigned depth)
{
	const struct view_dir *p = view_dirs_find(&v->dirs, path, n, false, false);
	const char *name;
	char nm[NAME_MAX + 1];
	struct statx stx;
	size_t pn;
	_cleanup_close_ int fd = -EBADF;
	bool local;

	if (p)
		return p;
	if (depth > 32 || n >= PATH_MAX)
		return NULL;
	if (n == 1) { /* "/" */
		fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0 || statx(fd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STATX_MNT_ID, &stx) < 0)
			return NULL;
		local = view_mount_is_local(v, stx.stx_mnt_id);
		return view_dirs_keep(&v->dirs, "/", 1, TAKE_FD(fd), &(struct view_dir){ .local = local });
	}
	for (pn = n; path[pn - 1] != '/';)
		pn--;
	name = path + pn;
	p = resolve_dir(v, path, pn > 1 ? pn - 1 : 1, depth + 1);
	if (!p || (p->fd >= 0 && !p->local) || n - pn > NAME_MAX)
		return NULL;
	if (p->fd >= 0) {
		memcpy(nm, name, n - pn);
		nm[n - pn] = '\0';
		/* cached attributes, no automount: no server is asked */
		if (statx(p->fd, nm, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT | AT_STATX_DONT_SYNC,
			  STATX_TYPE | STATX_MNT_ID, &stx) == 0) {
			if (S_ISLNK(stx.stx_mode))
				return NULL;
			if (S_ISDIR(stx.stx_mode) &&
			    (fd = openat(p->fd, nm, O_PATH | O_NOFOLLOW | O_DIRECTORY | O_CLOEXEC)) < 0)
				return NULL;
		} else if (errno != ENOENT && errno != ENOTDIR) {
			return NULL;
		}
	}
	local = fd >= 0 && view_mount_is_local(v, stx.stx_mnt_id);
	return view_dirs_keep(&v->dirs, path, n, TAKE_FD(fd), &(struct view_dir){ .local = local });
}

/*
 * @path (absolute, normalised) looked up in its kept directory: 1 it
 * exists (*@ret_mode), 0 it does not; -EAGAIN: the long way.  A path found
 * here leads where it says: no link is on its way.
 */
static int resolve_kept(struct view *v, const char *path, mode_t *ret_mode)
{
	const char *slash = strrchr(path, '/');
	const struct view_dir *d;
	struct statx stx;

	if (path[0] != '/' || !path_is_normalized(path) || !slash[1])
		return -EAGAIN;
	d = resolve_dir(v, path, slash == path ? 1 : (size_t)(slash - path), 0);
	if (!d || (d->fd >= 0 && !d->local))
		return -EAGAIN;
	if (d->fd < 0)
		return 0; /* below a directory that is not there */
	if (statx(d->fd, slash + 1, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT | AT_STATX_DONT_SYNC,
		  STATX_TYPE, &stx) < 0)
		return errno == ENOENT || errno == ENOTDIR ? 0 : -EAGAIN;
	if (S_ISLNK(stx.stx_mode))
		return -EAGAIN;
	*ret_mode = stx.stx_mode;
	return 1;
}

int view_resolve(struct view *v, const char *path, bool kernel, char buf[static PATH_MAX], mode_t *ret_mode)
{
	int r;

	*ret_mode = 0;
	if (strlen(path) >= PATH_MAX)
		return -ENAMETOOLONG;
	r = resolve_kept(v, path, ret_mode);
	if (r >= 0) {
		strcpy(buf, path);
		return 0;
	}
	if (kernel && resolve_path(path, buf))
		return 0;
	r = resolve_local(v, path, buf);
	if (r < 0)
		strcpy(buf, path);
	return r;
}

void view_done(struct view *v)
{
	view_dirs_forget(&v->dirs, NULL);
	if (v->root_checked)
		safe_close(v->rootfd);
	mnt_unref_table(v->tb);
	free(v->mounts);
	*v = (struct view){ 0 };
}
