/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The stop executor against a recording fake of the operations and of the
 * mount table: newest first (children before parents), only storaged's own
 * mounts, a busy mount stops its parent but not the rest, a covered mount
 * is not unmounted, reused mount IDs and a mount storaged was killed in,
 * areas with and without a run record, readiness flags.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "copy/copy.h"
#include "exec/undo.h"

#define MAX_MOUNTS 16

struct fake_mount {
	const char *target;
	const char *source, *fstype;
	int id;
	uint64_t unique_id;
	bool busy;
};

struct fake {
	struct fake_mount table[MAX_MOUNTS]; /* in mount order: later ones on top */
	size_t n;
	const char *area_names[4]; /* areas with records of their own */
	const char *failing_area;
	const char *lost_area; /* torn down without its content: -ENODATA */
	const char *twice_area; /* torn down, entries kept twice: -COPY_SYNC_KEPT_BOTH */
	char calls[4096];
	unsigned n_saves;
	size_t saved_records; /* records in the state at the last save */
};

static void record(struct fake *f, const char *fmt, ...)
{
	size_t off = strlen(f->calls);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(f->calls + off, sizeof(f->calls) - off, fmt, ap);
	va_end(ap);
	strncat(f->calls, ";", sizeof(f->calls) - strlen(f->calls) - 1);
}

static struct fake_mount *top_at(struct fake *f, const char *mp)
{
	for (size_t i = f->n; i-- > 0;)
		if (strcmp(f->table[i].target, mp) == 0)
			return &f->table[i];
	return NULL;
}

static bool has_child(const struct fake *f, const char *mp)
{
	size_t len = strlen(mp);

	for (size_t i = 0; i < f->n; i++)
		if (strncmp(f->table[i].target, mp, len) == 0 && f->table[i].target[len] == '/')
			return true;
	return false;
}

static int fake_inspect(void *ud, const struct state_record *rec, struct mount_view *ret)
{
	struct fake *f = ud;
	const char *mp = rec->mountpoint ? rec->mountpoint : rec->id;
	struct fake_mount *top = top_at(f, mp);

	*ret = (struct mount_view){ 0 };
	for (size_t i = 0; i < f->n; i++)
		if (strcmp(f->table[i].target, mp) == 0 &&
		    (!rec->mount_id || f->table[i].id == (int)rec->mount_id))
			ret->recorded_present = true;
	/* as sysops.c: elsewhere, known by its never-reused ID */
	for (size_t i = 0; i < f->n && !ret->recorded_present && rec->mount_unique_id; i++)
		if (f->table[i].id == (int)rec->mount_id && f->table[i].unique_id == rec->mount_unique_id) {
			ret->recorded_present = true;
			ret->location = strdup(f->table[i].target);
			mp = f->table[i].target;
			top = top_at(f, mp);
		}
	if (top) {
		ret->has_top = true;
		ret->top_id = top->id;
		/* as sysops.c: the recorded ID on another mount, told by its identity */
		ret->top_id_reused = rec->mount_unique_id && top->unique_id &&
				     top->id == (int)rec->mount_id && top->unique_id != rec->mount_unique_id;
		ret->top_source = strdup(top->source);
		ret->top_fstype = strdup(top->fstype);
	}
	return 0;
}

static int fake_umount(void *ud, const char *mp, const struct state_record *rec, char *err, size_t len)
{
	struct fake *f = ud;
	struct fake_mount *top = top_at(f, mp);

	assert_non_null(top); /* undo.c unmounts only what it inspected */
	if (rec->mount_id) /* 0: storaged was killed before it learnt the ID */
		assert_int_equal(top->id, (int)rec->mount_id);
	if (top->busy || has_child(f, mp)) {
		snprintf(err, len, "target is busy");
		record(f, "busy %s", mp);
		return -EBUSY;
	}
	record(f, "umount %s", mp);
	*top = f->table[--f->n];
	return 0;
}

