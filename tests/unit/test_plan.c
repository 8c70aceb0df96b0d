/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Planner tests: ordering rules on hand-built inputs.  The golden scenarios
 * under tests/golden/ run the real binary (tests/golden/t-golden.sh).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "devices/btrfs.h"
#include "parse/config.h"
#include "parse/fstab.h"
#include "devices/inventory.h"
#include "plan/plan.h"

#define SEC (UINT64_C(1000000))
#define GIB (UINT64_C(1) << 30)

/* ------------------------------------------------------------ hand-built inputs */

static struct config test_config(void)
{
	return (struct config){
		.file = (char *)"storaged.conf",
		.device_timeout_usec = 90 * SEC,
		.mount_timeout_usec = 90 * SEC,
		.degraded = DEGRADED_NO,
		.jobs = 4,
	};
}

static struct fstab_entry entry(unsigned line, const char *source, const char *target, const char *fstype)
{
	return (struct fstab_entry){
		.line = line,
		.source = (char *)source,
		.target = (char *)target,
		.fstype = (char *)fstype,
		.options = (char *)"noauto,x-storaged",
		.device_timeout_usec = USEC_UNSET,
		.mount_timeout_usec = USEC_UNSET,
	};
}

struct world {
	struct config config;
	struct fstab fstab;
	struct inventory inventory;
	struct btrfs_fs_list btrfs;
	struct libmnt_table *mountinfo;
	struct area_survey *surveys; /* per area, or NULL */
	const struct entry_facts *facts; /* per entry, or NULL */
	struct plan plan;
	struct diag_list diags;
};

static int world_plan(struct world *w, struct fstab_entry *e, size_t n)
{
	struct plan_input in = {
		.config = &w->config,
		.fstab = &w->fstab,
		.inventory = &w->inventory,
		.btrfs = &w->btrfs,
		.mountinfo = w->mountinfo,
		.surveys = w->surveys,
		.facts = w->facts,
		.ram_bytes = 8 * GIB,
	};

	w->fstab.file = (char *)"fstab";
	w->fstab.entries = e;
	w->fstab.n_entries = n;
	if (!w->config.device_timeout_usec)
		w->config = test_config();
	return plan_build(&in, &w->plan, &w->diags);
}

static void world_done(struct world *w)
{
	plan_done(&w->plan);
	diag_list_done(&w->diags);
	if (w->mountinfo)
		mnt_unref_table(w->mountinfo);
}

/* Position (0-based) of the MOUNT step for @target; fails the test if absent. */
static size_t mount_pos(const struct plan *p, const char *target)
{
	for (size_t i = 0; i < p->n_steps; i++)
		if (p->steps[i].kind == PLAN_MOUNT && strcmp(p->steps[i].entry->target, target) == 0)
			return i;
	fail_msg("no mount step for %s", target);
	return 0;
}

static const struct plan_dep *dep_on(const struct plan_step *s, size_t step)
{
	for (size_t d = 0; d < s->n_deps; d++)
		if (s->deps[d].step == step)
			return &s->deps[d];
	return NULL;
}

static void assert_every_dep_earlier(const struct plan *p)
{
	for (size_t i = 0; i < p->n_steps; i++)
		for (size_t d = 0; d < p->steps[i].n_deps; d++)
			assert_true(p->steps[i].deps[d].step < i);
}

/* The one error of the plan: at @file:@line, saying @msg. */
static void assert_one_error(const struct world *w, const char *file, unsigned line, const char *msg)
{
	assert_int_equal(diag_count(&w->diags, DIAG_ERROR), 1);
	assert_string_equal(w->diags.v[0].file, file);
	assert_int_equal(w->diags.v[0].line, line);
	assert_string_equal(w->diags.v[0].msg, msg);
}

/* ------------------------------------------------------------ ordering units */

