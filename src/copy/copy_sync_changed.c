/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * "Changed since the last sync" where an entry's times cannot tell
 * (copy_sync.c, unchanged()): a file mapped shared.  For a filesystem
 * without page_mkwrite (tmpfs) the kernel moves the times at the first
 * write fault of each page of a mapping only (mm/memory.c,
 * fault_dirty_shared_page()); the page then stays writable, and later
 * writes through it move nothing, nor the size.  So a write moves no time
 * only through a mapping that had written the page before: one that was
 * there when a sync read the file.  The mappings of the area's files are
 * read from /proc/PID/maps at each sync and the set is kept on the area's
 * root (COPY_SYNC_MAPPED_XATTR) for the next one: a file mapped at one
 * sync is compared at that one and at the next, which sees the writes of
 * a mapping gone by then.  The compare is by content: the area's entry
 * against the directory's (data, link target, xattrs), read.
 * (A change in the clock tick the baseline was read in needs no compare:
 * the baseline is past every write before the sync began,
 * copy_sync_base_past_writes().)
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "copy_sync_internal.h"

static int by_ino(const void *a, const void *b)
{
	ino_t x = *(const ino_t *)a, y = *(const ino_t *)b;

	return x < y ? -1 : x > y;
}

static int mapped_add(struct mapped_set *m, ino_t ino)
{
	if (grow_array(&m->ino, &m->cap, m->n, sizeof(*m->ino)) < 0)
		return -ENOMEM;
	m->ino[m->n++] = ino;
	return 0;
}

/* the shared mappings of one process's maps (@f) of files on @dev,
 * whose field in maps is @devfield */
static int maps_read(FILE *f, dev_t dev, const char *devfield, struct mapped_set *m)
{
	char *line = NULL, perms[8];
	unsigned maj, min;
	uintmax_t ino;
	size_t len = 0;
	int r = 0;

	/* "start-end perms offset major:minor inode path" (proc(5)); a
	 * browser maps thousands of files: only lines of this device are
	 * parsed */
	while (r == 0 && getline(&line, &len, f) > 0)
		if (strstr(line, devfield) &&
		    sscanf(line, "%*s %7s %*s %x:%x %ju", perms, &maj, &min, &ino) == 4 && perms[3] == 's' &&
		    ino && makedev(maj, min) == dev)
			r = mapped_add(m, (ino_t)ino);
	free(line);
	return r;
}

static int mapped_scan(struct mapped_set *m, dev_t dev)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	char devfield[32];
	int r = 0;

	if (!d)
		return -errno;
	/* as the kernel prints it: show_map_vma(), "%02x:%02x" */
	snprintf(devfield, sizeof(devfield), " %02x:%02x ", major(dev), minor(dev));
	while (r == 0 && (de = readdir(d))) {
		char path[NAME_MAX + 8];
		FILE *f;
		int fd;

		if (strspn(de->d_name, "0123456789") != strlen(de->d_name))
			continue;
		snprintf(path, sizeof(path), "%s/maps", de->d_name);
		fd = openat(dirfd(d), path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue; /* gone meanwhile; a kernel thread has none to read */
		if (!(f = fdopen(fd, "re"))) {
			close(fd);
			r = -ENOMEM;
			break;
		}
		r = maps_read(f, dev, devfield, m);
		fclose(f);
	}
	closedir(d);
	return r;
}

static int mapped_read(struct mapped_set *m, int areafd)
{
	char *buf, *p, *end;
	ssize_t n = fgetxattr(areafd, COPY_SYNC_MAPPED_XATTR, NULL, 0);
	int r = 0;

	if (n <= 0)
		return n < 0 && errno != ENODATA && errno != EOPNOTSUPP ? -errno : 0;
	if (!(buf = malloc((size_t)n + 1)))
		return -ENOMEM;
	n = fgetxattr(areafd, COPY_SYNC_MAPPED_XATTR, buf, (size_t)n);
	if (n < 0)
		r = -errno;
	for (p = buf, buf[n < 0 ? 0 : n] = '\0'; r == 0 && *p; p = end) {
		uintmax_t ino = strtoumax(p, &end, 10);

		if (end == p)
			break; /* malformed: what was read stands */
		r = mapped_add(m, (ino_t)ino);
		end += strspn(end, " ");
	}
	free(buf);
	return r;
}

static void mapped_sort(struct mapped_set *m)
{
	if (m->n) /* qsort() of NULL is undefined, even of none */
		qsort(m->ino, m->n, sizeof(*m->ino), by_ino);
}

