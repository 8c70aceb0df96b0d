/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * storaged start: load the world, plan, and run the plan through the
 * executor (--dry-run prints the plan instead); then, with --foreground,
 * --daemon or hotplug = yes, stay resident and run the same pass again
 * for devices that appear later (resident.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "area_watch.h"
#include "commands.h"
#include "daemon.h"
#include "liveness.h"
#include "exec/exec.h"
#include "resident.h"
#include "state/state.h"
#include "world/statedir.h"
#include "status/status_prom.h"
#include "exec/sysops.h"
#include "world/world.h"
#include "exec/late_member.h"

/* --dry-run: the plan on stdout, then the closing line check ends with.
 * @ret_fails: the steps the plan shows will fail, counted as start counts
 * them (world_predicted_failures()), so that a script checking a change
 * before a reboot sees them in the exit status.  Returns: 0 or negative
 * errno from writing or counting. */
static int render_plan(const struct options *o, const struct logger *lg, const struct plan *p,
		       unsigned *ret_fails)
{
	int r = o->json ? plan_render_json(p, stdout) : plan_render_text(p, stdout);
	struct world_failures c;

	fflush(stdout);
	if (r == 0)
		r = world_predicted_failures(p, &c, NULL, NULL);
	if (r < 0)
		return r;
	world_log_failures(lg, &c);
	*ret_fails = c.failed;
	return 0;
}

/* Readiness once the boot's own steps ended (exec_ctx.boot_done). */
struct boot_tell {
	/* the pass's own logger: a SysV start's child moves it to syslog
	 * once the start it answers has returned (leave_callers_output()) */
	struct logger *lg;
	const char *state_dir;
	bool background; /* nofail entries may go on waiting (exec_background_waits()) */
	unsigned degraded_before; /* btrfs mounted degraded before this pass (still_degraded()) */
	size_t planned; /* the plan's steps, for log_summary() */
	int parent_fd; /* SysV: the pipe to the `start` that returns then; -1 */
	int waiting_fd; /* the lock of daemon_mark_waiting(); -1 */
};

/* The `start` that forked this process (return_at_boot_done()) has
 * returned: what is left of the wait is no longer its output.  A caller
 * reading it (`out=$(storaged start)`) has it whole and is not held until
 * the nofail entries' wait ends: the standard streams go to /dev/null and
 * @lg to syslog or the kernel's log, as a detached resident's (resident.c). */
static void leave_callers_output(struct logger *lg)
{
	const char *self = lg->self;
	int fd = open("/dev/null", O_RDWR | O_CLOEXEC);

	if (fd >= 0) {
		dup2(fd, STDIN_FILENO);
		dup2(fd, STDOUT_FILENO);
		dup2(fd, STDERR_FILENO);
		close(fd);
	}
	log_init_detached(lg, lg->max_level);
	lg->self = self;
}

/* The STATUS= words of READY=1 for a pass's exit status @status. */
static const char *ready_words(int status)
{
	return status == EXIT_DEGRADED ? "all done, some btrfs mounted degraded" : "some steps failed";
}

static void log_closing(const struct logger *lg, size_t planned, const struct exec_summary *sum,
			unsigned degraded_before, unsigned *waiting_said);

static void tell_boot_done(void *userdata, const struct exec_summary *sum)
{
	struct boot_tell *bt = userdata;
	/* what the start returning now exits with: the nofail entries still
	 * waiting can only fail with nofail, which counts for nothing */
	unsigned char code = exit_status_of(sum->n_failed, sum->n_degraded + bt->degraded_before);

	if (code)
		notify_send("READY=1\nSTATUS=%s: see `%s status`", ready_words(code), log_self(bt->lg));
	else
		notify_send("READY=1\nSTATUS=done; nofail entries may still wait for devices");
	if (sum->n_background)
		log_info(bt->lg, "the entries the boot needs are done%s; %u nofail %s on waiting for %s",
			 sum->n_failed ? " (some failed)" : "", sum->n_background,
			 sum->n_background == 1 ? "entry goes" : "entries go",
			 sum->n_background == 1 ? "its device" : "their devices");
	/* the start that returns now ends its output with its own closing
	 * line, the counts so far: the one at the end of the wait goes to
	 * syslog (leave_callers_output()) */
	if (bt->parent_fd >= 0)
		log_closing(bt->lg, bt->planned, sum, bt->degraded_before, NULL);
	/* the next start or stop may end this wait instead of finding the
	 * state directory locked (daemon_take_over()) */
	if (bt->background && bt->waiting_fd < 0 &&
	    (bt->waiting_fd = daemon_mark_waiting(bt->state_dir)) < 0)
		log_debug(bt->lg, "cannot mark '%s/waiting': %s", bt->state_dir, strerror(-bt->waiting_fd));
	if (bt->parent_fd >= 0) {
		fflush(stdout);
		fflush(stderr);
		if (write(bt->parent_fd, &code, 1) < 0)
			log_debug(bt->lg, "the waiting start is gone: %s", strerror(errno));
		bt->parent_fd = safe_close(bt->parent_fd);
		leave_callers_output(bt->lg);
	}
}

/*
 * Under SysV init (no service manager to notify) the one-shot `start`
 * must return when the boot's entries are done, while nofail entries go
 * on waiting for their devices: the work goes on in a child, and this
 * process waits only for its word (tell_boot_done()) and exits with it.
 * Forked before any mount child exists (they die with their parent).
 * Returns: in the child, 0 with @ret_fd the pipe to write; negative errno.
 */
static int return_at_boot_done(int *ret_fd)
{
	int p[2], status = 0;
	unsigned char code;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		return -errno;
	}
	if (pid == 0) {
		close(p[0]);
		*ret_fd = p[1];
		return 0;
	}
	close(p[1]);
	if (read(p[0], &code, 1) == 1)
		_exit(code);
	/* no word: the child ended first (interrupted, an error) */
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	_exit(WIFEXITED(status) ? WEXITSTATUS(status) : EXIT_STEP_FAILED);
}