/* Only the deepest ancestor, whatever the fstab order. */
static void test_parent_deepest(void **state)
{
	struct fstab_entry e[] = {
		entry(1, "tmpfs", "/srv/data/x", "tmpfs"),
		entry(2, "tmpfs", "/srv", "tmpfs"),
		entry(3, "tmpfs", "/srv/data", "tmpfs"),
	};
	struct world w = { 0 };
	size_t x, srv, data;
	const struct plan_dep *d;

	assert_int_equal(world_plan(&w, e, 3), 0);
	assert_int_equal(w.plan.n_steps, 3);
	srv = mount_pos(&w.plan, "/srv");
	data = mount_pos(&w.plan, "/srv/data");
	x = mount_pos(&w.plan, "/srv/data/x");
	assert_int_equal(srv, 0);
	assert_int_equal(data, 1);
	assert_int_equal(x, 2);
	assert_int_equal(w.plan.steps[x].n_deps, 1);
	d = dep_on(&w.plan.steps[x], data);
	assert_non_null(d);
	assert_string_equal(d->reason, "/srv/data: parent mount point");
	assert_int_equal(w.plan.steps[data].n_deps, 1);
	assert_string_equal(w.plan.steps[data].deps[0].reason, "/srv: parent mount point");
	assert_int_equal(w.diags.n, 0);
	world_done(&w);
}

/* "/srv/data2" is not below "/srv/data": no edge, fstab order kept. */
static void test_prefix_trap(void **state)
{
	struct fstab_entry e[] = {
		entry(1, "tmpfs", "/srv/data2", "tmpfs"),
		entry(2, "tmpfs", "/srv/data", "tmpfs"),
		entry(3, "/srv/data2/b", "/srv/b", "none"),
	};
	struct world w = { 0 };

	e[2].bind = true;
	assert_int_equal(world_plan(&w, e, 3), 0);
	assert_int_equal(mount_pos(&w.plan, "/srv/data2"), 0);
	assert_int_equal(mount_pos(&w.plan, "/srv/data"), 1);
	assert_int_equal(w.plan.steps[0].n_deps, 0);
	assert_int_equal(w.plan.steps[1].n_deps, 0);
	/* the bind's source is below /srv/data2 only */
	assert_int_equal(w.plan.steps[2].n_deps, 1);
	assert_int_equal(w.plan.steps[2].deps[0].step, 0);
	assert_string_equal(w.plan.steps[2].deps[0].reason, "/srv/data2: bind source below it");
	world_done(&w);
}

/* Independent steps keep fstab order; a ready step never jumps its deps. */
static void test_ties_fstab_order(void **state)
{
	struct fstab_entry e[] = {
		entry(2, "/a/src", "/z", "none"), /* bind from below /a: after it */
		entry(4, "tmpfs", "/m", "tmpfs"),
		entry(7, "tmpfs", "/a", "tmpfs"),
		entry(9, "tmpfs", "/b", "tmpfs"),
	};
	struct world w = { 0 };

	e[0].bind = true;
	assert_int_equal(world_plan(&w, e, 4), 0);
	assert_int_equal(mount_pos(&w.plan, "/m"), 0);
	assert_int_equal(mount_pos(&w.plan, "/a"), 1);
	assert_int_equal(mount_pos(&w.plan, "/z"), 2);
	assert_int_equal(mount_pos(&w.plan, "/b"), 3);
	assert_every_dep_earlier(&w.plan);
	world_done(&w);
}

/* A bind whose source equals another mount point waits for it. */
static void test_bind_source_equal(void **state)
{
	struct fstab_entry e[] = {
		entry(1, "/srv/data", "/mnt/view", "none"),
		entry(2, "tmpfs", "/srv/data", "tmpfs"),
	};
	struct world w = { 0 };
	size_t v;

	e[0].bind = true;
	assert_int_equal(world_plan(&w, e, 2), 0);
	v = mount_pos(&w.plan, "/mnt/view");
	assert_int_equal(v, 1);
	assert_string_equal(w.plan.steps[v].deps[0].reason, "/srv/data: bind source below it");
	world_done(&w);
}

