/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The names of the state's kinds and statuses, and the fields of a btrfs
 * filesystem's record (state.h): what the wait for its members found,
 * and what storaged decided then.
 */
#include <errno.h>
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

static int lookup(const char *const *names, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(names[i], s) == 0)
			return (int)i;
	return -EINVAL;
}

int state_status_from_name(const char *name)
{
	return lookup(status_names, ARRAY_SIZE(status_names), name);
}

int state_kind_from_name(const char *name)
{
	return lookup(kind_names, ARRAY_SIZE(kind_names), name);
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

enum btrfs_decision state_decision_from_name(const char *name)
{
	for (enum btrfs_decision d = DECISION_COMPLETE; d <= DECISION_LAST; d++)
		if (strcmp(decision_names[d], name) == 0)
			return d;
	return DECISION_NONE; /* a newer storaged's word: not decided, as far as this one knows */
}

int state_write_members(FILE *f, const struct state_record *rec)
{
	int r = state_write_uint(f, "members_present", rec->members_present);

	if (!r)
		r = state_write_uint(f, "members_expected", rec->members_expected);
	if (!r && rec->waited_usec)
		r = state_write_uint(f, "waited_usec", rec->waited_usec);
	if (!r)
		r = state_write_kv(f, "members_note", rec->members_note);
	if (!r && rec->decision)
		r = state_write_kv(f, "decision", state_decision_name(rec->decision));
	if (!r)
		r = state_write_kv(f, "wait_policy", rec->wait_policy);
	if (!r)
		r = state_write_kv(f, "arrivals", rec->arrivals);
	if (!r)
		r = state_write_kv(f, "late", rec->late);
	if (!r && rec->scrub_started_usec)
		r = state_write_uint(f, "scrub_started_usec", rec->scrub_started_usec);
	if (!r && rec->stale_usec)
		r = state_write_uint(f, "stale_usec", rec->stale_usec);
	return r;
}
