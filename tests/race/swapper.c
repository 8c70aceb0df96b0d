/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * swapper: the attacker of the C20/C21 race tests, run as an unprivileged
 * user.  In DIR, it waits (inotify) until someone opens or reads an entry
 * of DIR/A, then keeps exchanging DIR/A with DIR/B (renameat2
 * RENAME_EXCHANGE: one is a directory, the other a symbolic link out of
 * the tree) until the file STOP exists or MAX swaps were made.  It leaves
 * A as it found it and prints the number of swaps.
 *
 *   swapper DIR A B STOP MAX
 */

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/inotify.h>
#include <time.h>
#include <unistd.h>

static void pause_ns(long ns)
{
	struct timespec ts = { 0, ns };

	nanosleep(&ts, NULL);
}

int main(int argc, char **argv)
{
	struct pollfd p;
	char buf[4096];
	long n = 0, max;
	int dfd, in;

	if (argc != 6)
		return 2;
	max = atol(argv[5]);
	dfd = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	in = inotify_init1(IN_CLOEXEC);
	if (dfd < 0 || in < 0 || chdir(argv[1]) < 0 ||
	    inotify_add_watch(in, argv[2], IN_OPEN | IN_ACCESS | IN_CLOSE_NOWRITE) < 0) {
		perror("swapper");
		return 1;
	}
	/* the copy has reached A: from now on, swap (bounded: 60 s to start) */
	p = (struct pollfd){ .fd = in, .events = POLLIN };
	if (poll(&p, 1, 60000) != 1 || read(in, buf, sizeof(buf)) <= 0) {
		printf("0\n");
		return 0;
	}
	while (n < max && faccessat(AT_FDCWD, argv[4], F_OK, 0) < 0) {
		if (renameat2(dfd, argv[2], dfd, argv[3], RENAME_EXCHANGE) < 0) {
			perror("swapper: renameat2");
			return 1;
		}
		n++;
		/* unequal times in the two states catch both windows of a
		 * copy: a lookup then an open, and a pass then a later one */
		pause_ns(n & 1 ? 300000 : 100000);
	}
	if (n & 1 && renameat2(dfd, argv[2], dfd, argv[3], RENAME_EXCHANGE) == 0)
		n++;
	printf("%ld\n", n);
	return 0;
}
