/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The systemd generator's pieces (cmd_generator.c, generator_automount.c)
 * that need no system: the unit name of a mount point, and the units an
 * x-systemd.automount entry gets.
 */
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

static char *unit_text(int (*body)(FILE *, const char *, const struct fstab_entry *),
		       const struct fstab_entry *e, int *ret)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);

	assert_non_null(f);
	*ret = body(f, "/etc/storaged.fstab", e);
	fclose(f);
	return buf;
}

/* What systemd-fstab-generator writes for the same line, but for the
 * comment, SourcePath and Documentation (systemd 252-258 add_mount()). */
static void test_automount_units(void **state)
{
	struct fstab_entry e = {
		.line = 7,
		.source = "fs1:/home",
		.target = "/srv/50%",
		.fstype = "nfs4",
		.options = "_netdev,x-systemd.automount,x-systemd.idle-timeout=10min,noauto,x-storaged,x-systemd.mount-timeout=20,soft",
		.mount_options = "soft",
		.netdev = true,
	};
	char *t;
	int r;

	t = unit_text(generator_automount_unit, &e, &r);
	assert_int_equal(r, 0);
	assert_string_equal(t, "# Written by storaged's generator: /etc/storaged.fstab:7 says x-systemd.automount.\n"
			       "# systemd mounts it on first access; storaged leaves a mount point with this autofs on it alone.\n"
			       "[Unit]\nSourcePath=/etc/storaged.fstab\n"
			       "Documentation=man:storaged(8) man:systemd.automount(5)\n\n"
			       "[Automount]\nWhere=/srv/50%%\nTimeoutIdleSec=10min\n");
	free(t);
	t = unit_text(generator_mount_unit, &e, &r);
	assert_int_equal(r, 0);
	assert_non_null(strstr(t, "\n[Mount]\nWhat=fs1:/home\nWhere=/srv/50%%\nType=nfs4\n"
				  "Options=_netdev,soft\nTimeoutSec=20\n"));
	free(t);
	/* a decoded \012 in the mount point: no unit can say it */
	e.target = "/srv/a\nb";
	t = unit_text(generator_automount_unit, &e, &r);
	assert_int_equal(r, -EINVAL);
	free(t);
}

static bool is_link_to(const char *path, const char *to)
{
	char buf[256];
	ssize_t n = readlink(path, buf, sizeof(buf) - 1);

	if (n < 0)
		return false;
	buf[n] = '\0';
	return strcmp(buf, to) == 0;
}

static void test_write_automounts(void **state)
{
	struct fstab_entry entries[] = {
		{ .line = 1, .source = "fs1:/home", .target = "/home", .fstype = "nfs4",
		  .options = "x-systemd.automount,x-storaged,noauto", .remote = true },
		{ .line = 2, .source = "/dev/sdb1", .target = "/srv/data", .fstype = "ext4",
		  .options = "x-systemd.automount,x-storaged,noauto,nofail", .nofail = true },
		{ .line = 3, .source = "tmpfs", .target = "/srv/t", .fstype = "tmpfs",
		  .options = "x-storaged,noauto" },
	};
	struct fstab fstab = { .file = "/etc/storaged.fstab", .entries = entries, .n_entries = 3 };
	char dir[] = "/tmp/test_generator.XXXXXX", path[512];
	struct logger lg = { 0 };
	struct stat st;

	assert_non_null(mkdtemp(dir));
	assert_int_equal(generator_write_automounts(&lg, dir, &fstab), 0);
	snprintf(path, sizeof(path), "%s/home.automount", dir);
	assert_int_equal(stat(path, &st), 0);
	snprintf(path, sizeof(path), "%s/home.mount", dir);
	assert_int_equal(stat(path, &st), 0);
	snprintf(path, sizeof(path), "%s/remote-fs.target.requires/home.automount", dir);
	assert_true(is_link_to(path, "../home.automount"));
	snprintf(path, sizeof(path), "%s/local-fs.target.wants/srv-data.automount", dir);
	assert_true(is_link_to(path, "../srv-data.automount"));
	snprintf(path, sizeof(path), "%s/srv-t.automount", dir);
	assert_int_equal(stat(path, &st), -1);
	/* a second run finds the units there (another generator's): left alone, failed */
	assert_int_equal(generator_write_automounts(&lg, dir, &fstab), -EIO);
	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	assert_int_equal(system(path), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unit_name_from_path),
		cmocka_unit_test(test_automount_units),
		cmocka_unit_test(test_write_automounts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
