/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The one loader of the planner's inputs (see world.h).  Loading reads
 * files and devices but changes nothing.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "area/area.h"
#include "devices/btrfs_live.h"
#include "devices/btrfs_scrub.h"
#include "state/atomic_file.h"
#include "mount/safepath.h"
#include "mount/view.h"
#include "shared/sysinfo.h"
#include "load.h"
#include "refuse.h"
#include "world.h"
#include "shared/optstr.h"

/* An empty value counts as unset, so that a caller can clear one with
 * VAR= in front of a command. */
static const char *test_input(const char *name)
{
	const char *v = secure_getenv(name);

	return v && v[0] ? v : NULL;
}

const char *sources_fixture_set(void)
{
	static const char *const names[] = {
		"STORAGED_MOUNTINFO",	"STORAGED_INVENTORY",	 "STORAGED_MEMINFO",	     "STORAGED_SURVEYS",
		"STORAGED_FILESYSTEMS", "STORAGED_MOUNT_HELPERS", "STORAGED_SYSFS_BTRFS", "STORAGED_SCRUB_STATUS_DIR",
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (test_input(names[i]))
			return names[i];
	return NULL;
}

void sources_init(struct sources *s, const struct options *o)
{
	const char *mountinfo = test_input("STORAGED_MOUNTINFO");
	const char *sysfs = test_input("STORAGED_SYSFS_BTRFS");
	const char *scrubs = test_input("STORAGED_SCRUB_STATUS_DIR");

	*s = (struct sources){
		.config_path = o->config_path,
		.config_given = o->config_given,
		.fstab_path = o->fstab_path,
		.mountinfo_path = mountinfo ? mountinfo : VIEW_MOUNTINFO,
		.inventory_fixture = test_input("STORAGED_INVENTORY"),
		.meminfo_path = test_input("STORAGED_MEMINFO"),
		.surveys_path = test_input("STORAGED_SURVEYS"),
		.filesystems_path = test_input("STORAGED_FILESYSTEMS"),
		.helper_dirs = test_input("STORAGED_MOUNT_HELPERS"),
		.sysfs_btrfs = sysfs ? sysfs : SYSFS_BTRFS,
		.scrub_status_dir = scrubs ? scrubs : BTRFS_SCRUB_STATUS_DIR,
		.state_dir = o->state_dir,
		.local_only = o->local_only,
	};
}

static void facts_done(struct world *w)
{
	for (size_t i = 0; w->facts && i < w->fstab.n_entries; i++) {
		struct entry_facts *f = &w->facts[i];

		for (size_t k = 0; f->path_real && k < w->fstab.entries[i].n_paths; k++)
			free(f->path_real[k]);
		free(f->path_real);
		free(f->target_real);
		free(f->refused);
	}
	free(w->facts);
	w->facts = NULL;
}

void world_done(struct world *w)
{
	plan_done(&w->plan);
	predictions_done(&w->predictions);
	free(w->surveys);
	for (size_t i = 0; w->area_records && i < w->cfg.n_areas; i++) {
		free(w->area_records[i].done);
		free(w->area_records[i].fails);
	}
	free(w->area_records);
	facts_done(w);
	mnt_unref_table(w->mountinfo);
	btrfs_fs_list_done(&w->btrfs);
	inventory_done(&w->inv);
	fstab_done(&w->fstab);
	config_done(&w->cfg);
	view_done(&w->view);
	free(w->warnings);
}

/* ------------------------------------------------------------ RAM size */

/* Memory: MemTotal for size = N% of an area (0 when unknown: the planner
 * then refuses N% sizes), and with SwapTotal the bound of every size. */
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
	if (r == -ENOENT)
		r = 0; /* no file at all: the built-in defaults apply */
	/* a file named with -c must be there, whatever its drop-ins say */
	if (r == 0 && s->config_given && !w->cfg.file)
		diag_error(dl, s->config_path, 0, "cannot read configuration: %s", strerror(ENOENT));
	fstab = s->fstab_path ? s->fstab_path : w->cfg.fstab;
	/* every line, the refused ones too: start refuses them one by one */
	if (r == 0 || r == -EINVAL)
		fstab_load_all(&w->fstab, fstab, w->cfg.select, true, dl);
	return diag_count(dl, DIAG_ERROR) ? -EINVAL : 0;
}

