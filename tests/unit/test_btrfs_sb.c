/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * btrfs superblock parsing: synthetic and hostile superblocks built here,
 * and real ones made by mkfs.btrfs on sparse image files (skipped when
 * mkfs.btrfs is not installed).  No root needed.
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <spawn.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "parse/btrfs_sb.h"
#include "devices/inventory.h"

extern char **environ;

/* Offsets in struct btrfs_super_block, written out independently of
 * btrfs_sb.c (btrfs on-disk format documentation). */
#define OFF_FSID 32
#define OFF_MAGIC 64
#define OFF_GENERATION 72
#define OFF_TOTAL_BYTES 112
#define OFF_NUM_DEVICES 136
#define OFF_SYS_ARRAY_SIZE 160
#define OFF_CSUM_TYPE 196
#define OFF_DEVID 201
#define OFF_DEV_UUID (201 + 66)
#define OFF_LABEL 299
#define OFF_SYS_ARRAY 811
#define KEY_SIZE 17
#define CHUNK_SIZE 48
#define STRIPE_SIZE 32

static uint32_t test_crc32c(const uint8_t *p, size_t len)
{
	uint32_t crc = 0xFFFFFFFFu;

	while (len--) {
		crc ^= *p++;
		for (int k = 0; k < 8; k++)
			crc = crc & 1 ? (crc >> 1) ^ 0x82F63B78u : crc >> 1;
	}
	return ~crc;
}

static void put_le64(uint8_t *p, uint64_t v)
{
	v = htole64(v);
	memcpy(p, &v, 8);
}

static void put_le32(uint8_t *p, uint32_t v)
{
	v = htole32(v);
	memcpy(p, &v, 4);
}

static void put_le16(uint8_t *p, uint16_t v)
{
	v = htole16(v);
	memcpy(p, &v, 2);
}

static void sb_fix_csum(uint8_t *sb)
{
	put_le32(sb, test_crc32c(sb + 32, BTRFS_SB_SIZE - 32));
}

/* Append a chunk item with @n stripes at @off of sys_chunk_array. Returns new end. */
static size_t sb_add_chunk(uint8_t *sb, size_t off, const uint64_t *devids, size_t n)
{
	uint8_t *p = sb + OFF_SYS_ARRAY + off;

	put_le64(p, 256); /* BTRFS_FIRST_CHUNK_TREE_OBJECTID */
	p[8] = 228; /* BTRFS_CHUNK_ITEM_KEY */
	put_le64(p + 9, 0x1500000);
	p += KEY_SIZE;
	put_le64(p, 8 << 20); /* length */
	put_le16(p + 44, (uint16_t)n);
	p += CHUNK_SIZE;
	for (size_t i = 0; i < n; i++)
		put_le64(p + i * STRIPE_SIZE, devids[i]);
	return off + KEY_SIZE + CHUNK_SIZE + n * STRIPE_SIZE;
}

/* A valid superblock: devid 1 of 2, one system chunk on devids 2 and 1. */
static void make_sb(uint8_t *sb)
{
	static const uint64_t stripes[] = { 2, 1 };
	size_t end;

	memset(sb, 0, BTRFS_SB_SIZE);
	for (int i = 0; i < 16; i++)
		sb[OFF_FSID + i] = (uint8_t)(i + 1);
	memcpy(sb + OFF_MAGIC, "_BHRfS_M", 8);
	put_le64(sb + OFF_GENERATION, 7);
	put_le64(sb + OFF_TOTAL_BYTES, 1 << 30);
	put_le64(sb + OFF_NUM_DEVICES, 2);
	put_le64(sb + OFF_DEVID, 1);
	memset(sb + OFF_DEV_UUID, 0xab, 16);
	strcpy((char *)sb + OFF_LABEL, "synthetic");
	end = sb_add_chunk(sb, 0, stripes, 2);
	put_le32(sb + OFF_SYS_ARRAY_SIZE, (uint32_t)end);
	sb_fix_csum(sb);
}

static void uuid_unparse(const uint8_t *u, char *out)
{
	snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12],
		 u[13], u[14], u[15]);
}

/* ---------------------------------------------------------- synthetic */

static void test_crc32c_vector(void **state)
{
	assert_int_equal(test_crc32c((const uint8_t *)"123456789", 9), 0xE3069283u);
	/* storaged's table-driven crc32c against the bitwise reference */
	assert_int_equal(btrfs_sb_crc32c("123456789", 9), 0xE3069283u);
	for (size_t len = 0; len < 64; len++) {
		uint8_t buf[64];

		for (size_t i = 0; i < len; i++)
			buf[i] = (uint8_t)(i * 131 + len * 7);
		assert_int_equal(btrfs_sb_crc32c(buf, len), test_crc32c(buf, len));
	}
}

