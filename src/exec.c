/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "btrfs.h"
#include "exec.h"
#include "units.h"

enum outcome {
	OUT_PENDING,
	OUT_OK,
	OUT_INCOMPLETE, /* a btrfs filesystem still lacks members at its deadline */
	OUT_FAILED,
	OUT_SKIPPED,
};

struct step_run {
	enum outcome out;
	char msg[512]; /* why failed / skipped / incomplete */
};

struct run {
	struct exec_ctx *cx;
	const struct plan *plan;
	struct step_run *steps;
	char **registered; /* devnodes registered during this run */
	struct exec_summary sum;
};

static uint64_t now_usec(const struct run *rn)
{
	return rn->cx->ops->now(rn->cx->ud);
}

static void save_state(const struct run *rn)
{
	int r;

	if (!rn->cx->state_dir)
		return;
	r = state_save(rn->cx->state_dir, rn->cx->state);
	if (r < 0)
		log_warning(rn->cx->log, "cannot write state to '%s': %s; `storaged stop` may not undo this run",
			    rn->cx->state_dir, strerror(-r));
}

/* Register @devnode unless this run already did; failures are warnings: the
 * assemble step that follows reports what is really missing. */
static void register_once(struct run *rn, const char *devnode)
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

static void run_register(struct run *rn, size_t i)
{
	register_once(rn, rn->plan->steps[i].devnode);
	rn->steps[i].out = OUT_OK;
}

/* One look at the filesystem @fsid: register members not registered yet.
 * Returns: 1 complete and ready, 0 not yet; fills @present/@expected/@missing. */
static int assemble_once(struct run *rn, const char *fsid, uint64_t *present, uint64_t *expected,
			 char *missing, size_t len)
{
	struct inventory inv = { 0 };
	struct btrfs_fs_list l = { 0 };
	struct diag_list dl = { 0 };
	const struct btrfs_filesystem *fs;
	int r, ready = 0;

	r = rn->cx->ops->rescan(rn->cx->ud, &inv, &dl);
	if (r < 0 || btrfs_group(&inv, &l, &dl) < 0)
		goto out;
	fs = btrfs_fs_list_find(&l, fsid);
	if (!fs)
		goto out;
	for (size_t m = 0; m < fs->n_members; m++)
		register_once(rn, fs->members[m].dev->devnode);
	*present = fs->n_members;
	*expected = fs->num_devices;
	btrfs_format_missing(fs, missing, len);
	if (btrfs_filesystem_complete(fs) && fs->n_members > 0)
		ready = rn->cx->ops->devices_ready(rn->cx->ud, fs->members[0].dev->devnode) == 1;
out:
	btrfs_fs_list_done(&l);
	inventory_done(&inv);
	diag_list_done(&dl);
	return ready;
}

/* Wait, bounded by @deadline, until every member of @fsid is registered. */
static enum outcome assemble_wait(struct run *rn, const char *fsid, uint64_t timeout, uint64_t deadline,
				  struct step_run *sr)
{
	uint64_t present = 0, expected = 0;
	char missing[256] = "", dur[32];

	for (;;) {
		if (assemble_once(rn, fsid, &present, &expected, missing, sizeof(missing))) {
			snprintf(sr->msg, sizeof(sr->msg), "%llu/%llu members",
				 (unsigned long long)present, (unsigned long long)expected);
			return OUT_OK;
		}
		if (now_usec(rn) >= deadline || rn->cx->ops->wait_event(rn->cx->ud, deadline) < 0)
			break;
	}
	units_format_duration(timeout, dur, sizeof(dur));
	if (expected == 0)
		snprintf(sr->msg, sizeof(sr->msg), "no member present after %s", dur);
	else
		snprintf(sr->msg, sizeof(sr->msg), "%llu of %llu members present after %s%s%s",
			 (unsigned long long)present, (unsigned long long)expected, dur,
			 missing[0] ? ", " : "", missing);
	return present > 0 ? OUT_INCOMPLETE : OUT_FAILED;
}

static void run_assemble(struct run *rn, size_t i)
{
	const struct plan_step *s = &rn->plan->steps[i];
	uint64_t deadline = now_usec(rn);
	struct step_run *sr = &rn->steps[i];

	deadline = s->timeout_usec == USEC_INFINITY ? USEC_INFINITY : deadline + s->timeout_usec;
	sr->out = assemble_wait(rn, s->fsid, s->timeout_usec, deadline, sr);
	if (sr->out == OUT_OK) {
		state_put(rn->cx->state, STATE_BTRFS, s->fsid, NULL, "btrfs", STATE_DONE, sr->msg, false);
		if (rn->cx->state_dir)
			state_mark_ready(rn->cx->state_dir, s->fsid);
		log_info(rn->cx->log, "btrfs %s: assembled, %s", s->fsid, sr->msg);
	} else {
		state_put(rn->cx->state, STATE_BTRFS, s->fsid, NULL, "btrfs", STATE_INCOMPLETE, sr->msg, false);
	}
}

