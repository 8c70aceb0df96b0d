/* SPDX-License-Identifier: GPL-2.0-or-later */
/* When and how far a growing tmpfs area grows (see area_grow.h). */
#include "area_grow.h"

#define PAGE_BYTES 4096ULL /* tmpfs counts size= in pages */
#define FULL_MIN_BYTES (1024ULL * 1024ULL) /* the least growth of a full area */
#define FULL_MIN_INODES 64ULL

static uint64_t sub0(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

static uint64_t max3(uint64_t a, uint64_t b, uint64_t c)
{
	uint64_t m = a > b ? a : b;

	return m > c ? m : c;
}

static uint64_t min2(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/* Doubling without overflow. */
static uint64_t twice(uint64_t v)
{
	return v > UINT64_MAX / 2 ? UINT64_MAX : v * 2;
}

uint64_t area_grow_unfilled(const struct grow_sample *s)
{
	uint64_t inodes = sub0(s->inodes, s->inodes_used);

	if (inodes > UINT64_MAX / AREA_GROW_INODE_BYTES - 1)
		return UINT64_MAX;
	return sub0(s->size, s->used) + inodes * AREA_GROW_INODE_BYTES;
}

/* What the area takes of one limit in AREA_GROW_HORIZON_USEC at the rate
 * it took it between @prev_used and @now_used, @dt µs apart. */
static uint64_t ahead(uint64_t prev_used, uint64_t now_used, uint64_t dt)
{
	double v;

	if (!dt || now_used <= prev_used)
		return 0;
	v = (double)(now_used - prev_used) * (double)AREA_GROW_HORIZON_USEC / (double)dt;
	return v >= 1.8e19 ? UINT64_MAX : (uint64_t)v;
}

/* The limit one dimension wants, 0 when it need not grow. */
static uint64_t wanted(uint64_t limit, uint64_t used, uint64_t need)
{
	if ((double)used * 100.0 < (double)limit * AREA_GROW_AT_PERCENT && sub0(limit, used) >= need)
		return 0;
	return max3(twice(limit), twice(used), used + min2(twice(need), UINT64_MAX - used));
}

/* Whether growing a limit by @step is worth a remount. */
static bool worth(uint64_t step, uint64_t limit, bool full, uint64_t full_min)
{
	if (!step)
		return false;
	return step >= limit / 16 || (full && step >= min2(limit / 16, full_min));
}

void area_grow_decide(const struct grow_sample *prev, const struct grow_sample *now,
		      const struct grow_budget *b, struct grow_step *ret)
{
	uint64_t room = sub0(sub0(sub0(b->available, b->reserve), b->others), area_grow_unfilled(now));
	uint64_t dt = prev && prev->usec && now->usec > prev->usec ? now->usec - prev->usec : 0;
	uint64_t want_size = wanted(now->size, now->used, ahead(prev ? prev->used : 0, now->used, dt));
	uint64_t want_inodes = wanted(now->inodes, now->inodes_used,
				      ahead(prev ? prev->inodes_used : 0, now->inodes_used, dt));
	uint64_t db, di, cost;

	*ret = (struct grow_step){
		.size = now->size,
		.inodes = now->inodes,
		.ceiling_size = now->size + min2(room, UINT64_MAX - now->size),
		.ceiling_inodes = now->inodes + room / AREA_GROW_INODE_BYTES,
	};
	/* whole pages, as tmpfs counts them */
	db = want_size ? sub0(want_size + (PAGE_BYTES - 1 - (want_size - 1) % PAGE_BYTES), now->size) : 0;
	di = want_inodes ? sub0(want_inodes, now->inodes) : 0;
	if (!db && !di)
		return;
	cost = db + min2(di, (UINT64_MAX - db) / AREA_GROW_INODE_BYTES) * AREA_GROW_INODE_BYTES;
	if (cost > room) {
		/* each limit gets its share of what fits */
		double share = (double)room / (double)cost;

		ret->barred = true;
		db = (uint64_t)((double)db * share) / PAGE_BYTES * PAGE_BYTES;
		di = (uint64_t)((double)di * share);
	}
	if (!worth(db, now->size, now->used >= now->size, FULL_MIN_BYTES))
		db = 0;
	if (!worth(di, now->inodes, now->inodes_used >= now->inodes, FULL_MIN_INODES))
		di = 0;
	ret->grow = db || di;
	ret->size += db;
	ret->inodes += di;
}
