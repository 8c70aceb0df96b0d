/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Parse the primary btrfs superblock.
 *
 * Layout followed: the btrfs on-disk format documentation
 * (https://btrfs.readthedocs.io/en/latest/dev/On-disk-format.html) and
 * btrfs-progs kernel-shared/ctree.h / kernel include/uapi/linux/btrfs_tree.h
 * (struct btrfs_super_block, struct btrfs_dev_item, struct btrfs_disk_key,
 * struct btrfs_chunk, struct btrfs_stripe).  All integers are little endian.
 *
 * The structs below mirror only what storaged reads; their offsets are
 * pinned with _Static_assert so a typo cannot shift a field silently.
 *
 * Steps of btrfs_sb_parse():
 *   1. check the length and the magic;
 *   2. verify the checksum (crc32c only);
 *   3. copy the scalar fields and check devid/num_devices;
 *   4. walk sys_chunk_array and collect its stripes and their devids.
 *
 * btrfs_chunk_block_parse() reads one block of the chunk tree (its device
 * items: the filesystem's own list of its devices), which the caller
 * found with btrfs_sb_map_sys().
 */
#include <endian.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "btrfs_sb.h"

#define BTRFS_MAGIC UINT64_C(0x4D5F53665248425F) /* "_BHRfS_M" as le64 */
#define BTRFS_CSUM_SIZE 32
#define BTRFS_CSUM_TYPE_CRC32 0
#define BTRFS_SYSTEM_CHUNK_ARRAY_SIZE 2048
#define BTRFS_CHUNK_ITEM_KEY 228 /* btrfs_tree.h */
#define BTRFS_DEV_ITEM_KEY 216
#define BTRFS_DEV_ITEMS_OBJECTID 1
#define BTRFS_CHUNK_TREE_OBJECTID 3
#define BTRFS_INCOMPAT_METADATA_UUID (UINT64_C(1) << 10)
/* striped profiles: a stripe holds part of the chunk, not a copy */
#define BTRFS_BLOCK_GROUP_RAID0 UINT64_C(8)
#define BTRFS_BLOCK_GROUP_RAID10 UINT64_C(64)
#define BTRFS_BLOCK_GROUP_RAID5 UINT64_C(128)
#define BTRFS_BLOCK_GROUP_RAID6 UINT64_C(256)
#define BTRFS_BLOCK_GROUP_STRIPED \
	(BTRFS_BLOCK_GROUP_RAID0 | BTRFS_BLOCK_GROUP_RAID10 | BTRFS_BLOCK_GROUP_RAID5 | BTRFS_BLOCK_GROUP_RAID6)
#define BTRFS_MAX_LEVEL 8

/* struct btrfs_dev_item, 98 bytes */
struct sb_dev_item {
	uint64_t devid;
	uint64_t total_bytes;
	uint64_t bytes_used;
	uint32_t io_align;
	uint32_t io_width;
	uint32_t sector_size;
	uint64_t type;
	uint64_t generation;
	uint64_t start_offset;
	uint32_t dev_group;
	uint8_t seek_speed;
	uint8_t bandwidth;
	uint8_t uuid[16];
	uint8_t fsid[16];
} __attribute__((packed));

/* struct btrfs_super_block, 4096 bytes */
struct sb_disk {
	uint8_t csum[BTRFS_CSUM_SIZE];
	uint8_t fsid[16];
	uint64_t bytenr;
	uint64_t flags;
	uint64_t magic;
	uint64_t generation;
	uint64_t root;
	uint64_t chunk_root;
	uint64_t log_root;
	uint64_t log_root_transid; /* unused */
	uint64_t total_bytes;
	uint64_t bytes_used;
	uint64_t root_dir_objectid;
	uint64_t num_devices;
	uint32_t sectorsize;
	uint32_t nodesize;
	uint32_t leafsize; /* unused */
	uint32_t stripesize;
	uint32_t sys_chunk_array_size;
	uint64_t chunk_root_generation;
	uint64_t compat_flags;
	uint64_t compat_ro_flags;
	uint64_t incompat_flags;
	uint16_t csum_type;
	uint8_t root_level;
	uint8_t chunk_root_level;
	uint8_t log_root_level;
	struct sb_dev_item dev_item;
	char label[256];
	uint64_t cache_generation;
	uint64_t uuid_tree_generation;
	uint8_t metadata_uuid[16];
	uint64_t nr_global_roots;
	uint64_t reserved[27];
	uint8_t sys_chunk_array[BTRFS_SYSTEM_CHUNK_ARRAY_SIZE];
	uint8_t super_roots_and_padding[4 * 168 + 565];
} __attribute__((packed));

/* struct btrfs_disk_key, 17 bytes */
struct sb_disk_key {
	uint64_t objectid;
	uint8_t type;
	uint64_t offset;
} __attribute__((packed));

/* struct btrfs_chunk without its flexible stripe array, 48 bytes */
struct sb_chunk {
	uint64_t length;
	uint64_t owner;
	uint64_t stripe_len;
	uint64_t type;
	uint32_t io_align;
	uint32_t io_width;
	uint32_t sector_size;
	uint16_t num_stripes;
	uint16_t sub_stripes;
} __attribute__((packed));

/* struct btrfs_stripe, 32 bytes */
struct sb_stripe {
	uint64_t devid;
	uint64_t offset;
	uint8_t dev_uuid[16];
} __attribute__((packed));

_Static_assert(sizeof(struct sb_dev_item) == 98, "btrfs_dev_item size");
_Static_assert(offsetof(struct sb_dev_item, uuid) == 66, "dev_item.uuid");
_Static_assert(sizeof(struct sb_disk) == BTRFS_SB_SIZE, "btrfs_super_block size");
_Static_assert(offsetof(struct sb_disk, fsid) == 32, "fsid");
_Static_assert(offsetof(struct sb_disk, magic) == 64, "magic");
_Static_assert(offsetof(struct sb_disk, generation) == 72, "generation");
_Static_assert(offsetof(struct sb_disk, total_bytes) == 112, "total_bytes");
_Static_assert(offsetof(struct sb_disk, num_devices) == 136, "num_devices");
_Static_assert(offsetof(struct sb_disk, sys_chunk_array_size) == 160, "sys_chunk_array_size");
_Static_assert(offsetof(struct sb_disk, csum_type) == 196, "csum_type");
_Static_assert(offsetof(struct sb_disk, dev_item) == 201, "dev_item");
_Static_assert(offsetof(struct sb_disk, label) == 299, "label");
_Static_assert(offsetof(struct sb_disk, sys_chunk_array) == 811, "sys_chunk_array");
/* struct btrfs_header, 101 bytes: the start of every tree block */
struct tb_header {
	uint8_t csum[BTRFS_CSUM_SIZE];
	uint8_t fsid[16];
	uint64_t bytenr;
	uint64_t flags;
	uint8_t chunk_tree_uuid[16];
	uint64_t generation;
	uint64_t owner;
	uint32_t nritems;
	uint8_t level;
} __attribute__((packed));

/* struct btrfs_item, 25 bytes: a leaf's item; data at header end + offset */
struct tb_item {
	struct sb_disk_key key;
	uint32_t offset;
	uint32_t size;
} __attribute__((packed));

/* struct btrfs_key_ptr, 33 bytes: a node's pointer to a child block */
struct tb_key_ptr {
	struct sb_disk_key key;
	uint64_t blockptr;
	uint64_t generation;
} __attribute__((packed));

_Static_assert(sizeof(struct tb_header) == 101, "btrfs_header size");
_Static_assert(sizeof(struct tb_item) == 25, "btrfs_item size");
_Static_assert(sizeof(struct tb_key_ptr) == 33, "btrfs_key_ptr size");
_Static_assert(offsetof(struct sb_disk, metadata_uuid) == 571, "metadata_uuid");
_Static_assert(offsetof(struct sb_disk, chunk_root) == 88, "chunk_root");
_Static_assert(sizeof(struct sb_disk_key) == 17, "btrfs_disk_key size");
_Static_assert(sizeof(struct sb_chunk) == 48, "btrfs_chunk size");
_Static_assert(offsetof(struct sb_chunk, num_stripes) == 44, "chunk.num_stripes");
_Static_assert(sizeof(struct sb_stripe) == 32, "btrfs_stripe size");

/*
 * crc32c (btrfs_sb.h) four bits at a time from a 16-entry table (entry i:
 * the bitwise crc32c step applied four times to i): a scan checksums every
 * btrfs device's 4 KiB superblock, and the bitwise loop cost ~145k
 * instructions each (a third of a warm 200-device scan's CPU,
 * bench/README.md "Scan").
 */
static const uint32_t crc32c_nibble[16] = {
	0x00000000, 0x105ec76f, 0x20bd8ede, 0x30e349b1, 0x417b1dbc, 0x5125dad3,
	0x61c69362, 0x7198540d, 0x82f63b78, 0x92a8fc17, 0xa24bb5a6, 0xb21572c9,
	0xc38d26c4, 0xd3d3e1ab, 0xe330a81a, 0xf36e6f75,
};

uint32_t btrfs_sb_crc32c(const void *buf, size_t len)
{
	const uint8_t *p = buf;
	uint32_t crc = ~UINT32_C(0);

	while (len--) {
		crc ^= *p++;
		crc = (crc >> 4) ^ crc32c_nibble[crc & 15];
		crc = (crc >> 4) ^ crc32c_nibble[crc & 15];
	}
	return ~crc;
}

static int sb_check_csum(const struct sb_disk *sb)
{
	const uint8_t *raw = (const uint8_t *)sb;
	uint32_t want, got;

	if (le16toh(sb->csum_type) != BTRFS_CSUM_TYPE_CRC32)
		return 0; /* xxhash64, sha256, blake2b: accepted unverified */
	memcpy(&want, sb->csum, sizeof(want));
	got = btrfs_sb_crc32c(raw + BTRFS_CSUM_SIZE, BTRFS_SB_SIZE - BTRFS_CSUM_SIZE);
	return le32toh(want) == got ? 0 : -EBADMSG;
}

static void uuid_format(const uint8_t u[16], char out[37])
{
	snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12],
		 u[13], u[14], u[15]);
}

