/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The loader's own use of refuse.c: refusing the items errors point into,
 * and planning around them (world.c).  Commands use world.h.
 */
#ifndef STORAGED_REFUSE_H
#define STORAGED_REFUSE_H

#include "world.h"

/*
 * world_refuse_new: world_refuse_items() on the errors of @dl from @from
 * on, so that planning goes on without their items.  @ret_new: items
 * newly refused, or NULL.  Returns: 0; -EINVAL when an error lies within
 * no item (counted in @w->unusable); -ENOMEM.
 */
int world_refuse_new(struct world *w, const struct diag_list *dl, size_t from, size_t *ret_new);

/*
 * world_build_plan: plan_build() of @in into @w->plan.  The planner's
 * errors (a mount point spelt through a link, an area over a mount point,
 * a cycle) refuse their items too, and the plan is built again without
 * them: each round refuses one item at least, or stops.  The warnings
 * are those of the last round; every error stays in @dl.  Returns: 0
 * (with errors in @dl for a strict caller to refuse); -EINVAL; -ENOMEM.
 */
int world_build_plan(struct world *w, const struct plan_input *in, struct diag_list *dl);

#endif
