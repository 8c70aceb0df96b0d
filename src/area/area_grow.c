/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Growing tmpfs areas (grow = yes): the ceilings `status` and the resident
 * share, and the remount that raises the limits (area.h).  When and how
 * far an area grows is plan/area_grow.c's to say.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/magic.h>
#include <linux/mount.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "area_internal.h"
#include "plan/area_grow.h"
#include "shared/util.h"

static const struct area_config *config_area(const struct config *c, const char *name)
{
	for (size_t i = 0; i < c->n_areas; i++)
		if (streq(c->areas[i].name, name))
			return &c->areas[i];
	return NULL;
}

static struct grow_sample sample_of(const struct area_status *a)
{
	return (struct grow_sample){ .size = a->size_bytes,
				     .used = a->used_bytes,
				     .inodes = a->inodes_total,
				     .inodes_used = a->inodes_used };
}

void area_grow_budget(const struct area_status *v, size_t n, size_t i, uint64_t available,
		      uint64_t reserve, struct grow_budget *ret)
{
	*ret = (struct grow_budget){ .available = available, .reserve = reserve };
	for (size_t k = 0; k < n; k++) {
		struct grow_sample s = sample_of(&v[k]);
		uint64_t u = area_grow_unfilled(&s);

		if (k != i && v[k].grow)
			ret->others = ret->others > UINT64_MAX - u ? UINT64_MAX : ret->others + u;
	}
}

void area_grow_fill(struct area_status *v, size_t n, const struct config *c, uint64_t available, uint64_t total)
{
	uint64_t reserve = config_memory_reserve(c, total);

	for (size_t i = 0; i < n; i++) {
		const struct area_config *a = config_area(c, v[i].name);

		v[i].grow = a && !a->refused && a->grow && v[i].measured &&
			    v[i].state == AREA_STATE_ACTIVE && v[i].backend &&
			    streq(v[i].backend, "tmpfs");
	}
	for (size_t i = 0; i < n; i++) {
		struct grow_budget b;
		struct grow_sample s = sample_of(&v[i]);
		struct grow_step g;

		if (!v[i].grow)
			continue;
		area_grow_budget(v, n, i, available, reserve, &b);
		area_grow_decide(NULL, &s, &b, &g);
		v[i].ceiling_bytes = g.ceiling_size;
		v[i].ceiling_inodes = g.ceiling_inodes;
	}
}

/* Is @fd the root of a tmpfs mount of @dev (0: any)? */
static bool is_tmpfs_root(int fd, dev_t dev)
{
	struct statx stx;
	struct statfs sf;

	if (statx(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, STATX_INO, &stx) < 0 ||
	    !(stx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) ||
	    !(stx.stx_attributes & STATX_ATTR_MOUNT_ROOT))
		return false;
	if (dev && makedev(stx.stx_dev_major, stx.stx_dev_minor) != dev)
		return false;
	return fstatfs(fd, &sf) == 0 && sf.f_type == TMPFS_MAGIC;
}

static int set_u64(int fd, const char *key, uint64_t v)
{
	char s[32];

	snprintf(s, sizeof(s), "%" PRIu64, v);
	return syscall(SYS_fsconfig, fd, FSCONFIG_SET_STRING, key, s, 0) < 0 ? -errno : 0;
}

int area_grow_remount(const char *area_dir, dev_t dev, uint64_t size, uint64_t inodes)
{
	_cleanup_close_ int dfd = area_open_nofollow(area_dir, O_PATH | O_DIRECTORY);
	_cleanup_close_ int fs = -EBADF;
	int r;

	if (dfd < 0)
		return dfd;
	if (!is_tmpfs_root(dfd, dev))
		return -ESTALE;
	fs = (int)syscall(SYS_fspick, dfd, "", FSPICK_EMPTY_PATH | FSPICK_CLOEXEC | FSPICK_NO_AUTOMOUNT);
	if (fs < 0)
		return -errno;
	r = set_u64(fs, "size", size);
	if (r == 0)
		r = set_u64(fs, "nr_inodes", inodes);
	if (r == 0 && syscall(SYS_fsconfig, fs, FSCONFIG_CMD_RECONFIGURE, NULL, NULL, 0) < 0)
		r = -errno;
	return r;
}
