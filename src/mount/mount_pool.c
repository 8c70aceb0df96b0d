/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Mount workers (mount_pool.h).  Request, one SOCK_SEQPACKET message:
 * a flag byte ('b' for a bind entry, '-' otherwise), then source, target,
 * fstype ("" for auto) and options ("" for none), each NUL-terminated
 * (paths cannot hold a NUL).  Reply: struct reply_head, then the mount point
 * and the message, each NUL-terminated.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <libmount.h>

#include "mount_pool.h"
#include "mountfd_walk.h"
#include "view.h"
#include "shared/optstr.h"
#include "shared/spawn_helper.h"
#include "shared/util.h"

#define REQUEST_MAX (4 * PATH_MAX + 65536)

struct reply_head {
	int32_t error;
	struct mount_identity mount;
};

/* ------------------------------------------------------------ in the worker */

static int parse_request(char *buf, size_t n, struct mountfd_request *rq)
{
	const char **field[] = { &rq->source, &rq->target, &rq->fstype, &rq->options };
	size_t off = 1;

	if (n < 1 || buf[n - 1] != '\0')
		return -EBADMSG;
	rq->bind = buf[0] == 'b';
	for (size_t i = 0; i < ARRAY_SIZE(field); i++) {
		if (off >= n)
			return -EBADMSG;
		*field[i] = buf + off;
		off += strlen(buf + off) + 1;
	}
	return 0;
}

static int send_reply(int fd, const struct mount_reply *out)
{
	struct reply_head h;
	struct iovec iov[3] = {
		{ &h, sizeof(h) },
		{ (void *)out->mountpoint, strlen(out->mountpoint) + 1 },
		{ (void *)out->message, strlen(out->message) + 1 },
	};

	/* the padding after .error goes over the socket too: zeroed, not
	 * whatever the stack held */
	memset(&h, 0, sizeof(h));
	h.error = out->error;
	h.mount = out->mount;
	return writev(fd, iov, 3) < 0 ? -errno : 0;
}

/* mountfd_request.pending: a reply before the last one. */
static void send_pending(void *userdata, const char *msg)
{
	struct mount_reply *r = malloc(sizeof(*r));

	if (!r)
		return;
	*r = (struct mount_reply){ .error = MOUNT_REPLY_PENDING };
	snprintf(r->message, sizeof(r->message), "%s", msg);
	send_reply(3, r);
	free(r);
}

static void serve(int fd, char *buf, struct mount_reply *out)
{
	struct mountfd_request rq;
	char helper[PATH_MAX];
	ssize_t n;

	while ((n = recv(fd, buf, REQUEST_MAX, 0)) > 0) {
		out->mount = (struct mount_identity){ 0 };
		out->mountpoint[0] = out->message[0] = '\0';
		rq = (struct mountfd_request){ 0 }; /* no view of its own: each walk from "/" */
		out->error = parse_request(buf, (size_t)n, &rq);
		if (out->error == 0) {
			/* a helper for the type makes libmount run it, as before */
			if (mount_helper_find(NULL, rq.fstype, helper, sizeof(helper)) == 0)
				rq.helper = helper;
			rq.no_helper = rq.fstype[0] && !rq.helper;
			/* only a helper told to go on in the background may exit 0
			 * before its mount is there (mount.nfs `bg`) */
			if (optstr_get(rq.options, "bg", NULL, NULL))
				rq.pending = send_pending; /* fd is 3 (worker_main) */
			mountfd_walk_mount(&mountfd_kernel_ops, NULL, &rq, out);
		}
		if (send_reply(fd, out) < 0)
			break;
	}
}

/* SIGTERM, or storaged gone (PR_SET_PDEATHSIG): the worker ends with
 * its whole process group, the mount helper it runs included. */
static void kill_descendants(pid_t root);

static void end_with_group(int sig)
{
	kill_descendants(getpid());
	kill(0, SIGKILL);
}

/* The worker keeps only stdin/stdout/stderr and its socket: it must not hold
 * storaged's lock, monitor or signalfd open after storaged is gone. */
