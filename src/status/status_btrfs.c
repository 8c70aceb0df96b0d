/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A btrfs filesystem in `status`, from the devices now (status_btrfs.h).
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "devices/btrfs_scrub.h"
#include "mount/view.h"
#include "status_btrfs.h"

/* Appends "; @a@sep@b" to @buf. */
static void append(char *buf, size_t len, const char *a, const char *sep, const char *b)
{
	size_t off = strlen(buf);

	if (off < len)
		snprintf(buf + off, len - off, "; %s%s%s", a, sep, b);
}

char *status_btrfs_reason(const struct live_input *in, const struct btrfs_fs_list *l,
			  const struct state_record *rec, char *buf, size_t len)
{
	const struct btrfs_filesystem *fs = btrfs_fs_list_find(l, rec->id);
	const char *mp = live_btrfs_mountpoint(in, rec->id);
	char facts[1024], advice[PATH_MAX * 4 + 200];
	unsigned how;

	if (!fs) {
		snprintf(buf, len, "no member of it is present now (%llu/%llu members when assembled)",
			 (unsigned long long)rec->members_present, (unsigned long long)rec->members_expected);
		return buf;
	}
	snprintf(buf, len, "%zu/%llu members", fs->n_members, (unsigned long long)fs->num_devices);
	if (btrfs_format_states(fs, facts, sizeof(facts))[0])
		append(buf, len, facts, "", "");
	how = mp ? btrfs_live_stale_how(in->sysfs_btrfs, view_mounted_ro(in->mountinfo, mp), fs) : 0;
	btrfs_stale_advice(mp, how | (rec->scrub_started_usec ? STALE_SCRUB_STARTED : 0), in->self,
			   advice, sizeof(advice));
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
