/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fstab(5) through libmount, one line at a time.
 *
 * libmount's table parser skips a bad line after telling an error callback,
 * and it counts lines itself.  Each line goes to a table of its own, so the
 * line numbers in our diagnostics are the ones we count, whatever libmount
 * skips.  libmount 2.38 is lenient where a boot must not be: it ignores
 * fields after the sixth and reads "-1" or an overflowing number as
 * freq/passno, and it guesses the table format from the line itself
 * ("%u %u" looks like mountinfo).  check_fields() rejects those lines before
 * libmount sees them.
 *
 * Steps of fstab_parse_buf(), per line:
 *   1. skip blank and comment lines, still counting them
 *   2. check_fields(): what libmount would let through or misread, such
 *      as an escaped NUL ("\000") that cuts a field short
 *   3. parse_line(): libmount parses the line alone
 *   4. is_selected(): only entries with a select option go further;
 *      owned_elsewhere(): a line of another tool (swap, ...) is noted only
 *   5. entry_fill(): source, target (normalised), type, storaged's
 *      options, mount options, the paths the entry uses (fstab_paths.c)
 *   6. check_source_tag(): a tag in the wrong case or without a value;
 *      check_target()
 * and once every line is read:
 *   7. check_duplicates(): one deferred entry per mount point
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libmount.h>

#include "fstab.h"
#include "fsfacts.h"
#include "fstab_internal.h"
#include "shared/units.h"
#include "shared/optstr.h"
#include "shared/util.h"

#define FSTAB_MAX_FIELDS 6
#define FIELDS_HINT "fields are: source, mount point, type, options, freq, passno"
#define SPACE_HINT "a space in a path must be written \\040"

/* Used when the caller passes no select list: the documented default. */
static char *const default_select[] = { "x-storaged", "_netdev", NULL };

struct fstab_parser {
	const char *file;
	char *const *select;
	struct diag_list *diags;
	unsigned line; /* 1-based line being parsed */
	bool keep_refused; /* fstab_parse_buf_all(): a refused line's entry is kept */
};

/*
 * Appends an error for the current line.  Evaluates to -EINVAL (the line is
 * rejected, parsing goes on) or -ENOMEM.
 */
#define line_error(p, ...) \
	(diag_error((p)->diags, (p)->file, (p)->line, __VA_ARGS__) < 0 ? -ENOMEM : -EINVAL)

/* ------------------------------------------------------------ options */

/*
 * The fstab options storaged reads (fstab.h): one row per option in
 * opt_table, its kind deciding what it sets in the entry; x-storaged.*
 * spellings win over the x-systemd.* ones.  Every other option is handed
 * on to the mount unchanged (mount_options).
 *
 * Every option of systemd.mount(5) (systemd 252 to 258, "FSTAB" section)
 * and every X-mount.* option of mount(8) (util-linux 2.38 to 2.40) has a
 * row, as storaged's own ones do.  A row with a @note is one storaged
 * cannot give its meaning: the note (what storaged does instead) is a
 * warning with the line's FILE:LINE, or with @refuse an error, because
 * the mount would show other data or owners than the line asks for.
 * Rows without a note are honoured as the man pages say.
 */
