/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fstab(5) through libmount: which entries are deferred (handed to storaged
 * by a select option) and what their x-storaged.* / x-systemd.* options say.
 */
#ifndef STORAGED_FSTAB_H
#define STORAGED_FSTAB_H

#include <errno.h>
#include <stdbool.h>
#include <sys/types.h>
#include <stdint.h>

#include "shared/diag.h"
#include "fsfacts.h"

/* One path an entry uses besides its mount point (ordering rule 2): it
 * waits for whatever entry or area lies above it. */
struct fstab_path {
	const char *option; /* static: "lowerdir", "upperdir", "workdir",
			       "datadir", "loop", "bind", "image file",
			       "credentials", "source" (a FUSE or eCryptfs
			       source directory), "branch" (a union
			       filesystem's) or "x-systemd.requires-mounts-for" */
	char *path; /* owned: absolute, normalised (path_normalize()) */
	bool glob; /* @path is a glob(7) pattern (a mergerfs branch such as
		      "/mnt/disk*"): it waits for every mount point it matches */
};

/* One requires= value and the option that gave it, for messages. */
struct fstab_require {
	const char *option; /* static: "x-storaged.requires", "x-systemd.requires",
			       "x-systemd.after", "x-systemd.before",
			       "x-systemd.requires-mounts-for" or
			       "x-systemd.wants-mounts-for" */
	char *value; /* owned: unquoted */
	bool before; /* x-systemd.before=: @value waits for this entry, not
			this entry for @value */
};

struct fstab_entry {
	unsigned line; /* 1-based line in the fstab file */
	char *source; /* fs_spec, octal escapes decoded: "UUID=…", "/dev/sdb1", "tmpfs" */
	char *target; /* fs_file, decoded, absolute and normalised */
	char *fstype; /* fs_vfstype ("auto" when absent) */
	char *options; /* fs_mntops exactly as written (escapes decoded) */
	char *mount_options; /* fs_mntops minus select options, noauto, nofail,
				x-storaged.*, x-systemd.*; NULL when empty */
	bool nofail; /* a failure does not count against the exit status */
	bool bind; /* bind or rbind: @source is a path */
	bool rbind; /* rbind: the mounts below @source come along */
	bool loop; /* loop option: @source is an image file path */
	bool mkdir; /* X-mount.mkdir[=mode] (libmount creates the target) */
	bool degraded_ok; /* x-storaged.degraded */
	bool rw_only; /* x-systemd.rw-only: a write-protected device fails the
			 mount instead of being mounted read-only (mount -w) */
	bool remote; /* needs the network: a network filesystem type
			(mnt_fstype_is_netfs, ceph, davfs, sshfs, ...) or
			x-storaged.remote; not _netdev alone (see fsfacts.h) */
	struct fstab_require *requires; /* mount points, tags or units this
					   entry waits for, in option order;
					   NULL when none */
	size_t n_requires;
	uint64_t device_timeout_usec; /* USEC_UNSET: use the config's */
	uint64_t mount_timeout_usec; /* USEC_UNSET: use the config's */
	bool netdev; /* _netdev, or a device path of a network block device
			(fsfacts_spec_on_network()): an absent device may come
			only after the network (start --local leaves it for
			later) */
	struct fstab_path *paths; /* every path the entry uses besides its
				     mount point, in option order; NULL when
				     none (fstab_paths.c) */
	size_t n_paths;
	/* A line the boot refuses (an error confined to it): what is wrong,
	 * every error of the line, "FILE:LINE: message; ..." (owned), and
	 * "FILE:LINE", the name its failure is recorded under; NULL when
	 * the line is not refused.  The parser never sets them: the loader
	 * does (world/refuse.c), for start, which fails that line alone. */
	char *refused;
	char *refused_at;
};

/* A line another tool owns (swap, "ignore", a "none" type that is no
 * bind): read, left alone, and noted for `check` and -v. */
struct fstab_skipped {
	unsigned line;
	char *why; /* owned */
};

struct fstab {
	char *file; /* path used in diagnostics */
	struct fstab_entry *entries; /* deferred entries only, in file order */
	size_t n_entries;
	size_t n_total; /* all valid entries in the file, deferred or not */
	struct fstab_skipped *skipped; /* selected lines left to other tools */
	size_t n_skipped;
};

