/* SPDX-License-Identifier: GPL-2.0-or-later */
/* util-linux's table conventions through libsmartcols (table_out.h). */
#include <errno.h>
#include <string.h>
#include <strings.h>

#include "table_out.h"

/* The index of the column named @name (@len bytes), or -1. */
static int column_index(const struct json_column *cols, size_t n, const char *name, size_t len)
{
	for (size_t i = 0; i < n; i++)
		if (strlen(cols[i].name) == len && strncasecmp(cols[i].name, name, len) == 0)
			return (int)i;
	return -1;
}

static bool picked(const struct table_pick *p, size_t idx)
{
	for (size_t i = 0; i < p->n; i++)
		if (p->idx[i] == idx)
			return true;
	return false;
}

int table_pick_parse(const char *list, const struct json_column *cols, size_t n, size_t n_default,
		     struct table_pick *ret, const char **ret_bad, size_t *ret_bad_len)
{
	struct table_pick p = { .n = 0 };
	const char *s = list;
	bool append = list && list[0] == '+';

	if (n > TABLE_MAX_COLUMNS || n_default > n)
		return -EINVAL;
	/* no list, or "+LIST": the default columns first */
	if (!list || list[0] == '+')
		for (; p.n < n_default; p.n++)
			p.idx[p.n] = p.n;
	if (list && list[0] == '+')
		s++;
	if (list && !s[0])
		return -EINVAL;
	while (list) {
		size_t len = strcspn(s, ",");
		int i = column_index(cols, n, s, len);

		if (len == 0)
			return -EINVAL;
		if (i < 0 || (!append && picked(&p, (size_t)i))) {
			*ret_bad = s;
			*ret_bad_len = len;
			return i < 0 ? -ENOENT : -EEXIST;
		}
		/* "+LIST" asks for columns besides those shown: one shown
		 * already stays where it is (a libsmartcols column is printed
		 * once; lsblk would print it a second time) */
		if (!picked(&p, (size_t)i))
			p.idx[p.n++] = (size_t)i;
		if (!s[len])
			break;
		s += len + 1;
	}
	*ret = p;
	return 0;
}

int table_pick_apply(struct libscols_table *tb, const struct table_pick *pick, bool raw, bool noheadings)
{
	struct libscols_column *sel[TABLE_MAX_COLUMNS], *prev = NULL;
	size_t n = scols_table_get_ncols(tb);
	int r = 0;

	/* the picked columns by pointer first: moving one renumbers the rest */
	for (size_t i = 0; i < pick->n; i++) {
		sel[i] = pick->idx[i] < n ? scols_table_get_column(tb, pick->idx[i]) : NULL;
		if (!sel[i])
			return -EINVAL;
	}
	for (size_t i = 0; i < n && r == 0; i++)
		if (!picked(pick, i)) {
			struct libscols_column *cl = scols_table_get_column(tb, i);

			r = scols_column_set_flags(cl, scols_column_get_flags(cl) | SCOLS_FL_HIDDEN);
		}
	for (size_t i = 0; i < pick->n && r == 0; i++) {
		r = scols_table_move_column(tb, prev, sel[i]);
		prev = sel[i];
	}
	if (r == 0)
		r = scols_table_enable_raw(tb, raw);
	if (r == 0)
		r = scols_table_enable_noheadings(tb, noheadings);
	return r < 0 ? r : r ? -EINVAL : 0;
}

void table_columns_usage(FILE *out, const char *title, const struct json_column *cols,
			 const char *const *help, size_t n, size_t n_default)
{
	fprintf(out, "\n%s:\n", title);
	for (size_t i = 0; i < n; i++)
		fprintf(out, " %c%18s  %s\n", i < n_default ? '*' : ' ', cols[i].name, help[i]);
}

const char *table_columns_join(const struct json_column *cols, size_t n, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < n && off < len; i++)
		off += snprintf(buf + off, len - off, "%s%s", i ? ", " : "", cols[i].name);
	return buf;
}