/* ------------------------------------------------------------ real paths */

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

/* Where a path the entry uses leads now, for the planner's edges: a bind
 * source through a link lands below the mount point it points into.
 * Returns: owned, or NULL when the same or not known. */
static char *resolve_use(struct view *v, const struct fstab_path *u)
{
	char buf[PATH_MAX], dir[PATH_MAX], *real = NULL;
	const char *path = u->path, *rest = "";
	mode_t mode;

	if (u->glob) {
		/* a pattern: where the directory it starts in leads, the
		 * wildcards kept ("/srv/link/d*" -> "/data/d*") */
		size_t n = fstab_glob_dir_len(u->path);

		if (n <= 1 || n >= sizeof(dir))
			return NULL;
		memcpy(dir, u->path, n);
		dir[n] = '\0';
		path = dir;
		rest = u->path + n;
	}
	if (view_resolve(v, path, false, buf, &mode) == 0 && strcmp(buf, path) != 0 &&
	    asprintf(&real, "%s%s", buf, rest) < 0)
		real = NULL;
	return real;
}

/* The facts of entry @e: where its mount point and the paths it uses lead
 * (the mount table shows mount points with links resolved; so must the
 * planner's comparisons), and whether a link on the way is refused. */
static int entry_facts_load(struct view *v, const struct fstab_entry *e, struct entry_facts *f)
{
	char buf[PATH_MAX];

	/* not there yet: where the links that are there lead */
	view_resolve(v, e->target, true, buf, &f->target_mode);
	if (strcmp(buf, e->target) != 0) {
		f->target_real = strdup(buf);
		f->refused = refuse_links("mount point", e->target, buf);
	}
	f->path_real = e->n_paths ? calloc(e->n_paths, sizeof(*f->path_real)) : NULL;
	if (e->n_paths && !f->path_real)
		return -ENOMEM;
	for (size_t k = 0; k < e->n_paths; k++)
		f->path_real[k] = resolve_use(v, &e->paths[k]);
	/* the link check of a bind source, on what the local walk found: no
	 * server is asked at plan time */
	for (size_t k = 0; k < e->n_paths && !f->refused; k++)
		if (e->bind && f->path_real[k] && streq(e->paths[k].option, "bind"))
			f->refused = refuse_links("bind source", e->paths[k].path, f->path_real[k]);
	return 0;
}

/* @local_only: entries that need the network are left for a later pass;
 * their paths are not looked up now (a dead server above them would block
 * the early pass).  Returns: 0 or -ENOMEM. */
static int load_facts(struct world *w, bool local_only, struct view *v)
{
	w->facts = calloc(w->fstab.n_entries ? w->fstab.n_entries : 1, sizeof(*w->facts));
	if (!w->facts)
		return -ENOMEM;
	for (size_t i = 0; i < w->fstab.n_entries; i++)
		if (!(local_only && w->fstab.entries[i].remote) && !w->fstab.entries[i].refused &&
		    entry_facts_load(v, &w->fstab.entries[i], &w->facts[i]) < 0)
			return -ENOMEM;
	return 0;
}

/* ------------------------------------------------------------ devices, mounts, areas */

/* Is @devnode one of @fs's members (by the device it leads to)? */
static bool is_member(const struct btrfs_filesystem *fs, const char *devnode)
{
	char a[PATH_MAX], b[PATH_MAX];

	if (!devnode || !realpath(devnode, a))
		return false;
	for (size_t i = 0; i < fs->n_members; i++)
		if (realpath(fs->members[i].dev->devnode, b) && strcmp(a, b) == 0)
			return true;
	return false;
}

