/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The keys of storaged.conf: one table, one parser per value type.  The
 * handler in config.c looks keys up here; see storaged.conf(5).
 */
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "config_keys.h"
#include "fstab.h"
#include "shared/units.h"
#include "shared/util.h"

#define FS_NAME_MAX 16

/* ---------------------------------------------------------------- values */

static void *field(void *base, const struct key_def *k)
{
	return (char *)base + k->off;
}

/* Replaces *@dst (freed) with a copy of @v.  Returns: 0 or -ENOMEM. */
static int config_set_string(char **dst, const char *v)
{
	char *s = strdup(v);

	if (!s)
		return -ENOMEM;
	free(*dst);
	*dst = s;
	return 0;
}

static int parse_file(const char *v, void *base, const struct key_def *k)
{
	if (v[0] != '/')
		return -EINVAL;
	return config_set_string(field(base, k), v);
}

/* An area's directory, normalised as an fstab mount point is ("/x/a1/" is
 * "/x/a1"), so that it compares equal to the same path written there; never
 * "/", which would cover the whole system, nor with "..", which a link
 * could make another directory than it reads. */
static int parse_dir(const char *v, void *base, const struct key_def *k)
{
	_cleanup_free_ char *p = strdup(v);
	char **dst = field(base, k);

	if (!p)
		return -ENOMEM;
	if (path_normalize(p) < 0 || !path_is_normalized(p) || strcmp(p, "/") == 0)
		return -EINVAL;
	free(*dst);
	*dst = p;
	p = NULL;
	return 0;
}

/* An area's filesystem is made by mkfs.TYPE and written to: the kernel's
 * read-only types (images made elsewhere, never mounted rw) cannot be. */
static int parse_fs(const char *v, void *base, const struct key_def *k)
{
	static char *const read_only[] = { "erofs", "squashfs", "cramfs", "romfs", "iso9660", NULL };

	if (strlen(v) > FS_NAME_MAX || v[strspn(v, "abcdefghijklmnopqrstuvwxyz0123456789")] != '\0' ||
	    strv_contains(read_only, v))
		return -EINVAL;
	return config_set_string(field(base, k), v);
}

/* A compressor's name as the kernel lists it in a zram device's
 * comp_algorithm (crypto API names: lzo, lzo-rle, lz4, lz4hc, zstd, 842,
 * deflate; Documentation/admin-guide/blockdev/zram.rst).  Which of them
 * this kernel has is for check and start to say, not the parser. */
static int parse_compression(const char *v, void *base, const struct key_def *k)
{
	if (strlen(v) > FS_NAME_MAX || v[strspn(v, "abcdefghijklmnopqrstuvwxyz0123456789-")] != '\0')
		return -EINVAL;
	return config_set_string(field(base, k), v);
}

static int parse_block_device(const char *v, void *base, const struct key_def *k)
{
	if (strncmp(v, "/dev/", 5) != 0 || !v[5] || !path_is_normalized(v))
		return -EINVAL;
	return config_set_string(field(base, k), v);
}

/* Replaces the list: a drop-in that sets select means exactly its options. */
static int parse_select(const char *v, void *base, const struct key_def *k)
{
	_cleanup_strv_free_ char **l = NULL;
	char ***dst = field(base, k);

	for (const char *p = v; *p; p += strspn(p, " \t")) {
		size_t n = strcspn(p, " \t");
		char *s;

		if (strspn(p, CONFIG_OPTION_CHARS) < n)
			return -EINVAL;
		s = strndup(p, n);
		if (!s || strv_push(&l, s) < 0) {
			free(s);
			return -ENOMEM;
		}
		p += n;
	}
	if (!l)
		return -EINVAL;
	strv_free(*dst);
	*dst = l;
	l = NULL;
	return 0;
}

static int parse_duration(const char *v, void *base, const struct key_def *k)
{
	uint64_t usec;
	int r;

	r = units_parse_duration(v, &usec);
	if (r < 0)
		return r;
	*(uint64_t *)field(base, k) = usec;
	return 0;
}

