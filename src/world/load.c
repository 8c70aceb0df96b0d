/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Reading the pass's sources from disk: storaged.conf with its drop-ins,
 * and the fstab.  The parsers (parse/) take buffers and touch nothing;
 * the opening, the drop-in directory's listing and the owner checks are
 * here, beside the loader that calls them (world.c).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "load.h"
#include "parse/config.h"
#include "parse/fstab.h"
#include "shared/input.h"
#include "shared/util.h"

#define CONFIG_FILE_MAX (1024 * 1024) /* bytes per file */
#define FSTAB_MAX_BYTES (4u << 20)

static int load_file_at(struct config *c, int dirfd, const char *name, const char *path,
			bool check_owner, bool missing_ok, struct diag_list *diags)
{
	_cleanup_free_ char *buf = NULL;
	size_t len = 0;
	int r;

	r = input_read_at(dirfd, name, path, CONFIG_FILE_MAX, check_owner, &buf, &len, diags);
	if (r == -ENOENT && !missing_ok)
		return diag_errno(diags, r, path, 0, "cannot open: %s", strerror(ENOENT));
	if (r < 0)
		return r;
	return config_parse_buf(c, buf, len, path, diags);
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

static char *concat(const char *a, const char *sep, const char *b)
{
	size_t n = strlen(a) + strlen(sep) + strlen(b) + 1;
	char *s = malloc(n);

	if (s)
		snprintf(s, n, "%s%s%s", a, sep, b);
	return s;
}

/* The drop-in directory decides what root mounts, as the files in it do:
 * it is opened without following a link, and with @check_owner it must be
 * root's and closed to group and others (anyone who can write it can add
 * a file).  Returns: the directory's descriptor; -ENOENT (none); negative
 * errno (with a diagnostic). */
static int open_dropin_dir(const char *dir, bool check_owner, struct diag_list *diags)
{
	struct stat st;
	_cleanup_close_ int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0 && errno == ENOENT)
		return -ENOENT;
	if (fd < 0 && (errno == ENOTDIR || errno == ELOOP))
		return diag_errno(diags, -ENOTDIR, dir, 0,
				  "not a directory, or a symbolic link: storaged reads drop-ins only from a directory of its own");
	if (fd < 0)
		return diag_errno(diags, -errno, dir, 0, "cannot open directory: %s", strerror(errno));
	if (fstat(fd, &st) < 0 || (check_owner && (st.st_uid != 0 || (st.st_mode & (S_IWGRP | S_IWOTH)))))
		return diag_errno(diags, -EPERM, dir, 0,
				  "owned by uid %u, mode %04o: storaged reads drop-ins only from a root-owned directory that group and others cannot write; run 'chown root:root %s; chmod go-w %s'",
				  (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777), dir, dir);
	return TAKE_FD(fd);
}

static int load_dropins(struct config *c, const char *path, bool check_owner, struct diag_list *diags)
{
	_cleanup_free_ char *dir = concat(path, ".d", "");
	struct dirent **names = NULL;
	_cleanup_close_ int dirfd = -EBADF;
	int n, r = 0;

	if (!dir)
		return -ENOMEM;
	dirfd = open_dropin_dir(dir, check_owner, diags);
	if (dirfd == -ENOENT)
		return 0;
	if (dirfd < 0)
		return dirfd;
	n = scandirat(dirfd, ".", &names, is_conf_name, compare_names);
	if (n < 0)
		return diag_errno(diags, -errno, dir, 0, "cannot read directory: %s", strerror(errno));
	for (int i = 0; i < n; i++) {
		_cleanup_free_ char *file = concat(dir, "/", names[i]->d_name);
		int k = file ? load_file_at(c, dirfd, names[i]->d_name, file, check_owner, false, diags)
			     : -ENOMEM;

		if (k < 0 && r == 0)
			r = k; /* the first error is returned; the rest are still read */
		free(names[i]);
	}
	free(names);
	return r;
}

int config_load(struct config *c, const char *path, bool check_owner, struct diag_list *diags)
{
	int r, k;

	r = load_file_at(c, AT_FDCWD, path, path, check_owner, true, diags);
	if (r == -ENOENT || r == -ENOMEM)
		return r;
	free(c->file);
	c->file = strdup(path);
	if (!c->file)
		return -ENOMEM;
	/* drop-ins are read even after an error, to report every problem at once */
	k = load_dropins(c, path, check_owner, diags);
	return r < 0 ? r : k;
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
