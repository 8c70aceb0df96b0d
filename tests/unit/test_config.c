/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
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

/* "config.h" alone would find autoconf's config.h in the build directory */
#include "parse/config.h"
#include "shared/diag.h"
#include "shared/units.h"
#include "shared/util.h"
#include "world/load.h"

#define CONFIG_FIXTURES FIXTURES "/config/"
#define SEC USEC_PER_SEC
#define MiB (UINT64_C(1024) * 1024)

struct expect {
	unsigned line;
	const char *text; /* substring of the message */
};

/* Every expected diagnostic is there, with @file and its line, and no other. */
static void assert_diags(const struct diag_list *dl, const char *file, const struct expect *e, size_t n)
{
	bool *used = calloc(dl->n + 1, sizeof(bool));

	assert_non_null(used);
	for (size_t i = 0; i < n; i++) {
		size_t j;

		for (j = 0; j < dl->n; j++)
			if (!used[j] && dl->v[j].line == e[i].line && dl->v[j].file &&
			    strcmp(dl->v[j].file, file) == 0 && strstr(dl->v[j].msg, e[i].text))
				break;
		if (j == dl->n) {
			diag_print(dl, stderr);
			fail_msg("missing %s:%u: ...%s...", file, e[i].line, e[i].text);
		}
		assert_int_equal(dl->v[j].level, DIAG_ERROR);
		used[j] = true;
	}
	if (dl->n != n) {
		diag_print(dl, stderr);
		fail_msg("%zu diagnostics, %zu expected", dl->n, n);
	}
	free(used);
}

/* Parses a fixture through config_load() without the owner check. */
static int load_fixture(struct config *c, const char *name, struct diag_list *dl)
{
	char path[4096];

	snprintf(path, sizeof(path), CONFIG_FIXTURES "%s", name);
	assert_int_equal(config_init(c), 0);
	return config_load(c, path, false, dl);
}

static int parse_str(struct config *c, const char *text, struct diag_list *dl)
{
	assert_int_equal(config_init(c), 0);
	return config_parse_buf(c, text, strlen(text), "t.conf", dl);
}

static void test_defaults(void **state)
{
	struct config c;

	assert_int_equal(config_init(&c), 0);
	assert_null(c.file);
	assert_string_equal(c.fstab, "/etc/fstab");
	assert_int_equal(strv_length(c.select), 2);
	assert_string_equal(c.select[0], "x-storaged");
	assert_string_equal(c.select[1], "_netdev");
	assert_int_equal(c.device_timeout_usec, 90 * SEC);
	assert_int_equal(c.mount_timeout_usec, 90 * SEC);
	assert_int_equal(c.degraded, DEGRADED_NO);
	assert_int_equal(c.jobs, 4);
	assert_false(c.hotplug);
	assert_int_equal(c.n_areas, 0);
	config_done(&c);
	config_done(&c); /* zeroed: safe again */
}

static void test_good(void **state)
{
	struct diag_list dl = { 0 };
	const struct area_config *a;
	struct config c;

	assert_int_equal(load_fixture(&c, "good.conf", &dl), 0);
	assert_int_equal(dl.n, 0);
	assert_string_equal(c.file, CONFIG_FIXTURES "good.conf");
	assert_string_equal(c.fstab, "/etc/fstab.storaged");
	assert_int_equal(strv_length(c.select), 3);
	assert_string_equal(c.select[0], "x-storaged");
	assert_string_equal(c.select[1], "_netdev");
	assert_string_equal(c.select[2], "comment=storaged");
	assert_int_equal(c.device_timeout_usec, 90 * SEC);
	assert_int_equal(c.degraded, DEGRADED_AFTER_TIMEOUT);
	assert_int_equal(c.mount_timeout_usec, 120 * SEC);
	assert_int_equal(c.jobs, 8);
	assert_true(c.hotplug);
	assert_int_equal(c.n_areas, 3);

	a = &c.areas[0];
	assert_string_equal(a->name, "rpmbuild");
	assert_string_equal(a->file, CONFIG_FIXTURES "good.conf");
	assert_int_equal(a->line, 11); /* its header, which inih does not report */
	assert_string_equal(a->path, "/root/rpmbuild");
	assert_int_equal(a->backend, AREA_TMPFS);
	assert_int_equal(a->size.kind, AREA_SIZE_BYTES);
	assert_int_equal(a->size.value, 12800 * MiB);
	assert_false(a->inodes_auto);
	assert_int_equal(a->inodes, 300 * 1024);
	assert_true(a->headroom == 1.5);
	assert_true(a->seed);
	assert_false(a->persist);
	assert_false(a->force);
	assert_string_equal(a->fs, "ext4");
	assert_true(a->mode_set);
	assert_int_equal(a->mode, 0755);
	assert_true(a->uid_set);
	assert_int_equal(a->uid, 0);
	assert_true(a->gid_set);
	assert_int_equal(a->gid, 0);

	a = &c.areas[1];
	assert_string_equal(a->name, "scratch.tmp-1");
	assert_int_equal(a->line, 25);
	assert_string_equal(a->path, "/var/tmp/scratch#1");
	assert_int_equal(a->backend, AREA_ZRAM);
	assert_int_equal(a->size.kind, AREA_SIZE_PERCENT);
	assert_int_equal(a->size.value, 25);
	assert_true(a->inodes_auto);
	assert_string_equal(a->fs, "xfs");
	assert_int_equal(a->mode, 01777);
	assert_int_equal(a->uid, 1000);
	assert_int_equal(a->gid, 100);
	assert_true(a->persist);
	assert_true(a->force);
	assert_true(a->seed);
	assert_true(a->headroom == 3.0);

	a = &c.areas[2];
	assert_string_equal(a->name, "brd");
	assert_string_equal(a->path, "/srv/brd;x");
	assert_int_equal(a->backend, AREA_BRD);
	assert_int_equal(a->size.value, 1536 * MiB);
	assert_string_equal(a->fs, "btrfs");
	/* defaults of an area */
	assert_true(a->inodes_auto);
	assert_true(a->headroom == 2.0);
	assert_true(a->seed);
	assert_false(a->persist);
	assert_false(a->mode_set);
	assert_false(a->uid_set);
	assert_false(a->gid_set);

	config_done(&c);
}

/* DESIGN.md's example, inline comments and all. */
static void test_design_example(void **state)
{
	struct diag_list dl = { 0 };
	struct config c;

	assert_int_equal(load_fixture(&c, "design.conf", &dl), 0);
	assert_int_equal(dl.n, 0);
	assert_int_equal(strv_length(c.select), 2);
	assert_string_equal(c.select[1], "_netdev");
	assert_int_equal(c.device_timeout_usec, 90 * SEC);
	assert_int_equal(c.degraded, DEGRADED_NO);
	assert_int_equal(c.jobs, 4);
	assert_false(c.hotplug);
	assert_int_equal(c.n_areas, 1);
	assert_string_equal(c.areas[0].path, "/root/rpmbuild");
	assert_int_equal(c.areas[0].size.value, 12800 * MiB);
	assert_true(c.areas[0].inodes_auto);
	assert_true(c.areas[0].headroom == 2.0);
	assert_string_equal(c.areas[0].fs, "ext4");
	assert_int_equal(c.areas[0].mode, 0755);
	config_done(&c);
}

/*
 * A section's errors carry the line of its header (the reader counts the
 * headers: inih reports none), the [storaged] at line 8 repeats the one at
 * 3 (inih names both sections alike), the sections without keys (26, 29,
 * 30; inih calls no handler for them) are checked as the others, and of
 * the malformed lines (7, 20) only the first is reported; line 21 then
 * still belongs to [mystery].
 */
