/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The plan: every step storaged will take, with dependency edges and the
 * reason for each, built by a pure function of (config, fstab, device
 * inventory, mount table, area surveys).  --dry-run renders it and stops.
 */
#ifndef STORAGED_PLAN_H
#define STORAGED_PLAN_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <libmount.h>

#include "area_size.h"
#include "devices/btrfs.h"
#include "parse/config.h"
#include "shared/diag.h"
#include "parse/fstab.h"
#include "devices/inventory.h"

enum plan_step_kind {
	PLAN_REGISTER, /* register one btrfs member with the kernel */
	PLAN_ASSEMBLE, /* wait (bounded) until a btrfs filesystem has all members */
	PLAN_WAIT_DEVICE, /* wait (bounded) for a device not present yet */
	PLAN_AREA, /* set up a RAM area */
	PLAN_MOUNT, /* mount a deferred fstab entry */
	PLAN_SCRUB, /* stale-member = scrub: start a scrub of a btrfs filesystem
		       once its mount (the one dependency) is made, not degraded */
};

struct plan_dep {
	size_t step; /* index into plan.steps: this step waits for it */
	char *reason; /* owned, e.g. "/srv/data: parent mount point" */
};

/* How to allow a degraded mount of the btrfs filesystem whose fsid is the
 * first %s, for messages: the configuration's policy (in the file that is
 * the second %s, plan_step.policy_file) or the entry's consent (plan.c,
 * set_degraded_policy()). */
#define PLAN_DEGRADED_CONSENT \
	"set degraded = read-only or after-timeout in its [btrfs %s] section or [storaged] of %s, or add x-storaged.degraded to the fstab entry"

struct plan_step {
	enum plan_step_kind kind;
	struct plan_dep *deps;
	size_t n_deps;
	bool done; /* already in place (e.g. mounted): nothing to do */
	bool later; /* plan_input.local_only: left for a later pass, because the
		       entry needs the network or the step waits on one that does */
	bool conflict; /* something else is in place: the step fails (see note) */
	char *note; /* owned, optional: why done or in conflict, or what was found */

	/* PLAN_REGISTER: member device; PLAN_ASSEMBLE, PLAN_SCRUB: NULL; PLAN_MOUNT: the
	 * device a tag source resolved to in the inventory, which the mount is
	 * given (plan_identity_check()), or NULL */
	char *devnode;
	uint64_t devid; /* PLAN_REGISTER: the member's; PLAN_SCRUB: the first stale member's */
	/* PLAN_REGISTER, PLAN_ASSEMBLE, PLAN_SCRUB; PLAN_MOUNT with
	 * stale_refused: the filesystem refused */
	char fsid[37];
	uint64_t num_devices; /* members expected */
	uint64_t n_present; /* members present when planned */
	char *missing; /* owned, e.g. "devid 2 missing"; NULL when complete */
	char *label; /* PLAN_ASSEMBLE: owned btrfs label; NULL when none */
	/* PLAN_ASSEMBLE, PLAN_WAIT_DEVICE: how long to wait, µs (longest of
	 * the entries that need it) */
	uint64_t timeout_usec;
	/* PLAN_ASSEMBLE, and PLAN_WAIT_DEVICE of a btrfs entry: each member
	 * that arrives after the first look extends the wait to settle_usec
	 * after it, up to settle_limit_usec past timeout_usec (counted from
	 * the first member seen); µs, 0: no such extension */
	uint64_t settle_usec, settle_limit_usec;
	/* PLAN_ASSEMBLE, and PLAN_WAIT_DEVICE of a btrfs entry: the wait
	 * follows the members (timeout_usec counts from the first one seen) */
	bool members;
	/* PLAN_WAIT_DEVICE: the fs_spec waited for ("LABEL=…") */
	char *spec;

	/* PLAN_MOUNT; PLAN_SCRUB: the entry of the mount it waits for */
	const struct fstab_entry *entry; /* borrowed from the fstab */
	const struct entry_facts *facts; /* borrowed: what the loader found of @entry */
	uint64_t mount_timeout_usec; /* resolved deadline of the mount, µs */
	bool degraded_allowed; /* degraded = after-timeout or read-only (the
				  filesystem's [btrfs] section, else
				  [storaged]'s), or x-storaged.degraded */
	bool degraded_read_only; /* degraded = read-only without
				    x-storaged.degraded: mount -o ro,degraded */
	/* the file of the [btrfs] section, else of [storaged], that sets
	 * its degraded policy: borrowed from the config, never NULL */
	const char *policy_file;
	bool is_btrfs; /* btrfs entry: mount waits on an ASSEMBLE step */
	bool stale_refused; /* a conflict: a stale member, and stale-member = refuse */

