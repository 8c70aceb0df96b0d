/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * storaged systemd-generator DIR.  At shutdown systemd stops the mount
 * units of a RAM area (the bind over its directory, the area itself, the
 * private bind of the directory) in parallel with storaged.service, whose
 * stop syncs a persist area back: the sync could lose the area under it.
 * A drop-in orders each of those mounts Before= storaged's units, so that
 * at shutdown (reverse order) storaged stops first.  systemd.generator(7).
 * An entry of storaged's that says x-systemd.automount gets systemd's
 * automount (generator_write_automounts(), below), unless
 * systemd-fstab-generator reads the same fstab and writes it itself.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "area/area.h"
#include "commands.h"
#include "parse/config.h"
#include "world/load.h"
#include "shared/log.h"
#include "shared/optstr.h"
#include "shared/util.h"

static bool unit_char_ok(char c, bool first)
{
	if (first && c == '.')
		return false;
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == ':' || c == '_' || c == '.';
}

int unit_name_from_path(const char *path, const char *suffix, char **ret)
{
	size_t len = strlen(path), n = 0;
	bool first = true;
	char *out;

	if (path[0] != '/')
		return -EINVAL;
	out = malloc(len * 4 + strlen(suffix) + 2);
	if (!out)
		return -ENOMEM;
	for (const char *p = path; *p; p++) {
		if (*p == '/') {
			/* one "-" per run of slashes, none at either end */
			if (!first && p[1] && p[1] != '/' && n)
				out[n++] = '-';
			continue;
		}
		if (unit_char_ok(*p, first))
			out[n++] = *p;
		else
			n += (size_t)sprintf(out + n, "\\x%02x", (unsigned char)*p);
		first = false;
	}
	if (n == 0)
		out[n++] = '-';
	strcpy(out + n, suffix);
	*ret = out;
	return 0;
}

static int write_dropin(const struct logger *lg, const char *dir, const char *path, const char *area)
{
	_cleanup_free_ char *unit = NULL, *ddir = NULL, *file = NULL;
	FILE *f;
	int r;

	r = unit_name_from_path(path, ".mount", &unit);
	if (r < 0)
		return r;
	if (asprintf(&ddir, "%s/%s.d", dir, unit) < 0 || asprintf(&file, "%s/50-storaged.conf", ddir) < 0)
		return -ENOMEM;
	if (mkdir(ddir, 0755) < 0 && errno != EEXIST) {
		log_error(lg, "'%s': %s", ddir, strerror(errno));
		return -errno;
	}
	f = fopen(file, "we");
	if (!f) {
		log_error(lg, "'%s': %s", file, strerror(errno));
		return -errno;
	}
	fprintf(f,
		"# Written by storaged's generator for the RAM area '%s': at shutdown\n"
		"# storaged stops (and syncs the area back) before this mount goes.\n"
		"[Unit]\nBefore=storaged.service storaged-remote.service\n",
		area);
	r = fclose(f) == 0 ? 0 : -errno;
	if (r < 0)
		log_error(lg, "'%s': %s", file, strerror(-r));
	return r;
}

/* systemd-fstab-generator reads $SYSTEMD_FSTAB, else /etc/fstab
 * (src/shared/fstab-util.c fstab_path()); the same file by identity. */
static bool systemd_reads_fstab(const char *path)
{
	const char *theirs = getenv("SYSTEMD_FSTAB") ?: "/etc/fstab";
	struct stat a, b;

	if (stat(path, &a) < 0 || stat(theirs, &b) < 0)
		return streq(path, theirs);
	return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* The automounts of storaged's entries.  A bad line is logged and
 * skipped, as start skips it (world_load_fstab()); a file that cannot be
 * read is logged: a generator must not hold up the boot. */
static int write_automounts(const struct options *o, const struct logger *lg, const struct config *cfg)
{
	const char *path = o->fstab_path ? o->fstab_path : cfg->fstab;
	struct fstab fstab = { 0 };
	struct diag_list dl = { 0 };
	int r;

	if (!path || systemd_reads_fstab(path))
		return 0;
	r = world_load_fstab(path, cfg->select, &fstab, &dl);
	log_diags(lg, &dl);
	diag_list_done(&dl);
	if (r == -ENOENT)
		return 0;
	if (r == 0)
		r = generator_write_automounts(lg, o->arg, &fstab);
	fstab_done(&fstab);
	return r;
}

/* The drop-ins of every area read, and the automounts.  Returns: how many
 * items failed (each logged). */
static int generate(const struct options *o, const struct logger *lg)
{
	struct config cfg = { 0 };
	struct diag_list dl = { 0 };
	int r, failed = 0;

	r = config_init(&cfg);
	if (r == 0)
		r = config_load(&cfg, o->config_path, true, &dl);
	log_diags(lg, &dl);
	diag_list_done(&dl);
	/* -EINVAL: errors in some lines, each logged; the areas read are
	 * still ordered before storaged (a persist area's sync needs it) */
	if (r < 0 && r != -ENOENT && r != -EINVAL) {
		log_error(lg, "'%s': %s; no area's mounts are ordered before storaged's units: fix it, then `systemctl daemon-reload`",
			  o->config_path ? o->config_path : "configuration", strerror(-r));
		config_done(&cfg);
		return 1;
	}
	failed += r == -EINVAL;
	for (size_t i = 0; i < cfg.n_areas; i++) {
		const struct area_config *a = &cfg.areas[i];
		_cleanup_free_ char *area = NULL, *lower = NULL;
		/* an area whose section had errors may lack its path */
		int k = a->path ? area_private_mounts(o->state_dir, a->name, &area, &lower) : -EINVAL;

		if (k == 0)
			k = write_dropin(lg, o->arg, a->path, a->name);
		if (k == 0)
			k = write_dropin(lg, o->arg, area, a->name);
		if (k == 0)
			k = write_dropin(lg, o->arg, lower, a->name);
		if (k < 0) {
			log_error(lg, "area '%s': its mounts are not ordered before storaged's units (%s): at shutdown they may go before its sync; fix the area, then `systemctl daemon-reload`",
				  a->name, strerror(-k));
			failed++;
		}
	}
	failed += write_automounts(o, lg, &cfg) < 0;
	config_done(&cfg);
	return failed;
}

/* systemd.generator(7): a generator logs to the kernel log (its stderr
 * goes nowhere at boot) and never holds up the boot: what failed is
 * logged, the exit status is 0. */
int cmd_systemd_generator(const struct options *o, const struct logger *lg)
{
	struct logger klg;

	log_init_kmsg(&klg, lg->max_level, "storaged-generator");
	klg.self = lg->self;
	generate(o, &klg);
	log_close(&klg);
	return 0;
}

/*
 * x-systemd.automount on storaged's entries, handed to systemd's automount
 * by the generator (generator_write_automounts()).  The units
 * are written as systemd-fstab-generator writes them for /etc/fstab
 * (src/fstab-generator/fstab-generator.c add_mount(), systemd 252 to 258):
 * a .automount with Where= and TimeoutIdleSec=, the .mount it starts, and
 * the .automount pulled in by local-fs.target or remote-fs.target.
 */

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
