/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A device inventory read from an ini file instead of a scan (see
 * inventory_load_fixture() in inventory.h): the golden tests plan against
 * it, through the binary's STORAGED_INVENTORY.
 *
 * inih parses the file.  Its reader, ini_lines_read() (shared with
 * storaged.conf), only counts lines, for file:line (the distribution's inih
 * may not pass line numbers to the handler), and turns a line longer than
 * inih's buffer into an error of its own instead of two half lines.  A section is known when its first key arrives: inih does not
 * report section headers, so an empty section is not seen at all, and
 * errors about a section name the line of its first key.  inih reports only
 * the first malformed line (no '=' or ':', no closing ']').
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/sysmacros.h>

#include <ini.h>

#include "parse/ini_reader.h"
#include "shared/input.h"
#include "shared/kv_record.h"
#include "inventory.h"
#include "shared/units.h"

struct fixture_ctx {
	const char *path;
	struct ini_lines lines; /* lines.lineno: the line being handled */
	char *section; /* inih's name of the section being read, NULL before the first key */
	int fatal; /* -ENOMEM */
	struct diag_list *diags;
	struct inventory inv;
	char **devnodes; /* of every section, valid or not: duplicates */
	/* the section being read */
	bool in_section; /* a [device ...] section, keys go to cur */
	bool bad_section; /* a rejected section: its keys are ignored */
	unsigned section_line;
	unsigned seen; /* bit per key of fixture_keys */
	struct block_device cur;
};

_printf_(3, 4) static void fixture_error(struct fixture_ctx *c, unsigned line, const char *fmt, ...);

static void fixture_error(struct fixture_ctx *c, unsigned line, const char *fmt, ...)
{
	_cleanup_free_ char *msg = NULL;
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = vasprintf(&msg, fmt, ap);
	va_end(ap);
	if (r < 0 || diag_error(c->diags, c->path, line, "%s", msg) < 0)
		c->fatal = -ENOMEM;
}

static int set_label(const char *v, void *base, const struct kv_field *f)
{
	struct block_device *d = base;

	if (strlen(v) >= sizeof(d->btrfs.label))
		return -ERANGE;
	snprintf(d->btrfs.label, sizeof(d->btrfs.label), "%s", v);
	return kv_replace_str(&d->label, *v ? v : NULL);
}

static int set_devno(const char *v, void *base, const struct kv_field *f)
{
	char major_s[16], minor_s[16];
	uint64_t ma, mi;
	const char *colon = strchr(v, ':');
	int r;

	if (!colon || (size_t)(colon - v) >= sizeof(major_s) || strlen(colon + 1) >= sizeof(minor_s))
		return -EINVAL;
	memcpy(major_s, v, (size_t)(colon - v));
	major_s[colon - v] = '\0';
	strcpy(minor_s, colon + 1);
	r = units_parse_uint(major_s, 4095, &ma);
	r = r ?: units_parse_uint(minor_s, (1u << 20) - 1, &mi);
	if (r < 0)
		return r;
	((struct block_device *)base)->devno = makedev((unsigned)ma, (unsigned)mi);
	return 0;
}

