/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * storaged check: load the world and plan as start would, change nothing,
 * and list every problem: the diagnostics of the config and fstab, then
 * each step the plan shows will fail.  storaged cat-config: the
 * configuration files in effect, as they are read.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "world/load.h"
#include "world/world.h"

/* What check found, counted as it was logged. */
struct check_counts {
	unsigned fails; /* logged as errors: the exit status is 1 for them */
	unsigned skips; /*   of those, skipped for waiting on one that will fail */
	unsigned tolerated; /* logged as warnings: nofail, or needed only by nofail */
};

/* Each step the plan shows will fail, logged at the level that says
 * whether it counts: an error when start would count it a failure (the
 * boot needs it, see plan_boot_needs()), a warning when only nofail
 * entries need it.  Returns: 0; -ENOMEM. */
static int log_predicted_failures(const struct logger *lg, const struct plan *p, struct check_counts *c)
{
	_cleanup_free_ bool *needed = calloc(p->n_steps ? p->n_steps : 1, sizeof(*needed));

	if (!needed)
		return -ENOMEM;
	plan_boot_needs(p, needed);
	for (size_t i = 0; i < p->n_steps; i++) {
		const struct plan_step *s = &p->steps[i];
		const char *why = plan_step_will_fail(s);
		bool skip = plan_step_predicted_skip(s);
		char what[512];

		if (!why)
			continue;
		plan_step_describe(s, what, sizeof(what));
		if (!needed[i]) {
			log_warning(lg, "step %zu, %s: will %s%s (nofail: not counted as a failure)", i + 1, what,
				    skip ? "be " : "fail: ", why);
			c->tolerated++;
			continue;
		}
		log_error(lg, "step %zu, %s: will %s%s", i + 1, what, skip ? "be " : "fail: ", why);
		c->fails++;
		c->skips += skip;
	}
	return 0;
}

/* The closing line of a check that found something, counting what was
 * logged above at each level. */
static void log_check_counts(const struct logger *lg, const struct check_counts *c)
{
	char skipped[96] = "", tolerated[96] = "";

	if (c->skips)
		snprintf(skipped, sizeof(skipped), " (%u skipped: %s)", c->skips,
			 c->skips == 1 ? "a step it waits for will fail" : "steps they wait for will fail");
	if (c->tolerated)
		snprintf(tolerated, sizeof(tolerated), "%s%u nofail %s will fail", c->fails ? ", " : "",
			 c->tolerated, c->tolerated == 1 ? "step" : "steps");
	if (c->fails)
		log_error(lg, "%u %s will fail%s%s", c->fails, c->fails == 1 ? "step" : "steps", skipped, tolerated);
	else if (c->tolerated)
		log_warning(lg, "%s", tolerated);
}

int cmd_check(const struct options *o, const struct logger *lg)
{
	struct sources src;
	struct world w = { 0 };
	struct check_counts c = { 0 };
	int r, status;

	sources_init(&src, o);
	r = world_load(&src, lg, &w);
	if (r == 0)
		r = log_predicted_failures(lg, &w.plan, &c);
	if (r == 0)
		log_check_counts(lg, &c);
	if (r == -EINVAL)
		status = EXIT_CONFIG;
	else if (r < 0 || c.fails > 0)
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
	return r < 0 ? EXIT_CONFIG : 0;
}
