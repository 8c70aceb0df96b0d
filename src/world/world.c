/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The one loader of the planner's inputs (see world.h).  Loading reads
 * files and devices but changes nothing.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "area/area.h"
#include "parse/fsfacts.h"
#include "mount/safepath.h"
#include "status/status_live.h"
#include "shared/sysinfo.h"
#include "world.h"
#include "shared/optstr.h"

/* An empty value counts as unset, so that a caller can clear one with
 * VAR= in front of a command. */
static const char *test_input(const char *name)
{
	const char *v = secure_getenv(name);

	return v && v[0] ? v : NULL;
}

void sources_init(struct sources *s, const struct options *o)
{
	const char *mountinfo = test_input("STORAGED_MOUNTINFO");
	const char *sysfs = test_input("STORAGED_SYSFS_BTRFS");

	*s = (struct sources){
		.config_path = o->config_path,
		.config_given = o->config_given,
		.fstab_path = o->fstab_path,
		.mountinfo_path = mountinfo ? mountinfo : MOUNTINFO_PATH,
		.inventory_fixture = test_input("STORAGED_INVENTORY"),
		.meminfo_path = test_input("STORAGED_MEMINFO"),
		.surveys_path = test_input("STORAGED_SURVEYS"),
		.filesystems_path = test_input("STORAGED_FILESYSTEMS"),
		.helper_dirs = test_input("STORAGED_MOUNT_HELPERS"),
		.sysfs_btrfs = sysfs ? sysfs : SYSFS_BTRFS,
		.state_dir = o->state_dir,
		.local_only = o->local_only,
	};
}

void world_done(struct world *w)
{
	plan_done(&w->plan);
	plan_predictions_done(&w->predictions);
	free(w->surveys);
	mnt_unref_table(w->mountinfo);
	btrfs_fs_list_done(&w->btrfs);
	inventory_done(&w->inv);
	fstab_done(&w->fstab);
	config_done(&w->cfg);
}

/* ------------------------------------------------------------ RAM size */

/* Memory: MemTotal for size = N% of an area (0 when unknown: the planner
 * then refuses N% sizes), MemAvailable and swap for the predictions. */
static void read_memory(const struct sources *s, const struct logger *lg, struct sysinfo_memory *m)
{
	int r = sysinfo_memory(s->meminfo_path, m);

	if (r < 0 || m->total == 0)
		log_error(lg, "'%s'%s: no MemTotal: %s", s->meminfo_path ?: SYSINFO_MEMINFO,
			  s->meminfo_path ? " (STORAGED_MEMINFO)" : "", strerror(r < 0 ? -r : EINVAL));
}

/* ------------------------------------------------------------ config and fstab */

int world_load_config(const struct sources *s, struct world *w, struct diag_list *dl)
{
	const char *fstab;
	int r;

	r = config_init(&w->cfg);
	if (r < 0)
		return r;
	r = config_load(&w->cfg, s->config_path, true, dl);
	if (r == -ENOENT && s->config_given)
		diag_error(dl, s->config_path, 0, "cannot read configuration: %s", strerror(ENOENT));
	else if (r == -ENOENT)
		r = 0; /* no config file: the built-in defaults apply */
	fstab = s->fstab_path ? s->fstab_path : w->cfg.fstab;
	if (r == 0 || r == -EINVAL)
		fstab_load(&w->fstab, fstab, w->cfg.select, true, dl);
	return diag_count(dl, DIAG_ERROR) ? -EINVAL : 0;
}

/* ------------------------------------------------------------ real paths */

/* @path with every link resolved, as realpath(3), but by the kernel in one
 * lookup (realpath reads each component as a link): false when @path does
 * not exist (yet). */
