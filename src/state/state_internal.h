/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The format shared by state.c (the run state) and state_area.c (one area's
 * record): ini, values mangled as in /proc/self/mountinfo, long values on
 * "key+" continuation lines.  Included by those two files only.
 */
#ifndef STORAGED_STATE_INTERNAL_H
#define STORAGED_STATE_INTERNAL_H

#include <stdio.h>

/* Writes "key = value" (nothing for a NULL @value), mangled and split into
 * "key+ = ..." lines of at most 120 bytes of value for inih's 200-byte
 * lines.  Returns: 0 or -ENOMEM. */
int state_write_kv(FILE *f, const char *key, const char *value);

/* *@dst = a copy of @src (NULL: NULL), the old value freed.  Returns: 0 or -ENOMEM. */
int state_replace_str(char **dst, const char *src);

/* Appends @more to *@dst (a continuation line).  Returns: 0 or -ENOMEM. */
int state_append_str(char **dst, const char *more);

#endif