/* Members registered first, then the assemble, then mounts by line. */
static void test_btrfs_register_first(void **state)
{
	struct block_device devs[2] = {
		{ .devnode = (char *)"/dev/vdb",
		  .type = (char *)"btrfs",
		  .is_btrfs = true,
		  .uuid = (char *)"5e81a0c4-7d2b-4b8e-9c1f-0a1b2c3d4e5f" },
		{ .devnode = (char *)"/dev/vdc",
		  .type = (char *)"btrfs",
		  .is_btrfs = true,
		  .uuid = (char *)"5e81a0c4-7d2b-4b8e-9c1f-0a1b2c3d4e5f" },
	};
	struct btrfs_member members[2] = { { 1, &devs[0] }, { 2, &devs[1] } };
	struct btrfs_filesystem fs = {
		.fsid = "5e81a0c4-7d2b-4b8e-9c1f-0a1b2c3d4e5f",
		.num_devices = 2,
		.members = members,
		.n_members = 2,
	};
	struct fstab_entry e[] = {
		entry(1, "tmpfs", "/t", "tmpfs"),
		entry(2, "/dev/vdc", "/d", "btrfs"),
	};
	struct world w = { 0 };
	const struct plan_step *s;

	w.inventory = (struct inventory){ .devs = devs, .n_devs = 2 };
	w.btrfs = (struct btrfs_fs_list){ .v = &fs, .n = 1 };
	e[1].device_timeout_usec = 120 * SEC;
	assert_int_equal(world_plan(&w, e, 2), 0);
	assert_int_equal(w.plan.n_steps, 5);
	assert_int_equal(w.plan.steps[0].kind, PLAN_REGISTER);
	assert_string_equal(w.plan.steps[0].devnode, "/dev/vdb");
	assert_int_equal(w.plan.steps[1].kind, PLAN_REGISTER);
	assert_int_equal(w.plan.steps[1].devid, 2);
	s = &w.plan.steps[2];
	assert_int_equal(s->kind, PLAN_ASSEMBLE);
	assert_int_equal(s->n_deps, 2);
	assert_string_equal(s->deps[1].reason, "member devid 2");
	assert_int_equal(s->timeout_usec, 120 * SEC);
	assert_null(s->missing);
	assert_int_equal(mount_pos(&w.plan, "/t"), 3);
	s = &w.plan.steps[4];
	assert_true(s->is_btrfs);
	assert_int_equal(s->deps[0].step, 2);
	assert_string_equal(s->deps[0].reason, "btrfs 5e81a0c4… ready, 2/2 members");
	world_done(&w);
}

/* Two entries waiting for one absent device share one step: longest timeout. */
static void test_wait_device_shared(void **state)
{
	struct fstab_require req[] = { { "x-storaged.requires", (char *)"LABEL=gone" } };
	struct fstab_entry e[] = {
		entry(1, "LABEL=gone", "/a", "ext4"),
		entry(2, "tmpfs", "/b", "tmpfs"),
	};
	struct world w = { 0 };
	size_t a, b;

	e[0].device_timeout_usec = 5 * SEC;
	e[1].requires = req;
	e[1].n_requires = ARRAY_SIZE(req);
	assert_int_equal(world_plan(&w, e, 2), 0);
	assert_int_equal(w.plan.n_steps, 3);
	assert_int_equal(w.plan.steps[0].kind, PLAN_WAIT_DEVICE);
	assert_string_equal(w.plan.steps[0].spec, "LABEL=gone");
	assert_int_equal(w.plan.steps[0].timeout_usec, 90 * SEC);
	a = mount_pos(&w.plan, "/a");
	b = mount_pos(&w.plan, "/b");
	assert_string_equal(w.plan.steps[a].deps[0].reason, "LABEL=gone present");
	assert_string_equal(w.plan.steps[b].deps[0].reason, "x-storaged.requires=LABEL=gone");
	world_done(&w);
}

/* An ID= source (fstab(5): a /dev/disk/by-id/ name) is a device like any
 * tag: absent, its mount waits for it; found by its by-id name, it does not. */
static void test_id_source_waits(void **state)
{
	char *ids[] = { (char *)"wwn-0x5000c500a1b2c3d4", NULL };
	struct block_device dev = { .devnode = (char *)"/dev/sdb", .type = (char *)"ext4", .ids = ids };
	struct fstab_entry e[] = { entry(1, "ID=ata-DISK_S1", "/a", "ext4"),
				   entry(2, "ID=wwn-0x5000c500a1b2c3d4", "/b", "ext4") };
	struct world w = { 0 };
	size_t a, b;

	w.inventory.devs = &dev;
	w.inventory.n_devs = 1;
	assert_true(plan_needs_devices(&(struct fstab){ .entries = e, .n_entries = 1 }));
	assert_int_equal(world_plan(&w, e, 2), 0);
	assert_int_equal(w.plan.steps[0].kind, PLAN_WAIT_DEVICE);
	assert_string_equal(w.plan.steps[0].spec, "ID=ata-DISK_S1");
	a = mount_pos(&w.plan, "/a");
	b = mount_pos(&w.plan, "/b");
	assert_int_equal(w.plan.steps[a].n_deps, 1);
	assert_string_equal(w.plan.steps[a].deps[0].reason, "ID=ata-DISK_S1 present");
	for (size_t i = 0; i < w.plan.n_steps; i++)
		if (w.plan.steps[i].kind == PLAN_WAIT_DEVICE)
			assert_string_not_equal(w.plan.steps[i].spec, "ID=wwn-0x5000c500a1b2c3d4");
	assert_int_equal(w.plan.steps[b].n_deps, 0);
	world_done(&w);
}

