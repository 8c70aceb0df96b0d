/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The sync back's second half: steps 2 to 5 of what copy_sync.c's walk
 * noted, and the entries left out or kept twice told. */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
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

void sync_note(struct sync_ctx *c, struct entry_list *l, int err, const char *rel, const char *name,
	       const char *fmt, ...)
{
	char what[PATH_MAX / 2];
	va_list ap;
	size_t len;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	pthread_mutex_lock(&c->sh->lock);
	if (!l->n++)
		l->err = err;
	len = strlen(l->text);
	/* cut where it does not fit, as every message is */
	if (len + 8 < sizeof(l->text) && snprintf(l->text + len, sizeof(l->text) - len, "%s'%s%s%s'%s",
						  len ? "; " : "", rel, *rel ? "/" : "", name, what) < 0)
		l->text[len] = '\0';
	pthread_mutex_unlock(&c->sh->lock);
}

void sync_skip(struct sync_ctx *c, int err, const char *rel, const char *name, const char *what, bool keep,
	       char *path, const char *w)
{
	struct shared *sh = c->sh;

	sync_note(c, &sh->skipped, err, rel, name, ": %s: %s", what, strerror(-err));
	if (!keep)
		return;
	pthread_mutex_lock(&sh->lock);
	if (!path || grow_array(&sh->skipv, &sh->skipvcap, sh->nskipv, sizeof(*sh->skipv)) < 0) {
		sh->skipv_lost = true;
		free(path);
	} else {
		sh->skipv[sh->nskipv] = (struct sync_skipped){ .path = path };
		snprintf(sh->skipv[sh->nskipv++].w, sizeof(sh->skipv->w), "%s", w ? w : "");
	}
	pthread_mutex_unlock(&sh->lock);
}

void sync_lost(struct sync_ctx *c, const char *rel, const char *name, const struct copy_lost *l)
{
	char text[sizeof(l->what) + 120];

	sync_note(c, &c->sh->lost, l->err, rel, name, " (%s)", copy_lost_text(l, text, sizeof(text)));
}

static const char *list_text(struct entry_list *l)
{
	if (strlen(l->text) + 8 >= sizeof(l->text))
		snprintf(l->text + sizeof(l->text) - 8, 8, "; ...");
	return l->text;
}

int sync_partial_result(struct sync_ctx *c)
{
	struct shared *sh = c->sh;
	char *m = c->res->msg, where[128] = "";
	size_t len = sizeof(c->res->msg);
	int n = 0, rescued = -1;

	/* only deletions not carried: the area has nothing to keep */
	if (sh->skipped.n && c->o->rescue && !sh->nskipv && !sh->skipv_lost)
		rescued = 1;
	else if (sh->skipped.n && c->o->rescue) {
		rescued = sh->skipv_lost ? -ENOMEM : sync_rescue(c);
		/* where: said by the caller, which knows the directory's path */
		if (rescued < 0)
			snprintf(where, sizeof(where), "; keeping the area's versions apart failed: %s",
				 strerror(-rescued));
	}
	if (sh->skipped.n)
		n = snprintf(m, len, "%zu %s not synced, every other change was: %s%s", sh->skipped.n,
			     sh->skipped.n == 1 ? "entry was" : "entries were", list_text(&sh->skipped), where);
	if (sh->both.n && n >= 0 && (size_t)n < len)
		n += snprintf(m + n, len - (size_t)n,
			      "%s%zu %s changed both in the directory (while uncovered, or through another path to it) and in the area: %s",
			      n ? "; " : "", sh->both.n, sh->both.n == 1 ? "entry" : "entries", list_text(&sh->both));
	if (sh->lost.n && n >= 0 && (size_t)n < len)
		snprintf(m + n, len - (size_t)n, "%s%zu %s synced without what the directory's filesystem refused: %s",
			 n ? "; " : "", sh->lost.n, sh->lost.n == 1 ? "entry was" : "entries were",
			 list_text(&sh->lost));
	c->res->err = rescued == 0   ? -COPY_SYNC_RESCUED
		      : rescued == 1 ? -COPY_SYNC_KEPT_BOTH
		      : sh->skipped.n ? sh->skipped.err
		      : sh->both.n    ? -COPY_SYNC_KEPT_BOTH
				      : 0;
	return c->res->err;
}

