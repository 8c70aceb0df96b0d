/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Rendering a plan (plan.h): the text of --dry-run, one line per step with
 * its reasons, and the JSON of --dry-run --json through libsmartcols.
 * Nothing here changes the plan.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include <libsmartcols.h>

#include "parse/area_facts.h"
#include "shared/json_out.h"
#include "plan.h"
#include "shared/units.h"
#include "shared/optstr.h"
#include "shared/util.h"

/* ------------------------------------------------------------ rendering */

static const char *step_action(const struct plan_step *s)
{
	switch (s->kind) {
	case PLAN_REGISTER:
		return "register";
	case PLAN_ASSEMBLE:
		return "assemble";
	case PLAN_WAIT_DEVICE:
		return "wait";
	case PLAN_AREA:
		return "area";
	case PLAN_SCRUB:
		return "scrub";
	case PLAN_MOUNT:
	default:
		return "mount";
	}
}

char *plan_step_describe(const struct plan_step *s, char *buf, size_t len)
{
	char sh[16];

	switch (s->kind) {
	case PLAN_REGISTER:
		snprintf(buf, len, "register %s", s->devnode);
		break;
	case PLAN_ASSEMBLE:
		snprintf(buf, len, "assemble btrfs %s%s%s%s", plan_fsid_short(s->fsid, sh, sizeof(sh)),
			 s->label ? " '" : "", s->label ? s->label : "", s->label ? "'" : "");
		break;
	case PLAN_WAIT_DEVICE:
		snprintf(buf, len, "wait for %s", s->spec);
		break;
	case PLAN_AREA:
		/* a refused path= leaves none */
		snprintf(buf, len, "area %s %s%s%s", s->area->name, config_backend_name(s->area->backend),
			 s->area->path ? " on " : "", s->area->path ? s->area->path : "");
		break;
	case PLAN_SCRUB:
		snprintf(buf, len, "scrub btrfs %s on %s", plan_fsid_short(s->fsid, sh, sizeof(sh)),
			 s->entry->target);
		break;
	case PLAN_MOUNT:
	default:
		snprintf(buf, len, "mount %s on %s", s->entry->source, s->entry->target);
		break;
	}
	return buf;
}

/* ", 2s after the last arrival (at most 35s)", or "" without a quiet period */
static const char *settle_words(const struct plan_step *s, char *buf, size_t len)
{
	char q[32], m[32];
	uint64_t most = s->settle_limit_usec >= USEC_INFINITY - s->timeout_usec
				? USEC_INFINITY
				: s->timeout_usec + s->settle_limit_usec;

	buf[0] = '\0';
	if (!s->settle_usec)
		return buf;
	units_format_duration(s->settle_usec, q, sizeof(q));
	if (most == USEC_INFINITY)
		snprintf(buf, len, ", %s after the last arrival", q);
	else
		snprintf(buf, len, ", %s after the last arrival (at most %s)", q,
			 units_format_duration(most, m, sizeof(m)));
	return buf;
}

char *plan_wait_words(const struct plan_step *s, char *buf, size_t len)
{
	char d[32], q[96];

	if (s->timeout_usec == USEC_INFINITY) {
		snprintf(buf, len, "without a time limit");
		return buf;
	}
	units_format_duration(s->timeout_usec, d, sizeof(d));
	settle_words(s, q, sizeof(q));
	if (s->kind == PLAN_WAIT_DEVICE && s->members)
		snprintf(buf, len, "up to %s for a first member, then up to %s after it%s", d, d, q);
	else if (s->kind == PLAN_ASSEMBLE && q[0])
		snprintf(buf, len, "up to %s after the first member%s", d, q);
	else
		snprintf(buf, len, "up to %s", d);
	return buf;
}

static const char *wait_limit(const struct plan_step *s, char *buf, size_t len)
{
	char w[224];

	snprintf(buf, len, "wait %s", plan_wait_words(s, w, sizeof(w)));
	return buf;
}

