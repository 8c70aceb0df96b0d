/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The executor against a recording fake of its operations: failure
 * propagation to dependants only, nofail, the bounded wait for btrfs
 * members (events, deadline), and the degraded policy.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "exec.h"

#define FSID "658a67ea-8cb7-43af-b62a-3124a3759804"
#define SEC USEC_PER_SEC

struct fake {
	uint64_t clock; /* µs */
	unsigned member_arrives_after; /* wait_event calls before devid 2 appears; 0: never */
	unsigned n_waits;
	char calls[4096]; /* "register /dev/a;mount /x -o opts;..." */
	const char *fail_target; /* mount of this target fails */
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

static int fake_register(void *ud, const char *devnode)
{
	record(ud, "register %s", devnode);
	return 0;
}

static int fake_ready(void *ud, const char *devnode)
{
	return 1;
}

static void add_member(struct inventory *inv, const char *node, uint64_t devid)
{
	struct block_device d = { .devnode = strdup(node), .type = strdup("btrfs"),
				  .uuid = strdup(FSID), .is_btrfs = true };

	memset(d.btrfs.fsid, 0x65, sizeof(d.btrfs.fsid));
	strcpy(d.btrfs.fsid_str, FSID);
	d.btrfs.devid = devid;
	d.btrfs.num_devices = 2;
	d.btrfs.generation = 7;
	d.btrfs.sys_devids[0] = 1;
	d.btrfs.sys_devids[1] = 2;
	d.btrfs.n_sys_devids = 2;
	assert_int_equal(inventory_add(inv, &d), 0);
}

static int fake_rescan(void *ud, struct inventory *ret, struct diag_list *dl)
{
	struct fake *f = ud;

	*ret = (struct inventory){ 0 };
	add_member(ret, "/dev/a", 1);
	if (f->member_arrives_after && f->n_waits >= f->member_arrives_after)
		add_member(ret, "/dev/b", 2);
	return 0;
}

static int fake_wait(void *ud, uint64_t deadline)
{
	struct fake *f = ud;

	f->n_waits++;
	if (f->member_arrives_after) { /* an event a second: unrelated ones first */
		f->clock += SEC;
		return 1;
	}
	f->clock = deadline;
	return 0;
}

static int fake_mount(void *ud, const struct fstab_entry *e, const char *options, uint64_t timeout,
		      char *err, size_t len)
{
	struct fake *f = ud;

	record(f, "mount %s -o %s", e->target, options ? options : "");
	if (f->fail_target && strcmp(f->fail_target, e->target) == 0) {
		snprintf(err, len, "wrong fs type");
		return -EIO;
	}
	return 0;
}

static int fake_area(void *ud, const struct plan_step *s, struct diag_list *msgs)
{
	record(ud, "area %s", s->area->name);
	return 0;
}

static uint64_t fake_now(void *ud)
{
	return ((struct fake *)ud)->clock;
}

static const struct exec_ops fake_ops = {
	.register_device = fake_register,
	.devices_ready = fake_ready,
	.rescan = fake_rescan,
	.wait_event = fake_wait,
	.mount = fake_mount,
	.area_setup = fake_area,
	.now = fake_now,
};

static struct fstab_entry entry(const char *target, const char *opts, bool nofail)
{
	return (struct fstab_entry){ .source = (char *)"tmpfs", .target = (char *)target,
				     .fstype = (char *)"tmpfs", .mount_options = (char *)opts,
				     .nofail = nofail };
}

static struct plan_dep dep_on(size_t step)
{
	return (struct plan_dep){ .step = step, .reason = (char *)"test" };
}

static int run(struct fake *f, struct plan_step *steps, size_t n, struct state *st,
	       struct exec_summary *sum)
{
	struct exec_ctx cx = { .ops = &fake_ops, .ud = f, .state = st };
	struct plan p = { .steps = steps, .n_steps = n };