static void test_bad_structure(void **state)
{
	static const struct expect e[] = {
		{ 2, "'jobs' is outside of any section" },
		{ 5, "duplicate key 'jobs' in [storaged]; first set at line 4" },
		{ 6, "unknown key 'colour' in [storaged] (accepted: fstab, select," },
		{ 7, "not a section, key = value or comment" },
		{ 8, "duplicate section [storaged]; first at line 3" },
		{ 12, "duplicate section [area a]; first at line 10" },
		{ 14, "area 'b': path '/srv/build/sub' lies inside the path of area 'a'" },
		{ 16, "[area nopath] has no path" },
		{ 18, "unknown section '[mystery]'" },
		{ 22, "area 'd': path '/srv/build' is also the path of area 'a'" },
		{ 22, "area 'd': path '/srv/build' contains the path of area 'b'" },
		{ 24, "'bad/name' is not an area name" },
		{ 25, "'' is not a key name" },
		{ 26, "section [area] needs a name: [area NAME]" },
		{ 27, "area 'e': path '/srv' contains the path of area 'a'" },
		{ 27, "area 'e': path '/srv' contains the path of area 'b'" },
		{ 27, "area 'e': path '/srv' contains the path of area 'd'" },
		{ 29, "[area empty] has no path" },
		{ 30, "unknown section '[nothing]'" },
	};
	struct diag_list dl = { 0 };
	struct config c;

	assert_int_equal(load_fixture(&c, "bad-structure.conf", &dl), -EINVAL);
	assert_diags(&dl, CONFIG_FIXTURES "bad-structure.conf", e, ARRAY_SIZE(e));
	/* in line order, although the overlap checks run last */
	for (size_t i = 1; i < dl.n; i++)
		assert_true(dl.v[i - 1].line <= dl.v[i].line);
	/* the first values still apply; skipped sections changed nothing */
	assert_int_equal(c.jobs, 2);
	diag_list_done(&dl);
	config_done(&c);
}

static void test_bad_values(void **state)
{
	static const struct expect e[] = {
		{ 2, "fstab: 'etc/fstab' is not an absolute file name" },
		{ 3, "select: 'x-storaged,_netdev' is not a list of fstab options" },
		{ 4, "device-timeout: 'soon' is not a duration (e.g. 90s, 2min, infinity)" },
		{ 5, "degraded: 'maybe' is not 'no', 'after-timeout' or 'read-only'" },
		{ 6, "mount-timeout: '-5s' is not a duration" },
		{ 7, "jobs: '0' is out of range; expected a number of parallel jobs, 1..64" },
		{ 8, "hotplug: 'perhaps' is not a boolean" },
		{ 11, "path: '/srv/../v' is not an absolute directory other than /, without '..'" },
		{ 12, "backend: 'ramfs' is not tmpfs, zram or brd" },
		{ 13, "size: '99999999999999999999G' is out of range" },
		{ 14, "inodes: '-300' is not an inode count" },
		{ 15, "headroom: '0' is not a factor" },
		{ 16, "seed: empty value; expected a boolean" },
		{ 17, "persist: 'nope' is not a boolean" },
		{ 18, "force: '2' is not a boolean" },
		{ 19, "fs: 'Ext4!' is not a writable filesystem type" },
		{ 20, "mode: '0999' is not an octal mode" },
		{ 21, "owner: 'no-such-user-storaged' is not a user name known to this system" },
		{ 22, "group: 'no-such-group-storaged' is not a group name known to this system" },
		{ 24, "path: 'relative/dir' is not an absolute" },
		{ 25, "size: '150%' is out of range" },
		{ 26, "inodes: '99999999999999999999' is out of range" },
		{ 27, "headroom: '1001' is out of range" },
		{ 28, "mode: '77777' is out of range" },
		{ 29, "owner: '4294967295' is out of range" },
		{ 30, "group: '-1' is not" },
		{ 31, "fs: 'squashfs' is not a writable filesystem type" },
		{ 32, "duplicate section [storaged]; first at line 1" },
	};
	struct diag_list dl = { 0 };
	struct config c;

	assert_int_equal(load_fixture(&c, "bad-values.conf", &dl), -EINVAL);
	assert_diags(&dl, CONFIG_FIXTURES "bad-values.conf", e, ARRAY_SIZE(e));
	/* failed values leave the defaults alone */
	assert_string_equal(c.fstab, "/etc/fstab");
	assert_int_equal(strv_length(c.select), 2);
	assert_int_equal(c.device_timeout_usec, 90 * SEC);
	assert_int_equal(c.jobs, 4);
	assert_int_equal(c.n_areas, 2);
	assert_null(c.areas[0].path);
	assert_int_equal(c.areas[0].size.kind, AREA_SIZE_AUTO);
	assert_false(c.areas[0].mode_set);
	assert_false(c.areas[0].uid_set);
	diag_list_done(&dl);
	config_done(&c);
}

static void test_hostile(void **state)
{
	static const struct expect e[] = {
		{ 2, "NUL byte at column 9" },
		{ 3, "line longer than 198 bytes (inih's limit); shorten the value or use a drop-in" },
		{ 4, "device-timeout: '99999999999999999999s' is out of range" },
		{ 5, "mount-timeout: empty value; expected a duration" },
		{ 6, "not a section, key = value or comment" },
		/* inih stays in [storaged] after the malformed header */
		{ 7, "unknown key 'path' in [storaged]" },
		{ 10, "size: '99999999999999999999G' is out of range" },
		{ 11, "inodes: '-5' is not" },
		{ 12, "control character 0x01 at column 7" },
		{ 13, "headroom: empty value" },
		{ 14, "duplicate key 'size' in [area h]; first set at line 10" },
		{ 15, "NUL byte at column 1" },
		{ 16, "unknown key 'jobs' in [area h] (accepted: path, backend, size," },
	};
	struct diag_list dl = { 0 };
	struct config c;

	assert_int_equal(load_fixture(&c, "hostile.conf", &dl), -EINVAL);
	assert_diags(&dl, CONFIG_FIXTURES "hostile.conf", e, ARRAY_SIZE(e));
	assert_int_equal(c.jobs, 4);
	assert_int_equal(c.n_areas, 1);
	assert_string_equal(c.areas[0].name, "h");
	assert_string_equal(c.areas[0].path, "/srv/h");
	diag_list_done(&dl);
	config_done(&c);
}

static void test_crlf(void **state)
{
	struct diag_list dl = { 0 };
	struct config c;

	assert_int_equal(load_fixture(&c, "crlf.conf", &dl), 0);
	assert_int_equal(dl.n, 0);
	assert_int_equal(c.jobs, 7);
	assert_int_equal(c.device_timeout_usec, 5 * SEC);
	assert_int_equal(c.n_areas, 1);
	assert_int_equal(c.areas[0].line, 6);
	assert_string_equal(c.areas[0].path, "/srv/crlf");
	assert_int_equal(c.areas[0].size.value, 64 * MiB);
	assert_int_equal(c.areas[0].inodes, 2000);
	config_done(&c);
}

/* The distribution's inih reads lines of up to 198 bytes (INI_MAX_LINE 200,
 * with the newline and the NUL); a longer one is an error, never cut. */
static void test_long_lines(void **state)
{
	struct diag_list dl = { 0 };
	struct config c;
	char *text, *path;
	size_t n;

	/* "path = " (7) + 191 bytes: exactly 198 */
	path = malloc(192);
	assert_non_null(path);
	path[0] = '/';
	memset(path + 1, 'p', 190);
	path[191] = '\0';
	assert_true(asprintf(&text, "[area long]\npath = %s\n[area longer]\npath = %sq\nsize = 1G\n",
			     path, path) > 0);
	assert_int_equal(parse_str(&c, text, &dl), -EINVAL);
	/* the line refused was the path: no second error that the section
	 * has none */
	assert_int_equal(dl.n, 1);
	assert_int_equal(dl.v[0].line, 4);
	assert_string_equal(dl.v[0].msg,
			    "line longer than 198 bytes (inih's limit); shorten the value or use a drop-in");
	assert_int_equal(c.n_areas, 2);
	n = strlen(c.areas[0].path);
	assert_int_equal(n, 191);
	assert_string_equal(c.areas[0].path, path);
	free(text);
	free(path);
	diag_list_done(&dl);
	config_done(&c);
}

