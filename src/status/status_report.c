/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The status snapshot (status_report.h): every read of the live system
 * that `status`, `status --json` and the metrics make, done once.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <libmount.h>

#include "devices/btrfs_scrub.h"
#include "mount/view.h"
#include "shared/sysinfo.h"
#include "shared/units.h"
#include "shared/util.h"
#include "status_report.h"
#include "world/load.h"
#include "world/statedir.h"

/* Is the mount @fs (btrfs) one of @f's members?  By device number, or by
 * name where the inventory has none (a fixture's image files). */
static bool mount_of(struct libmnt_fs *fs, const struct btrfs_filesystem *f)
{
	const char *src = mnt_fs_get_srcpath(fs);
	struct stat st;
	bool have_rdev;

	if (!src)
		return false;
	have_rdev = stat(src, &st) == 0 && S_ISBLK(st.st_mode);
	for (size_t m = 0; m < f->n_members; m++) {
		const struct block_device *dev = f->members[m].dev;

		if (have_rdev && dev->devno ? dev->devno == st.st_rdev : strcmp(dev->devnode, src) == 0)
			return true;
	}
	return false;
}

/* mounted and degraded, from the mount table */
static void fs_mount_state(struct libmnt_table *tb, const struct btrfs_filesystem *f, struct prom_fs *p)
{
	struct libmnt_iter *it = mnt_new_iter(MNT_ITER_FORWARD);
	struct libmnt_fs *fs;

	while (it && mnt_table_next_fs(tb, it, &fs) == 0) {
		const char *opts = mnt_fs_get_fs_options(fs);

		if (!mnt_fs_match_fstype(fs, "btrfs") || !mount_of(fs, f))
			continue;
		p->mounted = true;
		if (opts && mnt_optstr_get_option(opts, "degraded", NULL, NULL) == 0)
			p->degraded = true;
	}
	mnt_free_iter(it);
}

/* What the kernel says of the members of a mounted filesystem. */
static void fs_kernel_members(const char *sysfs, const struct btrfs_filesystem *f, struct prom_fs *p)
{
	struct btrfs_live_members lm;

	if (!p->mounted || btrfs_live_members(sysfs, f->fsid, &lm) < 0)
		return;
	p->missing = lm.n_missing;
	p->unused = lm.n_unused;
}

/* The block devices' btrfs filesystems, as @dev asks.  Returns: 0 (also
 * when STATUS_DEVICES_FOR_RECORDS could not read them); negative errno
 * (logged). */
static int read_btrfs(struct status_report *rep, const struct sources *src, const struct logger *lg,
		      enum status_devices dev)
{
	struct logger quiet = *lg;
	bool any = dev == STATUS_DEVICES_ALL;
	int r;

	for (size_t i = 0; i < rep->st.n && !any; i++)
		any = rep->st.v[i].kind == STATE_BTRFS;
	if (!any)
		return 0;
	/* what the listing warns of is start's and scan's to say */
	quiet.max_level = LOG_ERR;
	r = world_load_devices(src, INVENTORY_FULL, dev == STATUS_DEVICES_ALL ? lg : &quiet, &rep->w);
	if (r < 0 && dev == STATUS_DEVICES_ALL)
		log_error(lg, "cannot list block devices: %s", strerror(-r));
	if (r < 0)
		return dev == STATUS_DEVICES_ALL ? r : 0;
	rep->btrfs = &rep->w.btrfs;
	return 0;
}

static int btrfs_facts(struct status_report *rep, const struct live_input *in)
{
	const struct btrfs_fs_list *l = rep->btrfs;

	if (!l)
		return 0;
	rep->fs = calloc(l->n ?: 1, sizeof(*rep->fs));
	if (!rep->fs)
		return -ENOMEM;
	for (size_t i = 0; i < l->n; i++) {
		const struct btrfs_filesystem *f = &l->v[i];
		struct prom_fs *p = &rep->fs[i];

		*p = (struct prom_fs){
			.fsid = f->fsid, .label = f->label, .present = f->n_members, .expected = f->num_devices
		};
		for (size_t m = 0; m < f->n_members; m++)
			p->stale += btrfs_member_stale(f, &f->members[m]);
		fs_mount_state(in->mountinfo, f, p);
		fs_kernel_members(in->sysfs_btrfs, f, p);
	}
	return 0;
}

