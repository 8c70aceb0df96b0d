/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A walk's stack with a bounded number of descriptors; see dirstack.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dirstack.h"
#include "util.h"

#define DIR_FLAGS (O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)

void dirstack_init(struct dirstack *s, unsigned sides, size_t extra_size, unsigned cap)
{
	*s = (struct dirstack){ .sides = sides > DIRSTACK_SIDES ? DIRSTACK_SIDES : sides,
				.cap = cap < 2 ? 2 : cap,
				.extra_size = extra_size };
}

static void close_fds(struct dirstack *s, struct dirstack_frame *f)
{
	for (unsigned i = 0; i < s->sides; i++)
		if (f->fd[i] >= 0) {
			close(f->fd[i]);
			f->fd[i] = -1;
		}
}

static int frame_grow(struct dirstack *s)
{
	size_t n = s->alloc ? s->alloc * 2 : 64;
	struct dirstack_frame *f;

	if (s->depth < s->alloc)
		return 0;
	f = realloc(s->f, n * sizeof(*f));
	if (!f)
		return -ENOMEM;
	memset(f + s->alloc, 0, (n - s->alloc) * sizeof(*f));
	s->f = f;
	s->alloc = n;
	return 0;
}

int dirstack_push(struct dirstack *s, const int *fds, const char *name)
{
	struct dirstack_frame *f;
	void *extra;
	struct stat st;
	int r = frame_grow(s);

	f = r < 0 ? NULL : &s->f[s->depth];
	if (f && s->extra_size && !f->extra && !(f->extra = malloc(s->extra_size)))
		r = -ENOMEM;
	extra = f ? f->extra : NULL;
	if (f)
		*f = (struct dirstack_frame){ .fd = { -1, -1 }, .extra = extra, .name = strdup(name) };
	if (r == 0 && !f->name)
		r = -ENOMEM;
	for (unsigned i = 0; i < s->sides; i++) {
		if (r == 0 && fstat(fds[i], &st) < 0)
			r = -errno;
		if (r == 0) {
			f->fd[i] = fds[i];
			f->dev[i] = st.st_dev;
			f->ino[i] = st.st_ino;
		} else if (fds[i] >= 0)
			close(fds[i]);
	}
	if (r < 0) {
		if (f) {
			for (unsigned i = 0; i < s->sides; i++)
				f->fd[i] = -1;
			free(f->name);
			f->name = NULL;
		}
		return r;
	}
	if (extra)
		memset(extra, 0, s->extra_size);
	s->depth++;
	/* the base and the @cap deepest levels keep their descriptors */
	if (s->depth > s->cap + 1)
		close_fds(s, &s->f[s->depth - 1 - s->cap]);
	return 0;
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* appends @name to the frame's blob; offsets stand in for the pointers
 * until the blob stops moving */
static int blob_add(char **blob, size_t *len, size_t *cap, const char *name)
{
	size_t n = strlen(name) + 1;

	if (grow_array(blob, cap, *len + n - 1, 1) < 0) /* room up to *len + n */
		return -ENOMEM;
	memcpy(*blob + *len, name, n);
	*len += n;
	return 0;
}

/* the names of the top level's directory; only those readdir() says may
 * be directories when @dirs_only */
static int list_names(struct dirstack *s, bool sorted, bool dirs_only)
{
	struct dirstack_frame *f = dirstack_top(s);
	int fd = fcntl(f->fd[0], F_DUPFD_CLOEXEC, 3);
	DIR *d = fd < 0 ? NULL : fdopendir(fd);
	size_t len = 0, cap = 0, n = 0;
	struct dirent *de;
	int r = 0;

	if (!d) {
		r = -errno;
		if (fd >= 0)
			close(fd);
		return r;
	}
	rewinddir(d); /* the offset is shared with the frame's descriptor */
	while (r == 0 && (errno = 0, de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (dirs_only && de->d_type != DT_DIR && de->d_type != DT_UNKNOWN)
			continue;
		if ((r = blob_add(&f->blob, &len, &cap, de->d_name)) == 0)
			n++;
	}
	if (r == 0 && errno)
		r = -errno;
	closedir(d);
	if (r == 0 && n && !(f->names = malloc(n * sizeof(*f->names))))
		r = -ENOMEM;
	for (size_t i = 0, off = 0; r == 0 && i < n; i++) {
		f->names[i] = f->blob + off;
		off += strlen(f->names[i]) + 1;
	}
	if (r < 0) {
		free(f->blob);
		f->blob = NULL;
		return r;
	}
	f->nnames = n;
	if (sorted && n)
		qsort(f->names, n, sizeof(*f->names), cmp_name);
	return 0;
}

int dirstack_list(struct dirstack *s, bool sorted)
{
	return list_names(s, sorted, false);
}

int dirstack_list_dirs(struct dirstack *s)
{
	return list_names(s, false, true);
}

const char *dirstack_next(struct dirstack *s)
{
	struct dirstack_frame *f = dirstack_top(s);

	return f->next < f->nnames ? f->names[f->next++] : NULL;
}

bool dirstack_has(const struct dirstack *s, const char *name)
{
	const struct dirstack_frame *f = dirstack_top(s);

	return f->nnames && bsearch(&name, f->names, f->nnames, sizeof(*f->names), cmp_name);
}

/* @fd (taken) is side @side of frame @f if it is the same inode */
static int take_checked(struct dirstack_frame *f, unsigned side, int fd)
{
	struct stat st;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || st.st_dev != f->dev[side] || st.st_ino != f->ino[side]) {
		close(fd);
		return -ESTALE;
	}
	f->fd[side] = fd;
	return 0;
}

/* side @side of the released level @d, one name at a time from its
 * nearest held ancestor, each level checked */
static int reopen_from_ancestor(struct dirstack *s, size_t d, unsigned side)
{
	size_t a = d;
	int fd = -1, r = 0;

	while (a > 0 && s->f[a].fd[side] < 0)
		a--;
	if (s->f[a].fd[side] < 0)
		return -ESTALE;
	for (size_t k = a + 1; r == 0 && k <= d; k++) {
		int parent = k == a + 1 ? s->f[a].fd[side] : fd;

		r = take_checked(&s->f[k], side, openat(parent, s->f[k].name, DIR_FLAGS));
		if (k > a + 1)
			close(fd);
		fd = r == 0 ? s->f[k].fd[side] : -1;
		if (r == 0 && k < d)
			s->f[k].fd[side] = -1; /* only @d is held again */
	}
	return r;
}

/* makes the levels @d's descriptors held; level @d + 1 is still open */
static int reopen(struct dirstack *s, size_t d)
{
	struct dirstack_frame *f = &s->f[d], *child = &s->f[d + 1];
	int r = 0;

	for (unsigned i = 0; r == 0 && i < s->sides; i++) {
		if (f->fd[i] >= 0)
			continue;
		if (child->fd[i] < 0 || take_checked(f, i, openat(child->fd[i], "..", DIR_FLAGS)) < 0)
			r = reopen_from_ancestor(s, d, i);
	}
	if (r < 0)
		close_fds(s, f);
	return r;
}

int dirstack_pop(struct dirstack *s)
{
	struct dirstack_frame *f = dirstack_top(s);
	int r = 0;

	if (s->depth > 1)
		r = reopen(s, s->depth - 2);
	close_fds(s, f);
	free(f->name);
	free(f->blob);
	free(f->names);
	f->name = f->blob = NULL;
	f->names = NULL;
	s->depth--;
	return r;
}

char *dirstack_path(const struct dirstack *s, const char *base, const char *name, char *buf,
		    size_t len)
{
	size_t end = len - 1, n;
	bool cut = false;

	buf[end] = '\0';
	/* from the last component back, as much as fits */
	for (size_t i = s->depth + 1; i-- > 0 && !cut;) {
		const char *c = i == s->depth ? name : i == 0 ? base : s->f[i].name;

		if (!c || !*c)
			continue;
		n = strlen(c) + (end < len - 1);
		if (n + 4 > end) { /* room left for ".../" */
			cut = true;
			break;
		}
		if (end < len - 1)
			buf[--end] = '/';
		end -= strlen(c);
		memcpy(buf + end, c, strlen(c));
	}
	if (cut && end < len - 1)
		buf[--end] = '/';
	if (cut) {
		end -= 3;
		memcpy(buf + end, "...", 3);
	}
	memmove(buf, buf + end, len - end);
	return buf;
}

char *dirstack_path_dup(const struct dirstack *s, const char *base, const char *name)
{
	size_t len = strlen(base) + (name ? strlen(name) : 0) + 2;
	char *buf;

	for (size_t i = 1; i < s->depth; i++)
		len += strlen(s->f[i].name) + 1;
	buf = malloc(len + 4);
	return buf ? dirstack_path(s, base, name, buf, len + 4) : NULL;
}

void dirstack_free(struct dirstack *s)
{
	while (s->depth > 0) {
		struct dirstack_frame *f = dirstack_top(s);

		close_fds(s, f);
		free(f->name);
		free(f->blob);
		free(f->names);
		s->depth--;
	}
	for (size_t i = 0; i < s->alloc; i++)
		free(s->f[i].extra);
	free(s->f);
	s->f = NULL;
	s->alloc = 0;
}
