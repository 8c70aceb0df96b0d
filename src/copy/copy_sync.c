/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The incremental, crash-consistent sync back of an area into its lower
 * directory (contract: copy_sync_fd()).
 *
 * Steps:
 *  1. walk the two trees side by side, by descriptor, the root's
 *     directories in one thread per CPU.  An entry alike on both sides
 *     (same_meta()) and not changed since the baseline is left alone: one
 *     fstatat() of each side tells.  Any other is looked up once more,
 *     O_PATH | O_NOFOLLOW, and copied from that descriptor alone
 *     (copy_fd.h) complete into W as n<N>: a file, link or node, or a
 *     directory the lower copy lacks (filled in step 2).  Lower entries
 *     the area lacks are noted for deletion.  The directory is not touched;
 *  2. the new subtrees into W (copy_trees_fd());
 *  3. syncfs(): all of W on disk before any of it is linked in;
 *  4. the kept list, then the intent record, on the area root; then each
 *     entry moved into place in one rename: W/n<N> over lower/DIR/NAME
 *     (RENAME_EXCHANGE: the old version ends in W), deletions into W/d<N>;
 *  5. changed directories' metadata, deepest first, the root's last;
 *  6. syncfs(), the commit point; then the area's baseline moves to this
 *     sync's start, the directory's past its renames, the intent goes.
 *
 * A kill between intent and its removal leaves renames the directory's
 * baseline does not cover, which by their times the next sync would take
 * for the directory's own changes and put the area's versions beside.  So
 * the next sync completes the cut one first (intent_complete()): the
 * directory's baseline moves past it, the area's stays, and everything
 * the cut sync may not have carried is compared again.  What the directory
 * changed itself during a sync, or after a cut, falls between the two
 * baselines with the sync's renames: it is the directory's where it is not
 * what the sync put there (sync_lower_changed_during()).  A power cut takes
 * the area (RAM) and its records: nothing to complete.  A crash anywhere
 * leaves each lower entry its complete old or new version (no torn file, a
 * new directory appears whole), and W only what is no longer live, for the
 * caller to delete (area_sync.c).
 *
 * Why syncfs() and no fsync(): ext4 (delayed allocation), XFS and btrfs do
 * not order a rename after the data of the file renamed; a crash would
 * leave a live empty or torn file.  One syncfs() is one journal commit and
 * cache flush for all of W (200 files on ext4: 9-63 ms, where an fsync()
 * each took 783-963 ms; bench/README.md).  Step 6 makes the renames durable
 * before success is reported and the baselines move.  syncfs() covers the
 * directories; W's own names need not be durable.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "copy.h"
#include "copy_fd.h"

#include "copy_sync_internal.h"
#include "shared/fs_time.h"

/* the path of the walk's current directory, for a message */
static const char *here(struct sync_ctx *c, char *buf, size_t len)
{
	return dirstack_path(&c->s, c->basename, NULL, buf, len);
}

static struct sync_level *level(const struct sync_ctx *c, size_t d)
{
	return c->s.f[d].extra;
}

/* the node of the walk's level @d, made (with its ancestors') when it is
 * first needed: only directories with something to do get one.  Under
 * the lists' lock. */
static int node_of(struct sync_ctx *c, size_t d, size_t *ret)
{
	struct sync_ctx *l = c->lists;
	size_t k = d;

	while (k > 0 && !level(c, k)->node1)
		k--;
	for (size_t j = level(c, k)->node1 ? k + 1 : k; j <= d; j++) {
		struct sync_node *n;

		if (grow_array(&l->nodes, &l->nodecap, l->nnodes, sizeof(*l->nodes)) < 0)
			return -ENOMEM;
		n = &l->nodes[l->nnodes];
		/* a walk's base without a node is a task's: a child of the root */
		n->parent = j > 0 ? level(c, j - 1)->node1 - 1 : 0;
		if (!(n->name = strdup(c->s.f[j].name)))
			return -ENOMEM;
		level(c, j)->node1 = ++l->nnodes;
	}
	*ret = level(c, d)->node1 - 1;
	return 0;
}

/* notes a step 4 rename of @name in the walk's current directory, where
 * the walk saw the lower entry @lst (NULL: none) */