/* The scan may skip libblkid only when btrfs superblocks find every
 * device the entries need: btrfs by UUID= (binds, nodev types and
 * requires= of paths need no device); a LABEL=, a path, another type or a
 * requires= naming a device wants every device probed. */
static void test_devices_by_fsid_only(void **state)
{
	struct fstab_require by_label[] = { { "x-storaged.requires", (char *)"LABEL=keys" } };
	struct fstab_require by_path[] = { { "x-storaged.requires", (char *)"/srv" } };
	struct fstab_entry ok[] = { entry(1, "UUID=5e81c2a4-0000-4000-8000-000000000001", "/a", "btrfs"),
				    entry(2, "tmpfs", "/t", "tmpfs"), entry(3, "/srv/x", "/b", "none") };
	struct fstab_entry label = entry(1, "LABEL=data", "/a", "btrfs");
	struct fstab_entry ext4 = entry(1, "UUID=5e81c2a4-0000-4000-8000-000000000001", "/a", "ext4");
	struct fstab_entry path = entry(1, "/dev/sdb", "/a", "btrfs");
	struct fstab_entry req = ok[0];

	ok[2].bind = true;
	ok[2].requires = by_path;
	ok[2].n_requires = 1;
	assert_true(plan_devices_by_fsid_only(&(struct fstab){ .entries = ok, .n_entries = 3 }));
	assert_true(plan_devices_by_fsid_only(&(struct fstab){ 0 }));
	assert_false(plan_devices_by_fsid_only(&(struct fstab){ .entries = &label, .n_entries = 1 }));
	assert_false(plan_devices_by_fsid_only(&(struct fstab){ .entries = &ext4, .n_entries = 1 }));
	assert_false(plan_devices_by_fsid_only(&(struct fstab){ .entries = &path, .n_entries = 1 }));
	req.requires = by_label;
	req.n_requires = 1;
	assert_false(plan_devices_by_fsid_only(&(struct fstab){ .entries = &req, .n_entries = 1 }));
}

/* requires= by path, by a path below a mount point, by a systemd unit name. */
static void test_requires_paths(void **state)
{
	struct fstab_require r1[] = { { "x-storaged.requires", (char *)"/srv/data/deep/er" },
				      { "x-systemd.requires", (char *)"srv-data.mount" } };
	struct fstab_require r2[] = { { "x-storaged.requires", (char *)"/opt/elsewhere" },
				      { "x-systemd.after", (char *)"foo.service" } };
	struct fstab_entry e[] = {
		entry(1, "tmpfs", "/x", "tmpfs"),
		entry(2, "tmpfs", "/y", "tmpfs"),
		entry(3, "tmpfs", "/srv/data", "tmpfs"),
	};
	struct world w = { 0 };
	size_t x, data;

	e[0].requires = r1;
	e[0].n_requires = ARRAY_SIZE(r1);
	e[1].requires = r2;
	e[1].n_requires = ARRAY_SIZE(r2);
	assert_int_equal(world_plan(&w, e, 3), 0);
	data = mount_pos(&w.plan, "/srv/data");
	x = mount_pos(&w.plan, "/x");
	assert_true(data < x);
	assert_int_equal(w.plan.steps[x].n_deps, 1); /* the unit names the same mount */
	assert_string_equal(w.plan.steps[x].deps[0].reason, "x-storaged.requires=/srv/data/deep/er");
	assert_int_equal(w.plan.steps[mount_pos(&w.plan, "/y")].n_deps, 0);
	assert_int_equal(w.diags.n, 2);
	assert_int_equal(w.diags.v[0].level, DIAG_WARNING);
	assert_int_equal(w.diags.v[0].line, 2);
	assert_string_equal(w.diags.v[0].msg,
			    "x-storaged.requires=/opt/elsewhere: not a storaged entry; assumed mounted by the system");
	assert_non_null(strstr(w.diags.v[1].msg, "foo.service"));
	world_done(&w);
}

