/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The state file: a full save reads back as written, appended changes replace
 * earlier copies of their records, a record a crash cut short at the end is
 * dropped, one cut short in the middle makes the file corrupt, and a file
 * others may write is not trusted.  An area record reads back as written,
 * and a damaged one is refused.  Runs in a private temporary directory.
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

#include "state/atomic_file.h"
#include "state/state.h"

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

/* What statx(2) said of a mount's root comes back as written; a file
 * written before those keys existed loads with them 0 (unknown), so that
 * `stop` after an upgrade trusts the recorded mount ID as before. */
static void test_mount_root_facts(void **ctx)
{
	struct fixture *f = *ctx;
	struct state s = { 0 }, t = { 0 };
	char old[] = "[record]\nkind = mount\nid = /srv/a\nsource = tmpfs\nfstype = tmpfs\n"
		     "status = done\nseq = 1\nmount_id = 48\nmount_unique_id = 0\ncomplete = yes\n";
	unsigned line = 0;

	fill(&s);
	s.v[1].mount_root_dev = 0x3100000u;
	s.v[1].mount_root_ino = 1;
	s.v[1].mount_root_btime_ns = UINT64_C(1764614400123456789);
	assert_int_equal(state_save(f->dir, &s), 0);
	assert_int_equal(state_load(f->dir, &t, &line), 0);
	assert_int_equal(t.v[0].mount_root_ino, 0);
	assert_int_equal(t.v[1].mount_root_dev, 0x3100000u);
	assert_int_equal(t.v[1].mount_root_ino, 1);
	assert_true(t.v[1].mount_root_btime_ns == UINT64_C(1764614400123456789));
	state_done(&t);
	assert_int_equal(state_parse(old, sizeof(old) - 1, &t, &line), 0);
	assert_int_equal(t.n, 1);
	assert_int_equal(t.v[0].mount_id, 48);
	assert_true(t.v[0].mount_root_dev == 0 && t.v[0].mount_root_ino == 0 && t.v[0].mount_root_btime_ns == 0);
	state_done(&s);
	state_done(&t);
}

/* The text written, byte for byte: a plain record, and one with an
 * escaped id. */
static void test_saved_text(void **ctx)
{
	struct fixture *f = *ctx;
	struct state s = { 0 };
	char buf[2048];
	ssize_t n;
	int fd;

	fill(&s);
	s.v[0].duration_usec = 1234;
	assert_int_equal(state_save(f->dir, &s), 0);
	fd = open(f->file, O_RDONLY);
	assert_true(fd >= 0);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	assert_true(n > 0);
	buf[n] = '\0';
	assert_string_equal(buf, "# storaged state: written by storaged, read by `storaged status` and `stop`\n"
				 "\n[record]\nkind = mount\nid = /srv/a\nsource = tmpfs\nfstype = tmpfs\n"
				 "status = mounting\nseq = 1\nduration_usec = 1234\nnofail = no\n"
				 "recursive = no\nmount_id = 0\nmount_unique_id = 0\ncomplete = yes\n"
				 "\n[record]\nkind = mount\nid = /srv/b\\040c\\012d\nsource = /data\n"
				 "fstype = none\nstatus = done\nseq = 2\nduration_usec = 0\nnofail = no\n"
				 "recursive = no\nmount_id = 42\nmount_unique_id = 2147483648\n"
				 "complete = yes\n");
	state_done(&s);
}

/* The whole file @path, NUL-terminated (owned); its length in *@len. */
static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "r");
	char *buf = calloc(1, 1 << 16);

	assert_non_null(f);
	assert_non_null(buf);
	*len = fread(buf, 1, (1 << 16) - 1, f);
	fclose(f);
	return buf;
}

/* A run state written by the storaged before the record codec
 * (tests/fixtures/state/README) loads with every field, and is written
 * back byte for byte. */
