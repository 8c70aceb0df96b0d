/* SPDX-License-Identifier: GPL-2.0-or-later */
/* One entry's data, xattrs and metadata, by descriptor (copy_fd.h). */
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "copy.h"
#include "copy_fd.h"
#include "shared/units.h"

#define FFLAGS_KEPT \
	(FS_APPEND_FL | FS_IMMUTABLE_FL | FS_NODUMP_FL | FS_NOATIME_FL | FS_SYNC_FL | \
	 FS_DIRSYNC_FL | FS_NOCOW_FL | FS_PROJINHERIT_FL)

/* openat(2) is variadic: the one call not of its member's type */
static int sys_openat(int dirfd, const char *name, int flags, mode_t mode)
{
	return openat(dirfd, name, flags, mode);
}

/* /proc/self/fd/N of an O_PATH descriptor is a magic link to its inode:
 * opening it, or an xattr call on it, looks no name up (proc(5)) */
static const char *fd_path(int fd, char p[32])
{
	snprintf(p, 32, "/proc/self/fd/%d", fd);
	return p;
}

static int sys_reopen(int fd, int flags)
{
	char p[32];

	return open(fd_path(fd, p), flags);
}

const struct copy_sys copy_sys_libc = {
	.openat = sys_openat,
	.reopen = sys_reopen,
	.mkdirat = mkdirat,
	.symlinkat = symlinkat,
	.readlinkat = readlinkat,
	.mknodat = mknodat,
	.linkat = linkat,
	.fchownat = fchownat,
	.fchmodat = fchmodat,
	.utimensat = utimensat,
	.unlinkat = unlinkat,
};

static ssize_t x_list(int fd, bool viaproc, char *buf, size_t len)
{
	char p[32];

	return viaproc ? listxattr(fd_path(fd, p), buf, len) : flistxattr(fd, buf, len);
}

static ssize_t x_get(int fd, bool viaproc, const char *name, void *buf, size_t len)
{
	char p[32];

	return viaproc ? getxattr(fd_path(fd, p), name, buf, len) : fgetxattr(fd, name, buf, len);
}

static int x_set(int fd, bool viaproc, const char *name, const void *v, size_t len)
{
	char p[32];

	return viaproc ? setxattr(fd_path(fd, p), name, v, len, 0) : fsetxattr(fd, name, v, len, 0);
}

/* appends name, u32 length and value to @xa */
static int x_append(struct copy_xattrs *xa, const char *name, const void *v, uint32_t vlen)
{
	size_t nlen = strlen(name) + 1, add = nlen + sizeof(vlen) + vlen;
	char *b = realloc(xa->buf, xa->len + add);

	if (!b)
		return -ENOMEM;
	memcpy(b + xa->len, name, nlen);
	memcpy(b + xa->len + nlen, &vlen, sizeof(vlen));
	memcpy(b + xa->len + nlen + sizeof(vlen), v, vlen);
	xa->buf = b;
	xa->len += add;
	return 0;
}

int copy_xattrs_read(int fd, bool viaproc, struct copy_xattrs *ret)
{
	char names[8192], *val = NULL;
	ssize_t n = x_list(fd, viaproc, names, sizeof(names)), v;
	int r = 0;

	*ret = (struct copy_xattrs){ 0 };
	if (n < 0)
		return errno == EOPNOTSUPP || errno == ENOTSUP ? 0 : -errno;
	for (char *p = names; r == 0 && p < names + n; p += strlen(p) + 1) {
		if (copy_xattr_is_own(p))
			continue;
		v = x_get(fd, viaproc, p, NULL, 0);
		if (v < 0 && errno == ENODATA)
			continue; /* removed meanwhile */
		if (v < 0 || !(val = malloc(v ? (size_t)v : 1))) {
			r = v < 0 ? -errno : -ENOMEM;
			break;
		}
		v = x_get(fd, viaproc, p, val, (size_t)v);
		r = v < 0 ? (errno == ENODATA ? 0 : -errno) : x_append(ret, p, val, (uint32_t)v);
		free(val);
		val = NULL;
	}
	if (r < 0) {
		free(ret->buf);
		*ret = (struct copy_xattrs){ 0 };
	}
	return r;
}

bool copy_xattr_is_own(const char *name)
{
	return strncmp(name, COPY_OWN_XATTRS, strlen(COPY_OWN_XATTRS)) == 0;
}

