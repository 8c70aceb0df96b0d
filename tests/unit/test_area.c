/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The area module's non-mounting parts, on a private temporary directory
 * and without root: names and paths under the state directory, openat2
 * without symlinks, rm -rf, the root's owner and mode, the survey (bytes,
 * inodes, hard links once, every name counted), the records of every
 * area in setup order, the sync's working directories told from a user's
 * (root's, 0700, marked: the marked case needs root), and /proc/meminfo.
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
#include <sys/xattr.h>
#include <unistd.h>

#include <cmocka.h>

#include "area/area_internal.h"
#include "shared/sysinfo.h"
#include "shared/util.h"

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
	assert_int_equal(area_dirs_init(&d, "/run/storaged", "../x", NULL), -EINVAL);
	assert_null(d.top);
	assert_int_equal(area_dirs_init(&d, "/run/storaged", "build", NULL), 0);
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
	/* a user's entry named like storaged's working directories is theirs,
	 * seeded and counted like any other (C21) */
	make(f, "t/.storaged-sync.NEW/", NULL);
	make(f, "t/.storaged-sync.NEW/old", big);
	bytes = blocks_of(f, "t") + blocks_of(f, "t/d") + blocks_of(f, "t/d/file") +
		blocks_of(f, "t/small") + blocks_of(f, "t/symlink") +
		blocks_of(f, "t/.storaged-sync.NEW") + blocks_of(f, "t/.storaged-sync.NEW/old");

	snprintf(p, sizeof(p), "%s/t", f->top);
	assert_int_equal(area_survey_path(p, &s), 0);
	assert_true(s.valid);
	/* t, d, file (two names), small, symlink, .storaged-sync.NEW, old */
	assert_int_equal(s.inodes, 7);
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
	assert_int_equal(area_status_list(f->top, NULL, true, &v, &n), 0);
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
	assert_int_equal(area_status_list(f->top, NULL, true, &v, &n), 0);
	assert_int_equal(n, 2);
	assert_string_equal(v[0].name, "early");
	assert_string_equal(v[1].name, "late");
	assert_string_equal(v[0].backend, "tmpfs");
	assert_true(v[0].persist);
	assert_int_equal(v[0].size_bytes, 1 << 20); /* not mounted: the record's */
	assert_int_equal(v[0].inodes_total, 100);
	/* recorded as bound over its directory, but no such mount now */
	assert_int_equal(v[0].state, AREA_STATE_GONE);
	assert_non_null(strstr(v[0].state_why, "unmounted by someone else"));
	area_status_free(v, n);

	assert_int_equal(area_dirs_init(&d, f->top, "late", NULL), 0);
	fd = area_record_open_locked(&d, &st);
	assert_true(fd >= 0);
	assert_string_equal(st.name, "late");
	assert_int_equal(st.started_usec, 300);
	assert_true(st.covered);
	assert_int_equal(st.cover_id, 300 + 4096);
	assert_null(st.sync_dir);
	/* the sync's working name, in place through the locked record (the
	 * lock stays on the file), then a shorter record again */
	st.sync_dir = strdup(".storaged-sync.0123456789abcdef0123456789abcdef");
	assert_int_equal(state_area_write_fd(fd, &st), 0);
	state_area_done(&st);
	assert_int_equal(state_area_read_fd(fd, &st), 0);
	assert_string_equal(st.sync_dir, ".storaged-sync.0123456789abcdef0123456789abcdef");
	assert_int_equal(st.cover_id, 300 + 4096);
	free(st.sync_dir);
	st.sync_dir = NULL;
	assert_int_equal(state_area_write_fd(fd, &st), 0);
	state_area_done(&st);
	assert_int_equal(state_area_read_fd(fd, &st), 0);
	assert_null(st.sync_dir);
	assert_string_equal(st.name, "late");
	assert_int_equal(st.n_carried, 0);
	assert_false(st.sync_refused);
	/* the clones carried from below the directory, and a refused sync */
	st.carried = calloc(2, sizeof(*st.carried));
	assert_non_null(st.carried);
	st.carried[0] = 77;
	st.carried[1] = 78;
	st.n_carried = 2;
	st.sync_refused = true;
	/* why the last sync failed: long, with spaces, quotes and a newline */
	st.sync_failed = calloc(1, 701);
	assert_non_null(st.sync_failed);
	memset(st.sync_failed, 'x', 700);
	memcpy(st.sync_failed, "while copying: no room in '/a b'\n", 33);
	assert_int_equal(state_area_write_fd(fd, &st), 0);
	state_area_done(&st);
	assert_int_equal(state_area_read_fd(fd, &st), 0);
	assert_int_equal(st.n_carried, 2);
	assert_int_equal(st.carried[0], 77);
	assert_int_equal(st.carried[1], 78);
	assert_true(st.sync_refused);
	assert_non_null(st.sync_failed);
	assert_int_equal(strlen(st.sync_failed), 700);
	assert_memory_equal(st.sync_failed, "while copying: no room in '/a b'\n", 33);
	state_area_done(&st);
	assert_int_equal(
		state_area_parse("[area]\nname=x\npath=/x\nfs=tmpfs\ndevice=d\ncarried=0\ncomplete=yes\n",
				 strlen("[area]\nname=x\npath=/x\nfs=tmpfs\ndevice=d\ncarried=0\ncomplete=yes\n"),
				 &st),
		-EBADMSG);
	close(fd);
	area_dirs_done(&d);
	assert_int_equal(area_dirs_init(&d, f->top, "damaged", NULL), 0);
	assert_int_equal(area_record_open_locked(&d, &st), -EBADMSG);
	area_dirs_done(&d);
	assert_int_equal(area_dirs_init(&d, f->top, "interrupted", NULL), 0);
	assert_int_equal(area_record_open_locked(&d, &st), -ENOENT);
	area_dirs_done(&d);
}

