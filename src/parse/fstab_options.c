/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The fstab options storaged reads (fstab.h): one row per option in
 * opt_table, its kind deciding what it sets in the entry; x-storaged.*
 * spellings win over the x-systemd.* ones.  Every other option is handed
 * on to the mount unchanged (mount_options).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libmount.h>

#include "fsfacts.h"
#include "fstab_internal.h"
#include "units.h"
#include "shared/optstr.h"
#include "shared/util.h"

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

static int opt_requires(struct fstab_parser *p, struct fstab_entry *e, const struct opt_def *d, char *value)
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

static int opt_duration(struct fstab_parser *p, const struct opt_def *d, const char *value,
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

static int opt_flag_without_value(struct fstab_parser *p, const struct opt_def *d, const char *value)
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

static int opt_apply(struct fstab_parser *p, struct fstab_entry *e, struct opt_state *st,
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
