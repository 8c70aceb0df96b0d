/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * At boot a bad line costs that line: an error of the configuration or
 * the fstab that lies within one fstab line, one [area] section or one
 * [btrfs] section refuses that item alone (its plan step fails with the
 * error, and what waits on it is skipped), as systemd-fstab-generator,
 * `mount -a`, zram-generator and mdadm skip what they cannot use and bring
 * up the rest.  check and --dry-run stay strict: they never get here.
 *
 * Which item an error is of is told by where it points (FILE:LINE): the
 * parsers and the planner already name the line of the item at fault.
 * One classification (refuse_errors()) serves start's world and the
 * readers besides it, which load the configuration or the fstab alone
 * (world_load_settings(), world_load_fstab(): sync, the resident's area
 * watch, the metrics, the generator).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "load.h"
#include "refuse.h"
#include "world.h"

/* Appends "FILE:LINE: MSG" to the owned text @what ("refused, " first).
 * Returns: 1 when @what was NULL (newly refused), 0, -ENOMEM. */
static int refuse_add(char **what, const struct diag *d)
{
	char *s;
	int r = *what ? asprintf(&s, "%s; %s:%u: %s", *what, d->file, d->line, d->msg)
		      : asprintf(&s, "refused, %s:%u: %s", d->file, d->line, d->msg);
	bool fresh = !*what;

	if (r < 0)
		return -ENOMEM;
	free(*what);
	*what = s;
	return fresh;
}

/* The fstab entry of line @line, or NULL. */
static struct fstab_entry *entry_at(struct fstab *f, unsigned line)
{
	for (size_t i = 0; i < f->n_entries; i++)
		if (f->entries[i].line == line)
			return &f->entries[i];
	return NULL;
}

static bool in_section(const char *file, unsigned first, unsigned last, const struct diag *d)
{
	return file && streq(file, d->file) && d->line >= first && d->line <= last;
}

/* Where an error points (FILE:LINE) tells which item it is of.  Each
 * finder returns the owned "refused" text of the item @d points into,
 * or NULL; @ret_said: the item's step will say it (an fstab line, an
 * area; not a [btrfs] section, which no step of its own says). */
typedef char **(*item_finder)(void *items, const struct diag *d, bool *ret_said);

static char **fstab_item_of(void *items, const struct diag *d, bool *ret_said)
{
	struct fstab *f = items;
	struct fstab_entry *e;

	*ret_said = true;
	if (!f->file || !streq(f->file, d->file))
		return NULL;
	e = entry_at(f, d->line);
	if (e && !e->refused_at && asprintf(&e->refused_at, "%s:%u", d->file, d->line) < 0)
		e->refused_at = NULL; /* the caller sees -ENOMEM through refused */
	return e && e->refused_at ? &e->refused : NULL;
}

static char **config_item_of(void *items, const struct diag *d, bool *ret_said)
{
	struct config *c = items;

	*ret_said = true;
	for (size_t i = 0; i < c->n_areas; i++) {
		struct area_config *a = &c->areas[i];

		if (in_section(a->file, a->line, a->last_line, d))
			return &a->refused;
	}
	*ret_said = false;
	for (size_t i = 0; i < c->n_btrfs; i++) {
		struct btrfs_policy *b = &c->btrfs[i];

		if (in_section(b->file, b->line, b->last_line, d))
			return &b->refused;
	}
	return NULL;
}

static char **world_item_of(void *items, const struct diag *d, bool *ret_said)
{
	struct world *w = items;

	if (w->fstab.file && streq(w->fstab.file, d->file))
		return fstab_item_of(&w->fstab, d, ret_said);
	return config_item_of(&w->cfg, d, ret_said);
}

/* The one mechanism: each error of @dl from @from on refuses the item
 * @find places it in.  Returns: the number of errors within no item;
 * -ENOMEM. */
static int refuse_errors(item_finder find, void *items, const struct diag_list *dl, size_t from,
			 size_t *ret_new)
{
	int left = 0, r = 0;

	*ret_new = 0;
	for (size_t i = from; i < dl->n && r >= 0; i++) {
		const struct diag *d = &dl->v[i];
		char **what = NULL;
		bool said;

		if (d->level != DIAG_ERROR)
			continue;
		if (d->file && d->line)
			what = find(items, d, &said);
		if (!what)
			left++;
		else if ((r = refuse_add(what, d)) > 0)
			*ret_new += 1;
	}
	return r < 0 ? r : left;
}

