/* SPDX-License-Identifier: GPL-2.0-or-later */
/* status_live.c against a mount table and a /sys/fs/btrfs made here. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "status/status_live.h"

#define FSID "5e81a0c4-7d2b-4b8e-9c1f-0a1b2c3d4e5f"

struct fixture {
	char dir[64];
	struct live_input in;
};

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "we");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static int setup(void **state)
{
	static struct fixture fx;
	char p[1024];

	snprintf(fx.dir, sizeof(fx.dir), "/tmp/test_status_live.XXXXXX");
	assert_non_null(mkdtemp(fx.dir));
	snprintf(p, sizeof(p), "%s/mountinfo", fx.dir);
	/* ID 41 storaged's tmpfs; ID 50 over ID 45; ID 60 a btrfs on /dev/null */
	put(p, "41 1 0:40 / /srv/t rw - tmpfs tmpfs rw\n"
	       "45 1 0:41 / /srv/o rw - tmpfs tmpfs rw\n"
	       "50 45 0:42 / /srv/o rw - tmpfs other rw\n"
	       "60 1 0:43 / /srv/b rw - btrfs /dev/null rw\n");
	fx.in.mountinfo = mnt_new_table_from_file(p);
	assert_non_null(fx.in.mountinfo);
	snprintf(p, sizeof(p),
		 "mkdir -p %s/sys/" FSID "/devices %s/sys/" FSID "/devinfo/1 %s/sys/" FSID
		 "/devinfo/2 && touch %s/sys/" FSID "/devices/null",
		 fx.dir, fx.dir, fx.dir, fx.dir);
	assert_int_equal(system(p), 0);
	snprintf(p, sizeof(p), "%s/sys/" FSID "/devinfo/1/missing", fx.dir);
	put(p, "0\n");
	snprintf(p, sizeof(p), "%s/sys/" FSID "/devinfo/2/missing", fx.dir);
	put(p, "1\n");
	static char sys[128];
	snprintf(sys, sizeof(sys), "%s/sys", fx.dir);
	fx.in.sysfs_btrfs = sys;
	*state = &fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;
	char cmd[128];

	mnt_unref_table(fx->in.mountinfo);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", fx->dir);
	return system(cmd) == 0 ? 0 : -1;
}

static enum live_status check(void **state, const char *id, unsigned mount_id, enum state_status st,
			      char *why)
{
	struct fixture *fx = *state;
	struct state_record rec = { .kind = STATE_MOUNT, .id = (char *)id, .status = st, .mount_id = mount_id };

	return live_check(&fx->in, &rec, why, 512);
}

static void test_mounts(void **state)
{
	char why[512];

	assert_int_equal(check(state, "/srv/t", 41, STATE_DONE, why), LIVE_AS_RECORDED);
	assert_string_equal(why, "");
	assert_int_equal(check(state, "/srv/gone", 42, STATE_DONE, why), LIVE_GONE);
	assert_non_null(strstr(why, "unmounted since storaged mounted it (mount ID 42)"));
	/* ID 41 reused elsewhere: not ours */
	assert_int_equal(check(state, "/srv/o", 41, STATE_DONE, why), LIVE_REPLACED);
	assert_int_equal(check(state, "/srv/o", 45, STATE_DONE, why), LIVE_REPLACED);
	assert_non_null(strstr(why, "mounted over it on /srv/o now: other (tmpfs, mount ID 50)"));
	/* not storaged's, and still there; failed records are as recorded */
	assert_int_equal(check(state, "/srv/o", 0, STATE_PRESENT, why), LIVE_AS_RECORDED);
	assert_int_equal(check(state, "/srv/x", 0, STATE_PRESENT, why), LIVE_GONE);
	assert_int_equal(check(state, "/srv/x", 0, STATE_FAILED, why), LIVE_AS_RECORDED);
}

static void test_btrfs(void **state)
{
	struct fixture *fx = *state;
	struct state_record rec = { .kind = STATE_BTRFS, .id = FSID, .status = STATE_DONE };
	char why[512];

	assert_int_equal(check(state, "/srv/b", 60, STATE_DONE, why), LIVE_DEGRADED);
	assert_non_null(strstr(why, "the kernel reports devid 2 missing: mounted degraded; once it is back, unmount /srv/b and mount it again, or put a new disk in its place (btrfs replace start 2 NEWDEV /srv/b)"));
	assert_int_equal(live_check(&fx->in, &rec, why, sizeof(why)), LIVE_DEGRADED);
	rec.id = "00000000-0000-0000-0000-000000000000";
	assert_int_equal(live_check(&fx->in, &rec, why, sizeof(why)), LIVE_AS_RECORDED);
	assert_string_equal(live_status_name(LIVE_GONE), "gone");
	assert_null(live_status_name(LIVE_AS_RECORDED));
}

