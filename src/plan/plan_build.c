/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The planner: a pure function from (config, deferred fstab entries, device
 * inventory, mount table, area surveys) to a list of steps with dependency
 * edges, in an order that respects every edge.  No I/O, no printing: problems
 * go to the diag list, the caller decides what to print.
 *
 * plan_build() runs these steps (1-3 are plan.c, 4 plan_edges.c, 5
 * plan_order.c):
 *   1. one MOUNT step per deferred entry, in fstab order; entries whose
 *      target is already a mount point become done steps;
 *   2. per entry that is not done: resolve its source without I/O and add the
 *      REGISTER + ASSEMBLE steps of its btrfs filesystem, or a WAIT_DEVICE
 *      step for an absent device (ordering rule 3);
 *   3. one AREA step per configured area, sized by area_size_resolve();
 *   4. the edges of rules 1, 2, 4 and 5 (parents, bind/loop sources, areas,
 *      requires=);
 *   5. Kahn's topological sort with ties broken by (REGISTER, then
 *      ASSEMBLE/WAIT, then AREA by config order, then MOUNT by fstab line);
 *      a cycle is reported once, naming every entry in it;
 *   6. the steps are moved into the plan in that order and the edges become
 *      each step's deps, renumbered to the final order.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "plan.h"
#include "plan_internal.h"

static void step_done(struct plan_step *s)
{
	for (size_t i = 0; i < s->n_deps; i++)
		free(s->deps[i].reason);
	free(s->deps);
	free(s->note);
	free(s->devnode);
	free(s->missing);
	free(s->label);
	free(s->spec);
}

/* ------------------------------------------------------------ builder */

static void builder_done(struct builder *b)
{
	for (size_t i = 0; i < b->n_steps; i++)
		step_done(&b->steps[i]);
	for (size_t i = 0; i < b->n_edges; i++)
		free(b->edges[i].reason);
	free(b->steps);
	free(b->edges);
	free(b->edge_index);
	free(b->entry_step);
	free(b->area_step);
	free(b->by_target);
}

/* ------------------------------------------------------------ step 6: output */

static int cmp_dep(const void *x, const void *y)
{
	const struct plan_dep *a = x, *b = y;

	return (a->step > b->step) - (a->step < b->step);
}

/* Turns the edges into deps of the steps that wait, numbered by @inv. */
static int attach_deps(struct builder *b, const size_t *inv, size_t *count)
{
	for (size_t i = 0; i < b->n_steps; i++)
		count[i] = 0;
	for (size_t e = 0; e < b->n_edges; e++)
		count[b->edges[e].from]++;
	for (size_t i = 0; i < b->n_steps; i++)
		if (!(b->steps[i].deps = calloc(count[i] ? count[i] : 1, sizeof(struct plan_dep))))
			return -ENOMEM;
	for (size_t e = 0; e < b->n_edges; e++) {
		struct plan_step *s = &b->steps[b->edges[e].from];

		s->deps[s->n_deps++] =
			(struct plan_dep){ .step = inv[b->edges[e].to], .reason = b->edges[e].reason };
		b->edges[e].reason = NULL;
	}
	for (size_t i = 0; i < b->n_steps; i++)
		qsort(b->steps[i].deps, b->steps[i].n_deps, sizeof(struct plan_dep), cmp_dep);
	return 0;
}

/* Moves the steps into @ret in the order @perm (@inv: its inverse, used
 * up on the way). */
static int emit_plan(struct builder *b, const size_t *perm, size_t *inv, size_t *scratch, struct plan *ret)
{
	struct plan_step *steps;
	int r;

	for (size_t k = 0; k < b->n_steps; k++)
		inv[perm[k]] = k;
	r = attach_deps(b, inv, scratch);
	if (r < 0)
		return r;
	/* in place, one cycle of @perm at a time (@inv marks the steps
	 * placed): a second array of steps would be as large again */
	steps = b->steps;
	for (size_t k = 0; k < b->n_steps; k++) {
		struct plan_step first;
		size_t j = k;

		if (inv[k] == SIZE_MAX)
			continue;
		first = steps[k];
		while (perm[j] != k) {
			steps[j] = steps[perm[j]];
			inv[j] = SIZE_MAX;
			j = perm[j];
		}
		steps[j] = first;
		inv[j] = SIZE_MAX;
	}
	*ret = (struct plan){ .steps = steps, .n_steps = b->n_steps };
	b->steps = NULL;
	b->n_steps = b->cap_steps = 0;
	return 0;
}

/* A _netdev entry whose device is not here yet (a WAIT_DEVICE step, or a
 * btrfs filesystem with members missing): on an iSCSI or NBD disk it
 * comes only after the network, so start --local does not wait for it.
 * A _netdev entry whose device is here mounts early as before. */
static bool netdev_absent(const struct plan *p, const struct plan_step *s)
{
	if (s->kind != PLAN_MOUNT || !s->entry->netdev)
		return false;
	for (size_t d = 0; d < s->n_deps; d++) {
		const struct plan_step *t = &p->steps[s->deps[d].step];

		if (!t->done && (t->kind == PLAN_WAIT_DEVICE || (t->kind == PLAN_ASSEMBLE && t->missing)))
			return true;
	}
	return false;
}

