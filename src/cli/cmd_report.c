/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Read-only reports: `storaged scan` (the block devices as world.c loads
 * them) and `storaged status` (the state, checked against the live system:
 * status_live.h), as tables or JSON through libsmartcols.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <libsmartcols.h>

#include "area/area.h"
#include "devices/btrfs.h"
#include "commands.h"
#include "liveness.h"
#include "devices/inventory.h"
#include "shared/json_out.h"
#include "state/state.h"
#include "status/status_btrfs.h"
#include "status/status_live.h"
#include "world/statedir.h"
#include "status/status_prom.h"
#include "shared/units.h"
#include "world/world.h"
#include "mount/view.h"

static int set_u64(struct libscols_line *ln, size_t col, uint64_t v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)v);
	return scols_line_set_data(ln, col, buf);
}

/* JSON: "members" and "devids" are parallel arrays; "missing" lists the
 * devids known to be missing.  Text: one readable cell each. */
static const struct json_column scan_cols[] = {
	{ "FSID", 36, 0, SCOLS_JSON_STRING },
	{ "LABEL", 0.1, SCOLS_FL_TRUNC, SCOLS_JSON_STRING },
	{ "PRESENT", 3, SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER },
	{ "EXPECTED", 3, SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER },
	{ "MEMBERS", 0.3, 0, SCOLS_JSON_ARRAY_STRING },
	{ "DEVIDS", 3, 0, SCOLS_JSON_ARRAY_NUMBER },
	{ "MISSING", 0.2, 0, SCOLS_JSON_ARRAY_NUMBER },
	{ "PROBLEMS", 0.2, 0, SCOLS_JSON_ARRAY_STRING },
	{ "SEEDS", 3, 0, SCOLS_JSON_ARRAY_NUMBER },
	{ "STRANGERS", 0.2, 0, SCOLS_JSON_ARRAY_STRING },
};

/* JSON only: "problems", what makes the exit status 1 (btrfs_fs_problems());
 * "seeds", the devids of the members that are seeds; "strangers", the
 * devices that carry the fsid but are not its devices (btrfs_group()). */
#define SCAN_TEXT_COLS 7

/* The BTRFS_FS_* bits of @p as words, @sep between them, in @buf. */
static void problem_words(unsigned p, char *buf, size_t len, const char *sep)
{
	static const char *const words[] = { "incomplete", "stale", "ambiguous" };

	buf[0] = '\0';
	for (size_t i = 0; i < ARRAY_SIZE(words); i++)
		if (p & (1u << i))
			snprintf(buf + strlen(buf), len - strlen(buf), "%s%s", buf[0] ? sep : "", words[i]);
}

/* Appends @v to the @sep-separated list in @buf. */
static void append_u64(char *buf, size_t len, uint64_t v, const char *sep)
{
	size_t off = strlen(buf);

	if (off < len)
		snprintf(buf + off, len - off, "%s%llu", off ? sep : "", (unsigned long long)v);
}

static int scan_line(struct libscols_table *tb, const struct btrfs_filesystem *fs, bool json)
{
	struct libscols_line *ln = scols_table_new_line(tb, NULL);
	char members[4096] = "", devids[512] = "", missing[512] = "", problems[64], seeds[512] = "";
	char strangers[4096] = "";
	const char *sep = json ? "\n" : " ";
	size_t off = 0;

	if (!ln)
		return -ENOMEM;
	for (size_t m = 0; m < fs->n_members && off < sizeof(members); m++) {
		off += snprintf(members + off, sizeof(members) - off, "%s%s%s", m ? sep : "",
				fs->members[m].dev->devnode, fs->members[m].seed && !json ? " (seed)" : "");
		append_u64(devids, sizeof(devids), fs->members[m].devid, sep);
		if (fs->members[m].seed)
			append_u64(seeds, sizeof(seeds), fs->members[m].devid, sep);
	}
	off = 0;
	for (size_t k = 0; k < fs->n_strangers && off < sizeof(strangers); k++)
		off += snprintf(strangers + off, sizeof(strangers) - off, "%s%s", k ? sep : "",
				fs->strangers[k].dev->devnode);
	if (json)
		for (size_t k = 0; k < fs->n_missing; k++)
			append_u64(missing, sizeof(missing), fs->missing[k], sep);
	else
		btrfs_format_missing(fs, missing, sizeof(missing));
	if (scols_line_set_data(ln, 0, fs->fsid) || scols_line_set_data(ln, 1, fs->label) ||
	    set_u64(ln, 2, fs->n_members) || set_u64(ln, 3, fs->num_devices) ||
	    scols_line_set_data(ln, 4, members) || scols_line_set_data(ln, 5, devids) ||
	    scols_line_set_data(ln, 6, missing[0] ? missing : NULL))
		return -ENOMEM;
	problem_words(btrfs_fs_problems(fs), problems, sizeof(problems), "\n");
	if (json && (scols_line_set_data(ln, 7, problems[0] ? problems : NULL) ||
		     scols_line_set_data(ln, 8, seeds[0] ? seeds : NULL) ||
		     scols_line_set_data(ln, 9, strangers[0] ? strangers : NULL)))
		return -ENOMEM;
	return 0;
}


