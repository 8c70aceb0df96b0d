/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What the walk (copy_sync.c), the commit (copy_sync_commit.c) and the
 * three-way rule (copy_sync_kept.c) of the sync back share; the steps are
 * in copy_sync.c. */
#ifndef STORAGED_COPY_SYNC_INTERNAL_H
#define STORAGED_COPY_SYNC_INTERNAL_H

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <time.h>

#include "copy.h"
#include "copy_budget.h"
#include "copy_fd.h"
#include "shared/dirstack.h"
#include "shared/mapped.h"
#include "shared/util.h"

#define SYNC_BUF_SIZE (256 * 1024)
/* directory levels whose two descriptors a walking thread holds */
#define SYNC_HELD_LEVELS 128

enum op_kind { OP_PUT, OP_DELETE };

/* a directory of the lower copy that step 4 or 5 enters: its name below
 * its parent node (node 0: the lower root, name NULL) */
struct sync_node {
	size_t parent;
	char *name;
};

/* the lower entry the walk saw under an op's name (ino 0: none): what a
 * rename may move out of the directory; anything else there was changed
 * or made by someone else while the sync ran, and is the directory's */
struct sync_seen {
	ino_t ino;
	off_t size;
	struct timespec mtim;
};

/* a step 4 rename: W/<w> to or from lower/<node>/<name> */
struct op {
	size_t node;
	char *name;
	char w[16];
	enum op_kind kind;
	unsigned fflags; /* OP_PUT: file flags set once it is in place */
	struct sync_seen seen;
};

/* a step 5 directory: the node, the area's metadata */
struct dmeta {
	size_t node;
	struct stat st;
	struct copy_xattrs xa;
	unsigned fflags;
};

/* a level of the walk of step 1 (a directory pair: the area's, side 0,
 * and the lower one's, side 1): frame->extra of its dirstack */
struct sync_level {
	struct stat st; /* the area directory's */
	bool changed; /* its own metadata differs from the lower one's */
	/* it, or a directory above it but the root (which never moves),
	 * changed in the area since the baseline: what is in it may have come
	 * by a rename there, which moves no ctime below the directory renamed */
	bool moved;
	size_t changes; /* ops noted below it */
	size_t node1; /* its node + 1; 0: none yet */
};

/* a directory below the root that both sides have, walked by a thread */
struct task {
	int fd; /* the area entry, O_PATH */
	struct stat st, lst;
	char *name;
};

/* paths below the roots, sorted, pointing into @buf: a list as read */
struct sync_paths {
	char **v, *buf;
	size_t n, cap;
};

/* what the walking threads share */
struct shared {
	pthread_mutex_t lock; /* inodes, the result */
	pthread_mutex_t llock; /* the lists of step 1 (sync_ctx.lists) */
	atomic_uint nw; /* W names given */
	atomic_bool failed;
	struct copy_inodes inodes; /* the W names of area inodes with several links */
	struct task *tasks;
	size_t ntasks, taskcap;
	atomic_size_t next; /* the next task to take */
	/* named in the result once everything else is committed */
	struct entry_list {
		size_t n;
		int err; /* the first one's, negative */
		char text[sizeof(((struct copy_result *)0)->msg) / 2 - 100];
	} skipped, both, lost;
	/* skipped entries a stop keeps (copy_sync_rescue.c): path below the
	 * roots, and its complete copy in W ("": copied from the area) */
	struct sync_skipped {
		char *path;
		char w[16];
	} *skipv;
	size_t nskipv, skipvcap;
	bool skipv_lost; /* an addition failed: the list is incomplete */
	/* the kept list (COPY_SYNC_KEPT_XATTR): as read, and this sync's
	 * additions */
	struct sync_paths kept_old;
	char **kept_new;
	size_t nkept_new, kept_newcap;
	bool kept_lost; /* an addition failed: the list is incomplete */
	/* the entries the last sync left out (COPY_SYNC_RETRY_XATTR) */
	struct sync_paths retry;
	/* area files mapped shared now or at the last sync (sorted), and
	 * now alone (the next sync's) */
	struct mapped_set mapped, mapped_now;
	/* the owners' room on the directory's filesystem (copy_opts.budget) */
	struct copy_budget budget;
};

/* one walking thread's state; what step 1 notes goes to the lists of
 * @lists, the sync's own context */