bool copy_xattrs_next(struct copy_xattr_iter *it, const char **ret_name, const char **ret_val,
		      uint32_t *ret_vlen)
{
	if (!it->p || it->p >= it->end)
		return false;
	*ret_name = it->p;
	it->p += strlen(it->p) + 1;
	memcpy(ret_vlen, it->p, sizeof(*ret_vlen));
	*ret_val = it->p + sizeof(*ret_vlen);
	it->p = *ret_val + *ret_vlen;
	return true;
}

const char *copy_xattrs_find(const struct copy_xattrs *xa, const char *name, uint32_t *ret_vlen)
{
	struct copy_xattr_iter it = copy_xattr_iter_of(xa);
	const char *key, *val;

	while (copy_xattrs_next(&it, &key, &val, ret_vlen))
		if (!strcmp(key, name))
			return val;
	return NULL;
}

int copy_xattrs_prune(int fd, const struct copy_xattrs *xa)
{
	char names[8192];
	ssize_t n = flistxattr(fd, names, sizeof(names));

	if (n < 0)
		return errno == EOPNOTSUPP || errno == ENOTSUP ? 0 : -errno;
	for (char *p = names; p < names + n; p += strlen(p) + 1)
		if (!copy_xattr_is_own(p) && !copy_xattrs_find(xa, p, &(uint32_t){ 0 }) && fremovexattr(fd, p) < 0 && errno != ENODATA)
			return -errno;
	return 0;
}

void copy_lost_add(struct copy_lost *lost, int err, const char *what, const char *name)
{
	if (!lost->n++) {
		lost->err = err;
		snprintf(lost->what, sizeof(lost->what), name ? "%s '%s'" : "%s", what, name);
	}
}

const char *copy_lost_text(const struct copy_lost *lost, char *buf, size_t len)
{
	char more[48] = "";

	if (lost->n > 1)
		snprintf(more, sizeof(more), " (and %u more)", lost->n - 1);
	snprintf(buf, len, "%s not kept: %s%s", lost->what, strerror(-lost->err), more);
	return buf;
}

/* whether a failed fsetxattr()'s errno @e is the destination refusing
 * that attribute (not room for data, not an I/O error) */
static bool xattr_refused(int e)
{
	return e == EOPNOTSUPP || e == ENOTSUP || e == E2BIG || e == ENOSPC || e == EDQUOT || e == EPERM ||
	       e == EACCES || e == EINVAL || e == ERANGE;
}

int copy_xattrs_write(int fd, bool viaproc, const struct copy_xattrs *xa, struct copy_lost *lost)
{
	struct copy_xattr_iter it = copy_xattr_iter_of(xa);
	const char *name, *val;
	uint32_t vlen;

	while (copy_xattrs_next(&it, &name, &val, &vlen))
		if (x_set(fd, viaproc, name, val, vlen) < 0) {
			if (lost && xattr_refused(errno))
				copy_lost_add(lost, -errno, "extended attribute", name);
			else if (errno != EOPNOTSUPP && errno != ENOTSUP)
				return -errno;
		}
	return 0;
}

/* copies [@off, @end) of @in to the same offsets of @out */
static int copy_range(int in, int out, off_t off, off_t end, char *buf, size_t bufsize,
		      atomic_uint_fast64_t *bytes)
{
	while (off < end) {
		size_t want = (size_t)(end - off) < bufsize ? (size_t)(end - off) : bufsize;
		ssize_t n = pread(in, buf, want, off), w;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return 0; /* shrunk while copied: the copy ends there */
		for (ssize_t done = 0; done < n; done += w) {
			w = pwrite(out, buf + done, (size_t)(n - done), off + done);
			if (w < 0 && errno == EINTR)
				w = 0;
			else if (w < 0)
				return -errno;
			else if (w == 0)
				return -EIO;
		}
		off += n;
		if (bytes)
			atomic_fetch_add(bytes, (uint64_t)n);
	}
	return 0;
}