/* A mount must be given some time: 0 would abandon every mount at once. */
static int parse_duration_positive(const char *v, void *base, const struct key_def *k)
{
	uint64_t *dst = field(base, k), old = *dst;
	int r;

	r = parse_duration(v, base, k);
	if (r == 0 && *dst == 0) {
		*dst = old; /* set only on success */
		return -ERANGE;
	}
	return r;
}

static int parse_bool(const char *v, void *base, const struct key_def *k)
{
	return units_parse_bool(v, field(base, k));
}

/* "nosuid = yes" keeps allow_suid false: the key says what is refused, the
 * field what is allowed, so that a zeroed area_config is the safe default */
/* "seed = overlay": the directory stays as overlayfs's lower layer (seed
 * false: nothing is copied; overlay true); else a boolean */
static int parse_seed(const char *v, void *base, const struct key_def *k)
{
	struct area_config *a = base;

	(void)k;
	a->overlay = strcmp(v, "overlay") == 0;
	if (a->overlay) {
		a->seed = false;
		return 0;
	}
	return units_parse_bool(v, &a->seed);
}

static int parse_bool_not(const char *v, void *base, const struct key_def *k)
{
	bool *b = field(base, k);
	int r = units_parse_bool(v, b);

	if (r == 0)
		*b = !*b;
	return r;
}

static int parse_degraded(const char *v, void *base, const struct key_def *k)
{
	enum degraded_policy *d = field(base, k);

	for (enum degraded_policy n = DEGRADED_NO; n <= DEGRADED_READ_ONLY; n++)
		if (strcmp(v, config_degraded_name(n)) == 0) {
			*d = n;
			return 0;
		}
	return -EINVAL;
}

static int parse_stale_member(const char *v, void *base, const struct key_def *k)
{
	static const char *const names[] = { "warn", "scrub", "refuse" };
	enum stale_member_policy *d = field(base, k);

	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (strcmp(v, names[i]) == 0) {
			*d = (enum stale_member_policy)i;
			return 0;
		}
	return -EINVAL;
}

static int parse_jobs(const char *v, void *base, const struct key_def *k)
{
	uint64_t n;
	int r;

	r = units_parse_uint(v, 64, &n);
	if (r < 0)
		return r;
	if (n < 1)
		return -ERANGE;
	*(unsigned *)field(base, k) = (unsigned)n;
	return 0;
}

static int parse_backend(const char *v, void *base, const struct key_def *k)
{
	return config_backend_from_name(v, (enum area_backend *)field(base, k));
}

/* size = 0 is refused: to tmpfs it would mean "no limit at all". */
static int parse_area_size(const char *v, void *base, const struct key_def *k)
{
	struct area_size *sz = field(base, k);
	uint64_t bytes;
	unsigned pct;
	int r;

	if (strcmp(v, "auto") == 0) {
		*sz = (struct area_size){ .kind = AREA_SIZE_AUTO };
		return 0;
	}
	if (strchr(v, '%')) {
		r = units_parse_percent(v, &pct);
		if (r < 0)
			return r;
		*sz = (struct area_size){ .kind = AREA_SIZE_PERCENT, .value = pct };
		return 0;
	}
	r = units_parse_size(v, &bytes);
	if (r < 0)
		return r;
	if (bytes == 0)
		return -ERANGE;
	*sz = (struct area_size){ .kind = AREA_SIZE_BYTES, .value = bytes };
	return 0;
}

/* Two fields (inodes_auto, inodes): takes the area itself, not an offset. */
static int parse_inodes(const char *v, void *base, const struct key_def *k)
{
	struct area_config *a = base;
	uint64_t n;
	int r;

	if (strcmp(v, "auto") == 0) {
		a->inodes_auto = true;
		return 0;
	}
	r = units_parse_count(v, &n);
	if (r < 0)
		return r;
	if (n == 0)
		return -ERANGE;
	a->inodes = n;
	a->inodes_auto = false;
	return 0;
}