static const struct fstab__option opt_table[] = {
	{ "x-storaged", OPT_SELF, true, NULL, false },
	{ "x-storaged.requires", OPT_REQUIRES, true, NULL, false },
	{ "x-storaged.device-timeout", OPT_DEVICE_TIMEOUT, true, NULL, false },
	{ "x-storaged.mount-timeout", OPT_MOUNT_TIMEOUT, true, NULL, false },
	{ "x-storaged.degraded", OPT_DEGRADED, true, NULL, false },
	{ "x-storaged.remote", OPT_REMOTE, true, NULL, false },
	/* systemd.mount(5), ordering and dependencies */
	{ "x-systemd.requires", OPT_REQUIRES, false, NULL, false },
	{ "x-systemd.after", OPT_REQUIRES, false, NULL, false },
	{ "x-systemd.before", OPT_BEFORE, false, NULL, false },
	{ "x-systemd.requires-mounts-for", OPT_REQUIRES, false, NULL, false },
	{ "x-systemd.wants-mounts-for", OPT_REQUIRES, false,
	  "storaged orders the entry after that path's mount as x-systemd.requires-mounts-for= does, and skips it when that mount fails (systemd would still try it)",
	  false },
	{ "x-systemd.wanted-by", OPT_NOTED, false,
	  "storaged mounts the entry in its own pass, not when that unit starts; for systemd to pull it in, list the unit in storaged's generator output instead",
	  false },
	{ "x-systemd.required-by", OPT_NOTED, false,
	  "storaged mounts the entry in its own pass, not when that unit starts; that unit does not wait for or fail with it",
	  false },
	{ "x-systemd.device-bound", OPT_NOTED, false,
	  "storaged does not unmount the entry when its device goes away; the mount stays until 'storaged stop'",
	  false },
	/* systemd.mount(5), timeouts and how the mount is made */
	{ "x-systemd.device-timeout", OPT_DEVICE_TIMEOUT, false, NULL, false },
	{ "x-systemd.mount-timeout", OPT_MOUNT_TIMEOUT, false, NULL, false },
	{ "x-systemd.automount", OPT_NOTED, false,
	  "on systemd, its automount mounts the entry on first access (systemd-fstab-generator writes the units for /etc/fstab, storaged's generator for another fstab) and storaged leaves that mount point alone; without systemd's autofs on it, storaged mounts the entry at start",
	  false },
	{ "x-systemd.idle-timeout", OPT_NOTED, false,
	  "storaged never unmounts an idle entry; systemd's automount does, where it serves the entry", false },
	{ "x-systemd.makefs", OPT_NOTED, false,
	  "storaged does not make a filesystem: a device without one fails the mount", false },
	{ "x-systemd.growfs", OPT_NOTED, false,
	  "storaged does not grow the filesystem to its device; it is mounted at the size it has", false },
	{ "x-systemd.pcrfs", OPT_NOTED, false,
	  "storaged does not measure the filesystem into a TPM PCR", false },
	{ "x-systemd.validatefs", OPT_NOTED, false,
	  "storaged does not check the filesystem's recorded mount point or GPT type before mounting", false },
	{ "x-systemd.rw-only", OPT_RW_ONLY, false, NULL, false },
	{ "x-systemd.graceful-option", OPT_NOTED, false,
	  "storaged does not probe the kernel for the option: the mount is made without it", false },
	{ "x-initrd.mount", OPT_NOTED, false,
	  "storaged mounts the entry in the pass that runs it: in the initrd only if storaged runs there", false },
	{ "x-initrd.attach", OPT_NOTED, false,
	  "a crypttab(5) option, no fstab one: storaged ignores it", false },
	/* fstab(5) and systemd.mount(5) */
	{ "nofail", OPT_NOFAIL, false, NULL, false },
	{ "noauto", OPT_PLAIN, false, NULL, false },
	{ "auto", OPT_NOTED, false,
	  "'mount -a' and systemd's fstab generator mount this line too, racing storaged; storaged mounts it only if nothing is there: write noauto",
	  false },
	{ "_netdev", OPT_NETDEV, false, NULL, false },
	{ "bind", OPT_BIND, false, NULL, false },
	{ "rbind", OPT_BIND, false, NULL, false },
	{ "loop", OPT_LOOP, false, NULL, false },
	{ "degraded", OPT_DEGRADED_MOUNT, false, NULL, false },
	/* mount(8), X-mount.* */
	{ "X-mount.mkdir", OPT_MKDIR, false, NULL, false },
	{ "x-mount.mkdir", OPT_MKDIR, false, NULL, false },
	{ "X-mount.owner", OPT_NOTED, false,
	  "storaged does not change the mount point's owner: it is the mounted filesystem's", false },
	{ "X-mount.group", OPT_NOTED, false,
	  "storaged does not change the mount point's group: it is the mounted filesystem's", false },
	{ "X-mount.mode", OPT_MOUNT_MODE, false,
	  "storaged does not change the mount point's mode: it is the mounted filesystem's", false },
	{ "X-mount.auto-fstypes", OPT_NOTED, false,
	  "storaged does not limit the types tried: it mounts with the type the line or libblkid gives", false },
	{ "X-mount.nocanonicalize", OPT_NOTED, false,
	  "storaged resolves the mount point itself, link by link, whatever this option says", false },
	{ "X-mount.noloop", OPT_NOTED, false,
	  "storaged still loop-mounts a regular-file source when the line says 'loop'", false },
	{ "X-mount.subdir", OPT_NOTED, false,
	  "storaged cannot mount a subdirectory only and would show the whole filesystem there: the line is refused; mount the filesystem elsewhere and bind the subdirectory",
	  true },
	{ "X-mount.idmap", OPT_NOTED, false,
	  "storaged cannot make an ID-mapped mount and would show unmapped owners: the line is refused",
	  true },
};

const struct fstab__option *fstab__option_rows(size_t *ret_n)
{
	*ret_n = ARRAY_SIZE(opt_table);
	return opt_table;
}

static const struct fstab__option *opt_lookup(const char *name)
{
	static const struct fstab__option unknown_own = { NULL, OPT_UNKNOWN_OWN, true, NULL, false };
	static const struct fstab__option unknown_systemd = { NULL, OPT_UNKNOWN_SYSTEMD, false, NULL, false };
	static const struct fstab__option plain = { NULL, OPT_PLAIN, false, NULL, false };

	for (size_t i = 0; i < ARRAY_SIZE(opt_table); i++)
		if (strcmp(opt_table[i].name, name) == 0)
			return &opt_table[i];
	if (has_prefix(name, "x-storaged"))
		return &unknown_own;
	return has_prefix(name, "x-systemd.") ? &unknown_systemd : &plain;
}

/* Options storaged consumes itself and never passes to mount(8). */
static bool opt_is_stripped(const char *name, char *const *select)
{
	return strv_contains(select, name) || strcmp(name, "noauto") == 0 ||
	       strcmp(name, "nofail") == 0 || strcmp(name, "_netdev") == 0 ||
	       has_prefix(name, "x-storaged") || has_prefix(name, "x-systemd.");
}

bool fstab_option_is_passed(const char *name, size_t len)
{
	if (len >= 2 && (name[0] == 'x' || name[0] == 'X') && name[1] == '-')
		return false;
	return !(len == strlen("comment") && strncmp(name, "comment", len) == 0);
}

/* Per-entry bookkeeping while its options are read. */
struct opt_state {
	bool device_timeout_own;
	bool mount_timeout_own;
};

/* libmount keeps the quotes of name="value"; the value is what is inside. */
static void unquote(char *v)
{
	size_t n = strlen(v);

	if (n >= 2 && v[0] == '"' && v[n - 1] == '"') {
		memmove(v, v + 1, n - 2);
		v[n - 2] = '\0';
	}
}

static int entry_add_require(struct fstab_entry *e, const char *option, const char *value, bool before)
{
	struct fstab_require *nv = realloc(e->requires, (e->n_requires + 1) * sizeof(*nv));

	if (!nv)
		return -ENOMEM;
	e->requires = nv;
	nv[e->n_requires].option = option;
	nv[e->n_requires].before = before;
	nv[e->n_requires].value = strdup(value);
	if (!nv[e->n_requires].value)
		return -ENOMEM;
	e->n_requires++;
	return 0;
}