static void test_parse_synthetic(void **state)
{
	uint8_t sb[BTRFS_SB_SIZE];
	struct btrfs_sb_info info;

	make_sb(sb);
	assert_int_equal(btrfs_sb_parse(sb, sizeof(sb), &info), 0);
	assert_string_equal(info.fsid_str, "01020304-0506-0708-090a-0b0c0d0e0f10");
	assert_int_equal(info.devid, 1);
	assert_int_equal(info.num_devices, 2);
	assert_int_equal(info.generation, 7);
	assert_int_equal(info.total_bytes, 1 << 30);
	assert_string_equal(info.label, "synthetic");
	assert_int_equal(info.dev_uuid[0], 0xab);
	assert_int_equal(info.n_sys_devids, 2);
	assert_int_equal(info.sys_devids[0], 1);
	assert_int_equal(info.sys_devids[1], 2);
}

static void test_parse_two_chunks_unique(void **state)
{
	static const uint64_t a[] = { 3, 1 }, b[] = { 1, 3, 2 };
	uint8_t sb[BTRFS_SB_SIZE];
	struct btrfs_sb_info info;
	size_t end;

	make_sb(sb);
	end = sb_add_chunk(sb, 0, a, 2);
	end = sb_add_chunk(sb, end, b, 3);
	put_le32(sb + OFF_SYS_ARRAY_SIZE, (uint32_t)end);
	sb_fix_csum(sb);
	assert_int_equal(btrfs_sb_parse(sb, sizeof(sb), &info), 0);
	assert_int_equal(info.n_sys_devids, 3);
	assert_int_equal(info.sys_devids[0], 1);
	assert_int_equal(info.sys_devids[1], 2);
	assert_int_equal(info.sys_devids[2], 3);
}

static void test_bad_magic_and_length(void **state)
{
	uint8_t sb[BTRFS_SB_SIZE];
	struct btrfs_sb_info info = { .devid = 42 };

	make_sb(sb);
	assert_int_equal(btrfs_sb_parse(sb, sizeof(sb) - 1, &info), -EINVAL);
	sb[OFF_MAGIC] ^= 1;
	sb_fix_csum(sb);
	assert_int_equal(btrfs_sb_parse(sb, sizeof(sb), &info), -ENODATA);
	assert_int_equal(info.devid, 42); /* untouched on failure */
	memset(sb, 0, sizeof(sb));
	assert_int_equal(btrfs_sb_parse(sb, sizeof(sb), &info), -ENODATA);
}

static void test_bad_checksum(void **state)
{
	uint8_t sb[BTRFS_SB_SIZE];
	struct btrfs_sb_info info;

	make_sb(sb);
	sb[1000] ^= 0x40;
	assert_int_equal(btrfs_sb_parse(sb, sizeof(sb), &info), -EBADMSG);
	make_sb(sb);
	sb[4095] ^= 1; /* last byte is covered too */
	assert_int_equal(btrfs_sb_parse(sb, sizeof(sb), &info), -EBADMSG);
	make_sb(sb);
	sb[0] ^= 1; /* the stored checksum itself */
	assert_int_equal(btrfs_sb_parse(sb, sizeof(sb), &info), -EBADMSG);
	/* other checksum types are accepted unverified */
	make_sb(sb);
	put_le16(sb + OFF_CSUM_TYPE, 1);
	sb[1000] ^= 0x40;
	assert_int_equal(btrfs_sb_parse(sb, sizeof(sb), &info), 0);
}

static void expect_einval_after(uint8_t *sb)
{
	struct btrfs_sb_info info;

	sb_fix_csum(sb);
	assert_int_equal(btrfs_sb_parse(sb, BTRFS_SB_SIZE, &info), -EINVAL);
}

static void test_hostile(void **state)
{
	uint8_t sb[BTRFS_SB_SIZE];

	make_sb(sb);
	put_le32(sb + OFF_SYS_ARRAY_SIZE, 0xFFFFFFFFu);
	expect_einval_after(sb);
	make_sb(sb);
	put_le32(sb + OFF_SYS_ARRAY_SIZE, 2049);
	expect_einval_after(sb);
	make_sb(sb); /* num_stripes huge */
	put_le16(sb + OFF_SYS_ARRAY + KEY_SIZE + 44, 0xFFFF);
	expect_einval_after(sb);
	make_sb(sb); /* num_stripes 0 */
	put_le16(sb + OFF_SYS_ARRAY + KEY_SIZE + 44, 0);
	expect_einval_after(sb);
	make_sb(sb); /* size ends inside the second stripe */
	put_le32(sb + OFF_SYS_ARRAY_SIZE, KEY_SIZE + CHUNK_SIZE + STRIPE_SIZE + 8);
	expect_einval_after(sb);
	make_sb(sb); /* size ends inside the key */
	put_le32(sb + OFF_SYS_ARRAY_SIZE, 5);
	expect_einval_after(sb);
	make_sb(sb); /* wrong key type */
	sb[OFF_SYS_ARRAY + 8] = 1;
	expect_einval_after(sb);
	make_sb(sb); /* stripe on devid 0 */
	put_le64(sb + OFF_SYS_ARRAY + KEY_SIZE + CHUNK_SIZE, 0);
	expect_einval_after(sb);
	make_sb(sb); /* devid 0: the target of a replace in progress, read */
	put_le64(sb + OFF_DEVID, 0);
	sb_fix_csum(sb);
	{
		struct btrfs_sb_info info;

		assert_int_equal(btrfs_sb_parse(sb, BTRFS_SB_SIZE, &info), 0);
		assert_int_equal(info.devid, BTRFS_DEV_REPLACE_DEVID);
	}
	make_sb(sb);
	put_le64(sb + OFF_NUM_DEVICES, 0);
	expect_einval_after(sb);
	make_sb(sb); /* the whole array full of huge stripe counts */
	memset(sb + OFF_SYS_ARRAY, 0xFF, 2048);
	put_le32(sb + OFF_SYS_ARRAY_SIZE, 2048);
	expect_einval_after(sb);
}