static void test_previous_state_loads(void **ctx)
{
	struct fixture *f = *ctx;
	struct state s = { 0 };
	struct state_record *r;
	size_t len, len2;
	char *old = slurp(FIXTURES "/state/previous.state", &len), *now;

	assert_int_equal(state_parse(old, len, &s, NULL), 0);
	assert_int_equal(s.n, 8);
	assert_int_equal(s.last_seq, 3);
	r = state_find(&s, STATE_BTRFS, "0b7c3a2e-5d1f-4e0a-9c55-2f6a1d3e4b70");
	assert_non_null(r);
	assert_int_equal(r->status, STATE_DEGRADED);
	assert_int_equal(r->decision, DECISION_DEGRADED);
	assert_int_equal(r->members_expected, 2);
	assert_int_equal(r->waited_usec, 5000000);
	assert_string_equal(r->source, "/dev/vdb /dev/vdc");
	assert_string_equal(r->late, "devid 2 /dev/vdc at +12s: added back");
	assert_int_equal(r->stale_usec, 1765000000100000ULL);
	r = state_find(&s, STATE_BTRFS, "5e1d0c4b-3a29-4f18-8e07-6d5c4b3a2918");
	assert_non_null(r);
	assert_int_equal(r->decision, DECISION_COMPLETE);
	assert_true(r->members_present == 2 && r->waited_usec == 0 && !r->late);
	r = state_find(&s, STATE_MOUNT, "/srv/data");
	assert_non_null(r);
	assert_true(r->nofail);
	assert_int_equal(r->mount_id, 412);
	assert_int_equal(r->mount_root_btime_ns, 1765000000123456789ULL);
	r = state_find(&s, STATE_MOUNT, "/srv/with space\tand#hash;semi");
	assert_non_null(r);
	assert_true(r->recursive);
	assert_string_equal(r->mountpoint, "/srv/with space\tand#hash;semi");
	r = state_find(&s, STATE_MOUNT, "/srv/empty-reason");
	assert_non_null(r);
	assert_string_equal(r->reason, "");
	assert_int_equal(state_save(f->dir, &s), 0);
	now = slurp(f->file, &len2);
	assert_string_equal(now, old);
	free(now);
	free(old);
	state_done(&s);
}

/* Area records written by the storaged before the record codec load, and
 * are written back byte for byte. */
static void test_previous_area_loads(void **ctx)
{
	static const char *const names[] = { "previous-area-zram.state", "previous-area-tmpfs.state" };
	struct fixture *f = *ctx;
	struct state_area a;

	for (size_t i = 0; i < 2; i++) {
		char path[512], *old, *now;
		size_t len, len2;

		snprintf(path, sizeof(path), "%s/state/%s", FIXTURES, names[i]);
		old = slurp(path, &len);
		assert_int_equal(state_area_parse(old, len, &a), 0);
		if (i == 0) {
			assert_int_equal(a.backend, AREA_ZRAM);
			assert_int_equal(a.resource_id, 1);
			assert_int_equal(a.n_carried, 2);
			assert_int_equal(a.carried[1], 813);
			assert_true(a.sync_refused && a.persist && a.covered);
			assert_string_equal(a.sync_failed, "while copying 'a b': No space left on device");
		} else {
			assert_int_equal(a.resource_id, -1);
			assert_int_equal(a.size_bytes, 1048576);
		}
		assert_int_equal(state_area_write(f->file, &a), 0);
		now = slurp(f->file, &len2);
		assert_string_equal(now, old);
		free(now);
		free(old);
		state_area_done(&a);
	}
}

/* What a btrfs wait found is kept as fields, read back as written; a
 * second put of the record clears them. */