static int opt_requires(struct fstab_parser *p, struct fstab_entry *e, const struct fstab__option *d, char *value)
{
	if (!value || !*value)
		return line_error(p, "%s= needs a value: the mount point or device tag to wait for",
				  d->name);
	unquote(value);
	if (value[0] == '/')
		path_normalize(value);
	/* Waiting for a network unit means the entry needs the network. */
	if (!d->own && d->kind == OPT_REQUIRES && fsfacts_unit_is_network(value))
		e->remote = true;
	/* The x-systemd spellings may name units; the planner sorts them out. */
	if (d->own && !(path_is_normalized(value) || fsfacts_spec_is_tag(value)))
		return line_error(p, "%s='%s' is neither an absolute, normalised mount point nor a tag (LABEL=, UUID=, PARTLABEL=, PARTUUID=, ID=); fix the value",
				  d->name, value);
	return entry_add_require(e, d->name, value, d->kind == OPT_BEFORE);
}

static int opt_duration(struct fstab_parser *p, const struct fstab__option *d, const char *value,
			uint64_t *usec, bool *own_seen)
{
	uint64_t v;

	if (!value || units_parse_duration(value, &v) < 0)
		return line_error(p, "%s='%s' is not a duration; write e.g. 90s, 2min or infinity",
				  d->name, value ?: "");
	/* "0.1us" is 0 too: microseconds are the smallest unit */
	if (d->own && v == 0 && d->kind == OPT_MOUNT_TIMEOUT)
		return line_error(p, "%s=%s is below 1us, the smallest unit, and would abandon the mount at once; write e.g. 90s, or infinity for no limit",
				  d->name, value);
	if (!d->own && *own_seen)
		return 0;
	/* systemd reads 0 as "no timeout"; the x-storaged spelling means 0. */
	if (!d->own && v == 0)
		v = USEC_INFINITY;
	*usec = v;
	*own_seen = d->own;
	return 0;
}

static int opt_flag_without_value(struct fstab_parser *p, const struct fstab__option *d, const char *value)
{
	if (value)
		return line_error(p, "option '%s' takes no value, got '%s=%s'; write '%s'", d->name,
				  d->name, value, d->name);
	return 0;
}

static int opt_mkdir(struct fstab_parser *p, struct fstab_entry *e, const char *value)
{
	unsigned mode;

	if (value && units_parse_mode(value, &mode) < 0)
		return line_error(p, "X-mount.mkdir='%s' is not an octal mode; write e.g. X-mount.mkdir=0755",
				  value);
	e->mkdir = true;
	return 0;
}

/* libmount 2.39 and later (hook_owner.c) chmod(2) the mount point to
 * X-mount.mode= after the mount, whatever storaged does itself: a mode a
 * directory does not take is refused by the rule an area's mode = has.  A
 * value that is no octal mode is libmount's to judge. */
static int opt_mount_mode(struct fstab_parser *p, const char *value)
{
	unsigned mode, fixed;
	const char *why;

	if (!value || units_parse_mode(value, &mode) < 0)
		return 0;
	why = units_dir_mode_refusal(mode, &fixed);
	return why ? line_error(p, "X-mount.mode=%s %s; write X-mount.mode=%04o", value, why, fixed) : 0;
}

/* A row storaged cannot give its meaning: say so, and what it does instead. */
static int opt_tell_note(struct fstab_parser *p, const struct fstab__option *d)
{
	if (!d->note)
		return 0;
	if (d->refuse)
		return line_error(p, "option '%s': %s", d->name, d->note);
	return diag_warning(p->diags, p->file, p->line, "option '%s': %s", d->name, d->note) < 0 ? -ENOMEM : 0;
}

/* Optimal string alignment distance of @a and @b (@n, @m bytes, compared
 * without case), stopping above @max.  Returns: the distance, or @max + 1. */
static size_t edits(const char *a, size_t n, const char *b, size_t m, size_t max)
{
	size_t d[40][40];

	if (n >= 40 || m >= 40 || (n > m ? n - m : m - n) > max)
		return max + 1;
	for (size_t i = 0; i <= n; i++)
		d[i][0] = i;
	for (size_t j = 0; j <= m; j++)
		d[0][j] = j;
	for (size_t i = 1; i <= n; i++)
		for (size_t j = 1; j <= m; j++) {
			size_t cost = tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]);
			size_t v = d[i - 1][j - 1] + cost;

			v = d[i - 1][j] + 1 < v ? d[i - 1][j] + 1 : v;
			v = d[i][j - 1] + 1 < v ? d[i][j - 1] + 1 : v;
			if (i > 1 && j > 1 && tolower((unsigned char)a[i - 1]) == tolower((unsigned char)b[j - 2]) &&
			    tolower((unsigned char)a[i - 2]) == tolower((unsigned char)b[j - 1]) && d[i - 2][j - 2] + 1 < v)
				v = d[i - 2][j - 2] + 1; /* two letters swapped */
			d[i][j] = v;
		}
	return d[n][m] > max ? max + 1 : d[n][m];
}

static bool near(const char *name, size_t n, const char *word)
{
	size_t m = strlen(word), max = m >= 8 ? 2 : 1;

	if (m < 4 || (n == m && strncmp(name, word, n) == 0))
		return false;
	return edits(name, n, word, m, max) <= max;
}

/*
 * The select option or storaged prefix ("x-storaged")
 * that the option @name (@n bytes, its value left out) is a misspelling of:
 * within two edits (one for a word under 8 bytes), or equal but for case,
 * and not that word itself.  Returns: it (borrowed), or NULL.
 */
