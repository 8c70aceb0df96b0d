/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Device identity in the plan (see plan_identity.h).  Called by plan.c for
 * each entry that needs a device, after the device and its btrfs filesystem
 * were looked up in the inventory; strings only, no I/O.  At the end, what
 * the plan needs of the device inventory at all (plan_needs_devices(),
 * plan_devices_by_fsid_only()), which the loader asks before it scans.
 *
 * Why refuse rather than pick: after a disk is cloned, both copies carry
 * the same tags (and for btrfs the same fsid and devid).  The kernel keeps
 * whichever btrfs member it was told about last and udev's by-* links
 * point at whichever device was probed last, so which copy is mounted
 * would depend on probe order.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "parse/fsfacts.h"
#include "plan_identity.h"
#include "plan_internal.h"

static int conflict(struct plan_step *s, char *note)
{
	if (!note)
		return -ENOMEM;
	free(s->note);
	s->note = note;
	s->conflict = true;
	return 1;
}

/* The tag's name for the message ("LABEL"), from the spec itself. */
static const char *tag_name(const char *spec)
{
	static const char *const names[] = {
		[FSFACTS_TAG_UUID] = "UUID",
		[FSFACTS_TAG_LABEL] = "LABEL",
		[FSFACTS_TAG_PARTUUID] = "PARTUUID",
		[FSFACTS_TAG_PARTLABEL] = "PARTLABEL",
		[FSFACTS_TAG_ID] = "ID",
	};
	enum fsfacts_tag t = fsfacts_tag_parse(spec, NULL);

	if (t == FSFACTS_TAG_NONE)
		t = fsfacts_tag_from_path(spec, NULL);
	return t == FSFACTS_TAG_NONE ? "tag" : names[t];
}

static bool spec_is_tag(const char *spec)
{
	return fsfacts_tag_parse(spec, NULL) != FSFACTS_TAG_NONE ||
	       fsfacts_tag_from_path(spec, NULL) != FSFACTS_TAG_NONE;
}

static int duplicate_tag(const struct fstab_entry *e, const struct block_device *a,
			 const struct block_device *b, struct plan_step *s)
{
	char *note;

	if (asprintf(&note, "'%s' names two devices, '%s' (%s) and '%s' (%s): a cloned disk? storaged mounts neither: detach the copy that does not belong, give it a new %s, or name the device in the fstab entry otherwise",
		     e->source, a->devnode, a->type ? a->type : "no filesystem", b->devnode,
		     b->type ? b->type : "no filesystem", tag_name(e->source)) < 0)
		note = NULL;
	return conflict(s, note);
}

static int refuse_stale(const struct btrfs_filesystem *fs, struct plan_step *s)
{
	char stale[1024], *note;

	btrfs_format_stale(fs, stale, sizeof(stale));
	if (asprintf(&note, "btrfs %s: %s; not mounting (stale-member = refuse): mount it by hand and scrub it, or set stale-member = scrub",
		     fs->fsid, stale) < 0)
		note = NULL;
	/* the executor records the decision for the filesystem */
	s->stale_refused = true;
	memcpy(s->fsid, fs->fsid, sizeof(s->fsid));
	s->num_devices = fs->num_devices;
	s->n_present = fs->n_members;
	return conflict(s, note);
}

/* stale-member = of @fs: its [btrfs] section's, else [storaged]'s. */
static enum stale_member_policy fs_stale_policy(const struct config *c, const struct btrfs_filesystem *fs)
{
	struct btrfs_fs_policy pol;

	config_btrfs_policy(c, fs->fsid, fs->label, &pol);
	return pol.stale_member;
}

int plan_identity_check(const struct plan_input *in, const struct fstab_entry *e,
			const struct block_device *dev, const struct btrfs_filesystem *fs,
			struct plan_step *s)
{
	const struct block_device *other = NULL;
	const char *node = NULL;
	char clones[1024];

	if (dev && spec_is_tag(e->source))
		other = inventory_find_other(in->inventory, e->source, dev);
	if (other)
		return duplicate_tag(e, dev, other, s);
	if (fs && btrfs_fs_ambiguous(fs))
		return conflict(s, strdup(btrfs_format_clones(fs, clones, sizeof(clones))));
	if (fs && btrfs_first_stale(fs) && fs_stale_policy(in->config, fs) == STALE_MEMBER_REFUSE)
		return refuse_stale(fs, s);
	if (e->bind || e->loop || !spec_is_tag(e->source))
		return 0;
	if (fs && fs->n_members)
		node = fs->members[0].dev->devnode;
	else if (dev && !fs)
		node = dev->devnode;
	if (!node)
		return 0;
	free(s->devnode);
	s->devnode = strdup(node);
	return s->devnode ? 0 : -ENOMEM;
}

/* ---------------------------------------- what the plan needs of the devices */

bool plan__entry_needs_device(const struct fstab_entry *e)
{
	if (e->bind || e->loop || fsfacts_is_nodev(e->fstype))
		return false;
	return fsfacts_spec_is_device(e->source);
}

/* True when some deferred entry needs the block device inventory: a device
 * source (tag or /dev/ path, not a bind, loop or nodev type) or a
 * requires= naming a device.  Without one, storaged need not scan. */
bool plan_needs_devices(const struct fstab *fstab)
{
	for (size_t i = 0; fstab && i < fstab->n_entries; i++) {
		const struct fstab_entry *e = &fstab->entries[i];

		if (plan__entry_needs_device(e))
			return true;
		for (size_t k = 0; k < e->n_requires; k++)
			if (fsfacts_spec_is_device(e->requires[k].value))
				return true;
	}
	return false;
}

bool plan_devices_by_fsid_only(const struct fstab *fstab)
{
	for (size_t i = 0; fstab && i < fstab->n_entries; i++) {
		const struct fstab_entry *e = &fstab->entries[i];

		if (plan__entry_needs_device(e) && !(streq(e->fstype, "btrfs") && has_prefix(e->source, "UUID=")))
			return false;
		for (size_t k = 0; k < e->n_requires; k++)
			if (fsfacts_spec_is_device(e->requires[k].value))
				return false;
	}
	return true;
}
