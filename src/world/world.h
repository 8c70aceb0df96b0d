/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The world: everything the planner reads (config, fstab, block devices,
 * btrfs filesystems, mounts, area surveys, RAM size) and the plan built
 * from it.  world_load() is the one loader: every command and the golden
 * tests (which run the binary, tests/golden/run.sh) go through it.
 *
 * Where each input comes from is a struct sources.  In production it holds
 * the command line's paths and the system's own files; tests point the
 * binary at fixture files through environment variables (see
 * sources_init()), as systemd's fstab-generator tests do with
 * SYSTEMD_FSTAB.
 */
#ifndef STORAGED_WORLD_H
#define STORAGED_WORLD_H

#include <stdbool.h>

#include <libmount.h>

#include "plan/area_size.h"
#include "devices/btrfs.h"
#include "shared/invocation.h"
#include "mount/view.h"
#include "parse/config.h"
#include "shared/diag.h"
#include "parse/fstab.h"
#include "devices/inventory.h"
#include "shared/log.h"
#include "plan/plan.h"
#include "predict.h"

struct sources {
	const char *config_path; /* -c, or CONFIG_DEFAULT_PATH */
	bool config_given; /* -c was given: a missing file is an error */
	const char *fstab_path; /* -f; NULL: the config's fstab = */
	const char *mountinfo_path; /* VIEW_MOUNTINFO, or $STORAGED_MOUNTINFO */
	const char *inventory_fixture; /* NULL: scan the system; else an
					  inventory_load_fixture() file */
	const char *meminfo_path; /* NULL: sysinfo(2); else a /proc/meminfo
				     format file whose MemTotal is read */
	const char *surveys_path; /* NULL: walk each area's directory; else one
				     "BYTES INODES" line per [area], in order */
	const char *filesystems_path; /* NULL: /proc/filesystems and the kernel's
					 modules; else the whole list of types */
	const char *helper_dirs; /* NULL: MOUNT_HELPER_DIRS (spawn_helper.h) */
	const char *sysfs_btrfs; /* SYSFS_BTRFS, or $STORAGED_SYSFS_BTRFS */
	const char *scrub_status_dir; /* BTRFS_SCRUB_STATUS_DIR, or $STORAGED_SCRUB_STATUS_DIR */
	const char *state_dir; /* --state-dir */
	bool local_only; /* --local */
	/* start: the file (in the state directory) that holds the warnings
	 * of the configuration a start of this boot printed: the same ones
	 * again are logged at debug level only (world_load()); NULL: always
	 * printed (check, --dry-run) */
	const char *warned_path;
	/* start (the boot, the resident, the initramfs helper): an error
	 * within one fstab line, [area] or [btrfs] section refuses that item
	 * alone, as a failed step (refuse.c); false (check, --dry-run): any
	 * error stops the pass */
	bool lenient;
	/* check, --dry-run: an area start finds set up already (its record and
	 * its bind, area_found_set_up()) is a done step, one whose bind is gone
	 * a step that fails; start leaves both to area_setup(), under its lock */
	bool area_records;
};

/*
 * @s: filled from @o and the environment
 *
 * Test-only inputs (STORAGED_MOUNTINFO, _INVENTORY, _MEMINFO, _SURVEYS,
 * _FILESYSTEMS, _MOUNT_HELPERS, _SYSFS_BTRFS; storaged(8), ENVIRONMENT),
 * each a file read instead of the system's own, are read with
 * secure_getenv(3): ignored in a set-user-ID or otherwise secure execution.
 * With STORAGED_MOUNTINFO set, the plan's paths are a test's, not this
 * machine's: mount points are not checked (predict_plan()).
 * An empty value counts as unset.
 */
void sources_init(struct sources *s, const struct options *o);

/* The first test-only input of sources_init() that is set (its variable's
 * name, static), or NULL: a command that changes the system refuses to
 * run on a fixture's view of it. */
const char *sources_fixture_set(void);

struct world {
	struct config cfg;
	struct fstab fstab;
	struct entry_facts *facts; /* one per fstab.entries[i] (plan_input.facts) */
	struct inventory inv;
	struct btrfs_fs_list btrfs;
	struct libmnt_table *mountinfo;
	struct area_survey *surveys; /* one per cfg.areas[i] */
	/* NULL, or one per cfg.areas[i] (plan_input.area_records); their
	 * strings owned */
	struct plan_area_record *area_records;
	struct plan plan;
	struct predictions predictions; /* the plan's steps borrow them */
	/* the pass's view of the system, which the loader's walks filled;
	 * start hands it on to the executor's mounts (struct mount_children) */
	struct view view;
	/* the configuration's warnings (config, fstab, plan), one
	 * "file:line: message" per line, owned; NULL when out of memory */
	char *warnings;
	bool warnings_repeated; /* the same as @warned_path holds: not printed */
	/* errors within no fstab line, [area] or [btrfs] section: the
	 * configuration as a whole cannot be used (refuse.c) */
	int unusable;
};

