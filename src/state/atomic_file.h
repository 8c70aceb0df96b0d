/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A file replaced atomically: readers see the old or the new text, never a
 * part, also after a crash.
 */
#ifndef STORAGED_ATOMIC_FILE_H
#define STORAGED_ATOMIC_FILE_H

#include <stdio.h>
#include <sys/types.h>

/*
 * @path: the file to replace (or create)
 * @mode: its mode, set with fchmod (the umask does not apply)
 * @write_fn: writes the new text to @f; returns 0 or negative errno
 *
 * Writes into a temporary file beside @path, "@path.XXXXXX" made with
 * O_EXCL by mkostemp(3) (so that whoever may write to the directory cannot
 * have the caller write through a link they planted; the name never ends
 * in a suffix of @path's own, such as ".prom", for readers that pick files
 * by suffix), then fflush, fsync, rename(2) over @path and fsync of the
 * directory.  The temporary file is removed on failure.
 *
 * Returns: 0; @write_fn's error; negative errno.
 */
int file_write_atomic(const char *path, mode_t mode, int (*write_fn)(FILE *f, const void *ud),
		      const void *ud);

/*
 * @path: a file written by file_write_atomic()
 *
 * Removes @path and the temporary files a file_write_atomic() of it that
 * was killed left beside it ("@path.XXXXXX", six characters of
 * mkostemp(3)), so that its directory can be removed.
 *
 * Returns: 0 (also when there is nothing to remove); negative errno from
 * opening the directory or from unlink(2).
 */
int file_atomic_remove(const char *path);

#endif
