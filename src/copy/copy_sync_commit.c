/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The incremental sync back, its second half: what the walk of
 * copy_sync.c noted is carried out (steps 2 to 5: the new subtrees copied
 * into W, syncfs(), each entry renamed into place, the directories'
 * metadata), and the entries left out or kept twice are told.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <linux/fs.h>

#include "copy_sync_internal.h"

int sync_fail(struct sync_ctx *c, int err, const char *rel, const char *name, const char *what)
{
	if (err <= 0)
		err = EIO;
	pthread_mutex_lock(&c->sh->lock);
	if (!c->res->err) {
		c->res->err = -err;
		snprintf(c->res->msg, sizeof(c->res->msg), "'%s%s%s': %s: %s", rel, *rel ? "/" : "",
			 name, what, strerror(err));
	}
	atomic_store(&c->sh->failed, true);
	pthread_mutex_unlock(&c->sh->lock);
	return -err;
}


/* grows *@v (of @size bytes per element) to hold more than @n */
int sync_grow(void *v, size_t *cap, size_t n, size_t size)
{
	size_t c = *cap;
	void *p;

	if (n < c)
		return 0;
	while (c <= n)
		c = c ? c * 2 : 64;
	p = realloc(*(void **)v, c * size);
	if (!p)
		return -ENOMEM;
	*(void **)v = p;
	*cap = c;
	return 0;
}


/* adds the entry @rel/@name to @l, saying @what of it */
void sync_note(struct sync_ctx *c, struct entry_list *l, int err, const char *rel,
		       const char *name, const char *what)
{
	size_t len;

	pthread_mutex_lock(&c->sh->lock);
	if (!l->n++)
		l->err = err;
	len = strlen(l->text);
	if (len + 8 < sizeof(l->text))
		snprintf(l->text + len, sizeof(l->text) - len, "%s'%s%s%s'%s", len ? "; " : "", rel,
			 *rel ? "/" : "", name, what);
	pthread_mutex_unlock(&c->sh->lock);
}


/* notes the entry @rel/@name that failed with @err: it is left out, its
 * old version stays in the lower copy, the sync goes on */
void sync_skip(struct sync_ctx *c, int err, const char *rel, const char *name, const char *what)
{
	char why[160];

	snprintf(why, sizeof(why), ": %s: %s", what, strerror(-err));
	sync_note(c, &c->sh->skipped, err, rel, name, why);
}


static const char *list_text(struct entry_list *l)
{
	if (strlen(l->text) + 8 >= sizeof(l->text))
		snprintf(l->text + sizeof(l->text) - 8, 8, "; ...");
	return l->text;
}


/* the result of a sync that committed all but the skipped entries, and
 * kept both versions of the entries changed on both sides */
int sync_partial_result(struct sync_ctx *c)
{
	struct shared *sh = c->sh;
	char *m = c->res->msg;
	size_t len = sizeof(c->res->msg);
	int n = 0;

	if (sh->skipped.n)
		n = snprintf(m, len, "%zu %s not synced, every other change was: %s", sh->skipped.n,
			     sh->skipped.n == 1 ? "entry was" : "entries were", list_text(&sh->skipped));
	if (sh->both.n && n >= 0 && (size_t)n < len)
		snprintf(m + n, len - (size_t)n,
			 "%s%zu %s changed both in the directory (while it was uncovered) and in the area: the directory's version is kept, the area's beside it: %s",
			 n ? "; " : "", sh->both.n, sh->both.n == 1 ? "entry" : "entries",
			 list_text(&sh->both));
	c->res->err = sh->skipped.n ? sh->skipped.err : -COPY_SYNC_KEPT_BOTH;
	return c->res->err;
}


