/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The btrfs superblock fields storaged needs, parsed from the on-disk bytes.
 * Layout: the btrfs on-disk format documentation (struct btrfs_super_block,
 * struct btrfs_dev_item, the sys_chunk_array of btrfs_disk_key +
 * btrfs_chunk + btrfs_stripe), as in btrfs-progs kernel-shared/ctree.h.
 */
#ifndef STORAGED_BTRFS_SB_H
#define STORAGED_BTRFS_SB_H

#include <stdint.h>
#include <stddef.h>

#define BTRFS_SB_OFFSET 65536 /* primary superblock, bytes from device start */
#define BTRFS_SB_SIZE 4096 /* bytes */
#define BTRFS_SB_MAX_SYS_DEVIDS 64

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
};

/**
 * btrfs_sb_parse:
 * @buf: the BTRFS_SB_SIZE bytes read at BTRFS_SB_OFFSET
 * @len: bytes in @buf (must be >= BTRFS_SB_SIZE)
 * @ret: set only on success
 *
 * Checks the magic "_BHRfS_M", the crc32c checksum when csum_type is
 * crc32c (other checksum types are accepted unverified), that
 * 1 <= devid and 1 <= num_devices, and that sys_chunk_array_size fits; walks
 * sys_chunk_array without reading past it.
 *
 * Returns: 0; -ENODATA no btrfs magic (no btrfs here); -EINVAL too short or
 * inconsistent; -EBADMSG bad checksum.
 */
int btrfs_sb_parse(const void *buf, size_t len, struct btrfs_sb_info *ret);

/**
 * btrfs_sb_crc32c:
 * @buf: bytes, @len of them
 *
 * crc32c (Castagnoli, reflected polynomial 0x82F63B78, seed ~0, result
 * inverted) as btrfs checksums a superblock from byte 32 to its end and
 * stores the result little endian in the first 4 bytes of csum.
 *
 * Returns: the checksum.
 */
uint32_t btrfs_sb_crc32c(const void *buf, size_t len);

#endif
