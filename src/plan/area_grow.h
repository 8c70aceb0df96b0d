/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * How far and when a tmpfs area with grow = yes grows (pure).  The
 * resident (cli/area_watch.c) samples each area's statvfs a few times a
 * second, asks area_grow_decide() for new limits and remounts; `status`
 * shows the same ceilings.
 *
 * The memory rule: what the growing areas may still take, their unfilled
 * bytes and the kernel memory of their unused inodes, must leave at least
 * memory-reserve of MemAvailable to the rest of the system.  tmpfs pages
 * are swap-backed (shmem), not counted in MemAvailable: as an area fills,
 * MemAvailable falls by what it took and its unfilled part by as much, so
 * the rule holds steady while the area fills to a ceiling computed
 * earlier.  Only growing areas count: a fixed area's limit is its
 * administrator's promise, checked at start against RAM and swap.
 */
#ifndef STORAGED_AREA_GROW_H
#define STORAGED_AREA_GROW_H

#include <stdbool.h>
#include <stdint.h>

/* What one tmpfs inode costs the kernel beside its data, bytes: its
 * shmem_inode_info and a dentry (about 1 KiB together on 64-bit; tmpfs
 * itself counts inodes in units of 1 KiB since Linux 6.6, BOGO_INODE_SIZE). */
#define AREA_GROW_INODE_BYTES 1024

/* A growth happens once an area is this full (percent of bytes or of
 * inodes), and doubles the limit: at most half the area is ever unused,
 * and a limit costs nothing until it is filled. */
#define AREA_GROW_AT_PERCENT 50

/* The limits after a growth last at least this long at the rate the area
 * filled at since the last sample (µs): a writer at disk speed meets a
 * limit raised well ahead of it. */
#define AREA_GROW_HORIZON_USEC (2ULL * 1000000ULL)

/* One sample of an area (statvfs of its tmpfs). */
struct grow_sample {
	uint64_t size, used; /* bytes: the limit, and what is used */
	uint64_t inodes, inodes_used; /* nr_inodes, and the inodes in use */
	uint64_t usec; /* CLOCK_MONOTONIC µs when sampled; 0: no sample */
};

/* The memory growth is to respect. */
struct grow_budget {
	uint64_t available; /* MemAvailable, bytes */
	uint64_t reserve; /* memory-reserve, bytes */
	uint64_t others; /* what the other growing areas may still take
			    (area_grow_unfilled() of each), bytes */
};

struct grow_step {
	bool grow; /* remount with @size and @inodes */
	uint64_t size, inodes; /* the new limits (the present ones when !grow) */
	/* it needed to grow and memory-reserve allowed less than it needed
	 * (@grow may still be true: a part of it) */
	bool barred;
	/* the most each limit can reach now, the other staying as it is
	 * (never below the present limit) */
	uint64_t ceiling_size, ceiling_inodes;
};

/**
 * area_grow_unfilled:
 * @s: a sample of a growing area
 *
 * Returns: bytes of memory @s may still take without growing: its
 * unused bytes and AREA_GROW_INODE_BYTES per unused inode.
 */
uint64_t area_grow_unfilled(const struct grow_sample *s);

/**
 * area_grow_decide:
 * @prev: the area's previous sample (usec 0: none): the rate it fills at
 * @now: its sample now
 * @b: the memory to respect (the memory rule above)
 * @ret: what to do, and the ceilings
 *
 * Pure.  A limit grows when the area has reached AREA_GROW_AT_PERCENT of
 * it, or when what is left of it lasts less than AREA_GROW_HORIZON_USEC at
 * the present rate; to twice the limit, or more when the rate needs it;
 * sizes in whole 4 KiB pages.  When memory allows less, both grow by as
 * much of what they need as fits (@ret->barred); a growth of less than a
 * sixteenth of the limit is not made (a remount for nothing), unless the
 * area is full.
 */
void area_grow_decide(const struct grow_sample *prev, const struct grow_sample *now,
		      const struct grow_budget *b, struct grow_step *ret);

#endif
