/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "statedir.h"
#include "state/atomic_file.h"
#include "shared/units.h"
#include "shared/notify.h"
#include "shared/util.h"

/* A link: whoever can change it decides what stop unmounts, so the remedy
 * is the directory itself, not an owner or a mode. */
static int refuse_link(const char *dir, const struct logger *lg)
{
	char target[PATH_MAX];
	_cleanup_free_ char *real = realpath(dir, NULL);
	ssize_t n = readlink(dir, target, sizeof(target) - 1);

	target[n < 0 ? 0 : n] = '\0';
	if (real)
		log_error(lg, "state directory '%s' is a symbolic link (to '%s'); storaged does not follow it: give the directory itself (--state-dir %s), or replace the link with a directory owned by root",
			  dir, target, real);
	else
		log_error(lg, "state directory '%s' is a symbolic link (to '%s', which does not exist); storaged does not follow it: remove the link (`rm %s`), and storaged makes the directory",
			  dir, target, dir);
	return -EPERM;
}

/* Only root can rename or replace the entry @st in the directory @up: @up
 * is root's and closed to group and others, or root's and sticky (as /tmp,
 * where only an entry's owner may rename it) with the entry root's. */
static bool only_root_replaces(const struct stat *up, const struct stat *st)
{
	if (up->st_uid != 0)
		return false;
	if (!(up->st_mode & (S_IWGRP | S_IWOTH)))
		return true;
	return (up->st_mode & S_ISVTX) && st->st_uid == 0;
}

/* Why the entry @path (status @st) in the directory @up_path (status @up)
 * lets another user replace the state directory, with the remedy. */
static int refuse_ancestor(const char *dir, const char *up_path, const struct stat *up,
			   const char *path, const struct stat *st, const struct logger *lg)
{
	if (up->st_uid == 0 && (up->st_mode & S_ISVTX))
		log_error(lg, "state directory '%s': '%s' is owned by uid %u in the everyone-writable directory '%s', so that user can replace what is below it, and with it what `storaged stop` unmounts; keep the state directory where only root can write (the default is /run/storaged), or `chown root:root %s`",
			  dir, path, (unsigned)st->st_uid, up_path, path);
	else
		log_error(lg, "state directory '%s': '%s' above it is owned by uid %u, mode %04o, so a user other than root can replace the state directory, and with it what `storaged stop` unmounts; keep the state directory where only root can write (the default is /run/storaged), or `chown root:root %s; chmod go-w %s`",
			  dir, up_path, (unsigned)up->st_uid, (unsigned)(up->st_mode & 07777),
			  up_path, up_path);
	return -EPERM;
}

/* Each link on @parent as written (absolute, modified and restored) is
 * root's where only root can replace it: else its owner, or who can write
 * the directory it is in, could point the state directory elsewhere. */
static int check_links(const char *dir, char *parent, const char *real, const struct logger *lg)
{
	struct stat up, st;

	for (char *end = parent + 1;; end++) {
		char c = *end, *slash;

		if (c && c != '/')
			continue;
		*end = '\0';
		if (lstat(parent, &st) == 0 && S_ISLNK(st.st_mode)) {
			slash = strrchr(parent, '/');
			*slash = '\0';
			if (stat(*parent ? parent : "/", &up) == 0 && !only_root_replaces(&up, &st)) {
				log_error(lg, "state directory '%s': '%s/%s' is a symbolic link owned by uid %u in '%s' (owned by uid %u, mode %04o): a user other than root could point it elsewhere, and with it what `storaged stop` unmounts; give --state-dir the path without it (%s/%s)",
					  dir, parent, slash + 1, (unsigned)st.st_uid,
					  *parent ? parent : "/", (unsigned)up.st_uid,
					  (unsigned)(up.st_mode & 07777), real, strrchr(dir, '/') + 1);
				*slash = '/';
				*end = c;
				return -EPERM;
			}
			*slash = '/';
		}
		*end = c;
		if (!c)
			return 0;
	}
}

