/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The btrfs superblock fields storaged needs, parsed from the on-disk bytes.
 * Layout: the btrfs on-disk format documentation (struct btrfs_super_block,
 * struct btrfs_dev_item, the sys_chunk_array of btrfs_disk_key +
 * btrfs_chunk + btrfs_stripe), as in btrfs-progs kernel-shared/ctree.h.
 */
#ifndef STORAGED_BTRFS_SB_H
#define STORAGED_BTRFS_SB_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

#define BTRFS_SB_OFFSET 65536 /* primary superblock, bytes from device start */
#define BTRFS_SB_SIZE 4096 /* bytes */
#define BTRFS_SB_MAX_SYS_DEVIDS 64
#define BTRFS_SB_MAX_SYS_STRIPES 64 /* a 2048-byte sys_chunk_array holds at most 21 chunks, 61 stripes */
#define BTRFS_SB_MAX_DEVS 64 /* device items kept from the chunk tree */
#define BTRFS_SUPER_FLAG_SEEDING (UINT64_C(1) << 32) /* ctree.h: a seed device */
/* the devid of the target of a `btrfs replace` in progress, until it takes
 * the replaced device's (fs/btrfs/volumes.h BTRFS_DEV_REPLACE_DEVID) */
#define BTRFS_DEV_REPLACE_DEVID 0
#define BTRFS_CHUNK_TREE_MAX_CHILDREN 512 /* child pointers kept from one chunk tree node */

/* One stripe of a system chunk (struct btrfs_stripe, with its chunk's extent):
 * the chunk's bytes [logical, logical + length) are on device devid/dev_uuid
 * from byte offset on, when the chunk is mirrored; when it is striped
 * (RAID0/10/5/6) this stripe holds the part btrfs_sb_map_sys() computes
 * from index, num_stripes, sub_stripes and stripe_len. */
struct btrfs_sb_stripe {
	uint64_t logical; /* the chunk's first logical byte */
	uint64_t length; /* the chunk's length, bytes */
	uint64_t type; /* the chunk's BTRFS_BLOCK_GROUP_* flags */
	uint64_t devid;
	uint64_t offset; /* bytes from the device's start */
	uint64_t stripe_len; /* bytes of a stripe's part of a row (64 KiB) */
	uint16_t index; /* this stripe's place among its chunk's stripes */
	uint16_t num_stripes;
	uint16_t sub_stripes; /* RAID10: copies of each part */
	uint8_t dev_uuid[16];
};

/* One device of the filesystem as its own record names it: a device item
 * of the chunk tree (struct btrfs_dev_item: devid, uuid, fsid), or a
 * stripe of the sys_chunk_array (fsid unknown: zero). */
struct btrfs_sb_dev {
	uint64_t devid;
	uint8_t dev_uuid[16];
	uint8_t fsid[16]; /* the fsid the device carries: a seed's own fsid for a seed device */
};

struct btrfs_sb_info {
	uint8_t fsid[16];
	char fsid_str[37]; /* "5e81…-…" lower case */
	uint8_t dev_uuid[16];
	uint64_t devid; /* this member's devid */
	uint64_t num_devices; /* members the filesystem expects */
	uint64_t generation;
	uint64_t total_bytes; /* filesystem size, bytes */
	char label[256];
	/* devids referenced by the stripes of the system chunks in
	 * sys_chunk_array, sorted, unique: lets storaged name missing devids */
	uint64_t sys_devids[BTRFS_SB_MAX_SYS_DEVIDS];
	size_t n_sys_devids;
	/* the fsid the filesystem's device items carry (dev_item.fsid of its
	 * own devices): metadata_uuid when the METADATA_UUID incompat flag is
	 * set, else fsid (kernel fs/btrfs/volumes.c read_one_dev()) */
	uint8_t meta_fsid[16];
	uint8_t dev_fsid[16]; /* this device's dev_item.fsid */
	bool seeding; /* BTRFS_SUPER_FLAG_SEEDING: a seed device */
	uint16_t csum_type;
	uint32_t nodesize; /* bytes of a tree block */
	uint64_t chunk_root; /* logical address of the chunk tree's root */
	uint8_t chunk_root_level;
	struct btrfs_sb_stripe sys_stripes[BTRFS_SB_MAX_SYS_STRIPES];
	size_t n_sys_stripes;
	/* the filesystem's own list of its devices: the chunk tree's device
	 * items when devs_from_tree (read by inventory_read_btrfs_devs(),
	 * btrfs_chunk_block_parse()), else empty */
	struct btrfs_sb_dev devs[BTRFS_SB_MAX_DEVS];
	size_t n_devs;
	bool devs_from_tree;
	uint64_t root; /* logical address of the root tree's root */
	uint8_t root_level;
	/* devid 0 (a replace target) only: what the filesystem's device tree
	 * says of the replace, read from a member when replace_known
	 * (inventory_read_btrfs_replace()): the devid it replaces, and its
	 * BTRFS_IOCTL_DEV_REPLACE_STATE_* (linux/btrfs.h) */
	bool replace_known;
	uint64_t replace_src_devid;
	uint64_t replace_state;
};

