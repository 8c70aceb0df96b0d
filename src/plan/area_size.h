/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Sizing of RAM areas (pure): from the config and a survey of the directory
 * to the size= and nr_inodes= the area gets, and whether the seed fits.
 */
#ifndef STORAGED_AREA_SIZE_H
#define STORAGED_AREA_SIZE_H

#include <stdbool.h>
#include <stdint.h>

#include "parse/config.h"

/*
 * The geometry of ext2/3/4 on a ramdisk (mkfs.ext4 -b, -I, -m): sized for
 * here, passed to mkfs by area_backend.c.
 */
#define AREA_EXT_BLOCK_SIZE 4096 /* bytes */
#define AREA_EXT_INODE_SIZE 256 /* bytes */
#define AREA_EXT_RESERVED_PERCENT 0 /* blocks reserved for root */

/* What one walk of an area's directory found (hard links counted once). */
struct area_survey {
	uint64_t bytes; /* allocated bytes of the tree (st_blocks × 512) */
	uint64_t inodes; /* files + directories + symlinks + others, incl. the root */
	bool valid; /* false when the directory could not be walked */
	int error; /* negative errno when !valid */
};

struct area_sizing {
	uint64_t size_bytes; /* size= of the area, bytes */
	uint64_t nr_inodes; /* nr_inodes= of the area (tmpfs) or inode count (mkfs) */
	char size_how[96]; /* e.g. "12800M (configured)", "auto: 1.2G × 2.0" */
	char inodes_how[96]; /* e.g. "300000 (auto: 142311 entries × 2.0)" */
	bool fits; /* seed fits in bytes and inodes */
	char why[256]; /* when !fits: which limit is short and by how much */
};

/*
 * @survey: the survey of the directory the area covers: auto sizes are
 *          what it holds times headroom, and with a->seed the seed must
 *          fit; NULL when not surveyed
 * @ram_bytes: MemTotal, bytes (for N% sizes)
 *
 * Pure.  Returns: 0; -EINVAL when a size cannot be resolved (survey missing
 * for auto).
 */
int area_size_resolve(const struct area_config *a, const struct area_survey *survey,
		      uint64_t ram_bytes, struct area_sizing *ret);

#endif
