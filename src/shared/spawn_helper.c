/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * posix_spawn with a clean environment; see spawn_helper.h.
 */
#include <errno.h>
#include <fcntl.h>
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

bool spawn_has_mount_helper(const char *dirs, const char *fstype)
{
	for (const char *d = dirs; *d;) {
		size_t n = strcspn(d, ":");

		for (const char *t = fstype; n && *t;) {
			size_t k = strcspn(t, ","), main = strcspn(t, ".,");
			char path[4096];

			snprintf(path, sizeof(path), "%.*s/mount.%.*s", (int)n, d, (int)k, t);
			if (access(path, X_OK) == 0)
				return true;
			snprintf(path, sizeof(path), "%.*s/mount.%.*s", (int)n, d, (int)main, t);
			if (main < k && access(path, X_OK) == 0)
				return true;
			t += k + (t[k] == ',');
		}
		d += n + (d[n] == ':');
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