static int fake_area_teardown(void *ud, const char *name, struct diag_list *msgs)
{
	struct fake *f = ud;

	record(f, "teardown %s", name);
	if (f->failing_area && strcmp(name, f->failing_area) == 0) {
		diag_error(msgs, NULL, 0, "area '%s': busy", name);
		return -EBUSY;
	}
	for (size_t i = 0; i < 4 && f->area_names[i]; i++)
		if (strcmp(f->area_names[i], name) == 0)
			f->area_names[i] = "";
	if (f->lost_area && strcmp(name, f->lost_area) == 0) {
		diag_error(msgs, NULL, 0, "area '%s': its bind was unmounted by someone else", name);
		return -ENODATA;
	}
	if (f->twice_area && strcmp(name, f->twice_area) == 0) {
		diag_error(msgs, NULL, 0, "area '%s': synced back into '/x', but 1 entry changed on both sides", name);
		return -COPY_SYNC_KEPT_BOTH;
	}
	return 0;
}

static int fake_area_list(void *ud, char ***ret)
{
	struct fake *f = ud;

	*ret = NULL;
	for (size_t i = 0; i < 4 && f->area_names[i]; i++)
		if (f->area_names[i][0] && strv_extend(ret, f->area_names[i]) < 0)
			return -ENOMEM;
	return 0;
}

static int fake_state_save(void *ud, struct state *st, bool compact)
{
	struct fake *f = ud;

	assert_true(compact);
	f->n_saves++;
	f->saved_records = st->n;
	return 0;
}

static int fake_mark_ready(void *ud, const char *fsid, bool ready)
{
	record(ud, "%s %s", ready ? "ready" : "unready", fsid);
	return 0;
}

static const struct ops fake_ops = {
	.mount_inspect = fake_inspect,
	.umount = fake_umount,
	.area_teardown = fake_area_teardown,
	.area_list = fake_area_list,
	.state_save = fake_state_save,
	.mark_ready = fake_mark_ready,
};

static void add_mount(struct fake *f, const char *target, int id, uint64_t unique_id)
{
	assert_true(f->n < MAX_MOUNTS);
	f->table[f->n++] = (struct fake_mount){
		.target = target, .source = "tmpfs", .fstype = "tmpfs", .id = id, .unique_id = unique_id
	};
}

static void put_mount(struct state *st, const char *target, int id, uint64_t unique_id)
{
	struct state_record *r =
		state_put(st, STATE_MOUNT, target, "tmpfs", "tmpfs", STATE_DONE, NULL, true);

	assert_non_null(r);
	r->mount_id = (unsigned)id;
	r->mount_unique_id = unique_id;
}

static int run(struct fake *f, struct state *st)
{
	struct logger lg = { .max_level = -1 }; /* quiet */
	struct undo_ctx cx = { .ops = &fake_ops, .ud = f, .log = &lg };

	return undo_run(&cx, st);
}

static void test_newest_first(void **unused)
{
	struct fake f = { 0 };
	struct state st = { 0 };

	add_mount(&f, "/srv", 20, 200);
	add_mount(&f, "/srv/a", 21, 201);
	add_mount(&f, "/srv/a/b", 22, 202);
	put_mount(&st, "/srv", 20, 200);
	assert_non_null(state_put(&st, STATE_AREA, "build", "/srv/a/build", NULL, STATE_DONE, NULL, true));
	put_mount(&st, "/srv/a", 21, 201);
	put_mount(&st, "/srv/a/b", 22, 202);
	assert_non_null(state_put(&st, STATE_BTRFS, "fsid-1", NULL, "btrfs", STATE_DONE, NULL, false));
	assert_int_equal(run(&f, &st), 0);
	assert_string_equal(f.calls, "umount /srv/a/b;umount /srv/a;teardown build;umount /srv;unready fsid-1;");
	assert_int_equal(f.n, 0);
	assert_int_equal(f.n_saves, 1);
	assert_int_equal(f.saved_records, 0);
	state_done(&st);
}

/* A mount point storaged recorded now holds a mount it did not make. */
static void test_only_its_own(void **unused)
{
	struct fake f = { 0 };
	struct state st = { 0 };

	add_mount(&f, "/mine", 30, 300);
	add_mount(&f, "/theirs", 41, 410); /* storaged's 31 is gone */
	add_mount(&f, "/reused", 32, 999); /* ID 32 freed and given to another mount */
	put_mount(&st, "/mine", 30, 300);
	put_mount(&st, "/theirs", 31, 310);
	put_mount(&st, "/reused", 32, 320);
	assert_int_equal(run(&f, &st), 0);
	assert_string_equal(f.calls, "umount /mine;");
	assert_int_equal(f.n, 2);
	state_done(&st);
}

/* A directory above storaged's mount was renamed: the mount is found by
 * its never-reused ID and unmounted where it is now. */
