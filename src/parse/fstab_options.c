/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The fstab options storaged reads (fstab.h): one row per option in
 * opt_table, its kind deciding what it sets in the entry; x-storaged.*
 * spellings win over the x-systemd.* ones.  Every other option is handed
 * on to the mount unchanged (mount_options).
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libmount.h>

#include "fsfacts.h"
#include "fstab_internal.h"
#include "shared/units.h"
#include "shared/optstr.h"
#include "shared/util.h"

/*
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

const char *fstab__near_miss(const char *name, size_t n, char *const *select)
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

int fstab__warn_near_miss(struct fstab_parser *p, const char *name, size_t n, bool selected)
{
	const char *word = fstab__near_miss(name, n, p->select);

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
		return fstab__warn_near_miss(p, name, strlen(name), true);
	case OPT_NOTED:
		break;
	}
	return 0;
}

/*
 * Reads every option of @e->options: storaged's own ones fill @e, the others
 * are appended to @e->mount_options.  Reports every bad option of the line.
 */
int fstab__parse_options(struct fstab_parser *p, struct fstab_entry *e)
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
