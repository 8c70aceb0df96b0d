/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Every path an fstab entry uses besides its mount point (C09): overlay
 * layers, a bind or loop source, an image file, the mounts systemd is told
 * to wait for.  Whatever of these lies below another entry's mount point
 * waits for that entry (plan_edges.c); strings only, no I/O.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <libmount.h>

#include "fsfacts.h"
#include "fstab.h"
#include "util.h"

static int add_path(struct fstab_entry *e, const char *option, const char *path, size_t len)
{
	struct fstab_path *nv;
	char *p;

	if (len == 0 || path[0] != '/')
		return 0; /* relative: mount(8)'s working directory, not ours */
	p = strndup(path, len);
	if (!p)
		return -ENOMEM;
	path_normalize(p);
	for (size_t i = 0; i < e->n_paths; i++)
		if (streq(e->paths[i].path, p) && streq(e->paths[i].option, option)) {
			free(p);
			return 0;
		}
	nv = realloc(e->paths, (e->n_paths + 1) * sizeof(*nv));
	if (!nv) {
		free(p);
		return -ENOMEM;
	}
	e->paths = nv;
	nv[e->n_paths++] = (struct fstab_path){ .option = option, .path = p };
	return 0;
}

/*
 * An overlay layer list, as the kernel splits it (fs/overlayfs/params.c):
 * layers separated by ':' ("::" before data-only layers), a backslash
 * keeping the next character (an escaped ':' or ',').  libmount already
 * decoded the fstab's octal escapes and kept quotes, which go here.
 */
static int add_layers(struct fstab_entry *e, const char *option, const char *v, size_t n)
{
	char *buf = malloc(n + 1);
	size_t k = 0;
	int r = 0;

	if (!buf)
		return -ENOMEM;
	if (n >= 2 && v[0] == '"' && v[n - 1] == '"') {
		v++;
		n -= 2;
	}
	for (size_t i = 0; r == 0 && i <= n; i++) {
		if (i < n && v[i] == '\\' && i + 1 < n) {
			buf[k++] = v[++i];
		} else if (i == n || v[i] == ':') {
			buf[k] = '\0';
			r = add_path(e, option, buf, k);
			k = 0;
		} else {
			buf[k++] = v[i];
		}
	}
	free(buf);
	return r;
}

/* Overlay options naming directories, by the kernel's names. */
static const char *overlay_option(const char *name, size_t n)
{
	static const char *const names[] = { "lowerdir", "lowerdir+", "datadir+", "upperdir", "workdir" };

	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (strlen(names[i]) == n && strncmp(name, names[i], n) == 0)
			return names[i];
	return NULL;
}

static int add_overlay_paths(struct fstab_entry *e)
{
	char *it = e->options, *n, *v;
	size_t nsz, vsz;
	int r = 0;

	while (r == 0 && mnt_optstr_next_option(&it, &n, &nsz, &v, &vsz) == 0) {
		const char *opt = overlay_option(n, nsz);

		if (opt && v)
			r = add_layers(e, opt, v, vsz);
	}
	return r;
}

/* A path outside /dev of a type on a block device: mount(8) sets up a loop
 * device for that file by itself. */
static bool source_is_image(const struct fstab_entry *e)
{
	return e->source[0] == '/' && !has_prefix(e->source, "/dev/") &&
	       !fsfacts_is_nodev(e->fstype) && !streq(e->fstype, "swap");
}

int fstab_entry_collect_paths(struct fstab_entry *e)
{
	int r = 0;

	if (streq(e->fstype, "overlay") || has_prefix(e->fstype, "overlay."))
		r = add_overlay_paths(e);
	if (r == 0 && e->bind)
		r = add_path(e, "bind", e->source, strlen(e->source));
	else if (r == 0 && e->loop)
		r = add_path(e, "loop", e->source, strlen(e->source));
	else if (r == 0 && source_is_image(e))
		r = add_path(e, "image file", e->source, strlen(e->source));
	for (size_t i = 0; r == 0 && i < e->n_requires; i++)
		if (streq(e->requires[i].option, "x-systemd.requires-mounts-for"))
			r = add_path(e, e->requires[i].option, e->requires[i].value,
				     strlen(e->requires[i].value));
	return r;
}