/*
 * start --local: the mount of a remote entry, and every step that waits on
 * a step left for later, is left for the start after the network is up;
 * so is a device step that only such steps wait on (an iSCSI disk's wait
 * would otherwise spend its timeout in the early pass).  Steps come in
 * dependency order: one pass forward, one back.
 */
static int mark_later(struct plan *p)
{
	bool *needed_now = calloc(p->n_steps + 1, sizeof(bool)),
	     *has_dependant = calloc(p->n_steps + 1, sizeof(bool));

	if (!needed_now || !has_dependant) {
		free(needed_now);
		free(has_dependant);
		return -ENOMEM;
	}
	for (size_t i = 0; i < p->n_steps; i++) {
		struct plan_step *s = &p->steps[i];

		s->later = !s->done && s->kind == PLAN_MOUNT && (s->entry->remote || netdev_absent(p, s));
		for (size_t d = 0; d < s->n_deps && !s->done && !s->later; d++)
			s->later = p->steps[s->deps[d].step].later;
	}
	for (size_t i = p->n_steps; i-- > 0;) {
		struct plan_step *s = &p->steps[i];

		if (s->kind != PLAN_MOUNT && s->kind != PLAN_AREA && !s->done && has_dependant[i] &&
		    !needed_now[i])
			s->later = true;
		for (size_t d = 0; d < s->n_deps; d++) {
			has_dependant[s->deps[d].step] = true;
			needed_now[s->deps[d].step] |= !s->later;
		}
	}
	free(needed_now);
	free(has_dependant);
	return 0;
}

static int by_target_cmp(const void *x, const void *y, void *userdata)
{
	const struct builder *b = userdata;
	size_t i = *(const size_t *)x, j = *(const size_t *)y;
	int c = strcmp(plan__builder_entry(b, i)->target, plan__builder_entry(b, j)->target);

	return c != 0 ? c : (i > j) - (i < j);
}

static int builder_init(struct builder *b, const struct plan_input *in, struct diag_list *diags)
{
	size_t ne = in->fstab ? in->fstab->n_entries : 0, na = in->config->n_areas;

	*b = (struct builder){ .in = in, .diags = diags };
	b->entry_step = calloc(ne ? ne : 1, sizeof(size_t));
	b->area_step = calloc(na ? na : 1, sizeof(size_t));
	b->by_target = calloc(ne ? ne : 1, sizeof(size_t));
	if (!b->entry_step || !b->area_step || !b->by_target)
		return -ENOMEM;
	for (size_t i = 0; i < na; i++)
		b->area_step[i] = NONE;
	for (size_t i = 0; i < ne; i++)
		b->by_target[i] = i;
	qsort_r(b->by_target, ne, sizeof(size_t), by_target_cmp, b);
	return 0;
}

static int build_steps(struct builder *b)
{
	size_t ne = b->in->fstab ? b->in->fstab->n_entries : 0;
	int r = 0;

	for (size_t i = 0; r >= 0 && i < ne; i++)
		r = plan__add_mount_step(b, i);
	for (size_t i = 0; r >= 0 && i < ne; i++)
		r = plan__add_device_steps(b, i);
	for (size_t i = 0; r >= 0 && i < b->in->config->n_areas; i++)
		r = plan__add_area_step(b, i);
	if (r >= 0 && ne > 0)
		r = plan__add_edges(b);
	return r;
}

int plan_build(const struct plan_input *in, struct plan *ret, struct diag_list *diags)
{
	struct builder b;
	size_t *pending = NULL, *perm = NULL, *inv = NULL;
	bool *placed = NULL;
	int r;

	r = plan__check_resolved_duplicates(in, diags);
	if (r < 0)
		return r;
	r = builder_init(&b, in, diags);
	if (r >= 0)
		r = build_steps(&b);
	if (r < 0)
		goto out;
	r = -ENOMEM;
	pending = calloc(b.n_steps + 1, sizeof(size_t));
	perm = calloc(b.n_steps + 1, sizeof(size_t));
	inv = calloc(b.n_steps + 1, sizeof(size_t));
	placed = calloc(b.n_steps + 1, sizeof(bool));
	if (!pending || !perm || !inv || !placed)
		goto out;
	if (plan__order_steps(&b, pending, placed, perm) != b.n_steps) {
		r = plan__diagnose_cycle(&b, pending);
		goto out;
	}
	r = emit_plan(&b, perm, inv, pending, ret);
	if (r >= 0 && in->local_only && (r = mark_later(ret)) < 0)
		plan_done(ret);
out:
	free(placed);
	free(pending);
	free(perm);
	free(inv);
	builder_done(&b);
	return r;
}

void plan_done(struct plan *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n_steps; i++)
		step_done(&p->steps[i]);
	free(p->steps);
	p->steps = NULL;
	p->n_steps = 0;
}
