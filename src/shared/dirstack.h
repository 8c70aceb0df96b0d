/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The stack of a depth-first walk of one directory tree (or of two trees
 * side by side: a source and its copy) that costs the same whatever the
 * tree's depth: no recursion, no path string per level, a bounded number
 * of descriptors held.
 *
 * Each level (frame) keeps its directories' identity (device, inode),
 * its name below its parent and the names of its entries, read in full
 * when the level is entered (so that its directory stream need not stay
 * open).  The descriptors of the @cap deepest levels and of the base are
 * held; a deeper push releases the oldest of them.  A released level is
 * reopened when the walk comes back up to it: as ".." of the level just
 * left, checked to be the same inode it was (else from its nearest held
 * ancestor, one name at a time, with O_NOFOLLOW, each checked the same
 * way).  A tree changed under the walk (a directory moved away) is
 * refused with -ESTALE rather than walked somewhere else: nothing outside
 * the tree is read.  Each reopening costs one openat() per side, so a walk
 * costs time and memory linear in the entries.
 */
#ifndef STORAGED_DIRSTACK_H
#define STORAGED_DIRSTACK_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define DIRSTACK_SIDES 2

struct dirstack_frame {
	int fd[DIRSTACK_SIDES]; /* -1: released, or no such side */
	dev_t dev[DIRSTACK_SIDES];
	ino_t ino[DIRSTACK_SIDES];
	char *name; /* below the parent level; "" for the base */
	char *blob; /* the entries' names, each '\0'-ended */
	char **names;
	size_t nnames, next;
	void *extra; /* the walker's own per-level state, zeroed at push */
};

struct dirstack {
	unsigned sides, cap;
	size_t extra_size;
	struct dirstack_frame *f;
	size_t depth, alloc; /* frames in use, frames allocated */
};

/*
 * @sides: 1 or 2 (DIRSTACK_SIDES) directories per level
 * @extra_size: bytes of per-level state for the caller (frame->extra)
 * @cap: levels below the base whose descriptors are held at most (>= 2)
 */
void dirstack_init(struct dirstack *s, unsigned sides, size_t extra_size, unsigned cap);

/*
 * @fds: @s->sides open directories (not O_PATH), taken in all cases
 * @name: their name below the current top ("" for the base)
 *
 * Enters a level, its identities from fstat() of @fds.
 *
 * Returns: 0; negative errno (-ENOMEM, an fstat() failure), nothing pushed.
 */
int dirstack_push(struct dirstack *s, const int *fds, const char *name);

/*
 * @sorted: sort the names (strcmp order) for dirstack_has()
 *
 * Reads the names of the top level's side-0 directory ("." and ".."
 * left out) into the frame, for dirstack_next().
 *
 * Returns: 0; negative errno of opendir/readdir (-ENOMEM).
 */
int dirstack_list(struct dirstack *s, bool sorted);

/*
 * As dirstack_list() unsorted, keeping only the names readdir(3) gives as
 * directories (DT_DIR) or does not type (DT_UNKNOWN: the caller stats
 * them): a walk for directories alone stats no file.
 *
 * Returns: as dirstack_list().
 */
int dirstack_list_dirs(struct dirstack *s);

/* The top level's next name from dirstack_list(), NULL after the last */
const char *dirstack_next(struct dirstack *s);

/* Whether the top level's sorted listing holds @name */
bool dirstack_has(const struct dirstack *s, const char *name);

/*
 * Depth > 0.  Leaves the top level (its descriptors closed, its state freed; the
 * caller has used frame->extra before) and makes sure the new top's
 * descriptors are held, reopening them as described above.
 *
 * Returns: 0; -ESTALE when the new top is no longer where it was (the
 * tree was changed during the walk), another negative errno of openat();
 * on failure the new top's descriptors are -1.
 */
int dirstack_pop(struct dirstack *s);

/* The current level (depth > 0) */
static inline struct dirstack_frame *dirstack_top(const struct dirstack *s)
{
	return &s->f[s->depth - 1];
}

/*
 * @base: the path of the base level, for the message ("" for none)
 * @name: an entry of the top level, or NULL
 * @buf, @len: receives "BASE/LEVEL/.../NAME", cut at the front ("...")
 *             when it does not fit
 *
 * For messages only: built on demand, never looked up.
 *
 * Returns: @buf.
 */
char *dirstack_path(const struct dirstack *s, const char *base, const char *name, char *buf,
		    size_t len);

/*
 * @s, @base, @name: as for dirstack_path()
 *
 * The whole path, uncut (a hard link's target below a copy's root).
 *
 * Returns: a string to free; NULL without memory.
 */
char *dirstack_path_dup(const struct dirstack *s, const char *base, const char *name);

/* Closes and frees every level; @s may be pushed again after dirstack_init() */
void dirstack_free(struct dirstack *s);

#endif
