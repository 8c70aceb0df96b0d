/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The planner: a pure function from (config, deferred fstab entries, device
 * inventory, mount table, area surveys) to a list of steps with dependency
 * edges, in an order that respects every edge.  No I/O, no printing: problems
 * go to the diag list, the caller decides what to print.
 *
 * plan_build() runs these steps (4 is plan_edges.c, 5 plan_order.c):
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
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <string.h>

#include "parse/fsfacts.h"
#include "plan.h"
#include "plan_identity.h"
#include "plan_internal.h"
#include "shared/units.h"
#include "shared/optstr.h"

/* ------------------------------------------------------------ small helpers */

const char *plan_fsid_short(const char *fsid, char *buf, size_t len)
{
	snprintf(buf, len, "%.8s…", fsid);
	return buf;
}

/* The [btrfs] policy of @fs, or, before any member is seen, of the
 * filesystem a btrfs entry's "UUID=" or "LABEL=" names. */
static void entry_btrfs_policy(const struct plan_input *in, const struct fstab_entry *e,
			       const struct btrfs_filesystem *fs, struct btrfs_fs_policy *ret)
{
	const char *fsid = NULL, *label = NULL;

	if (fs) {
		fsid = fs->fsid;
		label = fs->label;
	} else if (streq(e->fstype, "btrfs") && has_prefix(e->source, "UUID=")) {
		fsid = e->source + strlen("UUID=");
	} else if (streq(e->fstype, "btrfs") && has_prefix(e->source, "LABEL=")) {
		label = e->source + strlen("LABEL=");
	}
	config_btrfs_policy(in->config, fsid, label, ret);
}

/* The entry's own x-storaged.device-timeout=, else its filesystem's. */
static uint64_t entry_fs_device_timeout(const struct fstab_entry *e, const struct btrfs_fs_policy *pol)
{
	return e->device_timeout_usec != USEC_UNSET ? e->device_timeout_usec : pol->device_timeout_usec;
}

/* What a mount does when its btrfs set stays incomplete: the entry's own
 * consent (x-storaged.degraded) first, else its filesystem's policy. */
static void set_degraded_policy(struct plan_step *s, const struct fstab_entry *e,
				const struct btrfs_fs_policy *pol, const struct config *c)
{
	s->degraded_allowed = e->degraded_ok || pol->degraded != DEGRADED_NO;
	s->degraded_read_only = !e->degraded_ok && pol->degraded == DEGRADED_READ_ONLY;
	s->policy_file = pol->section && pol->section->degraded_set ? pol->section->file : config_file_name(c);
}

static uint64_t entry_mount_timeout(const struct plan_input *in, const struct fstab_entry *e)
{
	return e->mount_timeout_usec != USEC_UNSET ? e->mount_timeout_usec : in->config->mount_timeout_usec;
}

/* Is what is mounted (@fs) the entry's filesystem?  Only what can be told
 * without I/O: the type (a prefix, so that "nfs" matches "nfs4") and, for
 * devices storaged probed, the device or the btrfs filesystem. */
static bool mounted_matches(const struct plan_input *in, const struct fstab_entry *e, struct libmnt_fs *fs)
{
	const char *type = mnt_fs_get_fstype(fs), *src = mnt_fs_get_srcpath(fs);
	const struct block_device *want, *have;

	if (e->bind || e->loop)
		return true; /* the source is a path: nothing cheap to compare */
	if (!streq(e->fstype, "auto") && type && strncmp(type, e->fstype, strlen(e->fstype)) != 0)
		return false;
	want = inventory_find(in->inventory, e->source);
	have = src ? inventory_find(in->inventory, src) : NULL;
	/* no device (tmpfs, a server's export): the source names it */
	if (!want && fs_spec_is_name(e->source))
		return streq(mnt_fs_get_source(fs), e->source);
	if (!want || !have || want == have)
		return true;
	return want->is_btrfs && have->is_btrfs && streq(want->btrfs.fsid_str, have->btrfs.fsid_str);
}

/* An x-systemd.automount line is systemd's once its autofs sits on the
 * mount point: the first access mounts it (a line another tool owns);
 * without systemd there is no autofs and storaged mounts it. */
static bool automount_serves(const struct fstab_entry *e, const char *type)
{
	return streq(type, "autofs") && optstr_get(e->options, "x-systemd.automount", NULL, NULL);
}

/* The entry's mount point is taken: by its own filesystem (done) or by
 * something else (a conflict the executor reports). */