int copy_data(int in, int out, off_t size, char *buf, size_t bufsize, atomic_uint_fast64_t *bytes, bool sparse)
{
	off_t pos = 0, data, hole, end = 0;
	int r = 0;

	while (r == 0 && pos < size) {
		data = sparse ? lseek(in, pos, SEEK_DATA) : -1;
		if (sparse && data < 0 && errno == ENXIO)
			break; /* a hole up to the end */
		if (data < 0) { /* not sparse, or no SEEK_DATA here: all data */
			data = pos;
			hole = size;
		} else if (data >= size) {
			break;
		} else if ((hole = lseek(in, data, SEEK_HOLE)) < 0 || hole > size) {
			hole = size;
		}
		r = copy_range(in, out, data, hole, buf, bufsize, bytes);
		pos = end = hole;
	}
	/* a trailing hole; a file written to its end is not truncated (ext4
	 * would flush a truncated file's delayed blocks at close) */
	if (r == 0 && end < size && ftruncate(out, size) < 0)
		r = -errno;
	return r;
}

unsigned copy_fflags_get(int fd)
{
	int f = 0;

	if (ioctl(fd, FS_IOC_GETFLAGS, &f) < 0)
		return 0;
	return (unsigned)f & FFLAGS_KEPT;
}

int copy_fflags_add(int fd, unsigned want, struct copy_lost *lost)
{
	int f = 0;

	if (!want)
		return 0;
	if (ioctl(fd, FS_IOC_GETFLAGS, &f) == 0) {
		f |= (int)want;
		if (ioctl(fd, FS_IOC_SETFLAGS, &f) == 0)
			return 0;
		if (errno != EOPNOTSUPP && errno != ENOTTY && errno != EINVAL && !(lost && errno == EPERM))
			return -errno;
	}
	if (lost)
		copy_lost_add(lost, errno == ENOTTY ? -EOPNOTSUPP : -errno, "file flags", NULL);
	return 0;
}

int copy_meta_fd(int fd, const struct stat *st, const struct copy_xattrs *xa, unsigned fflags,
		 struct copy_lost *lost)
{
	struct timespec ts[2] = { st->st_atim, st->st_mtim };
	int r;

	if (fchown(fd, st->st_uid, st->st_gid) < 0)
		return -errno;
	if ((r = copy_xattrs_write(fd, false, xa, lost)) < 0)
		return r;
	if (fchmod(fd, st->st_mode & 07777) < 0 || futimens(fd, ts) < 0)
		return -errno;
	return copy_fflags_add(fd, fflags, lost);
}

int copy_open_beneath(const struct copy_sys *sys, int rootfd, const char *rel)
{
	char name[256];
	const char *p = rel ? rel : "";
	int fd = dup(rootfd), next;

	while (fd >= 0 && *p) {
		size_t n = strcspn(p, "/");

		if (n == 0 || n >= sizeof(name)) {
			p += n + (p[n] == '/');
			if (n == 0)
				continue;
			close(fd);
			return -ENAMETOOLONG;
		}
		memcpy(name, p, n);
		name[n] = '\0';
		p += n + (p[n] == '/');
		if (!strcmp(name, "..")) {
			close(fd);
			return -EINVAL;
		}
		next = sys->openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0);
		if (next < 0)
			next = -errno;
		close(fd);
		fd = next;
	}
	return fd < 0 ? (fd == -1 ? -errno : fd) : fd;
}

/* the baseline kept on the area's root: "SEC.NSEC" of the coarse clock */
int copy_sync_base_read(int fd, const char *xattr, struct timespec *ts)
{
	char v[48], *dot;
	uint64_t s, ns;
	ssize_t n = fgetxattr(fd, xattr, v, sizeof(v) - 1);

	if (n < 0)
		return -errno;
	v[n] = '\0';
	if (!(dot = strchr(v, '.')))
		return -EINVAL;
	*dot = '\0';
	if (units_parse_uint(v, INT64_MAX, &s) < 0 || units_parse_uint(dot + 1, 999999999, &ns) < 0)
		return -EINVAL;
	*ts = (struct timespec){ .tv_sec = (time_t)s, .tv_nsec = (long)ns };
	return 0;
}

static bool ts_after(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec > b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec > b->tv_nsec);
}

int copy_sync_base_past_writes(struct timespec *ts)
{
	/* File times come from the coarse clock (current_time()), but
	 * multigrain timestamps (Linux 6.13) give a change after its ctime
	 * was read the fine clock: a copy's last files may be past a coarse
	 * reading taken at its end (inode(7)).  Every ctime is at most the
	 * fine clock now, so the first coarse reading past it is later than
	 * all.  The coarse clock moves every tick (1-10 ms): a bounded wait,
	 * then the plain reading (ties count as changed: safe, only slower). */
	const struct timespec step = { .tv_nsec = 1000000 };
	struct timespec end;

	if (clock_gettime(CLOCK_REALTIME, &end) < 0)
		return -errno;
	for (int i = 0; i < 100; i++) {
		if (clock_gettime(CLOCK_REALTIME_COARSE, ts) < 0)
			return -errno;
		if (ts_after(ts, &end))
			return 0;
		nanosleep(&step, NULL);
	}
	return 0;
}

