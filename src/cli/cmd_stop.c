/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * storaged stop: end a resident storaged, then run the stop executor
 * (undo.c) over the recorded state through the operations table: only
 * storaged's own mounts (the mount ID it recorded, still on top) are
 * unmounted, newest first, and its areas torn down.  What could not be
 * undone stays recorded for the next stop.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commands.h"
#include "daemon.h"
#include "liveness.h"
#include "state/state.h"
#include "world/statedir.h"
#include "status/status_prom.h"
#include "exec/sysops.h"
#include "exec/undo.h"
#include "shared/units.h"
#include "shared/util.h"

/* stop ends a resident storaged first: it would mount again what stop
 * undoes.  Alive is its lock held (liveness.h), never a pid file alone: a
 * killed resident's file may name a pid the kernel gave to another
 * process.  Waits until it has left (its lock is free). */
static void end_resident(const struct options *o, const struct logger *lg)
{
	_cleanup_free_ char *path = NULL, *pidfile = NULL;
	_cleanup_close_ int fd = -EBADF;
	pid_t pid;

	if (asprintf(&path, "%s/resident", o->state_dir) < 0 ||
	    asprintf(&pidfile, "%s/storaged.pid", o->state_dir) < 0)
		return;
	if (liveness_held(path) <= 0)
		return; /* nobody resident */
	pid = liveness_pid(path, pidfile);
	if (pid <= 0 || kill(pid, SIGTERM) < 0) {
		log_warning(lg, "a resident storaged holds '%s' but '%s' names no process that has it open; find it with `fuser -v %s` and stop it",
			    path, pidfile, path);
		return;
	}
	log_info(lg, "stopping the resident storaged (pid %d)", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd >= 0)
		flock(fd, LOCK_SH); /* it leaves on SIGTERM between two passes */
}

/* The closing line, as start's (cmd_start.c log_summary()): the counts
 * that are not zero, at error level when something could not be undone
 * or an area was removed without all of its content where it belongs,
 * nothing when there was nothing to undo. */
static void log_undone(const struct logger *lg, const struct undo_summary *sum)
{
	char line[256] = "", of[128] = "";

	add_count(line, sizeof(line), sum->n_unmounted, "unmounted", "unmounted");
	add_count(line, sizeof(line), sum->n_areas, "area removed", "areas removed");
	add_count(of, sizeof(of), sum->n_lost, "without its content", "without their content");
	add_count(of, sizeof(of), sum->n_kept_both, "with entries kept twice", "with entries kept twice");
	add_count(of, sizeof(of), sum->n_rescued, "with its content kept apart",
		  "with their content kept apart");
	if (of[0] && strlen(line) < sizeof(line))
		snprintf(line + strlen(line), sizeof(line) - strlen(line), " (%s)", of);
	add_count(line, sizeof(line), sum->n_failed, "failed", "failed");
	if (sum->n_failed || sum->n_kept_both || sum->n_rescued)
		log_error(lg, "%s; see `%s status`", line, log_self(lg));
	else if (sum->n_lost)
		log_error(lg, "%s", line);
	else if (line[0])
		log_info(lg, "%s", line);
}

int cmd_stop(const struct options *o, const struct logger *lg)
{
	struct sysops so;
	struct undo_summary sum = { 0 };
	struct undo_ctx cx = { .ops = &sysops_ops, .ud = &so, .log = lg, .sum = &sum };
	struct state st = { 0 };
	struct stat dir_st;
	int lock, failed, saved;

	if (o->dry_run) {
		log_error(lg, "stop: --dry-run is not supported; `%s status` shows what stop would undo",
			  log_self(lg));
		return EXIT_CONFIG;
	}
	/* no state directory: no storaged set anything up with it (start
	 * makes it before its first step), and stop must not make one; one
	 * named by hand is more likely misspelt */
	if (state_dir_missing(o, lg))
		return EXIT_STATE;
	if (lstat(o->state_dir, &dir_st) < 0 && errno == ENOENT) {
		log_info(lg, "nothing to undo: storaged set nothing up with state directory '%s' (it does not exist)",
			 o->state_dir);
		return 0;
	}
	/* the resident's pid is read from it: trusted first */
	if (statedir_check(o->state_dir, lg) < 0)
		return EXIT_STATE;
	end_resident(o, lg);
	/* a start still waiting for nofail entries' devices holds the lock */
	daemon_take_over(o->state_dir, lg);
	lock = statedir_lock(o->state_dir, statedir_lock_wait_sec(), lg);
	if (lock < 0)
		return lock == -EWOULDBLOCK || lock == -EINTR ? EXIT_STEP_FAILED : EXIT_STATE;
	if (statedir_load_state(o->state_dir, lg, &st) < 0) {
		log_error(lg, "nothing undone");
		state_done(&st);
		close(lock);
		return EXIT_STATE;
	}
	sysops_open_for_stop(&so, lg, o->state_dir);
	failed = undo_run(&cx, &st);
	sysops_close(&so);
	if (failed >= 0)
		log_undone(lg, &sum);
	/* undo_run() only warns: what is left recorded must be on disk */
	saved = failed < 0 ? 0 : statedir_save_state(o->state_dir, lg, &st);
	state_done(&st);
	/* what a killed start left is undone, or recorded as not */
	if (failed >= 0 && saved == 0)
		statedir_run_end(o->state_dir);
	close(lock);
	status_prom_after_pass(o, lg, !liveness_at_work(o->state_dir)); /* metrics-textfile */
	return saved < 0 ? EXIT_STATE : failed ? EXIT_STEP_FAILED : 0;
}
