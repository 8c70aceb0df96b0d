/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What is in and what holds an area's directory: the survey that sizes an
 * area (bytes and inodes, hard links once), the subvolumes below it, and
 * the scan of /proc/<pid>/fd for processes with files open, or their
 * working directory, under it.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "area_internal.h"
#include "shared/dirstack.h"
#include "shared/units.h"

struct survey_link {
	dev_t dev;
	ino_t ino;
	uint64_t bytes;
};

struct survey_walk {
	struct area_survey *s;
	dev_t dev;
	struct survey_link *links; /* inodes with nlink > 1, once per name */
	size_t n_links, cap_links;
};

static int survey_add_link(struct survey_walk *w, const struct stat *st)
{
	if (w->n_links == w->cap_links) {
		size_t cap = w->cap_links ? w->cap_links * 2 : 256;
		void *nv = realloc(w->links, cap * sizeof(*w->links));

		if (!nv)
			return -ENOMEM;
		w->links = nv;
		w->cap_links = cap;
	}
	w->links[w->n_links].dev = st->st_dev;
	w->links[w->n_links].ino = st->st_ino;
	w->links[w->n_links++].bytes = (uint64_t)st->st_blocks * 512;
	return 0;
}

/* directory levels whose descriptor the survey holds (storaged's own
 * descriptors are few: a deeper tree is walked by reopening, dirstack.h) */
#define SURVEY_HELD_LEVELS 64

/* counts @name of the directory @dirfd; returns 1 when it is a directory
 * of the surveyed filesystem to walk (opened into *@ret_fd) */
static int survey_entry(struct survey_walk *w, int dirfd, const char *name, int *ret_fd)
{
	struct stat st;

	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : -errno; /* removed since it was listed */
	if (!S_ISDIR(st.st_mode) && st.st_nlink > 1)
		return survey_add_link(w, &st);
	w->s->inodes++;
	w->s->bytes += (uint64_t)st.st_blocks * 512;
	/* another device: a mount, or a btrfs subvolume; both are carried
	 * onto the area (area_carry.c), neither takes room in it */
	if (!S_ISDIR(st.st_mode) || st.st_dev != w->dev)
		return 0;
	*ret_fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	return *ret_fd < 0 ? -errno : 1;
}

/* walks the tree below the directory @fd (taken), depth first, without
 * recursion and with a bounded number of descriptors */
static int survey_tree(struct survey_walk *w, int fd)
{
	struct dirstack s;
	const char *name;
	int r, sub;

	dirstack_init(&s, 1, 0, SURVEY_HELD_LEVELS);
	r = dirstack_push(&s, &fd, "");
	if (r == 0)
		r = dirstack_list(&s, false);
	while (r == 0 && s.depth > 0) {
		if (!(name = dirstack_next(&s)))
			r = dirstack_pop(&s);
		else if ((r = survey_entry(w, dirstack_top(&s)->fd[0], name, &sub)) > 0 &&
			 (r = dirstack_push(&s, &sub, name)) == 0)
			r = dirstack_list(&s, false);
	}
	dirstack_free(&s);
	return r;
}

static int link_cmp(const void *x, const void *y)
{
	const struct survey_link *a = x, *b = y;

	if (a->dev != b->dev)
		return a->dev < b->dev ? -1 : 1;
	return a->ino < b->ino ? -1 : a->ino > b->ino;
}

int area_survey_root(const char *path, struct area_survey *ret)
{
	struct stat st;
	int fd = area_open_nofollow(path, O_RDONLY | O_DIRECTORY), r = 0;

	if (fd < 0 || fstat(fd, &st) < 0)
		r = fd < 0 ? fd : -errno;
	if (fd >= 0)
		close(fd);
	*ret = (struct area_survey){ .inodes = r ? 0 : 1, .bytes = r ? 0 : (uint64_t)st.st_blocks * 512,
				     .valid = r == 0, .error = r };
	return r;
}

int area_survey_path(const char *path, struct area_survey *ret)
{
	struct area_survey s = { .inodes = 1 };
	struct survey_walk w = { .s = &s };
	struct stat st;
	int fd, r;

	fd = area_open_nofollow(path, O_RDONLY | O_DIRECTORY);
	if (fd < 0 || fstat(fd, &st) < 0) {
		r = fd < 0 ? fd : -errno;
		goto out;
	}
	w.dev = st.st_dev;
	s.bytes = (uint64_t)st.st_blocks * 512;
	r = survey_tree(&w, fd);
	if (r == 0 && w.n_links)
		qsort(w.links, w.n_links, sizeof(*w.links), link_cmp);
	for (size_t i = 0; r == 0 && i < w.n_links; i++)
		if (i == 0 || link_cmp(&w.links[i], &w.links[i - 1]) != 0) {
			s.inodes++;
			s.bytes += w.links[i].bytes;
		}
out:
	free(w.links);
	s.valid = r == 0;
	s.error = r;
	if (r < 0)
		s.bytes = s.inodes = 0;
	*ret = s;
	return r;
}

/* ------------------------------------------------------------ subvolumes */

enum { SUBVOL_SKIP, SUBVOL_ENTER, SUBVOL_FOUND };

