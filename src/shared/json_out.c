/* SPDX-License-Identifier: GPL-2.0-or-later */
/* JSON output through libsmartcols (json_out.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "json_out.h"
#include "util.h"

static const char *skip_space(const char *p)
{
	while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r')
		p++;
	return p;
}

void json_fix_empty_arrays(char *buf)
{
	char *w = buf;
	bool in_string = false, escaped = false;

	for (const char *r = buf; *r;) {
		const char *q;

		if (in_string) {
			in_string = escaped || *r != '"';
			escaped = !escaped && *r == '\\';
			*w++ = *r++;
			continue;
		}
		if (*r == '"')
			in_string = true;
		/* "[", blanks, "null", blanks, "]": an empty cell */
		if (*r == '[' && (q = skip_space(r + 1), strncmp(q, "null", 4) == 0) &&
		    *(q = skip_space(q + 4)) == ']') {
			*w++ = '[';
			*w++ = ']';
			r = q + 1;
			continue;
		}
		*w++ = *r++;
	}
	*w = '\0';
}

int json_fputs(const char *buf, FILE *out)
{
	const unsigned char *s = (const unsigned char *)buf;

	while (*s) {
		size_t n = utf8_char_len(s);

		if (n == 0 ? fprintf(out, "\\\\x%02x", *s) < 0 : fwrite(s, 1, n, out) != n)
			return -EIO;
		s += n ? n : 1;
	}
	return 0;
}

struct libscols_table *json_table_new(const char *name, const struct json_column *cols, size_t n, bool json)
{
	struct libscols_table *tb = scols_new_table();
	int r = tb && scols_table_set_name(tb, name) == 0 && scols_table_enable_json(tb, json) == 0 ? 0 : -ENOMEM;

	for (size_t i = 0; r == 0 && i < n; i++) {
		bool array = json && (cols[i].json_type == SCOLS_JSON_ARRAY_STRING ||
				      cols[i].json_type == SCOLS_JSON_ARRAY_NUMBER);
		/* numbers and flags right-aligned, as lsblk's SIZE and RO are */
		bool right = cols[i].json_type == SCOLS_JSON_NUMBER || cols[i].json_type == SCOLS_JSON_BOOLEAN;
		struct libscols_column *cl =
			scols_table_new_column(tb, cols[i].name, cols[i].whint,
					       cols[i].flags | (array ? SCOLS_FL_WRAP : 0) | (right ? SCOLS_FL_RIGHT : 0));

		if (!cl || scols_column_set_json_type(cl, cols[i].json_type) < 0 ||
		    (array && scols_column_set_wrapfunc(cl, scols_wrapnl_chunksize, scols_wrapnl_nextchunk, NULL) < 0))
			r = -ENOMEM;
	}
	if (r < 0) {
		scols_unref_table(tb);
		return NULL;
	}
	return tb;
}

/* @tb's JSON text as libsmartcols prints it, empty arrays fixed.
 * Returns: 0 and *@ret (caller frees), or -ENOMEM. */
static int table_text(struct libscols_table *tb, FILE *out, char **ret)
{
	char *buf = NULL;
	size_t sz = 0;
	FILE *m = open_memstream(&buf, &sz);
	int r;

	if (!m)
		return -ENOMEM;
	r = scols_table_set_stream(tb, m);
	if (r == 0)
		r = scols_print_table(tb);
	if (fclose(m) != 0 && r == 0)
		r = -ENOMEM;
	scols_table_set_stream(tb, out);
	if (r != 0) {
		free(buf);
		return -ENOMEM;
	}
	json_fix_empty_arrays(buf);
	*ret = buf;
	return 0;
}

int json_print_table(struct libscols_table *tb, FILE *out)
{
	return json_print_tables(&tb, 1, out);
}

int json_print_tables(struct libscols_table *const *tbs, size_t n, FILE *out)
{
	int r = 0;

	for (size_t i = 0; i < n && r == 0; i++) {
		char *buf = NULL, *open, *close, *from, *to;

		r = table_text(tbs[i], out, &buf);
		if (r < 0)
			break;
		/* one object, its members joined as libsmartcols joins them
		 * ("],\n" then the next name on its own line): the first
		 * table's opening and the last one's closing are kept, the
		 * lines between them left out */
		open = strchr(buf, '{');
		close = strrchr(buf, '}');
		to = close ? close : buf;
		while (to > buf && (to[-1] == '\n' || to[-1] == ' '))
			to--;
		if (!open || !close || close < open || to <= open)
			r = -EIO;
		else {
			from = i ? open + 1 + strspn(open + 1, "\n") : buf;
			if (i + 1 < n)
				*to = '\0';
			r = json_fputs(from, out);
			if (r == 0 && i + 1 < n && fputs(",\n", out) < 0)
				r = -EIO;
		}
		free(buf);
	}
	return r;
}

/* One cell's text escaped as storaged's messages escape it.  Returns: 0,
 * or -ENOMEM. */
static int escape_cell(struct libscols_cell *ce)
{
	const char *data = scols_cell_get_data(ce);
	/* every byte at most \ooo; text_escape_controls() stops where less
	 * than one escape and the NUL are left, so the whole cell needs 5 more */
	size_t len = data ? strlen(data) * 4 + 5 : 0;
	_cleanup_free_ char *buf = NULL;

	if (!data || !(buf = malloc(len)))
		return data ? -ENOMEM : 0;
	text_escape_controls(data, buf, len);
	return strcmp(buf, data) == 0 || scols_cell_set_data(ce, buf) == 0 ? 0 : -ENOMEM;
}

int text_print_table(struct libscols_table *tb)
{
	struct libscols_iter *itr = scols_new_iter(SCOLS_ITER_FORWARD);
	struct libscols_line *ln;
	size_t ncols = scols_table_get_ncols(tb);
	int r = itr ? 0 : -ENOMEM;

	/* --raw is lsblk's machine format: libsmartcols writes blanks, '\\'
	 * and every byte it cannot print as \xNN, which a cell escaped here
	 * first would only double */
	while (r == 0 && !scols_table_is_raw(tb) && scols_table_next_line(tb, itr, &ln) == 0)
		for (size_t i = 0; r == 0 && i < ncols; i++)
			r = ln && scols_line_get_cell(ln, i) ? escape_cell(scols_line_get_cell(ln, i)) : 0;
	scols_free_iter(itr);
	return r == 0 && scols_print_table(tb) != 0 ? -EIO : r;
}