/* Insert @devid into the sorted, unique set @info->sys_devids. */
static int sys_devids_add(struct btrfs_sb_info *info, uint64_t devid)
{
	size_t i = 0;

	while (i < info->n_sys_devids && info->sys_devids[i] < devid)
		i++;
	if (i < info->n_sys_devids && info->sys_devids[i] == devid)
		return 0;
	if (info->n_sys_devids == BTRFS_SB_MAX_SYS_DEVIDS)
		return -EINVAL;
	memmove(&info->sys_devids[i + 1], &info->sys_devids[i],
		(info->n_sys_devids - i) * sizeof(info->sys_devids[0]));
	info->sys_devids[i] = devid;
	info->n_sys_devids++;
	return 0;
}

/* @out: stripe @index (@st) of the chunk @chunk at @logical. */
static void stripe_fill(struct btrfs_sb_stripe *out, uint64_t logical, const struct sb_chunk *chunk, size_t index,
			const struct sb_stripe *st)
{
	*out = (struct btrfs_sb_stripe){
		.logical = logical,
		.length = le64toh(chunk->length),
		.type = le64toh(chunk->type),
		.devid = le64toh(st->devid),
		.offset = le64toh(st->offset),
		.stripe_len = le64toh(chunk->stripe_len),
		.index = (uint16_t)index,
		.num_stripes = le16toh(chunk->num_stripes),
		.sub_stripes = le16toh(chunk->sub_stripes),
	};
	memcpy(out->dev_uuid, st->dev_uuid, sizeof(out->dev_uuid));
}

