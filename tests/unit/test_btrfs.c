/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * btrfs member grouping, missing-member reporting, inventory lookups and
 * inventory fixtures.  Pure: no devices, no root.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cmocka.h>
#include <linux/btrfs.h>

#include "devices/btrfs.h"
#include "devices/inventory.h"

#define FSID_A "aaaaaaaa-0000-4000-8000-000000000001"
#define FSID_B "bbbbbbbb-0000-4000-8000-000000000002"

static void fsid_bytes(const char *s, uint8_t out[16])
{
	size_t n = 0;

	for (; *s && n < 16; s++) {
		if (*s == '-')
			continue;
		assert_int_equal(sscanf(s, "%2hhx", &out[n]), 1);
		n++;
		s++;
	}
	assert_int_equal(n, 16);
}

/* Add a btrfs member; @sys is a 0-terminated list of sys_chunk devids. */
static void add_member(struct inventory *inv, const char *devnode, const char *fsid, uint64_t devid,
		       uint64_t num, uint64_t gen, const char *label, const uint64_t *sys)
{
	struct block_device d = { 0 };

	d.devnode = strdup(devnode);
	d.type = strdup("btrfs");
	d.uuid = strdup(fsid);
	d.is_btrfs = true;
	fsid_bytes(fsid, d.btrfs.fsid);
	snprintf(d.btrfs.fsid_str, sizeof(d.btrfs.fsid_str), "%s", fsid);
	d.btrfs.devid = devid;
	d.btrfs.num_devices = num;
	d.btrfs.generation = gen;
	if (label) {
		snprintf(d.btrfs.label, sizeof(d.btrfs.label), "%s", label);
		d.label = strdup(label);
	}
	while (sys && *sys)
		d.btrfs.sys_devids[d.btrfs.n_sys_devids++] = *sys++;
	assert_int_equal(inventory_add(inv, &d), 0);
	assert_null(d.devnode); /* moved */
}

static void add_plain(struct inventory *inv, const char *devnode, const char *type, const char *uuid,
		      const char *label, const char *partuuid, const char *partlabel)
{
	struct block_device d = { 0 };

	d.devnode = strdup(devnode);
	d.type = type ? strdup(type) : NULL;
	d.uuid = uuid ? strdup(uuid) : NULL;
	d.label = label ? strdup(label) : NULL;
	d.partuuid = partuuid ? strdup(partuuid) : NULL;
	d.partlabel = partlabel ? strdup(partlabel) : NULL;
	assert_int_equal(inventory_add(inv, &d), 0);
}

static const uint64_t SYS_1[] = { 1, 0 }, SYS_12[] = { 1, 2, 0 }, SYS_23[] = { 2, 3, 0 };


/* ------------------------------------------- membership from the record */

/* One device item of a record: devid, a dev_uuid of 16 bytes @u, the fsid
 * it carries. */
struct rec_entry {
	uint64_t devid;
	uint8_t u;
	const char *fsid;
};

/* A btrfs device of @fsid, devid @devid, dev_uuid sixteen @u bytes,
 * generation @gen, carrying @rec (0-devid-terminated; NULL: no chunk tree
 * read from it). */
static void add_recorded(struct inventory *inv, const char *devnode, const char *fsid, uint64_t devid,
			 uint8_t u, uint64_t gen, const struct rec_entry *rec)
{
	struct block_device d = { 0 };
	size_t n = 0;

	for (const struct rec_entry *e = rec; e && e->devid; e++)
		n++;
	add_member(inv, devnode, fsid, devid, n ? n : 1, gen, NULL, NULL);
	d = inv->devs[inv->n_devs - 1];
	memset(d.btrfs.dev_uuid, u, 16);
	memcpy(d.btrfs.meta_fsid, d.btrfs.fsid, 16);
	memcpy(d.btrfs.dev_fsid, d.btrfs.fsid, 16);
	for (const struct rec_entry *e = rec; e && e->devid; e++) {
		struct btrfs_sb_dev *x = &d.btrfs.devs[d.btrfs.n_devs++];

		x->devid = e->devid;
		memset(x->dev_uuid, e->u, 16);
		fsid_bytes(e->fsid, x->fsid);
	}
	d.btrfs.devs_from_tree = rec != NULL;
	inv->devs[inv->n_devs - 1] = d;
}

/* The real RAID1 of FSID_A: /dev/sda and /dev/sdb, devids 1 and 2, dev_uuids
 * 0xa1.. and 0xa2.., generation 7, each holding the record of both. */
static const struct rec_entry rec_ab[] = { { 1, 0xa1, FSID_A }, { 2, 0xa2, FSID_A }, { 0, 0, NULL } };

static void add_real_raid1(struct inventory *inv)
{
	add_recorded(inv, "/dev/sda", FSID_A, 1, 0xa1, 7, rec_ab);
	add_recorded(inv, "/dev/sdb", FSID_A, 2, 0xa2, 7, rec_ab);
}

/* C37: devid 2 of another filesystem made with the same fsid, and devid 3
 * of it with a higher generation: strangers; the RAID1 is complete and
 * current, and nothing is a clone. */
