/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Step 2 of the tree copy (copy.c) for one entry that is no directory:
 * created once below its destination directory from the descriptor its
 * one lookup opened, never by a name looked up again (copy_fd.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "copy_budget.h"
#include "copy_internal.h"
#include "shared/util.h"

/* creates a regular file @e->name, replacing a non-directory there */
static int create_file(struct copy_ctx *c, struct entry *e)
{
	const int fl = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;

	e->out = c->sys->openat(e->dd, e->name, fl, 0600);
	if (e->out < 0 && errno == EEXIST && c->sys->unlinkat(e->dd, e->name, 0) == 0)
		e->out = c->sys->openat(e->dd, e->name, fl, 0600);
	return e->out < 0 ? -errno : 0;
}

/* creates @e's name in the destination, by type (the first link of an inode) */
static int make_node(struct copy_ctx *c, struct entry *e)
{
	/* charged once per inode, before a byte of it is written */
	int r = copy_budget_charge(c->o->budget, &e->st);

	if (r < 0)
		return r;
	if (S_ISREG(e->st.st_mode))
		return create_file(c, e);
	if (S_ISLNK(e->st.st_mode))
		r = c->sys->symlinkat(e->target, e->dd, e->name);
	else
		r = c->sys->mknodat(e->dd, e->name, (e->st.st_mode & S_IFMT) | 0600, e->st.st_rdev);
	if (r < 0 && errno == EEXIST && c->sys->unlinkat(e->dd, e->name, 0) == 0)
		r = S_ISLNK(e->st.st_mode)
			    ? c->sys->symlinkat(e->target, e->dd, e->name)
			    : c->sys->mknodat(e->dd, e->name, (e->st.st_mode & S_IFMT) | 0600, e->st.st_rdev);
	return r < 0 ? -errno : 0;
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
	size_t h = ((size_t)e->st.st_ino * 31 + (size_t)e->st.st_dev) % LINK_BUCKETS;
	struct link *l;
	char *rel = NULL;
	int r = 0;

	pthread_mutex_lock(&c->llock);
	for (l = c->links[h]; l; l = l->next)
		if (l->ino == e->st.st_ino && l->dev == e->st.st_dev)
			break;
	if (l && !(rel = strdup(l->rel)))
		r = -ENOMEM;
	if (!l && (r = make_node(c, e)) == 0) {
		l = calloc(1, sizeof(*l));
		if (!l || !(l->rel = strdup(e->rel))) {
			free(l);
			r = -ENOMEM;
		} else {
			*l = (struct link){ .dev = e->st.st_dev,
					    .ino = e->st.st_ino,
					    .fflags = e->fflags,
					    .rel = l->rel,
					    .next = c->links[h] };
			c->links[h] = l;
			e->fflags = 0; /* in step 4 */
		}
	}
	pthread_mutex_unlock(&c->llock);
	if (r < 0 || !rel)
		return r;
	r = link_to(c, e, rel);
	free(rel);
	return r < 0 ? r : 1;
}

/* the copy's data and metadata, from @e->in and @e->st */
static int finish_node(struct copy_ctx *c, struct entry *e, char *buf)
{
	struct timespec ts[2] = { e->st.st_atim, e->st.st_mtim };
	int r = 0, nfd;

	if (S_ISREG(e->st.st_mode)) {
		r = copy_data(e->in, e->out, e->st.st_size, buf, COPY_BUF_SIZE, &c->bytes,
			      (off_t)e->st.st_blocks * 512 < e->st.st_size);
		return r < 0 ? r : copy_meta_fd(e->out, &e->st, &e->xa, e->fflags, copy__lost(c, &e->lost));
	}
	if (c->sys->fchownat(e->dd, e->name, e->st.st_uid, e->st.st_gid, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	if (!S_ISLNK(e->st.st_mode) && e->xa.len) {
		nfd = c->sys->openat(e->dd, e->name, O_PATH | O_NOFOLLOW | O_CLOEXEC, 0);
		if (nfd < 0)
			return -errno;
		r = copy_xattrs_write(nfd, true, &e->xa, copy__lost(c, &e->lost));
		close(nfd);
	}
	if (r == 0 && !S_ISLNK(e->st.st_mode) &&
	    c->sys->fchmodat(e->dd, e->name, e->st.st_mode & 07777, 0) < 0)
		r = -errno;
	if (r == 0 && c->sys->utimensat(e->dd, e->name, ts, AT_SYMLINK_NOFOLLOW) < 0)
		r = -errno;
	return r;
}

/* reads what the copy of a non-directory needs from its descriptor */
static int read_node(struct copy_ctx *c, struct entry *e)
{
	char target[PATH_MAX];
	ssize_t n;

	if (S_ISREG(e->st.st_mode)) {
		e->in = copy_open_data(c->sys, e->fd);
		if (e->in < 0)
			return e->in;
		e->fflags = copy_fflags_get(e->in);
		return copy_xattrs_read(e->in, false, &e->xa);
	}
	if (S_ISLNK(e->st.st_mode)) {
		/* "" and an O_PATH | O_NOFOLLOW descriptor: the link itself */
		n = c->sys->readlinkat(e->fd, "", target, sizeof(target));
		if (n < 0)
			return -errno;
		if ((size_t)n >= sizeof(target))
			return -ENAMETOOLONG;
		target[n] = '\0';
		e->target = strdup(target);
		return e->target ? 0 : -ENOMEM;
	}
	return copy_xattrs_read(e->fd, true, &e->xa);
}

int copy__nondir(struct copy_ctx *c, struct entry *e, char *buf)
{
	int r = read_node(c, e);

	if (r == 0)
		r = e->st.st_nlink > 1 ? link_claim(c, e) : make_node(c, e);
	if (r == 0)
		r = finish_node(c, e, buf);
	return r < 0 ? r : 0;
}
