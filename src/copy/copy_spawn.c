/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Running storaged-copy (contracts: copy_spawn.h; the helper's side of
 * the status pipe: storaged-copy.c). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include "copy_spawn.h"
#include "shared/notify.h"
#include "shared/spawn_helper.h"
#include "shared/units.h"
#include "shared/util.h"

#define HELPER_INSTALLED LIBEXECDIR "/storaged/" COPY_HELPER
/* the helper's descriptors: its end of the status pipe, the directories
 * to copy from and into (storaged-copy --status-fd, --src-fd, --dst-fd) */
#define STATUS_FD 3
#define SRC_FD 4
#define DST_FD 5
#define WORK_FD 6
#define FIRST_FREE_FD 7

__attribute__((format(printf, 3, 4))) static int fail(struct copy_result *res, int err, const char *fmt, ...)
{
	va_list ap;

	res->err = -err; /* copy.h: negative */
	va_start(ap, fmt);
	vsnprintf(res->msg, sizeof(res->msg), fmt, ap);
	va_end(ap);
	return -err;
}

/* an executable only root may replace */
static bool helper_is_safe(const char *path, struct stat *st)
{
	return stat(path, st) == 0 && S_ISREG(st->st_mode) && st->st_uid == 0 &&
	       !(st->st_mode & (S_IWGRP | S_IWOTH)) && (st->st_mode & S_IXUSR);
}

int copy_spawn_find(char *buf, size_t len, struct copy_result *res)
{
	char self[PATH_MAX], *slash;
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	struct stat st;

	if (n > 0) {
		self[n] = '\0';
		slash = strrchr(self, '/');
		if (slash && (*slash = '\0', true) &&
		    (size_t)snprintf(buf, len, "%s/%s", self, COPY_HELPER) < len &&
		    helper_is_safe(buf, &st))
			return 0;
	}
	snprintf(buf, len, "%s", HELPER_INSTALLED);
	if (helper_is_safe(buf, &st))
		return 0;
	if (stat(buf, &st) < 0)
		return fail(res, errno, "the copy helper '%s' is missing (%s): reinstall storaged",
			    buf, strerror(errno));
	return fail(res, EPERM,
		    "the copy helper '%s' is not a root-owned executable that only root may write: reinstall storaged",
		    buf);
}

/*
 * Measured on bench/seed.sh's tree (50 506 entries, 390 MiB, ext4 on
 * virtio to tmpfs, cold cache, 2 CPUs; bench/README.md): 1 worker 5.4 s,
 * 2: 4.0, 4: 2.5, 8: 2.1-2.3, 16: 1.5-1.8, 32: 1.5-1.7, 64: 2.3-2.6.  A
 * cold copy waits on reads: more workers keep more in flight, up to ~16
 * where the disk's queue is full.  A single CPU (not measured) gets half.
 */
static unsigned spawn_jobs(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	if (n < 1)
		n = 1;
	return n >= 2 ? 16 : 8;
}

/* "PUT DELETED KEPT [WARNING]" of the helper's success line into @res; a
 * line without them counts as one entry put: that the sync changed
 * nothing is said only when the helper says so */
static void helper_counts(const char *msg, struct copy_result *res)
{
	int end = 0;

	if (sscanf(msg, "%zu %zu %zu%n", &res->n_put, &res->n_deleted, &res->n_kept, &end) != 3) {
		res->n_put = 1;
		res->n_deleted = res->n_kept = 0;
	} else if (msg[end] == ' ')
		snprintf(res->msg, sizeof(res->msg), "%s", msg + end + 1);
}