static void test_stranger_other_filesystem(void **state)
{
	static const struct rec_entry x[] = { { 1, 0x11, FSID_A }, { 2, 0x12, FSID_A }, { 3, 0x13, FSID_A }, { 0, 0, NULL } };
	struct inventory inv = { 0 };
	struct btrfs_fs_list l = { 0 };
	struct diag_list diags = { 0 };
	char buf[1024];

	add_recorded(&inv, "/dev/sdx2", FSID_A, 2, 0x12, 50, x);
	add_recorded(&inv, "/dev/sdx3", FSID_A, 3, 0x13, 50, x);
	add_real_raid1(&inv);
	assert_int_equal(btrfs_group(&inv, &l, &diags), 0);
	assert_int_equal(l.n, 1);
	assert_int_equal(l.v[0].n_members, 2);
	assert_string_equal(l.v[0].members[0].dev->devnode, "/dev/sda");
	assert_string_equal(l.v[0].members[1].dev->devnode, "/dev/sdb");
	assert_int_equal(l.v[0].n_clones, 0);
	assert_int_equal(l.v[0].n_strangers, 2);
	assert_int_equal(l.v[0].num_devices, 2);
	assert_int_equal(l.v[0].generation, 7);
	assert_true(btrfs_filesystem_complete(&l.v[0]));
	assert_int_equal(btrfs_fs_problems(&l.v[0]), 0);
	assert_int_equal(diags.n, 2);
	btrfs_format_stranger(&l.v[0], &l.v[0].strangers[0], buf, sizeof(buf));
	assert_non_null(strstr(buf, "'/dev/sdx2' carries its fsid and claims devid 2"));
	assert_non_null(strstr(buf, "names devid 2 as dev_uuid a2a2a2a2-a2a2-a2a2-a2a2-a2a2a2a2a2a2"));
	btrfs_format_stranger(&l.v[0], &l.v[0].strangers[1], buf, sizeof(buf));
	assert_non_null(strstr(buf, "has no devid 3 (its devices: devids 1, 2)"));
	btrfs_fs_list_done(&l);
	diag_list_done(&diags);
	inventory_done(&inv);
}

/* A forged copy (devid 1's superblock, devid 2 written in: no chunk tree of
 * its own) is a stranger; a true copy of devid 2 is a clone, as before. */
static void test_stranger_forged_and_clone(void **state)
{
	struct inventory inv = { 0 };
	struct btrfs_fs_list l = { 0 };
	struct diag_list diags = { 0 };

	add_real_raid1(&inv);
	add_recorded(&inv, "/dev/sdf", FSID_A, 2, 0xa1, 7, NULL);
	assert_int_equal(btrfs_group(&inv, &l, &diags), 0);
	assert_int_equal(l.v[0].n_members, 2);
	assert_int_equal(l.v[0].n_strangers, 1);
	assert_string_equal(l.v[0].strangers[0].dev->devnode, "/dev/sdf");
	btrfs_fs_list_done(&l);
	diag_list_done(&diags);

	add_recorded(&inv, "/dev/sdc", FSID_A, 2, 0xa2, 7, rec_ab);
	assert_int_equal(btrfs_group(&inv, &l, &diags), 0);
	assert_int_equal(l.v[0].n_clones, 1);
	assert_int_equal(l.v[0].clones[0].devid, 2);
	assert_int_equal(l.v[0].n_members, 1);
	assert_false(btrfs_filesystem_complete(&l.v[0]));
	assert_true(btrfs_fs_problems(&l.v[0]) & BTRFS_FS_AMBIGUOUS);
	btrfs_fs_list_done(&l);
	diag_list_done(&diags);
	inventory_done(&inv);
}

/* Two whole single-device filesystems with one fsid: which one is meant
 * cannot be told, whatever the generations: neither is mounted. */
static void test_two_whole_filesystems(void **state)
{
	static const struct rec_entry a[] = { { 1, 0xa1, FSID_A }, { 0, 0, NULL } };
	static const struct rec_entry x[] = { { 1, 0x11, FSID_A }, { 0, 0, NULL } };
	struct inventory inv = { 0 };
	struct btrfs_fs_list l = { 0 };
	struct diag_list diags = { 0 };
	char buf[1024];

	add_recorded(&inv, "/dev/sda", FSID_A, 1, 0xa1, 7, a);
	add_recorded(&inv, "/dev/sdx", FSID_A, 1, 0x11, 90, x);
	assert_int_equal(btrfs_group(&inv, &l, &diags), 0);
	assert_int_equal(l.v[0].n_members, 0);
	assert_non_null(l.v[0].split[0]);
	assert_true(btrfs_fs_ambiguous(&l.v[0]));
	assert_false(btrfs_filesystem_complete(&l.v[0]));
	assert_true(btrfs_fs_problems(&l.v[0]) & BTRFS_FS_AMBIGUOUS);
	assert_non_null(strstr(btrfs_format_clones(&l.v[0], buf, sizeof(buf)), "two sets of devices carry its fsid"));
	assert_int_equal(diags.n, 1);
	btrfs_fs_list_done(&l);
	diag_list_done(&diags);
	inventory_done(&inv);
}

/* Made-up devices whose own records name the real members and themselves:
 * the real members do not name them back, so the made-up record loses one
 * for each real member it names, and they are strangers. */
static void test_made_up_record(void **state)
{
	static const struct rec_entry abx[] = { { 1, 0xa1, FSID_A }, { 2, 0xa2, FSID_A }, { 3, 0x13, FSID_A },
						{ 4, 0x14, FSID_A }, { 5, 0x15, FSID_A }, { 0, 0, NULL } };
	struct inventory inv = { 0 };
	struct btrfs_fs_list l = { 0 };
	struct diag_list diags = { 0 };

	add_real_raid1(&inv);
	add_recorded(&inv, "/dev/sdx3", FSID_A, 3, 0x13, 99, abx);
	add_recorded(&inv, "/dev/sdx4", FSID_A, 4, 0x14, 99, abx);
	add_recorded(&inv, "/dev/sdx5", FSID_A, 5, 0x15, 99, abx);
	assert_int_equal(btrfs_group(&inv, &l, &diags), 0);
	/* 3 - 2 against 2 - 0: the real record decides */
	assert_int_equal(l.v[0].n_members, 2);
	assert_int_equal(l.v[0].n_strangers, 3);
	assert_true(btrfs_filesystem_complete(&l.v[0]));
	btrfs_fs_list_done(&l);
	diag_list_done(&diags);

	/* one more made-up device: as well borne out, and a split */
	add_recorded(&inv, "/dev/sdx6", FSID_A, 3, 0x13, 99, abx);
	assert_int_equal(btrfs_group(&inv, &l, &diags), 0);
	assert_true(btrfs_fs_ambiguous(&l.v[0]));
	assert_int_equal(l.v[0].n_members, 0);
	btrfs_fs_list_done(&l);
	diag_list_done(&diags);
	inventory_done(&inv);
}

