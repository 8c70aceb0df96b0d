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
#include <string.h>
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

/* The tree block at byte @offset of the device into a new buffer of
 * sb->nodesize bytes (*@ret, freed by the caller).  Returns: 0; negative
 * errno. */
static int read_block_at(int fd, const struct btrfs_sb_info *sb, uint64_t offset, uint8_t **ret)
{
	uint8_t *buf;
	ssize_t n;
	int r;

	if (offset > (uint64_t)INT64_MAX)
		return -EINVAL;
	buf = malloc(sb->nodesize);
	if (!buf)
		return -ENOMEM;
	do
		n = pread(fd, buf, sb->nodesize, (off_t)offset);
	while (n < 0 && errno == EINTR);
	r = n < 0 ? -errno : (size_t)n < sb->nodesize ? -ENODATA : 0;
	if (r < 0)
		free(buf);
	else
		*ret = buf;
	return r;
}

/* One chunk tree block at @logical from this device into @sb's list of
 * devices; its children (of a node) onto @queue; with @map, the stripes of
 * a leaf's chunks of tree blocks on this device appended at *@n_map.
 * Returns: 0; negative errno (-ENOENT: not on this device). */
static int read_chunk_block(int fd, struct btrfs_sb_info *sb, uint64_t logical, uint8_t want_level,
			    uint64_t *queue, size_t *n_queue, size_t cap, uint8_t *levels,
			    struct btrfs_sb_stripe *map, size_t *n_map)
{
	struct btrfs_chunk_block blk;
	uint64_t offset;
	uint8_t *buf = NULL;
	int r;

	r = btrfs_sb_map_sys(sb, logical, sb->nodesize, sb->devid, sb->dev_uuid, &offset);
	if (r == 0)
		r = read_block_at(fd, sb, offset, &buf);
	if (r < 0)
		return r;
	r = btrfs_chunk_block_parse(buf, sb->nodesize, sb, logical, &blk);
	if (r == 0 && map)
		r = btrfs_chunk_block_stripes(buf, sb->nodesize, sb, map, BTRFS_CHUNK_MAP_MAX, n_map);
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

/* The whole chunk tree of this device: its device items into @sb->devs;
 * with @map, the stripes of its chunks of tree blocks on this device. */
static int read_chunk_tree(int fd, struct btrfs_sb_info *sb, struct btrfs_sb_stripe *map, size_t *n_map)
{
	uint64_t queue[CHUNK_TREE_MAX_BLOCKS];
	uint8_t levels[CHUNK_TREE_MAX_BLOCKS];
	size_t n = 0;
	int r = 0;

	sb->n_devs = 0;
	if (sb->nodesize < 4096 || sb->nodesize > 65536)
		return -EINVAL;
	queue[n] = sb->chunk_root;
	levels[n++] = sb->chunk_root_level;
	for (size_t i = 0; i < n && r >= 0; i++)
		r = read_chunk_block(fd, sb, queue[i], levels[i], queue, &n, CHUNK_TREE_MAX_BLOCKS, levels, map,
				     n_map);
	return r;
}

int inventory_read_btrfs_devs(int fd, struct btrfs_sb_info *sb)
{
	int r;

	sb->devs_from_tree = false;
	r = read_chunk_tree(fd, sb, NULL, NULL);
	if (r < 0) {
		sb->n_devs = 0;
		return r;
	}
	sb->devs_from_tree = true;
	return 0;
}

/* The item of @key in the tree whose root block is at @root (level
 * @level, owned by @owner), copied into @item (@cap bytes; *@ret_size
 * set).  Tree blocks are read through @map (read_chunk_tree()). */
static int tree_lookup(int fd, const struct btrfs_sb_info *sb, const struct btrfs_sb_stripe *map, size_t n_map,
		       uint64_t root, uint8_t level, uint64_t owner, const struct btrfs_tree_key *key, uint8_t *item,
		       size_t cap, size_t *ret_size)
{
	uint64_t logical = root;
	int r = -EINVAL;

	for (int depth = 0; depth <= level; depth++) {
		struct btrfs_tree_hit hit;
		uint64_t offset;
		uint8_t *buf = NULL;

		r = btrfs_stripes_map(map, n_map, logical, sb->nodesize, sb->devid, sb->dev_uuid, &offset);
		if (r < 0)
			r = btrfs_sb_map_sys(sb, logical, sb->nodesize, sb->devid, sb->dev_uuid, &offset);
		if (r == 0)
			r = read_block_at(fd, sb, offset, &buf);
		if (r == 0)
			r = btrfs_tree_block_search(buf, sb->nodesize, sb, logical, owner, key, &hit);
		if (r == 0 && hit.level != level - depth)
			r = -EINVAL;
		if (r == 0 && hit.level == 0) {
			*ret_size = hit.item_size < cap ? hit.item_size : cap;
			memcpy(item, buf + hit.item_off, *ret_size);
		}
		free(buf);
		if (r < 0 || hit.level == 0)
			return r;
		logical = hit.child;
	}
	return r;
}

int inventory_read_btrfs_replace(int fd, const struct btrfs_sb_info *member, uint64_t *ret_src_devid,
				 uint64_t *ret_state)
{
	static const struct btrfs_tree_key dev_root = { BTRFS_DEV_TREE_OBJECTID, BTRFS_ROOT_ITEM_KEY, 0 };
	static const struct btrfs_tree_key replace = { 0, BTRFS_DEV_REPLACE_KEY, 0 };
	struct btrfs_sb_stripe *map = calloc(BTRFS_CHUNK_MAP_MAX, sizeof(*map));
	struct btrfs_sb_info *sb = malloc(sizeof(*sb));
	uint8_t item[256];
	uint64_t bytenr = 0;
	uint8_t level = 0;
	size_t n_map = 0, size = 0;
	int r = map && sb ? 0 : -ENOMEM;

	if (r == 0) {
		*sb = *member; /* read_chunk_tree() refills its device list */
		r = read_chunk_tree(fd, sb, map, &n_map);
	}
	if (r == 0)
		r = tree_lookup(fd, sb, map, n_map, sb->root, sb->root_level, BTRFS_ROOT_TREE_OBJECTID, &dev_root,
				item, sizeof(item), &size);
	if (r == 0)
		r = btrfs_root_item_parse(item, size, &bytenr, &level);
	if (r == 0)
		r = tree_lookup(fd, sb, map, n_map, bytenr, level, BTRFS_DEV_TREE_OBJECTID, &replace, item,
				sizeof(item), &size);
	if (r == 0)
		r = btrfs_dev_replace_item_parse(item, size, ret_src_devid, ret_state);
	free(map);
	free(sb);
	return r;
}
