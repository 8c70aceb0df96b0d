/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * storaged.conf through inih, with the line work done here.
 *
 * The distribution's inih is built with its own limits: 200-byte lines
 * (longer ones are split and read as two), 50-byte section names, ';' as the
 * only inline comment, indented lines continuing the previous value, and only
 * the first error's line number returned.  None of that may change what a
 * configuration means or which errors are reported, so the reader handed to
 * ini_parse_stream() does the lexing:
 *
 *   1. split the buffer at '\n' and count lines;
 *   2. reject NUL and control bytes, and lines over CONFIG_LINE_MAX;
 *   3. drop a trailing '\r', inline " ;" / " #" comments and outer blanks;
 *   4. classify: blank or comment, [section], key = value, malformed;
 *   5. handle section headers itself (inih does not report section starts);
 *   6. pass inih one line per input line: "key=value" unindented, or an empty
 *      line for everything else, so that its count stays equal to ours.
 *
 * inih's handler then applies the key through one table, taking the key and
 * value from our lexed line (inih's copy may have been shortened).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <ini.h>

#include "config.h"
#include "input.h"
#include "units.h"
#include "util.h"

#define CONFIG_LINE_MAX 1024 /* bytes per line, without the newline */
#define CONFIG_FILE_MAX (1024 * 1024) /* bytes per file */
#define NAME_MAX_LEN 64 /* keys and area names */
#define FS_NAME_MAX 16

#define NAME_CHARS "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-"
#define OPTION_CHARS NAME_CHARS ":+="

enum section_kind {
	SECTION_NONE, /* before the first header */
	SECTION_STORAGED,
	SECTION_AREA,
	SECTION_SKIP, /* a bad header was reported: ignore its keys */
};

struct key_def;
typedef int (*key_parser)(const char *v, void *base, const struct key_def *k);

struct key_def {
	enum section_kind section;
	const char *key;
	key_parser parse;
	size_t off; /* destination within struct config or struct area_config */
	size_t flag_off; /* bool set to true after a successful parse; 0: none */
	const char *expect; /* "is not ..." completion for messages */
};

/* ---------------------------------------------------------------- values */

static void *field(void *base, const struct key_def *k)
{
	return (char *)base + k->off;
}

static int set_string(char **dst, const char *v)
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
	return set_string(field(base, k), v);
}

static int parse_dir(const char *v, void *base, const struct key_def *k)
{
	if (!path_is_normalized(v))
		return -EINVAL;
	return set_string(field(base, k), v);
}

static int parse_fs(const char *v, void *base, const struct key_def *k)
{
	if (strlen(v) > FS_NAME_MAX || v[strspn(v, "abcdefghijklmnopqrstuvwxyz0123456789")] != '\0')
		return -EINVAL;
	return set_string(field(base, k), v);
}

