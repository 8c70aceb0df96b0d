/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The subcommands.  Loading (config, fstab, devices, mounts) and planning
 * have no side effects; only cmd_start() without --dry-run, cmd_stop() and
 * cmd_sync() change the system, through the executor's operations.
 */
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysinfo.h>
#include <unistd.h>

#include <libmount.h>

#include "area.h"
#include "btrfs.h"
#include "commands.h"
#include "config.h"
#include "daemon.h"
#include "exec.h"
#include "fstab.h"
#include "inventory.h"
#include "plan.h"
#include "state.h"
#include "safepath.h"
#include "sysops.h"
#include "units.h"

/* Everything the planner reads, loaded once per command. */
struct world {
	struct config cfg;
	struct fstab fstab;
	struct inventory inv;
	struct btrfs_fs_list btrfs;
	struct libmnt_table *mountinfo;
	struct area_survey *surveys;
	struct plan plan;
};

static void world_done(struct world *w)
{
	plan_done(&w->plan);
	free(w->surveys);
	mnt_unref_table(w->mountinfo);
	btrfs_fs_list_done(&w->btrfs);
	inventory_done(&w->inv);
	fstab_done(&w->fstab);
	config_done(&w->cfg);
}

static uint64_t ram_bytes(void)
{
	struct sysinfo si;

	if (sysinfo(&si) < 0)
		return 0;
	return (uint64_t)si.totalram * si.mem_unit;
}

/* Config and fstab.  Returns: 0, or EXIT_CONFIG after printing why. */
static int load_config(const struct options *o, const struct logger *lg, struct world *w,
		       struct diag_list *dl)
{
	const char *fstab;
	int r;

	r = config_init(&w->cfg);
	if (r < 0)
		return EXIT_CONFIG;
	r = config_load(&w->cfg, o->config_path, true, dl);
	if (r == -ENOENT && o->config_given)
		diag_error(dl, o->config_path, 0, "cannot read configuration: %s", strerror(ENOENT));
	else if (r == -ENOENT)
		r = 0; /* no config file: the built-in defaults apply */
	fstab = o->fstab_path ? o->fstab_path : w->cfg.fstab;
	if (r == 0 || r == -EINVAL)
		fstab_load(&w->fstab, fstab, w->cfg.select, true, dl);
	return diag_count(dl, DIAG_ERROR) ? EXIT_CONFIG : 0;
}

static int survey_areas(const struct logger *lg, struct world *w)
{
	w->surveys = calloc(w->cfg.n_areas ? w->cfg.n_areas : 1, sizeof(*w->surveys));
	if (!w->surveys)
		return -ENOMEM;
	for (size_t i = 0; i < w->cfg.n_areas; i++) {
		int r = area_survey_path(w->cfg.areas[i].path, &w->surveys[i]);

		if (r < 0) {
			w->surveys[i].valid = false;
			w->surveys[i].error = r;
			log_debug(lg, "area %s: cannot survey '%s': %s", w->cfg.areas[i].name,
				  w->cfg.areas[i].path, strerror(-r));
		}
	}
	return 0;
}

/* The mount table shows mount points with links resolved; so must the
 * planner's comparisons (a root-owned link on the way is allowed). */
/* @path with every link resolved, as realpath(3), but by the kernel in one
 * lookup (realpath reads each component as a link): false when @path does
 * not exist (yet). */