/* A member scanned after the degraded mount, as Linux 6.18 shows it:
 * missing 0, writeable 0, and no link in devices/ (the kernel has not
 * opened it): back but unused, still degraded.  Once open (a link for
 * each), writeable 0 is a write-protected disk in use, not unused. */
static void test_btrfs_back_unused(void **state)
{
	struct fixture *fx = *state;
	struct btrfs_live_members lm;
	char p[1024], why[512];

	snprintf(p, sizeof(p), "%s/sys/" FSID "/devinfo/2/missing", fx->dir);
	put(p, "0\n");
	snprintf(p, sizeof(p), "%s/sys/" FSID "/devinfo/2/writeable", fx->dir);
	put(p, "0\n");
	snprintf(p, sizeof(p), "%s/sys/" FSID "/devinfo/1/writeable", fx->dir);
	put(p, "1\n");
	assert_int_equal(btrfs_live_members(fx->in.sysfs_btrfs, FSID, &lm), 0);
	assert_int_equal(lm.n, 2);
	assert_int_equal(lm.n_missing, 0);
	assert_int_equal(lm.n_unused, 1);
	assert_int_equal(check(state, "/srv/b", 60, STATE_DEGRADED, why), LIVE_DEGRADED);
	assert_non_null(strstr(why, "the kernel does not use devid 2: it came back while the filesystem was mounted degraded"));
	assert_non_null(strstr(why, "mount it again to take it back"));
	snprintf(p, sizeof(p), "%s/sys/" FSID "/devices/null2", fx->dir);
	put(p, "");
	assert_int_equal(btrfs_live_members(fx->in.sysfs_btrfs, FSID, &lm), 0);
	assert_int_equal(lm.n_unused, 0);
	assert_int_equal(check(state, "/srv/b", 60, STATE_DONE, why), LIVE_AS_RECORDED);
	assert_int_equal(btrfs_live_members(fx->in.sysfs_btrfs, "00000000-0000-0000-0000-000000000000", &lm),
			 -ENOENT);
	/* as the fixture was */
	unlink(p);
	snprintf(p, sizeof(p), "%s/sys/" FSID "/devinfo/2/missing", fx->dir);
	put(p, "1\n");
}

/* devid 2 registered again while mounted degraded: no longer missing,
 * but not open (not writeable, one device in devices/ for two devids) */
static void test_btrfs_member_back(void **state)
{
	struct fixture *fx = *state;
	struct state_record rec = { .kind = STATE_BTRFS, .id = FSID, .status = STATE_DONE };
	char why[1024], p[256];

	snprintf(p, sizeof(p), "%s/" FSID "/devinfo/2/missing", fx->in.sysfs_btrfs);
	put(p, "0\n");
	snprintf(p, sizeof(p), "%s/" FSID "/devinfo/1/writeable", fx->in.sysfs_btrfs);
	put(p, "1\n");
	assert_int_equal(live_check(&fx->in, &rec, why, sizeof(why)), LIVE_DEGRADED);
	assert_non_null(strstr(why, "the kernel does not use devid 2: it came back while the filesystem was mounted degraded"));
	assert_non_null(strstr(why, "unmount /srv/b and mount it again to take it back"));
	assert_non_null(strstr(why, "btrfs replace start 2 NEWDEV /srv/b"));
	/* both open: as recorded */
	snprintf(p, sizeof(p), "%s/" FSID "/devices/loop9", fx->in.sysfs_btrfs);
	put(p, "");
	assert_int_equal(live_check(&fx->in, &rec, why, sizeof(why)), LIVE_AS_RECORDED);
	unlink(p);
	snprintf(p, sizeof(p), "%s/" FSID "/devinfo/2/missing", fx->in.sysfs_btrfs);
	put(p, "1\n");
}

/* The DETAIL of `status`: the parts there are, joined by "; ", none
 * trailing (a replaced mount with no reason ended in "; "). */
