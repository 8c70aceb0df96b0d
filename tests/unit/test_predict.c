/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The pure parts of predict.c and json_out.c. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "area/area_precheck.h"
#include "shared/json_out.h"
#include "world/predict.h"
#include "shared/util.h"

/* Who can write what an entry mounts decides whether nosuid and nodev
 * must be there (issue 39 item 5). */
static void test_user_source(void **state)
{
	/* root's image or device, closed to others: nothing to say */
	assert_null(predict_user_source_lacks(0, 0, S_IFREG | 0644, false, false));
	assert_null(predict_user_source_lacks(0, 6, S_IFBLK | 0660, false, false));
	/* a user's image: what is missing, in mount(8)'s spelling */
	assert_string_equal(predict_user_source_lacks(1000, 1000, S_IFREG | 0600, false, false), "nosuid,nodev");
	assert_string_equal(predict_user_source_lacks(1000, 1000, S_IFREG | 0600, true, false), "nodev");
	assert_string_equal(predict_user_source_lacks(1000, 1000, S_IFREG | 0600, false, true), "nosuid");
	assert_null(predict_user_source_lacks(1000, 1000, S_IFREG | 0600, true, true));
	/* root's, but others (or a group for a file) may write it */
	assert_string_equal(predict_user_source_lacks(0, 0, S_IFREG | 0666, false, false), "nosuid,nodev");
	assert_string_equal(predict_user_source_lacks(0, 100, S_IFREG | 0664, false, false), "nosuid,nodev");
	assert_null(predict_user_source_lacks(0, 0, S_IFREG | 0664, false, false));
	/* a device's group ("disk") writes every disk already */
	assert_null(predict_user_source_lacks(0, 6, S_IFBLK | 0660, false, false));
	assert_string_equal(predict_user_source_lacks(0, 6, S_IFBLK | 0666, true, false), "nodev");
	assert_string_equal(predict_user_source_lacks(1000, 6, S_IFBLK | 0600, false, false), "nosuid,nodev");
	(void)state;
}

static void test_filesystems(void **state)
{
	_cleanup_strv_free_ char **t = NULL, **dev = NULL;

	(void)state;
	assert_int_equal(
		predict_parse_filesystems_buf("nodev\tsysfs\nnodev\ttmpfs\n\text4\n\tbtrfs", &t, &dev), 0);
	assert_int_equal(strv_length(t), 4);
	assert_true(strv_contains(t, "tmpfs")); /* nodev ones count */
	assert_true(strv_contains(t, "btrfs")); /* last line without newline */
	assert_false(strv_contains(t, "nodev"));
	/* the ones on a block device */
	assert_int_equal(strv_length(dev), 2);
	assert_true(strv_contains(dev, "ext4"));
	assert_true(strv_contains(dev, "btrfs"));
	assert_int_equal(predict_parse_filesystems_buf("", &t, NULL), 0);
	assert_int_equal(strv_length(t), 4);
	/* blanks around a name are no part of it, in both lists (freed whole) */
	assert_int_equal(predict_parse_filesystems_buf("\t xfs \nnodev\t  ramfs\n", &t, &dev), 0);
	assert_true(strv_contains(t, "xfs"));
	assert_true(strv_contains(t, "ramfs"));
	assert_true(strv_contains(dev, "xfs"));
	assert_int_equal(strv_length(dev), 3);
}

/* comp_algorithm as zram prints it: the current one in brackets */
static void test_zram_compressors(void **state)
{
	_cleanup_strv_free_ char **v = NULL;

	(void)state;
	assert_int_equal(predict_parse_zram_compressors_buf("lzo [lzo-rle] lz4 lz4hc 842 zstd \n", &v), 0);
	assert_int_equal(strv_length(v), 6);
	assert_string_equal(v[1], "lzo-rle");
	assert_true(strv_contains(v, "zstd"));
	assert_false(strv_contains(v, "[lzo-rle]"));
	assert_int_equal(predict_parse_zram_compressors_buf("[zstd]", &v), 0);
	assert_int_equal(strv_length(v), 7);
	assert_string_equal(v[6], "zstd");
	assert_int_equal(predict_parse_zram_compressors_buf("\n", &v), 0);
	assert_int_equal(strv_length(v), 7);
}

