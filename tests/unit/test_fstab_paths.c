/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fstab as administrators write it (issue 17): path spellings (C11), lines
 * other tools own (C10), every path an entry uses and the edge it makes
 * (C09), what start --local leaves for later (C17), an explicit
 * `degraded`.  Parsed from text and planned, no I/O.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "parse/config.h"
#include "parse/fstab.h"
#include "plan/plan.h"

#define SEC (UINT64_C(1000000))

struct world {
	struct config config;
	struct fstab fstab;
	struct inventory inventory;
	struct plan plan;
	struct diag_list diags;
};

/* Parses @text and plans it (empty inventory and mount table). */
static int world_plan(struct world *w, const char *text, bool local_only)
{
	struct plan_input in = {
		.config = &w->config,
		.fstab = &w->fstab,
		.inventory = &w->inventory,
		.local_only = local_only,
	};
	int r;

	w->config = (struct config){ .file = (char *)"storaged.conf",
				     .device_timeout_usec = 90 * SEC,
				     .mount_timeout_usec = 90 * SEC,
				     .jobs = 4 };
	r = fstab_parse_buf(&w->fstab, text, strlen(text), "fstab", NULL, &w->diags);
	if (r < 0)
		return r;
	return plan_build(&in, &w->plan, &w->diags);
}

static void world_done(struct world *w)
{
	plan_done(&w->plan);
	fstab_done(&w->fstab);
	diag_list_done(&w->diags);
}

static const struct plan_step *mount_step(const struct plan *p, const char *target, size_t *ret)
{
	for (size_t i = 0; i < p->n_steps; i++)
		if (p->steps[i].kind == PLAN_MOUNT && strcmp(p->steps[i].entry->target, target) == 0) {
			if (ret)
				*ret = i;
			return &p->steps[i];
		}
	fail_msg("no mount step for %s", target);
	return NULL;
}

/* The step for @target waits for the one for @on, for @reason. */
static void assert_waits(const struct plan *p, const char *target, const char *on, const char *reason)
{
	size_t to;
	const struct plan_step *s = mount_step(p, target, NULL);

	mount_step(p, on, &to);
	for (size_t d = 0; d < s->n_deps; d++)
		if (s->deps[d].step == to) {
			assert_string_equal(s->deps[d].reason, reason);
			return;
		}
	fail_msg("%s does not wait for %s", target, on);
}

/* ------------------------------------------------------------ normalisation */

static void test_normalize(void **state)
{
	static const char *const cases[][2] = {
		{ "/raid/", "/raid" },
		{ "/srv//data", "/srv/data" },
		{ "/./srv/./x/.", "/srv/x" },
		{ "//", "/" },
		{ "/", "/" },
		{ "/a/../b", "/a/../b" },
		{ "/a/.b/", "/a/.b" },
		{ "///x///", "/x" },
		{ "/x/..", "/x/.." },
	};
	char buf[64];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		strcpy(buf, cases[i][0]);
		assert_int_equal(path_normalize(buf), 0);
		assert_string_equal(buf, cases[i][1]);
	}
	strcpy(buf, "rel/");
	assert_int_equal(path_normalize(buf), -EINVAL);
	assert_string_equal(buf, "rel/");
}

static void test_c11_spellings(void **state)
{
	struct world w = { 0 };

	assert_int_equal(world_plan(&w,
				    "LABEL=c11raid  /m/raid/       ext4 defaults,noauto,_netdev 0 0\n"
				    "LABEL=c11cache /m//raid/./cache/ ext4 defaults,noauto,_netdev 0 0\n"
				    "/srv//src/     /m/b           none bind,x-storaged 0 0\n"
				    "//server/share/ /m/cifs/      cifs x-storaged 0 0\n",
				    false),
			 0);
	assert_string_equal(w.fstab.entries[0].target, "/m/raid");
	assert_string_equal(w.fstab.entries[1].target, "/m/raid/cache");
	assert_string_equal(w.fstab.entries[2].source, "/srv/src");
	/* a server's share is the server's spelling */
	assert_string_equal(w.fstab.entries[3].source, "//server/share/");
	assert_string_equal(w.fstab.entries[3].target, "/m/cifs");
	assert_waits(&w.plan, "/m/raid/cache", "/m/raid", "/m/raid: parent mount point");
	world_done(&w);
}

