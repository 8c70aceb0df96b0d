/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Which files are mapped shared, read from /proc/PID/maps (mapped.h). */
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
#include <unistd.h>

#include "mapped.h"
#include "util.h"

static int by_ino(const void *a, const void *b)
{
	ino_t x = *(const ino_t *)a, y = *(const ino_t *)b;

	return x < y ? -1 : x > y;
}

int mapped_add(struct mapped_set *m, ino_t ino)
{
	if (grow_array(&m->ino, &m->cap, m->n, sizeof(*m->ino)) < 0)
		return -ENOMEM;
	m->ino[m->n++] = ino;
	return 0;
}

/* what a scan collects: the shared mappings of files on @dev into @m,
 * of those on @other_dev into @other (NULL: none), and of these the
 * writable ones into @other_w too (NULL: none) */
struct scan {
	dev_t dev, other_dev;
	struct mapped_set *m, *other, *other_w;
	/* the devices as the kernel prints them: show_map_vma(), "%02x:%02x" */
	char devfield[32], otherfield[32];
};

/* the mappings of one process's maps (@f) that @s asks for */
static int maps_read(FILE *f, const struct scan *s)
{
	char *line = NULL, perms[8];
	unsigned maj, min;
	uintmax_t ino;
	size_t len = 0;
	int r = 0;

	/* "start-end perms offset major:minor inode path" (proc(5)); a
	 * browser maps thousands of files: only lines of these devices are
	 * parsed */
	while (r == 0 && getline(&line, &len, f) > 0) {
		if (!strstr(line, s->devfield) && !(s->other && strstr(line, s->otherfield)))
			continue;
		if (sscanf(line, "%*s %7s %*s %x:%x %ju", perms, &maj, &min, &ino) != 4 || perms[3] != 's' || !ino)
			continue;
		if (makedev(maj, min) == s->dev)
			r = mapped_add(s->m, (ino_t)ino);
		else if (s->other && makedev(maj, min) == s->other_dev) {
			r = mapped_add(s->other, (ino_t)ino);
			if (r == 0 && s->other_w && perms[1] == 'w')
				r = mapped_add(s->other_w, (ino_t)ino);
		}
	}
	free(line);
	return r;
}

int mapped_scan_writable(struct mapped_set *m, dev_t dev, struct mapped_set *other, dev_t other_dev,
			 struct mapped_set *other_writable)
{
	struct scan s = { .dev = dev, .other_dev = other_dev, .m = m, .other = other, .other_w = other_writable };
	DIR *d = opendir("/proc");
	struct dirent *de;
	int r = 0;

	if (!d)
		return -errno;
	snprintf(s.devfield, sizeof(s.devfield), " %02x:%02x ", major(dev), minor(dev));
	snprintf(s.otherfield, sizeof(s.otherfield), " %02x:%02x ", major(other_dev), minor(other_dev));
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
		r = maps_read(f, &s);
		fclose(f);
	}
	closedir(d);
	return r;
}

int mapped_scan(struct mapped_set *m, dev_t dev, struct mapped_set *other, dev_t other_dev)
{
	return mapped_scan_writable(m, dev, other, other_dev, NULL);
}

int mapped_load(struct mapped_set *m, int fd, const char *xattr)
{
	char *buf, *p, *end;
	ssize_t n = fgetxattr(fd, xattr, NULL, 0);
	int r = 0;

	if (n <= 0)
		return n < 0 && errno != ENODATA && errno != EOPNOTSUPP ? -errno : 0;
	if (!(buf = malloc((size_t)n + 1)))
		return -ENOMEM;
	n = fgetxattr(fd, xattr, buf, (size_t)n);
	if (n < 0)
		r = -errno;
	buf[n < 0 ? 0 : n] = '\0';
	m->all |= buf[0] == '*';
	for (p = buf; r == 0 && !m->all && *p; p = end) {
		uintmax_t ino = strtoumax(p, &end, 10);

		if (end == p)
			break; /* malformed: what was read stands */
		r = mapped_add(m, (ino_t)ino);
		end += strspn(end, " ");
	}
	free(buf);
	return r;
}

int mapped_save(const struct mapped_set *m, int fd, const char *xattr)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int r = 0;

	if (!f)
		return -ENOMEM;
	if (m->all)
		fputs("*", f);
	for (size_t i = 0; !m->all && i < m->n; i++)
		if (i == 0 || m->ino[i] != m->ino[i - 1])
			fprintf(f, "%s%ju", i ? " " : "", (uintmax_t)m->ino[i]);
	if (fclose(f) != 0)
		r = -ENOMEM;
	else if (!len)
		r = fremovexattr(fd, xattr) < 0 && errno != ENODATA ? -errno : 0;
	else if (fsetxattr(fd, xattr, buf, len, 0) < 0)
		r = -errno;
	/* more inodes than an extended attribute holds (64 KiB; tmpfs and
	 * ext4 allow less): "every file", which the next sync compares all
	 * of, rather than none */
	if ((r == -E2BIG || r == -ENOSPC) && !m->all)
		r = fsetxattr(fd, xattr, "*", 1, 0) < 0 ? -errno : 0;
	free(buf);
	return r;
}

int mapped_merge(struct mapped_set *m, const struct mapped_set *from)
{
	int r = 0;

	m->all |= from->all;
	for (size_t i = 0; r == 0 && i < from->n; i++)
		r = mapped_add(m, from->ino[i]);
	return r;
}

void mapped_sort(struct mapped_set *m)
{
	if (m->n) /* qsort() of NULL is undefined, even of none */
		qsort(m->ino, m->n, sizeof(*m->ino), by_ino);
}

bool mapped_has(const struct mapped_set *m, ino_t ino)
{
	return m->all || (m->n && bsearch(&ino, m->ino, m->n, sizeof(*m->ino), by_ino));
}

bool mapped_within(const struct mapped_set *m, const struct mapped_set *in)
{
	for (size_t i = 0; i < m->n; i++)
		if (!mapped_has(in, m->ino[i]))
			return false;
	return true;
}

void mapped_done(struct mapped_set *m)
{
	free(m->ino);
	*m = (struct mapped_set){ 0 };
}

/* The first data of @fd at or after @off, @size when none is left before
 * it (lseek(2) SEEK_DATA, ENXIO past the last data); @off where holes
 * cannot be told: all is data then. */
static off_t next_data(int fd, off_t off, off_t size)
{
	off_t d = lseek(fd, off, SEEK_DATA);

	if (d < 0)
		return errno == ENXIO ? size : off;
	return d < size ? d : size;
}

int same_file_data(int a, int b, off_t size)
{
	enum { CHUNK = 64 * 1024 };
	char *x = malloc(CHUNK), *y = malloc(CHUNK);
	off_t off = 0;
	int r = 1;

	if (!x || !y)
		r = -ENOMEM;
	while (r == 1 && off < size) {
		size_t want;
		ssize_t n, k;
		off_t da = next_data(a, off, size), db = next_data(b, off, size);

		/* a hole in both reads as zeros in both: skipped, so that a
		 * sparse file of any size costs what its data does */
		off = da < db ? da : db;
		if (off >= size)
			break;
		want = size - off < CHUNK ? (size_t)(size - off) : CHUNK;
		n = pread(a, x, want, off);
		k = n > 0 ? pread(b, y, (size_t)n, off) : 0;

		if (n < 0 || k < 0)
			r = -errno;
		else if (n == 0 || k != n || memcmp(x, y, (size_t)n))
			r = 0;
		else
			off += n;
	}
	free(x);
	free(y);
	return r;
}