static void test_modules_alias(void **state)
{
	_cleanup_strv_free_ char **t = NULL;

	(void)state;
	assert_int_equal(predict_parse_modules_alias_buf("# comment\nalias fs-xfs xfs\n"
							 "alias pci:v00008086d* e1000e\n"
							 "alias fs-\nalias fs-nfs4 nfsv4\n",
							 &t),
			 0);
	assert_int_equal(strv_length(t), 2);
	assert_true(strv_contains(t, "xfs"));
	assert_true(strv_contains(t, "nfs4"));
}

static void test_fstype_in(void **state)
{
	char *types[] = { "ext4", "fuse", "tmpfs", NULL };

	(void)state;
	assert_true(predict_fstype_in("ext4", types));
	assert_false(predict_fstype_in("brtfs", types));
	assert_false(predict_fstype_in("ext", types)); /* a prefix is no type */
	assert_true(predict_fstype_in("fuse.sshfs", types)); /* main type */
	assert_true(predict_fstype_in("xfs,ext4", types)); /* any of a list */
	assert_false(predict_fstype_in("xfs,btrfs", types));
	assert_false(predict_fstype_in("", types));
	assert_false(predict_fstype_in(",", types));
}

static void test_json_empty_arrays(void **state)
{
	char a[] = "{\"deps\": [\n   null\n],\"x\": [1, 2], \"s\": \"[ null ]\", \"n\": null, \"e\":\"\\\"[null]\"}";

	(void)state;
	json_fix_empty_arrays(a);
	assert_string_equal(a, "{\"deps\": [],\"x\": [1, 2], \"s\": \"[ null ]\", \"n\": null, \"e\":\"\\\"[null]\"}");
}

/* Bytes that are not UTF-8 (a mount point in Latin-1) become the text
 * \xNN inside their string; valid multibyte text is kept as it is. */
static void test_json_non_utf8(void **state)
{
	char *buf = NULL;
	size_t sz = 0;
	FILE *m = open_memstream(&buf, &sz);

	(void)state;
	assert_non_null(m);
	assert_int_equal(json_fputs("{\"p\": \"/m\xe9"
				    "dia/\xc3\xa9t\xc3\xa9\xed\xa0\x80\xc3\"}",
				    m),
			 0);
	fclose(m);
	assert_string_equal(buf, "{\"p\": \"/m\\\\xe9dia/\xc3\xa9t\xc3\xa9\\\\xed\\\\xa0\\\\x80\\\\xc3\"}");
	free(buf);
}

/* A plan of @n mount steps of @e (no dependencies) on this machine's paths,
 * where the kernel knows overlay and tmpfs, and ext4 and vfat on block
 * devices; the prediction of step @i. */
static const char *predict_mounts(struct fstab_entry *e, struct plan_step *steps, size_t n,
				  const char *dir, struct predictions *pp, size_t i)
{
	char types[4096];
	FILE *f;
	struct fstab fs = { .file = "fstab" };
	struct plan_input in = { .fstab = &fs };
	struct predict_sources ps = { .filesystems_path = types, .helper_dirs = dir, .system_paths = true };
	struct plan p = { .steps = steps, .n_steps = n };
	static const struct entry_facts none;

	snprintf(types, sizeof(types), "%s/filesystems", dir);
	f = fopen(types, "we");
	assert_non_null(f);
	fputs("nodev\toverlay\nnodev\ttmpfs\n\text4\n\tvfat\n", f);
	fclose(f);
	for (size_t k = 0; k < n; k++)
		steps[k] = (struct plan_step){ .kind = PLAN_MOUNT, .entry = &e[k], .facts = &none };
	assert_true(predict_plan(&in, &ps, &p, pp) >= 0);
	unlink(types);
	return steps[i].predicted;
}

