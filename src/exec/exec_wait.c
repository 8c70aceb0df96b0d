/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The executor's device waits (exec_run.h): btrfs members registered
 * as they are found, each wait checked against the inventory when it starts
 * and on every block device event, until its deadline.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "devices/btrfs.h"
#include "exec_run.h"

/* ------------------------------------------------------------------ */
/* Registration and device waits */

/* @devnode's registration by @how returned @r: recorded as registered, or
 * a warning (the wait that follows reports what is really missing).
 * Returns: true when registered. */
static bool note_registered(struct run *rn, const char *devnode, int r, const char *how)
{
	if (r < 0) {
		log_warning(rn->cx->log, "%s: cannot register btrfs member: %s", devnode, strerror(-r));
		return false;
	}
	log_debug(rn->cx->log, "%s: registered btrfs member%s", devnode, how);
	if (strv_extend(&rn->registered, devnode) < 0)
		log_warning(rn->cx->log, "out of memory tracking registered members");
	return true;
}

/* Register @devnode unless this run already did. */
static void exec_register_once(struct run *rn, const char *devnode)
{
	if (!strv_contains(rn->registered, devnode))
		note_registered(rn, devnode, rn->cx->ops->register_device(rn->cx->ud, devnode), "");
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
 * as registered, or warned about (note_registered()).
 * Returns: true when the kernel says every member is known.
 */
static bool ready_registers(struct run *rn, const char *devnode)
{
	bool known = strv_contains(rn->registered, devnode);
	int r = rn->cx->ops->devices_ready(rn->cx->ud, devnode);

	if (!known && !note_registered(rn, devnode, r, " (by BTRFS_IOC_DEVICES_READY)"))
		return false;
	return r == 1;
}

/* The strangers of @fs that the kernel was told of (udev scans every
 * btrfs device that appears) are dropped from its count: with them, the
 * kernel counts more devices than the filesystem has (DEVICES_READY never
 * says ready) and its mount opens them too, and takes the superblock of
 * the newest generation among them all (fs/btrfs/volumes.c
 * open_fs_devices()): a stranger's. */
static void forget_strangers(struct run *rn, const struct btrfs_filesystem *fs)
{
	for (size_t i = 0; rn->cx->ops->forget_device && i < fs->n_strangers; i++) {
		const char *devnode = fs->strangers[i].dev->devnode;
		int r = rn->cx->ops->forget_device(rn->cx->ud, devnode);

		if (r == 0)
			log_debug(rn->cx->log, "%s: made the kernel forget it (not a member of btrfs %s)", devnode,
				  fs->fsid);
		else if (r != -ENOENT)
			log_debug(rn->cx->log, "%s: cannot make the kernel forget it: %s", devnode, strerror(-r));
	}
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
	forget_strangers(rn, fs);
	/* when complete, members[0] is registered by the readiness check
	 * below; the kernel's count for a sprout leaves its seeds out (they
	 * are registered under their own fsid), so its readiness never comes:
	 * the filesystem's own record, which named them, is the word */
	for (size_t m = complete && !fs->n_seeds && !fs->replace_target ? 1 : 0; m < fs->n_members; m++)
		exec_register_once(rn, fs->members[m].dev->devnode);
	/* the kernel refuses to mount while a replace it must resume lacks
	 * its target (fs/btrfs/dev-replace.c btrfs_init_dev_replace()), and
	 * counts the target among the registered devices, so that its
	 * readiness never comes: the record is the word, as for seeds */
	if (fs->replace_target)
		exec_register_once(rn, fs->replace_target->devnode);
	seen->present = fs->n_members;
	seen->expected = fs->num_devices;
	btrfs_format_missing(fs, seen->missing, sizeof(seen->missing));
	seen->first_missing = fs->n_missing ? fs->missing[0] : 0;
	btrfs_format_stale(fs, seen->stale, sizeof(seen->stale));
	if (complete && (fs->n_seeds || fs->replace_target))
		return true;
	return complete && ready_registers(rn, fs->members[0].dev->devnode);
}

/* Each member of @fs not seen before by wait @i, with the time since the
 * wait started.  Returns: how many arrived. */
static unsigned note_arrivals(struct run *rn, size_t i, const struct btrfs_filesystem *fs)
{
	struct step_text *tx = &rn->texts[i];
	uint64_t at = now_usec(rn) - rn->steps[i].started;
	unsigned n = 0;

	for (size_t m = 0; m < fs->n_members && tx->n_arrivals < EXEC_ARRIVALS_MAX; m++) {
		struct arrival *a = NULL;
		bool known = false;

		for (size_t k = 0; k < tx->n_arrivals && !known; k++)
			known = tx->arrivals[k].devid == fs->members[m].devid;
		if (known)
			continue;
		a = &tx->arrivals[tx->n_arrivals++];
		a->devid = fs->members[m].devid;
		a->at_usec = at;
		snprintf(a->dev, sizeof(a->dev), "%s", fs->members[m].dev->devnode);
		log_debug(rn->cx->log, "btrfs %s: devid %llu (%s) seen %llu ms after the wait started",
			  fs->fsid, (unsigned long long)a->devid, a->dev, (unsigned long long)(at / USEC_PER_MSEC));
		n++;
	}
	return n;
}

/*
 * The wait follows the members: its deadline counts from when the first
 * member was seen (a wait that started with none counted from its start
 * until then), and each member that arrives later re-arms a quiet period
 * of settle_usec after it, never past settle_limit_usec beyond the
 * timeout, so that a shelf still spinning its disks up is waited for.
 */
static void follow_members(struct run *rn, size_t i, size_t before, unsigned arrived)
{
	const struct plan_step *s = step(rn, i);
	struct step_run *sr = &rn->steps[i];
	uint64_t now = now_usec(rn), cap, quiet;
	char dur[32];

	if (!arrived)
		return;
	if (before == 0) {
		/* present at the first look: there when the wait started */
		sr->first_seen = sr->looked ? now : sr->started;
		sr->deadline = deadline_after(sr->first_seen, s->timeout_usec);
		return;
	}
	if (!s->settle_usec)
		return;
	cap = deadline_after(deadline_after(sr->first_seen, s->timeout_usec), s->settle_limit_usec);
	quiet = deadline_after(now, s->settle_usec);
	if (quiet > cap)
		quiet = cap;
	if (quiet <= sr->deadline)
		return;
	sr->deadline = quiet;
	log_debug(rn->cx->log, "btrfs %s: a member arrived: waiting %s more for the others (settle-time)",
		  rn->texts[i].fsid, units_format_duration(quiet - now, dur, sizeof(dur)));
}

/* "devid 1 /dev/loop3 at +0.0s, devid 2 /dev/loop4 at +3.2s" */
static char *format_arrivals(const struct step_text *tx, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (size_t k = 0; k < tx->n_arrivals && off < len; k++) {
		const struct arrival *a = &tx->arrivals[k];

		off += (size_t)snprintf(buf + off, len - off, "%sdevid %llu %s at +%llu.%llus", k ? ", " : "",
					(unsigned long long)a->devid, a->dev,
					(unsigned long long)(a->at_usec / USEC_PER_SEC),
					(unsigned long long)(a->at_usec % USEC_PER_SEC / 100000));
	}
	return buf;
}

/* The record of btrfs @fsid of wait @i: @st, and what the wait found,
 * which `status` words (no reason: the words are status's, from these
 * fields): members, the wait and who arrived when. */
static void record_members(struct run *rn, size_t i, enum state_status st, uint64_t waited_usec,
			   const char *note)
{
	const struct step_text *tx = &rn->texts[i];
	struct state_record *r = state_put(rn->cx->state, STATE_BTRFS, tx->fsid, NULL, "btrfs", st, NULL, false);
	char arrivals[1024], wait[128];

	if (!r)
		return;
	r->members_present = tx->seen.present;
	r->members_expected = tx->seen.expected;
	r->waited_usec = waited_usec;
	/* NULL on ENOMEM: status says less */
	if (note[0])
		r->members_note = strdup(note);
	r->stale_usec = note[0] && st == STATE_DONE ? realtime_usec() : 0;
	if (tx->n_arrivals)
		r->arrivals = strdup(format_arrivals(tx, arrivals, sizeof(arrivals)));
	r->wait_policy = strdup(plan_wait_words(step(rn, i), wait, sizeof(wait)));
}

/* A decision that mounts outranks a refusal, which outranks "complete"
 * (a complete set whose mount was refused for a stale member). */
static int decision_rank(enum btrfs_decision d)
{
	return d == DECISION_DEGRADED || d == DECISION_READ_ONLY ? 3 : d == DECISION_COMPLETE ? 1 : d ? 2 : 0;
}

void exec_decide(struct run *rn, size_t w, enum btrfs_decision d)
{
	const struct step_text *tx = &rn->texts[w];
	struct state_record *r = tx->fsid[0] ? state_find(rn->cx->state, STATE_BTRFS, tx->fsid) : NULL;
	char arrivals[1024], dur[32];

	if (!r || r->decision == d || decision_rank(d) < decision_rank(r->decision))
		return;
	r->decision = d;
	state_touch(rn->cx->state, r);
	/* the one line an operator greps for ("decision="), at warning
	 * level; a complete set's is behind -v, as its "assembled" line
	 * already says what changed */
	log_msg(rn->cx->log, d == DECISION_COMPLETE ? LOG_DEBUG : LOG_WARNING,
		"btrfs %s: decision=%s members=%llu/%llu waited=%s wait=\"%s\" arrived=\"%s\" missing=\"%s\"",
		tx->fsid, state_decision_name(d), (unsigned long long)tx->seen.present,
		(unsigned long long)tx->seen.expected,
		units_format_duration(r->waited_usec / USEC_PER_MSEC * USEC_PER_MSEC, dur, sizeof(dur)),
		r->wait_policy ? r->wait_policy : "",
		format_arrivals(tx, arrivals, sizeof(arrivals)), tx->seen.missing);
}

void exec_stale_refused(struct run *rn, size_t i)
{
	const struct plan_step *s = step(rn, i);
	struct step_text *tx = &rn->texts[i];
	struct state_record *r = state_find(rn->cx->state, STATE_BTRFS, s->fsid);

	if (r && r->decision == DECISION_STALE_REFUSED) /* another entry of it */
		return;
	snprintf(tx->fsid, sizeof(tx->fsid), "%s", s->fsid);
	tx->seen.present = s->n_present;
	tx->seen.expected = s->num_devices;
	r = state_put(rn->cx->state, STATE_BTRFS, s->fsid, NULL, "btrfs", STATE_FAILED, s->note, false);
	if (!r)
		return;
	r->members_present = s->n_present;
	r->members_expected = s->num_devices;
	r->wait_policy = strdup("none: refused when planned"); /* NULL on ENOMEM: says less */
	exec_decide(rn, i, DECISION_STALE_REFUSED);
}

/* A mount of wait @i's filesystem refused for its stale member (the plan's
 * stale-member = refuse), whatever the wait finds. */
static bool stale_refused(const struct run *rn, size_t i)
{
	for (size_t k = 0; k < rn->plan->n_steps; k++) {
		const struct plan_step *s = step(rn, k);

		for (size_t d = 0; s->stale_refused && d < s->n_deps; d++)
			if (s->deps[d].step == i)
				return true;
	}
	return false;
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
	record_members(rn, i, STATE_DONE, now_usec(rn) - sr->started, seen->stale);
	rn->sum.n_assembled++;
	if (rn->cx->ops->mark_ready(rn->cx->ud, tx->fsid, true) < 0)
		log_warning(rn->cx->log, "btrfs %s: cannot create its readiness flag", tx->fsid);
	log_info(rn->cx->log, "btrfs %s: assembled, %s", tx->fsid, tx->msg);
	exec_decide(rn, i, stale_refused(rn, i) ? DECISION_STALE_REFUSED : DECISION_COMPLETE);
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
	if (fs) {
		size_t before = tx->n_arrivals;

		follow_members(rn, i, before, note_arrivals(rn, i, fs));
	}
	if (fs && btrfs_fs_ambiguous(fs)) { /* a clone appeared meanwhile: register neither */
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
	/* the wait's own length: it followed the members */
	uint64_t waited = sr->deadline - sr->started;
	char dur[32];

	units_format_duration(tx->fsid[0] && tx->seen.present > 0 ? waited : s->timeout_usec, dur, sizeof(dur));
	if (tx->fsid[0] && tx->seen.present > 0) {
		snprintf(tx->msg, sizeof(tx->msg), "%llu of %llu members present after %s%s%s",
			 (unsigned long long)tx->seen.present, (unsigned long long)tx->seen.expected,
			 dur, tx->seen.missing[0] ? ", " : "", tx->seen.missing);
		sr->out = OUT_INCOMPLETE;
		record_members(rn, i, STATE_INCOMPLETE, waited, tx->seen.missing);
		return;
	}
	if (s->kind == PLAN_WAIT_DEVICE)
		snprintf(tx->msg, sizeof(tx->msg), "device %s not found after %s", s->spec, dur);
	else
		snprintf(tx->msg, sizeof(tx->msg), "btrfs %s: no member present after %s", s->fsid, dur);
	sr->out = OUT_FAILED;
}

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
		rn->steps[i].looked = true;
	}
	btrfs_fs_list_done(&l);
	inventory_done(&scanned);
	diag_list_done(&dl);
}