static bool resolve_path(const char *path, char buf[static PATH_MAX])
{
	char proc[64];
	int fd = open(path, O_PATH | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return false;
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	n = readlink(proc, buf, PATH_MAX - 1);
	close(fd);
	if (n <= 0 || n >= PATH_MAX - 1 || buf[0] != '/') /* no /proc */
		return realpath(path, buf) != NULL;
	buf[n] = '\0';
	return true;
}

/* The link check the mount itself makes (safepath_check()), made for the
 * plan too, so that --dry-run and check show it; only paths that lead
 * through a link (@real is not @path) can fail it.  Returns: why refused
 * (caller frees), or NULL. */
static char *refuse_links(const char *what, const char *path, const char *real)
{
	char why[512] = "", *msg = NULL;
	int r;

	if (strcmp(real, path) == 0)
		return NULL;
	r = safepath_check(path, why, sizeof(why));
	if (r < 0 && asprintf(&msg, "refusing to mount: %s '%s': %s", what, path,
			      r == -EPERM ? why : strerror(-r)) < 0)
		msg = NULL;
	return msg;
}

/* @local_only: entries that need the network are left for a later pass;
 * their paths are not looked up now (a dead server above them would
 * block the early pass). */
static void resolve_targets(struct fstab *f, bool local_only)
{
	char buf[PATH_MAX];

	for (size_t i = 0; i < f->n_entries; i++) {
		struct fstab_entry *e = &f->entries[i];

		if (local_only && e->remote)
			continue;
		if (resolve_path(e->target, buf) && strcmp(buf, e->target) != 0) {
			e->target_real = strdup(buf);
			e->refused = refuse_links("mount point", e->target, buf);
		}
		if (!e->refused && e->bind && e->source[0] == '/' && resolve_path(e->source, buf))
			e->refused = refuse_links("bind source", e->source, buf);
	}
}

/* Devices that cannot be opened (a CD drive without media, a device the
 * sandbox denies) are skipped: logged with -v, counted by `storaged scan`. */
static int scan_devices(const struct logger *lg, struct world *w)
{
	struct diag_list dl = { 0 };
	int r;

	r = inventory_scan(&w->inv, &dl);
	log_diags_at(lg, &dl, LOG_DEBUG);
	diag_list_done(&dl);
	if (r < 0)
		return r;
	r = btrfs_group(&w->inv, &w->btrfs, &dl);
	log_diags(lg, &dl);
	diag_list_done(&dl);
	return r;
}

/* Devices, mounts, areas, then the plan.  Returns: 0, EXIT_CONFIG or
 * EXIT_STEP_FAILED after printing why. */
static int load_world(const struct options *o, const struct logger *lg, struct world *w)
{
	struct diag_list dl = { 0 };
	int r;

	r = load_config(o, lg, w, &dl);
	if (r)
		goto out;
	resolve_targets(&w->fstab, o->local_only);
	r = plan_needs_devices(&w->fstab) ? scan_devices(lg, w) : 0;
	if (r < 0) {
		log_error(lg, "cannot list block devices: %s", strerror(-r));
		r = EXIT_STEP_FAILED;
		goto out;
	}
	w->mountinfo = mnt_new_table_from_file("/proc/self/mountinfo");
	if (!w->mountinfo || survey_areas(lg, w) < 0) {
		log_error(lg, "cannot read /proc/self/mountinfo: %s", strerror(errno));
		r = EXIT_STEP_FAILED;
		goto out;
	}
	struct plan_input in = {
		.config = &w->cfg,
		.fstab = &w->fstab,
		.inventory = &w->inv,
		.btrfs = &w->btrfs,
		.mountinfo = w->mountinfo,
		.surveys = w->surveys,
		.ram_bytes = ram_bytes(),
		.local_only = o->local_only,
	};
	r = plan_build(&in, &w->plan, &dl) < 0 || diag_count(&dl, DIAG_ERROR) ? EXIT_CONFIG : 0;
out:
	log_diags(lg, &dl);
	diag_list_done(&dl);
	return r;
}

/* ------------------------------------------------------------------ */

/* One storaged at a time changes the system.  Returns: fd or negative errno. */
static int lock_state_dir(const struct options *o, const struct logger *lg)
{
	_cleanup_free_ char *path = NULL;
	int fd;

	struct stat st;

	if (mkdir(o->state_dir, 0755) < 0 && errno != EEXIST) {
		log_error(lg, "cannot create state directory '%s': %s", o->state_dir, strerror(errno));
		return -errno;
	}
	/* what stop later trusts must be root's from the start */
	if (lstat(o->state_dir, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != 0 ||
	    (st.st_mode & (S_IWGRP | S_IWOTH))) {
		log_error(lg, "state directory '%s' is not a directory owned by root that group and others cannot write; use another --state-dir, or `chown root:root %s; chmod 0755 %s`",
			  o->state_dir, o->state_dir, o->state_dir);
		return -EPERM;
	}
	if (asprintf(&path, "%s/lock", o->state_dir) < 0)
		return -ENOMEM;
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0 || flock(fd, LOCK_EX | LOCK_NB) < 0) {
		int e = errno;

		log_error(lg, "'%s': %s", path,
			  e == EWOULDBLOCK ? "another storaged is running; wait for it to finish" : strerror(e));
		if (fd >= 0)
			close(fd);
		return -e;
	}
	return fd;
}

int commands_load_state(const struct options *o, const struct logger *lg, struct state *st)
{
	unsigned line = 0;
	int r = state_load(o->state_dir, st, &line);

	if (r == -EPERM)
		log_error(lg, "'%s/state': the directory or the file is not owned by root or is writable by group or others; storaged does not trust what it says was mounted: check who changed it, then `chown root:root %s %s/state; chmod go-w %s %s/state`",
			  o->state_dir, o->state_dir, o->state_dir, o->state_dir, o->state_dir);
	else if (r == -EBADMSG)
		log_error(lg, "%s/state:%u: corrupt; if no storaged runs, remove the file (storaged then forgets what it mounted: unmount those by hand)",
			  o->state_dir, line);
	else if (r < 0)
		log_error(lg, "'%s/state': %s", o->state_dir, strerror(-r));
	else if (st->torn_bytes)
		log_warning(lg, "'%s/state': its last %zu bytes are a record storaged was writing when it was stopped short; ignored (the step it was about is not recorded as done)",
			    o->state_dir, st->torn_bytes);
	return r;
}

/* A step the plan already knows will fail: something else on its mount
 * point, an untrusted link, a seed that does not fit its area.  Returns:
 * why, or NULL. */
static const char *step_will_fail(const struct plan_step *s)
{
	if (s->done || s->later)
		return NULL;
	if (s->conflict)
		return s->note ? s->note : "in conflict";
	if (s->kind == PLAN_AREA && !s->sizing_deferred && !s->sizing.fits)
		return s->sizing.why;
	return NULL;
}

static unsigned predicted_failures(const struct plan *p)
{
	unsigned n = 0;

	for (size_t i = 0; i < p->n_steps; i++)
		n += step_will_fail(&p->steps[i]) != NULL;
	return n;
}

/* --dry-run: the plan, and exit status 1 when it shows a step that will
 * fail, so that a script checking a change before a reboot sees it. */
static int render_plan(const struct options *o, const struct logger *lg, const struct plan *p)
{
	int r = o->json ? plan_render_json(p, stdout) : plan_render_text(p, stdout);
	unsigned fails = predicted_failures(p);

	fflush(stdout);
	if (r < 0)
		return EXIT_STEP_FAILED;
	if (fails)
		log_error(lg, "the plan shows %u step(s) that will fail (\"will fail\" or \"does not fit\" above)", fails);
	return fails ? EXIT_STEP_FAILED : 0;
}

static int run_plan(const struct options *o, const struct logger *lg, struct world *w, bool no_wait)
{
	struct sysops so;
	struct state st = { 0 };
	struct exec_summary sum = { 0 };
	struct exec_ctx cx = {
		.ops = &sysops_exec_ops, .ud = &so, .log = lg, .state = &st, .state_dir = o->state_dir,
		.jobs = w->cfg.jobs, .no_wait = no_wait, .initial_inventory = &w->inv,
	};
	int lock, r;

	lock = lock_state_dir(o, lg);
	if (lock < 0)
		return lock == -EPERM ? EXIT_CONFIG : EXIT_STEP_FAILED;
	if (commands_load_state(o, lg, &st) < 0) {
		close(lock);
		return EXIT_STEP_FAILED;
	}
	/* a resident pass leaves SIGINT/SIGTERM to the resident loop */
	sysops_open(&so, lg, o->state_dir, !no_wait);
	r = exec_run(&cx, &w->plan, &sum);
	sysops_close(&so);
	state_done(&st);
	close(lock);
	if (r == -EINTR || so.interrupted)
		return -EINTR;
	if (r < 0)
		return EXIT_STEP_FAILED;
	if (!no_wait || sum.n_done || sum.n_failed)
		log_info(lg, "%u step(s) done, %u failed%s%s%s%s", sum.n_done, sum.n_failed,
			 sum.n_skipped ? " (some only skipped: a step they wait for failed)" : "",
			 sum.n_waiting ? ", some still waiting for devices" : "",
			 sum.n_later ? ", some left for the start after the network is up" : "",
			 sum.n_degraded ? ", DEGRADED mounts present (see `storaged status`)" : "");
	return sum.n_failed ? EXIT_STEP_FAILED : 0;
}

/* One plan-and-run pass over a freshly read world. */
static int start_pass(const struct options *o, const struct logger *lg, bool no_wait, bool *ret_hotplug)
{
	struct world w = { 0 };
	int r;

	r = load_world(o, lg, &w);
	if (ret_hotplug)
		*ret_hotplug = w.cfg.hotplug;
	if (r == 0)
		r = o->dry_run ? render_plan(o, lg, &w.plan) : run_plan(o, lg, &w, no_wait);
	world_done(&w);
	return r;
}

struct resident {
	const struct options *o;
	const struct logger *lg;
};

static int resident_pass(void *userdata, bool no_wait)
{
	struct resident *rs = userdata;
	int r = start_pass(rs->o, rs->lg, no_wait, NULL);

	/* what the pass freed goes back to the kernel: the resident process
	 * holds only its loop between events */
	malloc_trim(0);
	return r < 0 ? EXIT_STEP_FAILED : r;
}

/*
 * One resident per state directory: it holds an exclusive lock on
 * DIR/resident for its lifetime, and its pid is in DIR/storaged.pid.
 * Returns: the locked fd; -EWOULDBLOCK when another resident holds it.
 */
static int lock_resident(const struct options *o)
{
	_cleanup_free_ char *path = NULL;
	int fd;

	if (asprintf(&path, "%s/resident", o->state_dir) < 0)
		return -ENOMEM;
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return -errno;
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		int r = -errno;

		close(fd);
		return r;
	}
	return fd;
}

