/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * storaged sync [NAME]: copy the RAM area NAME, or every active persist
 * area, back into its directory (the operations table's area_sync:
 * crash-safe, incremental); and the resident's periodic sync of the areas
 * whose sync-interval is due.
 */
#include <errno.h>
#include <string.h>

#include "commands.h"
#include "liveness.h"
#include "state/sync_due.h"
#include "area/area.h"
#include "status/status_prom.h"
#include "exec/sysops.h"
#include "world/statedir.h"
#include "world/load.h"
#include "world/world.h"

/* The configuration's areas (world_load_settings()) into @c; a missing
 * file has none.  An error within an area's or a [btrfs] section does not
 * stop a sync (as it does not stop its start): the area in RAM, set up
 * before the section went wrong, still holds the data.  Returns: 0;
 * -EINVAL when the configuration as a whole cannot be used (@dl says
 * why); -ENOMEM. */
static int load_areas(const struct options *o, struct config *c, struct diag_list *dl)
{
	int r = config_init(c);

	if (r == 0)
		r = world_load_settings(o->config_path, c, dl);
	return r == -ENOENT ? 0 : r;
}

static bool configured(const struct config *c, const char *name)
{
	for (size_t i = 0; i < c->n_areas; i++)
		if (strcmp(c->areas[i].name, name) == 0)
			return true;
	return false;
}

/* An area set up and since taken out of the configuration still holds its
 * data in RAM: it is synced as it was set up, by `sync NAME`, by `sync`
 * without NAME and by `stop`, and the first two say so. */
static void warn_unconfigured(const struct options *o, const struct logger *lg, const char *name)
{
	log_warning(lg, "area %s: no [area %s] in %s any more; it is synced as it was set up (`%s stop` removes it)",
		    name, name, o->config_path, log_self(lg));
}

/* Is @name set up (an area record in the state directory)? */
static bool area_set_up(const struct options *o, const struct logger *lg, const char *name)
{
	struct area_status *areas;
	bool found = false;
	size_t n;

	if (area_status_list(o->state_dir, log_self(lg), false, &areas, &n) < 0)
		return false;
	for (size_t i = 0; i < n && !found; i++)
		found = strcmp(areas[i].name, name) == 0;
	area_status_free(areas, n);
	return found;
}

/* May `sync NAME` go on?  Not when the configuration as a whole cannot be
 * used, nor for a name neither configured nor set up. */
static bool sync_allowed(const struct options *o, const struct logger *lg, const char *name)
{
	struct config c = { 0 };
	struct diag_list dl = { 0 };
	int r = load_areas(o, &c, &dl);
	bool found = r == 0 && configured(&c, name);

	if (r < 0)
		log_diags(lg, &dl);
	diag_list_done(&dl);
	config_done(&c);
	if (found)
		return true;
	if (r < 0)
		return false;
	if (area_set_up(o, lg, name)) {
		warn_unconfigured(o, lg, name);
		return true;
	}
	log_error(lg, "no [area %s] in %s; `%s status` lists the active areas", name, o->config_path,
		  log_self(lg));
	return false;
}

/* One sync back of @name, recorded for `status` and the metrics.  Returns:
 * 0; negative errno (logged, with what failed and where). */
static int sync_one(const struct options *o, const struct logger *lg, const char *name)
{
	struct diag_list dl = { 0 };
	struct sysops so;
	bool said;
	int r;

	sysops_open_for_stop(&so, lg, o->state_dir);
	r = sysops_ops.area_sync(&so, name, &dl);
	sysops_close(&so);
	log_diags(lg, &dl);
	/* each failure's error says what became of the area and what to do
	 * (sync again, or stop): a second, general one would contradict it */
	said = diag_count(&dl, DIAG_ERROR) > 0;
	diag_list_done(&dl);
	if (r == -ENOENT)
		return r; /* not set up: nothing in RAM, nothing to record */
	/* what synced said so itself (area_sync()), and only when the sync
	 * changed something */
	if (r < 0 && !said)
		log_error(lg, "area %s: the sync back failed (%s): every change since the last sync is only in "
			      "the area, in RAM; run `%s sync %s` again, and `%s status` if it fails again",
			  name, strerror(-r), log_self(lg), name, log_self(lg));
	/* storaged_area_last_sync_*, status */
	if (status_prom_note_sync(o->state_dir, name, r == 0) < 0)
		log_warning(lg, "area %s: cannot record the sync for status and the metrics", name);
	return r;
}

/* Every active persist area, in setup order.  Returns: 0 when all synced
 * (or there is none); the first negative errno otherwise (each logged). */