static void test_inline_comments(void **state)
{
	struct diag_list dl = { 0 };
	struct config c;

	assert_int_equal(parse_str(&c,
				   "\xef\xbb\xbf[storaged] ; comment\n"
				   "select = x-a comment=b  ; comment\n"
				   "fstab = /etc/fs;tab\t; comment\n"
				   "  ; indented comment\n"
				   "\t# another\n"
				   "  jobs = 3\n"
				   "    hotplug = on",
				   &dl),
			 0);
	assert_int_equal(dl.n, 0);
	assert_int_equal(strv_length(c.select), 2);
	assert_string_equal(c.select[0], "x-a");
	assert_string_equal(c.select[1], "comment=b");
	assert_string_equal(c.fstab, "/etc/fs;tab");
	assert_int_equal(c.jobs, 3); /* indented: no continuation of the previous value */
	assert_true(c.hotplug);
	config_done(&c);

	/* '#' is a comment only at the start of a line (inih): after a value it
	 * is part of it, and refused even where the value could hold it */
	assert_int_equal(parse_str(&c, "[storaged]\nfstab = /etc/fstab # comment\n", &dl), -EINVAL);
	assert_int_equal(dl.n, 1);
	assert_int_equal(dl.v[0].line, 2);
	assert_string_equal(dl.v[0].msg,
			    "fstab: '/etc/fstab # comment' is not an absolute file name (e.g. /etc/fstab) ('#' after a value is not a comment; use ';')");
	diag_list_done(&dl);
	config_done(&c);
}

/* An area's path is normalised as an fstab mount point is: a trailing
 * '/', '//' and '/./' are the same directory. */
static void test_area_path_normalised(void **state)
{
	struct diag_list dl = { 0 };
	struct config c;

	(void)state;
	assert_int_equal(parse_str(&c, "[area a]\npath = /x/a1/\n[area b]\npath = //x//b/./c/.\n", &dl), 0);
	assert_int_equal(dl.n, 0);
	assert_int_equal(c.n_areas, 2);
	assert_string_equal(c.areas[0].path, "/x/a1");
	assert_string_equal(c.areas[1].path, "/x/b/c");
	config_done(&c);
	/* the overlap check sees the normalised paths */
	assert_int_equal(parse_str(&c, "[area a]\npath = /x/a1/\n[area b]\npath = /x/a1//b\n", &dl),
			 -EINVAL);
	assert_int_equal(dl.n, 1);
	diag_list_done(&dl);
	config_done(&c);
}

/* inih keeps 49 bytes of a section name: "area " + 43 is the longest area. */
static void test_area_name_limit(void **state)
{
	static const char name43[] = "abcdefghijklmnopqrstuvwxyz0123456789.-_ABCD";
	struct diag_list dl = { 0 };
	struct config c;
	char *text;

	assert_int_equal(strlen(name43), 43);
	assert_true(asprintf(&text, "[area %s]\npath = /a\n", name43) > 0);
	assert_int_equal(parse_str(&c, text, &dl), 0);
	assert_int_equal(c.n_areas, 1);
	assert_string_equal(c.areas[0].name, name43);
	config_done(&c);
	free(text);
	/* "[ area NAME ]": the blanks count, inih keeps them */
	assert_true(asprintf(&text, "[ area %s]\npath = /a\n", name43) > 0);
	assert_int_equal(parse_str(&c, text, &dl), -EINVAL);
	assert_int_equal(dl.n, 1);
	assert_string_equal(dl.v[0].msg,
			    "section [ area abcdefghijklmnopqrstuvwxyz0123456789.-_ABCD] too long: with its blanks it takes at most 48 bytes; write [area abcdefghijklmnopqrstuvwxyz0123456789.-_ABCD] with one blank");
	config_done(&c);
	diag_list_done(&dl);
	free(text);
	/* one byte more: the limit said is the name's */
	assert_true(asprintf(&text, "[area %sE]\npath = /a\n", name43) > 0);
	assert_int_equal(parse_str(&c, text, &dl), -EINVAL);
	assert_int_equal(dl.n, 1);
	assert_string_equal(dl.v[0].msg,
			    "area name too long (at most 43 bytes): shorten the name of [area abcdefghijklmnopqrstuvwxyz0123456789.-_ABCD...]");
	config_done(&c);
	diag_list_done(&dl);
	free(text);
}

/* a name the command line would read as options (storaged sync -x) */
static void test_area_name_dash(void **state)
{
	struct diag_list dl = { 0 };
	struct config c;

	(void)state;
	assert_int_equal(parse_str(&c, "[area ok]\npath = /o\n[area -x]\npath = /a\n[area --help]\npath = /b\n", &dl),
			 -EINVAL);
	assert_int_equal(dl.n, 2);
	assert_int_equal(dl.v[0].line, 3);
	assert_string_equal(dl.v[0].msg,
			    "area name '-x' starts with '-', which `storaged sync -x` would read as an option; rename the area to start with a letter, digit, '_' or '.'");
	assert_int_equal(dl.v[1].line, 5);
	assert_int_equal(c.n_areas, 1);
	config_done(&c);
	diag_list_done(&dl);
	/* inside a name, '-' stays a name's */
	assert_int_equal(parse_str(&c, "[area a-x]\npath = /o\n[area _-]\npath = /p\n", &dl), 0);
	assert_int_equal(c.n_areas, 2);
	config_done(&c);
}

static void test_not_terminated(void **state)
{
	static const char text[] = "[storaged]\njobs = 12";
	struct diag_list dl = { 0 };
	struct config c;

	assert_int_equal(config_init(&c), 0);
	/* @len ends before the "2": the buffer is read only up to @len */
	assert_int_equal(config_parse_buf(&c, text, sizeof(text) - 2, "t.conf", &dl), 0);
	assert_int_equal(c.jobs, 1);
	assert_int_equal(config_parse_buf(&c, "", 0, "empty.conf", &dl), 0);
	assert_int_equal(dl.n, 0);
	config_done(&c);
}

