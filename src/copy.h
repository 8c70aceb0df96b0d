/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Full-fidelity tree copy with libarchive, run only inside the helper
 * program storaged-copy: libarchive and the libraries it pulls in (ICU,
 * libxml2, libstdc++, ...) are megabytes of resident memory that the
 * storaged daemon must not carry.  storaged reaches this code through
 * copy_spawn.h.
 */
#ifndef STORAGED_COPY_H
#define STORAGED_COPY_H

#include <stdbool.h>

/* Top-level entries of a source named so are leftovers of an interrupted
 * sync back (area.c) and are never copied. */
#define COPY_SKIP_PREFIX ".storaged-sync."

/* The outcome of a copy: err is 0 or a positive errno, msg libarchive's
 * text (or the helper's) when err is set. */
struct copy_result {
	int err;
	char msg[256];
};

struct copy_opts {
	const char *label; /* for the progress line, e.g. the area's name */
	bool progress; /* print a progress line on stderr (a terminal) */
	unsigned jobs; /* worker processes; 0 or 1: copy in this process */
};

/**
 * copy_tree:
 * @src: directory to copy (a symlink is not followed)
 * @dst: existing directory to copy into
 * @o: options; @o->jobs > 1 copies independent subtrees in that many
 *     forked worker processes (processes: libarchive's read_disk may fchdir)
 * @ret: filled on failure with the errno and libarchive's message
 *
 * Copies with archive_read_disk → archive_write_disk: owner (numeric),
 * mode, times, ACLs, xattrs, file flags, hard links, device nodes, sparse
 * files; symlinks are not followed, other filesystems below @src are not
 * entered (their mount point directories are copied, empty), top-level
 * COPY_SKIP_PREFIX entries are skipped.  Directory times are set after
 * their contents.  A failure leaves a partial copy in @dst for the caller
 * to remove.
 *
 * Returns: 0; negative errno of the first failure (-ENOSPC when @dst is
 * full, -ENOMEM, -EIO when a worker died without a report).
 */
int copy_tree(const char *src, const char *dst, const struct copy_opts *o,
	      struct copy_result *ret);

#endif
