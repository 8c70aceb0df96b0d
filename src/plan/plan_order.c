/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The planner, step 5: the steps in an order that respects every edge
 * (Kahn's sort, ties broken by kind and by config and fstab order), and a
 * cycle reported once, naming every entry in it.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse/fsfacts.h"
#include "plan_internal.h"
#include "shared/units.h"
#include "shared/util.h"

/* ------------------------------------------------------------ step 5: order */

static unsigned step_class(const struct plan_step *s)
{
	switch (s->kind) {
	case PLAN_REGISTER:
		return 0;
	case PLAN_ASSEMBLE:
	case PLAN_WAIT_DEVICE:
		return 1;
	case PLAN_AREA: /* DESIGN.md's order: btrfs, then areas, then mounts */
		return 2;
	case PLAN_MOUNT:
	default:
		return 3;
	case PLAN_SCRUB: /* after what it waits for, as late as can be */
		return 4;
	}
}

/* Tie-break among steps ready at the same time: true when @x goes first. */
static bool step_before(const struct builder *b, size_t x, size_t y)
{
	const struct plan_step *sx = &b->steps[x], *sy = &b->steps[y];
	unsigned cx = step_class(sx), cy = step_class(sy);

	if (cx != cy)
		return cx < cy;
	if (sx->kind == PLAN_MOUNT && sx->entry->line != sy->entry->line)
		return sx->entry->line < sy->entry->line;
	if (sx->kind == PLAN_AREA && sx->area != sy->area)
		return sx->area < sy->area;
	return x < y;
}

/* The ready steps, a binary heap ordered by step_before(). */
struct ready {
	const struct builder *b;
	size_t *v, n;
};

static void ready_push(struct ready *h, size_t x)
{
	size_t i = h->n++;

	for (; i > 0 && step_before(h->b, x, h->v[(i - 1) / 2]); i = (i - 1) / 2)
		h->v[i] = h->v[(i - 1) / 2];
	h->v[i] = x;
}

static size_t ready_pop(struct ready *h)
{
	size_t top = h->v[0], x = h->v[--h->n], i = 0;

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= h->n)
			break;
		if (c + 1 < h->n && step_before(h->b, h->v[c + 1], h->v[c]))
			c++;
		if (!step_before(h->b, h->v[c], x))
			break;
		h->v[i] = h->v[c];
		i = c;
	}
	if (h->n)
		h->v[i] = x;
	return top;
}

/*
 * Kahn with the ready steps in a heap and the edges indexed by the step
 * they wait for: N log N, where a scan of every step and every edge for
 * each step placed made a plan of 2000 mounts cost 8 M comparisons.  The
 * same order as the scan (step_before() is a total order).  Returns: the
 * number placed; SIZE_MAX without memory.
 */
static size_t order_by_heap(const struct builder *b, size_t *pending, bool *placed, size_t *perm)
{
	size_t *first = calloc(b->n_steps + 1, sizeof(*first));
	size_t *by_to = malloc((b->n_edges ? b->n_edges : 1) * sizeof(*by_to));
	struct ready h = { .b = b, .v = malloc((b->n_steps ? b->n_steps : 1) * sizeof(size_t)) };
	size_t n = SIZE_MAX;

	if (!first || !by_to || !h.v)
		goto out;
	/* first[t]..first[t+1]: the edges whose step waits for t */
	for (size_t e = 0; e < b->n_edges; e++)
		first[b->edges[e].to + 1]++;
	for (size_t i = 0; i < b->n_steps; i++)
		first[i + 1] += first[i];
	for (size_t e = 0; e < b->n_edges; e++)
		by_to[first[b->edges[e].to] + pending[b->edges[e].to]++] = e;
	for (size_t i = 0; i < b->n_steps; i++)
		pending[i] = 0;
	for (size_t e = 0; e < b->n_edges; e++)
		pending[b->edges[e].from]++;
	for (size_t i = 0; i < b->n_steps; i++)
		if (pending[i] == 0)
			ready_push(&h, i);
	for (n = 0; h.n > 0; n++) {
		size_t best = ready_pop(&h);

		placed[best] = true;
		perm[n] = best;
		for (size_t k = first[best]; k < first[best + 1]; k++)
			if (--pending[b->edges[by_to[k]].from] == 0)
				ready_push(&h, b->edges[by_to[k]].from);
	}
out:
	free(first);
	free(by_to);
	free(h.v);
	return n;
}