/*
 * Parse one (disk key, chunk, stripes) item of @len bytes left at @p.
 * Returns: bytes consumed, or -EINVAL.
 */
static long sys_chunk_parse(const uint8_t *p, size_t len, struct btrfs_sb_info *info)
{
	struct sb_disk_key key;
	struct sb_chunk chunk;
	size_t n, need;

	if (len < sizeof(key) + sizeof(chunk))
		return -EINVAL;
	memcpy(&key, p, sizeof(key));
	memcpy(&chunk, p + sizeof(key), sizeof(chunk));
	if (key.type != BTRFS_CHUNK_ITEM_KEY)
		return -EINVAL;
	n = le16toh(chunk.num_stripes);
	need = sizeof(key) + sizeof(chunk) + n * sizeof(struct sb_stripe);
	if (n == 0 || need > len)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		struct sb_stripe st;
		struct btrfs_sb_stripe *out;
		uint64_t devid;
		int r;

		memcpy(&st, p + sizeof(key) + sizeof(chunk) + i * sizeof(st), sizeof(st));
		devid = le64toh(st.devid);
		if (devid == 0 || info->n_sys_stripes == BTRFS_SB_MAX_SYS_STRIPES)
			return -EINVAL;
		r = sys_devids_add(info, devid);
		if (r < 0)
			return r;
		out = &info->sys_stripes[info->n_sys_stripes++];
		stripe_fill(out, le64toh(key.offset), &chunk, i, &st);
	}
	return (long)need;
}

