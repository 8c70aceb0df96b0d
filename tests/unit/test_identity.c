/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Device identity (case C13 and its kind): clones, duplicate tags, stale
 * members and the device a tag resolves to, through plan_build() on
 * inventory fixtures (inventory_load_fixture()); the sysfs ID= names on a
 * fake sysfs tree; the scrub targets after a run.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "devices/btrfs.h"
#include "parse/config.h"
#include "parse/fstab.h"
#include "devices/inventory.h"
#include "plan/plan.h"
#include "world/world.h"

#define SEC (UINT64_C(1000000))

#define FSID "5e81a0c4-7d2b-4b8e-9c1f-0a1b2c3d4e5f"

/* A btrfs member section of a fixture. */
#define MEMBER(node, devid, n, gen) \
	"[device " node "]\ntype = btrfs\nuuid = " FSID "\nlabel = pool\ndevid = " #devid \
	"\nnum_devices = " #n "\ngeneration = " #gen "\nsys_devids = 1 2\n"

static char tmpdir[] = "/tmp/test_identity.XXXXXX";

static int setup(void **state)
{
	assert_non_null(mkdtemp(tmpdir));
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "we");

	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
}

static void load_inventory(struct world *w, const char *text)
{
	struct diag_list dl = { 0 };
	char path[256];

	snprintf(path, sizeof(path), "%s/inventory.ini", tmpdir);
	write_file(path, text);
	assert_int_equal(inventory_load_fixture(&w->inv, path, &dl), 0);
	assert_int_equal(btrfs_group(&w->inv, &w->btrfs, &dl), 0);
	diag_list_done(&dl);
}

/* Plans the entry @source on /srv/x of @type against the fixture @inv. */
static void plan_one(struct world *w, const char *inv, const char *source, const char *type,
		     enum stale_member_policy stale)
{
	static struct fstab_entry e;
	struct diag_list dl = { 0 };
	struct plan_input in = { 0 };

	*w = (struct world){ 0 };
	e = (struct fstab_entry){ .line = 1,
				  .source = (char *)source,
				  .target = (char *)"/srv/x",
				  .fstype = (char *)type,
				  .options = (char *)"noauto,x-storaged",
				  .device_timeout_usec = USEC_UNSET,
				  .mount_timeout_usec = USEC_UNSET };
	w->cfg = (struct config){ .device_timeout_usec = 90 * SEC,
				  .mount_timeout_usec = 90 * SEC,
				  .jobs = 4,
				  .stale_member = stale };
	w->fstab = (struct fstab){ .file = (char *)"fstab", .entries = &e, .n_entries = 1 };
	load_inventory(w, inv);
	in = (struct plan_input){ .config = &w->cfg,
				  .fstab = &w->fstab,
				  .inventory = &w->inv,
				  .btrfs = &w->btrfs,
				  .ram_bytes = 1u << 30 };
	assert_int_equal(plan_build(&in, &w->plan, &dl), 0);
	assert_int_equal(diag_count(&dl, DIAG_ERROR), 0);
	diag_list_done(&dl);
}

static void world_free(struct world *w)
{
	plan_done(&w->plan);
	btrfs_fs_list_done(&w->btrfs);
	inventory_done(&w->inv);
}

static const struct plan_step *mount_step(const struct world *w)
{
	for (size_t i = 0; i < w->plan.n_steps; i++)
		if (w->plan.steps[i].kind == PLAN_MOUNT)
			return &w->plan.steps[i];
	fail_msg("no mount step");
	return NULL;
}

static size_t count_kind(const struct world *w, enum plan_step_kind k)
{
	size_t n = 0;

	for (size_t i = 0; i < w->plan.n_steps; i++)
		n += w->plan.steps[i].kind == k;
	return n;
}

/* C13: one-device btrfs on two copies: the entry fails naming both, the
 * fsid, the devid and the generations; nothing is registered. */