/* Appends "; @a@sep@b" to @buf, cut where it does not fit (no printf:
 * inlined, the compiler sees the sizes and warns of the cut). */
static void append(char *buf, size_t len, const char *a, const char *sep, const char *b)
{
	const char *part[] = { "; ", a, sep, b };
	size_t off = strlen(buf);

	for (size_t i = 0; i < ARRAY_SIZE(part) && off + 1 < len; i++) {
		size_t n = strnlen(part[i], len - off - 1);

		memcpy(buf + off, part[i], n);
		off += n;
		buf[off] = '\0';
	}
}

/*
 * A done btrfs record's DETAIL from the devices now rather than from what
 * start recorded, e.g. "2/2 members; devid 2 ('/dev/loop1') is stale:
 * generation 8 against 11 of the others; it was away while the filesystem
 * was written to: only a scrub rewrites what it missed: run `btrfs scrub
 * start /srv/data`".  A member stale at start whose generation has caught
 * up since (a read-write mount writes every member's superblock) is still
 * said: only a scrub rewrote what it missed; a scrub storaged started is
 * said instead of advice.  The kernel's view (missing, not in use) is
 * live_check()'s.  Returns: @buf.
 */
static char *btrfs_reason(const struct live_input *in, const struct state_record *rec, char *buf, size_t len)
{
	const struct btrfs_filesystem *fs = btrfs_fs_list_find(in->btrfs, rec->id);
	const char *mp = live_btrfs_mountpoint(in, rec->id);
	char facts[1024], advice[PATH_MAX * 4 + 200];
	unsigned how;

	if (!fs) {
		snprintf(buf, len, "no member of it is present now (%llu/%llu members when assembled)",
			 (unsigned long long)rec->members_present,
			 (unsigned long long)rec->members_expected);
		return buf;
	}
	snprintf(buf, len, "%zu/%llu members", fs->n_members, (unsigned long long)fs->num_devices);
	if (btrfs_format_states(fs, facts, sizeof(facts))[0])
		append(buf, len, facts, "", "");
	how = mp ? btrfs_live_stale_how(in->sysfs_btrfs, view_mounted_ro(in->mountinfo, mp), fs) : 0;
	btrfs_stale_advice(mp, how | (rec->scrub_started_usec ? STALE_SCRUB_STARTED : 0), in->self,
			   advice, sizeof(advice));
	if (btrfs_format_stale(fs, facts, sizeof(facts))[0])
		append(buf, len, facts, ": ", advice);
	/* caught up (a read-write mount wrote every superblock), not repaired
	 * until a scrub rewrote what it missed */
	else if (rec->members_note && strstr(rec->members_note, " is stale: ") &&
		 !btrfs_scrub_finished_since(in->scrub_status_dir, rec->id, rec->stale_usec))
		append(buf, len, rec->members_note,
		       " (when assembled); its generation has caught up since: ", advice);
	return buf;
}

/*
 * Why @rec is as it is, in words: a btrfs filesystem's members as the
 * devices show them now (btrfs_reason(), when they were read), or
 * as the wait found them ("2/2 members", "1 of 2 members present after
 * 1m30s, devid 2 missing"), else the recorded reason (a failure's message; the words of
 * an older storaged's record).  Returns: @buf or rec->reason (borrowed),
 * NULL when there is none.
 */
static const char *record_reason(const struct live_input *in, const struct state_record *rec,
				 char *buf, size_t len)
{
	const char *note = rec->members_note ? rec->members_note : "";
	const char *decision = state_decision_name(rec->decision);
	char dur[32], why[400] = "";

	if (rec->kind != STATE_BTRFS || !rec->members_expected)
		return rec->reason;
	if (decision)
		snprintf(why, sizeof(why), "; decision %s%s%.300s", decision, rec->late ? "; " : "",
			 rec->late ? rec->late : "");
	if (rec->status == STATE_DONE && in->btrfs) {
		size_t off = strlen(btrfs_reason(in, rec, buf, len));

		if (off < len)
			snprintf(buf + off, len - off, "%s", why);
		return buf;
	}
	if (rec->status == STATE_DONE) {
		snprintf(buf, len, "%llu/%llu members%s%.400s%s", (unsigned long long)rec->members_present,
			 (unsigned long long)rec->members_expected, note[0] ? "; " : "", note, why);
		return buf;
	}
	if (rec->status == STATE_INCOMPLETE) {
		snprintf(buf, len, "%llu of %llu members present after %s%s%s%s",
			 (unsigned long long)rec->members_present, (unsigned long long)rec->members_expected,
			 units_format_duration(rec->waited_usec, dur, sizeof(dur)),
			 note[0] ? ", " : "", note, why);
		return buf;
	}
	return rec->reason;
}