/* A device removed while it was away comes back with the older record
 * that still names it: the members' own records do not, so it is a
 * stranger, not a third member. */
static void test_removed_device_back(void **state)
{
	static const struct rec_entry abc[] = { { 1, 0xa1, FSID_A }, { 2, 0xa2, FSID_A }, { 3, 0xa3, FSID_A }, { 0, 0, NULL } };
	struct inventory inv = { 0 };
	struct btrfs_fs_list l = { 0 };
	struct diag_list diags = { 0 };

	add_recorded(&inv, "/dev/sda", FSID_A, 1, 0xa1, 20, rec_ab);
	add_recorded(&inv, "/dev/sdb", FSID_A, 2, 0xa2, 20, rec_ab);
	add_recorded(&inv, "/dev/sdc", FSID_A, 3, 0xa3, 9, abc);
	assert_int_equal(btrfs_group(&inv, &l, &diags), 0);
	assert_int_equal(l.v[0].n_members, 2);
	assert_int_equal(l.v[0].n_strangers, 1);
	assert_string_equal(l.v[0].strangers[0].dev->devnode, "/dev/sdc");
	assert_true(btrfs_filesystem_complete(&l.v[0]));
	btrfs_fs_list_done(&l);
	diag_list_done(&diags);
	inventory_done(&inv);
}

/* A `btrfs replace` cut by a power cut: its target carries devid 0 and the
 * fsid, written at the members' last commit.  It is the replace target
 * (registered, not counted, no warning), not a stranger; one left behind
 * by an older commit is a stranger; without a record, the same. */
static void test_replace_target(void **state)
{
	char buf[1024];

	for (int with_record = 1; with_record >= 0; with_record--) {
		struct inventory inv = { 0 };
		struct btrfs_fs_list l = { 0 };
		struct diag_list diags = { 0 };

		add_recorded(&inv, "/dev/sda", FSID_A, 1, 0xa1, 7, with_record ? rec_ab : NULL);
		add_recorded(&inv, "/dev/sdb", FSID_A, 2, 0xa2, 7, with_record ? rec_ab : NULL);
		add_recorded(&inv, "/dev/sdc", FSID_A, BTRFS_DEV_REPLACE_DEVID, 0xc0, 7, NULL);
		for (size_t i = 0; i < inv.n_devs; i++) /* the superblocks' count */
			inv.devs[i].btrfs.num_devices = 2;
		assert_int_equal(btrfs_group(&inv, &l, &diags), 0);
		assert_int_equal(l.n, 1);
		assert_int_equal(l.v[0].n_members, 2);
		assert_int_equal(l.v[0].num_devices, 2);
		assert_int_equal(l.v[0].n_strangers, 0);
		assert_non_null(l.v[0].replace_target);
		assert_string_equal(l.v[0].replace_target->devnode, "/dev/sdc");
		assert_true(btrfs_filesystem_complete(&l.v[0]));
		assert_int_equal(btrfs_fs_problems(&l.v[0]), 0);
		assert_int_equal(diags.n, 0);
		btrfs_format_states(&l.v[0], buf, sizeof(buf));
		assert_non_null(strstr(buf, "'/dev/sdc' is the target of a `btrfs replace` in progress (devid 0 until it ends)"));
		btrfs_fs_list_done(&l);
		diag_list_done(&diags);
		inventory_done(&inv);
	}

	struct inventory inv = { 0 };
	struct btrfs_fs_list l = { 0 };
	struct diag_list diags = { 0 };

	add_recorded(&inv, "/dev/sda", FSID_A, 1, 0xa1, 9, rec_ab);
	add_recorded(&inv, "/dev/sdb", FSID_A, 2, 0xa2, 9, rec_ab);
	add_recorded(&inv, "/dev/sdc", FSID_A, BTRFS_DEV_REPLACE_DEVID, 0xc0, 7, NULL);
	assert_int_equal(btrfs_group(&inv, &l, &diags), 0);
	assert_null(l.v[0].replace_target);
	assert_int_equal(l.v[0].n_strangers, 1);
	btrfs_fs_list_done(&l);
	diag_list_done(&diags);

	/* the device tree read from a member decides: started (1), of devid
	 * 2, whatever the generation; finished (2): a stranger */
	inv.devs[2].btrfs.replace_known = true;
	inv.devs[2].btrfs.replace_src_devid = 2;
	inv.devs[2].btrfs.replace_state = 1;
	assert_int_equal(btrfs_group(&inv, &l, &diags), 0);
	assert_non_null(l.v[0].replace_target);
	btrfs_format_states(&l.v[0], buf, sizeof(buf));
	assert_non_null(strstr(buf, "'/dev/sdc' is the target of a `btrfs replace` of devid 2 in progress"));
	btrfs_fs_list_done(&l);
	inv.devs[2].btrfs.replace_state = 2;
	inv.devs[2].btrfs.generation = 9;
	assert_int_equal(btrfs_group(&inv, &l, &diags), 0);
	assert_null(l.v[0].replace_target);
	assert_int_equal(l.v[0].n_strangers, 1);
	btrfs_fs_list_done(&l);
	diag_list_done(&diags);
	inventory_done(&inv);
}

/* C38: a sprout's record names its seed with the seed's fsid: the seed is a
 * member (listed last, never stale), the sprout's own device is members[0]. */
