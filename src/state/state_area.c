/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The record of one RAM area (struct state_area, state.h), in the format of
 * the run state: state_format.c's writer and inih.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <ini.h>
#include <libmount.h>

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
	free(a->carried);
	state_area_init(a);
}

/* the text of the record @a into @f; returns 0 or negative errno */
static int area_print(FILE *f, const struct state_area *a)
{
	int r;

	fputs("# storaged area: written by storaged, read by `storaged stop`, `sync` and `status`\n[area]\n",
	      f);
	r = state_write_kv(f, "name", a->name);
	if (!r)
		r = state_write_kv(f, "path", a->path);
	if (!r)
		r = state_write_kv(f, "fs", a->fs);
	if (!r)
		r = state_write_kv(f, "device", a->device);
	if (!r)
		r = state_write_kv(f, "sync_dir", a->sync_dir);
	if (!r)
		r = state_write_kv(f, "sync_failed", a->sync_failed);
	for (size_t i = 0; !r && i < a->n_carried; i++)
		r = state_write_uint(f, "carried", a->carried[i]);
	if (!r && a->sync_refused)
		r = state_write_bool(f, "sync_refused", true);
	if (!r && a->stop_started_usec)
		r = state_write_uint(f, "stop_started_usec", a->stop_started_usec);
	if (!r)
		r = state_write_kv(f, "backend", config_backend_name(a->backend));
	if (!r && a->resource_id >= 0)
		r = state_write_uint(f, "resource", (uint64_t)a->resource_id);
	if (!r)
		r = state_write_bool(f, "persist", a->persist);
	if (!r)
		r = state_write_bool(f, "seeded", a->seeded);
	if (!r)
		r = state_write_bool(f, "covered", a->covered);
	if (!r)
		r = state_write_uint(f, "size", a->size_bytes);
	if (!r)
		r = state_write_uint(f, "nr_inodes", a->nr_inodes);
	if (!r)
		r = state_write_uint(f, "started_usec", a->started_usec);
	if (!r)
		r = state_write_uint(f, "cover_id", a->cover_id);
	if (!r)
		r = state_write_kv(f, "complete", "yes");
	return r;
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

struct area_ctx {
	struct state_area *a;
	bool complete;
	int error;
	/* the keys of a record written before the backend table: zram_id,
	 * kept as the resource only when zram_created says storaged made it */
	int zram_id;
	bool zram_created;
};

static char **area_string(struct state_area *a, const char *name, bool *append)
{
	size_t len = strlen(name);

	*append = len > 0 && name[len - 1] == '+';
	if (*append)
		len--;
	if (len == 4 && strncmp(name, "name", 4) == 0)
		return &a->name;
	if (len == 4 && strncmp(name, "path", 4) == 0)
		return &a->path;
	if (len == 2 && strncmp(name, "fs", 2) == 0)
		return &a->fs;
	if (len == 6 && strncmp(name, "device", 6) == 0)
		return &a->device;
	if (len == 8 && strncmp(name, "sync_dir", 8) == 0)
		return &a->sync_dir;
	if (len == 11 && strncmp(name, "sync_failed", 11) == 0)
		return &a->sync_failed;
	return NULL;
}

/* one more "carried = ID" line; a record of storaged's holds few (one per
 * filesystem mounted below the directory), a damaged one is refused */
static int state_area_add_carried(struct state_area *a, const char *v)
{
	uint64_t id, *nv;

	if (units_parse_uint(v, UINT64_MAX, &id) < 0 || id == 0 || a->n_carried >= STATE_AREA_CARRIED_MAX)
		return -EINVAL;
	nv = realloc(a->carried, (a->n_carried + 1) * sizeof(*nv));
	if (!nv)
		return -ENOMEM;
	nv[a->n_carried++] = id;
	a->carried = nv;
	return 0;
}

/* storaged wrote it, but a damaged file must not turn into a wrong device
 * number: -1 or 0..INT32_MAX */
static int resource_id_parse(const char *v, int *ret)
{
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

static int area_value(struct area_ctx *c, const char *name, const char *raw)
{
	_cleanup_free_ char *v = raw[0] ? mnt_unmangle(raw) : strdup("");
	struct state_area *a = c->a;
	bool append, *flag = NULL;
	char **field;

	if (!v)
		return -ENOMEM;
	if (c->complete) /* nothing follows the end of the record */
		return -EINVAL;
	field = area_string(a, name, &append);
	if (field)
		return append ? (*field ? state_append_str(field, v) : -EINVAL)
			      : state_replace_str(field, v);
	if (strcmp(name, "complete") == 0) {
		c->complete = strcmp(v, "yes") == 0;
		return c->complete ? 0 : -EINVAL;
	}
	if (strcmp(name, "backend") == 0)
		return config_backend_from_name(v, &a->backend);
	if (strcmp(name, "resource") == 0)
		return resource_id_parse(v, &a->resource_id);
	if (strcmp(name, "zram_id") == 0)
		return resource_id_parse(v, &c->zram_id);
	flag = strcmp(name, "zram_created") == 0   ? &c->zram_created
	       : strcmp(name, "persist") == 0	   ? &a->persist
	       : strcmp(name, "seeded") == 0	   ? &a->seeded
	       : strcmp(name, "covered") == 0	   ? &a->covered
	       : strcmp(name, "sync_refused") == 0 ? &a->sync_refused
						   : NULL;
	if (flag)
		return units_parse_bool(v, flag);
	if (strcmp(name, "size") == 0)
		return units_parse_uint(v, UINT64_MAX, &a->size_bytes);
	if (strcmp(name, "nr_inodes") == 0)
		return units_parse_uint(v, UINT64_MAX, &a->nr_inodes);
	if (strcmp(name, "started_usec") == 0)
		return units_parse_uint(v, UINT64_MAX, &a->started_usec);
	if (strcmp(name, "cover_id") == 0)
		return units_parse_uint(v, UINT64_MAX, &a->cover_id);
	if (strcmp(name, "stop_started_usec") == 0)
		return units_parse_uint(v, UINT64_MAX, &a->stop_started_usec);
	if (strcmp(name, "carried") == 0)
		return state_area_add_carried(a, v);
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
	struct area_ctx c = { .a = ret, .zram_id = -1 };
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
	if (ret->resource_id < 0 && c.zram_created && c.zram_id >= 0)
		ret->resource_id = c.zram_id;
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
