/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * storaged.conf, parsed by inih.
 *
 * inih splits the text into sections, keys, values and comments, with its
 * own rules (see FORMAT in storaged.conf(5)).  The reader it is given,
 * ini_lines_read(), only hands it the physical lines and counts them, so
 * that the handler knows its file:line; it reports the lines inih cannot
 * take (over its line limit, NUL or control bytes) instead of passing them.
 *
 * inih does not report section headers: a section is known when its first
 * key arrives, under a name that differs from the previous key's.  So an
 * empty section is not seen at all.  The reader remembers the line of the
 * last header it passed, so errors about a section (unknown, bad name, no
 * path, overlap) carry the line of its header.  inih returns only
 * the first line it could not read as a section, key = value or comment.
 *
 * The handler applies each key through one table (config_keys[]), and
 * collects every error of the pass.
 */
#include <ctype.h>
#include <errno.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <stddef.h>
#include <stdio.h>
#include <strings.h>
#include <string.h>

#include <ini.h>

#include "config.h"
#include "area_facts.h"
#include "fstab.h"
#include "ini_reader.h"
#include "shared/units.h"
#include "shared/util.h"

#define KEY_NAME_MAX 64
/*
 * inih (ini.c, MAX_SECTION, not configurable in r55) keeps section names in
 * a 50-byte buffer and cuts longer ones silently: a name that fills it
 * (49 bytes) may have been cut, so 48 is the longest one taken.
 */
#define INIH_SECTION_BUF 50
#define SECTION_NAME_MAX (INIH_SECTION_BUF - 2)
#define AREA_NAME_MAX (SECTION_NAME_MAX - 5) /* "area " */

/* ---------------------------------------------------------------- keys */

/*
 * The keys of storaged.conf: one table, one parser per value type.  The
 * handler (below) looks keys up here; see storaged.conf(5).
 */
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

