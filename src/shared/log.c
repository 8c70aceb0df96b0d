/* SPDX-License-Identifier: GPL-2.0-or-later */
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
	/* lg->self is the caller's: a detached resident keeps its parent's */
	if (target == LOG_TARGET_SYSLOG)
		openlog("storaged", LOG_PID | LOG_CONS, LOG_DAEMON);
	else if (fstat(STDERR_FILENO, &st) == 0)
		lg->journal_prefix = log_stream_is_journal(getenv("JOURNAL_STREAM"), &st);
}

void log_close(struct logger *lg)
{
	if (lg->target == LOG_TARGET_SYSLOG)
		closelog();
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
