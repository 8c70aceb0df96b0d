/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fstab module: selection, escapes (C07), malformed lines, options and
 * their stripping, durations, every error with its exact line.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "shared/diag.h"
#include "parse/fstab.h"
#include "world/load.h"

#define FX(name) FIXTURES "/fstab/" name

static int parse_str(struct fstab *f, const char *text, char *const *select, struct diag_list *dl)
{
	return fstab_parse_buf(f, text, strlen(text), "test.fstab", select, dl);
}

/* Diagnostic @i is an error on @line whose message contains @needle. */
static void assert_error(const struct diag_list *dl, size_t i, unsigned line, const char *needle)
{
	if (i >= dl->n)
		fail_msg("expected a diagnostic #%zu, have %zu", i, dl->n);
	assert_int_equal(dl->v[i].level, DIAG_ERROR);
	if (dl->v[i].line != line || !strstr(dl->v[i].msg, needle))
		fail_msg("diagnostic #%zu: line %u '%s'; expected line %u containing '%s'", i,
			 dl->v[i].line, dl->v[i].msg, line, needle);
}

/* @text is refused with one error, on @line, containing @needle. */
static void assert_refused(const char *text, unsigned line, const char *needle)
{
	struct diag_list dl = { 0 };
	struct fstab f = { 0 };

	assert_int_equal(parse_str(&f, text, NULL, &dl), -EINVAL);
	assert_int_equal(dl.n, 1);
	assert_error(&dl, 0, line, needle);
	diag_list_done(&dl);
}

/* The deferred entry mounted on @target, or NULL. */
static const struct fstab_entry *fstab_find_target(const struct fstab *f, const char *target)
{
	for (size_t i = 0; f && target && i < f->n_entries; i++)
		if (strcmp(f->entries[i].target, target) == 0)
			return &f->entries[i];
	return NULL;
}

static const struct fstab_entry *must_find(const struct fstab *f, const char *target)
{
	const struct fstab_entry *e = fstab_find_target(f, target);

	if (!e)
		fail_msg("no deferred entry on '%s'", target);
	return e;
}

/* ------------------------------------------------------------ selection */

static void test_select_default(void **state)
{
	struct diag_list dl = { 0 };
	struct fstab f = { 0 };

	assert_int_equal(fstab_load(&f, FX("selection.fstab"), NULL, false, &dl), 0);
	assert_string_equal(f.file, FX("selection.fstab"));
	assert_int_equal(f.n_total, 6);
	assert_int_equal(f.n_entries, 2);
	assert_int_equal(f.entries[0].line, 3);
	assert_string_equal(f.entries[0].source, "LABEL=data");
	assert_string_equal(f.entries[0].target, "/srv/data");
	assert_string_equal(f.entries[0].fstype, "btrfs");
	assert_string_equal(f.entries[0].options, "defaults,noauto,x-storaged");
	assert_string_equal(f.entries[0].mount_options, "defaults");
	assert_int_equal(f.entries[1].line, 4);
	assert_string_equal(f.entries[1].source, "server:/export");
	assert_string_equal(f.entries[1].mount_options, "defaults");
	assert_null(fstab_find_target(&f, "/srv/plain"));
	assert_null(fstab_find_target(&f, "/srv/mine"));
	assert_null(fstab_find_target(&f, "/"));
	/* x-storaged.degraded alone selects nothing, but it is worth a warning. */
	assert_int_equal(diag_count(&dl, DIAG_ERROR), 0);
	assert_int_equal(dl.n, 1);
	assert_int_equal(dl.v[0].level, DIAG_WARNING);
	assert_int_equal(dl.v[0].line, 5);
	assert_non_null(strstr(dl.v[0].msg, "'x-storaged.degraded' has no effect"));
	fstab_done(&f);
	diag_list_done(&dl);
}

static void test_select_custom(void **state)
{
	char *select[] = { "x-mine", NULL };
	struct diag_list dl = { 0 };
	struct fstab f = { 0 };

	assert_int_equal(fstab_load(&f, FX("selection.fstab"), select, false, &dl), 0);
	assert_int_equal(f.n_total, 6);
	assert_int_equal(f.n_entries, 1);
	assert_int_equal(f.entries[0].line, 6);
	assert_string_equal(f.entries[0].target, "/srv/mine");
	/* The custom select option is storaged's too: stripped. */
	assert_string_equal(f.entries[0].mount_options, "defaults");
	assert_int_equal(diag_count(&dl, DIAG_ERROR), 0);
	fstab_done(&f);
	diag_list_done(&dl);
}