/* whether the failure @err of moving one entry into place (or out, for a
 * deletion) is that entry's: a name or a permission the directory refuses
 * (EPERM for an immutable file), not the filesystem's (EIO, EXDEV) */
static bool op_own(int err)
{
	return sync_entry_own(err) && err != -EIO && err != -EXDEV && err != -ESTALE;
}

/* whether the lower entry that step 4 just moved out of the directory
 * into W/@o->w is the version the walk saw: the same inode, and for a
 * non-directory the same size and mtime (the rename moved its ctime), for
 * a directory nothing below it changed since the sync began.  Else it was
 * changed or replaced there, by someone else, while the sync ran. */
static bool moved_out_seen(const struct sync_ctx *c, const struct op *o)
{
	struct stat st;

	if (fstatat(c->workfd, o->w, &st, AT_SYMLINK_NOFOLLOW) < 0 || st.st_ino != o->seen.ino)
		return false;
	if (S_ISDIR(st.st_mode))
		return sync_tree_changed(c->workfd, o->w, &c->start, c->ldev) == 0;
	return st.st_size == o->seen.size && st.st_mtim.tv_sec == o->seen.mtim.tv_sec &&
	       st.st_mtim.tv_nsec == o->seen.mtim.tv_nsec;
}

/* keeps the entry @name of the directory @s's top the directory's, and
 * says so: @what follows its name, and @beside (NULL: none) quoted */
static void kept_during(struct sync_ctx *c, const struct dirstack *s, const char *name, const char *beside,
			const char *what)
{
	char rel[PATH_MAX / 4];

	dirstack_path(s, "", NULL, rel, sizeof(rel));
	sync_kept_add_path(c->sh, dirstack_path_dup(s, "", name));
	if (beside)
		sync_kept_add_path(c->sh, dirstack_path_dup(s, "", beside));
	sync_note(c, &c->sh->both, 0, rel, name, " (%s%s%s%s%s%s)", what, beside ? ": '" : "", beside ? rel : "",
		  beside && *rel ? "/" : "", beside ? beside : "", beside ? "'" : "");
}

/* moves W/@o->w into the directory @dfd beside @o->name, as
 * @beside: the first of sync_beside_name()'s names free there.
 * Returns: 0; negative errno of renameat2() (-EEXIST: none free in 1000) */
static int put_beside(struct sync_ctx *c, int dfd, const struct op *o, char beside[NAME_MAX + 1])
{
	for (unsigned i = 0; i < 1000; i++) {
		sync_beside_name(o->name, i, beside);
		if (renameat2(c->workfd, o->w, dfd, beside, RENAME_NOREPLACE) == 0)
			return 0;
		if (errno != EEXIST)
			return -errno;
	}
	return -EEXIST;
}

/* step 4 for the deletion @o: moves out of the directory only the version
 * the walk saw; one changed there while the sync ran goes back (beside,
 * where its name was made again meanwhile) and stays the directory's */