static void test_seed_sprout(void **state)
{
	static const struct rec_entry seed[] = { { 1, 0x51, FSID_B }, { 0, 0, NULL } };
	static const struct rec_entry sprout[] = { { 1, 0x51, FSID_B }, { 2, 0xa2, FSID_A }, { 0, 0, NULL } };
	struct inventory inv = { 0 };
	struct btrfs_fs_list l = { 0 };
	struct diag_list diags = { 0 };
	const struct btrfs_filesystem *fs;
	char buf[512];

	add_recorded(&inv, "/dev/sds", FSID_B, 1, 0x51, 5, seed);
	inv.devs[0].btrfs.seeding = true;
	add_recorded(&inv, "/dev/sdp", FSID_A, 2, 0xa2, 30, sprout);
	assert_int_equal(btrfs_group(&inv, &l, &diags), 0);
	assert_int_equal(diags.n, 0);
	fs = btrfs_fs_list_find(&l, FSID_A);
	assert_non_null(fs);
	assert_int_equal(fs->n_members, 2);
	assert_int_equal(fs->n_seeds, 1);
	assert_string_equal(fs->members[0].dev->devnode, "/dev/sdp");
	assert_false(fs->members[0].seed);
	assert_string_equal(fs->members[1].dev->devnode, "/dev/sds");
	assert_true(fs->members[1].seed);
	assert_int_equal(fs->num_devices, 2);
	assert_int_equal(btrfs_fs_problems(fs), 0);
	assert_null(btrfs_first_stale(fs));
	assert_non_null(strstr(btrfs_format_states(fs, buf, sizeof(buf)), "devid 1 ('/dev/sds') is its seed (btrfs " FSID_B ")"));
	/* the seed is a filesystem of its own too */
	assert_int_equal(btrfs_fs_list_find(&l, FSID_B)->n_members, 1);
	btrfs_fs_list_done(&l);

	/* without the seed: devid 1 missing */
	block_device_done(&inv.devs[0]);
	inv.devs[0] = inv.devs[1];
	inv.n_devs = 1;
	assert_int_equal(btrfs_group(&inv, &l, &diags), 0);
	assert_false(btrfs_filesystem_complete(&l.v[0]));
	assert_string_equal(btrfs_format_missing(&l.v[0], buf, sizeof(buf)), "devid 1 missing");
	btrfs_fs_list_done(&l);
	diag_list_done(&diags);
	inventory_done(&inv);
}

static void test_group_two_filesystems(void **state)
{
	struct inventory inv = { 0 };
	struct btrfs_fs_list l = { 0 };
	struct diag_list diags = { 0 };
	char buf[64];

	add_plain(&inv, "/dev/sda1", "ext4", "1234", "root", NULL, NULL);
	add_member(&inv, "/dev/sdc", FSID_B, 2, 2, 9, "pool", SYS_12);
	add_member(&inv, "/dev/sdd", FSID_A, 1, 1, 3, NULL, SYS_1);
	add_member(&inv, "/dev/sdb", FSID_B, 1, 2, 9, "pool", SYS_12);
	assert_int_equal(btrfs_group(&inv, &l, &diags), 0);
	assert_int_equal(diags.n, 0);
	assert_int_equal(l.n, 2);
	assert_string_equal(l.v[0].fsid, FSID_A);
	assert_null(l.v[0].label);
	assert_int_equal(l.v[0].n_members, 1);
	assert_string_equal(l.v[1].fsid, FSID_B);
	assert_string_equal(l.v[1].label, "pool");
	assert_int_equal(l.v[1].num_devices, 2);
	assert_int_equal(l.v[1].n_members, 2);
	assert_int_equal(l.v[1].members[0].devid, 1);
	assert_string_equal(l.v[1].members[0].dev->devnode, "/dev/sdb");
	assert_int_equal(l.v[1].members[1].devid, 2);
	assert_string_equal(l.v[1].members[1].dev->devnode, "/dev/sdc");
	assert_true(btrfs_filesystem_complete(&l.v[0]));
	assert_true(btrfs_filesystem_complete(&l.v[1]));
	assert_string_equal(btrfs_format_missing(&l.v[1], buf, sizeof(buf)), "");
	assert_ptr_equal(btrfs_fs_list_find(&l, "BBBBBBBB-0000-4000-8000-000000000002"), &l.v[1]);
	assert_null(btrfs_fs_list_find(&l, "cccccccc-0000-4000-8000-000000000002"));
	btrfs_fs_list_done(&l);
	inventory_done(&inv);
}

static void test_group_empty(void **state)
{
	struct inventory inv = { 0 };
	struct btrfs_fs_list l = { 0 };
	struct diag_list diags = { 0 };

	assert_int_equal(btrfs_group(&inv, &l, &diags), 0);
	assert_int_equal(l.n, 0);
	btrfs_fs_list_done(&l);
	btrfs_fs_list_done(&l); /* idempotent */
}

/* One filesystem with members @present (devids) of @num, each naming @sys. */
static void check_missing(uint64_t num, const uint64_t *present, size_t n_present,
			  const uint64_t *sys, const char *want, size_t n_missing, uint64_t unknown)
{
	struct inventory inv = { 0 };
	struct btrfs_fs_list l = { 0 };
	struct diag_list diags = { 0 };
	char buf[128], node[32];

	for (size_t i = 0; i < n_present; i++) {
		snprintf(node, sizeof(node), "/dev/loop%zu", i);
		add_member(&inv, node, FSID_A, present[i], num, 5, "m", sys);
	}
	assert_int_equal(btrfs_group(&inv, &l, &diags), 0);
	assert_int_equal(l.n, 1);
	assert_int_equal(l.v[0].n_missing, n_missing);
	assert_int_equal(l.v[0].n_unknown_missing, unknown);
	assert_string_equal(btrfs_format_missing(&l.v[0], buf, sizeof(buf)), want);
	assert_int_equal(btrfs_filesystem_complete(&l.v[0]), want[0] == '\0');
	btrfs_fs_list_done(&l);
	inventory_done(&inv);
	diag_list_done(&diags);
}

