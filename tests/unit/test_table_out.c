/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * -o/--output, --raw, --noheadings (shared/table_out.c): the column list
 * as lsblk reads it, hostile lists refused with the name at fault, and
 * the table libsmartcols prints with the columns picked, hidden, moved
 * (their cells with them), raw and without headings.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "shared/table_out.h"
#include "shared/util.h"

static const struct json_column cols[] = {
	{ "KIND", 5, 0, SCOLS_JSON_STRING },
	{ "WHAT", 5, 0, SCOLS_JSON_STRING },
	{ "NOFAIL", 1, 0, SCOLS_JSON_BOOLEAN },
	{ "MOUNT_ID", 1, 0, SCOLS_JSON_NUMBER },
};

/* parse LIST with KIND and WHAT the defaults; the indexes as "0,1,3" */
static int pick(const char *list, char *buf, size_t len, const char **bad, size_t *bad_len)
{
	struct table_pick p = { .n = 99 };
	int r = table_pick_parse(list, cols, ARRAY_SIZE(cols), 2, &p, bad, bad_len);

	buf[0] = '\0';
	for (size_t i = 0; r == 0 && i < p.n; i++)
		snprintf(buf + strlen(buf), len - strlen(buf), "%s%zu", i ? "," : "", p.idx[i]);
	return r;
}

static void test_parse(void **unused)
{
	const char *bad = NULL;
	size_t bad_len = 0;
	char got[64];

	assert_int_equal(pick(NULL, got, sizeof(got), &bad, &bad_len), 0);
	assert_string_equal(got, "0,1");
	assert_int_equal(pick("MOUNT_ID,KIND", got, sizeof(got), &bad, &bad_len), 0);
	assert_string_equal(got, "3,0");
	assert_int_equal(pick("+nofail", got, sizeof(got), &bad, &bad_len), 0);
	assert_string_equal(got, "0,1,2");
	assert_int_equal(pick("Kind", got, sizeof(got), &bad, &bad_len), 0);
	assert_string_equal(got, "0");
}

static void test_parse_refused(void **unused)
{
	static const char *const empty[] = { "", "+", ",", "KIND,", ",KIND", "KIND,,WHAT" };
	const char *bad = NULL;
	size_t bad_len = 0;
	char got[64];

	for (size_t i = 0; i < ARRAY_SIZE(empty); i++)
		assert_int_equal(pick(empty[i], got, sizeof(got), &bad, &bad_len), -EINVAL);
	assert_int_equal(pick("KIND,MOUNT", got, sizeof(got), &bad, &bad_len), -ENOENT);
	assert_int_equal(bad_len, 5);
	assert_memory_equal(bad, "MOUNT", 5);
	/* a prefix of a name is not the name */
	assert_int_equal(pick("KIN", got, sizeof(got), &bad, &bad_len), -ENOENT);
	assert_int_equal(pick("WHAT,what", got, sizeof(got), &bad, &bad_len), -EEXIST);
	assert_memory_equal(bad, "what", 4);
}

/* "+LIST": a column shown already is no error (lsblk -o +NAME); it stays
 * where it is and is printed once */
static void test_parse_append_shown(void **unused)
{
	const char *bad = NULL;
	size_t bad_len = 0;
	char got[64];

	assert_int_equal(pick("+KIND", got, sizeof(got), &bad, &bad_len), 0);
	assert_string_equal(got, "0,1");
	assert_int_equal(pick("+what,MOUNT_ID,kind,mount_id", got, sizeof(got), &bad, &bad_len), 0);
	assert_string_equal(got, "0,1,3");
	/* still refused: a name that is no column */
	assert_int_equal(pick("+KIND,NOPE", got, sizeof(got), &bad, &bad_len), -ENOENT);
	assert_memory_equal(bad, "NOPE", 4);
}

/* The table as libsmartcols prints it, from two lines of cells. */
static char *print(const char *list, bool json, bool raw, bool noheadings)
{
	struct libscols_table *tb = json_table_new("t", cols, ARRAY_SIZE(cols), json);
	static const char *const cells[2][4] = { { "area", "my build", "0", NULL },
						 { "mount", "/srv", "1", "42" } };
	struct table_pick p;
	const char *bad;
	size_t bad_len, sz = 0;
	char *buf = NULL;
	FILE *m = open_memstream(&buf, &sz);

	assert_non_null(tb);
	assert_non_null(m);
	for (size_t l = 0; l < 2; l++) {
		struct libscols_line *ln = scols_table_new_line(tb, NULL);

		for (size_t c = 0; c < 4; c++)
			assert_int_equal(scols_line_set_data(ln, c, cells[l][c]), 0);
	}
	assert_int_equal(table_pick_parse(list, cols, ARRAY_SIZE(cols), 2, &p, &bad, &bad_len), 0);
	assert_int_equal(table_pick_apply(tb, &p, raw, noheadings), 0);
	scols_table_set_stream(tb, m);
	assert_int_equal(scols_print_table(tb), 0);
	fclose(m);
	scols_unref_table(tb);
	return buf;
}

static void test_apply(void **unused)
{
	char *s;

	s = print(NULL, false, true, false);
	assert_string_equal(s, "KIND WHAT\narea my\\x20build\nmount /srv\n");
	free(s);
	/* moved with their cells; the empty MOUNT_ID of the first line stays empty */
	s = print("MOUNT_ID,kind", false, true, true);
	assert_string_equal(s, " area\n42 mount\n");
	free(s);
	s = print("+NOFAIL", false, false, true);
	assert_string_equal(s, "area  my build      0\nmount /srv          1\n");
	free(s);
	/* numbers and flags right-aligned under their headings, as lsblk's */
	s = print("NOFAIL,MOUNT_ID,KIND", false, false, false);
	assert_string_equal(s, "NOFAIL MOUNT_ID KIND\n     0          area\n     1       42 mount\n");
	free(s);
	s = print("what,mount_id", true, false, false);
	assert_non_null(strstr(s, "\"what\": \"/srv\",\n         \"mount_id\": 42"));
	assert_null(strstr(s, "kind"));
	assert_null(strstr(s, "nofail"));
	free(s);
}

/* Two tables as one JSON object, laid out as libsmartcols lays out one:
 * no blank line, no comma on a line of its own (scan --json) */
static void test_json_two_tables(void **unused)
{
	struct libscols_table *tbs[2] = { json_table_new("a", cols, 2, true), json_table_new("b", cols, 2, true) };
	struct libscols_line *ln = tbs[0] ? scols_table_new_line(tbs[0], NULL) : NULL;
	size_t sz = 0;
	char *buf = NULL;
	FILE *m = open_memstream(&buf, &sz);

	assert_non_null(ln);
	assert_non_null(m);
	assert_int_equal(scols_line_set_data(ln, 0, "area"), 0);
	assert_int_equal(json_print_tables(tbs, 2, m), 0);
	fclose(m);
	assert_non_null(strstr(buf, "\n   ],\n   \"b\": ["));
	assert_true(strlen(buf) > 8);
	assert_string_equal(buf + strlen(buf) - 8, "\n   ]\n}\n");
	assert_null(strstr(buf, "\n,"));
	assert_int_equal(buf[0], '{');
	free(buf);
	scols_unref_table(tbs[0]);
	scols_unref_table(tbs[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_parse_refused),
		cmocka_unit_test(test_parse_append_shown),
		cmocka_unit_test(test_apply),
		cmocka_unit_test(test_json_two_tables),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