/* devid, num_devices: a count from 1 */
static int set_count(const char *v, void *base, const struct kv_field *f)
{
	uint64_t *dst = (uint64_t *)((char *)base + f->off);
	int r = units_parse_uint(v, UINT64_MAX, dst);

	return r ?: (*dst ? 0 : -ERANGE);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int set_sys_devids(const char *v, void *base, const struct kv_field *f)
{
	struct btrfs_sb_info *b = &((struct block_device *)base)->btrfs;
	char tok[32];
	size_t n = 0;

	while (*(v += strspn(v, " \t"))) {
		size_t len = strcspn(v, " \t");
		uint64_t id;

		if (len >= sizeof(tok) || n == BTRFS_SB_MAX_SYS_DEVIDS)
			return -ERANGE;
		memcpy(tok, v, len);
		tok[len] = '\0';
		if (units_parse_uint(tok, UINT64_MAX, &id) < 0 || id == 0)
			return -EINVAL;
		b->sys_devids[n++] = id;
		v += len;
	}
	qsort(b->sys_devids, n, sizeof(b->sys_devids[0]), cmp_u64);
	b->n_sys_devids = 0;
	for (size_t i = 0; i < n; i++)
		if (i == 0 || b->sys_devids[i] != b->sys_devids[i - 1])
			b->sys_devids[b->n_sys_devids++] = b->sys_devids[i];
	return 0;
}

/* ID= names, space-separated (udev's by-id names have no spaces). */
static int set_ids(const char *v, void *base, const struct kv_field *f)
{
	struct block_device *d = base;
	char tok[256];

	while (*(v += strspn(v, " \t"))) {
		size_t len = strcspn(v, " \t");
		int r;

		if (len >= sizeof(tok))
			return -ERANGE;
		memcpy(tok, v, len);
		tok[len] = '\0';
		r = strv_contains(d->ids, tok) ? 0 : strv_extend(&d->ids, tok);
		if (r < 0)
			return r;
		v += len;
	}
	return 0;
}

enum {
	KEY_DEVID = 1u << 7,
	KEY_NUM_DEVICES = 1u << 8,
	KEY_GENERATION = 1u << 9,
	KEY_SYS_DEVIDS = 1u << 10,
	KEYS_BTRFS = KEY_DEVID | KEY_NUM_DEVICES | KEY_GENERATION | KEY_SYS_DEVIDS,
};

#define STR(key, what) \
	{ .name = #key, .off = offsetof(struct block_device, key), .type = KV_STR, \
	  .flags = KV_EMPTY_NONE, .expect = what }
#define SET(key, fn, what, ...) { .name = #key, .type = KV_CUSTOM, .parse = fn, .expect = what, __VA_ARGS__ }
#define BTRFS(key) offsetof(struct block_device, btrfs.key)

/* The fields of a device, in the order of the KEY_* bits above; an empty
 * string is no value: "type =" is how a disk without a signature is
 * written (inih does not report a section without keys). */
static const struct kv_field fixture_keys[] = {
	STR(type, "a filesystem type"),
	STR(uuid, "a uuid"),
	STR(uuid_sub, "a uuid"),
	SET(label, set_label, "a label of at most 255 bytes"),
	STR(partuuid, "a uuid"),
	STR(partlabel, "a label"),
	SET(devno, set_devno, "MAJOR:MINOR"),
	SET(devid, set_count, "a devid >= 1", .off = BTRFS(devid)),
	SET(num_devices, set_count, "a count >= 1", .off = BTRFS(num_devices)),
	{ .name = "generation", .off = BTRFS(generation), .type = KV_U64, .expect = "a number" },
	SET(sys_devids, set_sys_devids, "space-separated devids >= 1 (at most 64)"),
	SET(ids, set_ids, "space-separated /dev/disk/by-id/ names of at most 255 bytes"),
};

_Static_assert(ARRAY_SIZE(fixture_keys) == 12, "KEY_* bits follow fixture_keys order");

static unsigned hex_digit(char c)
{
	c = (char)tolower((unsigned char)c);
	return c <= '9' ? (unsigned)(c - '0') : (unsigned)(c - 'a' + 10);
}

/* Parse a 36-character uuid string into 16 bytes (its groups have an even
 * number of digits: a byte never straddles a dash). */
static bool uuid_parse(const char *s, uint8_t out[16])
{
	size_t n = 0;

	if (!uuid_is_text(s))
		return false;
	for (; *s; s += *s == '-' ? 1 : 2)
		if (*s != '-')
			out[n++] = (uint8_t)(hex_digit(s[0]) << 4 | hex_digit(s[1]));
	return true;
}

/* Fill cur.btrfs from the keys of a btrfs section.  Returns: false on errors. */
static bool fixture_finish_btrfs(struct fixture_ctx *c)
{
	struct btrfs_sb_info *b = &c->cur.btrfs;
	unsigned line = c->section_line;
	bool ok = true;

	if (!c->cur.uuid || !uuid_parse(c->cur.uuid, b->fsid)) {
		fixture_error(c, line, "btrfs device '%s' needs 'uuid' (the fsid) as a 36-character uuid",
			      c->cur.devnode);
		ok = false;
	}
	if (c->cur.uuid_sub && !uuid_parse(c->cur.uuid_sub, b->dev_uuid)) {
		fixture_error(c, line, "btrfs device '%s': 'uuid_sub' '%s' is not a uuid",
			      c->cur.devnode, c->cur.uuid_sub);
		ok = false;
	}
	if (!(c->seen & KEY_DEVID) || !(c->seen & KEY_NUM_DEVICES)) {
		fixture_error(c, line, "btrfs device '%s' needs 'devid' and 'num_devices'", c->cur.devnode);
		ok = false;
	}
	if (ok) {
		for (size_t i = 0; i < 36; i++)
			b->fsid_str[i] = (char)tolower((unsigned char)c->cur.uuid[i]);
		b->fsid_str[36] = '\0';
		c->cur.is_btrfs = true;
	}
	return ok;
}

/* Validate the finished section and move its device into the inventory. */
static void fixture_section_end(struct fixture_ctx *c)
{
	bool btrfs = c->cur.type && strcmp(c->cur.type, "btrfs") == 0;
	bool ok = true;

	if (!c->in_section)
		return;
	if (btrfs) {
		ok = fixture_finish_btrfs(c);
	} else if (c->seen & KEYS_BTRFS) {
		fixture_error(c, c->section_line,
			      "device '%s': devid, num_devices, generation and sys_devids need 'type = btrfs'",
			      c->cur.devnode);
		ok = false;
	}
	if (ok && inventory_add(&c->inv, &c->cur) < 0)
		c->fatal = -ENOMEM;
	block_device_done(&c->cur);
	c->in_section = false;
}

/* The first key of section @name (inih's text between the brackets, "" for
 * keys before any header): the previous section ends. */
static void fixture_section_begin(struct fixture_ctx *c, const char *name)
{
	const char *node;

	fixture_section_end(c);
	c->bad_section = false;
	c->section_line = c->lines.lineno;
	c->seen = 0;
	if (!*name)
		return; /* keys outside any section: the handler says so */
	c->bad_section = true;
	if (strncmp(name, "device ", 7) != 0 || (node = name + 7 + strspn(name + 7, " \t"))[0] != '/') {
		fixture_error(c, c->lines.lineno,
			      "unknown section '[%s]': expected '[device /dev/NAME]'", name);
		return;
	}
	if (strv_contains(c->devnodes, node)) {
		fixture_error(c, c->lines.lineno, "device '%s' is listed twice", node);
		return;
	}
	c->cur.devnode = strdup(node);
	if (!c->cur.devnode || strv_extend(&c->devnodes, node) < 0) {
		c->fatal = -ENOMEM;
		return;
	}
	c->bad_section = false;
	c->in_section = true;
}

static int fixture_handler(void *user, const char *section, const char *name, const char *value)
{
	struct fixture_ctx *c = user;
	const struct kv_field *k;
	size_t i;
	int r;

	if (c->fatal)
		return 1;
	/* inih names the section with each key: a new name starts a section */
	if (!c->section || strcmp(c->section, section) != 0) {
		free(c->section);
		c->section = strdup(section);
		if (!c->section) {
			c->fatal = -ENOMEM;
			return 1;
		}
		fixture_section_begin(c, section);
	}
	if (c->bad_section || c->fatal)
		return 1;
	if (!c->in_section) {
		fixture_error(c, c->lines.lineno, "key '%s' outside a '[device /dev/NAME]' section", name);
		return 1;
	}
	k = kv_find(fixture_keys, ARRAY_SIZE(fixture_keys), name, NULL);
	if (!k) {
		fixture_error(c, c->lines.lineno, "unknown key '%s'", name);
		return 1;
	}
	i = (size_t)(k - fixture_keys);
	if (c->seen & (1u << i)) {
		fixture_error(c, c->lines.lineno, "key '%s' given twice in this section", name);
		return 1;
	}
	c->seen |= 1u << i;
	r = kv_set(k, &c->cur, value, false);
	if (r == -ENOMEM)
		c->fatal = r;
	else if (r < 0)
		fixture_error(c, c->lines.lineno, "%s = '%s': expected %s", name, value,
			      fixture_keys[i].expect);
	return 1;
}

/* Far above any fixture; input_read() wants a bound. */
#define FIXTURE_FILE_MAX (4 * 1024 * 1024)

int inventory_load_fixture(struct inventory *ret, const char *path, struct diag_list *diags)
{
	struct fixture_ctx c = { .path = path, .diags = diags };
	size_t errors = diag_count(diags, DIAG_ERROR);
	_cleanup_free_ char *text = NULL;
	size_t len = 0;
	int r;

	r = input_read(path, FIXTURE_FILE_MAX, false, &text, &len, diags);
	if (r < 0)
		return r;
	c.lines = (struct ini_lines){ .file = path, .buf = text, .len = len, .diags = diags };
	r = ini_parse_stream(ini_lines_read, &c.lines, fixture_handler, &c);
	if (r > 0)
		fixture_error(&c, (unsigned)r,
			      "neither 'key = value' nor a '[device /dev/NAME]' header (only the first such line is reported)");
	else if (r < 0)
		c.fatal = -ENOMEM;
	if (c.lines.r < 0)
		c.fatal = c.lines.r;
	fixture_section_end(&c);
	block_device_done(&c.cur);
	r = c.fatal;
	if (!r && diag_count(diags, DIAG_ERROR) > errors)
		r = -EINVAL;
	if (!r) {
		*ret = c.inv;
		memset(&c.inv, 0, sizeof(c.inv));
	}
	inventory_done(&c.inv);
	strv_free(c.devnodes);
	free(c.section);
	return r;
}