static int mount_point_taken(const struct plan_input *in, const struct fstab_entry *e,
			     struct libmnt_fs *fs, struct plan_step *s)
{
	const char *src = mnt_fs_get_source(fs), *type = mnt_fs_get_fstype(fs);

	if (mounted_matches(in, e, fs)) {
		s->done = true;
		s->note = strdup("already mounted");
	} else if (automount_serves(e, type)) {
		s->done = true;
		s->note = strdup("systemd's automount point (x-systemd.automount) mounts it on first access");
	} else {
		s->conflict = true;
		if (asprintf(&s->note, "something else is mounted on %s: %s (%s); storaged does not mount over it: unmount it or correct the fstab entry",
			     e->target, src ? src : "?", type ? type : "?") < 0)
			s->note = NULL;
	}
	return s->note ? 0 : -ENOMEM;
}

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

/* ------------------------------------------------------------ step 1: mounts */

static int add_mount_step(struct builder *b, size_t i)
{
	const struct fstab_entry *e = plan__builder_entry(b, i);
	const struct entry_facts *f = plan__builder_facts(b, i);
	struct libmnt_fs *fs;
	struct plan_step *s;
	size_t idx;
	int r;

	r = plan__builder_add_step(b, PLAN_MOUNT, &idx);
	if (r < 0)
		return r;
	s = &b->steps[idx];
	s->entry = e;
	s->facts = f;
	s->mount_timeout_usec = entry_mount_timeout(b->in, e);
	s->degraded_allowed = b->in->config->degraded != DEGRADED_NO || e->degraded_ok;
	s->degraded_read_only = !e->degraded_ok && b->in->config->degraded == DEGRADED_READ_ONLY;
	s->policy_file = config_file_name(b->in->config);
	s->is_btrfs = streq(e->fstype, "btrfs");
	b->entry_step[i] = idx;
	/* a line the boot refuses fails alone, whatever is mounted there:
	 * on a duplicate's mount point, the first line's mount */
	if (e->refused) {
		s->conflict = true;
		return (s->note = strdup(e->refused)) ? 0 : -ENOMEM;
	}
	/* no canonicalisation, which could touch the filesystem (the table
	 * has no cache): the loader resolved links into target_real */
	fs = b->in->mountinfo ? mnt_table_find_target(b->in->mountinfo, f->target_real ?: e->target,
						      MNT_ITER_BACKWARD) : NULL;
	if (fs && (r = mount_point_taken(b->in, e, fs, s)) < 0)
		return r;
	if (f->refused && !s->done) {
		s->conflict = true;
		free(s->note);
		if (!(s->note = strdup(f->refused)))
			return -ENOMEM;
	}
	return 0;
}

/* ------------------------------------------------------------ step 2: devices */

static int add_register_step(struct builder *b, const struct btrfs_filesystem *fs,
			     const struct btrfs_member *m, size_t *ret)
{
	struct plan_step *s;
	int r;

	r = plan__builder_add_step(b, PLAN_REGISTER, ret);
	if (r < 0)
		return r;
	s = &b->steps[*ret];
	memcpy(s->fsid, fs->fsid, sizeof(s->fsid));
	s->devid = m->devid;
	s->num_devices = fs->num_devices;
	s->n_present = fs->n_members;
	return (s->devnode = strdup(m->dev->devnode)) ? 0 : -ENOMEM;
}

/* The longest wait asked for a step: its timeout, and the quiet period
 * of the filesystem's policy. */
static void raise_wait(struct plan_step *s, uint64_t timeout, const struct btrfs_fs_policy *pol)
{
	if (timeout > s->timeout_usec)
		s->timeout_usec = timeout;
	if (pol && pol->settle_usec > s->settle_usec)
		s->settle_usec = pol->settle_usec;
	if (pol && pol->settle_usec && pol->settle_limit_usec > s->settle_limit_usec)
		s->settle_limit_usec = pol->settle_limit_usec;
}

static int fill_assemble_step(struct plan_step *s, const struct btrfs_filesystem *fs, uint64_t timeout,
			      const struct btrfs_fs_policy *pol)
{
	char missing[256];

	memcpy(s->fsid, fs->fsid, sizeof(s->fsid));
	s->num_devices = fs->num_devices;
	s->n_present = fs->n_members;
	s->members = true;
	raise_wait(s, timeout, pol);
	if (fs->label && !(s->label = strdup(fs->label)))
		return -ENOMEM;
	if (btrfs_filesystem_complete(fs))
		return 0;
	btrfs_format_missing(fs, missing, sizeof(missing));
	return (s->missing = strdup(missing)) ? 0 : -ENOMEM;
}

