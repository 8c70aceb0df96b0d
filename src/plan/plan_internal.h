/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The planner's private room: the builder that plan_build.c (the run and
 * step 6), plan.c (steps 1-3), plan_builder.c (its helpers), plan_edges.c
 * (step 4) and plan_order.c (step 5) share.  Nothing here is for callers of plan.h: the plan__
 * prefix marks these names as the folder's own, as libmount marks its
 * shared-private ones.
 */
#ifndef STORAGED_PLAN_INTERNAL_H
#define STORAGED_PLAN_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "plan.h"

#define NONE SIZE_MAX

enum edge_kind {
	EDGE_MEMBER, /* ASSEMBLE waits for a REGISTER */
	EDGE_DEVICE, /* rule 3: entry waits for ASSEMBLE or WAIT_DEVICE */
	EDGE_PARENT, /* rule 1 */
	EDGE_SOURCE, /* rule 2 */
	EDGE_AREA, /* rule 4 */
	EDGE_REQUIRES, /* rule 5 */
	EDGE_MOUNTED, /* SCRUB waits for the MOUNT of its filesystem */
};

struct edge {
	size_t from; /* waits ... */
	size_t to; /* ... for this step */
	enum edge_kind kind;
	char *reason; /* owned */
};

struct builder {
	const struct plan_input *in;
	struct diag_list *diags;
	struct plan_step *steps; /* in creation order */
	size_t n_steps, cap_steps;
	struct edge *edges;
	size_t n_edges, cap_edges;
	/* the edges by (from, to), open addressing: slot = edge index + 1,
	 * 0 free; @cap_index a power of two, at most half full */
	size_t *edge_index;
	size_t cap_index;
	size_t *entry_step; /* per fstab entry: its MOUNT step */
	size_t *area_step; /* per config area: its AREA step, or NONE */
	size_t *by_target; /* fstab entries sorted by target, then by line */
};

/* plan_builder.c: the builder's helpers */
/* A zeroed step of @kind at the end of @b->steps (*@ret its index).  0 or
 * -ENOMEM. */
int plan__builder_add_step(struct builder *b, enum plan_step_kind kind, size_t *ret);
int plan__builder_add_edge(struct builder *b, size_t from, size_t to, enum edge_kind kind,
		     const char *fmt, ...) _printf_(5, 6);
const struct fstab_entry *plan__builder_entry(const struct builder *b, size_t i);
/* Does @e's source name a block device that must be present (a tag or a
 * /dev path; not a bind, a loop file or a nodev type)? */
bool plan__entry_needs_device(const struct fstab_entry *e);
/* The loader's facts about entry @i (an empty set when it gave none). */
const struct entry_facts *plan__builder_facts(const struct builder *b, size_t i);
/* Mount points spelt apart that lead to one directory: an error on the
 * later line (plan_builder.c).  Returns: 0, -EINVAL, -ENOMEM. */
int plan__check_resolved_duplicates(const struct plan_input *in, struct diag_list *diags);
/* The deferred entry (not @skip) whose mount point is the deepest one
 * containing @path: strictly above it, or also equal with @or_equal; NONE. */
size_t plan__deepest_entry_above(const struct builder *b, const char *path, bool or_equal, size_t skip);
/* The area (that has a step) whose path contains @path, or NONE. */
size_t plan__area_above(const struct builder *b, const char *path, bool or_equal);
/* The deferred entry whose mount point is @path, as written or with the
 * links on the way resolved (entry_facts.target_real); NONE. */
size_t plan__entry_on(const struct builder *b, const char *path);
/* The step that makes @path what it will be (see plan.c), or NONE. */
size_t plan__deepest_holder(const struct builder *b, const char *path, size_t skip, const char **ret_name);
/* The WAIT_DEVICE step for @spec (µs @timeout), created once. 0 or -ENOMEM. */
int plan__ensure_wait(struct builder *b, const char *spec, uint64_t timeout, size_t *ret);
/* µs: the entry's own device timeout, else the configured one. */
uint64_t plan__entry_device_timeout(const struct plan_input *in, const struct fstab_entry *e);

/* plan.c, steps 1-3: the MOUNT step of fstab entry @i (done when its
 * target is mounted already); the device steps entry @i waits for; the
 * AREA step of configured area @i.  Each: 0 or -ENOMEM. */
int plan__add_mount_step(struct builder *b, size_t i);
int plan__add_device_steps(struct builder *b, size_t i);
int plan__add_area_step(struct builder *b, size_t i);

/* plan_scrub.c */
/* stale-member = scrub: a SCRUB step after the MOUNT step @mount of the
 * btrfs filesystem @fs, when a member of @fs is stale and the mount is to
 * be made (not done, not a conflict); one per filesystem.  0 or -ENOMEM. */
int plan__add_scrub(struct builder *b, size_t mount, const struct btrfs_filesystem *fs);

/* plan_edges.c, step 4: every edge of rules 1, 2, 4 and 5.  0 or -ENOMEM. */
int plan__add_edges(struct builder *b);

/* plan_order.c, step 5: Kahn's sort into @perm; returns how many steps
 * were placed (fewer than all: a cycle among the @pending). */
size_t plan__order_steps(const struct builder *b, size_t *pending, bool *placed, size_t *perm);
/* A cycle among the steps left: reported once, naming every entry in it.
 * Returns: -ELOOP, or -ENOMEM. */
int plan__diagnose_cycle(struct builder *b, const size_t *pending);

/* plan__refused_section (plan_builder.c): mount step @s fails with the
 * errors of its filesystem's refused [btrfs] section.  Returns: 0 or
 * -ENOMEM. */
int plan__refused_section(struct plan_step *s, const struct btrfs_policy *sec);

/* plan__add_refused_area_step (plan_builder.c): the step of area @i, which
 * the boot refuses: it fails with the area's errors.  Returns: 0 or
 * -ENOMEM. */
int plan__add_refused_area_step(struct builder *b, size_t i);

#endif
