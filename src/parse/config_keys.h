/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Private to config.c and config_keys.c: the key table of storaged.conf.
 */
#ifndef STORAGED_CONFIG_KEYS_H
#define STORAGED_CONFIG_KEYS_H

#include <stddef.h>

#include "config.h"

#define CONFIG_NAME_CHARS "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-"

#define CONFIG_OPTION_CHARS CONFIG_NAME_CHARS ":+="

enum section_kind {
	SECTION_NONE, /* keys before the first header (inih's section "") */
	SECTION_STORAGED,
	SECTION_AREA,
	SECTION_BTRFS, /* [btrfs FSID] or [btrfs LABEL=NAME] */
	SECTION_SKIP, /* a bad section was reported: ignore its keys */
};

struct key_def;
typedef int (*key_parser)(const char *v, void *base, const struct key_def *k);

struct key_def {
	enum section_kind section;
	const char *key;
	key_parser parse; /* 0, -EINVAL (bad value), -ERANGE (out of range), -ENOMEM */
	size_t off; /* destination within struct config, area_config or btrfs_policy */
	size_t flag_off; /* bool set to true after a successful parse; 0: none */
	const char *expect; /* "is not ..." completion for messages */
};

#define CONFIG_N_KEYS 36

extern const struct key_def config_keys[CONFIG_N_KEYS];

/*
 * Returns: the entry for @key in sections of kind @in, or NULL.
 */
const struct key_def *config_key_find(enum section_kind in, const char *key);

/*
 * Writes the keys accepted in @in, comma-separated, into @buf (@len bytes,
 * cut if too small).  Returns: @buf.
 */
const char *config_key_list(enum section_kind in, char *buf, size_t len);

#endif