static void test_small_cases(void **state)
{
	static const struct {
		const char *text;
		unsigned line;
		const char *msg;
	} cases[] = {
		{ "[storaged]\njobs = 65\n", 2,
		  "jobs: '65' is out of range; expected a number of parallel jobs, 1..64" },
		{ "[storaged]\njobs = 4x\n", 2, "jobs: '4x' is not a number of parallel jobs, 1..64" },
		{ "[storaged]\nselect =\n", 2,
		  "select: empty value; expected a list of fstab options separated by spaces (e.g. x-storaged _netdev)" },
		{ "[storaged]\ndevice-timeout = soon\n", 2,
		  "device-timeout: 'soon' is not a duration (e.g. 90s, 2min, infinity)" },
		/* a section's errors name its header (the reader counts them) */
		{ "[storaged]\njobs = 1\n[area x]\npath = /a\n[ storaged ]\nhotplug = 1\n", 5,
		  "duplicate section [storaged]; first at line 1" },
		/* a header repeating the section just before it (inih names
		 * both the same: the reader counts headers) */
		{ "[storaged]\njobs = 1\n[storaged]\nhotplug = 1\n", 3,
		  "duplicate section [storaged]; first at line 1" },
		{ "[area x]\npath = /a\n[area x]\nsize = 1G\n", 3, "duplicate section [area x]; first at line 1" },
		{ "[btrfs LABEL=a]\ndegraded = no\n  [btrfs LABEL=a]\ndevice-timeout = 3s\n", 3,
		  "duplicate section [btrfs LABEL=a]; first at line 1" },
		{ "[storaged]\nfoo\n", 2, "not a section, key = value or comment" },
		/* inih's rules: ':' separates too, text after ']' is ignored */
		{ "[storaged]\nfoo: bar\n", 2,
		  "unknown key 'foo' in [storaged] (accepted: fstab, select, device-timeout, settle-time, settle-limit, degraded, mount-timeout, jobs, hotplug, stale-member, metrics-textfile, sync-interval, memory-reserve)" },
		{ "[storaged\n", 1, "not a section, key = value or comment" },
		{ "[storaged] x\njobs = 0\n", 2,
		  "jobs: '0' is out of range; expected a number of parallel jobs, 1..64" },
		{ "[storaged]\nhotplug = yes # on\n", 2,
		  "hotplug: 'yes # on' is not a boolean (yes/no, true/false, on/off, 1/0) ('#' after a value is not a comment; use ';')" },
		{ "[area aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa]\npath = /a\n", 1,
		  "area name too long (at most 43 bytes): shorten the name of [area aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa...]" },
		{ "[area 01234567890123456789012345678901234567890123456789]\npath = /a\n", 1,
		  "area name too long (at most 43 bytes): shorten the name of [area 0123456789012345678901234567890123456789012...]" },
		{ "[area x]\npath = /a\nsize = 0\n", 3,
		  "size: '0' is out of range; expected a size (e.g. 512M, 12800M, 1.5G), a share of RAM (1%..100%) or auto" },
		{ "[area x]\npath = /a\ninodes = 0\n", 3,
		  "inodes: '0' is out of range; expected an inode count (e.g. 300000, 300k) or auto" },
		{ "[area x]\npath = /a\nsize = -1G\n", 3,
		  "size: '-1G' is not a size (e.g. 512M, 12800M, 1.5G), a share of RAM (1%..100%) or auto" },
		{ "[area x]\npath = /a\nowner = -root\n", 3,
		  "owner: '-root' is not a user name known to this system or a numeric uid" },
		{ "[area x]\npath = /a\nfs = averyveryverylongfs\n", 3,
		  "fs: 'averyveryverylongfs' is not a writable filesystem type in lower case (e.g. ext4, ext2, xfs, btrfs; not erofs, squashfs, cramfs, romfs, iso9660)" },
		{ "[area x]\npath = /a/../b\n", 2,
		  "path: '/a/../b' is not an absolute directory other than /, without '..'" },
		{ "[area x]\npath = /\n", 2,
		  "path: '/' is not an absolute directory other than /, without '..'" },
		{ "[area x]\npath = //./\n", 2,
		  "path: '//./' is not an absolute directory other than /, without '..'" },
		{ "[area x]\nsize = 1G\n", 1, "[area x] has no path; add 'path = /persistent/dir'" },
		{ "[area x]\npath = /a\npersist = yes\nseed = no\n", 1,
		  "[area x] has persist = yes and seed = no: its first sync back would delete everything '/a' holds; set seed = yes or seed = overlay (or persist = no)" },
		{ "[area x]\npath = /a\n[area y]\npath = /a/b\n", 3,
		  "area 'y': path '/a/b' lies inside the path of area 'x' (line 1); areas must not overlap" },
		{ "[AREA x]\nk = v\n", 1, "unknown section '[AREA x]'; expected [storaged], [area NAME] or [btrfs FSID]" },
		{ "[areax]\nk = v\n", 1, "unknown section '[areax]'; expected [storaged], [area NAME] or [btrfs FSID]" },
		{ "[storaged]\n\x7f = 1\n", 2, "control character 0x7f at column 1" },
		{ "[storaged]\nj\x01obs = 1\n", 2, "control character 0x01 at column 2" },
		/* issue 14: only a .prom file, which the textfile collector reads */
		{ "[storaged]\nmetrics-textfile = /var/lib/node/storaged.txt\n", 2,
		  "metrics-textfile: '/var/lib/node/storaged.txt' is not an absolute file name ending in .prom (e.g. /var/lib/prometheus/node-exporter/storaged.prom)" },
		{ "[storaged]\nmetrics-textfile = node/storaged.prom\n", 2,
		  "metrics-textfile: 'node/storaged.prom' is not an absolute file name ending in .prom (e.g. /var/lib/prometheus/node-exporter/storaged.prom)" },
		{ "[storaged]\nmetrics-textfile = /var/lib/node/.prom\n", 2,
		  "metrics-textfile: '/var/lib/node/.prom' is not an absolute file name ending in .prom (e.g. /var/lib/prometheus/node-exporter/storaged.prom)" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct diag_list dl = { 0 };
		struct config c;

		assert_int_equal(parse_str(&c, cases[i].text, &dl), -EINVAL);
		if (dl.n != 1 || dl.v[0].line != cases[i].line || strcmp(dl.v[0].msg, cases[i].msg) != 0) {
			diag_print(&dl, stderr);
			fail_msg("case %zu: want t.conf:%u: %s", i, cases[i].line, cases[i].msg);
		}
		assert_string_equal(dl.v[0].file, "t.conf");
		diag_list_done(&dl);
		config_done(&c);
	}
}

/* A file per test under a private directory, removed afterwards. */
struct tmpdir {
	char path[64];
};

static void tmpdir_make(struct tmpdir *t)
{
	strcpy(t->path, "/tmp/test_config.XXXXXX");
	assert_non_null(mkdtemp(t->path));
}

static char *write_file(const char *dir, const char *name, const char *text, mode_t mode)
{
	char *path;
	FILE *f;

	assert_true(asprintf(&path, "%s/%s", dir, name) > 0);
	f = fopen(path, "we");
	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(chmod(path, mode), 0);
	return path;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path);
}

static void tmpdir_remove(struct tmpdir *t)
{
	assert_int_equal(nftw(t->path, remove_entry, 16, FTW_DEPTH | FTW_PHYS), 0);
}

static void test_load_missing(void **state)
{
	struct diag_list dl = { 0 };
	struct config c;

	assert_int_equal(config_init(&c), 0);
	assert_int_equal(config_load(&c, "/nonexistent/storaged.conf", true, &dl), -ENOENT);
	assert_int_equal(dl.n, 0);
	assert_null(c.file);
	config_done(&c);
}

static void test_load_dropins(void **state)
{
	struct diag_list dl = { 0 };
	struct tmpdir t;
	struct config c;
	char *main_conf, *d, *f[5];

	tmpdir_make(&t);
	main_conf = write_file(t.path, "s.conf", "[storaged]\njobs = 2\n[area a]\npath = /srv/a\n", 0644);
	assert_true(asprintf(&d, "%s.d", main_conf) > 0);
	assert_int_equal(mkdir(d, 0755), 0);
	f[0] = write_file(d, "20-b.conf", "[storaged]\njobs = 20\nhotplug = yes\n", 0644);
	f[1] = write_file(d, "10-a.conf", "[storaged]\njobs = 10\ndegraded = after-timeout\n", 0644);
	f[2] = write_file(d, "30-c.conf.disabled", "[storaged]\njobs = 30\n", 0644);
	f[3] = write_file(d, ".40-hidden.conf", "[storaged]\njobs = 40\n", 0644);
	f[4] = write_file(d, "50-area.conf", "[area a]\npath = /x\n[area b]\npath = /srv/a/b\n", 0644);

	assert_int_equal(config_init(&c), 0);
	assert_int_equal(config_load(&c, main_conf, false, &dl), -EINVAL);
	assert_string_equal(c.file, main_conf);
	assert_int_equal(c.jobs, 20); /* 10-a then 20-b; the others are not read */
	assert_true(c.hotplug);
	assert_int_equal(c.degraded, DEGRADED_AFTER_TIMEOUT);
	assert_int_equal(dl.n, 2);
	assert_string_equal(dl.v[0].file, f[4]);
	assert_int_equal(dl.v[0].line, 1); /* sections: the line of their header */
	{
		char *want;

		assert_true(asprintf(&want, "area 'a' is already defined at %s:3", main_conf) > 0);
		assert_string_equal(dl.v[0].msg, want);
		free(want);
		assert_true(asprintf(&want, "area 'b': path '/srv/a/b' lies inside the path of area 'a' (%s:3); areas must not overlap",
				     main_conf) > 0);
		assert_int_equal(dl.v[1].line, 3);
		assert_string_equal(dl.v[1].msg, want);
		free(want);
	}
	assert_int_equal(c.n_areas, 2);
	assert_string_equal(c.areas[0].path, "/srv/a");
	assert_string_equal(c.areas[1].file, f[4]);

	diag_list_done(&dl);
	config_done(&c);
	tmpdir_remove(&t);
	for (size_t i = 0; i < ARRAY_SIZE(f); i++)
		free(f[i]);
	free(d);
	free(main_conf);
}

/* A link among the drop-ins, a linked or writable drop-in directory: each
 * refused with the path named; the main file is still read. */
