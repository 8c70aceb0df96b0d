/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * storaged systemd-generator DIR.  At shutdown systemd stops the mount
 * units of a RAM area (the bind over its directory, the area itself, the
 * private bind of the directory) in parallel with storaged.service, whose
 * stop syncs a persist area back: the sync could lose the area under it.
 * A drop-in orders each of those mounts Before= storaged's units, so that
 * at shutdown (reverse order) storaged stops first.  systemd.generator(7).
 * An entry of storaged's that says x-systemd.automount gets systemd's
 * automount (generator_automount.c), unless systemd-fstab-generator reads
 * the same fstab and writes it itself.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "area/area.h"
#include "commands.h"
#include "parse/config.h"
#include "world/load.h"
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
