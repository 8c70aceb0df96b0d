/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The live check of `storaged status` (status_live.h).  Reads the mount
 * table it is given and sysfs; changes nothing.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shared/invocation.h"
#include "status_live.h"
#include "mount/umount.h"
#include "mount/view.h"
#include "plan/plan.h"
#include "shared/util.h"

const char *live_status_name(enum live_status st)
{
	switch (st) {
	case LIVE_GONE:
		return "gone";
	case LIVE_REPLACED:
		return "replaced";
	case LIVE_DEGRADED:
		return "degraded";
	case LIVE_INTERRUPTED:
		return "interrupted";
	case LIVE_AS_RECORDED:
	default:
		return NULL;
	}
}

/* "devid 2, 3" of the members with @missing (else: unused) in @buf. */
static unsigned format_devids(const struct btrfs_live_members *lm, bool missing, char *buf, size_t len)
{
	unsigned n = 0;
	size_t off = 0;

	buf[0] = '\0';
	for (size_t k = 0; k < lm->n && off < len; k++) {
		if (missing ? !lm->v[k].missing : !lm->v[k].unused)
			continue;
		off += (size_t)snprintf(buf + off, len - off, "%s%llu", n ? ", " : "devid ",
					(unsigned long long)lm->v[k].devid);
		n++;
	}
	return n;
}

const char *live_btrfs_mountpoint(const struct live_input *in, const char *fsid)
{
	struct libmnt_iter *it = mnt_new_iter(MNT_ITER_FORWARD);
	struct libmnt_fs *fs;
	const char *found = NULL;
	char id[64];

	while (it && !found && mnt_table_next_fs(in->mountinfo, it, &fs) == 0)
		if (streq(mnt_fs_get_fstype(fs), "btrfs") &&
		    btrfs_live_fsid_of_device(in->sysfs_btrfs, mnt_fs_get_srcpath(fs), id, sizeof(id)) &&
		    strcasecmp(id, fsid) == 0)
			found = mnt_fs_get_target(fs);
	mnt_free_iter(it);
	return found;
}

char *live_degraded_advice(const char *mountpoint, const char *fsid, uint64_t devid, bool read_only,
			   const char *self, char *buf, size_t len)
{
	char q[PATH_MAX * 4 + 3] = "its mount point", d[24] = "DEVID", every[192] = "";

	if (mountpoint)
		shell_quote(mountpoint, q, sizeof(q));
	if (devid)
		snprintf(d, sizeof(d), "%llu", (unsigned long long)devid);
	/* the next mount reuses a filesystem still mounted elsewhere as it
	 * is: a new superblock only once nothing holds it */
	if (fsid)
		snprintf(every, sizeof(every), "; a bind of it left mounted keeps it as it is: unmount each of its mounts (findmnt -S UUID=%s)",
			 fsid);
	if (read_only)
		snprintf(buf, len,
			 "unmount %s and mount it again (umount %s && %s start; read-only, it missed no write), or put a new disk in its place, which needs the mount writable: mount -o remount,rw,degraded %s && btrfs replace start %s NEWDEV %s%s",
			 q, q, self ? self : "storaged", q, d, q, every);
	else
		snprintf(buf, len, "unmount %s and mount it again, or put a new disk in its place (btrfs replace start %s NEWDEV %s)%s",
			 q, d, q, every);
	return buf;
}

/* The kernel's view of a mounted btrfs: a member it marks missing, or one
 * back but not in use; each said with what takes it back. */
static enum live_status check_btrfs(const struct live_input *in, const char *fsid, char *detail, size_t len)
{
	const char *mp = live_btrfs_mountpoint(in, fsid);
	char missing[256] = "", unused[256] = "", q[PATH_MAX * 4 + 3] = "its mount point", fix[2048];
	bool ro = view_mounted_ro(in->mountinfo, mp);
	unsigned long long first = 0;
	struct btrfs_live_members lm;