/* step 4 for one op, in the lower directory @dfd */
static int apply_op(struct sync_ctx *c, int dfd, const struct op *o)
{
	int fd, r = 0, f = 0;

	if (o->kind == OP_DELETE) {
		if (renameat2(dfd, o->name, c->workfd, o->w, RENAME_NOREPLACE) < 0 && errno != ENOENT)
			return -errno;
		return 0;
	}
	if (renameat2(c->workfd, o->w, dfd, o->name, RENAME_EXCHANGE) < 0 &&
	    (errno != ENOENT || renameat2(c->workfd, o->w, dfd, o->name, RENAME_NOREPLACE) < 0))
		return -errno;
	if (!o->fflags)
		return 0;
	fd = openat(dfd, o->name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (ioctl(fd, FS_IOC_GETFLAGS, &f) == 0) {
		f |= (int)o->fflags;
		if (ioctl(fd, FS_IOC_SETFLAGS, &f) < 0 && errno != EOPNOTSUPP && errno != ENOTTY &&
		    errno != EINVAL)
			r = -errno;
	}
	close(fd);
	return r;
}


/* steps 4 and 5; @root: the area root's fstat() */
int sync_apply(struct sync_ctx *c, const struct stat *root)
{
	const char *cur = NULL;
	struct timespec ts[2];
	int dfd = -1, r = 0;

	for (size_t i = 0; r == 0 && i < c->nops; i++) {
		const struct op *o = &c->ops[i];

		if (!cur || strcmp(cur, o->dir)) { /* ops come grouped by directory */
			if (dfd >= 0)
				close(dfd);
			cur = o->dir;
			if ((dfd = copy_open_beneath(&copy_sys_libc, c->lowerfd, o->dir)) < 0) {
				r = sync_fail(c, -dfd, o->dir, "", "opening the lower directory");
				break;
			}
		}
		if ((r = apply_op(c, dfd, o)) < 0)
			sync_fail(c, -r, o->dir, o->name, "moving into place");
	}
	if (dfd >= 0)
		close(dfd);
	/* recorded after their contents: deepest first */
	for (size_t i = 0; r == 0 && i < c->ndirs; i++) {
		const struct dmeta *m = &c->dirs[i];

		dfd = copy_open_beneath(&copy_sys_libc, c->lowerfd, m->rel);
		r = dfd < 0 ? dfd : copy_xattrs_prune(dfd, &m->xa);
		if (r == 0)
			r = copy_meta_fd(dfd, &m->st, &m->xa, m->fflags);
		if (dfd >= 0)
			close(dfd);
		if (r < 0)
			sync_fail(c, -r, m->rel, "", "setting the directory's metadata");
	}
	/* the root: owner, mode and times only (as the full copy did: what
	 * the directory keeps for itself, e.g. its xattrs, stays) */
	ts[0] = root->st_atim;
	ts[1] = root->st_mtim;
	if (r == 0 && (fchown(c->lowerfd, root->st_uid, root->st_gid) < 0 ||
		       fchmod(c->lowerfd, root->st_mode & 07777) < 0 || futimens(c->lowerfd, ts) < 0))
		r = sync_fail(c, errno, "", "", "setting the root's metadata");
	return r;
}


void sync_ctx_done(struct sync_ctx *c)
{
	for (size_t i = 0; i < c->nops; i++) {
		free(c->ops[i].dir);
		free(c->ops[i].name);
	}
	free(c->ops);
	for (size_t i = 0; i < c->ndirs; i++) {
		free(c->dirs[i].rel);
		free(c->dirs[i].xa.buf);
	}
	free(c->dirs);
	for (size_t i = 0; i < c->ntrees; i++) {
		close(c->tsrc[i]);
		free(c->trel[i]);
	}
	free(c->tsrc);
	free(c->trel);
	free(c->buf);
}


void sync_shared_done(struct shared *sh)
{
	for (size_t h = 0; h < HL_BUCKETS; h++)
		for (struct hl *l = sh->hl[h], *n; l; l = n) {
			n = l->next;
			free(l);
		}
	for (size_t i = 0; i < sh->ntasks; i++) {
		close(sh->tasks[i].fd);
		free(sh->tasks[i].name);
	}
	free(sh->tasks);
	pthread_mutex_destroy(&sh->lock);
}


/* steps 2 and 3; the inodes step 1 wrote are linked to, not copied again */
int sync_trees(struct sync_ctx *c)
{
	struct copy_result r2 = { 0 };
	struct copy_link *l = NULL;
	size_t n = 0, cap = 0;
	int r = 0;

	for (size_t h = 0; r == 0 && h < HL_BUCKETS; h++)
		for (struct hl *e = c->sh->hl[h]; r == 0 && e; e = e->next)
			if ((r = sync_grow(&l, &cap, n, sizeof(*l))) == 0)
				l[n++] = (struct copy_link){ .dev = e->dev, .ino = e->ino, .rel = e->w };
	if (r < 0) {
		free(l);
		return sync_fail(c, -r, "", "", "copying");
	}
	if (c->ntrees)
		r = copy_trees_fd(c->workfd, c->tsrc, (const char *const *)c->trel, c->ntrees, l, n,
				  c->o, c->sys, &r2);
	free(l);
	if (r < 0) {
		*c->res = r2;
		return r;
	}
	if (syncfs(c->lowerfd) < 0)
		r = sync_fail(c, errno, "", "", "syncing the copy");
	return r;
}