void add_count(char *buf, size_t len, unsigned n, const char *one, const char *many)
{
	size_t k = strlen(buf);

	if (n && k < len)
		snprintf(buf + k, len - k, "%s%u %s", k ? ", " : "", n, n == 1 ? one : many);
}

/* The closing line, as `findmnt --verify` ends: only the counts that are
 * not zero, nothing at all when the pass changed nothing.  Its "failed"
 * are the steps that make the exit status non-zero (exec_summary.n_failed),
 * recorded failed or skipped in the state `status` reads.  With -v, the
 * whole accounting against the steps planned.  @waiting_said: a resident's
 * count of steps left waiting that its last pass said (in/out), NULL for a
 * one-shot start: passes on events that change nothing do not say the
 * same "N waiting for devices" again. */
static void log_summary(const struct logger *lg, size_t planned, const struct exec_summary *sum,
			unsigned *waiting_said)
{
	char line[512] = "", skipped[96] = "";
	bool waiting_news = !waiting_said || *waiting_said != sum->n_waiting;

	log_debug(lg, "%zu planned: %u mounted (%u degraded), %u areas set up, %u btrfs assembled, %u failed (%u skipped), %u nofail failed, %u waiting for devices, %u left for after the network",
		  planned, sum->n_mounted, sum->n_degraded, sum->n_areas, sum->n_assembled, sum->n_failed,
		  sum->n_skipped, sum->n_tolerated, sum->n_waiting, sum->n_later);
	add_count(line, sizeof(line), sum->n_mounted, "mounted", "mounted");
	add_count(line, sizeof(line), sum->n_degraded, "of them DEGRADED", "of them DEGRADED");
	add_count(line, sizeof(line), sum->n_areas, "area set up", "areas set up");
	add_count(line, sizeof(line), sum->n_assembled, "btrfs assembled", "btrfs assembled");
	if (sum->n_skipped)
		snprintf(skipped, sizeof(skipped), " (%u skipped: %s)", sum->n_skipped,
			 sum->n_skipped == 1 ? "a step it waits for failed" : "steps they wait for failed");
	add_count(line, sizeof(line), sum->n_failed, "failed", "failed");
	if (strlen(line) + strlen(skipped) < sizeof(line))
		strcat(line, skipped);
	add_count(line, sizeof(line), sum->n_tolerated, "failed with nofail", "failed with nofail");
	if (line[0] || waiting_news)
		add_count(line, sizeof(line), sum->n_waiting, "waiting for its device", "waiting for devices");
	if (waiting_said)
		*waiting_said = sum->n_waiting;
	add_count(line, sizeof(line), sum->n_later, "left for after the network", "left for after the network");
	if (sum->n_failed)
		log_error(lg, "%s; see `%s status`", line, log_self(lg));
	else if (sum->n_degraded)
		log_warning(lg, "%s; see `%s status`", line, log_self(lg));
	else if (line[0])
		log_info(lg, "%s", line);
}

