/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Resident mode (see resident.h): the resident lock, the pid file, the
 * detach into the background, and the epoll loop.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/file.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include <libudev.h>

#include "daemon.h"
#include "liveness.h"
#include "resident.h"
#include "devices/udev_change.h"
#include "shared/sigfd.h"
#include "state/atomic_file.h"
#include "shared/util.h"

/* 250 ms lets a disk and its partitions arrive before one pass. */
#define SETTLE_USEC (250 * USEC_PER_MSEC)

/* ------------------------------------------------------------ lock and pid file */

/* One resident per state directory: it holds an exclusive lock on
 * DIR/resident for its lifetime (liveness.h: `stop` and `status` know it
 * alive from that lock, not from its pid file).  Returns: the locked fd;
 * -EWOULDBLOCK when another resident holds it; other negative errno. */
static int lock_resident(const char *state_dir)
{
	_cleanup_free_ char *path = NULL;

	if (asprintf(&path, "%s/resident", state_dir) < 0)
		return -ENOMEM;
	return liveness_take(path);
}

/* For messages and signals: `storaged stop` never reads half a pid
 * (daemon_write_pid()) and believes it only while the lock is held by
 * the process it names (liveness_pid()). */
static int write_pidfile(const char *state_dir, pid_t pid)
{
	_cleanup_free_ char *path = NULL;

	if (asprintf(&path, "%s/storaged.pid", state_dir) < 0)
		return -ENOMEM;
	return daemon_write_pid(path, pid);
}

static void remove_pidfile(const char *state_dir)
{
	_cleanup_free_ char *pidfile = NULL;

	if (asprintf(&pidfile, "%s/storaged.pid", state_dir) >= 0)
		file_atomic_remove(pidfile);
}

/* The parent writes the child's pid file, so that it exists when `start`
 * returns; the child stays and logs to syslog.  Returns: in the parent, 1;
 * in the child, 0; negative errno. */
static int detach(const char *state_dir, struct logger *child_lg)
{
	pid_t pid = fork();
	int fd, r;

	if (pid < 0)
		return -errno;
	if (pid > 0) {
		r = write_pidfile(state_dir, pid);
		return r < 0 ? r : 1;
	}
	setsid();
	if (chdir("/") < 0)
		_exit(1);
	fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (fd >= 0) {
		dup2(fd, STDIN_FILENO);
		dup2(fd, STDOUT_FILENO);
		dup2(fd, STDERR_FILENO);
		close(fd);
	}
	log_init_detached(child_lg, LOG_INFO);
	return 0;
}

/* ------------------------------------------------------------ the loop */

struct loop {
	int epfd, sigfd, timerfd;
	int synctimerfd; /* the next periodic sync, disarmed when none */
	int wakefd; /* borrowed: resident_stay()'s @wake_fd, -1: none */
	uint64_t since; /* CLOCK_MONOTONIC µs when the loop began */
	struct udev *udev;
	struct udev_monitor *monitor;
};

static void loop_done(struct loop *l)
{
	l->epfd = safe_close(l->epfd);
	l->sigfd = safe_close(l->sigfd);
	l->timerfd = safe_close(l->timerfd);
	l->synctimerfd = safe_close(l->synctimerfd);
	udev_change_monitor_close(l->udev, l->monitor);
}

static int watch(struct loop *l, int fd)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };

	return epoll_ctl(l->epfd, EPOLL_CTL_ADD, fd, &ev) < 0 ? -errno : 0;
}

static void resident_signals(sigset_t *mask)
{
	sigemptyset(mask);
	sigaddset(mask, SIGTERM);
	sigaddset(mask, SIGINT);
	sigaddset(mask, SIGHUP);
}

int resident_block_signals(void)
{
	sigset_t mask;

	resident_signals(&mask);
	return sigprocmask(SIG_BLOCK, &mask, NULL) < 0 ? -errno : 0;
}

static int loop_init(struct loop *l, int wake_fd)
{
	sigset_t mask;
	int r;

	*l = (struct loop){ .epfd = -1, .sigfd = -1, .timerfd = -1, .synctimerfd = -1, .wakefd = wake_fd,
			    .since = now_monotonic_usec() };
	resident_signals(&mask);
	l->sigfd = sigfd_open(&mask, NULL);
	if (l->sigfd < 0)
		return l->sigfd;
	r = udev_change_monitor_open(&l->udev, &l->monitor);
	if (r < 0)
		return r;
	l->timerfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	l->synctimerfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	l->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (l->timerfd < 0 || l->synctimerfd < 0 || l->epfd < 0)
		return -errno;
	if (watch(l, l->sigfd) < 0 || watch(l, l->timerfd) < 0 || watch(l, l->synctimerfd) < 0 ||
	    watch(l, udev_monitor_get_fd(l->monitor)) < 0 || (wake_fd >= 0 && watch(l, wake_fd) < 0))
		return -errno;
	return 0;
}