/* The first mount point in @tb (NULL: none) of a btrfs mount whose source
 * is one of @fs's members (borrowed from @tb), or NULL. */
static const char *world_btrfs_mountpoint(struct libmnt_table *tb, const struct btrfs_filesystem *fs)
{
	struct libmnt_iter *it = tb ? mnt_new_iter(MNT_ITER_FORWARD) : NULL;
	struct libmnt_fs *m;
	const char *found = NULL;

	while (it && !found && mnt_table_next_fs(tb, it, &m) == 0)
		if (streq(mnt_fs_get_fstype(m), "btrfs") && is_member(fs, mnt_fs_get_srcpath(m)))
			found = mnt_fs_get_target(m);
	mnt_free_iter(it);
	return found;
}

/* The fstab entry that names @fs (UUID=, LABEL=, or a member's device),
 * or NULL. */
static const struct fstab_entry *fstab_entry_of(const struct fstab *f, const struct btrfs_filesystem *fs)
{
	for (size_t i = 0; i < f->n_entries; i++) {
		const char *src = f->entries[i].source;

		if ((strncmp(src, "UUID=", 5) == 0 && strcasecmp(src + 5, fs->fsid) == 0) ||
		    (strncmp(src, "LABEL=", 6) == 0 && streq(src + 6, fs->label)) ||
		    (src[0] == '/' && is_member(fs, src)))
			return &f->entries[i];
	}
	return NULL;
}

/* A stale member is said with what to do where the filesystem is: the
 * mount point it is mounted on now, else the one storaged mounts it on
 * and what stale-member = does there. */
static void warn_stale(const struct sources *s, const struct logger *lg, const struct world *w)
{
	struct libmnt_table *tb = NULL;
	char facts[1024], advice[PATH_MAX * 4 + 200], q[PATH_MAX * 4 + 3];

	for (size_t i = 0; i < w->btrfs.n; i++) {
		const struct btrfs_filesystem *fs = &w->btrfs.v[i];
		const struct fstab_entry *e;
		const char *mp, *target;
		unsigned how;

		if (!btrfs_first_stale(fs))
			continue;
		if (!tb)
			tb = view_read_table(s->mountinfo_path);
		mp = world_btrfs_mountpoint(tb, fs);
		e = mp ? NULL : fstab_entry_of(&w->fstab, fs);
		target = e ? e->target : NULL;
		how = mp ? btrfs_live_stale_how(s->sysfs_btrfs, view_mounted_ro(tb, mp), fs)
			 : e && optstr_get(e->mount_options, "ro", NULL, NULL) ? STALE_MOUNTED_RO : 0;
		if (target && w->cfg.stale_member == STALE_MEMBER_SCRUB)
			snprintf(advice, sizeof(advice), "storaged starts a scrub once it has mounted it on %s (stale-member = scrub)",
				 shell_quote(target, q, sizeof(q)));
		else if (target && w->cfg.stale_member == STALE_MEMBER_REFUSE)
			snprintf(advice, sizeof(advice), "storaged does not mount it on %s (stale-member = refuse)",
				 shell_quote(target, q, sizeof(q)));
		else
			btrfs_stale_advice(mp ? mp : target, how, log_self(lg), advice, sizeof(advice));
		log_warning(lg, "*** btrfs %s: %s: %s ***", fs->fsid, btrfs_format_stale(fs, facts, sizeof(facts)),
			    advice);
	}
	mnt_unref_table(tb);
}

/* What the mount table @tb says of @d, mounted (by device number; a btrfs
 * mount shows an anonymous one, so also by source path).  Returns: 0
 * (nothing said when it is not mounted), -ENOMEM. */