static void test_missing(void **state)
{
	static const uint64_t p1[] = { 1 }, p12[] = { 1, 2 }, p3[] = { 3 };
	static const uint64_t sys123[] = { 1, 2, 3, 0 };

	check_missing(2, p12, 2, SYS_12, "", 0, 0);
	check_missing(2, p1, 1, SYS_12, "devid 2 missing", 1, 0);
	check_missing(3, p1, 1, sys123, "devids 2, 3 missing", 2, 0);
	check_missing(2, p1, 1, SYS_1, "1 member missing", 0, 1);
	check_missing(4, p1, 1, SYS_1, "3 members missing", 0, 3);
	check_missing(3, p1, 1, SYS_12, "devid 2 and 1 other member missing", 1, 1);
	check_missing(5, p3, 1, SYS_23, "devid 2 and 3 other members missing", 1, 3);
	/* more members than num_devices claims: nothing unknown, clamped */
	check_missing(1, p12, 2, SYS_12, "", 0, 0);
}

static void test_format_truncates(void **state)
{
	uint64_t missing[] = { 1000000001, 1000000002, 1000000003 };
	struct btrfs_filesystem fs = { .missing = missing, .n_missing = 3, .n_unknown_missing = 7 };
	char buf[12];

	memset(buf, 'X', sizeof(buf));
	btrfs_format_missing(&fs, buf, sizeof(buf));
	assert_int_equal(strlen(buf), sizeof(buf) - 1);
	assert_memory_equal(buf, "devids 1000", 11);
	buf[0] = 'Z';
	btrfs_format_missing(&fs, buf, 0);
	assert_int_equal(buf[0], 'Z');
}

/* Duplicate (fsid, devid): a clone; neither device is a member, the
 * warning names both, the devid and their generations. */
static void test_duplicate_devid(void **state)
{
	struct inventory inv = { 0 };
	struct btrfs_fs_list l = { 0 };
	struct diag_list diags = { 0 };
	char buf[1024];

	add_member(&inv, "/dev/sdb", FSID_A, 1, 2, 5, "old", SYS_12);
	add_member(&inv, "/dev/sdx", FSID_A, 1, 2, 9, "new", SYS_12);
	add_member(&inv, "/dev/sdc", FSID_A, 2, 2, 9, "new", SYS_12);
	assert_int_equal(btrfs_group(&inv, &l, &diags), 0);
	assert_int_equal(l.n, 1);
	assert_int_equal(l.v[0].n_members, 1);
	assert_string_equal(l.v[0].members[0].dev->devnode, "/dev/sdc");
	assert_int_equal(l.v[0].n_clones, 1);
	assert_int_equal(l.v[0].clones[0].devid, 1);
	assert_string_equal(l.v[0].clones[0].a->devnode, "/dev/sdx");
	assert_string_equal(l.v[0].clones[0].b->devnode, "/dev/sdb");
	assert_string_equal(l.v[0].label, "new");
	/* the cloned devid is present, not missing; but never complete */
	assert_int_equal(l.v[0].n_missing, 0);
	assert_int_equal(l.v[0].n_unknown_missing, 0);
	assert_false(btrfs_filesystem_complete(&l.v[0]));
	assert_int_equal(diag_count(&diags, DIAG_WARNING), 1);
	assert_int_equal(diag_count(&diags, DIAG_ERROR), 0);
	assert_non_null(strstr(diags.v[0].msg, "'/dev/sdx'"));
	assert_non_null(strstr(diags.v[0].msg, "'/dev/sdb'"));
	assert_non_null(strstr(diags.v[0].msg, "devid 1"));
	assert_non_null(strstr(diags.v[0].msg, "generations 9 and 5"));
	assert_non_null(strstr(diags.v[0].msg, FSID_A));
	assert_string_equal(btrfs_format_clones(&l.v[0], buf, sizeof(buf)), diags.v[0].msg);
	btrfs_fs_list_done(&l);
	inventory_done(&inv);
	diag_list_done(&diags);
}

/* A single-device filesystem on two copies: no member at all. */
static void test_clone_single(void **state)
{
	struct inventory inv = { 0 };
	struct btrfs_fs_list l = { 0 };
	struct diag_list diags = { 0 };
	char buf[16];

	add_member(&inv, "/dev/loop1", FSID_A, 1, 1, 7, NULL, SYS_1);
	add_member(&inv, "/dev/loop0", FSID_A, 1, 1, 7, NULL, SYS_1);
	assert_int_equal(btrfs_group(&inv, &l, &diags), 0);
	assert_int_equal(l.v[0].n_members, 0);
	assert_int_equal(l.v[0].n_clones, 1);
	assert_string_equal(l.v[0].clones[0].a->devnode, "/dev/loop0"); /* same generation: by name */
	assert_false(btrfs_filesystem_complete(&l.v[0]));
	assert_string_equal(btrfs_format_missing(&l.v[0], buf, sizeof(buf)), "");
	assert_non_null(strstr(diags.v[0].msg, "generations 7 and 7"));
	/* truncation stays inside the buffer */
	assert_int_equal(strlen(btrfs_format_clones(&l.v[0], buf, sizeof(buf))), sizeof(buf) - 1);
	btrfs_fs_list_done(&l);
	inventory_done(&inv);
	diag_list_done(&diags);
}

