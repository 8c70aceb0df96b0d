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
 *   2. check_fields(): what libmount would let through or misread
 *   3. parse_line(): libmount parses the line alone
 *   4. is_selected(): only entries with a select option go further;
 *      owned_elsewhere(): a line of another tool (swap, ...) is noted only
 *   5. entry_fill(): source, target (normalised), type, storaged's
 *      options, mount options, the paths the entry uses (fstab_paths.c)
 *   6. check_target()
 * and once every line is read:
 *   7. check_duplicates(): one deferred entry per mount point
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libmount.h>

#include "fstab.h"
#include "input.h"
#include "units.h"
#include "shared/optstr.h"

#define FSTAB_MAX_BYTES (4u << 20)
#define FSTAB_MAX_FIELDS 6
#define FIELDS_HINT "fields are: source, mount point, type, options, freq, passno"
#define SPACE_HINT "a space in a path must be written \\040"

/* Used when the caller passes no select list: the documented default. */
static char *const default_select[] = { "x-storaged", "_netdev", NULL };

struct parser {
	const char *file;
	char *const *select;
	struct diag_list *diags;
	unsigned line; /* 1-based line being parsed */
};

/*
 * Appends an error for the current line.  Evaluates to -EINVAL (the line is
 * rejected, parsing goes on) or -ENOMEM.
 */
#define line_error(p, ...) \
	(diag_error((p)->diags, (p)->file, (p)->line, __VA_ARGS__) < 0 ? -ENOMEM : -EINVAL)

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

static int check_field_count(struct parser *p, size_t n)
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

