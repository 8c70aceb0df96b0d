/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The planner, step 4: the edges of ordering rules 1, 2, 4 and 5 (parents,
 * bind and loop sources, areas, requires=) between the steps of plan.c.
 */
#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse/fsfacts.h"
#include "plan_internal.h"
#include "shared/units.h"
#include "shared/util.h"

/* ------------------------------------------------------------ step 4: edges */

/* Rules 1 and 2: the deepest parent mount point; a bind/loop source (below
 * a mount point, or inside an area). */
static int add_path_edges(struct builder *b, size_t i)
{
	const struct fstab_entry *e = plan__builder_entry(b, i);
	size_t from = b->entry_step[i], p;
	const char *name = NULL;
	int r;

	p = plan__deepest_entry_above(b, e->target, false, i);
	if (p != NONE) {
		r = plan__builder_add_edge(b, from, b->entry_step[p], EDGE_PARENT,
				     "%s: parent mount point", plan__builder_entry(b, p)->target);
		if (r < 0)
			return r;
	}
	if (!(e->bind || e->loop) || e->source[0] != '/')
		return 0;
	p = plan__deepest_holder(b, e->source, i, &name);
	if (p == NONE)
		return 0;
	return plan__builder_add_edge(b, from, p, EDGE_SOURCE, "%s%s: %s source below it",
				b->steps[p].kind == PLAN_AREA ? "area " : "", name,
				e->bind ? "bind" : "loop");
}

/* Rule 4, second half: a mount point below an area path waits for the area. */
static int add_entry_area_edge(struct builder *b, size_t i)
{
	const struct fstab_entry *e = plan__builder_entry(b, i);
	size_t a = plan__area_above(b, e->target, false);

	if (a == NONE)
		return 0;
	return plan__builder_add_edge(b, b->entry_step[i], b->area_step[a], EDGE_AREA,
				"area %s: mount point below it", b->in->config->areas[a].name);
}

/* An area on the mount point of an entry storaged mounts would be bound
 * over that filesystem: the next start finds the area where the entry
 * belongs ("something else is mounted"), fails the entry and cannot undo
 * it.  A configuration error, reported on the area's line.  Returns: 0
 * or -ENOMEM. */
static int area_on_mount_point(struct builder *b, const struct area_config *a)
{
	size_t j = plan__entry_on(b, a->path);
	const struct fstab_entry *e = j != NONE ? plan__builder_entry(b, j) : NULL;

	if (!e)
		return 0;
	/* about its path = line, not the section as a whole */
	return diag_error(b->diags, a->file ? a->file : b->in->config->file, a->path_line ? a->path_line : a->line,
			  "area '%s': path '%s' is the mount point of the %s entry at %s:%u, which storaged mounts: the area would be bound over that filesystem and hide it, and the next start would find the area where the entry belongs and fail it; put the area on a directory below the mount point (path = %s/DIR), or drop the entry or the area",
			  a->name, a->path, e->fstype, b->in->fstab->file, e->line, a->path);
}

/* Rule 4, first half: an area below a mount point waits for it. */
static int add_area_edges(struct builder *b)
{
	const struct config *c = b->in->config;
	int r;

	for (size_t i = 0; i < c->n_areas; i++) {
		size_t p;

		/* a refused area fails for its own errors, not as a dependant */
		if (c->areas[i].refused)
			continue;
		if ((r = area_on_mount_point(b, &c->areas[i])) < 0)
			return r;
		if (b->area_step[i] == NONE || b->steps[b->area_step[i]].done)
			continue;
		p = plan__deepest_entry_above(b, c->areas[i].path, true, NONE);
		if (p == NONE)
			continue;
		r = plan__builder_add_edge(b, b->area_step[i], b->entry_step[p], EDGE_AREA,
				     "%s: area path below it", plan__builder_entry(b, p)->target);
		if (r < 0)
			return r;
	}
	return 0;
}

/* Rule 5 for a path: the deepest entry or area on or above it. */
static int add_requires_path(struct builder *b, size_t i, const char *path, const struct fstab_require *req)
{
	const struct fstab_entry *e = plan__builder_entry(b, i);
	const char *name = NULL;
	size_t to = plan__deepest_holder(b, path, NONE, &name);

	if (to == NONE)
		return diag_warning(b->diags, b->in->fstab->file, e->line,
				    "%s=%s: not a storaged entry; assumed mounted by the system",
				    req->option, req->value);
	return plan__builder_add_edge(b, b->entry_step[i], to, EDGE_REQUIRES, "%s=%s", req->option, req->value);
}