/* The closing line, then the btrfs filesystems mounted degraded before the
 * pass (@degraded_before, still_degraded()) that still are. */
static void log_closing(const struct logger *lg, size_t planned, const struct exec_summary *sum,
			unsigned degraded_before, unsigned *waiting_said)
{
	log_summary(lg, planned, sum, waiting_said);
	if (degraded_before)
		log_warning(lg, "%u btrfs %s mounted earlier %s still DEGRADED: see `%s status`", degraded_before,
			    degraded_before == 1 ? "filesystem" : "filesystems", degraded_before == 1 ? "is" : "are",
			    log_self(lg));
}

/* btrfs filesystems of @w's plan that were mounted before this pass and are
 * mounted degraded still (the mount table's superblock options say so):
 * a second start must not report "all done" over them. */
static unsigned still_degraded(const struct world *w)
{
	_cleanup_free_ dev_t *seen = NULL;
	unsigned n = 0;

	if (!w->mountinfo || !(seen = calloc(w->plan.n_steps + 1, sizeof(*seen))))
		return 0;
	for (size_t i = 0; i < w->plan.n_steps; i++) {
		const struct plan_step *s = &w->plan.steps[i];
		struct libmnt_fs *fs;
		const char *type;
		dev_t dev;
		unsigned k = 0;

		if (s->kind != PLAN_MOUNT || !s->done)
			continue;
		fs = mnt_table_find_target(w->mountinfo, s->facts->target_real ?: s->entry->target,
					   MNT_ITER_BACKWARD);
		type = fs ? mnt_fs_get_fstype(fs) : NULL;
		if (!type || !streq(type, "btrfs") || mnt_fs_get_option(fs, "degraded", NULL, NULL) != 0)
			continue;
		/* filesystems, not mounts: a bind of a subvolume or directory
		 * of it is the same filesystem (its st_dev in mountinfo) */
		dev = mnt_fs_get_devno(fs);
		while (k < n && seen[k] != dev)
			k++;
		if (k == n)
			seen[n++] = dev;
	}
	return n;
}

/* The state name of mount step @s's record (exec.c, record_mount()). */
static const char *mount_record_id(const struct plan_step *s)
{
	return s->entry->refused_at ?: s->entry->target;
}

/* A refused line (world/refuse.c) that this plan no longer has: fixed or
 * removed since.  Its failure, recorded under FILE:LINE, undoes nothing,
 * and status must not go on showing it. */