static bool area_listed(const struct status_report *rep, const char *name)
{
	for (size_t i = 0; i < rep->n_areas; i++)
		if (streq(rep->areas[i].name, name))
			return true;
	return false;
}

/* The live check of record @i, its DETAIL, and what it adds to the sum. */
static int check_record(struct status_report *rep, const struct live_input *in, size_t i)
{
	const struct state_record *rec = &rep->st.v[i];
	struct status_entry *e = &rep->entries[i];
	char detail[3072], dur[32], live_why[1536], reason[1536];
	uint64_t ms = rec->duration_usec / USEC_PER_MSEC;

	rep->live[i] = live_check(in, rec, live_why, sizeof(live_why));
	/* an area's record has a row when its area is not listed, unless done */
	e->row = rec->kind != STATE_AREA || (rec->status != STATE_DONE && !area_listed(rep, rec->id));
	if (e->row)
		status_sum_record(&rep->sum, rec, rep->live[i]);
	status_detail(detail, sizeof(detail), live_why,
		      record_reason(in, rec, reason, sizeof(reason)), rec->nofail,
		      ms ? units_format_duration(ms * USEC_PER_MSEC, dur, sizeof(dur)) : NULL);
	if (detail[0] && !(e->detail = strdup(detail)))
		return -ENOMEM;
	return 0;
}

/* "; last sync 2026-12-01T22:50:01Z ok" (UTC, as the metric's seconds),
 * or "" when @s is NULL (never synced while mounted). */
