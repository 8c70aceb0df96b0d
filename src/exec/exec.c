/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The executor is a small event loop over the plan:
 *
 *   1. start every step whose dependencies are resolved, the one with the
 *      longest chain of dependants first (so the critical path starts
 *      early), mounts only while fewer than `jobs` run;
 *   2. a device wait checks the inventory once when it starts and again on
 *      every block device event, until its deadline;
 *   3. block until a mount finishes, a device event arrives or the nearest
 *      deadline passes; collect, re-check, abandon what is overdue;
 *   4. repeat until nothing runs and nothing can start.
 *
 * Everything the executor does to the system, state and readiness files
 * included, goes through cx->ops.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "exec.h"
#include "exec_run.h"
#include "shared/units.h"
#include "status/status_live.h"

/* @compact: rewrite the whole file, as at the end of a run, instead of
 * appending the changed records. */
static void save_state(const struct run *rn, bool compact)
{
	int r;

	r = rn->cx->ops->state_save(rn->cx->ud, rn->cx->state, compact);
	if (r < 0)
		log_warning(rn->cx->log, "cannot write the state: %s; `%s stop` may not undo this run",
			    strerror(-r), log_self(rn->cx->log));
}

/* ------------------------------------------------------------------ */
/* Outcomes */

static void fail_step(struct run *rn, size_t i, enum outcome out, const char *fmt, ...) _printf_(4, 5);

