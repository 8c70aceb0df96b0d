/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * storaged-copy: the tree copy of RAM areas (seed and sync back), a
 * program of its own so that the resident storaged carries neither its
 * threads nor its buffers.  storaged runs it by argv (copy_spawn.c):
 *
 *   storaged-copy [--jobs N] [--label NAME] [--status-fd FD]
 *                 [--src-fd FD] [--dst-fd FD] [--work-fd FD [--rescue NAME] [--verify]] SRC DST
 *
 * SRC and DST are opened once each (O_NOFOLLOW), or taken from --src-fd,
 * --dst-fd (then they only name them in messages).  A copy stamps DST with
 * its end time (the seed's baseline); --work-fd: the sync back of the area
 * SRC into DST instead (copy_sync_fd()), --rescue, --verify: copy_opts'.
 * The outcome goes to the status FD as one line, "ERRNO MESSAGE" (so that
 * ENOSPC is told apart) or "0 PUT DELETED KEPT[ WARNING]" (a sync that
 * changed nothing is not reported as one that did); else to stderr.
 * Exit status: 0 copied, 1 failed, 2 usage.
 *
 * The helper dies with its parent (PR_SET_PDEATHSIG) and holds a shared
 * flock() on SRC and DST until it has ended: after a storaged killed
 * midway, the next `storaged stop` takes that lock before it unmounts
 * (area.c, wait_for_copy()).
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "copy.h"
#include "copy_fd.h"
#include "shared/units.h"
#include "shared/util.h"

struct args {
	struct copy_opts o;
	int status_fd; /* -1: report on stderr */
	int src_fd, dst_fd; /* -1: open src, dst */
	int work_fd; /* -1: a copy; else the sync's working directory */
	const char *src, *dst;
};

static int parse_args(int argc, char **argv, struct args *a)
{
	static const struct option opts[] = {
		{ "jobs", required_argument, NULL, 'j' },
		{ "label", required_argument, NULL, 'l' },
		/* the descriptors: their val indexes fdp[] */
		{ "status-fd", required_argument, NULL, 0 },
		{ "src-fd", required_argument, NULL, 1 },
		{ "dst-fd", required_argument, NULL, 2 },
		{ "work-fd", required_argument, NULL, 3 },
		{ "rescue", required_argument, NULL, 'R' },
		{ "verify", no_argument, NULL, 'V' },
		{ 0 },
	};
	int *fdp[] = { &a->status_fd, &a->src_fd, &a->dst_fd, &a->work_fd };
	uint64_t n;
	int c;

	*a = (struct args){
		.o = { .label = "", .jobs = 1 }, .status_fd = -1, .src_fd = -1, .dst_fd = -1, .work_fd = -1
	};
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c == 'l')
			a->o.label = optarg;
		else if (c == 'j' && units_parse_uint(optarg, 1024, &n) == 0)
			a->o.jobs = (unsigned)n;
		else if (c >= 0 && c < 4 && units_parse_uint(optarg, INT_MAX, &n) == 0 && n > 2)
			*fdp[c] = (int)n;
		else if (c == 'R' && *optarg && !strchr(optarg, '/') && strcmp(optarg, ".") && strcmp(optarg, ".."))
			a->o.rescue = optarg;
		else if (c == 'V')
			a->o.verify = true;
		else
			return -EINVAL;
	}
	if (argc - optind != 2)
		return -EINVAL;
	a->src = argv[optind];
	a->dst = argv[optind + 1];
	return 0;
}

/* storaged killed midway must not leave a copy writing on into a
 * directory the next run removes; a parent that died before prctl() is
 * seen as the closed read end of the status pipe */
static bool parent_gone(int status_fd)
{
	struct pollfd p = { .fd = status_fd, .events = POLLOUT };

	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
		return true;
	return status_fd >= 0 && poll(&p, 1, 0) == 1 && (p.revents & POLLERR);
}

/* opens @dir (or takes @fd) and holds a shared lock on it for as long as
 * this process lives (the descriptor is never closed): what `storaged
 * stop` waits for.  The copy is made from this same descriptor.  Returns:
 * the descriptor, or negative errno with @res filled. */