/* What the mounts waiting for ASSEMBLE step @i do when members stay missing. */
static const char *assemble_policy(const struct plan *p, size_t i)
{
	size_t yes = 0, no = 0, ro = 0;

	for (size_t k = 0; k < p->n_steps; k++) {
		const struct plan_step *s = &p->steps[k];

		for (size_t d = 0; s->kind == PLAN_MOUNT && d < s->n_deps; d++) {
			if (s->deps[d].step != i)
				continue;
			if (s->degraded_allowed)
				yes++;
			else
				no++;
			ro += s->degraded_read_only;
		}
	}
	if (ro && no)
		return "then mount read-only degraded where allowed, else fail";
	if (yes && no)
		return "then mount degraded where allowed, else fail";
	if (ro && ro < yes)
		return "then mount degraded, read-only where the policy says so";
	if (ro)
		return "then mount read-only degraded (degraded = read-only)";
	return yes ? "then mount degraded" : "then fail";
}

/* "size=12800M (configured)": area_size_resolve() may already start the
 * explanation with "KEY="; otherwise it is added here. */
static void sizing_how(FILE *f, const char *key, const char *how)
{
	size_t n = strlen(key);

	if (strncmp(how, key, n) == 0 && how[n] == '=')
		fputs(how, f);
	else
		fprintf(f, "%s=%s", key, how);
}

/* The step's own details, as in the text's first parenthesis and the JSON
 * "note" column; written to @f, nothing when there are none. */
static void step_detail(const struct plan *p, size_t i, FILE *f)
{
	const struct plan_step *s = &p->steps[i];
	char sh[16], w[256];

	if (s->done) {
		fprintf(f, "done: %s", s->note ? s->note : "in place");
		return;
	}
	if (s->later) {
		fprintf(f, "later: %s", plan_later_reason(s));
		return;
	}
	if (s->conflict) {
		fprintf(f, "will fail: %s", s->note);
		return;
	}
	if (s->predicted) {
		/* nofail: the failure is tolerated, and the plan says so */
		fprintf(f, "%s%s%s", s->kind == PLAN_MOUNT && s->entry->nofail ? "nofail, " : "",
			plan_step_predicted_skip(s) ? "" : "will fail: ", s->predicted);
		return;
	}
	switch (s->kind) {
	case PLAN_REGISTER:
		fprintf(f, "btrfs %s devid %" PRIu64 " of %" PRIu64,
			plan_fsid_short(s->fsid, sh, sizeof(sh)), s->devid, s->num_devices);
		break;
	case PLAN_ASSEMBLE:
		fprintf(f, "%" PRIu64 "/%" PRIu64 " members present%s%s; %s", s->n_present,
			s->num_devices, s->missing ? ", " : "", s->missing ? s->missing : "",
			wait_limit(s, w, sizeof(w)));
		if (s->missing)
			fprintf(f, ", %s", assemble_policy(p, i));
		break;
	case PLAN_WAIT_DEVICE:
		fprintf(f, "not present; %s, then fail", wait_limit(s, w, sizeof(w)));
		break;
	case PLAN_AREA:
		if (s->sizing_deferred)
			fputs("its directory is on a filesystem mounted first", f);
		else if (!s->sizing.fits)
			fprintf(f, "seed does not fit: %s", s->sizing.why);
		break;
	case PLAN_MOUNT:
		if (s->entry->nofail)
			fputs("nofail", f);
		/* systemd's autofs would have made the step done */
		if (optstr_get(s->entry->options, "x-systemd.automount", NULL, NULL))
			fprintf(f, "%sno automount on it: mounted now, not on first access",
				s->entry->nofail ? ", " : "");
		break;
	case PLAN_SCRUB:
		fputs(s->note, f);
		break;
	}
}

static const char *area_inodes_key(const struct plan_step *s)
{
	return area_backend_facts(s->area->backend)->inodes_key;
}

/* "size=12800M (configured) nr_inodes=300000 (auto: …)": values and how. */
static void area_sizes_how(const struct plan_step *s, FILE *f)
{
	char v[32];

	if (s->sizing_deferred) {
		fputs("sized when it runs", f);
		return;
	}
	if (s->sizing.size_how[0])
		sizing_how(f, "size", s->sizing.size_how);
	else
		fprintf(f, "size=%s", units_format_size_exact(s->sizing.size_bytes, v, sizeof(v)));
	fputc(' ', f);
	if (s->sizing.inodes_how[0])
		sizing_how(f, area_inodes_key(s), s->sizing.inodes_how);
	else
		fprintf(f, "%s=%" PRIu64, area_inodes_key(s), s->sizing.nr_inodes);
}

