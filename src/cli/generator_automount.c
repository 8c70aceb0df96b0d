/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * x-systemd.automount on storaged's entries, handed to systemd's automount
 * by the generator (commands.h, generator_write_automounts()).  The units
 * are written as systemd-fstab-generator writes them for /etc/fstab
 * (src/fstab-generator/fstab-generator.c add_mount(), systemd 252 to 258):
 * a .automount with Where= and TimeoutIdleSec=, the .mount it starts, and
 * the .automount pulled in by local-fs.target or remote-fs.target.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commands.h"
#include "shared/log.h"
#include "shared/optstr.h"
#include "shared/util.h"

/* A unit file value: "%" is a specifier there (systemd.unit(5)). */
static void put_value(FILE *f, const char *key, const char *v, size_t n)
{
	fprintf(f, "%s=", key);
	for (size_t i = 0; i < n; i++) {
		if (v[i] == '%')
			fputc('%', f);
		fputc(v[i], f);
	}
	fputc('\n', f);
}

static bool has_control_char(const char *s)
{
	for (; s && *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return true;
	return false;
}

/* The option's value as written (a systemd time span), or NULL. */
static bool option_value(const char *options, const char *name, const char **ret, size_t *ret_len)
{
	char *v = NULL;
	size_t n = 0;

	if (!optstr_get(options, name, &v, &n) || !v || n == 0)
		return false;
	*ret = v;
	*ret_len = n;
	return true;
}

static void write_head(FILE *f, const char *fstab_file, unsigned line, const char *what)
{
	fprintf(f,
		"# Written by storaged's generator: %s:%u says x-systemd.automount.\n"
		"# %s\n"
		"[Unit]\n",
		fstab_file, line, what);
	put_value(f, "SourcePath", fstab_file, strlen(fstab_file));
	fputs("Documentation=man:storaged(8) man:systemd.automount(5)\n", f);
}

int generator_automount_unit(FILE *f, const char *fstab_file, const struct fstab_entry *e)
{
	const char *v;
	size_t n;

	if (has_control_char(e->target) || has_control_char(e->options))
		return -EINVAL;
	write_head(f, fstab_file, e->line,
		   "systemd mounts it on first access; storaged leaves a mount point with this autofs on it alone.");
	fputs("\n[Automount]\n", f);
	put_value(f, "Where", e->target, strlen(e->target));
	if (option_value(e->options, "x-systemd.idle-timeout", &v, &n))
		put_value(f, "TimeoutIdleSec", v, n);
	return ferror(f) ? -EIO : 0;
}

int generator_mount_unit(FILE *f, const char *fstab_file, const struct fstab_entry *e)
{
	const char *opts = e->mount_options ? e->mount_options : "";
	const char *v;
	size_t n;

	if (has_control_char(e->source) || has_control_char(e->target) || has_control_char(e->options))
		return -EINVAL;
	write_head(f, fstab_file, e->line, "The mount its .automount starts, as mount(8) makes it.");
	fputs("\n[Mount]\n", f);
	put_value(f, "What", e->source, strlen(e->source));
	put_value(f, "Where", e->target, strlen(e->target));
	if (e->fstype && !streq(e->fstype, "auto"))
		put_value(f, "Type", e->fstype, strlen(e->fstype));
	/* _netdev stays: systemd orders such a mount after the network */
	if (e->netdev || opts[0]) {
		_cleanup_free_ char *o = NULL;

		if (asprintf(&o, "%s%s%s", e->netdev ? "_netdev" : "", e->netdev && opts[0] ? "," : "",
			     opts) < 0)
			return -ENOMEM;
		put_value(f, "Options", o, strlen(o));
	}
	if (option_value(e->options, "x-systemd.mount-timeout", &v, &n) ||
	    option_value(e->options, "x-storaged.mount-timeout", &v, &n))
		put_value(f, "TimeoutSec", v, n);
	return ferror(f) ? -EIO : 0;
}

static int write_unit(const struct logger *lg, const char *dir, const char *name, const char *fstab_file,
		      const struct fstab_entry *e, int (*body)(FILE *, const char *, const struct fstab_entry *))
{
	_cleanup_free_ char *path = NULL;
	FILE *f;
	int r;

	if (asprintf(&path, "%s/%s", dir, name) < 0)
		return -ENOMEM;
	/* a unit of that name already there is another generator's: its own */
	f = fopen(path, "wxe");
	if (!f) {
		r = -errno;
		log_error(lg, "%s:%u: x-systemd.automount: '%s': %s; systemd's automount does not serve '%s'",
			  fstab_file, e->line, path, strerror(-r), e->target);
		return r;
	}
	r = body(f, fstab_file, e);
	if (fclose(f) != 0 && r == 0)
		r = -errno;
	if (r < 0) {
		unlink(path);
		log_error(lg, "%s:%u: x-systemd.automount: writing '%s': %s", fstab_file, e->line, path,
			  r == -EINVAL ? "a control character in the line" : strerror(-r));
	}
	return r;
}

/* DIR/TARGET.wants/UNIT (nofail) or .requires/UNIT -> ../UNIT, as
 * systemd's generator_add_symlink() makes them. */
static int pull_in(const struct logger *lg, const char *dir, const char *target, bool nofail, const char *unit)
{
	_cleanup_free_ char *sub = NULL, *link = NULL, *to = NULL;

	if (asprintf(&sub, "%s/%s.%s", dir, target, nofail ? "wants" : "requires") < 0 ||
	    asprintf(&link, "%s/%s", sub, unit) < 0 || asprintf(&to, "../%s", unit) < 0)
		return -ENOMEM;
	if ((mkdir(sub, 0755) < 0 && errno != EEXIST) || symlink(to, link) < 0) {
		log_error(lg, "'%s': %s", link, strerror(errno));
		return -errno;
	}
	return 0;
}

int generator_write_automounts(const struct logger *lg, const char *dir, const struct fstab *fstab)
{
	int failed = 0;

	for (size_t i = 0; i < fstab->n_entries; i++) {
		const struct fstab_entry *e = &fstab->entries[i];
		_cleanup_free_ char *automount = NULL, *mount = NULL;

		/* a refused line's errors were logged with the file's */
		if (e->refused || !optstr_get(e->options, "x-systemd.automount", NULL, NULL))
			continue;
		if (unit_name_from_path(e->target, ".automount", &automount) < 0 ||
		    unit_name_from_path(e->target, ".mount", &mount) < 0) {
			failed++;
			continue;
		}
		if (write_unit(lg, dir, mount, fstab->file, e, generator_mount_unit) < 0 ||
		    write_unit(lg, dir, automount, fstab->file, e, generator_automount_unit) < 0 ||
		    pull_in(lg, dir, e->remote || e->netdev ? "remote-fs.target" : "local-fs.target", e->nofail,
			    automount) < 0)
			failed++;
	}
	return failed ? -EIO : 0;
}
