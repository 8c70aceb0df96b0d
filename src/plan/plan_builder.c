/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The planner's builder (plan_internal.h): adding steps and edges, and the
 * lookups every rule makes on it, by path: the deferred entry whose mount
 * point holds a path (a binary search of the entries sorted by target),
 * the area that holds it, and of the two the step that makes the path what
 * it will be; the WAIT_DEVICE step every waiter shares.  Shared by plan.c
 * (steps 1-3), plan_edges.c (step 4) and plan_order.c (step 5).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan_internal.h"
#include "shared/util.h"

static bool path_is_below_or_equal(const char *path, const char *dir)
{
	return strcmp(path, dir) == 0 || path_is_below(path, dir);
}

int plan__builder_add_step(struct builder *b, enum plan_step_kind kind, size_t *ret)
{
	if (grow_array(&b->steps, &b->cap_steps, b->n_steps, sizeof(*b->steps)) < 0)
		return -ENOMEM;
	memset(&b->steps[b->n_steps], 0, sizeof(*b->steps));
	b->steps[b->n_steps].kind = kind;
	*ret = b->n_steps++;
	return 0;
}

/* Multiplicative hashing (Knuth): the product's high bits depend on all
 * of the key's, the low ones only on its low bits, so the slot is taken
 * from the high half.  @cap is a power of two. */
static size_t edge_slot(size_t from, size_t to, size_t cap)
{
	uint64_t h = ((uint64_t)from * UINT64_C(0x9e3779b97f4a7c15)) ^ (uint64_t)to;

	h *= UINT64_C(0xbf58476d1ce4e5b9);
	return (size_t)(h >> 32) & (cap - 1);
}

/* The slot that holds the edge @from -> @to, or the free one it would take. */
static size_t edge_find(const struct builder *b, size_t from, size_t to)
{
	size_t k = edge_slot(from, to, b->cap_index);

	while (b->edge_index[k]) {
		const struct edge *e = &b->edges[b->edge_index[k] - 1];

		if (e->from == from && e->to == to)
			break;
		k = (k + 1) & (b->cap_index - 1);
	}
	return k;
}

/* Room for one more edge, in the array and in the index (both doubled: an
 * fstab of thousands of entries whose union branches match thousands of
 * mount points makes hundreds of thousands of edges). */