static const char *near_miss(const char *name, size_t n, char *const *select)
{
	/* "x-storged.requires=..." is judged by its "x-storged" */
	size_t stem = strcspn(name, ".=");

	if (stem > n)
		stem = n;
	if (near(name, stem, "x-storaged"))
		return "x-storaged";
	for (size_t i = 0; select && select[i]; i++)
		if (near(name, n, select[i]))
			return select[i];
	return NULL;
}

/*
 * A warning for option @name of the current line when near_miss() finds
 * one; @selected: the line is storaged's.  Returns: 0 or -ENOMEM.
 */
static int warn_near_miss(struct fstab_parser *p, const char *name, size_t n, bool selected)
{
	const char *word = near_miss(name, n, p->select);

	if (!word)
		return 0;
	return diag_warning(p->diags, p->file, p->line,
			    selected ? "option '%.*s' looks like a misspelling of '%s', which storaged knows: as written, storaged does not read it and mount(8) ignores it; correct its spelling"
				     : "option '%.*s' looks like a misspelling of '%s': as written, the line carries no select option and storaged leaves it alone; correct its spelling if storaged is to mount it",
			    (int)n, name, word) < 0 ? -ENOMEM : 0;
}

static int opt_apply(struct fstab_parser *p, struct fstab_entry *e, struct opt_state *st,
		     const char *name, char *value)
{
	const struct fstab__option *d = opt_lookup(name);
	int r = opt_tell_note(p, d);

	if (r < 0)
		return r;
	switch (d->kind) {
	case OPT_SELF:
		return opt_flag_without_value(p, d, value);
	case OPT_DEGRADED:
		e->degraded_ok = true;
		return opt_flag_without_value(p, d, value);
	case OPT_REMOTE:
		e->remote = true;
		return opt_flag_without_value(p, d, value);
	case OPT_REQUIRES:
	case OPT_BEFORE:
		return opt_requires(p, e, d, value);
	case OPT_DEVICE_TIMEOUT:
		return opt_duration(p, d, value, &e->device_timeout_usec, &st->device_timeout_own);
	case OPT_MOUNT_TIMEOUT:
		return opt_duration(p, d, value, &e->mount_timeout_usec, &st->mount_timeout_own);
	case OPT_NOFAIL:
		e->nofail = true;
		return 0;
	case OPT_BIND:
		e->bind = true;
		e->rbind = e->rbind || strcmp(name, "rbind") == 0;
		return 0;
	case OPT_LOOP:
		e->loop = true;
		return 0;
	case OPT_MKDIR:
		return opt_mkdir(p, e, value);
	case OPT_MOUNT_MODE:
		return opt_mount_mode(p, value);
	case OPT_NETDEV:
		e->netdev = true;
		return 0;
	case OPT_DEGRADED_MOUNT:
		e->degraded_ok = true;
		return 0;
	case OPT_RW_ONLY:
		e->rw_only = true;
		return opt_flag_without_value(p, d, value);
	case OPT_UNKNOWN_OWN:
		return line_error(p, "unknown option '%s'; storaged knows x-storaged, x-storaged.requires=, x-storaged.device-timeout=, x-storaged.mount-timeout=, x-storaged.degraded and x-storaged.remote",
				  name);
	case OPT_UNKNOWN_SYSTEMD:
		return diag_warning(p->diags, p->file, p->line,
				    "option '%s' is not in systemd.mount(5) as storaged knows it (systemd 252 to 258): storaged strips it and mounts without it; check its spelling",
				    name) < 0 ? -ENOMEM : 0;
	case OPT_PLAIN:
		return warn_near_miss(p, name, strlen(name), true);
	case OPT_NOTED:
		break;
	}
	return 0;
}

/*
 * Reads every option of @e->options: storaged's own ones fill @e, the others
 * are appended to @e->mount_options.  Reports every bad option of the line.
 */
static int parse_options(struct fstab_parser *p, struct fstab_entry *e)
{
	struct opt_state st = { 0 };
	char *it = e->options, *n, *v;
	size_t nsz, vsz;
	int r = 0;

	while (mnt_optstr_next_option(&it, &n, &nsz, &v, &vsz) == 0) {
		_cleanup_free_ char *name = strndup(n, nsz);
		_cleanup_free_ char *value = v ? strndup(v, vsz) : NULL;
		int k;

		if (!name || (v && !value))
			return -ENOMEM;
		/* "=" or "=x" (libmount 2.38 reads them as a name starting
		 * with '='): mount(2) drops it unseen, mount(8) ("unsupported
		 * option format") and fsconfig(2) ("Unknown parameter") refuse
		 * it, so whether the mount works would depend on the path */
		if (nsz == 0 || name[0] == '=') {
			r = line_error(p, "option '%s%s%s' has an empty name; mount(8) and the kernel's mount API refuse it: remove it, or write NAME=VALUE",
				       name, v ? "=" : "", value ?: "");
			if (r == -ENOMEM)
				return r;
			continue;
		}
		k = opt_apply(p, e, &st, name, value);
		/* btrfs: storaged adds "degraded" itself, only once the device
		 * timeout has passed with members missing */
		if (k == 0 && !opt_is_stripped(name, p->select) &&
		    !(streq(name, "degraded") && streq(e->fstype, "btrfs")))
			k = mnt_optstr_append_option(&e->mount_options, name, value) < 0 ? -ENOMEM : 0;
		if (k == -ENOMEM)
			return k;
		if (k < 0)
			r = k;
	}
	return r;
}

/* ------------------------------------------------------------ raw lines */

static bool is_skipped_line(const char *s, size_t n)
{
	size_t i = 0;

	while (i < n && is_blank(s[i]))
		i++;
	return i == n || s[i] == '#';
}

