/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Tree copy with libarchive; see copy.h for the contract.
 *
 * The parallel copy (@jobs > 1), in steps:
 *  1. plan: the units are the top-level entries of SRC; when there are too
 *     few of them to keep every worker busy, each top-level directory on
 *     SRC's filesystem is created in DST (0700: its metadata comes in 4.)
 *     and its children become units instead;
 *  2. fork the workers; each claims units through a counter in a MAP_SHARED
 *     mapping and copies them with its own read_disk, write_disk and
 *     linkresolver;
 *  3. a file with more than one link is not copied by a worker: its other
 *     names may be in another worker's units, and two linkresolvers would
 *     make two files of it.  The worker writes its path into its memfd;
 *  4. when every worker is done, the parent copies those files with one
 *     linkresolver, then writes the metadata of their directories, of the
 *     directories of 1. and of the root; archive_write_close() sets the
 *     directory times after their contents.
 * The first error wins (a compare-and-swap on the shared errno); the other
 * workers stop at their next entry.
 */
#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "copy.h"
#include "util.h"

#define COPY_FLAGS                                                                            \
	(ARCHIVE_EXTRACT_OWNER | ARCHIVE_EXTRACT_PERM | ARCHIVE_EXTRACT_TIME |                \
	 ARCHIVE_EXTRACT_ACL | ARCHIVE_EXTRACT_XATTR | ARCHIVE_EXTRACT_FFLAGS |               \
	 ARCHIVE_EXTRACT_SPARSE)
#define COPY_MAX_JOBS 64
/* Below this many top-level units per worker, top-level directories are
 * split into their children: a tree of a few big directories would
 * otherwise leave workers idle.  Above it, splitting only costs one
 * archive_read_disk_open() per child. */
#define COPY_UNITS_PER_JOB 8

/* Shared by the parent and its workers (MAP_SHARED | MAP_ANONYMOUS). */
struct copy_shared {
	atomic_uint_fast64_t files, bytes, last_usec;
	atomic_size_t next; /* the next unit to claim */
	atomic_int err; /* errno of the first failure; 0: none yet */
	char msg[256]; /* written only by the process that set err */
};

struct copy_ctx {
	const char *src, *dst;
	size_t srclen;
	dev_t dev; /* SRC's filesystem: no other is entered */
	const struct copy_opts *o;
	uint64_t started_usec;
	struct copy_shared *sh;
	int defer_fd; /* worker: multiply-linked files are listed here; -1: copied */
	char path[PATH_MAX]; /* scratch for destination and unit paths */
};

/* One process's libarchive objects. */
struct copy_io {
	struct archive *rd, *wr;
	struct archive *md; /* metadata only: entry_from_file() crashes on a
			       read_disk that was opened and closed */
	struct archive_entry_linkresolver *lr;
	struct archive_entry *e;
};

/* The units of a parallel copy, as paths relative to SRC. */
struct copy_plan {
	char **units;
	char **dirs; /* top-level directories split into units (step 1) */
};

static uint64_t mono_usec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * USEC_PER_SEC + (uint64_t)ts.tv_nsec / 1000;
}

/* Records @err and @msg unless an earlier failure was recorded; returns -@err. */
static int copy_fail_errno(struct copy_ctx *c, int err, const char *msg)
{
	int none = 0;

	if (atomic_compare_exchange_strong(&c->sh->err, &none, err))
		snprintf(c->sh->msg, sizeof(c->sh->msg), "%s", msg ? msg : strerror(err));
	return -err;
}

static int copy_fail(struct copy_ctx *c, struct archive *ar)
{
	return copy_fail_errno(c, archive_errno(ar) > 0 ? archive_errno(ar) : EIO,
			       archive_error_string(ar));
}

