/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The fstab parser's private room, shared by fstab.c (lines and entries)
 * and fstab_options.c (the option table).  Nothing here is for callers of
 * fstab.h; the fstab__ prefix marks the folder's own names.
 */
#ifndef STORAGED_FSTAB_INTERNAL_H
#define STORAGED_FSTAB_INTERNAL_H

#include "diag.h"
#include "fstab.h"

struct fstab_parser {
	const char *file;
	char *const *select;
	struct diag_list *diags;
	unsigned line; /* 1-based line being parsed */
};

/*
 * Appends an error for the current line.  Evaluates to -EINVAL (the line is
 * rejected, parsing goes on) or -ENOMEM.
 */
#define line_error(p, ...) \
	(diag_error((p)->diags, (p)->file, (p)->line, __VA_ARGS__) < 0 ? -ENOMEM : -EINVAL)

/*
 * fstab__parse_options (fstab_options.c): reads every option of
 * @e->options: storaged's own ones fill @e, the others are appended to
 * @e->mount_options.  Reports every bad option of the line.
 * Returns: 0; -EINVAL when an error was appended; -ENOMEM.
 */
int fstab__parse_options(struct fstab_parser *p, struct fstab_entry *e);

#endif