	/* PLAN_AREA */
	const struct area_config *area; /* borrowed from the config */
	struct area_sizing sizing;
	/* the area's directory is on a filesystem storaged mounts first: it is
	 * surveyed and sized when the step runs (sizing is empty until then) */
	bool sizing_deferred;

	/* predict_plan() (predict.h): why start will fail this step,
	 * found by looking at the system (memory, helpers, filesystem types,
	 * paths); NULL when nothing is known.  Borrowed from the struct
	 * predictions that predict_plan() filled.  The executor does not
	 * act on it: start meets the failure itself. */
	const char *predicted;
};

/* The start of a prediction that a step is skipped, not failed. */
#define PLAN_PREDICTED_SKIP "skipped: "

/*
 * Returns: true when predict_plan() (world/predict.h) found that start
 * skips @s because a step it waits on will fail (start counts it as
 * skipped, not failed).  Here, so that the renderer tells the two apart
 * without the predictor.
 */
static inline bool plan_step_predicted_skip(const struct plan_step *s)
{
	return s->predicted && strncmp(s->predicted, PLAN_PREDICTED_SKIP, sizeof(PLAN_PREDICTED_SKIP) - 1) == 0;
}

/*
 * Returns: true for a wait for a device or for a btrfs filesystem's
 * members.  Start counts no such step: its failure is that of the steps
 * that wait on it (plan_step_waits_for_own_device()).
 */
static inline bool plan_step_is_device_wait(const struct plan_step *s)
{
	return s->kind == PLAN_WAIT_DEVICE || s->kind == PLAN_ASSEMBLE;
}

/*
 * @s: a mount step
 * @w: a step @s depends on
 *
 * Returns: true when @w is the wait for @s's own device (its source, or
 * its btrfs set), not one that x-storaged.requires= names: when @w fails,
 * start fails @s for @w's reason (as `mount -a` says of it) instead of
 * skipping it.
 */
static inline bool plan_step_waits_for_own_device(const struct plan_step *s, const struct plan_step *w)
{
	return w->kind == PLAN_ASSEMBLE || (w->kind == PLAN_WAIT_DEVICE && strcmp(w->spec, s->entry->source) == 0);
}

struct plan {
	struct plan_step *steps; /* in execution order: deps come first */
	size_t n_steps;
};

/*
 * What the loader (world/) found on the live system about one fstab entry
 * when it was loaded: facts the parser cannot know, kept beside the
 * parser's struct fstab_entry, not in it.  All strings are owned by the
 * loader; zero-initialised is "nothing found".
 */
struct entry_facts {
	char *target_real; /* the mount point with the links that exist now
			      resolved, as the mount table shows it; NULL when
			      the same or not resolvable yet */
	mode_t target_mode; /* st_mode of what the mount point led to (links
			       followed); 0 when missing or not looked at */
	char *refused; /* why the mount point or bind source leads through a
			  link storaged does not trust (safepath_check());
			  NULL when it does not */
	/* NULL, or one per fstab_entry.paths[k]: that path with the links
	 * that exist now resolved (a glob keeps its wildcards); NULL when the
	 * same or not resolved */
	char **path_real;
};

/** entry_facts_path_real: @f's path_real[@k], or NULL. */
static inline const char *entry_facts_path_real(const struct entry_facts *f, size_t k)
{
	return f->path_real ? f->path_real[k] : NULL;
}

/* What storaged's state directory says of a configured area, as start
 * finds it (check, --dry-run: world/). */
struct plan_area_record {
	char *done; /* NULL, or how it is set up already: start leaves it as
		       it is, a done step with this note */
	char *fails; /* NULL, or why start refuses it (its bind over the
			directory was unmounted or moved): the step fails */
};

struct plan_input {
	const struct config *config;
	const struct fstab *fstab; /* deferred entries */
	const struct inventory *inventory;
	const struct btrfs_fs_list *btrfs; /* grouped from @inventory */
	struct libmnt_table *mountinfo; /* current mounts (read only) */
	/* NULL (nothing known), or one per fstab->entries[i] */
	const struct entry_facts *facts;
	const struct area_survey *surveys; /* one per config->areas[i], or NULL */
	const struct plan_area_record *area_records; /* NULL, or one per config->areas[i] */
	uint64_t ram_bytes; /* MemTotal, bytes */
	/* storaged's state directory, links resolved where it exists (NULL:
	 * unknown): no area may cover it or lie in it */
	const char *state_dir;
	bool local_only; /* leave remote entries (fstab_entry.remote) and what
			    depends on them for a later pass (start --local) */
};