/* Every directory from "/" down to @dir (absolute; it need not exist yet)
 * can be changed by root alone: the path with its links resolved
 * (realpath(3) of the parent) is checked entry by entry, and each link on
 * the path as written must itself be root's where only root can replace it
 * (check_links()), so that no user can point the path elsewhere later. */
static int check_ancestors(const char *dir, const struct logger *lg)
{
	const char *name = strrchr(dir, '/') + 1;
	_cleanup_free_ char *parent = strndup(dir, (size_t)(name - 1 - dir)), *real = NULL, *path = NULL;
	struct stat up, st;

	if (!parent)
		return -ENOMEM;
	real = realpath(*parent ? parent : "/", NULL);
	if (!real)
		return errno == ENOMEM ? -ENOMEM : 0; /* missing: mkdir says so */
	/* @dir itself as a link has its own advice (refuse_link()) */
	if (*parent && check_links(dir, parent, real, lg) < 0)
		return -EPERM;
	if (asprintf(&path, "%s/%s", streq(real, "/") ? "" : real, name) < 0)
		return -ENOMEM;
	if (lstat("/", &up) < 0)
		return -errno;
	/* each entry of @path in turn, in the one above it: "/a", "/a/b", ... */
	for (char *end = path + 1;; end++) {
		char c = *end;
		bool missing;

		if (c && c != '/')
			continue;
		*end = '\0';
		missing = lstat(path, &st) < 0;
		if (missing && errno != ENOENT)
			return -errno;
		if (missing) /* made by root (mkdir says if it cannot be) */
			st = (struct stat){ .st_uid = 0, .st_mode = S_IFDIR | 0755 };
		if (!only_root_replaces(&up, &st)) {
			_cleanup_free_ char *up_path = strndup(path, (size_t)(strrchr(path, '/') - path));

			return up_path ? refuse_ancestor(dir, *up_path ? up_path : "/", &up, path, &st, lg)
				       : -ENOMEM;
		}
		*end = c;
		if (!c || missing)
			return 0;
		up = st;
	}
}

int statedir_check(const char *dir, const struct logger *lg)
{
	struct stat st;
	int r = check_ancestors(dir, lg);

	if (r < 0)
		return r == -ENOMEM ? r : -EPERM;
	if (lstat(dir, &st) < 0) {
		if (errno == ENOENT)
			return 0;
		log_error(lg, "state directory '%s': %s", dir, strerror(errno));
		return -EPERM;
	}
	if (S_ISLNK(st.st_mode))
		return refuse_link(dir, lg);
	if (!S_ISDIR(st.st_mode)) {
		log_error(lg, "state directory '%s' is not a directory; move it away (`mv %s %s.old`), or use another --state-dir",
			  dir, dir, dir);
		return -EPERM;
	}
	/* what stop later trusts must be root's from the start */
	if (st.st_uid != 0 || (st.st_mode & (S_IWGRP | S_IWOTH))) {
		log_error(lg, "state directory '%s' is owned by uid %u, mode %04o: storaged trusts only a directory owned by root that group and others cannot write; check who changed it, then `chown root:root %s; chmod go-w %s`",
			  dir, (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777), dir, dir);
		return -EPERM;
	}
	return 0;
}

/* The process that holds the flock(2) on the open file @fd, as the kernel
 * lists it in /proc/locks (proc_locks(5): "N: FLOCK ADVISORY WRITE <pid>
 * <major>:<minor>:<inode> 0 EOF"; a waiter's line has "->" for its type).
 * Returns: the pid, still running; 0 when none is found (a lock taken
 * before a fork names the parent, which may have left). */
static pid_t lock_holder(int fd)
{
	_cleanup_fclose_ FILE *f = fopen("/proc/locks", "re");
	char line[256], type[16];
	unsigned maj, min;
	unsigned long long ino;
	struct stat st;
	int pid;

	if (!f || fstat(fd, &st) < 0)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%*u: %15s %*s %*s %d %x:%x:%llu", type, &pid, &maj, &min, &ino) == 5 &&
		    streq(type, "FLOCK") && maj == major(st.st_dev) && min == minor(st.st_dev) &&
		    ino == (unsigned long long)st.st_ino)
			return pid > 0 && kill(pid, 0) == 0 ? pid : 0;
	return 0;
}

