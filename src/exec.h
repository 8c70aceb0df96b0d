/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The executor: runs the steps of a plan, in order, through a small table of
 * operations (the only way it reaches the system), so that tests can replace
 * the system with a recording fake.  A failed step fails only the steps that
 * depend on it; the others still run.
 */
#ifndef STORAGED_EXEC_H
#define STORAGED_EXEC_H

#include <stdint.h>

#include "diag.h"
#include "inventory.h"
#include "log.h"
#include "plan.h"
#include "state.h"

struct exec_ops {
	/* BTRFS_IOC_SCAN_DEV on @devnode. 0 or negative errno. */
	int (*register_device)(void *ud, const char *devnode);
	/* BTRFS_IOC_DEVICES_READY: 1 ready, 0 not, negative errno. */
	int (*devices_ready)(void *ud, const char *devnode);
	/* A fresh inventory of block devices (caller frees). 0 or negative errno. */
	int (*rescan)(void *ud, struct inventory *ret, struct diag_list *diags);
	/* Block until a block device may have appeared or @deadline_usec
	 * (CLOCK_MONOTONIC, µs) passes: 1 event, 0 deadline, negative errno. */
	int (*wait_event)(void *ud, uint64_t deadline_usec);
	/* Mount @e with @options (NULL for none) within @timeout_usec; on
	 * failure a message for the user in @err.  0 or negative errno. */
	int (*mount)(void *ud, const struct fstab_entry *e, const char *options,
		     uint64_t timeout_usec, char *err, size_t errlen);
	/* Set up the area of @s; problems appended to @msgs. 0 or negative errno. */
	int (*area_setup)(void *ud, const struct plan_step *s, struct diag_list *msgs);
	/* CLOCK_MONOTONIC in µs. */
	uint64_t (*now)(void *ud);
};

struct exec_ctx {
	const struct exec_ops *ops;
	void *ud; /* passed to every operation */
	const struct logger *log;
	struct state *state; /* updated as steps finish */
	const char *state_dir; /* state saved here after each step; NULL: not saved */
};

struct exec_summary {
	unsigned n_done; /* steps that did something and succeeded */
	unsigned n_failed; /* failed or skipped steps that count (not nofail) */
	unsigned n_tolerated; /* failed or skipped steps with nofail */
	unsigned n_degraded; /* btrfs entries mounted with -o degraded */
};

/**
 * exec_run:
 * @cx: operations, logger and state
 * @p: plan from plan_build()
 * @ret: what happened
 *
 * Runs every step whose dependencies succeeded; logs each failure once with
 * its reason; a step whose dependency failed is skipped with a reason that
 * names that dependency.
 *
 * Returns: 0 when the run completed (see @ret for failures); -ENOMEM.
 */
int exec_run(struct exec_ctx *cx, const struct plan *p, struct exec_summary *ret);

#endif
