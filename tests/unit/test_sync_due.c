/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * When a periodic sync is due (state/sync_due.c), with the clocks injected:
 * from the last sync's monotonic time in this boot, else from the
 * resident's start; the wall clock of a record moves nothing; a record of
 * another boot or from an older storaged counts from the start; a record
 * in the future postpones by at most one interval.  And the record itself
 * (status_prom_note_sync()/read_sync()) carries the monotonic time and
 * reads the older short form.
 */
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

#include "state/sync_due.h"
#include "status/status_prom.h"
#include "shared/util.h"

#define SEC USEC_PER_SEC
#define BOOT "0b3f2c4e-6a1d-4f7e-9c2b-1d2e3f4a5b6c"
#define OTHER "9e8d7c6b-5a49-4837-a261-504f3e2d1c0b"

static struct sync_mark mark(uint64_t mono, const char *boot)
{
	struct sync_mark m = { .mono_usec = mono };

	snprintf(m.boot_id, sizeof(m.boot_id), "%s", boot);
	return m;
}

/* Never synced: due one interval after the resident began. */
static void test_never_synced(void **unused)
{
	assert_int_equal(sync_wait_usec(NULL, BOOT, 100 * SEC, 60 * SEC, 100 * SEC), 60 * SEC);
	assert_int_equal(sync_wait_usec(NULL, BOOT, 100 * SEC, 60 * SEC, 130 * SEC), 30 * SEC);
	assert_int_equal(sync_wait_usec(NULL, BOOT, 100 * SEC, 60 * SEC, 160 * SEC), 0);
	assert_int_equal(sync_wait_usec(NULL, BOOT, 100 * SEC, 60 * SEC, 999 * SEC), 0);
}

/* Synced in this boot: due one interval after that sync, before or after
 * the resident began (a resident started late syncs what is overdue at
 * once, not an interval later). */
static void test_last_sync_in_this_boot(void **unused)
{
	struct sync_mark m = mark(500 * SEC, BOOT);

	assert_int_equal(sync_wait_usec(&m, BOOT, 100 * SEC, 60 * SEC, 520 * SEC), 40 * SEC);
	assert_int_equal(sync_wait_usec(&m, BOOT, 100 * SEC, 60 * SEC, 560 * SEC), 0);
	m = mark(30 * SEC, BOOT);
	assert_int_equal(sync_wait_usec(&m, BOOT, 100 * SEC, 60 * SEC, 100 * SEC), 0);
}

/* The monotonic time of another boot, a record without one, or no boot id
 * to compare with: counted from the resident's start. */
static void test_other_boot_or_no_mark(void **unused)
{
	struct sync_mark other = mark(500 * SEC, OTHER), none = { 0 };

	assert_int_equal(sync_wait_usec(&other, BOOT, 100 * SEC, 60 * SEC, 120 * SEC), 40 * SEC);
	assert_int_equal(sync_wait_usec(&none, BOOT, 100 * SEC, 60 * SEC, 120 * SEC), 40 * SEC);
	other = mark(500 * SEC, BOOT);
	assert_int_equal(sync_wait_usec(&other, "", 100 * SEC, 60 * SEC, 120 * SEC), 40 * SEC);
}

/* A base later than now (a record from another time namespace) cannot
 * postpone the sync past one interval from now. */
static void test_future_base(void **unused)
{
	struct sync_mark m = mark(10000 * SEC, BOOT);

	assert_int_equal(sync_wait_usec(&m, BOOT, 100 * SEC, 60 * SEC, 200 * SEC), 60 * SEC);
	assert_int_equal(sync_wait_usec(NULL, BOOT, 900 * SEC, 60 * SEC, 200 * SEC), 60 * SEC);
	/* an interval that would overflow never wraps to "due now" */
	assert_true(sync_wait_usec(NULL, BOOT, 100 * SEC, UINT64_MAX - 10, 200 * SEC) > 0);
}

static char *scratch(void)
{
	char *dir = strdup("/tmp/test_sync_due.XXXXXX");

	assert_non_null(dir);
	assert_non_null(mkdtemp(dir));
	return dir;
}

static void put(const char *dir, const char *name, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/last-sync", dir);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/last-sync/%s", dir, name);
	f = fopen(path, "we");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void cleanup(char *dir)
{
	char cmd[600];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
	free(dir);
}

/* The wall-clock stamp of the record is read for people, and only the
 * monotonic mark decides: two records that differ only in their wall
 * clock (stepped a day either way) give the same wait. */
static void test_record_wall_clock_moves_nothing(void **unused)
{
	char *dir = scratch();
	struct prom_sync a, b;

	put(dir, "early", "1000000000 ok 500000000 " BOOT "\n");
	put(dir, "late", "1000172800 ok 500000000 " BOOT "\n");
	assert_int_equal(status_prom_read_sync(dir, "early", &a), 0);
	assert_int_equal(status_prom_read_sync(dir, "late", &b), 0);
	assert_int_equal(a.time_sec, 1000000000);
	assert_int_equal(a.mark.mono_usec, 500 * SEC);
	assert_string_equal(a.mark.boot_id, BOOT);
	assert_int_equal(sync_wait_usec(&a.mark, BOOT, 0, 60 * SEC, 520 * SEC),
			 sync_wait_usec(&b.mark, BOOT, 0, 60 * SEC, 520 * SEC));
	cleanup(dir);
}

/* An older storaged's "SECONDS ok|failed" still reads, with no mark;
 * a damaged mark is a bad record. */
static void test_record_forms(void **unused)
{
	char *dir = scratch();
	struct prom_sync s;

	put(dir, "old", "1764532800 failed\n");
	assert_int_equal(status_prom_read_sync(dir, "old", &s), 0);
	assert_false(s.ok);
	assert_int_equal(s.mark.mono_usec, 0);
	put(dir, "bad", "1764532800 ok 12x " BOOT "\n");
	assert_int_equal(status_prom_read_sync(dir, "bad", &s), -EBADMSG);
	put(dir, "short", "1764532800 ok 12 abc\n");
	assert_int_equal(status_prom_read_sync(dir, "short", &s), -EBADMSG);
	put(dir, "word", "1764532800 okay\n");
	assert_int_equal(status_prom_read_sync(dir, "word", &s), -EBADMSG);
	cleanup(dir);
}

/* What status_prom_note_sync() writes carries this boot's id and a
 * monotonic time between the two clock readings around it. */
static void test_note_writes_the_mark(void **unused)
{
	char *dir = scratch(), boot[SYNC_BOOT_ID_LEN];
	uint64_t before = now_monotonic_usec(), after;
	struct prom_sync s;

	if (sync_read_boot_id(SYNC_BOOT_ID_PATH, boot) < 0) {
		cleanup(dir);
		skip();
	}
	assert_int_equal(status_prom_note_sync(dir, "a", true), 0);
	after = now_monotonic_usec();
	assert_int_equal(status_prom_read_sync(dir, "a", &s), 0);
	assert_true(s.ok);
	assert_string_equal(s.mark.boot_id, boot);
	assert_true(s.mark.mono_usec >= before && s.mark.mono_usec <= after);
	cleanup(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_never_synced),
		cmocka_unit_test(test_last_sync_in_this_boot),
		cmocka_unit_test(test_other_boot_or_no_mark),
		cmocka_unit_test(test_future_base),
		cmocka_unit_test(test_record_wall_clock_moves_nothing),
		cmocka_unit_test(test_record_forms),
		cmocka_unit_test(test_note_writes_the_mark),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