static void test_members_round_trip(void **ctx)
{
	struct fixture *f = *ctx;
	struct state s = { 0 }, t = { 0 };
	struct state_record *r;

	r = state_put(&s, STATE_BTRFS, "0123-4567", NULL, "btrfs", STATE_INCOMPLETE, NULL, false);
	assert_non_null(r);
	r->members_present = 1;
	r->members_expected = 2;
	r->waited_usec = 5000000;
	r->members_note = strdup("devid 2 missing; ;#x");
	r->decision = DECISION_READ_ONLY;
	r->wait_policy = strdup("up to 5s");
	r->arrivals = strdup("devid 1 /dev/loop3 at +0.0s, devid 3 /dev/loop5 at +2.4s");
	assert_int_equal(state_save(f->dir, &s), 0);
	assert_int_equal(state_load(f->dir, &t, NULL), 0);
	assert_int_equal(t.n, 1);
	assert_int_equal(t.v[0].decision, DECISION_READ_ONLY);
	assert_string_equal(t.v[0].wait_policy, "up to 5s");
	assert_string_equal(t.v[0].arrivals, "devid 1 /dev/loop3 at +0.0s, devid 3 /dev/loop5 at +2.4s");
	assert_string_equal(state_decision_name(DECISION_STALE_REFUSED), "stale-refused");
	assert_null(state_decision_name(DECISION_NONE));
	assert_int_equal(t.v[0].members_present, 1);
	assert_int_equal(t.v[0].members_expected, 2);
	assert_int_equal(t.v[0].waited_usec, 5000000);
	assert_string_equal(t.v[0].members_note, "devid 2 missing; ;#x");
	assert_null(t.v[0].reason);
	r = state_put(&t, STATE_BTRFS, "0123-4567", NULL, "btrfs", STATE_FAILED, "gone", false);
	assert_true(r->members_expected == 0 && r->waited_usec == 0 && !r->members_note);
	assert_true(r->decision == DECISION_NONE && !r->wait_policy && !r->arrivals);
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

/* Many records: each found by its key after growth and removals (the
 * index), an area and a mount of the same id kept apart, and only the
 * records changed since the last save appended, in v[]'s order. */
static void test_index_many(void **ctx)
{
	struct fixture *f = *ctx;
	struct state s = { 0 }, t = { 0 };
	char id[64];
	off_t before;

	for (unsigned i = 0; i < 500; i++) {
		snprintf(id, sizeof(id), "/m/%u", i);
		assert_non_null(state_put(&s, STATE_MOUNT, id, "tmpfs", "tmpfs", STATE_DONE, NULL, true));
	}
	assert_non_null(state_put(&s, STATE_AREA, "/m/7", "/p", "tmpfs", STATE_DONE, NULL, true));
	assert_int_equal(s.n, 501);
	assert_int_equal(state_find(&s, STATE_AREA, "/m/7")->kind, STATE_AREA);
	assert_string_equal(state_find(&s, STATE_MOUNT, "/m/7")->source, "tmpfs");
	assert_null(state_find(&s, STATE_MOUNT, "/m/500"));
	state_remove(&s, STATE_MOUNT, "/m/3");
	assert_null(state_find(&s, STATE_MOUNT, "/m/3"));
	for (unsigned i = 4; i < 500; i++) {
		snprintf(id, sizeof(id), "/m/%u", i);
		assert_string_equal(state_find(&s, STATE_MOUNT, id)->id, id);
	}
	assert_int_equal(state_append(f->dir, &s), 0); /* first: a full save */
	before = file_size(f->file);
	assert_non_null(state_put(&s, STATE_MOUNT, "/m/400", "x", "tmpfs", STATE_FAILED, NULL, false));
	assert_non_null(state_put(&s, STATE_MOUNT, "/m/10", "y", "tmpfs", STATE_FAILED, NULL, false));
	assert_non_null(state_put(&s, STATE_MOUNT, "/m/400", "z", "tmpfs", STATE_FAILED, NULL, false));
	assert_int_equal(state_append(f->dir, &s), 0);
	assert_true(file_size(f->file) > before);
	assert_true(file_size(f->file) < before + 1000); /* two records */
	assert_false(state_find(&s, STATE_MOUNT, "/m/400")->dirty);
	assert_int_equal(state_load(f->dir, &t, NULL), 0);
	assert_int_equal(t.n, 500);
	assert_string_equal(state_find(&t, STATE_MOUNT, "/m/400")->source, "z");
	assert_string_equal(state_find(&t, STATE_MOUNT, "/m/10")->source, "y");
	assert_int_equal(state_find(&t, STATE_MOUNT, "/m/11")->status, STATE_DONE);
	state_done(&t);
	state_done(&s);
}

static void cut_file(const char *path, off_t keep)
{
	assert_int_equal(truncate(path, keep), 0);
}

/* @path holds the first @keep bytes of @text. */
static void write_prefix(const char *path, const char *text, off_t keep)
{
	int fd = open(path, O_WRONLY | O_TRUNC);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, (size_t)keep), (ssize_t)keep);
	close(fd);
}