/* a line at most every 0.5 s, from 2 s on, and only on a terminal */
static void copy_progress(struct copy_ctx *c, uint64_t files, bool done)
{
	uint64_t now, last;

	if (!c->o->progress || (!done && (files & 1023) != 0))
		return;
	now = mono_usec();
	last = atomic_load(&c->sh->last_usec);
	if (now - c->started_usec < 2 * USEC_PER_SEC || (!done && now - last < 500 * USEC_PER_MSEC))
		return;
	if (done && last == 0)
		return; /* no line was shown: the copy was short */
	fprintf(stderr, "\rstoraged: copying '%s': %" PRIu64 " files, %" PRIu64 " MiB%s",
		c->o->label, files, (uint64_t)atomic_load(&c->sh->bytes) >> 20, done ? "\n" : "");
	atomic_store(&c->sh->last_usec, now);
}

static int copy_data(struct copy_ctx *c, struct archive *rd, struct archive *wr)
{
	const void *buf;
	size_t size;
	la_int64_t off;
	int r;

	while ((r = archive_read_data_block(rd, &buf, &size, &off)) == ARCHIVE_OK) {
		if (archive_write_data_block(wr, buf, size, off) < ARCHIVE_OK)
			return copy_fail(c, wr);
		atomic_fetch_add(&c->sh->bytes, size);
	}
	return r == ARCHIVE_EOF ? 0 : copy_fail(c, rd);
}

/* true for "<src>/.storaged-sync.*": leftovers of an interrupted sync */
static bool copy_skipped(const struct copy_ctx *c, const char *pathname)
{
	const char *p = pathname + c->srclen;

	return *p == '/' && strncmp(p + 1, COPY_SKIP_PREFIX, strlen(COPY_SKIP_PREFIX)) == 0 &&
	       !strchr(p + 1, '/');
}

/* rewrites "<src>/x" to "<dst>/x"; -ENAMETOOLONG when that is too long */
static int copy_rename(struct copy_ctx *c, struct archive_entry *e)
{
	const char *p = archive_entry_pathname(e) + c->srclen;

	if ((size_t)snprintf(c->path, sizeof(c->path), "%s%s", c->dst, p) >= sizeof(c->path))
		return copy_fail_errno(c, ENAMETOOLONG, NULL);
	archive_entry_copy_pathname(e, c->path);
	return 0;
}

/* lists the path of @e, relative to SRC and NUL-terminated, for step 4 */
static int copy_defer(struct copy_ctx *c, struct archive_entry *e)
{
	const char *rel = archive_entry_pathname(e) + c->srclen + 1;
	size_t n = strlen(rel) + 1;

	if (write(c->defer_fd, rel, n) != (ssize_t)n)
		return copy_fail_errno(c, errno ? errno : EIO, NULL);
	return 0;
}

static int copy_entry(struct copy_ctx *c, struct copy_io *io)
{
	struct archive_entry *e = io->e, *spare = NULL;
	int r = 0;

	archive_entry_linkify(io->lr, &e, &spare);
	if (archive_write_header(io->wr, e) < ARCHIVE_WARN)
		r = copy_fail(c, io->wr);
	else if (!archive_entry_hardlink(e) && archive_entry_size(e) > 0)
		r = copy_data(c, io->rd, io->wr);
	if (r == 0 && archive_write_finish_entry(io->wr) < ARCHIVE_WARN)
		r = copy_fail(c, io->wr);
	copy_progress(c, atomic_fetch_add(&c->sh->files, 1) + 1, false);
	return r;
}

/* copies @path (SRC or below it) and, for a directory on SRC's
 * filesystem, everything below it */
