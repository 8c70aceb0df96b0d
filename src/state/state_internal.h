/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the files of the state folder share, and nothing else includes: the
 * format of the run state (state.c) and of an area's record (state_area.c),
 * written by state_format.c alone: ini, values mangled as in
 * /proc/self/mountinfo, long values on "key+" continuation lines.
 */
#ifndef STORAGED_STATE_INTERNAL_H
#define STORAGED_STATE_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "shared/kv_record.h"
#include "state.h"

/* Writes "key = value" (nothing for a NULL @value), mangled as
 * mnt_unmangle() reads it back (also the bytes inih would trim or take for
 * a comment) and split into "key+ = ..." lines of at most 120 bytes of
 * value for inih's 200-byte lines.  Returns: 0; -EIO when @f is in error
 * (ferror: also an earlier write's). */
int state_write_kv(FILE *f, const char *key, const char *value);

/* "key = N" in decimal.  Returns: as state_write_kv(). */
int state_write_uint(FILE *f, const char *key, uint64_t value);

/* "key = yes" or "key = no".  Returns: as state_write_kv(). */
int state_write_bool(FILE *f, const char *key, bool value);

/* *@dst = a copy of @src (NULL: NULL), the old value freed.  Returns: 0 or -ENOMEM. */
int state_replace_str(char **dst, const char *src);

/* Appends @more to *@dst (a continuation line).  Returns: 0 or -ENOMEM. */
int state_append_str(char **dst, const char *more);

/* mkdir(@dir, 0755), an existing one accepted.  Returns: 0 or negative errno. */
int state_mkdir(const char *dir);

/* state_btrfs.c: the fields of a run state's record, in the order written
 * (the loader reads "kind" and "complete" itself). */
#define STATE_RECORD_N_FIELDS 26
extern const struct kv_field state_record_fields[STATE_RECORD_N_FIELDS];

/* state_btrfs.c: the kind named @name.  Returns: it, as an int; -EINVAL
 * for an unknown name. */
int state_kind_from_name(const char *name);

#endif
