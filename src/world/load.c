/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Reading the pass's sources from disk: storaged.conf with its layers of
 * drop-ins, and the fstab.  The parsers (parse/) take buffers and touch nothing;
 * the opening, the drop-in directory's listing and the owner checks are
 * here, beside the loader that calls them (world.c).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "load.h"
#include "parse/config.h"
#include "parse/fstab.h"
#include "shared/input.h"
#include "shared/util.h"

#define CONFIG_FILE_MAX (1024 * 1024) /* bytes per file */
#define FSTAB_MAX_BYTES (4u << 20)

/* The drop-in directories of the default configuration, lowest priority
 * first, as systemd orders its own (systemd.syntax(7), "CONFIGURATION
 * DIRECTORIES AND PRECEDENCE"): the vendor's, the local vendor's, the
 * runtime's, the administrator's. */
static const char *const default_layers[] = {
	"/usr/lib/storaged.conf.d",
	"/usr/local/lib/storaged.conf.d",
	"/run/storaged.conf.d",
	"/etc/storaged.conf.d",
};

#define MAX_LAYERS 8

struct layers {
	char *dir[MAX_LAYERS];
	int fd[MAX_LAYERS]; /* -ENOENT: the directory does not exist */
	size_t n;
};

/* One drop-in name in effect: the file of the highest layer that has it. */
struct dropin {
	char *name;
	size_t layer;
	bool masked; /* that file is a link to /dev/null */
};

struct dropins {
	struct dropin *v;
	size_t n;
};

static void layers_done(struct layers *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->dir[i]);
		safe_close(l->fd[i]);
	}
}

static void dropins_done(struct dropins *d)
{
	for (size_t i = 0; i < d->n; i++)
		free(d->v[i].name);
	free(d->v);
}

static char *concat(const char *a, const char *sep, const char *b)
{
	size_t n = strlen(a) + strlen(sep) + strlen(b) + 1;
	char *s = malloc(n);

	if (s)
		snprintf(s, n, "%s%s%s", a, sep, b);
	return s;
}

static int layers_add(struct layers *l, const char *dir, size_t len)
{
	if (l->n == MAX_LAYERS)
		return -E2BIG;
	l->dir[l->n] = strndup(dir, len);
	if (!l->dir[l->n])
		return -ENOMEM;
	l->fd[l->n++] = -ENOENT;
	return 0;
}

/* The default configuration has systemd's layers; a file named with -c
 * has one drop-in directory, FILE.d; STORAGED_CONFIG_DIRS (tests, image
 * builds: ':'-separated, lowest priority first) replaces either. */