static void test_moved(void **unused)
{
	struct fake f = { 0 };
	struct state st = { 0 };

	add_mount(&f, "/home/u/b.lnk/mnt", 9, 90);
	put_mount(&st, "/home/u/b/mnt", 9, 90);
	assert_int_equal(run(&f, &st), 0);
	assert_string_equal(f.calls, "umount /home/u/b.lnk/mnt;");
	assert_int_equal(f.n, 0);
	state_done(&st);
}

/* A busy mount is kept, and so is its parent; the others are undone. */
static void test_stops_at_busy(void **unused)
{
	struct fake f = { 0 };
	struct state st = { 0 };

	add_mount(&f, "/p", 1, 0);
	add_mount(&f, "/p/busy", 2, 0);
	add_mount(&f, "/other", 3, 0);
	f.table[1].busy = true;
	put_mount(&st, "/p", 1, 0);
	put_mount(&st, "/p/busy", 2, 0);
	put_mount(&st, "/other", 3, 0);
	assert_non_null(state_put(&st, STATE_BTRFS, "fsid-1", NULL, "btrfs", STATE_DONE, NULL, false));
	assert_int_equal(run(&f, &st), 2);
	assert_string_equal(f.calls, "umount /other;busy /p/busy;busy /p;");
	/* kept for the next stop: both failed mounts and the btrfs record */
	assert_non_null(state_find(&st, STATE_MOUNT, "/p"));
	assert_non_null(state_find(&st, STATE_MOUNT, "/p/busy"));
	assert_null(state_find(&st, STATE_MOUNT, "/other"));
	assert_int_equal(f.saved_records, 3);
	state_done(&st);
}

/* Someone mounted over storaged's mount: it is not unmounted from under. */
static void test_covered(void **unused)
{
	struct fake f = { 0 };
	struct state st = { 0 };

	add_mount(&f, "/m", 5, 50);
	add_mount(&f, "/m", 6, 60);
	put_mount(&st, "/m", 5, 50);
	assert_int_equal(run(&f, &st), 1);
	assert_string_equal(f.calls, "");
	assert_int_equal(f.n, 2);
	state_done(&st);
}

/* storaged was killed while mounting: what is there now decides. */
static void test_killed_while_mounting(void **unused)
{
	struct fake f = { 0 };
	struct state st = { 0 };
	struct state_record *r;

	add_mount(&f, "/nfs", 7, 70);
	f.table[0].fstype = "ext4"; /* mounted by somebody else since */
	add_mount(&f, "/tmpdir", 8, 80);
	r = state_put(&st, STATE_MOUNT, "/nfs", "srv:/x", "nfs", STATE_MOUNTING, NULL, true);
	assert_non_null(r);
	r = state_put(&st, STATE_MOUNT, "/tmpdir", "tmpfs", "tmpfs", STATE_MOUNTING, NULL, true);
	assert_non_null(r);
	assert_int_equal(run(&f, &st), 0);
	assert_string_equal(f.calls, "umount /tmpdir;");
	state_done(&st);
}

/* Areas: a failed teardown is kept; an area with a record of its own but
 * none in the run state (a start killed in between) is undone too. */
static void test_areas(void **unused)
{
	struct fake f = { .area_names = { "a", "b", "orphan" }, .failing_area = "b" };
	struct state st = { 0 };

	assert_non_null(state_put(&st, STATE_AREA, "a", "/home/u/a", NULL, STATE_DONE, NULL, true));
	assert_non_null(state_put(&st, STATE_AREA, "b", "/home/u/b", NULL, STATE_DONE, NULL, true));
	assert_int_equal(run(&f, &st), 1);
	assert_string_equal(f.calls, "teardown b;teardown a;teardown orphan;");
	assert_non_null(state_find(&st, STATE_AREA, "b"));
	assert_null(state_find(&st, STATE_AREA, "a"));
	state_done(&st);
}

/* An area torn down without its content (someone uncovered its directory):
 * a failure for the exit status, but its record goes, and the next stop
 * does not report it again. */
