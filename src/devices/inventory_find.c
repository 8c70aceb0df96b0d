/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Finding devices in the inventory: by fstab spec (a path or a tag), and
 * what a device that could not be read might be.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "inventory.h"
#include "shared/util.h"

bool inventory_could_be_member(const struct unreadable_device *d, const char *fsid)
{
	if (!d->fs_type)
		return true;
	if (strcmp(d->fs_type, "btrfs") != 0)
		return false;
	if (!d->fs_uuid)
		return true;
	return strcasecmp(d->fs_uuid, fsid) == 0 && d->source != UNREADABLE_BY_MOUNTS;
}

/* ----------------------------------------------------------------- finding */

static bool str_eq(const char *a, const char *b, bool icase)
{
	if (!a || !b)
		return false;
	return icase ? strcasecmp(a, b) == 0 : strcmp(a, b) == 0;
}

static bool device_matches(const struct block_device *d, enum fsfacts_tag by, const char *v)
{
	switch (by) {
	case FSFACTS_TAG_NONE:
		return str_eq(d->devnode, v, false);
	case FSFACTS_TAG_UUID:
		return str_eq(d->uuid, v, true);
	case FSFACTS_TAG_LABEL:
		return str_eq(d->label, v, false);
	case FSFACTS_TAG_PARTUUID:
		return str_eq(d->partuuid, v, true);
	case FSFACTS_TAG_PARTLABEL:
		return str_eq(d->partlabel, v, false);
	case FSFACTS_TAG_ID:
		return strv_contains(d->ids, v);
	}
	return false;
}

/*
 * Strings only, no I/O: "/dev/disk/by-{uuid,label,partuuid,partlabel,id}/X"
 * are read as the matching tag (udev's \xNN escapes decoded); any other
 * path must equal a devnode exactly.
 */
/* @spec as (tag, value): "/dev/disk/by-*" paths as their tag, with udev's
 * escapes decoded into @buf.  Returns: false when it cannot be decoded. */
static bool spec_split(const char *spec, enum fsfacts_tag *by, const char **v, char *buf, size_t size)
{
	*v = spec;
	*by = fsfacts_tag_parse(spec, v);
	if (*by != FSFACTS_TAG_NONE)
		return true;
	*by = fsfacts_tag_from_path(spec, v);
	if (*by == FSFACTS_TAG_NONE) {
		*v = spec;
		return true;
	}
	if (!unescape_hex(*v, strlen(*v), '-', buf, size))
		return false;
	*v = buf;
	return true;
}

const struct block_device *inventory_find(const struct inventory *inv, const char *spec)
{
	enum fsfacts_tag by;
	const char *v;
	char buf[1024];

	if (!inv || !spec || !spec_split(spec, &by, &v, buf, sizeof(buf)))
		return NULL;
	for (size_t i = 0; i < inv->n_devs; i++)
		if (device_matches(&inv->devs[i], by, v))
			return &inv->devs[i];
	return NULL;
}

static bool same_btrfs(const struct block_device *a, const struct block_device *b)
{
	return a->is_btrfs && b->is_btrfs &&
	       memcmp(a->btrfs.fsid, b->btrfs.fsid, sizeof(a->btrfs.fsid)) == 0;
}

const struct block_device *inventory_find_other(const struct inventory *inv, const char *spec,
						const struct block_device *first)
{
	enum fsfacts_tag by;
	const char *v;
	char buf[1024];

	if (!inv || !spec || !first || !spec_split(spec, &by, &v, buf, sizeof(buf)))
		return NULL;
	for (size_t i = 0; i < inv->n_devs; i++) {
		const struct block_device *d = &inv->devs[i];

		if (d != first && device_matches(d, by, v) && !same_btrfs(d, first))
			return d;
	}
	return NULL;
}
