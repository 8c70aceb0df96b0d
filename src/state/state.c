/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <ini.h>

#include "atomic_file.h"
#include "shared/input.h"
#include "state.h"
#include "state_internal.h"
#include "shared/util.h"

static void record_done(struct state_record *r)
{
	free(r->id);
	free(r->source);
	free(r->fstype);
	free(r->reason);
	free(r->mountpoint);
	free(r->members_note);
	free(r->wait_policy);
	free(r->arrivals);
	free(r->late);
}

static void journal_close(struct state *s);
static void index_free(struct state *s);

void state_done(struct state *s)
{
	journal_close(s);
	index_free(s);
	for (size_t i = 0; i < s->n; i++)
		record_done(&s->v[i]);
	free(s->v);
	*s = (struct state){ 0 };
}

/*
 * The index of v[]: an open-addressed hash of (kind, id) to the record's
 * position, covering v[0..n_indexed), and the positions of the dirty
 * records.  A run records every mount it makes: a linear search and a scan
 * for dirty records per step made a pass of N entries cost N^2 (2000
 * entries: about 12 M string compares).  Only this file changes v[] and n;
 * anything that removes a record drops the index, rebuilt at the next
 * lookup.
 */
struct state_index {
	size_t *slot; /* position + 1, 0 for empty; cap slots, a power of 2 */
	size_t cap, n_indexed;
	size_t *dirty; /* positions of records marked dirty, each once */
	size_t n_dirty, cap_dirty;
	bool dirty_valid; /* false: dirty[] is unknown, scan v[] */
};

static size_t hash_key(enum state_kind kind, const char *id)
{
	size_t h = 1469598103934665603ULL ^ (size_t)kind; /* FNV-1a */

	for (const unsigned char *p = (const unsigned char *)id; *p; p++)
		h = (h ^ *p) * 1099511628211ULL;
	return h;
}

static void index_free(struct state *s)
{
	struct state_index *ix = s->index;

	if (ix) {
		free(ix->slot);
		free(ix->dirty);
		free(ix);
	}
	s->index = NULL;
}

static void index_put(struct state_index *ix, const struct state *s, size_t pos)
{
	size_t m = ix->cap - 1, k = hash_key(s->v[pos].kind, s->v[pos].id) & m;

	while (ix->slot[k])
		k = (k + 1) & m;
	ix->slot[k] = pos + 1;
}

/* Brings the index up to v[0..n): new records added, the table grown to at
 * most half full.  Returns: 0, or -ENOMEM (the caller searches linearly). */
static int index_update(struct state *s)
{
	struct state_index *ix = s->index;

	if (!ix) {
		ix = s->index = calloc(1, sizeof(*ix));
		if (!ix)
			return -ENOMEM;
	}
	if (ix->n_indexed > s->n) /* cannot happen: removals drop the index */
		ix->n_indexed = 0;
	if (2 * s->n >= ix->cap) {
		size_t cap = ix->cap ? ix->cap : 64;
		size_t *slot;

		while (2 * s->n >= cap)
			cap *= 2;
		slot = calloc(cap, sizeof(*slot));
		if (!slot)
			return -ENOMEM;
		free(ix->slot);
		ix->slot = slot;
		ix->cap = cap;
		ix->n_indexed = 0;
	}
	for (; ix->n_indexed < s->n; ix->n_indexed++)
		index_put(ix, s, ix->n_indexed);
	return 0;
}

struct state_record *state_find(struct state *s, enum state_kind kind, const char *id)
{
	struct state_index *ix;

	if (index_update(s) < 0) {
		for (size_t i = 0; i < s->n; i++)
			if (s->v[i].kind == kind && strcmp(s->v[i].id, id) == 0)
				return &s->v[i];
		return NULL;
	}
	ix = s->index;
	for (size_t m = ix->cap - 1, k = hash_key(kind, id) & m; ix->slot[k]; k = (k + 1) & m) {
		struct state_record *r = &s->v[ix->slot[k] - 1];

		if (r->kind == kind && strcmp(r->id, id) == 0)
			return r;
	}
	return NULL;
}