static int sys_chunk_array_walk(const struct sb_disk *sb, struct btrfs_sb_info *info)
{
	size_t size = le32toh(sb->sys_chunk_array_size);
	size_t off = 0;

	if (size > sizeof(sb->sys_chunk_array))
		return -EINVAL;
	while (off < size) {
		long n = sys_chunk_parse(sb->sys_chunk_array + off, size - off, info);

		if (n < 0)
			return (int)n;
		off += (size_t)n;
	}
	return 0;
}

static void sb_copy_fields(const struct sb_disk *sb, struct btrfs_sb_info *info)
{
	memcpy(info->fsid, sb->fsid, sizeof(info->fsid));
	uuid_format(info->fsid, info->fsid_str);
	memcpy(info->dev_uuid, sb->dev_item.uuid, sizeof(info->dev_uuid));
	info->devid = le64toh(sb->dev_item.devid);
	info->num_devices = le64toh(sb->num_devices);
	info->generation = le64toh(sb->generation);
	info->total_bytes = le64toh(sb->total_bytes);
	memcpy(info->label, sb->label, sizeof(info->label));
	info->label[sizeof(info->label) - 1] = '\0';
	if (le64toh(sb->incompat_flags) & BTRFS_INCOMPAT_METADATA_UUID)
		memcpy(info->meta_fsid, sb->metadata_uuid, sizeof(info->meta_fsid));
	else
		memcpy(info->meta_fsid, sb->fsid, sizeof(info->meta_fsid));
	memcpy(info->dev_fsid, sb->dev_item.fsid, sizeof(info->dev_fsid));
	info->seeding = (le64toh(sb->flags) & BTRFS_SUPER_FLAG_SEEDING) != 0;
	info->csum_type = le16toh(sb->csum_type);
	info->nodesize = le32toh(sb->nodesize);
	info->chunk_root = le64toh(sb->chunk_root);
	info->chunk_root_level = sb->chunk_root_level;
	info->root = le64toh(sb->root);
	info->root_level = sb->root_level;
}

int btrfs_sb_parse(const void *buf, size_t len, struct btrfs_sb_info *ret)
{
	struct sb_disk sb;
	struct btrfs_sb_info info = { 0 };
	int r;

	if (!buf || len < BTRFS_SB_SIZE)
		return -EINVAL;
	memcpy(&sb, buf, sizeof(sb));
	if (le64toh(sb.magic) != BTRFS_MAGIC)
		return -ENODATA;
	r = sb_check_csum(&sb);
	if (r < 0)
		return r;
	sb_copy_fields(&sb, &info);
	if (info.num_devices == 0)
		return -EINVAL;
	r = sys_chunk_array_walk(&sb, &info);
	if (r < 0)
		return r;
	*ret = info;
	return 0;
}

/* ------------------------------------------------------------ chunk tree */

int btrfs_sb_map_sys(const struct btrfs_sb_info *info, uint64_t logical, uint64_t len, uint64_t devid,
		     const uint8_t dev_uuid[16], uint64_t *ret_offset)
{
	size_t n = info->n_sys_stripes < BTRFS_SB_MAX_SYS_STRIPES ? info->n_sys_stripes : BTRFS_SB_MAX_SYS_STRIPES;

	return btrfs_stripes_map(info->sys_stripes, n, logical, len, devid, dev_uuid, ret_offset);
}

/*
 * Steps of the kernel's btrfs_map_block() (fs/btrfs/volumes.c) for a read
 * of a striped chunk: 1. the part of the chunk (stripe_len bytes) holding
 * byte @in of it, and the offset in that part; 2. the stripe holding the
 * part and the row of parts it is in: RAID0 parts go round the stripes,
 * RAID10 round groups of sub_stripes copies, RAID5/6 round the data
 * stripes of a row, the row's first stripe turned by the row's number
 * (the parity moves); 3. the byte on the stripe's device: row * stripe_len
 * + offset in the part.
 * Returns: 1, *@ret_in set to that byte's offset from the stripe's start,
 * when @st holds all @len bytes; 0 when another stripe does; -EOPNOTSUPP
 * for a geometry the kernel does not mount.
 */