	if (btrfs_live_members(in->sysfs_btrfs, fsid, &lm) < 0 || (!lm.n_missing && !lm.n_unused))
		return LIVE_AS_RECORDED;
	if (mp)
		shell_quote(mp, q, sizeof(q));
	format_devids(&lm, true, missing, sizeof(missing));
	format_devids(&lm, false, unused, sizeof(unused));
	for (size_t k = 0; k < lm.n && !first; k++)
		if (lm.v[k].missing || lm.v[k].unused)
			first = lm.v[k].devid;
	live_degraded_advice(mp, fsid, first, ro, in->self, fix, sizeof(fix));
	if (lm.n_missing)
		snprintf(detail, len, "the kernel reports %s missing%s%s: mounted %sdegraded; once it is back, %s", missing,
			 lm.n_unused ? ", and does not use " : "", unused, ro ? "read-only " : "", fix);
	else if (ro)
		snprintf(detail, len,
			 "the kernel does not use %s: it came back while the filesystem was mounted read-only degraded, and a mounted btrfs opens no returning member (%s/%s/devices lacks it); to take it back, %s",
			 unused, in->sysfs_btrfs, fsid, fix);
	else
		snprintf(detail, len,
			 "the kernel does not use %s: it came back while the filesystem was mounted degraded, and a mounted btrfs opens no returning member (%s/%s/devices lacks it), so writes still go to the others alone; unmount %s and mount it again to take it back, then scrub it (btrfs scrub start %s); or replace it (btrfs replace start %llu NEWDEV %s)",
			 unused, in->sysfs_btrfs, fsid, q, q, first, q);
	return LIVE_DEGRADED;
}

struct mount_identity live_recorded_identity(const struct state_record *rec)
{
	return (struct mount_identity){ .id = rec->mount_id,
					.unique_id = rec->mount_unique_id,
					.root_dev = rec->mount_root_dev,
					.root_ino = rec->mount_root_ino,
					.root_btime_ns = rec->mount_root_btime_ns };
}

/* Can the record tell its mount from a later one with its ID? */
static bool record_knows_identity(const struct state_record *rec)
{
	return rec->mount_id && (rec->mount_unique_id || rec->mount_root_ino);
}

bool live_id_taken_over(const struct state_record *rec, const char *mp, unsigned table_id)
{
	struct mount_identity recorded = live_recorded_identity(rec), now;

	return record_knows_identity(rec) && table_id == rec->mount_id &&
	       mount_identity_path(mp, &now) == 0 && now.id == table_id &&
	       !mount_identity_is(&now, &recorded);
}

const char *live_mount_moved(struct libmnt_table *tb, const struct state_record *rec)
{
	struct mount_identity recorded = live_recorded_identity(rec), now;
	struct libmnt_iter *itr = mnt_new_iter(MNT_ITER_FORWARD);
	struct libmnt_fs *fs;
	const char *found = NULL;

	if (!itr || !record_knows_identity(rec))
		goto out;
	while (!found && mnt_table_next_fs(tb, itr, &fs) == 0) {
		const char *t = mnt_fs_get_target(fs);

		if (mnt_fs_get_id(fs) == (int)rec->mount_id && t && mount_identity_path(t, &now) == 0 &&
		    mount_identity_is(&now, &recorded))
			found = t;
	}
out:
	mnt_free_iter(itr);
	return found;
}

/* The area of storaged's whose bind over its directory is mount @id. */
static const struct area_status *area_covering(const struct live_input *in, int id)
{
	for (size_t i = 0; i < in->n_areas; i++)
		if (in->areas[i].cover_id && in->areas[i].cover_id == (uint64_t)id)
			return &in->areas[i];
	return NULL;
}

static enum live_status check_mount(const struct live_input *in, const struct state_record *rec,
				    char *detail, size_t len)
{
	const char *mp = rec->mountpoint ? rec->mountpoint : rec->id;
	struct libmnt_fs *ours = NULL, *top;
	const struct area_status *area;
	const char *moved;
	char fsid[64];

	top = view_find_top(in->mountinfo, mp, rec->status == STATE_PRESENT ? 0 : rec->mount_id, &ours);
	if (!rec->mount_id)
		ours = top; /* a record of an older storaged: no ID to compare */
	if (rec->status == STATE_PRESENT) {
		if (top)
			return LIVE_AS_RECORDED;
		snprintf(detail, len, "nothing is mounted on %s any more", mp);
		return LIVE_GONE;
	}
	if (!ours && !top && (moved = live_mount_moved(in->mountinfo, rec))) {
		snprintf(detail, len,
			 "storaged's mount (ID %u) is not on %s any more but on %s (moved, or a directory above it renamed); `%s stop` unmounts it there",
			 rec->mount_id, mp, moved, in->self ? in->self : "storaged");
		return LIVE_GONE;
	}
	if (!ours && !top) {
		snprintf(detail, len, "unmounted since storaged mounted it (mount ID %u)", rec->mount_id);
		return LIVE_GONE;
	}
	if (ours && ours == top && live_id_taken_over(rec, mp, (unsigned)mnt_fs_get_id(ours))) {
		snprintf(detail, len,
			 "another mount on %s now: %s (%s), with the mount ID %u of storaged's, which was unmounted",
			 mp, mnt_fs_get_source(top) ?: "?", mnt_fs_get_fstype(top) ?: "?", rec->mount_id);
		return LIVE_REPLACED;
	}
	if (ours && top != ours && (area = area_covering(in, mnt_fs_get_id(top)))) {
		snprintf(detail, len, "covered by storaged's area '%s' (bound over %s after it was mounted)",
			 area->name, mp);
		return LIVE_AS_RECORDED;
	}
	if (!ours || top != ours) {
		snprintf(detail, len, "%s on %s now: %s (%s, mount ID %d), not storaged's mount (ID %u)",
			 ours ? "mounted over it" : "another mount", mp, mnt_fs_get_source(top) ?: "?",
			 mnt_fs_get_fstype(top) ?: "?", mnt_fs_get_id(top), rec->mount_id);
		return LIVE_REPLACED;
	}
	if (streq(mnt_fs_get_fstype(ours), "btrfs") &&
	    btrfs_live_fsid_of_device(in->sysfs_btrfs, mnt_fs_get_source(ours), fsid, sizeof(fsid)))
		return check_btrfs(in, fsid, detail, len);
	return LIVE_AS_RECORDED;
}

