/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Running a helper program by argv (mkfs, storaged-copy): posix_spawn with
 * a clean environment, never a shell.  (Not "spawn.h": with -I src that
 * name would hide the C library's <spawn.h>.)
 */
#ifndef STORAGED_SPAWN_HELPER_H
#define STORAGED_SPAWN_HELPER_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* One descriptor the child gets: @fd of the parent as @target. */
struct spawn_fd {
	int fd;
	int target;
};

/* spawn_start() flags */
enum {
	/* unblock SIGINT and SIGTERM and give them their default action in
	 * the child: storaged blocks them for its signalfd, and a helper that
	 * inherits that could not be ended by kill(SIGTERM) */
	SPAWN_RESET_SIGNALS = 1 << 0,
};

/**
 * spawn_find_program:
 * @name: a bare program name ("mkfs.ext4")
 * @buf: receives its path
 * @len: size of @buf in bytes
 *
 * Looks in /usr/sbin, /sbin, /usr/bin and /bin, in that order (not $PATH:
 * storaged runs as root and must not run what an environment points at).
 *
 * Returns: 0; -ENOENT when none of them has an executable @name.
 */
int spawn_find_program(const char *name, char *buf, size_t len);

/* libmount's FS_SEARCH_PATH, and /usr/sbin for systems where /sbin is not
 * a link to it */
#define SPAWN_MOUNT_HELPER_DIRS "/sbin:/usr/sbin:/sbin/fs.d:/sbin/fs"

/**
 * spawn_has_mount_helper:
 * @dirs: ':'-separated directories (SPAWN_MOUNT_HELPER_DIRS, or a test's)
 * @fstype: an fstab type, or a comma-separated list of them
 *
 * Would libmount run a mount helper for @fstype: an executable mount.TYPE,
 * or for "fuse.sshfs" mount.fuse.sshfs or mount.fuse, in one of @dirs
 * (util-linux libmount/src/context_mount.c prepare_helper())?  A helper
 * is a program that may hang.
 */
bool spawn_has_mount_helper(const char *dirs, const char *fstype);

/**
 * spawn_start:
 * @prog: absolute path of the program
 * @argv: its argv, NULL-terminated (argv[0] as the program should see it)
 * @fds: descriptors to give the child (dup2 of each .fd onto .target; the
 *       .fd may be O_CLOEXEC, and must not equal its .target)
 * @n_fds: number of @fds
 * @flags: SPAWN_RESET_SIGNALS or 0
 * @ret_pid: the child's pid, to be reaped with spawn_wait()
 *
 * The child gets stdin and stdout on /dev/null (unless @fds names 0 or 1),
 * storaged's stderr unless @fds names 2, and an environment of PATH, LC_ALL=C
 * and the sanitizers' options of a test build (without them a helper would
 * run with other settings than storaged).  Every other descriptor of
 * storaged is O_CLOEXEC.
 *
 * Returns: 0; negative errno from posix_spawn().
 */
int spawn_start(const char *prog, char *const argv[], const struct spawn_fd *fds, size_t n_fds,
		unsigned flags, pid_t *ret_pid);

/**
 * spawn_wait:
 * @pid: a child from spawn_start()
 * @ret_status: its wait status (waitpid(2))
 *
 * Waits for @pid to end, through EINTR.
 *
 * Returns: 0; negative errno from waitpid().
 */
int spawn_wait(pid_t pid, int *ret_status);

#endif