static char *read_whole(const char *path, off_t size)
{
	char *buf = malloc((size_t)size);
	int fd = open(path, O_RDONLY);

	assert_non_null(buf);
	assert_true(fd >= 0);
	assert_int_equal(read(fd, buf, (size_t)size), (ssize_t)size);
	close(fd);
	return buf;
}

/* A crash in the middle of an append leaves the state as it was before it. */
static void test_torn_tail_dropped(void **ctx)
{
	struct fixture *f = *ctx;
	struct state s = { 0 }, t = { 0 };
	off_t full, appended;
	char *text;

	fill(&s);
	assert_int_equal(state_append(f->dir, &s), 0); /* the first: a full save */
	full = file_size(f->file);
	assert_non_null(state_put(&s, STATE_MOUNT, "/srv/a", "tmpfs", "tmpfs", STATE_FAILED, "boom", false));
	assert_int_equal(state_append(f->dir, &s), 0);
	appended = file_size(f->file);
	text = read_whole(f->file, appended);
	/* at every byte, even inside "[record]", a key or a value; up to the
	 * last byte, the newline after "complete = yes" */
	for (off_t keep = full; keep < appended - 1; keep++) {
		write_prefix(f->file, text, keep);
		assert_int_equal(state_load(f->dir, &t, NULL), 0);
		assert_int_equal(t.n, 2);
		assert_int_equal(t.v[0].status, STATE_MOUNTING);
		assert_null(t.v[0].reason);
		assert_int_equal(t.torn_bytes, keep - full);
		state_done(&t);
	}
	free(text);
	state_done(&s);
}

/* After a torn append, the next run's first save rewrites the file: what
 * it appends then follows whole records. */
static void test_append_after_torn_tail(void **ctx)
{
	struct fixture *f = *ctx;
	struct state s = { 0 }, t = { 0 };
	static const char torn[] = "\n[record]\nkind = mount\nid = /x\nstat";
	int fd;

	fill(&s);
	assert_int_equal(state_save(f->dir, &s), 0);
	state_done(&s);
	fd = open(f->file, O_WRONLY | O_APPEND);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, torn, sizeof(torn) - 1), (ssize_t)sizeof(torn) - 1);
	close(fd);
	assert_int_equal(state_load(f->dir, &s, NULL), 0);
	assert_int_equal(s.n, 2);
	assert_non_null(state_put(&s, STATE_MOUNT, "/srv/c", "tmpfs", "tmpfs", STATE_DONE, NULL, true));
	assert_int_equal(state_append(f->dir, &s), 0);
	assert_non_null(state_put(&s, STATE_MOUNT, "/srv/c", "tmpfs", "tmpfs", STATE_FAILED, "x", false));
	assert_int_equal(state_append(f->dir, &s), 0);
	assert_int_equal(state_load(f->dir, &t, NULL), 0);
	assert_int_equal(t.n, 3);
	assert_int_equal(state_find(&t, STATE_MOUNT, "/srv/c")->status, STATE_FAILED);
	state_done(&t);
	state_done(&s);
}

/* Records without the "complete" key are not storaged's (there never was
 * a release without it): refused as corrupt, not guessed at. */
static void test_file_without_markers(void **ctx)
{
	struct fixture *f = *ctx;
	static const char text[] = "[record]\nkind = mount\nid = /a\nstatus = done\nseq = 1\n"
				   "\n[record]\nkind = mount\nid = /b\nstatus = done\nseq = 2\n";
	struct state t = { 0 };
	int fd = open(f->file, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, sizeof(text) - 1), (ssize_t)sizeof(text) - 1);
	close(fd);
	assert_int_equal(state_load(f->dir, &t, NULL), -EBADMSG);
	assert_int_equal(t.n, 0);
}

/* ferror() through the linker's --wrap (Makefile.am): the stream in
 * error, as after a failed write (a full disk), while write_fails is set. */
int __real_ferror(FILE *f);
int __wrap_ferror(FILE *f);
static bool write_fails;