static int sync_all(const struct options *o, const struct logger *lg)
{
	struct config c = { 0 };
	struct diag_list dl = { 0 };
	struct area_status *areas;
	size_t n;
	/* one that cannot be used names no area: no warning then (check
	 * says what is wrong with it), and the areas are synced all the same */
	bool known = load_areas(o, &c, &dl) == 0;
	int r = area_status_list(o->state_dir, log_self(lg), false, &areas, &n);

	diag_list_done(&dl);
	if (r < 0) {
		log_error(lg, "cannot list the areas in '%s/areas': %s", o->state_dir, strerror(-r));
		config_done(&c);
		return r;
	}
	for (size_t i = 0; i < n; i++) {
		int q = 0;

		if (areas[i].persist && known && !configured(&c, areas[i].name))
			warn_unconfigured(o, lg, areas[i].name);
		if (areas[i].persist)
			q = sync_one(o, lg, areas[i].name);
		if (q < 0 && r == 0)
			r = q;
	}
	area_status_free(areas, n);
	config_done(&c);
	return r;
}

int cmd_sync(const struct options *o, const struct logger *lg)
{
	int r;

	if (o->dry_run) {
		log_error(lg, "sync: --dry-run is not supported");
		return EXIT_CONFIG;
	}
	/* a mistyped --state-dir is an error, as for status and stop: not
	 * "nothing to sync" */
	if (state_dir_missing(o, lg))
		return EXIT_STATE;
	/* the area records name what root copies where: trusted first, as
	 * start, stop and status trust them */
	if (statedir_check(o->state_dir, lg) < 0)
		return EXIT_STATE;
	if (o->arg && !sync_allowed(o, lg, o->arg))
		return EXIT_CONFIG;
	r = o->arg ? sync_one(o, lg, o->arg) : sync_all(o, lg);
	status_prom_after_pass(o, lg, !liveness_at_work(o->state_dir)); /* metrics-textfile */
	return r < 0 ? EXIT_STEP_FAILED : 0;
}

/* µs until @name is due (sync_wait_usec(): from its last sync in this
 * boot on the monotonic clock, never from the wall clock). */
static uint64_t sync_wait(const char *state_dir, const char *name, uint64_t interval_usec, uint64_t since_usec,
			  const char *boot_id)
{
	struct prom_sync last;
	bool have = status_prom_read_sync(state_dir, name, &last) == 0;

	return sync_wait_usec(have ? &last.mark : NULL, boot_id, since_usec, interval_usec,
			      now_monotonic_usec());
}

/* The sync-interval of the active area @a in µs (0: off): its section's
 * in the configuration @c; without one, or without a usable @c, the one it
 * was set up with: its RAM holds the work all the same, and `sync` syncs
 * it as it was set up too. */
static uint64_t interval_of(const struct config *c, bool usable, const struct area_status *a)
{
	for (size_t i = 0; usable && i < c->n_areas; i++)
		if (strcmp(c->areas[i].name, a->name) == 0)
			return c->areas[i].sync_interval_usec;
	return a->sync_interval_usec;
}

int sync_due_areas(const struct options *o, const struct logger *lg, uint64_t since_usec, uint64_t *ret_next_sec)
{
	struct config c = { 0 };
	struct diag_list dl = { 0 };
	struct area_status *areas = NULL;
	char boot_id[SYNC_BOOT_ID_LEN];
	uint64_t next_usec = 0;
	size_t n = 0;
	bool usable;
	int r;

	*ret_next_sec = 0;
	sync_read_boot_id(SYNC_BOOT_ID_PATH, boot_id); /* "": every area counts from @since_usec */
	r = config_init(&c);
	/* its errors are the pass's to report.  None stops a sync: an active
	 * persist area, set up before the configuration went wrong, holds the
	 * data (interval_of()) */
	if (r == 0)
		r = world_load_settings(o->config_path, &c, &dl);
	usable = r == 0;
	if (r == -ENOENT || r == -EINVAL)
		r = 0;
	diag_list_done(&dl);
	if (r == 0)
		r = area_status_list(o->state_dir, log_self(lg), false, &areas, &n);
	for (size_t i = 0; r == 0 && i < n; i++) {
		uint64_t every = areas[i].persist ? interval_of(&c, usable, &areas[i]) : 0, wait;

		if (every == 0)
			continue;
		wait = sync_wait(o->state_dir, areas[i].name, every, since_usec, boot_id);
		if (wait == 0) {
			sync_one(o, lg, areas[i].name); /* a failure is logged and tried again */
			wait = every;
		}
		if (next_usec == 0 || wait < next_usec)
			next_usec = wait;
	}
	/* whole seconds, rounded up: the timer never fires before the due time */
	*ret_next_sec = next_usec ? (next_usec + USEC_PER_SEC - 1) / USEC_PER_SEC : 0;
	area_status_free(areas, n);
	config_done(&c);
	return r;
}
