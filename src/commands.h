/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * One function per subcommand.  Each returns the process exit status
 * (DESIGN.md): 0 all done, 1 some step failed (the rest still ran), 2 usage
 * or configuration error (nothing changed).
 */
#ifndef STORAGED_COMMANDS_H
#define STORAGED_COMMANDS_H

#include <stdbool.h>

#include "log.h"

#define EXIT_STEP_FAILED 1
#define EXIT_CONFIG 2

#define STATE_DIR_DEFAULT RUNSTATEDIR "/storaged"

struct options {
	const char *config_path; /* -c; CONFIG_DEFAULT_PATH when not given */
	bool config_given; /* -c was given: a missing file is an error */
	const char *fstab_path; /* -f; NULL: from the config */
	const char *state_dir; /* --state-dir; STATE_DIR_DEFAULT */
	bool dry_run;
	bool json;
	bool foreground; /* --foreground: stay resident in the foreground */
	bool daemonize; /* --daemon: stay resident, detached, after the first pass */
	bool local_only; /* --local: leave network filesystems for a later start */
	const char *command; /* start, stop, scan, status, check, sync */
	const char *arg; /* sync: area name */
};

/**
 * commands_load_state:
 * state_load() of @o->state_dir into @st, logging why the state cannot be
 * used and what to do about it.
 * Returns: 0 or negative errno (see state_load()).
 */
struct state;
int commands_load_state(const struct options *o, const struct logger *lg, struct state *st);

int cmd_start(const struct options *o, const struct logger *lg);
int cmd_stop(const struct options *o, const struct logger *lg);
int cmd_scan(const struct options *o, const struct logger *lg);
int cmd_status(const struct options *o, const struct logger *lg);
int cmd_check(const struct options *o, const struct logger *lg);
int cmd_sync(const struct options *o, const struct logger *lg);
int cmd_systemd_generator(const struct options *o, const struct logger *lg);

#endif
