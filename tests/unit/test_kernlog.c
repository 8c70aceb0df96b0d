/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Which kernel log records are of a failed mount (kernlog.c, C14). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdbool.h>
#include <string.h>

#include <cmocka.h>

#include "mount/kernlog.h"

static bool match(const char *rec, const char *dev, const char *fstype, char *text, size_t len)
{
	const char *t;
	size_t n;
	bool m = kernlog_match(rec, strlen(rec), dev, fstype, &t, &n);

	if (m)
		snprintf(text, len, "%.*s", (int)n, t);
	return m;
}

static void test_match(void **unused)
{
	char t[256];

	(void)unused;
	assert_true(match("3,1234,5678,-;BTRFS error (device loop5): subvol 'home' does not match subvolid 5\n",
			  "loop5", "btrfs", t, sizeof(t)));
	assert_string_equal(t, "BTRFS error (device loop5): subvol 'home' does not match subvolid 5");
	/* another device: loop50 is not loop5 */
	assert_false(match("3,1,2,-;BTRFS error (device loop50): bad tree block\n", "loop5",
			   "btrfs", t, sizeof(t)));
	/* the type's own words naming no device */
	assert_true(match("3,1,2,-;tmpfs: Bad value for 'size'\n", "", "tmpfs", t, sizeof(t)));
	assert_string_equal(t, "tmpfs: Bad value for 'size'");
	assert_false(match("3,1,2,-;BTRFS error (device loop7): x\n", "", "btrfs", t, sizeof(t)));
	/* info and debug records are not reasons */
	assert_false(match("6,1,2,-;BTRFS info (device loop5): using free-space-tree\n", "loop5",
			   "btrfs", t, sizeof(t)));
	assert_true(match("4,1,2,-;EXT4-fs (loop5): Unrecognized mount option \"x\"\n SUBSYSTEM=block\n",
			  "loop5", "ext4", t, sizeof(t)));
	assert_string_equal(t, "EXT4-fs (loop5): Unrecognized mount option \"x\"");
	/* a facility above kern: level is prio & 7 */
	assert_true(match("11,1,2,-;XFS (sdb1): Invalid superblock magic number\n", "sdb1", "xfs",
			  t, sizeof(t)));
	assert_false(match("no record", "loop5", "btrfs", t, sizeof(t)));
	assert_false(match("3,1,2,-;ext4: unrelated\n", NULL, NULL, t, sizeof(t)));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_match),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