/* Kahn: @pending[i] counts the unplaced steps @i waits for; the smallest
 * ready step by step_before() goes next.  Returns: the number placed. */
size_t plan__order_steps(const struct builder *b, size_t *pending, bool *placed, size_t *perm)
{
	size_t n = order_by_heap(b, pending, placed, perm);

	if (n != SIZE_MAX)
		return n;
	/* without memory for the heap: the scan, as it was */
	n = 0;
	for (size_t i = 0; i < b->n_steps; i++) {
		pending[i] = 0;
		placed[i] = false;
	}
	for (size_t e = 0; e < b->n_edges; e++)
		pending[b->edges[e].from]++;
	for (; n < b->n_steps; n++) {
		size_t best = NONE;

		for (size_t i = 0; i < b->n_steps; i++)
			if (!placed[i] && pending[i] == 0 && (best == NONE || step_before(b, i, best)))
				best = i;
		if (best == NONE)
			break;
		placed[best] = true;
		perm[n] = best;
		for (size_t e = 0; e < b->n_edges; e++)
			if (b->edges[e].to == best)
				pending[b->edges[e].from]--;
	}
	return n;
}

/* Follows unplaced deps from @start until a step repeats; stores the cycle
 * in @cyc (each element waits for the next, the last for the first). */
static size_t find_cycle(const struct builder *b, const size_t *pending, size_t start, size_t *walk,
			 size_t *pos, size_t **ret_cyc)
{
	size_t n = 0, cur = start;

	for (size_t i = 0; i < b->n_steps; i++)
		pos[i] = NONE;
	while (pos[cur] == NONE) {
		size_t next = NONE;

		pos[cur] = n;
		walk[n++] = cur;
		for (size_t e = 0; next == NONE && e < b->n_edges; e++)
			if (b->edges[e].from == cur && pending[b->edges[e].to] > 0)
				next = b->edges[e].to;
		if (next == NONE)
			return 0; /* cannot happen: an unplaced step waits for one */
		cur = next;
	}
	*ret_cyc = walk + pos[cur];
	return n - pos[cur];
}

static void print_cycle_node(const struct builder *b, size_t i, bool first, FILE *f)
{
	const struct plan_step *s = &b->steps[i];

	if (s->kind == PLAN_AREA)
		fprintf(f, "area %s (%s)", s->area->name, s->area->path ? s->area->path : "no path");
	else if (s->kind == PLAN_MOUNT)
		fprintf(f, "%s (%sline %u)", s->entry->target, first ? "fstab " : "", s->entry->line);
	else
		fprintf(f, "step %zu", i);
}

/* The fix to suggest: the options that made the cycle's requires edges
 * (the edge reason is "OPTION=VALUE"), each named once, in cycle order, so
 * that an x-systemd.after= loop is not blamed on x-storaged.requires=. */
static void print_cycle_fix(const struct builder *b, const size_t *cyc, size_t n, FILE *f)
{
	const char *seen[6]; /* reasons; the six options of fstab_require */
	size_t seen_len[6], n_seen = 0, len;
	bool dup;

	for (size_t k = 0; k < n; k++)
		for (size_t e = 0; e < b->n_edges; e++) {
			const struct edge *ed = &b->edges[e];

			if (ed->from != cyc[k] || ed->to != cyc[(k + 1) % n] || ed->kind != EDGE_REQUIRES)
				continue;
			len = strcspn(ed->reason, "=");
			dup = false;
			for (size_t j = 0; j < n_seen; j++)
				dup = dup ||
				      (seen_len[j] == len && strncmp(seen[j], ed->reason, len) == 0);
			if (dup || n_seen == sizeof(seen) / sizeof(seen[0]))
				continue;
			fprintf(f, "%s%.*s=", n_seen ? " or " : "; remove one of the ", (int)len,
				ed->reason);
			seen_len[n_seen] = len;
			seen[n_seen++] = ed->reason;
		}
	fputs(n_seen ? " options" : "; change the mount point or source of one of them", f);
}