static _Noreturn void worker_main(int fd, pid_t parent)
{
	struct mount_reply *out = malloc(sizeof(*out));
	char *buf = malloc(REQUEST_MAX);
	sigset_t none;

	/* its own process group, so that a deadline kills the mount helpers it
	 * runs along with it (storaged sets it too: no race) */
	setpgid(0, 0);
	/* what the helper starts in a session of its own (a FUSE daemon,
	 * mount.nfs retrying in the background) stays below the worker when
	 * its parent dies, for kill_tree() to find */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	signal(SIGTERM, end_with_group);
	signal(SIGINT, end_with_group);
	if (prctl(PR_SET_PDEATHSIG, SIGTERM) < 0 || getppid() != parent)
		_exit(1);
	/* storaged blocks SIGINT/SIGTERM for its signalfd: a worker, and the
	 * mount helpers it runs, must not inherit that. */
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (fd != 3 && (dup2(fd, 3) < 0 || close(fd) < 0))
		_exit(1);
	close_range(4, ~0U, 0);
	if (buf && out)
		serve(3, buf, out);
	_exit(0);
}

/* ------------------------------------------------------------ in storaged */

/* The kinds of mount that may run here, touching no device and no
 * server, and whether this pass found a mount helper for each (looked up
 * once a pass). */
static const char *const here_fstypes[MOUNT_HERE_TYPES] = { "tmpfs", "ramfs" };

static bool here_helper(struct mount_pool *pool, size_t type)
{
	if (!pool->helper_checked[type]) {
		pool->helper_found[type] = mount_helper_exists(NULL, here_fstypes[type]);
		pool->helper_checked[type] = true;
	}
	return pool->helper_found[type];
}

/* Index in here_fstypes of @e's type, or MOUNT_HERE_TYPES. */
static size_t here_type(const struct fstab_entry *e)
{
	size_t i = 0;

	while (i < MOUNT_HERE_TYPES && !streq(e->fstype, here_fstypes[i]))
		i++;
	return i;
}

/*
 * A tmpfs, a ramfs or a bind mount whose paths lead only through local
 * filesystems, with no mount helper, cannot hang: storaged runs it itself,
 * which saves the round trip to a worker (most of the time a mount of that
 * kind takes).  Anything else, or any doubt, goes to a worker.
 */
static bool runs_here(struct mount_pool *pool, const struct fstab_entry *e)
{
	size_t type = here_type(e);

	if (e->loop || (!e->bind && (type == MOUNT_HERE_TYPES || here_helper(pool, type))))
		return false;
	if (view_is_local(&pool->view, e->target) != 1)
		return false;
	return !e->bind || (e->source[0] == '/' && view_is_local(&pool->view, e->source) == 1);
}

static void mount_here(struct mount_pool *pool, const struct fstab_entry *e, const char *options,
		       struct mount_reply *out)
{
	int r;

	const struct mountfd_request rq = {
		.bind = e->bind,
		.source = e->source,
		.target = e->target,
		.fstype = e->fstype && strcmp(e->fstype, "auto") != 0 ? e->fstype : "",
		.options = options ? options : "",
		.no_helper = true, /* runs_here() checked */
		.view = &pool->view,
	};

	out->error = 0;
	if (!pool->cxt && !(pool->cxt = mnt_new_context())) {
		out->error = -ENOMEM;
		return;
	}
	/* one context for the pass, as `mount -a` has, for what the new API
	 * cannot take; reset by mountfd_walk_mount() */
	mnt_reset_context(pool->cxt);
	mnt_context_disable_helpers(pool->cxt, 1); /* none exists: checked */
	/* the mount point and a bind source are walked and mounted by their
	 * descriptors: a name swapped meanwhile changes nothing */
	r = mountfd_walk_mount(&mountfd_kernel_ops, pool->cxt, &rq, out);
	/* a directory kept at or below the mount point is covered now (also
	 * after a failure: a mount may have been made and undone) */
	/* a tmpfs, or a bind of a directory found to be local */
	view_mounted(&pool->view, r == 0 && out->mount.id > 0 ? (uint64_t)out->mount.id : 0, true, e->target);
	if (out->mountpoint[0])
		view_dirs_forget(&pool->view.dirs, out->mountpoint);
}

static struct mount_worker *worker_by_fd(struct mount_pool *pool, int fd)
{
	for (size_t i = 0; i < pool->n; i++)
		if (pool->v[i].fd == fd)
			return &pool->v[i];
	return NULL;
}

static void worker_remove(struct mount_pool *pool, struct mount_worker *w)
{
	close(w->fd);
	*w = pool->v[--pool->n];
}

/* A worker that died or cannot be talked to: reaped and removed, so that
 * the next mount forks a new one. */