static int striped_part(const struct btrfs_sb_stripe *st, uint64_t in, uint64_t len, uint64_t *ret_in)
{
	uint64_t ns = st->num_stripes, part, off, first, copies = 1;

	if (st->stripe_len == 0 || ns == 0 || st->index >= ns)
		return -EOPNOTSUPP;
	part = in / st->stripe_len;
	off = in % st->stripe_len;
	if (len > st->stripe_len - off)
		return 0; /* parts of two stripes: no device holds it whole */
	if (st->type & BTRFS_BLOCK_GROUP_RAID0) {
		first = part % ns;
		part /= ns;
	} else if (st->type & BTRFS_BLOCK_GROUP_RAID10) {
		copies = st->sub_stripes;
		if (copies == 0 || ns % copies != 0)
			return -EOPNOTSUPP;
		first = part % (ns / copies) * copies;
		part /= ns / copies;
	} else {
		uint64_t parity = st->type & BTRFS_BLOCK_GROUP_RAID6 ? 2 : 1;

		if (ns <= parity)
			return -EOPNOTSUPP;
		first = part % (ns - parity);
		part /= ns - parity;
		first = (part + first) % ns;
	}
	if (st->index < first || st->index >= first + copies)
		return 0;
	if (part > (UINT64_MAX - off) / st->stripe_len)
		return -EOPNOTSUPP;
	*ret_in = part * st->stripe_len + off;
	return 1;
}

int btrfs_stripes_map(const struct btrfs_sb_stripe *v, size_t n, uint64_t logical, uint64_t len, uint64_t devid,
		      const uint8_t dev_uuid[16], uint64_t *ret_offset)
{
	int r = -ENOENT;

	for (size_t i = 0; i < n; i++) {
		const struct btrfs_sb_stripe *st = &v[i];

		if (logical < st->logical || logical - st->logical >= st->length ||
		    len > st->length - (logical - st->logical))
			continue;
		uint64_t in = logical - st->logical;

		if (st->devid != devid || memcmp(st->dev_uuid, dev_uuid, 16) != 0)
			continue;
		if (st->type & BTRFS_BLOCK_GROUP_STRIPED) {
			int k = striped_part(st, in, len, &in);

			if (k < 0)
				r = k;
			if (k <= 0)
				continue;
		}
		if (st->offset > UINT64_MAX - in)
			continue;
		*ret_offset = st->offset + in;
		return 0;
	}
	return r;
}

static int tb_check_header(const uint8_t *buf, size_t len, const struct btrfs_sb_info *info,
			   uint64_t logical, uint64_t owner, struct tb_header *h)
{
	if (len < sizeof(*h) || len != info->nodesize)
		return -EINVAL;
	memcpy(h, buf, sizeof(*h));
	if (info->csum_type == BTRFS_CSUM_TYPE_CRC32) {
		uint32_t want;

		memcpy(&want, h->csum, sizeof(want));
		if (le32toh(want) != btrfs_sb_crc32c(buf + BTRFS_CSUM_SIZE, len - BTRFS_CSUM_SIZE))
			return -EBADMSG;
	}
	if (le64toh(h->bytenr) != logical || le64toh(h->owner) != owner ||
	    h->level >= BTRFS_MAX_LEVEL)
		return -EINVAL;
	return 0;
}

/* A leaf's device items into info->devs; other items are skipped. */
static int tb_leaf_devs(const uint8_t *buf, size_t len, uint32_t n, struct btrfs_sb_info *info)
{
	const size_t data = sizeof(struct tb_header);

	if (n > (len - data) / sizeof(struct tb_item))
		return -EINVAL;
	for (uint32_t i = 0; i < n; i++) {
		struct tb_item it;
		struct sb_dev_item di;
		size_t off, size;

		memcpy(&it, buf + data + i * sizeof(it), sizeof(it));
		off = le32toh(it.offset);
		size = le32toh(it.size);
		if (off > len - data || size > len - data - off)
			return -EINVAL;
		if (it.key.type != BTRFS_DEV_ITEM_KEY || le64toh(it.key.objectid) != BTRFS_DEV_ITEMS_OBJECTID)
			continue;
		if (size < sizeof(di))
			return -EINVAL;
		if (info->n_devs == BTRFS_SB_MAX_DEVS)
			return -E2BIG;
		memcpy(&di, buf + data + off, sizeof(di));
		if (le64toh(di.devid) == 0 || le64toh(di.devid) != le64toh(it.key.offset))
			return -EINVAL;
		info->devs[info->n_devs].devid = le64toh(di.devid);
		memcpy(info->devs[info->n_devs].dev_uuid, di.uuid, 16);
		memcpy(info->devs[info->n_devs].fsid, di.fsid, 16);
		info->n_devs++;
	}
	return 0;
}