static int unreadable_mounted(const struct sources *s, struct libmnt_table *tb, struct unreadable_device *d)
{
	struct libmnt_fs *fs;
	struct stat st;
	char fsid[64];
	dev_t devno = d->devno;

	if (!devno && stat(d->devnode, &st) == 0 && S_ISBLK(st.st_mode))
		devno = st.st_rdev;
	fs = devno ? mnt_table_find_devno(tb, devno, MNT_ITER_FORWARD) : NULL;
	if (!fs)
		fs = mnt_table_find_srcpath(tb, d->devnode, MNT_ITER_FORWARD);
	if (!fs || !mnt_fs_get_fstype(fs))
		return 0;
	d->fs_type = strdup(mnt_fs_get_fstype(fs));
	d->mountpoint = strdup(mnt_fs_get_target(fs) ?: "?");
	if (!d->fs_type || !d->mountpoint)
		return -ENOMEM;
	d->source = UNREADABLE_BY_MOUNTS;
	if (streq(d->fs_type, "btrfs") &&
	    btrfs_live_fsid_of_device(s->sysfs_btrfs, d->devnode, fsid, sizeof(fsid)) &&
	    !(d->fs_uuid = strdup(fsid)))
		return -ENOMEM;
	return 0;
}

/* Where udev's database says nothing of a device that could not be read
 * (no udevd: early boot, a container), the mount table may: a mounted
 * device holds what it is mounted as, not a missing member.  The table
 * is read here, once, and kept as the world's.  Returns: 0, -ENOMEM;
 * a table that cannot be read says nothing. */
static int unreadable_from_mounts(const struct sources *s, struct world *w)
{
	int r = 0;

	for (size_t i = 0; r == 0 && i < w->inv.n_skipped; i++) {
		struct unreadable_device *d = &w->inv.skipped[i];

		if (d->source != UNREADABLE_SAYS_NOTHING)
			continue;
		if (!w->mountinfo && !(w->mountinfo = view_read_table(s->mountinfo_path)))
			return 0;
		r = unreadable_mounted(s, w->mountinfo, d);
	}
	return r;
}

static size_t count_unprobed(const struct inventory *inv)
{
	size_t n = 0;

	for (size_t i = 0; i < inv->n_devs; i++)
		n += inv->devs[i].unprobed;
	return n;
}

/* Every UUID= of @f is on a device of @inv. */
static bool uuids_found(const struct fstab *f, const struct inventory *inv)
{
	for (size_t i = 0; i < f->n_entries; i++)
		if (has_prefix(f->entries[i].source, "UUID=") && !inventory_find(inv, f->entries[i].source))
			return false;
	return true;
}

/* Devices that cannot be opened (a CD drive without media, a device the
 * sandbox denies) are skipped: logged with -v, counted by `storaged scan`.
 * A fixture's problems are the test's own: logged as they are. */
int world_load_devices(const struct sources *s, enum inventory_depth depth, const struct logger *lg,
		       struct world *w)
{
	struct diag_list dl = { 0 };
	int r;