static void worker_discard(struct mount_pool *pool, struct mount_worker *w)
{
	kill(-w->pid, SIGKILL);
	waitpid(w->pid, NULL, 0);
	worker_remove(pool, w);
}

static int worker_spawn(struct mount_pool *pool, struct mount_worker **ret)
{
	struct mount_worker *nv = realloc(pool->v, (pool->n + 1) * sizeof(*nv));
	int sv[2];
	pid_t pid, parent = getpid();

	if (!nv)
		return -ENOMEM;
	pool->v = nv;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return -errno;
	pid = fork();
	if (pid < 0) {
		int r = -errno;

		close(sv[0]);
		close(sv[1]);
		return r;
	}
	if (pid == 0)
		worker_main(sv[1], parent);
	setpgid(pid, pid);
	close(sv[1]);
	pool->v[pool->n] = (struct mount_worker){ .pid = pid, .fd = sv[0] };
	*ret = &pool->v[pool->n++];
	return 0;
}

static int worker_idle(struct mount_pool *pool, struct mount_worker **ret)
{
	for (size_t i = 0; i < pool->n; i++)
		if (!pool->v[i].busy) {
			*ret = &pool->v[i];
			return 0;
		}
	return worker_spawn(pool, ret);
}

static int format_request(const struct fstab_entry *e, const char *options, char **ret, size_t *ret_len)
{
	const char *fstype = e->fstype && strcmp(e->fstype, "auto") != 0 ? e->fstype : "";
	int n = asprintf(ret, "%c%s%c%s%c%s%c%s", e->bind ? 'b' : '-', e->source, '\0', e->target,
			 '\0', fstype, '\0', options ? options : "");

	if (n < 0)
		return -ENOMEM;
	*ret_len = (size_t)n + 1;
	return *ret_len > REQUEST_MAX ? -E2BIG : 0;
}

int mount_pool_start(struct mount_pool *pool, const struct fstab_entry *e, const char *options,
		     int *ret_fd, pid_t *ret_pid, struct mount_reply *ret_here)
{
	_cleanup_free_ char *req = NULL;
	struct mount_worker *w = NULL;
	size_t len;
	int r;

	if (runs_here(pool, e)) {
		mount_here(pool, e, options, ret_here);
		return 1;
	}
	/* a worker's mount may cover any kept directory, while it runs */
	view_dirs_forget(&pool->view.dirs, NULL);
	r = format_request(e, options, &req, &len);
	if (r < 0)
		return r;
	r = worker_idle(pool, &w);
	if (r < 0)
		return r;
	if (send(w->fd, req, len, MSG_NOSIGNAL) < 0) {
		r = -errno; /* the worker died while idle */
		worker_discard(pool, w);
		return r;
	}
	w->busy = true;
	*ret_fd = w->fd;
	*ret_pid = w->pid;
	return 0;
}

static int parse_reply(const char *buf, size_t n, struct mount_reply *ret)
{
	struct reply_head h;
	const char *mp = buf + sizeof(h), *msg;

	if (n < sizeof(h) + 2 || buf[n - 1] != '\0')
		return -EIO;
	memcpy(&h, buf, sizeof(h));
	msg = mp + strnlen(mp, n - sizeof(h)) + 1;
	if (msg >= buf + n)
		return -EIO;
	ret->error = h.error > 0 && h.error != MOUNT_REPLY_PENDING ? -EIO : h.error;
	ret->mount = h.mount;
	snprintf(ret->mountpoint, sizeof(ret->mountpoint), "%s", mp);
	snprintf(ret->message, sizeof(ret->message), "%s", msg);
	return 0;
}

int mount_pool_finish(struct mount_pool *pool, int fd, struct mount_reply *ret)
{
	struct mount_worker *w = worker_by_fd(pool, fd);
	char buf[sizeof(struct reply_head) + sizeof(ret->mountpoint) + sizeof(ret->message)];
	ssize_t n;
	int r;

	ret->error = 0;
	view_dirs_forget(&pool->view.dirs, NULL);
	if (!w)
		return -EBADF;
	do
		n = recv(fd, buf, sizeof(buf), 0);
	while (n < 0 && errno == EINTR);
	r = n > 0 ? parse_reply(buf, (size_t)n, ret) : -EIO;
	if (r < 0) { /* died: killed, out of memory */
		worker_discard(pool, w);
		return r;
	}
	/* a reply before the last one: the mount goes on */
	w->busy = ret->error == MOUNT_REPLY_PENDING;
	return 0;
}

