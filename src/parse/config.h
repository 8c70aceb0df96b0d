/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * storaged.conf: the [storaged] section and one [area NAME] section per RAM
 * area, read through inih.  See storaged.conf(5) and DESIGN.md.
 */
#ifndef STORAGED_CONFIG_H
#define STORAGED_CONFIG_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "shared/diag.h"

#define CONFIG_DEFAULT_PATH "/etc/storaged.conf"
#define CONFIG_DEFAULT_FSTAB "/etc/fstab"

enum degraded_policy {
	DEGRADED_NO,
	DEGRADED_AFTER_TIMEOUT, /* mount -o degraded once the wait has ended */
	DEGRADED_READ_ONLY, /* mount -o ro,degraded once the wait has ended */
};

/* stale-member =: a btrfs member whose superblock generation is behind */
enum stale_member_policy {
	STALE_MEMBER_WARN, /* default */
	STALE_MEMBER_SCRUB, /* warn, and start a scrub after the mount */
	STALE_MEMBER_REFUSE, /* warn, and refuse the (non-degraded) mount */
};

enum area_backend {
	AREA_TMPFS,
	AREA_ZRAM,
	AREA_BRD,
};

enum area_size_kind {
	AREA_SIZE_BYTES, /* value in bytes */
	AREA_SIZE_PERCENT, /* value in percent of RAM, 1..100 */
	AREA_SIZE_AUTO, /* from the seed survey × headroom */
};

struct area_size {
	enum area_size_kind kind;
	uint64_t value;
};

struct area_config {
	char *name; /* from "[area NAME]" */
	char *file; /* file the section is in (owned), NULL when built in code */
	unsigned line; /* line of the section header */
	char *path; /* absolute, normalised persistent directory */
	unsigned path_line; /* line of "path =", 0 when not set */
	enum area_backend backend; /* default AREA_TMPFS */
	struct area_size size; /* default auto */
	bool inodes_auto; /* default true */
	uint64_t inodes; /* nr_inodes when !inodes_auto */
	double headroom; /* default 2.0 */
	bool seed; /* default true */
	/* "seed = overlay" (seed is false then): the directory is overlayfs's
	 * lower layer, the area holds the upper one (area_overlay.c) */
	bool overlay;
	bool persist; /* default false */
	/* "nosuid = no", "nodev = no": set-user-ID bits and device nodes in
	 * the area take effect.  Default false: an area is mounted nosuid,nodev,
	 * also when built in code, zeroed */
	bool allow_suid, allow_dev;
	bool force; /* allow a size above RAM + swap; default false */
	/* tmpfs only: a resident storaged raises size= and nr_inodes= before
	 * either runs out, within [storaged]'s memory-reserve; default false */
	bool grow;
	char *fs; /* zram/brd filesystem, default "ext4" */
	unsigned fs_line; /* line of "fs =", 0 when not set */
	/* zram only: the compressor (the device's comp_algorithm), NULL: the
	 * kernel's default; a block device that pages the kernel writes back
	 * go to (backing_dev), NULL: none */
	char *compression;
	unsigned compression_line; /* line of "compression-algorithm =", 0 when not set */
	char *writeback_device;
	unsigned writeback_line; /* line of "writeback-device =", 0 when not set */
	unsigned mode; /* root mode of the area; default: that of path */
	bool mode_set;
	uid_t uid; /* owner (name or number); default: that of path */
	bool uid_set;
	gid_t gid;
	bool gid_set;
	/* how often a persist area is synced back while it is mounted, in
	 * microseconds, 0: only at stop and by hand; unset: [storaged]'s
	 * (config_parse_buf() puts it in after each file) */
	uint64_t sync_interval_usec;
	bool sync_interval_set;
	/* the last line of the section in @file (the next header's line - 1;
	 * UINT_MAX: to the end of the file), for the loader to tell which
	 * errors are this area's (world/refuse.c) */
	unsigned last_line;
	/* the boot refuses the area: its errors, "FILE:LINE: message; ..."
	 * (owned), set by the loader (world/refuse.c); NULL: not refused */
	char *refused;
};

/*
 * One [btrfs FSID] or [btrfs LABEL=NAME] section: the assembly policy of
 * one filesystem, over [storaged]'s.  A key not set here is [storaged]'s.
 */
struct btrfs_policy {
	char *name; /* after "btrfs ": an fsid in lower case, or "LABEL=NAME" (owned) */
	const char *label; /* NAME within @name for a LABEL= section, else NULL */
	char *file; /* file of the section (owned) */
	unsigned line; /* line of its header */
	uint64_t device_timeout_usec; /* µs */
	bool device_timeout_set;
	enum degraded_policy degraded;
	bool degraded_set;
	enum stale_member_policy stale_member;
	bool stale_member_set;
	uint64_t settle_usec; /* µs */
	bool settle_set;
	uint64_t settle_limit_usec; /* µs */
	bool settle_limit_set;
	unsigned last_line; /* as area_config.last_line, in @file only */
	char *refused; /* as area_config.refused: the filesystem is not mounted */
};

/* What applies to one btrfs filesystem: config_btrfs_policy(). */
struct btrfs_fs_policy {
	uint64_t device_timeout_usec; /* µs, from the first member seen */
	uint64_t settle_usec; /* µs: quiet period each later arrival re-arms; 0: none */
	uint64_t settle_limit_usec; /* µs: how far past device-timeout it may go */
	enum degraded_policy degraded;
	enum stale_member_policy stale_member;
	const struct btrfs_policy *section; /* borrowed; NULL: [storaged]'s alone */
};

