/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Liveness from a lock the live process holds (see liveness.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "liveness.h"
#include "shared/units.h"
#include "shared/util.h"

int liveness_held(const char *lock_path)
{
	_cleanup_close_ int fd = open(lock_path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);

	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	if (flock(fd, LOCK_SH | LOCK_NB) == 0)
		return 0; /* dropped with the descriptor */
	return errno == EWOULDBLOCK ? 1 : -errno;
}

bool liveness_at_work(const char *state_dir)
{
	_cleanup_free_ char *lock = NULL, *resident = NULL;

	if (asprintf(&lock, "%s/lock", state_dir) < 0 || asprintf(&resident, "%s/resident", state_dir) < 0)
		return true; /* not known: claim nothing */
	return liveness_held(lock) != 0 || liveness_held(resident) != 0;
}

int liveness_take(const char *lock_path)
{
	_cleanup_close_ int fd = open(lock_path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);

	if (fd < 0 || flock(fd, LOCK_EX | LOCK_NB) < 0)
		return -errno;
	return TAKE_FD(fd);
}

/* Does process @pid have the file @st open?  Its /proc/PID/fd links,
 * stat(2)ed: the file itself, whatever name it has now. */
static bool has_open(pid_t pid, const struct stat *st)
{
	char dir[64], path[64 + 256 + 2];
	struct dirent *e;
	DIR *d;
	bool found = false;

	snprintf(dir, sizeof(dir), "/proc/%d/fd", (int)pid);
	d = opendir(dir);
	if (!d)
		return false;
	while (!found && (e = readdir(d))) {
		struct stat fst;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		found = stat(path, &fst) == 0 && fst.st_dev == st->st_dev && fst.st_ino == st->st_ino;
	}
	closedir(d);
	return found;
}

pid_t liveness_pid(const char *lock_path, const char *pid_path)
{
	char buf[32] = "";
	uint64_t pid = 0;
	struct stat st;
	FILE *f;

	if (stat(lock_path, &st) < 0)
		return 0;
	f = fopen(pid_path, "re");
	if (!f)
		return 0;
	if (fgets(buf, sizeof(buf), f))
		buf[strcspn(buf, "\n")] = '\0';
	fclose(f);
	if (units_parse_uint(buf, INT32_MAX, &pid) < 0 || pid <= 1)
		return 0;
	return has_open((pid_t)pid, &st) ? (pid_t)pid : 0;
}
