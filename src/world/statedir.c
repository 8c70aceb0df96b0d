/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "statedir.h"
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

int statedir_check(const char *dir, const struct logger *lg)
{
	struct stat st;

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

int statedir_lock(const char *dir, const struct logger *lg)
{
	_cleanup_free_ char *path = NULL;
	_cleanup_close_ int fd = -EBADF;
	int r;

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
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		int e = errno;

		log_error(lg, "'%s': %s", path,
			  e == EWOULDBLOCK ? "another storaged is running; wait for it to finish"
					   : strerror(e));
		return -e;
	}
	return TAKE_FD(fd);
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