/*
 * @ret: filled on success (caller frees with fstab_done())
 * @filename: name used in diagnostics and stored in @ret->file
 * @select: strv of options that mark an entry as storaged's; NULL means the
 *          default { "x-storaged", "_netdev" }
 * @diags: every problem appended as "filename:line: message"
 *
 * Each line is handed to libmount's fstab parser on its own so that line
 * numbers are exact.  Mount points and local source paths are normalised
 * as mount(8) takes them (path_normalize(): "/raid/" is "/raid").
 * Selected lines that other tools own (swap, type "ignore", "none" without
 * bind, a user's noauto line) are left out of @ret->entries and listed in
 * @ret->skipped, never an error.  Errors: malformed lines (whatever their
 * options say, nofail included), relative mount points or ones with "..",
 * two deferred entries on one mount point, bad values of storaged's own
 * options (e.g. "x-storaged.device-timeout=soon").
 *
 * Strict: on any error @ret is left untouched, so a caller refuses to act.
 * Errors already in @diags do not count.  x-storaged.* options on a
 * line without a select option add a warning only.
 *
 * Returns: 0; -EINVAL when at least one error was appended; -ENOMEM.
 */
int fstab_parse_buf(struct fstab *ret, const char *text, size_t len, const char *filename,
		    char *const *select, struct diag_list *diags);

/*
 * As fstab_parse_buf(), but on -EINVAL @ret is filled all the same (free
 * it with fstab_done()), with an entry for each line that has an error,
 * in file order among the others: what libmount could read of it, or
 * for a line it could not read its raw fields (mount point "-" unless
 * the second field is an absolute path).  For a boot that refuses the
 * bad lines one by one and mounts the rest (world/refuse.c).
 *
 * Returns: as fstab_parse_buf().
 */
int fstab_parse_buf_all(struct fstab *ret, const char *text, size_t len, const char *filename,
			char *const *select, struct diag_list *diags);

/*
 * Frees everything @f owns.  Accepts a zeroed struct.
 */
void fstab_done(struct fstab *f);

/*
 * @e: an entry whose source, fstype, options and requires are filled
 *
 * Fills @e->paths (fstab_paths.c): each overlay layer (lowerdir=, split at
 * ':' as the kernel does, "\" escaping the next character; lowerdir+=,
 * datadir+=), upperdir=, workdir=; the source of a bind or loop entry and
 * a regular-file source (a path outside /dev of a type on a block device,
 * which mount(8) loop-mounts); cifs's credentials= file; the source
 * directory of a FUSE or eCryptfs entry, each branch of mergerfs, unionfs
 * and mhddfs (a glob(7) pattern marked @glob); x-systemd.requires-mounts-for=
 * values.  Relative paths are skipped (the kernel takes them from
 * mount(8)'s working directory).
 *
 * Returns: 0 or -ENOMEM.
 */
int fstab_entry_collect_paths(struct fstab_entry *e);

/*
 * @pattern: an absolute glob(7) pattern ("/mnt/disk*")
 *
 * Returns: the length in bytes of the directory the pattern's first
 * component with a wildcard lies in ("/mnt": 4; "/d*": 1, the root).
 */
size_t fstab_glob_dir_len(const char *pattern);

/*
 * @name: the name of an option of an entry's mount_options (without its
 *        "=value"), @len bytes, not NUL-terminated
 *
 * Whether the mount gets the option.  libmount's userspace map (util-linux
 * libmount/src/optmap.c, 2.38 to 2.40) marks x-*, X-* and comment= as
 * comments (MNT_NOHLPS): neither mount(2) nor a mount helper gets them,
 * and storaged hands a helper no X-mount.* (mount_helper_options()).
 * libmount or storaged act on some (X-mount.mkdir makes the mount point),
 * so they stay in mount_options; what the plan shows as passed to
 * mount leaves them out.
 *
 * Pure.  Returns: false for those comments, true for every other option.
 */
bool fstab_option_is_passed(const char *name, size_t len);

#endif