/* JSON: the devices that could not be read, with why, what they hold and
 * who says so ("udev", "mounts"; null when nobody does), and which
 * reported filesystems they could be a missing member of. */
static const struct json_column unreadable_cols[] = {
	{ "DEVICE", 0.2, 0, SCOLS_JSON_STRING },
	{ "STAGE", 5, 0, SCOLS_JSON_STRING },
	{ "ERROR", 0.3, 0, SCOLS_JSON_STRING },
	{ "TYPE", 5, 0, SCOLS_JSON_STRING },
	{ "COULD_BE_MEMBER_OF", 0.3, 0, SCOLS_JSON_ARRAY_STRING },
	{ "SOURCE", 5, 0, SCOLS_JSON_STRING },
};

/* Who said what @d holds, as JSON's SOURCE; NULL when nobody did. */
static const char *unreadable_source_word(const struct unreadable_device *d)
{
	switch (d->source) {
	case UNREADABLE_BY_UDEV:
		return "udev";
	case UNREADABLE_BY_MOUNTS:
		return "mounts";
	case UNREADABLE_SAYS_NOTHING:
		break;
	}
	return NULL;
}

/* The incomplete filesystems of @l that @d could be a member of, @sep
 * between their fsids, in @buf (empty when none).  Returns: how many. */
static unsigned could_be_member_of(const struct unreadable_device *d, const struct btrfs_fs_list *l,
				   char *buf, size_t len, const char *sep)
{
	unsigned n = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < l->n; i++)
		if ((btrfs_fs_problems(&l->v[i]) & BTRFS_FS_INCOMPLETE) &&
		    inventory_could_be_member(d, l->v[i].fsid) && strlen(buf) + 40 < len) {
			snprintf(buf + strlen(buf), len - strlen(buf), "%s%s", n ? sep : "", l->v[i].fsid);
			n++;
		}
	return n;
}

static int unreadable_line(struct libscols_table *tb, const struct unreadable_device *d,
			   const struct btrfs_fs_list *l)
{
	struct libscols_line *ln = scols_table_new_line(tb, NULL);
	char of[1024];

	if (!ln)
		return -ENOMEM;
	could_be_member_of(d, l, of, sizeof(of), "\n");
	if (scols_line_set_data(ln, 0, d->devnode) ||
	    scols_line_set_data(ln, 1, d->probing ? "probe" : "open") ||
	    scols_line_set_data(ln, 2, strerror(d->err)) || scols_line_set_data(ln, 3, d->fs_type) ||
	    scols_line_set_data(ln, 4, of[0] ? of : NULL) ||
	    scols_line_set_data(ln, 5, unreadable_source_word(d)))
		return -ENOMEM;
	return 0;
}

/* What @d->source says @d holds, in words: "udev says ext4 UUID",
 * "the mount table says ext4 (mounted on /)", in @buf. */
static const char *unreadable_says(const struct unreadable_device *d, char *buf, size_t len)
{
	bool mounts = d->source == UNREADABLE_BY_MOUNTS;

	snprintf(buf, len, "%s says %s%s%s%s%s%s", mounts ? "the mount table" : "udev", d->fs_type,
		 d->fs_uuid ? " " : "", d->fs_uuid ?: "", mounts ? " (mounted on " : "",
		 mounts ? d->mountpoint : "", mounts ? ")" : "");
	return buf;
}