static void test_clone_refused(void **state)
{
	struct world w;
	const struct plan_step *s;
	struct world_failures fails;

	plan_one(&w, MEMBER("/dev/loop0", 1, 1, 7) MEMBER("/dev/loop1", 1, 1, 7), "UUID=" FSID,
		 "btrfs", STALE_MEMBER_WARN);
	s = mount_step(&w);
	assert_true(s->conflict);
	assert_non_null(strstr(s->note, "'/dev/loop0' and '/dev/loop1' both claim devid 1"));
	assert_non_null(strstr(s->note, "generations 7 and 7"));
	assert_non_null(strstr(s->note, FSID));
	assert_int_equal(count_kind(&w, PLAN_REGISTER), 0);
	assert_int_equal(count_kind(&w, PLAN_ASSEMBLE), 0);
	assert_int_equal(count_kind(&w, PLAN_WAIT_DEVICE), 0);
	assert_int_equal(world_predicted_failures(&w.plan, &fails, NULL, NULL), 0);
	assert_int_equal(fails.failed, 1);
	assert_int_equal(fails.skipped, 0);
	world_free(&w);
	/* by LABEL= and through a by-label path too */
	plan_one(&w, MEMBER("/dev/loop0", 1, 1, 7) MEMBER("/dev/loop1", 1, 1, 9),
		 "/dev/disk/by-label/pool", "auto", STALE_MEMBER_WARN);
	assert_true(mount_step(&w)->conflict);
	assert_non_null(strstr(mount_step(&w)->note, "generations 9 and 7"));
	world_free(&w);
}

/* RAID1 members share UUID= and LABEL=: no conflict; the mount is given a
 * member's device node. */
static void test_members_share_tags(void **state)
{
	struct world w;

	plan_one(&w, MEMBER("/dev/loop0", 1, 2, 7) MEMBER("/dev/loop1", 2, 2, 7), "LABEL=pool",
		 "btrfs", STALE_MEMBER_WARN);
	assert_false(mount_step(&w)->conflict);
	assert_string_equal(mount_step(&w)->devnode, "/dev/loop0");
	assert_int_equal(count_kind(&w, PLAN_REGISTER), 2);
	world_free(&w);
}

#define EXT4(node, uuid, label) \
	"[device " node "]\ntype = ext4\nuuid = " uuid "\nlabel = " label "\n"

/* Two devices with one tag (not one btrfs): an error naming both. */
static void test_duplicate_tag(void **state)
{
	static const char inv[] = EXT4("/dev/sdb1", "3b1d0f62-0d0c-4b7a-9f59-2c7a1d5e8b10", "data")
		EXT4("/dev/sdc1", "3b1d0f62-0d0c-4b7a-9f59-2c7a1d5e8b10", "data")
			EXT4("/dev/sdd1", "11111111-0d0c-4b7a-9f59-2c7a1d5e8b10",
			     "other") "[device /dev/sde1]\ntype = ext4\nuuid = 22222222-0d0c-4b7a-9f59-2c7a1d5e8b10\nlabel = other\npartlabel = p\n";
	static const char *const specs[] = { "LABEL=data", "UUID=3B1D0F62-0D0C-4B7A-9F59-2C7A1D5E8B10",
					     "/dev/disk/by-label/data", "LABEL=other" };
	struct world w;

	for (size_t i = 0; i < ARRAY_SIZE(specs); i++) {
		const struct plan_step *s;

		plan_one(&w, inv, specs[i], "ext4", STALE_MEMBER_WARN);
		s = mount_step(&w);
		assert_true(s->conflict);
		assert_non_null(strstr(s->note, "names two devices"));
		assert_non_null(strstr(s->note, i == 3 ? "'/dev/sdd1'" : "'/dev/sdb1'"));
		assert_non_null(strstr(s->note, i == 3 ? "'/dev/sde1'" : "'/dev/sdc1'"));
		assert_non_null(strstr(s->note, i == 1 ? "new UUID" : "new LABEL"));
		assert_null(s->devnode);
		world_free(&w);
	}
	/* a tag only one device has resolves to it */
	plan_one(&w, inv, "PARTLABEL=p", "ext4", STALE_MEMBER_WARN);
	assert_false(mount_step(&w)->conflict);
	assert_string_equal(mount_step(&w)->devnode, "/dev/sde1");
	world_free(&w);
	/* a device path is not resolved: libmount gets it as written */
	plan_one(&w, inv, "/dev/sdb1", "ext4", STALE_MEMBER_WARN);
	assert_false(mount_step(&w)->conflict);
	assert_null(mount_step(&w)->devnode);
	world_free(&w);
}