/* What lies after sys_chunk_array_size must never be read. */
static void test_stops_at_array_size(void **state)
{
	static const uint64_t far[] = { 99 };
	uint8_t sb[BTRFS_SB_SIZE];
	struct btrfs_sb_info info;
	uint32_t end;

	make_sb(sb);
	memcpy(&end, sb + OFF_SYS_ARRAY_SIZE, sizeof(end));
	end = le32toh(end);
	sb_add_chunk(sb, end, far, 1);
	sb_fix_csum(sb);
	assert_int_equal(btrfs_sb_parse(sb, sizeof(sb), &info), 0);
	assert_int_equal(info.n_sys_devids, 2);
	assert_int_equal(info.sys_devids[1], 2);
}

/* Random mutations with a valid checksum: 0 or -EINVAL, never a crash. */
static void test_fuzz(void **state)
{
	uint8_t sb[BTRFS_SB_SIZE], *heap;
	uint64_t x = 0x9E3779B97F4A7C15u;
	struct btrfs_sb_info info;

	for (int iter = 0; iter < 20000; iter++) {
		int n, r;

		make_sb(sb);
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		n = 1 + (int)(x % 8);
		for (int k = 0; k < n; k++) {
			size_t off;

			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			/* mostly the size field and the array */
			off = x % 4 == 0 ? OFF_SYS_ARRAY_SIZE + (x >> 8) % 4
					 : OFF_SYS_ARRAY + (x >> 8) % 160;
			sb[off] = (uint8_t)(x >> 32);
		}
		sb_fix_csum(sb);
		/* exactly-sized heap copy so that an overread is visible to
		 * valgrind/ASan */
		heap = malloc(BTRFS_SB_SIZE);
		assert_non_null(heap);
		memcpy(heap, sb, BTRFS_SB_SIZE);
		r = btrfs_sb_parse(heap, BTRFS_SB_SIZE, &info);
		free(heap);
		assert_true(r == 0 || r == -EINVAL);
		if (r == 0) {
			assert_true(info.n_sys_devids <= BTRFS_SB_MAX_SYS_DEVIDS);
			for (size_t i = 1; i < info.n_sys_devids; i++)
				assert_true(info.sys_devids[i - 1] < info.sys_devids[i]);
		}
	}
}

/* ------------------------------------------------------- image files */

/* The root and replace items, and a tree block search over hostile bytes:
 * short items refused, a random block never read past its end. */
static void test_tree_items(void **state)
{
	uint8_t item[256] = { 0 }, blk[4096];
	struct btrfs_sb_info info = { .nodesize = sizeof(blk), .csum_type = 1 };
	struct btrfs_tree_key key = { 0, BTRFS_DEV_REPLACE_KEY, 0 };
	struct btrfs_tree_hit hit;
	uint64_t bytenr, src, st;
	uint8_t level;
	int found = 0, checked = 0;

	(void)state;
	put_le64(item + 176, 123456);
	item[238] = 2;
	assert_int_equal(btrfs_root_item_parse(item, 239, &bytenr, &level), 0);
	assert_int_equal(bytenr, 123456);
	assert_int_equal(level, 2);
	assert_int_equal(btrfs_root_item_parse(item, 238, &bytenr, &level), -EINVAL);
	item[238] = 8;
	assert_int_equal(btrfs_root_item_parse(item, 239, &bytenr, &level), -EINVAL);
	put_le64(item, 2);
	put_le64(item + 32, 1);
	assert_int_equal(btrfs_dev_replace_item_parse(item, 72, &src, &st), 0);
	assert_int_equal(src, 2);
	assert_int_equal(st, 1);
	assert_int_equal(btrfs_dev_replace_item_parse(item, 39, &src, &st), -EINVAL);
	srand(43);
	for (int round = 0; round < 2000; round++) {
		for (size_t i = 0; i < sizeof(blk); i++)
			blk[i] = (uint8_t)rand();
		put_le64(blk + 48, 1 << 20); /* bytenr */
		put_le64(blk + 88, BTRFS_DEV_TREE_OBJECTID); /* owner */
		blk[100] = (uint8_t)(round % 2); /* level */
		put_le32(blk + 96, (uint32_t)(rand() % 300)); /* nritems */
		int r = btrfs_tree_block_search(blk, sizeof(blk), &info, 1 << 20, BTRFS_DEV_TREE_OBJECTID, &key, &hit);
		assert_true(r == 0 || r == -ENOENT || r == -EINVAL);
		if (r == 0 && hit.level == 0)
			assert_true(hit.item_off + hit.item_size <= sizeof(blk));
		found += r == 0;
		checked += r != -EINVAL || blk[100] != 0;
	}
	assert_true(checked > 0); /* the headers passed: items and pointers were read */
	(void)found;
}

