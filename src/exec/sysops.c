/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The operations table (ops.h) on the real system: btrfs-control ioctls,
 * device scans, a udev monitor (kernel uevents where no udevd runs), mounts
 * (one that can hang in a child of its own, killed at its deadline),
 * unmounts, areas, the state and readiness files, the service manager's
 * status.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <libmount.h>
#include <libudev.h>

#include "area/area.h"
#include "devices/btrfs.h"
#include "devices/btrfs_scrub.h"
#include "devices/udev_change.h"
#include "shared/sigfd.h"
#include "mount/mount_child.h"
#include "mount/mountopt.h"
#include "mount/umount.h"
#include "mount/view.h"
#include "state/state.h"
#include "status/status_live.h"
#include "status/status_prom.h"
#include "sysops.h"

static int real_register(void *ud, const char *devnode)
{
	return btrfs_register_device(devnode);
}

static int real_devices_ready(void *ud, const char *devnode)
{
	return btrfs_devices_ready(devnode);
}

static int real_forget(void *ud, const char *devnode)
{
	return btrfs_forget_device(devnode);
}

static int real_rescan(void *ud, struct inventory *ret, struct diag_list *dl)
{
	struct sysops *so = ud;

	return inventory_scan(ret, so->scan_depth, dl);
}

static uint64_t real_now(void *ud)
{
	return now_monotonic_usec();
}

static void monitor_open(struct sysops *so)
{
	int r = udev_change_monitor_open(&so->udev, &so->monitor);

	if (r < 0)
		log_warning(so->lg, "cannot listen for device events (%s); devices are rechecked every second",
			    strerror(-r));
}

/* A job's private part: its child's socket, or the result of a mount
 * that ran here. */
struct real_job {
	int fd; /* readable when the child replies; -1 when it ran here */
	int result;
	char *message; /* owned, may be NULL */
};