/*
 * Killing a worker's whole tree.  This also runs in the worker's signal
 * handler (storaged gone: PR_SET_PDEATHSIG), so it uses only
 * async-signal-safe calls: no stdio, no malloc, no opendir().
 */

/* "/proc/<pid>/stat" into @buf (at least 32 bytes). */
static void stat_path(pid_t pid, char *buf)
{
	char digits[16];
	size_t n = 0, k = 0;

	do
		digits[n++] = (char)('0' + pid % 10);
	while ((pid /= 10) > 0 && n < sizeof(digits));
	memcpy(buf, "/proc/", 6);
	k = 6;
	while (n > 0)
		buf[k++] = digits[--n];
	memcpy(buf + k, "/stat", 6);
}

static pid_t parse_pid(const char *s)
{
	long v = 0;

	while (*s >= '0' && *s <= '9' && v < INT32_MAX / 10)
		v = v * 10 + (*s++ - '0');
	return (pid_t)v;
}

/* The parent of @pid from /proc/PID/stat, or 0. */
static pid_t parent_of(pid_t pid)
{
	char path[32], buf[512];
	ssize_t n;
	_cleanup_close_ int fd = -EBADF;

	stat_path(pid, path);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	/* "PID (COMM) STATE PPID ...": COMM may hold anything, even ") " */
	while (n > 0 && buf[n - 1] != ')')
		n--;
	if (n <= 0 || n + 3 >= (ssize_t)sizeof(buf) - 1)
		return 0;
	buf[sizeof(buf) - 1] = '\0';
	return parse_pid(buf + n + 3); /* ") S PPID" */
}

struct dirent64_raw { /* getdents64(2) */
	uint64_t d_ino;
	int64_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

/* SIGKILL to each process below @root; returns how many. */
static size_t kill_below(pid_t root)
{
	char buf[4096];
	size_t signalled = 0;
	long n;
	_cleanup_close_ int dir = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	while (dir >= 0 && (n = syscall(SYS_getdents64, dir, buf, sizeof(buf))) > 0)
		for (long off = 0; off < n;) {
			const struct dirent64_raw *de = (const void *)(buf + off);
			pid_t pid = parse_pid(de->d_name), p = pid;
			int depth = 0;

			off += de->d_reclen;
			if (pid <= 1 || pid == root)
				continue;
			while (p > 1 && p != root && depth++ < 64)
				p = parent_of(p);
			if (p == root && kill(pid, SIGKILL) == 0)
				signalled++;
		}
	return signalled;
}

/* SIGKILL to every process below @root, also those that left its process
 * group (setsid): the worker is a subreaper, so orphans stay below it until
 * it dies.  A few rounds catch what forked meanwhile. */
static void kill_descendants(pid_t root)
{
	for (int round = 0; round < 3 && kill_below(root) > 0; round++)
		;
}

void mount_pool_abandon(struct mount_pool *pool, int fd)
{
	struct mount_worker *w = worker_by_fd(pool, fd);
	pid_t *nv;

	if (!w)
		return;
	/* the worker and the helper it runs (a mount.nfs retrying): a helper
	 * left behind could still mount after the entry was declared failed */
	kill_descendants(w->pid);
	kill(-w->pid, SIGKILL);
	if (waitpid(w->pid, NULL, WNOHANG) == 0) {
		/* stuck in the kernel: reaped at mount_pool_close() if it dies by then */
		nv = realloc(pool->abandoned, (pool->n_abandoned + 1) * sizeof(*nv));
		if (nv) {
			pool->abandoned = nv;
			pool->abandoned[pool->n_abandoned++] = w->pid;
		}
	}
	worker_remove(pool, w);
}

void mount_pool_forget_dirs(struct mount_pool *pool)
{
	view_dirs_forget(&pool->view.dirs, NULL);
}

void mount_pool_close(struct mount_pool *pool)
{
	for (size_t i = 0; i < pool->n; i++)
		close(pool->v[i].fd);
	for (size_t i = 0; i < pool->n; i++)
		while (waitpid(pool->v[i].pid, NULL, 0) < 0 && errno == EINTR)
			;
	for (size_t i = 0; i < pool->n_abandoned; i++)
		waitpid(pool->abandoned[i], NULL, WNOHANG);
	free(pool->abandoned);
	free(pool->v);
	view_done(&pool->view);
	mnt_free_context(pool->cxt);
	*pool = (struct mount_pool){ 0 };
}