/* A node's children into @ret. */
static int tb_node_children(const uint8_t *buf, size_t len, uint32_t n, struct btrfs_chunk_block *ret)
{
	const size_t data = sizeof(struct tb_header);

	if (n > (len - data) / sizeof(struct tb_key_ptr))
		return -EINVAL;
	if (n > BTRFS_CHUNK_TREE_MAX_CHILDREN)
		return -E2BIG;
	for (uint32_t i = 0; i < n; i++) {
		struct tb_key_ptr kp;

		memcpy(&kp, buf + data + i * sizeof(kp), sizeof(kp));
		ret->children[i] = le64toh(kp.blockptr);
	}
	ret->n_children = n;
	return 0;
}

int btrfs_chunk_block_parse(const void *buf, size_t len, struct btrfs_sb_info *info, uint64_t logical,
			    struct btrfs_chunk_block *ret)
{
	struct tb_header h;
	int r;

	if (!buf || !info || !ret)
		return -EINVAL;
	r = tb_check_header(buf, len, info, logical, BTRFS_CHUNK_TREE_OBJECTID, &h);
	if (r < 0)
		return r;
	ret->level = h.level;
	ret->n_children = 0;
	if (h.level == 0)
		return tb_leaf_devs(buf, len, le32toh(h.nritems), info);
	return tb_node_children(buf, len, le32toh(h.nritems), ret);
}

/* ------------------------------------------- other trees: the replace item */

/* struct btrfs_root_item: the root block's address and level */
#define ROOT_ITEM_BYTENR 176
#define ROOT_ITEM_LEVEL 238
/* struct btrfs_dev_replace_item: src_devid first, replace_state at 32 */
#define DEV_REPLACE_ITEM_STATE 32
#define DEV_REPLACE_ITEM_MIN 40
/* the chunks a tree block can be in: system and metadata (mixed included) */
#define BTRFS_BLOCK_GROUP_TREES (UINT64_C(2) | UINT64_C(4))

static uint64_t get_le64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return le64toh(v);
}

/* One chunk item of @size bytes at @p, key offset @logical: its stripes on
 * @info's device into @out. */
static int chunk_item_stripes(const uint8_t *p, size_t size, uint64_t logical, const struct btrfs_sb_info *info,
			      struct btrfs_sb_stripe *out, size_t cap, size_t *n)
{
	struct sb_chunk chunk;
	size_t ns;

	if (size < sizeof(chunk))
		return -EINVAL;
	memcpy(&chunk, p, sizeof(chunk));
	ns = le16toh(chunk.num_stripes);
	if (ns == 0 || ns > (size - sizeof(chunk)) / sizeof(struct sb_stripe))
		return -EINVAL;
	if (!(le64toh(chunk.type) & BTRFS_BLOCK_GROUP_TREES))
		return 0;
	for (size_t i = 0; i < ns && *n < cap; i++) {
		struct sb_stripe st;

		memcpy(&st, p + sizeof(chunk) + i * sizeof(st), sizeof(st));
		if (le64toh(st.devid) != info->devid || memcmp(st.dev_uuid, info->dev_uuid, 16) != 0)
			continue;
		stripe_fill(&out[(*n)++], logical, &chunk, i, &st);
	}
	return 0;
}

int btrfs_chunk_block_stripes(const void *buf, size_t len, const struct btrfs_sb_info *info,
			      struct btrfs_sb_stripe *out, size_t cap, size_t *n)
{
	const size_t data = sizeof(struct tb_header);
	const uint8_t *b = buf;
	struct tb_header h;
	uint32_t items;

