/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "daemon.h"
#include "shared/log.h"
#include "state/atomic_file.h"
#include "shared/util.h"

int daemon_notify(const char *fmt, ...)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	_cleanup_free_ char *msg = NULL;
	size_t len;
	va_list ap;
	_cleanup_close_ int fd = -EBADF;
	int r;

	if (!path || !path[0])
		return 0;
	len = strlen(path);
	if ((path[0] != '/' && path[0] != '@') || len >= sizeof(sa.sun_path))
		return -EINVAL;
	memcpy(sa.sun_path, path, len);
	if (path[0] == '@')
		sa.sun_path[0] = '\0'; /* abstract namespace */
	va_start(ap, fmt);
	r = vasprintf(&msg, fmt, ap);
	va_end(ap);
	if (r < 0)
		return -ENOMEM;
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	return sendto(fd, msg, strlen(msg), MSG_NOSIGNAL, (struct sockaddr *)&sa,
		      offsetof(struct sockaddr_un, sun_path) + len) < 0
		       ? -errno
		       : 1;
}

int daemon_monitor_open(struct udev **ret_udev, struct udev_monitor **ret_monitor)
{
	const char *source = access("/run/udev/control", F_OK) == 0 ? "udev" : "kernel";
	struct udev *udev = udev_new();
	struct udev_monitor *mon = udev ? udev_monitor_new_from_netlink(udev, source) : NULL;
	int r = 0;

	if (!mon)
		r = errno ? -errno : -ENOMEM;
	else if (udev_monitor_filter_add_match_subsystem_devtype(mon, "block", NULL) < 0 ||
		 udev_monitor_enable_receiving(mon) < 0)
		r = errno ? -errno : -EIO;
	if (r < 0) {
		daemon_monitor_close(udev, mon);
		return r;
	}
	*ret_udev = udev;
	*ret_monitor = mon;
	return 0;
}

void daemon_monitor_drain(struct udev_monitor *mon)
{
	for (struct udev_device *d; mon && (d = udev_monitor_receive_device(mon));)
		udev_device_unref(d);
}

void daemon_monitor_close(struct udev *udev, struct udev_monitor *mon)
{
	udev_monitor_unref(mon);
	udev_unref(udev);
}

int daemon_signal_fd(const sigset_t *mask, sigset_t *ret_old)
{
	int fd;

	if (sigprocmask(SIG_BLOCK, mask, ret_old) < 0)
		return -errno;
	fd = signalfd(-1, mask, SFD_CLOEXEC | SFD_NONBLOCK);
	return fd < 0 ? -errno : fd;
}

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
