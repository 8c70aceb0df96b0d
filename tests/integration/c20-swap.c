/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The attacker of the C20 race tests (t-c20-*.sh): exchanges two names in
 * one directory with renameat2(RENAME_EXCHANGE) in a tight loop, so that
 * each name is in turn a directory and a symbolic link, and neither is
 * ever missing.  Run as the unprivileged user who owns the directory.
 *
 * usage: c20-swap DIR NAME1 NAME2 SECONDS
 * A name that is a mount point cannot be renamed (EBUSY): the loop goes on.
 * Stops after SECONDS (a bound: a test that dies cannot leave it running
 * for ever), or at SIGTERM; exits 0, or 1 when the exchange is refused.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1) /* linux/fs.h, Linux 3.15 */
#endif

int main(int argc, char **argv)
{
	unsigned long n = 0;
	time_t end;
	int dirfd;

	if (argc != 5) {
		fprintf(stderr, "usage: %s DIR NAME1 NAME2 SECONDS\n", argv[0]);
		return 2;
	}
	dirfd = open(argv[1], O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0) {
		perror(argv[1]);
		return 1;
	}
	end = time(NULL) + atol(argv[4]);
	for (;;) {
		/* EBUSY: a name is a mount point now (the area is on the real
		 * directory), ENOENT: the test is tidying up; both pass */
		if (renameat2(dirfd, argv[2], dirfd, argv[3], RENAME_EXCHANGE) < 0 &&
		    errno != EBUSY && errno != ENOENT) {
			perror("renameat2");
			return 1;
		}
		/* the clock is read now and then only: the loop stays tight */
		if ((++n & 1023) == 0 && time(NULL) >= end)
			break;
	}
	return 0;
}
