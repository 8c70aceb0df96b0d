/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * stale-member = scrub (see btrfs_scrub.h).  A member that was away while
 * its filesystem was mounted degraded and written to holds old blocks; btrfs
 * reads them only when the good copy fails its checksum (or picks the stale
 * copy and repairs it by checksum), so nothing is lost, but the redundancy
 * is not back until a scrub rewrote them.  The scrub is btrfs-progs' own
 * ("btrfs scrub start" forks the scrub into the background): storaged does
 * not wait for it, it can take hours.
 */
#include <errno.h>
#include <string.h>
#include <sys/wait.h>

#include "btrfs_scrub.h"
#include "shared/spawn_helper.h"

static bool fs_has_stale(const struct btrfs_filesystem *fs)
{
	for (size_t i = 0; fs && i < fs->n_members; i++)
		if (btrfs_member_stale(fs, &fs->members[i]))
			return true;
	return false;
}

/* The btrfs filesystem an entry mounts, as the planner found it. */
static const struct btrfs_filesystem *entry_fs(const struct world *w, const struct fstab_entry *e)
{
	const struct block_device *d;

	if (strncmp(e->source, "UUID=", 5) == 0 && btrfs_fs_list_find(&w->btrfs, e->source + 5))
		return btrfs_fs_list_find(&w->btrfs, e->source + 5);
	d = inventory_find(&w->inv, e->source);
	return d && d->is_btrfs ? btrfs_fs_list_find(&w->btrfs, d->btrfs.fsid_str) : NULL;
}

int btrfs_scrub_targets(const struct world *w, struct state *st, char ***ret)
{
	*ret = NULL;
	for (size_t i = 0; i < w->plan.n_steps; i++) {
		const struct plan_step *s = &w->plan.steps[i];
		const struct state_record *rec;
		const char *where;

		if (s->kind != PLAN_MOUNT || s->done || s->conflict || !s->is_btrfs ||
		    !fs_has_stale(entry_fs(w, s->entry)))
			continue;
		rec = state_find(st, STATE_MOUNT, s->entry->target);
		if (!rec || rec->status != STATE_DONE)
			continue;
		where = rec->mountpoint ? rec->mountpoint : s->entry->target;
		if (!strv_contains(*ret, where) && strv_extend(ret, where) < 0) {
			strv_free(*ret);
			*ret = NULL;
			return -ENOMEM;
		}
	}
	return 0;
}

int btrfs_scrub_start(char **mountpoints, const struct logger *lg)
{
	char prog[256];
	int first = 0;

	for (size_t i = 0; mountpoints && mountpoints[i]; i++) {
		char *argv[] = { "btrfs", "scrub", "start", mountpoints[i], NULL };
		int r, status = 0;
		pid_t pid;

		r = spawn_find_program("btrfs", prog, sizeof(prog));
		r = r ?: spawn_start(prog, argv, NULL, 0, SPAWN_RESET_SIGNALS, &pid);
		r = r ?: spawn_wait(pid, &status);
		if (r == 0 && !(WIFEXITED(status) && WEXITSTATUS(status) == 0))
			r = -EIO;
		if (r < 0) {
			log_warning(lg, "%s: cannot start a scrub (stale-member = scrub): %s; run `btrfs scrub start %s`",
				    mountpoints[i],
				    r == -EIO ? "btrfs scrub start failed" : strerror(-r),
				    mountpoints[i]);
			first = first ?: r;
			continue;
		}
		log_warning(lg, "%s: a member was stale: scrub started (stale-member = scrub); `btrfs scrub status %s` shows its progress",
			    mountpoints[i], mountpoints[i]);
	}
	return first;
}
