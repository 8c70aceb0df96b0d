/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * JSON output through libsmartcols, made valid for scripts: libsmartcols
 * up to 2.38 prints an empty array cell as [null]; storaged's JSON has []
 * there (storaged(8), JSON OUTPUT).
 */
#ifndef STORAGED_JSON_OUT_H
#define STORAGED_JSON_OUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <libsmartcols.h>

/* One column of a table: scols_table_new_column()'s name, width hint and
 * flags, and the type of its JSON values (SCOLS_JSON_*). */
struct json_column {
	const char *name;
	double whint;
	int flags;
	int json_type;
};

/*
 * @name: the table's name (the JSON object's one key)
 * @json: print it as JSON (json_print_table()), else as text
 *
 * A column of numbers or booleans (SCOLS_JSON_NUMBER, _BOOLEAN) is
 * right-aligned in text, as lsblk's and findmnt's are (SCOLS_FL_RIGHT).
 * A JSON array column's cell holds one element per line (libsmartcols
 * splits a wrapped cell at newlines only with scols_wrapnl_*()).
 *
 * Returns: a new table (scols_unref_table() it), or NULL (no memory).
 */
struct libscols_table *json_table_new(const char *name, const struct json_column *cols, size_t n, bool json);

/*
 * @tb: a table without JSON, printed to its stream
 *
 * Prints @tb with each cell escaped as every message is
 * (text_escape_controls(): a control character or a byte that is not part
 * of a UTF-8 sequence as \ooo), so that a name reads the same in the
 * table and in the messages; libsmartcols alone would write \xNN.
 * A --raw table (scols_table_enable_raw()) is left to libsmartcols,
 * whose raw format writes blanks, '\' and such bytes as \xNN.
 *
 * Returns: 0, or negative errno (-ENOMEM, -EIO).
 */
int text_print_table(struct libscols_table *tb);

/*
 * @tb: a table with JSON enabled
 *
 * Prints @tb, with every array that holds only a null ("[ null ]", an
 * empty cell) printed as [].  A string "null" is quoted and stays.
 *
 * Returns: 0, or negative errno (-ENOMEM, -EIO from writing).
 */
int json_print_table(struct libscols_table *tb, FILE *out);

/*
 * @tbs: tables with JSON enabled, each printed as json_print_table() does
 *
 * Prints one JSON object that holds each table's array under its name
 * ({"a": [...], "b": [...]}), laid out as libsmartcols lays out one
 * table's: each name on its own line, three blanks in, "]," ending all
 * arrays but the last.
 *
 * Returns: 0, or negative errno (-ENOMEM, -EIO from writing).
 */
int json_print_tables(struct libscols_table *const *tbs, size_t n, FILE *out);

/*
 * @buf: JSON text as libsmartcols printed it, NUL-terminated
 *
 * Writes @buf with every byte that is not part of a UTF-8 sequence (a
 * mount point or label in another encoding: Linux paths are bytes) as the
 * text \xNN, its backslash escaped; RFC 8259 JSON must be UTF-8, and
 * libsmartcols copies the bytes as they are.  Such bytes occur only
 * inside strings, so the escape is always inside one.  status
 * --format=prometheus writes them the same way.
 *
 * Returns: 0, or -EIO when writing fails.
 */
int json_fputs(const char *buf, FILE *out);

/*
 * @buf: JSON text, NUL-terminated; rewritten in place (it only shrinks)
 *
 * Pure: the rewrite of json_print_table().
 */
void json_fix_empty_arrays(char *buf);

#endif
