/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The names of the state's kinds and statuses, and the fields of its
 * records (state.h) as the codec reads and writes them (kv_record.h),
 * among them a btrfs filesystem's: what the wait for its members found,
 * and what storaged decided then.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "state.h"
#include "state_internal.h"
#include "shared/util.h"

static const char *const status_names[] = {
	[STATE_WAITING] = "waiting",
	[STATE_MOUNTING] = "mounting",
	[STATE_DONE] = "done",
	[STATE_DEGRADED] = "degraded",
	[STATE_INCOMPLETE] = "incomplete",
	[STATE_PRESENT] = "present",
	[STATE_FAILED] = "failed",
	[STATE_SKIPPED] = "skipped",
};
static const char *const kind_names[] = {
	[STATE_MOUNT] = "mount",
	[STATE_AREA] = "area",
	[STATE_BTRFS] = "btrfs",
};

const char *state_status_name(enum state_status st)
{
	return status_names[st];
}

const char *state_kind_name(enum state_kind k)
{
	return kind_names[k];
}

int state_kind_from_name(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(kind_names); i++)
		if (strcmp(kind_names[i], name) == 0)
			return (int)i;
	return -EINVAL;
}

static const char *const decision_names[] = {
	[DECISION_NONE] = NULL,
	[DECISION_COMPLETE] = "complete",
	[DECISION_DEGRADED] = "degraded-by-policy",
	[DECISION_READ_ONLY] = "read-only-by-policy",
	[DECISION_REFUSED] = "refused",
	[DECISION_STALE_REFUSED] = "stale-refused",
};

const char *state_decision_name(enum btrfs_decision d)
{
	return d <= DECISION_LAST ? decision_names[d] : NULL;
}

#define ROW(key, kv_type, ...) { .name = #key, .off = offsetof(struct state_record, key), .type = kv_type, __VA_ARGS__ }
#define LAX .flags = KV_LAX
#define NAMES(v) .names = (v), .n_names = ARRAY_SIZE(v)
/* written for a mount storaged made, which has the identity of its root */
#define MADE .flags = KV_LAX | KV_GATED, .gate = offsetof(struct state_record, mount_root_ino)
/* written for a btrfs record whose wait counted the members; some only when set */
#define COUNTED(more) .flags = KV_LAX | KV_GATED | (more), .gate = offsetof(struct state_record, members_expected)

_Static_assert(sizeof(enum state_kind) == sizeof(int) && sizeof(enum state_status) == sizeof(int) &&
		       sizeof(enum btrfs_decision) == sizeof(int),
	       "KV_ENUM reads and writes an int");

/*
 * In the order written.  A value this storaged cannot use (a number out of
 * range, a decision it does not know: a newer one's) is ignored; a status
 * or a flag it cannot read makes the file corrupt.
 */
const struct kv_field state_record_fields[STATE_RECORD_N_FIELDS] = {
	ROW(kind, KV_ENUM, NAMES(kind_names)),
	ROW(id, KV_STR, LAX),
	ROW(source, KV_STR, LAX),
	ROW(fstype, KV_STR, LAX),
	ROW(reason, KV_STR, LAX),
	ROW(mountpoint, KV_STR, LAX),
	ROW(status, KV_ENUM, NAMES(status_names)),
	ROW(seq, KV_U32, LAX),
	ROW(duration_usec, KV_U64, LAX),
	ROW(nofail, KV_BOOL),
	ROW(recursive, KV_BOOL),
	ROW(mount_id, KV_U32, LAX),
	ROW(mount_unique_id, KV_U64, LAX),
	ROW(mount_root_dev, KV_U64, MADE),
	ROW(mount_root_ino, KV_U64, MADE),
	ROW(mount_root_btime_ns, KV_U64, MADE),
	ROW(members_present, KV_U64, COUNTED(0)),
	ROW(members_expected, KV_U64, COUNTED(0)),
	ROW(waited_usec, KV_U64, COUNTED(KV_NONZERO)),
	ROW(members_note, KV_STR, COUNTED(0)),
	ROW(decision, KV_ENUM, COUNTED(0), NAMES(decision_names)),
	ROW(wait_policy, KV_STR, COUNTED(0)),
	ROW(arrivals, KV_STR, COUNTED(0)),
	ROW(late, KV_STR, COUNTED(0)),
	ROW(scrub_started_usec, KV_U64, COUNTED(KV_NONZERO)),
	ROW(stale_usec, KV_U64, COUNTED(KV_NONZERO)),
};
