/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The operations table (ops.h) on the real system, for `start` (exec.c)
 * and `stop` (undo.c).
 */
#ifndef STORAGED_SYSOPS_H
#define STORAGED_SYSOPS_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include <libudev.h>

#include "exec.h"
#include "shared/log.h"
#include "shared/notify.h"
#include "mount/mount_child.h"

/* The user data of sysops_ops: set up by sysops_open(). */
struct sysops {
	const struct logger *lg;
	const char *state_dir; /* the state file, readiness flags, areas' private mounts */
	struct udev *udev;
	struct udev_monitor *monitor; /* block device events, or NULL */
	int sigfd; /* SIGINT/SIGTERM while a first pass runs, or -1 */
	bool interrupted; /* sysops_close() found SIGINT/SIGTERM pending */
	struct mount_children mounts; /* the pass's mount children */
	sigset_t old_mask;
	struct notify_extender extend; /* the manager's start/stop timeout, kept ahead of waits */
	enum inventory_depth scan_depth; /* of a wait's rescan: the plan's own scan's */
};

extern const struct ops sysops_ops;

/**
 * sysops_open:
 * @so: filled here; release with sysops_close()
 * @lg: logger (borrowed)
 * @state_dir: state directory (borrowed)
 * @catch_signals: take SIGINT and SIGTERM through a signalfd, so that the
 *                 executor ends a waiting pass cleanly (ops->wait() returns
 *                 -EINTR); false where a resident loop has them already
 *
 * Opens the udev monitor before the executor's first look at the devices,
 * so that no device that appears in between is missed.  Failures leave a
 * fallback (devices rechecked every second; signals not caught), logged.
 */
void sysops_open(struct sysops *so, const struct logger *lg, const char *state_dir, bool catch_signals);

/**
 * sysops_open_for_stop:
 * @so: filled here; release with sysops_close()
 * @lg: logger (borrowed)
 * @state_dir: state directory (borrowed)
 *
 * The table for `stop` (undo.c) and `sync`: no device monitor, no signal
 * handling, no mount children are needed to unmount or copy.
 */
void sysops_open_for_stop(struct sysops *so, const struct logger *lg, const char *state_dir);

/** sysops_close: releases what sysops_open() took and restores the signal
 * mask; a SIGINT or SIGTERM still pending is taken first (->interrupted). */
void sysops_close(struct sysops *so);

#endif