struct images {
	char dir[64];
	char raid[2][96];
	char single[96];
	char empty[96];
	char shortf[96];
	bool have_mkfs;
};

static int run_argv(char *const argv[])
{
	posix_spawn_file_actions_t fa;
	pid_t pid;
	int st, r;

	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	r = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (r != 0)
		return -r;
	if (waitpid(pid, &st, 0) < 0)
		return -errno;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -EIO;
}

static const char *find_mkfs(void)
{
	static const char *const cand[] = { "/usr/sbin/mkfs.btrfs", "/sbin/mkfs.btrfs",
					    "/usr/bin/mkfs.btrfs", "/usr/local/sbin/mkfs.btrfs" };

	for (size_t i = 0; i < sizeof(cand) / sizeof(cand[0]); i++)
		if (access(cand[i], X_OK) == 0)
			return cand[i];
	return "mkfs.btrfs"; /* PATH */
}

static int make_sparse(const char *path, off_t size)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	int r = 0;

	if (fd < 0)
		return -errno;
	if (ftruncate(fd, size) < 0)
		r = -errno;
	close(fd);
	return r;
}

static int images_setup(void **state)
{
	struct images *im = calloc(1, sizeof(*im));
	const char *mkfs = find_mkfs();

	if (!im)
		return -1;
	snprintf(im->dir, sizeof(im->dir), "/tmp/test_btrfs_sb.XXXXXX");
	if (!mkdtemp(im->dir))
		return -1;
	snprintf(im->raid[0], sizeof(im->raid[0]), "%s/img1", im->dir);
	snprintf(im->raid[1], sizeof(im->raid[1]), "%s/img2", im->dir);
	snprintf(im->single, sizeof(im->single), "%s/single", im->dir);
	snprintf(im->empty, sizeof(im->empty), "%s/empty", im->dir);
	snprintf(im->shortf, sizeof(im->shortf), "%s/short", im->dir);
	if (make_sparse(im->raid[0], 256 << 20) || make_sparse(im->raid[1], 256 << 20) ||
	    make_sparse(im->single, 256 << 20) || make_sparse(im->empty, 1 << 20) ||
	    make_sparse(im->shortf, BTRFS_SB_OFFSET + 100))
		return -1;
	{
		char *const raid[] = { (char *)mkfs, "-q", "-f", "-d",	      "raid1",	   "-m",
				       "raid1",	     "-L", "x",	 im->raid[0], im->raid[1], NULL };
		char *const single[] = { (char *)mkfs, "-q", "-f", "-L", "solo", im->single, NULL };

		im->have_mkfs = run_argv(raid) == 0 && run_argv(single) == 0;
	}
	*state = im;
	return 0;
}

static int images_teardown(void **state)
{
	struct images *im = *state;

	if (!im)
		return 0;
	unlink(im->raid[0]);
	unlink(im->raid[1]);
	unlink(im->single);
	unlink(im->empty);
	unlink(im->shortf);
	rmdir(im->dir);
	free(im);
	return 0;
}

static void read_image(const char *path, struct btrfs_sb_info *info)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	assert_true(fd >= 0);
	assert_int_equal(inventory_read_btrfs_sb(fd, info), 0);
	close(fd);
}

/* A filesystem where no replace ever ran: the walk from the superblock
 * through the chunk tree (its chunks of tree blocks), the root tree (the
 * device tree's root item) to the device tree's first leaf works on a
 * real mkfs image, and finds no DEV_REPLACE item. */
static void test_mkfs_no_replace(void **state)
{
	struct images *im = *state;

	if (!im->have_mkfs)
		skip();
	for (int i = 0; i < 2; i++) {
		struct btrfs_sb_info a;
		uint64_t src = 99, st = 99;
		int fd;

		read_image(im->raid[i], &a);
		fd = open(im->raid[i], O_RDONLY | O_CLOEXEC);
		assert_true(fd >= 0);
		assert_int_equal(inventory_read_btrfs_replace(fd, &a, &src, &st), -ENOENT);
		close(fd);
		assert_int_equal(src, 99); /* untouched */
	}
}

