/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * safepath_check on real directories: root-owned links in root-only
 * directories are followed; links that another user owns, or that sit in a
 * directory others can write, are refused.  Needs root for lchown().
 * The same walk as a lookup (safepath_lookup(), safepath_is_local()).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "mount/safepath.h"
#include "mount/view.h"

struct dirs {
	char top[64]; /* mkdtemp: 0700, root */
	char path[256];
};

static int setup(void **state)
{
	struct dirs *d = calloc(1, sizeof(*d));

	if (!d)
		return -1;
	strcpy(d->top, "/tmp/safepath.XXXXXX");
	if (!mkdtemp(d->top))
		return -1;
	snprintf(d->path, sizeof(d->path), "%s/real", d->top);
	mkdir(d->path, 0755);
	*state = d;
	return 0;
}

static int teardown(void **state)
{
	struct dirs *d = *state;
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "%s/remote", d->top);
	umount2(cmd, MNT_DETACH); /* left by a failed test_is_local_stops_at_remote */
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", d->top);
	if (system(cmd) != 0)
		return -1;
	free(d);
	return 0;
}

static void sub(const struct dirs *d, const char *rel, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s", d->top, rel);
}

static void test_plain_and_missing(void **state)
{
	struct dirs *d = *state;
	char p[256], why[512];

	assert_int_equal(safepath_check(d->path, why, sizeof(why)), 0);
	sub(d, "real/not/yet/there", p, sizeof(p));
	assert_int_equal(safepath_check(p, why, sizeof(why)), 0);
	assert_int_equal(safepath_check("relative/path", why, sizeof(why)), -EINVAL);
}

static void assert_same(int fd, const char *path)
{
	struct stat a, b;

	assert_int_equal(fstat(fd, &a), 0);
	assert_int_equal(stat(path, &b), 0);
	assert_true(a.st_ino == b.st_ino && a.st_dev == b.st_dev);
}

/* safepath_open(): the descriptor is the directory walked to; a trusted
 * link is followed; a missing rest is -ENOENT, or made (mkdirat). */
static void test_open_returns_walked_fd(void **state)
{
	struct dirs *d = *state;
	char p[256], l[256], why[512];
	struct stat st;
	int fd = -2;

	assert_int_equal(safepath_open(d->path, 0, &fd, why, sizeof(why)), 0);
	assert_same(fd, d->path);
	assert_int_equal(fcntl(fd, F_GETFL) & O_PATH, O_PATH);
	close(fd);
	sub(d, "link", l, sizeof(l));
	assert_int_equal(symlink(d->path, l), 0); /* root's, in root's 0700 directory */
	assert_int_equal(safepath_open(l, 0, &fd, why, sizeof(why)), 0);
	assert_same(fd, d->path);
	close(fd);
	sub(d, "real/x/y", p, sizeof(p));
	assert_int_equal(safepath_open(p, 0, &fd, why, sizeof(why)), -ENOENT);
	assert_int_equal(fd, -1);
	assert_int_equal(safepath_open(p, 0711, &fd, why, sizeof(why)), 0);
	assert_same(fd, p);
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0711 & ~umask(022));
	close(fd);
}

/* safepath_open_cached(): siblings share the parent's descriptor, a
 * parent is walked from its deepest cached ancestor, a parent reached
 * through a link is not kept, the last component is checked afresh, and a
 * forgotten mount point is walked again (a mount covering it is entered). */
