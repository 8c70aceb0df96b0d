/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The three-way rule's memory and helpers.  The kept list
 * (COPY_SYNC_KEPT_XATTR): entries changed in the directory (through
 * another path, or while uncovered) and not in the area, or on both sides.
 * Once committed the directory's baseline moves past them, and by times
 * alone the next sync would put the area's version over the directory's:
 * the list keeps them the directory's until the area is torn down.  And
 * what the rule needs beyond an entry's own times: whether anything below
 * a directory changed, the free name beside an entry.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>

#include "copy.h"
#include "copy_sync_internal.h"
#include "shared/units.h"

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* the paths of the list @xattr of @areafd ('\0'-ended each) into @l,
 * sorted.  Returns: 0 (none: empty); -ENOMEM; negative errno of fgetxattr() */
static int paths_read(struct sync_paths *l, int areafd, const char *xattr)
{
	ssize_t n = fgetxattr(areafd, xattr, NULL, 0);
	char *buf, *p;

	if (n <= 0)
		return n < 0 && errno != ENODATA && errno != ENOTSUP ? -errno : 0;
	if (!(buf = malloc(n + 1)))
		return -ENOMEM;
	n = fgetxattr(areafd, xattr, buf, n);
	if (n < 0) {
		free(buf);
		return -errno;
	}
	buf[n] = '\0';
	l->buf = buf;
	for (p = buf; p < buf + n; p += strlen(p) + 1) {
		if (!*p)
			continue;
		if (grow_array(&l->v, &l->cap, l->n, sizeof(char *)) < 0)
			return -ENOMEM;
		l->v[l->n++] = p;
	}
	if (l->n) /* qsort() of NULL is undefined, even of none */
		qsort(l->v, l->n, sizeof(char *), by_name);
	return 0;
}

static void paths_done(struct sync_paths *l)
{
	free(l->v);
	free(l->buf);
}

int sync_kept_read(struct shared *sh, int areafd)
{
	int r = paths_read(&sh->kept_old, areafd, COPY_SYNC_KEPT_XATTR);

	return r < 0 ? r : paths_read(&sh->retry, areafd, COPY_SYNC_RETRY_XATTR);
}

/* orders the key "PATH/" before, among or after the names below PATH */
static int by_prefix(const void *a, const void *b)
{
	const char *k = *(char *const *)a;

	return strncmp(k, *(char *const *)b, strlen(k));
}

/* whether @l holds the entry @name of the walk's current directory or,
 * @below, an entry below it */
static bool paths_find(const struct sync_ctx *c, const struct sync_paths *l, const char *name, bool below)
{
	char *key, *dir = NULL;
	bool found;

	if (!l->n)
		return false;
	key = dirstack_path_dup(&c->s, c->basename, name);
	if (key && below && asprintf(&dir, "%s/", key) < 0)
		dir = NULL;
	/* without memory: as if not kept (the times decide, as before) */
	if (below)
		found = dir && bsearch(&dir, l->v, l->n, sizeof(char *), by_prefix);
	else
		found = key && bsearch(&key, l->v, l->n, sizeof(char *), by_name);
	free(dir);
	free(key);
	return found;
}

static bool kept_find(const struct sync_ctx *c, const char *name, bool below)
{
	return paths_find(c, &c->sh->kept_old, name, below);
}

bool sync_kept_has(const struct sync_ctx *c, const char *name)
{
	return kept_find(c, name, false);
}

bool sync_retry_has(const struct sync_ctx *c, const char *name)
{
	return paths_find(c, &c->sh->retry, name, false);
}

int sync_retry_write(struct shared *sh, int areafd)
{
	size_t len = 0;
	char *buf, *p;
	int r = 0;

	if (sh->skipv_lost)
		return -ENOMEM;
	if (!sh->nskipv)
		return fremovexattr(areafd, COPY_SYNC_RETRY_XATTR) < 0 && errno != ENODATA && errno != ENOTSUP
			       ? -errno
			       : 0;
	for (size_t i = 0; i < sh->nskipv; i++)
		len += strlen(sh->skipv[i].path) + 1;
	if (!(p = buf = malloc(len)))
		return -ENOMEM;
	for (size_t i = 0; i < sh->nskipv; i++)
		p = stpcpy(p, sh->skipv[i].path) + 1;
	if (fsetxattr(areafd, COPY_SYNC_RETRY_XATTR, buf, len, 0) < 0)
		r = -errno;
	free(buf);
	return r;
}

