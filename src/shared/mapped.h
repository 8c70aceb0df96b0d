/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

/* Files some process maps shared (MAP_SHARED), by inode number.  A sync
 * cannot trust their times: on a filesystem without page_mkwrite (tmpfs)
 * the kernel moves them at a write fault only (mm/memory.c,
 * fault_dirty_shared_page()); a page first read through a writable shared
 * mapping is mapped writable then, and no write to it faults.  So a sync
 * compares such a file by content, at the sync that saw it mapped and at
 * the next one; a mapping made and gone between two syncs that read a page
 * before writing it is not seen (storaged(8), Sync back). */
struct mapped_set {
	ino_t *ino;
	size_t n, cap;
	bool all; /* every file counts (a mapping no inode here names) */
};

/* Adds to @m the inodes of the files on @dev that some process maps
 * shared now, from every /proc/PID/maps (proc(5)), and to @other (NULL:
 * none) those on @other_dev.  A path is never read: a mapping made
 * through a bind mount, in another mount namespace, of a name since
 * renamed or unlinked, or of a name maps escapes, counts all the same.
 * Returns 0 or negative errno (-ENOMEM; a process gone meanwhile is no
 * error). */
int mapped_scan(struct mapped_set *m, dev_t dev, struct mapped_set *other, dev_t other_dev);

/* As mapped_scan(), and adds to @other_writable those of @other_dev
 * mapped writable now too (perms "rw-s"). */
int mapped_scan_writable(struct mapped_set *m, dev_t dev, struct mapped_set *other, dev_t other_dev,
			 struct mapped_set *other_writable);

/* Adds @ino to @m (mapped_sort() it again before mapped_has()).
 * Returns 0 or -ENOMEM. */
int mapped_add(struct mapped_set *m, ino_t ino);

/* Adds to @m the set mapped_save() left in the extended attribute @xattr
 * of @fd (none there: nothing).  Returns 0 or negative errno. */
int mapped_load(struct mapped_set *m, int fd, const char *xattr);

/* Stores @m (sorted) in @xattr of @fd, or removes it when @m is empty:
 * decimal inode numbers, space-separated, or "*" for all, also when the
 * numbers do not fit in the attribute.  Returns 0 or negative errno. */
int mapped_save(const struct mapped_set *m, int fd, const char *xattr);

/* Adds every inode of @from to @m (and all, if @from has it).  Returns 0
 * or -ENOMEM. */
int mapped_merge(struct mapped_set *m, const struct mapped_set *from);

/* Sorts @m for mapped_has(). */
void mapped_sort(struct mapped_set *m);

/* Whether @ino is in @m (sorted), or @m has all. */
bool mapped_has(const struct mapped_set *m, ino_t ino);

/* Whether every inode of @m is in @in (sorted). */
bool mapped_within(const struct mapped_set *m, const struct mapped_set *in);

void mapped_done(struct mapped_set *m);

/* Whether the open files @a and @b hold the same @size bytes: 1 yes, 0 no
 * (either is shorter: changed meanwhile), or negative errno.  What is a
 * hole in both is not read. */
int same_file_data(int a, int b, off_t size);