/* "size=12800M,nr_inodes=300000": the values alone, as mount options. */
static void area_sizes_values(const struct plan_step *s, FILE *f)
{
	char v[32];

	if (s->sizing_deferred)
		return;
	fprintf(f, "size=%s,%s=%" PRIu64, units_format_size_exact(s->sizing.size_bytes, v, sizeof(v)),
		area_inodes_key(s), s->sizing.nr_inodes);
}

static bool is_octal(char c)
{
	return c >= '0' && c <= '7';
}

/* Control characters as \ooo, so that one step stays one line whatever a
 * path or label holds.  A backslash is shown as given ("\04" cut short
 * at the end of an fstab field, overlay's "\:"), except before three
 * octal digits, where it would read as an escape: \134 then. */
static void put_escaped(const char *s, FILE *f)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c < 0x20 || c == 0x7f ||
		    (c == '\\' && is_octal(s[1]) && is_octal(s[2]) && is_octal(s[3])))
			fprintf(f, "\\%03o", c);
		else
			fputc(c, f);
	}
}

/* @opts (@before first), as @put prints text, without what the mount
 * never gets (fstab_option_is_passed()); nothing when none is left. */
static void put_passed_options(const char *opts, const char *before, void (*put)(const char *, FILE *),
			       FILE *f)
{
	char *it = (char *)opts, *name, *value;
	size_t nsz, vsz;
	bool any = false;

	while (opts && mnt_optstr_next_option(&it, &name, &nsz, &value, &vsz) == 0) {
		/* the option as written: up to its value's end */
		_cleanup_free_ char *one = strndup(name, value ? (size_t)(value + vsz - name) : nsz);

		if (!fstab_option_is_passed(name, nsz) || !one)
			continue;
		fputs(any ? "," : before, f);
		put(one, f);
		any = true;
	}
}

static void text_head(const struct plan_step *s, FILE *f)
{
	char buf[4096];

	put_escaped(plan_step_describe(s, buf, sizeof(buf)), f);
	if (s->kind == PLAN_MOUNT) {
		if (!s->entry->fstype || strcmp(s->entry->fstype, "none") != 0)
			fprintf(f, " type %s", s->entry->fstype);
		put_passed_options(s->entry->mount_options, " -o ", put_escaped, f);
	} else if (s->kind == PLAN_AREA) {
		if (area_is_ramdisk(s->area))
			fprintf(f, " fs %s", area_fstype(s->area));
		/* seed = overlay: the directory is not copied but the lower layer */
		if (s->area->overlay)
			fputs(" overlay", f);
		if (s->area->compression)
			fprintf(f, " compressed %s", s->area->compression);
		if (s->area->writeback_device) {
			fputs(" writeback ", f);
			put_escaped(s->area->writeback_device, f);
		}
		/* set up already: its sizes are its record's, `status` shows them */
		if (!s->done) {
			fputs("  ", f);
			area_sizes_how(s, f);
		}
	}
}

static void text_deps(const struct plan_step *s, FILE *f)
{
	if (s->n_deps == 0 || s->kind == PLAN_ASSEMBLE)
		return;
	fputs("  (after: ", f);
	for (size_t d = 0; d < s->n_deps; d++) {
		fprintf(f, "%s%zu ", d ? "; " : "", s->deps[d].step + 1);
		put_escaped(s->deps[d].reason, f);
	}
	fputc(')', f);
}

static void text_paren(const char *text, FILE *f)
{
	fputs("  (", f);
	put_escaped(text, f);
	fputc(')', f);
}

/* One line: "N HEAD  (DETAIL)  (after: DEPS)"; for mounts and done steps
 * the detail ("nofail", "done: already mounted") comes last. */
static int text_line(const struct plan *p, size_t i, FILE *out)
{
	const struct plan_step *s = &p->steps[i];
	bool detail_last = s->kind == PLAN_MOUNT || s->done || s->later || s->conflict || s->predicted;
	char *detail = NULL;
	size_t sz = 0;
	FILE *m = open_memstream(&detail, &sz);

	if (!m)
		return -ENOMEM;
	step_detail(p, i, m);
	if (fclose(m) != 0) {
		free(detail);
		return -ENOMEM;
	}
	fprintf(out, "%zu ", i + 1);
	text_head(s, out);
	if (detail[0] && !detail_last)
		text_paren(detail, out);
	text_deps(s, out);
	if (detail[0] && detail_last)
		text_paren(detail, out);
	fputc('\n', out);
	free(detail);
	return 0;
}

