/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The planner, step 3b: stale-member = scrub.  A member that was away while
 * its btrfs filesystem was mounted degraded and written to holds old
 * blocks until a scrub rewrites them from the good copies; the scrub is a
 * step of the plan, after the mount it needs, so that --dry-run shows it
 * and the executor runs it through its operations table.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan_internal.h"
#include "shared/util.h"

/* "stale member devid 2", "stale members devid 2, 3": owned, NULL on ENOMEM. */
static char *stale_note(const struct btrfs_filesystem *fs)
{
	char *note = NULL;
	size_t size = 0, n = 0;
	FILE *f = open_memstream(&note, &size);

	if (!f)
		return NULL;
	for (size_t i = 0; i < fs->n_members; i++)
		n += btrfs_member_stale(fs, &fs->members[i]);
	fprintf(f, "stale member%s devid", n > 1 ? "s" : "");
	for (size_t i = 0, k = 0; i < fs->n_members; i++)
		if (btrfs_member_stale(fs, &fs->members[i]))
			fprintf(f, "%s %" PRIu64, k++ ? "," : "", fs->members[i].devid);
	if (fclose(f) != 0) {
		free(note);
		return NULL;
	}
	return note;
}

int plan__add_scrub(struct builder *b, size_t mount, const struct btrfs_filesystem *fs)
{
	const struct btrfs_member *stale = btrfs_first_stale(fs);
	const struct fstab_entry *e = b->steps[mount].entry;
	struct plan_step *s;
	struct btrfs_fs_policy pol;
	size_t idx;
	int r;

	config_btrfs_policy(b->in->config, fs->fsid, fs->label, &pol);
	if (pol.stale_member != STALE_MEMBER_SCRUB || !stale || b->steps[mount].done ||
	    b->steps[mount].conflict)
		return 0;
	/* one scrub reads the whole filesystem: a second mount of it (another
	 * subvolume) adds none */
	for (size_t i = 0; i < b->n_steps; i++)
		if (b->steps[i].kind == PLAN_SCRUB && streq(b->steps[i].fsid, fs->fsid))
			return 0;
	r = plan__builder_add_step(b, PLAN_SCRUB, &idx);
	if (r < 0)
		return r;
	s = &b->steps[idx];
	memcpy(s->fsid, fs->fsid, sizeof(s->fsid));
	s->devid = stale->devid;
	s->entry = e;
	s->note = stale_note(fs);
	if (!s->note)
		return -ENOMEM;
	return plan__builder_add_edge(b, idx, mount, EDGE_MOUNTED, "%s mounted", e->target);
}