/* ID= from the fixture's ids (what udev or sysfs gave). */
static void test_id_tag(void **state)
{
	struct world w;

	plan_one(&w,
		 "[device /dev/vda1]\ntype = ext4\nids = virtio-disk0-part1 wwn-0x5000c500a1b2c3d4-part1\n"
		 "[device /dev/vdb]\ntype = ext4\nids = virtio-disk1\n",
		 "ID=wwn-0x5000c500a1b2c3d4-part1", "ext4", STALE_MEMBER_WARN);
	assert_false(mount_step(&w)->conflict);
	assert_string_equal(mount_step(&w)->devnode, "/dev/vda1");
	assert_int_equal(count_kind(&w, PLAN_WAIT_DEVICE), 0);
	world_free(&w);
	plan_one(&w, "[device /dev/vdb]\ntype = ext4\nids = virtio-disk1\n", "ID=virtio-disk9",
		 "ext4", STALE_MEMBER_WARN);
	assert_null(mount_step(&w)->devnode);
	assert_int_equal(count_kind(&w, PLAN_WAIT_DEVICE), 1);
	world_free(&w);
}

/* A stale member: warn and scrub mount; refuse does not, saying why. */
static void test_stale_policy(void **state)
{
	static const char inv[] = MEMBER("/dev/loop0", 1, 2, 12) MEMBER("/dev/loop1", 2, 2, 8);
	struct world w;

	plan_one(&w, inv, "UUID=" FSID, "btrfs", STALE_MEMBER_WARN);
	assert_false(mount_step(&w)->conflict);
	world_free(&w);
	plan_one(&w, inv, "UUID=" FSID, "btrfs", STALE_MEMBER_SCRUB);
	assert_false(mount_step(&w)->conflict);
	world_free(&w);
	plan_one(&w, inv, "UUID=" FSID, "btrfs", STALE_MEMBER_REFUSE);
	assert_true(mount_step(&w)->conflict);
	assert_non_null(strstr(mount_step(&w)->note,
			       "devid 2 ('/dev/loop1') is stale: generation 8 against 12"));
	assert_non_null(strstr(mount_step(&w)->note, "stale-member = refuse"));
	world_free(&w);
}

/* stale-member = scrub: a SCRUB step after the mount, only for a stale
 * member and only with that policy. */
static void test_scrub_step(void **state)
{
	static const char inv[] = MEMBER("/dev/loop0", 1, 2, 12) MEMBER("/dev/loop1", 2, 2, 8);
	const struct plan_step *scrub;
	struct world w;

	plan_one(&w, inv, "UUID=" FSID, "btrfs", STALE_MEMBER_SCRUB);
	assert_int_equal(count_kind(&w, PLAN_SCRUB), 1);
	scrub = &w.plan.steps[w.plan.n_steps - 1]; /* last: after what it waits for */
	assert_int_equal(scrub->kind, PLAN_SCRUB);
	assert_string_equal(scrub->fsid, FSID);
	assert_int_equal(scrub->devid, 2);
	assert_string_equal(scrub->note, "stale member devid 2");
	assert_int_equal(scrub->n_deps, 1);
	assert_ptr_equal(&w.plan.steps[scrub->deps[0].step], mount_step(&w));
	world_free(&w);
	/* the other policies: no scrub (refuse does not even mount) */
	plan_one(&w, inv, "UUID=" FSID, "btrfs", STALE_MEMBER_WARN);
	assert_int_equal(count_kind(&w, PLAN_SCRUB), 0);
	world_free(&w);
	plan_one(&w, inv, "UUID=" FSID, "btrfs", STALE_MEMBER_REFUSE);
	assert_int_equal(count_kind(&w, PLAN_SCRUB), 0);
	world_free(&w);
	/* nothing stale: no scrub */
	plan_one(&w, MEMBER("/dev/loop0", 1, 2, 12) MEMBER("/dev/loop1", 2, 2, 12), "UUID=" FSID,
		 "btrfs", STALE_MEMBER_SCRUB);
	assert_int_equal(count_kind(&w, PLAN_SCRUB), 0);
	world_free(&w);
}

static void mkattr(const char *dir, const char *rel, const char *value)
{
	char path[512], cmd[600];

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	snprintf(cmd, sizeof(cmd), "mkdir -p \"$(dirname '%s')\"", path);
	assert_int_equal(system(cmd), 0);
	write_file(path, value);
}

