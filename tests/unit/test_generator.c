/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The systemd generator's pieces (cmd_generator.c) that need no system:
 * the unit name of a mount point.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cli/commands.h"
#include "shared/util.h"

/* Compared with `systemd-escape --path --suffix=mount` on the same paths. */
static void test_unit_name_from_path(void **state)
{
	static const char *const cases[][2] = {
		{ "/", "-.mount" },
		{ "/srv/data", "srv-data.mount" },
		{ "/tmp/with space", "tmp-with\\x20space.mount" },
		{ "/run/storaged/areas/rpm-build/area", "run-storaged-areas-rpm\\x2dbuild-area.mount" },
		{ "//a//b/", "a-b.mount" },
		{ "/.hidden/x", "\\x2ehidden-x.mount" },
		{ "/home/.hidden/x", "home-.hidden-x.mount" },
		{ "/a-b/\xc3\xbc", "a\\x2db-\\xc3\\xbc.mount" },
	};
	char *name;

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		assert_int_equal(unit_name_from_path(cases[i][0], ".mount", &name), 0);
		assert_string_equal(name, cases[i][1]);
		free(name);
	}
	assert_int_equal(unit_name_from_path("relative", ".mount", &name), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unit_name_from_path),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
