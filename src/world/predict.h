/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Predictions: the failures start would meet that can be known before it
 * runs, one rule per row of predict.c's rules[].  Run after plan_build(),
 * by world_load(): --dry-run and check show each as a step that will fail,
 * and exit 1.  The executor does not act on them (start meets the failure
 * itself, with the same reason).
 */
#ifndef STORAGED_PREDICT_H
#define STORAGED_PREDICT_H

#include <stdbool.h>
#include <sys/types.h>

#include "plan/plan.h"
#include "shared/sysinfo.h"
#include "shared/util.h"

#define PREDICT_FILESYSTEMS "/proc/filesystems"

struct predict_sources {
	/* a /proc/filesystems-format file; NULL: /proc/filesystems and the
	 * "alias fs-TYPE" lines of /lib/modules/$(uname -r)/modules.alias
	 * (types the kernel loads a module for).  A test's file is the
	 * whole list. */
	const char *filesystems_path;
	const char *helper_dirs; /* ':'-separated; NULL: MOUNT_HELPER_DIRS (spawn_helper.h) */
	struct sysinfo_memory mem; /* all 0: unknown, no memory prediction */
	bool system_paths; /* the plan's paths are this machine's (the mount
			      table is not a test's): check mount points */
};

struct predictions {
	char **why; /* owned strings, one per prediction */
	size_t n;
};

/*
 * @in: the inputs the plan was built from
 * @ps: where to look
 * @p: the plan; each step start will fail gets ->predicted
 * @ret: owns the reasons; free with predictions_done() after @p is
 *       done with them
 *
 * Only steps that are neither done, left for later, nor already in
 * conflict get a prediction; a step that waits on one that will fail gets
 * PLAN_PREDICTED_SKIP "waits on step N, which will fail" (start skips
 * it, and counts it apart from the failures: plan_step_predicted_skip()).
 *
 * Returns: the number of steps predicted to fail, skips left out, or
 * -ENOMEM.
 */
int predict_plan(const struct plan_input *in, const struct predict_sources *ps, struct plan *p,
		 struct predictions *ret);

/*
 * @c: a loaded configuration
 * @ps: where to look (filesystems_path)
 * @dl: one error per zram or brd area whose "fs =" names a type the
 *      kernel cannot mount from a device, at that line; else, for a zram
 *      area whose fs has no online discard, a warning there
 *
 * The kernel's types as predict.c reads them: /proc/filesystems
 * without nodev, else a module of modules.alias.  A type that cannot be
 * read is no error (nothing to tell).
 *
 * Returns: 0 (errors are in @dl); -ENOMEM.
 */
int predict_area_fstypes(const struct config *c, const struct predict_sources *ps, struct diag_list *dl);

/*
 * @uid, @gid, @mode: the owner and st_mode of what an entry mounts (a
 *                    loop image, a block device) or an area writes back to
 * @nosuid, @nodev: whether the mount has them
 *
 * Pure.  Whoever can write the bytes of a filesystem decides what is in
 * it: a set-user-ID root shell, a device node of the disks.  Mounted
 * without nosuid (or nodev), such a file gives its writer root.  Writers
 * are the owner when not root, everyone for a mode others may write, and
 * the group for a regular file it may write (a block device's group,
 * "disk", can write every disk already).
 *
 * Returns: what the mount lacks while a user other than root can write
 * the source: "nosuid,nodev", "nosuid" or "nodev" (static); NULL when
 * nothing (only root writes it, or both are set).
 */
const char *predict_user_source_lacks(uid_t uid, gid_t gid, mode_t mode, bool nosuid, bool nodev);

/*
 * Frees the reasons @pp owns (the plan's steps borrow them).  Accepts a
 * zeroed struct.
 */
void predictions_done(struct predictions *pp);

/*
 * @buf: /proc/filesystems text ("nodev\tproc\n\text4\n"), NUL-terminated
 * @types: strv the type names are appended to (nodev ones too)
 * @dev_types: strv the names of the types without "nodev" (they mount a
 *             block device) are appended to; may be NULL
 *
 * Pure.  Returns: 0 or -ENOMEM.
 */
int predict_parse_filesystems_buf(const char *buf, char ***types, char ***dev_types);

/*
 * @buf: a zram device's comp_algorithm ("lzo [lzo-rle] lz4 zstd\n": the
 *       compressors built in, the current one in brackets;
 *       drivers/block/zram/zcomp.c zcomp_available_show()), NUL-terminated
 * @names: strv the names, without brackets, are appended to
 *
 * Pure.  Returns: 0 or -ENOMEM.
 */
int predict_parse_zram_compressors_buf(const char *buf, char ***names);

/*
 * @buf: modules.alias text (modprobe.d(5) "alias fs-xfs xfs" lines)
 * @types: strv the TYPE of each "alias fs-TYPE" is appended to
 *
 * Pure.  Returns: 0 or -ENOMEM.
 */
int predict_parse_modules_alias_buf(const char *buf, char ***types);

/*
 * @fstype: an fstab type: "ext4", "fuse.sshfs" (its main type counts, as
 *          libmount and the kernel take it) or a list "ext4,xfs" (any one)
 *
 * Pure.  Returns: true when @fstype names a type in @types.
 */
bool predict_fstype_in(const char *fstype, char *const *types);

#endif