int __wrap_ferror(FILE *f)
{
	return write_fails ? 1 : __real_ferror(f);
}

/* An append that fails inside a record (a write error) leaves no record
 * marked complete that lacks its later fields: stop trusts every complete
 * record. */
static void test_append_error_leaves_no_complete_record(void **ctx)
{
	struct fixture *f = *ctx;
	struct state s = { 0 }, t = { 0 };

	fill(&s);
	assert_int_equal(state_append(f->dir, &s), 0);
	assert_non_null(state_put(&s, STATE_MOUNT, "/srv/new", "tmpfs", "tmpfs", STATE_MOUNTING,
				  "/srv/new\nmount point", false));
	write_fails = true;
	assert_int_equal(state_append(f->dir, &s), -EIO);
	write_fails = false;
	state_done(&s);
	assert_int_equal(state_load(f->dir, &t, NULL), 0);
	assert_int_equal(t.n, 2);
	for (size_t i = 0; i < t.n; i++)
		assert_string_not_equal(t.v[i].id, "/srv/new");
	state_done(&t);
}

/* A file cut anywhere (by hand: a crash cuts only an append) is read or
 * refused as corrupt (empty: cut short), never crashes the loader nor
 * reads as out of memory. */
static void test_every_cut_of_a_saved_file(void **ctx)
{
	struct fixture *f = *ctx;
	struct state s = { 0 }, t = { 0 };
	off_t size;
	int r;

	fill(&s);
	assert_int_equal(state_save(f->dir, &s), 0);
	size = file_size(f->file);
	for (off_t keep = size; keep >= 0; keep--) { /* downwards: each cut a prefix */
		cut_file(f->file, keep);
		r = state_load(f->dir, &t, NULL);
		assert_true(r == 0 || r == -EBADMSG || (keep == 0 && r == -ENODATA));
		state_done(&t);
	}
	state_done(&s);
}

/* Text after the last record that does not begin as a record does is not
 * what a crash leaves: the file is corrupt, and the line is named. */
static void test_garbage_after_records(void **ctx)
{
	struct fixture *f = *ctx;
	struct state s = { 0 }, t = { 0 };
	unsigned line = 0;
	int fd;

	fill(&s);
	assert_int_equal(state_save(f->dir, &s), 0);
	fd = open(f->file, O_WRONLY | O_APPEND);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "garbage [\n", 10), 10);
	close(fd);
	assert_int_equal(state_load(f->dir, &t, &line), -EBADMSG);
	assert_true(line > 0);
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
	assert_int_equal(chmod(f->dir, 0777), 0);
	assert_int_equal(chmod(f->file, 0644), 0);
	assert_int_equal(state_load(f->dir, &t, NULL), -EPERM);
	assert_int_equal(chmod(f->dir, 0755), 0);
	/* a run's first save replaces the file with a trusted one */
	assert_int_equal(chmod(f->file, 0666), 0);
	assert_non_null(state_put(&s, STATE_MOUNT, "/srv/a", NULL, NULL, STATE_DONE, NULL, false));
	assert_int_equal(state_append(f->dir, &s), 0);
	assert_int_equal(state_load(f->dir, &t, NULL), 0);
	state_done(&t);
	state_done(&s);
}

/* ---------------------------------------------------------------- area records */

static void area_fill(struct state_area *a)
{
	state_area_init(a);
	a->name = strdup("build");
	a->path = strdup("/srv/a dir\twith\\odd\nname");
	a->fs = strdup("ext4");
	a->device = strdup("/dev/zram3");
	a->backend = AREA_ZRAM;
	a->resource_id = 3;
	a->persist = true;
	a->covered = true;
	a->size_bytes = UINT64_C(13421772800);
	a->nr_inodes = 300000;
	a->started_usec = UINT64_MAX;
}

