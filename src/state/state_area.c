/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The record of one RAM area (struct state_area, state.h), in the format of
 * the run state: a table of the keyed-record codec (shared/kv_record.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <ini.h>

#include "atomic_file.h"
#include "state.h"
#include "state_internal.h"
#include "shared/units.h"
#include "shared/util.h"

/*
 * One "[area]" section, in the format of the run state above (mangled
 * values, "key+" continuation lines), ending in "complete = yes".  The file
 * is replaced atomically, so a record without that line was not written by
 * storaged and is refused.
 */
#define AREA_MAX_BYTES (64u << 10)
/* mounts carried onto one area: far more than a directory has below it */
#define STATE_AREA_CARRIED_MAX 1024

void state_area_init(struct state_area *a)
{
	*a = (struct state_area){ .resource_id = -1 };
}

void state_area_done(struct state_area *a)
{
	free(a->name);
	free(a->path);
	free(a->fs);
	free(a->device);
	free(a->sync_dir);
	free(a->sync_failed);
	free(a->sync_kept_both);
	free(a->carried);
	state_area_init(a);
}

/* storaged wrote it, but a damaged file must not turn into a wrong device
 * number: -1 or 0..INT32_MAX */
static int resource_parse(const char *v, void *base, const struct kv_field *f)
{
	int *ret = (int *)((char *)base + f->off);
	uint64_t u;

	if (strcmp(v, "-1") == 0) {
		*ret = -1;
		return 0;
	}
	if (units_parse_uint(v, INT32_MAX, &u) < 0)
		return -EINVAL;
	*ret = (int)u;
	return 0;
}

static const char *resource_format(const void *base, const struct kv_field *f, char *buf, size_t len)
{
	int id = *(const int *)((const char *)base + f->off);

	if (id < 0)
		return NULL;
	snprintf(buf, len, "%d", id);
	return buf;
}

static int backend_parse(const char *v, void *base, const struct kv_field *f)
{
	return config_backend_from_name(v, (enum area_backend *)((char *)base + f->off));
}

static const char *backend_format(const void *base, const struct kv_field *f, char *buf, size_t len)
{
	(void)buf;
	(void)len;
	return config_backend_name(*(const enum area_backend *)((const char *)base + f->off));
}

#define ROW(key, member, kv_type, ...) \
	{ .name = key, .off = offsetof(struct state_area, member), .type = kv_type, __VA_ARGS__ }

/* In the order written; every value must be valid (the file is replaced
 * whole: a damaged one was not written by storaged). */
static const struct kv_field area_fields[] = {
	ROW("name", name, KV_STR),
	ROW("path", path, KV_STR),
	ROW("fs", fs, KV_STR),
	ROW("device", device, KV_STR),
	ROW("sync_dir", sync_dir, KV_STR),
	ROW("sync_failed", sync_failed, KV_STR),
	ROW("sync_kept_both", sync_kept_both, KV_STR),
	/* a record of storaged's holds few: one per filesystem mounted below
	 * the directory */
	ROW("carried", carried, KV_U64_LIST, .n_off = offsetof(struct state_area, n_carried),
	    .max = STATE_AREA_CARRIED_MAX),
	ROW("sync_refused", sync_refused, KV_BOOL, .flags = KV_NONZERO),
	ROW("stop_started_usec", stop_started_usec, KV_U64, .flags = KV_NONZERO),
	ROW("stop_synced", stop_synced, KV_BOOL, .flags = KV_NONZERO),
	ROW("backend", backend, KV_CUSTOM, .parse = backend_parse, .format = backend_format),
	ROW("resource", resource_id, KV_CUSTOM, .parse = resource_parse, .format = resource_format),
	ROW("persist", persist, KV_BOOL),
	ROW("seeded", seeded, KV_BOOL),
	ROW("sync_interval_usec", sync_interval_usec, KV_U64, .flags = KV_NONZERO),
	ROW("overlay", overlay, KV_BOOL, .flags = KV_NONZERO),
	ROW("covered", covered, KV_BOOL),
	ROW("size", size_bytes, KV_U64),
	ROW("nr_inodes", nr_inodes, KV_U64),
	ROW("started_usec", started_usec, KV_U64),
	ROW("cover_id", cover_id, KV_U64),
};

/* the text of the record @a into @f; returns 0 or negative errno */
static int area_print(FILE *f, const struct state_area *a)
{
	int r;

	fputs("# storaged area: written by storaged, read by `storaged stop`, `sync` and `status`\n[area]\n",
	      f);
	r = kv_write_fields(f, a, area_fields, ARRAY_SIZE(area_fields));
	return r ?: kv_write(f, "complete", "yes");
}

static int area_print_cb(FILE *f, const void *a)
{
	return area_print(f, a);
}

int state_area_write(const char *file, const struct state_area *a)
{
	return file_write_atomic(file, 0644, area_print_cb, a);
}

int state_area_write_fd(int fd, const struct state_area *a)
{
	_cleanup_free_ char *buf = NULL;
	size_t len = 0, done = 0;
	FILE *f = open_memstream(&buf, &len);
	ssize_t k;
	int r;

	if (!f)
		return -ENOMEM;
	r = area_print(f, a);
	if (fclose(f) != 0 && r == 0)
		r = -ENOMEM;
	while (r == 0 && done < len) {
		k = pwrite(fd, buf + done, len - done, (off_t)done);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			r = k < 0 ? -errno : -EIO;
		else
			done += (size_t)k;
	}
	if (r == 0 && (ftruncate(fd, (off_t)len) < 0 || fsync(fd) < 0))
		r = -errno;
	return r;
}

/* The keys of a record written before the backend table: zram_id, kept
 * as the resource only when zram_created says storaged made it. */
struct zram_compat {
	int zram_id;
	bool zram_created;
};

static const struct kv_field zram_compat_fields[] = {
	{ .name = "zram_id", .off = offsetof(struct zram_compat, zram_id), .type = KV_CUSTOM,
	  .parse = resource_parse },
	{ .name = "zram_created", .off = offsetof(struct zram_compat, zram_created), .type = KV_BOOL },
};

struct area_ctx {
	struct state_area *a;
	bool complete;
	int error;
	struct zram_compat old;
};

static int area_value(struct area_ctx *c, const char *name, const char *raw)
{
	_cleanup_free_ char *v = kv_unmangle(raw);
	const struct kv_field *f;
	bool append;

	if (!v)
		return -ENOMEM;
	if (c->complete) /* nothing follows the end of the record */
		return -EINVAL;
	if (strcmp(name, "complete") == 0) {
		c->complete = strcmp(v, "yes") == 0;
		return c->complete ? 0 : -EINVAL;
	}
	f = kv_find(area_fields, ARRAY_SIZE(area_fields), name, &append);
	if (f)
		return kv_set(f, c->a, v, append);
	f = kv_find(zram_compat_fields, ARRAY_SIZE(zram_compat_fields), name, NULL);
	if (f)
		return kv_set(f, &c->old, v, false);
	return 0; /* unknown or newer keys are ignored */
}

static int area_handler(void *user, const char *section, const char *name, const char *value)
{
	struct area_ctx *c = user;
	int r;

	if (strcmp(section, "area") != 0)
		r = -EINVAL;
	else
		r = area_value(c, name, value);
	if (r < 0 && !c->error)
		c->error = r;
	return r < 0 ? 0 : 1;
}

int state_area_parse(const char *buf, size_t len, struct state_area *ret)
{
	struct area_ctx c = { .a = ret, .old.zram_id = -1 };
	FILE *f;
	int r;

	state_area_init(ret);
	if (len == 0)
		return -EBADMSG;
	f = fmemopen((void *)buf, len, "r");
	if (!f)
		return -ENOMEM;
	r = ini_parse_file(f, area_handler, &c);
	fclose(f);
	if (r == 0 && c.error == 0 && (!c.complete || !ret->name || !ret->path || !ret->fs || !ret->device))
		r = -EBADMSG;
	if (r != 0 || c.error) {
		state_area_done(ret);
		return c.error == -ENOMEM || r == -2 ? -ENOMEM : -EBADMSG;
	}
	if (ret->resource_id < 0 && c.old.zram_created && c.old.zram_id >= 0)
		ret->resource_id = c.old.zram_id;
	return 0;
}

int state_area_read_fd(int fd, struct state_area *ret)
{
	_cleanup_free_ char *buf = malloc(AREA_MAX_BYTES + 1);
	size_t got = 0;
	ssize_t k;

	state_area_init(ret);
	if (!buf)
		return -ENOMEM;
	while (got <= AREA_MAX_BYTES &&
	       (k = pread(fd, buf + got, AREA_MAX_BYTES + 1 - got, (off_t)got)) != 0) {
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -errno;
		got += (size_t)k;
	}
	if (got > AREA_MAX_BYTES)
		return -EFBIG;
	return state_area_parse(buf, got, ret);
}
