/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <unistd.h>

#include <libudev.h>

#include "daemon.h"

int daemon_notify(const char *fmt, ...)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	_cleanup_free_ char *msg = NULL;
	size_t len;
	va_list ap;
	int fd, r;

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
	r = sendto(fd, msg, strlen(msg), MSG_NOSIGNAL, (struct sockaddr *)&sa,
		   offsetof(struct sockaddr_un, sun_path) + len) < 0 ? -errno : 1;
	close(fd);
	return r;
}

struct loop {
	int epfd, sigfd, timerfd;
	struct udev *udev;
	struct udev_monitor *monitor;
};

static void loop_done(struct loop *l)
{
	if (l->epfd >= 0)
		close(l->epfd);
	if (l->sigfd >= 0)
		close(l->sigfd);
	if (l->timerfd >= 0)
		close(l->timerfd);
	udev_monitor_unref(l->monitor);
	udev_unref(l->udev);
}

static int watch(struct loop *l, int fd)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };

	return epoll_ctl(l->epfd, EPOLL_CTL_ADD, fd, &ev) < 0 ? -errno : 0;
}

static int loop_init(struct loop *l)
{
	const char *source = access("/run/udev/control", F_OK) == 0 ? "udev" : "kernel";
	sigset_t mask;

	*l = (struct loop){ .epfd = -1, .sigfd = -1, .timerfd = -1 };
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0)
		return -errno;
	l->sigfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	l->timerfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	l->epfd = epoll_create1(EPOLL_CLOEXEC);
	l->udev = udev_new();
	if (l->udev)
		l->monitor = udev_monitor_new_from_netlink(l->udev, source);
	if (l->sigfd < 0 || l->timerfd < 0 || l->epfd < 0 || !l->monitor)
		return -errno ? -errno : -ENOMEM;
	if (udev_monitor_filter_add_match_subsystem_devtype(l->monitor, "block", NULL) < 0 ||
	    udev_monitor_enable_receiving(l->monitor) < 0)
		return -EIO;
	if (watch(l, l->sigfd) < 0 || watch(l, l->timerfd) < 0 || watch(l, udev_monitor_get_fd(l->monitor)) < 0)
		return -errno;
	return 0;
}

/* A burst of events (a disk and its partitions) makes one pass. */
static void settle_later(struct loop *l, uint64_t usec)
{
	struct itimerspec its = {
		.it_value = { .tv_sec = usec / USEC_PER_SEC, .tv_nsec = (usec % USEC_PER_SEC) * 1000 },
	};

	for (struct udev_device *d; (d = udev_monitor_receive_device(l->monitor));)
		udev_device_unref(d);
	timerfd_settime(l->timerfd, 0, &its, NULL);
}

/* Returns: 1 to go on, 0 to leave. */
static int on_signal(struct loop *l, const struct logger *lg, daemon_pass_fn pass, void *userdata)
{
	struct signalfd_siginfo si;

	if (read(l->sigfd, &si, sizeof(si)) != sizeof(si))
		return 1;
	if (si.ssi_signo != SIGHUP) {
		log_info(lg, "%s: leaving; mounts and areas stay (`storaged stop` undoes them)",
			 strsignal((int)si.ssi_signo));
		daemon_notify("STOPPING=1");
		return 0;
	}
	log_info(lg, "SIGHUP: reloading configuration and fstab");
	daemon_notify("RELOADING=1");
	pass(userdata, true);
	daemon_notify("READY=1");
	return 1;
}

int daemon_loop(const struct logger *lg, daemon_pass_fn pass, void *userdata, uint64_t settle_usec)
{
	struct loop l;
	int go = 1, r;

	r = loop_init(&l);
	if (r < 0) {
		log_error(lg, "cannot stay resident: %s", strerror(-r));
		loop_done(&l);
		return 1;
	}
	log_info(lg, "resident: handling devices as they appear (SIGHUP reloads, SIGTERM leaves)");
	while (go) {
		struct epoll_event ev[4];
		int n = epoll_wait(l.epfd, ev, 4, -1);
		uint64_t ticks;

		if (n < 0 && errno != EINTR)
			break;
		for (int k = 0; k < n && go; k++) {
			if (ev[k].data.fd == l.sigfd) {
				go = on_signal(&l, lg, pass, userdata);
			} else if (ev[k].data.fd == l.timerfd) {
				if (read(l.timerfd, &ticks, sizeof(ticks)) == sizeof(ticks))
					pass(userdata, true);
			} else {
				settle_later(&l, settle_usec);
			}
		}
	}
	loop_done(&l);
	return 0;
}
