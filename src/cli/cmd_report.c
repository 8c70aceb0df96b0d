/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Read-only reports: `storaged scan` (the block devices as world.c loads
 * them) and `storaged status` (the state, checked against the live system:
 * status_live.h), as tables or JSON through libsmartcols.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libsmartcols.h>

#include "area/area.h"
#include "devices/btrfs.h"
#include "commands.h"
#include "area_watch.h"
#include "liveness.h"
#include "devices/inventory.h"
#include "shared/json_out.h"
#include "shared/table_out.h"
#include "state/state.h"
#include "status/status_report.h"
#include "shared/units.h"
#include "world/world.h"

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
	{ "REPLACE_TARGET", 0.2, 0, SCOLS_JSON_STRING },
	{ "REPLACE_OF", 3, 0, SCOLS_JSON_NUMBER },
};

/* Not in the default table (-o picks them): "problems", what makes the
 * exit status 1 (btrfs_fs_problems()); "seeds", the devids of the members
 * that are seeds; "strangers", the devices that carry the fsid but are
 * not its devices (btrfs_group()); "replace_target", the target of a
 * replace in progress, or null (the text lists it among the members), and
 * "replace_of", the devid it replaces, or null when not known. */
#define SCAN_TEXT_COLS 7

/* --help's words for each of scan_cols (table_columns_usage()) */
static const char *const scan_help[] = {
	"filesystem UUID (fsid)",
	"filesystem label",
	"members present",
	"members the filesystem has",
	"member devices, a seed marked (seed)",
	"the members' devids",
	"devids known to be missing",
	"incomplete, stale, ambiguous",
	"devids of the members that are seeds",
	"devices with the fsid that are not its devices",
	"the target of a replace in progress",
	"the devid a replace target replaces",
};
_Static_assert(ARRAY_SIZE(scan_help) == ARRAY_SIZE(scan_cols), "a help line for each scan column");

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
	if (fs->replace_target && !json && off < sizeof(members)) {
		const struct btrfs_sb_info *t = &fs->replace_target->btrfs;

		off += snprintf(members + off, sizeof(members) - off, "%s%s (replace target", off ? sep : "",
				fs->replace_target->devnode);
		if (t->replace_known && off < sizeof(members))
			off += snprintf(members + off, sizeof(members) - off, " of devid %" PRIu64, t->replace_src_devid);
		if (off < sizeof(members))
			off += snprintf(members + off, sizeof(members) - off, ")");
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
	problem_words(btrfs_fs_problems(fs), problems, sizeof(problems), sep);
	if (scols_line_set_data(ln, 7, problems[0] ? problems : NULL) ||
	    scols_line_set_data(ln, 8, seeds[0] ? seeds : NULL) ||
	    scols_line_set_data(ln, 9, strangers[0] ? strangers : NULL) ||
	    scols_line_set_data(ln, 10, fs->replace_target ? fs->replace_target->devnode : NULL) ||
	    (fs->replace_target && fs->replace_target->btrfs.replace_known &&
	     set_u64(ln, 11, fs->replace_target->btrfs.replace_src_devid)))
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

/* -o, or the default columns (the text's, or with --json all of them);
 * a name that is no column is a usage error, logged with the names.
 * Returns: 0, or -EINVAL (logged). */
static int pick_columns(const struct options *o, const struct logger *lg, const struct json_column *cols,
			size_t n, size_t n_text, struct table_pick *ret)
{
	const char *bad = NULL;
	size_t bad_len = 0;
	char names[512];
	int r = table_pick_parse(o->output, cols, n, o->json ? n : n_text, ret, &bad, &bad_len);

	if (r == -ENOENT || r == -EEXIST)
		log_usage_error(lg, o->command, "-o '%.*s': %s; the columns: %s (see 'storaged --help')",
				(int)bad_len, bad, r == -ENOENT ? "no such column" : "named twice",
				table_columns_join(cols, n, names, sizeof(names)));
	else if (r < 0)
		log_usage_error(lg, o->command, "-o '%s': an empty column name; give a list such as -o %s,%s",
				o->output, cols[0].name, cols[1].name);
	return r < 0 ? -EINVAL : 0;
}

/* --raw and --noheadings are for scripts: the table alone, without the
 * lines of prose before or after it. */
static bool table_only(const struct options *o)
{
	return o->raw || o->noheadings;
}

static int scan_print(const struct options *o, const struct world *w, const struct table_pick *pick,
		      unsigned *ret_problems)
{
	struct libscols_table *tbs[2] = {
		json_table_new("filesystems", scan_cols, ARRAY_SIZE(scan_cols), o->json),
		json_table_new("unreadable", unreadable_cols, ARRAY_SIZE(unreadable_cols), true),
	};
	int r = tbs[0] && tbs[1] ? 0 : -ENOMEM;
	char devs[64];

	*ret_problems = 0;
	for (size_t i = 0; r == 0 && i < w->btrfs.n; i++) {
		*ret_problems |= btrfs_fs_problems(&w->btrfs.v[i]);
		r = scan_line(tbs[0], &w->btrfs.v[i], o->json);
	}
	for (size_t i = 0; r == 0 && i < w->inv.n_skipped; i++)
		r = unreadable_line(tbs[1], &w->inv.skipped[i], &w->btrfs);
	if (r == 0)
		r = table_pick_apply(tbs[0], pick, o->raw, o->noheadings);
	if (r == 0 && o->json)
		r = json_print_tables(tbs, 2, stdout);
	else if (r == 0 && (w->btrfs.n || table_only(o)))
		r = text_print_table(tbs[0]);
	else if (r == 0)
		printf("no btrfs filesystem found%s%s\n", w->inv.n_devs ? " on " : ": ",
		       units_format_count(w->inv.n_devs, "block device", "block devices", devs, sizeof(devs)));
	for (size_t i = 0; r == 0 && !o->json && !table_only(o) && i < w->inv.n_skipped; i++)
		print_unreadable(&w->inv.skipped[i], &w->btrfs);
	scols_unref_table(tbs[0]);
	scols_unref_table(tbs[1]);
	return r;
}

int cmd_scan(const struct options *o, const struct logger *lg)
{
	struct sources src;
	struct world w = { 0 };
	struct table_pick pick;
	unsigned problems = 0;
	int r;

	if (pick_columns(o, lg, scan_cols, ARRAY_SIZE(scan_cols), SCAN_TEXT_COLS, &pick) < 0)
		return EXIT_CONFIG;
	sources_init(&src, o);
	r = world_load_devices(&src, INVENTORY_FULL, lg, &w);
	if (r < 0)
		log_error(lg, "cannot list block devices: %s", strerror(-r));
	else
		r = scan_print(o, &w, &pick, &problems);
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
	/* areas: which limit is hit, "bytes", "inodes" or "bytes,inodes"
	 * (area_status_full_words()) */
	{ "FULL_LIMIT", 1, 0, SCOLS_JSON_STRING },
	/* areas: the limits it was set up with; grow = yes, and how far it
	 * can grow now (area_grow_fill()) */
	{ "START_SIZE_BYTES", 1, 0, SCOLS_JSON_NUMBER },
	{ "START_INODES", 1, 0, SCOLS_JSON_NUMBER },
	{ "GROW", 1, 0, SCOLS_JSON_BOOLEAN },
	{ "CEILING_BYTES", 1, 0, SCOLS_JSON_NUMBER },
	{ "CEILING_INODES", 1, 0, SCOLS_JSON_NUMBER },
};
#define STATUS_TEXT_COLS 5

/* --help's words for each of status_cols (table_columns_usage()) */
static const char *const status_help[] = {
	"mount, area or btrfs",
	"mount point, area name or fsid",
	"what is mounted (device, area directory)",
	"as recorded, or what the live check found",
	"why, in words",
	"the recorded status where STATUS differs",
	"1 for a nofail entry, else 0",
	"the mount ID storaged recorded",
	"how long the step took, in ms",
	"area: end of its last sync back, epoch seconds",
	"area: true or false (the last sync's outcome)",
	"area: its size in bytes (statvfs)",
	"area: bytes used",
	"area: bytes available",
	"area: its inodes",
	"area: inodes used",
	"area: 1 when 90% or more is used",
	"btrfs: what was decided when the wait ended",
	"btrfs: the wait for the members, in words",
	"btrfs: which member arrived when",
	"btrfs: how long it waited, in ms",
	"btrfs: members back after a degraded mount",
	"area: 1 when no byte or no inode is left",
	"area: the limit it hit: bytes, inodes or bytes,inodes",
	"area: its size when set up, in bytes",
	"area: its inodes when set up",
	"area: 1 for grow = yes",
	"area: the size it can grow to now, in bytes",
	"area: the inodes it can grow to now",
};
_Static_assert(ARRAY_SIZE(status_help) == ARRAY_SIZE(status_cols), "a help line for each status column");

/* Row @i of the state (@rep->entries[i].row). */
static int status_record(struct libscols_table *tb, const struct status_report *rep, size_t i)
{
	const struct state_record *rec = &rep->st.v[i];
	struct libscols_line *ln = scols_table_new_line(tb, NULL);
	const char *word = live_status_name(rep->live[i]);
	uint64_t ms = rec->duration_usec / USEC_PER_MSEC;
	int r;

	if (!ln)
		return -ENOMEM;
	r = scols_line_set_data(ln, 0, state_kind_name(rec->kind));
	r = r ? r : scols_line_set_data(ln, 1, rec->id);
	r = r ? r : scols_line_set_data(ln, 2, rec->source);
	r = r ? r : scols_line_set_data(ln, 3, word ? word : state_status_name(rec->status));
	r = r ? r : scols_line_set_data(ln, 4, rep->entries[i].detail);
	/* the columns the default table leaves out (-o, --json) */
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
	return r ? -ENOMEM : 0;
}

/* The area's figures as JSON numbers (null when it was not measured). */
static int area_numbers(struct libscols_line *ln, const struct area_status *a, bool nearly)
{
	const char *limit;
	char words[128];

	if (set_u64(ln, 24, a->start_size_bytes) || set_u64(ln, 25, a->start_inodes) ||
	    scols_line_set_data(ln, 26, a->grow ? "1" : "0"))
		return -ENOMEM;
	if (!a->measured)
		return 0;
	area_status_full_words(a, words, sizeof(words), &limit);
	if (set_u64(ln, 11, a->size_bytes) || set_u64(ln, 12, a->used_bytes) ||
	    set_u64(ln, 13, a->avail_bytes) || set_u64(ln, 14, a->inodes_total) ||
	    set_u64(ln, 15, a->inodes_used) || scols_line_set_data(ln, 16, nearly ? "1" : "0") ||
	    scols_line_set_data(ln, 22, area_status_full(a) ? "1" : "0") || scols_line_set_data(ln, 23, limit))
		return -ENOMEM;
	if (a->grow && (set_u64(ln, 27, a->ceiling_bytes) || set_u64(ln, 28, a->ceiling_inodes)))
		return -ENOMEM;
	return 0;
}

/* A warning for an area full or nearly full, with what to do: the
 * kernel's ENOSPC says nothing of which limit it hit. */
static void warn_nearly_full(const struct area_status *a, const struct logger *lg)
{
	unsigned bytes, inodes;
	bool full = area_status_full(a);
	char why[160], words[128];

	area_status_use(a, &bytes, &inodes);
	if (full)
		snprintf(why, sizeof(why), "%s: writers see 'No space left on device'",
			 area_status_full_words(a, words, sizeof(words), NULL));
	else
		snprintf(why, sizeof(why), "warned from %u%%", AREA_NEARLY_FULL_PERCENT);
	/* a growing area below its ceiling: the resident grows it at its next
	 * look, unless a writer is faster than that */
	if (a->grow && !((bytes >= AREA_NEARLY_FULL_PERCENT && a->size_bytes >= a->ceiling_bytes) ||
			 (inodes >= AREA_NEARLY_FULL_PERCENT && a->inodes_total >= a->ceiling_inodes))) {
		log_warning(lg, "area '%s' on %s is %s: %u%% of its bytes and %u%% of its inodes used (%s); the resident storaged grows it at its next look (every %llu ms, up to %s and %llu inodes now), and a writer faster than that meets 'No space left on device': start it larger (size=, inodes= in its [area] section)",
			    a->name, a->path, full ? "full" : "nearly full", bytes, inodes, why,
			    (unsigned long long)(AREA_WATCH_GROW_USEC / 1000),
			    units_format_size_human(a->ceiling_bytes, words, sizeof(words)),
			    (unsigned long long)a->ceiling_inodes);
		return;
	}
	/* a growing area this full is at the ceiling memory-reserve sets */
	if (a->grow) {
		log_warning(lg, "area '%s' on %s is %s: %u%% of its bytes and %u%% of its inodes used (%s); it grows no further than memory-reserve allows (ceiling %s and %llu inodes now): lower memory-reserve in [storaged] and reload the resident storaged (SIGHUP), or free memory",
			    a->name, a->path, full ? "full" : "nearly full", bytes, inodes, why,
			    units_format_size_human(a->ceiling_bytes, words, sizeof(words)),
			    (unsigned long long)a->ceiling_inodes);
		return;
	}
	log_warning(lg, "area '%s' on %s is %s: %u%% of its bytes and %u%% of its inodes used (%s); raise %s in its [area] section, then `%s stop` and `%s start`",
		    a->name, a->path, full ? "full" : "nearly full", bytes, inodes, why,
		    bytes >= AREA_NEARLY_FULL_PERCENT && inodes >= AREA_NEARLY_FULL_PERCENT ? "size= and inodes="
		    : bytes >= AREA_NEARLY_FULL_PERCENT					 ? "size="
											 : "inodes=",
		    log_self(lg), log_self(lg));
}

/* Is a resident storaged holding @state_dir (liveness.h), to grow the
 * areas that say grow = yes? */
static bool resident_runs(const char *state_dir)
{
	_cleanup_free_ char *lock = NULL;

	return asprintf(&lock, "%s/resident", state_dir) >= 0 && liveness_held(lock) > 0;
}

/* What `status` warns of its areas, before the table. */
static void warn_areas(const struct status_report *rep, const char *state_dir, const struct logger *lg)
{
	bool resident = resident_runs(state_dir);

	for (size_t i = 0; i < rep->n_areas; i++) {
		const struct area_status *a = &rep->areas[i];

		if (a->grow && !resident && a->state == AREA_STATE_ACTIVE)
			log_warning(lg, "area '%s' says grow = yes, but no resident storaged runs to grow it: start storaged with --daemon, or hotplug = yes",
				    a->name);

		if (rep->area_rows[i].nearly_full)
			warn_nearly_full(a, lg);
		if (rep->area_rows[i].sync_failed)
			log_warning(lg, "area '%s': its last sync back failed (the sync's messages said why and what to do); fix that and run `%s sync %s`",
				    a->name, log_self(lg), a->name);
	}
}

static int status_area(struct libscols_table *tb, const struct status_report *rep, size_t i)
{
	const struct area_status *a = &rep->areas[i];
	const struct status_area *row = &rep->area_rows[i];
	struct libscols_line *ln = scols_table_new_line(tb, NULL);

	if (!ln)
		return -ENOMEM;
	if (area_numbers(ln, a, row->nearly_full) < 0)
		return -ENOMEM;
	if (scols_line_set_data(ln, 0, "area") || scols_line_set_data(ln, 1, a->name) ||
	    scols_line_set_data(ln, 2, a->path) || scols_line_set_data(ln, 3, area_state_name(a->state)) ||
	    scols_line_set_data(ln, 4, row->detail) || scols_line_set_data(ln, 6, "0"))
		return -ENOMEM;
	if (row->last && row->last->time_sec &&
	    (set_u64(ln, 9, row->last->time_sec) || scols_line_set_data(ln, 10, row->last->ok ? "true" : "false")))
		return -ENOMEM;
	return 0;
}

/* The row of a start left unfinished (status_report.unfinished): first,
 * as what the other rows do not show. */
static int status_run_row(struct libscols_table *tb, const char *detail)
{
	struct libscols_line *ln = scols_table_new_line(tb, NULL);

	if (!ln || scols_line_set_data(ln, 0, "run") || scols_line_set_data(ln, 1, "start") ||
	    scols_line_set_data(ln, 3, "interrupted") || scols_line_set_data(ln, 4, detail) ||
	    scols_line_set_data(ln, 6, "0"))
		return -ENOMEM;
	return 0;
}

/* The records' rows, the areas', then those of areas that failed or were
 * skipped (status_entry.row). */
static int status_table(const struct options *o, const struct status_report *rep,
			const struct table_pick *pick)
{
	struct libscols_table *tb = json_table_new("status", status_cols, ARRAY_SIZE(status_cols), o->json);
	int r = 0;

	if (tb && rep->unfinished)
		r = status_run_row(tb, rep->unfinished);
	for (size_t i = 0; tb && r == 0 && i < rep->st.n; i++)
		if (rep->entries[i].row && rep->st.v[i].kind != STATE_AREA)
			r = status_record(tb, rep, i);
	for (size_t i = 0; tb && r == 0 && i < rep->n_areas; i++)
		r = status_area(tb, rep, i);
	for (size_t i = 0; tb && r == 0 && i < rep->st.n; i++)
		if (rep->entries[i].row && rep->st.v[i].kind == STATE_AREA)
			r = status_record(tb, rep, i);
	if (!tb)
		r = -ENOMEM;
	else if (r == 0)
		r = table_pick_apply(tb, pick, o->raw, o->noheadings);
	if (r == 0)
		r = o->json ? json_print_table(tb, stdout) : text_print_table(tb);
	scols_unref_table(tb);
	return r;
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

/* @rep as the options ask: the metrics, or the table or its JSON (with
 * the areas' warnings first and, after the table, the resident). */
static int status_print(const struct options *o, const struct logger *lg, const struct status_report *rep,
			const struct table_pick *pick)
{
	struct prom_data d = status_report_prom(rep);
	int r = 0;

	if (o->prometheus) {
		r = status_prom_render(&d, stdout);
		if (r < 0)
			log_error(lg, "writing the metrics: %s", strerror(-r));
		return r;
	}
	warn_areas(rep, o->state_dir, lg);
	if (rep->st.n == 0 && rep->n_areas == 0 && !rep->unfinished && !o->json && !table_only(o))
		printf("storaged has set up nothing (state directory %s)\n", o->state_dir);
	else
		r = status_table(o, rep, pick);
	if (r == 0 && !o->json && !table_only(o))
		print_resident(o->state_dir);
	return r;
}

int cmd_status(const struct options *o, const struct logger *lg)
{
	/* the metrics show every btrfs filesystem; the table words those it
	 * has records of */
	enum status_devices dev = o->prometheus ? STATUS_DEVICES_ALL : STATUS_DEVICES_FOR_RECORDS;
	struct status_report rep;
	struct table_pick pick;
	int r, ret;

	if (!o->prometheus && pick_columns(o, lg, status_cols, ARRAY_SIZE(status_cols), STATUS_TEXT_COLS, &pick) < 0)
		return EXIT_CONFIG;
	if (state_dir_missing(o, lg))
		return EXIT_STATE;
	r = status_report_build(o, lg, !liveness_at_work(o->state_dir), dev, &rep);
	if (r == 0)
		r = status_print(o, lg, &rep, &pick);
	/* storaged(8), EXIT STATUS: the same for every format */
	ret = r == -EPERM ? EXIT_STATE : r < 0 ? EXIT_STEP_FAILED : status_sum_exit(&rep.sum);
	status_report_done(&rep);
	return ret;
}

void report_columns_usage(FILE *out)
{
	table_columns_usage(out, "Columns of status (-o; * the default ones, --json has all)", status_cols,
			    status_help, ARRAY_SIZE(status_cols), STATUS_TEXT_COLS);
	table_columns_usage(out, "Columns of scan (-o)", scan_cols, scan_help, ARRAY_SIZE(scan_cols),
			    SCAN_TEXT_COLS);
}
