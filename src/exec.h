/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The executor: runs the steps of a plan, in order, through a small table of
 * operations (the only way it reaches the system), so that tests can replace
 * the system with a recording fake.  A failed step fails only the steps that
 * depend on it; the others still run.
 */
#ifndef STORAGED_EXEC_H
#define STORAGED_EXEC_H

#include <stdbool.h>
#include <stdint.h>

#include "diag.h"
#include "inventory.h"
#include "log.h"
#include "plan.h"
#include "state.h"

/* A mount in progress: on the real system, in a worker process, or already
 * ended when storaged ran it itself (see mount_worker.h). */
struct exec_job {
	int fd; /* becomes readable when the job ends; -1 when the ops track it otherwise */
	int pid; /* the worker process, or 0 */
	bool finished; /* set by ops->wait() */
	uint64_t deadline; /* CLOCK_MONOTONIC µs, USEC_INFINITY for none */
	/* Set by ops->mount_finish() on success, when it can tell: the mount
	 * table's ID of the new mount and its mount point with links resolved,
	 * so that `stop` undoes this mount and no other. */
	int mount_id;
	uint64_t mount_unique_id; /* never reused (Linux 6.8+), 0 when unknown */
	char *mountpoint; /* owned (malloc), NULL when unknown; kept small:
			     one job per step, hundreds of steps */
	const char *target; /* the entry's mount point (borrowed) */
	/* Set by ops->mount_start when it ran the mount to its end itself
	 * (->finished set, ->fd -1): its result and message (owned, may be
	 * NULL), for ops->mount_finish(). */
	int result;
	char *message;
};

struct exec_ops {
	/* BTRFS_IOC_SCAN_DEV on @devnode. 0 or negative errno. */
	int (*register_device)(void *ud, const char *devnode);
	/* BTRFS_IOC_DEVICES_READY: 1 ready, 0 not, negative errno. */
	int (*devices_ready)(void *ud, const char *devnode);
	/* A fresh inventory of block devices (caller frees). 0 or negative errno. */
	int (*rescan)(void *ud, struct inventory *ret, struct diag_list *diags);
	/* Start mounting @e with @options (NULL for none); @job->deadline is
	 * set by the caller.  A mount that cannot hang may be run to its end
	 * at once: @job->finished is then set.  0 or negative errno (then
	 * nothing runs). */
	int (*mount_start)(void *ud, const struct fstab_entry *e, const char *options,
			   struct exec_job *job);
	/* Collect a finished job: 0, or negative errno with a message for
	 * the user in @err. */
	int (*mount_finish)(void *ud, struct exec_job *job, char *err, size_t errlen);
	/* Give up on a job whose deadline passed (kill it). */
	void (*mount_abandon)(void *ud, struct exec_job *job);
	/* Block until one of @jobs finishes (its ->finished is set), a block
	 * device may have appeared (*@ret_event), or @deadline (µs) passes.
	 * 0; -EINTR when the user interrupted (SIGINT, SIGTERM); negative
	 * errno. */
	int (*wait)(void *ud, struct exec_job *const *jobs, size_t n_jobs, uint64_t deadline,
		    bool *ret_event);
	/* Set up the area of @s; problems appended to @msgs. 0 or negative errno. */
	int (*area_setup)(void *ud, const struct plan_step *s, struct diag_list *msgs);
	/* CLOCK_MONOTONIC in µs. */
	uint64_t (*now)(void *ud);
	/* Optional: a one-line status for the service manager (sd_notify STATUS=). */
	void (*status)(void *ud, const char *text);
};

struct exec_ctx {
	const struct exec_ops *ops;
	void *ud; /* passed to every operation */
	const struct logger *log;
	struct state *state; /* updated as steps finish */
	const char *state_dir; /* state saved here after each step; NULL: not saved */
	unsigned jobs; /* mounts running at once, at least 1 */
	/* Resident passes after the first: a device wait not satisfied at once
	 * leaves it and its dependants waiting, quietly, for the next device
	 * event, instead of waiting for its deadline. */
	bool no_wait;
	/* The inventory the plan was built from (borrowed, may be NULL): the
	 * first look of the device waits uses it instead of scanning again. */
	const struct inventory *initial_inventory;
};

struct exec_summary {
	unsigned n_done; /* steps that did something and succeeded */
	unsigned n_failed; /* failed or skipped steps that count (not nofail) */
	unsigned n_skipped; /* of those, skipped: a step they wait for failed */
	unsigned n_tolerated; /* failed or skipped steps with nofail */
	unsigned n_degraded; /* btrfs entries mounted with -o degraded */
	unsigned n_waiting; /* no_wait: steps left waiting for devices */
	unsigned n_later; /* plan_step.later: left for the pass after the network */
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
int exec_run(struct exec_ctx *cx, const struct plan *p, struct exec_summary *ret);

#endif