static void test_mkfs_raid1(void **state)
{
	struct images *im = *state;
	struct btrfs_sb_info a, b;

	if (!im->have_mkfs)
		skip();
	read_image(im->raid[0], &a);
	read_image(im->raid[1], &b);
	assert_memory_equal(a.fsid, b.fsid, 16);
	assert_string_equal(a.fsid_str, b.fsid_str);
	assert_memory_not_equal(a.dev_uuid, b.dev_uuid, 16);
	assert_int_equal(a.devid, 1);
	assert_int_equal(b.devid, 2);
	assert_int_equal(a.num_devices, 2);
	assert_int_equal(b.num_devices, 2);
	assert_string_equal(a.label, "x");
	assert_true(a.generation > 0);
	assert_int_equal(a.total_bytes, 512 << 20);
	assert_int_equal(a.n_sys_devids, 2);
	assert_int_equal(a.sys_devids[0], 1);
	assert_int_equal(a.sys_devids[1], 2);
	assert_int_equal(b.n_sys_devids, 2);
	/* each member's own copy of the chunk tree names both, by dev_uuid */
	for (int i = 0; i < 2; i++) {
		struct btrfs_sb_info *x = i ? &b : &a;
		int fd = open(im->raid[i], O_RDONLY | O_CLOEXEC);

		assert_true(fd >= 0);
		assert_int_equal(inventory_read_btrfs_devs(fd, x), 0);
		close(fd);
		assert_true(x->devs_from_tree);
		assert_int_equal(x->n_devs, 2);
		assert_int_equal(x->devs[0].devid, 1);
		assert_memory_equal(x->devs[0].dev_uuid, a.dev_uuid, 16);
		assert_memory_equal(x->devs[1].dev_uuid, b.dev_uuid, 16);
		assert_memory_equal(x->devs[1].fsid, a.fsid, 16);
		assert_false(x->seeding);
	}
}

/* A chunk tree leaf of @nodesize bytes at @logical holding one device item
 * (devid 3, dev_uuid 0x33.., fsid 0x44..) after a chunk item. */
static void make_leaf(uint8_t *buf, size_t nodesize, uint64_t logical)
{
	size_t hdr = 101, dev_at = nodesize - hdr - 98, chunk_at = dev_at - 80;

	memset(buf, 0, nodesize);
	put_le64(buf + 48, logical); /* bytenr */
	put_le64(buf + 88, 3); /* owner: the chunk tree */
	put_le32(buf + 96, 2); /* nritems */
	buf[100] = 0; /* level */
	/* item 0: a chunk item, skipped */
	put_le64(buf + hdr, 256);
	buf[hdr + 8] = 228;
	put_le32(buf + hdr + 17, (uint32_t)chunk_at);
	put_le32(buf + hdr + 21, 80);
	/* item 1: DEV_ITEMS_OBJECTID DEV_ITEM devid 3 */
	put_le64(buf + hdr + 25, 1);
	buf[hdr + 25 + 8] = 216;
	put_le64(buf + hdr + 25 + 9, 3);
	put_le32(buf + hdr + 25 + 17, (uint32_t)dev_at);
	put_le32(buf + hdr + 25 + 21, 98);
	put_le64(buf + hdr + dev_at, 3);
	memset(buf + hdr + dev_at + 66, 0x33, 16);
	memset(buf + hdr + dev_at + 82, 0x44, 16);
	put_le32(buf, btrfs_sb_crc32c(buf + 32, nodesize - 32));
}

static void test_chunk_block(void **state)
{
	enum { NODESIZE = 4096 };
	static uint8_t buf[NODESIZE];
	struct btrfs_sb_info info = { .nodesize = NODESIZE };
	struct btrfs_chunk_block blk;
	uint64_t off;

	make_leaf(buf, NODESIZE, 1 << 20);
	assert_int_equal(btrfs_chunk_block_parse(buf, NODESIZE, &info, 1 << 20, &blk), 0);
	assert_int_equal(blk.level, 0);
	assert_int_equal(info.n_devs, 1);
	assert_int_equal(info.devs[0].devid, 3);
	assert_int_equal(info.devs[0].dev_uuid[15], 0x33);
	assert_int_equal(info.devs[0].fsid[0], 0x44);
	info.n_devs = 0;
	/* read for another address, short, a bad checksum, hostile counts */
	assert_int_equal(btrfs_chunk_block_parse(buf, NODESIZE, &info, 2 << 20, &blk), -EINVAL);
	assert_int_equal(btrfs_chunk_block_parse(buf, NODESIZE - 1, &info, 1 << 20, &blk), -EINVAL);
	buf[500] ^= 1;
	assert_int_equal(btrfs_chunk_block_parse(buf, NODESIZE, &info, 1 << 20, &blk), -EBADMSG);
	make_leaf(buf, NODESIZE, 1 << 20);
	put_le32(buf + 96, 0xFFFFFFFFu);
	put_le32(buf, btrfs_sb_crc32c(buf + 32, NODESIZE - 32));
	assert_int_equal(btrfs_chunk_block_parse(buf, NODESIZE, &info, 1 << 20, &blk), -EINVAL);
	make_leaf(buf, NODESIZE, 1 << 20);
	put_le32(buf + 101 + 25 + 17, NODESIZE); /* the device item's data past the end */
	put_le32(buf, btrfs_sb_crc32c(buf + 32, NODESIZE - 32));
	assert_int_equal(btrfs_chunk_block_parse(buf, NODESIZE, &info, 1 << 20, &blk), -EINVAL);
	/* mapped through a mirrored system chunk; a striped one is not */
	info.n_sys_stripes = 1;
	info.sys_stripes[0] = (struct btrfs_sb_stripe){ .logical = 1 << 20, .length = 8 << 20, .type = 2 | 16,
							.devid = 2, .offset = 5 << 20 };
	memset(info.sys_stripes[0].dev_uuid, 0x22, 16);
	memset(info.dev_uuid, 0x22, 16);
	assert_int_equal(btrfs_sb_map_sys(&info, (1 << 20) + 4096, 4096, 2, info.dev_uuid, &off), 0);
	assert_int_equal(off, (5 << 20) + 4096);
	assert_int_equal(btrfs_sb_map_sys(&info, (1 << 20) + 4096, 4096, 1, info.dev_uuid, &off), -ENOENT);
	assert_int_equal(btrfs_sb_map_sys(&info, (9 << 20) - 100, 4096, 2, info.dev_uuid, &off), -ENOENT);
}