static int write_pidfile(const struct options *o, pid_t pid)
{
	_cleanup_free_ char *path = NULL, *tmp = NULL;
	FILE *f;

	if (asprintf(&path, "%s/storaged.pid", o->state_dir) < 0 || asprintf(&tmp, "%s.tmp", path) < 0)
		return -ENOMEM;
	f = fopen(tmp, "we");
	if (!f)
		return -errno;
	fprintf(f, "%d\n", (int)pid);
	if (fclose(f) != 0 || rename(tmp, path) < 0) {
		unlink(tmp);
		return -errno;
	}
	return 0;
}

static void remove_pidfile(const struct options *o)
{
	_cleanup_free_ char *pidfile = NULL;

	if (asprintf(&pidfile, "%s/storaged.pid", o->state_dir) >= 0)
		unlink(pidfile);
}

/* --daemon (or hotplug = yes outside a service manager): the parent writes
 * the child's pid file, so that it exists when `start` returns, and returns
 * the first pass's status; the child stays and logs to syslog.
 * Returns: in the parent, 1; in the child, 0; negative errno. */
static int detach(const struct options *o, struct logger *child_lg)
{
	pid_t pid = fork();
	int fd;

	if (pid < 0)
		return -errno;
	if (pid > 0)
		return write_pidfile(o, pid) < 0 ? -EIO : 1;
	setsid();
	if (chdir("/") < 0)
		_exit(1);
	fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (fd >= 0) {
		dup2(fd, STDIN_FILENO);
		dup2(fd, STDOUT_FILENO);
		dup2(fd, STDERR_FILENO);
		close(fd);
	}
	log_init(child_lg, LOG_INFO, LOG_TARGET_SYSLOG);
	return 0;
}

