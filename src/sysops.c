/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The executor's operations on the real system: btrfs-control ioctls,
 * device scans, a udev monitor (kernel uevents where no udevd runs), mounts
 * in child processes with deadlines, area setup, readiness status.
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
#include "safepath.h"
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
	return inventory_scan(ret, NULL, dl);
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

/* Runs in a child process so that a hung mount (a dead server, a helper
 * that never returns) can be abandoned at its deadline. */
static _Noreturn void refuse(int fd, const char *what, const char *path, int r, const char *why)
{
	dprintf(fd, "refusing to mount: %s '%s': %s", what, path, r == -EPERM ? why : strerror(-r));
	_exit(1);
}

static _Noreturn void mount_child(const struct fstab_entry *e, const char *options, int fd)
{
	struct libmnt_context *cxt;
	char buf[512] = "";
	sigset_t none;
	int rc, ex;

	/* The resident loop blocks signals for its signalfd; a mount helper
	 * must not inherit that. */
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	rc = safepath_check(e->target, buf, sizeof(buf));
	if (rc < 0)
		refuse(fd, "mount point", e->target, rc, buf);
	if (e->bind && e->source[0] == '/' && (rc = safepath_check(e->source, buf, sizeof(buf))) < 0)
		refuse(fd, "bind source", e->source, rc, buf);
	cxt = mnt_new_context();
	if (!cxt)
		_exit(1);
	/* Never read /etc/fstab: the entry is complete as given. */
	mnt_context_set_optsmode(cxt, MNT_OMODE_IGNORE | MNT_OMODE_NOTAB);
	mnt_context_set_source(cxt, e->source);
	mnt_context_set_target(cxt, e->target);
	if (e->fstype && strcmp(e->fstype, "auto") != 0)
		mnt_context_set_fstype(cxt, e->fstype);
	if (options)
		mnt_context_set_options(cxt, options);
	rc = mnt_context_mount(cxt);
	ex = mnt_context_get_excode(cxt, rc, buf, sizeof(buf));
	if (ex != 0 && buf[0])
		(void)!write(fd, buf, strnlen(buf, sizeof(buf)));
	mnt_free_context(cxt);
	_exit(ex == 0 ? 0 : 1);
}

static int real_mount_start(void *ud, const struct fstab_entry *e, const char *options, struct exec_job *job)
{
	int p[2], r;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	pid = fork();
	if (pid < 0) {
		r = -errno;
		close(p[0]);
		close(p[1]);
		return r;
	}
	if (pid == 0) {
		close(p[0]);
		mount_child(e, options, p[1]);
	}
	close(p[1]);
	job->fd = p[0];
	job->pid = pid;
	job->target = e->target;
	return 0;
}

#ifndef STATX_MNT_ID_UNIQUE
#define STATX_MNT_ID_UNIQUE 0x4000U /* linux/stat.h, Linux 6.8 */
#endif

/* The never-reused ID of the topmost mount on @path, or 0 where the kernel
 * has none: the mount table's IDs are reused as soon as they are free, so
 * they cannot tell storaged's mount from one made after it was unmounted. */
uint64_t sysops_mount_unique_id(const char *path)
{
	struct statx stx;

	if (statx(AT_FDCWD, path, AT_NO_AUTOMOUNT, STATX_MNT_ID_UNIQUE, &stx) < 0 ||
	    !(stx.stx_mask & STATX_MNT_ID_UNIQUE))
		return 0;
	return stx.stx_mnt_id;
}

/* The topmost mount on @mountpoint (links already resolved): its ID, or 0. */
static int mount_id_at(const char *mountpoint)
{
	struct libmnt_table *tb = mnt_new_table_from_file("/proc/self/mountinfo");
	struct libmnt_fs *fs = tb ? mnt_table_find_target(tb, mountpoint, MNT_ITER_BACKWARD) : NULL;
	int id = fs ? mnt_fs_get_id(fs) : 0;

	mnt_unref_table(tb);
	return id;
}

static int real_mount_finish(void *ud, struct exec_job *job, char *err, size_t len)
{
	ssize_t n = read(job->fd, err, len - 1);
	int st = 0;

	err[n > 0 ? n : 0] = '\0';
	close(job->fd);
	job->fd = -1;
	while (waitpid(job->pid, &st, 0) < 0)
		if (errno != EINTR)
			return -errno;
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return -EIO;
	if (realpath(job->target, job->mountpoint)) {
		job->mount_id = mount_id_at(job->mountpoint);
		job->mount_unique_id = sysops_mount_unique_id(job->mountpoint);
	}
	return 0;
}

static void real_mount_abandon(void *ud, struct exec_job *job)
{
	/* A mount stuck in the kernel may not die at once; its zombie is
	 * reaped when storaged exits. */
	kill(job->pid, SIGKILL);
	waitpid(job->pid, NULL, WNOHANG);
	close(job->fd);
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
	if (so->sigfd >= 0) {
		close(so->sigfd);
		sigprocmask(SIG_SETMASK, &so->old_mask, NULL);
	}
	monitor_close(so);
}