void sync_kept_add_path(struct shared *sh, char *path)
{
	pthread_mutex_lock(&sh->lock);
	if (!path || grow_array(&sh->kept_new, &sh->kept_newcap, sh->nkept_new, sizeof(char *)) < 0) {
		sh->kept_lost = true;
		free(path);
	} else
		sh->kept_new[sh->nkept_new++] = path;
	pthread_mutex_unlock(&sh->lock);
}

void sync_kept_add(struct sync_ctx *c, const char *name)
{
	if (kept_find(c, name, false))
		return; /* kept by an earlier sync: not new, and written again */
	sync_kept_add_path(c->sh, dirstack_path_dup(&c->s, c->basename, name));
}

int sync_kept_write(struct shared *sh, int areafd)
{
	size_t n = sh->kept_old.n + sh->nkept_new, len = 0;
	char **all, *buf, *p;
	int r = 0;

	if (sh->kept_lost)
		return -ENOMEM;
	if (!sh->nkept_new)
		return 0; /* the list stands as it was */
	if (!(all = malloc(n * sizeof(*all))))
		return -ENOMEM;
	if (sh->kept_old.n) /* memcpy() from NULL is undefined, even of 0 bytes */
		memcpy(all, sh->kept_old.v, sh->kept_old.n * sizeof(*all));
	memcpy(all + sh->kept_old.n, sh->kept_new, sh->nkept_new * sizeof(*all));
	qsort(all, n, sizeof(*all), by_name);
	for (size_t i = 0; i < n; i++)
		len += strlen(all[i]) + 1;
	if (!(p = buf = malloc(len))) {
		free(all);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		if (i == 0 || strcmp(all[i], all[i - 1]) != 0)
			p = stpcpy(p, all[i]) + 1;
	if (fsetxattr(areafd, COPY_SYNC_KEPT_XATTR, buf, (size_t)(p - buf), 0) < 0)
		r = -errno;
	free(buf);
	free(all);
	return r;
}

void sync_kept_done(struct shared *sh)
{
	for (size_t i = 0; i < sh->nkept_new; i++)
		free(sh->kept_new[i]);
	free(sh->kept_new);
	paths_done(&sh->kept_old);
	paths_done(&sh->retry);
}

int sync_tree_changed(int dirfd, const char *name, const struct timespec *base, dev_t dev)
{
	struct dirstack s;
	const char *e;
	struct stat st;
	int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), r;

	dirstack_init(&s, 1, 0, SYNC_HELD_LEVELS);
	r = fd < 0 ? -errno : dirstack_push(&s, &fd, name);
	if (r == 0)
		r = dirstack_list(&s, false);
	while (r == 0 && s.depth > 0) {
		if (!(e = dirstack_next(&s)))
			r = dirstack_pop(&s);
		else if (fstatat(dirstack_top(&s)->fd[0], e, &st, AT_SYMLINK_NOFOLLOW) < 0)
			r = errno == ENOENT ? 1 : -errno; /* removed during the walk */
		else if (st.st_dev != dev)
			continue;
		else if (sync_since(&st.st_ctim, base, true))
			r = 1;
		else if (S_ISDIR(st.st_mode)) {
			fd = openat(dirstack_top(&s)->fd[0], e, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			r = fd < 0 ? -errno : dirstack_push(&s, &fd, e);
			if (r == 0)
				r = dirstack_list(&s, false);
		}
	}
	dirstack_free(&s);
	return r;
}

int sync_lower_changed(struct sync_ctx *c, int lfd, const char *name, const struct stat *lst)
{
	if (sync_since(&lst->st_ctim, &c->lbase, false) || sync_kept_has(c, name))
		return 1;
	if (!S_ISDIR(lst->st_mode) || c->lbase.tv_sec < 0)
		return 0;
	return kept_find(c, name, true) ? 1 : sync_tree_changed(lfd, name, &c->lbase, c->ldev);
}

static bool sync_level_moved(const struct sync_ctx *c)
{
	return ((const struct sync_level *)dirstack_top(&c->s)->extra)->moved;
}

/* whether @t falls between the area's baseline and the lower one's: the
 * last sync's span, where its own renames and others' changes mix */
static bool in_last_sync(const struct sync_ctx *c, const struct timespec *t)
{
	return c->base.tv_sec >= 0 && c->lbase.tv_sec >= 0 && sync_since(t, &c->base, false) &&
	       !sync_since(t, &c->lbase, false);
}

int sync_lower_changed_during(struct sync_ctx *c, int afd, int lfd, const char *name, const struct stat *st,
			      const struct stat *lst)
{
	int r;

	if (!in_last_sync(c, &lst->st_ctim) || sync_level_moved(c) || S_ISDIR(st->st_mode) ||
	    sync_since(&st->st_ctim, &c->base, true) ||
	    (S_ISREG(st->st_mode) && mapped_has(&c->sh->mapped, st->st_ino)))
		return 0;
	if ((st->st_mode & S_IFMT) != (lst->st_mode & S_IFMT) || st->st_size != lst->st_size)
		return 1;
	/* a filesystem that keeps coarser times than the area moves an
	 * mtime the sync set: that alone is not a change, the data is */
	if (!S_ISREG(st->st_mode) || (st->st_mtim.tv_sec == lst->st_mtim.tv_sec &&
				      st->st_mtim.tv_nsec == lst->st_mtim.tv_nsec))
		return 0;
	r = sync_same_content(afd, lfd, name, st, lst, false);
	return r < 0 ? r : !r;
}

bool sync_lower_made_during(const struct sync_ctx *c, const struct stat *lst)
{
	const struct stat *adir = &((struct sync_level *)dirstack_top(&c->s)->extra)->st;

	return in_last_sync(c, &lst->st_ctim) && !sync_level_moved(c) && !sync_since(&adir->st_mtim, &c->base, true);
}

int sync_area_changed(struct sync_ctx *c, int afd, const char *name, const struct stat *st)
{
	if (sync_since(&st->st_ctim, &c->base, true))
		return 1;
	return S_ISDIR(st->st_mode) ? sync_tree_changed(afd, name, &c->base, c->adev) : 0;
}

/* the bytes of @name kept in a shortened name of at most @max bytes: cut
 * at a character boundary when @name is UTF-8 (never inside a sequence),
 * else at a byte */
static size_t cut_at(const char *name, size_t max)
{
	const unsigned char *s = (const unsigned char *)name;
	size_t i = 0, k;

	for (k = 0; s[k]; k += utf8_char_len(s + k))
		if (!utf8_char_len(s + k))
			return max; /* not UTF-8 */
	while (s[i] && i + utf8_char_len(s + i) <= max)
		i += utf8_char_len(s + i);
	return i;
}

/* FNV-1a of @name: a shortened name beside stays the same for the same
 * entry (an earlier sync's copy is reused) and differs from another
 * entry's of the same beginning */
static uint32_t name_hash(const char *name)
{
	uint32_t h = 2166136261u;

	for (const unsigned char *p = (const unsigned char *)name; *p; p++)
		h = (h ^ *p) * 16777619u;
	return h;
}

void sync_beside_name(const char *name, unsigned i, char beside[NAME_MAX + 1])
{
	char tail[64];
	size_t n = strlen(name), t;

	t = (size_t)(i ? snprintf(tail, sizeof(tail), "%s.%u", COPY_SYNC_AREA_SUFFIX, i)
		       : snprintf(tail, sizeof(tail), "%s", COPY_SYNC_AREA_SUFFIX));
	if (n + t <= NAME_MAX) {
		snprintf(beside, NAME_MAX + 1, "%s%s", name, tail);
		return;
	}
	n = cut_at(name, NAME_MAX - t - 9);
	snprintf(beside, NAME_MAX + 1, "%.*s~%08x%s", (int)n, name, name_hash(name), tail);
}

/* whether this sync put another entry's version beside under @beside in
 * the walk's current directory (not on the disk before step 4) */
static bool beside_taken(struct sync_ctx *c, const char *beside)
{
	char *key = dirstack_path_dup(&c->s, c->basename, beside);
	bool found = !key; /* without memory: taken, another name is tried */

	pthread_mutex_lock(&c->sh->lock);
	for (size_t i = 0; key && !found && i < c->sh->nkept_new; i++)
		found = !strcmp(c->sh->kept_new[i], key);
	pthread_mutex_unlock(&c->sh->lock);
	free(key);
	return found;
}

int sync_beside(struct sync_ctx *c, int afd, int lfd, const char *name, char beside[NAME_MAX + 1])
{
	char rel[PATH_MAX / 4];
	struct stat st;

	for (unsigned i = 0;; i++) {
		if (i == 1000)
			return -EEXIST;
		sync_beside_name(name, i, beside);
		if (fstatat(afd, beside, &st, AT_SYMLINK_NOFOLLOW) == 0 || errno != ENOENT)
			continue; /* an entry of the area's */
		if (beside_taken(c, beside))
			continue;
		if (fstatat(lfd, beside, &st, AT_SYMLINK_NOFOLLOW) < 0 ? errno == ENOENT
		    : sync_kept_has(c, beside) && !sync_since(&st.st_ctim, &c->lbase, false))
			break; /* free, or an earlier sync's copy, untouched since */
	}
	dirstack_path(&c->s, c->basename, NULL, rel, sizeof(rel));
	sync_note(c, &c->sh->both, 0, rel, name,
		  " (the directory's version is kept, the area's beside it: '%s%s%s')", rel,
		  *rel ? "/" : "", beside);
	return 0;
}

/* whether the entry @name of @fd was made at or past @base (statx(2)
 * btime); @unknown where the filesystem keeps none */
static bool born_since(int fd, const char *name, const struct timespec *base, bool unknown)
{
	struct statx sx;

	if (statx(fd, name, AT_SYMLINK_NOFOLLOW, STATX_BTIME, &sx) < 0 || !(sx.stx_mask & STATX_BTIME))
		return unknown;
	return sync_since(&(struct timespec){ .tv_sec = sx.stx_btime.tv_sec, .tv_nsec = sx.stx_btime.tv_nsec },
			  base, true);
}

/* a name's share of root_names(): 64-bit FNV-1a, then splitmix64's
 * finalizer to spread it over all 64 bits before the shares are added */
static uint64_t name_share(const char *name)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (const unsigned char *p = (const unsigned char *)name; *p; p++)
		h = (h ^ *p) * 0x100000001b3ULL;
	h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ULL;
	h = (h ^ (h >> 27)) * 0x94d049bb133111ebULL;
	return h ^ (h >> 31);
}