/*
 * udev's 64-btrfs.rules marked the members of an incomplete filesystem
 * SYSTEMD_READY=0, so every systemd unit that waits for its device (a
 * subvolume that fstab mounts by UUID=, a unit with
 * x-systemd.requires=storaged.service and the device in its fstab line)
 * would wait until its job timeout and then fail.  After the degraded
 * mount the kernel calls the set complete, and a change event lets the
 * rule see it (devices/udev_change.h).
 */
void exec_announce_degraded(struct run *rn, const char *fsid)
{
	int r;

	if (!fsid || !fsid[0] || !rn->cx->ops->announce_usable || strv_contains(rn->announced, fsid))
		return;
	if (strv_extend(&rn->announced, fsid) < 0)
		log_warning(rn->cx->log, "out of memory tracking announced filesystems");
	r = rn->cx->ops->announce_usable(rn->cx->ud, fsid);
	if (r < 0)
		log_warning(rn->cx->log,
			    "btrfs %s: cannot tell udev that the degraded filesystem is usable (%s): systemd units that wait for its device may time out; run 'udevadm trigger --action=change --property-match=ID_FS_UUID=%s'",
			    fsid, strerror(-r), fsid);
	else if (r > 0)
		log_debug(rn->cx->log,
			  "btrfs %s: mounted degraded; change events sent for its %d member%s so that udev and systemd take it as ready",
			  fsid, r, r == 1 ? "" : "s");
}

/* A one-line status for the service manager (ops->status), if it takes one. */
static void report_status(const struct run *rn, const char *fmt, ...) _printf_(2, 3);

static void report_status(const struct run *rn, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	if (!rn->cx->ops->status)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	rn->cx->ops->status(rn->cx->ud, buf);
}

void exec_start_wait(struct run *rn, size_t i)
{
	const struct plan_step *s = step(rn, i);
	struct step_run *sr = &rn->steps[i];
	struct step_text *tx = &rn->texts[i];
	char dur[32];

	sr->out = OUT_RUNNING;
	sr->started = now_usec(rn);
	sr->deadline = deadline_after(sr->started, s->timeout_usec);
	if (s->kind == PLAN_ASSEMBLE)
		snprintf(tx->fsid, sizeof(tx->fsid), "%s", s->fsid);
	if (s->kind == PLAN_ASSEMBLE && s->missing) {
		units_format_duration(s->timeout_usec, dur, sizeof(dur));
		state_put(rn->cx->state, STATE_BTRFS, s->fsid, NULL, "btrfs", STATE_WAITING,
			  s->missing, false);
		report_status(rn, "waiting up to %s for btrfs %s: %s", dur, s->fsid, s->missing);
	}
}