/* _netdev is userspace-only: stripped even when it is not a select option. */
static void test_netdev_stripped_with_custom_select(void **state)
{
	char *select[] = { "x-mine", NULL };
	struct diag_list dl = { 0 };
	struct fstab f = { 0 };

	assert_int_equal(parse_str(&f, "srv:/e /e nfs x-mine,_netdev,vers=4.2,noauto,nofail 0 0\n",
				   select, &dl),
			 0);
	assert_int_equal(f.n_entries, 1);
	assert_string_equal(f.entries[0].mount_options, "vers=4.2");
	assert_true(f.entries[0].nofail);
	fstab_done(&f);
	diag_list_done(&dl);
}

static void test_select_empty_list(void **state)
{
	char *select[] = { NULL };
	struct diag_list dl = { 0 };
	struct fstab f = { 0 };

	assert_int_equal(parse_str(&f, "/dev/a /a ext4 x-storaged 0 0\n", select, &dl), 0);
	assert_int_equal(f.n_total, 1);
	assert_int_equal(f.n_entries, 0);
	fstab_done(&f);
	diag_list_done(&dl);
}

static void test_select_needs_exact_name(void **state)
{
	struct diag_list dl = { 0 };
	struct fstab f = { 0 };

	assert_int_equal(parse_str(&f,
				   "/dev/a /a ext4 x-storagedX,_netdev2,x-storaged.requires=/b 0 0\n"
				   "/dev/b /b ext4 noauto,_netdev 0 0\n",
				   NULL, &dl),
			 0);
	assert_int_equal(f.n_total, 2);
	assert_int_equal(f.n_entries, 1);
	assert_string_equal(f.entries[0].target, "/b");
	assert_null(f.entries[0].mount_options);
	fstab_done(&f);
	diag_list_done(&dl);
}

/* ------------------------------------------------------------ escapes, C07 */

static void test_escapes(void **state)
{
	struct diag_list dl = { 0 };
	struct fstab f = { 0 };
	const struct fstab_entry *e;

	assert_int_equal(fstab_load(&f, FX("escapes.fstab"), NULL, false, &dl), 0);
	assert_int_equal(dl.n, 0);
	assert_int_equal(f.n_entries, 4);

	e = must_find(&f, "/scratch/with space");
	assert_int_equal(e->line, 2);
	assert_string_equal(e->source, "LABEL=c07 vol");
	assert_true(e->mkdir);
	assert_string_equal(e->mount_options, "defaults,X-mount.mkdir");

	/* A quoted tag loses its quotes, as mount(8) reads it. */
	e = must_find(&f, "/scratch/quoted");
	assert_string_equal(e->source, "UUID=0a1b-2c3d");

	e = must_find(&f, "/scratch/bound\ttab");
	assert_string_equal(e->source, "/srv/a dir");
	assert_true(e->bind);
	assert_string_equal(e->mount_options, "bind");

	/* "\134" is a backslash: a directory literally named with\040space. */
	e = must_find(&f, "/scratch/with\\040space");
	assert_int_equal(e->line, 5);
	assert_null(fstab_find_target(&f, "/scratch/with\\134040space"));
	fstab_done(&f);
	diag_list_done(&dl);
}

static void test_c07_malformed_with_nofail(void **state)
{
	struct diag_list dl = { 0 };
	struct fstab f = { 0 };

	assert_int_equal(fstab_load(&f, FX("c07.fstab"), NULL, false, &dl), -EINVAL);
	assert_int_equal(dl.n, 1);
	assert_string_equal(dl.v[0].file, FX("c07.fstab"));
	assert_error(&dl, 0, 2, "malformed line: 7 fields");
	assert_non_null(strstr(dl.v[0].msg, "a space in a path must be written \\040"));
	/* Failure leaves @ret alone. */
	assert_null(f.entries);
	assert_null(f.file);
	fstab_done(&f);
	diag_list_done(&dl);
}

