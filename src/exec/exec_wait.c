/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The executor's device waits (exec_internal.h): btrfs members registered
 * as they are found, each wait checked against the inventory when it starts
 * and on every block device event, until its deadline.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "devices/btrfs.h"
#include "exec_internal.h"

/* ------------------------------------------------------------------ */
/* Registration and device waits */

/* Register @devnode unless this run already did; failures are warnings: the
 * wait that follows reports what is really missing. */
static void exec_register_once(struct run *rn, const char *devnode)
{
	int r;

	if (strv_contains(rn->registered, devnode))
		return;
	r = rn->cx->ops->register_device(rn->cx->ud, devnode);
	if (r < 0) {
		log_warning(rn->cx->log, "%s: cannot register btrfs member: %s", devnode, strerror(-r));
		return;
	}
	log_debug(rn->cx->log, "%s: registered btrfs member", devnode);
	if (strv_extend(&rn->registered, devnode) < 0)
		log_warning(rn->cx->log, "out of memory tracking registered members");
}

/*
 * A REGISTER step (plan.c: one per member present when planned, before the
 * filesystem's ASSEMBLE step, which depends on all of them).  When the plan
 * counted every member present, its registrations are left to the ASSEMBLE
 * step's first look, which follows in the same pass (start_ready()):
 * assemble_check() registers every member this run has not, except, when
 * the filesystem is complete, the one it asks BTRFS_IOC_DEVICES_READY
 * about, which that ioctl registers itself (so one BTRFS_IOC_SCAN_DEV per
 * filesystem is saved).  With members missing when planned, the member is
 * registered at once, as the wait may last.
 */
void exec_register_step(struct run *rn, const struct plan_step *s)
{
	if (s->num_devices > 0 && s->n_present >= s->num_devices)
		return;
	exec_register_once(rn, s->devnode);
}

/*
 * BTRFS_IOC_DEVICES_READY on @devnode, which registers it first: Linux
 * fs/btrfs/super.c btrfs_control_ioctl() scans the device with
 * btrfs_scan_one_device() for BTRFS_IOC_DEVICES_READY exactly as for
 * BTRFS_IOC_SCAN_DEV (so since Linux 3.x; the call's flags changed over
 * the years, not that), then compares the filesystem's num_devices with
 * total_devices.  A single-device filesystem is scanned but not registered
 * (Linux 6.7+, btrfs_skip_registration()), with either ioctl alike: its
 * mount registers it.  A device not yet registered by this run is recorded
 * as registered, or warned about as exec_register_once() would.
 * Returns: true when the kernel says every member is known.
 */
static bool ready_registers(struct run *rn, const char *devnode)
{
	bool known = strv_contains(rn->registered, devnode);
	int r = rn->cx->ops->devices_ready(rn->cx->ud, devnode);

	if (known)
		return r == 1;
	if (r < 0) {
		log_warning(rn->cx->log, "%s: cannot register btrfs member: %s", devnode, strerror(-r));
		return false;
	}
	log_debug(rn->cx->log, "%s: registered btrfs member (by BTRFS_IOC_DEVICES_READY)", devnode);
	if (strv_extend(&rn->registered, devnode) < 0)
		log_warning(rn->cx->log, "out of memory tracking registered members");
	return r == 1;
}

/* Register the members of @fsid present in @l; true when all are there
 * and the kernel agrees (BTRFS_IOC_DEVICES_READY, which registers the
 * member it is asked about: see ready_registers()). */
static bool assemble_check(struct run *rn, const struct btrfs_fs_list *l, const char *fsid,
			   struct sighting *seen)
{
	const struct btrfs_filesystem *fs = btrfs_fs_list_find(l, fsid);
	bool complete;

	if (!fs)
		return false;
	complete = btrfs_filesystem_complete(fs) && fs->n_members > 0;
	/* when complete, members[0] is registered by the readiness check below */
	for (size_t m = complete ? 1 : 0; m < fs->n_members; m++)
		exec_register_once(rn, fs->members[m].dev->devnode);
	seen->present = fs->n_members;
	seen->expected = fs->num_devices;
	btrfs_format_missing(fs, seen->missing, sizeof(seen->missing));
	btrfs_format_stale(fs, seen->stale, sizeof(seen->stale));
	return complete && ready_registers(rn, fs->members[0].dev->devnode);
}

/* The record of btrfs @fsid: @st, and what the wait found, which `status`
 * words (no reason: the words are status's, from these fields). */
static void record_members(struct run *rn, const char *fsid, enum state_status st,
			   const struct sighting *seen, uint64_t waited_usec, const char *note)
{
	struct state_record *r = state_put(rn->cx->state, STATE_BTRFS, fsid, NULL, "btrfs", st, NULL, false);

	if (!r)
		return;
	r->members_present = seen->present;
	r->members_expected = seen->expected;
	r->waited_usec = waited_usec;
	if (note[0])
		r->members_note = strdup(note); /* NULL on ENOMEM: status says less */
}

