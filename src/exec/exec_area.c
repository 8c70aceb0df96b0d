/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The executor's AREA steps: an area is set up through ops->area_setup()
 * (area/ does the work), its outcome recorded and logged once, with the
 * sizing's derivation behind -v.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "exec_run.h"
#include "ops.h"
#include "parse/area_facts.h"
#include "parse/config.h"
#include "shared/diag.h"
#include "shared/units.h"
#include "shared/log.h"
#include "state/state.h"

static void log_area_done(const struct logger *lg, const struct plan_step *s)
{
	char backend[64], size[32];

	/* seed = overlay: what is mounted on the path is the overlay */
	snprintf(backend, sizeof(backend), s->area->overlay ? "overlay with its upper layer on %s" : "%s",
		 config_backend_name(s->area->backend));
	if (s->sizing_deferred) {
		log_info(lg, "area %s: %s on %s", s->area->name, backend, s->area->path);
		return;
	}
	log_info(lg, "area %s: %s on %s (size=%s %s=%" PRIu64 ")", s->area->name, backend, s->area->path,
		 units_format_size(s->sizing.size_bytes, size, sizeof(size)),
		 area_backend_facts(s->area->backend)->inodes_key, s->sizing.nr_inodes);
	log_debug(lg, "area %s: size %s, %s %s", s->area->name, s->sizing.size_how,
		  area_backend_facts(s->area->backend)->inodes_key, s->sizing.inodes_how);
}

void exec_area_step(struct run *rn, size_t i)
{
	const struct plan_step *s = step(rn, i);
	struct diag_list dl = { 0 };
	struct state_record *rec;
	int r;

	if (s->done) {
		rn->steps[i].out = OUT_OK;
		return;
	}
	r = rn->cx->ops->area_setup(rn->cx->ud, s, &dl);
	log_diags(rn->cx->log, &dl);
	rec = state_find(rn->cx->state, STATE_AREA, s->area->name);
	if (r > 0) { /* set up already (known by its mount ID): nothing done */
		diag_list_done(&dl);
		rn->steps[i].out = OUT_OK;
		if (rec && rec->seq && rec->status != STATE_DONE) /* a pass skipped it */
			state_put(rn->cx->state, STATE_AREA, s->area->name, s->area->path,
				  config_backend_name(s->area->backend), STATE_DONE, NULL, false);
		return;
	}
	if (r < 0) {
		const struct diag *first = NULL;

		for (size_t k = 0; k < dl.n && !first; k++)
			if (dl.v[k].level == DIAG_ERROR)
				first = &dl.v[k];
		rn->steps[i].out = OUT_FAILED;
		/* status shows the reason the user was given, not the errno */
		snprintf(rn->texts[i].msg, sizeof(rn->texts[i].msg), "%s",
			 first ? first->msg : strerror(-r));
		rn->sum.n_failed++;
		state_put(rn->cx->state, STATE_AREA, s->area->name, s->area->path, NULL, STATE_FAILED,
			  rn->texts[i].msg, false);
		diag_list_done(&dl);
		return;
	}
	diag_list_done(&dl);
	rn->steps[i].out = OUT_OK;
	rn->sum.n_done++;
	rn->sum.n_areas++;
	log_area_done(rn->cx->log, s);
	if (!rec || rec->seq == 0 || rec->status != STATE_DONE)
		state_put(rn->cx->state, STATE_AREA, s->area->name, s->area->path,
			  config_backend_name(s->area->backend), STATE_DONE, NULL, true);
}
