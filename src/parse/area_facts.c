/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <string.h>

#include "area_facts.h"
#include "shared/util.h"

/* One row per backend of enum area_backend (config.h). */
static const struct area_backend_facts backends[] = {
	[AREA_TMPFS] = { .name = "tmpfs", .fstype = "tmpfs", .inodes_key = "nr_inodes" },
	[AREA_ZRAM] = { .name = "zram", .inodes_key = "inodes" },
	[AREA_BRD] = { .name = "brd", .inodes_key = "inodes" },
};

const struct area_backend_facts *area_backend_facts(enum area_backend b)
{
	return (size_t)b < ARRAY_SIZE(backends) ? &backends[b] : NULL;
}

const char *config_backend_name(enum area_backend b)
{
	const struct area_backend_facts *f = area_backend_facts(b);

	return f ? f->name : "unknown";
}

int config_backend_from_name(const char *name, enum area_backend *ret)
{
	for (size_t i = 0; i < ARRAY_SIZE(backends); i++) {
		if (strcmp(name, backends[i].name) == 0) {
			*ret = (enum area_backend)i;
			return 0;
		}
	}
	return -EINVAL;
}

const char *area_fstype(const struct area_config *a)
{
	const char *own = area_backend_facts(a->backend)->fstype;

	return own ? own : a->fs;
}

bool area_is_ramdisk(const struct area_config *a)
{
	return !area_backend_facts(a->backend)->fstype;
}

/* The filesystems whose mount option "discard" frees blocks on the device
 * as files are deleted (online discard): ext3 and ext4 (fs/ext4/super.c,
 * ext3 through the ext4 driver), xfs, btrfs (discard=sync), f2fs, vfat,
 * jfs, nilfs2.  ext2 and the others take no such option: a mount with it
 * fails ("Unknown parameter"). */
static const char *const online_discard[] = {
	"ext3", "ext4", "xfs", "btrfs", "f2fs", "vfat", "jfs", "nilfs2",
};

const char *area_discard_option(const struct area_config *a)
{
	const char *fs = area_fstype(a);

	if (a->backend != AREA_ZRAM || !fs)
		return NULL;
	for (size_t i = 0; i < ARRAY_SIZE(online_discard); i++)
		if (strcmp(fs, online_discard[i]) == 0)
			return "discard";
	return NULL;
}

bool area_fstype_is_ext(const char *fstype)
{
	return fstype && strncmp(fstype, "ext", 3) == 0;
}
