/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The fstab option table's rows (fstab.c), for the test that every row is
 * exercised.  Nothing here is for callers of fstab.h.
 */
#ifndef STORAGED_FSTAB_INTERNAL_H
#define STORAGED_FSTAB_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

/* What an option sets in an entry. */
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
 * fstab__option_rows: the option table.
 * Returns: the static rows; their number in @ret_n.
 */
const struct fstab__option *fstab__option_rows(size_t *ret_n);

#endif
