/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Why a step is left for the start after the network (start --local), in
 * words the state records keep: `status` tells such a wait at rest from
 * one a killed run left (status_live.c).
 */
#include <stdbool.h>
#include <stddef.h>

#include "plan.h"
#include "shared/util.h"

static const char *const later_reasons[] = {
	"needs the network, left for the start after it is up",
	"waits on a step left for the start after the network is up",
	"only steps left for the start after the network is up need it",
};

const char *plan_later_reason(const struct plan_step *s)
{
	if (s->kind == PLAN_MOUNT && s->entry->remote)
		return later_reasons[0];
	if (s->kind == PLAN_MOUNT || s->kind == PLAN_AREA || s->kind == PLAN_SCRUB)
		return later_reasons[1];
	return later_reasons[2];
}

bool plan_is_later_reason(const char *reason)
{
	for (size_t i = 0; reason && i < ARRAY_SIZE(later_reasons); i++)
		if (streq(reason, later_reasons[i]))
			return true;
	return false;
}