static bool resolve_path(const char *path, char buf[static PATH_MAX])
{
	char proc[64];
	int fd = open(path, O_PATH | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return false;
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	n = readlink(proc, buf, PATH_MAX - 1);
	close(fd);
	if (n <= 0 || n >= PATH_MAX - 1 || buf[0] != '/') /* no /proc */
		return realpath(path, buf) != NULL;
	buf[n] = '\0';
	return true;
}

/* The link check the mount itself makes (safepath_check()), made for the
 * plan too, so that --dry-run and check show it; only paths that lead
 * through a link (@real is not @path) can fail it.  Returns: why refused
 * (caller frees), or NULL. */
static char *refuse_links(const char *what, const char *path, const char *real)
{
	char why[512] = "", *msg = NULL;
	int r;

	if (strcmp(real, path) == 0)
		return NULL;
	r = safepath_check(path, why, sizeof(why));
	if (r < 0 && asprintf(&msg, "refusing to mount: %s '%s': %s", what, path,
			      r == -EPERM ? why : strerror(-r)) < 0)
		msg = NULL;
	return msg;
}

/* The IDs of the local mounts of one mount table, sorted: built at the
 * first question, so that each directory the planner meets costs a binary
 * search, not a pass over every mount (thousands after a big start). */
struct mount_locality {
	struct libmnt_table *tb; /* borrowed */
	uint64_t *ids; /* owned; NULL: not built (or no memory: a pass each time) */
	size_t n;
};

static int by_id(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

static void locality_build(struct mount_locality *ml)
{
	struct libmnt_iter *itr = mnt_new_iter(MNT_ITER_FORWARD);
	struct libmnt_fs *fs;
	size_t n = 0;

	ml->ids = itr ? calloc((size_t)mnt_table_get_nents(ml->tb) + 1, sizeof(*ml->ids)) : NULL;
	while (ml->ids && mnt_table_next_fs(ml->tb, itr, &fs) == 0)
		if (fsfacts_is_local(mnt_fs_get_fstype(fs)))
			ml->ids[n++] = (uint64_t)mnt_fs_get_id(fs);
	mnt_free_iter(itr);
	ml->n = n;
	if (ml->ids)
		qsort(ml->ids, n, sizeof(*ml->ids), by_id);
}

static void locality_done(struct mount_locality *ml)
{
	free(ml->ids);
	*ml = (struct mount_locality){ 0 };
}

/* Is the mount with ID @id (statx STATX_MNT_ID, as mountinfo's first
 * field) one where a lookup never waits for a server or an automount? */
static bool mount_is_local(struct mount_locality *ml, uint64_t id)
{
	struct libmnt_iter *itr;
	struct libmnt_fs *fs;
	bool local = false;

	if (!ml->tb)
		return false;
	if (!ml->ids)
		locality_build(ml);
	if (ml->ids)
		return bsearch(&id, ml->ids, ml->n, sizeof(*ml->ids), by_id) != NULL;
	itr = mnt_new_iter(MNT_ITER_FORWARD);
	while (itr && mnt_table_next_fs(ml->tb, itr, &fs) == 0)
		if ((uint64_t)mnt_fs_get_id(fs) == id) {
			local = fsfacts_is_local(mnt_fs_get_fstype(fs));
			break;
		}
	mnt_free_iter(itr);
	return local;
}

/* Appends "/@name" (@n bytes) to the path @buf of length *@len. */
static bool path_push(char *buf, size_t *len, const char *name, size_t n)
{
	if (*len + n + 2 > PATH_MAX)
		return false;
	if (*len > 1)
		buf[(*len)++] = '/';
	memcpy(buf + *len, name, n);
	*len += n;
	buf[*len] = '\0';
	return true;
}

struct walk {
	struct mount_locality *ml; /* the system's mount table, for mount_is_local() */
	int dirfd; /* O_PATH: the directory @done names */
	char done[PATH_MAX]; /* resolved so far: no link in it */
	size_t len;
	char rest[PATH_MAX]; /* still to walk */
	unsigned links;
};

/* One step of resolve_local() on the component @name: 1 walked on, 0 stop
 * here (missing, not local, not a directory), negative errno. */
static int walk_component(struct walk *w, const char *name, size_t n, const char *after)
{
	char nm[NAME_MAX + 1], tgt[PATH_MAX], rest[PATH_MAX];
	struct statx stx;
	ssize_t k;
	int fd;

	if (n > NAME_MAX)
		return 0;
	memcpy(nm, name, n);
	nm[n] = '\0';
	/* the directory's mount, then the name's: cached attributes only,
	 * no automount, so that no server is ever asked */
	if (statx(w->dirfd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STATX_MNT_ID, &stx) < 0 ||
	    !(stx.stx_mask & STATX_MNT_ID) || !mount_is_local(w->ml, stx.stx_mnt_id))
		return 0;
	if (statx(w->dirfd, nm, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT | AT_STATX_DONT_SYNC,
		  STATX_TYPE | STATX_MNT_ID, &stx) < 0 ||
	    !(stx.stx_mask & STATX_MNT_ID) || !mount_is_local(w->ml, stx.stx_mnt_id))
		return 0;
	if (S_ISLNK(stx.stx_mode)) {
		k = readlinkat(w->dirfd, nm, tgt, sizeof(tgt) - 1);
		if (k <= 0 || ++w->links > 40 || (size_t)k + strlen(after) + 2 > sizeof(w->rest))
			return k <= 0 ? 0 : -ELOOP;
		tgt[k] = '\0';
		strcpy(rest, after);
		strcpy(w->rest, tgt);
		strcat(w->rest, "/");
		strcat(w->rest, rest);
		if (tgt[0] == '/') {
			fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
			if (fd < 0)
				return -errno;
			close(w->dirfd);
			w->dirfd = fd;
			strcpy(w->done, "/");
			w->len = 1;
		}
		return 1;
	}
	if (!S_ISDIR(stx.stx_mode) && *after)
		return 0;
	fd = openat(w->dirfd, nm, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return 0;
	close(w->dirfd);
	w->dirfd = fd;
	memmove(w->rest, after, strlen(after) + 1);
	if (strcmp(nm, "..") == 0) {
		while (w->len > 1 && w->done[w->len - 1] != '/')
			w->len--;
		w->len = w->len > 1 ? w->len - 1 : 1;
		w->done[w->len] = '\0';
		return 1;
	}
	return path_push(w->done, &w->len, nm, n) ? 1 : -ENAMETOOLONG;
}

/*
 * @path with the symbolic links that exist now resolved, one component at
 * a time from "/", looking names up only in directories on local
 * filesystems (a dead server or an automount never holds the pass): the
 * walk stops at the first missing name or non-local directory and the rest
 * is kept as written.  Unlike resolve_path() it also tells where a path
 * leads whose end does not exist yet (a mkdir below a link, a directory on
 * a filesystem not mounted yet).
 * Returns: 0 and the result in @out; negative errno.
 */
static int resolve_local(struct mount_locality *ml, const char *path, char out[static PATH_MAX])
{
	struct walk w = { .ml = ml, .done = "/", .len = 1 };
	int r = 0;

	if (path[0] != '/' || strlen(path) >= sizeof(w.rest))
		return -EINVAL;
	strcpy(w.rest, path);
	w.dirfd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (w.dirfd < 0)
		return -errno;
	for (;;) {
		char *c = w.rest + strspn(w.rest, "/");
		size_t n = strcspn(c, "/");
		const char *after = c + n + strspn(c + n, "/");

		if (n == 0 || (n == 1 && c[0] == '.')) {
			if (n == 0)
				break;
			memmove(w.rest, after, strlen(after) + 1);
			continue;
		}
		r = walk_component(&w, c, n, after);
		if (r <= 0)
			break;
	}
	close(w.dirfd);
	if (r < 0)
		return r;
	snprintf(out, PATH_MAX, "%s%s%s", w.done,
		 w.len > 1 && w.rest[strspn(w.rest, "/")] ? "/" : "", w.rest + strspn(w.rest, "/"));
	return path_normalize(out);
}

/* ------------------------------------------------------------ resolved directories */

/*
 * The directories on the way to the fstab's paths, resolved once a pass:
 * the entries of an fstab are mostly siblings or nested, and a path below
 * a kept directory then costs one statx(2), where resolve_local() walks
 * every component from "/" again.  Only directories reached without a
 * link and looked up in local ones are kept; anything else goes the long
 * way, with the same result.
 */
#define RESOLVED_MAX 16

struct resolved_dir {
	char *dir; /* as the fstab writes it (normalised); NULL: a free slot */
	char *real; /* where it leads */
	int fd; /* O_PATH of it; -1: it does not exist (nor does anything below) */
	bool local; /* on a local filesystem: its names may be looked up */
};

struct resolver {
	struct mount_locality ml; /* for mount_is_local() */
	struct resolved_dir v[RESOLVED_MAX];
	size_t next; /* the slot the next directory takes (the oldest) */
};

static void resolver_done(struct resolver *rs)
{
	for (size_t i = 0; i < RESOLVED_MAX; i++) {
		free(rs->v[i].dir);
		free(rs->v[i].real);
		if (rs->v[i].fd >= 0)
			close(rs->v[i].fd);
		rs->v[i] = (struct resolved_dir){ .fd = -1 };
	}
}

static const struct resolved_dir *resolver_keep(struct resolver *rs, const char *dir, size_t n,
						const char *real, int fd, bool local)
{
	struct resolved_dir *d = &rs->v[rs->next];
	char *dcopy = strndup(dir, n), *rcopy = strdup(real);

	if (!dcopy || !rcopy) {
		free(dcopy);
		free(rcopy);
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	free(d->dir);
	free(d->real);
	if (d->fd >= 0)
		close(d->fd);
	*d = (struct resolved_dir){ .dir = dcopy, .real = rcopy, .fd = fd, .local = local };
	rs->next = (rs->next + 1) % RESOLVED_MAX;
	return d;
}

/*
 * The first @n bytes of @path, a directory, resolved: kept, or looked up
 * as a name in its own (resolved) parent.  NULL: the long way (a link, a
 * directory that is not local, no memory, too deep).
 */
static const struct resolved_dir *resolver_dir(struct resolver *rs, const char *path, size_t n, unsigned depth)
{
	const struct resolved_dir *p;
	const char *name;
	char real[PATH_MAX];
	struct statx stx;
	size_t pn;
	int fd = -1;

	for (size_t i = 0; i < RESOLVED_MAX; i++)
		if (rs->v[i].dir && strlen(rs->v[i].dir) == n && strncmp(rs->v[i].dir, path, n) == 0)
			return &rs->v[i];
	if (depth > 32 || n >= PATH_MAX)
		return NULL;
	if (n == 1) { /* "/" */
		fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0 || statx(fd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STATX_MNT_ID, &stx) < 0) {
			if (fd >= 0)
				close(fd);
			return NULL;
		}
		return resolver_keep(rs, "/", 1, "/", fd, mount_is_local(&rs->ml, stx.stx_mnt_id));
	}
	for (pn = n; path[pn - 1] != '/';)
		pn--;
	name = path + pn;
	p = resolver_dir(rs, path, pn > 1 ? pn - 1 : 1, depth + 1);
	if (!p || (p->fd >= 0 && !p->local))
		return NULL;
	if ((size_t)snprintf(real, sizeof(real), "%s/%.*s", strcmp(p->real, "/") ? p->real : "",
			     (int)(n - pn), name) >= sizeof(real))
		return NULL;
	if (p->fd >= 0) {
		char nm[NAME_MAX + 1];

		if (n - pn > NAME_MAX)
			return NULL;
		memcpy(nm, name, n - pn);
		nm[n - pn] = '\0';
		/* cached attributes, no automount: no server is asked */
		if (statx(p->fd, nm, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT | AT_STATX_DONT_SYNC,
			  STATX_TYPE | STATX_MNT_ID, &stx) == 0) {
			if (S_ISLNK(stx.stx_mode) || !(stx.stx_mask & STATX_MNT_ID))
				return NULL;
			if (S_ISDIR(stx.stx_mode) &&
			    (fd = openat(p->fd, nm, O_PATH | O_NOFOLLOW | O_DIRECTORY | O_CLOEXEC)) < 0)
				return NULL;
		} else if (errno != ENOENT && errno != ENOTDIR) {
			return NULL;
		}
	}
	return resolver_keep(rs, path, n, real, fd, fd >= 0 && mount_is_local(&rs->ml, stx.stx_mnt_id));
}

/*
 * @path (absolute, normalised) resolved below its kept directory: 1 it
 * exists (@buf, *@ret_mode), 0 it does not (@buf: where it would be);
 * -EAGAIN: the long way.
 */
static int resolver_path(struct resolver *rs, const char *path, char buf[static PATH_MAX], mode_t *ret_mode)
{
	const char *slash = strrchr(path, '/');
	const struct resolved_dir *d;
	struct statx stx;

	*ret_mode = 0;
	if (path[0] != '/' || !path_is_normalized(path) || !slash[1])
		return -EAGAIN;
	d = resolver_dir(rs, path, slash == path ? 1 : (size_t)(slash - path), 0);
	if (!d || (d->fd >= 0 && !d->local) ||
	    (size_t)snprintf(buf, PATH_MAX, "%s%s", strcmp(d->real, "/") ? d->real : "", slash) >= PATH_MAX)
		return -EAGAIN;
	if (d->fd < 0)
		return 0; /* below a directory that is not there */
	if (statx(d->fd, slash + 1, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT | AT_STATX_DONT_SYNC,
		  STATX_TYPE, &stx) < 0)
		return errno == ENOENT || errno == ENOTDIR ? 0 : -EAGAIN;
	if (S_ISLNK(stx.stx_mode))
		return -EAGAIN;
	*ret_mode = stx.stx_mode;
	return 1;
}

/* Where each path the entry uses leads now (fstab_path.real), for the
 * planner's edges: a bind source through a link lands below the
 * mount point it points into. */
static void resolve_use(struct resolver *rs, struct fstab_path *u)
{
	char buf[PATH_MAX], dir[PATH_MAX];
	const char *path = u->path, *rest = "";
	mode_t mode;

	if (u->glob) {
		/* a pattern: where the directory it starts in leads, the
		 * wildcards kept ("/srv/link/d*" -> "/data/d*") */
		size_t n = fstab_glob_dir_len(u->path);

		if (n <= 1 || n >= sizeof(dir))
			return;
		memcpy(dir, u->path, n);
		dir[n] = '\0';
		path = dir;
		rest = u->path + n;
	}
	if ((resolver_path(rs, path, buf, &mode) >= 0 || resolve_local(&rs->ml, path, buf) == 0) &&
	    strcmp(buf, path) != 0 && asprintf(&u->real, "%s%s", buf, rest) < 0)
		u->real = NULL;
}

static void resolve_uses(struct resolver *rs, struct fstab_entry *e)
{
	for (size_t k = 0; k < e->n_paths; k++)
		resolve_use(rs, &e->paths[k]);
}

/* The mount table shows mount points with links resolved; so must the
 * planner's comparisons (a root-owned link on the way is allowed).
 * @local_only: entries that need the network are left for a later pass;
 * their paths are not looked up now (a dead server above them would
 * block the early pass). */
static void resolve_targets(struct fstab *f, bool local_only, struct libmnt_table *tb)
{
	struct resolver rs = { .ml = { .tb = tb } };
	char buf[PATH_MAX];

	for (size_t i = 0; i < RESOLVED_MAX; i++)
		rs.v[i].fd = -1;
	for (size_t i = 0; i < f->n_entries; i++) {
		struct fstab_entry *e = &f->entries[i];

		if (local_only && e->remote)
			continue;
		/* not there yet: where the links that are there lead */
		if (resolver_path(&rs, e->target, buf, &e->target_mode) < 0 &&
		    !resolve_path(e->target, buf) && resolve_local(&rs.ml, e->target, buf) < 0)
			strcpy(buf, e->target);
		if (strcmp(buf, e->target) != 0) {
			e->target_real = strdup(buf);
			e->refused = refuse_links("mount point", e->target, buf);
		}
		resolve_uses(&rs, e);
		/* the link check of a bind source, on what the local walk
		 * found: no server is asked at plan time */
		for (size_t k = 0; k < e->n_paths && !e->refused; k++)
			if (e->bind && e->paths[k].real && streq(e->paths[k].option, "bind"))
				e->refused =
					refuse_links("bind source", e->paths[k].path, e->paths[k].real);
	}
	resolver_done(&rs);
	locality_done(&rs.ml);
}

/* Lines of the fstab that other tools own (swap, ...) are left alone: a
 * note with -v and in check, never an error. */
static void log_skipped(const struct fstab *f, const struct logger *lg)
{
	for (size_t i = 0; i < f->n_skipped; i++)
		log_debug(lg, "%s:%u: %s", f->file, f->skipped[i].line, f->skipped[i].why);
}

/* ------------------------------------------------------------ devices, mounts, areas */

/* Devices that cannot be opened (a CD drive without media, a device the
 * sandbox denies) are skipped: logged with -v, counted by `storaged scan`.
 * A fixture's problems are the test's own: logged as they are. */
int world_load_devices(const struct sources *s, const struct logger *lg, struct world *w)
{
	struct diag_list dl = { 0 };
	int r;

	if (s->inventory_fixture) {
		r = inventory_load_fixture(&w->inv, s->inventory_fixture, &dl);
		log_diags(lg, &dl);
	} else {
		r = inventory_scan(&w->inv, &dl);
		log_diags_at(lg, &dl, LOG_DEBUG);
	}
	diag_list_done(&dl);
	if (r < 0)
		return r;
	r = btrfs_group(&w->inv, &w->btrfs, &dl);
	log_diags(lg, &dl);
	diag_list_done(&dl);
	return r;
}

/* A surveys file (STORAGED_SURVEYS): "BYTES INODES" per area, in order. */
static int read_surveys(const char *path, struct world *w)
{
	FILE *f = fopen(path, "re");
	int r = 0;

	if (!f)
		return -errno;
	for (size_t i = 0; i < w->cfg.n_areas && r == 0; i++) {
		unsigned long long bytes, inodes;

		if (fscanf(f, "%llu %llu", &bytes, &inodes) != 2)
			r = -EINVAL;
		else
			w->surveys[i] =
				(struct area_survey){ .bytes = bytes, .inodes = inodes, .valid = true };
	}
	fclose(f);
	return r;
}

/* A directory that cannot be walked is recorded as such: the planner
 * then sizes the area without its seed and says so. */
static int survey_areas(const struct sources *s, const struct logger *lg, struct world *w)
{
	w->surveys = calloc(w->cfg.n_areas ? w->cfg.n_areas : 1, sizeof(*w->surveys));
	if (!w->surveys)
		return -ENOMEM;
	if (s->surveys_path) {
		int r = read_surveys(s->surveys_path, w);

		if (r < 0)
			log_error(lg, "'%s' (STORAGED_SURVEYS): %s", s->surveys_path,
				  r == -EINVAL ? "not one \"BYTES INODES\" line per area" : strerror(-r));
		return r;
	}
	for (size_t i = 0; i < w->cfg.n_areas; i++) {
		int r = area_survey_path(w->cfg.areas[i].path, &w->surveys[i]);

		if (r < 0) {
			w->surveys[i].valid = false;
			w->surveys[i].error = r;
			log_debug(lg, "area %s: cannot survey '%s': %s", w->cfg.areas[i].name,
				  w->cfg.areas[i].path, strerror(-r));
		}
	}
	return 0;
}

/* ------------------------------------------------------------ the world */

/* An entry handed to storaged but not marked noauto is mounted by
 * systemd-fstab-generator (local-fs.target) or `mount -a` too: twice,
 * racing storaged's own mount. */
static void warn_auto(const struct fstab *f, struct diag_list *dl)
{
	for (size_t i = 0; i < f->n_entries; i++) {
		const struct fstab_entry *e = &f->entries[i];

		if (!optstr_get(e->options, "noauto", NULL, NULL))
			diag_warning(dl, f->file, e->line,
				     "'%s' is handed to storaged but has no noauto: systemd-fstab-generator and `mount -a` mount it too, racing storaged; add noauto to its options",
				     e->target);
	}
}

/* plan_build(), then plan_predict() on the plan.  Returns: 0; -EINVAL
 * for plan errors (in @dl); -ENOMEM (logged). */
static int plan_and_predict(const struct sources *s, const struct logger *lg, struct world *w,
			    struct diag_list *dl)
{
	struct predict_sources ps = {
		.filesystems_path = s->filesystems_path,
		.helper_dirs = s->helper_dirs,
		.system_paths = strcmp(s->mountinfo_path, MOUNTINFO_PATH) == 0,
	};
	struct plan_input in = {
		.config = &w->cfg,
		.fstab = &w->fstab,
		.inventory = &w->inv,
		.btrfs = &w->btrfs,
		.mountinfo = w->mountinfo,
		.surveys = w->surveys,
		.local_only = s->local_only,
	};
	int r;

	read_memory(s, lg, &ps.mem);
	in.ram_bytes = ps.mem.total;
	warn_auto(&w->fstab, dl);
	if (plan_build(&in, &w->plan, dl) < 0 || diag_count(dl, DIAG_ERROR))
		return -EINVAL;
	r = plan_predict(&in, &ps, &w->plan, &w->predictions);
	if (r < 0)
		log_error(lg, "cannot predict the plan's failures: %s", strerror(-r));
	return r < 0 ? r : 0;
}

int world_load(const struct sources *s, const struct logger *lg, struct world *w)
{
	struct diag_list dl = { 0 };
	struct libmnt_table *tb = NULL;
	bool devices;
	int r;

	r = world_load_config(s, w, &dl);
	if (r < 0)
		goto out;
	tb = mnt_new_table_from_file(MOUNTINFO_PATH);
	resolve_targets(&w->fstab, s->local_only, tb);
	log_skipped(&w->fstab, lg);
	devices = plan_needs_devices(&w->fstab);
	r = devices ? world_load_devices(s, lg, w) : 0;
	if (r < 0) {
		log_error(lg, "cannot list block devices: %s", strerror(-r));
		r = r == -ENOMEM ? r : -EIO;
		goto out;
	}
	/* The table the links were resolved on is the plan's too when nothing
	 * ran in between (the device listing may wait on udev): one read of
	 * /proc/self/mountinfo less a start (bench/README.md, third pass). */
	if (!devices && tb && streq(s->mountinfo_path, MOUNTINFO_PATH)) {
		w->mountinfo = tb;
		tb = NULL;
	} else {
		w->mountinfo = mnt_new_table_from_file(s->mountinfo_path);
	}
	if (!w->mountinfo) {
		log_error(lg, "cannot read %s: %s", s->mountinfo_path, strerror(errno));
		r = -EIO;
		goto out;
	}
	r = survey_areas(s, lg, w);
	if (r == -ENOMEM)
		log_error(lg, "cannot survey the areas: %s", strerror(-r));
	if (r < 0) {
		r = r == -ENOMEM ? r : -EIO;
		goto out;
	}
	r = plan_and_predict(s, lg, w, &dl);
out:
	mnt_unref_table(tb);
	log_diags(lg, &dl);
	diag_list_done(&dl);
	return r;
}

const char *world_step_will_fail(const struct plan_step *s)
{
	return plan_step_will_fail(s);
}

/* The steps the boot needs that will fail (@skips false) or that start
 * skips because one they wait on will fail (@skips true). */
static unsigned count_needed(const struct plan *p, bool skips)
{
	bool *needed = calloc(p->n_steps ? p->n_steps : 1, sizeof(*needed));
	unsigned n = 0;

	if (!needed)
		return 0;
	plan_boot_needs(p, needed);
	for (size_t i = 0; i < p->n_steps; i++)
		n += needed[i] && world_step_will_fail(&p->steps[i]) != NULL &&
		     predict_is_skip(&p->steps[i]) == skips;
	free(needed);
	return n;
}

unsigned world_predicted_failures(const struct plan *p)
{
	return count_needed(p, false);
}

unsigned world_predicted_skips(const struct plan *p)
{
	return count_needed(p, true);
}