static void test_overlay_dirs(void **state)
{
	char dir[] = "/tmp/test_predict.XXXXXX", low[64], up[64], work[64], mnt[64], ovl[64], below[80];
	struct fstab_path paths[3];
	struct fstab_entry e[2] = { 0 };
	struct plan_step steps[2];
	struct predictions pp;
	const char *why;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(low, sizeof(low), "%s/low", dir);
	snprintf(up, sizeof(up), "%s/up", dir);
	snprintf(work, sizeof(work), "%s/work", dir);
	snprintf(mnt, sizeof(mnt), "%s/mnt", dir);
	snprintf(ovl, sizeof(ovl), "%s/ovl", dir);
	assert_int_equal(mkdir(ovl, 0700), 0);
	assert_int_equal(mkdir(low, 0700), 0);
	assert_int_equal(mkdir(work, 0700), 0);
	paths[0] = (struct fstab_path){ .option = "lowerdir", .path = low };
	paths[1] = (struct fstab_path){ .option = "upperdir", .path = up };
	paths[2] = (struct fstab_path){ .option = "workdir", .path = work };
	e[0] = (struct fstab_entry){
		.line = 3, .source = "overlay", .target = ovl, .fstype = "overlay", .paths = paths, .n_paths = 3
	};
	/* upperdir missing: named with its option and the fstab line */
	why = predict_mounts(e, steps, 1, dir, &pp, 0);
	assert_non_null(why);
	assert_non_null(strstr(why, "upperdir="));
	assert_non_null(strstr(why, "/up does not exist: create it (fstab:3)"));
	predictions_done(&pp);
	/* below a mount still to be made (step 1 mounts mnt): not known */
	snprintf(below, sizeof(below), "%s/up", mnt);
	paths[1].path = below;
	e[1] = e[0];
	e[1].target = mnt;
	e[1].fstype = "tmpfs";
	e[1].n_paths = 0;
	e[1].mkdir = true;
	assert_null(predict_mounts(e, steps, 2, dir, &pp, 0));
	predictions_done(&pp);
	/* all there: nothing predicted */
	paths[1].path = up;
	assert_int_equal(mkdir(up, 0700), 0);
	assert_null(predict_mounts(e, steps, 1, dir, &pp, 0));
	predictions_done(&pp);
	rmdir(low);
	rmdir(up);
	rmdir(work);
	rmdir(ovl);
	rmdir(dir);
}

/* Layers missing from the options: known without looking at the disk. */
static void test_overlay_layers(void **state)
{
	char dir[] = "/tmp/test_predict.XXXXXX";
	struct fstab_path paths[] = { { .option = "upperdir", .path = "/u" },
				      { .option = "workdir", .path = "/w" },
				      { .option = "lowerdir", .path = "/l" } };
	struct fstab_entry e = {
		.line = 7, .source = "overlay", .target = "/o", .fstype = "overlay", .paths = paths
	};
	struct plan_step step;
	struct predictions pp;

	(void)state;
	assert_non_null(mkdtemp(dir));
	e.n_paths = 2; /* upperdir, workdir */
	assert_string_equal(predict_mounts(&e, &step, 1, dir, &pp, 0),
			    "an overlay needs a lower layer: add lowerdir=DIR (fstab:7)");
	predictions_done(&pp);
	paths[1] = paths[2]; /* upperdir, lowerdir */
	assert_non_null(strstr(predict_mounts(&e, &step, 1, dir, &pp, 0), "upperdir= needs a work directory"));
	predictions_done(&pp);
	rmdir(dir);
}

/* tmpfs numbers as the kernel's memparse() reads them: what mounts is
 * not predicted (hex, suffixes, a share of RAM for size=, overflow). */
static void test_tmpfs_numbers(void **state)
{
	static const struct {
		const char *options;
		bool fails;
	} cases[] = {
		{ "size=10Q", true },
		{ "nr_inodes=-1", true },
		{ "size=", true },
		{ "nr_inodes=1.5k", true },
		{ "nr_inodes=50%", true },
		{ "size=1M,nr_blocks=x", true },
		{ "size=0x100000", false },
		{ "size=50%", false },
		{ "size=1k%", false },
		{ "nr_inodes=10k,size=64M", false },
		{ "size=99999999999999999999999", false },
	};
	char dir[] = "/tmp/test_predict.XXXXXX";
	struct fstab_entry e = { .line = 2, .source = "tmpfs", .target = "/", .fstype = "tmpfs" };
	struct plan_step step;
	struct predictions pp;
	const char *why;

	(void)state;
	assert_non_null(mkdtemp(dir));
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		e.options = (char *)cases[i].options;
		why = predict_mounts(&e, &step, 1, dir, &pp, 0);
		if (cases[i].fails != (why && strstr(why, "tmpfs refuses")))
			fail_msg("%s: %s", cases[i].options, why ? why : "no prediction");
		predictions_done(&pp);
	}
	rmdir(dir);
}

/* A filesystem on a block device, whose source is a directory or a file
 * libmount makes no loop device for: mount(2) fails with ENOTBLK.  A bind,
 * a loop entry, a type without a device and an image over 1 KiB (libmount
 * sets up a loop device for it) are not predicted. */