/* One line of text per device that could not be read: why, and whether it
 * could be a missing member of a filesystem the table shows. */
static void print_unreadable(const struct unreadable_device *d, const struct btrfs_fs_list *l)
{
	char of[1024], says[PATH_MAX + 256];
	unsigned n = could_be_member_of(d, l, of, sizeof(of), ", ");

	printf("'%s' could not be read (%s: %s); ", d->devnode,
	       d->probing ? "libblkid cannot probe it" : "cannot open", strerror(d->err));
	if (!d->fs_type)
		printf("its type is unknown%s%s\n", n ? ": it could be a missing member of " : ", but no filesystem shown lacks a member",
		       n ? of : "");
	else if (n)
		printf("%s: it could be a missing member of %s\n", unreadable_says(d, says, sizeof(says)), of);
	else if (d->source == UNREADABLE_BY_MOUNTS && d->fs_uuid && btrfs_fs_list_find(l, d->fs_uuid))
		printf("%s: a member the kernel has mounted, not a missing one\n",
		       unreadable_says(d, says, sizeof(says)));
	else
		printf("%s: not a missing member\n", unreadable_says(d, says, sizeof(says)));
}

static int scan_print(const struct options *o, const struct world *w, unsigned *ret_problems)
{
	size_t ncols = o->json ? ARRAY_SIZE(scan_cols) : SCAN_TEXT_COLS;
	struct libscols_table *tbs[2] = {
		json_table_new("filesystems", scan_cols, ncols, o->json),
		json_table_new("unreadable", unreadable_cols, ARRAY_SIZE(unreadable_cols), true),
	};
	int r = tbs[0] && tbs[1] ? 0 : -ENOMEM;

	*ret_problems = 0;
	for (size_t i = 0; r == 0 && i < w->btrfs.n; i++) {
		*ret_problems |= btrfs_fs_problems(&w->btrfs.v[i]);
		r = scan_line(tbs[0], &w->btrfs.v[i], o->json);
	}
	for (size_t i = 0; r == 0 && i < w->inv.n_skipped; i++)
		r = unreadable_line(tbs[1], &w->inv.skipped[i], &w->btrfs);
	if (r == 0 && o->json)
		r = json_print_tables(tbs, 2, stdout);
	else if (r == 0 && w->btrfs.n)
		r = scols_print_table(tbs[0]);
	else if (r == 0)
		printf("no btrfs filesystem found on %zu block device(s)\n", w->inv.n_devs);
	for (size_t i = 0; r == 0 && !o->json && i < w->inv.n_skipped; i++)
		print_unreadable(&w->inv.skipped[i], &w->btrfs);
	scols_unref_table(tbs[0]);
	scols_unref_table(tbs[1]);
	return r;
}

int cmd_scan(const struct options *o, const struct logger *lg)
{
	struct sources src;
	struct world w = { 0 };
	unsigned problems = 0;
	int r;

	sources_init(&src, o);
	r = world_load_devices(&src, INVENTORY_FULL, lg, &w);
	if (r < 0)
		log_error(lg, "cannot list block devices: %s", strerror(-r));
	else
		r = scan_print(o, &w, &problems);
	world_done(&w);
	/* storaged(8), EXIT STATUS: 1 unless every filesystem shown is
	 * complete, current and unambiguous; a device that could not be read
	 * counts only as the member it could be, which leaves one incomplete */
	return r < 0 || problems ? EXIT_STEP_FAILED : 0;
}

/* JSON only: "recorded", what the state says, when the live check
 * found otherwise (null when as recorded); "nofail"; "mount_id"; and
 * "duration_ms" (numbers, null when unknown). */