/* SIGINT or SIGTERM waits, blocked, for a resident's loop (resident.c):
 * the wait gives way to it. */
static bool stop_pending(void)
{
	sigset_t set;

	return sigpending(&set) == 0 &&
	       (sigismember(&set, SIGINT) == 1 || sigismember(&set, SIGTERM) == 1);
}

/* Waits at most @wait_sec for the lock on @fd, saying after a second whom
 * it waits for, and when the wait ran out, who held it.  Returns: 0;
 * -EWOULDBLOCK (the wait ran out); -EINTR (SIGINT or SIGTERM pending);
 * negative errno of flock(2). */
static int wait_lock(int fd, const char *path, unsigned wait_sec, const struct logger *lg)
{
	char who[48] = "another storaged";
	pid_t pid;

	for (unsigned tenths = 0;; tenths++) {
		if (flock(fd, LOCK_EX | LOCK_NB) == 0)
			return 0;
		if (errno != EWOULDBLOCK) {
			int e = errno;

			log_error(lg, "'%s': %s", path, strerror(e));
			return -e;
		}
		if (tenths % 10 == 0 && (pid = lock_holder(fd)) > 0)
			snprintf(who, sizeof(who), "another storaged (pid %d)", (int)pid);
		/* a service manager's timeout (90 s too by default) must not end
		 * the wait before it can say who held the lock */
		if (tenths == 0)
			notify_send("EXTEND_TIMEOUT_USEC=%llu\nSTATUS=waiting up to %us for %s",
				    (unsigned long long)(wait_sec * USEC_PER_SEC + NOTIFY_EXTEND_MARGIN_USEC),
				    wait_sec, who);
		if (tenths == 10)
			log_info(lg, "%s holds '%s': waiting for it to finish, at most %u s", who,
				 path, wait_sec);
		if (stop_pending())
			return -EINTR;
		if (tenths >= wait_sec * 10) {
			log_error(lg, "'%s' is still held by %s after %u s; this storaged did nothing: run it again once that one has finished (`storaged status` shows what is set up)",
				  path, who, wait_sec);
			return -EWOULDBLOCK;
		}
		usleep(100 * 1000);
	}
}

unsigned statedir_lock_wait_sec(void)
{
	const char *s = secure_getenv("STORAGED_TEST_LOCK_WAIT");
	uint64_t v;

	if (s && s[0] && units_parse_uint(s, 3600, &v) == 0)
		return (unsigned)v;
	return STATEDIR_LOCK_WAIT_SEC;
}

int statedir_lock(const char *dir, unsigned wait_sec, const struct logger *lg)
{
	_cleanup_free_ char *path = NULL;
	_cleanup_close_ int fd = -EBADF;
	int r = statedir_check(dir, lg); /* nothing made where another user could replace it */

	if (r < 0)
		return r;
	if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
		log_error(lg, "cannot create state directory '%s': %s; use another --state-dir", dir,
			  strerror(errno));
		return -EPERM;
	}
	r = statedir_check(dir, lg);
	if (r < 0)
		return r;
	if (asprintf(&path, "%s/lock", dir) < 0)
		return -ENOMEM;
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		log_error(lg, "'%s': %s; storaged cannot keep its state in '%s': use another --state-dir",
			  path, strerror(errno), dir);
		return -EPERM;
	}
	r = wait_lock(fd, path, wait_sec, lg);
	return r < 0 ? r : TAKE_FD(fd);
}

/* Why <dir>/state itself (the directory passed statedir_check()) is not
 * trusted, with what fixes it. */