/* Lines libmount 2.38 itself rejects, or would accept and misread. */
static void test_malformed_lines(void **state)
{
	static const struct {
		const char *text;
		const char *needle;
	} cases[] = {
		/* libmount would ignore the 7th field */
		{ "/dev/a /a ext4 defaults 0 0 7\n", "malformed line: 7 fields" },
		/* libmount would read passno -1 and freq 276447231 */
		{ "/dev/a /a ext4 defaults 0 -1\n", "passno '-1' is not a number" },
		{ "/dev/a /a ext4 defaults 99999999999999 0\n", "freq '99999999999999' is not a number" },
		{ "/dev/a /a ext4 x-storaged 0 x\n", "passno 'x' is not a number" },
		/* a raw space without freq/passno: options land in freq */
		{ "/dev/null /x/broken line ext4 nofail,x-storaged\n",
		  "freq 'nofail,x-storaged' is not a number" },
		{ "/dev/a /a\n", "malformed line: 2 fields" },
		{ "/dev/a\n", "malformed line: 1 field," },
		/* "%u %u" makes libmount guess mountinfo */
		{ "1 2 ext4 defaults 0 0\n", "mount point '2' is not a path" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct diag_list dl = { 0 };
		struct fstab f = { 0 };

		assert_int_equal(parse_str(&f, cases[i].text, NULL, &dl), -EINVAL);
		assert_int_equal(dl.n, 1);
		assert_error(&dl, 0, 1, cases[i].needle);
		diag_list_done(&dl);
	}
}

static void test_nul_byte(void **state)
{
	static const char text[] = "/dev/a /a ext4 x-storaged 0 0\n/dev/b /b\0x ext4 x-storaged 0 0\n";
	struct diag_list dl = { 0 };
	struct fstab f = { 0 };

	assert_int_equal(fstab_parse_buf(&f, text, sizeof(text) - 1, "t", NULL, &dl), -EINVAL);
	assert_int_equal(dl.n, 1);
	assert_error(&dl, 0, 2, "NUL byte");
	diag_list_done(&dl);
}

/* libmount decodes "\NNN" to the low 8 bits of its value (util-linux
 * lib/mangle.c): "\000" and "\400" are a NUL that would cut the field. */
static void test_nul_escape(void **state)
{
	static const struct {
		const char *text;
		const char *needle;
	} bad[] = {
		{ "tmpfs /mnt/y\\000zzz tmpfs noauto,x-storaged 0 0\n",
		  "fs_file '/mnt/y\\000zzz' holds \\000, a NUL: a path cannot hold one" },
		{ "/dev/a\\000 /a ext4 x-storaged 0 0\n", "fs_spec '/dev/a\\000' holds \\000, a NUL" },
		{ "tmpfs /a tmp\\000fs x-storaged 0 0\n", "fs_vfstype 'tmp\\000fs' holds \\000, a NUL" },
		{ "tmpfs /a tmpfs x-storaged,mode=0\\400 0 0\n",
		  "fs_mntops 'x-storaged,mode=0\\400' holds \\400, a NUL" },
		{ "tmpfs /a/\\0000 tmpfs x-storaged 0 0\n", "fs_file '/a/\\0000' holds \\000" },
		/* a line storaged does not mount is refused as a malformed one is */
		{ "/dev/sda\\000 none swap sw 0 0\n", "fs_spec '/dev/sda\\000' holds \\000" },
	};
	struct diag_list dl = { 0 };
	struct fstab f = { 0 };

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
		assert_refused(bad[i].text, 1, bad[i].needle);
	/* "\134" is the backslash: "\134000" is a directory named "\000";
	 * "\0" without three digits is no escape. */
	assert_int_equal(parse_str(&f, "tmpfs /a\\134000 tmpfs x-storaged 0 0\ntmpfs /b\\0 tmpfs x-storaged 0 0\n",
				   NULL, &dl),
			 0);
	assert_int_equal(dl.n, 0);
	must_find(&f, "/a\\000");
	must_find(&f, "/b\\0");
	fstab_done(&f);
}

/* Tags are upper case to libmount and systemd: "uuid=X" is a path. */
static void test_tag_case(void **state)
{
	static const struct {
		const char *spec, *needle;
	} bad[] = {
		{ "uuid=1642d9cd-4a1e",
		  "'uuid=1642d9cd-4a1e' is not a tag: tags are upper case (UUID=1642d9cd-4a1e)" },
		{ "Label=data", "'Label=data' is not a tag: tags are upper case (LABEL=data)" },
		{ "partuuid=1-2", "(PARTUUID=1-2)" },
		{ "PartLabel=p", "(PARTLABEL=p)" },
		{ "id=wwn-0x5", "(ID=wwn-0x5)" },
		{ "uuid=", "(UUID=)" },
	};
	struct diag_list dl = { 0 };
	struct fstab f = { 0 };
	char text[128];

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		snprintf(text, sizeof(text), "%s /a btrfs noauto,x-storaged 0 0\n", bad[i].spec);
		assert_refused(text, 1, bad[i].needle);
	}
	/* Paths and server specs holding a tag's name are no tags, nor is a
	 * nodev type's source, a free name. */
	assert_int_equal(parse_str(&f,
				   "UUID=1642d9cd /a btrfs x-storaged 0 0\n"
				   "/srv/uuid=x /b none bind,x-storaged 0 0\n"
				   "server:/label=x /c nfs x-storaged 0 0\n"
				   "identity /d tmpfs x-storaged 0 0\n"
				   "label=scratch /e tmpfs x-storaged 0 0\n",
				   NULL, &dl),
			 0);
	assert_int_equal(dl.n, 0);
	assert_int_equal(f.n_entries, 5);
	fstab_done(&f);
}

