/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * storaged check: load the world and plan as start would, change nothing,
 * and list every problem: the diagnostics of the config and fstab, then
 * each step the plan shows will fail.  storaged cat-config: the
 * configuration files in effect, as they are read.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "commands.h"
#include "world/load.h"
#include "world/world.h"

struct check_log {
	const struct logger *lg;
	const struct plan *p;
	const char *fstab_file; /* the fstab read, as diagnostics name it */
};

/* The fstab entry of the first mount that waits for step @i, or NULL. */
static const struct fstab_entry *first_waiting_entry(const struct plan *p, size_t i)
{
	for (size_t k = 0; k < p->n_steps; k++)
		for (size_t d = 0; p->steps[k].kind == PLAN_MOUNT && d < p->steps[k].n_deps; d++)
			if (p->steps[k].deps[d].step == i)
				return p->steps[k].entry;
	return NULL;
}

/* "FILE:LINE: " of what step @i comes from, the fstab entry or the [area]
 * section the user edits: for a wait for a device, the first entry that
 * names it; "" when none is known */
static const char *step_origin(const struct check_log *cl, size_t i, char *buf, size_t len)
{
	const struct plan_step *s = &cl->p->steps[i];
	const struct fstab_entry *e = s->kind == PLAN_MOUNT		? s->entry
				      : s->kind == PLAN_WAIT_DEVICE ? first_waiting_entry(cl->p, i)
								    : NULL;

	if (s->kind == PLAN_AREA && s->area && s->area->file)
		snprintf(buf, len, "%s:%u: ", s->area->file, s->area->line);
	else if (e && cl->fstab_file)
		snprintf(buf, len, "%s:%u: ", cl->fstab_file, e->line);
	else
		buf[0] = '\0';
	return buf;
}

/* Each step the plan shows will fail, logged at the level that says how
 * start counts it: an error when it is a failure, a warning when only
 * nofail entries need it, a notice for a wait for devices (its failure is
 * that of the steps waiting on it, each logged on its own). */
static void log_predicted_failure(void *userdata, size_t i, enum world_failure how)
{
	const struct check_log *cl = userdata;
	const struct plan_step *s = &cl->p->steps[i];
	const char *be = plan_step_predicted_skip(s) ? "be " : "fail: ";
	char what[512], at[PATH_MAX + 16];

	plan_step_describe(s, what, sizeof(what));
	step_origin(cl, i, at, sizeof(at));
	if (how == WORLD_FAILURE_COUNTED)
		log_error(cl->lg, "%sstep %zu, %s: will %s%s", at, i + 1, what, be, plan_step_will_fail(s));
	else if (how == WORLD_FAILURE_TOLERATED)
		log_warning(cl->lg, "%sstep %zu, %s: will %s%s (nofail: not counted as a failure)", at,
			    i + 1, what, be, plan_step_will_fail(s));
	else
		log_notice(cl->lg, "%sstep %zu, %s: will fail: %s (counted at the steps that wait for it)", at,
			   i + 1, what, plan_step_will_fail(s));
}

/* Does [btrfs ...] section @b name a filesystem of @l? */
static bool section_matches(const struct btrfs_policy *b, const struct btrfs_fs_list *l)
{
	for (size_t i = 0; i < l->n; i++) {
		const struct btrfs_filesystem *fs = &l->v[i];

		if (b->label ? fs->label && streq(fs->label, b->label) : strcasecmp(fs->fsid, b->name) == 0)
			return true;
	}
	return false;
}

/* A [btrfs] section that names no filesystem this machine shows now is a
 * warning, not an error: its disks may be unplugged, or the section kept
 * for a disk that comes back.  Devices are listed for it when the plan
 * did not need them.  Returns: 0; -ENOMEM. */