static void test_block_source(void **state)
{
	static const struct {
		const char *source, *fstype, *options, *why;
		bool bind, loop;
	} cases[] = {
		{ "src", "ext4", NULL, "is a directory, not a block device" },
		{ "src", "vfat", "ro", "is a directory, not a block device" },
		{ "small", "ext4", NULL, "is a 10-byte file, not a block device" },
		{ "img", "ext4", NULL, NULL },
		{ "src", "ext4", "loop", NULL, false, true },
		{ "small", "ext4", "offset=0", NULL },
		{ "src", "ext4", "bind", NULL, true },
		{ "src", "tmpfs", NULL, NULL },
		{ "missing", "ext4", NULL, NULL },
	};
	char dir[] = "/tmp/test_predict.XXXXXX", src[64], small[64], img[64], source[64], mnt[64];
	struct fstab_entry e = { .line = 4, .fstype = "ext4" };
	struct plan_step step;
	struct predictions pp;
	const char *why;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(src, sizeof(src), "%s/src", dir);
	snprintf(small, sizeof(small), "%s/small", dir);
	snprintf(img, sizeof(img), "%s/img", dir);
	snprintf(mnt, sizeof(mnt), "%s/mnt", dir);
	assert_int_equal(mkdir(src, 0700), 0);
	assert_int_equal(mkdir(mnt, 0700), 0);
	assert_non_null(f = fopen(small, "we"));
	fputs("0123456789", f);
	fclose(f);
	assert_non_null(f = fopen(img, "we"));
	assert_int_equal(ftruncate(fileno(f), 2048), 0);
	fclose(f);
	e.target = mnt; /* not above the sources: they are there before it */
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		snprintf(source, sizeof(source), "%s/%s", dir, cases[i].source);
		e.source = source;
		e.fstype = (char *)cases[i].fstype;
		e.options = e.mount_options = (char *)cases[i].options;
		e.bind = cases[i].bind;
		e.loop = cases[i].loop;
		why = predict_mounts(&e, &step, 1, dir, &pp, 0);
		if (cases[i].why ? !why || !strstr(why, cases[i].why) || !strstr(why, "(fstab:4)")
				 : why != NULL)
			fail_msg("%s %s: %s", cases[i].source, cases[i].fstype, why ? why : "no prediction");
		predictions_done(&pp);
	}
	unlink(small);
	unlink(img);
	rmdir(src);
	rmdir(mnt);
	rmdir(dir);
}

/* area_precheck(), which start and the predictor both call: memory first,
 * force = yes and an unknown size (the predictor's deferred sizing) skip
 * it; a brd area without its driver says how to load it, with the size
 * when known. */
static void test_area_precheck(void **state)
{
	struct area_config a = { .name = "big", .backend = AREA_TMPFS };
	struct area_sizing sz = { .size_bytes = 64ull << 30, .fits = true };
	struct sysinfo_memory mem = { .total = 8ull << 30, .swap_total = 8ull << 30 };
	char why[512] = "";
	bool brd = access(AREA_BRD_SYSFS, F_OK) == 0;

	(void)state;
	assert_int_equal(area_precheck(&a, &sz, &mem, why, sizeof(why)), -ENOMEM);
	assert_string_equal(why, "area 'big': size 64G is above RAM + swap (16G): lower size= or set force = yes");
	why[0] = '\0';
	assert_int_equal(area_precheck(&a, NULL, &mem, why, sizeof(why)), 0);
	assert_string_equal(why, "");
	a.force = true;
	assert_int_equal(area_precheck(&a, &sz, &mem, why, sizeof(why)), 0);
	mem = (struct sysinfo_memory){ 0 }; /* unknown: no check */
	a.force = false;
	assert_int_equal(area_precheck(&a, &sz, &mem, why, sizeof(why)), 0);
	if (brd)
		return;
	a.backend = AREA_BRD;
	sz.size_bytes = 16u << 20;
	assert_int_equal(area_precheck(&a, &sz, &mem, why, sizeof(why)), -ENODEV);
	assert_non_null(strstr(why, "area 'big': brd driver not present: load it with 'modprobe brd rd_nr=1 rd_size=16384'"));
	assert_int_equal(area_precheck(&a, NULL, &mem, why, sizeof(why)), -ENODEV);
	assert_string_equal(why, "area 'big': brd driver not present: load it (modprobe brd) or use backend = tmpfs or backend = zram");
}