	if (s->inventory_fixture) {
		r = inventory_load_fixture(&w->inv, s->inventory_fixture, &dl);
		log_diags(lg, &dl);
	} else {
		r = inventory_scan(&w->inv, depth, &dl);
		/* a UUID= the btrfs superblocks do not hold is looked for on
		 * every device: another type holding it makes the mount say
		 * what it meets, rather than a wait until device-timeout */
		if (r == 0 && depth == INVENTORY_BTRFS_ONLY && !uuids_found(&w->fstab, &w->inv)) {
			inventory_done(&w->inv);
			diag_list_done(&dl);
			r = inventory_scan(&w->inv, INVENTORY_FULL, &dl);
		}
		log_diags_at(lg, &dl, LOG_DEBUG);
		if (r == 0 && w->inv.depth == INVENTORY_BTRFS_ONLY)
			log_debug(lg, "block devices: %zu without btrfs magic left unprobed (the entries need btrfs filesystems by UUID= alone)",
				  count_unprobed(&w->inv));
	}
	diag_list_done(&dl);
	if (r == 0)
		r = unreadable_from_mounts(s, w);
	if (r < 0)
		return r;
	r = btrfs_group(&w->inv, &w->btrfs, &dl);
	log_diags(lg, &dl);
	diag_list_done(&dl);
	if (r == 0)
		warn_stale(s, lg, w);
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

/* check and --dry-run: what start finds of each area in the state
 * directory (area_found_set_up()).  A state directory that cannot be read
 * holds nothing (start says why).  Returns: 0 or -ENOMEM. */
static int find_area_records(const struct sources *s, const struct logger *lg, struct world *w)
{
	if (!s->area_records || !s->state_dir)
		return 0;
	w->area_records = calloc(w->cfg.n_areas ? w->cfg.n_areas : 1, sizeof(*w->area_records));
	if (!w->area_records)
		return -ENOMEM;
	for (size_t i = 0; i < w->cfg.n_areas; i++) {
		const struct area_config *a = &w->cfg.areas[i];
		struct plan_area_record *rec = &w->area_records[i];
		_cleanup_free_ char *path = NULL;
		char why[PATH_MAX * 2 + 512];
		int r = area_found_set_up(s->state_dir, log_self(lg), a, &path, why, sizeof(why));

		if (r == -ENOMEM)
			return r;
		if (r == -EEXIST && !(rec->fails = strdup(why)))
			return -ENOMEM;
		if (r <= 0)
			continue;
		if (streq(path, a->path))
			rec->done = strdup("already set up");
		else if (asprintf(&rec->done, "already set up on '%s', its path before: it stays there until a stop syncs it back",
				  path) < 0)
			rec->done = NULL;
		if (!rec->done)
			return -ENOMEM;
	}
	return 0;
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
		const struct area_config *a = &w->cfg.areas[i];
		/* an overlay with its sizes given measures nothing of the tree */
		bool root_only = a->overlay && a->size.kind != AREA_SIZE_AUTO && !a->inodes_auto;
		int r;

		if (w->area_records && (w->area_records[i].done || w->area_records[i].fails))
			continue; /* not sized: nothing is made */
		r = root_only ? area_survey_root(a->path, &w->surveys[i])
				  : area_survey_path(a->path, &w->surveys[i]);
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

		if (!e->refused && !optstr_get(e->options, "noauto", NULL, NULL))
			diag_warning(dl, f->file, e->line,
				     "'%s' is handed to storaged but has no noauto: systemd-fstab-generator and `mount -a` mount it too, racing storaged; add noauto to its options",
				     e->target);
	}
}

/* The mount flags @opts ends with (libmount: "suid" after "nosuid" wins). */
static void nosuid_nodev(const char *opts, bool *ret_nosuid, bool *ret_nodev)
{
	unsigned long fl = 0;

	if (opts)
		mnt_optstr_get_flags(opts, &fl, mnt_get_builtin_optmap(MNT_LINUX_MAP));
	*ret_nosuid = fl & MS_NOSUID;
	*ret_nodev = fl & MS_NODEV;
}

/* The file or device @path a mount reads (stat(2): links followed), when a
 * user other than root can write it and the mount lacks nosuid or nodev:
 * what it lacks (predict_user_source_lacks()), and its owner.  NULL when
 * none, or @path cannot be looked at (the plan says why). */
static const char *user_source(const char *path, bool nosuid, bool nodev, struct stat *st)
{
	if (!path || path[0] != '/' || stat(path, st) < 0 || !(S_ISREG(st->st_mode) || S_ISBLK(st->st_mode)))
		return NULL;
	return predict_user_source_lacks(st->st_uid, st->st_gid, st->st_mode, nosuid, nodev);
}

/* An area's writeback device holds the area's pages: one a user can
 * write, under an area that allows suid or dev, is what a user's loop
 * image is to an fstab entry (warn_user_sources()). */