/* One striped system chunk at 1 MiB of @ns stripes, 64 KiB parts: stripe
 * i on devid i + 1 (dev_uuid all i + 1) from (i + 1) MiB of the device. */
static void striped_chunk(struct btrfs_sb_info *info, uint64_t type, uint16_t ns, uint16_t sub)
{
	memset(info, 0, sizeof(*info));
	info->n_sys_stripes = ns;
	for (uint16_t i = 0; i < ns; i++) {
		info->sys_stripes[i] = (struct btrfs_sb_stripe){ .logical = 1 << 20, .length = 8 << 20,
								 .type = 2 | type, .devid = i + 1u,
								 .offset = (i + 1u) << 20, .stripe_len = 65536,
								 .index = i, .num_stripes = ns, .sub_stripes = sub };
		memset(info->sys_stripes[i].dev_uuid, i + 1, 16);
	}
}

/* The devids whose stripe holds the 16 KiB block at 1 MiB + @part parts +
 * @in bytes, as a bit mask; *@dev_off: where on the device (the same on
 * each, when more: RAID10's copies are at the same row). */
static unsigned holders(const struct btrfs_sb_info *info, uint64_t part, uint64_t in, uint64_t *dev_off)
{
	unsigned mask = 0;

	for (uint64_t devid = 1; devid <= info->n_sys_stripes; devid++) {
		uint8_t uuid[16];
		uint64_t off;

		memset(uuid, (int)devid, 16);
		if (btrfs_sb_map_sys(info, (1 << 20) + part * 65536 + in, 16384, devid, uuid, &off) == 0) {
			mask |= 1u << devid;
			*dev_off = off - (devid << 20);
		}
	}
	return mask;
}

/* Striped system chunks (metadata -m raid0/10/5/6): each 64 KiB part on
 * the stripe the kernel's btrfs_map_block() reads it from. */
static void test_map_striped(void **state)
{
	struct btrfs_sb_info info;
	uint64_t off = 0;
	uint8_t uuid[16];

	(void)state;
	striped_chunk(&info, 8, 2, 0); /* RAID0: parts round the stripes */
	assert_int_equal(holders(&info, 0, 0, &off), 1u << 1);
	assert_int_equal(off, 0);
	assert_int_equal(holders(&info, 1, 16384, &off), 1u << 2);
	assert_int_equal(off, 16384);
	assert_int_equal(holders(&info, 2, 0, &off), 1u << 1);
	assert_int_equal(off, 65536);
	assert_int_equal(holders(&info, 5, 49152, &off), 1u << 2);
	assert_int_equal(off, 2 * 65536 + 49152);
	assert_int_equal(holders(&info, 0, 57344, &off), 0); /* across two parts: on no device whole */

	striped_chunk(&info, 64, 4, 2); /* RAID10: parts round pairs of copies */
	assert_int_equal(holders(&info, 0, 0, &off), 1u << 1 | 1u << 2);
	assert_int_equal(off, 0);
	assert_int_equal(holders(&info, 1, 0, &off), 1u << 3 | 1u << 4);
	assert_int_equal(off, 0);
	assert_int_equal(holders(&info, 2, 0, &off), 1u << 1 | 1u << 2);
	assert_int_equal(off, 65536);

	striped_chunk(&info, 128, 3, 0); /* RAID5: two data parts a row, parity moving */
	assert_int_equal(holders(&info, 0, 0, &off), 1u << 1);
	assert_int_equal(holders(&info, 1, 0, &off), 1u << 2);
	assert_int_equal(holders(&info, 2, 0, &off), 1u << 2);
	assert_int_equal(off, 65536);
	assert_int_equal(holders(&info, 3, 0, &off), 1u << 3);
	assert_int_equal(holders(&info, 4, 0, &off), 1u << 3);
	assert_int_equal(off, 2 * 65536);
	assert_int_equal(holders(&info, 5, 0, &off), 1u << 1);

	striped_chunk(&info, 256, 4, 0); /* RAID6: two data parts a row of four */
	assert_int_equal(holders(&info, 2, 0, &off), 1u << 2);
	assert_int_equal(off, 65536);
	assert_int_equal(holders(&info, 7, 0, &off), 1u << 1);
	assert_int_equal(off, 3 * 65536);

	/* geometries the kernel does not mount, from a hostile superblock */
	memset(uuid, 1, 16);
	striped_chunk(&info, 8, 2, 0);
	info.sys_stripes[0].stripe_len = 0;
	assert_int_equal(btrfs_sb_map_sys(&info, 1 << 20, 4096, 1, uuid, &off), -EOPNOTSUPP);
	striped_chunk(&info, 64, 3, 2);
	assert_int_equal(btrfs_sb_map_sys(&info, 1 << 20, 4096, 1, uuid, &off), -EOPNOTSUPP);
	striped_chunk(&info, 128, 1, 0);
	assert_int_equal(btrfs_sb_map_sys(&info, 1 << 20, 4096, 1, uuid, &off), -EOPNOTSUPP);
	striped_chunk(&info, 8, 2, 0);
	info.sys_stripes[0].index = 2;
	assert_int_equal(btrfs_sb_map_sys(&info, 1 << 20, 4096, 1, uuid, &off), -EOPNOTSUPP);
}

