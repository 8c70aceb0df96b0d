/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The tree copy by descriptor (copy.c, copy_fd.c) on a scratch directory,
 * as any user: a recording call table proves that every call naming a
 * file gets a directory descriptor and one name (never a path, never
 * AT_FDCWD), and a disturbing one swaps a directory of the source with a
 * symbolic link to a "secret" directory at the worst moments (C21): the
 * copy never reads through the link.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "copy/copy.h"
#include "copy/copy_fd.h"

/* What the table's calls saw, and the swap to make: test-only state of
 * the call table (its functions take no context). */
static struct {
	unsigned calls, bad; /* calls; calls with a path or AT_FDCWD */
	char bad_name[256];
	const char *swap_on; /* swap when openat() sees this name ... */
	int swap_flags; /* ... with these flags among its own */
	int top; /* the test's scratch directory */
	bool swapped;
} rec;

static void check(int dirfd, const char *name)
{
	rec.calls++;
	if (dirfd == AT_FDCWD || dirfd < 0 || (name && strchr(name, '/'))) {
		rec.bad++;
		snprintf(rec.bad_name, sizeof(rec.bad_name), "%s", name ? name : "(null)");
	}
}

/* src/t <-> src/tl: a directory and a link to ../secret */
static void swap(void)
{
	int s = openat(rec.top, "src", O_RDONLY | O_DIRECTORY);

	assert_true(s >= 0);
	assert_int_equal(renameat2(s, "t", s, "tl", RENAME_EXCHANGE), 0);
	close(s);
	rec.swapped = true;
}

static int r_openat(int d, const char *n, int f, mode_t m)
{
	check(d, n);
	if (rec.swap_on && !rec.swapped && !strcmp(n, rec.swap_on) && (f & rec.swap_flags) == rec.swap_flags)
		swap();
	return openat(d, n, f, m);
}

static int r_reopen(int fd, int f)
{
	check(fd, NULL);
	return copy_sys_libc.reopen(fd, f);
}

static int r_mkdirat(int d, const char *n, mode_t m)
{
	check(d, n);
	return mkdirat(d, n, m);
}

static int r_symlinkat(const char *t, int d, const char *n)
{
	check(d, n);
	return symlinkat(t, d, n);
}

static ssize_t r_readlinkat(int d, const char *n, char *b, size_t l)
{
	check(d, n);
	return readlinkat(d, n, b, l);
}

static int r_mknodat(int d, const char *n, mode_t m, dev_t dev)
{
	check(d, n);
	return mknodat(d, n, m, dev);
}

static int r_linkat(int od, const char *on, int nd, const char *nn, int f)
{
	check(od, on);
	check(nd, nn);
	return linkat(od, on, nd, nn, f);
}

static int r_fchownat(int d, const char *n, uid_t u, gid_t g, int f)
{
	check(d, n);
	return fchownat(d, n, u, g, f);
}

static int r_fchmodat(int d, const char *n, mode_t m, int f)
{
	check(d, n);
	return fchmodat(d, n, m, f);
}

static int r_utimensat(int d, const char *n, const struct timespec ts[2], int f)
{
	check(d, n);
	return utimensat(d, n, ts, f);
}

static int r_unlinkat(int d, const char *n, int f)
{
	check(d, n);
	return unlinkat(d, n, f);
}

static const struct copy_sys recording = {
	.openat = r_openat,
	.reopen = r_reopen,
	.mkdirat = r_mkdirat,
	.symlinkat = r_symlinkat,
	.readlinkat = r_readlinkat,
	.mknodat = r_mknodat,
	.linkat = r_linkat,
	.fchownat = r_fchownat,
	.fchmodat = r_fchmodat,
	.utimensat = r_utimensat,
	.unlinkat = r_unlinkat,
};

