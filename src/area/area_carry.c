/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The filesystems mounted below an area's directory, and its btrfs
 * subvolumes, carried onto the area: each is bound, with what is mounted
 * below it, at its path on the bind over the directory, so that it stays
 * visible where it was; stop detaches these clones by their recorded IDs,
 * and the originals, under the area all along, stay where they were.
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

/* Binds @fd at @rel below the area's bind @cover (with what is mounted
 * below it when @recursive) and records the clone's ID in s->st.carried.
 * Returns: 0 or negative errno (nothing left bound). */
static int carry_one(struct setup *s, int cover, int fd, const char *rel, bool recursive)
{
	uint64_t id = 0, *nv = realloc(s->st.carried, (s->st.n_carried + 1) * sizeof(*nv));
	_cleanup_close_ int dst = nv ? carry_target(cover, rel) : -ENOMEM;
	_cleanup_close_ int mfd = -EBADF;
	int r;

	if (nv)
		s->st.carried = nv;
	r = dst < 0 ? dst : mountfd_bind(&mountfd_kernel_ops, fd, dst, recursive, 0, 0, &mfd);
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
	return r;
}

static int open_cover(struct setup *s, struct diag_list *m)
{
	int cover = mountfd_open_id(&mountfd_kernel_ops, s->st.cover_id, O_PATH | O_DIRECTORY);

	if (cover < 0)
		diag_errno(m, cover, NULL, 0, "area '%s': opening its bind over '%s': %s",
			   s->a->name, s->a->path, strerror(-cover));
	return cover;
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
	if ((cover = open_cover(s, m)) < 0)
		return cover;
	for (size_t i = 0; r == 0 && targets[i]; i++)
		if ((r = carry_one(s, cover, fds[i], targets[i] + plen + 1, true)) < 0)
			diag_error(m, NULL, 0,
				   "area '%s': carrying '%s', mounted below '%s', onto the area: %s; unmount it or correct path=",
				   s->a->name, targets[i], s->a->path, strerror(-r));
	return r;
}

struct carry_subvols {
	struct setup *s;
	int cover;
	struct diag_list *m;
};

static int carry_subvol(void *userdata, int fd, const char *rel)
{
	struct carry_subvols *c = userdata;
	int r = carry_one(c->s, c->cover, fd, rel, false);

	if (r < 0)
		diag_error(c->m, NULL, 0,
			   "area '%s': carrying the subvolume '%s/%s' onto the area: %s; the area would hide it: move it out of '%s' or correct path=",
			   c->s->a->name, c->s->a->path, rel, c->s->a->path, strerror(-r));
	return r;
}

/* The btrfs subvolumes and snapshots below the directory are not mounts,
 * but the seed and the sync leave them out as they do mounts (another
 * device: copy.h): each is carried as a mounted filesystem is, bound at
 * its place on the area from the directory's private view s->d.lower (the
 * one the seed read: found after the seed, every directory it left empty
 * is found, and one made since as well), before the mounts below the
 * directory are (area_carry(): one mounted inside a subvolume lands on
 * the subvolume's clone, not under it).  What is written there goes
 * straight to the disk, as into a mounted filesystem below the directory:
 * nothing of it waits for a sync, nothing is lost at stop. */
int area_carry_subvolumes(struct setup *s, struct diag_list *m)
{
	_cleanup_close_ int lower = area_open_nofollow(s->d.lower, O_RDONLY | O_DIRECTORY);
	struct carry_subvols c = { .s = s, .cover = -EBADF, .m = m };
	size_t n0 = diag_count(m, DIAG_ERROR);
	int r;

	if (lower < 0)
		return diag_errno(m, lower, NULL, 0, "area '%s': opening '%s': %s", s->a->name,
				  s->d.lower, strerror(-lower));
	if ((c.cover = open_cover(s, m)) < 0)
		return c.cover;
	r = area_subvolumes(lower, carry_subvol, &c);
	if (r < 0 && diag_count(m, DIAG_ERROR) == n0)
		diag_error(m, NULL, 0, "area '%s': looking for subvolumes below '%s': %s", s->a->name,
			   s->a->path, strerror(-r));
	close(c.cover);
	return r;
}

/* The clones of the filesystems mounted below the directory, carried onto
 * the area (area_carry()), detached by their IDs: each is storaged's own
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

/* A detached copy of the carried clone @id, with what is mounted below
 * it, made private: a copy joins its original's peer groups, and where
 * the clones are shared (systemd: "/" is) area_carried_release()
 * detaching the clone of a mount inside a carried subvolume would
 * propagate to the subvolume copy's peer and unmount the copy's child
 * too; the subvolume would come back without it.  Returns: the copy's
 * fd or negative errno. */
static int carried_copy(uint64_t id)
{
	const struct mountfd_ops *ops = &mountfd_kernel_ops;
	_cleanup_close_ int fd = mountfd_open_id(ops, id, O_PATH | O_DIRECTORY);
	_cleanup_close_ int copy = fd < 0 ? fd
					  : ops->open_tree(ops->userdata, fd, "",
							   OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH |
								   AT_RECURSIVE);
	int r = copy < 0 ? copy : mountfd_set_propagation(ops, copy, MS_PRIVATE, true);

	return r < 0 ? r : TAKE_FD(copy);
}

struct area_carried_keep *area_carried_keep(const struct state_area *st)
{
	struct area_carried_keep *k = calloc(st->n_carried ? st->n_carried : 1, sizeof(*k));

	for (size_t i = 0; k && i < st->n_carried; i++) {
		k[i].fd = carried_copy(st->carried[i]);
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

		/* only onto the area's own directory there: its bind is still on
		 * top (a mount inside a carried subvolume came back with the
		 * subvolume's copy, AT_RECURSIVE: it is not put back twice) */
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