/* A burst of events (a disk and its partitions) makes one pass. */
static void settle_later(struct loop *l, uint64_t usec)
{
	struct itimerspec its = {
		.it_value = { .tv_sec = usec / USEC_PER_SEC, .tv_nsec = (usec % USEC_PER_SEC) * 1000 },
	};

	udev_change_monitor_drain(l->monitor);
	timerfd_settime(l->timerfd, 0, &its, NULL);
}

/* Runs the syncs that are due and arms the timer for the next (a
 * relative, monotonic delay: a clock step does not skip a sync). */
static void sync_then_rearm(struct loop *l, const struct logger *lg, resident_sync_fn sync, void *userdata,
			    bool on_timer)
{
	uint64_t next = sync(userdata, lg, l->since, on_timer);
	struct itimerspec its = { .it_value = { .tv_sec = (time_t)next } };

	timerfd_settime(l->synctimerfd, 0, &its, NULL);
}

/* Returns: 1 to go on, 0 to leave. */
static int on_signal(struct loop *l, const struct logger *lg, resident_pass_fn pass, void *userdata)
{
	struct signalfd_siginfo si;

	if (read(l->sigfd, &si, sizeof(si)) != sizeof(si))
		return 1;
	if (si.ssi_signo != SIGHUP) {
		log_info(lg, "%s: leaving; mounts and areas stay (`%s stop` undoes them)",
			 strsignal((int)si.ssi_signo), log_self(lg));
		notify_send("STOPPING=1");
		return 0;
	}
	log_info(lg, "SIGHUP: reloading configuration and fstab");
	notify_send("RELOADING=1");
	pass(userdata, lg, true);
	notify_send("READY=1");
	return 1;
}

/* Returns: 0 after SIGTERM/SIGINT; negative errno when the loop cannot be
 * set up (logged). */
static int run_loop(const struct logger *lg, resident_pass_fn pass, resident_sync_fn sync, int wake_fd,
		    void *userdata)
{
	struct loop l;
	int go = 1, r;

	r = loop_init(&l, wake_fd);
	if (r < 0) {
		log_error(lg, "cannot stay resident: %s", strerror(-r));
		loop_done(&l);
		return r;
	}
	log_info(lg, "resident: handling devices as they appear (SIGHUP reloads, SIGTERM leaves)");
	/* A device that appeared after the first pass read the devices and
	 * before the monitor above was open sent its event to nobody: one
	 * pass now, as for an event, finds it (a pass with nothing to do
	 * changes and prints nothing). */
	settle_later(&l, 1);
	sync_then_rearm(&l, lg, sync, userdata, false);
	while (go) {
		struct epoll_event ev[8];
		int n = epoll_wait(l.epfd, ev, 8, -1);
		uint64_t ticks;

		if (n < 0 && errno != EINTR)
			break;
		for (int k = 0; k < n && go; k++) {
			if (ev[k].data.fd == l.sigfd) {
				go = on_signal(&l, lg, pass, userdata);
				if (go)
					sync_then_rearm(&l, lg, sync, userdata, false);
			} else if (ev[k].data.fd == l.timerfd) {
				if (read(l.timerfd, &ticks, sizeof(ticks)) == sizeof(ticks)) {
					pass(userdata, lg, true);
					sync_then_rearm(&l, lg, sync, userdata, false);
				}
			} else if (ev[k].data.fd == l.synctimerfd || ev[k].data.fd == l.wakefd) {
				if (read(ev[k].data.fd, &ticks, sizeof(ticks)) == sizeof(ticks))
					sync_then_rearm(&l, lg, sync, userdata, true);
			} else {
				settle_later(&l, SETTLE_USEC);
			}
		}
	}
	loop_done(&l);
	return 0;
}

/* ------------------------------------------------------------ staying */

int resident_stay(const char *state_dir, bool in_background, const struct logger *lg,
		  resident_pass_fn pass, resident_sync_fn sync, int wake_fd, void *userdata)
{
	struct logger child_lg;
	/* in the parent of a detached child: closed, the child keeps the lock */
	_cleanup_close_ int lock = -EBADF;
	int r;

	lock = lock_resident(state_dir);
	if (lock == -EWOULDBLOCK) {
		log_info(lg, "a resident storaged already handles devices for '%s'; this one does not stay",
			 state_dir);
		return 0;
	}
	if (lock < 0) {
		log_error(lg, "cannot stay resident: '%s/resident': %s", state_dir, strerror(-lock));
		return lock;
	}
	if (in_background) {
		child_lg.self = lg->self;
		r = detach(state_dir, &child_lg);
		if (r != 0) {
			if (r < 0)
				log_error(lg, "cannot stay resident in the background: %s", strerror(-r));
			return r < 0 ? r : 0;
		}
		lg = &child_lg;
	} else {
		write_pidfile(state_dir, getpid());
	}
	r = run_loop(lg, pass, sync, wake_fd, userdata);
	remove_pidfile(state_dir);
	lock = safe_close(lock);
	if (in_background)
		log_close(&child_lg);
	return r < 0 ? r : 1;
}