static void test_requires_cycle(void **state)
{
	struct fstab_require ra[] = { { "x-storaged.requires", (char *)"/b" } };
	struct fstab_require rb[] = { { "x-storaged.requires", (char *)"/c" } };
	struct fstab_require rc[] = { { "x-storaged.requires", (char *)"/a" } };
	struct fstab_entry e[] = {
		entry(3, "tmpfs", "/c", "tmpfs"),
		entry(5, "tmpfs", "/a", "tmpfs"),
		entry(8, "tmpfs", "/b", "tmpfs"),
		entry(9, "tmpfs", "/free", "tmpfs"),
	};
	struct world w = { 0 };

	e[0].requires = rc;
	e[0].n_requires = 1;
	e[1].requires = ra;
	e[1].n_requires = 1;
	e[2].requires = rb;
	e[2].n_requires = 1;
	assert_int_equal(world_plan(&w, e, 4), -ELOOP);
	assert_one_error(&w, "fstab", 3,
			 "dependency cycle: /c (fstab line 3) -> /a (line 5) -> /b (line 8) -> /c; remove one of the x-storaged.requires= options");
	world_done(&w);
}

/* A cycle without requires=: a bind from inside a child onto its parent. */
static void test_cycle_without_requires(void **state)
{
	struct fstab_entry e[] = {
		entry(1, "/y/x/src", "/y", "none"),
		entry(2, "tmpfs", "/y/x", "tmpfs"),
	};
	struct world w = { 0 };

	e[0].bind = true;
	assert_int_equal(world_plan(&w, e, 2), -ELOOP);
	assert_int_equal(w.diags.n, 1);
	assert_string_equal(w.diags.v[0].msg,
			    "dependency cycle: /y (fstab line 1) -> /y/x (line 2) -> /y; change the mount point or source of one of them");
	world_done(&w);
}

static void test_self_requires(void **state)
{
	struct fstab_require r[] = { { "x-storaged.requires", (char *)"/a" } };
	struct fstab_entry e[] = { entry(4, "tmpfs", "/a", "tmpfs") };
	struct world w = { 0 };

	e[0].requires = r;
	e[0].n_requires = 1;
	assert_int_equal(world_plan(&w, e, 1), -ELOOP);
	assert_string_equal(w.diags.v[0].msg,
			    "dependency cycle: /a (fstab line 4) -> /a; remove one of the x-storaged.requires= options");
	world_done(&w);
}

/* The fix names the options the user wrote, each once: not
 * x-storaged.requires= for a loop made of x-systemd.* options. */
static void test_cycle_names_its_options(void **state)
{
	struct fstab_require r[] = { { "x-systemd.after", (char *)"/b" },
				     { "x-systemd.requires-mounts-for", (char *)"/a" } };
	struct fstab_entry e[] = { entry(1, "tmpfs", "/a", "tmpfs"), entry(2, "tmpfs", "/b", "tmpfs") };
	struct world w = { 0 };

	for (size_t i = 0; i < 2; i++) {
		e[i].requires = &r[i];
		e[i].n_requires = 1;
	}
	assert_int_equal(world_plan(&w, e, 2), -ELOOP);
	assert_string_equal(w.diags.v[0].msg,
			    "dependency cycle: /a (fstab line 1) -> /b (line 2) -> /a; remove one of the "
			    "x-systemd.after= or x-systemd.requires-mounts-for= options");
	world_done(&w);
}

/* x-systemd.before= on /a, naming /b's mount unit: /b waits for /a, as
 * x-systemd.after= on /b would; one naming no entry orders nothing. */