int world_refuse_items(struct world *w, const struct diag_list *dl, size_t from, size_t *ret_new)
{
	return refuse_errors(world_item_of, w, dl, from, ret_new);
}

int world_load_settings(const char *path, struct config *c, struct diag_list *dl)
{
	size_t from = dl->n, fresh;
	int r = config_load(c, path, true, dl);

	if (r == -EINVAL)
		r = refuse_errors(config_item_of, c, dl, from, &fresh);
	return r > 0 ? -EINVAL : r;
}

int world_load_fstab(const char *path, char *const *select, struct fstab *ret, struct diag_list *dl)
{
	size_t from = dl->n, fresh;
	int r = fstab_load_all(ret, path, select, true, dl);

	if (r == -EINVAL)
		r = refuse_errors(fstab_item_of, ret, dl, from, &fresh);
	if (r > 0)
		r = -EINVAL;
	if (r < 0)
		fstab_done(ret);
	return r;
}

/* Is @d an error of a refused fstab line or area, which its step says? */
static bool said_by_step(const struct world *w, const struct diag *d)
{
	if (d->level != DIAG_ERROR || !d->file || !d->line)
		return false;
	if (w->fstab.file && streq(w->fstab.file, d->file)) {
		for (size_t i = 0; i < w->fstab.n_entries; i++)
			if (w->fstab.entries[i].line == d->line)
				return w->fstab.entries[i].refused;
		return false;
	}
	for (size_t i = 0; i < w->cfg.n_areas; i++) {
		const struct area_config *a = &w->cfg.areas[i];

		if (in_section(a->file, a->line, a->last_line, d))
			return a->refused;
	}
	return false;
}

void world_drop_said(const struct world *w, struct diag_list *dl)
{
	size_t k = 0;

	for (size_t i = 0; i < dl->n; i++) {
		if (said_by_step(w, &dl->v[i])) {
			free(dl->v[i].file);
			free(dl->v[i].msg);
			continue;
		}
		dl->v[k++] = dl->v[i];
	}
	dl->n = k;
}

void world_log_unusable(const struct logger *lg, int left)
{
	log_error(lg, "%d %s above not within one fstab line, [area] or [btrfs] section: the configuration as a whole cannot be used, so nothing is set up; `%s check` lists every problem",
		  left, left == 1 ? "error" : "errors", log_self(lg));
}

/* The errors of @dl from @from on refuse the items they point into
 * (refuse.c), so that planning goes on without them: a lenient pass
 * (start) sets up the rest; a strict one (check, --dry-run) only reports
 * every problem, the planner's too, and stops after the plan.  @ret_new:
 * items newly refused, or NULL.  Returns: 0; -EINVAL when an error lies
 * within no item (counted in @w->unusable); -ENOMEM. */
int world_refuse_new(struct world *w, const struct diag_list *dl, size_t from, size_t *ret_new)
{
	size_t fresh;
	int left = world_refuse_items(w, dl, from, &fresh);

	if (left < 0)
		return left;
	if (ret_new)
		*ret_new = fresh;
	if (left == 0)
		return 0;
	w->unusable = left;
	return -EINVAL;
}

/* plan_build() into @w->plan.  The planner's errors (a mount point spelt
 * through a link, an area over a mount point, a cycle) refuse their
 * items too (world_refuse_new()), and the plan is built again without them:
 * each round refuses one item at least, or stops.  The warnings are those
 * of the last round.  Returns: 0; -EINVAL; -ENOMEM. */
int world_build_plan(struct world *w, const struct plan_input *in, struct diag_list *dl)
{
	for (;;) {
		struct diag_list pdl = { 0 };
		size_t from = dl->n, fresh = 0;
		int r = plan_build(in, &w->plan, &pdl);

		if (r == -ENOMEM || (r == 0 && !diag_count(&pdl, DIAG_ERROR))) {
			r = r < 0 ? r : diag_move(dl, &pdl);
			diag_list_done(&pdl);
			return r;
		}
		if (r == 0)
			plan_done(&w->plan);
		r = diag_move(dl, &pdl);
		diag_list_done(&pdl);
		if (r == 0)
			r = world_refuse_new(w, dl, from, &fresh);
		if (r < 0)
			return r;
		if (fresh == 0) {
			w->unusable = 1;
			return -EINVAL;
		}
		/* the errors of an earlier round are kept; its warnings go */
		diag_drop_warnings(dl, from);
	}
}