/* A member that was away while the filesystem was written to. */
static void test_stale_member(void **state)
{
	struct inventory inv = { 0 };
	struct btrfs_fs_list l = { 0 };
	struct diag_list diags = { 0 };
	char buf[512];

	add_member(&inv, "/dev/sdb", FSID_A, 1, 2, 12, NULL, SYS_12);
	add_member(&inv, "/dev/sdc", FSID_A, 2, 2, 8, NULL, SYS_12);
	assert_int_equal(btrfs_group(&inv, &l, &diags), 0);
	assert_int_equal(l.v[0].generation, 12);
	assert_false(btrfs_member_stale(&l.v[0], &l.v[0].members[0]));
	assert_true(btrfs_member_stale(&l.v[0], &l.v[0].members[1]));
	assert_true(btrfs_filesystem_complete(&l.v[0]));
	btrfs_format_stale(&l.v[0], buf, sizeof(buf));
	assert_string_equal(buf, "devid 2 ('/dev/sdc') is stale: generation 8 against 12 of the others; it was away while the filesystem was written to");
	/* the facts only: the warning, with the mount point, is the caller's */
	assert_int_equal(diags.n, 0);
	assert_string_equal(btrfs_stale_advice("/srv/my data", 0, NULL, buf, sizeof(buf)),
			    "only a scrub rewrites what it missed: run `btrfs scrub start '/srv/my data'`");
	assert_non_null(strstr(btrfs_stale_advice("/srv/d", STALE_SCRUB_STARTED, NULL, buf, sizeof(buf)), "`btrfs scrub status /srv/d`"));
	assert_null(strstr(btrfs_stale_advice(NULL, 0, NULL, buf, sizeof(buf)), "MOUNTPOINT"));
	/* a scrub only where one can work: read-only, a member not in use */
	assert_non_null(strstr(btrfs_stale_advice("/srv/d", STALE_MOUNTED_RO, NULL, buf, sizeof(buf)),
			       "run `mount -o remount,rw /srv/d`, then `btrfs scrub start /srv/d`"));
	assert_non_null(strstr(btrfs_stale_advice("/srv/d", STALE_MEMBER_UNUSED | STALE_MOUNTED_RO, NULL, buf, sizeof(buf)),
			       "run `umount /srv/d && storaged start`, then `btrfs scrub start /srv/d`"));
	/* the start it advises is storaged as this one was run */
	assert_non_null(strstr(btrfs_stale_advice("/srv/d", STALE_MEMBER_UNUSED, "storaged -c '/etc/my s.conf'", buf,
						  sizeof(buf)),
			       "run `umount /srv/d && storaged -c '/etc/my s.conf' start`"));
	btrfs_fs_list_done(&l);
	diag_list_done(&diags);
	/* equal generations: nothing stale, no warning */
	inv.devs[1].btrfs.generation = 12;
	assert_int_equal(btrfs_group(&inv, &l, &diags), 0);
	assert_string_equal(btrfs_format_stale(&l.v[0], buf, sizeof(buf)), "");
	assert_int_equal(diags.n, 0);
	btrfs_fs_list_done(&l);
	inventory_done(&inv);
}

/* What scan's exit status comes from: each problem on its own, and a
 * device that could not be read as the member it could be. */
static void test_fs_problems(void **state)
{
	struct inventory inv = { 0 };
	struct btrfs_fs_list l = { 0 };
	struct diag_list diags = { 0 };
	struct unreadable_device unknown = { .devnode = (char *)"/dev/vda" },
				 ext4 = { .fs_type = (char *)"ext4" },
				 other = { .fs_type = (char *)"btrfs", .fs_uuid = (char *)FSID_B },
				 same = { .fs_type = (char *)"btrfs", .fs_uuid = (char *)FSID_A },
				 /* the mount table: what is mounted is present */
				 mounted_ext4 = { .fs_type = (char *)"ext4", .source = UNREADABLE_BY_MOUNTS },
				 mounted_other = { .fs_type = (char *)"btrfs", .fs_uuid = (char *)FSID_B,
						   .source = UNREADABLE_BY_MOUNTS },
				 mounted_same = { .fs_type = (char *)"btrfs", .fs_uuid = (char *)FSID_A,
						  .source = UNREADABLE_BY_MOUNTS },
				 mounted_btrfs = { .fs_type = (char *)"btrfs", .source = UNREADABLE_BY_MOUNTS };

	add_member(&inv, "/dev/sdb", FSID_A, 1, 2, 12, NULL, SYS_12);
	assert_int_equal(btrfs_group(&inv, &l, &diags), 0);
	assert_int_equal(btrfs_fs_problems(&l.v[0]), BTRFS_FS_INCOMPLETE);
	btrfs_fs_list_done(&l);
	add_member(&inv, "/dev/sdc", FSID_A, 2, 2, 12, NULL, SYS_12);
	assert_int_equal(btrfs_group(&inv, &l, &diags), 0);
	assert_int_equal(btrfs_fs_problems(&l.v[0]), 0);
	btrfs_fs_list_done(&l);
	inv.devs[1].btrfs.generation = 8;
	assert_int_equal(btrfs_group(&inv, &l, &diags), 0);
	assert_int_equal(btrfs_fs_problems(&l.v[0]), BTRFS_FS_STALE);
	btrfs_fs_list_done(&l);
	inv.devs[1].btrfs.generation = 12;
	add_member(&inv, "/dev/sdd", FSID_A, 2, 2, 12, NULL, SYS_12); /* a clone of devid 2 */
	assert_int_equal(btrfs_group(&inv, &l, &diags), 0);
	assert_true(btrfs_fs_problems(&l.v[0]) & BTRFS_FS_AMBIGUOUS);
	btrfs_fs_list_done(&l);
	inventory_done(&inv);
	diag_list_done(&diags);

	assert_true(inventory_could_be_member(&unknown, FSID_A));
	assert_false(inventory_could_be_member(&ext4, FSID_A));
	assert_false(inventory_could_be_member(&other, FSID_A));
	assert_true(inventory_could_be_member(&same, FSID_A));
	assert_false(inventory_could_be_member(&mounted_ext4, FSID_A));
	assert_false(inventory_could_be_member(&mounted_other, FSID_A));
	assert_false(inventory_could_be_member(&mounted_same, FSID_A));
	/* a mounted btrfs whose fsid sysfs did not tell */
	assert_true(inventory_could_be_member(&mounted_btrfs, FSID_A));
}