/* ID= without udev: the names udev would link, from sysfs. */
static void test_sysfs_ids(void **state)
{
	char vda[256], vda1[512], nvme[256], sda[256], loop[256];
	char **ids = NULL;

	snprintf(vda, sizeof(vda), "%s/virtio1/block/vda", tmpdir);
	snprintf(vda1, sizeof(vda1), "%s/vda1", vda);
	mkattr(vda, "serial", "disk0\n");
	mkattr(vda1, "partition", "1\n");
	assert_int_equal(inventory_sysfs_ids(vda, false, &ids), 0);
	assert_string_equal(ids[0], "virtio-disk0");
	strv_free(ids);
	ids = NULL;
	assert_int_equal(inventory_sysfs_ids(vda1, true, &ids), 0);
	assert_string_equal(ids[0], "virtio-disk0-part1");
	assert_null(ids[1]);
	strv_free(ids);
	ids = NULL;

	snprintf(nvme, sizeof(nvme), "%s/nvme/nvme0n1", tmpdir);
	mkattr(nvme, "device/model", "Samsung SSD 970 EVO Plus 1TB            \n");
	mkattr(nvme, "device/serial", "  S4EWNX0N123456W \n");
	mkattr(nvme, "wwid", "eui.0025385b91b2c3d4\n");
	assert_int_equal(inventory_sysfs_ids(nvme, false, &ids), 0);
	assert_string_equal(ids[0], "nvme-Samsung_SSD_970_EVO_Plus_1TB_S4EWNX0N123456W");
	assert_string_equal(ids[1], "nvme-eui.0025385b91b2c3d4");
	strv_free(ids);
	ids = NULL;

	snprintf(sda, sizeof(sda), "%s/scsi/sda", tmpdir);
	mkattr(sda, "device/wwid", "naa.5000c500a1b2c3d4\n");
	assert_int_equal(inventory_sysfs_ids(sda, false, &ids), 0);
	assert_string_equal(ids[0], "wwn-0x5000c500a1b2c3d4");
	strv_free(ids);
	ids = NULL;

	/* a loop device has no such names */
	snprintf(loop, sizeof(loop), "%s/virtual/loop0", tmpdir);
	mkattr(loop, "size", "2048\n");
	assert_int_equal(inventory_sysfs_ids(loop, false, &ids), 0);
	assert_null(ids);
}

/* The fixture's ids key: errors say what is wrong. */
static void test_fixture_ids(void **state)
{
	struct inventory inv = { 0 };
	struct diag_list dl = { 0 };
	char path[256];

	snprintf(path, sizeof(path), "%s/bad.ini", tmpdir);
	write_file(path, "[device /dev/sda]\ntype = ext4\nids = a  b a\n");
	assert_int_equal(inventory_load_fixture(&inv, path, &dl), 0);
	assert_string_equal(inv.devs[0].ids[0], "a");
	assert_string_equal(inv.devs[0].ids[1], "b");
	assert_null(inv.devs[0].ids[2]);
	assert_ptr_equal(inventory_find(&inv, "ID=b"), &inv.devs[0]);
	assert_ptr_equal(inventory_find(&inv, "/dev/disk/by-id/a"), &inv.devs[0]);
	assert_null(inventory_find_other(&inv, "ID=b", &inv.devs[0]));
	inventory_done(&inv);
}

/* stale-member = in storaged.conf. */
static void test_config_key(void **state)
{
	static const char *const vals[] = { "warn", "scrub", "refuse" };

	for (size_t i = 0; i < ARRAY_SIZE(vals); i++) {
		struct config c;
		struct diag_list dl = { 0 };
		char text[64];

		assert_int_equal(config_init(&c), 0);
		snprintf(text, sizeof(text), "[storaged]\nstale-member = %s\n", vals[i]);
		assert_int_equal(config_parse_buf(&c, text, strlen(text), "t.conf", &dl), 0);
		assert_int_equal(c.stale_member, (enum stale_member_policy)i);
		config_done(&c);
	}
	{
		struct config c;
		struct diag_list dl = { 0 };
		const char *text = "[storaged]\nstale-member = sometimes\n";

		assert_int_equal(config_init(&c), 0);
		assert_int_equal(c.stale_member, STALE_MEMBER_WARN);
		assert_int_equal(config_parse_buf(&c, text, strlen(text), "t.conf", &dl), -EINVAL);
		assert_non_null(strstr(dl.v[0].msg, "'warn', 'scrub' or 'refuse'"));
		diag_list_done(&dl);
		config_done(&c);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_clone_refused), cmocka_unit_test(test_members_share_tags),
		cmocka_unit_test(test_duplicate_tag), cmocka_unit_test(test_id_tag),
		cmocka_unit_test(test_stale_policy),  cmocka_unit_test(test_scrub_step),
		cmocka_unit_test(test_sysfs_ids),     cmocka_unit_test(test_fixture_ids),
		cmocka_unit_test(test_config_key),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
