/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The resident's watch over the mounted areas, in a child process of its
 * own so that a long sync back or a pass waiting for devices never holds
 * it up (a process, not a thread: the resident forks mount children,
 * which a thread holding a lock would leave deadlocked):
 * a few times a second it grows the tmpfs areas that say grow = yes
 * before either limit runs out (plan/area_grow.h), within memory-reserve,
 * and it names the limit of an area that filled, once, as it fills.
 */
#ifndef STORAGED_AREA_WATCH_H
#define STORAGED_AREA_WATCH_H

#include <sys/types.h>
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
	pid_t pid; /* the watching child; -1: not started */
	int cmd_fd; /* write end of its pipe: a byte asks it to read the
		       configuration again, its end to leave */
	int event_fd; /* eventfd the child writes when an area filled or
			 grew: the metrics want rewriting; -1: none */
	struct logger lg; /* the child's copy */
	char *state_dir, *config_path; /* owned */
};

/* @w not running, its event_fd made (eventfd(2), for the resident to
 * watch: the child inherits it).  Returns: 0 or negative errno. */
int area_watch_init(struct area_watch *w);

/*
 * Starts the watching child the first time (in the process that stays
 * resident, after it detached; it logs through a copy of @lg), and asks
 * it to read o->config_path again afterwards (which areas grow,
 * memory-reserve): a configuration that cannot be read leaves the child
 * with the last one (the pass reports the errors).  Returns: 0; negative
 * errno when the child cannot be started (logged) or asked.
 */
int area_watch_update(struct area_watch *w, const struct options *o, const struct logger *lg);

/* Ends the child (closing its pipe: it leaves at once) and waits for it,
 * and frees what @w holds.  Accepts a @w never started. */
void area_watch_done(struct area_watch *w);

#endif
