/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The tree copy, by descriptor (contract: copy.h; why no name is looked
 * up twice: copy_fd.h).  Steps:
 *  1. open the two roots (O_NOFOLLOW | O_DIRECTORY); the destination stays
 *     root-only (0700) until 4.;
 *  2. walk depth first without recursion (dirstack.h): each entry is
 *     opened once (O_PATH | O_NOFOLLOW) below its directory's descriptor
 *     and copied by type from that descriptor.  Subdirectories are created
 *     0700 and entered from the descriptors just opened; a directory's
 *     copy gets its metadata when it is left (after its contents, which
 *     moved its times), its parent still 0700: no user reaches a copy
 *     before the root's metadata is set (4.);
 *  3. with @jobs > 1, threads take directories near the roots (a task
 *     carries its path) from a queue fed only while one waits.  An inode
 *     with several links is created once, by the first thread to reach it
 *     (a table under a lock); its other names are linkat() to that copy;
 *  4. when all threads are done: the roots' metadata, then the file flags
 *     of files with several links (immutable refuses later links).
 * The first error wins; the other threads stop at their next entry.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "copy.h"
#include "copy_budget.h"
#include "copy_fd.h"
#include "shared/dirstack.h"
#include "shared/util.h"

#define COPY_MAX_JOBS 64
#define COPY_BUF_SIZE (256 * 1024)
/* directory levels whose two descriptors a walking thread holds */
#define COPY_HELD_LEVELS 128
/* no directory deeper is handed to another thread: its task would carry
 * its whole path */
#define COPY_OFFER_DEPTH 64

/* a directory waiting for a thread: both descriptors are the task's */
struct task {
	int sfd, dfd;
	char *rel; /* below the destination root, for links and messages */
	size_t depth; /* levels below its root */
	bool has_meta; /* no root: @meta is set when it is done */
	struct copy_dirmeta meta;
	struct task *next;
};

/* one thread's walk of one task: the levels below it (their extra is
 * their struct copy_dirmeta, set when the level is left) */
struct walk {
	struct task *t;
	struct dirstack s;
	char *buf;
};

struct copy_ctx {
	const struct copy_opts *o;
	const struct copy_sys *sys;
	int dstroot;
	dev_t dev; /* the source's device: no directory on another is entered */
	unsigned jobs;
	uint64_t started_usec;
	atomic_uint_fast64_t files, bytes, last_usec;
	atomic_int err; /* errno of the first failure; 0: none yet */
	char msg[256]; /* written only by the thread that set err */
	char err_root[NAME_MAX + 1]; /* and the root of the tree it was in */

	pthread_mutex_t qlock; /* queue, queued, busy */
	pthread_cond_t qcond;
	struct task *queue;
	unsigned queued, busy, idle;

	pthread_mutex_t llock; /* links */
	struct copy_inodes links;

	pthread_mutex_t dlock; /* lost */
	size_t n_lost; /* entries that lost an attribute (attrs_optional) */
	char lost_path[512], lost_what[400]; /* the first one */
	struct copy_dirmeta *dirs; /* the roots', for step 4 (made in step 1) */
	size_t ndirs, dircap;
};

/* one source entry being copied (a directory: @n's fd and st alone) */
struct entry {
	struct copy_node n;
	int dd; /* destination directory */
	const char *name;
	char *rel; /* below the destination root: set for several links only */
	struct copy_lost lost;
};

/* where the copy of one entry notes the attributes it could not keep:
 * NULL (they fail the copy, but for an xattr namespace the destination
 * has not) unless the options make them optional */
static struct copy_lost *copy_lost_of(const struct copy_ctx *c, struct copy_lost *l)
{
	return c->o->attrs_optional ? l : NULL;
}

/* records the failure unless one was, in the tree of @root (NULL: none);
 * returns -@err */
