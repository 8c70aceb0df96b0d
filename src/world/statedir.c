/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "statedir.h"
#include "shared/util.h"

int statedir_lock(const char *dir, const struct logger *lg)
{
	_cleanup_free_ char *path = NULL;
	struct stat st;
	_cleanup_close_ int fd = -EBADF;

	if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
		log_error(lg, "cannot create state directory '%s': %s", dir, strerror(errno));
		return -errno;
	}
	/* what stop later trusts must be root's from the start */
	if (lstat(dir, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != 0 ||
	    (st.st_mode & (S_IWGRP | S_IWOTH))) {
		log_error(lg, "state directory '%s' is not a directory owned by root that group and others cannot write; use another --state-dir, or `chown root:root %s; chmod 0755 %s`",
			  dir, dir, dir);
		return -EPERM;
	}
	if (asprintf(&path, "%s/lock", dir) < 0)
		return -ENOMEM;
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0 || flock(fd, LOCK_EX | LOCK_NB) < 0) {
		int e = errno;

		log_error(lg, "'%s': %s", path,
			  e == EWOULDBLOCK ? "another storaged is running; wait for it to finish"
					   : strerror(e));
		return -e;
	}
	return TAKE_FD(fd);
}

int statedir_load_state(const char *dir, const struct logger *lg, struct state *st)
{
	unsigned line = 0;
	int r = state_load(dir, st, &line);

	if (r == -EPERM)
		log_error(lg, "'%s/state': the directory or the file is not owned by root or is writable by group or others; storaged does not trust what it says was mounted: check who changed it, then `chown root:root %s %s/state; chmod go-w %s %s/state`",
			  dir, dir, dir, dir, dir);
	else if (r == -EBADMSG)
		log_error(lg, "%s/state:%u: corrupt; if no storaged runs, remove the file (storaged then forgets what it mounted: unmount those by hand)",
			  dir, line);
	else if (r < 0)
		log_error(lg, "'%s/state': %s", dir, strerror(-r));
	else if (st->torn_bytes)
		log_warning(lg, "'%s/state': its last %zu bytes are a record storaged was writing when it was stopped short; ignored (the step it was about is not recorded as done)",
			    dir, st->torn_bytes);
	return r;
}