static void test_relative_and_dotdot_stay_errors(void **state)
{
	struct diag_list dl = { 0 };
	struct fstab f = { 0 };
	const char *t = "/dev/a rel/ ext4 x-storaged 0 0\n/dev/b /x/../y ext4 x-storaged 0 0\n";

	assert_int_equal(fstab_parse_buf(&f, t, strlen(t), "fstab", NULL, &dl), -EINVAL);
	assert_int_equal(dl.n, 2);
	assert_non_null(strstr(dl.v[0].msg, "not an absolute path"));
	assert_non_null(strstr(dl.v[1].msg, "'..'"));
	diag_list_done(&dl);
}

/* ------------------------------------------------------------ other tools' lines */

static void test_c10_lines_of_other_tools(void **state)
{
	struct world w = { 0 };

	assert_int_equal(world_plan(&w,
				    "/dev/sdz1 none swap sw,_netdev 0 0\n"
				    "/swapfile none swap sw,x-storaged 0 0\n"
				    "/dev/sdz2 /x ignore x-storaged 0 0\n"
				    "none /y none x-storaged 0 0\n"
				    "/srv/a /srv/b none bind,x-storaged 0 0\n"
				    "tmpfs /t tmpfs x-storaged 0 0\n"
				    "https://dav.example.com/u/ /home/u/dav davfs user,noauto,_netdev 0 0\n"
				    "LABEL=usb /media/usb ext4 users,noauto,x-storaged 0 0\n",
				    false),
			 0);
	/* only a warning: x-storaged on the swap line (line 2) */
	assert_int_equal(w.diags.n, 1);
	assert_int_equal(w.diags.v[0].level, DIAG_WARNING);
	assert_int_equal(w.diags.v[0].line, 2);
	/* a user's noauto line is the user's, unless x-storaged claims it */
	assert_int_equal(w.fstab.n_entries, 3);
	assert_string_equal(w.fstab.entries[2].target, "/media/usb");
	assert_int_equal(w.fstab.n_total, 8);
	assert_int_equal(w.fstab.n_skipped, 5);
	assert_int_equal(w.fstab.skipped[4].line, 7);
	assert_int_equal(w.fstab.skipped[0].line, 1);
	assert_non_null(strstr(w.fstab.skipped[0].why, "swap"));
	assert_int_equal(w.fstab.skipped[3].line, 4);
	world_done(&w);
}

/* ------------------------------------------------------------ paths used */

static void test_c09_overlay_dirs(void **state)
{
	struct world w = { 0 };
	const struct fstab_entry *e;

	assert_int_equal(world_plan(&w,
				    "overlay /m/merged overlay lowerdir=/m/lower:/m/l\\:2::/m/data//do,upperdir=/m/data/upper,workdir=/m/data/work,noauto,x-storaged 0 0\n"
				    "/dev/loop7 /m/data ext4 defaults,noauto,x-storaged 0 0\n"
				    "overlay /m/o2 overlay lowerdir=\"/m/low/a,b\",upperdir=/m/up/u,workdir=/m/up/w,x-storaged 0 0\n"
				    "tmpfs /m/up tmpfs x-storaged 0 0\n"
				    "tmpfs /m/low tmpfs x-storaged 0 0\n",
				    false),
			 0);
	e = &w.fstab.entries[0];
	assert_int_equal(e->n_paths, 5);
	assert_string_equal(e->paths[0].option, "lowerdir");
	assert_string_equal(e->paths[0].path, "/m/lower");
	assert_string_equal(e->paths[1].path, "/m/l:2");
	assert_string_equal(e->paths[2].path, "/m/data/do");
	assert_string_equal(e->paths[3].option, "upperdir");
	assert_string_equal(e->paths[4].option, "workdir");
	assert_waits(&w.plan, "/m/merged", "/m/data", "lowerdir=/m/data/do is below /m/data");
	assert_waits(&w.plan, "/m/o2", "/m/up", "upperdir=/m/up/u is below /m/up");
	assert_waits(&w.plan, "/m/o2", "/m/low", "lowerdir=/m/low/a,b is below /m/low");
	world_done(&w);
}