static int apply_delete(struct sync_ctx *c, const struct dirstack *s, int dfd, const struct op *o)
{
	char beside[NAME_MAX + 1];
	int r;

	if (renameat2(dfd, o->name, c->workfd, o->w, RENAME_NOREPLACE) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (moved_out_seen(c, o))
		return 0;
	if (renameat2(c->workfd, o->w, dfd, o->name, RENAME_NOREPLACE) == 0) {
		kept_during(c, s, o->name, NULL,
			    "deleted in the area, changed in the directory while the sync ran: the directory's version is kept; delete it there if it should go");
		return 0;
	}
	if (errno != EEXIST)
		return -errno;
	if ((r = put_beside(c, dfd, o, beside)) < 0)
		return r;
	kept_during(c, s, o->name, beside,
		    "deleted in the area, changed and made again in the directory while the sync ran: both of the directory's are kept, the changed one beside");
	return 0;
}

/* step 4 for @o, in the lower directory @dfd, the top of @s: moves out of
 * the directory only the version the walk saw (none: the name stays
 * free); one changed or made there while the sync ran stays, the area's
 * goes beside it, as for an entry changed on both sides.  The file flags
 * the filesystem refuses into @lost. */
static int apply_op(struct sync_ctx *c, const struct dirstack *s, int dfd, const struct op *o,
		    struct copy_lost *lost)
{
	const char *at = o->name;
	char beside[NAME_MAX + 1];
	int fd, r = 0;

	if (o->kind == OP_DELETE)
		return apply_delete(c, s, dfd, o);
	if (o->seen.ino && renameat2(c->workfd, o->w, dfd, o->name, RENAME_EXCHANGE) == 0) {
		if (!moved_out_seen(c, o)) {
			/* theirs back in place, the area's in W again; else theirs beside */
			bool back = renameat2(c->workfd, o->w, dfd, o->name, RENAME_EXCHANGE) == 0;

			if ((r = put_beside(c, dfd, o, beside)) < 0)
				return r;
			kept_during(c, s, o->name, beside,
				    back ? "changed in the directory while the sync ran: the directory's version is kept, the area's beside it"
					 : "changed in the directory while the sync ran: the area's version is in place, the directory's beside it");
			if (back)
				at = beside;
		}
	} else if (o->seen.ino && errno != ENOENT) {
		return -errno;
	} else if (renameat2(c->workfd, o->w, dfd, o->name, RENAME_NOREPLACE) < 0) {
		/* made there while the sync ran (or deleted there, then the
		 * area's comes back, as where the area changed it) */
		if (errno != EEXIST)
			return -errno;
		if ((r = put_beside(c, dfd, o, beside)) < 0)
			return r;
		kept_during(c, s, o->name, beside,
			    "made in the directory while the sync ran: the directory's version is kept, the area's beside it");
		at = beside;
	}
	if (!o->fflags)
		return 0;
	fd = openat(dfd, at, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	r = copy_fflags_add(fd, o->fflags, lost);
	close(fd);
	return r;
}

/* a level of the walk of steps 4 and 5 over the nodes (dirstack extra) */
struct apply_level {
	size_t node, child; /* the next child to enter; NONE: none left */
};

#define NONE SIZE_MAX

/* the nodes' children lists and ops by node (a stable counting sort:
 * ops stay in the order they were noted), each node's dmeta */
struct node_index {
	size_t *first, *next; /* first child, next sibling */
	size_t *opstart, *oporder; /* ops of node k: oporder[opstart[k] .. opstart[k + 1]) */
	size_t *dmeta;
};

static void index_free(struct node_index *x)
{
	free(x->first);
	free(x->next);
	free(x->opstart);
	free(x->oporder);
	free(x->dmeta);
}

static int index_build(const struct sync_ctx *c, struct node_index *x)
{
	size_t n = c->nnodes;

	x->first = malloc(n * sizeof(size_t));
	x->next = malloc(n * sizeof(size_t));
	x->dmeta = malloc(n * sizeof(size_t));
	x->opstart = calloc(n + 1, sizeof(size_t));
	x->oporder = malloc((c->nops ? c->nops : 1) * sizeof(size_t));
	if (!x->first || !x->next || !x->dmeta || !x->opstart || !x->oporder)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		x->first[i] = x->next[i] = x->dmeta[i] = NONE;
	for (size_t i = n; i-- > 1;) {
		x->next[i] = x->first[c->nodes[i].parent];
		x->first[c->nodes[i].parent] = i;
	}
	for (size_t i = 0; i < c->nops; i++)
		x->opstart[c->ops[i].node + 1]++;
	for (size_t k = 0; k < n; k++)
		x->opstart[k + 1] += x->opstart[k];
	for (size_t i = 0; i < c->nops; i++)
		x->oporder[x->opstart[c->ops[i].node]++] = i;
	/* the fill moved each bucket's start to its end: back by one */
	for (size_t k = n; k > 0; k--)
		x->opstart[k] = x->opstart[k - 1];
	x->opstart[0] = 0;
	for (size_t i = 0; i < c->ndirs; i++)
		x->dmeta[c->dirs[i].node] = i;
	return 0;
}

/* step 4 for the ops of the node at the top of @s */
static int apply_ops(struct sync_ctx *c, struct dirstack *s, const struct node_index *x)
{
	const struct dirstack_frame *f = dirstack_top(s);
	size_t k = ((struct apply_level *)f->extra)->node;
	char rel[PATH_MAX / 4];
	int r = 0;

	for (size_t j = x->opstart[k]; r == 0 && j < x->opstart[k + 1]; j++) {
		const struct op *o = &c->ops[x->oporder[j]];
		struct copy_lost lost = { 0 };
		bool put = o->kind == OP_PUT;

		r = apply_op(c, s, f->fd[0], o, &lost);
		if (r < 0 && op_own(r)) {
			/* the W copy stays there for a stop to keep (sync_rescue()) */
			sync_skip(c, r, dirstack_path(s, "", NULL, rel, sizeof(rel)), o->name,
				  put ? "moving into place" : "deleting", put, put ? dirstack_path_dup(s, "", o->name) : NULL,
				  put ? o->w : NULL);
			r = 0;
		} else if (r < 0)
			sync_fail(c, -r, dirstack_path(s, "", NULL, rel, sizeof(rel)), o->name, "moving into place");
		else if (lost.n)
			sync_lost(c, dirstack_path(s, "", NULL, rel, sizeof(rel)), o->name, &lost);
	}
	return r;
}

/* step 5 for the node at the top of @s, left: its metadata */
static int apply_dmeta(struct sync_ctx *c, struct dirstack *s, const struct node_index *x)
{
	const struct dirstack_frame *f = dirstack_top(s);
	size_t k = ((struct apply_level *)f->extra)->node;
	struct copy_lost lost = { 0 };
	const struct dmeta *m;
	char rel[PATH_MAX / 4];
	int r;

	if (k == 0 || x->dmeta[k] == NONE)
		return 0; /* the root's is set last */
	m = &c->dirs[x->dmeta[k]];
	r = copy_xattrs_prune(f->fd[0], &m->xa);
	if (r == 0)
		r = copy_meta_fd(f->fd[0], &m->st, &m->xa, m->fflags, &lost);
	if (r < 0 && op_own(r)) /* its entries are in place: the directory is */
		copy_lost_add(&lost, r, "its owner, mode or times", NULL);
	else if (r < 0)
		return sync_fail(c, -r, dirstack_path(s, "", NULL, rel, sizeof(rel)), "", "setting the directory's metadata");
	if (lost.n)
		sync_lost(c, dirstack_path(s, "", NULL, rel, sizeof(rel)), "", &lost);
	return 0;
}

/* enters the node @k, a child of the top of @s */
static int apply_enter(struct sync_ctx *c, struct dirstack *s, const struct node_index *x, size_t k)
{
	char rel[PATH_MAX / 4];
	int fd = openat(dirstack_top(s)->fd[0], c->nodes[k].name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	int r = fd < 0 ? -errno : dirstack_push(s, &fd, c->nodes[k].name);

	if (r < 0)
		return sync_fail(c, -r, dirstack_path(s, "", NULL, rel, sizeof(rel)), c->nodes[k].name,
				 "opening the lower directory");
	*(struct apply_level *)dirstack_top(s)->extra = (struct apply_level){ .node = k, .child = x->first[k] };
	return apply_ops(c, s, x);
}

/* steps 4 and 5 over the tree of nodes, depth first: a directory's
 * renames when it is entered, its metadata when it is left (after
 * everything below it), with a bounded number of descriptors */
static int apply_walk(struct sync_ctx *c, const struct node_index *x)
{
	struct dirstack s;
	char rel[PATH_MAX / 4];
	int fd = fcntl(c->lowerfd, F_DUPFD_CLOEXEC, 3), r;

	dirstack_init(&s, 1, sizeof(struct apply_level), SYNC_HELD_LEVELS);
	r = fd < 0 ? -errno : dirstack_push(&s, &fd, "");
	if (r < 0)
		return sync_fail(c, -r, "", "", "opening the lower directory");
	*(struct apply_level *)dirstack_top(&s)->extra = (struct apply_level){ .node = 0, .child = x->first[0] };
	r = apply_ops(c, &s, x);
	while (r == 0 && s.depth > 0) {
		struct apply_level *lv = dirstack_top(&s)->extra;
		size_t k = lv->child;

		if (k != NONE) {
			lv->child = x->next[k];
			r = apply_enter(c, &s, x, k);
		} else if ((r = apply_dmeta(c, &s, x)) == 0 && (r = dirstack_pop(&s)) < 0)
			sync_fail(c, -r, dirstack_path(&s, "", NULL, rel, sizeof(rel)), "",
				  r == -ESTALE ? "moved during the sync" : "reopening the lower directory");
	}
	dirstack_free(&s);
	return r;
}

int sync_apply(struct sync_ctx *c, const struct stat *root)
{
	struct node_index x = { 0 };
	struct timespec ts[2];
	int r = index_build(c, &x);

	if (r < 0)
		r = sync_fail(c, -r, "", "", "moving into place");
	else
		r = apply_walk(c, &x);
	index_free(&x);
	/* the root: owner, mode and times only (as the full copy did: what
	 * the directory keeps for itself, e.g. its xattrs, stays) */
	ts[0] = root->st_atim;
	ts[1] = root->st_mtim;
	if (r == 0 && (fchown(c->lowerfd, root->st_uid, root->st_gid) < 0 ||
		       fchmod(c->lowerfd, root->st_mode & 07777) < 0 || futimens(c->lowerfd, ts) < 0)) {
		struct copy_lost lost = { 0 };

		if (!op_own(-errno))
			return sync_fail(c, errno, "", "", "setting the root's metadata");
		copy_lost_add(&lost, -errno, "its owner, mode or times", NULL);
		sync_lost(c, "", ".", &lost);
	}
	return r;
}

void sync_ctx_done(struct sync_ctx *c)
{
	for (size_t i = 0; i < c->nops; i++)
		free(c->ops[i].name);
	free(c->ops);
	for (size_t i = 0; i < c->ndirs; i++)
		free(c->dirs[i].xa.buf);
	free(c->dirs);
	for (size_t i = 0; i < c->nnodes; i++)
		free(c->nodes[i].name);
	free(c->nodes);
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
	copy_inodes_free(&sh->inodes);
	for (size_t i = 0; i < sh->ntasks; i++) {
		close(sh->tasks[i].fd);
		free(sh->tasks[i].name);
	}
	free(sh->tasks);
	copy_budget_done(&sh->budget);
	for (size_t i = 0; i < sh->nskipv; i++)
		free(sh->skipv[i].path);
	free(sh->skipv);
	pthread_mutex_destroy(&sh->lock);
	pthread_mutex_destroy(&sh->llock);
}

/* the path in the lower directory of the node @k into @buf */
static void node_path(const struct sync_ctx *c, size_t k, char *buf, size_t len)
{
	char tmp[PATH_MAX / 4];

	buf[0] = '\0';
	for (; k > 0; k = c->nodes[k].parent) {
		snprintf(tmp, sizeof(tmp), "%s%s%s", c->nodes[k].name, *buf ? "/" : "", buf);
		snprintf(buf, len, "%s", tmp);
	}
}

/* the path in the lower directory of @wrel, a path below W whose first
 * name may be a new subtree's ("n<N>/..."), into @buf */
static const char *tree_path(const struct sync_ctx *c, const char *wrel, char *buf, size_t len)
{
	size_t wl = strcspn(wrel, "/");
	char rel[PATH_MAX / 4];

	for (size_t i = 0; i < c->nops; i++)
		if (strlen(c->ops[i].w) == wl && !strncmp(c->ops[i].w, wrel, wl)) {
			node_path(c, c->ops[i].node, rel, sizeof(rel));
			snprintf(buf, len, "%s%s%s%s", rel, *rel ? "/" : "", c->ops[i].name, wrel + wl);
			return buf;
		}
	snprintf(buf, len, "%s", wrel);
	return buf;
}

/* the entry a failed copy of step 2 names ("'n<N>/...': WHAT"), into @buf
 * as tree_path() gives it, and what follows; NULL when it names none */
static const char *tree_msg_path(const struct sync_ctx *c, const struct copy_result *r2, char *buf, size_t len)
{
	const char *end = r2->msg[0] == '\'' ? strstr(r2->msg + 1, "': ") : NULL;
	char wrel[PATH_MAX / 4];

	if (!end || (size_t)(end - r2->msg) > sizeof(wrel))
		return NULL;
	snprintf(wrel, sizeof(wrel), "%.*s", (int)(end - r2->msg - 1), r2->msg + 1);
	tree_path(c, wrel, buf, len);
	return end + 1;
}

/* notes what the new subtrees of step 2 were copied without, named by
 * their place in the lower directory rather than in W */
static void trees_lost(struct sync_ctx *c, const struct copy_result *r2)
{
	char path[PATH_MAX / 2], more[64] = "";

	if (r2->n_lost > 1)
		snprintf(more, sizeof(more), "; and %zu more entries", r2->n_lost - 1);
	sync_note(c, &c->sh->lost, 0, "", tree_path(c, r2->lost_path, path, sizeof(path)),
		  " (%s%s)", r2->lost_what, more);
}

/* drops the new subtree @k of step 2 and its op @i */
static void tree_drop(struct sync_ctx *c, size_t k, size_t i)
{
	close(c->tsrc[k]);
	free(c->trel[k]);
	memmove(c->tsrc + k, c->tsrc + k + 1, (c->ntrees - k - 1) * sizeof(*c->tsrc));
	memmove(c->trel + k, c->trel + k + 1, (c->ntrees - k - 1) * sizeof(*c->trel));
	c->ntrees--;
	free(c->ops[i].name);
	memmove(c->ops + i, c->ops + i + 1, (c->nops - i - 1) * sizeof(*c->ops));
	c->nops--;
}

/* A new subtree of step 2 that failed (@err, @r2) for a reason of one
 * entry in it is left out whole, as an entry of step 1 is (sync_skip()):
 * the area keeps it, a stop keeps it apart.  The others get new, empty
 * copies in W (what the failed run wrote stays there, removed with W).
 * Returns: whether it was left out (false: the failure is the sync's). */
static bool tree_skip(struct sync_ctx *c, int err, const struct copy_result *r2)
{
	char rel[PATH_MAX / 4], entry[PATH_MAX / 2], what[PATH_MAX / 2 + 96], *path = NULL;
	size_t k = 0, i = 0, wl = strlen(r2->err_root);

	while (k < c->ntrees && strcmp(c->trel[k], r2->err_root))
		k++;
	while (i < c->nops && strcmp(c->ops[i].w, r2->err_root))
		i++;
	if (!sync_entry_own(err) || !wl || k == c->ntrees || i == c->nops)
		return false;
	node_path(c, c->ops[i].node, rel, sizeof(rel));
	if (tree_msg_path(c, r2, entry, sizeof(entry)))
		snprintf(what, sizeof(what), "copying '%s' (the whole new directory is left out)", entry);
	else
		snprintf(what, sizeof(what), "copying the new directory");
	if (asprintf(&path, "%s%s%s", rel, *rel ? "/" : "", c->ops[i].name) < 0)
		path = NULL;
	sync_skip(c, err, rel, c->ops[i].name, what, true, path, NULL);
	tree_drop(c, k, i);
	for (k = 0; k < c->ntrees; k++) {
		for (i = 0; i < c->nops && strcmp(c->ops[i].w, c->trel[k]); i++)
			;
		snprintf(c->ops[i].w, sizeof(c->ops[i].w), "n%u", atomic_fetch_add(&c->sh->nw, 1));
		free(c->trel[k]);
		if (!(c->trel[k] = strdup(c->ops[i].w)) || c->sys->mkdirat(c->workfd, c->trel[k], 0700) < 0)
			return false;
	}
	return true;
}

/* steps 2 and 3; the inodes step 1 wrote are linked to, not copied again */
int sync_trees(struct sync_ctx *c)
{
	struct copy_opts o = *c->o;
	struct copy_result r2 = { 0 };
	char path[PATH_MAX / 2];
	int r = 0;

	o.attrs_optional = true;
	/* each run that fails in one tree for that tree's reason leaves it
	 * out: at most one run per tree */
	while (c->ntrees &&
	       (r = copy_trees_fd(c->workfd, c->tsrc, (const char *const *)c->trel, c->ntrees,
				  &c->sh->inodes, &o, c->sys, &r2)) < 0 &&
	       tree_skip(c, r, &r2))
		r = 0;
	if (r < 0) {
		const char *tail = tree_msg_path(c, &r2, path, sizeof(path));

		*c->res = r2;
		/* cut where it does not fit, as every message is; an encoding
		 * error leaves the copy's own */
		if (tail && snprintf(c->res->msg, sizeof(c->res->msg), "'%s'%s", path, tail) < 0)
			snprintf(c->res->msg, sizeof(c->res->msg), "%s", r2.msg);
		return r;
	}
	if (r2.n_lost)
		trees_lost(c, &r2);
	if (syncfs(c->lowerfd) < 0)
		r = sync_fail(c, errno, "", "", "syncing the copy");
	return r;
}

