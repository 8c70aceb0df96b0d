/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon.h"
#include "shared/log.h"
#include "state/atomic_file.h"
#include "shared/util.h"

static int waiting_path(const char *state_dir, char **ret)
{
	return asprintf(ret, "%s/waiting.pid", state_dir) < 0 ? -ENOMEM : 0;
}

static int print_pid(FILE *f, const void *pid)
{
	return fprintf(f, "%d\n", *(const int *)pid) < 0 ? -EIO : 0;
}

int daemon_write_pid(const char *path, pid_t pid)
{
	int p = (int)pid;

	return file_write_atomic(path, 0644, print_pid, &p);
}

int daemon_mark_waiting(const char *state_dir, bool set)
{
	_cleanup_free_ char *path = NULL;
	int r = waiting_path(state_dir, &path);

	if (r < 0)
		return r;
	if (!set)
		return file_atomic_remove(path);
	return daemon_write_pid(path, getpid());
}

/* @pid runs this same program (its /proc/PID/exe is ours). */
static bool same_program(pid_t pid)
{
	char p[64];
	struct stat a, b;

	snprintf(p, sizeof(p), "/proc/%d/exe", (int)pid);
	return stat(p, &a) == 0 && stat("/proc/self/exe", &b) == 0 && a.st_dev == b.st_dev &&
	       a.st_ino == b.st_ino;
}

int daemon_take_over(const char *state_dir, const struct logger *lg)
{
	_cleanup_free_ char *path = NULL;
	FILE *f;
	int pid = 0, r = waiting_path(state_dir, &path);

	if (r < 0)
		return r;
	f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? 0 : -errno;
	r = fscanf(f, "%d", &pid);
	fclose(f);
	if (r != 1 || pid <= 1 || pid == getpid() || kill(pid, 0) < 0 || !same_program(pid))
		return 0;
	log_info(lg, "ending the start (pid %d) that still waits for nofail entries' devices", pid);
	if (kill(pid, SIGTERM) < 0)
		return -errno;
	/* not our child: gone once kill(2) finds no such process (init reaps it) */
	for (int i = 0; i < 50 && kill(pid, 0) == 0 && same_program(pid); i++)
		usleep(100 * 1000);
	return 1;
}