static void forget_fixed_lines(struct state *st, const struct plan *p)
{
	for (size_t i = st->n; i-- > 0;) {
		const struct state_record *r = &st->v[i];
		bool planned = false;
		_cleanup_free_ char *id = NULL;

		if (r->kind != STATE_MOUNT || r->seq || r->mount_id || r->status != STATE_FAILED || !r->reason ||
		    !has_prefix(r->reason, "refused, "))
			continue;
		for (size_t k = 0; k < p->n_steps && !planned; k++)
			planned = p->steps[k].kind == PLAN_MOUNT && streq(mount_record_id(&p->steps[k]), r->id);
		if (!planned && (id = strdup(r->id)))
			state_remove(st, STATE_MOUNT, id);
	}
}

/* Until the pass ran to its end (statedir_run_begin()): a start killed
 * before its first record, or between two, leaves this to tell status. */
static void mark_unfinished(const char *state_dir, const struct logger *lg)
{
	int r = statedir_run_begin(state_dir);

	if (r < 0)
		log_warning(lg, "cannot write '%s/" STATEDIR_UNFINISHED "': %s; were this start killed, `%s status` could not tell it",
			    state_dir, strerror(-r), log_self(lg));
}

/* The plan through the executor and the real operations, under the state
 * directory's lock.  @ret_failed: steps that failed; @ret_degraded:
 * btrfs mounts made degraded.  Returns: 0; -EINTR
 * (SIGINT/SIGTERM during the run); -EPERM when the state directory or
 * its state file cannot be used, before the run (nothing done) or after
 * it (the state does not hold what was done); -EIO when another storaged
 * holds the lock; other negative errno (all logged). */
static int run_plan(const struct options *o, const struct logger *caller_lg, struct world *w, const char *sysfs,
		    bool no_wait, unsigned *waiting_said, unsigned *ret_failed, unsigned *ret_degraded)
{
	struct sysops so;
	struct state st = { 0 };
	struct exec_summary sum = { 0 };
	struct logger plg = *caller_lg; /* the pass's: see struct boot_tell */
	const struct logger *lg = &plg;
	struct boot_tell bt = {
		.lg = &plg, .state_dir = o->state_dir, .planned = w->plan.n_steps, .parent_fd = -1, .waiting_fd = -1
	};
	struct exec_ctx cx = {
		.boot_done = tell_boot_done,
		.boot_userdata = &bt,
		.ops = &sysops_ops,
		.ud = &so,
		.log = lg,
		.state = &st,
		.jobs = w->cfg.jobs,
		.no_wait = no_wait,
		.initial_inventory = &w->inv,
	};
	_cleanup_close_ int lock = -EBADF;
	int r, saved;

	/* a start left waiting for nofail entries gives way to this one */
	if (!no_wait) {
		if (statedir_check(o->state_dir, lg) < 0)
			return -EPERM;
		daemon_take_over(o->state_dir, lg);
	}
	lock = statedir_lock(o->state_dir, statedir_lock_wait_sec(), lg);
	if (lock < 0)
		return lock == -EWOULDBLOCK ? -EIO : lock;
	/* the state is written before the first step: a state that cannot
	 * be written stops the run before it mounts what stop could not find */
	r = statedir_load_state(o->state_dir, lg, &st);
	if (r == 0) {
		mark_unfinished(o->state_dir, lg);
		forget_fixed_lines(&st, &w->plan);
		r = statedir_save_state(o->state_dir, lg, &st);
	}
	if (r < 0) {
		statedir_run_end(o->state_dir); /* it did nothing */
		state_done(&st);
		return r;
	}
	bt.degraded_before = still_degraded(w);
	bt.background = !no_wait && exec_background_waits(&w->plan);
	if (bt.background && !o->foreground && !getenv("NOTIFY_SOCKET") &&
	    return_at_boot_done(&bt.parent_fd) < 0)
		log_warning(lg, "cannot leave nofail entries waiting in the background; waiting for them");
	/* a resident pass leaves SIGINT/SIGTERM to the resident loop */
	sysops_open(&so, lg, o->state_dir, !no_wait);
	so.scan_depth = w->inv.depth;
	/* one view a pass: the table and the directories the loader read serve the mounts */
	so.mounts.view = w->view;
	w->view = (struct view){ 0 };
	r = exec_run(&cx, &w->plan, &sum);
	/* a member back after a degraded mount (a resident pass on its event) */
	if (r == 0)
		exec_late_members(&st, &w->inv, &w->btrfs, sysfs, &sysops_ops, &so, lg);
	safe_close(bt.parent_fd);
	daemon_unmark_waiting(o->state_dir, bt.waiting_fd);
	sysops_close(&so);
	/* the run's own saves only warn: what is on disk must hold it all */
	saved = r == 0 ? statedir_save_state(o->state_dir, lg, &st) : 0;
	state_done(&st);
	if (r == 0 && !so.interrupted && saved == 0)
		statedir_run_end(o->state_dir); /* ran to its end: the records say it all */
	lock = safe_close(lock);
	if (r == -EINTR || so.interrupted)
		return -EINTR;
	if (r < 0)
		return r;
	log_closing(lg, w->plan.n_steps, &sum, bt.degraded_before, waiting_said);
	if (saved < 0)
		return saved;
	*ret_failed = sum.n_failed;
	*ret_degraded = sum.n_degraded + bt.degraded_before;
	return 0;
}