static void test_open_cached(void **state)
{
	struct dirs *d = *state;
	struct view_dirs c = { 0 };
	char p[256], l[256], why[512] = "";
	size_t kept = 0;
	int fd = -2;

	for (const char *const *n = (const char *const[]){ "real/a", "real/b", "real/a/x", NULL };
	     *n; n++) {
		sub(d, *n, p, sizeof(p));
		assert_int_equal(safepath_open_cached(&c, p, 0755, &fd, NULL, why, sizeof(why)), 0);
		assert_same(fd, p);
		assert_int_equal(fcntl(fd, F_GETFL) & O_PATH, O_PATH);
		close(fd);
	}
	for (size_t i = 0; i < VIEW_DIRS_MAX; i++)
		kept += c.v[i].path != NULL;
	assert_int_equal(kept, 2); /* real, real/a */
	/* a missing last component is -ENOENT as from safepath_open() */
	sub(d, "real/none", p, sizeof(p));
	assert_int_equal(safepath_open_cached(&c, p, 0, &fd, NULL, why, sizeof(why)), -ENOENT);
	assert_int_equal(fd, -1);
	/* an untrusted link as the last component: refused */
	sub(d, "real/a/planted", l, sizeof(l));
	assert_int_equal(symlink("/etc", l), 0);
	if (geteuid() == 0) {
		assert_int_equal(lchown(l, 65534, 65534), 0);
		assert_int_equal(safepath_open_cached(&c, l, 0, &fd, NULL, why, sizeof(why)), -EPERM);
	}
	/* through a trusted link: followed, the parent not kept */
	sub(d, "lnk", l, sizeof(l));
	assert_int_equal(symlink("real", l), 0);
	sub(d, "lnk/b", p, sizeof(p));
	assert_int_equal(safepath_open_cached(&c, p, 0, &fd, NULL, why, sizeof(why)), 0);
	sub(d, "real/b", p, sizeof(p));
	assert_same(fd, p);
	close(fd);
	for (size_t i = 0; i < VIEW_DIRS_MAX; i++)
		assert_true(!c.v[i].path || !strstr(c.v[i].path, "/lnk"));
	/* a mount on real/a: after forgetting it, the walk enters the mount */
	sub(d, "real/a", p, sizeof(p));
	if (geteuid() == 0 && mount("t", p, "tmpfs", 0, "size=64k") == 0) {
		view_dirs_forget(&c, p);
		for (size_t i = 0; i < VIEW_DIRS_MAX; i++)
			assert_true(!c.v[i].path || !strstr(c.v[i].path, "/real/a"));
		sub(d, "real/a/y", p, sizeof(p));
		assert_int_equal(safepath_open_cached(&c, p, 0755, &fd, NULL, why, sizeof(why)), 0);
		assert_same(fd, p); /* made in the tmpfs, not the covered directory */
		close(fd);
		sub(d, "real/a/x", p, sizeof(p));
		assert_int_equal(safepath_open_cached(&c, p, 0, &fd, NULL, why, sizeof(why)), -ENOENT);
		sub(d, "real/a", p, sizeof(p));
		umount2(p, MNT_DETACH);
	}
	view_dirs_forget(&c, NULL);
	for (size_t i = 0; i < VIEW_DIRS_MAX; i++)
		assert_null(c.v[i].path);
}

static void test_root_link_in_root_dir_followed(void **state)
{
	struct dirs *d = *state;
	char link[256], p[256], why[512];

	sub(d, "link", link, sizeof(link));
	assert_int_equal(symlink("real", link), 0);
	sub(d, "link/x", p, sizeof(p));
	assert_int_equal(safepath_check(p, why, sizeof(why)), 0);
}

/* "../real" in a trusted link's target goes up from the link's directory,
 * as the kernel resolves it. */
static void test_link_going_up_followed(void **state)
{
	struct dirs *d = *state;
	char dir[256], link[256], p[256], why[512];

	sub(d, "lnk", dir, sizeof(dir));
	assert_int_equal(mkdir(dir, 0755), 0);
	sub(d, "lnk/up", link, sizeof(link));
	assert_int_equal(symlink("../real", link), 0);
	sub(d, "lnk/up/x", p, sizeof(p));
	assert_int_equal(safepath_check(p, why, sizeof(why)), 0);
	sub(d, "lnk/../real", p, sizeof(p)); /* not from a link: refused */
	assert_int_equal(safepath_check(p, why, sizeof(why)), -EINVAL);
}

static void test_foreign_link_refused(void **state)
{
	struct dirs *d = *state;
	char link[256], why[512] = "";

	if (geteuid() != 0)
		skip();
	sub(d, "planted", link, sizeof(link));
	assert_int_equal(symlink("/etc", link), 0);
	assert_int_equal(lchown(link, 65534, 65534), 0);
	assert_int_equal(safepath_check(link, why, sizeof(why)), -EPERM);
	assert_non_null(strstr(why, "owned by uid 65534"));
	assert_non_null(strstr(why, "planted"));
}