/* A seed = overlay area on a kernel whose list has no overlay (a test's
 * list is the whole list: no modules.alias) is predicted to fail, with
 * what to do; one that lists it is not. */
static void test_area_overlay(void **state)
{
	char dir[] = "/tmp/test_predict.XXXXXX", types[4096];
	struct area_config a = { .name = "ov", .backend = AREA_TMPFS, .overlay = true };
	struct predict_sources ps = { .filesystems_path = types };
	struct plan_input in = { 0 };
	struct plan_step step;
	struct plan p = { .steps = &step, .n_steps = 1 };
	struct predictions pp;
	const char *lists[] = { "nodev\ttmpfs\n\text4\n", "nodev\ttmpfs\nnodev\toverlay\n" };
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	a.path = dir;
	snprintf(types, sizeof(types), "%s/filesystems", dir);
	for (size_t k = 0; k < 2; k++) {
		f = fopen(types, "we");
		assert_non_null(f);
		fputs(lists[k], f);
		fclose(f);
		step = (struct plan_step){ .kind = PLAN_AREA, .area = &a, .sizing = { .nr_inodes = 1000, .fits = true } };
		assert_int_equal(predict_plan(&in, &ps, &p, &pp), k == 0);
		if (k == 0)
			assert_string_equal(step.predicted,
					    "area 'ov': seed = overlay, but this kernel has no overlay filesystem (/proc/filesystems lists none, no module for it): set seed = yes, or install the overlay driver");
		else
			assert_null(step.predicted);
		predictions_done(&pp);
	}
	unlink(types);
	rmdir(dir);
}

/* A zram area's fs = typo is one error at its line, with no word on
 * discard (the type is unknown, not one without online discard); a type
 * the kernel has without online discard (ext2) is the warning alone. */
static void test_area_fstype_discard(void **state)
{
	char dir[] = "/tmp/test_predict.XXXXXX", types[4096];
	struct area_config a = { .name = "z", .backend = AREA_ZRAM, .file = "s.conf", .fs_line = 4 };
	struct config c = { .areas = &a, .n_areas = 1 };
	struct predict_sources ps = { .filesystems_path = types };
	struct diag_list dl = { 0 };
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(types, sizeof(types), "%s/filesystems", dir);
	f = fopen(types, "we");
	assert_non_null(f);
	fputs("nodev\ttmpfs\n\text2\n\text4\n", f);
	fclose(f);
	a.fs = (char *)"ext44";
	assert_int_equal(predict_area_fstypes(&c, &ps, &dl), 0);
	assert_int_equal(dl.n, 1);
	assert_int_equal(dl.v[0].level, DIAG_ERROR);
	assert_int_equal(dl.v[0].line, 4);
	assert_non_null(strstr(dl.v[0].msg, "fs: 'ext44' is not a filesystem type the kernel can put on [area z]'s zram device"));
	diag_list_done(&dl);
	a.fs = (char *)"ext2";
	assert_int_equal(predict_area_fstypes(&c, &ps, &dl), 0);
	assert_int_equal(dl.n, 1);
	assert_int_equal(dl.v[0].level, DIAG_WARNING);
	assert_int_equal(dl.v[0].line, 4);
	assert_non_null(strstr(dl.v[0].msg, "[area z] puts ext2 on zram, which has no online discard"));
	diag_list_done(&dl);
	a.fs = (char *)"ext4";
	assert_int_equal(predict_area_fstypes(&c, &ps, &dl), 0);
	assert_int_equal(dl.n, 0);
	unlink(types);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_filesystems),    cmocka_unit_test(test_modules_alias),
		cmocka_unit_test(test_zram_compressors),
		cmocka_unit_test(test_fstype_in),      cmocka_unit_test(test_json_empty_arrays),
		cmocka_unit_test(test_json_non_utf8),  cmocka_unit_test(test_overlay_dirs),
		cmocka_unit_test(test_overlay_layers), cmocka_unit_test(test_tmpfs_numbers),
		cmocka_unit_test(test_block_source),   cmocka_unit_test(test_area_precheck),
		cmocka_unit_test(test_user_source),    cmocka_unit_test(test_area_overlay),
		cmocka_unit_test(test_area_fstype_discard),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