struct sync_ctx {
	struct shared *sh;
	bool defer; /* the root: its directories become tasks */
	const struct copy_opts *o;
	const struct copy_sys *sys;
	int lowerfd, workfd, areafd;
	dev_t adev, ldev;
	struct stat work;
	struct timespec base; /* changed: ctime >= base; tv_sec < 0: no base */
	struct timespec start; /* this sync's: a ctime past it changed while it ran */
	struct timespec lbase; /* the lower directory's; changed there: ctime >= lbase */
	/* the lower root holds its names of the lower baseline
	 * (COPY_LOWER_ROOT_XATTR; the walk's root only): its mtime, moved by
	 * W, says nothing */
	bool lroot_kept;
	char *buf;
	struct dirstack s; /* the walk of step 1 */
	const char *basename; /* the path of the walk's base level, for messages */
	struct sync_ctx *lists;
	struct sync_node *nodes; /* node 0: the lower root */
	size_t nnodes, nodecap;
	struct op *ops;
	size_t nops, opcap;
	struct dmeta *dirs;
	size_t ndirs, dircap;
	int *tsrc; /* step 2: area directories, and their W names */
	char **trel;
	size_t ntrees, treecap;
	struct copy_result *res;
};

/* whether the lower root's names but @work are those COPY_LOWER_ROOT_XATTR
 * on @areafd records (false without one, or on a read error) */
bool sync_root_kept(int areafd, int lowerfd, const struct stat *work);

/* the kept and retry lists of @areafd into @sh.  Returns: 0 (none:
 * empty); -ENOMEM; negative errno of fgetxattr() */
int sync_kept_read(struct shared *sh, int areafd);

/* whether the entry @name of the walk's current directory was left out
 * by the last sync: changed in the area, whatever its times say */
bool sync_retry_has(const struct sync_ctx *c, const char *name);

/* records the entries this sync left out (@sh->skipv) as the retry list,
 * once committed; none: removes it.  Returns: 0; -ENOMEM (the list is
 * incomplete); negative errno of fsetxattr() */
int sync_retry_write(struct shared *sh, int areafd);

/* whether the entry @name of the walk's current directory is kept */
bool sync_kept_has(const struct sync_ctx *c, const char *name);

/* adds it to this sync's additions (under the shared lock); a failure
 * marks the list lost */
void sync_kept_add(struct sync_ctx *c, const char *name);

/* the same for @path below the roots (taken; NULL: no memory, the list
 * lost), not looked up in the list first */
void sync_kept_add_path(struct shared *sh, char *path);

/* whether an entry below the directory @name of @dirfd (on @dev; other
 * filesystems are not entered) has a ctime at or past @base: 1, 0;
 * negative errno (-ESTALE: moved during the walk) */
int sync_tree_changed(int dirfd, const char *name, const struct timespec *base, dev_t dev);

/* the @i-th candidate beside @name into @beside: NAME.storaged-area[.I],
 * or, where that would be over NAME_MAX, NAME cut to fit, then ~HASH */
void sync_beside_name(const char *name, unsigned i, char beside[NAME_MAX + 1]);

/* writes the list back, once the sync is committed.  Returns: 0; -ENOMEM
 * (an addition lost); negative errno of fsetxattr() (-E2BIG, -ENOSPC) */
int sync_kept_write(struct shared *sh, int areafd);

void sync_kept_done(struct shared *sh);

/* the area's files mapped shared now (on @areafd's device, by
 * /proc/PID/maps, proc(5)) into @sh->mapped_now; those and the ones the
 * last sync recorded (COPY_SYNC_MAPPED_XATTR) into @sh->mapped.
 * Returns: 0; -ENOMEM; negative errno of opening /proc, of fgetxattr() */
int sync_mapped_setup(struct shared *sh, int areafd);

/* whether the area's regular file @name of @afd (@ast) and the lower one
 * of @lfd (@lst), of one size, hold the same data (and with @xattrs, the
 * same xattrs but storaged's).  The atime stays.  Returns: 1, 0; negative
 * errno (-ESTALE: replaced since @ast or @lst was read) */
int sync_same_content(int afd, int lfd, const char *name, const struct stat *ast, const struct stat *lst,
		      bool xattrs);

/* whether @t is at or past the baseline @base; with no baseline, @none */
static inline bool sync_since(const struct timespec *t, const struct timespec *base, bool none)
{
	if (base->tv_sec < 0)
		return none;
	return t->tv_sec > base->tv_sec || (t->tv_sec == base->tv_sec && t->tv_nsec >= base->tv_nsec);
}

/* whether the lower entry @name (@lst) of @lfd changed there since the
 * lower baseline: its ctime, the kept list, and for a directory anything
 * below it.  Returns: 1, 0; negative errno of the walk below it */
int sync_lower_changed(struct sync_ctx *c, int lfd, const char *name, const struct stat *lst);

/* whether the lower entry @name (@lst) of @lfd, which the area has as @st
 * of @afd, was changed in the directory while the last sync ran or after
 * it was cut (its ctime between the two baselines, with that sync's own
 * renames): with the area's entry unchanged since, a lower one of another
 * type, size or data than the sync put there is someone else's; an area
 * entry changed since is undecided (0: the area's is carried).
 * Returns: 1, 0; negative errno of reading the two files */
