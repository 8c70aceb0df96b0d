/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The stop executor (see undo.h for its steps).  It decides; the operations
 * table looks at the mount table and unmounts.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "copy/copy.h"
#include "parse/fsfacts.h"
#include "undo.h"
#include "shared/util.h"

/* Something storaged set up and `stop` undoes: also what an earlier pass
 * set up and a later one recorded failed, skipped or waiting (exec.c keeps
 * its seq): a mount by the ID it recorded (undo_mount() checks it), an
 * area by its own record (area_teardown() undoes what exists). */
static bool record_is_undoable(const struct state_record *r)
{
	if (r->seq == 0 || r->kind == STATE_BTRFS)
		return false;
	return r->status == STATE_DONE || r->status == STATE_DEGRADED ||
	       r->status == STATE_MOUNTING || r->kind == STATE_AREA || r->mount_id;
}

static int by_seq_desc(const void *a, const void *b)
{
	const struct state_record *x = *(const struct state_record *const *)a;
	const struct state_record *y = *(const struct state_record *const *)b;

	return (x->seq < y->seq) - (x->seq > y->seq);
}

/* A record written ahead of a mount storaged was killed in: is the mount
 * on its mount point the one it started (same type, and for a source that
 * is no path or tag, same source)?  Anything else was mounted by someone
 * else after storaged died. */
static bool mounting_record_matches(const struct state_record *rec, const struct mount_view *v)
{
	if (rec->status != STATE_MOUNTING)
		return true;
	if (rec->fstype && strcmp(rec->fstype, "auto") != 0 && strcmp(rec->fstype, "none") != 0 &&
	    (!v->top_fstype || strncmp(v->top_fstype, rec->fstype, strlen(rec->fstype)) != 0))
		return false;
	if (fs_spec_is_name(rec->source) && strcmp(rec->fstype ?: "", "none") != 0)
		return v->top_source && strcmp(v->top_source, rec->source) == 0;
	return true;
}

/* Is the mount on the record's mount point still the one storaged made?
 * Returns: 1 to unmount it, 0 to leave it (logged), -EBUSY when covered. */
static int mount_still_ours(const struct undo_ctx *cx, const struct state_record *rec,
			    const struct mount_view *v)
{
	if (!v->recorded_present) {
		log_info(cx->log, "%s: storaged's mount is gone; nothing to undo", rec->id);
		return 0;
	}
	if (v->has_top && !mounting_record_matches(rec, v)) {
		log_warning(cx->log, "%s: storaged was stopped while mounting it, and what is mounted there now (%s, %s) is not what it was mounting; left alone",
			    rec->id, v->top_source ?: "?", v->top_fstype ?: "?");
		return 0;
	}
	if (v->top_id_reused) {
		log_info(cx->log, "%s: storaged's mount is gone (another one took its place and its ID); nothing to undo",
			 rec->id);
		return 0;
	}
	if (rec->mount_id && (!v->has_top || v->top_id != (int)rec->mount_id)) {
		log_error(cx->log, "%s: another filesystem (%s, %s) is mounted on top of storaged's; unmount it first, then run `%s stop` again",
			  rec->id, v->top_source ?: "?", v->top_fstype ?: "?", log_self(cx->log));
		return -EBUSY;
	}
	return 1;
}

/* Why the umount of @mp failed, and what to do, into @why (@len bytes):
 * a mount below it when there is one (v->child_*), else its processes;
 * @self: the command to run again (log_self()). */
static void umount_failed_why(const struct mount_view *v, const char *mp, const char *err,
			      const char *self, char *why, size_t len)
{
	char q[PATH_MAX * 4 + 3];

	if (v->child_target)
		snprintf(why, len, "%s is mounted on %s, below it: unmount it first (umount %s), then run `%s stop` again",
			 v->child_text, v->child_target, shell_quote(v->child_target, q, sizeof(q)), self);
	else
		snprintf(why, len, "%s; stop the processes using it (fuser -vm %s) and run `%s stop` again",
			 err, shell_quote(mp, q, sizeof(q)), self);
}

/* @why (@len bytes): on a failure to unmount, why and what to do.
 * Returns: 1 unmounted, 0 nothing to undo, negative errno (each logged). */