int sync_mapped_setup(struct shared *sh, int areafd)
{
	struct stat st;
	int r;

	if (fstat(areafd, &st) < 0)
		return -errno;
	if ((r = mapped_scan(&sh->mapped_now, st.st_dev)) < 0 || (r = mapped_read(&sh->mapped, areafd)) < 0)
		return r;
	for (size_t i = 0; r == 0 && i < sh->mapped_now.n; i++)
		r = mapped_add(&sh->mapped, sh->mapped_now.ino[i]);
	mapped_sort(&sh->mapped_now);
	mapped_sort(&sh->mapped);
	return r;
}

bool sync_mapped_has(const struct mapped_set *m, ino_t ino)
{
	return m->n && bsearch(&ino, m->ino, m->n, sizeof(*m->ino), by_ino);
}

int sync_mapped_write(const struct mapped_set *m, int areafd)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int r = 0;

	if (!f)
		return -ENOMEM;
	for (size_t i = 0; i < m->n; i++)
		if (i == 0 || m->ino[i] != m->ino[i - 1])
			fprintf(f, "%s%ju", i ? " " : "", (uintmax_t)m->ino[i]);
	if (fclose(f) != 0)
		r = -ENOMEM;
	else if (!len)
		r = fremovexattr(areafd, COPY_SYNC_MAPPED_XATTR) < 0 && errno != ENODATA ? -errno : 0;
	else if (fsetxattr(areafd, COPY_SYNC_MAPPED_XATTR, buf, len, 0) < 0)
		r = -errno;
	free(buf);
	return r;
}

void sync_mapped_done(struct mapped_set *m)
{
	free(m->ino);
	*m = (struct mapped_set){ 0 };
}

/* whether the open files @a and @b hold the same bytes (of @size) */
static int same_data(int a, int b, off_t size)
{
	enum { CHUNK = 64 * 1024 };
	char *x = malloc(CHUNK), *y = malloc(CHUNK);
	off_t off = 0;
	int r = 1;

	if (!x || !y)
		r = -ENOMEM;
	while (r == 1 && off < size) {
		size_t want = size - off < CHUNK ? (size_t)(size - off) : CHUNK;
		ssize_t n = pread(a, x, want, off), k = n > 0 ? pread(b, y, (size_t)n, off) : 0;

		if (n < 0 || k < 0)
			r = -errno;
		else if (n == 0 || k != n || memcmp(x, y, (size_t)n))
			r = 0; /* shorter than its size says: changed meanwhile */
		else
			off += n;
	}
	free(x);
	free(y);
	return r;
}

/* whether @a and @b hold the same xattrs, in whatever order each
 * filesystem lists them */
static bool same_xattrs(const struct copy_xattrs *a, const struct copy_xattrs *b)
{
	struct copy_xattr_iter it = copy_xattr_iter_of(a);
	const char *name, *val, *other;
	uint32_t n, k;

	if (a->len != b->len)
		return false;
	while (copy_xattrs_next(&it, &name, &val, &n))
		if (!(other = copy_xattrs_find(b, name, &k)) || k != n || memcmp(val, other, n))
			return false;
	return true;
}

/* the regular file @name of @dirfd, opened to be read (the atime stays),
 * checked to be @st's inode */
static int open_same(int dirfd, const char *name, const struct stat *st)
{
	struct stat now;
	int fd = openat(dirfd, name, O_RDONLY | O_NOATIME | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);

	if (fd < 0)
		return -errno;
	if (fstat(fd, &now) < 0 || now.st_ino != st->st_ino || now.st_dev != st->st_dev) {
		close(fd);
		return -ESTALE; /* replaced since it was looked at */
	}
	return fd;
}

int sync_same_content(int afd, int lfd, const char *name, const struct stat *ast, const struct stat *lst,
		      bool xattrs)
{
	struct copy_xattrs ax = { 0 }, lx = { 0 };
	int a, l, r;

	if ((a = open_same(afd, name, ast)) < 0)
		return a;
	r = l = open_same(lfd, name, lst);
	if (r >= 0 && !xattrs)
		r = 1;
	else if (r >= 0 && (r = copy_xattrs_read(a, false, &ax)) == 0 && (r = copy_xattrs_read(l, false, &lx)) == 0)
		r = same_xattrs(&ax, &lx);
	if (r == 1)
		r = same_data(a, l, ast->st_size);
	free(ax.buf);
	free(lx.buf);
	if (l >= 0)
		close(l);
	close(a);
	return r;
}
