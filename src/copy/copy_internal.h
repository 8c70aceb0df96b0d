/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What copy.c (the walk, its threads and step 4) and copy_node.c (one
 * non-directory: regular file, link, node, hard link) share: the state of
 * one copy and of one entry being copied.  Private to src/copy/.
 */
#pragma once

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/stat.h>

#include "copy.h"
#include "copy_fd.h"
#include "shared/dirstack.h"

#define COPY_MAX_JOBS 64
#define COPY_BUF_SIZE (256 * 1024)
#define LINK_BUCKETS 4096
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

/* the first copy of an inode with several links */
struct link {
	dev_t dev;
	ino_t ino;
	unsigned fflags; /* set in step 4 */
	char *rel;
	struct link *next;
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
	struct link *links[LINK_BUCKETS];

	pthread_mutex_t dlock; /* dirs, lost */
	size_t n_lost; /* entries that lost an attribute (attrs_optional) */
	char lost_path[512], lost_what[400]; /* the first one */
	struct copy_dirmeta *dirs;
	size_t ndirs, dircap;
};

/* one source entry being copied */
struct entry {
	int fd; /* O_PATH, the one lookup of the name */
	struct stat st;
	int dd; /* destination directory */
	const char *name;
	char *rel; /* below the destination root: set for several links only */
	int in, out; /* regular files: source reopened, copy */
	char *target; /* symbolic links */
	struct copy_xattrs xa;
	unsigned fflags;
	struct copy_lost lost;
};

/* where the copy of one entry notes the attributes it could not keep:
 * NULL (they fail the copy, but for an xattr namespace the destination
 * has not) unless the options make them optional */
static inline struct copy_lost *copy__lost(const struct copy_ctx *c, struct copy_lost *l)
{
	return c->o->attrs_optional ? l : NULL;
}

/* records the losses @l of the entry @rel in the copy's result */
void copy__lost_note(struct copy_ctx *c, const char *rel, const struct copy_lost *l);

/*
 * copy__nondir:
 * @c: the copy
 * @e: an entry that is no directory, opened (O_PATH) below its source
 *     directory, with @e->dd its destination directory
 * @buf: COPY_BUF_SIZE bytes for the data
 *
 * Step 2 for one non-directory: reads it (data descriptor, link target,
 * xattrs, flags), creates it in @e->dd (a file with several links once,
 * linkat() for its other names) and sets its metadata.
 *
 * Returns: 0, or negative errno (the caller records the failure).
 */
int copy__nondir(struct copy_ctx *c, struct entry *e, char *buf);
