/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * storaged sync NAME: copy the RAM area NAME back into its directory
 * (the operations table's area_sync: crash-safe), for an [area] of the
 * configuration only.
 */
#include <errno.h>
#include <string.h>

#include "commands.h"
#include "status/status_prom.h"
#include "exec/sysops.h"
#include "world/world.h"

/* Is @name an [area] of the configuration?  Returns: 0; -ENOENT when not
 * (logged); -EINVAL when the configuration has errors (logged). */
static int area_configured(const struct options *o, const struct logger *lg, const char *name)
{
	struct sources src;
	struct world w = { 0 };
	struct diag_list dl = { 0 };
	bool found = false;
	int r;

	sources_init(&src, o);
	r = world_load_config(&src, &w, &dl);
	if (r == 0) {
		for (size_t i = 0; i < w.cfg.n_areas && !found; i++)
			found = strcmp(w.cfg.areas[i].name, name) == 0;
	} else {
		log_diags(lg, &dl);
	}
	if (r == 0 && !found) {
		log_error(lg, "no [area %s] in %s; `storaged status` lists the active areas", name,
			  o->config_path);
		r = -ENOENT;
	}
	diag_list_done(&dl);
	world_done(&w);
	return r;
}

int cmd_sync(const struct options *o, const struct logger *lg)
{
	struct diag_list dl = { 0 };
	struct sysops so;
	int r;

	if (o->dry_run) {
		log_error(lg, "sync: --dry-run is not supported");
		return EXIT_CONFIG;
	}
	if (area_configured(o, lg, o->arg) < 0)
		return EXIT_CONFIG;
	sysops_open_for_stop(&so, lg, o->state_dir);
	r = sysops_ops.area_sync(&so, o->arg, &dl);
	sysops_close(&so);
	log_diags(lg, &dl);
	diag_list_done(&dl);
	if (r == 0)
		log_info(lg, "area %s: synced back", o->arg);
	/* storaged_area_last_sync_*, and the metrics-textfile */
	if (status_prom_note_sync(o->state_dir, o->arg, r == 0) < 0)
		log_warning(lg, "area %s: cannot record the sync for the metrics", o->arg);
	status_prom_after_pass(o, lg);
	return r < 0 ? EXIT_STEP_FAILED : 0;
}