static void test_c09_images_and_requires_mounts_for(void **state)
{
	struct world w = { 0 };

	assert_int_equal(world_plan(&w,
				    "/srv/img/disk.img /mnt/disk ext4 x-storaged 0 0\n"
				    "/srv/img/cd.iso /mnt/cd auto loop,ro,x-storaged 0 0\n"
				    "tmpfs /mnt/t tmpfs x-storaged,x-systemd.requires-mounts-for=/srv/img/x/ 0 0\n"
				    "LABEL=img /srv/img xfs x-storaged 0 0\n"
				    "tmpfs /srv/x tmpfs x-storaged 0 0\n",
				    false),
			 0);
	assert_waits(&w.plan, "/mnt/disk", "/srv/img", "image file /srv/img/disk.img is below /srv/img");
	assert_waits(&w.plan, "/mnt/cd", "/srv/img", "/srv/img: loop source below it");
	assert_waits(&w.plan, "/mnt/t", "/srv/img", "x-systemd.requires-mounts-for=/srv/img/x");
	/* a device path and a nodev type are no image file */
	world_done(&w);
}

static void test_c09_resolved_paths(void **state)
{
	const char *t = "tmpfs /data tmpfs x-storaged 0 0\n"
			"/srv/link/sub /b none bind,x-storaged 0 0\n"
			"tmpfs /home/u/l/x tmpfs x-storaged,X-mount.mkdir 0 0\n";
	struct world w = { .config = { .device_timeout_usec = 90 * SEC, .mount_timeout_usec = 90 * SEC } };
	char sub[] = "/data/sub", x[] = "/data/u/x", *reals[] = { sub };
	/* what the loader (world.c) found: links that lead below /data */
	const struct entry_facts facts[] = { { 0 }, { .path_real = reals }, { .target_real = x } };
	struct plan_input in = { .config = &w.config, .fstab = &w.fstab, .inventory = &w.inventory, .facts = facts };

	assert_int_equal(fstab_parse_buf(&w.fstab, t, strlen(t), "fstab", NULL, &w.diags), 0);
	assert_int_equal(w.fstab.entries[1].n_paths, 1);
	assert_int_equal(plan_build(&in, &w.plan, &w.diags), 0);
	assert_waits(&w.plan, "/b", "/data", "bind source /srv/link/sub resolves to /data/sub, below /data");
	assert_waits(&w.plan, "/home/u/l/x", "/data",
		     "mount point /home/u/l/x resolves to /data/u/x, below /data");
	world_done(&w);
}

/* The kind of C09 beyond overlay: a file a mount helper reads, the directory
 * a FUSE program or eCryptfs is handed, a union filesystem's branches. */
static void test_c09_helper_files_and_fuse_sources(void **state)
{
	struct world w = { 0 };

	assert_int_equal(world_plan(&w,
				    "//srv/share /mnt/cifs cifs credentials=/etc/s/cred,x-storaged 0 0\n"
				    "//srv/b /mnt/cifs2 smb3 cred=\"/etc/s/b\\040cred\",x-storaged 0 0\n"
				    "/srv/d1/sub /mnt/bfs fuse.bindfs perms=0700,x-storaged 0 0\n"
				    "bindfs#/srv/d2/x /mnt/old fuse x-storaged 0 0\n"
				    "/srv/d1=RW:/srv/d2=NC,100G /mnt/pool fuse.mergerfs allow_other,x-storaged 0 0\n"
				    "/srv/d* /mnt/pool2 mergerfs allow_other,x-storaged 0 0\n"
				    "mhddfs#/srv/d1,/srv/d2 /mnt/mh fuse x-storaged 0 0\n"
				    "/srv/d2/.private /mnt/ecr ecryptfs key=passphrase,x-storaged 0 0\n"
				    "user@host:/srv/d1 /mnt/ssh fuse.sshfs x-storaged 0 0\n"
				    "/dev/sdz1 /mnt/ntfs fuse.ntfs-3g x-storaged 0 0\n"
				    "LABEL=s /etc/s xfs x-storaged 0 0\n"
				    "LABEL=d1 /srv/d1 xfs x-storaged 0 0\n"
				    "LABEL=d2 /srv/d2 xfs x-storaged 0 0\n"
				    "LABEL=d3 /srv/other xfs x-storaged 0 0\n",
				    false),
			 0);
	assert_waits(&w.plan, "/mnt/cifs", "/etc/s", "credentials=/etc/s/cred is below /etc/s");
	assert_waits(&w.plan, "/mnt/cifs2", "/etc/s", "credentials=/etc/s/b cred is below /etc/s");
	assert_waits(&w.plan, "/mnt/bfs", "/srv/d1", "source /srv/d1/sub is below /srv/d1");
	assert_waits(&w.plan, "/mnt/old", "/srv/d2", "source /srv/d2/x is below /srv/d2");
	assert_int_equal(w.fstab.entries[4].n_paths, 2);
	assert_string_equal(w.fstab.entries[4].paths[1].path, "/srv/d2");
	assert_waits(&w.plan, "/mnt/pool", "/srv/d1", "branch /srv/d1 is below /srv/d1");
	assert_waits(&w.plan, "/mnt/pool", "/srv/d2", "branch /srv/d2 is below /srv/d2");
	assert_true(w.fstab.entries[5].paths[0].glob);
	assert_waits(&w.plan, "/mnt/pool2", "/srv/d1", "branch /srv/d* matches /srv/d1");
	assert_waits(&w.plan, "/mnt/pool2", "/srv/d2", "branch /srv/d* matches /srv/d2");
	assert_waits(&w.plan, "/mnt/mh", "/srv/d2", "branch /srv/d2 is below /srv/d2");
	assert_waits(&w.plan, "/mnt/ecr", "/srv/d2", "source /srv/d2/.private is below /srv/d2");
	/* a remote source uses no path; a pattern matches whole names */
	assert_int_equal(w.fstab.entries[8].n_paths, 0);
	assert_int_equal(mount_step(&w.plan, "/mnt/pool2", NULL)->n_deps, 2);
	assert_int_equal(w.diags.n, 0);
	world_done(&w);
}

