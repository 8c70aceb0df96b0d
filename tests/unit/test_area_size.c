/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "plan/area_grow.h"
#include "parse/area_facts.h"
#include "plan/area_size.h"

#define MIB (UINT64_C(1) << 20)
#define GIB (UINT64_C(1) << 30)

static struct area_config base(void)
{
	struct area_config a = {
		.name = "t",
		.path = "/srv/t",
		.backend = AREA_TMPFS,
		.size = { .kind = AREA_SIZE_AUTO },
		.inodes_auto = true,
		.headroom = 2.0,
		.seed = true,
		.fs = "ext4",
	};
	return a;
}

static struct area_survey survey(uint64_t bytes, uint64_t inodes)
{
	struct area_survey s = { .bytes = bytes, .inodes = inodes, .valid = true };
	return s;
}

static void test_bytes_configured(void **state)
{
	struct area_config a = base();
	struct area_survey s = survey(MIB, 10);
	struct area_sizing r;

	a.size = (struct area_size){ AREA_SIZE_BYTES, 12800 * MIB };
	assert_int_equal(area_size_resolve(&a, &s, 8 * GIB, &r), 0);
	assert_int_equal(r.size_bytes, 12800 * MIB);
	assert_string_equal(r.size_how, "12800M (configured)");
	assert_true(r.fits);
	assert_string_equal(r.why, "");
}

/* size = 1.3G is no whole number of any unit: the plan shows the bytes
 * mount is given, never a rounded "1.2G" */
static void test_bytes_configured_not_whole(void **state)
{
	struct area_config a = base();
	struct area_survey s = survey(MIB, 10);
	struct area_sizing r;

	a.size = (struct area_size){ AREA_SIZE_BYTES, 1395864371 };
	assert_int_equal(area_size_resolve(&a, &s, 8 * GIB, &r), 0);
	assert_string_equal(r.size_how, "1395864371 (configured)");
}

static void test_percent(void **state)
{
	struct area_config a = base();
	struct area_survey s = survey(MIB, 10);
	struct area_sizing r;

	a.size = (struct area_size){ AREA_SIZE_PERCENT, 25 };
	assert_int_equal(area_size_resolve(&a, &s, 8 * GIB, &r), 0);
	assert_int_equal(r.size_bytes, 2 * GIB);
	assert_string_equal(r.size_how, "2G (25% of RAM)");
	/* rounded down to whole pages */
	assert_int_equal(area_size_resolve(&a, &s, 1000001, &r), 0);
	assert_int_equal(r.size_bytes, 249856);
	a.size.value = 0;
	assert_int_equal(area_size_resolve(&a, &s, 8 * GIB, &r), -EINVAL);
	a.size.value = 101;
	assert_int_equal(area_size_resolve(&a, &s, 8 * GIB, &r), -EINVAL);
	a.size.value = 50;
	assert_int_equal(area_size_resolve(&a, &s, 0, &r), -EINVAL);
}

static void test_auto_size(void **state)
{
	struct area_config a = base();
	struct area_survey s = survey(100 * MIB + 1, 5000);
	struct area_sizing r;

	assert_int_equal(area_size_resolve(&a, &s, 8 * GIB, &r), 0);
	assert_int_equal(r.size_bytes, 201 * MIB); /* 200M + 2 bytes, rounded up */
	assert_string_equal(r.size_how, "201M (auto: 100.0M x 2.0)");
	assert_int_equal(r.nr_inodes, 10000);
	assert_string_equal(r.inodes_how, "10000 (auto: 5000 entries x 2.0)");
	assert_true(r.fits);
}