static int op_add(struct sync_ctx *c, const char *name, enum op_kind k, const char *w, unsigned fflags,
		  const struct stat *lst)
{
	struct sync_ctx *l = c->lists;
	struct op o = { .name = strdup(name), .kind = k, .fflags = fflags };
	int r = o.name ? 0 : -ENOMEM;

	snprintf(o.w, sizeof(o.w), "%s", w);
	if (lst)
		o.seen = (struct sync_seen){ .ino = lst->st_ino, .size = lst->st_size, .mtim = lst->st_mtim };
	pthread_mutex_lock(&c->sh->llock);
	if (r == 0 && (r = node_of(c, c->s.depth - 1, &o.node)) == 0 &&
	    (r = grow_array(&l->ops, &l->opcap, l->nops, sizeof(o))) == 0)
		l->ops[l->nops++] = o;
	pthread_mutex_unlock(&c->sh->llock);
	if (r < 0)
		free(o.name);
	else
		level(c, c->s.depth - 1)->changes++;
	return r;
}

static void w_name(struct sync_ctx *c, char w[16], char kind)
{
	snprintf(w, 16, "%c%u", kind, atomic_fetch_add(&c->sh->nw, 1));
}

static bool same_time(const struct timespec *a, const struct timespec *l)
{
	/* a lower filesystem that keeps whole seconds only (l's nsec 0) */
	return a->tv_sec == l->tv_sec && (a->tv_nsec == l->tv_nsec || l->tv_nsec == 0);
}

/* whether the lower copy @l of the area entry @a is alike in what
 * fstatat() shows: type, owner, mode, mtime, and but for a directory
 * size, link count, device number */
static bool same_meta(const struct stat *a, const struct stat *l)
{
	if ((a->st_mode & S_IFMT) != (l->st_mode & S_IFMT) || a->st_uid != l->st_uid ||
	    a->st_gid != l->st_gid || !same_time(&a->st_mtim, &l->st_mtim))
		return false;
	if (!S_ISLNK(a->st_mode) && (a->st_mode & 07777) != (l->st_mode & 07777))
		return false;
	if (!S_ISDIR(a->st_mode) && (a->st_size != l->st_size || a->st_nlink != l->st_nlink))
		return false;
	return !(S_ISCHR(a->st_mode) || S_ISBLK(a->st_mode)) || a->st_rdev == l->st_rdev;
}

/* whether the lower copy @l of the area entry @name of @afd (@a), which
 * is @name of @lfd, is still up to date: every change of data, metadata,
 * xattrs or links moves the ctime (inode(7)) past the base, which is
 * later than every write before the sync began
 * (copy_sync_base_past_writes()); but a write through a mapping moves no
 * time (copy_sync_changed.c): such a file is compared by content */
static bool unchanged(const struct sync_ctx *c, int afd, int lfd, const char *name, const struct stat *a,
		      const struct stat *l)
{
	if (!same_meta(a, l) || c->base.tv_sec < 0)
		return false;
	if (S_ISREG(a->st_mode) && (c->o->verify || mapped_has(&c->sh->mapped, a->st_ino)))
		return sync_same_content(afd, lfd, name, a, l, true) == 1;
	return !sync_since(&a->st_ctim, &c->base, true);
}

/* W/@w, the copy of the non-directory @fd, charged once per inode first;
 * its file flags into @fflags, not onto the copy: step 4 sets them */
static int write_node(struct sync_ctx *c, int fd, const struct stat *st, const char *w, unsigned *fflags,
		      struct copy_lost *lost)
{
	struct copy_node n = { .fd = fd, .st = *st, .in = -1, .out = -1 };
	int r = copy_budget_charge(c->o->budget, st);

	if (r == 0)
		r = copy_node_read(c->sys, &n);
	*fflags = n.fflags;
	n.fflags = 0;
	if (r == 0)
		r = copy_node_create(c->sys, &n, c->workfd, w);
	if (r == 0)
		r = copy_node_finish(c->sys, &n, c->workfd, w, c->buf, SYNC_BUF_SIZE, NULL, lost);
	copy_node_done(&n);
	return r;
}

/* step 1 for a changed non-directory: written once per area inode; its
 * other names are links to that copy, made in W */