static int copy_walk(struct copy_ctx *c, struct copy_io *io, const char *path)
{
	int r = 0, ar;

	if (archive_read_disk_open(io->rd, path) != ARCHIVE_OK)
		return copy_fail(c, io->rd);
	while (r == 0 && (ar = archive_read_next_header2(io->rd, io->e)) != ARCHIVE_EOF) {
		if (ar < ARCHIVE_WARN) {
			r = copy_fail(c, io->rd);
			break;
		}
		if (atomic_load(&c->sh->err)) {
			r = -ECANCELED; /* another worker failed */
			break;
		}
		if (copy_skipped(c, archive_entry_pathname(io->e)))
			continue;
		if (archive_entry_filetype(io->e) != AE_IFDIR && archive_entry_nlink(io->e) > 1 &&
		    c->defer_fd >= 0) {
			r = copy_defer(c, io->e);
			continue;
		}
		/* a walk's root is entered even on another filesystem */
		if (archive_entry_filetype(io->e) == AE_IFDIR && archive_entry_dev(io->e) == c->dev)
			archive_read_disk_descend(io->rd);
		if ((r = copy_rename(c, io->e)) == 0)
			r = copy_entry(c, io);
	}
	archive_read_close(io->rd);
	return r;
}

/* writes the metadata of the directory SRC/@rel ("": SRC itself); its
 * times are set by archive_write_close() */
static int copy_meta(struct copy_ctx *c, struct copy_io *io, const char *rel)
{
	char path[PATH_MAX];

	if ((size_t)snprintf(path, sizeof(path), "%s%s%s", c->src, *rel ? "/" : "", rel) >=
	    sizeof(path))
		return copy_fail_errno(c, ENAMETOOLONG, NULL);
	archive_entry_clear(io->e);
	archive_entry_copy_pathname(io->e, path);
	if (archive_read_disk_entry_from_file(io->md, io->e, -1, NULL) < ARCHIVE_WARN)
		return copy_fail(c, io->md);
	if (copy_rename(c, io->e) < 0)
		return -ENAMETOOLONG;
	if (archive_write_header(io->wr, io->e) < ARCHIVE_WARN ||
	    archive_write_finish_entry(io->wr) < ARCHIVE_WARN)
		return copy_fail(c, io->wr);
	return 0;
}

static int io_init(struct copy_ctx *c, struct copy_io *io)
{
	io->rd = archive_read_disk_new();
	io->md = archive_read_disk_new();
	io->wr = archive_write_disk_new();
	io->lr = archive_entry_linkresolver_new();
	io->e = archive_entry_new();
	if (!io->rd || !io->md || !io->wr || !io->lr || !io->e)
		return copy_fail_errno(c, ENOMEM, NULL);
	archive_read_disk_set_symlink_physical(io->rd);
	archive_read_disk_set_symlink_physical(io->md);
	archive_read_disk_set_behavior(io->rd, ARCHIVE_READDISK_NO_TRAVERSE_MOUNTS);
	archive_write_disk_set_options(io->wr, COPY_FLAGS);
	archive_entry_linkresolver_set_strategy(io->lr, ARCHIVE_FORMAT_TAR_USTAR);
	return 0;
}

/* closes the writer, which sets the directories' times, and frees @io;
 * returns @r, or the close's error when @r is 0 */
static int io_done(struct copy_ctx *c, struct copy_io *io, int r)
{
	if (io->wr && archive_write_close(io->wr) != ARCHIVE_OK && r == 0)
		r = copy_fail(c, io->wr);
	archive_read_free(io->rd);
	archive_read_free(io->md);
	archive_write_free(io->wr);
	archive_entry_linkresolver_free(io->lr);
	archive_entry_free(io->e);
	return r;
}

static int copy_serial(struct copy_ctx *c)
{
	struct copy_io io = { 0 };
	int r = io_init(c, &io);

	if (r == 0)
		r = copy_walk(c, &io, c->src);
	return io_done(c, &io, r);
}

/* ------------------------------------------------------------ parallel */

