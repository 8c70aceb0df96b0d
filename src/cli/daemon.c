/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"
#include "liveness.h"
#include "shared/log.h"
#include "state/atomic_file.h"
#include "shared/util.h"

static int print_pid(FILE *f, const void *pid)
{
	return fprintf(f, "%d\n", *(const int *)pid) < 0 ? -EIO : 0;
}

int daemon_write_pid(const char *path, pid_t pid)
{
	int p = (int)pid;

	return file_write_atomic(path, 0644, print_pid, &p);
}

/* DIR/waiting, the lock, and DIR/waiting.pid, for messages and signals. */
static int waiting_paths(const char *state_dir, char **ret_lock, char **ret_pid)
{
	if (asprintf(ret_lock, "%s/waiting", state_dir) < 0)
		return -ENOMEM;
	if (asprintf(ret_pid, "%s/waiting.pid", state_dir) < 0) {
		free(*ret_lock);
		*ret_lock = NULL;
		return -ENOMEM;
	}
	return 0;
}

int daemon_mark_waiting(const char *state_dir)
{
	_cleanup_free_ char *lock = NULL, *pidfile = NULL;
	_cleanup_close_ int fd = -EBADF;
	int r = waiting_paths(state_dir, &lock, &pidfile);

	if (r < 0)
		return r;
	fd = liveness_take(lock);
	if (fd < 0)
		return fd;
	r = daemon_write_pid(pidfile, getpid());
	return r < 0 ? r : TAKE_FD(fd);
}

void daemon_unmark_waiting(const char *state_dir, int fd)
{
	_cleanup_free_ char *lock = NULL, *pidfile = NULL;

	if (fd < 0)
		return;
	if (waiting_paths(state_dir, &lock, &pidfile) == 0)
		file_atomic_remove(pidfile);
	close(fd);
}

int daemon_take_over(const char *state_dir, const struct logger *lg)
{
	_cleanup_free_ char *lock = NULL, *pidfile = NULL;
	int r = waiting_paths(state_dir, &lock, &pidfile);
	pid_t pid;

	if (r < 0)
		return r;
	r = liveness_held(lock);
	if (r <= 0)
		return r; /* nobody waits: a waiting.pid left by a killed start names nobody */
	pid = liveness_pid(lock, pidfile);
	if (pid <= 0 || pid == getpid())
		return 0;
	log_info(lg, "ending the start (pid %d) that still waits for nofail entries' devices", (int)pid);
	if (kill(pid, SIGTERM) < 0)
		return -errno;
	/* gone, or done waiting, once the kernel has dropped its lock */
	for (int i = 0; i < 50 && liveness_held(lock) > 0; i++)
		usleep(100 * 1000);
	return 1;
}
