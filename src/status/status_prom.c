/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The Prometheus text exposition format (version 0.0.4,
 * https://prometheus.io/docs/instrumenting/exposition_formats/) of
 * storaged's status: pure formatting of a struct prom_data.  Loading it
 * and writing the textfile: status_prom_io.c; the last-sync record:
 * status_last_sync.c.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "status_prom.h"
#include "shared/units.h"
#include "shared/util.h"

char *status_prom_escape(const char *in, char *buf, size_t len)
{
	const unsigned char *s = (const unsigned char *)(in ? in : "");
	size_t k = 0, n;
	char esc[8];

	while (*s) {
		n = utf8_char_len(s);
		if (*s == '\\' || *s == '"' || *s == '\n')
			snprintf(esc, sizeof(esc), "\\%c", *s == '\n' ? 'n' : *s);
		else if (n == 0) /* the text \xNN, its backslash escaped */
			snprintf(esc, sizeof(esc), "\\\\x%02x", *s);
		else
			snprintf(esc, sizeof(esc), "%.*s", (int)n, (const char *)s);
		if (k + strlen(esc) >= len)
			break;
		memcpy(buf + k, esc, strlen(esc));
		k += strlen(esc);
		s += n ? n : 1;
	}
	if (len)
		buf[k] = '\0';
	return buf;
}

/* The "# HELP" and "# TYPE" lines of one family. */
static void family(FILE *out, const char *name, const char *type, const char *help)
{
	fprintf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* name{k1="v1"[,k2="v2"[,k3="v3"]]} value: labels with a NULL key end
 * the list. */
static void sample(FILE *out, const char *name, const char *const labels[6], const char *value)
{
	char esc[4 * 4096 + 1];

	fprintf(out, "%s{", name);
	for (size_t i = 0; i < 6 && labels[i]; i += 2)
		fprintf(out, "%s%s=\"%s\"", i ? "," : "", labels[i],
			status_prom_escape(labels[i + 1], esc, sizeof(esc)));
	fprintf(out, "} %s\n", value);
}

static const char *u64(uint64_t v, char buf[32])
{
	snprintf(buf, 32, "%llu", (unsigned long long)v);
	return buf;
}

/* ------------------------------------------------------------ btrfs */

enum fs_field { PF_PRESENT, PF_EXPECTED, PF_STALE, PF_MOUNTED, PF_DEGRADED, PF_MISSING, PF_UNUSED };

static const struct {
	const char *name, *help;
} fs_families[] = {
	[PF_PRESENT] = { "storaged_btrfs_members_present",
			 "Member devices of the btrfs filesystem found on this machine." },
	[PF_EXPECTED] = { "storaged_btrfs_members_expected",
			  "Member devices the btrfs filesystem has (num_devices of its newest superblock)." },
	[PF_STALE] = { "storaged_btrfs_members_stale",
		       "Members whose superblock generation is behind the newest member's: they missed writes (scrub)." },
	[PF_MOUNTED] = { "storaged_btrfs_mounted", "1 when the btrfs filesystem is mounted." },
	[PF_DEGRADED] = { "storaged_btrfs_degraded", "1 when the btrfs filesystem is mounted with -o degraded." },
	[PF_MISSING] = { "storaged_btrfs_members_missing",
			 "Members the kernel reports missing in the mounted btrfs filesystem." },
	[PF_UNUSED] = { "storaged_btrfs_members_unused",
			"Members back after a degraded mount: registered, but unused until the filesystem is mounted again." },
};

static uint64_t fs_value(const struct prom_fs *f, enum fs_field k)
{
	switch (k) {
	case PF_PRESENT:
		return f->present;
	case PF_EXPECTED:
		return f->expected;
	case PF_STALE:
		return f->stale;
	case PF_MOUNTED:
		return f->mounted;
	case PF_MISSING:
		return f->missing;
	case PF_UNUSED:
		return f->unused;
	default:
		return f->degraded;
	}
}

static void render_btrfs(const struct prom_data *d, FILE *out)
{
	char v[32];

	for (size_t k = 0; k < ARRAY_SIZE(fs_families); k++) {
		family(out, fs_families[k].name, "gauge", fs_families[k].help);
		for (size_t i = 0; i < d->n_fs; i++) {
			const char *const labels[6] = { "fsid", d->fs[i].fsid, "label",
							d->fs[i].label ? d->fs[i].label : "" };

			sample(out, fs_families[k].name, labels,
			       u64(fs_value(&d->fs[i], (enum fs_field)k), v));
		}
	}
}

/* What storaged decided for each btrfs filesystem it waited for (its
 * state record), as a state set: one sample per decision, 1 for the
 * one taken; and how long the wait lasted. */
static void render_decisions(const struct prom_data *d, FILE *out)
{
	size_t n = d->state ? d->state->n : 0;
	char v[32];

	family(out, "storaged_btrfs_decision", "gauge",
	       "1 for what storaged decided once the wait for the btrfs filesystem's members ended (complete, degraded-by-policy, read-only-by-policy, refused, stale-refused), 0 for the others.");
	for (size_t i = 0; i < n; i++) {
		const struct state_record *r = &d->state->v[i];

		for (enum btrfs_decision k = DECISION_COMPLETE; r->kind == STATE_BTRFS && r->decision && k <= DECISION_LAST; k++) {
			const char *const labels[6] = { "fsid", r->id, "decision", state_decision_name(k) };

			sample(out, "storaged_btrfs_decision", labels, r->decision == k ? "1" : "0");
		}
	}
	family(out, "storaged_btrfs_wait_seconds", "gauge",
	       "How long storaged waited for the btrfs filesystem's members before it decided.");
	for (size_t i = 0; i < n; i++) {
		const struct state_record *r = &d->state->v[i];
		const char *const labels[6] = { "fsid", r->id };

		if (r->kind != STATE_BTRFS || !r->decision)
			continue;
		snprintf(v, sizeof(v), "%llu.%03llu", (unsigned long long)(r->waited_usec / USEC_PER_SEC),
			 (unsigned long long)(r->waited_usec % USEC_PER_SEC / USEC_PER_MSEC));
		sample(out, "storaged_btrfs_wait_seconds", labels, v);
	}
}

/* ------------------------------------------------------------ areas */

enum area_field { PA_USED_BYTES, PA_SIZE_BYTES, PA_USED_INODES, PA_INODES };

static const struct {
	const char *name, *help;
} area_families[] = {
	[PA_USED_BYTES] = { "storaged_area_used_bytes", "Bytes used in the RAM area." },
	[PA_SIZE_BYTES] = { "storaged_area_size_bytes", "Size of the RAM area: the most it can hold." },
	[PA_USED_INODES] = { "storaged_area_inodes_used", "Inodes used in the RAM area." },
	[PA_INODES] = { "storaged_area_inodes", "Inodes of the RAM area: the most files it can hold." },
};

static uint64_t area_value(const struct area_status *a, enum area_field k)
{
	switch (k) {
	case PA_USED_BYTES:
		return a->used_bytes;
	case PA_SIZE_BYTES:
		return a->size_bytes;
	case PA_USED_INODES:
		return a->inodes_used;
	default:
		return a->inodes_total;
	}
}

static const struct prom_sync *sync_of(const struct prom_data *d, const char *area)
{
	for (size_t i = 0; i < d->n_syncs; i++)
		if (strcmp(d->syncs[i].area, area) == 0)
			return &d->syncs[i];
	return NULL;
}

static void render_syncs(const struct prom_data *d, FILE *out, bool result)
{
	char v[32];

	if (result)
		family(out, "storaged_area_last_sync_success", "gauge",
		       "1 when the last sync back of the area while mounted (storaged sync, periodic) succeeded, 0 when it failed.");
	else
		family(out, "storaged_area_last_sync_timestamp_seconds", "gauge",
		       "When the last sync back of the area while mounted (storaged sync, periodic) ended, in seconds since the epoch.");
	for (size_t i = 0; i < d->n_areas; i++) {
		const struct prom_sync *s = sync_of(d, d->areas[i].name);
		const char *const labels[6] = { "area", d->areas[i].name, "path", d->areas[i].path };

		if (s)
			sample(out, result ? "storaged_area_last_sync_success" : "storaged_area_last_sync_timestamp_seconds",
			       labels, u64(result ? s->ok : s->time_sec, v));
	}
}

static void render_areas(const struct prom_data *d, FILE *out)
{
	char v[32];

	for (size_t k = 0; k < ARRAY_SIZE(area_families); k++) {
		family(out, area_families[k].name, "gauge", area_families[k].help);
		for (size_t i = 0; i < d->n_areas; i++) {
			const char *const labels[6] = { "area", d->areas[i].name, "path",
							d->areas[i].path };

			sample(out, area_families[k].name, labels,
			       u64(area_value(&d->areas[i], (enum area_field)k), v));
		}
	}
	family(out, "storaged_area_full", "gauge",
	       "1 when the RAM area has no byte (limit=\"bytes\") or no inode (limit=\"inodes\") left: writers see ENOSPC.");
	for (size_t i = 0; i < d->n_areas; i++) {
		const char *limit = NULL;
		char words[128];

		area_status_full_words(&d->areas[i], words, sizeof(words), &limit);
		for (size_t k = 0; k < 2; k++) {
			const char *which = k ? "inodes" : "bytes";
			const char *const labels[6] = { "area", d->areas[i].name, "path", d->areas[i].path, "limit", which };

			sample(out, "storaged_area_full", labels, limit && strstr(limit, which) ? "1" : "0");
		}
	}
	render_syncs(d, out, false);
	render_syncs(d, out, true);
	family(out, "storaged_area_state", "gauge",
	       "1 for the area's state now (as `storaged status` shows it), 0 for the others.");
	for (size_t i = 0; i < d->n_areas; i++)
		for (enum area_state k = AREA_STATE_ACTIVE; k <= AREA_STATE_LAST; k++) {
			const char *const labels[6] = { "area",	 d->areas[i].name,
							"path",	 d->areas[i].path,
							"state", area_state_name(k) };

			sample(out, "storaged_area_state", labels, d->areas[i].state == k ? "1" : "0");
		}
}

/* ------------------------------------------------------------ entries */

/* Every state an entry can show, for the state set: one sample per
 * state, 1 for the entry's own (the Prometheus way of an enum).  The
 * recorded statuses, then the live check's words (status_live.h):
 * "degraded" is both. */
static const enum state_status all_status[] = {
	STATE_WAITING,	  STATE_MOUNTING, STATE_DONE,	STATE_DEGRADED,
	STATE_INCOMPLETE, STATE_PRESENT,  STATE_FAILED, STATE_SKIPPED,
};
static const enum live_status all_live[] = { LIVE_GONE, LIVE_REPLACED, LIVE_INTERRUPTED };

/* The state word of record @i as `storaged status` shows it. */
static const char *entry_word(const struct prom_data *d, size_t i)
{
	const char *live = d->live ? live_status_name(d->live[i]) : NULL;

	return live ? live : state_status_name(d->state->v[i].status);
}

static void entry_state(FILE *out, const struct state_record *r, const char *word, const char *name)
{
	const char *const labels[6] = { "kind", state_kind_name(r->kind), "entry", r->id, "state",
					name };

	sample(out, "storaged_entry_state", labels, strcmp(word, name) == 0 ? "1" : "0");
}

/* The run row of `status` (prom_data.unfinished), shown only when there
 * is one: a start that ran to its end leaves none. */
static void run_state(const struct prom_data *d, FILE *out)
{
	const char *const labels[6] = { "kind", "run", "entry", "start", "state", "interrupted" };

	if (d->unfinished)
		sample(out, "storaged_entry_state", labels, "1");
}

static void render_entries(const struct prom_data *d, FILE *out)
{
	size_t n = d->state ? d->state->n : 0;
	char v[32];

	family(out, "storaged_entry_state", "gauge",
	       "1 for the entry's state now (as `storaged status` shows it), 0 for the others.");
	run_state(d, out);
	for (size_t i = 0; i < n; i++) {
		for (size_t k = 0; k < ARRAY_SIZE(all_status); k++)
			entry_state(out, &d->state->v[i], entry_word(d, i),
				    state_status_name(all_status[k]));
		for (size_t k = 0; k < ARRAY_SIZE(all_live); k++)
			entry_state(out, &d->state->v[i], entry_word(d, i), live_status_name(all_live[k]));
	}
	family(out, "storaged_entry_duration_seconds", "gauge",
	       "How long the entry's step took in storaged's last pass that ran it.");
	for (size_t i = 0; i < n; i++) {
		const struct state_record *r = &d->state->v[i];
		const char *const labels[6] = { "kind", state_kind_name(r->kind), "entry", r->id };

		/* unknown (none recorded: 0): no sample rather than a false 0;
		 * `status --json` says null, and counts in whole ms */
		if (r->duration_usec < USEC_PER_MSEC)
			continue;
		snprintf(v, sizeof(v), "%llu.%06llu",
			 (unsigned long long)(r->duration_usec / USEC_PER_SEC),
			 (unsigned long long)(r->duration_usec % USEC_PER_SEC));
		sample(out, "storaged_entry_duration_seconds", labels, v);
	}
}

/* Which storaged wrote the metrics, and when it collected them: the one
 * sample an alert can use to tell metrics that stopped being written
 * (storaged-alerts.yml) from metrics that say all is well. */
static void render_self(const struct prom_data *d, FILE *out)
{
	family(out, "storaged_build_info", "gauge", "1, labelled with the version of storaged that wrote the metrics.");
	sample(out, "storaged_build_info", (const char *const[6]){ "version", PACKAGE_VERSION }, "1");
	if (d->collected_sec <= 0)
		return;
	family(out, "storaged_metrics_timestamp_seconds", "gauge",
	       "When storaged collected these metrics, in seconds since the epoch.");
	fprintf(out, "storaged_metrics_timestamp_seconds %lld\n", (long long)d->collected_sec);
}

int status_prom_render(const struct prom_data *d, FILE *out)
{
	render_self(d, out);
	render_btrfs(d, out);
	render_decisions(d, out);
	render_areas(d, out);
	render_entries(d, out);
	return fflush(out) == 0 && !ferror(out) ? 0 : -EIO;
}
