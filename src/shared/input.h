/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Reading storaged's inputs (storaged.conf, its drop-ins, the fstab) the way
 * a root daemon must: regular files only, bounded in size, and, where asked,
 * only files that root owns and nobody else can write.
 */
#ifndef STORAGED_INPUT_H
#define STORAGED_INPUT_H

#include <stdbool.h>
#include <stddef.h>

#include "shared/diag.h"

/*
 * @max: largest accepted size, bytes
 * @check_owner: refuse a file not owned by root or writable by group or
 *               others (the file's contents decide what root mounts)
 * @ret: contents, NUL-terminated (owned by the caller); set only on success
 * @ret_len: bytes read, without the terminating NUL
 * @diags: one file-level error per problem ("path: message"); nothing is
 *         appended for a missing file
 *
 * The file is opened O_NONBLOCK, so that a FIFO planted under the name
 * cannot hang the boot: it is refused as not a regular file before any read.
 * The size is what read(2) returns, not what st_size claims.
 *
 * Returns: 0; -ENOENT (missing); -EINVAL (not a regular file); -EPERM
 * (owner or mode); -EFBIG (above @max); -ENOMEM; other negative errno from
 * open(2)/read(2).
 */
int input_read(const char *path, size_t max, bool check_owner, char **ret, size_t *ret_len,
	       struct diag_list *diags);

/*
 * @dirfd: directory the file is in (an open descriptor), or AT_FDCWD
 * @name: the file's name in @dirfd (one component when @dirfd is open)
 * @path: how messages name the file
 *
 * As input_read(); in an open directory @name is not followed if it is a
 * symbolic link (-ELOOP, with its own message).
 */
int input_read_at(int dirfd, const char *name, const char *path, size_t max, bool check_owner,
		  char **ret, size_t *ret_len, struct diag_list *diags);

#endif