/* A record changed: marked dirty, and listed for state_append(). */
static void mark_dirty(struct state *s, struct state_record *r)
{
	struct state_index *ix = s->index;

	if (r->dirty)
		return;
	r->dirty = true;
	if (!ix || !ix->dirty_valid)
		return;
	if (grow_array(&ix->dirty, &ix->cap_dirty, ix->n_dirty, sizeof(*ix->dirty)) < 0) {
		ix->dirty_valid = false; /* state_append() scans v[] */
		return;
	}
	ix->dirty[ix->n_dirty++] = (size_t)(r - s->v);
}

static struct state_record *record_new(struct state *s, enum state_kind kind, const char *id)
{
	struct state_record *nv = realloc(s->v, (s->n + 1) * sizeof(*nv));
	struct state_record *r;

	if (!nv)
		return NULL;
	s->v = nv;
	r = &s->v[s->n];
	*r = (struct state_record){ .kind = kind, .id = strdup(id) };
	if (!r->id)
		return NULL;
	s->n++;
	return r;
}

struct state_record *state_put(struct state *s, enum state_kind kind, const char *id,
			       const char *source, const char *fstype, enum state_status status,
			       const char *reason, bool undoable)
{
	struct state_record *r = state_find(s, kind, id);

	if (!r && !(r = record_new(s, kind, id)))
		return NULL;
	if (kv_replace_str(&r->source, source) < 0 ||
	    kv_replace_str(&r->fstype, fstype) < 0 || kv_replace_str(&r->reason, reason) < 0)
		return NULL;
	r->status = status;
	r->members_present = r->members_expected = r->waited_usec = r->scrub_started_usec = r->stale_usec = 0;
	free(r->members_note);
	r->members_note = NULL;
	r->decision = DECISION_NONE;
	free(r->wait_policy);
	free(r->arrivals);
	free(r->late);
	r->wait_policy = r->arrivals = r->late = NULL;
	mark_dirty(s, r);
	if (undoable)
		r->seq = ++s->last_seq;
	return r;
}

void state_touch(struct state *s, struct state_record *r)
{
	mark_dirty(s, r);
}

void state_remove(struct state *s, enum state_kind kind, const char *id)
{
	struct state_record *r = state_find(s, kind, id);
	size_t i;

	if (!r)
		return;
	i = (size_t)(r - s->v);
	record_done(r);
	memmove(&s->v[i], &s->v[i + 1], (s->n - i - 1) * sizeof(*r));
	s->n--;
	index_free(s); /* positions moved: rebuilt at the next lookup */
}

/*
 * File format: ini, one "[record]" section per record whose first key is
 * "kind".  Values are mangled as in /proc/self/mountinfo (mnt_mangle) so
 * that spaces, tabs, newlines and backslashes in mount points survive inih's
 * trimming and comment handling.
 */
struct load_ctx {
	struct state *s;
	struct state_record *cur; /* the last record of s, until "complete" */
	int error;
};

/*
 * A record counts once its last key, "complete", is read: an appended
 * record that a crash cut short is dropped.  A later record of the same
 * kind and id replaces the earlier one (state_append() adds, never edits).
 */
static int record_commit(struct load_ctx *c)
{
	struct state *s = c->s;
	struct state_record *last = &s->v[s->n - 1], *old;

	if (!last->id[0])
		return -EINVAL;
	c->cur = NULL;
	/* an earlier copy, among the records before this one (indexed) */
	s->n--;
	old = state_find(s, last->kind, last->id);
	s->n++;
	if (!old)
		return 0;
	record_done(old);
	*old = *last;
	s->n--;
	return 0;
}

static void drop_torn_tail(struct load_ctx *c)
{
	if (!c->cur)
		return;
	record_done(&c->s->v[c->s->n - 1]); /* c->cur */
	c->s->n--;
	c->cur = NULL;
	index_free(c->s);
}

#define COMPLETE_LINE "\ncomplete = yes\n"
#define STATE_MAX_BYTES (64u << 20)

#define RECORD_START "\n[record]\n"

/*
 * The part of the file that holds whole records: up to the end of the last
 * "complete = yes" line.  An append that a crash cut short leaves text after
 * it, which may end anywhere, even inside "[record" or a key: it is not
 * parsed, as long as it begins as a record does (anything else there was
 * not written by storaged, and the whole file is parsed, to be reported).
 * A file with no such line has no whole record: only the header comment,
 * before the first line that begins with "[", is kept.
 */