static int edges_reserve(struct builder *b)
{
	if (grow_array(&b->edges, &b->cap_edges, b->n_edges, sizeof(*b->edges)) < 0)
		return -ENOMEM;
	if (2 * (b->n_edges + 1) > b->cap_index) {
		size_t cap = b->cap_index ? 2 * b->cap_index : 128;
		size_t *nv = calloc(cap, sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		free(b->edge_index);
		b->edge_index = nv;
		b->cap_index = cap;
		for (size_t i = 0; i < b->n_edges; i++)
			nv[edge_find(b, b->edges[i].from, b->edges[i].to)] = i + 1;
	}
	return 0;
}

/* Adds "@from waits for @to"; a second edge between the same steps is
 * dropped, so the first rule that links them names the reason.
 * Returns: 0, or -ENOMEM. */
int plan__builder_add_edge(struct builder *b, size_t from, size_t to, enum edge_kind kind, const char *fmt, ...)
{
	char *reason;
	va_list ap;
	size_t k;
	int r;

	r = edges_reserve(b);
	if (r < 0)
		return r;
	k = edge_find(b, from, to);
	if (b->edge_index[k])
		return 0;
	va_start(ap, fmt);
	r = vasprintf(&reason, fmt, ap);
	va_end(ap);
	if (r < 0)
		return -ENOMEM;
	b->edges[b->n_edges++] = (struct edge){ .from = from, .to = to, .kind = kind, .reason = reason };
	b->edge_index[k] = b->n_edges;
	return 0;
}

const struct fstab_entry *plan__builder_entry(const struct builder *b, size_t i)
{
	return &b->in->fstab->entries[i];
}

const struct entry_facts *plan__builder_facts(const struct builder *b, size_t i)
{
	static const struct entry_facts none;

	return b->in->facts ? &b->in->facts[i] : &none;
}

uint64_t plan__entry_device_timeout(const struct plan_input *in, const struct fstab_entry *e)
{
	return e->device_timeout_usec != USEC_UNSET ? e->device_timeout_usec
						    : in->config->device_timeout_usec;
}

/* The WAIT_DEVICE step for @spec, shared by everything that waits for it. */
int plan__ensure_wait(struct builder *b, const char *spec, uint64_t timeout, size_t *ret)
{
	struct plan_step *s;
	int r;

	for (size_t i = 0; i < b->n_steps; i++) {
		s = &b->steps[i];
		if (s->kind == PLAN_WAIT_DEVICE && streq(s->spec, spec)) {
			if (timeout > s->timeout_usec)
				s->timeout_usec = timeout;
			*ret = i;
			return 0;
		}
	}
	r = plan__builder_add_step(b, PLAN_WAIT_DEVICE, ret);
	if (r < 0)
		return r;
	s = &b->steps[*ret];
	s->timeout_usec = timeout;
	return (s->spec = strdup(spec)) ? 0 : -ENOMEM;
}

/* <0, 0, >0 as the string @t sorts before, equal to or after the first
 * @len bytes of @path. */
static int cmp_prefix(const char *t, const char *path, size_t len)
{
	int c = strncmp(t, path, len);

	return c != 0 ? c : t[len] != '\0';
}

/* The first entry in fstab order (not @skip) whose target is exactly the
 * first @len bytes of @path, or NONE: a binary search of by_target. */
static size_t entry_with_target(const struct builder *b, const char *path, size_t len, size_t skip)
{
	size_t lo = 0, hi = b->in->fstab->n_entries;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (cmp_prefix(plan__builder_entry(b, b->by_target[mid])->target, path, len) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < b->in->fstab->n_entries; lo++) {
		size_t i = b->by_target[lo];

		if (cmp_prefix(plan__builder_entry(b, i)->target, path, len) != 0)
			break;
		if (i != skip)
			return i;
	}
	return NONE;
}

/* Length of the parent of the first @len bytes of the absolute @path. */
static size_t parent_len(const char *path, size_t len)
{
	while (len > 1 && path[len - 1] != '/')
		len--;
	return len > 1 ? len - 1 : 1;
}

/* The deferred entry (not @skip) whose target is the deepest one containing
 * @path: strictly above it, or also equal to it with @or_equal.  Looks up
 * each ancestor of @path, deepest first, so that nesting hundreds of
 * entries stays linear. */
size_t plan__deepest_entry_above(const struct builder *b, const char *path, bool or_equal, size_t skip)
{
	size_t len = strlen(path), found;

	if (!b->in->fstab || path[0] != '/' || (!or_equal && len == 1))
		return NONE;
	if (!or_equal)
		len = parent_len(path, len);
	for (;;) {
		found = entry_with_target(b, path, len, skip);
		if (found != NONE || len == 1)
			return found;
		len = parent_len(path, len);
	}
}

/* The area (that has a step) whose path contains @path. */
size_t plan__area_above(const struct builder *b, const char *path, bool or_equal)
{
	const struct config *c = b->in->config;

	for (size_t i = 0; i < c->n_areas; i++) {
		const char *p = c->areas[i].path;

		/* a refused area's path may be NULL (path= itself refused) */
		if (b->area_step[i] == NONE || !p)
			continue;
		if (or_equal ? path_is_below_or_equal(path, p) : path_is_below(path, p))
			return i;
	}
	return NONE;
}

size_t plan__entry_on(const struct builder *b, const char *path)
{
	for (size_t j = 0; b->in->fstab && j < b->in->fstab->n_entries; j++) {
		const struct entry_facts *f = plan__builder_facts(b, j);

		if (streq(plan__builder_entry(b, j)->target, path) ||
		    (f->target_real && streq(f->target_real, path)))
			return j;
	}
	return NONE;
}

/* The step that makes @path what it will be: the MOUNT step of the deepest
 * entry (not @skip) on or above it, or the AREA step covering it when the
 * area lies deeper.  Returns: the step, or NONE; @ret_name names it. */
size_t plan__deepest_holder(const struct builder *b, const char *path, size_t skip, const char **ret_name)
{
	size_t p = plan__deepest_entry_above(b, path, true, skip);
	size_t a = plan__area_above(b, path, true);
	const struct area_config *ac = a != NONE ? &b->in->config->areas[a] : NULL;

	if (ac && (p == NONE || strlen(ac->path) > strlen(plan__builder_entry(b, p)->target))) {
		*ret_name = ac->name;
		return b->area_step[a];
	}
	if (p == NONE)
		return NONE;
	*ret_name = plan__builder_entry(b, p)->target;
	return b->entry_step[p];
}

/* Where entry @i's mount point leads: the links that exist now followed. */
static const char *resolved_target(const struct plan_input *in, size_t i)
{
	const struct entry_facts *f = in->facts ? &in->facts[i] : NULL;

	return f && f->target_real ? f->target_real : in->fstab->entries[i].target;
}

/*
 * Two entries whose mount points are spelt apart but lead to one directory
 * (a symbolic link on the way, as "/var/run" to "/run"): mount(8) and
 * systemd take the second as a duplicate, and mounting both would stack
 * one on the other.  Entries spelt alike are the parser's duplicates.
 * Reported on the later line, naming the earlier one and the link.
 * Returns: 0, -EINVAL after appending an error, -ENOMEM.
 */
int plan__check_resolved_duplicates(const struct plan_input *in, struct diag_list *diags)
{
	const struct fstab *t = in->fstab;
	int r = 0;

	for (size_t i = 0; in->facts && i < t->n_entries; i++) {
		const struct fstab_entry *a = &t->entries[i];

		if (!in->facts[i].target_real || a->refused)
			continue;
		for (size_t j = 0; j < t->n_entries; j++) {
			const struct fstab_entry *b = &t->entries[j];
			const struct fstab_entry *first = a->line < b->line ? a : b, *later = first == a ? b : a;
			int k;

			if (j == i || b->refused || streq(a->target, b->target) ||
			    !streq(resolved_target(in, i), resolved_target(in, j)))
				continue;
			/* a pair of two linked spellings is met twice: report it once */
			if (in->facts[j].target_real && j < i)
				continue;
			k = diag_error(diags, t->file, later->line,
				       "mount point '%s' and line %u's '%s' are one directory, '%s', through a symbolic link; storaged mounts each mount point once, as mount(8) and systemd do: remove or merge one of the two entries",
				       later->target, first->line, first->target, resolved_target(in, i));
			r = k < 0 ? -ENOMEM : -EINVAL;
			if (k < 0)
				return r;
		}
	}
	return r;
}

/* ------------------------------------------------------------ refused items */

/* The filesystem's [btrfs] section is refused (world/refuse.c): its
 * policy is not known, so its mounts fail with the section's errors,
 * and what waits on them is skipped.  Returns: 0 or -ENOMEM. */
int plan__refused_section(struct plan_step *s, const struct btrfs_policy *sec)
{
	s->conflict = true;
	free(s->note);
	if (asprintf(&s->note, "its [btrfs %s] section is %s", sec->name, sec->refused) < 0) {
		s->note = NULL;
		return -ENOMEM;
	}
	return 0;
}

/* An area the boot refuses (world/refuse.c) fails alone; what lies in it
 * waits on it and is skipped. */
int plan__add_refused_area_step(struct builder *b, size_t i)
{
	size_t idx;
	int r = plan__builder_add_step(b, PLAN_AREA, &idx);

	if (r < 0)
		return r;
	b->steps[idx].area = &b->in->config->areas[i];
	b->steps[idx].conflict = true;
	b->area_step[i] = idx;
	return (b->steps[idx].note = strdup(b->in->config->areas[i].refused)) ? 0 : -ENOMEM;
}
