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
#include <sys/stat.h>
#include <unistd.h>

#include "cli/commands.h"
#include "status_live.h"
#include "mount/umount.h"
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
	case LIVE_AS_RECORDED:
	default:
		return NULL;
	}
}

/* The topmost mount on @target (the last one in the table), or NULL;
 * @ret_ours: the one with @id, on @target, if any. */
static struct libmnt_fs *mounts_on(struct libmnt_table *tb, const char *target, unsigned id,
				   struct libmnt_fs **ret_ours)
{
	struct libmnt_iter *it = mnt_new_iter(MNT_ITER_FORWARD);
	struct libmnt_fs *fs, *top = NULL;

	*ret_ours = NULL;
	while (it && mnt_table_next_fs(tb, it, &fs) == 0) {
		if (!streq(mnt_fs_get_target(fs), target))
			continue;
		top = fs;
		if (id && (unsigned)mnt_fs_get_id(fs) == id)
			*ret_ours = fs;
	}
	mnt_free_iter(it);
	return top;
}

/* Devids the kernel marks missing in <sysfs>/<fsid>/devinfo/<devid>/missing
 * (Linux 5.9+), as "devid 2, 3" in @buf.  Returns: how many. */
static unsigned missing_devids(const char *sysfs, const char *fsid, char *buf, size_t len)
{
	char path[PATH_MAX];
	unsigned n = 0;
	size_t off = 0;
	struct dirent *de;
	DIR *d;

	snprintf(path, sizeof(path), "%s/%s/devinfo", sysfs, fsid);
	d = opendir(path);
	if (!d)
		return 0;
	while ((de = readdir(d))) {
		char file[PATH_MAX + 300], v[8] = "";
		FILE *f;

		if (de->d_name[0] == '.')
			continue;
		snprintf(file, sizeof(file), "%s/%s/missing", path, de->d_name);
		f = fopen(file, "re");
		if (!f)
			continue;
		if (fgets(v, sizeof(v), f) && v[0] == '1' && off < len) {
			off += (size_t)snprintf(buf + off, len - off, "%s%s", n ? ", " : "devid ",
						de->d_name);
			n++;
		}
		fclose(f);
	}
	closedir(d);
	return n;
}

/* The fsid whose <sysfs>/<fsid>/devices/ holds the device @source
 * ("/dev/loop3"), in @buf.  Returns: false when none does. */
static bool fsid_of_device(const char *sysfs, const char *source, char *buf, size_t len)
{
	char real[PATH_MAX], path[PATH_MAX * 2];
	const char *name;
	struct dirent *de;
	bool found = false;
	DIR *d;

	if (!source || !realpath(source, real))
		return false;
	name = strrchr(real, '/') + 1;
	d = opendir(sysfs);
	if (!d)
		return false;
	while (!found && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s/devices/%s", sysfs, de->d_name, name);
		if (access(path, F_OK) == 0) {
			snprintf(buf, len, "%.36s", de->d_name); /* a UUID */
			found = true;
		}
	}
	closedir(d);
	return found;
}

static enum live_status check_btrfs(const struct live_input *in, const char *fsid, char *detail, size_t len)
{
	char missing[256] = "";

	if (missing_devids(in->sysfs_btrfs, fsid, missing, sizeof(missing)) == 0)
		return LIVE_AS_RECORDED;
	snprintf(detail, len, "the kernel reports %s missing", missing);
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

static enum live_status check_mount(const struct live_input *in, const struct state_record *rec,
				    char *detail, size_t len)
{
	const char *mp = rec->mountpoint ? rec->mountpoint : rec->id;
	struct libmnt_fs *ours = NULL, *top;
	const char *moved;
	char fsid[64];

	top = mounts_on(in->mountinfo, mp, rec->status == STATE_PRESENT ? 0 : rec->mount_id, &ours);
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
			 "storaged's mount (ID %u) is not on %s any more but on %s (moved, or a directory above it renamed); `storaged stop` unmounts it there",
			 rec->mount_id, mp, moved);
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
	if (!ours || top != ours) {
		snprintf(detail, len, "%s on %s now: %s (%s, mount ID %d), not storaged's mount (ID %u)",
			 ours ? "mounted over it" : "another mount", mp, mnt_fs_get_source(top) ?: "?",
			 mnt_fs_get_fstype(top) ?: "?", mnt_fs_get_id(top), rec->mount_id);
		return LIVE_REPLACED;
	}
	if (streq(mnt_fs_get_fstype(ours), "btrfs") &&
	    fsid_of_device(in->sysfs_btrfs, mnt_fs_get_source(ours), fsid, sizeof(fsid)))
		return check_btrfs(in, fsid, detail, len);
	return LIVE_AS_RECORDED;
}

enum live_status live_check(const struct live_input *in, const struct state_record *rec,
			    char *detail, size_t len)
{
	detail[0] = '\0';
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
	if (live == LIVE_GONE || live == LIVE_REPLACED)
		sum->bad++;
	else if (live == LIVE_DEGRADED || rec->status == STATE_DEGRADED)
		sum->degraded++;
	/* an incomplete btrfs counts through its mounts: failed, or degraded */
	else if (!rec->nofail && (rec->status == STATE_FAILED || rec->status == STATE_SKIPPED))
		sum->bad++;
}

void status_sum_area(struct status_sum *sum, enum area_state st)
{
	if (st == AREA_STATE_GONE)
		sum->bad++;
	else if (st == AREA_STATE_DEGRADED)
		sum->degraded++;
}

int status_sum_exit(const struct status_sum *sum)
{
	return sum->bad ? EXIT_STEP_FAILED : sum->degraded ? EXIT_DEGRADED : 0;
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
	char why[1024], t[64];

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