/* Look for @spec until @deadline; a btrfs device found goes on to assembly. */
static void run_wait_device(struct run *rn, size_t i)
{
	const struct plan_step *s = &rn->plan->steps[i];
	struct step_run *sr = &rn->steps[i];
	uint64_t start = now_usec(rn);
	uint64_t deadline = s->timeout_usec == USEC_INFINITY ? USEC_INFINITY : start + s->timeout_usec;
	char dur[32];

	for (;;) {
		struct inventory inv = { 0 };
		struct diag_list dl = { 0 };
		const struct block_device *d = NULL;
		char fsid[37] = "";

		if (rn->cx->ops->rescan(rn->cx->ud, &inv, &dl) == 0)
			d = inventory_find(&inv, s->spec);
		if (d && d->is_btrfs)
			snprintf(fsid, sizeof(fsid), "%s", d->btrfs.fsid_str);
		inventory_done(&inv);
		diag_list_done(&dl);
		if (d && fsid[0]) {
			sr->out = assemble_wait(rn, fsid, s->timeout_usec, deadline, sr);
			return;
		}
		if (d) {
			sr->out = OUT_OK;
			return;
		}
		if (now_usec(rn) >= deadline || rn->cx->ops->wait_event(rn->cx->ud, deadline) < 0)
			break;
	}
	units_format_duration(s->timeout_usec, dur, sizeof(dur));
	snprintf(sr->msg, sizeof(sr->msg), "device %s not found after %s", s->spec, dur);
	sr->out = OUT_FAILED;
}

/* The first dependency of @s that did not succeed, or NULL. */
static const struct plan_dep *failed_dep(const struct run *rn, const struct plan_step *s)
{
	for (size_t d = 0; d < s->n_deps; d++) {
		enum outcome o = rn->steps[s->deps[d].step].out;

		if (o == OUT_FAILED || o == OUT_SKIPPED)
			return &s->deps[d];
	}
	return NULL;
}

/* The assemble/wait step of a btrfs entry that ended incomplete, or SIZE_MAX. */
static size_t incomplete_dep(const struct run *rn, const struct plan_step *s)
{
	for (size_t d = 0; d < s->n_deps; d++)
		if (rn->steps[s->deps[d].step].out == OUT_INCOMPLETE)
			return s->deps[d].step;
	return SIZE_MAX;
}

static void fail_step(struct run *rn, size_t i, enum outcome out, const char *fmt, ...) _printf_(4, 5);