/* "ERRNO MESSAGE\n" from the helper, or why there is none */
static int helper_outcome(const char *prog, char *line, int st, struct copy_result *res)
{
	char *msg = strchr(line, ' '), why[64];
	uint64_t err;

	line[strcspn(line, "\n")] = '\0';
	if (msg)
		*msg++ = '\0';
	if (msg && units_parse_uint(line, 4095, &err) == 0) {
		if (err == 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0) {
			helper_counts(msg, res);
			return 0;
		}
		if (err != 0)
			return fail(res, (int)err, "%s", msg);
	}
	if (WIFSIGNALED(st))
		snprintf(why, sizeof(why), "killed by signal %d", WTERMSIG(st));
	else
		snprintf(why, sizeof(why), "exit status %d", WEXITSTATUS(st));
	return fail(res, EIO, "'%s' ended without a report (%s)", prog, why);
}

/* SIGINT or SIGTERM is waiting for storaged (blocked: it is read from a
 * signalfd once the copy is over): the copy should not go on. */
static bool interrupt_pending(void)
{
	sigset_t pending;

	return sigpending(&pending) == 0 &&
	       (sigismember(&pending, SIGINT) == 1 || sigismember(&pending, SIGTERM) == 1);
}

/* Reads the helper's report until it closes; a pending SIGINT or SIGTERM
 * ends the helper and stays pending for the caller's signalfd.  Meanwhile
 * a service manager's timeout is kept ahead (a seed or sync may outlast
 * the unit's).  Returns: 0, or -EINTR. */
static int read_report(int fd, pid_t pid, char *line, size_t len)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	struct notify_extender extend = { 0 };
	size_t got = 0;
	ssize_t n;

	for (;;) {
		notify_keep_ahead(&extend, now_monotonic_usec() + 250 * USEC_PER_MSEC);
		if (interrupt_pending()) {
			kill(pid, SIGTERM);
			line[0] = '\0';
			return -EINTR;
		}
		if (poll(&pfd, 1, 250) <= 0)
			continue;
		n = read(fd, line + got, len - 1 - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0 || (got += (size_t)n) == len - 1)
			break;
	}
	line[got] = '\0';
	return 0;
}

/* a descriptor of its own for the directory @fd, above FIRST_FREE_FD,
 * locked shared before the helper exists, which inherits the open file
 * description: the lock `stop` and a failed setup wait for (area.c,
 * wait_for_copy) is held from then until the helper exited, even when
 * storaged is killed before the helper took the lock itself */
static int reopen_dir(int fd)
{
	int o = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC), n;

	if (o < 0)
		return -errno;
	n = fcntl(o, F_DUPFD_CLOEXEC, FIRST_FREE_FD);
	n = n < 0 ? -errno : n;
	close(o);
	/* not blocking here: whoever holds it exclusively (a teardown) is
	 * waited for by the helper, which storaged's signals can end */
	while (n >= 0 && flock(n, LOCK_SH | LOCK_NB) < 0 && errno != EWOULDBLOCK)
		if (errno != EINTR) {
			int e = errno;

			close(n);
			n = -e;
		}
	return n;
}