static void test_area_lost(void **unused)
{
	struct fake f = { .area_names = { "a", "lost" }, .lost_area = "lost" };
	struct state st = { 0 };

	assert_non_null(state_put(&st, STATE_AREA, "a", "/home/u/a", NULL, STATE_DONE, NULL, true));
	assert_non_null(state_put(&st, STATE_AREA, "lost", "/var/log", NULL, STATE_DONE, NULL, true));
	assert_int_equal(run(&f, &st), 1);
	assert_string_equal(f.calls, "teardown lost;teardown a;");
	assert_null(state_find(&st, STATE_AREA, "lost"));
	assert_null(state_find(&st, STATE_AREA, "a"));
	f.calls[0] = '\0';
	assert_int_equal(run(&f, &st), 0);
	assert_string_equal(f.calls, "");
	state_done(&st);
}

/* A later pass failed a mount of an earlier one (something mounted over
 * it): the record keeps its seq and ID, and stop still undoes it once it
 * is on top again; one the later pass never made is not undone. */
static void test_failed_by_later_pass(void **unused)
{
	struct fake f = { 0 };
	struct state st = { 0 };
	struct state_record *r;

	add_mount(&f, "/m", 5, 50);
	add_mount(&f, "/m", 6, 60); /* theirs */
	put_mount(&st, "/m", 5, 50);
	r = state_put(&st, STATE_MOUNT, "/m", "tmpfs", "tmpfs", STATE_FAILED, "something else is mounted", false);
	assert_non_null(r);
	r = state_put(&st, STATE_MOUNT, "/never", "tmpfs", "tmpfs", STATE_FAILED, "mount failed", false);
	assert_non_null(r);
	assert_int_equal(run(&f, &st), 1); /* covered: not from under theirs */
	assert_string_equal(f.calls, "");
	assert_non_null(state_find(&st, STATE_MOUNT, "/m"));
	f.n = 1; /* theirs unmounted */
	assert_int_equal(run(&f, &st), 0);
	assert_string_equal(f.calls, "umount /m;");
	assert_int_equal(f.n, 0);
	state_done(&st);
}

/* An area set up by an earlier pass and skipped by a later one: still
 * undone in its place, before the mount it lies on. */
static void test_area_skipped_by_later_pass(void **unused)
{
	struct fake f = { .area_names = { "a" } };
	struct state st = { 0 };

	add_mount(&f, "/m", 5, 50);
	put_mount(&st, "/m", 5, 50);
	assert_non_null(state_put(&st, STATE_AREA, "a", "/m/a", NULL, STATE_DONE, NULL, true));
	assert_non_null(state_put(&st, STATE_AREA, "a", "/m/a", NULL, STATE_SKIPPED, "step 1 failed", false));
	assert_int_equal(run(&f, &st), 0);
	assert_string_equal(f.calls, "teardown a;umount /m;");
	assert_int_equal(st.n, 0);
	state_done(&st);
}

/* An area torn down after a sync back that kept entries twice: a failure,
 * and its record stays, failed with why, until the next stop. */
static void test_area_kept_twice(void **unused)
{
	struct fake f = { .area_names = { "a", "twice" }, .twice_area = "twice" };
	struct state st = { 0 };
	struct state_record *r;

	assert_non_null(state_put(&st, STATE_AREA, "a", "/home/u/a", NULL, STATE_DONE, NULL, true));
	assert_non_null(state_put(&st, STATE_AREA, "twice", "/var/log", "tmpfs", STATE_DONE, NULL, true));
	assert_int_equal(run(&f, &st), 1);
	assert_string_equal(f.calls, "teardown twice;teardown a;");
	assert_null(state_find(&st, STATE_AREA, "a"));
	r = state_find(&st, STATE_AREA, "twice");
	assert_non_null(r);
	assert_int_equal(r->status, STATE_FAILED);
	assert_int_equal(r->seq, 0);
	assert_string_equal(r->reason,
			    "removed by `storaged stop`; synced back into '/x', but 1 entry changed on both sides");
	assert_int_equal(f.saved_records, 1);
	f.calls[0] = '\0';
	assert_int_equal(run(&f, &st), 0);
	assert_string_equal(f.calls, "");
	assert_int_equal(st.n, 0);
	state_done(&st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_newest_first), cmocka_unit_test(test_only_its_own),
		cmocka_unit_test(test_moved),	     cmocka_unit_test(test_stops_at_busy),
		cmocka_unit_test(test_covered),	     cmocka_unit_test(test_killed_while_mounting),
		cmocka_unit_test(test_areas),	     cmocka_unit_test(test_area_lost),
		cmocka_unit_test(test_failed_by_later_pass), cmocka_unit_test(test_area_skipped_by_later_pass),
		cmocka_unit_test(test_area_kept_twice),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