/* An empty tag value names no device; libmount takes "UUID=" as a path. */
static void test_empty_tag(void **state)
{
	static const char *const specs[] = { "UUID=", "LABEL=",	    "PARTUUID=", "PARTLABEL=",
					     "ID=",   "LABEL=\"\"", "UUID=''" };
	char text[128], needle[64];

	for (size_t i = 0; i < ARRAY_SIZE(specs); i++) {
		snprintf(text, sizeof(text),
			 "/dev/ok /ok ext4 x-storaged 0 0\n%s /a btrfs x-storaged 0 0\n", specs[i]);
		snprintf(needle, sizeof(needle), "%.*s needs a value",
			 (int)(strchr(specs[i], '=') - specs[i] + 1), specs[i]);
		assert_refused(text, 2, needle);
	}
}

/* ------------------------------------------------------------ options */

static void test_option_stripping(void **state)
{
	struct diag_list dl = { 0 };
	struct fstab f = { 0 };
	const struct fstab_entry *e;

	assert_int_equal(fstab_load(&f, FX("options.fstab"), NULL, false, &dl), 0);
	/* x-systemd.automount: named, with what storaged does instead */
	assert_int_equal(dl.n, 1);
	assert_int_equal(dl.v[0].level, DIAG_WARNING);
	assert_non_null(strstr(dl.v[0].msg, "'x-systemd.automount'"));
	assert_int_equal(f.n_entries, 4);

	e = must_find(&f, "/srv/a");
	assert_string_equal(e->options,
			    "defaults,noauto,nofail,x-storaged,_netdev,compress=zstd:3,x-systemd.automount,X-mount.mkdir=0750,x-storaged.degraded");
	assert_string_equal(e->mount_options, "defaults,compress=zstd:3,X-mount.mkdir=0750");
	assert_true(e->nofail);
	assert_true(e->mkdir);
	assert_true(e->degraded_ok);
	assert_false(e->bind);
	assert_false(e->loop);
	assert_null(e->requires);

	e = must_find(&f, "/srv/b");
	assert_null(e->mount_options);
	assert_false(e->nofail);
	assert_false(e->degraded_ok);
	assert_false(e->mkdir);

	e = must_find(&f, "/srv/c");
	assert_string_equal(e->mount_options, "loop,ro");
	assert_true(e->loop);
	assert_false(e->bind);

	e = must_find(&f, "/srv/d");
	assert_string_equal(e->source, "/srv/a/sub");
	assert_string_equal(e->fstype, "none");
	assert_string_equal(e->mount_options, "rbind,user_xattr");
	assert_true(e->bind);
	fstab_done(&f);
	diag_list_done(&dl);
}

static void test_requires_in_order(void **state)
{
	struct diag_list dl = { 0 };
	struct fstab f = { 0 };
	const struct fstab_entry *e;

	assert_int_equal(fstab_load(&f, FX("options.fstab"), NULL, false, &dl), 0);
	e = must_find(&f, "/srv/c");
	assert_int_equal(e->n_requires, 5);
	assert_string_equal(e->requires[0].value, "/srv/a");
	assert_string_equal(e->requires[0].option, "x-storaged.requires");
	assert_string_equal(e->requires[1].value, "LABEL=foo");
	assert_string_equal(e->requires[1].option, "x-systemd.requires");
	assert_string_equal(e->requires[2].value, "network-online.target");
	assert_string_equal(e->requires[2].option, "x-systemd.after");
	assert_string_equal(e->requires[3].value, "UUID=1234");
	assert_string_equal(e->requires[3].option, "x-storaged.requires");
	assert_string_equal(e->requires[4].value, "/srv/b");
	assert_string_equal(e->requires[4].option, "x-systemd.requires-mounts-for");

	/* A quoted value loses its quotes. */
	e = must_find(&f, "/srv/d");
	assert_int_equal(e->n_requires, 1);
	assert_string_equal(e->requires[0].value, "/srv/a");
	fstab_done(&f);
	diag_list_done(&dl);
}

/* A mount given no time at all would be abandoned at once. */
static void test_zero_mount_timeout(void **state)
{
	static const char text[] = "tmpfs /srv/z tmpfs noauto,x-storaged,x-storaged.mount-timeout=0 0 0\n";
	struct diag_list dl = { 0 };
	struct fstab f = { 0 };

	assert_int_equal(fstab_parse_buf(&f, text, sizeof(text) - 1, "z.fstab", NULL, &dl), -EINVAL);
	assert_int_equal(dl.n, 1);
	assert_int_equal(dl.v[0].line, 1);
	assert_non_null(strstr(dl.v[0].msg, "x-storaged.mount-timeout=0"));
	diag_list_done(&dl);
	/* below the smallest unit: named as written, with that unit */
	assert_int_equal(parse_str(&f, "tmpfs /z tmpfs x-storaged,x-storaged.mount-timeout=0.1us 0 0\n",
				   NULL, &dl),
			 -EINVAL);
	assert_int_equal(dl.n, 1);
	assert_non_null(strstr(dl.v[0].msg, "x-storaged.mount-timeout=0.1us is below 1us"));
	fstab_done(&f);
	diag_list_done(&dl);
}