/* step 1 for one top-level directory @name: create it, its children become units */
static int plan_split(struct copy_ctx *c, struct copy_plan *p, int srcfd, const char *name)
{
	struct dirent *de;
	char *unit;
	DIR *d;
	int fd, r = 0;

	if ((size_t)snprintf(c->path, sizeof(c->path), "%s/%s", c->dst, name) >= sizeof(c->path))
		return -ENAMETOOLONG;
	if (mkdir(c->path, 0700) < 0 && errno != EEXIST)
		return -errno;
	if ((r = strv_extend(&p->dirs, name)) < 0)
		return r;
	fd = openat(srcfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || !(d = fdopendir(fd))) {
		r = -errno;
		if (fd >= 0)
			close(fd);
		return r;
	}
	while (r == 0 && (de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (asprintf(&unit, "%s/%s", name, de->d_name) < 0)
			r = -ENOMEM;
		else
			r = strv_push(&p->units, unit);
	}
	closedir(d);
	return r;
}

/* step 1: the top-level entries, split when they are too few */
static int plan_units(struct copy_ctx *c, struct copy_plan *p, unsigned jobs)
{
	_cleanup_strv_free_ char **top = NULL;
	struct dirent *de;
	struct stat st;
	int fd = open(c->src, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), r = 0;
	DIR *d = fd < 0 ? NULL : fdopendir(fd);

	if (!d) {
		r = -errno;
		if (fd >= 0)
			close(fd);
		return r;
	}
	while (r == 0 && (de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") &&
		    strncmp(de->d_name, COPY_SKIP_PREFIX, strlen(COPY_SKIP_PREFIX)))
			r = strv_extend(&top, de->d_name);
	if (r == 0 && strv_length(top) >= (size_t)jobs * COPY_UNITS_PER_JOB) {
		p->units = top;
		top = NULL;
	}
	for (size_t i = 0; r == 0 && top && top[i]; i++) {
		if (fstatat(dirfd(d), top[i], &st, AT_SYMLINK_NOFOLLOW) < 0)
			r = -errno;
		else if (S_ISDIR(st.st_mode) && st.st_dev == c->dev)
			r = plan_split(c, p, dirfd(d), top[i]);
		else
			r = strv_extend(&p->units, top[i]);
	}
	closedir(d);
	return r;
}

/* step 2, in the child; never returns */
static void worker_main(struct copy_ctx *c, char **units, size_t n, int defer_fd, pid_t parent)
{
	struct copy_io io = { 0 };
	char path[PATH_MAX];
	int r;

	/* a worker outliving its parent would write on unseen */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
		_exit(1);
	r = io_init(c, &io);

	c->defer_fd = defer_fd;
	while (r == 0) {
		size_t i = atomic_fetch_add(&c->sh->next, 1);

		if (i >= n || atomic_load(&c->sh->err))
			break;
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", c->src, units[i]) >= sizeof(path))
			r = copy_fail_errno(c, ENAMETOOLONG, NULL);
		else
			r = copy_walk(c, &io, path);
	}
	r = io_done(c, &io, r);
	_exit(r < 0 ? 1 : 0);
}

/* waits for @pid; a worker that died without recording an error fails the copy */
static void worker_wait(struct copy_ctx *c, pid_t pid)
{
	char why[64];
	int st;

	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return;
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return;
	if (WIFSIGNALED(st))
		snprintf(why, sizeof(why), "a copy worker was killed by signal %d", WTERMSIG(st));
	else
		snprintf(why, sizeof(why), "a copy worker exited with status %d", WEXITSTATUS(st));
	copy_fail_errno(c, EIO, why);
}

/* steps 2 and 3: @fds[@n] receive the workers' deferred paths */
static int run_workers(struct copy_ctx *c, char **units, int *fds, unsigned n)
{
	pid_t pids[COPY_MAX_JOBS];
	unsigned started = 0;
	pid_t self = getpid();

	fflush(NULL);
	for (; started < n; started++) {
		fds[started] = memfd_create("storaged-copy-links", MFD_CLOEXEC);
		if (fds[started] < 0 || (pids[started] = fork()) < 0) {
			copy_fail_errno(c, errno, NULL);
			break;
		}
		if (pids[started] == 0)
			worker_main(c, units, strv_length(units), fds[started], self);
	}
	for (unsigned i = 0; i < started; i++)
		worker_wait(c, pids[i]);
	return -atomic_load(&c->sh->err);
}

/* step 4 for the paths listed in @fd */
static int copy_deferred(struct copy_ctx *c, struct copy_io *io, int fd)
{
	char path[PATH_MAX], *list, *slash;
	struct stat st;
	int r = 0;

	if (fstat(fd, &st) < 0)
		return copy_fail_errno(c, errno, NULL);
	if (st.st_size == 0)
		return 0;
	list = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	if (list == MAP_FAILED)
		return copy_fail_errno(c, errno, NULL);
	for (char *rel = list, *next; r == 0 && rel < list + st.st_size; rel = next) {
		next = rel + strlen(rel) + 1;
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", c->src, rel) >= sizeof(path))
			r = copy_fail_errno(c, ENAMETOOLONG, NULL);
		else
			r = copy_walk(c, io, path);
		/* adding the link changed its directory's times (the root's
		 * are written last anyway) */
		slash = strrchr(rel, '/');
		if (r == 0 && slash) {
			*slash = '\0';
			r = copy_meta(c, io, rel);
		}
	}
	munmap(list, (size_t)st.st_size);
	return r;
}

/* step 4 */
static int copy_finish(struct copy_ctx *c, const struct copy_plan *p, const int *fds, unsigned n)
{
	struct copy_io io = { 0 };
	int r = io_init(c, &io);

	c->defer_fd = -1;
	for (unsigned i = 0; r == 0 && i < n; i++)
		r = copy_deferred(c, &io, fds[i]);
	for (size_t i = 0; r == 0 && p->dirs && p->dirs[i]; i++)
		r = copy_meta(c, &io, p->dirs[i]);
	if (r == 0)
		r = copy_meta(c, &io, "");
	return io_done(c, &io, r);
}

static int copy_parallel(struct copy_ctx *c, unsigned jobs)
{
	struct copy_plan p = { 0 };
	int fds[COPY_MAX_JOBS], r;
	unsigned n = 0;

	r = plan_units(c, &p, jobs);
	if (r < 0) {
		copy_fail_errno(c, -r, NULL);
		goto out;
	}
	n = strv_length(p.units) < jobs ? (unsigned)strv_length(p.units) : jobs;
	for (unsigned i = 0; i < n; i++)
		fds[i] = -1;
	r = run_workers(c, p.units, fds, n);
	if (r == 0)
		r = copy_finish(c, &p, fds, n);
out:
	for (unsigned i = 0; i < n; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	strv_free(p.units);
	strv_free(p.dirs);
	return r;
}

int copy_tree(const char *src, const char *dst, const struct copy_opts *o,
	      struct copy_result *ret)
{
	struct copy_ctx *c = calloc(1, sizeof(*c));
	unsigned jobs = o->jobs > COPY_MAX_JOBS ? COPY_MAX_JOBS : o->jobs;
	struct stat st;
	int r;

	*ret = (struct copy_result){ .err = ENOMEM, .msg = "out of memory" };
	if (!c)
		return -ENOMEM;
	*c = (struct copy_ctx){ .src = src, .dst = dst, .srclen = strlen(src), .o = o,
				.started_usec = mono_usec(), .defer_fd = -1 };
	c->sh = mmap(NULL, sizeof(*c->sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (c->sh == MAP_FAILED) {
		free(c);
		return -ENOMEM;
	}
	*ret = (struct copy_result){ 0 };
	if (lstat(src, &st) < 0)
		r = copy_fail_errno(c, errno, NULL);
	else {
		c->dev = st.st_dev;
		r = jobs > 1 && S_ISDIR(st.st_mode) ? copy_parallel(c, jobs) : copy_serial(c);
	}
	copy_progress(c, atomic_load(&c->sh->files), true);
	if (r < 0) {
		ret->err = atomic_load(&c->sh->err) ? atomic_load(&c->sh->err) : -r;
		snprintf(ret->msg, sizeof(ret->msg), "%s", c->sh->msg[0] ? c->sh->msg : strerror(-r));
		r = -ret->err;
	}
	munmap(c->sh, sizeof(*c->sh));
	free(c);
	return r;
}
