/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * storaged stop: end a resident storaged, then undo what storaged recorded
 * in its state, newest first: unmount its mounts (only its own: the mount
 * ID it recorded, still on top) and tear down its areas.  What could not
 * be undone stays recorded for the next stop.
 *
 * The calls that change the system are grouped at the top (the "kernel"
 * section), each in a small function, so that they can become operations
 * of a table as start's are.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <unistd.h>

#include <libmount.h>

#include "area.h"
#include "commands.h"
#include "mount_worker.h"
#include "state.h"
#include "statedir.h"
#include "units.h"
#include "util.h"

/* ------------------------------------------------------------ kernel */

/* Returns: 0 or negative errno. */
static int kernel_make_private(const char *mp)
{
	return mount(NULL, mp, NULL, MS_REC | MS_PRIVATE, NULL) < 0 ? -errno : 0;
}

/* A submount an rbind brought along.  Returns: 0 or negative errno. */
static int kernel_umount_submount(const char *mp)
{
	return umount2(mp, UMOUNT_NOFOLLOW) < 0 ? -errno : 0;
}

/* Through libmount, as umount(8) (helpers, utab).  @why: its message on
 * failure.  Returns: 0; -EBUSY (or any failure); -ENOMEM. */
static int kernel_umount(const char *mp, char *why, size_t len)
{
	struct libmnt_context *cxt = mnt_new_context();
	int rc, ex;

	if (!cxt)
		return -ENOMEM;
	mnt_context_set_optsmode(cxt, MNT_OMODE_IGNORE | MNT_OMODE_NOTAB);
	mnt_context_set_target(cxt, mp);
	rc = mnt_context_umount(cxt);
	ex = mnt_context_get_excode(cxt, rc, why, len);
	mnt_free_context(cxt);
	return ex != 0 ? -EBUSY : 0;
}

/* Returns: 0 or negative errno (logged). */
static int undo_area(const struct options *o, const struct logger *lg, const struct state_record *rec)
{
	struct diag_list dl = { 0 };
	int r = area_teardown(o->state_dir, rec->id, true, &dl);

	log_diags(lg, &dl);
	diag_list_done(&dl);
	if (r == 0 && rec->source)
		log_info(lg, "area %s: removed from %s", rec->id, rec->source);
	else if (r == 0)
		log_info(lg, "area %s: removed", rec->id);
	return r;
}

/* ------------------------------------------------------------ is it ours */

/* Something storaged set up and `stop` undoes. */
static bool record_is_undoable(const struct state_record *r)
{
	return r->seq > 0 && r->kind != STATE_BTRFS &&
	       (r->status == STATE_DONE || r->status == STATE_DEGRADED || r->status == STATE_MOUNTING);
}

static int by_seq_desc(const void *a, const void *b)
{
	const struct state_record *x = *(const struct state_record *const *)a;
	const struct state_record *y = *(const struct state_record *const *)b;

	return (x->seq < y->seq) - (x->seq > y->seq);
}

/* Is @id still mounted, and is it the topmost mount on its mount point?
 * Returns: 1 found, 0 gone, negative errno. */
static int find_own_mount(struct libmnt_table *tb, const struct state_record *rec, struct libmnt_fs **ret_top)
{
	const char *mp = rec->mountpoint ? rec->mountpoint : rec->id;
	struct libmnt_iter *itr = mnt_new_iter(MNT_ITER_FORWARD);
	struct libmnt_fs *fs;
	bool found = false;

	if (!itr)
		return -ENOMEM;
	/* at its mount point: an ID found elsewhere was freed and reused */
	while (!found && mnt_table_next_fs(tb, itr, &fs) == 0)
		found = strcmp(mnt_fs_get_target(fs), mp) == 0 &&
			(!rec->mount_id || mnt_fs_get_id(fs) == (int)rec->mount_id);
	mnt_free_iter(itr);
	*ret_top = mnt_table_find_target(tb, mp, MNT_ITER_BACKWARD);
	return found;
}

/* A record written ahead of a mount storaged was killed in: is the mount
 * on its mount point the one it started (same type, and for a source that
 * is no path or tag, same source)?  Anything else was mounted by someone
 * else after storaged died. */
static bool mounting_record_matches(const struct state_record *rec, struct libmnt_fs *fs)
{
	const char *type = mnt_fs_get_fstype(fs), *src = mnt_fs_get_source(fs);

	if (rec->status != STATE_MOUNTING)
		return true;
	if (rec->fstype && strcmp(rec->fstype, "auto") != 0 && strcmp(rec->fstype, "none") != 0 &&
	    (!type || strncmp(type, rec->fstype, strlen(rec->fstype)) != 0))
		return false;
	if (fs_spec_is_name(rec->source) && strcmp(rec->fstype ?: "", "none") != 0)
		return src && strcmp(src, rec->source) == 0;
	return true;
}

