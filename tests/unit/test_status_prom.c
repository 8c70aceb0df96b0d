/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The Prometheus exposition of the status: label escaping (\\, \", \n,
 * bytes that are not UTF-8), each family once with HELP and TYPE, the
 * entries' state set, durations in seconds, syncs only where recorded.
 * (promtool checks the real output: tests/integration/t-metrics.sh.)
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "status/status_prom.h"

static void test_escape(void **state)
{
	char buf[64];

	(void)state;
	assert_string_equal(status_prom_escape("/srv/data", buf, sizeof(buf)), "/srv/data");
	assert_string_equal(status_prom_escape("a\"b\\c\nd", buf, sizeof(buf)), "a\\\"b\\\\c\\nd");
	/* valid UTF-8 stays, a stray byte becomes the text \xff */
	assert_string_equal(status_prom_escape("caf\xc3\xa9", buf, sizeof(buf)), "caf\xc3\xa9");
	assert_string_equal(status_prom_escape("a\xff", buf, sizeof(buf)), "a\\\\xff");
	/* overlong form, surrogate, cut sequence */
	assert_string_equal(status_prom_escape("\xc0\xaf", buf, sizeof(buf)), "\\\\xc0\\\\xaf");
	assert_string_equal(status_prom_escape("\xed\xa0\x80", buf, sizeof(buf)), "\\\\xed\\\\xa0\\\\x80");
	assert_string_equal(status_prom_escape("\xe2\x82", buf, sizeof(buf)), "\\\\xe2\\\\x82");
	assert_string_equal(status_prom_escape(NULL, buf, sizeof(buf)), "");
	/* cut at a whole escape */
	assert_string_equal(status_prom_escape("ab\"c", buf, 4), "ab");
}

static char *render(const struct prom_data *d)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	assert_non_null(f);
	assert_int_equal(status_prom_render(d, f), 0);
	fclose(f);
	return text;
}

/* how many lines of @text begin with @prefix and, unless NULL, end with
 * @suffix */
static unsigned count_ending(const char *text, const char *prefix, const char *suffix)
{
	unsigned n = 0;

	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		size_t len = strchr(p, '\n') ? (size_t)(strchr(p, '\n') - p) : strlen(p);

		n += strncmp(p, prefix, strlen(prefix)) == 0 &&
		     (!suffix || (len >= strlen(suffix) &&
				  strncmp(p + len - strlen(suffix), suffix, strlen(suffix)) == 0));
	}
	return n;
}

static unsigned count_lines(const char *text, const char *prefix)
{
	return count_ending(text, prefix, NULL);
}