/* Layers lowest first: a name in a higher layer replaces the lower file,
 * a link to /dev/null masks it, the files in effect are read in name
 * order whatever their layer, and the drop-ins count without a main file. */
static void test_load_layers(void **state)
{
	struct diag_list dl = { 0 };
	struct tmpdir t;
	struct config c;
	char *low, *high, *dirs, *mask;

	(void)state;
	tmpdir_make(&t);
	assert_true(asprintf(&low, "%s/low", t.path) > 0);
	assert_true(asprintf(&high, "%s/high", t.path) > 0);
	assert_int_equal(mkdir(low, 0755), 0);
	assert_int_equal(mkdir(high, 0755), 0);
	free(write_file(low, "10-jobs.conf", "[storaged]\njobs = 3\n", 0644));
	free(write_file(high, "10-jobs.conf", "[storaged]\njobs = 5\n", 0644));
	free(write_file(low, "20-hotplug.conf", "[storaged]\nhotplug = yes\n", 0644));
	free(write_file(high, "05-jobs.conf", "[storaged]\njobs = 7\n", 0644));
	assert_true(asprintf(&mask, "%s/20-hotplug.conf", high) > 0);
	assert_int_equal(symlink("/dev/null", mask), 0);
	assert_true(asprintf(&dirs, "%s::%s", low, high) > 0);
	assert_int_equal(setenv("STORAGED_CONFIG_DIRS", dirs, 1), 0);

	assert_int_equal(config_init(&c), 0);
	assert_int_equal(config_load(&c, "/nonexistent/storaged.conf", false, &dl), 0);
	assert_int_equal(dl.n, 0);
	assert_null(c.file); /* no main file: only the drop-ins */
	assert_int_equal(c.jobs, 5); /* 05-jobs, then high's 10-jobs */
	assert_false(c.hotplug); /* masked */
	config_done(&c);

	assert_int_equal(unsetenv("STORAGED_CONFIG_DIRS"), 0);
	free(mask);
	free(dirs);
	free(low);
	free(high);
	tmpdir_remove(&t);
}

static void test_load_dropin_links(void **state)
{
	struct diag_list dl = { 0 };
	struct tmpdir t;
	struct config c;
	char *main_conf, *d, *f, *elsewhere, *lnk, *realdir;

	tmpdir_make(&t);
	main_conf = write_file(t.path, "s.conf", "[storaged]\njobs = 2\n", 0644);
	elsewhere = write_file(t.path, "other.conf", "[storaged]\njobs = 9\n", 0644);
	assert_true(asprintf(&d, "%s.d", main_conf) > 0);
	assert_int_equal(mkdir(d, 0755), 0);
	f = write_file(d, "10-a.conf", "[storaged]\nhotplug = yes\n", 0644);
	assert_true(asprintf(&lnk, "%s/20-link.conf", d) > 0);
	assert_int_equal(symlink(elsewhere, lnk), 0);

	assert_int_equal(config_init(&c), 0);
	assert_int_equal(config_load(&c, main_conf, false, &dl), -ELOOP);
	assert_int_equal(c.jobs, 2); /* the linked file was not read */
	assert_true(c.hotplug);
	assert_int_equal(dl.n, 1);
	assert_string_equal(dl.v[0].file, lnk);
	assert_non_null(strstr(dl.v[0].msg, "symbolic link"));
	diag_list_done(&dl);
	config_done(&c);

	/* the directory itself a link to a directory */
	assert_int_equal(unlink(lnk), 0);
	assert_true(asprintf(&realdir, "%s/real.d", t.path) > 0);
	assert_int_equal(rename(d, realdir), 0);
	assert_int_equal(symlink(realdir, d), 0);
	dl = (struct diag_list){ 0 };
	assert_int_equal(config_init(&c), 0);
	assert_int_equal(config_load(&c, main_conf, false, &dl), -ENOTDIR);
	assert_false(c.hotplug);
	assert_int_equal(dl.n, 1);
	assert_string_equal(dl.v[0].file, d);
	diag_list_done(&dl);
	config_done(&c);

	/* a directory others can write: anyone could add a drop-in */
	assert_int_equal(unlink(d), 0);
	assert_int_equal(rename(realdir, d), 0);
	assert_int_equal(chmod(d, 0777), 0);
	dl = (struct diag_list){ 0 };
	assert_int_equal(config_init(&c), 0);
	assert_int_equal(config_load(&c, main_conf, true, &dl) < 0, true);
	assert_false(c.hotplug);
	assert_non_null(dl.n ? strstr(dl.v[dl.n - 1].msg, "configuration only from a root-owned directory")
			     : NULL);
	diag_list_done(&dl);
	config_done(&c);

	tmpdir_remove(&t);
	free(realdir);
	free(lnk);
	free(f);
	free(d);
	free(elsewhere);
	free(main_conf);
}

static void test_load_unsafe(void **state)
{
	struct diag_list dl = { 0 };
	struct tmpdir t;
	struct config c;
	char *p, *want;

	tmpdir_make(&t);
	p = write_file(t.path, "s.conf", "[storaged]\njobs = 2\n", 0664);

	assert_int_equal(config_init(&c), 0);
	assert_int_equal(config_load(&c, p, true, &dl), -EPERM);
	assert_int_equal(dl.n, 1);
	assert_string_equal(dl.v[0].file, p);
	assert_int_equal(dl.v[0].line, 0);
	assert_true(asprintf(&want, "run 'chown root:root %s; chmod go-w %s'", p, p) > 0);
	assert_non_null(strstr(dl.v[0].msg, want));
	assert_int_equal(c.jobs, 4); /* refused: not read */
	free(want);
	diag_list_done(&dl);

	/* without the check, the same file is read */
	assert_int_equal(config_load(&c, p, false, &dl), 0);
	assert_int_equal(c.jobs, 2);
	assert_int_equal(dl.n, 0);

	/* mode fixed: safe when root owns it, refused for anyone else */
	assert_int_equal(chmod(p, 0644), 0);
	c.jobs = 4;
	if (geteuid() == 0) {
		assert_int_equal(config_load(&c, p, true, &dl), 0);
		assert_int_equal(c.jobs, 2);
		assert_int_equal(chown(p, 1000, 1000), 0);
	}
	assert_int_equal(config_load(&c, p, true, &dl), -EPERM);
	assert_int_equal(dl.n, 1);
	assert_non_null(strstr(dl.v[0].msg, "owned by uid "));
	diag_list_done(&dl);

	config_done(&c);
	tmpdir_remove(&t);
	free(p);
}

static void test_load_not_regular(void **state)
{
	struct diag_list dl = { 0 };
	struct tmpdir t;
	struct config c;
	char *fifo;

	tmpdir_make(&t);
	assert_int_equal(config_init(&c), 0);
	assert_int_equal(config_load(&c, t.path, false, &dl), -EINVAL);
	assert_int_equal(dl.n, 1);
	assert_string_equal(dl.v[0].msg, "not a regular file");
	diag_list_done(&dl);

	/* a FIFO must not block the reader */
	assert_true(asprintf(&fifo, "%s/fifo.conf", t.path) > 0);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	assert_int_equal(config_load(&c, fifo, false, &dl), -EINVAL);
	assert_int_equal(dl.n, 1);
	assert_string_equal(dl.v[0].file, fifo);
	diag_list_done(&dl);

	config_done(&c);
	tmpdir_remove(&t);
	free(fifo);
}

static void test_backend_name(void **state)
{
	assert_string_equal(config_backend_name(AREA_TMPFS), "tmpfs");
	assert_string_equal(config_backend_name(AREA_ZRAM), "zram");
	assert_string_equal(config_backend_name(AREA_BRD), "brd");
}