struct raw_fields {
	size_t n; /* fields before a '#' field; may exceed FSTAB_MAX_FIELDS */
	const char *start[FSTAB_MAX_FIELDS];
	size_t len[FSTAB_MAX_FIELDS];
};

/*
 * Splits a line into blank-separated fields only to check their number and
 * the numeric ones: libmount still does the real parsing.  A field starting
 * with '#' ends the line, as libmount ignores everything after passno.
 */
static void split_fields(const char *s, size_t n, struct raw_fields *rf)
{
	size_t i = 0;

	rf->n = 0;
	for (;;) {
		size_t b;

		while (i < n && is_blank(s[i]))
			i++;
		if (i == n || s[i] == '#')
			return;
		b = i;
		while (i < n && !is_blank(s[i]))
			i++;
		if (rf->n < FSTAB_MAX_FIELDS) {
			rf->start[rf->n] = s + b;
			rf->len[rf->n] = i - b;
		}
		rf->n++;
	}
}

static bool field_is_number(const char *s, size_t n)
{
	char buf[16];
	uint64_t v;

	if (n >= sizeof(buf))
		return false;
	memcpy(buf, s, n);
	buf[n] = '\0';
	return units_parse_uint(buf, INT_MAX, &v) == 0;
}

static int check_field_count(struct fstab_parser *p, size_t n)
{
	if (n < 3)
		return line_error(p,
				  "malformed line: %zu field%s, at least source, mount point and type are needed (" FIELDS_HINT
				  ")",
				  n, n == 1 ? "" : "s");
	if (n > FSTAB_MAX_FIELDS)
		return line_error(p,
				  "malformed line: %zu fields, at most 6 are allowed (" FIELDS_HINT
				  "); " SPACE_HINT,
				  n);
	return 0;
}

static bool is_octal(char c)
{
	return c >= '0' && c <= '7';
}

/*
 * libmount decodes "\NNN" in the first four fields into one byte, keeping
 * the low 8 bits of the octal value (util-linux lib/mangle.c,
 * unmangle_to_buffer()): "\000" and "\400" become a NUL, which ends the C
 * string and silently cuts the field there.  Escapes are decoded left to
 * right, so "\134000" is a backslash and "000", no NUL.
 * Returns: the escape's backslash in @s, or NULL.
 */
static const char *find_nul_escape(const char *s, size_t n)
{
	for (size_t i = 0; i + 3 < n; i++) {
		unsigned v;

		if (s[i] != '\\' || !is_octal(s[i + 1]) || !is_octal(s[i + 2]) || !is_octal(s[i + 3]))
			continue;
		v = (unsigned)(s[i + 1] - '0') * 64 + (unsigned)(s[i + 2] - '0') * 8 +
		    (unsigned)(s[i + 3] - '0');
		if ((v & 0xff) == 0)
			return s + i;
		i += 3;
	}
	return NULL;
}

static int check_nul_escapes(struct fstab_parser *p, const struct raw_fields *rf)
{
	static const char *const names[] = { "fs_spec", "fs_file", "fs_vfstype", "fs_mntops" };
	static const char *const what[] = { "a device path or tag", "a path", "a type", "an option" };
	int r = 0;

	for (size_t i = 0; i < ARRAY_SIZE(names) && i < rf->n; i++) {
		const char *e = find_nul_escape(rf->start[i], rf->len[i]);

		if (e)
			r = line_error(p, "%s '%.*s' holds %.4s, a NUL: %s cannot hold one, and libmount would cut the field there; remove the escape",
				       names[i], (int)rf->len[i], rf->start[i], e, what[i]);
		if (r == -ENOMEM)
			return r;
	}
	return r;
}

static int check_fields(struct fstab_parser *p, const char *s, size_t n)
{
	static const char *const names[] = { [4] = "freq", [5] = "passno" };
	struct raw_fields rf;
	int r;

	if (memchr(s, '\0', n))
		return line_error(p, "malformed line: it contains a NUL byte; remove it");
	split_fields(s, n, &rf);
	r = check_field_count(p, rf.n);
	if (r == 0)
		r = check_nul_escapes(p, &rf);
	if (r < 0)
		return r;
	for (size_t i = 4; i < rf.n; i++)
		if (!field_is_number(rf.start[i], rf.len[i]))
			return line_error(p,
					  "malformed line: %s '%.*s' is not a number (" FIELDS_HINT
					  "); " SPACE_HINT,
					  names[i], (int)rf.len[i], rf.start[i]);
	/* libmount would take "<number> <number> ..." for a mountinfo line. */
	if (strchr("0123456789+-", rf.start[1][0]))
		return line_error(p, "malformed line: mount point '%.*s' is not a path; write it as an absolute path",
				  (int)rf.len[1], rf.start[1]);
	return 0;
}

/* ------------------------------------------------------------ libmount */

static int on_parse_error(struct libmnt_table *tb, const char *filename, int line)
{
	bool *failed = mnt_table_get_userdata(tb);

	*failed = true;
	return 1; /* skip the line: parse_line() reports it with our number */
}

/*
 * Parses one line with libmount.  Returns 0 and a reference in @ret_fs;
 * -EINVAL after reporting a line libmount rejects; -ENOMEM.
 */
