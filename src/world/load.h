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
#include <stddef.h>

#include "parse/config.h"
#include "parse/fstab.h"

/*
 * @path: the file's name, for messages
 * @buf: its contents (borrowed for the call), or NULL for a drop-in masked
 *       by a link to /dev/null (@len 0)
 *
 * Returns: 0 to go on, or negative errno (the visit goes on to report
 * every problem and returns the first error).
 */
typedef int (*config_visit_fn)(void *userdata, const char *path, const char *buf, size_t len);

/*
 * @check_owner: refuse a file not owned by root or writable by group or
 *               others, and the same of the directories the files are in
 *
 * Calls @fn for each configuration file in effect, in the order it is
 * read: @path, then the drop-ins "*.conf" of its layers in byte order of
 * their names.  The layers of the default configuration
 * (CONFIG_DEFAULT_PATH), lowest priority first, are
 * /usr/lib/storaged.conf.d, /usr/local/lib/storaged.conf.d,
 * /run/storaged.conf.d and /etc/storaged.conf.d, as systemd layers its own
 * configuration (systemd.syntax(7)); any other @path has @path.d only;
 * $STORAGED_CONFIG_DIRS (':'-separated, lowest first) replaces either.  A
 * drop-in of a higher layer replaces the one of the same name below it; a
 * link to /dev/null masks it (the one link accepted).  No file or
 * directory is reached through a symbolic link.
 *
 * Returns: 0; -ENOENT when there is no file at all (nothing appended);
 * the first of @fn's errors, -EPERM (owner or mode), -ELOOP (a link) or
 * another negative errno from reading (each appended to @diags).
 */
int config_visit(const char *path, bool check_owner, config_visit_fn fn, void *userdata,
		 struct diag_list *diags);

/*
 * @c: config initialised by config_init()
 * @path: main file, read with its drop-ins as config_visit() lists them;
 *        @c->file is set to @path when that file was read
 * @check_owner: as for config_visit()
 *
 * Returns: 0; -ENOENT when there is no file at all (nothing appended);
 * -EINVAL when errors were appended; other errors as config_visit().
 */
int config_load(struct config *c, const char *path, bool check_owner, struct diag_list *diags);

/*
 * Reads @path (at most 4 MiB, a regular file) as the main config file is
 * read: not through a symbolic link in any component, and with
 * @check_owner from a root-owned directory group and others cannot write
 * (one everyone may write to, as /tmp, is refused too); then calls
 * fstab_parse_buf().
 *
 * Returns: as fstab_parse_buf(); negative errno from input_read_at()
 * (appended to @diags with the path).
 */
int fstab_load(struct fstab *ret, const char *path, char *const *select, bool check_owner,
	       struct diag_list *diags);

/*
 * As fstab_load(), through fstab_parse_buf_all(): on -EINVAL from the
 * parser @ret holds every line, the refused ones too (free it with
 * fstab_done()).  A file that cannot be read fills nothing.
 */
int fstab_load_all(struct fstab *ret, const char *path, char *const *select, bool check_owner,
		   struct diag_list *diags);

/*
 * @path: storaged.conf, read with its drop-ins (config_load())
 * @c: initialised by config_init(); filled as config_load() fills it
 * @dl: every problem appended, FILE:LINE
 *
 * The configuration as the commands besides start read it (sync, the
 * resident's periodic syncs and area watch, the metrics, status): as
 * for start, an error within one [area] or [btrfs] section refuses that
 * section alone (its .refused set, by refuse.c's one classification)
 * and the rest is used.
 *
 * Returns: 0; -ENOENT (no file at all); -EINVAL when an error lies
 * within no section (the configuration as a whole cannot be used);
 * other negative errno as config_load().
 */
int world_load_settings(const char *path, struct config *c, struct diag_list *dl);

/*
 * @path, @select: as fstab_load()
 * @ret: filled on success, each line with an error refused alone
 *       (fstab_entry.refused set; free with fstab_done())
 *
 * The fstab as the generator reads it: an error of one line refuses that
 * line alone (refuse.c), as at start.  Errors only the planner finds
 * (a second line on a mount point through a symbolic link) are not
 * looked for.
 *
 * Returns: 0; negative errno when the file cannot be read (appended to
 * @dl; nothing filled).
 */
int world_load_fstab(const char *path, char *const *select, struct fstab *ret, struct diag_list *dl);

#endif