int sync_lower_changed_during(struct sync_ctx *c, int afd, int lfd, const char *name, const struct stat *st,
			      const struct stat *lst);

/* whether the lower entry @lst, which the area lacks, was made there while
 * the last sync ran or after it was cut: its ctime between the baselines,
 * and the area's directory removed no name since (the sync put only names
 * the area had) */
bool sync_lower_made_during(const struct sync_ctx *c, const struct stat *lst);

/* the same for the area entry @name (@st) of @afd, since the area's baseline */
int sync_area_changed(struct sync_ctx *c, int afd, const char *name, const struct stat *st);

/* whether names were added to or removed from the current lower directory
 * since the lower baseline (false when unknown: the area's entry is then
 * copied, never taken as deleted there) */
bool sync_lower_names_changed(const struct sync_ctx *c);

/* notes the area entry @name (@st) of @afd, which the lower directory
 * lacks, changed on both sides when it was there at the baseline (deleted
 * in the directory) and changed since in the area.  Returns: 0; negative
 * errno of fstat() of the lower directory or of the walk below the entry */
int sync_lower_deleted(struct sync_ctx *c, int afd, const char *name, const struct stat *st);

/* the same for the lower entry @name (@lst) of @lfd, changed there, that
 * the area lacks (deleted in the area) */
void sync_area_deleted(struct sync_ctx *c, int lfd, const char *name, const struct stat *lst);

/* the name for the area's version beside the conflicting @name:
 * @name.storaged-area, else .1, .2 ..., the first that neither @afd nor
 * @lfd has (or @lfd holds as an earlier sync's copy, kept, unchanged) and
 * this sync put nothing at; over NAME_MAX, @name is cut at a character
 * boundary (a byte when not UTF-8) and followed by ~ and 8 hex digits of
 * its hash.  Returns: 0; -EEXIST (none free in 1000) */
int sync_beside(struct sync_ctx *c, int afd, int lfd, const char *name, char beside[NAME_MAX + 1]);

/* records the first failure (@rel/@name: the entry, @what: the step) and
 * stops the other threads; returns -@err */
int sync_fail(struct sync_ctx *c, int err, const char *rel, const char *name, const char *what);

/* adds the entry @rel/@name to @l (under the shared lock), followed by
 * @fmt; @err: the entry's negative errno, or 0 */
__attribute__((format(printf, 6, 7))) void sync_note(struct sync_ctx *c, struct entry_list *l,
						     int err, const char *rel, const char *name,
						     const char *fmt, ...);

/* whether the failure @err reading an entry or writing it is that entry's
 * (a permission, a name or size refused, the area's I/O error), not the
 * lower filesystem's or the helper's, which no entry escapes (room,
 * memory, descriptors, read-only, cancelled) */
static inline bool sync_entry_own(int err)
{
	return err != -ENOSPC && err != -EDQUOT && err != -ENOMEM && err != -EROFS && err != -EMFILE &&
	       err != -ENFILE && err != -ECANCELED;
}

/* notes the entry @rel/@name that failed with @err while @what: left out,
 * its old version stays, the sync goes on; @keep: the area has a version,
 * which a stop keeps (sync_rescue()) from @w (its complete copy in W) or
 * else from the area at @path (taken; NULL without memory) */
void sync_skip(struct sync_ctx *c, int err, const char *rel, const char *name, const char *what, bool keep,
	       char *path, const char *w);

/* notes the attributes @l the entry @rel/@name was synced without */
void sync_lost(struct sync_ctx *c, const char *rel, const char *name, const struct copy_lost *l);

/* once everything else is committed, the skipped, both-sides and lost
 * entries listed in the message; returns the first skipped entry's errno
 * (-COPY_SYNC_RESCUED when @o->rescue kept each), else
 * -COPY_SYNC_KEPT_BOTH, else 0 (the message a warning) */
int sync_partial_result(struct sync_ctx *c);

/* keeps the area's version of each skipped entry in @c->o->rescue below
 * the lower root (copy.h).  Returns: 0; negative errno (what it wrote is
 * removed) */
int sync_rescue(struct sync_ctx *c);

/* steps 2 and 3: the new subtrees into W, then syncfs(); negative errno */
int sync_trees(struct sync_ctx *c);

/* steps 4 and 5: the renames, the directories' metadata, the root's
 * (@root: the area root's fstat()); negative errno */
int sync_apply(struct sync_ctx *c, const struct stat *root);

/* free what a context or the shared state holds (not the structs) */
void sync_ctx_done(struct sync_ctx *c);
void sync_shared_done(struct shared *sh);

#endif
