/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * storaged's status for Prometheus: `storaged status --format=prometheus`
 * prints it in the text exposition format, and after each start, stop and
 * sync pass it is written atomically to the file that metrics-textfile =
 * names (for node_exporter's textfile collector).  What it shows is a
 * view of the snapshot `status` renders (status_report.h), with the
 * btrfs filesystems of every block device.
 *
 * Metric names follow https://prometheus.io/docs/practices/naming/:
 * storaged_ prefix, base units (bytes, seconds) in the name, no _total on
 * gauges; the list is in storaged(8), METRICS.
 */
#ifndef STORAGED_STATUS_PROM_H
#define STORAGED_STATUS_PROM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "area/area.h"
#include "shared/invocation.h"
#include "state/sync_due.h"
#include "shared/log.h"
#include "state/state.h"
#include "status_live.h"

/* One btrfs filesystem as the block devices show it now. */
struct prom_fs {
	const char *fsid, *label; /* borrowed; label may be NULL */
	uint64_t present; /* members found */
	uint64_t expected; /* num_devices of the newest superblock */
	uint64_t stale; /* members whose superblock generation is behind the
			   newest member's: they missed writes */
	bool mounted;
	bool degraded; /* mounted with -o degraded */
	/* mounted: members back but unused until mounted again, and members
	 * the kernel reports missing (devices/btrfs_live.h btrfs_live_members()) */
	uint64_t unused, missing;
};

/* The last sync back of one area while mounted (`storaged sync`, the
 * resident's periodic sync). */
struct prom_sync {
	const char *area; /* borrowed */
	uint64_t time_sec; /* when it ended, CLOCK_REALTIME seconds: for
			      people and the metrics, never for a schedule */
	bool ok;
	struct sync_mark mark; /* when it ended, on the monotonic clock: for
				  the resident's schedule (sync_due.h) */
};

/* Everything the exposition shows; all borrowed. */
struct prom_data {
	const struct prom_fs *fs;
	size_t n_fs;
	const struct state *state; /* may be NULL */
	const enum live_status *live; /* what live_check() found, parallel
					 to state->v; NULL: all as recorded */
	const struct area_status *areas;
	size_t n_areas;
	const struct prom_sync *syncs; /* for some of @areas, any order */
	size_t n_syncs;
	/* when these facts were collected, seconds since the epoch; 0: not
	 * known (no storaged_metrics_timestamp_seconds sample) */
	int64_t collected_sec;
	/* a start left unfinished with no storaged at work (statedir.h,
	 * DIR/unfinished): storaged_entry_state{kind="run",entry="start"}
	 * says "interrupted" */
	bool unfinished;
};

/*
 * Pure formatting: storaged_build_info{version} 1 and the collection
 * time first, then every metric family with its HELP and TYPE lines and
 * its samples; label values escaped as the text format wants (\\, \", \n;
 * bytes that are not UTF-8 written as the text \xNN).
 *
 * Returns: 0; -EIO when writing to @out failed.
 */
int status_prom_render(const struct prom_data *d, FILE *out);

/*
 * @in: a label value as storaged has it (any bytes)
 * @buf: the escaped value, NUL-terminated, cut at a whole escape when
 *       @len is too short
 *
 * Returns: @buf.
 */
char *status_prom_escape(const char *in, char *buf, size_t len);

/* How often, at the least, the metrics-textfile is rewritten while
 * storaged runs: by a resident storaged between its passes, and by
 * storaged-sync.timer's `storaged sync` where none is resident (seconds). */
#define METRICS_REFRESH_SEC 3600

/*
 * @o: the command line (configuration, state directory)
 * @lg: failures are logged as warnings: metrics never fail a pass
 * @nobody_at_work: no storaged holds the state directory's lock or the
 *          resident's (liveness_at_work()): what a killed run left under
 *          way, or unfinished, is shown interrupted, as `status` shows it
 *
 * When the configuration sets metrics-textfile, writes the exposition
 * there atomically: a temporary file in the same directory (not ending in
 * .prom, which the textfile collector would read), fsync, rename, fsync of
 * the directory; mode 0644.
 */
void status_prom_after_pass(const struct options *o, const struct logger *lg, bool nobody_at_work);

/*
 * @area: one path component
 *
 * Records the end of a sync of @area now in @state_dir/last-sync/@area,
 * atomically: "SECONDS ok|failed MONOTONIC_USEC BOOT_ID", the wall clock
 * for `status` and storaged_area_last_sync_*, the monotonic clock and
 * this boot's id for the resident's schedule (the last two left out when
 * the boot id cannot be read).
 *
 * Returns: 0; -EINVAL for an invalid @area; negative errno.
 */
int status_prom_note_sync(const char *state_dir, const char *area, bool ok);

/*
 * Removes what status_prom_note_sync() recorded for @area: an area set up
 * anew has not been synced, whatever the one of that name before it was.
 *
 * Returns: 0 (also when there was none); -EINVAL; negative errno of
 * unlink(2).
 */
int status_prom_forget_sync(const char *state_dir, const char *area);

/*
 * @ret: the last sync of @name as status_prom_note_sync() recorded it
 *       (ret->area is left NULL)
 *
 * Returns: 0; -ENOENT when the area was never synced; -EBADMSG for a
 * record that is not "SECONDS ok|failed[ MONOTONIC_USEC BOOT_ID]" (the
 * short form, from an older storaged, leaves ret->mark zero); -EINVAL;
 * other negative errno.
 */
int status_prom_read_sync(const char *state_dir, const char *name, struct prom_sync *ret);

#endif
