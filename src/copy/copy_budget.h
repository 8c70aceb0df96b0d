/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The room the sync back may use on the directory's filesystem: what the
 * owners of the files it writes could write themselves.  storaged-copy
 * writes as root, which may use ext4's reserved blocks and pass any quota:
 * a user's data there would fill the filesystem for everybody.  So each
 * entry is charged before a byte of it is written, as the owner's own cp(1)
 * would fail: its data rounded up to blocks, a block per directory, a block
 * per 64 names, and an inode each.  Shared by the walking threads (a lock).
 */
#ifndef STORAGED_COPY_BUDGET_H
#define STORAGED_COPY_BUDGET_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>

/* a user's quota on the filesystem: the bytes and inodes it leaves, once
 * read, and what the sync charged against them */
struct budget_owner {
	uid_t uid;
	bool limited, ilimited;
	uint64_t room, used;
	uint64_t iroom, iused;
};

struct copy_budget {
	pthread_mutex_t lock;
	int fd; /* a directory of the filesystem (not owned): quota lookups */
	uint64_t bsize;
	uint64_t free_root, free_users; /* statvfs f_bfree, f_bavail, in bytes */
	/* f_ffree, f_favail; UINT64_MAX where inodes are made as needed
	 * (f_files 0: btrfs) */
	uint64_t inodes_root, inodes_users;
	uint64_t used, inodes; /* charged so far */
	uint64_t names;
	struct budget_owner *owners;
	size_t nowners, ownercap;
	int err; /* the first refusal: -ENOSPC, -EDQUOT; 0: none */
	char why[256];
};

/* reads the free blocks of @fd's filesystem; @fd (not owned) must stay
 * open while @b is used (quota lookups).  Returns: 0; negative errno of
 * fstatvfs(). */
int copy_budget_init(struct copy_budget *b, int fd);

/*
 * copy_budget_charge: charges writing @st (type, size, blocks, owner),
 * once per inode, before it is written; @b NULL: no limit (the seed).  A
 * uid's first charge reads its quota (quotactl_fd(2), Linux 5.14; none
 * without quota support).
 * Returns: 0; -ENOSPC (past f_bavail or f_favail; root: f_bfree,
 * f_ffree), -EDQUOT (past the owner's block or inode quota), -ENOMEM.
 * The first refusal is recorded and no refused charge is kept.
 */
int copy_budget_charge(struct copy_budget *b, const struct stat *st);

struct copy_result;

/* when the copy's first failure (@ret) is the budget's refusal, its
 * message becomes the refusal's numbers (COPY_NO_ROOM ...) */
void copy_budget_explain(const struct copy_budget *b, struct copy_result *ret);

void copy_budget_done(struct copy_budget *b);

/* the bytes (or inodes) a write of the user may still take into @ret, as
 * the kernel allows (fs/quota/dquot.c, check_bdq(), check_idq()): up to
 * the @hard limit, up to @soft once its grace has passed (@grace_end; 0:
 * not over it); limits and @cur in one unit, 0: none.  Returns: whether
 * there is a limit. */
bool copy_budget_quota_room(uint64_t hard, uint64_t soft, uint64_t cur, time_t grace_end,
			    time_t now, uint64_t *ret);

#endif