static int parse_line(struct fstab_parser *p, const char *s, size_t n, struct libmnt_fs **ret_fs)
{
	struct libmnt_table *tb = mnt_new_table();
	struct libmnt_fs *fs = NULL;
	bool failed = false;
	FILE *f = NULL;
	int r;

	if (!tb)
		return -ENOMEM;
	mnt_table_set_userdata(tb, &failed);
	mnt_table_set_parser_errcb(tb, on_parse_error);
	f = fmemopen((void *)s, n, "r");
	if (!f) {
		r = -ENOMEM; /* n > 0 and mode "r": memory is all it can lack */
		goto out;
	}
	r = mnt_table_parse_stream(tb, f, p->file);
	if (r == -ENOMEM)
		goto out;
	if (r < 0 || failed || mnt_table_first_fs(tb, &fs) != 0) {
		r = line_error(p, "malformed line: libmount cannot parse it (" FIELDS_HINT "); " SPACE_HINT);
		goto out;
	}
	mnt_ref_fs(fs);
	*ret_fs = fs;
out:
	if (f)
		fclose(f);
	mnt_unref_table(tb);
	return r;
}

static bool is_selected(const char *opts, char *const *select)
{
	for (size_t i = 0; opts && select[i]; i++)
		if (optstr_get(opts, select[i], NULL, NULL))
			return true;
	return false;
}

/* ------------------------------------------------------------ entries */

static void entry_done(struct fstab_entry *e)
{
	free(e->source);
	free(e->target);
	free(e->fstype);
	free(e->options);
	free(e->mount_options);
	for (size_t i = 0; i < e->n_requires; i++)
		free(e->requires[i].value);
	free(e->requires);
	for (size_t i = 0; i < e->n_paths; i++)
		free(e->paths[i].path);
	free(e->paths);
	free(e->refused);
	free(e->refused_at);
}

/* mount(2) would fail with ENAMETOOLONG: refuse the line now, not at boot. */
static int check_target_length(struct fstab_parser *p, const char *target)
{
	size_t len = strlen(target), longest = 0;

	for (const char *c = target; *c; c += strspn(c, "/")) {
		size_t n = strcspn(c, "/");

		if (n > longest)
			longest = n;
		c += n;
	}
	if (len >= PATH_MAX)
		return line_error(p, "mount point '%.48s...' is %zu bytes long; the kernel accepts at most %d",
				  target, len, PATH_MAX - 1);
	if (longest > NAME_MAX)
		return line_error(p, "mount point '%.48s...' has a %zu-byte component; the kernel accepts at most %d",
				  target, longest, NAME_MAX);
	return 0;
}

static int check_target(struct fstab_parser *p, const struct fstab_entry *e)
{
	if (e->target[0] != '/')
		return line_error(p, "mount point '%s' is not an absolute path; write it from the root, e.g. '/%s'",
				  e->target, e->target);
	if (!path_is_normalized(e->target))
		return line_error(p, "mount point '%s' is not normalised: it has a '..' component, which only a lookup could resolve; write the path it stands for",
				  e->target);
	return check_target_length(p, e->target);
}

/* "LABEL=c07 vol", not the raw "LABEL=\"c07 vol\"": quotes gone, escapes decoded. */
static char *source_string(struct libmnt_fs *fs)
{
	const char *name, *value, *src;
	char *s;

	if (mnt_fs_get_tag(fs, &name, &value) == 0)
		return asprintf(&s, "%s=%s", name, value) < 0 ? NULL : s;
	src = mnt_fs_get_source(fs);
	return strdup(src ?: "none");
}

static bool is_empty_value(const char *v)
{
	return streq(v, "") || streq(v, "\"\"") || streq(v, "''");
}

/*
 * A tag in the wrong case is no tag to libmount or systemd's
 * fstab-generator, but a relative path that no device has; an empty tag
 * value is no tag either ("UUID=" is a path too), and no device would ever
 * carry it.  Both would only fail at boot.
 */
static int check_source_tag(struct fstab_parser *p, const char *src)
{
	const char *dir, *name = fsfacts_tag_name_any_case(src, &dir);
	size_t n;

	if (!name)
		return 0;
	n = strlen(name);
	if (strncmp(src, name, n) != 0)
		return line_error(p, "'%s' is not a tag: tags are upper case (%s%s); libmount and systemd read it as a path that no device has, so write the tag as shown",
				  src, name, src + n);
	if (is_empty_value(src + n))
		return line_error(p, "%s needs a value: the name of the device to mount, as listed in %s; write e.g. %s<name>",
				  name, dir, name);
	return 0;
}

static int entry_fill(struct fstab_parser *p, struct libmnt_fs *fs, struct fstab_entry *ret)
{
	struct fstab_entry e = {
		.line = p->line,
		.device_timeout_usec = USEC_UNSET,
		.mount_timeout_usec = USEC_UNSET,
	};
	const char *fstype = mnt_fs_get_fstype(fs);
	int r;

	e.source = source_string(fs);
	e.target = strdup(mnt_fs_get_target(fs) ?: "");
	e.fstype = strdup(fstype ?: "auto");
	e.options = strdup(mnt_fs_get_options(fs) ?: "");
	if (!e.source || !e.target || !e.fstype || !e.options) {
		r = -ENOMEM;
		goto fail;
	}
	/* "/raid/", "/srv//data", "/./x" are the mount point mount(8) takes;
	 * a network source ("//server/share/") is the server's. */
	path_normalize(e.target);
	if (!fsfacts_is_network(e.fstype, e.source))
		path_normalize(e.source);
	/* a nodev type's source is a free name ("label=x" is a tmpfs's) */
	r = fsfacts_is_nodev(e.fstype) ? 0 : check_source_tag(p, mnt_fs_get_source(fs));
	if (r != -ENOMEM)
		r = check_target(p, &e) ?: r;
	if (r == -ENOMEM)
		goto fail;
	/* Options are checked even after a bad target: every problem in one pass. */
	r = parse_options(p, &e) ?: r;
	if (r == -ENOMEM)
		goto fail;
	e.remote = e.remote || fsfacts_is_network(e.fstype, e.source);
	e.netdev = e.netdev || fsfacts_spec_on_network(e.source);
	if (fstab_entry_collect_paths(&e) < 0) {
		r = -ENOMEM;
		goto fail;
	}
	/* a refused line is still filled: fstab_parse_buf_all() keeps it */
	*ret = e;
	return r;
fail:
	entry_done(&e);
	return r;
}