/* What the entry @name of @dirfd is to the tree of @root, told from the
 * inode opened (nothing is looked up twice): SUBVOL_ENTER, a directory of
 * the tree (opened to read into *@ret_fd); SUBVOL_FOUND, a directory of
 * the same mount on another device (O_PATH into *@ret_fd); SUBVOL_SKIP,
 * anything else: not a directory, gone, or another mount, which is the
 * mount table's (area_submounts()); or negative errno. */
static int subvol_entry(int dirfd, const char *name, const struct statx *root, int *ret_fd)
{
	_cleanup_close_ int fd = openat(dirfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct statx x;

	if (fd < 0)
		return errno == ENOENT || errno == ENOTDIR || errno == ELOOP ? SUBVOL_SKIP : -errno;
	if (statx(fd, "", AT_EMPTY_PATH | AT_NO_AUTOMOUNT, STATX_TYPE | STATX_MNT_ID, &x) < 0)
		return -errno;
	if ((x.stx_mask & root->stx_mask & STATX_MNT_ID) && x.stx_mnt_id != root->stx_mnt_id)
		return SUBVOL_SKIP;
	if (x.stx_dev_major != root->stx_dev_major || x.stx_dev_minor != root->stx_dev_minor) {
		*ret_fd = TAKE_FD(fd);
		return SUBVOL_FOUND;
	}
	*ret_fd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return *ret_fd < 0 ? -errno : SUBVOL_ENTER;
}

/* @name of the walk's current level, found a subvolume: handed to @found */
static int subvol_found(const struct dirstack *s, const char *name, int fd, area_subvol_fn found,
			void *userdata)
{
	_cleanup_free_ char *rel = dirstack_path_dup(s, "", name);

	return rel ? found(userdata, fd, rel) : -ENOMEM;
}

int area_subvolumes(int rootfd, area_subvol_fn found, void *userdata)
{
	struct dirstack s;
	struct statx root;
	const char *name;
	int r, fd;

	if (statx(rootfd, "", AT_EMPTY_PATH | AT_NO_AUTOMOUNT, STATX_TYPE | STATX_MNT_ID, &root) < 0)
		return -errno;
	fd = openat(rootfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	dirstack_init(&s, 1, 0, SURVEY_HELD_LEVELS);
	r = dirstack_push(&s, &fd, "");
	if (r == 0)
		r = dirstack_list_dirs(&s);
	while (r == 0 && s.depth > 0) {
		if (!(name = dirstack_next(&s))) {
			r = dirstack_pop(&s);
			continue;
		}
		r = subvol_entry(dirstack_top(&s)->fd[0], name, &root, &fd);
		if (r == SUBVOL_ENTER && (r = dirstack_push(&s, &fd, name)) == 0)
			r = dirstack_list_dirs(&s);
		else if (r == SUBVOL_FOUND) {
			r = subvol_found(&s, name, fd, found, userdata);
			close(fd);
		}
	}
	dirstack_free(&s);
	return r;
}

/* ------------------------------------------------------------ open files */

static bool link_is_below(const char *link, const char *path)
{
	size_t n = strlen(path);

	return strncmp(link, path, n) == 0 && (link[n] == '/' || link[n] == '\0');
}

static bool pid_holds_path(int pidfd, const char *path)
{
	char link[PATH_MAX];
	struct dirent *de;
	bool found = false;
	int fd = openat(pidfd, "fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd < 0 ? NULL : fdopendir(fd);
	ssize_t n;

	if (!d) {
		safe_close(fd);
		return false;
	}
	while (!found && (de = readdir(d))) {
		n = readlinkat(dirfd(d), de->d_name, link, sizeof(link) - 1);
		if (n <= 0)
			continue;
		link[n] = '\0';
		found = link_is_below(link, path);
	}
	closedir(d);
	return found;
}

/* its working directory is @path or below: once the area is bound over
 * @path it works on in the covered directory, which nobody else sees */
static bool pid_cwd_below(int pidfd, const char *path)
{
	char link[PATH_MAX];
	ssize_t n = readlinkat(pidfd, "cwd", link, sizeof(link) - 1);

	if (n <= 0)
		return false;
	link[n] = '\0';
	return link_is_below(link, path);
}

void area_warn_open_files(const char *name, const char *path, const char *effect, struct diag_list *m)
{
	DIR *proc = opendir("/proc");
	struct dirent *de;
	char comm[64];

	if (!proc)
		return;
	while ((de = readdir(proc))) {
		uint64_t pid;
		bool cwd;
		_cleanup_close_ int pidfd = -EBADF;

		if (units_parse_uint(de->d_name, INT32_MAX, &pid) < 0 || pid == (uint64_t)getpid())
			continue;
		pidfd = openat(dirfd(proc), de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (pidfd < 0)
			continue;
		cwd = pid_cwd_below(pidfd, path);
		if (cwd || pid_holds_path(pidfd, path)) {
			_cleanup_close_ int cfd = openat(pidfd, "comm", O_RDONLY | O_CLOEXEC);
			ssize_t n = cfd < 0 ? -1 : read(cfd, comm, sizeof(comm) - 1);

			comm[n > 0 ? n : 0] = '\0';
			comm[strcspn(comm, "\n")] = '\0';
			diag_warning(m, NULL, 0,
				     "area '%s': pid %s (%s) has %s under %s: %s", name, de->d_name, comm,
				     cwd ? "its working directory" : "files open", path, effect);
		}
	}
	closedir(proc);
}