/* 0 would abandon every mount at once; device-timeout = 0 (do not wait) is fine. */
static void test_zero_timeouts(void **state)
{
	struct diag_list dl = { 0 };
	struct config c;

	assert_int_equal(parse_str(&c, "[storaged]\ndevice-timeout = 0\nmount-timeout = 0\n", &dl), -EINVAL);
	assert_int_equal(dl.n, 1);
	assert_int_equal(dl.v[0].line, 3);
	assert_non_null(strstr(dl.v[0].msg, "at least 1us"));
	assert_int_equal(c.device_timeout_usec, 0);
	config_done(&c);
	diag_list_done(&dl);
	/* a unit storaged does not count in: the smallest one is named */
	assert_int_equal(parse_str(&c, "[storaged]\nmount-timeout = 1ns\n", &dl), -EINVAL);
	assert_non_null(strstr(dl.v[0].msg, "'1ns' is not a duration of at least 1us, the smallest unit"));
	config_done(&c);
	diag_list_done(&dl);
}

/* sync-interval: the area's own, else [storaged]'s, whichever comes first
 * in the file; 0 is off; below a second and "infinity" are refused. */
/* zram's compressor and writeback device: names checked, zram only */
static void test_zram_keys(void **state)
{
	struct diag_list dl = { 0 };
	struct config c;

	(void)state;
	assert_int_equal(parse_str(&c,
				   "[area z]\npath = /z\nbackend = zram\ncompression-algorithm = lzo-rle\n"
				   "writeback-device = /dev/disk/by-partlabel/wb\n"
				   "[area t]\npath = /t\n",
				   &dl),
			 0);
	assert_string_equal(c.areas[0].compression, "lzo-rle");
	assert_string_equal(c.areas[0].writeback_device, "/dev/disk/by-partlabel/wb");
	assert_null(c.areas[1].compression);
	assert_null(c.areas[1].writeback_device);
	config_done(&c);
	assert_int_equal(dl.n, 0);

	assert_int_equal(parse_str(&c,
				   "[area z]\npath = /z\nbackend = zram\ncompression-algorithm = Zstd!\n"
				   "writeback-device = sda1\n"
				   "[area t]\npath = /t\ncompression-algorithm = lz4\n"
				   "[area b]\npath = /b\nbackend = brd\nwriteback-device = /dev/sdb\n",
				   &dl),
			 -EINVAL);
	assert_int_equal(dl.n, 4);
	assert_non_null(strstr(dl.v[0].msg, "compression-algorithm: 'Zstd!' is not a compressor's name"));
	assert_non_null(strstr(dl.v[1].msg, "writeback-device: 'sda1' is not a block device under /dev"));
	assert_non_null(strstr(dl.v[2].msg, "[area t] sets compression-algorithm, which only backend = zram has (this area's backend is tmpfs)"));
	assert_non_null(strstr(dl.v[3].msg, "[area b] sets writeback-device, which only backend = zram has (this area's backend is brd)"));
	diag_list_done(&dl);
	config_done(&c);

	/* every mismatch of one area, each at its key's line */
	assert_int_equal(parse_str(&c,
				   "[area t]\npath = /t\ncompression-algorithm = lz4\n"
				   "writeback-device = /dev/sdb\nfs = xfs\n",
				   &dl),
			 -EINVAL);
	assert_int_equal(dl.n, 3);
	assert_int_equal(dl.v[0].line, 3);
	assert_non_null(strstr(dl.v[0].msg, "[area t] sets compression-algorithm, which only backend = zram has"));
	assert_int_equal(dl.v[1].line, 4);
	assert_non_null(strstr(dl.v[1].msg, "[area t] sets writeback-device, which only backend = zram has"));
	assert_int_equal(dl.v[2].line, 5);
	assert_string_equal(dl.v[2].msg,
			    "[area t] sets fs = xfs, but a tmpfs area is always tmpfs: only backend = zram or brd makes fs = on its device; remove fs = or set backend = zram");
	diag_list_done(&dl);
	config_done(&c);
}

/* fs = is a ramdisk's (zram, brd); on a tmpfs area only fs = tmpfs, which
 * it is anyway, passes */
static void test_fs_on_tmpfs(void **state)
{
	static const char *const refused[] = { "xfs", "ext4", "btrfs", "ext2" };
	struct diag_list dl = { 0 };
	struct config c;
	char *text;

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(refused); i++) {
		assert_true(asprintf(&text, "[area t]\npath = /t\nbackend = tmpfs\nfs = %s\n", refused[i]) > 0);
		assert_int_equal(parse_str(&c, text, &dl), -EINVAL);
		assert_int_equal(dl.n, 1);
		assert_int_equal(dl.v[0].line, 4);
		assert_non_null(strstr(dl.v[0].msg, "only backend = zram or brd makes fs = on its device"));
		diag_list_done(&dl);
		config_done(&c);
		free(text);
	}
	assert_int_equal(parse_str(&c, "[area t]\npath = /t\nfs = tmpfs\n[area z]\npath = /z\nbackend = zram\nfs = xfs\n"
				   "[area b]\npath = /b\nbackend = brd\nfs = ext2\n", &dl), 0);
	assert_int_equal(dl.n, 0);
	config_done(&c);
}

/* grow = yes: tmpfs only, refused at its own line for zram and brd;
 * memory-reserve: bytes or a share of RAM, 20 % by default. */
static void test_grow_keys(void **state)
{
	struct diag_list dl = { 0 };
	struct config c;

	(void)state;
	assert_int_equal(parse_str(&c, "[area t]\npath = /t\ngrow = yes\n", &dl), 0);
	assert_true(c.areas[0].grow);
	assert_int_equal(c.memory_reserve.kind, AREA_SIZE_PERCENT);
	assert_int_equal(c.memory_reserve.value, CONFIG_DEFAULT_MEMORY_RESERVE_PERCENT);
	assert_int_equal(config_memory_reserve(&c, 1000), 200);
	config_done(&c);

	assert_int_equal(parse_str(&c, "[storaged]\nmemory-reserve = 2G\n[area t]\npath = /t\n", &dl), 0);
	assert_false(c.areas[0].grow);
	assert_int_equal(config_memory_reserve(&c, 1000), UINT64_C(2) << 30);
	config_done(&c);
	assert_int_equal(parse_str(&c, "[storaged]\nmemory-reserve = 0%\n", &dl), 0);
	assert_int_equal(config_memory_reserve(&c, UINT64_MAX), 0);
	config_done(&c);
	assert_int_equal(parse_str(&c, "[storaged]\nmemory-reserve = 100%\n", &dl), 0);
	assert_int_equal(config_memory_reserve(&c, UINT64_MAX), UINT64_MAX);
	config_done(&c);
	assert_int_equal(dl.n, 0);

	assert_int_equal(parse_str(&c,
				   "[storaged]\nmemory-reserve = 101%\n"
				   "[area z]\npath = /z\nbackend = zram\n\ngrow = yes\n"
				   "[area b]\npath = /b\nbackend = brd\ngrow = on\n"
				   "[area t]\npath = /t\ngrow = maybe\n",
				   &dl),
			 -EINVAL);
	assert_int_equal(dl.n, 4);
	assert_int_equal(dl.v[0].line, 2);
	assert_non_null(strstr(dl.v[0].msg, "memory-reserve: '101%' is out of range"));
	assert_int_equal(dl.v[1].line, 7);
	assert_non_null(strstr(dl.v[1].msg, "[area z] sets grow = yes, but a zram area cannot grow"));
	assert_int_equal(dl.v[2].line, 11);
	assert_non_null(strstr(dl.v[2].msg, "[area b] sets grow = yes, but a brd area cannot grow"));
	assert_int_equal(dl.v[3].line, 14);
	assert_non_null(strstr(dl.v[3].msg, "grow: 'maybe' is not a boolean"));
	diag_list_done(&dl);
	config_done(&c);
}

/* [btrfs FSID] and [btrfs LABEL=NAME]: each key over [storaged]'s, the
 * FSID section over the LABEL= one, keys not set are [storaged]'s. */
