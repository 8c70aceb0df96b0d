/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The systemd generator's pieces (cmd_generator.c) that need no system:
 * the unit name of a mount point, the units an
 * x-systemd.automount entry gets, and the lenient reading of the
 * configuration and the fstab the generator and the commands besides
 * start share (world_load_settings(), world_load_fstab()).
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
#include "world/load.h"

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
		/* refused at boot: no unit, as start mounts nothing of it */
		{ .line = 4, .source = "tmpfs", .target = "/srv/r", .fstype = "tmpfs",
		  .options = "x-systemd.automount,x-storaged,noauto", .refused = "refused, bad" },
	};
	struct fstab fstab = { .file = "/etc/storaged.fstab", .entries = entries, .n_entries = 4 };
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
	snprintf(path, sizeof(path), "%s/srv-r.automount", dir);
	assert_int_equal(stat(path, &st), -1);
	/* a second run finds the units there (another generator's): left alone, failed */
	assert_int_equal(generator_write_automounts(&lg, dir, &fstab), -EIO);
	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	assert_int_equal(system(path), 0);
}

/* @text into DIR/NAME; returns the path (owned). */
static char *put_file(const char *dir, const char *name, const char *text)
{
	char *path = NULL;
	FILE *f;

	assert_true(asprintf(&path, "%s/%s", dir, name) > 0);
	f = fopen(path, "we");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
	return path;
}

/* One bad [area] or [btrfs] section, one bad fstab line: refused alone,
 * the rest read; an error within no item: the whole is unusable. */
static void test_load_lenient(void **state)
{
	char dir[] = "/tmp/test_generator.XXXXXX", cmd[512];
	_cleanup_free_ char *conf = NULL, *bad = NULL, *fstab = NULL, *missing = NULL;
	struct diag_list dl = { 0 };
	struct config c;
	struct fstab f = { 0 };

	/* the loader reads only root's files, in a directory closed to others */
	if (geteuid() != 0)
		skip();
	assert_non_null(mkdtemp(dir));
	conf = put_file(dir, "storaged.conf",
			"[storaged]\njobs = 2\n\n[area good]\npath = /srv/good\nsize = 4M\n\n"
			"[area bad]\npath = /srv/bad\nsizee = 4M\n\n[btrfs 01234567-89ab-cdef-0123-456789abcdef]\n"
			"degraded = sometimes\n");
	assert_int_equal(config_init(&c), 0);
	assert_int_equal(world_load_settings(conf, &c, &dl), 0);
	assert_int_equal(diag_count(&dl, DIAG_ERROR), 2);
	assert_int_equal(c.n_areas, 2);
	assert_null(c.areas[0].refused);
	assert_non_null(c.areas[1].refused);
	assert_non_null(strstr(c.areas[1].refused, "storaged.conf:10: "));
	assert_non_null(c.btrfs[0].refused);
	config_done(&c);
	diag_list_done(&dl);

	bad = put_file(dir, "bad.conf", "[storaged]\njobs = many\n\n[area good]\npath = /srv/good\nsize = 4M\n");
	assert_int_equal(config_init(&c), 0);
	assert_int_equal(world_load_settings(bad, &c, &dl), -EINVAL);
	config_done(&c);
	diag_list_done(&dl);

	fstab = put_file(dir, "fstab",
			 "tmpfs /srv/a tmpfs size=1M,noauto,x-storaged 0 0\n"
			 "tmpfs /srv/b tmpfs size=1M,noauto,x-storaged,x-storaged.mount-timout=5s 0 0\n"
			 "tmpfs /srv/a tmpfs size=2M,noauto,x-storaged 0 0\n"
			 "tmpfs /srv/c tmpfs size=1M,noauto,x-storaged 0 0\n");
	assert_int_equal(world_load_fstab(fstab, NULL, &f, &dl), 0);
	assert_int_equal(f.n_entries, 4);
	/* the first line on a mount point is kept, the later one refused */
	assert_null(f.entries[0].refused);
	assert_non_null(f.entries[1].refused);
	assert_non_null(f.entries[2].refused);
	assert_non_null(strstr(f.entries[2].refused_at, "fstab:3"));
	assert_null(f.entries[3].refused);
	fstab_done(&f);
	diag_list_done(&dl);

	assert_true(asprintf(&missing, "%s/none", dir) > 0);
	assert_int_equal(world_load_fstab(missing, NULL, &f, &dl), -ENOENT);
	assert_int_equal(f.n_entries, 0);
	diag_list_done(&dl);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unit_name_from_path),
		cmocka_unit_test(test_automount_units),
		cmocka_unit_test(test_write_automounts),
		cmocka_unit_test(test_load_lenient),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