/* One plan-and-run (or plan-and-print) pass over a freshly read world.
 * @waiting_said: see log_summary().
 * @ret_failed: steps failed, or shown to fail by --dry-run.  Returns: 0;
 * -EINVAL (config, fstab or plan errors: a usage error); -EPERM (the
 * state directory, see run_plan()); other negative errno. */
static int start_pass(const struct options *o, const struct logger *lg, bool no_wait, unsigned *waiting_said,
		      bool *ret_hotplug, unsigned *ret_failed, unsigned *ret_degraded)
{
	struct sources src;
	struct world w = { 0 };
	_cleanup_free_ char *warned = NULL;
	int r;

	sources_init(&src, o);
	/* the boot refuses a bad line, area or [btrfs] section alone and
	 * sets up the rest; --dry-run is as strict as check */
	src.lenient = !o->dry_run;
	src.area_records = o->dry_run;
	/* the configuration's warnings once per boot and configuration: a
	 * start that changes nothing prints nothing (storaged(8), start) */
	if (!o->dry_run && asprintf(&warned, "%s/" STATEDIR_WARNED, o->state_dir) >= 0)
		src.warned_path = warned;
	r = world_load(&src, lg, &w);
	if (ret_hotplug)
		*ret_hotplug = w.cfg.hotplug;
	if (r == 0)
		r = o->dry_run ? render_plan(o, lg, &w.plan, ret_failed)
			       : run_plan(o, lg, &w, src.sysfs_btrfs, no_wait, waiting_said, ret_failed,
					  ret_degraded);
	if (r >= 0 && !o->dry_run)
		world_note_warnings(&src, &w);
	world_done(&w);
	if (!o->dry_run && r != -EINVAL && r != -EPERM)
		status_prom_after_pass(o, lg, !liveness_at_work(o->state_dir)); /* metrics-textfile */
	return r;
}

/* What a resident storaged keeps from one pass to the next. */
struct resident_memory {
	struct options o; /* -c, -f, --state-dir absolute (stay_resident()) */
	unsigned waiting_said; /* log_summary() */
	struct area_watch watch; /* grow = yes, full areas (area_watch.h) */
};

static int resident_pass(void *userdata, const struct logger *lg, bool no_wait)
{
	struct resident_memory *mem = userdata;
	unsigned failed = 0, degraded = 0;
	int r = start_pass(&mem->o, lg, no_wait, &mem->waiting_said, NULL, &failed, &degraded);

	/* what the pass freed goes back to the kernel: the resident process
	 * holds only its loop between events */
	malloc_trim(0);
	return r;
}