static int check_fields(struct parser *p, const char *s, size_t n)
{
	static const char *const names[] = { [4] = "freq", [5] = "passno" };
	struct raw_fields rf;
	int r;

	if (memchr(s, '\0', n))
		return line_error(p, "malformed line: it contains a NUL byte; remove it");
	split_fields(s, n, &rf);
	r = check_field_count(p, rf.n);
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
static int parse_line(struct parser *p, const char *s, size_t n, struct libmnt_fs **ret_fs)
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

/* ------------------------------------------------------------ options */

enum opt_kind {
	OPT_PLAIN, /* no meaning to storaged */
	OPT_SELF, /* "x-storaged" */
	OPT_REQUIRES,
	OPT_DEVICE_TIMEOUT,
	OPT_MOUNT_TIMEOUT,
	OPT_DEGRADED,
	OPT_REMOTE,
	OPT_NOFAIL,
	OPT_BIND,
	OPT_LOOP,
	OPT_MKDIR,
	OPT_NETDEV,
	OPT_DEGRADED_MOUNT, /* "degraded": the administrator's consent */
	OPT_UNKNOWN_OWN, /* an x-storaged* option storaged does not know */
};

struct opt_def {
	const char *name;
	enum opt_kind kind;
	bool own; /* x-storaged spelling: wins over the x-systemd one */
};

static const struct opt_def opt_table[] = {
	{ "x-storaged", OPT_SELF, true },
	{ "x-storaged.requires", OPT_REQUIRES, true },
	{ "x-storaged.device-timeout", OPT_DEVICE_TIMEOUT, true },
	{ "x-storaged.mount-timeout", OPT_MOUNT_TIMEOUT, true },
	{ "x-storaged.degraded", OPT_DEGRADED, true },
	{ "x-storaged.remote", OPT_REMOTE, true },
	{ "x-systemd.requires", OPT_REQUIRES, false },
	{ "x-systemd.after", OPT_REQUIRES, false },
	{ "x-systemd.requires-mounts-for", OPT_REQUIRES, false },
	{ "x-systemd.device-timeout", OPT_DEVICE_TIMEOUT, false },
	{ "x-systemd.mount-timeout", OPT_MOUNT_TIMEOUT, false },
	{ "nofail", OPT_NOFAIL, false },
	{ "bind", OPT_BIND, false },
	{ "rbind", OPT_BIND, false },
	{ "loop", OPT_LOOP, false },
	{ "X-mount.mkdir", OPT_MKDIR, false },
	{ "x-mount.mkdir", OPT_MKDIR, false },
	{ "_netdev", OPT_NETDEV, false },
	{ "degraded", OPT_DEGRADED_MOUNT, false },
};

static const struct opt_def *opt_lookup(const char *name)
{
	static const struct opt_def unknown_own = { NULL, OPT_UNKNOWN_OWN, true };
	static const struct opt_def plain = { NULL, OPT_PLAIN, false };

	for (size_t i = 0; i < ARRAY_SIZE(opt_table); i++)
		if (strcmp(opt_table[i].name, name) == 0)
			return &opt_table[i];
	return has_prefix(name, "x-storaged") ? &unknown_own : &plain;
}

/* Options storaged consumes itself and never passes to mount(8). */
static bool opt_is_stripped(const char *name, char *const *select)
{
	return strv_contains(select, name) || strcmp(name, "noauto") == 0 ||
	       strcmp(name, "nofail") == 0 || strcmp(name, "_netdev") == 0 ||
	       has_prefix(name, "x-storaged") || has_prefix(name, "x-systemd.");
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

static int entry_add_require(struct fstab_entry *e, const char *option, const char *value)
{
	struct fstab_require *nv = realloc(e->requires, (e->n_requires + 1) * sizeof(*nv));

	if (!nv)
		return -ENOMEM;
	e->requires = nv;
	nv[e->n_requires].option = option;
	nv[e->n_requires].value = strdup(value);
	if (!nv[e->n_requires].value)
		return -ENOMEM;
	e->n_requires++;
	return 0;
}

static int opt_requires(struct parser *p, struct fstab_entry *e, const struct opt_def *d, char *value)
{
	if (!value || !*value)
		return line_error(p, "%s= needs a value: the mount point or device tag to wait for",
				  d->name);
	unquote(value);
	if (value[0] == '/')
		path_normalize(value);
	/* Waiting for a network unit means the entry needs the network. */
	if (!d->own && fsfacts_unit_is_network(value))
		e->remote = true;
	/* The x-systemd spellings may name units; the planner sorts them out. */
	if (d->own && !(path_is_normalized(value) || fsfacts_spec_is_tag(value)))
		return line_error(p, "%s='%s' is neither an absolute, normalised mount point nor a tag (LABEL=, UUID=, PARTLABEL=, PARTUUID=, ID=); fix the value",
				  d->name, value);
	return entry_add_require(e, d->name, value);
}

static int opt_duration(struct parser *p, const struct opt_def *d, const char *value,
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

static int opt_flag_without_value(struct parser *p, const struct opt_def *d, const char *value)
{
	if (value)
		return line_error(p, "option '%s' takes no value, got '%s=%s'; write '%s'", d->name,
				  d->name, value, d->name);
	return 0;
}

static int opt_mkdir(struct parser *p, struct fstab_entry *e, const char *value)
{
	unsigned mode;

	if (value && units_parse_mode(value, &mode) < 0)
		return line_error(p, "X-mount.mkdir='%s' is not an octal mode; write e.g. X-mount.mkdir=0755",
				  value);
	e->mkdir = true;
	return 0;
}

static int opt_apply(struct parser *p, struct fstab_entry *e, struct opt_state *st,
		     const char *name, char *value)
{
	const struct opt_def *d = opt_lookup(name);

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
	case OPT_NETDEV:
		e->netdev = true;
		return 0;
	case OPT_DEGRADED_MOUNT:
		e->degraded_ok = true;
		return 0;
	case OPT_UNKNOWN_OWN:
		return line_error(p, "unknown option '%s'; storaged knows x-storaged, x-storaged.requires=, x-storaged.device-timeout=, x-storaged.mount-timeout=, x-storaged.degraded and x-storaged.remote",
				  name);
	case OPT_PLAIN:
		break;
	}
	return 0;
}

/*
 * Reads every option of @e->options: storaged's own ones fill @e, the others
 * are appended to @e->mount_options.  Reports every bad option of the line.
 */
static int entry_parse_options(struct parser *p, struct fstab_entry *e)
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

/* ------------------------------------------------------------ entries */

static void entry_done(struct fstab_entry *e)
{
	free(e->source);
	free(e->target);
	free(e->target_real);
	free(e->refused);
	free(e->fstype);
	free(e->options);
	free(e->mount_options);
	for (size_t i = 0; i < e->n_requires; i++)
		free(e->requires[i].value);
	free(e->requires);
	for (size_t i = 0; i < e->n_paths; i++) {
		free(e->paths[i].path);
		free(e->paths[i].real);
	}
	free(e->paths);
}

/* mount(2) would fail with ENAMETOOLONG: refuse the line now, not at boot. */
static int check_target_length(struct parser *p, const char *target)
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

static int check_target(struct parser *p, const struct fstab_entry *e)
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

static int entry_fill(struct parser *p, struct libmnt_fs *fs, struct fstab_entry *ret)
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
	r = check_target(p, &e);
	if (r == -ENOMEM)
		goto fail;
	/* Options are checked even after a bad target: every problem in one pass. */
	r = entry_parse_options(p, &e) ?: r;
	if (r < 0)
		goto fail;
	e.remote = e.remote || fsfacts_is_network(e.fstype, e.source);
	e.netdev = e.netdev || fsfacts_spec_on_network(e.source);
	r = fstab_entry_collect_paths(&e);
	if (r < 0)
		goto fail;
	*ret = e;
	return 0;
fail:
	entry_done(&e);
	return r;
}

static int entries_append(struct fstab *f, size_t *cap, struct fstab_entry *e)
{
	if (f->n_entries == *cap) {
		size_t ncap = *cap ? *cap * 2 : 16;
		struct fstab_entry *nv = reallocarray(f->entries, ncap, sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		f->entries = nv;
		*cap = ncap;
	}
	f->entries[f->n_entries++] = *e;
	return 0;
}

/*
 * storaged's options on an entry it does not mount are almost surely a
 * forgotten select option: say so, but it is not an error.
 */
static int warn_unselected(struct parser *p, const char *opts)
{
	static const char own[] = "x-storaged.";
	char *it = (char *)opts, *n, *v;
	size_t nsz, vsz;

	while (opts && mnt_optstr_next_option(&it, &n, &nsz, &v, &vsz) == 0) {
		if (nsz >= sizeof(own) && strncmp(n, own, sizeof(own) - 1) == 0)
			return diag_warning(p->diags, p->file, p->line,
					    "option '%.*s' has no effect: the line carries no select option (such as '%s'), so storaged does not mount it; add one or remove the option",
					    (int)nsz, n, p->select[0] ?: "x-storaged");
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

static int note_skipped(struct parser *p, struct fstab *f, const char *source, const char *why)
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
static int warn_claimed_swap(struct parser *p, struct libmnt_fs *fs)
{
	if (!streq(mnt_fs_get_fstype(fs) ?: "", "swap") || !has_option(mnt_fs_get_options(fs), "x-storaged"))
		return 0;
	return diag_warning(p->diags, p->file, p->line,
			    "a swap line: activating swap is not storaged's job (swapon(8) and systemd's swap units do it), so storaged leaves it alone; remove x-storaged from it");
}

static int handle_fs(struct parser *p, struct fstab *f, size_t *cap, struct libmnt_fs *fs)
{
	struct fstab_entry e;
	const char *why;
	int r;

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
	if (r < 0)
		return r;
	r = entries_append(f, cap, &e);
	if (r < 0) {
		entry_done(&e);
		return r;
	}
	f->n_total++;
	return 0;
}

/* Returns 0 (the line may have been rejected with a diagnostic) or -ENOMEM. */
static int parse_one(struct parser *p, struct fstab *f, size_t *cap, const char *s, size_t n)
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
static int check_duplicates(struct parser *p, const struct fstab *f)
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

int fstab_parse_buf(struct fstab *ret, const char *text, size_t len, const char *filename,
		    char *const *select, struct diag_list *diags)
{
	struct parser p = { .file = filename, .select = select ?: default_select, .diags = diags };
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
	if (r < 0)
		goto fail;
	*ret = f;
	return 0;
fail:
	fstab_done(&f);
	return r;
}

int fstab_load(struct fstab *ret, const char *path, char *const *select, bool check_owner,
	       struct diag_list *diags)
{
	_cleanup_free_ char *buf = NULL;
	size_t len = 0;
	int r;

	r = input_read(path, FSTAB_MAX_BYTES, check_owner, &buf, &len, diags);
	if (r == -ENOENT)
		return diag_errno(diags, r, path, 0,
				  "cannot read the fstab: %s; check -f/--fstab or the fstab= setting",
				  strerror(ENOENT));
	if (r < 0)
		return r;
	return fstab_parse_buf(ret, buf, len, path, select, diags);
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