bool live_left_by_a_killed_run(const struct live_input *in, const struct state_record *rec, char *why,
			       size_t len)
{
	const char *self = in->self ? in->self : "storaged";
	bool waiting = rec->status == STATE_WAITING &&
		       (rec->kind == STATE_BTRFS || (rec->kind == STATE_MOUNT && !plan_is_later_reason(rec->reason)));

	if (!in->nobody_at_work || !(waiting || rec->status == STATE_MOUNTING))
		return false;
	snprintf(why, len, "no storaged is at it: the run that was %s was killed; `%s start` completes it, `%s stop` undoes it",
		 waiting ? "waiting" : "mounting", self, self);
	return true;
}

enum live_status live_check(const struct live_input *in, const struct state_record *rec,
			    char *detail, size_t len)
{
	detail[0] = '\0';
	if (live_left_by_a_killed_run(in, rec, detail, len))
		return LIVE_INTERRUPTED;
	if (rec->status != STATE_DONE && rec->status != STATE_DEGRADED && rec->status != STATE_PRESENT)
		return LIVE_AS_RECORDED;
	switch (rec->kind) {
	case STATE_MOUNT:
		return check_mount(in, rec, detail, len);
	case STATE_BTRFS:
		return check_btrfs(in, rec->id, detail, len);
	case STATE_AREA:
	default:
		return LIVE_AS_RECORDED; /* area_status_list() checks areas */
	}
}

void status_sum_record(struct status_sum *sum, const struct state_record *rec, enum live_status live)
{
	if (live == LIVE_GONE || live == LIVE_REPLACED || live == LIVE_INTERRUPTED)
		sum->bad++;
	else if (live == LIVE_DEGRADED || rec->status == STATE_DEGRADED)
		sum->degraded++;
	/* an incomplete btrfs counts through its mounts: failed, or degraded */
	/* failed with a mount ID: left mounted by a refused stop (undo.c) */
	else if ((!rec->nofail || rec->mount_id) && (rec->status == STATE_FAILED || rec->status == STATE_SKIPPED))
		sum->bad++;
}

void status_sum_area(struct status_sum *sum, enum area_state st)
{
	if (st == AREA_STATE_GONE || st == AREA_STATE_INTERRUPTED)
		sum->bad++;
	else if (st == AREA_STATE_DEGRADED)
		sum->degraded++;
}

int status_sum_exit(const struct status_sum *sum)
{
	return exit_status_of(sum->bad, sum->degraded);
}

/* Appends @part to @buf after a "; " when @buf has something already. */
static void join(char *buf, size_t len, const char *part)
{
	size_t off = strlen(buf);

	if (part && part[0] && off < len)
		snprintf(buf + off, len - off, "%s%s", off ? "; " : "", part);
}

char *status_detail(char *buf, size_t len, const char *live_why, const char *reason, bool nofail,
		    const char *took)
{
	char why[2048], t[64];

	if (!len)
		return buf;
	buf[0] = '\0';
	/* "REASON (nofail)", or "nofail" alone */
	snprintf(why, sizeof(why), "%s%s", reason ? reason : "",
		 nofail ? (reason ? " (nofail)" : "nofail") : "");
	snprintf(t, sizeof(t), "%s%s", took ? "took " : "", took ? took : "");
	join(buf, len, live_why);
	join(buf, len, why);
	join(buf, len, t);
	return buf;
}