static void test_durations(void **state)
{
	struct diag_list dl = { 0 };
	struct fstab f = { 0 };
	const struct fstab_entry *e;

	assert_int_equal(fstab_load(&f, FX("durations.fstab"), NULL, false, &dl), 0);
	assert_int_equal(dl.n, 0);

	e = must_find(&f, "/srv/t1");
	assert_int_equal(e->device_timeout_usec, 120 * USEC_PER_SEC);
	assert_int_equal(e->mount_timeout_usec, 500 * USEC_PER_MSEC);
	/* systemd reads 0 as "no timeout"; a bare number is seconds. */
	e = must_find(&f, "/srv/t2");
	assert_true(e->device_timeout_usec == USEC_INFINITY);
	assert_int_equal(e->mount_timeout_usec, 90 * USEC_PER_SEC);
	/* storaged's own spelling wins whatever the order. */
	e = must_find(&f, "/srv/t3");
	assert_int_equal(e->device_timeout_usec, 30 * USEC_PER_SEC);
	assert_true(e->mount_timeout_usec == USEC_UNSET);
	e = must_find(&f, "/srv/t4");
	assert_true(e->device_timeout_usec == USEC_INFINITY);
	assert_int_equal(e->mount_timeout_usec, 1000);
	e = must_find(&f, "/srv/t5");
	assert_true(e->device_timeout_usec == USEC_UNSET);
	assert_true(e->mount_timeout_usec == USEC_UNSET);
	fstab_done(&f);
	diag_list_done(&dl);
}

static void test_degraded(void **state)
{
	struct diag_list dl = { 0 };
	struct fstab f = { 0 };

	assert_int_equal(parse_str(&f,
				   "/dev/a /a btrfs x-storaged,x-storaged.degraded 0 0\n"
				   "/dev/b /b btrfs x-storaged 0 0\n",
				   NULL, &dl),
			 0);
	assert_true(must_find(&f, "/a")->degraded_ok);
	assert_false(must_find(&f, "/b")->degraded_ok);
	assert_null(must_find(&f, "/a")->mount_options);
	fstab_done(&f);
	diag_list_done(&dl);
}

/* ------------------------------------------------------------ errors */

static void test_errors_one_pass(void **state)
{
	struct diag_list dl = { 0 };
	struct fstab f = { 0 };

	assert_int_equal(fstab_load(&f, FX("errors.fstab"), NULL, false, &dl), -EINVAL);
	/* line 9, a swap line with x-storaged, is another tool's: a
	 * warning, no error (C10) */
	assert_int_equal(dl.n, 11);
	assert_int_equal(diag_count(&dl, DIAG_ERROR), 9);
	assert_error(&dl, 0, 4, "unknown option 'x-storaged.foo'");
	assert_error(&dl, 1, 5, "x-storaged.device-timeout='soon' is not a duration");
	assert_error(&dl, 2, 6, "mount point 'srv/rel' is not an absolute path");
	assert_error(&dl, 3, 8, "mount point '/srv/x/../y' is not normalised");
	assert_int_equal(dl.v[4].level, DIAG_WARNING);
	assert_int_equal(dl.v[4].line, 9);
	/* x-systemd.wanted-by= is named, not an error */
	assert_int_equal(dl.v[5].level, DIAG_WARNING);
	assert_int_equal(dl.v[5].line, 10);
	assert_error(&dl, 6, 11, "option 'x-storaged.degraded' takes no value");
	assert_error(&dl, 7, 12, "X-mount.mkdir='rwx' is not an octal mode");
	assert_error(&dl, 8, 13, "x-storaged.requires= needs a value");
	assert_error(&dl, 9, 14, "x-storaged.requires='srv/a' is neither");
	/* Duplicates come last, naming both lines. */
	assert_error(&dl, 10, 7, "mount point '/srv/ok' is also used by line 3");
	for (size_t i = 0; i < dl.n; i++)
		assert_string_equal(dl.v[i].file, FX("errors.fstab"));
	assert_null(f.entries);
	diag_list_done(&dl);
}

/* An option with an empty name ("=", "=x"): mount(2) drops it unseen,
 * mount(8) and fsconfig(2) refuse it; refused here, with its line, so that
 * --dry-run and start agree. */