/* A relative branch is no path of ours but leaves the others their waits;
 * a source below /dev may be a directory (/dev/shm); a pattern that
 * matches its own mount point is warned about. */
static void test_c09_union_branch_edges(void **state)
{
	struct world w = { 0 };

	assert_int_equal(world_plan(&w,
				    "d1:/srv/d2 /mnt/pool fuse.mergerfs x-storaged 0 0\n"
				    "/dev/shm/src/x /mnt/bfs fuse.bindfs x-storaged 0 0\n"
				    "/srv/p* /srv/pool fuse.mergerfs x-storaged 0 0\n"
				    "tmpfs /dev/shm/src tmpfs x-storaged 0 0\n"
				    "LABEL=d2 /srv/d2 xfs x-storaged 0 0\n"
				    "LABEL=p1 /srv/p1 xfs x-storaged 0 0\n",
				    false),
			 0);
	assert_waits(&w.plan, "/mnt/pool", "/srv/d2", "branch /srv/d2 is below /srv/d2");
	assert_waits(&w.plan, "/mnt/bfs", "/dev/shm/src", "source /dev/shm/src/x is below /dev/shm/src");
	assert_waits(&w.plan, "/srv/pool", "/srv/p1", "branch /srv/p* matches /srv/p1");
	assert_int_equal(w.diags.n, 1);
	assert_int_equal(w.diags.v[0].line, 3);
	assert_non_null(strstr(w.diags.v[0].msg, "own mount point /srv/pool"));
	world_done(&w);
}

/* A pattern below a link also matches where the link leads (world.c sets
 * path_real: the directory resolved, the wildcards kept). */
static void test_c09_glob_through_link(void **state)
{
	const char *t = "/srv/link/d* /pool fuse.mergerfs x-storaged 0 0\n"
			"tmpfs /data/d1 tmpfs x-storaged 0 0\n";
	struct world w = { .config = { .device_timeout_usec = 90 * SEC, .mount_timeout_usec = 90 * SEC } };
	char d[] = "/data/d*", *reals[] = { d };
	const struct entry_facts facts[] = { { .path_real = reals }, { 0 } };
	struct plan_input in = { .config = &w.config, .fstab = &w.fstab, .inventory = &w.inventory, .facts = facts };

	assert_int_equal(fstab_parse_buf(&w.fstab, t, strlen(t), "fstab", NULL, &w.diags), 0);
	assert_int_equal(fstab_glob_dir_len("/srv/link/d*"), 9);
	assert_int_equal(fstab_glob_dir_len("/d*"), 1);
	assert_int_equal(fstab_glob_dir_len("/a/b[12]/c"), 2);
	assert_int_equal(plan_build(&in, &w.plan, &w.diags), 0);
	assert_waits(&w.plan, "/pool", "/data/d1", "branch /srv/link/d* matches /data/d1");
	world_done(&w);
}

/* Edges are kept unique by (from, to) in a hash index: thousands of
 * entries whose union patterns each match thousands of mount points plan
 * in linear time, every pair once. */
