/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The resident's watch over the mounted areas, on a thread of its own so
 * that a long sync back or a pass waiting for devices never holds it up:
 * a few times a second it grows the tmpfs areas that say grow = yes
 * before either limit runs out (plan/area_grow.h), within memory-reserve,
 * and it names the limit of an area that filled, once, as it fills.
 */
#ifndef STORAGED_AREA_WATCH_H
#define STORAGED_AREA_WATCH_H

#include <pthread.h>
#include <stdbool.h>

#include "parse/config.h"
#include "shared/invocation.h"
#include "shared/log.h"

/* How often the areas are looked at: often while one may grow (a writer
 * at 2000 files a second fills 200 inodes in that time), else seldom
 * enough to cost nothing and often enough to name a full area within
 * seconds (µs). */
#define AREA_WATCH_GROW_USEC (100ULL * 1000ULL)
#define AREA_WATCH_IDLE_USEC (1000ULL * 1000ULL)

struct area_watch {
	bool running;
	pthread_t thread;
	int stop_fd; /* eventfd: the thread leaves once it is written */
	int event_fd; /* eventfd the thread writes when an area filled or
			 grew: the metrics want rewriting; -1: none */
	pthread_mutex_t lock;
	struct config *next; /* a configuration for the thread to take (owned) */
	struct logger lg; /* the thread's copy */
	char *state_dir; /* owned */
};

/**
 * area_watch_init:
 * @w: to set up: not running; its event_fd made (eventfd(2), to be
 *     watched before the process forks: it is inherited)
 *
 * Returns: 0 or negative errno.
 */
int area_watch_init(struct area_watch *w);

/**
 * area_watch_update:
 * @w: as area_watch_init() left it, running or not
 * @o: the command line: the configuration is read again from o->config_path
 * @lg: logger to copy for the thread (a resident's: syslog when detached)
 *
 * Hands the thread the configuration as it is now (which areas grow, the
 * memory-reserve), and starts the thread the first time.  A configuration
 * that cannot be read leaves the thread with the last one (the pass
 * reports the errors).  To be called in the process that stays resident,
 * after it detached.
 *
 * Returns: 0; negative errno when the thread cannot be started (logged).
 */
int area_watch_update(struct area_watch *w, const struct options *o, const struct logger *lg);

/**
 * area_watch_done:
 * Ends the thread (at its next look, at most one interval away), and
 * frees what @w holds.  Accepts a @w never started.
 */
void area_watch_done(struct area_watch *w);

#endif
