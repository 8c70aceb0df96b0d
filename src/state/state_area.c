/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The record of one RAM area (struct state_area, state.h), in the format of
 * the run state: state.c's writer (state_write_kv) and inih.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <ini.h>
#include <libmount.h>

#include "state.h"
#include "state_internal.h"
#include "parse/units.h"
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
	*a = (struct state_area){ .zram_id = -1 };
}

void state_area_done(struct state_area *a)
{
	free(a->name);
	free(a->path);
	free(a->fs);
	free(a->device);
	free(a->sync_dir);
	free(a->carried);
	state_area_init(a);
}

static const char *yes_no(bool b)
{
	return b ? "yes" : "no";
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
	if (!r && a->sync_dir)
		r = state_write_kv(f, "sync_dir", a->sync_dir);
	for (size_t i = 0; i < a->n_carried; i++)
		fprintf(f, "carried = %llu\n", (unsigned long long)a->carried[i]);
	if (a->sync_refused)
		fputs("sync_refused = yes\n", f);
	fprintf(f, "backend = %s\nzram_id = %d\nzram_created = %s\npersist = %s\nseeded = %s\ncovered = %s\nsize = %llu\nnr_inodes = %llu\nstarted_usec = %llu\ncover_id = %llu\ncomplete = yes\n",
		config_backend_name(a->backend), a->zram_id, yes_no(a->zram_created),
		yes_no(a->persist), yes_no(a->seeded), yes_no(a->covered),
		(unsigned long long)a->size_bytes, (unsigned long long)a->nr_inodes,
		(unsigned long long)a->started_usec, (unsigned long long)a->cover_id);
	return r;
}

int state_area_write(const char *file, const struct state_area *a)
{
	_cleanup_free_ char *tmp = NULL;
	FILE *f;
	int fd, r;

	if (asprintf(&tmp, "%s.tmp", file) < 0)
		return -ENOMEM;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0)
		return -errno;
	f = fdopen(fd, "w");
	if (!f) {
		close(fd);
		unlink(tmp);
		return -ENOMEM;
	}
	r = area_print(f, a);
	if (r == 0 && (fflush(f) != 0 || fsync(fd) < 0))
		r = -errno;
	if (fclose(f) != 0 && r == 0)
		r = -errno;
	if (r == 0 && rename(tmp, file) < 0)
		r = -errno;
	if (r < 0)
		unlink(tmp);
	return r;
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

static int area_value(struct area_ctx *c, const char *name, const char *raw)
{
	_cleanup_free_ char *v = raw[0] ? mnt_unmangle(raw) : strdup("");
	struct state_area *a = c->a;
	bool append, *flag = NULL;
	char **field;
	uint64_t u;

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
	if (strcmp(name, "zram_id") == 0) {
		/* storaged wrote it, but a damaged file must not turn into a
		 * wrong device number */
		if (strcmp(v, "-1") == 0) {
			a->zram_id = -1;
			return 0;
		}
		if (units_parse_uint(v, INT32_MAX, &u) < 0)
			return -EINVAL;
		a->zram_id = (int)u;
		return 0;
	}
	flag = strcmp(name, "zram_created") == 0   ? &a->zram_created
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
	struct area_ctx c = { .a = ret };
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
