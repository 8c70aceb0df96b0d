/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A file that root cannot read, as a security scanner makes one: a
 * fanotify permission listener (fanotify(7), FAN_OPEN_PERM) that answers
 * FAN_DENY to every open of FILE by another process, so that open()
 * fails with EPERM.  Used by t-c26-one-file-fails-the-sync.sh.
 *
 * usage: deny-open FILE SECONDS
 * Prints "ready" once the mark is set; stops after SECONDS (a bound: a
 * test that dies cannot leave it running for ever) or at SIGTERM.
 * Exits 0; 77 when the kernel has no permission events.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/fanotify.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct fanotify_event_metadata ev[16];
	time_t end;
	int fd;

	if (argc != 3) {
		fputs("usage: deny-open FILE SECONDS\n", stderr);
		return 2;
	}
	end = time(NULL) + atoi(argv[2]);
	fd = fanotify_init(FAN_CLASS_CONTENT | FAN_CLOEXEC, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fanotify_mark(fd, FAN_MARK_ADD, FAN_OPEN_PERM, AT_FDCWD, argv[1]) < 0) {
		perror("deny-open: fanotify");
		return errno == EINVAL || errno == ENOSYS ? 77 : 1;
	}
	printf("ready\n");
	fflush(stdout);
	while (time(NULL) < end) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t n;

		if (poll(&p, 1, 200) <= 0)
			continue;
		n = read(fd, ev, sizeof(ev));
		for (struct fanotify_event_metadata *m = ev; n > 0 && FAN_EVENT_OK(m, n);
		     m = FAN_EVENT_NEXT(m, n)) {
			struct fanotify_response resp = { .fd = m->fd, .response = FAN_DENY };

			if (m->fd >= 0) {
				if (write(fd, &resp, sizeof(resp)) < 0)
					perror("deny-open: answering");
				close(m->fd);
			}
		}
	}
	return 0;
}