static void test_link_in_writable_dir_refused(void **state)
{
	struct dirs *d = *state;
	char dir[256], link[256], why[512] = "";

	sub(d, "shared", dir, sizeof(dir));
	assert_int_equal(mkdir(dir, 0755), 0);
	assert_int_equal(chmod(dir, 0777), 0);
	sub(d, "shared/mnt", link, sizeof(link));
	assert_int_equal(symlink(d->path, link), 0);
	assert_int_equal(safepath_check(link, why, sizeof(why)), -EPERM);
	assert_non_null(strstr(why, "mode 0777"));
	/* sticky, as /tmp: nobody but root can replace root's link */
	assert_int_equal(chmod(dir, 01777), 0);
	assert_int_equal(safepath_check(link, why, sizeof(why)), 0);
}

static void test_link_loop(void **state)
{
	struct dirs *d = *state;
	char a[256], b[256], why[512];

	sub(d, "a", a, sizeof(a));
	sub(d, "b", b, sizeof(b));
	assert_int_equal(symlink("b", a), 0);
	assert_int_equal(symlink("a", b), 0);
	assert_int_equal(safepath_check(a, why, sizeof(why)), -ELOOP);
}

/* is_local callbacks: every mount local but @remote_id; counts the calls */
struct locality {
	uint64_t remote_id;
	unsigned calls;
};

static bool fake_is_local(void *userdata, uint64_t id)
{
	struct locality *l = userdata;

	l->calls++;
	return id != l->remote_id;
}

static uint64_t mount_id_of(const char *path)
{
	struct statx stx;

	assert_int_equal(statx(AT_FDCWD, path, 0, 0x1000U /* STATX_MNT_ID */, &stx), 0);
	return stx.stx_mnt_id;
}

/* A tmpfs on "remote" with a directory "x", that the tests call remote
 * (their locality): its mount ID; @ret_depth: the names in its path. */
static uint64_t mount_remote(const struct dirs *d, char *mnt, size_t len, unsigned *ret_depth)
{
	char p[256];

	sub(d, "remote", mnt, len);
	assert_int_equal(mkdir(mnt, 0755), 0);
	assert_int_equal(mount("test", mnt, "tmpfs", 0, "size=64k"), 0);
	sub(d, "remote/x", p, sizeof(p));
	assert_int_equal(mkdir(p, 0755), 0);
	for (const char *c = mnt; *c; c++)
		*ret_depth += *c == '/';
	return mount_id_of(mnt);
}

static void test_is_local_plain_missing_and_bad(void **state)
{
	struct dirs *d = *state;
	struct locality l = { .remote_id = UINT64_MAX };
	const struct safepath_local local = { .is_local = fake_is_local, .userdata = &l };
	char p[256];

	assert_int_equal(safepath_is_local(d->path, &local), 1);
	sub(d, "real/not/yet/there", p, sizeof(p));
	assert_int_equal(safepath_is_local(p, &local), 1);
	assert_int_equal(safepath_is_local("/", &local), 1);
	assert_int_equal(safepath_is_local("relative/path", &local), -EINVAL);
	assert_int_equal(safepath_is_local("/tmp//x", &local), -EINVAL);
	assert_int_equal(safepath_is_local("/tmp/../etc", &local), -EINVAL);
}

/* A pass's cached directories (all local) are not looked up again: only
 * the names below the deepest one are. */
