/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * When a persist area's periodic sync is due, from the monotonic clock
 * only.  A sync-interval bounds how much of an area's work a crash can
 * lose; the wall clock (NTP, a CMOS battery, `date -s`) can step by hours
 * either way and must make no sync early or late, so the resident's
 * schedule compares CLOCK_MONOTONIC times, recorded with the boot they
 * belong to.  CLOCK_MONOTONIC, not CLOCK_BOOTTIME: nothing is written
 * into an area while the machine sleeps (and the system-sleep hook syncs
 * before it does), so time asleep adds no work to lose; with BOOTTIME
 * every resume would start with a sync of nothing.
 */
#ifndef STORAGED_SYNC_DUE_H
#define STORAGED_SYNC_DUE_H

#include <stdbool.h>
#include <stdint.h>

/* "8f3c...-..." as /proc/sys/kernel/random/boot_id gives it, and a NUL */
#define SYNC_BOOT_ID_LEN 37
#define SYNC_BOOT_ID_PATH "/proc/sys/kernel/random/boot_id"

/* The monotonic end of an area's last sync, as status_prom_note_sync()
 * recorded it. */
struct sync_mark {
	uint64_t mono_usec; /* CLOCK_MONOTONIC µs; 0: not recorded */
	char boot_id[SYNC_BOOT_ID_LEN]; /* the boot @mono_usec belongs to */
};

/*
 * @last: the area's last sync, NULL when it has none (never synced, or a
 *        record without a monotonic time)
 * @since_usec: CLOCK_MONOTONIC µs from which an area with no last sync in
 *              this boot counts (when the resident began)
 * @interval_usec: the area's sync-interval, > 0
 * @now_usec: CLOCK_MONOTONIC µs now
 *
 * Pure.  The area is due @interval_usec after its last sync when that was
 * in this boot, else after @since_usec.  A base later than @now_usec
 * (a record from another time namespace) counts as now: nothing postpones
 * a sync by more than one interval.
 *
 * Returns: µs until the area is due; 0 when it is due now.
 */
uint64_t sync_wait_usec(const struct sync_mark *last, const char *boot_id, uint64_t since_usec,
			uint64_t interval_usec, uint64_t now_usec);

/*
 * @path: SYNC_BOOT_ID_PATH, or a test's file
 * @buf: receives the id, NUL-terminated, SYNC_BOOT_ID_LEN bytes
 *
 * Returns: 0; negative errno (@buf is "" then).
 */
int sync_read_boot_id(const char *path, char buf[SYNC_BOOT_ID_LEN]);

#endif