static void test_btrfs_sections(void **state)
{
	struct diag_list dl = { 0 };
	struct btrfs_fs_policy pol;
	struct config c;

	(void)state;
	assert_int_equal(parse_str(&c,
				   "[storaged]\ndevice-timeout = 30s\ndegraded = after-timeout\nstale-member = scrub\n"
				   "[btrfs 5E81A1B2-7d2b-4b8e-9c1f-0a1b2c3d4e5f]\ndevice-timeout = 5s\ndegraded = read-only\n"
				   "[btrfs LABEL=backup]\ndegraded = no\nstale-member = refuse\n",
				   &dl),
			 0);
	assert_int_equal(dl.n, 0);
	assert_int_equal(c.n_btrfs, 2);
	assert_string_equal(c.btrfs[0].name, "5e81a1b2-7d2b-4b8e-9c1f-0a1b2c3d4e5f"); /* lower case */
	assert_null(c.btrfs[0].label);
	assert_int_equal(c.btrfs[0].line, 5);
	assert_string_equal(c.btrfs[1].label, "backup");
	assert_string_equal(c.btrfs[1].name, "LABEL=backup");

	/* by fsid (any case), whatever the label */
	config_btrfs_policy(&c, "5e81a1b2-7D2B-4b8e-9c1f-0a1b2c3d4e5f", "backup", &pol);
	assert_ptr_equal(pol.section, &c.btrfs[0]);
	assert_true(pol.device_timeout_usec == 5 * SEC);
	assert_int_equal(pol.degraded, DEGRADED_READ_ONLY);
	assert_int_equal(pol.stale_member, STALE_MEMBER_SCRUB); /* not set: [storaged]'s */
	/* by label */
	config_btrfs_policy(&c, "11111111-2222-3333-4444-555555555555", "backup", &pol);
	assert_ptr_equal(pol.section, &c.btrfs[1]);
	assert_true(pol.device_timeout_usec == 30 * SEC);
	assert_int_equal(pol.degraded, DEGRADED_NO);
	assert_int_equal(pol.stale_member, STALE_MEMBER_REFUSE);
	/* a label is compared exactly; no section: [storaged]'s */
	config_btrfs_policy(&c, "11111111-2222-3333-4444-555555555555", "Backup", &pol);
	assert_null(pol.section);
	assert_true(pol.device_timeout_usec == 30 * SEC);
	assert_int_equal(pol.degraded, DEGRADED_AFTER_TIMEOUT);
	config_btrfs_policy(&c, NULL, NULL, &pol);
	assert_null(pol.section);
	config_done(&c);
	assert_int_equal(c.n_btrfs, 0);

	/* settle-time and settle-limit: off and 30s by default; per section */
	assert_int_equal(parse_str(&c,
				   "[storaged]\nsettle-time = 2s\n"
				   "[btrfs LABEL=shelf]\nsettle-time = 10s\nsettle-limit = 2min\n",
				   &dl),
			 0);
	config_btrfs_policy(&c, NULL, "shelf", &pol);
	assert_true(pol.settle_usec == 10 * SEC && pol.settle_limit_usec == 120 * SEC);
	config_btrfs_policy(&c, NULL, "other", &pol);
	assert_true(pol.settle_usec == 2 * SEC && pol.settle_limit_usec == 30 * SEC);
	config_done(&c);
	assert_int_equal(config_init(&c), 0);
	assert_true(c.settle_usec == 0 && c.settle_limit_usec == 30 * SEC);
	config_done(&c);

	/* degraded = read-only in [storaged] too */
	assert_int_equal(parse_str(&c, "[storaged]\ndegraded = read-only\n", &dl), 0);
	assert_int_equal(c.degraded, DEGRADED_READ_ONLY);
	assert_string_equal(config_degraded_name(c.degraded), "read-only");
	config_done(&c);
	diag_list_done(&dl);
}

static void test_btrfs_section_errors(void **state)
{
	static const struct {
		const char *text;
		unsigned line;
		const char *msg;
	} cases[] = {
		{ "[btrfs]\ndegraded = no\n", 1, "section [btrfs] needs a filesystem: [btrfs FSID]" },
		{ "[btrfs 5e81a1b2-7d2b-4b8e-9c1f-0a1b2c3d4e5]\ndegraded = no\n", 1,
		  "'5e81a1b2-7d2b-4b8e-9c1f-0a1b2c3d4e5' names no btrfs filesystem" },
		{ "[btrfs 5e81a1b2x7d2b-4b8e-9c1f-0a1b2c3d4e5f]\ndegraded = no\n", 1, "names no btrfs filesystem" },
		{ "[btrfs 5e81a1b2-7d2b-4b8e-9c1f-0a1b2c3d4e5g]\ndegraded = no\n", 1, "names no btrfs filesystem" },
		{ "[btrfs LABEL=]\ndegraded = no\n", 1, "'LABEL=' names no btrfs filesystem" },
		{ "[btrfs UUID=5e81a1b2-7d2b-4b8e-9c1f-0a1b2c3d4e5f]\ndegraded = no\n", 1,
		  "names no btrfs filesystem" },
		{ "[btrfsx]\ndegraded = no\n", 1,
		  "unknown section '[btrfsx]'; expected [storaged], [area NAME] or [btrfs FSID]" },
		{ "[btrfs LABEL=a]\ndegraded = yes\n", 2,
		  "degraded: 'yes' is not 'no', 'after-timeout' or 'read-only'" },
		{ "[btrfs LABEL=a]\nstale-member = ignore\n", 2,
		  "stale-member: 'ignore' is not 'warn', 'scrub' or 'refuse'" },
		{ "[btrfs LABEL=a]\ndevice-timeout = soon\n", 2,
		  "device-timeout: 'soon' is not a duration (e.g. 90s, 2min, infinity)" },
		{ "[btrfs LABEL=a]\njobs = 2\n", 2,
		  "unknown key 'jobs' in [btrfs LABEL=a] (accepted: device-timeout, settle-time, settle-limit, degraded, stale-member)" },
		{ "[btrfs LABEL=a]\ndegraded = no\ndegraded = no\n", 3,
		  "duplicate key 'degraded' in [btrfs LABEL=a]; first set at line 2" },
		{ "[btrfs LABEL=a]\ndegraded = no\n[area x]\npath = /x\n[btrfs LABEL=a]\ndegraded = no\n", 5,
		  "duplicate section [btrfs LABEL=a]; first at line 1" },
		/* one filesystem, spelled in two cases */
		{ "[btrfs 5e81a1b2-7d2b-4b8e-9c1f-0a1b2c3d4e5f]\ndegraded = no\n"
		  "[btrfs 5E81A1B2-7D2B-4B8E-9C1F-0A1B2C3D4E5F]\ndegraded = no\n",
		  3, "duplicate section [btrfs 5e81a1b2-7d2b-4b8e-9c1f-0a1b2c3d4e5f]; first at line 1" },
		{ "[btrfs LABEL=0123456789012345678901234567890123456]\ndegraded = no\n", 1,
		  "section name too long (at most 48 bytes)" },
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct diag_list dl = { 0 };
		struct config c;
		struct expect e = { cases[i].line, cases[i].msg };

		assert_int_equal(parse_str(&c, cases[i].text, &dl), -EINVAL);
		assert_diags(&dl, "t.conf", &e, 1);
		config_done(&c);
		diag_list_done(&dl);
	}
}

/* A drop-in's section for the same filesystem goes on with it, key by key. */
static void test_btrfs_dropin(void **state)
{
	struct diag_list dl = { 0 };
	struct btrfs_fs_policy pol;
	struct config c;

	(void)state;
	assert_int_equal(config_init(&c), 0);
	assert_int_equal(config_parse_buf(&c, "[btrfs LABEL=a]\ndevice-timeout = 3s\ndegraded = no\n", 50,
					  "main.conf", &dl),
			 0);
	assert_int_equal(config_parse_buf(&c, "[btrfs LABEL=a]\ndegraded = read-only\n", 37, "10-d.conf", &dl), 0);
	assert_int_equal(dl.n, 0);
	assert_int_equal(c.n_btrfs, 1);
	config_btrfs_policy(&c, NULL, "a", &pol);
	assert_true(pol.device_timeout_usec == 3 * SEC);
	assert_int_equal(pol.degraded, DEGRADED_READ_ONLY);
	assert_string_equal(c.btrfs[0].file, "main.conf");
	config_done(&c);
	diag_list_done(&dl);
}