/* The ASSEMBLE step of @fs, created with one REGISTER step per present
 * member on first use; later users only raise its timeout. */
static int ensure_assemble(struct builder *b, const struct btrfs_filesystem *fs, uint64_t timeout,
			   const struct btrfs_fs_policy *pol, size_t *ret)
{
	size_t idx, reg;
	int r;

	for (size_t i = 0; i < b->n_steps; i++) {
		struct plan_step *s = &b->steps[i];

		if (s->kind == PLAN_ASSEMBLE && streq(s->fsid, fs->fsid)) {
			raise_wait(s, timeout, pol);
			*ret = i;
			return 0;
		}
	}
	for (size_t m = 0; m < fs->n_members; m++) {
		r = add_register_step(b, fs, &fs->members[m], &reg);
		if (r < 0)
			return r;
	}
	r = plan__builder_add_step(b, PLAN_ASSEMBLE, &idx);
	if (r < 0)
		return r;
	r = fill_assemble_step(&b->steps[idx], fs, timeout, pol);
	for (size_t m = 0; r >= 0 && m < fs->n_members; m++)
		r = plan__builder_add_edge(b, idx, idx - fs->n_members + m, EDGE_MEMBER,
				     "member devid %" PRIu64, fs->members[m].devid);
	*ret = idx;
	return r;
}

static bool device_is_btrfs(const struct block_device *d)
{
	return d->is_btrfs || streq(d->type, "btrfs");
}

/* The btrfs filesystem @e mounts, found without I/O, or NULL. */
static const struct btrfs_filesystem *entry_btrfs(const struct builder *b, const struct fstab_entry *e,
						  const struct block_device *dev)
{
	bool btrfs = streq(e->fstype, "btrfs");
	bool maybe = btrfs || streq(e->fstype, "auto");

	if (!b->in->btrfs)
		return NULL;
	if (btrfs && has_prefix(e->source, "UUID="))
		return btrfs_fs_list_find(b->in->btrfs, e->source + strlen("UUID="));
	if (maybe && dev && device_is_btrfs(dev) && dev->uuid)
		return btrfs_fs_list_find(b->in->btrfs, dev->uuid);
	return NULL;
}

static int edge_to_assemble(struct builder *b, size_t from, const struct btrfs_filesystem *fs, uint64_t timeout,
			    const struct btrfs_fs_policy *pol)
{
	char sh[16];
	size_t idx;
	int r;

	r = ensure_assemble(b, fs, timeout, pol, &idx);
	if (r < 0)
		return r;
	return plan__builder_add_edge(b, from, idx, EDGE_DEVICE, "btrfs %s ready, %zu/%" PRIu64 " members",
				plan_fsid_short(fs->fsid, sh, sizeof(sh)), fs->n_members, fs->num_devices);
}

/* Rule 3: a device entry waits for its btrfs filesystem or its device. */
static int add_device_steps(struct builder *b, size_t i)
{
	const struct fstab_entry *e = plan__builder_entry(b, i);
	const struct block_device *dev = NULL;
	const struct btrfs_filesystem *fs;
	struct btrfs_fs_policy pol;
	uint64_t timeout;
	size_t from = b->entry_step[i], idx;
	int r;

	if (b->steps[from].done || e->refused || !plan__entry_needs_device(e))
		return 0;
	if (b->in->inventory)
		dev = inventory_find(b->in->inventory, e->source);
	fs = entry_btrfs(b, e, dev);
	entry_btrfs_policy(b->in, e, fs, &pol);
	if (pol.section && pol.section->refused)
		return plan__refused_section(&b->steps[from], pol.section);
	timeout = entry_fs_device_timeout(e, &pol);
	set_degraded_policy(&b->steps[from], e, &pol, b->in->config);
	r = plan_identity_check(b->in, e, dev, fs, &b->steps[from]);
	if (r != 0)
		return r < 0 ? r : 0;
	if (fs) {
		b->steps[from].is_btrfs = true;
		r = edge_to_assemble(b, from, fs, timeout, &pol);
		return r < 0 ? r : plan__add_scrub(b, from, fs);
	}
	if (dev)
		return 0;
	r = plan__ensure_wait(b, e->source, timeout, &idx);
	if (r < 0)
		return r;
	/* the device, once there, may be the first member of a btrfs set */
	if (streq(e->fstype, "btrfs")) {
		b->steps[idx].members = true;
		raise_wait(&b->steps[idx], timeout, &pol);
	}
	return plan__builder_add_edge(b, from, idx, EDGE_DEVICE, "%s present", e->source);
}

