/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The incremental sync back (copy_sync.c) on a scratch directory: "area"
 * is synced into "lower" through the working directory "w".  After each
 * sync the two trees are the same (names, types, contents, modes, owners,
 * mtimes, link targets, hard links), an entry that did not change is the
 * same inode as before (not copied), and w holds only replaced or deleted
 * versions.  A change that keeps size and mtime (mtime set back) is found
 * by its ctime against the baseline, where the baseline can be kept
 * (trusted xattrs: root).  The area is swapped under the sync (a directory
 * becomes a link to a "secret" one) at its lookup: nothing of the secret
 * reaches the lower copy (C21).
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cmocka.h>

#include "copy/copy.h"
#include "copy/copy_fd.h"
#include "copy/copy_sync_internal.h"

struct fixture {
	char top[64];
	int fd, area, lower;
};

static const char *swap_on; /* openat() of this name swaps t and tl */
static int swap_dir = -1;

static int d_openat(int d, const char *n, int f, mode_t m)
{
	if (swap_on && !strcmp(n, swap_on) && (f & O_PATH)) {
		assert_int_equal(renameat2(swap_dir, "t", swap_dir, "tl", RENAME_EXCHANGE), 0);
		swap_on = NULL;
	}
	return openat(d, n, f, m);
}

static struct copy_sys disturbing;

