/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A stop's rescue (copy_opts.rescue): the area's version of each entry the
 * sync could not carry, kept on the directory's filesystem under names
 * that always fit, before the area is unmounted and its content gone.
 *  1. DIR/.storaged-rescue (made, or DIR's owner's there) and below it the
 *     new rescue directory, both 0700 and DIR's owner's;
 *  2. entry N (1, 2, ...): its complete copy in W moved there, else copied
 *     from the area (a file's data, a link's target, a directory's tree);
 *     metadata the filesystem refuses is left out: the data is what counts;
 *  3. "index": "N<tab>PATH" per entry (text_escape_controls());
 *  4. syncfs(): all of it on disk before the caller unmounts the area.
 * A failure moves what was written into W, which the caller removes.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "copy.h"
#include "copy_fd.h"
#include "copy_sync_internal.h"

/* a regular file's data into @dfd/@num, its owner, mode and times where
 * the filesystem takes them */
static int rescue_file(struct sync_ctx *c, int fd, const struct stat *st, int dfd, const char *num)
{
	struct timespec ts[2] = { st->st_atim, st->st_mtim };
	int in = copy_open_data(c->sys, fd), out, r;

	if (in < 0)
		return in;
	out = openat(dfd, num, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	r = out < 0 ? -errno : copy_data(in, out, st->st_size, c->buf, SYNC_BUF_SIZE, NULL, true);
	if (r == 0) {
		/* the data is what is kept: metadata as far as it goes */
		(void)!fchown(out, st->st_uid, st->st_gid);
		(void)!fchmod(out, st->st_mode & 07777);
		(void)!futimens(out, ts);
	}
	if (out >= 0)
		close(out);
	close(in);
	return r;
}

/* step 2 from the area: the entry @path (below the area root) into
 * @dfd/@num */
static int rescue_from_area(struct sync_ctx *c, const char *path, int dfd, const char *num)
{
	const char *slash = strrchr(path, '/');
	char *dir = slash ? strndup(path, (size_t)(slash - path)) : strdup("");
	char target[PATH_MAX];
	struct copy_result res;
	struct stat st;
	int pfd = dir ? copy_open_beneath(c->sys, c->areafd, dir) : -ENOMEM, fd = -1, sfd, nfd, r;
	ssize_t n;

	free(dir);
	if (pfd < 0)
		return pfd;
	fd = openat(pfd, slash ? slash + 1 : path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0)
		r = -errno;
	else if (S_ISREG(st.st_mode))
		r = rescue_file(c, fd, &st, dfd, num);
	else if (S_ISLNK(st.st_mode)) {
		n = readlinkat(fd, "", target, sizeof(target) - 1);
		r = n < 0 ? -errno : (target[n] = '\0', symlinkat(target, dfd, num) < 0 ? -errno : 0);
	} else if (S_ISDIR(st.st_mode)) {
		sfd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		nfd = sfd < 0 || mkdirat(dfd, num, 0700) < 0
			      ? -1
			      : openat(dfd, num, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		r = nfd < 0 ? -errno : copy_tree_fd(sfd, nfd, c->o, c->sys, &res);
		if (sfd >= 0)
			close(sfd);
		if (nfd >= 0)
			close(nfd);
	} else
		r = mknodat(dfd, num, st.st_mode & (S_IFMT | 07777), st.st_rdev) < 0 ? -errno : 0;
	if (fd >= 0)
		close(fd);
	close(pfd);
	return r;
}

/* steps 2 and 3 into the rescue directory @dfd, @owner's */
static int rescue_entries(struct sync_ctx *c, int dfd, const struct stat *owner)
{
	struct shared *sh = c->sh;
	char num[24], esc[PATH_MAX * 4];
	FILE *index;
	int fd, r = 0;

	fd = openat(dfd, "index", O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 || fchown(fd, owner->st_uid, owner->st_gid) < 0 || !(index = fdopen(fd, "w"))) {
		r = -errno;
		if (fd >= 0)
			close(fd);
		return r;
	}
	for (size_t i = 0; r == 0 && i < sh->nskipv; i++) {
		snprintf(num, sizeof(num), "%zu", i + 1);
		if (sh->skipv[i].w[0])
			r = renameat2(c->workfd, sh->skipv[i].w, dfd, num, RENAME_NOREPLACE) < 0 ? -errno : 0;
		else
			r = rescue_from_area(c, sh->skipv[i].path, dfd, num);
		if (r == 0 && fprintf(index, "%s\t%s\n", num, text_escape_controls(sh->skipv[i].path, esc, sizeof(esc))) < 0)
			r = -EIO;
	}
	if (fflush(index) != 0 && r == 0)
		r = -errno;
	if (fclose(index) != 0 && r == 0)
		r = -errno;
	return r;
}

int sync_rescue(struct sync_ctx *c)
{
	struct stat owner;
	int pfd = -1, dfd = -1, r;

	if (fstat(c->lowerfd, &owner) < 0)
		return -errno;
	if ((pfd = r = mkdir_owned_at(c->lowerfd, COPY_RESCUE_DIR, &owner, true)) >= 0 &&
	    (dfd = r = mkdir_owned_at(pfd, c->o->rescue, &owner, false)) >= 0)
		r = rescue_entries(c, dfd, &owner);
	if (r == 0 && syncfs(c->lowerfd) < 0)
		r = -errno;
	if (r < 0 && dfd >= 0) /* into W: removed with it */
		renameat2(pfd, c->o->rescue, c->workfd, "rescue", RENAME_NOREPLACE);
	if (r < 0 && pfd >= 0)
		unlinkat(c->lowerfd, COPY_RESCUE_DIR, AT_REMOVEDIR); /* when empty */
	if (dfd >= 0)
		close(dfd);
	if (pfd >= 0)
		close(pfd);
	return r;
}
