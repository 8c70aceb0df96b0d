/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The predictor's private room, shared by predict.c (the rules table, the
 * rules on options and sizes, the pass) and predict_system.c (the rules
 * that look at the system).  The predict__ prefix marks the folder's own
 * names; nothing here is for callers of predict.h.
 */
#ifndef STORAGED_PREDICT_INTERNAL_H
#define STORAGED_PREDICT_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "predict.h"

struct predictor {
	const struct plan_input *in;
	const struct predict_sources *ps;
	struct plan *p;
	struct predictions *out;
	char **fstypes; /* kernel types, NULL until first needed */
	char **dev_types; /* those of them /proc/filesystems lists without
			     "nodev": they mount a block device */
	bool fstypes_loaded;
	bool aliases_loaded; /* modules.alias added to fstypes */
	char **zram_compressors; /* what a zram device lists, NULL: unknown */
	bool zram_loaded;
	/* below_pending(): the mount points and area paths of the steps still
	 * to run, sorted (strcmp); n_tops SIZE_MAX until built */
	const char **tops;
	size_t n_tops;
};

/* Step @i fails, because of the printf-formatted text (owned by @pr->out,
 * borrowed by the step).  Returns: 1, or -ENOMEM. */
int predict__record(struct predictor *pr, size_t i, const char *fmt, ...) _printf_(3, 4);

/* The fstab's name as diagnostics give it ("fstab:3" names file:line). */
const char *predict__fstab_file(const struct predictor *pr);

/* predict_system.c: the rules of mount step @i that look at the system
 * (predict.c's rules[] cites what each follows).  Returns: 1 when a
 * failure was predicted, 0, or -ENOMEM. */
int predict__fstype(struct predictor *pr, size_t i);
int predict__mount_point(struct predictor *pr, size_t i);
int predict__source(struct predictor *pr, size_t i);
int predict__block_source(struct predictor *pr, size_t i);
int predict__overlay_dirs(struct predictor *pr, size_t i);
/* ... and of area step @i: a zram compressor this kernel does not have */
int predict__zram_compression(struct predictor *pr, size_t i);
/* ... a brd driver missing, a mkfs missing or refusing the layout, a
 * directory inside a tmpfs a step mounts empty */
int predict__brd_driver(struct predictor *pr, size_t i);
int predict__mkfs(struct predictor *pr, size_t i);
int predict__area_in_fresh_ram(struct predictor *pr, size_t i);
int predict__area_overlay(struct predictor *pr, size_t i);

#endif