/* the digest of the names in @lowerfd but the sync's working directory
 * @work (NULL: none), into @ret: one added, removed or renamed changes it
 * (but with a 2^-64 chance).  The names' shares are added, not chained:
 * readdir(3)'s order may change with the directory.
 * Returns: 0; negative errno of reading the directory. */
static int root_names(int lowerfd, const struct stat *work, uint64_t *ret)
{
	/* a descriptor of its own: no offset shared with @lowerfd's readers */
	int fd = openat(lowerfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd < 0 ? NULL : fdopendir(fd);
	struct dirent *de;
	struct stat st;
	uint64_t sum = 0;
	int r = -errno;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return r;
	}
	while ((errno = 0, de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (work && de->d_ino == work->st_ino && fstatat(lowerfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    st.st_dev == work->st_dev && st.st_ino == work->st_ino)
			continue;
		sum += name_share(de->d_name);
	}
	r = errno ? -errno : 0;
	closedir(d);
	*ret = sum;
	return r;
}

int copy_sync_root_record(int areafd, int lowerfd, const struct stat *work)
{
	char v[24];
	uint64_t sum;
	int r = root_names(lowerfd, work, &sum);

	if (r == 0) {
		snprintf(v, sizeof(v), "%" PRIu64, sum);
		r = fsetxattr(areafd, COPY_LOWER_ROOT_XATTR, v, strlen(v), 0) < 0 ? -errno : 0;
	}
	/* none rather than a stale one: the next sync then goes by the mtime */
	if (r < 0 && fremovexattr(areafd, COPY_LOWER_ROOT_XATTR) < 0 && errno != ENODATA)
		return -errno;
	return r;
}

bool sync_root_kept(int areafd, int lowerfd, const struct stat *work)
{
	char v[24];
	uint64_t rec, sum;
	ssize_t n = fgetxattr(areafd, COPY_LOWER_ROOT_XATTR, v, sizeof(v) - 1);

	if (n <= 0)
		return false;
	v[n] = '\0';
	return units_parse_uint(v, UINT64_MAX, &rec) == 0 && root_names(lowerfd, work, &sum) == 0 && sum == rec;
}

/* whether the lower directory @ldir of the walk's current level had names
 * added or removed since the lower baseline by someone else: by its
 * mtime, except at the lower root, whose mtime the sync's own working
 * directory moves at every sync (made there, then deleted); there by its
 * names (sync_ctx.lroot_kept, COPY_LOWER_ROOT_XATTR) */
static bool lower_names_changed(const struct sync_ctx *c, const struct stat *ldir)
{
	if (c->lroot_kept && c->s.depth == 1 && !*c->basename)
		return false;
	return sync_since(&ldir->st_mtim, &c->lbase, true);
}

bool sync_lower_names_changed(const struct sync_ctx *c)
{
	struct stat ldir;

	return fstat(dirstack_top(&c->s)->fd[1], &ldir) == 0 && lower_names_changed(c, &ldir);
}

/*
 * Whether the entry @name (@st) of the directory @fd of one side, which
 * the other side lacks, was there under this name at the last sync (and
 * so on the other side too, which deleted it since), by the side's
 * baseline @base, whether names were added to or removed from that
 * directory since (@names) and from the other side's (@other_names):
 *  - made since (btime; a tar(1) may set the mtime back, not the btime):
 *    new; where the filesystem keeps no btime, new when the directory's
 *    names changed since;
 *  - the other side's directory removed no name since: it did not delete
 *    this one, which came by a rename on this side;
 *  - moved since by its ctime alone, not its mtime (a rename moves the
 *    ctime only; a change of its data, or of a directory's names, both),
 *    in a directory whose names changed: it may have been renamed in;
 *  - else it was there.
 * Only the directory's own names count, not its mtime alone: any name
 * added beside the entry would hide every conflict in it.  A rename on
 * this side that also changed the entry, where the other side removed
 * names too, looks like one that was there: reported, while nothing of
 * either side is lost.
 */
static bool was_there(int fd, const char *name, const struct stat *st, const struct timespec *base, bool names,
		      bool other_names)
{
	if (born_since(fd, name, base, names) || !other_names)
		return false;
	return !(names && sync_since(&st->st_ctim, base, true) && !sync_since(&st->st_mtim, base, true));
}

/* notes @name of the current directory as changed on both sides, @what
 * saying what became of it */
static void sync_both(struct sync_ctx *c, const char *name, const char *what)
{
	char rel[PATH_MAX / 4];

	dirstack_path(&c->s, c->basename, NULL, rel, sizeof(rel));
	sync_note(c, &c->sh->both, 0, rel, name, " (%s)", what);
}

int sync_lower_deleted(struct sync_ctx *c, int afd, const char *name, const struct stat *st)
{
	const struct stat *dir = &((struct sync_level *)dirstack_top(&c->s)->extra)->st;
	struct stat ldir;
	int r;

	if (c->lbase.tv_sec < 0)
		return 0;
	if (fstat(dirstack_top(&c->s)->fd[1], &ldir) < 0)
		return -errno;
	if (!was_there(afd, name, st, &c->base, sync_since(&dir->st_mtim, &c->base, true),
		       lower_names_changed(c, &ldir)))
		return 0;
	if ((r = sync_area_changed(c, afd, name, st)) > 0)
		sync_both(c, name, "deleted in the directory, changed in the area: the area's version is back; delete it again if it should go");
	return r < 0 ? r : 0;
}

void sync_area_deleted(struct sync_ctx *c, int lfd, const char *name, const struct stat *lst)
{
	const struct stat *adir = &((struct sync_level *)dirstack_top(&c->s)->extra)->st;
	struct stat dir;

	/* a directory not changed itself, only below it, was there */
	if (sync_since(&lst->st_ctim, &c->lbase, false) &&
	    (fstat(lfd, &dir) < 0 || !was_there(lfd, name, lst, &c->lbase, lower_names_changed(c, &dir),
						 sync_since(&adir->st_mtim, &c->base, true))))
		return; /* made, renamed or changed in the directory since: may be new */
	sync_both(c, name, "deleted in the area, changed in the directory: the directory's version is kept; delete it there if it should go");
}
