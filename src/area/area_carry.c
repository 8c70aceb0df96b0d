/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The filesystems mounted below an area's directory, carried onto the
 * area: each is bound, with what is mounted below it, at its path on the
 * bind over the directory, so that it stays visible where it was; stop
 * detaches these clones by their recorded IDs, and the originals, under
 * the area all along, stay mounted where they were.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "area_internal.h"
#include "mount/mountfd.h"
#include "mount/umount.h"
#include "shared/util.h"

/* The filesystems mounted below the directory, each opened before
 * the area covers their paths: @ret_fds[i] for @targets[i], -1 after it.
 * Returns: 0 or negative errno, with one diag_error. */
int area_carry_open(const struct setup *s, char **targets, int *ret_fds, struct diag_list *m)
{
	for (size_t i = 0; targets && targets[i]; i++) {
		ret_fds[i] = mountfd_open_nofollow(AT_FDCWD, targets[i], O_PATH | O_DIRECTORY);
		if (ret_fds[i] < 0)
			return diag_errno(m, ret_fds[i], NULL, 0,
					  "area '%s': opening '%s', mounted below '%s': %s; unmount it or correct path=",
					  s->a->name, targets[i], s->a->path, strerror(-ret_fds[i]));
	}
	return 0;
}

/* The directory @rel below the area's bind @cover, made (0755) where the
 * area has none (an unseeded area), one component at a time, never
 * through a link.  Returns: O_PATH fd or negative errno. */
static int carry_target(int cover, const char *rel)
{
	_cleanup_free_ char *p = strdup(rel);
	char *save = NULL, *c;
	int dir = p ? dup(cover) : -ENOMEM, next;

	if (dir == -1)
		return -errno;
	for (c = p ? strtok_r(p, "/", &save) : NULL; dir >= 0 && c; c = strtok_r(NULL, "/", &save)) {
		next = mkdirat(dir, c, 0755) < 0 && errno != EEXIST
			       ? -errno
			       : mountfd_open_nofollow(dir, c, O_PATH | O_DIRECTORY);
		close(dir);
		dir = next;
	}
	return dir;
}

/* Each filesystem mounted below the directory is bound, with what is
 * mounted below it (AT_RECURSIVE), at its path on the area just bound over
 * the directory: it stays visible where it was, writes land on it, and
 * neither the seed (from the private view, which shows no mount below it)
 * nor the sync (from the area's private mount, which has none) copies it.
 * The clones' IDs go into the record: stop detaches them. */
int area_carry(struct setup *s, char **targets, const int *fds, struct diag_list *m)
{
	size_t plen = strlen(s->a->path);
	_cleanup_close_ int cover = -EBADF;
	int r = 0;

	if (!targets)
		return 0;
	cover = mountfd_open_id(&mountfd_kernel_ops, s->st.cover_id, O_PATH | O_DIRECTORY);
	if (cover < 0)
		return diag_errno(m, cover, NULL, 0, "area '%s': opening its bind over '%s': %s",
				  s->a->name, s->a->path, strerror(-cover));
	for (size_t i = 0; r == 0 && targets[i]; i++) {
		uint64_t id = 0, *nv = realloc(s->st.carried, (i + 1) * sizeof(*nv));
		_cleanup_close_ int dst = nv ? carry_target(cover, targets[i] + plen + 1) : -ENOMEM;
		_cleanup_close_ int mfd = -EBADF;

		if (nv)
			s->st.carried = nv;
		r = dst < 0 ? dst : mountfd_bind(&mountfd_kernel_ops, fds[i], dst, true, 0, 0, &mfd);
		if (r == 0)
			r = mountfd_id(&mountfd_kernel_ops, mfd, &id, NULL);
		if (r == 0)
			s->st.carried[s->st.n_carried++] = id;
		else if (mfd >= 0) {
			/* bound, but stop could not find it; private first, as
			 * area_carried_release() */
			mountfd_set_propagation(&mountfd_kernel_ops, mfd, MS_PRIVATE, true);
			umount_fd_detached(mfd);
		}
		if (r < 0)
			diag_error(m, NULL, 0,
				   "area '%s': carrying '%s', mounted below '%s', onto the area: %s; unmount it or correct path=",
				   s->a->name, targets[i], s->a->path, strerror(-r));
	}
	return r;
}

/* The clones of the filesystems mounted below the directory, carried onto
 * the area (setup_carry()), detached by their IDs: each is storaged's own
 * second view of a filesystem that stays mounted where it was, so a
 * process using it keeps working on that filesystem.  Made private
 * first: where "/" is shared (systemd) each clone is a peer of its
 * source, and detaching the clone of a tree would unmount the source's
 * own submounts too (umount_make_private()). */
void area_carried_release(struct state_area *st)
{
	for (size_t i = st->n_carried; i-- > 0;)
		umount_id_private(st->carried[i], MNT_DETACH);
	st->n_carried = 0;
}

struct area_carried_keep *area_carried_keep(const struct state_area *st)
{
	const struct mountfd_ops *ops = &mountfd_kernel_ops;
	struct area_carried_keep *k = calloc(st->n_carried ? st->n_carried : 1, sizeof(*k));

	for (size_t i = 0; k && i < st->n_carried; i++) {
		_cleanup_close_ int fd = mountfd_open_id(ops, st->carried[i], O_PATH | O_DIRECTORY);

		k[i].fd = fd < 0 ? -1
				 : ops->open_tree(ops->userdata, fd, "",
						  OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC |
							  AT_EMPTY_PATH | AT_RECURSIVE);
		if (k[i].fd >= 0 && mount_id_target(st->carried[i], &k[i].target) < 0)
			k[i].fd = safe_close(k[i].fd);
	}
	return k;
}

void area_carried_restore(struct state_area *st, struct area_carried_keep *k, size_t n, int recfd)
{
	const struct mountfd_ops *ops = &mountfd_kernel_ops;

	for (size_t i = 0; k && i < n; i++) {
		_cleanup_close_ int dst = k[i].fd < 0 ? -EBADF
						      : mountfd_open_nofollow(AT_FDCWD, k[i].target, O_PATH | O_DIRECTORY);
		uint64_t id = 0;

		/* only onto the area's own directory there: its bind is still on top */
		if (dst >= 0 && mountfd_id(ops, dst, &id, NULL) == 0 && id == st->cover_id &&
		    ops->move_mount(ops->userdata, k[i].fd, "", dst, "",
				    MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) == 0 &&
		    mountfd_id(ops, k[i].fd, &id, NULL) == 0 && id)
			st->carried[st->n_carried++] = id;
	}
	area_carried_keep_free(k, n);
	if (recfd >= 0)
		state_area_write_fd(recfd, st); /* the new IDs, for the next stop */
}

void area_carried_keep_free(struct area_carried_keep *k, size_t n)
{
	for (size_t i = 0; k && i < n; i++) {
		safe_close(k[i].fd); /* frees a copy that was not put back */
		free(k[i].target);
	}
	free(k);
}