static void test_auto_minimums(void **state)
{
	struct area_config a = base();
	struct area_survey s = survey(4096, 3);
	struct area_sizing r;

	assert_int_equal(area_size_resolve(&a, &s, 8 * GIB, &r), 0);
	assert_int_equal(r.size_bytes, 16 * MIB);
	assert_string_equal(r.size_how, "16M (auto: 4K x 2.0, minimum 16M)");
	assert_int_equal(r.nr_inodes, 1024);
	assert_string_equal(r.inodes_how, "1024 (auto: 3 entries x 2.0, minimum 1024)");
	s = survey(4096, 1); /* the empty directory itself */
	assert_int_equal(area_size_resolve(&a, &s, 8 * GIB, &r), 0);
	assert_string_equal(r.inodes_how, "1024 (auto: 1 entry x 2.0, minimum 1024)");
}

static void test_auto_headroom(void **state)
{
	struct area_config a = base();
	struct area_survey s = survey(0, 142311);
	struct area_sizing r;

	a.headroom = 1.5;
	assert_int_equal(area_size_resolve(&a, &s, 8 * GIB, &r), 0);
	assert_int_equal(r.nr_inodes, 213467); /* ceil(142311 × 1.5) */
	assert_string_equal(r.inodes_how, "213467 (auto: 142311 entries x 1.5)");
	a.headroom = 0;
	assert_int_equal(area_size_resolve(&a, &s, 8 * GIB, &r), -EINVAL);
}

static void test_inodes_configured(void **state)
{
	struct area_config a = base();
	struct area_survey s = survey(MIB, 100);
	struct area_sizing r;

	a.inodes_auto = false;
	a.inodes = 300000;
	assert_int_equal(area_size_resolve(&a, &s, 8 * GIB, &r), 0);
	assert_int_equal(r.nr_inodes, 300000);
	assert_string_equal(r.inodes_how, "300000 (configured)");
}

/* C04: 3000 files + the root in an area of 2000 inodes */
static void test_c04_inodes_short(void **state)
{
	struct area_config a = base();
	struct area_survey s = survey(3000 * 4096 + 65536, 3001);
	struct area_sizing r;

	a.size = (struct area_size){ AREA_SIZE_BYTES, 64 * MIB };
	a.inodes_auto = false;
	a.inodes = 2000;
	assert_int_equal(area_size_resolve(&a, &s, 8 * GIB, &r), 0);
	assert_false(r.fits);
	assert_string_equal(r.why, "seed needs 3001 inodes but the area has 2000 (nr_inodes): 1001 short; raise inodes= or use inodes = auto");
	a.inodes = 10240;
	assert_int_equal(area_size_resolve(&a, &s, 8 * GIB, &r), 0);
	assert_true(r.fits);
	/* exactly enough: the root counts */
	a.inodes = 3001;
	assert_int_equal(area_size_resolve(&a, &s, 8 * GIB, &r), 0);
	assert_true(r.fits);
}

/* C05: an 80 MiB file and a small text file in 32M */
static void test_c05_bytes_short(void **state)
{
	struct area_config a = base();
	struct area_survey s = survey(80 * MIB + 4096, 3);
	struct area_sizing r;

	a.size = (struct area_size){ AREA_SIZE_BYTES, 32 * MIB };
	assert_int_equal(area_size_resolve(&a, &s, 8 * GIB, &r), 0);
	assert_false(r.fits);
	assert_string_equal(r.why, "seed needs 81924K but the area has 32M (size=): 49156K short; raise size= or use size = auto");
	a.size.value = 128 * MIB;
	assert_int_equal(area_size_resolve(&a, &s, 8 * GIB, &r), 0);
	assert_true(r.fits);
}

static void test_both_short(void **state)
{
	struct area_config a = base();
	struct area_survey s = survey(2 * MIB, 50);
	struct area_sizing r;

	a.size = (struct area_size){ AREA_SIZE_BYTES, MIB };
	a.inodes_auto = false;
	a.inodes = 40;
	assert_int_equal(area_size_resolve(&a, &s, 8 * GIB, &r), 0);
	assert_false(r.fits);
	assert_string_equal(r.why, "seed needs 50 inodes but the area has 40 (nr_inodes): 10 short; raise inodes= or use inodes = auto; seed needs 2M but the area has 1M (size=): 1M short; raise size= or use size = auto");
}