static void test_render(void **state)
{
	struct prom_fs fs[] = {
		{ .fsid = "0f3c9e2a-1b7d-4c55-8e21-9a6b5c4d3e2f",
		  .label = "po\"ol",
		  .present = 1,
		  .expected = 2,
		  .stale = 1,
		  .mounted = true,
		  .degraded = true },
		{ .fsid = "a0000000-0000-4000-8000-000000000001", .present = 1, .expected = 1 },
	};
	struct area_status areas[] = {
		{ .name = "build",
		  .path = "/var/build",
		  .size_bytes = 33554432,
		  .used_bytes = 4096,
		  .avail_bytes = 33550336,
		  .inodes_total = 1000,
		  .inodes_used = 52,
		  .measured = true },
		/* out of inodes: writers see ENOSPC, the metric names the limit */
		{ .name = "full",
		  .path = "/var/full",
		  .size_bytes = 1048576,
		  .used_bytes = 65536,
		  .avail_bytes = 983040,
		  .inodes_total = 300000,
		  .inodes_used = 300000,
		  .measured = true },
		{ .name = "keep", .path = "/var/keep", .size_bytes = 16777216 },
	};
	struct prom_sync syncs[] = { { .area = "keep", .time_sec = 1764532800, .ok = false } };
	struct state_record recs[] = {
		{ .kind = STATE_MOUNT, .id = (char *)"/srv/a\nb", .status = STATE_DEGRADED, .duration_usec = 8250000 },
		{ .kind = STATE_BTRFS,
		  .id = (char *)"0f3c9e2a-1b7d-4c55-8e21-9a6b5c4d3e2f",
		  .status = STATE_INCOMPLETE,
		  .decision = DECISION_READ_ONLY,
		  .waited_usec = 5250000 },
		/* an older storaged's record: decided nothing it said */
		{ .kind = STATE_BTRFS, .id = (char *)"a0000000-0000-4000-8000-000000000001", .status = STATE_DONE },
	};
	struct state st = { .v = recs, .n = 3 };
	struct prom_data d = {
		.fs = fs, .n_fs = 2, .state = &st, .areas = areas, .n_areas = 3, .syncs = syncs, .n_syncs = 1,
		.collected_sec = 1764633600,
	};
	char *t;

	(void)state;
	t = render(&d);
	assert_non_null(strstr(t, "storaged_btrfs_members_present{fsid=\"0f3c9e2a-1b7d-4c55-8e21-9a6b5c4d3e2f\","
				  "label=\"po\\\"ol\"} 1\n"));
	assert_non_null(strstr(t, "storaged_btrfs_members_expected{fsid=\"0f3c9e2a-1b7d-4c55-8e21-9a6b5c4d3e2f\","
				  "label=\"po\\\"ol\"} 2\n"));
	assert_non_null(strstr(t, "storaged_btrfs_members_stale{fsid=\"0f3c9e2a-1b7d-4c55-8e21-9a6b5c4d3e2f\","
				  "label=\"po\\\"ol\"} 1\n"));
	assert_non_null(strstr(t, "storaged_btrfs_degraded{fsid=\"a0000000-0000-4000-8000-000000000001\","
				  "label=\"\"} 0\n"));
	assert_non_null(strstr(t, "storaged_area_size_bytes{area=\"build\",path=\"/var/build\"} 33554432\n"));
	assert_non_null(strstr(t, "storaged_area_used_bytes{area=\"build\",path=\"/var/build\"} 4096\n"));
	assert_non_null(strstr(t, "storaged_area_inodes{area=\"build\",path=\"/var/build\"} 1000\n"));
	assert_non_null(strstr(t, "storaged_area_inodes_used{area=\"build\",path=\"/var/build\"} 52\n"));
	assert_non_null(strstr(t, "storaged_area_full{area=\"full\",path=\"/var/full\",limit=\"inodes\"} 1\n"));
	assert_non_null(strstr(t, "storaged_area_full{area=\"full\",path=\"/var/full\",limit=\"bytes\"} 0\n"));
	assert_non_null(strstr(t, "storaged_area_full{area=\"build\",path=\"/var/build\",limit=\"inodes\"} 0\n"));
	assert_int_equal(count_ending(t, "storaged_area_full{", " 1"), 1);
	assert_int_equal(count_lines(t, "storaged_area_full{"), 6);
	/* a sync only where one was recorded */
	assert_non_null(strstr(t, "storaged_area_last_sync_timestamp_seconds{area=\"keep\",path=\"/var/keep\"} "
				  "1764532800\n"));
	assert_non_null(strstr(t, "storaged_area_last_sync_success{area=\"keep\",path=\"/var/keep\"} 0\n"));
	assert_int_equal(count_lines(t, "storaged_area_last_sync_success{"), 1);
	/* the state set: one sample per status, one of them 1 */
	assert_non_null(strstr(
		t, "storaged_entry_state{kind=\"mount\",entry=\"/srv/a\\nb\",state=\"degraded\"} 1\n"));
	assert_non_null(strstr(
		t, "storaged_entry_state{kind=\"mount\",entry=\"/srv/a\\nb\",state=\"done\"} 0\n"));
	assert_int_equal(count_lines(t, "storaged_entry_state{kind=\"mount\""), 11);
	assert_non_null(strstr(t, "storaged_entry_state{kind=\"btrfs\",entry=\"0f3c9e2a-1b7d-4c55-8e21-9a6b5c4d3e2f\","
				  "state=\"incomplete\"} 1\n"));
	assert_non_null(strstr(
		t, "storaged_entry_duration_seconds{kind=\"mount\",entry=\"/srv/a\\nb\"} 8.250000\n"));
	/* each family once, HELP then TYPE */
	assert_int_equal(count_lines(t, "# TYPE storaged_entry_state gauge"), 1);
	assert_int_equal(count_lines(t, "# HELP "), count_lines(t, "# TYPE "));
	/* the decision: a state set over the five words, and the wait */
	assert_non_null(strstr(t, "storaged_btrfs_decision{fsid=\"0f3c9e2a-1b7d-4c55-8e21-9a6b5c4d3e2f\","
				  "decision=\"read-only-by-policy\"} 1\n"));
	assert_non_null(strstr(t, "storaged_btrfs_decision{fsid=\"0f3c9e2a-1b7d-4c55-8e21-9a6b5c4d3e2f\","
				  "decision=\"complete\"} 0\n"));
	assert_int_equal(count_lines(t, "storaged_btrfs_decision{"), 5);
	assert_non_null(strstr(t, "storaged_btrfs_wait_seconds{fsid=\"0f3c9e2a-1b7d-4c55-8e21-9a6b5c4d3e2f\"} 5.250\n"));
	assert_int_equal(count_lines(t, "storaged_btrfs_wait_seconds{"), 1);
	assert_int_equal(count_lines(t, "# TYPE "), 21);
	assert_int_equal(count_lines(t, "# TYPE storaged_"), 21);
	assert_null(strstr(t, "_total"));
	/* who wrote the metrics and when: what an alert tells stale ones by */
	assert_non_null(strstr(t, "\nstoraged_build_info{version=\"" PACKAGE_VERSION "\"} 1\n"));
	assert_non_null(strstr(t, "\nstoraged_metrics_timestamp_seconds 1764633600\n"));
	free(t);
}

/* The live check's states, as `storaged status` shows them: an entry
 * unmounted by hand is gone, not done; an area's state is a state set of
 * its own; a duration never recorded has no sample (JSON: null). */
