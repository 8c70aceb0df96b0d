/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The sync back's room on the directory's filesystem (copy_budget.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/quota.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "copy.h"
#include "copy_budget.h"
#include "shared/util.h"

/* names a directory block holds, at the least (ext4, 1 KiB blocks, long
 * names): one block is charged for every so many */
#define NAMES_PER_BLOCK 64

bool copy_budget_quota_room(uint64_t hard, uint64_t soft, uint64_t cur, time_t grace_end,
			    time_t now, uint64_t *ret)
{
	uint64_t room = UINT64_MAX;

	if (hard)
		room = hard > cur ? hard - cur : 0;
	/* over the soft limit with the grace run out: not a block more */
	if (soft && cur >= soft && grace_end && now >= grace_end)
		room = 0;
	*ret = room;
	return hard || (soft && grace_end);
}

int copy_budget_init(struct copy_budget *b, int fd)
{
	struct statvfs v;

	*b = (struct copy_budget){ .lock = PTHREAD_MUTEX_INITIALIZER, .fd = fd };
	if (fstatvfs(fd, &v) < 0)
		return -errno;
	b->bsize = v.f_frsize ? v.f_frsize : v.f_bsize;
	b->free_root = (uint64_t)v.f_bfree * b->bsize;
	b->free_users = (uint64_t)v.f_bavail * b->bsize;
	b->inodes_root = v.f_files ? v.f_ffree : UINT64_MAX;
	b->inodes_users = v.f_files ? v.f_favail : UINT64_MAX;
	return 0;
}

/* the bytes writing @st takes on the filesystem, its name aside */
static uint64_t entry_cost(const struct copy_budget *b, const struct stat *st)
{
	uint64_t data = (uint64_t)st->st_size, held = (uint64_t)st->st_blocks * 512;

	if (S_ISDIR(st->st_mode))
		return b->bsize;
	/* a long link target takes a block (ext4 keeps up to 59 bytes in
	 * the inode); devices and fifos none */
	if (S_ISLNK(st->st_mode))
		return data >= 60 ? b->bsize : 0;
	if (!S_ISREG(st->st_mode))
		return 0;
	/* holes stay holes (copy_data()) */
	if (held < data)
		data = held;
	return (data + b->bsize - 1) / b->bsize * b->bsize;
}

/* the owner's quota record, read at its first charge (under the lock) */
static struct budget_owner *owner_of(struct copy_budget *b, uid_t uid)
{
	/* QCMD() shifts Q_GETQUOTA (0x800007), an int, past INT_MAX: the
	 * same bits, computed unsigned (quotactl(2)) */
	const int GETQUOTA_USR = (int)(((unsigned)Q_GETQUOTA << SUBCMDSHIFT) | (USRQUOTA & SUBCMDMASK));
	struct if_dqblk q = { 0 };
	struct budget_owner *o;

	for (size_t i = 0; i < b->nowners; i++)
		if (b->owners[i].uid == uid)
			return &b->owners[i];
	if (grow_array(&b->owners, &b->ownercap, b->nowners, sizeof(*o)) < 0)
		return NULL;
	o = &b->owners[b->nowners++];
	*o = (struct budget_owner){ .uid = uid };
	/* ENOSYS (before 5.14), ESRCH (quotas off), ENOTSUP, ...: no limit
	 * that storaged can know of */
	if (uid == 0 || syscall(SYS_quotactl_fd, b->fd, GETQUOTA_USR, uid, &q) < 0)
		return o;
	if ((q.dqb_valid & QIF_BLIMITS) && (q.dqb_valid & QIF_SPACE))
		o->limited = copy_budget_quota_room(q.dqb_bhardlimit * QIF_DQBLKSIZE,
						    q.dqb_bsoftlimit * QIF_DQBLKSIZE, q.dqb_curspace,
						    (time_t)q.dqb_btime, time(NULL), &o->room);
	if ((q.dqb_valid & QIF_ILIMITS) && (q.dqb_valid & QIF_INODES))
		o->ilimited = copy_budget_quota_room(q.dqb_ihardlimit, q.dqb_isoftlimit, q.dqb_curinodes,
						     (time_t)q.dqb_itime, time(NULL), &o->iroom);
	return o;
}

/* records the first refusal: -@err, in words; @unit: "bytes", "inodes" */
static int refuse(struct copy_budget *b, int err, const char *unit, uint64_t need, uint64_t room, uid_t uid)
{
	bool bytes = !strcmp(unit, "bytes");

	if (b->err)
		return err;
	b->err = err;
	if (err == -EDQUOT)
		snprintf(b->why, sizeof(b->why),
			 COPY_NO_ROOM ": those of uid %u need at least %llu %s, its disk quota leaves it %llu %s",
			 (unsigned)uid, (unsigned long long)need, unit, (unsigned long long)room, unit);
	else
		snprintf(b->why, sizeof(b->why),
			 COPY_NO_ROOM ": they need at least %llu %s, the directory's filesystem has %llu %s free for uid %u%s",
			 (unsigned long long)need, unit, (unsigned long long)room, unit, (unsigned)uid,
			 uid && bytes ? " (the rest is reserved for root)" : "");
	return err;
}

int copy_budget_charge(struct copy_budget *b, const struct stat *st)
{
	struct budget_owner *o;
	uint64_t cost, limit, ilimit;
	int r = 0;

	if (!b)
		return 0;
	pthread_mutex_lock(&b->lock);
	cost = entry_cost(b, st);
	/* the first names go in the blocks the directories have */
	if ((b->names + 1) % NAMES_PER_BLOCK == 0)
		cost += b->bsize;
	/* a user may not allocate what the filesystem reserves for root */
	limit = st->st_uid == 0 ? b->free_root : b->free_users;
	ilimit = st->st_uid == 0 ? b->inodes_root : b->inodes_users;
	if (b->used + cost > limit)
		r = refuse(b, -ENOSPC, "bytes", b->used + cost, limit, st->st_uid);
	else if (b->inodes + 1 > ilimit)
		r = refuse(b, -ENOSPC, "inodes", b->inodes + 1, ilimit, st->st_uid);
	else if (!(o = owner_of(b, st->st_uid)))
		r = -ENOMEM;
	else if (o->limited && o->used + cost > o->room)
		r = refuse(b, -EDQUOT, "bytes", o->used + cost, o->room, st->st_uid);
	else if (o->ilimited && o->iused + 1 > o->iroom)
		r = refuse(b, -EDQUOT, "inodes", o->iused + 1, o->iroom, st->st_uid);
	else {
		o->iused++;
		o->used += cost;
		b->used += cost;
		b->names++;
		b->inodes++;
	}
	pthread_mutex_unlock(&b->lock);
	return r;
}

void copy_budget_explain(const struct copy_budget *b, struct copy_result *ret)
{
	if (b->err && ret->err == b->err)
		snprintf(ret->msg, sizeof(ret->msg), "%s", b->why);
}

void copy_budget_done(struct copy_budget *b)
{
	free(b->owners);
	b->owners = NULL;
	b->nowners = b->ownercap = 0;
	pthread_mutex_destroy(&b->lock);
}