static void real_job_free(struct exec_job *job)
{
	struct real_job *rj = job->priv;

	if (rj)
		free(rj->message);
	free(rj);
	job->priv = NULL;
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

static int real_wait(void *ud, struct exec_job *const *jobs, size_t n, uint64_t deadline, bool *ret_event)
{
	struct sysops *so = ud;
	_cleanup_free_ struct pollfd *pfd = calloc(n + 2, sizeof(*pfd));
	uint64_t now = real_now(ud);
	int timeout, r;

	if (!pfd)
		return -ENOMEM;
	/* Under a service manager its timeout is kept ahead of the wait: a
	 * device-timeout or mount-timeout longer than TimeoutStartSec= (or
	 * "infinity") needs no drop-in, and the wait wakes at least every
	 * NOTIFY_EXTEND_STEP_USEC to extend it again. */
	if (notify_socket_set()) {
		if (deadline > now && deadline - now > NOTIFY_EXTEND_STEP_USEC)
			deadline = now + NOTIFY_EXTEND_STEP_USEC;
		notify_keep_ahead(&so->extend, deadline);
	}
	timeout = poll_timeout_ms(now, deadline);
	for (size_t i = 0; i < n; i++)
		pfd[i] = (struct pollfd){ .fd = ((struct real_job *)jobs[i]->priv)->fd, .events = POLLIN };
	pfd[n] = (struct pollfd){ .fd = so->monitor ? udev_monitor_get_fd(so->monitor) : -1,
				  .events = POLLIN };
	pfd[n + 1] = (struct pollfd){ .fd = so->sigfd, .events = POLLIN };
	if (!so->monitor && (timeout < 0 || timeout > 1000))
		timeout = 1000; /* no event source: recheck devices every second */
	r = poll(pfd, n + 2, timeout);
	if (r < 0)
		return errno == EINTR ? 0 : -errno;
	if (pfd[n + 1].revents) {
		struct signalfd_siginfo si;

		if (read(so->sigfd, &si, sizeof(si)) == sizeof(si))
			log_warning(so->lg, "%s: stopping; what is mounted stays (`%s stop` undoes it)",
				    strsignal((int)si.ssi_signo), log_self(so->lg));
		return -EINTR;
	}
	for (size_t i = 0; i < n; i++)
		jobs[i]->finished = pfd[i].revents != 0;
	*ret_event = so->monitor ? pfd[n].revents != 0 : true;
	if (so->monitor && pfd[n].revents)
		udev_change_monitor_drain(so->monitor);
	return 0;
}

/* A mount that failed before it was started: @job finished, with @why. */
static int mount_refused(struct exec_job *job, int err, const char *why)
{
	struct real_job *rj = calloc(1, sizeof(*rj));

	if (!rj)
		return -ENOMEM;
	rj->fd = -1;
	rj->result = err;
	rj->message = strdup(why);
	job->priv = rj;
	job->finished = true;
	return 0;
}

/* libmount's userspace steps (mountopt.h) are done here, before the mount
 * starts: the new mount API takes the options as they are, and libmount
 * finds nothing left to do. */
static int real_mount_start(void *ud, const struct fstab_entry *e, const char *options, struct exec_job *job)
{
	struct sysops *so = ud;
	_cleanup_free_ struct mount_reply *here = malloc(sizeof(*here));
	_cleanup_free_ char *fixed = NULL;
	struct real_job *rj = calloc(1, sizeof(*rj));
	char why[512] = "";
	pid_t pid = 0;
	int r = here && rj ? mountopt_userspace(options, mountopt_lsm_running(), &fixed, why, sizeof(why))
			   : -ENOMEM;

	if (r == -ENOENT) {
		free(rj);
		return mount_refused(job, r, why);
	}
	if (r == 0)
		r = mount_child_start(&so->mounts, e, fixed, &rj->fd, &pid, here);
	if (r < 0) {
		free(rj);
		return r;
	}
	job->priv = rj;
	if (r == 1) {
		rj->fd = -1;
		rj->result = here->error;
		rj->message = here->message[0] ? strdup(here->message) : NULL;
		job->finished = true;
		job->mount = here->mount;
		job->mountpoint = here->mountpoint[0] ? strdup(here->mountpoint) : NULL;
	}
	return 0;
}

static int real_mount_finish(void *ud, struct exec_job *job, char *err, size_t len)
{
	struct sysops *so = ud;
	struct real_job *rj = job->priv;
	_cleanup_free_ struct mount_reply *rp = NULL;
	int r;

	if (rj->fd < 0) { /* ran in mount_start */
		snprintf(err, len, "%s", rj->message ? rj->message : "");
		r = rj->result;
		real_job_free(job);
		return r;
	}
	rp = malloc(sizeof(*rp));
	r = rp ? mount_child_finish(&so->mounts, rj->fd, rp) : -ENOMEM;
	if (r == 0 && rp->error == MOUNT_REPLY_PENDING) {
		snprintf(err, len, "%s", rp->message);
		return 1; /* the job goes on */
	}
	real_job_free(job);
	if (r < 0) {
		snprintf(err, len, "the mount's child process died (%s)", strerror(-r));
		return r;
	}
	snprintf(err, len, "%s", rp->message);
	if (rp->error < 0)
		return rp->error;
	job->mount = rp->mount;
	job->mountpoint = rp->mountpoint[0] ? strdup(rp->mountpoint) : NULL;
	return 0;
}

static void real_mount_abandon(void *ud, struct exec_job *job)
{
	struct sysops *so = ud;
	struct real_job *rj = job->priv;

	if (rj->fd >= 0)
		mount_child_abandon(&so->mounts, rj->fd);
	real_job_free(job);
}

static void real_status(void *ud, const char *text)
{
	notify_send("STATUS=%s", text);
}

static int real_area_setup(void *ud, const struct plan_step *s, struct diag_list *msgs)
{
	struct sysops *so = ud;
	int r;

	/* an area's mount may cover a directory the pass's walks kept */
	mount_children_forget_dirs(&so->mounts);
	/* a deferred area is sized by area_setup(), when it runs */
	r = area_setup(s->area, s->sizing_deferred ? NULL : &s->sizing, so->state_dir, log_self(so->lg), msgs);
	/* set up anew: the last sync status shows is not an earlier one's */
	if (r == 0 && status_prom_forget_sync(so->state_dir, s->area->name) < 0)
		diag_warning(msgs, NULL, 0, "area '%s': cannot forget the last sync of the area of that name before it",
			     s->area->name);
	return r;
}

/* ------------------------------------------------------------------ */
/* stop's side of mounts */

static int real_mount_inspect(void *ud, const struct state_record *rec, struct mount_view *ret)
{
	const char *mp = rec->mountpoint ? rec->mountpoint : rec->id;
	struct libmnt_table *tb = view_read_table(VIEW_MOUNTINFO);
	struct mount_view v = { 0 };
	struct libmnt_fs *fs = NULL, *top, *child = NULL;
	int r = tb ? 0 : -ENOMEM;

	/* at its mount point: an ID found elsewhere was freed and reused,
	 * unless its identity says it is the one storaged made */
	if (tb)
		fs = rec->mount_id ? view_find_id(tb, rec->mount_id)
				   : mnt_table_find_target(tb, mp, MNT_ITER_FORWARD);
	v.recorded_present = fs && streq(mnt_fs_get_target(fs), mp);
	if (r == 0 && !v.recorded_present && (mp = live_mount_moved(tb, rec))) {
		v.recorded_present = true;
		v.location = strdup(mp);
		if (!v.location)
			r = -ENOMEM;
	}
	top = r == 0 ? mnt_table_find_target(tb, mp, MNT_ITER_BACKWARD) : NULL;
	if (top) {
		v.has_top = true;
		v.top_id = mnt_fs_get_id(top);
		v.top_id_reused = live_id_taken_over(rec, mp, (unsigned)v.top_id);
		v.top_source = mnt_fs_get_source(top) ? strdup(mnt_fs_get_source(top)) : NULL;
		v.top_fstype = mnt_fs_get_fstype(top) ? strdup(mnt_fs_get_fstype(top)) : NULL;
		/* an rbind's submounts go with it (umount_recorded()) */
		child = rec->recursive ? NULL : view_find_child(tb, (uint64_t)v.top_id, mp);
	}
	if (child && !(v.child_text = view_fs_text(child)))
		r = -ENOMEM;
	if (child && r == 0 && !(v.child_target = strdup(mnt_fs_get_target(child))))
		r = -ENOMEM;
	mnt_unref_table(tb);
	if (r == 0)
		*ret = v;
	else
		mount_view_done(&v);
	return r;
}

static int real_umount(void *ud, const char *mp, const struct state_record *rec, char *err, size_t len)
{
	struct sysops *so = ud;
	struct mount_identity id = live_recorded_identity(rec);

	/* what a walk kept below @mp leaves the tree with the mount */
	mount_children_forget_dirs(&so->mounts);
	return umount_recorded(so->lg, mp, &id, rec->recursive, err, len);
}

/* ------------------------------------------------------------------ */
/* areas, state, readiness */

static int real_area_teardown(void *ud, const char *name, struct diag_list *msgs)
{
	struct sysops *so = ud;

	return area_teardown(so->state_dir, log_self(so->lg), name, true, msgs);
}

static int real_area_sync(void *ud, const char *name, struct diag_list *msgs)
{
	struct sysops *so = ud;

	return area_sync(so->state_dir, log_self(so->lg), name, msgs);
}

static int real_area_list(void *ud, char ***ret)
{
	struct sysops *so = ud;

	return area_list_names(so->state_dir, ret);
}

static int real_state_save(void *ud, struct state *st, bool compact)
{
	struct sysops *so = ud;

	/* the end of a run: what the next pass walks, it walks afresh */
	if (compact)
		mount_children_forget_dirs(&so->mounts);
	return compact ? state_save(so->state_dir, st) : state_append(so->state_dir, st);
}

static int real_mark_ready(void *ud, const char *fsid, bool ready)
{
	struct sysops *so = ud;

	return ready ? state_mark_ready(so->state_dir, fsid) : state_clear_ready(so->state_dir, fsid);
}

static int real_announce_usable(void *ud, const char *fsid)
{
	(void)ud;
	return udev_change_btrfs_members(fsid);
}

static int real_scrub_start(void *ud, const char *mountpoint)
{
	(void)ud;
	return btrfs_scrub_start(mountpoint);
}

const struct ops sysops_ops = {
	.register_device = real_register,
	.devices_ready = real_devices_ready,
	.forget_device = real_forget,
	.rescan = real_rescan,
	.mount_start = real_mount_start,
	.mount_finish = real_mount_finish,
	.mount_abandon = real_mount_abandon,
	.mount_inspect = real_mount_inspect,
	.umount = real_umount,
	.area_setup = real_area_setup,
	.area_teardown = real_area_teardown,
	.area_sync = real_area_sync,
	.area_list = real_area_list,
	.state_save = real_state_save,
	.mark_ready = real_mark_ready,
	.announce_usable = real_announce_usable,
	.scrub_start = real_scrub_start,
	.wait = real_wait,
	.now = real_now,
	.status = real_status,
};

/* SIGINT and SIGTERM end a waiting first pass cleanly: running mounts are
 * abandoned, the state says so.  Returns: the signalfd, or negative errno. */
static int interrupt_fd(sigset_t *ret_old)
{
	sigset_t mask;

	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	return sigfd_open(&mask, ret_old);
}

void sysops_open(struct sysops *so, const struct logger *lg, const char *state_dir, bool catch_signals)
{
	*so = (struct sysops){ .lg = lg, .state_dir = state_dir, .sigfd = -1 };
	monitor_open(so);
	if (catch_signals)
		so->sigfd = interrupt_fd(&so->old_mask);
}

void sysops_open_for_stop(struct sysops *so, const struct logger *lg, const char *state_dir)
{
	*so = (struct sysops){ .lg = lg, .state_dir = state_dir, .sigfd = -1 };
}

void sysops_close(struct sysops *so)
{
	struct signalfd_siginfo si;

	if (so->sigfd >= 0) {
		/* a signal that came while no wait listened (an area being
		 * seeded): taken here, or restoring the mask would kill us */
		while (read(so->sigfd, &si, sizeof(si)) == sizeof(si)) {
			if (!so->interrupted)
				log_warning(so->lg, "%s: stopping; what is mounted stays (`%s stop` undoes it)",
					    strsignal((int)si.ssi_signo), log_self(so->lg));
			so->interrupted = true;
		}
		close(so->sigfd);
		sigprocmask(SIG_SETMASK, &so->old_mask, NULL);
	}
	mount_children_close(&so->mounts);
	udev_change_monitor_close(so->udev, so->monitor);
}
