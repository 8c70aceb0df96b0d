/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What start checks before it sets an area up, made by the same code for
 * --dry-run and check (world/predict.c), so that the two cannot drift:
 * area_precheck(); and the mkfs command of a zram or brd area, run by
 * start and as a trial (mke2fs -n) by the predictor, so that --dry-run and
 * check meet mkfs's own refusal.
 */
#ifndef STORAGED_AREA_PRECHECK_H
#define STORAGED_AREA_PRECHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "parse/config.h"
#include "plan/area_size.h"
#include "shared/sysinfo.h"

/* "/sys/module/brd": Linux drivers/block/brd.c, built in or loaded */
#define AREA_BRD_SYSFS "/sys/module/brd"

/* seed = overlay: the inodes an area takes before anything is written in it,
 * at its first sync: its root, upper/, work/ and the work/work overlayfs
 * makes at mount, and storaged's sync stamp, the stamp's temporary and its
 * clock (area_overlay.c).  The mount needs a fifth free for the O_TMPFILE
 * it probes the upper filesystem with (fs/overlayfs/super.c; ENOSPC
 * without).  An ext area has its ten reserved inodes besides (area_size.c). */
#define AREA_OVERLAY_OWN_INODES 7U

struct area_mkfs {
	char prog[32]; /* "mkfs.ext4" */
	char inodes[24];
	char blocks[24];
	char *argv[24]; /* NULL-terminated; borrows the buffers above */
};

/*
 * @fs: the area's fs = ("ext4", "xfs", ...)
 * @nr_inodes: inodes asked for (mke2fs -N), ext only
 * @device: the block device, e.g. "/dev/zram1"
 * @trial_blocks: 0 for the real command; else a trial of a filesystem of
 *                that many 4 KiB blocks: mke2fs -n (e2fsprogs misc/mke2fs.c:
 *                computes the layout, writes nothing) on @device, which
 *                may be /dev/null.  ext only: others get no trial.
 *
 * The geometry is area_size.h's (block size, inode size, no reserve).
 */
void area_mkfs_init(struct area_mkfs *c, const char *fs, uint64_t nr_inodes, const char *device,
		    uint64_t trial_blocks);

/*
 * @argv: argv[0] a bare program name, found by spawn_find_program()
 * @err: the first line of its stderr that is no "warning: " (empty when none)
 *
 * Returns: 0 when it exits 0; -ENOENT when it is not installed; -EIO when
 * it fails; other negative errno from spawning it.
 */
int area_run_helper(char *const argv[], char *err, size_t errlen);

/*
 * @buf: "load it with 'modprobe brd ...' ..."
 * @size_bytes: the area's size; 0 when not known yet
 * Returns: @buf.
 */
char *area_brd_hint(char *buf, size_t len, uint64_t size_bytes);

/*
 * @sz: the area's size; NULL while it is not known (the predictor's
 *      deferred sizing): no memory check then
 * @mem: as sysinfo_memory() read it (all 0: unknown, no memory check)
 * @why: the reason of the first check that fails, for the user
 *       ("area 'NAME': ..."); untouched when all pass
 *
 * The checks area_setup() makes before it changes anything, in its order:
 * the size against RAM + swap (unless force = yes), the copy helper of a
 * seed or persist area (copy_spawn_find()), the brd driver of a brd area
 * (start loads no module), the directory of a seed = overlay area on no
 * overlay itself.  Called by start and by the predictor alike.
 *
 * Returns: 0; -ENOMEM above RAM + swap; copy_spawn_find()'s negative
 * errno; -ENODEV no brd driver; -EINVAL a directory on an overlay.
 */
int area_precheck(const struct area_config *a, const struct area_sizing *sz,
		  const struct sysinfo_memory *mem, char *why, size_t len);

#endif