/* A key of a btrfs tree (struct btrfs_key): objectid, type, offset. */
struct btrfs_tree_key {
	uint64_t objectid;
	uint8_t type;
	uint64_t offset;
};

/* What btrfs_tree_block_search() found in one tree block. */
struct btrfs_tree_hit {
	uint8_t level; /* 0: a leaf */
	uint64_t child; /* a node: the child block whose keys may hold the key */
	size_t item_off, item_size; /* a leaf: the item's data, bytes into the block */
};

#define BTRFS_ROOT_TREE_OBJECTID 1
#define BTRFS_DEV_TREE_OBJECTID 4
#define BTRFS_ROOT_ITEM_KEY 132
#define BTRFS_DEV_REPLACE_KEY 250 /* (0, DEV_REPLACE, 0) in the device tree */
#define BTRFS_CHUNK_MAP_MAX 64 /* metadata chunks kept to map a tree's blocks */

/* What btrfs_chunk_block_parse() found in one chunk tree block. */
struct btrfs_chunk_block {
	uint8_t level; /* 0: a leaf */
	/* a node's child blocks, logical addresses */
	uint64_t children[BTRFS_CHUNK_TREE_MAX_CHILDREN];
	size_t n_children;
};

/*
 * @buf: the BTRFS_SB_SIZE bytes read at BTRFS_SB_OFFSET
 * @len: bytes in @buf (must be >= BTRFS_SB_SIZE)
 * @ret: set only on success
 *
 * Checks the magic "_BHRfS_M", the crc32c checksum when csum_type is
 * crc32c (other checksum types are accepted unverified), that
 * 1 <= num_devices, and that sys_chunk_array_size fits (devid 0 is the
 * target of a replace in progress, BTRFS_DEV_REPLACE_DEVID); walks
 * sys_chunk_array without reading past it.
 *
 * Returns: 0; -ENODATA no btrfs magic (no btrfs here); -EINVAL too short or
 * inconsistent; -EBADMSG bad checksum.
 */
int btrfs_sb_parse(const void *buf, size_t len, struct btrfs_sb_info *ret);

/*
 * @logical: a logical address inside a system chunk (the chunk tree's blocks)
 * @len: bytes wanted from @logical on
 * @devid: the device to read from, and @dev_uuid its uuid
 * @ret_offset: set only on success: bytes from that device's start
 *
 * Pure.  Maps through the sys_chunk_array: a chunk whose every stripe holds
 * a whole copy (single, DUP, RAID1, RAID1C3/4) at the same offset into the
 * stripe; a striped chunk (RAID0/10/5/6) by the kernel's arithmetic
 * (fs/btrfs/volumes.c, btrfs_map_block(): the row and the stripe of the
 * 64 KiB part holding @logical, RAID5/6 parity rotated by row), when the
 * part on that device holds all @len bytes.
 *
 * Returns: 0; -ENOENT when no such chunk has a stripe holding them on that
 * device (a striped chunk: they are on another); -EOPNOTSUPP when the
 * striped chunk's geometry is not one the kernel mounts (a zero stripe
 * length, RAID10 stripes not a multiple of its copies, ...).
 */
