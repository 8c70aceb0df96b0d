/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Late members (late_member.h): 1. find the btrfs filesystems mounted
 * degraded by policy; 2. register each member present that the kernel
 * reports missing; 3. read back what the kernel made of it; 4. record and
 * say it, with the command that completes the repair.
 */
#include <stdio.h>
#include <string.h>

#include "late_member.h"
#include "devices/btrfs_live.h"

/* Where @fsid is mounted degraded by storaged (a mount record whose
 * source the inventory resolves to a member of it), or NULL. */
static const char *degraded_mount_of(const struct state *st, const struct inventory *inv, const char *fsid)
{
	for (size_t i = 0; i < st->n; i++) {
		const struct state_record *r = &st->v[i];
		const struct block_device *d;

		if (r->kind != STATE_MOUNT || r->status != STATE_DEGRADED || !r->source)
			continue;
		d = inventory_find(inv, r->source);
		if (d && d->is_btrfs && strcasecmp(d->btrfs.fsid_str, fsid) == 0)
			return r->mountpoint ? r->mountpoint : r->id;
	}
	return NULL;
}

static const struct btrfs_live_devid *live_devid_of(const struct btrfs_live_members *lm, uint64_t devid)
{
	for (size_t k = 0; k < lm->n; k++)
		if (lm->v[k].devid == devid)
			return &lm->v[k];
	return NULL;
}

/* Step 3 and 4 for member @m of @r's filesystem, just registered (@by:
 * who registered it). */
static void tell(struct state *st, struct state_record *r, const struct btrfs_member *m, const char *sysfs,
		 const char *mp, const char *by, const struct logger *lg)
{
	const struct btrfs_live_devid *now = NULL;
	struct btrfs_live_members lm;
	char what[256], fix[4096];

	if (btrfs_live_members(sysfs, r->id, &lm) < 0 || !(now = live_devid_of(&lm, m->devid)))
		snprintf(what, sizeof(what), "the filesystem is not mounted any more");
	else if (now->missing)
		snprintf(what, sizeof(what), "the kernel still reports it missing");
	else if (now->unused)
		snprintf(what, sizeof(what),
			 "the kernel no longer counts it missing but does not use it while the filesystem is mounted");
	else
		snprintf(what, sizeof(what), "the kernel uses it");
	if (now && now->unused && r->decision == DECISION_READ_ONLY)
		snprintf(fix, sizeof(fix), "to complete the repair: umount %s && %s start (read-only: it missed no write)",
			 mp, log_self(lg));
	else if (now && now->unused)
		snprintf(fix, sizeof(fix),
			 "to complete the repair: umount %s && %s start, then btrfs scrub start %s for the writes it missed (stale-member = scrub starts it)",
			 mp, log_self(lg), mp);
	else
		fix[0] = '\0';
	log_warning(lg, "btrfs %s: devid %llu (%s) came back after the degraded mount on %s: registered%s; %s%s%s",
		    r->id, (unsigned long long)m->devid, m->dev->devnode, mp, by, what, fix[0] ? "; " : "", fix);
	free(r->late);
	if (asprintf(&r->late, "devid %llu %s back after the mount: %s", (unsigned long long)m->devid,
		     m->dev->devnode, now && now->unused ? "registered, unused until mounted again" : what) < 0)
		r->late = NULL; /* status says less */
	state_touch(st, r);
}

/* Whether @r's record already tells of devid @devid coming back. */
static bool late_told(const struct state_record *r, uint64_t devid)
{
	char head[32];

	snprintf(head, sizeof(head), "devid %llu ", (unsigned long long)devid);
	return r->late && strncmp(r->late, head, strlen(head)) == 0;
}

unsigned exec_late_members(struct state *st, const struct inventory *inv, const struct btrfs_fs_list *l,
			   const char *sysfs, const struct ops *ops, void *ud, const struct logger *lg)
{
	unsigned n = 0;

	for (size_t i = 0; i < st->n; i++) {
		struct state_record *r = &st->v[i];
		const struct btrfs_filesystem *fs;
		struct btrfs_live_members lm;
		const char *mp;

		if (r->kind != STATE_BTRFS || (r->decision != DECISION_DEGRADED && r->decision != DECISION_READ_ONLY))
			continue;
		fs = btrfs_fs_list_find(l, r->id);
		mp = fs ? degraded_mount_of(st, inv, r->id) : NULL;
		if (!mp || btrfs_live_members(sysfs, r->id, &lm) < 0 || (!lm.n_missing && !lm.n_unused))
			continue;
		for (size_t k = 0; k < fs->n_members; k++) {
			const struct btrfs_member *m = &fs->members[k];
			const struct btrfs_live_devid *was = live_devid_of(&lm, m->devid);
			int e;

			if (!was)
				continue;
			/* registered before this pass saw it (udev's 64-btrfs.rules
			 * runs `btrfs ready` on its event; btrfs device scan): the
			 * kernel has done the same with it, said once */
			if (was->unused && !late_told(r, m->devid)) {
				n++;
				tell(st, r, m, sysfs, mp, " (by udev's rule or a btrfs device scan)", lg);
				continue;
			}
			if (!was->missing)
				continue;
			e = ops->register_device(ud, m->dev->devnode);
			if (e < 0) {
				log_warning(lg, "btrfs %s: devid %llu (%s) came back after the degraded mount on %s, but cannot be registered: %s",
					    r->id, (unsigned long long)m->devid, m->dev->devnode, mp, strerror(-e));
				continue;
			}
			n++;
			tell(st, r, m, sysfs, mp, "", lg);
		}
	}
	return n;
}
