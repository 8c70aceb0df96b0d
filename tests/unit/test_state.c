/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The state file: a full save reads back as written, appended changes replace
 * earlier copies of their records, a record a crash cut short at the end is
 * dropped, one cut short in the middle makes the file corrupt, and a file
 * others may write is not trusted.  Runs in a private temporary directory.
 */
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

#include "state.h"

struct fixture {
	char dir[64];
	char file[96];
};

static int setup(void **ctx)
{
	struct fixture *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	strcpy(f->dir, "/tmp/test_state.XXXXXX");
	if (!mkdtemp(f->dir) || chmod(f->dir, 0755) < 0)
		return -1;
	snprintf(f->file, sizeof(f->file), "%s/state", f->dir);
	*ctx = f;
	return 0;
}

static int teardown(void **ctx)
{
	struct fixture *f = *ctx;

	unlink(f->file);
	rmdir(f->dir);
	free(f);
	return 0;
}

static off_t file_size(const char *path)
{
	struct stat st;

	assert_int_equal(stat(path, &st), 0);
	return st.st_size;
}

/* Two mounts, the second with a mount point that needs escaping. */
static void fill(struct state *s)
{
	struct state_record *r;

	assert_non_null(state_put(s, STATE_MOUNT, "/srv/a", "tmpfs", "tmpfs", STATE_MOUNTING, NULL, true));
	r = state_put(s, STATE_MOUNT, "/srv/b c\nd", "/data", "none", STATE_DONE, NULL, true);
	assert_non_null(r);
	r->mount_id = 42;
	r->mount_unique_id = 1u << 31;
}

static void test_round_trip(void **ctx)
{
	struct fixture *f = *ctx;
	struct state s = { 0 }, t = { 0 };
	unsigned line = 0;

	fill(&s);
	assert_int_equal(state_save(f->dir, &s), 0);
	assert_false(s.v[0].dirty);
	assert_int_equal(state_load(f->dir, &t, &line), 0);
	assert_int_equal(t.n, 2);
	assert_string_equal(t.v[1].id, "/srv/b c\nd");
	assert_int_equal(t.v[1].mount_id, 42);
	assert_int_equal(t.v[1].status, STATE_DONE);
	assert_int_equal(t.last_seq, 2);
	assert_false(t.v[1].dirty);
	state_done(&s);
	state_done(&t);
}

/* Only changed records are appended; the last copy of a record wins. */
static void test_append_replaces(void **ctx)
{
	struct fixture *f = *ctx;
	struct state s = { 0 }, t = { 0 };
	off_t before;

	fill(&s);
	assert_int_equal(state_append(f->dir, &s), 0); /* no file yet: a full save */
	before = file_size(f->file);
	assert_int_equal(state_append(f->dir, &s), 0); /* nothing changed */
	assert_int_equal(file_size(f->file), before);
	assert_non_null(state_put(&s, STATE_MOUNT, "/srv/a", "tmpfs", "tmpfs", STATE_DONE, NULL, false));
	assert_int_equal(state_append(f->dir, &s), 0);
	assert_true(file_size(f->file) > before);
	assert_true(file_size(f->file) < 2 * before); /* one record, not all */
	assert_int_equal(state_load(f->dir, &t, NULL), 0);
	assert_int_equal(t.n, 2);
	assert_string_equal(t.v[0].id, "/srv/a");
	assert_int_equal(t.v[0].status, STATE_DONE);
	assert_int_equal(t.v[0].seq, 1);
	state_done(&t);
	/* compaction drops the replaced copy and keeps the records */
	before = file_size(f->file);
	assert_int_equal(state_save(f->dir, &s), 0);
	assert_true(file_size(f->file) < before);
	assert_int_equal(state_load(f->dir, &t, NULL), 0);
	assert_int_equal(t.n, 2);
	assert_int_equal(t.v[0].status, STATE_DONE);
	state_done(&t);
	state_done(&s);
}

static void cut_file(const char *path, off_t keep)
{
	assert_int_equal(truncate(path, keep), 0);
}

/* A crash in the middle of an append leaves the state as it was before it. */
static void test_torn_tail_dropped(void **ctx)
{
	struct fixture *f = *ctx;
	struct state s = { 0 }, t = { 0 };
	off_t full, appended;

	fill(&s);
	assert_int_equal(state_save(f->dir, &s), 0);
	full = file_size(f->file);
	assert_non_null(state_put(&s, STATE_MOUNT, "/srv/a", "tmpfs", "tmpfs", STATE_FAILED, "boom", false));
	assert_int_equal(state_append(f->dir, &s), 0);
	appended = file_size(f->file);
	/* up to the last byte, the newline after "complete = yes" */
	for (off_t keep = full + 1; keep < appended - 1; keep += 3) {
		cut_file(f->file, keep);
		assert_int_equal(state_load(f->dir, &t, NULL), 0);
		assert_int_equal(t.n, 2);
		assert_int_equal(t.v[0].status, STATE_MOUNTING);
		assert_null(t.v[0].reason);
		state_done(&t);
	}
	state_done(&s);
}

/* A record without its end followed by another is not a torn append. */
static void test_cut_record_in_middle(void **ctx)
{
	struct fixture *f = *ctx;
	static const char text[] = "[record]\nkind = mount\nid = /a\nstatus = done\n"
				   "\n[record]\nkind = mount\nid = /b\nstatus = done\ncomplete = yes\n";
	struct state t = { 0 };
	unsigned line = 0;
	int fd = open(f->file, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, sizeof(text) - 1), (ssize_t)sizeof(text) - 1);
	close(fd);
	assert_int_equal(state_load(f->dir, &t, &line), -EBADMSG);
	assert_int_equal(line, 7);
	assert_int_equal(t.n, 0);
}

static void test_untrusted(void **ctx)
{
	struct fixture *f = *ctx;
	struct state s = { 0 }, t = { 0 };

	fill(&s);
	assert_int_equal(state_save(f->dir, &s), 0);
	assert_int_equal(chmod(f->file, 0666), 0);
	assert_int_equal(state_load(f->dir, &t, NULL), -EPERM);
	assert_non_null(state_put(&s, STATE_MOUNT, "/srv/a", NULL, NULL, STATE_DONE, NULL, false));
	assert_int_equal(state_append(f->dir, &s), -EPERM);
	assert_true(s.v[0].dirty);
	state_done(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_round_trip, setup, teardown),
		cmocka_unit_test_setup_teardown(test_append_replaces, setup, teardown),
		cmocka_unit_test_setup_teardown(test_torn_tail_dropped, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cut_record_in_middle, setup, teardown),
		cmocka_unit_test_setup_teardown(test_untrusted, setup, teardown),
	};

	if (geteuid() != 0) {
		fprintf(stderr, "test_state: needs root (the state file is trusted only when root owns it)\n");
		return 77;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
