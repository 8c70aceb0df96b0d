/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * One run of the executor: its state, shared by exec.c (scheduling,
 * mounts) and the runners of the other step kinds it calls, exec_area.c
 * (areas), exec_wait.c (registration and device waits) and exec_scrub.c
 * (scrubs), which take nothing back from exec.c.
 */
#ifndef STORAGED_EXEC_RUN_H
#define STORAGED_EXEC_RUN_H

#include <stdint.h>

#include "exec.h"
#include "shared/units.h"

enum outcome {
	OUT_PENDING,
	OUT_RUNNING, /* a mount in progress, or a wait for devices */
	OUT_OK,
	OUT_INCOMPLETE, /* a btrfs filesystem still lacks members at its deadline */
	OUT_FAILED,
	OUT_SKIPPED,
	OUT_DEFERRED, /* no_wait: devices not there yet; tried again on the next event */
	OUT_LATER, /* plan_step.later: for the start after the network is up */
};

/* What one look at the devices found for a wait. */
struct sighting {
	uint64_t present, expected;
	char missing[256];
	uint64_t first_missing; /* devid, 0 when not known */
	char stale[512]; /* btrfs_format_stale(): shown in `status` */
};

/* A member of the btrfs filesystem a wait assembles, when it was first
 * seen.  A filesystem of more members than EXEC_ARRIVALS_MAX keeps the
 * first ones. */
#define EXEC_ARRIVALS_MAX 16
struct arrival {
	uint64_t devid;
	uint64_t at_usec; /* since the wait started */
	char dev[48]; /* its device node, cut */
};

/* A step's words, apart from struct step_run: large, and most steps never
 * write them (their pages are then never touched). */
struct step_text {
	char msg[1024]; /* why failed / skipped / incomplete; what was found */
	char fsid[37]; /* waits: the btrfs filesystem being assembled, once known */
	struct sighting seen; /* waits: what the last look found */
	struct arrival arrivals[EXEC_ARRIVALS_MAX]; /* waits: members in the order seen */
	size_t n_arrivals;
};

struct step_run {
	enum outcome out;
	unsigned chain; /* longest chain of steps that wait on this one */
	uint64_t started; /* µs */
	uint64_t deadline; /* waits: µs; follows the members (exec_wait.c) */
	uint64_t first_seen; /* btrfs waits: when the first member was seen, µs */
	bool looked; /* waits: had their first look at the devices */
	bool degraded; /* mounts: mounted with -o degraded */
	bool not_yet; /* mounts: the helper exited 0 with nothing mounted yet */
	char *why_degraded; /* owned: the reason, when mounted degraded */
	struct exec_job job; /* mounts */
};

struct run {
	const struct exec_ctx *cx;
	const struct plan *plan;
	struct step_run *steps;
	struct step_text *texts; /* by step, as @steps */
	size_t *order; /* step indices by chain length (desc), then plan order */
	unsigned jobs; /* mounts at once (cx->jobs, at least 1) */
	unsigned n_mounts_running;
	const struct inventory *initial_inventory; /* serves the first look only */
	char **registered; /* devnodes registered during this run */
	char **announced; /* fsids mounted degraded and announced usable (ops->announce_usable) */
	struct exec_summary sum;
	bool *needed; /* by step: the boot needs it (needed_steps()) */
	bool boot_told; /* cx->boot_done was called */
};

static inline const struct plan_step *step(const struct run *rn, size_t i)
{
	return &rn->plan->steps[i];
}

static inline uint64_t now_usec(const struct run *rn)
{
	return rn->cx->ops->now(rn->cx->ud);
}

static inline uint64_t deadline_after(uint64_t now, uint64_t timeout)
{
	return timeout >= USEC_INFINITY - now ? USEC_INFINITY : now + timeout;
}

/* exec_scrub.c */

/* A SCRUB step: a scrub started on its mount, when that was made not
 * degraded; a scrub not started is a warning, the step is never failed. */
void exec_scrub_step(struct run *rn, size_t i);

/* Runs the AREA step @i (exec_area.c): set up, recorded, counted, logged. */
void exec_area_step(struct run *rn, size_t i);

/* exec_wait.c */

/* A REGISTER step: registers now, or leaves it to the ASSEMBLE step's first
 * look when the plan saw the filesystem complete. */
void exec_register_step(struct run *rn, const struct plan_step *s);
/* btrfs @fsid was just mounted degraded: tell udev and systemd it is usable,
 * once per filesystem and run (failures are warnings). */
void exec_announce_degraded(struct run *rn, const char *fsid);
/* Start the wait step @i: its deadline, and its record for a btrfs set. */
void exec_start_wait(struct run *rn, size_t i);
/* Re-check every running wait against one fresh look at the devices. */
void exec_check_waits(struct run *rn);
/* The btrfs filesystem of wait step @w is decided: recorded in its state
 * record and logged in one line ("btrfs FSID: decision=..."), once; a
 * decision to mount (degraded, read-only) outranks a refusal of another
 * entry of the same filesystem. */
void exec_decide(struct run *rn, size_t w, enum btrfs_decision d);
/* The MOUNT step @i, refused by the plan for a stale member: its
 * filesystem's record says so, with the decision. */
void exec_stale_refused(struct run *rn, size_t i);

#endif
