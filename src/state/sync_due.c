/* SPDX-License-Identifier: GPL-2.0-or-later */
/* When a periodic sync is due (see sync_due.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "sync_due.h"

uint64_t sync_wait_usec(const struct sync_mark *last, const char *boot_id, uint64_t since_usec,
			uint64_t interval_usec, uint64_t now_usec)
{
	uint64_t base = since_usec, due;

	if (last && last->mono_usec && boot_id && boot_id[0] && strcmp(last->boot_id, boot_id) == 0)
		base = last->mono_usec;
	if (base > now_usec)
		base = now_usec;
	due = base + interval_usec < base ? UINT64_MAX : base + interval_usec;
	return due > now_usec ? due - now_usec : 0;
}

int sync_read_boot_id(const char *path, char buf[SYNC_BOOT_ID_LEN])
{
	FILE *f = fopen(path, "re");
	int r = 0;

	buf[0] = '\0';
	if (!f)
		return -errno;
	if (!fgets(buf, SYNC_BOOT_ID_LEN, f))
		r = -EIO;
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	if (r == 0 && strlen(buf) != SYNC_BOOT_ID_LEN - 1)
		r = -EBADMSG;
	if (r < 0)
		buf[0] = '\0';
	return r;
}
