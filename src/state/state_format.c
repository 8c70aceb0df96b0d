/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The one writer of the state format (state_internal.h), for the run state
 * (state.c) and the area records (state_area.c), and the string helpers
 * their readers share.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "state_internal.h"

/*
 * inih as built by distributions reads lines of at most 200 bytes, so a long
 * value (a deep mount point, a libmount error message) is written as
 * "key = first part" followed by "key+ = next part" lines.
 */
#define KV_PART_MAX 120

/*
 * Bytes written as a 4-byte octal escape, which mnt_unmangle() (the reader)
 * turns back into the byte: those of mnt_mangle() (space, tab, newline,
 * backslash), those inih trims from either end of a value (isspace: \r, \v,
 * \f), and ';' and '#', which start an inline comment after a space in
 * inih's default build, so that a value beginning with one survives the
 * " = " before it.
 */
static bool kv_escaped(char c)
{
	return c && strchr(" \t\n\r\v\f\\;#", c);
}

/* A value written as is: short enough for one line, nothing to escape. */
static bool kv_plain(const char *value)
{
	size_t n = 0;

	for (; value[n]; n++)
		if (n >= KV_PART_MAX || kv_escaped(value[n]))
			return false;
	return true;
}

int state_write_kv(FILE *f, const char *key, const char *value)
{
	const char *p = value;

	if (!value)
		return 0;
	if (kv_plain(value)) {
		fprintf(f, "%s = %s\n", key, value);
		return ferror(f) ? -EIO : 0;
	}
	do {
		size_t len = 0;

		fprintf(f, "%s%s = ", key, p == value ? "" : "+");
		for (; *p && len + (kv_escaped(*p) ? 4 : 1) <= KV_PART_MAX; p++) {
			if (kv_escaped(*p)) {
				fprintf(f, "\\%03o", (unsigned)(unsigned char)*p);
				len += 4;
			} else {
				fputc(*p, f);
				len++;
			}
		}
		fputc('\n', f);
	} while (*p);
	return ferror(f) ? -EIO : 0;
}

int state_write_uint(FILE *f, const char *key, uint64_t value)
{
	fprintf(f, "%s = %" PRIu64 "\n", key, value);
	return ferror(f) ? -EIO : 0;
}

int state_write_bool(FILE *f, const char *key, bool value)
{
	return state_write_kv(f, key, value ? "yes" : "no");
}

int state_replace_str(char **dst, const char *src)
{
	char *copy = NULL;

	if (src && !(copy = strdup(src)))
		return -ENOMEM;
	free(*dst);
	*dst = copy;
	return 0;
}

int state_append_str(char **dst, const char *more)
{
	size_t a = *dst ? strlen(*dst) : 0;
	char *n = realloc(*dst, a + strlen(more) + 1);

	if (!n)
		return -ENOMEM;
	strcpy(n + a, more);
	*dst = n;
	return 0;
}