/* num_devices and label come from the newest superblock (device added). */
static void test_newest_generation_wins(void **state)
{
	static const uint64_t sys13[] = { 1, 3, 0 };
	struct inventory inv = { 0 };
	struct btrfs_fs_list l = { 0 };
	struct diag_list diags = { 0 };
	char buf[64];

	add_member(&inv, "/dev/sdb", FSID_A, 1, 3, 20, "grown", sys13);
	add_member(&inv, "/dev/sdc", FSID_A, 2, 2, 10, "small", SYS_12);
	assert_int_equal(btrfs_group(&inv, &l, &diags), 0);
	assert_int_equal(l.v[0].num_devices, 3);
	assert_string_equal(l.v[0].label, "grown");
	assert_string_equal(btrfs_format_missing(&l.v[0], buf, sizeof(buf)), "devid 3 missing");
	btrfs_fs_list_done(&l);
	inventory_done(&inv);
	diag_list_done(&diags);
}

static void test_find(void **state)
{
	struct inventory inv = { 0 };

	add_plain(&inv, "/dev/sda1", "ext4", "3b1d0f62-0d0c-4b7a-9f59-2c7a1d5e8b10", "root",
		  "6a0f1c2e-01", "system root");
	add_member(&inv, "/dev/sdb", FSID_A, 1, 2, 5, "pool", SYS_12);
	add_member(&inv, "/dev/sdc", FSID_A, 2, 2, 5, "pool", SYS_12);
	add_plain(&inv, "/dev/sdd", NULL, NULL, NULL, NULL, NULL);

	assert_ptr_equal(inventory_find(&inv, "/dev/sda1"), &inv.devs[0]);
	assert_ptr_equal(inventory_find(&inv, "/dev/sdd"), &inv.devs[3]);
	assert_null(inventory_find(&inv, "/dev/sda"));
	assert_ptr_equal(inventory_find(&inv, "UUID=3B1D0F62-0D0C-4B7A-9F59-2C7A1D5E8B10"), &inv.devs[0]);
	assert_ptr_equal(inventory_find(&inv, "UUID=" FSID_A), &inv.devs[1]); /* first */
	assert_ptr_equal(inventory_find(&inv, "LABEL=pool"), &inv.devs[1]);
	assert_null(inventory_find(&inv, "LABEL=POOL")); /* labels are exact */
	assert_ptr_equal(inventory_find(&inv, "PARTUUID=6A0F1C2E-01"), &inv.devs[0]);
	assert_ptr_equal(inventory_find(&inv, "PARTLABEL=system root"), &inv.devs[0]);
	assert_null(inventory_find(&inv, "PARTLABEL=system"));
	assert_ptr_equal(inventory_find(&inv, "/dev/disk/by-uuid/" FSID_A), &inv.devs[1]);
	assert_ptr_equal(inventory_find(&inv, "/dev/disk/by-partlabel/system\\x20root"), &inv.devs[0]);
	assert_ptr_equal(inventory_find(&inv, "/dev/disk/by-label/root"), &inv.devs[0]);
	assert_null(inventory_find(&inv, "UUID="));
	assert_null(inventory_find(&inv, "LABEL="));
	assert_null(inventory_find(&inv, "nonsense"));
	assert_null(inventory_find(&inv, ""));
	inventory_done(&inv);
}

/* ID=X is util-linux's /dev/disk/by-id/X: found by the device's by-id
 * names, either way of writing it (udev's \xNN escapes decoded). */
static void test_find_by_id(void **state)
{
	char *ids[] = { (char *)"ata-DISK 1", (char *)"wwn-0x5000c500a1b2c3d4", NULL };
	struct block_device dev = { .devnode = (char *)"/dev/sdb", .ids = ids };
	struct inventory inv = { .devs = &dev, .n_devs = 1 };

	assert_ptr_equal(inventory_find(&inv, "ID=wwn-0x5000c500a1b2c3d4"), &dev);
	assert_ptr_equal(inventory_find(&inv, "ID=ata-DISK 1"), &dev);
	assert_ptr_equal(inventory_find(&inv, "/dev/disk/by-id/ata-DISK\\x201"), &dev);
	assert_ptr_equal(inventory_find(&inv, "/dev/sdb"), &dev);
	assert_null(inventory_find(&inv, "ID=ata-DISK"));
	assert_null(inventory_find(&inv, "UUID=wwn-0x5000c500a1b2c3d4"));
	assert_null(inventory_find(&inv, "/dev/disk/by-id/other"));
	(void)state;
}

static void test_fixture_good(void **state)
{
	struct inventory inv = { 0 };
	struct btrfs_fs_list l = { 0 };
	struct diag_list diags = { 0 };
	const struct btrfs_filesystem *fs;
	const struct block_device *d;
	char buf[64];

	assert_int_equal(inventory_load_fixture(&inv, FIXTURES "/inventory/raid1-degraded.ini", &diags), 0);
	diag_print(&diags, stderr);
	assert_int_equal(diags.n, 0);
	assert_int_equal(inv.n_devs, 6);
	d = inventory_find(&inv, "/dev/vdb");
	assert_non_null(d);
	assert_true(d->is_btrfs);
	assert_string_equal(d->btrfs.fsid_str, "5e81a0c4-7d2b-4b8e-9c1f-0a1b2c3d4e5f");
	assert_string_equal(d->uuid, "5E81A0C4-7D2B-4B8E-9C1F-0A1B2C3D4E5F");
	assert_int_equal(d->btrfs.dev_uuid[0], 0x11);
	assert_int_equal(d->devno, makedev(252, 16));
	assert_string_equal(d->btrfs.label, "data");
	d = inventory_find(&inv, "/dev/vdf");
	assert_non_null(d);
	assert_null(d->type);
	assert_false(d->is_btrfs);
	d = inventory_find(&inv, "PARTLABEL=system root");
	assert_non_null(d);
	assert_string_equal(d->devnode, "/dev/vda1");
	assert_false(d->is_btrfs);
	assert_ptr_equal(inventory_find(&inv, "PARTUUID=6a0f1c2e-01"), d);

	assert_int_equal(btrfs_group(&inv, &l, &diags), 0);
	assert_int_equal(l.n, 3);
	fs = btrfs_fs_list_find(&l, "5e81a0c4-7d2b-4b8e-9c1f-0a1b2c3d4e5f");
	assert_non_null(fs);
	assert_false(btrfs_filesystem_complete(fs));
	assert_string_equal(btrfs_format_missing(fs, buf, sizeof(buf)), "devid 2 missing");
	fs = btrfs_fs_list_find(&l, "0f3c9e2a-1b7d-4c55-8e21-9a6b5c4d3e2f");
	assert_non_null(fs);
	assert_true(btrfs_filesystem_complete(fs));
	assert_int_equal(fs->n_members, 2);
	assert_string_equal(fs->members[0].dev->devnode, "/dev/vdd");
	assert_string_equal(fs->label, "pool");
	btrfs_fs_list_done(&l);
	inventory_done(&inv);
	diag_list_done(&diags);
}

