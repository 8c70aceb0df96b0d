/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * storaged check: load the world and plan as start would, change nothing,
 * and list every problem: the diagnostics of the config and fstab, then
 * each step the plan shows will fail.
 */
#include <errno.h>
#include <stdio.h>

#include "commands.h"
#include "world/world.h"

/* Each step the plan shows will fail, logged.  Returns: how many. */
static unsigned log_predicted_failures(const struct logger *lg, const struct plan *p)
{
	unsigned n = 0;

	for (size_t i = 0; i < p->n_steps; i++) {
		const struct plan_step *s = &p->steps[i];
		const char *why = world_step_will_fail(s);
		char what[512];

		if (!why)
			continue;
		/* a skip is not a failure of its own: start counts it apart */
		if (plan_step_predicted_skip(s))
			log_warning(lg, "step %zu, %s: will be %s", i + 1,
				    plan_step_describe(s, what, sizeof(what)), why);
		else
			log_error(lg, "step %zu, %s: will fail: %s", i + 1,
				  plan_step_describe(s, what, sizeof(what)), why);
		n++;
	}
	return n;
}

int cmd_check(const struct options *o, const struct logger *lg)
{
	struct sources src;
	struct world w = { 0 };
	unsigned shown = 0;
	int r, status;

	sources_init(&src, o);
	r = world_load(&src, lg, &w);
	if (r == 0)
		shown = log_predicted_failures(lg, &w.plan);
	if (r == -EINVAL)
		status = EXIT_CONFIG;
	else if (r < 0 || world_predicted_failures(&w.plan) + world_predicted_skips(&w.plan) > 0)
		status = EXIT_STEP_FAILED;
	else
		status = 0;
	/* nofail steps that will fail count for nothing, as in start */
	if (status == 0)
		printf("%s: deferred fstab entries: %zu, areas: %zu, steps planned: %zu; %s\n",
		       o->config_path, w.fstab.n_entries, w.cfg.n_areas, w.plan.n_steps,
		       shown ? "only nofail steps will fail" : "no step will fail");
	world_done(&w);
	return status;
}