static const struct key_def config_keys[] = {
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

/* Returns: the entry for @key in sections of kind @in, or NULL. */
static const struct key_def *config_key_find(enum section_kind in, const char *key)
{
	for (size_t i = 0; i < CONFIG_N_KEYS; i++)
		if (config_keys[i].section == in && strcmp(config_keys[i].key, key) == 0)
			return &config_keys[i];
	return NULL;
}

/*
 * Writes the keys accepted in @in, comma-separated, into @buf (@len bytes,
 * cut if too small).  Returns: @buf.
 */
static const char *config_key_list(enum section_kind in, char *buf, size_t len)
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

/* ---------------------------------------------------------------- parser */

struct parser {
	struct config *c;
	struct diag_list *diags;
	const char *filename;
	struct ini_lines lines; /* lines.lineno: the line being handled */

	char *section; /* inih's name of the section being read; NULL before the first key */
	unsigned section_header; /* lines.headers when it began */
	unsigned keyed_header; /* lines.headers at the last key */
	char header_name[INIH_SECTION_BUF]; /* the last header's, cut as inih cuts it */
	enum section_kind in; /* kind of that section */
	size_t area; /* index in c->areas when in == SECTION_AREA */
	size_t first_area; /* areas from index first_area on come from this buffer */
	size_t btrfs; /* index in c->btrfs when in == SECTION_BTRFS */
	size_t first_btrfs; /* btrfs sections from index first_btrfs on come from this buffer */
	unsigned storaged_line; /* header of [storaged] in this buffer, 0: none yet */
	unsigned seen[CONFIG_N_KEYS]; /* line each key was set at in this section */
	int r; /* -ENOMEM stops everything */
};

static void parser_oom(struct parser *p, int r)
{
	if (r < 0 && p->r == 0)
		p->r = r;
}

/* The line of the header of the section the key being handled is in
 * (ini_lines.header_line): where errors about the section as a whole
 * point.  A key before any header is in no section: its own line. */
static unsigned section_line(const struct parser *p)
{
	return p->lines.header_line ? p->lines.header_line : p->lines.lineno;
}

#define parser_error(p, line, ...) \
	parser_oom((p), diag_error((p)->diags, (p)->filename, (line), __VA_ARGS__))

static bool is_name(const char *s, size_t max)
{
	size_t n = strspn(s, CONFIG_NAME_CHARS);

	return n > 0 && n <= max && s[n] == '\0';
}

/* An area's name becomes a directory entry (its state, its sync's working
 * names): ".", ".." are not entries of their own, and a name of dots only
 * reads as one of them to every tool a user points at it. */
static bool is_area_name(const char *s)
{
	return is_name(s, AREA_NAME_MAX) && s[strspn(s, ".")] != '\0';
}

static const char *section_label(const struct parser *p, char *buf, size_t len)
{
	if (p->in == SECTION_AREA)
		snprintf(buf, len, "[area %s]", p->c->areas[p->area].name);
	else if (p->in == SECTION_BTRFS)
		snprintf(buf, len, "[btrfs %s]", p->c->btrfs[p->btrfs].name);
	else
		snprintf(buf, len, "[storaged]");
	return buf;
}

static struct area_config *find_area(struct config *c, const char *name)
{
	for (size_t i = 0; i < c->n_areas; i++)
		if (strcmp(c->areas[i].name, name) == 0)
			return &c->areas[i];
	return NULL;
}

static int area_new(struct parser *p, const char *name)
{
	struct config *c = p->c;
	struct area_config a = {
		.line = section_line(p),
		.backend = AREA_TMPFS,
		.size = { .kind = AREA_SIZE_AUTO },
		.inodes_auto = true,
		.headroom = 2.0,
		.seed = true,
		.name = strdup(name),
		.file = strdup(p->filename),
		.fs = strdup("ext4"),
	};
	struct area_config *v = NULL;

	if (a.name && a.file && a.fs)
		v = realloc(c->areas, (c->n_areas + 1) * sizeof(*v));
	if (!v) {
		free(a.name);
		free(a.file);
		free(a.fs);
		return -ENOMEM;
	}
	v[c->n_areas] = a;
	c->areas = v;
	p->area = c->n_areas++;
	return 0;
}

static enum section_kind begin_area(struct parser *p, const char *name)
{
	const struct area_config *old;
	unsigned line = section_line(p);

	if (!*name) {
		parser_error(p, line, "section [area] needs a name: [area NAME]");
		return SECTION_SKIP;
	}
	if (!is_area_name(name)) {
		parser_error(p, line, "'%s' is not an area name (letters, digits, '_', '.', '-', not dots only, at most %d bytes)",
			     name, AREA_NAME_MAX);
		return SECTION_SKIP;
	}
	/* the commands take area names as arguments (storaged sync NAME):
	 * getopt would read this one as options */
	if (name[0] == '-') {
		parser_error(p, line, "area name '%s' starts with '-', which `storaged sync %s` would read as an option; rename the area to start with a letter, digit, '_' or '.'",
			     name, name);
		return SECTION_SKIP;
	}
	old = find_area(p->c, name);
	if (old && (size_t)(old - p->c->areas) >= p->first_area) {
		parser_error(p, line, "duplicate section [area %s]; first at line %u", name, old->line);
		return SECTION_SKIP;
	}
	if (old) {
		parser_error(p, line, "area '%s' is already defined at %s:%u", name,
			     old->file ? old->file : "?", old->line);
		return SECTION_SKIP;
	}
	parser_oom(p, area_new(p, name));
	return p->r < 0 ? SECTION_SKIP : SECTION_AREA;
}

static struct btrfs_policy *find_btrfs(struct config *c, const char *name)
{
	for (size_t i = 0; i < c->n_btrfs; i++)
		if (strcmp(c->btrfs[i].name, name) == 0)
			return &c->btrfs[i];
	return NULL;
}

static int btrfs_new(struct parser *p, const char *name)
{
	struct config *c = p->c;
	struct btrfs_policy b = {
		.line = section_line(p),
		.name = strdup(name),
		.file = strdup(p->filename),
	};
	struct btrfs_policy *v = NULL;

	if (b.name && b.file)
		v = realloc(c->btrfs, (c->n_btrfs + 1) * sizeof(*v));
	if (!v) {
		free(b.name);
		free(b.file);
		return -ENOMEM;
	}
	if (has_prefix(b.name, "LABEL="))
		b.label = b.name + strlen("LABEL=");
	v[c->n_btrfs] = b;
	c->btrfs = v;
	p->btrfs = c->n_btrfs++;
	return 0;
}

/* A section of a later file (a drop-in) for the same filesystem goes on
 * with it, key by key, as [storaged] does; within one file it is a
 * duplicate. */
static enum section_kind begin_btrfs(struct parser *p, const char *name)
{
	unsigned line = section_line(p);
	char lower[40];
	struct btrfs_policy *old;

	if (!*name) {
		parser_error(p, line, "section [btrfs] needs a filesystem: [btrfs FSID] (as `btrfs filesystem show` prints it) or [btrfs LABEL=NAME]");
		return SECTION_SKIP;
	}
	if (has_prefix(name, "LABEL=") ? !name[6] : !uuid_is_text(name)) {
		parser_error(p, line, "'%s' names no btrfs filesystem: write [btrfs FSID] with its UUID as `btrfs filesystem show` prints it (e.g. 5e81a1b2-7d2b-4b8e-9c1f-0a1b2c3d4e5f) or [btrfs LABEL=NAME]",
			     name);
		return SECTION_SKIP;
	}
	/* a UUID in lower case, as the kernel and blkid print it */
	snprintf(lower, sizeof(lower), "%s", name);
	for (char *k = has_prefix(name, "LABEL=") ? NULL : lower; k && *k; k++)
		*k = (char)tolower((unsigned char)*k);
	name = has_prefix(name, "LABEL=") ? name : lower;
	old = find_btrfs(p->c, name);
	if (old && (size_t)(old - p->c->btrfs) >= p->first_btrfs) {
		parser_error(p, line, "duplicate section [btrfs %s]; first at line %u", name, old->line);
		return SECTION_SKIP;
	}
	if (old) {
		p->btrfs = (size_t)(old - p->c->btrfs);
		return SECTION_BTRFS;
	}
	parser_oom(p, btrfs_new(p, name));
	return p->r < 0 ? SECTION_SKIP : SECTION_BTRFS;
}

static void zram_only(struct parser *p, const struct area_config *a, const char *key)
{
	parser_error(p, p->seen[config_key_find(SECTION_AREA, key) - config_keys],
		     "[area %s] sets %s, which only backend = zram has (this area's backend is %s); remove it or set backend = zram",
		     a->name, key, area_backend_facts(a->backend)->name);
}

/* "fs =" of an area whose backend is a filesystem of its own (tmpfs):
 * the area would be that, not what fs = says.  The backends that make
 * "fs =" on a device are named from their rows (area_facts.c). */
static void fs_not_taken(struct parser *p, const struct area_config *a)
{
	char takers[64] = "";
	size_t n = 0;

	for (enum area_backend b = 0; area_backend_facts(b); b++)
		if (!area_backend_facts(b)->fstype)
			n += (size_t)snprintf(takers + n, n < sizeof(takers) ? sizeof(takers) - n : 0, "%s%s",
					      n ? " or " : "", area_backend_facts(b)->name);
	parser_error(p, a->fs_line,
		     "[area %s] sets fs = %s, but a %s area is always %s: only backend = %s makes fs = on its device; remove fs = or set backend = zram",
		     a->name, a->fs, area_backend_facts(a->backend)->name, area_fstype(a), takers);
}

/* A path given but invalid was reported already: only a missing one here. */
static void end_section(struct parser *p)
{
	const struct area_config *a;
	const char *why;
	unsigned fixed;

	if (p->in != SECTION_AREA)
		return;
	a = &p->c->areas[p->area];
	/* the sync back makes the directory what the area holds: an area
	 * that starts empty would delete all the directory held */
	if (a->persist && !a->seed && !a->overlay)
		parser_error(p, a->line,
			     "[area %s] has persist = yes and seed = no: its first sync back would delete everything '%s' holds; set seed = yes or seed = overlay (or persist = no)",
			     a->name, a->path ? a->path : "the directory");
	/* each at the key's line: the section's header may be far above */
	if (a->backend != AREA_ZRAM && a->compression)
		zram_only(p, a, "compression-algorithm");
	if (a->backend != AREA_ZRAM && a->writeback_device)
		zram_only(p, a, "writeback-device");
	if (!area_is_ramdisk(a) && a->fs_line && strcmp(a->fs, area_fstype(a)) != 0)
		fs_not_taken(p, a);
	/* a ramdisk's device has its size from the moment it is made, and
	 * its filesystem the inodes mkfs gave it */
	if (a->grow && a->backend != AREA_TMPFS)
		parser_error(p, p->seen[config_key_find(SECTION_AREA, "grow") - config_keys],
			     "[area %s] sets grow = yes, but a %s area cannot grow: its device's size and its filesystem's inodes are fixed when it is made; set backend = tmpfs, or remove grow and size the area (size =, inodes =)",
			     a->name, area_backend_facts(a->backend)->name);
	why = a->mode_set ? units_dir_mode_refusal(a->mode, &fixed) : NULL;
	if (why)
		parser_error(p, p->seen[config_key_find(SECTION_AREA, "mode") - config_keys],
			     "[area %s] mode = %04o %s; write mode = %04o", a->name, a->mode, why, fixed);
	/* a line of the section refused may have been its path: its error says it */
	if (p->seen[config_key_find(SECTION_AREA, "path") - config_keys] || p->lines.refused_line > a->line)
		return;
	parser_error(p, a->line, "[area %s] has no path; add 'path = /persistent/dir'", a->name);
}

/* @raw: inih's section name, longer than SECTION_NAME_MAX (cut by inih:
 * its true length is unknown).  An area's is said in the limit of its
 * name, which is what a user writes; blanks around it count too. */
static void section_too_long(struct parser *p, const char *raw)
{
	const char *s = raw + strspn(raw, " \t");
	const char *name = s + 4 + strspn(s + 4, " \t");

	if (strncmp(s, "area", 4) != 0 || !is_blank(s[4]))
		parser_error(p, section_line(p), "section name too long (at most %d bytes)", SECTION_NAME_MAX);
	else if (strlen(name) > AREA_NAME_MAX)
		parser_error(p, section_line(p), "area name too long (at most %d bytes): shorten the name of [area %.*s...]",
			     AREA_NAME_MAX, AREA_NAME_MAX, name);
	else
		parser_error(p, section_line(p), "section [%s] too long: with its blanks it takes at most %d bytes; write [area %.*s] with one blank",
			     raw, SECTION_NAME_MAX, (int)strcspn(name, " \t"), name);
}

/* @raw: inih's section name (between the brackets), "" before any header. */
static enum section_kind section_kind(struct parser *p, const char *raw)
{
	unsigned line = section_line(p);
	char buf[INIH_SECTION_BUF];
	const char *name;

	if (!*raw)
		return SECTION_NONE;
	if (strlen(raw) > SECTION_NAME_MAX) {
		section_too_long(p, raw);
		return SECTION_SKIP;
	}
	snprintf(buf, sizeof(buf), "%s", raw);
	name = strip(buf);
	if (strcmp(name, "storaged") == 0) {
		if (p->storaged_line) {
			parser_error(p, line, "duplicate section [storaged]; first at line %u",
				     p->storaged_line);
			return SECTION_SKIP;
		}
		p->storaged_line = line;
		return SECTION_STORAGED;
	}
	if (strncmp(name, "area", 4) == 0 && (name[4] == '\0' || is_blank(name[4])))
		return begin_area(p, name + 4 + strspn(name + 4, " \t"));
	if (strncmp(name, "btrfs", 5) == 0 && (name[5] == '\0' || is_blank(name[5])))
		return begin_btrfs(p, name + 5 + strspn(name + 5, " \t"));
	parser_error(p, line, "unknown section '[%s]'; expected [storaged], [area NAME] or [btrfs FSID]", raw);
	return SECTION_SKIP;
}

/* The section being read ends at @last (its errors are its own: an area
 * or a [btrfs] section refused alone at boot, world/refuse.c).  A [btrfs]
 * section that goes on from an earlier file keeps that file's range. */
static void section_ends(struct parser *p, unsigned last)
{
	if (p->in == SECTION_AREA)
		p->c->areas[p->area].last_line = last;
	else if (p->in == SECTION_BTRFS && streq(p->c->btrfs[p->btrfs].file, p->filename))
		p->c->btrfs[p->btrfs].last_line = last;
}

static void begin_section(struct parser *p, const char *raw)
{
	section_ends(p, section_line(p) - 1);
	end_section(p);
	memset(p->seen, 0, sizeof(p->seen));
	p->in = section_kind(p, raw);
}

static void report_value(struct parser *p, const struct key_def *k, const char *value, int r)
{
	unsigned line = p->lines.lineno;

	if (r == -ERANGE)
		parser_error(p, line, "%s: '%s' is out of range; expected %s", k->key, value, k->expect);
	else
		parser_error(p, line, "%s: '%s' is not %s", k->key, value, k->expect);
}

static void apply_key(struct parser *p, const char *key, const char *value)
{
	unsigned line = p->lines.lineno;
	const struct key_def *k;
	char label[96], list[256];
	void *base;
	unsigned *seen;
	int r;

	if (!is_name(key, KEY_NAME_MAX)) {
		parser_error(p, line, "'%s' is not a key name (letters, digits, '_', '.', '-', at most %d)",
			     key, KEY_NAME_MAX);
		return;
	}
	if (p->in == SECTION_SKIP)
		return;
	if (p->in == SECTION_NONE) {
		parser_error(p, line, "'%s' is outside of any section; put it under [storaged], [area NAME] or [btrfs FSID]",
			     key);
		return;
	}
	section_label(p, label, sizeof(label));
	k = config_key_find(p->in, key);
	if (!k) {
		parser_error(p, line, "unknown key '%s' in %s (accepted: %s)", key, label,
			     config_key_list(p->in, list, sizeof(list)));
		return;
	}
	seen = &p->seen[k - config_keys];
	if (*seen) {
		parser_error(p, line, "duplicate key '%s' in %s; first set at line %u", key, label, *seen);
		return;
	}
	*seen = line;
	if (!*value) {
		parser_error(p, line, "%s: empty value; expected %s", k->key, k->expect);
		return;
	}
	/* inih keeps "value # text" whole; a path would take it silently */
	for (const char *h = strchr(value, '#'); h; h = strchr(h + 1, '#')) {
		if (h > value && is_blank(h[-1])) {
			parser_error(p, line, "%s: '%s' is not %s ('#' after a value is not a comment; use ';')",
				     k->key, value, k->expect);
			return;
		}
	}
	if (p->in == SECTION_AREA)
		base = &p->c->areas[p->area];
	else if (p->in == SECTION_BTRFS)
		base = &p->c->btrfs[p->btrfs];
	else
		base = p->c;
	r = k->parse(value, base, k);
	if (r == -ENOMEM)
		parser_oom(p, r);
	else if (r < 0)
		report_value(p, k, value, r);
	else if (k->flag_off)
		*(bool *)((char *)base + k->flag_off) = true;
	/* the kernel's types and the directory are the loader's and the
	 * planner's to check: they name these lines */
	if (r == 0 && p->in == SECTION_AREA && strcmp(k->key, "fs") == 0)
		p->c->areas[p->area].fs_line = line;
	if (r == 0 && p->in == SECTION_AREA && strcmp(k->key, "path") == 0)
		p->c->areas[p->area].path_line = line;
	if (r == 0 && p->in == SECTION_AREA && strcmp(k->key, "compression-algorithm") == 0)
		p->c->areas[p->area].compression_line = line;
	if (r == 0 && p->in == SECTION_AREA && strcmp(k->key, "writeback-device") == 0)
		p->c->areas[p->area].writeback_line = line;
}

/* inih calls no handler for a section without keys: one is begun when
 * the next header or the end comes, so that it is checked as any other
 * ([area NAME] without a path, an unknown name). */
static void begin_if_empty(struct parser *p)
{
	if (p->lines.headers && p->keyed_header != p->lines.headers && p->r == 0)
		begin_section(p, p->header_name);
}

static void on_header(void *user, const char *name, size_t len)
{
	struct parser *p = user;

	begin_if_empty(p);
	snprintf(p->header_name, sizeof(p->header_name), "%.*s", (int)len, name);
}

/* inih names the section with each key: a new name starts a section. */
static int config_handler(void *user, const char *section, const char *name, const char *value)
{
	struct parser *p = user;

	if (p->r < 0)
		return 0;
	p->keyed_header = p->lines.headers;
	/* a new name, or the same name under a header of its own */
	if (!p->section || strcmp(p->section, section) != 0 || p->section_header != p->lines.headers) {
		p->section_header = p->lines.headers;
		free(p->section);
		p->section = strdup(section);
		if (!p->section) {
			parser_oom(p, -ENOMEM);
			return 0;
		}
		begin_section(p, section);
	}
	apply_key(p, name, value);
	return p->r < 0 ? 0 : 1;
}

static void check_area_paths(struct parser *p, const struct area_config *a)
{
	const struct config *c = p->c;

	for (const struct area_config *o = c->areas; o < a; o++) {
		const char *how;

		if (!o->path)
			continue;
		if (strcmp(a->path, o->path) == 0)
			how = "is also the path of";
		else if (path_is_below(a->path, o->path))
			how = "lies inside the path of";
		else if (path_is_below(o->path, a->path))
			how = "contains the path of";
		else
			continue;
		if (o->file && strcmp(o->file, p->filename) == 0)
			parser_error(p, a->line,
				     "area '%s': path '%s' %s area '%s' (line %u); areas must not overlap",
				     a->name, a->path, how, o->name, o->line);
		else
			parser_error(p, a->line,
				     "area '%s': path '%s' %s area '%s' (%s:%u); areas must not overlap",
				     a->name, a->path, how, o->name, o->file ? o->file : "?", o->line);
	}
}

/* After the last line: what only the whole file can tell. */
static void check_areas(struct parser *p)
{
	for (size_t i = p->first_area; i < p->c->n_areas; i++)
		if (p->c->areas[i].path)
			check_area_paths(p, &p->c->areas[i]);
}

/* Stable, by line: the overlap checks run last but belong between the rest. */
static void sort_diags(struct diag_list *dl, size_t from)
{
	for (size_t i = from + 1; i < dl->n; i++) {
		struct diag d = dl->v[i];
		size_t j = i;

		for (; j > from && dl->v[j - 1].line > d.line; j--)
			dl->v[j] = dl->v[j - 1];
		dl->v[j] = d;
	}
}

int config_parse_buf(struct config *c, const char *text, size_t len, const char *filename,
		     struct diag_list *diags)
{
	struct parser p = {
		.c = c,
		.diags = diags,
		.filename = filename,
		.lines = {
			.file = filename,
			.buf = text,
			.len = len,
			.too_long_hint = "; shorten the value or use a drop-in",
			.diags = diags,
			.on_header = on_header,
		},
		.first_area = c->n_areas,
		.first_btrfs = c->n_btrfs,
	};
	size_t errors = diag_count(diags, DIAG_ERROR), first_diag = diags->n;
	int ret;

	/* a UTF-8 byte order mark on line 1 is inih's to skip (INI_ALLOW_BOM) */
	p.lines.user = &p;
	ret = ini_parse_stream(ini_lines_read, &p.lines, config_handler, &p);
	begin_if_empty(&p);
	parser_oom(&p, p.lines.r);
	free(p.section);
	if (p.r < 0)
		return p.r;
	if (ret < 0)
		return -ENOMEM;
	/* inih goes on after such a line, but returns only the first one */
	if (ret > 0)
		parser_error(&p, (unsigned)ret, "not a section, key = value or comment");
	section_ends(&p, UINT_MAX);
	end_section(&p);
	check_areas(&p);
	if (p.r < 0)
		return p.r;
	/* [storaged]'s may come after the sections, or in a later drop-in:
	 * set again after each file, the last one's stands */
	for (size_t i = 0; i < c->n_areas; i++)
		if (!c->areas[i].sync_interval_set)
			c->areas[i].sync_interval_usec = c->sync_interval_usec;
	sort_diags(diags, first_diag);
	return diag_count(diags, DIAG_ERROR) > errors ? -EINVAL : 0;
}

/* ---------------------------------------------------------------- btrfs */

/* [btrfs FSID], else [btrfs LABEL=NAME]; borrowed from @c, or NULL */
static const struct btrfs_policy *btrfs_section(const struct config *c, const char *fsid, const char *label)
{
	const struct btrfs_policy *by_label = NULL;

	for (size_t i = 0; i < c->n_btrfs; i++) {
		const struct btrfs_policy *b = &c->btrfs[i];

		if (!b->label && fsid && strcasecmp(b->name, fsid) == 0)
			return b;
		if (b->label && label && !by_label && strcmp(b->label, label) == 0)
			by_label = b;
	}
	return by_label;
}

void config_btrfs_policy(const struct config *c, const char *fsid, const char *label,
			 struct btrfs_fs_policy *ret)
{
	const struct btrfs_policy *b = btrfs_section(c, fsid, label);

	*ret = (struct btrfs_fs_policy){
		.device_timeout_usec = b && b->device_timeout_set ? b->device_timeout_usec : c->device_timeout_usec,
		.settle_usec = b && b->settle_set ? b->settle_usec : c->settle_usec,
		.settle_limit_usec = b && b->settle_limit_set ? b->settle_limit_usec : c->settle_limit_usec,
		.degraded = b && b->degraded_set ? b->degraded : c->degraded,
		.stale_member = b && b->stale_member_set ? b->stale_member : c->stale_member,
		.section = b,
	};
}

const char *config_degraded_name(enum degraded_policy d)
{
	switch (d) {
	case DEGRADED_AFTER_TIMEOUT:
		return "after-timeout";
	case DEGRADED_READ_ONLY:
		return "read-only";
	case DEGRADED_NO:
	default:
		return "no";
	}
}

/* ---------------------------------------------------------------- setup */

int config_init(struct config *c)
{
	*c = (struct config){
		.device_timeout_usec = 90 * USEC_PER_SEC,
		.settle_limit_usec = CONFIG_DEFAULT_SETTLE_LIMIT_USEC,
		.degraded = DEGRADED_NO,
		.mount_timeout_usec = 90 * USEC_PER_SEC,
		.sync_interval_usec = CONFIG_DEFAULT_SYNC_INTERVAL_USEC,
		.memory_reserve = { .kind = AREA_SIZE_PERCENT, .value = CONFIG_DEFAULT_MEMORY_RESERVE_PERCENT },
		.jobs = 4,
	};
	c->fstab = strdup(CONFIG_DEFAULT_FSTAB);
	if (!c->fstab || strv_extend(&c->select, "x-storaged") < 0 ||
	    strv_extend(&c->select, "_netdev") < 0) {
		config_done(c);
		return -ENOMEM;
	}
	return 0;
}

void config_done(struct config *c)
{
	for (size_t i = 0; i < c->n_areas; i++) {
		struct area_config *a = &c->areas[i];

		free(a->name);
		free(a->file);
		free(a->path);
		free(a->fs);
		free(a->compression);
		free(a->writeback_device);
		free(a->refused);
	}
	free(c->areas);
	for (size_t i = 0; i < c->n_btrfs; i++) {
		free(c->btrfs[i].name);
		free(c->btrfs[i].file);
		free(c->btrfs[i].refused);
	}
	free(c->btrfs);
	free(c->file);
	free(c->fstab);
	strv_free(c->select);
	free(c->metrics_textfile);
	*c = (struct config){ 0 };
}