static void put(int d, const char *name, const char *text)
{
	int fd = openat(d, name, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

static int sh(const struct fixture *f, const char *fmt, ...)
{
	char cmd[1024], body[900];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(body, sizeof(body), fmt, ap);
	va_end(ap);
	snprintf(cmd, sizeof(cmd), "cd '%s' && %s", f->top, body);
	return system(cmd);
}

static ino_t ino(int d, const char *name)
{
	struct stat st;

	assert_int_equal(fstatat(d, name, &st, AT_SYMLINK_NOFOLLOW), 0);
	return st.st_ino;
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	snprintf(f->top, sizeof(f->top), "/tmp/test_copy_sync.XXXXXX");
	if (!mkdtemp(f->top))
		return -1;
	f->fd = open(f->top, O_RDONLY | O_DIRECTORY);
	mkdirat(f->fd, "area", 0755);
	mkdirat(f->fd, "lower", 0755);
	mkdirat(f->fd, "secret", 0700);
	put(f->fd, "secret/x", "SECRET");
	f->area = openat(f->fd, "area", O_RDONLY | O_DIRECTORY);
	f->lower = openat(f->fd, "lower", O_RDONLY | O_DIRECTORY);
	mkdirat(f->area, "a", 0750);
	mkdirat(f->area, "a/b", 0705);
	put(f->area, "a/b/f", "deep");
	put(f->area, "a/keep", "unchanged");
	put(f->area, "a/same", "0123456789");
	put(f->area, "gone", "deleted later");
	mkdirat(f->area, "gonedir", 0755);
	put(f->area, "gonedir/x", "x");
	put(f->area, "becomesdir", "file");
	mkdirat(f->area, "becomesfile", 0755);
	put(f->area, "becomesfile/y", "y");
	symlinkat("a/b/f", f->area, "link");
	put(f->area, "h1", "linked");
	linkat(f->area, "h1", f->area, "a/h2", 0);
	mkfifoat(f->area, "fifo", 0640);
	mkdirat(f->area, "t", 0755);
	put(f->area, "t/x", "user");
	assert_int_equal(sh(f, "mkdir area/many area/more && for i in $(seq 1 150); do echo $i >area/many/$i; echo $i >area/more/$i; done"),
			 0);
	symlinkat("../secret", f->area, "tl");
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	int r = sh(f, "cd / && rm -rf '%s'", f->top);

	close(f->area);
	close(f->lower);
	close(f->fd);
	free(f);
	return r == 0 ? 0 : -1;
}

/* a sync through a new w; asserts it succeeded */
static void run_sync(struct fixture *f, const struct copy_sys *sys, unsigned jobs)
{
	struct copy_opts o = { .label = "test", .jobs = jobs };
	struct copy_result res;
	int w, r;

	sh(f, "rm -rf w");
	assert_int_equal(mkdirat(f->fd, "w", 0700), 0);
	w = openat(f->fd, "w", O_RDONLY | O_DIRECTORY);
	r = copy_sync_fd(f->area, f->lower, w, &o, sys, &res);
	if (r < 0)
		print_error("sync: %d %s\n", res.err, res.msg);
	assert_int_equal(r, 0);
	close(w);
}

/* the same tree: names, types, modes, owners, sizes, mtimes of all but
 * the roots' (and tl, which the swap test changes), contents, targets */
static void same_trees(struct fixture *f)
{
	const char *list = "find . -mindepth 1 -printf '%p %y %m %U %G %s %T@ %l %n\\n' | sort";

	assert_int_equal(sh(f, "(cd area && %s) >list.a && (cd lower && %s) >list.l && diff list.a list.l >&2",
			    list, list),
			 0);
	assert_int_equal(sh(f, "diff -r --no-dereference -x fifo area lower >&2"), 0);
}

/* The seed's baseline is later than every ctime the copy could leave: the
 * fine clock read before it (a ctime can be that fine: multigrain
 * timestamps), which a plain coarse reading often is not. */
static void test_base_after_copy(void **state)
{
	struct timespec fine, base;

	(void)state;
	for (int i = 0; i < 20; i++) {
		assert_int_equal(clock_gettime(CLOCK_REALTIME, &fine), 0);
		assert_int_equal(copy_sync_base_past_writes(&base), 0);
		assert_true(base.tv_sec > fine.tv_sec ||
			    (base.tv_sec == fine.tv_sec && base.tv_nsec > fine.tv_nsec));
	}
}

static void test_sync_incremental(void **state)
{
	struct fixture *f = *state;
	struct timespec old[2] = { { 0, UTIME_OMIT }, { 0, 0 } };
	struct stat st;
	ino_t keep, deep, h;
	bool base;

	run_sync(f, &copy_sys_libc, 1);
	same_trees(f);
	base = fgetxattr(f->area, COPY_SYNCED_XATTR, NULL, 0) > 0;
	assert_int_equal(ino(f->lower, "h1"), ino(f->lower, "a/h2"));
	keep = ino(f->lower, "a/keep");
	deep = ino(f->lower, "a/b/f");
	h = ino(f->lower, "h1");
	sleep(1); /* past the coarse clock's tick that the base was read at */

	/* same size and mtime, new content: found only by its ctime */
	assert_int_equal(fstatat(f->area, "a/same", &st, 0), 0);
	old[1] = st.st_mtim;
	put(f->area, "a/same", "abcdefghij");
	assert_int_equal(utimensat(f->area, "a/same", old, 0), 0);
	unlinkat(f->area, "gone", 0);
	sh(f, "rm -rf area/gonedir area/becomesdir area/becomesfile");
	mkdirat(f->area, "becomesdir", 0700);
	put(f->area, "becomesdir/z", "z");
	put(f->area, "becomesfile", "now a file");
	mkdirat(f->area, "new", 0755);
	mkdirat(f->area, "new/sub", 0755);
	put(f->area, "new/sub/n", "new");
	linkat(f->area, "new/sub/n", f->area, "new/n2", 0);
	/* more than one list's worth in each of two threads */
	assert_int_equal(sh(f, "for i in $(seq 1 150); do echo x$i >area/many/$i; echo y$i >area/more/$i; done"),
			 0);
	assert_int_equal(fchmod(f->area, 0711), 0);
	assert_int_equal(fchmodat(f->area, "a/b", 0755, 0), 0);

	/* at once, in the clock tick of these changes: the sync's base is
	 * past them (copy_sync_base_past_writes()), so the unchanged sync
	 * below copies none of them again */
	run_sync(f, &copy_sys_libc, 2);
	same_trees(f);
	assert_true(ino(f->lower, "a/keep") == keep);
	assert_true(ino(f->lower, "a/b/f") == deep);
	assert_true(ino(f->lower, "h1") == h);
	assert_int_equal(ino(f->lower, "new/sub/n"), ino(f->lower, "new/n2"));
	if (base)
		assert_int_equal(sh(f, "grep -qx abcdefghij lower/a/same"), 0);
	/* w holds what was replaced or deleted, nothing live */
	assert_int_equal(sh(f, "test -e w/d0 || test -e w/n0"), 0);

	/* nothing changed: nothing is copied, w stays empty */
	sleep(1);
	run_sync(f, &copy_sys_libc, 1);
	same_trees(f);
	if (base)
		assert_int_equal(sh(f, "test -z \"$(ls -A w)\""), 0);
}

/* the area's t becomes a link to ../secret when the sync looks it up */
static void test_sync_swap(void **state)
{
	struct fixture *f = *state;

	disturbing = copy_sys_libc;
	disturbing.openat = d_openat;
	swap_dir = f->area;
	swap_on = "t";
	run_sync(f, &disturbing, 1);
	assert_null(swap_on); /* the swap happened */
	assert_int_equal(sh(f, "! grep -rq SECRET lower"), 0);
	assert_int_equal(sh(f, "test -L lower/t || test ! -e lower/t/x"), 0);
	/* and once more with the lower copy there: t a directory in both */
	assert_int_equal(renameat2(f->area, "t", f->area, "tl", RENAME_EXCHANGE), 0);
	run_sync(f, &copy_sys_libc, 1);
	sleep(1);
	swap_on = "t";
	run_sync(f, &disturbing, 1);
	assert_int_equal(sh(f, "! grep -rq SECRET lower"), 0);
}

/* creating "m3" fails with EROFS: the directory's filesystem, not m3 */
static int rofs_openat(int d, const char *n, int f, mode_t m)
{
	if (!strcmp(n, "m3") && (f & O_CREAT)) {
		errno = EROFS;
		return -1;
	}
	return openat(d, n, f, m);
}

/* a failure inside a new directory (step 2, copied below W as n<N>) is
 * told at its path in the directory, never at its name below W */
static void test_new_dir_failure_path(void **state)
{
	struct fixture *f = *state;
	struct copy_opts o = { .label = "test", .jobs = 1 };
	struct copy_result res;
	int w;

	run_sync(f, &copy_sys_libc, 1);
	sleep(1);
	assert_int_equal(sh(f, "mkdir -p area/a/newdir && for i in 1 2 3 4; do echo $i >area/a/newdir/m$i; done"), 0);
	disturbing = copy_sys_libc;
	disturbing.openat = rofs_openat;
	sh(f, "rm -rf w");
	assert_int_equal(mkdirat(f->fd, "w", 0700), 0);
	w = openat(f->fd, "w", O_RDONLY | O_DIRECTORY);
	assert_int_equal(copy_sync_fd(f->area, f->lower, w, &o, &disturbing, &res), -EROFS);
	close(w);
	assert_non_null(strstr(res.msg, "'a/newdir/m3': "));
	assert_int_equal(sh(f, "test ! -e lower/a/newdir"), 0);
}

/* The record of the lower root's names (COPY_LOWER_ROOT_XATTR) holds
 * while the same names are there, whatever the sync's working directory
 * is called, and not after one is added, removed or renamed. */
static void test_root_record(void **state)
{
	struct fixture *f = *state;
	struct stat w1, w2;

	put(f->lower, "a", "a");
	put(f->lower, "b", "b");
	assert_int_equal(mkdirat(f->lower, ".w1", 0700), 0);
	assert_int_equal(fstatat(f->lower, ".w1", &w1, 0), 0);
	if (copy_sync_root_record(f->area, f->lower, &w1) == -EPERM)
		skip(); /* trusted xattrs: root */
	assert_true(sync_root_kept(f->area, f->lower, &w1));
	/* another sync, another working directory: the names are the same */
	assert_int_equal(unlinkat(f->lower, ".w1", AT_REMOVEDIR), 0);
	assert_int_equal(mkdirat(f->lower, ".w2", 0700), 0);
	assert_int_equal(fstatat(f->lower, ".w2", &w2, 0), 0);
	assert_true(sync_root_kept(f->area, f->lower, &w2));
	assert_false(sync_root_kept(f->area, f->lower, NULL)); /* .w2 is a name of the root's */
	/* a rename, and back */
	assert_int_equal(renameat(f->lower, "a", f->lower, "c"), 0);
	assert_false(sync_root_kept(f->area, f->lower, &w2));
	assert_int_equal(renameat(f->lower, "c", f->lower, "a"), 0);
	assert_true(sync_root_kept(f->area, f->lower, &w2));
	/* a name removed; names swapped (the same set) */
	assert_int_equal(unlinkat(f->lower, "b", 0), 0);
	assert_false(sync_root_kept(f->area, f->lower, &w2));
	put(f->lower, "b", "b again");
	assert_int_equal(renameat2(f->lower, "a", f->lower, "b", RENAME_EXCHANGE), 0);
	assert_true(sync_root_kept(f->area, f->lower, &w2));
	/* none recorded: not kept */
	assert_int_equal(fremovexattr(f->area, COPY_LOWER_ROOT_XATTR), 0);
	assert_false(sync_root_kept(f->area, f->lower, &w2));
}

/* same_file_data() (shared/mapped.c), which a stop runs on every file:
 * what is a hole in both is skipped, data in one against a hole in the
 * other is compared as zeros, data past a hole is read */
static void test_same_data_sparse(void **state)
{
	char dir[] = "/tmp/test_copy_sync.XXXXXX", p[64];
	const off_t size = (off_t)1 << 30, zeros = 4096;
	static const char block[4096];
	int fd[3];

	(void)state;
	assert_non_null(mkdtemp(dir));
	for (int i = 0; i < 3; i++) {
		snprintf(p, sizeof(p), "%s/f%d", dir, i);
		fd[i] = open(p, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
		assert_true(fd[i] >= 0);
		assert_int_equal(ftruncate(fd[i], size), 0);
		assert_int_equal(pwrite(fd[i], "x", 1, 0), 1);
		assert_int_equal(pwrite(fd[i], "y", 1, size / 2), 1);
		unlink(p);
	}
	/* zeros written where the others have a hole: the same bytes */
	assert_int_equal(pwrite(fd[2], block, sizeof(block), size / 4), (ssize_t)sizeof(block));
	assert_int_equal(same_file_data(fd[0], fd[1], size), 1);
	assert_int_equal(same_file_data(fd[0], fd[2], size), 1);
	assert_int_equal(same_file_data(fd[2], fd[0], size), 1);
	/* a byte past the holes differs */
	assert_int_equal(pwrite(fd[1], "z", 1, size - zeros), 1);
	assert_int_equal(same_file_data(fd[0], fd[1], size), 0);
	assert_int_equal(same_file_data(fd[1], fd[0], size), 0);
	/* data in a hole of the other, not zeros */
	assert_int_equal(pwrite(fd[2], "w", 1, size / 4 + 7), 1);
	assert_int_equal(same_file_data(fd[0], fd[2], size), 0);
	for (int i = 0; i < 3; i++)
		close(fd[i]);
	rmdir(dir);
}

/* mapped_save(): a set larger than the attribute holds is saved as "all"
 * (ext4's user xattrs hold a block: 2,000 numbers do not fit), not lost */
static void test_mapped_save_too_big(void **state)
{
	char p[] = "/tmp/test_copy_sync.XXXXXX";
	struct mapped_set m = { 0 }, back = { 0 };
	int fd = mkstemp(p);

	(void)state;
	assert_true(fd >= 0);
	unlink(p);
	for (ino_t i = 0; i < 20000; i++)
		assert_int_equal(mapped_add(&m, 1000000000 + i * 7), 0);
	mapped_sort(&m);
	if (mapped_save(&m, fd, "user.storaged-test") == -EOPNOTSUPP) {
		close(fd);
		mapped_done(&m);
		skip(); /* no user xattrs on /tmp */
	}
	assert_int_equal(mapped_load(&back, fd, "user.storaged-test"), 0);
	mapped_sort(&back);
	assert_true(back.all || back.n == m.n);
	assert_true(mapped_has(&back, 1000000000 + 7 * 19999));
	mapped_done(&m);
	mapped_done(&back);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_base_after_copy),
		cmocka_unit_test_setup_teardown(test_sync_incremental, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sync_swap, setup, teardown),
		cmocka_unit_test_setup_teardown(test_root_record, setup, teardown),
		cmocka_unit_test_setup_teardown(test_new_dir_failure_path, setup, teardown),
		cmocka_unit_test(test_same_data_sparse),
		cmocka_unit_test(test_mapped_save_too_big),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
