/* SPDX-License-Identifier: GPL-2.0-or-later */
/* posix_spawn with a clean environment; see spawn_helper.h. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "spawn_helper.h"
#include "util.h"

extern char **environ;

int spawn_find_program(const char *name, char *buf, size_t len)
{
	static const char *const dirs[] = { "/usr/sbin", "/sbin", "/usr/bin", "/bin" };

	for (size_t i = 0; i < ARRAY_SIZE(dirs); i++)
		if ((size_t)snprintf(buf, len, "%s/%s", dirs[i], name) < len && access(buf, X_OK) == 0)
			return 0;
	return -ENOENT;
}

/* PATH and the C locale, plus the sanitizers' options of a test build */
static void clean_env(char **envp, size_t len)
{
	static const char *const keep[] = { "ASAN_OPTIONS=", "UBSAN_OPTIONS=", "LSAN_OPTIONS=" };
	size_t n = 0;

	envp[n++] = "PATH=/usr/sbin:/usr/bin:/sbin:/bin";
	envp[n++] = "LC_ALL=C";
	for (char **e = environ; e && *e && n + 1 < len; e++)
		for (size_t i = 0; i < ARRAY_SIZE(keep); i++)
			if (strncmp(*e, keep[i], strlen(keep[i])) == 0)
				envp[n++] = *e;
	envp[n] = NULL;
}

static bool has_target(const struct spawn_fd *fds, size_t n, int target)
{
	for (size_t i = 0; i < n; i++)
		if (fds[i].target == target)
			return true;
	return false;
}

static bool helper_at(const char *dir, size_t dir_len, const char *type, size_t type_len,
		      char *buf, size_t len)
{
	int n = snprintf(buf, len, "%.*s/mount.%.*s", (int)dir_len, dir, (int)type_len, type);

	return n > 0 && (size_t)n < len && access(buf, X_OK) == 0;
}

static int helper_find(const char *dirs, const char *type, size_t type_len, char *buf, size_t len)
{
	const char *dot = memchr(type, '.', type_len);

	if (type_len == 0 || (type_len == 4 && memcmp(type, "none", 4) == 0) ||
	    memmem(type, type_len, "/..", 3))
		return -ENOENT;
	for (const char *d = dirs ?: MOUNT_HELPER_DIRS; *d;) {
		size_t n = strcspn(d, ":");

		if (n && (helper_at(d, n, type, type_len, buf, len) ||
			  (dot && helper_at(d, n, type, (size_t)(dot - type), buf, len))))
			return 0;
		d += n + (d[n] == ':');
	}
	return -ENOENT;
}

int mount_helper_find(const char *dirs, const char *fstype, char *buf, size_t len)
{
	if (!fstype || strchr(fstype, ','))
		return -ENOENT;
	return helper_find(dirs, fstype, strlen(fstype), buf, len);
}

bool mount_helper_exists(const char *dirs, const char *fstype)
{
	char path[PATH_MAX];

	for (const char *t = fstype ?: ""; *t;) {
		size_t k = strcspn(t, ",");

		if (helper_find(dirs, t, k, path, sizeof(path)) == 0)
			return true;
		t += k + (t[k] == ',');
	}
	return false;
}

int spawn_start(const char *prog, char *const argv[], const struct spawn_fd *fds, size_t n_fds,
		unsigned flags, pid_t *ret_pid)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	sigset_t none, term;
	char *envp[8];
	int r;

	clean_env(envp, ARRAY_SIZE(envp));
	posix_spawn_file_actions_init(&fa);
	if (!has_target(fds, n_fds, STDIN_FILENO))
		posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
	if (!has_target(fds, n_fds, STDOUT_FILENO))
		posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
	for (size_t i = 0; i < n_fds; i++)
		posix_spawn_file_actions_adddup2(&fa, fds[i].fd, fds[i].target);
	posix_spawnattr_init(&at);
	if (flags & SPAWN_RESET_SIGNALS) {
		sigemptyset(&none);
		sigemptyset(&term);
		sigaddset(&term, SIGINT);
		sigaddset(&term, SIGTERM);
		posix_spawnattr_setsigmask(&at, &none);
		posix_spawnattr_setsigdefault(&at, &term);
		posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
	}
	r = -posix_spawn(ret_pid, prog, &fa, &at, argv, envp);
	posix_spawnattr_destroy(&at);
	posix_spawn_file_actions_destroy(&fa);
	return r;
}

int spawn_wait(pid_t pid, int *ret_status)
{
	while (waitpid(pid, ret_status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return 0;
}
