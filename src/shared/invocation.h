/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * How this process was invoked and how it answers: the options main()
 * parsed (struct options), the exit status every command returns, and the
 * command a message tells the user to run.
 *
 * The exit status is the same for every command (storaged(8), EXIT
 * STATUS): 0 all done and as storaged left it, 1 some step failed (the
 * rest still ran) or is not as storaged left it, or --dry-run/check show
 * a step that will fail, 2 usage or configuration error (nothing
 * changed), 3 all done but some btrfs is mounted degraded (start and
 * status: check and --dry-run judge the plan, not the mounts), 4 the state
 * directory or its state file cannot be used (statedir.h).
 *
 * The command in advice is "storaged" with the -c, -f and --state-dir this
 * process was given, so that advice pasted into a shell reaches the same
 * configuration, fstab and state.  main() renders it once
 * (invocation_format()) and hands it down in the logger (log_self()); each
 * message appends its verb.
 */
#ifndef STORAGED_INVOCATION_H
#define STORAGED_INVOCATION_H

#include <stdbool.h>

#define EXIT_STEP_FAILED 1
#define EXIT_CONFIG 2
#define EXIT_DEGRADED 3
#define EXIT_STATE 4

#define STATE_DIR_DEFAULT RUNSTATEDIR "/storaged"

/*
 * @failed: steps that failed, or things found not as storaged left them;
 *          a nofail step that failed is not one (it counts for nothing)
 * @degraded: btrfs filesystems mounted degraded
 *
 * The one way a command's counts become its exit status (storaged(8),
 * EXIT STATUS): a failure outweighs a degraded mount, and a degraded
 * mount is 3 whatever else was counted beside it.
 * Returns: EXIT_STEP_FAILED, EXIT_DEGRADED or 0.
 */
static inline int exit_status_of(unsigned failed, unsigned degraded)
{
	return failed ? EXIT_STEP_FAILED : degraded ? EXIT_DEGRADED : 0;
}

struct options {
	const char *config_path; /* -c; CONFIG_DEFAULT_PATH when not given */
	bool config_given; /* -c was given: a missing file is an error */
	const char *fstab_path; /* -f; NULL: from the config */
	const char *state_dir; /* --state-dir; STATE_DIR_DEFAULT */
	/* --state-dir named another directory than the default: status and
	 * stop need it to exist (state_dir_missing()) */
	bool state_dir_given;
	bool dry_run;
	bool json;
	bool foreground; /* --foreground: stay resident in the foreground */
	bool daemonize; /* --daemon: stay resident, detached, after the first pass */
	bool local_only; /* --local: leave network filesystems for a later start */
	const char *command; /* start, stop, scan, status, check, sync */
	const char *arg; /* sync: area name; systemd-generator: directory */
	/* --format=prometheus: status in the Prometheus text
	 * exposition format (status_prom.h) */
	bool prometheus;
	/* scan and status, as findmnt and lsblk: -o LIST (NULL: the default
	 * columns), --raw, --noheadings (table_out.h) */
	const char *output;
	bool raw;
	bool noheadings;
};

/*
 * @config: -c as given, or NULL when it was not given
 * @fstab: -f as given, or NULL
 * @state_dir: --state-dir as given, or NULL
 *
 * "storaged -c CONFIG -f FSTAB --state-dir DIR", with only the options
 * given, each value shell_quote()d (util.h) and a relative path made absolute
 * against the working directory (path_absolute()): the advice may be
 * pasted in another directory, and a resident storaged works in /.
 *
 * Returns: a new string (caller frees); NULL with errno set (ENOMEM, or
 * getcwd(3)'s).
 */
char *invocation_format(const char *config, const char *fstab, const char *state_dir);

#endif