static void test_detail(void **state)
{
	struct state_record rec = { .kind = STATE_MOUNT, .id = "/srv/a", .status = STATE_DONE };
	char buf[256];

	(void)state;
	assert_string_equal(status_detail(buf, sizeof(buf), "", rec.reason, rec.nofail, NULL), "");
	assert_string_equal(status_detail(buf, sizeof(buf), "another mount on /srv/a now", rec.reason, rec.nofail, NULL),
			    "another mount on /srv/a now");
	assert_string_equal(status_detail(buf, sizeof(buf), "gone", rec.reason, rec.nofail, "1.5s"), "gone; took 1.5s");
	assert_string_equal(status_detail(buf, sizeof(buf), "", rec.reason, rec.nofail, "1.5s"), "took 1.5s");
	rec.nofail = true;
	assert_string_equal(status_detail(buf, sizeof(buf), "gone", rec.reason, rec.nofail, NULL), "gone; nofail");
	rec.reason = "no such device";
	assert_string_equal(status_detail(buf, sizeof(buf), "", rec.reason, rec.nofail, "2s"),
			    "no such device (nofail); took 2s");
	rec.nofail = false;
	assert_string_equal(status_detail(buf, sizeof(buf), "gone", rec.reason, rec.nofail, "2s"),
			    "gone; no such device; took 2s");
	assert_string_equal(status_detail(buf, 5, "gone", rec.reason, rec.nofail, "2s"), "gone");
}

/* The sum behind the exit status, shared by every format of `status`. */
static void test_sum(void **state)
{
	struct state_record done = { .kind = STATE_MOUNT, .id = "/a", .status = STATE_DONE };
	struct state_record failed = { .kind = STATE_MOUNT, .id = "/b", .status = STATE_FAILED };
	struct status_sum sum = { 0 };

	(void)state;
	status_sum_record(&sum, &done, LIVE_AS_RECORDED);
	status_sum_area(&sum, AREA_STATE_ACTIVE);
	status_sum_area(&sum, AREA_STATE_COVERED);
	assert_int_equal(status_sum_exit(&sum), 0);
	status_sum_record(&sum, &done, LIVE_DEGRADED);
	assert_int_equal(status_sum_exit(&sum), 3);
	failed.nofail = true;
	status_sum_record(&sum, &failed, LIVE_AS_RECORDED);
	assert_int_equal(status_sum_exit(&sum), 3);
	status_sum_area(&sum, AREA_STATE_GONE);
	assert_int_equal(status_sum_exit(&sum), 1);
	sum = (struct status_sum){ 0 };
	status_sum_record(&sum, &done, LIVE_REPLACED);
	assert_int_equal(status_sum_exit(&sum), 1);
	sum = (struct status_sum){ 0 };
	failed.nofail = false;
	status_sum_record(&sum, &failed, LIVE_AS_RECORDED);
	assert_int_equal(status_sum_exit(&sum), 1);
}

/* A step recorded under way with no storaged at work was left by a killed
 * run; a mount start --local left for later waits at rest. */
static void test_killed_run(void **state)
{
	struct state_record btrfs = { .kind = STATE_BTRFS, .id = FSID, .status = STATE_WAITING };
	struct state_record waiting = { .kind = STATE_MOUNT, .id = "/a", .status = STATE_WAITING,
					.reason = "waiting for its btrfs members" };
	struct state_record mounting = { .kind = STATE_MOUNT, .id = "/b", .status = STATE_MOUNTING };
	struct state_record later = { .kind = STATE_MOUNT, .id = "/c", .status = STATE_WAITING,
				      .reason = "needs the network, left for the start after it is up" };
	struct live_input in = { .nobody_at_work = true, .self = "storaged -c x" };
	struct status_sum sum = { 0 };
	char why[512];

	(void)state;
	assert_int_equal(live_check(&in, &btrfs, why, sizeof(why)), LIVE_INTERRUPTED);
	assert_non_null(strstr(why, "`storaged -c x start` completes it, `storaged -c x stop` undoes it"));
	assert_int_equal(live_check(&in, &waiting, why, sizeof(why)), LIVE_INTERRUPTED);
	assert_non_null(strstr(why, "the run that was waiting was killed"));
	assert_int_equal(live_check(&in, &mounting, why, sizeof(why)), LIVE_INTERRUPTED);
	assert_non_null(strstr(why, "the run that was mounting was killed"));
	assert_int_equal(live_check(&in, &later, why, sizeof(why)), LIVE_AS_RECORDED);
	assert_string_equal(why, "");
	assert_string_equal(live_status_name(LIVE_INTERRUPTED), "interrupted");
	status_sum_record(&sum, &waiting, LIVE_INTERRUPTED);
	assert_int_equal(status_sum_exit(&sum), 1);
	in.nobody_at_work = false;
	assert_int_equal(live_check(&in, &btrfs, why, sizeof(why)), LIVE_AS_RECORDED);
	assert_int_equal(live_check(&in, &waiting, why, sizeof(why)), LIVE_AS_RECORDED);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mounts),
		cmocka_unit_test(test_btrfs),
		cmocka_unit_test(test_btrfs_back_unused),
		cmocka_unit_test(test_btrfs_member_back),
		cmocka_unit_test(test_detail),
		cmocka_unit_test(test_sum),
		cmocka_unit_test(test_killed_run),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