/* Replaces the list: a drop-in that sets select means exactly its options. */
static int parse_select(const char *v, void *base, const struct key_def *k)
{
	_cleanup_strv_free_ char **l = NULL;
	char ***dst = field(base, k);

	for (const char *p = v; *p; p += strspn(p, " \t")) {
		size_t n = strcspn(p, " \t");
		char *s;

		if (strspn(p, OPTION_CHARS) < n)
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

static int parse_degraded(const char *v, void *base, const struct key_def *k)
{
	enum degraded_policy *d = field(base, k);

	if (strcmp(v, "no") == 0)
		*d = DEGRADED_NO;
	else if (strcmp(v, "after-timeout") == 0)
		*d = DEGRADED_AFTER_TIMEOUT;
	else
		return -EINVAL;
	return 0;
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

static const char *const backend_names[] = {
	[AREA_TMPFS] = "tmpfs",
	[AREA_ZRAM] = "zram",
	[AREA_BRD] = "brd",
};

static int parse_backend(const char *v, void *base, const struct key_def *k)
{
	for (size_t i = 0; i < ARRAY_SIZE(backend_names); i++) {
		if (strcmp(v, backend_names[i]) == 0) {
			*(enum area_backend *)field(base, k) = (enum area_backend)i;
			return 0;
		}
	}
	return -EINVAL;
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
	size_t n = strspn(v, NAME_CHARS);

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

#define DURATION_EXPECT "a duration (e.g. 90s, 2min, infinity)"
#define BOOL_EXPECT "a boolean (yes/no, true/false, on/off, 1/0)"
#define S(f) offsetof(struct config, f)
#define A(f) offsetof(struct area_config, f)

static const struct key_def keys[] = {
	{ SECTION_STORAGED, "fstab", parse_file, S(fstab), 0, "an absolute file name (e.g. /etc/fstab)" },
	{ SECTION_STORAGED, "select", parse_select, S(select), 0,
	  "a list of fstab options separated by spaces (e.g. x-storaged _netdev)" },
	{ SECTION_STORAGED, "device-timeout", parse_duration, S(device_timeout_usec), 0, DURATION_EXPECT },
	{ SECTION_STORAGED, "degraded", parse_degraded, S(degraded), 0, "'no' or 'after-timeout'" },
	{ SECTION_STORAGED, "mount-timeout", parse_duration_positive, S(mount_timeout_usec), 0,
	  "a duration above 0 (e.g. 90s, 2min, infinity)" },
	{ SECTION_STORAGED, "jobs", parse_jobs, S(jobs), 0, "a number of parallel jobs, 1..64" },
	{ SECTION_STORAGED, "hotplug", parse_bool, S(hotplug), 0, BOOL_EXPECT },
	{ SECTION_AREA, "path", parse_dir, A(path), 0,
	  "an absolute, normalised directory (no '.', '..', '//' or trailing '/')" },
	{ SECTION_AREA, "backend", parse_backend, A(backend), 0, "tmpfs, zram or brd" },
	{ SECTION_AREA, "size", parse_area_size, A(size), 0,
	  "a size (e.g. 512M, 12800M, 1.5G), a share of RAM (1%..100%) or auto" },
	{ SECTION_AREA, "inodes", parse_inodes, 0, 0, "an inode count (e.g. 300000, 300k) or auto" },
	{ SECTION_AREA, "headroom", parse_headroom, A(headroom), 0, "a factor from 1.0 to 1000 (e.g. 2.0)" },
	{ SECTION_AREA, "seed", parse_bool, A(seed), 0, BOOL_EXPECT },
	{ SECTION_AREA, "persist", parse_bool, A(persist), 0, BOOL_EXPECT },
	{ SECTION_AREA, "force", parse_bool, A(force), 0, BOOL_EXPECT },
	{ SECTION_AREA, "fs", parse_fs, A(fs), 0, "a filesystem type in lower case (e.g. ext4, ext2, xfs, btrfs)" },
	{ SECTION_AREA, "mode", parse_mode, A(mode), A(mode_set), "an octal mode up to 07777 (e.g. 0755)" },
	{ SECTION_AREA, "owner", parse_owner, A(uid), A(uid_set), "a user name known to this system or a numeric uid" },
	{ SECTION_AREA, "group", parse_group, A(gid), A(gid_set), "a group name known to this system or a numeric gid" },
};

#undef S
#undef A

/* ---------------------------------------------------------------- parser */

enum line_kind {
	LINE_BLANK, /* also comments and lines already reported */
	LINE_SECTION,
	LINE_KEY,
};

struct parser {
	struct config *c;
	struct diag_list *diags;
	const char *filename;
	const char *buf;
	size_t len;
	size_t pos;
	unsigned lineno;

	/* the current line, lexed */
	enum line_kind kind;
	char text[CONFIG_LINE_MAX + 1];
	char *section; /* LINE_SECTION: between the brackets */
	char *key, *value; /* LINE_KEY */

	enum section_kind in; /* section the current line is in */
	size_t area; /* index in c->areas when in == SECTION_AREA */
	size_t first_area; /* areas from index first_area on come from this buffer */
	unsigned storaged_line; /* header of [storaged] in this buffer, 0: none yet */
	unsigned seen[ARRAY_SIZE(keys)]; /* line each key was set at in this section */
	int r; /* -ENOMEM stops everything */
};

static void parser_oom(struct parser *p, int r)
{
	if (r < 0 && p->r == 0)
		p->r = r;
}

#define parser_error(p, line, ...) \
	parser_oom((p), diag_error((p)->diags, (p)->filename, (line), __VA_ARGS__))

/* A comment starts a line or follows a blank; "a;b" and "/x#y" are values. */
static void strip_comment(char *s)
{
	for (char *c = s; *c; c++) {
		if ((*c == ';' || *c == '#') && (c == s || is_blank(c[-1]))) {
			*c = '\0';
			return;
		}
	}
}

/* Steps 1-2: Returns false when the raw line was reported as unusable. */
static bool check_raw_line(struct parser *p, const char *raw, size_t n)
{
	const char *nul = memchr(raw, '\0', n);

	if (nul) {
		parser_error(p, p->lineno, "NUL byte at column %zu: this is not a text file",
			     (size_t)(nul - raw) + 1);
		return false;
	}
	if (n > CONFIG_LINE_MAX) {
		parser_error(p, p->lineno, "line is %zu bytes long; at most %d are accepted", n,
			     CONFIG_LINE_MAX);
		return false;
	}
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)raw[i];

		if ((ch < 0x20 && ch != '\t') || ch == 0x7f) {
			parser_error(p, p->lineno, "control character 0x%02x at column %zu", ch, i + 1);
			return false;
		}
	}
	return true;
}

static bool is_name(const char *s)
{
	size_t n = strspn(s, NAME_CHARS);

	return n > 0 && n <= NAME_MAX_LEN && s[n] == '\0';
}

/* Step 4. */
static void classify_line(struct parser *p, char *s)
{
	char *eq;

	if (*s == '\0')
		return;
	if (*s == '[') {
		size_t n = strlen(s);

		if (n < 2 || s[n - 1] != ']') {
			parser_error(p, p->lineno, "%s section header '%s'; expected [storaged] or [area NAME]",
				     strchr(s, ']') ? "text after the end of" : "unterminated", s);
			p->in = SECTION_SKIP;
			return;
		}
		s[n - 1] = '\0';
		p->section = strip(s + 1);
		p->kind = LINE_SECTION;
		return;
	}
	eq = strchr(s, '=');
	if (!eq) {
		parser_error(p, p->lineno,
			     "'%s' is not a section header, a 'key = value' line or a comment", s);
		return;
	}
	*eq = '\0';
	p->key = strip(s);
	p->value = strip(eq + 1);
	if (!is_name(p->key)) {
		parser_error(p, p->lineno, "'%s' is not a key name (letters, digits, '_', '.', '-', at most %d)",
			     p->key, NAME_MAX_LEN);
		return;
	}
	p->kind = LINE_KEY;
}

/* Steps 1-4 for the next line of the buffer. */
static void lex_next_line(struct parser *p)
{
	const char *raw = p->buf + p->pos;
	const char *nl = memchr(raw, '\n', p->len - p->pos);
	size_t n = nl ? (size_t)(nl - raw) : p->len - p->pos;

	p->pos += n + (nl ? 1 : 0);
	p->lineno++;
	p->kind = LINE_BLANK;
	if (n > 0 && raw[n - 1] == '\r')
		n--;
	if (!check_raw_line(p, raw, n))
		return;
	memcpy(p->text, raw, n);
	p->text[n] = '\0';
	strip_comment(p->text);
	classify_line(p, strip(p->text));
}

static const char *section_label(const struct parser *p, char *buf, size_t len)
{
	if (p->in == SECTION_AREA)
		snprintf(buf, len, "[area %s]", p->c->areas[p->area].name);
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
		.line = p->lineno,
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

	if (!*name) {
		parser_error(p, p->lineno, "section [area] needs a name: [area NAME]");
		return SECTION_SKIP;
	}
	if (!is_name(name)) {
		parser_error(p, p->lineno,
			     "'%s' is not an area name (letters, digits, '_', '.', '-', at most %d)",
			     name, NAME_MAX_LEN);
		return SECTION_SKIP;
	}
	old = find_area(p->c, name);
	if (old && (size_t)(old - p->c->areas) >= p->first_area) {
		parser_error(p, p->lineno, "duplicate section [area %s]; first at line %u", name,
			     old->line);
		return SECTION_SKIP;
	}
	if (old) {
		parser_error(p, p->lineno, "area '%s' is already defined at %s:%u", name,
			     old->file ? old->file : "?", old->line);
		return SECTION_SKIP;
	}
	parser_oom(p, area_new(p, name));
	return p->r < 0 ? SECTION_SKIP : SECTION_AREA;
}

static const struct key_def *find_key(enum section_kind in, const char *key)
{
	for (size_t i = 0; i < ARRAY_SIZE(keys); i++)
		if (keys[i].section == in && strcmp(keys[i].key, key) == 0)
			return &keys[i];
	return NULL;
}

/* A path given but invalid was reported already: only a missing one here. */
static void end_section(struct parser *p)
{
	const struct area_config *a;

	if (p->in != SECTION_AREA || p->seen[find_key(SECTION_AREA, "path") - keys])
		return;
	a = &p->c->areas[p->area];
	parser_error(p, a->line, "[area %s] has no path; add 'path = /persistent/dir'", a->name);
}

/* Step 5. */
static void begin_section(struct parser *p, const char *name)
{
	end_section(p);
	memset(p->seen, 0, sizeof(p->seen));
	if (strcmp(name, "storaged") == 0) {
		if (p->storaged_line) {
			parser_error(p, p->lineno, "duplicate section [storaged]; first at line %u",
				     p->storaged_line);
			p->in = SECTION_SKIP;
			return;
		}
		p->storaged_line = p->lineno;
		p->in = SECTION_STORAGED;
	} else if (strncmp(name, "area", 4) == 0 && (name[4] == '\0' || is_blank(name[4]))) {
		p->in = begin_area(p, name + 4 + strspn(name + 4, " \t"));
	} else {
		parser_error(p, p->lineno, "unknown section '[%s]'; expected [storaged] or [area NAME]",
			     name);
		p->in = SECTION_SKIP;
	}
}

static const char *key_list(enum section_kind in, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < ARRAY_SIZE(keys) && off < len; i++) {
		int n;

		if (keys[i].section != in)
			continue;
		n = snprintf(buf + off, len - off, "%s%s", off ? ", " : "", keys[i].key);
		if (n < 0)
			break;
		off += (size_t)n;
	}
	return buf;
}

static void report_value(struct parser *p, const struct key_def *k, int r)
{
	if (r == -ERANGE)
		parser_error(p, p->lineno, "%s: '%s' is out of range; expected %s", k->key, p->value,
			     k->expect);
	else
		parser_error(p, p->lineno, "%s: '%s' is not %s", k->key, p->value, k->expect);
}

static void apply_key(struct parser *p)
{
	const struct key_def *k;
	char label[96], list[256];
	void *base;
	unsigned *seen;
	int r;

	if (p->in == SECTION_SKIP)
		return;
	if (p->in == SECTION_NONE) {
		parser_error(p, p->lineno,
			     "'%s' is outside of any section; put it under [storaged] or [area NAME]",
			     p->key);
		return;
	}
	section_label(p, label, sizeof(label));
	k = find_key(p->in, p->key);
	if (!k) {
		parser_error(p, p->lineno, "unknown key '%s' in %s (accepted: %s)", p->key, label,
			     key_list(p->in, list, sizeof(list)));
		return;
	}
	seen = &p->seen[k - keys];
	if (*seen) {
		parser_error(p, p->lineno, "duplicate key '%s' in %s; first set at line %u", p->key,
			     label, *seen);
		return;
	}
	*seen = p->lineno;
	if (!*p->value) {
		parser_error(p, p->lineno, "%s: empty value; expected %s", k->key, k->expect);
		return;
	}
	base = p->in == SECTION_AREA ? (void *)&p->c->areas[p->area] : (void *)p->c;
	r = k->parse(p->value, base, k);
	if (r == -ENOMEM)
		parser_oom(p, r);
	else if (r < 0)
		report_value(p, k, r);
	else if (k->flag_off)
		*(bool *)((char *)base + k->flag_off) = true;
}

/*
 * ini_reader: step 6.  @num is inih's line buffer size; a "key=value" line
 * that does not fit is passed as "key=" (the handler reads our copy anyway).
 */
static char *config_reader(char *str, int num, void *stream)
{
	struct parser *p = stream;
	size_t cap = num > 0 ? (size_t)num : 0;
	int n = -1;

	if (p->r < 0 || p->pos >= p->len || cap < 2)
		return NULL;
	lex_next_line(p);
	if (p->kind == LINE_SECTION)
		begin_section(p, p->section);
	if (p->r < 0)
		return NULL;
	if (p->kind == LINE_KEY) {
		n = snprintf(str, cap, "%s=%s\n", p->key, p->value);
		if (n < 0 || (size_t)n >= cap)
			n = snprintf(str, cap, "%s=\n", p->key);
		if (n < 0 || (size_t)n >= cap) {
			apply_key(p); /* not even the key fits: inih would split it */
			n = -1;
		}
	}
	if (n < 0)
		memcpy(str, "\n", 2);
	return str;
}

static int config_handler(void *user, const char *section, const char *name, const char *value)
{
	struct parser *p = user;

	apply_key(p);
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
			parser_error(p, a->line, "area '%s': path '%s' %s area '%s' (line %u); areas must not overlap",
				     a->name, a->path, how, o->name, o->line);
		else
			parser_error(p, a->line, "area '%s': path '%s' %s area '%s' (%s:%u); areas must not overlap",
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
		.buf = text,
		.len = len,
		.first_area = c->n_areas,
	};
	size_t errors = diag_count(diags, DIAG_ERROR), first_diag = diags->n;
	int ret;

	if (len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0)
		p.pos = 3; /* UTF-8 byte order mark */
	ret = ini_parse_stream(config_reader, &p, config_handler, &p);
	if (p.r < 0)
		return p.r;
	if (ret < 0)
		return -ENOMEM;
	/* We only pass inih lines it accepts; should it disagree, say so. */
	if (ret > 0 && diag_count(diags, DIAG_ERROR) == errors)
		parser_error(&p, (unsigned)ret, "line not understood by the ini parser");
	end_section(&p);
	check_areas(&p);
	if (p.r < 0)
		return p.r;
	sort_diags(diags, first_diag);
	return diag_count(diags, DIAG_ERROR) > errors ? -EINVAL : 0;
}

/* ---------------------------------------------------------------- setup */

int config_init(struct config *c)
{
	*c = (struct config){
		.device_timeout_usec = 90 * USEC_PER_SEC,
		.degraded = DEGRADED_NO,
		.mount_timeout_usec = 90 * USEC_PER_SEC,
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
	}
	free(c->areas);
	free(c->file);
	free(c->fstab);
	strv_free(c->select);
	*c = (struct config){ 0 };
}

const char *config_backend_name(enum area_backend b)
{
	if ((size_t)b >= ARRAY_SIZE(backend_names))
		return "unknown";
	return backend_names[b];
}

int config_backend_from_name(const char *name, enum area_backend *ret)
{
	for (size_t i = 0; i < ARRAY_SIZE(backend_names); i++)
		if (strcmp(name, backend_names[i]) == 0) {
			*ret = (enum area_backend)i;
			return 0;
		}
	return -EINVAL;
}

/* ---------------------------------------------------------------- files */

static int load_file(struct config *c, const char *path, bool check_owner, bool missing_ok,
		     struct diag_list *diags)
{
	_cleanup_free_ char *buf = NULL;
	size_t len = 0;
	int r;

	r = input_read(path, CONFIG_FILE_MAX, check_owner, &buf, &len, diags);
	if (r == -ENOENT && !missing_ok)
		return diag_errno(diags, r, path, 0, "cannot open: %s", strerror(ENOENT));
	if (r < 0)
		return r;
	return config_parse_buf(c, buf, len, path, diags);
}

static int is_conf_name(const struct dirent *d)
{
	size_t n = strlen(d->d_name);

	return d->d_name[0] != '.' && n > 5 && strcmp(d->d_name + n - 5, ".conf") == 0;
}

/* Byte order, not the locale's collation: the same order on every system. */
static int compare_names(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

static char *concat(const char *a, const char *sep, const char *b)
{
	size_t n = strlen(a) + strlen(sep) + strlen(b) + 1;
	char *s = malloc(n);

	if (s)
		snprintf(s, n, "%s%s%s", a, sep, b);
	return s;
}

static int load_dropins(struct config *c, const char *path, bool check_owner,
			struct diag_list *diags)
{
	_cleanup_free_ char *dir = concat(path, ".d", "");
	struct dirent **names = NULL;
	int n, r = 0;

	if (!dir)
		return -ENOMEM;
	n = scandir(dir, &names, is_conf_name, compare_names);
	if (n < 0) {
		r = -errno;
		if (r == -ENOENT || r == -ENOTDIR)
			return 0;
		return diag_errno(diags, r, dir, 0, "cannot read directory: %s", strerror(-r));
	}
	for (int i = 0; i < n; i++) {
		_cleanup_free_ char *file = concat(dir, "/", names[i]->d_name);
		int k = file ? load_file(c, file, check_owner, false, diags) : -ENOMEM;

		if (k < 0 && r == 0)
			r = k; /* the first error is returned; the rest are still read */
		free(names[i]);
	}
	free(names);
	return r;
}

int config_load(struct config *c, const char *path, bool check_owner, struct diag_list *diags)
{
	int r, k;

	r = load_file(c, path, check_owner, true, diags);
	if (r == -ENOENT || r == -ENOMEM)
		return r;
	if (set_string(&c->file, path) < 0)
		return -ENOMEM;
	/* drop-ins are read even after an error, to report every problem at once */
	k = load_dropins(c, path, check_owner, diags);
	return r < 0 ? r : k;
}
