/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Every path an fstab entry uses besides its mount point: overlay
 * layers, a bind or loop source, an image file, a credentials file, a FUSE
 * or eCryptfs source directory, a union filesystem's branches, the mounts
 * systemd is told to wait for.  Whatever of these lies below another
 * entry's mount point waits for that entry (plan_edges.c); strings only,
 * no I/O.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <libmount.h>

#include "fsfacts.h"
#include "fstab.h"
#include "shared/util.h"

static int add_path(struct fstab_entry *e, const char *option, const char *path, size_t len, bool glob)
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
	nv[e->n_paths++] = (struct fstab_path){ .option = option, .path = p, .glob = glob };
	return 0;
}

/* libmount keeps an option value's quotes: "credentials=\"/a b\"". */
static void unquote(const char **v, size_t *n)
{
	if (*n >= 2 && (*v)[0] == '"' && (*v)[*n - 1] == '"') {
		(*v)++;
		*n -= 2;
	}
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
	unquote(&v, &n);
	for (size_t i = 0; r == 0 && i <= n; i++) {
		if (i < n && v[i] == '\\' && i + 1 < n) {
			buf[k++] = v[++i];
		} else if (i == n || v[i] == ':') {
			buf[k] = '\0';
			r = add_path(e, option, buf, k, false);
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

static bool name_is(const char *name, size_t n, const char *want)
{
	return strlen(want) == n && strncmp(name, want, n) == 0;
}

/* The overlay's layers, and the file mount.cifs(8) reads the user name and
 * password from (credentials=, or its short form cred=) before it mounts. */
static int add_option_paths(struct fstab_entry *e)
{
	bool overlay = streq(e->fstype, "overlay") || has_prefix(e->fstype, "overlay.");
	bool cifs = streq(e->fstype, "cifs") || streq(e->fstype, "smb3");
	char *it = e->options, *n, *v;
	size_t nsz, vsz;
	int r = 0;

	if (!overlay && !cifs)
		return 0;
	while (r == 0 && mnt_optstr_next_option(&it, &n, &nsz, &v, &vsz) == 0) {
		const char *opt = overlay ? overlay_option(n, nsz) : NULL;

		if (!v)
			continue;
		if (opt) {
			r = add_layers(e, opt, v, vsz);
		} else if (cifs && (name_is(n, nsz, "credentials") || name_is(n, nsz, "cred"))) {
			unquote((const char **)&v, &vsz);
			r = add_path(e, "credentials", v, vsz, false);
		}
	}
	return r;
}

/* FUSE programs that join several directories into one, and how their
 * fs_spec separates them: mergerfs(1) and unionfs-fuse(8) "DIR[=MODE]:…"
 * (mergerfs also expands glob patterns itself: "/mnt/disk*"), mhddfs(1)
 * "DIR,DIR,…". */
static const char *union_separators(const char *prog, size_t n)
{
	static const struct {
		const char *prog, *sep;
	} unions[] = { { "mergerfs", ":" }, { "unionfs", ":" }, { "unionfs-fuse", ":" }, { "mhddfs", "," } };

	for (size_t i = 0; i < ARRAY_SIZE(unions); i++)
		if (name_is(prog, n, unions[i].prog))
			return unions[i].sep;
	return NULL;
}

static int add_branches(struct fstab_entry *e, const char *src, const char *sep)
{
	int r = 0;

	while (r == 0 && *src) {
		size_t n = strcspn(src, sep), len = strcspn(src, "=");

		if (len > n)
			len = n;
		r = add_path(e, "branch", src, len, strcspn(src, "*?[") < len);
		src += n + (src[n] != '\0');
	}
	return r;
}

/*
 * A FUSE entry's program and the source handed to it: type "fuse.PROG"
 * with fs_spec as the source, or type "fuse" with fs_spec "PROG#SOURCE",
 * the old spelling (mount.fuse(8)).  Returns: false when @e is no such
 * entry.
 */
static bool fuse_program(const struct fstab_entry *e, const char **prog, size_t *n, const char **source)
{
	const char *hash;

	if (has_prefix(e->fstype, "fuse.")) {
		*prog = e->fstype + 5;
		*n = strlen(*prog);
		*source = e->source;
		return true;
	}
	if (!streq(e->fstype, "fuse") || !(hash = strchr(e->source, '#')))
		return false;
	*prog = e->source;
	*n = (size_t)(hash - e->source);
	*source = hash + 1;
	return true;
}

/* A directory handed to a FUSE program (bindfs, encfs, gocryptfs, the
 * branches of mergerfs) or to eCryptfs as its source is read from the
 * moment it is mounted: it is a used path like a bind source.  Each
 * branch counts on its own; relative ones, and remote sources (sshfs's
 * "host:/dir"), are no path of ours (add_path()). */
static int add_source_dirs(struct fstab_entry *e)
{
	const char *prog = NULL, *src = e->source, *sep = NULL;
	size_t n = 0;

	if (fuse_program(e, &prog, &n, &src))
		sep = union_separators(prog, n);
	else if (streq(e->fstype, "mergerfs"))
		sep = ":"; /* its own mount helper, mount.mergerfs */
	else if (!streq(e->fstype, "ecryptfs"))
		return 0;
	if (sep)
		return add_branches(e, src, sep);
	return add_path(e, "source", src, strlen(src), false);
}

size_t fstab_glob_dir_len(const char *pattern)
{
	size_t n = strcspn(pattern, "*?[");

	while (n > 1 && pattern[n - 1] != '/')
		n--;
	return n > 1 ? n - 1 : n; /* "/mnt", not "/mnt/" */
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
	int r = add_option_paths(e);

	if (r == 0)
		r = add_source_dirs(e);
	if (r == 0 && e->bind)
		r = add_path(e, "bind", e->source, strlen(e->source), false);
	else if (r == 0 && e->loop)
		r = add_path(e, "loop", e->source, strlen(e->source), false);
	else if (r == 0 && source_is_image(e))
		r = add_path(e, "image file", e->source, strlen(e->source), false);
	for (size_t i = 0; r == 0 && i < e->n_requires; i++)
		if (streq(e->requires[i].option, "x-systemd.requires-mounts-for"))
			r = add_path(e, e->requires[i].option, e->requires[i].value,
				     strlen(e->requires[i].value), false);
	return r;
}
