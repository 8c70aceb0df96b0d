/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * storaged start: load the world, plan, and run the plan through the
 * executor (--dry-run prints the plan instead); then, with --foreground,
 * --daemon or hotplug = yes, stay resident and run the same pass again
 * for devices that appear later (resident.c).
 */
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "daemon.h"
#include "exec.h"
#include "resident.h"
#include "state.h"
#include "statedir.h"
#include "status_prom.h"
#include "sysops.h"
#include "world.h"

/* --dry-run: the plan on stdout.  @ret_fails: the steps the plan shows will
 * fail (logged), so that a script checking a change before a reboot sees
 * them in the exit status.  Returns: 0 or negative errno from writing. */
static int render_plan(const struct options *o, const struct logger *lg, const struct plan *p,
		       unsigned *ret_fails)
{
	int r = o->json ? plan_render_json(p, stdout) : plan_render_text(p, stdout);
	unsigned fails = world_predicted_failures(p);

	fflush(stdout);
	if (r < 0)
		return r;
	if (fails)
		log_error(lg, "the plan shows %u step(s) that will fail (\"will fail\" or \"does not fit\" above)",
			  fails);
	*ret_fails = fails;
	return 0;
}

/* The plan through the executor and the real operations, under the state
 * directory's lock.  @ret_failed: steps that failed.  Returns: 0; -EINTR
 * (SIGINT/SIGTERM during the run); -EPERM when the state directory is not
 * trustworthy (a usage error); -EIO when the state cannot be used; other
 * negative errno (all logged). */
static int run_plan(const struct options *o, const struct logger *lg, struct world *w, bool no_wait,
		    unsigned *ret_failed)
{
	struct sysops so;
	struct state st = { 0 };
	struct exec_summary sum = { 0 };
	struct exec_ctx cx = {
		.ops = &sysops_ops,
		.ud = &so,
		.log = lg,
		.state = &st,
		.jobs = w->cfg.jobs,
		.no_wait = no_wait,
		.initial_inventory = &w->inv,
	};
	int lock, r;

	lock = statedir_lock(o->state_dir, lg);
	if (lock < 0)
		return lock == -EPERM ? lock : -EIO;
	if (statedir_load_state(o->state_dir, lg, &st) < 0) {
		close(lock);
		return -EIO; /* an untrusted state is a failed step, not a usage error */
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
		return r;
	if (!no_wait || sum.n_done || sum.n_failed)
		log_info(lg, "%u step(s) done, %u failed%s%s%s%s", sum.n_done, sum.n_failed,
			 sum.n_skipped ? " (some only skipped: a step they wait for failed)" : "",
			 sum.n_waiting ? ", some still waiting for devices" : "",
			 sum.n_later ? ", some left for the start after the network is up" : "",
			 sum.n_degraded ? ", DEGRADED mounts present (see `storaged status`)" : "");
	*ret_failed = sum.n_failed;
	return 0;
}

/* One plan-and-run (or plan-and-print) pass over a freshly read world.
 * @ret_failed: steps failed, or shown to fail by --dry-run.  Returns: 0;
 * -EINVAL (config, fstab or plan errors) and -EPERM (untrusted state
 * directory): usage errors; other negative errno (see run_plan()). */
static int start_pass(const struct options *o, const struct logger *lg, bool no_wait,
		      bool *ret_hotplug, unsigned *ret_failed)
{
	struct sources src;
	struct world w = { 0 };
	int r;

	sources_init(&src, o);
	r = world_load(&src, lg, &w);
	if (ret_hotplug)
		*ret_hotplug = w.cfg.hotplug;
	if (r == 0)
		r = o->dry_run ? render_plan(o, lg, &w.plan, ret_failed)
			       : run_plan(o, lg, &w, no_wait, ret_failed);
	world_done(&w);
	if (!o->dry_run && r != -EINVAL && r != -EPERM)
		status_prom_after_pass(o, lg); /* issue 14: metrics-textfile */
	return r;
}

static int resident_pass(void *userdata, const struct logger *lg, bool no_wait)
{
	const struct options *o = userdata;
	unsigned failed = 0;
	int r = start_pass(o, lg, no_wait, NULL, &failed);

	/* what the pass freed goes back to the kernel: the resident process
	 * holds only its loop between events */
	malloc_trim(0);
	return r;
}

int cmd_start(const struct options *o, const struct logger *lg)
{
	bool hotplug = false, in_background;
	unsigned failed = 0;
	int r, status;

	r = start_pass(o, lg, false, &hotplug, &failed);
	if (r == -EINVAL || r == -EPERM)
		return EXIT_CONFIG;
	status = r < 0 || failed ? EXIT_STEP_FAILED : 0;
	if (o->dry_run || r == -EINTR)
		return status;
	daemon_notify("READY=1\nSTATUS=%s",
		      status == 0 ? "all done" : "some steps failed: see `storaged status`");
	if (!o->foreground && !o->daemonize && !hotplug)
		return status;
	/* Under a service manager (NOTIFY_SOCKET) hotplug stays in the
	 * foreground; under SysV init `start` must return. */
	in_background = o->daemonize || (!o->foreground && !getenv("NOTIFY_SOCKET"));
	r = resident_stay(o->state_dir, in_background, lg, resident_pass, (void *)o);
	if (r < 0)
		return EXIT_STEP_FAILED;
	return r == 0 ? status : 0;
}