#define WORK ".storaged-sync.0123456789abcdef0123456789abcdef"

static int top_fd(const struct fixture *f)
{
	int fd = open(f->top, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	assert_true(fd >= 0);
	return fd;
}

static int check(int dirfd, const char *entry, const char *area, bool recorded)
{
	int fd = -2, r = area_sync_dir_check(dirfd, entry, area, recorded, &fd);

	assert_true(r == 1 ? fd >= 0 : fd == -1);
	if (fd >= 0)
		close(fd);
	return r;
}

static bool exists(const struct fixture *f, const char *rel)
{
	char p[PATH_MAX];
	struct stat st;

	snprintf(p, sizeof(p), "%s/%s", f->top, rel);
	return lstat(p, &st) == 0;
}

/* without root: nothing a user can make is taken for a working directory */
/* An active area's mounts, as area_mounts_probe() finds them */
static const struct area_mounts mounts_active = { .recorded = true,
						  .cover_present = true,
						  .cover_at_path = true,
						  .cover_on_top = true,
						  .area_mounted = true,
						  .lower_mounted = true };

/* The state an area's mounts amount to, whether it may be synced, and what
 * the messages say: pure, on facts as area_mounts_probe() finds them. */
static void test_mount_states(void **ctx)
{
	const struct area_mounts ok = mounts_active;
	struct area_mounts f;
	char why[256];

	(void)ctx;
	assert_int_equal(area_mounts_state(&ok), AREA_STATE_ACTIVE);
	assert_true(area_mounts_syncable(&ok));
	area_mounts_describe(&ok, "/v", why, sizeof(why));
	assert_string_equal(why, "");
	assert_string_equal(area_state_name(AREA_STATE_ACTIVE), "active");

	f = ok; /* unmounted by hand: never synced over the uncovered directory */
	f.cover_present = f.cover_at_path = f.cover_on_top = false;
	assert_int_equal(area_mounts_state(&f), AREA_STATE_GONE);
	assert_false(area_mounts_syncable(&f));
	area_mounts_describe(&f, "/v", why, sizeof(why));
	assert_string_equal(why, "its bind over /v was unmounted by someone else");

	f = ok; /* moved */
	f.cover_at_path = f.cover_on_top = false;
	f.moved_to = (char *)"/w";
	assert_int_equal(area_mounts_state(&f), AREA_STATE_GONE);
	assert_false(area_mounts_syncable(&f));
	area_mounts_describe(&f, "/v", why, sizeof(why));
	assert_string_equal(why, "its bind over /v was moved to /w by someone else");

	f = ok; /* covered: the directory stays hidden, the sync is safe */
	f.cover_on_top = false;
	f.covered_by = (char *)"/dev/sdb1 (ext4)";
	assert_int_equal(area_mounts_state(&f), AREA_STATE_COVERED);
	assert_true(area_mounts_syncable(&f));
	area_mounts_describe(&f, "/v", why, sizeof(why));
	assert_string_equal(why, "/dev/sdb1 (ext4) was mounted over it on /v by someone else");

	f = ok; /* a private mount gone: nothing to sync into */
	f.lower_mounted = false;
	assert_int_equal(area_mounts_state(&f), AREA_STATE_DEGRADED);
	assert_false(area_mounts_syncable(&f));
	f = ok; /* a carried filesystem unmounted: still synced */
	f.carried_missing = 1;
	assert_int_equal(area_mounts_state(&f), AREA_STATE_DEGRADED);
	assert_true(area_mounts_syncable(&f));
	f = ok; /* a setup killed before the bind: never synced */
	f.recorded = false;
	assert_int_equal(area_mounts_state(&f), AREA_STATE_DEGRADED);
	assert_false(area_mounts_syncable(&f));
}

/* How a stop syncs an area back: an overlay's upper layer is applied
 * (after the overlay is unmounted) whether or not the overlay is still
 * over the directory, as long as both private mounts are there; without
 * one, neither kind has anything to sync from. */
static void test_sync_how(void **ctx)
{
	const struct area_mounts ok = mounts_active;
	struct area_mounts f;

	(void)ctx;
	assert_int_equal(area_mounts_sync_how(&ok, false), AREA_SYNC_LOCKED);
	assert_int_equal(area_mounts_sync_how(&ok, true), AREA_SYNC_OVERLAY);
	f = ok; /* unmounted by hand, or by a stop killed after */
	f.cover_present = f.cover_at_path = f.cover_on_top = false;
	assert_int_equal(area_mounts_sync_how(&f, false), AREA_SYNC_UNCOVERED);
	assert_int_equal(area_mounts_sync_how(&f, true), AREA_SYNC_OVERLAY);
	f = ok; /* moved */
	f.cover_at_path = f.cover_on_top = false;
	assert_int_equal(area_mounts_sync_how(&f, false), AREA_SYNC_UNCOVERED);
	assert_int_equal(area_mounts_sync_how(&f, true), AREA_SYNC_OVERLAY);
	f = ok; /* covered */
	f.cover_on_top = false;
	assert_int_equal(area_mounts_sync_how(&f, false), AREA_SYNC_LOCKED);
	assert_int_equal(area_mounts_sync_how(&f, true), AREA_SYNC_OVERLAY);
	f = ok;
	f.lower_mounted = false;
	assert_int_equal(area_mounts_sync_how(&f, false), AREA_SYNC_UNSYNCABLE);
	assert_int_equal(area_mounts_sync_how(&f, true), AREA_SYNC_UNSYNCABLE);
	f = ok;
	f.area_mounted = false;
	f.cover_present = false;
	assert_int_equal(area_mounts_sync_how(&f, false), AREA_SYNC_UNSYNCABLE);
	assert_int_equal(area_mounts_sync_how(&f, true), AREA_SYNC_UNSYNCABLE);
	f = ok; /* a setup killed before the bind */
	f.recorded = false;
	assert_int_equal(area_mounts_sync_how(&f, false), AREA_SYNC_NONE);
	assert_int_equal(area_mounts_sync_how(&f, true), AREA_SYNC_NONE);
}

/* The filesystems below a directory that setup carries onto its area: the
 * outermost ones, once each; not the directory itself, nor a neighbour. */
static void test_submounts_top(void **ctx)
{
	char *t[] = { (char *)"/",
		      (char *)"/var/log",
		      (char *)"/var/log/audit",
		      (char *)"/var/log/audit/old",
		      (char *)"/var/logs/x",
		      (char *)"/var/log/a/b",
		      (char *)"/var/log/audit",
		      (char *)"/var/log/a/b/c",
		      NULL };
	char **v;

	(void)ctx;
	assert_int_equal(area_submounts_top(t, "/var/log", &v), 0);
	assert_int_equal(strv_length(v), 2);
	assert_string_equal(v[0], "/var/log/audit");
	assert_string_equal(v[1], "/var/log/a/b");
	strv_free(v);
	assert_int_equal(area_submounts_top(t, "/srv", &v), 0);
	assert_null(v);
}

static void test_sync_dir_user(void **ctx)
{
	struct fixture *f = *ctx;
	char p[PATH_MAX];
	int fd = top_fd(f);

	make(f, WORK "/", NULL);
	snprintf(p, sizeof(p), "%s/" WORK, f->top);
	assert_int_equal(chmod(p, 0700), 0);
	make(f, ".storaged-sync.NEW", "user data");
	make(f, ".storaged-sync.0123456789abcdef0123456789abcdee", "user data");
	snprintf(p, sizeof(p), "%s/.storaged-sync.ffffffffffffffffffffffffffffffff", f->top);
	assert_int_equal(symlink(WORK, p), 0);
	/* a user's 0700 directory, even where the record names it (as root
	 * it is root's: test_sync_dir_root) */
	if (geteuid() != 0)
		assert_int_equal(check(fd, WORK, "a", true), 0);
	assert_int_equal(check(fd, ".storaged-sync.NEW", "a", true), 0); /* a file */
	assert_int_equal(check(fd, ".storaged-sync.ffffffffffffffffffffffffffffffff", "a", true), 0);
	assert_int_equal(check(fd, "missing", "a", true), 0);
	if (geteuid() != 0) {
		assert_int_equal(area_recover_sync(fd, 0, "a", WORK), 0);
		assert_true(exists(f, WORK));
	}
	assert_true(exists(f, ".storaged-sync.NEW"));
	assert_true(exists(f, ".storaged-sync.0123456789abcdef0123456789abcdee"));
	close(fd);
}

/* root: the predicate (root's, 0700, marked for this area, or named by the
 * record) and recovery, which removes only what passes it */
static void test_sync_dir_root(void **ctx)
{
	struct fixture *f = *ctx;
	char p[PATH_MAX];
	struct stat st;
	int fd;

	if (geteuid() != 0)
		skip(); /* trusted.* xattrs and root-owned directories */
	fd = top_fd(f);
	assert_int_equal(fstat(fd, &st), 0);
	make(f, WORK "/", NULL);
	make(f, WORK "/old/", NULL);
	make(f, WORK "/old/file", "x");
	snprintf(p, sizeof(p), "%s/" WORK, f->top);
	assert_int_equal(chmod(p, 0700), 0);
	/* root's, 0700, unmarked: only when the record names it */
	assert_int_equal(check(fd, WORK, "a", false), 0);
	assert_int_equal(check(fd, WORK, "a", true), 1);
	if (setxattr(p, "trusted.storaged.sync", "a", 1, 0) < 0) {
		assert_int_equal(errno, EOPNOTSUPP); /* /tmp without trusted xattrs */
		close(fd);
		skip();
	}
	assert_int_equal(check(fd, WORK, "a", false), 1);
	assert_int_equal(check(fd, WORK, "ab", false), 0); /* another area's */
	assert_int_equal(check(fd, WORK, "b", true), 0);
	assert_int_equal(chmod(p, 0755), 0);
	assert_int_equal(check(fd, WORK, "a", true), 0);
	assert_int_equal(chmod(p, 0700), 0);
	assert_int_equal(chown(p, 1000, 1000), 0); /* marked, but a user's */
	assert_int_equal(check(fd, WORK, "a", true), 0);
	assert_int_equal(area_recover_sync(fd, st.st_dev, "a", WORK), 0);
	assert_true(exists(f, WORK "/old/file"));
	assert_int_equal(chown(p, 0, 0), 0);
	/* a link to it is never followed */
	snprintf(p, sizeof(p), "%s/.storaged-sync.ffffffffffffffffffffffffffffffff", f->top);
	assert_int_equal(symlink(WORK, p), 0);
	assert_int_equal(check(fd, ".storaged-sync.ffffffffffffffffffffffffffffffff", "a", true), 0);
	/* a user's entries of every name stay; ours goes, found by its mark */
	make(f, ".storaged-sync.NEW/", NULL);
	make(f, ".storaged-sync.NEW/mine", "user data");
	make(f, ".storaged-sync.x", "user data");
	assert_int_equal(area_recover_sync(fd, st.st_dev, "a", NULL), 0);
	assert_false(exists(f, WORK));
	assert_true(exists(f, ".storaged-sync.NEW/mine"));
	assert_true(exists(f, ".storaged-sync.x"));
	assert_true(exists(f, ".storaged-sync.ffffffffffffffffffffffffffffffff"));
	/* unmarked, named by the record (killed before it was marked) */
	make(f, WORK "/", NULL);
	make(f, WORK "/file", "data");
	snprintf(p, sizeof(p), "%s/" WORK, f->top);
	assert_int_equal(chmod(p, 0700), 0);
	assert_int_equal(area_recover_sync(fd, st.st_dev, "a", NULL), 0);
	assert_true(exists(f, WORK "/file"));
	assert_int_equal(area_recover_sync(fd, st.st_dev, "a", WORK), 0);
	assert_false(exists(f, WORK));
	/* unmarked, named by no record, empty (a power cut between its
	 * mkdirat() and its mark): removed; not root's 0700: stays */
	make(f, WORK "/", NULL);
	assert_int_equal(chmod(p, 0755), 0);
	assert_int_equal(area_recover_sync(fd, st.st_dev, "a", NULL), 0);
	assert_true(exists(f, WORK));
	assert_int_equal(chmod(p, 0700), 0);
	assert_int_equal(area_recover_sync(fd, st.st_dev, "a", NULL), 0);
	assert_false(exists(f, WORK));
	close(fd);
}

static void test_meminfo(void **ctx)
{
	struct fixture *f = *ctx;
	struct sysinfo_memory m;
	char p[PATH_MAX];

	make(f, "meminfo",
	     "MemTotal:       24576000 kB\nMemFree:         1000 kB\n"
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
		cmocka_unit_test(test_mount_states),
		cmocka_unit_test(test_sync_how),
		cmocka_unit_test(test_submounts_top),
		cmocka_unit_test_setup_teardown(test_sync_dir_user, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sync_dir_root, setup, teardown),
		cmocka_unit_test_setup_teardown(test_meminfo, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