/* Is the mount on @rec's mount point still storaged's own, on top?
 * Returns: 1 yes, undo it; 0 nothing to undo (logged); -EBUSY another
 * mount is on top (logged); -ENOMEM. */
static int own_mount_on_top(const struct logger *lg, struct libmnt_table *tb, const struct state_record *rec,
			    struct libmnt_fs **ret_top)
{
	const char *mp = rec->mountpoint ? rec->mountpoint : rec->id;
	struct libmnt_fs *top = NULL;
	uint64_t unique_id;
	int own, id;

	own = find_own_mount(tb, rec, &top);
	if (own == 0)
		log_info(lg, "%s: storaged's mount is gone; nothing to undo", rec->id);
	if (own <= 0)
		return own;
	if (top && !mounting_record_matches(rec, top)) {
		log_warning(lg, "%s: storaged was stopped while mounting it, and what is mounted there now (%s, %s) is not what it was mounting; left alone",
			    rec->id, mnt_fs_get_source(top) ?: "?", mnt_fs_get_fstype(top) ?: "?");
		return 0;
	}
	mount_ids_at(mp, &id, &unique_id);
	if (rec->mount_unique_id && unique_id != rec->mount_unique_id && id == (int)rec->mount_id) {
		log_info(lg, "%s: storaged's mount is gone (another one took its place and its ID); nothing to undo", rec->id);
		return 0;
	}
	if (rec->mount_id && (!top || mnt_fs_get_id(top) != (int)rec->mount_id)) {
		log_error(lg, "%s: another filesystem (%s, %s) is mounted on top of storaged's; unmount it first, then run `storaged stop` again",
			  rec->id, top ? mnt_fs_get_source(top) : "?", top ? mnt_fs_get_fstype(top) : "?");
		return -EBUSY;
	}
	*ret_top = top;
	return 1;
}

/* ------------------------------------------------------------ undo */

/* An rbind brought the mounts below its source along: they are undone
 * first, deepest first.  Returns: 0 or negative errno (logged). */
static int umount_submounts(const struct logger *lg, struct libmnt_table *tb, struct libmnt_fs *parent)
{
	struct libmnt_iter *itr = mnt_new_iter(MNT_ITER_BACKWARD);
	struct libmnt_fs *child;
	int r = itr ? 0 : -ENOMEM;

	while (r == 0 && mnt_table_next_child_fs(tb, itr, parent, &child) == 0) {
		r = umount_submounts(lg, tb, child);
		if (r < 0)
			break;
		r = kernel_umount_submount(mnt_fs_get_target(child));
		if (r < 0)
			log_error(lg, "%s: cannot unmount: %s; stop the processes using it (fuser -vm %s) and run `storaged stop` again",
				  mnt_fs_get_target(child), strerror(-r), mnt_fs_get_target(child));
	}
	mnt_free_iter(itr);
	return r;
}

/* Returns: 0 (undone, or nothing to undo) or negative errno (logged). */
static int undo_mount(const struct logger *lg, const struct state_record *rec)
{
	/* the real mount table: stop acts on it (no test input here) */
	struct libmnt_table *tb = mnt_new_table_from_file("/proc/self/mountinfo");
	const char *mp = rec->mountpoint ? rec->mountpoint : rec->id;
	struct libmnt_fs *top = NULL;
	char why[512] = "";
	int r;

	r = tb ? own_mount_on_top(lg, tb, rec, &top) : -ENOMEM;
	if (r <= 0) {
		mnt_unref_table(tb);
		return r;
	}
	/* an rbind of a shared source is in its peer group: unmounting the
	 * copies would unmount the source's own submounts too */
	if (rec->recursive) {
		r = kernel_make_private(mp);
		if (r < 0)
			log_warning(lg, "%s: cannot make the rbind private before undoing it: %s", rec->id, strerror(-r));
	}
	r = rec->recursive ? umount_submounts(lg, tb, top) : 0;
	mnt_unref_table(tb);
	if (r < 0)
		return r;
	r = kernel_umount(mp, why, sizeof(why));
	if (r == -EBUSY)
		log_error(lg, "%s: cannot unmount: %s; stop the processes using it (fuser -vm %s) and run `storaged stop` again",
			  rec->id, why[0] ? why : "unknown error", mp);
	if (r == 0)
		log_info(lg, "unmounted %s", rec->id);
	return r;
}