static void test_before_orders_the_named_entry(void **state)
{
	struct fstab_require r[] = { { "x-systemd.before", (char *)"srv-b.mount", true },
				     { "x-systemd.before", (char *)"srv-none.mount", true } };
	struct fstab_entry e[] = { entry(1, "srvB", "/srv/b", "c22fs"), entry(2, "tmpfs", "/srv/a", "tmpfs") };
	struct world w = { 0 };
	const struct plan_dep *d;
	size_t a, b;

	e[1].requires = r;
	e[1].n_requires = 2;
	assert_int_equal(world_plan(&w, e, 2), 0);
	a = mount_pos(&w.plan, "/srv/a");
	b = mount_pos(&w.plan, "/srv/b");
	assert_true(a < b);
	d = dep_on(&w.plan.steps[b], a);
	assert_non_null(d);
	assert_string_equal(d->reason, "x-systemd.before=srv-b.mount on /srv/a");
	assert_int_equal(w.diags.n, 1);
	assert_int_equal(w.diags.v[0].level, DIAG_WARNING);
	assert_int_equal(w.diags.v[0].line, 2);
	assert_non_null(strstr(w.diags.v[0].msg, "x-systemd.before=srv-none.mount: not the mount unit of another storaged entry"));
	world_done(&w);
}

/* Two spellings of one directory through a link: an error on the later
 * line naming the earlier one; without the link, two entries. */
static void test_duplicate_through_link(void **state)
{
	struct fstab_entry e[] = { entry(1, "tmpfs", "/var/run", "tmpfs"), entry(2, "tmpfs", "/run", "tmpfs") };
	struct entry_facts f[2] = { { .target_real = (char *)"/run" }, { 0 } };
	struct world w = { .facts = f };

	assert_int_equal(world_plan(&w, e, 2), -EINVAL);
	assert_int_equal(w.diags.n, 1);
	assert_int_equal(w.diags.v[0].level, DIAG_ERROR);
	assert_int_equal(w.diags.v[0].line, 2);
	assert_string_equal(w.diags.v[0].msg,
			    "mount point '/run' and line 1's '/var/run' are one directory, '/run', through a symbolic link; storaged mounts each mount point once, as mount(8) and systemd do: remove or merge one of the two entries");
	world_done(&w);

	f[0].target_real = (char *)"/elsewhere/run";
	w = (struct world){ .facts = f };
	assert_int_equal(world_plan(&w, e, 2), 0);
	assert_int_equal(w.diags.n, 0);
	world_done(&w);
}

/* Mounted already: done, no deps of its own, but children still wait on it. */
static void test_already_mounted(void **state)
{
	struct fstab_entry e[] = {
		entry(1, "LABEL=absent", "/srv/data", "btrfs"),
		entry(2, "tmpfs", "/srv/data/tmp", "tmpfs"),
	};
	struct world w = { 0 };
	struct libmnt_fs *fs = mnt_new_fs();

	w.mountinfo = mnt_new_table();
	assert_non_null(fs);
	assert_non_null(w.mountinfo);
	assert_int_equal(mnt_fs_set_target(fs, "/srv/data"), 0);
	assert_int_equal(mnt_table_add_fs(w.mountinfo, fs), 0);
	mnt_unref_fs(fs);
	assert_int_equal(world_plan(&w, e, 2), 0);
	assert_int_equal(w.plan.n_steps, 2); /* no WAIT_DEVICE for the mounted one */
	assert_true(w.plan.steps[0].done);
	assert_string_equal(w.plan.steps[0].note, "already mounted");
	assert_int_equal(w.plan.steps[0].n_deps, 0);
	assert_false(w.plan.steps[1].done);
	assert_int_equal(w.plan.steps[1].deps[0].step, 0);
	world_done(&w);
}

/* A tmpfs area of 64 MiB and 1000 inodes on @path, section at @line. */
static struct area_config tmpfs_area(const char *name, unsigned line, const char *path)
{
	return (struct area_config){
		.name = (char *)name,
		.line = line,
		.path = (char *)path,
		.backend = AREA_TMPFS,
		.size = { AREA_SIZE_BYTES, 64 << 20 },
		.inodes = 1000,
		.headroom = 2.0,
		.fs = (char *)"ext4",
	};
}