static int put_node(struct sync_ctx *c, int fd, const struct stat *st, const char *name, const struct stat *lst)
{
	struct copy_lost lost = { 0 };
	struct copy_inode *l;
	unsigned fflags = 0;
	char w[16], rel[PATH_MAX / 4];
	int r;

	w_name(c, w, 'n');
	if (st->st_nlink < 2)
		r = write_node(c, fd, st, w, &fflags, &lost);
	else {
		/* under the lock: a link is never made to a copy not yet there */
		pthread_mutex_lock(&c->sh->lock);
		if ((l = copy_inode_find(&c->sh->inodes, st->st_dev, st->st_ino)))
			r = c->sys->linkat(c->workfd, l->rel, c->workfd, w, 0) < 0 ? -errno : 0;
		else if ((r = write_node(c, fd, st, w, &fflags, &lost)) == 0)
			r = copy_inode_add(&c->sh->inodes, st->st_dev, st->st_ino, w, 0);
		pthread_mutex_unlock(&c->sh->lock);
	}
	if (r == 0 && lost.n)
		sync_lost(c, here(c, rel, sizeof(rel)), name, &lost);
	return r < 0 ? r : op_add(c, name, OP_PUT, w, fflags, lst);
}

/* step 1 for an area directory the lower copy lacks: W/n<N>, filled in
 * step 2 (or left empty: another filesystem's mount point) */
static int put_dir(struct sync_ctx *c, int fd, const struct stat *st, const char *name, const struct stat *lst)
{
	struct copy_xattrs xa = { 0 };
	struct copy_lost lost = { 0 };
	struct sync_ctx *l = c->lists;
	char w[16], rel[PATH_MAX / 4];
	int sfd, dfd, r;

	w_name(c, w, 'n');
	if ((r = copy_budget_charge(c->o->budget, st)) < 0 || c->sys->mkdirat(c->workfd, w, 0700) < 0)
		return r < 0 ? r : -errno;
	sfd = c->sys->openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
	if (sfd < 0)
		return -errno;
	if (st->st_dev == c->adev) {
		pthread_mutex_lock(&c->sh->llock);
		if (grow_array(&l->tsrc, &l->treecap, l->ntrees, sizeof(int)) < 0 ||
		    !(l->trel = realloc(l->trel, l->treecap * sizeof(char *))) ||
		    !(l->trel[l->ntrees] = strdup(w)))
			r = -ENOMEM;
		else
			l->tsrc[l->ntrees++] = sfd;
		pthread_mutex_unlock(&c->sh->llock);
		if (r < 0)
			close(sfd);
		return r < 0 ? r : op_add(c, name, OP_PUT, w, 0, lst);
	}
	/* a mount point in the area: the directory alone, empty */
	dfd = c->sys->openat(c->workfd, w, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0);
	r = dfd < 0 ? -errno : copy_xattrs_read(sfd, false, &xa);
	if (r == 0)
		r = copy_meta_fd(dfd, st, &xa, copy_fflags_get(sfd), &lost);
	if (r == 0 && lost.n)
		sync_lost(c, here(c, rel, sizeof(rel)), name, &lost);
	free(xa.buf);
	close(sfd);
	if (dfd >= 0)
		close(dfd);
	return r < 0 ? r : op_add(c, name, OP_PUT, w, 0, lst);
}

/* opens the area directory @fd (O_PATH) and the lower one @name of
 * @lfd into @fds, the latter checked to be the @lst compared; returns 1,
 * 0 for a mount point in the area (its lower directory stays), or
 * negative errno (-ESTALE: replaced since fstatat()) */
static int open_pair(struct sync_ctx *c, int fd, const struct stat *st, int lfd, const char *name,
		     const struct stat *lst, int fds[2])
{
	struct stat s;
	int r;

	if (st->st_dev != c->adev)
		return 0;
	fds[0] = c->sys->openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
	if (fds[0] < 0)
		return -errno;
	fds[1] = openat(lfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fds[1] < 0 || fstat(fds[1], &s) < 0)
		r = -errno;
	else if (s.st_ino != lst->st_ino || s.st_dev != lst->st_dev)
		r = -ESTALE;
	else
		return 1;
	close(fds[0]);
	if (fds[1] >= 0)
		close(fds[1]);
	return r;
}

/* enters the opened pair @fds (taken) as the walk's next level */
static int push_pair(struct sync_ctx *c, int fds[2], const char *name, const struct stat *st,
		     const struct stat *lst)
{
	struct sync_level *lv;
	int r = dirstack_push(&c->s, fds, name);

	if (r < 0)
		return r;
	lv = dirstack_top(&c->s)->extra;
	lv->st = *st;
	lv->changed = !unchanged(c, -1, -1, name, st, lst); /* a directory: by its times alone */
	lv->moved = sync_since(&st->st_ctim, &c->base, true) || (c->s.depth > 1 && level(c, c->s.depth - 2)->moved);
	return dirstack_list(&c->s, true);
}

