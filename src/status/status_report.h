/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * One snapshot of storaged's status, gathered once from the live system
 * (the state directory, the areas' records, the mount table, sysfs and,
 * when asked, the block devices), which every output renders without
 * reading the system again: the `status` table and its JSON
 * (cli/cmd_report.c) and the Prometheus exposition (status_prom.c).  What
 * it adds up to is counted here; the exit status is the command's.
 */
#ifndef STORAGED_STATUS_REPORT_H
#define STORAGED_STATUS_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "area/area.h"
#include "shared/invocation.h"
#include "shared/log.h"
#include "state/state.h"
#include "status_live.h"
#include "status_prom.h"
#include "world/world.h"

/* A record of the state as `status` shows it: a row of its own (every
 * record but an area's whose area is listed, or done), and its DETAIL
 * (owned, NULL: none). */
struct status_entry {
	bool row;
	char *detail;
};

/* An area as `status` shows it.  nearly_full: active, at
 * AREA_NEARLY_FULL_PERCENT or full; sync_failed: active, its last sync
 * failed and kept nothing twice. */
struct status_area {
	const struct state_record *rec; /* its record in the state, or NULL */
	const struct prom_sync *last; /* its last sync while mounted, or NULL */
	bool nearly_full, sync_failed;
	char *detail; /* owned */
};

/* Which block devices the snapshot reads: only when the state has a
 * btrfs record (whose DETAIL is worded from them), quietly, and not at
 * all when they cannot be; or always (the metrics show every btrfs
 * filesystem), and failing when they cannot be listed. */
enum status_devices { STATUS_DEVICES_FOR_RECORDS, STATUS_DEVICES_ALL };

struct status_report {
	struct state st;
	enum live_status *live; /* what live_check() found, parallel to st.v */
	struct status_entry *entries; /* parallel to st.v */
	struct area_status *areas; /* area_status_list(), in setup order */
	size_t n_areas;
	struct status_area *area_rows; /* parallel to areas */
	struct prom_sync *syncs; /* the areas that were synced; names borrowed */
	size_t n_syncs;
	struct world w; /* the devices, when read */
	const struct btrfs_fs_list *btrfs; /* &w.btrfs, or NULL: not read */
	struct prom_fs *fs; /* parallel to btrfs->v */
	int64_t collected_sec; /* when, seconds since the epoch */
	/* a start that did not run to its end, with no storaged at work
	 * (statedir.h, DIR/unfinished): its row's DETAIL (owned), or NULL */
	char *unfinished;
	struct status_sum sum; /* over the rows of `status` */
};

/*
 * @o: the command line (state directory, sources)
 * @lg: where what cannot be read is said
 * @nobody_at_work: no storaged is at work on the state directory
 *          (live_input.nobody_at_work)
 * @ret: the snapshot; free with status_report_done(), also on failure
 *
 * Returns: 0; -EPERM when the state cannot be read (logged: the state
 * directory's problem); -EIO when the mount table cannot be read
 * (logged); with STATUS_DEVICES_ALL, the negative errno of listing the
 * block devices (logged); -ENOMEM.
 */
int status_report_build(const struct options *o, const struct logger *lg, bool nobody_at_work,
			enum status_devices dev, struct status_report *ret);

void status_report_done(struct status_report *rep);

/* What status_prom_render() shows of @rep, borrowed from it. */
struct prom_data status_report_prom(const struct status_report *rep);

#endif