static void test_option_without_name(void **state)
{
	struct diag_list dl = { 0 };
	struct fstab f = { 0 };

	assert_int_equal(parse_str(&f,
				   "tmpfs /a tmpfs =,x-storaged 0 0\n"
				   "tmpfs /b tmpfs size=1M,=,x-storaged 0 0\n"
				   "tmpfs /c tmpfs x-storaged,=x 0 0\n"
				   "tmpfs /d tmpfs x-storaged,,size=1M 0 0\n",
				   NULL, &dl),
			 -EINVAL);
	assert_int_equal(dl.n, 3);
	assert_error(&dl, 0, 1, "option '=' has an empty name");
	assert_error(&dl, 1, 2, "option '=' has an empty name");
	assert_error(&dl, 2, 3, "option '=x' has an empty name");
	assert_null(f.entries);
	diag_list_done(&dl);
}

/* X-mount.mode= (libmount 2.39 and later chmod the mount point to it) with
 * the set-user-ID bit, which nothing in Linux reads on a directory: refused
 * at its line as an area's mode = is, with the mode without it; the sticky
 * and set-group-ID bits mean something there and are kept. */
static void test_mount_mode_bits(void **state)
{
	static const char *const good[] = { "0755", "1777", "2775", "3777", "0700", "0" };
	static const struct {
		const char *mode, *advice;
	} bad[] = { { "4755", "write X-mount.mode=0755" }, { "04755", "write X-mount.mode=0755" },
		    { "6777", "write X-mount.mode=2777" }, { "5777", "write X-mount.mode=1777" },
		    { "7777", "write X-mount.mode=3777" }, { "4000", "write X-mount.mode=0000" } };
	struct diag_list dl = { 0 };
	struct fstab f = { 0 };
	char text[128];

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		snprintf(text, sizeof(text), "tmpfs /t tmpfs x-storaged,X-mount.mode=%s 0 0\n", good[i]);
		assert_int_equal(parse_str(&f, text, NULL, &dl), 0);
		assert_int_equal(diag_count(&dl, DIAG_ERROR), 0);
		fstab_done(&f);
		diag_list_done(&dl);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(text, sizeof(text), "tmpfs /s tmpfs x-storaged 0 0\ntmpfs /t tmpfs x-storaged,X-mount.mode=%s 0 0\n",
			 bad[i].mode);
		assert_int_equal(parse_str(&f, text, NULL, &dl), -EINVAL);
		assert_int_equal(diag_count(&dl, DIAG_ERROR), 1);
		for (size_t k = 0; k < dl.n; k++)
			if (dl.v[k].level == DIAG_ERROR) {
				assert_int_equal(dl.v[k].line, 2);
				assert_string_equal(dl.v[k].file, "test.fstab");
				if (!strstr(dl.v[k].msg, "set-user-ID") || !strstr(dl.v[k].msg, bad[i].mode) ||
				    !strstr(dl.v[k].msg, bad[i].advice))
					fail_msg("X-mount.mode=%s: '%s' does not say what and '%s'", bad[i].mode,
						 dl.v[k].msg, bad[i].advice);
			}
		fstab_done(&f);
		diag_list_done(&dl);
	}
}

/* A swap line is swapon(8)'s: with x-storaged on it, a warning that
 * names the line says so (storaged leaves it alone and does not count it);
 * with _netdev alone (swap on iSCSI, as systemd reads it) a note only. */
static void test_swap_line(void **state)
{
	struct diag_list dl = { 0 };
	struct fstab f = { 0 };

	assert_int_equal(parse_str(&f,
				   "/swapfile none swap sw,x-storaged 0 0\n"
				   "/dev/sdz1 none swap sw,_netdev 0 0\n"
				   "tmpfs /t tmpfs x-storaged 0 0\n",
				   NULL, &dl),
			 0);
	assert_int_equal(f.n_entries, 1);
	assert_int_equal(f.n_skipped, 2);
	assert_int_equal(dl.n, 1);
	assert_int_equal(dl.v[0].level, DIAG_WARNING);
	assert_int_equal(dl.v[0].line, 1);
	assert_non_null(strstr(dl.v[0].msg, "swapon(8)"));
	assert_non_null(strstr(dl.v[0].msg, "remove x-storaged"));
	fstab_done(&f);
	diag_list_done(&dl);
}

static void test_error_lines_add_up(void **state)
{
	/* Every bad option of one line is reported, not only the first. */
	struct diag_list dl = { 0 };
	struct fstab f = { 0 };

	assert_int_equal(parse_str(&f, "# c\n/dev/a rel ext4 x-storaged,x-storaged.bogus,x-storaged.mount-timeout=-5s 0 0\n",
				   NULL, &dl),
			 -EINVAL);
	assert_int_equal(dl.n, 3);
	assert_error(&dl, 0, 2, "mount point 'rel' is not an absolute path");
	assert_error(&dl, 1, 2, "unknown option 'x-storaged.bogus'");
	assert_error(&dl, 2, 2, "x-storaged.mount-timeout='-5s' is not a duration");
	diag_list_done(&dl);
}