static int task_add(struct shared *sh, int fd, const struct stat *st, const struct stat *lst,
		    const char *name)
{
	struct task *t;

	if (grow_array(&sh->tasks, &sh->taskcap, sh->ntasks, sizeof(*t)) < 0)
		return -ENOMEM;
	t = &sh->tasks[sh->ntasks];
	*t = (struct task){ .fd = fd, .st = *st, .lst = *lst, .name = strdup(name) };
	if (!t->name)
		return -ENOMEM;
	sh->ntasks++;
	return 0;
}

/* step 1 for the area entry @name of the walk's current directory pair */
static int sync_entry(struct sync_ctx *c, const char *name)
{
	const struct dirstack_frame *f = dirstack_top(&c->s);
	int afd = f->fd[0], lfd = f->fd[1];
	char beside[NAME_MAX + 1];
	const char *orig = name;
	struct stat st, lst, *seen;
	bool have, retry, lchanged = false;
	int fd, fds[2], r = 0;

	/* most entries did not change: two fstatat() tell, nothing is opened
	 * (nothing is read or written through this lookup; what is copied is
	 * looked up again, once, below) */
	if (fstatat(afd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : -errno; /* removed since readdir() */
	/* left out by the last sync, which moved the baseline past it */
	if ((retry = sync_retry_has(c, name)))
		st.st_ctim = c->start;
	have = fstatat(lfd, name, &lst, AT_SYMLINK_NOFOLLOW) == 0;
	if (!have && errno != ENOENT)
		return -errno;
	if (S_ISSOCK(st.st_mode) || (have && !S_ISDIR(st.st_mode) && unchanged(c, afd, lfd, name, &st, &lst)))
		return 0;
	/* written in the directory while the last sync ran (through another
	 * path to it), not changed in the area since: the directory's */
	if (have && (r = sync_lower_changed_during(c, afd, lfd, name, &st, &lst)) != 0) {
		if (r > 0)
			sync_kept_add(c, name);
		return r < 0 ? r : 0;
	}
	/* the three-way rule, by the two baselines: an entry the directory
	 * itself changed (it was uncovered; for a directory the area has as
	 * another type, anything below it) wins over an area entry that did
	 * not change (nor anything below it); changed on both sides, both
	 * are kept */
	if (have && !(S_ISDIR(st.st_mode) && S_ISDIR(lst.st_mode)) &&
	    (r = sync_lower_changed(c, lfd, name, &lst)) != 0) {
		if (r < 0 || (r = sync_area_changed(c, afd, name, &st)) <= 0) {
			if (r == 0)
				sync_kept_add(c, name); /* the directory's: so at the next sync too */
			return r;
		}
		lchanged = true;
	}
	/* deleted in the directory, unchanged in the area: only where the
	 * directory's names changed (else the entry came with a directory
	 * above it that the area renamed: rm -rf e && mv d e), and kept so:
	 * once the baseline moves past that change, only the list tells */
	if (!have && !S_ISDIR(st.st_mode) && c->lbase.tv_sec >= 0 && !sync_since(&st.st_ctim, &c->base, true) &&
	    ((sync_kept_has(c, name) && !level(c, c->s.depth - 1)->moved) || sync_lower_names_changed(c))) {
		sync_kept_add(c, name);
		return 0;
	}
	if (!have && !retry && (r = sync_lower_deleted(c, afd, name, &st)) < 0)
		return r; /* else copied back, reported when it was deleted there */
	seen = have ? &lst : NULL;
	if (lchanged) {
		if ((r = sync_beside(c, afd, lfd, name, beside)) < 0)
			return r;
		/* both: the directory's, and the area's version beside it,
		 * which the area lacks (not to be deleted next time) */
		sync_kept_add(c, name);
		sync_kept_add(c, beside);
		name = beside;
		have = false;
		/* an earlier sync's copy there is replaced (sync_beside()) */
		seen = fstatat(lfd, beside, &lst, AT_SYMLINK_NOFOLLOW) == 0 ? &lst : NULL;
	}
	fd = c->sys->openat(afd, orig, O_PATH | O_NOFOLLOW | O_CLOEXEC, 0);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	if (fstat(fd, &st) < 0) { /* what is copied: this inode's metadata */
		r = -errno;
		goto out;
	}
	if (retry)
		st.st_ctim = c->start;
	if (S_ISSOCK(st.st_mode))
		goto out; /* sockets are not copied */
	if (have && lst.st_dev == c->work.st_dev && lst.st_ino == c->work.st_ino) {
		r = -EEXIST; /* the area has an entry named like W */
		goto out;
	}
	if (have && lst.st_dev != c->ldev)
		goto out; /* another device: a subvolume, carried onto the area */
	if (S_ISDIR(st.st_mode) && have && S_ISDIR(lst.st_mode) && c->defer) {
		if ((r = task_add(c->sh, fd, &st, &lst, name)) == 0)
			fd = -1; /* the task's */
	} else if (S_ISDIR(st.st_mode) && have && S_ISDIR(lst.st_mode)) {
		/* the walk's next level, its metadata noted when it is left */
		if ((r = open_pair(c, fd, &st, lfd, name, &lst, fds)) > 0)
			r = push_pair(c, fds, name, &st, &lst);
	} else if (S_ISDIR(st.st_mode))
		r = put_dir(c, fd, &st, name, seen);
	else if (!have || !unchanged(c, afd, lfd, orig, &st, &lst)) {
		r = put_node(c, fd, &st, name, seen);
		if (r < 0 && sync_entry_own(r)) {
			char rel[PATH_MAX / 4];

			sync_skip(c, r, here(c, rel, sizeof(rel)), name, "copying", true,
				  dirstack_path_dup(&c->s, c->basename, orig), NULL);
			r = 0;
		}
	}
out:
	if (fd >= 0)
		close(fd);
	return r;
}

/* notes the entries of the current lower directory that are not among
 * the area's names (its sorted listing): they are deleted in step 4 */
static int sync_deletions(struct sync_ctx *c)
{
	int lfd = dirstack_top(&c->s)->fd[1];
	DIR *d = fdopendir(dup(lfd));
	struct dirent *de;
	struct stat st;
	char w[16];
	int r = 0;

	if (!d)
		return -errno;
	rewinddir(d); /* the offset is shared with @lfd's other readers */
	while (r == 0 && (errno = 0, de = readdir(d))) {
		const char *key = de->d_name;

		if (!strcmp(key, ".") || !strcmp(key, "..") || dirstack_has(&c->s, key))
			continue;
		if (fstatat(lfd, key, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			r = errno == ENOENT ? 0 : -errno;
			continue;
		}
		if (st.st_dev != c->ldev || (st.st_ino == c->work.st_ino && st.st_dev == c->work.st_dev))
			continue; /* another device (a carried subvolume), or W itself */
		if (c->s.depth == 1 && !*c->basename && !strcmp(key, COPY_RESCUE_DIR))
			continue; /* what a stop kept apart (copy.h): never the area's to delete */
		if (S_ISSOCK(st.st_mode))
			continue; /* never copied: not the area's */
		if (sync_kept_has(c, key))
			continue; /* kept by an earlier sync */
		if ((r = sync_lower_changed(c, lfd, key, &st)) > 0) {
			/* made in the directory: its own; else changed on both sides */
			sync_area_deleted(c, lfd, key, &st);
			sync_kept_add(c, key);
		}
		if (r != 0) {
			r = r < 0 ? r : 0;
			continue;
		}
		if (sync_lower_made_during(c, &st)) {
			sync_kept_add(c, key); /* made there while the last sync ran */
			continue;
		}
		w_name(c, w, 'd');
		r = op_add(c, key, OP_DELETE, w, 0, &st);
	}
	if (r == 0 && errno)
		r = -errno;
	closedir(d);
	return r;
}

/* leaves the current directory pair: its deletions, then its metadata
 * when it or anything in it changed (the lower root's is sync_apply()'s) */
static int leave_pair(struct sync_ctx *c)
{
	struct dirstack_frame *f = dirstack_top(&c->s);
	struct sync_level *lv = f->extra;
	struct dmeta m = { .st = lv->st };
	struct sync_ctx *l = c->lists;
	char rel[PATH_MAX / 4];
	size_t changes;
	bool root = c->s.depth == 1 && !*c->basename;
	int r = sync_deletions(c);

	if (r < 0)
		return sync_fail(c, -r, here(c, rel, sizeof(rel)), "", "reading the lower directory");
	changes = lv->changes;
	if (!root && (changes || lv->changed)) {
		m.fflags = copy_fflags_get(f->fd[0]);
		r = copy_xattrs_read(f->fd[0], false, &m.xa);
		pthread_mutex_lock(&c->sh->llock);
		if (r == 0)
			r = node_of(c, c->s.depth - 1, &m.node);
		if (r == 0 && grow_array(&l->dirs, &l->dircap, l->ndirs, sizeof(m)) < 0)
			r = -ENOMEM;
		if (r == 0)
			l->dirs[l->ndirs++] = m;
		pthread_mutex_unlock(&c->sh->llock);
		if (r < 0) {
			free(m.xa.buf);
			return sync_fail(c, -r, here(c, rel, sizeof(rel)), "", "copying");
		}
	}
	if ((r = dirstack_pop(&c->s)) < 0)
		return sync_fail(c, -r, here(c, rel, sizeof(rel)), "",
				 r == -ESTALE ? "moved during the sync (try again)" : "reopening the directory");
	if (c->s.depth > 0)
		level(c, c->s.depth - 1)->changes += changes;
	return 0;
}

/* step 1 below the directory pair @fds (taken), named @name below the
 * roots ("" with @st NULL: the roots themselves), depth first without
 * recursion */
static int sync_walk(struct sync_ctx *c, int fds[2], const char *name, const struct stat *st,
		     const struct stat *lst)
{
	char rel[PATH_MAX / 4];
	const char *entry;
	int r;

	c->basename = name;
	dirstack_init(&c->s, 2, sizeof(struct sync_level), SYNC_HELD_LEVELS);
	if (st)
		r = push_pair(c, fds, name, st, lst);
	else if ((r = dirstack_push(&c->s, fds, name)) == 0 && (r = dirstack_list(&c->s, true)) == 0) {
		level(c, 0)->node1 = 1; /* the roots: node 0 */
		r = fstat(dirstack_top(&c->s)->fd[0], &level(c, 0)->st) < 0 ? -errno : 0;
	}
	if (r < 0)
		r = sync_fail(c, -r, name, "", "reading the directory");
	while (r == 0 && c->s.depth > 0) {
		if (atomic_load(&c->sh->failed)) {
			r = -ECANCELED; /* another thread failed */
			break;
		}
		if (!(entry = dirstack_next(&c->s)))
			r = leave_pair(c);
		else if ((r = sync_entry(c, entry)) < 0)
			sync_fail(c, -r, here(c, rel, sizeof(rel)), entry, "copying");
	}
	dirstack_free(&c->s);
	return r;
}

/* a walking thread: takes the root's directories one at a time */
static void *walker(void *arg)
{
	struct sync_ctx *c = arg;
	size_t i;
	int r, fds[2];

	while (!atomic_load(&c->sh->failed) && (i = atomic_fetch_add(&c->sh->next, 1)) < c->sh->ntasks) {
		struct task *t = &c->sh->tasks[i];

		r = open_pair(c, t->fd, &t->st, c->lowerfd, t->name, &t->lst, fds);
		if (r > 0)
			r = sync_walk(c, fds, t->name, &t->st, &t->lst);
		else if (r < 0)
			sync_fail(c, -r, "", t->name, "copying");
	}
	return NULL;
}

/* step 1 below the root: its directories in up to @o->jobs threads (one
 * per CPU at most: the walk is system calls on cached metadata) */
static int sync_tasks(struct sync_ctx *c)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	size_t n = c->o->jobs > 1 ? c->o->jobs : 1, k = 0;
	struct sync_ctx *w;
	pthread_t *th;
	int r = 0;

	if (cpus > 0 && n > (size_t)cpus)
		n = (size_t)cpus;
	if (n > c->sh->ntasks)
		n = c->sh->ntasks ? c->sh->ntasks : 1;
	w = calloc(n, sizeof(*w));
	th = calloc(n, sizeof(*th));
	for (size_t i = 0; w && th && i < n; i++) {
		w[i] = (struct sync_ctx){ .sh = c->sh,
					  .o = c->o,
					  .sys = c->sys,
					  .lowerfd = c->lowerfd,
					  .workfd = c->workfd,
					  .adev = c->adev,
					  .ldev = c->ldev,
					  .work = c->work,
					  .base = c->base,
					  .start = c->start,
					  .lbase = c->lbase,
					  .lists = c,
					  .res = c->res };
		if (!(w[i].buf = malloc(SYNC_BUF_SIZE)) ||
		    (i > 0 && pthread_create(&th[i], NULL, walker, &w[i]) != 0))
			break;
		k = i + 1;
	}
	if (k > 0)
		walker(&w[0]); /* this thread is one of them */
	for (size_t i = 1; i < k; i++)
		pthread_join(th[i], NULL);
	if (!w || !th || k == 0)
		r = sync_fail(c, ENOMEM, "", "", "starting the walk");
	for (size_t i = 0; w && i < n; i++)
		sync_ctx_done(&w[i]);
	free(w);
	free(th);
	return r < 0 ? r : c->res->err;
}

/* what the committed sync did, into @res (copy.h) */
static void sync_count(const struct sync_ctx *c, struct copy_result *res)
{
	for (size_t i = 0; i < c->nops; i++)
		if (c->ops[i].kind == OP_DELETE)
			res->n_deleted++;
		else
			res->n_put++;
	res->n_put += c->ndirs;
	res->n_kept = c->sh->nkept_new;
}

/* step 6's end of the intent, this sync's or that of one cut after it:
 * the directory's baseline past all it did, with the lower root's names
 * (but its working directory @work's, open as @workfd), then the record
 * goes.  The baseline is the directory's filesystem's own time, read off
 * @workfd: a clock reading would be past the ctime a filesystem of whole
 * seconds gives a write made after it in the same second, which the next
 * sync would then take for older and overwrite. */
static int intent_complete(int areafd, int lowerfd, int workfd, const struct stat *work)
{
	struct timespec now;
	int r;

	if (fgetxattr(areafd, COPY_SYNC_INTENT_XATTR, NULL, 0) < 0)
		return errno == ENODATA || errno == EOPNOTSUPP ? 0 : -errno;
	if ((r = fs_time_past(workfd, &now)) < 0 ||
	    (r = copy_sync_base_write(areafd, COPY_LOWER_SYNCED_XATTR, &now)) < 0)
		return r;
	/* without it, the next sync tells the root's names by its mtime */
	(void)copy_sync_root_record(areafd, lowerfd, work);
	return fremovexattr(areafd, COPY_SYNC_INTENT_XATTR) < 0 && errno != ENODATA ? -errno : 0;
}

/* step 4's intent, before the first rename: the kept list (an entry kept
 * but never renamed loses nothing: it is the directory's), then the record */
static int sync_intent(struct sync_ctx *c, int areafd)
{
	int r = sync_kept_write(c->sh, areafd);

	if (r == 0)
		r = copy_sync_base_write(areafd, COPY_SYNC_INTENT_XATTR, &c->start);
	if (r == -EOPNOTSUPP)
		r = 0; /* no trusted xattrs: no baselines either, nothing to complete */
	return r < 0 ? sync_fail(c, -r, "", "", "recording the sync's intent") : 0;
}

int copy_sync_fd(int areafd, int lowerfd, int workfd, const struct copy_opts *o,
		 const struct copy_sys *sys, struct copy_result *ret)
{
	struct shared sh = { .lock = PTHREAD_MUTEX_INITIALIZER, .llock = PTHREAD_MUTEX_INITIALIZER };
	struct copy_opts opts = *o; /* with the budget: what W may take */
	struct sync_ctx c = {
		.sh = &sh, .defer = true, .o = &opts, .sys = sys, .lowerfd = lowerfd, .workfd = workfd, .res = ret,
		.areafd = areafd
	};
	struct stat ast, lst;
	bool applied = false, committed = false;
	size_t nkept;
	int fds[2], r;

	*ret = (struct copy_result){ 0 };
	c.lists = &c;
	copy_raise_nofile();
	if (fstat(areafd, &ast) < 0 || fstat(lowerfd, &lst) < 0 || fstat(workfd, &c.work) < 0 ||
	    (r = copy_sync_base_past_writes(&c.start)) < 0 || copy_budget_init(&sh.budget, lowerfd) < 0) {
		r = sync_fail(&c, errno, "", "", "reading the roots");
		goto out;
	}
	c.adev = ast.st_dev;
	c.ldev = lst.st_dev;
	if ((r = intent_complete(areafd, lowerfd, workfd, &c.work)) < 0) {
		r = sync_fail(&c, -r, "", "", "completing an interrupted sync");
		goto out;
	}
	opts.budget = &sh.budget;
	if (copy_sync_base_read(areafd, COPY_SYNCED_XATTR, &c.base) < 0)
		c.base.tv_sec = -1; /* no baseline: only what is the same is kept */
	if (c.base.tv_sec < 0 || copy_sync_base_read(areafd, COPY_LOWER_SYNCED_XATTR, &c.lbase) < 0)
		c.lbase.tv_sec = -1; /* none: the directory is taken as unchanged */
	c.lroot_kept = c.lbase.tv_sec >= 0 && sync_root_kept(areafd, lowerfd, &c.work);
	if ((r = sync_mapped_setup(&sh, areafd)) < 0) {
		r = sync_fail(&c, -r, "", "", "reading which files are mapped");
		goto out;
	}
	if ((r = sync_kept_read(&sh, areafd)) < 0) {
		r = sync_fail(&c, -r, "", "", "reading the entries kept in the directory");
		goto out;
	}
	if (!(c.buf = malloc(SYNC_BUF_SIZE)) || grow_array(&c.nodes, &c.nodecap, 0, sizeof(*c.nodes)) < 0) {
		r = sync_fail(&c, ENOMEM, "", "", "copying");
		goto out;
	}
	c.nodes[c.nnodes++] = (struct sync_node){ 0 }; /* node 0: the lower root */
	fds[0] = fcntl(areafd, F_DUPFD_CLOEXEC, 3);
	fds[1] = fds[0] < 0 ? -1 : fcntl(lowerfd, F_DUPFD_CLOEXEC, 3);
	if (fds[1] < 0) {
		r = sync_fail(&c, errno, "", "", "copying");
		if (fds[0] >= 0)
			close(fds[0]);
		goto out;
	}
	r = sync_walk(&c, fds, "", NULL, NULL);
	c.defer = false;
	if (r == 0)
		r = sync_tasks(&c);
	if (r == 0)
		r = sync_trees(&c);
	if (r == 0)
		r = sync_intent(&c, areafd);
	applied = r == 0;
	nkept = sh.nkept_new;
	if (r == 0)
		r = sync_apply(&c, &ast);
	/* what step 4 found changed there while the sync ran; lost, the next
	 * sync keeps it too (between the baselines: sync_lower_changed_during()) */
	if (applied && sh.nkept_new > nkept)
		(void)sync_kept_write(&sh, areafd);
	if (r == 0 && syncfs(lowerfd) < 0)
		r = sync_fail(&c, errno, "", "", "syncing");
	committed = r == 0;
	if (r == 0 && (sh.skipped.n || sh.both.n || sh.lost.n))
		r = sync_partial_result(&c);
	if (r == 0 || r == -COPY_SYNC_KEPT_BOTH)
		sync_count(&c, ret);
	/* after the commit point only: a failed sync keeps the old base, so
	 * that the next one copies again what this one may not have.  One
	 * that kept entries changed on both sides committed them all (the
	 * kept list holds them the directory's); one that left entries out
	 * committed all else, and they go on the retry list first: with the
	 * old base, every later sync took all it did put for changed in the
	 * area again (an edit or a deletion made in the directory since came
	 * back, or was called a conflict) */
	if (committed && sync_retry_write(&sh, areafd) == 0)
		copy_sync_base_write(areafd, COPY_SYNCED_XATTR, &c.start);
	/* once step 4 began, what changed in the lower directory is this
	 * sync's own doing, even when it failed after: not to be kept as
	 * the directory's at the next one (the kept list, written with the
	 * intent, already says which entries are the directory's) */
	if (applied)
		intent_complete(areafd, lowerfd, workfd, &c.work);
	/* the next sync compares what is mapped now; after a failure, what
	 * this one was to compare too */
	mapped_save(r == 0 || r == -COPY_SYNC_KEPT_BOTH ? &sh.mapped_now : &sh.mapped, areafd,
		    COPY_SYNC_MAPPED_XATTR);
out:
	copy_budget_explain(&sh.budget, ret);
	sync_ctx_done(&c);
	sync_shared_done(&sh);
	sync_kept_done(&sh);
	mapped_done(&sh.mapped);
	mapped_done(&sh.mapped_now);
	return r;
}