static void warn_user_writeback(const struct config *c, struct diag_list *dl)
{
	struct stat st;

	for (size_t i = 0; i < c->n_areas; i++) {
		const struct area_config *a = &c->areas[i];
		const char *lacks = a->writeback_device
					    ? user_source(a->writeback_device, !a->allow_suid, !a->allow_dev, &st)
					    : NULL;

		if (lacks)
			diag_warning(dl, a->file ? a->file : "storaged.conf", a->writeback_line ? a->writeback_line : a->line,
				     "[area %s]: writeback-device %s is owned by uid %u, mode %04o, and the area is mounted without %s: whoever writes the device can change the area's files and become root; give the device to root, or set %s",
				     a->name, a->writeback_device, (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777), lacks,
				     streq(lacks, "nosuid,nodev") ? "nosuid = yes and nodev = yes"
				     : streq(lacks, "nosuid")	  ? "nosuid = yes"
								  : "nodev = yes");
	}
}

/* A loop image or a device a user can write, mounted without nosuid or
 * nodev, gives that user root (a set-user-ID shell, a device node of the
 * disks, put in the filesystem's bytes).  mount(8) run by root mounts
 * such a line without a word, and so does storaged: check and start name
 * it, at its line, with the options to add.  Entries that need the
 * network are left alone: their sources are not looked at before it. */
static void warn_user_sources(const struct world *w, struct diag_list *dl)
{
	const struct fstab *f = &w->fstab;
	bool nosuid, nodev;
	struct stat st;

	for (size_t i = 0; i < f->n_entries; i++) {
		const struct fstab_entry *e = &f->entries[i];
		const struct block_device *d;
		const char *lacks, *src;

		if (e->refused || e->bind || e->remote || !e->fstype || fsfacts_is_nodev(e->fstype) ||
		    streq(e->fstype, "swap"))
			continue;
		d = e->source[0] == '/' ? NULL : inventory_find(&w->inv, e->source);
		src = d ? d->devnode : e->source;
		nosuid_nodev(e->options, &nosuid, &nodev);
		lacks = user_source(src, nosuid, nodev, &st);
		if (lacks)
			diag_warning(dl, f->file, e->line,
				     "'%s' mounts %s '%s', which a user other than root can write (owner uid %u, mode %04o), without %s: whoever writes it can put a set-user-ID root program or a device node in it and become root; add %s to the options (as mount(8) does for a user's mount)",
				     e->target, S_ISBLK(st.st_mode) ? "the device" : "the image", src,
				     (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777), lacks, lacks);
	}
	warn_user_writeback(&w->cfg, dl);
}

/* plan_build(), then predict_plan() on the plan.  Returns: 0; -EINVAL
 * for plan errors (in @dl); -ENOMEM (logged). */
static int plan_and_predict(const struct sources *s, const struct logger *lg, struct world *w,
			    struct diag_list *dl)
{
	struct predict_sources ps = {
		.filesystems_path = s->filesystems_path,
		.helper_dirs = s->helper_dirs,
		.system_paths = strcmp(s->mountinfo_path, VIEW_MOUNTINFO) == 0,
	};
	_cleanup_free_ char *state_dir = s->state_dir ? realpath(s->state_dir, NULL) : NULL;
	size_t from;
	struct plan_input in = {
		.config = &w->cfg,
		.fstab = &w->fstab,
		.inventory = &w->inv,
		.btrfs = &w->btrfs,
		.mountinfo = w->mountinfo,
		.facts = w->facts,
		.surveys = w->surveys,
		.area_records = w->area_records,
		.local_only = s->local_only,
		.state_dir = state_dir ? state_dir : s->state_dir,
	};
	int r;