/* The periodic syncs, and the metrics-textfile rewritten at least every
 * METRICS_REFRESH_SEC between passes: metrics that are not rewritten
 * while storaged runs are what storaged-alerts.yml calls stale.  The area
 * watch gets the configuration as the pass read it (and starts, in the
 * process that stays, the first time). */
static uint64_t resident_sync(void *userdata, const struct logger *lg, uint64_t since_usec, bool on_timer)
{
	struct resident_memory *mem = userdata;
	uint64_t next = 0;

	area_watch_update(&mem->watch, &mem->o, lg);
	if (sync_due_areas(&mem->o, lg, since_usec, &next) < 0)
		next = 0; /* the next pass reports what cannot be read */
	if (on_timer)
		status_prom_after_pass(&mem->o, lg, !liveness_at_work(mem->o.state_dir));
	return next && next < METRICS_REFRESH_SEC ? next : METRICS_REFRESH_SEC;
}

/* The resident process changes to / and reads -c and -f again at each
 * pass (SIGHUP): it gets them as absolute paths (main() made --state-dir
 * absolute).  Returns: as resident_stay(); -ENOMEM. */
static int stay_resident(const struct options *o, bool in_background, const struct logger *lg)
{
	struct resident_memory mem = { .o = *o };
	_cleanup_free_ char *config = path_absolute(o->config_path);
	_cleanup_free_ char *fstab = o->fstab_path ? path_absolute(o->fstab_path) : NULL;
	int r;

	if (!config || (o->fstab_path && !fstab)) {
		log_error(lg, "cannot make -c/-f absolute for the resident storaged: %s", strerror(errno));
		return -ENOMEM;
	}
	mem.o.config_path = config;
	mem.o.fstab_path = fstab;
	r = area_watch_init(&mem.watch);
	if (r < 0) {
		log_error(lg, "cannot watch the areas (grow = yes, full areas): %s", strerror(-r));
		return r;
	}
	r = resident_stay(o->state_dir, in_background, lg, resident_pass, resident_sync, mem.watch.event_fd, &mem);
	area_watch_done(&mem.watch);
	return r;
}

int cmd_start(const struct options *o, const struct logger *lg)
{
	bool hotplug = false, stays, in_background;
	unsigned failed = 0, degraded = 0;
	int r, status;

	/* READY=1 may go out inside the first pass (tell_boot_done()), and a
	 * reload's SIGHUP right after it: blocked from here, it waits for the
	 * resident loop instead of ending the process.  A start that does
	 * not stay leaves with it pending; the helpers it runs start with an
	 * empty mask (spawn_helper). */
	r = o->dry_run ? 0 : resident_block_signals();
	if (r < 0)
		log_debug(lg, "cannot block SIGHUP, SIGTERM, SIGINT: %s", strerror(-r));
	r = start_pass(o, lg, false, NULL, &hotplug, &failed, &degraded);
	if (r == -EINVAL)
		return EXIT_CONFIG;
	if (r == -EPERM)
		return EXIT_STATE;
	status = r < 0 ? EXIT_STEP_FAILED : exit_status_of(failed, degraded);
	if (o->dry_run || r == -EINTR)
		return status;
	stays = o->foreground || o->daemonize || hotplug;
	if (status == 0)
		notify_send("READY=1\nSTATUS=all done");
	else
		notify_send("READY=1\nSTATUS=%s: see `%s status`", ready_words(status), log_self(lg));
	if (!stays)
		return status;
	/* Under a service manager (NOTIFY_SOCKET) hotplug stays in the
	 * foreground; under SysV init `start` must return. */
	in_background = o->daemonize || (!o->foreground && !getenv("NOTIFY_SOCKET"));
	r = stay_resident(o, in_background, lg);
	if (r < 0)
		return EXIT_STEP_FAILED;
	return r == 0 ? status : 0;
}