/* Returns: how many records could not be undone; -ENOMEM. */
static int undo_records(const struct options *o, const struct logger *lg, struct state *st)
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
		int r = v[i]->kind == STATE_AREA ? undo_area(o, lg, v[i]) : undo_mount(lg, v[i]);

		if (r < 0)
			failed++;
		else if (strv_extend(&done, v[i]->id) < 0)
			return -ENOMEM;
	}
	for (size_t i = 0; done && done[i]; i++) {
		state_remove(st, STATE_MOUNT, done[i]);
		state_remove(st, STATE_AREA, done[i]);
	}
	return failed;
}

/* Areas whose setup finished but whose record was not saved (storaged was
 * killed in between) are found by their own state and removed too.
 * Returns: how many could not be removed. */
static int undo_unrecorded_areas(const struct options *o, const struct logger *lg, const struct state *st)
{
	_cleanup_strv_free_ char **names = NULL;
	int failed = 0;

	if (area_list_names(o->state_dir, &names) < 0)
		return 0;
	for (size_t i = 0; names && names[i]; i++) {
		const struct state_record *rec = NULL;
		struct state_record fake = { .kind = STATE_AREA, .id = names[i] };

		for (size_t k = 0; k < st->n && !rec; k++)
			if (st->v[k].kind == STATE_AREA && strcmp(st->v[k].id, names[i]) == 0)
				rec = &st->v[k];
		if (rec && record_is_undoable(rec))
			continue; /* undone (or kept on failure) by undo_records() */
		failed += undo_area(o, lg, &fake) < 0;
	}
	return failed;
}

/* stop ends a resident storaged first: it would mount again what stop
 * undoes.  Waits until it has left (its lock, resident.c's, is free). */
static void end_resident(const struct options *o, const struct logger *lg)
{
	_cleanup_free_ char *path = NULL, *pidfile = NULL;
	char buf[32] = "";
	uint64_t pid = 0;
	FILE *f;
	int fd;

	if (asprintf(&path, "%s/resident", o->state_dir) < 0 ||
	    asprintf(&pidfile, "%s/storaged.pid", o->state_dir) < 0)
		return;
	fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return;
	if (flock(fd, LOCK_EX | LOCK_NB) == 0 || errno != EWOULDBLOCK) {
		close(fd); /* nobody resident */
		return;
	}
	f = fopen(pidfile, "re");
	if (f && fgets(buf, sizeof(buf), f))
		buf[strcspn(buf, "\n")] = '\0';
	if (f)
		fclose(f);
	if (units_parse_uint(buf, INT32_MAX, &pid) < 0 || pid == 0 || kill((pid_t)pid, SIGTERM) < 0) {
		log_warning(lg, "a resident storaged holds '%s' but '%s' names no process to stop; stop it by hand",
			    path, pidfile);
		close(fd);
		return;
	}
	log_info(lg, "stopping the resident storaged (pid %llu)", (unsigned long long)pid);
	flock(fd, LOCK_EX); /* it leaves on SIGTERM between two passes */
	close(fd);
}

int cmd_stop(const struct options *o, const struct logger *lg)
{
	struct state st = { 0 };
	int lock, failed, r;

	if (o->dry_run) {
		log_error(lg, "stop: --dry-run is not supported; `storaged status` shows what stop would undo");
		return EXIT_CONFIG;
	}
	end_resident(o, lg);
	lock = statedir_lock(o->state_dir, lg);
	if (lock < 0)
		return lock == -EPERM ? EXIT_CONFIG : EXIT_STEP_FAILED;
	if (statedir_load_state(o->state_dir, lg, &st) < 0) {
		log_error(lg, "nothing undone");
		close(lock);
		return EXIT_STEP_FAILED;
	}
	failed = undo_records(o, lg, &st);
	failed += undo_unrecorded_areas(o, lg, &st);
	if (failed == 0) {
		for (size_t i = st.n; i-- > 0;)
			if (st.v[i].kind == STATE_BTRFS)
				state_clear_ready(o->state_dir, st.v[i].id);
		state_done(&st); /* everything undone: the state starts afresh */
	}
	r = state_save(o->state_dir, &st);
	if (r < 0)
		log_warning(lg, "cannot write '%s/state': %s", o->state_dir, strerror(-r));
	state_done(&st);
	close(lock);
	return failed ? EXIT_STEP_FAILED : 0;
}
