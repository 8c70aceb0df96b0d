/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * util-linux's table conventions for `scan` and `status`, as findmnt(8)
 * and lsblk(8) have them: -o/--output picks the columns and their order
 * ("+LIST" appends to the default ones), --raw prints one line per row
 * with blanks and control characters escaped (\x20), --noheadings leaves
 * out the heading line.  All of it is libsmartcols' own: hidden columns,
 * scols_table_move_column(), scols_table_enable_raw() and _noheadings().
 */
#ifndef STORAGED_TABLE_OUT_H
#define STORAGED_TABLE_OUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "json_out.h"

/* The most columns a table has (status has 23). */
#define TABLE_MAX_COLUMNS 32

/* Columns picked by -o: indexes into the table's json_column array, in
 * the order they are printed. */
struct table_pick {
	size_t idx[TABLE_MAX_COLUMNS];
	size_t n;
};

/*
 * @list: -o as given ("KIND,WHAT", "+NOFAIL"), or NULL for the defaults;
 *        names match the columns' case-insensitively, as lsblk's do
 * @n: how many of @cols (at most TABLE_MAX_COLUMNS)
 * @n_default: the first @n_default of @cols are the default ones
 * @ret: the columns picked; set only on success
 * @ret_bad: on -ENOENT and -EEXIST, the offending name in @list (not
 *           NUL-terminated) and its length in @ret_bad_len
 *
 * Pure.
 *
 * Returns: 0; -EINVAL for an empty list or an empty name ("A,,B"),
 * -ENOENT for a name no column has, -EEXIST for a column named twice
 * (libsmartcols prints a column once).  In "+LIST" a column already
 * shown (a default one, or one named before) is no error: it stays where
 * it is, and the rest are appended.
 */
int table_pick_parse(const char *list, const struct json_column *cols, size_t n, size_t n_default,
		     struct table_pick *ret, const char **ret_bad, size_t *ret_bad_len);

/*
 * @tb: a table whose columns are @cols in order, its lines filled
 * @pick: from table_pick_parse() over the same columns
 * @raw: scols_table_enable_raw()
 * @noheadings: scols_table_enable_noheadings()
 *
 * Hides every column @pick leaves out (in text and in JSON alike) and
 * moves the picked ones, with their cells, into @pick's order.
 *
 * Returns: 0, or negative errno from libsmartcols.
 */
int table_pick_apply(struct libscols_table *tb, const struct table_pick *pick, bool raw, bool noheadings);

/*
 * @title: the heading line, e.g. "Columns of status (-o)"
 * @help: what each column shows, parallel to @cols
 * @n_default: the first @n_default are the default ones
 *
 * Writes the list --help shows, one column a line, lsblk's way.
 */
void table_columns_usage(FILE *out, const char *title, const struct json_column *cols,
			 const char *const *help, size_t n, size_t n_default);

/*
 * @buf: receives their names, ", " between them (truncated to @len)
 *
 * Returns: @buf.
 */
const char *table_columns_join(const struct json_column *cols, size_t n, char *buf, size_t len);

#endif
