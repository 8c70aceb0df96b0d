/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The status for Prometheus written atomically to node_exporter's
 * textfile-collector directory, from a status snapshot (status_report.h);
 * and the record of each area's last sync.  The formatting is
 * status_prom.c's.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "state/atomic_file.h"
#include "parse/config.h"
#include "world/load.h"
#include "status_prom.h"
#include "status_report.h"
#include "shared/units.h"
#include "shared/util.h"
#include "mount/safepath.h"

#define LAST_SYNC_DIR "last-sync"

static bool area_name_ok(const char *name)
{
	return name[0] && name[0] != '.' && !strchr(name, '/') && strlen(name) <= NAME_MAX - 16;
}

/* "MONOTONIC_USEC BOOT_ID" after the status word, or nothing.  Returns:
 * 0; -EBADMSG. */
static int parse_mark(const char *s, struct sync_mark *ret)
{
	char num[24];
	const char *sp = strchr(s, ' ');
	uint64_t mono;

	*ret = (struct sync_mark){ 0 };
	if (!*s)
		return 0;
	if (!sp || (size_t)(sp - s) >= sizeof(num) || strlen(sp + 1) != SYNC_BOOT_ID_LEN - 1)
		return -EBADMSG;
	memcpy(num, s, (size_t)(sp - s));
	num[sp - s] = '\0';
	if (units_parse_uint(num, UINT64_MAX, &mono) < 0)
		return -EBADMSG;
	ret->mono_usec = mono;
	memcpy(ret->boot_id, sp + 1, SYNC_BOOT_ID_LEN);
	return 0;
}

int status_prom_read_sync(const char *state_dir, const char *name, struct prom_sync *ret)
{
	_cleanup_free_ char *path = NULL;
	char buf[128] = "", *sp, *word, *rest;
	struct sync_mark mark;
	uint64_t t;
	FILE *f;

	if (!area_name_ok(name))
		return -EINVAL;
	if (asprintf(&path, "%s/" LAST_SYNC_DIR "/%s", state_dir, name) < 0)
		return -ENOMEM;
	f = fopen(path, "re");
	if (!f)
		return -errno;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = '\0';
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	sp = strchr(buf, ' ');
	if (!sp)
		return -EBADMSG;
	*sp = '\0';
	word = sp + 1;
	rest = word + strcspn(word, " ");
	if (*rest)
		*rest++ = '\0';
	if (units_parse_uint(buf, UINT64_MAX, &t) < 0 || (strcmp(word, "ok") != 0 && strcmp(word, "failed") != 0) ||
	    parse_mark(rest, &mark) < 0)
		return -EBADMSG;
	*ret = (struct prom_sync){ .time_sec = t, .ok = strcmp(word, "ok") == 0, .mark = mark };
	return 0;
}

static int write_exposition(FILE *f, const void *ud)
{
	struct prom_data d = status_report_prom(ud);

	return status_prom_render(&d, f);
}

/* Writes the exposition of @rep into @path's directory, opened by the
 * walk of safepath_open() (mount/safepath.h): no link a user could plant
 * is followed on the way, and the file is made and renamed in the
 * directory the walk opened (file_write_atomic_at()), so that whoever owns
 * that directory or one above it cannot have root write it elsewhere, by
 * a link or by renaming directories while it is written. */
static void write_textfile(const char *path, const struct status_report *rep, const struct logger *lg)
{
	_cleanup_free_ char *dir = strndup(path, (size_t)(strrchr(path, '/') - path));
	_cleanup_close_ int dfd = -EBADF;
	char why[512] = "";
	struct stat st;
	int r;

	if (!dir)
		return;
	r = safepath_open(*dir ? dir : "/", 0, &dfd, why, sizeof(why));
	if (r == -EPERM) {
		log_warning(lg, "metrics-textfile '%s': not written: %s", path, why);
		return;
	}
	if (r == 0 && (fstat(dfd, &st) < 0 || !S_ISDIR(st.st_mode)))
		r = -ENOTDIR;
	if (r == 0)
		r = file_write_atomic_at(dfd, strrchr(path, '/') + 1, 0644, write_exposition, rep);
	if (r < 0)
		log_warning(lg, "metrics-textfile '%s': cannot write the metrics: %s%s", path, strerror(-r),
			    r == -ENOENT || r == -ENOTDIR ? " (its directory must exist: storaged does not make it)" : "");
}

/* The textfile that the configuration at @o names, or NULL (owned). */
static char *configured_textfile(const struct options *o)
{
	struct config cfg;
	struct diag_list dl = { 0 };
	char *path = NULL;

	if (config_init(&cfg) < 0)
		return NULL;
	/* problems with the configuration were reported by the pass */
	if (world_load_settings(o->config_path, &cfg, &dl) == 0 && cfg.metrics_textfile)
		path = strdup(cfg.metrics_textfile);
	diag_list_done(&dl);
	config_done(&cfg);
	return path;
}

void status_prom_after_pass(const struct options *o, const struct logger *lg, bool nobody_at_work)
{
	_cleanup_free_ char *path = configured_textfile(o);
	/* what the pass itself logged (a device that cannot be probed, a
	 * cloned member) is not said again for the metrics */
	struct logger quiet = *lg;
	struct status_report rep;
	int r;

	if (!path)
		return;
	quiet.max_level = LOG_ERR;
	r = status_report_build(o, &quiet, nobody_at_work, STATUS_DEVICES_ALL, &rep);
	if (r == 0)
		write_textfile(path, &rep, lg);
	else
		log_warning(lg, "metrics-textfile '%s': cannot write the metrics: %s", path, strerror(-r));
	status_report_done(&rep);
}

static int write_sync(FILE *f, const void *ud)
{
	const bool *ok = ud;

	char boot_id[SYNC_BOOT_ID_LEN];

	fprintf(f, "%lld %s", (long long)time(NULL), *ok ? "ok" : "failed");
	if (sync_read_boot_id(SYNC_BOOT_ID_PATH, boot_id) == 0)
		fprintf(f, " %llu %s", (unsigned long long)now_monotonic_usec(), boot_id);
	fputc('\n', f);
	return ferror(f) ? -EIO : 0;
}

int status_prom_forget_sync(const char *state_dir, const char *area)
{
	_cleanup_free_ char *path = NULL;

	if (!area_name_ok(area))
		return -EINVAL;
	if (asprintf(&path, "%s/" LAST_SYNC_DIR "/%s", state_dir, area) < 0)
		return -ENOMEM;
	return unlink(path) < 0 && errno != ENOENT ? -errno : 0;
}

int status_prom_note_sync(const char *state_dir, const char *area, bool ok)
{
	_cleanup_free_ char *dir = NULL, *path = NULL;

	if (!area_name_ok(area))
		return -EINVAL;
	if (asprintf(&dir, "%s/" LAST_SYNC_DIR, state_dir) < 0 || asprintf(&path, "%s/%s", dir, area) < 0)
		return -ENOMEM;
	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		return -errno;
	return file_write_atomic(path, 0644, write_sync, &ok);
}