/* copy_spawn_run(), or with @workfd >= 0 copy_spawn_sync() */
static int spawn_copy(int srcfd, int dstfd, int workfd, const char *src, const char *dst,
		      const char *label, const char *rescue, struct copy_result *res)
{
	char prog[PATH_MAX], fdarg[16], jobarg[16], line[sizeof(res->msg) + 64];
	char sfdarg[16], dfdarg[16], wfdarg[16];
	char *argv[] = { COPY_HELPER, "--jobs",	   jobarg, "--label",  (char *)label, "--status-fd",
			 fdarg,	      "--src-fd",  sfdarg, "--dst-fd", dfdarg,	      "--",
			 (char *)src, (char *)dst, NULL,   NULL,       NULL,	      NULL,
			 NULL,	      NULL,	   NULL };
	struct spawn_fd fds[4];
	_cleanup_close_ int sfd = -EBADF, dfd = -EBADF, kfd = -EBADF, rd = -EBADF, wr = -EBADF, wfd = -EBADF;
	int p[2], st = 0, r;
	size_t nfds = 3;
	pid_t pid;

	*res = (struct copy_result){ 0 };
	if ((r = copy_spawn_find(prog, sizeof(prog), res)) < 0)
		return r;
	snprintf(fdarg, sizeof(fdarg), "%d", STATUS_FD);
	snprintf(sfdarg, sizeof(sfdarg), "%d", SRC_FD);
	snprintf(dfdarg, sizeof(dfdarg), "%d", DST_FD);
	snprintf(wfdarg, sizeof(wfdarg), "%d", WORK_FD);
	snprintf(jobarg, sizeof(jobarg), "%u", spawn_jobs());
	if (workfd >= 0) { /* "--work-fd N [--rescue NAME --verify]" before the "--" */
		size_t k = 11;

		argv[k++] = "--work-fd";
		argv[k++] = wfdarg;
		if (rescue) {
			argv[k++] = "--rescue";
			argv[k++] = (char *)rescue;
			argv[k++] = "--verify";
		}
		argv[k++] = "--";
		argv[k++] = (char *)src;
		argv[k++] = (char *)dst;
	}
	if ((sfd = reopen_dir(srcfd)) < 0 || (dfd = reopen_dir(dstfd)) < 0) {
		r = sfd < 0 ? sfd : dfd;
		return fail(res, -r, "opening '%s': %s", sfd < 0 ? src : dst, strerror(-r));
	}
	if (workfd >= 0 && (kfd = fcntl(workfd, F_DUPFD_CLOEXEC, FIRST_FREE_FD)) < 0)
		return fail(res, errno, "the working directory in '%s': %s", dst, strerror(errno));
	/* above WORK_FD, so that the dup2()s in the child really duplicate
	 * (dup2 onto itself would keep O_CLOEXEC) and none overwrites
	 * another's source */
	if (pipe2(p, O_CLOEXEC) == 0) {
		rd = p[0];
		wr = p[1];
	}
	if (rd < 0 || (wfd = fcntl(wr, F_DUPFD_CLOEXEC, FIRST_FREE_FD)) < 0)
		return fail(res, errno, "status pipe for '%s': %s", prog, strerror(errno));
	fds[0] = (struct spawn_fd){ .fd = wfd, .target = STATUS_FD };
	fds[1] = (struct spawn_fd){ .fd = sfd, .target = SRC_FD };
	fds[2] = (struct spawn_fd){ .fd = dfd, .target = DST_FD };
	if (kfd >= 0)
		fds[nfds++] = (struct spawn_fd){ .fd = kfd, .target = WORK_FD };
	/* storaged blocks SIGINT/SIGTERM for its signalfd: the helper must not
	 * inherit that, so that read_report() can end it */
	r = spawn_start(prog, argv, fds, nfds, SPAWN_RESET_SIGNALS, &pid);
	/* the helper's alone now: the report ends (EOF) when it does */
	wfd = safe_close(wfd);
	sfd = safe_close(sfd);
	dfd = safe_close(dfd);
	kfd = safe_close(kfd);
	wr = safe_close(wr);
	if (r < 0)
		return fail(res, -r, "running '%s': %s", prog, strerror(-r));
	r = read_report(rd, pid, line, sizeof(line));
	spawn_wait(pid, &st);
	return r < 0 ? fail(res, EINTR, "interrupted (SIGINT or SIGTERM)") : helper_outcome(prog, line, st, res);
}

int copy_spawn_run(int srcfd, int dstfd, const char *src, const char *dst, const char *label,
		   struct copy_result *res)
{
	return spawn_copy(srcfd, dstfd, -1, src, dst, label, NULL, res);
}

int copy_spawn_sync(int areafd, int lowerfd, int workfd, const char *area, const char *lower,
		    const char *label, const char *rescue, struct copy_result *res)
{
	return spawn_copy(areafd, lowerfd, workfd, area, lower, label, rescue, res);
}