static void test_duplicates(void **state)
{
	struct diag_list dl = { 0 };
	struct fstab f = { 0 };

	assert_int_equal(parse_str(&f,
				   "/dev/c /srv/z ext4 x-storaged 0 0\n"
				   "/dev/a /srv/a ext4 x-storaged 0 0\n"
				   "/dev/b /srv/a ext4 _netdev 0 0\n"
				   "/dev/d /srv/z ext4 x-storaged 0 0\n"
				   "/dev/e /srv/a ext4 x-storaged 0 0\n"
				   "/dev/f /srv/b ext4 defaults 0 0\n"
				   "/dev/g /srv/b ext4 defaults 0 0\n",
				   NULL, &dl),
			 -EINVAL);
	/* Non-deferred entries may share a mount point: not storaged's business. */
	assert_int_equal(dl.n, 3);
	assert_error(&dl, 0, 3, "'/srv/a' is also used by line 2");
	assert_error(&dl, 1, 4, "'/srv/z' is also used by line 1");
	assert_error(&dl, 2, 5, "'/srv/a' is also used by line 2");
	diag_list_done(&dl);
}

/* An x-systemd.* option storaged cannot honour, or one systemd.mount(5)
 * does not list: stripped from the mount, and named with FILE:LINE. */
static void test_systemd_options_named(void **state)
{
	struct diag_list dl = { 0 };
	struct fstab f = { 0 };

	assert_int_equal(parse_str(&f, "/dev/a /a ext4 x-storaged,x-systemd.growfs,x-systemd.idle-timeout=5,x-systemd.bogus 0 0\n",
				   NULL, &dl),
			 0);
	assert_int_equal(dl.n, 3);
	for (size_t i = 0; i < dl.n; i++) {
		assert_int_equal(dl.v[i].level, DIAG_WARNING);
		assert_int_equal(dl.v[i].line, 1);
	}
	assert_non_null(strstr(dl.v[0].msg, "x-systemd.growfs"));
	assert_non_null(strstr(dl.v[1].msg, "x-systemd.idle-timeout"));
	assert_non_null(strstr(dl.v[2].msg, "'x-systemd.bogus' is not in systemd.mount(5)"));
	assert_null(f.entries[0].mount_options);
	fstab_done(&f);
	diag_list_done(&dl);
}

/* x-systemd.before= is kept as a requires item pointing the other way. */
static void test_before_kept(void **state)
{
	struct diag_list dl = { 0 };
	struct fstab f = { 0 };
	const struct fstab_entry *e;

	assert_int_equal(parse_str(&f, "tmpfs /a tmpfs x-storaged,x-systemd.before=srv-b.mount,x-systemd.after=/c 0 0\n",
				   NULL, &dl),
			 0);
	assert_int_equal(dl.n, 0);
	e = must_find(&f, "/a");
	assert_int_equal(e->n_requires, 2);
	assert_string_equal(e->requires[0].option, "x-systemd.before");
	assert_string_equal(e->requires[0].value, "srv-b.mount");
	assert_true(e->requires[0].before);
	assert_false(e->requires[1].before);
	assert_null(e->mount_options);
	fstab_done(&f);
	diag_list_done(&dl);
}

static void test_previous_errors_do_not_count(void **state)
{
	struct diag_list dl = { 0 };
	struct fstab f = { 0 };

	assert_int_equal(diag_error(&dl, "other.conf", 3, "unrelated"), 0);
	assert_int_equal(parse_str(&f, "/dev/a /a ext4 x-storaged 0 0\n", NULL, &dl), 0);
	assert_int_equal(f.n_entries, 1);
	assert_int_equal(dl.n, 1);
	fstab_done(&f);
	diag_list_done(&dl);
}

/* ------------------------------------------------------------ lines */

static void test_line_numbers(void **state)
{
	struct diag_list dl = { 0 };
	struct fstab f = { 0 };

	assert_int_equal(fstab_load(&f, FX("lines.fstab"), NULL, false, &dl), 0);
	assert_int_equal(dl.n, 0);
	assert_int_equal(f.n_total, 3);
	assert_int_equal(f.n_entries, 3);
	assert_int_equal(must_find(&f, "/m/one")->line, 5);
	assert_int_equal(must_find(&f, "/m/two")->line, 8);
	assert_int_equal(must_find(&f, "/m/three")->line, 10);
	assert_null(must_find(&f, "/m/three")->mount_options);
	fstab_done(&f);
	diag_list_done(&dl);
}

static void test_crlf_and_no_final_newline(void **state)
{
	struct diag_list dl = { 0 };
	struct fstab f = { 0 };

	assert_int_equal(parse_str(&f, "# dos\r\n\r\n/dev/a /a ext4 x-storaged,ro 0 0\r\n/dev/b /b ext4 x-storaged",
				   NULL, &dl),
			 0);
	assert_int_equal(dl.n, 0);
	assert_int_equal(f.n_entries, 2);
	assert_int_equal(f.entries[0].line, 3);
	assert_string_equal(f.entries[0].mount_options, "ro");
	assert_int_equal(f.entries[1].line, 4);
	assert_string_equal(f.entries[1].options, "x-storaged");
	fstab_done(&f);
	diag_list_done(&dl);
}

