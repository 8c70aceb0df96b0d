/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Logging for the command level and the executor.  Pure modules never log:
 * they return diagnostics.  The logger is owned by main() and passed down.
 */
#ifndef STORAGED_LOG_H
#define STORAGED_LOG_H

#include <stdbool.h>
#include <sys/stat.h>
#include <syslog.h>

#include "shared/diag.h"
#include "util.h"

enum log_target {
	LOG_TARGET_STDERR, /* interactive use, tests, early boot */
	LOG_TARGET_SYSLOG, /* resident daemon */
	LOG_TARGET_KMSG, /* a systemd generator: the kernel log (log_init_kmsg()) */
};

struct logger {
	int max_level; /* syslog priority: LOG_ERR … LOG_DEBUG */
	enum log_target target;
	/* LOG_TARGET_STDERR only: stderr is systemd's stream to the journal,
	 * so each line begins with its priority, "<3>" for LOG_ERR, which the
	 * journal takes as the message's priority (sd-daemon(3)) */
	bool journal_prefix;
	/* the command advice tells the user to run, before its verb:
	 * "storaged" and the -c, -f, --state-dir in use (invocation.h);
	 * borrowed, NULL for "storaged" alone (log_self()) */
	const char *self;
	/* LOG_TARGET_KMSG only: /dev/kmsg, and the name each record starts with */
	int kmsg_fd;
	const char *ident;
};

/*
 * @max_level: highest priority printed (LOG_INFO by default, LOG_DEBUG with -v)
 *
 * LOG_TARGET_STDERR: when stderr is the journal's stream ($JOURNAL_STREAM
 * names it, see log_stream_is_journal()), every line gets its priority
 * prefix, so that `journalctl -p err` shows the errors, in place of the
 * "storaged: LEVEL: " one the journal would repeat.
 */
void log_init(struct logger *lg, int max_level, enum log_target target);

/*
 * @max_level: as log_init()
 * @ident: the name each record starts with ("storaged-generator"; borrowed)
 *
 * Where a generator must log (systemd.generator(7): its stderr goes
 * nowhere at boot): each message one record "<PRI>IDENT[PID]: message" written
 * to /dev/kmsg, the facility LOG_DAEMON.  When /dev/kmsg cannot be opened
 * for writing, or stderr is a terminal (someone runs the generator by
 * hand), it is log_init(LOG_TARGET_STDERR).  Close with log_close().
 *
 * Returns: 0 logging to the kernel; negative errno of open(2) (stderr it is).
 */
int log_init_kmsg(struct logger *lg, int max_level, const char *ident);

/*
 * @max_level: as log_init()
 *
 * A process without a terminal or a caller's stderr (a resident after
 * --daemon, a start that has left its caller): syslog(3) when something
 * listens on /dev/log (a syslog daemon, or the journal), else the kernel's
 * log as log_init_kmsg() writes it.  syslog(3) drops what no one listens
 * for, and a sysvinit machine without rsyslog has no listener; systemd
 * falls back to the kernel's log the same way without a journal.
 */
void log_init_detached(struct logger *lg, int max_level);

/*
 * @journal_stream: the value of $JOURNAL_STREAM, or NULL when unset
 * @st: fstat(2) of the stream in question (stderr)
 *
 * systemd sets JOURNAL_STREAM to "DEVICE:INODE" (both decimal; st_dev as
 * one number) of the socket it connects a service's stdout/stderr to
 * (systemd.exec(5), "Environment Variables in Spawned Processes"); a
 * stream redirected since, or inherited by a child whose stderr is
 * something else, does not match.
 *
 * Pure.  Returns: true when @st is that stream.
 */
bool log_stream_is_journal(const char *journal_stream, const struct stat *st);

/* Releases what log_init() opened. */
void log_close(struct logger *lg);

/*
 * @lg: NULL: nothing is printed
 *
 * Prints one line "storaged: <level>: message" (stderr; preceded by
 * "<prio>" when stderr is the journal) or the syslog equivalent.  Never
 * fails visibly.
 */
void log_msg(const struct logger *lg, int prio, const char *fmt, ...) _printf_(3, 4);

/*
 * @lg: may be NULL
 * @command: the command the options were given to ("status"), or NULL
 *           before one is known
 *
 * The one form of a usage error, whichever check finds it: the program,
 * the level, the command, the message ("storaged: error: status: -o
 * 'SIZE': no such column; ..."), as findmnt(8) names itself before what
 * is wrong.  Logged at LOG_ERR through log_msg().
 */
void log_usage_error(const struct logger *lg, const char *command, const char *fmt, ...) _printf_(3, 4);

/*
 * Logs every diagnostic of @dl once, errors at LOG_ERR and warnings at
 * LOG_WARNING, as "file:line: message".
 */
void log_diags(const struct logger *lg, const struct diag_list *dl);

/*
 * Logs every diagnostic of @dl at @prio, whatever its level: for problems
 * that are expected on some machines (a device that cannot be opened).
 */
void log_diags_at(const struct logger *lg, const struct diag_list *dl, int prio);

/*
 * Returns: @lg->self, or "storaged" when @lg or its self is NULL: the
 * start of a command a message tells the user to run ("`%s stop`").
 */
static inline const char *log_self(const struct logger *lg)
{
	return lg && lg->self ? lg->self : "storaged";
}

#define log_error(lg, ...) log_msg((lg), LOG_ERR, __VA_ARGS__)
#define log_warning(lg, ...) log_msg((lg), LOG_WARNING, __VA_ARGS__)
#define log_notice(lg, ...) log_msg((lg), LOG_NOTICE, __VA_ARGS__)
#define log_info(lg, ...) log_msg((lg), LOG_INFO, __VA_ARGS__)
#define log_debug(lg, ...) log_msg((lg), LOG_DEBUG, __VA_ARGS__)

#endif