int cmd_start(const struct options *o, const struct logger *lg)
{
	struct resident rs = { .o = o, .lg = lg };
	bool hotplug = false, in_background;
	struct logger child_lg;
	int r, d, lock;

	r = start_pass(o, lg, false, &hotplug);
	if (r == -EINTR)
		return EXIT_STEP_FAILED;
	if (o->dry_run || r == EXIT_CONFIG)
		return r;
	daemon_notify("READY=1\nSTATUS=%s", r == 0 ? "all done" : "some steps failed: see `storaged status`");
	if (!o->foreground && !o->daemonize && !hotplug)
		return r;
	lock = lock_resident(o);
	if (lock == -EWOULDBLOCK) {
		log_info(lg, "a resident storaged already handles devices for '%s'; this one does not stay",
			 o->state_dir);
		return r;
	}
	if (lock < 0) {
		log_error(lg, "cannot stay resident: '%s/resident': %s", o->state_dir, strerror(-lock));
		return EXIT_STEP_FAILED;
	}
	/* Under a service manager (NOTIFY_SOCKET) hotplug stays in the
	 * foreground; under SysV init `start` must return. */
	in_background = o->daemonize || (!o->foreground && !getenv("NOTIFY_SOCKET"));
	if (in_background) {
		d = detach(o, &child_lg);
		if (d != 0) {
			if (d < 0)
				log_error(lg, "cannot stay resident in the background: %s", strerror(-d));
			close(lock); /* the child keeps the lock */
			return d < 0 ? EXIT_STEP_FAILED : r;
		}
		rs.lg = &child_lg;
	} else {
		write_pidfile(o, getpid());
	}
	/* 250 ms lets a disk and its partitions arrive before one pass. */
	r = daemon_loop(rs.lg, resident_pass, &rs, 250 * USEC_PER_MSEC);
	remove_pidfile(o);
	close(lock);
	if (in_background)
		log_close(&child_lg);
	return r;
}