static void test_is_local_starts_below_known(void **state)
{
	struct dirs *d = *state;
	struct locality l = { .remote_id = UINT64_MAX };
	struct view_dirs c = { 0 };
	struct safepath_local local = { .is_local = fake_is_local, .userdata = &l, .known = &c };
	const struct view_dir *parent = NULL;
	char p[256], why[512];
	int fd;

	sub(d, "real/a", p, sizeof(p));
	assert_int_equal(safepath_open_cached(&c, p, 0755, &fd, &parent, why, sizeof(why)), 0);
	close(fd);
	sub(d, "real", p, sizeof(p));
	/* only root can change what a path through root's directories names
	 * (the test's directory sits in sticky /tmp) */
	if (geteuid() == 0)
		assert_string_equal(parent->path, p);
	else
		assert_null(parent);
	assert_int_equal(safepath_is_local(p, &local), 1);
	assert_int_equal(l.calls, 0);
	sub(d, "real/a", p, sizeof(p));
	assert_int_equal(safepath_is_local(p, &local), 1);
	assert_int_equal(l.calls, 1); /* "a", from the kept "real" */
	sub(d, "link", p, sizeof(p));
	assert_int_equal(symlink("real", p), 0);
	sub(d, "link/x", p, sizeof(p));
	assert_int_equal(safepath_is_local(p, &local), 0); /* not below "real" */
	/* the last name a link: no parent said */
	sub(d, "real/b", p, sizeof(p));
	assert_int_equal(symlink("a", p), 0);
	assert_int_equal(safepath_open_cached(&c, p, 0, &fd, &parent, why, sizeof(why)), 0);
	close(fd);
	assert_null(parent);
	/* a directory others can write in: a name in it may change; with the
	 * sticky bit (as /tmp), root's names in it only by root */
	for (mode_t mode = 0777; mode <= 01777; mode += 01000) {
		view_dirs_forget(&c, NULL);
		sub(d, "real", p, sizeof(p));
		assert_int_equal(chmod(p, mode), 0);
		sub(d, "real/a", p, sizeof(p));
		assert_int_equal(safepath_open_cached(&c, p, 0, &fd, &parent, why, sizeof(why)), 0);
		close(fd);
		assert_int_equal(parent != NULL, mode == 01777 && geteuid() == 0);
	}
	view_dirs_forget(&c, NULL);
}

static void test_is_local_refuses_links(void **state)
{
	struct dirs *d = *state;
	struct locality l = { .remote_id = UINT64_MAX };
	const struct safepath_local local = { .is_local = fake_is_local, .userdata = &l };
	char link[256], p[256];

	sub(d, "link", link, sizeof(link));
	assert_int_equal(symlink("real", link), 0);
	sub(d, "link/x", p, sizeof(p));
	assert_int_equal(safepath_is_local(p, &local), 0);
}

/* The walk stops at the first name on a mount that is not local: nothing
 * inside it is looked up. */
static void test_is_local_stops_at_remote(void **state)
{
	struct dirs *d = *state;
	char mnt[256], p[256];
	struct locality l;
	const struct safepath_local local = { .is_local = fake_is_local, .userdata = &l };
	unsigned depth = 0;

	if (geteuid() != 0)
		skip();
	l = (struct locality){ .remote_id = mount_remote(d, mnt, sizeof(mnt), &depth) };
	sub(d, "remote/x/y", p, sizeof(p));
	assert_int_equal(safepath_is_local(p, &local), 0);
	assert_int_equal(l.calls, depth + 1); /* "/", then each name up to mnt */
	l = (struct locality){ .remote_id = UINT64_MAX };
	assert_int_equal(safepath_is_local(p, &local), 1);
	assert_int_equal(umount(mnt), 0);
}

/* safepath_lookup() of @rel, below the test's directory, without a cache:
 * it ends as @end, at @want (below the test's directory too), of type
 * @mode. */
static void expect_lookup(const struct dirs *d, const struct safepath_local *local, const char *rel,
			  int end, const char *want, mode_t mode)
{
	char p[256], w[256], buf[PATH_MAX];
	mode_t got;

	sub(d, rel, p, sizeof(p));
	sub(d, want, w, sizeof(w));
	assert_int_equal(safepath_lookup(NULL, p, local, buf, &got), end);
	assert_string_equal(buf, w);
	assert_int_equal(got, mode);
}

/* The lookup mode: where a path leads, every link followed (trusted or
 * not), the part that does not exist kept as written. */