	read_memory(s, lg, &ps.mem);
	in.ram_bytes = ps.mem.total;
	warn_auto(&w->fstab, dl);
	if (ps.system_paths)
		warn_user_sources(w, dl);
	from = dl->n;
	if ((r = predict_area_fstypes(&w->cfg, &ps, dl)) < 0) {
		log_error(lg, "cannot check the areas' filesystem types: %s", strerror(-r));
		return r;
	}
	r = world_refuse_new(w, dl, from, NULL);
	if (r == 0)
		r = world_build_plan(w, &in, dl);
	/* strict: every problem is reported, and none is acted on */
	if (r == 0 && !s->lenient && diag_count(dl, DIAG_ERROR))
		r = -EINVAL;
	if (r < 0)
		return r;
	r = predict_plan(&in, &ps, &w->plan, &w->predictions);
	if (r < 0)
		log_error(lg, "cannot predict the plan's failures: %s", strerror(-r));
	return r < 0 ? r : 0;
}

/* The warnings of @dl, one "file:line: message" per line (owned). */
static char *warnings_text(const struct diag_list *dl)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	for (size_t i = 0; i < dl->n; i++)
		if (dl->v[i].level == DIAG_WARNING)
			fprintf(f, "%s:%u: %s\n", dl->v[i].file ?: "", dl->v[i].line, dl->v[i].msg);
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* Does @path hold exactly @text? */
static bool file_holds(const char *path, const char *text)
{
	_cleanup_fclose_ FILE *f = fopen(path, "re");
	char buf[65536];
	size_t n;

	if (!f)
		return false;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	return !ferror(f) && feof(f) && strcmp(buf, text) == 0;
}

/* The configuration's problems: errors always; warnings that a start of
 * this boot printed already (@s->warned_path) at debug level only. */
static void log_config_diags(const struct sources *s, const struct logger *lg, struct world *w,
			     const struct diag_list *dl)
{
	w->warnings = warnings_text(dl);
	w->warnings_repeated = s->warned_path && w->warnings && w->warnings[0] &&
			       !diag_count(dl, DIAG_ERROR) && file_holds(s->warned_path, w->warnings);
	if (w->warnings_repeated)
		log_diags_at(lg, dl, LOG_DEBUG);
	else
		log_diags(lg, dl);
}

static int write_text(FILE *f, const void *ud)
{
	return fputs(ud, f) < 0 ? -EIO : 0;
}

int world_note_warnings(const struct sources *s, const struct world *w)
{
	if (!s->warned_path || !w->warnings || w->warnings_repeated)
		return 0;
	if (!w->warnings[0])
		return unlink(s->warned_path) < 0 && errno != ENOENT ? -errno : 0;
	return file_write_atomic(s->warned_path, 0644, write_text, w->warnings);
}

