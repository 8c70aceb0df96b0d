/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The fstab option table: every row is exercised.  A row storaged honours
 * has a check here of what it sets in the entry (and names the test that
 * shows the behaviour end to end); a row it cannot honour must produce its
 * note, with FILE:LINE, as a warning or (refused rows) an error.  A row
 * added to the table without either fails this test.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "shared/diag.h"
#include "parse/fstab.h"
#include "parse/fstab_internal.h"
#include "shared/units.h"

static bool has_require(const struct fstab_entry *e, const char *option, bool before)
{
	return e->n_requires == 1 && strcmp(e->requires[0].option, option) == 0 &&
	       e->requires[0].before == before;
}

static bool ok_self(const struct fstab_entry *e) { return e->mount_options == NULL; }
static bool ok_requires(const struct fstab_entry *e) { return has_require(e, "x-storaged.requires", false); }
static bool ok_sd_requires(const struct fstab_entry *e) { return has_require(e, "x-systemd.requires", false); }
static bool ok_after(const struct fstab_entry *e) { return has_require(e, "x-systemd.after", false); }
static bool ok_before(const struct fstab_entry *e) { return has_require(e, "x-systemd.before", true); }
static bool ok_rmf(const struct fstab_entry *e) { return has_require(e, "x-systemd.requires-mounts-for", false); }
static bool ok_dev_timeout(const struct fstab_entry *e) { return e->device_timeout_usec == 5 * USEC_PER_SEC; }
static bool ok_mount_timeout(const struct fstab_entry *e) { return e->mount_timeout_usec == 5 * USEC_PER_SEC; }
static bool ok_degraded(const struct fstab_entry *e) { return e->degraded_ok; }
static bool ok_remote(const struct fstab_entry *e) { return e->remote; }
static bool ok_nofail(const struct fstab_entry *e) { return e->nofail && e->mount_options == NULL; }
static bool ok_noauto(const struct fstab_entry *e) { return e->mount_options == NULL; }
static bool ok_netdev(const struct fstab_entry *e) { return e->netdev && !e->remote && e->mount_options == NULL; }
static bool ok_bind(const struct fstab_entry *e) { return e->bind && !e->rbind; }
static bool ok_rbind(const struct fstab_entry *e) { return e->bind && e->rbind; }
static bool ok_loop(const struct fstab_entry *e) { return e->loop; }
static bool ok_mkdir(const struct fstab_entry *e) { return e->mkdir; }
static bool ok_rw_only(const struct fstab_entry *e) { return e->rw_only && e->mount_options == NULL; }

/* The honoured rows: the option as written on a line, what it must set,
 * and the test that shows its behaviour on a running system. */
static const struct honoured {
	const char *name;
	const char *written;
	bool (*ok)(const struct fstab_entry *e);
	const char *shown_by;
} honoured[] = {
	{ "x-storaged", "x-storaged", ok_self, "t-start-stop.sh" },
	{ "x-storaged.requires", "x-storaged.requires=/c", ok_requires, "test_plan" },
	{ "x-storaged.device-timeout", "x-storaged.device-timeout=5s", ok_dev_timeout, "t-c02-member-missing.sh" },
	{ "x-storaged.mount-timeout", "x-storaged.mount-timeout=5s", ok_mount_timeout, "t-hung-helper.sh" },
	{ "x-storaged.degraded", "x-storaged.degraded", ok_degraded, "t-c03-degraded-policy.sh" },
	{ "x-storaged.remote", "x-storaged.remote", ok_remote, "t-local-only.sh" },
	{ "x-systemd.requires", "x-systemd.requires=/c", ok_sd_requires, "test_plan" },
	{ "x-systemd.after", "x-systemd.after=/c", ok_after, "test_plan" },
	{ "x-systemd.before", "x-systemd.before=c.mount", ok_before, "t-c22-systemd-before.sh" },
	{ "x-systemd.requires-mounts-for", "x-systemd.requires-mounts-for=/c", ok_rmf, "test_plan" },
	{ "x-systemd.device-timeout", "x-systemd.device-timeout=5s", ok_dev_timeout, "t-c02-member-missing.sh" },
	{ "x-systemd.mount-timeout", "x-systemd.mount-timeout=5s", ok_mount_timeout, "t-hung-helper.sh" },
	{ "x-systemd.rw-only", "x-systemd.rw-only", ok_rw_only, "t-c39-rw-only.sh" },
	{ "nofail", "nofail", ok_nofail, "t-c16-nofail-readiness.sh" },
	{ "noauto", "noauto", ok_noauto, "t-start-stop.sh" },
	{ "_netdev", "_netdev", ok_netdev, "t-c17-netdev-early-pass.sh" },
	{ "bind", "bind", ok_bind, "t-c12-bind-ro-keeps-flags.sh" },
	{ "rbind", "rbind", ok_rbind, "t-rbind-stop.sh" },
	{ "loop", "loop", ok_loop, "t-predict-block-source.sh" },
	{ "degraded", "degraded", ok_degraded, "t-c03-degraded-policy.sh" },
	{ "X-mount.mkdir", "X-mount.mkdir=0755", ok_mkdir, "t-c06-nested-child-first.sh" },
	{ "x-mount.mkdir", "x-mount.mkdir", ok_mkdir, "t-c06-nested-child-first.sh" },
};

static const struct honoured *find_honoured(const char *name)
{
	for (size_t i = 0; i < sizeof(honoured) / sizeof(honoured[0]); i++)
		if (strcmp(honoured[i].name, name) == 0)
			return &honoured[i];
	return NULL;
}