/* Rule 4 both ways: area below a mount, a mount below an area. */
static void test_area_edges(void **state)
{
	struct area_config areas[] = { tmpfs_area("cache", 7, "/srv/data/cache") };
	struct fstab_entry e[] = {
		entry(1, "tmpfs", "/srv/data/cache/sub", "tmpfs"),
		entry(2, "tmpfs", "/srv", "tmpfs"),
		entry(3, "tmpfs", "/srv/data", "tmpfs"),
	};
	struct world w = { .config = test_config() };
	size_t area = SIZE_MAX, sub;

	w.config.areas = areas;
	w.config.n_areas = 1;
	assert_int_equal(world_plan(&w, e, 3), 0);
	for (size_t i = 0; i < w.plan.n_steps; i++)
		if (w.plan.steps[i].kind == PLAN_AREA)
			area = i;
	assert_int_equal(area, 2);
	assert_int_equal(w.plan.steps[area].n_deps, 1);
	assert_int_equal(w.plan.steps[area].deps[0].step, mount_pos(&w.plan, "/srv/data"));
	assert_string_equal(w.plan.steps[area].deps[0].reason, "/srv/data: area path below it");
	sub = mount_pos(&w.plan, "/srv/data/cache/sub");
	assert_int_equal(sub, 3);
	assert_non_null(dep_on(&w.plan.steps[sub], area));
	assert_every_dep_earlier(&w.plan);
	world_done(&w);
}

/* An area on an entry's own mount point, as written or through a link:
 * an error on the area's line naming the entry's; below it, none. */
static void test_area_on_mount_point(void **state)
{
	struct area_config areas[] = { tmpfs_area("log", 7, "/srv/log") };
	struct fstab_entry e[] = { entry(1, "tmpfs", "/srv", "tmpfs"), entry(3, "LABEL=log", "/srv/log", "btrfs") };
	struct entry_facts f[2] = { { 0 }, { 0 } };
	struct world w = { .config = test_config(), .facts = f };

	w.config.areas = areas;
	w.config.n_areas = 1;
	assert_int_equal(world_plan(&w, e, 2), 0);
	assert_one_error(&w, "storaged.conf", 7,
			 "area 'log': path '/srv/log' is the mount point of the btrfs entry at fstab:3, which storaged mounts: the area would be bound over that filesystem and hide it, and the next start would find the area where the entry belongs and fail it; put the area on a directory below the mount point (path = /srv/log/DIR), or drop the entry or the area");
	world_done(&w);

	e[1].target = (char *)"/var/log"; /* /var a link to /srv */
	f[1].target_real = (char *)"/srv/log";
	w = (struct world){ .config = w.config, .facts = f };
	assert_int_equal(world_plan(&w, e, 2), 0);
	assert_int_equal(diag_count(&w.diags, DIAG_ERROR), 1);
	assert_non_null(strstr(w.diags.v[0].msg, "the btrfs entry at fstab:3"));
	world_done(&w);

	areas[0].path = (char *)"/srv/log/app";
	w = (struct world){ .config = w.config, .facts = f };
	assert_int_equal(world_plan(&w, e, 2), 0);
	assert_int_equal(diag_count(&w.diags, DIAG_ERROR), 0);
	world_done(&w);
}

/* An area whose directory is missing or a link fails alone, in the plan:
 * the directory is often a user's, and renaming it must not stop the pass. */
static void test_area_path_unusable(void **state)
{
	struct area_config areas[] = { {
		.name = (char *)"rb",
		.line = 5,
		.path = (char *)"/home/u/rb",
		.backend = AREA_TMPFS,
		.size = { AREA_SIZE_AUTO, 0 },
		.inodes = 0,
		.headroom = 2.0,
		.fs = (char *)"ext4",
	} };
	struct area_survey sv[] = { { .valid = false, .error = -ENOENT } };
	struct fstab_entry e[] = { entry(1, "tmpfs", "/x", "tmpfs") };
	struct world w = { .config = test_config(), .surveys = sv };
	size_t area = SIZE_MAX;

	w.config.areas = areas;
	w.config.n_areas = 1;
	assert_int_equal(world_plan(&w, e, 1), 0);
	assert_int_equal(diag_count(&w.diags, DIAG_ERROR), 0);
	for (size_t i = 0; i < w.plan.n_steps; i++)
		if (w.plan.steps[i].kind == PLAN_AREA)
			area = i;
	assert_true(area != SIZE_MAX);
	assert_true(w.plan.steps[area].conflict);
	assert_non_null(strstr(w.plan.steps[area].note, "No such file or directory"));
	assert_false(w.plan.steps[mount_pos(&w.plan, "/x")].conflict);
	plan_done(&w.plan);

	sv[0].error = -ENOTDIR; /* a link to a directory, opened O_NOFOLLOW */
	w.plan = (struct plan){ 0 };
	assert_int_equal(world_plan(&w, e, 1), 0);
	for (size_t i = 0; i < w.plan.n_steps; i++)
		if (w.plan.steps[i].kind == PLAN_AREA)
			assert_non_null(strstr(w.plan.steps[i].note, "symbolic link"));
	world_done(&w);
}