static bool has_diag(const struct diag_list *dl, unsigned line, const char *needle)
{
	for (size_t i = 0; i < dl->n; i++)
		if (dl->v[i].line == line && dl->v[i].level == DIAG_ERROR &&
		    strstr(dl->v[i].msg, needle) && dl->v[i].file && strstr(dl->v[i].file, "bad.ini"))
			return true;
	return false;
}

static void test_fixture_bad(void **state)
{
	struct inventory inv = { .n_skipped = 77 };
	struct diag_list diags = { 0 };

	assert_int_equal(inventory_load_fixture(&inv, FIXTURES "/inventory/bad.ini", &diags), -EINVAL);
	assert_int_equal(inv.n_skipped, 77); /* untouched on failure */
	diag_print(&diags, stderr);
	/* inih reports no section headers: a section's own errors name the
	 * line of its first key (3, 10, 12, 16), and of the malformed lines
	 * (15, 17) only the first; line 16's indented key starts a key of
	 * its own after a header (no value to continue). */
	assert_true(has_diag(&diags, 1, "outside"));
	assert_true(has_diag(&diags, 3, "needs 'uuid'"));
	assert_true(has_diag(&diags, 5, "devid = 'zero'"));
	assert_true(has_diag(&diags, 6, "num_devices = '0'"));
	assert_true(has_diag(&diags, 7, "unknown key 'colour'"));
	assert_true(has_diag(&diags, 8, "'type' given twice"));
	assert_true(has_diag(&diags, 10, "unknown section '[disk /dev/vdc]'"));
	assert_true(has_diag(&diags, 12, "need 'type = btrfs'"));
	assert_true(has_diag(&diags, 15, "neither 'key = value' nor a '[device /dev/NAME]' header"));
	assert_true(has_diag(&diags, 16, "listed twice"));
	assert_true(has_diag(&diags, 23, "sys_devids = '1 x'"));
	assert_true(has_diag(&diags, 24, "devno = '8'"));
	assert_int_equal(diag_count(&diags, DIAG_ERROR), 12);
	diag_list_done(&diags);
	assert_int_equal(inventory_load_fixture(&inv, FIXTURES "/inventory/nonexistent.ini", &diags),
			 -ENOENT);
}

/* Lines longer than inih's buffer (a build-time limit) are one error each,
 * "line longer than N bytes" on their own line; the lines after them keep
 * their numbers. */
static void test_fixture_long_line(void **state)
{
	char path[] = "/tmp/test_btrfs_fixture.XXXXXX";
	struct inventory inv = { 0 };
	struct diag_list diags = { 0 };
	FILE *f;
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	assert_non_null(f);
	fprintf(f, "[device /dev/x]\nlabel = ");
	for (int i = 0; i < 6000; i++)
		fputc('a', f);
	fprintf(f, "\ntype = ext4\ncolour = red\n");
	fclose(f);
	assert_int_equal(inventory_load_fixture(&inv, path, &diags), -EINVAL);
	diag_print(&diags, stderr);
	assert_int_equal(diags.n, 2);
	assert_int_equal(diags.v[0].line, 2);
	assert_non_null(strstr(diags.v[0].msg, "line longer than"));
	assert_int_equal(diags.v[1].line, 4);
	diag_list_done(&diags);
	unlink(path);
}

static void test_ioctl_arguments(void **state)
{
	char *name = malloc(BTRFS_PATH_NAME_MAX + 2);

	assert_non_null(name);
	memset(name, 'a', BTRFS_PATH_NAME_MAX + 1);
	name[0] = '/';
	name[BTRFS_PATH_NAME_MAX + 1] = '\0';
	assert_int_equal(btrfs_register_device(name), -ENAMETOOLONG);
	assert_int_equal(btrfs_devices_ready(name), -ENAMETOOLONG);
	assert_int_equal(btrfs_register_device(""), -EINVAL);
	assert_int_equal(btrfs_devices_ready(NULL), -EINVAL);
	free(name);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_group_two_filesystems),
		cmocka_unit_test(test_stranger_other_filesystem),
		cmocka_unit_test(test_replace_target),
		cmocka_unit_test(test_stranger_forged_and_clone),
		cmocka_unit_test(test_two_whole_filesystems),
		cmocka_unit_test(test_made_up_record),
		cmocka_unit_test(test_removed_device_back),
		cmocka_unit_test(test_seed_sprout),
		cmocka_unit_test(test_group_empty),
		cmocka_unit_test(test_missing),
		cmocka_unit_test(test_format_truncates),
		cmocka_unit_test(test_duplicate_devid),
		cmocka_unit_test(test_newest_generation_wins),
		cmocka_unit_test(test_clone_single),
		cmocka_unit_test(test_stale_member),
		cmocka_unit_test(test_fs_problems),
		cmocka_unit_test(test_find),
		cmocka_unit_test(test_find_by_id),
		cmocka_unit_test(test_fixture_good),
		cmocka_unit_test(test_fixture_bad),
		cmocka_unit_test(test_fixture_long_line),
		cmocka_unit_test(test_ioctl_arguments),
	};

	return cmocka_run_group_tests_name("btrfs", tests, NULL, NULL);
}