static int undo_mount(const struct undo_ctx *cx, const struct state_record *rec, char *why, size_t len)
{
	const char *mp = rec->mountpoint ? rec->mountpoint : rec->id;
	struct mount_view v = { 0 };
	char err[512] = "";
	int r;

	r = cx->ops->mount_inspect(cx->ud, rec, &v);
	if (r < 0) {
		log_error(cx->log, "%s: cannot read the mount table: %s", rec->id, strerror(-r));
		return r;
	}
	r = mount_still_ours(cx, rec, &v);
	if (r <= 0) {
		mount_view_done(&v);
		return r;
	}
	if (v.location) {
		log_warning(cx->log, "%s: storaged's mount is now at '%s' (a directory above it was renamed); unmounting it there",
			    rec->id, v.location);
		mp = v.location;
	}
	r = cx->ops->umount(cx->ud, mp, rec, err, sizeof(err));
	if (r == -ESTALE) {
		log_info(cx->log, "%s: storaged's mount is gone (%s); nothing to undo", rec->id, err);
		r = 0;
	} else if (r < 0) {
		umount_failed_why(&v, mp, err[0] ? err : strerror(-r), log_self(cx->log), why, len);
		log_error(cx->log, "%s: cannot unmount: %s", rec->id, why);
	} else {
		log_info(cx->log, "unmounted %s", rec->id);
		r = 1;
	}
	mount_view_done(&v);
	return r;
}

/* Adds one outcome (of undo_mount(), undo_area()) to cx->sum.  An area
 * torn down without its content, with entries kept twice, or with its
 * whole tree kept apart is removed all the same: counted so, and apart. */
static void count(const struct undo_ctx *cx, enum state_kind kind, int r)
{
	bool torn_down = kind == STATE_AREA && (r == 0 || r == -ENODATA ||
						r == -COPY_SYNC_KEPT_BOTH || r == -COPY_SYNC_RESCUED);

	if (!cx->sum)
		return;
	if (torn_down)
		cx->sum->n_areas++;
	if (torn_down && r == -ENODATA)
		cx->sum->n_lost++;
	else if (torn_down && r == -COPY_SYNC_RESCUED)
		cx->sum->n_rescued++;
	else if (torn_down && r < 0)
		cx->sum->n_kept_both++;
	else if (r < 0)
		cx->sum->n_failed++;
	else if (r > 0 && kind == STATE_MOUNT)
		cx->sum->n_unmounted++;
}

/* @why (@len bytes, may be 0): the first error of the teardown, without
 * its "area 'NAME': " (the record names the area). */
static int undo_area(const struct undo_ctx *cx, const char *name, const char *path, char *why, size_t len)
{
	struct diag_list dl = { 0 };
	int r = cx->ops->area_teardown(cx->ud, name, &dl);
	size_t k = 0;

	while (k < dl.n && dl.v[k].level != DIAG_ERROR)
		k++;
	if (len && k < dl.n) {
		const char *msg = dl.v[k].msg, *own = strstr(msg, "': ");

		snprintf(why, len, "%s", has_prefix(msg, "area '") && own ? own + 3 : msg);
	}
	log_diags(cx->log, &dl);
	diag_list_done(&dl);
	if (r == 0 && path)
		log_info(cx->log, "area %s: removed from %s", name, path);
	else if (r == 0)
		log_info(cx->log, "area %s: removed", name);
	else if (r == -ENODATA) /* torn down, but its content was lost: said above */
		log_error(cx->log, "area %s: removed, without its content (not synced back)", name);
	else if (r == -COPY_SYNC_RESCUED) /* torn down, its whole tree kept apart: said above */
		log_error(cx->log, "area %s: removed, its content not synced back but kept where said above; `%s status` shows where until the next stop or start",
			  name, log_self(cx->log));
	else if (r == -COPY_SYNC_KEPT_BOTH) /* torn down, entries kept twice: said above */
		log_error(cx->log, "area %s: removed from %s, with entries changed on both sides or kept apart (above); `%s status` shows this until the next stop or start",
			  name, path ?: "its directory", log_self(cx->log));
	return r;
}

