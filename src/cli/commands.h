/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The subcommands, one file each (cmd_<name>.c).  Each cmd_* returns the
 * process exit status, the same for every command (EXIT_*, invocation.h).
 * The helpers below them return negative errno; only a cmd_* maps to an
 * exit status.
 */
#ifndef STORAGED_COMMANDS_H
#define STORAGED_COMMANDS_H

#include <stdbool.h>
#include <stdio.h>

#include "shared/invocation.h"
#include "shared/log.h"
#include "parse/fstab.h"

/* cmd_start.c: plan and run (or print the plan with --dry-run: exit 1 when
 * it shows a step that will fail); then stay resident if asked. */
int cmd_start(const struct options *o, const struct logger *lg);
/* cmd_start.c: "1 area set up" or "2 areas set up" (@one, @many), appended
 * to @buf (@len bytes) after a comma when it is not the first; nothing for
 * 0: the closing lines of start and stop count only what is not zero. */
void add_count(char *buf, size_t len, unsigned n, const char *one, const char *many);
/* cmd_stop.c: undo what the state records, newest first; one closing line
 * counts what was undone (none when nothing was). */
int cmd_stop(const struct options *o, const struct logger *lg);
/* cmd_report.c: true (logged, with advice) when --state-dir named a
 * directory that does not exist: a typo until shown otherwise, while the
 * default one missing means storaged set nothing up yet. */
bool state_dir_missing(const struct options *o, const struct logger *lg);
/* cmd_report.c: btrfs filesystems, members present/expected. */
int cmd_scan(const struct options *o, const struct logger *lg);
/* cmd_report.c: what storaged set up, what is pending or failed. */
int cmd_status(const struct options *o, const struct logger *lg);
/* cmd_report.c: the columns of status and scan for --help, what each
 * shows, the default ones marked. */
void report_columns_usage(FILE *out);
/* cmd_check.c: load and plan, change nothing, list every problem. */
int cmd_check(const struct options *o, const struct logger *lg);
/* cmd_check.c: print each configuration file in effect (config_visit()),
 * its name first, as systemd-analyze cat-config does; exit status 2 when
 * one cannot be read or is refused, 1 when check rejects what they say
 * (the errors logged after the text). */
int cmd_cat_config(const struct options *o, const struct logger *lg);
/* cmd_sync.c: copy a RAM area (o->arg), or every active persist area
 * (o->arg NULL), back into its directory.  Exit status 1 when any failed. */
int cmd_sync(const struct options *o, const struct logger *lg);

/**
 * sync_due_areas:
 * @since_usec: CLOCK_MONOTONIC µs from which an area not synced in this
 *              boot counts (when the resident began)
 * @ret_next_sec: seconds until the next area is due; 0 when none has a
 *                sync-interval
 *
 * Syncs back, as `storaged sync NAME` does, every active persist area
 * whose sync-interval has passed since its last sync, on the monotonic
 * clock (sync_due.h: a wall-clock step moves no sync; a failure is logged
 * at error level, recorded, and tried again an interval later).
 * An area whose section is gone, or all of them while the configuration
 * cannot be used, goes by the sync-interval it was set up with.
 * Returns: 0; negative errno when the areas cannot be read (nothing
 * synced).
 */
int sync_due_areas(const struct options *o, const struct logger *lg, uint64_t since_usec, uint64_t *ret_next_sec);
/*
 * cmd_generator.c: drop-ins ordering the RAM areas' mounts, and the units
 * of x-systemd.automount entries.
 */
int cmd_systemd_generator(const struct options *o, const struct logger *lg);

/**
 * unit_name_from_path:
 * @path: absolute path
 * @suffix: unit type suffix, e.g. ".mount"
 * @ret: the unit name systemd gives the mount on @path (owned by the
 *       caller), set only on success
 *
 * Escapes as systemd.unit(5) "String Escaping for Inclusion in Unit Names"
 * does for paths (systemd-escape --path): redundant slashes dropped, the
 * leading and trailing ones removed, "/" becomes "-", and every byte other
 * than [A-Za-z0-9:_.] (or a leading ".") becomes "\xNN"; "/" alone is "-".
 *
 * Returns: 0, -EINVAL for a relative path, -ENOMEM.
 */
int unit_name_from_path(const char *path, const char *suffix, char **ret);

/**
 * generator_automount_unit:
 * @f: where the unit's text goes
 * @fstab_file: the fstab @e is from (SourcePath=, and the comment's FILE:LINE)
 * @e: an entry that says x-systemd.automount
 *
 * The .automount unit of @e's mount point: Where=, and TimeoutIdleSec=
 * from x-systemd.idle-timeout= as written (systemd.automount(5)).
 *
 * Returns: 0; -EINVAL when a path or option holds a control character
 * (a decoded \012: no unit file can say it); -EIO when @f failed.
 */
int generator_automount_unit(FILE *f, const char *fstab_file, const struct fstab_entry *e);

/**
 * generator_mount_unit:
 * The .mount unit that @e's .automount starts (systemd.mount(5)): What=,
 * Where=, Type= (none for "auto"), Options= (the options storaged hands
 * to mount(8), with _netdev), TimeoutSec= from the mount timeout as
 * written.  Arguments and returns as generator_automount_unit().
 */
int generator_mount_unit(FILE *f, const char *fstab_file, const struct fstab_entry *e);

/**
 * generator_write_automounts:
 * @dir: the generator's output directory (systemd.generator(7) "normal")
 * @fstab: storaged's entries, from an fstab systemd-fstab-generator does
 *         not read (for /etc/fstab that generator writes these units)
 *
 * For each entry that says x-systemd.automount and is not refused
 * (world_load_fstab()): DIR/UNIT.mount,
 * DIR/UNIT.automount, and the .automount in local-fs.target's (remote-fs
 * for a network entry) .requires, or .wants with nofail.  A unit already
 * there is another generator's and is left alone (logged).
 *
 * Returns: 0; -EIO when a unit of some entry could not be written (each
 * logged with FILE:LINE).
 */
int generator_write_automounts(const struct logger *lg, const char *dir, const struct fstab *fstab);

#endif
