/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The executor's operations on the real system: btrfs-control ioctls,
 * device scans, a udev monitor (kernel uevents where no udevd runs), mounts
 * in worker processes with deadlines, area setup, readiness status.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/sysinfo.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <libmount.h>
#include <libudev.h>

#include "area.h"
#include "area_size.h"
#include "btrfs.h"
#include "daemon.h"
#include "mount_worker.h"
#include "sysops.h"
#include "units.h"

static int real_register(void *ud, const char *devnode)
{
	return btrfs_register_device(devnode);
}

static int real_devices_ready(void *ud, const char *devnode)
{
	return btrfs_devices_ready(devnode);
}

static int real_rescan(void *ud, struct inventory *ret, struct diag_list *dl)
{
	return inventory_scan(ret, dl);
}

static uint64_t real_now(void *ud)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * USEC_PER_SEC + (uint64_t)ts.tv_nsec / 1000;
}

/* Kernel uevents where no udevd runs; udev's own events (after its rules
 * created the device node) where it does. */
static void monitor_open(struct sysops *so)
{
	const char *source = access("/run/udev/control", F_OK) == 0 ? "udev" : "kernel";

	so->udev = udev_new();
	if (so->udev)
		so->monitor = udev_monitor_new_from_netlink(so->udev, source);
	if (!so->monitor ||
	    udev_monitor_filter_add_match_subsystem_devtype(so->monitor, "block", NULL) < 0 ||
	    udev_monitor_enable_receiving(so->monitor) < 0) {
		log_warning(so->lg, "cannot listen for device events (%s); devices are rechecked every second",
			    strerror(errno));
		udev_monitor_unref(so->monitor);
		so->monitor = NULL;
	}
}

static void monitor_close(struct sysops *so)
{
	udev_monitor_unref(so->monitor);
	udev_unref(so->udev);
}

static int poll_timeout_ms(uint64_t now, uint64_t deadline)
{
	if (deadline == USEC_INFINITY)
		return -1;
	if (deadline <= now)
		return 0;
	if (deadline - now > INT32_MAX * UINT64_C(1000))
		return INT32_MAX;
	return (int)((deadline - now + 999) / 1000);
}

static void drain_monitor(struct sysops *so)
{
	for (struct udev_device *d; (d = udev_monitor_receive_device(so->monitor));)
		udev_device_unref(d);
}

static int real_wait(void *ud, struct exec_job *const *jobs, size_t n, uint64_t deadline, bool *ret_event)
{
	struct sysops *so = ud;
	_cleanup_free_ struct pollfd *pfd = calloc(n + 2, sizeof(*pfd));
	int timeout = poll_timeout_ms(real_now(ud), deadline), r;

	if (!pfd)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		pfd[i] = (struct pollfd){ .fd = jobs[i]->fd, .events = POLLIN };
	pfd[n] = (struct pollfd){ .fd = so->monitor ? udev_monitor_get_fd(so->monitor) : -1, .events = POLLIN };
	pfd[n + 1] = (struct pollfd){ .fd = so->sigfd, .events = POLLIN };
	if (!so->monitor && (timeout < 0 || timeout > 1000))
		timeout = 1000; /* no event source: recheck devices every second */
	r = poll(pfd, n + 2, timeout);
	if (r < 0)
		return errno == EINTR ? 0 : -errno;
	if (pfd[n + 1].revents) {
		struct signalfd_siginfo si;

		if (read(so->sigfd, &si, sizeof(si)) == sizeof(si))
			log_warning(so->lg, "%s: stopping; what is mounted stays (`storaged stop` undoes it)",
				    strsignal((int)si.ssi_signo));
		return -EINTR;
	}
	for (size_t i = 0; i < n; i++)
		jobs[i]->finished = pfd[i].revents != 0;
	*ret_event = so->monitor ? pfd[n].revents != 0 : true;
	if (so->monitor && pfd[n].revents)
		drain_monitor(so);
	return 0;
}

static int real_mount_start(void *ud, const struct fstab_entry *e, const char *options, struct exec_job *job)
{
	struct sysops *so = ud;
	_cleanup_free_ struct mount_reply *here = malloc(sizeof(*here));
	pid_t pid = 0;
	int r = here ? mount_pool_start(&so->mounts, e, options, &job->fd, &pid, here) : -ENOMEM;

	if (r < 0)
		return r;
	job->pid = pid;
	job->target = e->target;
	if (r == 1) {
		job->fd = -1;
		job->finished = true;
		job->result = here->error;
		job->message = here->message[0] ? strdup(here->message) : NULL;
		job->mount_id = here->mount_id;
		job->mount_unique_id = here->mount_unique_id;
		job->mountpoint = here->mountpoint[0] ? strdup(here->mountpoint) : NULL;
	}
	return 0;
}

