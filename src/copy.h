/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Full-fidelity tree copy, run only inside the helper program
 * storaged-copy (its threads and buffers are no memory of the resident
 * storaged).  storaged reaches this code through copy_spawn.h.
 */
#ifndef STORAGED_COPY_H
#define STORAGED_COPY_H

#include <stdbool.h>

struct copy_sys;

/* The outcome of a copy: err is 0 or a negative errno, msg says what
 * failed (the entry's path below the source) when err is set. */
struct copy_result {
	int err;
	char msg[256];
};

struct copy_opts {
	const char *label; /* for the progress line, e.g. the area's name */
	bool progress; /* print a progress line on stderr (a terminal) */
	unsigned jobs; /* worker threads; 0 or 1: copy in the calling thread */
};

/**
 * copy_tree:
 * @src: directory to copy (not followed when it is a symbolic link)
 * @dst: existing directory to copy into (not followed either)
 * @o: options; @o->jobs > 1 copies directories in that many threads
 * @ret: filled on failure with the negative errno and a message
 *
 * Copies owner (numeric), mode, times (atime, mtime), xattrs (POSIX ACLs
 * among them), file flags, hard links, device nodes, fifos, symbolic
 * links (as links), sparse files (holes stay holes); sockets are not
 * copied, other filesystems below @src are not entered (their mount point
 * directories are copied, empty); every name is copied, none is taken for
 * storaged's own (the sync back's working directory is never below a
 * source).  @src may be changed while it is copied by a user who owns it
 * (C21): every entry is looked up once, as one name below its directory's
 * descriptor, following no symbolic link, and copied from that descriptor
 * (copy_fd.h); nothing outside @src is ever read.  The copy in @dst stays
 * root-owned 0700 directories until the end, when directories get their
 * metadata (after their contents), the root last.  A failure leaves a
 * partial copy in @dst for the caller to remove.
 *
 * Returns: 0; negative errno of the first failure (-ENOSPC when @dst is
 * full, -ENOMEM, -ELOOP/-ENOTDIR when @src or @dst is not a directory).
 */
int copy_tree(const char *src, const char *dst, const struct copy_opts *o, struct copy_result *ret);

/**
 * copy_tree_fd:
 * @srcfd: open directory to copy
 * @dstfd: open directory to copy into
 * @o, @ret: as for copy_tree()
 * @sys: the calls that take a name (copy_sys_libc, or a test's)
 *
 * copy_tree() on descriptors; neither is closed.
 *
 * Returns: as copy_tree().
 */
int copy_tree_fd(int srcfd, int dstfd, const struct copy_opts *o, const struct copy_sys *sys,
		 struct copy_result *ret);

#endif