/* @a written to @file and read back into @b */
static void area_reread(const char *file, const struct state_area *a, struct state_area *b)
{
	int fd;

	assert_int_equal(state_area_write(file, a), 0);
	fd = open(file, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(state_area_read_fd(fd, b), 0);
	close(fd);
}

static void test_area_round_trip(void **ctx)
{
	struct fixture *f = *ctx;
	struct state_area a, b;
	char longpath[400];

	area_fill(&a);
	/* longer than one line of inih: continuation lines */
	memset(longpath, 'x', sizeof(longpath) - 1);
	longpath[0] = '/';
	longpath[sizeof(longpath) - 1] = '\0';
	free(a.path);
	a.path = strdup(longpath);
	area_reread(f->file, &a, &b);
	assert_string_equal(b.name, "build");
	assert_string_equal(b.path, longpath);
	assert_string_equal(b.fs, "ext4");
	assert_string_equal(b.device, "/dev/zram3");
	assert_int_equal(b.backend, AREA_ZRAM);
	assert_int_equal(b.resource_id, 3);
	assert_true(b.persist && b.covered && !b.seeded);
	assert_true(b.size_bytes == UINT64_C(13421772800));
	assert_int_equal(b.nr_inodes, 300000);
	assert_true(b.started_usec == UINT64_MAX);
	state_area_done(&b);

	/* escaped characters; tmpfs has no zram device */
	free(a.path);
	a.path = strdup("/srv/a dir\twith\\odd\nname");
	a.backend = AREA_TMPFS;
	a.resource_id = -1;
	area_reread(f->file, &a, &b);
	assert_string_equal(b.path, a.path);
	assert_int_equal(b.backend, AREA_TMPFS);
	assert_int_equal(b.resource_id, -1);
	state_area_done(&b);

	/* what inih would take for a comment (";" after the " = ") or trim */
	free(a.fs);
	a.fs = strdup(";f");
	free(a.device);
	a.device = strdup("#d\r\v\f");
	area_reread(f->file, &a, &b);
	assert_string_equal(b.fs, ";f");
	assert_string_equal(b.device, "#d\r\v\f");
	state_area_done(&b);
	state_area_done(&a);
}

static void touch(const char *dir, const char *name)
{
	char p[160];
	int fd;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	close(fd);
}

/* A record and what killed writes of it left ("state.XXXXXX") go; other
 * names stay. */
static void test_atomic_remove(void **ctx)
{
	struct fixture *f = *ctx;
	char keep[160];
	struct state_area a;

	area_fill(&a);
	assert_int_equal(state_area_write(f->file, &a), 0);
	state_area_done(&a);
	touch(f->dir, "state.a1B2c3");
	touch(f->dir, "state.a1B2c3x");
	assert_int_equal(file_atomic_remove(f->file), 0);
	assert_int_equal(access(f->file, F_OK), -1);
	snprintf(keep, sizeof(keep), "%s/state.a1B2c3", f->dir);
	assert_int_equal(access(keep, F_OK), -1);
	snprintf(keep, sizeof(keep), "%s/state.a1B2c3x", f->dir);
	assert_int_equal(access(keep, F_OK), 0);
	unlink(keep);
	assert_int_equal(file_atomic_remove(f->file), 0); /* nothing left: fine */
}

/* the resource_id of the area record @text, which must parse */
static int parsed_resource(const char *text)
{
	struct state_area b;
	int id;

	assert_int_equal(state_area_parse(text, strlen(text), &b), 0);
	id = b.resource_id;
	state_area_done(&b);
	return id;
}

static void expect_refused(const char *text)
{
	struct state_area b;

	assert_int_equal(state_area_parse(text, strlen(text), &b), -EBADMSG);
	assert_null(b.name);
	assert_int_equal(b.resource_id, -1);
}

#define AREA_OK "[area]\nname = n\npath = /p\nfs = tmpfs\ndevice = storaged-n\n"

static void test_area_refused(void **ctx)
{
	struct state_area b;

	(void)ctx;
	assert_int_equal(state_area_parse(AREA_OK "backend = brd\ncomplete = yes\n",
					  strlen(AREA_OK "backend = brd\ncomplete = yes\n"), &b),
			 0);
	assert_int_equal(b.backend, AREA_BRD);
	state_area_done(&b);
	/* a record of a storaged before the backend table: the zram device
	 * is the resource when storaged made it, in either order */
	assert_int_equal(parsed_resource(AREA_OK "backend = zram\nzram_id = 3\nzram_created = yes\ncomplete = yes\n"), 3);
	assert_int_equal(parsed_resource(AREA_OK "zram_created = yes\nzram_id = 0\ncomplete = yes\n"), 0);
	assert_int_equal(parsed_resource(AREA_OK "zram_id = 3\nzram_created = no\ncomplete = yes\n"), -1);
	expect_refused("");
	expect_refused(AREA_OK); /* not complete */
	expect_refused(AREA_OK "backend = ramfs\ncomplete = yes\n");
	expect_refused(AREA_OK "zram_id = 4294967296\ncomplete = yes\n");
	expect_refused(AREA_OK "zram_id = -2\ncomplete = yes\n");
	expect_refused(AREA_OK "resource = 4294967296\ncomplete = yes\n");
	expect_refused(AREA_OK "resource = x\ncomplete = yes\n");
	expect_refused(AREA_OK "persist = maybe\ncomplete = yes\n");
	expect_refused(AREA_OK "size = 12M\ncomplete = yes\n");
	expect_refused(AREA_OK "complete = yes\nname = other\n");
	expect_refused("[area]\npath = /p\nfs = tmpfs\ndevice = d\ncomplete = yes\n");
	expect_refused("name = n\n" AREA_OK "complete = yes\n");
	expect_refused("[record]\nkind = mount\ncomplete = yes\n");
	expect_refused("name=n\npath=/p\nfs=tmpfs\ndevice=d\n"); /* never released */
}

/* every cut of a written record is refused or read whole, never crashes */
static void test_area_every_cut(void **ctx)
{
	struct fixture *f = *ctx;
	struct state_area a, b;
	char buf[4096];
	ssize_t n;
	int fd;

	area_fill(&a);
	assert_int_equal(state_area_write(f->file, &a), 0);
	state_area_done(&a);
	fd = open(f->file, O_RDONLY | O_CLOEXEC);
	n = read(fd, buf, sizeof(buf));
	close(fd);
	assert_true(n > 0);
	for (ssize_t k = 0; k < n; k++) {
		int r = state_area_parse(buf, (size_t)k, &b);

		/* the last newline is all a record may lose */
		assert_int_equal(r, k == n - 1 ? 0 : -EBADMSG);
		state_area_done(&b);
	}
}

int main(void)
{
	const struct CMUnitTest area_tests[] = {
		cmocka_unit_test_setup_teardown(test_area_round_trip, setup, teardown),
		cmocka_unit_test_setup_teardown(test_atomic_remove, setup, teardown),
		cmocka_unit_test(test_area_refused),
		cmocka_unit_test_setup_teardown(test_area_every_cut, setup, teardown),
	};
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_round_trip, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mount_root_facts, setup, teardown),
		cmocka_unit_test_setup_teardown(test_members_round_trip, setup, teardown),
		cmocka_unit_test_setup_teardown(test_append_replaces, setup, teardown),
		cmocka_unit_test_setup_teardown(test_index_many, setup, teardown),
		cmocka_unit_test_setup_teardown(test_torn_tail_dropped, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cut_record_in_middle, setup, teardown),
		cmocka_unit_test_setup_teardown(test_append_after_torn_tail, setup, teardown),
		cmocka_unit_test_setup_teardown(test_garbage_after_records, setup, teardown),
		cmocka_unit_test_setup_teardown(test_every_cut_of_a_saved_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_file_without_markers, setup, teardown),
		cmocka_unit_test_setup_teardown(test_untrusted, setup, teardown),
		cmocka_unit_test_setup_teardown(test_saved_text, setup, teardown),
		cmocka_unit_test_setup_teardown(test_previous_state_loads, setup, teardown),
		cmocka_unit_test_setup_teardown(test_previous_area_loads, setup, teardown),
		cmocka_unit_test_setup_teardown(test_append_error_leaves_no_complete_record, setup, teardown),
	};

	int r = cmocka_run_group_tests(area_tests, NULL, NULL);

	if (r != 0)
		return r;
	if (geteuid() != 0) {
		fprintf(stderr, "test_state: the run state needs root (trusted only when root owns it)\n");
		return 77;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