static void last_sync_words(const struct prom_sync *s, char *buf, size_t len)
{
	time_t t;
	struct tm tm;
	char when[32];

	buf[0] = '\0';
	if (!s)
		return;
	t = (time_t)s->time_sec;
	if (!gmtime_r(&t, &tm) || !strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(when, sizeof(when), "@%llu", (unsigned long long)s->time_sec);
	snprintf(buf, len, "; last sync %s %s", when, s->ok ? "ok" : "failed");
}

/* "; grows: started at 32M and 1024 inodes, ceiling 18.2G and 19M
 * inodes", or "" for an area that does not grow (`status` warns when no
 * resident storaged runs to grow it). */
static void grow_words(const struct area_status *a, char *buf, size_t len)
{
	char start[16], ceiling[16];

	buf[0] = '\0';
	if (!a->grow)
		return;
	snprintf(buf, len, "; grows: started at %s and %llu inodes, ceiling %s and %llu inodes",
		 units_format_size_human(a->start_size_bytes, start, sizeof(start)), (unsigned long long)a->start_inodes,
		 units_format_size_human(a->ceiling_bytes, ceiling, sizeof(ceiling)), (unsigned long long)a->ceiling_inodes);
}

/* The DETAIL of area @a: its record's failure while it is set up, why it
 * is not active, or its figures. */
static char *area_detail(const struct area_status *a, const struct status_area *row)
{
	char *detail = NULL, used[16], total[16], synced[64], grows[256], words[128], inodes[64];
	bool full = row->nearly_full && area_status_full(a);
	bool failed = a->state == AREA_STATE_ACTIVE && row->rec && row->rec->seq &&
		      row->rec->status == STATE_FAILED && row->rec->reason;
	int r;

	last_sync_words(row->last, synced, sizeof(synced));
	if (failed)
		r = asprintf(&detail, "%s", row->rec->reason);
	else if (a->state_why)
		r = asprintf(&detail, "%s%s", a->state_why, synced);
	else {
		grow_words(a, grows, sizeof(grows));
		/* a filesystem with no inode count (btrfs: f_files 0) makes them as needed */
		if (a->inodes_total)
			snprintf(inodes, sizeof(inodes), "%llu of %llu inodes", (unsigned long long)a->inodes_used,
				 (unsigned long long)a->inodes_total);
		else
			snprintf(inodes, sizeof(inodes), "inodes as needed");
		r = asprintf(&detail, "%s%s%s%s: %s of %s used, %s%s%s%s%s%s%s",
			     a->backend, a->device ? " " : "", a->device ? a->device : "",
			     a->overlay ? " (overlay's upper layer)" : "",
			     units_format_size_human(a->used_bytes, used, sizeof(used)),
			     units_format_size_human(a->size_bytes, total, sizeof(total)),
			     inodes, !row->nearly_full ? ""
			     : full	       ? " (FULL: "
					       : " (NEARLY FULL)",
			     full ? area_status_full_words(a, words, sizeof(words), NULL) : "", full ? ")" : "",
			     a->persist ? ", persist" : "", grows, synced);
	}
	return r < 0 ? NULL : detail;
}

/* Area @i's row, and what it adds to the sum: bad when gone or
 * interrupted, nearly full, its last sync failed, entries kept on both
 * sides (they want a look until stop), or its record failed while it is
 * set up (what a refused stop left, undo.c); degraded when degraded. */
static int check_area(struct status_report *rep, size_t i)
{
	const struct area_status *a = &rep->areas[i];
	struct status_area *row = &rep->area_rows[i];
	bool active = a->state == AREA_STATE_ACTIVE;
	unsigned bytes, inodes;

	row->rec = state_find(&rep->st, STATE_AREA, a->name);
	for (size_t k = 0; k < rep->n_syncs && !row->last; k++)
		if (streq(rep->syncs[k].area, a->name))
			row->last = &rep->syncs[k];
	row->nearly_full = active && area_status_use(a, &bytes, &inodes);
	row->sync_failed = active && row->last && !row->last->ok && !a->kept_both;
	status_sum_area(&rep->sum, a->state);
	rep->sum.bad += row->nearly_full + (active && a->kept_both) + row->sync_failed;
	rep->sum.bad += active && row->rec && row->rec->seq && row->rec->status == STATE_FAILED &&
			row->rec->reason;
	row->detail = area_detail(a, row);
	return row->detail ? 0 : -ENOMEM;
}

/* The last sync of each area that was synced (status_prom_read_sync()). */
static int read_syncs(struct status_report *rep, const char *state_dir)
{
	rep->syncs = calloc(rep->n_areas ?: 1, sizeof(*rep->syncs));
	if (!rep->syncs)
		return -ENOMEM;
	for (size_t i = 0; i < rep->n_areas; i++) {
		struct prom_sync *s = &rep->syncs[rep->n_syncs];

		if (status_prom_read_sync(state_dir, rep->areas[i].name, s) < 0)
			continue; /* never synced, or a record to ignore */
		s->area = rep->areas[i].name;
		rep->n_syncs++;
	}
	return 0;
}

/* Every check against the mount table, which is read once for them. */
static int check_live(struct status_report *rep, const struct sources *src, const struct logger *lg,
		      bool nobody_at_work, enum status_devices dev)
{
	struct live_input in = { .sysfs_btrfs = src->sysfs_btrfs,
				 .scrub_status_dir = src->scrub_status_dir,
				 .areas = rep->areas,
				 .n_areas = rep->n_areas,
				 .self = log_self(lg),
				 .nobody_at_work = nobody_at_work };
	int r = 0;

	in.mountinfo = view_read_table(src->mountinfo_path);
	if (!in.mountinfo) {
		log_error(lg, "cannot read %s: %s", src->mountinfo_path, strerror(errno));
		return -EIO;
	}
	r = read_btrfs(rep, src, lg, dev);
	in.btrfs = rep->btrfs;
	if (r == 0)
		r = btrfs_facts(rep, &in);
	for (size_t i = 0; r == 0 && i < rep->st.n; i++)
		r = check_record(rep, &in, i);
	for (size_t i = 0; r == 0 && i < rep->n_areas; i++)
		r = check_area(rep, i);
	mnt_unref_table(in.mountinfo);
	return r;
}

/* Which areas grow (grow = yes) and how far they can now, from the
 * configuration and /proc/meminfo; a configuration that cannot be read
 * shows none growing (its errors are check's and start's to report). */
static void fill_grow(const struct options *o, struct area_status *areas, size_t n)
{
	struct diag_list dl = { 0 };
	struct sysinfo_memory m;
	struct config c;

	if (!n || config_init(&c) < 0)
		return;
	if (world_load_settings(o->config_path, &c, &dl) == 0 && sysinfo_memory(NULL, &m) == 0)
		area_grow_fill(areas, n, &c, m.available, m.total);
	diag_list_done(&dl);
	config_done(&c);
}

/* The run row's DETAIL when a start left DIR/unfinished and nobody is at
 * work: what the records cannot say (the steps it had not reached have
 * none) and what finishes or undoes it.  Returns: 0; -ENOMEM. */
static int check_unfinished(struct status_report *rep, const char *state_dir, const char *self,
			    bool nobody_at_work)
{
	char when[64] = "";
	int64_t began = 0;
	time_t t;
	struct tm tm;

	if (!nobody_at_work || statedir_run_unfinished(state_dir, &began) <= 0)
		return 0;
	t = (time_t)began;
	if (began && localtime_r(&t, &tm))
		strftime(when, sizeof(when), " begun %Y-%m-%d %H:%M:%S", &tm);
	rep->sum.bad++;
	return asprintf(&rep->unfinished,
			"the `start`%s was killed or cut short before it ended, and no storaged is at it: the steps it had not reached, if any, are not set up and have no row here; `%s start` completes it, `%s stop` undoes it",
			when, self, self) < 0
		       ? -ENOMEM
		       : 0;
}

int status_report_build(const struct options *o, const struct logger *lg, bool nobody_at_work,
			enum status_devices dev, struct status_report *ret)
{
	struct sources src;
	int r;

	*ret = (struct status_report){ .collected_sec = (int64_t)time(NULL) };
	sources_init(&src, o);
	if (statedir_load_state(o->state_dir, lg, &ret->st) < 0)
		return -EPERM;
	/* the areas before the live check, which looks at their binds */
	if (area_status_list(o->state_dir, log_self(lg), nobody_at_work, &ret->areas, &ret->n_areas) < 0)
		ret->n_areas = 0;
	fill_grow(o, ret->areas, ret->n_areas);
	ret->live = calloc(ret->st.n ?: 1, sizeof(*ret->live));
	ret->entries = calloc(ret->st.n ?: 1, sizeof(*ret->entries));
	ret->area_rows = calloc(ret->n_areas ?: 1, sizeof(*ret->area_rows));
	if (!ret->live || !ret->entries || !ret->area_rows)
		return -ENOMEM;
	r = read_syncs(ret, o->state_dir);
	if (r == 0)
		r = check_unfinished(ret, o->state_dir, log_self(lg), nobody_at_work);
	return r < 0 ? r : check_live(ret, &src, lg, nobody_at_work, dev);
}

void status_report_done(struct status_report *rep)
{
	for (size_t i = 0; rep->entries && i < rep->st.n; i++)
		free(rep->entries[i].detail);
	for (size_t i = 0; rep->area_rows && i < rep->n_areas; i++)
		free(rep->area_rows[i].detail);
	free(rep->unfinished);
	free(rep->entries);
	free(rep->area_rows);
	free(rep->live);
	free(rep->syncs);
	free(rep->fs);
	area_status_free(rep->areas, rep->n_areas);
	state_done(&rep->st);
	world_done(&rep->w);
}

struct prom_data status_report_prom(const struct status_report *rep)
{
	return (struct prom_data){ .fs = rep->fs,
				   .n_fs = rep->btrfs ? rep->btrfs->n : 0,
				   .state = &rep->st,
				   .live = rep->live,
				   .areas = rep->areas,
				   .n_areas = rep->n_areas,
				   .syncs = rep->syncs,
				   .n_syncs = rep->n_syncs,
				   .collected_sec = rep->collected_sec,
				   .unfinished = rep->unfinished != NULL };
}
