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
 * O_EXCL|O_NOFOLLOW (file_write_atomic_at() in @path's directory,
 * opened once: so that whoever may write to the directory cannot have
 * the caller write through a link they planted; the name never ends
 * in a suffix of @path's own, such as ".prom", for readers that pick files
 * by suffix), then fflush, fsync, rename(2) over @path and fsync of the
 * directory.  The temporary file is removed on failure.
 *
 * Returns: 0; @write_fn's error; negative errno.
 */
int file_write_atomic(const char *path, mode_t mode, int (*write_fn)(FILE *f, const void *ud),
		      const void *ud);

/*
 * @dirfd: the directory, open (O_PATH will do): the file is written there
 *         whatever becomes of the directory's path meanwhile
 * @name: the file's name in @dirfd (one component)
 * @mode, @write_fn, @ud: as file_write_atomic()
 *
 * file_write_atomic() by descriptor: the temporary file "@name.XXXXXX" is
 * made with openat(2) O_CREAT|O_EXCL|O_NOFOLLOW in @dirfd, and renamed
 * over @name there with renameat(2), so that whoever can rename or
 * replace the directory or its parents cannot have the file written
 * elsewhere.
 *
 * Returns: 0; @write_fn's error; -ENAMETOOLONG; negative errno.
 */
int file_write_atomic_at(int dirfd, const char *name, mode_t mode, int (*write_fn)(FILE *f, const void *ud),
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