/* An area that stop tore down after a sync back that kept entries twice,
 * or with its whole tree kept apart (its directory gone): recorded
 * failed, with why, so that `status` shows what is to merge (exit 1).
 * Nothing of it is left to undo: the next stop clears it. */
static void record_kept_both(struct state *st, const struct state_record *rec, const char *why)
{
	char reason[1024];
	struct state_record *r;

	snprintf(reason, sizeof(reason), "removed by `storaged stop`; %s", why);
	r = state_put(st, STATE_AREA, rec->id, rec->source, rec->fstype, STATE_FAILED, reason, false);
	if (r)
		r->seq = 0;
}

/* A mount or area that stop could not undo, left in place: recorded
 * failed, with why, so that `status` says it is still there (exit 1);
 * its seq and mount ID stay for the next stop, and a start that finds it
 * in place records it done again (exec.c, exec_area.c). */
static void record_stop_failed(struct state *st, const struct state_record *rec, const char *why)
{
	char reason[1024];

	snprintf(reason, sizeof(reason), "still %s: `storaged stop` could not %s it: %s",
		 rec->kind == STATE_AREA ? "set up" : "mounted",
		 rec->kind == STATE_AREA ? "remove" : "unmount", why);
	state_put(st, rec->kind, rec->id, rec->source, rec->fstype, STATE_FAILED, reason, false);
}

/* Step 1 and 2.  Returns: failures, or -ENOMEM. */
static int undo_records(const struct undo_ctx *cx, struct state *st)
{
	_cleanup_free_ struct state_record **v = calloc(st->n ? st->n : 1, sizeof(*v));
	_cleanup_strv_free_ char **done = NULL;
	size_t n = 0;
	int failed = 0;

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < st->n; i++)
		if (record_is_undoable(&st->v[i]))
			v[n++] = &st->v[i];
	qsort(v, n, sizeof(*v), by_seq_desc);
	for (size_t i = 0; i < n; i++) {
		char why[768] = "";
		int r = v[i]->kind == STATE_AREA
				? undo_area(cx, v[i]->id, v[i]->source, why, sizeof(why))
				: undo_mount(cx, v[i], why, sizeof(why));

		count(cx, v[i]->kind, r);

		/* -ENODATA: an area torn down without its content: a failure
		 * to report, but nothing of it is left to undo */
		if (r < 0)
			failed++;
		if (r == -COPY_SYNC_KEPT_BOTH || r == -COPY_SYNC_RESCUED)
			record_kept_both(st, v[i], why);
		else if (r < 0 && r != -ENODATA && why[0])
			record_stop_failed(st, v[i], why);
		if ((r >= 0 || r == -ENODATA) && strv_extend(&done, v[i]->id) < 0)
			return -ENOMEM;
	}
	for (size_t i = 0; done && done[i]; i++) {
		state_remove(st, STATE_MOUNT, done[i]);
		state_remove(st, STATE_AREA, done[i]);
	}
	return failed;
}

/* Step 3.  Returns: failures. */
static int undo_unrecorded_areas(const struct undo_ctx *cx, struct state *st)
{
	_cleanup_strv_free_ char **names = NULL;
	int failed = 0;

	if (cx->ops->area_list(cx->ud, &names) < 0)
		return 0;
	for (size_t i = 0; names && names[i]; i++) {
		const struct state_record *rec = state_find(st, STATE_AREA, names[i]);

		if (rec && record_is_undoable(rec))
			continue; /* kept by undo_records() because it failed */
		int r = undo_area(cx, names[i], NULL, NULL, 0);

		count(cx, STATE_AREA, r);
		failed += r < 0;
	}
	return failed;
}

int undo_run(const struct undo_ctx *cx, struct state *st)
{
	int failed = undo_records(cx, st), r;

	if (failed < 0)
		return failed;
	failed += undo_unrecorded_areas(cx, st);
	if (failed == 0) {
		/* step 4; everything undone: the state starts afresh */
		for (size_t i = st->n; i-- > 0;)
			if (st->v[i].kind == STATE_BTRFS)
				cx->ops->mark_ready(cx->ud, st->v[i].id, false);
		state_done(st);
	}
	r = cx->ops->state_save(cx->ud, st, true);
	if (r < 0)
		log_warning(cx->log, "cannot write the state: %s", strerror(-r));
	return failed;
}
