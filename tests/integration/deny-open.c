/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Files that misbehave under a reader, as a security scanner or a user's
 * own cleanup makes them: a fanotify permission listener (fanotify(7),
 * FAN_OPEN_PERM) on the opens of other processes.
 *
 * usage: deny-open FILE SECONDS
 *   answers FAN_DENY to every open of FILE: open() fails with EPERM.
 * usage: deny-open --vanish A B SECONDS
 *   at the first open of A or B, unlinks the other one before the open
 *   goes on: a reader that listed both (readdir) finds the second gone
 *   when it comes to it; every open is allowed.
 * Used by t-c26-one-file-fails-the-sync.sh.  Prints "ready" once the
 * marks are set; stops after SECONDS (a bound: a test that dies cannot
 * leave it running for ever) or at SIGTERM.  Exits 0; 77 when the kernel
 * has no permission events.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fanotify.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Is the file open as @fd the one @st describes? */
static int same_file(int fd, const struct stat *st)
{
	struct stat o;

	return fstat(fd, &o) == 0 && o.st_dev == st->st_dev && o.st_ino == st->st_ino;
}

/* The answer to the open @fd: FAN_DENY for the denied file; for --vanish,
 * the other file unlinked at the first event.  By inode: the reader may
 * reach the file through another mount of it. */
static unsigned answer(int fd, bool deny, char *const paths[2], const struct stat st[2], bool *vanished)
{
	if (deny)
		return FAN_DENY;
	for (int i = 0; i < 2 && !*vanished; i++) {
		if (!same_file(fd, &st[i]))
			continue;
		if (unlink(paths[1 - i]) < 0)
			perror("deny-open: unlinking");
		*vanished = true;
	}
	return FAN_ALLOW;
}

int main(int argc, char **argv)
{
	struct fanotify_event_metadata ev[16];
	bool deny = argc == 3, vanished = false;
	char *const *paths = argv + 2;
	struct stat st[2];
	time_t end;
	int fd;

	if (!deny && !(argc == 5 && strcmp(argv[1], "--vanish") == 0 && stat(argv[2], &st[0]) == 0 &&
		       stat(argv[3], &st[1]) == 0)) {
		fputs("usage: deny-open FILE SECONDS | deny-open --vanish A B SECONDS (A and B existing files)\n", stderr);
		return 2;
	}
	end = time(NULL) + atoi(argv[argc - 1]);
	fd = fanotify_init(FAN_CLASS_CONTENT | FAN_CLOEXEC, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fanotify_mark(fd, FAN_MARK_ADD, FAN_OPEN_PERM, AT_FDCWD, deny ? argv[1] : paths[0]) < 0 ||
	    (!deny && fanotify_mark(fd, FAN_MARK_ADD, FAN_OPEN_PERM, AT_FDCWD, paths[1]) < 0)) {
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
			struct fanotify_response resp = { .fd = m->fd };

			if (m->fd < 0)
				continue;
			resp.response = answer(m->fd, deny, paths, st, &vanished);
			if (write(fd, &resp, sizeof(resp)) < 0)
				perror("deny-open: answering");
			close(m->fd);
		}
	}
	return 0;
}
