/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A mounted btrfs as the kernel shows it in sysfs (btrfs_live.h). */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "btrfs_live.h"

/* The first character of <dir>/<name>, or 0 when it cannot be read. */
static char read_flag(const char *dir, const char *name)
{
	char file[PATH_MAX], v[8] = "";
	FILE *f;

	snprintf(file, sizeof(file), "%s/%s", dir, name);
	f = fopen(file, "re");
	if (!f)
		return 0;
	if (!fgets(v, sizeof(v), f))
		v[0] = 0;
	fclose(f);
	return v[0];
}

/* Entries of directory @path but "." and "..": -1 when it cannot be read. */
static int count_entries(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *de;
	int n = 0;

	if (!d)
		return -1;
	while ((de = readdir(d)))
		n += de->d_name[0] != '.';
	closedir(d);
	return n;
}

int btrfs_live_members(const char *sysfs, const char *fsid, struct btrfs_live_members *ret)
{
	char path[PATH_MAX], dev[PATH_MAX + 300];
	unsigned candidates = 0;
	struct dirent *de;
	int n_open;
	DIR *d;

	*ret = (struct btrfs_live_members){ 0 };
	snprintf(path, sizeof(path), "%s/%s/devinfo", sysfs, fsid);
	d = opendir(path);
	if (!d)
		return -ENOENT;
	while ((de = readdir(d)) && ret->n < BTRFS_LIVE_DEVIDS_MAX) {
		struct btrfs_live_devid *m = &ret->v[ret->n];
		unsigned long long devid;
		char *end;

		if (de->d_name[0] == '.')
			continue;
		devid = strtoull(de->d_name, &end, 10);
		if (*end)
			continue;
		snprintf(dev, sizeof(dev), "%s/%s", path, de->d_name);
		*m = (struct btrfs_live_devid){ .devid = devid,
						.missing = read_flag(dev, "missing") == '1' };
		/* a candidate for unused; replace_target: a replace's new disk */
		m->unused = !m->missing && read_flag(dev, "writeable") == '0' &&
			    read_flag(dev, "replace_target") != '1';
		ret->n_missing += m->missing;
		candidates += m->unused;
		ret->n++;
	}
	closedir(d);
	snprintf(path, sizeof(path), "%s/%s/devices", sysfs, fsid);
	n_open = count_entries(path);
	if (n_open < 0 || candidates == 0 || (size_t)n_open >= ret->n - ret->n_missing) {
		for (size_t k = 0; k < ret->n; k++)
			ret->v[k].unused = false;
		return 0;
	}
	ret->n_unused = candidates;
	return 0;
}

bool btrfs_live_fsid_of_device(const char *sysfs, const char *source, char *buf, size_t len)
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

unsigned btrfs_live_stale_how(const char *sysfs, bool mounted_ro, const struct btrfs_filesystem *fs)
{
	unsigned how = mounted_ro ? STALE_MOUNTED_RO : 0;
	struct btrfs_live_members lm;

	if (btrfs_live_members(sysfs, fs->fsid, &lm) < 0)
		return how;
	for (size_t k = 0; k < lm.n; k++)
		for (size_t i = 0; i < fs->n_members; i++)
			if (fs->members[i].devid == lm.v[k].devid &&
			    btrfs_member_stale(fs, &fs->members[i]) && (lm.v[k].missing || lm.v[k].unused))
				how |= STALE_MEMBER_UNUSED;
	return how;
}