int btrfs_sb_map_sys(const struct btrfs_sb_info *info, uint64_t logical, uint64_t len, uint64_t devid,
		     const uint8_t dev_uuid[16], uint64_t *ret_offset);

/*
 * @buf: one tree block of the chunk tree, @len bytes (must be info->nodesize)
 * @info: the superblock it belongs to (nodesize, csum_type); a leaf's device
 *        items are appended to info->devs (at most BTRFS_SB_MAX_DEVS)
 * @logical: the address it was read for (the header's bytenr must match)
 * @ret: the block's level and, for a node, its children
 *
 * Pure.  Checks the header (bytenr, owner: the chunk tree, level no higher
 * than the root's), the crc32c checksum when csum_type is crc32c, and that
 * every item lies inside the block.  Layout: struct btrfs_header,
 * btrfs_item, btrfs_key_ptr, btrfs_dev_item (btrfs_tree.h).
 *
 * Returns: 0; -EINVAL malformed; -EBADMSG bad checksum; -E2BIG more
 * devices or children than kept.
 */
int btrfs_chunk_block_parse(const void *buf, size_t len, struct btrfs_sb_info *info, uint64_t logical,
			    struct btrfs_chunk_block *ret);

/*
 * The stripes of the chunk items in @buf (one leaf of the chunk tree,
 * checked by btrfs_chunk_block_parse(), info->nodesize bytes) of tree
 * blocks (system, metadata) on the device @info describes (devid,
 * dev_uuid), mirrored or striped (btrfs_stripes_map() tells which blocks):
 * appended to @out at *@n, at most @cap in all (more are left out: not an
 * error).  Pure.  Layout: struct btrfs_chunk + struct btrfs_stripe
 * (btrfs_tree.h).  Returns: 0; -EINVAL malformed.
 */
int btrfs_chunk_block_stripes(const void *buf, size_t len, const struct btrfs_sb_info *info,
			      struct btrfs_sb_stripe *out, size_t cap, size_t *n);

/* As btrfs_sb_map_sys() over the @n stripes @v (btrfs_chunk_block_stripes()). */
int btrfs_stripes_map(const struct btrfs_sb_stripe *v, size_t n, uint64_t logical, uint64_t len, uint64_t devid,
		      const uint8_t dev_uuid[16], uint64_t *ret_offset);

/*
 * Looks for @key in the tree block @buf (info->nodesize bytes, read at
 * @logical, which its header's bytenr must match) of the tree @owner
 * (BTRFS_ROOT_TREE_OBJECTID, ...).  *@ret: in a node, the child to
 * descend into; in a leaf, where @key's item is.  Pure.  Checks the
 * header, the crc32c checksum when csum_type is crc32c, and that every
 * item or pointer read lies inside the block.  Returns: 0; -ENOENT (a
 * leaf without @key, a node whose first key is above it); -EINVAL
 * malformed; -EBADMSG bad checksum.
 */
int btrfs_tree_block_search(const void *buf, size_t len, const struct btrfs_sb_info *info, uint64_t logical,
			    uint64_t owner, const struct btrfs_tree_key *key, struct btrfs_tree_hit *ret);

/* A struct btrfs_root_item's tree root block (logical address) and level.
 * Pure.  Returns: 0; -EINVAL too short or a level above the maximum. */
int btrfs_root_item_parse(const void *item, size_t len, uint64_t *ret_bytenr, uint8_t *ret_level);

/* A struct btrfs_dev_replace_item's devid being replaced and its state
 * (BTRFS_IOCTL_DEV_REPLACE_STATE_*, linux/btrfs.h).  Pure.  Returns: 0;
 * -EINVAL too short. */
int btrfs_dev_replace_item_parse(const void *item, size_t len, uint64_t *ret_src_devid, uint64_t *ret_state);

/*
 * crc32c (Castagnoli, reflected polynomial 0x82F63B78, seed ~0, result
 * inverted) as btrfs checksums a superblock from byte 32 to its end and
 * stores the result little endian in the first 4 bytes of csum.
 */
uint32_t btrfs_sb_crc32c(const void *buf, size_t len);

#endif
