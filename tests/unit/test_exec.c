/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The executor against a recording fake of its operations and a simulated
 * clock: failure propagation to dependants only, nofail, the bounded wait
 * for btrfs members (events, deadline), the degraded policy, at most `jobs`
 * mounts at once, the critical path first, and deadlines of hung mounts.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "exec/exec.h"

#define FSID "658a67ea-8cb7-43af-b62a-3124a3759804"
#define SEC USEC_PER_SEC

#define MAX_JOBS 64

struct fake {
	uint64_t clock; /* µs */
	uint64_t member_arrives; /* µs when devid 2 appears; 0: never */
	uint64_t first_arrives; /* µs when devid 1 appears; 0: from the start */
	bool noise; /* an unrelated device event every second */
	char calls[8192]; /* "register /dev/a;mount /x -o opts;..." */
	const char *fail_target; /* mount of this target fails */
	const char *hang_target; /* mount of this target never finishes */
	uint64_t mount_usec; /* how long each mount takes */
	const char *instant_prefix; /* mounts of targets below it end in mount_start */
	uint64_t instant_done_at[MAX_JOBS]; /* clock when each instant mount ended */
	size_t n_instant;
	struct exec_job *running[MAX_JOBS];
	uint64_t finishes[MAX_JOBS];
	const char *targets[MAX_JOBS];
	size_t n_running, max_running;
	unsigned n_saves, n_compact; /* state writes, and of those whole rewrites */
	const char *late_target; /* its helper says "not yet mounted" first (C15) */
	uint64_t late_usec; /* ... and the mount comes this much later (INFINITY: never) */
	bool late_reported;
	bool both_present; /* devid 2 is there from the start */
	bool three; /* the filesystem has three members; devid 3 never comes */
	int ready_error; /* BTRFS_IOC_DEVICES_READY fails with it (negative errno) */
	int scrub_error; /* "btrfs scrub start" fails with it (negative errno) */
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

/* BTRFS_IOC_DEVICES_READY: registers @devnode, then says whether all are known */
static int fake_ready(void *ud, const char *devnode)
{
	struct fake *f = ud;

	record(f, "devices_ready %s", devnode);
	return f->ready_error ? f->ready_error : 1;
}

static void add_member(struct inventory *inv, const char *node, uint64_t devid, uint64_t num_devices)
{
	struct block_device d = {
		.devnode = strdup(node), .type = strdup("btrfs"), .uuid = strdup(FSID), .is_btrfs = true
	};

	memset(d.btrfs.fsid, 0x65, sizeof(d.btrfs.fsid));
	strcpy(d.btrfs.fsid_str, FSID);
	d.btrfs.devid = devid;
	d.btrfs.num_devices = num_devices;
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
	if (f->clock >= f->first_arrives)
		add_member(ret, "/dev/a", 1, f->three ? 3 : 2);
	if (f->both_present || (f->member_arrives && f->clock >= f->member_arrives))
		add_member(ret, "/dev/b", 2, f->three ? 3 : 2);
	return 0;
}

static int fake_mount_start(void *ud, const struct fstab_entry *e, const char *options, struct exec_job *job)
{
	struct fake *f = ud;

	record(f, "mount %s -o %s", e->target, options ? options : "");
	if (f->instant_prefix && strncmp(e->target, f->instant_prefix, strlen(f->instant_prefix)) == 0) {
		bool fails = f->fail_target && strcmp(f->fail_target, e->target) == 0;

		job->finished = true;
		job->priv = (void *)(fails ? "instant failure" : ""); /* the fake's private part */
		f->instant_done_at[f->n_instant++] = f->clock;
		return 0;
	}
	assert_true(f->n_running < MAX_JOBS);
	f->running[f->n_running] = job;
	f->targets[f->n_running] = e->target;
	f->finishes[f->n_running] = f->hang_target && strcmp(f->hang_target, e->target) == 0
					    ? USEC_INFINITY
					    : f->clock + f->mount_usec;
	f->n_running++;
	if (f->n_running > f->max_running)
		f->max_running = f->n_running;
	return 0;
}

static size_t job_index(struct fake *f, struct exec_job *job)
{
	for (size_t k = 0; k < f->n_running; k++)
		if (f->running[k] == job)
			return k;
	fail_msg("unknown job");
	return 0;
}

static const char *job_done(struct fake *f, struct exec_job *job)
{
	size_t k = job_index(f, job);
	const char *target = f->targets[k];

	f->n_running--;
	f->running[k] = f->running[f->n_running];
	f->targets[k] = f->targets[f->n_running];
	f->finishes[k] = f->finishes[f->n_running];
	return target;
}

static bool is_running(const struct fake *f, const struct exec_job *job)
{
	for (size_t k = 0; k < f->n_running; k++)
		if (f->running[k] == job)
			return true;
	return false;
}

static int fake_mount_finish(void *ud, struct exec_job *job, char *err, size_t len)
{
	struct fake *f = ud;
	const char *target;

	if (!is_running(f, job)) { /* ended in fake_mount_start */
		const char *why = job->priv;

		snprintf(err, len, "%s", why);
		job->priv = NULL;
		return why[0] ? -EIO : 0;
	}
	if (f->late_target && !f->late_reported &&
	    strcmp(f->targets[job_index(f, job)], f->late_target) == 0) {
		f->late_reported = true;
		f->finishes[job_index(f, job)] =
			f->late_usec == USEC_INFINITY ? USEC_INFINITY : f->clock + f->late_usec;
		snprintf(err, len, "not yet mounted");
		record(f, "pending %s", f->late_target);
		return 1;
	}
	target = job_done(f, job);

	if (f->fail_target && strcmp(f->fail_target, target) == 0) {
		snprintf(err, len, "wrong fs type");
		return -EIO;
	}
	return 0;
}

static void fake_mount_abandon(void *ud, struct exec_job *job)
{
	record(ud, "abandon %s", job_done(ud, job));
}

/* Advance the clock to the next thing that happens. */
static int fake_wait(void *ud, struct exec_job *const *jobs, size_t n, uint64_t deadline, bool *event)
{
	struct fake *f = ud;
	uint64_t next = deadline;

	for (size_t k = 0; k < f->n_running; k++)
		next = f->finishes[k] < next ? f->finishes[k] : next;
	if (f->member_arrives > f->clock && f->member_arrives < next)
		next = f->member_arrives;
	if (f->first_arrives > f->clock && f->first_arrives < next)
		next = f->first_arrives;
	if (f->noise && f->clock + SEC < next)
		next = f->clock + SEC;
	assert_true(next != USEC_INFINITY);
	f->clock = next;
	for (size_t i = 0; i < n; i++)
		jobs[i]->finished = f->finishes[job_index(f, jobs[i])] <= f->clock;
	*event = f->noise || f->clock == f->member_arrives || f->clock == f->first_arrives;
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

static int fake_state_save(void *ud, struct state *st, bool compact)
{
	struct fake *f = ud;

	f->n_saves++;
	f->n_compact += compact;
	return 0;
}

static int fake_mark_ready(void *ud, const char *fsid, bool ready)
{
	record(ud, "%s %s", ready ? "ready" : "unready", fsid);
	return 0;
}

static int fake_announce(void *ud, const char *fsid)
{
	record(ud, "announce %s", fsid);
	return 1;
}

static int fake_scrub_start(void *ud, const char *mountpoint)
{
	struct fake *f = ud;

	record(f, "scrub %s", mountpoint);
	return f->scrub_error;
}

static const struct ops fake_ops = {
	.register_device = fake_register,
	.devices_ready = fake_ready,
	.rescan = fake_rescan,
	.mount_start = fake_mount_start,
	.mount_finish = fake_mount_finish,
	.mount_abandon = fake_mount_abandon,
	.wait = fake_wait,
	.area_setup = fake_area,
	.state_save = fake_state_save,
	.mark_ready = fake_mark_ready,
	.announce_usable = fake_announce,
	.scrub_start = fake_scrub_start,
	.now = fake_now,
};

static struct fstab_entry entry(const char *target, const char *opts, bool nofail)
{
	return (struct fstab_entry){ .source = (char *)"tmpfs",
				     .target = (char *)target,
				     .fstype = (char *)"tmpfs",
				     .mount_options = (char *)opts,
				     .nofail = nofail };
}

static struct plan_step mount_step(struct fstab_entry *e, struct plan_dep *deps, size_t n_deps)
{
	return (struct plan_step){
		.kind = PLAN_MOUNT, .entry = e, .deps = deps, .n_deps = n_deps, .mount_timeout_usec = 90 * SEC
	};
}

static struct plan_dep dep_on(size_t step)
{
	return (struct plan_dep){ .step = step, .reason = (char *)"test" };
}

static int run_jobs(struct fake *f, struct plan_step *steps, size_t n, struct state *st,
		    struct exec_summary *sum, unsigned jobs)
{
	struct exec_ctx cx = { .ops = &fake_ops, .ud = f, .state = st, .jobs = jobs };
	struct plan p = { .steps = steps, .n_steps = n };

	return exec_run(&cx, &p, sum);
}

static int run(struct fake *f, struct plan_step *steps, size_t n, struct state *st, struct exec_summary *sum)
{
	return run_jobs(f, steps, n, st, sum, 1);
}

static void test_failure_fails_only_dependants(void **unused)
{
	struct fake f = { .fail_target = "/a" };
	struct fstab_entry a = entry("/a", NULL, false), ab = entry("/a/b", NULL, false),
			   c = entry("/c", "size=1M", false);
	struct plan_dep d0 = dep_on(0);
	struct plan_step s[] = {
		mount_step(&a, NULL, 0),
		mount_step(&ab, &d0, 1),
		mount_step(&c, NULL, 0),
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
	/* undone by stop: only what was mounted, the failed one not */
	assert_true(state_find(&st, STATE_MOUNT, "/c")->seq > 0);
	assert_int_equal(state_find(&st, STATE_MOUNT, "/a")->seq, 0);
	state_done(&st);
}

static void test_nofail_is_tolerated(void **unused)
{
	struct fake f = { .fail_target = "/a" };
	struct fstab_entry a = entry("/a", NULL, true);
	struct plan_step s[] = { mount_step(&a, NULL, 0) };
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
	struct plan_step s[] = { mount_step(&a, NULL, 0) };
	struct state st = { 0 };
	struct exec_summary sum;

	s[0].done = true;
	assert_int_equal(run(&f, s, 1, &st, &sum), 0);
	assert_string_equal(f.calls, "");
	assert_int_equal(state_find(&st, STATE_MOUNT, "/a")->status, STATE_PRESENT);
	assert_int_equal(state_find(&st, STATE_MOUNT, "/a")->seq, 0);
	state_done(&st);
}

/* A pass that finds something mounted over a mount of an earlier pass
 * (a conflict) records it failed, and keeps what stop needs to undo the
 * earlier mount (its seq and ID); a pass that finds it on top again
 * records it done. */
static void test_later_pass_keeps_earlier_mount(void **unused)
{
	struct fake f = { 0 };
	struct fstab_entry a = entry("/a", NULL, false);
	struct plan_step s[] = { mount_step(&a, NULL, 0) };
	struct state st = { 0 };
	struct exec_summary sum;
	struct state_record *r;
	unsigned seq, id;

	assert_int_equal(run(&f, s, 1, &st, &sum), 0);
	r = state_find(&st, STATE_MOUNT, "/a");
	assert_int_equal(r->status, STATE_DONE);
	seq = r->seq;
	id = r->mount_id = 42; /* the fake mounts nothing: the ID sysops.c would record */
	assert_true(seq > 0);
	s[0].conflict = true;
	s[0].note = (char *)"something else is mounted on /a";
	assert_int_equal(run(&f, s, 1, &st, &sum), 0);
	assert_int_equal(sum.n_failed, 1);
	r = state_find(&st, STATE_MOUNT, "/a");
	assert_int_equal(r->status, STATE_FAILED);
	assert_int_equal(r->seq, seq);
	assert_int_equal(r->mount_id, id);
	s[0].conflict = false;
	s[0].done = true;
	assert_int_equal(run(&f, s, 1, &st, &sum), 0);
	r = state_find(&st, STATE_MOUNT, "/a");
	assert_int_equal(r->status, STATE_DONE);
	assert_null(r->reason);
	assert_int_equal(r->seq, seq);
	state_done(&st);
}

/* register devid 1, assemble (timeout 5 s), mount the btrfs entry */
static void btrfs_plan(struct plan_step s[3], struct fstab_entry *e, struct plan_dep d[2], bool degraded)
{
	d[0] = dep_on(0);
	d[1] = dep_on(1);
	s[0] = (struct plan_step){ .kind = PLAN_REGISTER, .devnode = (char *)"/dev/a", .devid = 1 };
	s[1] = (struct plan_step){ .kind = PLAN_ASSEMBLE, .deps = &d[0], .n_deps = 1, .timeout_usec = 5 * SEC };
	s[2] = mount_step(e, &d[1], 1);
	s[2].is_btrfs = true;
	s[2].degraded_allowed = degraded;
	strcpy(s[0].fsid, FSID);
	strcpy(s[1].fsid, FSID);
}

static void test_member_arrives_during_wait(void **unused)
{
	struct fake f = { .member_arrives = 2 * SEC, .noise = true };
	struct fstab_entry e = entry("/data", "noatime", false);
	struct plan_step s[3];
	struct plan_dep d[2];
	struct state st = { 0 };
	struct exec_summary sum;

	btrfs_plan(s, &e, d, false);
	assert_int_equal(run(&f, s, 3, &st, &sum), 0);
	assert_string_equal(f.calls, "register /dev/a;register /dev/b;devices_ready /dev/a;ready " FSID
				     ";mount /data -o noatime;");
	/* appended as steps end, rewritten whole once at the end */
	assert_true(f.n_saves > 1);
	assert_int_equal(f.n_compact, 1);
	assert_int_equal(sum.n_failed, 0);
	assert_int_equal(sum.n_degraded, 0);
	assert_true(f.clock < 5 * SEC);
	assert_int_equal(state_find(&st, STATE_BTRFS, FSID)->status, STATE_DONE);
	state_done(&st);
}

/* Both members there when planned: the REGISTER steps leave the work to the
 * ASSEMBLE step's first look, which registers devid 2 and asks
 * BTRFS_IOC_DEVICES_READY about devid 1, which registers it: one ioctl less. */
static void run_both_present(struct fake *f, struct state *st, struct exec_summary *sum)
{
	struct fstab_entry e = entry("/data", "noatime", false);
	struct plan_dep d[3] = { dep_on(0), dep_on(1), dep_on(2) };
	struct plan_step s[4] = {
		{ .kind = PLAN_REGISTER, .devnode = (char *)"/dev/a", .devid = 1 },
		{ .kind = PLAN_REGISTER, .devnode = (char *)"/dev/b", .devid = 2 },
		{ .kind = PLAN_ASSEMBLE, .deps = &d[0], .n_deps = 2, .timeout_usec = 5 * SEC },
		mount_step(&e, &d[2], 1),
	};

	s[3].is_btrfs = true;
	for (size_t i = 0; i < 3; i++) {
		strcpy(s[i].fsid, FSID);
		s[i].num_devices = 2;
		s[i].n_present = 2;
	}
	assert_int_equal(run(f, s, 4, st, sum), 0);
}

static void test_complete_registered_by_ready(void **unused)
{
	struct fake f = { .both_present = true };
	struct state st = { 0 };
	struct exec_summary sum;

	run_both_present(&f, &st, &sum);
	assert_string_equal(f.calls, "register /dev/b;devices_ready /dev/a;ready " FSID
				     ";mount /data -o noatime;");
	assert_int_equal(sum.n_failed, 0);
	assert_int_equal(f.clock, 0);
	assert_int_equal(state_find(&st, STATE_BTRFS, FSID)->status, STATE_DONE);
	state_done(&st);
}

/* The readiness check (the registration) of devid 1 fails: the set is never
 * ready; at the deadline it is incomplete as before, and every look asks again. */
static void test_complete_ready_fails(void **unused)
{
	const char *first = "register /dev/b;devices_ready /dev/a;devices_ready /dev/a;";
	struct fake f = { .both_present = true, .ready_error = -ENODEV, .noise = true };
	struct state st = { 0 };
	struct exec_summary sum;

	run_both_present(&f, &st, &sum);
	assert_true(strncmp(f.calls, first, strlen(first)) == 0);
	assert_null(strstr(f.calls, "register /dev/a"));
	assert_null(strstr(f.calls, "mount /data"));
	assert_int_equal(f.clock, 5 * SEC);
	assert_int_equal(sum.n_failed, 1);
	assert_int_equal(state_find(&st, STATE_BTRFS, FSID)->status, STATE_INCOMPLETE);
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
	assert_string_equal(f.calls, "register /dev/a;mount /data -o noatime,degraded;announce " FSID ";");
	assert_int_equal(sum.n_failed, 0);
	assert_int_equal(sum.n_degraded, 1);
	assert_int_equal(state_find(&st, STATE_MOUNT, "/data")->status, STATE_DEGRADED);
	state_done(&st);
}

/* A wait that began with no member counts its timeout from the first
 * member seen (4 s + 5 s), not from its start; degraded = read-only then
 * mounts ro,degraded, and the decision says so. */
static void test_wait_counts_from_first_member(void **unused)
{
	struct fake f = { .first_arrives = 4 * SEC };
	struct fstab_entry e = entry("/data", "noatime", false);
	struct plan_dep d = dep_on(0);
	struct plan_step s[2] = {
		{ .kind = PLAN_WAIT_DEVICE, .spec = (char *)"UUID=" FSID, .timeout_usec = 5 * SEC, .members = true },
		mount_step(&e, &d, 1),
	};
	struct state st = { 0 };
	struct exec_summary sum;
	const struct state_record *r;

	e.source = (char *)"UUID=" FSID;
	e.fstype = (char *)"btrfs";
	s[1].is_btrfs = true;
	s[1].degraded_allowed = s[1].degraded_read_only = true;
	assert_int_equal(run(&f, s, 2, &st, &sum), 0);
	assert_int_equal(f.clock, 9 * SEC);
	assert_string_equal(f.calls, "register /dev/a;mount /data -o noatime,ro,degraded;announce " FSID ";");
	assert_int_equal(sum.n_degraded, 1);
	r = state_find(&st, STATE_BTRFS, FSID);
	assert_non_null(r);
	assert_int_equal(r->decision, DECISION_READ_ONLY);
	assert_true(r->waited_usec == 9 * SEC);
	assert_string_equal(r->arrivals, "devid 1 /dev/a at +4.0s");
	assert_non_null(strstr(state_find(&st, STATE_MOUNT, "/data")->reason, "read-only (degraded = read-only)"));
	state_done(&st);
}

/* A set of three whose devid 2 arrives at 2 s and devid 3 never: the
 * wait runs to its end, with the quiet period @settle and cap @limit. */
static void run_settle(struct fake *f, uint64_t settle, uint64_t limit, struct state *st)
{
	struct fstab_entry e = entry("/data", "noatime", false);
	struct plan_step s[3];
	struct plan_dep d[2];
	struct exec_summary sum;

	*f = (struct fake){ .member_arrives = 2 * SEC, .three = true };
	btrfs_plan(s, &e, d, true);
	s[1].settle_usec = settle;
	s[1].settle_limit_usec = limit;
	s[1].members = true;
	assert_int_equal(run(f, s, 3, st, &sum), 0);
	assert_int_equal(sum.n_degraded, 1);
}

/* settle-time: a member that arrives re-arms the quiet period (2 s + 4 s),
 * which a 5 s device-timeout alone would have ended at 5 s; the cap
 * (settle-limit) bounds it. */
static void test_arrival_rearms_quiet_period(void **unused)
{
	struct state st = { 0 };
	struct fake f;

	run_settle(&f, 4 * SEC, 30 * SEC, &st);
	assert_int_equal(f.clock, 6 * SEC);
	assert_int_equal(state_find(&st, STATE_BTRFS, FSID)->decision, DECISION_DEGRADED);
	state_done(&st);
	/* capped: at most 0.5 s past the 5 s */
	run_settle(&f, 4 * SEC, SEC / 2, &st);
	assert_int_equal(f.clock, 5 * SEC + SEC / 2); /* min(2 + 4, 5 + 0.5) */
	state_done(&st);
	/* off: the wait ends at the 5 s */
	run_settle(&f, 0, 30 * SEC, &st);
	assert_int_equal(f.clock, 5 * SEC);
	state_done(&st);
}

/* stale-member = scrub: the btrfs plan and a SCRUB step after its mount,
 * which the boot does not need (plan_boot_needs()). */
static void run_scrub(struct fake *f, bool degraded, struct state *st, struct exec_summary *sum)
{
	struct fstab_entry e = entry("/data", "noatime", false);
	struct plan_step s[4];
	struct plan_dep d[3];

	btrfs_plan(s, &e, d, degraded);
	d[2] = dep_on(2);
	s[3] = (struct plan_step){ .kind = PLAN_SCRUB, .entry = &e, .deps = &d[2], .n_deps = 1, .devid = 2 };
	strcpy(s[3].fsid, FSID);
	assert_int_equal(run(f, s, 4, st, sum), 0);
}

static void test_scrub_after_mount(void **unused)
{
	struct fake f = { .member_arrives = 2 * SEC };
	struct state st = { 0 };
	struct exec_summary sum;

	run_scrub(&f, false, &st, &sum);
	assert_non_null(strstr(f.calls, ";mount /data -o noatime;scrub /data;"));
	assert_null(strstr(f.calls, "announce")); /* complete: udev saw it ready itself */
	assert_int_equal(sum.n_failed, 0);
	assert_int_equal(sum.n_tolerated, 0);
	state_done(&st);
	/* the scrub that cannot start: a warning, not a failed step */
	f = (struct fake){ .member_arrives = 2 * SEC, .scrub_error = -ENOENT };
	st = (struct state){ 0 };
	run_scrub(&f, false, &st, &sum);
	assert_non_null(strstr(f.calls, "scrub /data;"));
	assert_int_equal(sum.n_failed, 0);
	assert_int_equal(sum.n_tolerated, 0);
	assert_int_equal(state_find(&st, STATE_MOUNT, "/data")->status, STATE_DONE);
	state_done(&st);
}

/* No scrub on a degraded mount (a member is missing) nor without a mount. */
static void test_scrub_not_degraded(void **unused)
{
	struct fake f = { 0 };
	struct state st = { 0 };
	struct exec_summary sum;

	run_scrub(&f, true, &st, &sum);
	assert_string_equal(f.calls, "register /dev/a;mount /data -o noatime,degraded;announce " FSID ";");
	assert_int_equal(sum.n_failed, 0);
	assert_int_equal(sum.n_degraded, 1);
	state_done(&st);
	/* the mount fails: the scrub is skipped, and counted as no failure of its own */
	f = (struct fake){ .member_arrives = 2 * SEC, .fail_target = "/data" };
	st = (struct state){ 0 };
	run_scrub(&f, false, &st, &sum);
	assert_null(strstr(f.calls, "scrub"));
	assert_int_equal(sum.n_failed, 1);
	assert_int_equal(sum.n_tolerated, 1);
	state_done(&st);
}

/* 20 independent 1 s mounts and a chain of 5 nested ones, 8 at a time:
 * starting the chain first finishes in 5 s (the critical path). */
static void test_critical_path_first(void **unused)
{
	struct fake f = { .mount_usec = SEC };
	struct fstab_entry e[25];
	struct plan_step s[25];
	struct plan_dep d[25];
	char names[25][16];
	struct state st = { 0 };
	struct exec_summary sum;

	for (size_t i = 0; i < 25; i++) {
		snprintf(names[i], sizeof(names[i]), "/m%zu", i);
		e[i] = entry(names[i], NULL, false);
		d[i] = dep_on(i - 1);
		/* steps 20..24 form the chain, listed last in the plan */
		s[i] = mount_step(&e[i], i > 20 ? &d[i] : NULL, i > 20 ? 1 : 0);
	}
	assert_int_equal(run_jobs(&f, s, 25, &st, &sum, 8), 0);
	assert_int_equal(sum.n_done, 25);
	assert_int_equal(f.max_running, 8);
	assert_int_equal(f.clock, 5 * SEC);
	assert_non_null(strstr(f.calls, "mount /m20 -o ;"));
	assert_true(strstr(f.calls, "mount /m20") < strstr(f.calls, "mount /m0 "));
	state_done(&st);
}

static void test_at_most_jobs_at_once(void **unused)
{
	struct fake f = { .mount_usec = SEC };
	struct fstab_entry e[10];
	struct plan_step s[10];
	char names[10][16];
	struct state st = { 0 };
	struct exec_summary sum;

	for (size_t i = 0; i < 10; i++) {
		snprintf(names[i], sizeof(names[i]), "/j%zu", i);
		e[i] = entry(names[i], NULL, false);
		s[i] = mount_step(&e[i], NULL, 0);
	}
	assert_int_equal(run_jobs(&f, s, 10, &st, &sum, 4), 0);
	assert_int_equal(f.max_running, 4);
	assert_int_equal(f.clock, 3 * SEC);
	assert_int_equal(sum.n_done, 10);
	state_done(&st);
}

static void test_deadline_abandons_hung_mount(void **unused)
{
	struct fake f = { .mount_usec = SEC, .hang_target = "/nfs" };
	struct fstab_entry nfs = entry("/nfs", NULL, false), below = entry("/nfs/x", NULL, false),
			   other = entry("/other", NULL, false);
	struct plan_dep d0 = dep_on(0);
	struct plan_step s[] = { mount_step(&nfs, NULL, 0), mount_step(&below, &d0, 1),
				 mount_step(&other, NULL, 0) };
	struct state st = { 0 };
	struct exec_summary sum;

	s[0].mount_timeout_usec = 3 * SEC;
	assert_int_equal(run_jobs(&f, s, 3, &st, &sum, 4), 0);
	assert_int_equal(f.clock, 3 * SEC);
	assert_non_null(strstr(f.calls, "abandon /nfs;"));
	assert_null(strstr(f.calls, "mount /nfs/x"));
	assert_int_equal(sum.n_failed, 2);
	assert_int_equal(sum.n_done, 1);
	assert_non_null(strstr(state_find(&st, STATE_MOUNT, "/nfs")->reason, "did not finish within 3s"));
	assert_int_equal(state_find(&st, STATE_MOUNT, "/other")->status, STATE_DONE);
	state_done(&st);
}

/* A mount that ends within mount_start (one storaged runs itself) is
 * finished at once, and its dependants start without any wait. */
/* C15: a helper that exited 0 with nothing mounted: the entry is not done
 * (its dependants wait) until the mount is there, or fails at its deadline. */
static void test_not_yet_mounted_is_followed_up(void **unused)
{
	struct fake f = { .mount_usec = SEC, .late_target = "/nfs", .late_usec = 3 * SEC };
	struct fstab_entry nfs = entry("/nfs", NULL, false), below = entry("/nfs/x", NULL, false);
	struct plan_dep d0 = dep_on(0);
	struct plan_step s[] = { mount_step(&nfs, NULL, 0), mount_step(&below, &d0, 1) };
	struct state st = { 0 };
	struct exec_summary sum;
	struct state_record *r;

	assert_int_equal(run(&f, s, 2, &st, &sum), 0);
	assert_int_equal(sum.n_done, 2);
	assert_int_equal(sum.n_failed, 0);
	assert_string_equal(f.calls, "mount /nfs -o ;pending /nfs;mount /nfs/x -o ;");
	assert_int_equal(f.clock, 5 * SEC); /* 1 s, then 3 s more, then the one below */
	r = state_find(&st, STATE_MOUNT, "/nfs");
	assert_non_null(r);
	assert_int_equal(r->status, STATE_DONE);
	assert_null(r->reason);
	assert_true(r->seq > 0); /* storaged's: stop undoes it */
	state_done(&st);

	/* the mount never comes: failed at the deadline, its dependant skipped */
	f = (struct fake){ .mount_usec = SEC, .late_target = "/nfs", .late_usec = USEC_INFINITY };
	st = (struct state){ 0 };
	s[0].mount_timeout_usec = 10 * SEC;
	assert_int_equal(run(&f, s, 2, &st, &sum), 0);
	assert_int_equal(sum.n_failed, 2);
	assert_non_null(strstr(f.calls, "abandon /nfs"));
	r = state_find(&st, STATE_MOUNT, "/nfs");
	assert_int_equal(r->status, STATE_FAILED);
	assert_non_null(strstr(r->reason, "its helper exited 0, but nothing was mounted"));
	state_done(&st);
}

/* C16: what a boot_done callback saw. */
struct boot_seen {
	struct fake *f;
	struct state *st;
	int calls;
	uint64_t clock;
	enum state_status usb;
	unsigned failed;
};

static void saw_boot_done(void *userdata, const struct exec_summary *sum)
{
	struct boot_seen *b = userdata;
	struct state_record *r = state_find(b->st, STATE_MOUNT, "/usb");

	b->calls++;
	b->clock = b->f->clock;
	b->usb = r ? r->status : STATE_DONE;
	b->failed = sum->n_failed;
}

/* C16: the boot is done once every entry without nofail is; a nofail
 * entry's device wait goes on, recorded as waiting, to its own deadline. */
static void test_boot_done_before_nofail_waits(void **unused)
{
	struct fake f = { .mount_usec = SEC };
	struct fstab_entry usb = entry("/usb", NULL, true), tmp = entry("/tmp", NULL, false);
	struct plan_dep d0 = dep_on(0);
	struct plan_step s[] = {
		{ .kind = PLAN_WAIT_DEVICE, .spec = (char *)"LABEL=usb", .timeout_usec = 12 * SEC },
		mount_step(&usb, &d0, 1),
		mount_step(&tmp, NULL, 0),
	};
	struct state st = { 0 };
	struct boot_seen b = { .f = &f, .st = &st };
	struct exec_ctx cx = { .ops = &fake_ops,
			       .ud = &f,
			       .state = &st,
			       .jobs = 1,
			       .boot_done = saw_boot_done,
			       .boot_userdata = &b };
	struct plan p = { .steps = s, .n_steps = 3 };
	struct exec_summary sum;

	assert_true(exec_background_waits(&p));
	assert_int_equal(exec_run(&cx, &p, &sum), 0);
	assert_int_equal(b.calls, 1);
	assert_int_equal(b.clock, SEC); /* when the tmpfs was done, not at 12 s */
	assert_int_equal(b.usb, STATE_WAITING);
	assert_int_equal(b.failed, 0);
	assert_int_equal(f.clock, 12 * SEC); /* the nofail wait went on to its deadline */
	assert_int_equal(sum.n_tolerated, 1);
	state_done(&st);

	/* without nofail the same wait is the boot's: told at its end */
	usb.nofail = false;
	f = (struct fake){ .mount_usec = SEC };
	st = (struct state){ 0 };
	b = (struct boot_seen){ .f = &f, .st = &st };
	assert_false(exec_background_waits(&p));
	assert_int_equal(exec_run(&cx, &p, &sum), 0);
	assert_int_equal(b.calls, 1);
	assert_int_equal(b.clock, 12 * SEC);
	assert_int_equal(b.failed, 1);
	state_done(&st);
}

static void test_mount_ended_in_start(void **unused)
{
	struct fake f = { .mount_usec = SEC, .instant_prefix = "/fast", .fail_target = "/fast/bad" };
	struct fstab_entry a = entry("/fast", NULL, false), ab = entry("/fast/b", NULL, false),
			   bad = entry("/fast/bad", NULL, false),
			   badc = entry("/fast/bad/c", NULL, false), slow = entry("/slow", NULL, false);
	struct plan_dep d0 = dep_on(0), d2 = dep_on(2);
	struct plan_step s[] = { mount_step(&a, NULL, 0), mount_step(&ab, &d0, 1),
				 mount_step(&bad, &d0, 1), mount_step(&badc, &d2, 1),
				 mount_step(&slow, NULL, 0) };
	struct state st = { 0 };
	struct exec_summary sum;

	assert_int_equal(run_jobs(&f, s, 5, &st, &sum, 2), 0);
	assert_int_equal(f.n_instant, 3);
	for (size_t i = 0; i < f.n_instant; i++)
		assert_int_equal(f.instant_done_at[i], 0); /* no wait in between */
	assert_int_equal(f.clock, SEC); /* only /slow took time */
	assert_null(strstr(f.calls, "mount /fast/bad/c"));
	assert_int_equal(sum.n_done, 3);
	assert_int_equal(sum.n_failed, 2);
	assert_int_equal(state_find(&st, STATE_MOUNT, "/fast/b")->status, STATE_DONE);
	assert_non_null(strstr(state_find(&st, STATE_MOUNT, "/fast/bad")->reason, "instant failure"));
	assert_int_equal(state_find(&st, STATE_MOUNT, "/fast/bad/c")->status, STATE_SKIPPED);
	state_done(&st);
}

/* start --local: steps the plan left for later neither run nor fail. */
static void test_later_steps_not_run(void **unused)
{
	struct fake f = { .mount_usec = SEC };
	struct fstab_entry nfs = entry("/nfs", NULL, false), below = entry("/nfs/x", NULL, false),
			   local = entry("/local", NULL, false);
	struct plan_dep d0 = dep_on(0);
	struct plan_step s[] = { mount_step(&nfs, NULL, 0), mount_step(&below, &d0, 1),
				 mount_step(&local, NULL, 0) };
	struct state st = { 0 };
	struct exec_summary sum;

	nfs.remote = true;
	s[0].later = s[1].later = true;
	assert_int_equal(run_jobs(&f, s, 3, &st, &sum, 4), 0);
	assert_string_equal(f.calls, "mount /local -o ;");
	assert_int_equal(sum.n_failed, 0);
	assert_int_equal(sum.n_later, 2);
	assert_int_equal(sum.n_done, 1);
	assert_int_equal(state_find(&st, STATE_MOUNT, "/nfs")->status, STATE_WAITING);
	assert_non_null(strstr(state_find(&st, STATE_MOUNT, "/nfs")->reason, "needs the network"));
	assert_non_null(strstr(state_find(&st, STATE_MOUNT, "/nfs/x")->reason, "waits on a step"));
	assert_int_equal(state_find(&st, STATE_MOUNT, "/nfs")->seq, 0);
	state_done(&st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_failure_fails_only_dependants),
		cmocka_unit_test(test_nofail_is_tolerated),
		cmocka_unit_test(test_done_step_not_mounted), cmocka_unit_test(test_later_pass_keeps_earlier_mount),
		cmocka_unit_test(test_member_arrives_during_wait),
		cmocka_unit_test(test_member_missing_not_allowed),
		cmocka_unit_test(test_complete_registered_by_ready),
		cmocka_unit_test(test_complete_ready_fails),
		cmocka_unit_test(test_member_missing_degraded_allowed),
		cmocka_unit_test(test_wait_counts_from_first_member),
		cmocka_unit_test(test_arrival_rearms_quiet_period),
		cmocka_unit_test(test_scrub_after_mount),
		cmocka_unit_test(test_scrub_not_degraded),
		cmocka_unit_test(test_critical_path_first),
		cmocka_unit_test(test_at_most_jobs_at_once),
		cmocka_unit_test(test_deadline_abandons_hung_mount),
		cmocka_unit_test(test_mount_ended_in_start),
		cmocka_unit_test(test_later_steps_not_run),
		cmocka_unit_test(test_not_yet_mounted_is_followed_up),
		cmocka_unit_test(test_boot_done_before_nofail_waits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
