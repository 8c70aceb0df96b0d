/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the files of the state folder share, and nothing else includes.  The
 * run state (state.c) and an area's record (state_area.c) are tables of
 * the keyed-record codec (shared/kv_record.h).
 */
#ifndef STORAGED_STATE_INTERNAL_H
#define STORAGED_STATE_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "shared/kv_record.h"
#include "state.h"

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