/* Below 1.0 an automatic size is smaller than what the directory holds:
 * the seed could never fit. */
static int parse_headroom(const char *v, void *base, const struct key_def *k)
{
	double f;
	int r = units_parse_factor(v, &f);

	if (r < 0)
		return r;
	if (f < 1.0)
		return -ERANGE;
	*(double *)field(base, k) = f;
	return 0;
}

static int parse_mode(const char *v, void *base, const struct key_def *k)
{
	return units_parse_mode(v, field(base, k));
}

static bool is_all_digits(const char *v)
{
	return v[0] && v[strspn(v, "0123456789")] == '\0';
}

/* What NSS is asked about: no blanks, ':' or '/', not an option-like "-x". */
static bool is_account_name(const char *v)
{
	size_t n = strspn(v, CONFIG_NAME_CHARS);

	if (v[0] == '-' || n == 0 || n > 256)
		return false;
	return v[n] == '\0' || (v[n] == '$' && v[n + 1] == '\0');
}

/* getpwnam_r/getgrnam_r need a caller buffer; grow it on ERANGE. */
static int lookup_account(const char *name, bool group, uint32_t *ret)
{
	size_t size = 1024;

	for (;;) {
		_cleanup_free_ char *buf = malloc(size);
		struct passwd pw, *pwr = NULL;
		struct group gr, *grr = NULL;
		int e;

		if (!buf)
			return -ENOMEM;
		if (group)
			e = getgrnam_r(name, &gr, buf, size, &grr);
		else
			e = getpwnam_r(name, &pw, buf, size, &pwr);
		if (e == ERANGE && size < 1024 * 1024) {
			size *= 2;
			continue;
		}
		if (e == 0 && group && grr)
			*ret = (uint32_t)grr->gr_gid;
		else if (e == 0 && !group && pwr)
			*ret = (uint32_t)pwr->pw_uid;
		else
			return -EINVAL; /* unknown, or NSS failed: either way not usable */
		return 0;
	}
}

/* (uid_t)-1 means "unchanged" to chown(2), so it is not a valid id. */
static int parse_account(const char *v, bool group, uint32_t *ret)
{
	uint64_t n;
	int r;

	if (is_all_digits(v)) {
		r = units_parse_uint(v, UINT32_MAX - 1, &n);
		if (r < 0)
			return r;
		*ret = (uint32_t)n;
		return 0;
	}
	if (!is_account_name(v))
		return -EINVAL;
	return lookup_account(v, group, ret);
}

static int parse_owner(const char *v, void *base, const struct key_def *k)
{
	uint32_t id;
	int r;

	r = parse_account(v, false, &id);
	if (r < 0)
		return r;
	*(uid_t *)field(base, k) = (uid_t)id;
	return 0;
}

static int parse_group(const char *v, void *base, const struct key_def *k)
{
	uint32_t id;
	int r;

	r = parse_account(v, true, &id);
	if (r < 0)
		return r;
	*(gid_t *)field(base, k) = (gid_t)id;
	return 0;
}

/* node_exporter's textfile collector reads only *.prom files, and
 * storaged writes a temporary file beside it (status_prom_io.c) */
static int parse_textfile(const char *v, void *base, const struct key_def *k)
{
	size_t n = strlen(v);

	if (n < 6 || strcmp(v + n - 5, ".prom") != 0 || v[n - 6] == '/' || !path_is_normalized(v))
		return -EINVAL;
	return parse_file(v, base, k);
}

/* Below a second a sync would follow a sync: the last-sync record and
 * the resident's schedule count whole seconds.  "infinity" is "never"
 * spelled another way: refused, 0 says it. */
static int parse_sync_interval(const char *v, void *base, const struct key_def *k)
{
	uint64_t *dst = field(base, k), old = *dst;
	int r;

	r = parse_duration(v, base, k);
	if (r == 0 && (*dst == UINT64_MAX || (*dst != 0 && *dst < USEC_PER_SEC))) {
		*dst = old; /* set only on success */
		return -ERANGE;
	}
	return r;
}

