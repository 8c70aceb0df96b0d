/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The executor: runs the steps of a plan, in order, through the operations
 * table (ops.h: the only way it reaches the system, state files included),
 * so that tests can replace the system with a recording fake.  A failed step fails only the steps that
 * depend on it; the others still run.
 */
#ifndef STORAGED_EXEC_H
#define STORAGED_EXEC_H

#include <stdbool.h>
#include <stdint.h>

#include "shared/diag.h"
#include "devices/inventory.h"
#include "shared/log.h"
#include "plan/plan.h"
#include "ops.h"
#include "state/state.h"

struct exec_summary;

struct exec_ctx {
	const struct ops *ops;
	void *ud; /* passed to every operation */
	const struct logger *log;
	struct state *state; /* updated as steps finish, saved through ops->state_save() */
	unsigned jobs; /* mounts running at once; 0 is taken as 1 */
	/* Resident passes after the first: a device wait not satisfied at once
	 * leaves it and its dependants waiting, quietly, for the next device
	 * event, instead of waiting for its deadline. */
	bool no_wait;
	/* The inventory the plan was built from (borrowed, may be NULL): the
	 * first look of the device waits uses it instead of scanning again. */
	const struct inventory *initial_inventory;
	/* Called once, when every step the boot needs has ended: all
	 * but nofail mounts and the waits and steps only they need, which
	 * go on (recorded as waiting) up to their own deadlines.  @sum
	 * counts what ended so far.  NULL: nothing to tell. */
	void (*boot_done)(void *userdata, const struct exec_summary *sum);
	void *boot_userdata;
};

struct exec_summary {
	unsigned n_done; /* steps that did something and succeeded: */
	unsigned n_mounted; /*   of those, mounts */
	unsigned n_areas; /*   of those, areas set up */
	unsigned n_assembled; /* btrfs filesystems found complete (registration is no step of its own) */
	unsigned n_failed; /* failed or skipped steps that count (not nofail) */
	unsigned n_skipped; /* of those, skipped: a step they wait for failed */
	unsigned n_tolerated; /* failed or skipped steps with nofail */
	unsigned n_degraded; /* btrfs entries mounted with -o degraded */
	unsigned n_waiting; /* no_wait: steps left waiting for devices */
	unsigned n_later; /* plan_step.later: left for the pass after the network */
	unsigned n_background; /* nofail mounts still waiting for devices when the boot's steps ended */
};

/**
 * exec_run:
 * @cx: operations, logger and state
 * @p: plan from plan_build()
 * @ret: what happened
 *
 * Runs every step once its dependencies succeeded, up to @cx->jobs mounts at
 * a time, the step with the longest chain of dependants first; waits for
 * devices on events, each wait and each mount bounded by its deadline.
 * Logs each failure once with its reason; a step whose dependency failed is
 * skipped with a reason that names that dependency.
 *
 * Returns: 0 when the run completed (see @ret for failures); -EINTR when
 * ops->wait() reported a signal (running steps abandoned and recorded as
 * failed); -ENOMEM.
 */
int exec_run(const struct exec_ctx *cx, const struct plan *p, struct exec_summary *ret);

/**
 * exec_background_waits:
 * @p: plan from plan_build()
 *
 * Returns: true when a wait for devices in @p is needed only by nofail
 * entries: it may outlast the point where the boot's own steps end
 * (exec_ctx.boot_done).
 */
bool exec_background_waits(const struct plan *p);

#endif