static int copy_fail_in(struct copy_ctx *c, int err, const char *root, const char *rel, const char *what)
{
	int none = 0;

	if (err == 0)
		err = EIO;
	if (atomic_compare_exchange_strong(&c->err, &none, err)) {
		snprintf(c->msg, sizeof(c->msg), "'%s': %s: %s", *rel ? rel : ".", what, strerror(err));
		snprintf(c->err_root, sizeof(c->err_root), "%.*s", root ? (int)strcspn(root, "/") : 0,
			 root ? root : "");
	}
	return -err;
}

static int copy_fail(struct copy_ctx *c, int err, const char *rel, const char *what)
{
	return copy_fail_in(c, err, NULL, rel, what);
}

/* records the losses @l of the entry @rel in the copy's result */
static void copy_lost_note(struct copy_ctx *c, const char *rel, const struct copy_lost *l)
{
	if (!l->n)
		return;
	pthread_mutex_lock(&c->dlock);
	if (!c->n_lost++) {
		snprintf(c->lost_path, sizeof(c->lost_path), "%s", *rel ? rel : ".");
		copy_lost_text(l, c->lost_what, sizeof(c->lost_what));
	}
	pthread_mutex_unlock(&c->dlock);
}

/* a line at most every 0.5 s, from 2 s on, and only on a terminal */
static void copy_progress(struct copy_ctx *c, uint64_t files, bool done)
{
	uint64_t now, last;

	if (!c->o->progress || (!done && (files & 1023) != 0))
		return;
	now = now_monotonic_usec();
	last = atomic_load(&c->last_usec);
	if (now - c->started_usec < 2 * USEC_PER_SEC || (!done && now - last < 500 * USEC_PER_MSEC))
		return;
	if (done && last == 0)
		return; /* no line was shown: the copy was short */
	fprintf(stderr, "\rstoraged: copying '%s': %" PRIu64 " files, %" PRIu64 " MiB%s",
		c->o->label, files, (uint64_t)atomic_load(&c->bytes) >> 20, done ? "\n" : "");
	atomic_store(&c->last_usec, now);
}

/* the path of @name (NULL: the current directory) for a message */
static const char *walk_path(const struct walk *w, const char *name, char *buf, size_t len)
{
	return dirstack_path(&w->s, w->t->rel, name, buf, len);
}

static int walk_fail(struct copy_ctx *c, const struct walk *w, int err, const char *name, const char *what)
{
	char p[sizeof(c->msg)];

	return copy_fail_in(c, err, w->t->rel, walk_path(w, name, p, sizeof(p)), what);
}

/* hands the directory to a waiting thread; false: none waits, or it is
 * too deep to be worth its path (a chain is walked by one thread) */
static bool offer(struct copy_ctx *c, const struct walk *w, int sfd, int dfd, const char *name,
		  struct copy_dirmeta *m)
{
	struct task *t;
	bool taken = false;

	if (c->jobs < 2 || w->t->depth + w->s.depth >= COPY_OFFER_DEPTH)
		return false;
	t = calloc(1, sizeof(*t));
	if (!t || !(t->rel = dirstack_path_dup(&w->s, w->t->rel, name))) {
		free(t);
		return false;
	}
	t->sfd = sfd;
	t->dfd = dfd;
	t->depth = w->t->depth + w->s.depth;
	t->meta = *m;
	t->has_meta = true;
	pthread_mutex_lock(&c->qlock);
	if (c->idle > c->queued) {
		t->next = c->queue;
		c->queue = t;
		c->queued++;
		pthread_cond_signal(&c->qcond);
		taken = true;
	}
	pthread_mutex_unlock(&c->qlock);
	if (!taken) {
		free(t->rel);
		free(t);
	}
	return taken;
}

/* creates @e's name (the first link of an inode), replacing a
 * non-directory there; charged once per inode, before a byte is written */
static int make_node(struct copy_ctx *c, struct entry *e)
{
	int r = copy_budget_charge(c->o->budget, &e->n.st)
			?: copy_node_create(c->sys, &e->n, e->dd, e->name);

	if (r == -EEXIST)
		r = c->sys->unlinkat(e->dd, e->name, 0) < 0
			    ? -errno
			    : copy_node_create(c->sys, &e->n, e->dd, e->name);
	return r;
}