static void test_mkfs_single(void **state)
{
	struct images *im = *state;
	struct btrfs_sb_info s;

	if (!im->have_mkfs)
		skip();
	read_image(im->single, &s);
	assert_int_equal(s.devid, 1);
	assert_int_equal(s.num_devices, 1);
	assert_string_equal(s.label, "solo");
	assert_int_equal(s.n_sys_devids, 1);
	assert_int_equal(s.sys_devids[0], 1);
}

/* libblkid's view and ours must agree on the same image. */
/* Probe an image file or device node by path, as the scan would probe a
 * partition (the full libblkid probe). */
static int inventory_probe(const char *path, struct block_device *ret)
{
	struct block_device d = { 0 };
	struct stat st;
	int fd, r, sb_err;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -errno;
	r = -errno;
	if (fstat(fd, &st) < 0)
		goto out;
	r = -ENOTBLK;
	if (!S_ISBLK(st.st_mode) && !S_ISREG(st.st_mode))
		goto out;
	r = -ENOMEM;
	d.devno = S_ISBLK(st.st_mode) ? st.st_rdev : 0;
	d.devnode = strdup(path);
	if (!d.devnode)
		goto out;
	r = inventory_probe_fd(fd, &d, &sb_err, true, INVENTORY_FULL);
	if (r < 0)
		goto out;
	*ret = d;
	memset(&d, 0, sizeof(d));
out:
	block_device_done(&d);
	close(fd);
	return r;
}

static void test_probe_images(void **state)
{
	struct images *im = *state;

	if (!im->have_mkfs)
		skip();
	for (int i = 0; i < 2; i++) {
		struct block_device d = { 0 };
		char dev_uuid[37];

		assert_int_equal(inventory_probe(im->raid[i], &d), 0);
		assert_string_equal(d.devnode, im->raid[i]);
		assert_int_equal(d.devno, 0);
		assert_non_null(d.type);
		assert_string_equal(d.type, "btrfs");
		assert_true(d.is_btrfs);
		assert_non_null(d.uuid);
		assert_string_equal(d.uuid, d.btrfs.fsid_str);
		uuid_unparse(d.btrfs.dev_uuid, dev_uuid);
		assert_non_null(d.uuid_sub);
		assert_string_equal(d.uuid_sub, dev_uuid);
		assert_non_null(d.label);
		assert_string_equal(d.label, "x");
		assert_int_equal(d.btrfs.devid, (uint64_t)i + 1);
		assert_null(d.partuuid);
		block_device_done(&d);
		assert_null(d.devnode);
	}
}