/* ------------------------------------------------------------ step 3: areas */

static int add_deferred_area_step(struct builder *b, size_t i)
{
	size_t idx;
	int r = plan__builder_add_step(b, PLAN_AREA, &idx);

	if (r < 0)
		return r;
	b->steps[idx].area = &b->in->config->areas[i];
	b->steps[idx].sizing_deferred = true;
	b->area_step[i] = idx;
	return 0;
}

/* The area's directory cannot be used (missing, not a directory, a link):
 * that area's step fails and what waits on it is skipped, but the rest of
 * the pass runs.  The directory is often the user's (~/rpmbuild): were it
 * a configuration error, any user could stop the whole boot pass by
 * renaming it. */
static int add_unusable_area_step(struct builder *b, size_t i, int error)
{
	const struct area_config *a = &b->in->config->areas[i];
	bool link = error == -ENOTDIR || error == -ELOOP;
	size_t idx;
	int r = plan__builder_add_step(b, PLAN_AREA, &idx);

	if (r < 0)
		return r;
	b->steps[idx].area = a;
	b->steps[idx].conflict = true;
	if (asprintf(&b->steps[idx].note, "path '%s': %s; create the directory or correct path= (%s:%u)", a->path,
		     link ? "not a directory, or a symbolic link (not followed in an area's path)"
			  : strerror(-error),
		     a->file ? a->file : b->in->config->file, a->path_line ? a->path_line : a->line) < 0) {
		b->steps[idx].note = NULL;
		return -ENOMEM;
	}
	b->area_step[i] = idx;
	return 0;
}

/* An area over storaged's state directory (or over a directory that holds
 * it) would bind its tmpfs over the records and private mounts it is set
 * up from: stop could no longer find them, and the area's data would be
 * lost.  One inside it is among storaged's own files.  A configuration
 * error, reported on the area's path line.  Returns: 0 or -ENOMEM. */
static int area_on_state_dir(struct builder *b, const struct area_config *a)
{
	const char *sd = b->in->state_dir, *how;

	if (!sd)
		return 0;
	if (streq(a->path, sd))
		how = "is";
	else if (path_is_below(sd, a->path))
		how = "holds";
	else if (path_is_below(a->path, sd))
		how = "lies inside";
	else
		return 0;
	return diag_error(b->diags, a->file ? a->file : b->in->config->file, a->path_line ? a->path_line : a->line,
			  "area '%s': path '%s' %s storaged's state directory '%s': the area would cover the records and mounts storaged keeps there, and its data could not be synced back; put the area elsewhere, or give storaged another --state-dir (the default is /run/storaged)",
			  a->name, a->path, how, sd);
}

static int add_area_step(struct builder *b, size_t i)
{
	const struct area_config *a = &b->in->config->areas[i];
	const struct area_survey *sv = b->in->surveys ? &b->in->surveys[i] : NULL;
	struct area_sizing sizing = { 0 };
	struct plan_step *s;
	size_t idx, holder;
	int r;

	if (a->refused)
		return plan__add_refused_area_step(b, i);
	if ((r = area_on_state_dir(b, a)) < 0)
		return r;
	/* On a filesystem that is not mounted yet, the directory (if any)
	 * is the bare one underneath: size the area when it runs. */
	holder = plan__deepest_entry_above(b, a->path, true, NONE);
	if (holder != NONE && !b->steps[b->entry_step[holder]].done)
		return add_deferred_area_step(b, i);
	if (sv && !sv->valid)
		return add_unusable_area_step(b, i, sv->error);
	r = area_size_resolve(a, sv, b->in->ram_bytes, &sizing);
	if (r < 0)
		return diag_error(b->diags, a->file ? a->file : b->in->config->file, a->line,
				  "area '%s': cannot size it (%s)", a->name, strerror(-r));
	r = plan__builder_add_step(b, PLAN_AREA, &idx);
	if (r < 0)
		return r;
	s = &b->steps[idx];
	s->area = a;
	s->sizing = sizing;
	/* Never "done" because something is mounted on the path: it may be
	 * the directory's own volume.  area_setup() knows its area by
	 * the mount ID it recorded, and does nothing for an active one. */
	b->area_step[i] = idx;
	return 0;
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
		r = add_mount_step(b, i);
	for (size_t i = 0; r >= 0 && i < ne; i++)
		r = add_device_steps(b, i);
	for (size_t i = 0; r >= 0 && i < b->in->config->n_areas; i++)
		r = add_area_step(b, i);
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
