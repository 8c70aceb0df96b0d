/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Mount children (mount_child.h).  The child is forked for its one mount
 * and inherits the entry; its reply is one SOCK_SEQPACKET message, a
 * struct mount_reply (two for a helper that goes on in the background:
 * MOUNT_REPLY_PENDING first).
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
#include <sys/wait.h>
#include <unistd.h>

#include <libmount.h>

#include "mount_child.h"
#include "mountfd_walk.h"
#include "view.h"
#include "shared/optstr.h"
#include "shared/spawn_helper.h"
#include "shared/util.h"

/* ------------------------------------------------------------ in the child */

/* The child's socket (child_main()). */
#define REPLY_FD 3

static void send_reply(const struct mount_reply *out)
{
	send(REPLY_FD, out, sizeof(*out), MSG_NOSIGNAL);
}

/* mountfd_request.pending: a reply before the last one. */
static void send_pending(void *userdata, const char *msg)
{
	struct mount_reply *r = calloc(1, sizeof(*r)); /* padding too: zeroed */

	if (!r)
		return;
	r->error = MOUNT_REPLY_PENDING;
	snprintf(r->message, sizeof(r->message), "%s", msg);
	send_reply(r);
	free(r);
}

static const char *fstype_of(const struct fstab_entry *e)
{
	return e->fstype && strcmp(e->fstype, "auto") != 0 ? e->fstype : "";
}

/* The one mount of the child, walked from "/" (no view of its own). */
static void run_mount(const struct fstab_entry *e, const char *options)
{
	struct mount_reply *out = calloc(1, sizeof(*out));
	char helper[PATH_MAX];
	struct mountfd_request rq = {
		.bind = e->bind,
		.source = e->source,
		.target = e->target,
		.fstype = fstype_of(e),
		.options = options ? options : "",
		.rw_only = e->rw_only,
	};

	if (!out)
		return;
	/* a helper for the type makes libmount run it, as mount(8) does */
	if (mount_helper_find(NULL, rq.fstype, helper, sizeof(helper)) == 0)
		rq.helper = helper;
	rq.no_helper = rq.fstype[0] && !rq.helper;
	/* only a helper told to go on in the background may exit 0 before
	 * its mount is there (mount.nfs `bg`) */
	if (optstr_get(rq.options, "bg", NULL, NULL))
		rq.pending = send_pending;
	mountfd_walk_mount(&mountfd_kernel_ops, NULL, &rq, out);
	send_reply(out);
	free(out);
}

/* SIGTERM, or storaged gone (PR_SET_PDEATHSIG): the child ends with
 * its whole process group, the mount helper it runs included. */
static void kill_descendants(pid_t root);

static void end_with_group(int sig)
{
	kill_descendants(getpid());
	kill(0, SIGKILL);
}

/* The child keeps only stdin/stdout/stderr and its socket: it must not hold
 * storaged's lock, monitor or signalfd open after storaged is gone. */
static _Noreturn void child_main(int fd, pid_t parent, const struct fstab_entry *e, const char *options)
{
	sigset_t none;

	/* its own process group, so that a deadline kills the mount helper it
	 * runs along with it (storaged sets it too: no race) */
	setpgid(0, 0);
	/* what the helper starts in a session of its own (a FUSE daemon,
	 * mount.nfs retrying in the background) stays below the child when
	 * its parent dies, for kill_descendants() to find */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	signal(SIGTERM, end_with_group);
	signal(SIGINT, end_with_group);
	if (prctl(PR_SET_PDEATHSIG, SIGTERM) < 0 || getppid() != parent)
		_exit(1);
	/* storaged blocks SIGINT/SIGTERM for its signalfd: a child, and the
	 * mount helper it runs, must not inherit that. */
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (fd != REPLY_FD && (dup2(fd, REPLY_FD) < 0 || close(fd) < 0))
		_exit(1);
	close_range(REPLY_FD + 1, ~0U, 0);
	run_mount(e, options);
	_exit(0);
}

/* ------------------------------------------------------------ in storaged */

/* The kinds of mount that may run here, touching no device and no
 * server, and whether this pass found a mount helper for each (looked up
 * once a pass). */
static const char *const here_fstypes[MOUNT_HERE_TYPES] = { "tmpfs", "ramfs" };