static void fail_step(struct run *rn, size_t i, enum outcome out, const char *fmt, ...)
{
	const struct plan_step *s = &rn->plan->steps[i];
	struct step_run *sr = &rn->steps[i];
	bool nofail = s->kind == PLAN_MOUNT && s->entry->nofail;
	char what[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(sr->msg, sizeof(sr->msg), fmt, ap);
	va_end(ap);
	sr->out = out;
	plan_step_describe(s, what, sizeof(what));
	if (nofail) {
		rn->sum.n_tolerated++;
		log_warning(rn->cx->log, "%s: %s (nofail: not counted as a failure)", what, sr->msg);
	} else {
		rn->sum.n_failed++;
		log_error(rn->cx->log, "%s: %s", what, sr->msg);
	}
}

static void record_mount(struct run *rn, const struct plan_step *s, enum state_status st,
			 const char *reason, bool undoable)
{
	struct state_record *r = state_put(rn->cx->state, STATE_MOUNT, s->entry->target, s->entry->source,
					   s->entry->fstype, st, reason, undoable);
	if (r)
		r->nofail = s->entry->nofail;
}

static int mount_options(const struct plan_step *s, bool degraded, char **ret)
{
	const char *o = s->entry->mount_options;

	if (!degraded)
		return (*ret = o ? strdup(o) : NULL, (o && !*ret) ? -ENOMEM : 0);
	if (asprintf(ret, "%s%sdegraded", o ? o : "", o ? "," : "") < 0)
		return -ENOMEM;
	return 0;
}

static void do_mount(struct run *rn, size_t i, bool degraded, const char *why_degraded)
{
	const struct plan_step *s = &rn->plan->steps[i];
	_cleanup_free_ char *opts = NULL;
	char err[512] = "";
	uint64_t t0 = now_usec(rn);
	struct state_record *rec;
	int r;

	r = mount_options(s, degraded, &opts);
	if (r == 0)
		r = rn->cx->ops->mount(rn->cx->ud, s->entry, opts, s->mount_timeout_usec, err, sizeof(err));
	if (r < 0) {
		fail_step(rn, i, OUT_FAILED, "mount failed: %s", err[0] ? err : strerror(-r));
		record_mount(rn, s, STATE_FAILED, rn->steps[i].msg, false);
		return;
	}
	rn->steps[i].out = OUT_OK;
	rn->sum.n_done++;
	record_mount(rn, s, degraded ? STATE_DEGRADED : STATE_DONE, why_degraded, true);
	rec = state_find(rn->cx->state, STATE_MOUNT, s->entry->target);
	if (rec)
		rec->duration_usec = now_usec(rn) - t0;
	log_info(rn->cx->log, "mounted %s on %s%s", s->entry->source, s->entry->target,
		 degraded ? " (degraded)" : "");
}

static void run_mount(struct run *rn, size_t i)
{
	const struct plan_step *s = &rn->plan->steps[i];
	const struct plan_dep *fd;
	size_t dep;

	if (s->done) {
		struct state_record *r = state_find(rn->cx->state, STATE_MOUNT, s->entry->target);

		rn->steps[i].out = OUT_OK;
		if (!r || r->seq == 0) /* mounted by someone else: not ours to undo */
			record_mount(rn, s, STATE_PRESENT, "already mounted", false);
		return;
	}
	fd = failed_dep(rn, s);
	if (fd) {
		fail_step(rn, i, OUT_SKIPPED, "not mounted: it waits for step %zu (%s), which failed: %s",
			  fd->step + 1, fd->reason, rn->steps[fd->step].msg);
		record_mount(rn, s, STATE_SKIPPED, rn->steps[i].msg, false);
		return;
	}
	dep = incomplete_dep(rn, s);
	if (dep == SIZE_MAX) {
		do_mount(rn, i, false, NULL);
		return;
	}
	if (!s->degraded_allowed) {
		fail_step(rn, i, OUT_FAILED,
			  "btrfs %s: %s; not mounting: degraded mounts are not allowed (set degraded = after-timeout in storaged.conf or add x-storaged.degraded to the fstab entry to allow them)",
			  rn->plan->steps[dep].fsid, rn->steps[dep].msg);
		record_mount(rn, s, STATE_FAILED, rn->steps[i].msg, false);
		return;
	}
	log_warning(rn->cx->log,
		    "*** btrfs %s: %s; mounting %s DEGRADED (-o degraded) as the policy allows: replace the missing member and run `btrfs replace` or `btrfs balance` ***",
		    rn->plan->steps[dep].fsid, rn->steps[dep].msg, s->entry->target);
	rn->sum.n_degraded++;
	do_mount(rn, i, true, rn->steps[dep].msg);
}

static void run_area(struct run *rn, size_t i)
{
	const struct plan_step *s = &rn->plan->steps[i];
	struct diag_list dl = { 0 };
	const struct plan_dep *fd = failed_dep(rn, s);
	int r;

	if (fd) {
		fail_step(rn, i, OUT_SKIPPED, "not set up: it waits for step %zu (%s), which failed: %s",
			  fd->step + 1, fd->reason, rn->steps[fd->step].msg);
		state_put(rn->cx->state, STATE_AREA, s->area->name, s->area->path, NULL, STATE_SKIPPED,
			  rn->steps[i].msg, false);
		return;
	}
	r = rn->cx->ops->area_setup(rn->cx->ud, s, &dl);
	log_diags(rn->cx->log, &dl);
	diag_list_done(&dl);
	if (r < 0) {
		rn->steps[i].out = OUT_FAILED;
		snprintf(rn->steps[i].msg, sizeof(rn->steps[i].msg), "area setup failed: %s", strerror(-r));
		rn->sum.n_failed++;
		state_put(rn->cx->state, STATE_AREA, s->area->name, s->area->path, NULL, STATE_FAILED,
			  rn->steps[i].msg, false);
		return;
	}
	rn->steps[i].out = OUT_OK;
	rn->sum.n_done++;
	if (!state_find(rn->cx->state, STATE_AREA, s->area->name) ||
	    state_find(rn->cx->state, STATE_AREA, s->area->name)->seq == 0)
		state_put(rn->cx->state, STATE_AREA, s->area->name, s->area->path,
			  config_backend_name(s->area->backend), STATE_DONE, NULL, true);
}

static void run_step(struct run *rn, size_t i)
{
	switch (rn->plan->steps[i].kind) {
	case PLAN_REGISTER:
		run_register(rn, i);
		break;
	case PLAN_ASSEMBLE:
		run_assemble(rn, i);
		break;
	case PLAN_WAIT_DEVICE:
		run_wait_device(rn, i);
		break;
	case PLAN_AREA:
		run_area(rn, i);
		break;
	case PLAN_MOUNT:
		run_mount(rn, i);
		break;
	}
}

int exec_run(struct exec_ctx *cx, const struct plan *p, struct exec_summary *ret)
{
	struct run rn = { .cx = cx, .plan = p };

	rn.steps = calloc(p->n_steps ? p->n_steps : 1, sizeof(*rn.steps));
	if (!rn.steps)
		return -ENOMEM;
	/* Steps are in dependency order, so one pass runs each after its deps. */
	for (size_t i = 0; i < p->n_steps; i++) {
		run_step(&rn, i);
		save_state(&rn);
	}
	*ret = rn.sum;
	strv_free(rn.registered);
	free(rn.steps);
	return 0;
}