static void word_untrusted_file(const char *dir, const struct logger *lg)
{
	struct stat st;

	if (lstat(dir, &st) == 0 && S_ISDIR(st.st_mode)) {
		_cleanup_free_ char *path = NULL;

		if (asprintf(&path, "%s/state", dir) < 0 || lstat(path, &st) < 0)
			return;
		if (!S_ISREG(st.st_mode)) {
			log_error(lg, "'%s' is not a regular file%s; storaged does not know what it mounted: if no storaged runs, move it away (`mv %s %s.old`) and unmount storaged's mounts by hand",
				  path, S_ISLNK(st.st_mode) ? " but a symbolic link" : "", path, path);
			return;
		}
		log_error(lg, "'%s' is owned by uid %u, mode %04o; storaged does not trust what it says was mounted: check who changed it, then `chown root:root %s; chmod go-w %s`",
			  path, (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777), path, path);
	}
}

int statedir_load_state(const char *dir, const struct logger *lg, struct state *st)
{
	unsigned line = 0;
	int r = statedir_check(dir, lg);

	if (r < 0)
		return r;
	r = state_load(dir, st, &line);
	if (r == -EPERM || r == -ELOOP) /* ELOOP: a link, not followed */
		word_untrusted_file(dir, lg);
	else if (r == -ENODATA)
		log_error(lg, "%s/state: empty, which storaged never leaves it (it writes a header first): the file was cut short; if no storaged runs, remove it (storaged then forgets what it mounted: unmount those by hand)",
			  dir);
	else if (r == -EBADMSG)
		log_error(lg, "%s/state:%u: corrupt; if no storaged runs, remove the file (storaged then forgets what it mounted: unmount those by hand)",
			  dir, line);
	else if (r < 0)
		log_error(lg, "'%s/state': %s", dir, strerror(-r));
	else if (st->torn_bytes)
		log_warning(lg, "'%s/state': its last %zu bytes are a record storaged was writing when it was stopped short; ignored (the step it was about is not recorded as done)",
			    dir, st->torn_bytes);
	return r == -ENOMEM ? r : r < 0 ? -EPERM : 0;
}

int statedir_save_state(const char *dir, const struct logger *lg, struct state *st)
{
	int r = state_save(dir, st);

	if (r < 0) {
		log_error(lg, "cannot write the state file '%s/state': %s; `%s stop` cannot undo what it does not know: make room or make it writable, or use another --state-dir",
			  dir, strerror(-r), log_self(lg));
		return -EPERM;
	}
	return 0;
}

static int write_begun(FILE *f, const void *ud)
{
	const int64_t *now = ud;

	return fprintf(f, "start %lld\n", (long long)*now) < 0 ? -EIO : 0;
}

int statedir_run_begin(const char *dir)
{
	_cleanup_free_ char *path = NULL;
	int64_t now = (int64_t)time(NULL);

	if (asprintf(&path, "%s/" STATEDIR_UNFINISHED, dir) < 0)
		return -ENOMEM;
	return file_write_atomic(path, 0644, write_begun, &now);
}

int statedir_run_end(const char *dir)
{
	_cleanup_free_ char *path = NULL;

	if (asprintf(&path, "%s/" STATEDIR_UNFINISHED, dir) < 0)
		return -ENOMEM;
	return file_atomic_remove(path);
}

int statedir_run_unfinished(const char *dir, int64_t *ret_began)
{
	_cleanup_free_ char *path = NULL;
	char buf[64] = "";
	uint64_t began = 0;
	FILE *f;

	if (asprintf(&path, "%s/" STATEDIR_UNFINISHED, dir) < 0)
		return -ENOMEM;
	f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? 0 : -errno;
	if (fgets(buf, sizeof(buf), f))
		buf[strcspn(buf, "\n")] = '\0';
	fclose(f);
	/* a word storaged did not write reads as "when: not said" */
	if (!has_prefix(buf, "start ") || units_parse_uint(buf + 6, INT64_MAX, &began) < 0)
		began = 0;
	*ret_began = (int64_t)began;
	return 1;
}