	if (!buf || len < data || len != info->nodesize)
		return -EINVAL;
	memcpy(&h, b, sizeof(h));
	items = le32toh(h.nritems);
	if (h.level != 0)
		return 0;
	if (items > (len - data) / sizeof(struct tb_item))
		return -EINVAL;
	for (uint32_t i = 0; i < items; i++) {
		struct tb_item it;
		size_t off, size;
		int r;

		memcpy(&it, b + data + i * sizeof(it), sizeof(it));
		off = le32toh(it.offset);
		size = le32toh(it.size);
		if (off > len - data || size > len - data - off)
			return -EINVAL;
		if (it.key.type != BTRFS_CHUNK_ITEM_KEY)
			continue;
		r = chunk_item_stripes(b + data + off, size, le64toh(it.key.offset), info, out, cap, n);
		if (r < 0)
			return r;
	}
	return 0;
}

static int key_cmp(const struct sb_disk_key *a, const struct btrfs_tree_key *b)
{
	uint64_t ao = le64toh(a->objectid), aoff = le64toh(a->offset);

	if (ao != b->objectid)
		return ao < b->objectid ? -1 : 1;
	if (a->type != b->type)
		return a->type < b->type ? -1 : 1;
	if (aoff != b->offset)
		return aoff < b->offset ? -1 : 1;
	return 0;
}

/* A leaf: the item of @key. */
static int tb_leaf_find(const uint8_t *buf, size_t len, uint32_t n, const struct btrfs_tree_key *key,
			struct btrfs_tree_hit *ret)
{
	const size_t data = sizeof(struct tb_header);

	if (n > (len - data) / sizeof(struct tb_item))
		return -EINVAL;
	for (uint32_t i = 0; i < n; i++) {
		struct tb_item it;
		size_t off, size;

		memcpy(&it, buf + data + i * sizeof(it), sizeof(it));
		if (key_cmp(&it.key, key) != 0)
			continue;
		off = le32toh(it.offset);
		size = le32toh(it.size);
		if (off > len - data || size > len - data - off)
			return -EINVAL;
		ret->item_off = data + off;
		ret->item_size = size;
		return 0;
	}
	return -ENOENT;
}

/* A node: the last child whose first key is not above @key. */
static int tb_node_find(const uint8_t *buf, size_t len, uint32_t n, const struct btrfs_tree_key *key,
			struct btrfs_tree_hit *ret)
{
	const size_t data = sizeof(struct tb_header);
	bool found = false;

	if (n > (len - data) / sizeof(struct tb_key_ptr))
		return -EINVAL;
	for (uint32_t i = 0; i < n; i++) {
		struct tb_key_ptr kp;

		memcpy(&kp, buf + data + i * sizeof(kp), sizeof(kp));
		if (key_cmp(&kp.key, key) > 0)
			break;
		ret->child = le64toh(kp.blockptr);
		found = true;
	}
	return found ? 0 : -ENOENT;
}

int btrfs_tree_block_search(const void *buf, size_t len, const struct btrfs_sb_info *info, uint64_t logical,
			    uint64_t owner, const struct btrfs_tree_key *key, struct btrfs_tree_hit *ret)
{
	struct tb_header h;
	int r;

	if (!buf || !info || !key || !ret)
		return -EINVAL;
	r = tb_check_header(buf, len, info, logical, owner, &h);
	if (r < 0)
		return r;
	*ret = (struct btrfs_tree_hit){ .level = h.level };
	if (h.level == 0)
		return tb_leaf_find(buf, len, le32toh(h.nritems), key, ret);
	return tb_node_find(buf, len, le32toh(h.nritems), key, ret);
}

int btrfs_root_item_parse(const void *item, size_t len, uint64_t *ret_bytenr, uint8_t *ret_level)
{
	const uint8_t *p = item;

	if (!item || len <= ROOT_ITEM_LEVEL || p[ROOT_ITEM_LEVEL] >= BTRFS_MAX_LEVEL)
		return -EINVAL;
	*ret_bytenr = get_le64(p + ROOT_ITEM_BYTENR);
	*ret_level = p[ROOT_ITEM_LEVEL];
	return 0;
}

int btrfs_dev_replace_item_parse(const void *item, size_t len, uint64_t *ret_src_devid, uint64_t *ret_state)
{
	const uint8_t *p = item;

	if (!item || len < DEV_REPLACE_ITEM_MIN)
		return -EINVAL;
	*ret_src_devid = get_le64(p);
	*ret_state = get_le64(p + DEV_REPLACE_ITEM_STATE);
	return 0;
}