static void test_render_live(void **state)
{
	struct area_status areas[] = {
		{ .name = "logs", .path = "/var/log", .state = AREA_STATE_COVERED },
	};
	struct state_record recs[] = {
		{ .kind = STATE_MOUNT, .id = (char *)"/srv/gone", .status = STATE_DONE, .duration_usec = 1500000 },
		{ .kind = STATE_MOUNT, .id = (char *)"/srv/over", .status = STATE_DONE },
		{ .kind = STATE_MOUNT, .id = (char *)"/srv/fine", .status = STATE_DONE, .duration_usec = 2000 },
	};
	enum live_status live[] = { LIVE_GONE, LIVE_REPLACED, LIVE_AS_RECORDED };
	struct state st = { .v = recs, .n = 3 };
	struct prom_data d = { .state = &st, .live = live, .areas = areas, .n_areas = 1 };
	static const char *const want[] = {
		"storaged_entry_state{kind=\"mount\",entry=\"/srv/gone\",state=\"gone\"} 1\n",
		"storaged_entry_state{kind=\"mount\",entry=\"/srv/gone\",state=\"done\"} 0\n",
		"storaged_entry_state{kind=\"mount\",entry=\"/srv/over\",state=\"replaced\"} 1\n",
		"storaged_entry_state{kind=\"mount\",entry=\"/srv/fine\",state=\"done\"} 1\n",
		"storaged_entry_state{kind=\"mount\",entry=\"/srv/fine\",state=\"gone\"} 0\n",
		"storaged_area_state{area=\"logs\",path=\"/var/log\",state=\"covered\"} 1\n",
		"storaged_area_state{area=\"logs\",path=\"/var/log\",state=\"active\"} 0\n",
		"storaged_entry_duration_seconds{kind=\"mount\",entry=\"/srv/gone\"} 1.500000\n",
		"storaged_entry_duration_seconds{kind=\"mount\",entry=\"/srv/fine\"} 0.002000\n",
	};
	char *t;

	(void)state;
	t = render(&d);
	for (size_t i = 0; i < ARRAY_SIZE(want); i++)
		assert_non_null(strstr(t, want[i]));
	/* eleven states per entry: eight recorded, gone, replaced, interrupted */
	assert_int_equal(count_lines(t, "storaged_entry_state{"), 33);
	assert_int_equal(count_ending(t, "storaged_entry_state{", " 1"), 3);
	/* active, gone, covered, degraded, interrupted */
	assert_int_equal(count_lines(t, "storaged_area_state{"), 5);
	assert_null(strstr(t, "storaged_entry_duration_seconds{kind=\"mount\",entry=\"/srv/over\"}"));
	free(t);
}

static void test_render_one_state(void **state)
{
	struct state_record recs[] = {
		{ .kind = STATE_MOUNT, .id = (char *)"/a", .status = STATE_DEGRADED },
		{ .kind = STATE_MOUNT, .id = (char *)"/b", .status = STATE_DONE },
	};
	/* degraded by the record, degraded by the live check: one 1 each */
	enum live_status live[] = { LIVE_DEGRADED, LIVE_DEGRADED };
	struct state st = { .v = recs, .n = 2 };
	struct prom_data d = { .state = &st, .live = live };
	char *t;

	(void)state;
	t = render(&d);
	assert_int_equal(count_ending(t, "storaged_entry_state{kind=\"mount\",entry=\"/a\"", " 1"), 1);
	assert_int_equal(count_ending(t, "storaged_entry_state{kind=\"mount\",entry=\"/b\"", " 1"), 1);
	assert_non_null(strstr(t, "storaged_entry_state{kind=\"mount\",entry=\"/b\",state=\"degraded\"} 1\n"));
	free(t);
}

static void test_render_empty(void **state)
{
	struct prom_data d = { 0 };
	char *t;

	(void)state;
	t = render(&d);
	/* families without samples: HELP and TYPE only; build_info always,
	 * no collection time when it is not known */
	assert_int_equal(count_lines(t, "# TYPE "), 20);
	assert_int_equal(count_lines(t, "storaged_"), 1);
	assert_int_equal(count_lines(t, "storaged_build_info{"), 1);
	assert_null(strstr(t, "storaged_metrics_timestamp_seconds"));
	free(t);
}

/* a start left unfinished: one sample of its run row, 1; none else */
static void test_render_unfinished(void **state)
{
	struct prom_data d = { .unfinished = true };
	char *t;

	(void)state;
	t = render(&d);
	assert_int_equal(count_lines(t, "storaged_entry_state{"), 1);
	assert_non_null(strstr(t, "storaged_entry_state{kind=\"run\",entry=\"start\",state=\"interrupted\"} 1\n"));
	free(t);
	d.unfinished = false;
	t = render(&d);
	assert_int_equal(count_lines(t, "storaged_entry_state{"), 0);
	free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_escape),	     cmocka_unit_test(test_render),
		cmocka_unit_test(test_render_live),  cmocka_unit_test(test_render_one_state),
		cmocka_unit_test(test_render_empty), cmocka_unit_test(test_render_unfinished),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
