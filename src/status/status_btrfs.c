/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A btrfs filesystem in `status`, from the devices now (status_btrfs.h).
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "devices/btrfs_scrub.h"
#include "status_btrfs.h"

/* Appends "; @a@sep@b" to @buf. */
static void append(char *buf, size_t len, const char *a, const char *sep, const char *b)
{
	size_t off = strlen(buf);

	if (off < len)
		snprintf(buf + off, len - off, "; %s%s%s", a, sep, b);
}

unsigned status_stale_how(const char *sysfs, struct libmnt_table *tb, const char *mp,
			const struct btrfs_filesystem *fs)
{
	unsigned how = 0;
	struct live_members lm;

	if (!mp)
		return 0;
	if (live_mounted_ro(tb, mp))
		how |= STALE_MOUNTED_RO;
	if (live_btrfs_members(sysfs, fs->fsid, &lm) < 0)
		return how;
	for (size_t k = 0; k < lm.n; k++)
		for (size_t i = 0; i < fs->n_members; i++)
			if (fs->members[i].devid == lm.v[k].devid && btrfs_member_stale(fs, &fs->members[i]) &&
			    (lm.v[k].missing || lm.v[k].unused))
				how |= STALE_MEMBER_UNUSED;
	return how;
}

char *status_btrfs_reason(const struct live_input *in, const struct btrfs_fs_list *l,
			  const struct state_record *rec, char *buf, size_t len)
{
	const struct btrfs_filesystem *fs = btrfs_fs_list_find(l, rec->id);
	const char *mp = live_btrfs_mountpoint(in, rec->id);
	char facts[1024], advice[PATH_MAX * 4 + 200];

	if (!fs) {
		snprintf(buf, len, "no member of it is present now (%llu/%llu members when assembled)",
			 (unsigned long long)rec->members_present, (unsigned long long)rec->members_expected);
		return buf;
	}
	snprintf(buf, len, "%zu/%llu members", fs->n_members, (unsigned long long)fs->num_devices);
	btrfs_stale_advice(mp, status_stale_how(in->sysfs_btrfs, in->mountinfo, mp, fs) |
				       (rec->scrub_started_usec ? STALE_SCRUB_STARTED : 0),
			   in->self, advice, sizeof(advice));
	if (btrfs_format_stale(fs, facts, sizeof(facts))[0])
		append(buf, len, facts, ": ", advice);
	/* caught up (a read-write mount wrote every superblock), not repaired
	 * until a scrub rewrote what it missed */
	else if (rec->members_note && strstr(rec->members_note, " is stale: ") &&
		 !btrfs_scrub_finished_since(in->scrub_status_dir, rec->id, rec->stale_usec))
		append(buf, len, rec->members_note, " (when assembled); its generation has caught up since: ",
		       advice);
	return buf;
}