/* One diagnostic naming every entry of the cycle, starting from the one that
 * would go first (lowest fstab line). */
static int report_cycle(struct builder *b, const size_t *cyc, size_t n)
{
	const struct plan_step *s0;
	size_t first = 0, sz = 0;
	char *msg = NULL;
	FILE *f;
	int r;

	for (size_t k = 1; k < n; k++)
		if (step_before(b, cyc[k], cyc[first]))
			first = k;
	f = open_memstream(&msg, &sz);
	if (!f)
		return -ENOMEM;
	fputs("dependency cycle: ", f);
	for (size_t k = 0; k <= n; k++) {
		fputs(k ? " -> " : "", f);
		if (k < n)
			print_cycle_node(b, cyc[(first + k) % n], k == 0, f);
	}
	s0 = &b->steps[cyc[first]];
	fputs(s0->kind == PLAN_MOUNT ? s0->entry->target : s0->area->name, f);
	print_cycle_fix(b, cyc, n, f);
	if (fclose(f) != 0) {
		free(msg);
		return -ENOMEM;
	}
	r = s0->kind == PLAN_MOUNT
		    ? diag_error(b->diags, b->in->fstab->file, s0->entry->line, "%s", msg)
		    : diag_error(b->diags, b->in->config->file, s0->area->line, "%s", msg);
	free(msg);
	return r < 0 ? r : -ELOOP;
}

/* Every cycle, each reported once: a step that only waits on a cycle
 * leads the walk into one already reported, which is not repeated. */
int plan__diagnose_cycle(struct builder *b, const size_t *pending)
{
	size_t *walk = calloc(b->n_steps, sizeof(*walk));
	size_t *pos = calloc(b->n_steps, sizeof(*pos));
	bool *reported = calloc(b->n_steps, sizeof(*reported));
	size_t n, *cyc = NULL;
	int r = -ENOMEM;

	if (!walk || !pos || !reported)
		goto out;
	r = -ELOOP;
	/* steps by index are in fstab and config order, as step_before() */
	for (size_t start = 0; start < b->n_steps && r == -ELOOP; start++) {
		bool seen = false;

		if (pending[start] == 0 || reported[start])
			continue;
		n = find_cycle(b, pending, start, walk, pos, &cyc);
		for (size_t k = 0; k < n; k++)
			seen = seen || reported[cyc[k]];
		for (size_t k = 0; k < n; k++)
			reported[cyc[k]] = true;
		if (n > 0 && !seen)
			r = report_cycle(b, cyc, n);
	}
out:
	free(reported);
	free(walk);
	free(pos);
	return r;
}

/* Steps are in dependency order: one backward pass. */
void plan_boot_needs(const struct plan *p, bool *needed)
{
	for (size_t i = p->n_steps; i-- > 0;) {
		const struct plan_step *s = &p->steps[i];
		bool waits = plan_step_is_device_wait(s), depended = false;

		for (size_t k = i + 1; waits && k < p->n_steps && !depended; k++)
			for (size_t d = 0; d < p->steps[k].n_deps; d++)
				depended |= p->steps[k].deps[d].step == i;
		/* a scrub: never for the boot, nor does it make its mount needed */
		if (!(s->kind == PLAN_MOUNT && s->entry->nofail) && !(waits && depended) && !s->later &&
		    s->kind != PLAN_SCRUB)
			needed[i] = true;
		for (size_t d = 0; needed[i] && d < s->n_deps; d++)
			needed[s->deps[d].step] = true;
	}
}