/* Rule 5 for a device: nothing when present, else a shared WAIT_DEVICE. */
static int add_requires_device(struct builder *b, size_t i, const char *spec,
			       const struct fstab_require *req)
{
	const struct fstab_entry *e = plan__builder_entry(b, i);
	size_t idx;
	int r;

	if (b->in->inventory && inventory_find(b->in->inventory, spec))
		return 0;
	r = plan__ensure_wait(b, spec, plan__entry_device_timeout(b->in, e), &idx);
	if (r < 0)
		return r;
	return plan__builder_add_edge(b, b->entry_step[i], idx, EDGE_REQUIRES, "%s=%s", req->option, req->value);
}

/* systemd's unit name of a path ("srv-data.mount", "dev-sdb1.device") back
 * to the path (systemd.unit(5): "-" separates components, "\xNN" escapes).
 * Returns: true and the path in @buf; false for any other unit name. */
static bool unit_to_path(const char *unit, char *buf, size_t len)
{
	const char *dot = strrchr(unit, '.');
	size_t n = dot ? (size_t)(dot - unit) : 0;

	if (!dot || (strcmp(dot, ".mount") != 0 && strcmp(dot, ".device") != 0) || len < 3)
		return false;
	buf[0] = '/';
	if (n == 1 && unit[0] == '-') /* "-.mount" is "/" */
		n = 0;
	/* after the '/', one byte is kept spare: a path that fills @buf is refused */
	return unescape_hex(unit, n, '/', buf + 1, len - 2);
}

/* Rule 5 the other way round (x-systemd.before=): the entry mounted on
 * @path waits for entry @i; systemd orders nothing else by it here. */
static int add_before_item(struct builder *b, size_t i, const char *path, const struct fstab_require *req)
{
	const struct fstab_entry *e = plan__builder_entry(b, i);
	size_t j = path[0] == '/' ? plan__entry_on(b, path) : NONE;

	if (j == NONE || j == i)
		return diag_warning(b->diags, b->in->fstab->file, e->line,
				    "%s=%s: not the mount unit of another storaged entry; storaged orders nothing after this entry by it",
				    req->option, req->value);
	if (b->steps[b->entry_step[j]].done)
		return 0;
	return plan__builder_add_edge(b, b->entry_step[j], b->entry_step[i], EDGE_REQUIRES, "%s=%s on %s",
				req->option, req->value, e->target);
}

/* Rule 5: each requires= item is a mount point, a device or a unit. */
static int add_requires_item(struct builder *b, size_t i, const struct fstab_require *req)
{
	const struct fstab_entry *e = plan__builder_entry(b, i);
	const char *what = req->value;
	char path[4096];

	if (req->before)
		return add_before_item(b, i, unit_to_path(what, path, sizeof(path)) ? path : what, req);
	/* A network unit made the entry remote (fstab.c): start --local
	 * leaves it for the start after the network, which is the order. */
	if (fsfacts_unit_is_network(what))
		return 0;
	if (what[0] != '/' && fsfacts_tag_parse(what, NULL) == FSFACTS_TAG_NONE) {
		if (!unit_to_path(what, path, sizeof(path)))
			return diag_warning(b->diags, b->in->fstab->file, e->line,
					    "%s=%s: not a mount point or device; storaged does not order against other units, ignored",
					    req->option, req->value);
		what = path;
	}
	if (fsfacts_tag_parse(what, NULL) != FSFACTS_TAG_NONE ||
	    (has_prefix(what, "/dev/") && plan__deepest_entry_above(b, what, true, NONE) == NONE))
		return add_requires_device(b, i, what, req);
	return add_requires_path(b, i, what, req);
}

static int add_requires_edges(struct builder *b, size_t i)
{
	const struct fstab_entry *e = plan__builder_entry(b, i);
	int r = 0;

	for (size_t k = 0; r >= 0 && k < e->n_requires; k++)
		r = add_requires_item(b, i, &e->requires[k]);
	return r;
}

/* "upperdir=/x/data/upper", "bind source /srv/link": a used path as the
 * fstab names it. */
static void print_use(char *buf, size_t len, const struct fstab_path *u)
{
	if (streq(u->option, "bind") || streq(u->option, "loop"))
		snprintf(buf, len, "%s source %s", u->option, u->path);
	else if (streq(u->option, "image file") || streq(u->option, "source") || streq(u->option, "branch"))
		snprintf(buf, len, "%s %s", u->option, u->path);
	else
		snprintf(buf, len, "%s=%s", u->option, u->path);
}

/* One edge to what holds @path (the deepest entry or area on or above it);
 * @use names it in the reason, @via the path it resolves to, if any. */
