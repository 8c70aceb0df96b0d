/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Facts about the backends of an area (backend = tmpfs, zram, brd), one row
 * per backend, for the planner, the sizing and the renderers.  Strings only,
 * no I/O: what a backend does to the system (create it, release its kernel
 * resource) is the other half of its row, src/area/area_backend.c.  A new
 * backend is a row here and a row there (and storaged.conf(5)).
 */
#ifndef STORAGED_AREA_FACTS_H
#define STORAGED_AREA_FACTS_H

#include <stdbool.h>

#include "config.h"

struct area_backend_facts {
	const char *name; /* "backend = NAME" */
	/* the filesystem the backend is ("tmpfs"): mounted with the sizes as
	 * options, its limits exactly those; NULL: a ramdisk (a block device)
	 * with the area's "fs =" made on it by mkfs, its limits at most those */
	const char *fstype;
	/* the inode limit's name as the plan shows it: tmpfs's mount option,
	 * else the config key ("inodes", given to mkfs -N) */
	const char *inodes_key;
};

/*
 * Returns: the row of @b (static); NULL for a number outside enum
 * area_backend.  The other functions take a valid backend (config.c and
 * state_area.c accept no other).
 */
const struct area_backend_facts *area_backend_facts(enum area_backend b);

/*
 * Returns: the filesystem area @a is mounted as: its backend's own
 * ("tmpfs"), else @a->fs (borrowed; static or @a's).
 */
const char *area_fstype(const struct area_config *a);

/** area_is_ramdisk: true when @a's backend is a block device with an fs made by mkfs. */
bool area_is_ramdisk(const struct area_config *a);

/*
 * A zram device frees the memory of the blocks it is told are unused
 * (REQ_OP_DISCARD: drivers/block/zram/zram_drv.c zram_bio_discard()), so
 * a zram area is mounted with online discard, as zram-generator's
 * default "options = discard": deleting a file gives its RAM back, with
 * no fstrim(8).
 *
 * Returns: "discard" (static) for a zram area whose fs takes that mount
 * option; NULL for another backend, or an fs without online discard
 * (ext2: its deleted files' RAM stays in use until the area is stopped).
 */
const char *area_discard_option(const struct area_config *a);

/*
 * True for ext2, ext3 and ext4 (the geometry of area_size.c and mkfs.ext*
 * of area_backend.c), false for anything else and NULL.
 */
bool area_fstype_is_ext(const char *fstype);

#endif