static const struct json_column status_cols[] = {
	{ "KIND", 5, 0, SCOLS_JSON_STRING },
	{ "WHAT", 0.3, 0, SCOLS_JSON_STRING },
	{ "SOURCE", 0.2, SCOLS_FL_TRUNC, SCOLS_JSON_STRING },
	{ "STATUS", 8, 0, SCOLS_JSON_STRING },
	{ "DETAIL", 0.5, SCOLS_FL_WRAP, SCOLS_JSON_STRING },
	{ "RECORDED", 8, 0, SCOLS_JSON_STRING },
	{ "NOFAIL", 1, 0, SCOLS_JSON_BOOLEAN },
	{ "MOUNT_ID", 1, 0, SCOLS_JSON_NUMBER },
	{ "DURATION_MS", 1, 0, SCOLS_JSON_NUMBER },
	{ "LAST_SYNC", 1, 0, SCOLS_JSON_NUMBER },
	/* a boolean that is null before the first sync: libsmartcols prints
	 * an empty BOOLEAN cell as false, an empty NUMBER one as null, and
	 * a NUMBER cell's text as it is */
	{ "LAST_SYNC_OK", 1, 0, SCOLS_JSON_NUMBER },
	/* areas: statvfs(3) of the mounted area, bytes and counts */
	{ "SIZE_BYTES", 1, 0, SCOLS_JSON_NUMBER },
	{ "USED_BYTES", 1, 0, SCOLS_JSON_NUMBER },
	{ "AVAIL_BYTES", 1, 0, SCOLS_JSON_NUMBER },
	{ "INODES", 1, 0, SCOLS_JSON_NUMBER },
	{ "INODES_USED", 1, 0, SCOLS_JSON_NUMBER },
	{ "NEARLY_FULL", 1, 0, SCOLS_JSON_BOOLEAN },
	/* btrfs: what was decided once the wait for the members ended, the
	 * wait, who arrived when (state_record.decision, .wait_policy,
	 * .arrivals), and how long it waited */
	{ "DECISION", 1, 0, SCOLS_JSON_STRING },
	{ "WAIT", 1, 0, SCOLS_JSON_STRING },
	{ "ARRIVALS", 1, 0, SCOLS_JSON_STRING },
	{ "WAITED_MS", 1, 0, SCOLS_JSON_NUMBER },
	/* members back after a degraded mount (state_record.late) */
	{ "LATE", 1, 0, SCOLS_JSON_STRING },
	/* areas: no byte or no inode left (area_status_full()) */
	{ "FULL", 1, 0, SCOLS_JSON_BOOLEAN },
};
#define STATUS_TEXT_COLS 5

/*
 * Why @rec is as it is, in words: a btrfs filesystem's members as the
 * devices show them now (status_btrfs_reason(), when they were read), or
 * as the wait found them ("2/2 members", "1 of 2 members present after
 * 1m30s, devid 2 missing"), else the recorded reason (a failure's message; the words of
 * an older storaged's record).  Returns: @buf or rec->reason (borrowed),
 * NULL when there is none.
 */
static const char *record_reason(const struct live_input *in, const struct state_record *rec, char *buf,
				 size_t len)
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
		size_t off = strlen(status_btrfs_reason(in, in->btrfs, rec, buf, len));

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
			 units_format_duration(rec->waited_usec, dur, sizeof(dur)), note[0] ? ", " : "", note, why);
		return buf;
	}
	return rec->reason;
}

static int status_record(struct libscols_table *tb, const struct live_input *in,
			 const struct state_record *rec, bool json, struct status_sum *sum)
{
	struct libscols_line *ln = scols_table_new_line(tb, NULL);
	char detail[3072], dur[32], live_why[1536], reason[1536];
	enum live_status live = live_check(in, rec, live_why, sizeof(live_why));
	const char *word = live_status_name(live);
	uint64_t ms = rec->duration_usec / USEC_PER_MSEC;
	int r;

	if (!ln)
		return -ENOMEM;
	status_sum_record(sum, rec, live);
	status_detail(detail, sizeof(detail), live_why, record_reason(in, rec, reason, sizeof(reason)),
		      rec->nofail, ms ? units_format_duration(ms * USEC_PER_MSEC, dur, sizeof(dur)) : NULL);
	r = scols_line_set_data(ln, 0, state_kind_name(rec->kind));
	r = r ? r : scols_line_set_data(ln, 1, rec->id);
	r = r ? r : scols_line_set_data(ln, 2, rec->source);
	r = r ? r : scols_line_set_data(ln, 3, word ? word : state_status_name(rec->status));
	r = r ? r : scols_line_set_data(ln, 4, detail[0] ? detail : NULL);
	if (json) {
		r = r ? r : scols_line_set_data(ln, 5, word ? state_status_name(rec->status) : NULL);
		r = r ? r : scols_line_set_data(ln, 6, rec->nofail ? "1" : "0");
		r = r ? r : (rec->mount_id ? set_u64(ln, 7, rec->mount_id) : 0);
		r = r ? r : (ms ? set_u64(ln, 8, ms) : 0);
		r = r ? r : scols_line_set_data(ln, 17, state_decision_name(rec->decision));
		r = r ? r : scols_line_set_data(ln, 18, rec->wait_policy);
		r = r ? r : scols_line_set_data(ln, 19, rec->arrivals);
		r = r ? r : (rec->kind == STATE_BTRFS && rec->members_expected
				     ? set_u64(ln, 20, rec->waited_usec / USEC_PER_MSEC)
				     : 0);
		r = r ? r : scols_line_set_data(ln, 21, rec->late);
	}
	return r ? -ENOMEM : 0;
}