/* memory-reserve = 2G or 20%: what growing areas leave to the rest of
 * the system; 0 (and 0%) leaves nothing, 100% lets nothing grow */
static int parse_memory_reserve(const char *v, void *base, const struct key_def *k)
{
	struct area_size *sz = field(base, k);
	uint64_t bytes;
	unsigned pct;
	int r;

	if (strchr(v, '%')) {
		if (strcmp(v, "0%") == 0)
			pct = 0;
		else if ((r = units_parse_percent(v, &pct)) < 0)
			return r;
		*sz = (struct area_size){ .kind = AREA_SIZE_PERCENT, .value = pct };
		return 0;
	}
	r = units_parse_size(v, &bytes);
	if (r < 0)
		return r;
	*sz = (struct area_size){ .kind = AREA_SIZE_BYTES, .value = bytes };
	return 0;
}

#define SYNC_INTERVAL_EXPECT "a duration of at least 1s (e.g. 15min, 1h), or 0 for no periodic sync"
#define DURATION_EXPECT "a duration (e.g. 90s, 2min, infinity)"
#define BOOL_EXPECT "a boolean (yes/no, true/false, on/off, 1/0)"
#define DEGRADED_EXPECT "'no', 'after-timeout' or 'read-only'"
#define STALE_EXPECT "'warn', 'scrub' or 'refuse'"
#define S(f) offsetof(struct config, f)
#define A(f) offsetof(struct area_config, f)
#define B(f) offsetof(struct btrfs_policy, f)