struct config {
	char *file; /* main file read, or NULL for built-in defaults */
	char *fstab; /* default CONFIG_DEFAULT_FSTAB */
	char **select; /* strv: fstab options that hand an entry to storaged;
			  default { "x-storaged", "_netdev" } */
	uint64_t device_timeout_usec; /* default 90 s */
	/* the wait for a btrfs filesystem's members: each member that arrives
	 * after the first look extends it to settle_usec after the arrival
	 * (default 0: off), to at most settle_limit_usec past the device
	 * timeout (default CONFIG_DEFAULT_SETTLE_LIMIT_USEC) */
	uint64_t settle_usec;
	uint64_t settle_limit_usec;
	enum degraded_policy degraded; /* default DEGRADED_NO */
	uint64_t mount_timeout_usec; /* default 90 s */
	unsigned jobs; /* 1..64, default 4 */
	bool hotplug; /* default false */
	struct area_config *areas;
	size_t n_areas;
	enum stale_member_policy stale_member; /* default STALE_MEMBER_WARN */
	/* where to write the Prometheus metrics after each pass
	 * (absolute path, owned), NULL: nowhere (status_prom.h) */
	char *metrics_textfile;
	/* sync-interval of the areas that set none, in microseconds, 0: off;
	 * default CONFIG_DEFAULT_SYNC_INTERVAL_USEC */
	uint64_t sync_interval_usec;
	/* what the resident leaves to the rest of the system when it grows an
	 * area (grow = yes): bytes, or percent of MemTotal; default
	 * CONFIG_DEFAULT_MEMORY_RESERVE_PERCENT % (config_memory_reserve()) */
	struct area_size memory_reserve;
	struct btrfs_policy *btrfs; /* [btrfs ...] sections, in the order read */
	size_t n_btrfs;
};

#define CONFIG_DEFAULT_SETTLE_LIMIT_USEC (30ULL * 1000000ULL)

/* A fifth of RAM: twice the MemAvailable at which earlyoom (-m 10) starts
 * to kill, so that an area grown to its ceiling and filled leaves the
 * build that fills it room for its own processes before any OOM killer
 * acts; see storaged.conf(5), memory-reserve. */
#define CONFIG_DEFAULT_MEMORY_RESERVE_PERCENT 20

/**
 * config_memory_reserve:
 * @c: a parsed config
 * @mem_total: MemTotal, bytes
 *
 * Returns: the memory-reserve of @c in bytes (a percentage taken of
 * @mem_total).
 */
static inline uint64_t config_memory_reserve(const struct config *c, uint64_t mem_total)
{
	if (c->memory_reserve.kind == AREA_SIZE_PERCENT)
		return mem_total / 100 * c->memory_reserve.value + mem_total % 100 * c->memory_reserve.value / 100;
	return c->memory_reserve.value;
}

/* One hour, as profile-sync-daemon's psd-resync.timer (OnUnitActiveSec=1h):
 * a power cut loses at most an hour, and an incremental sync of an
 * unchanged area costs one walk of its tree. */
#define CONFIG_DEFAULT_SYNC_INTERVAL_USEC (3600ULL * 1000000ULL)

/*
 * @fsid: the filesystem's UUID as text ("5e81a1b2-…", any case), or NULL
 * @label: its label, or NULL when it has none
 * @ret: device-timeout, settle-time, settle-limit, degraded and
 *       stale-member for that filesystem: the section's keys where it sets
 *       them, else [storaged]'s.  The section is [btrfs FSID], else
 *       [btrfs LABEL=NAME]: one naming the filesystem itself beats one
 *       naming its label, which another filesystem may carry too.
 */
void config_btrfs_policy(const struct config *c, const char *fsid, const char *label,
			 struct btrfs_fs_policy *ret);

/*
 * Returns: "no", "after-timeout" or "read-only", as the key takes it (static).
 */
const char *config_degraded_name(enum degraded_policy d);

/*
 * @c: config to fill with the built-in defaults (owned strings allocated)
 *
 * Returns: 0, or -ENOMEM.
 */
int config_init(struct config *c);

/*
 * Frees everything @c owns.  Accepts a zeroed struct.
 */
void config_done(struct config *c);

/* The file a user edits to change [storaged]'s keys: the one read, or
 * the default path where none was (built-in defaults).  Borrowed. */
static inline const char *config_file_name(const struct config *c)
{
	return c->file ? c->file : CONFIG_DEFAULT_PATH;
}

/*
 * @c: config initialised by config_init(); values read override defaults
 * @text: ini text, @len bytes (need not be NUL-terminated; NUL bytes inside
 *        are an error)
 * @diags: every problem is appended as "filename:line: message"
 *
 * Pure: reads no file, except that owner/group names are resolved through
 * NSS (getpwnam_r/getgrnam_r).  inih parses the text; lines are counted by
 * its reader.  Reports every error of the pass (unknown sections and keys,
 * bad values, lines over inih's limit, NUL or control bytes, duplicate
 * sections or keys, areas without path or with overlapping paths), but of
 * the lines inih cannot read as a section, key = value or comment only the
 *  first.  Errors about a section carry the line of its header.
 *
 * Returns: 0; -EINVAL when at least one error was appended; -ENOMEM.
 */
int config_parse_buf(struct config *c, const char *text, size_t len, const char *filename,
		     struct diag_list *diags);

/*
 * The backend's name from its row in area_facts.c.
 * Returns: "tmpfs", "zram" or "brd" (static string).
 */
const char *config_backend_name(enum area_backend b);

/*
 * @name: "tmpfs", "zram" or "brd" (as config_backend_name() returns them)
 *
 * Returns: 0; -EINVAL for any other name (@ret untouched).
 */
int config_backend_from_name(const char *name, enum area_backend *ret);

#endif