static int add_use_edge(struct builder *b, size_t i, const char *use, const char *path, const char *via)
{
	const char *name = NULL;
	size_t to = plan__deepest_holder(b, path, i, &name);
	bool area;

	if (to == NONE || to == b->entry_step[i])
		return 0;
	area = b->steps[to].kind == PLAN_AREA;
	if (via)
		return plan__builder_add_edge(b, b->entry_step[i], to, EDGE_SOURCE, "%s resolves to %s, below %s%s",
					use, via, area ? "area " : "", name);
	return plan__builder_add_edge(b, b->entry_step[i], to, EDGE_SOURCE, "%s is below %s%s", use,
				area ? "area " : "", name);
}

/* A glob pattern (a mergerfs branch "/mnt/disk*") waits for every mount
 * point it matches as mergerfs expands it (glob(3): '/' matched only
 * literally), and for what holds the directory its pattern starts in. */
static int add_glob_edges(struct builder *b, size_t i, const char *use, const char *pattern)
{
	char dir[PATH_MAX];
	int r = 0;

	snprintf(dir, sizeof(dir), "%.*s", (int)fstab_glob_dir_len(pattern), pattern);
	for (size_t j = 0; r >= 0 && j < b->in->fstab->n_entries; j++) {
		const char *target = plan__builder_entry(b, j)->target;

		if (j != i && fnmatch(pattern, target, FNM_PATHNAME | FNM_PERIOD) == 0)
			r = plan__builder_add_edge(b, b->entry_step[i], b->entry_step[j], EDGE_SOURCE,
					     "%s matches %s", use, target);
	}
	return r < 0 ? r : add_use_edge(b, i, use, dir, NULL);
}

/* A pattern and, where a link on the way leads elsewhere, the same pattern
 * there (entry_facts.path_real); one that matches the entry's own mount point
 * would make mergerfs take itself as a branch. */
static int add_pattern_edges(struct builder *b, size_t i, const char *use, const struct fstab_path *u,
			     const char *real)
{
	const struct fstab_entry *e = plan__builder_entry(b, i);
	int r = 0;

	if (fnmatch(u->path, e->target, FNM_PATHNAME | FNM_PERIOD) == 0)
		r = diag_warning(b->diags, b->in->fstab->file, e->line,
				 "%s also matches this entry's own mount point %s, which would become a branch of itself; narrow the pattern",
				 use, e->target);
	if (r >= 0)
		r = add_glob_edges(b, i, use, u->path);
	if (r >= 0 && real)
		r = add_glob_edges(b, i, use, real);
	return r;
}

/* Rule 2 for every path the entry uses besides its mount point:
 * overlay layers, upper and work directories, bind and loop sources, image
 * files, credentials files, FUSE sources and union branches,
 * x-systemd.requires-mounts-for=; each as written and as the links that
 * exist now resolve it.  A mount point reached through a link waits
 * for the entry above where it leads. */
static int add_used_path_edges(struct builder *b, size_t i)
{
	const struct fstab_entry *e = plan__builder_entry(b, i);
	const struct entry_facts *f = plan__builder_facts(b, i);
	char use[PATH_MAX + 64];
	size_t p;
	int r = 0;

	for (size_t k = 0; r >= 0 && k < e->n_paths; k++) {
		const char *real = entry_facts_path_real(f, k);

		print_use(use, sizeof(use), &e->paths[k]);
		if (e->paths[k].glob) {
			r = add_pattern_edges(b, i, use, &e->paths[k], real);
			continue;
		}
		r = add_use_edge(b, i, use, e->paths[k].path, NULL);
		if (r >= 0 && real)
			r = add_use_edge(b, i, use, real, real);
	}
	if (r < 0 || !f->target_real)
		return r;
	p = plan__deepest_entry_above(b, f->target_real, false, i);
	if (p == NONE)
		return 0;
	return plan__builder_add_edge(b, b->entry_step[i], b->entry_step[p], EDGE_PARENT,
				"mount point %s resolves to %s, below %s", e->target,
				f->target_real, plan__builder_entry(b, p)->target);
}

int plan__add_edges(struct builder *b)
{
	int r;

	for (size_t i = 0; i < b->in->fstab->n_entries; i++) {
		/* a refused line fails for its own errors, not as a dependant */
		if (b->steps[b->entry_step[i]].done || plan__builder_entry(b, i)->refused)
			continue;
		r = add_path_edges(b, i);
		if (r >= 0)
			r = add_entry_area_edge(b, i);
		if (r >= 0)
			r = add_requires_edges(b, i);
		if (r >= 0)
			r = add_used_path_edges(b, i);
		if (r < 0)
			return r;
	}
	return add_area_edges(b);
}