static int hold(const char *dir, int fd, struct copy_result *res)
{
	if (fd >= 0)
		fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	else
		fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	while (fd >= 0 && flock(fd, LOCK_SH) < 0)
		if (errno != EINTR) {
			close(fd);
			fd = -1;
		}
	if (fd >= 0)
		return fd;
	res->err = -errno;
	snprintf(res->msg, sizeof(res->msg), "cannot open and lock '%s': %s", dir, strerror(errno));
	return res->err;
}

/* The source's baseline: past every write before the copy, so that a
 * file written in the tick before it is not the directory's change since
 * the seed (a false conflict when the area changes it too).  But a
 * filesystem of whole seconds (ext4 with 128-byte inodes; its root's
 * times have no nanoseconds) stamps a write made just after the reading
 * with the second it falls in, older than the reading: the next sync
 * would take it for the seed's and put the area's version over it.
 * There the baseline is the start of that second: a write in it before
 * the seed counts as the directory's (a conflict at worst, both kept). */
static bool source_base(int sfd, struct timespec *ret)
{
	struct stat st;

	if (copy_sync_base_past_writes(ret) < 0)
		return false;
	if (fstat(sfd, &st) == 0 && st.st_ctim.tv_nsec == 0 && st.st_mtim.tv_nsec == 0)
		ret->tv_nsec = 0;
	return true;
}

/* a copy (the seed: the area is not visible yet), then its end as the
 * destination's sync baseline: every file of it has an older ctime (a
 * filesystem without trusted xattrs keeps none: the first sync then
 * compares everything); the source's, source_base(). */
static int copy(int sfd, int dfd, const struct copy_opts *o, struct copy_result *res)
{
	struct timespec start, end;
	bool lower = source_base(sfd, &start);
	int r;

	/* the root's names as the baseline's start saw them (storaged's own
	 * xattrs are neither copied nor removed by the copy); without them,
	 * the first sync tells them by the root's mtime */
	(void)copy_sync_root_record(dfd, sfd, NULL);
	r = copy_tree_fd(sfd, dfd, o, &copy_sys_libc, res);
	/* what the source (the lower directory) held at the start is the
	 * area's: what is newer there was written during the seed */
	if (r == 0 && lower)
		copy_sync_base_write(dfd, COPY_LOWER_SYNCED_XATTR, &start);
	if (r == 0 && copy_sync_base_past_writes(&end) == 0)
		copy_sync_base_write(dfd, COPY_SYNCED_XATTR, &end);
	return r;
}

int main(int argc, char **argv)
{
	struct copy_result res;
	char esc[sizeof(res.msg)];
	struct args a;
	int r, sfd, dfd = -1;

	if (parse_args(argc, argv, &a) < 0) {
		fputs("Usage: storaged-copy [--jobs N] [--label NAME] [--status-fd FD] [--src-fd FD] [--dst-fd FD] [--work-fd FD [--rescue NAME] [--verify]] SRC DST\n",
		      stderr);
		return 2;
	}
	if (parent_gone(a.status_fd))
		return 1;
	a.o.progress = isatty(STDERR_FILENO);
	r = sfd = hold(a.src, a.src_fd, &res);
	if (r >= 0)
		r = dfd = hold(a.dst, a.dst_fd, &res);
	if (r >= 0 && a.work_fd >= 0)
		r = copy_sync_fd(sfd, dfd, a.work_fd, &a.o, &copy_sys_libc, &res);
	else if (r >= 0)
		r = copy(sfd, dfd, &a.o, &res);
	if (a.status_fd >= 0 && r < 0)
		/* the line carries a positive errno (copy_spawn.c) */
		/* on one line: a name's newline escaped (util.h) */
		dprintf(a.status_fd, "%d %s\n", -res.err, text_escape_controls(res.msg, esc, sizeof(esc)));
	else if (a.status_fd >= 0)
		/* success: what it did, and what it did without (copy_spawn.c
		 * reads it into the result) */
		dprintf(a.status_fd, "0 %zu %zu %zu%s%s\n", res.n_put, res.n_deleted, res.n_kept,
			res.msg[0] ? " " : "", text_escape_controls(res.msg, esc, sizeof(esc)));
	else if (r < 0)
		fprintf(stderr, "storaged-copy: copying '%s' into '%s': %s\n", a.src, a.dst, res.msg);
	return r < 0 ? 1 : 0;
}