static int real_mount_finish(void *ud, struct exec_job *job, char *err, size_t len)
{
	struct sysops *so = ud;
	_cleanup_free_ struct mount_reply *rp = NULL;
	int r;

	if (job->fd < 0) { /* ran in mount_start */
		snprintf(err, len, "%s", job->message ? job->message : "");
		free(job->message);
		job->message = NULL;
		return job->result;
	}
	rp = malloc(sizeof(*rp));
	r = rp ? mount_pool_finish(&so->mounts, job->fd, rp) : -ENOMEM;

	job->fd = -1;
	if (r < 0) {
		snprintf(err, len, "the mount worker died (%s)", strerror(-r));
		return r;
	}
	snprintf(err, len, "%s", rp->message);
	if (rp->error < 0)
		return rp->error;
	job->mount_id = rp->mount_id;
	job->mount_unique_id = rp->mount_unique_id;
	job->mountpoint = rp->mountpoint[0] ? strdup(rp->mountpoint) : NULL;
	return 0;
}

static void real_mount_abandon(void *ud, struct exec_job *job)
{
	struct sysops *so = ud;

	mount_pool_abandon(&so->mounts, job->fd);
	job->fd = -1;
}

static void real_status(void *ud, const char *text)
{
	daemon_notify("STATUS=%s", text);
}

static uint64_t ram_bytes(void)
{
	struct sysinfo si;

	return sysinfo(&si) < 0 ? 0 : (uint64_t)si.totalram * si.mem_unit;
}

/* An area planned on a filesystem that was not mounted yet is surveyed and
 * sized now, on the filesystem it will cover. */
static int area_size_now(const struct plan_step *s, struct area_sizing *ret, struct diag_list *msgs)
{
	struct area_survey sv = { 0 };
	int r = area_survey_path(s->area->path, &sv);

	if (r < 0) {
		sv.valid = false;
		sv.error = r;
	}
	r = area_size_resolve(s->area, &sv, ram_bytes(), ret);
	if (r < 0)
		diag_error(msgs, NULL, 0, "area '%s': path '%s': %s; create the directory on the filesystem it is on, or correct path=",
			   s->area->name, s->area->path, strerror(sv.valid ? -r : -sv.error));
	return r;
}

static int real_area_setup(void *ud, const struct plan_step *s, struct diag_list *msgs)
{
	struct sysops *so = ud;
	struct area_sizing sizing;
	int r;

	if (!s->sizing_deferred)
		return area_setup(s->area, &s->sizing, so->state_dir, msgs);
	r = area_size_now(s, &sizing, msgs);
	if (r < 0)
		return r;
	return area_setup(s->area, &sizing, so->state_dir, msgs);
}

const struct exec_ops sysops_exec_ops = {
	.register_device = real_register,
	.devices_ready = real_devices_ready,
	.rescan = real_rescan,
	.mount_start = real_mount_start,
	.mount_finish = real_mount_finish,
	.mount_abandon = real_mount_abandon,
	.wait = real_wait,
	.area_setup = real_area_setup,
	.now = real_now,
	.status = real_status,
};

/* SIGINT and SIGTERM end a waiting first pass cleanly: running mounts are
 * abandoned, the state says so.  Returns: the signalfd, or -1. */
static int interrupt_fd(sigset_t *ret_old)
{
	sigset_t mask;

	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	if (sigprocmask(SIG_BLOCK, &mask, ret_old) < 0)
		return -1;
	return signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
}

void sysops_open(struct sysops *so, const struct logger *lg, const char *state_dir, bool catch_signals)
{
	*so = (struct sysops){ .lg = lg, .state_dir = state_dir, .sigfd = -1 };
	monitor_open(so);
	if (catch_signals)
		so->sigfd = interrupt_fd(&so->old_mask);
}

void sysops_close(struct sysops *so)
{
	struct signalfd_siginfo si;

	if (so->sigfd >= 0) {
		/* a signal that came while no wait listened (an area being
		 * seeded): taken here, or restoring the mask would kill us */
		while (read(so->sigfd, &si, sizeof(si)) == sizeof(si)) {
			if (!so->interrupted)
				log_warning(so->lg, "%s: stopping; what is mounted stays (`storaged stop` undoes it)",
					    strsignal((int)si.ssi_signo));
			so->interrupted = true;
		}
		close(so->sigfd);
		sigprocmask(SIG_SETMASK, &so->old_mask, NULL);
	}
	mount_pool_close(&so->mounts);
	monitor_close(so);
}