static void test_lookup_follows_links(void **state)
{
	struct dirs *d = *state;
	struct locality l = { .remote_id = UINT64_MAX };
	const struct safepath_local local = { .is_local = fake_is_local, .userdata = &l };
	char p[256], tgt[256], buf[PATH_MAX];
	mode_t mode;
	int fd;

	sub(d, "link", p, sizeof(p));
	assert_int_equal(symlink("real", p), 0);
	expect_lookup(d, &local, "link/not/yet", SAFEPATH_MISSING, "real/not/yet", 0);
	expect_lookup(d, &local, "link", SAFEPATH_FOUND, "real", S_IFDIR);
	/* an absolute target that goes up, to a file */
	sub(d, "real/f", p, sizeof(p));
	fd = open(p, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	close(fd);
	sub(d, "real/../real", tgt, sizeof(tgt));
	sub(d, "abs", p, sizeof(p));
	assert_int_equal(symlink(tgt, p), 0);
	expect_lookup(d, &local, "abs/f", SAFEPATH_FOUND, "real/f", S_IFREG);
	/* nothing is looked up below a file */
	expect_lookup(d, &local, "link/f/x", SAFEPATH_STOPPED, "real/f/x", 0);
	assert_int_equal(safepath_lookup(NULL, "relative", &local, buf, &mode), -EINVAL);
}

/* A lookup stops at the first name on a mount that is not local, through a
 * link too: nothing inside it is looked up, the rest is kept as written. */
static void test_lookup_stops_at_remote(void **state)
{
	struct dirs *d = *state;
	struct locality l;
	const struct safepath_local local = { .is_local = fake_is_local, .userdata = &l };
	char mnt[256], p[256];
	unsigned depth = 0;

	if (geteuid() != 0)
		skip();
	l = (struct locality){ .remote_id = mount_remote(d, mnt, sizeof(mnt), &depth) };
	sub(d, "to-remote", p, sizeof(p));
	assert_int_equal(symlink("remote/x", p), 0);
	expect_lookup(d, &local, "to-remote/y", SAFEPATH_STOPPED, "remote/x/y", 0);
	/* "/", each name up to the link, the link, "remote" */
	assert_int_equal(l.calls, depth + 2);
	assert_int_equal(umount(mnt), 0);
}

/* A lookup keeps the parent it walked to, of its own kind: the next lookup
 * of a sibling looks up one name; an opening walk never starts from it. */
static void test_lookup_keeps_parent(void **state)
{
	struct dirs *d = *state;
	struct locality l = { .remote_id = UINT64_MAX };
	const struct safepath_local local = { .is_local = fake_is_local, .userdata = &l };
	struct view_dirs c = { 0 };
	char p[256], buf[PATH_MAX];
	mode_t mode;

	sub(d, "real/a", p, sizeof(p));
	assert_int_equal(safepath_lookup(&c, p, &local, buf, &mode), SAFEPATH_MISSING);
	assert_string_equal(buf, p);
	assert_non_null(view_dirs_find(&c, d->path, strlen(d->path), false, false));
	assert_null(view_dirs_find(&c, d->path, strlen(d->path), false, true));
	l.calls = 0;
	sub(d, "real/b", p, sizeof(p));
	assert_int_equal(safepath_lookup(&c, p, &local, buf, &mode), SAFEPATH_MISSING);
	assert_int_equal(l.calls, 0); /* "b" is missing: no mount asked of */
	assert_int_equal(safepath_lookup(&c, d->path, &local, buf, &mode), SAFEPATH_FOUND);
	assert_string_equal(buf, d->path);
	view_dirs_forget(&c, NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_plain_and_missing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_is_local_starts_below_known, setup, teardown),
		cmocka_unit_test_setup_teardown(test_open_returns_walked_fd, setup, teardown),
		cmocka_unit_test_setup_teardown(test_open_cached, setup, teardown),
		cmocka_unit_test_setup_teardown(test_root_link_in_root_dir_followed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_link_going_up_followed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_foreign_link_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_link_in_writable_dir_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_link_loop, setup, teardown),
		cmocka_unit_test_setup_teardown(test_is_local_plain_missing_and_bad, setup, teardown),
		cmocka_unit_test_setup_teardown(test_is_local_refuses_links, setup, teardown),
		cmocka_unit_test_setup_teardown(test_is_local_stops_at_remote, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lookup_follows_links, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lookup_stops_at_remote, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lookup_keeps_parent, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