/* "; last sync 2026-12-01T22:50:01Z ok" (UTC, as the metric's seconds),
 * or "" when @a was never synced while mounted. */
static void last_sync_words(const char *state_dir, const char *name, struct prom_sync *s, char *buf,
			    size_t len)
{
	time_t t;
	struct tm tm;
	char when[32];

	buf[0] = '\0';
	if (status_prom_read_sync(state_dir, name, s) < 0) {
		s->time_sec = 0;
		return;
	}
	t = (time_t)s->time_sec;
	if (!gmtime_r(&t, &tm) || !strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(when, sizeof(when), "@%llu", (unsigned long long)s->time_sec);
	snprintf(buf, len, "; last sync %s %s", when, s->ok ? "ok" : "failed");
}

/* The area's figures as JSON numbers (null when it was not measured). */
static int area_numbers(struct libscols_line *ln, const struct area_status *a, bool nearly)
{
	if (!a->measured)
		return 0;
	if (set_u64(ln, 11, a->size_bytes) || set_u64(ln, 12, a->used_bytes) ||
	    set_u64(ln, 13, a->avail_bytes) || set_u64(ln, 14, a->inodes_total) ||
	    set_u64(ln, 15, a->inodes_used) || scols_line_set_data(ln, 16, nearly ? "1" : "0") ||
	    scols_line_set_data(ln, 22, area_status_full(a) ? "1" : "0"))
		return -ENOMEM;
	return 0;
}

/* A warning for an area full or nearly full, with what to do: the
 * kernel's ENOSPC says nothing of which limit it hit.  Returns: true when
 * nearly full (full among it). */
static bool warn_nearly_full(const struct area_status *a, const struct logger *lg)
{
	unsigned bytes, inodes;
	bool full = area_status_full(a);
	char why[64];

	if (!area_status_use(a, &bytes, &inodes))
		return false;
	if (full)
		snprintf(why, sizeof(why), "writes to it fail with ENOSPC");
	else
		snprintf(why, sizeof(why), "warned from %u%%", AREA_NEARLY_FULL_PERCENT);
	log_warning(lg, "area '%s' on %s is %s: %u%% of its bytes and %u%% of its inodes used (%s); raise %s in its [area] section, then `%s stop` and `%s start`",
		    a->name, a->path, full ? "full" : "nearly full", bytes, inodes, why,
		    bytes >= AREA_NEARLY_FULL_PERCENT && inodes >= AREA_NEARLY_FULL_PERCENT ? "size= and inodes="
		    : bytes >= AREA_NEARLY_FULL_PERCENT					 ? "size="
											 : "inodes=",
		    log_self(lg), log_self(lg));
	return true;
}

/* @rec: the area's record in the run state, or NULL: failed while the
 * area is set up, what a refused stop left (undo.c), which says why. */
static int status_area(struct libscols_table *tb, const char *state_dir, const struct area_status *a,
		       const struct state_record *rec, const struct logger *lg, bool json,
		       struct status_sum *sum)
{
	struct libscols_line *ln = scols_table_new_line(tb, NULL);
	char detail[768], used[16], total[16], synced[64];
	struct prom_sync last;
	bool full;

	if (!ln)
		return -ENOMEM;
	status_sum_area(sum, a->state);
	full = a->state == AREA_STATE_ACTIVE && warn_nearly_full(a, lg);
	sum->bad += full;
	last_sync_words(state_dir, a->name, &last, synced, sizeof(synced));
	/* what that sync did not bring back (or kept twice) wants a look */
	/* entries kept on both sides want a look until stop (the detail) */
	sum->bad += a->state == AREA_STATE_ACTIVE && a->kept_both;
	if (a->state == AREA_STATE_ACTIVE && last.time_sec && !last.ok && !a->kept_both) {
		sum->bad++;
		log_warning(lg, "area '%s': its last sync back failed (the sync's messages said why and what to do); fix that and run `%s sync %s`",
			    a->name, log_self(lg), a->name);
	}
	if (a->state == AREA_STATE_ACTIVE && rec && rec->seq && rec->status == STATE_FAILED && rec->reason) {
		sum->bad++;
		snprintf(detail, sizeof(detail), "%s", rec->reason);
	} else if (a->state_why)
		snprintf(detail, sizeof(detail), "%s%s", a->state_why, synced);
	else
		snprintf(detail, sizeof(detail), "%s%s%s%s: %s of %s used, %llu of %llu inodes%s%s%s", a->backend,
			 a->device ? " " : "", a->device ? a->device : "",
			 a->overlay ? " (overlay's upper layer)" : "",
			 units_format_size(a->used_bytes, used, sizeof(used)),
			 units_format_size(a->size_bytes, total, sizeof(total)),
			 (unsigned long long)a->inodes_used, (unsigned long long)a->inodes_total,
			 !full		       ? ""
			 : area_status_full(a) ? " (FULL)"
					       : " (NEARLY FULL)",
			 a->persist ? ", persist" : "", synced);
	if (json && area_numbers(ln, a, full) < 0)
		return -ENOMEM;
	if (scols_line_set_data(ln, 0, "area") || scols_line_set_data(ln, 1, a->name) ||
	    scols_line_set_data(ln, 2, a->path) || scols_line_set_data(ln, 3, area_state_name(a->state)) ||
	    scols_line_set_data(ln, 4, detail) || (json && scols_line_set_data(ln, 6, "0")))
		return -ENOMEM;
	if (json && last.time_sec &&
	    (set_u64(ln, 9, last.time_sec) || scols_line_set_data(ln, 10, last.ok ? "true" : "false")))
		return -ENOMEM;
	return 0;
}

static bool area_listed(const struct area_status *areas, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (streq(areas[i].name, name))
			return true;
	return false;
}

static int status_table(const struct options *o, const struct logger *lg, const struct live_input *in,
			struct state *st, struct area_status *areas, size_t n_areas, struct status_sum *sum)
{
	size_t ncols = o->json ? ARRAY_SIZE(status_cols) : STATUS_TEXT_COLS;
	struct libscols_table *tb = json_table_new("status", status_cols, ncols, o->json);
	int r = 0;

	for (size_t i = 0; tb && r == 0 && i < st->n; i++)
		if (st->v[i].kind != STATE_AREA)
			r = status_record(tb, in, &st->v[i], o->json, sum);
	for (size_t i = 0; tb && r == 0 && i < n_areas; i++)
		r = status_area(tb, o->state_dir, &areas[i], state_find(st, STATE_AREA, areas[i].name), lg,
				o->json, sum);
	/* areas that failed or were skipped, unless set up (by an earlier
	 * pass): then their own records above say what is there */
	for (size_t i = 0; tb && r == 0 && i < st->n; i++)
		if (st->v[i].kind == STATE_AREA && st->v[i].status != STATE_DONE &&
		    !area_listed(areas, n_areas, st->v[i].id))
			r = status_record(tb, in, &st->v[i], o->json, sum);
	if (!tb)
		r = -ENOMEM;
	else if (r == 0)
		r = o->json ? json_print_table(tb, stdout) : scols_print_table(tb);
	scols_unref_table(tb);
	return r;
}

/* The btrfs filesystems of the devices now, when the state has a btrfs
 * record (status words them from the superblocks, not from the record);
 * what the listing warns of is start's and scan's to say.  Returns: the
 * list (in @w), or NULL. */
static const struct btrfs_fs_list *read_btrfs(const struct sources *src, const struct logger *lg,
					      const struct state *st, struct world *w)
{
	struct logger quiet = *lg;
	bool any = false;

	for (size_t i = 0; i < st->n && !any; i++)
		any = st->v[i].kind == STATE_BTRFS;
	quiet.max_level = LOG_ERR;
	return any && world_load_devices(src, INVENTORY_FULL, &quiet, w) == 0 ? &w->btrfs : NULL;
}

bool state_dir_missing(const struct options *o, const struct logger *lg)
{
	struct stat st;

	if (!o->state_dir_given || lstat(o->state_dir, &st) == 0 || errno != ENOENT)
		return false;
	log_error(lg, "--state-dir '%s': no such directory: storaged set nothing up with it; check the name (start makes it, default %s)",
		  o->state_dir, STATE_DIR_DEFAULT);
	return true;
}

/* Is a storaged process at work on @dir: a start or stop (its lock), or
 * a resident between two passes (its own)?  From the locks the kernel
 * holds for them (liveness.h), never from a pid file. */
static bool at_work(const char *dir)
{
	_cleanup_free_ char *lock = NULL, *resident = NULL;

	if (asprintf(&lock, "%s/lock", dir) < 0 || asprintf(&resident, "%s/resident", dir) < 0)
		return true; /* not known: claim nothing */
	return liveness_held(lock) != 0 || liveness_held(resident) != 0;
}

/* A line after the table when a resident storaged holds the state
 * directory (its lock held: liveness.h); nothing when none does, whatever
 * a pid file left behind says. */
static void print_resident(const char *dir)
{
	_cleanup_free_ char *lock = NULL, *pidfile = NULL;
	pid_t pid;

	if (asprintf(&lock, "%s/resident", dir) < 0 || asprintf(&pidfile, "%s/storaged.pid", dir) < 0 ||
	    liveness_held(lock) <= 0)
		return;
	pid = liveness_pid(lock, pidfile);
	if (pid > 0)
		printf("resident storaged: pid %d handles devices as they appear and the periodic syncs\n", (int)pid);
	else
		printf("resident storaged: running (holds '%s'; '%s' names no process that has it open)\n", lock,
		       pidfile);
}

int cmd_status(const struct options *o, const struct logger *lg)
{
	struct sources src;
	struct state st = { 0 };
	struct area_status *areas = NULL;
	struct status_sum sum = { 0 };
	struct live_input in;
	struct world w = { 0 };
	size_t n_areas = 0;
	int r;

	sources_init(&src, o);
	in = (struct live_input){ .sysfs_btrfs = src.sysfs_btrfs,
				  .scrub_status_dir = src.scrub_status_dir,
				  .self = log_self(lg) };
	/* --format=prometheus, all of it in status_prom*.c */
	if (o->prometheus)
		return cmd_status_prometheus(o, lg, !at_work(o->state_dir));
	if (state_dir_missing(o, lg))
		return EXIT_STATE;
	if (statedir_load_state(o->state_dir, lg, &st) < 0)
		return EXIT_STATE;
	in.btrfs = read_btrfs(&src, lg, &st, &w);
	in.nobody_at_work = !at_work(o->state_dir);
	if (area_status_list(o->state_dir, log_self(lg), in.nobody_at_work, &areas, &n_areas) < 0)
		n_areas = 0;
	in.areas = areas;
	in.n_areas = n_areas;
	in.mountinfo = view_read_table(src.mountinfo_path);
	if (!in.mountinfo) {
		log_error(lg, "cannot read %s: %s", src.mountinfo_path, strerror(errno));
		r = -EIO;
	} else if (st.n == 0 && n_areas == 0 && !o->json) {
		printf("storaged has set up nothing (state directory %s)\n", o->state_dir);
		r = 0;
	} else {
		r = status_table(o, lg, &in, &st, areas, n_areas, &sum);
	}
	if (r == 0 && !o->json)
		print_resident(o->state_dir);
	mnt_unref_table(in.mountinfo);
	area_status_free(areas, n_areas);
	world_done(&w);
	state_done(&st);
	if (r < 0)
		return EXIT_STEP_FAILED;
	return status_sum_exit(&sum);
}
