/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The stop executor: undoes what the state records storaged set up, newest
 * first, through the same operations table as the start executor (ops.h),
 * so that its decisions ("still mine?", "something on top?", "busy") are
 * tested with the recording fake, without root.
 */
#ifndef STORAGED_UNDO_H
#define STORAGED_UNDO_H

#include "shared/log.h"
#include "ops.h"
#include "state/state.h"

/* What undo_run() did, for stop's closing line. */
struct undo_summary {
	unsigned n_unmounted; /* storaged's mounts unmounted */
	unsigned n_areas; /* areas torn down (synced back first where persist) */
	unsigned n_lost; /* of n_areas: torn down without their content (an error each) */
	unsigned n_kept_both; /* of n_areas: torn down after a sync back that
				 kept entries twice (an error each, `status` shows it) */
	unsigned n_rescued; /* of n_areas: torn down with their whole tree kept
			       apart, their directory gone (the same) */
	unsigned n_failed; /* records not undone */
};

struct undo_ctx {
	const struct ops *ops;
	void *ud; /* passed to every operation */
	const struct logger *log;
	struct undo_summary *sum; /* counted into; NULL: not counted */
};

/**
 * undo_run:
 * @cx: operations and logger
 * @st: the recorded state (loaded by the caller); records undone are
 *      removed from it, and it is saved through ops->state_save() at the
 *      end: emptied when everything was undone, else with what is left
 *
 * Steps:
 *   1. the undoable records (mounts and areas set up or being set up,
 *      also those a later pass recorded failed or skipped), newest first:
 *      children before parents, binds before their sources;
 *   2. each mount only while it is still storaged's: gone, replaced (its ID
 *      reused) or, for a mount storaged was killed in, something else
 *      mounted there since, is left alone; a mount covered by another one
 *      is not unmounted (failure: unmount the other first);
 *   3. areas that left records of their own but none in @st (a start
 *      killed between the area's setup and the state's write);
 *   4. with no failure, the readiness flags of the btrfs records go too.
 *
 * A failure is logged once, with what to do, and the rest still runs.
 * An area torn down after a sync back that kept entries twice stays in
 * @st, failed, with the sync's error as its reason (status shows it).
 *
 * Returns: the number of records that could not be undone (0: all), or
 * -ENOMEM.
 */
int undo_run(const struct undo_ctx *cx, struct state *st);

#endif
