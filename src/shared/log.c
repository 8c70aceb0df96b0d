/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "shared/units.h"
#include "util.h"

bool log_stream_is_journal(const char *journal_stream, const struct stat *st)
{
	char dev[32];
	const char *colon;
	uint64_t d, i;

	if (!journal_stream || !(colon = strchr(journal_stream, ':')) ||
	    (size_t)(colon - journal_stream) >= sizeof(dev))
		return false;
	memcpy(dev, journal_stream, (size_t)(colon - journal_stream));
	dev[colon - journal_stream] = '\0';
	if (units_parse_uint(dev, UINT64_MAX, &d) < 0 || units_parse_uint(colon + 1, UINT64_MAX, &i) < 0)
		return false;
	return (uint64_t)st->st_dev == d && (uint64_t)st->st_ino == i;
}

void log_init(struct logger *lg, int max_level, enum log_target target)
{
	struct stat st;

	lg->max_level = max_level;
	lg->target = target;
	lg->journal_prefix = false;
	lg->kmsg_fd = -1;
	lg->ident = "storaged";
	/* lg->self is the caller's: a detached resident keeps its parent's */
	if (target == LOG_TARGET_SYSLOG)
		openlog("storaged", LOG_PID | LOG_CONS, LOG_DAEMON);
	else if (fstat(STDERR_FILENO, &st) == 0)
		lg->journal_prefix = log_stream_is_journal(getenv("JOURNAL_STREAM"), &st);
}

int log_init_kmsg(struct logger *lg, int max_level, const char *ident)
{
	int fd = isatty(STDERR_FILENO) ? -ENOTTY : open("/dev/kmsg", O_WRONLY | O_NOCTTY | O_CLOEXEC);

	if (fd < 0) {
		int r = fd == -ENOTTY ? fd : -errno;

		log_init(lg, max_level, LOG_TARGET_STDERR);
		return r;
	}
	log_init(lg, max_level, LOG_TARGET_KMSG);
	lg->kmsg_fd = fd;
	lg->ident = ident;
	return 0;
}

void log_init_detached(struct logger *lg, int max_level)
{
	struct stat st;

	if (stat("/dev/log", &st) == 0 && S_ISSOCK(st.st_mode))
		log_init(lg, max_level, LOG_TARGET_SYSLOG);
	else
		(void)log_init_kmsg(lg, max_level, "storaged");
}

void log_close(struct logger *lg)
{
	if (lg->target == LOG_TARGET_SYSLOG)
		closelog();
	if (lg->target == LOG_TARGET_KMSG && lg->kmsg_fd >= 0)
		close(lg->kmsg_fd);
	lg->kmsg_fd = -1;
}

/* One record, one write(2): the kernel takes each write as a record. */
static void kmsg_write(const struct logger *lg, int prio, const char *msg)
{
	char rec[1024];
	int n = snprintf(rec, sizeof(rec), "<%d>%s[%d]: %s\n", LOG_DAEMON | LOG_PRI(prio), lg->ident,
			 (int)getpid(), msg);

	if (n >= (int)sizeof(rec)) {
		n = (int)sizeof(rec) - 1;
		rec[n - 1] = '\n';
	}
	if (n > 0 && write(lg->kmsg_fd, rec, (size_t)n) < 0)
		fprintf(stderr, "%s: %s\n", lg->ident, msg);
}

static const char *level_name(int prio)
{
	switch (prio) {
	case LOG_EMERG:
	case LOG_ALERT:
	case LOG_CRIT:
	case LOG_ERR:
		return "error";
	case LOG_WARNING:
		return "warning";
	case LOG_DEBUG:
		return "debug";
	default:
		return NULL;
	}
}

static void log_write(const struct logger *lg, int prio, const char *msg)
{
	const char *lvl = level_name(prio);

	switch (lg->target) {
	case LOG_TARGET_SYSLOG:
		syslog(prio, "%s", msg);
		break;
	case LOG_TARGET_KMSG:
		kmsg_write(lg, prio, msg);
		break;
	default:
		/* sd-daemon.h's SD_ERR and the like: "<3>".  The journal
		 * names the program and keeps the priority itself: a second
		 * "storaged: error:" would only repeat them. */
		if (lg->journal_prefix)
			fprintf(stderr, "<%d>%s\n", LOG_PRI(prio), msg);
		else if (lvl)
			fprintf(stderr, "storaged: %s: %s\n", lvl, msg);
		else
			fprintf(stderr, "storaged: %s\n", msg);
		break;
	}
}

void log_msg(const struct logger *lg, int prio, const char *fmt, ...)
{
	char buf[4096], line[4 * sizeof(buf)];
	va_list ap;

	if (!lg || prio > lg->max_level)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	text_escape_controls(buf, line, sizeof(line));
	log_write(lg, prio, line);
}

void log_usage_error(const struct logger *lg, const char *command, const char *fmt, ...)
{
	char msg[4096];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (command)
		log_error(lg, "%s: %s", command, msg);
	else
		log_error(lg, "%s", msg);
}

static void log_diag(const struct logger *lg, const struct diag *d, int prio)
{
	if (d->file && d->line)
		log_msg(lg, prio, "%s:%u: %s", d->file, d->line, d->msg);
	else if (d->file)
		log_msg(lg, prio, "%s: %s", d->file, d->msg);
	else
		log_msg(lg, prio, "%s", d->msg);
}

void log_diags(const struct logger *lg, const struct diag_list *dl)
{
	for (size_t i = 0; i < dl->n; i++)
		log_diag(lg, &dl->v[i], dl->v[i].level == DIAG_ERROR	  ? LOG_ERR
					: dl->v[i].level == DIAG_WARNING ? LOG_WARNING
									 : LOG_INFO);
}

void log_diags_at(const struct logger *lg, const struct diag_list *dl, int prio)
{
	for (size_t i = 0; i < dl->n; i++)
		log_diag(lg, &dl->v[i], prio);
}