/*
 * The text format (golden files depend on it; change them together):
 *   1 register /dev/loop0  (btrfs 5e81a0c4… devid 1 of 2)
 *   2 assemble btrfs 5e81a0c4… 'label'  (1/2 members present, devid 2 missing;
 *     wait up to 5s, then fail)
 *   3 wait for LABEL=x  (not present; wait up to 90s, then fail)
 *   4 mount SRC on TARGET type T -o OPTS  (after: 2 btrfs 5e81a0c4… ready,
 *     1/2 members; 3 /srv: parent mount point)  (nofail)
 *   5 area NAME BACKEND on PATH [fs FS] [compressed ALG] [writeback DEV]  size=… nr_inodes=…  (after: …)
 *   6 scrub btrfs 5e81a0c4… on TARGET  (stale member devid 2)  (after: 4
 *     TARGET mounted)
 * all on one line each; done steps end in "(done: already mounted)".
 * Control characters in names are written as \ooo, and a backslash
 * before three octal digits as \134.
 */
int plan_render_text(const struct plan *p, FILE *out)
{
	int r = 0;

	for (size_t i = 0; r >= 0 && i < p->n_steps; i++)
		r = text_line(p, i, out);
	if (r >= 0 && ferror(out))
		r = -EIO;
	return r;
}

const char *plan_step_will_fail(const struct plan_step *s)
{
	if (s->done || s->later)
		return NULL;
	if (s->conflict)
		return s->note ? s->note : "in conflict";
	if (s->predicted)
		return s->predicted;
	if (s->kind == PLAN_AREA && !s->sizing_deferred && !s->sizing.fits)
		return s->sizing.why;
	return NULL;
}

/* ------------------------------------------------------------ JSON */

enum {
	COL_STEP,
	COL_ACTION,
	COL_TARGET,
	COL_SOURCE,
	COL_OPTIONS,
	COL_DEPS,
	COL_REASONS,
	COL_DONE,
	COL_LATER,
	COL_NOTE,
	COL_FAILS
};

static const struct json_column json_cols[] = {
	[COL_STEP] = { "step", 0, 0, SCOLS_JSON_NUMBER },
	[COL_ACTION] = { "action", 0, 0, SCOLS_JSON_STRING },
	[COL_TARGET] = { "target", 0, 0, SCOLS_JSON_STRING },
	[COL_SOURCE] = { "source", 0, 0, SCOLS_JSON_STRING },
	[COL_OPTIONS] = { "options", 0, 0, SCOLS_JSON_STRING },
	[COL_DEPS] = { "deps", 0, 0, SCOLS_JSON_ARRAY_NUMBER },
	[COL_REASONS] = { "reasons", 0, 0, SCOLS_JSON_ARRAY_STRING },
	[COL_DONE] = { "done", 0, 0, SCOLS_JSON_BOOLEAN },
	[COL_LATER] = { "later", 0, 0, SCOLS_JSON_BOOLEAN },
	[COL_NOTE] = { "note", 0, 0, SCOLS_JSON_STRING },
	[COL_FAILS] = { "fails", 0, 0, SCOLS_JSON_BOOLEAN },
};

static const char *step_target(const struct plan_step *s)
{
	switch (s->kind) {
	case PLAN_REGISTER:
		return s->devnode;
	case PLAN_ASSEMBLE:
		return s->fsid;
	case PLAN_WAIT_DEVICE:
		return s->spec;
	case PLAN_AREA:
		return s->area->path;
	case PLAN_SCRUB: /* the mount point the scrub is started on */
	case PLAN_MOUNT:
	default:
		return s->entry->target;
	}
}

static const char *step_source(const struct plan_step *s)
{
	switch (s->kind) {
	case PLAN_REGISTER:
		return s->fsid;
	case PLAN_ASSEMBLE:
		return s->label;
	case PLAN_AREA:
		return s->area->name;
	case PLAN_SCRUB:
		return s->fsid;
	case PLAN_MOUNT:
		return s->entry->source;
	case PLAN_WAIT_DEVICE:
	default:
		return NULL;
	}
}