static void test_zram_ext4(void **state)
{
	struct area_config a = base();
	struct area_survey s = survey(10 * MIB, 1000);
	struct area_sizing r;

	a.backend = AREA_ZRAM;
	assert_int_equal(area_size_resolve(&a, &s, 8 * GIB, &r), 0);
	assert_int_equal(r.nr_inodes, 2010);
	assert_string_equal(r.inodes_how, "2010 (auto: 1000 entries x 2.0 + 10 reserved by ext4)");
	/* 20M data + 2010 × 256 + 1M, × 64/63, rounded up to 1 MiB */
	assert_int_equal(r.size_bytes, 22 * MIB);
	assert_string_equal(r.size_how, "22M (auto: 10M x 2.0 + filesystem overhead)");
	assert_true(r.fits);

	/* ext4 keeps 10 inodes for itself */
	a.inodes_auto = false;
	a.inodes = 1005;
	assert_int_equal(area_size_resolve(&a, &s, 8 * GIB, &r), 0);
	assert_false(r.fits);
	assert_string_equal(r.why, "seed needs 1010 inodes but the area has 1005 (inodes): 5 short; raise inodes= or use inodes = auto");

	/* and some of the bytes */
	a.inodes = 2010;
	a.size = (struct area_size){ AREA_SIZE_BYTES, 10 * MIB };
	assert_int_equal(area_size_resolve(&a, &s, 8 * GIB, &r), 0);
	assert_false(r.fits);
	assert_string_equal(r.why, "seed needs 10M but the area has 8.3M (size= minus filesystem overhead): 1.6M short; raise size= or use size = auto");
}

static void test_zram_other_fs(void **state)
{
	struct area_config a = base();
	struct area_survey s = survey(10 * MIB, 1000);
	struct area_sizing r;

	a.backend = AREA_ZRAM;
	a.fs = "xfs";
	assert_int_equal(area_size_resolve(&a, &s, 8 * GIB, &r), 0);
	assert_int_equal(r.nr_inodes, 2000);
	assert_int_equal(r.size_bytes, 20 * MIB);
}

/* A zram area is mounted with discard where its fs takes the option (it
 * gives a deleted file's RAM back); ext2 takes none, tmpfs and brd get none. */
static void test_discard_option(void **state)
{
	static const char *const with[] = { "ext4", "ext3", "xfs", "btrfs", "f2fs", "vfat" };
	static const char *const without[] = { "ext2", "minix", "ext", "ext44", "" };
	struct area_config a = base();

	a.backend = AREA_ZRAM;
	for (size_t i = 0; i < sizeof(with) / sizeof(with[0]); i++) {
		a.fs = (char *)with[i];
		assert_non_null(area_discard_option(&a));
		assert_string_equal(area_discard_option(&a), "discard");
	}
	for (size_t i = 0; i < sizeof(without) / sizeof(without[0]); i++) {
		a.fs = (char *)without[i];
		assert_null(area_discard_option(&a));
	}
	a.fs = "ext4";
	a.backend = AREA_TMPFS;
	assert_null(area_discard_option(&a));
	a.backend = AREA_BRD;
	assert_null(area_discard_option(&a));
}

static void test_no_seed(void **state)
{
	struct area_config a = base();
	struct area_survey s = survey(80 * MIB, 100000);
	struct area_sizing r;

	a.seed = false;
	a.size = (struct area_size){ AREA_SIZE_BYTES, 32 * MIB };
	a.inodes_auto = false;
	a.inodes = 100;
	assert_int_equal(area_size_resolve(&a, &s, 8 * GIB, &r), 0);
	assert_true(r.fits);
	/* auto measures the directory, seeded or not; nothing must fit */
	a.inodes_auto = true;
	a.size.kind = AREA_SIZE_AUTO;
	assert_int_equal(area_size_resolve(&a, &s, 8 * GIB, &r), 0);
	assert_int_equal(r.nr_inodes, 200000);
	assert_int_equal(r.size_bytes, 160 * MIB);
	assert_true(r.fits);
	/* and without a survey auto cannot be resolved */
	assert_int_equal(area_size_resolve(&a, NULL, 8 * GIB, &r), -EINVAL);
}

