/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Fuzz target: btrfs_sb_parse() on a BTRFS_SB_SIZE (4096-byte) buffer.
 *
 * The first 4096 input bytes fill the buffer (zero-padded when shorter).  A
 * 4097th byte with bit 0 set asks for a valid crc32c to be written over the
 * checksum field (csum_type crc32c), so that the fuzzer reaches the field
 * and sys_chunk_array checks behind the checksum, which it could not guess.
 *
 * Contract checked (btrfs_sb.h): 0, -EINVAL or -EBADMSG; @ret set only on
 * success; on success num_devices >= 1 (devid 0 is a replace target), sys_devids sorted,
 * unique, non-zero and at most BTRFS_SB_MAX_SYS_DEVIDS, fsid_str and label
 * NUL-terminated.
 *
 * The same bytes are then a chunk tree block of a 4096-byte nodesize
 * (btrfs_chunk_block_parse(), at the bytenr its header claims; the
 * checksum fix covers it too): 0, -EINVAL, -EBADMSG or -E2BIG; never more
 * devices or children than kept, and device items with devid >= 1; its
 * chunk stripes (btrfs_chunk_block_stripes()) never more than asked for;
 * and a search of it for the device tree's replace item
 * (btrfs_tree_block_search()) returns 0, -ENOENT, -EINVAL or -EBADMSG,
 * an item found lying inside the block.
 */
#include <errno.h>
#include <string.h>

#include "parse/btrfs_sb.h"
#include "fuzz.h"

/* Little endian, as btrfs stores it, whatever the host. */
static void fix_csum(uint8_t *sb)
{
	uint32_t c;

	sb[196] = sb[197] = 0; /* csum_type: crc32c */
	c = btrfs_sb_crc32c(sb + 32, BTRFS_SB_SIZE - 32);
	for (int i = 0; i < 4; i++)
		sb[i] = (uint8_t)(c >> (8 * i));
}

static void check_info(const struct btrfs_sb_info *info)
{
	fuzz_assert(info->num_devices >= 1);
	fuzz_assert(memchr(info->fsid_str, '\0', sizeof(info->fsid_str)));
	fuzz_assert(strlen(info->fsid_str) == 36);
	fuzz_assert(memchr(info->label, '\0', sizeof(info->label)));
	fuzz_assert(info->n_sys_devids <= BTRFS_SB_MAX_SYS_DEVIDS);
	for (size_t i = 0; i < info->n_sys_devids; i++) {
		fuzz_assert(info->sys_devids[i] != 0);
		fuzz_assert(i == 0 || info->sys_devids[i] > info->sys_devids[i - 1]);
	}
}

static void check_tree_search(const uint8_t *blk, const struct btrfs_sb_info *ci, uint64_t bytenr)
{
	static const struct btrfs_tree_key key = { 0, BTRFS_DEV_REPLACE_KEY, 0 };
	struct btrfs_sb_stripe map[BTRFS_CHUNK_MAP_MAX];
	struct btrfs_tree_hit hit;
	size_t n = 0;
	int r;

	r = btrfs_chunk_block_stripes(blk, BTRFS_SB_SIZE, ci, map, BTRFS_CHUNK_MAP_MAX, &n);
	fuzz_assert((r == 0 || r == -EINVAL) && n <= BTRFS_CHUNK_MAP_MAX);
	r = btrfs_tree_block_search(blk, BTRFS_SB_SIZE, ci, bytenr, BTRFS_DEV_TREE_OBJECTID, &key, &hit);
	fuzz_assert(r == 0 || r == -ENOENT || r == -EINVAL || r == -EBADMSG);
	if (r == 0 && hit.level == 0)
		fuzz_assert(hit.item_off <= BTRFS_SB_SIZE && hit.item_size <= BTRFS_SB_SIZE - hit.item_off);
}

static void check_chunk_block(const uint8_t *blk)
{
	struct btrfs_sb_info *ci = calloc(1, sizeof(*ci));
	struct btrfs_chunk_block *out = calloc(1, sizeof(*out));
	uint64_t bytenr = 0;
	int r;

	if (!ci || !out)
		goto out;
	for (int i = 7; i >= 0; i--)
		bytenr = bytenr << 8 | blk[48 + i];
	ci->nodesize = BTRFS_SB_SIZE;
	r = btrfs_chunk_block_parse(blk, BTRFS_SB_SIZE, ci, bytenr, out);
	fuzz_assert(r == 0 || r == -EINVAL || r == -EBADMSG || r == -E2BIG);
	fuzz_assert(ci->n_devs <= BTRFS_SB_MAX_DEVS);
	for (size_t i = 0; i < ci->n_devs; i++)
		fuzz_assert(ci->devs[i].devid >= 1);
	if (r == 0)
		fuzz_assert(out->n_children <= BTRFS_CHUNK_TREE_MAX_CHILDREN && (out->level || !out->n_children));
	fuzz_assert(btrfs_chunk_block_parse(blk, BTRFS_SB_SIZE - 1, ci, bytenr, out) == -EINVAL);
	check_tree_search(blk, ci, bytenr);
out:
	free(ci);
	free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *sb = calloc(1, BTRFS_SB_SIZE); /* heap: ASan sees an overread */
	struct btrfs_sb_info info;
	int r;

	if (!sb)
		return 0;
	memcpy(sb, data, size < BTRFS_SB_SIZE ? size : BTRFS_SB_SIZE);
	if (size > BTRFS_SB_SIZE && (data[BTRFS_SB_SIZE] & 1))
		fix_csum(sb);
	memset(&info, 0xa5, sizeof(info));
	r = btrfs_sb_parse(sb, BTRFS_SB_SIZE, &info);
	fuzz_assert(r == 0 || r == -ENODATA || r == -EINVAL || r == -EBADMSG);
	if (r == 0) {
		check_info(&info);
	} else {
		for (size_t i = 0; i < sizeof(info); i++)
			fuzz_assert(((const uint8_t *)&info)[i] == 0xa5);
	}
	check_chunk_block(sb);
	/* Too short a buffer is refused, never read past. */
	fuzz_assert(btrfs_sb_parse(sb, BTRFS_SB_SIZE - 1, &info) == -EINVAL);
	free(sb);
	return 0;
}