static size_t complete_part(const char *buf, size_t len)
{
	const size_t n = strlen(COMPLETE_LINE), h = strlen(RECORD_START);
	size_t end = len, tail;
	const char *first;

	for (; end >= n; end--)
		if (memcmp(buf + end - n, COMPLETE_LINE, n) == 0)
			break;
	if (end < n) {
		first = buf[0] == '[' ? buf : strstr(buf, "\n[");
		end = first ? (size_t)(first - buf) : len;
	}
	tail = len - end;
	return memcmp(buf + end, RECORD_START, tail < h ? tail : h) == 0 ? end : len;
}

static int load_handler(void *user, const char *section, const char *name, const char *value);

static int parse_records(struct load_ctx *c, char *buf, size_t len)
{
	FILE *f;
	int r;

	size_t whole = complete_part(buf, len);

	c->s->torn_bytes = len - whole;
	len = whole;
	if (len == 0)
		return 0;
	f = fmemopen(buf, len, "r");
	if (!f)
		return -ENOMEM;
	r = ini_parse_file(f, load_handler, c);
	fclose(f);
	drop_torn_tail(c);
	return r;
}

static int load_value(struct load_ctx *c, const char *name, const char *raw)
{
	_cleanup_free_ char *v = kv_unmangle(raw);
	struct state_record *r = c->cur;
	const struct kv_field *f;
	bool append;
	int k;

	if (!v)
		return -ENOMEM;
	if (strcmp(name, "kind") == 0) {
		if (r) /* a record cut short in the middle of the file */
			return -EINVAL;
		k = state_kind_from_name(v);
		if (k < 0 || !(c->cur = record_new(c->s, (enum state_kind)k, "")))
			return k < 0 ? k : -ENOMEM;
		return 0;
	}
	if (!r)
		return -EINVAL;
	if (strcmp(name, "complete") == 0) /* anything else: cut short */
		return strcmp(v, "yes") == 0 ? record_commit(c) : 0;
	f = kv_find(state_record_fields, STATE_RECORD_N_FIELDS, name, &append);
	if (!f)
		return 0; /* unknown or newer keys are ignored */
	k = kv_set(f, r, v, append);
	if (r->seq > c->s->last_seq)
		c->s->last_seq = r->seq;
	return k;
}

static int load_handler(void *user, const char *section, const char *name, const char *value)
{
	struct load_ctx *c = user;
	int r;

	if (strcmp(section, "record") != 0)
		return 1;
	r = load_value(c, name, value);
	if (r < 0 && !c->error)
		c->error = r;
	return r < 0 ? 0 : 1; /* 0: ini_parse_file() returns this line */
}

static bool trusted(const struct stat *st)
{
	return st->st_uid == 0 && !(st->st_mode & (S_IWGRP | S_IWOTH));
}

int state_parse(char *buf, size_t len, struct state *ret, unsigned *ret_line)
{
	struct load_ctx c = { .s = ret };
	int r;

	*ret = (struct state){ 0 };
	r = parse_records(&c, buf, len);
	if (r < 0) {
		state_done(ret);
		return r;
	}
	if (r != 0 || c.error) {
		state_done(ret);
		if (ret_line)
			*ret_line = r > 0 ? (unsigned)r : 0;
		return c.error && c.error != -EINVAL ? c.error : -EBADMSG;
	}
	return 0;
}

int state_load(const char *dir, struct state *ret, unsigned *ret_line)
{
	_cleanup_free_ char *path = NULL;
	_cleanup_free_ char *buf = NULL;
	struct diag_list dl = { 0 }; /* the caller words its own message */
	struct stat st;
	size_t len = 0;
	_cleanup_close_ int dirfd = -EBADF;
	int r;

	*ret = (struct state){ 0 };
	if (asprintf(&path, "%s/state", dir) < 0)
		return -ENOMEM;
	dirfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0)
		return errno == ENOENT ? 0 : -errno;
	/* root's file, not a link, not a FIFO, at most STATE_MAX_BYTES */
	r = input_read_at(dirfd, "state", path, STATE_MAX_BYTES, true, &buf, &len, &dl);
	diag_list_done(&dl);
	if (r == 0 && (fstat(dirfd, &st) < 0 || !trusted(&st)))
		r = -EPERM;
	dirfd = safe_close(dirfd);
	if (r == -ENOENT)
		return 0;
	if (r == -EINVAL)
		return -EPERM; /* not a regular file */
	if (r < 0)
		return r;
	if (len == 0)
		return -ENODATA; /* written whole (a header first) and renamed: cut short */
	return state_parse(buf, len, ret, ret_line);
}