static void wait_done(struct run *rn, size_t i, const struct sighting *seen)
{
	struct step_run *sr = &rn->steps[i];
	struct step_text *tx = &rn->texts[i];

	sr->out = OUT_OK;
	if (!tx->fsid[0])
		return;
	snprintf(tx->msg, sizeof(tx->msg), "%llu/%llu members%s%.400s", (unsigned long long)seen->present,
		 (unsigned long long)seen->expected, seen->stale[0] ? "; " : "", seen->stale);
	record_members(rn, tx->fsid, STATE_DONE, seen, 0, seen->stale);
	rn->sum.n_assembled++;
	if (rn->cx->ops->mark_ready(rn->cx->ud, tx->fsid, true) < 0)
		log_warning(rn->cx->log, "btrfs %s: cannot create its readiness flag", tx->fsid);
	log_info(rn->cx->log, "btrfs %s: assembled, %s", tx->fsid, tx->msg);
}

/* One look for the wait step @i.  Returns: true when it is satisfied. */
static bool wait_check(struct run *rn, size_t i, const struct inventory *inv, const struct btrfs_fs_list *l)
{
	const struct plan_step *s = step(rn, i);
	struct step_run *sr = &rn->steps[i];
	struct step_text *tx = &rn->texts[i];
	const struct btrfs_filesystem *fs;

	if (!tx->fsid[0] && s->kind == PLAN_WAIT_DEVICE) {
		const struct block_device *d = inventory_find(inv, s->spec);

		if (!d)
			return false;
		if (!d->is_btrfs) {
			wait_done(rn, i, &tx->seen);
			return true;
		}
		snprintf(tx->fsid, sizeof(tx->fsid), "%s", d->btrfs.fsid_str);
	}
	fs = btrfs_fs_list_find(l, tx->fsid);
	if (fs && fs->n_clones) { /* a clone appeared meanwhile: register neither */
		btrfs_format_clones(fs, tx->msg, sizeof(tx->msg));
		sr->out = OUT_FAILED;
		return true;
	}
	if (!assemble_check(rn, l, tx->fsid, &tx->seen))
		return false;
	wait_done(rn, i, &tx->seen);
	return true;
}

/* Deadline passed: a btrfs set with some members is incomplete (the mounts
 * apply the degraded policy); nothing at all is a failure. */
static void wait_expired(struct run *rn, size_t i)
{
	const struct plan_step *s = step(rn, i);
	struct step_run *sr = &rn->steps[i];
	struct step_text *tx = &rn->texts[i];
	char dur[32];

	units_format_duration(s->timeout_usec, dur, sizeof(dur));
	if (tx->fsid[0] && tx->seen.present > 0) {
		snprintf(tx->msg, sizeof(tx->msg), "%llu of %llu members present after %s%s%s",
			 (unsigned long long)tx->seen.present, (unsigned long long)tx->seen.expected,
			 dur, tx->seen.missing[0] ? ", " : "", tx->seen.missing);
		sr->out = OUT_INCOMPLETE;
		record_members(rn, tx->fsid, STATE_INCOMPLETE, &tx->seen, s->timeout_usec, tx->seen.missing);
		return;
	}
	if (s->kind == PLAN_WAIT_DEVICE)
		snprintf(tx->msg, sizeof(tx->msg), "device %s not found after %s", s->spec, dur);
	else
		snprintf(tx->msg, sizeof(tx->msg), "btrfs %s: no member present after %s", s->fsid, dur);
	sr->out = OUT_FAILED;
}

/* Re-check every running wait against one fresh look at the devices. */
void exec_check_waits(struct run *rn)
{
	const struct inventory *initial = rn->initial_inventory;
	struct inventory scanned = { 0 };
	const struct inventory *inv = &scanned;
	struct btrfs_fs_list l = { 0 };
	struct diag_list dl = { 0 };
	uint64_t now;

	/* the plan's own scan, taken an instant ago, serves the first look */
	rn->initial_inventory = NULL;
	if (initial)
		inv = initial;
	else if (rn->cx->ops->rescan(rn->cx->ud, &scanned, &dl) < 0)
		log_warning(rn->cx->log, "cannot list block devices; retrying on the next event");
	if (btrfs_group(inv, &l, &dl) < 0)
		log_warning(rn->cx->log, "out of memory grouping btrfs members; retrying on the next event");
	now = now_usec(rn);
	for (size_t i = 0; i < rn->plan->n_steps; i++) {
		const struct plan_step *s = step(rn, i);

		if (rn->steps[i].out != OUT_RUNNING || s->kind == PLAN_MOUNT)
			continue;
		if (!wait_check(rn, i, inv, &l) && now >= rn->steps[i].deadline)
			wait_expired(rn, i);
	}
	btrfs_fs_list_done(&l);
	inventory_done(&scanned);
	diag_list_done(&dl);
}

void exec_start_wait(struct run *rn, size_t i)
{
	const struct plan_step *s = step(rn, i);
	struct step_run *sr = &rn->steps[i];
	struct step_text *tx = &rn->texts[i];
	char dur[32];

	sr->out = OUT_RUNNING;
	sr->deadline = deadline_after(now_usec(rn), s->timeout_usec);
	if (s->kind == PLAN_ASSEMBLE)
		snprintf(tx->fsid, sizeof(tx->fsid), "%s", s->fsid);
	if (s->kind == PLAN_ASSEMBLE && s->missing) {
		units_format_duration(s->timeout_usec, dur, sizeof(dur));
		state_put(rn->cx->state, STATE_BTRFS, s->fsid, NULL, "btrfs", STATE_WAITING,
			  s->missing, false);
		exec_report_status(rn, "waiting up to %s for btrfs %s: %s", dur, s->fsid, s->missing);
	}
}
