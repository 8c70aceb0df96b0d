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