static void test_probe_not_btrfs(void **state)
{
	struct images *im = *state;
	struct block_device d = { 0 };
	int fd;

	assert_int_equal(inventory_probe(im->empty, &d), 0);
	assert_null(d.type);
	assert_false(d.is_btrfs);
	block_device_done(&d);
	assert_int_equal(inventory_probe("/nonexistent/storaged-test", &d), -ENOENT);
	assert_int_equal(inventory_probe(im->dir, &d), -ENOTBLK);
	/* file ends inside the superblock: no btrfs superblock there */
	fd = open(im->shortf, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(inventory_read_btrfs_sb(fd, &d.btrfs), -ENODATA);
	close(fd);
}

/* A corrupted superblock on an image: libblkid may still say btrfs (older
 * versions do not verify checksums) but is_btrfs must stay false. */
static void test_probe_corrupted_image(void **state)
{
	struct images *im = *state;
	struct block_device d = { 0 };
	char path[128];
	uint8_t sb[BTRFS_SB_SIZE];
	int in, out;

	if (!im->have_mkfs)
		skip();
	snprintf(path, sizeof(path), "%s/corrupt", im->dir);
	assert_int_equal(make_sparse(path, 256 << 20), 0);
	in = open(im->single, O_RDONLY | O_CLOEXEC);
	out = open(path, O_WRONLY | O_CLOEXEC);
	assert_true(in >= 0 && out >= 0);
	assert_int_equal(pread(in, sb, sizeof(sb), BTRFS_SB_OFFSET), sizeof(sb));
	sb[OFF_LABEL + 100] ^= 0xFF;
	assert_int_equal(pwrite(out, sb, sizeof(sb), BTRFS_SB_OFFSET), sizeof(sb));
	close(in);
	close(out);
	in = open(path, O_RDONLY | O_CLOEXEC);
	assert_int_equal(inventory_read_btrfs_sb(in, &d.btrfs), -EBADMSG);
	close(in);
	assert_int_equal(inventory_probe(path, &d), 0);
	assert_false(d.is_btrfs);
	block_device_done(&d);
	unlink(path);
}

/* The real machine: enumeration must work without udevd. */
static void test_scan_smoke(void **state)
{
	struct inventory inv = { 0 };
	struct diag_list diags = { 0 };

	struct inventory fast = { 0 };

	assert_int_equal(inventory_scan(&inv, INVENTORY_FULL, &diags), 0);
	for (size_t i = 0; i < inv.n_devs; i++) {
		assert_non_null(inv.devs[i].devnode);
		assert_true(inv.devs[i].devno != 0);
		assert_false(inv.devs[i].unprobed);
	}
	assert_int_equal(diag_count(&diags, DIAG_ERROR), 0);
	/* the btrfs superblocks alone: the same devices and btrfs members;
	 * the others unprobed, with nothing said of what they hold */
	assert_int_equal(inventory_scan(&fast, INVENTORY_BTRFS_ONLY, &diags), 0);
	assert_int_equal(fast.depth, INVENTORY_BTRFS_ONLY);
	assert_int_equal(fast.n_devs, inv.n_devs);
	for (size_t i = 0; i < fast.n_devs; i++) {
		const struct block_device *f = &fast.devs[i], *d = &inv.devs[i];

		assert_string_equal(f->devnode, d->devnode);
		assert_int_equal(f->is_btrfs, d->is_btrfs);
		if (f->unprobed)
			assert_true(!f->type && !f->uuid && !f->label && !d->is_btrfs);
		else
			assert_string_equal(f->type ?: "", d->type ?: "");
	}
	inventory_done(&fast);
	inventory_done(&inv);
	diag_list_done(&diags);
}

/* One probe thread per INVENTORY_DEVS_PER_THREAD devices, at least the
 * caller's, at most INVENTORY_SCAN_THREADS_MAX. */
static void test_scan_threads(void **state)
{
	assert_int_equal(inventory_scan_threads(0), 1);
	assert_int_equal(inventory_scan_threads(1), 1);
	assert_int_equal(inventory_scan_threads(INVENTORY_DEVS_PER_THREAD), 1);
	assert_int_equal(inventory_scan_threads(INVENTORY_DEVS_PER_THREAD + 1), 2);
	assert_int_equal(inventory_scan_threads(3 * INVENTORY_DEVS_PER_THREAD), 3);
	assert_int_equal(inventory_scan_threads(100000), INVENTORY_SCAN_THREADS_MAX);
}

int main(void)
{
	const struct CMUnitTest synthetic[] = {
		cmocka_unit_test(test_crc32c_vector),
		cmocka_unit_test(test_parse_synthetic),
		cmocka_unit_test(test_parse_two_chunks_unique),
		cmocka_unit_test(test_bad_magic_and_length),
		cmocka_unit_test(test_bad_checksum),
		cmocka_unit_test(test_hostile),
		cmocka_unit_test(test_stops_at_array_size),
		cmocka_unit_test(test_chunk_block),
		cmocka_unit_test(test_map_striped),
		cmocka_unit_test(test_tree_items),
		cmocka_unit_test(test_fuzz),
		cmocka_unit_test(test_scan_smoke),
		cmocka_unit_test(test_scan_threads),
	};
	const struct CMUnitTest images[] = {
		cmocka_unit_test(test_mkfs_raid1),
		cmocka_unit_test(test_mkfs_no_replace),
		cmocka_unit_test(test_mkfs_single),
		cmocka_unit_test(test_probe_images),
		cmocka_unit_test(test_probe_not_btrfs),
		cmocka_unit_test(test_probe_corrupted_image),
	};
	int r;

	r = cmocka_run_group_tests_name("btrfs_sb", synthetic, NULL, NULL);
	r += cmocka_run_group_tests_name("btrfs_sb images", images, images_setup, images_teardown);
	return r;
}