/* Sets a cell from a memstream filled by @fill (NULL data when empty). */
static int set_cell_stream(struct libscols_line *ln, int col, const struct plan *p, size_t i,
			   void (*fill)(const struct plan *, size_t, FILE *))
{
	char *data = NULL;
	size_t sz = 0;
	FILE *f = open_memstream(&data, &sz);
	int r;

	if (!f)
		return -ENOMEM;
	fill(p, i, f);
	if (fclose(f) != 0) {
		free(data);
		return -ENOMEM;
	}
	if (!data[0]) {
		free(data);
		return 0;
	}
	r = scols_line_refer_data(ln, col, data);
	if (r < 0)
		free(data);
	return r;
}

static void put_plain(const char *s, FILE *f)
{
	fputs(s, f);
}

static void fill_options(const struct plan *p, size_t i, FILE *f)
{
	const struct plan_step *s = &p->steps[i];

	if (s->kind == PLAN_MOUNT)
		put_passed_options(s->entry->mount_options, "", put_plain, f);
	else if (s->kind == PLAN_AREA)
		area_sizes_values(s, f);
}

static void fill_deps(const struct plan *p, size_t i, FILE *f)
{
	for (size_t d = 0; d < p->steps[i].n_deps; d++)
		fprintf(f, "%s%zu", d ? "\n" : "", p->steps[i].deps[d].step + 1);
}

static void fill_reasons(const struct plan *p, size_t i, FILE *f)
{
	for (size_t d = 0; d < p->steps[i].n_deps; d++)
		fprintf(f, "%s%s", d ? "\n" : "", p->steps[i].deps[d].reason);
}

static void fill_note(const struct plan *p, size_t i, FILE *f)
{
	const struct plan_step *s = &p->steps[i];

	if (s->done) {
		fputs(s->note ? s->note : "", f);
		return;
	}
	if (s->kind == PLAN_AREA) {
		area_sizes_how(s, f);
		if (!s->sizing.fits || plan_step_will_fail(s))
			fputs("; ", f);
	}
	step_detail(p, i, f);
}

static int json_line(struct libscols_table *tb, const struct plan *p, size_t i)
{
	const struct plan_step *s = &p->steps[i];
	struct libscols_line *ln = scols_table_new_line(tb, NULL);
	char num[32];
	int r;

	if (!ln)
		return -ENOMEM;
	snprintf(num, sizeof(num), "%zu", i + 1);
	r = scols_line_set_data(ln, COL_STEP, num);
	r = r < 0 ? r : scols_line_set_data(ln, COL_ACTION, step_action(s));
	r = r < 0 ? r : scols_line_set_data(ln, COL_TARGET, step_target(s));
	r = r < 0 ? r : scols_line_set_data(ln, COL_SOURCE, step_source(s));
	r = r < 0 ? r : set_cell_stream(ln, COL_OPTIONS, p, i, fill_options);
	r = r < 0 ? r : set_cell_stream(ln, COL_DEPS, p, i, fill_deps);
	r = r < 0 ? r : set_cell_stream(ln, COL_REASONS, p, i, fill_reasons);
	r = r < 0 ? r : scols_line_set_data(ln, COL_DONE, s->done ? "1" : "0");
	r = r < 0 ? r : scols_line_set_data(ln, COL_LATER, s->later ? "1" : "0");
	r = r < 0 ? r : set_cell_stream(ln, COL_NOTE, p, i, fill_note);
	r = r < 0 ? r : scols_line_set_data(ln, COL_FAILS, plan_step_will_fail(s) ? "1" : "0");
	return r < 0 ? -ENOMEM : 0;
}

int plan_render_json(const struct plan *p, FILE *out)
{
	struct libscols_table *tb = json_table_new("plan", json_cols, ARRAY_SIZE(json_cols), true);
	int r = 0;

	if (!tb)
		return -ENOMEM;
	for (size_t i = 0; r >= 0 && i < p->n_steps; i++)
		r = json_line(tb, p, i);
	if (r >= 0)
		r = json_print_table(tb, out);
	if (r >= 0)
		fputc('\n', out);
	if (r >= 0 && ferror(out))
		r = -EIO;
	scols_unref_table(tb);
	return r;
}