static void test_survey_missing(void **state)
{
	struct area_config a = base();
	struct area_survey s = { .valid = false, .error = -EACCES };
	struct area_sizing r;

	assert_int_equal(area_size_resolve(&a, &s, 8 * GIB, &r), -EINVAL);
	assert_int_equal(area_size_resolve(&a, NULL, 8 * GIB, &r), -EINVAL);
	a.size = (struct area_size){ AREA_SIZE_BYTES, 32 * MIB };
	a.inodes_auto = false;
	a.inodes = 100;
	assert_int_equal(area_size_resolve(&a, &s, 8 * GIB, &r), 0);
	assert_false(r.fits);
	assert_string_equal(r.why, "cannot survey the seed directory: Permission denied");
}

static void test_huge(void **state)
{
	struct area_config a = base();
	struct area_survey s = survey(UINT64_MAX / 2, 10);
	struct area_sizing r;

	a.headroom = 1000;
	assert_int_equal(area_size_resolve(&a, &s, 8 * GIB, &r), 0);
	assert_true(r.size_bytes >= UINT64_MAX - MIB);
	assert_true(r.fits);
}

/* ---------------------------------------------------------------- grow */

static const struct grow_budget plenty = { .available = 16 * GIB, .reserve = 2 * GIB };

/* Below half of both limits and filling slowly: nothing to do, and the
 * ceilings are what memory allows on top of what is unfilled. */
static void test_grow_quiet(void **state)
{
	struct grow_sample now = { .size = 32 * MIB, .used = MIB, .inodes = 1024, .inodes_used = 10, .usec = 1 };
	struct grow_step g;
	uint64_t room;

	(void)state;
	area_grow_decide(NULL, &now, &plenty, &g);
	assert_false(g.grow);
	assert_false(g.barred);
	assert_int_equal(g.size, 32 * MIB);
	assert_int_equal(g.inodes, 1024);
	room = 14 * GIB - (31 * MIB + 1014 * AREA_GROW_INODE_BYTES);
	assert_int_equal(g.ceiling_size, 32 * MIB + room);
	assert_int_equal(g.ceiling_inodes, 1024 + room / AREA_GROW_INODE_BYTES);
}

/* Half of the inodes used: they double, the bytes stay. */
static void test_grow_at_half(void **state)
{
	struct grow_sample now = { .size = 32 * MIB, .used = 10 * MIB, .inodes = 1024, .inodes_used = 600 };
	struct grow_step g;

	(void)state;
	area_grow_decide(NULL, &now, &plenty, &g);
	assert_true(g.grow);
	assert_false(g.barred);
	assert_int_equal(g.size, 32 * MIB);
	assert_int_equal(g.inodes, 2048);
	now.used = 20 * MIB;
	now.inodes_used = 100;
	area_grow_decide(NULL, &now, &plenty, &g);
	assert_int_equal(g.size, 64 * MIB);
	assert_int_equal(g.inodes, 1024);
}

/* A writer at disk speed: the limit grows ahead of what the last
 * interval's rate fills in AREA_GROW_HORIZON_USEC, though the area is a
 * quarter full. */
static void test_grow_rate(void **state)
{
	struct grow_sample prev = { .size = 64 * MIB, .used = 0, .inodes = 1024, .inodes_used = 1, .usec = 1000000 };
	struct grow_sample now = prev;
	struct grow_step g;

	(void)state;
	now.used = 16 * MIB; /* in 100 ms: 160 MiB/s */
	now.usec += 100000;
	area_grow_decide(&prev, &now, &plenty, &g);
	assert_true(g.grow);
	assert_true(g.size >= 16 * MIB + 2 * 320 * MIB);
	assert_int_equal(g.size % 4096, 0);
	assert_int_equal(g.inodes, 1024);
}

