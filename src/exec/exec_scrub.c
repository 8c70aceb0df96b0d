/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The executor's SCRUB steps (stale-member = scrub, plan.h): a scrub is
 * started on the mount its step waited for, through ops->scrub_start().
 * The filesystem is mounted and usable either way, so a scrub that cannot
 * be started is a warning with the command to run, never a failed step.
 */
#include <limits.h>
#include <string.h>

#include "exec_run.h"
#include "ops.h"
#include "shared/log.h"
#include "shared/util.h"
#include "state/state.h"

void exec_scrub_step(struct run *rn, size_t i)
{
	const struct plan_step *s = step(rn, i);
	const struct state_record *rec = state_find(rn->cx->state, STATE_MOUNT, s->entry->target);
	struct state_record *fs = state_find(rn->cx->state, STATE_BTRFS, s->fsid);
	const char *where = rec && rec->mountpoint ? rec->mountpoint : s->entry->target;
	char q[PATH_MAX * 4 + 3];
	int r;

	rn->steps[i].out = OUT_OK;
	/* mounted degraded: a member is missing, and a scrub now would not
	 * bring the stale one's copies back */
	if (!rec || rec->status != STATE_DONE)
		return;
	r = rn->cx->ops->scrub_start(rn->cx->ud, where);
	shell_quote(where, q, sizeof(q));
	if (r < 0) {
		log_warning(rn->cx->log, "%s: cannot start a scrub (stale-member = scrub): %s; run `btrfs scrub start %s`",
			    where, r == -EIO ? "btrfs scrub start failed" : strerror(-r), q);
		return;
	}
	/* status says so instead of advising one (btrfs_stale_advice()) */
	if (fs)
		fs->scrub_started_usec = realtime_usec();
	log_warning(rn->cx->log, "%s: a member was stale: scrub started (stale-member = scrub); `btrfs scrub status %s` shows its progress",
		    where, q);
}