/*
 * @s: where the config and fstab are
 * @w: zeroed; its cfg and fstab are filled (free with world_done() in any
 *     case)
 * @dl: errors and warnings with file:line, for the caller to log
 *
 * Reads the config (built-in defaults when it is missing and was not
 * given with -c) and the fstab it names (or @s->fstab_path), both with the
 * root-owner check.
 *
 * Returns: 0; -EINVAL when @dl holds errors; -ENOMEM.
 */
int world_load_config(const struct sources *s, struct world *w, struct diag_list *dl);

/*
 * @s: sources (@s->inventory_fixture, or the system's block devices)
 * @depth: how much to ask of each device (inventory_scan()); with
 *         INVENTORY_BTRFS_ONLY, a UUID= of @w's fstab that no btrfs
 *         superblock holds makes it INVENTORY_FULL
 * @lg: devices skipped are logged at debug level, btrfs problems as they are
 * @w: zeroed; its inv and btrfs are filled (free with world_done()), and
 *     its mountinfo when a device that could not be read is looked up in
 *     the mount table (udev's database says nothing of it)
 *
 * The block device inventory and the btrfs filesystems grouped from it.
 *
 * Returns: 0 or negative errno (not logged).
 */
int world_load_devices(const struct sources *s, enum inventory_depth depth, const struct logger *lg,
		       struct world *w);

/*
 * @w: zeroed; filled (free with world_done() in any case)
 *
 * Config and fstab, the real paths of mount points and bind sources (I/O:
 * a link on the way is checked as the mount would check it), block
 * devices and btrfs filesystems (only when some entry needs a device, see
 * plan_needs_devices()), the mount table, area surveys, RAM size, then
 * plan_build() and predict_plan().  Warns (logged) about each deferred
 * entry without noauto.
 *
 * Returns: 0; -EINVAL when the config, the fstab or the plan has errors
 * (logged: a usage error); -EIO when the system could not be read (the
 * block devices or the mount table; logged); -ENOMEM.
 */
int world_load(const struct sources *s, const struct logger *lg, struct world *w);

/* The steps a plan shows will fail, counted as start counts what it
 * meets (exec_summary): check, --dry-run and start agree on them. */
struct world_failures {
	unsigned failed; /* steps the boot needs: the exit status is 1 */
	unsigned skipped; /*   of those, skipped: a step they wait for fails */
	unsigned tolerated; /* steps only nofail entries need */
};

enum world_failure {
	WORLD_FAILURE_NONE, /* the plan does not show it failing */
	WORLD_FAILURE_COUNTED, /* in failed (and skipped, for a skip) */
	WORLD_FAILURE_TOLERATED, /* in tolerated */
	WORLD_FAILURE_AT_WAITERS, /* a wait for devices: counted at the steps waiting on it */
};

/*
 * @p: a predicted plan
 * @ret: the steps of @p counted as start will count each when it fails as
 *       plan_step_will_fail() says: a step the boot needs
 *       (plan_boot_needs()) is a failure (a skip too, counted apart among
 *       them); a nofail entry, or a step only nofail entries need, is
 *       tolerated; and a wait for devices is not counted (start fails or
 *       skips the mounts waiting on it instead, and those are counted)
 * @each: NULL, or told how each step was counted (check logs them)
 *
 * Returns: 0; -ENOMEM (@ret zeroed).
 */
int world_predicted_failures(const struct plan *p, struct world_failures *ret,
			     void (*each)(void *userdata, size_t i, enum world_failure how),
			     void *userdata);

/*
 * The closing line of check and --dry-run, of the counts in @c: only the
 * counts that are not zero, at error level when a failure counts, at
 * warning level when only nofail steps fail, nothing when none does.
 */
void world_log_failures(const struct logger *lg, const struct world_failures *c);

/*
 * @w: a world whose config and fstab are loaded (world_load_config())
 * @dl: diagnostics; the errors from index @from on are looked at
 * @ret_new: how many items were refused that were not before
 *
 * Refuses the item each error points into (FILE:LINE): the fstab entry
 * of that line (fstab_entry.refused, .refused_at), the [area] or the
 * [btrfs] section whose lines hold it (area_config.refused,
 * btrfs_policy.refused), each text "refused, FILE:LINE: message; ...".
 *
 * Returns: the number of errors within no such item (the configuration
 * as a whole cannot be used); -ENOMEM.
 */
int world_refuse_items(struct world *w, const struct diag_list *dl, size_t from, size_t *ret_new);

/*
 * Frees the errors of @dl that a refused fstab line or area of @w says
 * in its failed step: a pass that goes on says each once.
 */
void world_drop_said(const struct world *w, struct diag_list *dl);

/*
 * The one line that says a lenient pass stops: @left errors lie within
 * no item it could refuse alone.
 */
void world_log_unusable(const struct logger *lg, int left);

/*
 * Frees everything world_load() or world_load_config() filled; @w may be
 * partly filled.
 */
void world_done(struct world *w);

/*
 * @s: its warned_path, when set, is rewritten (file_write_atomic()) with
 *     @w->warnings, unless they were repeated
 * @w: a loaded world
 *
 * After a start: the next start of this boot (the state directory is in
 * /run) prints the same warnings at debug level only.  Returns: 0 or
 * negative errno (the next start prints them again: nothing lost).
 */
int world_note_warnings(const struct sources *s, const struct world *w);

#endif
