/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The entries a sync back kept in the directory's version (copy.h,
 * COPY_SYNC_KEPT_XATTR): changed there while the area covered it (through
 * another path to it, or while uncovered) and not in the area, or changed
 * on both sides.  The directory's baseline moves past them once the sync
 * is committed, so by their times alone the next sync would take the
 * area's version as the newer one and replace (or delete) the directory's:
 * the list keeps them the directory's until the area is torn down.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/xattr.h>

#include "copy.h"
#include "copy_sync_internal.h"

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int sync_kept_read(struct shared *sh, int areafd)
{
	ssize_t n = fgetxattr(areafd, COPY_SYNC_KEPT_XATTR, NULL, 0);
	char *buf, *p;

	if (n <= 0)
		return n < 0 && errno != ENODATA && errno != ENOTSUP ? -errno : 0;
	if (!(buf = malloc(n + 1)))
		return -ENOMEM;
	n = fgetxattr(areafd, COPY_SYNC_KEPT_XATTR, buf, n);
	if (n < 0) {
		free(buf);
		return -errno;
	}
	buf[n] = '\0';
	for (p = buf; p < buf + n; p += strlen(p) + 1) {
		if (!*p)
			continue;
		if (sync_grow(&sh->kept_old, &sh->kept_oldcap, sh->nkept_old, sizeof(char *)) < 0) {
			free(buf);
			return -ENOMEM;
		}
		sh->kept_old[sh->nkept_old++] = p;
	}
	sh->kept_buf = buf;
	if (sh->nkept_old) /* qsort() of NULL is undefined, even of none */
		qsort(sh->kept_old, sh->nkept_old, sizeof(char *), by_name);
	return 0;
}

bool sync_kept_has(const struct sync_ctx *c, const char *name)
{
	const struct shared *sh = c->sh;
	char *key;
	bool found;

	if (!sh->nkept_old)
		return false;
	key = dirstack_path_dup(&c->s, c->basename, name);
	/* without memory: as if not kept (the times decide, as before) */
	found = key && bsearch(&key, sh->kept_old, sh->nkept_old, sizeof(char *), by_name);
	free(key);
	return found;
}

void sync_kept_add(struct sync_ctx *c, const char *name)
{
	struct shared *sh = c->sh;
	char *key = dirstack_path_dup(&c->s, c->basename, name);

	pthread_mutex_lock(&sh->lock);
	if (!key || sync_grow(&sh->kept_new, &sh->kept_newcap, sh->nkept_new, sizeof(char *)) < 0) {
		sh->kept_lost = true;
		free(key);
	} else
		sh->kept_new[sh->nkept_new++] = key;
	pthread_mutex_unlock(&sh->lock);
}

int sync_kept_write(struct shared *sh, int areafd)
{
	size_t n = sh->nkept_old + sh->nkept_new, len = 0;
	char **all, *buf, *p;
	int r = 0;

	if (sh->kept_lost)
		return -ENOMEM;
	if (!sh->nkept_new)
		return 0; /* the list stands as it was */
	if (!(all = malloc(n * sizeof(*all))))
		return -ENOMEM;
	if (sh->nkept_old) /* memcpy() from NULL is undefined, even of 0 bytes */
		memcpy(all, sh->kept_old, sh->nkept_old * sizeof(*all));
	memcpy(all + sh->nkept_old, sh->kept_new, sh->nkept_new * sizeof(*all));
	qsort(all, n, sizeof(*all), by_name);
	for (size_t i = 0; i < n; i++)
		len += strlen(all[i]) + 1;
	if (!(p = buf = malloc(len))) {
		free(all);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		if (i == 0 || strcmp(all[i], all[i - 1]) != 0)
			p = stpcpy(p, all[i]) + 1;
	if (fsetxattr(areafd, COPY_SYNC_KEPT_XATTR, buf, (size_t)(p - buf), 0) < 0)
		r = -errno;
	free(buf);
	free(all);
	return r;
}

void sync_kept_done(struct shared *sh)
{
	for (size_t i = 0; i < sh->nkept_new; i++)
		free(sh->kept_new[i]);
	free(sh->kept_new);
	free(sh->kept_old);
	free(sh->kept_buf);
}