static bool here_helper(struct mount_children *mc, size_t type)
{
	if (!mc->helper_checked[type]) {
		mc->helper_found[type] = mount_helper_exists(NULL, here_fstypes[type]);
		mc->helper_checked[type] = true;
	}
	return mc->helper_found[type];
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
 * which saves the fork of a child (most of the time a mount of that
 * kind takes).  Anything else, or any doubt, goes to a child.
 */
static bool runs_here(struct mount_children *mc, const struct fstab_entry *e)
{
	size_t type = here_type(e);

	if (e->loop || (!e->bind && (type == MOUNT_HERE_TYPES || here_helper(mc, type))))
		return false;
	if (view_is_local(&mc->view, e->target) != 1)
		return false;
	return !e->bind || (e->source[0] == '/' && view_is_local(&mc->view, e->source) == 1);
}

static void mount_here(struct mount_children *mc, const struct fstab_entry *e, const char *options,
		       struct mount_reply *out)
{
	int r;

	const struct mountfd_request rq = {
		.bind = e->bind,
		.source = e->source,
		.target = e->target,
		.fstype = fstype_of(e),
		.options = options ? options : "",
		.no_helper = true, /* runs_here() checked */
		.rw_only = e->rw_only,
		.view = &mc->view,
	};

	out->error = 0;
	if (!mc->cxt && !(mc->cxt = mnt_new_context())) {
		out->error = -ENOMEM;
		return;
	}
	/* one context for the pass, as `mount -a` has, for what the new API
	 * cannot take; reset by mountfd_walk_mount() */
	mnt_reset_context(mc->cxt);
	mnt_context_disable_helpers(mc->cxt, 1); /* none exists: checked */
	/* the mount point and a bind source are walked and mounted by their
	 * descriptors: a name swapped meanwhile changes nothing */
	r = mountfd_walk_mount(&mountfd_kernel_ops, mc->cxt, &rq, out);
	/* a directory kept at or below the mount point is covered now (also
	 * after a failure: a mount may have been made and undone) */
	/* a tmpfs, or a bind of a directory found to be local */
	view_mounted(&mc->view, r == 0 && out->mount.id > 0 ? (uint64_t)out->mount.id : 0, true, e->target);
	if (out->mountpoint[0])
		view_dirs_forget(&mc->view.dirs, out->mountpoint);
}

static struct mount_child *child_by_fd(struct mount_children *mc, int fd)
{
	for (size_t i = 0; i < mc->n; i++)
		if (mc->v[i].fd == fd)
			return &mc->v[i];
	return NULL;
}

static void child_remove(struct mount_children *mc, struct mount_child *c)
{
	close(c->fd);
	*c = mc->v[--mc->n];
}

/* A child that ended (@kill: or cannot be talked to) is reaped and
 * removed. */
static void child_reap(struct mount_children *mc, struct mount_child *c, bool kill_it)
{
	if (kill_it)
		kill(-c->pid, SIGKILL);
	while (waitpid(c->pid, NULL, 0) < 0 && errno == EINTR)
		;
	child_remove(mc, c);
}

/* A child of its own for the mount of @e. */
static int child_spawn(struct mount_children *mc, const struct fstab_entry *e, const char *options,
		       struct mount_child **ret)
{
	struct mount_child *nv = realloc(mc->v, (mc->n + 1) * sizeof(*nv));
	int sv[2];
	pid_t pid, parent = getpid();

	if (!nv)
		return -ENOMEM;
	mc->v = nv;
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
		child_main(sv[1], parent, e, options);
	setpgid(pid, pid);
	close(sv[1]);
	mc->v[mc->n] = (struct mount_child){ .pid = pid, .fd = sv[0] };
	*ret = &mc->v[mc->n++];
	return 0;
}

int mount_child_start(struct mount_children *mc, const struct fstab_entry *e, const char *options,
		      int *ret_fd, pid_t *ret_pid, struct mount_reply *ret_here)
{
	struct mount_child *c = NULL;
	int r;

	if (runs_here(mc, e)) {
		mount_here(mc, e, options, ret_here);
		return 1;
	}
	/* the child's mount may cover any kept directory, while it runs */
	view_dirs_forget(&mc->view.dirs, NULL);
	r = child_spawn(mc, e, options, &c);
	if (r < 0)
		return r;
	*ret_fd = c->fd;
	*ret_pid = c->pid;
	return 0;
}

int mount_child_finish(struct mount_children *mc, int fd, struct mount_reply *ret)
{
	struct mount_child *c = child_by_fd(mc, fd);
	ssize_t n;

	ret->error = 0;
	view_dirs_forget(&mc->view.dirs, NULL);
	if (!c)
		return -EBADF;
	do
		n = recv(fd, ret, sizeof(*ret), 0);
	while (n < 0 && errno == EINTR);
	if (n != (ssize_t)sizeof(*ret)) { /* died: killed, out of memory */
		child_reap(mc, c, true);
		return -EIO;
	}
	if (ret->error > 0 && ret->error != MOUNT_REPLY_PENDING)
		ret->error = -EIO;
	ret->mountpoint[sizeof(ret->mountpoint) - 1] = ret->message[sizeof(ret->message) - 1] = '\0';
	/* the last reply: the child exits after it */
	if (ret->error != MOUNT_REPLY_PENDING)
		child_reap(mc, c, false);
	return 0;
}

/*
 * Killing a child's whole tree.  This also runs in the child's signal
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
 * group (setsid): the child is a subreaper, so orphans stay below it until
 * it dies.  A few rounds catch what forked meanwhile. */
static void kill_descendants(pid_t root)
{
	for (int round = 0; round < 3 && kill_below(root) > 0; round++)
		;
}

void mount_child_abandon(struct mount_children *mc, int fd)
{
	struct mount_child *c = child_by_fd(mc, fd);
	pid_t *nv;

	if (!c)
		return;
	/* the child and the helper it runs (a mount.nfs retrying): a helper
	 * left behind could still mount after the entry was declared failed */
	kill_descendants(c->pid);
	kill(-c->pid, SIGKILL);
	if (waitpid(c->pid, NULL, WNOHANG) == 0) {
		/* stuck in the kernel: reaped at mount_children_close() if it dies by then */
		nv = realloc(mc->abandoned, (mc->n_abandoned + 1) * sizeof(*nv));
		if (nv) {
			mc->abandoned = nv;
			mc->abandoned[mc->n_abandoned++] = c->pid;
		}
	}
	child_remove(mc, c);
}

void mount_children_forget_dirs(struct mount_children *mc)
{
	view_dirs_forget(&mc->view.dirs, NULL);
}

void mount_children_close(struct mount_children *mc)
{
	for (size_t i = 0; i < mc->n; i++)
		close(mc->v[i].fd);
	for (size_t i = 0; i < mc->n; i++)
		while (waitpid(mc->v[i].pid, NULL, 0) < 0 && errno == EINTR)
			;
	for (size_t i = 0; i < mc->n_abandoned; i++)
		waitpid(mc->abandoned[i], NULL, WNOHANG);
	free(mc->abandoned);
	free(mc->v);
	view_done(&mc->view);
	mnt_free_context(mc->cxt);
	*mc = (struct mount_children){ 0 };
}
