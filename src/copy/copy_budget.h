/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The room the sync back may use on the directory's filesystem: what the
 * owners of the files it writes could write themselves.  storaged-copy
 * writes as root, and root may write into the blocks ext4 reserves for
 * it and past any user's quota; a user's data written there fills the
 * filesystem for everybody.  So every entry is charged before it is
 * written, as a user's own cp(1) would fail, but before a byte is
 * written: its data rounded up to the filesystem's blocks, a block per
 * directory, a block per 64 names (the directories they are added to).
 * Shared by the walking threads (a lock).  Internal to storaged-copy.
 */
#ifndef STORAGED_COPY_BUDGET_H
#define STORAGED_COPY_BUDGET_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>

/* a user's quota on the filesystem: the bytes it leaves, once read */
struct budget_owner {
	uid_t uid;
	bool limited;
	uint64_t room, used;
};

struct copy_budget {
	pthread_mutex_t lock;
	int fd; /* a directory of the filesystem (not owned): quota lookups */
	uint64_t bsize;
	uint64_t free_root, free_users; /* statvfs f_bfree, f_bavail, in bytes */
	uint64_t used; /* charged so far */
	uint64_t names;
	struct budget_owner *owners;
	size_t nowners, ownercap;
	int err; /* the first refusal: -ENOSPC, -EDQUOT; 0: none */
	char why[256];
};

/**
 * copy_budget_init:
 * @b: the budget to set up
 * @fd: open directory on the filesystem written to; kept (not owned) for
 *      the quota lookups, so it must stay open while @b is used
 *
 * Reads the filesystem's free blocks (fstatvfs()).
 *
 * Returns: 0; negative errno of fstatvfs().
 */
int copy_budget_init(struct copy_budget *b, int fd);

/**
 * copy_budget_charge:
 * @b: the budget, or NULL (no limit: the seed)
 * @st: the source entry about to be written (its type, size, blocks and
 *      owner), once per inode
 *
 * Charges what writing the entry takes, before it is written.  The first
 * charge of a uid reads its quota (quotactl_fd(2), Linux 5.14; a kernel or
 * filesystem without quotas has no limit).
 *
 * Returns: 0; -ENOSPC when it does not fit in what the owner may use of
 * the filesystem (f_bavail; root: f_bfree), -EDQUOT past the owner's
 * quota; -ENOMEM.  The first refusal is recorded (copy_budget_explain())
 * and no refused charge is kept.
 */
int copy_budget_charge(struct copy_budget *b, const struct stat *st);

struct copy_result;

/* When the first failure of a copy (@ret) is the budget's refusal (what
 * failed after it was cancelled), its message becomes the refusal's
 * numbers (copy.h COPY_NO_ROOM ...) instead of the bare errno. */
void copy_budget_explain(const struct copy_budget *b, struct copy_result *ret);

void copy_budget_done(struct copy_budget *b);

/**
 * copy_budget_quota_room:
 * @hard, @soft: the quota's block limits in bytes (0: none)
 * @cur: the bytes the user has
 * @grace_end: when the soft limit's grace ends (0: not over it)
 * @now: the time now
 * @ret: receives the bytes a user's write may still take
 *
 * What the kernel lets the user allocate (fs/quota/dquot.c,
 * check_bdq()): up to the hard limit, up to the soft limit once its grace
 * has passed.
 *
 * Returns: whether there is a limit at all.
 */
bool copy_budget_quota_room(uint64_t hard, uint64_t soft, uint64_t cur, time_t grace_end,
			    time_t now, uint64_t *ret);

#endif
