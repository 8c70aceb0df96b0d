/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The reader storaged hands ini_parse_stream(): physical lines of a buffer,
 * counted, so that handlers can say file:line.  Shared by storaged.conf
 * (config.c) and the inventory fixture (inventory_fixture.c).
 */
#ifndef STORAGED_INI_READER_H
#define STORAGED_INI_READER_H

#include <stddef.h>

#include "shared/diag.h"

struct ini_lines {
	const char *file; /* name used in diagnostics */
	const char *buf; /* the text, @len bytes, not necessarily NUL-terminated */
	size_t len;
	size_t pos;
	unsigned lineno; /* physical line last handed to inih: the handler's line */
	unsigned headers; /* section header lines ("[...") handed to inih so far */
	/* line of the last of those headers, 0 before the first: inih names a
	 * section only with its keys, so this is where the one of the key
	 * being handled begins */
	unsigned header_line;
	/* called with a header's name (what lies between '[' and the first
	 * ']', @len bytes, not NUL-terminated) before the header reaches inih
	 * and is counted; NULL: none */
	void (*on_header)(void *user, const char *name, size_t len);
	void *user;
	const char *too_long_hint; /* appended to the over-long line error, or NULL */
	unsigned refused_line; /* the last line refused (too long, a control
				  character, a NUL), which inih never sees; 0: none */
	struct diag_list *diags;
	int r; /* -ENOMEM while appending a diagnostic: reading stops */
};

/*
 * @str: inih's line buffer, @num bytes (its build-time INI_MAX_LINE)
 * @stream: a struct ini_lines
 *
 * An ini_reader: copies the next physical line of the buffer into @str,
 * with its leading blanks removed and a '\n' appended, and counts it.  inih
 * runs the handler for a line before it asks for the next one, so
 * @stream->lineno is the line of the key being handled (the distribution's
 * inih is built without INI_HANDLER_LINENO).
 *
 * A line inih cannot take is reported here as "file:line: ..." and reaches
 * inih as an empty line, so its count and ours stay equal: a line of more
 * than @num - 2 bytes (inih would cut it and read the rest as a line of its
 * own), a NUL byte (inih reads C strings), a control byte other than tab or
 * a '\r' before the newline (not text).
 *
 * Returns: @str; NULL at the end of the buffer or after -ENOMEM (in
 * @stream->r).
 */
char *ini_lines_read(char *str, int num, void *stream);

#endif