static int entries_append(struct fstab *f, size_t *cap, struct fstab_entry *e)
{
	if (grow_array(&f->entries, cap, f->n_entries, sizeof(*f->entries)) < 0)
		return -ENOMEM;
	f->entries[f->n_entries++] = *e;
	return 0;
}

/*
 * storaged's options on an entry it does not mount are almost surely a
 * forgotten select option: say so, but it is not an error.
 */
static int warn_unselected(struct fstab_parser *p, const char *opts)
{
	static const char own[] = "x-storaged.";
	char *it = (char *)opts, *n, *v;
	size_t nsz, vsz;

	while (opts && mnt_optstr_next_option(&it, &n, &nsz, &v, &vsz) == 0) {
		if (nsz >= sizeof(own) && strncmp(n, own, sizeof(own) - 1) == 0)
			return diag_warning(p->diags, p->file, p->line,
					    "option '%.*s' has no effect: the line carries no select option (such as '%s'), so storaged does not mount it; add one or remove the option",
					    (int)nsz, n, p->select[0] ?: "x-storaged");
		if (near_miss(n, nsz, p->select))
			return warn_near_miss(p, n, nsz, false);
	}
	return 0;
}

static bool has_option(const char *opts, const char *name)
{
	return optstr_get(opts, name, NULL, NULL);
}

/* Why a selected line is another tool's, or NULL when storaged's:
 * fstab(5) gives swap to swapon(8) and "ignore" to nobody; a "none" type
 * or mount point is no filesystem unless the line is a bind; a noauto line a
 * user may mount (user, users, owner) is the user's unless x-storaged
 * claims it. */
static const char *owned_elsewhere(struct libmnt_fs *fs)
{
	const char *type = mnt_fs_get_fstype(fs) ?: "", *target = mnt_fs_get_target(fs) ?: "";
	const char *opts = mnt_fs_get_options(fs);
	bool bind = has_option(opts, "bind") || has_option(opts, "rbind") || has_option(opts, "move");

	if (streq(type, "swap"))
		return "a swap line: swapon(8) and systemd's swap units activate it";
	if (streq(type, "ignore"))
		return "type 'ignore': fstab(5) says no tool mounts it";
	if (!bind && (streq(type, "none") || streq(target, "none")))
		return "no filesystem to mount (type or mount point 'none' without bind)";
	if (has_option(opts, "noauto") && !has_option(opts, "x-storaged") &&
	    (has_option(opts, "user") || has_option(opts, "users") || has_option(opts, "owner")))
		return "noauto with user/users/owner: a user mounts it on demand with mount(8), not the boot";
	return NULL;
}

static int note_skipped(struct fstab_parser *p, struct fstab *f, const char *source, const char *why)
{
	struct fstab_skipped *nv = realloc(f->skipped, (f->n_skipped + 1) * sizeof(*nv));

	if (!nv)
		return -ENOMEM;
	f->skipped = nv;
	if (asprintf(&nv[f->n_skipped].why, "%s: %s; left alone", source ?: "none", why) < 0)
		return -ENOMEM;
	nv[f->n_skipped++].line = p->line;
	f->n_total++;
	return 0;
}

/* x-storaged on a swap line asks storaged for what it never does: a
 * warning says so where it shows (the line is still left alone);
 * _netdev alone is systemd's swap on iSCSI, noted only. */
static int warn_claimed_swap(struct fstab_parser *p, struct libmnt_fs *fs)
{
	if (!streq(mnt_fs_get_fstype(fs) ?: "", "swap") || !has_option(mnt_fs_get_options(fs), "x-storaged"))
		return 0;
	return diag_warning(p->diags, p->file, p->line,
			    "a swap line: activating swap is not storaged's job (swapon(8) and systemd's swap units do it), so storaged leaves it alone; remove x-storaged from it");
}

/* Returns: 0; -EINVAL (the line is refused: with keep_refused, its entry
 * is kept all the same); -ENOMEM. */
static int handle_fs(struct fstab_parser *p, struct fstab *f, size_t *cap, struct libmnt_fs *fs)
{
	struct fstab_entry e;
	const char *why;
	int r, k;

	if (!is_selected(mnt_fs_get_options(fs), p->select)) {
		f->n_total++;
		return warn_unselected(p, mnt_fs_get_options(fs));
	}
	why = owned_elsewhere(fs);
	if (why) {
		r = warn_claimed_swap(p, fs);
		return r < 0 ? r : note_skipped(p, f, mnt_fs_get_source(fs), why);
	}
	r = entry_fill(p, fs, &e);
	if (r == -ENOMEM)
		return r;
	if (r == -EINVAL && !p->keep_refused) {
		entry_done(&e);
		return r;
	}
	k = entries_append(f, cap, &e);
	if (k < 0) {
		entry_done(&e);
		return k;
	}
	f->n_total++;
	return r;
}

/* Raw field @i of @rf (escapes as written), or @none when the line has none. */
static char *field_dup(const struct raw_fields *rf, size_t i, const char *none)
{
	return i < rf->n && i < FSTAB_MAX_FIELDS ? strndup(rf->start[i], rf->len[i]) : strdup(none);
}

/*
 * A line refused before libmount could read it (too few or many fields, a
 * NUL): an entry of its raw fields, so that the boot can fail that line
 * as one step (fstab_parse_buf_all()).  Its mount point is the second
 * field when that is an absolute path, so that what lies below it waits
 * for it; else "-", which holds nothing.  Returns: 0 or -ENOMEM.
 */