/* One "[record]" section.  Returns: 0 or negative errno (kv_write()). */
static int write_record(FILE *f, const struct state_record *rec)
{
	int r;

	fputs("\n[record]\n", f);
	r = kv_write_fields(f, rec, state_record_fields, STATE_RECORD_N_FIELDS);
	if (r)
		return r; /* no "complete": the loader drops what was written */
	return kv_write(f, "complete", "yes");
}

static int write_records(FILE *f, const struct state *s)
{
	int r = 0;

	fputs("# storaged state: written by storaged, read by `storaged status` and `stop`\n", f);
	for (size_t i = 0; i < s->n && r == 0; i++)
		r = write_record(f, &s->v[i]);
	return r;
}

static void mark_saved(struct state *s)
{
	struct state_index *ix = s->index;

	if (ix && ix->dirty_valid) {
		for (size_t i = 0; i < ix->n_dirty; i++)
			s->v[ix->dirty[i]].dirty = false;
	} else {
		for (size_t i = 0; i < s->n; i++)
			s->v[i].dirty = false;
	}
	/* from here on every record marked dirty is listed */
	if (ix) {
		ix->n_dirty = 0;
		ix->dirty_valid = true;
	}
}

static int by_position(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	return (x > y) - (x < y);
}

int state_mkdir(const char *dir)
{
	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

static int write_records_cb(FILE *f, const void *s)
{
	return write_records(f, s);
}

int state_save(const char *dir, struct state *s)
{
	_cleanup_free_ char *path = NULL;
	int r;

	journal_close(s); /* the file is replaced */
	r = state_mkdir(dir);
	if (r < 0)
		return r;
	if (asprintf(&path, "%s/state", dir) < 0)
		return -ENOMEM;
	r = file_write_atomic(path, 0644, write_records_cb, s);
	if (r == 0)
		mark_saved(s);
	return r;
}

static int journal_open(const char *dir, struct state *s)
{
	_cleanup_free_ char *path = NULL;
	struct stat st;
	_cleanup_close_ int fd = -EBADF;

	if (asprintf(&path, "%s/state", dir) < 0)
		return -ENOMEM;
	fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || !trusted(&st))
		return -EPERM;
	s->journal = fdopen(fd, "a");
	if (!s->journal)
		return -ENOMEM;
	(void)TAKE_FD(fd); /* the stream owns it now */
	return 0;
}

static void journal_close(struct state *s)
{
	if (s->journal)
		fclose(s->journal);
	s->journal = NULL;
}

int state_append(const char *dir, struct state *s)
{
	struct state_index *ix = s->index;
	bool listed = ix && ix->dirty_valid, any = listed && ix->n_dirty > 0;
	int r = 0;

	for (size_t i = 0; !listed && i < s->n && !any; i++)
		any = s->v[i].dirty;
	if (!any)
		return 0;
	if (!s->journal) {
		/* the first save of a run rewrites the file, so that appends
		 * follow whole records (not a tail a crash cut short) */
		r = state_save(dir, s);
		return r < 0 ? r : journal_open(dir, s);
	}
	/* A crash may cut the text anywhere: the loader drops a cut record. */
	if (listed) {
		/* in the order of v[], as a scan would write them */
		qsort(ix->dirty, ix->n_dirty, sizeof(*ix->dirty), by_position);
		for (size_t i = 0; i < ix->n_dirty && r == 0; i++)
			r = write_record(s->journal, &s->v[ix->dirty[i]]);
	} else {
		for (size_t i = 0; i < s->n && r == 0; i++)
			if (s->v[i].dirty)
				r = write_record(s->journal, &s->v[i]);
	}
	if (r == 0 && fflush(s->journal) != 0)
		r = -errno;
	if (r < 0) {
		journal_close(s);
		return r;
	}
	mark_saved(s);
	return 0;
}
