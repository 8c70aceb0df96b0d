/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The area module's non-mounting parts, on a private temporary directory
 * and without root: names and paths under the state directory, openat2
 * without symlinks, rm -rf, the root's owner and mode, the survey (bytes,
 * inodes, hard links once, sync leftovers skipped), the records of every
 * area in setup order, and /proc/meminfo.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
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

#include "area_internal.h"
#include "sysinfo.h"
#include "util.h"

struct fixture {
	char top[64];
};

static int setup(void **ctx)
{
	struct fixture *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	strcpy(f->top, "/tmp/test_area.XXXXXX");
	if (!mkdtemp(f->top))
		return -1;
	*ctx = f;
	return 0;
}

static int teardown(void **ctx)
{
	struct fixture *f = *ctx;
	int fd = open("/tmp", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct stat st;

	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	assert_int_equal(area_rm_rf_at(fd, f->top + strlen("/tmp/"), st.st_dev), 0);
	close(fd);
	free(f);
	return 0;
}

/* creates @rel below the fixture: a directory when it ends in '/' */
static void make(const struct fixture *f, const char *rel, const char *content)
{
	char p[PATH_MAX];
	size_t n;

	snprintf(p, sizeof(p), "%s/%s", f->top, rel);
	n = strlen(p);
	if (p[n - 1] == '/') {
		assert_int_equal(mkdir(p, 0755), 0);
		return;
	}
	FILE *o = fopen(p, "we");

	assert_non_null(o);
	fputs(content ? content : "", o);
	assert_int_equal(fclose(o), 0);
}

static uint64_t blocks_of(const struct fixture *f, const char *rel)
{
	char p[PATH_MAX];
	struct stat st;

	snprintf(p, sizeof(p), "%s/%s", f->top, rel);
	assert_int_equal(lstat(p, &st), 0);
	return (uint64_t)st.st_blocks * 512;
}

static void test_names_and_dirs(void **ctx)
{
	struct area_dirs d;
	char *area = NULL, *lower = NULL;

	(void)ctx;
	assert_true(area_name_is_valid("build"));
	assert_true(area_name_is_valid(".hidden"));
	assert_false(area_name_is_valid(NULL));
	assert_false(area_name_is_valid(""));
	assert_false(area_name_is_valid("."));
	assert_false(area_name_is_valid(".."));
	assert_false(area_name_is_valid("a/b"));
	assert_int_equal(area_dirs_init(&d, "/run/storaged", "../x"), -EINVAL);
	assert_null(d.top);
	assert_int_equal(area_dirs_init(&d, "/run/storaged", "build"), 0);
	assert_string_equal(d.top, "/run/storaged/areas/build");
	assert_string_equal(d.state, "/run/storaged/areas/build/state");
	assert_string_equal(d.area, "/run/storaged/areas/build/area");
	assert_string_equal(d.lower, "/run/storaged/areas/build/lower");
	area_dirs_done(&d);
	assert_null(d.top);
	assert_int_equal(area_private_mounts("/run/storaged", "build", &area, &lower), 0);
	assert_string_equal(area, "/run/storaged/areas/build/area");
	assert_string_equal(lower, "/run/storaged/areas/build/lower");
	free(area);
	free(lower);
	assert_int_equal(area_private_mounts("/run/storaged", "", &area, &lower), -EINVAL);
}

static void test_open_nofollow(void **ctx)
{
	struct fixture *f = *ctx;
	char p[PATH_MAX];
	int fd;

	make(f, "real/", NULL);
	make(f, "real/sub/", NULL);
	snprintf(p, sizeof(p), "%s/link", f->top);
	assert_int_equal(symlink("real", p), 0);
	snprintf(p, sizeof(p), "%s/real/sub", f->top);
	fd = area_open_nofollow(p, O_PATH | O_DIRECTORY);
	assert_true(fd >= 0);
	close(fd);
	/* a symlink in any component */
	snprintf(p, sizeof(p), "%s/link/sub", f->top);
	assert_int_equal(area_open_nofollow(p, O_PATH | O_DIRECTORY), -ELOOP);
	snprintf(p, sizeof(p), "%s/link", f->top);
	assert_true(area_open_nofollow(p, O_PATH | O_DIRECTORY) < 0);
	/* a plain directory is not the root of a mount */
	snprintf(p, sizeof(p), "%s/real", f->top);
	assert_false(area_is_mount_of(p, NULL));
	assert_true(area_is_mount_of("/", NULL));
	assert_false(area_is_mount_of("/nonexistent-storaged-test", NULL));
}

static void test_rm_rf(void **ctx)
{
	struct fixture *f = *ctx;
	char p[PATH_MAX];
	struct stat st;
	int fd;

	make(f, "keep/", NULL);
	make(f, "keep/precious", "data");
	make(f, "gone/", NULL);
	make(f, "gone/a/", NULL);
	make(f, "gone/a/file", "x");
	snprintf(p, sizeof(p), "%s/gone/a/to-keep", f->top);
	assert_int_equal(symlink("../../keep", p), 0);
	fd = open(f->top, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	/* another device number: as if "gone" were a mount */
	assert_int_equal(area_rm_rf_at(fd, "gone", st.st_dev + 1), -EBUSY);
	assert_int_equal(area_rm_rf_at(fd, "gone", st.st_dev), 0);
	assert_int_equal(area_rm_rf_at(fd, "gone", st.st_dev), 0); /* nothing left: 0 */
	close(fd);
	snprintf(p, sizeof(p), "%s/gone", f->top);
	assert_int_equal(access(p, F_OK), -1);
	/* the symlink was removed, not followed */
	snprintf(p, sizeof(p), "%s/keep/precious", f->top);
	assert_int_equal(access(p, F_OK), 0);
}

static void test_root_owner(void **ctx)
{
	struct area_config a = { .name = "x" };
	struct stat root = { .st_uid = 1000, .st_gid = 100, .st_mode = S_IFDIR | 01775 };
	uid_t uid;
	gid_t gid;
	mode_t mode;

	(void)ctx;
	area_root_owner(&a, &root, &uid, &gid, &mode);
	assert_int_equal(uid, 1000);
	assert_int_equal(gid, 100);
	assert_int_equal(mode, 01775);
	a.uid_set = a.gid_set = a.mode_set = true;
	a.uid = 0;
	a.gid = 5;
	a.mode = 0700;
	area_root_owner(&a, &root, &uid, &gid, &mode);
	assert_int_equal(uid, 0);
	assert_int_equal(gid, 5);
	assert_int_equal(mode, 0700);
}

static void test_survey(void **ctx)
{
	struct fixture *f = *ctx;
	struct area_survey s;
	char p[PATH_MAX], q[PATH_MAX], big[10000];
	uint64_t bytes;

	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	make(f, "t/", NULL);
	make(f, "t/d/", NULL);
	make(f, "t/d/file", big);
	make(f, "t/small", "x");
	snprintf(p, sizeof(p), "%s/t/d/file", f->top);
	snprintf(q, sizeof(q), "%s/t/hardlink", f->top);
	assert_int_equal(link(p, q), 0);
	snprintf(q, sizeof(q), "%s/t/symlink", f->top);
	assert_int_equal(symlink("d/file", q), 0);
	/* a sync left by a crash is not part of the seed */
	make(f, "t/" COPY_SKIP_PREFIX "NEW/", NULL);
	make(f, "t/" COPY_SKIP_PREFIX "NEW/old", big);
	bytes = blocks_of(f, "t") + blocks_of(f, "t/d") + blocks_of(f, "t/d/file") +
		blocks_of(f, "t/small") + blocks_of(f, "t/symlink");

	snprintf(p, sizeof(p), "%s/t", f->top);
	assert_int_equal(area_survey_path(p, &s), 0);
	assert_true(s.valid);
	/* t, d, file (two names), small, symlink */
	assert_int_equal(s.inodes, 5);
	assert_true(s.bytes == bytes);

	snprintf(p, sizeof(p), "%s/missing", f->top);
	assert_int_equal(area_survey_path(p, &s), -ENOENT);
	assert_false(s.valid);
	assert_int_equal(s.error, -ENOENT);
	assert_int_equal(s.inodes, 0);
}

static void write_record(const struct fixture *f, const char *name, uint64_t started)
{
	struct state_area a;
	char p[PATH_MAX];

	snprintf(p, sizeof(p), "%s/areas/%s", f->top, name);
	assert_int_equal(mkdir(p, 0700), 0);
	snprintf(p, sizeof(p), "%s/areas/%s/state", f->top, name);
	state_area_init(&a);
	a.name = strdup(name);
	a.path = strdup("/srv/x");
	a.fs = strdup("tmpfs");
	a.device = strdup("storaged-x");
	a.size_bytes = 1 << 20;
	a.nr_inodes = 100;
	a.persist = true;
	a.started_usec = started;
	a.covered = true;
	a.cover_id = started + 4096; /* the bind over the directory, stop's handle */
	assert_int_equal(state_area_write(p, &a), 0);
	state_area_done(&a);
}

static void test_records(void **ctx)
{
	struct fixture *f = *ctx;
	struct area_status *v;
	struct state_area st;
	struct area_dirs d;
	char **names;
	size_t n;
	int fd;

	/* no areas directory yet */
	assert_int_equal(area_list_names(f->top, &names), 0);
	assert_null(names[0]);
	strv_free(names);
	assert_int_equal(area_status_list(f->top, &v, &n), 0);
	assert_int_equal(n, 0);
	area_status_free(v, n);

	make(f, "areas/", NULL);
	write_record(f, "late", 300);
	write_record(f, "early", 100);
	make(f, "areas/interrupted/", NULL); /* a setup killed before its record */
	make(f, "areas/damaged/", NULL);
	make(f, "areas/damaged/state", "name=damaged\npath=/x\n");

	assert_int_equal(area_list_names(f->top, &names), 0);
	assert_int_equal(strv_length(names), 4);
	assert_string_equal(names[0], "damaged");
	assert_string_equal(names[1], "early");
	assert_string_equal(names[2], "interrupted");
	assert_string_equal(names[3], "late");
	strv_free(names);

	/* setup order; unreadable records left out */
	assert_int_equal(area_status_list(f->top, &v, &n), 0);
	assert_int_equal(n, 2);
	assert_string_equal(v[0].name, "early");
	assert_string_equal(v[1].name, "late");
	assert_string_equal(v[0].backend, "tmpfs");
	assert_true(v[0].persist);
	assert_int_equal(v[0].size_bytes, 1 << 20); /* not mounted: the record's */
	assert_int_equal(v[0].inodes_total, 100);
	area_status_free(v, n);

	assert_int_equal(area_dirs_init(&d, f->top, "late"), 0);
	fd = area_record_open_locked(&d, &st);
	assert_true(fd >= 0);
	assert_string_equal(st.name, "late");
	assert_int_equal(st.started_usec, 300);
	assert_true(st.covered);
	assert_int_equal(st.cover_id, 300 + 4096);
	state_area_done(&st);
	close(fd);
	area_dirs_done(&d);
	assert_int_equal(area_dirs_init(&d, f->top, "damaged"), 0);
	assert_int_equal(area_record_open_locked(&d, &st), -EBADMSG);
	area_dirs_done(&d);
	assert_int_equal(area_dirs_init(&d, f->top, "interrupted"), 0);
	assert_int_equal(area_record_open_locked(&d, &st), -ENOENT);
	area_dirs_done(&d);
}

static void test_meminfo(void **ctx)
{
	struct fixture *f = *ctx;
	struct sysinfo_memory m;
	char p[PATH_MAX];

	make(f, "meminfo", "MemTotal:       24576000 kB\nMemFree:         1000 kB\n"
			   "MemAvailable:   12000000 kB\nSwapTotal:       2097148 kB\n"
			   "SwapFree:        2000000 kB\nHugePages_Total:       0\n");
	snprintf(p, sizeof(p), "%s/meminfo", f->top);
	assert_int_equal(sysinfo_memory(p, &m), 0);
	assert_true(m.total == UINT64_C(24576000) * 1024);
	assert_true(m.available == UINT64_C(12000000) * 1024);
	assert_true(m.swap_total == UINT64_C(2097148) * 1024);
	assert_true(m.swap_free == UINT64_C(2000000) * 1024);

	/* missing and garbled fields are unknown: 0 */
	make(f, "meminfo2", "MemTotal: lots\nMemAvailable:99999999999999999999 kB\n");
	snprintf(p, sizeof(p), "%s/meminfo2", f->top);
	assert_int_equal(sysinfo_memory(p, &m), 0);
	assert_true(m.total == 0 && m.available == 0 && m.swap_free == 0);

	snprintf(p, sizeof(p), "%s/none", f->top);
	assert_int_equal(sysinfo_memory(p, &m), -ENOENT);
	assert_true(m.total == 0);
	/* the real one has MemTotal */
	assert_int_equal(sysinfo_memory(NULL, &m), 0);
	assert_true(m.total > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names_and_dirs),
		cmocka_unit_test_setup_teardown(test_open_nofollow, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rm_rf, setup, teardown),
		cmocka_unit_test(test_root_owner),
		cmocka_unit_test_setup_teardown(test_survey, setup, teardown),
		cmocka_unit_test_setup_teardown(test_records, setup, teardown),
		cmocka_unit_test_setup_teardown(test_meminfo, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