static void fail_step(struct run *rn, size_t i, enum outcome out, const char *fmt, ...)
{
	const struct plan_step *s = step(rn, i);
	struct step_run *sr = &rn->steps[i];
	struct step_text *tx = &rn->texts[i];
	/* what the boot does not need (a nofail entry, a wait only it needs) */
	bool nofail = (s->kind == PLAN_MOUNT && s->entry->nofail) || (rn->needed && !rn->needed[i]);
	char what[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(tx->msg, sizeof(tx->msg), fmt, ap);
	va_end(ap);
	sr->out = out;
	plan_step_describe(s, what, sizeof(what));
	if (nofail) {
		rn->sum.n_tolerated++;
		log_warning(rn->cx->log, "%s: %s (nofail: not counted as a failure)", what, tx->msg);
	} else {
		rn->sum.n_failed++;
		rn->sum.n_skipped += out == OUT_SKIPPED;
		log_error(rn->cx->log, "%s: %s", what, tx->msg);
	}
}

static void record_mount(struct run *rn, size_t i, enum state_status st, const char *reason, bool undoable)
{
	const struct fstab_entry *e = step(rn, i)->entry;
	struct state_record *r;

	/* a refused line by its FILE:LINE: on a duplicate's mount point the
	 * first line's record is the mount's */
	r = state_put(rn->cx->state, STATE_MOUNT, e->refused_at ?: e->target, e->source, e->fstype, st, reason,
		      undoable);
	if (!r)
		return;
	r->nofail = e->nofail;
	r->recursive = e->rbind;
	/* nothing of storaged's to undo, unless an earlier pass's mount is
	 * recorded (its ID): stop undoes that one, checked by its ID */
	if ((st == STATE_FAILED || st == STATE_SKIPPED || st == STATE_PRESENT) && !r->mount_id)
		r->seq = 0;
	if (st != STATE_DONE && st != STATE_DEGRADED)
		return;
	r->duration_usec = now_usec(rn) - rn->steps[i].started;
	r->mount_id = (unsigned)rn->steps[i].job.mount.id;
	r->mount_unique_id = rn->steps[i].job.mount.unique_id;
	r->mount_root_dev = rn->steps[i].job.mount.root_dev;
	r->mount_root_ino = rn->steps[i].job.mount.root_ino;
	r->mount_root_btime_ns = rn->steps[i].job.mount.root_btime_ns;
	free(r->mountpoint);
	r->mountpoint = rn->steps[i].job.mountpoint; /* handed over */
	rn->steps[i].job.mountpoint = NULL;
}

/* Records step @i's failure (or wait) with its message in the state. */
static void exec_record_step_failure(struct run *rn, size_t i, enum state_status st)
{
	const struct plan_step *s = step(rn, i);

	if (s->kind == PLAN_MOUNT)
		record_mount(rn, i, st, rn->texts[i].msg, false);
	else if (s->kind == PLAN_ASSEMBLE)
		state_put(rn->cx->state, STATE_BTRFS, s->fsid, NULL, "btrfs", st, rn->texts[i].msg, false);
	else if (s->kind == PLAN_AREA)
		state_put(rn->cx->state, STATE_AREA, s->area->name, s->area->path, NULL, st,
			  rn->texts[i].msg, false);
}

/* ------------------------------------------------------------------ */
/* Mounts and areas */

/* The first dependency of @s whose outcome is @a or @b, or NULL. */
static const struct plan_dep *dep_with(const struct run *rn, const struct plan_step *s,
				       enum outcome a, enum outcome b)
{
	for (size_t d = 0; d < s->n_deps; d++) {
		enum outcome o = rn->steps[s->deps[d].step].out;

		if (o == a || o == b)
			return &s->deps[d];
	}
	return NULL;
}

/* no_wait: @i stays waiting, quietly, because of dependency @d. */
static void defer_step(struct run *rn, size_t i, const struct plan_dep *d)
{
	const struct plan_step *s = step(rn, i);
	char why[sizeof(rn->texts[i].msg)];

	/* bounded pieces: the message of the dependency may be long */
	snprintf(why, sizeof(why), "waiting for step %zu (%.150s): %.300s", d->step + 1, d->reason,
		 rn->texts[d->step].msg);
	memcpy(rn->texts[i].msg, why, sizeof(why));
	rn->steps[i].out = OUT_DEFERRED;
	rn->sum.n_waiting++;
	if (s->kind == PLAN_MOUNT)
		record_mount(rn, i, STATE_WAITING, rn->texts[i].msg, false);
}

/* start --local: not an error, and not forgotten: `status` shows it waiting. */
static void leave_for_later(struct run *rn, size_t i)
{
	const struct plan_step *s = step(rn, i);
	struct step_run *sr = &rn->steps[i];
	struct step_text *tx = &rn->texts[i];
	char what[512];

	snprintf(tx->msg, sizeof(tx->msg), "%s", plan_later_reason(s));
	sr->out = OUT_LATER;
	rn->sum.n_later++;
	exec_record_step_failure(rn, i, STATE_WAITING);
	log_info(rn->cx->log, "%s: %s", plan_step_describe(s, what, sizeof(what)), tx->msg);
}

/* no_wait: waits still unsatisfied after their first look give up quietly. */
static bool defer_waits(struct run *rn)
{
	bool any = false;

	for (size_t i = 0; i < rn->plan->n_steps; i++) {
		if (rn->steps[i].out != OUT_RUNNING || step(rn, i)->kind == PLAN_MOUNT)
			continue;
		rn->steps[i].out = OUT_DEFERRED;
		rn->sum.n_waiting++;
		any = true;
	}
	return any;
}

/* The wait of a btrfs entry that ended incomplete, or SIZE_MAX. */
static size_t incomplete_dep(const struct run *rn, const struct plan_step *s)
{
	for (size_t d = 0; d < s->n_deps; d++)
		if (rn->steps[s->deps[d].step].out == OUT_INCOMPLETE)
			return s->deps[d].step;
	return SIZE_MAX;
}

/* The entry's options, and for a degraded mount "degraded", after "ro"
 * when the policy is read-only: libmount applies the options in order
 * (mnt_optstr_get_flags()), so "ro" overrides an "rw" of the entry. */
static int mount_options(const struct plan_step *s, bool degraded, char **ret)
{
	const char *o = s->entry->mount_options;

	if (!degraded) {
		*ret = o ? strdup(o) : NULL;
		return o && !*ret ? -ENOMEM : 0;
	}
	return asprintf(ret, "%s%s%sdegraded", o ? o : "", o ? "," : "", s->degraded_read_only ? "ro," : "") < 0
		       ? -ENOMEM
		       : 0;
}

/* The degraded policy for a btrfs entry whose set stayed incomplete.
 * Returns: true to mount (degraded), false when the entry failed. */
static bool degraded_policy(struct run *rn, size_t i, size_t dep)
{
	const struct plan_step *s = step(rn, i);
	const char *fsid = rn->texts[dep].fsid;
	char fix[2048];

	if (!s->degraded_allowed) {
		fail_step(rn, i, OUT_FAILED,
			  "btrfs %s: %s; not mounting: degraded mounts are not allowed (" PLAN_DEGRADED_CONSENT " to allow them)",
			  fsid, rn->texts[dep].msg, fsid, s->policy_file);
		exec_record_step_failure(rn, i, STATE_FAILED);
		exec_decide(rn, dep, DECISION_REFUSED);
		return false;
	}
	live_degraded_advice(s->entry->target, fsid, rn->texts[dep].seen.first_missing, s->degraded_read_only,
			     log_self(rn->cx->log), fix, sizeof(fix));
	log_warning(rn->cx->log, "*** btrfs %s: %s; mounting %s DEGRADED (-o %sdegraded) as the policy allows: once the member is back, %s ***",
		    fsid, rn->texts[dep].msg, s->entry->target, s->degraded_read_only ? "ro," : "", fix);
	rn->steps[i].degraded = true;
	free(rn->steps[i].why_degraded);
	if (s->degraded_read_only &&
	    asprintf(&rn->steps[i].why_degraded, "read-only (degraded = read-only): %s", rn->texts[dep].msg) < 0)
		rn->steps[i].why_degraded = NULL;
	else if (!s->degraded_read_only)
		rn->steps[i].why_degraded = strdup(rn->texts[dep].msg);
	exec_decide(rn, dep, s->degraded_read_only ? DECISION_READ_ONLY : DECISION_DEGRADED);
	return true;
}

static void finish_mount(struct run *rn, size_t i, bool overdue);

static void start_mount(struct run *rn, size_t i)
{
	const struct plan_step *s = step(rn, i);
	struct step_run *sr = &rn->steps[i];
	_cleanup_free_ char *opts = NULL;
	size_t dep = incomplete_dep(rn, s);
	/* the device the plan resolved from its own inventory, not a udev link */
	struct fstab_entry resolved = *s->entry;
	int r;

	sr->started = now_usec(rn);
	if (dep != SIZE_MAX && !degraded_policy(rn, i, dep))
		return;
	r = mount_options(s, sr->degraded, &opts);
	if (s->devnode)
		resolved.source = s->devnode;
	sr->job = (struct exec_job){ .deadline = deadline_after(sr->started, s->mount_timeout_usec) };
	/* Write ahead: if storaged dies while the mount runs, the next run
	 * finds this record and knows the mount is its own. */
	record_mount(rn, i, STATE_MOUNTING, NULL, true);
	save_state(rn, false);
	if (r == 0)
		r = rn->cx->ops->mount_start(rn->cx->ud, &resolved, opts, &sr->job);
	if (r < 0) {
		fail_step(rn, i, OUT_FAILED, "cannot start mount: %s", strerror(-r));
		exec_record_step_failure(rn, i, STATE_FAILED);
		return;
	}
	sr->out = OUT_RUNNING;
	rn->n_mounts_running++;
	if (sr->job.finished) /* ran to its end already */
		finish_mount(rn, i, false);
}

static void finish_mount(struct run *rn, size_t i, bool overdue)
{
	const struct plan_step *s = step(rn, i);
	struct step_run *sr = &rn->steps[i];
	char err[1024] = "", dur[32], what[512];
	int r;

	rn->n_mounts_running--;
	if (overdue) {
		rn->cx->ops->mount_abandon(rn->cx->ud, &sr->job);
		fail_step(rn, i, OUT_FAILED, "mount did not finish within %s (mount-timeout)%s; abandoned",
			  units_format_duration(s->mount_timeout_usec, dur, sizeof(dur)),
			  sr->not_yet ? ": its helper exited 0, but nothing was mounted" : "");
		exec_record_step_failure(rn, i, STATE_FAILED);
		return;
	}
	r = rn->cx->ops->mount_finish(rn->cx->ud, &sr->job, err, sizeof(err));
	if (r == 1) { /* not yet mounted: followed up until its deadline */
		rn->n_mounts_running++;
		sr->job.finished = false;
		sr->not_yet = true;
		log_warning(rn->cx->log, "%s: %s", plan_step_describe(s, what, sizeof(what)), err);
		record_mount(rn, i, STATE_MOUNTING, err, false);
		return;
	}
	if (r < 0) {
		fail_step(rn, i, OUT_FAILED, "mount failed: %s", err[0] ? err : strerror(-r));
		exec_record_step_failure(rn, i, STATE_FAILED);
		return;
	}
	sr->out = OUT_OK;
	rn->sum.n_done++;
	rn->sum.n_mounted++;
	rn->sum.n_degraded += sr->degraded;
	record_mount(rn, i, sr->degraded ? STATE_DEGRADED : STATE_DONE,
		     sr->degraded ? sr->why_degraded : NULL, false);
	/* where the mount is, as findmnt shows it: the mount point's links
	 * resolved, the fstab's spelling beside it */
	if (s->facts && s->facts->target_real)
		log_info(rn->cx->log, "mounted %s on %s ('%s' leads there)%s", s->entry->source,
			 s->facts->target_real, s->entry->target, sr->degraded ? " (DEGRADED)" : "");
	else
		log_info(rn->cx->log, "mounted %s on %s%s", s->entry->source, s->entry->target,
			 sr->degraded ? " (DEGRADED)" : "");
	/* libmount's word on a mount it made otherwise than asked (a
	 * write-protected device mounted read-only), as mount(8) prints it */
	if (err[0])
		log_warning(rn->cx->log, "%s: %s", s->entry->target, err);
	if (sr->degraded && incomplete_dep(rn, s) != SIZE_MAX)
		exec_announce_degraded(rn, rn->texts[incomplete_dep(rn, s)].fsid);
}

static void mount_already_there(struct run *rn, size_t i)
{
	struct state_record *r = state_find(rn->cx->state, STATE_MOUNT, step(rn, i)->entry->target);

	rn->steps[i].out = OUT_OK;
	if (!r || r->seq == 0) /* mounted by someone else: not ours to undo */
		record_mount(rn, i, STATE_PRESENT, "already mounted", false);
	else if (r->status != STATE_DONE && r->status != STATE_DEGRADED)
		/* a run that died mid-mount, or a pass that failed it while
		 * something covered it: storaged's own mount is back on top */
		state_put(rn->cx->state, STATE_MOUNT, r->id, r->source, r->fstype, STATE_DONE, NULL, false);
}

/* ------------------------------------------------------------------ */
/* Scheduling */

static bool deps_resolved(const struct run *rn, const struct plan_step *s)
{
	for (size_t d = 0; d < s->n_deps; d++) {
		enum outcome o = rn->steps[s->deps[d].step].out;

		if (o == OUT_PENDING || o == OUT_RUNNING)
			return false;
	}
	return true;
}

/* A step the plan already shows failing (plan_step.conflict). */
static void fail_planned(struct run *rn, size_t i)
{
	fail_step(rn, i, OUT_FAILED, "%s", step(rn, i)->note);
	exec_record_step_failure(rn, i, STATE_FAILED);
	if (step(rn, i)->stale_refused)
		exec_stale_refused(rn, i);
}

/* Start step @i if it can start now.  Returns: true when its state changed. */
static bool try_start(struct run *rn, size_t i)
{
	const struct plan_step *s = step(rn, i);
	const struct plan_dep *fd;

	if (rn->steps[i].out != OUT_PENDING)
		return false;
	if (s->later) { /* its dependencies need not run first: it does not run */
		leave_for_later(rn, i);
		return true;
	}
	if (!deps_resolved(rn, s))
		return false;
	fd = dep_with(rn, s, OUT_DEFERRED, OUT_DEFERRED);
	if (fd) {
		defer_step(rn, i, fd);
		return true;
	}
	fd = dep_with(rn, s, OUT_FAILED, OUT_SKIPPED);
	if (fd && s->kind == PLAN_MOUNT && plan_step_waits_for_own_device(s, step(rn, fd->step))) {
		/* its own device never came (or is ambiguous): the entry failed,
		 * for the reason the wait found, as `mount -a` says of it */
		fail_step(rn, i, OUT_FAILED, "%s", rn->texts[fd->step].msg);
		exec_record_step_failure(rn, i, STATE_FAILED);
		return true;
	}
	if (fd) {
		fail_step(rn, i, OUT_SKIPPED, "not %s: it waits for step %zu (%s), which failed: %s",
			  s->kind == PLAN_AREA ? "set up" : "done", fd->step + 1, fd->reason,
			  rn->texts[fd->step].msg);
		exec_record_step_failure(rn, i, STATE_SKIPPED);
		return true;
	}
	switch (s->kind) {
	case PLAN_REGISTER:
		exec_register_step(rn, s);
		rn->steps[i].out = OUT_OK;
		break;
	case PLAN_ASSEMBLE:
	case PLAN_WAIT_DEVICE:
		exec_start_wait(rn, i);
		break;
	case PLAN_AREA:
		if (s->conflict)
			fail_planned(rn, i);
		else
			exec_area_step(rn, i);
		break;
	case PLAN_MOUNT:
		if (s->done) {
			mount_already_there(rn, i);
			break;
		}
		if (s->conflict) {
			fail_planned(rn, i);
			break;
		}
		if (rn->n_mounts_running >= rn->jobs)
			return false;
		start_mount(rn, i);
		break;
	case PLAN_SCRUB:
		exec_scrub_step(rn, i);
		break;
	}
	return true;
}

static void record_waiting_mounts(struct run *rn);

/* Start what can start; waits that just started get their first look. */
static void start_ready(struct run *rn)
{
	bool changed, new_waits = false;

	do {
		changed = false;
		for (size_t k = 0; k < rn->plan->n_steps; k++) {
			size_t i = rn->order[k];

			if (try_start(rn, i)) {
				changed = true;
				new_waits |= rn->steps[i].out == OUT_RUNNING &&
					     step(rn, i)->kind != PLAN_MOUNT;
			}
		}
		if (new_waits) {
			exec_check_waits(rn);
			if (rn->cx->no_wait)
				defer_waits(rn);
			else
				record_waiting_mounts(rn);
			new_waits = false;
			changed = true;
		}
		save_state(rn, false);
	} while (changed);
}

static uint64_t nearest_deadline(const struct run *rn)
{
	uint64_t d = USEC_INFINITY;

	for (size_t i = 0; i < rn->plan->n_steps; i++) {
		const struct step_run *sr = &rn->steps[i];
		uint64_t t;

		if (sr->out != OUT_RUNNING)
			continue;
		t = step(rn, i)->kind == PLAN_MOUNT ? sr->job.deadline : sr->deadline;
		d = t < d ? t : d;
	}
	return d;
}

/* Interrupted (SIGINT, SIGTERM): what runs is abandoned and recorded as
 * such; what did not start stays as it was. */
static void interrupt_running(struct run *rn)
{
	for (size_t i = 0; i < rn->plan->n_steps; i++) {
		if (rn->steps[i].out != OUT_RUNNING)
			continue;
		if (step(rn, i)->kind == PLAN_MOUNT) {
			rn->n_mounts_running--;
			rn->cx->ops->mount_abandon(rn->cx->ud, &rn->steps[i].job);
		}
		fail_step(rn, i, OUT_FAILED, "interrupted");
		exec_record_step_failure(rn, i, STATE_FAILED);
	}
	save_state(rn, false);
}

/* Step 3: wait for something to happen, then deal with it. */
static int wait_and_collect(struct run *rn, struct exec_job **jobs)
{
	uint64_t deadline = nearest_deadline(rn), now;
	bool event = false, any_wait = false;
	size_t n = 0;
	int r;

	for (size_t i = 0; i < rn->plan->n_steps; i++)
		if (rn->steps[i].out == OUT_RUNNING) {
			if (step(rn, i)->kind == PLAN_MOUNT)
				jobs[n++] = &rn->steps[i].job;
			else
				any_wait = true;
		}
	r = rn->cx->ops->wait(rn->cx->ud, jobs, n, deadline, &event);
	if (r == -EINTR)
		interrupt_running(rn);
	if (r < 0)
		return r;
	now = now_usec(rn);
	for (size_t i = 0; i < rn->plan->n_steps; i++) {
		struct step_run *sr = &rn->steps[i];

		if (sr->out != OUT_RUNNING || step(rn, i)->kind != PLAN_MOUNT)
			continue;
		if (sr->job.finished || now >= sr->job.deadline)
			finish_mount(rn, i, !sr->job.finished);
	}
	if (any_wait && (event || now >= deadline))
		exec_check_waits(rn);
	return 0;
}

/* Longest chain of steps that (transitively) wait on each step: steps are
 * in dependency order, so one backward pass suffices. */
static void compute_chains(struct run *rn)
{
	for (size_t i = rn->plan->n_steps; i-- > 0;) {
		const struct plan_step *s = step(rn, i);

		for (size_t d = 0; d < s->n_deps; d++) {
			struct step_run *dep = &rn->steps[s->deps[d].step];

			if (dep->chain < rn->steps[i].chain + 1)
				dep->chain = rn->steps[i].chain + 1;
		}
	}
}

/* A step's place in the order: its chain, then plan order; sorted apart
 * from the step records, which are large. */
struct order_key {
	unsigned chain;
	size_t step;
};

static int by_chain(const void *a, const void *b)
{
	const struct order_key *x = a, *y = b;

	if (x->chain != y->chain)
		return x->chain > y->chain ? -1 : 1;
	return (x->step > y->step) - (x->step < y->step);
}

/* rn->order: the steps by chain length (longest first), then plan order. */
static int order_steps(struct run *rn)
{
	size_t n = rn->plan->n_steps;
	struct order_key *k = calloc(n ? n : 1, sizeof(*k));

	if (!k)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		k[i] = (struct order_key){ .chain = rn->steps[i].chain, .step = i };
	qsort(k, n, sizeof(*k), by_chain);
	for (size_t i = 0; i < n; i++)
		rn->order[i] = k[i].step;
	free(k);
	return 0;
}

bool exec_background_waits(const struct plan *p)
{
	bool *needed = calloc(p->n_steps ? p->n_steps : 1, sizeof(*needed)), any = false;

	if (!needed)
		return false;
	plan_boot_needs(p, needed);
	for (size_t i = 0; i < p->n_steps; i++)
		any |= !needed[i] && !p->steps[i].later && plan_step_is_device_wait(&p->steps[i]);
	free(needed);
	return any;
}

/* The wait that @s, a mount, waits for, or NULL. */
static const struct plan_step *device_wait_of(const struct run *rn, const struct plan_step *s)
{
	for (size_t d = 0; d < s->n_deps; d++) {
		const struct plan_step *w = step(rn, s->deps[d].step);

		if (plan_step_is_device_wait(w))
			return w;
	}
	return NULL;
}

/* The mounts whose device wait goes on after its first look are recorded
 * as waiting, with what for: a run killed while it waits leaves them in
 * the state, which `status` shows as interrupted, not as never planned. */
static void record_waiting_mounts(struct run *rn)
{
	char why[256];

	for (size_t i = 0; i < rn->plan->n_steps; i++) {
		const struct plan_step *s = step(rn, i), *w;
		const struct state_record *r;

		if (s->kind != PLAN_MOUNT || rn->steps[i].out != OUT_PENDING || !(w = device_wait_of(rn, s)) ||
		    rn->steps[w - rn->plan->steps].out != OUT_RUNNING)
			continue;
		r = state_find(rn->cx->state, STATE_MOUNT, s->entry->refused_at ?: s->entry->target);
		if (r && r->status == STATE_WAITING)
			continue;
		snprintf(why, sizeof(why), "waiting for %s", w->kind == PLAN_WAIT_DEVICE ? w->spec : "its btrfs members");
		record_mount(rn, i, STATE_WAITING, why, false);
	}
}

/* Once every step the boot needs has ended: the nofail entries still
 * waiting are recorded so (`status` shows them), and cx->boot_done told. */
static void maybe_boot_done(struct run *rn)
{
	char why[256], dur[32];

	for (size_t i = 0; i < rn->plan->n_steps && !rn->boot_told; i++)
		if (rn->needed[i] && (rn->steps[i].out == OUT_PENDING || rn->steps[i].out == OUT_RUNNING))
			return;
	if (rn->boot_told)
		return;
	rn->boot_told = true;
	for (size_t i = 0; i < rn->plan->n_steps; i++) {
		const struct plan_step *s = step(rn, i), *w = NULL;

		if (rn->needed[i] || s->kind != PLAN_MOUNT || rn->steps[i].out != OUT_PENDING ||
		    !(w = device_wait_of(rn, s)))
			continue;
		rn->sum.n_background++;
		snprintf(why, sizeof(why), "nofail: waiting for %s in the background, up to %s",
			 w->kind == PLAN_WAIT_DEVICE ? w->spec : "its btrfs members",
			 units_format_duration(w->timeout_usec, dur, sizeof(dur)));
		record_mount(rn, i, STATE_WAITING, why, false);
	}
	save_state(rn, false);
	if (rn->cx->boot_done)
		rn->cx->boot_done(rn->cx->boot_userdata, &rn->sum);
}

static bool anything_running(const struct run *rn)
{
	for (size_t i = 0; i < rn->plan->n_steps; i++)
		if (rn->steps[i].out == OUT_RUNNING)
			return true;
	return false;
}

int exec_run(const struct exec_ctx *cx, const struct plan *p, struct exec_summary *ret)
{
	struct run rn = { .cx = cx,
			  .plan = p,
			  .jobs = cx->jobs ? cx->jobs : 1,
			  .initial_inventory = cx->initial_inventory };
	struct exec_job **jobs = NULL;
	size_t n = p->n_steps ? p->n_steps : 1;
	int r = -ENOMEM;

	rn.steps = calloc(n, sizeof(*rn.steps));
	rn.texts = calloc(n, sizeof(*rn.texts));
	rn.order = calloc(n, sizeof(*rn.order));
	rn.needed = calloc(n, sizeof(*rn.needed));
	jobs = calloc(n, sizeof(*jobs));
	if (!rn.steps || !rn.texts || !rn.order || !rn.needed || !jobs)
		goto out;
	compute_chains(&rn);
	plan_boot_needs(p, rn.needed);
	r = order_steps(&rn);
	if (r < 0)
		goto out;
	for (start_ready(&rn); r == 0 && anything_running(&rn); start_ready(&rn)) {
		maybe_boot_done(&rn);
		r = wait_and_collect(&rn, jobs);
	}
	if (r == 0)
		maybe_boot_done(&rn);
	save_state(&rn, true);
	*ret = rn.sum;
out:
	free(jobs);
	free(rn.needed);
	strv_free(rn.registered);
	strv_free(rn.announced);
	free(rn.order);
	for (size_t i = 0; rn.steps && i < p->n_steps; i++) {
		free(rn.steps[i].why_degraded);
		free(rn.steps[i].job.mountpoint);
	}
	free(rn.steps);
	free(rn.texts);
	return r;
}