static int keep_unreadable(struct fstab_parser *p, struct fstab *f, size_t *cap, const char *s, size_t n)
{
	struct fstab_entry e = { .line = p->line, .device_timeout_usec = USEC_UNSET,
				 .mount_timeout_usec = USEC_UNSET };
	struct raw_fields rf;
	int r;

	split_fields(s, memchr(s, '\0', n) ? (size_t)((const char *)memchr(s, '\0', n) - s) : n, &rf);
	e.source = field_dup(&rf, 0, "-");
	e.target = rf.n > 1 && rf.start[1][0] == '/' ? field_dup(&rf, 1, "-") : strdup("-");
	e.fstype = field_dup(&rf, 2, "-");
	e.options = strdup("");
	if (!e.source || !e.target || !e.fstype || !e.options) {
		entry_done(&e);
		return -ENOMEM;
	}
	path_normalize(e.target);
	r = entries_append(f, cap, &e);
	if (r < 0)
		entry_done(&e);
	return r;
}

/* Returns 0 (the line may have been rejected with a diagnostic) or -ENOMEM. */
static int parse_one(struct fstab_parser *p, struct fstab *f, size_t *cap, const char *s, size_t n)
{
	struct libmnt_fs *fs = NULL;
	int r;

	if (n > 0 && s[n - 1] == '\r')
		n--;
	if (is_skipped_line(s, n))
		return 0;
	r = check_fields(p, s, n);
	if (r == 0)
		r = parse_line(p, s, n, &fs);
	if (r == 0)
		r = handle_fs(p, f, cap, fs);
	else if (r == -EINVAL && p->keep_refused)
		r = keep_unreadable(p, f, cap, s, n);
	mnt_unref_fs(fs);
	return r == -EINVAL ? 0 : r;
}

/* ------------------------------------------------------------ duplicates */

static int cmp_target_line(const void *a, const void *b)
{
	const struct fstab_entry *x = *(const struct fstab_entry *const *)a;
	const struct fstab_entry *y = *(const struct fstab_entry *const *)b;
	int c = strcmp(x->target, y->target);

	return c ? c : (x->line > y->line) - (x->line < y->line);
}

/*
 * Sorting by (target, line) finds every repeat in O(n log n); the errors are
 * then reported in file order, each naming the first line on that target.
 */
static int check_duplicates(struct fstab_parser *p, const struct fstab *f)
{
	const struct fstab_entry **v = calloc(f->n_entries, sizeof(*v));
	unsigned *first = calloc(f->n_entries, sizeof(*first));
	size_t g = 0;
	int r = 0;

	if (f->n_entries && (!v || !first)) {
		r = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < f->n_entries; i++)
		v[i] = &f->entries[i];
	if (f->n_entries)
		qsort(v, f->n_entries, sizeof(*v), cmp_target_line);
	for (size_t i = 1; i < f->n_entries; i++) {
		if (strcmp(v[i]->target, v[g]->target) != 0)
			g = i;
		else
			first[v[i] - f->entries] = v[g]->line;
	}
	for (size_t i = 0; i < f->n_entries && r == 0; i++) {
		const struct fstab_entry *e = &f->entries[i];

		if (first[i])
			r = diag_error(p->diags, p->file, e->line,
				       "mount point '%s' is also used by line %u; storaged mounts each mount point once: remove or merge one of the two entries",
				       e->target, first[i]);
	}
out:
	free(first);
	free(v);
	return r;
}

/* ------------------------------------------------------------ public */

static int parse_buf(struct fstab *ret, const char *text, size_t len, const char *filename,
		     char *const *select, bool keep_refused, struct diag_list *diags)
{
	struct fstab_parser p = { .file = filename, .select = select ?: default_select, .diags = diags,
				  .keep_refused = keep_refused };
	size_t errors = diag_count(diags, DIAG_ERROR), cap = 0;
	const char *s = text, *end = text ? text + len : NULL;
	struct fstab f = { 0 };
	int r = 0;

	if (!ret || !filename || (!text && len))
		return -EINVAL;
	f.file = strdup(filename);
	if (!f.file) {
		r = -ENOMEM;
		goto fail;
	}
	while (s < end) {
		const char *nl = memchr(s, '\n', end - s);
		size_t n = nl ? (size_t)(nl - s) : (size_t)(end - s);

		p.line++;
		r = parse_one(&p, &f, &cap, s, n);
		if (r < 0)
			goto fail;
		s = nl ? nl + 1 : end;
	}
	r = check_duplicates(&p, &f);
	if (r == 0 && diag_count(diags, DIAG_ERROR) > errors)
		r = -EINVAL;
	if (r == -EINVAL && keep_refused) {
		*ret = f;
		return r;
	}
	if (r < 0)
		goto fail;
	*ret = f;
	return 0;
fail:
	fstab_done(&f);
	return r;
}

int fstab_parse_buf(struct fstab *ret, const char *text, size_t len, const char *filename,
		    char *const *select, struct diag_list *diags)
{
	return parse_buf(ret, text, len, filename, select, false, diags);
}

int fstab_parse_buf_all(struct fstab *ret, const char *text, size_t len, const char *filename,
			char *const *select, struct diag_list *diags)
{
	return parse_buf(ret, text, len, filename, select, true, diags);
}

void fstab_done(struct fstab *f)
{
	if (!f)
		return;
	for (size_t i = 0; i < f->n_entries; i++)
		entry_done(&f->entries[i]);
	free(f->entries);
	for (size_t i = 0; i < f->n_skipped; i++)
		free(f->skipped[i].why);
	free(f->skipped);
	free(f->file);
	*f = (struct fstab){ 0 };
}