int copy_sync_base_write(int fd, const char *xattr, const struct timespec *ts)
{
	char v[48];
	int n = snprintf(v, sizeof(v), "%lld.%09ld", (long long)ts->tv_sec, ts->tv_nsec);

	return fsetxattr(fd, xattr, v, (size_t)n, 0) < 0 ? -errno : 0;
}

int copy_open_data(const struct copy_sys *sys, int fd)
{
	const struct timespec pause = { .tv_nsec = 100 * 1000 * 1000 };
	int in = -1;

	for (int i = 0; i < 5; i++) {
		/* no O_NONBLOCK: the inode is a regular file (the O_PATH
		 * descriptor pins it), where it only makes a lease fail */
		in = sys->reopen(fd, O_RDONLY | O_NOCTTY | O_CLOEXEC);
		if (in >= 0 || (errno != EINTR && errno != EAGAIN && errno != EBUSY))
			break;
		nanosleep(&pause, NULL);
	}
	return in < 0 ? -errno : in;
}

int copy_node_read(const struct copy_sys *sys, struct copy_node *n)
{
	char target[PATH_MAX];
	ssize_t len;

	if (S_ISREG(n->st.st_mode)) {
		n->in = copy_open_data(sys, n->fd);
		if (n->in < 0)
			return n->in;
		n->fflags = copy_fflags_get(n->in);
		return copy_xattrs_read(n->in, false, &n->xa);
	}
	if (S_ISLNK(n->st.st_mode)) {
		/* "" and an O_PATH | O_NOFOLLOW descriptor: the link itself */
		len = sys->readlinkat(n->fd, "", target, sizeof(target));
		if (len < 0)
			return -errno;
		if ((size_t)len >= sizeof(target))
			return -ENAMETOOLONG;
		target[len] = '\0';
		n->target = strdup(target);
		return n->target ? 0 : -ENOMEM;
	}
	return copy_xattrs_read(n->fd, true, &n->xa);
}

int copy_node_create(const struct copy_sys *sys, struct copy_node *n, int dirfd, const char *name)
{
	const int fl = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
	int r;

	if (S_ISREG(n->st.st_mode))
		r = n->out = sys->openat(dirfd, name, fl, 0600);
	else if (S_ISLNK(n->st.st_mode))
		r = sys->symlinkat(n->target, dirfd, name);
	else
		r = sys->mknodat(dirfd, name, (n->st.st_mode & S_IFMT) | 0600, n->st.st_rdev);
	return r < 0 ? -errno : 0;
}

int copy_node_finish(const struct copy_sys *sys, const struct copy_node *n, int dirfd, const char *name,
		     char *buf, size_t bufsize, atomic_uint_fast64_t *bytes, struct copy_lost *lost)
{
	const struct stat *st = &n->st;
	struct timespec ts[2] = { st->st_atim, st->st_mtim };
	int r = 0, nfd;

	if (S_ISREG(st->st_mode)) {
		r = copy_data(n->in, n->out, st->st_size, buf, bufsize, bytes,
			      (off_t)st->st_blocks * 512 < st->st_size);
		return r < 0 ? r : copy_meta_fd(n->out, st, &n->xa, n->fflags, lost);
	}
	if (sys->fchownat(dirfd, name, st->st_uid, st->st_gid, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	if (!S_ISLNK(st->st_mode) && n->xa.len) {
		nfd = sys->openat(dirfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC, 0);
		if (nfd < 0)
			return -errno;
		r = copy_xattrs_write(nfd, true, &n->xa, lost);
		close(nfd);
	}
	if (r == 0 && !S_ISLNK(st->st_mode) && sys->fchmodat(dirfd, name, st->st_mode & 07777, 0) < 0)
		r = -errno;
	if (r == 0 && sys->utimensat(dirfd, name, ts, AT_SYMLINK_NOFOLLOW) < 0)
		r = -errno;
	return r;
}

void copy_node_done(struct copy_node *n)
{
	if (n->in >= 0)
		close(n->in);
	if (n->out >= 0)
		close(n->out);
	free(n->target);
	free(n->xa.buf);
}
