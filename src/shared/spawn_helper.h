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

/*
 * @name: a bare program name ("mkfs.ext4")
 * @buf: receives its path
 *
 * Looks in /usr/sbin, /sbin, /usr/bin and /bin, in that order (not $PATH:
 * storaged runs as root and must not run what an environment points at).
 *
 * Returns: 0; -ENOENT when none of them has an executable @name.
 */
int spawn_find_program(const char *name, char *buf, size_t len);


/* libmount's FS_SEARCH_PATH (util-linux libmount/src/context.c, 2.38 to
 * 2.41), and /usr/sbin for systems where /sbin is not a link to it */
#define MOUNT_HELPER_DIRS "/sbin:/usr/sbin:/sbin/fs.d:/sbin/fs"

/*
 * @dirs: ':'-separated directories to look in; NULL for MOUNT_HELPER_DIRS
 *        (a test's own directory otherwise)
 * @fstype: the entry's filesystem type; "" or NULL looks for none
 * @buf: the helper's path, on success
 *
 * The program libmount would run for @fstype: an executable "mount.TYPE"
 * in one of @dirs, and for "TYPE.SUBTYPE" (fuse.sshfs) also "mount.TYPE"
 * (util-linux libmount/src/context.c mnt_context_prepare_helper()).  Like
 * libmount, none for "none", a list of types or a type holding "/..".
 * A helper is a program that may hang.
 *
 * Returns: 0 with the path in @buf; -ENOENT when there is no helper.
 */
int mount_helper_find(const char *dirs, const char *fstype, char *buf, size_t len);

/*
 * @dirs: as for mount_helper_find()
 * @fstype: an fstab type, or a comma-separated list of them (libmount
 *          tries each type of a list in turn, each with its helper)
 *
 * Returns: whether libmount would run a helper for one of the types.
 */
bool mount_helper_exists(const char *dirs, const char *fstype);

/*
 * @prog: absolute path of the program
 * @argv: its argv, NULL-terminated (argv[0] as the program should see it)
 * @fds: descriptors to give the child (dup2 of each .fd onto .target; the
 *       .fd may be O_CLOEXEC, and must not equal its .target)
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

/*
 * @pid: a child from spawn_start()
 * @ret_status: its wait status (waitpid(2))
 *
 * Waits for @pid to end, through EINTR.
 *
 * Returns: 0; negative errno from waitpid().
 */
int spawn_wait(pid_t pid, int *ret_status);

#endif
