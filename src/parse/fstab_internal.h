/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The fstab parser's private room, shared by fstab.c (lines and entries)
 * and fstab_options.c (the option table).  Nothing here is for callers of
 * fstab.h; the fstab__ prefix marks the folder's own names.
 */
#ifndef STORAGED_FSTAB_INTERNAL_H
#define STORAGED_FSTAB_INTERNAL_H

#include "shared/diag.h"
#include "fstab.h"

struct fstab_parser {
	const char *file;
	char *const *select;
	struct diag_list *diags;
	unsigned line; /* 1-based line being parsed */
	bool keep_refused; /* fstab_parse_buf_all(): a refused line's entry is kept */
};

/*
 * Appends an error for the current line.  Evaluates to -EINVAL (the line is
 * rejected, parsing goes on) or -ENOMEM.
 */
#define line_error(p, ...) \
	(diag_error((p)->diags, (p)->file, (p)->line, __VA_ARGS__) < 0 ? -ENOMEM : -EINVAL)

/* What an option sets in an entry (fstab_options.c). */
enum opt_kind {
	OPT_PLAIN, /* no meaning to storaged */
	OPT_SELF, /* "x-storaged" */
	OPT_REQUIRES,
	OPT_BEFORE, /* x-systemd.before=: the named mount waits for this one */
	OPT_DEVICE_TIMEOUT,
	OPT_MOUNT_TIMEOUT,
	OPT_DEGRADED,
	OPT_REMOTE,
	OPT_NOFAIL,
	OPT_BIND,
	OPT_LOOP,
	OPT_MKDIR,
	OPT_MOUNT_MODE, /* X-mount.mode=: noted, and a mode no directory takes refused */
	OPT_NETDEV,
	OPT_DEGRADED_MOUNT, /* "degraded": the administrator's consent */
	OPT_RW_ONLY, /* x-systemd.rw-only: no read-only retry (mount -w) */
	OPT_NOTED, /* read and named (its note), nothing set in the entry */
	OPT_UNKNOWN_OWN, /* an x-storaged* option storaged does not know */
	OPT_UNKNOWN_SYSTEMD, /* an x-systemd.* option not in systemd.mount(5) */
};

/* One row of the option table. */
struct fstab__option {
	const char *name;
	enum opt_kind kind;
	bool own; /* x-storaged spelling: wins over the x-systemd one */
	const char *note; /* NULL: honoured as systemd.mount(5) or mount(8)
			     says; else what storaged does instead, told as a
			     warning with FILE:LINE */
	bool refuse; /* @note is an error: the line is refused */
};

/*
 * fstab__option_rows (fstab_options.c): the option table, for the test
 * that every row is exercised.
 * Returns: the static rows; their number in @ret_n.
 */
const struct fstab__option *fstab__option_rows(size_t *ret_n);

/*
 * fstab__parse_options (fstab_options.c): reads every option of
 * @e->options: storaged's own ones fill @e, the others are appended to
 * @e->mount_options.  Reports every bad option of the line.
 * Returns: 0; -EINVAL when an error was appended; -ENOMEM.
 */
int fstab__parse_options(struct fstab_parser *p, struct fstab_entry *e);

/*
 * fstab__near_miss: the select option or storaged prefix ("x-storaged")
 * that the option @name (@n bytes, its value left out) is a misspelling of:
 * within two edits (one for a word under 8 bytes), or equal but for case,
 * and not that word itself.  Returns: it (borrowed), or NULL.
 */
const char *fstab__near_miss(const char *name, size_t n, char *const *select);

/* fstab__warn_near_miss: a warning for option @name of the current line
 * when fstab__near_miss() finds one; @selected: the line is storaged's.
 * Returns: 0 or -ENOMEM. */
int fstab__warn_near_miss(struct fstab_parser *p, const char *name, size_t n, bool selected);

#endif