int world_load(const struct sources *s, const struct logger *lg, struct world *w)
{
	struct diag_list dl = { 0 };
	struct libmnt_table *tb;
	bool devices;
	int r;

	r = world_load_config(s, w, &dl);
	if (r == -EINVAL)
		r = world_refuse_new(w, &dl, 0, NULL);
	if (r < 0)
		goto out;
	r = load_facts(w, s->local_only, &w->view);
	if (r < 0) {
		log_error(lg, "cannot resolve the fstab's paths: %s", strerror(-r));
		goto out;
	}
	/* lines of the fstab that other tools own (swap, ...): a note with -v */
	for (size_t i = 0; i < w->fstab.n_skipped; i++)
		log_debug(lg, "%s:%u: %s", w->fstab.file, w->fstab.skipped[i].line,
			  w->fstab.skipped[i].why);
	devices = plan_needs_devices(&w->fstab);
	r = devices ? world_load_devices(s,
					 plan_devices_by_fsid_only(&w->fstab) ? INVENTORY_BTRFS_ONLY
									       : INVENTORY_FULL,
					 lg, w)
		    : 0;
	if (r < 0) {
		log_error(lg, "cannot list block devices: %s", strerror(-r));
		r = r == -ENOMEM ? r : -EIO;
		goto out;
	}
	/* The table the links were resolved on is the plan's too when nothing
	 * ran in between (the device listing may wait on udev): one read of
	 * /proc/self/mountinfo less a start (bench/README.md, third pass). */
	if (w->mountinfo) {
		/* world_load_devices() read it for a device it could not read */
	} else if (!devices && streq(s->mountinfo_path, VIEW_MOUNTINFO) && (tb = view_table(&w->view))) {
		mnt_ref_table(tb);
		w->mountinfo = tb;
	} else {
		w->mountinfo = view_read_table(s->mountinfo_path);
	}
	if (!w->mountinfo) {
		log_error(lg, "cannot read %s: %s", s->mountinfo_path, strerror(errno));
		r = -EIO;
		goto out;
	}
	r = find_area_records(s, lg, w);
	if (r == 0)
		r = survey_areas(s, lg, w);
	if (r == -ENOMEM)
		log_error(lg, "cannot survey the areas: %s", strerror(-r));
	if (r < 0) {
		r = r == -ENOMEM ? r : -EIO;
		goto out;
	}
	r = plan_and_predict(s, lg, w, &dl);
out:
	/* a pass that goes on says a refused line's errors in its step */
	if (r == 0 && s->lenient)
		world_drop_said(w, &dl);
	log_config_diags(s, lg, w, &dl);
	diag_list_done(&dl);
	/* after the errors it sums up */
	if (s->lenient && w->unusable)
		world_log_unusable(lg, w->unusable);
	return r;
}

/* How step @i of @p is counted in @c (@needed: plan_boot_needs()). */
static enum world_failure count_failure(const struct plan *p, const bool *needed, size_t i,
					struct world_failures *c)
{
	const struct plan_step *s = &p->steps[i];

	if (!plan_step_will_fail(s))
		return WORLD_FAILURE_NONE;
	if (plan_step_is_device_wait(s))
		return WORLD_FAILURE_AT_WAITERS;
	/* as the executor's fail_step(): a nofail entry's own failure is
	 * tolerated even where a step the boot needs waits on it */
	if (!needed[i] || (s->kind == PLAN_MOUNT && s->entry->nofail)) {
		c->tolerated++;
		return WORLD_FAILURE_TOLERATED;
	}
	c->failed++;
	c->skipped += plan_step_predicted_skip(s);
	return WORLD_FAILURE_COUNTED;
}

int world_predicted_failures(const struct plan *p, struct world_failures *ret,
			     void (*each)(void *userdata, size_t i, enum world_failure how), void *userdata)
{
	_cleanup_free_ bool *needed = calloc(p->n_steps ? p->n_steps : 1, sizeof(*needed));

	*ret = (struct world_failures){ 0 };
	if (!needed)
		return -ENOMEM;
	plan_boot_needs(p, needed);
	for (size_t i = 0; i < p->n_steps; i++) {
		enum world_failure how = count_failure(p, needed, i, ret);

		if (each && how != WORLD_FAILURE_NONE)
			each(userdata, i, how);
	}
	return 0;
}

void world_log_failures(const struct logger *lg, const struct world_failures *c)
{
	char skipped[96] = "", tolerated[96] = "";

	if (c->skipped)
		snprintf(skipped, sizeof(skipped), " (%u skipped: %s)", c->skipped,
			 c->skipped == 1 ? "a step it waits for will fail" : "steps they wait for will fail");
	if (c->tolerated)
		snprintf(tolerated, sizeof(tolerated), "%s%u nofail %s will fail", c->failed ? ", " : "",
			 c->tolerated, c->tolerated == 1 ? "step" : "steps");
	if (c->failed)
		log_error(lg, "%u %s will fail%s%s", c->failed, c->failed == 1 ? "step" : "steps", skipped,
			  tolerated);
	else if (c->tolerated)
		log_warning(lg, "%s", tolerated);
}
