/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The pure parts of plan_predict.c and json_out.c. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "json_out.h"
#include "plan_predict.h"
#include "util.h"

static void test_filesystems(void **state)
{
	_cleanup_strv_free_ char **t = NULL;

	(void)state;
	assert_int_equal(
		predict_parse_filesystems_buf("nodev\tsysfs\nnodev\ttmpfs\n\text4\n\tbtrfs", &t), 0);
	assert_int_equal(strv_length(t), 4);
	assert_true(strv_contains(t, "tmpfs")); /* nodev ones count */
	assert_true(strv_contains(t, "btrfs")); /* last line without newline */
	assert_false(strv_contains(t, "nodev"));
	assert_int_equal(predict_parse_filesystems_buf("", &t), 0);
	assert_int_equal(strv_length(t), 4);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_filesystems),
		cmocka_unit_test(test_modules_alias),
		cmocka_unit_test(test_fstype_in),
		cmocka_unit_test(test_json_empty_arrays),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