/*
 * @in: inputs, all read-only and owned by the caller
 * @ret: the plan (free with plan_done()); borrows from @in, which must
 *       outlive it
 * @diags: errors with file:line (a cycle names every entry in it, each with
 *         its fstab line; an x-storaged.requires= naming nothing) and
 *         warnings
 *
 * Ordering rules (DESIGN.md): 1. a mount point below another entry's mount
 * point waits for it; 2. a bind or loop source below another entry's mount
 * point waits for it; 3. a btrfs entry waits for its filesystem's ASSEMBLE
 * step, which waits for the REGISTER step of each member present; 4. an area
 * whose path lies below a mount point waits for it; 5. requires/after add an
 * edge; 6. with stale-member = scrub, a SCRUB step waits for the first
 * MOUNT step of a btrfs filesystem that has a stale member.  Steps are
 * ordered topologically, ties broken by fstab line order.
 * Entries already mounted (same target in @mountinfo) and areas set up
 * already (@in->area_records) become done steps.
 *
 * Returns: 0; -ELOOP on a dependency cycle; -EINVAL on other errors
 * appended to @diags; -ENOMEM.
 */
int plan_build(const struct plan_input *in, struct plan *ret, struct diag_list *diags);

void plan_done(struct plan *p);

/*
 * Returns: why the step @s (with ->later set) is left for later, as static
 * text for the user.
 */
const char *plan_later_reason(const struct plan_step *s);

/*
 * Returns: whether @reason (a record's, may be NULL) is one of
 * plan_later_reason()'s: a step `start --local` left for the start after
 * the network, which waits at rest with no storaged at work.
 */
bool plan_is_later_reason(const char *reason);

/*
 * @fsid: a filesystem UUID as text, "5e81a1b2-..."
 * @buf: output, at least 12 bytes
 *
 * Its first 8 characters and an ellipsis: enough to tell filesystems apart
 * in text.  Shared by the planner's messages and plan_render.c.
 *
 * Returns: @buf.
 */
const char *plan_fsid_short(const char *fsid, char *buf, size_t len);

/*
 * @buf: output, e.g. "mount UUID=… on /srv/data", "register /dev/loop1"
 * Returns: @buf.
 */
char *plan_step_describe(const struct plan_step *s, char *buf, size_t len);

/*
 * @s: a PLAN_ASSEMBLE or PLAN_WAIT_DEVICE step
 * @buf: output, e.g. "up to 5s", "up to 10s after the first member, 2s
 *       after the last arrival (at most 40s)", "without a time limit"
 * How long the step waits, in the words of the plan, the state's
 * wait_policy and the decision line.
 * Returns: @buf.
 */
char *plan_wait_words(const struct plan_step *s, char *buf, size_t len);

/*
 * Prints numbered steps with the reason for each edge, e.g.
 *   3 mount UUID=… on /srv/data  (after: 2 btrfs 5e81… ready, 2/2 members)
 * Returns: 0 or negative errno from writing.
 */
int plan_render_text(const struct plan *p, FILE *out);

/*
 * The same plan as JSON through libsmartcols.
 * Returns: 0 or negative errno.
 */
int plan_render_json(const struct plan *p, FILE *out);

/*
 * Pure.  Tells whether planning needs the block device inventory: some
 * entry has a device source (a tag or a /dev path; not a bind, a loop file
 * or a nodev type) or a requires= naming a device.  Without one, storaged
 * skips the scan, which opens and probes every block device.
 *
 * Returns: true when the inventory is needed.
 */
bool plan_needs_devices(const struct fstab *fstab);

/*
 * Pure.  Tells whether every device the entries need is a btrfs
 * filesystem named by its fsid (fs_vfstype btrfs, fs_spec UUID=) and no
 * requires= names a device: then btrfs superblocks alone find them, and
 * the scan need not ask libblkid of the other devices
 * (INVENTORY_BTRFS_ONLY).  A LABEL=, a path or another type wants the
 * full probe: labels are shared by accident, and a path's device may hold
 * anything.  A non-btrfs filesystem given a btrfs fsid on purpose
 * (`tune2fs -U`) is not looked for.
 *
 * Returns: true when the btrfs superblocks suffice.
 */
bool plan_devices_by_fsid_only(const struct fstab *fstab);

/*
 * A step the plan knows will fail: something else on its mount point, an
 * untrusted link, a seed that does not fit its area, or a prediction.
 *
 * Returns: why (borrowed from @s), or NULL.
 */
const char *plan_step_will_fail(const struct plan_step *s);

/*
 * @p: a plan (steps in dependency order, as plan_build() makes them)
 * @needed: p->n_steps flags, zeroed by the caller; set for each step the
 *          boot needs
 *
 * Which steps the boot needs: every step but a nofail mount, a wait
 * for devices that other steps depend on, a scrub and a step left for later; and
 * every step a needed step waits for.  So a wait that only nofail entries
 * depend on is not needed: its failure is tolerated as theirs is.
 */
void plan_boot_needs(const struct plan *p, bool *needed);

#endif
