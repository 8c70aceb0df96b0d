/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The planner's steps 1-3 (plan_build.c runs them): the MOUNT step of
 * each deferred entry, the device steps it waits for, and the AREA step
 * of each configured area.
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

/* ------------------------------------------------------------ step 1: mounts */

int plan__add_mount_step(struct builder *b, size_t i)
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
int plan__add_device_steps(struct builder *b, size_t i)
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
	if (asprintf(&b->steps[idx].note, "path '%s': %s%s (%s:%u)", a->path,
		     link ? "it, or a directory above it, is a symbolic link or not a directory (an area's path follows no link)"
			  : strerror(-error),
		     link ? "; give the real directory's path in path=" : "; create the directory or correct path=",
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

/* An area start finds set up already: it leaves it as it is (area_setup()
 * returns 1), as a mount already there; or one whose bind over the
 * directory is gone, which it refuses.  Returns: 0 or -ENOMEM. */
static int add_recorded_area_step(struct builder *b, size_t i)
{
	const struct plan_area_record *rec = &b->in->area_records[i];
	size_t idx;
	int r = plan__builder_add_step(b, PLAN_AREA, &idx);

	if (r < 0)
		return r;
	b->steps[idx].area = &b->in->config->areas[i];
	b->steps[idx].done = rec->done != NULL;
	b->steps[idx].conflict = rec->done == NULL;
	b->steps[idx].sizing_deferred = true; /* not sized: nothing is made */
	b->area_step[i] = idx;
	return (b->steps[idx].note = strdup(rec->done ?: rec->fails)) ? 0 : -ENOMEM;
}

int plan__add_area_step(struct builder *b, size_t i)
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
	if (b->in->area_records && (b->in->area_records[i].done || b->in->area_records[i].fails))
		return add_recorded_area_step(b, i);
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
