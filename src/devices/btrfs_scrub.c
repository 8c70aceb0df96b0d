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
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>

#include "btrfs_scrub.h"
#include "shared/spawn_helper.h"

int btrfs_scrub_start(const char *mountpoint)
{
	char *argv[] = { "btrfs", "scrub", "start", (char *)mountpoint, NULL };
	char prog[256];
	int r, status = 0;
	pid_t pid;

	r = spawn_find_program("btrfs", prog, sizeof(prog));
	r = r ?: spawn_start(prog, argv, NULL, 0, SPAWN_RESET_SIGNALS, &pid);
	r = r ?: spawn_wait(pid, &status);
	if (r == 0 && !(WIFEXITED(status) && WEXITSTATUS(status) == 0))
		r = -EIO;
	return r;
}

/* The number after "|@key:" in the scrub status line @line; -1 when absent. */
static long long scrub_field(const char *line, const char *key)
{
	char pat[64];
	const char *p;

	snprintf(pat, sizeof(pat), "|%s:", key);
	p = strstr(line, pat);
	return p ? strtoll(p + strlen(pat), NULL, 10) : -1;
}

bool btrfs_scrub_finished_since(const char *dir, const char *fsid, uint64_t since_usec)
{
	char path[PATH_MAX], line[2048];
	size_t n = strlen(fsid);
	unsigned devices = 0, done = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/scrub.status.%s", dir, fsid);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		if (strncasecmp(line, fsid, n) != 0 || line[n] != ':')
			continue;
		devices++;
		done += scrub_field(line, "finished") == 1 && scrub_field(line, "canceled") == 0 &&
			scrub_field(line, "uncorrectable_errors") == 0 &&
			scrub_field(line, "t_start") >= (long long)(since_usec / 1000000);
	}
	fclose(f);
	return devices && done == devices;
}
