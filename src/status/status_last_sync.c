/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The record of each area's last sync (status_prom.h,
 * status_prom_note_sync()), in the state directory: written by `sync` and
 * the resident, read by the status snapshot and the resident's schedule.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "state/atomic_file.h"
#include "status_prom.h"
#include "shared/units.h"
#include "shared/util.h"

#define LAST_SYNC_DIR "last-sync"

static bool area_name_ok(const char *name)
{
	return name[0] && name[0] != '.' && !strchr(name, '/') && strlen(name) <= NAME_MAX - 16;
}

/* "MONOTONIC_USEC BOOT_ID" after the status word, or nothing.  Returns:
 * 0; -EBADMSG. */
static int parse_mark(const char *s, struct sync_mark *ret)
{
	char num[24];
	const char *sp = strchr(s, ' ');
	uint64_t mono;

	*ret = (struct sync_mark){ 0 };
	if (!*s)
		return 0;
	if (!sp || (size_t)(sp - s) >= sizeof(num) || strlen(sp + 1) != SYNC_BOOT_ID_LEN - 1)
		return -EBADMSG;
	memcpy(num, s, (size_t)(sp - s));
	num[sp - s] = '\0';
	if (units_parse_uint(num, UINT64_MAX, &mono) < 0)
		return -EBADMSG;
	ret->mono_usec = mono;
	memcpy(ret->boot_id, sp + 1, SYNC_BOOT_ID_LEN);
	return 0;
}

int status_prom_read_sync(const char *state_dir, const char *name, struct prom_sync *ret)
{
	_cleanup_free_ char *path = NULL;
	char buf[128] = "", *sp, *word, *rest;
	struct sync_mark mark;
	uint64_t t;
	FILE *f;

	if (!area_name_ok(name))
		return -EINVAL;
	if (asprintf(&path, "%s/" LAST_SYNC_DIR "/%s", state_dir, name) < 0)
		return -ENOMEM;
	f = fopen(path, "re");
	if (!f)
		return -errno;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = '\0';
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	sp = strchr(buf, ' ');
	if (!sp)
		return -EBADMSG;
	*sp = '\0';
	word = sp + 1;
	rest = word + strcspn(word, " ");
	if (*rest)
		*rest++ = '\0';
	if (units_parse_uint(buf, UINT64_MAX, &t) < 0 || (strcmp(word, "ok") != 0 && strcmp(word, "failed") != 0) ||
	    parse_mark(rest, &mark) < 0)
		return -EBADMSG;
	*ret = (struct prom_sync){ .time_sec = t, .ok = strcmp(word, "ok") == 0, .mark = mark };
	return 0;
}

static int write_sync(FILE *f, const void *ud)
{
	const bool *ok = ud;

	char boot_id[SYNC_BOOT_ID_LEN];

	fprintf(f, "%lld %s", (long long)time(NULL), *ok ? "ok" : "failed");
	if (sync_read_boot_id(SYNC_BOOT_ID_PATH, boot_id) == 0)
		fprintf(f, " %llu %s", (unsigned long long)now_monotonic_usec(), boot_id);
	fputc('\n', f);
	return ferror(f) ? -EIO : 0;
}

int status_prom_forget_sync(const char *state_dir, const char *area)
{
	_cleanup_free_ char *path = NULL;

	if (!area_name_ok(area))
		return -EINVAL;
	if (asprintf(&path, "%s/" LAST_SYNC_DIR "/%s", state_dir, area) < 0)
		return -ENOMEM;
	return unlink(path) < 0 && errno != ENOENT ? -errno : 0;
}

int status_prom_note_sync(const char *state_dir, const char *area, bool ok)
{
	_cleanup_free_ char *dir = NULL, *path = NULL;

	if (!area_name_ok(area))
		return -EINVAL;
	if (asprintf(&dir, "%s/" LAST_SYNC_DIR, state_dir) < 0 || asprintf(&path, "%s/%s", dir, area) < 0)
		return -ENOMEM;
	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		return -errno;
	return file_write_atomic(path, 0644, write_sync, &ok);
}
