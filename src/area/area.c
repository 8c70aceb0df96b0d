/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * RAM build areas: setup and teardown, each undone step by step when it
 * fails.  See area.h for the contracts, area_internal.h for the other
 * files of the module, and DESIGN.md ("Faults and bad input") for the rules.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <linux/magic.h>
#include <time.h>
#include <unistd.h>

#include "area_internal.h"
#include "area_precheck.h"
#include "copy/copy_spawn.h"
#include "mount/mountfd.h"
#include "mount/umount.h"
#include "parse/area_facts.h"
#include "shared/sysinfo.h"
#include "state/atomic_file.h"
#include "shared/util.h"

/* ---------------------------------------------------------------- setup */

/* A storaged killed while copying leaves storaged-copy and its workers
 * dying (they hold a shared flock() on the area's root until then, see
 * storaged-copy.c): waiting for them keeps the umounts from failing busy. */
static void wait_for_copy(const char *area)
{
	_cleanup_close_ int fd = -EBADF;

	if (!area_is_mount_of(area, NULL))
		return;
	fd = open(area, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	while (fd >= 0 && flock(fd, LOCK_EX) < 0 && errno == EINTR)
		;
}

static void setup_undo(struct setup *s)
{
	/* an interrupted seed: the helper's workers may still be dying */
	if (s->area_mounted)
		wait_for_copy(s->d.area);
	area_carried_release(&s->st);
	/* the bind over the directory by its recorded ID: the directory's
	 * name may lead elsewhere now */
	if (s->path_bound && s->st.cover_id)
		umount_id(s->st.cover_id, 0);
	/* the area's descriptor holds its mount: it would stay busy */
	s->area_fd = safe_close(s->area_fd);
	/* d.lower and d.area: in the state directory, root's alone */
	if (s->lower_bound)
		umount_private_path(s->d.lower, 0);
	if (s->area_mounted && umount_private_path(s->d.area, 0) < 0)
		umount_private_path(s->d.area, MNT_DETACH);
	area_backend_release(&s->st, NULL);
	if (s->made_top) {
		unlink(s->d.state);
		rmdir(s->d.area);
		rmdir(s->d.lower);
		rmdir(s->d.top);
	}
}

static int mkdir_if_missing(const char *path, mode_t mode)
{
	if (mkdir(path, mode) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

static int setup_dirs(struct setup *s, const char *state_dir, struct diag_list *m)
{
	_cleanup_free_ char *areas = NULL;
	int r;

	if (asprintf(&areas, "%s/areas", state_dir) < 0)
		return -ENOMEM;
	if ((r = mkdir_if_missing(state_dir, 0755)) < 0 || (r = mkdir_if_missing(areas, 0700)) < 0)
		goto fail;
	if (mkdir(s->d.top, 0700) < 0) {
		r = -errno;
		goto fail;
	}
	s->made_top = true;
	if (mkdir(s->d.area, 0700) < 0 || mkdir(s->d.lower, 0700) < 0) {
		r = -errno;
		goto fail;
	}
	return 0;
fail:
	if (r == -EEXIST)
		diag_error(m, NULL, 0, "area '%s': creating '%s': %s: a previous run left it: run `%s stop` first",
			   s->a->name, s->d.top, strerror(-r), area_self(&s->d));
	else
		diag_error(m, NULL, 0, "area '%s': creating '%s': %s", s->a->name, s->d.top, strerror(-r));
	return r;
}

/* Binds @src_fd onto @dst_fd (both opened without following links) with
 * the new mount API, with the attributes @attr (MOUNT_ATTR_*) from the
 * start: no name is looked up again between the checks and the mount.
 * @ret_id: the new mount's ID (STATX_MNT_ID), or NULL. */
static int bind_fd(int src_fd, int dst_fd, unsigned int attr, bool private, uint64_t *ret_id)
{
	_cleanup_close_ int mfd = -EBADF;
	int r;

	r = mountfd_bind(&mountfd_kernel_ops, src_fd, dst_fd, false, attr, private ? MS_PRIVATE : 0, &mfd);
	if (r == 0 && ret_id)
		r = mountfd_id(&mountfd_kernel_ops, mfd, ret_id, NULL);
	if (r < 0 && mfd >= 0)
		umount_fd_detached(mfd); /* bound, but without its ID */
	return r;
}

/* The ID of the mount on @path (opened without following any link) when it
 * is the root of a mount of the filesystem of @area, or of an overlay
 * when @overlay (seed = overlay: its upper layer is in the area); 0 when
 * there is none.  For a record of an older storaged, or a setup killed
 * before it wrote the ID. */
static uint64_t cover_id_at(const char *path, const char *area, bool overlay)
{
	struct statx a, b;
	struct statfs f;
	_cleanup_close_ int fd = mountfd_open_nofollow(AT_FDCWD, path, O_PATH | O_DIRECTORY);

	if (overlay && fd >= 0 && fstatfs(fd, &f) == 0 && f.f_type == OVERLAYFS_SUPER_MAGIC &&
	    statx(fd, "", AT_EMPTY_PATH, STATX_BASIC_STATS | STATX_MNT_ID, &a) == 0 &&
	    (a.stx_attributes & STATX_ATTR_MOUNT_ROOT) && (a.stx_mask & STATX_MNT_ID))
		return a.stx_mnt_id;
	if (fd >= 0 && statx(fd, "", AT_EMPTY_PATH, STATX_BASIC_STATS | STATX_MNT_ID, &a) == 0 &&
	    (a.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) &&
	    (a.stx_attributes & STATX_ATTR_MOUNT_ROOT) && (a.stx_mask & STATX_MNT_ID) &&
	    statx(AT_FDCWD, area, AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS, &b) == 0 &&
	    a.stx_dev_major == b.stx_dev_major && a.stx_dev_minor == b.stx_dev_minor)
		return a.stx_mnt_id;
	return 0;
}

/* The directory (through its private bind d.lower, which shows no mount
 * below it) into the area's root (s->area_fd), both by descriptor. */
static int setup_seed(struct setup *s, struct diag_list *m)
{
	struct copy_result c = { 0 };
	struct statvfs v;
	_cleanup_close_ int lower = area_open_nofollow(s->d.lower, O_PATH | O_DIRECTORY);
	int r;

	if (lower < 0) {
		diag_error(m, NULL, 0, "area '%s': opening '%s': %s", s->a->name, s->d.lower,
			   strerror(-lower));
		return lower;
	}
	r = copy_spawn_run(lower, s->area_fd, s->d.lower, s->d.area, s->a->name, &c);
	if (r == 0)
		return 0;
	if (r == -ENOSPC && statvfs(s->d.area, &v) == 0)
		diag_error(m, NULL, 0, "area '%s' (%s): seeding from '%s' ran out of %s: raise %s",
			   s->a->name, s->st.device, s->a->path, v.f_favail == 0 ? "inodes" : "blocks",
			   v.f_favail == 0 ? "inodes=" : "size=");
	else
		diag_error(m, NULL, 0, "area '%s' (%s): seeding from '%s' failed: %s", s->a->name,
			   s->st.device, s->a->path, c.msg);
	return r;
}

/* root of the area: owner and mode of the directory, or the configured ones */
static int setup_root(struct setup *s, const struct stat *root)
{
	return area_set_root_owner(s->d.area, s->a, root);
}

static int setup_state_init(struct setup *s)
{
	s->st.name = strdup(s->a->name);
	s->st.path = strdup(s->a->path);
	s->st.fs = strdup(area_fstype(s->a));
	s->st.backend = s->a->backend;
	s->st.persist = s->a->persist;
	s->st.seeded = s->a->seed;
	s->st.sync_interval_usec = s->a->persist ? s->a->sync_interval_usec : 0;
	s->st.overlay = s->a->overlay;
	s->st.size_bytes = s->sz->size_bytes;
	s->st.nr_inodes = s->sz->nr_inodes;
	s->st.started_usec = realtime_usec();
	return s->st.name && s->st.path && s->st.fs ? 0 : -ENOMEM;
}

/* The file @a's section is in, for "(FILE:LINE)": an area built in code
 * has none, and is the default configuration's. */
static const char *area_config_file(const struct area_config *a)
{
	return a->file ? a->file : CONFIG_DEFAULT_PATH;
}

/* 1 when the record of a finished setup of area @name is there (in @st)
 * and its bind over the directory (by its recorded ID) too: nothing to do;
 * 0 when there is no such record (a setup killed midway is undone by
 * recover_interrupted()); -EEXIST when someone unmounted or moved that
 * bind (@why: the refusal, for the user): undoing it here would drop the
 * area's content without a word, stop says what becomes of it. */
static int existing_setup(const struct area_dirs *d, const char *name, struct state_area *st, char *why,
			  size_t len)
{
	_cleanup_close_ int fd = open(d->state, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	char how[PATH_MAX + 128];

	if (fd < 0 || state_area_read_fd(fd, st) < 0 || !st->covered)
		return 0;
	if (area_state_of(d, st, how, sizeof(how)) != AREA_STATE_GONE)
		return 1;
	snprintf(why, len, "area '%s' was set up, but %s: run `%s stop` first", name, how, area_self(d));
	return -EEXIST;
}

static int area_check_existing(const struct area_dirs *d, const struct area_config *a, struct diag_list *m)
{
	struct state_area st = { .resource_id = -1 };
	char why[PATH_MAX + 512];
	int r = existing_setup(d, a->name, &st, why, sizeof(why));

	if (r < 0)
		diag_error(m, NULL, 0, "%s", why);
	/* the area in RAM stays where it is: moving it is a stop's sync
	 * back and a new setup, which the user decides */
	else if (r > 0 && st.path && strcmp(st.path, a->path) != 0)
		diag_warning(m, NULL, 0, "area '%s' is set up on '%s', while %s:%u now says path = %s: it stays on '%s' until `%s stop` syncs it back there; `%s start` then sets it up on the new path",
			     a->name, st.path, area_config_file(a), a->path_line ? a->path_line : a->line,
			     a->path, st.path, area_self(d), area_self(d));
	state_area_done(&st);
	return r;
}

/* Another area set up on @a's path, or holding it or inside it (a section
 * renamed or removed, or its path changed, while its area was active): an
 * area over it would take the other's RAM for its directory, seed from it
 * and sync into it.  Returns: 0; -EBUSY, @why saying which and what to do. */
static int path_taken(const char *state_dir, const char *self, const struct area_config *a, char *why,
		      size_t len)
{
	struct area_status *areas;
	size_t n;
	int r = 0;

	if (area_status_list(state_dir, self, false, &areas, &n) < 0)
		return 0; /* the setup's own steps say what is wrong there */
	for (size_t i = 0; i < n && r == 0; i++) {
		const struct area_status *o = &areas[i];

		if (strcmp(o->name, a->name) == 0 || !o->path || o->state == AREA_STATE_GONE ||
		    !(strcmp(o->path, a->path) == 0 || path_is_below(a->path, o->path) ||
		      path_is_below(o->path, a->path)))
			continue;
		snprintf(why, len, "area '%s' (%s:%u): '%s' is covered by area '%s', set up on '%s' before its section was renamed, removed or given another path: run `%s stop`, which syncs it back, then start",
			 a->name, area_config_file(a), a->line, a->path, o->name, o->path, self);
		r = -EBUSY;
	}
	area_status_free(areas, n);
	return r;
}

int area_found_set_up(const char *state_dir, const char *self, const struct area_config *a, char **ret_path,
		      char *why, size_t len)
{
	struct state_area st = { .resource_id = -1 };
	struct area_dirs d;
	int r = area_dirs_init(&d, state_dir, a->name, self);

	if (r < 0)
		return r;
	r = existing_setup(&d, a->name, &st, why, len);
	if (r == 0 && path_taken(state_dir, self, a, why, len) < 0)
		r = -EEXIST;
	if (r > 0) {
		*ret_path = st.path;
		st.path = NULL;
	}
	state_area_done(&st);
	area_dirs_done(&d);
	return r;
}

static int area_check_path_taken(const struct area_dirs *d, const struct area_config *a,
				 const char *state_dir, struct diag_list *m)
{
	char why[PATH_MAX * 2 + 512];
	int r = path_taken(state_dir, area_self(d), a, why, sizeof(why));

	if (r < 0)
		diag_error(m, NULL, 0, "%s", why);
	return r;
}

/*
 * A setup killed midway (kill -9, a crash) leaves the area's directory
 * without a state file that describes an active area, and maybe the area
 * mounted, the directory's private bind, even the bind over the directory.
 * Undo what is there, so that this setup starts afresh; the directory is
 * uncovered only when what covers it is this area.
 */
static int recover_interrupted(struct setup *s, struct diag_list *m)
{
	struct state_area old = { .resource_id = -1 };
	_cleanup_free_ char *tmp = NULL;
	_cleanup_close_ int fd = -EBADF;
	int r;

	if (access(s->d.top, F_OK) < 0)
		return 0;
	fd = open(s->d.state, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd >= 0)
		state_area_read_fd(fd, &old); /* a damaged record: @old stays empty */
	/* by its ID, found where the name leads only when no record has it */
	if (old.cover_id || (old.cover_id = cover_id_at(s->a->path, s->d.area, old.overlay || s->a->overlay)))
		umount_id(old.cover_id, 0);
	if (area_is_mount_of(s->d.lower, NULL) && umount_private_path(s->d.lower, 0) < 0)
		umount_private_path(s->d.lower, MNT_DETACH);
	if (area_is_mount_of(s->d.area, NULL) && umount_private_path(s->d.area, 0) < 0)
		umount_private_path(s->d.area, MNT_DETACH);
	area_backend_release(&old, NULL);
	state_area_done(&old);
	/* and an older storaged's temporary record */
	if (asprintf(&tmp, "%s.tmp", s->d.state) < 0)
		return -ENOMEM;
	unlink(tmp);
	file_atomic_remove(s->d.state);
	rmdir(s->d.area);
	rmdir(s->d.lower);
	if (rmdir(s->d.top) < 0 && errno != ENOENT) {
		r = diag_error(m, NULL, 0,
			       "area '%s': '%s', left by an interrupted run, cannot be removed: %s; look at what is mounted below it",
			       s->a->name, s->d.top, strerror(errno));
		return r < 0 ? r : -EBUSY;
	}
	return diag_warning(m, NULL, 0, "area '%s': removed what an interrupted setup left in '%s'",
			    s->a->name, s->d.top);
}

static int setup_cover(struct setup *s, const struct stat *root, struct diag_list *m)
{
	/* a sync killed before a reboot left its marked working directory */
	int r = area_recover_sync(s->path_fd, root->st_dev, s->a->name, NULL);
	_cleanup_close_ int fd = -EBADF;

	if (r < 0) {
		diag_error(m, NULL, 0, "area '%s': removing what an interrupted sync left in '%s': %s",
			   s->a->name, s->a->path, strerror(-r));
		return r;
	}
	fd = mountfd_open_nofollow(AT_FDCWD, s->d.lower, O_PATH | O_DIRECTORY);
	r = fd < 0 ? fd : bind_fd(s->path_fd, fd, 0, true, NULL);
	if (r < 0) {
		diag_error(m, NULL, 0, "area '%s': binding '%s' on '%s': %s", s->a->name,
			   s->a->path, s->d.lower, strerror(-r));
		return r;
	}
	s->lower_bound = true;
	if (s->a->seed && (r = setup_seed(s, m)) < 0)
		return r;
	if ((r = setup_root(s, root)) < 0) {
		diag_error(m, NULL, 0, "area '%s': owner and mode of '%s': %s", s->a->name,
			   s->d.area, strerror(-r));
		return r;
	}
	if (s->a->overlay && (r = area_overlay_prepare(s, root, m)) < 0)
		return r;
	area_warn_open_files(s->a->name, s->a->path, AREA_OPEN_COVERED, m);
	/* written ahead of the bind: a setup killed after it is found and
	 * undone by the next start or by stop (the area is complete here) */
	r = state_area_write(s->d.state, &s->st);
	if (r < 0) {
		diag_error(m, NULL, 0, "area '%s': writing '%s': %s", s->a->name, s->d.state,
			   strerror(-r));
		return r;
	}
	/* onto the directory that was checked and opened (s->path_fd), never
	 * onto its name, which a user may have swapped for a link meanwhile;
	 * the ID is kept so that stop unmounts this mount and no other */
	if (s->a->overlay)
		return area_overlay_cover(s, area_mount_attr(s->a), m);
	r = bind_fd(s->area_fd, s->path_fd, area_mount_attr(s->a), false, &s->st.cover_id);
	if (r < 0)
		diag_error(m, NULL, 0, "area '%s': binding the area over '%s': %s", s->a->name,
			   s->a->path, strerror(-r));
	return r;
}

static int setup_steps(struct setup *s, const char *state_dir, struct diag_list *m)
{
	_cleanup_strv_free_ char **below = NULL;
	struct area_survey sv = { 0 };
	struct stat root;
	int *fds = NULL, r;

	if (fstat(s->path_fd, &root) < 0)
		return -errno;
	/* a ramdisk's real room is known only after mkfs: survey for area_backend_check_room() */
	if (s->a->seed && area_is_ramdisk(s->a) && (r = area_survey_path(s->a->path, &sv)) < 0) {
		diag_error(m, NULL, 0, "area '%s': reading '%s': %s", s->a->name, s->a->path,
			   strerror(-r));
		return r;
	}
	if ((r = area_submounts(s->a->path, &below)) < 0)
		return r;
	fds = malloc((strv_length(below) + 1) * sizeof(*fds));
	for (size_t i = 0; fds && i <= strv_length(below); i++)
		fds[i] = -1;
	if (!fds)
		r = -ENOMEM;
	if (r < 0 || (r = area_carry_open(s, below, fds, m)) < 0 || (r = setup_state_init(s)) < 0 ||
	    (r = setup_dirs(s, state_dir, m)) < 0 || (r = area_backend_create(s, &root, m)) < 0 ||
	    (r = area_backend_check_room(s, &sv, m)) < 0)
		goto out;
	r = setup_cover(s, &root, m);
	if (r < 0)
		goto out;
	s->path_bound = true;
	s->st.covered = true;
	/* subvolumes first: a filesystem mounted inside one lands on its clone */
	if ((r = area_carry_subvolumes(s, m)) < 0 || (r = area_carry(s, below, fds, m)) < 0)
		goto out;
	r = state_area_write(s->d.state, &s->st);
	if (r < 0)
		diag_error(m, NULL, 0, "area '%s': writing '%s': %s", s->a->name, s->d.state,
			   strerror(-r));
out:
	for (size_t i = 0; fds && fds[i] >= 0; i++)
		close(fds[i]);
	free(fds);
	return r;
}

/* An area planned on a filesystem that was not mounted yet is surveyed and
 * sized now, on the filesystem it will cover. */
static int size_now(const struct area_config *a, uint64_t ram_bytes, struct area_sizing *ret,
		    struct diag_list *m)
{
	struct area_survey sv = { 0 };
	int r = area_survey_path(a->path, &sv);

	if (r < 0) {
		sv.valid = false;
		sv.error = r;
	}
	r = area_size_resolve(a, &sv, ram_bytes, ret);
	if (r < 0)
		diag_error(m, NULL, 0,
			   "area '%s': path '%s': %s; create the directory on the filesystem it is on, or correct path= (%s:%u)",
			   a->name, a->path, strerror(sv.valid ? -r : -sv.error), area_config_file(a),
			   a->path_line ? a->path_line : a->line);
	return r;
}

int area_setup(const struct area_config *a, const struct area_sizing *sz, const char *state_dir,
	       const char *self, struct diag_list *msgs)
{
	struct setup s = { .a = a, .sz = sz, .st = { .resource_id = -1 }, .path_fd = -1, .area_fd = -1 };
	size_t n0 = diag_count(msgs, DIAG_ERROR);
	struct sysinfo_memory mem;
	struct area_sizing now;
	char why[512];
	int r;

	sysinfo_memory(NULL, &mem); /* unreadable: all 0, unknown */
	if (!sz) {
		if ((r = size_now(a, mem.total, &now, msgs)) < 0)
			return r;
		s.sz = sz = &now;
	}
	if ((r = area_dirs_init(&s.d, state_dir, a->name, self)) < 0)
		return r;
	if ((r = area_check_existing(&s.d, a, msgs)) != 0 ||
	    (r = area_check_path_taken(&s.d, a, state_dir, msgs)) < 0)
		goto out;
	if ((r = recover_interrupted(&s, msgs)) < 0)
		goto out;
	if (a->seed && !sz->fits) {
		diag_error(msgs, NULL, 0, "area '%s' (%s): %s", a->name, a->path, sz->why);
		r = -ENOSPC;
		goto out;
	}
	if ((r = area_precheck(a, sz, &mem, why, sizeof(why))) < 0) {
		diag_error(msgs, NULL, 0, "%s", why);
		goto out;
	}
	s.path_fd = area_open_nofollow(a->path, O_PATH | O_DIRECTORY);
	if (s.path_fd < 0) {
		r = s.path_fd;
		diag_error(msgs, NULL, 0, "area '%s': opening '%s' (symlinks are not followed): %s; correct path= (%s:%u)",
			   a->name, a->path, strerror(-r), area_config_file(a), a->path_line ? a->path_line : a->line);
		goto out;
	}
	r = setup_steps(&s, state_dir, msgs);
	if (r < 0) {
		if (diag_count(msgs, DIAG_ERROR) == n0)
			diag_error(msgs, NULL, 0, "area '%s' (%s): %s", a->name, a->path, strerror(-r));
		setup_undo(&s);
	}
out:
	safe_close(s.path_fd);
	safe_close(s.area_fd);
	state_area_done(&s.st);
	area_dirs_done(&s.d);
	return r;
}

/* ---------------------------------------------------------------- teardown */

/* Unmounts the private mount @what of area @name.  @killed_setup: a
 * private view of a setup killed before its record existed: nobody but
 * storaged's own dying helpers can still use it (its copy helper may not
 * have taken its lock when storaged died), so a busy one is detached
 * instead of holding stop for ever; the user's directory is not touched. */
static int umount_private(const struct area_dirs *d, const char *name, const char *what, bool killed_setup,
			  struct diag_list *m)
{
	char q[PATH_MAX * 4 + 3];
	int r;

	if (!area_is_mount_of(what, NULL))
		return 0;
	r = umount_private_path(what, 0);
	if (r == -EBUSY && killed_setup && umount_private_path(what, MNT_DETACH) == 0) {
		diag_warning(m, NULL, 0, "area '%s': '%s', left by a killed start, was busy: detached", name, what);
		return 0;
	}
	if (r == 0)
		return 0;
	if (r == -EBUSY)
		area_warn_open_files(name, what, AREA_OPEN_BUSY, m);
	if (r == -EBUSY)
		diag_error(m, NULL, 0, "area '%s': unmounting '%s': %s: stop the processes using it (fuser -vm %s) and run `%s stop` again",
			   name, what, strerror(-r), shell_quote(what, q, sizeof(q)), area_self(d));
	else
		diag_error(m, NULL, 0, "area '%s': unmounting '%s': %s", name, what, strerror(-r));
	return r;
}

/* A walk of a path through a mount holds it for an instant (a writer
 * meeting EROFS on the frozen bind, a stat): such a busy mount is tried
 * again for a while; an open file or a working directory holds it for
 * good, and is named then. */
#define BUSY_TRIES 40
#define BUSY_WAIT_USEC (50 * 1000) /* µs: two seconds in all */

static int umount_id_waiting(uint64_t id)
{
	int r;

	for (int i = 0; (r = umount_id(id, 0)) == -EBUSY && i < BUSY_TRIES; i++)
		usleep(BUSY_WAIT_USEC);
	return r;
}

/* The bind over the directory, by the mount ID recorded at setup (or, from
 * an older record, the one found on the path opened without links): the
 * directory's name may lead elsewhere now.  Only when the mount
 * table still shows it (@f), on the area's filesystem: a freed ID may
 * name a stranger's mount now. */
static int umount_cover(const struct state_area *st, const struct area_dirs *d,
			const struct area_mounts *f, struct diag_list *m)
{
	uint64_t id = st->cover_id ? st->cover_id : cover_id_at(st->path, d->area, st->overlay);
	const char *at = f->cover_at_path ? st->path : f->moved_to;
	char q[PATH_MAX * 4 + 3];
	int r;

	if (!id || !f->cover_present)
		return 0; /* not covered, or unmounted by someone else */
	r = umount_id_waiting(id);
	if (r == 0 || r == -ESTALE)
		return 0; /* ours is gone: whatever is there now is not ours */
	if (r == -EBUSY && area_explain_busy(d, st, true, m) > 0)
		return diag_errno(m, r, NULL, 0, "area '%s': unmounting '%s': %s: unmount what was mounted on it and run `%s stop` again",
				  st->name, at, strerror(-r), area_self(d));
	if (r == -EBUSY)
		return diag_errno(m, r, NULL, 0,
				  "area '%s': unmounting '%s': %s: stop the processes using it (fuser -vm %s) and run `%s stop` again",
				  st->name, at, strerror(-r), shell_quote(at, q, sizeof(q)), area_self(d));
	diag_error(m, NULL, 0, "area '%s': unmounting '%s': %s%s", st->name, st->path, strerror(-r),
		   r == -ELOOP ? ": the path to it holds a symbolic link now" : "");
	return r;
}

/* A persist area that cannot be synced back (someone uncovered its
 * directory, or unmounted a private mount of it): the first stop keeps it
 * and says where its content is; the next one discards it.  When its
 * content is gone already, that is said.  Returns: 0 when the changes are
 * lost (said): the teardown goes on and reports an error at the end;
 * -ESTALE when they are kept: stop here. */
/* Where an area that cannot be synced back still shows its content, or
 * NULL.  An overlay's upper layer alone is no tree to copy from: its
 * merged view is, while it is there. */
static const char *content_at(const struct area_dirs *d, const struct state_area *st,
			      const struct area_mounts *f)
{
	if (f->cover_at_path && (st->overlay || !f->area_mounted))
		return st->path;
	if (f->area_mounted)
		return d->area;
	return f->cover_present ? f->moved_to : NULL;
}

static int unsyncable(const struct area_dirs *d, int recfd, struct state_area *st,
		      const struct area_mounts *f, struct diag_list *m)
{
	char why[PATH_MAX + 128];
	const char *where = content_at(d, st, f);

	area_mounts_describe(f, st->path, why, sizeof(why));
	if (!where) {
		diag_error(m, NULL, 0,
			   "area '%s': %s, and its private mount too: the changes made in it since start are lost, not synced back into '%s'",
			   st->name, why, st->path);
		return 0;
	}
	if (st->sync_refused) {
		diag_error(m, NULL, 0,
			   "area '%s': %s: its content was discarded, not synced back into '%s' (the previous stop kept it in '%s' for you to copy)",
			   st->name, why, st->path, where);
		return 0;
	}
	st->sync_refused = true;
	if (state_area_write_fd(recfd, st) < 0)
		st->sync_refused = false;
	if (st->sync_refused)
		diag_error(m, NULL, 0,
			   "area '%s': %s: its changes are not synced back into '%s'%s; they are kept in '%s': copy what you need from there; the next `%s stop` discards them",
			   st->name, why, st->path,
			   f->cover_at_path ? "" : ", which may hold files written to it while it was uncovered",
			   where, area_self(d));
	else
		diag_error(m, NULL, 0,
			   "area '%s': %s: its changes are not synced back into '%s'%s; they are kept in '%s': copy what you need from there",
			   st->name, why, st->path,
			   f->cover_at_path ? "" : ", which may hold files written to it while it was uncovered",
			   where);
	return -ESTALE;
}

/* A persist area whose bind over its directory is gone (unmounted or
 * moved by someone else) while both private mounts are there: the sync
 * back takes the directory's own changes into account (the three-way rule
 * of copy_sync_fd(): an entry changed in the directory only is kept, one
 * changed on both sides is kept twice).  Returns: as area_sync_locked(). */
static int sync_uncovered(const struct area_dirs *d, int recfd, struct state_area *st,
			  const struct area_mounts *f, size_t *ret_changes, struct diag_list *m)
{
	char why[PATH_MAX + 128];

	area_mounts_describe(f, st->path, why, sizeof(why));
	diag_warning(m, NULL, 0,
		     "area '%s': %s: syncing it back, keeping what was written to '%s' meanwhile", st->name,
		     why, st->path);
	return area_sync_locked(d, recfd, st, ret_changes, true, m);
}

/* The record says a stop is under way (@begins) or that it failed and
 * said why: only a stop killed midway leaves the mark, which `status`
 * shows (area_status.c) until a stop finishes.  Returns: 0 or negative
 * errno from writing the record. */
static int stop_begins(int recfd, struct state_area *st, bool begins)
{
	st->stop_started_usec = begins ? realtime_usec() : 0;
	st->stop_synced = false;
	return state_area_write_fd(recfd, st);
}

/* The stop's sync back is done and the bind over the directory goes
 * next (an overlay's: is gone, AREA_SYNC_OVERLAY): a stop killed after
 * that finds the bind gone by its own doing, and nothing written since
 * (the area's filesystem is reachable only through storaged's own
 * private mount then).  Returns: as state_area_write_fd(). */
static int stop_synced(int recfd, struct state_area *st)
{
	st->stop_synced = true;
	return state_area_write_fd(recfd, st);
}

/* seed = overlay: the upper layer is applied to the directory once the
 * overlay is unmounted (a change to the lower layer of a mounted overlay
 * is undefined: area_overlay.c), from the area and through the private
 * bind, which must both be there.  Returns: as area_overlay_sync(); 0
 * with *@lost when they are gone. */
static int overlay_stop_sync(const struct area_dirs *d, int recfd, struct state_area *st, bool *lost,
			     struct diag_list *m)
{
	size_t changes = 0;
	int r;

	if (!area_is_mount_of(d->area, NULL) || !area_is_mount_of(d->lower, NULL)) {
		*lost = true;
		diag_error(m, NULL, 0,
			   "area '%s': its private mount '%s' or '%s' is gone: the changes made in it since start are lost, not synced back into '%s'",
			   st->name, d->area, d->lower, st->path);
		return 0;
	}
	r = area_overlay_sync(d, recfd, st, false, &changes, m);
	if (r == 0 && changes > 0)
		area_note_synced(st, false, m);
	return r;
}

/* A stop's sync back is its last: from here on, no write through the bind
 * over the directory may land in the area, where the teardown would
 * discard it.  The bind is made read-only first (a writer then meets
 * EROFS, as on a filesystem being unmounted), which the kernel refuses
 * while a file is open for writing through it: then the stop stops here,
 * naming who holds it.  Returns: 0 (*@frozen: the bind is read-only now;
 * false for a record without the bind's ID); -EBUSY (said); negative
 * errno (said). */
static int freeze_cover(const struct area_dirs *d, const struct state_area *st, bool *frozen,
			struct diag_list *m)
{
	char q[PATH_MAX * 4 + 3];
	int r;

	*frozen = false;
	if (!st->cover_id)
		return 0; /* an older storaged's record: synced as it was */
	/* a writer between open and close holds it for an instant: a file
	 * held open for writing holds it for good */
	for (int i = 0; (r = umount_set_readonly(st->cover_id, true)) == -EBUSY && i < BUSY_TRIES; i++)
		usleep(BUSY_WAIT_USEC);
	/* not where its path leads (something mounted over it): no write by
	 * path reaches it, and the stop names what covers it */
	if (r == -ESTALE)
		return 0;
	if (r == -EBUSY) {
		area_explain_busy(d, st, true, m);
		return diag_errno(m, r, NULL, 0,
				  "area '%s': files in '%s' are open for writing: what they write after the last sync would be lost; close them (fuser -vm %s names who holds them) and run `%s stop` again",
				  st->name, st->path, shell_quote(st->path, q, sizeof(q)), area_self(d));
	}
	if (r < 0)
		return diag_errno(m, r, NULL, 0, "area '%s': making its bind over '%s' read-only for the last sync: %s",
				  st->name, st->path, strerror(-r));
	*frozen = true;
	return 0;
}

static int teardown_locked(const struct area_dirs *d, int recfd, struct state_area *st,
			   bool do_sync, struct diag_list *m)
{
	struct area_carried_keep *keep;
	struct area_mounts f;
	enum area_sync_how how;
	bool lost = false, both, synced, uncovered = false, frozen = false;
	/* a stop that was killed, or failed once the overlay was unmounted */
	bool resumed = st->stop_started_usec != 0;
	size_t n_keep, changes = 0;
	int r = area_mounts_probe(d, st, &f), gone = 0;

	if (r < 0) {
		diag_error(m, NULL, 0, "area '%s': reading the mount table: %s", st->name, strerror(-r));
		goto out;
	}
	/* a stop killed after its sync back removed the bind itself: all
	 * there is to do is the rest of the teardown */
	synced = do_sync && st->stop_synced && !f.cover_present;
	if (do_sync && !synced && (r = stop_begins(recfd, st, true)) < 0)
		goto out;
	how = st->persist && do_sync && !synced ? area_mounts_sync_how(&f, st->overlay) : AREA_SYNC_NONE;
	/* a sync into a directory no longer at its path would fail, or land
	 * where nobody looks: the whole tree is kept near that path instead */
	if (how != AREA_SYNC_NONE && how != AREA_SYNC_UNSYNCABLE &&
	    (gone = area_dir_at_path(d, st, &f)) < 0) {
		if ((f.cover_present && (r = freeze_cover(d, st, &frozen, m)) < 0) ||
		    (r = area_rescue_whole(d, st, &f, gone, m)) < 0)
			goto out;
		how = AREA_SYNC_NONE;
	}
	if (how == AREA_SYNC_LOCKED && (r = freeze_cover(d, st, &frozen, m)) < 0)
		goto out;
	if (how == AREA_SYNC_LOCKED)
		r = area_sync_locked(d, recfd, st, &changes, true, m);
	else if (how == AREA_SYNC_UNCOVERED)
		r = sync_uncovered(d, recfd, st, &f, &changes, m);
	else if (how == AREA_SYNC_UNSYNCABLE)
		r = unsyncable(d, recfd, st, &f, m);
	/* unsyncable() returns 0 only once it said the changes are lost */
	lost = how == AREA_SYNC_UNSYNCABLE && r == 0;
	/* committed, with entries changed on both sides kept twice in the
	 * directory (said): nothing of the area is left only in it */
	both = r == -COPY_SYNC_KEPT_BOTH;
	if (both)
		r = 0;
	if (r == 0 && st->persist && do_sync && st->sync_kept_both && !lost && !both) {
		/* an earlier sync's, said then once: the last word on them
		 * (where this stop's sync found some itself, it said those,
		 * and status names them all) */
		diag_error(m, NULL, 0,
			   "area '%s': an earlier sync back into '%s' found %s: compare the two and keep what you need",
			   st->name, st->path, st->sync_kept_both);
		both = true;
	}
	if (r < 0)
		goto out;
	/* only a sync that carried something says so, as `sync` does: a
	 * stop after a quiet boot prints nothing of it */
	if ((how == AREA_SYNC_LOCKED || how == AREA_SYNC_UNCOVERED) && (changes > 0 || both))
		area_note_synced(st, both, m);
	/* an overlay gone while a stop was under way: that stop's own doing */
	if (!lost && !synced && !gone && how != AREA_SYNC_UNCOVERED &&
	    !(how == AREA_SYNC_OVERLAY && resumed) && f.recorded &&
	    area_mounts_state(&f) == AREA_STATE_GONE) {
		char why[PATH_MAX + 128];

		area_mounts_describe(&f, st->path, why, sizeof(why));
		if (how == AREA_SYNC_OVERLAY)
			/* the upper layer holds the area's work: applied, as
			 * the directory's own writes meanwhile are kept only
			 * where the area changed nothing */
			diag_warning(m, NULL, 0,
				     "area '%s': %s: its upper layer is applied to '%s' all the same; what was written to '%s' meanwhile under a name the area changed too, or in a directory the area deleted and made again, is replaced by the area's version",
				     st->name, why, st->path, st->path);
		else
			diag_warning(m, NULL, 0, "area '%s': %s", st->name, why);
	}
	/* a mount made on the area after start would hold it busy: said
	 * before anything is undone, so that the carried ones stay */
	if (f.cover_present && area_explain_busy(d, st, false, m) > 0) {
		r = -EBUSY;
		goto out;
	}
	if (do_sync && !synced && f.cover_present && how != AREA_SYNC_OVERLAY &&
	    (r = stop_synced(recfd, st)) < 0)
		goto out;
	n_keep = st->n_carried;
	keep = area_carried_keep(st);
	area_carried_release(st);
	if ((r = umount_cover(st, d, &f, m)) < 0) {
		area_carried_restore(st, keep, n_keep, recfd); /* busy: the area stays, and so do they */
		goto out;
	}
	area_carried_keep_free(keep, n_keep);
	/* from here a stop that fails keeps its mark: the next one knows the
	 * overlay gone by its doing, and applies the upper layer again */
	uncovered = how == AREA_SYNC_OVERLAY;
	if (how == AREA_SYNC_OVERLAY &&
	    ((r = overlay_stop_sync(d, recfd, st, &lost, m)) < 0 || (r = stop_synced(recfd, st)) < 0))
		goto out;
	if ((r = umount_private(d, st->name, d->lower, false, m)) < 0 ||
	    (r = umount_private(d, st->name, d->area, false, m)) < 0)
		goto out;
	r = area_backend_release(st, m);
out:
	/* the area stays: writable again, as the failure's message says */
	if (frozen && r < 0)
		umount_set_readonly(st->cover_id, false);
	if (do_sync && r < 0 && r != -ENOMEM && !uncovered)
		stop_begins(recfd, st, false); /* failed, and said why */
	area_mounts_done(&f);
	return r < 0  ? r
	       : lost ? -ENODATA
	       : gone ? -COPY_SYNC_RESCUED
	       : both ? -COPY_SYNC_KEPT_BOTH
		      : 0;
}

/* -ENODATA: torn down, content lost; -COPY_SYNC_KEPT_BOTH: torn down,
 * entries kept twice in the directory; -COPY_SYNC_RESCUED: torn down, the
 * whole tree kept apart (each said) */
static bool torn_down(int r)
{
	return r == 0 || r == -ENODATA || r == -COPY_SYNC_KEPT_BOTH || r == -COPY_SYNC_RESCUED;
}

int area_teardown(const char *state_dir, const char *self, const char *name, bool do_sync, struct diag_list *msgs)
{
	struct area_dirs d;
	struct state_area st;
	int fd, r;

	if ((r = area_dirs_init(&d, state_dir, name, self)) < 0)
		return r;
	wait_for_copy(d.area);
	fd = area_record_open_locked(&d, &st);
	if (fd < 0) {
		/* a setup that died before writing its state: undo what exists */
		r = umount_private(&d, name, d.lower, true, msgs);
		if (r == 0)
			r = umount_private(&d, name, d.area, true, msgs);
		goto remove;
	}
	r = teardown_locked(&d, fd, &st, do_sync, msgs);
	/* the record goes before its lock does: a sync or stop waiting for
	 * the lock then finds no area (area_record_open_locked()), never the
	 * record of one torn down */
	if (torn_down(r))
		unlink(d.state);
	state_area_done(&st);
	close(fd);
remove:
	if (torn_down(r)) {
		unlink(d.state);
		rmdir(d.area);
		rmdir(d.lower);
		rmdir(d.top);
	}
	area_dirs_done(&d);
	return r;
}