/* seed = overlay (issue 40): no copy, the overlay flag; with persist it is
 * no configuration error; any other word is refused at its line */
static void test_seed_overlay(void **state)
{
	struct diag_list dl = { 0 };
	struct config c;

	(void)state;
	assert_int_equal(parse_str(&c, "[area a]\npath = /a\nseed = overlay\npersist = yes\n[area b]\npath = /b\nseed = no\n[area d]\npath = /d\n", &dl), 0);
	assert_false(c.areas[0].seed);
	assert_true(c.areas[0].overlay);
	assert_true(c.areas[0].persist);
	assert_false(c.areas[1].seed);
	assert_false(c.areas[1].overlay);
	assert_true(c.areas[2].seed);
	assert_false(c.areas[2].overlay);
	assert_int_equal(dl.n, 0);
	config_done(&c);
	assert_int_not_equal(parse_str(&c, "[area a]\npath = /a\nseed = overlayfs\n", &dl), 0);
	assert_true(dl.n > 0);
	assert_non_null(strstr(dl.v[0].msg, "or overlay"));
	config_done(&c);
	diag_list_done(&dl);
}

static void test_sync_interval(void **state)
{
	struct diag_list dl = { 0 };
	struct config c;

	assert_int_equal(parse_str(&c, "[area a]\npath = /a\npersist = yes\n", &dl), 0);
	assert_true(c.areas[0].sync_interval_usec == 3600 * USEC_PER_SEC);
	config_done(&c);
	assert_int_equal(parse_str(&c,
				   "[area a]\npath = /a\nsync-interval = 2s\n"
				   "[area b]\npath = /b\n"
				   "[area z]\npath = /z\nsync-interval = 0\n"
				   "[storaged]\nsync-interval = 15min\n",
				   &dl),
			 0);
	assert_true(c.areas[0].sync_interval_usec == 2 * USEC_PER_SEC);
	assert_true(c.areas[1].sync_interval_usec == 15 * 60 * USEC_PER_SEC);
	assert_true(c.areas[2].sync_interval_usec == 0);
	config_done(&c);
	assert_int_equal(parse_str(&c, "[storaged]\nsync-interval = 0\n[area a]\npath = /a\n", &dl), 0);
	assert_true(c.areas[0].sync_interval_usec == 0);
	config_done(&c);
	/* a drop-in's [storaged] reaches the main file's sections */
	assert_int_equal(parse_str(&c, "[area a]\npath = /a\n", &dl), 0);
	assert_int_equal(config_parse_buf(&c, "[storaged]\nsync-interval = 5min\n", 32, "drop-in", &dl), 0);
	assert_true(c.areas[0].sync_interval_usec == 5 * 60 * USEC_PER_SEC);
	config_done(&c);
	assert_int_equal(dl.n, 0);

	assert_int_equal(parse_str(&c,
				   "[storaged]\nsync-interval = 500ms\n"
				   "[area a]\npath = /a\nsync-interval = infinity\n"
				   "[area b]\npath = /b\nsync-interval = often\n",
				   &dl),
			 -EINVAL);
	assert_int_equal(dl.n, 3);
	assert_int_equal(dl.v[0].line, 2);
	assert_non_null(strstr(dl.v[0].msg, "'500ms' is out of range; expected a duration of at least 1s"));
	assert_non_null(strstr(dl.v[1].msg, "'infinity' is out of range"));
	assert_non_null(strstr(dl.v[2].msg, "'often' is not"));
	/* a refused value changes nothing */
	assert_true(c.sync_interval_usec == 3600 * USEC_PER_SEC);
	assert_false(c.areas[0].sync_interval_set);
	config_done(&c);
	diag_list_done(&dl);
}

/* Areas mount nosuid,nodev unless a key asks otherwise (C20). */
static void test_nosuid_nodev(void **state)
{
	struct diag_list dl = { 0 };
	struct config c;

	assert_int_equal(parse_str(&c,
				   "[area a]\npath = /a\n"
				   "[area b]\npath = /b\nnosuid = no\nnodev = off\n"
				   "[area c]\npath = /c\nnosuid = yes\nnodev = no\n",
				   &dl),
			 0);
	assert_int_equal(dl.n, 0);
	assert_int_equal(c.n_areas, 3);
	assert_false(c.areas[0].allow_suid); /* the defaults */
	assert_false(c.areas[0].allow_dev);
	assert_true(c.areas[1].allow_suid);
	assert_true(c.areas[1].allow_dev);
	assert_false(c.areas[2].allow_suid);
	assert_true(c.areas[2].allow_dev);
	config_done(&c);
	assert_int_equal(parse_str(&c, "[area a]\npath = /a\nnosuid = maybe\n", &dl), -EINVAL);
	assert_int_equal(dl.n, 1);
	assert_int_equal(dl.v[0].line, 3);
	assert_string_equal(dl.v[0].msg,
			    "nosuid: 'maybe' is not a boolean (yes/no, true/false, on/off, 1/0)");
	assert_false(c.areas[0].allow_suid);
	config_done(&c);
	diag_list_done(&dl);
}

/* On a directory the sticky bit (restricted deletion) and the set-group-ID
 * bit (new entries take its group) mean something; the set-user-ID bit
 * means nothing on Linux: refused with its line and the mode without it. */
static void test_area_mode_bits(void **state)
{
	static const char *const good[] = { "0755", "1777", "2775", "3777", "0" };
	static const struct {
		const char *mode, *advice;
	} bad[] = { { "4777", "mode = 0777" }, { "4755", "mode = 0755" }, { "6775", "mode = 2775" },
		    { "07777", "mode = 3777" } };
	struct diag_list dl = { 0 };
	struct config c;
	char text[128];

	for (size_t i = 0; i < ARRAY_SIZE(good); i++) {
		snprintf(text, sizeof(text), "[area a]\npath = /a\nmode = %s\n", good[i]);
		assert_int_equal(parse_str(&c, text, &dl), 0);
		assert_int_equal(dl.n, 0);
		assert_true(c.areas[0].mode_set);
		config_done(&c);
	}
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		snprintf(text, sizeof(text), "[area a]\npath = /a\nmode = %s\nseed = no\n", bad[i].mode);
		assert_int_equal(parse_str(&c, text, &dl), -EINVAL);
		assert_int_equal(dl.n, 1);
		assert_int_equal(dl.v[0].line, 3);
		assert_non_null(strstr(dl.v[0].msg, "set-user-ID"));
		assert_non_null(strstr(dl.v[0].msg, bad[i].advice));
		config_done(&c);
		diag_list_done(&dl);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_good),
		cmocka_unit_test(test_seed_overlay),
		cmocka_unit_test(test_design_example),
		cmocka_unit_test(test_bad_structure),
		cmocka_unit_test(test_bad_values),
		cmocka_unit_test(test_hostile),
		cmocka_unit_test(test_crlf),
		cmocka_unit_test(test_long_lines),
		cmocka_unit_test(test_inline_comments),
		cmocka_unit_test(test_area_path_normalised),
		cmocka_unit_test(test_not_terminated),
		cmocka_unit_test(test_small_cases),
		cmocka_unit_test(test_load_missing),
		cmocka_unit_test(test_load_dropins),
		cmocka_unit_test(test_load_layers),
		cmocka_unit_test(test_load_dropin_links),
		cmocka_unit_test(test_load_unsafe),
		cmocka_unit_test(test_load_not_regular),
		cmocka_unit_test(test_backend_name),
		cmocka_unit_test(test_zero_timeouts),
		cmocka_unit_test(test_area_name_limit),
		cmocka_unit_test(test_area_name_dash),
		cmocka_unit_test(test_nosuid_nodev),
		cmocka_unit_test(test_area_mode_bits),
		cmocka_unit_test(test_sync_interval),
		cmocka_unit_test(test_btrfs_sections),
		cmocka_unit_test(test_btrfs_section_errors),
		cmocka_unit_test(test_btrfs_dropin),
		cmocka_unit_test(test_zram_keys),
		cmocka_unit_test(test_fs_on_tmpfs),
		cmocka_unit_test(test_grow_keys),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