int cmd_check(const struct options *o, const struct logger *lg)
{
	struct world w = { 0 };
	int r;

	r = load_world(o, lg, &w);
	if (r == 0 && predicted_failures(&w.plan) > 0) {
		for (size_t i = 0; i < w.plan.n_steps; i++) {
			const struct plan_step *s = &w.plan.steps[i];
			const char *why = step_will_fail(s);
			char what[512];

			if (why)
				log_error(lg, "step %zu, %s: will fail: %s", i + 1,
					  plan_step_describe(s, what, sizeof(what)), why);
		}
		r = EXIT_STEP_FAILED;
	} else if (r == 0) {
		printf("%s: deferred fstab entries: %zu, areas: %zu, steps planned: %zu; no problems found\n",
		       o->config_path, w.fstab.n_entries, w.cfg.n_areas, w.plan.n_steps);
	}
	world_done(&w);
	return r;
}

/* ------------------------------------------------------------------ */
/* stop: undo what storaged recorded, newest first. */

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

/* Is @id still mounted, and is it the topmost mount on its mount point? */
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

/* An rbind brought the mounts below its source along: they are undone
 * first, deepest first.  Returns: 0 or negative errno (logged). */
static int umount_submounts(const struct logger *lg, struct libmnt_table *tb, struct libmnt_fs *parent)
{
	struct libmnt_iter *itr = mnt_new_iter(MNT_ITER_BACKWARD);
	struct libmnt_fs *child;
	int r = itr ? 0 : -ENOMEM;

	while (r == 0 && mnt_table_next_child_fs(tb, itr, parent, &child) == 0) {
		r = umount_submounts(lg, tb, child);
		if (r == 0 && umount2(mnt_fs_get_target(child), UMOUNT_NOFOLLOW) < 0) {
			r = -errno;
			log_error(lg, "%s: cannot unmount: %s; stop the processes using it (fuser -vm %s) and run `storaged stop` again",
				  mnt_fs_get_target(child), strerror(errno), mnt_fs_get_target(child));
		}
	}
	mnt_free_iter(itr);
	return r;
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

static int undo_mount(const struct logger *lg, const struct state_record *rec)
{
	struct libmnt_table *tb = mnt_new_table_from_file("/proc/self/mountinfo");
	const char *mp = rec->mountpoint ? rec->mountpoint : rec->id;
	struct libmnt_context *cxt;
	struct libmnt_fs *top = NULL;
	uint64_t unique_id;
	char buf[512] = "";
	int rc, ex, own, id;

	own = tb ? find_own_mount(tb, rec, &top) : -ENOMEM;
	if (own <= 0) {
		mnt_unref_table(tb);
		if (own == 0)
			log_info(lg, "%s: storaged's mount is gone; nothing to undo", rec->id);
		return own;
	}
	if (top && !mounting_record_matches(rec, top)) {
		log_warning(lg, "%s: storaged was stopped while mounting it, and what is mounted there now (%s, %s) is not what it was mounting; left alone",
			    rec->id, mnt_fs_get_source(top) ?: "?", mnt_fs_get_fstype(top) ?: "?");
		mnt_unref_table(tb);
		return 0;
	}
	mount_ids_at(mp, &id, &unique_id);
	if (rec->mount_unique_id && unique_id != rec->mount_unique_id && id == (int)rec->mount_id) {
		mnt_unref_table(tb);
		log_info(lg, "%s: storaged's mount is gone (another one took its place and its ID); nothing to undo", rec->id);
		return 0;
	}
	if (rec->mount_id && (!top || mnt_fs_get_id(top) != (int)rec->mount_id)) {
		log_error(lg, "%s: another filesystem (%s, %s) is mounted on top of storaged's; unmount it first, then run `storaged stop` again",
			  rec->id, top ? mnt_fs_get_source(top) : "?", top ? mnt_fs_get_fstype(top) : "?");
		mnt_unref_table(tb);
		return -EBUSY;
	}
	/* an rbind of a shared source is in its peer group: unmounting the
	 * copies would unmount the source's own submounts too */
	if (rec->recursive && mount(NULL, mp, NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		log_warning(lg, "%s: cannot make the rbind private before undoing it: %s", rec->id, strerror(errno));
	rc = rec->recursive ? umount_submounts(lg, tb, top) : 0;
	mnt_unref_table(tb);
	if (rc < 0)
		return rc;
	cxt = mnt_new_context();
	if (!cxt)
		return -ENOMEM;
	mnt_context_set_optsmode(cxt, MNT_OMODE_IGNORE | MNT_OMODE_NOTAB);
	mnt_context_set_target(cxt, mp);
	rc = mnt_context_umount(cxt);
	ex = mnt_context_get_excode(cxt, rc, buf, sizeof(buf));
	mnt_free_context(cxt);
	if (ex != 0) {
		log_error(lg, "%s: cannot unmount: %s; stop the processes using it (fuser -vm %s) and run `storaged stop` again",
			  rec->id, buf[0] ? buf : "unknown error", mp);
		return -EBUSY;
	}
	log_info(lg, "unmounted %s", rec->id);
	return 0;
}

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
 * killed in between) are found by their own state and removed too. */
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
 * undoes.  Waits until it has left (its lock is free). */
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
	lock = lock_state_dir(o, lg);
	if (lock < 0)
		return lock == -EPERM ? EXIT_CONFIG : EXIT_STEP_FAILED;
	if (commands_load_state(o, lg, &st) < 0) {
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

/* Is @name an [area] of the configuration?  Logs why not. */
static bool area_configured(const struct options *o, const struct logger *lg, const char *name)
{
	struct world w = { 0 };
	struct diag_list dl = { 0 };
	bool found = false;

	if (load_config(o, lg, &w, &dl) == 0)
		for (size_t i = 0; i < w.cfg.n_areas && !found; i++)
			found = strcmp(w.cfg.areas[i].name, name) == 0;
	else
		log_diags(lg, &dl);
	if (!found && !diag_count(&dl, DIAG_ERROR))
		log_error(lg, "no [area %s] in %s; `storaged status` lists the active areas", name, o->config_path);
	diag_list_done(&dl);
	world_done(&w);
	return found;
}

int cmd_sync(const struct options *o, const struct logger *lg)
{
	struct diag_list dl = { 0 };
	int r;

	if (o->dry_run) {
		log_error(lg, "sync: --dry-run is not supported");
		return EXIT_CONFIG;
	}
	if (!area_configured(o, lg, o->arg))
		return EXIT_CONFIG;
	r = area_sync(o->state_dir, o->arg, &dl);
	log_diags(lg, &dl);
	diag_list_done(&dl);
	if (r == 0)
		log_info(lg, "area %s: synced back", o->arg);
	return r < 0 ? EXIT_STEP_FAILED : 0;
}

/* ------------------------------------------------------------------ */
/*
 * systemd generator.  At shutdown systemd stops the mount units of a RAM
 * area (the bind over its directory, the area itself, the private bind of
 * the directory) in parallel with storaged.service, whose stop syncs a
 * persist area back: the sync could lose the area under it.  A drop-in
 * orders each of those mounts Before= storaged's units, so that at
 * shutdown (reverse order) storaged stops first.  systemd.generator(7).
 */
static int write_dropin(const struct logger *lg, const char *dir, const char *path, const char *area)
{
	_cleanup_free_ char *unit = NULL, *ddir = NULL, *file = NULL;
	FILE *f;
	int r;

	r = unit_name_from_path(path, ".mount", &unit);
	if (r < 0)
		return r;
	if (asprintf(&ddir, "%s/%s.d", dir, unit) < 0 || asprintf(&file, "%s/50-storaged.conf", ddir) < 0)
		return -ENOMEM;
	if (mkdir(ddir, 0755) < 0 && errno != EEXIST) {
		log_error(lg, "'%s': %s", ddir, strerror(errno));
		return -errno;
	}
	f = fopen(file, "we");
	if (!f) {
		log_error(lg, "'%s': %s", file, strerror(errno));
		return -errno;
	}
	fprintf(f, "# Written by storaged's generator for the RAM area '%s': at shutdown\n"
		   "# storaged stops (and syncs the area back) before this mount goes.\n"
		   "[Unit]\nBefore=storaged.service storaged-remote.service\n", area);
	r = fclose(f) == 0 ? 0 : -errno;
	if (r < 0)
		log_error(lg, "'%s': %s", file, strerror(-r));
	return r;
}

int cmd_systemd_generator(const struct options *o, const struct logger *lg)
{
	struct config cfg = { 0 };
	struct diag_list dl = { 0 };
	int r, failed = 0;

	r = config_init(&cfg);
	if (r == 0)
		r = config_load(&cfg, o->config_path, true, &dl);
	log_diags(lg, &dl);
	diag_list_done(&dl);
	if (r < 0 && r != -ENOENT) {
		config_done(&cfg);
		return EXIT_CONFIG;
	}
	for (size_t i = 0; i < cfg.n_areas; i++) {
		const struct area_config *a = &cfg.areas[i];
		_cleanup_free_ char *area = NULL, *lower = NULL;

		if (area_private_mounts(o->state_dir, a->name, &area, &lower) < 0) {
			failed++;
			continue;
		}
		failed += write_dropin(lg, o->arg, a->path, a->name) < 0;
		failed += write_dropin(lg, o->arg, area, a->name) < 0;
		failed += write_dropin(lg, o->arg, lower, a->name) < 0;
	}
	config_done(&cfg);
	return failed ? EXIT_STEP_FAILED : 0;
}
