/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The walk stack (shared/dirstack.c) on a scratch chain of directories
 * deeper than its descriptor bound: every level is walked, the
 * descriptors held stay bounded, a level whose directory was moved away
 * meanwhile is reached again by name from its held ancestor, and one
 * replaced by another directory is refused (-ESTALE), never walked.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "shared/dirstack.h"

#define DEPTH 300
#define CAP 4

static char top[64];

static int open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	assert_non_null(d);
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

static int setup(void **state)
{
	int fd;

	(void)state;
	snprintf(top, sizeof(top), "/tmp/test-dirstack.XXXXXX");
	assert_non_null(mkdtemp(top));
	fd = open(top, O_RDONLY | O_DIRECTORY);
	for (int i = 0; i < DEPTH; i++) {
		int n;

		assert_int_equal(mkdirat(fd, "d", 0700), 0);
		n = openat(fd, "d", O_RDONLY | O_DIRECTORY);
		close(fd);
		fd = n;
	}
	close(fd);
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", top);
	return system(cmd) == 0 ? 0 : -1;
}

/* walks the chain; @at_depth: call @disturb once at that depth, going up */
static int walk(size_t *deepest, int *most_fds, size_t at_depth, void (*disturb)(struct dirstack *))
{
	struct dirstack s;
	int fd = open(top, O_RDONLY | O_DIRECTORY), r, base = open_fds();
	const char *name;

	dirstack_init(&s, 1, 0, CAP);
	assert_int_equal(dirstack_push(&s, &fd, ""), 0);
	assert_int_equal(dirstack_list(&s, false), 0);
	r = 0;
	while (r == 0 && s.depth > 0) {
		int n;

		if (s.depth > *deepest)
			*deepest = s.depth;
		if ((n = open_fds() - base) > *most_fds)
			*most_fds = n;
		if (!(name = dirstack_next(&s))) {
			if (disturb && s.depth == at_depth) {
				disturb(&s);
				disturb = NULL;
			}
			r = dirstack_pop(&s);
			continue;
		}
		fd = openat(dirstack_top(&s)->fd[0], name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
		assert_true(fd >= 0);
		assert_int_equal(dirstack_push(&s, &fd, name), 0);
		assert_int_equal(dirstack_list(&s, false), 0);
	}
	dirstack_free(&s);
	return r;
}

static void test_deep_chain_bounded(void **state)
{
	size_t deepest = 0;
	int fds = 0;

	(void)state;
	assert_int_equal(walk(&deepest, &fds, 0, NULL), 0);
	assert_int_equal(deepest, DEPTH + 1);
	assert_true(fds <= CAP + 2); /* the held levels, the base, a listing */
}

/* the path of level @depth below top (levels of "d") */
static void level_path(char *buf, size_t len, size_t depth)
{
	size_t n = (size_t)snprintf(buf, len, "%s", top);

	for (size_t i = 1; i < depth && n + 2 < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "/d");
}

/* the directory being left moves to the top: its ".." is no longer its
 * parent, which is still where it was (reached by name) */
static void move_current_up(struct dirstack *s)
{
	char from[DEPTH * 2 + 64], to[96];

	level_path(from, sizeof(from), s->depth);
	snprintf(to, sizeof(to), "%s/moved", top);
	assert_int_equal(rename(from, to), 0);
}

/* the directory being left moves away and its parent, released, is
 * replaced by another: refused */
static void replace_parent(struct dirstack *s)
{
	char parent[DEPTH * 2 + 64], aside[96];

	move_current_up(s);
	level_path(parent, sizeof(parent), s->depth - 1);
	snprintf(aside, sizeof(aside), "%s/aside", top);
	assert_int_equal(rename(parent, aside), 0);
	assert_int_equal(mkdir(parent, 0700), 0);
}

static void test_moved_level_by_name(void **state)
{
	size_t deepest = 0;
	int fds = 0;

	(void)state;
	assert_int_equal(walk(&deepest, &fds, 100, move_current_up), 0);
}

static void test_replaced_level_refused(void **state)
{
	size_t deepest = 0;
	int fds = 0;

	(void)state;
	assert_int_equal(walk(&deepest, &fds, 100, replace_parent), -ESTALE);
}

/* dirstack_list_dirs(): the directories of a level, none of its files,
 * links or fifos (a walk for subvolumes stats no file) */
static void test_list_dirs_only(void **state)
{
	struct dirstack s;
	int fd = open(top, O_RDONLY | O_DIRECTORY);
	const char *name;
	size_t n = 0;

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(mknodat(fd, "file", S_IFREG | 0600, 0), 0);
	assert_int_equal(mkfifoat(fd, "fifo", 0600), 0);
	assert_int_equal(symlinkat("d", fd, "link"), 0);
	assert_int_equal(mkdirat(fd, "e", 0700), 0);
	dirstack_init(&s, 1, 0, CAP);
	assert_int_equal(dirstack_push(&s, &fd, ""), 0);
	assert_int_equal(dirstack_list_dirs(&s), 0);
	while ((name = dirstack_next(&s))) {
		assert_true(!strcmp(name, "d") || !strcmp(name, "e"));
		n++;
	}
	assert_int_equal(n, 2);
	dirstack_free(&s);
}

static void test_path_cut_at_front(void **state)
{
	struct dirstack s;
	char buf[16];
	int fd = open("/", O_RDONLY | O_DIRECTORY), fd2 = open("/", O_RDONLY | O_DIRECTORY);
	char *full;

	(void)state;
	dirstack_init(&s, 1, 0, CAP);
	assert_int_equal(dirstack_push(&s, &fd, ""), 0);
	assert_int_equal(dirstack_push(&s, &fd2, "level-name"), 0);
	assert_string_equal(dirstack_path(&s, "base", "entry", buf, sizeof(buf)), ".../entry");
	full = dirstack_path_dup(&s, "base", "entry");
	assert_string_equal(full, "base/level-name/entry");
	free(full);
	dirstack_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_deep_chain_bounded, setup, teardown),
		cmocka_unit_test_setup_teardown(test_moved_level_by_name, setup, teardown),
		cmocka_unit_test_setup_teardown(test_replaced_level_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_list_dirs_only, setup, teardown),
		cmocka_unit_test(test_path_cut_at_front),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
