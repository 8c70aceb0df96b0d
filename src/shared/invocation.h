/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The command a message tells the user to run: "storaged" with the -c, -f
 * and --state-dir this process was given, so that advice pasted into a
 * shell reaches the same configuration, fstab and state.  main() renders
 * it once (invocation_format()) and hands it down in the logger
 * (log_self()); each message appends its verb.
 */
#ifndef STORAGED_INVOCATION_H
#define STORAGED_INVOCATION_H

/**
 * invocation_format:
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