static int layers_init(struct layers *l, const char *path)
{
	const char *env = secure_getenv("STORAGED_CONFIG_DIRS");
	_cleanup_free_ char *own = NULL;
	int r = 0;

	*l = (struct layers){ 0 };
	if (env && env[0]) {
		for (const char *p = env; *p && r == 0;) {
			size_t len = strcspn(p, ":");

			if (len > 0)
				r = layers_add(l, p, len);
			p += len + (p[len] == ':');
		}
		return r;
	}
	if (strcmp(path, CONFIG_DEFAULT_PATH) == 0) {
		for (size_t i = 0; i < ARRAY_SIZE(default_layers) && r == 0; i++)
			r = layers_add(l, default_layers[i], strlen(default_layers[i]));
		return r;
	}
	own = concat(path, ".d", "");
	return own ? layers_add(l, own, strlen(own)) : -ENOMEM;
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

static int compare_dropins(const void *a, const void *b)
{
	return strcmp(((const struct dropin *)a)->name, ((const struct dropin *)b)->name);
}

/* A directory storaged reads configuration from decides what root mounts,
 * as the files in it do: it is opened without following a link in any
 * component, and with @check_owner it must be root's and closed to group
 * and others (anyone who can write it can add or replace a file).
 * @file: the file read from it, named in the diagnostic ahead of the
 * directory; NULL: the diagnostic names the directory alone.
 * Returns: the directory's descriptor; -ENOENT (none); negative errno
 * (with a diagnostic). */
static int open_config_dir(const char *dir, const char *file, bool check_owner, struct diag_list *diags)
{
	struct open_how how = { .flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC,
				.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS };
	struct stat st;
	_cleanup_close_ int fd = syscall(SYS_openat2, AT_FDCWD, dir, &how, sizeof(how));
	_cleanup_free_ char *lead = NULL;
	const char *where = file ? file : dir;

	if (fd < 0 && errno == ENOENT)
		return -ENOENT;
	if (file && asprintf(&lead, "its directory '%s': ", dir) < 0)
		return -ENOMEM;
	if (fd < 0 && (errno == ENOTDIR || errno == ELOOP))
		return diag_errno(diags, -ENOTDIR, where, 0,
				  "%snot a directory, or reached through a symbolic link: storaged reads its configuration only from the directory itself; name the real path",
				  lead ?: "");
	if (fd < 0)
		return diag_errno(diags, -errno, where, 0, "%scannot open directory: %s", lead ?: "", strerror(errno));
	if (fstat(fd, &st) < 0)
		return diag_errno(diags, -errno, where, 0, "%scannot stat directory: %s", lead ?: "", strerror(errno));
	if (!check_owner || (st.st_uid == 0 && !(st.st_mode & (S_IWGRP | S_IWOTH))))
		return TAKE_FD(fd);
	/* /tmp and its kind are everyone's by design: no chmod to advise */
	if (st.st_mode & S_ISVTX)
		return diag_errno(diags, -EPERM, where, 0,
				  "%smode %04o, a directory everyone may write to: storaged reads configuration only from a root-owned directory that group and others cannot write; put the file in one (e.g. /etc, or a directory of its own made with 'mkdir -m 0755')",
				  lead ?: "", (unsigned)(st.st_mode & 07777));
	return diag_errno(diags, -EPERM, where, 0,
			  "%sowned by uid %u, mode %04o: storaged reads configuration only from a root-owned directory that group and others cannot write; run 'chown root:root %s; chmod go-w %s'",
			  lead ?: "", (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777), dir, dir);
}

/* @name in layer @layer: a file, or a link to /dev/null that masks the
 * file of that name in the lower layers (the one link accepted, as in
 * systemd).  Any other link is an error: a link could name a file nobody
 * checked.  Returns: 1 masked, 0 a file, negative errno (with a
 * diagnostic). */
static int classify_dropin(const struct layers *l, size_t layer, const char *name, struct diag_list *diags)
{
	_cleanup_free_ char *file = concat(l->dir[layer], "/", name);
	char target[16];
	struct stat st;
	ssize_t n;

	if (!file)
		return -ENOMEM;
	if (fstatat(l->fd[layer], name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return diag_errno(diags, -errno, file, 0, "cannot stat: %s", strerror(errno));
	if (!S_ISLNK(st.st_mode))
		return 0;
	n = readlinkat(l->fd[layer], name, target, sizeof(target) - 1);
	if (n >= 0) {
		target[n] = '\0';
		if (strcmp(target, "/dev/null") == 0)
			return 1;
	}
	return diag_errno(diags, -ELOOP, file, 0,
			  "a symbolic link: storaged follows no link among its configuration files except one to /dev/null, which masks the file of that name in the lower directories; put the file itself there");
}

static int dropins_put(struct dropins *d, const char *name, size_t layer, bool masked)
{
	struct dropin *v;

	for (size_t i = 0; i < d->n; i++)
		if (strcmp(d->v[i].name, name) == 0) {
			d->v[i].layer = layer; /* a higher layer overrides */
			d->v[i].masked = masked;
			return 0;
		}
	v = reallocarray(d->v, d->n + 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	d->v = v;
	d->v[d->n] = (struct dropin){ strdup(name), layer, masked };
	if (!d->v[d->n].name)
		return -ENOMEM;
	d->n++;
	return 0;
}

/* The drop-ins in effect over all layers, in name order.  Every problem is
 * reported; the first one is returned. */
static int collect_dropins(struct layers *l, bool check_owner, struct dropins *d, struct diag_list *diags)
{
	int r = 0;

	for (size_t i = 0; i < l->n; i++) {
		struct dirent **names = NULL;
		int n;

		l->fd[i] = open_config_dir(l->dir[i], NULL, check_owner, diags);
		if (l->fd[i] == -ENOENT)
			continue;
		if (l->fd[i] < 0) {
			r = r ?: l->fd[i];
			continue;
		}
		n = scandirat(l->fd[i], ".", &names, is_conf_name, compare_names);
		if (n < 0)
			r = r ?: diag_errno(diags, -errno, l->dir[i], 0, "cannot read directory: %s",
					    strerror(errno));
		for (int j = 0; j < n; j++) {
			int k = classify_dropin(l, i, names[j]->d_name, diags);

			if (k >= 0)
				k = dropins_put(d, names[j]->d_name, i, k == 1);
			r = r ?: (k < 0 ? k : 0);
			free(names[j]);
		}
		free(names);
	}
	if (d->n > 1) /* qsort()'s base must not be NULL, even for no element */
		qsort(d->v, d->n, sizeof(*d->v), compare_dropins);
	return r;
}

/* The main file or the fstab (@max bytes at most), opened in its
 * directory (no link followed in any component, the directory checked as
 * the drop-in directories are).  @name_file: a refused directory's
 * diagnostic names @path too.  Returns: as input_read_at(); -ENOENT with
 * nothing appended when the file or its directory does not exist. */
static int read_main_file(const char *path, size_t max, bool name_file, bool check_owner, char **ret,
			  size_t *ret_len, struct diag_list *diags)
{
	const char *slash = strrchr(path, '/');
	/* a bare name is in the working directory: its messages and the
	 * chown/chmod they advise name that by its path, not as "." */
	_cleanup_free_ char *dir = slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path))
					 : getcwd(NULL, 0);
	_cleanup_close_ int dirfd = -EBADF;

	if (!dir)
		return -ENOMEM;
	dirfd = open_config_dir(dir, name_file ? path : NULL, check_owner, diags);
	if (dirfd < 0)
		return dirfd;
	return input_read_at(dirfd, slash ? slash + 1 : path, path, max, check_owner, ret, ret_len, diags);
}

int config_visit(const char *path, bool check_owner, config_visit_fn fn, void *userdata,
		 struct diag_list *diags)
{
	_cleanup_(layers_done) struct layers l = { 0 };
	_cleanup_(dropins_done) struct dropins d = { 0 };
	_cleanup_free_ char *buf = NULL;
	size_t len = 0;
	bool any;
	int r, k;

	r = layers_init(&l, path);
	if (r < 0)
		return r == -E2BIG ? diag_errno(diags, r, "STORAGED_CONFIG_DIRS", 0,
						"more than %d directories", MAX_LAYERS)
				   : r;
	r = read_main_file(path, CONFIG_FILE_MAX, false, check_owner, &buf, &len, diags);
	any = r != -ENOENT;
	if (r == 0)
		r = fn(userdata, path, buf, len);
	if (r == -ENOENT)
		r = 0;
	/* drop-ins are read even after an error, to report every problem at once */
	k = collect_dropins(&l, check_owner, &d, diags);
	r = r ?: k;
	for (size_t i = 0; i < d.n; i++) {
		_cleanup_free_ char *file = concat(l.dir[d.v[i].layer], "/", d.v[i].name);
		_cleanup_free_ char *dbuf = NULL;
		size_t dlen = 0;

		if (!file)
			return -ENOMEM;
		any = true;
		k = d.v[i].masked ? fn(userdata, file, NULL, 0)
				  : input_read_at(l.fd[d.v[i].layer], d.v[i].name, file, CONFIG_FILE_MAX,
						  check_owner, &dbuf, &dlen, diags);
		if (k == 0 && !d.v[i].masked)
			k = fn(userdata, file, dbuf, dlen);
		if (k == -ENOENT) /* removed since the listing */
			k = diag_errno(diags, k, file, 0, "cannot open: %s", strerror(ENOENT));
		r = r ?: k;
	}
	if (r == 0 && !any)
		return -ENOENT;
	return r;
}

struct parse_ctx {
	struct config *c;
	const char *main_path;
	struct diag_list *diags;
};

static int parse_one(void *userdata, const char *path, const char *buf, size_t len)
{
	struct parse_ctx *ctx = userdata;

	if (!buf)
		return 0; /* masked */
	if (path == ctx->main_path) {
		free(ctx->c->file);
		ctx->c->file = strdup(path);
		if (!ctx->c->file)
			return -ENOMEM;
	}
	return config_parse_buf(ctx->c, buf, len, path, ctx->diags);
}

int config_load(struct config *c, const char *path, bool check_owner, struct diag_list *diags)
{
	struct parse_ctx ctx = { c, path, diags };

	return config_visit(path, check_owner, parse_one, &ctx, diags);
}

static int load_fstab(struct fstab *ret, const char *path, char *const *select, bool check_owner,
		      bool all, struct diag_list *diags)
{
	_cleanup_free_ char *buf = NULL;
	size_t len = 0;
	int r;

	/* the config's checks: the fstab decides what root mounts as much */
	r = read_main_file(path, FSTAB_MAX_BYTES, true, check_owner, &buf, &len, diags);
	if (r == -ENOENT)
		return diag_errno(diags, r, path, 0,
				  "cannot read the fstab: %s; check -f/--fstab or the fstab= setting",
				  strerror(ENOENT));
	if (r < 0)
		return r;
	return all ? fstab_parse_buf_all(ret, buf, len, path, select, diags)
		   : fstab_parse_buf(ret, buf, len, path, select, diags);
}

int fstab_load(struct fstab *ret, const char *path, char *const *select, bool check_owner,
	       struct diag_list *diags)
{
	return load_fstab(ret, path, select, check_owner, false, diags);
}

int fstab_load_all(struct fstab *ret, const char *path, char *const *select, bool check_owner,
		   struct diag_list *diags)
{
	return load_fstab(ret, path, select, check_owner, true, diags);
}
