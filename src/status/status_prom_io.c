/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The status for Prometheus written atomically to node_exporter's
 * textfile-collector directory, from a status snapshot (status_report.h).
 * The formatting is status_prom.c's; the record of each area's last sync,
 * status_last_sync.c's.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "state/atomic_file.h"
#include "parse/config.h"
#include "world/load.h"
#include "status_prom.h"
#include "status_report.h"
#include "shared/units.h"
#include "shared/util.h"
#include "mount/safepath.h"

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