/* links @e's name to the copy @rel of its inode (made by this copy) */
static int link_to(struct copy_ctx *c, struct entry *e, const char *rel)
{
	const char *slash = strrchr(rel, '/');
	char *dir = slash ? strndup(rel, (size_t)(slash - rel)) : strdup("");
	int pfd = dir ? copy_open_beneath(c->sys, c->dstroot, dir) : -ENOMEM, r = 0;

	free(dir);
	if (pfd < 0)
		return pfd;
	if (c->sys->linkat(pfd, slash ? slash + 1 : rel, e->dd, e->name, 0) < 0)
		r = -errno;
	if (r == -EEXIST && c->sys->unlinkat(e->dd, e->name, 0) == 0)
		r = c->sys->linkat(pfd, slash ? slash + 1 : rel, e->dd, e->name, 0) < 0 ? -errno : 0;
	close(pfd);
	return r;
}

/*
 * Step 3 for an inode with several links: the first thread to reach it
 * creates the copy, under the lock, so that a link is never made to a
 * name not yet there.  Returns: 1 linked (nothing more to do), 0 created,
 * or negative errno.
 */
static int link_claim(struct copy_ctx *c, struct entry *e)
{
	struct copy_inode *l;
	char *rel = NULL;
	int r = 0;

	pthread_mutex_lock(&c->llock);
	l = copy_inode_find(&c->links, e->n.st.st_dev, e->n.st.st_ino);
	if (l && !(rel = strdup(l->rel)))
		r = -ENOMEM;
	if (!l && (r = make_node(c, e)) == 0 &&
	    (r = copy_inode_add(&c->links, e->n.st.st_dev, e->n.st.st_ino, e->rel, e->n.fflags)) == 0)
		e->n.fflags = 0; /* in step 4 */
	pthread_mutex_unlock(&c->llock);
	if (r < 0 || !rel)
		return r;
	r = link_to(c, e, rel);
	free(rel);
	return r < 0 ? r : 1;
}

/* step 2 for one non-directory: read from its descriptor, created once (a
 * file with several links: linkat() for its other names), metadata set */
static int copy_nondir(struct copy_ctx *c, struct entry *e, char *buf)
{
	int r = copy_node_read(c->sys, &e->n);

	if (r == 0)
		r = e->n.st.st_nlink > 1 ? link_claim(c, e) : make_node(c, e);
	if (r == 0)
		r = copy_node_finish(c->sys, &e->n, e->dd, e->name, buf, COPY_BUF_SIZE, &c->bytes,
				     copy_lost_of(c, &e->lost));
	return r < 0 ? r : 0;
}

/* sets @m on the directory's copy @fd (@name of the walk's current
 * directory; NULL: that one), noting what it could not keep */
static int dir_meta(struct copy_ctx *c, const struct walk *w, int fd, const struct copy_dirmeta *m,
		    const char *name)
{
	struct copy_lost l = { 0 };
	char p[512];
	int r = copy_meta_fd(fd, &m->st, &m->xa, m->fflags, copy_lost_of(c, &l));

	if (l.n)
		copy_lost_note(c, walk_path(w, name, p, sizeof(p)), &l);
	return r;
}

/* @e is a directory: create its copy and enter it (its metadata is set
 * when it is left), or hand it to another thread */