static void test_many_glob_edges(void **state)
{
	size_t n = 3000, k = 100, len = 0, cap = (n + k) * 96;
	char *t = malloc(cap);
	struct world w = { 0 };

	assert_non_null(t);
	for (size_t i = 0; i < n; i++)
		len += (size_t)snprintf(t + len, cap - len, "tmpfs /g/d%zu tmpfs x-storaged 0 0\n", i);
	for (size_t i = 0; i < k; i++)
		len += (size_t)snprintf(t + len, cap - len,
					"/g/d* /u/p%zu fuse.mergerfs x-storaged 0 0\n", i);
	assert_int_equal(world_plan(&w, t, false), 0);
	assert_int_equal(mount_step(&w.plan, "/u/p7", NULL)->n_deps, n);
	world_done(&w);
	free(t);
}

/* ------------------------------------------------------------ local pass, degraded */

static void test_c17_network_deferred(void **state)
{
	struct world w = { 0 };

	assert_int_equal(world_plan(&w,
				    "UUID=0000aaaa-0000-4000-8000-000000000001 /lun ext4 defaults,_netdev,x-systemd.requires=iscsi.service,noauto 0 0\n"
				    "LABEL=nbd /nbd ext4 _netdev 0 0\n"
				    "LABEL=q /q ext4 x-storaged,x-systemd.after=network-online.target 0 0\n"
				    "LABEL=w /w ext4 x-storaged,x-systemd.requires=NetworkManager-wait-online.service 0 0\n"
				    "LABEL=local /local ext4 x-storaged 0 0\n"
				    "tmpfs /t tmpfs _netdev 0 0\n"
				    "/dev/disk/by-path/ip-10.0.0.5:3260-iscsi-iqn.2001-05.com.example:v1-lun-0 /p xfs x-storaged 0 0\n"
				    "/dev/nbd0 /n ext4 x-storaged 0 0\n",
				    true),
			 0);
	assert_int_equal(w.diags.n, 0);
	assert_true(mount_step(&w.plan, "/lun", NULL)->later);
	assert_true(mount_step(&w.plan, "/nbd", NULL)->later);
	assert_true(mount_step(&w.plan, "/q", NULL)->later);
	assert_true(mount_step(&w.plan, "/w", NULL)->later);
	assert_false(mount_step(&w.plan, "/local", NULL)->later);
	/* _netdev on what needs no device: mounted now */
	assert_false(mount_step(&w.plan, "/t", NULL)->later);
	/* a network block device's path says _netdev by itself */
	assert_true(mount_step(&w.plan, "/p", NULL)->later);
	assert_true(mount_step(&w.plan, "/n", NULL)->later);
	for (size_t i = 0; i < w.plan.n_steps; i++)
		if (w.plan.steps[i].kind == PLAN_WAIT_DEVICE)
			assert_true(w.plan.steps[i].later ==
				    (strcmp(w.plan.steps[i].spec, "LABEL=local") != 0));
	world_done(&w);
}

static void test_degraded_option_is_consent(void **state)
{
	struct world w = { 0 };

	assert_int_equal(world_plan(&w,
				    "LABEL=r /r btrfs noatime,degraded,x-storaged 0 0\n"
				    "LABEL=s /s btrfs noatime,x-storaged 0 0\n"
				    "LABEL=b /b bcachefs degraded,x-storaged 0 0\n",
				    false),
			 0);
	assert_true(mount_step(&w.plan, "/r", NULL)->degraded_allowed);
	assert_false(mount_step(&w.plan, "/s", NULL)->degraded_allowed);
	/* btrfs: storaged adds degraded itself, only after the timeout */
	assert_string_equal(w.fstab.entries[0].mount_options, "noatime");
	assert_string_equal(w.fstab.entries[2].mount_options, "degraded");
	world_done(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_normalize),
		cmocka_unit_test(test_c11_spellings),
		cmocka_unit_test(test_relative_and_dotdot_stay_errors),
		cmocka_unit_test(test_c10_lines_of_other_tools),
		cmocka_unit_test(test_c09_overlay_dirs),
		cmocka_unit_test(test_c09_images_and_requires_mounts_for),
		cmocka_unit_test(test_c09_resolved_paths),
		cmocka_unit_test(test_c09_helper_files_and_fuse_sources),
		cmocka_unit_test(test_c09_union_branch_edges),
		cmocka_unit_test(test_c09_glob_through_link),
		cmocka_unit_test(test_many_glob_edges),
		cmocka_unit_test(test_c17_network_deferred),
		cmocka_unit_test(test_degraded_option_is_consent),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