static void put(int d, const char *name, const char *text)
{
	int fd = openat(d, name, O_WRONLY | O_CREAT | O_EXCL, 0644);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

/* <top>/secret/x{1,2}: "SECRET"; <top>/src: the user's tree, with t/ (two
 * links x1, x2 to one file), tl -> ../secret, a sparse file, a fifo, a
 * symbolic link, nested directories */
static int setup(void **state)
{
	char *top = strdup("/tmp/test_copy.XXXXXX");
	int s, fd;

	if (!top || !mkdtemp(top))
		return -1;
	rec = (typeof(rec)){ .top = open(top, O_RDONLY | O_DIRECTORY) };
	mkdirat(rec.top, "secret", 0700);
	mkdirat(rec.top, "src", 0755);
	mkdirat(rec.top, "dst", 0700);
	s = openat(rec.top, "secret", O_RDONLY | O_DIRECTORY);
	put(s, "x1", "SECRET");
	put(s, "x2", "SECRET");
	close(s);
	s = openat(rec.top, "src", O_RDONLY | O_DIRECTORY);
	mkdirat(s, "t", 0755);
	put(s, "t/x1", "user");
	linkat(s, "t/x1", s, "t/x2", 0);
	symlinkat("../secret", s, "tl");
	mkdirat(s, "a", 0750);
	mkdirat(s, "a/b", 0705);
	put(s, "a/b/f", "deep");
	symlinkat("../t/x1", s, "a/link");
	mkfifoat(s, "a/fifo", 0640);
	fd = openat(s, "a/sparse", O_WRONLY | O_CREAT, 0600);
	assert_int_equal(pwrite(fd, "end", 3, 8 << 20), 3);
	close(fd);
	close(s);
	*state = top;
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", (char *)*state);
	close(rec.top);
	free(*state);
	return system(cmd) == 0 ? 0 : -1;
}

static int run_copy(unsigned jobs, const struct copy_sys *sys)
{
	struct copy_opts o = { .label = "test", .jobs = jobs };
	struct copy_result res;
	int s = openat(rec.top, "src", O_RDONLY | O_DIRECTORY);
	int d = openat(rec.top, "dst", O_RDONLY | O_DIRECTORY);
	int r = copy_tree_fd(s, d, &o, sys, &res);

	if (r < 0)
		print_error("copy: %d %s\n", res.err, res.msg);
	assert_int_equal(r, res.err);
	close(s);
	close(d);
	return r;
}

/* the text of <top>/@path, "" when it cannot be read without following
 * a symbolic link (the copy of a link may point at the secret: reading
 * through it is this test's doing, not the copy's) */
static const char *text(const char *path)
{
	static char buf[64];
	char dir[128];
	const char *slash = strrchr(path, '/');
	int d, fd = -1;
	ssize_t n = 0;

	snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	d = copy_open_beneath(&copy_sys_libc, rec.top, dir);
	if (d >= 0)
		fd = openat(d, slash + 1, O_RDONLY | O_NOFOLLOW);
	if (fd >= 0)
		n = read(fd, buf, sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = '\0';
	if (fd >= 0)
		close(fd);
	if (d >= 0)
		close(d);
	return buf;
}

static bool refused_link(int r)
{
	return r == -ELOOP || r == -ENOTDIR; /* O_NOFOLLOW, with O_DIRECTORY */
}

static void lstat_at(const char *path, struct stat *st)
{
	assert_int_equal(fstatat(rec.top, path, st, AT_SYMLINK_NOFOLLOW), 0);
}

static void copy_fidelity(unsigned jobs)
{
	struct stat a, b, c;
	char t[64];
	ssize_t n;

	assert_int_equal(run_copy(jobs, &recording), 0);
	assert_true(rec.calls > 10);
	if (rec.bad)
		fail_msg("a call got a path or no directory descriptor: '%s'", rec.bad_name);
	assert_string_equal(text("dst/t/x1"), "user");
	assert_string_equal(text("dst/a/b/f"), "deep");
	lstat_at("dst/t/x1", &a);
	lstat_at("dst/t/x2", &b);
	assert_int_equal(a.st_ino, b.st_ino);
	assert_int_equal(a.st_nlink, 2);
	lstat_at("dst/a/fifo", &a);
	assert_true(S_ISFIFO(a.st_mode));
	assert_int_equal(a.st_mode & 07777, 0640);
	lstat_at("dst/a/sparse", &a);
	lstat_at("src/a/sparse", &c);
	assert_int_equal(a.st_size, c.st_size);
	assert_true(a.st_blocks <= c.st_blocks);
	n = readlinkat(rec.top, "dst/tl", t, sizeof(t) - 1);
	assert_true(n > 0);
	t[n] = '\0';
	assert_string_equal(t, "../secret");
	/* directory modes and times after their contents */
	lstat_at("dst/a", &a);
	lstat_at("src/a", &c);
	assert_int_equal(a.st_mode & 07777, 0750);
	assert_int_equal(a.st_mtim.tv_sec, c.st_mtim.tv_sec);
	assert_int_equal(a.st_mtim.tv_nsec, c.st_mtim.tv_nsec);
	lstat_at("dst/a/b", &a);
	assert_int_equal(a.st_mode & 07777, 0705);
}

static void test_copy_by_descriptor_serial(void **state)
{
	(void)state;
	copy_fidelity(1);
}

static void test_copy_by_descriptor_threads(void **state)
{
	(void)state;
	copy_fidelity(4);
}

/* nothing of <top>/secret in the copy, and no file of it linked there */
static void no_secret(void)
{
	struct stat st;

	assert_string_not_equal(text("dst/t/x1"), "SECRET");
	assert_string_not_equal(text("dst/t/x2"), "SECRET");
	assert_string_not_equal(text("dst/tl/x1"), "SECRET");
	assert_string_not_equal(text("dst/tl/x2"), "SECRET");
	lstat_at("secret/x1", &st);
	assert_int_equal(st.st_nlink, 1);
}

/* t becomes the link just before its one lookup: copied as a link */
static void test_swap_before_lookup(void **state)
{
	struct stat st;

	(void)state;
	rec.swap_on = "t";
	rec.swap_flags = O_PATH | O_NOFOLLOW;
	assert_int_equal(run_copy(1, &recording), 0);
	assert_true(rec.swapped);
	no_secret();
	lstat_at("dst/t", &st);
	assert_true(S_ISLNK(st.st_mode));
	lstat_at("dst/tl", &st);
	assert_true(S_ISDIR(st.st_mode));
	assert_string_equal(text("dst/tl/x1"), "user");
}

/* t becomes the link after its lookup, when the copy opens it to read
 * it ("." below the looked-up descriptor): the directory is copied */
static void test_swap_after_lookup(void **state)
{
	struct stat st;

	(void)state;
	rec.swap_on = ".";
	rec.swap_flags = O_DIRECTORY;
	assert_int_equal(run_copy(1, &recording), 0);
	assert_true(rec.swapped);
	no_secret();
	lstat_at("dst/a", &st); /* whichever directory came first */
	assert_true(S_ISDIR(st.st_mode));
}

/* the same with threads, the swap when a hard-linked file is opened */
static void test_swap_threads(void **state)
{
	(void)state;
	rec.swap_on = "x2";
	rec.swap_flags = O_PATH;
	assert_int_equal(run_copy(4, &recording), 0);
	assert_true(rec.swapped);
	no_secret();
	if (rec.bad)
		fail_msg("a call got a path: '%s'", rec.bad_name);
}

/* the destination is reached only through directories, no link, no ".." */
static void test_open_beneath(void **state)
{
	int fd;

	(void)state;
	fd = copy_open_beneath(&copy_sys_libc, rec.top, "src/a/b");
	assert_true(fd >= 0);
	close(fd);
	assert_true(refused_link(copy_open_beneath(&copy_sys_libc, rec.top, "src/tl")));
	assert_true(refused_link(copy_open_beneath(&copy_sys_libc, rec.top, "src/tl/x1")));
	assert_int_equal(copy_open_beneath(&copy_sys_libc, rec.top, "src/../src"), -EINVAL);
	assert_int_equal(copy_open_beneath(&copy_sys_libc, rec.top, "src/a/b/f"), -ENOTDIR);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_copy_by_descriptor_serial, setup, teardown),
		cmocka_unit_test_setup_teardown(test_copy_by_descriptor_threads, setup, teardown),
		cmocka_unit_test_setup_teardown(test_swap_before_lookup, setup, teardown),
		cmocka_unit_test_setup_teardown(test_swap_after_lookup, setup, teardown),
		cmocka_unit_test_setup_teardown(test_swap_threads, setup, teardown),
		cmocka_unit_test_setup_teardown(test_open_beneath, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