	return exec_run(&cx, &p, sum);
}

static void test_failure_fails_only_dependants(void **unused)
{
	struct fake f = { .fail_target = "/a" };
	struct fstab_entry a = entry("/a", NULL, false), ab = entry("/a/b", NULL, false),
			   c = entry("/c", "size=1M", false);
	struct plan_dep d0 = dep_on(0);
	struct plan_step s[] = {
		{ .kind = PLAN_MOUNT, .entry = &a },
		{ .kind = PLAN_MOUNT, .entry = &ab, .deps = &d0, .n_deps = 1 },
		{ .kind = PLAN_MOUNT, .entry = &c },
	};
	struct state st = { 0 };
	struct exec_summary sum;

	assert_int_equal(run(&f, s, 3, &st, &sum), 0);
	assert_string_equal(f.calls, "mount /a -o ;mount /c -o size=1M;");
	assert_int_equal(sum.n_failed, 2);
	assert_int_equal(sum.n_done, 1);
	assert_int_equal(state_find(&st, STATE_MOUNT, "/a")->status, STATE_FAILED);
	assert_int_equal(state_find(&st, STATE_MOUNT, "/a/b")->status, STATE_SKIPPED);
	assert_non_null(strstr(state_find(&st, STATE_MOUNT, "/a/b")->reason, "step 1 (test)"));
	assert_int_equal(state_find(&st, STATE_MOUNT, "/c")->status, STATE_DONE);
	assert_int_equal(state_find(&st, STATE_MOUNT, "/c")->seq, 1);
	state_done(&st);
}

static void test_nofail_is_tolerated(void **unused)
{
	struct fake f = { .fail_target = "/a" };
	struct fstab_entry a = entry("/a", NULL, true);
	struct plan_step s[] = { { .kind = PLAN_MOUNT, .entry = &a } };
	struct state st = { 0 };
	struct exec_summary sum;

	assert_int_equal(run(&f, s, 1, &st, &sum), 0);
	assert_int_equal(sum.n_failed, 0);
	assert_int_equal(sum.n_tolerated, 1);
	state_done(&st);
}

static void test_done_step_not_mounted(void **unused)
{
	struct fake f = { 0 };
	struct fstab_entry a = entry("/a", NULL, false);
	struct plan_step s[] = { { .kind = PLAN_MOUNT, .entry = &a, .done = true } };
	struct state st = { 0 };
	struct exec_summary sum;

	assert_int_equal(run(&f, s, 1, &st, &sum), 0);
	assert_string_equal(f.calls, "");
	assert_int_equal(state_find(&st, STATE_MOUNT, "/a")->status, STATE_PRESENT);
	assert_int_equal(state_find(&st, STATE_MOUNT, "/a")->seq, 0);
	state_done(&st);
}

/* register devid 1, assemble (timeout 5 s), mount the btrfs entry */
static void btrfs_plan(struct plan_step s[3], struct fstab_entry *e, struct plan_dep d[2], bool degraded)
{
	d[0] = dep_on(0);
	d[1] = dep_on(1);
	s[0] = (struct plan_step){ .kind = PLAN_REGISTER, .devnode = (char *)"/dev/a", .devid = 1 };
	s[1] = (struct plan_step){ .kind = PLAN_ASSEMBLE, .deps = &d[0], .n_deps = 1,
				   .timeout_usec = 5 * SEC };
	s[2] = (struct plan_step){ .kind = PLAN_MOUNT, .entry = e, .deps = &d[1], .n_deps = 1,
				   .is_btrfs = true, .degraded_allowed = degraded };
	strcpy(s[0].fsid, FSID);
	strcpy(s[1].fsid, FSID);
}

static void test_member_arrives_during_wait(void **unused)
{
	struct fake f = { .member_arrives_after = 2 };
	struct fstab_entry e = entry("/data", "noatime", false);
	struct plan_step s[3];
	struct plan_dep d[2];
	struct state st = { 0 };
	struct exec_summary sum;

	btrfs_plan(s, &e, d, false);
	assert_int_equal(run(&f, s, 3, &st, &sum), 0);
	assert_string_equal(f.calls, "register /dev/a;register /dev/b;mount /data -o noatime;");
	assert_int_equal(sum.n_failed, 0);
	assert_int_equal(sum.n_degraded, 0);
	assert_true(f.clock < 5 * SEC);
	assert_int_equal(state_find(&st, STATE_BTRFS, FSID)->status, STATE_DONE);
	state_done(&st);
}

static void test_member_missing_not_allowed(void **unused)
{
	struct fake f = { 0 };
	struct fstab_entry e = entry("/data", "noatime", false);
	struct plan_step s[3];
	struct plan_dep d[2];
	struct state st = { 0 };
	struct exec_summary sum;
	const char *why;

	btrfs_plan(s, &e, d, false);
	assert_int_equal(run(&f, s, 3, &st, &sum), 0);
	assert_string_equal(f.calls, "register /dev/a;");
	assert_int_equal(f.clock, 5 * SEC);
	assert_int_equal(sum.n_failed, 1);
	why = state_find(&st, STATE_MOUNT, "/data")->reason;
	assert_non_null(strstr(why, "1 of 2 members present after 5s, devid 2 missing"));
	assert_non_null(strstr(why, "degraded mounts are not allowed"));
	state_done(&st);
}

static void test_member_missing_degraded_allowed(void **unused)
{
	struct fake f = { 0 };
	struct fstab_entry e = entry("/data", "noatime", false);
	struct plan_step s[3];
	struct plan_dep d[2];
	struct state st = { 0 };
	struct exec_summary sum;

	btrfs_plan(s, &e, d, true);
	assert_int_equal(run(&f, s, 3, &st, &sum), 0);
	assert_string_equal(f.calls, "register /dev/a;mount /data -o noatime,degraded;");
	assert_int_equal(sum.n_failed, 0);
	assert_int_equal(sum.n_degraded, 1);
	assert_int_equal(state_find(&st, STATE_MOUNT, "/data")->status, STATE_DEGRADED);
	state_done(&st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_failure_fails_only_dependants),
		cmocka_unit_test(test_nofail_is_tolerated),
		cmocka_unit_test(test_done_step_not_mounted),
		cmocka_unit_test(test_member_arrives_during_wait),
		cmocka_unit_test(test_member_missing_not_allowed),
		cmocka_unit_test(test_member_missing_degraded_allowed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
