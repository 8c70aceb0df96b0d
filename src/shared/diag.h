/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Diagnostics collected by the pure parsers and the planner.  Pure modules
 * never print: they append here and return an error, and the command level
 * prints every diagnostic once, as "file:line: message".
 */
#ifndef STORAGED_DIAG_H
#define STORAGED_DIAG_H

#include <stdio.h>

#include "shared/util.h"

enum diag_level {
	DIAG_ERROR,
	DIAG_WARNING,
	DIAG_INFO, /* what was done, for the log (a sync back at stop) */
};

struct diag {
	enum diag_level level;
	char *file; /* owned; NULL when not tied to a file */
	unsigned line; /* 1-based; 0 when not tied to a line */
	char *msg; /* owned */
};

struct diag_list {
	struct diag *v;
	size_t n;
};

/*
 * @file: file the problem is in, or NULL (copied)
 * @line: 1-based line, or 0
 * @fmt: printf format of the message: what is wrong and what to do
 *
 * Returns: 0, or -ENOMEM.
 */
int diag_add(struct diag_list *dl, enum diag_level level, const char *file, unsigned line,
	     const char *fmt, ...) _printf_(5, 6);

#define diag_error(dl, file, line, ...) diag_add((dl), DIAG_ERROR, (file), (line), __VA_ARGS__)
#define diag_warning(dl, file, line, ...) diag_add((dl), DIAG_WARNING, (file), (line), __VA_ARGS__)
#define diag_info(dl, file, line, ...) diag_add((dl), DIAG_INFO, (file), (line), __VA_ARGS__)

/*
 * @r: the error to return, a negative errno
 * @file, @line: as diag_add()
 *
 * Appends an error diagnostic and passes @r through, so that a parser can
 * say "return diag_errno(dl, -EINVAL, ...)" in one statement.
 *
 * Returns: @r, or -ENOMEM when the diagnostic could not be stored.
 */
int diag_errno(struct diag_list *dl, int r, const char *file, unsigned line, const char *fmt, ...)
	_printf_(5, 6);

/*
 * Returns: number of diagnostics of @level in @dl.
 */
size_t diag_count(const struct diag_list *dl, enum diag_level level);

/* "file:line: error: message" per line. */
void diag_print(const struct diag_list *dl, FILE *out);

/*
 * Appends every diagnostic of @from to @to, in order; @from is left
 * empty.  Returns: 0, or -ENOMEM (both lists untouched).
 */
int diag_move(struct diag_list *to, struct diag_list *from);

/*
 * Frees the diagnostics from index @from on that are not errors; the
 * errors keep their order.
 */
void diag_drop_warnings(struct diag_list *dl, size_t from);

/*
 * Frees every diagnostic; @dl is empty and reusable afterwards.
 */
void diag_list_done(struct diag_list *dl);

#endif