static void test_describe(void **state)
{
	struct fstab_entry e = entry(1, "UUID=abc", "/srv/data", "btrfs");
	struct plan_step s = { .kind = PLAN_MOUNT, .entry = &e };
	char buf[128];

	assert_string_equal(plan_step_describe(&s, buf, sizeof(buf)), "mount UUID=abc on /srv/data");
	s = (struct plan_step){ .kind = PLAN_REGISTER, .devnode = (char *)"/dev/loop1" };
	assert_string_equal(plan_step_describe(&s, buf, sizeof(buf)), "register /dev/loop1");
	s = (struct plan_step){ .kind = PLAN_ASSEMBLE,
				.fsid = "5e81a0c4-7d2b-4b8e-9c1f-0a1b2c3d4e5f",
				.label = (char *)"my data" };
	assert_string_equal(plan_step_describe(&s, buf, sizeof(buf)), "assemble btrfs 5e81a0c4… 'my data'");
	s = (struct plan_step){ .kind = PLAN_WAIT_DEVICE, .spec = (char *)"LABEL=x" };
	assert_string_equal(plan_step_describe(&s, buf, sizeof(buf)), "wait for LABEL=x");
	/* truncation keeps a NUL */
	s = (struct plan_step){ .kind = PLAN_MOUNT, .entry = &e };
	assert_string_equal(plan_step_describe(&s, buf, 6), "mount");
}

/* A newline in a path must not split a step across lines.  A backslash
 * is shown as given (fstab's "\04", cut short at the end of a field),
 * unless three octal digits follow it: then it would read as an escape. */
static void test_text_escapes_control(void **state)
{
	struct fstab_entry e[] = { entry(1, "tmpfs", "/srv/a\nb\\c", "tmpfs"),
				   entry(2, "tmpfs", "/srv/d\\04", "tmpfs"),
				   entry(3, "tmpfs", "/srv/e\\040x", "tmpfs") };
	struct world w = { 0 };
	char *out = NULL;
	size_t sz = 0;
	FILE *f = open_memstream(&out, &sz);

	assert_non_null(f);
	assert_int_equal(world_plan(&w, e, 3), 0);
	assert_int_equal(plan_render_text(&w.plan, f), 0);
	fclose(f);
	assert_string_equal(out, "1 mount tmpfs on /srv/a\\012b\\c type tmpfs\n"
				 "2 mount tmpfs on /srv/d\\04 type tmpfs\n"
				 "3 mount tmpfs on /srv/e\\134040x type tmpfs\n");
	free(out);
	world_done(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parent_deepest),
		cmocka_unit_test(test_prefix_trap),
		cmocka_unit_test(test_ties_fstab_order),
		cmocka_unit_test(test_bind_source_equal),
		cmocka_unit_test(test_btrfs_register_first),
		cmocka_unit_test(test_wait_device_shared),
		cmocka_unit_test(test_id_source_waits),
		cmocka_unit_test(test_devices_by_fsid_only),
		cmocka_unit_test(test_requires_paths),
		cmocka_unit_test(test_requires_cycle),
		cmocka_unit_test(test_before_orders_the_named_entry),
		cmocka_unit_test(test_duplicate_through_link),
		cmocka_unit_test(test_cycle_without_requires),
		cmocka_unit_test(test_self_requires),
		cmocka_unit_test(test_cycle_names_its_options),
		cmocka_unit_test(test_already_mounted),
		cmocka_unit_test(test_area_edges), cmocka_unit_test(test_area_on_mount_point),
		cmocka_unit_test(test_area_path_unusable),
		cmocka_unit_test(test_describe),
		cmocka_unit_test(test_text_escapes_control),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
