/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Reading the pass's sources from disk (load.c): the I/O half of the
 * parsers, which take buffers (config_parse_buf(), fstab_parse_buf()).
 * Files are read with input_read() (shared/input.h): regular files only,
 * bounded, and with @check_owner only root's and closed to others.
 */
#ifndef STORAGED_LOAD_H
#define STORAGED_LOAD_H

#include <stdbool.h>

#include "parse/config.h"
#include "parse/fstab.h"

/**
 * config_load:
 * @c: config initialised by config_init()
 * @path: main file; files matching "@path.d/ *.conf" are read after it in
 *        lexical order
 * @check_owner: refuse files not owned by root or writable by group/others
 * @diags: problems, with file and line
 *
 * Returns: 0; -ENOENT when @path does not exist (nothing appended); -EINVAL
 * when errors were appended; -EPERM for an unsafe owner or mode (appended);
 * other negative errno for I/O errors (appended).
 */
int config_load(struct config *c, const char *path, bool check_owner, struct diag_list *diags);

/**
 * fstab_load:
 * @check_owner: refuse an fstab not owned by root or writable by group or
 *               others (see input_read(), shared/input.h)
 *
 * Reads @path (at most 4 MiB, a regular file) and calls fstab_parse_buf().
 *
 * Returns: as fstab_parse_buf(); negative errno from input_read() (appended
 * to @diags with the path).
 */
int fstab_load(struct fstab *ret, const char *path, char *const *select, bool check_owner,
	       struct diag_list *diags);

#endif