static int parse_with(const char *option, struct fstab *f, struct diag_list *dl)
{
	char line[512];

	snprintf(line, sizeof(line), "/srv/img /a ext4 x-storaged,%s 0 0\n", option);
	return fstab_parse_buf(f, line, strlen(line), "opts.fstab", NULL, dl);
}

static void check_honoured(const struct fstab__option *row)
{
	const struct honoured *h = find_honoured(row->name);
	struct diag_list dl = { 0 };
	struct fstab f = { 0 };

	if (!h)
		fail_msg("option '%s' has no note, so storaged claims to honour it, but no check says what it sets",
			 row->name);
	assert_int_equal(parse_with(h->written, &f, &dl), 0);
	assert_int_equal(dl.n, 0);
	assert_int_equal(f.n_entries, 1);
	if (!h->ok(&f.entries[0]))
		fail_msg("option '%s' does not set what it should (shown by %s)", row->name, h->shown_by);
	fstab_done(&f);
	diag_list_done(&dl);
}

static void check_noted(const struct fstab__option *row)
{
	struct diag_list dl = { 0 };
	struct fstab f = { 0 };
	char written[128];
	int r;

	/* every noted row takes a value or ignores it: give one */
	snprintf(written, sizeof(written), "%s=1", row->name);
	r = parse_with(written, &f, &dl);
	assert_int_equal(r, row->refuse ? -EINVAL : 0);
	assert_int_equal(dl.n, 1);
	assert_int_equal(dl.v[0].level, row->refuse ? DIAG_ERROR : DIAG_WARNING);
	assert_int_equal(dl.v[0].line, 1);
	assert_string_equal(dl.v[0].file, "opts.fstab");
	if (!strstr(dl.v[0].msg, row->name) || !strstr(dl.v[0].msg, row->note))
		fail_msg("option '%s': the message '%s' does not name it and what storaged does", row->name,
			 dl.v[0].msg);
	/* never handed on to the mount as if it were the kernel's */
	if (!row->refuse && strncmp(row->name, "x-systemd.", 10) == 0)
		assert_null(f.entries[0].mount_options);
	fstab_done(&f);
	diag_list_done(&dl);
}

static void test_every_row_exercised(void **state)
{
	size_t n;
	const struct fstab__option *rows = fstab__option_rows(&n);

	assert_true(n > 0);
	for (size_t i = 0; i < n; i++) {
		if (rows[i].note)
			check_noted(&rows[i]);
		else
			check_honoured(&rows[i]);
	}
}

/* Every honoured check names a row: a row removed leaves no stale check. */
static void test_no_stale_checks(void **state)
{
	size_t n;
	const struct fstab__option *rows = fstab__option_rows(&n);

	for (size_t k = 0; k < sizeof(honoured) / sizeof(honoured[0]); k++) {
		bool found = false;

		for (size_t i = 0; i < n && !found; i++)
			found = strcmp(rows[i].name, honoured[k].name) == 0 && !rows[i].note;
		if (!found)
			fail_msg("check for '%s' names no honoured row of the table", honoured[k].name);
	}
}

/* The options systemd.mount(5) (252 to 258) and mount(8) document each
 * have a row: none falls to "plain" and is handed on unseen. */
static void test_documented_options_have_rows(void **state)
{
	static const char *const documented[] = {
		"x-systemd.requires", "x-systemd.before", "x-systemd.after", "x-systemd.wanted-by",
		"x-systemd.required-by", "x-systemd.wants-mounts-for", "x-systemd.requires-mounts-for",
		"x-systemd.device-bound", "x-systemd.automount", "x-systemd.idle-timeout",
		"x-systemd.device-timeout", "x-systemd.mount-timeout", "x-systemd.makefs",
		"x-systemd.growfs", "x-systemd.pcrfs", "x-systemd.rw-only", "x-systemd.graceful-option",
		"x-systemd.validatefs", "x-initrd.mount", "x-initrd.attach", "nofail", "noauto", "auto",
		"_netdev", "X-mount.mkdir", "X-mount.owner", "X-mount.group", "X-mount.mode",
		"X-mount.idmap", "X-mount.subdir", "X-mount.auto-fstypes", "X-mount.nocanonicalize",
		"X-mount.noloop",
	};
	size_t n;
	const struct fstab__option *rows = fstab__option_rows(&n);

	for (size_t k = 0; k < sizeof(documented) / sizeof(documented[0]); k++) {
		bool found = false;

		for (size_t i = 0; i < n && !found; i++)
			found = strcmp(rows[i].name, documented[k]) == 0;
		if (!found)
			fail_msg("documented option '%s' has no row in the option table", documented[k]);
	}
}

/* What the plan shows as passed to mount: libmount's comments are not. */
static void test_option_is_passed(void **state)
{
	static const struct {
		const char *name;
		bool passed;
	} cases[] = {
		{ "X-mount.mkdir", false }, { "x-mount.mkdir", false }, { "X-mount.mode", false },
		{ "x-initrd.mount", false }, { "x-anything", false },	 { "comment", false },
		{ "size", true },	    { "defaults", true },	 { "bind", true },
		{ "commentary", true },	    { "x", true },		 { "xattr", true },
		{ "loop", true },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (fstab_option_is_passed(cases[i].name, strlen(cases[i].name)) != cases[i].passed)
			fail_msg("'%s': want %s", cases[i].name, cases[i].passed ? "passed" : "not passed");
	/* the length counts, not a NUL: "x-" within "tx-queue" is no prefix */
	assert_true(fstab_option_is_passed("tx-queue", 8));
	assert_false(fstab_option_is_passed("comment=x", 7));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_row_exercised),
		cmocka_unit_test(test_no_stale_checks),
		cmocka_unit_test(test_documented_options_have_rows),
		cmocka_unit_test(test_option_is_passed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