static int warn_unmatched_sections(const struct sources *src, const struct logger *lg, struct world *w)
{
	struct diag_list dl = { 0 };
	int r = 0;

	if (w->cfg.n_btrfs == 0)
		return 0;
	if (!plan_needs_devices(&w->fstab) && (r = world_load_devices(src, INVENTORY_FULL, lg, w)) < 0) {
		log_warning(lg, "cannot list block devices to match the [btrfs] sections: %s", strerror(-r));
		return r == -ENOMEM ? r : 0;
	}
	for (size_t i = 0; i < w->cfg.n_btrfs; i++) {
		const struct btrfs_policy *b = &w->cfg.btrfs[i];

		if (!section_matches(b, &w->btrfs))
			r = diag_warning(&dl, b->file, b->line,
					 "[btrfs %s] matches no btrfs filesystem on this machine now (`%s scan` lists them); it applies once one with that %s appears",
					 b->name, log_self(lg), b->label ? "label" : "UUID");
		if (r < 0)
			break;
	}
	log_diags(lg, &dl);
	diag_list_done(&dl);
	return r < 0 ? r : 0;
}

int cmd_check(const struct options *o, const struct logger *lg)
{
	struct sources src;
	struct world w = { 0 };
	struct world_failures c = { 0 };
	int r, status;

	sources_init(&src, o);
	src.area_records = true;
	r = world_load(&src, lg, &w);
	if (r == 0)
		r = warn_unmatched_sections(&src, lg, &w);
	if (r == 0)
		r = world_predicted_failures(&w.plan, &c, log_predicted_failure,
					     &(struct check_log){ lg, &w.plan, w.fstab.file });
	if (r == 0)
		world_log_failures(lg, &c);
	if (r == -EINVAL)
		status = EXIT_CONFIG;
	else if (r < 0 || c.failed > 0)
		status = EXIT_STEP_FAILED;
	else
		status = 0;
	/* nofail steps that will fail count for nothing, as in start */
	if (status == 0)
		printf("%s: deferred fstab entries: %zu, areas: %zu, steps planned: %zu; %s\n",
		       o->config_path, w.fstab.n_entries, w.cfg.n_areas, w.plan.n_steps,
		       c.tolerated ? "only nofail steps will fail" : "no step will fail");
	world_done(&w);
	return status;
}

/* The files cat-config printed, parsed as check parses them: what check
 * rejects in them is logged after the text.  Returns: true when there
 * are errors (or no memory to tell). */
static bool config_errors(const struct options *o, const struct logger *lg)
{
	struct diag_list dl = { 0 };
	struct config c;
	int r = config_init(&c);

	if (r == 0)
		r = config_load(&c, o->config_path, true, &dl);
	log_diags(lg, &dl);
	r = r == -ENOENT ? 0 : r < 0 ? r : diag_count(&dl, DIAG_ERROR) ? -EINVAL : 0;
	diag_list_done(&dl);
	config_done(&c);
	return r < 0;
}

/* One file of cat-config: its name as a comment line, then its contents,
 * as systemd-analyze cat-config prints them; a masked drop-in by its name
 * alone, saying so. */
static int print_config_file(void *userdata, const char *path, const char *buf, size_t len)
{
	bool *first = userdata;

	printf("%s# %s%s\n", *first ? "" : "\n", path, buf ? "" : ": masked (a link to /dev/null)");
	*first = false;
	if (buf && len > 0) {
		fwrite(buf, 1, len, stdout);
		if (buf[len - 1] != '\n')
			putchar('\n');
	}
	return 0;
}

int cmd_cat_config(const struct options *o, const struct logger *lg)
{
	struct diag_list dl = { 0 };
	bool first = true;
	int r;

	r = config_visit(o->config_path, true, print_config_file, &first, &dl);
	log_diags(lg, &dl);
	diag_list_done(&dl);
	if (r == -ENOENT && o->config_given)
		log_error(lg, "%s: cannot read configuration: %s", o->config_path, strerror(ENOENT));
	else if (r == -ENOENT)
		return 0; /* nothing but the built-in defaults */
	if (fflush(stdout) != 0 && r == 0)
		r = -errno;
	if (r < 0)
		return EXIT_CONFIG;
	return config_errors(o, lg) ? EXIT_STEP_FAILED : 0;
}