static void test_empty(void **state)
{
	struct diag_list dl = { 0 };
	struct fstab f = { 0 };

	assert_int_equal(fstab_parse_buf(&f, NULL, 0, "empty", NULL, &dl), 0);
	assert_int_equal(f.n_total, 0);
	assert_int_equal(f.n_entries, 0);
	assert_string_equal(f.file, "empty");
	assert_null(fstab_find_target(&f, "/"));
	fstab_done(&f);
	fstab_done(&f); /* zeroed: still fine */
	diag_list_done(&dl);
}

static void test_large_generated(void **state)
{
	const size_t n = 10000;
	size_t cap = n * 80, len = 0;
	char *text = malloc(cap);
	struct diag_list dl = { 0 };
	struct fstab f = { 0 };
	const struct fstab_entry *e;

	assert_non_null(text);
	for (size_t i = 0; i < n; i++)
		len += snprintf(text + len, cap - len, "/dev/disk%zu /mnt/m%zu ext4 %s 0 0\n", i, i,
				i % 2 ? "defaults" : "noauto,x-storaged,x-storaged.device-timeout=1min");
	assert_int_equal(fstab_parse_buf(&f, text, len, "big", NULL, &dl), 0);
	assert_int_equal(dl.n, 0);
	assert_int_equal(f.n_total, n);
	assert_int_equal(f.n_entries, n / 2);
	e = must_find(&f, "/mnt/m9998");
	assert_int_equal(e->line, 9999);
	assert_string_equal(e->source, "/dev/disk9998");
	assert_int_equal(e->device_timeout_usec, 60 * USEC_PER_SEC);
	assert_null(fstab_find_target(&f, "/mnt/m9999"));
	fstab_done(&f);
	diag_list_done(&dl);
	free(text);
}

/* ------------------------------------------------------------ loading */

static void test_load_missing(void **state)
{
	struct diag_list dl = { 0 };
	struct fstab f = { 0 };

	assert_int_equal(fstab_load(&f, FX("does-not-exist.fstab"), NULL, false, &dl), -ENOENT);
	assert_int_equal(dl.n, 1);
	assert_int_equal(dl.v[0].line, 0);
	assert_string_equal(dl.v[0].file, FX("does-not-exist.fstab"));
	assert_non_null(strstr(dl.v[0].msg, "No such file or directory"));
	diag_list_done(&dl);
}

static void test_load_too_big(void **state)
{
	char path[] = "/tmp/test_fstab.XXXXXX";
	struct diag_list dl = { 0 };
	struct fstab f = { 0 };
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (4 << 20) + 1), 0);
	close(fd);
	assert_int_equal(fstab_load(&f, path, NULL, false, &dl), -EFBIG);
	assert_int_equal(dl.n, 1);
	assert_non_null(strstr(dl.v[0].msg, "larger than 4M"));
	unlink(path);
	diag_list_done(&dl);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_select_default),
		cmocka_unit_test(test_select_custom),
		cmocka_unit_test(test_netdev_stripped_with_custom_select),
		cmocka_unit_test(test_select_empty_list),
		cmocka_unit_test(test_select_needs_exact_name),
		cmocka_unit_test(test_escapes),
		cmocka_unit_test(test_c07_malformed_with_nofail),
		cmocka_unit_test(test_malformed_lines),
		cmocka_unit_test(test_nul_byte),
		cmocka_unit_test(test_nul_escape),
		cmocka_unit_test(test_tag_case),
		cmocka_unit_test(test_empty_tag),
		cmocka_unit_test(test_option_stripping),
		cmocka_unit_test(test_requires_in_order),
		cmocka_unit_test(test_durations),
		cmocka_unit_test(test_zero_mount_timeout),
		cmocka_unit_test(test_degraded),
		cmocka_unit_test(test_errors_one_pass),
		cmocka_unit_test(test_error_lines_add_up),
		cmocka_unit_test(test_option_without_name),
		cmocka_unit_test(test_mount_mode_bits),
		cmocka_unit_test(test_swap_line),
		cmocka_unit_test(test_duplicates),
		cmocka_unit_test(test_systemd_options_named),
		cmocka_unit_test(test_before_kept),
		cmocka_unit_test(test_previous_errors_do_not_count),
		cmocka_unit_test(test_line_numbers),
		cmocka_unit_test(test_crlf_and_no_final_newline),
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_large_generated),
		cmocka_unit_test(test_load_missing),
		cmocka_unit_test(test_load_too_big),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
