/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Physical lines for inih; see ini_reader.h.  No lexing happens here: inih
 * splits sections, keys, values and comments.  The one transform is the
 * removal of leading blanks, because inih reads an indented line as the
 * continuation of the previous value (INI_ALLOW_MULTILINE, on by default
 * and in Debian's package), which storaged.conf does not have: an indented
 * key stays a key.
 */
#include <stdbool.h>
#include <string.h>

#include "ini_reader.h"

/* A diagnostic that could not be appended stops the reading. */
static void lines_oom(struct ini_lines *l, int r)
{
	if (r < 0 && l->r == 0)
		l->r = r;
}

/* Returns: true when inih can take the @n bytes of @raw as one line. */
static bool line_ok(struct ini_lines *l, const char *raw, size_t n, size_t max)
{
	const char *nul = memchr(raw, '\0', n);

	if (nul) {
		l->refused_line = l->lineno;
		lines_oom(l, diag_error(l->diags, l->file, l->lineno,
					"NUL byte at column %zu: this is not a text file",
					(size_t)(nul - raw) + 1));
		return false;
	}
	if (n > max) {
		l->refused_line = l->lineno;
		lines_oom(l, diag_error(l->diags, l->file, l->lineno,
					"line longer than %zu bytes (inih's limit)%s", max,
					l->too_long_hint ? l->too_long_hint : ""));
		return false;
	}
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)raw[i];

		if (ch == '\r' && i == n - 1)
			continue; /* CRLF: inih strips it with the trailing blanks */
		if ((ch < 0x20 && ch != '\t') || ch == 0x7f) {
			l->refused_line = l->lineno;
			lines_oom(l, diag_error(l->diags, l->file, l->lineno,
						"control character 0x%02x at column %zu", ch, i + 1));
			return false;
		}
	}
	return true;
}

char *ini_lines_read(char *str, int num, void *stream)
{
	struct ini_lines *l = stream;
	const char *raw = l->buf + l->pos;
	const char *nl, *close;
	size_t n, skip;

	/* room for one byte, the '\n' and the NUL, or nothing can be passed */
	if (l->r < 0 || l->pos >= l->len || num < 3)
		return NULL;
	nl = memchr(raw, '\n', l->len - l->pos);
	n = nl ? (size_t)(nl - raw) : l->len - l->pos;
	l->pos += n + (nl ? 1 : 0);
	l->lineno++;
	if (!line_ok(l, raw, n, (size_t)num - 2)) {
		memcpy(str, "\n", 2);
		return str;
	}
	for (skip = 0; skip < n && (raw[skip] == ' ' || raw[skip] == '\t'); skip++)
		;
	/* as inih tells a header: '[' first (after blanks), a ']' after it;
	 * it names the section only with the keys, so a header repeating the
	 * section before it is seen only by this count */
	if (skip < n && raw[skip] == '[' && (close = memchr(raw + skip, ']', n - skip))) {
		if (l->on_header)
			l->on_header(l->user, raw + skip + 1, (size_t)(close - raw - skip - 1));
		l->headers++;
		l->header_line = l->lineno;
	}
	memcpy(str, raw + skip, n - skip);
	memcpy(str + n - skip, "\n", 2);
	return str;
}