static int copy_dir(struct copy_ctx *c, struct walk *w, struct entry *e)
{
	struct copy_dirmeta m = { .st = e->n.st };
	int fds[2], sfd, dfd, r;

	/* "." below the O_PATH descriptor: the same inode, opened to read */
	sfd = c->sys->openat(e->n.fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
	if (sfd < 0)
		return -errno;
	m.fflags = copy_fflags_get(sfd);
	if ((r = copy_xattrs_read(sfd, false, &m.xa)) < 0 ||
	    (r = copy_budget_charge(c->o->budget, &e->n.st)) < 0)
		goto fail;
	if (c->sys->mkdirat(e->dd, e->name, 0700) < 0 && errno != EEXIST) {
		r = -errno;
		goto fail;
	}
	dfd = c->sys->openat(e->dd, e->name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0);
	if (dfd < 0) {
		r = -errno;
		goto fail;
	}
	if (e->n.st.st_dev != c->dev) {
		/* another device: in a seed (the private view shows no mount)
		 * a btrfs subvolume or snapshot, carried onto the area
		 * (area_carry.c); else a mount point, copied empty */
		r = dir_meta(c, w, dfd, &m, e->name);
		close(dfd);
		goto fail;
	}
	if (offer(c, w, sfd, dfd, e->name, &m))
		return 0;
	fds[0] = sfd;
	fds[1] = dfd;
	if ((r = dirstack_push(&w->s, fds, e->name)) < 0) {
		free(m.xa.buf);
		return r;
	}
	*(struct copy_dirmeta *)dirstack_top(&w->s)->extra = m;
	return dirstack_list(&w->s, false);
fail:
	free(m.xa.buf);
	close(sfd);
	return r;
}

/* copies the entry @name of the current directory into its copy */
static int copy_one(struct copy_ctx *c, struct walk *w, const char *name)
{
	const struct dirstack_frame *f = dirstack_top(&w->s);
	struct entry e = { .n = { .in = -1, .out = -1 }, .dd = f->fd[1], .name = name };
	int r = 0;

	e.n.fd = c->sys->openat(f->fd[0], name, O_PATH | O_NOFOLLOW | O_CLOEXEC, 0);
	if (e.n.fd < 0 && errno == ENOENT)
		goto out; /* removed since readdir(): nothing to copy */
	if (e.n.fd < 0 || fstat(e.n.fd, &e.n.st) < 0)
		r = -errno;
	else if (S_ISDIR(e.n.st.st_mode))
		r = copy_dir(c, w, &e);
	else if (S_ISSOCK(e.n.st.st_mode))
		; /* sockets are not copied */
	else if (e.n.st.st_nlink > 1 && !(e.rel = dirstack_path_dup(&w->s, w->t->rel, name)))
		r = -ENOMEM; /* the path a later name links to */
	else
		r = copy_nondir(c, &e, w->buf);
	if (r < 0)
		walk_fail(c, w, -r, name, "copying");
	else if (e.lost.n) {
		char p[512];

		copy_lost_note(c, walk_path(w, name, p, sizeof(p)), &e.lost);
	}
	copy_progress(c, atomic_fetch_add(&c->files, 1) + 1, false);
out:
	if (e.n.fd >= 0)
		close(e.n.fd);
	copy_node_done(&e.n);
	free(e.rel);
	return r;
}

/* leaves the current directory: its copy gets its metadata (after its
 * contents, which changed its times), except the base's, which is the
 * task's (@t->has_meta) or the caller's (a root, set last) */
static int leave_dir(struct copy_ctx *c, struct walk *w)
{
	struct dirstack_frame *f = dirstack_top(&w->s);
	struct copy_dirmeta *m = w->s.depth > 1 ? f->extra : w->t->has_meta ? &w->t->meta : NULL;
	int r = 0;

	if (m) {
		r = dir_meta(c, w, f->fd[1], m, NULL);
		free(m->xa.buf);
		m->xa.buf = NULL;
		if (r < 0)
			walk_fail(c, w, -r, NULL, "setting the directory's metadata");
	}
	if (r == 0 && (r = dirstack_pop(&w->s)) < 0)
		walk_fail(c, w, -r, NULL,
			  r == -ESTALE ? "moved during the copy (try again)" : "reopening the directory");
	return r;
}

/* copies the tree of the task @t (its descriptors taken), depth first,
 * with a bounded number of descriptors (dirstack.h) */
static int walk_tree(struct copy_ctx *c, char *buf, struct task *t)
{
	struct walk w = { .t = t, .buf = buf };
	int fds[2] = { t->sfd, t->dfd }, r;
	const char *name;

	dirstack_init(&w.s, 2, sizeof(struct copy_dirmeta), COPY_HELD_LEVELS);
	if ((r = dirstack_push(&w.s, fds, "")) < 0 || (r = dirstack_list(&w.s, false)) < 0) {
		walk_fail(c, &w, -r, NULL, "reading the directory");
		goto out;
	}
	while (r == 0 && w.s.depth > 0) {
		if (atomic_load(&c->err)) {
			r = -ECANCELED; /* another thread failed */
			break;
		}
		if (!(name = dirstack_next(&w.s)))
			r = leave_dir(c, &w);
		else
			r = copy_one(c, &w, name); /* a failure is recorded there */
	}
out:
	for (size_t i = 1; i < w.s.depth; i++)
		free(((struct copy_dirmeta *)w.s.f[i].extra)->xa.buf);
	dirstack_free(&w.s);
	if (t->has_meta)
		free(t->meta.xa.buf);
	return r;
}

/* takes the next directory from the queue; NULL when all is done */
static struct task *take(struct copy_ctx *c)
{
	struct task *t;

	pthread_mutex_lock(&c->qlock);
	c->idle++;
	while (!c->queue && c->busy > 0)
		pthread_cond_wait(&c->qcond, &c->qlock);
	c->idle--;
	t = c->queue;
	if (t) {
		c->queue = t->next;
		c->queued--;
		c->busy++;
	} else {
		pthread_cond_broadcast(&c->qcond); /* nothing left anywhere */
	}
	pthread_mutex_unlock(&c->qlock);
	return t;
}

static void task_drop(struct task *t)
{
	close(t->sfd);
	close(t->dfd);
	if (t->has_meta)
		free(t->meta.xa.buf);
}

/* walks the queued directories until all is done (after a failure or
 * without a buffer, drops their descriptors) */
static void *worker(void *arg)
{
	struct copy_ctx *c = arg;
	char *buf = malloc(COPY_BUF_SIZE);
	struct task *t;

	if (!buf)
		copy_fail(c, ENOMEM, "", "copying");
	while ((t = take(c))) {
		if (buf && !atomic_load(&c->err))
			walk_tree(c, buf, t);
		else
			task_drop(t);
		free(t->rel);
		free(t);
		pthread_mutex_lock(&c->qlock);
		if (--c->busy == 0 && !c->queue)
			pthread_cond_broadcast(&c->qcond);
		pthread_mutex_unlock(&c->qlock);
	}
	free(buf);
	return NULL;
}

/* steps 2 and 3 from the queued roots; after a failure, they are only
 * dropped */
static int copy_walk(struct copy_ctx *c)
{
	pthread_t th[COPY_MAX_JOBS];
	unsigned k = 0;

	for (; c->jobs > 1 && !atomic_load(&c->err) && k < c->jobs; k++)
		if ((errno = pthread_create(&th[k], NULL, worker, c)) != 0) {
			copy_fail(c, errno, "", "starting a copy thread");
			break;
		}
	if (k == 0)
		worker(c); /* alone, or no thread started: drains the queue */
	for (unsigned j = 0; j < k; j++)
		pthread_join(th[j], NULL);
	return -atomic_load(&c->err);
}

/* step 4 */
static int copy_finish(struct copy_ctx *c)
{
	int r = 0, fd, ffd;

	/* the roots, the only directories whose metadata waits for the end */
	for (size_t i = c->ndirs; r == 0 && i-- > 0;) {
		struct copy_dirmeta *m = &c->dirs[i];
		struct copy_lost l = { 0 };

		fd = copy_open_beneath(c->sys, c->dstroot, m->rel);
		r = fd < 0 ? fd : copy_meta_fd(fd, &m->st, &m->xa, m->fflags, copy_lost_of(c, &l));
		copy_lost_note(c, m->rel, &l);
		if (fd >= 0)
			close(fd);
		if (r < 0)
			copy_fail(c, -r, m->rel, "setting the directory's metadata");
	}
	for (size_t h = 0; r == 0 && h < COPY_INODE_BUCKETS; h++)
		for (struct copy_inode *l = c->links.b[h]; r == 0 && l; l = l->next) {
			const char *slash = strrchr(l->rel, '/');
			char *dir;

			if (!l->fflags)
				continue;
			dir = slash ? strndup(l->rel, (size_t)(slash - l->rel)) : strdup("");
			fd = dir ? copy_open_beneath(c->sys, c->dstroot, dir) : -ENOMEM;
			free(dir);
			ffd = fd < 0 ? -1
				     : c->sys->openat(fd, slash ? slash + 1 : l->rel,
						      O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0);
			r = fd < 0 ? fd : ffd < 0 ? -errno : 0;
			if (ffd >= 0) {
				struct copy_lost lf = { 0 };

				r = copy_fflags_add(ffd, l->fflags, copy_lost_of(c, &lf));
				copy_lost_note(c, l->rel, &lf);
			}
			if (ffd >= 0)
				close(ffd);
			if (fd >= 0)
				close(fd);
			if (r < 0)
				copy_fail(c, -r, l->rel, "setting the file flags");
		}
	return r;
}

static void ctx_free(struct copy_ctx *c)
{
	for (size_t i = 0; i < c->ndirs; i++) {
		free(c->dirs[i].rel);
		free(c->dirs[i].xa.buf);
	}
	free(c->dirs);
	copy_inodes_free(&c->links);
	pthread_mutex_destroy(&c->qlock);
	pthread_mutex_destroy(&c->llock);
	pthread_mutex_destroy(&c->dlock);
	pthread_cond_destroy(&c->qcond);
	free(c);
}

/* step 1: a root's metadata, for step 4; @rel: its copy below c->dstroot */
static int copy_root(struct copy_ctx *c, int srcfd, const char *rel)
{
	struct copy_dirmeta m = { 0 };
	int r;

	if (fstat(srcfd, &m.st) < 0)
		return -errno;
	if (!S_ISDIR(m.st.st_mode))
		return -ENOTDIR;
	if (!c->dev)
		c->dev = m.st.st_dev;
	m.fflags = copy_fflags_get(srcfd);
	if ((r = copy_xattrs_read(srcfd, false, &m.xa)) < 0)
		return r;
	if (!(m.rel = strdup(rel)) || grow_array(&c->dirs, &c->dircap, c->ndirs, sizeof(*c->dirs)) < 0) {
		free(m.rel);
		free(m.xa.buf);
		return -ENOMEM;
	}
	c->dirs[c->ndirs++] = m;
	return 0;
}

/* queues the walk of the root @srcfd (duplicated) into its copy @rel */
static int queue_root(struct copy_ctx *c, int srcfd, const char *rel)
{
	struct task *t = calloc(1, sizeof(*t));
	int r;

	if (!t || !(t->rel = strdup(rel))) {
		free(t);
		return -ENOMEM;
	}
	t->sfd = fcntl(srcfd, F_DUPFD_CLOEXEC, 3);
	t->dfd = t->sfd < 0 ? -errno : copy_open_beneath(c->sys, c->dstroot, rel);
	if ((r = t->dfd) < 0) {
		if (t->sfd >= 0)
			close(t->sfd);
		free(t->rel);
		free(t);
		return r;
	}
	t->next = c->queue;
	c->queue = t;
	c->queued++;
	return 0;
}

void copy_raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

static size_t inode_bucket(dev_t dev, ino_t ino)
{
	return ((size_t)ino * 31 + (size_t)dev) % COPY_INODE_BUCKETS;
}

struct copy_inode *copy_inode_find(const struct copy_inodes *t, dev_t dev, ino_t ino)
{
	struct copy_inode *l = t->b[inode_bucket(dev, ino)];

	while (l && (l->ino != ino || l->dev != dev))
		l = l->next;
	return l;
}

int copy_inode_add(struct copy_inodes *t, dev_t dev, ino_t ino, const char *rel, unsigned fflags)
{
	struct copy_inode *l = calloc(1, sizeof(*l));
	size_t h = inode_bucket(dev, ino);

	if (!l || !(l->rel = strdup(rel))) {
		free(l);
		return -ENOMEM;
	}
	*l = (struct copy_inode){ .dev = dev, .ino = ino, .fflags = fflags, .rel = l->rel, .next = t->b[h] };
	t->b[h] = l;
	return 0;
}

void copy_inodes_free(struct copy_inodes *t)
{
	for (size_t h = 0; h < COPY_INODE_BUCKETS; h++)
		for (struct copy_inode *l = t->b[h], *n; l; l = n) {
			n = l->next;
			free(l->rel);
			free(l);
		}
}

int copy_trees_fd(int dstroot, const int *srcfds, const char *const *rels, size_t n,
		  const struct copy_inodes *links, const struct copy_opts *o,
		  const struct copy_sys *sys, struct copy_result *ret)
{
	struct copy_ctx *c = calloc(1, sizeof(*c));
	int r = 0;

	if (!c) {
		*ret = (struct copy_result){ .err = -ENOMEM, .msg = "out of memory" };
		return -ENOMEM;
	}
	copy_raise_nofile();
	*ret = (struct copy_result){ 0 };
	c->o = o;
	c->sys = sys;
	c->dstroot = dstroot;
	c->jobs = o->jobs > COPY_MAX_JOBS ? COPY_MAX_JOBS : o->jobs;
	c->started_usec = now_monotonic_usec();
	pthread_mutex_init(&c->qlock, NULL);
	pthread_mutex_init(&c->llock, NULL);
	pthread_mutex_init(&c->dlock, NULL);
	pthread_cond_init(&c->qcond, NULL);
	/* the copies made before this one that later names of their inodes
	 * link to */
	for (size_t h = 0; links && r == 0 && h < COPY_INODE_BUCKETS; h++)
		for (const struct copy_inode *l = links->b[h]; l && r == 0; l = l->next)
			r = copy_inode_add(&c->links, l->dev, l->ino, l->rel, 0);
	if (r < 0)
		copy_fail(c, -r, "", "copying");
	/* every root's metadata is recorded before any subdirectory's: step 4
	 * (in reverse) sets the roots last */
	for (size_t i = 0; r == 0 && i < n; i++)
		if ((r = copy_root(c, srcfds[i], rels[i])) < 0)
			copy_fail(c, -r, rels[i], "reading the source");
		else if ((r = queue_root(c, srcfds[i], rels[i])) < 0)
			copy_fail(c, -r, rels[i], "copying");
	if ((r = copy_walk(c)) == 0)
		r = copy_finish(c);
	copy_progress(c, atomic_load(&c->files), true);
	memcpy(ret->err_root, c->err_root, sizeof(ret->err_root));
	ret->n_lost = c->n_lost;
	memcpy(ret->lost_path, c->lost_path, sizeof(ret->lost_path));
	memcpy(ret->lost_what, c->lost_what, sizeof(ret->lost_what));
	if (r < 0 || atomic_load(&c->err)) {
		ret->err = -(atomic_load(&c->err) ?: -r);
		snprintf(ret->msg, sizeof(ret->msg), "%s", c->msg[0] ? c->msg : strerror(-ret->err));
		r = ret->err;
	}
	ctx_free(c);
	return r;
}

int copy_tree_fd(int srcfd, int dstfd, const struct copy_opts *o, const struct copy_sys *sys,
		 struct copy_result *ret)
{
	const char *rel = "";

	return copy_trees_fd(dstfd, &srcfd, &rel, 1, NULL, o, sys, ret);
}