/* memory-reserve takes all MemAvailable: nothing grows, the ceilings are
 * the limits. */
static void test_grow_barred(void **state)
{
	struct grow_sample now = { .size = 32 * MIB, .used = 32 * MIB, .inodes = 1024, .inodes_used = 1024 };
	struct grow_budget b = { .available = GIB, .reserve = GIB };
	struct grow_step g;

	(void)state;
	area_grow_decide(NULL, &now, &b, &g);
	assert_false(g.grow);
	assert_true(g.barred);
	assert_int_equal(g.ceiling_size, 32 * MIB);
	assert_int_equal(g.ceiling_inodes, 1024);
	/* the other growing areas' unfilled part counts as taken */
	b = (struct grow_budget){ .available = 4 * GIB, .reserve = GIB, .others = 3 * GIB };
	area_grow_decide(NULL, &now, &b, &g);
	assert_false(g.grow);
	assert_true(g.barred);
}

/* Memory for part of it: both limits get their share, within the room. */
static void test_grow_partial(void **state)
{
	struct grow_sample now = { .size = 32 * MIB, .used = 32 * MIB, .inodes = 1024, .inodes_used = 1024 };
	struct grow_budget b = { .available = 2 * GIB + 20 * MIB, .reserve = 2 * GIB };
	struct grow_step g;
	uint64_t spent;

	(void)state;
	area_grow_decide(NULL, &now, &b, &g);
	assert_true(g.grow);
	assert_true(g.barred);
	assert_true(g.size > 32 * MIB && g.size < 64 * MIB);
	assert_true(g.inodes > 1024 && g.inodes < 2048);
	spent = (g.size - now.size) + (g.inodes - now.inodes) * AREA_GROW_INODE_BYTES;
	assert_true(spent <= 20 * MIB);
	assert_int_equal(g.ceiling_size, 52 * MIB);
	/* a crumb of room is not worth a remount, unless the area is full */
	b.available = 2 * GIB + 512 * 1024;
	now.used = 20 * MIB;
	now.inodes_used = 100;
	now.size = 32 * MIB;
	area_grow_decide(NULL, &now, &b, &g);
	assert_false(g.grow);
}

static void test_grow_unfilled(void **state)
{
	struct grow_sample s = { .size = 10, .used = 20, .inodes = 5, .inodes_used = 3 };

	(void)state;
	assert_int_equal(area_grow_unfilled(&s), 2 * AREA_GROW_INODE_BYTES);
	s.inodes = UINT64_MAX;
	assert_int_equal(area_grow_unfilled(&s), UINT64_MAX);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bytes_configured),
		cmocka_unit_test(test_bytes_configured_not_whole), cmocka_unit_test(test_percent),
		cmocka_unit_test(test_auto_size),	 cmocka_unit_test(test_auto_minimums),
		cmocka_unit_test(test_auto_headroom),	 cmocka_unit_test(test_inodes_configured),
		cmocka_unit_test(test_c04_inodes_short), cmocka_unit_test(test_c05_bytes_short),
		cmocka_unit_test(test_both_short),	 cmocka_unit_test(test_zram_ext4),
		cmocka_unit_test(test_zram_other_fs),	 cmocka_unit_test(test_no_seed),
		cmocka_unit_test(test_survey_missing),	 cmocka_unit_test(test_huge),
		cmocka_unit_test(test_grow_quiet),	 cmocka_unit_test(test_grow_at_half),
		cmocka_unit_test(test_grow_rate),	 cmocka_unit_test(test_grow_barred),
		cmocka_unit_test(test_grow_partial),	 cmocka_unit_test(test_grow_unfilled),
		cmocka_unit_test(test_discard_option),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