const struct key_def config_keys[] = {
	{ SECTION_STORAGED, "fstab", parse_file, S(fstab), 0, "an absolute file name (e.g. /etc/fstab)" },
	{ SECTION_STORAGED, "select", parse_select, S(select), 0,
	  "a list of fstab options separated by spaces (e.g. x-storaged _netdev)" },
	{ SECTION_STORAGED, "device-timeout", parse_duration, S(device_timeout_usec), 0, DURATION_EXPECT },
	/* the wait for a btrfs filesystem's members follows their arrivals */
	{ SECTION_STORAGED, "settle-time", parse_duration, S(settle_usec), 0, DURATION_EXPECT },
	{ SECTION_STORAGED, "settle-limit", parse_duration, S(settle_limit_usec), 0, DURATION_EXPECT },
	{ SECTION_STORAGED, "degraded", parse_degraded, S(degraded), 0, DEGRADED_EXPECT },
	{ SECTION_STORAGED, "mount-timeout", parse_duration_positive, S(mount_timeout_usec), 0,
	  "a duration of at least 1us, the smallest unit (e.g. 90s, 2min, infinity)" },
	{ SECTION_STORAGED, "jobs", parse_jobs, S(jobs), 0, "a number of parallel jobs, 1..64" },
	{ SECTION_STORAGED, "hotplug", parse_bool, S(hotplug), 0, BOOL_EXPECT },
	{ SECTION_AREA, "path", parse_dir, A(path), 0, "an absolute directory other than /, without '..'" },
	{ SECTION_AREA, "backend", parse_backend, A(backend), 0, "tmpfs, zram or brd" },
	{ SECTION_AREA, "size", parse_area_size, A(size), 0,
	  "a size (e.g. 512M, 12800M, 1.5G), a share of RAM (1%..100%) or auto" },
	{ SECTION_AREA, "inodes", parse_inodes, 0, 0, "an inode count (e.g. 300000, 300k) or auto" },
	{ SECTION_AREA, "headroom", parse_headroom, A(headroom), 0, "a factor from 1.0 to 1000 (e.g. 2.0)" },
	{ SECTION_AREA, "seed", parse_seed, 0, 0, "a boolean (yes/no, true/false, on/off, 1/0) or overlay" },
	{ SECTION_AREA, "persist", parse_bool, A(persist), 0, BOOL_EXPECT },
	{ SECTION_AREA, "nosuid", parse_bool_not, A(allow_suid), 0, BOOL_EXPECT },
	{ SECTION_AREA, "nodev", parse_bool_not, A(allow_dev), 0, BOOL_EXPECT },
	{ SECTION_AREA, "force", parse_bool, A(force), 0, BOOL_EXPECT },
	{ SECTION_AREA, "fs", parse_fs, A(fs), 0,
	  "a writable filesystem type in lower case (e.g. ext4, ext2, xfs, btrfs; not erofs, squashfs, cramfs, romfs, iso9660)" },
	{ SECTION_AREA, "compression-algorithm", parse_compression, A(compression), 0,
	  "a compressor's name as zram lists it (e.g. lzo-rle, lz4, zstd)" },
	{ SECTION_AREA, "writeback-device", parse_block_device, A(writeback_device), 0,
	  "a block device under /dev (e.g. /dev/disk/by-partlabel/zram-writeback)" },
	{ SECTION_AREA, "mode", parse_mode, A(mode), A(mode_set), "an octal mode up to 07777 (e.g. 0755)" },
	{ SECTION_AREA, "owner", parse_owner, A(uid), A(uid_set),
	  "a user name known to this system or a numeric uid" },
	{ SECTION_AREA, "group", parse_group, A(gid), A(gid_set),
	  "a group name known to this system or a numeric gid" },
	{ SECTION_STORAGED, "stale-member", parse_stale_member, S(stale_member), 0, STALE_EXPECT },
	/* the Prometheus textfile (status_prom.h) */
	{ SECTION_STORAGED, "metrics-textfile", parse_textfile, S(metrics_textfile), 0,
	  "an absolute file name ending in .prom (e.g. /var/lib/prometheus/node-exporter/storaged.prom)" },
	/* periodic sync back of persist areas; 0 turns it off */
	{ SECTION_STORAGED, "sync-interval", parse_sync_interval, S(sync_interval_usec), 0, SYNC_INTERVAL_EXPECT },
	{ SECTION_AREA, "sync-interval", parse_sync_interval, A(sync_interval_usec), A(sync_interval_set),
	  SYNC_INTERVAL_EXPECT },
	/* a tmpfs area grown by the resident within the memory reserve */
	{ SECTION_AREA, "grow", parse_bool, A(grow), 0, BOOL_EXPECT },
	{ SECTION_STORAGED, "memory-reserve", parse_memory_reserve, S(memory_reserve), 0,
	  "a size (e.g. 2G, 512M) or a share of RAM (0%..100%)" },
	/* one btrfs filesystem's policy, over [storaged]'s */
	{ SECTION_BTRFS, "device-timeout", parse_duration, B(device_timeout_usec), B(device_timeout_set),
	  DURATION_EXPECT },
	{ SECTION_BTRFS, "settle-time", parse_duration, B(settle_usec), B(settle_set), DURATION_EXPECT },
	{ SECTION_BTRFS, "settle-limit", parse_duration, B(settle_limit_usec), B(settle_limit_set),
	  DURATION_EXPECT },
	{ SECTION_BTRFS, "degraded", parse_degraded, B(degraded), B(degraded_set), DEGRADED_EXPECT },
	{ SECTION_BTRFS, "stale-member", parse_stale_member, B(stale_member), B(stale_member_set),
	  STALE_EXPECT },
};

#undef S
#undef A
#undef B

_Static_assert(ARRAY_SIZE(config_keys) == CONFIG_N_KEYS, "CONFIG_N_KEYS counts the table");

const struct key_def *config_key_find(enum section_kind in, const char *key)
{
	for (size_t i = 0; i < CONFIG_N_KEYS; i++)
		if (config_keys[i].section == in && strcmp(config_keys[i].key, key) == 0)
			return &config_keys[i];
	return NULL;
}

const char *config_key_list(enum section_kind in, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < CONFIG_N_KEYS && off < len; i++) {
		int n;

		if (config_keys[i].section != in)
			continue;
		n = snprintf(buf + off, len - off, "%s%s", off ? ", " : "", config_keys[i].key);
		if (n < 0)
			break;
		off += (size_t)n;
	}
	return buf;
}
