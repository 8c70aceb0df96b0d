/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the inventory reads of a btrfs device itself: the primary superblock
 * and, from the device's own copy, the chunk tree's device items (the
 * filesystem's record of its devices).  The bytes are parsed by
 * parse/btrfs_sb.c.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "inventory.h"

int inventory_read_btrfs_sb(int fd, struct btrfs_sb_info *ret)
{
	uint8_t buf[BTRFS_SB_SIZE];
	size_t got = 0;

	while (got < sizeof(buf)) {
		ssize_t n = pread(fd, buf + got, sizeof(buf) - got, BTRFS_SB_OFFSET + (off_t)got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) /* 0: the device ends first, so it holds none */
			return n < 0 ? -errno : -ENODATA;
		got += (size_t)n;
	}
	return btrfs_sb_parse(buf, sizeof(buf), ret);
}

/* One chunk tree block at @logical from this device into @sb's list of
 * devices; its children (of a node) onto @queue.  Returns: 0; negative
 * errno (-ENOENT: not on this device). */
static int read_chunk_block(int fd, struct btrfs_sb_info *sb, uint64_t logical, uint8_t want_level,
			    uint64_t *queue, size_t *n_queue, size_t cap, uint8_t *levels)
{
	struct btrfs_chunk_block blk;
	uint64_t offset;
	uint8_t *buf;
	ssize_t n;
	int r;

	r = btrfs_sb_map_sys(sb, logical, sb->nodesize, sb->devid, sb->dev_uuid, &offset);
	if (r < 0)
		return r;
	if (offset > (uint64_t)INT64_MAX)
		return -EINVAL;
	buf = malloc(sb->nodesize);
	if (!buf)
		return -ENOMEM;
	do
		n = pread(fd, buf, sb->nodesize, (off_t)offset);
	while (n < 0 && errno == EINTR);
	r = n < 0 ? -errno : (size_t)n < sb->nodesize ? -ENODATA : 0;
	if (r == 0)
		r = btrfs_chunk_block_parse(buf, sb->nodesize, sb, logical, &blk);
	free(buf);
	if (r < 0)
		return r;
	if (blk.level != want_level)
		return -EINVAL;
	if (blk.n_children > cap - *n_queue)
		return -E2BIG;
	for (size_t i = 0; i < blk.n_children; i++) {
		levels[*n_queue] = (uint8_t)(blk.level - 1);
		queue[(*n_queue)++] = blk.children[i];
	}
	return 0;
}

/* Blocks of the chunk tree read at most: a root and its leaves, ~100 device
 * items and thousands of chunk items at a 16 KiB nodesize. */
#define CHUNK_TREE_MAX_BLOCKS 64

int inventory_read_btrfs_devs(int fd, struct btrfs_sb_info *sb)
{
	uint64_t queue[CHUNK_TREE_MAX_BLOCKS];
	uint8_t levels[CHUNK_TREE_MAX_BLOCKS];
	size_t n = 0;
	int r = 0;

	sb->n_devs = 0;
	sb->devs_from_tree = false;
	if (sb->nodesize < 4096 || sb->nodesize > 65536)
		return -EINVAL;
	queue[n] = sb->chunk_root;
	levels[n++] = sb->chunk_root_level;
	for (size_t i = 0; i < n && r >= 0; i++)
		r = read_chunk_block(fd, sb, queue[i], levels[i], queue, &n, CHUNK_TREE_MAX_BLOCKS, levels);
	if (r < 0) {
		sb->n_devs = 0;
		return r;
	}
	sb->devs_from_tree = true;
	return 0;
}
